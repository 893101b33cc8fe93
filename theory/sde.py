r"""Modified equations, (L0,L1)-smoothness, compressed and sign-based distributed SGD.

Topic ``sde`` (Compagnoni et al., arXiv 2506.00181). The abstract is quoted; the equations below
are secondary (standard notes) and are re-derived here in sympy; the exact 1-D DCSGD threshold,
the quartic/cosh thresholds and the normalization demos are derived here.

Modified equations of gradient descent :math:`x_{k+1} = x_k - \eta\nabla f(x_k)` (drifts):

.. math::
   b_1 = -\nabla f,\qquad
   b_2 = -\nabla\bigl(f + \tfrac{\eta}{4}\|\nabla f\|^2\bigr) = -\nabla f - \tfrac{\eta}{2}\nabla^2 f\,\nabla f,\qquad
   b_c = -\nabla f + \tfrac{\eta}{2}\nabla^2 f\,\nabla f .

:math:`b_c` (the curvature-corrected drift) makes :math:`\tfrac{d}{dt}f(X_t)` equal the one-step
Taylor quotient :math:`(f(x-\eta\nabla f)-f(x))/\eta = -\|\nabla f\|^2 + \tfrac{\eta}{2}\nabla f^\top
\nabla^2 f\,\nabla f + O(\eta^2)`; the SDEs add the diffusion :math:`\sqrt{\eta}\,\Sigma^{1/2}dW`.

Pure mathematics: sympy, with numpy/scipy for the numeric closed forms (erf, Student-t CDF,
root finding). No JAX, no I/O, no plotting.
"""
from __future__ import annotations

import numbers
from typing import Iterable, Sequence

import numpy as np
import sympy as sp
from scipy import optimize, special

__all__ = [
    "DRIFT_KINDS", "ESCAPE_KINDS", "NOISE_LAWS", "ETA",
    "gradient", "hessian", "drift", "modified_drifts", "taylor_quotient", "energy_rate",
    "toy_function", "quadratic_log_rate", "quadratic_threshold", "critical_step", "quartic_thresholds",
    "escape_threshold_x", "l0_for_l1", "sufficient_step",
    "dcsgd_ms_factor_symbolic", "dcsgd_ms_factor", "dcsgd_threshold", "normalized_step",
    "mean_sign", "sign_variance", "mean_sign_symbolic", "mean_sign_slope_at_zero",
]

DRIFT_KINDS = ("first_order", "second_order", "corrected")
ESCAPE_KINDS = ("gd",) + DRIFT_KINDS
NOISE_LAWS = ("gaussian", "student_t", "cauchy")
ETA = sp.Symbol("eta", positive=True)
_X = sp.Symbol("x", real=True)


# ----------------------------------------------------------------------------- validation

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


def _kind(kind: str, allowed: Sequence[str], name: str = "kind") -> str:
    if kind not in allowed:
        raise ValueError(f"{name}: expected one of {tuple(allowed)}, got {kind!r}")
    return kind


def _positive(name: str, value, *, allow_zero: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, np.floating, np.integer)):
        raise TypeError(f"{name}: expected a real number, got {value!r} ({type(value).__name__})")
    value = float(value)
    ok = value >= 0 if allow_zero else value > 0
    if not np.isfinite(value) or not ok:
        rng = "finite and >= 0" if allow_zero else "finite and > 0"
        raise ValueError(f"{name}: expected a real number {rng}, got {value!r}")
    return value


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
    _kind(kind, DRIFT_KINDS)
    g = gradient(f, variables)
    if kind == "first_order":
        return -g
    if kind == "second_order":
        # Derived as a gradient so the test can compare it with -H g/2 exactly.
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
    g = gradient(f, variables)
    step = {v: v - eta * g[i] for i, v in enumerate(variables)}
    quotient = (f.subs(step, simultaneous=True) - f) / eta
    return sp.expand(sp.series(quotient, eta, 0, 2).removeO())


def energy_rate(f: sp.Expr, variables, kind: str, eta: sp.Expr = ETA) -> sp.Expr:
    r""":math:`\tfrac{d}{dt} f(X_t) = \nabla f^\top b` along the deterministic modified equation ``kind``."""
    variables = _variables(f, variables)
    return sp.expand((gradient(f, variables).T * drift(f, variables, kind, eta))[0, 0])


def toy_function(name: str, x: sp.Symbol = _X, lam: sp.Expr = sp.Symbol("lambda", positive=True)) -> sp.Expr:
    r"""The 1-D test functions: ``quadratic`` :math:`\lambda x^2/2`, ``quartic`` :math:`x^4/4`,
    ``cosh2`` :math:`2\cosh x`, ``logcosh`` :math:`\log\cosh x`."""
    table = {"quadratic": lam * x**2 / 2, "quartic": x**4 / 4, "cosh2": 2 * sp.cosh(x), "logcosh": sp.log(sp.cosh(x))}
    _kind(name, tuple(table), "name")
    return table[name]


# ----------------------------------------------------------------------------- thresholds

def quadratic_log_rate(kind: str, lam: sp.Expr = sp.Symbol("lambda", positive=True), eta: sp.Expr = ETA) -> sp.Expr:
    r"""Per-unit-time log-rate of :math:`f = \lambda x^2/2` (time :math:`t = k\eta`).

    GD: :math:`\tfrac{2}{\eta}\log|1-\eta\lambda|`; a modified equation with linear drift
    :math:`b(x) = c\,x` gives :math:`2c`, i.e. :math:`-2\lambda`, :math:`-2\lambda-\eta\lambda^2`,
    :math:`-2\lambda+\eta\lambda^2` (the latter two read off the sympy drifts).
    """
    _kind(kind, ESCAPE_KINDS)
    if kind == "gd":
        return 2 / eta * sp.log(sp.Abs(1 - eta * lam))
    b = drift(lam * _X**2 / 2, [_X], kind, eta)[0]
    return sp.expand(2 * sp.cancel(b / _X))


def quadratic_threshold(kind: str, lam: sp.Expr = sp.Symbol("lambda", positive=True)):
    r"""Smallest :math:`\eta > 0` at which the quadratic's log-rate turns non-negative, or ``None``.

    GD: :math:`|1-\eta\lambda| = 1 \Rightarrow \eta = 2/\lambda`; corrected: :math:`-2\lambda+\eta\lambda^2=0
    \Rightarrow 2/\lambda`; the classic drifts have no positive root.
    """
    _kind(kind, ESCAPE_KINDS)
    eta = sp.Symbol("eta_", positive=True)
    if kind == "gd":
        roots = sp.solve(sp.Eq((1 - eta * lam) ** 2, 1), eta)
    else:
        roots = sp.solve(sp.Eq(quadratic_log_rate(kind, lam, eta), 0), eta)
    roots = [r for r in roots if r.is_positive]
    return min(roots, key=lambda r: float(r.subs(lam, 1)) if r.free_symbols else float(r)) if roots else None


def critical_step(f: sp.Expr, kind: str, x: sp.Symbol = _X):
    r"""Step size above which :math:`|x|` grows at the point :math:`x` (1-D, :math:`x f'(x) > 0`), or ``None``.

    GD: :math:`(x-\eta f')^2 > x^2 \iff \eta f'(x)/x > 2`, i.e. :math:`\eta^\ast = 2x/f'(x)`.
    An ODE :math:`\dot x = b(x)` pushes outwards iff :math:`x\,b(x) > 0`; with
    :math:`b = -f'(1 \mp \tfrac{\eta}{2} f'')`: corrected :math:`\eta^\ast = 2/f''(x)`; the classic
    drifts never push outwards for convex :math:`f` (``None``). Solved for :math:`\eta` by sympy.
    """
    _kind(kind, ESCAPE_KINDS)
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
    x = sp.Symbol("x", positive=True)
    out = {}
    for kind in ESCAPE_KINDS:
        eta_star = critical_step(x**4 / 4, kind, x)
        # eta*(x) x^2 is constant for x^4/4 (scale invariance), so s* = eta*(x) x^2.
        out[kind] = None if eta_star is None else sp.simplify(eta_star * x**2)
    return out


def escape_threshold_x(name: str, kind: str, eta: float, x_max: float = 60.0) -> float | None:
    r"""Smallest :math:`x_0 > 0` above which :math:`|x|` grows under ``kind`` at step ``eta`` (numeric root
    of :math:`\eta = \eta^\ast(x)` from :func:`critical_step`), or ``None`` if there is none below ``x_max``."""
    eta = _positive("eta", eta)
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
    if isinstance(L1, (numbers.Real, np.floating)):
        L1 = sp.nsimplify(_positive("L1", L1, allow_zero=True))
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
    L0 = _positive("L0", L0, allow_zero=True)
    L1 = _positive("L1", L1, allow_zero=True)
    grad_norm = _positive("grad_norm", grad_norm, allow_zero=True)
    if L0 + L1 * grad_norm == 0:
        raise ValueError("L0, L1: L0 + L1*grad_norm must be > 0")
    return 2.0 / (L0 + L1 * grad_norm)


# ----------------------------------------------------------------------------- DCSGD

def _expect(expr: sp.Expr, moments: dict[sp.Symbol, Iterable[sp.Expr]]) -> sp.Expr:
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

    .. math:: \frac{E x_{k+1}^2}{x_k^2} = (1-\eta a)^2 + \frac{\eta^2 a^2\,[\omega + \sigma_1^2(1+\omega)]}{N},
       \qquad \eta^\ast = \frac{2}{a\,[1 + (\omega + \sigma_1^2(1+\omega))/N]} .

    Returns ``(factor, threshold, (eta, a, N, omega, sigma1))``.
    """
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
    arr = np.asarray(omega, dtype=float) if not isinstance(omega, (str, bytes)) else None
    if arr is None or arr.dtype.kind not in "fi":
        raise TypeError(f"omega: expected a number or a sequence of numbers, got {omega!r}")
    if arr.ndim == 0:
        arr = np.full(n_agents, float(arr))
    if arr.ndim != 1 or arr.shape[0] != n_agents:
        raise ValueError(f"omega: expected a scalar or {n_agents} per-agent values, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise ValueError(f"omega: compressor variances must be finite and >= 0, got {arr.tolist()}")
    return arr


def _n_agents(n_agents) -> int:
    if isinstance(n_agents, bool) or not isinstance(n_agents, (int, np.integer)):
        raise TypeError(f"n_agents: expected a positive integer, got {n_agents!r} ({type(n_agents).__name__})")
    if n_agents < 1:
        raise ValueError(f"n_agents: expected a positive integer, got {n_agents}")
    return int(n_agents)


def _dcsgd_excess(n_agents, omega, sigma1) -> float:
    n = _n_agents(n_agents)
    om = _omegas(omega, n)
    s1 = _positive("sigma1", sigma1, allow_zero=True)
    return float(np.mean(om + s1**2 * (1 + om))) / n


def dcsgd_ms_factor(eta, a, n_agents, omega, sigma1) -> float:
    r"""Numeric one-step factor :math:`(1-\eta a)^2 + \eta^2a^2\,\overline{V}/N`,
    :math:`\overline V = \frac1N\sum_i[\omega_i + \sigma_1^2(1+\omega_i)]` (agent-specific :math:`\omega_i` allowed)."""
    eta = _positive("eta", eta)
    a = _positive("a", a)
    return (1 - eta * a) ** 2 + (eta * a) ** 2 * _dcsgd_excess(n_agents, omega, sigma1)


def dcsgd_threshold(a, n_agents, omega, sigma1) -> float:
    r"""Exact mean-square threshold :math:`\eta^\ast = 2/(a[1 + \overline V/N])` of DCSGD on :math:`a x^2/2`
    (see :func:`dcsgd_ms_factor_symbolic`); ``omega`` is a scalar or one value per agent."""
    a = _positive("a", a)
    return 2.0 / (a * (1.0 + _dcsgd_excess(n_agents, omega, sigma1)))


def normalized_step(c, L0, L1, grad_norm, n_agents, omega, sigma1, d: int = 1) -> float:
    r"""Normalization prescription (derived):
    :math:`\eta_t = c\,/\,\bigl[(L_0 + L_1\|\nabla f(x_t)\|)(1 + (\bar\omega + d(\sigma_1^2\bar\omega + \sigma_1^2))/N)\bigr]`,
    :math:`0 < c < 2`; guarantees decrease of the corrected SDE's drift term when :math:`\sigma_0 = 0`."""
    c = _positive("c", c)
    if c >= 2:
        raise ValueError(f"c: expected 0 < c < 2, got {c}")
    n = _n_agents(n_agents)
    om = float(np.mean(_omegas(omega, n)))
    s1 = _positive("sigma1", sigma1, allow_zero=True)
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 1:
        raise ValueError(f"d: expected a positive integer dimension, got {d!r}")
    lip = _positive("L0", L0, allow_zero=True) + _positive("L1", L1, allow_zero=True) * _positive(
        "grad_norm", grad_norm, allow_zero=True)
    if lip == 0:
        raise ValueError("L0, L1: L0 + L1*grad_norm must be > 0")
    return c / (lip * (1 + (om + d * (s1**2 * om + s1**2)) / n))


# ----------------------------------------------------------------------------- sign laws

def _noise_args(noise: str, nu):
    _kind(noise, NOISE_LAWS, "noise")
    if noise == "student_t":
        if nu is None:
            raise ValueError("nu: noise='student_t' needs the degrees of freedom nu > 0, got None")
        return _positive("nu", nu)
    if nu is not None:
        raise ValueError(f"nu: only noise='student_t' takes nu; got nu={nu!r} with noise={noise!r}")
    return None


def mean_sign(grad, scale, noise: str = "gaussian", nu=None):
    r""":math:`E\,\mathrm{sign}(g + \sigma Z)` for symmetric noise Z: :math:`2F(g/\sigma) - 1`.

    Gaussian :math:`\mathrm{erf}(g/(\sqrt2\sigma))`; Student-t :math:`2F_\nu(g/\sigma) - 1`; Cauchy
    :math:`\tfrac{2}{\pi}\arctan(g/\sigma)`. ``grad`` is a number or array, ``scale`` > 0.
    """
    nu = _noise_args(noise, nu)
    scale = _positive("scale", scale)
    try:
        g = np.asarray(grad, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"grad: expected a real number or array, got {grad!r}") from None
    if not np.all(np.isfinite(g)):
        raise ValueError(f"grad: expected finite values, got {grad!r}")
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
    n = _n_agents(n_agents)
    return (1.0 - np.square(mean_sign(grad, scale, noise, nu))) / n


def mean_sign_symbolic(noise: str, nu: int | None = None) -> sp.Expr:
    r""":math:`2\int_{-\infty}^{u}\rho(z)\,dz - 1` integrated by sympy for the density :math:`\rho` of the
    noise law (``u`` = g/σ); Student-t for a given integer :math:`\nu`."""
    nu = _noise_args(noise, nu)
    u, z = sp.Symbol("u", real=True), sp.Symbol("z", real=True)
    if noise == "gaussian":
        rho = sp.exp(-z**2 / 2) / sp.sqrt(2 * sp.pi)
    elif noise == "cauchy":
        rho = 1 / (sp.pi * (1 + z**2))
    else:
        n = sp.nsimplify(nu)
        rho = sp.gamma((n + 1) / 2) / (sp.sqrt(n * sp.pi) * sp.gamma(n / 2)) * (1 + z**2 / n) ** (-(n + 1) / 2)
    # Symmetric density: 2F(u) - 1 = 2 * integral of rho over [0, u].
    return sp.simplify(2 * sp.integrate(rho, (z, 0, u)))


def mean_sign_slope_at_zero(scale, noise: str = "gaussian", nu=None) -> float:
    r"""Slope :math:`2\rho(0)/\sigma` of the mean sign at :math:`g = 0`."""
    nu = _noise_args(noise, nu)
    scale = _positive("scale", scale)
    if noise == "gaussian":
        rho0 = 1 / np.sqrt(2 * np.pi)
    elif noise == "cauchy":
        rho0 = 1 / np.pi
    else:
        rho0 = np.exp(special.gammaln((nu + 1) / 2) - special.gammaln(nu / 2)) / np.sqrt(nu * np.pi)
    return 2 * rho0 / scale
