r"""Muon with decoupled weight decay keeps :math:`\|W\|_{op} \le 1/\lambda` -- with the exact polar factor, for :math:`\eta\lambda \le 1`.

An exact polar factor has :math:`\|O\|_{op} = 1`, so :math:`W^+ = (1-\eta\lambda)W - \eta O` keeps the spectral ball of
radius :math:`1/\lambda` when :math:`\eta\lambda \le 1` (:mod:`theory.muon`). The claims measure: the radius (aligned runs
reach its face at the rate the closed form gives, a generic noisy run never leaves it once inside); the window
(:math:`\eta\lambda \le 1` for invariance, :math:`< 2` for convergence); and the public reference code's quintic
Newton--Schulz iteration, whose singular values are not 1, which settles outside the ball.
"""
from __future__ import annotations

import numpy as np

import theory.muon as th
from paper_checks import STEPLAB, Bound, Count, Exact, Result, claim, mean_se
from paper_checks.muon import CHEN2025
from paper_checks.muon import experiments as E

QUOTE = ("we leverage the theoretical results of Lion-$\\mathcal{K}$ to establish that Muon (with decoupled weight "
         "decay) implicitly solves an optimization problem that enforces a constraint on the spectral norm of weight "
         "matrices")
WHERE = "arXiv:2506.15054, abstract"


def _entry(op: np.ndarray, lam: float) -> int:
    """The first step after which lambda |W_t|_op <= 1 for good (-1 if the run ends outside)."""
    outside = np.flatnonzero(op * lam > 1.0 + 1e-12)
    if outside.size == 0:
        return 0
    return int(outside[-1] + 1) if outside[-1] + 1 < op.size else -1


@claim("chen2025.spectral_ball_radius", paper=CHEN2025, provenance="quoted", kind="exact",
       source="abstract (a constraint on the spectral norm); the radius 1/lambda, its approach and its invariance in a "
              "noisy run are steplab's sharpening",
       quote=QUOTE, where=WHERE,
       statement="With decoupled decay lambda (eta lambda <= 1) and the exact polar factor, Muon's constraint is the "
                 "spectral ball |W|_op <= 1/lambda: from 0 toward a target whose every mode lies outside, every "
                 "singular value rises as (1 - (1 - eta lambda)^t)/lambda (to the ball's face, not to a Frobenius "
                 "ball), and a generic noisy run with momentum never leaves the ball once inside.",
       latex=r"\lambda\,\sigma_i(W_t) = 1 - (1-\eta\lambda)^t,\quad \|W_t\|_{op} \le 1/\lambda")
def spectral_ball_radius(budget) -> Result:
    r"""Aligned runs at :math:`\lambda = 0.5, 1, 2` (:math:`\eta\lambda = 0.04`, momentum 0.9, a 16x8 target with
    :math:`\lambda s_i \ge 1.25`): :math:`\lambda\|W_T\|_{op}` and :math:`\lambda\|W_T\|_F` against
    :func:`theory.muon.aligned_norm` (times 1 and :math:`\sqrt r`); the generic 16x8 run (random :math:`Y`,
    :math:`\lambda\|Y\|_{op} \approx 27`, start outside, gradient noise 0.5, momentum 0.9): the largest
    :math:`\lambda\|W_t\|_{op}` after it enters the ball, against 1.

    Rivals: a Frobenius ball :math:`\|W\|_F \le 1/\lambda`; a ball :math:`1/(\eta\lambda)` wide; decay not scaled by the
    step (:math:`\eta/\lambda`); the L2-penalized minimizer :math:`Y/(1+\lambda)`; the decay's own fixed point
    :math:`(1-\eta\lambda)/\lambda` as a tighter bound.
    """
    ex = E.ball(budget)
    T = ex["aligned_T"]
    lams = E.BALL_LAMS
    eta = E.BALL_ETA_LAM / lams
    r = len(E.ALIGNED_S)
    pred = np.array([th.aligned_norm(e, w, T)[()] * w for e, w in zip(eta, lams)])
    sv = ex["aligned_sv"][:, -1, :]
    op = sv[:, 0] * lams
    frob = np.linalg.norm(sv, axis=1) * lams
    why = (f"float64 round-off: T = {T} steps of an SVD and a scaled sum, each ~1e-15 relative, damped by the "
           "contraction 1 - eta lambda; 1e-12 relative covers it 40x")
    checks = [
        Exact("λ‖W_T‖_op of the aligned runs (λ = 0.5, 1, 2)", predicted=pred, measured=op, rtol=1e-12, why=why,
              rivals={"a Frobenius ball |W|_F <= 1/λ (equal modes: λ|W|_op = 1/sqrt r)": pred / np.sqrt(r),
                      "a ball 1/(ηλ) wide": pred / (eta * lams),
                      "a ball η/λ wide (decay not scaled by η)": pred * eta,
                      "the L2-penalized minimizer Y/(1+λ)": lams * E.ALIGNED_S[0] / (1 + lams)}),
        Exact("λ‖W_T‖_F of the aligned runs: every mode on the face", predicted=pred * np.sqrt(r), measured=frob,
              rtol=1e-12, why=why,
              rivals={"a Frobenius ball |W|_F <= 1/λ": np.ones_like(pred),
                      "only the top mode pinned, the others at 0": pred}),
    ]
    op_gen = ex["gen_op_polar"] * E.GEN_LAM
    start = _entry(ex["gen_op_polar"], E.GEN_LAM)
    after = op_gen[start:] if start >= 0 else op_gen
    checks.append(Bound("largest λ‖W_t‖_op after the generic run enters the ball", measured=after, bound=1.0,
                        slack=1e-12,
                        rivals={"the decay's fixed point (1 - ηλ)/λ": 1.0 - E.GEN_ETA * E.GEN_LAM,
                                "the op norm of a Frobenius ball's point Y/(λ|Y|_F)":
                                    ex["gen_op_target"] / ex["gen_frob_target"]},
                        why="the bound is an identity of the update (triangle inequality); slack: float64 round-off of "
                            "one SVD and one scaled sum, ~1e-15 relative, 1000x below 1e-12"))
    return Result(checks,
                  detail=f"aligned (T = {T}): lambda|W_T|_op = {np.round(op, 10).tolist()}, lambda|W_T|_F = "
                         f"{np.round(frob, 6).tolist()} (r = {r}); generic: entered the ball at step {start}, largest "
                         f"lambda|W_t|_op afterwards {after.max():.6f} over {after.size} steps",
                  seed=E.SEED, arrays={"lams": lams, "op": op, "frob": frob, "gen_op": op_gen, "entry": start})


@claim("steplab.muon_ns5_settles_outside_the_ball", paper=STEPLAB, provenance="derived", kind="exact",
       source="found here on chen2025's spectral ball: the public Muon reference code's quintic Newton-Schulz "
              "iteration (coefficients 3.4445, -4.7750, 2.0315) in place of the exact polar factor",
       statement="With k Newton-Schulz steps in place of the polar factor, Muon's top singular value settles at "
                 "lambda |W|_op = max_i p^k(x_i) > 1 (x_i: the normalized momentum's singular values at the fixed "
                 "point), predicted exactly by the modes' scalar recursion, for k = 1, 2, 3, 5, 8; a generic noisy "
                 "NS5 run settles between 1 and the top of p^5's band. The 1/lambda ball is not kept.",
       latex=r"\lambda\|W_\infty\|_{op} = \max_i p^{\circ k}(x_i^\star) \in (1, c_{\max}]")
def ns5_settles_outside(budget) -> Result:
    r"""Aligned NS runs (16x8 target, :math:`\lambda = 2`, :math:`\eta = 0.02`, momentum 0.9, :math:`W_0 = 0`) at
    :math:`k = 1, 2, 3, 5, 8`: :math:`\lambda\|W_T\|_{op}` against :func:`theory.muon.aligned_recursion` (the scalar loop);
    the generic noisy NS5 run: its last quarter of :math:`\lambda\|W_t\|_{op}` below the top of
    :func:`theory.muon.ns_band` and above 1.

    Rivals: the exact polar factor's ball (1); the band's top :math:`c_{\max}(k)` (the sup of :math:`p^{\circ k}`, a
    reader's worst case); the band's low edge.
    """
    ex = E.ns(budget)
    ks = ex["ks"]
    aligned = ns5_settles_outside_checks(E.ALIGNED_S, E.NS_ETA, E.NS_LAM, E.NS_BETA, ks, ex["T"], ex["sv"][:, -1, 0])
    pred, meas, bands = aligned.arrays["predicted"], aligned.arrays["settled"], aligned.arrays["bands"]
    ex_b = E.ball(budget)
    tail = ex_b["gen_op_ns"][-ex_b["gen_T"] // 4:] * E.GEN_LAM
    _, top5 = th.ns_band(5)
    # the tail's mean with a batch-means standard error (10 contiguous blocks: the noisy path is correlated in time)
    blocks = tail[: tail.size // 10 * 10].reshape(10, -1).mean(axis=1)
    tail_mean, tail_se = (float(v) for v in mean_se(blocks))
    op_pol = ex_b["gen_op_polar"]
    start_pol = _entry(op_pol, E.GEN_LAM)
    checks = [
        *aligned.checks,
        Bound("λ‖W_t‖_op over the last quarter of the generic NS5 run: at most the band's top", measured=tail,
              bound=top5, slack=1e-9,
              rivals={"NS5 exact enough that the 1/λ ball holds": 1.0},
              why="the band's top bounds |O|_op for every momentum, and the triangle inequality carries it to W; "
                  "slack: the band top's numerical resolution (a bounded search to 1e-14 in s)"),
        Bound("λ‖W_t‖_op over the last quarter of the generic NS5 run: outside the ball", measured=tail, bound=1.0,
              side=">=",
              rivals={"settles at the band's top": top5},
              why="the measured values themselves; no allowance"),
    ]
    return Result(checks,
                  detail="aligned: lambda|W_T|_op = " + ", ".join(f"k={int(k)}: {m:.6f}" for k, m in zip(ks, meas))
                         + "; bands [min, max] " + ", ".join(f"k={int(k)}: [{b[0]:.3f}, {b[1]:.4f}]"
                                                            for k, b in zip(ks, bands))
                         + f"; generic NS5 run (16x8, lambda = {E.GEN_LAM:g}, eta = {E.GEN_ETA:g}, momentum "
                           f"{E.GEN_BETA:g}, noise {E.GEN_NOISE:g}, T = {ex_b['gen_T']}): last quarter in "
                           f"[{tail.min():.4f}, {tail.max():.4f}], mean {tail_mean:.4f} +- {tail_se:.4f} (batch means); "
                           f"the exact-polar twin on the same noise: largest after entering the ball "
                           f"{op_pol[max(start_pol, 0):].max() * E.GEN_LAM:.6f}",
                  seed=E.SEED, arrays={"ks": ks, "settled": meas, "predicted": pred, "bands": bands, "tail": tail,
                                       "tail_mean": tail_mean, "tail_se": tail_se})


def ns5_settles_outside_checks(s, eta: float, lam: float, momentum: float, ks, n_steps: int,
                               top_sv: np.ndarray) -> Result:
    r"""Core of ``steplab.muon_ns5_settles_outside_the_ball``: the check on aligned Muon runs with k Newton-Schulz steps.

    Target :math:`Y = U\mathrm{diag}(s)V^\top` with every :math:`\lambda s_i > 1`, :math:`W_0 = 0`; ``top_sv``: the
    top singular value of :math:`W_T` after ``n_steps`` steps, one per NS step count in ``ks``. Predicted: the modes'
    scalar recursion (:func:`theory.muon.aligned_recursion`), settling at
    :math:`\lambda\|W\|_{op} = \max_i p^{\circ k}(x_i) > 1`, to 1e-10 relative. Rivals: the exact polar factor's
    ball (1); the top and the bottom of the band of :math:`p^{\circ k}` (:func:`theory.muon.ns_band`).
    """
    pred = np.array([np.abs(th.aligned_recursion(s, eta, lam, momentum=momentum, steps=int(k),
                                                 n_steps=n_steps)[-1]).max() * lam for k in ks])
    meas = top_sv * lam
    bands = np.array([th.ns_band(int(k)) for k in ks])
    check = Exact("λ‖W_T‖_op of the aligned NS runs, k = " + ", ".join(str(int(k)) for k in ks), predicted=pred,
                  measured=meas, rtol=1e-10,
                  rivals={"the exact polar factor's ball: 1": np.ones_like(pred),
                          "the top of the band, sup p^k on (0, 1]": bands[:, 1],
                          "the bottom of the band on [1e-3, 1]": bands[:, 0]},
                  why="the scalar loop and the matrix run differ by float64 round-off only (the NS polynomial acts on "
                      "each singular value exactly); T steps of k matrix products amplify it by the recursion's "
                      "sensitivity, measured ~1e-14 relative: 1e-10 leaves 4 orders")
    return Result(check, arrays={"ks": np.asarray(ks), "settled": meas, "predicted": pred, "bands": bands})


@claim("steplab.muon_ball_window", paper=STEPLAB, provenance="derived", kind="exact",
       source="found here on chen2025's spectral ball: the step condition eta lambda <= 1 of the invariance argument "
              "located in simulation",
       statement="From 0 toward a target far outside, exact-polar Muon with decay has sup_t lambda |W_t|_op = "
                 "1 - (1 - eta lambda)^T for eta lambda <= 1 (the ball invariant) but eta lambda (the first step "
                 "overshoots) for 1 < eta lambda < 2; the excess contracts by |1 - eta lambda| per step; past "
                 "eta lambda = 2 the runs diverge.",
       latex=r"\sup_t \lambda\|W_t\|_{op} = \max(\eta\lambda, 1 - (1-\eta\lambda)^T),\ |e_{t+1}| = |1-\eta\lambda|\,|e_t|")
def ball_window(budget) -> Result:
    r"""Aligned runs over :math:`\eta\lambda \in [0.1, 0.75] \cup [1.25, 1.9] \cup \{3.5, 4, 5\}` (no momentum,
    :math:`\lambda s = 1000`, T = 600 at quick, 2000 at full): the largest :math:`\lambda\|W_t\|_{op}` against :func:`theory.muon.sup_from_zero`,
    the excess factor :math:`|e_{10}/e_0|^{1/10}` against :func:`theory.muon.excess_factor`, the divergence flags
    against :math:`\eta\lambda > 2`.

    Rivals: the ball held for every convergent :math:`\eta\lambda < 2` (sup 1); the excess shrinking like
    :math:`e^{-\eta\lambda}` (gradient flow) or by :math:`1-\eta\lambda` signed; divergence past :math:`\eta\lambda = 1`.
    """
    ex = E.window(budget)
    el, lam = ex["eta_lam"], E.WINDOW_LAM
    conv = el < 2.0
    pred_sup = th.sup_from_zero(el[conv] / lam, lam, ex["T"])
    factor = np.abs(ex["excess_t"][conv]) ** (1.0 / E.WINDOW_FACTOR_T)  # e_0 = -1 (from 0), in units of 1/lambda
    pred_f = th.excess_factor(el[conv] / lam, lam)
    held = 1.0 - np.maximum(1.0 - el[conv], 0.0) ** ex["T"]
    checks = [
        Exact("sup_t λ‖W_t‖_op (ηλ < 2)", predicted=pred_sup, measured=ex["sup"][conv], rtol=1e-12,
              rivals={"the ball held for every ηλ < 2: 1 - (1 - ηλ)^T, capped at 1": held},
              why="float64 round-off of T steps of an SVD and a scaled sum (~1e-15 each), contracted by |1 - eta lambda|"),
        Exact("excess factor |e_10 / e_0|^(1/10) (ηλ < 2)", predicted=pred_f, measured=factor, rtol=1e-8,
              rivals={"exp(-ηλ) (gradient flow over a time η)": np.exp(-el[conv]),
                      "1 - ηλ signed (no overshoot)": 1.0 - el[conv]},
              why="the excess after 10 steps is at least 0.25^10 ~ 1e-6 of its start on this grid; round-off "
                  "~1e-15 absolute is then ~1e-9 relative, a tenth of that in the 10th root"),
        Count("runs flagged diverged", measured=ex["diverged"], predicted=el > 2.0,
              rivals={"divergence past ηλ = 1 (the invariance condition as the stability limit)": el > 1.0},
              why="|1 - eta lambda|^T passes 1e150 within 400 steps for eta lambda >= 3.5; below 2 the excess "
                  "shrinks"),
    ]
    return Result(checks,
                  detail="sup lambda|W|_op: " + ", ".join(f"{e:.2f}: {s:.4f}" for e, s in zip(el[conv], ex["sup"][conv]))
                         + "; diverged at steps " + ", ".join(f"{e:g}: {int(d)}" for e, d in
                                                             zip(el[~conv], ex["diverged_step"][~conv])),
                  arrays={"eta_lam": el[conv], "sup": ex["sup"][conv], "factor": factor})
