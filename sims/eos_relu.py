r"""Fully connected ReLU networks in the NTK parameterization and full-batch GD on them at a step given in units of the
initial curvature: the largest trainable step of lewkowycz2020 (:math:`\eta_{\max} = c_{\rm act}/\lambda_0`).

* :func:`relu_net`, :func:`relu_init`, :func:`relu_loss` -- the bias-free network, its :math:`N(0, 1)` weights and
  its MSE loss on one-hot targets (:func:`digits_data`: the digits, centred and scaled);
* :func:`relu_gauss_newton_top` -- the top eigenvalue :math:`\lambda_0` of the Gauss-Newton matrix (Lanczos);
* :func:`relu_gd` -- GD at :math:`\eta = c/\lambda_0` over a grid of (key, c), one compiled program per network
  shape (:func:`sims.sweep.run_grid`). **Divergence is data**: flagged and frozen, never an error.

Float64 (importing :mod:`sims` enables it); typed keys, split per run.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

import sims  # noqa: F401  (float64)
from sims.hvp import lanczos
from sims.sign_floor_regime import bundled_digits
from sims.sweep import run_grid
from theory import validate as V

__all__ = ["RELU_DIVERGENCE_RATIO", "digits_data", "relu_init", "relu_net", "relu_loss", "relu_gauss_newton_top",
           "relu_gd"]


# a run has diverged once its loss exceeds this multiple of its initial loss (or stops being finite). A catapult
# raises the loss by O(width) (at most ~600x in the runs of eos.relu_max_lr, widths <= 256), so 1e8 is far above any
# catapult spike and far below overflow; diverging ReLU runs cross it within a few dozen steps
RELU_DIVERGENCE_RATIO = 1e8
RELU_CHUNK = 5   # runs per compiled ReLU program (a bisection stage of eos.relu_max_lr: five step sizes per network)


def digits_data(n: int) -> tuple[jax.Array, jax.Array]:
    r"""The first ``n`` scikit-learn digits (8x8 images): inputs centred per pixel and scaled to unit mean square, and
    one-hot targets.

    :math:`X_{ij} = (p_{ij} - \bar p_j)/s` with :math:`s^2 = \frac{1}{nd}\sum_{ij}(p_{ij} - \bar p_j)^2`
    (:math:`d = 64`), so :math:`\frac1n\sum_i\|x_i\|^2 = d`; :math:`Y_{ik} = [\mathrm{label}_i = k]`, ten classes.
    """
    pixels, labels = bundled_digits()  # the copy bundled with scikit-learn, read without importing it
    n = V.integer("n", n, low=2, high=pixels.shape[0])
    P = pixels[:n] - pixels[:n].mean(axis=0)
    X = P / np.sqrt(np.mean(P ** 2))
    return jnp.asarray(X), jnp.asarray(np.eye(10)[labels[:n]])


def _relu_widths(widths) -> tuple[int, ...]:
    return V.layer_widths("widths", widths, at_least=3, form="(d, n_1, ..., n_L, k) with at least one hidden layer")


def _relu_size(ws: tuple[int, ...]) -> int:
    return sum(a * b for a, b in zip(ws[:-1], ws[1:]))


def _relu_net(theta: jax.Array, X: jax.Array, widths) -> jax.Array:
    r""":math:`f(X)` of :func:`relu_net` (``theta`` flat, no validation)."""
    mats, start = [], 0
    for a, b in zip(widths[:-1], widths[1:]):
        mats.append(theta[start:start + a * b].reshape(a, b))
        start += a * b
    h = X
    for W in mats[:-1]:
        h = jax.nn.relu(h @ W * np.sqrt(2.0 / W.shape[0]))
    return h @ mats[-1] / np.sqrt(mats[-1].shape[0])


def relu_init(key, widths, *, max_bytes=None) -> jax.Array:
    r"""Flat parameters of :func:`relu_net` in the NTK parameterization: every weight :math:`W^{(l)}_{ij} \sim N(0, 1)`.

    ``max_bytes``: the allocation limit (:func:`theory.validate.byte_limit`) for the parameters.
    """
    V.key("key", key)
    ws = _relu_widths(widths)
    V.check_bytes({"widths": ws}, 3 * 8 * _relu_size(ws), what="the flat parameters (with the layers they are drawn as)",
                  max_bytes=max_bytes)
    return _relu_init(key, ws)


def _relu_init(key, ws):
    keys = jax.random.split(key, len(ws) - 1)
    return jnp.concatenate([jax.random.normal(k, (a * b,)) for k, a, b in zip(keys, ws[:-1], ws[1:])])


def _relu_args(theta, X, widths, Y=None, *, labels: bool = False):
    """Validated (theta, X, Y, widths); ``Y`` is checked only with ``labels`` (None is then an error like any other)."""
    ws = _relu_widths(widths)
    theta = V.traceable("theta", theta, shape=(_relu_size(ws),))
    X = V.traceable("X", X, ndim=2)
    if X.shape[1] != ws[0]:
        raise ValueError(f"widths: the input width {ws[0]} does not match X's {X.shape[1]} columns")
    if labels:
        Y = V.one_per_row("Y", V.traceable("Y", Y, ndim=2), "X", X.shape[0])
        if Y.shape[1] != ws[-1]:
            raise ValueError(f"widths: the output width {ws[-1]} does not match Y's {Y.shape[1]} columns")
    return theta, X, Y, ws


def relu_net(theta: jax.Array, X: jax.Array, widths) -> jax.Array:
    r"""The bias-free fully connected ReLU network in the NTK parameterization, :math:`f(X) \in \mathbb R^{N\times k}`.

    :math:`h_0 = x`, :math:`h_l = \mathrm{relu}\big(\sqrt{2/n_{l-1}}\,W^{(l)\top}h_{l-1}\big)` for the hidden layers
    (the factor 2 keeps :math:`\mathbb E\,h_l^2` constant through ReLU), :math:`f = W^{(L+1)\top}h_L/\sqrt{n_L}`; the
    weights are :math:`N(0,1)` at initialization (:func:`relu_init`), the widths enter only through the prefactors.
    ``widths`` = (d, n_1, ..., n_L, k); ``theta`` flat (row-major layers); ``X`` (N, d).
    """
    theta, X, _, ws = _relu_args(theta, X, widths)
    return _relu_net(theta, X, ws)


def relu_loss(theta: jax.Array, X: jax.Array, Y: jax.Array, widths) -> jax.Array:
    r"""MSE :math:`L(\theta) = \frac1{2N}\sum_{i=1}^N\|f(x_i) - y_i\|^2` of :func:`relu_net`; ``Y`` (N, k)."""
    theta, X, Y, ws = _relu_args(theta, X, widths, Y, labels=True)
    return 0.5 * jnp.sum((_relu_net(theta, X, ws) - Y) ** 2) / X.shape[0]


def _gn_top(theta, X, ws, key, num_iter):
    """Top Lanczos Ritz value of J^T J / N (no validation: the path inside a sweep)."""
    net = lambda th: _relu_net(th, X, ws)  # noqa: E731
    _, pullback = jax.vjp(net, theta)

    def matvec(v):
        return pullback(jax.jvp(net, (theta,), (v,))[1])[0] / X.shape[0]

    return lanczos(key, matvec, theta.shape[0], num_iter, dtype=theta.dtype)[-1]


def relu_gauss_newton_top(theta, X, widths, key, *, num_iter: int = 30) -> jax.Array:
    r"""The top eigenvalue :math:`\lambda` of the Gauss-Newton matrix of :func:`relu_loss`, :math:`G = J^\top J/N`.

    :math:`J = \partial\,\mathrm{vec} f(X)/\partial\theta` (:math:`Nk\times P`); :math:`G` is the Hessian of the loss
    of the network linearized at ``theta``, so :math:`\lambda` is the top eigenvalue of the kernel
    :math:`\Theta = JJ^\top/N` (the NTK over the training set, divided by :math:`N`) and :math:`2/\lambda` is exactly
    the largest stable step of GD on the linearized model. Lanczos (:func:`sims.hvp.lanczos`, full
    reorthogonalization) on :math:`v \mapsto J^\top(Jv)/N`, one JVP and one VJP per step; ``num_iter`` steps (capped at
    :math:`P`), started from a Gaussian vector drawn from ``key``.
    """
    theta, X, _, ws = _relu_args(theta, X, widths)
    V.key("key", key)
    num_iter = V.integer("num_iter", num_iter, low=1)
    return V.finite_output("theta", _gn_top(theta, X, ws, key, min(num_iter, theta.shape[0])),
                           "in the network's Jacobian at theta")


def _relu_run(point, X, Y, *, widths, n_steps: int, lanczos_iter: int):
    r"""GD on :func:`relu_loss` from :func:`relu_init` (``key``) at :math:`\eta = c/\lambda_0`."""
    k_init, k_lanczos = jax.random.split(point["key"])
    theta0 = _relu_init(k_init, widths)
    lam0 = _gn_top(theta0, X, widths, k_lanczos, lanczos_iter)
    eta = point["eta_lambda0"] / lam0
    loss_and_grad = jax.value_and_grad(lambda th: 0.5 * jnp.sum((_relu_net(th, X, widths) - Y) ** 2) / X.shape[0])
    loss0 = loss_and_grad(theta0)[0]

    def step(carry, t):
        theta, div, div_step, peak = carry
        loss, g = loss_and_grad(theta)
        bad = ~div & (~jnp.isfinite(loss) | (loss > RELU_DIVERGENCE_RATIO * loss0))
        div_step = jnp.where(bad, t, div_step)
        div = div | bad
        peak = jnp.where(div, peak, jnp.maximum(peak, loss))
        return (jnp.where(div, theta, theta - eta * g), div, div_step, peak), None

    init = (theta0, jnp.array(False), jnp.array(-1), loss0)
    (theta, div, div_step, peak), _ = lax.scan(step, init, jnp.arange(n_steps))
    final = loss_and_grad(theta)[0]
    return {"eta": eta, "lambda0": lam0, "loss0": loss0, "final_loss": jnp.where(div, jnp.nan, final),
            "max_loss_ratio": jnp.where(div, jnp.inf, peak / loss0), "diverged": div, "diverged_step": div_step}


def relu_gd(keys, eta_lambda0, X, Y, *, widths, n_steps: int, lanczos_iter: int = 30,
            max_bytes=None) -> dict[str, np.ndarray]:
    r"""Full-batch GD on :func:`relu_loss` at a step given in units of the initial curvature, :math:`\eta = c/\lambda_0`.

    One run per pair (``keys[i]``, ``eta_lambda0[i]``) (a single key or value broadcasts). A run's key is split into
    the initialization key (:func:`relu_init`: runs with equal keys start from the same network) and the Lanczos start
    of :math:`\lambda_0` = :func:`relu_gauss_newton_top` at the start (``lanczos_iter`` steps), so
    :math:`\eta\lambda_0 = c` and :math:`c = 2` is the linearized model's edge. Then :math:`\theta^+ = \theta -
    \eta\nabla L(\theta)` for ``n_steps`` steps. **Divergence is data**: a run diverges at the first step whose loss
    is not finite or exceeds ``RELU_DIVERGENCE_RATIO`` times its initial loss, and is frozen there.

    Returns per run: ``eta``, ``lambda0``, ``loss0``, ``final_loss`` (NaN when diverged), ``max_loss_ratio`` (the
    largest loss over the initial one, :math:`\infty` when diverged: the catapult's spike), ``diverged``,
    ``diverged_step`` (-1 if never). ``max_bytes``: the allocation limit (:func:`theory.validate.byte_limit`) for a
    chunk's parameters, Krylov bases and activations.
    """
    ws = _relu_widths(widths)
    Xa = V.array("X", X, ndim=2)
    Ya = V.one_per_row("Y", V.array("Y", Y, ndim=2), "X", Xa.shape[0])
    if Xa.shape[1] != ws[0] or Ya.shape[1] != ws[-1]:
        raise ValueError(f"widths: (input, output) widths ({ws[0]}, {ws[-1]}) do not match X's {Xa.shape[1]} and Y's "
                         f"{Ya.shape[1]} columns")
    V.key("keys", keys)
    ks = jnp.atleast_1d(jnp.asarray(keys))
    if ks.ndim != 1:
        raise ValueError(f"keys: expected a 1-D array of typed keys, got shape {ks.shape}")
    scalar = np.ndim(eta_lambda0) == 0 and not isinstance(eta_lambda0, (str, bytes))
    cs = V.array("eta_lambda0", [eta_lambda0] if scalar else eta_lambda0, ndim=1, low=0.0, low_open=True)
    n_steps = V.integer("n_steps", n_steps, low=1)
    P = _relu_size(ws)
    lanczos_iter = V.integer("lanczos_iter", lanczos_iter, low=1, high=P)
    n = max(ks.shape[0], cs.size)
    for name, size in (("keys", ks.shape[0]), ("eta_lambda0", cs.size)):
        if size not in (1, n):
            raise ValueError(f"{name}: expected 1 or {n} values (one per run), got {size}")
    # per run of a chunk: the Krylov basis, ~8 parameter-sized vectors and every layer's activations (forward and
    # backward) over the data
    V.check_bytes({"widths": ws, "lanczos_iter": lanczos_iter, "X": Xa.shape},
                  8 * RELU_CHUNK * ((lanczos_iter + 9) * P + 4 * Xa.shape[0] * sum(ws)),
                  what="a chunk's parameters, Krylov bases and activations", max_bytes=max_bytes)
    grid = {"eta_lambda0": np.broadcast_to(cs, (n,)).copy(),
            "key": jnp.broadcast_to(ks, (n,)) if ks.shape[0] == 1 else ks}
    return run_grid(_relu_run, grid, jnp.asarray(Xa), jnp.asarray(Ya),
                    static={"widths": ws, "n_steps": n_steps, "lanczos_iter": lanczos_iter},
                    chunk_size=RELU_CHUNK, pad_to_chunk=True)
