r"""The SGD baselines and the stationary floor of either method.

SGD's contraction, threshold and additive floor on the quadratic; under multiplicative noise the mean
log-contraction of one step and, along a sequence of steps, :math:`E\log f(x_k)` and :math:`\log E f(x_k)`; and
:func:`floor`, the stationary :math:`E f` of signSGD or SGD under either noise.
"""
from __future__ import annotations

import math

import numpy as np
import sympy as sp
from scipy import integrate

from theory import validate as V
from theory import nqm
from theory.sign_floor.multiplicative import (
    METHODS, NOISES, _f64, finite, _inverse_square_contraction, _law, a_sym, contraction, eta_sym, sigma_sym
)
from theory.sign_floor.additive import additive_floor

__all__ = [
    "sgd_contraction_sym", "sgd_threshold", "sgd_contraction", "sgd_additive_floor", "floor", "sgd_mult_log_step",
    "sgd_mult_log_f", "sgd_mult_log_mean_f"
]


# ----------------------------------------------------------------------------- SGD baselines
def sgd_contraction_sym():
    r"""Mean-square contraction of SGD under multiplicative noise, :math:`g = a x(1+\sigma\xi)`:

    .. math:: E x_{k+1}^2 = \big((1-\eta a)^2 + \eta^2 a^2\sigma^2\big)E x_k^2 =: \rho(\eta)\,E x_k^2,

    obtained by expanding :math:`E(1 - \eta a - \eta a\sigma\xi)^2` with :math:`E\xi = 0`, :math:`E\xi^2 = 1`.
    """
    xi = sp.Symbol("xi")
    square = sp.Poly(sp.expand((1 - eta_sym * a_sym - eta_sym * a_sym * sigma_sym * xi) ** 2), xi)
    moments = {0: 1, 1: 0, 2: 1}  # E xi^0, E xi^1, E xi^2
    return sp.expand(sum(coeff * moments[deg] for (deg,), coeff in square.terms()))


def sgd_threshold():
    r"""Largest stable step: :math:`\rho(\eta) < 1 \iff \eta a(1+\sigma^2) < 2`; the optimum is
    :math:`\eta^* = 1/(a(1+\sigma^2))`. Returns ``(eta_max, eta_star)`` as sympy expressions."""
    rho = sgd_contraction_sym()
    roots = sp.solve(sp.Eq(rho, 1), eta_sym)
    eta_max = [r for r in roots if r != 0][0]
    eta_star = sp.solve(sp.diff(rho, eta_sym), eta_sym)[0]
    return sp.simplify(eta_max), sp.simplify(eta_star)


def sgd_contraction(a: float, eta: float, sigma: float) -> float:
    r"""Numeric :math:`\rho(\eta) = (1-\eta a)^2 + \eta^2 a^2\sigma^2` (``a, eta > 0``, ``sigma >= 0``)."""
    a = V.real("a", a, low=0.0, low_open=True)
    eta = V.real("eta", eta, low=0.0, low_open=True)
    sigma = V.real("sigma", sigma, low=0.0)
    a, eta, sigma = _f64(a, eta, sigma)
    with np.errstate(over="ignore"):  # an overflow gives inf, which finite() reports naming the inputs
        value = (1 - eta * a) ** 2 + (eta * a * sigma) ** 2
    return finite(value, a=float(a), eta=float(eta), sigma=float(sigma))


def sgd_additive_floor(a: float, eta: float, sigma: float) -> float:
    r"""SGD's additive-noise floor :math:`E f = \frac{\eta\sigma^2}{2(2-\eta a)}` on :math:`f = a x^2/2`, in this topic's names.

    A thin wrapper: the value is :func:`theory.nqm.stationary_excess` of the shared noisy quadratic
    (one mode of curvature ``a``, additive noise ``sigma``, batch 1). Exists only for a stable step,
    :math:`\eta a < 2` (``ValueError`` naming ``eta`` otherwise: the second moment grows without bound).
    """
    a = V.real("a", a, low=0.0, low_open=True)
    eta = V.real("eta", eta, low=0.0, low_open=True)
    sigma = V.real("sigma", sigma, low=0.0)
    if not eta * a < 2:
        raise ValueError(f"eta: SGD has a stationary floor only for a stable step eta * a < 2, got eta = {eta} "
                         f"with a = {a} (eta * a = {eta * a:.6g})")
    with np.errstate(over="ignore"):
        return finite(float(nqm.stationary_excess(a, eta, sigma)), eta=eta, sigma=sigma)


# ----------------------------------------------------------------------------- public API
def floor(a, eta, sigma, noise: str = "multiplicative", method: str = "sign", offset="mid", *,
          law: str = "gaussian", df: float | None = None) -> float:
    r"""Stationary :math:`E f` on :math:`f = a x^2/2` at constant step ``eta`` and noise level ``sigma``.

    * sign, multiplicative: :math:`a\,E_\pi[x^2]/2` of the two-ladder law (``offset`` = ``"mid"``,
      ``"uniform"`` or :math:`c \in [0,\eta)`; :math:`c = 0` is the absorbing case (``sign(0) = 0``)
      and returns 0). ``inf`` when :math:`p \ge 1/2` (no contraction).
    * sign, additive: exact birth--death chain (:func:`additive_floor`).
    * sgd, multiplicative: 0 below the mean-square threshold :math:`\eta a(1+\sigma^2) < 2`
      (geometric contraction), ``inf`` at or above it.
    * sgd, additive: :math:`\eta\sigma^2/(2(2-\eta a))`, ``inf`` for :math:`\eta a \ge 2`.
    """
    a = V.real("a", a, low=0.0, low_open=True)
    eta = V.real("eta", eta, low=0.0, low_open=True)
    sigma = V.real("sigma", sigma, low=0.0)
    V.choice("noise", noise, NOISES)
    V.choice("method", method, METHODS)
    if isinstance(offset, str):
        if offset not in ("mid", "uniform"):
            raise ValueError(f"offset: expected 'mid', 'uniform' or a number in [0, eta), got {offset!r}")
    else:
        offset = V.real("offset", offset, low=0.0, high=eta, high_open=True)
    df = _law(law, df)
    if method == "sgd":
        if law != "gaussian":
            raise ValueError(f"law: the SGD floors use only the first two moments; use 'gaussian', got {law!r}")
        if noise == "multiplicative":
            return 0.0 if eta * a * (1 + sigma**2) < 2 else math.inf
        return sgd_additive_floor(a, eta, sigma) if eta * a < 2 else math.inf
    if noise == "additive":
        if sigma == 0:
            raise ValueError("sigma: additive-noise signSGD needs sigma > 0 (sigma = 0 is the noiseless oscillation)")
        return additive_floor(a, eta, sigma, offset, law=law, df=df)
    e = contraction(sigma, law, df)
    if not e > 0:
        return math.inf
    inv = _inverse_square_contraction(sigma, law, df)
    a, eta = _f64(a, eta)
    if not isinstance(offset, str) and offset == 0:
        return 0.0  # x0 on the lattice through 0: sign(0) = 0 freezes the walk at the minimizer
    with np.errstate(over="ignore"):  # an overflow gives inf, which finite() reports naming the inputs
        excess = 2 * eta**2 * (inv - 1) / 4  # 2 eta^2 p(1-p)/(1-2p)^2 with 4p(1-p) = 1 - e^2
        if offset == "uniform":
            # average of (c^2 + (eta-c)^2)/2 over c uniform on (0, eta) is eta^2/3
            value = a / 2 * (eta**2 / 3 + excess)
        else:
            c = eta / 2 if offset == "mid" else offset
            value = a / 2 * ((c**2 + (eta - c) ** 2) / 2 + excess)
    return finite(value, a=float(a), eta=float(eta))


# ----------------------------------------------------------------------------- SGD with multiplicative noise: log-moments
def sgd_mult_log_step(c, sigma) -> float:
    r""":math:`g(c) = E\log\big((1 - c(1+\sigma\xi))^2\big)`, :math:`\xi \sim N(0, 1)`: the mean log-contraction of
    one SGD step on :math:`a x^2/2` with multiplicative noise, :math:`c = \eta a \ge 0`.

    The integrand has a log singularity at :math:`\xi^* = (1-c)/(c\sigma)` (the step that lands exactly on 0),
    integrable; the Gaussian integral is split there and each half done by adaptive quadrature (QAGS/QAGI, whose
    extrapolation handles an endpoint log singularity). For small :math:`c` (expanding :math:`2\log(1-u)`,
    :math:`u = c(1+\sigma\xi)`, with :math:`E u^2 = c^2(1+\sigma^2)`, :math:`E u^3 = c^3(1+3\sigma^2)`)
    :math:`g = -2c - (1+\sigma^2)c^2 - \tfrac23(1+3\sigma^2)c^3 + O(c^4)`, up to the exponentially small
    weight of the singularity's neighbourhood. ``sigma = 0`` gives :math:`\log (1-c)^2` (:math:`-\infty` at c = 1).
    """
    c = V.real("c", c, low=0.0)
    sigma = V.real("sigma", sigma, low=0.0)
    if c == 0.0:
        return 0.0
    if sigma == 0.0:
        return float(2 * np.log(abs(1 - c))) if c != 1.0 else -math.inf
    v = c * sigma
    xs = (1 - c) / v

    def integrand(xi):
        return np.log((1 - c - v * xi) ** 2) * math.exp(-0.5 * xi * xi) / math.sqrt(2 * math.pi)

    opts = {"epsabs": 1e-14, "epsrel": 1e-12, "limit": 200}
    # finite pieces around the singularity (within 12 SD of the mass or of xi*), Gaussian tails beyond
    lo, hi = min(xs, 0.0) - 12.0, max(xs, 0.0) + 12.0
    parts = [integrate.quad(integrand, lo, xs, **opts)[0], integrate.quad(integrand, xs, hi, **opts)[0],
             integrate.quad(integrand, -np.inf, lo, **opts)[0], integrate.quad(integrand, hi, np.inf, **opts)[0]]
    return float(sum(parts))


def sgd_mult_log_f(a, eta, sigma, log_f0=0.0) -> np.ndarray:
    r""":math:`E\log f(x_k)`, :math:`k = 0..K`, of SGD on :math:`f = a x^2/2` with multiplicative noise along ``eta``
    :math:`= (\eta_0..\eta_{K-1})`, from a deterministic start with :math:`\log f(x_0) =` ``log_f0``.

    In one dimension :math:`x_k = x_0\prod_{j<k}(1 - \eta_j a(1+\sigma\xi_j))`, so
    :math:`\log f(x_k) = \log f(x_0) + \sum_{j<k}\log(1-\eta_j a(1+\sigma\xi_j))^2`: a sum of independent terms
    whose mean is :math:`\log f(x_0) + \sum_{j<k} g(\eta_j a)` (:func:`sgd_mult_log_step`). Unlike
    :math:`E f(x_k)` (a product of :math:`k` random factors, dominated by rare paths), this is what a sample mean
    over runs estimates reliably (central limit theorem for the sum). One quadrature per distinct step.
    """
    a = V.real("a", a, low=0.0, low_open=True)
    eta = V.array("eta", eta, ndim=1, low=0.0)
    sigma = V.real("sigma", sigma, low=0.0)
    log_f0 = V.real("log_f0", log_f0)
    uniq, inv = np.unique(eta, return_inverse=True)
    g = np.array([sgd_mult_log_step(a * e, sigma) for e in uniq])
    return log_f0 + np.concatenate([[0.0], np.cumsum(g[inv])])


def sgd_mult_log_mean_f(a, eta, sigma, log_f0=0.0) -> np.ndarray:
    r""":math:`\log E f(x_k)`, :math:`k = 0..K`, for the chain of :func:`sgd_mult_log_f`: the second-moment recursion
    :math:`E x_{k+1}^2 = ((1-\eta_k a)^2 + (\eta_k a\sigma)^2) E x_k^2` summed in logs (no underflow over long runs).
    By Jensen :math:`\log E f_k \ge E\log f_k`; the gap is the weight of rare paths in the mean.
    """
    a = V.real("a", a, low=0.0, low_open=True)
    eta = V.array("eta", eta, ndim=1, low=0.0)
    sigma = V.real("sigma", sigma, low=0.0)
    log_f0 = V.real("log_f0", log_f0)
    c = a * eta
    with np.errstate(divide="ignore"):
        step = np.log((1 - c) ** 2 + (c * sigma) ** 2)
    return log_f0 + np.concatenate([[0.0], np.cumsum(step)])
