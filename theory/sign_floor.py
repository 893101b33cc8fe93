r"""Noise floors of signSGD and SGD on the quadratic :math:`f(x) = a x^2/2`, and their constants.

Paper: Singh, Mishra, Raut (2026), arXiv 2607.12360. Only the abstract was available; every
formula here is DERIVED (worked out for steplab) and checked against simulation in
``paper_checks/sign_floor.py``.

**Multiplicative noise**, :math:`g = a x (1 + \sigma\xi)` with :math:`\xi` symmetric, CDF
:math:`F_\xi`. A signSGD step :math:`x \mapsto x - \eta\,\mathrm{sign}(g)` moves away from 0 with
probability :math:`p = F_\xi(-1/\sigma)`, independent of :math:`x` and :math:`a`. The lattice
:math:`c + \eta\mathbb Z` (:math:`c = x_0 \bmod \eta`) is invariant; write :math:`x = c + n\eta`,
:math:`r = p/(1-p)`. Detailed balance gives two geometric ladders

.. math:: \pi(n) = \tfrac{1-r}{2} r^{n} \;(n \ge 0), \qquad \pi(n) = \tfrac{1-r}{2} r^{-n-1} \;(n \le -1),

every step changes :math:`n` by :math:`\pm 1` (period 2), and

.. math:: E_\pi[x^2] = \tfrac{c^2 + (\eta - c)^2}{2} + \frac{2\eta^2 p(1-p)}{(1-2p)^2}.

**Additive noise**, :math:`g = a x + \sigma\xi`: a birth--death chain on the same lattice with
:math:`P(x \to x - \eta) = F_\xi(a x/\sigma)`.

No JAX and no I/O here: sympy for the algebra, numpy/scipy for the numeric helpers.
"""
from __future__ import annotations

import functools
import math
from numbers import Real

import numpy as np
import sympy as sp
from scipy import special, stats

__all__ = [
    "p_sym", "ladder_law", "second_moment_sym", "parity_second_moments_sym", "c_mid_sym", "c_unif_sym",
    "c_limits", "away_probability", "c_mid", "c_unif", "second_moment", "parity_second_moments",
    "ladder_pmf", "additive_chain", "additive_floor", "phi_add_expansion_sym", "phi_add_series", "additive_drift_floor_sym",
    "sgd_contraction_sym", "sgd_threshold", "sgd_contraction", "sgd_additive_floor", "sgd_mixed_second_moment",
    "sgd_schedule_second_moment", "floor", "NOISES", "METHODS", "LAWS",
]

NOISES = ("multiplicative", "additive")
METHODS = ("sign", "sgd")
LAWS = ("gaussian", "student")

p_sym, sigma_sym, eta_sym, a_sym, c_sym = sp.symbols("p sigma eta a c", positive=True)
n_sym = sp.Symbol("n", integer=True)


# ----------------------------------------------------------------------------- validation
def _positive(name: str, value, *, allow_zero: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{name}: expected a real number, got {type(value).__name__}")
    v = float(value)
    if not math.isfinite(v) or v < 0 or (v == 0 and not allow_zero):
        rng = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name}: expected a finite number {rng}, got {value!r}")
    return v


def _check_law(law: str, df) -> float | None:
    if law not in LAWS:
        raise ValueError(f"law: expected one of {LAWS}, got {law!r}")
    if law == "student":
        return _positive("df", df)
    return None


# ----------------------------------------------------------------------------- multiplicative, sympy
def ladder_law(p=p_sym):
    r"""The two-ladder stationary law as a sympy function of the lattice index :math:`n`.

    :math:`\pi(n) = \frac{1-r}{2} r^{n}` for :math:`n \ge 0` and :math:`\frac{1-r}{2} r^{-n-1}` for
    :math:`n \le -1`, with :math:`r = p/(1-p)`. Returned as ``(pi_plus(n), pi_minus(n), r)``.
    """
    r = p / (1 - p)
    return (1 - r) / 2 * r**n_sym, (1 - r) / 2 * r**(-n_sym - 1), r


def _geometric_sum(poly, k, q):
    r""":math:`\sum_{k\ge0} q^k P(k)` for a polynomial :math:`P`, from
    :math:`\sum_k k^j q^k = \big(q\,\tfrac{d}{dq}\big)^j \frac{1}{1-q}` (valid for :math:`|q| < 1`).

    Exact, and much faster than ``sympy.summation`` on these series.
    """
    z = sp.Dummy("z")
    coeffs = sp.Poly(sp.expand(poly), k).all_coeffs()[::-1]
    total, moment = 0, 1 / (1 - z)
    for coeff in coeffs:
        total += coeff * moment
        moment = sp.together(z * sp.diff(moment, z))
    return total.subs(z, q)


def second_moment_sym(p=p_sym, eta=eta_sym, c=c_sym):
    r""":math:`E_\pi[x^2]` summed exactly from the two ladders (sympy, for any offset ``c``).

    .. math:: \sum_{n\ge0}\pi(n)(c+n\eta)^2 + \sum_{n\le-1}\pi(n)(c+n\eta)^2
              = \frac{1-r}{2}\sum_{k\ge0} r^k\big[(c+k\eta)^2 + (\eta - c + k\eta)^2\big].
    """
    _, _, r = ladder_law(p)
    k = sp.Symbol("k", integer=True, nonnegative=True)
    body = (c + k * eta) ** 2 + (eta - c + k * eta) ** 2  # n = k and n = -1 - k carry the same weight
    return sp.simplify((1 - r) / 2 * _geometric_sum(body, k, r))


def parity_second_moments_sym(p=p_sym, eta=eta_sym, c=c_sym):
    r"""Limits of :math:`E[x_k^2]` along even and odd times for a chain started at :math:`n_0 = 0`.

    A period-2 chain started in the even class has law :math:`2\pi` restricted to that class at
    even times and to the odd class at odd times (each class carries mass 1/2). Returns
    ``(even, odd)``:

    .. math:: E_{\rm even} = 2\sum_{n\ \rm even}\pi(n)(c+n\eta)^2,\quad
              E_{\rm odd} = 2\sum_{n\ \rm odd}\pi(n)(c+n\eta)^2 .

    Even :math:`n` are :math:`2k` (weight :math:`r^{2k}`) and :math:`-2k-2` (weight
    :math:`r^{2k+1}`); odd :math:`n` are :math:`2k+1` (:math:`r^{2k+1}`) and :math:`-2k-1` (:math:`r^{2k}`).
    """
    _, _, r = ladder_law(p)
    k = sp.Symbol("k", integer=True, nonnegative=True)
    q = r**2
    A = (1 - r) / 2
    even = 2 * A * (_geometric_sum((c + 2 * k * eta) ** 2, k, q)
                    + r * _geometric_sum((c - (2 * k + 2) * eta) ** 2, k, q))
    odd = 2 * A * (r * _geometric_sum((c + (2 * k + 1) * eta) ** 2, k, q)
                   + _geometric_sum((c - (2 * k + 1) * eta) ** 2, k, q))
    return sp.simplify(even), sp.simplify(odd)


def c_mid_sym(e=None):
    r""":math:`C_{\rm mid} = E_\pi f/(a\eta^2)` at offset :math:`c = \eta/2`, in terms of :math:`e = 1 - 2p`.

    .. math:: C_{\rm mid} = \frac{1}{4e^2} - \frac18 .
    """
    e = sp.Symbol("e", positive=True) if e is None else e
    m2 = second_moment_sym(p=(1 - e) / 2, eta=1, c=sp.Rational(1, 2))
    return sp.simplify(m2 / 2)


def c_unif_sym(e=None):
    r""":math:`C_{\rm unif}`: the offset :math:`c` uniform on :math:`(0, \eta)`.

    .. math:: C_{\rm unif} = \frac{1}{\eta}\int_0^\eta \frac{E_\pi[x^2 \mid c]}{2\eta^2}\,dc = \frac{1}{4e^2} - \frac1{12}.
    """
    e = sp.Symbol("e", positive=True) if e is None else e
    m2 = second_moment_sym(p=(1 - e) / 2, eta=1, c=c_sym)
    return sp.simplify(sp.integrate(m2 / 2, (c_sym, 0, 1)))


def c_limits():
    r"""Limits of the Gaussian constants, :math:`e_\sigma = \mathrm{erf}(1/(\sqrt2\sigma))`.

    :math:`\sigma \to 0`: :math:`C_{\rm mid} \to 1/8`, :math:`C_{\rm unif} \to 1/6` (deterministic
    oscillation). :math:`\sigma \to \infty`: :math:`e_\sigma^2 = \tfrac{2}{\pi\sigma^2}(1 - \tfrac{1}{3\sigma^2} + \dots)`,
    so :math:`C_{\rm mid} = \pi\sigma^2/8 + \pi/24 - 1/8 + O(\sigma^{-2})` and
    :math:`C_{\rm unif} = \pi\sigma^2/8 + \pi/24 - 1/12 + O(\sigma^{-2})`. Returns a dict of
    sympy expressions: ``mid0, unif0, mid_inf, unif_inf`` (the last two: leading terms in
    :math:`\sigma`).
    """
    s = sp.Symbol("sigma", positive=True)
    e = sp.erf(1 / (sp.sqrt(2) * s))
    mid = c_mid_sym(e)
    unif = c_unif_sym(e)
    u = sp.Symbol("u", positive=True)  # u = 1/sigma
    mid_inf = sp.series(mid.subs(s, 1 / u), u, 0, 1).removeO().subs(u, 1 / s)
    unif_inf = sp.series(unif.subs(s, 1 / u), u, 0, 1).removeO().subs(u, 1 / s)
    return {
        "mid0": sp.limit(mid, s, 0, "+"), "unif0": sp.limit(unif, s, 0, "+"),
        "mid_inf": sp.expand(mid_inf), "unif_inf": sp.expand(unif_inf),
    }


# ----------------------------------------------------------------------------- multiplicative, numeric
def away_probability(sigma: float, law: str = "gaussian", df: float | None = None) -> float:
    r""":math:`p = F_\xi(-1/\sigma)`: probability that a noisy gradient has the wrong sign.

    Gaussian :math:`\xi`: :math:`p = \Phi(-1/\sigma)`; Student-t with ``df`` degrees of freedom
    (unit scale, not unit variance): :math:`p = F_{t_\nu}(-1/\sigma)`. :math:`p = 0` at :math:`\sigma = 0`.
    """
    sigma = _positive("sigma", sigma, allow_zero=True)
    df = _check_law(law, df)
    if sigma == 0:
        return 0.0
    if law == "gaussian":
        return float(special.ndtr(-1.0 / sigma))
    return float(stats.t.cdf(-1.0 / sigma, df))


def second_moment(p: float, eta: float, c: float) -> float:
    r""":math:`E_\pi[x^2] = \frac{c^2 + (\eta-c)^2}{2} + \frac{2\eta^2 p(1-p)}{(1-2p)^2}` (numeric)."""
    if not 0 <= p < 0.5:
        raise ValueError(f"p: expected 0 <= p < 1/2 (a contracting chain), got {p!r}")
    return (c**2 + (eta - c) ** 2) / 2 + 2 * eta**2 * p * (1 - p) / (1 - 2 * p) ** 2


def parity_second_moments(p: float, eta: float, c: float) -> tuple[float, float]:
    r"""Numeric :math:`(E_{\rm even}[x^2], E_{\rm odd}[x^2])` of :func:`parity_second_moments_sym`."""
    even, odd = _parity_lambdas()
    return float(even(p, eta, c)), float(odd(p, eta, c))


@functools.lru_cache(maxsize=1)
def _parity_lambdas():
    even, odd = parity_second_moments_sym()
    args = (p_sym, eta_sym, c_sym)
    return sp.lambdify(args, even, "math"), sp.lambdify(args, odd, "math")


def c_mid(sigma: float, law: str = "gaussian", df: float | None = None) -> float:
    r""":math:`C_{\rm mid}(\sigma) = 1/(4e^2) - 1/8`, :math:`e = 1 - 2F_\xi(-1/\sigma)`."""
    e = 1 - 2 * away_probability(sigma, law, df)
    return 1 / (4 * e**2) - 1 / 8


def c_unif(sigma: float, law: str = "gaussian", df: float | None = None) -> float:
    r""":math:`C_{\rm unif}(\sigma) = 1/(4e^2) - 1/12`."""
    e = 1 - 2 * away_probability(sigma, law, df)
    return 1 / (4 * e**2) - 1 / 12


def ladder_pmf(p: float, n: np.ndarray) -> np.ndarray:
    r""":math:`\pi(n)` of the two ladders at integer indices ``n`` (numeric)."""
    if not 0 <= p < 0.5:
        raise ValueError(f"p: expected 0 <= p < 1/2, got {p!r}")
    n = np.asarray(n)
    r = p / (1 - p)
    with np.errstate(divide="ignore"):
        return np.where(n >= 0, (1 - r) / 2 * r ** np.abs(n).astype(float), (1 - r) / 2 * r ** np.abs(n + 1).astype(float))


# ----------------------------------------------------------------------------- additive
def _logcdf(u: np.ndarray, law: str, df: float | None) -> np.ndarray:
    if law == "gaussian":
        return special.log_ndtr(u)
    return stats.t.logcdf(u, df)


def additive_chain(a: float, eta: float, sigma: float, c: float, *, law: str = "gaussian",
                   df: float | None = None, width: float = 40.0) -> tuple[np.ndarray, np.ndarray]:
    r"""Exact stationary law of signSGD under additive noise on the lattice :math:`c + \eta\mathbb Z`.

    :math:`P(x \to x+\eta) = F(-a x/\sigma)`, :math:`P(x \to x-\eta) = F(a x/\sigma)`; detailed
    balance :math:`\log\pi(n+1) - \log\pi(n) = \log F(-a x_n/\sigma) - \log F(a x_{n+1}/\sigma)`, summed
    with log-CDFs so that far tails neither underflow nor lose precision. The lattice is truncated
    where :math:`|x|` exceeds ``width`` times the larger of the diffusive scale
    :math:`\sqrt{\eta\sigma/a}` and the noise scale :math:`\sigma/a` (the law decays faster than
    geometrically there). Returns ``(x, pi)``.
    """
    a, eta, sigma = _positive("a", a), _positive("eta", eta), _positive("sigma", sigma)
    df = _check_law(law, df)
    # beyond |a x| ~ sigma the step away from 0 has probability F(-a|x|/sigma) -> 0, so the law
    # decays faster than geometrically there, for Gaussian and Student-t noise alike
    scale = max(math.sqrt(eta * sigma / a), sigma / a, eta)
    n_max = int(min(width * scale / eta + 10, 2_000_000))
    n = np.arange(-n_max, n_max + 1)
    x = c + n * eta
    step = _logcdf(-a * x[:-1] / sigma, law, df) - _logcdf(a * x[1:] / sigma, law, df)
    logpi = np.concatenate([[0.0], np.cumsum(step)])
    logpi -= logpi.max()
    pi = np.exp(logpi)
    return x, pi / pi.sum()


def additive_floor(a: float, eta: float, sigma: float, offset="mid", *, law: str = "gaussian",
                   df: float | None = None) -> float:
    r"""Stationary :math:`E f = \tfrac a2 E_\pi[x^2]` of signSGD under additive noise (exact chain).

    ``offset``: ``"mid"`` (:math:`c = \eta/2`), ``"uniform"`` (average over :math:`c \in (0,\eta)`
    by 16-point Gauss--Legendre quadrature) or a number in :math:`[0, \eta)`.
    """
    if offset == "uniform":
        nodes, weights = np.polynomial.legendre.leggauss(16)
        cs = eta * (nodes + 1) / 2
        return float(sum(w / 2 * additive_floor(a, eta, sigma, float(cc), law=law, df=df) for cc, w in zip(cs, weights)))
    c = eta / 2 if offset == "mid" else float(offset)
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
    log_phi = sp.series(sp.log((1 + sp.erf(t / sp.sqrt(2))) / 2), t, 0, 6).removeO()
    drift = sp.series(sp.expand(log_phi.subs(t, -h * z) - log_phi.subs(t, h * z + h**2)), h, 0, 6).removeO()
    unknowns = [sp.symbols(f"c{i}_1:{i + 5}") for i in range(3)]  # P_i has degree <= i + 4, no constant
    V = sum(h**i * sum(c * z ** (j + 1) for j, c in enumerate(cs)) for i, cs in enumerate(unknowns))
    balance = sp.Poly(sp.expand(sp.series(V.subs(z, z + h) - V, h, 0, 4).removeO() + drift), h)
    solution: dict = {}
    for order in (1, 2, 3):  # order h^k fixes P_{k-1}' (lower orders already substituted)
        eqs = sp.Poly(sp.expand(balance.coeff_monomial(h**order).subs(solution)), z).coeffs()
        solution.update(sp.solve(eqs, unknowns[order - 1], dict=True)[0])
    P = [sp.expand(sp.expand(V.subs(solution)).coeff(h, i)) for i in range(3)]
    P = [p_i.subs({c: 0 for cs in unknowns for c in cs}) for p_i in P]  # free (irrelevant) constants -> 0
    weight = sp.exp(-P[0])
    correction = sp.expand(1 - h * P[1] + h**2 * (P[1] ** 2 / 2 - P[2]))
    num = sp.integrate(sp.expand(z**2 * correction) * weight, (z, -sp.oo, sp.oo))
    den = sp.integrate(correction * weight, (z, -sp.oo, sp.oo))
    ez2 = sp.series(num / den, h, 0, 3).removeO()
    kappa = sp.Symbol("kappa", positive=True)
    return sp.simplify(sp.expand(ez2 / 2).subs(h, sp.sqrt(kappa)))


def phi_add_series(kappa):
    r"""The derived expansion :func:`phi_add_expansion_sym` evaluated at ``kappa`` (a number or a sympy expression):

    .. math:: \Phi_{\rm add}(\kappa) = \frac{\sqrt{2\pi}}{8} + \frac{\pi}{32}\kappa + O(\kappa^2).
    """
    return phi_add_expansion_sym().subs(sp.Symbol("kappa", positive=True), kappa)


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
    r"""Numeric :math:`\rho(\eta) = (1-\eta a)^2 + \eta^2 a^2\sigma^2`."""
    return (1 - eta * a) ** 2 + (eta * a * sigma) ** 2


def sgd_additive_floor(a: float, eta: float, sigma: float) -> float:
    r"""SGD with additive noise :math:`g = ax + \sigma\xi`: fixed point of
    :math:`v = (1-\eta a)^2 v + \eta^2\sigma^2`, :math:`E f = \tfrac a2 v = \frac{\eta\sigma^2}{2(2-\eta a)}`."""
    return eta * sigma**2 / (2 * (2 - eta * a))


def sgd_mixed_second_moment(a: float, eta: float, sigma_m: float, sigma_a: float) -> float:
    r"""Mixed noise :math:`g = ax(1+\sigma_m\xi_1) + \sigma_a\xi_2`:
    :math:`E x_\infty^2 = \frac{\eta\sigma_a^2}{a(2 - \eta a(1+\sigma_m^2))}` (infinite beyond the threshold)."""
    den = a * (2 - eta * a * (1 + sigma_m**2))
    return eta * sigma_a**2 / den if den > 0 else math.inf


def sgd_schedule_second_moment(a: float, etas: np.ndarray, x0_sq: float, sigma_m: float = 0.0,
                               sigma_a: float = 0.0) -> np.ndarray:
    r"""Exact :math:`E x_k^2` of SGD along any step-size schedule :math:`(\eta_k)`, mixed noise:

    .. math:: v_{k+1} = \big((1-\eta_k a)^2 + \eta_k^2a^2\sigma_m^2\big) v_k + \eta_k^2\sigma_a^2 .

    Returns :math:`v_0, \dots, v_K` (length ``len(etas) + 1``); computed in log space for the
    purely multiplicative case so that values far below the float range stay meaningful as logs.
    """
    etas = np.asarray(etas, dtype=float)
    rho = (1 - etas * a) ** 2 + (etas * a * sigma_m) ** 2
    if sigma_a == 0:
        return np.concatenate([[x0_sq], x0_sq * np.exp(np.cumsum(np.log(rho)))])
    v = np.empty(len(etas) + 1)
    v[0] = x0_sq
    for k, (r, e) in enumerate(zip(rho, etas)):
        v[k + 1] = r * v[k] + (e * sigma_a) ** 2
    return v


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
    a = _positive("a", a)
    eta = _positive("eta", eta)
    sigma = _positive("sigma", sigma, allow_zero=True)
    if noise not in NOISES:
        raise ValueError(f"noise: expected one of {NOISES}, got {noise!r}")
    if method not in METHODS:
        raise ValueError(f"method: expected one of {METHODS}, got {method!r}")
    if isinstance(offset, str):
        if offset not in ("mid", "uniform"):
            raise ValueError(f"offset: expected 'mid', 'uniform' or a number in [0, eta), got {offset!r}")
    else:
        if isinstance(offset, bool) or not isinstance(offset, Real) or not 0 <= float(offset) < eta:
            raise ValueError(f"offset: expected 'mid', 'uniform' or a number in [0, eta={eta}), got {offset!r}")
    df = _check_law(law, df)
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
    p = away_probability(sigma, law, df)
    if p >= 0.5:
        return math.inf
    if offset == "mid":
        c = eta / 2
    elif offset == "uniform":
        # average of (c^2 + (eta-c)^2)/2 over c uniform on (0, eta) is eta^2/3
        return a / 2 * (eta**2 / 3 + 2 * eta**2 * p * (1 - p) / (1 - 2 * p) ** 2)
    else:
        c = float(offset)
        if c == 0:
            return 0.0  # x0 on the lattice through 0: sign(0) = 0 freezes the walk at the minimizer
    return a / 2 * second_moment(p, eta, c)
