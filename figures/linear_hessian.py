"""Figures of topic ``linear_hessian`` (claims ``hessian2026.*``): spectra, the class law, the max-LR law,
sharpening along GD and its staircase, the gauge orbit near the balanced point, the shed assumptions, the
scale laws beyond whitened inputs and the robustness count.

Everything drawn comes from the claims' results (their ``arrays``, computed from the
``linear_hessian.*`` experiments) and from closed forms of :mod:`theory.linear_hessian`; nothing here
simulates.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from figures import plot
from paper_checks import Budget, Result
from theory import linear_hessian as T

P = "hessian2026."


def spectra(r: Result, out: Path) -> list[Path]:
    pred, meas, case, depth = (r.arrays[k] for k in ("predicted", "measured", "case", "depth"))
    shown = []
    for L in sorted(set(depth.tolist())):
        # per depth, the case with the most non-zero eigenvalues
        cands = [c for c in range(len(depth)) if depth[c] == L]
        shown.append(max(cands, key=lambda c: int(np.sum(pred[case == c] > 1e-12 * pred[case == c].max()))))
    fig, axes = plot.figure(len(shown), 1, width=2.4, height=2.8)
    axes = np.atleast_1d(axes)
    for j, (ax, c) in enumerate(zip(axes, shown)):
        p, m = np.sort(pred[case == c])[::-1], np.sort(meas[case == c])[::-1]
        k = np.arange(1, p.size + 1)
        # one legend (first panel) for the two series every panel shares
        (closed,) = ax.step(k, p, where="mid", color=plot.THEORY, label="closed form" if j == 0 else None)
        plot.draws(closed, "hessian2026.exact_spectrum:every eigenvalue / predicted lambda_max", at=k,
                   y=lambda v, c=c: np.sort(np.asarray(v, dtype=float)[case == c])[::-1])  # this case's, sorted
        ax.plot(k, m, "o", color=plot.SIM, ms=2.5, label="jax.hessian" if j == 0 else None)
        ax.set_title(f"L = {depth[c]}, P = {p.size}")
        ax.set_xlabel("eigenvalue index")
        ax.set_ylim(-0.05, 1.1)
    axes[0].set_ylabel(r"eigenvalue / $\lambda_{\max}$")
    axes[0].legend(loc="lower left")  # the spectra sit at the top; the lower left is empty in every panel
    worst = float(np.max(np.abs(meas - pred)))
    fig.suptitle(f"every Hessian eigenvalue at a balanced global minimum (max error {worst:.0e} of $\\lambda_{{\\max}}$)")
    return plot.save(fig, "linear_hessian_spectrum", out)


def class_law(r_min: Result, r_gd: Result | None, out: Path) -> list[Path]:
    fig, ax = plot.figure(1, 1, width=4.8, height=3.4)
    pi, depth, meas = r_min.arrays["pi_max"], r_min.arrays["depth"], r_min.arrays["measured"]
    grid = np.linspace(1 / 3 + 1e-3, 0.85, 200)
    for j, L in enumerate(sorted(set(depth.tolist()))):
        color = plot.PALETTE[j % len(plot.PALETTE)]
        law = ax.plot(grid, [T.class_sharpness([g, (1 - g) / 2, (1 - g) / 2], L) for g in grid], color=color, lw=1.2,
                      label=rf"$L={L}$")[0]
        sel = depth == L
        # the law depends on the largest proportion only: each depth's curve holds that depth's checked minima
        plot.draws(law, "hessian2026.class_law_at_minimum:lambda_max at the balanced minimum", at=pi[sel],
                   y=lambda v, sel=sel: np.asarray(v, dtype=float)[sel])
        ax.plot(pi[sel], meas[sel], "o", color=color, mfc="none", ms=6)
        if r_gd is not None:
            gsel = r_gd.arrays["depth"] == L
            ax.plot(r_gd.arrays["pi_max"][gsel], r_gd.arrays["measured"][gsel], "x", color=color, ms=6)
    ax.plot([], [], "-", color=plot.MUTED, label=r"$L\,\pi_{\max}^{1-1/L}$")
    ax.plot([], [], "o", color=plot.MUTED, mfc="none", label="balanced minimum")
    if r_gd is not None:
        ax.plot([], [], "x", color=plot.MUTED, label="after GD, small init")
    ax.set_xlabel(r"largest class proportion $\pi_{\max}$")
    ax.set_ylabel(r"sharpness $\lambda_{\max}$")
    ax.legend(fontsize=7, ncol=2, loc="upper left")
    ax.set_title("the sharpness is set by the largest class")
    return plot.save(fig, "linear_hessian_class_law", out)


def max_lr(r: Result, out: Path) -> list[Path]:
    ratio, loss, div, pair = (r.arrays[k] for k in ("ratio", "final_loss", "diverged", "pair"))
    pi_max, depth = r.arrays["pi_max"], r.arrays["depth"]
    fig, ax = plot.figure(1, 1, width=4.8, height=3.4)
    floor, ceil = 1e-33, 1e3
    for j in sorted(set(pair.tolist())):
        sel = pair == j
        y = np.where(div[sel], ceil, np.clip(np.nan_to_num(loss[sel], nan=ceil), floor, ceil))
        order = np.argsort(ratio[sel])
        k = np.flatnonzero(sel)[0]
        ax.plot(ratio[sel][order], y[order], "o:", color=plot.PALETTE[j % len(plot.PALETTE)], ms=5, lw=0.6,
                alpha=0.85, label=rf"$\pi_{{\max}}={pi_max[k]:.1f}$, $L={depth[k]}$")
    ax.set_yscale("log")
    ax.set_ylim(floor / 10, ceil * 10)
    # the threshold's label low on the line: at the top the jump to the diverged runs crosses it
    ax.axvline(1.0, color=plot.MUTED, ls="--", lw=1)
    ax.annotate(r"$\eta=\eta_c$", (1.0, 0.15), xycoords=("data", "axes fraction"), xytext=(3, 0),
                textcoords="offset points", color=plot.MUTED, fontsize=8)
    ax.axhline(ceil, color=plot.MUTED, lw=0.6, ls=":")
    ax.annotate("diverged", (0.02, ceil), xycoords=("axes fraction", "data"), xytext=(0, -10),
                textcoords="offset points", fontsize=7, color=plot.MUTED)
    ax.set_xlabel(r"step size $\eta/\eta_c$, $\eta_c=2/(L\pi_{\max}^{1-1/L})$")
    ax.set_ylabel("final training loss")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7)  # beside: the runs cross every region
    ax.set_title(r"GD from small init converges iff $\eta<\eta_c$")
    return plot.save(fig, "linear_hessian_max_lr", out)


def sharpening(r: Result, out: Path) -> list[Path]:
    a = r.arrays
    step = a["step"]
    fig, (ax, bx) = plot.figure(2, 1, width=4.0, height=3.2)
    ax.plot(step, a["aligned_theory"], color=plot.THEORY, lw=1.4, label=r"closed form $\Lambda(a(t))$")
    ax.plot(step, a["aligned"], "o", color=plot.SIM, ms=2.2, label="aligned init (Lanczos)")
    ax.plot(step, a["random"], "-", color=plot.PALETTE[2], lw=1.0, label="random init (Lanczos)")
    ax.plot(step, a["gauss_newton"], ":", color=plot.MUTED, lw=1.0, label="Gauss-Newton part only")
    lam0, lam_end = a["aligned_theory"][0], a["aligned_theory"][-1]
    ax.axhline(lam0, color=plot.MUTED, lw=0.6, ls="--")
    ax.axhline(lam_end, color=plot.MUTED, lw=0.6, ls="--")
    ax.set_yticks([0.0, 0.5, lam0, 1.0, lam_end])
    ax.set_yticklabels(["0", "0.5", r"$\sqrt{\pi_{\max}}$", "1", r"$2\sqrt{\pi_{\max}}$"])
    ax.set_xlabel("GD step")
    ax.set_ylabel(r"sharpness $\lambda_{\max}$")
    ax.legend(loc="lower right", fontsize=7)
    ax.set_title(r"$L=2$, $\pi=(.5,.3,.2)$, $\eta=0.2\,\eta_c$")
    s = a["singular_values"]
    for k in range(a["strengths"].shape[1]):
        bx.plot(step, a["strengths"][:, k] / s[k], color=plot.PALETTE[k], lw=1.2, label=rf"class {k + 1}: $a_{k + 1}/s_{k + 1}$")
    bx.semilogy(step, np.maximum(a["aligned_loss"], 1e-33) / a["aligned_loss"][0], color=plot.MUTED, lw=1.0,
                ls="--", label="loss / initial loss")
    bx.set_yscale("symlog", linthresh=1e-2)
    # the modes are learned within the first ~70 steps; the rest is the plateau at the minimum
    for axis in (ax, bx):
        axis.set_xlim(0, min(100, step[-1]))
    bx.set_xlabel("GD step")
    bx.set_ylabel("learned fraction")
    bx.legend(loc="center right", fontsize=7)
    bx.set_title("modes learned in order of class size")
    return plot.save(fig, "linear_hessian_sharpening", out)


def gauge(r: Result, out: Path) -> list[Path]:
    a = r.arrays
    fig, (ax, bx) = plot.figure(2, 1, width=3.6, height=3.0)
    for j, L in enumerate((2, 3)):
        if f"eps_l{L}" not in a:
            continue
        eps, rise = a[f"eps_l{L}"], a[f"rise_l{L}"]
        ax.loglog(eps, rise, "o", color=plot.PALETTE[j], label=rf"$L={L}$")
        slope = ax.loglog(eps, rise[0] * (eps / eps[0]) ** 2, "-", color=plot.PALETTE[j], lw=0.8)[0]
        plot.draws(slope, f"hessian2026.unbalanced_sharper:d log(lambda_max - lambda_bal) / d log eps, L = {L}", at=eps,
                   y=lambda s_, eps=eps, rise=rise: rise[0] * (eps / eps[0]) ** s_)  # the checked slope through rise[0]
    ax.loglog([], [], "-", color=plot.MUTED, label=r"slope 2")
    ax.set_xlabel(r"gauge scale $\epsilon$")
    ax.set_ylabel(r"$\lambda_{\max}-\lambda_{\max}^{\mathrm{bal}}$")
    ax.legend(loc="upper left", fontsize=7)
    ax.set_title("near the balanced point")
    bx.semilogy(a["far_gauge"] + np.linspace(-0.02, 0.02, a["far_gauge"].size), a["far_ratio"], "o",
                color=plot.SIM, label="gauged minimum")
    bx.axhline(1.0, color=plot.THEORY, lw=1, ls="--", label="balanced minimum")
    bx.set_xticks([0.3, 1.0])
    bx.set_xlabel(r"gauge scale $\epsilon$")
    bx.set_ylabel(r"$\lambda_{\max}/\lambda_{\max}^{\mathrm{bal}}$")
    bx.legend(loc="upper left", fontsize=7)
    bx.set_title("far from it")
    return plot.save(fig, "linear_hessian_gauge", out)


def shed(r: Result, out: Path) -> list[Path]:
    labels, values, kind = ([str(x) for x in r.arrays["labels"]], r.arrays["values"],
                            [str(x) for x in r.arrays["kind"]])
    color = {"theory": plot.THEORY, "shed": plot.SIM, "nonlinear": plot.PALETTE[2]}
    fig, ax = plot.figure(1, 1, width=6.4, height=3.6)
    x = np.arange(len(values))
    ax.bar(x, values, color=[color[k] for k in kind])
    for k, name in (("theory", "closed form (whitened, balanced)"), ("shed", "A1 or A2 shed"),
                    ("nonlinear", "tanh / ReLU")):
        ax.bar([0], [0], color=color[k], label=name)
    ax.axhline(values[0], color=plot.MUTED, ls="--", lw=1)
    ax.set_xticks(x)
    ax.set_xticklabels(labels, rotation=35, ha="right", fontsize=7)
    ax.set_yscale("log")
    ax.set_ylabel(r"$\lambda_{\max}$")
    ax.legend(loc="upper right", fontsize=7)
    ax.set_title(r"shedding assumptions one at a time ($\pi=(.5,.3,.2)$, $L=2$ unless stated)")
    for i, v in enumerate(values):
        ax.annotate(f"{v:.3g}", (i, v), xytext=(0, 2), textcoords="offset points", ha="center", fontsize=6)
    return plot.save(fig, "linear_hessian_shed", out)


def laws(r_means: Result | None, r_alpha: Result | None, out: Path) -> list[Path]:
    """The two scale laws: lambda_max against L r^(2/L) p_max (class means) and L alpha^(1/L) pi_max^(1-1/L)."""
    shown = [(r, name) for r, name in ((r_means, "means"), (r_alpha, "alpha")) if r is not None]
    fig, axes = plot.figure(len(shown), 1, width=3.4, height=3.2)
    axes = np.atleast_1d(axes)
    for ax, (r, name) in zip(axes, shown):
        a = r.arrays
        hi = 1.1 * max(a["predicted"].max(), a["measured"].max())
        ax.set_ylim(0, hi)
        diagonal = ax.plot([0, hi], [0, hi], color=plot.THEORY, lw=1, label="closed form")[0]
        # the abscissa is the prediction itself: on the diagonal, the check's values sit at x = predicted
        quantity = ("lambda_max at the balanced minimum (orthogonal class means)" if name == "means"
                    else "lambda_max at the balanced minimum (Sigma_xx = alpha I)")
        claim = "hessian2026.class_means_law" if name == "means" else "hessian2026.alpha_law"
        plot.draws(diagonal, f"{claim}:{quantity}", at=a["predicted"])
        for j, L in enumerate(sorted(set(a["depth"].tolist()))):
            sel = a["depth"] == L
            ax.plot(a["predicted"][sel], a["measured"][sel], "o", color=plot.PALETTE[j % len(plot.PALETTE)], ms=5,
                      mfc="none", label=rf"$L={L}$")
        # the most plausible wrong law on the same nets, drawn against the same abscissa
        L_, pm = a["depth"], a["pi_max"]
        if name == "means":
            rival = L_ * a["radius"] ** (2 / L_) * pm ** (1 - 1 / L_)
            rlabel = r"rival: whitened law at $\alpha=r^2$"
        else:
            rival = a["alpha"] * L_ * pm ** (1 - 1 / L_)
            rlabel = r"rival: linear in $\alpha$"
        ax.plot(a["predicted"], rival, "x", color=plot.MUTED, ms=5, label=rlabel)
        if name == "means":
            ax.set_xlabel(r"$L\,r^{2/L}\max_c p_c$")
            ax.set_title("orthogonal class means (not whitened)")
        else:
            ax.set_xlabel(r"$L\,\alpha^{1/L}\pi_{\max}^{1-1/L}$")
            ax.set_title(r"whitened, $\Sigma_{xx}=\alpha I$")
        ax.set_ylabel(r"$\lambda_{\max}$ (jax.hessian)")

        # below the panel: the data fill the diagonal, and the rivals' crosses scatter on both sides of it
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=4, fontsize=6)
    return plot.save(fig, "linear_hessian_scale_laws", out)


def staircase(r: Result, out: Path) -> list[Path]:
    """The top six eigenvalues along GD with the predicted plateaus drawn at the stage midpoints."""
    a = r.arrays
    top, stages, plateaus = a["top"], a["stages"], a["plateaus"]
    fig, (ax, bx) = plot.figure(2, 1, width=4.0, height=3.2)
    step = np.arange(top.shape[0])
    for k in range(6):
        ax.plot(step, top[:, k], color=plot.PALETTE[k % len(plot.PALETTE)], lw=1.0,
                label=rf"$\lambda_{k + 1}$" if k < 6 else None)
    bounds = np.concatenate([[0], (stages[:-1] + stages[1:]) // 2, [step[-1]]])
    for j, t in enumerate(stages):
        lo, hi = (bounds[j], bounds[j + 1])
        for i, v in enumerate(plateaus[j]):
            seg = ax.plot([max(lo, t - 8), min(hi, t + 8)], [v, v], color=plot.THEORY, lw=2.2, alpha=0.5,
                          solid_capstyle="butt")[0]
            plot.draws(seg, "hessian2026.sharpening_staircase:six largest eigenvalues at the middle of each stage",
                       at=[t], y=lambda p_, j=j, i=i: np.asarray(p_, dtype=float)[j, i])
    ax.plot([], [], color=plot.THEORY, lw=2.2, alpha=0.5, label="predicted plateau")
    ax.set_xlabel("GD step")
    ax.set_ylabel("top Hessian eigenvalues")
    ax.legend(loc="lower right", fontsize=6, ncol=2)
    ax.set_title(r"staircase, $\pi=(.6,.3,.1)$, init $10^{-12}$")
    s = a["singular_values"]
    for k in range(a["strengths"].shape[1]):
        bx.plot(step, a["strengths"][:, k] / s[k], color=plot.PALETTE[k], lw=1.2, label=rf"$a_{k + 1}/s_{k + 1}$")
    for t in stages:
        bx.axvline(t, color=plot.MUTED, lw=0.6, ls=":")
    bx.set_xlabel("GD step")
    bx.set_ylabel("learned fraction")
    bx.legend(loc="center right", fontsize=7)
    bx.set_title("one class per stage (dotted: stage midpoints)")
    return plot.save(fig, "linear_hessian_staircase", out)


def robustness(r: Result, out: Path, factor: float) -> list[Path]:
    """lambda_max / law per relaxation on a log axis, with the robustness band and the Gauss-Newton predictions."""
    labels = [str(x) for x in r.arrays["labels"]]
    ratio, pred = r.arrays["ratio"], r.arrays["predicted_ratio"]
    fig, ax = plot.figure(1, 1, width=5.2, height=3.2)
    x = np.arange(len(labels))
    ax.axhspan(1 / factor, factor, color=plot.THEORY, alpha=0.15, label=f"within {factor:g}x of the law")
    ax.axhline(1.0, color=plot.THEORY, lw=1)
    ax.semilogy(x, ratio, "o", color=plot.SIM, ms=6, label="jax.hessian")
    ok = np.isfinite(pred)
    ax.semilogy(x[ok], pred[ok], "x", color=plot.PALETTE[2], ms=8, label="Gauss-Newton prediction")
    ax.set_xticks(x)
    ax.set_xticklabels(labels, rotation=30, ha="right", fontsize=7)
    ax.set_ylabel(r"$\lambda_{\max}/(L\pi_{\max}^{1-1/L})$")
    ax.legend(loc="upper right", fontsize=7)
    inside = int(np.sum(np.abs(np.log(ratio)) <= np.log(factor)))
    ax.set_title(f"robust in {inside} of {len(labels)} relaxations (abstract: 'most')")
    return plot.save(fig, "linear_hessian_robustness", out,
                     unaudited="the Gauss-Newton predictions are per-relaxation ratios that no numeric check holds: "
                               "the claim counts the relaxations inside the band; the law is the guide at 1")


def trend(r: Result, out: Path) -> list[Path]:
    """Paired slopes of lambda_max on pi_max per relaxation (markers, 3-SE bars) over the whitened law's slope (line)."""
    from paper_checks.linear_hessian import experiments as E
    labels = [str(x) for x in r.arrays["labels"]]
    slope, se = r.arrays["slope"], r.arrays["se"]
    law = [float(np.polyfit(v, [T.class_sharpness(E.proportions(E.counts_for(p)), 2) for p in v], 1)[0])
           for v in (E.TREND_PI, E.TREND_PI, E.NONLIN_PI, E.NONLIN_PI)]
    fig, ax = plot.figure(1, 1, width=5.2, height=3.4)
    x = np.arange(len(labels))
    ax.plot(x, law, "-", color=plot.THEORY, label=r"whitened law: slope of $2\sqrt{\pi_{\max}}$")
    ax.errorbar(x, slope, yerr=3 * se, fmt="o", color=plot.SIM, mfc="none", capsize=3,
                label="paired GD runs (± 3 SE)")
    ax.axhline(0.0, color=plot.MUTED, ls="--", lw=1, label="no trend")
    ax.set_xticks(x)
    ax.set_xticklabels(labels, fontsize=8)
    ax.set(ylabel=r"slope of $\lambda_{\max}$ in $\pi_{\max}$", ylim=(-0.3, 1.8),
           title="the class law's direction survives every relaxation")
    ax.legend(loc="upper center", fontsize=7, ncol=2)
    return plot.save(fig, "linear_hessian_trend", out, claims=["steplab.class_law_trend_under_relaxations"],
                     unaudited="the whitened law's slope per relaxation is a guide to the direction; the check holds "
                               "only the sign of each paired slope, not its size")


def make(results: dict[str, Result], out: Path, budget: Budget) -> list[Path]:
    """Every ``linear_hessian`` figure from the ``hessian2026.*`` results (claims absent from ``results`` are skipped)."""
    out = Path(out)
    paths: list[Path] = []
    get = results.get
    if get(P + "exact_spectrum") is not None:
        paths += spectra(results[P + "exact_spectrum"], out)
    if get(P + "class_law_at_minimum") is not None:
        paths += class_law(results[P + "class_law_at_minimum"], get(P + "class_law_after_gd"), out)
    if get(P + "max_lr_law") is not None:
        paths += max_lr(results[P + "max_lr_law"], out)
    if get(P + "progressive_sharpening") is not None:
        paths += sharpening(results[P + "progressive_sharpening"], out)
    if get(P + "unbalanced_sharper") is not None:
        paths += gauge(results[P + "unbalanced_sharper"], out)
    if get(P + "shed_assumptions") is not None:
        paths += shed(results[P + "shed_assumptions"], out)
    if get(P + "class_means_law") is not None or get(P + "alpha_law") is not None:
        paths += laws(get(P + "class_means_law"), get(P + "alpha_law"), out)
    if get(P + "sharpening_staircase") is not None:
        paths += staircase(results[P + "sharpening_staircase"], out)
    if get("steplab.class_law_relaxation_count") is not None:
        from paper_checks.linear_hessian.laws import ROBUST_FACTOR
        paths += robustness(results["steplab.class_law_relaxation_count"], out, ROBUST_FACTOR)
    if get("steplab.class_law_trend_under_relaxations") is not None:
        paths += trend(results["steplab.class_law_trend_under_relaxations"], out)
    return paths
