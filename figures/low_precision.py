"""Figures of the low-precision topic: where bf16 gradient descent freezes, when, and stochastic rounding's floor.

Drawn from the claim results and the cached experiments of :mod:`paper_checks.low_precision`; the lines are the
closed forms of :mod:`theory.low_precision` (the band, the two-point law) and the exact lattice chain's freeze
steps. Nothing here simulates.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

import theory.low_precision as th
from figures import plot
from figures._style import MUTED, PALETTE
from paper_checks import Budget
from paper_checks.low_precision import experiments as E
from paper_checks.low_precision.freeze import WINDOW_STEPS


def _floor(results: dict, out: Path, budget: Budget) -> list[Path]:
    rn, sr = results.get("shang2026.half_ulp_freeze"), results.get("shang2026.sr_removes_freeze")
    if rn is None or sr is None:
        return []
    fig, (ax1, ax2) = plot.figure(2, width=4.3, height=3.4)
    etas = rn.arrays["eta_a"]
    fine = np.geomspace(etas.min(), etas.max(), 200)
    lower, upper = th.rn_band(fine, E.ULP)
    ax1.fill_between(fine, lower / E.ULP, upper / E.ULP, color=PALETTE[0], alpha=0.15, lw=0,
                     label="RN band [U − ulp, U)")
    plot.theory_vs_simulation(ax1, fine, upper / E.ULP - 0.5, etas, rn.arrays["mean_error"],
                              label_theory="theory: mean U − ulp/2", label_sim="bf16 RN runs: mean")
    ax1.plot(etas, rn.arrays["min_error"], "v", color=MUTED, ms=4, mfc="none", label="runs: min and max")
    ax1.plot(etas, rn.arrays["max_error"], "^", color=MUTED, ms=4, mfc="none")
    kahan = results.get("zamirai2020.kahan_summation_remedies_the_freeze")
    if kahan is not None:
        k = kahan.arrays
        ax1.plot(fine, th.kahan_bias_bound() / fine, color=PALETTE[3], ls="--",
                 label=r"Kahan bound $3\cdot2^{-10}/(\eta a)$")
        ax1.plot(k["eta_a"], k["max_scaled"] / k["eta_a"], "D", color=PALETTE[3], ms=4, mfc="none",
                 label="Kahan runs: largest |time-average|")
    ax1.set(xscale="log", yscale="log", xlabel=r"$\eta a$", ylabel=r"error / ulp", ylim=(1e-3, 1e5),
            title=r"round to nearest: $U = \mathrm{ulp}/(2\eta a)$")
    ax1.legend(loc="upper right", fontsize=7)
    s = sr.arrays
    grid = np.array([0.03, 1.0])
    plot.theory_vs_simulation(ax2, grid, np.full(2, th.sr_mean_second_moment()), s["eta_a"], s["mean_sq"],
                              yerr=s["se"], label_theory=r"theory $f(1-f)$ averaged: 1/6",
                              label_sim="bf16 SR runs, t = T")
    ax2.plot(s["eta_a"], s["mean_sq_half"], "s", color=PALETTE[2], mfc="none", ms=4, label="bf16 SR runs, t = T/2")
    ax2.set(xscale="log", xlabel=r"$\eta a$", ylabel=r"$E\,e^2$ / ulp$^2$", ylim=(0.0, 0.3), xlim=(0.03, 1.0),
            title="stochastic rounding: no freeze")
    ax2.legend(loc="lower left", fontsize=7)
    return plot.save(fig, "low_precision_floor", out,
                     claims=["shang2026.half_ulp_freeze", "shang2026.sr_removes_freeze",
                             "zamirai2020.kahan_summation_remedies_the_freeze"])


def _freeze_step(results: dict, out: Path, budget: Budget) -> list[Path]:
    res = results.get("shang2026.freeze_step_from_reference")
    if res is None:
        return []
    run = E.rn_runs(budget)
    ws = run["w_star"]
    lattice = np.array([
        np.mean(th.rn_lattice_run(ws, E.W0, k, E.RN_STEPS)["freeze_step"]
                - th.reference_freeze_step(E.W0 - ws, k, E.ULP)) for k in run["eta_a"]])
    a = res.arrays
    fig, ax = plot.figure(width=5.0, height=3.4)
    mean = a["offset_mean"]
    err = np.vstack([mean - a["offset_min"], a["offset_max"] - mean])
    ax.axhspan(-WINDOW_STEPS, WINDOW_STEPS, color=PALETTE[1], alpha=0.12, lw=0, label="within two steps")
    line, _ = plot.theory_vs_simulation(ax, a["eta_a"], lattice, a["eta_a"], mean, yerr=err,
                                        label_theory="exact lattice chain: mean", label_sim="bf16 runs: mean, min–max")
    # the claim checks the lattice chain's freeze steps run by run at η a ≥ 0.1; the line is their mean offset from t_f
    t_f = np.stack([th.reference_freeze_step(E.W0 - ws, k, E.ULP) for k in run["eta_a"]])
    inside = run["eta_a"] >= 0.099
    plot.draws(line, "shang2026.freeze_step_from_reference:bf16 freeze step against the exact lattice chain's, "
               "eta a >= 0.1", at=run["eta_a"][inside],
               y=lambda v: (np.asarray(v, dtype=float) - t_f[inside]).mean(axis=1))
    ax.set(xscale="log", xlabel=r"$\eta a$", ylabel=r"$t_{\rm bf16} - t_f$ (steps)",
           title="freeze step against the exact path's prediction")
    ax.legend(loc="lower right", fontsize=7)
    return plot.save(fig, "low_precision_freeze_step", out,
                     claims=["shang2026.freeze_step_from_reference", "steplab.freeze_step_window"])


def _adamw(results: dict, out: Path, budget: Budget) -> list[Path]:
    res = results.get("shang2026.adamw_cosine_freeze_point")
    if res is None:
        return []
    a = res.arrays
    fig, ax = plot.figure(width=4.6, height=3.4)
    fine = np.linspace(0.3, 1.9, 200)
    plot.theory_vs_simulation(ax, fine, th.cosine_freeze_fraction(fine), a["r"], a["fraction"],
                              label_theory=r"theory $\arccos(r - 1)/\pi$", label_sim="bf16 Adam, freeze step / T")
    ax.plot(a["r"], a["fraction_decay"], "s", color=PALETTE[2], mfc="none", ms=4, label=r"bf16 AdamW, $\lambda$ = 0.05")
    plot.threshold(ax, 0.5, "mid-run", vertical=False)
    ax.set(xlabel=r"$r = \mathrm{ulp}/(\eta_{\max}|u|)$", ylabel="freeze step / T", ylim=(0.0, 1.0),
           title="AdamW under cosine decay")
    ax.legend(loc="lower left", fontsize=7)
    return plot.save(fig, "low_precision_adamw", out, claims=["shang2026.adamw_cosine_freeze_point"],
                     unaudited="the line is the continuous freeze fraction arccos(r − 1)/π; the checks compare "
                               "integer freeze steps floor(T s) + 1, up to a step (1/T of the fraction) away from it")


def _noise(results: dict, out: Path, budget: Budget) -> list[Path]:
    res = results.get("steplab.gradient_noise_dithers_the_freeze")
    if res is None:
        return []
    a = res.arrays
    frac = E.NOISE_W_STAR / E.ULP - np.floor(E.NOISE_W_STAR / E.ULP)
    fine = np.geomspace(0.008, 0.12, 40)
    law = [th.rn_sgd_window_mean_sq(k, E.NOISE_SIGMA_ULPS, frac, E.NOISE_K0, E.NOISE_STEPS,
                                    E.NOISE_WINDOW)["mean_sq"] for k in fine]
    fig, ax = plot.figure(width=4.6, height=3.4)
    plot.theory_vs_simulation(ax, fine, law, a["eta_a"], a["mean_sq"], yerr=a["se"],
                              label_theory="exact law of the grid index", label_sim="bf16 RN chains (± SE)")
    ax.set(xscale="log", yscale="log", xlabel=r"$\eta a$", ylabel=r"window mean $e^2$ / ulp$^2$", ylim=(0.5, 5e4),
           title=r"gradient noise $\sigma$ = 10 ulp")
    ax.legend(loc="upper right", fontsize=7)
    return plot.save(fig, "low_precision_noise", out, claims=["steplab.gradient_noise_dithers_the_freeze"])


def make(results: dict, out: Path, budget: Budget) -> list[Path]:
    """Draw the topic's figures at ``budget`` (``results``: claim id -> Result)."""
    return (_floor(results, out, budget) + _freeze_step(results, out, budget) + _adamw(results, out, budget)
            + _noise(results, out, budget))
