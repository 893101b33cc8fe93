"""Figures of the mup_transfer topic: the optimal one-step rate against width per parametrization, and how fast the μP
optimum approaches its limit (per seed and seed-averaged), with the window where it transfers to 10 %.

Markers are exact per-seed optima from the cached experiments of ``paper_checks.mup_transfer.experiments``; lines are
closed forms of :mod:`theory.mup_transfer` (the SP and NTP levels are its kernel optimum averaged over Gaussian initial
outputs). Nothing here simulates.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

import theory.mup_transfer as th
from figures import plot
from figures._style import ACCENT, MUTED, PALETTE
from paper_checks import Budget
from paper_checks.mup_transfer import experiments as E
from paper_checks.mup_transfer.rates import BREAK, WINDOW
from paper_checks.mup_transfer.transfer import kernel_expectation


def _optimum(results: dict, out: Path, budget: Budget) -> list[Path]:
    """Seed-mean optimum against width under μP, SP and NTP, with eta_inf, the SP kernel law and the NTP level."""
    ex = E.widths(budget)
    X, y = E.dataset()
    n = ex["widths"].astype(float)
    fine = np.geomspace(n[0], n[-1], 200)
    ei = th.eta_infinity(X, y)
    sp_level, _ = kernel_expectation(1.0, 20_000, E.SEED, "sp")
    ntp_level, _ = kernel_expectation(th.limit_kernel_factor("ntp", E.D), 20_000, E.SEED + 1, "ntp")
    kappa_sp = np.array([th.kernel_factor("sp", int(w), E.D) for w in fine])
    fig, ax = plot.figure(width=5.2, height=3.8)
    (mup,) = ax.plot(fine, np.full_like(fine, ei), color=PALETTE[0], lw=1.2, label=r"μP: $\eta_\infty$ (closed form)")
    plot.draws(mup, "hayou2025.mup_optimum_converges_to_eta_inf", at=n)  # the level the fitted intercept is held to
    ax.plot(fine, sp_level / kappa_sp, color=PALETTE[1], lw=1.2, label=r"SP: $\mathbb{E}\,\eta(f_0; 1)/\kappa_n$")
    ax.plot(fine, np.full_like(fine, ntp_level), color=PALETTE[2], lw=1.2,
            label=r"NTP: $\mathbb{E}\,\eta(f_0; 3/d)$")
    for color, name in zip(PALETTE, th.TABLES):
        ax.plot(n, ex[f"eta_{name}"].mean(axis=1), "o", ms=4, mfc="none", color=color,
                label=f"{name}: seed-mean optimum")
    ax.set(xscale="log", yscale="log", xlabel="width n", ylabel="optimal one-step rate",
           title=f"one GD step, linear net (d = {E.D}, m = {E.M})", ylim=(1e-7, 40.0))
    ax.legend(loc="lower left", fontsize=7, ncol=2)
    return plot.save(fig, "mup_transfer_optimum", out,
                     claims=["hayou2025.mup_optimum_converges_to_eta_inf", "hayou2025.sp_and_ntp_do_not_transfer",
                             "steplab.kernel_regime_optimum_is_random"])


def _rates(results: dict, out: Path, budget: Budget) -> list[Path]:
    """Per-seed spread and seed-mean error of the μP optimum against width, the window shaded, width 1024 marked."""
    ex = E.widths(budget)
    b = E.bias(budget)
    X, y = E.dataset()
    ei = th.eta_infinity(X, y)
    n = ex["widths"].astype(float)
    sd = ex["eta_mup"].std(axis=1, ddof=1)
    sigma = float(np.mean(sd[-4:] * np.sqrt(n[-4:])))
    nb = b["widths"].astype(float)
    err = b["eta"].mean(axis=1) - ei
    B = float(nb[-1] * err[-1])
    n10 = (sigma / (WINDOW * ei)) ** 2
    fine = np.geomspace(n[0], n[-1], 200)
    fig, ax = plot.figure(width=5.2, height=3.8)
    ax.axvspan(n[0], n10, color=MUTED, alpha=0.15, lw=0, label="not within 10 % (n < n₁₀)")
    (rate,) = ax.plot(fine, sigma / np.sqrt(fine), color=PALETTE[0], lw=1.2, label=r"$\sigma\,n^{-1/2}$")
    plot.draws(rate, "hayou2025.mup_error_rate_inverse_sqrt_width:seed spread of the optimum, widths 128..", at=fine,
               y=lambda s: sigma * fine ** s)
    ax.plot(fine, B / fine, color=PALETTE[1], lw=1.2, ls="--", label=r"$B\,n^{-1}$")
    ax.plot(n, sd, "o", ms=4, mfc="none", color=PALETTE[0], label="per-seed spread")
    ax.plot(nb, err, "s", ms=4, mfc="none", color=PALETTE[1], label="seed-mean error")
    ax.axvline(BREAK, color=ACCENT, ls=":", lw=1, label="width 1024")
    ax.set(xscale="log", yscale="log", xlabel="width n", ylabel=r"distance to $\eta_\infty$",
           title="μP: how fast the optimum settles", ylim=(1e-5, 3.0))
    ax.legend(loc="lower left", fontsize=7)
    return plot.save(fig, "mup_transfer_rates", out,
                     claims=["hayou2025.mup_error_rate_inverse_sqrt_width", "steplab.mup_seed_mean_error_inverse_width",
                             "steplab.mup_transfer_window"])


def make(results: dict, out: Path, budget: Budget) -> list[Path]:
    """Draw the topic's figures at ``budget`` (``results``: claim id -> Result)."""
    return _optimum(results, out, budget) + _rates(results, out, budget)
