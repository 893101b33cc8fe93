"""Figures for the noisy-quadratic topic, and the overlay of a user's logged run.

Everything drawn comes from the claims' results or the topic's experiments (``paper_checks.noisy_quadratic.experiments``,
cached); closed forms from :mod:`theory.noisy_quadratic` and :mod:`theory.nqm`. Nothing here simulates.

``python -m figures.noisy_quadratic overlay run.csv [--out DIR]`` is ``steplab overlay`` (:mod:`figures._overlay`):
the noisy quadratic model fitted to a logged run with standard errors (:mod:`theory.noisy_quadratic_fit`), drawn over
the log.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

import theory.noisy_quadratic as th
import theory.nqm as tn
from figures import _overlay
from figures._style import ACCENT, MUTED, PALETTE, SIM, THEORY, figure, save, threshold
from paper_checks import Budget, Result, get_claim
from paper_checks.noisy_quadratic import experiments as E


def _plain_minor(ax) -> None:
    """No labels on minor log ticks (short log ranges would crowd them)."""
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.yaxis.set_minor_formatter(NullFormatter())


def _claim_result(results: dict[str, Result], claim_id: str, budget: Budget) -> Result:
    """The claim's Result from ``results`` when the caller has it, else the claim run on the cached experiments."""
    if results.get(claim_id) is not None:
        return results[claim_id]
    return get_claim(claim_id).run(budget)


def _schedules(results: dict[str, Result], out: Path, budget: Budget) -> list[Path]:
    """Mean loss of SGD under four schedules (markers) with the exact recursion (lines); the D2Z advantage over T."""
    ex = E.schedules(budget)
    fig, axes = figure(2, width=4.3, height=3.3)
    ax = axes[0]
    t = np.arange(ex["T"] + 1)
    for color, k, name in zip(PALETTE, range(4), ex["names"]):
        exact = tn.expected_loss(ex["lam"], tn.moment_recursion(ex["lam"], ex["etas"][k], 1.0, sigma_a=ex["sigma_a"]))
        ax.plot(t[1:], exact[1:], color=color, lw=1.2, label=f"{name} (η = {ex['peaks'][k]:.3g})")
        ax.plot(ex["t_rec"], ex["curve"][k].mean(axis=0), "o", ms=3, color=color, mfc="none")
    ax.set(xscale="log", yscale="log", xlabel="step", ylabel="E L", title="lines: exact recursion; markers: simulation")
    ax.legend(loc="lower left", fontsize=7)
    ax = axes[1]
    hz = E.horizons(budget)
    ax.plot(hz["T"], hz["cosine"] / hz["d2z"], "s-", color=THEORY, label="tuned cosine-to-10 % / tuned D2Z (exact)")
    r = _claim_result(results, "bergsma2025.d2z_beats_cosine", budget).arrays
    ax.errorbar(r["sim_T"], r["sim_ratio"], yerr=4 * r["sim_ratio_se"], fmt="o", color=SIM, mfc="none",
                label="simulated, paired runs (± 4 SE)")
    ax.axhline(1.0, color=MUTED, ls="--", lw=1)
    ax.set(xscale="log", xlabel="horizon T", ylabel="final-loss ratio", title="decay to zero wins more with T")
    _plain_minor(ax)
    if hz["T"].max() / hz["T"].min() < 30:  # the quick budget's horizons span about a decade: label them
        ax.set_xticks(hz["T"], labels=[f"{int(v)}" for v in hz["T"]])
    ax.legend(loc="upper left", fontsize=7)
    return save(fig, "noisy_quadratic_schedules", out,
                claims=["wen2024.wsd_plateau_excess", "bergsma2025.d2z_beats_cosine"])


def _merging(results: dict[str, Result], out: Path, budget: Budget) -> list[Path]:
    """Per-mode excess loss of the merged checkpoints, the WSD run they emulate and the constant run; the gap on
    curved modes against eta*lambda*W."""
    r = _claim_result(results, "tian2025.merged_loss_vs_decay", budget).arrays
    fig, axes = figure(2, width=4.3, height=3.3)
    ax = axes[0]
    lam = r["lam"]
    for color, key, label in ((MUTED, "constant", "constant (last checkpoint)"), (ACCENT, "wsd", "WSD, 20 % cooldown"),
                              (SIM, "merged", "merged last 20 %")):
        ax.plot(lam, 0.5 * lam * r[f"exact_{key}"], color=color, lw=1.2, label=label)
        ax.plot(lam, 0.5 * lam * r[f"mode_m2_{key}"], "o", ms=2.5, color=color, mfc="none")
    ax.set(xscale="log", yscale="log", xlabel="curvature λ", ylabel="½ λ E x²",
           title="lines: exact; markers: simulation")
    _plain_minor(ax)
    ax.legend(loc="lower right", fontsize=7)
    ax = axes[1]
    ex = E.merging(budget)
    x = E.MERGE_ETA * ex["lam"][1:] * E.MERGE_WINDOW
    gap2 = (ex["merged"][:, 1:] - ex["decayed"][:, 1:]) ** 2
    exact = np.sqrt(th.merge_error_variance(ex["lam"][1:], E.MERGE_ETA, ex["checkpoints"], ex["weights"], E.MERGE_T))
    ax.plot(x, np.sqrt(gap2.mean(axis=0)), "o", color=SIM, mfc="none", label="simulation (RMS)")
    ax.plot(x, exact, color=THEORY, label="exact")
    ax.plot(x, exact[0] * x / x[0], color=MUTED, ls="--", label="slope 1")
    ax.set(xscale="log", yscale="log", xlabel="η λ W", ylabel="RMS(merged − decayed)", title="curved modes")
    _plain_minor(ax)
    ax.set_xticks(x[::2], labels=[f"{v:.2g}" for v in x[::2]])  # the data span less than a decade: one 10^k at most
    ax.legend(loc="upper left", fontsize=7)
    return save(fig, "noisy_quadratic_merging", out,
                claims=["tian2025.merged_loss_vs_decay", "steplab.merging_error_grows_with_curvature_window"])


def _ema(results: dict[str, Result], out: Path, budget: Budget) -> list[Path]:
    """The EMA variance ratio as a surface over (alpha, eta*lambda), with the measured points."""
    ex = E.averaging(budget)
    fig, axes = figure(2, width=4.3, height=3.3)
    ax = axes[0]
    alphas = np.linspace(0.02, 0.98, 60)
    hs = np.linspace(0.02, 1.98, 60)
    Z = np.array([[th.ema_variance_ratio(a, h, 1.0) for a in alphas] for h in hs])
    cs = ax.contourf(alphas, hs, Z, levels=np.linspace(0, 1, 11), cmap="viridis")
    fig.colorbar(cs, ax=ax, label="Var(EMA)/Var(x)")
    ax.plot(ex["alphas"], np.full(ex["alphas"].size, E.EMA_ETA * E.AVG_LAM), "o", color="white", mec="black",
            label="measured points")
    ax.set(xlabel="α", ylabel="η λ", title="stationary variance ratio")
    ax.legend(loc="upper right", fontsize=7)
    ax = axes[1]
    ratio = ex["ema_m2_z"] / ex["ema_m2_x"]
    a_fine = np.linspace(0.02, 0.5, 80)
    ax.plot(a_fine, [th.ema_variance_ratio(a, E.EMA_ETA, E.AVG_LAM) for a in a_fine], color=THEORY, label="theory")
    ax.plot(a_fine, a_fine / (2 - a_fine), color=MUTED, ls="--", label="α/(2 − α) (i.i.d.)")
    ax.errorbar(ex["alphas"], ratio.mean(axis=1), yerr=ratio.std(axis=1) / np.sqrt(ratio.shape[1]), fmt="o",
                color=SIM, mfc="none", label="simulation")
    ax.set(xlabel="α", ylabel="Var(EMA)/Var(x)", title=f"η λ = {E.EMA_ETA * E.AVG_LAM:g}")
    ax.legend(loc="lower right", fontsize=7)
    return save(fig, "noisy_quadratic_ema", out, claims=["morales2024.ema_variance_ratio"])


def _weight_decay(results: dict[str, Result], out: Path, budget: Budget) -> list[Path]:
    """Angle per step and norm over time in the random-walk model, with the equilibrium predictions."""
    ex = E.sphere(budget)
    fig, axes = figure(2, width=4.3, height=3.3)
    for ax, key, label in ((axes[0], "angle", "angle per step (rad)"), (axes[1], "norm", "‖w‖")):
        for color, (eta, wd, mom), series in zip(PALETTE[1:], E.WD_POINTS, ex[f"hb_{key}"]):
            pred = th.wd_angular_update(eta, wd, mom) if key == "angle" else th.wd_equilibrium_norm(eta, wd, 1.0, mom)
            ax.plot(ex["t_rec"], series.mean(axis=0), color=color, lw=1, label=f"heavy ball α = {mom:g}")
            ax.axhline(pred, color=color, ls="--", lw=0.8)
        eta, wd = E.SIGN_POINT
        pred = th.sign_wd_angular_update(eta, wd) if key == "angle" else th.sign_wd_equilibrium_norm(eta, wd, ex["d"])
        ax.plot(ex["t_rec"], ex[f"sign_{key}"].mean(axis=0), color=ACCENT, lw=1, label="sign, decoupled")
        ax.axhline(pred, color=ACCENT, ls="--", lw=0.8)
        ax.set(xlabel="step", ylabel=label, title="dashed: equilibrium predictions")
    # one legend below both panels: the settled curves leave no corner free in the norm panel
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncol=3, fontsize=7)
    return save(fig, "noisy_quadratic_weight_decay", out, claims=["kosson2023.equilibrium_angle_and_norm"])


def _lion(results: dict[str, Result], out: Path, budget: Budget) -> list[Path]:
    """Lion's coordinates inside the box (decaying step) and the hover amplitude against eta."""
    ex = E.lion(budget)
    nc = ex["n_const"]
    target = th.box_minimizer(ex["H"], ex["c"], 1.0 / E.LION_WD)
    fig, axes = figure(2, width=4.3, height=3.3)
    ax = axes[0]
    t = np.arange(1, E.LION_T + 1)
    for j, color in zip(range(ex["path"].shape[-1]), PALETTE):
        ax.plot(t, ex["path"][nc, :, j], color=color, lw=1, label="Lion's coordinates x_j" if j == 0 else None)
        ax.axhline(target[j], color=color, ls=":", lw=0.8, label="box solution (L-BFGS-B)" if j == 0 else None)
    ax.legend(loc="center right", fontsize=7)
    threshold(ax, 1 / E.LION_WD, "box 1/λ", vertical=False)
    threshold(ax, -1 / E.LION_WD, "−1/λ", vertical=False)
    ax.set(xscale="log", xlabel="step", ylabel="x_j", ylim=(-1.3, 1.3), title="decaying η; dotted: L-BFGS-B box solution")
    ax = axes[1]
    eta = ex["etas"][:nc, 0]
    hover = np.abs(ex["path"][:nc, -E.LION_T // 4:] - target).max(axis=(1, 2))
    ax.plot(eta, hover, "o", color=SIM, mfc="none", label="max ‖x_t − x*‖∞, last quarter")
    ax.plot(eta, hover[0] * eta / eta[0], color=THEORY, label="∝ η")
    ax.plot(eta, hover[0] * np.sqrt(eta / eta[0]), color=MUTED, ls="--", label="∝ √η")
    ax.set(xscale="log", yscale="log", xlabel="η", ylabel="hover amplitude", title="constant η")
    # less than a decade on each axis: label the 1-2-5 ticks, or each axis shows a single number
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
        axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        axis.set_minor_formatter(NullFormatter())
    ax.legend(loc="upper left", fontsize=7)
    return save(fig, "noisy_quadratic_lion", out, claims=["chen2023.box_minimizer", "steplab.lion_hover_order_eta"])


def make(results: dict[str, Result], out: Path, budget: Budget) -> list[Path]:
    """Every figure of the topic (claim results in ``results``; other data from the topic's experiments)."""
    paths: list[Path] = []
    for draw in (_schedules, _merging, _ema, _weight_decay, _lion):
        paths += draw(results, out, budget)
    return paths


# ----------------------------------------------------------------------------- a user's run
# the overlay lives in figures._overlay (``steplab overlay``); these names keep the older entry point working
read_log = _overlay.read_log
overlay = _overlay.overlay


def main(argv: list[str] | None = None) -> int:
    """``python -m figures.noisy_quadratic overlay run.csv [options]``: the same command as ``steplab overlay``."""
    p = argparse.ArgumentParser(prog="python -m figures.noisy_quadratic", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    ov = _overlay.add_arguments(sub.add_parser("overlay", help="the same as steplab overlay: fit the noisy quadratic "
                                               "model to a logged run and draw it", description=_overlay.DESCRIPTION))
    args = p.parse_args(argv)
    return _overlay.run(args, ov)


if __name__ == "__main__":
    sys.exit(main())
