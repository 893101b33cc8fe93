r"""The Taylor radius of cross-entropy along a step: complex zeros ("ghosts") of the softmax
partition function (Sao 2026, "Ghosts of Softmax").

Setting. Logits :math:`z\in\mathbb R^n`, a step :math:`\theta(t)=\theta_0+t v`, directional
logit derivatives :math:`a=J_z v`. Under logit linearization :math:`z_k(t)=z_k+a_kt` the
line loss is :math:`\ell(t)=-z_y-a_yt+\log F(t)` with

.. math:: F(t)=\sum_k e^{z_k+a_kt}.

:math:`F>0` on the real line but vanishes at complex points; :math:`\log F` has logarithmic branch
points there, so the Taylor radius of :math:`\ell` about 0 is
:math:`\rho^*=\min\{|t|: F(t)=0\}`.

* Binary: zeros :math:`t_k=(-\delta+i\pi(2k+1))/\Delta a` with :math:`\delta=z_1-z_2`,
  :math:`\Delta a=a_1-a_2`, hence :math:`\rho^*=\sqrt{\delta^2+\pi^2}/|\Delta a|`, minimal
  (:math:`\pi/|\Delta a|`) at :math:`\delta=0`; the nearest ghost sits above the decision-flip
  point :math:`-\delta/\Delta a` at height :math:`\pi/|\Delta a|`.
* Any :math:`n`: the strip :math:`|\mathrm{Im}\,t|<\pi/\Delta a` (:math:`\Delta a=\max a-\min a`)
  is zero-free (half-plane lemma), so :math:`\rho^*\ge\rho_a=\pi/\Delta a`, and the bound is the
  infimum over the logits :math:`z`.

Vocabulary: :math:`t` (``t``) is the coordinate along the line :math:`\theta_0+tv` with
:math:`\|v\|=1`, i.e. a distance in parameter space (real for steps, complex for ghosts); a
learning rate :math:`\eta` enters only through :math:`t=\eta\|p\|` for an update :math:`p`. The
paper's normalized step :math:`r=t/\rho_a` is called ``r``.

Symbolic functions return sympy objects; numeric helpers use NumPy only. Every public function
validates its arguments (:mod:`theory.validate`). No JAX, no I/O.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import sympy as sp

from theory import validate as V

__all__ = [
    "binary_zeros", "binary_radius_expr", "binary_radius_minimum", "binary_flip_point",
    "half_plane_lower_bound", "logistic_scales", "kl_identities", "kl_remainder_constants",
    "third_moment_extremum",
    "binary_radius", "binary_ghost", "lower_bound", "radius", "radius_details", "strip_margin",
    "log_partition_taylor", "cauchy_hadamard_radius", "prony_pair", "prony_radius", "prony_error_scale",
    "domb_sykes_pair", "taylor_truncation_error", "gelu_tanh_pole_distance",
    "logistic_radius", "logistic_inverse_curvature", "curvature_to_radius_ratio", "hessian_step_scale",
    "hessian_ratio", "hessian_crossover_margin", "crossover_margin_eq48", "linearized_curvature",
    "linearized_line_loss", "increment_bound", "top2_margin", "accuracy_floor", "linearized_accuracy",
    "perturbation_epsilon",
    "third_central_moment", "third_moment_bound", "kl_forward", "kl_reverse", "kl_small_t_ratio",
    "normalizer_branch_points", "normalization_branch_points",
]

# ----------------------------------------------------------------------------- symbols
z1, z2, a1, a2 = sp.symbols("z_1 z_2 a_1 a_2", real=True)
delta, Da = sp.symbols("delta Delta_a", real=True)
Dpos = sp.Symbol("Delta_a", positive=True)
t, u, y = sp.symbols("t u y")
k_int = sp.Symbol("k", integer=True)
# the centred moments of a normalization layer's activations along a step (see normalizer_branch_points)
norm_a, norm_c, norm_eps = sp.symbols("a c epsilon", positive=True)
norm_b = sp.Symbol("b", real=True)


# ----------------------------------------------------------------------------- binary case
@lru_cache(maxsize=None)
def binary_zeros() -> dict:
    r"""All zeros of :math:`F(t)=e^{z_1+a_1t}+e^{z_2+a_2t}` for :math:`a_1\ne a_2`.

    :math:`F(t)=0 \iff e^{(a_1-a_2)t}=-e^{z_2-z_1} \iff (a_1-a_2)t = z_2-z_1+i\pi(2k+1)`,
    :math:`k\in\mathbb Z`. Returns ``{"t_k": expr in k, "residual": F(t_k) simplified (0)}``.
    """
    tk = (z2 - z1 + sp.I * sp.pi * (2 * k_int + 1)) / (a1 - a2)
    # F(t_k) = e^{z_1+a_1t_k} (1 + e^{(z_2-z_1)+(a_2-a_1)t_k}); the bracket must vanish
    bracket = 1 + sp.exp(sp.simplify(z2 - z1 + (a2 - a1) * tk))
    return {"t_k": tk, "residual": sp.simplify(bracket)}


@lru_cache(maxsize=None)
def binary_radius_expr() -> sp.Expr:
    r""":math:`\rho^*=\min_k|t_k| = \sqrt{\delta^2+\pi^2}/\Delta a` (:math:`\delta=z_1-z_2`,
    :math:`\Delta a=|a_1-a_2|>0`): :math:`|t_k|^2=(\delta^2+\pi^2(2k+1)^2)/\Delta a^2` is minimal
    at :math:`k\in\{0,-1\}` (the conjugate pair)."""
    modulus_sq = (delta**2 + sp.pi**2 * (2 * k_int + 1) ** 2) / Dpos**2
    # (2k+1)^2 >= 1 for every integer k, with equality exactly at k = 0, -1.
    return sp.sqrt(modulus_sq.subs(k_int, 0))


@lru_cache(maxsize=None)
def binary_radius_minimum() -> dict:
    r"""Minimum of :math:`\rho^*(\delta)` over the margin: stationary at :math:`\delta=0`,
    value :math:`\pi/\Delta a`."""
    rho = binary_radius_expr()
    crit = sp.solve(sp.diff(rho, delta), delta)
    return {"argmin": crit, "minimum": sp.simplify(rho.subs(delta, crit[0]))}


@lru_cache(maxsize=None)
def binary_flip_point() -> dict:
    r"""Decision-flip point :math:`t_f` with :math:`z_1+a_1t_f=z_2+a_2t_f`, and the nearest ghost
    :math:`t_0`: :math:`\mathrm{Re}\,t_0=t_f`, :math:`\mathrm{Im}\,t_0=\pi/(a_1-a_2)`."""
    tf = sp.solve(sp.Eq(z1 + a1 * t, z2 + a2 * t), t)[0]
    t0 = binary_zeros()["t_k"].subs(k_int, 0)
    return {"flip": tf, "re_t0_minus_flip": sp.simplify(sp.re(t0) - tf),
            "im_t0": sp.simplify(sp.im(t0))}


# ----------------------------------------------------------------------------- multiclass
@lru_cache(maxsize=None)
def half_plane_lower_bound() -> dict:
    r"""Half-plane lemma, quantitative form. With :math:`t=u+iy`, :math:`\bar a=(\max a+\min a)/2`,

    .. math:: \mathrm{Re}\big(e^{-i\bar a y}F(t)\big)=\sum_k e^{z_k+a_ku}\cos((a_k-\bar a)y)
              \ge \cos(\Delta a|y|/2)\sum_k |e^{z_k+a_kt}|,

    since :math:`|a_k-\bar a|\le\Delta a/2`. For :math:`\Delta a|y|<\pi` the cosine is positive,
    so :math:`F\ne0` in the strip and :math:`\rho^*\ge\pi/\Delta a`. Returns the sympy identity
    check for one term (residual 0) and the strip half-width.
    """
    ak, abar, zk = sp.symbols("a_k abar z_k", real=True)
    uu, yy = sp.symbols("u y", real=True)
    term = sp.exp(zk + ak * (uu + sp.I * yy)) * sp.exp(-sp.I * abar * yy)
    claimed = sp.exp(zk + ak * uu) * sp.cos((ak - abar) * yy)
    residual = sp.simplify(sp.re(sp.expand_complex(term)) - claimed)
    half_width = sp.solve(sp.Eq(sp.cos(Dpos * sp.Symbol("y_", positive=True) / 2), 0),
                          sp.Symbol("y_", positive=True))[0]
    return {"term_residual": residual, "strip_half_width": half_width}


# ----------------------------------------------------------------------------- scalar logistic
@lru_cache(maxsize=None)
def logistic_scales() -> dict:
    r"""Scalar logistic loss :math:`f(x)=\log(1+e^{-x})`: singularities at :math:`x=i\pi(2k+1)`,
    Taylor radius about a real margin :math:`\delta`: :math:`\sqrt{\delta^2+\pi^2}`; curvature
    :math:`f''(x)=e^{-x}/(1+e^{-x})^2`, so :math:`1/f''(\delta)=e^{\delta}+2+e^{-\delta}`.
    Returns sympy expressions in ``delta``."""
    x = sp.Symbol("x")
    f = sp.log(1 + sp.exp(-x))
    fpp = sp.simplify(sp.diff(f, x, 2))
    sing = sp.I * sp.pi * (2 * k_int + 1)
    sing_residual = sp.simplify((1 + sp.exp(-x)).subs(x, sing))
    inv_curv = sp.simplify(sp.expand(1 / fpp.subs(x, delta)))
    return {"f": f, "fpp": fpp, "singularity": sing, "singularity_residual": sing_residual,
            "radius": sp.sqrt(delta**2 + sp.pi**2), "inv_curvature": inv_curv}


# ----------------------------------------------------------------------------- KL remainder
def kl_identities(n: int = 3) -> dict:
    r"""For :math:`p_k(t)\propto p_k e^{a_kt}` and :math:`K(t)=\log\sum_k p_ke^{a_kt}`:

    .. math:: \mathrm{KL}(p(0)\|p(t)) = K(t)-K(0)-t K'(0),\qquad
              \mathrm{KL}(p(t)\|p(0)) = t K'(t)-K(t).

    Checked symbolically for ``n`` classes; returns both residuals (0) and the residual of the
    *paper's* labelling (``K - t K'(0)`` read as ``KL(p(t)||p(0))``) evaluated at a witness
    point (non-zero). ``n``: number of classes, an integer in 2..8 (sympy's cost grows fast).
    """
    return _kl_identities(V.integer("n", n, low=2, high=8))


@lru_cache(maxsize=None)
def _kl_identities(n: int) -> dict:
    ps = sp.symbols(f"p1:{n + 1}", positive=True)
    As = sp.symbols(f"alpha1:{n + 1}", real=True)
    tt = sp.Symbol("t", real=True)
    S = sum(ps)
    M = sum(p * sp.exp(a * tt) for p, a in zip(ps, As))
    K = sp.log(M / S)
    K0p = sp.diff(K, tt).subs(tt, 0)
    pt = [p * sp.exp(a * tt) / M for p, a in zip(ps, As)]
    p0 = [p / S for p in ps]
    kl_fwd = sum(q0 * sp.log(q0 / qt) for q0, qt in zip(p0, pt))
    kl_rev = sum(qt * sp.log(qt / q0) for q0, qt in zip(p0, pt))

    def zero(e):
        return sp.simplify(sp.expand_log(sp.expand(e), force=True))

    fwd = zero(kl_fwd - (K - K.subs(tt, 0) - tt * K0p))
    rev = zero(kl_rev - (tt * sp.diff(K, tt) - K))
    # the paper's label: a numeric witness that KL(p(t)||p(0)) != K - t K'(0)
    point = {**{p: sp.Rational(i + 1, n + 1) for i, p in enumerate(ps)},
             **{a: sp.Integer(i) for i, a in enumerate(As)}, tt: sp.Integer(1)}
    mislabel = sp.N((kl_rev - (K - K.subs(tt, 0) - tt * K0p)).subs(point), 30)
    return {"forward_residual": fwd, "reverse_residual": rev, "paper_label_residual_at_witness": mislabel}


@lru_cache(maxsize=None)
def kl_remainder_constants() -> dict:
    r"""Remainder constants :math:`C` in :math:`|\mathrm{KL}-\tfrac{t^2}{2}\mathrm{Var}_p(a)|\le
    C|t|^3\Delta a^3`, from :math:`|K'''|\le\Delta a^3/(6\sqrt3)` and the integral forms

    .. math:: K(t)-t K'(0)-\tfrac{t^2}{2}K''(0)=\int_0^t(t-s)(K''(s)-K''(0))ds,\quad
              t K'(t)-K(t)-\tfrac{t^2}{2}K''(0)=\int_0^t s(K''(s)-K''(0))ds,

    with :math:`|K''(s)-K''(0)|\le|s|\max|K'''|`: forward :math:`1/(36\sqrt3)`, reverse
    :math:`1/(18\sqrt3)` (the paper's constant, valid for both; sharp only for the reverse one).
    """
    s, tt = sp.symbols("s t", positive=True)
    k3 = 1 / (6 * sp.sqrt(3))
    fwd = sp.simplify(sp.integrate((tt - s) * s, (s, 0, tt)) * k3 / tt**3)
    rev = sp.simplify(sp.integrate(s * s, (s, 0, tt)) * k3 / tt**3)
    return {"forward": fwd, "reverse": rev, "paper": 1 / (18 * sp.sqrt(3))}


@lru_cache(maxsize=None)
def third_moment_extremum() -> dict:
    r"""Sharp third-moment lemma: a random variable on an interval of length :math:`\Delta`
    has :math:`|E(X-EX)^3|\le\Delta^3/(6\sqrt3)`; the extremum is the two-point law on the
    endpoints with :math:`P=(3\pm\sqrt3)/6`, whose third central moment is
    :math:`\Delta^3p(1-p)(1-2p)`. Returns the stationary points and the maximum."""
    p = sp.Symbol("p", positive=True)
    D = sp.Symbol("Delta", positive=True)
    k3 = D**3 * p * (1 - p) * (1 - 2 * p)
    crit = sorted(sp.solve(sp.diff(k3, p), p), key=lambda e: float(e))
    value = sp.simplify(sp.Abs(k3.subs(p, crit[0])))
    return {"kappa3": k3, "argmax": crit, "max": value, "bound": D**3 / (6 * sp.sqrt(3))}


# ----------------------------------------------------------------------------- normalization layers
def normalizer_branch_points(n: int = 4) -> dict:
    r"""Branch points of a normalization layer's :math:`1/\sqrt{\mathrm{Var}(h(t))+\epsilon}` along a step.

    The pre-normalization activations of the first normalized layer are affine in the step, :math:`h(t)=h_0+t\,\dot h`
    (the fixed input times weights :math:`W+tV`, plus a bias :math:`b+tc`). Over the normalized axis (``n`` symbolic
    values here), with :math:`u=h_0-\overline{h_0}`, :math:`w=\dot h-\overline{\dot h}` and :math:`a=\overline{u^2}`,
    :math:`b=\overline{uw}`, :math:`c=\overline{w^2}`,

    .. math:: \mathrm{Var}(h(t))+\epsilon=q(t)=ct^2+2bt+a+\epsilon,\qquad
              t_\pm=\frac{-b\pm i\sqrt{c(a+\epsilon)-b^2}}{c},\qquad |t_\pm|^2=t_+t_-=\frac{a+\epsilon}{c}.

    :math:`ac-b^2=\tfrac1{2n^2}\sum_{j,k}(u_jw_k-u_kw_j)^2\ge0` (Lagrange's identity: Cauchy-Schwarz), so for
    :math:`\epsilon>0` the roots are a conjugate pair off the real axis and :math:`1/\sqrt q` has square-root branch
    points there. Every other factor of the normalized output (the centred :math:`h(t)`, the gain :math:`g+t\dot g`,
    the shift, the active ReLU piece, the read-out :math:`W+tV`) is a polynomial in :math:`t`, so the continued logits
    are sums of :math:`P(t)/\sqrt{q(t)}+R(t)` with polynomials :math:`P, R`. Along the real segment
    :math:`q=-s` (:math:`s\ge0`) only at :math:`|t|^2=(a+\epsilon+s)/c\ge|t_\pm|^2`, so the principal square root is
    analytic inside :math:`|t|<|t_\pm|`: its cut starts at the branch points.

    Returns the residuals (each 0) ``variance_residual`` (:math:`\mathrm{Var}(h_0+t\dot h)-(ct^2+2bt+a)`),
    ``lagrange_residual``, ``root_residual`` (:math:`q(t_\pm)`), ``modulus_residual`` (:math:`t_+t_--(a+\epsilon)/c`),
    and ``roots`` (:math:`t_\pm` in :data:`norm_a`, :data:`norm_b`, :data:`norm_c`, :data:`norm_eps`). ``n``: 2..6.
    """
    return _normalizer_branch_points(V.integer("n", n, low=2, high=6))


@lru_cache(maxsize=None)
def _normalizer_branch_points(n: int) -> dict:
    tt = sp.Symbol("t")
    h0, hd = sp.symbols(f"h1:{n + 1}", real=True), sp.symbols(f"d1:{n + 1}", real=True)
    u, w = [h - sum(h0) / n for h in h0], [d - sum(hd) / n for d in hd]
    a_, b_, c_ = (sum(x * y for x, y in zip(p, q)) / n for p, q in ((u, u), (u, w), (w, w)))
    h = [x + tt * d for x, d in zip(h0, hd)]
    var = sum((x - sum(h) / n) ** 2 for x in h) / n
    variance_residual = sp.expand(var - (c_ * tt**2 + 2 * b_ * tt + a_))
    lagrange = sp.expand(a_ * c_ - b_**2 - sum((u[j] * w[k] - u[k] * w[j]) ** 2 for j in range(n) for k in range(n))
                         / (2 * n**2))
    q = norm_c * tt**2 + 2 * norm_b * tt + norm_a + norm_eps
    disc = norm_c * (norm_a + norm_eps) - norm_b**2
    roots = [(-norm_b + sgn * sp.I * sp.sqrt(disc)) / norm_c for sgn in (1, -1)]
    return {"variance_residual": variance_residual, "lagrange_residual": lagrange,
            "root_residual": [sp.simplify(sp.expand(q.subs(tt, r))) for r in roots],
            "modulus_residual": sp.simplify(sp.expand(roots[0] * roots[1]) - (norm_a + norm_eps) / norm_c),
            "roots": roots, "solved": sp.solve(q, tt)}


# ============================================================================= numerics
def _reals(name: str, x, **kw) -> np.ndarray:
    """A finite float64 array (any shape, at least one value)."""
    return V.array(name, x, **kw)


def _pair(z, a) -> tuple[np.ndarray, np.ndarray]:
    """Logits ``z`` and slopes ``a`` of one sample: two finite 1-d arrays of one length >= 1."""
    zz = _reals("z", z, ndim=1)
    aa = _reals("a", a, ndim=1)
    if aa.shape != zz.shape:
        raise ValueError(f"a: expected the shape of z {zz.shape}, got {aa.shape}")
    return zz, aa


def _broadcast(names: tuple[str, ...], *arrays: np.ndarray) -> tuple[np.ndarray, ...]:
    try:
        return np.broadcast_arrays(*arrays)
    except ValueError:
        shapes = ", ".join(f"{n} {x.shape}" for n, x in zip(names, arrays))
        raise ValueError(f"{'/'.join(names)}: shapes do not broadcast ({shapes})") from None


def _classes(name: str, x: np.ndarray) -> None:
    """At least two classes along the last axis: a one-class softmax is constant, and a trailing axis
    of length 1 is far more often a misplaced batch axis than a one-class problem."""
    if x.shape[-1] < 2:
        raise ValueError(f"{name}: expected shape (..., n_classes) with n_classes >= 2 along the last axis, "
                         f"got shape {x.shape}")


def _scalar_or_array(x: np.ndarray):
    return float(x) if x.ndim == 0 else x


def binary_radius(delta, delta_a):
    r"""Exact binary radius :math:`\rho^*=\sqrt{\delta^2+\pi^2}/|\Delta a|` (broadcasting).

    ``delta``: logit gap :math:`z_1-z_2`; ``delta_a``: :math:`a_1-a_2` (sign irrelevant).
    :math:`\Delta a=0` means :math:`F` never vanishes: returns ``inf`` there.
    """
    d, da = _broadcast(("delta", "delta_a"), _reals("delta", delta), np.abs(_reals("delta_a", delta_a)))
    with np.errstate(divide="ignore"):
        out = np.where(da > 0, np.sqrt(d**2 + np.pi**2) / np.where(da > 0, da, 1.0), np.inf)
    return _scalar_or_array(out)


def binary_ghost(delta, delta_a):
    r"""The nearest binary ghost in the upper half-plane, :math:`t_0=-\delta/\Delta a+i\pi/|\Delta a|`.

    From :math:`t_k=(-\delta+i\pi(2k+1))/\Delta a` (:func:`binary_zeros`): the branch with
    :math:`|2k+1|=1` and positive imaginary part. Its real part is the decision-flip point
    (where :math:`z_1+a_1t=z_2+a_2t`), its height :math:`\pi/|\Delta a|`. ``delta_a`` must be non-zero
    (for :math:`\Delta a=0`, :math:`F` has no zero). Returns a complex number or array.
    """
    d, da = _broadcast(("delta", "delta_a"), _reals("delta", delta), _reals("delta_a", delta_a))
    if not np.all(da != 0):
        raise ValueError("delta_a: expected non-zero slope differences (F has no zero when delta_a = 0), got 0")
    out = -d / da + 1j * np.pi / np.abs(da)
    return complex(out) if out.ndim == 0 else out


def lower_bound(a):
    r""":math:`\rho_a=\pi/(\max_k a_k-\min_k a_k)` along the last axis (classes), batched over
    leading axes (samples). ``inf`` where all :math:`a_k` coincide. The data-set radius is the
    minimum over samples (the bottleneck sample)."""
    arr = _reals("a", a)
    if arr.ndim == 0:
        raise ValueError(f"a: expected shape (..., n_classes), got a scalar {float(arr)}")
    _classes("a", arr)
    spread = arr.max(axis=-1) - arr.min(axis=-1)
    with np.errstate(divide="ignore"):
        out = np.where(spread > 0, np.pi / np.where(spread > 0, spread, 1.0), np.inf)
    return _scalar_or_array(out)


# --- scaled partition function G(s)=sum_k exp(c_k + b_k s), b in [-1/2, 1/2] ---------------
def _log_terms(c: np.ndarray, b: np.ndarray, s: np.ndarray) -> np.ndarray:
    return c[None, :] + b[None, :] * s[:, None]


def _G_scaled(c, b, s):
    """(G / m, G' / m, sum|terms| / m) with m = max |term|, at complex points s (1-d)."""
    lt = _log_terms(c, b, s)
    m = lt.real.max(axis=1, keepdims=True)
    e = np.exp(lt - m)
    return e.sum(axis=1), (e * b[None, :]).sum(axis=1), np.abs(e).sum(axis=1)


def _newton(c, b, s0: np.ndarray, iters: int = 60) -> tuple[np.ndarray, np.ndarray]:
    s = s0.astype(complex).copy()
    for _ in range(iters):
        g, gp, _ = _G_scaled(c, b, s)
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            step = np.where(np.abs(gp) > 0, g / np.where(np.abs(gp) > 0, gp, 1.0), 0.0)
            big = np.abs(step) > 2.0  # damp wild jumps far from any zero
            step = np.where(big, 2.0 * step / np.where(big, np.abs(step), 1.0), step)
        s = np.where(np.isfinite(s - step), s - step, s0)
    g, _, tot = _G_scaled(c, b, s)
    return s, np.abs(g) / tot


def _winding(c, b, R: float, m_min: int = 4096, m_max: int = 1 << 20) -> tuple[int, int]:
    """Number of zeros of G in |s| < R by the argument principle (phase unwrapped on a circle).

    The sampling doubles until every phase increment is below pi/4, so the winding number is
    unambiguous. Returns (count, samples used); count = -1 if sampling never resolved.
    """
    m = m_min
    while m <= m_max:
        theta = 2 * np.pi * np.arange(m) / m
        s = R * np.exp(1j * theta)
        g, _, _ = _G_scaled(c, b, s)
        ph = np.angle(np.append(g, g[0]))
        d = np.diff(ph)
        d = (d + np.pi) % (2 * np.pi) - np.pi
        if np.max(np.abs(d)) < np.pi / 4:
            return int(round(d.sum() / (2 * np.pi))), m
        m *= 2
    return -1, m


def radius_details(z, a) -> dict:
    r"""Exact linearized radius :math:`\rho^*=\min\{|t|:\sum_k e^{z_k+a_kt}=0\}` for one sample,
    with its certificate.

    Method: centre and scale :math:`s=\Delta a\,t`, :math:`b_k=(a_k-\bar a)/\Delta a\in[-\tfrac12,
    \tfrac12]` (multiplying :math:`F` by :math:`e^{-\bar a t}` moves no zero). Newton's method is
    seeded at every pairwise binary ghost :math:`s=(z_j-z_k+i\pi(2m+1))/(b_k-b_j)`; the nearest
    converged zero :math:`s^*` is certified by the argument principle: the number of zeros in
    :math:`|s|<(1+\epsilon)|s^*|` must equal the number of converged zeros found there, and no zero
    lies in :math:`|s|<(1-\epsilon)|s^*|` (:math:`\epsilon=10^{-3}`). If the certificate fails,
    bisection on the zero count locates the true nearest modulus and Newton is re-seeded on that
    circle. ``z``, ``a``: 1-d arrays of one length (logits and slopes of one sample).
    Returns ``{"radius", "zero" (t, Im>0), "residual", "certified", "count_inside", "count_outer"}``.
    """
    zz, aa = _pair(z, a)
    spread = aa.max() - aa.min()
    if not spread > 0:
        return {"radius": math.inf, "zero": complex(math.nan, math.nan), "residual": 0.0,
                "certified": True, "count_inside": 0, "count_outer": 0}
    c = zz - zz.max()
    b = (aa - 0.5 * (aa.max() + aa.min())) / spread
    # binary ghost seeds for every pair with distinct slopes, the three lowest branches
    jj, kk = np.triu_indices(c.size, 1)
    keep = np.abs(b[kk] - b[jj]) > 1e-14
    jj, kk = jj[keep], kk[keep]
    seeds = np.concatenate([(c[jj] - c[kk] + 1j * np.pi * (2 * m + 1)) / (b[kk] - b[jj]) for m in (0, 1, 2)])
    seeds = np.where(seeds.imag < 0, seeds.conj(), seeds)
    roots, res = _newton(c, b, seeds)
    good = (res < 1e-10) & (np.abs(roots.imag) > 1e-9)
    eps = 1e-3
    s_best = None
    if good.any():
        cand = roots[good]
        s_best = cand[np.argmin(np.abs(cand))]
    for _ in range(4):
        if s_best is None:
            break
        R = abs(s_best)
        found = roots[good]
        found = np.concatenate([found, found.conj()])
        # distinct zeros (conjugates included) within the outer circle
        inside = np.sort_complex(found[np.abs(found) < (1 + eps) * R])
        distinct = [] if inside.size == 0 else [inside[0]]
        for w in inside[1:]:
            if min(abs(w - d) for d in distinct) > 1e-7 * max(1.0, R):
                distinct.append(w)
        n_in, _ = _winding(c, b, (1 - eps) * R)
        n_out, _ = _winding(c, b, (1 + eps) * R)
        if n_in == 0 and n_out == len(distinct):
            s_best = complex(s_best.real, abs(s_best.imag))
            _, r_fin = _newton(c, b, np.array([s_best]), iters=2)
            return {"radius": abs(s_best) / spread, "zero": s_best / spread + 0.0j,
                    "residual": float(r_fin[0]), "certified": True,
                    "count_inside": n_in, "count_outer": n_out}
        # certificate failed: bisect on the zero count between pi (zero-free) and R
        lo, hi = np.pi, (1 - eps) * R if n_in > 0 else (1 + eps) * R
        for _ in range(40):
            mid = 0.5 * (lo + hi)
            cnt, _ = _winding(c, b, mid)
            lo, hi = (lo, mid) if cnt > 0 else (mid, hi)
            if hi - lo < 1e-4 * hi:
                break
        ring = hi * np.exp(1j * np.linspace(0, np.pi, 721))
        r2, res2 = _newton(c, b, ring)
        ok = (res2 < 1e-10) & (np.abs(r2.imag) > 1e-9)
        if not ok.any():
            break
        roots = np.concatenate([roots, r2])
        good = np.concatenate([good, ok])
        cand = roots[good]
        s_best = cand[np.argmin(np.abs(cand))]
    return {"radius": math.nan, "zero": complex(math.nan, math.nan), "residual": math.nan,
            "certified": False, "count_inside": -1, "count_outer": -1}


def radius(z, a):
    r"""Exact linearized Taylor radius :math:`\rho^*` (see :func:`radius_details`).

    ``z``, ``a``: logits and directional derivatives, shape ``(n,)`` or batched ``(m, n)``;
    returns a float or an ``(m,)`` array. ``inf`` where :math:`\Delta a=0`; ``nan`` only if the
    argument-principle certificate could not be established (never observed in tests).
    """
    zz = _reals("z", z, ndim=(1, 2))
    aa = _reals("a", a, ndim=(1, 2))
    if zz.shape != aa.shape:
        raise ValueError(f"a: expected the shape of z {zz.shape}, got {aa.shape}")
    if zz.ndim == 1:
        return radius_details(zz, aa)["radius"]
    return np.array([radius_details(zi, ai)["radius"] for zi, ai in zip(zz, aa)])


def strip_margin(z, a, t):
    r""":math:`|F(t)|/\sum_k|e^{z_k+a_kt}|` at complex points ``t`` (any shape). The half-plane
    lemma says this is at least :math:`\cos(\Delta a|\mathrm{Im}\,t|/2)`."""
    zz, aa = _pair(z, a)
    if isinstance(t, (str, bytes)) or t is None:
        raise TypeError(f"t: expected complex numbers, got {type(t).__name__}")
    try:
        tt = np.asarray(t, dtype=complex)
    except (TypeError, ValueError):
        raise TypeError(f"t: expected complex numbers, got {type(t).__name__}") from None
    if tt.size == 0 or not np.all(np.isfinite(tt)):
        raise ValueError(f"t: expected at least one finite complex value, got shape {tt.shape}")
    flat = tt.reshape(-1)
    lt = zz[None, :] + aa[None, :] * flat[:, None]
    e = np.exp(lt - lt.real.max(axis=1, keepdims=True))
    return (np.abs(e.sum(axis=1)) / np.abs(e).sum(axis=1)).reshape(tt.shape)


# --- Taylor coefficients and singularity estimates ----------------------------------------
def log_partition_taylor(z, a, order) -> np.ndarray:
    r"""Taylor coefficients :math:`c_0..c_N` of :math:`\log F(t)` about 0 (``order`` = N).

    With :math:`p=\mathrm{softmax}(z)` and :math:`\mu_n=\sum_kp_ka_k^n/n!`,
    :math:`\log F=\log F(0)+\log M` where :math:`M=\sum\mu_nt^n`; from :math:`M K'=M'`:
    :math:`c_n=\mu_n-\frac1n\sum_{j=1}^{n-1}jc_j\mu_{n-j}`. Computed for centred, scaled slopes
    (so the recursion runs on :math:`O(1)` numbers) and rescaled at the end. Pure float64.
    """
    zz, aa = _pair(z, a)
    order = V.integer("order", order, low=1, high=5000)
    p = np.exp(zz - zz.max())
    logF0 = zz.max() + np.log(p.sum())
    p = p / p.sum()
    centre = 0.5 * (aa.max() + aa.min())
    scale = max(aa.max() - aa.min(), 1e-300)
    b = (aa - centre) / scale
    mu = np.empty(order + 1)
    pw = p.copy()
    fact = 1.0
    mu[0] = 1.0
    for n in range(1, order + 1):
        pw = pw * b
        fact *= n
        mu[n] = pw.sum() / fact
    c = np.zeros(order + 1)
    for n in range(1, order + 1):
        j = np.arange(1, n)
        c[n] = mu[n] - (j * c[1:n] * mu[n - j]).sum() / n
    # undo the scaling s = scale*t and the centring term centre*t
    out = c * scale ** np.arange(order + 1)
    out[0] = logF0
    out[1] += centre
    return out


def _coeffs(coeffs, least: int) -> np.ndarray:
    c = _reals("coeffs", coeffs, ndim=1)
    if c.size < least:
        raise ValueError(f"coeffs: expected at least {least} Taylor coefficients, got {c.size}")
    return c


def cauchy_hadamard_radius(coeffs, n_min=None) -> float:
    r"""Cauchy–Hadamard estimate :math:`1/\limsup_n|c_n|^{1/n}` from finitely many coefficients,
    normalised for a conjugate pair of simple logarithmic branch points (the structure of
    :math:`\log F` at simple zeros, where :math:`c_n\approx-2\rho^{-n}\cos(n\theta)/n`):

    .. math:: \hat\rho=\min_{n_{\min}\le n\le N}\big(n|c_n|/2\big)^{-1/n}.

    The finite-:math:`N` error is :math:`O(|\log\max_n|\cos n\theta||/N)` (about 1 % at N = 100-200).
    ``n_min`` defaults to N // 2.
    """
    c = _coeffs(coeffs, 5)
    N = c.size - 1
    n_min = N // 2 if n_min is None else V.integer("n_min", n_min, low=1, high=N)
    n = np.arange(n_min, N + 1)
    mag = n * np.abs(c[n_min:]) / 2
    with np.errstate(divide="ignore"):
        est = np.where(mag > 0, mag ** (-1.0 / n), np.inf)
    return float(est.min())


def prony_pair(coeffs, n_min=None) -> complex:
    r"""The nearest conjugate pair of singularities :math:`t_0,\bar t_0` from a Prony fit; returns
    :math:`t_0` with :math:`\mathrm{Im}\,t_0\ge0` (``nan`` if the fit finds no conjugate pair).

    Each simple zero :math:`t_j` of :math:`F` adds :math:`\log(1-t/t_j)` to :math:`\log F`, so
    :math:`u_n=nc_n\approx-(\lambda^n+\bar\lambda^n)` with :math:`\lambda=1/t_0` once the nearest
    pair dominates, and :math:`u_{n+2}=2\mathrm{Re}(\lambda)u_{n+1}-|\lambda|^2u_n`. A least-squares
    fit of the two recurrence coefficients over :math:`n\ge n_{\min}` (default N // 2) gives
    :math:`\mathrm{Re}\,t_0=\mathrm{Re}\lambda/|\lambda|^2` and :math:`|t_0|=1/|\lambda|`. The error
    decays like :math:`(|t_0|/|t_1|)^{n_{\min}}` (:math:`t_1` the next pair), much faster than the
    root test of :func:`cauchy_hadamard_radius`.
    """
    c = _coeffs(coeffs, 7)
    N = c.size - 1
    n_min = N // 2 if n_min is None else V.integer("n_min", n_min, low=1, high=N - 3)
    n = np.arange(n_min, N + 1)
    # rescale so the geometric decay does not underflow the least squares
    rough = cauchy_hadamard_radius(c, n_min)
    if not math.isfinite(rough):
        return complex(math.nan, math.nan)
    un = n * c[n_min:] * rough ** n
    A = np.stack([un[1:-1], un[:-2]], axis=1)
    (two_re, minus_mod2), *_ = np.linalg.lstsq(A, un[2:], rcond=None)
    re_lam, mod2 = 0.5 * two_re / rough, -minus_mod2 / rough**2
    if not (mod2 > 0 and mod2 >= re_lam**2):
        return complex(math.nan, math.nan)
    return complex(re_lam / mod2, math.sqrt(mod2 - re_lam**2) / mod2)


def gelu_tanh_pole_distance(x0):
    r"""Distance from a real point :math:`x_0` to the nearest pole of the tanh-approximate GELU
    :math:`\tfrac x2(1+\tanh u)`, :math:`u(x)=\sqrt{2/\pi}(x+0.044715x^3)`: the poles are the roots of
    :math:`u(x)=i\pi(k+\tfrac12)` (where :math:`\cosh u=0`), three per integer :math:`k` (NumPy's roots of the cubic;
    :math:`|k|\le4` suffices, farther ones lie farther out for :math:`|x_0|\le10`). The exact GELU
    :math:`x\Phi(x)` is entire: it has none."""
    x = _reals("x0", x0, low=-10.0, high=10.0)
    c = math.sqrt(2 / math.pi)
    poles = np.concatenate([np.roots([0.044715, 0.0, 1.0, -1j * math.pi * (k + 0.5) / c]) for k in range(-5, 5)])
    return _scalar_or_array(np.min(np.abs(poles[None, :] - np.atleast_1d(x)[:, None]), axis=1).reshape(np.shape(x)))


def prony_radius(coeffs, n_min=None) -> float:
    r"""Modulus :math:`|t_0|` of the nearest conjugate pair of singularities (:func:`prony_pair`)."""
    return abs(prony_pair(coeffs, n_min))


def domb_sykes_pair(coeffs, n_min=None) -> float:
    r"""Radius of convergence from the Domb–Sykes ratio method generalized to a conjugate pair of
    singularities (Mercer–Roberts): with

    .. math:: B_n^2=\frac{c_{n+1}c_{n-1}-c_n^2}{c_nc_{n-2}-c_{n-1}^2},

    :math:`B_n=\rho^{-1}(1+\beta/n+O(n^{-2}))` for singularities :math:`t_0,\bar t_0` of algebraic or
    logarithmic type, so a straight-line fit of :math:`B_n` against :math:`1/n` over
    :math:`n_{\min}\le n<N` (default N // 2), extrapolated to :math:`1/n\to0`, gives :math:`1/\rho`.
    A ratio method: it uses neither the coefficients' magnitudes (root test) nor a fitted recurrence
    (:func:`prony_pair`). Orders where :math:`B_n^2\le0` (a cancellation of the oscillating terms) are
    skipped; ``nan`` if fewer than three remain.
    """
    c = _coeffs(coeffs, 8)
    N = c.size - 1
    n_min = max(N // 2, 3) if n_min is None else V.integer("n_min", n_min, low=3, high=N - 3)
    rough = cauchy_hadamard_radius(c, max(n_min - 2, 1))
    if not math.isfinite(rough):
        return math.nan
    cs = c * rough ** np.arange(N + 1)  # O(1) numbers: the 2x2 determinants do not underflow
    n = np.arange(n_min, N)
    num = cs[n + 1] * cs[n - 1] - cs[n] ** 2
    den = cs[n] * cs[n - 2] - cs[n - 1] ** 2
    with np.errstate(divide="ignore", invalid="ignore"):
        b2 = num / den
    keep = np.isfinite(b2) & (b2 > 0)
    if keep.sum() < 3:
        return math.nan
    slope, intercept = np.polyfit(1.0 / n[keep], np.sqrt(b2[keep]), 1)
    return float(rough / intercept) if intercept > 0 else math.nan


def prony_error_scale(delta, order):
    r"""Asymptotic relative error scale of :func:`prony_pair` on a binary line loss:
    :math:`(\rho_1/\rho_2)^{N/2}` with :math:`\rho_m=\sqrt{\delta^2+(2m-1)^2\pi^2}` (the first two
    ghost pairs, in units of :math:`1/|\Delta a|`), N = ``order`` and the fit starting at N/2."""
    d = _reals("delta", delta)
    order = V.integer("order", order, low=6)
    out = (np.sqrt(d**2 + np.pi**2) / np.sqrt(d**2 + 9 * np.pi**2)) ** (order / 2)
    return _scalar_or_array(out)


def taylor_truncation_error(coeffs, t, values) -> np.ndarray:
    r""":math:`|\ell(t)-\sum_{k\le n}c_kt^k|` for every order :math:`n=0..N` (columns) and every real
    distance ``t`` (rows), given the exact values :math:`\ell(t)` (``values``, one per ``t``)."""
    c = _coeffs(coeffs, 2)
    tt = _reals("t", t, ndim=1)
    vals = _reals("values", values, shape=tt.shape)
    partial = np.cumsum(c[None, :] * tt[:, None] ** np.arange(c.size)[None, :], axis=1)
    return np.abs(vals[:, None] - partial)


# --- scalar logistic ------------------------------------------------------------------------
def logistic_radius(delta):
    r"""Taylor radius of :math:`f(x)=\log(1+e^{-x})` about a real margin :math:`\delta`:
    :math:`\sqrt{\delta^2+\pi^2}` (nearest singularities :math:`\pm i\pi`)."""
    d = _reals("delta", delta)
    return _scalar_or_array(np.sqrt(d**2 + np.pi**2))


def logistic_inverse_curvature(delta):
    r""":math:`1/f''(\delta)=e^\delta+2+e^{-\delta}` for :math:`f(x)=\log(1+e^{-x})`
    (:math:`|\delta|\le700` so it stays finite in float64)."""
    d = _reals("delta", delta, low=-700.0, high=700.0)
    return _scalar_or_array(np.exp(d) + 2.0 + np.exp(-d))


def curvature_to_radius_ratio(delta, curvature_factor=1.0):
    r"""The curvature step scale over the Taylor radius, :math:`(c/f''(\delta))/\sqrt{\delta^2+\pi^2}`,
    with ``curvature_factor`` :math:`c` (1 for :math:`1/f''`, 2 for the GD stability edge :math:`2/f''`)."""
    c = V.real("curvature_factor", curvature_factor, low=0.0, low_open=True)
    return _scalar_or_array(c * np.asarray(logistic_inverse_curvature(delta)) / np.asarray(logistic_radius(delta)))


def hessian_step_scale(delta, delta_a=1.0):
    r"""The paper's Hessian step scale along a direction, :math:`\tau_H=2/\kappa` with
    :math:`\kappa=v^\top Hv=f''(\delta)\Delta^2` (App. 5 eqs. (30), (43); binary curvature eq. (46)
    :math:`\ell''(0)=\sigma(\delta)(1-\sigma(\delta))\Delta^2_{y,c}`):
    :math:`\tau_H=2(e^\delta+2+e^{-\delta})/\Delta^2` (``delta_a`` :math:`\Delta\ne0`)."""
    da = _reals("delta_a", delta_a)
    if np.any(da == 0):
        raise ValueError("delta_a: the logit-derivative gap must be non-zero (a zero gap has no curvature)")
    return _scalar_or_array(2.0 * np.asarray(logistic_inverse_curvature(delta)) / da**2)


def hessian_ratio(delta, delta_a=1.0, against: str = "radius"):
    r""":math:`\tau_H/\rho` for the binary line loss at margin :math:`\delta` and gap :math:`\Delta`:
    against the Taylor radius :math:`\rho^*=\sqrt{\delta^2+\pi^2}/|\Delta|` (``"radius"``, Fig. 13's comparison)
    or against :math:`\rho_a=\pi/|\Delta|` (``"rho_a"``, §8.5's), i.e.
    :math:`2(e^\delta+2+e^{-\delta})/(|\Delta|\sqrt{\delta^2+\pi^2})` or :math:`2(e^\delta+2+e^{-\delta})/(\pi|\Delta|)`.
    For large :math:`\delta` the latter is the paper's eq. (47), :math:`\approx2e^\delta/(\pi|\Delta|)`."""
    V.choice("against", against, ("radius", "rho_a"))
    da = np.abs(_reals("delta_a", delta_a))
    rho = np.asarray(binary_radius(delta, da)) if against == "radius" else np.pi / da
    return _scalar_or_array(np.asarray(hessian_step_scale(delta, da)) / rho)


def hessian_crossover_margin(delta_a):
    r"""The margin where the binary line loss's Hessian step scale meets the ghost scale, :math:`\tau_H=\rho_a`:
    with :math:`\tau_H=2(e^\delta+2+e^{-\delta})/\Delta^2` and :math:`\rho_a=\pi/|\Delta|`,
    :math:`4\cosh^2(\delta/2)=\pi|\Delta|/2`, so :math:`\delta^*=2\,\mathrm{arccosh}\sqrt{\pi|\Delta|/8}`
    (:math:`\delta\ge0`). Past it :math:`\tau_H>\rho_a` (the ghost binds). NaN where :math:`\pi|\Delta|<8`: there
    :math:`\tau_H/\rho_a\ge8/(\pi|\Delta|)>1` at every margin and no crossover exists."""
    da = np.abs(_reals("delta_a", delta_a))
    q = np.pi * da / 8.0
    with np.errstate(invalid="ignore"):
        return _scalar_or_array(np.where(q >= 1.0, 2.0 * np.arccosh(np.sqrt(np.maximum(q, 1.0))), np.nan))


def crossover_margin_eq48(delta_a):
    r"""The paper's approximate crossover margin, eq. (48): :math:`\delta^*\approx\ln(\pi|\Delta|/2)` (from eq. (47),
    :math:`1/f''\approx e^\delta`). It exceeds the exact :math:`\delta^*` of :func:`hessian_crossover_margin` by
    :math:`2/Q+O(Q^{-2})`, :math:`Q=\pi|\Delta|/2`."""
    da = np.abs(_reals("delta_a", delta_a))
    if np.any(da == 0):
        raise ValueError("delta_a: the logit-derivative gap must be non-zero (eq. (48) takes its logarithm)")
    return _scalar_or_array(np.log(np.pi * da / 2.0))


def linearized_curvature(z, a):
    r"""Directional curvature :math:`\kappa=v^\top Hv` of the mean cross-entropy when the logits move linearly,
    :math:`z_i(t)=z_i+ta_i` (exact for softmax regression): the second derivative of
    :math:`\log\sum_ke^{z_{ik}+ta_{ik}}` at 0 is the variance of :math:`a_i` under :math:`p_i=\mathrm{softmax}(z_i)`,
    so :math:`\kappa=\frac1N\sum_i\big(\mathbb E_{p_i}a_i^2-(\mathbb E_{p_i}a_i)^2\big)` (the label term is linear
    in t). ``z``: ``(N, n)``; ``a``: ``(N, n)`` or ``(D, N, n)``. Returns a float or ``(D,)``."""
    zz = _reals("z", z, ndim=2)
    zz, aa, _ = _logits_slopes_labels(zz, a, np.zeros(zz.shape[0], dtype=np.int64))
    p = np.exp(zz - _logsumexp(zz, axis=1)[:, None])
    mean = np.sum(p * aa, axis=-1)
    var = np.sum(p * (aa - mean[..., None]) ** 2, axis=-1)  # centred: no cancellation when Var << E a²
    return _scalar_or_array(var.mean(axis=-1))


# --- the linearized line loss -------------------------------------------------------------
def _logsumexp(x: np.ndarray, axis: int) -> np.ndarray:
    m = x.max(axis=axis, keepdims=True)
    return (m + np.log(np.exp(x - m).sum(axis=axis, keepdims=True))).squeeze(axis)


def _logits_slopes_labels(z, a, y) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    zz = _reals("z", z, ndim=2)
    aa = _reals("a", a, ndim=(2, 3))
    if aa.shape[-2:] != zz.shape:
        raise ValueError(f"z, a: expected a of shape (..., {zz.shape[0]}, {zz.shape[1]}) like z, got {aa.shape}")
    yy = V.array("y", y, ndim=1, low=0, high=zz.shape[1] - 1, dtype=np.int64)
    V.one_per_row("y", yy, "z", zz.shape[0])
    if not np.array_equal(yy, np.asarray(y)):
        raise ValueError("y: expected integer class labels")
    return zz, aa, yy


def linearized_line_loss(z, a, y, t) -> np.ndarray:
    r"""Mean cross-entropy along the line under logit linearization,
    :math:`\bar\ell(t)=\frac1N\sum_i\big(\log\sum_ke^{z_{ik}+a_{ik}t}-z_{iy_i}-a_{iy_i}t\big)`.

    ``z``: logits ``(N, n)``; ``a``: slopes ``(N, n)`` or ``(D, N, n)`` (D directions); ``y``: labels
    ``(N,)``; ``t``: distances ``(R,)``. Returns ``(R,)`` or ``(D, R)``. Exact for models whose
    logits are linear in the parameters (softmax regression).
    """
    zz, aa, yy = _logits_slopes_labels(z, a, y)
    tt = _reals("t", t, ndim=1)
    rows = np.arange(zz.shape[0])
    zt = zz[..., None] + aa[..., None] * tt  # (..., N, n, R)
    ce = _logsumexp(zt, axis=-2) - zt[..., rows, yy, :]
    return ce.mean(axis=-2)


def increment_bound(a, y):
    r"""Slope bound of the linearized mean loss: :math:`\bar\ell(t)-\bar\ell(0)\le Bt` for
    :math:`t\ge0`, with

    .. math:: B=\frac1N\sum_i\big(\max_ka_{ik}-a_{iy_i}\big)\ \le\ \max_i\Delta a_i=\pi/\rho_a,

    because :math:`\ell_i'(t)=\mathbb E_{p_i(t)}[a_i]-a_{iy_i}\le\max_ka_{ik}-a_{iy_i}`. Hence a step
    of normalized length :math:`r=t/\rho_a` raises the linearized loss by at most :math:`Bt\le\pi r`
    nats. ``a``: ``(N, n)`` or ``(D, N, n)``; ``y``: ``(N,)``; returns a float or ``(D,)``.
    """
    aa = _reals("a", a, ndim=(2, 3))
    _classes("a", aa)
    _, aa, yy = _logits_slopes_labels(np.zeros(aa.shape[-2:]), aa, y)
    rows = np.arange(aa.shape[-2])
    return _scalar_or_array((aa.max(axis=-1) - aa[..., rows, yy]).mean(axis=-1))


def top2_margin(z, y) -> np.ndarray:
    r"""Per sample the logit margin of the labelled class over the best other one,
    :math:`m_i=z_{iy_i}-\max_{k\ne y_i}z_{ik}` (> 0 exactly when the sample is classified correctly, ties
    aside). ``z``: ``(N, n)``; ``y``: ``(N,)``."""
    zz, _, yy = _logits_slopes_labels(z, np.zeros(np.shape(z)), y)
    rows = np.arange(zz.shape[0])
    other = zz.copy()
    other[rows, yy] = -np.inf
    return zz[rows, yy] - other.max(axis=1)


def accuracy_floor(z, a, y, t) -> np.ndarray:
    r"""A floor on the accuracy after a step of length ``t`` under logit linearization: the fraction of samples
    classified correctly at :math:`t=0` whose margin exceeds their slope spread times the step,
    :math:`m_i>\Delta a_i\,t` with :math:`\Delta a_i=\max_ka_{ik}-\min_ka_{ik}`.

    Such a sample cannot flip: :math:`(z_{iy}+a_{iy}t)-(z_{ik}+a_{ik}t)\ge m_i-(a_{ik}-a_{iy})t\ge m_i-\Delta a_it>0`
    for every :math:`k\ne y`. For the samples that set :math:`\rho_a` (:math:`\Delta a_i\le\pi/\rho_a`) the
    condition at :math:`t=r\rho_a` is implied by :math:`m_i>\pi r`. ``z``: ``(N, n)``; ``a``: ``(N, n)`` or
    ``(D, N, n)``; ``y``: ``(N,)``; ``t``: ``(R,)`` or ``(D, R)`` (one row of distances per direction). Returns
    ``(R,)`` or ``(D, R)``."""
    zz, aa, yy = _logits_slopes_labels(z, a, y)
    tt = _reals("t", t, ndim=(1, 2))
    m = top2_margin(zz, yy)
    spread = aa.max(axis=-1) - aa.min(axis=-1)  # (..., N)
    if tt.ndim == 2 and (aa.ndim != 3 or tt.shape[0] != aa.shape[0]):
        raise ValueError(f"t: a 2-d t needs one row per direction of a (D = {aa.shape[0] if aa.ndim == 3 else 1})")
    tb = tt[..., None, :] if tt.ndim == 2 else tt
    keep = (m > 0)[:, None] & (m[:, None] > spread[..., :, None] * tb)  # (..., N, R)
    return keep.mean(axis=-2)


def linearized_accuracy(z, a, y, t) -> np.ndarray:
    r"""Accuracy of the linearized logits :math:`z_i+a_it` (arg-max against the label) for every distance; shapes
    as in :func:`accuracy_floor`. The exact prediction of the linearization, which the floor bounds from below."""
    zz, aa, yy = _logits_slopes_labels(z, a, y)
    tt = _reals("t", t, ndim=(1, 2))
    if tt.ndim == 2 and (aa.ndim != 3 or tt.shape[0] != aa.shape[0]):
        raise ValueError(f"t: a 2-d t needs one row per direction of a (D = {aa.shape[0] if aa.ndim == 3 else 1})")
    tb = tt[..., None, None, :] if tt.ndim == 2 else tt
    zt = zz[..., None] + aa[..., None] * tb  # (..., N, n, R)
    return (np.argmax(zt, axis=-2) == yy[:, None]).mean(axis=-2)


def perturbation_epsilon(z, a, c2) -> np.ndarray:
    r"""The paper's linearization-quality parameter (Prop. App. 1.1), per sample:
    :math:`\varepsilon_i=C_i\pi^2/(2\Delta a_i^2\min_kw_{ik})` with :math:`C_i=\max_k|z_{ik}''|` (``c2``: the second
    directional derivatives of the logits, ``(N, n)``), :math:`\Delta a_i=\max_ka_{ik}-\min_ka_{ik}` and the
    partition weights normalized to sum to one, :math:`w_{ik}=\operatorname{softmax}(z_i)_k` (the zeros of
    :math:`F` do not depend on the weights' scale; the paper leaves it unnamed, and this one is the largest
    :math:`\min_kw_k` any normalization with :math:`\sum_kw_k\le1` gives). For :math:`\varepsilon_i<1` the
    proposition states :math:`\rho_{\rm true}\ge\rho_{a,i}(1-\varepsilon_i)`. Returns ``(N,)`` (inf where
    :math:`\Delta a_i=0`)."""
    zz = _reals("z", z, ndim=2)
    zz, aa, _ = _logits_slopes_labels(zz, a, np.zeros(zz.shape[0], dtype=np.int64))
    cc = _reals("c2", c2)
    if cc.shape != zz.shape:
        raise ValueError(f"c2: expected shape {zz.shape} like z, got {cc.shape}")
    logw = zz - _logsumexp(zz, axis=1)[:, None]
    da = aa.max(axis=1) - aa.min(axis=1)
    C = np.abs(cc).max(axis=1)
    with np.errstate(divide="ignore", over="ignore"):
        return np.where(da > 0, C * np.pi**2 / (2 * np.where(da > 0, da, 1.0) ** 2) * np.exp(-logw.min(axis=1)), np.inf)


# --- normalization layers -------------------------------------------------------------------
def _axes(axis, ndim: int) -> tuple[int, ...]:
    """Distinct axes of an ``ndim``-dimensional array (an integer or a tuple of integers, negative ones counted from
    the end), as non-negative integers in increasing order."""
    raw = axis if isinstance(axis, (tuple, list)) else (axis,)
    if not raw:
        raise ValueError("axis: expected at least one axis to normalize over, got ()")
    out = []
    for ax in raw:
        if isinstance(ax, (bool, np.bool_)) or not isinstance(ax, (int, np.integer)):
            raise TypeError(f"axis: expected an integer or a tuple of integers, got {type(ax).__name__} {ax!r:.40}")
        if not -ndim <= int(ax) < ndim:
            raise ValueError(f"axis: expected axes in [{-ndim}, {ndim - 1}] for h0 of {ndim} dimension(s), got {ax}")
        out.append(int(ax) % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"axis: expected distinct axes, got {tuple(raw)}")
    return tuple(sorted(out))


def normalization_branch_points(h0, hd, axis, eps):
    r"""The branch points :math:`t_\pm` of a normalization layer's :math:`1/\sqrt{\mathrm{Var}(h_0+t\dot h)+\epsilon}`
    in the complex step plane, one conjugate pair per normalized group (:func:`normalizer_branch_points`):

    .. math:: t_\pm=\frac{-b\pm i\sqrt{c(a+\epsilon)-b^2}}{c},\qquad |t_\pm|=\sqrt{(a+\epsilon)/c},

    with :math:`a`, :math:`b`, :math:`c` the biased (population) variance of ``h0``, covariance of ``h0`` and ``hd``,
    and variance of ``hd`` over ``axis`` (the normalized axes: the features of a layer norm, the batch and the pixels
    of a batch norm). The discriminant is computed as :math:`c(\overline{r^2}+\epsilon)` with
    :math:`r=u-(b/c)w` the part of the centred ``h0`` that the centred ``hd`` does not explain
    (:math:`\overline{r^2}=a-b^2/c`, no cancellation when ``h0`` and ``hd`` are nearly parallel).

    ``h0``, ``hd``: real arrays of one shape, the activations before the normalization at :math:`t=0` and their
    derivative along the step; ``axis``: an integer or a tuple of integers; ``eps``: :math:`\epsilon\ge0`. Returns
    complex :math:`(t_+, t_-)`, :math:`\mathrm{Im}\,t_+\ge0`, on a last axis of length 2 after the axes of ``h0``
    not in ``axis``; ``inf`` where ``hd`` is constant over a group (:math:`c=0`: no branch point).
    """
    u = _reals("h0", h0)
    w = _reals("hd", hd)
    if w.shape != u.shape:
        # paired value by value: either may be the wrong one
        raise ValueError(f"h0, hd: expected arrays of one shape, got {u.shape} and {w.shape}")
    axes = _axes(axis, u.ndim)
    eps = V.real("eps", eps, low=0.0)
    u = u - u.mean(axis=axes, keepdims=True)
    w = w - w.mean(axis=axes, keepdims=True)
    b = (u * w).mean(axis=axes, keepdims=True)
    c = (w * w).mean(axis=axes, keepdims=True)
    moving = c > 0
    safe = np.where(moving, c, 1.0)
    rest = ((u - (b / safe) * w) ** 2).mean(axis=axes)
    b, c, safe, moving = (x.squeeze(axis=axes) for x in (b, c, safe, moving))
    re, im = -b / safe, np.sqrt(c * (rest + eps)) / safe
    return np.where(moving[..., None], np.stack([re + 1j * im, re - 1j * im], axis=-1), complex(np.inf, 0.0))


# --- KL and moments (numeric) --------------------------------------------------------------
def third_central_moment(p, x) -> np.ndarray:
    """:math:`E(X-EX)^3` for non-negative weights ``p`` (last axis, normalised here) on support ``x``
    (a scalar, or the same last-axis length as ``p``; leading axes broadcast)."""
    pp = _reals("p", p, low=0.0)
    xx = _reals("x", x)
    if pp.ndim == 0:
        raise ValueError("p: expected weights along a last axis, got a scalar")
    # Leading axes broadcast (batches of distributions); the last axis is the support and must agree
    # exactly, or a misplaced axis would silently pair every weight with every support point.
    if xx.ndim and xx.shape[-1] != pp.shape[-1]:
        raise ValueError(f"p, x: expected the same last-axis length (one weight per support point), "
                         f"got p {pp.shape} and x {xx.shape}")
    pp, xx = _broadcast(("p", "x"), pp, xx)
    total = pp.sum(axis=-1, keepdims=True)
    if not np.all(total > 0):
        raise ValueError("p: every set of weights needs a positive sum, got one that sums to 0")
    pp = pp / total
    m = (pp * xx).sum(axis=-1, keepdims=True)
    return _scalar_or_array((pp * (xx - m) ** 3).sum(axis=-1))


def third_moment_bound(width):
    r"""Sharp bound :math:`|E(X-EX)^3|\le\Delta^3/(6\sqrt3)` for a variable on an interval of
    length :math:`\Delta` = ``width`` (see :func:`third_moment_extremum`)."""
    w = _reals("width", width, low=0.0)
    return _scalar_or_array(w**3 / (6.0 * math.sqrt(3.0)))


def _probabilities(p, a) -> tuple[np.ndarray, np.ndarray]:
    pp = _reals("p", p, ndim=1, low=0.0)
    if not abs(pp.sum() - 1.0) <= 1e-9 * pp.size:
        raise ValueError(f"p: expected probabilities summing to 1, got sum {pp.sum():.12g}")
    aa = _reals("a", a, ndim=1)
    if aa.shape != pp.shape:
        raise ValueError(f"a: expected the shape of p {pp.shape}, got {aa.shape}")
    return pp, aa


def _tilted_pair(p, a, t) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Validated :math:`p(0)`, its tilt :math:`p(t)\propto p e^{at}`, and the support mask.

    Classes with :math:`p_k=0` stay at 0 under tilting; they are kept out of the logarithms.
    """
    pp, aa = _probabilities(p, a)
    tt = V.real("t", t)
    support = pp > 0
    lq = np.log(pp[support]) + aa[support] * tt
    lq = lq - lq.max()
    q = np.zeros_like(pp)
    q[support] = np.exp(lq) / np.exp(lq).sum()
    return pp, q, support


def kl_forward(p, a, t) -> float:
    r""":math:`\mathrm{KL}(p(0)\|p(t))` for the tilted family :math:`p_k(t)\propto p_ke^{a_kt}`.

    ``p``: a probability vector (zeros allowed: a class with :math:`p_k=0` has :math:`p_k(t)=0`
    and contributes its limit :math:`0\log0=0`); ``a``: slopes of the same length; ``t``: real.
    """
    pp, q, s = _tilted_pair(p, a, t)
    return float(np.sum(pp[s] * (np.log(pp[s]) - np.log(q[s]))))


def kl_reverse(p, a, t) -> float:
    r""":math:`\mathrm{KL}(p(t)\|p(0))` (zero probabilities as in :func:`kl_forward`)."""
    pp, q, s = _tilted_pair(p, a, t)
    return float(np.sum(q[s] * (np.log(q[s]) - np.log(pp[s]))))


def kl_small_t_ratio(p, a, direction: str) -> float:
    r"""The limit :math:`\lim_{t\to0}|\mathrm{KL}-\tfrac{t^2}{2}\mathrm{Var}_p(a)|/(|t|^3\Delta a^3)`.

    With :math:`K` the cumulant generating function of :math:`a` under :math:`p` and
    :math:`\kappa_3=K'''(0)` the third central moment,
    :math:`\mathrm{KL}(p(0)\|p(t))=K(t)-K(0)-tK'(0)=\tfrac{t^2}{2}\kappa_2+\tfrac{t^3}{6}\kappa_3+O(t^4)` and
    :math:`\mathrm{KL}(p(t)\|p(0))=tK'(t)-K(t)+K(0)=\tfrac{t^2}{2}\kappa_2+\tfrac{t^3}{3}\kappa_3+O(t^4)`,
    so the ratio tends to :math:`|\kappa_3|/(6\Delta a^3)` (``direction="forward"``) or
    :math:`|\kappa_3|/(3\Delta a^3)` (``"reverse"``). With the sharp :math:`|\kappa_3|\le\Delta a^3/(6\sqrt3)`
    these are the constants of :func:`kl_remainder_constants`. The next term is
    :math:`\kappa_4t/24` (forward) or :math:`\kappa_4t/8` (reverse) over :math:`\Delta a^3`, with
    :math:`|\kappa_4|\le\Delta a^4/8` on an interval.
    """
    pp, aa = _probabilities(p, a)
    V.choice("direction", direction, ("forward", "reverse"))
    spread = aa.max() - aa.min()
    if not spread > 0:
        raise ValueError("a: expected at least two distinct slopes (the ratio is 0/0 otherwise)")
    k3 = abs(float(third_central_moment(pp, aa)))
    return k3 / ((6.0 if direction == "forward" else 3.0) * spread**3)
