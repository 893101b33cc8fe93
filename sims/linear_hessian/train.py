r"""GD sweeps on frame-embedded nets, and the reduced dynamics of the aligned two-layer path.

:func:`train_sweep` runs full-batch GD :math:`\theta\leftarrow\theta-\eta\nabla\mathcal L(\theta)`
for every point of a grid (class data from the point's key and counts, small Gaussian or Glorot
init, linear / tanh / ReLU hidden layers), all in one compiled sweep (``_train_run`` under
:func:`sims.sweep.run_grid`; the step loop is a ``lax`` loop).

Divergence is data, as in :func:`sims.linear_hessian.train_gd`: ``diverged`` flags a run whose
iterate became non-finite or exceeded :data:`sims.linear_hessian.BLOWUP`, ``diverged_step`` is the
first such GD step (``-1`` otherwise), the iterate is frozen at the last finite point and the loss
records from that step on are NaN. Summaries over a sweep use the finite runs and report how many
diverged.

:func:`aligned_path` iterates the exact reduced GD map of a two-layer net started on the aligned,
balanced path (:func:`theory.linear_hessian.aligned_mode_step`), one scalar per mode.
"""
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

import sims  # noqa: F401  (float64)
from sims.linear_hessian import frame as F
from sims.linear_hessian.net import _gd_steps
from sims.linear_hessian.spectrum import CHUNK, _case_counts, _case_widths, _ints, _keys, _per_case
from sims.sweep import run_grid
from theory import validate as V

__all__ = ["train_sweep", "aligned_path"]


def _train_run(g: dict, *, steps: int, record_every: int) -> dict:
    r"""One GD run for :func:`sims.sweep.run_grid` (``steps``, ``record_every`` static).

    ``g``: ``key``, ``counts``, ``widths`` (frame), ``depth``, ``eta``, ``init_scale``, ``xavier``,
    ``act`` (0 linear, 1 tanh, 2 relu), ``gaussian``. Records the loss and the per-class losses
    every ``record_every`` steps (and at 0); returns the final iterate, the data, the divergence
    flag and step, and the final balancedness error.
    """
    k_data, k_init = jax.random.split(g["key"])
    fw, depth, act = g["widths"], g["depth"], g["act"]
    n = F.N_SAMPLES
    X, Y = F._frame_class_data(k_data, g["counts"], fw[0], n, F.DMAX, 1.0, g["gaussian"])
    theta0 = F._frame_init(k_init, fw, depth, F.DMAX, g["init_scale"], g["xavier"])
    grad = jax.grad(F._frame_loss)
    K = g["counts"].shape[0]

    def record(theta, t, div):
        r = F._frame_forward(theta, fw, depth, X, act) - Y
        dead = (div >= 0) & (t >= div)
        total = 0.5 * jnp.sum(r * r) / n
        per_class = (Y @ jnp.sum(r * r, axis=0))[:K] / (2 * n)
        return jnp.where(dead, jnp.nan, total), jnp.where(dead, jnp.nan, per_class)

    def segment(carry, t):
        theta, div = carry
        theta, div = _gd_steps(lambda th: grad(th, fw, depth, X, Y, act), g["eta"], theta, div,
                              t - record_every, record_every)
        return (theta, div), record(theta, t, div)

    times = record_every * jnp.arange(1, steps // record_every + 1, dtype=jnp.int32)
    (theta, div), rest = lax.scan(segment, (theta0, jnp.int32(-1)), times)
    first = record(theta0, 0, jnp.int32(-1))
    losses, cls = (jnp.concatenate([f0[None], r], axis=0) for f0, r in zip(first, rest))
    return {"loss": losses, "class_loss": cls, "theta": theta, "X": X, "Y": Y,
            "diverged": div >= 0, "diverged_step": div,
            "balance": F._frame_balancedness(theta, fw, depth, F.DMAX)}


def train_sweep(key, counts, widths, eta, *, init_scale=0.05, xavier=False, act=0, gaussian=False,
                steps: int, record_every: int, max_bytes=None) -> dict[str, np.ndarray]:
    r"""GD from small (or Glorot) init on one-hot class data, every case of a grid in one sweep.

    Per-case fields (a scalar is shared by all cases): ``eta`` > 0 (the step size), ``init_scale``
    :math:`\ge0` (std of the Gaussian init), ``xavier`` (Glorot-normal init instead), ``act``
    (0 linear, 1 tanh, 2 relu), ``gaussian`` (mixed inputs, :math:`\Sigma_{xx}\ne I`); ``counts``:
    three class sizes summing to ``N_SAMPLES`` (one triple or one per case); ``widths``: one width
    tuple or one per case (last width 3); ``key``: one typed key or one per case. ``steps`` must be
    a positive multiple of ``record_every``.

    Returns NumPy arrays with a leading case axis: ``loss`` ``(n, steps//record_every + 1)``,
    ``class_loss`` ``(n, R, 3)``, the final ``theta``, ``X``, ``Y``, ``diverged``,
    ``diverged_step``, ``balance``, and the grid's ``widths``, ``depth``, ``act``, ``eta``. ``max_bytes``: the
    allocation limit (:func:`theory.validate.byte_limit`) for the per-record losses of every case.
    """
    record_every = V.integer("record_every", record_every, low=1)
    steps = V.integer("steps", steps, low=record_every)
    if steps % record_every:
        raise ValueError(f"steps: must be a multiple of record_every = {record_every}, got {steps}")
    # 4 values (loss, 3 class losses) per record and case, device and host, for a chunk-padded grid of at least CHUNK
    cases = max(CHUNK, np.size(eta) if not isinstance(eta, (str, bytes)) else 1)
    V.check_bytes({"steps / record_every": steps // record_every}, 2 * 4 * 8 * cases * (steps // record_every + 1),
                  what="every case's per-record losses", max_bytes=max_bytes)
    n, wl = _case_widths(widths, {"eta": eta, "init_scale": init_scale, "xavier": xavier, "act": act,
                                      "gaussian": gaussian}, counts, key, "eta")
    for i, w in enumerate(wl):
        if w[-1] != 3 or w[0] < 3:
            raise ValueError(f"widths: class data needs d_L = 3 classes and d_0 >= 3, got {w} (case {i})")
    c = _case_counts(counts, n)
    grid = {
        "key": _keys(key, n), "counts": c,
        "widths": np.stack([F.frame_widths(w) for w in wl]), "depth": np.array([len(w) - 1 for w in wl], np.int32),
        "eta": _per_case("eta", eta, n, dtype=np.float64, check=lambda nm, a: V.array(nm, a, low=0, low_open=True)),
        "init_scale": _per_case("init_scale", init_scale, n, dtype=np.float64,
                                check=lambda nm, a: V.array(nm, a, low=0)),
        "xavier": _per_case("xavier", xavier, n, dtype=bool),
        "act": _per_case("act", act, n, dtype=np.int32, check=_ints(0)),
        "gaussian": _per_case("gaussian", gaussian, n, dtype=bool),
    }
    if not np.all(np.isin(grid["act"], list(F.ACT_CODES.values()))):
        raise ValueError(f"act: expected activation codes {F.ACT_CODES}, got {np.unique(grid['act']).tolist()}")
    out = run_grid(_train_run, grid, static={"steps": steps, "record_every": record_every}, chunk_size=CHUNK,
                   pad_to_chunk=True)
    out.update(widths=grid["widths"], depth=grid["depth"], act=grid["act"], eta=grid["eta"])
    return out


@functools.partial(jax.jit, static_argnames=("steps",))
def _aligned(s, w0, eta, *, steps):
    def step(w, _):
        new = w - eta * w * (w * w - s)
        return new, new
    return lax.scan(step, w0, None, length=steps)[1]


def aligned_path(singular_values, scale, eta, *, steps: int, max_bytes=None) -> np.ndarray:
    r"""Mode strengths :math:`a_k(t)=w_k(t)^2`, :math:`t=0..\text{steps}`, of GD on the aligned, balanced two-layer path.

    :math:`w_k(0)=\text{scale}` and :math:`w_k\leftarrow w_k-\eta w_k(w_k^2-s_k)` (the exact image
    of one GD step of the full net started from :func:`sims.linear_hessian.aligned_init`; see
    :func:`theory.linear_hessian.aligned_mode_step`). Returns ``(steps + 1, r)``. A run that
    leaves the finite range shows as non-finite entries (only for :math:`\eta s_k` far above 2).
    ``max_bytes``: the allocation limit (:func:`theory.validate.byte_limit`) for the returned strengths.
    """
    s = V.array("singular_values", singular_values, ndim=1, low=0.0)
    scale = V.real("scale", scale, low=0.0, low_open=True)
    eta = V.real("eta", eta, low=0.0, low_open=True)
    steps = V.integer("steps", steps, low=1)
    V.check_bytes({"steps": steps, "singular_values": f"{s.size} modes"}, 3 * 8 * (steps + 1) * s.size,
                  what="the (steps + 1, modes) strengths", max_bytes=max_bytes)
    w0 = np.full(s.shape, scale)
    w = np.asarray(_aligned(jnp.asarray(s), jnp.asarray(w0), eta, steps=steps))
    with np.errstate(over="ignore"):  # a diverged path's strengths square to inf: data, not an error
        return np.concatenate([w0[None], w], axis=0) ** 2
