r"""Modified equations, (L0,L1)-smoothness, compressed and sign-based distributed SGD: closed forms.

Topic ``sde`` (Compagnoni et al., arXiv 2506.00181). The modified equations below are standard and
re-derived here in sympy; the exact 1-D DCSGD factors, the quartic/cosh thresholds, the Lyapunov
exponent of normalized DCSGD and the linearized DSignSGD variance are derived here.

Modified equations of gradient descent :math:`x_{k+1} = x_k - \eta\nabla f(x_k)` (drifts):

.. math::
   b_1 = -\nabla f,\qquad
   b_2 = -\nabla\bigl(f + \tfrac{\eta}{4}\|\nabla f\|^2\bigr) = -\nabla f - \tfrac{\eta}{2}\nabla^2 f\,\nabla f,\qquad
   b_c = -\nabla f + \tfrac{\eta}{2}\nabla^2 f\,\nabla f .

:math:`b_c` (the curvature-corrected drift) makes :math:`\tfrac{d}{dt}f(X_t)` equal the one-step
Taylor quotient :math:`(f(x-\eta\nabla f)-f(x))/\eta = -\|\nabla f\|^2 + \tfrac{\eta}{2}\nabla f^\top
\nabla^2 f\,\nabla f + O(\eta^2)`; the SDEs add the diffusion :math:`\sqrt{\eta}\,\Sigma^{1/2}dW`.

Pure mathematics: sympy, with numpy/scipy for the numeric closed forms (erf, Student-t CDF,
quadrature, root finding). No JAX, no I/O, no plotting. Every public function validates its
arguments (:mod:`theory.validate`).
"""
from __future__ import annotations

import functools
import itertools
import math
import numpy as np
import sympy as sp
from scipy import integrate, optimize, special, stats

from theory.validate import array, check_bytes, choice, integer, real

__all__ = [
    "DRIFT_KINDS", "ESCAPE_KINDS", "NOISE_LAWS", "TOY_FUNCTIONS", "ETA",
    "gradient", "hessian", "drift", "modified_drifts", "taylor_quotient", "energy_rate",
    "toy_function", "quadratic_log_rate", "quadratic_rate_slope", "quadratic_rate_gap", "quadratic_threshold",
    "critical_step", "quartic_thresholds", "escape_threshold_x",
    "l0_for_l1", "sufficient_step", "descent_margin",
    "dcsgd_ms_factor_symbolic", "dcsgd_ms_factor", "dcsgd_threshold", "normalization_factor", "normalized_step",
    "dcsgd_lyapunov",
    "noise_density_at_zero", "mean_sign", "sign_variance", "mean_sign_symbolic", "mean_sign_slope_at_zero",
    "sign_contraction", "sign_linear_variance",
    "MS_MODELS", "ms_growth_symbolic", "ms_threshold_symbolic", "ms_threshold", "ms_rate", "ms_excess",
    "dcsgd_noise_variance", "dcsgd_one_step_quotient", "dcsgd_direction_moments", "ONE_STEP_FUNCTIONS",
    "one_step_generator",
    "SIGN_DESCENT_FUNCTIONS", "SIGN_STEP_RULES", "SIGN_CHANGE_MODELS", "sign_descent_bound_symbolic",
    "sign_remainder_factor", "sign_slope_bounds", "sign_descent_bound", "sign_sufficient_step", "theorem43_step",
    "sign_l0l1", "sign_one_step_change", "sign_critical_step", "sign_generator_change", "sign_descent_K_symbolic",
    "RIDGE_MAX_TRIALS", "l0l1_extremal_symbolic", "l0l1_extremal", "ridge_one_step_change", "ridge_critical_step",
    "ridge_condition_steps", "RADIAL_MAX_STATES", "radial_one_step_change", "radial_critical_step",
    "SCHEDULE_KINDS", "quartic_schedule_map", "quartic_schedule_threshold", "quartic_schedule_divergence",
    "quartic_schedule_divergence_affine",
]

DRIFT_KINDS = ("first_order", "second_order", "corrected")
ESCAPE_KINDS = ("gd",) + DRIFT_KINDS
NOISE_LAWS = ("gaussian", "student_t", "cauchy")
TOY_FUNCTIONS = ("quadratic", "quartic", "cosh2", "logcosh")
ETA = sp.Symbol("eta", positive=True)
_X = sp.Symbol("x", real=True)
_LAM = sp.Symbol("lambda", positive=True)


# ----------------------------------------------------------------------------- validation of sympy input

def _variables(f, variables) -> tuple[sp.Symbol, ...]:
    if not isinstance(f, sp.Expr):
        raise TypeError(f"f: expected a sympy expression, got {type(f).__name__}")
    if isinstance(variables, sp.Symbol):
        variables = (variables,)
    try:
        variables = tuple(variables)
    except TypeError:
        raise TypeError(f"variables: expected a sympy Symbol or a sequence of Symbols, got {variables!r}") from None
    if not variables:
        raise ValueError("variables: expected at least one sympy Symbol, got an empty sequence")
    for v in variables:
        if not isinstance(v, sp.Symbol):
            raise TypeError(f"variables: every entry must be a sympy Symbol, got {v!r} ({type(v).__name__})")
    if len(set(variables)) != len(variables):
        raise ValueError(f"variables: symbols must be distinct, got {variables}")
    return variables


def _symbol(name: str, x, *, positive: bool = True):
    """A sympy expression, or a real number (> 0 when ``positive``) turned into an exact sympy number."""
    if isinstance(x, sp.Expr):
        if x.is_number and positive and not bool(x > 0):
            raise ValueError(f"{name}: expected a positive value, got {x}")
        return x
    value = real(name, x, low=0.0, low_open=positive) if positive else real(name, x)
    return sp.nsimplify(value)


def _pos(name: str, x, *, zero: bool = False) -> float:
    """A finite real number > 0 (>= 0 with ``zero``)."""
    return real(name, x, low=0.0, low_open=not zero)


# ----------------------------------------------------------------------------- modified equations

def gradient(f: sp.Expr, variables) -> sp.Matrix:
    r"""Column vector :math:`\nabla f` with respect to ``variables``."""
    variables = _variables(f, variables)
    return sp.Matrix([sp.diff(f, v) for v in variables])


def hessian(f: sp.Expr, variables) -> sp.Matrix:
    r"""Matrix :math:`\nabla^2 f`."""
    variables = _variables(f, variables)
    return sp.hessian(f, variables)


def drift(f: sp.Expr, variables, kind: str, eta: sp.Expr = ETA) -> sp.Matrix:
    r"""Drift of a modified equation of GD on ``f``.

    ``first_order``: :math:`-\nabla f`; ``second_order``: :math:`-\nabla f - \tfrac{\eta}{2}\nabla^2 f\nabla f`
    (the gradient flow of :math:`f + \tfrac{\eta}{4}\|\nabla f\|^2`); ``corrected``:
    :math:`-\nabla f + \tfrac{\eta}{2}\nabla^2 f\nabla f`.
    """
    variables = _variables(f, variables)
    choice("kind", kind, DRIFT_KINDS)
    eta = _symbol("eta", eta)
    g = gradient(f, variables)
    if kind == "first_order":
        return -g
    if kind == "second_order":
        # Derived as a gradient so the tests can compare it with -H g/2 exactly.
        return -gradient(f + eta / 4 * (g.T * g)[0, 0], variables)
    return -g + eta / 2 * hessian(f, variables) * g


def modified_drifts(f: sp.Expr, variables, eta: sp.Expr = ETA) -> dict[str, sp.Matrix]:
    """All three drifts, keyed by :data:`DRIFT_KINDS`."""
    return {k: drift(f, variables, k, eta) for k in DRIFT_KINDS}


def taylor_quotient(f: sp.Expr, variables, eta: sp.Expr = ETA) -> sp.Expr:
    r"""One-step decrease of GD to first order in :math:`\eta`:
    :math:`[f(x-\eta\nabla f)-f(x)]/\eta = -\|\nabla f\|^2 + \tfrac{\eta}{2}\nabla f^\top\nabla^2 f\nabla f + O(\eta^2)`,
    obtained by a sympy series in :math:`\eta` (truncated after the linear term)."""
    variables = _variables(f, variables)
    eta = _symbol("eta", eta)
    if not isinstance(eta, sp.Symbol):
        raise TypeError(f"eta: the series needs a sympy Symbol, got {eta!r}")
    g = gradient(f, variables)
    step = {v: v - eta * g[i] for i, v in enumerate(variables)}
    quotient = (f.subs(step, simultaneous=True) - f) / eta
    return sp.expand(sp.series(quotient, eta, 0, 2).removeO())


def energy_rate(f: sp.Expr, variables, kind: str, eta: sp.Expr = ETA) -> sp.Expr:
    r""":math:`\tfrac{d}{dt} f(X_t) = \nabla f^\top b` along the deterministic modified equation ``kind``."""
    variables = _variables(f, variables)
    return sp.expand((gradient(f, variables).T * drift(f, variables, kind, eta))[0, 0])


def toy_function(name: str, x: sp.Symbol = _X, lam: sp.Expr = _LAM) -> sp.Expr:
    r"""The 1-D test functions: ``quadratic`` :math:`\lambda x^2/2`, ``quartic`` :math:`x^4/4`,
    ``cosh2`` :math:`2\cosh x`, ``logcosh`` :math:`\log\cosh x`."""
    choice("name", name, TOY_FUNCTIONS)
    if not isinstance(x, sp.Symbol):
        raise TypeError(f"x: expected a sympy Symbol, got {x!r}")
    lam = _symbol("lam", lam)
    table = {"quadratic": lam * x**2 / 2, "quartic": x**4 / 4, "cosh2": 2 * sp.cosh(x), "logcosh": sp.log(sp.cosh(x))}
    return table[name]


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
    b = drift(lam * _X**2 / 2, [_X], kind, eta)[0]
    return sp.expand(2 * sp.cancel(b / _X))


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


def critical_step(f: sp.Expr, kind: str, x: sp.Symbol = _X):
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
    g = sp.lambdify(_X, eta_star - eta, "numpy")
    grid = np.linspace(1e-6, x_max, 20001)
    with np.errstate(all="ignore"):
        vals = np.asarray(g(grid), dtype=float) * np.ones_like(grid)
    sign_change = np.nonzero(np.sign(vals[:-1]) != np.sign(vals[1:]))[0]
    if sign_change.size == 0:
        return None
    i = sign_change[0]
    return float(optimize.brentq(g, grid[i], grid[i + 1], xtol=1e-14, rtol=1e-14))


# ----------------------------------------------------------------------------- (L0, L1)

def l0_for_l1(f: sp.Expr, L1, x: sp.Symbol = _X) -> sp.Expr:
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
    fp = sp.diff(f, _X).subs(_X, xp)
    c = sp.simplify(xp * (L0 + L1 * fp) / fp)
    candidates = [sp.limit(c, xp, 0, "+"), sp.limit(c, xp, sp.oo)]
    try:
        crit = sp.solve(sp.diff(c, xp), xp)
    except NotImplementedError:
        crit = []
    candidates += [c.subs(xp, r) for r in crit if r.is_positive is not False]
    return sp.simplify(sp.Min(*[sp.simplify(v) for v in candidates if v is not sp.nan]))


# ----------------------------------------------------------------------------- DCSGD

def _expect(expr: sp.Expr, moments: dict) -> sp.Expr:
    """E[expr] for a polynomial in independent random symbols with given raw moments E[Z^k]."""
    poly = sp.Poly(sp.expand(expr), *moments)
    total = 0
    for powers, coeff in poly.terms():
        term = coeff
        for (sym, m), p in zip(moments.items(), powers):
            term *= m(p)
        total += term
    return sp.simplify(total)


def dcsgd_ms_factor_symbolic() -> tuple[sp.Expr, sp.Expr, tuple[sp.Symbol, ...]]:
    r"""Exact one-step mean-square factor and threshold of DCSGD on :math:`f = a x^2/2`.

    Agent :math:`i` sends :math:`C_i(g_i)`, :math:`g_i = a x(1+\sigma_1\xi_i)`, :math:`\xi_i` standard,
    :math:`C(v) = vB/q`, :math:`B\sim\mathrm{Bernoulli}(q)`, :math:`\omega = 1/q-1`; the step averages N
    i.i.d. messages. Expanding with :math:`E\xi=0, E\xi^2=1, E B^k = q`:

    .. math:: \rho = \frac{E x_{k+1}^2}{x_k^2} = (1-\eta a)^2 + \frac{\eta^2 a^2\,[\omega + \sigma_1^2(1+\omega)]}{N},
       \qquad \eta^\ast = \frac{2}{a\,[1 + (\omega + \sigma_1^2(1+\omega))/N]} .

    Returns ``(factor, threshold, (eta, a, N, omega, sigma1))``.
    """
    return _dcsgd_ms_factor_symbolic()


@functools.lru_cache(maxsize=1)
def _dcsgd_ms_factor_symbolic():
    eta, a, n, omega, s1, x = sp.symbols("eta a N omega sigma1 x", positive=True)
    xi, b = sp.symbols("xi B", real=True)
    q = 1 / (1 + omega)
    message = a * x * (1 + s1 * xi) * b / q
    moments = {xi: lambda p: [1, 0, 1][p] if p < 3 else None, b: lambda p: 1 if p == 0 else q}
    mean = _expect(message, moments)
    var = sp.simplify(_expect(message**2, moments) - mean**2)
    factor = sp.simplify(sp.expand(((x - eta * mean) ** 2 + eta**2 * var / n) / x**2))
    roots = [r for r in sp.solve(sp.Eq(factor, 1), eta) if r != 0]
    return factor, sp.simplify(roots[0]), (eta, a, n, omega, s1)


def _omegas(omega, n_agents: int) -> np.ndarray:
    # one value per agent (a scalar is broadcast to all of them), then a few same-sized temporaries in the formulas;
    # the limit is the process's (STEPLAB_MAX_BYTES): these closed forms take no max_bytes of their own
    check_bytes({"n_agents": n_agents}, 4 * 8 * n_agents, what="one compression variance per agent and temporaries",
                per_call=False)
    arr = array("omega", omega, ndim=(0, 1), low=0.0)
    if arr.ndim == 0:
        arr = np.full(n_agents, float(arr))
    if arr.shape[0] != n_agents:
        raise ValueError(f"omega: expected a scalar or {n_agents} per-agent values, got shape {arr.shape}")
    return arr


def _excess(n_agents, omega, sigma1) -> float:
    r""":math:`\overline V/N`, :math:`\overline V = \frac1N\sum_i[\omega_i + \sigma_1^2(1+\omega_i)]`."""
    n = integer("n_agents", n_agents, low=1)
    om = _omegas(omega, n)
    s1 = _pos("sigma1", sigma1, zero=True)
    return float(np.mean(om + s1**2 * (1 + om))) / n


def dcsgd_ms_factor(eta, a, n_agents, omega, sigma1) -> float:
    r"""Numeric one-step factor :math:`\rho = (1-\eta a)^2 + \eta^2a^2\,\overline{V}/N`,
    :math:`\overline V = \frac1N\sum_i[\omega_i + \sigma_1^2(1+\omega_i)]` (agent-specific :math:`\omega_i` allowed)."""
    eta, a = _pos("eta", eta), _pos("a", a)
    return (1 - eta * a) ** 2 + (eta * a) ** 2 * _excess(n_agents, omega, sigma1)


def dcsgd_threshold(a, n_agents, omega, sigma1) -> float:
    r"""Exact mean-square threshold :math:`\eta^\ast = 2/(a[1 + \overline V/N])` of DCSGD on :math:`a x^2/2`
    (see :func:`dcsgd_ms_factor_symbolic`); ``omega`` is a scalar or one value per agent."""
    a = _pos("a", a)
    return 2.0 / (a * (1.0 + _excess(n_agents, omega, sigma1)))


def normalization_factor(n_agents, omega, sigma1, d: int = 1) -> float:
    r"""The compression/noise factor of the normalization prescription,
    :math:`1 + (\bar\omega + d(\sigma_1^2\bar\omega + \sigma_1^2))/N` (:math:`\bar\omega` the agents' mean)."""
    n = integer("n_agents", n_agents, low=1)
    om = float(np.mean(_omegas(omega, n)))
    s1 = _pos("sigma1", sigma1, zero=True)
    d = integer("d", d, low=1)
    return 1.0 + (om + d * (s1**2 * om + s1**2)) / n


def normalized_step(c, L0, L1, grad_norm, n_agents, omega, sigma1, d: int = 1) -> float:
    r"""Normalization prescription (derived):
    :math:`\eta_t = c\,/\,\bigl[(L_0 + L_1\|\nabla f(x_t)\|)(1 + (\bar\omega + d(\sigma_1^2\bar\omega + \sigma_1^2))/N)\bigr]`,
    :math:`0 < c < 2`; guarantees decrease of the corrected SDE's drift term when :math:`\sigma_0 = 0`."""
    c = real("c", c, low=0.0, high=2.0, low_open=True, high_open=True)
    L0, L1 = _pos("L0", L0, zero=True), _pos("L1", L1, zero=True)
    grad_norm = _pos("grad_norm", grad_norm, zero=True)
    lip = L0 + L1 * grad_norm
    if not lip > 0:
        raise ValueError(f"L0, L1: L0 + L1*grad_norm must be > 0, got L0={L0}, L1={L1}, grad_norm={grad_norm}")
    return c / (lip * normalization_factor(n_agents, omega, sigma1, d))


def _expected_log_abs(u: float, v: float) -> float:
    r""":math:`E\log|u + vZ|`, :math:`Z` standard normal (:math:`v \ge 0`); quadrature around the singularity."""
    if v == 0.0:
        return math.log(abs(u)) if u != 0 else -math.inf
    dens = lambda z: math.exp(-0.5 * z * z) / math.sqrt(2 * math.pi)  # noqa: E731
    root = -u / v  # log|u + v z| is -inf there (integrable)
    lo, hi = min(root, 0.0) - 12.0, max(root, 0.0) + 12.0
    val, _ = integrate.quad(lambda z: math.log(abs(u + v * z)) * dens(z), lo, hi, points=[root], limit=400,
                            epsabs=1e-13, epsrel=1e-12)
    return val


def dcsgd_lyapunov(eta, a, n_agents, omega, sigma1) -> float:
    r"""Per-step Lyapunov exponent :math:`\gamma = E\log|x_{k+1}/x_k|` of DCSGD on :math:`f = a x^2/2`.

    With Bernoulli compressors (keep probability :math:`q_i = 1/(1+\omega_i)`) and multiplicative noise,
    :math:`x_{k+1} = x_k(1 - \eta a S)`, :math:`S = \frac1N\sum_i B_i(1+\sigma_1\xi_i)/q_i`. Given the kept
    set :math:`K`, :math:`S \sim \mathcal N(\mu_K, s_K^2)` with :math:`\mu_K = \sum_{i\in K} 1/(Nq_i)`,
    :math:`s_K^2 = \sigma_1^2\sum_{i\in K} 1/(Nq_i)^2`; the exponent sums :math:`P(K)\,E\log|1-\eta a S|`
    over the :math:`2^N` kept sets (one-dimensional quadrature each). Paths converge almost surely iff
    :math:`\gamma < 0`; by Jensen :math:`\gamma \le \tfrac12\log\rho` (:func:`dcsgd_ms_factor`), so mean-square
    stability implies almost-sure stability, not the converse.
    """
    eta, a = _pos("eta", eta), _pos("a", a)
    n = integer("n_agents", n_agents, low=1, high=12)  # 2^N kept sets are enumerated
    om = _omegas(omega, n)
    s1 = _pos("sigma1", sigma1, zero=True)
    q = 1.0 / (1.0 + om)
    total = 0.0
    for kept in itertools.product((False, True), repeat=n):
        k = np.asarray(kept)
        prob = float(np.prod(np.where(k, q, 1 - q)))
        if prob == 0.0:
            continue
        w = 1.0 / (n * q[k])
        mu, sd = float(w.sum()), s1 * float(np.sqrt(np.sum(w**2)))
        total += prob * _expected_log_abs(1.0 - eta * a * mu, eta * a * sd)
    return total


# ----------------------------------------------------------------------------- sign laws

def _noise_args(noise: str, nu):
    choice("noise", noise, NOISE_LAWS)
    if noise == "student_t":
        if nu is None:
            raise ValueError("nu: noise='student_t' needs the degrees of freedom nu > 0, got None")
        return _pos("nu", nu)
    if nu is not None:
        raise ValueError(f"nu: only noise='student_t' takes nu; got nu={nu!r} with noise={noise!r}")
    return None


def noise_density_at_zero(noise: str = "gaussian", nu=None) -> float:
    r"""Density :math:`\rho(0)` of the standard noise law: :math:`1/\sqrt{2\pi}`, :math:`1/\pi` (Cauchy),
    :math:`\Gamma(\tfrac{\nu+1}2)/(\sqrt{\nu\pi}\,\Gamma(\tfrac\nu2))` (Student-t)."""
    nu = _noise_args(noise, nu)
    if noise == "gaussian":
        return 1 / math.sqrt(2 * math.pi)
    if noise == "cauchy":
        return 1 / math.pi
    return math.exp(special.gammaln((nu + 1) / 2) - special.gammaln(nu / 2)) / math.sqrt(nu * math.pi)


def mean_sign(grad, scale, noise: str = "gaussian", nu=None):
    r""":math:`E\,\mathrm{sign}(g + \sigma Z)` for symmetric noise Z: :math:`2F(g/\sigma) - 1`.

    Gaussian :math:`\mathrm{erf}(g/(\sqrt2\sigma))`; Student-t :math:`2F_\nu(g/\sigma) - 1`; Cauchy
    :math:`\tfrac{2}{\pi}\arctan(g/\sigma)`. ``grad`` is a number or array, ``scale`` > 0.
    """
    nu = _noise_args(noise, nu)
    scale = _pos("scale", scale)
    g = array("grad", grad, nonempty=False)
    u = g / scale
    if noise == "gaussian":
        m = special.erf(u / np.sqrt(2.0))
    elif noise == "cauchy":
        m = 2.0 / np.pi * np.arctan(u)
    else:
        m = 2.0 * special.stdtr(nu, u) - 1.0
    return float(m) if m.ndim == 0 else m


def sign_variance(grad, scale, noise: str = "gaussian", nu=None, n_agents: int = 1):
    r"""Per-coordinate variance of the agent-averaged sign: :math:`(1 - m^2)/N`."""
    n = integer("n_agents", n_agents, low=1)
    return (1.0 - np.square(mean_sign(grad, scale, noise, nu))) / n


def mean_sign_symbolic(noise: str, nu: int | None = None) -> sp.Expr:
    r""":math:`2\int_{-\infty}^{u}\rho(z)\,dz - 1` integrated by sympy for the density :math:`\rho` of the
    noise law (``u`` = g/σ); Student-t for a given integer :math:`\nu`."""
    choice("noise", noise, NOISE_LAWS)
    if noise == "student_t":
        nu = integer("nu", nu, low=1)
    elif nu is not None:
        raise ValueError(f"nu: only noise='student_t' takes nu; got nu={nu!r} with noise={noise!r}")
    u, z = sp.Symbol("u", real=True), sp.Symbol("z", real=True)
    if noise == "gaussian":
        rho = sp.exp(-z**2 / 2) / sp.sqrt(2 * sp.pi)
    elif noise == "cauchy":
        rho = 1 / (sp.pi * (1 + z**2))
    else:
        n = sp.Integer(nu)
        rho = sp.gamma((n + 1) / 2) / (sp.sqrt(n * sp.pi) * sp.gamma(n / 2)) * (1 + z**2 / n) ** (-(n + 1) / 2)
    # Symmetric density: 2F(u) - 1 = 2 * integral of rho over [0, u].
    return sp.simplify(2 * sp.integrate(rho, (z, 0, u)))


def mean_sign_slope_at_zero(scale, noise: str = "gaussian", nu=None) -> float:
    r"""Slope :math:`2\rho(0)/\sigma` of the mean sign at :math:`g = 0`."""
    scale = _pos("scale", scale)
    return 2 * noise_density_at_zero(noise, nu) / scale


def sign_contraction(curvature, scale, noise: str = "gaussian", nu=None) -> float:
    r"""Linear contraction rate :math:`\kappa = f''(x^\ast)\cdot 2\rho(0)/\sigma` of the DSignSGD drift near a
    minimizer: :math:`E[x_{k+1} - x_k] = -\eta_k\,m(f'(x_k)) \approx -\eta_k\kappa\,(x_k - x^\ast)`."""
    curvature = _pos("curvature", curvature)
    return curvature * mean_sign_slope_at_zero(scale, noise, nu)


def sign_linear_variance(etas, kappa, n_agents: int = 1) -> np.ndarray:
    r"""Variance :math:`v_k` of linearized DSignSGD near a minimizer after each step of the schedule ``etas``.

    Near :math:`x^\ast` the agent-averaged sign has mean :math:`\kappa(x - x^\ast)` and variance
    :math:`(1 - m^2)/N \approx 1/N`, so :math:`v_{k+1} = (1 - \eta_k\kappa)^2 v_k + \eta_k^2/N` from
    :math:`v_0 = 0` (the transient from a far start is forgotten geometrically). For
    :math:`\eta_k = \eta/\sqrt{k+1}` it settles to :math:`v_k \approx \eta_k/(2\kappa N)`: the gap
    :math:`E f - f^\ast \approx \tfrac{f''}{2}v_k` decays like :math:`k^{-1/2}`. Returns
    :math:`(v_1, \ldots, v_K)`.
    """
    etas = array("etas", etas, ndim=1, low=0.0, low_open=True)
    kappa = _pos("kappa", kappa)
    n = integer("n_agents", n_agents, low=1)
    # Linear recursion v_k = a_k v_{k-1} + b_k solved in closed form, in log space so that long schedules
    # neither underflow nor overflow: v_k = exp(C_k) * sum_{j<=k} b_j exp(-C_j), C_k = sum_{i<=k} log a_i.
    a = np.maximum((1.0 - etas * kappa) ** 2, 1e-300)  # a step with eta*kappa = 1 erases the past (a = 0)
    C = np.cumsum(np.log(a))
    return np.exp(C + np.logaddexp.accumulate(2 * np.log(etas) - math.log(n) - C))



# ----------------------------------------------------------------------------- mean-square thresholds per model

MS_MODELS = ("discrete",) + DRIFT_KINDS


@functools.lru_cache(maxsize=8)
def _ms_growth(model: str):
    eta, a, e, x = sp.symbols("eta a E x", positive=True)
    if model == "discrete":
        # One DCSGD step x -> x - eta*D with E D = a x and Var D = a^2 x^2 E: E x+^2 / x^2 - 1.
        mean, var = a * x, a**2 * x**2 * e
        growth = sp.expand(((x - eta * mean) ** 2 + eta**2 * var) / x**2 - 1)
    else:
        # Ito generator of phi = x^2 for dX = b(X)dt + sigma(X)dW: L phi = b phi' + sigma^2 phi''/2, with the
        # modified drift of GD on a x^2/2 and the diffusion sqrt(eta Sigma), Sigma = a^2 x^2 E (the variance of D).
        b = drift(a * x**2 / 2, [x], model, eta)[0]
        sigma2 = eta * a**2 * x**2 * e
        phi = x**2
        growth = sp.expand((b * sp.diff(phi, x) + sigma2 / 2 * sp.diff(phi, x, 2)) / phi)
    return growth, (eta, a, e)


def ms_growth_symbolic(model: str) -> tuple[sp.Expr, tuple[sp.Symbol, ...]]:
    r"""Sign-defining growth of the second moment on :math:`f = a x^2/2`, symbolic in :math:`(\eta, a, E)`.

    :math:`E = \overline V/N` is the relative variance of the agent-averaged compressed gradient
    (:math:`\mathrm{Var}\,D = a^2x^2E`, see :func:`ms_excess`). ``discrete``: the one-step factor minus one,
    :math:`(1-\eta a)^2 + \eta^2a^2E - 1`. An SDE :math:`dX = b\,dt + \sqrt{\eta a^2 E}\,|X|\,dW` (Itô) has
    :math:`\tfrac{d}{dt}E X^2 = r\,E X^2` with :math:`r = 2b/x + \eta a^2E` (generator on :math:`x^2`):
    first order :math:`-2a + \eta a^2E`, second order :math:`-2a - \eta a^2 + \eta a^2E`, corrected
    :math:`-2a + \eta a^2 + \eta a^2E`. Mean-square stable iff the growth is negative.
    Returns ``(growth, (eta, a, E))``.
    """
    choice("model", model, MS_MODELS)
    return _ms_growth(model)


@functools.lru_cache(maxsize=8)
def _ms_threshold_sym(model: str):
    growth, (eta, a, e) = _ms_growth(model)
    roots = [r for r in sp.solve(sp.Eq(growth, 0), eta) if r != 0]
    return (sp.simplify(roots[0]) if roots else None), (a, e)


def ms_threshold_symbolic(model: str):
    r"""Positive root in :math:`\eta` of :func:`ms_growth_symbolic` (sympy ``solve``), symbolic in :math:`(a, E)`:
    discrete and corrected :math:`2/(a(1+E))`, first order :math:`2/(aE)`, second order :math:`2/(a(E-1))`
    (a threshold only where it is positive, i.e. :math:`E > 1`). Returns ``(root, (a, E))``."""
    choice("model", model, MS_MODELS)
    return _ms_threshold_sym(model)


def ms_excess(n_agents, omega, sigma1) -> float:
    r""":math:`E = \overline V/N`, :math:`\overline V = \frac1N\sum_i[\omega_i + \sigma_1^2(1+\omega_i)]`: the
    variance of the agent-averaged compressed gradient relative to :math:`\|\nabla f\|^2` under multiplicative
    noise :math:`g_i = \nabla f(1 + \sigma_1\xi_i)` (``omega`` a scalar or one value per agent)."""
    return _excess(n_agents, omega, sigma1)


def ms_threshold(model: str, a, n_agents, omega, sigma1) -> float:
    r"""Mean-square stability threshold of the step size for DCSGD on :math:`f = a x^2/2` (``model="discrete"``)
    or for its modified equation ``model`` (``first_order``, ``second_order``, ``corrected``; Itô SDEs with
    the diffusion :math:`\sqrt{\eta\Sigma}` of the compressed multiplicative noise).

    Multiplicative noise :math:`g_i = a x(1+\sigma_1\xi_i)`, unbiased compressors of variances ``omega``
    (a scalar or one per agent), N agents; with :math:`E` = :func:`ms_excess`:

    .. math:: \eta^\ast_{\rm discrete} = \eta^\ast_{\rm corrected} = \frac{2}{a(1+E)},\quad
       \eta^\ast_{\rm first} = \frac{2}{aE},\quad \eta^\ast_{\rm second} = \frac{2}{a(E-1)}\ (E>1).

    ``math.inf`` where the model is mean-square stable at every step size (first order with :math:`E = 0`,
    second order with :math:`E \le 1`). Evaluated from :func:`ms_threshold_symbolic`.
    """
    choice("model", model, MS_MODELS)
    a = real("a", a, low=0.0, low_open=True)
    e = _excess(n_agents, omega, sigma1)
    root, (sa, se) = _ms_threshold_sym(model)
    growth, (seta, sa2, se2) = _ms_growth(model)
    if root is None:
        return math.inf
    value = float(root.subs({sa: a, se: e})) if e > 0 or model != "first_order" else math.inf
    if not value > 0 or not math.isfinite(value):
        return math.inf
    # The root is a threshold only if the growth is negative below it (small steps are stable for every model).
    slope = float(sp.diff(growth, seta).subs({seta: value, sa2: a, se2: e}))
    return value if slope > 0 else math.inf


def ms_rate(model: str, eta, a, n_agents, omega, sigma1) -> float:
    r"""Second-moment growth of ``model`` at step ``eta``: for an SDE the per-time rate :math:`r` with
    :math:`E X_t^2 = X_0^2 e^{rt}`; for ``discrete`` the per-time log-factor :math:`\log\rho/\eta`
    (:math:`\rho = E x_{k+1}^2/x_k^2`, time :math:`k\eta`). From :func:`ms_growth_symbolic`."""
    choice("model", model, MS_MODELS)
    eta, a = real("eta", eta, low=0.0, low_open=True), real("a", a, low=0.0, low_open=True)
    e = _excess(n_agents, omega, sigma1)
    growth, (se_, sa, sx) = _ms_growth(model)
    g = float(growth.subs({se_: eta, sa: a, sx: e}))
    return math.log1p(g) / eta if model == "discrete" else g


def dcsgd_noise_variance(grad, n_agents, omega, sigma0, sigma1):
    r"""Per-coordinate variance of DCSGD's agent-averaged direction at true gradient ``grad`` (Bernoulli
    compressors of variances :math:`\omega_i`, noise of per-coordinate scale
    :math:`s^2 = \sigma_0^2 + \sigma_1^2\|\nabla f\|^2`, independent across coordinates and agents):

    .. math:: \Sigma_{jj} = \frac1N\Bigl[\bar\omega\,g_j^2 + (1+\bar\omega)\,s^2\Bigr]

    (agent i's message has variance :math:`\omega_i E(g_j+Z_{ij})^2 + s^2 = \omega_i g_j^2 + (1+\omega_i)s^2`;
    the mean of N independent messages divides their average variance by N). Off-diagonal entries are 0.
    """
    g = array("grad", grad, ndim=(0, 1))
    n = integer("n_agents", n_agents, low=1)
    om = float(np.mean(_omegas(omega, n)))
    s0, s1 = _pos("sigma0", sigma0, zero=True), _pos("sigma1", sigma1, zero=True)
    s2 = s0**2 + s1**2 * float(np.sum(g**2))
    return (om * g**2 + (1 + om) * s2) / n


def dcsgd_direction_moments(a_grad, n_agents, omega, sigma1, order: int = 4) -> np.ndarray:
    r"""Raw moments :math:`E D^k`, :math:`k = 0..\mathrm{order}`, of DCSGD's 1-D agent-averaged direction
    :math:`D = \frac{g}{N}\sum_i B_i(1+\sigma_1\xi_i)/q_i` (Bernoulli keep probability :math:`q_i = 1/(1+\omega_i)`,
    Gaussian :math:`\xi_i`, multiplicative noise, true gradient ``a_grad`` = g).

    Per agent :math:`E Y_i^k = E(1+\sigma_1\xi)^k / q_i^{k-1}` (:math:`k \ge 1`); the moments of the sum follow
    from the agents' cumulants, which add (moment/cumulant recursions, exact in rational arithmetic)."""
    g = real("a_grad", a_grad)
    n = integer("n_agents", n_agents, low=1)
    om = _omegas(omega, n)
    s1 = _pos("sigma1", sigma1, zero=True)
    order = integer("order", order, low=1, high=8)
    # E(1 + s xi)^k for standard Gaussian xi: sum_j C(k, j) s^j E xi^j, E xi^j = (j-1)!! for even j.
    gauss = [1.0 if j % 2 == 0 and j == 0 else (0.0 if j % 2 else float(np.prod(np.arange(j - 1, 0, -2))))
             for j in range(order + 1)]
    base = [sum(math.comb(k, j) * s1**j * gauss[j] for j in range(k + 1)) for k in range(order + 1)]
    total_cum = np.zeros(order + 1)
    for w in om:
        q = 1.0 / (1.0 + w)
        mom = [1.0] + [base[k] / q ** (k - 1) for k in range(1, order + 1)]
        total_cum += _cumulants(mom)
    moms = _moments(total_cum)
    return np.array([moms[k] * (g / n) ** k for k in range(order + 1)])


def _cumulants(m: list[float]) -> np.ndarray:
    r"""Cumulants :math:`\kappa_1..\kappa_K` from raw moments :math:`m_0 = 1, m_1..m_K` (index 0 unused)."""
    K = len(m) - 1
    k = np.zeros(K + 1)
    for n in range(1, K + 1):
        k[n] = m[n] - sum(math.comb(n - 1, j - 1) * k[j] * m[n - j] for j in range(1, n))
    return k


def _moments(k: np.ndarray) -> list[float]:
    """Raw moments from cumulants (inverse of :func:`_cumulants`)."""
    K = len(k) - 1
    m = [1.0] + [0.0] * K
    for n in range(1, K + 1):
        m[n] = k[n] + sum(math.comb(n - 1, j - 1) * k[j] * m[n - j] for j in range(1, n))
    return m


def _kept_sets(n_agents, omega, sigma1):
    r"""Kept-agent patterns K of Bernoulli compressors with :math:`P(K)`, :math:`\mu_K = \sum_{i\in K}1/(Nq_i)` and
    :math:`s_K^2 = \sigma_1^2\sum_{i\in K}1/(Nq_i)^2`: given K, :math:`S = \frac1N\sum_i B_i(1+\sigma_1\xi_i)/q_i
    \sim\mathcal N(\mu_K, s_K^2)`."""
    q = 1.0 / (1.0 + omega)
    for kept in itertools.product((False, True), repeat=n_agents):
        k = np.asarray(kept)
        prob = float(np.prod(np.where(k, q, 1 - q)))
        if prob > 0.0:
            w = 1.0 / (n_agents * q[k])
            yield prob, float(w.sum()), sigma1**2 * float(np.sum(w**2))


ONE_STEP_FUNCTIONS = ("quartic", "cosh2")



def _normal_nodes(n_nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """Equally spaced nodes on [-8, 8] with normalized standard-normal weights (a quadrature of E h(Z))."""
    z = np.linspace(-8.0, 8.0, n_nodes)
    wz = np.exp(-0.5 * z**2)
    return z, wz / wz.sum()


def _merged_kept_laws(n: int, om, s1: float) -> dict[tuple[float, float], float]:
    """(mean, variance) of the averaged multiplier -> its probability, summed over kept sets with equal laws.

    Equal compressors give the same law for every kept set of one size, so each law is integrated once.
    """
    merged: dict[tuple[float, float], float] = {}
    for prob, mu, var in _kept_sets(n, om, s1):
        k = (round(mu, 12), round(var, 12))
        merged[k] = merged.get(k, 0.0) + prob
    return merged

def dcsgd_one_step_quotient(x, eta, n_agents, omega, sigma1, name: str = "quartic") -> float:
    r"""Exact :math:`E[f(x^+) - f(x)]/\eta` of one DCSGD step :math:`x^+ = x - \eta D` in 1-D (multiplicative noise,
    Bernoulli compressors, N agents), :math:`D = f'(x)\,S`.

    ``quartic`` (:math:`x^4/4`, a polynomial): with the moments :math:`m_k` of :func:`dcsgd_direction_moments`,
    :math:`-x^3 m_1 + \tfrac32\eta x^2 m_2 - \eta^2 x m_3 + \tfrac{\eta^3}{4}m_4`. ``cosh2``
    (:math:`2\cosh x`): given the kept set K, S is Gaussian and
    :math:`E\,2\cosh(x - \eta f' S) = 2\cosh(x - \eta f'\mu_K)\,e^{\eta^2 f'^2 s_K^2/2}`, summed over
    the :math:`2^N` kept sets (see :func:`_kept_sets`).
    """
    choice("name", name, ONE_STEP_FUNCTIONS)
    x, eta = real("x", x), real("eta", eta, low=0.0, low_open=True)
    n = integer("n_agents", n_agents, low=1, high=12)
    om = _omegas(omega, n)
    s1 = _pos("sigma1", sigma1, zero=True)
    if name == "quartic":
        m = dcsgd_direction_moments(x**3, n, om, s1, 4)
        return -x**3 * m[1] + 1.5 * eta * x**2 * m[2] - eta**2 * x * m[3] + eta**3 / 4 * m[4]
    g = 2 * math.sinh(x)
    total = 0.0
    for prob, mu, s2 in _kept_sets(n, om, s1):
        total += prob * (2 * math.cosh(x - eta * g * mu) * math.exp(eta**2 * g**2 * s2 / 2) - 2 * math.cosh(x))
    return total / eta


def one_step_generator(model: str, x, eta, n_agents, omega, sigma1, name: str = "quartic") -> float:
    r"""What the SDE ``model`` predicts for the one-step decrease: its generator on f at x,
    :math:`\mathcal L f = f' b + \tfrac\eta2\Sigma f''` with :math:`\Sigma = f'^2 E` (the variance of D,
    :math:`E` = :func:`ms_excess`) and the drift of ``model`` (sympy, :func:`drift`):
    corrected :math:`-f'^2 + \tfrac\eta2(f'^2f'' + \Sigma f'')`, first order :math:`-f'^2 + \tfrac\eta2\Sigma f''`,
    second order :math:`-f'^2 - \tfrac\eta2 f'^2f'' + \tfrac\eta2\Sigma f''`. It matches
    :func:`dcsgd_one_step_quotient` up to :math:`O(\eta^2)` only for the corrected drift."""
    choice("model", model, DRIFT_KINDS)
    choice("name", name, ONE_STEP_FUNCTIONS)
    x, eta = real("x", x), real("eta", eta, low=0.0, low_open=True)
    e = _excess(n_agents, omega, sigma1)
    f = toy_function(name)
    fp, fpp = sp.diff(f, _X), sp.diff(f, _X, 2)
    b = drift(f, [_X], model, ETA)[0]
    value = fp * b + ETA / 2 * fp**2 * e * fpp
    return float(value.subs({_X: x, ETA: eta}))


# ----------------------------------------------------------------------------- DSignSGD: one-step descent under (L0, L1)

SIGN_DESCENT_FUNCTIONS = ("quadratic", "quartic", "cosh2")
SIGN_STEP_RULES = ("steplab", "explicit", "no_noise", "no_sqrt_d", "half_phi")


@functools.lru_cache(maxsize=1)
def _sign_descent_symbolic():
    h, A, G, L0, L1, d, n, m2, a, t = sp.symbols("h A G L0 L1 d N m2 a t", positive=True)
    # Taylor remainder along the segment: int_0^1 (1 - t) e^{a t} dt, the Hessian growing at most like e^{L1 r}.
    phi = sp.simplify(sp.integrate((1 - t) * sp.exp(a * t), (t, 0, 1)))
    # One coordinate of the agent-averaged sign: (1/N) sum_i s_i, E s_i = m, s_i^2 = 1, agents independent:
    # E(sum s_i)^2 = N + N(N-1) m^2. Summed over coordinates: ||m||^2 (1 - 1/N) + d/N.
    second = sp.expand((n * d + n * (n - 1) * m2) / n**2)
    bound = -h * A + h**2 * (L0 + L1 * G) * phi.subs(a, L1 * h * sp.sqrt(d)) * second
    return bound, phi, second, (h, A, G, L0, L1, d, n, m2, a)


def sign_descent_bound_symbolic() -> tuple[sp.Expr, sp.Expr, sp.Expr, tuple[sp.Symbol, ...]]:
    r"""Upper bound on the expected one-step change of DSignSGD on an :math:`(L_0, L_1)`-smooth f (sympy).

    One step :math:`x^+ = x - hD`, :math:`h = \eta\eta_t`, :math:`D_j = \frac1N\sum_i\mathrm{sign}(\partial_jf + Z_{ij})`,
    :math:`E D_j = m_j`. Taylor with integral remainder, :math:`\|\nabla^2 f(z)\| \le L_0 + L_1\|\nabla f(z)\|` and
    Grönwall (:math:`\|\nabla f(z)\| + L_0/L_1 \le (G + L_0/L_1)e^{L_1\|z-x\|}`, :math:`G = \|\nabla f(x)\|`) give

    .. math:: E f(x^+) - f(x) \le -h\langle\nabla f, m\rangle
       + h^2 (L_0 + L_1 G)\,\varphi(L_1 h\sqrt d)\,\Bigl[(1 - \tfrac1N)\|m\|^2 + \tfrac dN\Bigr],\quad
       \varphi(a) = \int_0^1(1-t)e^{at}dt = \frac{e^a - 1 - a}{a^2},

    using :math:`\|hD\| \le h\sqrt d` (every entry of D is in [-1, 1]) inside :math:`\varphi` (increasing) and the
    exact second moment :math:`E\|D\|^2`. Returns ``(bound, phi, second_moment, (h, A, G, L0, L1, d, N, m2, a))``
    with :math:`A = \langle\nabla f, m\rangle`, :math:`m_2 = \|m\|^2`.
    """
    return _sign_descent_symbolic()


def sign_remainder_factor(a) -> float:
    r""":math:`\varphi(a) = (e^a - 1 - a)/a^2` (:math:`\varphi(0) = 1/2`), evaluated without cancellation."""
    a = _pos("a", a, zero=True)
    if a < 1e-4:
        return 0.5 + a / 6 + a**2 / 24
    return (math.expm1(a) - a) / a**2


def sign_slope_bounds(noise: str = "student_t", nu=None) -> tuple[float, float]:
    r"""The two constants of the mean sign :math:`m(u) = 2F(u) - 1` of a symmetric unimodal law:
    :math:`\ell = m(1)` and :math:`M = 2\rho(0)`, so that for every u

    .. math:: \ell\,\min(|u|, 1) \le |m(u)| \le \min(M|u|, 1)

    (m is concave on :math:`u \ge 0` because the density decreases there: chord below, tangent above).
    Student-t :math:`\nu = 1.5`: :math:`\ell = 0.549`, :math:`M = 0.681`."""
    nu = _noise_args(noise, nu)
    return float(mean_sign(1.0, 1.0, noise, nu)), 2.0 * noise_density_at_zero(noise, nu)


def _sign_inputs(grad, scale, L0, L1, n_agents, noise, nu):
    g = array("grad", grad, ndim=1)
    scale = _pos("scale", scale)
    L0, L1 = _pos("L0", L0, zero=True), _pos("L1", L1, zero=True)
    n = integer("n_agents", n_agents, low=1)
    nu = _noise_args(noise, nu)
    if not L0 + L1 * float(np.linalg.norm(g)) > 0:
        raise ValueError(f"L0, L1: L0 + L1*|grad| must be > 0, got L0={L0}, L1={L1}")
    m = np.atleast_1d(mean_sign(g, scale, noise, nu))
    return g, m, L0, L1, n


def sign_descent_bound(h, grad, scale, L0, L1, n_agents, noise: str = "student_t", nu=None) -> float:
    r"""The bound of :func:`sign_descent_bound_symbolic` at step ``h`` and gradient ``grad`` (noise scale ``scale``,
    noise law ``noise``/``nu``, N = ``n_agents``)."""
    h = _pos("h", h)
    g, m, L0, L1, n = _sign_inputs(grad, scale, L0, L1, n_agents, noise, nu)
    d = g.size
    second = (1 - 1 / n) * float(m @ m) + d / n
    lip = L0 + L1 * float(np.linalg.norm(g))
    return -h * float(g @ m) + h**2 * lip * sign_remainder_factor(L1 * h * math.sqrt(d)) * second


def sign_sufficient_step(grad, scale, L0, L1, n_agents, noise: str = "student_t", nu=None,
                         rule: str = "steplab") -> float:
    r"""Largest h at which :func:`sign_descent_bound` is still :math:`\le 0`: every step :math:`h < h_{\rm suff}(x)`
    decreases f in expectation. The root of

    .. math:: h\,\varphi(L_1h\sqrt d) = \frac{\langle\nabla f, m\rangle}{(L_0 + L_1G)\bigl[(1-\tfrac1N)\|m\|^2 + \tfrac dN\bigr]}

    (the left side increases in h). ``rule`` also gives two tempting wrong versions, used as rivals:
    ``explicit`` is the same condition with the mean sign replaced by its two constants
    (:func:`sign_slope_bounds`): :math:`\langle\nabla f, m\rangle \ge \ell\,\Psi`,
    :math:`\Psi = \sum_j\min(g_j^2/\sigma, |g_j|)`, and :math:`\|m\|^2 \le \Xi = \sum_j\min(M^2g_j^2/\sigma^2, 1)`:
    sufficient too, and in theorem form :math:`h < \ell/K(x)` (:func:`sign_descent_K_symbolic`).
    ``no_noise`` drops the sign noise's share :math:`d/N` of :math:`E\|D\|^2` (what a mean-field, noise-free
    analysis of the signed step gives), ``no_sqrt_d`` counts the noise and the step length of one coordinate only
    (:math:`1/N` for :math:`d/N`, :math:`L_1h` for :math:`L_1h\sqrt d`), ``half_phi`` replaces the Grönwall factor
    :math:`\varphi(L_1h\sqrt d)` by its small-step value :math:`\varphi(0) = 1/2` (the local-curvature condition
    :math:`h < 2\langle\nabla f, m\rangle/((L_0 + L_1G)E\|D\|^2)`).
    """
    choice("rule", rule, SIGN_STEP_RULES)
    g, m, L0, L1, n = _sign_inputs(grad, scale, L0, L1, n_agents, noise, nu)
    d = g.size
    noise_part = {"steplab": d / n, "explicit": d / n, "no_noise": 0.0, "no_sqrt_d": 1 / n, "half_phi": d / n}[rule]
    root_d = 1.0 if rule == "no_sqrt_d" else math.sqrt(d)
    second = (1 - 1 / n) * float(m @ m) + noise_part
    gm = float(g @ m)
    if rule == "explicit":
        ell, M = sign_slope_bounds(noise, nu)
        sc = _pos("scale", scale)
        second = (1 - 1 / n) * float(np.sum(np.minimum(M**2 * g**2 / sc**2, 1.0))) + d / n
        gm = ell * float(np.sum(np.minimum(g**2 / sc, np.abs(g))))
    if gm <= 0:
        return 0.0
    if second == 0:
        return math.inf
    rhs = gm / ((L0 + L1 * float(np.linalg.norm(g))) * second)
    if L1 == 0 or rule == "half_phi":
        return 2.0 * rhs
    lhs = lambda h: h * sign_remainder_factor(L1 * h * root_d) - rhs  # noqa: E731
    hi = 2.0 * rhs
    while lhs(hi) < 0:   # h phi(.) >= h/2: 2*rhs is an upper bracket; kept as a loop for safety
        hi *= 2
    return float(optimize.brentq(lhs, 0.0, hi, xtol=1e-300, rtol=1e-14))


@functools.lru_cache(maxsize=1)
def _sign_K():
    G, s, L0, L1, d, n, M, phi = sp.symbols("G sigma L0 L1 d N M phi", positive=True)
    psi, xi = G**2 / s, M**2 * G**2 / s**2          # linear regime: every |g_j| <= sigma
    K = sp.expand(phi * (L0 + L1 * G) * ((1 - 1 / n) * xi + d / n) / psi)
    return K, (G, s, L0, L1, d, n, M, phi)


def sign_descent_K_symbolic() -> tuple[sp.Expr, tuple[sp.Symbol, ...]]:
    r"""steplab's ``explicit`` condition in Theorem 4.3's form :math:`h < \ell_\nu/K`, where every coordinate's
    gradient is below the noise scale (:math:`\Psi = G^2/\sigma`, :math:`\Xi = M^2G^2/\sigma^2`):

    .. math:: K(G) = \varphi\Bigl[\frac{L_1d\sigma}{NG} + \frac{L_0d\sigma}{NG^2}
       + \bigl(1 - \tfrac1N\bigr)\frac{(L_0 + L_1G)M^2}{\sigma}\Bigr],\qquad \varphi = \varphi(L_1h\sqrt d) \ge \tfrac12 .

    At :math:`\|\nabla f\| = 1` and :math:`\varphi = 1/2` its first term is Theorem 4.3's :math:`L_1d\sigma/(2N)`; the
    second (the noise floor near a minimizer, growing like :math:`G^{-2}`) and the curvature term
    :math:`(1 - 1/N)(L_0 + L_1)M^2/(2\sigma)` differ from the theorem's :math:`\sqrt d(L_0 + L_1)M_\nu`.
    Returns ``(K, (G, sigma, L0, L1, d, N, M, phi))``."""
    return _sign_K()


def theorem43_step(L0, L1, d, scale, n_agents, noise: str = "student_t", nu=None) -> float:
    r"""Theorem 4.3's step restriction as secondary sources state it, :math:`\eta\eta_t < \ell_\nu/K`,
    :math:`K = L_1 d\sigma/(2N) + \sqrt d(L_0 + L_1)M_\nu`, with steplab's reading of its constants
    (:func:`sign_slope_bounds`: :math:`\ell_\nu = 2F_\nu(1) - 1`, :math:`M_\nu = 2\rho_\nu(0)`). Independent of x."""
    L0, L1 = _pos("L0", L0, zero=True), _pos("L1", L1, zero=True)
    d = integer("d", d, low=1)
    scale = _pos("scale", scale)
    n = integer("n_agents", n_agents, low=1)
    ell, M = sign_slope_bounds(noise, nu)
    K = L1 * d * scale / (2 * n) + math.sqrt(d) * (L0 + L1) * M
    if not K > 0:
        raise ValueError(f"L0, L1: K must be > 0, got L0={L0}, L1={L1}")
    return ell / K


@functools.lru_cache(maxsize=8)
def _toy_numeric(name: str):
    f = toy_function(name, lam=1)
    return tuple(sp.lambdify(_X, sp.diff(f, _X, k), "numpy") for k in range(3))


def sign_l0l1(name: str) -> tuple[float, float]:
    r""":math:`(L_0, L_1)` used for the separable d-dimensional :math:`\sum_j\phi(x_j)` of a toy function:
    :math:`\|\nabla^2 f\| = \max_j\phi''(x_j) \le L_0 + L_1\max_j|\phi'(x_j)| \le L_0 + L_1\|\nabla f\|_2` with the
    1-D constants of :func:`l0_for_l1`: quadratic (1, 0), quartic (1, 2), cosh2 (2, 1)."""
    choice("name", name, SIGN_DESCENT_FUNCTIONS)
    L1 = {"quadratic": 0, "quartic": 2, "cosh2": 1}[name]
    return float(l0_for_l1(toy_function(name, lam=1), L1)), float(L1)


def _sign_point(x, name, scale, n_agents, noise, nu):
    choice("name", name, SIGN_DESCENT_FUNCTIONS)
    x = array("x", x, ndim=1)
    scale = _pos("scale", scale)
    n = integer("n_agents", n_agents, low=1, high=512)
    nu = _noise_args(noise, nu)
    f0, f1, f2 = _toy_numeric(name)
    g = np.asarray(f1(x), float) * np.ones_like(x)
    return x, g, np.atleast_1d(mean_sign(g, scale, noise, nu)), n, (f0, f1, f2)


def _binomial_change(x, hs, m, n, f0):
    r""":math:`\sum_j\sum_b P(B_j = b)[\phi(x_j - h(2b - N)/N) - \phi(x_j)]` for every h in ``hs``."""
    b = np.arange(n + 1)
    p = (1 + m) / 2
    logw = (special.gammaln(n + 1) - special.gammaln(b + 1) - special.gammaln(n - b + 1))[None, :] \
        + b[None, :] * np.log(np.maximum(p, 1e-300))[:, None] + (n - b)[None, :] * np.log(np.maximum(1 - p, 1e-300))[:, None]
    w = np.exp(logw)                                   # (d, N+1)
    step = (2 * b - n) / n                             # values of D_j
    moved = x[None, :, None] - hs[:, None, None] * step[None, None, :]
    with np.errstate(over="ignore"):
        delta = np.asarray(f0(moved), float) - np.asarray(f0(x), float)[None, :, None]
    return np.sum(w[None] * delta, axis=(1, 2))


def sign_one_step_change(x, h, name: str, scale, n_agents, noise: str = "student_t", nu=None):
    r"""Exact :math:`E f(x - hD) - f(x)` of one DSignSGD step on the separable :math:`f = \sum_j\phi(x_j)`
    (``name``: quadratic :math:`x^2/2`, quartic :math:`x^4/4`, cosh2 :math:`2\cosh x`).

    Each coordinate's agent-averaged sign is :math:`D_j = (2B_j - N)/N` with
    :math:`B_j \sim \mathrm{Binomial}(N, (1 + m_j)/2)`, independent across coordinates, so the expectation is a
    finite sum over :math:`d(N+1)` terms (no expansion in h). ``h`` a number or a 1-D array."""
    x, g, m, n, (f0, _, _) = _sign_point(x, name, scale, n_agents, noise, nu)
    hs = array("h", h, ndim=(0, 1), low=0.0)
    out = _binomial_change(x, np.atleast_1d(hs), m, n, f0)
    return float(out[0]) if hs.ndim == 0 else out


SIGN_CHANGE_MODELS = ("discrete", "first_order_sde", "corrected_sde")


def _noise_density(u, noise: str, nu):
    """Density of the standard noise law at u (the mean sign's slope is twice it)."""
    if noise == "gaussian":
        return np.exp(-0.5 * u**2) / math.sqrt(2 * math.pi)
    if noise == "cauchy":
        return 1 / (math.pi * (1 + u**2))
    return np.exp(special.gammaln((nu + 1) / 2) - special.gammaln(nu / 2)) / math.sqrt(nu * math.pi) \
        * (1 + u**2 / nu) ** (-(nu + 1) / 2)


def sign_generator_change(x, h, name: str, scale, n_agents, noise: str = "student_t", nu=None,
                          model: str = "first_order_sde") -> float:
    r"""What a DSignSGD SDE predicts for the one-step change over time h: h times its generator on f at x (separable
    toy f, noise scale fixed),

    .. math:: -h\langle\nabla f, m\rangle + \tfrac{h^2}{2}\Bigl[\kappa\sum_j\phi'(x_j)\,\phi''(x_j)\,m_j\,
       \frac{2\rho(\phi'(x_j)/\sigma)}{\sigma} + \sum_j\phi''(x_j)\frac{1 - m_j^2}{N}\Bigr],

    :math:`\kappa = 0` for ``first_order_sde``, 1 for ``corrected_sde`` (the drift :math:`-m + \tfrac h2J_mm`,
    :math:`J_m = \mathrm{diag}(2\rho/\sigma)\nabla^2f`). The discrete step has :math:`\sum_j\phi''m_j^2` in that
    place instead: the corrected term agrees with it where the mean sign is linear (:math:`m \approx 2\rho(0)g/\sigma`)
    and vanishes in the sign regime, where the discrete term is largest."""
    choice("model", model, SIGN_CHANGE_MODELS[1:])
    x, g, m, n, (_, _, f2) = _sign_point(x, name, scale, n_agents, noise, nu)
    h = _pos("h", h, zero=True)
    scale = _pos("scale", scale)
    nu = _noise_args(noise, nu)
    curv = np.asarray(f2(x), float) * np.ones_like(x)
    second = float(np.sum(curv * (1 - m**2))) / n
    if model == "corrected_sde":
        second += float(np.sum(g * curv * m * 2 * _noise_density(g / scale, noise, nu) / scale))
    return -h * float(g @ m) + h**2 / 2 * second


def sign_critical_step(x, name: str, scale, n_agents, noise: str = "student_t", nu=None,
                       model: str = "discrete") -> float:
    r"""Smallest h > 0 at which the expected one-step change stops being negative.

    ``discrete``: the first root of :func:`sign_one_step_change` (scanned on a geometric grid, then ``brentq``).
    ``first_order_sde``, ``corrected_sde``: the root of :func:`sign_generator_change` (the first-order SDE misses
    the mean step's own curvature term :math:`\tfrac{h^2}2\sum_j\phi''m_j^2`; the corrected SDE has it only where
    the mean sign is linear)."""
    choice("model", model, SIGN_CHANGE_MODELS)
    x, g, m, n, (f0, _, f2) = _sign_point(x, name, scale, n_agents, noise, nu)
    gm = float(g @ m)
    if model != "discrete":
        # the generator's change is -h gm + (h^2/2) C: its root is 2 gm / C
        curv = 2 * (sign_generator_change(x, 1.0, name, scale, n_agents, noise, nu, model=model) + gm)
        return 2 * gm / curv if curv > 0 else math.inf
    hs = np.geomspace(1e-9, 1e4, 1301)
    v = _binomial_change(x, hs, m, n, f0)
    up = np.nonzero(~(v < 0))[0]
    if up.size == 0:
        return math.inf
    i = int(up[0])
    if i == 0:
        return 0.0
    fun = lambda h: float(_binomial_change(x, np.array([h]), m, n, f0)[0])  # noqa: E731
    return float(optimize.brentq(fun, hs[i - 1], hs[i], xtol=1e-300, rtol=1e-13))


# ----------------------------------------------------------------------------- DSignSGD on the extremal (L0, L1) ridge

RIDGE_MAX_TRIALS = 20_000   # d * N signs per step enter one binomial law; beyond this the sum is left to Monte Carlo


@functools.lru_cache(maxsize=1)
def _extremal_symbolic():
    y, L0, L1 = sp.symbols("y L0 L1", positive=True)
    return L0 / L1**2 * (sp.exp(L1 * y) - 1 - L1 * y), (y, L0, L1)


def l0l1_extremal_symbolic() -> tuple[sp.Expr, tuple[sp.Symbol, ...]]:
    r"""The extremal :math:`(L_0, L_1)`-smooth function of one variable on :math:`y \ge 0` (sympy):

    .. math:: F(y) = \frac{L_0}{L_1^2}\bigl(e^{L_1|y|} - 1 - L_1|y|\bigr),\qquad
       F'(y) = \mathrm{sign}(y)\frac{L_0}{L_1}\bigl(e^{L_1|y|} - 1\bigr),\qquad F''(y) = L_0e^{L_1|y|} = L_0 + L_1|F'(y)| .

    The curvature bound :math:`F'' \le L_0 + L_1|F'|` holds with equality everywhere (F is even, :math:`C^2` at 0:
    :math:`F'(0) = 0`, :math:`F''(0^\pm) = L_0`): among functions with :math:`F(0) = F'(0) = 0` and that bound, F is the
    largest at every y (Grönwall on :math:`|F'| + L_0/L_1`). Returns ``(F on y >= 0, (y, L0, L1))``."""
    return _extremal_symbolic()


def _e2(t: np.ndarray) -> np.ndarray:
    r""":math:`e^t - 1 - t` without cancellation (Taylor series for :math:`|t| < 10^{-2}`, relative error < 1e-15)."""
    t = np.asarray(t, float)
    small = np.abs(t) < 1e-2
    ts = np.where(small, t, 0.0)
    series = ts**2 * (0.5 + ts * (1 / 6 + ts * (1 / 24 + ts * (1 / 120 + ts * (1 / 720 + ts / 5040)))))
    with np.errstate(over="ignore", invalid="ignore"):
        direct = np.expm1(np.where(small, 1.0, t)) - np.where(small, 1.0, t)
    return np.where(small, series, direct)


def _l0l1_pair(L0, L1) -> tuple[float, float]:
    return _pos("L0", L0), _pos("L1", L1)


def l0l1_extremal(y, L0=1.0, L1=1.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Values of :math:`F, F', F''` of :func:`l0l1_extremal_symbolic` at ``y`` (a number or an array; any sign),
    without cancellation near 0. The d-dimensional ridge :math:`f(x) = F(\langle u, x\rangle)`, :math:`u = \mathbf 1/\sqrt d`,
    has :math:`\nabla f = F'u`, :math:`\nabla^2 f = F''\,uu^\top`, hence :math:`\|\nabla^2 f\| = F'' = L_0 + L_1\|\nabla f\|`:
    it is :math:`(L_0, L_1)`-smooth with the same constants, with equality."""
    L0, L1 = _l0l1_pair(L0, L1)
    y = array("y", y, ndim=(0, 1))
    a = L1 * np.abs(y)
    with np.errstate(over="ignore"):
        out = (L0 / L1**2 * _e2(a), np.sign(y) * L0 / L1 * np.expm1(a), L0 * np.exp(a))
    return out if y.ndim else tuple(float(v) for v in out)


def _ridge_inputs(y, d, scale, n_agents, noise, nu, L0, L1):
    y = real("y", y)
    d = integer("d", d, low=1, high=RIDGE_MAX_TRIALS)
    scale = _pos("scale", scale)
    n = integer("n_agents", n_agents, low=1, high=RIDGE_MAX_TRIALS)
    if d * n > RIDGE_MAX_TRIALS:
        raise ValueError(f"d, n_agents: d*n_agents must be <= {RIDGE_MAX_TRIALS} (one binomial law of d*N signs), "
                         f"got d={d}, n_agents={n}")
    nu = _noise_args(noise, nu)
    L0, L1 = _l0l1_pair(L0, L1)
    a = L1 * abs(y)
    if not a < 700.0:
        raise ValueError(f"y, L1: L1*|y| must be < 700 (e^(L1|y|) finite), got y={y}, L1={L1}")
    grad_coord = L0 / L1 * math.expm1(a) / math.sqrt(d)   # every coordinate of grad f at x = y u (taken y >= 0)
    m = float(mean_sign(grad_coord, scale, noise, nu))
    return a, d, n, m, grad_coord, L0, L1


def _ridge_law(d: int, n: int, m: float) -> tuple[np.ndarray, np.ndarray]:
    r"""Law of :math:`\langle u, D\rangle = (2B - dN)/(N\sqrt d)`, :math:`B \sim` Binomial(dN, (1 + m)/2): weights, values."""
    trials = d * n
    b = np.arange(trials + 1)
    return stats.binom.pmf(b, trials, (1.0 + m) / 2.0), (2 * b - trials) / (n * math.sqrt(d))


def _ridge_change(a, hs, d, n, m, L0, L1, law=None):
    r"""Exact :math:`E F(y - hZ) - F(y)` for :math:`L_1y = a \ge 0` and every h in ``hs`` (see
    :func:`ridge_one_step_change`); the linear part :math:`-h\sqrt d\,mF'(y)` is taken out exactly, the rest summed as
    Taylor remainders :math:`F(y + s) - F(y) - F'(y)s \ge 0` (no cancellation)."""
    w, z = _ridge_law(d, n, m) if law is None else law       # z: the values of <u, D>
    t = -L1 * np.asarray(hs, float)[:, None] * z[None, :]     # L1 times the move of <u, x>
    ga = math.expm1(a)
    with np.errstate(over="ignore", invalid="ignore"):
        same = math.exp(a) * _e2(t)                           # a + t >= 0: e^a E2(t)
        cross = _e2(-a - t) - _e2(np.array(a)) - ga * t       # a + t < 0: the step passes the minimizer
        rem = np.where(a + t >= 0, same, cross)
        lin = -L1 * np.asarray(hs, float) * math.sqrt(d) * m * ga
        return L0 / L1**2 * (lin + np.sum(w[None, :] * rem, axis=1))


def ridge_one_step_change(y, h, d, scale, n_agents, noise: str = "student_t", nu=None, L0=1.0, L1=1.0):
    r"""Exact expected change :math:`E f(x - hD) - f(x)` of one DSignSGD step on the ridge
    :math:`f(x) = F(\langle u, x\rangle)` (:func:`l0l1_extremal`, :math:`u = \mathbf 1/\sqrt d`) at :math:`x = yu`.

    Every coordinate of :math:`\nabla f(x)` equals :math:`F'(y)/\sqrt d`, so each of the dN signs
    :math:`\mathrm{sign}(\partial_jf + \sigma Z_{ij})` (noise law ``noise``/``nu``, scale :math:`\sigma` = ``scale``) is
    +1 with the same probability :math:`p = (1 + m)/2`, :math:`m = 2F_\nu(F'(y)/(\sqrt d\sigma)) - 1`, independently. The
    step moves only :math:`\langle u, x\rangle`, by

    .. math:: -h\langle u, D\rangle = -h\,\frac{2B - dN}{N\sqrt d},\qquad B \sim \mathrm{Binomial}(dN, p),

    so :math:`E f(x^+) - f(x) = \sum_b P(B = b)\,[F(y - hz_b) - F(y)]`: a finite sum, no expansion in h. All signs
    agreeing moves :math:`\langle u, x\rangle` by :math:`h\sqrt d`: the step length :math:`\|hD\| \le h\sqrt d` used inside
    the Grönwall factor is attained. ``h`` a number or a 1-D array (>= 0)."""
    a, d, n, m, _, L0, L1 = _ridge_inputs(y, d, scale, n_agents, noise, nu, L0, L1)
    hs = array("h", h, ndim=(0, 1), low=0.0)
    out = _ridge_change(a, np.atleast_1d(hs), d, n, m, L0, L1)
    return float(out[0]) if hs.ndim == 0 else out


def ridge_critical_step(y, d, scale, n_agents, noise: str = "student_t", nu=None, L0=1.0, L1=1.0) -> float:
    r"""The exact critical step :math:`h^\ast`: the root of :func:`ridge_one_step_change` in h > 0.

    :math:`h \mapsto E F(y - hZ)` is convex (F is), so the change divided by h increases from
    :math:`-\langle\nabla f, m\rangle < 0` at :math:`h = 0^+`: one root, every :math:`h < h^\ast` descends in expectation and
    every larger one ascends (bracketed by doubling, then ``brentq``). 0 where :math:`\nabla f = 0` (y = 0)."""
    a, d, n, m, gc, L0, L1 = _ridge_inputs(y, d, scale, n_agents, noise, nu, L0, L1)
    return _convex_root(_ridge_change, _ridge_law, a, d, n, m, gc, L0, L1)


def _convex_root(change, law_of, a, d, n, m, gc, L0, L1) -> float:
    r"""The positive root of a one-step change that is convex in h with slope :math:`-\langle\nabla f, m\rangle` at 0
    (``change(a, hs, d, n, m, L0, L1, law)``, ``law = law_of(d, n, m)``): the change over h increases, so the root is
    bracketed by doubling from :math:`1/(L_1\sqrt d)` and found by ``brentq``; 0 where
    :math:`\langle\nabla f, m\rangle \le 0`."""
    slope0 = math.sqrt(d) * gc * m                                # <grad f, m>
    if not slope0 > 0:
        return 0.0
    law = law_of(d, n, m)

    def quotient(h: float) -> float:
        return -slope0 if h == 0 else float(change(a, np.array([h]), d, n, m, L0, L1, law)[0]) / h

    hi = 1.0 / (L1 * math.sqrt(d))
    while quotient(hi) < 0:
        hi *= 2.0
        if hi > 1e6:   # cannot happen for p < 1 or a > 0 (F grows); a guard against an endless loop
            return math.inf
    return float(optimize.brentq(quotient, 0.0, hi, xtol=1e-300, rtol=1e-14, maxiter=500))


def ridge_condition_steps(y, d, scale, n_agents, noise: str = "student_t", nu=None, L0=1.0, L1=1.0) -> dict:
    r"""The steps that steplab's descent condition allows on the ridge at :math:`x = yu` (gradient
    :math:`F'(y)u`): ``steplab`` with the Grönwall factor :math:`\varphi(L_1h\sqrt d)`, ``half_phi`` with
    :math:`\varphi` replaced by 1/2 (:func:`sign_sufficient_step`), and ``phi_at_half``
    :math:`= \varphi(L_1h_{1/2}\sqrt d)`, what the factor would be at the :math:`\varphi = 1/2` step."""
    a, d, n, m, gc, L0, L1 = _ridge_inputs(y, d, scale, n_agents, noise, nu, L0, L1)
    g = np.full(d, gc)
    args = (scale, L0, L1, n, noise, nu)
    out = {rule: sign_sufficient_step(g, *args, rule=rule) for rule in ("steplab", "half_phi")}
    out["phi_at_half"] = sign_remainder_factor(L1 * out["half_phi"] * math.sqrt(d))
    return out


RADIAL_MAX_STATES = 200_000   # compositions of d coordinates over the N + 1 values of one coordinate's sign sum


@functools.lru_cache(maxsize=32)
def _compositions(d: int, k: int) -> np.ndarray:
    """Every vector of k non-negative counts summing to d (stars and bars), one per row."""
    rows = []
    for bars in itertools.combinations(range(d + k - 1), k - 1):
        edges = (-1,) + bars + (d + k - 1,)
        rows.append([edges[i + 1] - edges[i] - 1 for i in range(k)])
    return np.array(rows, dtype=np.int64)


def _radial_law(d: int, n: int, m: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Joint law of :math:`(S_1, S_2) = (\sum_jk_j, \sum_jk_j^2)`, :math:`k_j = 2B_j - N`, :math:`B_j` iid
    Binomial(N, (1 + m)/2): a multinomial over how many coordinates take each of the N + 1 values."""
    k = 2 * np.arange(n + 1) - n
    q = stats.binom.pmf(np.arange(n + 1), n, (1.0 + m) / 2.0)
    C = _compositions(d, n + 1)
    logq = np.log(np.where(q > 0, q, 1.0)) - np.where(q > 0, 0.0, 1e300)   # a value of probability 0: weight 0
    logw = special.gammaln(d + 1) - np.sum(special.gammaln(C + 1), axis=1) + C @ logq
    return np.exp(logw), C @ k, C @ k**2


def _radial_inputs(y, d, scale, n_agents, noise, nu, L0, L1):
    out = _ridge_inputs(y, d, scale, n_agents, noise, nu, L0, L1)
    d, n = out[1], out[2]
    states = math.comb(d + n, n)
    if states > RADIAL_MAX_STATES:
        raise ValueError(f"d, n_agents: the exact radial sum runs over C(d + N, N) = {states} states, more than "
                         f"{RADIAL_MAX_STATES}; got d={d}, n_agents={n}")
    return out


def _radial_change(a, hs, d, n, m, L0, L1, law=None):
    r"""Exact :math:`E F(\|x - hD\|) - F(r)` at :math:`L_1r = a` for every h in ``hs`` (see
    :func:`radial_one_step_change`), the radius change computed as :math:`(\rho^2 - r^2)/(\rho + r)` and F's change as
    :math:`F'(r)\delta + e^{L_1r}\tfrac{L_0}{L_1^2}E_2(L_1\delta)` (both radii are >= 0: no cancellation)."""
    w, s1, s2 = _radial_law(d, n, m) if law is None else law
    hs = np.asarray(hs, float)[:, None]
    r = a / L1
    num = -2 * hs * r * s1[None, :] / (n * math.sqrt(d)) + hs**2 * s2[None, :] / n**2    # rho^2 - r^2
    rho = np.sqrt(np.maximum(r * r + num, 0.0))
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        delta = np.where(rho + r > 0, num / np.where(rho + r > 0, rho + r, 1.0), 0.0)
        t = L1 * delta
        change = math.expm1(a) * t + math.exp(a) * _e2(t)
        return L0 / L1**2 * np.sum(w[None, :] * change, axis=1)


def radial_one_step_change(y, h, d, scale, n_agents, noise: str = "student_t", nu=None, L0=1.0, L1=1.0):
    r"""Exact expected change :math:`E f(x - hD) - f(x)` of one DSignSGD step on the radial
    :math:`f(x) = F(\|x\|)` (:func:`l0l1_extremal`) at :math:`x = yu`, :math:`u = \mathbf 1/\sqrt d` (the same gradient as the
    ridge of :func:`ridge_one_step_change` there, hence the same condition steps, :func:`ridge_condition_steps`).

    :math:`\nabla^2 f` has the eigenvalue :math:`F''(\|x\|) = L_0 + L_1\|\nabla f\|` radially and
    :math:`F'(\|x\|)/\|x\| \le F''` across (F' is convex with F'(0) = 0), so f is :math:`(L_0, L_1)`-smooth with the same
    constants; unlike the ridge it curves in every direction, so the whole noise share :math:`d/N` of
    :math:`E\|D\|^2` costs (near the minimizer it is the isotropic quadratic, where the condition is exact). With
    :math:`k_j = ND_j` the new radius is :math:`\sqrt{r^2 - 2hrS_1/(N\sqrt d) + h^2S_2/N^2}`, :math:`S_1 = \sum_jk_j`,
    :math:`S_2 = \sum_jk_j^2`: a finite sum over the multinomial law of the coordinates' values
    (:math:`\binom{d+N}{N}` states, at most :data:`RADIAL_MAX_STATES`)."""
    a, d, n, m, _, L0, L1 = _radial_inputs(y, d, scale, n_agents, noise, nu, L0, L1)
    hs = array("h", h, ndim=(0, 1), low=0.0)
    out = _radial_change(a, np.atleast_1d(hs), d, n, m, L0, L1)
    return float(out[0]) if hs.ndim == 0 else out


def radial_critical_step(y, d, scale, n_agents, noise: str = "student_t", nu=None, L0=1.0, L1=1.0) -> float:
    r"""The root :math:`h^\ast > 0` of :func:`radial_one_step_change`: :math:`h \mapsto \|x - hD\|` is convex and F is
    convex and increasing in the radius, so the expected change is convex in h and has one positive root, as on the
    ridge. 0 where :math:`\nabla f = 0`."""
    a, d, n, m, gc, L0, L1 = _radial_inputs(y, d, scale, n_agents, noise, nu, L0, L1)
    return _convex_root(_radial_change, _radial_law, a, d, n, m, gc, L0, L1)


# ----------------------------------------------------------------------------- pre-scheduled steps on x^4/4

SCHEDULE_KINDS = ("constant", "inv_sqrt")


def _schedule_ratio(schedule: str, t: np.ndarray | int):
    r""":math:`r_t = \eta_{t+1}/\eta_t`: 1 (constant) or :math:`\sqrt{(t+1)/(t+2)}` (:math:`\eta_t = \eta_0/\sqrt{t+1}`)."""
    return 1.0 if schedule == "constant" else math.sqrt((t + 1) / (t + 2))


@functools.lru_cache(maxsize=1)
def _quartic_schedule_map():
    x, eta0, eta1, S = sp.symbols("x eta_t eta_t1 S", positive=True)
    s = sp.Symbol("s", positive=True)
    x_next = x - eta0 * x**3 * S            # one step on x^4/4 with direction f'(x) S
    s_next = sp.simplify((eta1 * x_next**2).subs(x, sp.sqrt(s / eta0)))
    return sp.simplify(s_next.subs(eta1, sp.Symbol("r", positive=True) * eta0)), (s, sp.Symbol("r", positive=True), S)


def quartic_schedule_map() -> tuple[sp.Expr, tuple[sp.Symbol, ...]]:
    r"""The step of :math:`f = x^4/4` in the scale-free variable :math:`s_t = \eta_tx_t^2` (sympy).

    DCSGD's direction on :math:`x^4/4` with multiplicative noise and unbiased compression is :math:`f'(x)S`
    (:math:`S = \frac1N\sum_iB_i(1+\sigma_1\xi_i)/q_i`, :math:`ES = 1`; S = 1 without noise), so
    :math:`x_{t+1} = x_t(1 - s_tS_t)` and, with :math:`r_t = \eta_{t+1}/\eta_t`,

    .. math:: s_{t+1} = r_t\,s_t\,(1 - s_tS_t)^2 .

    x itself has dropped out: the divergence of a pre-scheduled step depends on :math:`(\eta_0, x_0)` only
    through :math:`s_0 = \eta_0x_0^2`. Returns ``(s_next, (s, r, S))``."""
    return _quartic_schedule_map()


def _sure_escape(schedule: str) -> float:
    r"""Level above which :math:`s_t` never decreases again without noise: :math:`r_{\min}(s-1)^2 \ge 1`
    (:math:`r_{\min} = 1` constant, :math:`1/\sqrt2` for :math:`1/\sqrt{t+1}`), solved by sympy."""
    s, r = sp.symbols("s r", positive=True)
    r_min = 1 if schedule == "constant" else 1 / sp.sqrt(2)
    roots = [v for v in sp.solve(sp.Eq(r * (s - 1) ** 2, 1).subs(r, r_min), s) if v > 1]
    return float(roots[0])


@functools.lru_cache(maxsize=64)
def _schedule_threshold(schedule: str, t0: int) -> float:
    sure = _sure_escape(schedule)

    def escapes(s0: float) -> bool:
        s = s0
        for t in range(t0, t0 + 100_000):
            if s <= 2.0:
                return False            # |x| stops growing and the step keeps shrinking: never escapes
            if s >= sure:
                return True
            s = _schedule_ratio(schedule, t) * s * (1 - s) ** 2
        return False

    lo, hi = 2.0, sure
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if escapes(mid) else (mid, hi)
    return 0.5 * (lo + hi)


def quartic_schedule_threshold(schedule: str = "inv_sqrt") -> float:
    r"""Noise-free escape threshold :math:`s^\ast` of GD on :math:`x^4/4` with :math:`\eta_t = \eta_0c_t`:
    :math:`|x_t| \to \infty` iff :math:`s_0 = \eta_0x_0^2 > s^\ast`.

    By :func:`quartic_schedule_map` with S = 1, :math:`s_{t+1} = r_ts_t(1 - s_t)^2`. Once :math:`s_t \le 2`,
    :math:`|x|` stops growing and :math:`s` only decreases, so the start escapes iff :math:`s_t > 2` for every t;
    the map increases in s for s > 1, so the escaping starts form a half-line, found by bisection (each orbit is
    followed until :math:`s_t \le 2` or :math:`s_t` passes the sympy level where it can no longer fall).
    Constant step: 2; :math:`1/\sqrt{t+1}`: 2.1697 (the decay saves only starts within 8.5 % of the edge)."""
    choice("schedule", schedule, SCHEDULE_KINDS)
    return _schedule_threshold(schedule, 0)


def quartic_schedule_divergence(s0, schedule: str, n_agents, omega, sigma1, n_steps: int = 20,
                                n_grid: int = 400, n_nodes: int = 161, *, max_bytes=None):
    r"""Probability that DCSGD with the pre-scheduled step :math:`\eta_t = \eta_0c_t` diverges on :math:`x^4/4`
    from :math:`s_0 = \eta_0x_0^2` (multiplicative Gaussian noise :math:`\sigma_1`, Bernoulli compressors of
    variances ``omega``, N agents).

    :math:`s_t` is a Markov chain (:func:`quartic_schedule_map`) with i.i.d. :math:`S_t`, a mixture over the kept
    agents K of :math:`\mathcal N(\mu_K, s_K^2)`. Backward recursion on a log grid of s,
    :math:`V_t(s) = E\,V_{t+1}(r_ts(1 - sS))^2)`, over ``n_steps`` steps; at the horizon the noise-free rule
    (escape iff :math:`s > s^\ast` of the schedule restarted there); :math:`s < 10^{-6}` counts as converged
    and :math:`s > 10^8` as diverged (from there escape fails only if :math:`|1 - sS| < O(s^{-1/2})`). The
    Gaussian part is integrated on ``n_nodes`` equally spaced nodes over :math:`\pm 8` standard deviations. The
    default horizon of 20 steps changes the law by < 1e-12 against 60 steps (an escape starts within a few steps;
    later the shrinking step makes one exponentially unlikely). ``max_bytes``: the allocation limit
    (:func:`theory.validate.byte_limit`) for a backward step's ``(n_grid, components x n_nodes)`` tables.
    """
    choice("schedule", schedule, SCHEDULE_KINDS)
    s0 = array("s0", s0, ndim=(0, 1), low=0.0, low_open=True)
    n = integer("n_agents", n_agents, low=1, high=12)
    om = _omegas(omega, n)
    s1 = _pos("sigma1", sigma1, zero=True)
    n_steps = integer("n_steps", n_steps, low=1, high=10_000)
    n_grid = integer("n_grid", n_grid, low=16)
    n_nodes = integer("n_nodes", n_nodes, low=3)
    merged = _merged_kept_laws(n, om, s1)
    # each backward step holds (n_grid, components x n_nodes) arrays: the next states, their logs, the interpolation
    check_bytes({"n_grid": n_grid, "n_nodes": n_nodes, "n_agents": n}, 4 * 8 * n_grid * len(merged) * n_nodes,
                what="a backward step's (grid, quadrature node) tables", max_bytes=max_bytes)
    ls = np.linspace(math.log(1e-6), math.log(1e8), n_grid)
    s = np.exp(ls)
    z, wz = _normal_nodes(n_nodes)
    values, weights = [], []
    for (mu, var), prob in merged.items():
        if var > 0:
            values.append(mu + math.sqrt(var) * z)
            weights.append(prob * wz)
        else:
            values.append(np.array([mu]))
            weights.append(np.array([prob]))
    S, w = np.concatenate(values), np.concatenate(weights)
    V = (s > _schedule_threshold(schedule, n_steps)).astype(float)
    for t in reversed(range(n_steps)):
        nxt = _schedule_ratio(schedule, t) * s[:, None] * (1 - s[:, None] * S[None, :]) ** 2
        lv = np.log(np.maximum(nxt, 1e-300))
        V = np.interp(lv, ls, V, left=0.0, right=1.0) @ w
    out = np.interp(np.log(s0), ls, V)
    return float(out) if s0.ndim == 0 else out


def quartic_schedule_divergence_affine(x0, eta0, schedule: str, n_agents, omega, sigma0, sigma1, n_steps: int = 20,
                                       n_grid: int = 400, n_nodes: int = 81, *, max_bytes=None):
    r""":func:`quartic_schedule_divergence` under affine noise :math:`\sigma_0^2 + \sigma_1^2 f'(x)^2` (per-agent
    Gaussian noise of that variance, then Bernoulli compression), as a function of the start ``x0`` and ``eta0``.

    With :math:`\sigma_0 > 0` the chain is no longer scale-free, so the recursion runs on :math:`|x|` (the law is
    symmetric): given the kept agents K, DCSGD's direction is Gaussian,
    :math:`D \sim \mathcal N(f'(x)\mu_K,\ s^2\sum_{i\in K}(Nq_i)^{-2})`, :math:`s^2 = \sigma_0^2 + \sigma_1^2f'(x)^2`,
    and :math:`V_t(x) = E\,V_{t+1}(|x - \eta_tD|)` on a log grid of :math:`|x| \in [10^{-4}, 10^8]`
    (outside: converged / diverged), with the noise-free rule at the horizon. At :math:`\sigma_0 = 0` it is the
    s-chain law at :math:`s_0 = \eta_0x_0^2`. ``max_bytes``: as for :func:`quartic_schedule_divergence`."""
    choice("schedule", schedule, SCHEDULE_KINDS)
    x0 = array("x0", x0, ndim=(0, 1), low=0.0, low_open=True)
    eta0 = _pos("eta0", eta0)
    n = integer("n_agents", n_agents, low=1, high=12)
    om = _omegas(omega, n)
    s0_, s1 = _pos("sigma0", sigma0, zero=True), _pos("sigma1", sigma1, zero=True)
    n_steps = integer("n_steps", n_steps, low=1, high=10_000)
    n_grid = integer("n_grid", n_grid, low=16)
    n_nodes = integer("n_nodes", n_nodes, low=3)
    merged = _merged_kept_laws(n, om, 1.0)   # sigma1 = 1 here: var is sum_K (N q_i)^-2
    check_bytes({"n_grid": n_grid, "n_nodes": n_nodes, "n_agents": n}, 5 * 8 * n_grid * len(merged) * n_nodes,
                what="the (grid, component, node) direction table and a backward step's tables", max_bytes=max_bytes)
    lx = np.linspace(math.log(1e-4), math.log(1e8), n_grid)
    x = np.exp(lx)
    z, wz = _normal_nodes(n_nodes)
    mus = np.array([k[0] for k in merged])
    sds = np.sqrt(np.array([k[1] for k in merged]))
    probs = np.array(list(merged.values()))
    g = x**3
    s = np.sqrt(s0_**2 + s1**2 * g**2)
    # nodes: (grid point, component, z): D = g mu + s sd z (a component with sd = 0 gets the same value at every z)
    D = g[:, None, None] * mus[None, :, None] + (s[:, None, None] * sds[None, :, None]) * z[None, None, :]
    w = probs[:, None] * wz[None, :]
    eta = lambda t: eta0 * (1.0 if schedule == "constant" else 1.0 / math.sqrt(t + 1))  # noqa: E731
    V = (eta(n_steps) * x**2 > _schedule_threshold(schedule, n_steps)).astype(float)
    for t in reversed(range(n_steps)):
        nxt = np.abs(x[:, None, None] - eta(t) * D)
        V = np.einsum("gkz,kz->g", np.interp(np.log(np.maximum(nxt, 1e-300)), lx, V, left=0.0, right=1.0), w)
    out = np.interp(np.log(x0), lx, V)
    return float(out) if x0.ndim == 0 else out
