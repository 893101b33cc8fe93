"""Figures for the edge-of-stability topic (central flow, self-stabilization, momentum, catapult, rod flow).

Everything drawn comes from the claims' results or the topic's experiments (``paper_checks.eos.experiments``,
cached); closed forms from :mod:`theory.eos`. Nothing here simulates.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

import theory.eos as th
import theory.linear_hessian as tlh
from figures._style import ACCENT, MUTED, PALETTE, SIM, THEORY, figure, save, threshold
from figures.plot import draws
from paper_checks import Budget, Result
from paper_checks.eos import experiments as E
from paper_checks.eos import crosslinks as X
from paper_checks.eos.edge_of_stability import JUST_ABOVE, settled_window


def _edge(ax, x: float, label: str, color: str = MUTED, at: float = 0.0) -> None:
    """A dashed vertical guide labelled at height ``at`` (axes fraction; default the bottom, as the top holds the
    data's markers)."""
    ax.axvline(x, color=color, ls="--", lw=1)
    ax.annotate(label, (x, at), xycoords=("data", "axes fraction"), xytext=(2, 4), textcoords="offset points",
                color=color, fontsize=8)


def _sharpness(results: dict[str, Result], out: Path, budget: Budget) -> list[Path]:
    """Sharpness over each run's threshold: GD at five step sizes (and the central flow), heavy ball and Nesterov.

    The shaded band is the prediction, "right at, or just above": [1, 1 + JUST_ABOVE]; the dotted vertical line
    starts the settled window the claims average over (the last quarter of each run).
    """
    ex = E.mlp(budget)
    win = settled_window(ex["sharpness"].shape[1])
    fig, axes = figure(2, width=4.3, height=3.3)
    ax = axes[0]
    gd = [r for r in np.flatnonzero(ex["method"] == "gd") if ex["seed"][r] == 0]
    for color, r in zip(PALETTE[1:], sorted(gd, key=lambda r: ex["eta"][r])):
        eta = ex["eta"][r]
        ax.plot(ex["t"][r], ex["sharpness"][r] / th.critical_sharpness(eta), color=color, lw=1, label=f"GD, η = {eta:g}")
    cf = np.flatnonzero(ex["method"] == "central")
    if cf.size:
        ax.plot(ex["t"][cf[0]], ex["sharpness"][cf[0]] / th.critical_sharpness(ex["eta"][cf[0]]), color=THEORY, lw=1.6,
                label=f"central flow, η = {ex['eta'][cf[0]]:g}")
    ax.set(xlabel="step", ylabel="sharpness / (2/η)", title="GD: sharpness over 2/η")
    ax = axes[1]
    for color, r in zip(PALETTE[2:], np.flatnonzero(np.isin(ex["method"], ("heavy_ball", "nesterov")))):
        m, eta, mu = ex["method"][r], ex["eta"][r], ex["momentum"][r]
        crit = th.critical_sharpness(eta, mu, nesterov=bool(m == "nesterov"))
        name = "Nesterov" if m == "nesterov" else "heavy ball"
        ax.plot(ex["t"][r], ex["sharpness"][r] / crit, color=color, lw=1, label=f"{name}, μ = {mu:g}, η = {eta:g}")
    ax.set(xlabel="step", ylabel="sharpness / critical sharpness", title="momentum: over the method's threshold")
    for ax, rows in ((axes[0], gd), (axes[1], np.flatnonzero(np.isin(ex["method"], ("heavy_ball", "nesterov"))))):
        ax.axhspan(1.0, 1.0 + JUST_ABOVE, color=THEORY, alpha=0.1, lw=0)
        ax.axhline(1.0, color=MUTED, ls="--", lw=0.8)
        for r in rows[:1]:
            ax.axvline(ex["t"][r][win][0], color=MUTED, ls=":", lw=0.8)
        ax.set_ylim(0.4, 1.6)
        ax.legend(loc="lower right", fontsize=6)
    return save(fig, "eos_sharpness", out, claims=["cohen2021.sharpness_at_two_over_eta",
                                                    "cohen2022.momentum_thresholds_network"],
                unaudited="the central flow's sharpness is an integrated trajectory drawn step by step; the checks hold "
                          "only the settled-window means of the GD and momentum runs, no value of this curve")


def _central_flow(results: dict[str, Result], out: Path, budget: Budget) -> list[Path]:
    """Toy: GD's 2-step averages vs the central flow and rod flow; network: GD's averaged loss vs the flow's prediction."""
    tr = E.selfstab_transient(budget)
    fig, axes = figure(2, width=4.3, height=3.3)
    ax = axes[0]
    t, ts = tr["t_gd"], tr["ts"]
    ys, _ = th.selfstab_equilibrium(float(tr["a"]), E.TOY_BETA, E.TOY_ETA)
    ax.plot(t, tr["y_gd"], ".", ms=2, color=SIM, label="GD, 2-step average")
    ax.plot(ts, tr["y_cf"], color=THEORY, lw=1.6, label="central flow (diffrax)")
    ax.plot(ts, tr["y_rod"], color=ACCENT, lw=1, ls="--", label="rod flow, centre")
    ax.plot(ts[ts <= 40], E.TOY_INIT[1] + E.TOY_ETA * E.TOY_BETA * ts[ts <= 40], color=MUTED, lw=1, ls=":",
            label="gradient flow (ẏ = ηβ)")
    threshold(ax, ys, "y* = √(2/η − a)", vertical=False)
    ax.set(xlabel="step", ylabel="y", xscale="symlog", xlim=(0, t[-1]), ylim=(0, 1.1 * np.nanmax(tr["y_gd"])),
           title=f"toy, ηa = {E.TRANSIENT_ETA_A:g}: self-stabilization onto the flow")
    ax.legend(loc="upper left", fontsize=7)
    ax = axes[1]
    ex = E.mlp(budget)
    cf = np.flatnonzero(ex["method"] == "central")
    if cf.size:
        c = cf[0]
        g = int(np.flatnonzero((ex["method"] == "gd") & (ex["eta"] == ex["eta"][c]) & (ex["seed"] == ex["seed"][c]))[0])
        t = ex["t"][c]
        every = int(t[1] - t[0])
        ax.plot(t, ex["mean_loss"][g], color=SIM, lw=1, label=f"GD, loss averaged over {every} steps")
        ax.plot(t, th.central_flow_mean_loss(ex["mean_loss"][c], ex["mean_sigma2_sharpness"][c]), color=THEORY, lw=1.6,
                label="central flow: L + σ²S/2")
        ax.plot(t, ex["mean_loss"][c], color=MUTED, lw=1, ls="--", label="central flow: L(w) alone")
        ax.axvline(t[len(t) // 2], color=MUTED, lw=0.8, ls=":")
    ax.set(xlabel="step", ylabel="training loss", yscale="log",
           title=f"tiny MLP, η = {MLP_ETA}: the time-averaged loss")
    ax.legend(loc="upper right", fontsize=7)
    return save(fig, "eos_central_flow", out, claims=["cohen2025.selfstab_transient",
                                                      "cohen2025.network_time_averaged_loss"])


MLP_ETA = E.MLP_ETA


def _window(results: dict[str, Result], out: Path, budget: Budget) -> list[Path]:
    """Relative error of GD's time averages against the equilibrium over eta*a, with the closed-form edges."""
    ex = E.selfstab_window(budget)
    win = th.selfstab_window(E.TOY_BETA, E.TOY_ETA)
    ea, n = ex["eta_a"], int(ex["n_grid"])
    ys = np.array([th.selfstab_equilibrium(e / E.TOY_ETA, E.TOY_BETA, E.TOY_ETA)[0] if e < 2 else np.nan for e in ea])
    s2 = np.where(np.isfinite(ys), E.TOY_BETA / ys, np.nan)
    err_y = np.abs(ex["mean_y"] / ys - 1)
    err_x = np.abs(ex["mean_x2"] / s2 - 1)
    floor = 1e-16
    fig, axes = figure(2, width=4.3, height=3.3, gridspec_kw={"width_ratios": [2.2, 1]})
    for ax, sl, title in ((axes[0], slice(0, n), "uniform grid"), (axes[1], slice(n, None), "near ηa = 2 (fine grid)")):
        x = ea[sl]
        div = ex["diverged"][sl]
        first = sl.start == 0  # labels once, in the left panel's legend
        ax.semilogy(x[~div], np.maximum(err_y[sl][~div], floor), "o", ms=3, mfc="none", color=SIM,
                    label="|⟨y⟩/y* − 1|" if first else None)
        ax.semilogy(x[~div], np.maximum(err_x[sl][~div], floor), "s", ms=3, mfc="none", color=PALETTE[2],
                    label="|⟨x²⟩/σ² − 1|" if first else None)
        if div.any():
            ax.plot(x[div], np.full(div.sum(), 1.0), "x", ms=4, color="k", label="GD diverged" if first else None)
        ax.axhline(1e-6, color=MUTED, lw=0.8, ls=":")
        ax.set(xlabel="ηa", title=title, ylim=(1e-17, 10))
    axes[0].axvspan(win["lower"], win["upper"], color=THEORY, alpha=0.08, lw=0)
    # the edges' labels in the empty middle band: the bottom holds the errors at round-off, the top the diverged runs
    _edge(axes[0], win["lower"], "7/4", at=0.55)
    _edge(axes[1], win["upper"], "fold", at=0.55)
    _edge(axes[1], 2.0, "2", at=0.55)
    axes[1].set_xticks([1.9992, 1.9996, 2.0000, 2.0004], labels=["1.9992", "1.9996", "2.0000", "2.0004"], fontsize=7)
    axes[0].set_ylabel("relative error of GD's time averages")
    axes[0].legend(loc="center left", bbox_to_anchor=(0.0, 0.38), fontsize=7)
    return save(fig, "eos_validity_window", out, claims=["steplab.validity_window"])


def _catapult(results: dict[str, Result], out: Path, budget: Budget) -> list[Path]:
    """Phase diagram over (eta*lambda0, width) and the final curvature against the initial one."""
    ex = E.catapult(budget)
    nc = int(ex["n_coarse"])
    cs = ex["c"]
    order = np.argsort(cs)
    fig, axes = figure(2, width=4.3, height=3.3)
    ax = axes[0]
    codes = {"lazy": 0, "catapult": 1, "divergent": 2}
    colors = [THEORY, ACCENT, SIM]
    for i, m in enumerate(ex["widths"]):
        ratio = ex["max_loss_ratio"][i]
        phase = np.where(ex["diverged"][i], "divergent", np.where(ratio > 1 + 1e-12, "catapult", "lazy"))
        frac = {p: np.mean(phase == p, axis=1) for p in codes}
        for p, col in zip(codes, colors):
            sel = frac[p][order] > 0
            ax.scatter(cs[order][sel], np.full(sel.sum(), i), s=30 * frac[p][order][sel] + 2, color=col,
                       label=p if i == 0 else None, alpha=0.8)
    for c in th.catapult_edges():
        _edge(ax, c, f"ηλ₀ = {c:g}")
    ax.set_yticks(range(len(ex["widths"])), labels=[str(int(m)) for m in ex["widths"]])
    # empty strips below and above the rows: the edges' labels below, the legend above (both covered markers)
    ax.set(xlabel="ηλ₀", ylabel="width m", title="phases (marker size: fraction of seeds)",
           ylim=(-1.0, len(ex["widths"]) + 0.2))
    ax.legend(loc="upper center", ncol=3, fontsize=7)
    ax = axes[1]
    w = int(np.argmax(ex["widths"]))
    final = ex["final_eta_lambda"][w, :nc]
    for k in range(final.shape[1]):
        ax.plot(cs[:nc], final[:, k], "o", ms=3, mfc="none", color=SIM, label="GD (per seed)" if k == 0 else None)
    grid = np.linspace(0.3, 2.0, 20)
    ax.plot(grid, grid, color=THEORY, label="lazy: ηλ = ηλ₀")  # the lazy phase keeps its curvature
    threshold(ax, 2.0, "ηλ = 2", vertical=False)
    threshold(ax, 4.0, "divergence")
    ax.set(xlabel="ηλ₀", ylabel="final ηλ", xlim=(0, 4.6), ylim=(0, 2.5),
           title=f"final curvature, m = {int(ex['widths'][w])}")
    ax.legend(loc="upper left", fontsize=7)
    return save(fig, "eos_catapult", out, claims=["lewkowycz2020.catapult_phases", "lewkowycz2020.divergence_edge_at_four"],
                unaudited="the lazy identity ηλ = ηλ₀ is drawn over the step-size grid; the checks hold each run's phase "
                          "and the divergence edge per width, no final curvature")


def _rod_flow(results: dict[str, Result], out: Path, budget: Budget) -> list[Path]:
    """(uv - 1)^2: sharpness of GD and the three flows at eta = 0.8, and the final sharpness of every setting."""
    ex = E.uv_compare(budget)
    fig, axes = figure(2, width=4.3, height=3.3)
    ax = axes[0]
    i = int(np.argmin(np.abs(ex["eta"] - 0.8) + 10 * (ex["w0"][:, 0] != 1.5)))
    ts = ex["ts_short"]
    keep = ex["gd_short_t"] <= ts[-1]
    ax.plot(ex["gd_short_t"][keep], ex["gd_short_sharpness"][i][keep], ".", ms=3, color=SIM, label="GD (2-step average)")
    # the central flow is the claim's rival (the rod flow beats it): dashed, in a colour of its own, named so
    for k, col, ls, name in (("rod", ACCENT, "-", "rod flow"), ("central", PALETTE[5], "--", "rival: central flow"),
                             ("gradient", MUTED, ":", "gradient flow")):
        ax.plot(ts, ex[f"{k}_sharpness_short"][i], color=col, ls=ls, label=name)
    threshold(ax, 2 / ex["eta"][i], "2/η", vertical=False)
    ax.set(xlabel="step", ylabel="sharpness", xlim=(0, ts[-1]), title=f"(uv − 1)²/2, η = {ex['eta'][i]:g}, w₀ = (1.5, 0)")
    ax.legend(loc="lower right", fontsize=7)
    ax = axes[1]
    conv = ~ex["cycle"].astype(bool)  # the 2-cycle settings (eta > 1) have no final sharpness to compare
    x = np.arange(int(conv.sum()))
    gd = ex["gd_final_sharpness"][conv]
    for k, col, mk, name in (("rod", ACCENT, "o", "rod flow"), ("central", PALETTE[5], "s", "rival: central flow"),
                             ("gradient", MUTED, "^", "gradient flow")):
        ax.plot(x, ex[f"{k}_final_sharpness"][conv] / gd - 1, mk, color=col, mfc="none", label=name)
    ax.axhline(0, color=SIM, lw=1, label="GD")
    # one line per setting, turned upright: the full budget has 16 settings, whose two-line labels overlapped
    ax.set_xticks(x, labels=[f"{e:g} ({w[0]:g}, {w[1]:g})" for e, w in zip(ex["eta"][conv], ex["w0"][conv])], fontsize=6,
                  rotation=90)
    top = float(np.nanmax([ex[f"{k}_final_sharpness"][conv] / gd - 1 for k in ("rod", "central", "gradient")]))
    ax.set(xlabel="η (w₀)", ylabel="final sharpness / GD's − 1", title="final sharpness against GD's",
           ylim=(None, 1.4 * top))  # headroom for the legend above the markers
    ax.legend(loc="upper center", ncol=4, fontsize=6)
    return save(fig, "eos_rod_flow", out, claims=["regis2026.rod_flow_beats_central_flow_on_uv"])


def _crosslinks(results: dict[str, Result], out: Path, budget: Budget) -> list[Path]:
    """Cross-links: the rod flow on logistic data closing on GD's 2-cycle; the linear net's sharpness reaching 2/eta."""
    rod = X.rod_logistic(budget)
    lin = X.linear_crossing(budget)
    fig, axes = figure(2, width=4.3, height=3.3)
    ax = axes[0]
    ts = X.ROD_SAVES
    for k, (case, color) in enumerate(zip(X.rod_cases(budget), PALETTE)):
        cyc = case["cycle"]
        ax.plot(ts[1:], rod["half"][k, 1:], color=color, label=f"ηλ = {case['c']:g}")
        ax.axhline((cyc[1] - cyc[0]) / 2, color=color, ls=":", lw=1)
    ax.set(xscale="log", yscale="log", xlabel="rod-flow time (GD steps)", ylabel="rod half-length |r|",
           title="rod flow on logistic data → GD's 2-cycle (dotted)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=6)  # every corner of the panel holds a curve
    ax = axes[1]
    pi = X.CROSS_COUNTS / X.CROSS_COUNTS.sum()
    shown = 16     # the aligned path ends at the crossing: afterwards GD oscillates at the edge of stability
    steps = np.arange(shown + 1)
    offset = 0  # the check holds every step size's path up to its crossing (the whole run if none), one after another
    for eta, S, theory_S, color in zip(lin["eta"], lin["sharpness"], lin["theory_sharpness"], PALETTE):
        hit = np.flatnonzero(theory_S >= 2 / eta)
        stop = hit[0] + 1 if hit.size else shown + 1
        (path,) = ax.plot(steps[:stop], theory_S[:stop], color=color, lw=1)
        held = hit[0] + 1 if hit.size else theory_S.size
        draws(path, "steplab.linear_net_reaches_2_over_eta_when_law_predicts:Lanczos sharpness of the full net vs the "
              "aligned-path spectrum, every step up to the crossing", at=steps[:stop],
              y=lambda v, lo=offset, n=stop: np.asarray(v, dtype=float)[lo:lo + n])
        offset += held
        ax.plot(steps, S[:shown + 1], "o", ms=2.5, mfc="none", color=color, label=f"2/η = {2 / eta:.2f}")
        ax.axhline(2 / eta, color=color, ls="--", lw=0.8)
    threshold(ax, tlh.class_sharpness(pi, 2), "class law", vertical=False, color=MUTED)
    ax.set(xlabel="GD step", ylabel="sharpness", xlim=(0, shown), ylim=(0.5, 3.3),
           title="linear net: Lanczos (o) vs aligned-path theory (—)")
    ax.legend(loc="upper left", fontsize=7)
    return save(fig, "eos_crosslinks", out, claims=["steplab.rod_flow_fixed_point_is_logistic_two_cycle",
                                                     "steplab.linear_net_reaches_2_over_eta_when_law_predicts"])


def _loss_nonmonotone(results: dict[str, Result], out: Path, budget: Budget) -> list[Path]:
    """GD's sampled loss and long-window means on the network, over the central flow's loss from the same start; and
    each run's uptick counts before and after its sharpness reaches 2/eta."""
    from paper_checks.eos.edge_of_stability import LONG_WINDOWS, upticks, window_means
    from sims.edges import first_crossing as crossing

    ex = E.mlp(budget)
    fig, axes = figure(2, width=4.3, height=3.3)
    ax = axes[0]
    r = int(np.flatnonzero((ex["method"] == "gd") & (ex["eta"] == E.MLP_ETA) & (ex["seed"] == 0))[0])
    c = int(np.flatnonzero((ex["method"] == "central") & (ex["seed"] == 0))[0])
    t, T = ex["t"][r], th.critical_sharpness(ex["eta"][r])
    first = crossing(ex["sharpness"][r], T)
    width = t.size // LONG_WINDOWS
    ax.plot(ex["t"][c], ex["loss"][c], color=THEORY, lw=1.6, label="central flow L(w)")
    ax.plot(t, ex["loss"][r], "o", ms=2.5, mfc="none", color=SIM, label=f"GD, η = {ex['eta'][r]:g} (every {t[1] - t[0]} steps)")
    means = window_means(ex["mean_loss"][r], first, width)
    mids = t[first] + (np.arange(means.size) + 0.5) * width * (t[1] - t[0])
    ax.plot(mids, means, "s", ms=6, color=ACCENT, label=f"GD, {width * (t[1] - t[0])}-step window means")
    _edge(ax, t[first], "S = 2/η", at=0.88)
    ax.set(xlabel="step", ylabel="training loss", yscale="log", title="loss: non-monotone, falling over windows")
    ax.legend(loc="upper right", fontsize=6)
    ax = axes[1]
    rows = np.flatnonzero(ex["method"] == "gd")
    before, after = [], []
    for k in rows:
        f = crossing(ex["sharpness"][k], th.critical_sharpness(ex["eta"][k]))
        before.append(upticks(ex["loss"][k][:f + 1]))
        after.append(upticks(ex["loss"][k][f:]))
    x = np.arange(rows.size)
    ax.plot(x, before, "v", color=THEORY, label="upticks before S reaches 2/η")
    ax.plot(x, after, "^", color=SIM, label="upticks after")
    ax.set_xticks(x, labels=[f"{ex['eta'][k]:g}/{ex['seed'][k]}" for k in rows], fontsize=6)
    ax.set(xlabel="run (η / seed)", ylabel="consecutive samples that rise", ylim=(-2, 1.5 * max(after) + 2),
           title="upticks in the sampled loss")
    ax.legend(loc="upper left", fontsize=6)
    return save(fig, "eos_loss_nonmonotone", out, claims=["cohen2021.loss_nonmonotone_but_decreasing"],
                unaudited="the central flow's loss is an integrated trajectory drawn as a reference; the claim's checks "
                          "count GD's upticks and compare its window means, no value of this curve")


def _catapult_flattening(results: dict[str, Result], out: Path, budget: Budget) -> list[Path]:
    """Final curvature over the initial one across the catapult phase: closed-form map (line, first seed's start)
    over the m-dimensional runs (markers, every seed), and the first minimum located per seed."""
    from paper_checks.eos.catapult import first_local_minimum, flatness_ratio

    ex = E.catapult_curvature(budget)
    c, z0, fin = ex["c"], ex["z0"], ex["final_eta_lambda"]
    fig, ax = figure(1, width=5.0, height=3.4)
    fine = np.linspace(c[0], c[-1], 400)
    end = th.catapult_trajectory(fine, z0[0, 0] * (fine / c[0]) ** 2, int(ex["n_steps"]))["eta_lambda"][:, -1]
    ax.plot(fine, flatness_ratio(end, fine), color=THEORY, lw=1.2, label="closed-form (f, λ) map, first seed's start")
    for k in range(fin.shape[1]):
        ax.plot(c, flatness_ratio(fin[:, k], c), "o", ms=3, mfc="none", color=PALETTE[1 + k % (len(PALETTE) - 1)],
                label=f"GD, m = {int(ex['width'])} ({fin.shape[1]} seeds, one colour each)" if k == 0 else None)
    m0 = first_local_minimum(c, flatness_ratio(fin[:, 0], c))
    _edge(ax, m0, f"first minimum ≈ {m0:g}", at=0.55)
    # the legend above the data (the curve falls from 0.95 at the left and the markers scatter at the right)
    ax.set(xlabel="ηλ₀", ylabel="λ_final / λ₀", ylim=(0, 1.45), title="flatter minima after the catapult")
    ax.legend(loc="upper center", fontsize=6, ncol=2)
    return save(fig, "eos_catapult_flattening", out, claims=["lewkowycz2020.catapult_converges_to_flatter_minima",
                                                              "steplab.catapult_flattening_window"],
                unaudited="the closed-form flatness map is drawn from the first seed's start only; the checks hold each "
                          "seed's own final ηλ and first minimum, so no check holds this curve's values")


def _catapult_time(results: dict[str, Result], out: Path, budget: Budget) -> list[Path]:
    """Step of the catapult's loss peak against ln(1/z0) (z0 = eta^2 f0^2/m): runs as markers by width, the predicted
    slope as a line through the runs' mean point (the law fixes the slope, not the offset)."""
    from paper_checks.eos.catapult import peak_step

    ex = E.catapult_time(budget)
    x = np.log(1.0 / ex["z0"])
    y = peak_step(ex["loss"]).astype(float)
    slope = 1.0 / np.log(th.catapult_growth_factor(float(ex["c"])))
    fig, ax = figure(1, width=5.0, height=3.4)
    grid = np.linspace(x.min(), x.max(), 50)
    (line,) = ax.plot(grid, y.mean() + slope * (grid - x.mean()), color=THEORY, lw=1.2,
                      label=f"slope 1/ln(ηλ₀ − 1)² = {slope:.2f}")
    draws(line, "lewkowycz2020.catapult_time_grows_like_log_width:steps to the loss peak per unit of ln(1/z0)", at=grid,
          y=lambda s: y.mean() + s * (grid - x.mean()))
    for k, m in enumerate(ex["widths"]):
        ax.plot(x[k], y[k], "o", ms=4, mfc="none", color=PALETTE[1 + k % (len(PALETTE) - 1)], label=f"GD, m = {int(m)}")
    ax.set(xlabel="ln(1/z₀), z₀ = η²f₀²/m", ylabel="step of the loss peak", ylim=(0, 1.3 * y.max()),
           title=f"catapult duration, ηλ₀ = {float(ex['c']):g}")
    ax.legend(loc="upper left", fontsize=6)
    return save(fig, "eos_catapult_time", out, claims=["lewkowycz2020.catapult_time_grows_like_log_width"])


def _relu_max_lr(results: dict[str, Result], out: Path, budget: Budget) -> list[Path]:
    """Every tested step c = eta*lambda0 of the ReLU networks, one row per network: converged (circle) or diverged
    (cross), the located edge (bar); the paper's ≈ 12 read as 10-14 (band), the uv model's 4 and the lazy 2 (dashed).
    At the full budget the one-hidden-layer networks are rows too."""
    from paper_checks.eos.catapult import RELU_BAND, RELU_C, located_edge

    parts = [(E.relu_max_lr(budget), "3 hidden")] + ([(E.relu_max_lr(budget, depth=1), "1 hidden")]
                                                       if budget.pick(quick=False, full=True) else [])
    rows = [(ex, i, tag) for ex, tag in parts for i in range(ex["width"].size)]
    fig, ax = figure(1, width=5.6, height=1.2 + 0.45 * len(rows))
    ax.axvspan(RELU_C - RELU_BAND, RELU_C + RELU_BAND, color=MUTED, alpha=0.15, lw=0)
    # short labels (2 and 4 are close on this axis); the title says what each edge is
    for c, text in ((RELU_C, "≈ 12"), (4.0, "4"), (2.0, "2")):
        threshold(ax, c, text)
    for k, (ex, i, tag) in enumerate(rows):
        c, div = ex["c"][i], ex["diverged"][i] == 1.0
        ok = np.isfinite(c)
        ax.plot(c[ok & ~div], np.full((ok & ~div).sum(), k), "o", ms=4, mfc="none", color=SIM,
                label="GD converges" if k == 0 else None)
        ax.plot(c[ok & div], np.full((ok & div).sum(), k), "x", ms=4, color=ACCENT,
                label="GD diverges" if k == 0 else None)
        mid, half = located_edge(ex["lo"][i:i + 1], ex["hi"][i:i + 1])
        ax.errorbar(mid, [k], xerr=half, fmt="|", ms=10, color=PALETTE[2], capsize=0,
                    label="located edge c_max" if k == 0 else None)
    ax.set_yticks(range(len(rows)), labels=[f"{tag}, n = {int(ex['width'][i])}, seed {int(ex['seed'][i])}"
                                            for ex, i, tag in rows], fontsize=7)
    ax.set(xlabel="c = ηλ₀ (λ₀: top Gauss-Newton eigenvalue at init)", xlim=(0, 28), ylim=(-1.9, len(rows) + 0.3))
    ax.set_title("where GD on ReLU nets diverges\n(dashed: lazy 2, uv model 4, paper ≈ 12; band 10-14)", fontsize=8)
    # the legend in an empty strip below the rows
    ax.legend(loc="lower right", fontsize=6, ncol=3)
    return save(fig, "eos_relu_max_lr", out, claims=["lewkowycz2020.relu_max_lr_about_12"])


def _constrained(results: dict[str, Result], out: Path, budget: Budget) -> list[Path]:
    """Distance of GD's window-mean iterate from the constrained trajectory and from the two unconstrained ones, and
    the four trajectories' sharpness, for the first init."""
    from paper_checks.eos.constrained import RUN, distances, first_catapult_end

    ex = E.constrained(budget)
    t, m, eta = ex["t"], ex["mean_theta"], float(ex["eta"])
    T = th.critical_sharpness(eta)
    fig, axes = figure(2, width=4.3, height=3.3)
    ax = axes[0]
    for i in range(min(2, m.shape[0])):
        ls = "-" if i == 0 else ":"
        ax.plot(t, distances(m, "gd", "constrained")[i], "o" + ls, ms=3, color=SIM, lw=0.8,
                label="to the constrained trajectory" if i == 0 else None)
        ax.plot(t, distances(m, "gd", "gradient")[i], "s" + ls, ms=3, color=ACCENT, lw=0.8,
                label="to gradient flow" if i == 0 else None)
        ax.plot(t, distances(m, "gd", "gd_half")[i], "^" + ls, ms=3, color=MUTED, lw=0.8,
                label="to GD at η/2" if i == 0 else None)
        start = first_catapult_end(ex["sharpness"][i, RUN["gd"]], T)
        if i == 0 and start >= 0:
            _edge(ax, t[start], "first catapult over", at=0.6)
    top = np.nanmax([distances(m, "gd", k)[:2].max() for k in ("constrained", "gradient", "gd_half")])
    # headroom for the legend above the curves
    ax.set(xlabel="step", ylabel="distance from GD's window mean", title="GD's averaged iterate (solid: first init, dotted: second)",
           ylim=(0, 1.7 * top))
    ax.legend(loc="upper left", fontsize=6)
    ax = axes[1]
    ax.plot(t, ex["sharpness"][0, RUN["constrained"]], color=THEORY, lw=1.6, label="constrained trajectory")
    ax.plot(t, ex["sharpness"][0, RUN["gd"]], "o", ms=3, mfc="none", color=SIM, label="GD (window ends)")
    ax.plot(t, ex["sharpness"][0, RUN["gradient"]], "s", ms=3, color=ACCENT, label="gradient flow")
    ax.plot(t, ex["sharpness"][0, RUN["gd_half"]], "^", ms=3, color=MUTED, label="GD at η/2")
    threshold(ax, T, "2/η", vertical=False)
    ax.set(xlabel="step", ylabel="sharpness", title="sharpness, first init",
           ylim=(0, 1.5 * np.nanmax(ex["sharpness"][0])))
    ax.legend(loc="upper left", fontsize=6)
    return save(fig, "eos_constrained", out, claims=["damian2023.gd_follows_constrained_trajectory"],
                unaudited="the constrained trajectory's sharpness is a computed flow drawn for reference; the checks hold "
                          "GD's distances to the trajectories, not this sharpness")


def _central_iterate(results: dict[str, Result], out: Path, budget: Budget) -> list[Path]:
    """GD's averaged iterate against the central flow with a matrix sigma^2 (distances relative to gradient flow's travel),
    and the two edge flows' Euler remainders in the sharpness with the second eigenvalue's arrival at 2/eta."""
    from paper_checks.eos.constrained import RUN, distances

    ex = E.constrained(budget)
    t, m = ex["t"], ex["mean_theta"]
    T = th.critical_sharpness(float(ex["eta"]))
    travel = np.linalg.norm(m[:, RUN["gradient"]] - ex["theta0"][:, RUN["gradient"], None], axis=-1)
    fig, axes = figure(2, width=4.3, height=3.3)
    ax = axes[0]
    for i in range(min(2, m.shape[0])):
        ls = "-" if i == 0 else ":"
        ax.plot(t, distances(m, "gd", "central")[i] / travel[i], "o" + ls, ms=3, color=SIM, lw=0.8,
                label="GD to the central flow" if i == 0 else None)
        ax.plot(t, distances(m, "gd", "gradient")[i] / travel[i], "s" + ls, ms=3, color=ACCENT, lw=0.8,
                label="GD to gradient flow" if i == 0 else None)
    ax.set(xlabel="step", ylabel="distance / gradient flow's travel", ylim=(0, 1.0),
           title="GD's averaged iterate (solid: first init, dotted: second)")
    ax.legend(loc="upper right", fontsize=6)
    ax = axes[1]
    dt = 1.0 / int(ex["substeps"])
    for run, label, color, style in (("central", "central flow, matrix σ² (top two)", PALETTE[2], "-"),
                                     ("constrained", "one-direction flow", MUTED, "--")):
        held = ex["active"][0, RUN[run]].astype(bool)
        rem = np.where(held, ex["euler_remainder"][0, RUN[run]] / (float(ex["relax"]) * dt * T), np.nan)
        ax.semilogy(t, rem, style, color=color, lw=1.4, label=label)
    both = ex["second"][0, RUN["central"]] >= T * (1 - 1e-3)
    if both.any():
        _edge(ax, t[np.argmax(both)], "second direction at 2/η", at=0.5)
    # two decades of headroom above the largest allowance for the legend
    ax.set(xlabel="step", ylabel="Euler allowance max|e|/(ω dt) / (2/η)", title="edge flows' hold tolerance, first init",
           ylim=(1e-9, 1e2))
    ax.legend(loc="upper right", fontsize=6)
    return save(fig, "eos_central_iterate", out, claims=["cohen2025.network_central_flow_iterate"])


def make(results: dict[str, Result], out: Path, budget: Budget) -> list[Path]:
    """Every figure of the topic (claim results in ``results``; other data from the topic's experiments)."""
    paths: list[Path] = []
    for draw in (_sharpness, _central_flow, _window, _catapult, _rod_flow, _crosslinks, _loss_nonmonotone,
                 _catapult_flattening, _catapult_time, _relu_max_lr, _constrained, _central_iterate):
        paths += draw(results, out, budget)
    return paths
