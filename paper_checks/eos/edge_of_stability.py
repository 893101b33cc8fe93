r"""Cohen, Kaur, Li, Kolter, Talwalkar (2021): full-batch GD trains at the edge of stability.

A tiny tanh MLP on a few hundred points (:func:`sims.eos.mlp_run`, HVP-Lanczos sharpness every few
steps), trained by GD at five step sizes: the sharpness rises (progressive sharpening) until
:math:`2/\eta`, then hovers there while the loss keeps falling non-monotonically. The settled sharpness
is fitted against :math:`2/\eta` over the step sizes (:func:`proportional_fit`); the helpers here are
shared with the momentum claim of :mod:`paper_checks.eos.momentum`.
"""
from __future__ import annotations

import numpy as np

from sims.edges import first_crossing
import theory.eos as th
from paper_checks import Count, Paper, Result, Statistical, claim, fit_slope
from paper_checks.eos import experiments as E

PAPER = Paper(key="cohen2021", title="Gradient Descent on Neural Networks Typically Occurs at the Edge of Stability",
              authors="J. M. Cohen, S. Kaur, Y. Li, J. Z. Kolter, A. Talwalkar", year=2021, arxiv="2103.00065",
              venue="ICLR 2021")

# "Hovers right at, or just above" the threshold: the prediction is the interval [T, (1 + JUST_ABOVE) T]. The paper
# gives no number for "just above"; steplab reads it as "less than 5 % above", half the 10 % resolution ceiling of
# the claim layer, so that a threshold off by 8-10 % (a wrong formula) falls outside the interval, not inside it.
JUST_ABOVE = 0.05
Z = 4.0  # standard errors in every band of these claims (the SE comes from the scatter over independent runs)


def settled_window(n_meas: int) -> slice:
    """The measurements averaged as the *settled* sharpness: the last quarter of a run, whatever the threshold.

    Fixed in advance (never located from the threshold under test, so a wrong threshold cannot move the
    measurement): every run of :func:`paper_checks.eos.experiments.mlp_rows` crosses its threshold within its
    first 30 % and makes its last catapult before this window (the ``eos_sharpness`` figure shows both).
    """
    return slice(3 * n_meas // 4, None)


def settled_sharpness(sharpness: np.ndarray) -> np.ndarray:
    """Time-averaged sharpness over :func:`settled_window` of each run (rows: runs; NaN where a run diverged)."""
    S = np.asarray(sharpness, dtype=float)
    return S[:, settled_window(S.shape[1])].mean(axis=1)


def proportional_fit(threshold: np.ndarray, settled: np.ndarray) -> tuple[float, float]:
    r"""Least-squares fit :math:`\bar S_i = c\,T_i` through the origin and the standard error of :math:`\hat c`.

    :math:`\hat c = \sum_i \bar S_i T_i / \sum_i T_i^2`, :math:`\mathrm{SE} = \sqrt{\sum_i r_i^2/(n-1)\,/\sum_i T_i^2}`
    with residuals :math:`r_i = \bar S_i - \hat c T_i`: the scatter of independent runs (different seeds, step
    sizes or momenta) about one proportionality. Needs at least two runs.
    """
    T, S = np.asarray(threshold, float), np.asarray(settled, float)
    if T.size < 2:
        raise ValueError(f"threshold: a fit with a standard error needs at least two runs, got {T.size}")
    c = float(np.sum(S * T) / np.sum(T * T))
    resid = S - c * T
    return c, float(np.sqrt(np.sum(resid ** 2) / (T.size - 1) / np.sum(T * T)))


def as_fitted_ratio(threshold: np.ndarray, other: np.ndarray) -> float:
    r""":math:`\hat c` that runs settling exactly at ``other`` would give when fitted against ``threshold``:
    :math:`\sum_i O_i T_i / \sum_i T_i^2`."""
    T, O = np.asarray(threshold, float), np.asarray(other, float)
    return float(np.sum(O * T) / np.sum(T * T))


def at_or_just_above(quantity: str, fitted, se, rivals: dict, why: str, dof: int) -> Statistical:
    r"""The fitted ratio(s) :math:`\hat c` against the interval :math:`[1, 1 + \delta]`, :math:`\delta` = ``JUST_ABOVE``.

    Accepted iff :math:`1 - Z\,\mathrm{SE} \le \hat c \le 1 + \delta + Z\,\mathrm{SE}`: a :class:`Statistical`
    check whose prediction is the interval's midpoint :math:`1 + \delta/2` and whose ``bias`` is its half-width
    :math:`\delta/2` (the rule is two-sided; the interval is what makes it one-sided about 1). A rival threshold
    formula :math:`T^r` enters as the same interval scaled by :func:`as_fitted_ratio`, i.e. the value
    :math:`k(1 + \delta/2)`; a rival that is not a threshold (a trend) enters as its fitted ratio. ``dof``: the
    SE's degrees of freedom (runs minus one, :func:`proportional_fit`), so the report shows the band's coverage.
    """
    fitted = np.asarray(fitted, float)
    return Statistical(quantity, estimate=fitted, se=se, predicted=np.full(fitted.shape, 1.0 + JUST_ABOVE / 2),
                       bias=JUST_ABOVE / 2, z=Z, rivals=rivals, why=why, dof=dof)


def reaches(sharpness: np.ndarray, threshold: float, diverged: bool) -> bool:
    """The run starts below ``threshold``, reaches it (progressive sharpening), and never diverges."""
    return bool(sharpness[0] < threshold and first_crossing(sharpness, threshold) > 0 and not diverged)


def pre_crossing_extrapolation(t: np.ndarray, sharpness: np.ndarray, threshold: float) -> float:
    """The sharpness the pre-crossing trend would reach at the middle of the settled window.

    A line fitted (least squares) to the measurements from up to 10 before the first crossing of ``threshold`` to
    the crossing, extrapolated: what continued progressive sharpening (gradient flow's behaviour) would give. NaN
    where the run starts above the threshold or never crosses it (such a run fails the claim's count).
    """
    first = first_crossing(sharpness, threshold)
    if first < 1:
        return float("nan")
    lo = max(0, first - 10)
    slope = float(np.polyfit(t[lo:first + 1], sharpness[lo:first + 1], 1)[0])
    win = settled_window(sharpness.size)
    mid = 0.5 * (t[win][0] + t[-1])
    return float(sharpness[first] + slope * (mid - t[first]))


@claim("cohen2021.sharpness_at_two_over_eta", paper=PAPER, provenance="quoted", kind="statistical",
       source="Figure 1 caption and abstract (progressive sharpening, then sharpness hovering at 2/eta)",
       quote="For each step size $\\eta$, observe that the sharpness rises to $2/\\eta$ (marked by the horizontal dashed "
             "line of the appropriate color) and then hovers right at, or just above, this value.",
       where="arXiv:2103.00065v3, Section 1, Figure 1 caption",
       statement="Trained by full-batch GD at any of several step sizes, a small network's sharpness rises until it "
                 "reaches 2/eta and then hovers right at, or just above (within 5 %), 2/eta -- scaling as 1/eta across "
                 "step sizes -- instead of continuing to rise as under gradient flow.",
       latex=r"\overline{\lambda_{\max}(\nabla^2 L(w_t))}\big|_{\text{settled}} = c\,\frac{2}{\eta},\quad "
             r"1 \le c \le 1.05")
def sharpness_at_two_over_eta(budget) -> Result:
    r"""Settled sharpness of GD at five step sizes (four seeds at one), fitted against 2/eta.

    Measured per run: the Lanczos sharpness averaged over the last quarter of the run (a window fixed in
    advance). Fitted: :math:`\bar S = c\,(2/\eta)` through the origin (:func:`proportional_fit`, SE from the
    scatter of the runs about it) and the log-log slope of :math:`\bar S` on :math:`2/\eta`. Predicted:
    :math:`c \in [1, 1.05]` ("right at, or just above"), slope 1; the threshold is
    :func:`theory.eos.critical_sharpness`. Rivals: progressive sharpening goes on at its pre-crossing rate
    (gradient flow's behaviour, extrapolated per run); the settled sharpness is set by the network, not by
    :math:`\eta` (slope 0); the sharpness settles at :math:`1/\eta` (the interval scaled by 1/2). A count checks every
    run starts below 2/eta and reaches it.
    """
    ex = E.mlp(budget)
    rows = np.flatnonzero(ex["method"] == "gd")
    eta = ex["eta"][rows]
    T = np.array([th.critical_sharpness(e) for e in eta])
    S = ex["sharpness"][rows]
    reached = np.array([reaches(s, thr, d) for s, thr, d in zip(S, T, ex["diverged"][rows])])
    settled = settled_sharpness(S)
    extrap = np.array([pre_crossing_extrapolation(ex["t"][r], s, thr) for r, s, thr in zip(rows, S, T)])
    # the fits use the runs that reached their threshold (and so have an extrapolation); a run that did not fails the
    # count, never silently
    ok = reached & np.isfinite(settled)
    c, se = proportional_fit(T[ok], settled[ok])
    slope, slope_se = fit_slope(T[ok], settled[ok], log=True)
    checks = [
        at_or_just_above(
            "fitted c in settled sharpness = c * 2/eta (prediction: c in [1, 1.05], shown as midpoint 1.025 with "
            "half-width 0.025 as bias)", c, se,
            rivals={"progressive sharpening continues at its pre-crossing rate (gradient flow)":
                    as_fitted_ratio(T[ok], extrap[ok]),
                    "the sharpness settles at 1/eta (the step size's descent-lemma optimum, eta = 1/S)":
                    as_fitted_ratio(T[ok], 0.5 * T[ok]) * (1.0 + JUST_ABOVE / 2)},
            why=f"SE from the scatter of {rows.size} runs (5 step sizes, 4 seeds at eta = {E.MLP_ETA}) about the "
                f"proportional fit; {Z:g} SE, plus the 'just above' interval [1, {1 + JUST_ABOVE:g}]",
            dof=int(ok.sum()) - 1),
        Statistical("log-log slope of the settled sharpness on 2/eta (least squares over the runs)", estimate=slope,
                    se=slope_se, predicted=1.0, z=Z, dof=int(ok.sum()) - 2,
                    rivals={"the settled sharpness is set by the network, not by eta (slope 0)": 0.0},
                    why="SE of the least-squares slope from the residual scatter of the runs (n - 2 degrees of freedom)"),
        Count("runs that start below 2/eta and reach it (progressive sharpening)", measured=reached, predicted=True,
              why="the edge of stability needs the sharpness to rise to 2/eta first"),
    ]
    ratio = settled / T
    detail = (f"{rows.size} GD runs at eta = {sorted(set(eta.tolist()))}: settled sharpness / (2/eta) = "
              f"{np.round(ratio, 3).tolist()}; fit c = {c:.4f} +- {se:.4f}, log-log slope {slope:.3f} +- {slope_se:.3f}; "
              f"pre-crossing sharpening extrapolated would give {np.round(extrap / T, 2).tolist()} x 2/eta")
    return Result(checks, detail=detail,
                  arrays={"t": ex["t"][rows], "sharpness": S, "eta": eta, "threshold": T, "settled": settled,
                          "mean_loss": ex["mean_loss"][rows], "fit": np.array([c, se, slope, slope_se])}, seed=E.SEED)


# "Long timescales": windows of a quarter of a run's measurements (200 steps at the quick budget, 500 at full), counted
# from the first crossing of 2/eta. On this network shorter windows do not fall every time: the block-mean loss over
# 50-step windows falls in 50-90 % of consecutive pairs, over 100-step windows in 67-100 %, over 200-step ones in all.
LONG_WINDOWS = 4


def upticks(loss: np.ndarray) -> int:
    """How many consecutive samples of a loss record rise (``loss[k+1] > loss[k]``)."""
    return int(np.sum(np.diff(np.asarray(loss, float)) > 0))


def window_means(record: np.ndarray, start: int, width: int) -> np.ndarray:
    """Means of ``record`` over consecutive windows of ``width`` samples from ``start`` (a partial last one dropped)."""
    seg = np.asarray(record, float)[start:]
    n = seg.size // width
    return seg[:n * width].reshape(n, width).mean(axis=1)


@claim("cohen2021.loss_nonmonotone_but_decreasing", paper=PAPER, provenance="quoted", kind="qualitative",
       source="abstract",
       quote="the training loss behaves non-monotonically over short timescales, yet consistently decreases over long "
             "timescales",
       where="arXiv:2103.00065, abstract",
       statement="Once a small network's sharpness has reached 2/eta under full-batch GD, its training loss rises between "
                 "some consecutive samples (10 steps apart) yet falls from every long window (200 steps) to the next; "
                 "before the sharpness reaches 2/eta the loss falls monotonically, as does the central flow's loss "
                 "from the same initialization throughout.",
       latex=r"S(w_t) \ge 2/\eta:\ \#\{k: L_{k+1} > L_k\} > 0,\quad \overline{L}_{[j]} > \overline{L}_{[j+1]}\ "
             r"\text{(long windows)}")
def loss_nonmonotone_but_decreasing(budget) -> Result:
    r"""Upticks of GD's sampled loss before and after the sharpness reaches 2/eta, and its long-window trend.

    The eight GD runs of the network experiment (five step sizes, four seeds at one) and, as a control, the four
    central-flow runs from the same initializations. Per GD run: the first measurement at or above
    :func:`theory.eos.critical_sharpness` splits the loss record :math:`L(w_{k\cdot\text{every}})`; before it the
    count of upticks must be 0 (descent lemma: GD on a loss of sharpness below :math:`2/\eta` decreases it),
    after it positive (short timescales); the block-mean loss (the average over every step of a measurement
    interval) over ``LONG_WINDOWS`` windows of a quarter of the record each, from the crossing, must fall from each
    window to the next (long timescales). Rivals: the loss falls monotonically throughout (the descent-lemma picture,
    and the central flow's prediction for its own loss); the loss is non-monotone regardless of 2/eta (upticks
    before the crossing too); the loss stalls at the edge of stability (no long-window decrease). The control
    checks the uptick count can be 0: the central flow's loss never rises.
    """
    ex = E.mlp(budget)
    rows = np.flatnonzero(ex["method"] == "gd")
    cf_rows = np.flatnonzero(ex["method"] == "central")
    eta = ex["eta"][rows]
    T = np.array([th.critical_sharpness(e) for e in eta])
    S, L, M = ex["sharpness"][rows], ex["loss"][rows], ex["mean_loss"][rows]
    if np.any(ex["diverged"][rows]) or np.any(ex["diverged"][cf_rows]):
        raise RuntimeError("a network run diverged")
    first = np.array([first_crossing(s, thr) for s, thr in zip(S, T)])
    crossed = first > 0  # starts below 2/eta and reaches it within the run
    before = np.array([upticks(l[:f + 1]) if f > 0 else -1 for l, f in zip(L, first)])
    after = np.array([upticks(l[f:]) if f > 0 else 0 for l, f in zip(L, first)])
    width = S.shape[1] // LONG_WINDOWS
    windows = [window_means(m, f, width) if f > 0 else np.array([]) for m, f in zip(M, first)]
    falls = np.concatenate([np.diff(w) < 0 for w in windows]) if any(w.size > 1 for w in windows) else np.array([False])
    cf_up = np.array([upticks(l) for l in ex["loss"][cf_rows]])
    n = rows.size
    steps = int(ex["t"][rows[0]][1] - ex["t"][rows[0]][0])
    checks = [
        Count("GD runs whose loss rises between some consecutive samples after the sharpness reaches 2/eta",
              measured=crossed & (after > 0), predicted=True,
              rivals={"the loss falls monotonically (descent lemma; the central flow's own loss)": np.zeros(n, bool)},
              why="every run reaches 2/eta within its first 15 % (the edge-of-stability claim's count); one uptick "
                  "suffices for 'non-monotone'"),
        Count("GD runs whose loss falls monotonically until the sharpness reaches 2/eta", measured=before == 0,
              predicted=True,
              rivals={"the loss is non-monotone regardless of 2/eta (upticks before the crossing)": np.zeros(n, bool)},
              why="below 2/eta the descent lemma makes every GD step decrease the loss (sampled every "
                  f"{steps} steps, any rise would show)"),
        Count(f"consecutive long windows ({width} samples, {width * steps} steps, from the crossing) whose mean loss "
              "falls, over all GD runs", measured=falls, predicted=True,
              rivals={"the loss stalls at the edge of stability (no long-window decrease)": np.zeros(falls.size, bool)},
              why="'consistently decreases': every window lower than the one before"),
        Count("central-flow runs (same initializations) whose loss never rises (control of the uptick count)",
              measured=cf_up == 0, predicted=True,
              rivals={"upticks are an artefact of sampling any descent": np.zeros(cf_up.size, bool)},
              why="the central flow's loss is non-increasing (its sigma^2 term only removes the ascent direction)"),
    ]
    detail = (f"{n} GD runs at eta = {sorted(set(eta.tolist()))}: first measurement at 2/eta {first.tolist()} (of "
              f"{S.shape[1]}, {steps} steps apart); upticks before {before.tolist()}, after {after.tolist()}; "
              f"{int(falls.sum())}/{falls.size} long-window decreases; central-flow upticks {cf_up.tolist()}")
    return Result(checks, detail=detail,
                  arrays={"t": ex["t"][rows], "loss": L, "mean_loss": M, "eta": eta, "first": first,
                          "before": before, "after": after, "cf_loss": ex["loss"][cf_rows], "window": np.array(width)},
                  seed=E.SEED)
