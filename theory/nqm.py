r"""The noisy quadratic model (NQM): exact moment recursions shared by several topics.

**The model.** :math:`L(x) = \tfrac12 x^\top H x` with :math:`H` diagonal (curvatures
:math:`\lambda_i`) or a full symmetric PSD matrix. A stochastic gradient at batch size :math:`B` is

.. math:: g = Hx + \frac{1}{\sqrt B}\Big(\sigma_m\,(Hx)\odot\xi_1 + \sigma_a\odot\xi_2\Big),

:math:`\xi_{1,2}` independent, zero mean, unit variance per coordinate: *multiplicative* noise
:math:`\sigma_m` (relative to the gradient) and *additive* noise :math:`\sigma_a` (a scalar or one
level per coordinate). :math:`B = 1` with :math:`\sigma_m = 0` is the classic NQM.

**SGD's exact moment recursion.** With a step-size schedule :math:`\eta_t` the coordinates of a
diagonal NQM decouple and :math:`m_i = E x_i^2` obeys, exactly (no Gaussianity needed),

.. math:: m_{i,t+1} = \Big((1-\eta_t\lambda_i)^2 + \frac{\eta_t^2\lambda_i^2\sigma_m^2}{B}\Big)m_{i,t}
          + \frac{\eta_t^2\sigma_{a,i}^2}{B}, \qquad E L_t = \tfrac12\sum_i\lambda_i m_{i,t}

(:func:`moment_recursion`). For a full :math:`H`, :math:`S = E xx^\top` obeys
:math:`S^+ = (I-\eta H)S(I-\eta H) + \frac{\eta^2}{B}\big(\sigma_m^2\,\mathrm{Diag}(HSH) + \mathrm{Diag}(\sigma_a^2)\big)`
(:func:`full_moment_recursion`). At a constant step the fixed point is

.. math:: m_i^\infty = \frac{\eta\sigma_{a,i}^2}{B\lambda_i\big(2 - \eta\lambda_i(1 + \sigma_m^2/B)\big)},\qquad
          \tfrac12\lambda_i m_i^\infty = \frac{\eta\sigma_{a,i}^2}{2B(2-\eta\lambda_i)}\ (\sigma_m = 0)

(:func:`stationary_second_moment`, :func:`stationary_excess`): the plateau excess of a constant
step, which any decay to zero removes.

**Momentum on one mode** :math:`\lambda x^2/2`, :math:`h = \eta\lambda`, :math:`0 \le \mu < 1`. Heavy
ball :math:`x_{t+1} = x_t + \mu(x_t - x_{t-1}) - \eta g_t`; Nesterov
:math:`x_{t+1} = y_t - \eta g(y_t)`, :math:`y_t = x_t + \mu(x_t - x_{t-1})`. Characteristic polynomials
(:func:`momentum_characteristic_polynomial`) :math:`z^2 - (1+\mu-h)z + \mu` and
:math:`z^2 - (1+\mu)(1-h)z + \mu(1-h)`; the flip :math:`z = -1` gives the thresholds
:math:`h < 2(1+\mu)` and :math:`h < 2(1+\mu)/(1+2\mu)` (:func:`momentum_threshold`). With additive
noise :math:`\sigma` the discrete Lyapunov equation of the AR(2) recursion gives the stationary
variance (:func:`momentum_variance_sympy`, :func:`momentum_stationary_variance`); for heavy ball

.. math:: \mathrm{Var}\,x = \frac{\eta\sigma^2(1+\mu)}{\lambda(1-\mu)\big(2(1+\mu) - \eta\lambda\big)} .

No JAX and no I/O here: sympy for the algebra, NumPy for the recursions. Every public function
validates its arguments (:mod:`theory.validate`).
"""
from __future__ import annotations

import functools

import numpy as np
import sympy as sp

from theory import validate as V

__all__ = [
    "MOMENTUM_METHODS", "eta_", "mu_", "lam_", "stationary_second_moment", "stationary_excess", "moment_recursion",
    "expected_loss", "final_second_moment", "full_moment_recursion", "momentum_characteristic_polynomial", "momentum_threshold",
    "critical_curvature", "momentum_variance_sympy", "momentum_stationary_variance", "nesterov_variance_excess_sympy",
]

MOMENTUM_METHODS = ("gd", "heavy_ball", "nesterov")

eta_ = sp.Symbol("eta", positive=True)
mu_ = sp.Symbol("mu", nonnegative=True)  # momentum coefficient
lam_ = sp.Symbol("lambda")


# ----------------------------------------------------------------------------- SGD moments
def _levels(name: str, x, d: int) -> np.ndarray:
    """A scalar or one non-negative value per coordinate, as a float array of shape (d,)."""
    a = V.array(name, x, ndim=(0, 1), low=0.0)
    if a.ndim == 1 and a.shape[0] != d:
        raise ValueError(f"{name}: expected a scalar or {d} values (one per coordinate), got {a.shape[0]}")
    return np.broadcast_to(a, (d,)).astype(float)


def stationary_second_moment(lam, eta, sigma_a=1.0, sigma_m=0.0, batch_size=1) -> np.ndarray:
    r"""Fixed point :math:`m^\infty = \eta\sigma_a^2/\big(B\lambda(2 - \eta\lambda(1+\sigma_m^2/B))\big)` of SGD at a constant step.

    ``lam``: a curvature or an array of them (> 0); ``sigma_a`` a scalar or one per curvature.
    Exists only below the mean-square threshold :math:`\eta\lambda(1+\sigma_m^2/B) < 2` (``ValueError``
    naming ``eta`` otherwise). Returns an array shaped like ``lam``.
    """
    lam_a = V.array("lam", lam, ndim=(0, 1), low=0.0, low_open=True)
    eta = V.real("eta", eta, low=0.0, low_open=True)
    sa = _levels("sigma_a", sigma_a, lam_a.size).reshape(lam_a.shape)
    sm = V.real("sigma_m", sigma_m, low=0.0)
    b = V.integer("batch_size", batch_size, low=1)
    load = eta * lam_a * (1 + sm**2 / b)
    if not np.all(load < 2):
        raise ValueError(f"eta: SGD has a stationary second moment only for eta * lam * (1 + sigma_m^2/B) < 2, "
                         f"got {float(np.max(load)):.6g} at eta = {eta}")
    return eta * sa**2 / (b * lam_a * (2 - load))


def stationary_excess(lam, eta, sigma_a=1.0, sigma_m=0.0, batch_size=1) -> np.ndarray:
    r"""Per-mode stationary excess loss :math:`\tfrac12\lambda m^\infty`; :math:`\eta\sigma_a^2/(2B(2-\eta\lambda))` without multiplicative noise."""
    lam_a = V.array("lam", lam, ndim=(0, 1), low=0.0, low_open=True)
    return 0.5 * lam_a * stationary_second_moment(lam_a, eta, sigma_a, sigma_m, batch_size)


def moment_recursion(lam, eta, m0, sigma_a=0.0, sigma_m=0.0, batch_size=1, *, max_bytes=None) -> np.ndarray:
    r"""Exact :math:`E x_{i,t}^2` of SGD on a diagonal NQM along the schedule ``eta`` :math:`= (\eta_0..\eta_{T-1})`.

    ``lam`` (d,) curvatures (>= 0); ``m0`` (d,) or a scalar: :math:`E x_{i,0}^2`; ``sigma_a`` a scalar
    or (d,); ``sigma_m`` a scalar. ``eta`` may also be 2-D, ``(S, T)``: S schedules at once.
    Returns :math:`m_t` for :math:`t = 0..T`, shape ``(T+1, d)`` (or ``(S, T+1, d)``). The loop runs over
    steps with every mode and schedule vectorized (a deterministic recursion, not a simulation); a
    second moment that overflows (an unstable step) becomes ``inf``. ``max_bytes``: the allocation limit
    (:func:`theory.validate.byte_limit`) for the ``(S, T+1, d)`` result.
    """
    lam_a = V.array("lam", lam, ndim=1, low=0.0)
    d = lam_a.size
    e = V.array("eta", eta, ndim=(1, 2), low=0.0)
    V.check_bytes({"eta": f"shape {e.shape}", "lam": f"{d} modes"}, 8 * e.size * d + 8 * d,
                  what="the (S, T+1, d) second moments", max_bytes=max_bytes)
    m = _levels("m0", m0, d).copy()
    sa = _levels("sigma_a", sigma_a, d)
    sm = V.real("sigma_m", sigma_m, low=0.0)
    b = V.integer("batch_size", batch_size, low=1)
    flat = e.ndim == 1
    e2 = e[None] if flat else e
    out = np.empty((e2.shape[0], e2.shape[1] + 1, d))
    out[:, 0] = m
    cur = np.broadcast_to(m, (e2.shape[0], d)).copy()
    with np.errstate(over="ignore", invalid="ignore"):
        for t in range(e2.shape[1]):
            et = e2[:, t:t + 1]
            cur = ((1 - et * lam_a) ** 2 + (et * lam_a * sm) ** 2 / b) * cur + et**2 * sa**2 / b
            out[:, t + 1] = cur
    return out[0] if flat else out


def final_second_moment(lam, eta, m0, sigma_a=0.0, sigma_m=0.0, batch_size=1, *, max_bytes=None) -> np.ndarray:
    r"""The last row of :func:`moment_recursion` without the loop: :math:`m_T = P_0 m_0 + \sum_t \frac{\eta_t^2\sigma_a^2}{B} P_{t+1}`.

    :math:`P_t = \prod_{s \ge t} a_s` with :math:`a_s = (1-\eta_s\lambda)^2 + \eta_s^2\lambda^2\sigma_m^2/B`
    (suffix products, no logarithms: a factor that is exactly 0 at :math:`\eta\lambda = 1` is fine).
    ``eta`` is one schedule ``(T,)``; returns shape ``(d,)``. Used to tune peak step sizes quickly.
    ``max_bytes``: the allocation limit (:func:`theory.validate.byte_limit`) for its ``(T, d)`` tables.
    """
    lam_a = V.array("lam", lam, ndim=1, low=0.0)
    d = lam_a.size
    e = V.array("eta", eta, ndim=1, low=0.0)
    V.check_bytes({"eta": f"{e.size} steps", "lam": f"{d} modes"}, 4 * 8 * e.size * d,
                  what="the four (T, d) factor and suffix-product tables", max_bytes=max_bytes)
    m = _levels("m0", m0, d)
    sa = _levels("sigma_a", sigma_a, d)
    sm = V.real("sigma_m", sigma_m, low=0.0)
    b = V.integer("batch_size", batch_size, low=1)
    with np.errstate(over="ignore", invalid="ignore"):
        a = (1 - e[:, None] * lam_a) ** 2 + (e[:, None] * lam_a * sm) ** 2 / b      # (T, d)
        suffix = np.cumprod(a[::-1], axis=0)[::-1]                                     # P_t, t = 0..T-1
        after = np.vstack([suffix[1:], np.ones((1, d))])                               # P_{t+1}
        return suffix[0] * m + np.sum(e[:, None] ** 2 * sa**2 / b * after, axis=0)


def expected_loss(lam, m) -> np.ndarray:
    r""":math:`E L = \tfrac12\sum_i \lambda_i m_i` over the last axis of ``m`` (second moments, e.g. from :func:`moment_recursion`)."""
    lam_a = V.array("lam", lam, ndim=1, low=0.0)
    # inf is valid (an unstable schedule's overflowing second moment gives an infinite loss); NaN and
    # negative values are not second moments
    m_a = V.array("m", m, finite=False)
    if np.any(np.isnan(m_a)):
        raise ValueError(f"m: second moments must not be NaN (inf is allowed: an overflowed recursion), got {m!r}")
    if np.any(m_a < 0):
        raise ValueError(f"m: second moments must be >= 0, got min {np.min(m_a):.6g}")
    if m_a.shape[-1] != lam_a.size:
        raise ValueError(f"m: expected a last axis of {lam_a.size} modes, got shape {m_a.shape}")
    return 0.5 * m_a @ lam_a


def full_moment_recursion(H, eta, S0, sigma_a=0.0, sigma_m=0.0, batch_size=1) -> tuple[np.ndarray, np.ndarray]:
    r"""Exact :math:`S_t = E x_t x_t^\top` of SGD on :math:`\tfrac12 x^\top Hx` (full symmetric PSD ``H``) along ``eta``.

    :math:`S^+ = (I-\eta H)S(I-\eta H) + \frac{\eta^2}{B}\big(\sigma_m^2\,\mathrm{Diag}(HSH) + \mathrm{Diag}(\sigma_a^2)\big)`.
    Returns ``(loss, S_T)``: :math:`E L_t = \tfrac12\mathrm{tr}(HS_t)` for :math:`t = 0..T` and the last :math:`S`.
    Rotating a diagonal problem (:math:`H = Q\Lambda Q^\top`, :math:`S_0 = Q S_0' Q^\top`, isotropic
    additive noise, :math:`\sigma_m = 0`) leaves the loss unchanged (tested).
    """
    # the NQM's curvature and a second moment are PSD; an indefinite H is not a noisy *quadratic model*
    h = V.symmetric_psd("H", V.array("H", H, ndim=2), "the NQM curvature H")
    d = h.shape[0]
    e = V.array("eta", eta, ndim=1, low=0.0)
    s = V.symmetric_psd("S0", V.array("S0", S0, shape=(d, d)), "S_0 (a second moment)").copy()
    sa = _levels("sigma_a", sigma_a, d)
    sm = V.real("sigma_m", sigma_m, low=0.0)
    b = V.integer("batch_size", batch_size, low=1)
    eye = np.eye(d)
    loss = np.empty(e.size + 1)
    loss[0] = 0.5 * np.trace(h @ s)
    with np.errstate(over="ignore", invalid="ignore"):
        for t, et in enumerate(e):
            a = eye - et * h
            s = a @ s @ a + et**2 / b * np.diag(sm**2 * np.diag(h @ s @ h) + sa**2)
            loss[t + 1] = 0.5 * np.trace(h @ s)
    return loss, s


# ----------------------------------------------------------------------------- momentum on one mode
def _momentum_method(method) -> str:
    return V.choice("method", method, MOMENTUM_METHODS)


@functools.lru_cache(maxsize=None)
def momentum_characteristic_polynomial(method: str) -> sp.Expr:
    r"""Characteristic polynomial in :math:`z` of ``method`` on :math:`\tfrac12\lambda x^2` (symbols ``z``, ``lambda``, :data:`eta_`, :data:`mu_`).

    GD :math:`z - (1-\eta\lambda)`; heavy ball :math:`z^2 - (1+\mu-\eta\lambda)z + \mu`; Nesterov
    :math:`z^2 - (1+\mu)(1-\eta\lambda)z + \mu(1-\eta\lambda)`, from the update rules with :math:`x_t = z^t`.
    """
    _momentum_method(method)
    z, lam = sp.symbols("z lambda")
    mu = 0 if method == "gd" else mu_
    nu = 1 if method == "nesterov" else 0
    # x_{t+1} = x_t + mu (x_t - x_{t-1}) - eta lam (x_t + nu mu (x_t - x_{t-1})), divided by x_{t-1} = z^{t-1}
    poly = sp.expand(z**2 - (z + mu * (z - 1) - eta_ * lam * (z + nu * mu * (z - 1))))
    if method == "gd":  # z (z - (1 - eta lam)): drop the spurious root z = 0
        poly = sp.expand(sp.cancel(poly / z))
    return poly


@functools.lru_cache(maxsize=None)
def _flip_h(method: str) -> sp.Expr:
    r"""The :math:`h = \eta\lambda` where :math:`z = -1` is a root (sympy)."""
    z, lam, h = sp.Symbol("z"), sp.Symbol("lambda"), sp.Symbol("h")
    poly = momentum_characteristic_polynomial(method).subs({z: -1, lam: h / eta_})
    sols = sp.solve(sp.expand(poly), h)
    if len(sols) != 1:  # pragma: no cover - the polynomial is linear in h at z = -1
        raise RuntimeError(f"expected one flip, got {sols}")
    return sp.factor(sols[0])


@functools.lru_cache(maxsize=None)
def _flip_fn(method: str):
    return sp.lambdify(mu_, _flip_h(method), "math")


def momentum_threshold(mu, method) -> float:
    r"""Largest stable :math:`h = \eta\lambda`: :math:`2` (GD), :math:`2(1+\mu)` (heavy ball), :math:`2(1+\mu)/(1+2\mu)` (Nesterov).

    Derived from the flip :math:`p(-1) = 0` of :func:`momentum_characteristic_polynomial`; for
    :math:`0 \le \mu < 1` it is the first root to leave the unit disc as :math:`h` grows.
    """
    mu = V.real("mu", mu, low=0.0, high=1.0, high_open=True)
    return float(_flip_fn(_momentum_method(method))(mu))


def critical_curvature(eta, mu, method) -> float:
    r"""The largest stable curvature :math:`\lambda` at step ``eta``: :func:`momentum_threshold` divided by :math:`\eta`."""
    eta = V.real("eta", eta, low=0.0, low_open=True)
    return momentum_threshold(mu, method) / eta


@functools.lru_cache(maxsize=None)
def momentum_variance_sympy(method: str = "heavy_ball"):
    r"""Stationary :math:`\mathrm{Var}\,x` of heavy ball or Nesterov with additive noise :math:`\sigma` (sympy).

    Both are AR(2) recursions :math:`x_{t+1} = a x_t + b x_{t-1} - \eta\sigma\xi_t` (heavy ball
    :math:`a = 1+\mu-h`, :math:`b = -\mu`; Nesterov :math:`a = (1+\mu)(1-h)`, :math:`b = -\mu(1-h)`). With
    :math:`c_0 = \mathrm{Var}\,x`, :math:`c_1 = \mathrm{Cov}(x_t, x_{t-1})`: :math:`c_1 = a c_0 + b c_1` and
    :math:`c_0 = (a^2 + b^2)c_0 + 2ab\,c_1 + \eta^2\sigma^2`. Returns ``(variance, (eta, lambda, mu, sigma))``.
    """
    method = V.choice("method", method, ("heavy_ball", "nesterov"))
    eta, lam, mu, sigma = sp.symbols("eta lambda mu sigma", positive=True)
    h = eta * lam
    a, b = ((1 + mu - h, -mu) if method == "heavy_ball" else ((1 + mu) * (1 - h), -mu * (1 - h)))
    c0, c1 = sp.symbols("c0 c1")
    sol = sp.solve([sp.Eq(c1, a * c0 + b * c1), sp.Eq(c0, (a**2 + b**2) * c0 + 2 * a * b * c1 + eta**2 * sigma**2)],
                   [c0, c1], dict=True)[0]
    return sp.factor(sp.simplify(sol[c0])), (eta, lam, mu, sigma)


@functools.lru_cache(maxsize=None)
def _variance_fn(method: str):
    var, syms = momentum_variance_sympy(method)
    return sp.lambdify(syms, var, "math")


def momentum_stationary_variance(eta, lam, mu, sigma, method="heavy_ball") -> float:
    r"""Stationary :math:`\mathrm{Var}\,x` of heavy ball (default) or Nesterov on :math:`\lambda x^2/2` with additive noise :math:`\sigma`.

    Heavy ball: :math:`\eta\sigma^2(1+\mu)/\big(\lambda(1-\mu)(2(1+\mu)-\eta\lambda)\big)`. Nesterov: the
    iterate :math:`x` (the point reached by the gradient step, not the look-ahead :math:`y`), from
    :func:`momentum_variance_sympy`. Defined only inside the stability region (``ValueError`` naming
    ``eta`` otherwise); :math:`\mu = 0` is SGD's :math:`\eta\sigma^2/(\lambda(2-\eta\lambda))`.
    """
    eta = V.real("eta", eta, low=0.0, low_open=True)
    lam = V.real("lam", lam, low=0.0, low_open=True)
    mu = V.real("mu", mu, low=0.0, high=1.0, high_open=True)
    sigma = V.real("sigma", sigma, low=0.0)
    method = V.choice("method", method, ("heavy_ball", "nesterov"))
    top = momentum_threshold(mu, method)
    if not eta * lam < top:
        raise ValueError(f"eta: expected eta * lam < {top:.6g} ({method} stable at mu = {mu}), got eta * lam = {eta * lam:.6g}")
    return float(_variance_fn(method)(eta, lam, mu, sigma))


def nesterov_variance_excess_sympy():
    r"""Nesterov's stationary variance over SGD's at the same :math:`\eta`, minus one (sympy), and its closed form.

    .. math:: \frac{\mathrm{Var}_{\rm NAG}}{\mathrm{Var}_{\rm SGD}} - 1
              = \frac{2\mu(1+\mu)(\eta\lambda-1)^2}{(1-\mu+\eta\mu\lambda)\big(2(1+\mu)-\eta\lambda(1+2\mu)\big)} \ge 0 .

    Returns ``(excess, closed_form, (eta, lambda, mu))``; ``simplify(excess - closed_form) == 0`` is tested.
    """
    var, (eta, lam, mu, sigma) = momentum_variance_sympy("nesterov")
    sgd = eta * sigma**2 / (lam * (2 - eta * lam))
    excess = sp.factor(sp.simplify(var / sgd - 1))
    closed = 2 * mu * (1 + mu) * (eta * lam - 1) ** 2 / ((1 - mu + eta * mu * lam) * (2 * (1 + mu) - eta * lam * (1 + 2 * mu)))
    return excess, closed, (eta, lam, mu)
