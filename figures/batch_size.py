"""Figures of the batch-size topic, and the overlay of a user's own batch-size sweep.

Everything drawn comes from the topic's cached experiments (:mod:`paper_checks.batch_size.experiments`) and closed
forms (:mod:`theory.batch_size`); nothing here simulates. Theory is drawn as lines, simulation as markers (with 4
standard errors where it is Monte Carlo), each rule's range of validity shaded.

**The overlay.** :func:`overlay` reads a CSV of a user's sweep -- one row per batch size with the steps it took to
reach a fixed target loss -- fits the hyperbola :math:`S = S_{\\min}(1 + B_{\\rm crit}/B)`
(:func:`theory.batch_size_fit.fit_hyperbola`) and draws it over the sweep with :math:`B_{\\rm crit}`, writing
``<name>.png``, ``<name>.pdf`` and ``<name>.json``. ``python -m figures.batch_size overlay sweep.csv --out DIR`` runs
it from the command line.
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import re
import sys
from pathlib import Path

import numpy as np
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

import theory.batch_size as th
from figures._style import ACCENT, MUTED, SIM, THEORY, figure, save, threshold
from figures.plot import draws
from paper_checks import Budget
from paper_checks.batch_size import experiments as E
from paper_checks.batch_size.scaling_rules import LEVEL

COLUMNS = {
    "batch_size": ("batch_size", "batch", "bs", "b"),
    "steps": ("steps", "steps_to_target", "step", "s"),
}


def _one_step(out: Path, budget: Budget) -> list[Path]:
    """The Monte Carlo best step over B against eta_max / (1 + B_noise / B), and the expected loss curve at B = 4."""
    ex = E.one_step(budget)
    p = E.one_step_problem()
    eta, se = E.ratio_and_se(-ex["d1"], ex["d2"])
    b = ex["batch_size"].astype(float)
    bn = th.noise_scale(p["G"], p["H"], p["Sigma"])
    fine = np.geomspace(0.5, 128, 200)
    fig, axes = figure(2, width=4.2, height=3.3)
    ax = axes[0]
    ax.plot(fine, th.optimal_step(p["G"], p["H"], p["Sigma"], fine), color=THEORY, label="theory η_max/(1 + B_noise/B)")
    ax.errorbar(b, eta, yerr=4 * se, fmt="o", color=SIM, mfc="none", capsize=2, label="Monte Carlo (± 4 SE)")
    threshold(ax, bn, f"B_noise = {bn:.2f}")
    ax.set(xscale="log", xlabel="batch size B", ylabel="best step η_opt", title="one step on a quadratic (d = 20)")
    ax.legend(loc="lower right", fontsize=7)
    ax = axes[1]
    k = 1   # B = 4
    grid = np.linspace(0.0, 2.2 * float(eta[k]), 9)
    mc = grid * ex["d1"][k].mean() + 0.5 * grid**2 * ex["d2"][k].mean()
    line = np.linspace(0.0, 2.2 * float(eta[k]), 200)
    ax.plot(line, th.expected_one_step_loss(p["G"], p["H"], p["Sigma"], float(b[k]), line), color=THEORY,
            label="theory E ΔL(η)")
    ax.plot(grid, mc, "o", color=SIM, mfc="none", label="Monte Carlo mean")
    ax.set(xlabel="step η", ylabel="E L(θ − η g_B) − L(θ)", title=f"B = {int(b[k])}: the expected change")
    ax.legend(loc="upper center", fontsize=7)
    return save(fig, "batch_size_one_step", out, claims=["mccandlish2018.optimal_step_noise_scale"])


def _hyperbola(out: Path, budget: Budget) -> list[Path]:
    """Steps against examples with the hyperbola, and the product over B / B_crit with the 10 % window shaded."""
    ex = E.hyperbola(budget)
    prod = th.hyperbola_product(ex["steps"], ex["examples"], ex["s_min"], ex["e_min"])
    fig, axes = figure(2, width=4.2, height=3.3)
    ax = axes[0]
    fine = np.geomspace(ex["x"][0], ex["x"][-1], 200) * ex["b_crit"]
    s_line = th.hyperbola_steps(fine, ex["s_min"], ex["b_crit"])
    (line,) = ax.plot(fine * s_line / ex["e_min"], s_line / ex["s_min"], color=THEORY, label="theory: hyperbola")
    # the claim's steps at B = x B_crit (x <= 1) sit on the hyperbola at E/E_min = x + 1
    inside = ex["x"] <= 1.0
    draws(line, "mccandlish2018.steps_examples_hyperbola:steps S(B), B <= B_crit", at=ex["x"][inside] + 1.0,
          y=lambda v: np.asarray(v, dtype=float) / ex["s_min"])
    ax.plot(ex["examples"] / ex["e_min"], ex["steps"] / ex["s_min"], "o", color=SIM, mfc="none",
            label="exact greedy recursion")
    ax.set(xscale="log", yscale="log", xlabel="E / E_min", ylabel="S / S_min", title="steps against examples")
    ax.legend(loc="upper right", fontsize=7)
    ax = axes[1]
    ax.axvspan(ex["x"][0] / 1.5, ex["edge_x"], color=ACCENT, alpha=0.3, lw=0, label="within 10 %")
    ax.axhline(1.0, color=THEORY, lw=1.2, label="theory: product 1")
    ax.plot(ex["x"], prod, "o", color=SIM, mfc="none", label="exact greedy recursion")
    ax.set(xscale="log", yscale="log", xlabel="B / B_crit", ylabel="(S/S_min − 1)(E/E_min − 1)",
           title=f"holds up to B = {ex['edge_x']:.2f} B_crit", xlim=(ex["x"][0] / 1.5, ex["x"][-1] * 1.5))
    ax.legend(loc="upper left", fontsize=7)
    return save(fig, "batch_size_hyperbola", out,
                claims=["mccandlish2018.steps_examples_hyperbola", "steplab.hyperbola_window"])


def _rules(out: Path, budget: Budget) -> list[Path]:
    """SGD's floor under the linear rule and signSGD's under the square-root and linear rules, over B."""
    from paper_checks.batch_size.scaling_rules import chain_floors

    fig, axes = figure(2, width=4.2, height=3.3)
    ax = axes[0]
    ex = E.linear_rule(budget)
    est, se = chain_floors(ex)
    b = ex["batch_size"].astype(float)
    bmax = th.linear_rule_limit(E.LIN_LAM, E.LIN_ETA1)
    edge = th.linear_rule_edge(E.LIN_LAM, E.LIN_SIGMA, E.LIN_ETA1, LEVEL)
    fine = np.geomspace(0.8, bmax * 0.97, 200)
    ok = b < bmax
    ax.axvspan(0.8, edge, color=ACCENT, alpha=0.3, lw=0, label="within 10 %")
    (line,) = ax.plot(fine, th.linear_rule_ratio(E.LIN_LAM, E.LIN_SIGMA, E.LIN_ETA1, fine), color=THEORY,
                      label="theory Σσ²/(2 − η₁Bλ) / Σσ²/2")
    base = E.LIN_ETA1 * float(np.sum(E.LIN_SIGMA**2)) / 4
    draws(line, "malladi2022.linear_rule_sgd", at=b[b <= 6], y=lambda v, base=base: np.asarray(v, dtype=float) / base)
    ax.errorbar(b[ok], est[ok] / base, yerr=4 * se[ok] / base, fmt="o", color=SIM, mfc="none", capsize=2,
                label="SGD simulation (± 4 SE)")
    threshold(ax, bmax, "B_max: diverges")
    ax.set(xscale="log", yscale="log", xlabel="batch size B (η = 0.05 B)", ylabel="floor / small-batch floor",
           title="SGD: linear rule", xlim=(0.8, 70))
    ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.legend(loc="upper left", fontsize=7)
    ax = axes[1]
    sg = E.sign_rule(budget)
    est, se = chain_floors(sg)
    base = E.SIGN_ETA1 * math.sqrt(2 * math.pi) / 8
    sign_edge = th.sqrt_rule_edge(1.0, E.SIGN_ETA1, 1.0, LEVEL)
    ax.axvspan(0.8, sign_edge, color=ACCENT, alpha=0.3, lw=0, label="√ rule within 10 %")
    fine = np.geomspace(1, 4096, 40)
    sq_line = [th.sign_rule_floor(1.0, E.SIGN_ETA1 * math.sqrt(x), 1.0, x) / base for x in fine]
    lin_fine = np.geomspace(1, 64, 20)
    lin_line = [th.sign_rule_floor(1.0, E.SIGN_ETA1 * x, 1.0, x) / base for x in lin_fine]
    sq_theory = ax.plot(fine, sq_line, color=THEORY, label="exact chain, η ∝ √B")[0]
    lin_theory = ax.plot(lin_fine, lin_line, color=THEORY, ls="--", label="exact chain, η ∝ B")[0]
    for line, rule, quantity in ((sq_theory, "sqrt", "floor under eta = eta1 sqrt(B)"),
                                 (lin_theory, "linear", "floor under eta = eta1 B")):
        draws(line, f"malladi2022.sqrt_rule_sign:{quantity}", at=sg["batch_size"][sg["rule"] == rule],
              y=lambda v, base=base: np.asarray(v, dtype=float) / base)
    sq = (sg["rule"] == "sqrt") | (sg["rule"] == "far")
    lin = (sg["rule"] == "linear") | ((sg["rule"] == "sqrt") & (sg["batch_size"] == 1))
    ax.errorbar(sg["batch_size"][sq], est[sq] / base, yerr=4 * se[sq] / base, fmt="o", color=SIM, mfc="none",
                capsize=2, label="signSGD, η ∝ √B (± 4 SE)")
    ax.errorbar(sg["batch_size"][lin], est[lin] / base, yerr=4 * se[lin] / base, fmt="s", color=MUTED, mfc="none",
                capsize=2, label="signSGD, η ∝ B (± 4 SE)")
    ax.set(xscale="log", yscale="log", xlabel="batch size B", ylabel="floor / (η₁σ√(2π)/8)",
           title="sign updates: square-root rule", xlim=(0.8, 6000), ylim=(0.7, 200))
    ax.legend(loc="upper left", fontsize=7)
    return save(fig, "batch_size_rules", out, claims=["malladi2022.linear_rule_sgd", "steplab.linear_rule_edge",
                                                      "malladi2022.sqrt_rule_sign", "steplab.sqrt_rule_edge"])


def _half_life(out: Path, budget: Budget) -> list[Path]:
    """Examples until Adam's second moment forgets half its start, over B, for the three beta2 rules."""
    from paper_checks.batch_size.half_life import exact_half_life, half_time

    ex = E.half_life(budget)
    t, se = half_time(ex["mean"], ex["se"])
    tok, tok_se = ex["batch_size"] * t, ex["batch_size"] * se
    edge = th.linear_beta2_edge(E.HL_BETA2, 1.0, 0.9)
    fig, axes = figure(2, width=4.2, height=3.4)
    styles = {"half_life": ("-", "o", SIM, "β₂ = 0.999^B", 512.0), "fixed": ("--", "s", MUTED, "β₂ = 0.999 fixed", 64.0),
              "linear": ("-", "^", SIM, "1 − β₂ = 0.001 B", 512.0)}
    for ax, rules in zip(axes, (("half_life", "fixed"), ("linear",))):
        for rule in rules:
            ls, mk, color, name, top = styles[rule]
            k = ex["rule"] == rule
            fine = np.geomspace(1.0, top, 40)
            beta2 = {"half_life": th.half_life_beta2(E.HL_BETA2, 1.0, fine), "fixed": np.full(fine.size, E.HL_BETA2),
                     "linear": 1 - (1 - E.HL_BETA2) * fine}[rule]
            ax.plot(fine, exact_half_life(beta2, fine), color=THEORY, ls=ls, lw=1.2, label=f"exact EMA, {name}")
            ax.errorbar(ex["batch_size"][k], tok[k], yerr=4 * tok_se[k], fmt=mk, color=color, mfc="none", capsize=2,
                        label="simulated (± 4 SE)" if len(rules) == 1 else f"simulated, {name}")
        ax.set(xscale="log", xlabel="batch size B (examples per step)", xlim=(0.8, 700))
    ax = axes[0]
    ax.set(yscale="log", ylabel="examples until v forgets half", title="half-life held in examples", ylim=(300, 3e5))
    ax.legend(loc="upper left", fontsize=7)
    ax = axes[1]
    ax.axvspan(0.8, edge, color=ACCENT, alpha=0.3, lw=0, label="within 10 % of the half-life")
    ax.set(ylabel="examples until v forgets half", title="first-order rule 1 − β₂ ∝ B", ylim=(400, 820))
    ax.legend(loc="lower left", fontsize=7)
    return save(fig, "batch_size_half_life", out,
                claims=["marek2025.beta2_half_life_in_tokens", "steplab.beta2_linear_rule_window"])


def make(results: dict, out: Path, budget: Budget) -> list[Path]:
    """Draw the batch-size figures at ``budget`` from the cached experiments."""
    out = Path(out)
    return [*_one_step(out, budget), *_hyperbola(out, budget), *_rules(out, budget), *_half_life(out, budget)]


# ----------------------------------------------------------------------------- the overlay of a user's sweep
def _key(name: str) -> str:
    return re.sub(r"[\s\-/.]+", "_", name.strip().lower()).strip("_")


def read_sweep(path: Path | str, *, batch_size: str | None = None, steps: str | None = None) -> dict:
    """The batch-size and steps columns of a CSV with a header row (matched case-insensitively, spaces, '-', '/' and
    '.' read as '_'; :data:`COLUMNS` lists the accepted names). ``ValueError`` naming the role when a column is missing
    or a cell is not a number; the values themselves are checked by :func:`theory.batch_size_fit.fit_hyperbola`."""
    path = Path(path)
    with path.open(newline="", encoding="utf-8-sig") as fh:
        rows = [r for r in csv.reader(fh) if any(c.strip() for c in r)]
    if len(rows) < 2:
        raise ValueError(f"steps: {path} needs a header row and data rows (batch size, steps to the target)")
    header, body = [_key(h) for h in rows[0]], rows[1:]
    out: dict = {"columns": {}}
    for role, chosen in (("batch_size", batch_size), ("steps", steps)):
        names = [_key(chosen)] if chosen is not None else list(COLUMNS[role])
        idx = next((header.index(n) for n in names if n in header), None)
        if idx is None:
            raise ValueError(f"{role}: {path} lacks a {role} column (one of {', '.join(names)}); its columns are "
                             f"{', '.join(rows[0])}")
        values = np.empty(len(body))
        for j, r in enumerate(body):
            cell = r[idx].strip() if idx < len(r) else ""
            try:
                values[j] = float(cell)
            except ValueError:
                raise ValueError(f"{role}: line {j + 2} of {path} has {cell!r}; expected a number") from None
        out[role] = values
        out["columns"][role] = rows[0][idx]
    return out


def overlay(csv_path: Path | str, out: Path | str, *, batch_size: str | None = None, steps: str | None = None,
            name: str = "batch_size_overlay") -> dict:
    """Fit the steps--batch-size hyperbola to a user's sweep and draw it over the sweep, with B_crit and the residuals.

    Returns the fit of :func:`theory.batch_size_fit.fit_hyperbola` plus ``columns`` and ``paths`` (PNG, PDF, JSON).
    """
    from theory.batch_size_fit import fit_hyperbola

    csv_path, out = Path(csv_path), Path(out)
    data = read_sweep(csv_path, batch_size=batch_size, steps=steps)
    order = np.argsort(data["batch_size"])
    b, s = data["batch_size"][order], data["steps"][order]
    fit = fit_hyperbola(b, s)
    fig, (ax, axr) = figure(2, width=4.2, height=3.3)
    fine = np.geomspace(b[0] / 1.5, b[-1] * 1.5, 200)
    ax.plot(fine, fit["s_min"] + fit["e_min"] / fine, color=THEORY, label="fitted hyperbola S_min(1 + B_crit/B)")
    ax.plot(b, s, "o", color=SIM, mfc="none", label="your sweep")
    threshold(ax, fit["b_crit"], f"B_crit = {fit['b_crit']:.3g} ± {fit['b_crit_se']:.2g}")
    ax.set(xscale="log", yscale="log", xlabel="batch size B", ylabel="steps to the target",
           title=f"S_min = {fit['s_min']:.4g}, E_min = {fit['e_min']:.4g}")
    axr.axhline(0.0, color=MUTED, lw=0.8)
    axr.plot(b, fit["residual"], "o", color=SIM, mfc="none", label="steps / fit − 1")
    threshold(axr, fit["b_crit"], "B_crit")
    span = float(max(np.abs(fit["residual"]).max(), 0.01)) * 1.3
    axr.set(xscale="log", ylim=(-span, span), xlabel="batch size B", ylabel="relative residual",
            title=f"rms residual {100 * fit['rms']:.2g} %")
    handles = [h for a in (ax, axr) for h in a.get_legend_handles_labels()[0]]
    fig.legend(handles=handles, loc="outside lower center", ncols=len(handles), fontsize=7)   # below: over no data
    paths = save(fig, name, out)
    record = out / f"{name}.json"
    record.write_text(json.dumps({
        "csv": str(csv_path), "columns": data["columns"], "rows": int(b.size),
        "model": "S = S_min (1 + B_crit / B) (theory.batch_size_fit)",
        "estimates": {k: {"value": fit[k], "se": fit[f"{k}_se"]} for k in ("s_min", "e_min", "b_crit")},
        "rms_residual": fit["rms"], "residual": fit["residual"].tolist()}, indent=2) + "\n")
    return {**fit, "columns": data["columns"], "paths": [*paths, record]}


def main(argv: list[str] | None = None) -> int:
    """``python -m figures.batch_size overlay sweep.csv [--out DIR] [--batch-size COL] [--steps COL]``."""
    parser = argparse.ArgumentParser(prog="python -m figures.batch_size",
                                     description="Fit the steps-batch-size hyperbola to your own sweep and draw it.")
    sub = parser.add_subparsers(dest="command", required=True)
    ov = sub.add_parser("overlay", help="a CSV with batch-size and steps-to-target columns")
    ov.add_argument("csv")
    ov.add_argument("--out", default="figures/out", metavar="DIR")
    ov.add_argument("--batch-size", default=None, metavar="COL")
    ov.add_argument("--steps", default=None, metavar="COL")
    args = parser.parse_args(argv)
    try:
        fit = overlay(args.csv, args.out, batch_size=args.batch_size, steps=args.steps)
    except (TypeError, ValueError, OSError) as err:
        parser.error(str(err).replace("\n", " "))
    print(f"S_min = {fit['s_min']:.6g} ± {fit['s_min_se']:.2g}, E_min = {fit['e_min']:.6g} ± {fit['e_min_se']:.2g}, "
          f"B_crit = {fit['b_crit']:.6g} ± {fit['b_crit_se']:.2g}; rms relative residual {fit['rms']:.3g}")
    print("wrote " + ", ".join(str(p) for p in fit["paths"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
