r"""signSGD under additive and mixed noise: birth--death chains on the lattice.

The exact additive chain and its floor, the small-noise expansion of the drift and its series, the
mixed (additive plus multiplicative) chain and the step where the two floors cross, the uniform-noise
floor and the Student-t density at zero.
"""
from __future__ import annotations

import functools
import math

import numpy as np
import sympy as sp
from scipy import special, stats

from theory import validate as V
from theory.sign_floor.multiplicative import finite, _law, _sym_or, a_sym, away_probability, c_mid, eta_sym, sigma_sym

__all__ = [
    "additive_chain", "additive_floor", "phi_add_expansion_sym", "phi_add_series", "additive_drift_floor_sym",
    "mixed_chain", "mixed_floor", "crossover_eta", "uniform_additive_floor", "student_density_at_zero"
]


# ----------------------------------------------------------------------------- additive
def _logcdf(u: np.ndarray, law: str, df: float | None) -> np.ndarray:
    if law == "uniform":
        raise ValueError("law: the additive chain of uniform noise has a bounded support; use uniform_additive_floor")
    if law == "gaussian":
        return special.log_ndtr(u)
    return stats.t.logcdf(u, df)


def _cdf(u: np.ndarray, law: str, df: float | None) -> np.ndarray:
    if law == "uniform":
        return np.clip((1 + u) / 2, 0.0, 1.0)
    if law == "gaussian":
        return special.ndtr(u)
    return stats.t.cdf(u, df)


def additive_chain(a: float, eta: float, sigma: float, c: float, *, law: str = "gaussian",
                   df: float | None = None, width: float = 40.0) -> tuple[np.ndarray, np.ndarray]:
    r"""Exact stationary law of signSGD under additive noise on the lattice :math:`c + \eta\mathbb Z`.

    :math:`P(x \to x+\eta) = F(-a x/\sigma)`, :math:`P(x \to x-\eta) = F(a x/\sigma)`; detailed
    balance :math:`\log\pi(n+1) - \log\pi(n) = \log F(-a x_n/\sigma) - \log F(a x_{n+1}/\sigma)`, summed
    with log-CDFs so that far tails neither underflow nor lose precision. The lattice is truncated
    where :math:`|x|` exceeds ``width`` times the larger of the diffusive scale
    :math:`\sqrt{\eta\sigma/a}` and the noise scale :math:`\sigma/a` (the law decays faster than
    geometrically there). ``c`` in :math:`[0, \eta)`. Returns ``(x, pi)``.
    """
    a = V.real("a", a, low=0.0, low_open=True)
    eta = V.real("eta", eta, low=0.0, low_open=True)
    sigma = V.real("sigma", sigma, low=0.0, low_open=True)
    c = V.real("c", c, low=0.0, high=eta, high_open=True)
    width = V.real("width", width, low=1.0)
    df = _law(law, df)
    # beyond |a x| ~ sigma the step away from 0 has probability F(-a|x|/sigma) -> 0, so the law
    # decays faster than geometrically there, for Gaussian and Student-t noise alike
    scale = max(math.sqrt(eta * sigma / a), sigma / a, eta)
    n_max = width * scale / eta + 10
    if not n_max <= 2_000_000:
        raise ValueError(f"eta, sigma: the lattice needs {n_max:.3g} sites on each side (sigma/(a eta) = "
                         f"{sigma / (a * eta):.3g}); expected at most 2e6: raise eta or a, or lower sigma")
    n = np.arange(-int(n_max), int(n_max) + 1)
    x = c + n * eta
    # extreme inputs turn the log-CDF differences into inf - inf: the check below names them
    with np.errstate(over="ignore", invalid="ignore"):
        step = _logcdf(-a * x[:-1] / sigma, law, df) - _logcdf(a * x[1:] / sigma, law, df)
        logpi = np.concatenate([[0.0], np.cumsum(step)])
        logpi -= logpi.max()
        pi = np.exp(logpi)
        pi /= pi.sum()
    if not (np.all(np.isfinite(pi)) and np.all(np.isfinite(x * x))):
        raise ValueError(f"a, eta, sigma: the lattice law is not representable in float64 at a = {a}, eta = {eta}, "
                         f"sigma = {sigma}; expected moderate values")
    return x, pi


def additive_floor(a: float, eta: float, sigma: float, offset="mid", *, law: str = "gaussian",
                   df: float | None = None) -> float:
    r"""Stationary :math:`E f = \tfrac a2 E_\pi[x^2]` of signSGD under additive noise (exact chain).

    ``offset``: ``"mid"`` (:math:`c = \eta/2`), ``"uniform"`` (average over :math:`c \in (0,\eta)`
    by 16-point Gauss--Legendre quadrature) or a number in :math:`[0, \eta)`.
    """
    eta = V.real("eta", eta, low=0.0, low_open=True)
    if isinstance(offset, str):
        V.choice("offset", offset, ("mid", "uniform"))
    if offset == "uniform":
        nodes, weights = np.polynomial.legendre.leggauss(16)
        cs = eta * (nodes + 1) / 2
        return float(sum(w / 2 * additive_floor(a, eta, sigma, float(cc), law=law, df=df) for cc, w in zip(cs, weights)))
    c = eta / 2 if offset == "mid" else V.real("offset", offset, low=0.0, high=eta, high_open=True)
    x, pi = additive_chain(a, eta, sigma, c, law=law, df=df)
    return float(a / 2 * np.sum(pi * x**2))


@functools.lru_cache(maxsize=1)
def phi_add_expansion_sym():
    r"""Derive :math:`\Phi_{\rm add}(\kappa) = E f/(\sigma\eta)` to first order in :math:`\kappa = a\eta/\sigma`.

    In :math:`u = a x/\sigma` the lattice spacing is :math:`\kappa` and the law lives at
    :math:`u \sim \sqrt\kappa`; put :math:`u = h z`, :math:`h = \sqrt\kappa`. With
    :math:`\pi \propto e^{-V}`, detailed balance reads
    :math:`V(z + h) - V(z) = -D(z)`, :math:`D(z) = \log\Phi(-hz) - \log\Phi(hz + h^2)`.
    Expanding both sides in :math:`h` with the polynomial ansatz :math:`V = P_0 + hP_1 + h^2P_2`
    and matching orders :math:`h^1, h^2, h^3` gives :math:`P_0 = \sqrt{2/\pi}\,z^2`, :math:`P_1 = 0`,
    :math:`P_2 = -z^2/\pi + (\tfrac{1}{3\pi} - \tfrac1{12})\sqrt{2/\pi}\,z^4`. A lattice sum of a
    smooth, rapidly decaying density equals its integral up to terms exponentially small in
    :math:`1/h^2` (Poisson summation), which is also why the offset :math:`c` drops out. Then
    :math:`E f = \tfrac a2 (\sigma/a)^2 h^2 E z^2 = \tfrac{\sigma\eta}{2}E z^2` and

    .. math:: \Phi_{\rm add}(\kappa) = \frac{E z^2}{2} = \frac{\sqrt{2\pi}}{8} + \frac{\pi}{32}\kappa + O(\kappa^2).

    Returns the expression in the symbol ``kappa``.
    """
    h, z, t = sp.symbols("h z t", real=True)
    # Taylor polynomial of log Phi(t) to t^5 from its derivatives (Phi' = phi, phi' = -t phi)
    log_phi = sp.log((1 + sp.erf(t / sp.sqrt(2))) / 2)
    taylor, derivative = 0, log_phi
    for m in range(6):
        taylor += sp.simplify(derivative.subs(t, 0)) * t**m / sp.factorial(m)
        derivative = sp.diff(derivative, t)
    drift = _truncate(taylor.subs(t, -h * z) - taylor.subs(t, h * z + h**2), h, 6)
    unknowns = [sp.symbols(f"c{i}_1:{i + 5}") for i in range(3)]  # P_i has degree <= i + 4, no constant
    V_ = sum(h**i * sum(c * z ** (j + 1) for j, c in enumerate(cs)) for i, cs in enumerate(unknowns))
    balance = sp.Poly(_truncate(V_.subs(z, z + h) - V_, h, 4) + drift, h)
    solution: dict = {}
    for order in (1, 2, 3):  # order h^k fixes P_{k-1}' (lower orders already substituted)
        eqs = sp.Poly(sp.expand(balance.coeff_monomial(h**order).subs(solution)), z).coeffs()
        solution.update(sp.solve(eqs, unknowns[order - 1], dict=True)[0])
    P = [sp.expand(sp.expand(V_.subs(solution)).coeff(h, i)) for i in range(3)]
    P = [p_i.subs({c: 0 for cs in unknowns for c in cs}) for p_i in P]  # free (irrelevant) constants -> 0
    width = P[0].coeff(z, 2)  # P_0 = w z^2 with w = sqrt(2/pi), a Gaussian weight
    if sp.simplify(P[0] - width * z**2) != 0:
        raise ArithmeticError(f"the leading order of the law is not Gaussian: P_0 = {P[0]}")
    correction = sp.expand(1 - h * P[1] + h**2 * (P[1] ** 2 / 2 - P[2]))
    num = _gaussian_integral(sp.expand(z**2 * correction), z, width)
    den = _gaussian_integral(correction, z, width)
    # E z^2 = num/den to O(h^2): expand 1/den around its h^0 term
    d0 = den.subs(h, 0)
    ez2 = _truncate(num / d0 * sum((-(den - d0) / d0) ** m for m in range(3)), h, 3)
    kappa = sp.Symbol("kappa", positive=True)
    return sp.simplify(sp.expand(ez2 / 2).subs(h, sp.sqrt(kappa)))


def _truncate(expr, var, order: int):
    """The terms of the polynomial ``expr`` in ``var`` of degree below ``order``."""
    poly = sp.Poly(sp.expand(expr), var)
    return sum(coeff * var**m for (m,), coeff in poly.terms() if m < order)


def _gaussian_integral(poly, z, w):
    r""":math:`\int_{-\infty}^{\infty} Q(z)\,e^{-w z^2}\,dz` for a polynomial :math:`Q`, termwise from
    :math:`\int z^{2k} e^{-wz^2} dz = \Gamma(k + \tfrac12)\,w^{-k-1/2}` (odd powers vanish)."""
    total = 0
    for (m,), coeff in sp.Poly(poly, z).terms():
        if m % 2 == 0:
            total += coeff * sp.gamma(sp.Rational(m + 1, 2)) * w ** (-sp.Rational(m + 1, 2))
    return sp.expand(total)


def phi_add_series(kappa):
    r"""The derived expansion :func:`phi_add_expansion_sym` at ``kappa`` (a number :math:`\ge 0` or a sympy expression):

    .. math:: \Phi_{\rm add}(\kappa) = \frac{\sqrt{2\pi}}{8} + \frac{\pi}{32}\kappa + O(\kappa^2).

    A number gives a float, an expression a sympy expression.
    """
    k = _sym_or("kappa", kappa, low=0.0)
    out = phi_add_expansion_sym().subs(sp.Symbol("kappa", positive=True), k)
    return float(out) if isinstance(k, float) else out


def additive_drift_floor_sym():
    r"""Leading order of the additive floor from the diffusion limit, for a noise density :math:`\rho`.

    Per step the mean displacement is :math:`-\eta(2F(ax/\sigma) - 1) \approx -2\eta\rho(0) a x/\sigma`
    and the variance :math:`\eta^2`; the stationary variance of this Ornstein--Uhlenbeck walk is
    :math:`\eta^2/(2\cdot 2\eta\rho(0)a/\sigma)`, so

    .. math:: E f = \frac a2 E x^2 = \frac{\eta\sigma}{8\rho(0)} = \frac{\eta}{8\rho_{\sigma\xi}(0)}.

    Returns ``(expr, rho0)`` with ``expr`` in the symbols ``eta, sigma`` and the symbol ``rho0``.
    Gaussian: :math:`\rho(0) = 1/\sqrt{2\pi}` gives :math:`\sqrt{2\pi}\,\sigma\eta/8`.
    """
    x, rho0 = sp.symbols("x rho0", positive=True)
    drift = sp.diff(-eta_sym * (2 * (sp.Rational(1, 2) + rho0 * a_sym * x / sigma_sym) - 1), x)  # linearised
    var_x = eta_sym**2 / (-2 * drift)  # OU: dX = -k X + noise, Var = step variance / (2k)
    return sp.simplify(a_sym / 2 * var_x), rho0


# ----------------------------------------------------------------------------- mixed noise
def mixed_chain(a: float, eta: float, sigma_m: float, sigma_a: float, c: float) -> tuple[np.ndarray, np.ndarray]:
    r"""Exact stationary law of signSGD under mixed Gaussian noise on the lattice :math:`c + \eta\mathbb Z`.

    :math:`g = a x(1 + \sigma_m\xi_1) + \sigma_a\xi_2` is Gaussian given :math:`x`, with mean :math:`a x` and
    standard deviation :math:`s(x) = \sqrt{a^2x^2\sigma_m^2 + \sigma_a^2}`, so the chain steps up with
    probability :math:`\Phi(-a x/s(x))` and down with :math:`\Phi(a x/s(x))`; detailed balance in
    log-CDFs as in :func:`additive_chain`. Far out (:math:`a|x|\sigma_m \gg \sigma_a`) the away
    probability tends to :math:`p = \Phi(-1/\sigma_m)`, so the law has geometric tails of ratio
    :math:`p/(1-p)`; the lattice reaches 80 e-folds into them. ``c`` in :math:`[0, \eta)`. Returns ``(x, pi)``.
    """
    a = V.real("a", a, low=0.0, low_open=True)
    eta = V.real("eta", eta, low=0.0, low_open=True)
    sigma_m = V.real("sigma_m", sigma_m, low=0.0, low_open=True)
    sigma_a = V.real("sigma_a", sigma_a, low=0.0, low_open=True)
    c = V.real("c", c, low=0.0, high=eta, high_open=True)
    p = away_probability(sigma_m)
    if not p < 0.45:
        raise ValueError(f"sigma_m: the geometric tail p/(1-p) must stay below 0.82 (p < 0.45) for a finite lattice, "
                         f"got sigma_m = {sigma_m} (p = {p:.3g})")
    tail = 80.0 / -math.log(p / (1 - p)) if p > 0 else 0.0  # p = 0 (tiny sigma_m): no multiplicative tail
    scale = max(math.sqrt(eta * sigma_a / a), sigma_a / a, eta)
    n_max = 40.0 * scale / eta + tail + 10
    if not n_max <= 2_000_000:
        raise ValueError(f"eta, sigma_a: the lattice needs {n_max:.3g} sites on each side (sigma_a/(a eta) = "
                         f"{sigma_a / (a * eta):.3g}); expected at most 2e6: raise eta or lower sigma_a")
    n = np.arange(-int(n_max), int(n_max) + 1)
    x = c + n * eta
    u = a * x / np.sqrt((a * x * sigma_m) ** 2 + sigma_a**2)
    logpi = np.concatenate([[0.0], np.cumsum(special.log_ndtr(-u[:-1]) - special.log_ndtr(u[1:]))])
    pi = np.exp(logpi - logpi.max())
    return x, pi / pi.sum()


def mixed_floor(a: float, eta: float, sigma_m: float, sigma_a: float, offset="mid") -> float:
    r"""Stationary :math:`E f = \tfrac a2 E_\pi[x^2]` of signSGD under mixed Gaussian noise (:func:`mixed_chain`).

    ``offset``: ``"mid"`` (:math:`c = \eta/2`) or a number in :math:`[0, \eta)`. Between the two
    pure floors: :math:`\sigma_a\eta\,\Phi_{\rm add}` as :math:`\eta \to 0` (slope 1) and
    :math:`C\,a\eta^2` as :math:`\eta \to \infty` (slope 2).
    """
    eta = V.real("eta", eta, low=0.0, low_open=True)
    if isinstance(offset, str):
        V.choice("offset", offset, ("mid",))
    c = eta / 2 if offset == "mid" else V.real("offset", offset, low=0.0, high=eta, high_open=True)
    x, pi = mixed_chain(a, eta, sigma_m, sigma_a, c)
    return float(a / 2 * np.sum(pi * x**2))


def crossover_eta(a: float, sigma_m: float, sigma_a: float) -> float:
    r"""The step at which the two pure floors of signSGD meet (offset :math:`\eta/2`):

    .. math:: C_{\rm mid}(\sigma_m)\,a\,\eta_\times^2 = \sigma_a\eta_\times\,\Phi_{\rm add}(0)
              \iff \eta_\times = \frac{\sqrt{2\pi}\,\sigma_a}{8\,C_{\rm mid}(\sigma_m)\,a}.

    Below it the additive floor (slope 1) dominates, above it the multiplicative one (slope 2); if
    the floors added, the log-log slope would be exactly 3/2 there.
    """
    a = V.real("a", a, low=0.0, low_open=True)
    sigma_m = V.real("sigma_m", sigma_m, low=0.0, low_open=True)
    sigma_a = V.real("sigma_a", sigma_a, low=0.0, low_open=True)
    return finite(math.sqrt(2 * math.pi) * sigma_a / (8 * c_mid(sigma_m) * a), sigma_a=sigma_a, a=a)


def uniform_additive_floor(a: float, eta: float, bound: float, offset="mid") -> float:
    r"""Exact stationary :math:`E f` of signSGD with additive uniform noise, :math:`g = a x + \xi`, :math:`\xi \sim U[-B, B]`.

    The chain on :math:`c + \eta\mathbb Z` steps up with probability :math:`q(x) = \mathrm{clip}((1 - a x/B)/2, 0, 1)`
    and down with :math:`1 - q(x)`. Where :math:`a|x| \ge B` the step is certain to go toward 0, so the
    recurrent class is the interval of sites joined by edges with :math:`q(x_n) > 0` and
    :math:`1 - q(x_{n+1}) > 0`; on it detailed balance :math:`\pi(n+1)(1 - q(x_{n+1})) = \pi(n) q(x_n)`.
    For small :math:`\kappa = a\eta/B` the floor is :math:`\eta/(8\rho(0)) = \eta B/4` (:func:`additive_drift_floor_sym`
    with the density :math:`1/(2B)` at 0). ``offset``: ``"mid"`` or a number in :math:`[0, \eta)`.
    """
    a = V.real("a", a, low=0.0, low_open=True)
    eta = V.real("eta", eta, low=0.0, low_open=True)
    bound = V.real("bound", bound, low=0.0, low_open=True)
    if isinstance(offset, str):
        V.choice("offset", offset, ("mid",))
    c = eta / 2 if offset == "mid" else V.real("offset", offset, low=0.0, high=eta, high_open=True)
    n_max = bound / (a * eta) + 3
    if not n_max <= 2_000_000:
        raise ValueError(f"eta: the lattice needs {n_max:.3g} sites on each side (B/(a eta)); expected at most 2e6")
    n = np.arange(-int(n_max), int(n_max) + 1)
    x = c + n * eta
    up = np.clip((1 - a * x / bound) / 2, 0.0, 1.0)
    edge = (up[:-1] > 0) & (up[1:] < 1)  # the edge n -> n+1 is used in both directions
    centre = int(np.argmin(np.abs(x)))
    lo = centre - int(np.argmin(edge[:centre][::-1])) if not edge[:centre].all() else 0
    hi = centre + int(np.argmin(edge[centre:])) if not edge[centre:].all() else len(x) - 1
    ratio = up[lo:hi] / (1 - up[lo + 1:hi + 1])
    logpi = np.concatenate([[0.0], np.cumsum(np.log(ratio))])
    pi = np.exp(logpi - logpi.max())
    pi /= pi.sum()
    return float(a / 2 * np.sum(pi * x[lo:hi + 1] ** 2))


def student_density_at_zero(df: float) -> float:
    r"""Density at 0 of the unit-scale Student-t law: :math:`\rho(0) = \frac{\Gamma((\nu+1)/2)}{\sqrt{\nu\pi}\,\Gamma(\nu/2)}`."""
    df = V.real("df", df, low=0.0, low_open=True)
    # Gamma((nu+1)/2)/Gamma(nu/2) as a Pochhammer symbol: no cancellation of two huge log-gammas at large nu
    return float(special.poch(df / 2, 0.5) / math.sqrt(df * math.pi))
