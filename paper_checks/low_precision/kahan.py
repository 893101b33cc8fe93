r"""Kahan summation with 16-bit weights and compensation: the freeze shrinks by a factor of order :math:`2^p`.

The compensated sum :math:`z = w - c` would accumulate every update exactly; with :math:`y` and :math:`c` themselves
rounded onto bf16 each step still loses up to :math:`3\cdot 2^{-p-2}` ulp, which leaves a bias of the time-averaged
error of at most :math:`3\cdot 2^{-10}/(\eta a)` ulp (:func:`theory.low_precision.kahan_bias_bound`), against the
round-to-nearest floor's :math:`1/(2\eta a)`.
"""
from __future__ import annotations

import numpy as np

import theory.low_precision as th
from paper_checks import Bound, Result, claim
from paper_checks.low_precision import ZAMIRAI
from paper_checks.low_precision import experiments as E

Q_REMEDY = ("we study two simple techniques well-established in numerical analysis, stochastic rounding and Kahan "
            "summation, to remedy the model accuracy degradation in 16-bit-FPU training")


@claim("zamirai2020.kahan_summation_remedies_the_freeze", paper=ZAMIRAI, provenance="quoted", kind="bound",
       source="abstract (stochastic rounding and Kahan summation remedy 16-bit-FPU training); the bias bound on a "
              "quadratic is derived here (stochastic rounding: shang2026.sr_removes_freeze)",
       quote=Q_REMEDY, where="arXiv:2010.06192, abstract",
       statement="With Kahan summation in a 16-bit unit (weight and compensation in bf16, every result rounded), "
                 "gradient descent on a(w - w*)^2/2 no longer freezes at ulp/(2 eta a): the stored weight keeps "
                 "moving between grid points and its time average reaches w* up to a bias of at most "
                 "3 * 2^-10 ulp/(eta a), what the roundings of y and of the compensation still lose per step.",
       latex=r"\eta a\,|\overline{w_t - w^*}| \le 3\cdot2^{-p-2}\,\mathrm{ulp} + \frac{3\,\mathrm{ulp}}{\Delta T}")
def kahan_summation_remedies_the_freeze(budget) -> Result:
    r""":math:`\eta a` times the largest time-averaged error :math:`|\overline{w_t - w^*}|` of the Kahan runs
    (``low_precision.kahan_runs``, eta a = 0.1 and 0.3, a window of 16384 steps after 600), in ulps, against
    :func:`theory.low_precision.kahan_bias_bound`.

    Rivals: exact accumulation (no bias: only the window's transient); the compensation's own rounding alone
    (:math:`2^{-p-2}`, the rounding of :math:`y` forgotten).
    """
    run = E.kahan_runs(budget)
    scaled = run["eta_a"][:, None] * np.abs(run["mean_error"]) / E.ULP
    slack = 3.0 / E.KAHAN_WINDOW
    rn_floor = 1 / (2 * run["eta_a"]) - 0.5  # the RN band's mean, in ulps
    checks = [Bound("eta a |time-averaged error| / ulp, every run", measured=scaled,
                    bound=th.kahan_bias_bound(), slack=slack,
                    why="the window's transient: |z - w*| <= |w - w*| + |c| <= 1.5 ulp at both ends, so "
                        "(z_start - z_end)/window <= 3 ulp / window",
                    rivals={"exact accumulation: no bias": 0.0, "the compensation's rounding alone: 2^-10": 2.0**-10})]
    return Result(checks, detail=f"{run['w_star'].size} minimizers; largest |mean error| / ulp per eta a: "
                                 + ", ".join(f"{k:.2g}: {m:.4f} (RN band mean {f:.2f})" for k, m, f in
                                             zip(run["eta_a"], np.abs(run["mean_error"]).max(axis=1) / E.ULP,
                                                 rn_floor)),
                  arrays={"eta_a": run["eta_a"], "max_scaled": scaled.max(axis=1)})
