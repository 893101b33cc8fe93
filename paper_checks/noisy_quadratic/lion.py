r"""Lion with decoupled weight decay solves a box-constrained problem.

A sign update has :math:`\|u\|_\infty \le 1`, so with decoupled decay :math:`x^+ = (1-\eta\lambda)x - \eta u` and
:math:`\eta\lambda \le 1` the box :math:`\|x\|_\infty \le 1/\lambda` is invariant and the excess outside it contracts by at
least :math:`1-\eta\lambda` per step (:func:`theory.noisy_quadratic.lion_box_radius`): identities of the update rule,
unit tests of the simulator (``tests/test_noisy_quadratic.py``). The claims test what the paper says beyond them:
the constraint's radius is :math:`1/\lambda` (iterates settle on its face when the minimizer is outside), and as
:math:`\eta\to 0` the iterates approach :math:`\arg\min_{\|x\|_\infty\le 1/\lambda} f` for a quadratic and a
non-quadratic :math:`f` (SciPy's L-BFGS-B), hovering :math:`O(\eta)` around it at a constant step. The runs are
:func:`sims.nqm.simulate` with ``method="lion"`` on a least-squares problem (:math:`d = 6`) and
:func:`sims.noisy_quadratic.lion_logistic` on logistic regression.
"""
from __future__ import annotations

import numpy as np

import theory.noisy_quadratic as th
from paper_checks import STEPLAB, Exact, Paper, Rate, Result, claim
from paper_checks.noisy_quadratic import experiments as E

PAPER = Paper(key="chen2023", title="Lion Secretly Solves Constrained Optimization: As Lyapunov Predicts",
              authors="L. Chen, B. Liu, K. Liang, Q. Liu", year=2023, arxiv="2310.05898")


QUOTE = ("we demonstrate that Lion is a theoretically novel and principled approach for minimizing a general loss "
         "function $f(x)$ while enforcing a bound constraint $\\|x\\|_\\infty \\leq 1/\\lambda$")
WHERE = "arXiv:2310.05898, abstract"


@claim("chen2023.box_radius", paper=PAPER, provenance="quoted", kind="exact",
       source="abstract (the bound constraint |x|_inf <= 1/lambda); its measurement at three decays, from inside and "
              "outside the box, is steplab's",
       quote=QUOTE, where=WHERE,
       statement="With decoupled decay lambda (eta lambda <= 1), Lion's constraint is the box |x|_inf <= 1/lambda: when "
                 "the minimizer lies outside, the iterates settle on its face, sup over the last quarter of |x_t|_inf = "
                 "1/lambda, at lambda = 0.5, 1 and 2, from a start inside the box and from one outside it.",
       latex=r"\sup_{t > 3T/4}\|x_t\|_\infty = 1/\lambda")
def box_radius(budget) -> Result:
    r"""Largest :math:`\|x_t\|_\infty` over the last quarter of the runs at :math:`\lambda = 0.5, 1, 2` (:math:`\eta\lambda = 0.016`,
    the least-squares problem scaled to the box: center :math:`c/\lambda`), started at 0 and at :math:`3/\lambda` in every
    coordinate, against :func:`theory.noisy_quadratic.lion_box_radius`.

    (That a start inside never leaves, and that the excess outside contracts by :math:`1-\eta\lambda` per outward step,
    are identities of the update rule: unit tests of the simulator in ``tests/test_noisy_quadratic.py``.)
    Rivals: a box :math:`1/(\eta\lambda)` wide (the decay's fixed point read per unit step); :math:`\eta/\lambda` (decay not
    scaled by the step, :math:`x \leftarrow (1-\lambda)x - \eta u`); the unit box whatever :math:`\lambda`; the
    L2-penalized minimizer's size (decay acting like :math:`\tfrac\lambda2\|x\|^2`).
    """
    ex = E.lion(budget)
    first = ex["n_const"] + 1
    rows = slice(first, first + 2 * len(E.LION_WDS))
    eta, wd = ex["etas"][rows, 0], ex["wds"][rows]
    tail = E.LION_T // 4
    sup = np.abs(ex["path"][rows, -tail:]).max(axis=(1, 2))
    pred = np.array([th.lion_box_radius(e, w) for e, w in zip(eta, wd)])
    l2 = np.array([np.max(np.abs(th.l2_minimizer(ex["H"], c, w))) for c, w in zip(ex["centers"][rows], wd)])
    # the relative gap to the face at the start: 1 from 0, lambda |x0|_inf - 1 = 2 from 3/lambda
    gap0 = np.maximum(1.0, np.abs(ex["starts"][rows]).max(axis=1) * wd - 1)
    rtol = float(np.max(gap0 * (1 - eta * wd) ** (E.LION_T - tail)))
    checks = [Exact("sup over the last quarter of ‖x_t‖∞ (λ = 0.5, 1, 2; from 0 and from 3/λ)", predicted=pred,
                    measured=sup, rtol=rtol, atol=1e-13,
                    rivals={"a box 1/(ηλ) wide": 1 / (eta * wd), "a box η/λ wide (decay not scaled by η)": eta / wd,
                            "the unit box whatever λ": np.ones(pred.size),
                            "decay as an L2 penalty: the penalized minimizer's size": l2},
                    why="a face coordinate pushed outward approaches its fixed point geometrically, by 1 - eta lambda "
                        "per step, from a relative gap of 1 (start 0) or 2 (start 3/lambda): after 3T/4 steps at most "
                        f"2 (1 - eta lambda)^(3T/4) = {rtol:.1e} is left; atol 1e-13: the round-off of (1 - eta lambda) x "
                        "+ eta, ~1e-15 per step, kept below 1e-15/(eta lambda) by the contraction")]
    return Result(checks, detail="sup |x|_inf x lambda over the last quarter: "
                                 + ", ".join(f"lambda={w:g} from {'0' if k % 2 == 0 else '3/lambda'}: {v * w:.12f}"
                                             for k, (w, v) in enumerate(zip(wd, sup)))
                                 + f"; L2 minimizers' size x lambda {np.round(l2 * wd, 3).tolist()}",
                  seed=E.SEED + 6, arrays={"wd": wd, "sup": sup, "radius": pred})


@claim("chen2023.box_minimizer", paper=PAPER, provenance="quoted", kind="exact",
       source="abstract (the limit points solve the box-constrained problem for a general loss); 'to within the last "
              "step size' and the rival minimizers are steplab's sharpening",
       quote=QUOTE, where=WHERE,
       statement="With a decaying step, Lion with decoupled decay lambda converges to argmin f over the box "
                 "|x|_inf <= 1/lambda (to within the last step size), not to the unconstrained, clipped or "
                 "L2-penalized minimizer: for a quadratic f (least squares) and a non-quadratic one (logistic "
                 "regression).",
       latex=r"x_T \to \arg\min_{\|x\|_\infty\le 1/\lambda} f(x)")
def box_minimizer(budget) -> Result:
    r"""Final iterate of the decaying runs (:math:`\eta_t = 0.05/\sqrt{1 + t/10}`) against SciPy's L-BFGS-B solution of the
    box-constrained problem: least squares (:func:`theory.noisy_quadratic.box_minimizer`) and full-batch logistic
    regression on 64 noisy points (:func:`theory.noisy_quadratic.logistic_minimizer`; three coordinates on the faces,
    three inside).

    The tolerance is the final step :math:`\eta_T` (the hover is :math:`O(\eta)`, see ``steplab.lion_hover_order_eta``).
    Rivals: the coordinatewise clip of the unconstrained minimizer; the L2-penalized minimizer.
    """
    ex = E.lion(budget)
    nc = ex["n_const"]
    x_T = ex["path"][nc, -1]
    r = th.lion_box_radius(float(ex["etas"][nc, 0]), E.LION_WD)
    target = th.box_minimizer(ex["H"], ex["c"], r)
    eta_T = float(ex["etas"][nc, -1])
    lg = E.lion_logistic(budget)
    X, y = E.lion_logistic_data()
    z_T = lg["path"][-1]
    z_box = th.logistic_minimizer(X, y, radius=r)
    checks = [Exact("x_T of the decaying run, least squares", predicted=target, measured=x_T, atol=eta_T,
                    rivals={"the unconstrained minimizer clipped to the box": np.clip(ex["c"], -r, r),
                            "the L2-penalized minimizer": th.l2_minimizer(ex["H"], ex["c"], E.LION_WD)},
                    why=f"Lion hovers O(eta) around its limit: atol = the last step size {eta_T:.2g}"),
              Exact("x_T of the decaying run, logistic regression", predicted=z_box, measured=z_T, atol=eta_T,
                    rivals={"the unconstrained minimizer clipped to the box": np.clip(th.logistic_minimizer(X, y), -r, r),
                            "the L2-penalized minimizer": th.logistic_minimizer(X, y, wd=E.LION_WD)},
                    why=f"Lion hovers O(eta) around its limit: atol = the last step size {eta_T:.2g}")]
    return Result(checks, detail=f"least squares: |x_T - box solution|_inf = {np.max(np.abs(x_T - target)):.2e}, box "
                                 f"solution {np.round(target, 4).tolist()}; logistic: |x_T - box solution|_inf = "
                                 f"{np.max(np.abs(z_T - z_box)):.2e}, box solution {np.round(z_box, 4).tolist()} "
                                 f"(eta_T = {eta_T:.2g})", seed=E.SEED + 6,
                  arrays={"path": ex["path"][nc], "target": target, "logistic_path": lg["path"],
                          "logistic_target": z_box})


@claim("steplab.lion_hover_order_eta", paper=STEPLAB, provenance="derived", kind="rate",
       source="found here on chen2023's Lion (a sign method cannot settle: each step moves every coordinate by eta)",
       statement="At a constant step Lion hovers around the box-constrained minimizer at a distance proportional to "
                 "eta (not sqrt(eta) as SGD's noise ball).",
       latex=r"\max_{t > T/2}\|x_t - x^\star\|_\infty = \Theta(\eta)")
def hover_order_eta(budget) -> Result:
    r"""Largest :math:`\|x_t - x^\star\|_\infty` over the last quarter of the constant-step runs, against :math:`\eta`.

    Rivals: slope 1/2 (a noise ball), slope 0 (Lion converges at a constant step).
    """
    ex = E.lion(budget)
    nc = ex["n_const"]
    target = th.box_minimizer(ex["H"], ex["c"], 1.0 / E.LION_WD)
    dist = np.abs(ex["path"][:nc, -E.LION_T // 4:] - target).max(axis=(1, 2))
    eta = ex["etas"][:nc, 0]
    checks = [Rate("log-log slope of the hover amplitude in eta", x=eta, y=dist, predicted=1.0, z=4.0,
                   rivals={"a noise ball: slope 1/2": 0.5, "convergence at a constant step: slope 0": 0.0},
                   why="deterministic runs: the slope's SE is the scatter of the orbit's pattern about the power law "
                       "(its prefactor moves by a few per cent across eta); 4 SE, no other allowance")]
    return Result(checks, detail="hover / eta: " + ", ".join(f"{e:g}: {d / e:.3f}" for e, d in zip(eta, dist)),
                  seed=E.SEED + 6, arrays={"eta": eta, "hover": dist})


def _dw_value(a: np.ndarray, C: np.ndarray, x: np.ndarray) -> np.ndarray:
    """f(x) of the coupled double wells, for x (..., d) (for the detail and the figure)."""
    return 0.25 * np.sum((x * x - a) ** 2, axis=-1) + 0.5 * np.einsum("...i,ij,...j->...", x, C, x)


@claim("chen2023.kkt_points_nonconvex", paper=PAPER, provenance="derived", kind="exact",
       source="abstract (a general loss under the bound constraint); for a non-convex loss the limit is a KKT point of "
              "the box problem, which one set by the start: steplab's reading, on a loss of its choosing",
       quote=QUOTE, where=WHERE,
       statement="On a non-convex loss (coupled double wells, three of four wells outside the box |x|_inf <= 1/lambda), "
                 "Lion with decoupled decay and a decaying step converges to a KKT point of the box-constrained problem "
                 "-- the one a local method reaches from the same start --, not to one global minimizer for every start, "
                 "and not to the clipped unconstrained minimizer.",
       latex=r"x_T \to x^\star:\ x^\star = \Pi_{\|x\|_\infty\le1/\lambda}\big(x^\star - \nabla f(x^\star)\big)")
def kkt_points_nonconvex(budget) -> Result:
    r"""Final iterates of six runs (starts 0.4 x a sign pattern) against the KKT point SciPy's L-BFGS-B reaches from the
    same start (:func:`theory.noisy_quadratic.double_well_kkt_point`); rivals: the best of those KKT points for every
    start (one global minimizer), and the unconstrained local minimizer from the same start clipped to the box.

    Plausible mistake it catches: the box ignored and the unconstrained limit clipped (decay read as a projection). And
    the KKT residual (:func:`theory.noisy_quadratic.box_kkt_residual`) at the reference KKT points: 0 to solver tolerance."""
    ex = E.lion_double_well(budget)
    a, C = E.dw_problem()
    r = th.lion_box_radius(float(ex["eta"][0]), E.LION_WD)
    x_T = ex["path"][:, -1]
    kkt = np.array([th.double_well_kkt_point(a, C, r, s) for s in ex["starts"]])
    best = kkt[np.argmin(_dw_value(a, C, kkt))]
    free = np.array([np.clip(th.double_well_kkt_point(a, C, 1e6, s), -r, r) for s in ex["starts"]])
    eta_T = float(ex["eta"][-1])
    check = Exact("x_T of six decaying runs (coupled double wells)", predicted=kkt, measured=x_T, atol=eta_T,
                  rivals={"one global box minimizer for every start": np.broadcast_to(best, kkt.shape),
                          "the unconstrained local minimizer, clipped to the box": free},
                  why=f"Lion hovers O(eta) around its limit: atol = the last step size {eta_T:.2g}")
    residual = [th.box_kkt_residual(a, C, r, x) for x in x_T]
    # the closed-form projected-gradient residual vanishes at the points the bounded quasi-Newton search stops at
    at_kkt = Exact("KKT residual ‖x − Π(x − ∇f(x))‖_∞ at SciPy's KKT points", predicted=0.0,
                   measured=np.array([th.box_kkt_residual(a, C, r, x) for x in kkt]), atol=1e-6,
                   why="L-BFGS-B stops at a relative decrease of f of 1e-15: on curvatures of order 1 a residual up to "
                       "~sqrt(1e-15) ~ 3e-8 (seen 2e-10); 1e-6 leaves a factor 30")
    return Result([check, at_kkt], detail=f"|x_T - KKT point|_inf per run {np.round(np.abs(x_T - kkt).max(axis=1), 5).tolist()} "
                                  f"(eta_T = {eta_T:.2g}); KKT residual at x_T {np.round(residual, 5).tolist()}; f at the "
                                  f"KKT points {np.round(_dw_value(a, C, kkt), 4).tolist()}",
                  arrays={"path": ex["path"], "kkt": kkt, "f_kkt": _dw_value(a, C, kkt),
                          "f_path": _dw_value(a, C, ex["path"])})
