r"""Simulators for the noise-regime diagnostic on a real task and for the local form of the sign floor.

**Digits.** Multinomial logistic regression on scikit-learn's bundled 8x8 digits (no download; every
4th of the 1797 images, 450 in all), pooled 2x2 to 4x4 = 16 features, each standardized, plus a
constant feature: parameters
:math:`\Theta \in \mathbb R^{17 \times 10}` (flattened to 170), loss

.. math:: f(\Theta) = \frac1n\sum_i \big[\mathrm{logsumexp}(z_i) - z_{i, y_i}\big] + \frac\lambda2\|\Theta\|^2,
          \qquad z_i = x_i^\top\Theta,

strongly convex for :math:`\lambda > 0`, with minimizer :math:`\Theta^*` found by Newton's method
(:func:`digits_problem`). Three gradient oracles (:data:`ORACLES`): ``"minibatch"`` -- the mean
gradient of :math:`B` samples drawn with replacement (per-sample gradient
:math:`x_i \otimes (\mathrm{softmax}(z_i) - e_{y_i}) + \lambda\Theta`); ``"multiplicative"`` -- the
full gradient with injected noise :math:`\nabla f \odot (1 + \sigma\xi)`, :math:`\xi \sim N(0, I)`
(purely multiplicative by construction); ``"gaussian"`` -- the full gradient plus Gaussian noise
with the minibatch covariance at the minimizer, :math:`S(\Theta^*)/B` (purely additive, and
Gaussian). :func:`noise_variance` estimates :math:`E\|g - \nabla f\|^2` by Monte Carlo at given
points (the input of :func:`theory.sign_floor_regime.affine_variance_fit`); :func:`mean_sign` estimates
:math:`E\,\mathrm{sign}(g)` per coordinate (0 at the minimizer only for a noise law symmetric about
its mean); :func:`gd_checkpoints`
gives the points along a gradient-descent trajectory; :func:`digits_floors` runs SGD and signSGD
from :math:`\Theta^*` at constant steps and records :math:`f - f^*` and :math:`\|\nabla f\|^2`.

**Wells.** :func:`well_chains` runs 1-D signSGD on the wells of :mod:`theory.sign_floor_regime`
with multiplicative Gaussian noise :math:`g = f'(x)(1 + \sigma\xi)`, computing the noisy gradient
and its sign in floating point (not the Bernoulli shortcut), from :math:`x_0 = x^* + \eta/2`.

**Divergence is data.** A run whose state becomes non-finite or exceeds :data:`BOUND` is flagged
``diverged``; ``diverged_step`` is the first recorded step at which it was bad (``-1`` if never).
Averages in the claims are over finite runs, with the count of diverged runs beside them.
Every per-run kernel is a module-level function mapped with :func:`sims.sweep.run_grid`; no
Python loop touches a step. Importing :mod:`sims` enables float64.
"""
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

import sims  # noqa: F401  (float64)
from sims.sweep import run_grid
from theory import validate as V
from theory import sign_floor_regime as R

__all__ = ["ORACLES", "METHODS", "BOUND", "BLOCK", "bundled_digits", "digits_problem", "gd_checkpoints", "noise_variance",
           "mean_sign", "digits_floors", "well_chains"]

ORACLES = ("minibatch", "multiplicative", "gaussian")
METHODS = ("sgd", "sign")
BOUND = 1e150
BLOCK = 256  # steps per noise block of the well chains (one key split per block)
CLASSES = 10
STARTS = ("minimizer", "origin")
STRIDE = 4  # every 4th image: 450 images keep a full-batch gradient cheap enough for the quick budget


# ----------------------------------------------------------------------------- the digits problem
@functools.lru_cache(maxsize=1)
def _design() -> tuple[np.ndarray, np.ndarray, float]:
    r"""Features :math:`X` (pooled, standardized, and a constant), one-hot labels :math:`Y`, and the curvature bound
    :math:`\tfrac12\lambda_{\max}(X^\top X/n)` (the softmax covariance :math:`\mathrm{diag}\,p - pp^\top` has norm at most 1/2)."""
    data, target = bundled_digits()
    x = data[::STRIDE].reshape(-1, 4, 2, 4, 2).mean(axis=(2, 4)).reshape(-1, 16)
    x = (x - x.mean(0)) / x.std(0)  # no pooled 2x2 block is constant over these images
    X = np.concatenate([x, np.ones((len(x), 1))], axis=1)
    return X, np.eye(CLASSES)[target[::STRIDE]], float(np.linalg.eigvalsh(X.T @ X / len(X)).max() / 2)


@functools.lru_cache(maxsize=4)
def _problem(lam: float) -> dict:
    X, Y, _ = _design()
    n, d = X.shape
    theta = np.zeros(d * CLASSES)
    for _ in range(40):  # Newton's method: quadratic convergence on this strongly convex loss
        p, g = _probs_and_grad(theta, X, Y, lam)
        if np.max(np.abs(g)) < 1e-15:
            break
        theta = theta - np.linalg.solve(_hessian(p, X, lam), g)
    p, g = _probs_and_grad(theta, X, Y, lam)
    hessian = _hessian(p, X, lam)
    h, vecs = np.linalg.eigh(hessian)
    per = (X[:, :, None] * (p - Y)[:, None, :]).reshape(n, -1) + lam * theta  # per-sample gradients at Θ*
    S = np.cov(per.T, bias=True)  # per-sample gradient covariance (the population of with-replacement draws)
    chol = np.linalg.cholesky(S + 1e-14 * np.trace(S) / len(S) * np.eye(len(S)))
    z = X @ theta.reshape(d, CLASSES)
    zmax = z.max(axis=1)
    f_star = float(np.mean(zmax + np.log(np.exp(z - zmax[:, None]).sum(1)) - np.sum(Y * z, 1)) + lam / 2 * theta @ theta)
    return {"X": X, "Y": Y, "theta_star": theta, "f_star": f_star, "grad_star": g, "per_sample": per, "hessian": hessian, "h": h,
            "s_diag": np.maximum(np.einsum("ij,jk,ki->i", vecs.T, S, vecs), 0.0), "S": S, "chol": chol, "lam": lam}


def bundled_digits() -> tuple[np.ndarray, np.ndarray]:
    """The 1797 digit images (64 pixels, 0..16) and labels, read from the copy bundled with scikit-learn.

    The bundled CSV is read directly (what ``sklearn.datasets.load_digits`` reads), which spares the
    seconds of importing scikit-learn; ``load_digits`` is the fallback where the file is not found.
    """
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec("sklearn")
    path = Path(spec.origin).parent / "datasets" / "data" / "digits.csv.gz" if spec and spec.origin else None
    if path is not None and path.exists():
        raw = np.loadtxt(path, delimiter=",")
        return raw[:, :-1], raw[:, -1].astype(np.int64)
    from sklearn.datasets import load_digits

    d = load_digits()
    return np.asarray(d.data, np.float64), np.asarray(d.target, np.int64)


def _probs_and_grad(theta, X, Y, lam):
    """Softmax probabilities and the gradient (NumPy, for Newton's method)."""
    z = X @ theta.reshape(X.shape[1], CLASSES)
    e = np.exp(z - z.max(axis=1, keepdims=True))
    p = e / e.sum(axis=1, keepdims=True)
    return p, (X.T @ (p - Y)).reshape(-1) / len(X) + lam * theta


def _hessian(p, X, lam):
    r""":math:`\frac1n\sum_i (x_i x_i^\top) \otimes (\mathrm{diag}\,p_i - p_i p_i^\top) + \lambda I` (row-major flattening)."""
    n, d = X.shape
    A = (X[:, :, None] * X[:, None, :]).reshape(n, d * d)
    C = (p[:, :, None] * np.eye(CLASSES) - p[:, :, None] * p[:, None, :]).reshape(n, CLASSES * CLASSES)
    H = (A.T @ C).reshape(d, d, CLASSES, CLASSES).transpose(0, 2, 1, 3).reshape(d * CLASSES, d * CLASSES) / n
    return H + lam * np.eye(d * CLASSES)


def digits_problem(lam: float = 0.1) -> dict:
    r"""The digits logistic-regression problem at L2 weight ``lam`` (:math:`> 0`), solved once and cached.

    Returns ``X`` (:math:`n \times 17`, standardized pooled pixels and a constant), ``Y`` (one-hot),
    ``theta_star`` (Newton's minimizer), ``f_star``, ``grad_star`` (the gradient there, ~1e-16), ``per_sample`` (the :math:`n` per-sample gradients
    there, rows), ``hessian`` and ``h`` (its eigenvalues
    at the minimizer), ``s_diag`` (the per-sample gradient covariance :math:`S` in that eigenbasis,
    diagonal), ``S`` and ``chol`` (its Cholesky factor, for the ``"gaussian"`` oracle), ``lam``.
    Arrays are copies: changing them does not change the cache.
    """
    lam = V.real("lam", lam, low=0.0, low_open=True)
    return {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in _problem(lam).items()}


def _loss(theta, X, Y, lam):
    z = X @ theta.reshape(X.shape[1], CLASSES)
    return jnp.mean(jax.nn.logsumexp(z, axis=1) - jnp.sum(Y * z, axis=1)) + lam / 2 * jnp.sum(theta * theta)


def _grad(theta, X, Y, lam):
    r"""Closed-form gradient :math:`X^\top(\mathrm{softmax}(X\Theta) - Y)/n + \lambda\Theta` (flattened)."""
    z = X @ theta.reshape(X.shape[1], CLASSES)
    return (X.T @ (jax.nn.softmax(z, axis=1) - Y)).reshape(-1) / X.shape[0] + lam * theta


def _oracle(full_batch: bool, key, theta, X, Y, chol, batch: int, noise, lam: float):
    r"""One stochastic gradient at ``theta``. ``full_batch`` (static) ``False``: a minibatch of ``batch`` samples
    drawn with replacement; ``True``: :math:`\nabla f \odot (1 + \sigma_m\xi_1) + \sigma_a L\xi_2/\sqrt B`
    with ``noise`` :math:`= (\sigma_m, \sigma_a)` (data) and :math:`L` = ``chol``, one of the two levels zero
    (:func:`_one_draw`)."""
    if not full_batch:
        idx = jax.random.randint(key, (batch,), 0, X.shape[0])
        return _grad(theta, X[idx], Y[idx], lam)
    return _one_draw(key, _full_grad(theta, X, Y, jnp.asarray(lam, theta.dtype)), chol, batch, noise)


@jax.custom_batching.custom_vmap
def _full_grad(theta, X, Y, lam):
    r"""The full-batch gradient :func:`_grad`; under ``vmap`` over ``theta`` alone, every run's :math:`\Theta` side by side
    in one matrix :math:`[\Theta_1 \cdots \Theta_R]` (:math:`17 \times 10R`), so the chunk's gradient is two plain
    matrix products with :math:`X` (:func:`_folded_grad`). The vmapped :func:`_grad` computes the same sums, but XLA
    moved every run's :math:`450 \times 10` logits between layouts around the softmax at every step: a floor step of a
    144-run chunk cost ~60 CPU-µs per run that way and ~43 folded (2 busy cores; the results are bit-identical)."""
    return _grad(theta, X, Y, lam)


@_full_grad.def_vmap
def _full_grad_vmap(axis_size, in_batched, theta, X, Y, lam):
    """The batching rule of :func:`_full_grad`: folded when only ``theta`` is mapped (the floors' chunks), the plain
    vmapped gradient otherwise."""
    if list(in_batched) == [True, False, False, False]:
        return _folded_grad(theta, X, Y, lam), True
    axes = tuple(0 if b else None for b in in_batched)
    return jax.vmap(_grad, in_axes=axes)(theta, X, Y, lam), True


def _folded_grad(thetas, X, Y, lam):
    r""":math:`X^\top(\mathrm{softmax}(X\Theta_r) - Y)/n + \lambda\Theta_r` for every row of ``thetas`` :math:`(R, 170)`,
    the runs folded into the columns of one :math:`17 \times 10R` matrix (the same sums as :func:`_grad`, run by run)."""
    R, (n, d) = thetas.shape[0], X.shape
    wide = thetas.reshape(R, d, CLASSES).transpose(1, 0, 2).reshape(d, R * CLASSES)
    z = (X @ wide).reshape(n, R, CLASSES)
    resid = (jax.nn.softmax(z, axis=-1) - Y[:, None, :]).reshape(n, R * CLASSES)
    g = (X.T @ resid).reshape(d, R, CLASSES).transpose(1, 0, 2).reshape(R, d * CLASSES)
    return g / n + lam * thetas


def _one_draw(key, full, chol, batch, noise):
    r""":func:`_noisy_full` when one of the two levels ``noise`` :math:`= (\sigma_m, \sigma_a)` is zero (the named oracles):
    only the noise vector that level multiplies is drawn, from the same key as there (:math:`\xi_1` from the first half
    of the split, :math:`\xi_2` from the second), so the gradient is the same number without the other draw. The key is
    selected as data, so both oracles share one program."""
    k1, k2 = jax.random.split(key)
    additive = noise[1] != 0
    k = jax.random.wrap_key_data(jnp.where(additive, jax.random.key_data(k2), jax.random.key_data(k1)),
                                 impl=jax.random.key_impl(key))
    xi = jax.random.normal(k, full.shape)
    return full * (1.0 + noise[0] * xi) + noise[1] * (chol @ xi) / jnp.sqrt(batch)


def _noisy_full(key, full, chol, batch, noise):
    k1, k2 = jax.random.split(key)
    xi1 = jax.random.normal(k1, full.shape)
    xi2 = jax.random.normal(k2, full.shape)
    return full * (1.0 + noise[0] * xi1) + noise[1] * (chol @ xi2) / jnp.sqrt(batch)


def _noise_levels(oracle: str, sigma: float) -> tuple[bool, np.ndarray]:
    """(full_batch, (sigma_m, sigma_a)) of a named oracle: multiplicative sigma, or the Gaussian minibatch surrogate."""
    if oracle == "minibatch":
        return False, np.zeros(2)
    return True, np.array([sigma, 0.0]) if oracle == "multiplicative" else np.array([0.0, 1.0])


# ----------------------------------------------------------------------------- trajectory and diagnostic
@functools.partial(jax.jit, static_argnames=("n_steps",))
def _gd_path(X, Y, eta, lam, n_steps):
    def step(theta, _):
        new = theta - eta * _grad(theta, X, Y, lam)
        return new, new

    theta0 = jnp.zeros(X.shape[1] * CLASSES)
    _, path = lax.scan(step, theta0, None, length=n_steps)
    return jnp.concatenate([theta0[None], path])


def gd_checkpoints(steps, eta: float = 1.0, lam: float = 0.1) -> np.ndarray:
    r"""Full-batch gradient descent from :math:`\Theta_0 = 0` on the digits loss: the iterates at ``steps``.

    ``steps``: a 1-D array of non-negative integer step indices (at most 100000). ``eta`` must be
    below :math:`2/L` with :math:`L = \lambda + \tfrac12\lambda_{\max}(X^\top X/n) \ge h_{\max}` (a sufficient
    condition for a monotone descent; larger steps are refused). Returns ``(len(steps), 170)``.
    """
    raw = np.asarray(steps) if not isinstance(steps, (str, bytes)) and steps is not None else steps
    if not isinstance(raw, np.ndarray) or raw.dtype.kind not in "iu":
        raise TypeError(f"steps: expected integer step indices, got {type(steps).__name__} {steps!r}")
    steps = V.array("steps", raw, ndim=1, low=0.0, high=100_000).astype(np.int64)
    eta = V.real("eta", eta, low=0.0, low_open=True)
    lam = V.real("lam", lam, low=0.0, low_open=True)
    bound = lam + _design()[2]
    if not eta * bound < 2:
        raise ValueError(f"eta: expected eta < 2/L = {2 / bound:.4g} (L = lam + lambda_max(X^T X/n)/2 bounds the "
                         f"curvature), got {eta}")
    P = _problem(lam)
    path = _gd_path(jnp.asarray(P["X"]), jnp.asarray(P["Y"]), eta, P["lam"], int(steps.max()))
    return np.asarray(path)[steps]


def _mixed_draws(key, theta, full, X, Y, chol, mix, noise, lam, batch, n_draws):
    """``n_draws`` stochastic gradients at ``theta`` (``full`` its exact gradient): ``mix`` 1.0 draws minibatches of
    ``batch`` samples, 0.0 the full-batch oracle with ``noise``; as data, so every oracle shares one program."""
    def draw(k):
        k1, k2 = jax.random.split(k)
        idx = jax.random.randint(k1, (batch,), 0, X.shape[0])
        return mix * _grad(theta, X[idx], Y[idx], lam) + (1 - mix) * _noisy_full(k2, full, chol, batch, noise)

    return jax.vmap(draw)(jax.random.split(key, n_draws))


def _draws_bytes(points: int, n_draws: int, batch: int, P: dict, max_bytes) -> None:
    """Refuse Monte Carlo draws beyond the allocation limit: each draw holds a minibatch of ``batch`` rows (with its
    probabilities) and a few gradient-sized vectors, for ``n_draws`` draws at each of ``points`` points at once."""
    n, d = P["X"].shape
    per_draw = 2 * batch * (d + CLASSES) + 4 * d * CLASSES
    V.check_bytes({"n_draws": n_draws, "batch": batch, "points": points}, 8 * points * n_draws * per_draw,
                  what="the vmapped draws", max_bytes=max_bytes)


def _oracle_args(key, oracle, batch, sigma, lam, n_draws) -> tuple:
    """Validated (batch, lam, n_draws, problem, mix, noise) for the Monte Carlo estimators of a named oracle."""
    V.key("key", key)
    V.choice("oracle", oracle, ORACLES)
    batch = V.integer("batch", batch, low=1)
    sigma = V.real("sigma", sigma, low=0.0)
    lam = V.real("lam", lam, low=0.0, low_open=True)
    n_draws = V.integer("n_draws", n_draws, low=2)
    full_batch, noise = _noise_levels(oracle, sigma)
    return batch, lam, n_draws, _problem(lam), 0.0 if full_batch else 1.0, jnp.asarray(noise)


@functools.partial(jax.jit, static_argnames=("batch", "n_draws"))
def _variance(keys, thetas, X, Y, chol, mix, noise, lam, batch, n_draws):
    """Per point: exact ||grad f||^2 and the mean and SE of ||g - grad f||^2 over draws. The full gradient is computed
    once per point, so a minibatch draw and a full-batch draw cost about the same."""
    def one(key, theta):
        full = _grad(theta, X, Y, lam)
        draws = _mixed_draws(key, theta, full, X, Y, chol, mix, noise, lam, batch, n_draws)
        sq = jnp.sum((draws - full) ** 2, axis=1)
        return jnp.sum(full * full), jnp.mean(sq), jnp.std(sq, ddof=1) / jnp.sqrt(n_draws)

    return jax.vmap(one)(keys, thetas)


def noise_variance(key, thetas, *, oracle: str = "minibatch", batch: int = 8, sigma: float = 1.0,
                   n_draws: int = 256, lam: float = 0.1, max_bytes=None) -> dict:
    r"""Monte Carlo :math:`E\|g - \nabla f\|^2` of ``oracle`` at each row of ``thetas`` (``(J, 170)``).

    ``n_draws`` (:math:`\ge 2`) independent gradients per point (keys split from ``key``, one per
    point). Returns ``grad_sq`` (:math:`\|\nabla f\|^2`, exact), ``variance`` (the sample mean of
    :math:`\|g - \nabla f\|^2`) and ``variance_se`` (its standard error, sample SD over
    :math:`\sqrt{M}`), each of length :math:`J`. ``max_bytes``: the allocation limit
    (:func:`theory.validate.byte_limit`) for the ``J x n_draws`` draws, taken at once.
    """
    batch, lam, n_draws, P, mix, noise = _oracle_args(key, oracle, batch, sigma, lam, n_draws)
    thetas = V.array("thetas", thetas, ndim=2, shape=(None, P["X"].shape[1] * CLASSES))
    _draws_bytes(len(thetas), n_draws, batch, P, max_bytes)
    keys = jax.random.split(key, len(thetas))
    G, v, se = _variance(keys, jnp.asarray(thetas), jnp.asarray(P["X"]), jnp.asarray(P["Y"]), jnp.asarray(P["chol"]),
                         mix, noise, lam, batch, n_draws)
    return {"grad_sq": np.asarray(G), "variance": np.asarray(v), "variance_se": np.asarray(se)}


@functools.partial(jax.jit, static_argnames=("batch", "n_draws"))
def _mean_sign(key, theta, X, Y, chol, mix, noise, lam, batch, n_draws):
    full = _grad(theta, X, Y, lam)
    signs = jnp.sign(_mixed_draws(key, theta, full, X, Y, chol, mix, noise, lam, batch, n_draws))
    m = jnp.mean(signs, axis=0)
    return m, jnp.std(signs, axis=0, ddof=1) / jnp.sqrt(n_draws)


def mean_sign(key, theta=None, *, oracle: str = "minibatch", batch: int = 1, sigma: float = 1.0, n_draws: int = 4096,
              lam: float = 0.1, max_bytes=None) -> dict:
    r"""Monte Carlo :math:`E\,\mathrm{sign}(g)` per coordinate of ``oracle``'s gradient at ``theta`` (default :math:`\Theta^*`).

    At the minimizer :math:`E g = 0`; the mean sign is 0 there for a noise law symmetric about its mean
    and not otherwise (it is :math:`1 - 2P(g_j < 0)`, the offset of the median). Returns ``mean`` and
    ``se`` (the sample SD of the signs over :math:`\sqrt M`, ``n_draws`` :math:`= M \ge 2`), length 170.
    ``max_bytes``: the allocation limit (:func:`theory.validate.byte_limit`) for the draws, taken at once.
    """
    batch, lam, n_draws, P, mix, noise = _oracle_args(key, oracle, batch, sigma, lam, n_draws)
    _draws_bytes(1, n_draws, batch, P, max_bytes)
    theta = P["theta_star"] if theta is None else V.array("theta", theta, shape=(P["X"].shape[1] * CLASSES,))
    m, se = _mean_sign(key, jnp.asarray(theta), jnp.asarray(P["X"]), jnp.asarray(P["Y"]), jnp.asarray(P["chol"]),
                       mix, noise, lam, batch, n_draws)
    return {"mean": np.asarray(m), "se": np.asarray(se)}


# ----------------------------------------------------------------------------- floors on digits
def _floor_run(point, X, Y, chol, f_star, *, full_batch, T, n_rec, burn, batch, lam, impl="threefry2x32"):
    r"""One SGD/signSGD run of ``T`` steps from ``point["theta0"]`` (pure; mapped by :func:`digits_floors`).

    ``point``: ``key_data``, ``key_index`` (the run's key is ``fold_in(wrap_key_data(key_data), key_index)``),
    ``eta``, ``sign`` (1.0: signSGD, 0.0: SGD; both updates are cheap, so the method is data), ``noise``
    (:math:`(\sigma_m, \sigma_a)` of the full-batch oracle; ignored for minibatches), ``theta0`` (the start).
    Records :math:`f - f^*` and :math:`\|\nabla f\|^2` every ``T // n_rec`` steps.
    """
    key = jax.random.fold_in(jax.random.wrap_key_data(point["key_data"], impl=impl), point["key_index"])
    every = T // n_rec
    eta, use_sign, theta0 = point["eta"], point["sign"], point["theta0"]

    def step(carry, _):
        theta, key = carry
        key, sub = jax.random.split(key)
        g = _oracle(full_batch, sub, theta, X, Y, chol, batch, point["noise"], lam)
        direction = jnp.where(use_sign > 0, jnp.sign(g), g)
        return (theta - eta * direction, key), None

    def record(carry, j):
        carry, _ = lax.scan(step, carry, None, length=every)
        theta = carry[0]
        bad = ~jnp.all(jnp.isfinite(theta)) | (jnp.max(jnp.abs(theta)) > BOUND)
        safe = jnp.where(bad, theta0, theta)  # a bad state is flagged; its loss is not evaluated
        g = _grad(safe, X, Y, lam)
        return carry, (jnp.where(bad, jnp.inf, _loss(safe, X, Y, lam) - f_star), jnp.sum(g * g), bad)

    _, (excess, grad_sq, bad) = lax.scan(record, (theta0, key), jnp.arange(n_rec))
    steps = (jnp.arange(n_rec) + 1) * every
    keep = steps > burn
    first = jnp.argmax(bad)
    return {"mean_excess": jnp.sum(jnp.where(keep, excess, 0.0)) / jnp.sum(keep),
            "mean_grad_sq": jnp.sum(jnp.where(keep, grad_sq, 0.0)) / jnp.sum(keep),
            "final_excess": excess[-1], "curve": excess, "diverged": jnp.any(bad),
            "diverged_step": jnp.where(jnp.any(bad), steps[first], -1)}


def _per_config(name: str, value, options: tuple, G: int) -> list:
    """A choice, or one choice per configuration, as a list of length ``G``."""
    values = [value] * G if isinstance(value, str) else value
    if not isinstance(values, (list, tuple)) or len(values) != G:
        raise ValueError(f"{name}: expected one of {options} or one of them per step size ({G}), got {value!r}")
    for v in values:
        V.choice(name, v, options)
    return list(values)


def digits_floors(key, eta, method, *, oracle="minibatch", batch: int = 8, sigma: float = 1.0, T: int,
                  n_rec: int, burn: int, n_chains: int = 1, start: str = "minimizer", lam: float = 0.1,
                  chunk_size: int = 256, max_bytes=None) -> dict:
    r"""SGD / signSGD at constant steps on the digits loss, gradients from ``oracle``.

    ``eta``: 1-D step sizes (one configuration each, :math:`> 0`); ``method`` (``"sgd"`` or ``"sign"``)
    and ``oracle`` (:data:`ORACLES`; ``sigma`` is the multiplicative level): one for all or one per
    configuration. ``T`` steps, :math:`f - f^*` and :math:`\|\nabla f\|^2` recorded ``n_rec`` times
    (``n_rec`` divides ``T``); averages over the records after step ``burn`` (at least one record
    must follow it). ``start`` (one for all or one per configuration): ``"minimizer"`` (:math:`\Theta^*`,
    to measure a floor) or ``"origin"`` (:math:`\Theta = 0`, to watch a contraction). Chain :math:`j`
    uses ``fold_in(key, j)`` in every configuration (common random numbers: a configuration's runs do
    not depend on which others run beside it; independent sets of runs need independent keys). Minibatch and full-batch configurations run as two sweeps (a full-batch step computes the
    whole gradient; a minibatch step never does). Returns, with leading shape ``(G, n_chains)``:
    ``mean_excess``, ``mean_grad_sq``, ``final_excess``, ``curve`` (``(..., n_rec)``), ``diverged``,
    ``diverged_step``. ``max_bytes``: the allocation limit (:func:`theory.validate.byte_limit`) for every chain's
    start, records and a chunk's minibatches.
    """
    V.key("key", key)
    batch = V.integer("batch", batch, low=1)
    sigma = V.real("sigma", sigma, low=0.0)
    lam = V.real("lam", lam, low=0.0, low_open=True)
    eta = V.array("eta", eta, ndim=1, low=0.0, low_open=True)
    G = len(eta)
    methods = _per_config("method", method, METHODS, G)
    oracles = _per_config("oracle", oracle, ORACLES, G)
    T = V.integer("T", T, low=1)
    n_rec = V.integer("n_rec", n_rec, low=1, high=T)
    if T % n_rec:
        raise ValueError(f"n_rec: expected a divisor of T = {T}, got {n_rec}")
    burn = V.integer("burn", burn, low=0, high=T - T // n_rec)
    n_chains = V.integer("n_chains", n_chains, low=1)
    starts = _per_config("start", start, STARTS, G)
    chunk_size = V.integer("chunk_size", chunk_size, low=1)
    P = _problem(lam)
    n_x, d_x = P["X"].shape
    runs = G * n_chains
    V.check_bytes({"n_chains": n_chains, "n_rec": n_rec, "configurations": G, "batch": batch, "chunk_size": chunk_size},
                  2 * 8 * runs * (2 * n_rec + d_x * CLASSES + 8) + 4 * 8 * min(chunk_size, runs) * batch * (d_x + CLASSES),
                  what="every chain's start and records, and a chunk's minibatches", max_bytes=max_bytes)
    theta0 = {"minimizer": P["theta_star"], "origin": np.zeros_like(P["theta_star"])}
    data = np.asarray(jax.random.key_data(key))
    levels = [_noise_levels(o, sigma) for o in oracles]
    out: dict[str, np.ndarray] = {}
    for full_batch in (False, True):
        idx = np.array([g for g in range(G) if levels[g][0] == full_batch], np.int64)
        if not len(idx):
            continue
        runs = (idx[:, None] * n_chains + np.arange(n_chains)).reshape(-1)
        grid = {"key_data": np.broadcast_to(data, (len(runs),) + data.shape), "key_index": runs % n_chains,
                "eta": np.repeat(eta[idx], n_chains),
                "sign": np.repeat(np.array([methods[g] == "sign" for g in idx], np.float64), n_chains),
                "noise": np.repeat(np.stack([levels[g][1] for g in idx]), n_chains, axis=0),
                "theta0": np.repeat(np.stack([theta0[starts[g]] for g in idx]), n_chains, axis=0)}
        static = dict(full_batch=full_batch, T=T, n_rec=n_rec, burn=burn, batch=batch, lam=lam,
                      impl=str(jax.random.key_impl(key)))
        res = run_grid(_floor_run, grid, P["X"], P["Y"], P["chol"], np.float64(P["f_star"]),
                       static=static, chunk_size=chunk_size, desc="sign_floor_regime digits")
        for k, v in res.items():
            v = np.asarray(v).reshape((len(idx), n_chains) + np.shape(v)[1:])
            if k not in out:
                out[k] = np.empty((G, n_chains) + v.shape[2:], v.dtype)
            out[k][idx] = v
    return out


# ----------------------------------------------------------------------------- wells
def _well_value_and_grad(index, x):
    """:math:`f(x) - f^*` and :math:`f'(x)` of the well ``WELLS[index]`` (JAX; the functions of
    :func:`theory.sign_floor_regime.well`). All three are evaluated and one is selected, so the well is data."""
    ax = jnp.abs(x)
    values = jnp.stack([x * x / 2 + x**4 / 4, 2 * (jnp.expm1(x) - x),
                        2 * x * x - 3 * (ax + jnp.log1p(jnp.exp(-2 * ax)) - jnp.log(2.0))])
    grads = jnp.stack([x + x**3, 2 * jnp.expm1(x), 4 * x - 3 * jnp.tanh(x)])
    return values[index], grads[index]


def _well_run(point, burn, *, T, impl="threefry2x32", block=BLOCK):
    r"""One signSGD chain on a well (pure; mapped by :func:`well_chains`): Cesàro mean of :math:`f - f^*` over
    steps :math:`b < k \le T`. ``point``: ``key_data``, ``key_index``, ``well`` (index into ``WELLS``), ``eta``,
    ``sigma``, ``x0``."""
    key = jax.random.fold_in(jax.random.wrap_key_data(point["key_data"], impl=impl), point["key_index"])
    eta, sigma = point["eta"], point["sigma"]
    B = min(block, T)
    n_blocks = -(-T // B)

    def step(carry, inp):
        x, acc, bad_step = carry
        k, xi = inp
        _, df = _well_value_and_grad(point["well"], x)
        new = x - eta * jnp.sign(df * (1.0 + sigma * xi))
        live = k < T
        new = jnp.where(live, new, x)
        fx, _ = _well_value_and_grad(point["well"], new)
        acc = acc + jnp.where(live & (k + 1 > burn), fx, 0.0)
        bad = ~jnp.isfinite(new) | (jnp.abs(new) > BOUND)
        bad_step = jnp.where((bad_step < 0) & bad & live, k + 1, bad_step)
        return (new, acc, bad_step), None

    def block(carry, j):
        state, key = carry
        key, sub = jax.random.split(key)
        xi = jax.random.normal(sub, (B,))
        state, _ = lax.scan(step, state, (j * B + jnp.arange(B), xi))
        return (state, key), None

    init = (jnp.asarray(point["x0"], jnp.float64), jnp.zeros(()), jnp.asarray(-1, jnp.int64))
    ((x, acc, bad_step), _), _ = lax.scan(block, (init, key), jnp.arange(n_blocks))
    return {"mean_f": acc / (T - burn), "x": x, "diverged": bad_step >= 0, "diverged_step": bad_step}


def well_chains(key, name, eta, sigma, *, T: int, burn: int, n_chains: int = 1, chunk_size: int = 1024,
                max_bytes=None) -> dict:
    r"""1-D signSGD chains on the well ``name`` (one for all, or one per configuration) with noise :math:`g = f'(x)(1 + \sigma\xi)`, :math:`\xi \sim N(0, 1)`.

    ``eta`` (:math:`> 0`) and ``sigma`` (:math:`\ge 0`): scalars or 1-D arrays of a common length
    :math:`G` (one configuration each). Every chain starts at :math:`x_0 = x^* + \eta/2` (the lattice
    offset :math:`\eta/2`, so 0 is never on it). Returns, with leading shape ``(G, n_chains)``:
    ``mean_f`` (Cesàro mean of :math:`f - f^*` over steps ``burn`` :math:`< k \le T`), ``x`` (the
    last state), ``diverged`` and ``diverged_step``. Chain :math:`j` uses ``fold_in(key, j)`` in every
    configuration (common random numbers, as in :func:`digits_floors`). ``max_bytes``: the allocation limit
    (:func:`theory.validate.byte_limit`) for every chain's grid entries and outputs.
    """
    V.key("key", key)
    eta = V.array("eta", eta, ndim=(0, 1), low=0.0, low_open=True).reshape(-1)
    sigma = V.array("sigma", sigma, ndim=(0, 1), low=0.0).reshape(-1)
    G = max(len(eta), len(sigma), 1 if isinstance(name, str) else len(name) if isinstance(name, (list, tuple)) else 1)
    names = _per_config("name", name, R.WELLS, G)
    for nm, v in (("eta", eta), ("sigma", sigma)):
        if len(v) not in (1, G):
            raise ValueError(f"{nm}: expected a scalar or length {G} (one value per configuration), got length {len(v)}")
    eta, sigma = np.broadcast_to(eta, (G,)), np.broadcast_to(sigma, (G,))
    T = V.integer("T", T, low=1)
    burn = V.integer("burn", burn, low=0, high=T - 1)
    n_chains = V.integer("n_chains", n_chains, low=1)
    chunk_size = V.integer("chunk_size", chunk_size, low=1)
    V.check_bytes({"n_chains": n_chains, "configurations": G}, 2 * 8 * 12 * G * n_chains,
                  what="every chain's grid entries and outputs", max_bytes=max_bytes)
    data = np.asarray(jax.random.key_data(key))
    grid = {"key_data": np.broadcast_to(data, (G * n_chains,) + data.shape),
            "key_index": np.tile(np.arange(n_chains, dtype=np.int64), G), "eta": np.repeat(eta, n_chains),
            "sigma": np.repeat(sigma, n_chains), "x0": np.repeat(eta / 2, n_chains),
            "well": np.repeat(np.array([R.WELLS.index(n) for n in names], np.int64), n_chains)}
    out = run_grid(_well_run, grid, np.int64(burn), static=dict(T=T, impl=str(jax.random.key_impl(key))), chunk_size=chunk_size,
                   desc="sign_floor_regime wells")
    return {k: np.asarray(v).reshape((G, n_chains) + np.shape(v)[1:]) for k, v in out.items()}
