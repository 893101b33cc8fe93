r"""Wen et al. (2024): progress along a river valley, stable-then-decay against an early decay, and WSD-S.

The valley is the smallest one that has the paper's two directions: a flat river mode
:math:`\frac{\lambda_r}2(r - R)^2` (:math:`\lambda_r = 10^{-5}`, force :math:`g = \lambda_r R = 0.06` at the start, a little
gradient noise) beside a stiff, noisy hill mode :math:`\frac12h^2` (unit noise) that SGD at the peak step
:math:`\eta = 1.2` keeps oscillating. The modes are separable, so the mean along the river follows
:math:`E(r_{t+1}-R) = (1-\eta_t\lambda_r)E(r_t - R)` whatever the hill does (:func:`theory.noisy_quadratic.river_progress`),
and every expected loss is the exact per-mode moment recursion (:func:`theory.nqm.moment_recursion`); the runs are
:func:`sims.nqm.simulate` (experiment ``noisy_quadratic.river``). What the claims test is the bookkeeping the paper's
picture rests on: river progress is the area under the schedule, the hill's excess is set by the last steps, and so a
long stable phase and a final decay are both needed, and a decay that is resumed from loses none of its progress.
"""
from __future__ import annotations

import numpy as np

import sims.nqm as sn
import theory.noisy_quadratic as th
import theory.nqm as tn
from paper_checks import Categorical, Result, Statistical, claim
from paper_checks.noisy_quadratic import experiments as E
from paper_checks.noisy_quadratic.schedules import PAPER

Z = 4.0  # the z gate of every Monte Carlo comparison here
WHERE = "arXiv:2410.05192, abstract"
WINDOW_RATIO = 0.9  # "progress is the area" holds while the measured progress is within 10 % of the law


def _index(run: dict, name: str) -> int:
    return int(np.flatnonzero(run["names"] == name)[0])


def _exact_losses(run: dict, rows) -> np.ndarray:
    """E L_t, t = 0..T, of the given rows (schedule and problem per row) from the exact per-mode recursion."""
    out = []
    for i in rows:
        m = tn.moment_recursion(run["lam"][i], run["etas"][i], run["center"][i] ** 2, sigma_a=np.array(E.RIVER_SIGMA))
        out.append(tn.expected_loss(run["lam"][i], m))
    return np.array(out)


@claim("wen2024.river_progress_is_lr_area", paper=PAPER, provenance="derived", kind="statistical",
       source="abstract (progress along the river in the stable phase); the two-mode valley, the area law with its "
              "next-order bound and its validity window are derived here",
       quote="Under this assumption, we show that during the stable phase, the iterate undergoes large oscillations due "
             "to the high learning rate, yet it progresses swiftly along the river.",
       where=WHERE,
       statement="In a river valley (flat river mode, stiff noisy hill mode), the mean progress along the river is the area "
                 "under the step-size schedule, E r_T / R = lambda_r sum_t eta_t to within (lambda_r sum eta)^2 / 2, for "
                 "every schedule, however much the hill oscillates; the law holds while lambda_r sum eta is small and "
                 "falls below 90 % of the measured progress past lambda_r sum eta ~ 0.2 (the river's end comes near).",
       latex=r"E\,r_T/R = \lambda_r\sum_t\eta_t + O\big((\lambda_r\textstyle\sum_t\eta_t)^2\big)")
def river_progress_is_lr_area(budget) -> Result:
    r"""Mean river coordinate after 1200 steps over paired runs, for seven schedules (constant, half, WSD, early decay,
    cosine, WSD-S, WSD's second branch) against the area law :math:`\lambda_r\sum\eta_t` (rivals: the number of steps at
    the peak, the noise-driven :math:`\sum\eta_t^2/\eta_{\max}`); then, at the constant peak, the measured progress over
    the law at eight river curvatures against the exact :math:`(1-\prod(1-\eta\lambda_r))/(\lambda_r\sum\eta)` (rival: the
    law at every curvature), and which curvatures keep it within 10 %.

    Plausible mistake it catches: the mean's factor :math:`1-\eta\lambda_r` confused with the second moment's
    :math:`(1-\eta\lambda_r)^2` (twice the area)."""
    run = E.river(budget)
    k = len(E.RIVER_SCHEDULES)
    centers = run["center"][:, 0]
    frac = run["final_x"][:, :, 0] / centers[:, None]          # r_T / R per run
    s = sn.summarize(frac, run["diverged"])
    etas = run["etas"]
    law = th.river_area_law(run["lam_river"], etas)
    peak = etas.max(axis=1)
    schedules = Statistical(
        "river progress E r_T / R, seven schedules (λ_r = 1e-5)", estimate=s.mean[:k], se=s.se[:k],
        predicted=law["law"][:k], z=Z, bias=float(np.max(law["next_order"][:k])),
        rivals={"steps at the peak, λ_r η_max T (the step count, not the area)": run["lam_river"][:k] * peak[:k] * E.RIVER_T,
                "λ_r Σ η_t² / η_max (progress driven by the noise)":
                    run["lam_river"][:k] * np.sum(etas[:k] ** 2, axis=1) / peak[:k]},
        why="standard error over paired runs; bias: the next-order bound (λ_r Σ η)²/2 of the area law")
    exact = th.river_progress(run["lam_river"][k:], etas[k:]) / law["law"][k:]
    ratio, ratio_se = s.mean[k:] / law["law"][k:], s.se[k:] / law["law"][k:]
    window = Statistical("progress over the area law at the constant peak, 8 river curvatures", estimate=ratio,
                         se=ratio_se, predicted=exact, z=Z,
                         rivals={"the area law at every curvature (ratio 1)": np.ones_like(exact)},
                         why="standard error over paired runs; the prediction is the exact mean (no bias)")
    edge = Categorical(f"measured progress within {100 * (1 - WINDOW_RATIO):.0f} % of the law, per curvature",
                       measured=ratio > WINDOW_RATIO, predicted=exact > WINDOW_RATIO,
                       rivals={"the law holds at every curvature": np.ones(exact.size, bool)},
                       why="each measured ratio lies > 4 standard errors from 0.9 (the detail prints them)")
    x = law["law"][k:]
    return Result([schedules, window, edge],
                  detail=f"E r_T/R per schedule {dict(zip(E.RIVER_SCHEDULES, np.round(s.mean[:k], 5).tolist()))} against "
                         f"λ_r Σ η {np.round(law['law'][:k], 5).tolist()}; window λ_r Σ η = {np.round(x, 3).tolist()}: "
                         f"measured/law {np.round(ratio, 4).tolist()} (± {np.round(ratio_se, 4).tolist()}), exact "
                         f"{np.round(exact, 4).tolist()}",
                  seed=E.SEED + 71,
                  arrays={"area": law["law"][:k], "progress": s.mean[:k], "progress_se": s.se[:k], "window_x": x,
                          "window_ratio": ratio, "window_se": ratio_se, "window_exact": exact})


@claim("wen2024.stable_then_decay_beats_early_decay", paper=PAPER, provenance="derived", kind="statistical",
       source="abstract (both phases are critical); the comparison at equal steps on the two-mode valley is steplab's",
       quote="Therefore, the sustained high learning rate phase and fast decaying phase are responsible for progress in "
             "the river and the mountain directions respectively, and are both critical.",
       where=WHERE,
       statement="At equal steps in a river valley, a long stable phase then a decay (WSD) ends below both the constant "
                 "step (no decay: the hill keeps its excess) and an early decay to a low step (little river progress); "
                 "the final losses are the exact recursion's.",
       latex=r"E L_T(\mathrm{WSD}) < \min\{E L_T(\mathrm{constant}),\ E L_T(\mathrm{early\ decay})\}")
def stable_then_decay_beats_early_decay(budget) -> Result:
    r"""Final loss of the constant, WSD, early-decay and cosine runs (paired) against the exact recursion (rivals: no
    hill excess at all -- the iterate on the river --, and the peak's plateau excess kept by every schedule); and the
    signs of the paired differences constant − WSD and early − WSD (rivals: only the area matters; an early decay
    is no worse).

    Plausible mistake it catches: the river's progress read off the step count instead of the schedule's area."""
    run = E.river(budget)
    names = ["constant", "wsd", "early", "cosine"]
    rows = [_index(run, n) for n in names]
    final = run["curve"][rows, :, -1]                       # L_T per run
    s = sn.summarize(final, run["diverged"][rows])
    exact = _exact_losses(run, rows)[:, -1]
    lam_r = run["lam_river"][rows]
    river_only = 0.5 * lam_r * (run["center"][rows, 0] * (1 - th.river_progress(lam_r, run["etas"][rows]))) ** 2
    hill_peak = float(th.wsd_plateau_excess(np.array([1.0]), E.RIVER_ETA, E.RIVER_SIGMA[1])[0])
    losses = Statistical("final loss E L_T (constant, WSD, early decay, cosine)", estimate=s.mean, se=s.se, predicted=exact,
                         z=Z, rivals={"no hill excess (the iterate on the river)": river_only,
                                      "the peak's plateau excess kept by every schedule": river_only + hill_peak},
                         why="standard error over paired runs; the prediction is the exact recursion (no bias)")
    diff = sn.summarize(np.stack([final[0] - final[1], final[2] - final[1]]))
    measured = np.where(np.abs(diff.mean) > Z * diff.se, np.sign(diff.mean), 0).astype(int)
    predicted = np.sign([exact[0] - exact[1], exact[2] - exact[1]]).astype(int)
    order = Categorical("signs of E L_T(constant) − E L_T(WSD) and E L_T(early) − E L_T(WSD), paired, resolved at 4 SE",
                        measured=measured, predicted=predicted,
                        rivals={"only the area under the schedule matters (constant best)": np.array([-1, 1]),
                                "an early decay is no worse than a late one": np.array([1, -1])},
                        why="a sign counts only where the paired mean difference exceeds 4 standard errors (else 0)")
    return Result([losses, order],
                  detail=f"E L_T measured {dict(zip(names, np.round(s.mean, 4).tolist()))}, exact "
                         f"{np.round(exact, 4).tolist()}; constant − WSD = {diff.mean[0]:.3f} ± {diff.se[0]:.3f}, "
                         f"early − WSD = {diff.mean[1]:.3f} ± {diff.se[1]:.3f}",
                  seed=E.SEED + 71, arrays={"final": s.mean, "final_se": s.se, "exact": exact})


@claim("wen2024.wsd_s_reuses_the_decay", paper=PAPER, provenance="derived", kind="statistical",
       source="abstract (WSD-S resumes from a decayed checkpoint); its gain at equal compute on the two-mode valley is "
              "derived here (the paper's own comparison is on language models)",
       quote="Inspired by the theory, we introduce WSD-S, a variant of WSD that reuses previous checkpoints' decay phases "
             "and keeps only one main branch, where we resume from a decayed checkpoint.",
       where=WHERE,
       statement="For two checkpoints at the same total compute, WSD-S (decay, resume at the peak from the decayed iterate, "
                 "decay again) ends its second checkpoint below WSD's (whose main branch also paid for the first "
                 "checkpoint's discarded decay): the gain is the river progress of the reused decay, about g^2 times its "
                 "area, the exact recursion's difference; the restart costs nothing once the hill has re-equilibrated.",
       latex=r"E L_T(\mathrm{WSD}) - E L_T(\mathrm{WSD\text{-}S}) \approx g^2\sum_{t\in\text{decay}}\eta_t > 0")
def wsd_s_reuses_the_decay(budget) -> Result:
    r"""Paired difference of the second checkpoint's loss, WSD's branch minus WSD-S, at equal total compute (1200 steps),
    against the exact recursion's difference (rivals: no gain; the first decay counted at the peak step).

    Plausible mistake it catches: the decay's steps counted as lost progress (the area law read as steps)."""
    run = E.river(budget)
    rows = [_index(run, "wsd_branch"), _index(run, "wsd_s")]
    final = run["curve"][rows, :, -1]
    d = sn.summarize((final[0] - final[1])[None])
    exact = _exact_losses(run, rows)[:, -1]
    pred = float(exact[0] - exact[1])
    area = th.river_area_law(run["lam_river"][rows], run["etas"][rows])["law"]
    lead = E.RIVER_SLOPE**2 * float(area[1] - area[0]) / float(run["lam_river"][rows[0]])
    cool = E.RIVER_COOL * E.RIVER_ETA
    gain = Statistical("E L_T(WSD) − E L_T(WSD-S) at the second checkpoint, equal compute", estimate=d.mean[0],
                       se=d.se[0], predicted=pred, z=Z,
                       rivals={"no gain (the restart undoes the decay)": 0.0,
                               "the first decay's steps counted at the peak: g² η_max D": E.RIVER_SLOPE**2 * cool},
                       why="standard error of the paired differences; the prediction is the exact recursion (no bias)")
    return Result([gain], detail=f"measured {d.mean[0]:.4f} ± {d.se[0]:.4f}; exact {pred:.4f}; leading order g² ΔΣη = "
                                 f"{lead:.4f}; E L_T: WSD {exact[0]:.4f}, WSD-S {exact[1]:.4f}",
                  seed=E.SEED + 71, arrays={"gain": np.array([d.mean[0]]), "gain_se": np.array([d.se[0]]),
                                            "exact": np.array([pred])})
