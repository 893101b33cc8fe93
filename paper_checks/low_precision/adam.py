r"""AdamW under cosine decay with bf16 weights: the freeze point of a sign-like update.

Adam's update :math:`u = \hat m/(\sqrt{\hat v} + \epsilon)` has :math:`|u| \approx 1` whatever the gradient's size, so a
coordinate freezes once the step itself, :math:`\eta_t|u + \lambda w|`, falls below half an ulp of the weight; under
cosine decay that is at :math:`t/T = \arccos(\mathrm{ulp}/(\eta_{\max}|u|) - 1)/\pi`, past mid-run iff
:math:`\eta_{\max}|u| > \mathrm{ulp}` (:func:`theory.low_precision.cosine_freeze_fraction`). The freeze step is also
read off a float64 reference path alone (:func:`theory.low_precision.half_ulp_last_move`). The abstract's own AdamW
criterion and GPT setting were not recovered, so the claim is derived.
"""
from __future__ import annotations

import numpy as np

import theory.low_precision as th
from paper_checks import Categorical, Exact, Result, claim
from paper_checks.low_precision import SHANG
from paper_checks.low_precision import experiments as E


@claim("shang2026.adamw_cosine_freeze_point", paper=SHANG, provenance="derived", kind="exact",
       source="derived here (the abstract's AdamW-plus-cosine freeze, 'within four steps of the a-priori "
              "prediction'; its criterion and setting were not recovered)",
       statement="AdamW with cosine decay and bf16 round-to-nearest weights (linear losses, gradients from 1e-7 to "
                 "1e3) freezes at the last update whose step eta_t |u_t + lambda w| reaches half an ulp of the weight "
                 "on the float64 reference path, to the step; without decay that is update floor(T s) + 1 with "
                 "s = arccos(ulp/(eta_max |u|) - 1)/pi, |u| = |g|/(|g| + eps): past mid-run iff eta_max |u| > ulp, "
                 "whatever the gradient's size.",
       latex=r"t_{\rm freeze} = \lfloor T s\rfloor + 1,\quad s = \frac1\pi\arccos\Big(\frac{\mathrm{ulp}}"
             r"{\eta_{\max}|u|} - 1\Big)")
def adamw_cosine_freeze_point(budget) -> Result:
    r"""The last update that moved each bf16 AdamW run (``low_precision.adamw_runs``: T = 100, peaks ulp/r for
    r = 0.5 .. 1.6, gradients 1e-7, 1e-3, 1e3, decoupled decay 0 and 0.05), against
    :func:`theory.low_precision.half_ulp_last_move` on the float64 reference path; without decay also against the
    closed form of :func:`theory.low_precision.cosine_freeze_fraction`; and whether it lies past mid-run.

    Rivals: SGD's criterion (:math:`\eta_t|g| < \mathrm{ulp}/2`: the gradient's size decides); a full-ulp criterion;
    no freeze (a normalized update never rounds away); a freeze at mid-run whatever the peak.
    """
    ex = E.adamw_runs(budget)
    g, peaks, T = ex["grads"], ex["peaks"], E.ADAM_T
    measured, pred, sgd, full = [], [], [], []
    for k in range(len(E.ADAM_DECAYS)):
        w, d = ex[f"ref_w_{k}"], ex[f"ref_delta_{k}"]
        measured.append(ex[f"last_move_{k}"])
        pred.append(np.stack([th.half_ulp_last_move(w[i], d[i]) for i in range(peaks.size)]))
        cosine = (1 + np.cos(np.pi * np.arange(T) / T))[:, None] / 2  # eta_t / eta_max for updates 1..T
        sgd.append(np.stack([th.half_ulp_last_move(w[i], peaks[i] * cosine * g) for i in range(peaks.size)]))
        full.append(np.stack([th.half_ulp_last_move(w[i], d[i] / 2) for i in range(peaks.size)]))
    measured, pred, sgd, full = (np.array(a, dtype=float) for a in (measured, pred, sgd, full))
    u = g / (g + E.ADAM_EPS)
    ratio = E.ULP / (peaks[:, None] * u[None, :])
    closed = np.floor(T * th.cosine_freeze_fraction(ratio.ravel()).reshape(ratio.shape)) + 1
    checks = [
        Exact("bf16 AdamW freeze step (last moving update), every peak, gradient and decay", predicted=pred,
              measured=measured, atol=0.5,
              why="integer steps: a disagreement is at least one step",
              rivals={"SGD's criterion eta_t |g| < ulp/2": sgd, "a full-ulp criterion": full,
                      "no freeze: T": np.full_like(pred, T)}),
        Exact("bf16 Adam freeze step without decay against floor(T s) + 1", predicted=closed, measured=measured[0],
              atol=0.5, why="integer steps",
              rivals={"mid-run whatever the peak: T/2": np.full_like(closed, T / 2)}),
        Categorical("past mid-run (freeze step > T/2), without decay", measured=measured[0] > T / 2,
                    predicted=ratio < 1, why="an outcome per run, no tolerance",
                    rivals={"always past mid-run": np.ones_like(ratio, bool)}),
    ]
    return Result(checks, detail="freeze step / T without decay, per r = ulp/(eta_max |u|): "
                                 + ", ".join(f"{r:.2g}: {m:.2f}" for r, m in zip(E.ADAM_R, measured[0, :, 1] / T))
                                 + f"; with decay {E.ADAM_DECAYS[1]}: "
                                 + ", ".join(f"{m:.2f}" for m in measured[1, :, 1] / T),
                  arrays={"r": np.array(E.ADAM_R), "fraction": measured[0, :, 1] / T,
                          "fraction_decay": measured[1, :, 1] / T})
