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
from paper_checks import Bound, Budget, Categorical, Exact, Paper, Result, claim
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


@claim("wusu2023.sharpness_is_a_parameter_norm", paper=PAPER, provenance="derived", kind="exact",
       source="abstract (the 'equivalence' between sharpness and parameter norms, no constants given); the exact "
              "identity for the diagonal net, tr H = sum_k a_k (u_k^2 + v_k^2), and the norm bound it gives with the "
              "B = 1 trace bound are derived here",
       quote="Notably, we establish the {\\em equivalence} between these metrics of sharpness and certain parameter "
             "norms for the two models, which allows us to show that the stable minima of SGD provably generalize well.",
       where="arXiv:2305.17490, abstract",
       statement="At an interpolating minimum of the diagonal net f(x) = sum_k u_k v_k x_k (squared loss), tr H equals the "
                 "weighted parameter norm sum_k a_k (u_k^2 + v_k^2), a_k = (1/n) sum_i x_ik^2; so every minimum that is "
                 "mean-square stable at batch size 1 has that norm at most 2/eta, while at B = n (GD) stable minima "
                 "exceed it.",
       latex=r"\mathrm{tr}H = \sum_k a_k(u_k^2+v_k^2),\quad \text{stable at } B=1 \Rightarrow \sum_k a_k(u_k^2+v_k^2) \le 2/\eta")
def sharpness_is_a_parameter_norm(budget: Budget) -> Result:
    """Along the balance curve u = c sqrt|b|, v = sqrt|b|/c (one data set, one eta): tr H of the autodiff Hessians
    against the closed-form weighted norm (rivals: the unweighted norm ||theta||^2, the balanced value 2 sum_k a_k|b_k|
    for every minimum); then the weighted norm of the minima whose exact second moment decays at B = 1 against 2/eta,
    and at B = n; and tr H at the balanced minimum against the l1 floor 2 sum_k a_k|b_k| it attains.

    Plausible mistake it catches: the norm read without the feature weights a_k (as if the inputs were whitened)."""
    run = ex.dln_stable_set(budget)
    x, beta = ex.dln_data(0.8)
    eta, scales = float(run["eta"]), run["scales"]
    forms = [th.dln_sharpness_norm(*th.dln_minimum(beta, float(c)), x) for c in scales]
    pred = np.array([f["trace"] for f in forms])
    measured = run["trace"]  # trace of the mean autodiff Hessian, on the range of H (the projection keeps the trace)
    identity = Exact("tr H over the balance curve", predicted=pred, measured=measured, rtol=1e-11,
                     why="float64 round-off of the autodiff Hessians, their mean and their projection on an orthonormal "
                         "eigenvector basis (each ~1e-15 relative; 1e-11 leaves 4 digits of headroom)",
                     rivals={"||θ||² (the unweighted norm: whitened features, a_k = 1)": np.array([f["norm_sq"] for f in forms]),
                             "2 Σ a_k|β_k| (the balanced value, for every minimum)": np.array([f["l1_floor"] for f in forms])})
    stable_1, stable_n = run["rate"][:, 0] < 0, run["rate"][:, -1] < 0
    q = eta * measured / 2  # eta * tr H / 2: at most 1 is the bound
    bound = Bound("max η·tr H/2 over the minima stable at B = 1", measured=float(q[stable_1].max()), bound=1.0,
                  side="<=", slack=0.0, rivals={"tr H ≤ 1/η (half the bound)": 0.5},
                  why="exact growth signs of the enumerated second moment, tr H to round-off: no slack needed")
    breaks = Categorical("some minimum stable at B = n has η·tr H > 2", measured=bool(q[stable_n].max() > 1.0),
                         predicted=True, rivals={"the norm bound holds at every batch size": False},
                         why="GD's condition is η λ_max < 2, and tr H > λ_max for a Hessian of rank > 1")
    # the l1 floor 2 sum_k a_k |beta_k| is reached at the balanced minimum |u| = |v| (c = 1, on the curve)
    i1 = int(np.argmin(np.abs(scales - 1.0)))
    balanced = Exact("tr H at the balanced minimum (c = 1) against 2 Σ a_k|β_k|", predicted=forms[i1]["l1_floor"],
                     measured=float(measured[i1]), rtol=1e-11,
                     rivals={"min_k a_k ‖θ‖² (the lower norm bound)": forms[i1]["lower"]},
                     why="as for the identity: round-off of the autodiff Hessians and their projection (~1e-15)")
    a_min = float(forms[0]["weights"].min())
    norms = np.array([f["norm_sq"] for f in forms])
    return Result([identity, balanced, bound, breaks],
                  detail=f"η = {eta:.5f}, {scales.size} minima, c in [{scales[0]:.2f}, {scales[-1]:.2f}]; max |tr H / form - 1| = "
                         f"{np.max(np.abs(measured / pred - 1)):.1e}; stable at B = 1: {int(stable_1.sum())}, max η tr H/2 = "
                         f"{q[stable_1].max():.3f} (so ||θ||² ≤ {float(norms[stable_1].max()):.2f} ≤ 2/(η min a_k) = "
                         f"{2 / (eta * a_min):.2f}); stable at B = n: {int(stable_n.sum())}, max η tr H/2 = {q[stable_n].max():.3f}",
                  arrays={"scales": scales, "trace": measured, "trace_form": pred, "stable_1": stable_1, "stable_n": stable_n,
                          "eta": np.array(eta)})
