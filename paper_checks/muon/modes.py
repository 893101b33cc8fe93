r"""Muon learns every mode at one rate, the smallest first: on a factorization and on a single matrix.

Exact-polar Muon moves every singular mode by the step size per update. On one matrix from 0 that makes
:math:`W_t = t\eta\,UV^\top` until mode :math:`i` arrives at :math:`t_i \approx s_i/\eta`; on a product
:math:`W_2W_1` of two such factors the modes grow together as :math:`(\eta t)^2` and arrive at
:math:`t_i \approx \sqrt{s_i}/\eta` (:mod:`theory.muon`). Gradient descent instead learns the largest mode first.
"""
from __future__ import annotations

import numpy as np

import theory.muon as th
from paper_checks import STEPLAB, Bound, Categorical, Count, Exact, Rate, Result, claim, fit_slope
from paper_checks.muon import RHEE2026
from paper_checks.muon import experiments as E

QUOTE = "Muon instead learns all the top modes of M⋆ at the same rate, with the smaller modes converging first."
WHERE = "arXiv:2606.30509, abstract"


@claim("rhee2026.modes_at_one_rate_smallest_first", paper=RHEE2026, provenance="quoted", kind="rate",
       source="abstract; the arrival law t_i = sqrt(0.9 s_i)/eta (the product's modes growing together as (eta t)^2) "
              "is steplab's reading, measured in the authors' notebook setting",
       quote=QUOTE, where=WHERE,
       statement="Muon (exact polar factor, no momentum) on W2 W1 -> diag(10/k) from small Gaussian starts "
                 "(alpha = 5e-3, eta = 5e-3) brings mode i to 90 % of s_i at t_i = sqrt(0.9 s_i)/eta: one rate "
                 "(eta t)^2 for every mode, so the smaller modes arrive first (the median over starts; in a "
                 "few starts one of the small, closely spaced modes lags).",
       latex=r"t_i \approx \sqrt{0.9\,s_i}/\eta \propto s_i^{1/2}")
def modes_at_one_rate(budget) -> Result:
    r"""The first step at which :math:`(W_2W_1)_{ii} \ge 0.9 s_i`, :math:`s_i = 10/i`, :math:`i = 1..n`, over several
    starts (n = 32, the notebooks' size; 8 starts at full, 3 at quick): the log-log slope of the median arrival in
    :math:`s_i` against 1/2 (:func:`theory.muon.factorization_arrival`) and the order of the median arrivals; the
    detail counts the arrivals within 5 % of :math:`\sqrt{0.9 s_i}/\eta` and lists the late ones.

    Rivals: slope 1 (the single-matrix law :math:`t_i = s_i/\eta`); slope 0 (every mode at once); gradient descent's
    saddle-to-saddle slope and times (:func:`theory.muon.gd_factorization_arrival`, the largest mode first).
    """
    ex = E.modes(budget)
    s, arr = ex["s"], ex["arrival"].astype(float)
    if (arr < 0).any():  # a mode that never arrives is counted as late, never dropped from the median
        arr = np.where(arr < 0, np.inf, arr)
    med = np.median(arr, axis=0)
    t_min = float(med.min())
    pred = th.factorization_arrival(s, E.MODES_ETA, E.MODES_FRAC)
    gd = th.gd_factorization_arrival(s, E.MODES_ETA, E.MODES_ALPHA, E.MODES_FRAC)
    gd_slope, _ = fit_slope(s, gd)
    pred_slope, _ = fit_slope(s, pred)  # the law's own log-log slope over these targets (1/2 for sqrt(phi s)/eta)
    # an O(1)-step shift of each median arrival (the alpha-sized start, the factors' aligning first steps) moves
    # log t_i by at most 3/t_min; a least-squares slope over [log s_min, log s_max] moves by at most twice that over
    # the range
    nxt = 2.0 * (3.0 / t_min) / np.log(s.max() / s.min())
    on_time = np.abs(arr - pred) <= 0.05 * pred
    checks = [
        Rate("log-log slope of the median arrival step t_i in s_i", x=s, y=med, predicted=pred_slope, next_order=nxt,
             z=4.0,
             rivals={"the single-matrix law t_i = s_i/η: slope 1": 1.0, "every mode at once: slope 0": 0.0,
                     f"gradient descent's saddle-to-saddle: slope {gd_slope:.2f}": gd_slope},
             why=f"4 SE of the log-log fit plus a shift of up to 3 steps per median arrival: {nxt:.3f} (at the "
                 f"earliest, {t_min:.0f} steps)"),
        Categorical("each smaller mode arrives no later than the larger one before it (median arrivals)",
                    measured=np.diff(med) <= 0, predicted=np.diff(pred) <= 0,
                    rivals={"gradient descent's order (largest mode first)": np.diff(gd) <= 0},
                    why="one step resolves an arrival; neighbouring small modes arrive 1-2 steps apart, so a tie "
                        "counts as in order"),
    ]
    late = np.argwhere(~on_time)
    return Result(checks,
                  detail=f"n = {ex['n']}, {arr.shape[0]} starts: {int(on_time.sum())} of {on_time.size} arrivals "
                         f"within 5 %; median arrivals {med.astype(int).tolist()} vs sqrt(0.9 s)/eta "
                         f"{np.round(pred, 1).tolist()}; late (start, mode: step): "
                         + (", ".join(f"({r}, {i + 1}: {arr[r, i]:.0f})" for r, i in late) or "none"),
                  seed=E.SEED + 3, arrays={"s": s, "arrival": arr, "median": med, "modes": ex["modes"]})


@claim("steplab.muon_single_matrix_arrivals", paper=STEPLAB, provenance="derived", kind="exact",
       source="derived here (single matrix, exact polar, no momentum, no decay, W_0 = 0); rhee2026's statement is "
              "for the factorization",
       statement="Exact-polar Muon on 1/2 |W - Y|_F^2 from W_0 = 0 moves every singular value by eta per step, so mode "
                 "i arrives (|sigma_i(W_t) - s_i| <= eta/2) at the first t >= s_i/eta - 1/2, the smallest first, and "
                 "then stays within eta of s_i.",
       latex=r"t_i = \lceil s_i/\eta - 1/2\rceil")
def single_matrix_arrivals(budget) -> Result:
    r"""Arrival steps of the 8 modes :math:`s = (5, 4, 3, 2, 1, 0.6, 0.4, 0.2)` of a 16x8 target at
    :math:`\eta = 0.0123`, against :func:`theory.muon.single_matrix_arrival`.

    Rivals: gradient descent's exponential approach :math:`t_i = \ln(2s_i/\eta)/(-\ln(1-\eta))` (same rate, the
    largest last only by a logarithm); the factorization's law :math:`\sqrt{s_i}/\eta`.
    """
    ex = E.single(budget)
    s, eta = E.SINGLE_S, E.SINGLE_ETA
    pred = th.single_matrix_arrival(s, eta)
    arr = ex["arrival"].astype(float)
    checks = [
        Exact("arrival step of each mode", predicted=pred, measured=arr, atol=0.5,
              rivals={"gradient descent: ln(2 s/η)/(-ln(1-η))": np.ceil(np.log(2 * s / eta) / -np.log1p(-eta)),
                      "the factorization's sqrt(s)/η": np.ceil(np.sqrt(s) / eta)},
              why="integer steps: half a step tells any two apart; s_i/eta lies at least 1e-3 from a half-integer, far "
                  "above the round-off of t eta, so the arrival step is not a rounding tie"),
    ]
    return Result(checks, detail=f"arrivals {arr.astype(int).tolist()}; final max |sigma_i - s_i| = "
                                 f"{ex['final_gap'] / eta:.2f} eta",
                  arrays={"s": s, "arrival": arr, "predicted": pred})


@claim("rhee2026.stable_past_the_sharpness_threshold", paper=RHEE2026, provenance="quoted", kind="qualitative",
       source="abstract; the threshold 2/lambda_max with lambda_max = 2 s_max at a balanced minimum is steplab's "
              "derivation, the start scale alpha = 0.1 the notebooks' learning-rate sweep's",
       quote="Muon remains stable even when the learning rate exceeds the critical threshold set by the local loss "
             "sharpness.",
       where=WHERE,
       statement="On W2 W1 -> diag(10/k) (k = 1..32) from alpha = 0.1, gradient descent diverges at 2, 5 and 10 times "
                 "the threshold 2/lambda_max = 1/s_max set by the sharpness lambda_max = 2 s_max of a balanced "
                 "minimum, while Muon (exact polar factor) at the same steps stays bounded and ends below its "
                 "starting loss.",
       latex=r"\eta > 2/\lambda_{\max}:\ \text{GD diverges, Muon stays bounded}")
def stable_past_threshold(budget) -> Result:
    r"""Muon runs at :math:`\eta = 2, 5, 10 \times 2/\lambda_{\max}` (:func:`theory.muon.gd_threshold`,
    :math:`\lambda_{\max} = 2 s_{\max} = 20`) and GD at 0.5, 0.9, 2, 5, 10 times it, the same start per step size
    above the threshold: the divergence flags of both (GD's locate the threshold) and Muon's final loss relative to
    its start.

    Rivals: Muon diverging past the threshold like GD; GD stable there too (the threshold misplaced); Muon
    converging at those steps (final loss below 1e-6: its fixed-size steps cannot settle).
    """
    ex = E.modes(budget)
    eta_c = th.gd_threshold(ex["s"])
    m = ex["stab_eta"] / eta_c
    gd_m = ex["gd_eta"] / eta_c
    checks = [
        Count("Muon runs past the threshold that stay bounded", measured=~ex["stab_diverged"], predicted=True,
              rivals={"Muon diverges past 2/λ_max like GD": np.zeros(m.size, bool)},
              why="every run: the statement allows none to diverge"),
        Count("GD runs that diverge (at 0.5, 0.9, 2, 5, 10 x the threshold)", measured=ex["gd_diverged"],
              predicted=gd_m > 1.0,
              rivals={"GD stable at every step (the threshold misplaced upward)": np.zeros(gd_m.size, bool),
                      "GD diverging at every step": np.ones(gd_m.size, bool)},
              why="every run: GD converges below its linear stability threshold and leaves every neighbourhood of "
                  "the minimum above it"),
        Bound("Muon's final loss / its starting loss", measured=ex["stab_loss"], bound=1.0,
              rivals={"Muon converges at these steps (below 1e-6)": 1e-6},
              why="bounded and below the start; fixed-size steps leave an O(eta) error, so no convergence"),
    ]
    return Result(checks, detail=f"eta_c = 2/lambda_max = {eta_c:g}; Muon at eta/eta_c = {m.tolist()}: final "
                                 f"loss / start = {np.round(ex['stab_loss'], 4).tolist()}; GD at eta/eta_c = "
                                 f"{np.round(gd_m, 2).tolist()}: diverged at steps {ex['gd_diverged_step'].tolist()}",
                  seed=E.SEED + 3, arrays={"multiple": m, "muon_loss": ex["stab_loss"]})
