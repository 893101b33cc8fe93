r"""Checkpoint merging as an implicit decay.

Averaging checkpoints :math:`x_{t_k}` of a constant-step run with weights :math:`w_k` rewrites as one run with
per-step rate :math:`\eta(1 - C_s)`, :math:`C_s = \sum_{t_k\le s}w_k` (:func:`theory.noisy_quadratic.merge_effective_schedule`):
exact for a fixed gradient sequence (an identity of the update rule: a unit test of the simulator), approximate when
gradients depend on the iterate. The claims measure what the identity does not give: the merged model's loss against
the decay it emulates on a noisy quadratic, the inverse map (:func:`theory.noisy_quadratic.merge_weights_for_schedule`)
for cosine, linear and 1 - sqrt cooldowns merged in the simulator, and how the gap grows with curvature and window.

(AdamW's weights as an exponential moving average of its updates, ``x_T = prod(1 - eta_t lambda) x_0 - (1/lambda) sum_t
c_t u_t``, was a claim of Wang & Aitchison 2024 here; it holds for any update sequence, so it is a unit test of the
simulator now, and the claim was removed: nothing measured here tests what that paper says beyond it.)
"""
from __future__ import annotations

import numpy as np

import theory.noisy_quadratic as th
import theory.nqm as tn
from paper_checks import (STEPLAB, Categorical, Exact, Paper, Rate, Result, Statistical, claim, fit_slope, mean_se,
                          ratio_se, standard_error)
from paper_checks.noisy_quadratic import experiments as E

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
    ratio, ratio_err = ratio_se(lm, lw)
    checks = [
        Statistical("E L of the merged checkpoints (last 20 % of a constant run)", estimate=lm.mean(),
                    se=standard_error(lm), predicted=pred_m, z=4.0,
                    rivals={"merging equals its decay: the WSD run's E L": pred_w,
                            "merging does nothing: the last checkpoint's E L": pred_c},
                    why="standard error over independent runs; the prediction is exact (linear-Gaussian), no bias"),
        Statistical("E L(merged)/E L(WSD), paired runs", estimate=ratio, se=ratio_err, predicted=pred_m / pred_w, z=4.0,
                    rivals={"merging equals the decay it emulates: ratio 1": 1.0,
                            "merging does nothing: E L(last checkpoint)/E L(WSD)": pred_c / pred_w},
                    why="delta-method standard error of a ratio of means over paired runs (common random numbers); "
                        "the exact ratio, no bias beyond the ratio estimator's O(1/n)"),
    ]
    detail = (f"E L: merged {lm.mean():.5f} (exact {pred_m:.5f}), WSD {lw.mean():.5f} (exact {pred_w:.5f}), constant "
              f"{lc.mean():.4f} (exact {pred_c:.4f}); ratio merged/WSD {ratio:.4f} ± {ratio_err:.4f} (exact "
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
    from 1 over the same range. Rivals: the gap grows like :math:`(\eta\lambda W)^2`, or like its square root. And the
    mean-square gap per mode against that exact variance (rival: no gap, the flat directions' identity).
    """
    ex = E.merging(budget)
    lam = ex["lam"][1:]
    gap2 = (ex["merged"][:, 1:] - ex["decayed"][:, 1:]) ** 2
    ms, se_ms = mean_se(gap2, axis=0)
    rms, se_rms = np.sqrt(ms), se_ms / (2 * np.sqrt(ms))
    x = E.MERGE_ETA * lam * E.MERGE_WINDOW
    exact = np.sqrt(th.merge_error_variance(lam, E.MERGE_ETA, ex["checkpoints"], ex["weights"], E.MERGE_T))
    exact_slope, _ = fit_slope(x, exact)
    checks = [Rate("log-log slope of the RMS gap in eta*lambda*W", x=x, y=rms, sigma=se_rms, predicted=1.0,
                   next_order=abs(exact_slope - 1.0), z=4.0,
                   rivals={"the gap grows like (ηλW)²": 2.0, "the gap grows like √(ηλW)": 0.5},
                   why="weighted fit with Monte Carlo standard errors; next order: the exact gap's own slope over this "
                       f"range ({exact_slope:.3f})"),
              Exact("mean-square gap E(x̄ − y_T)² per mode", predicted=exact**2, measured=ms,
                    rtol=4.0 * float(np.max(se_ms / exact**2)),
                    rivals={"no gap: the merge is the decayed run (the identity of flat directions)": np.zeros_like(ms)},
                    why="4 standard errors of the mean over independent paired runs (the largest relative one over the "
                        "modes); unbiased: the gap is linear in the shared noise, so its mean square is the exact variance")]
    return Result(checks, detail="RMS gap / exact: " + ", ".join(f"{a:.3g}: {r:.3g}/{e:.3g}" for a, r, e in zip(x, rms, exact)),
                  seed=E.SEED + 2, arrays={"x": x, "rms": rms, "se": se_rms, "exact": exact})


_WSM_QUOTE = ("WSM provides a unified theoretical foundation for emulating various decay strategies—including cosine "
              "decay, linear decay and inverse square root decay—as principled model averaging schemes, while "
              "remaining fully compatible with diverse optimization methods.")


def _merged_loss(lam, sa, weights) -> float:
    """Exact E L of the merge of a constant-step WSM run with ``weights`` on x_1..x_T (nonzero only in the window)."""
    ck = np.arange(E.WSM_T - E.WSM_W + 1, E.WSM_T + 1)
    w = weights[ck - 1]
    return float(tn.expected_loss(lam, th.merged_second_moment(lam, E.PLATEAU_ETA, ck, w, E.WSM_T, sa, 1.0)))


@claim("tian2025.merge_weights_emulate_decays", paper=PAPER, provenance="quoted", kind="statistical",
       source="abstract (merging emulates cosine, linear and inverse square root decay; Theorem 3.1's inverse map, "
              "whose words were not recovered); the merged model's exact loss on a noisy quadratic derived here",
       quote=_WSM_QUOTE, where="arXiv:2507.17634, abstract",
       statement="The inverse map w_s = (eta_eff(s-1) - eta_eff(s))/eta turns cosine, linear and 1 - sqrt cooldowns over "
                 "the last 20 % of a constant-step run (eta = 1.2, T = 1000, 64-mode NQM) into merge weights that "
                 "reproduce each decayed run exactly along flat directions, where the gradients are a fixed sequence; "
                 "on curved modes the merge is not the decay: its loss is the exact linear-Gaussian value (0.50, 0.37, "
                 "0.69 of the decayed runs'), and the merges rank the three decays in the opposite order to the decays "
                 "themselves (linear < cosine < 1 - sqrt against 1 - sqrt < cosine < linear).",
       latex=r"w_s = \frac{\eta_{\rm eff}(s-1)-\eta_{\rm eff}(s)}{\eta},\ \ \sum_s w_sx_s \overset{\lambda=0}{=} "
             r"y_T^{\eta_{\rm eff}},\ \ E L\Big(\sum_s w_sx_s\Big) = \tfrac12\sum_i\lambda_iE\bar x_i^2 \ne E L(y_T)")
def merge_weights_emulate_decays(budget) -> Result:
    r"""One constant-step run (:math:`\eta = 1.2`) on 64 curved modes (:math:`\lambda \in [10^{-3}, 1]`,
    :math:`\sigma^2 = \lambda`) and 4 flat ones (:math:`\sigma = 1`), merged in the simulator
    (``sims.nqm.simulate(merge_weights=...)``) with the weights of :func:`theory.noisy_quadratic.merge_weights_for_schedule`
    for WSD's cosine, linear and 1 - sqrt cooldowns over its last 200 of 1000 steps, and the three decayed runs on the
    same noise.

    Exact: along the flat modes each decayed run's final iterate against its merge, run by run (round-off); rivals,
    the merges a reader might use instead: the uniform window mean for every decay, each decay's values over the window
    read as the merge coefficients (WSM's decay weights :math:`w_i` taken for its coefficients :math:`c_j`), and the
    weights of the wrong decay. Statistical: the merged models' mean losses against the exact linear-Gaussian value
    (:func:`theory.noisy_quadratic.merged_second_moment`); rivals: the decayed runs' exact losses (the emulation carried
    over to curved modes), and the same three wrong weightings. The paired ratios merged/decayed against the exact
    ratios (rival 1), and the measured ranking of the three merges against the decays' ranking. Catches: a wrong inverse
    map (the decay's values normalized as weights, an off-by-one, the reversed order) in the prediction.
    """
    ex = E.wsm(budget)
    lam, sa = ex["lam"], ex["sigma_a"]
    flat = lam == 0
    m = E.wsm_merges()
    eff = E.wsm_schedules()
    names = list(E.WSM_DECAYS)
    k = len(names)
    wrong = [(i + 1) % k for i in range(k)]   # linear's weights for cosine, 1 - sqrt's for linear, cosine's for 1 - sqrt
    weights = np.stack([th.merge_weights_for_schedule(e, E.PLATEAU_ETA) for e in eff])
    merged, decayed = ex["merged_inverse"], ex["decayed"]
    # a T-term float sum on either side, each term at most max|x| in size: 2 T eps max|x| bounds their difference
    atol = 2 * E.WSM_T * np.finfo(float).eps * float(ex["max_abs"])
    uniform = np.broadcast_to(ex["merged_uniform"][None], merged.shape)
    checks = [Exact("flat modes: each decayed run's final iterate, run by run (cosine, linear, 1 − √)",
                    predicted=merged[:, :, flat], measured=decayed[:, :, flat], atol=atol,
                    rivals={"the uniform window mean emulates every decay": uniform[:, :, flat],
                            "each decay's values over the window as the merge coefficients (c_j ∝ w_j)":
                                ex["merged_proportional"][:, :, flat],
                            "the wrong decay's weights (linear's for cosine, 1 − √'s for linear, cosine's for 1 − √)":
                                merged[wrong][:, :, flat]},
                    why=f"round-off of two {E.WSM_T}-term float sums of iterates up to max|x| = {ex['max_abs']:.3g}: "
                        "2 T eps max|x|")]

    loss = lambda x: 0.5 * np.sum(lam * x**2, axis=-1)  # noqa: E731
    lm, ld = loss(merged), loss(decayed)                       # (decay, run)
    n = lm.shape[1]
    pred = np.array([_merged_loss(lam, sa, w) for w in weights])
    pred_decay = np.array([float(tn.expected_loss(lam, tn.final_second_moment(lam, e, 1.0, sa))) for e in eff])
    pred_uniform = _merged_loss(lam, sa, m["uniform"])
    pred_prop = np.array([_merged_loss(lam, sa, w) for w in m["proportional"]])
    why = "standard error over independent runs; the prediction is exact (linear-Gaussian), no bias"
    checks.append(Statistical("E L of the merged model (cosine, linear, 1 − √ weights)", estimate=lm.mean(axis=1),
                              se=standard_error(lm, axis=1), predicted=pred, z=4.0,
                              rivals={"the merge equals its decay: the decayed runs' E L": pred_decay,
                                      "uniform weights (the window mean) for every decay": np.full(k, pred_uniform),
                                      "the decay's values as merge coefficients (c_j ∝ w_j)": pred_prop,
                                      "the wrong decay's weights": pred[wrong]},
                              why=why))
    ratio, ratio_err = ratio_se(lm, ld, axis=1)
    checks.append(Statistical("E L(merged)/E L(decayed), paired runs", estimate=ratio, se=ratio_err,
                              predicted=pred / pred_decay, z=4.0,
                              rivals={"the merge emulates its decay's loss: ratio 1": np.ones(k)},
                              why="delta-method standard error of a ratio of means over paired runs; exact ratios, no "
                                  "bias beyond the ratio estimator's O(1/n)"))
    rank = lambda v: np.argsort(np.argsort(v))  # noqa: E731
    checks.append(Categorical("rank of the merged models' E L (cosine, linear, 1 − √)", measured=rank(lm.mean(axis=1)),
                              predicted=rank(pred), rivals={"the merges rank as their decays do": rank(pred_decay)}))
    detail = ("; ".join(f"{s}: merged E L {a:.5f} (exact {p:.5f}), decayed {b:.5f} (exact {q:.5f}), ratio {r:.3f} ± "
                        f"{e:.3f}" for s, a, p, b, q, r, e in zip(names, lm.mean(axis=1), pred, ld.mean(axis=1),
                                                                   pred_decay, ratio, ratio_err))
              + f"; flat modes: max |merge - decayed| {np.max(np.abs(merged[:, :, flat] - decayed[:, :, flat])):.1e}; "
                f"{n} paired runs")
    return Result(checks, detail=detail, seed=E.SEED + 10,
                  arrays={"decays": np.array(names), "merged_loss": lm.mean(axis=1), "decayed_loss": ld.mean(axis=1),
                          "exact_merged": pred, "exact_decayed": pred_decay, "weights": weights})
