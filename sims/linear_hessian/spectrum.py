r"""Constructed points (balanced minima, gauged minima, the origin) and their exact Hessian spectra, as sweeps.

:func:`constructed_minima` builds, for every case of a grid, the data and a parameter vector inside
the frame of :mod:`sims.linear_hessian.frame`: one-hot class data (whitened, or mixed by a random
matrix so that :math:`\Sigma_{xx}\ne\alpha I`) or generic rank-:math:`r` labels with whitened
inputs of scale :math:`\alpha`; the balanced global minimum with a random orthogonal hidden gauge;
optionally a random function-preserving gauge :math:`G_l=I+\text{scale}\,N_l/\sqrt{d_l}` applied
to it; or the origin.

:func:`hessian_spectra` computes the Hessian of each case by autodiff in the sweep
(:func:`sims.hvp.dense_hessian` on the frame loss), cuts out the active :math:`P\times P` block and
returns its eigenvalues (LAPACK through NumPy: on CPU, JAX's batched ``eigvalsh`` of these small
matrices is far slower).

Both run one module-level per-run function under :func:`sims.sweep.run_grid` in chunks of
:data:`CHUNK` padded points, so every call has the same shapes and compiles once per process.
"""
from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

import sims  # noqa: F401  (float64)
from sims import hvp as H
from sims.linear_hessian import frame as F
from sims.sweep import run_grid
from theory import validate as V
from theory.linear_hessian import validate_widths

__all__ = ["CHUNK", "constructed_minima", "hessian_spectra", "case_grid"]

CHUNK = 16  # fixed chunk: every sweep call has the same shapes, so each per-run function compiles once


# ----------------------------------------------------------------------------------------------
# per-run functions (module level: run_grid caches their compilation)
# ----------------------------------------------------------------------------------------------

def _construct_run(g: dict) -> dict:
    r"""One constructed case (traced fields of ``g``; see :func:`constructed_minima`).

    Returns ``theta`` (frame vector), ``X``, ``Y`` (frame data), the singular values ``sv`` of
    :math:`\Sigma_{yx}`, ``sigma_xx`` and ``sigma_yx`` (frame-sized, zero padded), the
    balancedness error and the gradient norm at ``theta``.
    """
    k_data, k_min, k_gauge = jax.random.split(g["key"], 3)
    fw, depth = g["widths"], g["depth"]
    n = F.N_SAMPLES
    Xc, Yc = F._frame_class_data(k_data, g["counts"], fw[0], n, F.DMAX, 1.0, g["gaussian"])
    Xw, Yw = F._frame_whitened_data(k_data, fw[0], fw[depth], g["rank"], n, F.DMAX, g["alpha"])
    X, Y = jnp.where(g["classes"], Xc, Xw), jnp.where(g["classes"], Yc, Yw)
    theta = F._frame_balanced_minimum(k_min, fw, depth, X, Y)
    theta = F._frame_gauge(k_gauge, theta, fw, depth, g["gauge"])
    theta = jnp.where(g["origin"], jnp.zeros_like(theta), theta)
    Syx = Y @ X.T / n
    return {"theta": theta, "X": X, "Y": Y, "sv": jnp.linalg.svd(Syx, compute_uv=False),
            "sigma_xx": X @ X.T / n, "sigma_yx": Syx,
            "balance": F._frame_balancedness(theta, fw, depth, F.DMAX),
            "grad_norm": jnp.linalg.norm(jax.grad(F._frame_loss)(theta, fw, depth, X, Y))}


def _hessian_run(g: dict) -> jax.Array:
    """The frame Hessian (``LMAX*DMAX^2`` square) of one case: ``theta``, ``widths``, ``depth``, ``X``, ``Y``, ``act``."""
    fw, depth = g["widths"], g["depth"]
    return H.dense_hessian(lambda t: F._frame_loss(t, fw, depth, g["X"], g["Y"], g["act"]), g["theta"])


# ----------------------------------------------------------------------------------------------
# public sweeps
# ----------------------------------------------------------------------------------------------

def _per_case(name: str, value: Any, n: int, *, dtype, check=None) -> np.ndarray:
    """``value`` broadcast to one entry per case (a scalar is shared; otherwise exactly ``n`` entries)."""
    a = np.asarray(value)
    if a.dtype == object or a.dtype.kind not in "biuf":
        raise TypeError(f"{name}: expected numbers (one per case or one for all), got {value!r}")
    if a.ndim > 1:
        raise ValueError(f"{name}: expected a scalar or one entry per case (1-D), got shape {a.shape}")
    if a.ndim == 0:
        a = np.full(n, a)
    elif a.shape[0] != n:
        raise ValueError(f"{name}: expected one entry per case ({n}), got leading length {a.shape[0]}")
    if check is not None:  # on the values as given: a cast to int would hide 1.5, NaN or True
        check(name, a)
    if np.issubdtype(dtype, np.integer) and a.size:  # a cast would wrap 2**63 to a valid-looking small value
        info = np.iinfo(dtype)
        if a.dtype.kind in "iu" and not (int(a.min()) >= info.min and int(a.max()) <= info.max):
            raise ValueError(f"{name}: every value must fit {np.dtype(dtype).name} "
                             f"[{info.min}, {info.max}], got {a.tolist()!r:.60}")
    return a.astype(dtype)


def _ints(low: int):
    r"""A ``_per_case`` check: integers (not booleans) :math:`\ge` ``low``."""
    def check(name, a):
        if a.dtype.kind not in "iu":
            raise TypeError(f"{name}: expected integers (one per case or one for all), got {a.tolist()!r:.60}")
        if np.any(a < low):
            raise ValueError(f"{name}: every value must be an integer >= {low}, got {a.tolist()!r:.60}")
    return check


def _finite(name, a):
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name}: every value must be finite, got {a.tolist()}")


def _widths_list(widths) -> list[tuple[int, ...]]:
    if isinstance(widths, tuple) or (isinstance(widths, list) and widths and not isinstance(widths[0], (tuple, list))):
        return [validate_widths(widths)]
    if not isinstance(widths, (list, tuple)) or not widths:
        raise TypeError(f"widths: expected a width tuple (d_0, ..., d_L) or a list of them, got {widths!r}")
    return [validate_widths(w) for w in widths]


def _case_counts(counts, n: int) -> np.ndarray:
    """``counts`` as an ``(n, 3)`` int32 array of class sizes: one triple for every case or one per case, each three
    positive integers summing to ``N_SAMPLES``."""
    c = np.asarray(counts)
    c = np.tile(c, (n, 1)) if c.ndim == 1 else c
    if c.shape != (n, 3) or c.dtype.kind not in "iu" or np.any(c < 1) or np.any(c.sum(axis=1) != F.N_SAMPLES):
        raise ValueError(f"counts: expected 3 positive class sizes summing to N_SAMPLES = {F.N_SAMPLES} "
                         f"(one triple or one per case), got {counts!r}")
    return c.astype(np.int32)


def _case_widths(widths, per_case: dict, counts, key, name: str) -> tuple[int, list[tuple[int, ...]]]:
    """The number of cases n implied by every per-case field, and the widths list broadcast to n.

    A field with a leading axis (or a list of several width tuples, a 2-D ``counts``, a batch of
    keys) fixes n; fields given once apply to every case. Disagreeing lengths raise ``ValueError``
    under the parameter ``name``.
    """
    V.key("key", key)  # before its shape is read
    wl = _widths_list(widths)
    sizes = {len(wl)} if len(wl) > 1 else set()
    for field, value in per_case.items():
        if np.ndim(value) >= 1:
            if np.shape(value)[0] == 0:
                raise ValueError(f"{field}: expected a scalar or at least one entry per case, got an empty array")
            sizes.add(int(np.shape(value)[0]))
    if np.ndim(counts) == 2:
        sizes.add(int(np.shape(counts)[0]))
    if getattr(key, "ndim", 0) >= 1:
        sizes.add(int(key.shape[0]))
    if len(sizes) > 1:
        raise ValueError(f"{name}: per-case fields have different numbers of cases {sorted(sizes)}; they must agree")
    n = sizes.pop() if sizes else 1
    return n, (wl * n if len(wl) == 1 else wl)


def _keys(key, n: int):
    V.key("key", key)
    if key.ndim == 0:
        return jnp.broadcast_to(key, (n,))
    if key.shape != (n,):
        raise ValueError(f"key: expected one typed key or one per case ({n}), got shape {key.shape}")
    return key


def case_grid(key, widths, *, counts=(34, 33, 33), alpha=1.0, rank=1, classes=True, gaussian=False, gauge=0.0,
              origin=False) -> dict:
    r"""The validated grid of :func:`constructed_minima` (fields broadcast to one entry per case).

    ``widths``: one width tuple or a list (one per case; every width :math:`\le` ``DMAX``, depth
    :math:`\le` ``LMAX``). ``counts``: class sizes summing to ``N_SAMPLES`` (one-hot cases,
    ``classes=True``; three classes). ``alpha`` > 0 and ``rank`` (:math:`\le\min(d_0,d_L)`) for the
    generic-label cases. ``gaussian``: mix the class inputs (:math:`\Sigma_{xx}\ne I`).
    ``gauge``: scale of the random gauge (0: balanced). ``origin``: :math:`\theta=0`.
    ``key``: one typed key for all cases or one per case.
    """
    n, wl = _case_widths(widths, {"alpha": alpha, "rank": rank, "classes": classes, "gaussian": gaussian,
                                  "gauge": gauge, "origin": origin}, counts, key, "widths")
    c = _case_counts(counts, n)
    grid = {
        "key": _keys(key, n),
        "widths": np.stack([F.frame_widths(w) for w in wl]),
        "depth": np.array([len(w) - 1 for w in wl], np.int32),
        "counts": c,
        "alpha": _per_case("alpha", alpha, n, dtype=np.float64, check=lambda nm, a: V.array(nm, a, low=0, low_open=True)),
        "rank": _per_case("rank", rank, n, dtype=np.int32, check=_ints(1)),
        "classes": _per_case("classes", classes, n, dtype=bool),
        "gaussian": _per_case("gaussian", gaussian, n, dtype=bool),
        "gauge": _per_case("gauge", gauge, n, dtype=np.float64, check=_finite),
        "origin": _per_case("origin", origin, n, dtype=bool),
    }
    for i, w in enumerate(wl):
        if grid["classes"][i] and (w[-1] != 3 or w[0] < 3 or min(w[1:-1], default=3) < 3):
            raise ValueError(f"widths: a one-hot case needs d_L = 3 classes, d_0 >= 3 and no hidden width below 3, "
                             f"got {w} (case {i})")
        if not grid["classes"][i] and not 1 <= grid["rank"][i] <= min(w):
            raise ValueError(f"rank: case {i} needs 1 <= rank <= min(widths) = {min(w)}, got {grid['rank'][i]}")
    return grid


def constructed_minima(key, widths, **fields) -> dict[str, np.ndarray]:
    """Build every case of :func:`case_grid` ``(key, widths, **fields)`` in one sweep (see ``_construct_run``).

    Returns NumPy arrays with one leading entry per case: ``theta``, ``X``, ``Y``, ``sv``,
    ``sigma_xx``, ``sigma_yx``, ``balance``, ``grad_norm``, plus the grid's ``widths`` (frame
    widths) and ``depth``. Nothing here iterates, so nothing diverges.
    """
    grid = case_grid(key, widths, **fields)
    out = run_grid(_construct_run, grid, chunk_size=CHUNK, pad_to_chunk=True)
    out["widths"], out["depth"] = grid["widths"], grid["depth"]
    return out


def hessian_spectra(theta, widths, depth, X, Y, *, act=0) -> dict[str, np.ndarray]:
    r"""Exact Hessian eigenvalues of frame-embedded nets (autodiff Hessians, one sweep).

    ``theta`` ``(n, LMAX*DMAX^2)``, ``widths`` ``(n, LMAX+1)`` frame widths, ``depth`` ``(n,)``,
    ``X``/``Y`` ``(n, DMAX, N_SAMPLES)`` (as returned by :func:`constructed_minima` or
    :func:`sims.linear_hessian.train.train_sweep`), ``act`` activation code(s) (0 linear, 1 tanh,
    2 relu). Returns ``eigenvalues`` ``(n, LMAX*DMAX^2)``: the :math:`P` eigenvalues of each net in
    ascending order followed by NaN padding, and ``n_params`` (:math:`P` per case). Every entry of
    ``theta`` must be finite (drop diverged runs first).
    """
    if np.asarray(widths).dtype.kind not in "iu":
        raise TypeError(f"widths: expected integer frame widths (n, LMAX + 1), got dtype {np.asarray(widths).dtype}")
    fw = V.array("widths", widths, ndim=2, low=1, dtype=np.int32)
    n = fw.shape[0]
    size = F.LMAX * F.DMAX * F.DMAX
    th = V.array("theta", theta, shape=(n, size))
    dep = _per_case("depth", depth, n, dtype=np.int32, check=_ints(1))
    bad = [i for i in range(n) if not (dep[i] <= F.LMAX and fw[i, 0] >= 1)]
    if bad:
        raise ValueError(f"depth: case {bad[0]} has depth {dep[bad[0]]}, expected 1 <= depth <= LMAX = {F.LMAX}")
    Xa = V.array("X", X, shape=(n, F.DMAX, F.N_SAMPLES))
    Ya = V.array("Y", Y, shape=(n, F.DMAX, F.N_SAMPLES))
    acts = _per_case("act", act, n, dtype=np.int32, check=_ints(0))
    if not np.all(np.isin(acts, list(F.ACT_CODES.values()))):
        raise ValueError(f"act: expected activation codes {F.ACT_CODES}, got {np.unique(acts).tolist()}")
    plain = [tuple(int(d) for d in fw[i, : dep[i] + 1]) for i in range(n)]
    hess = run_grid(_hessian_run, {"theta": th, "widths": fw, "depth": dep, "X": Xa, "Y": Ya, "act": acts},
                    chunk_size=CHUNK, pad_to_chunk=True)
    eig = np.full((n, size), np.nan)
    n_params = np.zeros(n, np.int64)
    for i, w in enumerate(plain):
        block = F.strip(hess[i], w)
        eig[i, : block.shape[0]] = np.linalg.eigvalsh(block)
        n_params[i] = block.shape[0]
    return {"eigenvalues": eig, "n_params": n_params}
