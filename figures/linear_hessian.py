"""Figures for the Hessian spectra of deep linear networks (claims ``hessian2026.*``)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from figures._style import ACCENT, MUTED, PALETTE, SIM, THEORY, figure, save, threshold
from paper_checks import Result
from theory import linear_hessian as T


def _spectra(r: Result, out: Path) -> list[Path]:
    pred, meas, case, depth = (r.arrays[k] for k in ("predicted", "measured", "case", "depth"))
    shown = []
    for L in sorted(set(depth.tolist())):
        # per depth, the case with the most non-zero eigenvalues
        cands = [c for c in range(len(depth)) if depth[c] == L]
        shown.append(max(cands, key=lambda c: int(np.sum(pred[case == c] > 1e-12 * pred[case == c].max()))))
    fig, axes = figure(len(shown), 1, width=2.6, height=2.8)
    for ax, c in zip(np.atleast_1d(axes), shown):
        p, m = np.sort(pred[case == c])[::-1], np.sort(meas[case == c])[::-1]
        k = np.arange(1, p.size + 1)
        ax.step(k, p, where="mid", color=THEORY, label="closed form")
        ax.plot(k, m, "o", color=SIM, ms=2.5, label="jax.hessian")
        ax.set_title(f"L = {depth[c]}, P = {p.size}")
        ax.set_xlabel("eigenvalue index")
        ax.set_ylim(-0.05 * p.max(), 1.1 * p.max())
    np.atleast_1d(axes)[0].set_ylabel("Hessian eigenvalue")
    np.atleast_1d(axes)[0].legend(loc="upper right")
    fig.suptitle(f"every eigenvalue at a balanced global minimum (max rel. error {r.measured:.1e})")
    return save(fig, "linear_hessian_spectrum", out)


def _class_law(r_min: Result, r_gd: Result | None, out: Path) -> list[Path]:
    fig, ax = figure(1, 1, width=4.8, height=3.4)
    pi, depth, meas = r_min.arrays["pi_max"], r_min.arrays["depth"], r_min.arrays["measured"]
    grid = np.linspace(1 / 3, 0.85, 200)
    for j, L in enumerate(sorted(set(depth.tolist()))):
        color = PALETTE[j % len(PALETTE)]
        ax.plot(grid, [T.class_sharpness([g, (1 - g) / 2, (1 - g) / 2], L) for g in grid], color=color, lw=1.2,
                label=rf"$L={L}$: $L\pi_{{\max}}^{{1-1/L}}$")
        sel = depth == L
        ax.plot(pi[sel], meas[sel], "o", color=color, mfc="none", ms=6)
        if r_gd is not None:
            gsel = r_gd.arrays["depth"] == L
            ax.plot(r_gd.arrays["pi_max"][gsel], r_gd.arrays["measured"][gsel], "x", color=color, ms=6)
    ax.plot([], [], "o", color=MUTED, mfc="none", label="balanced minimum (autodiff)")
    if r_gd is not None:
        ax.plot([], [], "x", color=MUTED, label="after GD from small init")
    ax.set_xlabel(r"largest class proportion $\pi_{\max}$")
    ax.set_ylabel(r"sharpness $\lambda_{\max}$")
    ax.legend(fontsize=7, ncol=2)
    ax.set_title("sharpness is set by the largest class")
    return save(fig, "linear_hessian_class_law", out)


def _max_lr(r: Result, out: Path) -> list[Path]:
    ratio, loss, div, pair = (r.arrays[k] for k in ("ratio", "final_loss", "diverged", "pair"))
    fig, ax = figure(1, 1, width=4.6, height=3.2)
    floor, ceil = 1e-33, 1e3
    for j in sorted(set(pair.tolist())):
        sel = pair == j
        y = np.where(div[sel] > 0, ceil, np.clip(loss[sel], floor, ceil))
        order = np.argsort(ratio[sel])
        ax.plot(ratio[sel][order], y[order], "o-", color=PALETTE[j % len(PALETTE)], ms=4, lw=0.8, alpha=0.85)
    ax.set_yscale("log")
    ax.set_ylim(floor / 10, ceil * 10)
    threshold(ax, 1.0, r"$\eta_c=2/\lambda_{\max}$")
    ax.axhline(ceil, color=MUTED, lw=0.6, ls=":")
    ax.annotate("diverged", (ax.get_xlim()[0], ceil), xytext=(4, 3), textcoords="offset points", fontsize=7, color=MUTED)
    ax.set_xlabel(r"step size $\eta/\eta_c$")
    ax.set_ylabel("final training loss")
    ax.set_title(r"GD converges iff $\eta<\eta_c$ (one line per $(\pi, L)$)")
    return save(fig, "linear_hessian_max_lr", out)


def _sharpening(r: Result, out: Path) -> list[Path]:
    depths = sorted(int(k.split("_l")[1]) for k in r.arrays if k.startswith("sharpness_l"))
    fig, axes = figure(len(depths), 1, width=3.6, height=3.0)
    for ax, L in zip(np.atleast_1d(axes), depths):
        step = r.arrays["step"]
        lam = r.arrays[f"sharpness_l{L}"]
        lam0, lam_end = r.arrays[f"theory_l{L}"]
        ax.plot(step[: lam.size], lam, "o-", color=SIM, ms=2.5, lw=1, label=r"$\lambda_{\max}$ (autodiff)")
        threshold(ax, lam_end, rf"$L\pi_{{\max}}^{{1-1/L}}={lam_end:.3f}$", vertical=False, color=THEORY)
        if L == 2:
            threshold(ax, lam0, rf"origin $\sqrt{{\pi_{{\max}}}}={lam0:.3f}$", vertical=False)
        ax2 = ax.twinx()
        ax2.semilogy(r.arrays["loss_step"], np.maximum(r.arrays[f"loss_l{L}"], 1e-33), color=ACCENT, lw=1)
        ax2.set_ylabel("loss", color=ACCENT)
        ax.set_xscale("symlog", linthresh=20)
        ax2.set_xscale("symlog", linthresh=20)
        ax.set_xlabel("GD step")
        ax.set_title(f"L = {L}, small init")
        ax.set_ylim(bottom=0)
    np.atleast_1d(axes)[0].set_ylabel("sharpness")
    np.atleast_1d(axes)[0].legend(loc="center right", fontsize=7)
    return save(fig, "linear_hessian_sharpening", out)


def _shed(r: Result, out: Path) -> list[Path]:
    labels, values = [str(x) for x in r.arrays["labels"]], r.arrays["values"]
    fig, ax = figure(1, 1, width=6.2, height=3.2)
    colors = [THEORY] + [SIM if ("gauge" in s or "Glorot" in s or "mixed" in s or "tanh" in s or "ReLU" in s)
                         else PALETTE[2] for s in labels[1:]]
    ax.bar(np.arange(len(values)), values, color=colors)
    ax.axhline(values[0], color=MUTED, ls="--", lw=1)
    ax.set_xticks(np.arange(len(values)))
    ax.set_xticklabels(labels, rotation=35, ha="right", fontsize=7)
    ax.set_yscale("log")
    ax.set_ylabel(r"$\lambda_{\max}$")
    ax.set_title("shedding assumptions one at a time\n"
                 r"($\pi=(.5,.3,.2)$, $L=2$; green: assumptions hold, red: one shed)")
    for i, v in enumerate(values):
        ax.annotate(f"{v:.2f}", (i, v), xytext=(0, 2), textcoords="offset points", ha="center", fontsize=6)
    return save(fig, "linear_hessian_shed", out)


def make(results: dict[str, Result], out: Path, *, budget: str, fresh: bool) -> list[Path]:
    """Spectra vs closed form, the class law, GD vs eta/eta_c, sharpening along training, the shed-assumption bars."""
    paths: list[Path] = []
    get = results.get
    if get("hessian2026.exact_spectrum") is not None:
        paths += _spectra(results["hessian2026.exact_spectrum"], out)
    if get("hessian2026.class_law_at_minimum") is not None:
        paths += _class_law(results["hessian2026.class_law_at_minimum"], get("hessian2026.class_law_after_gd"), out)
    if get("hessian2026.max_lr_law") is not None:
        paths += _max_lr(results["hessian2026.max_lr_law"], out)
    if get("hessian2026.progressive_sharpening") is not None:
        paths += _sharpening(results["hessian2026.progressive_sharpening"], out)
    if get("hessian2026.shed_assumptions") is not None:
        paths += _shed(results["hessian2026.shed_assumptions"], out)
    return paths
