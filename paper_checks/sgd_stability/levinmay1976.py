r"""Delayed gradients: :math:`x_{t+1} = x_t - \eta a\,x_{t-S}` is stable iff :math:`\eta a < 2\sin(\pi/(2(2S+1)))`.

The classical stability region of this delay-difference equation (Levin & May, 1976, in population
dynamics) is DERIVED here from its characteristic polynomial :math:`z^{S+1} - z^S + \eta a` (a root
crosses the unit circle at :math:`z = e^{i\pi/(2S+1)}`) and checked against simulation for
:math:`S = 0..8`. How gradient noise on a hardening nonlinear toy tightens the threshold is a
measured result.
"""
from __future__ import annotations

import math

import numpy as np

import theory.sgd_stability as th
from paper_checks import STEPLAB, Budget, Categorical, Exact, Paper, Result, claim
from paper_checks.sgd_stability import experiments as ex

PAPER = Paper(
    key="levinmay1976", title="A note on difference-delay equations", authors="S. A. Levin, R. M. May", year=1976,
    venue="Theoretical Population Biology 9(2)",
)


@claim("levinmay1976.delay_threshold", paper=PAPER, provenance="derived", kind="exact",
       source="derived here (root of z^(S+1) - z^S + a on the unit circle); the classical delay-difference result",
       statement="Gradient descent on a quadratic with gradients delayed by S steps, x_{t+1} = x_t - eta a x_{t-S}, is "
                 "stable iff 0 < eta a < 2 sin(pi / (2 (2S + 1))).",
       latex=r"\eta a < 2\sin\frac{\pi}{2(2S+1)}")
def delay_threshold(budget: Budget) -> Result:
    """Edge of the simulated growth rate located for S = 0..8 against 2 sin(pi/(2(2S+1))); the growth rate on both sides of
    each edge against the log of the largest root modulus of z^(S+1) - z^S + a."""
    run = ex.delay_thresholds(budget)
    s = run["delays"]
    predicted = np.array([th.delay_threshold(int(k)) for k in s])
    width = float(np.max((run["hi"] - run["lo"]) / run["crossing"]))
    check = Exact(
        f"â*(S) = η a at the edge, S = {s.min()}..{s.max()}", predicted=predicted, measured=run["crossing"],
        rtol=width + 1e-4,
        rivals={"2/(S + 1)": 2.0 / (s + 1), "π/(2S + 1) (the small-angle form)": math.pi / (2 * s + 1)},
        why="the final bracket's relative width, plus 1e-4 for the growth-rate fit: complex dominant roots make log|x_t| "
            "oscillate with period 2(2S+1); the least-squares slope's error falls like (period/T)^2 (observed < 4e-5 at "
            "T >= 1000)")
    both = np.concatenate([s, s])
    growth = Exact(
        "growth rate per step at 0.6 and 1.4 × â*(S), S = 0..8", measured=run["probe_rate"],
        predicted=np.array([np.log(th.delay_spectral_radius(float(a), int(k))) for a, k in zip(run["probe_a"], both)]),
        atol=1e-4, rivals={"no delay: log|1 − ηa|": np.log(np.abs(1 - run["probe_a"]))},
        why="the least-squares slope's error from the oscillation of complex dominant roots, (period/T)^2 (seen 5e-6)")
    return Result([check, growth], detail=f"â*(S) = {np.round(run['crossing'], 6).tolist()} from {run['n_steps']}-step runs",
                  arrays={"delays": s, "measured": run["crossing"], "predicted": predicted})


@claim("steplab.noise_tightens_delay_threshold", paper=STEPLAB, provenance="derived", kind="qualitative",
       source="measured here beside levinmay1976's delay threshold (not a statement of the paper)",
       statement="On the hardening toy f = x^2/2 + x^4/4 with additive gradient noise, delayed SGD escapes below the "
                 "linear threshold 2 sin(pi/(2(2S+1))), and the more so the larger the noise.",
       latex=r"\hat\eta_c(S, \sigma) < 2\sin\tfrac{\pi}{2(2S+1)},\ \text{decreasing in } \sigma")
def noise_tightens(budget: Budget) -> Result:
    """Step at which half the noisy delayed paths escape within T steps, against the noise-free linear threshold."""
    run = ex.delay_noise(budget)
    s, sig = run["delays"], run["sigmas"]
    linear = np.array([th.delay_threshold(int(k)) for k in s])  # lambda = 1

    def where(lo, hi, ref):
        return np.where(hi < ref, "below", np.where(lo > ref, "above", "at"))

    side = Categorical("escape step η̂_c relative to the linear threshold, per (S, σ)",
                       measured=where(run["lo"], run["hi"], linear), predicted="below",
                       rivals={"noise does not move the threshold (at the linear value)": "at"},
                       why="'at' means the final bracket contains the linear threshold")
    order = []
    for k in np.unique(s):
        c = run["crossing"][s == k]
        gaps = np.diff(c)
        resolved = np.abs(gaps) > (run["hi"] - run["lo"])[s == k][1:]
        order.extend(np.where(resolved, np.sign(gaps), 0).astype(int).tolist())
    decreasing = Categorical("sign of η̂_c(σ') - η̂_c(σ), σ' > σ, per S", measured=np.array(order), predicted=-1,
                             rivals={"the tightening does not depend on σ": 0},
                             why="a difference counts only when larger than the bracket")
    ratio = run["crossing"] / linear
    return Result([side, decreasing],
                  detail=f"η̂_c / linear threshold at (S, σ) = {list(zip(s.tolist(), sig.tolist()))}: "
                         f"{np.round(ratio, 3).tolist()} ({run['n_paths']} paths, {run['n_steps']} steps, escape |x| > 1e3)",
                  arrays={"delays": s, "sigmas": sig, "ratio": ratio, "linear": linear}, seed=ex.SEED + 5)
