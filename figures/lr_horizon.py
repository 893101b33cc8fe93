"""Figures of the lr_horizon topic: the best step against the horizon, its window, and the optimal decay's peak.

Markers are measurements (exact argmins from the cached experiments of ``paper_checks.lr_horizon.experiments``, and
Monte Carlo SGD); lines are closed forms of :mod:`theory.lr_horizon`. Nothing here simulates or searches.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.ticker import NullFormatter

import theory.lr_horizon as th
from figures import plot
from figures._style import ACCENT, MUTED, PALETTE, SIM, THEORY
from paper_checks import Budget, standard_error
from paper_checks.lr_horizon import experiments as E


def _law(results: dict, out: Path, budget: Budget) -> list[Path]:
    """Left: eta*(N) of both shapes against the law. Right: the bending setting, its window shaded, the cap."""
    run = E.constant_optimum(budget)
    edge = E.bend_edge(budget)["edge"]
    fig, axes = plot.figure(2, width=4.4, height=3.4)
    ax = axes[0]
    n = run["horizons"]
    fine = np.geomspace(n[0], n[-1], 100)
    for color, s in zip(PALETTE, E.SHAPES):
        law = ax.plot(fine, th.asymptotic_step(fine, E.BETA, s, E.SIGMA2, E.D_LARGE), color=color, lw=1.2,
                      label=f"$N^{{-s/(s+1)}}$ law, s = {s:g}")[0]
        # the law is a power of N: its values at the horizons follow from the checked exponent through the first
        level = th.asymptotic_step(n[:1], E.BETA, s, E.SIGMA2, E.D_LARGE)[0]
        plot.draws(law, f"li2026.constant_step_exponent:d log eta*/d log N at s = {s:g}", at=n,
                   y=lambda slope, level=level: level * (n / n[0]) ** slope)
        ax.plot(n, run[f"eta_{s:g}"], "o", ms=4, mfc="none", color=color, label=f"exact argmin, s = {s:g}")
    ax.set(xscale="log", yscale="log", xlabel="horizon N (steps)", ylabel="best constant step η*",
           title="η* against N (β = 2, σ² = 1)")
    ax.legend(loc="lower left", fontsize=7)
    ax = axes[1]
    wide, bent = run["wide"], run["eta_bend"]
    fine = np.geomspace(wide[0], wide[-1], 200)
    lam1 = 1.0
    n_cap = th.cap_horizon(E.BETA, E.S_BEND, E.SIGMA2_BEND, E.D_LARGE)
    ax.axvspan(edge, wide[-1], color=ACCENT, alpha=0.12, lw=0, label="law within 10 % (located)")
    ax.axvspan(wide[0], n_cap, color=MUTED, alpha=0.15, lw=0, label="law's step past 2/λ₁")
    ax.plot(fine, th.asymptotic_step(fine, E.BETA, E.S_BEND, E.SIGMA2_BEND, E.D_LARGE), color=THEORY, lw=1.2,
            label="law η₀(N)")
    ax.plot(fine, th.corrected_step(fine, E.BETA, E.S_BEND, E.SIGMA2_BEND, E.D_LARGE), color=PALETTE[2], lw=1.2,
            ls="--", label="first-order η₁(N)")
    ax.plot(wide, bent, "o", ms=4, mfc="none", color=SIM, label="exact argmin")
    ax.axhline(2.0 / lam1, color=MUTED, ls=":", lw=1, label="stability cap 2/λ₁")
    ax.set(xscale="log", yscale="log", xlabel="horizon N (steps)", ylabel="best constant step η*",
           title="where the law holds (σ² = 0.02, s = 1/2)", ylim=(bent.min() / 2, 6.0))
    ax.legend(loc="lower left", fontsize=7)
    return plot.save(fig, "lr_horizon_law", out,
                     claims=["li2026.constant_step_exponent", "li2026.constant_step_law_window"])


def _cutoff(results: dict, out: Path, budget: Budget) -> list[Path]:
    """The cut spectrum (d = 1000): exact argmins (markers) against the power law and the law with the spectrum's end
    kept (lines), the region past the located edge shaded."""
    run = E.cutoff(budget)
    n, eta, edge = run["horizons"], run["eta"], run["edge"]
    s = E.SHAPES[0]
    fine = np.geomspace(n[0], n[-1], 120)
    fig, ax = plot.figure(width=4.8, height=3.4)
    ax.axvspan(edge, n[-1], color=MUTED, alpha=0.15, lw=0, label="law > 10 % off (located)")
    # the claim's prediction is the law with the spectrum's end; the uncut power law is its rival
    ax.plot(fine, th.asymptotic_step(fine, E.BETA, s, E.SIGMA2, E.D_CUT), color=MUTED, lw=1.0, ls="--",
            label="rival: uncut law η₀(N) ∝ N^(−1/3)")
    kept = ax.plot(fine, th.cutoff_step(fine, E.BETA, s, E.SIGMA2, E.D_CUT), color=THEORY, lw=1.2,
                   label="theory: law with the spectrum's end")[0]
    plot.draws(kept, "li2026.constant_step_law_cutoff:eta*(N), N = 1e6..1e13, d = 1000", at=n)
    ax.plot(n, eta, "o", ms=4, mfc="none", color=SIM, label="exact argmin")
    ax.set(xscale="log", yscale="log", xlabel="horizon N (steps)", ylabel="best constant step η*",
           title="the spectrum's end (d = 1000, s = 1/2)")
    ax.legend(loc="lower left", fontsize=7)
    return plot.save(fig, "lr_horizon_cutoff", out, claims=["li2026.constant_step_law_cutoff"])


def _simulation(results: dict, out: Path, budget: Budget) -> list[Path]:
    """The exact final loss against the constant step at N = 1000 (line), Monte Carlo means at the exact optimum and
    at the three transfer rules' steps (markers, 4 SE bars)."""
    run = E.transfer_runs(budget)
    steps, loss = run["steps"], run["loss"]
    fine = np.geomspace(steps.min() / 2, steps.max() * 2, 200)
    exact = th.constant_step_loss(fine, E.MC_LONG, E.BETA, E.SHAPES[0], E.SIGMA2, E.MC_D)
    fig, ax = plot.figure(width=4.6, height=3.4)
    line = ax.plot(fine, exact, color=THEORY, lw=1.2, label="exact E L at N = 1000")[0]
    plot.draws(line, "li2026.exact_optimum_against_simulation:mean final loss at the four steps", at=steps)
    se = standard_error(loss, axis=1)
    for k, (color, name) in enumerate(zip(PALETTE, run["names"])):
        ax.errorbar(steps[k], loss[k].mean(), yerr=4 * se[k], fmt="o", color=color, mfc="none", capsize=2,
                    label=f"SGD, {name}")
    ax.set(xscale="log", xlabel="constant step η", ylabel="final loss", title="exact optimum vs transfer rules")
    ax.legend(loc="upper center", fontsize=7)
    return plot.save(fig, "lr_horizon_simulation", out, claims=["li2026.exact_optimum_against_simulation"])


def _decay(results: dict, out: Path, budget: Budget) -> list[Path]:
    """Tuned peaks of the power decay (1 - t/N)^3 and of linear decay (markers) with the quoted N^-nu slope drawn
    through the longest run's peak (line)."""
    run = E.decay_peaks(budget)
    n, power, linear = run["horizons"], run["power"], run["linear"]
    nu = th.peak_exponent(E.S_DECAY, E.BETA)
    fine = np.geomspace(n[0], n[-1], 100)
    fig, ax = plot.figure(width=4.6, height=3.4)
    line = ax.plot(fine, power[-1] * (fine / n[-1]) ** -nu, color=THEORY, lw=1.2,
                   label=r"quoted slope $N^{-\nu}$, ν = 1/3")[0]
    plot.draws(line, "li2026.power_decay_peak_exponent", at=n, y=lambda slope: power[-1] * (n / n[-1]) ** slope)
    ax.plot(n, power, "o", ms=4, mfc="none", color=SIM, label="exact best peak, (1 − t/N)³")
    ax.plot(n[:linear.size], linear, "s", ms=4, mfc="none", color=PALETTE[2], label="exact best peak, linear decay")
    ax.set(xscale="log", yscale="log", xlabel="horizon N (steps)", ylabel="peak step",
           title="power decay's peak (β = 2, s = 1, step time)")
    ax.set_xticks(n, labels=[f"{int(v)}" for v in n])
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.legend(loc="upper right", fontsize=7)
    return plot.save(fig, "lr_horizon_decay", out, claims=["li2026.power_decay_peak_exponent"])


def _wsd(results: dict, out: Path, budget: Budget) -> list[Path]:
    """Tuned WSD (exact joint optima, markers): the cooldown fraction and the peak over N, hard and easy regime."""
    run = E.wsd_optima(budget)
    n = run["horizons"]
    fig, axes = plot.figure(2, width=4.0, height=3.3)
    ax = axes[0]
    ax.plot(n, run["fraction_hard"], "o-", ms=4, mfc="none", color=SIM, label=f"hard, s = {E.S_HARD:g}")
    ax.plot(n, run["fraction_easy"], "s-", ms=4, mfc="none", color=PALETTE[2], label=f"easy, s = {E.S_EASY:g}")
    ax.set(xscale="log", xlabel="horizon N (steps)", ylabel="tuned cooldown fraction f*", ylim=(0.6, 1.08),
           title="cooldown share of the run")
    ax.set_xticks(n, labels=[f"{int(v)}" for v in n])
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.legend(loc="lower left", fontsize=7)
    ax = axes[1]
    ax.plot(n, run["peak_hard"], "o-", ms=4, mfc="none", color=SIM, label=f"hard, s = {E.S_HARD:g}")
    ax.plot(n, run["peak_easy"], "s-", ms=4, mfc="none", color=PALETTE[2], label=f"easy, s = {E.S_EASY:g}")
    ax.axhline(2.0, color=MUTED, ls=":", lw=1, label="stability edge 2/λ₁")
    ax.set(xscale="log", yscale="log", xlabel="horizon N (steps)", ylabel="tuned peak step",
           title="WSD's tuned peak (β = 2)", ylim=(0.02, 5.0))
    ax.set_xticks(n, labels=[f"{int(v)}" for v in n])
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.legend(loc="center right", fontsize=7)
    return plot.save(fig, "lr_horizon_wsd", out, claims=["li2026.wsd_in_the_hard_regime"])


def make(results: dict, out: Path, budget: Budget) -> list[Path]:
    """Draw the lr_horizon figures at ``budget`` (``results``: claim id -> Result)."""
    return [*_law(results, out, budget), *_cutoff(results, out, budget), *_simulation(results, out, budget),
            *_decay(results, out, budget), *_wsd(results, out, budget)]
