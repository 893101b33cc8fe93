r"""The padded embedding ("frame") that lets one compiled sweep cover every width, depth and activation.

A net with widths :math:`(d_0,\dots,d_L)`, :math:`d_l\le` :data:`DMAX`, :math:`L\le` :data:`LMAX`, is
embedded in a frame of :data:`LMAX` layers of :data:`DMAX` :math:`\times` :data:`DMAX` blocks:
:math:`W_l` occupies the top-left :math:`d_l\times d_{l-1}` block of block :math:`l` (masked),
layers :math:`l>L` are the fixed identity (not parameters) and data rows beyond :math:`d_0` /
:math:`d_L` are zero. The frame loss then equals the small net's loss (:func:`sims.linear_hessian.loss`),
its gradient vanishes on the padding, and its Hessian is the small net's Hessian on the active
coordinates (:func:`active_indices`) and zero elsewhere. Widths, depth, activation code, class
counts and scales are *traced* values, so sweeps over all of them share one compilation
(compilation, not arithmetic, dominates the cost of these tiny nets).

The functions here are building blocks for the per-run functions of
:mod:`sims.linear_hessian.spectrum` and :mod:`sims.linear_hessian.train`; their static arguments
(``dmax``, ``n``) are validated, their traced arguments are checked by the public sweep wrappers.
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

import sims  # noqa: F401  (float64)
from theory import validate as V
from theory.linear_hessian import validate_widths

__all__ = [
    "DMAX", "LMAX", "N_SAMPLES", "ACT_CODES", "frame_widths", "active_indices", "embed", "strip", "PADDED", "cases",
]

DMAX, LMAX, N_SAMPLES = 6, 5, 100   # the frame shared by steplab sweeps: P <= 180, pi in steps of 1/100
ACT_CODES = {"linear": 0, "tanh": 1, "relu": 2}


def frame_widths(widths, lmax: int = LMAX, *, max_bytes=None) -> np.ndarray:
    """``(lmax + 1,)`` int array: ``widths`` followed by copies of :math:`d_L` (identity layers); ``max_bytes``: the
    allocation limit (:func:`theory.validate.byte_limit`) for it (a Python list first, then the array)."""
    w = validate_widths(widths)
    lmax = V.integer("lmax", lmax, low=1)
    V.check_bytes({"lmax": lmax}, (8 + 28 + 4) * (lmax + 1), what="the frame widths (list of ints, then int32 array)",
                  max_bytes=max_bytes)
    if len(w) - 1 > lmax:
        raise ValueError(f"widths: depth {len(w) - 1} exceeds the frame depth lmax={lmax}")
    if max(w) > DMAX:
        raise ValueError(f"widths: every width must be <= DMAX = {DMAX} to fit the frame, got {w}")
    return np.array(list(w) + [w[-1]] * (lmax + 1 - len(w)), dtype=np.int32)


def active_indices(widths, dmax: int = DMAX, lmax: int = LMAX) -> np.ndarray:
    """Flat frame indices of the real parameters (row-major :math:`W_1,\\dots,W_L` order, as :func:`sims.linear_hessian.flatten`)."""
    w = validate_widths(widths)
    dmax = V.integer("dmax", dmax, low=max(w))
    lmax = V.integer("lmax", lmax, low=len(w) - 1)
    if lmax * dmax * dmax > V.INT64_MAX:  # the flat frame indices are int64: lmax * dmax^2 of them must fit
        raise ValueError(f"dmax, lmax: the frame has lmax * dmax^2 = {lmax * dmax * dmax} entries, beyond the int64 "
                         f"range of its flat indices; got dmax={dmax}, lmax={lmax}")
    out = []
    for l in range(len(w) - 1):
        rows, cols = np.meshgrid(np.arange(w[l + 1]), np.arange(w[l]), indexing="ij")
        out.append(l * dmax * dmax + rows.ravel() * dmax + cols.ravel())
    return np.concatenate(out)


def embed(theta, widths) -> np.ndarray:
    """The frame vector (length ``LMAX * DMAX**2``) holding the plain parameter vector ``theta`` of ``widths``."""
    idx = active_indices(widths)
    th = V.array("theta", theta, shape=(idx.size,))
    full = np.zeros(LMAX * DMAX * DMAX)
    full[idx] = th
    return full


def strip(matrix, widths) -> np.ndarray:
    """The active :math:`P\\times P` block of a frame Hessian (or the active entries of a frame vector)."""
    idx = active_indices(widths)
    m = V.array("matrix", matrix, ndim=(1, 2))
    if m.shape not in ((LMAX * DMAX * DMAX,), (LMAX * DMAX * DMAX,) * 2):
        raise ValueError(f"matrix: expected a frame vector or matrix of size {LMAX * DMAX * DMAX}, got shape {m.shape}")
    return m[idx] if m.ndim == 1 else m[np.ix_(idx, idx)]


# ----------------------------------------------------------------------------------------------
# padded sweep results, one case at a time
# ----------------------------------------------------------------------------------------------

#: entries of a sweep result padded to the frame, and how :func:`cases` cuts each to its case's true size
#: (``w`` the case's widths :math:`d_0,\dots,d_L`, ``p`` its ``n_params``)
PADDED = {
    "widths": "frame widths (LMAX + 1,): the first depth + 1 are the case's widths, returned as a tuple of ints",
    "theta": "frame vector (LMAX * DMAX^2,): the active entries (strip), the plain parameter vector of length P",
    "eigenvalues": "(LMAX * DMAX^2,) ascending, then NaN: the first n_params (none when n_params is 0)",
    "X": "(DMAX, N_SAMPLES), rows beyond d_0 zero: the first d_0 rows",
    "Y": "(DMAX, N_SAMPLES), rows beyond d_L zero: the first d_L rows",
    "sigma_xx": "(DMAX, DMAX): the top-left d_0 x d_0 block",
    "sigma_yx": "(DMAX, DMAX): the top-left d_L x d_0 block",
    "sv": "(DMAX,) singular values of the frame Sigma_yx, descending: the first min(d_0, d_L)",
}

_CUTS = {
    "theta": lambda v, w, p: strip(v, w),
    "eigenvalues": lambda v, w, p: v[:p],
    "X": lambda v, w, p: v[: w[0]],
    "Y": lambda v, w, p: v[: w[-1]],
    "sigma_xx": lambda v, w, p: v[: w[0], : w[0]],
    "sigma_yx": lambda v, w, p: v[: w[-1], : w[0]],
    "sv": lambda v, w, p: v[: min(w[0], w[-1])],
}


def _selection(select: Any, n: int) -> np.ndarray:
    """``select`` (None: every case; integer indices; or a boolean mask of length ``n``) as integer indices."""
    if select is None:
        return np.arange(n)
    s = np.asarray(select)
    if s.ndim == 1 and s.size == 0 and s.dtype.kind in "iuf":  # an empty list (float to NumPy) selects nothing
        return np.zeros(0, np.int64)
    if s.dtype == bool:
        if s.shape != (n,):
            raise ValueError(f"select: a boolean mask needs one entry per case ({n}), got shape {s.shape}")
        return np.flatnonzero(s)
    if s.dtype.kind not in "iu" or s.ndim != 1:
        raise TypeError(f"select: expected None, 1-D integer case indices or a boolean mask, got {select!r:.60}")
    if s.size and (int(s.min()) < 0 or int(s.max()) >= n):
        raise ValueError(f"select: every index must be in [0, {n}) (the number of cases), got {s.tolist()!r:.60}")
    return s


def cases(result: Mapping, select: Any = None) -> Iterator[dict]:
    r"""One unpadded record per case of a padded sweep result, in the order of ``select``.

    **Padding convention.** A sweep over many shapes (:func:`sims.linear_hessian.spectrum.constructed_minima`,
    :func:`sims.linear_hessian.spectrum.hessian_spectra`, :func:`sims.linear_hessian.train.train_sweep`, and the
    experiments that stack their outputs) returns a mapping whose per-case entries share a leading axis of length
    :math:`n`, the number of cases; ``widths`` ``(n, LMAX + 1)`` holds each case's frame widths (its widths
    :math:`d_0,\dots,d_L` followed by copies of :math:`d_L`) and ``depth`` ``(n,)`` its :math:`L`. Entries sized to
    the frame rather than to the case are listed in :data:`PADDED`; each is cut to the case's true size (``theta``
    is stripped to the plain parameter vector, ``eigenvalues`` cut at ``n_params``, data and moments to
    :math:`d_0` / :math:`d_L` rows and columns). Every other entry whose leading length is :math:`n` is that
    case's row, unchanged (a NaN after divergence is data, not padding); entries that are not per case (``seed``,
    ``steps``, scalars) are left out. Each record also holds ``index``, the case's row.

    ``select``: None (every case), integer indices, or a boolean mask of length :math:`n`. The argument checks run
    at the call; the records are built as the iterator is consumed.
    """
    if not isinstance(result, Mapping):
        raise TypeError(f"result: expected a mapping of per-case arrays (a sweep result), got {type(result).__name__}")
    missing = [k for k in ("widths", "depth") if k not in result]
    if missing:
        raise ValueError(f"result: a padded sweep result needs 'widths' and 'depth', missing {missing} "
                         f"(got keys {list(result)!r:.80})")
    fw, depth = np.asarray(result["widths"]), np.asarray(result["depth"])
    if fw.ndim != 2 or depth.ndim != 1 or fw.shape[0] != depth.shape[0] or fw.dtype.kind not in "iu":
        raise ValueError(f"result: expected integer 'widths' of shape (n, LMAX + 1) and 'depth' of shape (n,), got "
                         f"shapes {fw.shape} ({fw.dtype}) and {depth.shape}")
    n = depth.shape[0]
    if n and not (np.all(depth >= 1) and np.all(depth < fw.shape[1])):
        raise ValueError(f"result: every depth must be in [1, {fw.shape[1] - 1}] (the frame's layers), got "
                         f"{depth.tolist()!r:.60}")
    if "eigenvalues" in result and "n_params" not in result:
        raise ValueError("result: 'eigenvalues' are padded; their true length 'n_params' is missing")
    idx = _selection(select, n)
    per_case = {k: v for k, v in result.items() if np.ndim(v) >= 1 and np.shape(v)[0] == n}
    return (_record(per_case, fw, depth, int(i)) for i in idx)


def _record(per_case: dict, fw: np.ndarray, depth: np.ndarray, i: int) -> dict:
    """Case ``i`` of a validated padded result (see :func:`cases`)."""
    w = tuple(int(d) for d in fw[i][: depth[i] + 1])
    p = int(per_case["n_params"][i]) if "n_params" in per_case else 0
    out = {"index": i}
    for k, v in per_case.items():
        if k == "widths":
            out[k] = w
        elif k in _CUTS:
            out[k] = _CUTS[k](v[i], w, p)
        else:
            out[k] = v[i]
    return out


def _frame_args(theta, fw, X=None) -> None:
    """Shapes of frame arguments (values may be traced): ``fw`` ``(lmax+1,)``, ``theta`` ``(lmax*dmax^2,)``, ``X`` ``(dmax, n)``."""
    if jnp.ndim(fw) != 1 or jnp.shape(fw)[0] < 2:
        raise ValueError(f"fw: expected frame widths of shape (lmax + 1,), got shape {jnp.shape(fw)}")
    lmax = jnp.shape(fw)[0] - 1
    if X is not None and jnp.ndim(X) != 2:
        raise ValueError(f"X: expected frame data of shape (dmax, n), got shape {jnp.shape(X)}")
    dmax = jnp.shape(X)[0] if X is not None else None
    size = jnp.shape(theta)
    if len(size) != 1 or (dmax is not None and size[0] != lmax * dmax * dmax):
        raise ValueError(f"theta: expected a frame vector of length lmax * dmax^2 = {lmax} * {dmax}^2, got shape {size}")


def _param_mask(fw: jax.Array, depth: jax.Array, dmax: int) -> jax.Array:
    """1 on the active entries of every block :math:`l\\le L` of the frame, 0 elsewhere; shape ``(lmax*dmax^2,)``."""
    dmax = V.integer("dmax", dmax, low=1)
    lmax = fw.shape[0] - 1
    idx = jnp.arange(dmax)
    rows = idx[None, :, None] < fw[1:, None, None]
    cols = idx[None, None, :] < fw[:-1, None, None]
    live = (jnp.arange(lmax) < depth)[:, None, None]
    return (rows & cols & live).reshape(-1).astype(jnp.float64)


def _draw(key, *shapes):
    # one threefry call for all the Gaussian pieces a constructor needs: each distinct random call
    # is a separate (slow to compile) kernel, and these constructors run inside jitted sweeps
    sizes = [int(np.prod(sh)) for sh in shapes]
    z = jax.random.normal(key, (sum(sizes),))
    out, start = [], 0
    for sh, size in zip(shapes, sizes):
        out.append(z[start:start + size].reshape(sh))
        start += size
    return out


def _phi_code(z, code):
    return jnp.where(code == 1, jnp.tanh(z), jnp.where(code == 2, jax.nn.relu(z), z))


def _stack(theta, fw, depth, dmax):
    lmax = fw.shape[0] - 1
    return (theta * _param_mask(fw, depth, dmax)).reshape(lmax, dmax, dmax)


def _frame_forward(theta, fw, depth, X, act=0) -> jax.Array:
    r"""Forward pass of the embedded net; ``act`` is an activation code (0 linear, 1 tanh, 2 relu), traceable.

    A ``lax.scan`` over the ``lmax`` blocks (small compiled graph): hidden layers :math:`l<L` apply
    the activation, layers :math:`l>L` are the identity.
    """
    _frame_args(theta, fw, X)
    dmax = X.shape[0]
    mats = _stack(theta, fw, depth, dmax)

    def layer(h, inp):
        W, l = inp
        z = W @ h
        z = jnp.where(l < depth - 1, _phi_code(z, act), z)
        return jnp.where(l < depth, z, h), None

    # unrolled: the blocks are tiny, so loop overhead (not flops) would dominate inside GD loops
    return lax.scan(layer, X, (mats, jnp.arange(mats.shape[0])), unroll=True)[0]


def _frame_loss(theta, fw, depth, X, Y, act=0) -> jax.Array:
    """Loss of the embedded net (equal to :func:`sims.linear_hessian.loss` of the small net)."""
    if jnp.shape(Y) != jnp.shape(X):
        raise ValueError(f"Y: expected frame labels of the shape of X {jnp.shape(X)}, got {jnp.shape(Y)}")
    r = _frame_forward(theta, fw, depth, X, act) - Y
    return 0.5 * jnp.sum(r * r) / X.shape[1]


def _masked_frames(g, d, dmax):
    # dmax x dmax orthogonal matrices whose first d columns span the first d coordinates (batched
    # over leading axes of d), from Gaussian g: the first k <= d columns are a Haar frame of that subspace
    g = g * (jnp.arange(dmax)[:, None] < d[..., None, None])
    q, r = jnp.linalg.qr(g)
    dg = jnp.diagonal(r, axis1=-2, axis2=-1)
    return q * jnp.where(jnp.abs(dg) > 0, jnp.sign(dg), 1.0)[..., None, :]


def _frame_whitened_data(key, d0, dL, rank, n: int, dmax: int, alpha=1.0):
    """:func:`sims.linear_hessian.whitened_data` inside the frame (``d0``, ``dL``, ``rank``, ``alpha`` traceable)."""
    V.key("key", key)
    n, dmax = V.integer("n", n, low=1), V.integer("dmax", dmax, low=1, high=n)
    G, B, Z = _draw(key, (n, dmax), (dmax, dmax), (dmax, n))
    idx = jnp.arange(dmax)
    G = G * (idx[None, :] < d0)
    Q = jnp.linalg.qr(G)[0] * (idx[None, :] < d0)
    X = jnp.sqrt(n * alpha) * Q.T
    B = B * (idx[:, None] < dL) * (idx[None, :] < rank)
    Z = Z * (idx[:, None] < rank)
    return X, B @ Z


def _frame_class_data(key, counts, d0, n: int, dmax: int, alpha=1.0, gaussian=False):
    r""":func:`sims.linear_hessian.class_data` inside the frame; ``gaussian=True`` mixes the inputs with a Gaussian matrix (A1 shed).

    Mixed inputs :math:`X'=GX` (:math:`G=I+N/(2\sqrt{d_0})`, :math:`N` Gaussian; invertible a.s.) keep the
    labels exactly fittable (:math:`W'^*=W^*G^{-1}`) but make :math:`\Sigma_{xx}=GG^\top\ne\alpha I`;
    orthogonalizing the rows of :math:`X'` gives back whitened inputs.

    The :math:`K=` ``len(counts)`` label rows sit on top of ``dmax`` output rows.
    """
    V.key("key", key)
    n, dmax = V.integer("n", n, low=1), V.integer("dmax", dmax, low=1, high=n)
    if jnp.ndim(counts) != 1 or not 1 <= jnp.shape(counts)[0] <= dmax:
        raise ValueError(f"counts: expected one class size per class (at most dmax = {dmax}), got shape {jnp.shape(counts)}")
    K = counts.shape[0]
    G, R, M = _draw(key, (n, dmax - K), (dmax, dmax), (dmax, dmax))
    idx = jnp.arange(dmax)
    labels = jnp.searchsorted(jnp.cumsum(counts), jnp.arange(n), side="right")
    onehot = jax.nn.one_hot(labels, K, dtype=jnp.float64)                        # (n, K)
    ind = onehot / jnp.sqrt(counts.astype(jnp.float64))
    G = G * (jnp.arange(dmax - K)[None, :] < d0 - K)
    G = G - ind @ (ind.T @ G)
    Q = jnp.concatenate([ind, jnp.linalg.qr(G)[0]], axis=1) * (idx[None, :] < d0)  # (n, dmax)
    O = _masked_frames(R, jnp.asarray(d0), dmax) * (idx[None, :] < d0)
    X = jnp.sqrt(n * alpha) * O @ Q.T
    block = (idx[:, None] < d0) & (idx[None, :] < d0)
    # a moderate anisotropy (a pure Gaussian G is often near-singular, making W* and lambda_max explode)
    X = jnp.where(gaussian, (jnp.eye(dmax) + M * block / (2 * jnp.sqrt(d0))) @ X, X)
    Y = jnp.zeros((dmax, n)).at[:K].set(onehot.T)
    return X, Y


def _frame_balanced_minimum(key, fw, depth, X, Y) -> jax.Array:
    r""":func:`sims.linear_hessian.balanced_minimum` inside the frame: :math:`W^*=\Sigma_{yx}\Sigma_{xx}^{-1}` (padding made invertible), orthogonal hidden gauges from ``key``."""
    V.key("key", key)
    if jnp.ndim(X) != 2 or jnp.shape(Y) != jnp.shape(X):
        raise ValueError(f"X/Y: expected frame data of one shape (dmax, n), got {jnp.shape(X)} and {jnp.shape(Y)}")
    dmax, n = X.shape
    lmax = fw.shape[0] - 1
    idx = jnp.arange(dmax)
    Sxx = X @ X.T / n + jnp.diag((idx >= fw[0]).astype(jnp.float64))
    Wstar = jnp.linalg.solve(Sxx.T, (Y @ X.T / n).T).T
    U, s, Vt = jnp.linalg.svd(Wstar)
    s = jnp.where(s > 1e-12 * s[0], s, 0.0)  # numerical rank (see balanced_minimum)
    root = s ** (1.0 / depth)
    hidden = _masked_frames(_draw(key, (lmax + 1, dmax, dmax))[0], fw, dmax)                     # (lmax+1, dmax, dmax), one per layer index
    l = jnp.arange(lmax + 1)[:, None, None]
    frames = jnp.where(l == 0, Vt.T[None], jnp.where(l == depth, U[None], hidden))
    mats = frames[1:] @ (root[None, :, None] * jnp.swapaxes(frames[:-1], -1, -2))
    return mats.reshape(-1) * _param_mask(fw, depth, dmax)


def _frame_gauge(key, theta, fw, depth, scale) -> jax.Array:
    r""":func:`sims.linear_hessian.random_gauge` inside the frame: :math:`W_l\to G_lW_lG_{l-1}^{-1}`, :math:`G_l` on hidden layers :math:`1\le l<L` (``scale`` traceable)."""
    V.key("key", key)
    _frame_args(theta, fw)
    lmax = fw.shape[0] - 1
    dmax = int(round((theta.shape[0] / lmax) ** 0.5))
    idx = jnp.arange(dmax)
    mats = _stack(theta, fw, depth, dmax)
    d = fw[1:, None, None]                                                        # G_l acts on layer l's outputs
    block = (idx[None, :, None] < d) & (idx[None, None, :] < d)
    noise = _draw(key, (lmax, dmax, dmax))[0] * block / jnp.sqrt(d)
    hidden = (jnp.arange(1, lmax + 1) < depth)[:, None, None]
    G = jnp.eye(dmax) + jnp.where(hidden, scale * noise, 0.0)                     # G_1 .. G_lmax
    Gprev = jnp.concatenate([jnp.eye(dmax)[None], G[:-1]], axis=0)                # G_0 = I
    # W G_prev^{-1} = solve(G_prev^T, W^T)^T
    right = jnp.swapaxes(jnp.linalg.solve(jnp.swapaxes(Gprev, -1, -2), jnp.swapaxes(mats, -1, -2)), -1, -2)
    return (G @ right).reshape(-1) * _param_mask(fw, depth, dmax)


def _frame_balancedness(theta, fw, depth, dmax: int) -> jax.Array:
    """:func:`sims.linear_hessian.balancedness_error` of the embedded net."""
    dmax = V.integer("dmax", dmax, low=1)
    _frame_args(theta, fw)
    mats = _stack(theta, fw, depth, dmax)
    lhs = jnp.swapaxes(mats[1:], -1, -2) @ mats[1:]
    rhs = mats[:-1] @ jnp.swapaxes(mats[:-1], -1, -2)
    err = jnp.linalg.norm(lhs - rhs, axis=(-2, -1)) / jnp.maximum(jnp.linalg.norm(rhs, axis=(-2, -1)), 1e-300)
    live = jnp.arange(1, mats.shape[0]) < depth
    return jnp.max(jnp.where(live, err, 0.0), initial=0.0)


def _frame_init(key, fw, depth, dmax: int, scale, xavier=False) -> jax.Array:
    """Small Gaussian init (std ``scale``) or Glorot-normal (``xavier``) of the embedded net."""
    V.key("key", key)
    dmax = V.integer("dmax", dmax, low=1)
    if jnp.ndim(fw) != 1:
        raise ValueError(f"fw: expected frame widths of shape (lmax + 1,), got shape {jnp.shape(fw)}")
    lmax = fw.shape[0] - 1
    z = jax.random.normal(key, (lmax, dmax, dmax))
    fan = (fw[:-1] + fw[1:]).astype(jnp.float64)[:, None, None]
    std = jnp.where(xavier, jnp.sqrt(2.0 / fan), scale)
    return (z * std).reshape(-1) * _param_mask(fw, depth, dmax)


