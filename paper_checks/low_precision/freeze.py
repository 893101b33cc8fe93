r"""Round-to-nearest storage: where gradient descent freezes, and when.

On :math:`a(w - w^*)^2/2` with bf16-stored weights, a run approaching :math:`w^*` from above stops at the first grid
point whose update :math:`\eta a e` is below half an ulp: its error is the unique grid offset in
:math:`[U - \mathrm{ulp}, U)`, :math:`U = \mathrm{ulp}/(2\eta a)` (:func:`theory.low_precision.rn_frozen_error`), a floor
:math:`\propto 1/\eta`. The exact path's update crosses half an ulp at :math:`t_f`
(:func:`theory.low_precision.reference_freeze_step`); the stored path's own freeze step is that of the exact
lattice chain (:func:`theory.low_precision.rn_lattice_run`), and the two agree to within two steps only for
:math:`\eta a \gtrsim 0.07` here.
"""
from __future__ import annotations

import numpy as np
import sympy as sp

import theory.low_precision as th
from paper_checks import STEPLAB, Bound, Categorical, Count, Exact, Rate, Result, claim, mean_se
from paper_checks.low_precision import SHANG, ZAMIRAI
from paper_checks.low_precision import experiments as E

Q_FREEZE = ("when a gradient-descent weight update falls below half the unit in the last place (ULP) of the weight, "
            "it rounds away and that coordinate freezes while its gradient is still nonzero")
Q_PREDICT = ("The freeze is deterministic, governed by a per-coordinate half-ULP condition, and predictable from a "
             "high-precision trajectory and the target mantissa length alone, without low-precision data.")
Q_ZAMIRAI = ("we show that nearest rounding for model weight updates often cancels small updates, which degrades the "
             "convergence and model accuracy")
WHERE_SHANG = "arXiv:2607.09800, abstract"
WHERE_ZAMIRAI = "arXiv:2010.06192, abstract"
#: the freeze-step window: the exact path predicts the stored path's freeze to within this many steps
WINDOW_STEPS = 2


def _band_point(w_star, upper, q):
    """The grid offset in [upper - q, upper): where a run from above stops if it froze below ``upper``."""
    return (np.ceil((w_star + upper) / q) - 1.0) * q - w_star


def _offsets(run):
    """Per step size: the stored runs' freeze steps minus the exact path's prediction t_f, and the lattice chain's."""
    ws, etas = run["w_star"], run["eta_a"]
    measured, lattice = [], []
    for k, eta in enumerate(etas):
        t_f = th.reference_freeze_step(E.W0 - ws, eta, E.ULP)
        measured.append(run["last_move"][k] - t_f)
        lattice.append(th.rn_lattice_run(ws, E.W0, eta, E.RN_STEPS)["freeze_step"] - t_f)
    return np.array(measured), np.array(lattice)


@claim("shang2026.half_ulp_freeze", paper=SHANG, provenance="quoted", kind="exact",
       source="abstract (the half-ULP freeze); the frozen error's band, its 1/eta floor and their measurement are "
              "derived here",
       quote=Q_FREEZE, where=WHERE_SHANG,
       statement="Gradient descent on a(w - w*)^2/2 with bf16 round-to-nearest weights, approaching w* from above, "
                 "freezes at the first grid point where the update eta a e is below ulp/2, with the gradient still "
                 "nonzero: the frozen error is the grid offset in [U - ulp, U), U = ulp/(2 eta a), run by run, so "
                 "the floor scales as 1/eta (eta a from 0.01 to 0.5).",
       latex=r"e_\infty \in \Big[\frac{\mathrm{ulp}}{2\eta a} - \mathrm{ulp},\ \frac{\mathrm{ulp}}{2\eta a}\Big),"
             r"\quad \bar e_\infty + \tfrac{\mathrm{ulp}}{2} \propto \eta^{-1}")
def half_ulp_freeze(budget) -> Result:
    r"""The final error of every bf16 round-to-nearest run (``low_precision.rn_runs``: 11 step sizes, eta a in
    [0.01, 0.5]), in ulps, against :func:`theory.low_precision.rn_frozen_error` for the same float32 minimizer and
    step; then the slope of :math:`\log(\bar e_\infty + \mathrm{ulp}/2)` against :math:`\log\eta a` (the band's mean is
    :math:`U - \mathrm{ulp}/2` for a uniform position of :math:`w^*` in its cell) against -1.

    Rivals: the update rounding away only below a full ulp (band :math:`[2U - \mathrm{ulp}, 2U)`); a floor of one
    ulp whatever :math:`\eta` (the first grid point above :math:`w^*`); a floor :math:`\propto \eta` (the noise-floor
    intuition, matched to the band at :math:`\eta a = 0.1`); slopes 0 and +1.
    """
    run = E.rn_runs(budget)
    return half_ulp_freeze_checks(run["w_star"], run["eta_a"], run["w"], E.ULP)


def half_ulp_freeze_checks(ws: np.ndarray, etas: np.ndarray, w: np.ndarray, ulp: float) -> Result:
    r"""Core of ``shang2026.half_ulp_freeze``: the checks on the final weights of round-to-nearest runs from above.

    ``ws``: the runs' (float32) minimizers, all in one binade of grid spacing ``ulp``; ``etas``: the (float32) steps
    times curvature; ``w``: (eta, run) final stored weights. Each frozen error :math:`e_\infty = w - w^\star`, in ulps,
    against the grid offset in :math:`[U - \mathrm{ulp}, U)`, :math:`U = \mathrm{ulp}/(2\eta a)`
    (:func:`theory.low_precision.rn_frozen_error`), exactly (a wrong grid point is off by a whole ulp). Rivals: the
    band :math:`[2U - \mathrm{ulp}, 2U)` (rounding away only below a full ulp); one ulp whatever :math:`\eta`; a floor
    :math:`\propto \eta`, matched to the band at :math:`\eta a = 0.1`.
    """
    err = (w - ws) / ulp
    pred = np.stack([th.rn_frozen_error(ws, k) for k in etas]) / ulp
    upper = ulp / (2 * etas[:, None])
    rivals = {"rounds away only below a full ulp: band [2U - ulp, 2U)": _band_point(ws, 2 * upper, ulp) / ulp,
              "a floor of one ulp whatever eta (the first grid point above w*)":
                  _band_point(ws, 1e-12 * ulp, ulp) / ulp + 1.0,
              "a floor proportional to eta (U = ulp/(2 * 0.1) * (eta a / 0.1))":
                  _band_point(ws, ulp / 0.2 * (etas[:, None] / 0.1), ulp) / ulp}
    checks = [
        Exact("frozen error e_inf / ulp, every run at every eta a", predicted=pred, measured=err, atol=1e-9,
              why="the prediction uses the runs' own float32 w* and eta a in float64: only its round-off "
                  "(~1e-13 ulp) separates them, while a wrong grid point is off by a whole ulp",
              rivals=rivals),
    ]
    return Result(checks, detail=f"{ws.size} minimizers x {etas.size} step sizes; frozen e_inf/ulp in "
                                 + ", ".join(f"{k:.3g}: [{lo:.2f}, {hi:.2f}] (U = {1 / (2 * k):.2f})"
                                             for k, lo, hi in zip(etas, err.min(axis=1), err.max(axis=1))),
                  arrays={"eta_a": etas, "mean_error": err.mean(axis=1), "min_error": err.min(axis=1),
                          "max_error": err.max(axis=1)})


@claim("steplab.rn_floor_inverse_eta", paper=STEPLAB, provenance="derived", kind="rate", source="derived here",
       statement="The round-to-nearest floor scales as 1/eta: the mean frozen error of bf16 gradient descent over "
                 "minimizers spread across grid cells is ulp/(2 eta a) - ulp/2, so log(mean e_inf + ulp/2) falls "
                 "with slope -1 in log(eta a) over eta a in [0.01, 0.5]; a smaller or decaying step freezes farther "
                 "from the minimizer.",
       latex=r"\bar e_\infty + \tfrac{\mathrm{ulp}}{2} = \frac{\mathrm{ulp}}{2\eta a} \propto \eta^{-1}")
def rn_floor_inverse_eta(budget) -> Result:
    r"""The slope of :math:`\log(\bar e_\infty/\mathrm{ulp} + 1/2)` against :math:`\log\eta a` over the bf16 runs of
    ``low_precision.rn_runs`` (11 step sizes in [0.01, 0.5]), fitted by the shared log-log fitter; the band's mean
    is :math:`U - \mathrm{ulp}/2` for a uniform position of :math:`w^*` in its cell
    (:func:`theory.low_precision.rn_band`), whose exponent is read off the sympy form of :math:`U`.

    Rivals: slope 0 (a floor in ulps whatever the step: "it freezes at an ulp"), +1 (a floor proportional to
    :math:`\eta`, the noise-floor intuition), -2 (the loss's exponent read as the error's).
    """
    run = E.rn_runs(budget)
    ws, etas = run["w_star"], run["eta_a"]
    mean = ((run["w"] - ws) / E.ULP).mean(axis=1) + 0.5
    exponent = float(sp.degree(sp.denom(th.freeze_error_sym()), th.ETA_A))
    lower, upper = th.rn_band(etas, E.ULP)
    checks = [Rate("slope of log(mean e_inf / ulp + 1/2) against log(eta a)", x=etas, y=mean, predicted=-exponent,
                   why="the band's mean is exactly U - ulp/2 for a uniform position of w* in its cell, so no "
                       "next-order term; the sampling noise of each mean enters the fit's standard error",
                   rivals={"0: a floor in ulps independent of eta": 0.0, "+1: a floor proportional to eta": 1.0,
                           "-2: the loss's exponent": -2.0})]
    return Result(checks, detail=f"{ws.size} minimizers per step size; mean e_inf/ulp + 1/2 against U/ulp: "
                                 + ", ".join(f"{k:.3g}: {m:.2f} / {u / E.ULP:.2f}" for k, m, u in zip(etas, mean, upper)),
                  arrays={"eta_a": etas, "mean_plus_half": mean, "upper": upper / E.ULP, "lower": lower / E.ULP})


@claim("zamirai2020.nearest_rounding_cancels_small_updates", paper=ZAMIRAI, provenance="quoted", kind="exact",
       source="abstract (nearest rounding cancels small updates and degrades convergence); the float32-versus-bf16 "
              "floors on a quadratic are derived here",
       quote=Q_ZAMIRAI, where=WHERE_ZAMIRAI,
       statement="Nearest rounding cancels every update below half an ulp of the stored weight, in any format: "
                 "float32-stored gradient descent freezes too, at the grid offset in [U32 - ulp32, U32) with "
                 "U32 = ulp32/(2 eta a), so bf16 storage leaves a loss (e_bf16/e_f32)^2 ~ 2^32 times float32's.",
       latex=r"e_\infty^{(p)} \in [U_p - \mathrm{ulp}_p, U_p),\ U_p = \frac{2^{-p+1}}{2\eta a}\ (p = 8, 24)")
def nearest_rounding_cancels(budget) -> Result:
    r"""The final errors of float32-stored runs (``low_precision.rn_runs``, eta a = 0.07, 0.15, 0.2, 0.3, 600 steps), in
    float32 ulps, against :func:`theory.low_precision.rn_frozen_error` at 24 significand bits; and the ratio of the
    bf16 run's loss to the float32 run's on the same minimizer against the ratio of the two predicted frozen errors
    squared.

    Rivals: float32 converging to the float32 grid point nearest to :math:`w^*` (no freeze: error below one ulp);
    float32 freezing at a full ulp; the loss ratio 1 (the format does not matter) and :math:`2^{32}` (the ratio of
    the two formats' ulps squared, ignoring the band).
    """
    run = E.rn_runs(budget)
    ws, etas = run["w_star"], run["eta_a_f32"]
    err = (run["w_f32"] - ws) / E.ULP32
    pred = np.stack([th.rn_frozen_error(ws, k, mantissa_bits=24) for k in etas]) / E.ULP32
    upper = E.ULP32 / (2 * etas[:, None])
    rows = [list(run["eta_a"]).index(k) for k in etas]
    bf = run["w"][rows] - ws
    ratio = (bf / (run["w_f32"] - ws)) ** 2
    ratio_pred = (np.stack([th.rn_frozen_error(ws, k) for k in etas]) / (pred * E.ULP32)) ** 2
    checks = [
        Exact("float32-stored frozen error e_inf / ulp32, every run", predicted=pred, measured=err, atol=1e-6,
              why="the prediction uses the runs' own float32 w* and eta a; float64 round-off of (w* + U)/ulp32 is "
                  "~1e-9 ulp32, a wrong grid point a whole one",
              rivals={"no freeze: the float32 grid point nearest to w*":
                          np.round(ws / E.ULP32) - ws / E.ULP32 + 0 * pred,
                      "float32 freezes at a full ulp: band [2U - ulp, 2U)":
                          _band_point(ws, 2 * upper, E.ULP32) / E.ULP32}),
        Exact("loss ratio bf16 / float32 on the same minimizer", predicted=ratio_pred, measured=ratio, rtol=1e-9,
              why="both errors are predicted exactly (the checks above and shang2026.half_ulp_freeze); float64 "
                  "round-off of their ratio squared",
              rivals={"1: the storage format does not matter": np.ones_like(ratio_pred),
                      "2^32: the squared ratio of the formats' ulps": np.full_like(ratio_pred, 2.0**32)}),
    ]
    return Result(checks, detail=f"{ws.size} minimizers x {etas.size} step sizes; median loss ratio bf16/f32 "
                                 + ", ".join(f"{k:.3g}: {np.median(r):.3g}" for k, r in zip(etas, ratio)),
                  arrays={"eta_a": etas, "mean_error_f32": err.mean(axis=1)})


@claim("shang2026.freeze_step_from_reference", paper=SHANG, provenance="quoted", kind="bound",
       source="abstract (the freeze is predictable from a high-precision trajectory); the prediction t_f on a "
              "quadratic, its two-step window and its measurement are derived here",
       quote=Q_PREDICT, where=WHERE_SHANG,
       statement="For eta a >= 0.1 the step at which a bf16 round-to-nearest run freezes is predicted from the exact "
                 "path alone, t_f = ceil(ln(2 eta a e0/ulp) / -ln(1 - eta a)), to within two steps, and equals the "
                 "exact lattice chain's freeze step.",
       latex=r"|t_{\mathrm{bf16}} - t_f| \le 2,\quad t_f = \Big\lceil\frac{\ln(2\eta a e_0/\mathrm{ulp})}"
             r"{-\ln(1-\eta a)}\Big\rceil\quad(\eta a \ge 0.1)")
def freeze_step_from_reference(budget) -> Result:
    r"""The last step at which each bf16 run moved, minus :func:`theory.low_precision.reference_freeze_step` for its
    start error, at eta a = 0.1, 0.15, 0.2, 0.3, 0.5 (``low_precision.rn_runs``): the largest offset against the
    two-step window; and the freeze steps themselves against the exact lattice chain
    (:func:`theory.low_precision.rn_lattice_run`, NumPy on integers).

    Rivals: the reference step exact (offset 0 for every run); the lattice chain replaced by the reference step
    itself, and by the reference step of a full-ulp criterion.
    """
    run = E.rn_runs(budget)
    measured, lattice = _offsets(run)
    inside = run["eta_a"] >= 0.099
    ws = run["w_star"]
    t_f = np.stack([th.reference_freeze_step(E.W0 - ws, k, E.ULP) for k in run["eta_a"]])
    t_full = np.stack([th.reference_freeze_step(E.W0 - ws, k, 2 * E.ULP) for k in run["eta_a"]])
    steps = run["last_move"][inside]
    checks = [
        Bound("largest |t_bf16 - t_f| (steps) at eta a >= 0.1", measured=np.abs(measured[inside]),
              bound=float(WINDOW_STEPS), why="freeze steps are integers: no measurement slack",
              rivals={"the reference step exact: |t_bf16 - t_f| = 0": 0.0}),
        Exact("bf16 freeze step against the exact lattice chain's, eta a >= 0.1",
              predicted=(lattice + t_f)[inside], measured=steps.astype(float), atol=0.5,
              why="integer steps: any disagreement is at least one step",
              rivals={"the reference step t_f itself": t_f[inside],
                      "t_f of a full-ulp criterion": t_full[inside]}),
    ]
    return Result(checks, detail="t_bf16 - t_f per eta a: " + ", ".join(
        f"{k:.3g}: [{m.min():+.0f}, {m.max():+.0f}]" for k, m in zip(run["eta_a"], measured)),
        arrays={"eta_a": run["eta_a"], "offset_min": measured.min(axis=1), "offset_max": measured.max(axis=1),
                "offset_mean": measured.mean(axis=1)})


@claim("steplab.freeze_step_window", paper=STEPLAB, provenance="derived", kind="qualitative", source="derived here",
       statement="The exact path's freeze step predicts the bf16 run's to within two steps only for eta a >= 0.07 "
                 "(start 255/128, w* in [1, 1.5)): below, the stored path rounds steps in [ulp/2, ulp) up to a "
                 "full ulp, outruns the exact path and freezes earlier, by up to 19 steps at eta a = 0.01.",
       latex=r"\max|t_{\mathrm{bf16}} - t_f| \le 2 \iff \eta a \ge 0.07")
def freeze_step_window(budget) -> Result:
    r"""Per eta a on the grid 0.01 .. 0.5 (``low_precision.rn_runs``), whether every run's freeze step lies within
    two steps of :func:`theory.low_precision.reference_freeze_step`; measured on the JAX runs, predicted by the exact
    lattice chain (:func:`theory.low_precision.rn_lattice_run`) on the same minimizers.

    Rivals: the reference predicting the freeze at every step size; a window edge one grid point lower or higher.
    """
    run = E.rn_runs(budget)
    measured, lattice = _offsets(run)
    etas = run["eta_a"]
    ok = np.abs(measured).max(axis=1) <= WINDOW_STEPS
    ok_pred = np.abs(lattice).max(axis=1) <= WINDOW_STEPS
    edge = int(np.argmax(ok_pred)) if ok_pred.any() else etas.size
    lower = np.arange(etas.size) >= max(edge - 1, 0)
    higher = np.arange(etas.size) >= edge + 1
    checks = [Categorical("within two steps, per eta a (0.01 .. 0.5)", measured=ok, predicted=ok_pred,
                          rivals={"the reference predicts the freeze at every step size": np.ones_like(ok),
                                  "the window's edge one grid point lower": lower,
                                  "the window's edge one grid point higher": higher},
                          why="an outcome per step size, no tolerance")]
    mean, se = mean_se(measured, axis=1)
    return Result(checks, detail=f"window edge at eta a = {etas[edge]:.3g} (outside below it); largest lead "
                                 f"{-measured.min():.0f} steps at eta a = {etas[0]:.3g}; mean t_bf16 - t_f +- SE over "
                                 f"{measured.shape[1]} minimizers uniform in [1, 1.5), start 255/128: "
                                 + ", ".join(f"{k:.3g}: {m:+.2f} +- {e:.2f}" for k, m, e in zip(etas, mean, se)),
                  arrays={"eta_a": etas, "within": ok, "offset_mean": mean, "offset_se": se})



@claim("steplab.frozen_iterates_ulp_binds", paper=STEPLAB, provenance="derived", kind="exact", source="derived here",
       statement="The one-binade band holds only while start and minimizer share a binade. From 255/64 (ulp 2^-6) "
                 "towards w* in [1, 2) (ulp 2^-7) the binding ulp is the frozen iterate's: a run freezes in the upper "
                 "binade, at the band point of U = 2^-6/(2 eta a), iff w* + U - 2^-6 >= 2, else at w*'s one-binade "
                 "point; at 2 itself a downward update rounds away only below half the lower ulp, a quarter of "
                 "2's own ULP.",
       latex=r"e_\infty = \mathrm{bp}(U_j, \mathrm{ulp}_j),\ j = \max\{j : w^* + U_j - \mathrm{ulp}_j \ge 2^{j}\}")
def frozen_iterates_ulp_binds(budget) -> Result:
    r"""The final error of every run of ``low_precision.binade_runs`` (eta a = 0.01, 0.03, 0.1, 0.3), in units of
    ulp(w*) = 2^-7, against :func:`theory.low_precision.rn_frozen_error_across_binades`.

    Rivals: the one-binade band with ulp(w*) throughout (:func:`theory.low_precision.rn_frozen_error`); the
    start's ulp throughout; the runs whose upper band straddles 2 stopping at 2 (a weight at a power of two held
    by half its own ULP, the spacing above it).
    """
    run = E.binade_runs(budget)
    ws, etas = run["w_star"], run["eta_a"]
    err = (run["w"] - ws) / E.ULP
    pred = np.stack([th.rn_frozen_error_across_binades(ws, E.BINADE_W0, k) for k in etas]) / E.ULP
    one = np.stack([th.rn_frozen_error(ws, k) for k in etas]) / E.ULP
    q2 = 2 * E.ULP
    u2 = q2 / (2 * etas[:, None])
    start_ulp = _band_point(ws, u2, q2) / E.ULP
    straddle = (ws + u2 - q2 < 2.0) & (ws + u2 > 2.0)
    at_two = np.where(straddle, (2.0 - ws) / E.ULP, pred)
    above = (run["w"] >= 2.0).sum(axis=1)
    checks = [Exact("frozen error e_inf / ulp(w*), every run at every eta a", predicted=pred, measured=err, atol=1e-9,
                    why="the prediction uses the runs' own float32 w* and eta a in float64 (round-off ~1e-13 ulp); a "
                        "wrong grid point is off by at least one ulp(w*)",
                    rivals={"one binade: ulp(w*) throughout": one, "the start's ulp (2^-6) throughout": start_ulp,
                            "runs whose upper band straddles 2 stop at 2": at_two})]
    return Result(checks, detail=f"{ws.size} minimizers per eta a; frozen at or above 2: "
                                 + ", ".join(f"{k:.3g}: {a}" for k, a in zip(etas, above))
                                 + "; upper band straddling 2 (of which stopped at 2): "
                                 + ", ".join(f"{int(s.sum())} ({int(((run['w'][i] == 2.0) & s).sum())})"
                                             for i, s in enumerate(straddle)),
                  arrays={"eta_a": etas, "frozen_above": above})


@claim("steplab.float32_cast_moves_the_freeze", paper=STEPLAB, provenance="derived", kind="exact",
       source="derived here",
       statement="The freeze is exactly predictable only if each stored update is rounded once. A float32 update "
                 "cast to bf16 rounds twice, and a last freeze decision within 2^-17 ulp of a tie then goes the "
                 "other way: a few runs in ten thousand freeze one ulp off the single-rounding band point, exactly "
                 "the runs a NumPy float32-then-cast chain (ml_dtypes) predicts.",
       latex=r"\mathrm{bf16}(\mathrm{fl}_{32}(w - \delta)) \ne \mathrm{RN}_{\rm bf16}(w - \delta)")
def float32_cast_moves_the_freeze(budget) -> Result:
    r"""The final iterates of the JAX runs with a float32 update cast to bf16 (``low_precision.cast_runs``: 11 step
    sizes), against :func:`theory.low_precision.cast_chain` (NumPy float32 arithmetic and ``ml_dtypes``' cast: an
    independent emulation); and, per run, whether its frozen error differs from the single-rounding band point
    (:func:`theory.low_precision.rn_frozen_error`), against the same chain's answer.

    Rivals: the cast harmless (the band point for every run); every run off by its double rounding (all differ).
    """
    run = E.cast_runs(budget)
    ws, etas = run["w_star"], run["eta_a"]
    chain = th.cast_chain(ws, E.W0, etas, E.RN_STEPS)["w"]
    band = np.stack([th.rn_frozen_error(ws, k) for k in etas]) + ws
    off = (run["w"] != band).ravel()
    off_pred = (chain != band).ravel()
    checks = [
        Exact("final iterate / ulp, every run", predicted=chain / E.ULP, measured=run["w"] / E.ULP, atol=1e-9,
              why="both are bf16 values from the same float32 arithmetic: any disagreement is a whole ulp",
              rivals={"the cast harmless: the single-rounding band point": band / E.ULP}),
        Count("runs frozen off the single-rounding band point", measured=off, predicted=off_pred,
              why="each run's outcome is deterministic: all must agree",
              rivals={"the cast harmless: none": np.zeros_like(off), "every run": np.ones_like(off)}),
    ]
    return Result(checks, detail=f"{int(off.sum())} of {off.size} runs frozen one ulp off the band point (per eta a: "
                                 + ", ".join(f"{k:.3g}: {int(o.sum())}"
                                             for k, o in zip(etas, off.reshape(etas.size, -1))) + ")",
                  arrays={"eta_a": etas, "off": off.reshape(etas.size, -1).sum(axis=1)})


@claim("steplab.band_holds_below_eta_a_one", paper=STEPLAB, provenance="derived", kind="qualitative",
       source="derived here",
       statement="The round-to-nearest band [U - ulp, U) is exact for every 0 < eta a < 1, overshooting steps "
                 "(1/2 < eta a < 1) included, and breaks at eta a = 1: above it the frozen set |e| < U is narrower "
                 "than a cell, so a run whose minimizer has no grid point that close cannot freeze, and others "
                 "overshoot past theirs; every run off the band point is still moving at the end.",
       latex=r"e_\infty = \mathrm{bp}(U, \mathrm{ulp})\ \text{for every run} \iff \eta a < 1")
def band_holds_below_eta_a_one(budget) -> Result:
    r"""Per eta a in {0.5, ..., 0.99, 1.02, ..., 1.9} (``low_precision.edge_runs``), whether every run's final error is
    the band point of :math:`U = \mathrm{ulp}/(2\eta a)` (computed here from the band's definition, since
    :func:`theory.low_precision.rn_frozen_error` refuses :math:`\eta a \ge 1`), against the edge :math:`\eta a < 1`
    of :func:`theory.low_precision.rn_band`'s domain.

    Rivals: the band up to the stability edge :math:`\eta a < 2`; the band only without overshoot,
    :math:`\eta a \le 1/2`.
    """
    run = E.edge_runs(budget)
    ws, etas = run["w_star"], run["eta_a"]
    err = run["w"] - ws
    upper = E.ULP / (2 * etas[:, None])
    exact = np.all(err == _band_point(ws, upper, E.ULP), axis=1)
    inside = np.array([_in_domain(k) for k in etas])
    off = err != _band_point(ws, upper, E.ULP)
    moving = run["last_move"][off] >= E.RN_STEPS - 1
    checks = [Categorical("every run at the band point, per eta a", measured=exact, predicted=inside,
                          why="an outcome per step size, no tolerance",
                          rivals={"up to the stability edge eta a < 2": etas < 2.0,
                                  "only without overshoot, eta a <= 1/2": etas <= 0.5}),
              Count("runs off the band point still moving in the last two steps (a cycle, not a freeze)",
                    measured=moving, predicted=True, why="the frozen set |e| < U lies inside the band: a frozen run "
                                                         "is at the band point, so none off it may have stopped",
                    rivals={"frozen elsewhere": False})]
    share = off.mean(axis=1)
    return Result(checks, detail=f"{ws.size} minimizers; share of runs off the band point per eta a: "
                                 + ", ".join(f"{k:.3g}: {s:.3f}" for k, s in zip(etas, share)),
                  arrays={"eta_a": etas, "off_share": share})


def _in_domain(eta_a: float) -> bool:
    """Whether the band's closed form accepts ``eta_a`` (its derivation needs 0 < eta a < 1)."""
    try:
        th.rn_band(eta_a, E.ULP)
    except ValueError:
        return False
    return True
