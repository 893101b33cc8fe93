r"""Pre-scheduled decaying steps need normalization: on :math:`x^4/4` the step :math:`\eta_0/\sqrt{t+1}` diverges
from every start beyond the noise-free edge :math:`s^\ast = 2.1697`, and with compression and noise with the
probability of the s-chain's backward recursion, while the same schedule times the normalization converges from every
start (experiment ``sde.schedule_divergence``).
"""
from __future__ import annotations

import math

import numpy as np

from paper_checks._checks import Count, Exact, Statistical
from paper_checks._registry import Budget, Result, claim
from paper_checks.sde import PAPER
from paper_checks.sde.escape import _mid_and_halfwidth
from paper_checks.sde.experiments import (_SCHED_SEED, SCHED_AFFINE, SCHED_AGENTS, SCHED_ETA0, SCHED_NORM_S0,
    SCHED_OMEGA, SCHED_S0, SCHED_SIGMA1, schedule_divergence)
from theory import sde as T

SCHED_CONVERGED = 1e-3


@claim("compagnoni2025.schedule_needs_normalization", paper=PAPER, provenance="derived", kind="statistical",
       source="v1 abstract (compressed SGD with a pre-scheduled decaying step fails to converge unless the schedule "
              "depends inversely on the gradient norm); the s-chain, its edge and its divergence law are derived here",
       statement="On x^4/4 a pre-scheduled step eta_t = eta0/sqrt(t+1) diverges from every start with s0 = eta0 x0^2 "
                 "above s* = 2.1697 without noise (the decay saves only starts within 8.5 % of the constant step's edge "
                 "2); with compression (N = 4, omega = 1) and multiplicative Gaussian noise (sigma1 = 0.5) it diverges "
                 "with the probability of the Markov chain s_{t+1} = r_t s_t (1 - s_t S_t)^2 (r_t = sqrt((t+1)/(t+2))), "
                 "positive well below s*, and under affine noise (sigma0 = 40, sigma1 = 0.25) with that of the chain "
                 "of |x_t|; the same schedule times the normalization 1/((L0 + L1|f'|)F) converges from every start.",
       latex=r"s_{t+1}=r_ts_t(1-s_tS_t)^2,\quad s^\ast_{1/\sqrt{t+1}}=2.1697,\quad "
             r"P(\mathrm{div}\mid s_0)=\lim_T V_0(s_0)")
def schedule_needs_normalization(budget: Budget) -> Result:
    """(1) Brackets the noise-free escape edge on the s0 grid and compares its midpoint with the bisection of the
    s-chain (2.1697); rivals: the constant step's edge 2 (the decay changes nothing) and the edge moved by a factor
    2 either way. (2) The diverged fraction of the noisy compressed runs per s0 (binomial SE) against the backward
    recursion's probability (the s-chain; for the affine cell the chain of |x|); rivals: decay alone suffices (0),
    the edge moved by a factor 2 either way (P(s0/2), P(2 s0)), the constant step's law, and for the affine cell the
    law without sigma0. (3) Counts the normalized runs (same schedule, c = 1) that stay finite and end
    below 1e-3; rival: the pre-scheduled step's noise-free rule (diverges iff s0 > s*)."""
    r = schedule_divergence(budget)
    n = int(r["n"])
    s_star = T.quartic_schedule_threshold("inv_sqrt")
    mid, half = _mid_and_halfwidth(r["s_grid"], r["grid_diverged"])
    s0 = np.asarray(SCHED_S0)
    x0 = np.sqrt(s0 / SCHED_ETA0)
    args = (SCHED_AGENTS, SCHED_OMEGA, SCHED_SIGMA1)
    aff = (SCHED_AGENTS, SCHED_OMEGA) + SCHED_AFFINE

    def law(schedule="inv_sqrt", scale=1.0, fine=False):
        """[multiplicative cell (s-chain), affine cell (x-chain)] at every s0 * scale."""
        kw = {"n_grid": 800, "n_nodes": 241} if fine else {}
        kx = {"n_grid": 800, "n_nodes": 161} if fine else {}
        return np.concatenate([T.quartic_schedule_divergence(s0 * scale, schedule, *args, **kw),
                               T.quartic_schedule_divergence_affine(x0 * math.sqrt(scale), SCHED_ETA0, schedule, *aff,
                                                                    **kx)])

    pred = law()
    bias = float(2 * np.max(np.abs(law(fine=True) - pred)))
    frac = np.concatenate([r["noisy_diverged"].mean(axis=1), r["affine_diverged"].mean(axis=1)])
    se = np.sqrt(np.maximum(frac * (1 - frac), 1.0 / n) / n)
    # the affine cell's law with sigma0 dropped: the multiplicative s-chain at sigma1 = 0.25
    no_sigma0 = np.concatenate([pred[:s0.size], T.quartic_schedule_divergence(s0, "inv_sqrt", SCHED_AGENTS, SCHED_OMEGA,
                                                                              SCHED_AFFINE[1])])
    rivals = {"decay alone suffices (no run diverges)": np.zeros_like(pred),
              "the edge moved by a factor 2 (s* -> 2 s*)": law(scale=0.5),
              "the edge moved by a factor 1/2": law(scale=2.0),
              "the constant step's law (the decay changes nothing)": law("constant"),
              "the additive part sigma0 does not matter (multiplicative law)": no_sigma0}
    ok = ~r["norm_diverged"] & (r["norm_final"] < SCHED_CONVERGED)
    naive = ~(r["norm_s0"] > s_star)
    return Result(
        checks=[Exact("noise-free escape edge s* = eta0 x0^2 of the 1/sqrt(t+1) schedule (bracket midpoint)",
                      predicted=s_star, measured=mid, rtol=half,
                      rivals={"the constant step's edge 2": 2.0, "the edge moved by a factor 2": 2 * s_star,
                              "the edge moved by a factor 1/2": s_star / 2},
                      why="half the geometric grid cell that brackets the switch"),
                Statistical("diverged fraction of pre-scheduled DCSGD per s0 (multiplicative cell, then affine cell)",
                            estimate=frac, se=se, predicted=pred,
                            bias=bias, rivals=rivals,
                            why=f"binomial SE of a fraction of {n} independent runs (floored at one run); bias: twice "
                                f"the change of the recursion on a 2x finer grid and quadrature ({bias:.1e})"),
                Count("normalized runs (same schedule x 1/((L0 + L1|f'|)F), c = 1) that stay finite and end below 1e-3",
                      measured=ok, predicted=True,
                      rivals={"the pre-scheduled step's noise-free rule: converges iff s0 < s*": naive},
                      why=f"deterministic part contracts from every start (eta x^2/(L0 + L1|x|^3) <= 1/3); near 0, "
                          f"1/x^2 grows like 4c sqrt(T)/F, so f ~ 3e-5 after {int(r['norm_steps'])} steps: 1e-3 is 30x that")],
        detail=f"noise-free edge {mid:.4f} (theory {s_star:.4f}, grid half-cell {half:.1e}); diverged fraction per s0 "
               f"{SCHED_S0} (sigma1 = {SCHED_SIGMA1}; then sigma0, sigma1 = {SCHED_AFFINE}): "
               + ", ".join(f"{v:.3f}" for v in frac) + " vs " + ", ".join(f"{v:.3f}" for v in pred)
               + f" ({n} runs each); normalized: {int(np.sum(r['norm_diverged']))} of {ok.size} diverged, largest "
               f"final loss {np.max(r['norm_final']):.1e} from s0 up to {max(SCHED_NORM_S0):g}.",
        arrays={"s0": s0, "frac": frac, "frac_se": se, "pred": pred,
                "pred_constant": rivals["the constant step's law (the decay changes nothing)"],
                "s_grid": r["s_grid"], "grid_diverged": r["grid_diverged"]}, seed=_SCHED_SEED)
