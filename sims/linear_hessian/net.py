r"""Deep linear (and tanh / ReLU) networks as plain JAX functions: model, data, minima, GD with the sharpness tracked.

Model and loss (the conventions of :mod:`theory.linear_hessian`):
:math:`f_\theta(X)=W_L\,\phi(W_{L-1}\cdots\phi(W_1X))`, :math:`\phi` the identity (``"linear"``),
``"tanh"`` or ``"relu"`` on hidden layers, :math:`\mathcal L=\tfrac1{2n}\lVert f_\theta(X)-Y\rVert_F^2`
with :math:`X\in\mathbb R^{d_0\times n}` (columns are samples) and :math:`Y\in\mathbb R^{d_L\times n}`.
The parameters are one flat vector :math:`\theta\in\mathbb R^P`, the row-major concatenation of
:math:`W_1,\dots,W_L`.

Curvature goes through the shared module :mod:`sims.hvp` (HVP, dense Hessian, Lanczos). Sweeps over
many shapes use the padded embedding of :mod:`sims.linear_hessian.frame`; constructed minima and
their spectra live in :mod:`sims.linear_hessian.spectrum`, GD sweeps in
:mod:`sims.linear_hessian.train`; the NumPy references in :mod:`sims.reference.linear_hessian`.

**Divergence** (:func:`train_gd`): a GD iterate that is non-finite or exceeds :data:`BLOWUP` in
absolute value marks the run ``diverged``; ``diverged_step`` is the first such step (``-1`` if
none). The iterate is then frozen at the last finite point, and every record from that step on is
NaN: a diverged run has no loss or sharpness, and summaries are taken over the finite runs.

Float64 throughout (importing :mod:`sims` enables it), except :func:`gd_sweep` with ``dtype="float32"``.
"""
from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

import sims  # noqa: F401  (float64)
from sims import hvp as H
from sims.sweep import cpu_loop_fusions
from theory import validate as V
from theory.linear_hessian import validate_widths

__all__ = [
    "ACTIVATIONS", "BLOWUP", "param_shapes", "n_params", "unflatten", "flatten", "forward", "loss", "class_losses",
    "covariance_loss", "dense_hessian", "hessian_eigvalsh", "top_eigenvalues",
    "class_data", "whitened_data", "balanced_minimum", "random_gauge", "balancedness_error",
    "init_params", "xavier_init", "aligned_init", "mode_strengths", "train_gd", "gd_sweep",
]

ACTIVATIONS = ("linear", "tanh", "relu")
BLOWUP = 1e100  # |theta| beyond this (or non-finite) counts as diverged: the next quartic-loss gradient overflows
_PHI = {"linear": lambda z: z, "tanh": jnp.tanh, "relu": jax.nn.relu}


# ----------------------------------------------------------------------------------------------
# parameters and model
# ----------------------------------------------------------------------------------------------

def param_shapes(widths) -> list[tuple[int, int]]:
    """Shapes :math:`(d_l, d_{l-1})` of :math:`W_1,\\dots,W_L`."""
    w = validate_widths(widths)
    return [(w[l], w[l - 1]) for l in range(1, len(w))]


def n_params(widths) -> int:
    """:math:`P=\\sum_l d_ld_{l-1}`."""
    return sum(a * b for a, b in param_shapes(widths))


def _params_bytes(w: tuple, vectors: int, max_bytes, what: str = "the flat parameters") -> None:
    """Refuse a call that holds ``vectors`` float64 arrays of :math:`P` entries (wide hidden layers make P large)."""
    V.check_bytes({"widths": w}, 8 * vectors * sum(a * b for a, b in zip(w[:-1], w[1:])), what=what,
                  max_bytes=max_bytes)


def _theta(theta: Any, widths, name: str = "theta") -> jax.Array:
    """A flat parameter vector of length :math:`P` for ``widths`` (traced values pass; shape is checked)."""
    P = n_params(widths)
    shape = jnp.shape(theta)
    if shape != (P,):
        raise ValueError(f"{name}: expected a flat vector of P = {P} parameters for widths {tuple(widths)}, "
                         f"got shape {shape}")
    # dtype always, finiteness only on concrete values (inside jit/grad/vmap a tracer passes unchanged)
    return V.traceable(name, theta, ndim=1)


def unflatten(theta: jax.Array, widths) -> list[jax.Array]:
    """Split the flat vector into :math:`[W_1,\\dots,W_L]` (row-major blocks)."""
    theta = _theta(theta, widths)
    mats, start = [], 0
    for a, b in param_shapes(widths):
        mats.append(theta[start:start + a * b].reshape(a, b))
        start += a * b
    return mats


def flatten(mats) -> jax.Array:
    """Inverse of :func:`unflatten`."""
    if not isinstance(mats, (list, tuple)) or not mats:
        raise TypeError(f"mats: expected a non-empty list of weight matrices, got {type(mats).__name__}")
    return jnp.concatenate([jnp.ravel(m) for m in mats])


def _activation(activation: str) -> str:
    return V.choice("activation", activation, ACTIVATIONS)


def _data(X: Any, Y: Any, widths) -> tuple[jax.Array, jax.Array]:
    """``X`` of shape :math:`(d_0,n)` and ``Y`` of shape :math:`(d_L,n)` (shapes checked, values may be traced)."""
    w = validate_widths(widths)
    xs, ys = jnp.shape(X), jnp.shape(Y)
    if len(xs) != 2 or xs[0] != w[0] or xs[1] < 1:
        raise ValueError(f"X: expected shape (d_0 = {w[0]}, n) with samples as columns, got {xs}")
    if len(ys) != 2 or ys != (w[-1], xs[1]):
        raise ValueError(f"Y: expected shape (d_L = {w[-1]}, n = {xs[1]}), got {ys}")
    return V.traceable("X", X, ndim=2), V.traceable("Y", Y, ndim=2)


def forward(theta: jax.Array, X: jax.Array, widths, activation: str = "linear") -> jax.Array:
    r""":math:`f_\theta(X)=W_L\phi(\cdots\phi(W_1X))`, shape :math:`(d_L,n)`."""
    phi = _PHI[_activation(activation)]
    mats = unflatten(theta, widths)
    if jnp.shape(X)[:1] != (widths[0],) or jnp.ndim(X) != 2:
        raise ValueError(f"X: expected shape (d_0 = {widths[0]}, n), got {jnp.shape(X)}")
    X = V.traceable("X", X, ndim=2)
    return _forward_mats(mats, X, phi)


def _forward_mats(mats, X, phi) -> jax.Array:
    r""":math:`W_L\phi(\cdots\phi(W_1X))` from the weight matrices (unvalidated)."""
    h = X
    for W in mats[:-1]:
        h = phi(W @ h)
    return mats[-1] @ h


def loss(theta: jax.Array, X: jax.Array, Y: jax.Array, widths, activation: str = "linear") -> jax.Array:
    r""":math:`\mathcal L=\tfrac1{2n}\lVert f_\theta(X)-Y\rVert_F^2`."""
    X, Y = _data(X, Y, widths)
    phi = _PHI[_activation(activation)]
    return _loss_mats(unflatten(theta, widths), X, Y, phi)


def _loss_mats(mats, X, Y, phi) -> jax.Array:
    r""":func:`loss` of the weight matrices (unvalidated)."""
    r = _forward_mats(mats, X, phi) - Y
    return 0.5 * jnp.sum(r * r) / X.shape[1]


def covariance_loss(theta, sigma_xx, sigma_yx, widths) -> jax.Array:
    r"""The linear net's loss up to a constant, from second moments: :math:`\tfrac12\operatorname{tr}(W\Sigma_{xx}W^\top)-\operatorname{tr}(\Sigma_{yx}^\top W)`.

    Equal to :func:`loss` (linear activation) minus :math:`\tfrac12\operatorname{tr}\Sigma_{yy}`, so it has
    the same gradient and Hessian; used for GD steps, where it makes a step independent of :math:`n`.
    """
    w = validate_widths(widths)
    mats = unflatten(theta, w)
    sigma_xx = V.traceable("sigma_xx", sigma_xx, shape=(w[0], w[0]))
    sigma_yx = V.traceable("sigma_yx", sigma_yx, shape=(w[-1], w[0]))
    return _covariance_loss_mats(mats, sigma_xx, sigma_yx)


def _covariance_loss_mats(mats, sigma_xx, sigma_yx) -> jax.Array:
    r""":func:`covariance_loss` of the weight matrices :math:`[W_1,\dots,W_L]` (unvalidated)."""
    W = functools.reduce(lambda acc, m: m @ acc, mats[1:], mats[0])
    return 0.5 * jnp.sum(W * (W @ sigma_xx)) - jnp.sum(sigma_yx * W)


def _moments(X, Y) -> tuple[jax.Array, jax.Array]:
    r""":math:`\Sigma_{xx}=XX^\top/n` and :math:`\Sigma_{yx}=YX^\top/n`."""
    n = X.shape[1]
    return X @ X.T / n, Y @ X.T / n


def _curvature_loss(X, Y, widths, activation: str):
    r"""The loss as a function of the weight matrices, for second derivatives.

    A linear net's loss depends on the data only through :math:`\Sigma_{xx},\Sigma_{yx}`
    (:func:`covariance_loss`, which differs from :func:`loss` by a constant), so its Hessian costs
    :math:`O(d^3)` per layer instead of :math:`O(nd^2)`: the same matrix up to round-off. Other
    activations use the data.
    """
    if activation == "linear":
        sigma_xx, sigma_yx = _moments(X, Y)
        return lambda mats: _covariance_loss_mats(mats, sigma_xx, sigma_yx)
    return functools.partial(_loss_mats, X=X, Y=Y, phi=_PHI[activation])


def class_losses(theta, X, Y, widths, activation: str = "linear") -> jax.Array:
    r"""Per-class share of the loss, :math:`\tfrac1{2n}\sum_{i:\,y_i=k}\lVert f(x_i)-y_i\rVert^2` (one-hot ``Y``)."""
    X, Y = _data(X, Y, widths)
    r = forward(theta, X, widths, activation) - Y
    return 0.5 * (Y @ jnp.sum(r * r, axis=0)) / X.shape[1]


def dense_hessian(theta, X, Y, widths, activation: str = "linear", *, max_bytes=None) -> jax.Array:
    """The :math:`P\\times P` Hessian of :func:`loss` (:func:`sims.hvp.dense_hessian`; small :math:`P` only).

    Linear nets differentiate :func:`covariance_loss` (the same Hessian from second moments). ``max_bytes``: the
    allocation limit (:func:`theory.validate.byte_limit`) for the :math:`P\\times P` matrices.
    """
    P = n_params(widths)
    V.check_bytes({"widths": validate_widths(widths)}, 4 * 8 * P * P,
                  what="the P x P Hessian (columns, matrix, symmetrized)", max_bytes=max_bytes)
    theta = _theta(theta, widths)
    X, Y = _data(X, Y, widths)
    # per weight matrix (sims.hvp.dense_hessian builds the columns of one layer at a time); the list's
    # ravel order is the row-major concatenation of W_1..W_L, i.e. theta's own order
    return H.dense_hessian(_curvature_loss(X, Y, widths, _activation(activation)), unflatten(theta, widths),
                           max_bytes=max_bytes)


def hessian_eigvalsh(theta, X, Y, widths, activation: str = "linear", *, max_bytes=None) -> jax.Array:
    """All Hessian eigenvalues, ascending (dense). ``max_bytes``: as for :func:`dense_hessian` (the eigensolver
    holds two more :math:`P\\times P` matrices)."""
    P = n_params(widths)
    V.check_bytes({"widths": validate_widths(widths)}, 6 * 8 * P * P,
                  what="the P x P Hessian and the eigensolver's copies", max_bytes=max_bytes)
    return jnp.linalg.eigvalsh(dense_hessian(theta, X, Y, widths, activation, max_bytes=max_bytes))


def top_eigenvalues(key, theta, X, Y, widths, *, k: int = 1, num_iter: int = 30,
                    activation: str = "linear", max_bytes=None) -> jax.Array:
    """Top-``k`` Hessian eigenvalues (descending) by matrix-free HVP-Lanczos (:func:`sims.hvp.top_eigenvalues`).

    Linear nets take the HVP of :func:`covariance_loss` (second moments: no pass over the data). ``max_bytes``: the
    allocation limit for the Krylov basis (:func:`sims.hvp.top_eigenvalues`).
    """
    theta = _theta(theta, widths)
    X, Y = _data(X, Y, widths)
    f = _curvature_loss(X, Y, widths, _activation(activation))
    return H.top_eigenvalues(lambda t: f(unflatten(t, widths)), theta, key, k=k, num_iter=num_iter,
                             max_bytes=max_bytes)


# ----------------------------------------------------------------------------------------------
# data and constructed points
# ----------------------------------------------------------------------------------------------

def _orthonormal_columns(key, n: int, m: int) -> jax.Array:
    q, r = jnp.linalg.qr(jax.random.normal(key, (n, m)))
    return q * jnp.sign(jnp.diag(r))  # Haar-distributed


def class_data(key: jax.Array, counts, d0: int, *, alpha: float = 1.0, max_bytes=None) -> tuple[jax.Array, jax.Array]:
    r"""Whitened inputs and one-hot labels with class sizes ``counts`` (:math:`\pi_k=n_k/n`).

    :math:`X=\sqrt{n\alpha}\,O\,Q^\top` where :math:`Q\in\mathbb R^{n\times d_0}` has orthonormal
    columns, the first :math:`K` being the normalized class indicators, and :math:`O` is a random
    rotation of input space. Hence :math:`XX^\top=n\alpha I` (A1) and :math:`Y` lies in the row
    space of :math:`X`, so the one-hot labels are fit exactly and the singular values of
    :math:`\Sigma_{yx}` are :math:`\sqrt{\alpha\pi_k}`. Needs :math:`K\le d_0\le n`. ``max_bytes``: the allocation
    limit (:func:`theory.validate.byte_limit`) for ``X``, the orthonormal basis and the rotation.
    """
    V.key("key", key)
    c = V.integers("counts", counts, ndim=1, low=1)  # samples per class
    n, K = int(c.sum()), c.size
    d0 = V.integer("d0", d0, low=K, high=n)
    V.check_bytes({"counts": f"n = {n} samples", "d0": d0}, 8 * (5 * n * d0 + 3 * d0 * d0 + 2 * n * K),
                  what="X, the (n, d0) basis and its QR, the rotation and the labels", max_bytes=max_bytes)
    alpha = V.real("alpha", alpha, low=0.0, low_open=True)
    return _class_data(key, alpha, counts=tuple(int(x) for x in c), d0=d0)


@functools.partial(jax.jit, static_argnames=("counts", "d0"))
def _class_data(key, alpha, *, counts: tuple, d0: int):
    # compiled once per (counts, d0): run op by op, this builder costs seconds of dispatch
    c = np.array(counts)
    n, K = int(c.sum()), c.size
    k_basis, k_rot = jax.random.split(key)
    labels = np.repeat(np.arange(K), c)
    Y = jax.nn.one_hot(labels, K, dtype=jnp.float64).T                     # (K, n)
    ind = Y.T / jnp.sqrt(jnp.asarray(c, jnp.float64))                        # orthonormal indicators
    if d0 > K:
        G = jax.random.normal(k_basis, (n, d0 - K))
        G = G - ind @ (ind.T @ G)
        Q = jnp.concatenate([ind, jnp.linalg.qr(G)[0]], axis=1)
    else:
        Q = ind
    O = _orthonormal_columns(k_rot, d0, d0)
    return jnp.sqrt(n * alpha) * O @ Q.T, Y


def whitened_data(key: jax.Array, d0: int, dL: int, n: int, *, alpha: float = 1.0, rank: int | None = None,
                  max_bytes=None):
    r"""Whitened inputs (:math:`XX^\top=n\alpha I`) and generic real labels of rank ``rank``.

    :math:`Y=BZ` with Gaussian :math:`B\in\mathbb R^{d_L\times r}`, :math:`Z\in\mathbb R^{r\times n}`,
    so :math:`\operatorname{rank}\Sigma_{yx}\le r` and the residual at the minimum is non-zero
    (:math:`Y` is not in the row space of :math:`X`). Needs :math:`1\le d_0\le n`, :math:`1\le r\le\min(d_0,d_L)`.
    ``max_bytes``: the allocation limit (:func:`theory.validate.byte_limit`) for ``X``, ``Y`` and their factors.
    """
    V.key("key", key)
    n = V.integer("n", n, low=1)
    d0 = V.integer("d0", d0, low=1, high=n)
    dL = V.integer("dL", dL, low=1)
    V.check_bytes({"n": n, "d0": d0, "dL": dL}, 8 * (4 * n * d0 + 2 * dL * n + 2 * n * min(d0, dL)),
                  what="X and its orthonormal factor, Y and its factors", max_bytes=max_bytes)
    rank = min(d0, dL) if rank is None else V.integer("rank", rank, low=1, high=min(d0, dL))
    alpha = V.real("alpha", alpha, low=0.0, low_open=True)
    return _whitened_data(key, alpha, n=n, d0=d0, dL=dL, rank=rank)


@functools.partial(jax.jit, static_argnames=("n", "d0", "dL", "rank"))
def _whitened_data(key, alpha, *, n: int, d0: int, dL: int, rank: int):
    k_x, k_b, k_z = jax.random.split(key, 3)
    X = jnp.sqrt(n * alpha) * _orthonormal_columns(k_x, n, d0).T
    Y = jax.random.normal(k_b, (dL, rank)) @ jax.random.normal(k_z, (rank, n))
    return X, Y


def balanced_minimum(key: jax.Array | None, X, Y, widths, *, max_bytes=None) -> jax.Array:
    r"""A balanced global minimum: :math:`W^*=\Sigma_{yx}\Sigma_{xx}^{-1}=USV^\top` factored as :math:`W_l=P_lS^{1/L}P_{l-1}^\top`.

    :math:`P_0=V_k`, :math:`P_L=U_k` (top :math:`k=\min_l d_l` singular triplets) and hidden
    :math:`P_l` are the first :math:`k` columns of a Haar rotation (``key``) or of the identity
    (``key=None``): an orthogonal gauge, so :math:`W_{l+1}^\top W_{l+1}=W_lW_l^\top`. The product
    equals :math:`W^*` exactly when :math:`\operatorname{rank}W^*\le k` (assumption A3); singular
    values below :math:`10^{-12}s_1` are treated as zero. ``X`` must have :math:`d_0` rows and
    full row rank (:math:`\Sigma_{xx}` invertible), ``Y`` :math:`d_L` rows. ``max_bytes``: the allocation limit
    (:func:`theory.validate.byte_limit`) for the parameters and the hidden layers' rotations.
    """
    w = validate_widths(widths)
    V.check_bytes({"widths": w}, 8 * (2 * sum(a * b for a, b in zip(w[:-1], w[1:])) + 2 * sum(d * d for d in w[1:-1])),
                  what="the parameters and the hidden layers' Haar rotations", max_bytes=max_bytes)
    if key is not None:
        V.key("key", key)
    Xa = V.array("X", X, ndim=2)
    Ya = V.array("Y", Y, ndim=2)
    X, Y = _data(Xa, Ya, w)
    n = X.shape[1]
    Sxx = np.asarray(X @ X.T) / n
    if not np.linalg.matrix_rank(Sxx) == w[0]:
        raise ValueError(f"X: Sigma_xx = X X^T / n must be invertible (rank d_0 = {w[0]}) for a unique W*, "
                         f"got rank {np.linalg.matrix_rank(Sxx)}")
    haar = key is not None
    return _balanced_minimum(key if haar else jax.random.key(0), X, Y, widths=w, haar=haar)


@functools.partial(jax.jit, static_argnames=("widths", "haar"))
def _balanced_minimum(key, X, Y, *, widths: tuple, haar: bool):
    w, n = widths, X.shape[1]
    L, k = len(w) - 1, min(w)
    Sxx, Syx = X @ X.T / n, Y @ X.T / n
    Wstar = jnp.linalg.solve(Sxx.T, Syx.T).T
    if L == 1:
        return Wstar.ravel()
    U, s, Vt = jnp.linalg.svd(Wstar, full_matrices=False)
    # numerical-rank truncation: a round-off singular value 1e-16 would become 1e-16^(1/L), a real
    # (wrong) mode of the factorization
    s = jnp.where(s > 1e-12 * s[0], s, 0.0)
    root = s[:k] ** (1.0 / L)
    keys = jax.random.split(key, L - 1)
    frames = [Vt[:k].T]
    for l in range(1, L):
        frames.append(_orthonormal_columns(keys[l - 1], w[l], k) if haar else jnp.eye(w[l])[:, :k])
    frames.append(U[:, :k])
    return flatten([frames[l] @ (root[:, None] * frames[l - 1].T) for l in range(1, L + 1)])


def random_gauge(key: jax.Array, theta, widths, scale: float) -> jax.Array:
    r"""Unbalance a network without changing its function: :math:`W_l\to G_lW_l`, :math:`W_{l+1}\to W_{l+1}G_l^{-1}`.

    :math:`G_l=I+\text{scale}\cdot N_l/\sqrt{d_l}` with Gaussian :math:`N_l` (invertible almost
    surely). Linear networks only: the product :math:`W_L\cdots W_1` is unchanged.
    """
    V.key("key", key)
    scale = V.real("scale", scale, low=0.0)  # G = I + scale N: the sign of scale is the sign of N (symmetric law)
    return _random_gauge(key, _theta(theta, widths), scale, widths=validate_widths(widths))


@functools.partial(jax.jit, static_argnames=("widths",))
def _random_gauge(key, theta, scale, *, widths: tuple):
    mats = unflatten(theta, widths)
    keys = jax.random.split(key, max(len(mats) - 1, 1))
    for l in range(len(mats) - 1):
        d = mats[l].shape[0]
        G = jnp.eye(d) + scale * jax.random.normal(keys[l], (d, d)) / jnp.sqrt(d)
        mats[l] = G @ mats[l]
        mats[l + 1] = jnp.linalg.solve(G.T, mats[l + 1].T).T
    return flatten(mats)


def balancedness_error(theta, widths) -> jax.Array:
    r""":math:`\max_l\lVert W_{l+1}^\top W_{l+1}-W_lW_l^\top\rVert_F/\lVert W_lW_l^\top\rVert_F` (0 for :math:`L=1`)."""
    mats = unflatten(theta, widths)
    errs = [jnp.linalg.norm(mats[l + 1].T @ mats[l + 1] - mats[l] @ mats[l].T)
            / jnp.maximum(jnp.linalg.norm(mats[l] @ mats[l].T), 1e-300) for l in range(len(mats) - 1)]
    return jnp.max(jnp.stack(errs)) if errs else jnp.zeros(())


def init_params(key: jax.Array, widths, scale: float, *, max_bytes=None) -> jax.Array:
    """i.i.d. :math:`\\mathcal N(0,\\text{scale}^2)` entries (small init for ``scale`` :math:`\\ll1`); ``max_bytes``: the
    allocation limit (:func:`theory.validate.byte_limit`) for the parameters."""
    V.key("key", key)
    scale = V.real("scale", scale, low=0.0)
    _params_bytes(validate_widths(widths), 3, max_bytes)
    return scale * jax.random.normal(key, (n_params(widths),))


def xavier_init(key: jax.Array, widths, *, max_bytes=None) -> jax.Array:
    """Glorot-normal init: :math:`W_l\\sim\\mathcal N(0,2/(d_l+d_{l-1}))`; ``max_bytes`` as for :func:`init_params`."""
    V.key("key", key)
    _params_bytes(validate_widths(widths), 3, max_bytes)
    shapes = param_shapes(widths)
    keys = jax.random.split(key, len(shapes))
    return flatten([jax.random.normal(k, s) * jnp.sqrt(2.0 / (s[0] + s[1])) for k, s in zip(keys, shapes)])


def aligned_init(X, Y, widths, scale: float) -> jax.Array:
    r"""A two-layer start on the aligned, balanced path: :math:`W_1=\text{scale}\sum_ke_kv_k^\top`, :math:`W_2=\text{scale}\sum_ku_ke_k^\top`.

    :math:`u_k, v_k` are the singular vectors of :math:`\Sigma_{yx}=YX^\top/n` (its non-zero modes)
    and :math:`e_k` the first hidden coordinates, so every mode starts at strength
    :math:`a_k=\text{scale}^2` (see :func:`theory.linear_hessian.two_layer_aligned_spectrum`).
    """
    w = validate_widths(widths)
    if len(w) != 3:
        raise ValueError(f"widths: aligned_init builds a two-layer net (d_0, d_1, d_2), got {w}")
    scale = V.real("scale", scale, low=0.0, low_open=True)
    X, Y = _data(V.array("X", X, ndim=2), V.array("Y", Y, ndim=2), w)
    n = X.shape[1]
    U, s, Vt = np.linalg.svd(np.asarray(Y @ X.T / n), full_matrices=False)
    r = int(np.sum(s > 1e-12 * s[0]))
    if r > w[1]:
        raise ValueError(f"widths: hidden width {w[1]} < rank {r} of Sigma_yx (a bottleneck)")
    E = np.eye(w[1])[:, :r]
    W1 = scale * E @ Vt[:r]
    W2 = scale * U[:, :r] @ E.T
    return flatten([jnp.asarray(W1), jnp.asarray(W2)])


def mode_strengths(thetas, X, Y, widths) -> np.ndarray:
    r"""Mode strengths :math:`a_k=u_k^\top Wv_k` of the product :math:`W=W_L\cdots W_1` in the singular bases of :math:`\Sigma_{yx}`.

    ``thetas`` has shape ``(P,)`` or ``(T, P)``; returns ``(r,)`` or ``(T, r)`` for the ``r``
    non-zero singular values of :math:`\Sigma_{yx}` (descending). On the aligned path these are the
    :math:`a_k` of :func:`theory.linear_hessian.two_layer_aligned_spectrum`.
    """
    w = validate_widths(widths)
    th = V.array("thetas", thetas, ndim=(1, 2))
    if th.shape[-1] != n_params(w):
        raise ValueError(f"thetas: expected P = {n_params(w)} parameters in the last axis, got shape {th.shape}")
    X, Y = (np.asarray(a) for a in _data(V.array("X", X, ndim=2), V.array("Y", Y, ndim=2), w))
    n = X.shape[1]
    U, s, Vt = np.linalg.svd(Y @ X.T / n, full_matrices=False)
    r = int(np.sum(s > 1e-12 * s[0]))
    out = []
    for t in th.reshape(-1, th.shape[-1]):
        mats = [np.asarray(m) for m in unflatten(jnp.asarray(t), w)]
        W = functools.reduce(lambda acc, m: m @ acc, mats[1:], mats[0])
        out.append(np.diag(U[:, :r].T @ W @ Vt[:r].T))
    out = np.array(out)
    return out[0] if th.ndim == 1 else out


# ----------------------------------------------------------------------------------------------
# GD with divergence as data and the sharpness tracked
# ----------------------------------------------------------------------------------------------

def _gd_steps(grad, eta, theta, diverged_step, start, n: int):
    r"""``n`` GD steps :math:`\theta\leftarrow\theta-\eta\nabla\mathcal L(\theta)` with the divergence contract (traceable).

    ``grad`` maps :math:`\theta` to :math:`\nabla\mathcal L`; ``diverged_step`` is ``-1`` until the
    first iterate that is non-finite or beyond :data:`BLOWUP`, then that step's index
    (``start + i + 1``); from then on :math:`\theta` stays frozen at the last finite iterate.
    Returns ``(theta, diverged_step)``.
    """
    def step(i, carry):
        theta, div = carry
        new = theta - eta * grad(theta)
        bad = ~(jnp.all(jnp.isfinite(new)) & (jnp.max(jnp.abs(new)) < BLOWUP))
        div = jnp.where(bad & (div < 0), start + i + 1, div).astype(div.dtype)
        return jnp.where(div >= 0, theta, new), div

    return lax.fori_loop(0, n, step, (theta, diverged_step))


def _top_eigenvalue(f, theta, key, num_iter: int) -> jax.Array:
    r"""Largest Ritz value of :math:`\nabla^2 f(\theta)` after ``num_iter`` Lanczos steps (:func:`sims.hvp.lanczos`).

    The unvalidated path used inside the training scan: a diverged run's frozen iterate is still
    finite, but the public :func:`sims.hvp.top_eigenvalues` and :func:`sims.hvp.lanczos` check finiteness
    of concrete values, which under ``jax.disable_jit`` would turn a record of data into an error.
    """
    grad = jax.grad(f)
    return H.lanczos(key, lambda v: jax.jvp(grad, (theta,), (v,))[1], theta.size, num_iter)[-1]


@functools.partial(jax.jit, static_argnames=("widths", "activation", "steps", "record_every", "lanczos_iter"))
def _train(key, theta0, X, Y, eta, *, widths, activation, steps, record_every, lanczos_iter):
    f = functools.partial(loss, X=X, Y=Y, widths=widths, activation=activation)
    # a linear net's loss depends on the data only through Sigma_xx and Sigma_yx, so the step's gradient and
    # the sharpness's HVPs cost O(d^3) instead of O(n d^2) per layer (the same derivatives up to round-off;
    # the recorded losses use the data)
    curv = _curvature_loss(X, Y, widths, activation)

    def curv_flat(t):
        return curv(unflatten(t, widths))

    grad = jax.grad(curv_flat)

    def record(theta, k, t, div):
        # lanczos_iter = 0: no tracking (a much smaller program when only the trajectory is wanted)
        lam = _top_eigenvalue(curv_flat, theta, k, lanczos_iter) if lanczos_iter else jnp.nan
        dead = (div >= 0) & (t >= div)
        nan = jnp.nan
        return (jnp.where(dead, nan, f(theta)), jnp.where(dead, nan, lam),
                jnp.where(dead, nan, class_losses(theta, X, Y, widths, activation)), theta)

    def segment(carry, inp):
        theta, div = carry
        k, t = inp
        theta, div = _gd_steps(grad, eta, theta, div, t - record_every, record_every)
        return (theta, div), record(theta, k, t, div)

    n_rec = steps // record_every
    keys = jax.random.split(key, n_rec + 1)
    first = record(theta0, keys[0], 0, jnp.int32(-1))
    times = record_every * jnp.arange(1, n_rec + 1, dtype=jnp.int32)
    (theta, div), rest = lax.scan(segment, (theta0, jnp.int32(-1)), (keys[1:], times))
    out = [jnp.concatenate([a[None], b], axis=0) for a, b in zip(first, rest)]
    return {"loss": out[0], "sharpness": out[1], "class_loss": out[2], "thetas": out[3], "theta": theta,
            "diverged": div >= 0, "diverged_step": div}


def train_gd(key: jax.Array, theta0, X, Y, widths, eta, *, steps: int, record_every: int,
             activation: str = "linear", lanczos_iter: int = 30, max_bytes=None) -> dict[str, jax.Array]:
    r"""Full-batch GD :math:`\theta_{t+1}=\theta_t-\eta\nabla\mathcal L(\theta_t)` with the sharpness tracked.

    Every ``record_every`` steps (and at :math:`t=0`) records the loss, the per-class losses
    (one-hot ``Y``), the top Hessian eigenvalue by HVP-Lanczos (``lanczos_iter`` steps, capped at
    :math:`P`; a fresh subkey per record; ``lanczos_iter=0`` skips it and records NaN) and the
    iterate. Steps run in ``lax`` loops.

    ``eta`` > 0 is one step size or a 1-D array of them (one run per entry, batched with ``vmap``;
    outputs gain a leading axis). Divergence is data (see the module docstring): ``diverged``,
    ``diverged_step`` (``-1`` if finite), NaN records from that step on.

    Returns ``loss`` and ``sharpness`` of shape ``(steps // record_every + 1,)``, ``class_loss``
    ``(..., d_L)``, ``thetas`` ``(..., P)`` (the recorded iterates), the final ``theta``,
    ``diverged`` and ``diverged_step``. ``max_bytes``: the allocation limit (:func:`theory.validate.byte_limit`) for
    the records (``thetas`` holds P values per record and run) and the Krylov basis.
    """
    V.key("key", key)
    w = validate_widths(widths)
    theta0 = V.array("theta0", theta0, shape=(n_params(w),))
    X, Y = _data(V.array("X", X, ndim=2), V.array("Y", Y, ndim=2), w)
    eta_arr = V.array("eta", eta, ndim=(0, 1), low=0.0, low_open=True)
    record_every = V.integer("record_every", record_every, low=1)
    steps = V.integer("steps", steps, low=record_every)
    if steps % record_every:
        raise ValueError(f"steps: must be a multiple of record_every = {record_every}, got {steps}")
    activation = _activation(activation)
    m = min(V.integer("lanczos_iter", lanczos_iter, low=0), n_params(w))
    runs, P = max(eta_arr.size, 1), n_params(w)
    V.check_bytes({"steps / record_every": steps // record_every, "widths": w, "eta": f"{runs} runs",
                   "lanczos_iter": m},
                  2 * 8 * runs * ((steps // record_every + 1) * (P + w[-1] + 2) + (m + 2) * P),
                  what="the recorded iterates and losses, and the Krylov basis", max_bytes=max_bytes)
    run = functools.partial(_train, widths=w, activation=activation, steps=steps, record_every=record_every,
                            lanczos_iter=m)
    if eta_arr.ndim == 0:
        return run(key, jnp.asarray(theta0), X, Y, jnp.asarray(eta_arr))
    return jax.vmap(run, in_axes=(None, None, None, None, 0))(key, jnp.asarray(theta0), X, Y, jnp.asarray(eta_arr))


# ----------------------------------------------------------------------------------------------
# many step sizes at once: batch-last GD for linear nets
# ----------------------------------------------------------------------------------------------

def _bmm(a, b):
    """``(i, j, B) x (j, k, B) -> (i, k, B)``: a product per run as a fused multiply-and-sum (runs in the last axis)."""
    return jnp.sum(a[:, :, None, :] * b[None, :, :, :], axis=1)


def _gd_sweep(theta0, X, Y, etas, *, widths, steps):
    n, L = X.shape[1], len(widths) - 1
    Sxx, Syx = (m[:, :, None] for m in _moments(X, Y))
    shapes = [(widths[l], widths[l - 1]) for l in range(1, L + 1)]
    offs = np.cumsum([0] + [a * b for a, b in shapes])
    mats = tuple(jnp.moveaxis(theta0[:, offs[l]:offs[l + 1]].reshape((-1,) + shapes[l]), 0, -1) for l in range(L))

    def grads(mats):
        pre = [mats[0]]                       # pre[l] = W_{l+1} ... W_1, (d_{l+1}, d_0, B)
        for W in mats[1:]:
            pre.append(_bmm(W, pre[-1]))
        M = _bmm(pre[-1], jnp.broadcast_to(Sxx, Sxx.shape[:2] + (etas.size,))) - Syx   # W Sxx - Syx
        out = [None] * L
        for l in range(L - 1, -1, -1):
            out[l] = M if l == 0 else _bmm(M, jnp.swapaxes(pre[l - 1], 0, 1))
            if l:
                M = _bmm(jnp.swapaxes(mats[l], 0, 1), M)
        return out

    # float32 sweeps (gd_sweep's dtype): BLOWUP is beyond float32's range, so the bound is float32's largest value
    # and "not below" it is "non-finite"
    bound = BLOWUP if etas.dtype == jnp.float64 else np.finfo(np.float32).max

    def step(i, carry):
        mats, div = carry
        new = tuple(W - etas * g for W, g in zip(mats, grads(mats)))
        # one reduction per step over every entry of a run: the max of |W| propagates NaN, so
        # "not below BLOWUP" is exactly "non-finite or beyond BLOWUP"
        big = jnp.max(jnp.abs(jnp.concatenate([W.reshape(-1, etas.size) for W in new])), axis=0)
        bad = ~(big < bound)
        div = jnp.where(bad & (div < 0), i + 1, div)
        keep = div >= 0
        return tuple(jnp.where(keep, W, V_) for W, V_ in zip(mats, new)), div

    mats, div = lax.fori_loop(0, steps, step, (mats, jnp.full(etas.shape, -1, jnp.int32)))
    W = functools.reduce(lambda acc, m: _bmm(m, acc), mats[1:], mats[0])
    r = _bmm(W, jnp.broadcast_to(X[:, :, None], X.shape + (etas.size,))) - Y[:, :, None]
    loss = jnp.where(div >= 0, jnp.nan, 0.5 * jnp.sum(r * r, axis=(0, 1)) / n)
    theta = jnp.concatenate([jnp.moveaxis(m, -1, 0).reshape(etas.size, -1) for m in mats], axis=1)
    return {"theta": theta, "loss": loss, "diverged": div >= 0, "diverged_step": div}


# On a CPU the sweep's products of tiny matrices (a multiply over a (d, d, d, runs) broadcast, summed over one
# small axis) run 3-4x faster on XLA's own loop fusions than on its default YNNPACK route, and the gap grows
# with the number of runs (sims.sweep.cpu_loop_fusions).
@functools.lru_cache(maxsize=None)
def _sweep_program(platform: str):
    """The compiled sweep for ``platform`` (on CPU with :func:`sims.sweep.cpu_loop_fusions`)."""
    return jax.jit(_gd_sweep, static_argnames=("widths", "steps"), compiler_options=cpu_loop_fusions(platform) or None)


def gd_sweep(theta0, X, Y, widths, etas, *, steps: int, max_bytes=None, dtype=None) -> dict[str, jax.Array]:
    r"""Full-batch GD of a *linear* net for many step sizes at once: ``steps`` steps per entry of ``etas``.

    The same iteration as :func:`train_gd` (linear activation, gradient from the second moments
    :math:`\nabla_{W_l}=A_l^\top(W\Sigma_{xx}-\Sigma_{yx})B_l^\top`), with the runs in the last axis
    of every array so each product is a fused multiply-and-sum vectorized across runs (batched
    products of tiny matrices are slow on CPU). ``theta0``: one start ``(P,)`` for every run or one
    per run ``(len(etas), P)``. Divergence is data: ``diverged``, ``diverged_step`` (first
    non-finite or beyond :data:`BLOWUP`, else ``-1``), the iterate frozen at its last finite value,
    the final ``loss`` NaN. Returns ``theta`` ``(len(etas), P)``, ``loss``, ``diverged``,
    ``diverged_step``; nothing is recorded along the way. ``max_bytes``: the allocation limit
    (:func:`theory.validate.byte_limit`) for the runs' parameters and gradients.

    ``dtype``: ``None``/``"float64"`` (the default) or ``"float32"`` (:func:`theory.validate.float_dtype`): data,
    moments, step sizes and weights in float32, and ``theta`` and ``loss`` returned in float32. Sound for the sweep's
    picture (which step sizes converge, to which loss, at which step a run blows up): below the edge of stability
    the iteration contracts toward a minimum, where float32 round-off (:math:`2^{-24}` relative per product) stays
    at that level. Not sound for quantities that need more than ~7 digits, such as the loss of a run converged below
    :math:`10^{-7}` of its start or the balancedness of the weights (a difference of nearly equal products).
    Divergence in float32 is the first non-finite iterate (:data:`BLOWUP` lies beyond float32's range).
    """
    w = validate_widths(widths)
    P = n_params(w)
    etas = V.array("etas", etas, ndim=1, low=0.0, low_open=True)
    V.check_bytes({"widths": w, "etas": f"{etas.size} runs"}, 6 * 8 * etas.size * P,
                  what="every run's parameters, gradients and products", max_bytes=max_bytes)
    th = V.array("theta0", theta0, ndim=(1, 2))
    if th.shape not in ((P,), (etas.size, P)):
        raise ValueError(f"theta0: expected shape ({P},) or ({etas.size}, {P}) (one start per step size), got {th.shape}")
    th = np.broadcast_to(th, (etas.size, P))
    X, Y = _data(V.array("X", X, ndim=2), V.array("Y", Y, ndim=2), w)
    steps = V.integer("steps", steps, low=1)
    dt = V.float_dtype("dtype", dtype)
    if dt != np.float64:  # every float the program reads in float32 (validated in float64 above)
        th, X, Y, etas = (jnp.asarray(v, dt) for v in (th, X, Y, etas))
    return _sweep_program(jax.default_backend())(jnp.asarray(th), X, Y, jnp.asarray(etas), widths=w, steps=steps)
