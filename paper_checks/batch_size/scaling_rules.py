r"""Malladi, Lyu, Panigrahi, Arora (2022): the linear rule for SGD and the square-root rule for adaptive updates.

Measured on the stationary noise floor, the quantity a scaling rule keeps fixed when the noise dominates. SGD's floor
on a noisy quadratic is invariant under :math:`\eta \propto B` up to the factor :math:`2/(2 - \eta\lambda)`
(:func:`theory.batch_size.linear_rule_ratio`); signSGD's floor -- Adam's update at :math:`\beta_1 = \beta_2 = 0` and no
:math:`\epsilon`, where :math:`m/\sqrt v = \mathrm{sign}(g)` -- is invariant under :math:`\eta \propto \sqrt B` while
:math:`\kappa = a\eta\sqrt B/\sigma` is small (:func:`theory.batch_size.sign_rule_floor`, the sign_floor topic's exact
chain). Each rule gets a claim for its range and a steplab claim locating, in simulation, where it stops holding.
"""
from __future__ import annotations

import math

import numpy as np

from sims.edges import interpolated_crossing
import theory.batch_size as th
from paper_checks import STEPLAB, Count, Exact, Paper, Result, Statistical, claim
from paper_checks.batch_size import experiments as E
from theory import nqm

PAPER = Paper(key="malladi2022", title="On the SDEs and Scaling Rules for Adaptive Gradient Algorithms",
              authors="S. Malladi, K. Lyu, A. Panigrahi, S. Arora", year=2022, arxiv="2205.10287")

LINEAR_QUOTE = ("It calls for scaling learning rate proportionately to the batch size while fixing the number of "
                "epochs.")
LINEAR_WHERE = "arXiv:2205.10287 (v3), Section 1 (on the linear scaling rule)"
SQRT_QUOTE = ("A key practical result is the derivation of a square root scaling rule to adjust the optimization "
              "hyperparameters of RMSprop and Adam when changing batch size")
SQRT_WHERE = "arXiv:2205.10287, abstract"
LEVEL = 1.10   # a rule "holds" while the floor is within 10 % of its small-batch value
Z = 4.0


def chain_floors(ex):
    """Mean over chains of the time-averaged loss per configuration, and its standard error (chains independent)."""
    m = ex["mean_loss"] if "mean_loss" in ex else ex["mean_f"]
    ok = ~ex["diverged"]
    est = np.array([row[k].mean() if k.any() else np.nan for row, k in zip(m, ok)])
    se = np.array([row[k].std(ddof=1) / math.sqrt(k.sum()) if k.sum() > 1 else np.nan for row, k in zip(m, ok)])
    return est, se


def _linear_parts(budget):
    ex = E.linear_rule(budget)
    est, se = chain_floors(ex)
    b = ex["batch_size"].astype(float)
    stable = b < th.linear_rule_limit(E.LIN_LAM, E.LIN_ETA1)
    pred = np.full(b.size, np.nan)
    pred[stable] = [float(np.sum(nqm.stationary_excess(E.LIN_LAM, E.LIN_ETA1 * bb, E.LIN_SIGMA))) / bb
                    for bb in b[stable]]
    base = E.LIN_ETA1 * float(np.sum(E.LIN_SIGMA**2)) / 4   # the floor as B -> 0 at eta = eta1 B
    return ex, b, est, se, pred, base, stable


def _burn_bias(ex) -> float:
    """Relative deficit of a run started at 0 after the burn-in, bounding the time average's bias (slowest mode)."""
    rate = 2 * E.LIN_ETA1 * float(E.LIN_LAM.min())   # (1 - eta lam)^2 per step at the smallest B = 1
    return math.exp(-rate * ex["burn"])


@claim("malladi2022.linear_rule_sgd", paper=PAPER, provenance="quoted", kind="statistical",
       source="Section 1 (the linear scaling rule, as the paper states it); its range on the noisy quadratic is steplab's",
       quote=LINEAR_QUOTE, where=LINEAR_WHERE,
       statement="For SGD on a noisy quadratic, scaling eta proportionately to B keeps the stationary loss at "
                 "eta sigma^2 / (2B(2 - eta lambda)) per mode: within 10 % of its small-batch value for B up to the "
                 "edge where eta lambda_max approaches 2 (here B <= 6 at eta = 0.05 B); the floor does not grow like "
                 "sqrt(B) (the sign-type rule) nor stay exactly constant.",
       latex=r"\eta = \eta_1B:\ E L_\infty = \sum_i\frac{\eta_1\sigma_i^2}{2(2 - \eta_1B\lambda_i)}")
def linear_rule_sgd(budget) -> Result:
    r"""Time-averaged loss of SGD at :math:`\eta = 0.05B`, :math:`B = 1, 2, 4, 6` (8 modes, :math:`\lambda \in [1/4, 1]`),
    against :func:`theory.nqm.stationary_excess`. Rivals: the floor growing like :math:`\sqrt B` (a square-root rule
    for SGD: the linear rule over-scaling by :math:`\sqrt B`); the exact invariance :math:`\eta_1\sum\sigma_i^2/4`
    (the linear rule without its :math:`2 - \eta\lambda` factor)."""
    ex, b, est, se, pred, base, _ = _linear_parts(budget)
    k = b <= 6
    checks = [Statistical("stationary loss at eta = eta1 B, B <= 6", estimate=est[k], se=se[k], predicted=pred[k],
                          bias=_burn_bias(ex) * float(pred[k].max()), z=Z,
                          rivals={"the floor grows like sqrt(B) (square-root rule for SGD)": pred[0] * np.sqrt(b[k]),
                                  "exact invariance (no 2 - eta lambda factor)": np.full(k.sum(), base)},
                          why="4 SE over independent chains (time averages after the burn-in); bias: the slowest "
                              "mode's deficit after the burn-in, exp(-2 eta lam_min burn), times the floor")]
    return Result(checks, detail=f"floor / small-batch value at B = {b[k].astype(int).tolist()}: "
                                 f"{np.round(est[k] / base, 4).tolist()} (closed form {np.round(pred[k] / base, 4).tolist()})",
                  seed=E.SEED + 2, arrays={"batch_size": b, "floor": est, "floor_se": se, "predicted": pred, "base": base})


@claim("steplab.linear_rule_edge", paper=STEPLAB, provenance="derived", kind="statistical",
       source="found here on malladi2022's linear rule (SGD's stationary loss, theory.nqm.stationary_excess)",
       statement="The linear rule for SGD stops holding to 10 % at the batch size where sum sigma^2/(2 - eta1 B lambda) "
                 "reaches 1.1 sum sigma^2/2 (B = 6.45 at eta = 0.05 B on the 8-mode NQM), located in simulation; its "
                 "floor then grows without bound and SGD diverges beyond B_max = 2/(eta1 lambda_max) = 40.",
       latex=r"B_{\max} = \frac{2}{\eta_1\lambda_{\max}}")
def linear_rule_edge(budget) -> Result:
    r"""The simulated floors at :math:`B = 8..32` against the closed form (rival: the rule's invariance); the batch size
    where the simulated floor ratio crosses 1.1 (interpolated in :math:`\log B`) against
    :func:`theory.batch_size.linear_rule_edge` (rivals: the edge at :math:`B_{\max}` and at :math:`B_{\max}/2`); the
    divergence flags at every :math:`B` against :math:`B > B_{\max}` (rivals: :math:`B > B_{\max}/2`, no divergence)."""
    ex, b, est, se, pred, base, stable = _linear_parts(budget)
    bmax = th.linear_rule_limit(E.LIN_LAM, E.LIN_ETA1)
    edge = th.linear_rule_edge(E.LIN_LAM, E.LIN_SIGMA, E.LIN_ETA1, LEVEL)
    far = stable & (b >= 8)
    sim_edge, sim_se = interpolated_crossing(b[stable], est[stable] / base, LEVEL, se[stable] / base, log_x=True)
    # the same interpolation on the exact floors: its distance to the exact edge bounds the interpolation's bias
    ex_edge, _ = interpolated_crossing(b[stable], pred[stable] / base, LEVEL, np.ones(stable.sum()), log_x=True)
    interp = abs(math.log(ex_edge / edge))
    tol = math.expm1(Z * sim_se + interp + _burn_bias(ex))
    checks = [
        Statistical("stationary loss at eta = eta1 B, 8 <= B <= 32", estimate=est[far], se=se[far], predicted=pred[far],
                    bias=_burn_bias(ex) * float(pred[far].max()), z=Z,
                    rivals={"the linear rule at every B (floor invariant)": np.full(far.sum(), base)},
                    why="4 SE over independent chains; bias: the burn-in deficit (see linear_rule_sgd)"),
        Exact("batch size where the floor reaches 1.1 x its small-batch value", predicted=edge, measured=sim_edge,
              rtol=tol, rivals={"the rule holds until SGD diverges: B_max": bmax, "B_max / 2 (eta lam_max = 1)": bmax / 2},
              why=f"4 SE of the interpolated log B ({sim_se:.3f}) plus the interpolation's own bias on the exact floors "
                  f"({interp:.3f}) plus the burn-in deficit"),
        Count("run diverged at this B", measured=ex["diverged"].all(axis=1), predicted=b > bmax,
              rivals={"diverges beyond B_max / 2": b > bmax / 2, "never diverges (the rule at every B)": np.zeros(b.size, bool)},
              why="a diverged run overflows to 1e150 within the horizon: |1 - eta lam_max| >= 1.4 beyond B_max here"),
    ]
    return Result(checks, detail=f"edge: simulated B = {sim_edge:.3f}, closed form {edge:.3f}; B_max = {bmax:g}; "
                                 f"diverged at B = {b[ex['diverged'].all(axis=1)].astype(int).tolist()}",
                  seed=E.SEED + 2, arrays={"batch_size": b, "floor": est, "floor_se": se, "predicted": pred,
                                           "base": base, "edge": edge, "sim_edge": sim_edge, "b_max": bmax})


def _sign_parts(budget):
    ex = E.sign_rule(budget)
    est, se = chain_floors(ex)
    pred = np.array([th.sign_rule_floor(1.0, e, 1.0, float(bb)) for e, bb in zip(ex["eta"], ex["batch_size"])])
    base = E.SIGN_ETA1 * math.sqrt(2 * math.pi) / 8   # the small-kappa floor eta sigma_B sqrt(2 pi)/8 at B = 1
    return ex, est, se, pred, base


def _sign_bias(ex) -> float:
    r"""Relative deficit of the slowest configuration (:math:`B = 1`) after the burn-in: :math:`f` relaxes at
    :math:`2\eta a\sqrt{2/\pi}/\sigma` per step (the sign drift's slope at 0)."""
    rate = 2 * E.SIGN_ETA1 * math.sqrt(2 / math.pi)
    return math.exp(-rate * ex["burn"])


@claim("malladi2022.sqrt_rule_sign", paper=PAPER, provenance="quoted", kind="statistical", uses=("sign_floor",),
       source="abstract (the square-root rule for adaptive methods); tested on Adam's beta1 = beta2 = 0 case "
              "(signSGD) and its stationary floor, steplab's setting",
       quote=SQRT_QUOTE, where=SQRT_WHERE,
       statement="For sign updates (Adam with beta1 = beta2 = 0) on a x^2/2 with additive noise sigma/sqrt(B), "
                 "scaling eta like sqrt(B) keeps the stationary loss (the exact chain's floor, within 3 % of "
                 "eta1 sigma sqrt(2 pi)/8 for B = 1..64 at eta1 = 1e-3), while scaling eta like B makes it grow "
                 "like sqrt(B).",
       latex=r"\eta = \eta_1\sqrt B:\ E f \approx \eta_1\sigma\sqrt{2\pi}/8")
def sqrt_rule_sign(budget) -> Result:
    r"""Time-averaged :math:`f` of signSGD at :math:`B = 1, 4, 16, 64` under :math:`\eta = 10^{-3}\sqrt B` and
    :math:`\eta = 10^{-3}B`, against the exact stationary chain (:func:`theory.batch_size.sign_rule_floor`). Rivals on
    the square-root runs: the floor falling like :math:`1/\sqrt B` (what it would do if the linear rule kept it);
    on the linear runs: the floor kept at its :math:`B = 1` value (the linear rule for sign updates)."""
    ex, est, se, pred, base = _sign_parts(budget)
    sq, lin = ex["rule"] == "sqrt", ex["rule"] == "linear"
    bsq, blin = ex["batch_size"][sq].astype(float), ex["batch_size"][lin].astype(float)
    why = ("4 SE over independent chains (time averages after the burn-in); bias: the B = 1 chain's deficit after the "
           "burn-in, exp(-2 eta sqrt(2/pi) burn), times its floor")
    bias = _sign_bias(ex) * float(pred[0])
    checks = [
        Statistical("floor under eta = eta1 sqrt(B)", estimate=est[sq], se=se[sq], predicted=pred[sq], bias=bias, z=Z,
                    rivals={"falls like 1/sqrt(B) (the linear rule keeps it)": pred[0] / np.sqrt(bsq)}, why=why),
        Statistical("floor under eta = eta1 B", estimate=est[lin], se=se[lin], predicted=pred[lin], bias=bias, z=Z,
                    rivals={"kept at its B = 1 value (linear rule for sign updates)": np.full(blin.size, pred[0])},
                    why=why),
    ]
    return Result(checks, detail=f"floor / (eta1 sigma sqrt(2 pi)/8): sqrt rule {np.round(est[sq] / base, 4).tolist()}, "
                                 f"linear rule {np.round(est[lin] / base, 3).tolist()} at B = {bsq.astype(int).tolist()} "
                                 f"(B = 1 shared)",
                  seed=E.SEED + 3, arrays={"batch_size": ex["batch_size"], "rule": ex["rule"], "floor": est,
                                           "floor_se": se, "predicted": pred, "base": base})


@claim("steplab.sqrt_rule_edge", paper=STEPLAB, provenance="derived", kind="statistical", uses=("sign_floor",),
       source="found here on malladi2022's square-root rule (the sign_floor topic's exact additive chain)",
       statement="Under eta = eta1 sqrt(B) the sign floor's kappa = a eta1 B / sigma grows with B, and the floor leaves "
                 "its small-batch value by 10 % at B = 310 (eta1 = 1e-3, a = sigma = 1; exact chain), located in "
                 "simulation; beyond it the square-root rule no longer keeps the floor (1.9x at B = 4096).",
       latex=r"\kappa = a\eta_1B/\sigma,\ E f(B_{\rm edge}) = 1.1\,\eta_1\sigma\sqrt{2\pi}/8")
def sqrt_rule_edge(budget) -> Result:
    r"""The simulated floors at :math:`B = 256..4096` under :math:`\eta = 10^{-3}\sqrt B` against the exact chain (rival: the
    rule's invariant floor :math:`\eta_1\sigma\sqrt{2\pi}/8`); the batch size where their ratio to it crosses 1.1
    (interpolated in :math:`\log B`) against :func:`theory.batch_size.sqrt_rule_edge` (rivals: the edge at
    :math:`\kappa = 1`, :math:`B = \sigma/(a\eta_1)`, and at :math:`\kappa = 0.1`)."""
    ex, est, se, pred, base = _sign_parts(budget)
    sq = (ex["rule"] == "sqrt") | (ex["rule"] == "far")
    far = ex["rule"] == "far"
    b = ex["batch_size"][sq].astype(float)
    edge = th.sqrt_rule_edge(1.0, E.SIGN_ETA1, 1.0, LEVEL)
    sim_edge, sim_se = interpolated_crossing(b, est[sq] / base, LEVEL, se[sq] / base, log_x=True)
    ex_edge, _ = interpolated_crossing(b, pred[sq] / base, LEVEL, np.ones(b.size), log_x=True)
    interp = abs(math.log(ex_edge / edge))
    tol = math.expm1(Z * sim_se + interp)
    checks = [
        Statistical("floor under eta = eta1 sqrt(B), B >= 256", estimate=est[far], se=se[far], predicted=pred[far], z=Z,
                    rivals={"the square-root rule at every B (invariant floor)": np.full(far.sum(), base)},
                    why="4 SE over independent chains; these chains mix within a few hundred steps (no burn-in bias "
                        "at 1e-6)"),
        Exact("batch size where the floor reaches 1.1 x its small-kappa value", predicted=edge, measured=sim_edge,
              rtol=tol, rivals={"kappa = 1: B = sigma/(a eta1)": 1.0 / E.SIGN_ETA1, "kappa = 0.1": 0.1 / E.SIGN_ETA1},
              why=f"4 SE of the interpolated log B ({sim_se:.3f}) plus the interpolation's own bias on the exact "
                  f"floors ({interp:.3f})"),
    ]
    return Result(checks, detail=f"edge: simulated B = {sim_edge:.1f}, exact chain {edge:.1f}; floor ratios at B = "
                                 f"{ex['batch_size'][far].tolist()}: {np.round(est[far] / base, 3).tolist()}",
                  seed=E.SEED + 3, arrays={"batch_size": b, "floor": est[sq], "floor_se": se[sq], "predicted": pred[sq],
                                           "base": base, "edge": edge, "sim_edge": sim_edge})
