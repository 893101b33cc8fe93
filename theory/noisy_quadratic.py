r"""Closed forms for step-size practice on noisy quadratics: schedules, merging, averaging, weight decay, Lion.

Everything here is derived in steplab (sympy where a closed form exists) on the noisy quadratic
model of :mod:`theory.nqm`, whose exact SGD moment recursion it reuses.

* **Schedules** (:func:`schedule`): constant, WSD (warmup-free: constant, then a linear cooldown over the
  last fraction :math:`\phi`), linear decay to zero (``d2z``), cosine to a floor. The plateau excess of a
  mode is :func:`theory.nqm.stationary_excess`; the final loss at a tuned peak step
  (:func:`tuned_final_loss`) comes from :func:`theory.nqm.final_second_moment`.
* **Last-iterate bound** for convex :math:`G`-Lipschitz SGD with any schedule (:func:`last_iterate_bound`):

  .. math:: E f(x_T) - f^\star \le \frac{D^2 + \sum_{t=1}^T\eta_t^2G^2}{2\sum_{t=1}^T\eta_t}
            + \frac12\sum_{k=1}^{T-1}\frac{\eta_k}{\sum_{t=k+1}^T\eta_t}\,\frac{\sum_{t=k}^T\eta_t^2G^2}{\sum_{t=k}^T\eta_t},

  where :math:`x_T` is the iterate after the updates with :math:`\eta_1..\eta_{T-1}` and :math:`D = \|x_1 - x^\star\|`.
* **Checkpoint merging** (:func:`merge_effective_schedule`): averaging checkpoints :math:`x_{t_k}` of a
  constant-step run with weights :math:`w_k` (:math:`\sum w_k = 1`) equals, for the same gradient
  sequence, one run with :math:`\eta_{\rm eff}(s) = \eta\,(1 - C_s)`, :math:`C_s = \sum_{t_k \le s} w_k`.
* **Averaging** on one mode with :math:`\rho = 1 - \eta\lambda` and additive noise: the EMA
  :math:`z^+ = (1-\alpha)z + \alpha x` has stationary :math:`\mathrm{Var}\,z/\mathrm{Var}\,x =
  \alpha(1+\rho(1-\alpha))/((2-\alpha)(1-\rho(1-\alpha)))` (:func:`ema_variance_ratio`); without noise its
  bias is :func:`ema_bias` (geometric at :math:`\max(1-\alpha, |\rho|)`) and the uniform average's is
  :func:`uniform_average_bias` (:math:`\sim 1/(\eta\lambda t)`).
* **Weight-decay equilibria** of scale-invariant weights (:math:`w\cdot g = 0`,
  :math:`\|g\| = \tilde G/\|w\|`): angular update :math:`\sqrt{2\eta\lambda/(1+\alpha)}`
  (:func:`wd_angular_update`), :math:`\|w\|^4 = \eta\tilde G^2/(2\lambda(1-\alpha))` (:func:`wd_equilibrium_norm`);
  sign updates with decoupled decay: :math:`\sqrt{2\eta\lambda}` and :math:`\|w\| = \sqrt{\eta d/(2\lambda)}`.
  For plain SGD the map is deterministic and exact: :math:`\cos\theta = 1 - \eta\lambda` and
  :math:`\|w\|^4 = \eta\tilde G^2/(\lambda(2-\eta\lambda))` (:func:`sgd_wd_exact`). Without decay the norm grows,
  :math:`\|w_t\|^4 \approx \|w_0\|^4 + 2\eta^2\tilde G^2t/(1-\alpha)^2` (:func:`no_decay_norm`), and the angle decays like
  :math:`\sqrt{(1-\alpha)/(1+\alpha)}/\sqrt{2t}` (:func:`no_decay_angular_update`).
* **A user's run** (:func:`fit_nqm_to_log`): the NQM fitted to a logged (step, lr, loss) curve along its own schedule,
  one free weight per mode (not identifiable from one curve); ``steplab overlay`` uses the four-parameter fit with
  standard errors of :mod:`theory.noisy_quadratic_fit` instead.
* **Lion's box** (:func:`lion_box_radius`): with decoupled decay :math:`\lambda` and :math:`\eta\lambda \le 1`,
  :math:`\|x\|_\infty \le 1/\lambda` is invariant; outside it the excess contracts by at most
  :math:`1 - \eta\lambda` per step; the limit points solve :math:`\min f` on the box (:func:`box_minimizer`).

No JAX and no I/O here. Every public function validates its arguments (:mod:`theory.validate`).
"""
from __future__ import annotations

import functools
import math

import numpy as np
import sympy as sp
from scipy import optimize

from theory import validate as V
from theory import nqm

__all__ = [
    "SCHEDULES", "schedule", "tuned_final_loss", "d2z_cosine_ratio", "wsd_plateau_excess", "last_iterate_bound",
    "DECAYS", "merge_effective_schedule", "merge_error_variance", "merged_second_moment", "merge_weights_for_schedule",
    "adamw_ema_weights", "ema_variance_sympy", "ema_variance_ratio", "ema_bias", "ema_bias_rate", "ema_final_second_moment",
    "tuned_ema_final_loss", "uniform_average_bias", "wd_angular_update", "wd_equilibrium_norm",
    "sign_wd_angular_update", "sign_wd_equilibrium_norm", "sign_wd_start_cosine", "sgd_wd_exact", "wd_norm_relaxation",
    "no_decay_norm", "no_decay_angular_update",
    "lion_box_radius", "box_minimizer", "l2_minimizer", "logistic_minimizer", "schedule_from_log", "fit_nqm_to_log",
    "river_progress", "river_area_law", "double_well_grad", "double_well_kkt_point", "box_kkt_residual",
]

SCHEDULES = ("constant", "wsd", "d2z", "cosine")
DECAYS = ("linear", "cosine", "sqrt")  # shapes of WSD's cooldown (``schedule(..., decay=)``)


# ----------------------------------------------------------------------------- schedules
def schedule(kind: str, T: int, peak: float, *, cooldown: float = 0.2, floor: float = 0.1, decay: str = "linear",
             max_bytes=None) -> np.ndarray:
    r"""Step sizes :math:`\eta_0..\eta_{T-1}` of a schedule with peak ``peak``.

    ``constant``: :math:`\eta`; ``wsd``: :math:`\eta` then a decay to 0 over the last ``cooldown``
    fraction, linear by default, :math:`\eta_t = \eta\min\{1, (T-t)/(\phi T)\}`; ``d2z``: :math:`\eta(1 - t/T)`;
    ``cosine``: :math:`\eta(f + (1-f)\tfrac12(1 + \cos(\pi t/T)))` with ``floor`` :math:`f` (0.1: "cosine to 10 %").
    ``decay`` (WSD only) shapes the cooldown in :math:`u = 1 - (T-t)/(\phi T) \in [0, 1)`: ``linear``
    :math:`\eta(1-u)`, ``cosine`` :math:`\eta\tfrac12(1+\cos\pi u)`, ``sqrt`` :math:`\eta(1-\sqrt u)` (the "1 - sqrt"
    cooldown). ``max_bytes``: the allocation limit (:func:`theory.validate.byte_limit`; ``T`` float64 values, three
    at once).
    """
    kind = V.choice("kind", kind, SCHEDULES)
    decay = V.choice("decay", decay, DECAYS)
    T = V.integer("T", T, low=1)
    V.check_bytes({"T": T}, 3 * 8 * T, what="the schedule (T float64 values, with two temporaries)",
                  max_bytes=max_bytes)
    peak = V.real("peak", peak, low=0.0, low_open=True)
    cooldown = V.real("cooldown", cooldown, low=0.0, high=1.0, low_open=True)
    floor = V.real("floor", floor, low=0.0, high=1.0)
    t = np.arange(T, dtype=float)
    if kind == "constant":
        return np.full(T, peak)
    if kind == "wsd":
        if decay == "linear":
            return peak * np.minimum(1.0, (T - t) / (cooldown * T))
        u = np.maximum(0.0, 1.0 - (T - t) / (cooldown * T))
        return peak * (0.5 * (1 + np.cos(np.pi * u)) if decay == "cosine" else 1 - np.sqrt(u))
    if kind == "d2z":
        return peak * (1 - t / T)
    return peak * (floor + (1 - floor) * 0.5 * (1 + np.cos(np.pi * t / T)))


def tuned_final_loss(lam, sigma_a, kind: str, T: int, *, m0=1.0, floor: float = 0.1, cooldown: float = 0.2,
                     peak_range=(1e-3, 1.99), max_bytes=None) -> tuple[float, float]:
    r"""``(loss, peak)``: SGD's exact expected final loss on a diagonal NQM at the peak step that minimizes it.

    The loss is :math:`\tfrac12\sum_i\lambda_i m_{i,T}` from :func:`theory.nqm.final_second_moment`; the
    peak is found by a bounded scalar search in :math:`\log\eta` over ``peak_range`` (the upper end
    divided by :math:`\max\lambda` stays below the stability edge 2). ``max_bytes``: as for :func:`schedule`.
    """
    lam_a = V.array("lam", lam, ndim=1, low=0.0, low_open=True)
    T = V.integer("T", T, low=1)
    # final_second_moment's four (T, len(lam)) tables, checked here to name T
    V.check_bytes({"T": T, "lam": f"{lam_a.size} modes"}, 4 * 8 * T * lam_a.size,
                  what="the four (T, d) factor and suffix-product tables", max_bytes=max_bytes)
    lo, hi = (V.real("peak_range", p, low=0.0, low_open=True) for p in peak_range)
    hi = min(hi, 1.99) / float(lam_a.max())

    def loss(log_peak: float) -> float:
        eta = schedule(kind, T, math.exp(log_peak), floor=floor, cooldown=cooldown, max_bytes=max_bytes)
        return float(nqm.expected_loss(lam_a, nqm.final_second_moment(lam_a, eta, m0, sigma_a, max_bytes=max_bytes)))

    res = optimize.minimize_scalar(loss, bounds=(math.log(lo), math.log(hi)), method="bounded",
                                   options={"xatol": 1e-7})
    return float(res.fun), float(math.exp(res.x))


def d2z_cosine_ratio(lam, sigma_a, T: int, *, floor: float = 0.1, m0=1.0, max_bytes=None) -> float:
    r"""Tuned final loss of cosine-to-``floor`` over that of linear decay to zero (each at its own best peak)."""
    cos, _ = tuned_final_loss(lam, sigma_a, "cosine", T, m0=m0, floor=floor, max_bytes=max_bytes)
    d2z, _ = tuned_final_loss(lam, sigma_a, "d2z", T, m0=m0, max_bytes=max_bytes)
    return cos / d2z


def wsd_plateau_excess(lam, eta, sigma_a=1.0) -> np.ndarray:
    r"""Per-mode excess loss on the WSD plateau, :math:`\eta\sigma^2/(2(2-\eta\lambda))` (:func:`theory.nqm.stationary_excess`)."""
    return nqm.stationary_excess(lam, eta, sigma_a)


# ----------------------------------------------------------------------------- last-iterate bound
def last_iterate_bound(eta, D: float, G) -> float:
    r"""The last-iterate bound for convex :math:`G`-Lipschitz SGD with schedule :math:`\eta_1..\eta_T` (see the module docstring).

    ``eta``: the :math:`T` step sizes (all > 0 except possibly none: :math:`\eta_T > 0` is needed for the
    :math:`k = T-1` term); ``G``: a bound on :math:`\sqrt{E\|g_t\|^2}`, a scalar or one per step.
    """
    e = V.array("eta", eta, ndim=1, low=0.0)
    D = V.real("D", D, low=0.0)
    g = V.array("G", G, ndim=(0, 1), low=0.0)
    T = e.size
    if T < 2:
        raise ValueError(f"eta: the bound needs at least 2 step sizes, got {T}")
    if g.shape not in ((), (T,)):
        raise ValueError(f"G: expected a scalar or one value per step (shape ({T},), as eta), got shape {g.shape}")
    if not e[-1] > 0:
        raise ValueError(f"eta: the last step size eta_T must be > 0 (it divides the k = T-1 term), got {e[-1]}")
    g2 = np.broadcast_to(g, (T,)) ** 2
    q = e**2 * g2
    tail_eta = np.cumsum(e[::-1])[::-1]          # sum_{t >= k} eta_t
    tail_q = np.cumsum(q[::-1])[::-1]            # sum_{t >= k} eta_t^2 G_t^2
    main = (D**2 + q.sum()) / (2 * e.sum())
    k = np.arange(T - 1)
    extra = 0.5 * np.sum(e[k] / tail_eta[k + 1] * tail_q[k] / tail_eta[k])
    return float(main + extra)


# ----------------------------------------------------------------------------- checkpoint merging, AdamW as EMA
def merge_effective_schedule(eta: float, checkpoints, weights, T: int, *, max_bytes=None) -> np.ndarray:
    r""":math:`\eta_{\rm eff}(s) = \eta(1 - C_s)`, :math:`C_s = \sum_{t_k \le s} w_k`, for :math:`s = 0..T-1`.

    ``checkpoints``: step counts :math:`t_k` (the iterate after :math:`t_k` updates), increasing, the
    last equal to ``T``; ``weights``: :math:`w_k \ge 0` summing to 1. Then
    :math:`\sum_k w_k x_{t_k} = x_0 - \sum_s \eta_{\rm eff}(s)\,g_s` for a constant-step run
    :math:`x_{t+1} = x_t - \eta g_t` on any fixed gradient sequence (exchange the two sums).
    ``max_bytes``: the allocation limit (:func:`theory.validate.byte_limit`) for the merge functions' per-step,
    per-checkpoint tables.
    """
    eta = V.real("eta", eta, low=0.0, low_open=True)
    T = V.integer("T", T, low=1)
    n_ck = np.size(checkpoints) if not isinstance(checkpoints, (str, bytes)) and checkpoints is not None else 1
    # merged_second_moment and merge_error_variance hold (T, checkpoints) tables, three at once
    V.check_bytes({"T": T, "checkpoints": n_ck}, 3 * 8 * T * max(n_ck, 1), what="the (T, checkpoints) float64 tables",
                  max_bytes=max_bytes)
    tk = V.array("checkpoints", checkpoints, ndim=1, low=0.0, high=float(T))
    w = V.array("weights", weights, shape=(tk.size,), low=0.0)
    if np.any(np.diff(tk) <= 0) or tk[-1] != T or np.any(tk != np.round(tk)):
        raise ValueError(f"checkpoints: expected increasing integer steps ending at T = {T}, got {tk.tolist()}")
    if not abs(w.sum() - 1) < 1e-12:
        raise ValueError(f"weights: expected weights summing to 1, got sum {w.sum():.15g}")
    s = np.arange(T)
    C = np.array([w[tk <= si].sum() for si in s])
    return eta * (1 - C)


def _merged_noise_coefficients(rho: float, eta: float, tk: np.ndarray, w: np.ndarray, T: int) -> np.ndarray:
    r"""Coefficient of :math:`\xi_s` (:math:`s = 0..T-1`) in :math:`\sum_k w_kx_{t_k}` of a constant-step run:
    :math:`-\eta\sum_{t_k > s} w_k\rho^{t_k-1-s}`."""
    s = np.arange(T)
    expo = tk[None, :] - 1 - s[:, None]
    return -eta * np.sum(np.where(expo >= 0, w * rho ** np.maximum(expo, 0), 0.0), axis=1)


def merged_second_moment(lam, eta: float, checkpoints, weights, T: int, sigma_a=1.0, x0=1.0, *,
                         max_bytes=None) -> np.ndarray:
    r""":math:`E\bar x^2` per mode of the merged checkpoints :math:`\bar x = \sum_k w_kx_{t_k}` of constant-step SGD on :math:`\tfrac12\lambda x^2`.

    With additive noise :math:`\sigma` (``sigma_a``, one per mode or a scalar) and start ``x0``,
    :math:`x_t = \rho^tx_0 - \eta\sum_{s<t}\rho^{t-1-s}\sigma\xi_s` (:math:`\rho = 1-\eta\lambda`), so
    :math:`E\bar x = x_0\sum_kw_k\rho^{t_k}` and :math:`\mathrm{Var}\,\bar x = \sigma^2\eta^2\sum_s\big(\sum_{t_k>s}w_k\rho^{t_k-1-s}\big)^2`
    exactly. The loss of the merged model is :math:`\tfrac12\sum_i\lambda_iE\bar x_i^2` (:func:`theory.nqm.expected_loss`).
    """
    lam_a = V.array("lam", lam, ndim=(0, 1), low=0.0).reshape(-1)
    eta = V.real("eta", eta, low=0.0, low_open=True)
    merge_effective_schedule(eta, checkpoints, weights, T, max_bytes=max_bytes)   # validates checkpoints, weights, T
    tk = np.asarray(checkpoints, dtype=int)
    w = np.asarray(weights, dtype=float)
    sa = np.broadcast_to(V.array("sigma_a", sigma_a, ndim=(0, 1), low=0.0), lam_a.shape)
    m0 = np.broadcast_to(V.array("x0", x0, ndim=(0, 1)), lam_a.shape)
    out = np.empty(lam_a.size)
    for i, lm in enumerate(lam_a):
        rho = 1 - eta * lm
        mean = m0[i] * np.sum(w * rho ** tk)
        out[i] = mean**2 + sa[i] ** 2 * np.sum(_merged_noise_coefficients(rho, eta, tk, w, int(T)) ** 2)
    return out


def merge_error_variance(lam, eta: float, checkpoints, weights, T: int, sigma: float = 1.0, *,
                         max_bytes=None) -> np.ndarray:
    r""":math:`E(\bar x - y_T)^2` on one mode :math:`\lambda x^2/2` with additive noise :math:`\sigma` and :math:`x_0 = 0`, per ``lam``.

    :math:`\bar x = \sum_k w_k x_{t_k}` merges a constant-step run; :math:`y_T` is the run with
    :math:`\eta_{\rm eff}` (:func:`merge_effective_schedule`) on the same noise. Both are linear in the noise
    :math:`\xi_s`, with coefficients :math:`-\eta\sum_{t_k > s} w_k\rho^{t_k-1-s}` (:math:`\rho = 1-\eta\lambda`) and
    :math:`-\eta_{\rm eff}(s)\prod_{j>s}(1-\eta_{\rm eff}(j)\lambda)`, so the variance is :math:`\sigma^2\sum_s(\Delta_s)^2`
    exactly. Zero at :math:`\lambda = 0` (the identity); to leading order it grows like :math:`(\eta\lambda W)^2`.
    """
    lam_a = V.array("lam", lam, ndim=(0, 1), low=0.0).reshape(-1)
    eff = merge_effective_schedule(eta, checkpoints, weights, T, max_bytes=max_bytes)
    tk = np.asarray(checkpoints, dtype=int)
    w = np.asarray(weights, dtype=float)
    sigma = V.real("sigma", sigma, low=0.0)
    out = np.empty(lam_a.size)
    for i, lm in enumerate(lam_a):
        merged = _merged_noise_coefficients(1 - eta * lm, eta, tk, w, int(T))
        keep = 1 - eff * lm
        after = np.append(np.cumprod(keep[::-1])[::-1][1:], 1.0)
        out[i] = sigma**2 * np.sum((merged + eff * after) ** 2)
    return out


def merge_weights_for_schedule(eta_eff, eta: float) -> np.ndarray:
    r"""The inverse map: weights on checkpoints after every step :math:`1..T` that emulate a non-increasing ``eta_eff``.

    :math:`w_s = (\eta_{\rm eff}(s-1) - \eta_{\rm eff}(s))/\eta` for :math:`s = 1..T-1` and
    :math:`w_T = \eta_{\rm eff}(T-1)/\eta` (with :math:`\eta_{\rm eff}(0) = \eta`).
    """
    e = V.array("eta_eff", eta_eff, ndim=1, low=0.0)
    eta = V.real("eta", eta, low=0.0, low_open=True)
    if not (abs(e[0] - eta) <= 1e-12 * eta) or np.any(np.diff(e) > 0) or np.any(e > eta * (1 + 1e-12)):
        raise ValueError("eta_eff: expected a non-increasing schedule starting at eta")
    return np.append(-np.diff(e), e[-1]) / eta


def adamw_ema_weights(eta, wd: float) -> np.ndarray:
    r"""Weights :math:`c_t = \eta_t\lambda\prod_{k>t}(1-\eta_k\lambda)` of AdamW's weights as a moving average of its updates.

    With decoupled decay, :math:`x_T = \prod_t(1-\eta_t\lambda)\,x_0 - \frac1\lambda\sum_t c_t u_t` exactly, for any
    update directions :math:`u_t`: the weights are an exponential moving average of :math:`-u_t/\lambda`.
    """
    e = V.array("eta", eta, ndim=1, low=0.0)
    wd = V.real("wd", wd, low=0.0, low_open=True)
    keep = 1 - e * wd
    after = np.append(np.cumprod(keep[::-1])[::-1][1:], 1.0)
    return e * wd * after


# ----------------------------------------------------------------------------- averaging
@functools.lru_cache(maxsize=None)
def ema_variance_sympy():
    r"""Stationary :math:`\mathrm{Var}\,z/\mathrm{Var}\,x` of the EMA :math:`z^+ = (1-\alpha)z + \alpha x^+` of :math:`x^+ = \rho x + \epsilon` (sympy).

    With :math:`v_x = s/(1-\rho^2)`, :math:`c = \mathrm{Cov}(z, x)`: :math:`c = (1-\alpha)\rho c + \alpha v_x` and
    :math:`v_z = (1-\alpha)^2v_z + 2\alpha(1-\alpha)\rho c + \alpha^2 v_x`. Returns ``(ratio, (alpha, rho))``.
    """
    a, r, s = sp.symbols("alpha rho s", positive=True)
    c, v = sp.symbols("c v")
    vx = s / (1 - r**2)
    sol = sp.solve([sp.Eq(c, (1 - a) * r * c + a * vx), sp.Eq(v, (1 - a) ** 2 * v + 2 * (1 - a) * a * r * c + a**2 * vx)],
                   [c, v], dict=True)[0]
    return sp.factor(sp.simplify(sol[v] / vx)), (a, r)


def ema_variance_ratio(alpha, eta, lam) -> float:
    r""":math:`\mathrm{Var}(\mathrm{EMA})/\mathrm{Var}(x) = \alpha(1+\rho(1-\alpha))/((2-\alpha)(1-\rho(1-\alpha)))`, :math:`\rho = 1-\eta\lambda`.

    Stationary, for SGD with additive noise on one mode :math:`\lambda x^2/2`; needs :math:`0 < \alpha \le 1`
    and a stable step :math:`0 < \eta\lambda < 2`. Below 1 for :math:`\alpha < 1`; the i.i.d. value
    :math:`\alpha/(2-\alpha)` is the case :math:`\rho = 0`.
    """
    alpha = V.real("alpha", alpha, low=0.0, high=1.0, low_open=True)
    eta = V.real("eta", eta, low=0.0, low_open=True)
    lam = V.real("lam", lam, low=0.0, low_open=True)
    if not eta * lam < 2:
        raise ValueError(f"eta: expected a stable step eta * lam < 2, got {eta * lam:.6g}")
    rho = 1 - eta * lam
    return alpha * (1 + rho * (1 - alpha)) / ((2 - alpha) * (1 - rho * (1 - alpha)))


def _geometric_sums(q: float, rho: float, n: np.ndarray) -> np.ndarray:
    r""":math:`S_n = \sum_{j=0}^{n-1} q^{n-1-j}\rho^j` for :math:`n \ge 1` (:math:`(q^n-\rho^n)/(q-\rho)`), without cancellation.

    Equal bases: :math:`nq^{n-1}`. Both positive: :math:`M^{n-1}\,\mathrm{expm1}(nL)/\mathrm{expm1}(L)` with :math:`M` the
    larger, :math:`L = \log(m/M) \le 0` (no overflow, no loss of digits as :math:`q \to \rho`). Otherwise (a base
    :math:`\le 0`: the bases are at least their larger modulus apart) the quotient itself.
    """
    if q == rho:
        return n * q ** (n - 1.0)
    if q > 0 and rho > 0:
        big, small = max(q, rho), min(q, rho)
        L = math.log(small / big)
        return big ** (n - 1.0) * np.expm1(n * L) / math.expm1(L)
    return (q**n - rho**n) / (q - rho)


def ema_final_second_moment(lam, eta, alpha, T: int, sigma_a=1.0, x0=1.0, *, max_bytes=None) -> np.ndarray:
    r""":math:`E z_T^2` per mode of the EMA of constant-step SGD on :math:`\tfrac12\lambda x^2` with additive noise, exactly.

    :math:`x^+ = \rho x - \eta\sigma\xi` (:math:`\rho = 1-\eta\lambda`), :math:`z^+ = (1-\alpha)z + \alpha x^+`,
    :math:`z_0 = x_0` (the simulator's convention). Unrolled, with :math:`q = 1-\alpha` and :math:`S_n =
    \sum_{j<n}q^{n-1-j}\rho^j`: :math:`E z_T = x_0(q^T + \alpha\rho S_T)` and the noise :math:`\xi_s` enters
    :math:`z_T` with coefficient :math:`-\eta\sigma\alpha S_{T-s}`, so
    :math:`\mathrm{Var}\,z_T = \eta^2\sigma^2\alpha^2\sum_{n=1}^T S_n^2`. At :math:`\alpha = 1` this is SGD's own
    :math:`E x_T^2` (:func:`theory.nqm.final_second_moment` at a constant step). ``lam`` and ``sigma_a``, ``x0`` (one
    per mode or a scalar); ``alpha`` in :math:`(0, 1]`; any step (an unstable one gives a growing moment).
    ``max_bytes``: the allocation limit for the ``(T, modes)`` table.
    """
    lam_a = V.array("lam", lam, ndim=(0, 1), low=0.0).reshape(-1)
    eta = V.real("eta", eta, low=0.0, low_open=True)
    alpha = V.real("alpha", alpha, low=0.0, high=1.0, low_open=True)
    T = V.integer("T", T, low=1)
    V.check_bytes({"T": T, "lam": f"{lam_a.size} modes"}, 2 * 8 * T * max(lam_a.size, 1),
                  what="the (T, modes) table of geometric sums", max_bytes=max_bytes)
    sa = np.broadcast_to(V.array("sigma_a", sigma_a, ndim=(0, 1), low=0.0), lam_a.shape)
    m0 = np.broadcast_to(V.array("x0", x0, ndim=(0, 1)), lam_a.shape)
    q, n = 1.0 - alpha, np.arange(1, T + 1, dtype=float)
    out = np.empty(lam_a.size)
    for i, lm in enumerate(lam_a):
        rho = 1.0 - eta * lm
        S = _geometric_sums(q, rho, n)
        mean = m0[i] * (q**T + alpha * rho * S[-1])
        out[i] = mean**2 + (eta * sa[i] * alpha) ** 2 * np.sum(S**2)
    return out


def tuned_ema_final_loss(lam, sigma_a, T: int, *, m0=1.0, max_bytes=None) -> tuple[float, float, float]:
    r"""``(loss, eta, alpha)``: the least exact final loss :math:`\tfrac12\sum_i\lambda_iEz_{T,i}^2` of the EMA of a
    constant-step run (:func:`ema_final_second_moment`) over the step and the EMA rate.

    A bounded search (L-BFGS-B) in :math:`(\log\eta, \log\alpha)` over :math:`\eta\max\lambda \in [10^{-4}, 1.99]`
    (stable steps) and :math:`\alpha \in [10^{-7}, 1]`, from the best point of a 9 x 9 grid; where to measure, the
    claims' predictions are the exact losses at the returned point. ``m0``: :math:`x_0^2` (one per mode or a scalar).
    """
    lam_a = V.array("lam", lam, ndim=1, low=0.0, low_open=True)
    T = V.integer("T", T, low=1)
    x0 = np.sqrt(V.array("m0", m0, ndim=(0, 1), low=0.0))
    hi = math.log(1.99 / float(lam_a.max()))
    box = [(hi + math.log(1e-4 / 1.99), hi), (math.log(1e-7), 0.0)]

    def loss(u) -> float:
        m = ema_final_second_moment(lam_a, math.exp(u[0]), math.exp(u[1]), T, sigma_a, x0, max_bytes=max_bytes)
        return math.log(float(nqm.expected_loss(lam_a, m)))

    grid = [(a, b) for a in np.linspace(*box[0], 9) for b in np.linspace(*box[1], 9)]
    start = min(grid, key=loss)
    res = optimize.minimize(loss, start, method="L-BFGS-B", bounds=box, options={"ftol": 1e-13, "gtol": 1e-10})
    return float(math.exp(res.fun)), float(math.exp(res.x[0])), float(math.exp(res.x[1]))


def _whole(name: str, a: np.ndarray) -> np.ndarray:
    """``a`` unchanged if every entry is a whole number (a step count), else a ValueError naming ``name``."""
    if not np.all(a == np.round(a)):
        raise ValueError(f"{name}: expected whole step counts, got {a[a != np.round(a)][:3]}")
    if not np.all(np.abs(a) < 2.0**63):  # every integer argument is an int64 (theory.validate.integer)
        raise ValueError(f"{name}: expected step counts in the int64 range (< 2**63), got max {np.max(np.abs(a)):.6g}")
    return a


def ema_bias(alpha, eta, lam, t, x0: float = 1.0) -> np.ndarray:
    r"""Noise-free :math:`E z_t` of the EMA (:math:`z_0 = x_0`, :math:`z^+ = (1-\alpha)z + \alpha x^+`, :math:`x_t = \rho^t x_0`).

    :math:`z_t = x_0\big[(1-\alpha)^t + \alpha\rho\,\frac{\rho^t - (1-\alpha)^t}{\rho - (1-\alpha)}\big]`
    (the limit :math:`t\alpha\rho^t` when :math:`\rho = 1-\alpha`): geometric at :math:`\max(1-\alpha, |\rho|)`.
    """
    alpha = V.real("alpha", alpha, low=0.0, high=1.0, low_open=True)
    eta = V.real("eta", eta, low=0.0, low_open=True)
    lam = V.real("lam", lam, low=0.0, low_open=True)
    tt = _whole("t", V.array("t", t, ndim=(0, 1), low=0.0))
    x0 = V.real("x0", x0)
    rho, q = 1 - eta * lam, 1 - alpha
    if abs(rho - q) < 1e-12:
        return x0 * (q**tt + alpha * tt * rho**tt)
    return x0 * (q**tt + alpha * rho * (rho**tt - q**tt) / (rho - q))


def ema_bias_rate(alpha, eta, lam) -> float:
    r"""Per-step factor of the noise-free EMA's decay, :math:`\max(1-\alpha, |1-\eta\lambda|)`.

    :func:`ema_bias` is a combination of :math:`(1-\alpha)^t` and :math:`\rho^t` (:math:`\rho = 1-\eta\lambda`); the larger
    modulus wins, so :math:`|z_t|^{1/t} \to \max(1-\alpha, |\rho|)`: the EMA forgets at its own pace when
    :math:`1-\alpha > |\rho|`, and follows the iterate otherwise -- including an oscillating iterate
    (:math:`1 < \eta\lambda < 2`, :math:`\rho < 0`), whose :math:`|\rho|` counts, not :math:`\rho`. Needs
    :math:`0 < \alpha \le 1` and a stable step :math:`0 < \eta\lambda < 2`.
    """
    alpha = V.real("alpha", alpha, low=0.0, high=1.0, low_open=True)
    eta = V.real("eta", eta, low=0.0, low_open=True)
    lam = V.real("lam", lam, low=0.0, low_open=True)
    if not eta * lam < 2:
        raise ValueError(f"eta: expected a stable step eta * lam < 2, got {eta * lam:.6g}")
    return max(1 - alpha, abs(1 - eta * lam))


def uniform_average_bias(eta, lam, t, x0: float = 1.0) -> np.ndarray:
    r"""Noise-free uniform average :math:`\frac1t\sum_{s=1}^t x_s = x_0\,\rho(1-\rho^t)/(t\,\eta\lambda)` (:math:`\rho = 1-\eta\lambda`): :math:`\sim 1/(\eta\lambda t)`."""
    eta = V.real("eta", eta, low=0.0, low_open=True)
    lam = V.real("lam", lam, low=0.0, low_open=True)
    tt = _whole("t", V.array("t", t, ndim=(0, 1), low=1.0))
    x0 = V.real("x0", x0)
    rho = 1 - eta * lam
    return x0 * rho * (1 - rho**tt) / (tt * eta * lam)


# ----------------------------------------------------------------------------- weight-decay equilibria
def wd_angular_update(eta, wd, momentum=0.0) -> float:
    r"""Equilibrium angle per step of scale-invariant weights under SGD with momentum :math:`\alpha` and coupled decay :math:`\lambda`: :math:`\sqrt{2\eta\lambda/(1+\alpha)}`.

    Leading order in :math:`\eta\lambda` for uncorrelated gradients (a random walk on the sphere).
    """
    eta = V.real("eta", eta, low=0.0, low_open=True)
    wd = V.real("wd", wd, low=0.0, low_open=True)
    momentum = V.real("momentum", momentum, low=0.0, high=1.0, high_open=True)
    return math.sqrt(2 * eta * wd / (1 + momentum))


def wd_equilibrium_norm(eta, wd, grad_scale, momentum=0.0) -> float:
    r""":math:`\|w\| = \big(\eta\tilde G^2/(2\lambda(1-\alpha))\big)^{1/4}` with :math:`\tilde G = \|g\|\,\|w\|` (``grad_scale``), leading order."""
    eta = V.real("eta", eta, low=0.0, low_open=True)
    wd = V.real("wd", wd, low=0.0, low_open=True)
    G = V.real("grad_scale", grad_scale, low=0.0, low_open=True)
    momentum = V.real("momentum", momentum, low=0.0, high=1.0, high_open=True)
    return (eta * G**2 / (2 * wd * (1 - momentum))) ** 0.25


def sign_wd_angular_update(eta, wd) -> float:
    r"""Sign-type updates (:math:`\|u\|^2 = d`) with decoupled decay :math:`w^+ = w - \eta(u + \lambda w)`: angle :math:`\sqrt{2\eta\lambda}`."""
    eta = V.real("eta", eta, low=0.0, low_open=True)
    wd = V.real("wd", wd, low=0.0, low_open=True)
    return math.sqrt(2 * eta * wd)


def sign_wd_equilibrium_norm(eta, wd, d) -> float:
    r"""Sign-type updates with decoupled decay: :math:`\|w\| = \sqrt{\eta d/(2\lambda)}` (leading order, updates orthogonal to :math:`w` on average)."""
    eta = V.real("eta", eta, low=0.0, low_open=True)
    wd = V.real("wd", wd, low=0.0, low_open=True)
    d = V.integer("d", d, low=1)
    return math.sqrt(eta * d / (2 * wd))


def sign_wd_start_cosine(eta, wd, T, d, w0_norm) -> np.ndarray:
    r"""Mean-square cosine :math:`E\langle w_T, w_0\rangle/\sqrt{E\|w_T\|^2\,\|w_0\|^2}` of sign-type updates with
    decoupled decay, :math:`w^+ = (1-\eta\lambda)w - \eta u`, :math:`\|u\|^2 = d`, :math:`E[u\,|\,w] = 0`.

    The weights are an EMA of :math:`-u/\lambda` with timescale :math:`\tau = 1/(\eta\lambda)`: the start keeps the share
    :math:`a = (1-\eta\lambda)^T` (:math:`\approx e^{-T/\tau}`), :math:`E\langle w_T, w_0\rangle = a\|w_0\|^2`, and
    :math:`E\|w^+\|^2 = (1-\eta\lambda)^2E\|w\|^2 + \eta^2d` gives :math:`E\|w_T\|^2 = a^2\|w_0\|^2 +
    (1-a^2)\,\eta d/(\lambda(2-\eta\lambda))` exactly; the cosine is :math:`a\|w_0\|/\sqrt{E\|w_T\|^2}`, which is
    :math:`a` from the mean-square equilibrium :math:`\|w_0\|^2 = \eta d/(\lambda(2-\eta\lambda))`. ``T``: horizons
    (a scalar or an array); ``eta * wd < 1``.
    """
    eta = V.real("eta", eta, low=0.0, low_open=True)
    wd = V.real("wd", wd, low=0.0, low_open=True)
    tt = _whole("T", V.array("T", T, ndim=(0, 1), low=0.0))
    d = V.integer("d", d, low=1)
    w0 = V.real("w0_norm", w0_norm, low=0.0, low_open=True)
    if not eta * wd < 1:
        raise ValueError(f"wd: expected eta * wd < 1, got {eta * wd:.6g}")
    a = (1 - eta * wd) ** tt
    return a * w0 / np.sqrt(a**2 * w0**2 + (1 - a**2) * eta * d / (wd * (2 - eta * wd)))


def sgd_wd_exact(eta, wd, grad_scale) -> tuple[float, float]:
    r"""Exact equilibrium of plain SGD with coupled decay when :math:`g \perp w`, :math:`\|g\| = \tilde G/\|w\|`: ``(angle, norm)``.

    :math:`v = \|w\|^2` obeys :math:`v^+ = (1-\eta\lambda)^2 v + \eta^2\tilde G^2/v` (Pythagoras), so
    :math:`v^{\star2} = \eta\tilde G^2/(\lambda(2-\eta\lambda))` and at the fixed point
    :math:`\cos\theta = (1-\eta\lambda)\|w\|/\|w^+\| = 1-\eta\lambda`: angle :math:`\arccos(1-\eta\lambda) = \sqrt{2\eta\lambda}\,(1 + O(\eta\lambda))`.
    """
    eta = V.real("eta", eta, low=0.0, low_open=True)
    wd = V.real("wd", wd, low=0.0, low_open=True)
    G = V.real("grad_scale", grad_scale, low=0.0, low_open=True)
    if not eta * wd < 1:
        raise ValueError(f"wd: expected eta * wd < 1, got {eta * wd:.6g}")
    return math.acos(1 - eta * wd), (eta * G**2 / (wd * (2 - eta * wd))) ** 0.25


def wd_norm_relaxation(eta, wd) -> float:
    r"""Per-step multiplier of the distance of :math:`\|w\|^2` to its fixed point (plain SGD, :func:`sgd_wd_exact`'s map).

    The derivative of :math:`v \mapsto (1-\eta\lambda)^2v + \eta^2\tilde G^2/v` at :math:`v^\star` is
    :math:`2(1-\eta\lambda)^2 - 1 \approx 1 - 4\eta\lambda`: the transient lasts about :math:`1/(4\eta\lambda)` steps.
    """
    eta = V.real("eta", eta, low=0.0, low_open=True)
    wd = V.real("wd", wd, low=0.0, low_open=True)
    return 2 * (1 - eta * wd) ** 2 - 1


def no_decay_norm(eta, t, momentum=0.0, grad_scale=1.0, w0_norm=1.0) -> np.ndarray:
    r""":math:`\|w_t\|` of scale-invariant weights without weight decay (random-walk model), leading order:
    :math:`\|w_t\|^4 = \|w_0\|^4 + 2\eta^2\tilde G^2 t/(1-\alpha)^2`.

    Heavy ball :math:`m \leftarrow \alpha m + g`, :math:`w \leftarrow w - \eta m`, with :math:`g \perp w`,
    :math:`\|g\| = \tilde G/\|w\|` in uncorrelated directions. With :math:`v = \|w\|^2`, :math:`M = E\|m\|^2 = \|g\|^2/(1-\alpha^2)`
    and :math:`a = w\cdot m`: :math:`a_t = \alpha(a_{t-1} - \eta M)` settles at :math:`-\alpha\eta M/(1-\alpha)`, so
    :math:`\Delta v = -2\eta a + \eta^2 M = \eta^2\tilde G^2/((1-\alpha)^2 v)` (the norm identity
    :math:`\|w^+\|^2 = \|w\|^2 + \eta^2\|g\|^2` at :math:`\alpha = 0`): :math:`v^2` grows linearly. Leading order in
    :math:`\eta\tilde G/((1-\alpha)v)` (the effective step over the norm) and :math:`1/d`.
    """
    eta = V.real("eta", eta, low=0.0, low_open=True)
    tt = _whole("t", V.array("t", t, ndim=(0, 1), low=0.0))
    momentum = V.real("momentum", momentum, low=0.0, high=1.0, high_open=True)
    G = V.real("grad_scale", grad_scale, low=0.0, low_open=True)
    w0 = V.real("w0_norm", w0_norm, low=0.0, low_open=True)
    return (w0**4 + 2 * eta**2 * G**2 * tt / (1 - momentum) ** 2) ** 0.25


def no_decay_angular_update(eta, t, momentum=0.0, grad_scale=1.0, w0_norm=1.0) -> np.ndarray:
    r"""Angle per step of scale-invariant weights without weight decay (random-walk model), leading order:
    :math:`\theta_t = \eta\tilde G/(\sqrt{1-\alpha^2}\,\|w_t\|^2)` with :math:`\|w_t\|` from :func:`no_decay_norm`.

    The step :math:`\eta m` is almost orthogonal to :math:`w` (its parallel part is :math:`O(\theta)` of it) and
    :math:`E\|m\|^2 = \tilde G^2/(\|w\|^2(1-\alpha^2))`. For large :math:`t`,
    :math:`\theta_t \to \sqrt{(1-\alpha)/(1+\alpha)}/\sqrt{2t}`, whatever :math:`\eta` and :math:`\tilde G`: without decay
    the rotation never settles (the norm identity's consequence; weight decay's equilibrium is
    :func:`wd_angular_update`).
    """
    v = no_decay_norm(eta, t, momentum, grad_scale, w0_norm) ** 2
    return eta * grad_scale / (math.sqrt(1 - momentum**2) * v)


# ----------------------------------------------------------------------------- Lion's box
def lion_box_radius(eta, wd) -> float:
    r"""The invariant box of Lion (any sign update) with decoupled decay: :math:`\|x\|_\infty \le 1/\lambda`, for :math:`\eta\lambda \le 1`.

    :math:`|x^+| \le (1-\eta\lambda)|x| + \eta \le (1-\eta\lambda)/\lambda + \eta = 1/\lambda`; outside,
    :math:`\lambda|x^+| - 1 \le (1-\eta\lambda)(\lambda|x| - 1)`, with equality when the update points outwards.
    """
    eta = V.real("eta", eta, low=0.0, low_open=True)
    wd = V.real("wd", wd, low=0.0, low_open=True)
    if not eta * wd <= 1:
        raise ValueError(f"eta: the box is invariant only for eta * wd <= 1, got {eta * wd:.6g}")
    return 1.0 / wd


def _quadratic(H, center) -> tuple[np.ndarray, np.ndarray]:
    """A convex quadratic's ``(H, c)``: ``H`` symmetric PSD (an indefinite ``H`` has saddles, which a local
    method would return as if they were minimizers), ``c`` of matching length."""
    h = V.symmetric_psd("H", V.array("H", H, ndim=2), "the curvature H of the convex quadratic")
    c = V.array("center", center, shape=(h.shape[0],))
    return h, c


def box_minimizer(H, center, radius) -> np.ndarray:
    r""":math:`\arg\min_{\|x\|_\infty \le r} \tfrac12(x-c)^\top H(x-c)` by SciPy's L-BFGS-B (gradient supplied, tolerances at round-off).

    The contract is a convex :math:`f` (Lion's box limit, :func:`lion_box_radius`): ``H`` symmetric positive
    semidefinite, where every local minimizer on the box is global and L-BFGS-B finds one. An indefinite
    ``H`` is refused (``ValueError`` naming ``H``): the box problem is then non-convex (NP-hard in general),
    and the method would stop at a stationary point such as a saddle.
    """
    h, c = _quadratic(H, center)
    r = V.real("radius", radius, low=0.0, low_open=True)
    res = optimize.minimize(lambda x: 0.5 * (x - c) @ h @ (x - c), np.clip(c, -r, r), jac=lambda x: h @ (x - c),
                            method="L-BFGS-B", bounds=[(-r, r)] * c.size,
                            options={"ftol": 1e-15, "gtol": 1e-13, "maxiter": 10_000})
    return np.asarray(res.x)


def l2_minimizer(H, center, wd) -> np.ndarray:
    r""":math:`\arg\min \tfrac12(x-c)^\top H(x-c) + \tfrac\lambda2\|x\|^2 = (H + \lambda I)^{-1}Hc` (what an L2 penalty would give).

    ``H`` symmetric PSD (as for :func:`box_minimizer`), ``wd`` :math:`\lambda > 0`: the objective is then strictly
    convex and the formula is its unique minimizer.
    """
    h, c = _quadratic(H, center)
    wd = V.real("wd", wd, low=0.0, low_open=True)
    return np.linalg.solve(h + wd * np.eye(c.size), h @ c)


def logistic_minimizer(X, y, *, radius=None, wd: float = 0.0) -> np.ndarray:
    r""":math:`\arg\min_{\|x\|_\infty\le r}\ \frac1n\sum_i\log(1 + e^{-y_i x_i\cdot x}) + \tfrac{\lambda}2\|x\|^2` by SciPy's L-BFGS-B.

    ``X`` (n, d), labels ``y`` :math:`\pm1`; ``radius`` :math:`r` (``None``: no box), ``wd`` :math:`\lambda \ge 0` (an L2
    penalty; 0: none). Gradient supplied, tolerances at round-off. Without box and penalty the minimizer exists only
    for data that are not linearly separable (``ValueError`` when L-BFGS-B does not converge).
    """
    Xa = V.array("X", X, ndim=2)
    ya = V.one_per_row("y", V.array("y", y, ndim=1), "X", Xa.shape[0])
    if not np.all(np.abs(ya) == 1):
        raise ValueError("y: expected labels +1 or -1")
    r = None if radius is None else V.real("radius", radius, low=0.0, low_open=True)
    wd = V.real("wd", wd, low=0.0)
    n = Xa.shape[0]

    def fun(x):
        m = ya * (Xa @ x)
        return float(np.mean(np.logaddexp(0.0, -m)) + 0.5 * wd * x @ x)

    def jac(x):
        m = ya * (Xa @ x)
        return Xa.T @ (-ya * 0.5 * (1 - np.tanh(m / 2))) / n + wd * x   # sigmoid(-m) without overflow

    res = optimize.minimize(fun, np.zeros(Xa.shape[1]), jac=jac, method="L-BFGS-B",
                            bounds=None if r is None else [(-r, r)] * Xa.shape[1],
                            options={"ftol": 1e-15, "gtol": 1e-13, "maxiter": 10_000})
    if r is None and not res.success and np.max(np.abs(jac(res.x))) > 1e-8:
        raise ValueError(f"X: L-BFGS-B did not converge ({res.message}); separable data have no unconstrained minimizer")
    return np.asarray(res.x)


# ----------------------------------------------------------------------------- fitting a user's run
def schedule_from_log(step, lr, *, max_bytes=None) -> np.ndarray:
    r"""Per-step step sizes :math:`\eta_0..\eta_{S-1}` (:math:`S` = the last logged step) from a sparse log of (step, lr).

    The logged rate at step :math:`s_j` is taken to hold for the steps :math:`s_j \le t < s_{j+1}` (and from 0 up to
    the first logged step). Steps must be strictly increasing non-negative integers. ``max_bytes``: the allocation
    limit (:func:`theory.validate.byte_limit`) for the :math:`S` per-step values.
    """
    s = V.array("step", step, ndim=1, low=0.0)
    e = V.array("lr", lr, shape=(s.size,), low=0.0)
    if np.any(s != np.round(s)) or np.any(np.diff(s) <= 0):
        raise ValueError("step: expected strictly increasing integer steps")
    S = int(s[-1])
    if S < 1:
        raise ValueError(f"step: the log must reach step 1 or later, got last step {S}")
    V.check_bytes({"step": f"[..., {S}]"}, 3 * 8 * S, what="the per-step schedule up to the last logged step",
                  max_bytes=max_bytes)
    idx = np.searchsorted(s, np.arange(S), side="right") - 1
    return e[np.maximum(idx, 0)]


def fit_nqm_to_log(step, lr, loss, *, n_modes: int = 12, max_bytes=None) -> dict:
    r"""Fit the noisy quadratic model to a logged run: :math:`L_t \approx L_\infty + \sum_k \tfrac12\lambda_k(a_k A_{k,t} + s_k B_{k,t})`.

    :math:`\lambda_k` are ``n_modes`` curvatures log-spaced from :math:`1/\sum_t\eta_t` (slower modes never move) to
    :math:`1.9/\max_t\eta_t` (faster ones would diverge); :math:`A_{k,t}` is :math:`E x_t^2` of SGD along the logged
    schedule from :math:`x_0^2 = 1` without noise and :math:`B_{k,t}` from :math:`x_0 = 0` with unit noise
    (:func:`theory.nqm.moment_recursion`). The loss is linear in the non-negative unknowns
    :math:`a_k = x_{k,0}^2` (initial distance), :math:`s_k = \sigma_k^2` (noise) and :math:`L_\infty`, fitted by
    non-negative least squares (SciPy's ``nnls``). Returns ``lam``, ``a``, ``sigma2``, ``floor``, ``predicted``
    (at the logged steps), ``residual_rms`` and ``relative_residual`` (the RMS residual over the loss's range).
    ``max_bytes``: the allocation limit (:func:`theory.validate.byte_limit`) for the (steps, modes) moment tables.

    The per-mode weights and the floor are not identifiable from one loss curve (a mode slower than the run is a
    constant, traded against :math:`L_\infty`; the estimates jump when the log is subsampled) and carry no error:
    :func:`theory.noisy_quadratic_fit.fit_log` is the fit with standard errors behind ``steplab overlay``.
    """
    s = V.array("step", step, ndim=1, low=0.0)
    L = V.array("loss", loss, shape=(s.size,), low=0.0)  # the model's loss is a non-negative combination
    n_modes = V.integer("n_modes", n_modes, low=1, high=64)
    last = int(s[-1])
    V.check_bytes({"step": f"[..., {last}]", "n_modes": n_modes}, 2 * 8 * (last + 1) * n_modes,
                  what="the two (steps, n_modes) moment tables", max_bytes=max_bytes)
    eta = schedule_from_log(s, lr, max_bytes=max_bytes)
    if not np.max(eta) > 0:
        raise ValueError("lr: expected at least one positive learning rate")
    lam = np.geomspace(1.0 / eta.sum(), 1.9 / eta.max(), n_modes)
    A = nqm.moment_recursion(lam, eta, 1.0, sigma_a=0.0)            # (S+1, K)
    B = nqm.moment_recursion(lam, eta, 0.0, sigma_a=1.0)
    at = s.astype(int)
    X = np.hstack([0.5 * lam * A[at], 0.5 * lam * B[at], np.ones((at.size, 1))])
    scale = np.maximum(np.abs(X).max(axis=0), 1e-300)                 # column scaling keeps nnls well conditioned
    coef, _ = optimize.nnls(X / scale, L, maxiter=50 * X.shape[1])
    coef = coef / scale
    pred = X @ coef
    resid = float(np.sqrt(np.mean((pred - L) ** 2)))
    span = float(np.ptp(L)) or 1.0
    return {"lam": lam, "a": coef[:n_modes], "sigma2": coef[n_modes:2 * n_modes], "floor": float(coef[-1]),
            "predicted": pred, "residual_rms": resid, "relative_residual": resid / span, "eta": eta}


# ----------------------------------------------------------------------------- a river valley (two modes)
def _river_inputs(lam_river, eta) -> tuple[np.ndarray, np.ndarray]:
    lam = V.array("lam_river", lam_river, ndim=(0, 1), low=0.0)
    e = V.array("eta", eta, ndim=(1, 2), low=0.0)
    if lam.ndim == 0 and e.ndim != 1:
        raise ValueError(f"eta: expected one schedule (T,) for one river curvature, got shape {e.shape}")
    if lam.ndim == 1 and (e.ndim != 2 or e.shape[0] != lam.size):
        raise ValueError(f"lam_river, eta: expected one schedule per river curvature ({lam.size}), as eta (k, T), "
                         f"got eta of shape {e.shape}")
    return lam, e


def river_progress(lam_river, eta) -> np.ndarray:
    r"""The exact mean fraction of the way to the river's end after the schedule ``eta``: :math:`1 - \prod_s(1 - \eta_s\lambda_r)`.

    The river is the flat mode of a two-mode valley, :math:`\frac{\lambda_r}2(r - R)^2` with :math:`\lambda_r` tiny, beside a
    stiff noisy hill mode. Along the river the gradient is linear and its noise has mean zero, so
    :math:`E(r_{t+1} - R) = (1 - \eta_t\lambda_r)E(r_t - R)` exactly, whatever the hill does, and from :math:`r_0 = 0`,
    :math:`E r_T/R = 1 - \prod_s(1-\eta_s\lambda_r)`. ``lam_river``: a curvature or an (k,) array; ``eta``: one schedule
    (T,) or (k, T), one per curvature. Returns an array of the broadcast shape.
    """
    lam, e = _river_inputs(lam_river, eta)
    factors = 1.0 - e * (lam[..., None] if lam.ndim else lam)
    return 1.0 - np.prod(factors, axis=-1)


def river_area_law(lam_river, eta) -> np.ndarray:
    r"""The leading order of :func:`river_progress`: :math:`\lambda_r\sum_s\eta_s` (progress along the river is the area
    under the step-size schedule), with the bound :math:`0 \le \lambda_r\sum_s\eta_s - E r_T/R \le (\lambda_r\sum_s\eta_s)^2/2`
    (for every :math:`\eta_s\lambda_r \in [0, 1]`: :math:`1 - \sum_s a_s \le \prod_s(1-a_s) \le e^{-\sum_s a_s}`).
    Returns ``{"law": ..., "next_order": ...}`` (the bound), arrays of the broadcast shape.
    """
    lam, e = _river_inputs(lam_river, eta)
    law = (lam[..., None] if lam.ndim else lam) * np.sum(e, axis=-1, keepdims=True)
    law = law[..., 0]
    return {"law": law, "next_order": law**2 / 2}


# ----------------------------------------------------------------------------- a non-convex loss in Lion's box
def _double_well(a, C) -> tuple[np.ndarray, np.ndarray]:
    aa = V.array("a", a, ndim=1)
    cc = V.symmetric_psd("C", V.array("C", C, shape=(aa.size, aa.size)), "C")
    return aa, cc


def double_well_grad(a, C, x) -> np.ndarray:
    r"""The gradient of :math:`f(x) = \frac14\sum_k(x_k^2 - a_k)^2 + \frac12x^\top Cx`: :math:`x_k(x_k^2 - a_k) + (Cx)_k`.

    A double well per coordinate (minima near :math:`\pm\sqrt{a_k}` for :math:`a_k > 0`) coupled by a PSD :math:`C`: a
    non-convex loss with many local minimizers on a box. ``a`` (d,), ``C`` (d, d) symmetric PSD, ``x`` (d,).
    """
    aa, cc = _double_well(a, C)
    xx = V.array("x", x, shape=(aa.size,))
    return xx * (xx * xx - aa) + cc @ xx


def double_well_kkt_point(a, C, radius, start) -> np.ndarray:
    r"""A KKT point of :math:`\min_{\|x\|_\infty\le r} f(x)` (:func:`double_well_grad`'s :math:`f`) reached by SciPy's L-BFGS-B from ``start``.

    The problem is non-convex: which KKT point is found depends on the start (a local method descends into the
    basin it starts in). Tolerances at round-off; ``start`` (d,) inside the box.
    """
    aa, cc = _double_well(a, C)
    r = V.real("radius", radius, low=0.0, low_open=True)
    x0 = V.array("start", start, shape=(aa.size,), low=-r, high=r)

    def fun(x):
        return float(0.25 * np.sum((x * x - aa) ** 2) + 0.5 * x @ cc @ x)

    res = optimize.minimize(fun, x0, jac=lambda x: x * (x * x - aa) + cc @ x, method="L-BFGS-B",
                            bounds=[(-r, r)] * aa.size, options={"ftol": 1e-15, "gtol": 1e-13, "maxiter": 10_000})
    return np.asarray(res.x)


def box_kkt_residual(a, C, radius, x) -> float:
    r"""The stationarity residual of :math:`\min_{\|x\|_\infty\le r} f(x)` at ``x``: :math:`\|x - \Pi_{[-r,r]^d}(x - \nabla f(x))\|_\infty`.

    It is 0 exactly at the KKT points (an interior coordinate with :math:`\partial_kf = 0`, a coordinate on a face with
    :math:`\partial_kf` pointing out of the box) and grows like the distance to the nearest one.
    """
    aa, cc = _double_well(a, C)
    r = V.real("radius", radius, low=0.0, low_open=True)
    xx = V.array("x", x, shape=(aa.size,))
    g = xx * (xx * xx - aa) + cc @ xx
    return float(np.max(np.abs(xx - np.clip(xx - g, -r, r))))
