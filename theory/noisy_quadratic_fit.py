r"""The noisy quadratic model fitted to a logged training run, with standard errors and a goodness-of-fit verdict.

A user logs ``(step, lr, loss)`` rows of one run. :func:`fit_log` fits the expected loss of SGD on a noisy
quadratic (the model of :mod:`theory.nqm`) along the logged schedule, with four parameters that a loss curve
can identify, a standard error for each, and a verdict on whether the model describes the log at all.

**The schedule.** The rate logged at step :math:`s_j` is the rate of the update :math:`s_j \to s_j+1`; between
two logged steps the rate is interpolated linearly (exact for linear warmup and decay whose breakpoints are
logged; a step drop is smeared over one logging interval), and before the first logged step it is the first
logged rate. Runs longer than :data:`MAX_BLOCKS` steps are advanced in blocks of equal rate (the interpolated
rate at the block's middle), each block in closed form, so the cost does not grow with the step count.

**The model: a power-law spectrum.** A density of curvatures :math:`\propto\lambda^p` per unit of
:math:`\log\lambda` on :math:`[\lambda_{lo}, \lambda_{hi}]`, :math:`\lambda_{lo} = c_{lo}/\sum_t\eta_t`
(:math:`c_{lo}` = :data:`SLOW_FACTOR`: modes ten times slower than the whole run are still modelled) and
:math:`\lambda_{hi} = 1/\max_t\eta_t` (the fastest modes relax within a step at the peak rate), discretized by
:math:`K` Gauss--Legendre nodes :math:`\lambda_k` in :math:`\log\lambda` with weights :math:`q_k`: an NQM of
:math:`K` modes. Each mode holds the same share of the initial excess and of the gradient noise,

.. math:: \tfrac12\lambda_k E x_{k,0}^2 = A\,w_k(p), \qquad \sigma_k^2 = S\,w_k(p), \qquad
          w_k(p) = \frac{q_k\lambda_k^{\,p}}{\sum_j q_j\lambda_j^{\,p}},

so the expected loss along the schedule is, exactly for this :math:`K`-mode NQM
(:func:`theory.nqm.moment_recursion`'s recursion, batch 1, additive noise),

.. math:: E L_t = L_\star + \sum_k w_k(p)\big(A\,G_{t,k} + S\,H_{t,k}\big),\quad
          G_{t,k} = \prod_{s<t}(1-\eta_s\lambda_k)^2,\quad
          H_{t,k} = \tfrac12\lambda_k\sum_{s<t}\eta_s^2\prod_{s<r<t}(1-\eta_r\lambda_k)^2 .

Four parameters: :math:`L_\star` (the loss at the minimum), :math:`A` (the initial excess
:math:`\sum_k\tfrac12\lambda_k x_{k,0}^2`), :math:`S` (the total gradient-noise variance per step,
:math:`\sum_k\sigma_k^2`) and the spectral exponent :math:`p` (the excess density per unit of
:math:`\log\lambda` grows like :math:`\lambda^p`; at a constant rate the excess then decays like
:math:`(\eta t)^{-p}` once the fastest modes have relaxed). Why this parameterization: a free weight per mode
is not identifiable from a loss curve (a sum of decaying exponentials is the classic ill-posed inverse
problem, and a mode slower than the run is a constant indistinguishable from :math:`L_\star`: that is why
the earlier per-mode fit gave a floor of 0 on a run and 0.113 on every tenth row of it). A power law ties the
slow modes to the resolved ones, the usual scaling-law form :math:`L_\star + c\,t^{-p}`. One exponent serves
the initial excess and the noise: with a gradient-noise covariance proportional to the Hessian (the NQM of
Zhang et al. 2019, :math:`C \propto H`) and an isotropic start, :math:`\sigma_k^2` and
:math:`\tfrac12\lambda_k x_{k,0}^2` are both proportional to :math:`\lambda_k`, so their densities have the
same shape. :math:`K` (``n_modes``) only sets the quadrature of the spectrum: the parameters do not change, and
the Gauss--Legendre rule converges fast (16 nodes reproduce the parameters of a 400-mode log-uniform spectrum to
:math:`2\cdot10^{-5}` relative, measured).

**The floor** is the constant-rate limit of the fitted model at the log's peak rate :math:`\eta`,

.. math:: F(\eta) = \lim_{t\to\infty} E L_t\big|_{\eta_t \equiv \eta}
          = L_\star + S\sum_k w_k(p)\,\frac{\eta}{2(2-\eta\lambda_k)}

(:func:`theory.nqm.stationary_excess` per mode); :math:`L_\star = F(0)` is what a decay to zero approaches.

**Fit and standard errors.** Weighted least squares on relative residuals (logged losses scatter roughly in
proportion to the loss), iteratively reweighted with the fitted curve :math:`\tilde L_t` so that the weights do
not depend on the noise of the row they weigh:

.. math:: \hat\theta = \arg\min_\theta \sum_t r_t^2, \qquad r_t = \frac{y_t - E L_t(\theta)}{\tilde L_t},
          \qquad \theta = (L_\star, A, S, p),

:math:`L_\star, A, S \ge 0` (the logged loss must be positive, so its minimum is not negative),
:math:`p \in [p_{min}, p_{max}]` (:data:`P_RANGE`). Given :math:`p` the model is linear in
:math:`(L_\star, A, S)`: :math:`p` is profiled on a grid (variable projection) and the optimum polished by a
trust-region least-squares step with the analytic Jacobian

.. math:: \frac{\partial E L_t}{\partial L_\star} = 1,\quad \frac{\partial E L_t}{\partial A} = \sum_k w_k G_{t,k},\quad
          \frac{\partial E L_t}{\partial S} = \sum_k w_k H_{t,k},\quad
          \frac{\partial E L_t}{\partial p} = \sum_k w_k(\log\lambda_k - \overline{\log\lambda})(A G_{t,k} + S H_{t,k}),

:math:`\overline{\log\lambda} = \sum_k w_k\log\lambda_k`. The standard errors are the Gauss--Newton (Fisher)
ones with the residual variance estimated from the fit,

.. math:: \widehat{\mathrm{Cov}}\,\hat\theta = \hat s^2 (J^\top J)^{-1}, \qquad
          \hat s^2 = \frac{1}{n-4}\sum_t r_t^2, \qquad J_{tj} = \frac{1}{\tilde L_t}\frac{\partial E L_t}{\partial\theta_j},

and a derived quantity :math:`f(\theta)` (the floor, the curve at a step) gets
:math:`\mathrm{SE}\,f = \sqrt{\nabla f^\top\,\widehat{\mathrm{Cov}}\,\nabla f}` (delta method). They assume
independent residuals and a locally linear model; a parameter at a bound (:math:`L_\star`, :math:`A` or :math:`S`
at 0, :math:`p` at an end of its range) is flagged, its interval is then one-sided in truth.

What a log identifies: at a constant rate :math:`\eta` the model is
:math:`F(\eta) + \sum_k w_k(A - S c_k)G_{t,k}` with :math:`c_k = \eta/(2(2-\eta\lambda_k))` nearly the same for
every mode, so a constant-rate log pins the floor, :math:`p` and :math:`A - S\eta/4`, while :math:`L_\star` and
:math:`S` are told apart only by a change of rate (a warmup, a decay): on a constant-rate log their standard
errors are large, or :math:`L_\star` sits at its bound 0, and that is the answer, not a failure of the fit.

**Goodness of fit.** The log's own noise level :math:`\hat\tau` comes from its high-frequency scatter alone
(:func:`noise_level`: pseudo-residuals of Gasser, Sroka and Jennen-Steinmetz 1986, which cancel any locally
linear trend, with a median-based scale so that a spike does not inflate it). The reduced chi-square

.. math:: \chi^2_\nu = \frac{1}{\nu}\sum_t \frac{r_t^2}{\hat\tau^2 + \epsilon^2}, \qquad \nu = n - 4,

(:math:`\epsilon` = :data:`MODEL_TOLERANCE`, 0.1 %: a tolerance for the model's numerics, quadrature and
interpolated schedule, so that a noise-free log is not failed for round-off) is near 1 when the
model leaves nothing but that noise. Its sampling error is :math:`\sqrt{2/\nu + 9/m}` (:math:`m = n - 2`
pseudo-residuals; the median-based :math:`\hat\tau^2` has a relative standard error of :math:`2.9/\sqrt m`,
measured on Gaussian noise), and the model is said to describe the log when :math:`\chi^2_\nu` is below
:math:`1 + 3\sqrt{2/\nu + 9/m}`. A trend the model cannot follow (a loss that falls and rises again at a
constant rate, a periodic bump), a spike, a smoothed log (its scatter is correlated, so the high-frequency
estimate misses most of it) or heavy-tailed logging noise all read as "does not describe".

No JAX and no I/O here; arguments are validated (:mod:`theory.validate`), and a ``ValueError`` names the
argument, the row and the value.
"""
from __future__ import annotations

import math

import numpy as np
from scipy import optimize

from theory import validate as V

__all__ = ["PARAMETERS", "MAX_BLOCKS", "SLOW_FACTOR", "P_RANGE", "MODEL_TOLERANCE", "noise_level", "fit_log"]

PARAMETERS = ("L_star", "A", "S", "p")
MAX_BLOCKS = 20_000     # per-step recursion up to this many steps; longer runs advance in blocks of equal rate
SLOW_FACTOR = 0.1       # the slowest modelled curvature is SLOW_FACTOR / sum(eta)
P_RANGE = (-2.0, 4.0)   # the spectral exponents searched
MODEL_TOLERANCE = 1e-3  # relative tolerance of the model's numerics, added to the noise in the chi-square
_P_GRID = 61            # profile grid over P_RANGE (steps of 0.1) before the polish
_IRLS = 3               # reweighting passes after the search (the weights settle after two)


# ----------------------------------------------------------------------------- validation
def _rows(step, lr, loss) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The validated log: integer steps, strictly increasing; rates >= 0, one > 0; losses finite and > 0."""
    s = V.array("step", step, ndim=1, finite=False)
    n = s.size
    e = V.array("lr", lr, shape=(n,), finite=False)
    y = V.array("loss", loss, shape=(n,), finite=False)
    if n <= len(PARAMETERS):
        raise ValueError(f"loss: {n} rows cannot fit the {len(PARAMETERS)} parameters {', '.join(PARAMETERS)} and "
                         f"estimate their errors; expected at least {len(PARAMETERS) + 1} rows")
    _each("step", s, (np.isfinite(s) & (s >= 0) & (s == np.round(s))), "a whole number >= 0", s)
    if s[-1] >= 2**53:
        raise ValueError(f"step: expected steps below 2**53 (exact in float64), got {s[-1]:.6g}")
    down = np.flatnonzero(np.diff(s) <= 0)
    if down.size:
        i = down[0] + 1
        raise ValueError(f"step: expected strictly increasing steps, got {s[i]:.17g} at row {i} after {s[i - 1]:.17g}")
    _each("lr", e, np.isfinite(e) & (e >= 0), "a finite learning rate >= 0", s)
    if not np.max(e) > 0:
        raise ValueError("lr: expected at least one positive learning rate, got only zeros")
    _each("loss", y, np.isfinite(y) & (y > 0), "a finite loss > 0 (rows are weighted by 1/loss^2)", s)
    if s[-1] < 1:
        raise ValueError("step: the log must reach step 1 or later, got only step 0")
    return s, e, y


def _each(name: str, a: np.ndarray, ok: np.ndarray, allowed: str, step: np.ndarray) -> None:
    """``ValueError`` naming the first row of ``a`` where ``ok`` fails: its index, step and value."""
    bad = np.flatnonzero(~ok)
    if bad.size:
        i = bad[0]
        where = f"row {i}" + (f" (step {step[i]:.17g})" if name != "step" and np.isfinite(step[i]) else "")
        raise ValueError(f"{name}: expected {allowed}, got {a[i]!r} at {where}"
                         + (f" ({bad.size} such rows)" if bad.size > 1 else ""))


# ----------------------------------------------------------------------------- schedule and tables
def _blocks(s: np.ndarray, e: np.ndarray, max_blocks: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""The interpolated schedule as blocks of equal rate: ``(rate, length, ends_at_row)``.

    Before :math:`s_0`: one block at the first rate. Between :math:`s_j` and :math:`s_{j+1}` (length :math:`\ell`):
    :math:`\lceil\ell/g\rceil` blocks of near-equal length, :math:`g = \lceil s_{n-1}/\text{max\_blocks}\rceil`
    (default :data:`MAX_BLOCKS`; :math:`g = 1` for runs up to ``max_blocks`` steps: every step its own block), each at the linear interpolation of the rate
    at its middle (the mean rate of its steps). ``ends_at_row[b]`` is the row whose step block ``b`` ends at, else -1.
    """
    g = max(1, math.ceil(s[-1] / (MAX_BLOCKS if max_blocks is None else max_blocks)))
    ell = np.diff(s)
    nb = np.ceil(ell / g).astype(np.int64)
    j = np.repeat(np.arange(s.size - 1), nb)
    i = np.arange(nb.sum()) - np.repeat(np.cumsum(nb) - nb, nb)
    lo, hi = np.round(i * ell[j] / nb[j]), np.round((i + 1) * ell[j] / nb[j])
    mid = 0.5 * (lo + hi - 1)                                  # mean of the integer offsets lo .. hi-1
    rate = e[j] + (e[j + 1] - e[j]) * mid / ell[j]
    ends = np.where(i == nb[j] - 1, j + 1, -1)
    if s[0] > 0:
        return np.r_[e[0], rate], np.r_[s[0], hi - lo], np.r_[0, ends]
    return rate, hi - lo, ends


def _curvatures(total: float, peak: float, n_modes: int) -> tuple[np.ndarray, np.ndarray]:
    r"""Gauss--Legendre nodes and weights in :math:`\log\lambda` over :math:`[c_{lo}/\sum\eta,\ 1/\max\eta]`: ``(lam, q)``."""
    lo, hi = math.log(SLOW_FACTOR / total), math.log(1.0 / peak)
    if not hi > lo:  # a run shorter than SLOW_FACTOR / (its own peak rate) steps: no range of curvatures to resolve
        raise ValueError(f"lr: the run's total rate sum(eta) = {total:.6g} is below {SLOW_FACTOR:g} x its peak "
                         f"{peak:.6g}; the log spans too few steps to resolve any relaxation")
    x, q = np.polynomial.legendre.leggauss(n_modes)
    return np.exp(lo + 0.5 * (hi - lo) * (x + 1)), q / q.sum()


def _tables(rate: np.ndarray, length: np.ndarray, ends: np.ndarray, lam: np.ndarray, n_rows: int):
    r"""``(G, H)``, each (rows, K): :math:`G_{t,k}` and :math:`H_{t,k}` of the module docstring at the logged steps.

    A block of :math:`g` steps at rate :math:`\eta` maps :math:`G \mapsto \rho^g G` and
    :math:`m \mapsto \rho^g m + \eta^2(1-\rho^g)/(1-\rho)` (:math:`\rho = (1-\eta\lambda)^2`, unit noise; the geometric
    sum is :math:`g` at :math:`\rho = 1`), with :math:`1-\rho = \eta\lambda(2-\eta\lambda)` computed without
    cancellation and :math:`\rho^g = \exp(2g\log|1-\eta\lambda|)`; :math:`H = \tfrac12\lambda m`.
    """
    h = rate[:, None] * lam                                        # (blocks, K), <= 1 by the choice of lambda_hi
    one_minus = h * (2 - h)
    with np.errstate(divide="ignore"):
        rho_g = np.exp(2 * length[:, None] * np.log(np.abs(1 - h)))
    tiny = one_minus < 1e-300
    geom = np.where(tiny, length[:, None], -np.expm1(2 * length[:, None] * np.log(np.abs(np.where(tiny, 0.5, 1 - h))))
                    / np.where(tiny, 1.0, one_minus))
    add = rate[:, None] ** 2 * geom
    G = np.empty((n_rows, lam.size))
    M = np.empty((n_rows, lam.size))
    g_cur, m_cur = np.ones(lam.size), np.zeros(lam.size)
    G[0], M[0] = g_cur, m_cur                                       # row 0 when it is step 0 (no block before it)
    for b in range(rate.size):
        g_cur = rho_g[b] * g_cur
        m_cur = rho_g[b] * m_cur + add[b]
        if ends[b] >= 0:
            G[ends[b]], M[ends[b]] = g_cur, m_cur
    return G, 0.5 * lam * M


def _weights(lam: np.ndarray, q: np.ndarray, p: float) -> np.ndarray:
    r""":math:`w_k(p) = q_k\lambda_k^p/\sum_j q_j\lambda_j^p` (a softmax of :math:`\log q + p\log\lambda`, no overflow)."""
    z = np.log(q) + p * np.log(lam)
    w = np.exp(z - z.max())
    return w / w.sum()


# ----------------------------------------------------------------------------- the model and its derivatives
class _Model:
    """The four-parameter NQM on one log: its curve, its Jacobian and the floor, from the (G, H) tables."""

    def __init__(self, G: np.ndarray, H: np.ndarray, lam: np.ndarray, q: np.ndarray):
        self.G, self.H, self.lam, self.q, self.u = G, H, lam, q, np.log(lam)

    def weights(self, p: float) -> np.ndarray:
        return _weights(self.lam, self.q, p)

    def curve(self, th: np.ndarray) -> np.ndarray:
        w = self.weights(th[3])
        return th[0] + th[1] * (self.G @ w) + th[2] * (self.H @ w)

    def jacobian(self, th: np.ndarray) -> np.ndarray:
        """(rows, 4): the derivatives of the curve by (L_star, A, S, p), module docstring."""
        w = self.weights(th[3])
        dw = w * (self.u - w @ self.u)                               # d w_k / d p
        return np.column_stack([np.ones(self.G.shape[0]), self.G @ w, self.H @ w,
                                th[1] * (self.G @ dw) + th[2] * (self.H @ dw)])

    def floor(self, th: np.ndarray, eta: float) -> tuple[float, np.ndarray]:
        r""":math:`F(\eta)` and its gradient in :math:`\theta`."""
        w = self.weights(th[3])
        c = eta / (2 * (2 - eta * self.lam))
        dw = w * (self.u - w @ self.u)
        return float(th[0] + th[2] * (w @ c)), np.array([1.0, 0.0, w @ c, th[2] * (dw @ c)])


def _linear(model: _Model, y: np.ndarray, scale: np.ndarray, p: float) -> tuple[np.ndarray, float]:
    """Best (L_star, A, S) at fixed ``p`` (all >= 0) and the weighted residual sum of squares."""
    w = model.weights(p)
    X = np.column_stack([np.ones(y.size), model.G @ w, model.H @ w]) / scale[:, None]
    norm = np.maximum(np.abs(X).max(axis=0), 1e-300)
    Xn, b = X / norm, y / scale
    coef = np.linalg.lstsq(Xn, b, rcond=None)[0]
    if np.any(coef < 0):  # a bound is active: the bounded problem (bounded-variable least squares)
        coef = optimize.lsq_linear(Xn, b, bounds=(0.0, np.inf), method="bvls", tol=1e-12).x
    return np.array([*(coef / norm), p]), float(np.sum((Xn @ coef - b) ** 2))


def _polish(model: _Model, y: np.ndarray, scale: np.ndarray, th: np.ndarray) -> np.ndarray:
    """All four parameters by a trust-region least-squares step from the profile's optimum."""
    def res(t):
        return (model.curve(t) - y) / scale

    def jac(t):
        return model.jacobian(t) / scale[:, None]

    lo, hi = [0.0, 0.0, 0.0, P_RANGE[0]], [np.inf, np.inf, np.inf, P_RANGE[1]]
    start = np.clip(th, lo, hi)
    out = optimize.least_squares(res, start, jac=jac, bounds=(lo, hi), x_scale="jac", xtol=1e-12, ftol=1e-12,
                                 gtol=1e-12, max_nfev=200)
    return out.x if np.sum(out.fun ** 2) <= np.sum(res(start) ** 2) else start


def _solve(model: _Model, y: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """Profile ``p`` on a grid, refine by bounded Brent around the best grid point, then polish all four."""
    grid = np.linspace(*P_RANGE, _P_GRID)
    rss = np.array([_linear(model, y, scale, p)[1] for p in grid])
    i = int(np.argmin(rss))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    best = optimize.minimize_scalar(lambda p: _linear(model, y, scale, p)[1], bounds=(lo, hi), method="bounded",
                                    options={"xatol": 1e-6})
    th = _linear(model, y, scale, best.x if best.fun <= rss[i] else grid[i])[0]
    return _polish(model, y, scale, th)


# ----------------------------------------------------------------------------- noise and goodness of fit
def noise_level(step, loss) -> float:
    r"""The relative high-frequency noise :math:`\hat\tau` of a logged loss, from its scatter alone (no model).

    Pseudo-residuals of Gasser, Sroka and Jennen-Steinmetz (1986) at rows :math:`i = 1..n-2`,

    .. math:: \tilde e_i = \frac{a_i y_{i-1} + b_i y_{i+1} - y_i}{y_i\sqrt{a_i^2 + b_i^2 + 1}},\quad
              a_i = \frac{s_{i+1}-s_i}{s_{i+1}-s_{i-1}},\ b_i = \frac{s_i-s_{i-1}}{s_{i+1}-s_{i-1}},

    vanish for a locally linear trend and have variance :math:`\tau^2` for independent relative noise of size
    :math:`\tau` (:math:`y_i = L_i(1+\tau\xi_i)`). :math:`\hat\tau = 1.4826\,\mathrm{median}|\tilde e_i|` (the normal
    consistency factor of the median absolute value): a spike moves it by one order statistic, not by its size.
    ``step`` strictly increasing (at least 3 rows), ``loss`` finite and > 0.
    """
    s = V.array("step", step, ndim=1)
    y = V.array("loss", loss, shape=(s.size,), low=0.0, low_open=True)
    if s.size < 3:
        raise ValueError(f"step: the noise level needs at least 3 rows, got {s.size}")
    if np.any(np.diff(s) <= 0):
        raise ValueError("step: expected strictly increasing steps")
    span = s[2:] - s[:-2]
    a, b = (s[2:] - s[1:-1]) / span, (s[1:-1] - s[:-2]) / span
    e = (a * y[:-2] + b * y[2:] - y[1:-1]) / (y[1:-1] * np.sqrt(a**2 + b**2 + 1))
    return float(1.4826 * np.median(np.abs(e)))


def _verdict(r: np.ndarray, step: np.ndarray, tau: float) -> dict:
    """Reduced chi-square of the relative residuals ``r`` against the log's own noise ``tau``, and the sentence."""
    n, k = r.size, len(PARAMETERS)
    nu, m = n - k, max(n - 2, 1)
    var = tau**2 + MODEL_TOLERANCE**2
    chi2 = float(np.sum(r**2) / (nu * var))
    threshold = 1 + 3 * math.sqrt(2 / nu + 9 / m)
    describes = chi2 <= threshold
    noise = f"{tau:.2%} relative noise" + (f" (+ {MODEL_TOLERANCE:.1%} model tolerance)" if tau < 3 * MODEL_TOLERANCE
                                           else "")
    if describes:
        text = (f"the noisy quadratic model describes this log (reduced chi-square {chi2:.3g} against the log's own "
                f"{noise}; it would not below {threshold:.3g})")
    else:
        i = int(np.argmax(np.abs(r)))
        text = (f"the noisy quadratic model does not describe this log: its residuals are {math.sqrt(chi2):.3g} times "
                f"the log's own {noise} (reduced chi-square {chi2:.3g} > {threshold:.3g}); the largest departure "
                f"is at step {step[i]:.17g}, where the log lies {abs(r[i]):.2%} {'above' if r[i] > 0 else 'below'} "
                f"the fit")
    return {"chi2_reduced": chi2, "chi2_threshold": threshold, "describes": describes, "verdict": text}


# ----------------------------------------------------------------------------- the fit
def fit_log(step, lr, loss, *, n_modes: int = 24) -> dict:
    r"""Fit the four-parameter noisy quadratic model (module docstring) to a logged run, with standard errors.

    ``step`` strictly increasing whole numbers >= 0 (the loss at step :math:`s` is the loss after :math:`s`
    updates), ``lr`` the rate of each logged step (>= 0, not all 0), ``loss`` finite and > 0, more rows than the
    four parameters; ``n_modes`` (4..256) the quadrature nodes of the spectrum. Returns a dict:

    ``estimates``: ``{name: (value, standard error)}`` for ``L_star``, ``A``, ``S``, ``p`` and ``floor``
    (:math:`F` at ``floor_eta``, the largest logged rate); ``at_bound``: the parameters at a bound of the fit;
    ``cov`` (4, 4) over ``PARAMETERS``; ``predicted`` and ``predicted_se`` (the fitted curve at the logged steps
    and its delta-method standard error); ``residual`` (relative, :math:`r_t`); ``noise`` (:math:`\hat\tau`,
    :func:`noise_level`); ``chi2_reduced``, ``chi2_threshold``, ``describes`` and ``verdict`` (the goodness-of-fit
    sentence); ``lam`` and ``weights`` (the fitted spectrum's curvatures and :math:`w_k(\hat p)`).
    """
    s, e, y = _rows(step, lr, loss)
    n_modes = V.integer("n_modes", n_modes, low=4, high=256)
    rate, length, ends = _blocks(s, e)
    peak = float(np.max(e))
    lam, q = _curvatures(float(rate @ length), peak, n_modes)
    model = _Model(*_tables(rate, length, ends, lam, s.size), lam, q)
    scale = y.copy()
    th = _solve(model, y, scale)                       # the global search once, on weights 1/y^2
    for _ in range(_IRLS):                             # then reweight by the fitted curve and polish
        fitted = model.curve(th)
        scale = np.where(fitted > 0, fitted, y)
        th = _polish(model, y, scale, th)
    r = (y - model.curve(th)) / scale
    J = model.jacobian(th) / scale[:, None]
    s2 = float(r @ r) / (s.size - len(PARAMETERS))
    norm = np.maximum(np.linalg.norm(J, axis=0), 1e-300)               # column scaling: S and A differ by 1/eta
    cov = s2 * np.linalg.pinv((J / norm).T @ (J / norm), rcond=1e-13) / np.outer(norm, norm)
    se = np.sqrt(np.maximum(np.diag(cov), 0.0))
    floor, grad = model.floor(th, peak)
    Jc = model.jacobian(th)
    band = np.sqrt(np.maximum(np.einsum("ti,ij,tj->t", Jc, cov, Jc), 0.0))
    estimates = {name: (float(v), float(d)) for name, v, d in zip(PARAMETERS, th, se)}
    estimates["floor"] = (floor, float(np.sqrt(max(grad @ cov @ grad, 0.0))))
    at_bound = [name for name, v, lo in zip(PARAMETERS, th, (0.0, 0.0, 0.0, P_RANGE[0])) if v <= lo + 1e-12]
    at_bound += ["p"] if th[3] >= P_RANGE[1] - 1e-12 else []
    tau = noise_level(s, y)
    return {"estimates": estimates, "at_bound": at_bound, "cov": cov, "floor_eta": peak,
            "predicted": model.curve(th), "predicted_se": band, "residual": r, "noise": tau,
            "lam": lam, "weights": model.weights(th[3]), **_verdict(r, s, tau)}
