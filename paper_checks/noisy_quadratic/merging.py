r"""Checkpoint merging as an implicit decay.

Averaging checkpoints :math:`x_{t_k}` of a constant-step run with weights :math:`w_k` rewrites as one run with
per-step rate :math:`\eta(1 - C_s)`, :math:`C_s = \sum_{t_k\le s}w_k` (:func:`theory.noisy_quadratic.merge_effective_schedule`):
exact for a fixed gradient sequence (an identity of the update rule: a unit test of the simulator), approximate when
gradients depend on the iterate. The claims measure what the identity does not give: the merged model's loss against
the decay it emulates on a noisy quadratic, and how the gap grows with curvature and window.

(AdamW's weights as an exponential moving average of its updates, ``x_T = prod(1 - eta_t lambda) x_0 - (1/lambda) sum_t
c_t u_t``, was a claim of Wang & Aitchison 2024 here; it holds for any update sequence, so it is a unit test of the
simulator now, and the claim was removed: nothing measured here tests what that paper says beyond it.)
"""
from __future__ import annotations

import numpy as np

import theory.noisy_quadratic as th
import theory.nqm as tn
from paper_checks import STEPLAB, Paper, Rate, Result, Statistical, claim, fit_slope
from paper_checks.noisy_quadratic import _experiments as E

PAPER = Paper(key="tian2025", title="WSM: Decay-Free Learning Rate Schedule via Checkpoint Merging for LLM Pre-training",
              authors="C. Tian, J. Wang, Q. Zhao, K. Chen, J. Liu, Z. Liu, J. Mao, W. X. Zhao, Z. Zhang, J. Zhou",
              year=2025, arxiv="2507.17634")


@claim("tian2025.merged_loss_vs_decay", paper=PAPER, provenance="derived", kind="statistical",
       source="abstract (merging emulates decay); the emulated schedule and the merged model's exact loss on a noisy "
              "quadratic derived here",
       statement="On a noisy quadratic (64 modes, lambda in [1e-3, 1], sigma^2 = lambda, x0 = 1), merging the last 20 % "
                 "of a constant-step run's checkpoints with uniform weights, the merge that emulates WSD's linear "
                 "cooldown over those steps, ends below that WSD run's loss: E L(merged)/E L(WSD) is the exact "
                 "linear-Gaussian ratio (0.37 at eta = 1.2), neither 1 (merging equal to its decay) nor the constant "
                 "run's 15x.",
       latex=r"\frac{E L(\sum_k w_kx_{t_k})}{E L(y_T^{\eta(1-C_s)})} = \frac{\sum_i\lambda_iE\bar x_i^2}{\sum_i\lambda_iE y_{T,i}^2}")
def merged_loss_vs_decay(budget) -> Result:
    r"""Per run (paired noise), the loss of the merged checkpoints (the window mean of the last 200 of 1000 steps at
    :math:`\eta = 1.2`) and of the WSD run with a 20 % linear cooldown (the merge's effective schedule,
    :func:`theory.noisy_quadratic.merge_effective_schedule`); the mean merged loss against
    :func:`theory.noisy_quadratic.merged_second_moment`, and the ratio of mean losses (delta-method standard error over
    the paired runs) against the exact ratio.

    (That merging equals its effective schedule for a fixed gradient sequence is an identity of the update rule, a
    unit test of the simulator in ``tests/test_noisy_quadratic.py``; on a quadratic the gradients depend on the
    iterate and the two differ.) Rivals: merging equals the decay it emulates (ratio 1: the identity carried over);
    merging does nothing (the last checkpoint's loss).
    """
    ex = E.merging_loss(budget)
    lam, sa, T, W = ex["lam"], ex["sigma_a"], int(ex["T"]), int(ex["W"])
    ck = np.arange(T - W + 1, T + 1)
    w = np.full(W, 1.0 / W)
    eff = th.merge_effective_schedule(E.PLATEAU_ETA, ck, w, T)
    pred_m = tn.expected_loss(lam, th.merged_second_moment(lam, E.PLATEAU_ETA, ck, w, T, sa, 1.0))
    pred_w = tn.expected_loss(lam, tn.final_second_moment(lam, eff, 1.0, sa))
    pred_c = tn.expected_loss(lam, tn.final_second_moment(lam, np.full(T, E.PLATEAU_ETA), 1.0, sa))
    lm, lw, lc = ex["loss_merged"], ex["loss_wsd"], ex["loss_constant"]
    n = lm.size
    ratio = lm.mean() / lw.mean()
    ratio_se = (lm - ratio * lw).std(ddof=1) / np.sqrt(n) / lw.mean()
    checks = [
        Statistical("E L of the merged checkpoints (last 20 % of a constant run)", estimate=lm.mean(),
                    se=lm.std(ddof=1) / np.sqrt(n), predicted=pred_m, z=4.0,
                    rivals={"merging equals its decay: the WSD run's E L": pred_w,
                            "merging does nothing: the last checkpoint's E L": pred_c},
                    why="standard error over independent runs; the prediction is exact (linear-Gaussian), no bias"),
        Statistical("E L(merged)/E L(WSD), paired runs", estimate=ratio, se=ratio_se, predicted=pred_m / pred_w, z=4.0,
                    rivals={"merging equals the decay it emulates: ratio 1": 1.0,
                            "merging does nothing: E L(last checkpoint)/E L(WSD)": pred_c / pred_w},
                    why="delta-method standard error of a ratio of means over paired runs (common random numbers); "
                        "the exact ratio, no bias beyond the ratio estimator's O(1/n)"),
    ]
    detail = (f"E L: merged {lm.mean():.5f} (exact {pred_m:.5f}), WSD {lw.mean():.5f} (exact {pred_w:.5f}), constant "
              f"{lc.mean():.4f} (exact {pred_c:.4f}); ratio merged/WSD {ratio:.4f} ± {ratio_se:.4f} (exact "
              f"{pred_m / pred_w:.4f}); {n} paired runs, T = {T}, W = {W}")
    return Result(checks, detail=detail, seed=E.SEED + 8,
                  arrays={"lam": lam, "mode_m2_merged": ex["mode_m2_merged"], "mode_m2_wsd": ex["mode_m2_wsd"],
                          "mode_m2_constant": ex["mode_m2_constant"],
                          "exact_merged": th.merged_second_moment(lam, E.PLATEAU_ETA, ck, w, T, sa, 1.0),
                          "exact_wsd": tn.final_second_moment(lam, eff, 1.0, sa),
                          "exact_constant": tn.final_second_moment(lam, np.full(T, E.PLATEAU_ETA), 1.0, sa)})


@claim("steplab.merging_error_grows_with_curvature_window", paper=STEPLAB, provenance="derived", kind="rate",
       source="found here (where tian2025's merging-decay identity stops being exact; the paper states no error law)",
       statement="On a noisy quadratic the gradients depend on the iterates and merging only approximates the decay: the "
                 "root-mean-square gap between the merged model and the decayed run grows linearly in curvature x "
                 "window, eta lambda W (leading order).",
       latex=r"\sqrt{E(\bar x - y_T)^2} \propto \eta\lambda W")
def merging_error_scaling(budget) -> Result:
    r"""RMS gap :math:`\sqrt{E(\bar x - y_T)^2}` over the paired runs, per mode, against :math:`\eta\lambda W` (0.02..0.64).

    The slope's next-order term is the deviation of the exact gap's slope (:func:`theory.noisy_quadratic.merge_error_variance`)
    from 1 over the same range. Rivals: the gap grows like :math:`(\eta\lambda W)^2`, or like its square root.
    """
    ex = E.merging(budget)
    lam = ex["lam"][1:]
    gap2 = (ex["merged"][:, 1:] - ex["decayed"][:, 1:]) ** 2
    n = gap2.shape[0]
    ms, se_ms = gap2.mean(axis=0), gap2.std(axis=0, ddof=1) / np.sqrt(n)
    rms, se_rms = np.sqrt(ms), se_ms / (2 * np.sqrt(ms))
    x = E.MERGE_ETA * lam * E.MERGE_WINDOW
    exact = np.sqrt(th.merge_error_variance(lam, E.MERGE_ETA, ex["checkpoints"], ex["weights"], E.MERGE_T))
    exact_slope, _ = fit_slope(x, exact)
    checks = [Rate("log-log slope of the RMS gap in eta*lambda*W", x=x, y=rms, sigma=se_rms, predicted=1.0,
                   next_order=abs(exact_slope - 1.0), z=4.0,
                   rivals={"the gap grows like (ηλW)²": 2.0, "the gap grows like √(ηλW)": 0.5},
                   why="weighted fit with Monte Carlo standard errors; next order: the exact gap's own slope over this "
                       f"range ({exact_slope:.3f})")]
    return Result(checks, detail="RMS gap / exact: " + ", ".join(f"{a:.3g}: {r:.3g}/{e:.3g}" for a, r, e in zip(x, rms, exact)),
                  seed=E.SEED + 2, arrays={"x": x, "rms": rms, "se": se_rms, "exact": exact})
