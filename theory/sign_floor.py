r"""Noise floors of signSGD and SGD on the quadratic :math:`f(x) = a x^2/2`, and their constants.

Paper: Singh, Mishra, Raut (2026), arXiv 2607.12360. Only the abstract was available; every
formula here is DERIVED (worked out for steplab) and checked against simulation in
``paper_checks/sign_floor/`` (the experiments in ``paper_checks/sign_floor/experiments.py``).

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

**Schedules.** Along a decaying step size neither chain has a closed form; :func:`sign_schedule_mean_f`
evolves the exact law of :math:`x_k` on a grid (the only error is the grid's, and it is returned),
and SGD's exact second-moment recursion and fixed points are those of the shared noisy quadratic
(:func:`theory.nqm.moment_recursion`, :func:`theory.nqm.stationary_second_moment`,
:func:`theory.nqm.stationary_excess`: :math:`g = a x(1+\sigma_m\xi_1) + \sigma_a\xi_2` is its one-mode
case at batch size 1).

No JAX and no I/O here: sympy for the algebra, numpy/scipy for the numeric helpers. Every public
function validates its arguments (:mod:`theory.validate`).
"""
from __future__ import annotations

import contextlib
import functools
import inspect
import math
from typing import NamedTuple

import numpy as np
import sympy as sp
from scipy import fft, integrate, sparse, special, stats

from theory import validate as V
from theory import nqm

__all__ = [
    "p_sym", "ladder_law", "second_moment_sym", "parity_second_moments_sym", "c_mid_sym", "c_unif_sym",
    "c_limits", "away_probability", "contraction", "c_mid", "c_unif", "c_sde", "second_moment",
    "parity_second_moments", "ladder_pmf", "additive_chain", "additive_floor", "phi_add_expansion_sym",
    "phi_add_series", "additive_drift_floor_sym", "student_density_at_zero", "sgd_contraction_sym",
    "sgd_threshold", "sgd_contraction", "sgd_additive_floor", "sgd_mult_log_step", "sgd_mult_log_f", "sgd_mult_log_mean_f", "sign_schedule_mean_f", "floor", "mixed_chain", "mixed_floor", "crossover_eta",
    "uniform_additive_floor", "SignumConstant", "signum_constant", "NOISES", "METHODS", "LAWS",
]

NOISES = ("multiplicative", "additive")
METHODS = ("sign", "sgd")
LAWS = ("gaussian", "student", "uniform")  # uniform: xi on [-1, 1]

p_sym, sigma_sym, eta_sym, a_sym, c_sym = sp.symbols("p sigma eta a c", positive=True)
n_sym = sp.Symbol("n", integer=True)


# ----------------------------------------------------------------------------- validation helpers
def _law(law, df) -> float | None:
    """The noise law and, for Student-t, its degrees of freedom (a real number > 0)."""
    V.choice("law", law, LAWS)
    if law == "student":
        if df is None:
            raise ValueError("df: the Student-t law needs degrees of freedom df > 0, got None")
        return V.real("df", df, low=0.0, low_open=True)
    if df is not None:
        V.real("df", df, low=0.0, low_open=True)  # ignored for the Gaussian law, but never NaN or a string
    return None


def _sym_cache(fn):
    """``functools.lru_cache`` for the sympy derivations, with unhashable arguments (arrays, lists) refused by name."""
    cached = functools.lru_cache(maxsize=32)(fn)
    sig = inspect.signature(fn)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        for name, value in sig.bind(*args, **kwargs).arguments.items():
            try:
                hash(value)
            except TypeError:
                raise TypeError(f"{name}: expected a real number or a sympy expression, got {type(value).__name__} "
                                f"{value!r}") from None
        return cached(*args, **kwargs)

    wrapper.cache_clear = cached.cache_clear
    return wrapper


def _sym_or(name: str, x, **bounds):
    """A sympy expression, or a real number validated by ``bounds`` (integers and sympy numbers stay exact)."""
    if isinstance(x, sp.Basic) and not x.is_number:
        return x
    value = V.real(name, float(x) if isinstance(x, sp.Basic) else x, **bounds)
    return sp.nsimplify(x) if isinstance(x, (sp.Basic, int, np.integer)) else value


def _contracting_p(p) -> float:
    """A wrong-sign probability of a contracting chain: :math:`0 \\le p < 1/2`."""
    p = V.real("p", p, low=0.0, high=0.5, high_open=True)
    return p


def _finite(value, **inputs) -> float:
    """``value`` as a float, or ``ValueError`` naming the inputs when it overflows float64."""
    with np.errstate(over="ignore", invalid="ignore"):
        v = float(value)
    if not np.isfinite(v):
        shown = ", ".join(f"{k} = {x!r}" for k, x in inputs.items())
        raise ValueError(f"{', '.join(inputs)}: the result overflows float64 at {shown}; expected smaller values")
    return v


def _f64(*xs):
    """Scalars as NumPy float64 (arithmetic overflows to inf instead of raising OverflowError)."""
    return tuple(np.float64(x) for x in xs)


# ----------------------------------------------------------------------------- multiplicative, sympy
def ladder_law(p=p_sym):
    r"""The two-ladder stationary law as a sympy function of the lattice index :math:`n`.

    :math:`\pi(n) = \frac{1-r}{2} r^{n}` for :math:`n \ge 0` and :math:`\frac{1-r}{2} r^{-n-1}` for
    :math:`n \le -1`, with :math:`r = p/(1-p)`. Returned as ``(pi_plus(n), pi_minus(n), r)``;
    ``p`` is a symbol or a number in :math:`[0, 1/2)`.
    """
    p = _sym_or("p", p, low=0.0, high=0.5, high_open=True)
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


@_sym_cache  # pure in hashable sympy arguments; the sums take ~1 s
def second_moment_sym(p=p_sym, eta=eta_sym, c=c_sym):
    r""":math:`E_\pi[x^2]` summed exactly from the two ladders (sympy, for any offset ``c``).

    .. math:: \sum_{n\ge0}\pi(n)(c+n\eta)^2 + \sum_{n\le-1}\pi(n)(c+n\eta)^2
              = \frac{1-r}{2}\sum_{k\ge0} r^k\big[(c+k\eta)^2 + (\eta - c + k\eta)^2\big].
    """
    _, _, r = ladder_law(p)
    eta = _sym_or("eta", eta, low=0.0, low_open=True)
    c = _sym_or("c", c, low=0.0)
    k = sp.Symbol("k", integer=True, nonnegative=True)
    body = (c + k * eta) ** 2 + (eta - c + k * eta) ** 2  # n = k and n = -1 - k carry the same weight
    return sp.simplify((1 - r) / 2 * _geometric_sum(body, k, r))


@_sym_cache
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
    eta = _sym_or("eta", eta, low=0.0, low_open=True)
    c = _sym_or("c", c, low=0.0)
    k = sp.Symbol("k", integer=True, nonnegative=True)
    q = r**2
    A = (1 - r) / 2
    even = 2 * A * (_geometric_sum((c + 2 * k * eta) ** 2, k, q)
                    + r * _geometric_sum((c - (2 * k + 2) * eta) ** 2, k, q))
    odd = 2 * A * (r * _geometric_sum((c + (2 * k + 1) * eta) ** 2, k, q)
                   + _geometric_sum((c - (2 * k + 1) * eta) ** 2, k, q))
    return sp.simplify(even), sp.simplify(odd)


@_sym_cache
def c_mid_sym(e=None):
    r""":math:`C_{\rm mid} = E_\pi f/(a\eta^2)` at offset :math:`c = \eta/2`, in terms of :math:`e = 1 - 2p`.

    .. math:: C_{\rm mid} = \frac{1}{4e^2} - \frac18 .

    ``e``: a symbol or expression (default the positive symbol ``e``), or a number in :math:`(0, 1]`.
    """
    e = sp.Symbol("e", positive=True) if e is None else _sym_or("e", e, low=0.0, high=1.0, low_open=True)
    m2 = second_moment_sym(p=(1 - e) / 2, eta=1, c=sp.Rational(1, 2))
    return sp.simplify(m2 / 2)


@_sym_cache
def c_unif_sym(e=None):
    r""":math:`C_{\rm unif}`: the offset :math:`c` uniform on :math:`(0, \eta)`.

    .. math:: C_{\rm unif} = \frac{1}{\eta}\int_0^\eta \frac{E_\pi[x^2 \mid c]}{2\eta^2}\,dc = \frac{1}{4e^2} - \frac1{12}.
    """
    e = sp.Symbol("e", positive=True) if e is None else _sym_or("e", e, low=0.0, high=1.0, low_open=True)
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
    (unit scale, not unit variance): :math:`p = F_{t_\nu}(-1/\sigma)`; uniform on :math:`[-1, 1]`:
    :math:`p = \max(0, (1 - 1/\sigma)/2)`. :math:`p = 0` at :math:`\sigma = 0`.
    """
    sigma = V.real("sigma", sigma, low=0.0)
    df = _law(law, df)
    if sigma == 0:
        return 0.0
    if law == "gaussian":
        return float(special.ndtr(-1.0 / sigma))
    if law == "uniform":
        return max(0.0, (1.0 - 1.0 / sigma) / 2)
    return float(stats.t.cdf(-1.0 / sigma, df))


def contraction(sigma: float, law: str = "gaussian", df: float | None = None) -> float:
    r""":math:`e_\sigma = 1 - 2p = P(|\xi| < 1/\sigma)`, the mean step toward 0 in units of :math:`\eta`.

    Computed without the cancellation of :math:`1 - 2p` at large :math:`\sigma`: Gaussian
    :math:`e = \mathrm{erf}(1/(\sqrt2\sigma))`; Student-t :math:`e = I_{t^2/(\nu + t^2)}(\tfrac12, \tfrac\nu2)`,
    :math:`t = 1/\sigma` (regularized incomplete beta).
    """
    sigma = V.real("sigma", sigma, low=0.0)
    df = _law(law, df)
    if sigma == 0:
        return 1.0
    t = 1.0 / sigma
    if law == "gaussian":
        return float(special.erf(t / math.sqrt(2.0)))
    if law == "uniform":
        return min(1.0, t)
    return float(special.betainc(0.5, df / 2, t * t / (df + t * t)))


def _inverse_square_contraction(sigma, law, df) -> float:
    """:math:`1/e^2`, refusing a :math:`\\sigma` so large that it overflows float64."""
    e = contraction(sigma, law, df)
    if not e > 1e-150:
        raise ValueError(f"sigma: expected a noise level whose contraction 1 - 2p = {e:.3g} is representable "
                         f"(1/(1-2p)^2 overflows float64 beyond sigma ~ 1e150), got {sigma!r}")
    return 1.0 / (e * e)


def c_mid(sigma: float, law: str = "gaussian", df: float | None = None) -> float:
    r""":math:`C_{\rm mid}(\sigma) = 1/(4e^2) - 1/8`, :math:`e = 1 - 2F_\xi(-1/\sigma)` (:func:`contraction`)."""
    return _inverse_square_contraction(sigma, law, df) / 4 - 1 / 8


def c_unif(sigma: float, law: str = "gaussian", df: float | None = None) -> float:
    r""":math:`C_{\rm unif}(\sigma) = 1/(4e^2) - 1/12`."""
    return _inverse_square_contraction(sigma, law, df) / 4 - 1 / 12


def c_sde(sigma: float, law: str = "gaussian", df: float | None = None) -> float:
    r"""The floor constant a first-order SDE would predict (a rival of :func:`c_mid`, not a steplab claim).

    A sign step in units of :math:`\eta` has mean :math:`-e\,\mathrm{sign}(y)` and variance :math:`1 - e^2`;
    the diffusion :math:`dY = -e\,\mathrm{sign}(Y)\,dt + \sqrt{1-e^2}\,dW` has the Laplace law
    :math:`\propto e^{-2e|y|/(1-e^2)}`, so :math:`E y^2 = (1-e^2)^2/(2e^2)` and

    .. math:: C_{\rm SDE} = \frac{(1-e^2)^2}{4e^2}.

    It has the right :math:`\eta^2` scaling but not the lattice chain's constant.
    """
    inv = _inverse_square_contraction(sigma, law, df)
    e2 = 1.0 / inv
    return (1 - e2) ** 2 * inv / 4


def second_moment(p: float, eta: float, c: float) -> float:
    r""":math:`E_\pi[x^2] = \frac{c^2 + (\eta-c)^2}{2} + \frac{2\eta^2 p(1-p)}{(1-2p)^2}` (numeric).

    ``p`` in :math:`[0, 1/2)` (a contracting chain), ``eta > 0``, offset ``c`` in :math:`[0, \eta]`.
    """
    p = _contracting_p(p)
    eta = V.real("eta", eta, low=0.0, low_open=True)
    c = V.real("c", c, low=0.0, high=eta)
    p, eta, c = _f64(p, eta, c)
    return _finite((c**2 + (eta - c) ** 2) / 2 + 2 * eta**2 * p * (1 - p) / (1 - 2 * p) ** 2, eta=float(eta), c=float(c))


def parity_second_moments(p: float, eta: float, c: float) -> tuple[float, float]:
    r"""Numeric :math:`(E_{\rm even}[x^2], E_{\rm odd}[x^2])` of :func:`parity_second_moments_sym`
    (chain started at :math:`n_0 = 0`, offset ``c`` in :math:`[0, \eta]`, ``p`` in :math:`[0, 1/2)`)."""
    p = _contracting_p(p)
    eta = V.real("eta", eta, low=0.0, low_open=True)
    c = V.real("c", c, low=0.0, high=eta)
    even, odd = _parity_lambdas()
    p, eta, c = _f64(p, eta, c)
    return _finite(even(p, eta, c), eta=float(eta), c=float(c)), _finite(odd(p, eta, c), eta=float(eta), c=float(c))


@functools.lru_cache(maxsize=1)
def _parity_lambdas():
    even, odd = parity_second_moments_sym()
    args = (p_sym, eta_sym, c_sym)
    return sp.lambdify(args, even, "numpy"), sp.lambdify(args, odd, "numpy")


def ladder_pmf(p: float, n) -> np.ndarray:
    r""":math:`\pi(n)` of the two ladders at integer indices ``n`` (numeric; ``p`` in :math:`[0, 1/2)`)."""
    p = _contracting_p(p)
    raw = V.integers("n", n, nonempty=False)  # lattice indices (an empty array gives an empty pmf)
    r = p / (1 - p)
    k = np.where(raw >= 0, raw, -raw - 1).astype(float)  # distance from the pair {0, -1} along its ladder
    with np.errstate(divide="ignore", invalid="ignore"):
        return (1 - r) / 2 * np.where(k == 0, 1.0, r**k)


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
    return _finite(math.sqrt(2 * math.pi) * sigma_a / (8 * c_mid(sigma_m) * a), sigma_a=sigma_a, a=a)


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
    return _finite((1 - eta * a) ** 2 + (eta * a * sigma) ** 2, a=float(a), eta=float(eta), sigma=float(sigma))


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
        return _finite(float(nqm.stationary_excess(a, eta, sigma)), eta=eta, sigma=sigma)


# ----------------------------------------------------------------------------- signSGD along a schedule
def _push(mass: np.ndarray, cells: float) -> np.ndarray:
    r"""Move a piecewise-constant law by ``cells`` (any real number of cells) and project it back on the grid.

    With ``cells`` :math:`= j + \alpha` (:math:`0 \le \alpha < 1`) each cell's mass lands on cells
    :math:`i + j` and :math:`i + j + 1` in the proportions :math:`1 - \alpha` and :math:`\alpha`: the exact
    image, spread uniformly over the grid cells it covers (mean kept, variance up by
    :math:`\alpha(1-\alpha)h^2`). Mass leaving the grid is dropped.
    """
    j = math.floor(cells)
    alpha = cells - j
    out = _shift_cells(mass, j)
    if alpha > 0:
        out = (1 - alpha) * out + alpha * _shift_cells(mass, j + 1)
    return out


def _shift_cells(mass: np.ndarray, cells: int) -> np.ndarray:
    """Move a law by a whole number of cells (exact); mass leaving the grid is dropped (and counted by the caller)."""
    out = np.zeros_like(mass)
    if cells > 0:
        out[cells:] = mass[:-cells]
    elif cells < 0:
        out[:cells] = mass[-cells:]
    else:
        out[:] = mass
    return out


def _rescale(mass: np.ndarray, edges: np.ndarray, factor: float) -> np.ndarray:
    """The law of ``factor * y`` (``factor > 0``) projected on the grid of ``y``."""
    cdf = np.concatenate([[0.0], np.cumsum(mass)])
    return np.diff(np.interp(edges / factor, edges, cdf, left=0.0, right=cdf[-1]))


def _evolve_sign_law(a, eta, sigma, multiplicative, p_const, x0_low, x0_high, cells, law, df) -> np.ndarray:
    """The grid evolution of :func:`sign_schedule_mean_f` at one cell width: :math:`E x_k^2`, k = 0..K."""
    h = 1.0 / cells
    if multiplicative:
        # coordinates y = x / s_k with s_k = max(eta_k, 16 min eta): whole-cell steps while eta_k is the
        # scale; the floor keeps the lagging law of the last steps of a decay on the grid
        scale = np.maximum(eta, min(16 * eta.min(), eta.max()))
        r = p_const / (1 - p_const)
        tail = 3.0 if r == 0 else 1.5 * (math.log(1e-30) / math.log(r) + 3)  # stationary weight beyond: < 1e-45
    else:
        # coordinates z = x / max(eta): the additive law keeps a fixed width in x, below sqrt(eta sigma / a)
        scale = np.full_like(eta, eta.max())
        tail = 12 * math.sqrt(eta.max() * sigma / a) / eta.max() + 3
    top = max(abs(x0_low), abs(x0_high)) / scale[0] + tail
    n_half = int(math.ceil(top * cells))
    if not 2 * n_half <= 4_000_000:
        raise ValueError(f"cells, x0_high: the grid needs {2 * n_half:.3g} cells (the start is {top:.3g} steps from 0); "
                         "expected at most 4e6: lower cells or start closer to 0")
    edges = np.arange(-n_half, n_half + 1) * h
    centres = (edges[:-1] + edges[1:]) / 2
    positive = centres > 0
    lo, hi = x0_low / scale[0], x0_high / scale[0]
    mass = np.diff(np.clip((edges - lo) / (hi - lo), 0.0, 1.0))
    # away-from-0 probability per cell: constant (multiplicative), or F(-a|x|/sigma) on the fixed x-grid
    p = p_const if multiplicative else _cdf(-a * np.abs(centres) * scale[0] / sigma, law, df)
    K = len(eta)
    scales = np.concatenate([scale, [scale[-1]]])  # the state at time k is stored in units of scales[k]
    second = np.empty(K + 1)
    for k in range(K + 1):
        second[k] = scales[k] ** 2 * (np.sum(mass * centres**2) + mass.sum() * h * h / 12)
        if k == K:
            break
        down = np.where(positive, mass * (1 - p), mass * p)  # moves toward -infinity
        up = mass - down
        whole = eta[k] / scales[k] * cells  # the step in cells
        if abs(whole - round(whole)) < 1e-9 * whole:
            whole = round(whole)  # a whole number of cells up to round-off: the move is exact
        mass = _push(down, -whole) + _push(up, whole)
        factor = scales[k] / scales[k + 1]
        if factor != 1.0:
            mass = _rescale(mass, edges, factor)
    return second


def sign_schedule_mean_f(a: float, eta, sigma: float, noise: str = "multiplicative", *, x0_low: float,
                         x0_high: float, cells: int = 64, law: str = "gaussian", df: float | None = None,
                         ) -> tuple[np.ndarray, np.ndarray]:
    r""":math:`E f(x_k)`, :math:`k = 0..K`, of 1-d signSGD along step sizes ``eta`` :math:`= (\eta_0..\eta_{K-1})`.

    :math:`x_0` is uniform on ``(x0_low, x0_high)`` (an interval not containing 0);
    :math:`g = a x(1+\sigma\xi)` (``"multiplicative"``) or :math:`a x + \sigma\xi` (``"additive"``).
    The law of :math:`x_k` is evolved as a piecewise-constant density on a grid: a step sends the
    mass at :math:`x` to :math:`x - \eta_k\,\mathrm{sign}(x)` with probability :math:`1 - p(x)` and to
    :math:`x + \eta_k\,\mathrm{sign}(x)` with probability :math:`p(x)` (:math:`p = F_\xi(-1/\sigma)`, or
    :math:`F_\xi(-a|x|/\sigma)` at the cell centre). The grid has ``cells`` cells per unit of a scale
    :math:`s_k`: for multiplicative noise :math:`s_k = \max(\eta_k, 16\min_j\eta_j)` (the law's width is
    :math:`\propto\eta_k`, so each step moves whole cells and only a change of scale is projected back
    on the grid; the floor keeps the lagging law of a decay's last steps resolved), for additive
    noise :math:`s_k = \max_j \eta_j` (its law keeps a fixed width in :math:`x`; steps with
    :math:`\eta_k < s_k` are projected). A uniform start keeps the law flat within cells, so at a
    constant step the evolution is exact; each projection spreads mass within a cell, an
    :math:`O(h^2)` error. The grid reaches past the start and the stationary law's tail (weight
    beyond the edge below 1e-30).

    Returns ``(mean_f, err)``, both of length :math:`K + 1`: :math:`E f(x_k)` with ``cells`` cells
    per unit, and the change when the cell width is doubled, :math:`|E_h - E_{2h}|`. For an
    :math:`O(h^2)` error this is three times the error of :math:`E_h` (the tests check the ratio 4
    of successive differences).
    """
    a = V.real("a", a, low=0.0, low_open=True)
    eta = V.array("eta", eta, ndim=1, low=0.0, low_open=True)
    V.choice("noise", noise, NOISES)
    sigma = V.real("sigma", sigma, low=0.0, low_open=(noise == "additive"))
    x0_low = V.real("x0_low", x0_low)
    x0_high = V.real("x0_high", x0_high)
    if not x0_high > x0_low:
        raise ValueError(f"x0_high: expected x0_high > x0_low = {x0_low}, got {x0_high}")
    if x0_low < 0 < x0_high:
        raise ValueError(f"x0_low: the start interval must not contain 0 (a grid edge), got ({x0_low}, {x0_high})")
    cells = V.integer("cells", cells, low=2, high=4096)
    if cells % 2:
        raise ValueError(f"cells: expected an even number (the error estimate halves it), got {cells}")
    df = _law(law, df)
    multiplicative = noise == "multiplicative"
    p_const = None
    if multiplicative:
        p_const = away_probability(sigma, law, df)
        if not p_const < 0.5:
            raise ValueError(f"sigma: signSGD contracts only while p = F(-1/sigma) < 1/2, got p = {p_const}")
    args = (a, eta, sigma, multiplicative, p_const, x0_low, x0_high)
    fine = _evolve_sign_law(*args, cells, law, df)
    coarse = _evolve_sign_law(*args, cells // 2, law, df)
    return a / 2 * fine, a / 2 * np.abs(fine - coarse)


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
    excess = 2 * eta**2 * (inv - 1) / 4  # 2 eta^2 p(1-p)/(1-2p)^2 with 4p(1-p) = 1 - e^2
    if offset == "mid":
        c = eta / 2
    elif offset == "uniform":
        # average of (c^2 + (eta-c)^2)/2 over c uniform on (0, eta) is eta^2/3
        return _finite(a / 2 * (eta**2 / 3 + excess), a=float(a), eta=float(eta))
    else:
        c = offset
        if c == 0:
            return 0.0  # x0 on the lattice through 0: sign(0) = 0 freezes the walk at the minimizer
    return _finite(a / 2 * ((c**2 + (eta - c) ** 2) / 2 + excess), a=float(a), eta=float(eta))


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


# ----------------------------------------------------------------------------- Signum: the floor constant
class SignumConstant(NamedTuple):
    r"""The Signum floor constant :math:`C = E_\pi f/(a\eta^2)` of :func:`signum_constant`, with its error budget.

    ``value``: :math:`C` on the fine grid; ``err``: the discretisation-error estimate (fine minus coarse
    grid, plus the offset quadrature's change where ``offset = "uniform"``); ``leak``: the stationary mass
    that leaves the truncated state space per step (lattice index beyond :math:`\pm N`, buffer beyond
    :math:`\pm W`), which the iteration renormalises away; ``n_max`` (:math:`N`) and ``w_max``
    (:math:`W/a`, the buffer range in units of :math:`a\eta`); ``cells``: cells per :math:`a\min(\beta, 1-\beta)`
    of the buffer on the fine grid.
    """

    value: float
    err: float
    leak: float
    n_max: int
    w_max: float
    cells: int


def _cdf_antiderivative(x: np.ndarray, law: str, df: float | None) -> np.ndarray:
    r"""An antiderivative :math:`G` of the noise CDF, :math:`G' = F_\xi` (defined up to a constant).

    Gaussian: :math:`G(x) = x\Phi(x) + \varphi(x)`. Uniform on :math:`[-1, 1]`: :math:`0`,
    :math:`(x+1)^2/4`, :math:`x` on :math:`x < -1`, :math:`|x| \le 1`, :math:`x > 1`. Student-t with any
    real :math:`\nu > 0`: :math:`G(x) = xF(x) - \int_0^x t f(t)\,dt` (integration by parts), where
    :math:`\int_0^x t f(t)\,dt = k_\nu\frac{\nu}{1-\nu}\big[(1 + x^2/\nu)^{(1-\nu)/2} - 1\big]`
    (:math:`\tfrac{k_1}{2}\log(1+x^2)` at :math:`\nu = 1`), :math:`k_\nu = f(0)`: finite for every
    :math:`\nu`, although :math:`\int_{-\infty}^x F` diverges for :math:`\nu \le 1`. Only second differences
    of :math:`G` are used, so the constant does not matter.
    """
    if law == "gaussian":
        return x * special.ndtr(x) + np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)
    if law == "uniform":
        return np.where(x < -1, 0.0, np.where(x > 1, x, (x + 1) ** 2 / 4))
    k = student_density_at_zero(df)
    half = (1.0 - df) / 2.0
    log1p = np.log1p(x * x / df)
    if abs(half) < 1e-12:
        inner = k / 2 * log1p
    else:
        inner = k * df / (1.0 - df) * np.expm1(half * log1p)
    return x * special.stdtr(df, x) - inner


def _noise_quantile(law: str, df: float | None, tail: float) -> float:
    """The level q with P(|xi| > q) = tail (the uniform law: 1, its support), capped at 20 for heavy tails."""
    if law == "uniform":
        return 1.0
    if law == "gaussian":
        return float(-special.ndtri(tail / 2))
    return min(20.0, float(-special.stdtrit(df, tail / 2)))


class _SignumOperator(NamedTuple):
    r"""The truncated Signum transfer operator of :func:`_signum_operator`.

    ``step(P)``: one step of the whole law ``P[row, cell]`` (row :math:`r = n + N`), returning
    ``(P', (leak_w, leak_n))``; ``half(X, parity)``: one step of the rows of one parity alone (``X`` holds
    rows ``parity, parity + 2, ...``), returning the rows of the other parity it feeds (mass that leaves the
    box is dropped); ``shape``: ``(2N + 1, cells)``; ``u``: :math:`\theta + n` per row.
    """

    step: object
    shape: tuple
    u: np.ndarray
    half: object


def _signum_operator(beta, sigma, theta, law, df, a, h, n_max, w_max) -> _SignumOperator:
    r"""One step of the Signum chain on the truncated, discretised state space, as a function on mass arrays.

    State: lattice index :math:`n \in [-N, N]` (:math:`u = \theta + n`) and the buffer
    :math:`v = m/\eta` in cells of width ``h`` on :math:`[-W, W]` (0 is an edge), mass ``P[n, cell]``
    piecewise constant within cells. A step: the buffer's law is contracted by :math:`\beta` (the exact
    law of :math:`\beta v`, projected on the grid), convolved with the law of
    :math:`(1-\beta) a u (1 + \sigma\xi)` integrated over a source cell (second differences of
    :func:`_cdf_antiderivative`: a Toeplitz kernel per :math:`n`, applied by FFT), and split at
    :math:`v' = 0`: mass with :math:`v' > 0` moves to :math:`n - 1`, with :math:`v' < 0` to
    :math:`n + 1`. At :math:`\beta = 0` the contracted law is a point mass at 0 and the kernel is
    the exact cell law (differences of :math:`F_\xi`, the end cells taking the tails): the split at 0 is exact.

    Every step moves :math:`n` by :math:`\pm 1`, so the rows of one parity feed only the rows of the other:
    ``half`` advances one parity class at half the cost of ``step``. Returns a :class:`_SignumOperator`;
    ``step``'s ``leak`` is the mass that left the grid, as a pair (past :math:`\pm W`, past :math:`\pm N`).
    """
    m_half = int(math.ceil(w_max / h - 1e-9))  # W is a whole number of coarse cells, up to round-off
    edges = np.arange(-m_half, m_half + 1) * h
    cells_total = 2 * m_half  # cells m_half, m_half + 1, ... have v > 0
    n = np.arange(-n_max, n_max + 1)
    rows = len(n)
    u = theta + n
    mu = ((1 - beta) * a * u)[:, None]
    s = ((1 - beta) * sigma * a * np.abs(u))[:, None]
    if beta == 0:
        # v' = a u (1 + sigma xi) exactly: the cell law is a difference of CDFs (no source cell to average)
        cdf = _cdf((edges[None, :] - mu) / s, law, df)
        cdf[:, 0], cdf[:, -1] = 0.0, 1.0  # the end cells take the tails: the next step does not read v at beta = 0
        kernel = np.diff(cdf, axis=1)

        def transport(X, sel):
            return X.sum(axis=1, keepdims=True) * kernel[sel]
    else:
        offsets = np.arange(-(cells_total - 1), cells_total) * h  # target minus source cell centre
        x = offsets[None, :] - mu
        G = functools.partial(_cdf_antiderivative, law=law, df=df)
        kernel = np.maximum(s / h * (G((x + h) / s) - 2 * G(x / s) + G((x - h) / s)), 0.0)  # round-off can go below 0
        support = np.nonzero(kernel.max(axis=0) > 1e-18)[0]  # beyond: below round-off of the cell masses
        lo, hi = support[0], support[-1] + 1
        kernel = kernel[:, lo:hi]
        shift = lo - (cells_total - 1)  # offset, in cells, of the kernel's first entry
        start = -shift  # full-convolution index of target cell 0
        full_len = cells_total + kernel.shape[1] - 1
        lo_t, hi_t = max(0, start), min(full_len, start + cells_total)
        # a circular convolution of length L equals the full one, aliased mod L: the targets [lo_t, hi_t) are
        # free of aliasing once L >= hi_t and L >= full_len - lo_t (both inputs must also fit in L)
        length = fft.next_fast_len(max(cells_total, kernel.shape[1], hi_t, full_len - lo_t), real=True)
        kernel_f = fft.rfft(kernel, length, axis=1)
        # the law of beta v: its cell masses are a fixed linear map of the old ones (the old CDF piecewise linear
        # between edges, read at edges / beta): a sparse matrix, about 1 + 1/beta old cells per new cell
        t = np.clip(edges / beta, edges[0], edges[-1])
        first = np.clip(np.searchsorted(edges, t, side="right") - 1, 0, cells_total - 1)  # old cell holding t_j
        span = int((first[1:] - first[:-1]).max()) + 1  # old cells a new cell can overlap
        j = np.repeat(np.arange(cells_total), span)
        i = np.minimum(first[:-1, None] + np.arange(span)[None, :], cells_total - 1).ravel()

        def below(tt, ii):  # the share of old cell ii below tt
            return np.clip((tt - edges[ii]) / h, 0.0, 1.0)
        share = below(t[1:][j], i) - below(t[:-1][j], i)
        keep = (share > 0) & (np.arange(len(i)) % span <= first[1:][j] - first[:-1][j])  # no cell counted twice
        contract = sparse.csr_matrix((share[keep], (i[keep], j[keep])), shape=(cells_total, cells_total))

        def transport(X, sel):
            R = (contract.T @ X.T).T if X.shape[0] else X
            full = fft.irfft(fft.rfft(R, length, axis=1) * kernel_f[sel], length, axis=1)
            if lo_t - start == 0 and hi_t - start == cells_total:
                return full[:, lo_t:hi_t]
            C = np.zeros_like(X)
            C[:, lo_t - start:hi_t - start] = full[:, lo_t:hi_t]
            return C

    def step(P):
        return _split(transport(P, slice(None)), m_half, P.sum())

    def half(X, parity):
        # rows r = parity + 2i; v' > 0 moves r to r - 1, v' < 0 to r + 1 (both of the other parity)
        C = transport(X, slice(parity, None, 2))
        Y = np.zeros(((rows + parity) // 2, cells_total))
        if parity == 0:  # targets 1, 3, ...: row 2i - 1 is target i - 1, row 2i + 1 is target i
            Y[:, m_half:] = C[1:, m_half:]
            Y[:, :m_half] = C[:-1, :m_half]
        else:  # targets 0, 2, ...: row 2i + 1 - 1 is target i, row 2i + 1 + 1 is target i + 1
            Y[:-1, m_half:] = C[:, m_half:]
            Y[1:, :m_half] = C[:, :m_half]
        return Y
    return _SignumOperator(step, (rows, cells_total), u, half)


def _split(C: np.ndarray, m_half: int, total: float):
    r"""Move the buffer law ``C[n, cell]`` by its sign: :math:`v' > 0` (cells ``m_half`` on) to row n - 1,
    :math:`v' < 0` to row n + 1.

    Returns the new law and the mass lost per step past :math:`\pm W` (``total`` minus the mass of
    ``C``) and past :math:`\pm N` (the two rows that move off the lattice's box).
    """
    out = np.empty_like(C)
    out[:-1, m_half:] = C[1:, m_half:]
    out[-1, m_half:] = 0.0
    out[1:, :m_half] = C[:-1, :m_half]
    out[0, :m_half] = 0.0
    kept = C.sum()
    return out, (max(total - kept, 0.0), max(float(C[0, m_half:].sum() + C[-1, :m_half].sum()), 0.0))


def _signum_power(op, start=None, tol=1e-11, max_iter=50_000):
    r"""Power iteration to the stationary law; returns ``(C, P, (leak_w, leak_n))`` (leaks per step, relative).

    The chain has period 2 (every step moves :math:`n` by :math:`\pm 1`), so iterates alternate between
    the two parity classes; the average of two successive iterates converges to :math:`\pi` (each class
    carries mass 1/2, restored after every step). Stops when :math:`C = E_\pi[u^2]/2` changes by less than ``tol``
    relative. The reference of :func:`_signum_stationary` (slow near :math:`\beta = 1`: it converges at the rate of
    the chain's second eigenvalue).
    """
    step, shape, u = op.step, op.shape, op.u

    def halves(P):
        # each parity class of n carries mass 1/2 at stationarity; renormalising each class on its own keeps a
        # leak that differs between the classes from making the two-step average oscillate
        P = P.copy()
        P[0::2] *= 0.5 / P[0::2].sum()
        P[1::2] *= 0.5 / P[1::2].sum()
        return P

    if start is None:
        P = np.zeros(shape)
        P[shape[0] // 2, shape[1] // 2] = 0.5  # u = theta > 0 with v > 0, and u = theta - 1 < 0 with v < 0
        P[shape[0] // 2 - 1, shape[1] // 2 - 1] = 0.5
    else:
        P = halves(start)
    prev = None
    for _ in range(max_iter):
        Q, leak = step(P)
        Q = halves(Q)
        A = (P + Q) / 2
        c = float(A.sum(axis=1) @ (u * u) / 2)
        if prev is not None and abs(c - prev) <= tol * c:
            return c, A, leak
        prev = c
        P = Q
    raise ValueError(f"beta: the Signum chain did not converge in {max_iter} iterations (C = {c:.6g})")


ARNOLDI_FLOATS = 32_000_000  # the Krylov basis of one Signum solve: at most 256 MB (fewer vectors on larger grids)


def _perron_arnoldi(matvec, v0: np.ndarray, tol: float, m: int = 60, cycles: int = 25):
    r"""The eigenpair of largest modulus of a real linear map, by Arnoldi restarted from its Ritz vector.

    Each cycle builds an orthonormal Krylov basis :math:`V` of up to ``m`` vectors from the current guess
    (Gram--Schmidt twice, for orthogonality to round-off), :math:`M V_j = V_{j+1} \bar H_j`; the Ritz pair
    :math:`(\theta, V_j y)` of largest :math:`|\theta|` has the residual
    :math:`\|M x - \theta x\| = \bar H_{j+1, j} |y_j|` (:math:`\|x\| = \|y\| = 1`), which stops the
    cycle once below ``tol``; otherwise the next cycle starts from :math:`x`. Returns ``(theta, x, residual)``
    with the last residual reached (the caller checks it). ``m`` shrinks to keep the basis within
    :data:`ARNOLDI_FLOATS` numbers (Arnoldi converges in about 45 products here from a coarse grid's law, where the
    power iteration needs 3 to 6 times as many near :math:`\beta = 0.9`).
    """
    x = v0 / np.linalg.norm(v0)
    m = int(min(m, max(10, ARNOLDI_FLOATS // len(x)), len(x) - 1))  # the basis within its memory budget
    theta, res = np.nan, np.inf
    for _ in range(cycles):
        V = np.empty((m + 1, len(x)))
        H = np.zeros((m + 1, m))
        V[0] = x
        for j in range(m):
            w = matvec(V[j])
            norm_w = np.linalg.norm(w)
            h = V[:j + 1] @ w
            w -= h @ V[:j + 1]
            if np.linalg.norm(w) < 0.7 * norm_w:  # cancellation: orthogonalise again ("twice is enough")
                h2 = V[:j + 1] @ w
                w -= h2 @ V[:j + 1]
                h += h2
            H[:j + 1, j], H[j + 1, j] = h, np.linalg.norm(w)
            vals, vecs = np.linalg.eig(H[:j + 1, :j + 1])
            top = np.argmax(np.abs(vals))
            theta, y = vals[top], vecs[:, top]
            res = H[j + 1, j] * abs(y[-1]) / np.linalg.norm(y)
            if res <= tol * abs(theta) or H[j + 1, j] == 0.0:
                break
            V[j + 1] = w / H[j + 1, j]
        y = y / y[np.argmax(np.abs(y))]  # the phase: real at the largest entry (the Perron vector is real)
        x = V[:len(y)].T @ y.real
        x /= np.linalg.norm(x)
        if res <= tol * abs(theta) or abs(theta.imag) > 0:
            break
    return theta, x, res


@functools.cache
def _blas_controller():
    """threadpoolctl's view of the loaded BLAS libraries (scanned once: a scan reads the process's memory map), or
    None without threadpoolctl (installed with scikit-learn)."""
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:  # pragma: no cover - only without scikit-learn
        return None
    return ThreadpoolController()


def _one_blas_thread():
    """A context with BLAS on one thread: Gram--Schmidt's matrix-vector products are memory-bound, and a threaded
    BLAS on a busy machine stalls them (seen: 5 to 10 times slower on 2 shared cores)."""
    controller = _blas_controller()
    return contextlib.nullcontext() if controller is None else controller.limit(limits=1, user_api="blas")


def _signum_arnoldi(op, start, tol):
    r"""The stationary law as the Perron vector of the two-step operator on one parity class (Arnoldi).

    Two steps map the rows of the parity of :math:`n = 0` to themselves; the truncated chain's stationary law on
    them is that map's eigenvector of largest modulus (eigenvalue :math:`1 -` the leak, real and simple: the
    period-2 eigenvalue :math:`-1` of one step becomes the same eigenvalue 1 and leaves the class), one step of it
    gives the other class, and each class is normalised to mass 1/2 -- the fixed point of :func:`_signum_power`.
    ``tol``: the relative residual :math:`\|Mx - \lambda x\|/|\lambda|` of :func:`_perron_arnoldi`. Returns
    ``(C, P, (leak_w, leak_n))``, or None when the answer fails a check (no convergence, a complex or small
    eigenvalue, mass of both signs beyond round-off).
    """
    shape, p = op.shape, (op.shape[0] // 2) % 2  # row n + N of n = 0
    k = len(range(p, shape[0], 2))

    def two_steps(x):
        return op.half(op.half(x.reshape(k, shape[1]), p), 1 - p).ravel()

    if start is None:
        v0 = np.zeros((k, shape[1]))
        v0[k // 2, shape[1] // 2] = 1.0  # u = theta, v > 0
    else:
        v0 = start[p::2]
    if not v0.sum() > 0:
        return None
    with _one_blas_thread():
        lam, x, res = _perron_arnoldi(two_steps, v0.ravel(), tol)
    x = x * np.sign(x.sum())
    # lam: 1 minus the leak, up to the kernel's round-off (its second differences of G conserve mass to ~1e-9)
    if not (res <= tol * abs(lam) and lam.imag == 0 and 0.5 < lam.real < 1 + 1e-6
            and x.min() >= -1e-9 * x.max()):
        return None
    X = np.maximum(x, 0.0).reshape(k, shape[1])  # round-off below 0: the law is nonnegative
    Y = np.maximum(op.half(X, p), 0.0)  # FFT round-off leaves entries of order -1e-17
    if not Y.sum() > 0:
        return None
    P = np.zeros(shape)
    P[p::2], P[1 - p::2] = X * (0.5 / X.sum()), Y * (0.5 / Y.sum())
    _, leak = op.step(P)
    return float(P.sum(axis=1) @ (op.u * op.u) / 2), P, leak


def _signum_stationary(op, start=None, tol=1e-11, method="arnoldi"):
    r"""The stationary law of the Signum operator ``op``: ``(C, P, (leak_w, leak_n))``, leaks per step, relative.

    ``method``: ``"arnoldi"`` (:func:`_signum_arnoldi`, to a residual of ``tol`` / 100, which puts :math:`C`
    closer to its limit than the power iteration stopped at ``tol``; falls back to the power iteration when its
    answer fails a check) or ``"power"`` (:func:`_signum_power`, stopped when :math:`C` changes by less than
    ``tol`` relative). ``start``: a law on ``op``'s grid to start from.
    """
    if method == "arnoldi":
        out = _signum_arnoldi(op, start, tol / 100)
        if out is not None:
            return out
    return _signum_power(op, start, tol)


MAX_STATES = 4_000_000  # lattice rows x buffer cells of one Signum grid (32 MB per law array)


def _recentre(P: np.ndarray, shape: tuple) -> np.ndarray:
    """A law on a box of rows x cells, centred in a box of ``shape`` (the same cell width): padded with zeros, or
    cropped where the new box is smaller (a start for the next solve; both boxes are symmetric about n = 0, v = 0)."""
    out = np.zeros(shape)
    src, dst = [], []
    for have, want in zip(P.shape, shape):
        d = abs(want - have) // 2
        src.append(slice(0, have) if want >= have else slice(d, d + want))
        dst.append(slice(d, d + have) if want >= have else slice(0, want))
    out[tuple(dst)] = P[tuple(src)]
    return out


def _signum_at(beta, sigma, theta, law, df, a, cells, tol=1e-10, method="arnoldi"):
    r"""(fine, coarse, leak, N, W) at one offset ``theta``.

    N and W start small and grow on the coarse grid until each leak per step is below ``tol``: N from the
    measured geometric decay of the marginal law of n, W by half each time (W stops growing at 20 noise
    scales of the largest kernel: a heavy-tailed law keeps a reported leak instead of an unbounded grid).
    A leak of 1e-10 per step moves :math:`C` by far less than the grid error (the mass it removes sits at
    :math:`|u| \approx N`, and the chain forgets it within its mixing time). Each solve starts from the
    previous one's law (embedded in the grown box, split onto the finer cells). ``method``: that of
    :func:`_signum_stationary`.
    """
    # the buffer moves by (1 - beta) a u per step and its contracted law beta v spans beta |v|: resolve both
    h = a * min(beta, 1 - beta) / cells if beta > 0 else a / cells
    w_cap = a * (1 + (1 - beta) * sigma * _noise_quantile(law, df, tol))
    n_max, w_units = 8, 1.0  # W = w_units * a (N + 1)
    h_size = max(2 * h, a * min(beta, 1 - beta)) if beta > 0 else 2 * h  # the box is sized on a coarser grid
    P = None
    for _ in range(12):
        w_max = 2 * h * math.ceil(min(w_units, w_cap / a) * a * (n_max + 1) / (2 * h))
        states = (2 * n_max + 1) * 2 * round(w_max / h)
        if states > MAX_STATES:
            raise ValueError(f"cells, beta, sigma: the Signum grid would need {states:.3g} states (N = {n_max}, "
                             f"W = {w_max:.3g}); expected at most {MAX_STATES:.0e}: lower cells, beta or sigma")
        op = _signum_operator(beta, sigma, theta, law, df, a, h_size, n_max, w_max)
        _, P, (leak_w, leak_n) = _signum_stationary(op, None if P is None else _recentre(P, op.shape), tol=1e-8,
                                                    method=method)
        marg = P.sum(axis=1)
        grow_n = leak_n > tol or marg[:2].sum() + marg[-2:].sum() > tol
        grow_w = leak_w > tol and w_units * a < w_cap
        if not (grow_n or grow_w):
            break
        if grow_w:
            w_units *= 1.5
        if grow_n:
            tail = marg[n_max:][marg[n_max:] > 1e3 * tol]
            rho = min(max(tail[-1] / tail[-2], 0.05), 0.95) if len(tail) >= 3 else 0.7
            extra = math.log(tol / tail[-1]) / math.log(rho) if len(tail) else n_max
            n_max = max(n_max + 4, len(tail) + int(math.ceil(extra)) + 3)
    op = _signum_operator(beta, sigma, theta, law, df, a, 2 * h, n_max, w_max)
    # the sizing grid's law, split onto the coarse cells (h_size is a whole number of coarse cells)
    split = round(h_size / (2 * h))
    start = _recentre(np.repeat(P, split, axis=1) / split, op.shape) if beta > 0 else None
    coarse, P, leak_coarse = _signum_stationary(op, start, method=method)
    op = _signum_operator(beta, sigma, theta, law, df, a, h, n_max, w_max)
    start = np.repeat(P, 2, axis=1) / 2 if beta > 0 else None  # the coarse law as the fine start
    fine, _, leak_fine = _signum_stationary(op, start, method=method)
    return fine, coarse, max(*leak_coarse, *leak_fine), n_max, w_max


def signum_constant(beta, sigma, offset="mid", *, law: str = "gaussian", df: float | None = None, a: float = 1.0,
                    cells: int = 4) -> SignumConstant:
    r"""The stationary floor constant :math:`C = E_\pi f/(a\eta^2)` of Signum on :math:`f = a x^2/2` under multiplicative noise.

    Signum: :math:`g = a x(1 + \sigma\xi)`, :math:`m \leftarrow \beta m + (1-\beta) g` (from :math:`m_0 = 0`),
    :math:`x \leftarrow x - \eta\,\mathrm{sign}(m)`. In :math:`u = x/\eta`, :math:`v = m/\eta` the chain

    .. math:: v' = \beta v + (1-\beta)\,a u\,(1 + \sigma\xi), \qquad u' = u - \mathrm{sign}(v')

    is free of :math:`\eta`, and :math:`u` stays on the lattice :math:`\theta + \mathbb Z`
    (:math:`\theta = c/\eta`, :math:`c = x_0 \bmod \eta`), so :math:`E f = \tfrac{a\eta^2}{2} E_\pi[u^2]`
    with :math:`\pi` the stationary law of :math:`(n, v)`, :math:`u = \theta + n`; :math:`v/a` is free of
    :math:`a` too, so :math:`C` depends on :math:`\beta`, :math:`\sigma`, the noise law and :math:`\theta` only.
    Given :math:`(n, v)`, :math:`v'` is an affine image of :math:`\xi`, so the probability of a buffer
    cell is a difference of CDFs (averaged over the source cell: a second difference of the CDF's
    antiderivative). :math:`\pi` is the fixed point of this transfer operator on :math:`|n| \le N`,
    :math:`|v| \le W` (cells of width :math:`h = a\min(\beta, 1-\beta)/`\ ``cells``: the buffer moves by
    :math:`(1-\beta)au` per step and the contracted law of :math:`\beta v` spans :math:`\beta|v|`; both are
    resolved), found by power iteration; :math:`N`
    and :math:`W` grow until the stationary mass leaving that box per step is below :math:`10^{-10}`
    (``leak``; heavy-tailed laws may stay above it: ``W`` is capped at 20 noise scales). At
    :math:`\beta = 0` the buffer is :math:`a u(1+\sigma\xi)` and the split at :math:`v' = 0` is exact:
    the two-ladder law of signSGD (:func:`c_mid`, :func:`c_unif`) to round-off. For :math:`\beta > 0`
    the error is :math:`O(h^2)` in the cell width; ``err`` is :math:`|C_h - C_{2h}|` (three times the
    error when the :math:`h^2` term dominates).

    ``offset``: ``"mid"`` (:math:`\theta = 1/2`), a fraction :math:`\theta \in (0, 1)`, or ``"uniform"``
    (:math:`\theta` uniform on :math:`(0, 1)`, as for a random start): :math:`C(\theta) = C(1-\theta)`
    (the reflection :math:`u \to -u`), so :math:`C_{\rm unif} = 2\int_0^{1/2} C(\theta)\,d\theta` by
    3-point Gauss--Legendre on :math:`(0, 1/2)`, whose change against the 2-point rule is added to
    ``err``. ``a``: the curvature (the constant does not depend on it; it scales the buffer grid).
    ``cells``: an even number of buffer cells per :math:`a\min(\beta, 1-\beta)` on the fine grid (the coarse grid
    has half as many). Returns a :class:`SignumConstant`.
    """
    beta = V.real("beta", beta, low=0.0, high=1.0, high_open=True)
    sigma = V.real("sigma", sigma, low=0.0, low_open=True)
    df = _law(law, df)
    a = V.real("a", a, low=0.0, low_open=True)
    cells = V.integer("cells", cells, low=2, high=256)
    if cells % 2:
        raise ValueError(f"cells: expected an even number (the error estimate halves it), got {cells}")
    if isinstance(offset, str):
        if offset not in ("mid", "uniform"):
            raise ValueError(f"offset: expected 'mid', 'uniform' or a fraction theta in (0, 1), got {offset!r}")
    else:
        offset = V.real("offset", offset, low=0.0, high=1.0, low_open=True, high_open=True)
    if offset != "uniform":
        theta = 0.5 if offset == "mid" else offset
        fine, coarse, leak, n_max, w_max = _signum_at(beta, sigma, theta, law, df, a, cells)
        return SignumConstant(fine, abs(fine - coarse), leak, n_max, w_max / a, cells)
    runs = {}
    rules = {k: np.polynomial.legendre.leggauss(k) for k in (2, 3)}
    values = {}
    for k, (nodes, weights) in rules.items():
        total = 0.0
        for x, w in zip(nodes, weights):
            theta = (x + 1) / 4  # (-1, 1) -> (0, 1/2)
            if theta not in runs:
                runs[theta] = _signum_at(beta, sigma, theta, law, df, a, cells)
            total += w / 2 * np.array(runs[theta][:2])  # weights sum to 2 on (-1, 1); the mean over (0, 1/2)
        values[k] = total
    fine, coarse = values[3]
    err = abs(fine - coarse) + abs(values[3][0] - values[2][0])
    leak = max(r[2] for r in runs.values())
    return SignumConstant(float(fine), float(err), leak, max(r[3] for r in runs.values()),
                          max(r[4] for r in runs.values()) / a, cells)
