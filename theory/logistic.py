r"""Gradient descent on logistic regression with non-separable data (Meng et al., arXiv 2406.05033).

Loss (weights :math:`a_i \ge 0`, signed features :math:`z_i = y_i x_i`; default :math:`a_i = 1/n`)

.. math:: L(w) = \sum_i a_i\,\ell(z_i^\top w),\qquad \ell(s) = \log(1 + e^{-s}),

GD map :math:`T(w) = w - \gamma \nabla L(w)`, :math:`\lambda = \lambda_{\max}(\nabla^2 L(w^\star))` and
the normalized step :math:`c = \gamma\lambda`. This module holds the sympy derivations (per-point
derivatives, the GD map, the 2-cycle equations and multiplier, the normal form at :math:`c = 2`,
the piecewise-linear 1-D cycle construction for :math:`c \in (1, 2)`) and the numerical closed
forms built on them (Newton-polished minimizer, cycle datasets, the 2-D witness below
:math:`1/\lambda`). Pure mathematics: numpy/scipy/sympy only.
"""
from __future__ import annotations

import functools
import json
from importlib import resources

import numpy as np
import sympy as sp
from scipy import optimize, special

__all__ = [
    "per_point_derivatives", "loss_expr", "gd_map_expr", "two_cycle_equations", "two_cycle_multiplier",
    "normal_form_amplitude", "normal_form_coefficients", "piecewise_linear_cycle",
    "validate_dataset", "minimizer", "loss", "grad", "hessian", "gd_step", "cycle_dataset",
    "solve_two_cycle", "two_cycle_1d", "period_doubling_step", "construct_witness_2d", "witness_2d",
]

# ---------------------------------------------------------------------------------------------
# Symbolic derivations (sympy)
# ---------------------------------------------------------------------------------------------
s, w, gamma, lam, mu, x = sp.symbols("s w gamma lambda mu x", real=True)


@functools.lru_cache(maxsize=None)
def per_point_derivatives(order: int = 4) -> tuple[sp.Expr, ...]:
    r""":math:`\ell(s) = \log(1+e^{-s})` and its first ``order`` derivatives in :math:`s`, simplified.

    :math:`\ell' = -\sigma(-s)`, :math:`\ell'' = \sigma(s)\sigma(-s)`: the curvature is even in
    :math:`s` and decreasing in :math:`|s|` -- the mechanism behind global convergence for
    :math:`c < 1` in one dimension.
    """
    ell = sp.log(1 + sp.exp(-s))
    return tuple(sp.simplify(sp.diff(ell, s, k)) for k in range(order + 1))


def loss_expr(z, weights=None, symbols=None) -> tuple[sp.Expr, tuple[sp.Symbol, ...]]:
    r"""Symbolic :math:`L(w) = \sum_i a_i \log(1 + e^{-z_i^\top w})` for a concrete small dataset.

    Returns ``(expr, (w_1, ..., w_d))``; used to cross-check the JAX simulator with exact
    sympy gradients and Hessians.
    """
    z2, a = validate_dataset(z, weights)
    d = z2.shape[1]
    ws = symbols or sp.symbols(f"w1:{d + 1}", real=True)
    expr = sum(sp.Rational(float(ai)) * sp.log(1 + sp.exp(-sum(sp.Float(zij, 30) * wj for zij, wj in zip(zi, ws))))
               for zi, ai in zip(z2, a))
    return expr, tuple(ws)


def gd_map_expr(loss: sp.Expr, ws: tuple[sp.Symbol, ...], step: sp.Expr = gamma) -> sp.Matrix:
    r"""The GD map :math:`T(w) = w - \gamma \nabla L(w)` as a sympy column vector."""
    wv = sp.Matrix(ws)
    return wv - step * sp.Matrix([sp.diff(loss, wi) for wi in ws])


def two_cycle_equations(g: sp.Expr, var: sp.Symbol = w) -> tuple[sp.Expr, sp.Expr, sp.Symbol, sp.Symbol]:
    r"""1-D 2-cycle :math:`\{u, v\}` of :math:`T(w) = w - \gamma g(w)`:

    .. math:: v = u - \gamma g(u),\qquad u = v - \gamma g(v)\quad(\Rightarrow g(u) = -g(v)).

    Returns the two residuals (zero on a cycle) and the symbols ``(u, v)``.
    """
    u, v = sp.symbols("u v", real=True)
    return (v - (u - gamma * g.subs(var, u)), u - (v - gamma * g.subs(var, v)), u, v)


def two_cycle_multiplier(g: sp.Expr, var: sp.Symbol = w) -> tuple[sp.Expr, sp.Symbol, sp.Symbol]:
    r"""Stability multiplier of a 1-D 2-cycle: :math:`(T^2)'(u) = (1 - \gamma g'(u))(1 - \gamma g'(v))`."""
    u, v = sp.symbols("u v", real=True)
    dg = sp.diff(g, var)
    return ((1 - gamma * dg.subs(var, u)) * (1 - gamma * dg.subs(var, v)), u, v)


@functools.lru_cache(maxsize=1)
def normal_form_amplitude() -> tuple[sp.Expr, sp.Symbol, sp.Symbol]:
    r"""Leading-order amplitude of the 2-cycle born at :math:`c = 2` (flip bifurcation).

    Near :math:`w^\star`, with :math:`x = w - w^\star` and :math:`c = 2 + \mu`, the GD map is
    :math:`T(x) = -(1+\mu)x + a x^2 + b x^3 + \dots` where
    :math:`a = -\gamma g_2/2`, :math:`b = -\gamma g_3/6`, :math:`g_k = L^{(k+1)}(w^\star)`.
    Expanding :math:`T(T(x)) - x` gives :math:`2\mu x - 2(a^2+b)x^3 + O(\mu x^2, x^4)`, so the
    cycle's half-width is

    .. math:: A = \sqrt{\mu/(a^2 + b)}\quad(\text{supercritical iff } a^2 + b > 0).

    Derived here by sympy with the scaling :math:`x = \varepsilon X`, :math:`\mu = \varepsilon^2 m`.
    Returns ``(A, a, b)`` with ``A`` in terms of the symbols ``mu``, ``a``, ``b``.
    """
    a, b, eps, X, m = sp.symbols("a b epsilon X m", real=True)
    T = lambda y: -(1 + mu) * y + a * y**2 + b * y**3  # noqa: E731
    residual = sp.expand(T(T(x)) - x)
    scaled = sp.expand(residual.subs({x: eps * X, mu: eps**2 * m}) / eps**3)
    leading = sp.simplify(scaled.series(eps, 0, 1).removeO().subs(eps, 0))
    # leading = X (2 m - 2 (a^2 + b) X^2): the non-trivial root is the amplitude.
    roots = [r for r in sp.solve(sp.expand(leading / X), X) if r.could_extract_minus_sign() is False]
    amplitude = sp.simplify(roots[0].subs(m, mu))
    return amplitude, a, b


def normal_form_coefficients(z, weights=None, step=None) -> dict[str, float]:
    r"""Numbers entering the normal form for a dataset: :math:`w^\star, \lambda, g_2, g_3, a, b` at :math:`\gamma = 2/\lambda`.

    The amplitude law then reads :math:`A \approx \sqrt{(c-2)/(a^2+b)}`.
    """
    w_star, lam_ = minimizer(z, weights)
    z2, a_w = validate_dataset(z, weights)
    if z2.shape[1] != 1:
        raise ValueError(f"z: the normal form is implemented for 1-D data, got d = {z2.shape[1]}")
    zz = z2[:, 0]
    sv = zz * w_star[0]
    d = [sp.lambdify(s, e, "numpy") for e in per_point_derivatives(4)]
    g2 = float(np.sum(a_w * zz**3 * d[3](sv)))
    g3 = float(np.sum(a_w * zz**4 * d[4](sv)))
    gam = 2.0 / lam_ if step is None else float(step)
    a, b = -gam * g2 / 2, -gam * g3 / 6
    return {"w_star": float(w_star[0]), "lam": lam_, "g2": g2, "g3": g3, "a": a, "b": b,
            "amplitude_coefficient": float(1 / np.sqrt(a * a + b)) if a * a + b > 0 else float("nan")}


def piecewise_linear_cycle() -> dict[str, sp.Expr]:
    r"""The 1-D "wide bump plus narrow spike" 2-cycle in its piecewise-linear limit.

    The bump has curvature :math:`\lambda` and minimizer :math:`w^\star < 0`; a spike of weight
    :math:`J/K` at :math:`z = K \gg 1` adds a step of height :math:`J` to the gradient across
    :math:`w = 0`: :math:`g(w) = \lambda(w - w^\star)` for :math:`w < 0`,
    :math:`\lambda(w - w^\star) + J` for :math:`w > 0`. Solving
    :math:`v = u - \gamma g(u),\ u = v - \gamma g(v)` with :math:`u < 0 < v` gives

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

    Raises ``ValueError`` for non-finite values, empty data, negative or all-zero weights and
    mismatched shapes; ``TypeError`` for non-numeric input.
    """
    try:
        z2 = np.asarray(z, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"z: expected a numeric (n,) or (n, d) array, got {type(z).__name__}") from exc
    if z2.ndim == 1:
        z2 = z2[:, None]
    if z2.ndim != 2 or z2.shape[0] == 0 or z2.shape[1] == 0:
        raise ValueError(f"z: expected a non-empty (n,) or (n, d) array, got shape {np.shape(z)}")
    if not np.all(np.isfinite(z2)):
        raise ValueError("z: contains non-finite values (inf or NaN); every feature must be finite")
    n = z2.shape[0]
    if weights is None:
        a = np.full(n, 1.0 / n)
    else:
        try:
            a = np.asarray(weights, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"weights: expected a numeric (n,) array, got {type(weights).__name__}") from exc
        if a.shape != (n,):
            raise ValueError(f"weights: expected shape ({n},) to match z with n = {n}, got {a.shape}")
        if not np.all(np.isfinite(a)):
            raise ValueError("weights: contains non-finite values; weights must be finite and >= 0")
        if np.any(a < 0):
            raise ValueError(f"weights: must be non-negative, got minimum {a.min():.3g}")
        if not np.any(a > 0):
            raise ValueError("weights: all weights are zero; at least one must be positive")
    return z2, a


def _sigmoid(t):
    return special.expit(t)


def loss(w_, z, weights=None) -> float:
    r""":math:`L(w) = \sum_i a_i \log(1+e^{-z_i^\top w})`, computed stably (numpy)."""
    z2, a = validate_dataset(z, weights)
    return float(np.sum(a * np.logaddexp(0.0, -(z2 @ np.atleast_1d(w_)))))


def grad(w_, z, weights=None) -> np.ndarray:
    r""":math:`\nabla L(w) = -\sum_i a_i \sigma(-z_i^\top w) z_i`."""
    z2, a = validate_dataset(z, weights)
    return -(a * _sigmoid(-(z2 @ np.atleast_1d(w_)))) @ z2


def hessian(w_, z, weights=None) -> np.ndarray:
    r""":math:`\nabla^2 L(w) = \sum_i a_i \sigma(z_i^\top w)\sigma(-z_i^\top w) z_i z_i^\top`."""
    z2, a = validate_dataset(z, weights)
    m = z2 @ np.atleast_1d(w_)
    return (z2 * (a * _sigmoid(m) * _sigmoid(-m))[:, None]).T @ z2


def gd_step(w_, step, z, weights=None) -> np.ndarray:
    """One GD update in float64 numpy (the reference for the JAX simulator)."""
    return np.atleast_1d(w_) - step * grad(w_, z, weights)


def _check_non_separable(z2: np.ndarray, a: np.ndarray) -> None:
    """Separable data has no finite minimizer: some u has z_i.u >= 0 for all active points.

    Decided by a linear program: maximize t subject to z_i.u >= t, |u|_inf <= 1. The data is
    non-separable (finite minimizer exists) iff the optimum is t < 0 and no u != 0 has all
    z_i.u >= 0 -- checked by maximizing sum z_i.u subject to z_i.u >= 0.
    """
    active = z2[a > 0]
    n, d = active.shape
    bounds = [(-1, 1)] * d
    # Weakly separating direction: z_i.u >= 0 for all i with some z_i.u > 0, or z_i.u = 0 for all
    # (a null direction of the data, along which L is flat).
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
    Raises ``ValueError`` if the data is separable (no finite minimizer), non-finite, has
    negative weights, or mismatched shapes.
    """
    z2, a = validate_dataset(z, weights)
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


def cycle_dataset(c: float, *, K: float = 1e5, J: float = 0.01) -> dict:
    r"""A 1-D dataset with a stable 2-cycle at normalized step :math:`c = \gamma\lambda \in (1, 2)`.

    "Wide bump plus narrow spike": points :math:`z = +1, -1` with weights :math:`p, 1-p-J/K` and
    :math:`z = K` with weight :math:`J/K`. The target minimizer is half the existence bound,
    :math:`w^\star = -\tfrac12 J(c-1)/(\lambda(2-c))`, and :math:`p` is chosen so that
    :math:`L'(w^\star) = 0` exactly: :math:`p = (1-J/K)\sigma(w^\star) - J\sigma(-Kw^\star)`.
    The prediction is :func:`piecewise_linear_cycle` evaluated at the Newton-polished
    :math:`w^\star, \lambda`; its error is of the order of the curvature variation of the bump
    over the cycle, :math:`\max(u^2, v^2)/4` relative.

    Returns ``dict(z, weights, w_star, lam, step, u, v, multiplier, c)``. ``c`` outside (1, 2)
    raises ``ValueError`` (no such cycle exists there).
    """
    if not isinstance(c, (int, float, np.floating, np.integer)) or isinstance(c, bool):
        raise TypeError(f"c: expected a real number in (1, 2), got {type(c).__name__}")
    c = float(c)
    if not (1.0 < c < 2.0):
        raise ValueError(f"c: the bump-plus-spike 2-cycle exists only for c = gamma*lambda in (1, 2), got {c}")
    if not (K > 1 and 0 < J < 1):
        raise ValueError(f"K, J: need K > 1 and 0 < J < 1, got K = {K}, J = {J}")
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
    return {"z": z, "weights": weights, "w_star": float(w_num[0]), "lam": lam_num, "step": c / lam_num, "c": c,
            "u": float(pl["u"].subs(subs)), "v": float(pl["v"].subs(subs)),
            "multiplier": float(pl["multiplier"].subs(subs)), "K": K, "J": J}


def solve_two_cycle(z, weights, step, guess) -> tuple[np.ndarray, float]:
    r"""Solve the exact 1-D 2-cycle equations :math:`T(T(u)) = u` by Newton from ``guess``.

    Returns ``((u, v), multiplier)`` with the multiplier :math:`(1-\gamma L''(u))(1-\gamma L''(v))`.
    """
    z2, a = validate_dataset(z, weights)

    def residual(uv):
        u_, v_ = uv
        return [v_ - gd_step(u_, step, z2, a)[0], u_ - gd_step(v_, step, z2, a)[0]]

    uv = optimize.root(residual, np.asarray(guess, dtype=np.float64), method="hybr", tol=1e-15).x
    mult = float(np.prod([1 - step * hessian(t, z2, a)[0, 0] for t in uv]))
    return uv, mult


def two_cycle_1d(z, weights, step, *, w_star: float | None = None) -> tuple[np.ndarray, float]:
    r"""The 1-D 2-cycle straddling :math:`w^\star` for :math:`c = \gamma\lambda > 2`, by bracketing.

    With :math:`F(u) = T(T(u)) - u`: near :math:`w^\star`, :math:`F(u) \approx ((1-c)^2 - 1)(u - w^\star)`
    is negative for :math:`u < w^\star`, while :math:`F(u) \to +\infty` as :math:`u \to -\infty`
    (:math:`T` moves points by a bounded amount), so a root :math:`u < w^\star` is bracketed on
    :math:`[w^\star - R, w^\star - \delta]`. Returns ``((u, v), multiplier)``; ``w_star`` may be
    passed when already known (continuation over many step sizes).
    """
    z2, a = validate_dataset(z, weights)
    if z2.shape[1] != 1:
        raise ValueError(f"z: two_cycle_1d needs 1-D data, got d = {z2.shape[1]}")
    if w_star is None:
        w_min, lam_ = minimizer(z2, a)
        if step * lam_ <= 2:
            raise ValueError(f"step: a 2-cycle born at c = 2 needs c = step*lambda > 2, got {step * lam_:.6g}")
        w_star = w_min[0]
    w_star = np.atleast_1d(np.float64(w_star))

    def F(u):
        return gd_step(gd_step(u, step, z2, a), step, z2, a)[0] - u

    lo, hi = w_star[0] - 1.0, w_star[0] - 1e-9
    while F(lo) <= 0:
        lo = w_star[0] - 2 * (w_star[0] - lo)
        if w_star[0] - lo > 1e6:
            raise ValueError("two_cycle_1d: could not bracket the 2-cycle")
    u = optimize.brentq(F, lo, hi, xtol=1e-15, rtol=1e-15)
    v = gd_step(u, step, z2, a)[0]
    mult = float(np.prod([1 - step * hessian(t, z2, a)[0, 0] for t in (u, v)]))
    return np.array([u, v]), mult


def period_doubling_step(z, weights=None, *, c_range=(2.0001, 3.5), n_scan: int = 300) -> float:
    r"""Second period doubling: the :math:`c` where the 2-cycle born at :math:`c = 2` loses stability.

    Along the branch :func:`two_cycle_1d`, the multiplier :math:`(1-\gamma L''(u))(1-\gamma L''(v))`
    starts at :math:`+1` (at :math:`c = 2^+`) and decreases; the 2-cycle loses stability where it
    crosses :math:`-1`. Located by a scan over ``c_range`` and Brent's method. Beyond this
    :math:`c` GD settles on a 4-cycle.
    """
    z2, a = validate_dataset(z, weights)
    w_star, lam_ = minimizer(z2, a)

    def m_plus_one(c):
        return two_cycle_1d(z2, a, c / lam_, w_star=w_star[0])[1] + 1

    cs = np.linspace(c_range[0], c_range[1], n_scan)
    values = [m_plus_one(c) for c in cs]
    for k in range(1, len(cs)):
        if values[k - 1] > 0 >= values[k]:
            return float(optimize.brentq(m_plus_one, cs[k - 1], cs[k], xtol=1e-13))
    raise ValueError(f"c_range: the 2-cycle stays stable on {c_range}; no second doubling found there")


# ---------------------------------------------------------------------------------------------
# The 2-D witness for claim (e): a stable 2-cycle with gamma * lambda_max < 1
# ---------------------------------------------------------------------------------------------
def construct_witness_2d(c: float = 0.75, theta_deg: float = 70.0, J: float = 0.02, K: float = 2000.0,
                         offset: float = 0.05) -> dict:
    r"""Build the 2-D "ping-pong" witness: a stable 2-cycle at :math:`c = \gamma\lambda_{\max} < 1`.

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
    curvature and :math:`c < 1`. The point is then Newton-polished on the exact equations
    :math:`T(T(p)) = p`.
    """
    th = np.deg2rad(theta_deg)
    nA, nB = np.array([np.cos(th), np.sin(th)]), np.array([np.cos(th), -np.sin(th)])
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

    sol = optimize.root(residual, p1, method="hybr", tol=1e-15)
    p_exact = sol.x
    if np.max(np.abs(residual(p_exact))) > 1e-13:
        raise ValueError(f"construct_witness_2d: no 2-cycle near the piecewise-linear prediction for these "
                         f"parameters (residual {np.max(np.abs(residual(p_exact))):.2e}); try c closer to 1")
    return {"z": z, "weights": weights, "step": float(step), "cycle_point": p_exact,
            "predicted_cycle": np.stack([p1, p2]), "w_star": w_star, "lam_max": lam_, "c": c,
            "theta_deg": theta_deg, "J": J, "K": K, "offset": offset}


_WITNESS_FILE = "logistic_witness_2d.json"


def witness_2d() -> dict:
    r"""The shipped 2-D witness for claim (e): ``dict(z, weights, step, cycle_point, note, ...)``.

    Loaded from ``theory/data/logistic_witness_2d.json`` (written by
    :func:`construct_witness_2d`; a test checks the shipped data equals a fresh construction).
    :math:`\gamma\lambda_{\max}(\nabla^2 L(w^\star)) < 1`, yet GD started at ``cycle_point``
    returns to it every two steps and the cycle is linearly stable.
    """
    raw = json.loads(resources.files("theory").joinpath("data", _WITNESS_FILE).read_text())
    out = {k: (np.asarray(v, dtype=np.float64) if isinstance(v, list) else v) for k, v in raw.items()}
    return out
