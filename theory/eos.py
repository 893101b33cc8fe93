r"""Closed forms for the edge of stability on exactly solvable models.

Four models, each small enough that the maths is exact (sympy) and the simulators in
:mod:`sims.eos` can be checked against it:

* **Self-stabilization toy** :math:`L(x, y) = \tfrac12(a + y^2)x^2 - \beta y` (:math:`a, \beta > 0`).
  The sharpness along :math:`x` is :math:`S = a + y^2`; the linear term keeps sharpening
  (:math:`y` grows) and the cubic coupling :math:`y x^2` pulls :math:`y` back once :math:`x`
  oscillates. GD with step :math:`\eta` has an exact 2-cycle :math:`x = \pm r`, :math:`y = y^\star`
  with :math:`y^{\star2} = 2/\eta - a` and :math:`r^2 = \beta/y^\star`: the central flow's fixed
  point (:math:`S = 2/\eta`, :math:`\sigma^2 = \beta/y^\star`) and the rod flow's fixed point at once.
  Heavy-ball and Nesterov momentum move the cycle to the momentum thresholds
  (:func:`selfstab_equilibrium`). The cycle is stable exactly on a window of :math:`\eta a`
  (:func:`selfstab_window`): below :math:`\eta a = 7/4` it loses stability through a pair of
  complex multipliers leaving the unit circle, near :math:`\eta a = 2` through a multiplier
  :math:`-1`, and for :math:`\eta a \ge 2` no equilibrium exists and GD diverges.
* **Momentum thresholds** (:func:`critical_sharpness`): the largest curvature a quadratic tolerates
  under GD (:math:`2/\eta`), heavy ball (:math:`2(1+\mu)/\eta`) and Nesterov
  (:math:`2(1+\mu)/((1+2\mu)\eta)`), :math:`\mu` the momentum.
* **Catapult** (uv model :math:`f = u^\top v/\sqrt m`, one sample with label 0, loss
  :math:`\tfrac12 f^2`): GD closes on :math:`(f, \lambda)`, :math:`\lambda = (\|u\|^2+\|v\|^2)/m` the
  NTK curvature (:func:`catapult_map`): :math:`f^+ = f(1 - \eta\lambda + \eta^2 f^2/m)`,
  :math:`\lambda^+ = \lambda + (\eta f^2/m)(\eta\lambda - 4)`. Hence the phases of
  :func:`catapult_phase`: lazy for :math:`\eta\lambda_0 < 2`, catapult for :math:`2 < \eta\lambda_0 < 4`,
  divergence for :math:`\eta\lambda_0 > 4`.
* **Scalar factorization** :math:`L(u, v) = \tfrac12(uv - 1)^2`: sharpness and the gradient-flow
  limit from the conserved :math:`u^2 - v^2` (:func:`uv_gradient_flow_limit_sharpness`).

The bivariate polynomial losses are also given as coefficient matrices (:func:`selfstab_coefficients`,
:func:`uv_coefficients`): :math:`L(x, y) = \sum_{i,j=0}^{2} C_{ij} x^i y^j`, the form the simulators take.
"""
from __future__ import annotations

import functools
import math

import numpy as np
import sympy as sp

from theory import validate as V
from theory import nqm

__all__ = [
    "selfstab_loss_expr", "selfstab_coefficients", "uv_coefficients", "poly_expr",
    "selfstab_cycle_equations", "selfstab_equilibrium", "selfstab_cycle_loss", "selfstab_central_flow_loss",
    "selfstab_cycle_jacobian", "selfstab_cycle_multipliers", "selfstab_window", "selfstab_edge_polynomials",
    "selfstab_averaged_jacobian", "selfstab_averaged_eigenvalues", "central_flow_mean_loss",
    "rod_flow_fixed_point_equations", "critical_sharpness", "momentum_characteristic_polynomial",
    "catapult_map", "catapult_edges", "catapult_phase", "uv_sharpness", "uv_gradient_flow_limit_sharpness",
    "uv_conserved_quantity", "catapult_scaled_map", "catapult_trajectory", "catapult_growth_factor",
]

x, y = sp.symbols("x y", real=True)
a_, beta_ = sp.symbols("a beta", positive=True)
eta_, mu_ = nqm.eta_, nqm.mu_  # step size and momentum: the shared symbols of theory.nqm
r_, ys_ = sp.symbols("r y_star", positive=True)



# ----------------------------------------------------------------------------------------------
# the self-stabilization toy
# ----------------------------------------------------------------------------------------------

def selfstab_loss_expr() -> sp.Expr:
    r""":math:`L(x, y) = \tfrac12(a + y^2)x^2 - \beta y` in the module symbols ``x, y, a, beta``."""
    return sp.Rational(1, 2) * (a_ + y ** 2) * x ** 2 - beta_ * y


def poly_expr(coef) -> sp.Expr:
    r""":math:`\sum_{i,j} C_{ij} x^i y^j` for a 3x3 coefficient matrix (exact rationals where given)."""
    C = V.array("coef", coef, shape=(3, 3))
    return sum(sp.nsimplify(C[i, j]) * x ** i * y ** j for i in range(3) for j in range(3))


def selfstab_coefficients(a: float, beta: float) -> np.ndarray:
    r"""Coefficients :math:`C` of the toy: :math:`C_{20} = a/2`, :math:`C_{22} = 1/2`, :math:`C_{01} = -\beta`."""
    a = V.real("a", a, low=0.0, low_open=True)
    beta = V.real("beta", beta, low=0.0, low_open=True)
    C = np.zeros((3, 3))
    C[2, 0], C[2, 2], C[0, 1] = 0.5 * a, 0.5, -beta
    return C


def uv_coefficients(target: float = 1.0) -> np.ndarray:
    r"""Coefficients of :math:`\tfrac12(uv - t)^2 = \tfrac12 u^2v^2 - t\,uv + \tfrac12 t^2` (``x = u``, ``y = v``)."""
    t = V.real("target", target)
    C = np.zeros((3, 3))
    C[2, 2], C[1, 1], C[0, 0] = 0.5, -t, 0.5 * t * t
    return C


def _step(method: str):
    r"""One optimizer step on the toy as a symbolic map of (current, previous) iterates.

    Heavy ball: :math:`w^+ = w + \mu(w - w^-) - \eta\nabla L(w)`; Nesterov: the gradient is taken
    at the look-ahead :math:`z = w + \mu(w - w^-)`, :math:`w^+ = z - \eta\nabla L(z)`; GD is
    :math:`\mu = 0`.
    """
    L = selfstab_loss_expr()
    grad = [sp.diff(L, v) for v in (x, y)]
    nu = 1 if method == "nesterov" else 0
    mu = 0 if method == "gd" else mu_

    def step(w, w_prev):
        z = [w[k] + nu * mu * (w[k] - w_prev[k]) for k in range(2)]
        g = [gk.subs({x: z[0], y: z[1]}, simultaneous=True) for gk in grad]
        return [w[k] + mu * (w[k] - w_prev[k]) - eta_ * g[k] for k in range(2)]

    return step


@functools.lru_cache(maxsize=None)
def selfstab_cycle_equations(method: str = "gd") -> tuple[sp.Expr, sp.Expr]:
    r"""Derived closed forms :math:`(y^{\star2}, r^2)` of the toy's period-2 orbit under ``method``.

    Ansatz: the iterates alternate :math:`(r, y^\star)`, :math:`(-r, y^\star)` (the previous iterate
    of :math:`(r, y^\star)` is :math:`(-r, y^\star)`). One step must map :math:`(r, y^\star)` to
    :math:`(-r, y^\star)`; sympy solves the two equations. Results (``mu`` the momentum):
    GD :math:`y^{\star2} = 2/\eta - a`, :math:`r^2 = \beta/y^\star`; heavy ball
    :math:`y^{\star2} = 2(1+\mu)/\eta - a`, :math:`r^2 = \beta/y^\star`; Nesterov
    :math:`y^{\star2} = 2(1+\mu)/((1+2\mu)\eta) - a`, :math:`r^2 = \beta/((1+2\mu)^2 y^\star)`.
    """
    V.choice("method", method, ("gd", "heavy_ball", "nesterov"))
    w, w_prev = [r_, ys_], [-r_, ys_]
    nxt = _step(method)(w, w_prev)
    eq_x = sp.simplify(nxt[0] + r_)   # x flips sign
    eq_y = sp.simplify(nxt[1] - ys_)  # y stays
    # both equations are linear in (y*^2, r^2) after dividing eq_x by r: solve for them
    Y2, R2 = sp.symbols("Y2 R2", positive=True)
    eqs = [sp.expand(eq_x / r_).subs(ys_ ** 2, Y2), sp.expand(eq_y).subs(r_ ** 2, R2)]
    sol = sp.solve(eqs, [Y2, R2], dict=True)
    if len(sol) != 1:  # pragma: no cover - the derivation is fixed
        raise RuntimeError(f"expected one period-2 solution, got {sol}")
    return sp.simplify(sol[0][Y2]), sp.simplify(sol[0][R2])


@functools.lru_cache(maxsize=None)
def _equilibrium_fns(method: str):
    y2, r2 = selfstab_cycle_equations(method)
    return (sp.lambdify((a_, beta_, eta_, mu_), y2, "math"),
            sp.lambdify((a_, beta_, eta_, mu_, ys_), r2, "math"))


def _method(momentum: float, nesterov: bool) -> str:
    if not isinstance(nesterov, (bool, np.bool_)):
        raise TypeError(f"nesterov: expected a bool, got {type(nesterov).__name__} {nesterov!r}")
    if momentum == 0.0:
        return "gd"
    return "nesterov" if nesterov else "heavy_ball"


def selfstab_equilibrium(a: float, beta: float, eta: float, momentum: float = 0.0, *,
                         nesterov: bool = False) -> tuple[float, float]:
    r"""The toy's edge-of-stability equilibrium :math:`(y^\star, \sigma^2)` (see :func:`selfstab_cycle_equations`).

    :math:`y^\star = \sqrt{2/\eta - a}` for GD, :math:`\sqrt{2(1+\mu)/\eta - a}` with heavy-ball
    momentum :math:`\mu`, :math:`\sqrt{2(1+\mu)/((1+2\mu)\eta) - a}` with Nesterov momentum; the
    sharpness there, :math:`a + y^{\star2}`, is the method's critical sharpness
    (:func:`critical_sharpness`). :math:`\sigma^2` is the time average of :math:`x^2` over the
    iterates of the 2-cycle: :math:`\beta/y^\star` (GD, heavy ball; for GD also the central flow's
    :math:`\sigma^2` and the rod flow's :math:`r^{\star2}`), :math:`\beta/((1+2\mu)^2y^\star)` for
    Nesterov (whose gradient is taken at a look-ahead point of amplitude :math:`(1+2\mu)r`).

    Raises ``ValueError`` when no equilibrium exists (the critical sharpness is not above
    :math:`a`: then every point is unstable along :math:`x` and GD diverges).
    """
    a = V.real("a", a, low=0.0, low_open=True)
    beta = V.real("beta", beta, low=0.0, low_open=True)
    eta = V.real("eta", eta, low=0.0, low_open=True)
    momentum = V.real("momentum", momentum, low=0.0, high=1.0, high_open=True)
    method = _method(momentum, nesterov)
    y2_fn, r2_fn = _equilibrium_fns(method)
    y2 = y2_fn(a, beta, eta, momentum)
    if not y2 > 0:
        crit = critical_sharpness(eta, momentum, nesterov=nesterov)
        # the constraint binds a, eta and momentum together: name a and eta (momentum is named in the text)
        raise ValueError(f"a, eta: no equilibrium for a = {a} at eta = {eta}, momentum = {momentum} "
                         f"({method}): needs a < critical sharpness {crit:.6g} (eta*a = {eta * a:.6g})")
    ys = math.sqrt(y2)
    return ys, float(r2_fn(a, beta, eta, momentum, ys))


def selfstab_cycle_loss(a: float, beta: float, eta: float, momentum: float = 0.0, *,
                        nesterov: bool = False) -> float:
    r"""The loss averaged over the 2-cycle's iterates, :math:`\tfrac12(a + y^{\star2})\sigma^2 - \beta y^\star`."""
    ys, s2 = selfstab_equilibrium(a, beta, eta, momentum, nesterov=nesterov)
    return 0.5 * (a + ys * ys) * s2 - beta * ys


def selfstab_central_flow_loss(a: float, beta: float, eta: float) -> float:
    r"""The central flow's prediction of GD's time-averaged loss, :math:`L(0, y^\star) + \sigma^2/\eta`.

    Equal to :func:`selfstab_cycle_loss` (momentum 0) because :math:`\tfrac12 S\sigma^2 = \sigma^2/\eta`
    at :math:`S = 2/\eta` (tested symbolically).
    """
    ys, s2 = selfstab_equilibrium(a, beta, eta)
    return -beta * ys + s2 / eta


@functools.lru_cache(maxsize=None)
def _cycle_jacobian_expr() -> sp.Matrix:
    r"""Jacobian of GD's two-step map at the cycle point :math:`(r, y^\star)`, in the symbols (eta, beta, y_star).

    Parametrized by :math:`y^\star` instead of :math:`a` (:math:`a = 2/\eta - y^{\star2}`,
    :math:`r = \sqrt{\beta/y^\star}`), which keeps every entry rational in :math:`\sqrt{\cdot}`-free form.
    """
    L = selfstab_loss_expr()
    w = sp.Matrix([x, y])
    T = w - eta_ * sp.Matrix([sp.diff(L, v) for v in (x, y)])
    J = T.jacobian(w)
    y2, r2 = selfstab_cycle_equations("gd")
    a_of_ys = sp.solve(sp.Eq(y2, ys_ ** 2), a_)[0]
    r = sp.sqrt(r2)
    J_plus = J.subs({x: r, y: ys_, a_: a_of_ys})
    J_minus = J.subs({x: -r, y: ys_, a_: a_of_ys})
    return sp.simplify(J_minus * J_plus)


def selfstab_cycle_jacobian(a: float, beta: float, eta: float) -> np.ndarray:
    r"""The 2x2 Jacobian :math:`M = J(-r, y^\star)\,J(r, y^\star)` of two GD steps at the cycle.

    With :math:`c = 2\eta r y^\star` and :math:`d = 1 - \eta r^2`:
    :math:`M = \begin{pmatrix}1-c^2 & c(1+d)\\ -c(1+d) & d^2-c^2\end{pmatrix}`,
    :math:`\det M = (d + c^2)^2`.
    """
    ys, _ = selfstab_equilibrium(a, beta, eta)  # validates and raises where no cycle exists
    fn = _lambdified_jacobian()
    # NumPy scalars: an entry beyond float64 becomes inf (checked below), not Python's OverflowError
    with np.errstate(over="ignore", invalid="ignore"):
        m = np.array(fn(np.float64(eta), np.float64(beta), np.float64(ys)), dtype=float)
    if not np.all(np.isfinite(m)):
        raise ValueError(f"beta, eta: the cycle Jacobian overflows float64 at a = {a}, beta = {beta}, eta = {eta} "
                         f"(its entries grow like (beta*eta)^2 and beta*eta^2*y*); expected a representable Jacobian")
    return m


@functools.lru_cache(maxsize=None)
def _lambdified_jacobian():
    return sp.lambdify((eta_, beta_, ys_), _cycle_jacobian_expr(), "numpy")


def selfstab_cycle_multipliers(a: float, beta: float, eta: float) -> np.ndarray:
    """Eigenvalues of :func:`selfstab_cycle_jacobian` (complex): the cycle is stable iff all have modulus < 1."""
    return np.linalg.eigvals(selfstab_cycle_jacobian(a, beta, eta))


@functools.lru_cache(maxsize=None)
def selfstab_averaged_jacobian() -> sp.Matrix:
    r"""Jacobian, at the equilibrium, of the *averaged* self-stabilization dynamics of the toy (per step), by sympy.

    Along the 2-cycle GD flips :math:`x` every step, :math:`x_{t+1} = -(1 + \eta(y_t^2 - y^{\star2}))x_t`, while
    :math:`y_{t+1} = y_t + \eta(\beta - y_t x_t^2)`. Treating both as slow (the continuous-time picture of
    self-stabilization: the oscillation energy :math:`X = x^2` grows while the sharpness is above
    :math:`2/\eta` and the cubic term pulls :math:`y` back), :math:`p = \ln X` obeys
    :math:`\dot p = 2\eta(y^2 - y^{\star2})` and :math:`\dot y = \eta(\beta - y e^p)`. Returned: the Jacobian of
    that field at :math:`(p, y) = (\ln(\beta/y^\star), y^\star)`, in the symbols (eta, beta, y_star):
    :math:`\begin{pmatrix}0 & 4\eta y^\star\\ -\eta\beta & -\eta\beta/y^\star\end{pmatrix}`.
    """
    p = sp.symbols("p", real=True)
    field = sp.Matrix([2 * eta_ * (y ** 2 - ys_ ** 2), eta_ * (beta_ - y * sp.exp(p))])
    J = field.jacobian(sp.Matrix([p, y]))
    return sp.simplify(J.subs({p: sp.log(beta_ / ys_), y: ys_}))


@functools.lru_cache(maxsize=None)
def _lambdified_averaged_jacobian():
    return sp.lambdify((eta_, beta_, ys_), selfstab_averaged_jacobian(), "numpy")


def selfstab_averaged_eigenvalues(a: float, beta: float, eta: float) -> np.ndarray:
    r"""Eigenvalues (per step, complex) of :func:`selfstab_averaged_jacobian` at the toy's equilibrium.

    :math:`\lambda^2 + (\eta\beta/y^\star)\lambda + 4\eta^2\beta y^\star = 0`: the averaged dynamics relax at
    :math:`\eta\beta/(2y^\star)` per step. GD's exact two-step multipliers (:func:`selfstab_cycle_multipliers`)
    have modulus :math:`1 - \eta\beta/y^\star + 4\eta^2\beta y^\star`, i.e. a rate
    :math:`\eta\beta/(2y^\star) - 2\eta^2\beta y^\star + \dots` per step: averaging drops a term of the same order
    as the one it keeps (:math:`4\eta^2\beta y^\star` is :math:`c^2`, the square of the cycle's x-y coupling).
    This is the naive continuous-time law that the discrete relaxation is tested against.
    """
    ys, _ = selfstab_equilibrium(a, beta, eta)  # validates; raises where no equilibrium exists
    return np.linalg.eigvals(np.array(_lambdified_averaged_jacobian()(eta, beta, ys), dtype=float))


def central_flow_mean_loss(loss, sigma2_sharpness):
    r"""The central flow's prediction of GD's time-averaged loss, :math:`L(w) + \tfrac12\sigma^2 S(w)` (rank one).

    GD oscillates about the central point :math:`w` along the top eigenvector :math:`u`,
    :math:`w_t = w + x_t u` with :math:`\mathbb E[x_t] = 0`, :math:`\mathbb E[x_t^2] = \sigma^2`; to second
    order :math:`\mathbb E[L(w + x u)] = L(w) + \tfrac12\sigma^2\,u^\top\nabla^2L\,u = L + \tfrac12\sigma^2S`.
    Where the flow holds :math:`S = 2/\eta` this is :math:`L + \sigma^2/\eta`, the form on the authors' companion
    site (:math:`L + \operatorname{tr}\Sigma/\eta`). Linear in :math:`\sigma^2S`, so time averages combine:
    ``loss`` and ``sigma2_sharpness`` may be window means of :math:`L` and of the product :math:`\sigma^2S`.

    ``loss``: :math:`L` (number or array); ``sigma2_sharpness``: :math:`\sigma^2 S \ge 0`, same shape.
    """
    L = V.array("loss", loss)
    P = V.array("sigma2_sharpness", sigma2_sharpness, low=0.0)
    if P.shape != L.shape:
        raise ValueError(f"sigma2_sharpness: expected the shape of loss {L.shape}, got {P.shape}")
    return L + 0.5 * P


@functools.lru_cache(maxsize=None)
def selfstab_edge_polynomials() -> dict[str, sp.Expr]:
    r"""The three ways the cycle Jacobian :math:`M` can lose stability, as expressions in (eta, beta, y_star).

    * ``"neimark_sacker"``: :math:`\det M - 1` (complex pair on the unit circle). With
      :math:`\det M = (d+c^2)^2` it factors; the branch :math:`d + c^2 = 1` is
      :math:`c^2 = \eta r^2`, i.e. :math:`4\eta y^{\star2} = 1`, i.e. :math:`\eta a = 7/4`.
    * ``"flip"``: :math:`\det M + \operatorname{tr} M + 1` (a multiplier :math:`-1`, period doubling).
    * ``"fold"``: :math:`\det M - \operatorname{tr} M + 1` (a multiplier :math:`+1`; positive on the
      whole cycle's domain, so it never binds -- tested).
    """
    M = _cycle_jacobian_expr()
    det, tr = sp.expand(M.det()), sp.expand(M.trace())
    return {"neimark_sacker": sp.factor(det - 1), "flip": sp.factor(det + tr + 1), "fold": sp.factor(det - tr + 1)}


@functools.lru_cache(maxsize=None)
def _ns_edge_eta_a() -> sp.Expr:
    r""":math:`\eta a` on the Neimark-Sacker branch :math:`d + c^2 = 1`, solved by sympy (:math:`7/4`)."""
    M = _cycle_jacobian_expr()
    d_plus_c2 = sp.sqrt(sp.factor(sp.expand(M.det())))  # det M = (d + c^2)^2 with d + c^2 > 0 on this branch
    sols = [s for s in sp.solve(sp.Eq(d_plus_c2, 1), ys_) if s.is_positive]
    if len(sols) != 1:  # pragma: no cover
        raise RuntimeError(f"expected one Neimark-Sacker edge, got {sols}")
    return sp.simplify(2 - eta_ * sols[0] ** 2)  # eta a = 2 - eta y*^2


def _edge_candidates(beta: float, eta: float) -> list[tuple[float, str]]:
    """Every :math:`\\eta a < 2` where some multiplier of the cycle Jacobian reaches the unit circle, with its kind."""
    out = []
    for kind, expr in selfstab_edge_polynomials().items():
        num = sp.Poly(sp.expand(sp.numer(sp.together(expr.subs({eta_: eta, beta_: beta})))), ys_)
        # SymPy's floats have an unbounded exponent: scale by the largest coefficient before the cast, so that
        # beta^2 eta^4 (1e400 at beta = 1e200) does not reach np.roots as inf (a LinAlgError naming nothing)
        coeffs = num.all_coeffs()
        top = max(abs(c) for c in coeffs)
        roots = np.roots([float(c / top) for c in coeffs])
        with np.errstate(over="ignore"):
            for root in roots[(np.abs(roots.imag) <= 1e-12 * np.abs(roots)) & (roots.real > 0)].real:
                out.append((2.0 - eta * np.float64(root) ** 2, kind))  # -inf where y*^2 overflows: below every a > 0
    return sorted(out)


def selfstab_window(beta: float, eta: float) -> dict[str, float | str]:
    r"""Where GD's 2-cycle of the toy -- the central-flow equilibrium -- is stable, as edges in :math:`\eta a`.

    The candidates are the roots of the three edge polynomials of :func:`selfstab_edge_polynomials`
    (mapped by :math:`\eta a = 2 - \eta y^{\star2}`); the window is the interval between consecutive
    candidates on which the spectral radius of the cycle Jacobian is below 1. Returns ``lower`` and
    ``upper`` (its edges, in :math:`\eta a`), ``lower_kind`` / ``upper_kind`` (which multiplier
    crossing bounds it) and ``diverge`` (:math:`\eta a = 2`: no equilibrium beyond, and since
    :math:`S = a + y^2 \ge a > 2/\eta` everywhere, :math:`|x|` grows geometrically).

    For small :math:`\beta` the lower edge is the Neimark-Sacker edge :math:`\eta a = 7/4` (below
    it the multipliers are a complex pair of modulus :math:`1 - \eta\beta/y^\star + 4\eta^2\beta y^\star > 1`)
    and the upper edge a fold (a real multiplier through :math:`+1`) just below :math:`\eta a = 2`,
    at :math:`y^\star \approx \eta\beta/2`. ``ValueError`` if no stable interval exists.
    """
    beta = V.real("beta", beta, low=0.0, low_open=True)
    eta = V.real("eta", eta, low=0.0, low_open=True)
    edges = [(-math.inf, "none")] + [e for e in _edge_candidates(beta, eta) if e[0] < 2.0] + [(2.0, "diverge")]
    for (lo, lo_kind), (hi, hi_kind) in zip(edges[:-1], edges[1:]):
        if not hi > lo:
            continue
        mid = 0.5 * (max(lo, hi - 1.0) + hi) if math.isinf(lo) else 0.5 * (lo + hi)
        if mid * eta <= 0 or mid <= 0:
            continue
        if np.max(np.abs(selfstab_cycle_multipliers(mid / eta, beta, eta))) < 1.0:
            return {"lower": lo, "upper": hi, "lower_kind": lo_kind, "upper_kind": hi_kind, "diverge": 2.0}
    raise ValueError(f"beta, eta: GD's 2-cycle is nowhere stable for beta = {beta}, eta = {eta}")


@functools.lru_cache(maxsize=None)
def rod_flow_fixed_point_equations() -> tuple[sp.Expr, sp.Expr]:
    r"""The rod flow's stationary rod on the toy, :math:`(y^{\star2}, r^{\star2})`, derived by sympy.

    Rod flow (time in steps): :math:`\dot c = -\tfrac\eta2[\nabla L(c+r) + \nabla L(c-r)]`,
    :math:`\dot r = \tfrac\eta2[\nabla L(c+r) - \nabla L(c-r)] - 2r`. With :math:`c = (0, y)`,
    :math:`r = (\rho, 0)` both vanish iff :math:`\eta(a + y^2) = 2` and :math:`\rho^2 = \beta/y`:
    the same :math:`(y^{\star2}, r^2)` as GD's 2-cycle (:func:`selfstab_cycle_equations`).
    """
    L = selfstab_loss_expr()
    grad = sp.Matrix([sp.diff(L, v) for v in (x, y)])
    rho = sp.symbols("rho", positive=True)
    gp, gm = grad.subs({x: rho, y: ys_}), grad.subs({x: -rho, y: ys_})
    c_dot = -eta_ / 2 * (gp + gm)
    r_dot = eta_ / 2 * (gp - gm) - 2 * sp.Matrix([rho, 0])
    Y2, R2 = sp.symbols("Y2 R2", positive=True)
    eqs = [sp.expand(c_dot[1]).subs(rho ** 2, R2), sp.expand(r_dot[0] / rho).subs(ys_ ** 2, Y2)]
    assert sp.simplify(c_dot[0]) == 0 and sp.simplify(r_dot[1]) == 0
    sol = sp.solve(eqs, [Y2, R2], dict=True)
    return sp.simplify(sol[0][Y2]), sp.simplify(sol[0][R2])


# ----------------------------------------------------------------------------------------------
# momentum thresholds on a quadratic
# ----------------------------------------------------------------------------------------------

def momentum_characteristic_polynomial(method: str) -> sp.Expr:
    r"""Characteristic polynomial in :math:`z` of ``method`` on :math:`\tfrac12\lambda x^2`.

    GD :math:`z - (1-\eta\lambda)`; heavy ball :math:`z^2 - (1 + \mu - \eta\lambda)z + \mu`;
    Nesterov :math:`z^2 - (1+\mu)(1-\eta\lambda)z + \mu(1-\eta\lambda)` -- the shared derivation
    :func:`theory.nqm.momentum_characteristic_polynomial` (symbols ``z``, ``lambda``, :data:`eta_`, :data:`mu_`).
    """
    return nqm.momentum_characteristic_polynomial(method)


def critical_sharpness(eta: float, momentum: float = 0.0, *, nesterov: bool = False) -> float:
    r"""The largest stable curvature: :math:`2/\eta`, :math:`2(1+\mu)/\eta` (heavy ball), :math:`2(1+\mu)/((1+2\mu)\eta)` (Nesterov).

    Derived: the characteristic polynomial (:func:`momentum_characteristic_polynomial`) has a root
    at :math:`z = -1` exactly there (a flip), and for :math:`0 \le \mu < 1` that is the first root
    to leave the unit disc as :math:`\lambda` grows (tested). One derivation shared with the other
    topics: :func:`theory.nqm.critical_curvature`.
    """
    eta = V.real("eta", eta, low=0.0, low_open=True)
    momentum = V.real("momentum", momentum, low=0.0, high=1.0, high_open=True)
    return nqm.critical_curvature(eta, momentum, _method(momentum, nesterov))


# ----------------------------------------------------------------------------------------------
# the catapult (uv model, one sample, label 0)
# ----------------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def catapult_map() -> tuple[sp.Expr, sp.Expr]:
    r"""GD on :math:`\tfrac12 f^2`, :math:`f = u^\top v/\sqrt m`, closed on :math:`(f, \lambda)`; derived.

    With :math:`P = \|u\|^2`, :math:`Q = \|v\|^2`, :math:`C = u^\top v` the update
    :math:`u^+ = u - \eta f v/\sqrt m`, :math:`v^+ = v - \eta f u/\sqrt m` gives
    :math:`C^+ = C - \eta f (P+Q)/\sqrt m + \eta^2 f^2 C/m` and
    :math:`P^+ + Q^+ = (P+Q)(1 + \eta^2f^2/m) - 4\eta f C/\sqrt m`. Returns :math:`(f^+, \lambda^+)`
    in the symbols ``f, lambda, eta, m``.
    """
    f, lam, m = sp.symbols("f lambda m", real=True)
    P, Q, C = sp.symbols("P Q C", real=True)
    e = eta_ * f / sp.sqrt(m)
    C_new = C - e * (P + Q) + e ** 2 * C     # u+.v+ = u.v - e(|u|^2+|v|^2) + e^2 v.u
    PQ_new = (P + Q) * (1 + e ** 2) - 4 * e * C  # |u+|^2+|v+|^2
    subs = {C: f * sp.sqrt(m), P: lam * m - Q}
    f_new = sp.simplify((C_new / sp.sqrt(m)).subs(subs, simultaneous=True))
    lam_new = sp.simplify((PQ_new / m).subs(subs, simultaneous=True))
    return sp.expand(f_new), sp.expand(lam_new)


@functools.lru_cache(maxsize=None)
def catapult_edges() -> tuple[float, float]:
    r"""The catapult phase boundaries in :math:`\eta\lambda_0`, read off :func:`catapult_map` by sympy.

    Lazy edge: the output multiplier near :math:`f = 0`, :math:`\partial f^+/\partial f|_{f=0} = 1 - \eta\lambda`,
    reaches :math:`-1` (:math:`\eta\lambda = 2`). Divergent edge: the curvature increment
    :math:`\lambda^+ - \lambda` changes sign (:math:`\eta\lambda = 4`).
    """
    f_new, lam_new = catapult_map()
    f, lam, m = sp.symbols("f lambda m", real=True)
    c = sp.symbols("c", positive=True)  # c = eta * lambda
    mult = sp.diff(f_new, f).subs(f, 0).subs(lam, c / eta_)
    lazy = sp.solve(sp.Eq(sp.simplify(mult), -1), c)
    incr = sp.factor(sp.simplify((lam_new - lam) / (eta_ * f ** 2 / m))).subs(lam, c / eta_)
    div = sp.solve(sp.Eq(sp.simplify(incr), 0), c)
    if len(lazy) != 1 or len(div) != 1:  # pragma: no cover - the derivation is fixed
        raise RuntimeError(f"unexpected catapult edges {lazy}, {div}")
    return float(lazy[0]), float(div[0])


def catapult_phase(eta_lambda0: float) -> str:
    r"""``"lazy"`` (:math:`\eta\lambda_0 < 2`), ``"catapult"`` (:math:`2 < \eta\lambda_0 < 4`), ``"divergent"`` (:math:`> 4`).

    From :func:`catapult_map`: near :math:`f = 0` the output multiplier is :math:`1 - \eta\lambda`
    (stable iff :math:`\eta\lambda < 2`), and :math:`\lambda^+ - \lambda = (\eta f^2/m)(\eta\lambda - 4)`
    lowers the curvature while :math:`\eta\lambda < 4` (so a growing :math:`f` catapults :math:`\lambda`
    below :math:`2/\eta`) and raises it while :math:`\eta\lambda > 4` (no way back: divergence).
    The edges themselves (2 and 4) return ``"boundary"``. The divergent edge is exact at every
    width :math:`m`; whether a catapult just below 4 survives its spike depends on :math:`m`
    (the spike's relative size shrinks as :math:`m` grows).
    """
    c = V.real("eta_lambda0", eta_lambda0, low=0.0, low_open=True)
    lo, hi = catapult_edges()
    if c == lo or c == hi:
        return "boundary"
    return "lazy" if c < lo else ("catapult" if c < hi else "divergent")


# ----------------------------------------------------------------------------------------------
# the scalar factorization (uv - 1)^2 / 2
# ----------------------------------------------------------------------------------------------

def uv_sharpness(u: float, v: float) -> float:
    r"""Largest Hessian eigenvalue of :math:`\tfrac12(uv-1)^2`: Hessian :math:`\begin{pmatrix}v^2 & 2uv-1\\ 2uv-1 & u^2\end{pmatrix}`."""
    u = V.real("u", u)
    v = V.real("v", v)
    h11, h22, h12 = v * v, u * u, 2 * u * v - 1
    return 0.5 * (h11 + h22) + math.hypot(0.5 * (h11 - h22), h12)


def uv_conserved_quantity() -> sp.Expr:
    r""":math:`\frac{d}{dt}(u^2 - v^2)` along gradient flow of :math:`\tfrac12(uv-1)^2` (simplifies to 0)."""
    u, v = x, y
    L = sp.Rational(1, 2) * (u * v - 1) ** 2
    return sp.simplify(2 * u * (-sp.diff(L, u)) - 2 * v * (-sp.diff(L, v)))


def uv_gradient_flow_limit_sharpness(u0: float, v0: float) -> float:
    r"""Sharpness where gradient flow from :math:`(u_0, v_0)` lands: :math:`\sqrt{(u_0^2 - v_0^2)^2 + 4}`.

    Gradient flow keeps :math:`\delta = u^2 - v^2` (:func:`uv_conserved_quantity`) and ends on
    :math:`uv = 1`, where the sharpness is :math:`u^2 + v^2 = \sqrt{\delta^2 + 4(uv)^2}`.
    Needs :math:`u_0 v_0 > 0` or :math:`\delta \ne 0` (else the flow stops at the saddle 0).
    """
    u0 = V.real("u0", u0)
    v0 = V.real("v0", v0)
    delta = u0 * u0 - v0 * v0
    if delta == 0 and not u0 * v0 > 0:
        raise ValueError(f"u0: gradient flow from ({u0}, {v0}) ends at the saddle (0, 0), not on uv = 1")
    return math.sqrt(delta * delta + 4.0)


@functools.lru_cache(maxsize=None)
def catapult_scaled_map() -> tuple[sp.Expr, sp.Expr]:
    r""":func:`catapult_map` in the scaled variables :math:`z = \eta^2f^2/m`, :math:`c = \eta\lambda`; derived.

    Returns :math:`(z^+, c^+)` in the symbols ``z, c``: :math:`z^+ = z(1 - c + z)^2`, :math:`c^+ = c + z(c - 4)`.
    Neither :math:`\eta` nor :math:`m` is left: a run is fixed by its start :math:`(z_0, c_0)`.
    """
    f_new, lam_new = catapult_map()
    f, lam, m = sp.symbols("f lambda m", real=True)
    z, c = sp.symbols("z c", real=True)
    # substitute f = sqrt(z m)/eta and lambda = c/eta, then rescale the images the same way
    sub = {f: sp.sqrt(z * m) / eta_, lam: c / eta_}
    z_new = sp.simplify(sp.expand((eta_ ** 2 * f_new ** 2 / m).subs(sub, simultaneous=True)))
    c_new = sp.simplify(sp.expand((eta_ * lam_new).subs(sub, simultaneous=True)))
    return sp.factor(z_new), sp.expand(c_new)


@functools.lru_cache(maxsize=None)
def _catapult_scaled_fn():
    z, c = sp.symbols("z c", real=True)
    return sp.lambdify((z, c), list(catapult_scaled_map()), "numpy")


def catapult_trajectory(eta_lambda0, z0, n_steps: int) -> dict[str, np.ndarray]:
    r"""Iterate :func:`catapult_scaled_map` from :math:`(z_0, c_0)`: the uv model's :math:`\eta\lambda_t` and loss scale.

    Args:
      eta_lambda0: :math:`c_0 = \eta\lambda_0 > 0`, a number or a 1-D array (one run each).
      z0: :math:`z_0 = \eta^2 f_0^2/m > 0` (same shape, or a number for all).
      n_steps: GD steps, ``1..10**6``.

    Returns ``eta_lambda`` (runs, n_steps + 1) and ``z`` (runs, n_steps + 1), from step 0. A run whose ``z``
    exceeds ``1e100`` (divergence) is NaN from there on.
    """
    c = np.atleast_1d(V.array("eta_lambda0", eta_lambda0, ndim=(0, 1), low=0.0, low_open=True)).astype(float)
    z = np.atleast_1d(V.array("z0", z0, ndim=(0, 1), low=0.0, low_open=True)).astype(float)
    if z.size not in (1, c.size):
        raise ValueError(f"z0: expected one value or {c.size} (one per eta_lambda0), got {z.size}")
    n_steps = V.integer("n_steps", n_steps, low=1, high=10 ** 6)
    z = np.broadcast_to(z, c.shape).copy()
    fn = _catapult_scaled_fn()
    cs, zs = [c.copy()], [z.copy()]
    with np.errstate(over="ignore", invalid="ignore"):
        for _ in range(n_steps):
            z_new, c_new = fn(z, c)
            dead = ~np.isfinite(z_new) | (z_new > 1e100)
            z, c = np.where(dead, np.nan, z_new), np.where(dead, np.nan, c_new)
            cs.append(c.copy())
            zs.append(z.copy())
    return {"eta_lambda": np.stack(cs, axis=1), "z": np.stack(zs, axis=1)}


@functools.lru_cache(maxsize=None)
def _catapult_growth_expr() -> sp.Expr:
    z, c = sp.symbols("z c", real=True)
    return sp.factor(sp.diff(catapult_scaled_map()[0], z).subs(z, 0))


def catapult_growth_factor(eta_lambda0) -> float:
    r"""Per-step growth factor of the loss scale :math:`z` while it is small: :math:`\partial z^+/\partial z|_{z=0} = (1-c)^2`.

    Read off :func:`catapult_scaled_map` by sympy at :math:`c = \eta\lambda_0`. While :math:`z \ll 1` the curvature
    barely moves (:math:`c^+ - c = z(c - 4)`), so :math:`z_t \approx z_0 (1-c_0)^{2t}` and the loss peaks after
    :math:`\ln(z^\star/z_0)/\ln(1-c_0)^2` steps, :math:`z^\star = O(1)` set by :math:`c_0` alone: with
    :math:`z_0 = \eta^2f_0^2/m` the catapult's duration grows like :math:`\ln m/\ln(1-c_0)^2`.
    """
    c = V.real("eta_lambda0", eta_lambda0, low=0.0, low_open=True)
    return float(_catapult_growth_expr().subs(sp.Symbol("c", real=True), c))
