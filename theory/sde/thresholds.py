r"""Step-size thresholds of gradient descent and its modified equations on the toy functions, and the
(L0, L1)-smoothness step conditions.

The quadratic's exact log-rates and their slopes in :math:`\eta`; the critical steps of GD and of each
drift (quartic and :math:`2\cosh x` thresholds); the start beyond which each toy's iterates grow; the :math:`L_0` that makes a
toy :math:`(L_0, L_1)`-smooth, the sufficient descent step and its margin.
"""
from __future__ import annotations

import functools
import numpy as np
import sympy as sp
from scipy import optimize

from theory.validate import choice, integer
from theory.sde.modified import (
    DRIFT_KINDS, ESCAPE_KINDS, ETA, TOY_FUNCTIONS, _LAM, X, _pos, _symbol, drift, toy_function
)

__all__ = [
    "quadratic_log_rate", "quadratic_rate_slope", "quadratic_rate_gap", "quadratic_threshold", "critical_step",
    "quartic_thresholds", "escape_threshold_x", "l0_for_l1", "sufficient_step", "descent_margin"
]


# ----------------------------------------------------------------------------- quadratic rates and thresholds

def quadratic_log_rate(kind: str, lam: sp.Expr = _LAM, eta: sp.Expr = ETA) -> sp.Expr:
    r"""Per-unit-time log-rate of :math:`f = \lambda x^2/2` (time :math:`t = k\eta`).

    GD: :math:`r_{GD} = \tfrac{2}{\eta}\log|1-\eta\lambda|`; a modified equation with linear drift
    :math:`b(x) = c\,x` gives :math:`2c`, i.e. :math:`-2\lambda`, :math:`-2\lambda-\eta\lambda^2`,
    :math:`-2\lambda+\eta\lambda^2` (read off the sympy drifts).
    """
    choice("kind", kind, ESCAPE_KINDS)
    lam, eta = _symbol("lam", lam), _symbol("eta", eta)
    if kind == "gd":
        return 2 / eta * sp.log(sp.Abs(1 - eta * lam))
    b = drift(lam * X**2 / 2, [X], kind, eta)[0]
    return sp.expand(2 * sp.cancel(b / X))


def quadratic_rate_slope(kind: str, lam: sp.Expr = _LAM, eta: sp.Expr = ETA) -> sp.Expr:
    r""":math:`\partial r/\partial\eta` of :func:`quadratic_log_rate` at step ``eta``.

    At GD's edge :math:`\eta = 2/\lambda`: :math:`r_{GD}' = \lambda^2`, and the corrected rate
    :math:`-2\lambda + \eta\lambda^2` is exactly the tangent of :math:`r_{GD}` there (slope
    :math:`\lambda^2`, zero at the edge); the classic rates have slopes :math:`0` and :math:`-\lambda^2`.
    """
    choice("kind", kind, ESCAPE_KINDS)
    lam, eta = _symbol("lam", lam), _symbol("eta", eta)
    e = sp.Symbol("eta_", positive=True)
    rate = quadratic_log_rate(kind, lam, e)
    if kind == "gd":
        # d/deta of (2/eta) log|1 - eta lam| without the Abs (its derivative is sign-aware anyway)
        rate = 1 / e * sp.log((1 - e * lam) ** 2)
    return sp.simplify(sp.diff(rate, e).subs(e, eta))


def quadratic_rate_gap(kind: str, order: int = 2, lam: sp.Expr = _LAM, eta: sp.Expr = ETA) -> sp.Expr:
    r"""Series of :math:`r_{GD} - r_{\mathrm{kind}}` in :math:`\eta` up to :math:`O(\eta^{\mathrm{order}})` (excluded).

    :math:`r_{GD} = -2\lambda - \eta\lambda^2 - \tfrac23\eta^2\lambda^3 + O(\eta^3)`, so the gap is
    :math:`-\eta\lambda^2 - \ldots` (first order), :math:`-\tfrac23\eta^2\lambda^3` (second order) and
    :math:`-2\eta\lambda^2 - \tfrac23\eta^2\lambda^3` (corrected: first order only).
    """
    choice("kind", kind, DRIFT_KINDS)
    order = integer("order", order, low=1, high=6)
    lam = _symbol("lam", lam)
    e = sp.Symbol("eta_", positive=True)
    gd = 2 / e * sp.log(1 - e * lam)  # |1 - eta lam| = 1 - eta lam for small eta
    gap = sp.series(gd - quadratic_log_rate(kind, lam, e), e, 0, order).removeO()
    return sp.expand(gap.subs(e, _symbol("eta", eta)))


def quadratic_threshold(kind: str, lam: sp.Expr = _LAM):
    r"""Smallest :math:`\eta > 0` at which the quadratic's log-rate turns non-negative, or ``None``.

    GD: :math:`|1-\eta\lambda| = 1 \Rightarrow \eta = 2/\lambda`; corrected: :math:`-2\lambda+\eta\lambda^2=0
    \Rightarrow 2/\lambda`; the classic drifts have no positive root.
    """
    choice("kind", kind, ESCAPE_KINDS)
    return _quadratic_threshold(kind, _symbol("lam", lam))


@functools.lru_cache(maxsize=64)
def _quadratic_threshold(kind, lam):
    eta = sp.Symbol("eta_", positive=True)
    if kind == "gd":
        roots = sp.solve(sp.Eq((1 - eta * lam) ** 2, 1), eta)
    else:
        roots = sp.solve(sp.Eq(quadratic_log_rate(kind, lam, eta), 0), eta)
    roots = [r for r in roots if r.is_positive]
    return min(roots, key=lambda r: float(r.subs(_LAM, 1)) if r.free_symbols else float(r)) if roots else None


def critical_step(f: sp.Expr, kind: str, x: sp.Symbol = X):
    r"""Step size above which :math:`|x|` grows at the point :math:`x` (1-D, :math:`x f'(x) > 0`), or ``None``.

    GD: :math:`(x-\eta f')^2 > x^2 \iff \eta f'(x)/x > 2`, i.e. :math:`\eta^\ast = 2x/f'(x)`.
    An ODE :math:`\dot x = b(x)` pushes outwards iff :math:`x\,b(x) > 0`; with
    :math:`b = -f'(1 \mp \tfrac{\eta}{2} f'')`: corrected :math:`\eta^\ast = 2/f''(x)`; the classic
    drifts never push outwards for convex :math:`f` (``None``). Solved for :math:`\eta` by sympy.
    """
    if not isinstance(f, sp.Expr):
        raise TypeError(f"f: expected a sympy expression, got {type(f).__name__}")
    if not isinstance(x, sp.Symbol):
        raise TypeError(f"x: expected a sympy Symbol, got {x!r}")
    choice("kind", kind, ESCAPE_KINDS)
    return _critical_step(f, kind, x)


@functools.lru_cache(maxsize=256)
def _critical_step(f, kind, x):
    # sympy solve is slow and claims, figures and tests ask for the same few steps: cached (sympy objects are immutable)
    eta = sp.Symbol("eta_", positive=True)
    fp = sp.diff(f, x)
    if kind == "gd":
        indicator = ((x - eta * fp) ** 2 - x**2) / (2 * eta * x * fp)
    else:
        indicator = x * drift(f, [x], kind, eta)[0] / (x * fp)
    roots = sp.solve(sp.Eq(sp.simplify(indicator), 0), eta)
    roots = [sp.simplify(r) for r in roots if r.is_positive is not False]
    return roots[0] if roots else None


def quartic_thresholds() -> dict[str, sp.Expr | None]:
    r"""Thresholds on :math:`s = \eta x_0^2` for :math:`f = x^4/4`: GD escapes iff :math:`s > 2`, the
    corrected drift iff :math:`s > 2/3` (3x conservative), the classic drifts never (``None``)."""
    return dict(_quartic_thresholds())


@functools.lru_cache(maxsize=1)
def _quartic_thresholds() -> tuple:
    x = sp.Symbol("x", positive=True)
    out = {}
    for kind in ESCAPE_KINDS:
        eta_star = critical_step(x**4 / 4, kind, x)
        # eta*(x) x^2 is constant for x^4/4 (scale invariance), so s* = eta*(x) x^2.
        out[kind] = None if eta_star is None else sp.simplify(eta_star * x**2)
    return tuple(out.items())


def escape_threshold_x(name: str, kind: str, eta: float, x_max: float = 60.0) -> float | None:
    r"""Smallest :math:`x_0 > 0` above which :math:`|x|` grows under ``kind`` at step ``eta`` (numeric root
    of :math:`\eta = \eta^\ast(x)` from :func:`critical_step`), or ``None`` if there is none below ``x_max``."""
    choice("name", name, TOY_FUNCTIONS)
    choice("kind", kind, ESCAPE_KINDS)
    return _escape_threshold_x(name, kind, _pos("eta", eta), _pos("x_max", x_max))


@functools.lru_cache(maxsize=256)
def _escape_threshold_x(name, kind, eta, x_max):
    eta_star = critical_step(toy_function(name, lam=1), kind)
    if eta_star is None:
        return None
    g = sp.lambdify(X, eta_star - eta, "numpy")
    grid = np.linspace(1e-6, x_max, 20001)
    with np.errstate(all="ignore"):
        vals = np.asarray(g(grid), dtype=float) * np.ones_like(grid)
    sign_change = np.nonzero(np.sign(vals[:-1]) != np.sign(vals[1:]))[0]
    if sign_change.size == 0:
        return None
    i = sign_change[0]
    return float(optimize.brentq(g, grid[i], grid[i + 1], xtol=1e-14, rtol=1e-14))


# ----------------------------------------------------------------------------- (L0, L1)

def l0_for_l1(f: sp.Expr, L1, x: sp.Symbol = X) -> sp.Expr:
    r"""Smallest :math:`L_0` with :math:`|f''(x)| \le L_0 + L_1|f'(x)|` for all x (1-D, even, convex f).

    :math:`L_0 = \sup_{x\ge0} h(x)`, :math:`h = f'' - L_1 f'`, taken over :math:`x=0`, the critical
    points of :math:`h` on :math:`x>0` (sympy ``solve``) and :math:`x\to\infty`. E.g. :math:`x^4/4`:
    :math:`4/L_1^2`; :math:`2\cosh x` with :math:`L_1 = 1`: 2; :math:`\log\cosh x` with :math:`L_1=0`: 1.
    """
    if not isinstance(f, sp.Expr):
        raise TypeError(f"f: expected a sympy expression, got {type(f).__name__}")
    if not isinstance(x, sp.Symbol):
        raise TypeError(f"x: expected a sympy Symbol, got {x!r}")
    if not isinstance(L1, sp.Expr):
        L1 = sp.nsimplify(_pos("L1", L1, zero=True))
    return _l0_for_l1(f, L1, x)


@functools.lru_cache(maxsize=64)
def _l0_for_l1(f, L1, x):
    xp = sp.Symbol("xp", positive=True)
    fx = f.subs(x, xp)
    h = sp.diff(fx, xp, 2) - L1 * sp.diff(fx, xp)
    candidates = [sp.limit(h, xp, 0, "+"), sp.limit(h, xp, sp.oo)]
    try:
        crit = sp.solve(sp.diff(h, xp), xp)
    except NotImplementedError:
        crit = []
    candidates += [h.subs(xp, c) for c in crit if c.is_positive is not False]
    candidates = [sp.simplify(c) for c in candidates if c is not sp.nan]
    return sp.simplify(sp.Max(*candidates))


def sufficient_step(L0, L1, grad_norm) -> float:
    r"""Sufficient step :math:`\eta < 2/(L_0 + L_1\|\nabla f\|)` (noise-free, uncompressed)."""
    L0, L1 = _pos("L0", L0, zero=True), _pos("L1", L1, zero=True)
    grad_norm = _pos("grad_norm", grad_norm, zero=True)
    if not L0 + L1 * grad_norm > 0:
        raise ValueError(f"L0, L1: L0 + L1*grad_norm must be > 0, got L0={L0}, L1={L1}, grad_norm={grad_norm}")
    return 2.0 / (L0 + L1 * grad_norm)


def descent_margin(name: str, L1) -> sp.Expr:
    r"""How far the sufficient step can be stretched on a 1-D toy function:
    :math:`\inf_{x>0} c^\ast(x)`, :math:`c^\ast(x) = x\,(L_0 + L_1 f'(x))/f'(x)`.

    GD with step :math:`c\cdot 2/(L_0+L_1|f'|)` decreases an even convex f iff :math:`|x^+| < |x|`, i.e.
    iff :math:`c < c^\ast(x)`; :math:`L_0` is :func:`l0_for_l1`. :math:`x^4/4` with :math:`L_1 = 2, 1`:
    3 (at x = 1, 2); :math:`2\cosh x` with :math:`L_1 = 1`: 1, approached as :math:`x\to0` (tight).
    """
    choice("name", name, TOY_FUNCTIONS)
    if not isinstance(L1, sp.Expr):
        L1 = sp.nsimplify(_pos("L1", L1, zero=True))
    return _descent_margin(name, L1)


@functools.lru_cache(maxsize=64)
def _descent_margin(name, L1):
    f = toy_function(name, lam=1)
    L0 = l0_for_l1(f, L1)
    xp = sp.Symbol("xp", positive=True)
    fp = sp.diff(f, X).subs(X, xp)
    c = sp.simplify(xp * (L0 + L1 * fp) / fp)
    candidates = [sp.limit(c, xp, 0, "+"), sp.limit(c, xp, sp.oo)]
    try:
        crit = sp.solve(sp.diff(c, xp), xp)
    except NotImplementedError:
        crit = []
    candidates += [c.subs(xp, r) for r in crit if r.is_positive is not False]
    return sp.simplify(sp.Min(*[sp.simplify(v) for v in candidates if v is not sp.nan]))
