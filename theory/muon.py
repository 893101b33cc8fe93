r"""Closed forms for Muon with decoupled weight decay: the spectral ball, Newton--Schulz's band, mode arrival times.

**The ball.** One step is :math:`W^+ = (1-\eta\lambda)W - \eta O` with :math:`\|O\|_{op} = 1` for the exact polar
factor, so for :math:`\eta\lambda \le 1` the triangle inequality gives
:math:`\|W^+\|_{op} \le (1-\eta\lambda)\|W\|_{op} + \eta`: the ball :math:`\|W\|_{op} \le 1/\lambda` is invariant and the
excess outside it contracts by :math:`1-\eta\lambda` per step (:func:`ball_radius`, :func:`excess_factor`). When every
singular mode of the target lies outside the ball and :math:`W_0 = 0`, all iterates stay in the target's singular
basis and every mode follows the scalar recursion :math:`w^+ = (1-\eta\lambda)w + \eta`, solved with sympy:
:math:`\lambda w_t = 1 - (1-\eta\lambda)^t` (:func:`aligned_norm`). For :math:`1 < \eta\lambda < 2` that overshoots the
ball at odd steps (the largest at :math:`t = 1`: :math:`\lambda w_1 = \eta\lambda`), so the ball is invariant exactly
for :math:`\eta\lambda \le 1` (:func:`sup_from_zero`); past :math:`\eta\lambda = 2` the excess grows.

**Newton--Schulz.** The public reference code replaces :math:`UV^\top` by :math:`k` steps of the odd quintic
:math:`p(s) = as + bs^3 + cs^5`, :math:`(a, b, c) =` :data:`NS5`, on the singular values of :math:`M/\|M\|_F`
(:func:`ns_map`); its outputs lie in a band around 1 (:func:`ns_band`), whose top :math:`c_{\max} > 1` replaces
:math:`\|O\|_{op} = 1` in the argument above. In the aligned setting with heavy-ball momentum :math:`\beta` each
mode follows :math:`m_i^+ = \beta m_i + (w_i - s_i)`, :math:`w_i^+ = (1-\eta\lambda)w_i + \eta\,p^{\circ k}(|m_i|/\|m\|)`
exactly (:func:`aligned_recursion`, a NumPy loop), which settles where it settles: the measured radius.

**Mode arrivals.** Without decay or momentum, from :math:`W_0 = 0`, exact-polar Muon on
:math:`\tfrac12\|W - Y\|_F^2` moves every mode by :math:`\eta` per step, :math:`W_t = t\eta\,UV^\top`, so mode
:math:`i` arrives (:math:`|w_i - s_i| \le \eta/2`) at the first :math:`t \ge s_i/\eta - 1/2`
(:func:`single_matrix_arrival`). On the factorization :math:`W_2W_1` both factors grow by :math:`\eta` per step once
aligned, so the product's modes grow together as :math:`(\eta t)^2` and mode :math:`i` reaches a fraction
:math:`\phi` of :math:`s_i` at :math:`t_i \approx \sqrt{\phi s_i}/\eta` (:func:`factorization_arrival`): equal rates,
the smallest mode first. Gradient descent from a small balanced start :math:`\alpha` learns mode :math:`i` at
:math:`t_i = \ln\big(\tfrac{\phi}{1-\phi}\cdot\tfrac{s_i-\alpha^2}{\alpha^2}\big)/(2\eta s_i)`, the largest first
(:func:`gd_factorization_arrival`, the rival). Pure maths: no JAX, no I/O.
"""
from __future__ import annotations

import functools

import numpy as np
import sympy as sp
from scipy import optimize

from theory import validate as V

__all__ = ["NS5", "S", "ETA", "LAM", "T", "ns_poly_expr", "ns_map", "ns_band", "ball_radius", "excess_factor",
           "aligned_norm_expr", "aligned_norm", "sup_from_zero", "aligned_recursion", "single_matrix_arrival",
           "factorization_arrival", "gd_factorization_arrival", "balanced_sharpness_expr", "gd_threshold"]

#: :math:`(a, b, c)` of the quintic Newton--Schulz step in the public Muon reference code (KellerJordan/Muon)
NS5 = (3.4445, -4.7750, 2.0315)

S = sp.Symbol("s", real=True)
ETA, LAM = sp.symbols("eta lambda", positive=True)
T = sp.Symbol("t", integer=True, nonnegative=True)


def ns_poly_expr(coeffs=NS5) -> sp.Expr:
    r"""The scalar Newton--Schulz map :math:`p(s) = as + bs^3 + cs^5` that one step applies to each singular value."""
    a, b, c = (sp.Float(float(x), 17) for x in V.array("coeffs", coeffs, shape=(3,)))
    return a * S + b * S**3 + c * S**5


@functools.cache
def _poly_fn():
    return sp.lambdify(S, ns_poly_expr(), "numpy")


def ns_map(x, steps: int = 5) -> np.ndarray:
    r""":math:`p^{\circ k}(x)`: ``steps`` Newton--Schulz steps applied to normalized singular values ``x`` in [0, 1].

    Args:
      x: a number or an array of values in :math:`[0, 1]` (singular values of :math:`M/\|M\|_F`).
      steps: :math:`k`, an integer >= 0.
    """
    y = np.asarray(V.array("x", x, ndim=(0, 1), low=0.0), dtype=float)
    if np.any(y > 1.0):
        raise ValueError(f"x: expected values in [0, 1] (singular values of M / |M|_F), got max {y.max()!r}")
    k = V.integer("steps", steps, low=0, high=10_000)
    f = _poly_fn()
    for _ in range(k):
        y = f(y)
    return np.asarray(y, dtype=float)


def ns_band(steps: int = 5, low: float = 1e-3) -> tuple[float, float]:
    r"""The band :math:`[\min, \max]` of :math:`p^{\circ k}` over :math:`s \in [\mathrm{low}, 1]`.

    The maximum is refined from a 200 001-point grid by a bounded scalar search around the best grid point (the
    map is smooth; the grid alone is within about 1e-9 for :math:`k \le 8`), the minimum is the grid's (it sits at
    ``low`` or at a local minimum resolved to the same order).
    """
    k = V.integer("steps", steps, low=1, high=64)
    lo = V.real("low", low, low=0.0, high=1.0, low_open=True)
    s = np.linspace(lo, 1.0, 200_001)
    y = ns_map(s, k)
    i = int(np.argmax(y))
    a, b = s[max(i - 1, 0)], s[min(i + 1, s.size - 1)]
    res = optimize.minimize_scalar(lambda z: -float(ns_map(np.clip(z, lo, 1.0), k)), bounds=(a, b),
                                   method="bounded", options={"xatol": 1e-14})
    return float(y.min()), float(max(y[i], -res.fun))


def ball_radius(eta, lam) -> float:
    r"""The invariant spectral ball's radius :math:`1/\lambda`, valid for :math:`0 < \eta\lambda \le 1` (else ValueError)."""
    e = V.real("eta", eta, low=0.0, low_open=True)
    w = V.real("lam", lam, low=0.0, low_open=True)
    if e * w > 1.0:
        raise ValueError(f"eta: the ball is invariant only for eta * lam <= 1, got eta * lam = {e * w!r}")
    return 1.0 / w


def excess_factor(eta, lam) -> np.ndarray:
    r"""The per-step factor :math:`|1 - \eta\lambda|` of the excess :math:`\|W\|_{op} - 1/\lambda` of an aligned mode."""
    e = V.array("eta", eta, ndim=(0, 1), low=0.0, low_open=True)
    w = V.real("lam", lam, low=0.0, low_open=True)
    return np.abs(1.0 - np.asarray(e, float) * w)


def aligned_norm_expr() -> sp.Expr:
    r""":math:`w_t` solving :math:`w_{t+1} = (1-\eta\lambda)w_t + \eta`, :math:`w_0 = 0` (sympy's ``rsolve``)."""
    w = sp.Function("w")
    sol = sp.rsolve(w(T + 1) - (1 - ETA * LAM) * w(T) - ETA, w(T), {w(0): 0})
    return sp.simplify(sol)


@functools.cache
def _aligned_fn():
    return sp.lambdify((ETA, LAM, T), aligned_norm_expr(), "numpy")


def aligned_norm(eta, lam, t) -> np.ndarray:
    r""":math:`w_t = (1 - (1-\eta\lambda)^t)/\lambda`: every singular value of :math:`W_t` from 0, all modes outside the ball.

    Args:
      eta: a positive step size or an (m,) array.
      lam: the decay :math:`\lambda > 0`.
      t: the step, an integer >= 0.
    """
    e = np.asarray(V.array("eta", eta, ndim=(0, 1), low=0.0, low_open=True), float)
    w = V.real("lam", lam, low=0.0, low_open=True)
    k = V.integer("t", t, low=0)
    return np.asarray(_aligned_fn()(e, w, k), dtype=float) * np.ones_like(e)


def sup_from_zero(eta, lam, n_steps: int) -> np.ndarray:
    r""":math:`\max_{1\le t\le T}\lambda w_t` for the aligned run from 0: :math:`1-(1-\eta\lambda)^T` when
    :math:`\eta\lambda \le 1`, else the largest odd-step overshoot (:math:`\eta\lambda` at :math:`t = 1` for
    :math:`\eta\lambda < 2`).

    Args:
      eta: a positive step size or an (m,) array; lam: :math:`\lambda > 0`; n_steps: :math:`T \ge 1`.
    """
    e = np.atleast_1d(np.asarray(V.array("eta", eta, ndim=(0, 1), low=0.0, low_open=True), float))
    w = V.real("lam", lam, low=0.0, low_open=True)
    n = V.integer("n_steps", n_steps, low=1, high=10_000_000)
    q = 1.0 - e * w
    # the largest of 1 - q^t over t = 1..T: t = T for q >= 0 (1 - q^t rises); for q < 0 an odd t, where q^t < 0 is
    # largest in size: t = 1 while |q| <= 1, the last odd t <= T beyond
    odd = n if n % 2 else n - 1
    t_neg = np.where(np.abs(q) <= 1.0, 1, odd)
    return np.where(q >= 0, 1.0 - q**n, 1.0 - q**t_neg)


def aligned_recursion(s, eta, lam, *, momentum: float = 0.0, steps=None, n_steps: int = 1000) -> np.ndarray:
    r"""The aligned runs' singular values :math:`w_i(t)`, :math:`t = 1..T`, as a scalar NumPy loop over the modes.

    From :math:`W_0 = 0` and :math:`M_0 = 0` with :math:`Y = U\mathrm{diag}(s)V^\top`, every iterate is
    :math:`U\mathrm{diag}(w)V^\top` and the momentum :math:`U\mathrm{diag}(m)V^\top`:
    :math:`m^+ = \beta m + (w - s)`, :math:`w^+ = (1-\eta\lambda)w - \eta\,\mathrm{sign}(m^+)\,g(|m^+|)` with
    :math:`g = 1` (exact polar, ``steps=None``) or :math:`g(x) = p^{\circ k}(x/\|m^+\|_2)` (``steps = k``).

    Args:
      s: the target's singular values (r,), positive.
      eta: a positive step size; lam: the decay :math:`\lambda \ge 0`; momentum: :math:`\beta \in [0, 1)`.
      steps: None (exact polar) or the Newton--Schulz steps :math:`k \ge 0`.
      n_steps: :math:`T \ge 1`.

    Returns:
      (T, r): :math:`w_i` after each step.
    """
    sv = np.asarray(V.array("s", s, ndim=1, low=0.0, low_open=True), float)
    e = V.real("eta", eta, low=0.0, low_open=True)
    w_ = V.real("lam", lam, low=0.0)
    beta = V.real("momentum", momentum, low=0.0, high=1.0)
    if beta == 1.0:
        raise ValueError("momentum: expected a value in [0, 1), got 1.0")
    k = None if steps is None else V.integer("steps", steps, low=0, high=10_000)
    n = V.integer("n_steps", n_steps, low=1, high=1_000_000)
    f = _poly_fn()
    w, m = np.zeros_like(sv), np.zeros_like(sv)
    out = np.empty((n, sv.size))
    for t in range(n):
        m = beta * m + (w - sv)
        if k is None:
            g = np.sign(m)
        else:
            x = np.abs(m) / np.linalg.norm(m)
            for _ in range(k):
                x = f(x)
            g = np.sign(m) * x
        w = (1.0 - e * w_) * w - e * g
        out[t] = w
    return out


def single_matrix_arrival(s, eta) -> np.ndarray:
    r"""The first step :math:`t` with :math:`|t\eta - s_i| \le \eta/2`: :math:`\lceil s_i/\eta - 1/2\rceil` (at least 1)."""
    sv = np.asarray(V.array("s", s, ndim=(0, 1), low=0.0, low_open=True), float)
    e = V.real("eta", eta, low=0.0, low_open=True)
    return np.maximum(np.ceil(sv / e - 0.5), 1.0)


def factorization_arrival(s, eta, frac: float = 0.9) -> np.ndarray:
    r""":math:`t_i = \sqrt{\phi s_i}/\eta`: when :math:`(\eta t)^2`, the aligned product's growth, reaches :math:`\phi s_i`."""
    sv = np.asarray(V.array("s", s, ndim=(0, 1), low=0.0, low_open=True), float)
    e = V.real("eta", eta, low=0.0, low_open=True)
    phi = V.real("frac", frac, low=0.0, high=1.0, low_open=True, high_open=True)
    return np.sqrt(phi * sv) / e


def gd_factorization_arrival(s, eta, alpha, frac: float = 0.9) -> np.ndarray:
    r"""Gradient descent's time to bring mode :math:`i` of a balanced product from :math:`\alpha^2` to :math:`\phi s_i`.

    A balanced mode :math:`u = a^2` of :math:`W_2W_1` under gradient flow at rate :math:`\eta` follows the logistic
    :math:`\dot u = 2\eta u(s - u)`, so :math:`t = \ln\big(\tfrac{\phi}{1-\phi}\cdot\tfrac{s - \alpha^2}{\alpha^2}\big)/(2\eta s)`:
    the largest mode first, the rival of Muon's equal rates.
    """
    sv = np.asarray(V.array("s", s, ndim=(0, 1), low=0.0, low_open=True), float)
    e = V.real("eta", eta, low=0.0, low_open=True)
    a = V.real("alpha", alpha, low=0.0, low_open=True)
    phi = V.real("frac", frac, low=0.0, high=1.0, low_open=True, high_open=True)
    if np.any(sv <= a * a):
        raise ValueError(f"alpha: expected alpha^2 below every target value, got alpha = {a!r}")
    return np.log(phi / (1.0 - phi) * (sv - a * a) / (a * a)) / (2.0 * e * sv)


def balanced_sharpness_expr() -> sp.Expr:
    r"""The top Hessian eigenvalue of one mode :math:`\tfrac12(ab - s)^2` at its balanced minimum :math:`a = b = \sqrt s`
    (sympy): :math:`2s`. The modes of :math:`\tfrac12\|W_2W_1 - \mathrm{diag}(s)\|_F^2` at an aligned balanced minimum
    decouple into such blocks (and flat directions), so :math:`\lambda_{\max} = 2 s_{\max}`."""
    a, b = sp.symbols("a b", real=True)
    f = (a * b - S) ** 2 / 2
    h = sp.hessian(f, (a, b)).subs({a: sp.sqrt(S), b: sp.sqrt(S)})
    return sp.Max(*[sp.simplify(ev) for ev in h.eigenvals()])


def gd_threshold(s) -> float:
    r"""Gradient descent's linear stability threshold :math:`2/\lambda_{\max}` at a balanced minimum of
    :math:`\tfrac12\|W_2W_1 - \mathrm{diag}(s)\|_F^2`: :math:`1/s_{\max}` (:func:`balanced_sharpness_expr`).

    Args:
      s: the target's singular values, positive (a number or an array).
    """
    sv = np.asarray(V.array("s", s, ndim=(0, 1), low=0.0, low_open=True), float)
    lam_max = float(balanced_sharpness_expr().subs(S, float(sv.max())))
    return 2.0 / lam_max
