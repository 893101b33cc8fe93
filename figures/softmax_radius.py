"""Figures for the cross-entropy Taylor radius (Sao 2026): ghosts and the zero-free strip, radius vs
margin, one-step r-sweeps per architecture, the temperature study and the learning-rate spike.

Figures draw the claims' ``Result.arrays`` and the topic's cached experiments
(:mod:`paper_checks.softmax_radius.experiments`); they never simulate. The ghost panels evaluate closed forms
of :mod:`theory.softmax_radius` only.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter, NullLocator

from figures._style import ACCENT, MUTED, PALETTE, SIM, THEORY, figure, save, threshold
from figures.plot import draws
from paper_checks import Budget, Result
from paper_checks.softmax_radius import experiments as ex
from paper_checks.softmax_radius import one_step, spike
from sims import softmax_radius as S
from theory import softmax_radius as T

MODES = ("plain", "clip", "controller")


def _ghosts(ax, z, a, title):
    """|F| / sum|terms| on a grid (dark = near a zero), the strip |Im t| < pi/Δa and both radii."""
    z, a = np.asarray(z, float), np.asarray(a, float)
    da = a.max() - a.min()
    det = T.radius_details(z, a)
    rho, h = det["radius"], math.pi / da
    lim = 2.6 * rho
    u = np.linspace(-lim, lim, 321)
    y = np.linspace(-lim, lim, 321)
    margin = T.strip_margin(z, a, u[None, :] + 1j * y[:, None])
    # rasterized: 2 x 103k cells as PDF vector paths took 19 s to write and 3.6 MB (the axes and labels stay vector)
    ax.pcolormesh(u, y, np.log10(np.maximum(margin, 1e-6)), cmap="Greys_r", shading="auto", vmin=-3, vmax=0,
                  rasterized=True)
    ax.axhspan(-h, h, color=ACCENT, alpha=0.18, lw=0, label=r"zero-free strip $|\mathrm{Im}\,t|<\pi/\Delta a$")
    th = np.linspace(0, 2 * np.pi, 400)
    ax.plot(rho * np.cos(th), rho * np.sin(th), color=SIM, lw=1.2, label=r"$|t|=\rho^*$ (nearest ghost)")
    ax.plot(h * np.cos(th), h * np.sin(th), color=THEORY, ls="--", lw=1.2, label=r"$|t|=\rho_a=\pi/\Delta a$")
    ax.plot([det["zero"].real, det["zero"].real], [det["zero"].imag, -det["zero"].imag], "o", color=SIM, ms=5)
    if z.size == 2:  # closed-form binary ghosts t_k = (-δ + iπ(2k+1))/Δa above the flip point
        d, s = z[0] - z[1], a[0] - a[1]
        tk = (-d + 1j * np.pi * (2 * np.arange(-3, 3) + 1)) / s
        ax.plot(tk.real, tk.imag, "x", color=THEORY, ms=7, label=r"theory $t_k$")
        ax.axvline(-d / s, color=MUTED, ls=":", lw=1, label=r"decision flip $-\delta/\Delta a$")
    ax.set_xlim(-lim, lim)
    ax.set_ylim(-lim, lim)
    ax.set_aspect("equal")
    ax.set_xlabel(r"Re $t$")
    ax.set_ylabel(r"Im $t$")
    ax.set_title(title)
    ax.legend(loc="lower left", fontsize=6.5)


def _fig_ghosts(out: Path) -> list[Path]:
    fig, axes = figure(2, 1, width=4.0, height=4.0)
    _ghosts(axes[0], [1.2, 0.0], [1.0, -0.5], r"binary: $\delta=1.2$, $\Delta a=1.5$")
    _ghosts(axes[1], [0.5, 0.0, -0.4, 1.0], [1.0, -0.6, 0.3, 0.1], "4 classes")
    return save(fig, "softmax_radius_ghosts", out,
                unaudited="the binary ghosts t_k are drawn from their closed form to illustrate the complex plane; "
                          "the figure reads no claim's results")


def _fig_radius_vs_margin(results: dict[str, Result], out: Path) -> list[Path]:
    fig, axes = figure(2, 1, width=4.2, height=3.2)
    ax = axes[0]
    d = np.linspace(-5, 5, 400)
    line = ax.plot(d, np.sqrt(d**2 + np.pi**2), color=THEORY, label=r"theory $\sqrt{\delta^2+\pi^2}$")[0]
    threshold(ax, math.pi, r"$\pi$ (min, $\delta=0$)", vertical=False)
    r = results.get("sao2026.binary_radius_exact")
    if r is not None and "delta" in r.arrays:
        scale = np.abs(r.arrays["delta_a"])
        # the line is ρ*·|Δa| against δ: the claim's per-instance ρ* scaled by each instance's |Δa|
        draws(line, "sao2026.binary_radius_exact:ρ* = |nearest zero of F| (certified root finding), per instance",
              at=r.arrays["delta"], y=lambda v: np.asarray(v) * scale)
        ax.plot(r.arrays["delta"], r.arrays["rho_roots"] * scale, "o", color=SIM, mfc="none", label="nearest zero (root finding)")
        ax.plot(r.arrays["delta"], r.arrays["rho_taylor"] * scale, ".", color=ACCENT, label="JAX jet series (Prony)")
    ax.set_xlabel(r"logit gap $\delta$")
    ax.set_ylabel(r"$\rho^*\,|\Delta a|$")
    ax.set_title("binary radius vs margin")
    ax.legend()
    ax = axes[1]
    s = results.get("sao2026.scalar_logistic_vs_curvature")
    dd = np.linspace(0, 12, 200)
    ax.semilogy(dd, T.logistic_radius(dd), color=THEORY, label=r"Taylor radius $\sqrt{\delta^2+\pi^2}$")
    ax.semilogy(dd, T.logistic_inverse_curvature(dd), color=PALETTE[2], label=r"$1/f''(\delta)$")
    ax.semilogy(dd, 2 * T.logistic_inverse_curvature(dd), color=PALETTE[2], ls="--", label=r"$2/f''(\delta)$")
    if s is not None and "delta0" in s.arrays:
        ax.semilogy(s.arrays["delta0"], s.arrays["inv_curvature_jax"], "o", color=SIM, mfc="none",
                    label="1/f'' by jax.grad twice")
        ax.semilogy(s.arrays["delta0"], s.arrays["radius_series"], "s", color=SIM, mfc="none",
                    label="radius of the Taylor series")
    threshold(ax, 10.0, r"$\delta=10$")
    ax.set_xlabel(r"margin $\delta$")
    ax.set_title("scalar logistic: radius vs curvature scale")
    ax.legend(fontsize=7)
    return save(fig, "softmax_radius_radius_vs_margin", out)


def _fig_rsweeps(budget: Budget, out: Path) -> list[Path]:
    sw = ex.rsweeps(budget)
    grid = sw["r"]
    archs = [str(a) for a in np.asarray(sw["archs"])]
    fig, axes = figure(2, 1, width=4.4, height=3.3)
    for i, name in enumerate(archs):
        ratio, acc = sw[f"{name}.ratio"], sw[f"{name}.test_acc"]
        c = PALETTE[i % len(PALETTE)]
        # the legend of the right panel names the colours of both panels
        axes[0].loglog(grid, np.where(np.isfinite(ratio[0]), ratio[0], np.nan), "-o", color=c, ms=2.5)
        axes[1].semilogx(grid, acc[0], "-o", color=c, ms=2.5, label=f"{name} (gradient)")
        axes[1].semilogx(grid, one_step.linearized_floor(sw, name)[0], ":", color=c, lw=1)  # steplab's linearized floor
        for j in range(1, ratio.shape[0]):
            axes[0].loglog(grid, np.where(np.isfinite(ratio[j]), ratio[j], np.nan), color=c, lw=0.6, alpha=0.6)
            axes[1].semilogx(grid, acc[j], color=c, lw=0.6, alpha=0.6)
    for ax in axes:
        threshold(ax, 1.0, "r = 1")
        ax.set_xlabel(r"normalized step $r=t/\rho_a$")
    # the two onset rules named in a legend: labels on their lines sat on the curves, which start near 1
    axes[0].axhline(2.0, color=MUTED, ls="--", lw=1, label="2× onset rule (steplab)")
    axes[0].axhline(1.1, color=MUTED, ls=":", lw=1, label="1.1 (authors' code, Fig. 8)")
    axes[0].legend(loc="upper left", fontsize=6.5)
    axes[0].set_ylabel("loss after / before one step")
    axes[1].set_ylabel("test accuracy after the step")
    axes[1].set_title("paper's criterion (dotted: linearized floor)")
    axes[1].set_ylim(top=1.1)  # room for the r = 1 label above the curves
    axes[0].set_title("one step from a trained model (thin: random directions)")
    axes[1].legend(fontsize=6.5)
    return save(fig, "softmax_radius_rsweeps", out,
                unaudited="the dotted linearized accuracy floors are steplab's reading, which no claim check "
                          "predicts (the dark-blue curves are the first architecture's measurements); the figure "
                          "reads no claim's results")


def _log_ticks(ax, values, axis: str) -> None:
    """Major ticks at the given values only, plain labels, no minor labels (no overlapping tick text)."""
    target = ax.xaxis if axis == "x" else ax.yaxis
    target.set_major_locator(FixedLocator(values))
    target.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    target.set_minor_locator(NullLocator())
    target.set_minor_formatter(NullFormatter())


def _fig_temperature(results: dict[str, Result], out: Path) -> list[Path]:
    r = results.get("sao2026.temperature_onset_spread")
    if r is None or "temperature" not in r.arrays:
        return []
    Tm, od, orr = r.arrays["temperature"], r.arrays["onset_distance"], r.arrays["onset_r"]
    temps = np.unique(Tm)
    fig, axes = figure(2, 1, width=3.8, height=3.1)
    for ax, vals, lab in ((axes[0], od, r"onset distance $t$"), (axes[1], orr, r"onset $r=t/\rho_a$")):
        ax.loglog(Tm, vals, "o", color=SIM, mfc="none", label="runs (seeds)")
        ax.loglog(temps, [np.median(vals[Tm == t]) for t in temps], "-", color=ACCENT, label="median over seeds")
        sd = np.std(np.log10(vals))
        ax.set_title(f"{lab}: sd log10 = {sd:.3f}")
        ax.set_xlabel("temperature T")
        ax.set_ylabel(lab)
        _log_ticks(ax, temps, "x")
        lo, hi = float(vals.min()), float(vals.max())
        _log_ticks(ax, [v for v in (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10) if lo / 1.5 <= v <= hi * 1.5], "y")
        ax.legend(fontsize=7)
    threshold(axes[1], 1.0, "r = 1", vertical=False)
    return save(fig, "softmax_radius_temperature", out)


def _fig_spike(budget: Budget, out: Path) -> list[Path]:
    res = ex.lr_spike(budget)
    tags = [str(t) for t in np.asarray(res["runs"])]
    authors = list(budget.pick(quick=(), full=S.ARCHGRID_NAMES))
    ncols = max(len(tags), len(authors))
    fig, grid = figure(ncols, 2 if authors else 1, width=3.4, height=3.0)
    grid = np.atleast_2d(grid)
    axes = list(grid[0][:len(tags)])
    for ax in list(grid[0][len(tags):]) + (list(grid[1][len(authors):]) if authors else []):
        ax.set_axis_off()  # a row shorter than the other
    for ax, arch in zip(grid[1] if authors else [], authors):  # second row: Table 1's setting (the authors' script)
        ag = ex.archgrid(budget, arch=arch)
        acc, mode = ag["spiked.test_acc"], ag["spiked.mode"]
        steps = np.arange(acc.shape[1])
        for code, (name, c) in enumerate(zip(MODES, (SIM, ACCENT, PALETTE[2]))):
            sel = acc[mode == code]
            ax.plot(steps, np.median(sel, axis=0), color=c)
            ax.fill_between(steps, sel.min(axis=0), sel.max(axis=0), color=c, alpha=0.15, lw=0)
            ax.plot([steps[-1]], [spike.TABLE1[arch][code] / 100], "*", color=c, ms=7)  # Table 1's median
        ax.plot(steps, np.median(ag["calm.test_acc"], axis=0), ":", color=MUTED, lw=1)
        ax.axvline(50, color=MUTED, ls="--", lw=1)
        ax.set_title(f"authors' setting: {spike.TABLE1_NAMES[arch]}\n(star: Table 1; dotted: no spike)", fontsize=9)
        ax.set_xlabel("step (dashed: the spike)")
        ax.set_ylabel("test accuracy")
        ax.set_ylim(0, 1)
    for k, (ax, tag) in enumerate(zip(axes, tags)):
        acc, mode = res[f"{tag}.test_acc"], res[f"{tag}.mode"]
        steps = np.asarray(res["eval_step"])  # the steps whose test accuracy was recorded
        for code, (name, c) in enumerate(zip(MODES, (SIM, ACCENT, PALETTE[2]))):
            sel = acc[mode == code]
            # one legend (first panel) serves every panel: the same three modes in the same colours
            ax.plot(steps, np.median(sel, axis=0), color=c, label=name if k == 0 else None)
            ax.fill_between(steps, sel.min(axis=0), sel.max(axis=0), color=c, alpha=0.15, lw=0)
        # the spike is named on the x axis: a label at the line sat on the curves that keep their accuracy
        ax.axvline(int(res["spike_step"]), color=MUTED, ls="--", lw=1)
        name, eta = tag.rsplit("_", 1)
        ax.set_title(rf"{name}, base $\eta$ = {eta}, 10,000× spike")
        ax.set_xlabel("step (dashed: the spike)")
        ax.set_ylabel("test accuracy")
        ax.set_ylim(0, 1)
    axes[0].legend(fontsize=7)
    return save(fig, "softmax_radius_lr_spike", out)


def _fig_series_radius(results: dict[str, Result], out: Path) -> list[Path]:
    """Left: located radius R against the linearized ρ*, both over ρ_a (every bottleneck sample, every
    direction). Right: the order-n truncation error at t = r·R, normalized per sample, against n (series with
    entire logits, where R is certified to be the nearest singularity)."""
    a = results.get("sao2026.series_radius_is_located_ghost")
    b = results.get("sao2026.truncation_error_rate")
    if a is None or "R" not in a.arrays or b is None or "trunc_err" not in b.arrays:
        return []
    fig, axes = figure(2, 1, width=4.2, height=3.4)
    ax = axes[0]
    R, rs, ra, kind = (a.arrays[k] for k in ("R", "rho_star", "rho_a", "kind"))
    for k, (name, c) in enumerate(zip(ex.DIR_KINDS, (SIM, ACCENT, THEORY))):
        sel = kind == k
        ax.loglog(rs[sel] / ra[sel], R[sel] / ra[sel], "o", color=c, mfc="none", ms=4, label=name)
    lim = [1.0, max(float(np.max(rs / ra)), float(np.max(R / ra))) * 1.2]
    ax.loglog(lim, lim, color=MUTED, lw=0.8, label=r"$R=\rho^*$")
    ax.axhline(1.0, color=MUTED, ls="--", lw=1, label=r"$R=\rho_a$")  # in the legend: the diagonal crossed its label
    ax.set_xlabel(r"linearized radius $\rho^*/\rho_a$")
    ax.set_ylabel(r"located radius $R/\rho_a$")
    ax.set_title("radius of the nonlinear line loss")
    ax.legend(fontsize=7)
    ax = axes[1]
    err, r_grid, orders = b.arrays["trunc_err"], b.arrays["trunc_r"], b.arrays["orders"]
    if "entire" in b.arrays:  # the series whose located zero is certified to be the nearest singularity
        err = err[np.asarray(b.arrays["entire"], dtype=bool)]
    for j, (r, c) in enumerate(zip(r_grid, PALETTE)):
        le = np.log(err[:, j, :])
        norm = np.exp(le - le[:, len(orders) // 2][:, None])  # every sample's curve through 1 at n = N/2
        ax.semilogy(orders, np.median(norm, axis=0), "-o", color=c, ms=3, label=f"r = {r:g}")
        ax.semilogy(orders, float(r) ** (orders - orders[len(orders) // 2]), ":", color=c, lw=1)
    ax.set_xlabel("Taylor order n")
    ax.set_ylabel("truncation error (median, normalized at n = N/2)")
    ax.set_title(r"error $\propto r^n$ (dotted), $t=rR$, entire logits")
    ax.legend(fontsize=7)
    return save(fig, "softmax_radius_series_radius", out,
                unaudited="the dotted guides draw the leading law r^n (slope log r), while the checks predict log r "
                          "plus the slope of the 1/n factor; the dark-blue markers are measured radii")


def _fig_hessian_scale(results: dict[str, Result], out: Path) -> list[Path]:
    """App. 5.4-5.5: τ_H/ρ_a and the loss-inflation onset per random direction and stage; the crossover margin."""
    a = results.get("sao2026.hessian_scale_exceeds_rho_a")
    b = results.get("sao2026.loss_inflation_at_rho_a_not_hessian")
    c = results.get("sao2026.crossover_margin_eq48")
    if a is None or b is None or c is None or "ratio" not in a.arrays or "onset" not in b.arrays:
        return []
    fig, axes = figure(2, 1, width=4.0, height=3.2)
    ax = axes[0]
    ratio, onset = a.arrays["ratio"], b.arrays["onset"][:, 1:]
    names = ("early", "middle", "late")
    for k in range(ratio.shape[0]):
        jitter = np.linspace(-0.12, 0.12, ratio.shape[1])
        ax.semilogy(k + jitter, ratio[k], "o", color=PALETTE[2], mfc="none", ms=4,
                    label=r"$\tau_H/\rho_a=(2/v^\top Hv)/\rho_a$" if k == 0 else None)
        ax.semilogy(k + jitter[:onset.shape[1]] + 0.3, onset[k], "s", color=SIM, mfc="none", ms=4,
                    label=r"onset $r$ (loss ratio $\geq 2$)" if k == 0 else None)
    threshold(ax, 1.0, r"$r=1$ ($\rho_a$)", vertical=False)
    ax.set_xticks(range(ratio.shape[0]), [f"{n}\n({s} steps)" for n, s in zip(names, a.arrays["stages"])])
    ax.set_xlim(-0.5, ratio.shape[0] - 0.3)
    ax.set_ylim(0.3, 3 * float(ratio.max()))
    ax.set_ylabel(r"step in units of $\rho_a$")
    ax.set_title("random directions, linear classifier (App. 5.4)")
    ax.legend(fontsize=7, loc="upper left")
    ax = axes[1]
    q = np.geomspace(4.0, 2e4, 300)
    line = ax.semilogx(q, T.hessian_crossover_margin(2 * q / math.pi), color=THEORY,
                       label=r"theory $\delta^*=2\,\mathrm{arccosh}\sqrt{Q/4}$")[0]
    draws(line, "sao2026.crossover_margin_eq48:crossover margin δ* (bisection on autodiff τ_H vs ρ_a) vs 2 arccosh "
                "√(π|Δ|/8)", at=c.arrays["q"])
    ax.semilogx(c.arrays["q"], c.arrays["measured"], "o", color=SIM, mfc="none", label=r"bisection on $\tau_H=\rho_a$ (JAX)")
    threshold(ax, 4.0, r"$Q=4$: no crossover below")
    ax.set_xlabel(r"$Q=\pi|\Delta|/2$")
    ax.set_ylabel(r"crossover margin $\delta^*$")
    ax.set_title("Hessian-to-ghost crossover (eqs. 45-48)")
    ax.legend(fontsize=7, loc="lower right")
    return save(fig, "softmax_radius_hessian_scale", out)


def make(results: dict[str, Result], out: Path, budget: Budget) -> list[Path]:
    """All softmax_radius figures from the claims' arrays and the cached experiments at ``budget``."""
    out = Path(out)
    paths = []
    paths += _fig_ghosts(out)
    paths += _fig_radius_vs_margin(results, out)
    paths += _fig_series_radius(results, out)
    paths += _fig_rsweeps(budget, out)
    paths += _fig_temperature(results, out)
    paths += _fig_hessian_scale(results, out)
    paths += _fig_spike(budget, out)
    return paths
