r"""signSGD under multiplicative noise: the two geometric ladders and their constants.

A step moves away from 0 with probability :math:`p = F_\xi(-1/\sigma)`; on the invariant lattice
:math:`c + \eta\mathbb Z` detailed balance gives the ladder law, its second moment (and the two parities'),
the floor constants :math:`c_{mid}`, :math:`c_{unif}` and their limits, in sympy and numerically; with the
noise laws, the validation helpers and the symbols shared by the other modules of :mod:`theory.sign_floor`.
"""
from __future__ import annotations

import functools
import inspect
import math

import numpy as np
import sympy as sp
from scipy import special, stats

from theory import validate as V

__all__ = [
    "NOISES", "METHODS", "LAWS", "p_sym", "sigma_sym", "eta_sym", "a_sym", "c_sym", "n_sym", "finite",
    "ladder_law", "second_moment_sym", "parity_second_moments_sym", "c_mid_sym", "c_unif_sym", "c_limits",
    "away_probability", "contraction", "c_mid", "c_unif", "c_sde", "second_moment", "parity_second_moments",
    "ladder_pmf"
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


def finite(value, **inputs) -> float:
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
    with np.errstate(over="ignore"):  # an overflow gives inf, which finite() reports naming the inputs
        value = (c**2 + (eta - c) ** 2) / 2 + 2 * eta**2 * p * (1 - p) / (1 - 2 * p) ** 2
    return finite(value, eta=float(eta), c=float(c))


def parity_second_moments(p: float, eta: float, c: float) -> tuple[float, float]:
    r"""Numeric :math:`(E_{\rm even}[x^2], E_{\rm odd}[x^2])` of :func:`parity_second_moments_sym`
    (chain started at :math:`n_0 = 0`, offset ``c`` in :math:`[0, \eta]`, ``p`` in :math:`[0, 1/2)`)."""
    p = _contracting_p(p)
    eta = V.real("eta", eta, low=0.0, low_open=True)
    c = V.real("c", c, low=0.0, high=eta)
    even, odd = _parity_lambdas()
    p, eta, c = _f64(p, eta, c)
    return finite(even(p, eta, c), eta=float(eta), c=float(c)), finite(odd(p, eta, c), eta=float(eta), c=float(c))


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
