r"""Hessians of deep linear (and tanh / ReLU) networks: dense autodiff, matrix-free Lanczos, GD training.

Model and loss (same conventions as :mod:`theory.linear_hessian`):
:math:`f_\theta(X)=W_L\,\phi(W_{L-1}\cdots\phi(W_1X))`, :math:`\phi` the identity (``"linear"``),
``"tanh"`` or ``"relu"`` on hidden layers, :math:`\mathcal L=\tfrac1{2n}\lVert f_\theta(X)-Y\rVert_F^2`,
with :math:`X\in\mathbb R^{d_0\times n}` (columns are samples) and
:math:`Y\in\mathbb R^{d_L\times n}`. Parameters are one flat vector :math:`\theta\in\mathbb R^P`,
the row-major concatenation of :math:`W_1,\dots,W_L`.

Hessians: dense ``jax.hessian`` + ``eigvalsh`` for small :math:`P`; otherwise Hessian-vector
products :math:`Hv=\partial_\epsilon\nabla\mathcal L(\theta+\epsilon v)` (``jvp`` of ``grad``) fed
to a Lanczos iteration with full reorthogonalization (:func:`lanczos`), written with ``lax`` loops.
A NumPy reference (analytic HVP of the linear network and a NumPy Lanczos) backs the benchmark.

Importing :mod:`sims` enables float64; everything here computes in float64.
"""
from __future__ import annotations

import functools
from numbers import Integral

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

import sims  # noqa: F401  (float64)
from sims.sweep import diverged
from theory.linear_hessian import validate_widths

__all__ = [
    "ACTIVATIONS", "param_shapes", "n_params", "unflatten", "flatten", "forward", "loss", "class_losses",
    "hvp", "dense_hessian", "hessian_eigvalsh", "lanczos", "top_eigenvalues",
    "class_data", "whitened_data", "balanced_minimum", "random_gauge", "balancedness_error",
    "init_params", "xavier_init", "train_gd",
    "ACT_CODES", "frame_widths", "param_mask", "active_indices", "frame_forward", "frame_loss",
    "frame_whitened_data", "frame_class_data", "frame_balanced_minimum", "frame_gauge", "frame_balancedness",
    "frame_init", "DMAX", "LMAX", "N_SAMPLES", "construct_run", "construct_grid", "frame_hessian_run", "frame_spectra", "strip_sentinel", "train_run",
    "numpy_hvp", "numpy_dense_hessian", "numpy_lanczos", "bench_cases",
]

ACTIVATIONS = ("linear", "tanh", "relu")
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


def unflatten(theta: jax.Array, widths) -> list[jax.Array]:
    """Split the flat vector into :math:`[W_1,\\dots,W_L]` (row-major blocks)."""
    mats, start = [], 0
    for a, b in param_shapes(widths):
        mats.append(theta[start:start + a * b].reshape(a, b))
        start += a * b
    return mats


def flatten(mats) -> jax.Array:
    """Inverse of :func:`unflatten`."""
    return jnp.concatenate([jnp.ravel(m) for m in mats])


def _check_activation(activation: str) -> str:
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation: expected one of {ACTIVATIONS}, got {activation!r}")
    return activation


def forward(theta: jax.Array, X: jax.Array, widths, activation: str = "linear") -> jax.Array:
    r""":math:`f_\theta(X)=W_L\phi(\cdots\phi(W_1X))`, shape :math:`(d_L,n)`."""
    phi = _PHI[_check_activation(activation)]
    mats = unflatten(theta, widths)
    h = X
    for W in mats[:-1]:
        h = phi(W @ h)
    return mats[-1] @ h


def loss(theta: jax.Array, X: jax.Array, Y: jax.Array, widths, activation: str = "linear") -> jax.Array:
    r""":math:`\mathcal L=\tfrac1{2n}\lVert f_\theta(X)-Y\rVert_F^2`."""
    r = forward(theta, X, widths, activation) - Y
    return 0.5 * jnp.sum(r * r) / X.shape[1]


def class_losses(theta, X, Y, widths, activation: str = "linear") -> jax.Array:
    r"""Per-class share of the loss, :math:`\tfrac1{2n}\sum_{i:\,y_i=k}\lVert f(x_i)-y_i\rVert^2` (one-hot ``Y``)."""
    r = forward(theta, X, widths, activation) - Y
    return 0.5 * (Y @ jnp.sum(r * r, axis=0)) / X.shape[1]


def hvp(theta, v, X, Y, widths, activation: str = "linear") -> jax.Array:
    r"""Hessian-vector product :math:`H(\theta)v` as the ``jvp`` of ``grad`` (forward-over-reverse)."""
    g = jax.grad(loss)
    return jax.jvp(lambda t: g(t, X, Y, widths, activation), (theta,), (v,))[1]


def dense_hessian(theta, X, Y, widths, activation: str = "linear") -> jax.Array:
    """The :math:`P\\times P` Hessian by ``jax.hessian`` (small :math:`P` only)."""
    return jax.hessian(loss)(theta, X, Y, widths, activation)


def hessian_eigvalsh(theta, X, Y, widths, activation: str = "linear") -> jax.Array:
    """All Hessian eigenvalues, ascending (dense; symmetrized against round-off asymmetry)."""
    H = dense_hessian(theta, X, Y, widths, activation)
    return jnp.linalg.eigvalsh(0.5 * (H + H.T))


# ----------------------------------------------------------------------------------------------
# Lanczos with full reorthogonalization
# ----------------------------------------------------------------------------------------------

def lanczos(key: jax.Array, matvec, dim: int, num_iter: int) -> jax.Array:
    r"""Ritz values (ascending, ``num_iter`` of them) of a symmetric operator from ``num_iter`` Lanczos steps.

    Builds :math:`V=[v_0,\dots,v_{m-1}]` and the tridiagonal :math:`T=V^\top HV` with
    :math:`\alpha_i=v_i^\top Hv_i`; every new vector is orthogonalized against *all* previous
    ones (classical Gram--Schmidt applied twice), which keeps :math:`V` orthonormal to round-off
    and prevents ghost copies of converged eigenvalues. On breakdown (:math:`\beta_i\approx0`,
    an invariant subspace found) the iteration restarts from a fresh random vector orthogonal to
    :math:`V` with :math:`\beta_i=0`, so repeated eigenvalues are found with their multiplicity.
    With ``num_iter == dim`` the Ritz values are the whole spectrum. Top-k eigenvalues converge
    first; the caller picks the last k.
    """
    if isinstance(dim, bool) or not isinstance(dim, Integral) or dim < 1:
        raise ValueError(f"dim: expected a positive integer, got {dim!r}")
    if isinstance(num_iter, bool) or not isinstance(num_iter, Integral) or not 1 <= num_iter <= dim:
        raise ValueError(f"num_iter: expected an integer in [1, dim={dim}], got {num_iter!r}")
    k_start, k_restart = jax.random.split(key)
    v0 = jax.random.normal(k_start, (dim,))
    V = jnp.zeros((num_iter + 1, dim)).at[0].set(v0 / jnp.linalg.norm(v0))

    def orth(w, V):
        w = w - V.T @ (V @ w)
        return w - V.T @ (V @ w)

    def body(i, carry):
        V, alpha, beta, scale = carry
        v = V[i]
        w = matvec(v)
        a = jnp.vdot(v, w)
        w = orth(w, V)
        b = jnp.linalg.norm(w)
        scale = jnp.maximum(scale, jnp.maximum(jnp.abs(a), b))
        fresh = orth(jax.random.normal(jax.random.fold_in(k_restart, i), (dim,)), V)
        fresh = fresh / jnp.maximum(jnp.linalg.norm(fresh), 1e-300)
        # breakdown threshold: a few hundred ulps of the operator norm seen so far
        broke = b <= 1e-13 * jnp.maximum(scale, 1e-300)
        nxt = jnp.where(broke, fresh, w / jnp.where(broke, 1.0, b))
        return V.at[i + 1].set(nxt), alpha.at[i].set(a), beta.at[i].set(jnp.where(broke, 0.0, b)), scale

    init = (V, jnp.zeros(num_iter), jnp.zeros(num_iter), jnp.zeros(()))
    _, alpha, beta, _ = lax.fori_loop(0, num_iter, body, init)
    T = jnp.diag(alpha) + jnp.diag(beta[:-1], 1) + jnp.diag(beta[:-1], -1)
    return jnp.linalg.eigvalsh(T)


def top_eigenvalues(key, theta, X, Y, widths, k: int = 1, num_iter: int = 30, activation: str = "linear") -> jax.Array:
    """Top-``k`` Hessian eigenvalues (descending) by matrix-free HVP-Lanczos (``num_iter`` capped at :math:`P`)."""
    P = n_params(widths)
    m = min(int(num_iter), P)
    if isinstance(k, bool) or not isinstance(k, Integral) or not 1 <= k <= m:
        raise ValueError(f"k: expected an integer in [1, num_iter={m}], got {k!r}")
    ritz = lanczos(key, lambda v: hvp(theta, v, X, Y, widths, activation), P, m)
    return ritz[::-1][:k]


# ----------------------------------------------------------------------------------------------
# constructors
# ----------------------------------------------------------------------------------------------

def _orthonormal_columns(key, n: int, m: int) -> jax.Array:
    q, r = jnp.linalg.qr(jax.random.normal(key, (n, m)))
    return q * jnp.sign(jnp.diag(r))  # Haar-distributed


def class_data(key: jax.Array, counts, d0: int, *, n: int | None = None, alpha: float = 1.0) -> tuple[jax.Array, jax.Array]:
    r"""Whitened inputs and one-hot labels with class sizes ``counts`` (:math:`\pi_k=n_k/n`).

    :math:`X=\sqrt{n\alpha}\,O\,Q^\top` where :math:`Q\in\mathbb R^{n\times d_0}` has orthonormal
    columns, the first :math:`K` being the normalized class indicators, and :math:`O` is a random
    rotation of input space. Hence :math:`XX^\top=n\alpha I` (A1) and :math:`Y` lies in the row
    space of :math:`X`, so the one-hot labels are fit exactly and
    :math:`\Sigma_{yx}\Sigma_{yx}^\top=\alpha\,\mathrm{diag}(\pi)`. ``counts`` may be traced (inside
    a sweep); then the total ``n`` must be given and the counts must sum to it, each :math:`\ge1`.
    """
    try:
        concrete = np.asarray(counts)
    except (jax.errors.TracerArrayConversionError, jax.errors.ConcretizationTypeError):
        concrete = None
    if concrete is not None:
        if concrete.ndim != 1 or not np.issubdtype(concrete.dtype, np.integer) or np.any(concrete < 1):
            raise ValueError(f"counts: expected a 1-D array of positive integers (samples per class), got {concrete!r}")
        if n is not None and n != int(concrete.sum()):
            raise ValueError(f"n: must equal sum(counts) = {int(concrete.sum())}, got {n}")
        n = int(concrete.sum())
        if not concrete.size <= d0 <= n:
            raise ValueError(f"d0: need K={concrete.size} <= d0 <= n={n} for whitened inputs that fit one-hot "
                             f"labels, got d0={d0}")
    elif n is None:
        raise ValueError("n: traced counts need the concrete total number of samples n")
    counts = jnp.asarray(counts)
    K = counts.shape[0]
    k_basis, k_rot = jax.random.split(key)
    labels = jnp.searchsorted(jnp.cumsum(counts), jnp.arange(n), side="right")
    Y = jax.nn.one_hot(labels, K, dtype=jnp.float64).T                    # (K, n)
    ind = Y.T / jnp.sqrt(counts.astype(jnp.float64))                        # orthonormal indicators
    if d0 > K:
        G = jax.random.normal(k_basis, (n, d0 - K))
        G = G - ind @ (ind.T @ G)
        Q = jnp.concatenate([ind, jnp.linalg.qr(G)[0]], axis=1)
    else:
        Q = ind
    O = _orthonormal_columns(k_rot, d0, d0)
    X = jnp.sqrt(n * alpha) * O @ Q.T
    return X, Y


def whitened_data(key: jax.Array, d0: int, dL: int, n: int, *, alpha: float = 1.0, rank: int | None = None):
    r"""Whitened inputs (:math:`XX^\top=n\alpha I`) and generic real labels of rank ``rank``.

    :math:`Y=BZ` with Gaussian :math:`B\in\mathbb R^{d_L\times r}`, :math:`Z\in\mathbb R^{r\times n}`,
    so :math:`\operatorname{rank}\Sigma_{yx}\le r` and the residual at the minimum is non-zero
    (:math:`Y` is not in the row space of :math:`X`).
    """
    rank = min(d0, dL) if rank is None else rank
    if not (1 <= d0 <= n and 1 <= dL and 1 <= rank <= min(d0, dL)):
        raise ValueError(f"shapes: need 1 <= d0 <= n and 1 <= rank <= min(d0, dL); got d0={d0}, dL={dL}, n={n}, rank={rank}")
    k_x, k_b, k_z = jax.random.split(key, 3)
    X = jnp.sqrt(n * alpha) * _orthonormal_columns(k_x, n, d0).T
    Y = jax.random.normal(k_b, (dL, rank)) @ jax.random.normal(k_z, (rank, n))
    return X, Y


def balanced_minimum(key: jax.Array | None, X, Y, widths) -> jax.Array:
    r"""A balanced global minimum: :math:`W^*=\Sigma_{yx}\Sigma_{xx}^{-1}=USV^\top` factored as :math:`W_l=P_lS^{1/L}P_{l-1}^\top`.

    :math:`P_0=V_k`, :math:`P_L=U_k` (top :math:`k=\min_l d_l` singular triplets) and hidden
    :math:`P_l` are the first :math:`k` columns of a Haar rotation (``key``) or of the identity
    (``key=None``): an orthogonal gauge, so :math:`W_{l+1}^\top W_{l+1}=W_lW_l^\top`. The product
    equals :math:`W^*` exactly when :math:`\operatorname{rank}W^*\le k` (assumption A3); singular
    values below :math:`10^{-12}s_1` are treated as zero.
    """
    w = validate_widths(widths)
    L, k = len(w) - 1, min(w)
    n = X.shape[1]
    Sxx, Syx = X @ X.T / n, Y @ X.T / n
    Wstar = jnp.linalg.solve(Sxx.T, Syx.T).T
    if L == 1:
        return Wstar.ravel()
    U, s, Vt = jnp.linalg.svd(Wstar, full_matrices=False)
    # numerical-rank truncation: a round-off singular value 1e-16 would become 1e-16^(1/L), a real
    # (wrong) mode of the factorization
    s = jnp.where(s > 1e-12 * s[0], s, 0.0)
    root = s[:k] ** (1.0 / L)
    keys = jax.random.split(key, L - 1) if key is not None else [None] * (L - 1)
    frames = [Vt[:k].T]
    for l in range(1, L):
        frames.append(jnp.eye(w[l])[:, :k] if keys[l - 1] is None else _orthonormal_columns(keys[l - 1], w[l], k))
    frames.append(U[:, :k])
    return flatten([frames[l] @ (root[:, None] * frames[l - 1].T) for l in range(1, L + 1)])


def random_gauge(key: jax.Array, theta, widths, scale: float) -> jax.Array:
    r"""Unbalance a network without changing its function: :math:`W_l\to G_lW_l`, :math:`W_{l+1}\to W_{l+1}G_l^{-1}`.

    :math:`G_l=I+\text{scale}\cdot N_l/\sqrt{d_l}` with Gaussian :math:`N_l` (invertible almost
    surely). Linear networks only: the product :math:`W_L\cdots W_1` is unchanged.
    """
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


def init_params(key: jax.Array, widths, scale: float) -> jax.Array:
    """i.i.d. :math:`\\mathcal N(0,\\text{scale}^2)` entries (small init for ``scale`` :math:`\\ll1`)."""
    return scale * jax.random.normal(key, (n_params(widths),))


def xavier_init(key: jax.Array, widths) -> jax.Array:
    """Glorot-normal init: :math:`W_l\\sim\\mathcal N(0,2/(d_l+d_{l-1}))`."""
    keys = jax.random.split(key, len(param_shapes(widths)))
    return flatten([jax.random.normal(k, s) * jnp.sqrt(2.0 / (s[0] + s[1])) for k, s in zip(keys, param_shapes(widths))])


# ----------------------------------------------------------------------------------------------
# GD training with the sharpness tracked
# ----------------------------------------------------------------------------------------------

def train_gd(key: jax.Array, theta0, X, Y, widths, lr, *, steps: int, record_every: int,
             activation: str = "linear", lanczos_iter: int = 24) -> dict[str, jax.Array]:
    r"""Full-batch GD :math:`\theta_{t+1}=\theta_t-\eta\nabla\mathcal L(\theta_t)` for ``steps`` steps.

    Every ``record_every`` steps (and at :math:`t=0`) records the loss, the per-class losses
    (one-hot ``Y``) and the top Hessian eigenvalue by HVP-Lanczos (``lanczos_iter`` steps, fresh
    subkey each record). Steps run in ``lax`` loops. A run that overflows is set to ``inf`` and
    reported ``diverged`` (divergence is data, never an exception).

    Returns ``loss`` / ``sharpness`` of shape ``(steps // record_every + 1,)``, ``class_loss``
    ``(..., K)``, the final ``theta`` and the boolean ``diverged``.
    """
    if steps % record_every:
        raise ValueError(f"steps: must be a multiple of record_every={record_every}, got {steps}")
    _check_activation(activation)
    m = min(lanczos_iter, n_params(widths))
    return _train(key, theta0, lambda t: loss(t, X, Y, widths, activation),
                  lambda t: class_losses(t, X, Y, widths, activation), lr, steps, record_every, m)


# ----------------------------------------------------------------------------------------------
# padded family: every width <= dmax and depth <= lmax in ONE compiled shape
# ----------------------------------------------------------------------------------------------
#
# A net with widths (d_0, ..., d_L) is embedded in a frame of lmax layers of dmax x dmax blocks:
# W_l occupies the top-left d_l x d_{l-1} block of block l (masked), layers l > L are the fixed
# identity (not parameters), data rows beyond d_0 / d_L are zero. The loss is then exactly the
# loss of the small net, its gradient vanishes on the padding, and its Hessian is the small net's
# Hessian on the active coordinates and zero elsewhere. Sweeps over shapes, depths, proportions and
# activations therefore share one compilation (compiles dominate the cost of these tiny nets).

ACT_CODES = {"linear": 0, "tanh": 1, "relu": 2}


def frame_widths(widths, lmax: int) -> np.ndarray:
    """``(lmax + 1,)`` int array: ``widths`` followed by copies of :math:`d_L` (identity layers)."""
    w = validate_widths(widths)
    if len(w) - 1 > lmax:
        raise ValueError(f"widths: depth {len(w) - 1} exceeds the frame depth lmax={lmax}")
    return np.array(list(w) + [w[-1]] * (lmax + 1 - len(w)), dtype=np.int32)


def param_mask(fw: jax.Array, depth: jax.Array, dmax: int) -> jax.Array:
    """1 on the active entries of every block :math:`l\\le L` of the frame, 0 elsewhere; shape ``(lmax*dmax^2,)``."""
    lmax = fw.shape[0] - 1
    idx = jnp.arange(dmax)
    rows = idx[None, :, None] < fw[1:, None, None]
    cols = idx[None, None, :] < fw[:-1, None, None]
    live = (jnp.arange(lmax) < depth)[:, None, None]
    return (rows & cols & live).reshape(-1).astype(jnp.float64)


def active_indices(widths, dmax: int, lmax: int) -> np.ndarray:
    """Flat frame indices of the real parameters (row-major :math:`W_1,\\dots,W_L` order, as :func:`flatten`)."""
    w = validate_widths(widths)
    out = []
    for l in range(len(w) - 1):
        rows, cols = np.meshgrid(np.arange(w[l + 1]), np.arange(w[l]), indexing="ij")
        out.append(l * dmax * dmax + rows.ravel() * dmax + cols.ravel())
    return np.concatenate(out)


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
    return (theta * param_mask(fw, depth, dmax)).reshape(lmax, dmax, dmax)


def frame_forward(theta, fw, depth, X, act=0) -> jax.Array:
    r"""Forward pass of the embedded net; ``act`` is an activation code (0 linear, 1 tanh, 2 relu), traceable.

    A ``lax.scan`` over the ``lmax`` blocks (small compiled graph): hidden layers :math:`l<L` apply
    the activation, layers :math:`l>L` are the identity.
    """
    dmax = X.shape[0]
    mats = _stack(theta, fw, depth, dmax)

    def layer(h, inp):
        W, l = inp
        z = W @ h
        z = jnp.where(l < depth - 1, _phi_code(z, act), z)
        return jnp.where(l < depth, z, h), None

    # unrolled: the blocks are tiny, so loop overhead (not flops) would dominate inside GD loops
    return lax.scan(layer, X, (mats, jnp.arange(mats.shape[0])), unroll=True)[0]


def frame_loss(theta, fw, depth, X, Y, act=0) -> jax.Array:
    """Loss of the embedded net (equal to :func:`loss` of the small net)."""
    r = frame_forward(theta, fw, depth, X, act) - Y
    return 0.5 * jnp.sum(r * r) / X.shape[1]


def _masked_frames(g, d, dmax):
    # dmax x dmax orthogonal matrices whose first d columns span the first d coordinates (batched
    # over leading axes of d), from Gaussian g: the first k <= d columns are a Haar frame of that subspace
    g = g * (jnp.arange(dmax)[:, None] < d[..., None, None])
    q, r = jnp.linalg.qr(g)
    dg = jnp.diagonal(r, axis1=-2, axis2=-1)
    return q * jnp.where(jnp.abs(dg) > 0, jnp.sign(dg), 1.0)[..., None, :]


def frame_whitened_data(key, d0, dL, rank, n: int, dmax: int, alpha=1.0):
    """:func:`whitened_data` inside the frame (``d0``, ``dL``, ``rank``, ``alpha`` traceable)."""
    G, B, Z = _draw(key, (n, dmax), (dmax, dmax), (dmax, n))
    idx = jnp.arange(dmax)
    G = G * (idx[None, :] < d0)
    Q = jnp.linalg.qr(G)[0] * (idx[None, :] < d0)
    X = jnp.sqrt(n * alpha) * Q.T
    B = B * (idx[:, None] < dL) * (idx[None, :] < rank)
    Z = Z * (idx[:, None] < rank)
    return X, B @ Z


def frame_class_data(key, counts, d0, n: int, dmax: int, alpha=1.0, gaussian=False):
    r""":func:`class_data` inside the frame; ``gaussian=True`` mixes the inputs with a Gaussian matrix (A1 shed).

    Mixed inputs :math:`X'=GX` (:math:`G=I+N/(2\sqrt{d_0})`, :math:`N` Gaussian; invertible a.s.) keep the
    labels exactly fittable (:math:`W'^*=W^*G^{-1}`) but make :math:`\Sigma_{xx}=GG^\top\ne\alpha I`;
    orthogonalizing the rows of :math:`X'` gives back whitened inputs.

    The :math:`K=` ``len(counts)`` label rows sit on top of ``dmax`` output rows.
    """
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


def frame_balanced_minimum(key, fw, depth, X, Y) -> jax.Array:
    r""":func:`balanced_minimum` inside the frame: :math:`W^*=\Sigma_{yx}\Sigma_{xx}^{-1}` (padding made invertible), orthogonal hidden gauges from ``key``."""
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
    return mats.reshape(-1) * param_mask(fw, depth, dmax)


def frame_gauge(key, theta, fw, depth, scale) -> jax.Array:
    r""":func:`random_gauge` inside the frame: :math:`W_l\to G_lW_lG_{l-1}^{-1}`, :math:`G_l` on hidden layers :math:`1\le l<L` (``scale`` traceable)."""
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
    return (G @ right).reshape(-1) * param_mask(fw, depth, dmax)


def frame_balancedness(theta, fw, depth, dmax: int) -> jax.Array:
    """:func:`balancedness_error` of the embedded net."""
    mats = _stack(theta, fw, depth, dmax)
    lhs = jnp.swapaxes(mats[1:], -1, -2) @ mats[1:]
    rhs = mats[:-1] @ jnp.swapaxes(mats[:-1], -1, -2)
    err = jnp.linalg.norm(lhs - rhs, axis=(-2, -1)) / jnp.maximum(jnp.linalg.norm(rhs, axis=(-2, -1)), 1e-300)
    live = jnp.arange(1, mats.shape[0]) < depth
    return jnp.max(jnp.where(live, err, 0.0), initial=0.0)


def frame_init(key, fw, depth, dmax: int, scale, xavier=False) -> jax.Array:
    """Small Gaussian init (std ``scale``) or Glorot-normal (``xavier``) of the embedded net."""
    lmax = fw.shape[0] - 1
    z = jax.random.normal(key, (lmax, dmax, dmax))
    fan = (fw[:-1] + fw[1:]).astype(jnp.float64)[:, None, None]
    std = jnp.where(xavier, jnp.sqrt(2.0 / fan), scale)
    return (z * std).reshape(-1) * param_mask(fw, depth, dmax)


def _train(key, theta0, loss_fn, class_fn, lr, steps: int, record_every: int, lanczos_iter: int):
    P = theta0.shape[0]
    g = jax.grad(loss_fn)

    def measure(theta, k):
        lam = lanczos(k, lambda v: jax.jvp(g, (theta,), (v,))[1], P, lanczos_iter)[-1]
        return loss_fn(theta), lam, class_fn(theta)

    def step(_, theta):
        new = theta - lr * g(theta)
        # freeze a blown-up run as inf so it stays classified as diverged (divergence is data)
        ok = jnp.all(jnp.isfinite(new)) & (jnp.max(jnp.abs(new)) < 1e100)
        return jnp.where(ok, new, jnp.full_like(theta, jnp.inf))

    def segment(theta, k):
        theta = lax.fori_loop(0, record_every, step, theta)
        return theta, measure(theta, k)

    keys = jax.random.split(key, steps // record_every + 1)
    first = measure(theta0, keys[0])
    theta, rest = lax.scan(segment, theta0, keys[1:])
    losses, lams, cls = (jnp.concatenate([f[None], r], axis=0) for f, r in zip(first, rest))
    return {"loss": losses, "sharpness": lams, "class_loss": cls, "theta": theta,
            "diverged": diverged(theta[None])[0] | ~jnp.isfinite(losses[-1])}


# ----------------------------------------------------------------------------------------------
# per-run functions for run_grid (module-level, so repeated sweeps reuse one compilation)
# ----------------------------------------------------------------------------------------------

DMAX, LMAX, N_SAMPLES = 6, 5, 100   # the frame shared by steplab sweeps: P <= 180, pi in steps of 1/100


def construct_run(g: dict) -> dict:
    r"""Build one case for run_grid: data and a (balanced, gauged, or zero) parameter vector in the frame.

    ``g`` holds traced fields: ``key``; ``widths`` (frame widths, :func:`frame_widths`) and
    ``depth``; ``classes`` (bool): one-hot labels with class sizes ``counts`` (K,) and whitened
    inputs (or raw Gaussian inputs if ``gaussian``), otherwise generic labels of rank ``rank`` and
    whitened inputs with scale ``alpha``; ``gauge``: scale of a random gauge applied to the balanced
    minimum (0 keeps it balanced); ``origin``: use :math:`\theta=0` instead.

    Returns ``theta``, ``X``, ``Y``, the singular values ``sv`` of :math:`\Sigma_{yx}`, the
    balancedness error and the gradient norm at ``theta``.
    """
    k_data, k_min, k_gauge = jax.random.split(g["key"], 3)
    fw, depth = g["widths"], g["depth"]
    Xc, Yc = frame_class_data(k_data, g["counts"], fw[0], N_SAMPLES, DMAX, 1.0, g["gaussian"])
    Xw, Yw = frame_whitened_data(k_data, fw[0], fw[depth], g["rank"], N_SAMPLES, DMAX, g["alpha"])
    X, Y = jnp.where(g["classes"], Xc, Xw), jnp.where(g["classes"], Yc, Yw)
    theta = frame_balanced_minimum(k_min, fw, depth, X, Y)
    theta = frame_gauge(k_gauge, theta, fw, depth, g["gauge"])
    theta = jnp.where(g["origin"], jnp.zeros_like(theta), theta)
    return {"theta": theta, "X": X, "Y": Y, "sv": jnp.linalg.svd(Y @ X.T / N_SAMPLES, compute_uv=False),
            "balance": frame_balancedness(theta, fw, depth, DMAX),
            "grad_norm": jnp.linalg.norm(jax.grad(frame_loss)(theta, fw, depth, X, Y))}


def construct_grid(n: int, **fields) -> dict:
    """A grid for :func:`construct_run` with ``n`` points: defaults for every field, overridden by ``fields``.

    ``widths`` is a list of width tuples (converted with :func:`frame_widths`; ``depth`` follows).
    """
    grid = {"key": jax.random.split(jax.random.key(0), n), "counts": np.tile([34, 33, 33], (n, 1)),
            "alpha": np.ones(n), "rank": np.ones(n, np.int32), "classes": np.ones(n, bool),
            "gaussian": np.zeros(n, bool), "gauge": np.zeros(n), "origin": np.zeros(n, bool)}
    widths = fields.pop("widths")
    grid["widths"] = np.stack([frame_widths(w, LMAX) for w in widths])
    grid["depth"] = np.array([len(w) - 1 for w in widths], np.int32)
    for name, value in fields.items():
        if name not in grid:
            raise ValueError(f"{name}: not a field of construct_run; expected one of {sorted(grid)}")
        grid[name] = value if name == "key" else np.asarray(value)
    for name, value in grid.items():
        if np.shape(value)[0] != n:
            raise ValueError(f"{name}: expected a leading axis of length {n}, got shape {np.shape(value)}")
    return grid


def frame_hessian_run(g: dict) -> jax.Array:
    r"""The Hessian (``jax.hessian``) of an embedded net, padding coordinates shifted below the spectrum.

    ``g``: ``theta``, ``widths``, ``depth``, ``X``, ``Y``, ``act``. The Hessian vanishes exactly on
    padding coordinates, so a diagonal shift :math:`c=-(1+2\max_i\sum_j|H_{ij}|)` there decouples
    them below every real eigenvalue (Gershgorin): its spectrum is ``lmax*dmax^2 - P`` copies of
    :math:`c` and the net's :math:`P` eigenvalues (see :func:`frame_spectra`). The shift is scaled
    to :math:`\lVert H\rVert` so it adds no round-off beyond :math:`\epsilon\lVert H\rVert`.
    """
    fw, depth = g["widths"], g["depth"]
    H = jax.hessian(frame_loss)(g["theta"], fw, depth, g["X"], g["Y"], g["act"])
    H = 0.5 * (H + H.T)
    shift = -(1.0 + 2.0 * jnp.max(jnp.sum(jnp.abs(H), axis=1)))
    pad = 1.0 - param_mask(fw, depth, DMAX)
    return H + jnp.diag(shift * pad)


def frame_spectra(hessians) -> np.ndarray:
    """Ascending eigenvalues of a stack of :func:`frame_hessian_run` outputs.

    LAPACK through NumPy: on CPU, JAX's batched ``eigvalsh`` of 180 x 180 matrices is ~50x slower.
    """
    return np.linalg.eigvalsh(np.asarray(hessians))


def strip_sentinel(eigs: np.ndarray, widths_list) -> list[np.ndarray]:
    """Keep the :math:`P` real eigenvalues of each :func:`frame_spectra` row (the largest ``n_params(widths)``)."""
    return [np.asarray(e)[len(e) - n_params(w):] for e, w in zip(np.asarray(eigs), widths_list)]


@functools.lru_cache(maxsize=None)
def train_run(steps: int, record_every: int):
    r"""Per-run GD function for run_grid (cached per static config, so each config compiles once).

    ``g``: ``key``, ``counts``, ``widths``, ``depth``, ``lr``, ``init_scale``, ``xavier``, ``act``
    (0 linear, 1 tanh, 2 relu), ``gaussian``. Class data, small Gaussian (or Glorot) init, full-batch
    GD :math:`\theta\leftarrow\theta-\eta\nabla\mathcal L` in ``lax`` loops. Records every
    ``record_every`` steps (and at 0): the loss, the per-class losses and a parameter snapshot
    (for Hessians afterwards with :func:`frame_hessian_run`). A run that overflows becomes ``inf``
    and is flagged ``diverged`` (divergence is data).
    """
    if steps < 1 or record_every < 1 or steps % record_every:
        raise ValueError(f"steps: need a positive multiple of record_every={record_every}, got {steps}")

    def run(g: dict) -> dict:
        k_data, k_init = jax.random.split(g["key"])
        fw, depth, act = g["widths"], g["depth"], g["act"]
        X, Y = frame_class_data(k_data, g["counts"], fw[0], N_SAMPLES, DMAX, 1.0, g["gaussian"])
        theta0 = frame_init(k_init, fw, depth, DMAX, g["init_scale"], g["xavier"])
        f = lambda t: frame_loss(t, fw, depth, X, Y, act)  # noqa: E731
        grad = jax.grad(f)
        K = g["counts"].shape[0]

        def record(theta):
            r = frame_forward(theta, fw, depth, X, act) - Y
            return f(theta), (Y @ jnp.sum(r * r, axis=0))[:K] / (2 * N_SAMPLES), theta

        def step(_, theta):
            new = theta - g["lr"] * grad(theta)
            ok = jnp.all(jnp.isfinite(new)) & (jnp.max(jnp.abs(new)) < 1e100)
            return jnp.where(ok, new, jnp.full_like(theta, jnp.inf))

        def segment(theta, _):
            theta = lax.fori_loop(0, record_every, step, theta)
            return theta, record(theta)

        theta, rest = lax.scan(segment, theta0, None, length=steps // record_every)
        losses, cls, snaps = (jnp.concatenate([f0[None], r], axis=0) for f0, r in zip(record(theta0), rest))
        return {"loss": losses, "class_loss": cls, "snapshots": snaps, "X": X, "Y": Y,
                "diverged": diverged(theta[None])[0] | ~jnp.isfinite(losses[-1]),
                "balance": frame_balancedness(theta, fw, depth, DMAX)}

    return run


# ----------------------------------------------------------------------------------------------
# NumPy reference: analytic HVP of the deep linear network, dense Hessian, Lanczos
# ----------------------------------------------------------------------------------------------

def _np_chain(mats: list[np.ndarray], lo: int, hi: int, eye_dim: int) -> np.ndarray:
    # W_hi ... W_lo (0-based, inclusive); identity of size eye_dim when empty
    out = np.eye(eye_dim)
    for l in range(lo, hi + 1):
        out = mats[l] @ out
    return out


def numpy_hvp(theta: np.ndarray, V: np.ndarray, Sxx: np.ndarray, Syx: np.ndarray, widths) -> np.ndarray:
    r"""Analytic :math:`Hv` of the deep linear net in NumPy; ``V`` may carry leading batch axes ``(..., P)``.

    :math:`\mathcal L=\tfrac12\operatorname{tr}(W\Sigma_{xx}W^\top)-\operatorname{tr}(\Sigma_{yx}^\top W)+c`,
    :math:`\nabla_{W_l}=A_l^\top RB_l^\top` with :math:`R=W\Sigma_{xx}-\Sigma_{yx}`; its directional
    derivative is :math:`\dot A_l^\top RB_l^\top+A_l^\top\dot W\Sigma_{xx}B_l^\top+A_l^\top R\dot B_l^\top`
    with :math:`\dot W=\sum_kA_kV_kB_k` and :math:`\dot A_l,\dot B_l` the sums over the layer replaced.
    """
    w = validate_widths(widths)
    L = len(w) - 1
    theta, V = np.asarray(theta, float), np.asarray(V, float)
    shapes = [(w[l], w[l - 1]) for l in range(1, L + 1)]
    offs = np.cumsum([0] + [a * b for a, b in shapes])
    mats = [theta[offs[l]:offs[l + 1]].reshape(shapes[l]) for l in range(L)]
    dirs = [V[..., offs[l]:offs[l + 1]].reshape(V.shape[:-1] + shapes[l]) for l in range(L)]
    A = [_np_chain(mats, l + 1, L - 1, w[l + 1]) for l in range(L)]   # A[l] = W_L ... W_{l+2} (0-based l)
    B = [_np_chain(mats, 0, l - 1, w[0]) for l in range(L)]           # B[l] = W_l ... W_1
    W = A[0] @ mats[0]
    R = W @ Sxx - Syx
    dW = sum(A[k] @ dirs[k] @ B[k] for k in range(L))
    dR = dW @ Sxx
    out = []
    for l in range(L):
        dA = 0.0
        for k in range(l + 1, L):   # replace W_k in A_l = W_L ... W_{l+1}
            dA = dA + _np_chain(mats, k + 1, L - 1, w[k + 1]) @ dirs[k] @ _np_chain(mats, l + 1, k - 1, w[l + 1])
        dB = 0.0
        for k in range(l):          # replace W_k in B_l = W_{l-1} ... W_1
            dB = dB + _np_chain(mats, k + 1, l - 1, w[k + 1]) @ dirs[k] @ _np_chain(mats, 0, k - 1, w[0])
        term = A[l].T @ dR @ B[l].T
        if l + 1 < L:
            term = term + np.swapaxes(dA, -1, -2) @ R @ B[l].T
        if l > 0:
            term = term + A[l].T @ R @ np.swapaxes(dB, -1, -2)
        out.append(term.reshape(V.shape[:-1] + (-1,)))
    return np.concatenate(out, axis=-1)


def numpy_dense_hessian(theta, Sxx, Syx, widths) -> np.ndarray:
    """Dense Hessian from the analytic HVP applied to every basis vector at once (batched)."""
    P = np.asarray(theta).size
    H = numpy_hvp(theta, np.eye(P), Sxx, Syx, widths)
    return 0.5 * (H + H.T)


def numpy_lanczos(v0: np.ndarray, matvec, num_iter: int) -> np.ndarray:
    """NumPy Lanczos with full reorthogonalization (no restart: reference for well-separated top eigenvalues)."""
    dim = v0.size
    V = np.zeros((num_iter + 1, dim))
    V[0] = v0 / np.linalg.norm(v0)
    alpha, beta = np.zeros(num_iter), np.zeros(num_iter)
    for i in range(num_iter):
        w = matvec(V[i])
        alpha[i] = V[i] @ w
        w = w - V.T @ (V @ w)
        w = w - V.T @ (V @ w)
        beta[i] = np.linalg.norm(w)
        if beta[i] < 1e-13:
            break
        V[i + 1] = w / beta[i]
    m = i + 1
    T = np.diag(alpha[:m]) + np.diag(beta[:m - 1], 1) + np.diag(beta[:m - 1], -1)
    return np.linalg.eigvalsh(T)


# ----------------------------------------------------------------------------------------------
# benchmark: top eigenvalue by HVP-Lanczos and by the dense Hessian, JAX vs NumPy, as P grows
# ----------------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def _bench_problem(widths: tuple[int, ...], seed: int):
    key = jax.random.key(seed)
    k_data, k_gauge, k_min = jax.random.split(key, 3)
    X, Y = whitened_data(k_data, widths[0], widths[-1], 4 * widths[0], rank=min(widths))
    theta = random_gauge(k_gauge, balanced_minimum(k_min, X, Y, widths), widths, 0.3)
    n = X.shape[1]
    return theta, X, Y, np.asarray(X @ X.T / n), np.asarray(Y @ X.T / n)


def bench_cases(scale: str) -> list:
    """Top Hessian eigenvalue of an unbalanced deep linear net at a global minimum, as :math:`P` grows."""
    from sims.bench import BenchCase

    if scale == "small":
        sizes = [(8, 8, 8, 4), (16, 16, 16, 8), (32, 32, 32, 16)]
        dense_max = 2000
    else:
        sizes = [(32, 32, 32, 16), (128, 128, 128, 64), (256, 256, 256, 128)]
        dense_max = 12000
    iters = 40
    cases = []
    for widths in sizes:
        theta, X, Y, Sxx, Syx = _bench_problem(widths, 0)
        P = n_params(widths)
        v0 = np.asarray(jax.random.normal(jax.random.key(1), (P,)))

        lanczos_jax = jax.jit(lambda th, X=X, Y=Y, w=widths, P=P: lanczos(
            jax.random.key(1), lambda v: hvp(th, v, X, Y, w), P, min(iters, P))[-1])

        def np_top(theta=theta, Sxx=Sxx, Syx=Syx, widths=widths, v0=v0, P=P):
            return np.float64(numpy_lanczos(v0, lambda v: numpy_hvp(theta, v, Sxx, Syx, widths), min(iters, P))[-1])

        def close(a, b):
            # both converge to the same isolated top eigenvalue; Lanczos error at 40 steps << 1e-8
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-8)

        cases.append(BenchCase(f"linear_hessian lanczos top eig P={P}", "HVP (Lanczos steps)", float(min(iters, P)),
                               functools.partial(lanczos_jax, theta), np_top, close))
        if P <= dense_max:
            dense_jax = jax.jit(lambda th, X=X, Y=Y, w=widths: jnp.linalg.eigvalsh(dense_hessian(th, X, Y, w))[-1])

            def np_dense(theta=theta, Sxx=Sxx, Syx=Syx, widths=widths):
                return np.float64(np.linalg.eigvalsh(numpy_dense_hessian(theta, Sxx, Syx, widths))[-1])

            cases.append(BenchCase(f"linear_hessian dense top eig P={P}", "Hessian columns", float(P),
                                   functools.partial(dense_jax, theta), np_dense, close))
    return cases
