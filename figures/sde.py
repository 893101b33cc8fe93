"""Figures of topic ``sde`` (Compagnoni et al. 2025): thresholds, weak error, divergence, Cauchy noise, mean sign.

Everything is drawn from the claims' ``Result.arrays`` (full budget, cached by the claim runner).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from figures._style import MUTED, PALETTE, SIM, THEORY, figure, save, threshold

P = "compagnoni2025."
KINDS = ("gd", "first_order", "second_order", "corrected")
LABEL = {"gd": "GD (discrete)", "first_order": "classic 1st-order", "second_order": "classic 2nd-order",
         "corrected": "curvature-corrected"}
COLOR = dict(zip(KINDS, PALETTE))


def _thresholds(results, out):
    rates, quart = results.get(P + "quadratic_log_rates"), results.get(P + "quartic_thresholds")
    if rates is None or quart is None:
        return []
    fig, (ax, bx) = figure(2, 1, width=4.4)
    a = rates.arrays
    u = np.asarray(a["u"])
    i = int(np.argmin(np.abs(np.asarray(a["lambdas"]) - 1.0)))
    sub = slice(None, None, max(1, u.size // 40))
    for k in KINDS:
        th, sim = np.asarray(a[f"{k}_theory"])[i], np.asarray(a[f"{k}_sim"])[i]
        ax.plot(u, th, color=COLOR[k], label=LABEL[k])
        ax.plot(u[sub], sim[sub], "o", color=COLOR[k], mfc="none")
    ax.axhline(0, color=MUTED, lw=0.8)
    threshold(ax, 2.0, r"$\eta=2/\lambda$")
    ax.set(xlabel=r"$\eta\lambda$", ylabel="per-time log-rate of f", ylim=(-7, 3),
           title=r"quadratic $\lambda x^2/2$: lines sympy, markers JAX")
    ax.legend(loc="lower left")
    q = quart.arrays
    s = np.asarray(q["s"])
    for j, k in enumerate(KINDS):
        grew = np.asarray(q[f"{k}_grew"]).astype(bool)
        bx.plot(s[grew], np.full(grew.sum(), j), "|", color=COLOR[k], ms=10)
        bx.plot(s[~grew], np.full((~grew).sum(), j), "|", color=MUTED, ms=4, alpha=0.4)
    bx.axvline(2.0, color=MUTED, ls="--", lw=1)
    bx.axvline(2 / 3, color=MUTED, ls="--", lw=1)
    bx.annotate("2/3", (2 / 3, -0.6), xytext=(2, 0), textcoords="offset points", color=MUTED, fontsize=8)
    bx.annotate("2", (2.0, -0.6), xytext=(2, 0), textcoords="offset points", color=MUTED, fontsize=8)
    bx.set(xscale="log", ylim=(-0.9, 3.5), xlabel=r"$s=\eta x_0^2$", yticks=range(4), yticklabels=[LABEL[k] for k in KINDS],
           title=r"$x^4/4$: where |x| grows (coloured) — simulated")
    bx.grid(False)
    return save(fig, "sde_thresholds", out)


def _weak(results, out):
    fig, ax = figure(1, 1, width=4.6)
    drawn = False
    for j, (k, order) in enumerate((("first_order", 1), ("second_order", 2), ("corrected", 1))):
        r = results.get(P + f"weak_order_{k}")
        if r is None:
            continue
        drawn = True
        eta, err, se = (np.asarray(r.arrays[n]) for n in ("eta", "err", "se"))
        ax.errorbar(eta, err, yerr=2 * se, fmt="o", color=COLOR[k], label=f"{LABEL[k]} (slope {r.measured:.2f})")
        ax.plot(eta, err[0] * (eta / eta[0]) ** order, "-", color=COLOR[k], alpha=0.6)
    if not drawn:
        return []
    ax.set(xscale="log", yscale="log", xlabel=r"$\eta$", ylabel=r"$|E f(x_{T/\eta}) - E f(X_T)|$",
           title="weak error vs DSGD on $x^4/4$ (lines: order 1, 2)")
    ax.legend()
    return save(fig, "sde_weak_error", out)


def _divergence(results, out):
    r, mlp = results.get(P + "normalization_prevents_divergence"), results.get(P + "mlp_pattern")
    if r is None:
        return []
    fig, (ax, bx) = figure(2, 1, width=4.4)
    a = r.arrays
    om = np.asarray(a["omega"])
    const, norm = np.asarray(a["constant"]), np.asarray(a["normalized"])
    for j, s1 in enumerate(np.asarray(a["sigma1"])):
        for m, x0 in enumerate(np.asarray(a["x0"])):
            if m == len(a["x0"]) - 1 or j == len(a["sigma1"]) - 1:
                ax.plot(om, const[:, j, m], "o-", color=PALETTE[(3 * j + m) % len(PALETTE)],
                        label=rf"const $\sigma_1$={s1:g}, $x_0$={x0:g}")
    ax.plot(om, norm.max(axis=(1, 2)), "s--", color=THEORY, label="normalized (max over cells)")
    ax.set(xlabel=r"$\omega$", ylabel="fraction diverged", title=r"DCSGD on $x^4/4$, N=4")
    ax.legend(fontsize=6)
    if mlp is not None:
        b = mlp.arrays
        bx.plot(b["omega"], b["constant"], "o-", color=SIM, label=r"constant $\eta$")
        bx.plot(b["omega"], b["normalized"], "s--", color=THEORY, label="normalized")
        bx.set(xscale="symlog", xlabel=r"$\omega$ (rand-k)", ylabel="fraction diverged", title="MLP, N=8, affine noise")
        bx.legend()
    return save(fig, "sde_divergence", out)


def _cauchy(results, out):
    r = results.get(P + "sign_converges_under_cauchy")
    if r is None:
        return []
    a = r.arrays
    steps = np.asarray(a["steps"])
    fig, ax = figure(1, 1, width=4.6)
    series = [("DSignSGD", "sign_loss", THEORY), ("DCSGD", "dcsgd_loss", SIM)]
    if "normalized_loss" in a:
        series.append(("normalized DCSGD", "normalized_loss", PALETTE[2]))
    for name, key, color in series:
        gap = np.maximum(np.asarray(a[key]) - 2.0, 1e-16)
        lo, med, hi = np.percentile(gap, [10, 50, 90], axis=0)
        ax.plot(steps, med, color=color, label=f"{name} median")
        ax.fill_between(steps, lo, hi, color=color, alpha=0.2)
    frac = float(np.mean(a["dcsgd_diverged"]))
    ax.set(yscale="log", xlabel="step k", ylabel=r"$f - f^\ast$ (median, 10-90 %)",
           title=rf"Cauchy, $\eta_k=0.1/\sqrt{{k+1}}$, $2\cosh x$: DCSGD diverged {frac:.0%}")
    ax.legend()
    return save(fig, "sde_cauchy", out)


def _mean_sign(results, out):
    r = results.get(P + "mean_sign_laws")
    if r is None:
        return []
    a = r.arrays
    u = np.asarray(a["u"])
    fine = np.linspace(u.min(), u.max(), 400)
    from scipy import special

    curves = {"gaussian": special.erf(fine / np.sqrt(2)), "student_t": 2 * special.stdtr(3.0, fine) - 1,
              "cauchy": 2 / np.pi * np.arctan(fine)}
    fig, ax = figure(1, 1, width=4.6)
    for j, (law, label) in enumerate((("gaussian", "Gaussian: erf"), ("student_t", r"Student-t$_3$"),
                                      ("cauchy", "Cauchy: (2/π) arctan"))):
        ax.plot(fine, curves[law], color=PALETTE[j], label=label)
        ax.plot(u, a[f"{law}_mc"], "o", color=PALETTE[j], mfc="none")
    ax.set(xlabel=r"$g/\sigma$", ylabel=r"$E\,\mathrm{sign}(g+\sigma Z)$", title="mean sign: lines closed form, markers MC")
    ax.legend()
    return save(fig, "sde_mean_sign", out)


def make(results: dict, out: Path, *, budget: str, fresh: bool) -> list[Path]:
    """Draw every ``sde`` figure whose claim results are present."""
    out = Path(out)
    paths: list[Path] = []
    for draw in (_thresholds, _weak, _divergence, _cauchy, _mean_sign):
        paths += draw(results, out)
    return paths
