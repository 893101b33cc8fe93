r"""Wu & Su (2023): linear stability of SGD implies :math:`\mathrm{tr}\,H \le 2/\eta`.

The statement is taken from the paper's abstract (SECONDARY: the note that points to it quotes a
seed abstract). steplab derives the exact form it can prove at batch size 1: for per-sample Hessians
of rank one (single-output squared loss at interpolation),
:math:`\eta^*(1) \le 2\,\mathrm{tr}H/\frac1n\sum_i\|g_i\|^4 \le 2/\mathrm{tr}H` (Rayleigh quotient of the symmetric
operator :math:`\mathcal M_1` at the projector onto the range of :math:`H`, then Cauchy--Schwarz). It is
checked on balanced minima of diagonal linear nets :math:`f(x) = \sum_k u_kv_kx_k`, with thresholds
measured on the exactly enumerated second moment.
"""
from __future__ import annotations

import numpy as np

import theory.sgd_stability as th
from paper_checks import Bound, Budget, Categorical, Paper, Result, claim
from paper_checks.sgd_stability import experiments as ex

PAPER = Paper(
    key="wusu2023", title="The Implicit Regularization of Dynamical Stability in Stochastic Gradient Descent",
    authors="L. Wu, W. J. Su", year=2023, arxiv="2305.17490", venue="ICML 2023",
)


@claim("wusu2023.trace_bound_at_batch_one", paper=PAPER, provenance="derived", kind="bound",
       source="abstract ('linearly stable for SGD => tr H <= 2/eta', no batch size given); reading it at batch size 1 "
              "is steplab's interpretation (at B = n the condition is GD's, so no B-free trace bound holds for every "
              "B); the exact form for rank-one per-sample Hessians is derived here",
       quote="Notably, if a global minimum is linearly stable for SGD, then the trace of Hessian must be less than or "
             "equal to $2/\\eta$, where $\\eta$ denotes the learning rate.",
       where="arXiv:2305.17490, abstract",
       statement="(steplab's reading at batch size 1) At batch size 1, a minimum with rank-one per-sample Hessians is mean-square stable only if "
                 "eta <= 2 tr H / ((1/n) sum_i ||g_i||^4) <= 2 / tr H; the trace bound fails for large batches.",
       latex=r"\eta^*(1) \le \frac{2\,\mathrm{tr}H}{\frac1n\sum_i\|g_i\|^4} \le \frac{2}{\mathrm{tr}H}")
def trace_bound_at_batch_one(budget: Budget) -> Result:
    """Measured eta*(1) and eta*(n) at diagonal-net minima (data from alike to diverse) against the closed-form bounds."""
    run = ex.dln_trace(budget)
    eta1, eta_n = run["eta_1"], run["eta_n"]
    bounds = []
    for seed, eps in zip(run["seed"], run["spread"]):
        x, beta = ex.dln_data(float(eps), int(seed))
        g = th.dln_gradients(*th.dln_minimum(beta, 1.0), x)
        hs = np.einsum("ni,nj->nij", g, g)  # closed-form per-sample Hessians g_i g_i^T at the balanced minimum
        tb = th.trace_bound(hs)
        bounds.append((tb["eta_trace"], tb["eta_bound"], 2 / float(np.linalg.eigvalsh(hs.mean(axis=0))[-1])))
    eta_trace, eta_bound, eta_gd = np.array(bounds).T
    resolution = float(np.max(run["width_1"] / eta1))  # each threshold is known to its final bracket
    trace = Bound("η̂*(1) / (2/tr H) over the minima", measured=eta1 / eta_trace, bound=1.0, side="<=", slack=resolution,
                  rivals={"tr H <= 1/η (half the bound)": 0.5},
                  why="slack: the relative width of the threshold brackets")
    exact_form = Bound("η̂*(1) / (2 tr H / ((1/n)Σ‖g_i‖⁴)) over the minima", measured=eta1 / eta_bound, bound=1.0,
                       side="<=", slack=resolution, why="slack: the relative width of the threshold brackets")
    breaks = Categorical("η̂*(n) · tr H > 2 at the most diverse minimum (the bound at B = n)",
                         measured=bool(eta_n[-1] / eta_trace[-1] > 1 + resolution),
                         predicted=bool(eta_gd[-1] / eta_trace[-1] > 1),
                         rivals={"tr H <= 2/η at every batch size": False},
                         why="at B = n the threshold is 2/λ_max, and tr H > λ_max when H has rank > 1")
    q1 = 2 * eta1 / eta_trace
    return Result([trace, exact_form, breaks],
                  detail=f"{q1.size} balanced minima (spread {np.round(run['spread'], 3).tolist()}): η̂*(1)·tr H = "
                         f"{np.round(q1, 4).tolist()}; η̂*(1) / exact-form bound = {np.round(eta1 / eta_bound, 5).tolist()}; "
                         f"at B = n: η̂*(n)·tr H = {np.round(2 * eta_n / eta_trace, 3).tolist()}",
                  arrays={"spread": run["spread"], "q1": q1, "q2": eta1 / eta_bound, "qn": 2 * eta_n / eta_trace})
