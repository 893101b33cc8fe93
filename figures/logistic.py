"""Figures for GD cycles on logistic regression (Meng et al. 2024).

Every simulated series comes from an experiment of :mod:`paper_checks.logistic.experiments` (cached, keyed on
its code and budget); this module only evaluates closed forms from :mod:`theory.logistic` and draws.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.colors import BoundaryNorm, ListedColormap

import theory.logistic as th
from figures import _style as st
from figures.plot import draws
from paper_checks import Budget
from paper_checks.logistic import experiments as ex

_CYCLES = "meng2024.cycles_between_1_and_2"         # the 1-D bump-plus-spike cycles the bifurcation and cobweb draw
_WITNESS = "meng2024.cycle_below_1_over_lambda_2d"  # the 2-D witness's cycle


def bifurcation(budget: Budget, out: Path) -> list[Path]:
    data = ex.bifurcation(budget)
    z, a = ex.CASCADE
    w1 = th.minimizer(z, a)[0][0]
    c2 = th.period_doubling_step(z, a)
    fig, (ax1, ax2) = st.figure(2, 1, width=4.6, height=3.4)
    cs1, tail1 = data["c_cascade"], data["tail_cascade"]
    ax1.plot(np.repeat(cs1, tail1.shape[1]), tail1.ravel() - w1, ",", color=st.SIM, alpha=0.6)
    st.threshold(ax1, 2.0, "ηλ = 2")
    st.threshold(ax1, c2, "c₂ (theory)", color=st.ACCENT)
    ax1.set(xlabel="ηλ", ylabel="w − w*  (last 64 iterates)", title="z = ±1, weights 3/4, 1/4: period doubling")

    d = th.cycle_dataset(1.5)
    cs2, tail2 = data["c_witness"], data["tail_witness"]
    for k, (label, color) in enumerate([("init w* + 1e-3", st.THEORY), ("init in the cycle's basin", st.SIM)]):
        ax2.plot(np.repeat(cs2, tail2.shape[2]), tail2[:, k].ravel(), ".", ms=1.2, color=color, label=label)
    # theory: the exact 2-cycle of this fixed dataset (the cycle equations solved by scipy from the piecewise-linear
    # guess), drawn where it exists and is stable; the piecewise-linear limit is the claims' rival, drawn as one
    cc = np.linspace(1.0001, 1.999, 400)
    J, lam, w2 = d["J"], d["lam"], d["w_star"]
    exists = abs(w2) < J * (cc - 1) / (lam * (2 - cc))
    lin_u, lin_v = w2 - J / (lam * (2 - cc)), w2 + J * (cc - 1) / (lam * (2 - cc))
    exact = np.full((cc.size, 2), np.nan)
    for i in np.flatnonzero(exists):
        try:
            uv, mult = th.solve_two_cycle(d["z"], d["weights"], cc[i] / lam, [lin_u[i], lin_v[i]])
        except ValueError:  # no 2-cycle near the guess at this step: nothing to draw
            continue
        if abs(mult) < 1:
            exact[i] = np.sort(uv)
    lines = (ax2.plot(cc, exact[:, 0], color=st.THEORY, lw=1, label="exact stable 2-cycle (theory)")[0],
             ax2.plot(cc, exact[:, 1], color=st.THEORY, lw=1)[0])
    # this dataset is the claim's witness at ηλ = 1.5: there each branch is the claim's exact u (lower), v (upper)
    row = list(np.asarray(ex.cycles_1d(budget)["c"], dtype=float)).index(1.5)
    for k, line in enumerate(lines):
        draws(line, f"{_CYCLES}:simulated 2-cycle (u, v) vs the exact cycle equations (scipy), all c", at=[1.5],
                 y=lambda v, k=k: np.asarray(v, dtype=float)[row, k])
    for k, y in enumerate((lin_u, lin_v)):
        ax2.plot(cc, np.where(exists, y, np.nan), color=st.MUTED, lw=0.8, ls="--",
                 label="rival: piecewise-linear limit" if k == 0 else None)
    st.threshold(ax2, 1.0, "ηλ = 1")
    st.threshold(ax2, 2.0, "ηλ = 2")
    ax2.set(xlabel="ηλ", ylabel="w (last 16 iterates)", title="bump + spike dataset (built for ηλ = 1.5)",
            ylim=(-0.45, 0.25))
    ax2.legend(loc="lower left", markerscale=6)
    return st.save(fig, "logistic_bifurcation", out, claims=[_CYCLES])


def cobweb(budget: Budget, out: Path) -> list[Path]:
    d = th.cycle_dataset(1.5)
    traj = ex.cobweb(budget)["trajectory"]
    w = np.linspace(-0.16, 0.07, 800)
    T = np.array([th.gd_step(x, d["eta"], d["z"], d["weights"])[0] for x in w])
    fig, ax = st.figure(width=5.6, height=4.0)
    ax.plot(w, T, color=st.THEORY, label="GD map T(w)")
    ax.plot(w, w, color=st.MUTED, lw=0.8, label="T(w) = w")
    # cobweb path: (w_t, w_t) -> (w_t, w_{t+1}) -> (w_{t+1}, w_{t+1})
    ax.plot(np.repeat(traj, 2)[:-1], np.repeat(traj, 2)[1:], color=st.SIM, lw=0.7, alpha=0.8)
    ax.plot(traj[:-1], traj[1:], "o", color=st.SIM, ms=2.5, label="simulated iterates")
    cycle = ax.plot([d["u"], d["v"]], [d["v"], d["u"]], "s", mfc="none", mec=st.THEORY, ms=8, label="predicted 2-cycle")
    # the markers are (u, v) and (v, u): the claim's piecewise-linear cycle at ηλ = 1.5, read at x = u, v
    draws(cycle[0], f"{_CYCLES}:ηλ = 1.5: simulated 2-cycle (u, v) vs the piecewise-linear formula",
             at=[d["u"], d["v"]], y=lambda v: np.asarray(v, dtype=float)[::-1])
    ax.axvline(d["w_star"], color=st.MUTED, ls=":", lw=1)
    ax.annotate("w*", (d["w_star"], -0.155), color=st.MUTED, fontsize=8)
    ax.set(xlabel="w", ylabel="T(w)", title="cobweb, ηλ = 1.5 (stable 2-cycle, w* also attracting)",
           xlim=(w[0], w[-1]), ylim=(w[0], w[-1]))
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=7)  # the map fills the square: legend beside it
    return st.save(fig, "logistic_cobweb", out, claims=[_CYCLES])


def basin(budget: Budget, out: Path) -> list[Path]:
    data = ex.basin(budget)
    w_star = th.cycle_dataset(1.5)["w_star"]
    period = np.asarray(data["period"]).T  # rows: init, cols: c
    levels = [-2, -1, 0, 1, 2, 4, 8]
    cat = np.full(period.shape, len(levels), dtype=int)  # last = other period
    for k, p in enumerate(levels):
        cat[period == p] = k
    colors = ["#5c3c00", "#000000", "#bdbdbd", st.THEORY, st.SIM, st.ACCENT, "#00798c", "#8d6cab"]
    labels = ["escaped", "non-finite", "no period ≤ 8", "fixed point", "2-cycle", "4-cycle", "8-cycle", "other"]
    fig, ax = st.figure(width=5.2, height=3.6)
    ax.pcolormesh(data["c"], data["inits"] - w_star, cat, cmap=ListedColormap(colors),
                  norm=BoundaryNorm(np.arange(-0.5, len(colors) + 0.5), len(colors)), shading="nearest",
                  rasterized=True)
    st.threshold(ax, 1.0, "ηλ = 1", color="white")
    st.threshold(ax, 2.0, "ηλ = 2", color="white")
    handles = [ax.plot([], [], "s", color=c, label=lab)[0] for k, (c, lab) in enumerate(zip(colors, labels))
               if np.any(cat == k)]
    ax.legend(handles=handles, loc="lower right", fontsize=7, framealpha=0.9)
    ax.set(xlabel="ηλ", ylabel="w₀ − w*", title="attractor reached (bump + spike dataset)")
    ax.grid(False)
    return st.save(fig, "logistic_basin", out)


def witness(budget: Budget, out: Path) -> list[Path]:
    wt = th.witness_2d()
    z, a, eta = wt["z"], wt["weights"], wt["eta"]
    traj = ex.witness_trajectory(budget)["trajectory"]
    w_star, lam = th.minimizer(z, a)
    g1, g2 = np.meshgrid(np.linspace(-0.1, 0.25, 220), np.linspace(-0.17, 0.17, 220))
    L = th.loss(np.stack([g1.ravel(), g2.ravel()], 1), z, a).reshape(g1.shape)
    fig, ax = st.figure(width=4.6, height=4.2)
    cs = ax.contour(g1, g2, L - th.loss(w_star, z, a), levels=np.geomspace(1e-5, 2e-2, 12), colors=st.MUTED,
                    linewidths=0.6)
    ax.clabel(cs, fontsize=6, fmt="%.0e")
    t = np.linspace(-0.3, 0.3, 2)
    for name, zi, ls in (("A", z[4], "--"), ("B", z[5], "-.")):
        n = zi / np.linalg.norm(zi)
        ax.plot(-n[1] * t, n[0] * t, color=st.ACCENT, lw=1, ls=ls,
                label=f"spike {name} edge, n_{name}·w = 0")
    ax.plot(traj[:, 0], traj[:, 1], "-o", color=st.SIM, ms=3, lw=0.7, label="GD iterates (simulation)")
    # theory: the shipped cycle, polished on the exact equations T(T(p)) = p (what the claim predicts); the
    # piecewise-linear cycle is the claim's rival and is drawn as one
    exact = np.stack([wt["cycle_point"], th.gd_step(wt["cycle_point"], eta, z, a)])
    pred = th.construct_witness_2d(c=wt["c"], theta_deg=wt["theta_deg"], J=wt["J"], K=wt["K"],
                                   offset=wt["offset"])["predicted_cycle"]
    (cycle,) = ax.plot(exact[:, 0], exact[:, 1], "s", mfc="none", mec=st.THEORY, ms=9, label="exact 2-cycle (theory)")
    # the markers are the points (w₁, w₂), in the check's order: their w₂ (both points share a w₁, so none is read by x)
    draws(cycle, f"{_WITNESS}:simulated 2-cycle points vs the shipped (scipy-polished) cycle",
          y=lambda v: np.asarray(v, dtype=float)[:, 1])
    ax.plot(pred[:, 0], pred[:, 1], "x", color=st.MUTED, ms=6, label="rival: piecewise-linear cycle")
    ax.plot(*w_star, "*", color=st.THEORY, ms=10, label="w* (attracting)")
    ax.set(xlim=(-0.1, 0.25), ylim=(-0.17, 0.17), xlabel="w₁", ylabel="w₂", aspect="equal",
           title=f"2-D stable 2-cycle at ηλ_max = {eta * lam:.2f} < 1")
    ax.legend(loc="upper left", fontsize=6)  # the cycle's lower point sits in the lower right corner
    return st.save(fig, "logistic_witness_2d", out, claims=[_WITNESS])


def amplitude(budget: Budget, out: Path) -> list[Path]:
    data = ex.amplitudes(budget)
    fig, ax = st.figure(width=4.4, height=3.4)
    mu = data["mu"]
    for tag, (z, a), label, color in [("asymmetric", ex.ASYMMETRIC, "weights 0.3 / 0.7", st.THEORY),
                                      ("cascade", ex.CASCADE, "weights 0.75 / 0.25", st.SIM)]:
        coef = th.normal_form_coefficients(z, a)["amplitude_coefficient"]
        ax.loglog(mu, coef * np.sqrt(mu), color=color, label=f"normal form, {label}")
        ax.loglog(mu, data[tag], "o", mfc="none", color=color, label=f"simulation, {label}")
    ax.set(xlabel="ηλ − 2", ylabel="2-cycle half-width A", title="flip normal form: A ≈ √((ηλ−2)/(a²+b))")
    ax.legend(fontsize=7)
    return st.save(fig, "logistic_normal_form", out,
                   unaudited="the flip normal form's half-width coefficient times √(ηλ − 2) has no claim check; the "
                             "figure shows how far the leading order reaches")


def cascade(budget: Budget, out: Path, results: dict) -> list[Path]:
    """The cascade's doubling points (theory and simulation), balanced data's single 2-cycle, the two-point 3-cycle."""
    data = ex.bifurcation(budget)
    z, a = ex.CASCADE
    w1 = th.minimizer(z, a)[0][0]
    pts = ex.cascade_points()
    fig, (ax1, ax2, ax3) = st.figure(3, 1, width=4.4, height=3.0)
    keep = data["c_cascade"] >= 2.55
    st.bifurcation(ax1, data["c_cascade"][keep], data["tail_cascade"][keep], center=w1, size=1.5)
    for k, c in enumerate(pts[1:5], start=2):
        ax1.axvline(c, color=st.THEORY, ls="--", lw=0.8)
    res = results.get("meng2024.period_doubling_cascade")
    if res is not None:   # the doubling points located in simulation (multiplier extrapolated to -1)
        from paper_checks import Exact
        found = [ch.measured for ch in res.checks if isinstance(ch, Exact) and ch.quantity.startswith("c_")]
        # just inside the top of the axes: above it the markers sat on the title
        ax1.plot(found, np.full(len(found), 0.97), "v", color=st.ACCENT, ms=5, transform=ax1.get_xaxis_transform(),
                 clip_on=False)
        # named in a note, not a legend: every corner of the diagram holds orbit points
        ax1.annotate("▼ located in simulation", (0.02, 0.78), xycoords="axes fraction", fontsize=7, color=st.ACCENT)
    ax1.annotate("c₂ … c₅ (theory, dashed)", (0.02, 0.86), xycoords="axes fraction", fontsize=7, color=st.THEORY)
    ax1.set(xlabel="ηλ", ylabel="w − w*", xlim=(2.55, 3.05),
            title=f"cascade: ratios → δ = {th.FEIGENBAUM_DELTA:.4f}")

    bal = ex.balanced(budget)
    cc = np.linspace(2.0005, float(bal["c"].max()), 300)
    ax2.plot(cc, [th.balanced_cycle_amplitude(c) for c in cc], color=st.THEORY, label="a/tanh(a/2) = ηλ")
    ax2.plot(cc, np.sqrt(6 * (cc - 2)), color=st.MUTED, ls="--", label="normal form √(6(ηλ−2))")
    ax2.plot(bal["c"], bal["half_width"], "o", mfc="none", color=st.SIM, label="simulated 2-cycle")
    ax2.set(xlabel="ηλ", ylabel="half-width a", title="balanced data: one 2-cycle, no cascade")
    ax2.legend(loc="upper left", fontsize=7)

    tp = ex.two_point_bifurcation(budget)
    for k, (label, color) in enumerate([("start w* + 1e-3", st.THEORY), ("start w* − 2", st.SIM)]):
        st.bifurcation(ax3, tp["c"], tp["tail"][:, k], size=1.5, color=color, label=label)
    st.threshold(ax3, 1.0, "ηλ = 1")
    ax3.set(xlabel="ηλ", ylabel="w (last 16 iterates)", title="two points z = (250, −1): 3-cycles below 2/λ")
    ax3.legend(loc="lower left", markerscale=5, fontsize=7)
    return st.save(fig, "logistic_cascade", out, claims=["meng2024.period_doubling_cascade", "meng2024.feigenbaum_ratio",
                                                        "meng2024.balanced_two_cycle",
                                                        "steplab.two_points_cycle_below_2_over_lambda"])


def sphere(budget: Budget, out: Path, results: dict) -> list[Path]:
    """The sphere witness: its 2-cycle over the loss on the plane (e1, e2) through w*, and its data directions."""
    wt = th.sphere_witness()
    z, a, w_star = wt["z"], wt["weights"], wt["w_star"]
    traj = ex.sphere_trajectory(budget)["trajectory"]
    fig, (ax1, ax2) = st.figure(2, 1, width=4.6, height=3.6, gridspec_kw={"width_ratios": [1.7, 1.0]})
    x = np.linspace(-1.0, 9.0, 200)
    y = np.linspace(-2.5, 2.5, 120)
    g1, g2 = np.meshgrid(x, y)
    pts = np.repeat(w_star[None], g1.size, axis=0)
    pts[:, 0], pts[:, 1] = g1.ravel(), g2.ravel()
    L = th.loss(pts, z, a).reshape(g1.shape) - th.loss(w_star, z, a)
    ax1.contour(g1, g2, L, levels=np.geomspace(1e-3, 0.3, 12), colors=st.MUTED, linewidths=0.6)
    for k, (label, color) in enumerate([("GD from the cycle + kick", st.SIM), ("GD from w* + kick", st.ACCENT)]):
        ax1.plot(traj[k, :, 0], traj[k, :, 1], "-o", color=color, ms=2, lw=0.5, alpha=0.8, label=label)
    ax1.plot(wt["cycle"][:, 0], wt["cycle"][:, 1], "s", mfc="none", mec=st.THEORY, ms=9,
             label="Newton-polished 2-cycle")
    ax1.plot(w_star[0], w_star[1], "*", color=st.THEORY, ms=10, label="w* (attracting)")
    res = (results or {}).get("meng2024.equal_magnitude_cycle_higher_dim")
    radius = float(res.arrays["radius"]) if res is not None else wt["multiplier"]
    ax1.set(xlabel="w₁ (the invariant axis)", ylabel="w₂ (one of 32 transverse axes)",
            title=f"‖z_i‖ = 1 in R^{wt['d']}: stable 2-cycle at ηλ_max = {wt['c']:g} (|mult| {radius:.3f})")
    ax1.legend(loc="lower right", fontsize=6)
    t = np.linspace(0, 2 * np.pi, 400)
    ax2.plot(np.cos(t), np.sin(t), color=st.MUTED, lw=0.8, label="unit circle")
    ax2.scatter(z[:, 0], z[:, 1], s=4000 * a, color=st.SIM, alpha=0.6, label="z_i projected on (e₁, e₂), area ∝ weight")
    for v in (1 / 6, -1 / 6):
        ax2.axvline(v, color=st.THEORY, ls=":", lw=0.8)
    ax2.annotate("z₁ = ±1/6: the bump (66 points)", (-0.15, -1.25), fontsize=7, color=st.THEORY)
    ax2.annotate("z = e₁: the spike", (0.93, 0.08), fontsize=7, color=st.THEORY, ha="right")
    ax2.set(xlim=(-1.35, 1.35), ylim=(-1.35, 1.35), aspect="equal", xlabel="z·e₁", ylabel="z·e₂",
            title="data directions (all of norm 1 in R³³)")
    ax2.legend(loc="upper left", fontsize=6)
    return st.save(fig, "logistic_sphere", out, claims=["meng2024.equal_magnitude_cycle_higher_dim"])


def certificate(budget: Budget, out: Path) -> list[Path]:
    """h(w) = T(T(w)) − w on a near-critical dataset: no zero but w* at ηλ = 0.999 (certified), four at c' (located),
    with the 2-cycle the simulation reaches at c' marked."""
    sim = ex.near_critical_1d(budget)
    i = int(np.flatnonzero(sim["c"] > 1)[0])
    d = th.cycle_dataset(float(sim["c_built"][i]), K=float(sim["K"][i]))
    zz, a = d["z"], d["weights"]
    fig, ax = st.figure(width=5.2, height=3.4)
    # the certificate's function computed from the map itself (no prediction): not in the theory colour
    for c, color, name in ((0.999, st.PALETTE[2], "ηλ = 0.999: certified, no 2-cycle"),
                           (d["c"], st.ACCENT, f"ηλ = c' = {d['c']:g}: 2-cycles located")):
        cert = th.certify_no_two_cycle_1d(zz, a, c / d["lam"])
        w = np.sort(np.concatenate([np.linspace(-0.06, 0.01, 1500), np.linspace(-2e-4, 2e-4, 1500)]))
        h = np.array([th.gd_step(th.gd_step(v, c / d["lam"], zz, a), c / d["lam"], zz, a)[0] - v for v in w])
        ax.plot(w, h, color=color, lw=1.2, label=name)
        if cert["cycle_points"].size:
            ax.plot(cert["cycle_points"], np.zeros(cert["cycle_points"].size), "|", color=color, ms=12,
                    label="certified 2-cycle points")
    uv = sim["cycle"][i]
    ax.plot(uv, [0.0, 0.0], "o", color=st.SIM, mfc="none", ms=8, label="cycle reached by GD (simulation)")
    ax.axhline(0.0, color=st.MUTED, lw=0.8)
    ax.set(xlabel="w", ylabel="T(T(w)) − w", xlim=(-0.06, 0.01), ylim=(-0.045, 0.065),
           title=f"bump plus spike (K = {d['K']:.0e}): the certificate's function")
    ax.legend(fontsize=7, loc="lower left")
    return st.save(fig, "logistic_certificate", out, claims=["meng2024.global_convergence_1d_certified"])


def make(results: dict, out: Path, budget: Budget) -> list[Path]:
    """Draw the logistic figures at ``budget`` (``results``: claim id -> Result; the cascade figure marks the
    doubling points located in simulation when that claim's result is there)."""
    paths = []
    for draw in (bifurcation, cobweb, basin, witness, amplitude, certificate):
        paths += draw(budget, out)
    paths += cascade(budget, out, results or {})
    paths += sphere(budget, out, results or {})
    return paths
