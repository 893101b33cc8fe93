"""Figures of the adaptive-EoS topic: Adam's frozen-preconditioner threshold, and where full Adam equilibrates.

Everything drawn comes from the topic's cached experiments (:mod:`paper_checks.adaptive_eos.experiments`) and the
closed forms of :mod:`theory.adaptive_eos`; nothing here simulates.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

import theory.adaptive_eos as th
from figures._style import MUTED, PALETTE, SIM, THEORY, figure, save, threshold
from paper_checks import Budget
from paper_checks.adaptive_eos import experiments as E
from paper_checks.adaptive_eos.equilibrium import BAND, equilibrium_stats


def _threshold_figure(out: Path, budget: Budget) -> list[Path]:
    """The critical eta q of frozen-P Adam against beta_1 (sympy line, bisected markers); RMSProp's cycles on 2."""
    fr = E.frozen(budget)
    fig, axes = figure(2, width=4.3, height=3.3)
    ax = axes[0]
    b = np.linspace(0.0, 0.96, 200)
    crit = 0.5 * (fr["eta_lo"] + fr["eta_hi"]) * fr["q"]
    ax.plot(b, [th.frozen_threshold(x) for x in b], color=THEORY, label=r"$2(1+\beta_1)/(1-\beta_1)$ (sympy)")
    ax.plot(fr["beta1"], crit, "o", color=SIM, mfc="none", ms=7, label="edge of simulated Adam, P frozen")
    ax.set(yscale="log", xlabel=r"$\beta_1$", ylabel=r"critical $\eta\,\lambda_{\max}(P^{-1}H)$",
           title="frozen preconditioner: the flip at z = −1")
    ax.legend(loc="upper left", fontsize=7)
    ax = axes[1]
    q = E.quadratics(budget)
    settled = q["rms6_period2"][:, -1] < 1e-9
    ax.plot(np.arange(settled.size)[settled], q["rms6_sharp_mean"][settled, -1], "o", color=SIM, mfc="none",
            label="RMSProp runs that settle")
    ax.plot(np.arange(settled.size)[~settled], q["rms6_sharp_mean"][~settled, -1], "x", color=MUTED,
            label="runs without a cycle on the threshold")
    ax.axhline(2.0, color=THEORY, ls="--", lw=1, label=r"RMSProp's threshold $\eta\lambda_{\max}(P^{-1}H) = 2$")
    ax.set(xlabel="run (6-D quadratics: seed, η, β₂)", ylabel=r"tail mean $\eta\,\lambda_{\max}(P^{-1}H)$",
           title="RMSProp's lattice cycles sit on 2", ylim=(1.9, 2.45))
    ax.legend(loc="upper right", fontsize=7)
    return save(fig, "adaptive_eos_threshold", out,
                claims=["cohen2022.frozen_preconditioner_threshold", "cohen2022.rmsprop_lattice_cycle"])


def _equilibrium_figure(out: Path, budget: Budget) -> list[Path]:
    """Full Adam: the time mean over the threshold per (beta_1, beta_2) with 4 SE bars; the beta_2 window in 1-D."""
    q = E.quadratics(budget)
    st = equilibrium_stats(q)
    fig, axes = figure(2, width=4.3, height=3.3)
    ax = axes[0]
    for k, (group, marker, shift) in enumerate((("one", "o", -0.006), ("six", "s", 0.006))):
        g = st[group]
        thr = np.array([th.frozen_threshold(b) for b in g["beta1"]])
        for j, b2 in enumerate(sorted(set(g["beta2"].tolist()))):
            sel = g["beta2"] == b2
            ax.errorbar(g["beta1"][sel] + shift * (1 + j), g["mean"][sel] / thr[sel], yerr=4 * g["se"][sel] / thr[sel],
                        fmt=marker, color=PALETTE[j], mfc="none", capsize=2,
                        label=f"{'1-D' if group == 'one' else '6-D'}, β₂ = {b2:g}")
    threshold(ax, 1.0, "threshold", vertical=False, color=THEORY)
    threshold(ax, 1.0 - BAND, "−10 %", vertical=False)
    ax.set(xlabel=r"$\beta_1$", ylabel="time mean / threshold", ylim=(0.86, 1.03), xlim=(0.4, 1.0),
           title="Adam hovers below its threshold (± 4 SE)")
    ax.legend(loc="lower left", fontsize=6, ncol=2)
    ax = axes[1]
    b1, om = q["window_beta1"], 1.0 - q["window_beta2"]
    ratio = q["window_sharp_mean"].mean(axis=1) / np.array([th.frozen_threshold(b) for b in b1])
    for color, b in zip(PALETTE, sorted(set(b1.tolist()))):
        sel = b1 == b
        ax.plot(om[sel], ratio[sel], "o-", color=color, mfc="none", lw=0.8, label=f"β₁ = {b:g}")
    ax.axhline(1.0 - BAND, color=MUTED, ls="--", lw=1, label="10 % below the threshold")
    ax.set(xscale="log", xlabel=r"$1-\beta_2$", ylabel="time mean / threshold", ylim=(0.0, 1.15),
           title="the window: P slower than the momentum")
    ax.legend(loc="lower left", fontsize=7)
    return save(fig, "adaptive_eos_equilibrium", out,
                claims=["cohen2022.adam_equilibrates_near_38_over_eta", "steplab.adam_equilibrium_below_threshold",
                        "steplab.adam_threshold_needs_slow_preconditioner"],
                unaudited="no theory is drawn as a series: the dark-blue markers and curve are measurements at the "
                          "first β₂ and β₁ (the palette's first colour); the checks' threshold is the guide at 1")


def _network_figure(out: Path, budget: Budget) -> list[Path]:
    """The tiny MLP: eta lambda_max(P^-1 H) / 38 over training, each initialization and the mean, per step size."""
    ex = E.network(budget)
    thr = th.frozen_threshold(0.9)
    fig, ax = figure(1, width=5.0, height=3.3)
    for color, eta in zip(PALETTE, np.unique(ex["eta"])[::-1]):
        runs = ex["sharp"][ex["eta"] == eta] / thr
        for r in runs:
            ax.plot(ex["step"], r, color=color, lw=0.5, alpha=0.35)
        ax.plot(ex["step"], runs.mean(axis=0), "o", color=color, mfc="none", ms=4,
                label=f"η = {eta:g}: mean of {runs.shape[0]} initializations (thin: each)")
    threshold(ax, 1.0, "38/η", vertical=False, color=THEORY)
    ax.set(xlabel="step", ylabel=r"$\eta\,\lambda_{\max}(P^{-1}H)$ / 38", ylim=(0.0, 1.45),
           title="Adam on a 4-16-1 tanh MLP (Lanczos on HVPs)")
    ax.legend(loc="lower right", fontsize=7)
    return save(fig, "adaptive_eos_network", out, claims=["cohen2022.adam_network_equilibrates_near_38_over_eta"],
                unaudited="no theory is drawn as a series: the dark-blue curves are the largest step's measured "
                          "runs (the palette's first colour); the checks' bound 38/η is the guide at 1")


def make(results: dict, out: Path, budget: Budget) -> list[Path]:
    """Draw the topic's figures at ``budget`` (``results``: claim id -> Result; these figures read the experiments)."""
    return _threshold_figure(out, budget) + _equilibrium_figure(out, budget) + _network_figure(out, budget)
