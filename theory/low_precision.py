r"""Gradient descent with weights stored in a short floating-point format: the round-to-nearest freeze and the
stochastic-rounding stationary law (bf16 by default, :math:`p = 8` significand bits).

**The grid.** A format with :math:`p` significand bits (bf16: 7 stored + 1 implicit) spaces its values in
:math:`[2^{e-1}, 2^e)` by :math:`\mathrm{ulp} = 2^{e-p}` (:func:`ulp`); on :math:`[1, 2)` bf16's ulp is :math:`2^{-7}`.
Round-to-nearest-even (RN) maps :math:`x` to the closest grid value (ties to the even significand:
:func:`round_nearest`, an integer-significand reference in exact float64 arithmetic).

**The RN freeze.** GD on :math:`f(w) = a(w - w^*)^2/2` with stored weights :math:`w_{t+1} = \mathrm{RN}(w_t - \eta a
(w_t - w^*))`. While :math:`w_t` and the update stay in one binade the grid is uniform, so the stored step is
:math:`\mathrm{ulp}\cdot\mathrm{rne}(\eta a e_t/\mathrm{ulp})` with :math:`e_t = w_t - w^*`: it is 0, and the run is
frozen for good, as soon as :math:`\eta a |e_t| < \mathrm{ulp}/2` (:func:`freeze_error_sym`). Approaching from
above (:math:`e_0 > U := \mathrm{ulp}/(2\eta a)`, :math:`0 < \eta a < 1`), the last moving step starts from
:math:`e \ge U` and moves by at most :math:`\eta a e + \mathrm{ulp}/2`, so it lands at
:math:`e' \ge (1-\eta a)U - \mathrm{ulp}/2 = U - \mathrm{ulp}`; it stops at the first grid point below :math:`U`.
The frozen error is therefore the unique grid offset in the band

.. math:: e_\infty \in [\,U - \mathrm{ulp},\; U), \qquad U = \frac{\mathrm{ulp}}{2\eta a}

(:func:`rn_frozen_error`; ties, which have probability 0 for a generic :math:`w^*`, are left out). The floor
scales as :math:`1/\eta`: a smaller step freezes farther from the minimizer.

**The freeze step from the high-precision path.** The exact (real-arithmetic) path has
:math:`e_t = e_0(1-\eta a)^t`; its update first drops below half an ulp at

.. math:: t_f = \Big\lceil \frac{\ln(2\eta a e_0/\mathrm{ulp})}{-\ln(1-\eta a)} \Big\rceil

(:func:`reference_freeze_step`). The stored path differs from it by the rounding of each step;
:func:`rn_lattice_run` iterates the stored chain exactly on the integer lattice (in float64, no JAX), which
gives its own freeze step.

**Stochastic rounding (SR).** :math:`\mathrm{SR}(x)` is the upper neighbour with probability equal to the
fractional position of :math:`x` in its cell, so :math:`E\,\mathrm{SR}(x) = x`. Write :math:`w^* = L + f\,\mathrm{ulp}`
(:math:`L` on the grid, :math:`0 \le f < 1`). For :math:`\eta a < 1` the two neighbours :math:`\{L, L+\mathrm{ulp}\}`
are absorbing (from :math:`L` the target :math:`L + \eta a f\,\mathrm{ulp}` lies in the cell), and the two-state
chain jumps up with probability :math:`\eta a f`, down with :math:`\eta a(1-f)`. Balance gives
:math:`P(\text{upper}) = f`, mean error 0 and

.. math:: E\,e^2 = \mathrm{ulp}^2 f(1-f), \qquad \int_0^1 f(1-f)\,df = \tfrac16 \;\Rightarrow\;
   \mathrm{rms} = \mathrm{ulp}/\sqrt6,

independent of :math:`\eta` (:func:`sr_stationary_sym`, :func:`sr_second_moment`): SR has no freeze.

**A sign-like update under cosine decay.** An update :math:`\eta_t u` with :math:`|u|` fixed freezes once
:math:`\eta_t|u| < \mathrm{ulp}/2`; under :math:`\eta_t = \eta_{\max}(1 + \cos(\pi t/T))/2` that is at
:math:`t/T = \arccos(\mathrm{ulp}/(\eta_{\max}|u|) - 1)/\pi` (:func:`cosine_freeze_fraction`).

Pure maths: sympy for the algebra, NumPy for the grid; every public function validates its arguments with
:mod:`theory.validate`.
"""
from __future__ import annotations

import functools

import numpy as np
import sympy as sp

from theory import validate as V

__all__ = [
    "BF16_BITS",
    "E0",
    "ETA_A",
    "ULP",
    "F",
    "T",
    "cast_chain",
    "cosine_freeze_fraction",
    "cosine_freeze_fraction_sym",
    "freeze_error_sym",
    "half_ulp_last_move",
    "kahan_bias_bound",
    "reference_freeze_step",
    "reference_freeze_step_sym",
    "rn_band",
    "rn_chain",
    "rn_frozen_error",
    "rn_frozen_error_across_binades",
    "rn_lattice_run",
    "round_nearest",
    "sr_mean_second_moment",
    "sr_second_moment",
    "sr_stationary_sym",
    "ulp",
]

#: bf16's significand bits (7 stored + the implicit leading 1)
BF16_BITS = 8

ETA_A, ULP, E0 = sp.symbols("eta_a ulp e_0", positive=True)
F, T = sp.symbols("f t", nonnegative=True)


def _bits(mantissa_bits) -> int:
    return V.integer("mantissa_bits", mantissa_bits, low=2, high=52)


def ulp(w, mantissa_bits=BF16_BITS) -> np.ndarray:
    r"""The spacing of the :math:`p`-bit grid at :math:`w \ne 0`: :math:`2^{e-p}` for :math:`|w| \in [2^{e-1}, 2^e)`.

    Args:
      w: a nonzero finite number or array.
      mantissa_bits: :math:`p`, significand bits including the implicit one (bf16: 8).
    """
    return _ulp("w", w, mantissa_bits)


def _ulp(name, w, mantissa_bits) -> np.ndarray:
    x = V.array(name, w, ndim=(0, 1))
    if np.any(x == 0):
        raise ValueError(f"{name}: expected nonzero values (0 has no binade), got a 0")
    _, e = np.frexp(x)
    return np.ldexp(1.0, e - _bits(mantissa_bits))


def round_nearest(x, mantissa_bits=BF16_BITS) -> np.ndarray:
    r"""Round-to-nearest-even onto the :math:`p`-bit grid, by integer significands in exact float64 arithmetic.

    :math:`x = m\,2^{e}` with :math:`m \in [1/2, 1)`; :math:`x\,2^{p-e}` is the significand scaled to
    :math:`[2^{p-1}, 2^p)`, rounded half-to-even (``np.rint``) and scaled back (powers of two are exact).
    A significand rounding up to :math:`2^p` lands on :math:`2^e`, the next binade's first value, as it should.
    Normal numbers only (no overflow or subnormal handling): steplab's weights are near 1.
    """
    v = V.array("x", x, ndim=(0, 1))
    p = _bits(mantissa_bits)
    _, e = np.frexp(v)
    return np.ldexp(np.rint(np.ldexp(v, p - e)), e - p)


def freeze_error_sym() -> sp.Expr:
    r"""The largest error that still moves, solved from :math:`\eta a\,e = \mathrm{ulp}/2`: :math:`U = \mathrm{ulp}/(2\eta a)`."""
    e = sp.Symbol("e", positive=True)
    (root,) = sp.solve(sp.Eq(ETA_A * e, ULP / 2), e)
    return root


@functools.cache
def _upper_fn():
    return sp.lambdify((ETA_A, ULP), freeze_error_sym(), "numpy")


def _eta_a(eta_a) -> np.ndarray:
    return V.array("eta_a", eta_a, ndim=(0, 1), low=0.0, high=1.0, low_open=True, high_open=True)


def rn_band(eta_a, ulp_value) -> tuple[np.ndarray, np.ndarray]:
    r"""The RN freeze band :math:`[U - \mathrm{ulp}, U)` of the error, :math:`U = \mathrm{ulp}/(2\eta a)`, for
    :math:`0 < \eta a < 1`. Returns ``(lower, upper)`` of the broadcast shape."""
    k = _eta_a(eta_a)
    u = V.real("ulp_value", ulp_value, low=0.0, low_open=True)
    upper = np.asarray(_upper_fn()(k, u), dtype=float)
    return upper - u, upper


def rn_frozen_error(w_star, eta_a, mantissa_bits=BF16_BITS) -> np.ndarray:
    r"""The error :math:`e_\infty = w_\infty - w^*` at which RN gradient descent approaching :math:`w^*` from above
    freezes: the grid point :math:`k\,\mathrm{ulp}` with :math:`k\,\mathrm{ulp} - w^* \in [U - \mathrm{ulp}, U)`,

    .. math:: e_\infty = \big(\lceil (w^* + U)/\mathrm{ulp}\rceil - 1\big)\mathrm{ulp} - w^*, \qquad U = \mathrm{ulp}/(2\eta a).

    Valid for :math:`0 < \eta a < 1`, a start with :math:`e_0 > U`, and a path inside :math:`w^*`'s binade
    (the ulp is :math:`\mathrm{ulp}(w^*)`). ``w_star`` and ``eta_a`` broadcast.
    """
    ws = V.array("w_star", w_star, ndim=(0, 1))
    k = _eta_a(eta_a)
    q = _ulp("w_star", ws, mantissa_bits)
    upper = np.asarray(_upper_fn()(k, q), dtype=float)
    return (np.ceil((ws + upper) / q) - 1.0) * q - ws


def reference_freeze_step_sym() -> sp.Expr:
    r"""The real time at which the exact path's update :math:`\eta a\,e_0(1-\eta a)^t` equals :math:`\mathrm{ulp}/2`."""
    (root,) = sp.solve(sp.Eq(ETA_A * E0 * (1 - ETA_A) ** T, ULP / 2), T)
    return sp.simplify(root)


@functools.cache
def _freeze_time_fn():
    return sp.lambdify((ETA_A, E0, ULP), reference_freeze_step_sym(), "numpy")


def reference_freeze_step(e0, eta_a, ulp_value) -> np.ndarray:
    r"""The freeze step predicted from the exact path alone: the first :math:`t \ge 0` with
    :math:`\eta a\,e_0(1-\eta a)^t < \mathrm{ulp}/2`, i.e. :math:`\lceil \ln(2\eta a e_0/\mathrm{ulp})/(-\ln(1-\eta a))\rceil`
    (0 if the first update is already below half an ulp). Broadcasts; returns integers as floats."""
    e = V.array("e0", e0, ndim=(0, 1), low=0.0, low_open=True)
    k = _eta_a(eta_a)
    u = V.real("ulp_value", ulp_value, low=0.0, low_open=True)
    t = np.asarray(_freeze_time_fn()(k, e, u), dtype=float)
    # an exact integer time means the update equals ulp/2 there: "below" starts one step later
    return np.maximum(0.0, np.floor(t) + 1.0)


def rn_lattice_run(w_star, w0, eta_a, n_steps, mantissa_bits=BF16_BITS) -> dict[str, np.ndarray]:
    r"""The RN-stored GD chain iterated exactly on the grid of :math:`w^*`'s binade (NumPy, float64).

    :math:`w_t = k_t\,\mathrm{ulp}` with integer :math:`k_t`; one step is
    :math:`k_{t+1} = \mathrm{rne}(k_t - \eta a (k_t\mathrm{ulp} - w^*)/\mathrm{ulp})`, ties to the even index (the even
    significand). The path
    must stay in :math:`w^*`'s binade (``w0``, one start for every run, on its grid), else ``ValueError``.

    Returns ``error`` (n,): :math:`w_T - w^*`; ``freeze_step`` (n,): the last step at which :math:`w` moved (0 if never).
    """
    ws = V.array("w_star", w_star, ndim=1)
    start = V.real("w0", w0)
    k = V.real("eta_a", eta_a, low=0.0, high=1.0, low_open=True, high_open=True)
    steps = V.integer("n_steps", n_steps, low=1, high=100_000)
    q = _ulp("w_star", ws, mantissa_bits)
    lo = np.ldexp(1.0, np.frexp(ws)[1] - 1)
    idx = start / q
    if not np.all(idx == np.round(idx)) or np.any(start < lo) or np.any(start >= 2 * lo):
        raise ValueError(f"w0: expected a grid point of w_star's binade, got {start!r}")
    idx = idx.astype(np.int64)
    last = np.zeros(ws.shape, dtype=np.int64)
    for t in range(1, steps + 1):
        # the stored target is (idx - step in ulps) on the index lattice; np.rint rounds half to the even index
        new = np.rint(idx - k * (idx * q - ws) / q).astype(np.int64)
        last = np.where(new != idx, t, last)
        idx = new
    w = idx * q
    if np.any(w < lo) or np.any(w >= 2 * lo):
        raise ValueError("w0, eta_a: the path left w_star's binade; the uniform-grid chain does not apply")
    return {"error": w - ws, "freeze_step": last}


def sr_stationary_sym() -> dict[str, sp.Expr]:
    r"""The SR two-point chain on :math:`\{L, L + \mathrm{ulp}\}` solved by balance:
    :math:`P(\text{upper}) = f`, the mean error, :math:`E e^2/\mathrm{ulp}^2 = f(1-f)` and its average over
    :math:`f \sim U[0, 1)`, :math:`1/6` (``"mean_sq_uniform"``)."""
    pu = sp.Symbol("p_u", nonnegative=True)
    up, down = ETA_A * F, ETA_A * (1 - F)  # jump probabilities from L and from L + ulp
    (p_upper,) = sp.solve(sp.Eq((1 - pu) * up, pu * down), pu)
    mean = sp.simplify(p_upper * (1 - F) + (1 - p_upper) * (-F))
    msq = sp.factor(sp.simplify(p_upper * (1 - F) ** 2 + (1 - p_upper) * F**2))
    return {"p_upper": sp.simplify(p_upper), "mean": mean, "mean_sq": msq,
            "mean_sq_uniform": sp.integrate(msq, (F, 0, 1))}


@functools.cache
def _msq_fn():
    return sp.lambdify(F, sr_stationary_sym()["mean_sq"], "numpy")


def sr_second_moment(w_star, mantissa_bits=BF16_BITS) -> np.ndarray:
    r"""The stationary :math:`E e^2/\mathrm{ulp}^2 = f(1-f)` of SR gradient descent (:math:`0 < \eta a < 1`), with
    :math:`f` the fractional position of :math:`w^*` in its grid cell; independent of :math:`\eta`."""
    ws = V.array("w_star", w_star, ndim=(0, 1))
    q = _ulp("w_star", ws, mantissa_bits)
    f = ws / q - np.floor(ws / q)
    return np.asarray(_msq_fn()(f), dtype=float)


def sr_mean_second_moment() -> float:
    r""":math:`E e^2/\mathrm{ulp}^2` averaged over a uniform position of :math:`w^*` in its cell: :math:`1/6`."""
    return float(sr_stationary_sym()["mean_sq_uniform"])


def cosine_freeze_fraction_sym() -> sp.Expr:
    r"""The fraction :math:`s = t/T` at which :math:`\eta_{\max}(1+\cos\pi s)/2\cdot|u| = \mathrm{ulp}/2`, in terms of
    :math:`r = \mathrm{ulp}/(\eta_{\max}|u|)`: :math:`\arccos(r - 1)/\pi`."""
    r, c = sp.symbols("r c", positive=True)
    # eta_t |u| = ulp/2  <=>  (1 + cos(pi s)) / 2 = r / 2, solved for c = cos(pi s)
    (cos_s,) = sp.solve(sp.Eq((1 + c) / 2, r / 2), c)
    return sp.acos(cos_s) / sp.pi


def cosine_freeze_fraction(ratio) -> np.ndarray:
    r"""The freeze point :math:`t/T = \arccos(r - 1)/\pi` of a sign-like update under cosine decay,
    :math:`r = \mathrm{ulp}/(\eta_{\max}|u|) \in (0, 2)` (past mid-run iff :math:`r < 1`)."""
    r = V.array("ratio", ratio, ndim=(0, 1), low=0.0, high=2.0, low_open=True, high_open=True)
    return np.asarray(_cosine_fn()(r), dtype=float)


@functools.cache
def _cosine_fn():
    return sp.lambdify(sp.Symbol("r", positive=True), cosine_freeze_fraction_sym(), "numpy")


def half_ulp_last_move(w_path, updates, mantissa_bits=BF16_BITS) -> np.ndarray:
    r"""The freeze predicted from a high-precision path alone: the last update :math:`t` (1-based) with
    :math:`|\delta_t| \ge \mathrm{ulp}(w_{t-1})/2`, per coordinate (0 if none).

    Args:
      w_path: (T, n) the reference path before each update, :math:`w_0 .. w_{T-1}` (nonzero).
      updates: (T, n) the reference updates :math:`\delta_1 .. \delta_T`.
      mantissa_bits: the target format's significand bits.
    """
    w = V.array("w_path", w_path, ndim=2)
    d = V.array("updates", updates, shape=w.shape)
    moves = np.abs(d) >= _ulp("w_path", w.ravel(), mantissa_bits).reshape(w.shape) / 2
    t = np.arange(1, w.shape[0] + 1)[:, None]
    return np.max(np.where(moves, t, 0), axis=0)


def rn_chain(w_star, w0, eta_a, n_steps, mantissa_bits=BF16_BITS) -> dict[str, np.ndarray]:
    r"""The RN-stored GD chain on the whole :math:`p`-bit grid (any binades), in float64 NumPy:
    :math:`w_{t+1} = \mathrm{RN}_p(w_t - \eta a (w_t - w^*))` with :func:`round_nearest`.

    The float64 update is exact to :math:`2^{-53}` relative, so it can differ from the exact chain only on a step
    within :math:`\sim 2^{-45}` ulp of a midpoint. Returns ``error`` (n,) and ``freeze_step`` (n,), the last step at
    which :math:`w` moved (0 if never).
    """
    ws = V.array("w_star", w_star, ndim=1)
    start = V.real("w0", w0)
    k = V.real("eta_a", eta_a, low=0.0, high=1.0, low_open=True, high_open=True)
    steps = V.integer("n_steps", n_steps, low=1, high=100_000)
    p = _bits(mantissa_bits)
    w = np.full(ws.shape, float(round_nearest(start, p)))
    last = np.zeros(ws.shape, dtype=np.int64)
    for t in range(1, steps + 1):
        new = round_nearest(w - k * (w - ws), p)
        last = np.where(new != w, t, last)
        w = new
    return {"error": w - ws, "freeze_step": last}


def rn_frozen_error_across_binades(w_star, w0, eta_a, mantissa_bits=BF16_BITS) -> np.ndarray:
    r"""The RN frozen error of gradient descent from a start ``w0`` in a binade at or above :math:`w^*`'s (both
    positive), where the grid coarsens on the way.

    Binade :math:`j` above :math:`w^*`'s (:math:`j = 0` its own) starts at :math:`L_j = 2^{e^*-1+j}` and has
    :math:`\mathrm{ulp}_j = 2^j\mathrm{ulp}(w^*)`, :math:`U_j = \mathrm{ulp}_j/(2\eta a)`. Coming down, the chain stops in
    the highest binade :math:`j \ge 1` (up to the start's) whose band point
    :math:`w^* + e_j \in [w^* + U_j - \mathrm{ulp}_j, w^* + U_j)` lies inside it, i.e. :math:`w^* + U_j - \mathrm{ulp}_j \ge
    L_j`; otherwise in :math:`w^*`'s binade at the one-binade point (:func:`rn_frozen_error`). The power of two
    :math:`L_j` itself belongs to the lower binade's rule: a downward step from it rounds away only below half the
    *lower* ulp, a quarter of :math:`L_j`'s own ulp. (The landing argument of :func:`rn_frozen_error` holds in each
    binade: the last moving step overshoots the band's lower edge by at most the landing grid's half ulp.)
    Valid for :math:`0 < \eta a < 1` and a start above the top band point.
    """
    ws = V.array("w_star", w_star, ndim=(0, 1), low=0.0, low_open=True)
    start = V.real("w0", w0, low=0.0, low_open=True)
    k = _eta_a(eta_a)
    q0 = _ulp("w_star", ws, mantissa_bits)
    base = np.ldexp(1.0, np.frexp(ws)[1] - 1)
    top = int(np.max(np.frexp(start)[1] - np.frexp(ws)[1]))
    out = rn_frozen_error(ws, k, mantissa_bits)
    decided = np.zeros(np.shape(out), bool)
    for j in range(top, 0, -1):
        qj, lj = q0 * 2.0**j, base * 2.0**j
        uj = np.asarray(_upper_fn()(k, qj), dtype=float)
        here = ~decided & (ws + uj - qj >= lj)
        out = np.where(here, (np.ceil((ws + uj) / qj) - 1.0) * qj - ws, out)
        decided |= here
    return out


def cast_chain(w_star, w0, eta_a, n_steps) -> dict[str, np.ndarray]:
    r"""The bf16 chain of a float32 update followed by a cast, in NumPy: :math:`w_{t+1} =
    \mathrm{bf16}(\mathrm{fl}_{32}(w_t - \mathrm{fl}_{32}(\eta a\,\mathrm{fl}_{32}(w_t - w^*))))`, the cast by
    ``ml_dtypes``' round-to-nearest-even. Two roundings in a row: a difference within half a float32 ulp
    (:math:`2^{-17}` bf16 ulp) of a bf16 midpoint lands on it, and ties-to-even then decides.

    Args:
      w_star: (n,) minimizers (cast to float32).
      w0: the start (cast to float32, then to bf16).
      eta_a: (m,) step sizes times curvature (cast to float32).
      n_steps: steps.

    Returns ``w`` (m, n): the final iterates (as float64).
    """
    import ml_dtypes

    ws = V.array("w_star", w_star, ndim=1).astype(np.float32)
    start = V.real("w0", w0)
    k = np.atleast_1d(V.array("eta_a", eta_a, ndim=(0, 1), low=0.0, low_open=True)).astype(np.float32)[:, None]
    steps = V.integer("n_steps", n_steps, low=1, high=100_000)
    bf16 = ml_dtypes.bfloat16
    w = np.full((k.shape[0], ws.size), np.float32(start).astype(bf16).astype(np.float32))
    for _ in range(steps):
        w = (w - k * (w - ws)).astype(bf16).astype(np.float32)
    return {"w": w.astype(np.float64)}


def kahan_bias_bound(mantissa_bits=BF16_BITS) -> float:
    r"""The largest bias, in ulps of :math:`w^*`'s binade, times :math:`\eta a`, of the time-averaged error of
    Kahan-compensated gradient descent with every result rounded onto the :math:`p`-bit grid.

    With :math:`z = w - c`, one step gives :math:`z' = z - \delta + \varepsilon` where :math:`\varepsilon` is what the
    roundings of :math:`y = \mathrm{RN}(-\delta - c)` and :math:`c' = \mathrm{RN}(w' - w - y)` lose (:math:`w' - w` is
    exact). Summed over a window of :math:`\Delta T` steps,

    .. math:: \eta a\,\overline{(w - w^*)} = \frac{z_{\rm start} - z_{\rm end}}{\Delta T} + \overline{\varepsilon}.

    Near the minimizer :math:`|y| < \mathrm{ulp}` (:math:`|\delta| \le \eta a\,\mathrm{ulp}`, :math:`|c| \le \mathrm{ulp}/2`,
    :math:`\eta a < 1/2`), so :math:`y`'s rounding loses at most :math:`2^{-p-1}` ulp, and :math:`|c| \le \mathrm{ulp}/2`
    loses at most :math:`2^{-p-2}` ulp: :math:`|\overline{\varepsilon}| \le 3\cdot 2^{-p-2}` ulp. The compensation thus
    shrinks the round-to-nearest floor :math:`1/(2\eta a)` ulp by a factor of order :math:`2^{p}`, without removing it.
    """
    p = _bits(mantissa_bits)
    return 3.0 * 2.0 ** (-p - 2)


def rn_sgd_window_mean_sq(eta_a, sigma_ulps, frac, k0, n_steps, window) -> float:
    r"""The exact expected :math:`\overline{e^2}/\mathrm{ulp}^2` over the last ``window`` of ``n_steps`` steps of
    round-to-nearest gradient descent with Gaussian gradient noise, by evolving the law of the grid index.

    On :math:`w^*`'s binade, :math:`w = L + k\,\mathrm{ulp}` and :math:`e_k = (k - f)\,\mathrm{ulp}`; the update
    :math:`\eta a(e + \sigma\xi)` is Gaussian with mean :math:`\mu_k = \eta a(k - f)` and standard deviation
    :math:`s = \eta a\sigma` ulps, and RN moves :math:`k` to :math:`k - j` with probability
    :math:`\Phi((j + \tfrac12 - \mu_k)/s) - \Phi((j - \tfrac12 - \mu_k)/s)` (ties have probability 0). The lattice is cut
    at :math:`|k| \le K` with :math:`K` beyond the start, the band and 12 stationary standard deviations; the mass
    carried past the cut is returned as ``truncation`` for the caller to bound.

    Args:
      eta_a: in (0, 1); sigma_ulps: :math:`\sigma` in ulps, > 0; frac: :math:`f \in [0, 1)`; k0: the start's index
      (an integer, :math:`w_0 = L + k_0\,\mathrm{ulp}`); n_steps, window: as in :func:`sims.low_precision.noisy_gd`.

    Returns a dict: ``mean_sq`` (the expectation) and ``truncation``.
    """
    from scipy.special import ndtr  # the standard normal CDF (scipy.stats costs a second to import)

    k = V.real("eta_a", eta_a, low=0.0, high=1.0, low_open=True, high_open=True)
    c = V.real("sigma_ulps", sigma_ulps, low=0.0, low_open=True)
    f = V.real("frac", frac, low=0.0, high=1.0, high_open=True)
    start = V.integer("k0", k0, low=-10_000, high=10_000)
    steps = V.integer("n_steps", n_steps, low=1, high=100_000)
    win = V.integer("window", window, low=1, high=steps)
    s = k * c
    half = int(np.ceil(max(abs(start), 1 / (2 * k)) + 12 * np.sqrt(k / (2 - k)) * c + 12 * s + 12))
    V.check_bytes({"k0": start, "sigma_ulps": c}, 8 * (2 * half + 1) ** 2, what="the lattice's transition matrix")
    ks = np.arange(-half, half + 1)
    mu = k * (ks - f)
    jmax = int(np.ceil(np.max(np.abs(mu)) + 12 * s + 2))
    js = np.arange(-jmax, jmax + 1)
    edges = np.r_[js - 0.5, js[-1] + 0.5]
    n = ks.size
    p_move = np.diff(ndtr((edges[None, :] - mu[:, None]) / s), axis=1)  # (n, 2 jmax + 1)
    dest = np.arange(n)[:, None] - js[None, :]
    inside = (dest >= 0) & (dest < n)
    trans = np.zeros((n, n))
    rows = np.broadcast_to(np.arange(n)[:, None], dest.shape)
    np.add.at(trans, (rows[inside], dest[inside]), p_move[inside])
    p = np.zeros(n)
    p[start + half] = 1.0
    e2 = (ks - f) ** 2
    acc = 0.0
    for t in range(1, steps + 1):
        p = p @ trans
        if t > steps - win:
            acc += float(p @ e2)
    return {"mean_sq": acc / win, "truncation": float(1.0 - p.sum())}
