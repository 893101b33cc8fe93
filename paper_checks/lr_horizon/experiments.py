r"""The measurements of the ``lr_horizon`` topic: named, cached, budgeted experiments.

Two kinds. *Exact* ones minimize the exact final loss of :mod:`theory.lr_horizon` over the step size (SciPy's bounded
scalar search in :math:`\log\eta`, no grid) at each horizon; *Monte Carlo* ones run SGD on the same model with the
shared simulator (:mod:`sims.lr_horizon` over :mod:`sims.nqm`), the independent side of the exact recursion.
Claims and ``figures/lr_horizon.py`` both read these; figures never compute.
"""
from __future__ import annotations

import jax
import numpy as np

import sims.lr_horizon as sl
import theory.lr_horizon as th
import theory.nqm as tn
from paper_checks import Budget, experiment

SEED = 20261202
BETA = 2.0                 # capacity exponent of every setting: lambda_j = j^-2
D_LARGE = 10**6            # modes of the exponent settings: (eta N)^(1/beta) stays far below d up to N = 1e7
SHAPES = (0.5, 2.0)        # source exponents of the constant-step law: -1/3 and -2/3, both away from -1/2
SIGMA2 = 1.0               # noise of the exponent settings: the optimum sits at eta lambda_1 <~ 0.1 from N = 1e4
SIGMA2_BEND = 0.02         # a quieter setting whose optimum starts at the stability cap and bends onto the law
S_BEND = 0.5
BEND_EDGE = 0.10           # the law "holds" where it is within 10 % of the exact optimum
CAP_HORIZONS = (20, 30, 40, 50, 60, 90)    # two sides of the cap horizon (45.4 steps) of the bending setting
# the decay claim (quoted for the easy regime s >= 1 - 1/beta): s = 1 at beta = 2
S_DECAY = 1.0
D_DECAY = 10**4            # sum of the steps stays <= 1.5e3 up to N = 6.4e4: (sum eta)^(1/2) <= 40 << d
# Monte Carlo against the exact optimum: a short tuning run and a long one
MC_D = 1000
MC_SHORT, MC_LONG = 10, 1000


def _optimal_steps(horizons, s, sigma2, d) -> np.ndarray:
    return np.array([th.optimal_constant_step(int(n), BETA, s, sigma2, d)[0] for n in horizons])


@experiment("lr_horizon.constant_optimum")
def constant_optimum(budget: Budget) -> dict:
    """Exact best constant step eta*(N) of both source exponents on a log grid of horizons 1e4..1e7 (the law's
    range), and of the bending setting on 1e1..1e7 (through the stability cap onto the law)."""
    horizons = np.geomspace(1e4, 1e7, budget.pick(quick=7, full=13)).round()
    wide = np.geomspace(10.0, 1e7, budget.pick(quick=19, full=37)).round()
    out = {"horizons": horizons, "wide": wide}
    for s in SHAPES:
        out[f"eta_{s:g}"] = _optimal_steps(horizons, s, SIGMA2, D_LARGE)
    out["eta_bend"] = _optimal_steps(wide, S_BEND, SIGMA2_BEND, D_LARGE)
    return out


@experiment("lr_horizon.bend_edge")
def bend_edge(budget: Budget) -> dict:
    r"""The horizon where the exact optimum of the bending setting comes within 10 % of the law's step, by Brent's root
    of :math:`\eta^*(N)/\eta_0(N) - 0.9` in :math:`\log N` (each value an exact argmin)."""
    from scipy import optimize

    def gap(log_n: float) -> float:
        n = float(np.exp(log_n))
        e = th.optimal_constant_step(int(round(n)), BETA, S_BEND, SIGMA2_BEND, D_LARGE, xatol=1e-7)[0]
        return e / float(th.asymptotic_step(round(n), BETA, S_BEND, SIGMA2_BEND, D_LARGE)) - (1 - BEND_EDGE)

    tol = budget.pick(quick=1e-3, full=1e-5)  # in log N; the optimum to 1e-7 in log eta, far inside the 10 % gap
    root = optimize.brentq(gap, np.log(1e2), np.log(1e7), xtol=tol)
    return {"edge": float(np.exp(root)), "xtol_log": tol}


@experiment("lr_horizon.cap_runs")
def cap_runs(budget: Budget) -> dict:
    r"""The bending setting's loss after :math:`N` steps at the law's own step :math:`\eta_0(N)`, for horizons on both
    sides of the cap horizon, by the step-by-step moment recursion :func:`theory.nqm.moment_recursion` (a loop over
    steps, independent of the closed form the optimum is searched on)."""
    horizons = np.array(CAP_HORIZONS)
    steps = th.asymptotic_step(horizons.astype(float), BETA, S_BEND, SIGMA2_BEND, D_LARGE)
    lam, w, load = th.spectrum(BETA, S_BEND, D_LARGE)
    loss = np.array([tn.expected_loss(lam, tn.moment_recursion(lam, np.full(n, e), load / lam,
                                                               np.sqrt(SIGMA2_BEND * w * lam))[-1])
                     for n, e in zip(horizons, steps)])
    return {"horizons": horizons, "steps": steps, "loss_at_n": loss, "initial_loss": 0.5 * float(np.sum(load))}


@experiment("lr_horizon.transfer_runs")
def transfer_runs(budget: Budget) -> dict:
    r"""Paired Monte Carlo SGD at the long horizon with the exact optimum there and with the steps that three transfer
    rules carry over from the short horizon's exact optimum (:math:`N^{-1/2}`, :math:`N^{-3/4}`, unchanged)."""
    s = SHAPES[0]
    short = th.optimal_constant_step(MC_SHORT, BETA, s, SIGMA2, MC_D)[0]
    best = th.optimal_constant_step(MC_LONG, BETA, s, SIGMA2, MC_D)[0]
    ratio = MC_LONG / MC_SHORT
    steps = np.array([best, short * ratio**-0.5, short * ratio**-0.75, short])
    n_chains = budget.pick(quick=64, full=256)
    out = sl.constant_step_runs(jax.random.key(SEED), steps, MC_LONG, BETA, s, SIGMA2, MC_D, n_chains=n_chains)
    return {"steps": steps, "loss": out["loss"], "diverged": out["diverged"], "seed": SEED,
            "names": np.array(["exact optimum", "N^-1/2 from the short run", "N^-3/4 from the short run",
                               "the short run's step"])}


@experiment("lr_horizon.decay_peaks")
def decay_peaks(budget: Budget) -> dict:
    r"""Exact best peak of the power decay :math:`(1 - t/N)^{2\beta-1}` and of linear decay to zero at horizons
    doubling from 1e3 (step time), each by a bounded scalar search on :func:`theory.nqm.final_second_moment`."""
    horizons = 1000 * 2 ** np.arange(budget.pick(quick=4, full=6))
    gamma = 2 * BETA - 1
    power = np.array([th.optimal_peak(int(n), gamma, BETA, S_DECAY, SIGMA2, D_DECAY)[0] for n in horizons])
    linear = np.array([th.optimal_peak(int(n), 1.0, BETA, S_DECAY, SIGMA2, D_DECAY)[0] for n in horizons[:3]])
    return {"horizons": horizons, "power": power, "linear": linear, "gamma": gamma}


# the law's other end: a spectrum cut at d = 1000, where (eta N)^(1/beta) reaches d within reachable horizons
D_CUT = 1000


@experiment("lr_horizon.cutoff")
def cutoff(budget: Budget) -> dict:
    r"""Exact best constant steps of the cut spectrum (d = 1000, s = 1/2, sigma^2 = 1) over N = 1e6..1e13, through the
    horizon where the spectrum's end is reached; and Brent's root in log N of :math:`\eta^*(N)/\eta_0(N) = 0.9` there."""
    from scipy import optimize

    s = SHAPES[0]
    horizons = np.geomspace(1e6, 1e13, budget.pick(quick=8, full=15)).round()
    eta = _optimal_steps(horizons, s, SIGMA2, D_CUT)

    def gap(log_n: float) -> float:
        n = float(np.exp(log_n))
        e = th.optimal_constant_step(int(round(n)), BETA, s, SIGMA2, D_CUT, xatol=1e-7)[0]
        return e / float(th.asymptotic_step(round(n), BETA, s, SIGMA2, D_CUT)) - (1 - BEND_EDGE)

    tol = budget.pick(quick=1e-3, full=1e-5)  # in log N
    edge = float(np.exp(optimize.brentq(gap, np.log(1e6), np.log(1e11), xtol=tol)))
    return {"horizons": horizons, "eta": eta, "edge": edge, "xtol_log": tol}


# the phase transition: one hard-regime and one easy-regime source exponent at beta = 2 (boundary s = 1/2)
S_HARD, S_EASY = 0.25, 1.0


@experiment("lr_horizon.wsd_optima")
def wsd_optima(budget: Budget) -> dict:
    r"""The WSD schedule (plateau, then a linear cooldown over a fraction f) minimizing the exact final loss jointly over
    its peak (up to the stability edge 2/lambda_1) and f, at horizons doubling from 400, in the hard regime s = 1/4 and
    the easy regime s = 1 (beta = 2, sigma^2 = 1, d = 1000)."""
    horizons = 400 * 2 ** np.arange(budget.pick(quick=3, full=5))
    out = {"horizons": horizons}
    for name, s in (("hard", S_HARD), ("easy", S_EASY)):
        best = [th.optimal_wsd(int(n), BETA, s, SIGMA2, D_CUT) for n in horizons]
        out[f"peak_{name}"] = np.array([b[0] for b in best])
        out[f"fraction_{name}"] = np.array([b[1] for b in best])
    return out
