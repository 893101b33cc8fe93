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
from figures.plot import draws
from paper_checks import Budget, Result, fit_slope, get_claim
from paper_checks.noisy_quadratic import experiments as E
from paper_checks.noisy_quadratic.weight_decay import start_cosine  # the claim's estimator: markers are its numbers


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
    (line,) = ax.plot(x, exact, color=THEORY, label="exact")
    draws(line, "steplab.merging_error_grows_with_curvature_window:mean-square gap E(x̄ − y_T)² per mode", at=x,
          y=np.sqrt)  # the line is the root of the checked mean square
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
    for j, color in zip(range(ex["path"].shape[-1]), PALETTE[1:]):  # simulated paths: not the theory colour
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
    (order,) = ax.plot(eta, hover[0] * eta / eta[0], color=THEORY, label="∝ η")
    draws(order, "steplab.lion_hover_order_eta:log-log slope of the hover amplitude", at=eta,
          y=lambda s: hover[0] * (eta / eta[0]) ** s)
    ax.plot(eta, hover[0] * np.sqrt(eta / eta[0]), color=MUTED, ls="--", label="∝ √η")
    ax.set(xscale="log", yscale="log", xlabel="η", ylabel="hover amplitude", title="constant η")
    # less than a decade on each axis: label the 1-2-5 ticks, or each axis shows a single number
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
        axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        axis.set_minor_formatter(NullFormatter())
    ax.legend(loc="upper left", fontsize=7)
    return save(fig, "noisy_quadratic_lion", out, claims=["chen2023.box_minimizer", "steplab.lion_hover_order_eta"])


def _sampled_momentum(results: dict[str, Result], out: Path, budget: Budget) -> list[Path]:
    """Tuned mean-square rates against kappa on Kidambi et al.'s sampled instance: SGD, heavy ball, Nesterov, ASGD with
    their fitted log-log slopes, the exact-gradient heavy ball as the rival; and each method's gain over SGD's best."""
    r = _claim_result(results, "kidambi2018.heavy_ball_no_faster_than_sgd", budget).arrays
    nag = _claim_result(results, "steplab.nesterov_accelerates_with_sampled_rows", budget).arrays
    kappa = r["kappa"]
    # (name, measured, theory, marker); the theory is the operator search at the claims' kappas (a search per kappa
    # costs seconds, so the lines join those points: the rates are power laws, straight on these axes)
    series = (("SGD", r["sgd"], r["sgd_theory"], "o"), ("heavy ball", r["heavy_ball"], r["heavy_ball_theory"], "s"),
              ("Nesterov", nag["nesterov"], nag["theory"], "^"), ("ASGD", r["asgd"], r["asgd_theory"], "D"))
    fig, axes = figure(2, width=4.3, height=3.4)
    ax = axes[0]
    for color, (name, measured, theory, marker) in zip(PALETTE, series):
        ax.plot(kappa, theory, color=color, lw=1.2)
        ax.plot(kappa, measured, marker, ms=5, color=color, mfc="none",
                label=f"{name}: fitted slope {fit_slope(kappa, measured)[0]:.2f}".replace("-", "−"))
    fine = np.geomspace(kappa.min(), kappa.max(), 60)
    k_h = fine / (2 * E.SAMPLED_C)  # the condition number of H itself
    ax.plot(fine, -np.log((np.sqrt(k_h) - 1) / (np.sqrt(k_h) + 1)), "--", color=MUTED,
            label="rival: heavy ball, exact gradients")
    ax.set(xscale="log", yscale="log", xlabel="condition number κ", ylabel="best rate −log ρ per step",
           title="lines: theory; markers: simulated map")
    # room below the slowest method for the legend: every line falls to the right, through the lower left corner
    ax.set_ylim(bottom=float(r["sgd"].min()) / 60)
    ax.legend(loc="lower left", fontsize=7)
    ax = axes[1]
    for color, (name, measured, theory, marker) in list(zip(PALETTE, series))[1:]:
        ax.plot(kappa, theory / r["sgd_theory"], color=color, lw=1.2)
        ax.plot(kappa, measured / r["sgd"], marker, ms=5, color=color, mfc="none", label=name)
    # a slope guide set a little below the accelerated methods, so it stays visible beside them
    ax.plot(fine, 0.5 * np.sqrt(fine / fine[0]) * nag["theory"][0] / r["sgd_theory"][0], ":", color=MUTED, label="∝ √κ")
    ax.axhline(1.0, color=MUTED, ls="--", lw=1, label="SGD's best")
    ax.set(xscale="log", yscale="log", xlabel="condition number κ", ylabel="rate / SGD's best rate",
           title="heavy ball gains a constant factor")
    ax.legend(loc="upper left", fontsize=7)
    return save(fig, "noisy_quadratic_sampled_momentum", out,
                claims=["kidambi2018.heavy_ball_no_faster_than_sgd", "steplab.nesterov_accelerates_with_sampled_rows"])


_DECAY_NAMES = {"cosine": "cosine", "linear": "linear", "sqrt": "1 − √"}


def _merge_weights(results: dict[str, Result], out: Path, budget: Budget) -> list[Path]:
    """The inverse map's merge weights for three cooldowns, and the merged models' loss against their decays'."""
    cid = "tian2025.merge_weights_emulate_decays"
    r = _claim_result(results, cid, budget).arrays
    ex = E.wsm(budget)  # the claim's own runs: the standard errors are not among its arrays
    lam = ex["lam"]
    flat = lam == 0
    loss_m = 0.5 * np.sum(lam * ex["merged_inverse"] ** 2, axis=-1)   # (decay, run), as the claim computes it
    loss_d = 0.5 * np.sum(lam * ex["decayed"] ** 2, axis=-1)
    n = loss_m.shape[1]
    names = [_DECAY_NAMES.get(str(d), str(d)) for d in r["decays"]]
    fig, axes = figure(2, width=4.3, height=3.4)
    ax = axes[0]
    s = np.arange(1, E.WSM_T + 1)
    window = s > E.WSM_T - E.WSM_W
    for color, name, w in zip(PALETTE, names, r["weights"]):
        ax.plot(s[window], w[window], color=color, lw=1.3, label=name)
    gap = float(np.max(np.abs(ex["merged_inverse"][:, :, flat] - ex["decayed"][:, :, flat])))
    ax.set(xlabel="checkpoint step s", ylabel="merge weight $w_s$",
           title=f"inverse map; flat modes: |merge − decay| ≤ {gap:.0e}")
    ax.legend(loc="upper center", fontsize=7, title="cooldown", title_fontsize=7)
    ax = axes[1]
    k = np.arange(len(names))
    seg = lambda x: np.ravel(np.c_[x - 0.1, x + 0.1, np.full(x.size, np.nan)])  # noqa: E731
    rep = lambda v: np.ravel(np.c_[v, v, np.full(v.size, np.nan)])  # noqa: E731
    ax.plot(seg(k - 0.15), rep(r["exact_merged"]), color=THEORY, lw=2, label="merged: exact (theory)")
    ax.errorbar(k - 0.15, loss_m.mean(axis=1), yerr=4 * loss_m.std(axis=1, ddof=1) / np.sqrt(n), fmt="o", color=SIM,
                mfc="none", capsize=2, label="merged: simulated ± 4 SE")
    ax.plot(seg(k + 0.15), rep(r["exact_decayed"]), "--", color=MUTED, lw=1.5,
            label="rival: merge = its decay (decayed, exact)")
    ax.errorbar(k + 0.15, loss_d.mean(axis=1), yerr=4 * loss_d.std(axis=1, ddof=1) / np.sqrt(n), fmt="s",
                color=ACCENT, mfc="none", capsize=2, label="decayed run: simulated ± 4 SE")
    ax.set_xticks(k, names)
    ax.set(xlim=(-0.5, k.size - 0.5), ylim=(0, 1.8 * float(r["exact_decayed"].max())), xlabel="cooldown emulated",
           ylabel="final E L", title="the merges rank opposite to their decays")
    ax.legend(loc="upper left", fontsize=7)
    return save(fig, "noisy_quadratic_merge_weights", out, claims=[cid])


def _wd_timescale(results: dict[str, Result], out: Path, budget: Budget) -> list[Path]:
    """The start's memory cos(w_t, w_0) under sign updates with decoupled decay: over time for three timescales, and at
    the horizons with tau = T against a fixed lambda."""
    cid = "wang2024.timescale_fraction_fixes_the_memory"
    res = _claim_result(results, cid, budget)
    ex = E.wd_timescale(budget)
    hz, wd, w0, t = ex["horizons"], ex["wd"], ex["w0_norm"], ex["t_rec"]
    cosine = lambda i, T: float(th.sign_wd_start_cosine(E.TAU_ETA, wd[i], T, E.TAU_D, w0[i]))  # noqa: E731
    fig, axes = figure(2, width=4.3, height=3.4)
    ax = axes[0]
    t_fine = np.arange(10, int(t.max()) + 1, 10)
    for i, (color, T) in enumerate(zip(PALETTE, hz)):
        # the claim's estimator (mean share over root mean-square norm) at every record, not only at the horizons
        meas = np.array([start_cosine(ex["share"][i, :, j], ex["norm"][i, :, j], w0[i])[0] for j in range(t.size)])
        ax.plot(t_fine, [cosine(i, u) for u in t_fine], color=color, lw=1.2, label=f"τ = {T} steps")
        ax.plot(t, meas, "o", ms=3, color=color, mfc="none")
        at = int(np.flatnonzero(t == T)[0])
        ax.plot(t[at], meas[at], "o", ms=6, color=color)
    ax.axhline(np.exp(-1), color=MUTED, ls="--", lw=1, label="1/e")
    ax.set(xlabel="step t", ylabel="cos(w_t, w_0), mean square", ylim=(0, 1.05),
           title="lines: exact; markers: simulated (filled: t = τ)")
    ax.legend(loc="upper right", fontsize=7)
    ax = axes[1]
    # the two checks' own estimates and standard errors (the Result's arrays hold neither): tau = T, then fixed lambda
    frac, fixed = res.checks[0], res.checks[1]
    ref = int(np.flatnonzero(hz == E.TAU_REF)[0])
    # the claim's horizons sit on the lines' grids: the lines pass through the checked predictions themselves
    grid = np.unique(np.r_[np.geomspace(hz.min() / 1.5, hz.max() * 1.5, 40).round(), hz]).astype(int)
    at_hz = {int(T): i for i, T in enumerate(hz)}
    tau_t = [cosine(at_hz[T], T) if T in at_hz else
             float(th.sign_wd_start_cosine(E.TAU_ETA, 1 / (E.TAU_ETA * T), T, E.TAU_D, E.tau_start_norm(1 / (E.TAU_ETA * T))))
             for T in grid]
    ax.plot(grid, tau_t, color=THEORY, label="τ = T: exact (theory)")
    ax.plot(grid, [cosine(ref, T) for T in grid], color=PALETTE[2], label=f"fixed λ of τ = {E.TAU_REF}: exact")
    ax.errorbar(hz, frac.estimate, yerr=4 * np.asarray(frac.se), fmt="o", color=SIM, mfc="none", capsize=2,
                label="τ = T: simulated ± 4 SE")
    ax.errorbar(hz, fixed.estimate, yerr=4 * np.asarray(fixed.se), fmt="s", color=ACCENT, mfc="none", capsize=2,
                label="fixed λ: simulated ± 4 SE")
    ax.set(xscale="log", xlabel="training length T (steps)", ylabel="cos(w_T, w_0), mean square", ylim=(0, 1.05),
           title="τ/T fixed keeps the memory at 1/e")
    _plain_minor(ax)
    ax.set_xticks(hz, labels=[str(int(T)) for T in hz])
    ax.legend(loc="upper right", fontsize=7)
    return save(fig, "noisy_quadratic_wd_timescale", out, claims=[cid])


def _ema_vs_decay(results: dict[str, Result], out: Path, budget: Budget) -> list[Path]:
    """The EMA of a constant step, both tuned, against tuned decay to zero over the horizon, with the rivals."""
    cid = "morales2024.ema_of_constant_step_beats_decay"
    r = _claim_result(results, cid, budget).arrays
    lam, sa = E.spectrum()
    measured_T = [int(T) for T in r["T"]]
    grid = sorted({100, 300, 1000, 3000} | set(measured_T))
    ema, const = [], []
    for T in grid:
        if T in measured_T:  # the claim's own exact values: the line passes through its predictions
            i = measured_T.index(T)
            ema.append(r["exact_ratio"][i])
            const.append(r["best_constant_ratio"][i])
            continue
        d2z = th.tuned_final_loss(lam, sa, "d2z", T)[0]
        ema.append(th.tuned_ema_final_loss(lam, sa, T)[0] / d2z)
        const.append(th.tuned_final_loss(lam, sa, "constant", T)[0] / d2z)
    fig, ax = figure(1, width=4.6, height=3.4)
    ax.plot(grid, ema, color=THEORY, label="EMA of a constant step: exact (theory)")
    ax.plot(grid, const, "--", color=ACCENT, label="rival: no averaging (best constant step)")
    ax.axhline(1.0, color=MUTED, ls="--", lw=1, label="rival: the EMA only matches D2Z")
    ax.errorbar(r["T"], r["ratio"], yerr=4 * r["ratio_se"], fmt="o", color=SIM, mfc="none", capsize=2,
                label="EMA, simulated paired runs ± 4 SE")
    ax.set(xscale="log", xlabel="horizon T (steps)", ylabel="final E L / tuned D2Z's", ylim=(0, 1.25 * max(const)),
           title="EMA of a constant step vs decay to zero (D2Z)")
    _plain_minor(ax)
    ax.set_xticks(grid, labels=[str(T) for T in grid])
    ax.legend(loc="upper left", fontsize=7)
    return save(fig, "noisy_quadratic_ema_vs_decay", out, claims=[cid])


def _river_progress(results: dict[str, Result], out: Path, budget: Budget) -> list[Path]:
    """River progress against the area under the schedule (seven schedules), and the area law's window over curvatures."""
    r = _claim_result(results, "wen2024.river_progress_is_lr_area", budget).arrays
    fig, (ax, bx) = figure(2, width=4.2, height=3.3)
    line = np.linspace(0.0, 1.1 * r["area"].max(), 50)
    ax.plot(line, line, color=THEORY, label="theory: E r_T/R = λ_r Σ η_t")
    ax.errorbar(r["area"], r["progress"], yerr=4 * r["progress_se"], fmt="o", color=SIM, mfc="none",
                label="simulated, 7 schedules (± 4 SE)")
    ax.set(xlabel="λ_r Σ η_t  (area under the schedule)", ylabel="river progress E r_T / R",
           title="progress along the river is the area")
    ax.legend(loc="upper left", fontsize=7)
    eta = E.river_schedules()["constant"]
    fine = np.geomspace(E.RIVER_WINDOW.min() / 1.5, E.RIVER_WINDOW.max() * 1.5, 80)
    exact = th.river_progress(fine, np.tile(eta, (fine.size, 1))) / th.river_area_law(fine, np.tile(eta, (fine.size, 1)))["law"]
    bx.plot(fine * eta.sum(), exact, color=THEORY, label="theory: exact mean / area law")
    bx.errorbar(r["window_x"], r["window_ratio"], yerr=4 * r["window_se"], fmt="o", color=SIM, mfc="none",
                label="simulated, constant η = 1.2 (± 4 SE)")
    threshold(bx, 0.9, "10 % below the law", vertical=False)
    bx.set(xscale="log", xlabel="λ_r Σ η_t", ylabel="progress / area law", ylim=(0.0, 1.15),
           title="the law's window: the river's end")
    bx.legend(loc="lower left", fontsize=7)
    return save(fig, "noisy_quadratic_river_progress", out, claims=["wen2024.river_progress_is_lr_area"])


_RIVER_LABELS = {"constant": "constant η = 1.2", "wsd": "WSD (decay over the last 200)", "cosine": "cosine to 0",
                 "early": "early decay (first 200, to 0.12)", "wsd_s": "WSD-S (decay, resume, decay)",
                 "wsd_branch": "WSD's 2nd branch, equal compute"}


def _river_curves(ax, run: dict, names: list[str]) -> tuple[dict, np.ndarray]:
    """E L_t less the constant run's exact river loss (a common reference), exact lines and simulated markers.

    Returns the exact line of each schedule by name, and the reference subtracted from them."""
    t = np.arange(E.RIVER_T + 1)
    i0 = int(np.flatnonzero(run["names"] == "constant")[0])
    ref = 0.5 * run["lam"][i0, 0] * (run["center"][i0, 0] * np.r_[1.0, np.cumprod(1 - run["etas"][i0] * run["lam"][i0, 0])]) ** 2
    lines = {}
    for color, name in zip(PALETTE, names):
        i = int(np.flatnonzero(run["names"] == name)[0])
        m = tn.moment_recursion(run["lam"][i], run["etas"][i], run["center"][i] ** 2, sigma_a=np.array(E.RIVER_SIGMA))
        (lines[name],) = ax.plot(t[1:], (tn.expected_loss(run["lam"][i], m) - ref)[1:], color=color, lw=1.2,
                                 label=_RIVER_LABELS[name])
        ax.plot(run["t_rec"], run["curve"][i].mean(axis=0) - ref[run["t_rec"]], "o", ms=4, color=color, mfc="none")
    ax.set(xlabel="step t", ylabel="E L_t − river loss of the constant run")
    return lines, ref


def _river_decay(results: dict[str, Result], out: Path, budget: Budget) -> list[Path]:
    """Loss curves of constant, WSD, early decay and cosine in the river valley (exact lines, simulated markers)."""
    run = E.river(budget)
    fig, ax = figure(width=5.0, height=3.4)
    names = ["constant", "wsd", "early", "cosine"]  # the check's order
    lines, ref = _river_curves(ax, run, names)
    for k, name in enumerate(names):  # each exact curve ends at the check's final loss of its schedule
        draws(lines[name], "wen2024.stable_then_decay_beats_early_decay:final loss E L_T (constant, WSD, early decay, "
              "cosine)", at=[E.RIVER_T], y=lambda v, k=k: np.asarray(v, dtype=float)[k] - ref[E.RIVER_T])
    ax.set(ylim=(-0.2, 4.6), title="stable then decay ends lowest (markers: simulation)")
    ax.legend(loc="upper left", fontsize=7)
    return save(fig, "noisy_quadratic_river_decay", out, claims=["wen2024.stable_then_decay_beats_early_decay"])


def _river_wsd_s(results: dict[str, Result], out: Path, budget: Budget) -> list[Path]:
    """WSD-S against WSD's second branch at equal compute (exact lines, simulated markers)."""
    run = E.river(budget)
    fig, ax = figure(width=5.0, height=3.4)
    _river_curves(ax, run, ["wsd_s", "wsd_branch"])
    ax.set(ylim=(-0.2, 2.4), title="WSD-S keeps its first decay's progress (markers: simulation)")
    ax.legend(loc="upper right", fontsize=7)
    return save(fig, "noisy_quadratic_river_wsd_s", out, claims=["wen2024.wsd_s_reuses_the_decay"],
                unaudited="the exact loss curves of WSD-S and WSD's branch are drawn whole, while the claim checks "
                          "only the difference of their final losses (no single curve holds it); the theory-coloured "
                          "markers are WSD-S's simulation")


def _lion_kkt(results: dict[str, Result], out: Path, budget: Budget) -> list[Path]:
    """Lion on coupled double wells: f along six runs (markers) settling on the KKT values of their starts (lines)."""
    r = _claim_result(results, "chen2023.kkt_points_nonconvex", budget).arrays
    ex = E.lion_double_well(budget)
    steps = (E.LION_T // ex["path"].shape[1]) * np.arange(1, ex["path"].shape[1] + 1)
    fig, ax = figure(width=5.0, height=3.4)
    levels = np.unique(np.round(r["f_kkt"], 6))
    for k, level in enumerate(levels):
        ax.axhline(level, color=THEORY, lw=1.2, label="theory: f at the KKT points (L-BFGS-B from each start)" if k == 0 else None)
    for k, row in enumerate(r["f_path"]):
        ax.plot(steps, row, "o", ms=3, color=PALETTE[k % len(PALETTE)], mfc="none",
                label="Lion, six starts (one colour each)" if k == 0 else None)
    ax.set(xscale="log", xlabel="step t", ylabel="f(x_t)", ylim=(2.5, 4.2),
           title="non-convex loss: each run settles on its start's KKT point")
    ax.legend(loc="upper right", fontsize=7)
    return save(fig, "noisy_quadratic_lion_kkt", out, claims=["chen2023.kkt_points_nonconvex"])


def make(results: dict[str, Result], out: Path, budget: Budget) -> list[Path]:
    """Every figure of the topic (claim results in ``results``; other data from the topic's experiments)."""
    paths: list[Path] = []
    for draw in (_schedules, _merging, _ema, _weight_decay, _lion, _sampled_momentum, _merge_weights, _wd_timescale,
                 _ema_vs_decay, _river_progress, _river_decay, _river_wsd_s, _lion_kkt):
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
