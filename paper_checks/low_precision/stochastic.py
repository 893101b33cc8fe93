r"""Stochastic rounding: no freeze, and an exact two-point stationary law.

With SR storage and :math:`0 < \eta a < 1` the chain ends on the two grid neighbours of :math:`w^*`, on the upper one
with probability :math:`f` (the fractional position of :math:`w^*` in its cell), so the error has mean 0 and
:math:`E e^2 = \mathrm{ulp}^2 f(1-f)`, :math:`\mathrm{ulp}^2/6` on average: independent of :math:`\eta`, and no
longer growing with time (:func:`theory.low_precision.sr_second_moment`).
"""
from __future__ import annotations

import numpy as np

import theory.low_precision as th
from paper_checks import Result, Statistical, claim, standard_error
from paper_checks.low_precision import SHANG, Z
from paper_checks.low_precision import experiments as E

Q_SR = "Stochastic rounding removes the persistent freeze, and the same reference predicts that too."


@claim("shang2026.sr_removes_freeze", paper=SHANG, provenance="quoted", kind="statistical",
       source="abstract (stochastic rounding removes the persistent freeze); the two-point stationary law and its "
              "ulp/sqrt(6) rms are derived here",
       quote=Q_SR, where="arXiv:2607.09800, abstract",
       statement="With bf16 stochastic rounding, gradient descent on a(w - w*)^2/2 (0 < eta a < 1) does not freeze: "
                 "it settles on the two grid neighbours of w*, the upper one with probability f, so E e^2 = "
                 "ulp^2 f(1 - f) (ulp^2/6 on average: rms ulp/sqrt 6), the same at every eta and at every later time.",
       latex=r"E\,e_\infty^2 = \mathrm{ulp}^2 f(1-f),\quad \overline{E\,e_\infty^2} = \mathrm{ulp}^2/6")
def sr_removes_freeze(budget) -> Result:
    r"""Mean of :math:`e_T^2/\mathrm{ulp}^2` over independent SR chains (``low_precision.sr_runs``, eta a = 0.05, 0.2,
    0.6, T = 1600) against the mean of :math:`f(1-f)` over the same minimizers
    (:func:`theory.low_precision.sr_second_moment`), with the standard error of the paired differences
    :math:`e_T^2/\mathrm{ulp}^2 - f(1-f)` (the chains are independent; given :math:`f` the error is a two-point
    variable).

    Rivals: a uniform rounding error (:math:`1/12`); SR freezing like RN (the round-to-nearest frozen error's mean
    square at the same eta a); an error growing like a random walk (twice the mean square measured at T/2).
    """
    run = E.sr_runs(budget)
    ws, etas = run["w_star"], run["eta_a"]
    e2_end = ((run["w_end"] - ws) / E.ULP) ** 2
    e2_half = ((run["w_half"] - ws) / E.ULP) ** 2
    law = th.sr_second_moment(ws)
    n = ws.size
    est, pred = e2_end.mean(axis=1), np.full(etas.size, law.mean())
    se = standard_error(e2_end - law, axis=1)
    rn_floor = np.array([np.mean((th.rn_frozen_error(ws, k) / E.ULP) ** 2) for k in etas])
    checks = [Statistical("mean e_T^2 / ulp^2 per eta a (T = 1600)", estimate=est, se=se, predicted=pred, z=Z,
                          why=f"{Z:g} standard errors of the paired differences over {n} independent chains; "
                              "absorbed and mixed by T/2 (the two-state chain relaxes by (1 - eta a) per step), so "
                              "no bias term",
                          rivals={"uniform rounding error: 1/12": np.full(etas.size, 1 / 12),
                                  "SR freezes like RN: the RN frozen error's mean square": rn_floor,
                                  "grows like a random walk: twice its value at T/2": 2 * e2_half.mean(axis=1)})]
    moved = (run["last_move"] > E.SR_STEPS // 2).mean(axis=1)
    rms_se = se / (2 * np.sqrt(est))  # the delta method: d sqrt(x) = dx / (2 sqrt(x))
    return Result(checks, detail="rms/ulp +- SE " + ", ".join(f"{k:.3g}: {np.sqrt(v):.4f} +- {s:.4f}"
                                                             for k, v, s in zip(etas, est, rms_se))
                                 + f" (theory {np.sqrt(law.mean()):.4f}; 1/sqrt 6 = {1 / np.sqrt(6):.4f}); share of "
                                 "chains still moving in the second half "
                                 + ", ".join(f"{m:.3f}" for m in moved),
                  seed=E.SEED + 2, arrays={"eta_a": etas, "mean_sq": est, "mean_sq_half": e2_half.mean(axis=1),
                                           "se": se, "rn_floor": rn_floor})
