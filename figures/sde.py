"""Figures of topic ``sde`` (Compagnoni et al. 2025): step-size restrictions, weak error, DCSGD stability,
DSignSGD under Cauchy noise, mean-sign laws.

Every simulated series comes from an ``sde.*`` experiment of :mod:`paper_checks.sde.experiments` (cached, keyed on the
topic's code and the budget); this module evaluates closed forms from :mod:`theory.sde` and draws.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import sympy as sp
from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

import theory.sde as th
from figures import _style as st
from figures.plot import draws
from paper_checks import Budget, get_claim
from paper_checks.sde import experiments as ex
from paper_checks.sde import normalization as sde_normalization
from paper_checks.sde import weak_order_new as sde_weak_order_new

P = "compagnoni2025."
KINDS = ("gd", "first_order", "second_order", "corrected")
LABEL = {"gd": "GD (discrete)", "first_order": "classic 1st-order", "second_order": "classic 2nd-order",
         "corrected": "curvature-corrected"}
COLOR = dict(zip(KINDS, st.PALETTE))


def _eta_ticks(ax, values) -> None:
    """Log axis with exactly the given ticks, labelled plainly (no crowded minor labels)."""
    ax.xaxis.set_major_locator(FixedLocator(list(values)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())


def thresholds(budget: Budget, out: Path) -> list[Path]:
    sw = ex.escape_sweeps(budget)
    fig, (ax, bx) = st.figure(2, 1, width=4.4)
    u, lam = sw["u"], sp.Symbol("lambda", positive=True)
    fine = np.geomspace(u.min(), u.max(), 600)
    for k in KINDS:
        r = sp.lambdify((lam, th.ETA), th.quadratic_log_rate(k, lam, th.ETA), "numpy")
        name = "GD: (2/η) log|1 − ηλ|" if k == "gd" else LABEL[k] + " equation"
        ax.plot(fine, r(1.0, fine) * np.ones_like(fine), color=COLOR[k], label=name)
    sub = slice(None, None, max(1, u.size // 40))
    i = int(np.argmin(np.abs(sw["lambdas"] - 1.0)))
    ax.plot(u[sub], sw["quad_gd_rate"][i][sub], "o", color=COLOR["gd"], mfc="none", label="GD simulated")
    ax.axhline(0, color=st.MUTED, lw=0.8)
    st.threshold(ax, 2.0, "ηλ = 2")
    # headroom above the curves for the legend (lower left, GD's curve ran through it; at ylim 3 its corner did)
    ax.set(xlabel="ηλ  (λ = 1)", ylabel="per-time log-rate of f", ylim=(-7, 5.5),
           title="λx²/2: corrected rate is GD's tangent at ηλ = 2")
    ax.legend(loc="upper left", fontsize=7)
    s = sw["s"]
    for j, k in enumerate(KINDS):
        grew = np.asarray(sw[f"quart_{k}_grew"]).astype(bool)
        bx.plot(s[grew], np.full(grew.sum(), j), "|", color=COLOR[k], ms=10)
        bx.plot(s[~grew], np.full((~grew).sum(), j), "|", color=st.MUTED, ms=4, alpha=0.4)
    for v, text in ((2.0, "s = 2"), (2 / 3, "s = 2/3")):
        bx.axvline(v, color=st.MUTED, ls="--", lw=1)
        bx.annotate(text, (v, -0.75), xytext=(3, 0), textcoords="offset points", color=st.MUTED, fontsize=8)
    bx.set(xscale="log", ylim=(-0.95, 3.5), xlabel="s = ηx₀²  (η = 0.1)", yticks=range(4),
           yticklabels=[LABEL[k] for k in KINDS], title="x⁴/4: where |x| grows (coloured), simulated")
    _eta_ticks(bx, [0.1, 0.3, 1, 3])
    bx.grid(False)
    return st.save(fig, "sde_thresholds", out, claims=[P + "classic_equations_miss_step_restriction",
                                                       P + "quadratic_log_rates", P + "quartic_thresholds"],
                   unaudited="the dark-blue marks are GD's simulated escapes; the log-rates are drawn over ηλ, while "
                             "the checks hold numbers read off them (the slope at ηλ = 2, the gap at ηλ = 1e-3, the "
                             "escape thresholds) and counts of runs")


def weak_error(budget: Budget, out: Path) -> list[Path]:
    w = ex.weak_errors(budget)
    eta = w["eta"]
    fig, ax = st.figure(1, 1, width=4.6)
    for k, order in (("first_order", 1), ("second_order", 2), ("corrected", 1)):
        err, se = np.abs(w[f"{k}_err"]), w[f"{k}_se"]
        ax.errorbar(eta, err, yerr=2 * se, fmt="o", color=COLOR[k], label=f"{LABEL[k]} SDE (simulated)")
        ax.plot(eta, err[0] * (eta / eta[0]) ** order, "-", color=COLOR[k], alpha=0.6, label=f"slope {order}")
    # two decades of room under the smallest error for the legend (placed by "best", it covered the slope-2 line)
    ax.set(xscale="log", yscale="log", xlabel="η", ylabel="|E f(x_K) − E f(X_T)|",
           title="weak error against DSGD on x⁴/4 (T = 1)", ylim=(np.nanmin(np.abs(w["second_order_err"])) / 100, None))
    _eta_ticks(ax, eta)
    ax.legend(fontsize=7, ncol=2, loc="lower right")
    return st.save(fig, "sde_weak_error", out, claims=[P + f"weak_order_{k}" for k in th.DRIFT_KINDS])


def dcsgd_stability(budget: Budget, out: Path) -> list[Path]:
    r = ex.dcsgd_quadratic(budget)
    c = r["c"]
    fig, (ax, bx) = st.figure(2, 1, width=4.4)
    for i, (om, s1) in enumerate(ex.DCSGD_CELLS):
        F = th.normalization_factor(4, np.asarray(om), s1)
        cc = np.linspace(0.5, 3.2, 60)
        rho = [th.dcsgd_ms_factor(v / (ex.DCSGD_A * F), ex.DCSGD_A, 4, np.asarray(om), s1) for v in cc]
        gam = [th.dcsgd_lyapunov(v / (ex.DCSGD_A * F), ex.DCSGD_A, 4, np.asarray(om), s1) for v in cc]
        label = f"ω = {'/'.join(f'{v:g}' for v in sorted(set(om)))}, σ₁ = {s1:g}"
        color = st.PALETTE[i]
        factor = ax.plot(cc, rho, color=color, label=label)[0]
        ax.errorbar(c, r["rho"][i], yerr=2 * r["rho_se"][i], fmt="o", color=color, mfc="none")
        exponent = bx.plot(cc, gam, color=color)[0]
        # each cell's exact curves hold that cell's row of the checks at the simulated c
        draws(factor, P + "dcsgd_ms_threshold:mean-square factor", at=c, y=lambda v, i=i: np.asarray(v, dtype=float)[i])
        draws(exponent, P + "normalization_prevents_divergence:Lyapunov exponent", at=c,
              y=lambda v, i=i: np.asarray(v, dtype=float)[i])
        bx.errorbar(c, r["gamma"][i], yerr=2 * r["gamma_se"][i], fmt="o", color=color, mfc="none")
        bx.plot(cc, 0.5 * np.log(rho), ":", color=color, lw=1)
    for a in (ax, bx):
        st.threshold(a, 2.0, "c = 2")
    ax.axhline(1, color=st.MUTED, lw=0.8)
    bx.axhline(0, color=st.MUTED, lw=0.8)
    ax.set(xlabel="c  (step c / (a(1+V/N)))", ylabel="E (x₊/x)²", title="mean-square factor: lines exact, markers DCSGD")
    bx.set(xlabel="c", ylabel="E log|x₊/x|", title="Lyapunov exponent (dotted: ½ log ρ)")
    ax.legend(fontsize=7)
    return st.save(fig, "sde_dcsgd_stability", out, claims=[P + "dcsgd_ms_threshold",
                                                            P + "normalization_prevents_divergence"])


def divergence(budget: Budget, out: Path) -> list[Path]:
    q = ex.quartic_divergence(budget)
    m = ex.mlp_edge(budget)
    fig, (ax, bx) = st.figure(2, 1, width=4.4)
    om = q["omega"]
    for j, s1 in enumerate(q["sigma1"]):
        ax.plot(om, q["constant_frac"][:, j, -1], "o-", color=st.PALETTE[j + 1], label=f"constant η, σ₁ = {s1:g}")
    ax.plot(om, q["normalized_frac"].max(axis=(1, 2)), "s--", color=st.THEORY, label="normalized (all cells)")
    ax.set(xlabel="ω", ylabel="fraction diverged", title=f"DCSGD on x⁴/4, N = 4, x₀ = {q['x0'][-1]:g}")
    ax.legend(fontsize=7)
    med = np.median(m["ratio"], axis=-1)
    for j, w in enumerate(m["omega"]):
        bx.plot(m["c"], med[:, j], "o-", color=st.PALETTE[j + 1], label=f"ω = {w:g}")
    bx.axhline(1, color=st.MUTED, lw=0.8)
    st.threshold(bx, 2.0, "c = 2")
    bx.set(xscale="log", yscale="log", xlabel="c (normalized rule)", ylabel="final / initial loss (median)",
           title="MLP, N = 8, rand-k")
    _eta_ticks(bx, [1, 4, 16, 64])
    bx.legend(fontsize=7)
    return st.save(fig, "sde_divergence", out, claims=[P + "mlp_pattern"])


def cauchy(budget: Budget, out: Path) -> list[Path]:
    s = ex.cauchy_sign(budget)
    d = ex.cauchy_dcsgd(budget)
    steps = int(s["n_steps"])
    etas = ex.CAUCHY_ETA / np.sqrt(np.arange(steps) + 1.0)
    fig, (ax, bx) = st.figure(2, 1, width=4.4)
    k = s["k"]
    ok = ~s["diverged"]
    ax.plot(k, s["gap"][ok].mean(axis=0), "o", color=st.SIM, mfc="none", label="DSignSGD, mean gap (simulated)")
    late = np.arange(1, steps + 1) >= steps // 8  # the recursion describes the paths once they reached x* = 0
    for law, style in (("cauchy", "-"), ("gaussian", ":")):
        v = th.sign_linear_variance(etas, th.sign_contraction(2.0, 1.0, law), ex.CAUCHY_AGENTS)
        # the Gaussian law is the check's rival: drawn as one
        ax.plot(np.arange(1, steps + 1)[late], v[late], style, color=st.THEORY if law == "cauchy" else st.MUTED,
                label=f"v_k, {law} mean-sign slope (theory)" if law == "cauchy" else f"rival: v_k, {law} mean-sign slope")
    ax.axvspan(steps // 2, steps, color=st.MUTED, alpha=0.15, lw=0)
    ax.set(xscale="log", yscale="log", ylim=(1e-5, 10), xlabel="step k  (shaded: the claim's windows)", ylabel="f − f*",
           title="Cauchy noise, η_k = 0.1/√(k+1), 2cosh x")
    ax.legend(fontsize=7)
    for name, key, color in (("DCSGD", "dcsgd", st.SIM), ("normalized DCSGD", "normalized", st.PALETTE[2])):
        gap, div = d[f"{key}_gap"], d[f"{key}_diverged"]
        g = np.maximum(gap[~div], 1e-16)
        if g.size:
            lo, med, hi = np.percentile(g, [10, 50, 90], axis=0)
            bx.plot(d["k"], med, color=color, label=f"{name}: {div.mean():.0%} diverged")
            bx.fill_between(d["k"], lo, hi, color=color, alpha=0.2)
    bx.set(yscale="log", xlabel="step k", ylabel="f − f* of finite runs (10–50–90 %)", title="DCSGD, same noise")
    bx.legend(fontsize=7)
    return st.save(fig, "sde_cauchy", out, claims=[P + "sign_converges_under_cauchy"],
                   unaudited="v_k is held by the check only through the ratio mean gap / v_k over two windows (value "
                             "1 in each), which no curve draws")


def mean_sign(budget: Budget, out: Path) -> list[Path]:
    r = ex.mean_sign_mc(budget)
    u = r["u"]
    fine = np.linspace(u.min(), u.max(), 400)
    fig, ax = st.figure(1, 1, width=4.6)
    for j, (law, nu) in enumerate(ex.SIGN_LAWS):
        name = {"gaussian": "Gaussian: erf", "student_t": "Student-t₃", "cauchy": "Cauchy: (2/π) arctan"}[law]
        law_line = ax.plot(fine, th.mean_sign(fine, 1.0, law, nu=nu), color=st.PALETTE[j], label=name)[0]
        draws(law_line, P + "mean_sign_laws", at=u, y=lambda v, j=j: np.asarray(v, dtype=float)[j])
        ax.plot(u, r[f"{law}_mean"], "o", color=st.PALETTE[j], mfc="none")
    ax.set(xlabel="g/σ", ylabel="E sign(g + σZ)", title="mean sign: lines closed form, markers Monte Carlo")
    ax.legend(fontsize=7)
    return st.save(fig, "sde_mean_sign", out, claims=[P + "mean_sign_laws"])


def _result(results: dict, name: str, budget: Budget):
    """The claim's Result from ``results`` when the caller has it, else the claim run on the cached experiments."""
    if P + name in results and results[P + name] is not None:
        return results[P + name]
    return get_claim(P + name).check(budget)


MODEL_LABEL = {"discrete": "DCSGD (discrete)", **{k: LABEL[k] + " SDE" for k in th.DRIFT_KINDS}}
MODEL_COLOR = {"discrete": COLOR["gd"], **{k: COLOR[k] for k in th.DRIFT_KINDS}}


def ms_table(results: dict, budget: Budget, out: Path) -> list[Path]:
    """Threshold table per model: the discrete algorithm (measured, theory) and the three SDEs (theory, and the
    root of each simulated SDE's second-moment rate), per cell; models without a threshold drawn at the top."""
    r = _result(results, "ms_threshold_per_model", budget).arrays
    cells = ex.MS_CELLS
    fig, ax = st.figure(1, 1, width=5.2, height=3.4)
    top = 1.6 * max(float(np.max(v[np.isfinite(v)])) for k, v in r.items() if k.startswith("eta_") and k != "eta_measured_se")
    x = np.arange(len(cells))
    for j, model in enumerate(th.MS_MODELS):
        theory = np.asarray(r[f"eta_{model}"], float)
        off = (j - 1.5) * 0.16
        shown = np.where(np.isfinite(theory), theory, top)
        ticks = ax.plot(x + off, shown, "_", ms=14, mew=2, color=MODEL_COLOR[model],
                        label=f"{MODEL_LABEL[model]} (theory)")[0]
        if model == "discrete":  # the check holds 1/η* of DCSGD per cell
            draws(ticks, P + "ms_threshold_per_model:1/eta* of DCSGD", at=x + off,
                  y=lambda v: 1.0 / np.asarray(v, dtype=float))
            ax.errorbar(x + off, r["eta_measured"], yerr=4 * r["eta_measured_se"], fmt="o", mfc="none",
                        color=MODEL_COLOR[model], label="DCSGD one-step factor (simulated)")
        else:
            root = np.asarray(r["sde_root"])[:, j - 1]
            ax.plot(x + off, np.where(np.isfinite(root), root, top), "x", color=MODEL_COLOR[model])
    ax.plot([], [], "x", color=st.MUTED, label="SDE simulated (root of its rate)")
    ax.axhline(top, color=st.MUTED, lw=0.8, ls=":")
    ax.annotate("no threshold", (x[-1] + 0.45, top), ha="right", va="bottom", fontsize=7, color=st.MUTED)
    ax.set(yscale="log", ylabel="mean-square threshold η*", xticks=x, ylim=(0.3, 8 * top),
           xticklabels=[f"a={a:g}, N={n}\nω̄={np.mean(om):g}, σ₁={s1:g}" for a, n, om, s1 in cells],
           title="f = a x²/2, compressed multiplicative noise")
    ax.tick_params(axis="x", labelsize=7)
    ax.legend(fontsize=6, loc="upper left", ncol=2)
    return st.save(fig, "sde_ms_thresholds", out, claims=[P + "ms_threshold_per_model"])


def weak_new_sdes(results: dict, budget: Budget, out: Path) -> list[Path]:
    """Weak error of each new SDE against its discrete algorithm, with a slope-1 guide."""
    res = _result(results, "weak_order_new_sdes", budget)
    r = res.arrays
    eta = r["eta"]
    fig, ax = st.figure(1, 1, width=4.6)
    for j, (method, kind) in enumerate(sde_weak_order_new.WEAK_NEW_CASES):
        err, se = r[f"{method}_{kind}_err"], r[f"{method}_{kind}_se"]
        slope = res.checks[j].slope
        color = st.PALETTE[j]
        ax.errorbar(eta, err, yerr=2 * se, fmt="o", color=color,
                    label=f"{'DCSGD' if method == 'dcsgd' else 'DSignSGD'} vs its {kind.replace('_', '-')} SDE "
                          f"(slope {slope:.2f})")
        guide = ax.plot(eta, err[0] * eta / eta[0], "-", color=color, alpha=0.5)[0]
        draws(guide, f"{P}weak_order_new_sdes:{res.checks[j].quantity}", at=eta,  # weak order 1 through the first point
              y=lambda order, err=err: err[0] * (eta / eta[0]) ** order)
    ax.set(xscale="log", yscale="log", xlabel="η", ylabel="|E f(x_K) − E f(X_T)|",
           title="weak error of the new SDEs on x⁴/4 (lines: slope 1)")
    _eta_ticks(ax, eta)
    ax.legend(fontsize=7)
    return st.save(fig, "sde_weak_new", out, claims=[P + "weak_order_new_sdes"])


def normalization(results: dict, budget: Budget, out: Path) -> list[Path]:
    """The degree of normalization: the mean-square edge in c of the prescribed rule (= 2 at every omega) against
    the rule without its factor (2F), and the affine-noise floor against c/(2 - c)."""
    r = _result(results, "normalization_degree", budget).arrays
    fig, (ax, bx) = st.figure(2, 1, width=4.4)
    om = r["omega"]
    xs = np.arange(om.size)
    ax.errorbar(xs, r["edge"], yerr=4 * r["edge_se"], fmt="o", color=st.SIM, label="prescribed rule (simulated)")
    ax.plot(xs, 2 * r["factor"], "s", mfc="none", color=st.MUTED, label="rule without its factor: 2F")
    ax.axhline(2.0, color=st.THEORY, lw=1, label="c* = 2 (theory)")
    ax.set(yscale="log", xticks=xs, xticklabels=[f"{v:g}" for v in om], xlabel="ω (N = 4, σ₁ = 0.5)",
           ylabel="mean-square edge c*", title="edge of c/(aF): 2 at every ω")
    ax.legend(fontsize=7)
    cc = np.linspace(0.05, 1.9, 200)
    for i, w in enumerate(ex.FLOOR_OMEGAS):
        F = sde_normalization.norm_factor(w)
        floor = bx.plot(cc, [sde_normalization.normalized_floor(c, w, F) for c in cc], color=st.PALETTE[i],
                        label=f"theory, ω = {w:g}")[0]
        draws(floor, P + "normalization_degree:late-time mean loss", at=ex.FLOOR_C,
              y=lambda v, i=i: np.asarray(v, dtype=float)[i])
        bx.errorbar(ex.FLOOR_C, r["floor"][i], yerr=4 * r["floor_se"][i], fmt="o", mfc="none", color=st.PALETTE[i])
    st.threshold(bx, 2.0, "c = 2")
    bx.set(yscale="log", xlabel="c", ylabel="late-time E f", title="affine-noise floor (markers simulated)")
    bx.legend(fontsize=7)
    return st.save(fig, "sde_normalization_degree", out, claims=[P + "normalization_degree"])


def make(results: dict, out: Path, budget: Budget) -> list[Path]:
    """Draw every ``sde`` figure at ``budget`` from the ``sde.*`` experiments; the figures of the newer claims read
    their Result from ``results`` when given (else they run the claim on the cached experiments)."""
    out = Path(out)
    results = results or {}
    paths: list[Path] = []
    for draw in (thresholds, weak_error, dcsgd_stability, divergence, cauchy, mean_sign):
        paths += draw(budget, out)
    for draw in (ms_table, weak_new_sdes, normalization, sign_descent, sign_descent_phi, schedule):
        paths += draw(results, budget, out)
    return paths


def sign_descent(results: dict, budget: Budget, out: Path) -> list[Path]:
    """DSignSGD's one-step descent: the measured critical step against steplab's sufficient step per start, and, along
    a ray of 2cosh in d = 8, the exact critical step against the sufficient step, its rivals and Theorem 4.3's step."""
    r = _result(results, "sign_descent_condition", budget).arrays
    fig, (ax, bx) = st.figure(2, 1, width=4.4)
    names = [c[0] for c in ex.SD_CASES]
    for j, name in enumerate(th.SIGN_DESCENT_FUNCTIONS):
        k = np.array([n == name for n in names])
        ax.errorbar(r["suff"][k], r["crit"][k], yerr=4 * r["crit_se"][k], fmt="o", mfc="none", color=st.PALETTE[j],
                    label={"quadratic": "x²/2", "quartic": "x⁴/4", "cosh2": "2cosh x"}[name])
    lim = np.array([r["suff"].min() / 2, r["suff"].max() * 2])
    ax.plot(lim, lim, color=st.MUTED, lw=1, ls="--", label="h* = h_suff")
    ax.set(xscale="log", yscale="log", xlabel="steplab's sufficient step h_suff", ylabel="critical step h* (simulated)",
           title="h* ≥ h_suff at every start (= on the quadratic)")
    ax.legend(fontsize=7)
    args = (ex.SD_SIGMA, ex.SD_AGENTS, "student_t", ex.SD_NU)
    L0, L1 = th.sign_l0l1("cosh2")
    ts = np.geomspace(3e-3, 1.5, 40)
    G, crit, rules = [], [], {rule: [] for rule in th.SIGN_STEP_RULES}
    for t in ts:
        x = np.full(8, t)
        g = 2 * np.sinh(x)
        G.append(np.linalg.norm(g))
        crit.append(th.sign_critical_step(x, "cosh2", *args))
        for rule in rules:
            rules[rule].append(th.sign_sufficient_step(g, ex.SD_SIGMA, L0, L1, ex.SD_AGENTS, "student_t", ex.SD_NU,
                                                       rule=rule))
    bx.plot(G, crit, color=st.THEORY, lw=2, label="exact critical step h*")
    styles = {"steplab": ("-", "steplab's h_suff"), "no_noise": (":", "rival: no noise share d/N"),
              "no_sqrt_d": ("-.", "rival: no √d")}
    for j, (rule, (ls, label)) in enumerate(styles.items()):
        bx.plot(G, rules[rule], ls, color=st.PALETTE[j + 1], label=label)
    bx.axhline(th.theorem43_step(L0, L1, 8, *args), color=st.MUTED, ls="--", lw=1, label="Theorem 4.3's ℓ/K")
    bx.set(xscale="log", yscale="log", xlabel="‖∇f‖ (2cosh, d = 8, x on the diagonal)", ylabel="step h",
           title="h* ~ ‖∇f‖² near the minimizer")
    bx.legend(fontsize=6)
    return st.save(fig, "sde_sign_descent", out, claims=[P + "sign_descent_condition"],
                   unaudited="the exact critical step is drawn along a ray of 2cosh in d = 8, where no check has "
                             "points; the checks hold h* at the sampled starts, plotted against h_suff on the left")


def sign_descent_phi(results: dict, budget: Budget, out: Path) -> list[Path]:
    """Is the Grönwall factor phi needed? On the extremal ridge F(<u,x>) and radial F(|x|): h*/h_{1/2} against
    phi(L1 h_{1/2} sqrt d) at every start of the exact search (never below 1), and h*/h_{1/2}, h*/h_phi along L1|x|
    for Student-t noise, N = 8, |grad_j|/sigma = 0.5."""
    r = _result(results, "sign_descent_phi_slack", budget).arrays
    fig, (ax, bx) = st.figure(2, 1, width=4.4)
    for j, d in enumerate((1, 2, 8, 32)):
        for shape, marker in (("ridge", "o"), ("radial", "x")):
            k = (r["d"] == d) & (r["shape"] == shape)
            if shape == "radial" and d == 1:
                continue          # in d = 1 the radial function is the ridge
            ax.plot(r["phi_half"][k], r["ratio_half"][k], marker, ms=3, mfc="none", color=st.PALETTE[j],
                    label=f"{shape}, d = {d}")
    ax.axhline(1.0, color=st.MUTED, ls="--", lw=1)
    ax.annotate("h* = h_1/2 (below it the φ = 1/2 step ascends)", (1.0, 1.0), xytext=(0, -10), textcoords="offset points",
                color=st.MUTED, fontsize=7)
    ax.set_ylim(0.8, None)
    ax.set(yscale="log", xlabel="φ(L₁ h_1/2 √d) at the φ = 1/2 step", ylabel="h* / h_1/2",
           title="extremal functions: the φ = 1/2 step never ascends")
    ax.legend(fontsize=6, ncol=4, loc="upper center", bbox_to_anchor=(0.5, -0.2))  # below: the scatter fills the panel
    noise = "student_t_" + f"{ex.PHI_NU:g}"
    lines = ((1, "ridge", "d = 1"), (8, "ridge", "ridge, d = 8"), (8, "radial", "radial, d = 8"))
    for j, (d, shape, label) in enumerate(lines):
        k = (r["noise"] == noise) & (r["n_agents"] == ex.PHI_AGENTS) & (r["u"] == 0.5) & (r["d"] == d) \
            & (r["shape"] == shape)
        order = np.argsort(r["a"][k])
        color = st.PALETTE[j + 1]  # measured ratios: not the theory colour
        bx.plot(r["a"][k][order], r["ratio_half"][k][order], "-o", ms=3, color=color, label=f"h*/h_1/2, {label}")
        bx.plot(r["a"][k][order], r["ratio_phi"][k][order], ":s", ms=3, color=color, label=f"h*/h_φ, {label}")
    bx.axhline(1.0, color=st.MUTED, ls="--", lw=1)
    bx.set(xscale="log", yscale="log", xlabel="L₁‖x‖, x on the diagonal (L₀ = L₁ = 1)",
           ylabel="critical step / allowed step", title=f"Student-t ν = {ex.PHI_NU:g}, N = {ex.PHI_AGENTS}, |∂ⱼf|/σ = 0.5")
    bx.legend(fontsize=6, ncol=2)
    return st.save(fig, "sde_sign_descent_phi", out, claims=[P + "sign_descent_phi_slack"])


def schedule(results: dict, budget: Budget, out: Path) -> list[Path]:
    """Pre-scheduled 1/sqrt(t+1) steps on x^4/4: simulated divergence fractions against the s-chain's law, the constant
    step's law, and the noise-free edges."""
    r = _result(results, "schedule_needs_normalization", budget).arrays
    fig, ax = st.figure(1, 1, width=4.6)
    k = r["s0"].size
    s = np.unique(np.concatenate([np.geomspace(0.8, 8.0, 120), r["s0"]]))  # the law read at the checked s0 exactly
    args = (ex.SCHED_AGENTS, ex.SCHED_OMEGA, ex.SCHED_SIGMA1)
    (law,) = ax.plot(s, th.quartic_schedule_divergence(s, "inv_sqrt", *args), color=st.THEORY,
                     label="η₀/√(t+1), σ₁ = 0.5: s-chain law")
    draws(law, P + "schedule_needs_normalization:diverged fraction of pre-scheduled DCSGD per s0", at=r["s0"],
               y=lambda v: np.asarray(v, dtype=float)[:k])
    ax.plot(s, th.quartic_schedule_divergence(s, "constant", *args), ":", color=st.PALETTE[2],
            label="constant step's law")
    ax.errorbar(r["s0"], r["frac"][:k], yerr=4 * r["frac_se"][:k], fmt="o", mfc="none", color=st.SIM,
                label="simulated (N = 4, ω = 1)")
    aff = (ex.SCHED_AGENTS, ex.SCHED_OMEGA) + ex.SCHED_AFFINE
    ax.plot(s, th.quartic_schedule_divergence_affine(np.sqrt(s / ex.SCHED_ETA0), ex.SCHED_ETA0, "inv_sqrt", *aff),
            color=st.PALETTE[3], label=f"affine σ₀ = {ex.SCHED_AFFINE[0]:g}, σ₁ = {ex.SCHED_AFFINE[1]:g}: |x|-chain law")
    ax.errorbar(r["s0"], r["frac"][k:], yerr=4 * r["frac_se"][k:], fmt="s", mfc="none", color=st.PALETTE[3])
    st.threshold(ax, th.quartic_schedule_threshold("inv_sqrt"), "s* (no noise)")
    ax.set(xscale="log", xlabel="s₀ = η₀x₀²", ylabel="P(diverge)", ylim=(-0.02, 1.05),
           title="x⁴/4: η₀/√(t+1) still diverges")
    _eta_ticks(ax, [1, 2, 3, 4, 6])
    ax.legend(fontsize=7, loc="lower right")
    return st.save(fig, "sde_schedule_divergence", out, claims=[P + "schedule_needs_normalization"])
