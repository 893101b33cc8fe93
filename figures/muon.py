"""Figures of the Muon topic: the spectral ball with the exact polar factor and with Newton-Schulz, its window in
eta lambda, and the arrival times of the modes.

Everything drawn comes from the claims' results or the topic's cached experiments
(:mod:`paper_checks.muon.experiments`); closed forms from :mod:`theory.muon`. Nothing here simulates.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

import theory.muon as th
from figures._style import ACCENT, MUTED, PALETTE, SIM, THEORY, figure, save, threshold
from paper_checks import Budget, Result
from paper_checks.muon import experiments as E


def make(results: dict[str, Result], out: Path, budget: Budget) -> list[Path]:
    """All figures of the topic; a figure whose claim result is missing is skipped."""
    out = Path(out)
    paths: list[Path] = []
    for draw in (_ball, _ns, _window, _modes):
        paths += draw(results, out, budget)
    return paths


def _ball(results: dict[str, Result], out: Path, budget: Budget) -> list[Path]:
    """Left: the aligned runs' lambda |W_t|_op over the closed form 1 - (1 - eta lambda)^t. Right: the generic noisy
    run with the exact polar factor and with NS5, against the ball and the top of NS5's band."""
    cid = "chen2025.spectral_ball_radius"
    if cid not in results:
        return []
    ex = E.ball(budget)
    fig, (ax1, ax2) = figure(2, width=4.0, height=3.2)
    T = ex["aligned_T"]
    t = np.arange(1, T + 1)
    closed = np.array([th.aligned_norm(E.BALL_ETA_LAM, 1.0, int(k)) for k in t])  # lambda w_t at lambda = 1
    ax1.plot(t, closed, color=THEORY,
             label=r"theory $1-(1-\eta\lambda)^t$", zorder=2)
    every = max(T // 25, 1)
    for k, (lam, marker) in enumerate(zip(E.BALL_LAMS, "os^")):
        ax1.plot(t[::every], ex["aligned_sv"][k, ::every, 0] * lam, marker, color=PALETTE[k], mfc="none", ms=4,
                 label=f"simulated, λ = {lam:g}", zorder=3)
    ax1.set(xscale="log", xlabel="step t", ylabel=r"$\lambda\|W_t\|_{op}$", ylim=(0, 1.25),
            title="aligned runs (ηλ = 0.04)")
    ax1.legend(loc="lower right", fontsize=7)
    g = np.arange(1, ex["gen_T"] + 1)
    ax2.plot(g, ex["gen_op_polar"] * E.GEN_LAM, ".", ms=1.5, color=SIM, label="simulated, exact polar")
    ax2.plot(g, ex["gen_op_ns"] * E.GEN_LAM, ".", ms=1.5, color=ACCENT, label="simulated, NS5")
    _, top = th.ns_band(5)
    ax2.axhline(1.0, color=MUTED, ls="--", lw=1, label="ball 1/λ")
    ax2.axhline(top, color=MUTED, ls=":", lw=1, label="top of NS5's band")
    ax2.set(xlabel="step t", ylabel=r"$\lambda\|W_t\|_{op}$", ylim=(0.45, 1.3), xlim=(0, ex["gen_T"] * 1.02),
            title="noisy run, momentum 0.9")
    ax2.legend(loc="lower right", fontsize=7, markerscale=5)
    return save(fig, "muon_ball", out, claims=[cid])


def _ns(results: dict[str, Result], out: Path, budget: Budget) -> list[Path]:
    """Where the aligned NS runs settle for k = 1..8 steps: measured against the scalar recursion, with NS's band."""
    cid = "steplab.muon_ns5_settles_outside_the_ball"
    res = results.get(cid)
    if res is None:
        return []
    a = res.arrays
    ks, bands = np.asarray(a["ks"]), np.asarray(a["bands"])
    fig, ax = figure(width=4.6, height=3.3)
    ax.plot(ks, a["predicted"], "-", color=THEORY, label="theory: the modes' recursion", zorder=2)
    ax.plot(ks, a["settled"], "o", color=SIM, mfc="none", label="simulated 16x8 runs", zorder=3)
    ax.fill_between(ks, bands[:, 0], bands[:, 1], color=MUTED, alpha=0.15, lw=0, label="band of $p^{k}$ on [1e-3, 1]")
    threshold(ax, 1.0, "exact polar: ball 1/λ", vertical=False)
    ax.set(xlabel="Newton–Schulz steps k", ylabel=r"settled $\lambda\|W\|_{op}$", ylim=(0.0, 1.45),
           xticks=ks, title="NS in place of the polar factor")
    ax.legend(loc="lower right", fontsize=7)
    return save(fig, "muon_ns", out, claims=[cid])


def _window(results: dict[str, Result], out: Path, budget: Budget) -> list[Path]:
    """The largest lambda |W_t|_op from 0 against eta lambda: 1 up to eta lambda = 1, eta lambda beyond."""
    cid = "steplab.muon_ball_window"
    res = results.get(cid)
    if res is None:
        return []
    a = res.arrays
    ex = E.window(budget)
    fine = np.linspace(0.05, 1.97, 300)
    fig, ax = figure(width=4.6, height=3.3)
    ax.plot(fine, th.sup_from_zero(fine / E.WINDOW_LAM, E.WINDOW_LAM, ex["T"]), color=THEORY,
            label=r"theory $\max(\eta\lambda,\ 1-(1-\eta\lambda)^T)$", zorder=2)
    ax.plot(a["eta_lam"], a["sup"], "o", color=SIM, mfc="none", label="simulated", zorder=3)
    threshold(ax, 1.0, "ηλ = 1")
    threshold(ax, 2.0, "ηλ = 2")
    ax.set(xlabel=r"$\eta\lambda$", ylabel=r"$\sup_t \lambda\|W_t\|_{op}$", xlim=(0, 2.9), ylim=(0.5, 2.2),
           title="exact polar from 0, target outside")
    ax.annotate("runs diverge", (2.08, 1.25), color=MUTED, fontsize=8)
    ax.legend(loc="lower right", fontsize=7)
    return save(fig, "muon_window", out, claims=[cid])


def _modes(results: dict[str, Result], out: Path, budget: Budget) -> list[Path]:
    """Arrival steps against the target's singular values: the factorization (median over starts) on sqrt(0.9 s)/eta,
    the single matrix on s/eta."""
    c1, c2 = "rhee2026.modes_at_one_rate_smallest_first", "steplab.muon_single_matrix_arrivals"
    if c1 not in results or c2 not in results:
        return []
    a, b = results[c1].arrays, results[c2].arrays
    fig, ax = figure(width=4.8, height=3.4)
    s = np.asarray(a["s"])
    fine = np.geomspace(s.min(), s.max(), 100)
    ax.plot(fine, th.factorization_arrival(fine, E.MODES_ETA, E.MODES_FRAC), color=THEORY,
            label=r"theory $\sqrt{0.9\,s}/\eta$ ($W_2W_1$)", zorder=2)
    ax.plot(s, a["median"], "o", color=SIM, mfc="none", ms=4, label="simulated $W_2W_1$ (median)", zorder=3)
    sb = np.asarray(b["s"])
    fine_b = np.geomspace(sb.min(), sb.max(), 100)
    ax.plot(fine_b, fine_b / E.SINGLE_ETA, color=PALETTE[2], label=r"theory $s/\eta$ (one matrix)", zorder=2)
    ax.plot(sb, b["arrival"], "s", color=PALETTE[2], mfc="none", ms=4, label="simulated, one matrix", zorder=3)
    ax.set(xscale="log", yscale="log", xlabel=r"target singular value $s_i$", ylabel="arrival step",
           title="Muon: every mode at one rate")
    ax.legend(loc="lower right", fontsize=7)
    return save(fig, "muon_modes", out, claims=[c1, c2])
