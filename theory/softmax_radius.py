r"""The Taylor radius of cross-entropy along a step: complex zeros ("ghosts") of the softmax
partition function (Sao 2026, "Ghosts of Softmax").

Setting. Logits :math:`z\in\mathbb R^n`, a step :math:`\theta(\tau)=\theta_0+\tau v`, directional
logit derivatives :math:`a=J_z v`. Under logit linearization :math:`z_k(\tau)=z_k+a_k\tau` the
line loss is :math:`\ell(\tau)=-z_y-a_y\tau+\log F(\tau)` with

.. math:: F(\tau)=\sum_k e^{z_k+a_k\tau}.

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

Symbolic functions return sympy objects; numeric helpers (:func:`binary_radius`,
:func:`lower_bound`, :func:`radius`, :func:`log_partition_taylor`, :func:`cauchy_hadamard_radius`,
:func:`prony_radius`) use NumPy only. No JAX, no I/O.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import sympy as sp

__all__ = [
    "binary_zeros", "binary_radius_expr", "binary_radius_minimum", "binary_flip_point",
    "half_plane_lower_bound", "logistic_scales", "kl_identities", "kl_remainder_constants",
    "third_moment_extremum",
    "binary_radius", "lower_bound", "radius", "radius_details", "strip_margin",
    "log_partition_taylor", "cauchy_hadamard_radius", "prony_radius",
    "third_central_moment", "kl_forward", "kl_reverse",
]

# ----------------------------------------------------------------------------- symbols
z1, z2, a1, a2 = sp.symbols("z_1 z_2 a_1 a_2", real=True)
delta, Da = sp.symbols("delta Delta_a", real=True)
Dpos = sp.Symbol("Delta_a", positive=True)
t, u, y = sp.symbols("t u y")
k_int = sp.Symbol("k", integer=True)


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
@lru_cache(maxsize=None)
def kl_identities(n: int = 3) -> dict:
    r"""For :math:`p_k(\tau)\propto p_k e^{a_k\tau}` and :math:`K(\tau)=\log\sum_k p_ke^{a_k\tau}`:

    .. math:: \mathrm{KL}(p(0)\|p(\tau)) = K(\tau)-K(0)-\tau K'(0),\qquad
              \mathrm{KL}(p(\tau)\|p(0)) = \tau K'(\tau)-K(\tau).

    Checked symbolically for ``n`` classes; returns both residuals (0) and the residual of the
    *paper's* labelling (``K - tau K'(0)`` read as ``KL(p(tau)||p(0))``) evaluated at a witness
    point (non-zero).
    """
    ps = sp.symbols(f"p1:{n + 1}", positive=True)
    As = sp.symbols(f"alpha1:{n + 1}", real=True)
    tau = sp.Symbol("tau", real=True)
    S = sum(ps)
    M = sum(p * sp.exp(a * tau) for p, a in zip(ps, As))
    K = sp.log(M / S)
    K0p = sp.diff(K, tau).subs(tau, 0)
    pt = [p * sp.exp(a * tau) / M for p, a in zip(ps, As)]
    p0 = [p / S for p in ps]
    kl_fwd = sum(q0 * sp.log(q0 / qt) for q0, qt in zip(p0, pt))
    kl_rev = sum(qt * sp.log(qt / q0) for q0, qt in zip(p0, pt))

    def zero(e):
        return sp.simplify(sp.expand_log(sp.expand(e), force=True))

    fwd = zero(kl_fwd - (K - K.subs(tau, 0) - tau * K0p))
    rev = zero(kl_rev - (tau * sp.diff(K, tau) - K))
    # the paper's label: a numeric witness that KL(p(tau)||p(0)) != K - tau K'(0)
    point = {**{p: sp.Rational(i + 1, n + 1) for i, p in enumerate(ps)},
             **{a: sp.Integer(i) for i, a in enumerate(As)}, tau: sp.Integer(1)}
    mislabel = sp.N((kl_rev - (K - K.subs(tau, 0) - tau * K0p)).subs(point), 30)
    return {"forward_residual": fwd, "reverse_residual": rev, "paper_label_residual_at_witness": mislabel}


@lru_cache(maxsize=None)
def kl_remainder_constants() -> dict:
    r"""Remainder constants :math:`C` in :math:`|\mathrm{KL}-\tfrac{\tau^2}{2}\mathrm{Var}_p(a)|\le
    C|\tau|^3\Delta a^3`, from :math:`|K'''|\le\Delta a^3/(6\sqrt3)` and the integral forms

    .. math:: K(\tau)-\tau K'(0)-\tfrac{\tau^2}{2}K''(0)=\int_0^\tau(\tau-s)(K''(s)-K''(0))ds,\quad
              \tau K'(\tau)-K(\tau)-\tfrac{\tau^2}{2}K''(0)=\int_0^\tau s(K''(s)-K''(0))ds,

    with :math:`|K''(s)-K''(0)|\le|s|\max|K'''|`: forward :math:`1/(36\sqrt3)`, reverse
    :math:`1/(18\sqrt3)` (the paper's constant, valid for both; sharp only for the reverse one).
    """
    s, tau = sp.symbols("s tau", positive=True)
    k3 = 1 / (6 * sp.sqrt(3))
    fwd = sp.simplify(sp.integrate((tau - s) * s, (s, 0, tau)) * k3 / tau**3)
    rev = sp.simplify(sp.integrate(s * s, (s, 0, tau)) * k3 / tau**3)
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


# ============================================================================= numerics
def _as_float_array(x, name: str) -> np.ndarray:
    try:
        arr = np.asarray(x, dtype=float)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name}: expected real numbers, got {type(x).__name__}") from exc
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name}: expected finite values, got {arr[~np.isfinite(arr)][:3]} among them")
    return arr


def binary_radius(delta, delta_a):
    r"""Exact binary radius :math:`\rho^*=\sqrt{\delta^2+\pi^2}/|\Delta a|` (broadcasting).

    ``delta``: logit gap :math:`z_1-z_2`; ``delta_a``: :math:`a_1-a_2` (sign irrelevant).
    :math:`\Delta a=0` means :math:`F` never vanishes: returns ``inf``.
    """
    d = _as_float_array(delta, "delta")
    da = np.abs(_as_float_array(delta_a, "delta_a"))
    with np.errstate(divide="ignore"):
        out = np.where(da > 0, np.sqrt(d**2 + np.pi**2) / np.where(da > 0, da, 1.0), np.inf)
    return out if out.ndim else float(out)


def lower_bound(a):
    r""":math:`\rho_a=\pi/(\max_k a_k-\min_k a_k)` along the last axis (classes), batched over
    leading axes (samples). ``inf`` where all :math:`a_k` coincide. The data-set radius is the
    minimum over samples (the bottleneck sample)."""
    arr = _as_float_array(a, "a")
    if arr.ndim == 0 or arr.shape[-1] < 1:
        raise ValueError(f"a: expected shape (..., n_classes) with n_classes >= 1, got shape {arr.shape}")
    spread = arr.max(axis=-1) - arr.min(axis=-1)
    with np.errstate(divide="ignore"):
        out = np.where(spread > 0, np.pi / np.where(spread > 0, spread, 1.0), np.inf)
    return out if out.ndim else float(out)


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
    :math:`|s|<(1+\eta)|s^*|` must equal the number of converged zeros found there, and no zero
    lies in :math:`|s|<(1-\eta)|s^*|`. If the certificate fails, bisection on the zero count
    locates the true nearest modulus and Newton is re-seeded on that circle.
    Returns ``{"radius", "zero" (t, Im>0), "residual", "certified", "count_inside", "count_outer"}``.
    """
    zz = _as_float_array(z, "z")
    aa = _as_float_array(a, "a")
    if zz.ndim != 1 or aa.shape != zz.shape or zz.size < 1:
        raise ValueError(f"z, a: expected two 1-d arrays of equal length >= 1, got shapes {zz.shape} and {aa.shape}")
    spread = aa.max() - aa.min()
    if not spread > 0:
        return {"radius": math.inf, "zero": complex(math.nan, math.nan), "residual": 0.0,
                "certified": True, "count_inside": 0, "count_outer": 0}
    c = zz - zz.max()
    b = (aa - 0.5 * (aa.max() + aa.min())) / spread
    # binary ghost seeds for every pair with distinct slopes, the two lowest branches
    jj, kk = np.triu_indices(c.size, 1)
    keep = np.abs(b[kk] - b[jj]) > 1e-14
    jj, kk = jj[keep], kk[keep]
    seeds = []
    for m in (0, 1, 2):
        seeds.append((c[jj] - c[kk] + 1j * np.pi * (2 * m + 1)) / (b[kk] - b[jj]))
    seeds = np.concatenate(seeds)
    seeds = np.where(seeds.imag < 0, seeds.conj(), seeds)
    roots, res = _newton(c, b, seeds)
    good = (res < 1e-10) & (np.abs(roots.imag) > 1e-9)
    eta = 1e-3
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
        inside = np.sort_complex(found[np.abs(found) < (1 + eta) * R])
        distinct = [] if inside.size == 0 else [inside[0]]
        for w in inside[1:]:
            if min(abs(w - d) for d in distinct) > 1e-7 * max(1.0, R):
                distinct.append(w)
        n_in, _ = _winding(c, b, (1 - eta) * R)
        n_out, _ = _winding(c, b, (1 + eta) * R)
        if n_in == 0 and n_out == len(distinct):
            s_best = complex(s_best.real, abs(s_best.imag))
            _, r_fin = _newton(c, b, np.array([s_best]), iters=2)
            return {"radius": abs(s_best) / spread, "zero": s_best / spread + 0.0j,
                    "residual": float(r_fin[0]), "certified": True,
                    "count_inside": n_in, "count_outer": n_out}
        # certificate failed: bisect on the zero count between pi (zero-free) and R
        lo, hi = np.pi, (1 - eta) * R if n_in > 0 else (1 + eta) * R
        for _ in range(40):
            mid = 0.5 * (lo + hi)
            cnt, _ = _winding(c, b, mid)
            lo, hi = (lo, mid) if cnt > 0 else (mid, hi)
            if hi - lo < 1e-4 * hi:
                break
        theta = np.linspace(0, np.pi, 721)
        ring = hi * np.exp(1j * theta)
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
    zz = _as_float_array(z, "z")
    aa = _as_float_array(a, "a")
    if zz.shape != aa.shape:
        raise ValueError(f"z, a: shapes must match, got {zz.shape} and {aa.shape}")
    if zz.ndim == 1:
        return radius_details(zz, aa)["radius"]
    if zz.ndim != 2:
        raise ValueError(f"z: expected shape (n,) or (m, n), got {zz.shape}")
    return np.array([radius_details(zi, ai)["radius"] for zi, ai in zip(zz, aa)])


def strip_margin(z, a, t):
    r""":math:`|F(t)|/\sum_k|e^{z_k+a_kt}|` at complex points ``t`` (any shape). The half-plane
    lemma says this is at least :math:`\cos(\Delta a|\mathrm{Im}\,t|/2)`."""
    zz = _as_float_array(z, "z")
    aa = _as_float_array(a, "a")
    if zz.ndim != 1 or zz.shape != aa.shape:
        raise ValueError(f"z, a: expected two 1-d arrays of equal length, got {zz.shape} and {aa.shape}")
    tt = np.asarray(t, dtype=complex)
    flat = tt.reshape(-1)
    lt = zz[None, :] + aa[None, :] * flat[:, None]
    e = np.exp(lt - lt.real.max(axis=1, keepdims=True))
    return (np.abs(e.sum(axis=1)) / np.abs(e).sum(axis=1)).reshape(tt.shape)


# --- Taylor coefficients and singularity estimates ----------------------------------------
def log_partition_taylor(z, a, order: int) -> np.ndarray:
    r"""Taylor coefficients :math:`c_0..c_N` of :math:`\log F(t)` about 0 (``order`` = N).

    With :math:`p=\mathrm{softmax}(z)` and :math:`\mu_n=\sum_kp_ka_k^n/n!`,
    :math:`\log F=\log F(0)+\log M` where :math:`M=\sum\mu_nt^n`; from :math:`M K'=M'`:
    :math:`c_n=\mu_n-\frac1n\sum_{j=1}^{n-1}jc_j\mu_{n-j}`. Computed for centred, scaled slopes
    (so the recursion runs on :math:`O(1)` numbers) and rescaled at the end. Pure float64.
    """
    zz = _as_float_array(z, "z")
    aa = _as_float_array(a, "a")
    if zz.ndim != 1 or zz.shape != aa.shape:
        raise ValueError(f"z, a: expected two 1-d arrays of equal length, got {zz.shape} and {aa.shape}")
    if not isinstance(order, (int, np.integer)) or isinstance(order, bool) or order < 1:
        raise ValueError(f"order: expected a positive integer, got {order!r}")
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


def cauchy_hadamard_radius(coeffs, n_min: int | None = None) -> float:
    r"""Cauchy–Hadamard estimate :math:`1/\limsup_n|c_n|^{1/n}` from finitely many coefficients,
    normalised for a conjugate pair of simple logarithmic branch points (the structure of
    :math:`\log F` at simple zeros, where :math:`c_n\approx-2\rho^{-n}\cos(n\theta)/n`):

    .. math:: \hat\rho=\min_{n_{\min}\le n\le N}\big(n|c_n|/2\big)^{-1/n}.

    The finite-:math:`N` error is :math:`O(|\log\max_n|\cos n\theta||/N)` (≈1 % at N≈100-200).
    """
    c = np.asarray(coeffs, dtype=float)
    N = c.size - 1
    if N < 4:
        raise ValueError(f"coeffs: expected at least 5 Taylor coefficients, got {c.size}")
    n_min = N // 2 if n_min is None else int(n_min)
    if not 1 <= n_min <= N:
        raise ValueError(f"n_min: expected 1 <= n_min <= {N}, got {n_min}")
    n = np.arange(n_min, N + 1)
    mag = n * np.abs(c[n_min:]) / 2
    with np.errstate(divide="ignore"):
        est = np.where(mag > 0, mag ** (-1.0 / n), np.inf)
    return float(est.min())


def prony_radius(coeffs, n_min: int | None = None) -> float:
    r"""Modulus of the nearest conjugate pair of singularities from a Prony fit.

    If :math:`u_n=nc_n\approx A\lambda^n+\bar A\bar\lambda^n` (:math:`\lambda=1/t_0`), then
    :math:`u_{n+2}=2\mathrm{Re}(\lambda)u_{n+1}-|\lambda|^2u_n`; a least-squares fit of the two
    recurrence coefficients over :math:`n\ge n_{\min}` gives :math:`\rho=|\lambda|^{-1}`. The error
    decays like :math:`(\rho/\rho_2)^{n}` (next singularity), much faster than the root test.
    """
    c = np.asarray(coeffs, dtype=float)
    N = c.size - 1
    if N < 6:
        raise ValueError(f"coeffs: expected at least 7 Taylor coefficients, got {c.size}")
    n_min = N // 2 if n_min is None else int(n_min)
    if not 1 <= n_min <= N - 3:
        raise ValueError(f"n_min: expected 1 <= n_min <= {N - 3}, got {n_min}")
    n = np.arange(n_min, N + 1)
    un = n * c[n_min:]
    # rescale so the geometric decay does not underflow the least squares
    rough = cauchy_hadamard_radius(c, n_min)
    un = un * rough ** n
    A = np.stack([un[1:-1], un[:-2]], axis=1)
    rhs = un[2:]
    (two_re, minus_mod2), *_ = np.linalg.lstsq(A, rhs, rcond=None)
    mod2 = -minus_mod2
    if not mod2 > 0:
        return math.nan
    return float(rough / math.sqrt(mod2))


# --- KL and moments (numeric) --------------------------------------------------------------
def third_central_moment(p, x) -> np.ndarray:
    """:math:`E(X-EX)^3` for weights ``p`` (last axis, normalised here) on support ``x``."""
    pp = _as_float_array(p, "p")
    xx = _as_float_array(x, "x")
    if np.any(pp < 0):
        raise ValueError("p: expected non-negative weights")
    pp = pp / pp.sum(axis=-1, keepdims=True)
    m = (pp * xx).sum(axis=-1, keepdims=True)
    return (pp * (xx - m) ** 3).sum(axis=-1)


def _tilt(p, a, tau):
    lp = np.log(p) + a * tau
    lp = lp - lp.max()
    q = np.exp(lp)
    return q / q.sum()


def _tilted_pair(p, a, tau) -> tuple[np.ndarray, np.ndarray]:
    r"""Validated, normalized :math:`p(0)` and its tilt :math:`p(\tau)`."""
    p = _as_float_array(p, "p")
    p = p / p.sum()
    return p, _tilt(p, _as_float_array(a, "a"), float(tau))


def kl_forward(p, a, tau) -> float:
    r""":math:`\mathrm{KL}(p(0)\|p(\tau))` for the tilted family :math:`p_k(\tau)\propto p_ke^{a_k\tau}`."""
    p, q = _tilted_pair(p, a, tau)
    return float(np.sum(p * (np.log(p) - np.log(q))))


def kl_reverse(p, a, tau) -> float:
    r""":math:`\mathrm{KL}(p(\tau)\|p(0))`."""
    p, q = _tilted_pair(p, a, tau)
    return float(np.sum(q * (np.log(q) - np.log(p))))
