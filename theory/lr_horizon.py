r"""The best step size against the training horizon on a power-law noisy quadratic.

**The model.** A diagonal noisy quadratic (:mod:`theory.nqm`) whose curvatures follow a power law
:math:`\lambda_j = j^{-\beta}` (capacity exponent :math:`\beta > 1`) and whose initial error loads mode
:math:`j` with :math:`\lambda_j E x_{j,0}^2 = j^{-(1+s\beta)}` (source exponent :math:`s > 0`), so gradient
flow for a time :math:`\tau` leaves the bias :math:`\tfrac12\sum_j j^{-1-s\beta}e^{-2\tau j^{-\beta}} \sim \tau^{-s}`.
The gradient noise is additive with per-mode variance :math:`\sigma^2\lambda_j` (:math:`C = \sigma^2 H`).
Modes :math:`j \le J_0` are kept one by one; beyond, :math:`j \in (J_0, d]` is cut into log-spaced bins, each
represented by one mode at the bin's geometric centre and weighted by the bin's width (:func:`spectrum`). A weight
:math:`w` multiplies a mode's :math:`E x_0^2` and noise variance, which is exactly :math:`w` copies of it: the
model stays an NQM, with :math:`\sum_k w_k = d - \tfrac12`.

**Exact final loss.** With :math:`q_k = (1 - \eta\lambda_k)^2` a constant step gives, per mode,
:math:`m_{k,N} = q_k^N m_{k,0} + \eta\sigma_k^2(1 - q_k^N)/(\lambda_k(2 - \eta\lambda_k))`
(:func:`constant_step_loss`, the geometric sum of :func:`theory.nqm.moment_recursion`); a schedule goes through
:func:`theory.nqm.final_second_moment` (:func:`schedule_loss`). Both minimize in :math:`\log\eta` by SciPy's
bounded scalar search (:func:`optimal_constant_step`, :func:`optimal_peak`), never on a grid.

**The constant step's law** (derived here with sympy, :func:`asymptotic_loss_expr`). For :math:`\eta\lambda_1 \ll 1`
and :math:`1 \ll (\eta N)^{1/\beta} \ll d`,

.. math:: E L_N \approx A(\eta N)^{-s} + C\eta, \quad A = \frac{\Gamma(s)}{2\beta\,2^{s}}, \quad
          C = \frac{\sigma^2\,\mathrm{tr}H}{4}, \qquad
          \eta^*(N) = \Big(\frac{sA}{C}\Big)^{1/(s+1)} N^{-s/(s+1)} .

Its first corrections come from the factor :math:`2 - \eta\lambda` (relative :math:`+2\kappa\eta`,
:math:`\kappa = \sum w\lambda^2/(2\sum w\lambda)`) and the slow modes that have not reached their noise floor
(:math:`-D\eta\tau^{-(1-1/\beta)}`, :math:`D = \sigma^2\Gamma(1-1/\beta)/(4\beta\,2^{1-1/\beta})`); they shift the local
slope :math:`d\log\eta^*/d\log N` by :func:`slope_correction`. The law bends at both ends: below the horizon
:func:`cap_horizon` the formula asks for :math:`\eta > 2/\lambda_1`, where SGD diverges; beyond
:math:`(\eta N)^{1/\beta} \approx d` every mode is learnt and the last bias decays exponentially.

**The optimal decay's peak** (Li et al. 2026, COLT extended abstract): with the shape
:math:`(1 - t/N)^{2\beta-1}` the tuned peak scales as :math:`N^{-\nu}`,
:math:`\nu = (s - 1 + 1/\beta)/(s + 1/\beta)` (:func:`peak_exponent`).

No JAX and no I/O; every public function validates its arguments (:mod:`theory.validate`).
"""
from __future__ import annotations

import functools
import math

import numpy as np
import sympy as sp
from scipy import optimize, special

from theory import validate as V
from theory import nqm

__all__ = ["EXACT_MODES", "BINS", "spectrum", "constant_step_loss", "optimal_constant_step", "power_schedule",
           "schedule_loss", "optimal_peak", "asymptotic_loss_expr", "constant_exponent", "asymptotic_step",
           "slope_correction", "corrected_step", "bend_horizon", "cutoff_step", "cutoff_horizon", "cap_horizon",
           "peak_exponent", "hard_regime", "wsd_schedule", "optimal_wsd"]

EXACT_MODES = 16   #: modes kept one by one (the top of the spectrum, where the integers matter)
BINS = 24          #: log-spaced bins per decade of j beyond EXACT_MODES
_LOG_ETA_LOW = math.log(1e-9)   # the search's lower end: far below any optimum of the settings used
_CAP = 2.0                      # SGD on mode 1 is stable iff eta * lambda_1 < 2


def _model(beta, s, d) -> tuple[float, float, int]:
    beta = V.real("beta", beta, low=1.0, low_open=True, high=8.0)
    s = V.real("s", s, low=0.0, low_open=True, high=8.0)
    d = V.integer("d", d, low=EXACT_MODES + 1, high=10**9)
    return beta, s, d


@functools.lru_cache(maxsize=64)
def _spectrum(beta: float, s: float, d: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    j_top = np.arange(1, EXACT_MODES + 1, dtype=float)
    decades = math.log10((d + 0.5) / (EXACT_MODES + 0.5))
    edges = np.geomspace(EXACT_MODES + 0.5, d + 0.5, max(2, int(math.ceil(BINS * decades))) + 1)
    j = np.r_[j_top, np.sqrt(edges[1:] * edges[:-1])]
    w = np.r_[np.ones(EXACT_MODES), np.diff(edges)]
    lam = j ** -beta
    load = w * j ** -(1.0 + s * beta)          # w * lambda * E x0^2: twice each mode's initial loss
    for a in (lam, w, load):
        a.setflags(write=False)
    return lam, w, load


def spectrum(beta, s, d) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""``(lam, weight, load)`` of the power-law model: curvatures :math:`\lambda_k = j_k^{-\beta}`, the number of modes
    :math:`w_k` each stands for, and :math:`w_k\lambda_k E x_{k,0}^2 = w_k j_k^{-(1+s\beta)}`.

    ``beta`` in (1, 8], ``s`` in (0, 8], ``d`` (the largest mode index) an integer > :data:`EXACT_MODES`.
    Read-only arrays (cached).
    """
    return _spectrum(*_model(beta, s, d))


def _const_loss(eta: np.ndarray, n: int, lam, w, load, sigma2: float) -> np.ndarray:
    """Exact E L_N at constant steps ``eta`` (m,); log-domain powers so that q^N neither under- nor overflows
    silently and 1 - q^N keeps its digits when eta lambda N is small."""
    h = eta[:, None] * lam
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        log_qn = 2.0 * n * np.log(np.abs(1.0 - h))
        qn = np.exp(log_qn)
        filled = -np.expm1(log_qn)
        noise = np.where(h < _CAP, eta[:, None] * sigma2 * w * lam * filled / (2.0 - h), np.inf)
        return 0.5 * (qn @ load) + 0.5 * np.sum(noise, axis=1)


def constant_step_loss(eta, n_steps, beta, s, sigma2, d) -> np.ndarray:
    r"""Exact :math:`E L_N` of SGD at the constant step(s) ``eta`` after ``n_steps`` steps on the model of :func:`spectrum`.

    .. math:: E L_N = \tfrac12\sum_k w_k\Big[j_k^{-1-s\beta}q_k^N
              + \frac{\eta\sigma^2\lambda_k(1 - q_k^N)}{2 - \eta\lambda_k}\Big], \qquad q_k = (1-\eta\lambda_k)^2,

    ``inf`` where :math:`\eta\lambda_1 \ge 2` (no stationary law: the second moment grows without bound).
    ``eta``: a positive step or an (m,) array; ``sigma2`` :math:`\ge 0`. Returns an array shaped like ``eta``.
    """
    e = V.array("eta", eta, ndim=(0, 1), low=0.0, low_open=True)
    n = V.integer("n_steps", n_steps, low=1, high=10**15)
    sig = V.real("sigma2", sigma2, low=0.0)
    lam, w, load = spectrum(beta, s, d)
    return _const_loss(np.atleast_1d(e), n, lam, w, load, sig).reshape(e.shape)


def optimal_constant_step(n_steps, beta, s, sigma2, d, *, xatol: float = 1e-10) -> tuple[float, float]:
    r"""``(eta_star, loss)``: the constant step minimizing the exact :func:`constant_step_loss` at horizon ``n_steps``.

    SciPy's bounded scalar search in :math:`\log\eta` on :math:`[10^{-9}, 2/\lambda_1)` (the log of the loss is
    minimized: its range spans decades), to ``xatol`` in :math:`\log\eta`. ``sigma2`` must be > 0 (without noise
    the best step is the stability edge itself).
    """
    n = V.integer("n_steps", n_steps, low=1, high=10**15)
    sig = V.real("sigma2", sigma2, low=0.0, low_open=True)
    tol = V.real("xatol", xatol, low=0.0, low_open=True, high=0.1)
    lam, w, load = spectrum(beta, s, d)
    hi = math.log(_CAP * (1 - 1e-9) / float(lam.max()))

    def f(log_eta: float) -> float:
        return math.log(float(_const_loss(np.array([math.exp(log_eta)]), n, lam, w, load, sig)[0]))

    res = optimize.minimize_scalar(f, bounds=(_LOG_ETA_LOW, hi), method="bounded", options={"xatol": tol})
    return math.exp(res.x), math.exp(res.fun)


def power_schedule(peak, n_steps, gamma) -> np.ndarray:
    r"""Step sizes :math:`\eta_t = \eta_{\rm peak}(1 - t/N)^{\gamma}`, :math:`t = 0..N-1` (step time; :math:`\gamma = 1` is
    linear decay to zero, :math:`\gamma = 2\beta - 1` the optimal shape's exponent)."""
    p = V.real("peak", peak, low=0.0, low_open=True)
    n = V.integer("n_steps", n_steps, low=1, high=10**8)
    g = V.real("gamma", gamma, low=0.0, high=16.0)
    return p * (1.0 - np.arange(n) / n) ** g


def _sched_loss(eta: np.ndarray, lam, w, load, sigma2: float) -> float:
    m0 = load / lam                               # w * E x0^2
    m = nqm.final_second_moment(lam, eta, m0, np.sqrt(sigma2 * w * lam))
    return float(nqm.expected_loss(lam, m))


def schedule_loss(peak, n_steps, gamma, beta, s, sigma2, d) -> float:
    r"""Exact :math:`E L_N` of SGD along :func:`power_schedule` on the model of :func:`spectrum`, from
    :func:`theory.nqm.final_second_moment` (suffix products; costs :math:`O(Nd)`)."""
    sig = V.real("sigma2", sigma2, low=0.0)
    lam, w, load = spectrum(beta, s, d)
    n = V.integer("n_steps", n_steps, low=1, high=10**8)
    V.check_bytes({"n_steps": n, "d": f"{lam.size} represented modes"}, 4 * 8 * n * lam.size,
                  what="the four (N, modes) factor and suffix-product tables")
    return _sched_loss(power_schedule(peak, n, gamma), lam, w, load, sig)


def optimal_peak(n_steps, gamma, beta, s, sigma2, d, *, xatol: float = 1e-6) -> tuple[float, float]:
    r"""``(peak, loss)``: the peak of :func:`power_schedule` minimizing :func:`schedule_loss`, by SciPy's bounded
    scalar search in :math:`\log\eta_{\rm peak}` on :math:`[10^{-9}, 2/\lambda_1)`."""
    n = V.integer("n_steps", n_steps, low=1, high=10**8)
    g = V.real("gamma", gamma, low=0.0, high=16.0)
    sig = V.real("sigma2", sigma2, low=0.0, low_open=True)
    tol = V.real("xatol", xatol, low=0.0, low_open=True, high=0.1)
    lam, w, load = spectrum(beta, s, d)
    V.check_bytes({"n_steps": n, "d": f"{lam.size} represented modes"}, 4 * 8 * n * lam.size,
                  what="the four (N, modes) factor and suffix-product tables")
    shape = power_schedule(1.0, n, g)
    hi = math.log(_CAP * (1 - 1e-9) / float(lam.max()))
    res = optimize.minimize_scalar(lambda lp: math.log(_sched_loss(math.exp(lp) * shape, lam, w, load, sig)),
                                   bounds=(_LOG_ETA_LOW, hi), method="bounded", options={"xatol": tol})
    return math.exp(res.x), math.exp(res.fun)


# ----------------------------------------------------------------------------- the asymptotic law (sympy)
_eta, _N, _A, _C, _s = sp.symbols("eta N A C s", positive=True)


@functools.cache
def asymptotic_loss_expr() -> tuple[sp.Expr, sp.Expr, sp.Expr]:
    r"""``(loss, eta_star, exponent)``: :math:`A(\eta N)^{-s} + C\eta`, its minimizer over :math:`\eta` (sympy's root of
    the derivative) and :math:`d\log\eta^*/d\log N = -s/(s+1)`."""
    loss = _A * (_eta * _N) ** (-_s) + _C * _eta
    (root,) = sp.solve(sp.diff(loss, _eta), _eta)
    exponent = sp.simplify(_N * sp.diff(root, _N) / root)
    return loss, sp.simplify(root), exponent


def constant_exponent(s) -> float:
    r"""The constant step's horizon exponent :math:`d\log\eta^*/d\log N = -s/(s+1)` (from :func:`asymptotic_loss_expr`)."""
    sv = V.real("s", s, low=0.0, low_open=True, high=8.0)
    return float(_exponent_fn()(sv))


@functools.cache
def _exponent_fn():
    return sp.lambdify(_s, asymptotic_loss_expr()[2], "math")


def _constants(beta: float, s: float, d: int, sigma2: float) -> tuple[float, float, float, float]:
    """A, C, D, kappa of the module docstring (A and D from the continuum integrals; C and kappa summed on the model)."""
    lam, w, _ = _spectrum(beta, s, d)
    a = math.gamma(s) / (2.0 * beta * 2.0**s)
    c = sigma2 * float(np.sum(w * lam)) / 4.0
    dd = sigma2 * math.gamma(1.0 - 1.0 / beta) / (4.0 * beta * 2.0 ** (1.0 - 1.0 / beta))
    kappa = float(np.sum(w * lam**2)) / (2.0 * float(np.sum(w * lam)))
    return a, c, dd, kappa


def loss_constants(beta, s, sigma2, d) -> tuple[float, float, float, float]:
    r"""The constants :math:`(A, C, D, \kappa)` of the module docstring for the model :math:`(\beta, s, d)` and noise
    :math:`\sigma^2`: :math:`A` and :math:`D` from the continuum integrals, :math:`C` and :math:`\kappa` summed on the
    model's spectrum (:math:`A\tau^{-s}` is the bias term, :math:`C\eta` the noise floor)."""
    beta, s, d = _model(beta, s, d)
    sig = V.real("sigma2", sigma2, low=0.0, low_open=True)
    return _constants(beta, s, d, sig)


@functools.cache
def _root_fn():
    return sp.lambdify((_A, _C, _s, _N), asymptotic_loss_expr()[1], "numpy")


def asymptotic_step(n_steps, beta, s, sigma2, d) -> np.ndarray:
    r"""The leading-order best constant step :math:`(sA/C)^{1/(s+1)}N^{-s/(s+1)}` at each horizon in ``n_steps``."""
    n = V.array("n_steps", n_steps, ndim=(0, 1), low=1.0)
    beta, s, d = _model(beta, s, d)
    sig = V.real("sigma2", sigma2, low=0.0, low_open=True)
    a, c, _, _ = _constants(beta, s, d, sig)
    return np.asarray(_root_fn()(a, c, s, n), dtype=float)


def slope_correction(n_steps, beta, s, sigma2, d) -> np.ndarray:
    r"""First-order shift of the local slope :math:`d\log\eta^*/d\log N` away from :math:`-s/(s+1)` at each horizon.

    From :math:`sA\tau^{-s} = C\eta\,(1 + 2\kappa\eta - \tfrac{D}{\beta C}\tau^{-(1-1/\beta)})` with
    :math:`\tau = \eta N`, :math:`\eta = \eta_0 \propto N^{-s/(s+1)}`, :math:`\tau_0 \propto N^{1/(s+1)}`:

    .. math:: \delta(N) = \frac{2\kappa s\,\eta_0 - \tfrac{D}{\beta C}(1-\tfrac1\beta)\,\tau_0^{-(1-1/\beta)}}{(s+1)^2}.
    """
    eta0 = asymptotic_step(n_steps, beta, s, sigma2, d)
    beta, s, d = _model(beta, s, d)
    _, c, dd, kappa = _constants(beta, s, d, float(sigma2))
    tau0 = eta0 * np.asarray(n_steps, dtype=float)
    return (2.0 * kappa * s * eta0 - dd / (beta * c) * (1.0 - 1.0 / beta) * tau0 ** -(1.0 - 1.0 / beta)) / (s + 1.0) ** 2


def _log_shift(eta0: np.ndarray, n: np.ndarray, beta: float, s: float, d: int, sigma2: float) -> np.ndarray:
    a, c, dd, kappa = _constants(beta, s, d, sigma2)
    tau0 = eta0 * n
    return -(2.0 * kappa * eta0 - dd / (beta * c) * tau0 ** -(1.0 - 1.0 / beta)) / (s + 1.0)


def corrected_step(n_steps, beta, s, sigma2, d) -> np.ndarray:
    r"""The best constant step to first order: :math:`\eta_1 = \eta_0\exp\big(-\tfrac{1}{s+1}(2\kappa\eta_0 -
    \tfrac{D}{\beta C}\tau_0^{-(1-1/\beta)})\big)` (the log of the balance in :func:`slope_correction`, solved to first
    order); its error is second order in the bracket."""
    eta0 = asymptotic_step(n_steps, beta, s, sigma2, d)
    beta, s, d = _model(beta, s, d)
    return eta0 * np.exp(_log_shift(eta0, np.asarray(n_steps, dtype=float), beta, s, d, float(sigma2)))


def bend_horizon(gap, beta, s, sigma2, d) -> float:
    r"""The horizon beyond which the leading-order law is within ``gap`` of the best step, to first order: the root of
    :math:`\eta_1(N)/\eta_0(N) = 1 - \mathrm{gap}` in :math:`\log N` (:func:`corrected_step`; Brent's method on
    :math:`[1, 10^{15}]`). ``ValueError`` naming ``gap`` if the first-order shift never reaches it there."""
    g = V.real("gap", gap, low=0.0, low_open=True, high=1.0, high_open=True)
    beta, s, d = _model(beta, s, d)
    sig = V.real("sigma2", sigma2, low=0.0, low_open=True)

    def f(log_n: float) -> float:
        n = np.array([math.exp(log_n)])
        eta0 = asymptotic_step(n, beta, s, sig, d)
        return float(_log_shift(eta0, n, beta, s, d, sig)[0]) - math.log(1.0 - g)

    lo, hi = 0.0, math.log(1e15)
    if f(lo) * f(hi) > 0:
        raise ValueError(f"gap: the first-order shift never equals log(1 - gap) = {math.log(1 - g):.4g} for "
                         f"1 <= N <= 1e15 at beta = {beta}, s = {s}, sigma2 = {sig}")
    return math.exp(optimize.brentq(f, lo, hi, xtol=1e-12))


def _cutoff_step(n: float, beta: float, s: float, d: int, sigma2: float) -> float:
    _, c, _, _ = _constants(beta, s, d, sigma2)
    lam_edge = (d + 0.5) ** -beta       # the binned spectrum ends at j = d + 1/2
    gs = math.gamma(s)

    def f(log_eta: float) -> float:
        tau = math.exp(log_eta) * n
        return math.log((2 * tau) ** -s * gs * float(special.gammaincc(s, 2 * tau * lam_edge)) / (2 * beta)
                        + c * math.exp(log_eta))

    hi = math.log(_CAP / float(_spectrum(beta, s, d)[0].max()))
    return math.exp(optimize.minimize_scalar(f, bounds=(_LOG_ETA_LOW - math.log(1e3), hi), method="bounded",
                                             options={"xatol": 1e-10}).x)


def cutoff_step(n_steps, beta, s, sigma2, d) -> np.ndarray:
    r"""The best constant step of the law with the spectrum's end kept: the minimizer over :math:`\eta` of

    .. math:: \frac{\Gamma(s, 2\tau\lambda_{\rm end})}{2\beta\,(2\tau)^{s}} + C\eta, \qquad \tau = \eta N,\
              \lambda_{\rm end} = (d + \tfrac12)^{-\beta},

    the bias integral :math:`\tfrac12\int_0^{d+1/2} j^{-1-s\beta}e^{-2\tau j^{-\beta}}dj` in closed form (the upper
    incomplete gamma function). It is :func:`asymptotic_step` while :math:`2\tau\lambda_{\rm end} \ll 1`; beyond, the
    bias is exhausted, the loss is noise-dominated and the best step falls like :math:`\log N / N`. A bounded search in
    :math:`\log\eta` at each horizon in ``n_steps``."""
    n = np.atleast_1d(V.array("n_steps", n_steps, ndim=(0, 1), low=1.0))
    beta, s, d = _model(beta, s, d)
    sig = V.real("sigma2", sigma2, low=0.0, low_open=True)
    out = np.array([_cutoff_step(float(k), beta, s, d, sig) for k in n])
    return out.reshape(np.shape(n_steps))


def cutoff_horizon(gap, beta, s, sigma2, d) -> float:
    r"""The horizon where :func:`cutoff_step` falls ``gap`` below the law :func:`asymptotic_step` (the law's upper
    edge): Brent's root in :math:`\log N` between the horizon where :math:`2\tau_0\lambda_{\rm end} = 10^{-4}` and
    the one where it is :math:`10^{4}`."""
    g = V.real("gap", gap, low=0.0, low_open=True, high=1.0, high_open=True)
    beta, s, d = _model(beta, s, d)
    sig = V.real("sigma2", sigma2, low=0.0, low_open=True)
    a, c, _, _ = _constants(beta, s, d, sig)
    lam_edge = (d + 0.5) ** -beta
    # tau_0 = (sA/C)^(1/(s+1)) N^(1/(s+1)): the horizon at which 2 tau_0 lam_edge = x
    at = lambda x: (x / (2 * lam_edge)) ** (s + 1) / (s * a / c)  # noqa: E731

    def f(log_n: float) -> float:
        n = math.exp(log_n)
        return _cutoff_step(n, beta, s, d, sig) / float(_root_fn()(a, c, s, n)) - (1 - g)

    return math.exp(optimize.brentq(f, math.log(at(1e-4)), math.log(at(1e4)), xtol=1e-10))


def cap_horizon(beta, s, sigma2, d) -> float:
    r"""The horizon below which the leading-order law asks for an unstable step: :math:`\eta_0(N_{\rm cap}) = 2/\lambda_1`,
    :math:`N_{\rm cap} = (sA/C)^{1/s}(\lambda_1/2)^{(s+1)/s}`."""
    beta, s, d = _model(beta, s, d)
    sig = V.real("sigma2", sigma2, low=0.0, low_open=True)
    a, c, _, _ = _constants(beta, s, d, sig)
    lam1 = float(_spectrum(beta, s, d)[0].max())
    return (s * a / c) ** (1.0 / s) * (lam1 / _CAP) ** ((s + 1.0) / s)


def peak_exponent(s, beta) -> float:
    r"""The optimal power decay's peak exponent :math:`\nu = (s - 1 + 1/\beta)/(s + 1/\beta)` (:math:`\eta_{\rm peak}
    \asymp N^{-\nu}`), quoted from Li et al. 2026 for the easy regime :math:`s \ge 1 - 1/\beta`; ``ValueError``
    in the hard regime, where the abstract states no exponent."""
    sv = V.real("s", s, low=0.0, low_open=True, high=8.0)
    bv = V.real("beta", beta, low=1.0, low_open=True, high=8.0)
    if sv < 1.0 - 1.0 / bv:
        raise ValueError(f"s: the peak exponent is stated for the easy regime s >= 1 - 1/beta = {1 - 1 / bv:.6g}, "
                         f"got s = {sv}")
    return (sv - 1.0 + 1.0 / bv) / (sv + 1.0 / bv)


def hard_regime(s, beta) -> bool:
    r"""Whether :math:`(s, \beta)` lies in the hard-task regime :math:`s < 1 - 1/\beta` (Li et al. 2026's boundary)."""
    sv = V.real("s", s, low=0.0, low_open=True, high=8.0)
    bv = V.real("beta", beta, low=1.0, low_open=True, high=8.0)
    return sv < 1.0 - 1.0 / bv


def wsd_schedule(peak, n_steps, fraction) -> np.ndarray:
    r"""Warmup-free WSD: :math:`\eta_t = \eta_{\rm peak}\min\{1, (N - t)/(fN)\}`, a plateau and then a linear cooldown over
    the last fraction :math:`f` of the run (:math:`f = 1`: linear decay to zero)."""
    p = V.real("peak", peak, low=0.0, low_open=True)
    n = V.integer("n_steps", n_steps, low=1, high=10**8)
    f = V.real("fraction", fraction, low=0.0, low_open=True, high=1.0)
    return p * np.minimum(1.0, (n - np.arange(n)) / (f * n))


def optimal_wsd(n_steps, beta, s, sigma2, d) -> tuple[float, float, float]:
    r"""``(peak, fraction, loss)``: the WSD schedule (:func:`wsd_schedule`) minimizing the exact final loss, jointly over
    :math:`\log\eta_{\rm peak} \le \log(2/\lambda_1)` (the largest admissible step: SGD's stability edge) and
    :math:`f \in [0.01, 1]`, by L-BFGS-B (bounds kept exactly: an optimum on a bound is reported on it)."""
    n = V.integer("n_steps", n_steps, low=2, high=10**8)
    sig = V.real("sigma2", sigma2, low=0.0, low_open=True)
    lam, w, load = spectrum(beta, s, d)
    V.check_bytes({"n_steps": n, "d": f"{lam.size} represented modes"}, 4 * 8 * n * lam.size,
                  what="the four (N, modes) factor and suffix-product tables")
    hi = math.log(_CAP * (1 - 1e-9) / float(lam.max()))

    def f(x: np.ndarray) -> float:
        return math.log(_sched_loss(wsd_schedule(math.exp(x[0]), n, x[1]), lam, w, load, sig))

    res = optimize.minimize(f, x0=np.array([hi - 2.0, 0.5]), method="L-BFGS-B",
                            bounds=[(_LOG_ETA_LOW, hi), (0.01, 1.0)], options={"ftol": 1e-12, "gtol": 1e-9})
    return math.exp(res.x[0]), float(res.x[1]), math.exp(res.fun)
