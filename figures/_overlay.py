"""``steplab overlay run.csv``: the noisy quadratic model fitted to your own logged run, drawn over it.

Reads a CSV with a header row (:func:`read_log`), fits the four-parameter noisy quadratic model of
:mod:`theory.noisy_quadratic_fit` along the logged learning-rate schedule (:func:`theory.noisy_quadratic_fit.fit_log`:
floor, loss at the minimum, initial excess, gradient noise and spectral exponent, each with a standard error, and a
goodness-of-fit verdict), draws the fit over the log and writes ``<name>.png``, ``<name>.pdf`` and ``<name>.json``
(:func:`overlay`). The command line is :func:`add_arguments` and :func:`run` (``steplab overlay --help``); it imports no
JAX.

Columns are found by name, case-insensitively, with spaces, ``-``, ``/`` and ``.`` read as ``_`` (``Train Loss`` and
``train/loss`` are ``train_loss``): :data:`COLUMNS` lists the names accepted for each role, in order of preference;
``--step``, ``--lr`` and ``--loss`` name any other column.
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import re
from pathlib import Path

import numpy as np

__all__ = ["COLUMNS", "read_log", "overlay", "summary", "add_arguments", "run", "DESCRIPTION"]

COLUMNS = {
    "step": ("step", "steps", "iter", "iteration", "global_step", "t"),
    "lr": ("lr", "learning_rate", "eta", "step_size"),
    "loss": ("loss", "train_loss", "training_loss", "objective"),
}
DESCRIPTION = ("Fit the noisy quadratic model to a logged run (CSV with step, learning-rate and loss columns) along "
               "its own schedule; print every fitted parameter with its standard error and whether the model "
               "describes the log; draw the fit over the log.")
_MEANING = {
    "floor": "constant-lr limit of the loss at lr {eta:.4g} (the log's peak rate)",
    "L_star": "loss at the minimum (what a decay to zero approaches)",
    "A": "initial excess loss, sum of lambda x0^2 / 2 over the modes",
    "S": "gradient-noise variance per step, sum of sigma^2 over the modes",
    "p": "spectral exponent: excess per unit log-curvature grows like lambda^p",
}
_Z95 = 1.959964  # two-sided 95 % normal quantile


def _key(name: str) -> str:
    """A header name as matched: stripped, lower case, runs of spaces, '-', '/', '.' read as '_'."""
    return re.sub(r"[\s\-/.]+", "_", name.strip().lower()).strip("_")


def _columns(header: list[str], chosen: dict[str, str | None], path: Path) -> dict[str, int]:
    """Role -> column index: the column named by the option, else the first accepted name present."""
    keys = [_key(h) for h in header]
    found = {}
    for role, names in COLUMNS.items():
        want = chosen.get(role)
        candidates = [_key(want)] if want is not None else list(names)
        for name in candidates:
            hits = [i for i, k in enumerate(keys) if k == name]
            if len(hits) > 1:
                raise ValueError(f"{role}: {path} has {len(hits)} columns named like {name!r} "
                                 f"({', '.join(repr(header[i]) for i in hits)}); name one with --{role}")
            if hits:
                found[role] = hits[0]
                break
        else:
            what = f"the column {want!r} given by --{role}" if want is not None else \
                f"a {role} column (one of {', '.join(names)}, any case)"
            raise ValueError(f"{role}: {path} lacks {what}; its columns are {', '.join(map(repr, header))}"
                             + ("" if want is not None else f"; name yours with --{role} COL"))
    roles = list(found)
    for i, a in enumerate(roles):
        for b in roles[i + 1:]:
            if found[a] == found[b]:
                raise ValueError(f"{b}: the column {header[found[b]]!r} is already the {a} column; "
                                 f"expected a different column for each of step, lr, loss")
    return found


def read_log(path: Path | str, *, step: str | None = None, lr: str | None = None, loss: str | None = None) -> dict:
    """The step, learning-rate and loss columns of a CSV file with a header row (any order; other columns ignored).

    ``step``, ``lr``, ``loss``: the column to use for that role (matched like the accepted names), overriding
    :data:`COLUMNS`. Returns ``{"step", "lr", "loss"}`` as float arrays and ``columns`` (role -> header name).
    ``ValueError`` naming the role when a column is missing, ambiguous or shared, or a cell is not a number (with its
    line and value); the values themselves are checked by :func:`theory.noisy_quadratic_fit.fit_log`.
    """
    path = Path(path)
    with path.open(newline="", encoding="utf-8-sig") as fh:
        rows = [r for r in csv.reader(fh) if any(c.strip() for c in r)]
    if not rows:
        raise ValueError(f"step: {path} is empty; expected a header row naming step, lr and loss columns")
    header, body = rows[0], rows[1:]
    cols = _columns(header, {"step": step, "lr": lr, "loss": loss}, path)
    if not body:
        raise ValueError(f"loss: {path} has a header but no data rows")
    out: dict = {"columns": {role: header[i] for role, i in cols.items()}}
    for role, i in cols.items():
        values = np.empty(len(body))
        for j, r in enumerate(body):
            cell = r[i].strip() if i < len(r) else ""
            try:
                values[j] = float(cell)
            except ValueError:
                raise ValueError(f"{role}: line {j + 2} of {path} has {cell!r} in column {header[i]!r}; "
                                 f"expected a number") from None
        out[role] = values
    return out


def _interval(name: str, value: float, se: float) -> tuple[float, float]:
    """value ± 1.96 SE, cut to where the parameter can lie (L_star, A, S and the floor >= 0; p in its range)."""
    from theory.noisy_quadratic_fit import P_RANGE

    lo, hi = value - _Z95 * se, value + _Z95 * se
    return (max(lo, P_RANGE[0]), min(hi, P_RANGE[1])) if name == "p" else (max(lo, 0.0), hi)


def _pm(value: float, se: float, interval: tuple[float, float]) -> tuple[str, str, str]:
    """``value``, ``se`` and the interval as strings, the value rounded to the SE's second significant digit."""
    if not (np.isfinite(se) and se > 0):
        return f"{value:.6g}", f"{se:.2g}", f"[{interval[0]:.6g}, {interval[1]:.6g}]"
    digits = max(0, 1 - math.floor(math.log10(se)))
    fmt = f"{{:.{digits}f}}" if digits <= 8 else "{:.3e}"
    return fmt.format(value), fmt.format(se), f"[{fmt.format(interval[0])}, {fmt.format(interval[1])}]"


def summary(fit: dict) -> str:
    """The printout: each estimate with its standard error and 95 % interval (value ± 1.96 SE, cut to the parameter's
    range), the verdict, the residual."""
    lines = [(f"noisy quadratic model (power-law spectrum, {fit['lam'].size} curvatures), fitted by weighted least "
              "squares; value ± one standard error (Gauss-Newton, residual variance from the fit), 95 % interval:")]
    for name in ("floor", "L_star", "A", "S", "p"):
        v, se = fit["estimates"][name]
        value, err, interval = _pm(v, se, _interval(name, v, se))
        bound = "  (at a bound of the fit: one-sided)" if name in fit["at_bound"] else ""
        lines.append(f"  {name:<7}{value:>14} ± {err:<9} {interval:<26} {_MEANING[name].format(eta=fit['floor_eta'])}"
                     f"{bound}")
    rms = float(np.sqrt(np.mean(fit["residual"] ** 2)))
    lines.append(fit["verdict"])
    lines.append(f"relative residual (RMS) {rms:.3%}, the log's own high-frequency noise {fit['noise']:.3%}")
    return "\n".join(lines)


def _scale_y(ax, lo: float, hi: float) -> None:
    """Log y over more than a decade (ticks at 1, 2, 5), else linear; limits ``lo..hi`` with a small margin."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    if lo > 0 and hi / lo > 10:
        ax.set_yscale("log")
        ax.set_ylim(lo / 1.1, hi * 1.1)
        if hi / lo < 1e3:  # a few decades: label 1-2-5 so that more than one tick is read
            ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
            ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.yaxis.set_minor_formatter(NullFormatter())
    else:
        pad = 0.05 * (hi - lo) or 0.05 * abs(hi) or 1.0
        ax.set_ylim(lo - pad, hi + pad)


def _draw(data: dict, fit: dict, name: str, out: Path) -> list[Path]:
    """The loss with the fit, its 95 % band and the schedule (twin axis); the relative residual against the noise."""
    from figures.plot import ACCENT, MUTED, SIM, THEORY, figure, save

    step, loss, lr = data["step"], data["loss"], data["lr"]
    pred, band = fit["predicted"], _Z95 * fit["predicted_se"]
    fig, (ax, axr) = figure(2, width=4.4, height=3.4)
    ax.plot(step, loss, ".", ms=2.5, color=SIM, label="logged loss", zorder=1)
    ax.fill_between(step, pred - band, pred + band, color=THEORY, alpha=0.25, lw=0, zorder=2)
    ax.plot(step, pred, color=THEORY, lw=1.3, label="NQM fit (band: 95 %)", zorder=3)
    ax.set_xlim(step[0], step[-1])
    _scale_y(ax, float(min(loss.min(), (pred - band).min())), float(max(loss.max(), (pred + band).max())))
    floor, floor_se = fit["estimates"]["floor"]
    ax.set(xlabel="step", ylabel="loss", title=f"floor {floor:.4g} ± {floor_se:.2g} at lr {fit['floor_eta']:.3g}")
    ax2 = ax.twinx()
    ax.set_zorder(ax2.get_zorder() + 1)  # the loss over the schedule: the loss axes on top, without its background
    ax.patch.set_visible(False)
    ax2.spines["right"].set_visible(True)
    ax2.grid(False)
    ax2.plot(step, lr, color=MUTED, lw=1.0, label="learning rate (right axis)")
    ax2.set_ylim(0, 1.08 * lr.max())
    ax2.set_ylabel("learning rate", color=MUTED)
    r, tau = fit["residual"], fit["noise"]
    axr.axhspan(-2 * tau, 2 * tau, color=ACCENT, alpha=0.3, lw=0, label="± 2 × the log's own noise")
    axr.plot(step, r, ".", ms=2.5, color=SIM, label="(log − fit) / fit")
    axr.axhline(0.0, color=MUTED, lw=0.8)
    axr.set_xlim(step[0], step[-1])
    span = float(max(np.abs(r).max(), 2 * tau)) * 1.1 or 1.0
    axr.set_ylim(-span, span)
    word = "describes" if fit["describes"] else "does not describe"
    axr.set(xlabel="step", ylabel="relative residual",
            title=f"the NQM {word} the log\nreduced χ² {fit['chi2_reduced']:.3g} (threshold {fit['chi2_threshold']:.3g})")
    handles = [h for a in (ax, ax2, axr) for h in a.get_legend_handles_labels()[0]]
    fig.legend(handles=handles, loc="outside lower center", ncols=len(handles), fontsize=7)  # below: over no data
    return save(fig, name, out)


def _record(fit: dict, data: dict, csv_path: Path) -> dict:
    """The JSON record: inputs, estimates with standard errors and 95 % intervals, the verdict."""
    return {"csv": str(csv_path), "columns": data["columns"], "rows": int(data["step"].size),
            "model": "noisy quadratic, power-law spectrum (theory.noisy_quadratic_fit)",
            "floor_lr": fit["floor_eta"],
            "estimates": {k: {"value": v, "se": se, "interval_95": list(_interval(k, v, se))}
                          for k, (v, se) in fit["estimates"].items()},
            "at_bound": fit["at_bound"], "noise": fit["noise"], "chi2_reduced": fit["chi2_reduced"],
            "chi2_threshold": fit["chi2_threshold"], "describes": bool(fit["describes"]), "verdict": fit["verdict"]}


def overlay(csv_path: Path | str, out: Path | str, *, step: str | None = None, lr: str | None = None,
            loss: str | None = None, n_modes: int = 24, name: str = "noisy_quadratic_overlay") -> dict:
    """Fit the noisy quadratic model to a logged run and draw it over the log.

    ``step``, ``lr``, ``loss``: column names overriding :data:`COLUMNS` (:func:`read_log`); ``n_modes``: curvatures
    of the spectrum's quadrature. Returns the fit of :func:`theory.noisy_quadratic_fit.fit_log` plus ``columns`` and
    ``paths`` (PNG, PDF, JSON in ``out``).
    """
    from theory.noisy_quadratic_fit import fit_log

    csv_path, out = Path(csv_path), Path(out)
    data = read_log(csv_path, step=step, lr=lr, loss=loss)
    fit = fit_log(data["step"], data["lr"], data["loss"], n_modes=n_modes)
    paths = _draw(data, fit, name, out)
    record = out / f"{name}.json"
    record.write_text(json.dumps(_record(fit, data, csv_path), indent=2) + "\n")
    return {**fit, "columns": data["columns"], "paths": [*paths, record]}


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The options of ``steplab overlay`` (also ``python -m figures.noisy_quadratic overlay``)."""
    parser.add_argument("csv", help="CSV file with a header row naming a step, a learning-rate and a loss column")
    parser.add_argument("--out", default="figures/out", metavar="DIR", help="output folder (default figures/out)")
    for role, names in COLUMNS.items():
        parser.add_argument(f"--{role}", metavar="COL", default=None,
                            help=f"the {role} column, if not one of {', '.join(names)} (any case)")
    parser.add_argument("--modes", type=int, default=24, metavar="N",
                        help="curvatures in the quadrature of the fitted power-law spectrum (4-256, default 24; "
                             "the number of fitted parameters stays 4)")
    return parser


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Run the overlay for parsed ``args``; a bad file or bad values are a usage error (one line, exit 2)."""
    try:
        fit = overlay(args.csv, args.out, step=args.step, lr=args.lr, loss=args.loss, n_modes=args.modes)
    except (TypeError, ValueError, OSError) as err:
        parser.error(str(err).replace("\n", " "))
    cols = fit["columns"]
    print(f"{args.csv}: {fit['residual'].size} rows; columns step = {cols['step']!r}, lr = {cols['lr']!r}, "
          f"loss = {cols['loss']!r}")
    print(summary(fit))
    print("wrote " + ", ".join(str(p) for p in fit["paths"]))
    return 0
