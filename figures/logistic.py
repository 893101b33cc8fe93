"""Figures for GD cycles on logistic regression (Meng et al. 2024)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.colors import BoundaryNorm, ListedColormap

import sims.logistic as sim
import theory.logistic as th
from figures import _style as st
from sims.cache import cached

CASCADE = ([1.0, -1.0], [0.75, 0.25])  # z = +-1, 3/4 of the weight on +1: a full period-doubling cascade


def _bifurcation(budget: str, fresh: bool) -> dict:
    n_c = 700 if budget == "full" else 120

    def compute():
        z, a = CASCADE
        w_star, lam = th.minimizer(z, a)
        cs1 = np.linspace(1.5, 3.1, n_c)
        tail1 = sim.gd(z, a, cs1 / lam, [w_star[0] + 0.3], 6000, keep_last=64)[:, 0, :, 0]
        d = th.cycle_dataset(1.5)
        cs2 = np.linspace(0.6, 2.4, n_c)
        inits = [d["w_star"] + 1e-3, d["u"]]
        tail2 = sim.gd(d["z"], d["weights"], cs2 / d["lam"], inits, 6000, keep_last=16)[..., 0]
        return {"cs1": cs1, "tail1": tail1, "w1": w_star[0], "c2": th.period_doubling_step(z, a),
                "cs2": cs2, "tail2": tail2, "w2": d["w_star"], "J": d["J"], "lam2": d["lam"]}

    return cached(f"fig.logistic.bifurcation.{budget}", {"n_c": n_c}, compute, fresh=fresh)


def _basin(budget: str, fresh: bool) -> dict:
    n = 240 if budget == "full" else 60

    def compute():
        d = th.cycle_dataset(1.5)
        cs = np.linspace(0.8, 2.8, n)
        inits = d["w_star"] + np.linspace(-0.4, 0.4, n)
        att = sim.attractors(d["z"], d["weights"], cs / d["lam"], inits, n_steps=6000, max_period=8)
        return {"cs": cs, "inits": inits, "period": att["period"], "w_star": d["w_star"]}

    return cached(f"fig.logistic.basin.{budget}", {"n": n}, compute, fresh=fresh)


def _amplitudes(budget: str, fresh: bool) -> dict:
    n_mu = 14 if budget == "full" else 6

    def compute():
        out = {}
        mus = np.logspace(-4, -0.7, n_mu)
        for tag, (z, a) in {"p30": ([1.0, -1.0], [0.3, 0.7]), "p75": CASCADE}.items():
            co = th.normal_form_coefficients(z, a)
            att = sim.attractors(z, a, (2 + mus) / co["lam"], [co["w_star"] + 0.05], n_steps=120_000,
                                 max_period=2, tol=1e-11)
            pts = att["points"][:, 0, :2, 0]
            out[f"{tag}_amp"] = np.where(att["period"][:, 0] == 2, (pts.max(1) - pts.min(1)) / 2, np.nan)
            out[f"{tag}_coef"] = co["amplitude_coefficient"]
        out["mu"] = mus
        return out

    return cached(f"fig.logistic.amplitude.{budget}", {"n_mu": n_mu}, compute, fresh=fresh)


def bifurcation(data: dict, out: Path) -> list[Path]:
    fig, (ax1, ax2) = st.figure(2, 1, width=4.6, height=3.4)
    cs1, tail1 = data["cs1"], data["tail1"]
    ax1.plot(np.repeat(cs1, tail1.shape[1]), tail1.ravel() - data["w1"], ",", color=st.SIM, alpha=0.6)
    st.threshold(ax1, 2.0, "2/λ")
    st.threshold(ax1, float(data["c2"]), "c₂ (theory)", color=st.ACCENT)
    ax1.set(xlabel="γλ", ylabel="w − w*  (last 64 iterates)", title="z = ±1, weights 3/4, 1/4: period doubling")

    cs2, tail2 = data["cs2"], data["tail2"]
    for k, (label, color) in enumerate([("init w* + 1e-3", st.THEORY), ("init in the cycle's basin", st.SIM)]):
        ax2.plot(np.repeat(cs2, tail2.shape[2]), tail2[:, k].ravel(), ".", ms=1.2, color=color, label=label)
    # piecewise-linear cycle of the fixed dataset, where it exists: |w*| < J(c-1)/(lambda(2-c))
    cc = np.linspace(1.0001, 1.999, 400)
    J, lam, w2 = data["J"], data["lam2"], data["w2"]
    exists = abs(w2) < J * (cc - 1) / (lam * (2 - cc))
    u = np.where(exists, w2 - J / (lam * (2 - cc)), np.nan)
    v = np.where(exists, w2 + J * (cc - 1) / (lam * (2 - cc)), np.nan)
    ax2.plot(cc, u, color=st.THEORY, lw=1, label="piecewise-linear cycle (theory)")
    ax2.plot(cc, v, color=st.THEORY, lw=1)
    st.threshold(ax2, 1.0, "1/λ")
    st.threshold(ax2, 2.0, "2/λ")
    ax2.set(xlabel="γλ", ylabel="w (last 16 iterates)", title="bump + spike dataset (built for γλ = 1.5)",
            ylim=(-0.45, 0.25))
    ax2.legend(loc="lower left", markerscale=6)
    return st.save(fig, "logistic_bifurcation", out)


def cobweb(out: Path) -> list[Path]:
    d = th.cycle_dataset(1.5)
    w = np.linspace(-0.16, 0.07, 800)
    T = np.array([th.gd_step(x, d["step"], d["z"], d["weights"])[0] for x in w])
    traj = sim.gd(d["z"], d["weights"], [d["step"]], [0.05], 40)[0, 0, :, 0]
    traj = np.concatenate([[0.05], traj])
    fig, ax = st.figure(width=4.4, height=4.0)
    ax.plot(w, T, color=st.THEORY, label="GD map T(w)")
    ax.plot(w, w, color=st.MUTED, lw=0.8, label="T(w) = w")
    # cobweb path: (w_t, w_t) -> (w_t, w_{t+1}) -> (w_{t+1}, w_{t+1})
    ax.plot(np.repeat(traj, 2)[:-1], np.repeat(traj, 2)[1:], color=st.SIM, lw=0.7, alpha=0.8)
    ax.plot(traj[:-1], traj[1:], "o", color=st.SIM, ms=2.5, label="simulated iterates")
    ax.plot([d["u"], d["v"]], [d["v"], d["u"]], "s", mfc="none", mec=st.THEORY, ms=8, label="predicted 2-cycle")
    ax.axvline(d["w_star"], color=st.MUTED, ls=":", lw=1)
    ax.annotate("w*", (d["w_star"], -0.155), color=st.MUTED, fontsize=8)
    ax.set(xlabel="w", ylabel="T(w)", title="cobweb, γλ = 1.5 (stable 2-cycle, w* also attracting)",
           xlim=(w[0], w[-1]), ylim=(w[0], w[-1]))
    ax.legend(loc="upper left")
    return st.save(fig, "logistic_cobweb", out)


def basin(data: dict, out: Path) -> list[Path]:
    period = np.asarray(data["period"]).T  # rows: init, cols: c
    levels = [-1, 0, 1, 2, 4, 8]
    cat = np.full(period.shape, 6, dtype=int)  # 6 = other period
    for k, p in enumerate(levels):
        cat[period == p] = k
    colors = ["#000000", "#bdbdbd", st.THEORY, st.SIM, st.ACCENT, "#00798c", "#8d6cab"]
    labels = ["diverged", "no period ≤ 8", "fixed point", "2-cycle", "4-cycle", "8-cycle", "other"]
    fig, ax = st.figure(width=5.2, height=3.6)
    cs, inits = data["cs"], data["inits"] - data["w_star"]
    ax.pcolormesh(cs, inits, cat, cmap=ListedColormap(colors), norm=BoundaryNorm(np.arange(-0.5, 7.5), 7),
                  shading="nearest", rasterized=True)
    st.threshold(ax, 1.0, "1/λ", color="white")
    st.threshold(ax, 2.0, "2/λ", color="white")
    handles = [ax.plot([], [], "s", color=c, label=l)[0] for c, l in zip(colors, labels) if np.any(cat == colors.index(c))]
    ax.legend(handles=handles, loc="upper left", fontsize=7, framealpha=0.9)
    ax.set(xlabel="γλ", ylabel="w₀ − w*", title="attractor reached (bump + spike dataset)")
    ax.grid(False)
    return st.save(fig, "logistic_basin", out)


def witness(out: Path) -> list[Path]:
    wt = th.witness_2d()
    z, a, step, p = wt["z"], wt["weights"], wt["step"], wt["cycle_point"]
    w_star, lam = th.minimizer(z, a)
    g1, g2 = np.meshgrid(np.linspace(-0.1, 0.25, 220), np.linspace(-0.17, 0.17, 220))
    grid = np.stack([g1.ravel(), g2.ravel()], 1)
    L = np.array([th.loss(x, z, a) for x in grid]).reshape(g1.shape)
    traj = sim.gd(z, a, [step], (p + np.array([0.03, 0.02]))[None], 30)[0, 0]
    traj = np.concatenate([(p + np.array([0.03, 0.02]))[None], traj])
    fig, ax = st.figure(width=4.6, height=4.2)
    cs = ax.contour(g1, g2, L - th.loss(w_star, z, a), levels=np.geomspace(1e-5, 2e-2, 12), colors=st.MUTED,
                    linewidths=0.6)
    ax.clabel(cs, fontsize=6, fmt="%.0e")
    for n in (z[4] / np.linalg.norm(z[4]), z[5] / np.linalg.norm(z[5])):
        t = np.linspace(-0.3, 0.3, 2)
        ax.plot(-n[1] * t, n[0] * t, color=st.ACCENT, lw=1, ls="--")
    ax.plot(traj[:, 0], traj[:, 1], "-o", color=st.SIM, ms=3, lw=0.7, label="GD iterates (simulation)")
    pred = th.construct_witness_2d(c=wt["c"], theta_deg=wt["theta_deg"], J=wt["J"], K=wt["K"],
                                   offset=wt["offset"])["predicted_cycle"]
    ax.plot(pred[:, 0], pred[:, 1], "s", mfc="none", mec=st.THEORY, ms=9, label="piecewise-linear cycle (theory)")
    ax.plot(*w_star, "*", color=st.THEORY, ms=10, label="w* (attracting)")
    ax.set(xlim=(-0.1, 0.25), ylim=(-0.17, 0.17), xlabel="w₁", ylabel="w₂", aspect="equal",
           title=f"2-D stable 2-cycle at γλ_max = {step * lam:.2f} < 1")
    ax.legend(loc="lower right", fontsize=7)
    return st.save(fig, "logistic_witness_2d", out)


def amplitude(data: dict, out: Path) -> list[Path]:
    fig, ax = st.figure(width=4.4, height=3.4)
    mu = data["mu"]
    for tag, label, color in [("p30", "weights 0.3 / 0.7", st.THEORY), ("p75", "weights 0.75 / 0.25", st.SIM)]:
        ax.loglog(mu, data[f"{tag}_coef"] * np.sqrt(mu), color=color, label=f"normal form, {label}")
        ax.loglog(mu, data[f"{tag}_amp"], "o", mfc="none", color=color, label=f"simulation, {label}")
    ax.set(xlabel="γλ − 2", ylabel="2-cycle half-width A", title="flip normal form: A ≈ √((c−2)/(a²+b))")
    ax.legend(fontsize=7)
    return st.save(fig, "logistic_normal_form", out)


def make(results: dict, out: Path, *, budget: str = "full", fresh: bool = False) -> list[Path]:
    paths = []
    paths += bifurcation(_bifurcation(budget, fresh), out)
    paths += cobweb(out)
    paths += basin(_basin(budget, fresh), out)
    paths += witness(out)
    paths += amplitude(_amplitudes(budget, fresh), out)
    return paths
