r"""Averaging and momentum on one noisy mode: the EMA's variance and bias, momentum's stationary variance.

SGD on :math:`\lambda x^2/2` with additive noise is an AR(1) process (:math:`\rho = 1-\eta\lambda`); its EMA,
heavy ball and Nesterov are linear filters of it, whose stationary variances follow from discrete Lyapunov
equations (:func:`theory.noisy_quadratic.ema_variance_sympy`, :func:`theory.nqm.momentum_variance_sympy`). Over a
finite run from :math:`x_0` the EMA's second moment is a sum of geometric terms
(:func:`theory.noisy_quadratic.ema_final_second_moment`): the EMA of a constant-step run is compared with a decayed
run's last iterate on the schedule claims' 64-mode noisy quadratic.
"""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

import sims.nqm as sn
import theory.noisy_quadratic as th
import theory.nqm as tn
from paper_checks import STEPLAB, Paper, Rate, Result, Statistical, claim, fit_slope, mean_se, ratio_se, standard_error
from paper_checks.noisy_quadratic import experiments as E

PAPER = Paper(key="morales2024", title="Exponential Moving Average of Weights in Deep Learning: Dynamics and Benefits",
              authors="D. Morales-Brotons, T. Vogels, H. Hendrikx", year=2024, arxiv="2411.18704")


def _ratio_stats(num: np.ndarray, den: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard error over runs (last axis) of the per-run ratio of two time averages."""
    r = num / den
    return mean_se(r, axis=-1)


@claim("morales2024.ema_variance_ratio", paper=PAPER, provenance="derived", kind="statistical",
       source="abstract (the EMA of weights reduces noise); the stationary ratio derived here (sympy)",
       statement="For SGD with additive noise on one mode (rho = 1 - eta lambda), the EMA z+ = (1-alpha) z + alpha x "
                 "has stationary Var(z)/Var(x) = alpha (1 + rho(1-alpha)) / ((2-alpha)(1 - rho(1-alpha))) < 1.",
       latex=r"\frac{\mathrm{Var}\,z}{\mathrm{Var}\,x} = \frac{\alpha(1+\rho(1-\alpha))}{(2-\alpha)(1-\rho(1-\alpha))}")
def ema_variance_ratio(budget) -> Result:
    r"""Per run, the ratio of the time averages of :math:`z^2` and :math:`x^2` after a burn-in (eta = 0.2, lambda = 1,
    alpha in 0.05, 0.1, 0.3), mean and standard error over runs (:func:`ema_variance_ratio_checks`).
    """
    ex = E.averaging(budget)
    result = ema_variance_ratio_checks(ex["alphas"], E.EMA_ETA, E.AVG_LAM, ex["ema_m2_z"], ex["ema_m2_x"],
                                       E.AVG_T - E.AVG_BURN)
    return replace(result, seed=E.SEED + 3)


def ema_variance_ratio_checks(alphas, eta: float, lam: float, m2_z: np.ndarray, m2_x: np.ndarray,
                              window: int) -> Result:
    r"""Core of ``morales2024.ema_variance_ratio``: the checks on measured time averages of :math:`z^2` and :math:`x^2`.

    ``m2_z``, ``m2_x``: shape (alpha, run), each run's time averages over ``window`` steps after its burn-in, for SGD
    at step ``eta`` on :math:`\lambda x^2/2` (``lam``) and its EMAs at rates ``alphas``. The per-run ratio's mean
    (standard error over runs) is compared with

    .. math:: \frac{\mathrm{Var}\,z}{\mathrm{Var}\,x} = \frac{\alpha(1+\rho(1-\alpha))}{(2-\alpha)(1-\rho(1-\alpha))},
              \qquad \rho = 1-\eta\lambda,

    within 4 SE plus the bias of a ratio of finite time averages, :math:`O(\tau/\text{window})` with
    :math:`\tau = \max(1/\alpha, 1/\min(\eta\lambda, 2-\eta\lambda))` the slower of the EMA's and the iterate's
    correlation times. Rival: the i.i.d. value :math:`\alpha/(2-\alpha)` (the iterates' autocorrelation ignored).
    """
    alphas = np.asarray(alphas, dtype=float)
    est, se = _ratio_stats(m2_z, m2_x)
    pred = np.array([th.ema_variance_ratio(a, eta, lam) for a in alphas])
    tau = np.maximum(1 / alphas, 1 / min(eta * lam, 2 - eta * lam))
    checks = [Statistical("Var(EMA)/Var(x)", estimate=est, se=se, predicted=pred, z=4.0,
                          bias=float(np.max(pred * tau / window)),
                          rivals={"α/(2 − α) (iterates treated as independent)": alphas / (2 - alphas)},
                          why="standard error over independent runs; bias: the ratio of finite time averages, of order "
                              "(correlation time)/(window)")]
    return Result(checks, detail=", ".join(f"alpha={a:g}: {e:.4f} ± {s:.4f} (pred {p:.4f}, iid {a / (2 - a):.4f})"
                                           for a, e, s, p in zip(alphas, est, se, pred)),
                  arrays={"alpha": alphas, "ratio": est, "se": se, "predicted": pred})


def _leading_term_log(alpha: float, eta: float, lam: float, t: np.ndarray) -> np.ndarray:
    r""":math:`\log` of the larger in modulus of the two geometric terms of :func:`theory.noisy_quadratic.ema_bias` at each t.

    :math:`z_t = (1 - b)\,q^t + b\,\rho^t` with :math:`q = 1-\alpha`, :math:`\rho = 1-\eta\lambda`,
    :math:`b = \alpha\rho/(\rho - q)` (:math:`\rho \ne q`). The slope of this against :math:`t` is the rate without
    the smaller term, so the closed form's slope minus it is the smaller term's bias on a fitted slope (an allowance
    that never reads the rate under test).
    """
    q, rho = 1 - alpha, 1 - eta * lam
    b = alpha * rho / (rho - q)
    with np.errstate(divide="ignore"):
        return np.maximum(np.log(abs(1 - b)) + t * np.log(q), np.log(abs(b)) + t * np.log(abs(rho)))


@claim("morales2024.ema_bias_rate", paper=PAPER, provenance="derived", kind="rate",
       source="derived here (the EMA's bias lags the iterate's)",
       statement="Without noise the EMA's bias decays geometrically at rate max(1 - alpha, |1 - eta lambda|): at the "
                 "EMA's own pace 1 - alpha, slower than the iterate, when alpha < 1 - |1 - eta lambda|, and at the "
                 "iterate's pace |1 - eta lambda| otherwise, an oscillating iterate (eta lambda > 1) included.",
       latex=r"|z_t| \propto \max(1-\alpha, |1-\eta\lambda|)^t")
def ema_bias_rate(budget) -> Result:
    r"""Slope of :math:`\log|z_t|` against :math:`t` over the noise-free runs' recordings (every 80 steps, so even
    :math:`t`), at the :math:`(\alpha, \eta)` of ``EMA_CLEAN`` (:math:`\lambda = 1`): two runs on the :math:`1-\alpha`
    branch with a decaying iterate, one on the :math:`|1-\eta\lambda|` branch with a decaying iterate
    (:math:`\eta\lambda = 0.2`), and one on each branch with an oscillating iterate (:math:`\eta\lambda = 1.8`,
    :math:`|1-\eta\lambda| = 0.8`), against :func:`theory.noisy_quadratic.ema_bias_rate`.

    Rivals, per run, the other branch: the EMA's bias decays as fast as the iterate, :math:`\log|1-\eta\lambda|`, where
    :math:`1-\alpha` is the larger; at the EMA's own pace :math:`\log(1-\alpha)`, where the iterate's is.
    """
    ex = E.averaging(budget)
    t = ex["t_rec"]
    checks = []
    details = []
    for (a, eta), z in zip(ex["clean_points"], ex["clean_path_ema"]):
        az = np.abs(z)
        use = az > 1e-250   # stay clear of the float range's end
        rate = th.ema_bias_rate(a, eta, E.AVG_LAM)
        pred = math.log(rate)
        own, iterate = math.log(1 - a), math.log(abs(1 - eta * E.AVG_LAM))
        rival = ({"as fast as the iterate: log|1 − ηλ|": iterate} if pred == own
                 else {"at the EMA's own pace: log(1 − α)": own})
        exact = np.abs(th.ema_bias(a, eta, E.AVG_LAM, t[use]))
        exact_slope, _ = fit_slope(t[use], np.log(exact), log=False)
        lead_slope, _ = fit_slope(t[use], _leading_term_log(a, eta, E.AVG_LAM, t[use]), log=False)
        checks.append(Rate(f"d log|z_t| / dt, alpha = {a:g}, eta lambda = {eta * E.AVG_LAM:g}", x=t[use],
                           y=np.log(az[use]), log=False, predicted=pred,
                           next_order=abs(exact_slope - lead_slope) + 1e-12, z=4.0, rivals=rival,
                           why="deterministic runs: the fit's SE is round-off; next order: how far the other geometric "
                               "term moves the closed form's slope over the fitted range from its larger term's alone"))
        details.append(f"alpha={a:g}, eta*lambda={eta * E.AVG_LAM:g}: slope {checks[-1].slope:.6f} (pred {pred:.6f}, "
                       f"EMA's own {own:.6f}, iterate {iterate:.6f})")
    return Result(checks, detail="; ".join(details), seed=E.SEED + 3)


@claim("steplab.momentum_stationary_variance", paper=STEPLAB, provenance="derived", kind="statistical",
       source="derived here (sympy); not a statement of Kidambi et al. 2018, whose claim is about rates (heavy ball "
              "and Nesterov cannot beat SGD on some instances; ASGD does), tested by kidambi2018.heavy_ball_no_faster_than_sgd",
       statement="With additive gradient noise, heavy ball's stationary variance is eta sigma^2 (1+mu)/(lambda (1-mu) "
                 "(2(1+mu) - eta lambda)) (not SGD's at the effective step eta/(1-mu)), and Nesterov's exceeds SGD's "
                 "at the same eta by the factor 1 + 2mu(1+mu)(eta lambda - 1)^2 / ((1 - mu + eta mu lambda)"
                 "(2(1+mu) - eta lambda (1+2mu))) >= 1.",
       latex=r"\frac{\mathrm{Var}_{\rm NAG}}{\mathrm{Var}_{\rm SGD}} = 1 + \frac{2\mu(1+\mu)(\eta\lambda-1)^2}"
             r"{(1-\mu+\eta\mu\lambda)(2(1+\mu)-\eta\lambda(1+2\mu))}")
def momentum_stationary_variance(budget) -> Result:
    r"""Time-averaged :math:`x^2` of heavy ball at two :math:`(\eta, \mu)`, and of Nesterov's iterate (the point after
    the gradient step) over paired SGD runs at two :math:`(\eta, \mu)`; lambda = 1, sigma = 1.

    Rivals: heavy ball is SGD at the effective step :math:`\eta/(1-\mu)`; Nesterov leaves SGD's variance unchanged
    (ratio 1).
    """
    ex = E.averaging(budget)
    hb = sn.summarize(ex["hb_m2"])
    hb_pred = np.array([tn.momentum_stationary_variance(e, E.AVG_LAM, m, 1.0) for e, m in ex["hb_points"]])
    hb_eff = np.array([e / (1 - m) / (E.AVG_LAM * (2 - e / (1 - m) * E.AVG_LAM)) for e, m in ex["hb_points"]])
    est, se = _ratio_stats(ex["nag_m2_iterate"], ex["sgd_m2"])
    nag_pred = np.array([tn.momentum_stationary_variance(e, E.AVG_LAM, m, 1.0, "nesterov")
                         / tn.stationary_second_moment(E.AVG_LAM, e, 1.0) for e, m in ex["nag_points"]])
    why = (f"standard error over independent runs of time averages over {E.AVG_T - E.AVG_BURN} steps after a "
           f"{E.AVG_BURN}-step burn-in (the transient from x0 = 0 has decayed below round-off: time averages of x^2 "
           "are unbiased)")
    checks = [
        Statistical("heavy ball: stationary Var x", estimate=hb.mean, se=hb.se, predicted=hb_pred, z=4.0,
                    rivals={"SGD at the effective step η/(1 − μ)": hb_eff}, why=why),
        Statistical("Nesterov/SGD stationary variance ratio", estimate=est, se=se, predicted=nag_pred, z=4.0,
                    rivals={"momentum leaves SGD's variance unchanged": np.ones(2)},
                    why=why + "; the per-run ratio of two such averages is biased by O(correlation time / window), < 1e-3"),
    ]
    detail = (", ".join(f"HB (eta={e:g}, mu={m:g}): {v:.4f} ± {s:.4f} (pred {p:.4f}, eff-step {q:.4f})"
                        for (e, m), v, s, p, q in zip(ex["hb_points"], hb.mean, hb.se, hb_pred, hb_eff))
              + "; " + ", ".join(f"NAG/SGD (eta={e:g}, mu={m:g}): {v:.4f} ± {s:.4f} (pred {p:.4f})"
                                 for (e, m), v, s, p in zip(ex["nag_points"], est, se, nag_pred)))
    return Result(checks, detail=detail, seed=E.SEED + 3)


def _ema_loss(lam, sa, eta, alpha, T) -> float:
    """Exact E L of the EMA of a constant-step run (:func:`theory.noisy_quadratic.ema_final_second_moment`)."""
    return float(tn.expected_loss(lam, th.ema_final_second_moment(lam, eta, alpha, T, sa, 1.0)))


@claim("morales2024.ema_of_constant_step_beats_decay", paper=PAPER, provenance="quoted", kind="statistical",
       source="abstract (the EMA needs less learning-rate decay: averaging reduces the noise); the EMA's exact "
              "finite-T loss on a noisy quadratic derived here",
       quote="We also observe that EMA requires less learning rate decay compared to SGD since averaging naturally "
             "reduces noise, introducing a form of implicit regularization.",
       where="arXiv:2411.18704, abstract",
       statement="On the schedule claims' 64-mode noisy quadratic (x0 = 1, sigma^2 = lambda), the EMA of a constant-step "
                 "run with no decay at all, at its best step and rate, ends below the tuned linear-decay-to-zero run's "
                 "last iterate: E L(EMA)/E L(D2Z) is the exact linear-Gaussian ratio, 0.74 at T = 300, 0.64 at 1000 and "
                 "0.56 at 3000, where the best constant step's last iterate is 1.6-2.4x D2Z's.",
       latex=r"\frac{\min_{\eta,\alpha} E L(z_T)}{\min_{\eta_0} E L(x_T^{\rm D2Z})} < 1 < "
             r"\frac{\min_\eta E L(x_T^{\rm const})}{\min_{\eta_0} E L(x_T^{\rm D2Z})}")
def ema_of_constant_step_beats_decay(budget) -> Result:
    r"""Per horizon (T = 300, 1000; and 3000 at the full budget), paired runs of linear decay to zero at its tuned peak
    and of a constant step with an EMA (:math:`z_0 = x_0`) at the step and rate that minimize the EMA's exact final loss
    (:func:`theory.noisy_quadratic.tuned_ema_final_loss`: where to run). The ratio of mean final losses (delta-method
    standard error) against the exact ratio (:func:`theory.noisy_quadratic.ema_final_second_moment` over
    :func:`theory.nqm.final_second_moment`), and the EMA's mean loss against its exact value.

    Rivals: the EMA matches the decay (ratio 1); no averaging -- the best constant step's last iterate (its tuned exact
    loss), and the same run's last iterate. Catches: the EMA's variance taken as that of an average of independent
    iterates (:math:`\alpha/(2-\alpha)` of the iterate's), or its finite-T moment replaced by the stationary one.
    """
    ex = E.ema_vs_decay(budget)
    lam, sa, Ts = ex["lam"], ex["sigma_a"], ex["T"]
    ld, le, ll = ex["loss_d2z"], ex["loss_ema"], ex["loss_last"]   # (horizon, run)
    n = ld.shape[1]
    pred_d2z = np.array([float(tn.expected_loss(lam, tn.final_second_moment(lam, th.schedule("d2z", int(T), p), 1.0, sa)))
                         for T, p in zip(Ts, ex["d2z_peak"])])
    pred_ema = np.array([_ema_loss(lam, sa, e, a, int(T)) for T, e, a in zip(Ts, ex["ema_eta"], ex["ema_alpha"])])
    best_const = np.array([float(tn.expected_loss(lam, tn.final_second_moment(lam, np.full(int(T), p), 1.0, sa)))
                           for T, p in zip(Ts, ex["const_peak"])])
    same_last = np.array([_ema_loss(lam, sa, e, 1.0, int(T)) for T, e in zip(Ts, ex["ema_eta"])])
    ratio, ratio_err = ratio_se(le, ld, axis=1)
    checks = [
        Statistical("E L(EMA of a constant step)/E L(D2Z), each at its best, paired runs", estimate=ratio, se=ratio_err,
                    predicted=pred_ema / pred_d2z, z=4.0,
                    rivals={"the EMA matches the decay: ratio 1": np.ones(Ts.size),
                            "no averaging: the best constant step's last iterate": best_const / pred_d2z,
                            "no averaging: the same run's last iterate": same_last / pred_d2z},
                    why="delta-method standard error of a ratio of means over paired runs; exact ratios "
                        "(linear-Gaussian), no bias beyond the ratio estimator's O(1/n)"),
        Statistical("E L of the EMA of a constant step", estimate=le.mean(axis=1),
                    se=standard_error(le, axis=1), predicted=pred_ema, z=4.0,
                    rivals={"the tuned D2Z run's E L": pred_d2z},
                    why="standard error over independent runs; the prediction is exact, no bias"),
    ]
    detail = ("; ".join(f"T = {T}: EMA/D2Z {r:.4f} ± {s:.4f} (exact {p:.4f}; best constant {c:.3f}, same run's last "
                        f"iterate {q:.3g}), eta = {e:.4g}, alpha = {a:.3g}, D2Z peak {pk:.4g}"
                        for T, r, s, p, c, q, e, a, pk in zip(Ts, ratio, ratio_err, pred_ema / pred_d2z,
                                                              best_const / pred_d2z, same_last / pred_d2z, ex["ema_eta"],
                                                              ex["ema_alpha"], ex["d2z_peak"]))
              + f"; measured last iterates of the EMA's run: {ll.mean(axis=1).round(4).tolist()}; {n} paired runs")
    return Result(checks, detail=detail, seed=E.SEED + 11,
                  arrays={"T": Ts, "ratio": ratio, "ratio_se": ratio_err, "exact_ratio": pred_ema / pred_d2z,
                          "best_constant_ratio": best_const / pred_d2z})
