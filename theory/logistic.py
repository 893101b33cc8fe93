r"""Gradient descent on logistic regression with non-separable data (Meng et al., arXiv 2406.05033).

Loss (weights :math:`a_i \ge 0`, signed features :math:`z_i = y_i x_i`; default :math:`a_i = 1/n`)

.. math:: L(w) = \sum_i a_i\,\ell(z_i^\top w),\qquad \ell(s) = \log(1 + e^{-s}),

GD map :math:`T(w) = w - \eta \nabla L(w)` with step size :math:`\eta` (the paper's :math:`\gamma`),
:math:`\lambda = \lambda_{\max}(\nabla^2 L(w^\star))` and the normalized step :math:`c = \eta\lambda`.
This module holds the sympy derivations (per-point derivatives, the GD map, the 2-cycle equations
and multiplier, the normal form at :math:`c = 2`, the piecewise-linear 1-D cycle construction for
:math:`c \in (1, 2)`) and the numerical closed forms built on them (Newton-polished minimizer,
cycle datasets, the 2-D witness below :math:`c = 1`, the 1-D orbit bound, the lift of 1-D data onto
the unit sphere of :math:`\mathbb{R}^d` and the equal-magnitude witness built with it). Pure mathematics:
numpy/scipy/sympy only. Every public function validates its arguments (:mod:`theory.validate`).
"""
from __future__ import annotations

import functools
import json
from importlib import resources

import numpy as np
import sympy as sp
from scipy import optimize, special

from theory import validate as V

__all__ = [
    "per_point_derivatives", "loss_expr", "gd_map_expr", "two_cycle_equations", "two_cycle_multiplier",
    "normal_form_amplitude", "normal_form_coefficients", "piecewise_linear_cycle",
    "validate_dataset", "minimizer", "loss", "grad", "hessian", "gd_step", "smoothness", "orbit_bound_1d",
    "cycle_dataset", "solve_two_cycle", "two_cycle_1d", "period_doubling_step", "construct_witness_2d",
    "witness_2d", "balanced_cycle_amplitude", "balanced_cycle_multiplier", "doubling_points",
    "feigenbaum_ratios", "cycles_1d", "two_point_dataset", "FEIGENBAUM_DELTA",
    "sphere_lift", "periodic_orbit", "sphere_witness", "certify_no_two_cycle_1d",
]

# ---------------------------------------------------------------------------------------------
# Symbolic derivations (sympy)
# ---------------------------------------------------------------------------------------------
s, w, lam, mu, x = sp.symbols("s w lambda mu x", real=True)
ETA = sp.Symbol("eta", positive=True)  # the step size as a symbol (numbers are passed as ``eta=``)


def _expr(name: str, value, kind=sp.Expr):
    """A sympy expression (or symbol, with ``kind=sp.Symbol``); ``TypeError`` naming the parameter otherwise."""
    if not isinstance(value, kind):
        raise TypeError(f"{name}: expected a sympy {kind.__name__}, got {type(value).__name__} {value!r:.60}")
    return value


def per_point_derivatives(order: int = 4) -> tuple[sp.Expr, ...]:
    r""":math:`\ell(s) = \log(1+e^{-s})` and its first ``order`` derivatives in :math:`s`, simplified.

    :math:`\ell' = -\sigma(-s)`, :math:`\ell'' = \sigma(s)\sigma(-s)`: the curvature is even in
    :math:`s` and decreasing in :math:`|s|` -- the mechanism behind global convergence for
    :math:`c < 1` in one dimension. ``order``: an integer in 0..8.
    """
    return _derivatives(V.integer("order", order, low=0, high=8))


@functools.lru_cache(maxsize=None)
def _derivatives(order: int) -> tuple[sp.Expr, ...]:
    ell = sp.log(1 + sp.exp(-s))
    return tuple(sp.simplify(sp.diff(ell, s, k)) for k in range(order + 1))


def loss_expr(z, weights=None, symbols=None) -> tuple[sp.Expr, tuple[sp.Symbol, ...]]:
    r"""Symbolic :math:`L(w) = \sum_i a_i \log(1 + e^{-z_i^\top w})` for a concrete small dataset.

    Returns ``(expr, (w_1, ..., w_d))`` (or the given ``symbols``, one per dimension); used to
    cross-check the JAX simulator with exact sympy gradients and Hessians.
    """
    z2, a = validate_dataset(z, weights)
    d = z2.shape[1]
    if symbols is None:
        ws = sp.symbols(f"w1:{d + 1}", real=True)
    else:
        ws = tuple(symbols)
        if len(ws) != d or not all(isinstance(t, sp.Symbol) for t in ws):
            raise ValueError(f"symbols: expected {d} sympy symbols (one per dimension of z), got {symbols!r:.60}")
    expr = sum(sp.Rational(float(ai)) * sp.log(1 + sp.exp(-sum(sp.Float(zij, 30) * wj for zij, wj in zip(zi, ws))))
               for zi, ai in zip(z2, a))
    return expr, tuple(ws)


def gd_map_expr(loss: sp.Expr, ws, eta=None) -> sp.Matrix:
    r"""The GD map :math:`T(w) = w - \eta \nabla L(w)` as a sympy column vector.

    ``loss``: a sympy expression in the symbols ``ws``; ``eta``: a positive number or a sympy
    expression (default: the symbol :data:`ETA`).
    """
    _expr("loss", loss)
    ws = tuple(ws) if isinstance(ws, (list, tuple)) else (ws,)
    for t in ws:
        _expr("ws", t, sp.Symbol)
    if eta is None:
        step = ETA
    elif isinstance(eta, sp.Expr):
        step = eta
    else:
        step = sp.Float(V.real("eta", eta, low=0.0, low_open=True), 30)
    wv = sp.Matrix(ws)
    return wv - step * sp.Matrix([sp.diff(loss, wi) for wi in ws])


def two_cycle_equations(g: sp.Expr, var: sp.Symbol = w) -> tuple[sp.Expr, sp.Expr, sp.Symbol, sp.Symbol]:
    r"""1-D 2-cycle :math:`\{u, v\}` of :math:`T(w) = w - \eta g(w)`:

    .. math:: v = u - \eta g(u),\qquad u = v - \eta g(v)\quad(\Rightarrow g(u) = -g(v)).

    ``g``: the gradient :math:`L'` as a sympy expression in ``var``. Returns the two residuals
    :math:`v - T(u)` and :math:`u - T(v)` (zero on a cycle; in the symbol :data:`ETA`) and the
    symbols ``(u, v)``.
    """
    _expr("g", g)
    _expr("var", var, sp.Symbol)
    u, v = sp.symbols("u v", real=True)
    return (v - (u - ETA * g.subs(var, u)), u - (v - ETA * g.subs(var, v)), u, v)


def two_cycle_multiplier(g: sp.Expr, var: sp.Symbol = w) -> tuple[sp.Expr, sp.Symbol, sp.Symbol]:
    r"""Stability multiplier of a 1-D 2-cycle: :math:`(T^2)'(u) = (1 - \eta g'(u))(1 - \eta g'(v))`."""
    _expr("g", g)
    _expr("var", var, sp.Symbol)
    u, v = sp.symbols("u v", real=True)
    dg = sp.diff(g, var)
    return ((1 - ETA * dg.subs(var, u)) * (1 - ETA * dg.subs(var, v)), u, v)


@functools.lru_cache(maxsize=1)
def normal_form_amplitude() -> tuple[sp.Expr, sp.Symbol, sp.Symbol]:
    r"""Leading-order amplitude of the 2-cycle born at :math:`c = 2` (flip bifurcation).

    Near :math:`w^\star`, with :math:`x = w - w^\star` and :math:`c = 2 + \mu`, the GD map is
    :math:`T(x) = -(1+\mu)x + a x^2 + b x^3 + \dots` where
    :math:`a = -\eta g_2/2`, :math:`b = -\eta g_3/6`, :math:`g_k = L^{(k+1)}(w^\star)`.
    Expanding :math:`T(T(x)) - x` gives :math:`2\mu x - 2(a^2+b)x^3 + O(\mu x^2, x^4)`, so the
    cycle's half-width is

    .. math:: A = \sqrt{\mu/(a^2 + b)}\quad(\text{supercritical iff } a^2 + b > 0).

    Derived by sympy with the scaling :math:`x = \varepsilon X`, :math:`\mu = \varepsilon^2 m`.
    Returns ``(A, a, b)`` with ``A`` in terms of the symbols ``mu``, ``a``, ``b``.
    """
    a, b, eps, X, m = sp.symbols("a b epsilon X m", real=True)
    T = lambda y: -(1 + mu) * y + a * y**2 + b * y**3  # noqa: E731
    residual = sp.expand(T(T(x)) - x)
    scaled = sp.expand(residual.subs({x: eps * X, mu: eps**2 * m}) / eps**3)
    leading = sp.simplify(scaled.series(eps, 0, 1).removeO().subs(eps, 0))
    # leading = X (2 m - 2 (a^2 + b) X^2): the non-trivial positive root is the amplitude.
    roots = [r for r in sp.solve(sp.expand(leading / X), X) if r.could_extract_minus_sign() is False]
    amplitude = sp.simplify(roots[0].subs(m, mu))
    return amplitude, a, b


def normal_form_coefficients(z, weights=None, eta=None) -> dict[str, float]:
    r"""Numbers entering the normal form of a 1-D dataset: :math:`w^\star, \lambda, g_2, g_3, a, b`.

    :math:`g_k = \sum_i a_i z_i^{k+1} \ell^{(k+1)}(z_i w^\star)`, :math:`a = -\eta g_2/2`,
    :math:`b = -\eta g_3/6` at ``eta`` (default :math:`\eta = 2/\lambda`, the bifurcation
    point). ``amplitude_coefficient`` is :math:`1/\sqrt{a^2+b}` (NaN when subcritical), so the
    amplitude law reads :math:`A \approx \sqrt{(c-2)/(a^2+b)}`.
    """
    z2, a_w = validate_dataset(z, weights)
    if z2.shape[1] != 1:
        raise ValueError(f"z: the normal form is implemented for 1-D data, got d = {z2.shape[1]}")
    w_star, lam_ = minimizer(z2, a_w)
    zz = z2[:, 0]
    sv = zz * w_star[0]
    d = [sp.lambdify(s, e, "numpy") for e in per_point_derivatives(4)]
    g2 = float(np.sum(a_w * zz**3 * d[3](sv)))
    g3 = float(np.sum(a_w * zz**4 * d[4](sv)))
    step = 2.0 / lam_ if eta is None else V.real("eta", eta, low=0.0, low_open=True)
    a, b = -step * g2 / 2, -step * g3 / 6
    return {"w_star": float(w_star[0]), "lam": lam_, "g2": g2, "g3": g3, "a": a, "b": b,
            "amplitude_coefficient": float(1 / np.sqrt(a * a + b)) if a * a + b > 0 else float("nan")}


def piecewise_linear_cycle() -> dict[str, sp.Expr]:
    r"""The 1-D "wide bump plus narrow spike" 2-cycle in its piecewise-linear limit.

    The bump has curvature :math:`\lambda` and minimizer :math:`w^\star < 0`; a spike of weight
    :math:`J/K` at :math:`z = K \gg 1` adds a step of height :math:`J` to the gradient across
    :math:`w = 0`: :math:`g(w) = \lambda(w - w^\star)` for :math:`w < 0`,
    :math:`\lambda(w - w^\star) + J` for :math:`w > 0`. Solving
    :math:`v = u - \eta g(u),\ u = v - \eta g(v)` with :math:`u < 0 < v` and :math:`c = \eta\lambda` gives

    .. math:: u = w^\star - \frac{J}{\lambda(2-c)},\quad v = w^\star + \frac{J(c-1)}{\lambda(2-c)},
              \quad (T^2)' = (1-c)^2,

    which exists iff :math:`c \in (1,2)` and :math:`|w^\star| < J(c-1)/(\lambda(2-c))`.
    Returns sympy expressions ``u``, ``v``, ``multiplier``, ``existence_bound`` in
    ``w_star, J, lambda, c``.
    """
    u, v, ws, J, c = sp.symbols("u v w_star J c", real=True)
    g_left = lambda y: lam * (y - ws)  # noqa: E731
    g_right = lambda y: lam * (y - ws) + J  # noqa: E731
    step = c / lam
    sol = sp.solve([sp.Eq(v, u - step * g_left(u)), sp.Eq(u, v - step * g_right(v))], [u, v], dict=True)[0]
    multiplier = sp.simplify((1 - step * sp.diff(g_left(u), u)) * (1 - step * sp.diff(g_right(v), v)))
    return {"u": sp.simplify(sol[u]), "v": sp.simplify(sol[v]), "multiplier": sp.factor(multiplier),
            "existence_bound": sp.simplify(sol[v] - ws)}


# ---------------------------------------------------------------------------------------------
# Numerical closed forms (float64)
# ---------------------------------------------------------------------------------------------
def validate_dataset(z, weights=None) -> tuple[np.ndarray, np.ndarray]:
    """Check and normalize a dataset: returns ``z`` as float64 (n, d) and weights (n,) (default 1/n).

    ``z``: (n,) or (n, d) finite signed features; ``weights``: None or (n,) finite, non-negative,
    not all zero. Raises ``ValueError``/``TypeError`` naming the parameter otherwise.
    """
    z2 = V.array("z", z, ndim=(1, 2))
    if z2.ndim == 1:
        z2 = z2[:, None]
    if z2.shape[1] == 0:
        raise ValueError(f"z: expected at least one feature dimension, got shape {np.shape(z)}")
    n = z2.shape[0]
    if weights is None:
        return z2, np.full(n, 1.0 / n)
    a = V.array("weights", weights, ndim=1, low=0.0)
    if a.shape != (n,):
        raise ValueError(f"weights: expected shape ({n},), one weight per point of z (n = {n}), got {a.shape}")
    if not np.any(a > 0):
        raise ValueError(f"weights: all weights are zero; at least one must be positive, got {weights!r:.60}")
    return z2, a


def _sigmoid(t):
    return special.expit(t)


def _point(name: str, value, d: int) -> np.ndarray:
    """A point of R^d (a scalar is accepted when d = 1)."""
    p = V.array(name, value, ndim=(0, 1))
    p = np.atleast_1d(p)
    if p.shape != (d,):
        raise ValueError(f"{name}: expected shape ({d},) to match the data's dimension d = {d}, got {np.shape(value)}")
    return p


def loss(w, z, weights=None):
    r""":math:`L(w) = \sum_i a_i \log(1+e^{-z_i^\top w})`, computed stably (numpy).

    ``w``: one point (d,) -> a float, or a batch (k, d) -> an array (k,) (e.g. for contour plots).
    """
    z2, a = validate_dataset(z, weights)
    d = z2.shape[1]
    if np.ndim(w) == 2:
        batch = V.array("w", w, shape=(None, d))
        return np.logaddexp(0.0, -(batch @ z2.T)) @ a
    return float(np.sum(a * np.logaddexp(0.0, -(z2 @ _point("w", w, d)))))


def grad(w, z, weights=None) -> np.ndarray:
    r""":math:`\nabla L(w) = -\sum_i a_i \sigma(-z_i^\top w) z_i`."""
    z2, a = validate_dataset(z, weights)
    return -(a * _sigmoid(-(z2 @ _point("w", w, z2.shape[1])))) @ z2


def hessian(w, z, weights=None) -> np.ndarray:
    r""":math:`\nabla^2 L(w) = \sum_i a_i \sigma(z_i^\top w)\sigma(-z_i^\top w) z_i z_i^\top`."""
    z2, a = validate_dataset(z, weights)
    m = z2 @ _point("w", w, z2.shape[1])
    return (z2 * (a * _sigmoid(m) * _sigmoid(-m))[:, None]).T @ z2


def gd_step(w, eta, z, weights=None) -> np.ndarray:
    r"""One GD update :math:`w - \eta\nabla L(w)` in float64 numpy (the reference for the JAX simulator)."""
    step = V.real("eta", eta, low=0.0, low_open=True)
    z2, a = validate_dataset(z, weights)
    p = _point("w", w, z2.shape[1])
    return p - step * grad(p, z2, a)


def smoothness(z, weights=None) -> float:
    r"""Global smoothness constant :math:`L_{\mathrm{smooth}} = \lambda_{\max}(\tfrac14\sum_i a_i z_i z_i^\top) \ge \sup_w \lambda_{\max}(\nabla^2 L(w))`.

    :math:`\sigma(s)\sigma(-s) \le 1/4` with equality at :math:`s = 0`. The classical analysis of
    smooth convex GD guarantees convergence for :math:`\eta < 2/L_{\mathrm{smooth}}`; steplab's
    claims use it as the rival to the local threshold :math:`2/\lambda`.
    """
    z2, a = validate_dataset(z, weights)
    return float(np.linalg.eigvalsh(0.25 * (z2 * a[:, None]).T @ z2)[-1])


def orbit_bound_1d(z, weights, eta, w0) -> float:
    r"""Radius of an interval that no 1-D GD orbit from ``w0`` ever leaves (non-separable data).

    With :math:`G = \max(L'(+\infty), -L'(-\infty))` (finite: :math:`|\ell'| \le 1`) and
    :math:`R = \max(|w_0|, |w^\star|)`, the interval :math:`[-(R + \eta G), R + \eta G]` is invariant:
    for :math:`w > w^\star` the gradient is in :math:`(0, G]`, so :math:`T(w) \in [w - \eta G, w)`,
    and symmetrically below :math:`w^\star`. Hence :math:`|w_t| \le R + \eta G` for every
    :math:`t` and every step size: logistic GD on non-separable 1-D data never escapes.
    """
    z2, a = validate_dataset(z, weights)
    if z2.shape[1] != 1:
        raise ValueError(f"z: orbit_bound_1d needs 1-D data, got d = {z2.shape[1]}")
    step = V.real("eta", eta, low=0.0, low_open=True)
    start = V.real("w0", w0)
    w_star, _ = minimizer(z2, a)
    zz = z2[:, 0]
    g_plus = float(np.sum(a[zz < 0] * -zz[zz < 0]))   # L'(+inf): only points with z_i w -> -inf pull back
    g_minus = float(np.sum(a[zz > 0] * zz[zz > 0]))   # -L'(-inf)
    return max(abs(start), abs(float(w_star[0]))) + step * max(g_plus, g_minus)


def _check_non_separable(z2: np.ndarray, a: np.ndarray) -> None:
    """Separable data has no finite minimizer: some u != 0 has z_i.u >= 0 for all active points.

    Decided by a linear program: maximize sum_i z_i.u subject to z_i.u >= 0, |u|_inf <= 1. A positive
    optimum is a (weakly) separating direction; a zero optimum with rank-deficient data is a null
    direction along which L is flat.
    """
    active = z2[a > 0]
    n, d = active.shape
    bounds = [(-1, 1)] * d
    res = optimize.linprog(-active.sum(axis=0), A_ub=-active, b_ub=np.zeros(n), bounds=bounds, method="highs")
    if res.status == 0 and -res.fun > 1e-12 * max(1.0, np.abs(active).sum()):
        raise ValueError("z: the data is separable (a direction u has z_i.u >= 0 for every point with "
                         "weight > 0), so the logistic loss has no finite minimizer")
    rank = np.linalg.matrix_rank(active)
    if rank < d:
        raise ValueError(f"z: the data spans only {rank} of {d} dimensions; the loss is flat along the "
                         "null space and the minimizer is not unique")


def minimizer(z, weights=None, *, tol: float = 1e-15, max_iter: int = 200) -> tuple[np.ndarray, float]:
    r"""Float64 minimizer :math:`w^\star` (damped Newton, polished to round-off) and :math:`\lambda = \lambda_{\max}(\nabla^2 L(w^\star))`.

    ``z``: (n,) or (n, d) signed features :math:`y_i x_i`; ``weights``: optional (n,), non-negative.
    Raises ``ValueError`` if the data is separable (no finite minimizer) or spans fewer than d
    dimensions, and for the invalid inputs of :func:`validate_dataset`.
    """
    z2, a = validate_dataset(z, weights)
    tol = V.real("tol", tol, low=0.0, low_open=True)
    max_iter = V.integer("max_iter", max_iter, low=1)
    _check_non_separable(z2, a)
    d = z2.shape[1]
    w_ = np.zeros(d)
    f = loss(w_, z2, a)
    for _ in range(max_iter):
        g = grad(w_, z2, a)
        H = hessian(w_, z2, a)
        step = np.linalg.solve(H, g)
        t = 1.0
        while True:  # backtracking keeps Newton globally convergent on this convex loss
            trial = w_ - t * step
            f_trial = loss(trial, z2, a)
            if f_trial <= f - 1e-4 * t * g @ step or t < 1e-12:
                break
            t *= 0.5
        w_, f = trial, f_trial
        if np.max(np.abs(t * step)) <= tol * max(1.0, np.max(np.abs(w_))):
            break
    for _ in range(3):  # polish: full Newton steps at the solution (quadratic convergence)
        w_ = w_ - np.linalg.solve(hessian(w_, z2, a), grad(w_, z2, a))
    lam_ = float(np.linalg.eigvalsh(hessian(w_, z2, a))[-1])
    return w_, lam_


_K_MAX = 1e8  # spike magnitude cap: keeps the spike's weight J/K and its curvature K J / 4 well inside float64


def cycle_dataset(c: float, *, K: float = 1e5, J: float = 0.01) -> dict:
    r"""A 1-D dataset with a stable 2-cycle at normalized step :math:`c = \eta\lambda \in (1, 2)`.

    "Wide bump plus narrow spike": points :math:`z = +1, -1` with weights :math:`p, 1-p-J/K` and
    :math:`z = K` with weight :math:`J/K`. The target minimizer is half the existence bound,
    :math:`w^\star = -\tfrac12 J(c-1)/(\lambda(2-c))`, and :math:`p` is chosen so that
    :math:`L'(w^\star) = 0` exactly: :math:`p = (1-J/K)\sigma(w^\star) - J\sigma(-Kw^\star)`.
    The prediction is :func:`piecewise_linear_cycle` evaluated at the Newton-polished
    :math:`w^\star, \lambda`; its error is of the order of the curvature variation of the bump
    over the cycle, :math:`\max(u^2, v^2)/4` relative.

    Returns ``dict(z, weights, w_star, lam, eta, u, v, multiplier, c, K, J)``. ``c`` outside
    (1, 2) raises ``ValueError`` (no such cycle exists there); ``1 < K <= 1e8``, ``0 < J < 1``.
    """
    c = V.real("c", c, low=1.0, high=2.0, low_open=True, high_open=True)
    K = V.real("K", K, low=1.0, high=_K_MAX, low_open=True)
    J = V.real("J", J, low=0.0, high=1.0, low_open=True, high_open=True)
    lam_ = 0.25
    for _ in range(50):  # fixed point: lambda depends weakly on w* through sigma(w*)sigma(-w*)
        w_star = -0.5 * J * (c - 1) / (lam_ * (2 - c))
        lam_new = (1 - J / K) * _sigmoid(w_star) * _sigmoid(-w_star)
        if abs(lam_new - lam_) < 1e-17:
            break
        lam_ = lam_new
    p = (1 - J / K) * _sigmoid(w_star) - J * _sigmoid(-K * w_star)
    z = np.array([1.0, -1.0, K])
    weights = np.array([p, 1 - p - J / K, J / K])
    w_num, lam_num = minimizer(z, weights)
    pl = piecewise_linear_cycle()
    subs = {sp.Symbol("w_star", real=True): w_num[0], sp.Symbol("J", real=True): J, lam: lam_num,
            sp.Symbol("c", real=True): c}
    return {"z": z, "weights": weights, "w_star": float(w_num[0]), "lam": lam_num, "eta": c / lam_num, "c": c,
            "u": float(pl["u"].subs(subs)), "v": float(pl["v"].subs(subs)),
            "multiplier": float(pl["multiplier"].subs(subs)), "K": K, "J": J}


def _multiplier_1d(points, step: float, z2: np.ndarray, a: np.ndarray) -> float:
    return float(np.prod([1 - step * hessian(t, z2, a)[0, 0] for t in points]))


def solve_two_cycle(z, weights, eta, guess) -> tuple[np.ndarray, float]:
    r"""Solve the exact 1-D 2-cycle equations :math:`v = T(u),\ u = T(v)` by Newton (scipy) from ``guess``.

    ``guess``: two numbers :math:`(u_0, v_0)`. Returns ``((u, v), multiplier)`` with the multiplier
    :math:`(1-\eta L''(u))(1-\eta L''(v))`. ``ValueError`` if the solver does not reach a 2-cycle
    (residual above 1e-12) or lands on the fixed point.
    """
    z2, a = validate_dataset(z, weights)
    if z2.shape[1] != 1:
        raise ValueError(f"z: solve_two_cycle needs 1-D data, got d = {z2.shape[1]}")
    step = V.real("eta", eta, low=0.0, low_open=True)
    g0 = V.array("guess", guess, shape=(2,))

    def residual(uv):
        u_, v_ = uv
        return [v_ - gd_step(u_, step, z2, a)[0], u_ - gd_step(v_, step, z2, a)[0]]

    uv = optimize.root(residual, g0, method="hybr", tol=1e-15).x
    res = float(np.max(np.abs(residual(uv))))
    if not res <= 1e-12 * max(1.0, float(np.max(np.abs(uv)))):
        raise ValueError(f"guess: Newton from {g0.tolist()} did not reach a 2-cycle (residual {res:.2e})")
    if abs(uv[1] - uv[0]) <= 1e-12 * max(1.0, float(np.max(np.abs(uv)))):
        raise ValueError(f"guess: Newton from {g0.tolist()} converged to the fixed point, not a 2-cycle")
    return uv, _multiplier_1d(uv, step, z2, a)


def two_cycle_1d(z, weights, eta, *, w_star: float | None = None) -> tuple[np.ndarray, float]:
    r"""The 1-D 2-cycle straddling :math:`w^\star` for :math:`c = \eta\lambda > 2`, by bracketing.

    With :math:`F(u) = T(T(u)) - u`: near :math:`w^\star`, :math:`F(u) \approx ((1-c)^2 - 1)(u - w^\star)`
    is negative for :math:`u < w^\star`, while :math:`F(u) \to +\infty` as :math:`u \to -\infty`
    (:math:`T` moves points by a bounded amount), so a root :math:`u < w^\star` is bracketed on
    :math:`[w^\star - R, w^\star - \delta]`. Returns ``((u, v), multiplier)``; ``w_star`` may be
    passed when already known (continuation over many step sizes; then :math:`c > 2` is not checked).
    """
    z2, a = validate_dataset(z, weights)
    if z2.shape[1] != 1:
        raise ValueError(f"z: two_cycle_1d needs 1-D data, got d = {z2.shape[1]}")
    step = V.real("eta", eta, low=0.0, low_open=True)
    if w_star is None:
        w_min, lam_ = minimizer(z2, a)
        if not step * lam_ > 2:
            raise ValueError(f"eta: a 2-cycle born at c = 2 needs c = eta*lambda > 2, got {step * lam_:.6g}")
        centre = float(w_min[0])
    else:
        centre = V.real("w_star", w_star)

    def F(u):
        return gd_step(gd_step(u, step, z2, a), step, z2, a)[0] - u

    lo, hi = centre - 1.0, centre - 1e-9
    while F(lo) <= 0:
        lo = centre - 2 * (centre - lo)
        if centre - lo > 1e6:
            raise ValueError("eta: could not bracket a 2-cycle within 1e6 of w*; is c = eta*lambda > 2?")
    u = optimize.brentq(F, lo, hi, xtol=1e-15, rtol=1e-15)
    v = gd_step(u, step, z2, a)[0]
    return np.array([u, v]), _multiplier_1d((u, v), step, z2, a)


def period_doubling_step(z, weights=None, *, c_range=(2.0001, 3.5), n_scan: int = 300, max_bytes=None) -> float:
    r"""Second period doubling: the :math:`c` where the 2-cycle born at :math:`c = 2` loses stability.

    Along the branch :func:`two_cycle_1d`, the multiplier :math:`(1-\eta L''(u))(1-\eta L''(v))`
    starts at :math:`+1` (at :math:`c = 2^+`) and decreases; the 2-cycle loses stability where it
    crosses :math:`-1`. Located by a scan over ``c_range`` (two numbers, :math:`2 < c_0 < c_1`) and
    Brent's method. Beyond this :math:`c` GD settles on a 4-cycle.
    ``max_bytes``: the allocation limit (:func:`theory.validate.byte_limit`) for the ``n_scan`` scan.
    """
    z2, a = validate_dataset(z, weights)
    lo_hi = V.array("c_range", c_range, shape=(2,), low=2.0, low_open=True)
    if not lo_hi[1] > lo_hi[0]:
        raise ValueError(f"c_range: expected (low, high) with low < high, got {tuple(c_range)}")
    n_scan = V.integer("n_scan", n_scan, low=2)
    V.check_bytes({"n_scan": n_scan}, 4 * 8 * n_scan, what="the scan's step sizes and multipliers", max_bytes=max_bytes)
    w_star, lam_ = minimizer(z2, a)

    def m_plus_one(c):
        return two_cycle_1d(z2, a, c / lam_, w_star=w_star[0])[1] + 1

    cs = np.linspace(lo_hi[0], lo_hi[1], n_scan)
    values = [m_plus_one(c) for c in cs]
    for k in range(1, len(cs)):
        if values[k - 1] > 0 >= values[k]:
            return float(optimize.brentq(m_plus_one, cs[k - 1], cs[k], xtol=1e-13))
    raise ValueError(f"c_range: the 2-cycle stays stable on {tuple(c_range)}; no second doubling found there")


# ---------------------------------------------------------------------------------------------
# The 2-D witness: a stable 2-cycle with eta * lambda_max < 1
# ---------------------------------------------------------------------------------------------
def construct_witness_2d(c: float = 0.75, theta_deg: float = 70.0, J: float = 0.02, K: float = 2000.0,
                         offset: float = 0.05) -> dict:
    r"""Build the 2-D "ping-pong" witness: a stable 2-cycle at :math:`c = \eta\lambda_{\max} < 1`.

    Construction (derived here). An isotropic bump -- points :math:`\pm e_1, \pm e_2` -- with
    minimizer :math:`w_b = (\epsilon, 0)` and curvature :math:`\approx \lambda I`, plus two spikes
    :math:`z = K n_A`, :math:`z = K n_B` of weight :math:`J/K` with unit normals
    :math:`n_{A,B} = (\cos\theta, \pm\sin\theta)`. Spike A adds the constant gradient
    :math:`-J n_A` on the half-plane :math:`n_A^\top w < 0` (a near step, width :math:`1/K`). In the
    sector where only A is active the local quadratic has virtual minimizer
    :math:`m_A = w_b + (J/\lambda) n_A`, which lies in B's sector when
    :math:`\cos 2\theta < 0` -- the two regions' virtual minimizers point at each other. With
    :math:`p_2 = (1-c)p_1 + c\,m_A` and :math:`p_1 = (1-c)p_2 + c\,m_B`:

    .. math:: p_1 = \frac{(1-c)m_A + m_B}{2-c},\quad p_2 = \frac{(1-c)m_B + m_A}{2-c},

    which lie in the right sectors iff :math:`c > 1 + \cos 2\theta` (for :math:`\epsilon \to 0`), and
    the cycle's Jacobian is :math:`(1-c)^2 I` in the piecewise-linear limit: stable. Since
    :math:`w^\star \approx w_b` sits in the sector where neither spike is active, at distance
    :math:`\gg 1/K` from both lines, :math:`\lambda_{\max}(\nabla^2L(w^\star))` is the bump's
    curvature. The point is then Newton-polished on the exact equations :math:`T(T(p)) = p`.

    ``c`` in (0, 2), ``theta_deg`` in (45, 90), ``J`` in (0, 1), ``1 < K <= 1e8``, ``offset`` in [0, 1].
    """
    c = V.real("c", c, low=0.0, high=2.0, low_open=True, high_open=True)
    theta_deg = V.real("theta_deg", theta_deg, low=45.0, high=90.0, low_open=True, high_open=True)
    J = V.real("J", J, low=0.0, high=1.0, low_open=True, high_open=True)
    K = V.real("K", K, low=1.0, high=_K_MAX, low_open=True)
    offset = V.real("offset", offset, low=0.0, high=1.0)
    th_ = np.deg2rad(theta_deg)
    nA, nB = np.array([np.cos(th_), np.sin(th_)]), np.array([np.cos(th_), -np.sin(th_)])
    # bump weights: x-axis pair shifted so its minimizer is at +offset, y-axis pair balanced
    q = 0.25
    p_plus = 2 * q * _sigmoid(offset)       # -p sigma(-e) + (2q - p) sigma(e) = 0  =>  p = 2q sigma(e)
    z = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0], K * nA, K * nB])
    weights = np.array([p_plus, 2 * q - p_plus, q, q, J / K, J / K])
    weights = weights / weights.sum()
    w_star, lam_ = minimizer(z, weights)
    step = c / lam_
    # piecewise-linear prediction with the exact local curvature (isotropic to O(offset^2))
    H = hessian(w_star, z, weights)
    mA = w_star + np.linalg.solve(H, weights[4] * K * nA)
    mB = w_star + np.linalg.solve(H, weights[5] * K * nB)
    p1 = ((1 - c) * mA + mB) / (2 - c)
    p2 = ((1 - c) * mB + mA) / (2 - c)

    def residual(p):
        return gd_step(gd_step(p, step, z, weights), step, z, weights) - p

    p_exact = optimize.root(residual, p1, method="hybr", tol=1e-15).x
    res = float(np.max(np.abs(residual(p_exact))))
    # the fixed point w* also solves T(T(p)) = p: a genuine 2-cycle moves under one step
    moves = float(np.max(np.abs(gd_step(p_exact, step, z, weights) - p_exact)))
    if not (res <= 1e-13 and moves > 1e-8):
        raise ValueError(f"c, theta_deg, J, K, offset: no 2-cycle near the piecewise-linear prediction for "
                         f"c = {c}, theta_deg = {theta_deg}, J = {J}, K = {K}, offset = {offset} (residual {res:.2e}, "
                         f"step {moves:.2e}); the construction needs c > 1 + cos(2 theta) = {1 + np.cos(2 * th_):.3g}")
    return {"z": z, "weights": weights, "eta": float(step), "cycle_point": p_exact,
            "predicted_cycle": np.stack([p1, p2]), "w_star": w_star, "lam_max": lam_, "c": c,
            "theta_deg": theta_deg, "J": J, "K": K, "offset": offset}


_WITNESS_FILE = "logistic_witness_2d.json"


def witness_2d() -> dict:
    r"""The shipped 2-D witness: ``dict(z, weights, eta, cycle_point, c, theta_deg, J, K, offset, note)``.

    Loaded from ``theory/data/logistic_witness_2d.json`` (written by :func:`construct_witness_2d`;
    a test checks the shipped data equals a fresh construction).
    :math:`\eta\lambda_{\max}(\nabla^2 L(w^\star)) = c < 1`, yet GD started at ``cycle_point``
    returns to it every two steps and the cycle is linearly stable.
    """
    raw = json.loads(resources.files("theory").joinpath("data", _WITNESS_FILE).read_text())
    return {k: (np.asarray(v, dtype=np.float64) if isinstance(v, list) else v) for k, v in raw.items()}


# ---------------------------------------------------------------------------------------------
# Balanced data, the period-doubling cascade, and exhaustive 1-D 2-cycle search
# ---------------------------------------------------------------------------------------------
FEIGENBAUM_DELTA = 4.669201609102990  # universal ratio of successive doubling intervals (quadratic maxima)


def balanced_cycle_amplitude(c: float) -> float:
    r"""Half-width :math:`a` of the 2-cycle :math:`\pm a` of GD on balanced data :math:`z = \pm 1`, weights :math:`\tfrac12`.

    Here :math:`L'(w) = \tfrac12\tanh(w/2)` is odd, :math:`w^\star = 0`, :math:`\lambda = \tfrac14`, so a
    symmetric 2-cycle solves :math:`T(a) = -a`, i.e. :math:`2a = \tfrac{\eta}{2}\tanh(a/2)`:

    .. math:: \frac{a}{\tanh(a/2)} = \eta\lambda = c .

    The left side increases from 2 (at :math:`a \to 0`) to :math:`\infty`, so a unique :math:`a > 0`
    exists for every :math:`c > 2` (near 2, :math:`a \approx \sqrt{6(c-2)}`, the flip normal form).
    Data :math:`z = \pm s` has the same orbit scaled by :math:`1/s` (only :math:`c` matters).
    ``c`` > 2 (``ValueError`` otherwise: below 2 the only attractor is :math:`w^\star`).
    """
    c = V.real("c", c, low=2.0, low_open=True)
    lo = 0.5 * np.sqrt(12.0 * (c - 2.0) / c)   # a(1 - c/2) + c a^3/24 < 0 below sqrt(12 (c - 2)/c)
    return float(optimize.brentq(lambda t: t - c * np.tanh(t / 2), lo, c, xtol=1e-15, rtol=1e-15))


def balanced_cycle_multiplier(c: float) -> float:
    r"""Multiplier of the balanced 2-cycle: :math:`(1 - \eta L''(a))^2 = (1 - 2a/\sinh a)^2 \in (0, 1)`.

    :math:`\eta L''(a) = c\,\mathrm{sech}^2(a/2)/1` with :math:`c = a/\tanh(a/2)` gives
    :math:`2a/\sinh a < 1`: the cycle is stable for every :math:`c > 2` and the multiplier never
    reaches :math:`-1` (it is a square) -- balanced data has no period-doubling cascade.
    """
    a = balanced_cycle_amplitude(c)
    return float((1.0 - 2.0 * a / np.sinh(a)) ** 2)


def _map_1d(u: np.ndarray, step: float, zz: np.ndarray, a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""Vectorized 1-D GD map :math:`T(u)` and its derivative :math:`T'(u) = 1 - \eta L''(u)` (any shape of ``u``)."""
    m = np.multiply.outer(u, zz)
    g = -(special.expit(-m) * a) @ zz
    h = (special.expit(m) * special.expit(-m) * a) @ (zz * zz)
    return u - step * g, 1.0 - step * h


def _orbit_1d(u, step, zz, a, period: int) -> tuple[np.ndarray, np.ndarray]:
    """:math:`T^p(u)` and :math:`(T^p)'(u)` (chain rule along the orbit)."""
    d = np.ones_like(np.asarray(u, dtype=float))
    for _ in range(period):
        u, du = _map_1d(u, step, zz, a)
        d = d * du
    return u, d


def doubling_points(z, weights=None, count: int = 4, *, guess_c2: float | None = None) -> np.ndarray:
    r"""The period-doubling points :math:`c_1 = 2 < c_2 < \dots < c_{count}` of a 1-D dataset.

    :math:`c_k` is where the :math:`2^{k-1}`-cycle born at :math:`c_{k-1}` loses stability: with
    :math:`p = 2^{k-1}`, the pair :math:`(u, c)` solves

    .. math:: T_c^{p}(u) = u,\qquad (T_c^{p})'(u) = -1,

    by scipy's hybrid Newton from a guess: :math:`c` extrapolated with Feigenbaum's ratio from the
    two previous points (:math:`c_2` from :func:`period_doubling_step`), :math:`u` a point of the
    :math:`p`-cycle there, found by bracketing :math:`T^p(u) - u` next to the (now unstable)
    :math:`p/2`-cycle. Requires a cascade (e.g. ``z = [1, -1]``, weights 3/4, 1/4:
    :math:`c_2..c_4 = 2.6351716, 2.8143853, 2.853017`); ``ValueError`` if a step fails.
    ``count`` in 1..8.
    """
    z2, a = validate_dataset(z, weights)
    if z2.shape[1] != 1:
        raise ValueError(f"z: doubling_points needs 1-D data, got d = {z2.shape[1]}")
    count = V.integer("count", count, low=1, high=8)
    w_star, lam_ = minimizer(z2, a)
    zz = z2[:, 0]
    cs = [2.0]
    if count == 1:
        return np.array(cs)
    c2 = period_doubling_step(z2, a) if guess_c2 is None else V.real("guess_c2", guess_c2, low=2.0, low_open=True)
    cs.append(c2)
    cycle_point = two_cycle_1d(z2, a, c2 / lam_, w_star=w_star[0])[0][0]   # a point of the 2-cycle at c_2
    for k in range(3, count + 1):
        p = 2 ** (k - 1)
        c_guess = cs[-1] + (cs[-1] - cs[-2]) / FEIGENBAUM_DELTA / 2   # half-way to the next doubling
        step = c_guess / lam_
        # the p/2-cycle, continued to c_guess, is unstable there; the p-cycle straddles it
        half = optimize.root(lambda x: _orbit_1d(x, step, zz, a, p // 2)[0] - x, cycle_point, tol=1e-15).x[0]
        width = 1e-3 + abs(half - w_star[0])
        grid = half + np.linspace(1e-9, width, 4001)
        G = _orbit_1d(grid, step, zz, a, p)[0] - grid
        sign = np.flatnonzero(np.diff(np.sign(G)) != 0)
        if sign.size == 0:
            raise ValueError(f"z, weights: no {p}-cycle found next to the {p // 2}-cycle at c = {c_guess:.6g}")
        i = sign[0]
        u0 = optimize.brentq(lambda x: _orbit_1d(x, step, zz, a, p)[0] - x, grid[i], grid[i + 1], xtol=1e-15)

        def residual(x):
            val, der = _orbit_1d(x[0], x[1] / lam_, zz, a, p)
            return [val - x[0], der + 1.0]

        sol = optimize.root(residual, [u0, c_guess], method="hybr", tol=1e-15)
        res = np.max(np.abs(residual(sol.x)))
        if not res < 1e-10 or not sol.x[1] > cs[-1]:
            raise ValueError(f"z, weights: the period-{p} doubling did not converge (residual {res:.2e})")
        cs.append(float(sol.x[1]))
        cycle_point = float(sol.x[0])
    return np.array(cs)


def feigenbaum_ratios(points) -> np.ndarray:
    r"""Ratios :math:`\delta_k = (c_{k} - c_{k-1})/(c_{k+1} - c_k)` of successive doubling intervals.

    For a cascade governed by a quadratic extremum they converge to :data:`FEIGENBAUM_DELTA`.
    ``points``: increasing, at least three.
    """
    c = V.array("points", points, ndim=1)
    if c.size < 3 or not np.all(np.diff(c) > 0):
        raise ValueError(f"points: expected at least three increasing doubling points, got {c.tolist()!r:.60}")
    d = np.diff(c)
    return d[:-1] / d[1:]


def cycles_1d(z, weights, eta, period: int = 2, *, n_grid: int = 20_001, max_bytes=None) -> np.ndarray:
    r"""Every cycle of exact period ``period`` of 1-D GD (stable or not): a sign scan of :math:`F(u) = T^p(u) - u` plus Brent.

    All orbits stay in the invariant interval of :func:`orbit_bound_1d` (started anywhere in it), so
    every cycle lies in :math:`[w^\star - R, w^\star + R]`; ``n_grid`` points per side, refined
    geometrically towards :math:`w^\star` (where :math:`F` vanishes to first order), are scanned for
    sign changes. Each cycle is returned once, by its smallest point: an array (k, period + 1) of
    the cycle's points in orbit order followed by its multiplier :math:`(T^p)'`. Roots of lower
    period (:math:`w^\star`, cycles whose period divides ``period``) are dropped; a cycle closer than
    :math:`10^{-9}(1 + |w^\star|)` to :math:`w^\star` is not resolved. ``period`` in 2..16. ``max_bytes``: the
    allocation limit (:func:`theory.validate.byte_limit`) for the scan, :math:`2n_{grid}` points through ``period``
    maps of every data point.
    """
    z2, a = validate_dataset(z, weights)
    if z2.shape[1] != 1:
        raise ValueError(f"z: cycles_1d needs 1-D data, got d = {z2.shape[1]}")
    step = V.real("eta", eta, low=0.0, low_open=True)
    period = V.integer("period", period, low=2, high=16)
    n_grid = V.integer("n_grid", n_grid, low=100)
    V.check_bytes({"n_grid": n_grid, "z": f"{z2.shape[0]} points"}, 4 * 8 * 2 * n_grid * (z2.shape[0] + period + 2),
                  what="the scan of 2 n_grid points through the maps", max_bytes=max_bytes)
    w_star, _ = minimizer(z2, a)
    ws = float(w_star[0])
    zz = z2[:, 0]
    R = orbit_bound_1d(z2, a, step, ws) + abs(ws)
    gap = 1e-9 * (1 + abs(ws))
    offsets = np.geomspace(R, gap, n_grid)
    u = np.concatenate([ws - offsets, ws + offsets[::-1]])

    def F(x):
        return _orbit_1d(x, step, zz, a, period)[0] - x

    Fu = F(u)
    scale = 1e-7 * (1 + R)
    out = []
    for i in np.flatnonzero(np.sign(Fu[:-1]) * np.sign(Fu[1:]) < 0):
        root = optimize.brentq(F, u[i], u[i + 1], xtol=1e-15, rtol=1e-15)
        orbit = [root]
        for _ in range(period - 1):
            orbit.append(float(_map_1d(np.asarray(orbit[-1]), step, zz, a)[0]))
        orbit = np.array(orbit)
        # exact period: no shorter shift closes the orbit (drops w* and cycles of a dividing period)
        if any(abs(orbit[q] - orbit[0]) <= scale for q in range(1, period)):
            continue
        start = int(np.argmin(orbit))
        orbit = np.roll(orbit, -start)
        if any(np.max(np.abs(orbit - c[:period])) <= scale for c in out):
            continue
        out.append(np.append(orbit, float(_orbit_1d(np.asarray(orbit[0]), step, zz, a, period)[1])))
    return np.array(out).reshape(-1, period + 1)


def two_point_dataset(s: float, margin: float) -> tuple[np.ndarray, np.ndarray]:
    r"""The two-point 1-D dataset :math:`z = (s, -1)` whose minimizer gives the point :math:`s` the margin ``margin``.

    :math:`w^\star = \text{margin}/s`; the weight :math:`q` on :math:`s` solves :math:`L'(w^\star) = 0`,
    :math:`q\,s\,\sigma(-s w^\star) = (1-q)\,\sigma(w^\star)`. With :math:`s \gg 1` and margin
    :math:`\ll -1` this is the bump-plus-spike geometry made of two points only: the point :math:`-1`
    is a wide bump, the point :math:`s` a near-step of the gradient across :math:`w = 0`.
    Every two-point dataset is one of these up to scaling and reflection. ``s`` >= 1, ``margin`` finite.
    Returns ``(z, weights)``.
    """
    s = V.real("s", s, low=1.0)
    margin = V.real("margin", margin)
    ws = margin / s
    A = s * _sigmoid(-margin)
    B = _sigmoid(ws)
    q = B / (A + B)
    return np.array([s, -1.0]), np.array([q, 1.0 - q])


# ---------------------------------------------------------------------------------------------
# Data on the sphere: a stable cycle of equal-magnitude data in higher dimensions
# ---------------------------------------------------------------------------------------------
def _simplex_frame(k: int) -> np.ndarray:
    r"""The :math:`k + 1` vertices of a regular simplex in :math:`\mathbb{R}^k`, unit vectors, as rows.

    Built from the Helmert rows :math:`h_j = (1, \dots, 1, -j, 0, \dots)/\sqrt{j(j+1)}` (:math:`j = 1..k`),
    which are orthonormal and orthogonal to :math:`(1, \dots, 1)`; the columns of the :math:`k \times (k+1)`
    matrix, rescaled by :math:`1/\sqrt{1 - 1/(k+1)}`, satisfy :math:`\sum_j u_j = 0` and
    :math:`\sum_j u_j u_j^\top = \tfrac{k+1}{k} I_k`.
    """
    H = np.zeros((k, k + 1))
    for j in range(1, k + 1):
        H[j - 1, :j] = 1.0
        H[j - 1, j] = -float(j)
        H[j - 1] /= np.sqrt(j * (j + 1.0))
    return (H / np.sqrt(1.0 - 1.0 / (k + 1))).T


def sphere_lift(z, weights, d: int) -> tuple[np.ndarray, np.ndarray]:
    r"""Lift 1-D data with :math:`|z_i| \le 1` to unit vectors of :math:`\mathbb{R}^d` whose axis :math:`\mathbb{R} e_1` carries the same 1-D GD.

    A point with :math:`|z_i| = 1` becomes :math:`z_i e_1` (weight :math:`a_i`); a point with
    :math:`|z_i| < 1` becomes the :math:`d` unit vectors
    :math:`(z_i, \sqrt{1 - z_i^2}\,u_j)`, :math:`u_1, \dots, u_d` the vertices of a regular simplex in
    :math:`\mathbb{R}^{d-1}`, each with weight :math:`a_i/d`. On the axis :math:`w = t e_1` every copy
    has the margin :math:`z_i t`, so the loss is the 1-D loss, and the transverse gradient
    :math:`-\sum_j (a_i/d)\sigma(-z_i t)\sqrt{1-z_i^2}\,u_j` vanishes (:math:`\sum_j u_j = 0`): the axis
    is invariant and GD on it is 1-D GD on :math:`(z, a)`. The Hessian on the axis is block diagonal,

    .. math:: \partial_{tt} L = \sum_i a_i z_i^2 \sigma\sigma'(z_i t),\qquad
              \nabla^2_{\perp} L = \frac{1}{d-1}\sum_{|z_i|<1} a_i (1 - z_i^2)\,\sigma\sigma'(z_i t)\; I_{d-1},

    (:math:`\sum_j u_j u_j^\top = \tfrac{d}{d-1} I`): the transverse curvature is the 1-D data's
    "missing magnitude" spread over :math:`d - 1` directions, which is why equal magnitudes in
    :math:`\mathbb{R}^d` can mimic 1-D magnitudes up to a ratio of about :math:`\sqrt d`.
    ``z``: (n,) with :math:`|z_i| \le 1`; ``weights``: (n,) non-negative or None; ``d`` in 2..4096.
    Returns ``(z_lifted (m, d), weights (m,))``, every row of unit norm (to round-off).
    """
    z2, a = validate_dataset(z, weights)
    if z2.shape[1] != 1:
        raise ValueError(f"z: sphere_lift needs 1-D data, got d = {z2.shape[1]}")
    d = V.integer("d", d, low=2, high=4096)
    zz = z2[:, 0]
    if np.any(np.abs(zz) > 1.0 + 1e-15):
        raise ValueError(f"z: every |z_i| must be <= 1 to lift onto the unit sphere, got max |z| = {np.max(np.abs(zz))!r}")
    frame = _simplex_frame(d - 1)
    rows, ws = [], []
    for zi, ai in zip(zz, a):
        if abs(zi) >= 1.0 - 1e-15:
            rows.append(np.concatenate([[np.sign(zi)], np.zeros(d - 1)]))
            ws.append(ai)
        else:
            tail = np.sqrt(1.0 - zi * zi) * frame
            rows.extend(np.concatenate([np.full((d, 1), zi), tail], axis=1))
            ws.extend([ai / d] * d)
    return np.array(rows), np.array(ws)


# The 1-D base of the shipped sphere witness: a spike of magnitude 1 and a bump of magnitude EPS (both signs).
SPHERE_BASE_Z = (1.0, 1.0 / 6.0, -1.0 / 6.0)
SPHERE_BASE_WEIGHTS = (0.08504517046180987, 0.6095682523967993, 0.3053865771413906)
SPHERE_C = 1.995
SPHERE_D = 33


def periodic_orbit(z, weights, eta, guess, period: int) -> tuple[np.ndarray, float]:
    r"""Newton-polished periodic orbit of GD: the root of :math:`F(x) = T^p(x) - x` near ``guess``, and its multiplier.

    Solved by scipy's hybrid Newton (``tol`` 1e-15) on the float64 map :func:`gd_step`. Returns the
    orbit (p, d) in time order, starting at the root, and the spectral radius of
    :math:`D T^p = \prod_{k} (I - \eta \nabla^2 L(x_k))` (closed-form Hessians, later points on the left).
    ``ValueError`` if the residual exceeds :math:`10^{-12}(1 + \|x\|_\infty)` or the orbit has a smaller
    period (it would be :math:`w^\star` or a shorter cycle). ``period`` in 1..64.
    """
    z2, a = validate_dataset(z, weights)
    step = V.real("eta", eta, low=0.0, low_open=True)
    x0 = _point("guess", guess, z2.shape[1])
    period = V.integer("period", period, low=1, high=64)

    def orbit(x):
        pts = [x]
        for _ in range(period):
            pts.append(gd_step(pts[-1], step, z2, a))
        return np.array(pts)

    x = optimize.root(lambda v: orbit(v)[-1] - v, x0, method="hybr", tol=1e-15).x
    pts = orbit(x)
    scale = 1.0 + np.max(np.abs(x))
    res = float(np.max(np.abs(pts[-1] - x)))
    if not res <= 1e-12 * scale:
        raise ValueError(f"guess: no period-{period} orbit found near it (residual {res:.2e})")
    for q in range(1, period):
        if period % q == 0 and np.max(np.abs(pts[q] - x)) <= 1e-9 * scale:
            raise ValueError(f"guess: the orbit found has period {q}, not {period}")
    J = np.eye(z2.shape[1])
    for p_ in pts[:-1]:
        J = (np.eye(z2.shape[1]) - step * hessian(p_, z2, a)) @ J
    return pts[:-1], float(np.max(np.abs(np.linalg.eigvals(J))))


def sphere_witness() -> dict:
    r"""A stable 2-cycle of GD on equal-magnitude data (:math:`\|z_i\| = 1`) in :math:`\mathbb{R}^{33}`, at :math:`\eta\lambda_{\max} = 1.995 < 2`.

    The 1-D base (:data:`SPHERE_BASE_Z`, :data:`SPHERE_BASE_WEIGHTS`) is a bump of magnitude
    :math:`1/6` (both signs) plus a spike of magnitude 1: 1-D data of unequal magnitudes with a
    stable 2-cycle at :math:`c = 1.995` (found by an offline search, checked here by the exact cycle
    equations). :func:`sphere_lift` puts it on the unit sphere of :math:`\mathbb{R}^{33}`; the cycle stays
    on the axis and keeps its 1-D multiplier there, and the transverse curvature
    :math:`\tfrac{1}{d-1}\sum a_i(1-z_i^2)\sigma\sigma'` is below the axis curvature at :math:`w^\star`
    (so :math:`\lambda_{\max}` is the 1-D :math:`\lambda` and :math:`c` is unchanged) and small enough on the
    cycle that the transverse multipliers :math:`\prod_k(1 - \eta\,\partial_\perp^2 L(x_k))` have modulus < 1.

    Returns ``dict(z, weights, eta, c, d, w_star, lam_max, lam_axis, lam_transverse, cycle (2, d),
    period, multiplier, base_z, base_weights)``; ``multiplier`` is the spectral radius of
    :math:`DT^2` on the Newton-polished cycle.
    """
    z, a = sphere_lift(SPHERE_BASE_Z, SPHERE_BASE_WEIGHTS, SPHERE_D)
    w_star, lam_ = minimizer(z, a)
    H = hessian(w_star, z, a)
    eta = SPHERE_C / lam_
    base = np.asarray(SPHERE_BASE_Z)[:, None]
    # the stable 2-cycle of the 1-D base (exact cycle equations by sign scan + Brent), lifted onto the axis
    cycles = cycles_1d(base, SPHERE_BASE_WEIGHTS, eta, 2)
    stable = cycles[np.abs(cycles[:, -1]) < 1]
    if stable.shape[0] != 1:
        raise ValueError(f"SPHERE_BASE_WEIGHTS: expected one stable 2-cycle of the 1-D base, found {stable.shape[0]}")
    guess = np.zeros(SPHERE_D)
    guess[0] = stable[0, 0]
    orbit, mult = periodic_orbit(z, a, eta, guess, 2)
    return {"z": z, "weights": a, "eta": float(eta), "c": SPHERE_C, "d": SPHERE_D, "w_star": w_star,
            "lam_max": lam_, "lam_axis": float(H[0, 0]), "lam_transverse": float(np.linalg.eigvalsh(H[1:, 1:])[-1]),
            "cycle": orbit, "period": 2, "multiplier": mult,
            "base_z": np.asarray(SPHERE_BASE_Z), "base_weights": np.asarray(SPHERE_BASE_WEIGHTS)}


# ---------------------------------------------------------------------------------------------
# A certificate of 1-D global convergence (no 2-cycle), by interval bounds on a grid
# ---------------------------------------------------------------------------------------------
def _curvature_range(lo: np.ndarray, hi: np.ndarray, zz: np.ndarray, a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""Bounds of :math:`L''` on each cell :math:`[lo, hi]`: each term :math:`a_iz_i^2\varphi(z_iw)`, :math:`\varphi(t) =
    \sigma(t)\sigma(-t)`, decreases in :math:`|t|`: largest where :math:`|z_iw|` is least (0 if the cell holds 0)."""
    t_lo, t_hi = np.multiply.outer(lo, zz), np.multiply.outer(hi, zz)
    near = np.where(t_lo * t_hi <= 0, 0.0, np.minimum(np.abs(t_lo), np.abs(t_hi)))
    far, w2 = np.maximum(np.abs(t_lo), np.abs(t_hi)), a * zz * zz
    return (special.expit(far) * special.expit(-far)) @ w2, (special.expit(near) * special.expit(-near)) @ w2


def _two_step_slope(s1: np.ndarray, s2: np.ndarray) -> np.ndarray:
    r"""A bound on :math:`|h'|`, :math:`h = T\circ T - \mathrm{id}`: :math:`|T'(T(w))|\,|T'(w)| + 1 \le s_2s_1 + 1` (chain rule)."""
    return s2 * s1 + 1


def certify_no_two_cycle_1d(z, weights, eta, *, n_init: int = 1024, max_depth: int = 80,
                            max_cells: int = 2_000_000) -> dict:
    r"""Prove, by interval bounds on an adaptive grid, that 1-D GD at step ``eta`` has no 2-cycle -- or locate one.

    Every 2-cycle :math:`u < w^\star < v` has :math:`v = u - \eta L'(u) \le u + \eta G`, :math:`G = \sup|L'|` (:math:`T(w) - w`
    has the sign of :math:`w^\star - w`): its points are the zeros other than :math:`w^\star` of :math:`h = T\circ T - \mathrm{id}`
    on :math:`I = [w^\star - \eta G, w^\star + \eta G]`. With :math:`T' = 1 - \eta L''` bounded on a cell :math:`C = [l, r]` by
    :func:`_curvature_range` (no sampling) and on the enclosure :math:`T(m) \pm \sup_C|T'|(r-l)/2` of :math:`T(C)`
    (:math:`m` the midpoint), a cell is settled by *value*, :math:`|h(m)| > (\sup_{T(C)}|T'|\sup_C|T'| + 1)(r-l)/2` (no
    zero), or as *monotone*: the enclosure of :math:`(T\circ T)'` excludes 1, so :math:`h` has a zero in :math:`C` iff
    :math:`h(l), h(r)` differ in sign (:math:`w^\star` is a grid edge: a cell ending there has no other zero; a sign
    change elsewhere locates a 2-cycle point, then bisected to round-off). Other cells are halved, up to ``max_depth``
    times; both tests carry a margin of :math:`64\epsilon` times the magnitudes involved. No 2-cycle means global
    convergence: a continuous map of a compact interval without points of period 2 has every orbit converging to a
    fixed point (Coppel 1955); orbits stay in :func:`orbit_bound_1d`'s interval; :math:`w^\star` is the only fixed point.

    Returns ``certified`` (no 2-cycle, no unsettled cell), ``cycle_cells`` (k, 2), ``cycle_points`` (k,) and
    ``cycle_width`` (their brackets), ``unsettled`` (m, 2), ``n_cells``, ``interval`` and ``w_star``; more than
    ``max_cells`` cells is a ``ValueError``.
    """
    z2, a = validate_dataset(z, weights)
    if z2.shape[1] != 1:
        raise ValueError(f"z: certify_no_two_cycle_1d needs 1-D data, got d = {z2.shape[1]}")
    step = V.real("eta", eta, low=0.0, low_open=True)
    n_init = V.integer("n_init", n_init, low=2, high=1_000_000)
    max_depth = V.integer("max_depth", max_depth, low=0, high=200)
    max_cells = V.integer("max_cells", max_cells, low=n_init, high=100_000_000)
    ws, zz = float(minimizer(z2, a)[0][0]), z2[:, 0]
    G = max(float(np.sum(a[zz < 0] * -zz[zz < 0])), float(np.sum(a[zz > 0] * zz[zz > 0])))
    half_n = n_init // 2  # w* is a grid edge, and stays one under halving
    edges = np.concatenate([np.linspace(ws - step * G, ws, half_n + 1), np.linspace(ws, ws + step * G, half_n + 1)[1:]])
    lo, hi = edges[:-1], edges[1:]
    eps = 64 * np.finfo(float).eps
    T = lambda u: _map_1d(u, step, zz, a)[0]  # noqa: E731
    slopes = lambda l_, r_: [1.0 - step * b for b in _curvature_range(l_, r_, zz, a)[::-1]]  # noqa: E731
    cycle, total = [], 0
    for _ in range(max_depth + 1):
        total += lo.size
        if total > max_cells:
            raise ValueError(f"max_cells: the certificate needs more than {max_cells} cells (raise it, or the grid)")
        mid, half = 0.5 * (lo + hi), 0.5 * (hi - lo)
        t_mid = T(mid)
        h_mid = T(t_mid) - mid
        s_lo, s_hi = slopes(lo, hi)
        s1 = np.maximum(np.abs(s_lo), np.abs(s_hi))
        spread = s1 * half * (1 + eps) + eps * (np.abs(t_mid) + step * G)
        i_lo, i_hi = slopes(t_mid - spread, t_mid + spread)
        noise = eps * (np.abs(mid) + np.abs(t_mid) + np.abs(h_mid + mid) + step * G)
        s2 = np.maximum(np.abs(i_lo), np.abs(i_hi))
        by_value = np.abs(h_mid) > _two_step_slope(s1, s2) * half * (1 + eps) + noise
        products = np.stack([s_lo * i_lo, s_lo * i_hi, s_hi * i_lo, s_hi * i_hi])
        monotone = (products.max(axis=0) < 1 - eps) | (products.min(axis=0) > 1 + eps)
        h_lo, h_hi = T(T(lo)) - lo, T(T(hi)) - hi
        same_sign = (np.minimum(np.abs(h_lo), np.abs(h_hi)) > noise) & (np.sign(h_lo) == np.sign(h_hi))
        holds_star = (lo == ws) | (hi == ws)
        located = monotone & ~same_sign & ~holds_star & (np.sign(h_lo) * np.sign(h_hi) < 0)
        cycle += list(zip(lo[located], hi[located]))
        rest = ~(by_value | (monotone & (same_sign | holds_star))) & ~located
        lo, hi = lo[rest], hi[rest]
        if not lo.size:
            break
        mid = 0.5 * (lo + hi)
        lo, hi = np.concatenate([lo, mid]), np.concatenate([mid, hi])
    cycle_cells = np.array(sorted(cycle)).reshape(-1, 2)
    left, right = cycle_cells[:, 0].copy(), cycle_cells[:, 1].copy()
    for _ in range(60):  # monotone with a sign change: bisection keeps the root bracketed
        m = 0.5 * (left + right)
        same = np.sign(T(T(m)) - m) == np.sign(T(T(left)) - left)
        left, right = np.where(same, m, left), np.where(same, right, m)
    unsettled = np.stack([lo, hi], axis=1)
    return {"certified": bool(not cycle_cells.size and not unsettled.size), "cycle_cells": cycle_cells,
            "cycle_points": 0.5 * (left + right), "cycle_width": right - left, "unsettled": unsettled,
            "n_cells": total, "interval": (float(edges[0]), float(edges[-1])), "w_star": ws}
