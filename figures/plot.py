r"""Public plotting helpers: steplab's one figure style, reusable on any theory-vs-simulation plot.

Everything here draws on ordinary matplotlib axes, so the helpers combine with any other
matplotlib code::

    from figures import plot

    fig, ax = plot.figure()
    plot.theory_vs_simulation(ax, eta, floor_theory, eta_sim, floor_mean, yerr=floor_se)
    plot.threshold(ax, 2 / lam, r"$2/\lambda$")
    plot.save(fig, "my_floor", "out/")          # PNG + PDF, byte-stable, layout checked

Conventions: theory is drawn as lines (:data:`THEORY`), simulation as markers (:data:`SIM`),
thresholds as labelled dashed guides (:data:`MUTED`). Saved files carry no dates or version
strings, so rerunning a figure reproduces its bytes.

:func:`save` runs :func:`check_layout` before writing: overlapping text (tick labels, titles,
annotations, legend entries), text cut off at the figure's edge, an axis left with a single tick
label, or several labelled series without a legend are reported as a :class:`LayoutWarning` that
names the figure and the offending labels (``layout="error"`` raises :class:`LayoutError`).
"""
from __future__ import annotations

import contextlib
import contextvars
import itertools
import os
import secrets
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.text import Text  # noqa: E402

__all__ = [
    "THEORY", "SIM", "ACCENT", "MUTED", "PALETTE", "RC", "LAYOUT_POLICY",
    "figure", "theory_vs_simulation", "bifurcation", "threshold", "save",
    "check_layout", "LayoutProblem", "LayoutWarning", "LayoutError",
    "track_claims", "figure_claims",
]

THEORY = "#1f3b73"     # theory lines
SIM = "#d1495b"        # simulation markers
ACCENT = "#edae49"     # a third series
MUTED = "#7a7a7a"      # thresholds and guides
PALETTE = ["#1f3b73", "#d1495b", "#00798c", "#edae49", "#66a182", "#8d6cab", "#2e4057", "#b56576"]

RC = {
    "figure.dpi": 100,
    "savefig.dpi": 150,
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "legend.fontsize": 8,
    "axes.grid": True,
    "grid.alpha": 0.25,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.prop_cycle": matplotlib.cycler(color=PALETTE),
    "lines.linewidth": 1.4,
    "lines.markersize": 4,
    "svg.hashsalt": "steplab",
    "pdf.compression": 6,
    "path.simplify": False,
}

#: What :func:`save` does with layout problems: ``"warn"`` (a :class:`LayoutWarning`), ``"error"``
#: (:class:`LayoutError`) or ``"ignore"``.
LAYOUT_POLICY = "warn"

_METADATA = {
    "png": {"Software": None},
    "pdf": {"Creator": None, "Producer": None, "CreationDate": None},
}


def figure(ncols: int = 1, nrows: int = 1, *, width: float = 4.2, height: float = 3.2, **kwargs):
    """A new figure in the steplab style: ``(fig, axes)``, axes squeezed as by ``plt.subplots``.

    Args:
        ncols: columns of axes.
        nrows: rows of axes.
        width: width of *one* panel in inches (the figure is ``width * ncols`` wide).
        height: height of one panel in inches.
        **kwargs: passed to :func:`matplotlib.pyplot.subplots` (e.g. ``sharey=True``).
    """
    plt.rcParams.update(RC)
    return plt.subplots(nrows, ncols, figsize=(width * ncols, height * nrows), constrained_layout=True, **kwargs)


def theory_vs_simulation(ax, x_theory: Any, y_theory: Any, x_sim: Any, y_sim: Any, *, yerr: Any = None,
                         label_theory: str = "theory", label_sim: str = "simulation",
                         color_theory: str = THEORY, color_sim: str = SIM, marker: str = "o",
                         band: tuple[Any, Any] | None = None):
    r"""Draw a closed form as a line and the matching simulation as markers on ``ax``.

    ``y_sim`` may contain NaN (e.g. diverged runs): those points are simply not drawn. ``yerr``
    (one standard error per point) draws error bars; ``band=(lower, upper)`` shades a region
    around the simulation (e.g. the spread over seeds), evaluated at ``x_sim``.

    Returns:
        ``(line, markers)``: the theory line and the simulation artist (an errorbar container
        when ``yerr`` is given).
    """
    (line,) = ax.plot(x_theory, y_theory, color=color_theory, label=label_theory, zorder=2)
    if band is not None:
        lower, upper = band
        ax.fill_between(x_sim, lower, upper, color=color_sim, alpha=0.2, lw=0, zorder=1)
    if yerr is not None:
        markers = ax.errorbar(x_sim, y_sim, yerr=yerr, fmt=marker, color=color_sim, mfc="none", capsize=2,
                              label=label_sim, zorder=3)
    else:
        (markers,) = ax.plot(x_sim, y_sim, marker, color=color_sim, mfc="none", label=label_sim, zorder=3)
    return line, markers


def bifurcation(ax, parameter: Any, iterates: Any, *, center: float = 0.0, color: str = SIM, size: float = 1.0,
                alpha: float = 0.6, label: str | None = None):
    r"""Bifurcation diagram: the tail of an orbit plotted against its parameter.

    A fixed point draws one dot per parameter, a 2-cycle two, chaos a smear.

    Args:
        parameter: shape ``(n,)``, e.g. the normalised step :math:`\eta\lambda`.
        iterates: shape ``(n, k)``, the last ``k`` iterates of the run at each parameter.
            Non-finite entries (diverged runs) are skipped.
        center: subtracted from the iterates (e.g. the minimiser :math:`w^\star`).

    Returns:
        The line artist of the dots (rasterised, so a dense diagram stays small in PDF).
    """
    p = np.asarray(parameter, dtype=float).ravel()
    it = np.asarray(iterates, dtype=float)
    if it.ndim == 1:
        it = it[:, None]
    if it.ndim != 2 or it.shape[0] != p.size:
        raise ValueError(f"iterates: expected shape ({p.size}, k) (one row per parameter), got {it.shape}")
    xs = np.repeat(p, it.shape[1])
    ys = it.reshape(-1) - center
    keep = np.isfinite(ys)
    (dots,) = ax.plot(xs[keep], ys[keep], ".", ms=size, color=color, alpha=alpha, label=label, rasterized=True)
    return dots


def threshold(ax, x: float, label: str, *, vertical: bool = True, color: str = MUTED) -> None:
    r"""Draw and label a threshold (e.g. :math:`\eta = 1/\lambda`, :math:`r = 1`) as a dashed guide line.

    A vertical threshold is labelled just right of the line near the top of the axes; a
    horizontal one just above the line at the left edge. Write the label in the axis' own
    units (``"γλ = 2"`` on a γλ axis, not ``"2/λ"``).
    """
    if vertical:
        ax.axvline(x, color=color, ls="--", lw=1)
        ax.annotate(label, (x, 1), xycoords=("data", "axes fraction"), xytext=(2, -10),
                    textcoords="offset points", color=color, fontsize=8)
    else:
        ax.axhline(x, color=color, ls="--", lw=1)
        ax.annotate(label, (0, x), xycoords=("axes fraction", "data"), xytext=(4, 2),
                    textcoords="offset points", color=color, fontsize=8)


# ----------------------------------------------------------------------------------------------
# layout checker


class LayoutWarning(UserWarning):
    """A saved figure has overlapping or cut-off text (see :func:`check_layout`)."""


class LayoutError(ValueError):
    """Raised by :func:`save` with ``layout="error"`` when :func:`check_layout` finds problems."""


@dataclass(frozen=True)
class LayoutProblem:
    """One layout defect.

    ``kind`` is ``"overlap"``, ``"outside"``, ``"single tick label"`` or ``"no legend"``;
    ``message`` names the axes and the labels involved.
    """

    kind: str
    message: str

    def __str__(self) -> str:
        return self.message


def _drawn_ticks(axis) -> list:
    """The ticks matplotlib actually draws on ``axis`` (inside the view interval), major and minor."""
    try:
        return list(axis._update_ticks())  # what Axis.draw uses; private, but stable since matplotlib 3.1
    except Exception:  # noqa: BLE001 - fall back to every tick (may over-report, never under-report)
        return list(axis.get_major_ticks()) + list(axis.get_minor_ticks())


def _axes_name(k: int, ax) -> str:
    title = ax.get_title()
    return f"axes {k}" + (f" ({title[:30]!r})" if title else "")


def _short(t: Text) -> str:
    return repr(t.get_text().replace("\n", " ").strip()[:40])


def _texts(fig) -> list[tuple[Text, str, str]]:
    """Every visible, non-empty text: ``(text, where, group)``; the tick labels of one axis share a group."""
    found: list[tuple[Text, str, str]] = []
    seen: set[int] = set()

    def add(t: Text | None, where: str, group: str) -> None:
        if t is None or id(t) in seen or not t.get_visible() or not t.get_text().strip():
            return
        seen.add(id(t))
        found.append((t, where, group))

    for k, ax in enumerate(fig.axes):
        if not ax.get_visible():
            continue
        name = _axes_name(k, ax)
        for axis_name, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            if not axis.get_visible():
                continue
            for tick in _drawn_ticks(axis):
                for lab in (tick.label1, tick.label2):
                    if tick.get_visible() and lab.get_visible():
                        add(lab, f"{name}: {axis_name} tick label", f"{k}{axis_name}tick")
            add(axis.label, f"{name}: {axis_name} label", f"{k}{axis_name}label")
            add(axis.get_offset_text(), f"{name}: {axis_name} offset", f"{k}{axis_name}offset")
        for title in (ax.title, getattr(ax, "_left_title", None), getattr(ax, "_right_title", None)):
            add(title, f"{name}: title", f"{k}title")
        for t in ax.texts:
            add(t, f"{name}: text", f"{k}text{id(t)}")
        legend = ax.get_legend()
        if legend is not None and legend.get_visible():
            for t in legend.get_texts():
                add(t, f"{name}: legend entry", f"{k}legend")
            add(legend.get_title(), f"{name}: legend title", f"{k}legend")
    for legend in fig.legends:
        for t in legend.get_texts():
            add(t, "figure legend entry", "figlegend")
    for t in fig.texts:
        add(t, "figure text", f"figtext{id(t)}")
    add(getattr(fig, "_suptitle", None), "suptitle", "suptitle")
    return found


def _axis_aligned(t: Text) -> bool:
    return abs(t.get_rotation() % 90) < 1e-6


def check_layout(fig, *, pad: float = 1.0) -> list[LayoutProblem]:
    """Measure every text of ``fig`` with matplotlib's renderer and list the layout defects.

    * ``overlap``: two texts whose boxes intersect by more than ``pad`` pixels in both directions
      (tick labels crowding each other, a threshold label on a title, a legend over an
      annotation). Rotated texts are compared only when the rotation is a multiple of 90
      degrees, since the axis-aligned box of a slanted text over-reports;
    * ``outside``: a text reaching more than ``pad`` pixels beyond the figure's edge (cut off in the file);
    * ``single tick label``: an axis with tick labels that shows exactly one (no scale can be read);
    * ``no legend``: an axes with two or more labelled series and no legend (in it or on the figure).

    The figure is drawn once without output, so that constrained layout has placed everything.
    Returns an empty list for a clean figure.
    """
    fig.draw_without_rendering()
    renderer = fig.canvas.get_renderer()
    boxes = [(t, where, group, t.get_window_extent(renderer)) for t, where, group in _texts(fig)]
    problems: list[LayoutProblem] = []

    # texts of one group (the tick labels of one axis, ...) are reported together, one line per group
    fb = fig.bbox
    outside: dict[str, list[str]] = {}
    for t, where, _, b in boxes:
        if b.x0 < fb.x0 - pad or b.y0 < fb.y0 - pad or b.x1 > fb.x1 + pad or b.y1 > fb.y1 + pad:
            outside.setdefault(where, []).append(_short(t))
    for where, labels in outside.items():
        problems.append(LayoutProblem("outside", f"{where} {', '.join(labels)} cut off at the figure's edge"))

    crowded: dict[str, list[str]] = {}
    for (t1, w1, g1, b1), (t2, w2, g2, b2) in itertools.combinations(boxes, 2):
        if g1 == g2 and g1.endswith("legend"):
            continue  # a legend lays out its own entries
        if not (_axis_aligned(t1) and _axis_aligned(t2)):
            continue
        dx = min(b1.x1, b2.x1) - max(b1.x0, b2.x0)
        dy = min(b1.y1, b2.y1) - max(b1.y0, b2.y0)
        if dx > pad and dy > pad:
            if g1 == g2:
                labels = crowded.setdefault(w1 + "s", [])
                labels += [s for s in (_short(t1), _short(t2)) if s not in labels]
            else:
                problems.append(LayoutProblem("overlap", f"{w1} {_short(t1)} overlaps {w2} {_short(t2)}"))
    for where, labels in crowded.items():
        problems.append(LayoutProblem("overlap", f"{where} overlap each other: {', '.join(labels)}"))

    for k, ax in enumerate(fig.axes):
        if not ax.get_visible():
            continue
        name = _axes_name(k, ax)
        for axis_name, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            if not axis.get_visible():
                continue
            labels = {lab.get_text().strip() for tick in _drawn_ticks(axis) if tick.get_visible()
                      for lab in (tick.label1, tick.label2) if lab.get_visible() and lab.get_text().strip()}
            if len(labels) == 1:
                problems.append(LayoutProblem(
                    "single tick label", f"{name}: the {axis_name} axis shows a single tick label {labels.pop()!r}"))
        labelled = [a for a in (*ax.lines, *ax.collections, *ax.patches, *ax.containers)
                    if str(a.get_label()).strip() and not str(a.get_label()).startswith("_")]
        if len(labelled) >= 2 and ax.get_legend() is None and not fig.legends:
            shown = ", ".join(repr(str(a.get_label())[:20]) for a in labelled[:3])
            problems.append(LayoutProblem("no legend", f"{name}: {len(labelled)} labelled series ({shown}) but no legend"))
    return problems


# ----------------------------------------------------------------------------------------------
# which claims a figure shows (read by the report)

_SAVED_CLAIMS: dict[str, tuple[str, ...]] = {}


class _ClaimAccess(dict):
    """A results mapping that remembers which claim ids were read since the last :func:`save`."""

    def __init__(self, results: Mapping[str, Any]):
        super().__init__(results)
        self.read: list[str] = []

    def __getitem__(self, key):
        if key in self:
            self.read.append(key)
        return super().__getitem__(key)

    def get(self, key, default=None):
        if key in self:
            self.read.append(key)
        return super().get(key, default)

    def take(self) -> tuple[str, ...]:
        out = tuple(dict.fromkeys(self.read))
        self.read.clear()
        return out


_TRACKER: contextvars.ContextVar[_ClaimAccess | None] = contextvars.ContextVar("steplab_claims", default=None)


@contextlib.contextmanager
def track_claims(results: Mapping[str, Any]) -> Iterator[dict]:
    """Record which claims each saved figure draws.

    Yields a copy of ``results`` to pass to a topic's ``make``; within the block every
    :func:`save` links its figure to the claims whose results were read since the previous save
    (``save(..., claims=...)`` states the link explicitly instead). :func:`figure_claims` returns
    the links.
    """
    tracker = _ClaimAccess(results)
    token = _TRACKER.set(tracker)
    try:
        yield tracker
    finally:
        _TRACKER.reset(token)


def figure_claims() -> dict[str, tuple[str, ...]]:
    """Figure name -> the claim ids it shows, for every figure saved in this process with a known link."""
    return dict(_SAVED_CLAIMS)


def save(fig, name: str, out: Path | str, *, claims: Sequence[str] | None = None,
         layout: str | None = None) -> list[Path]:
    """Write ``out/<name>.png`` and ``out/<name>.pdf`` deterministically, check the layout, close the figure.

    Args:
        fig: the figure.
        name: file stem, also the figure's anchor in the report.
        out: output folder (created if missing).
        claims: the claim ids this figure shows (the report places the figure under them).
            Default: inside :func:`track_claims`, the claims whose results were read since the
            previous save.
        layout: ``"warn"`` (a :class:`LayoutWarning` naming the figure and the offending labels),
            ``"error"`` (:class:`LayoutError`, nothing written) or ``"ignore"``; default
            :data:`LAYOUT_POLICY`.

    Returns:
        The two paths, PNG first.
    """
    policy = LAYOUT_POLICY if layout is None else layout
    if policy not in ("warn", "error", "ignore"):
        raise ValueError(f"layout: expected 'warn', 'error' or 'ignore', got {policy!r}")
    out = Path(out)
    tracker = _TRACKER.get()
    read = tracker.take() if tracker is not None else ()
    linked = tuple(claims) if claims is not None else read
    if linked:
        _SAVED_CLAIMS[name] = linked
    try:
        if policy != "ignore":
            problems = check_layout(fig)
            if problems:
                message = f"figure {name!r}: " + "; ".join(str(p) for p in problems)
                if policy == "error":
                    raise LayoutError(message)
                warnings.warn(message, LayoutWarning, stacklevel=2)
        out.mkdir(parents=True, exist_ok=True)
        paths = []
        for ext in ("png", "pdf"):
            path = out / f"{name}.{ext}"
            _write_atomically(fig, path, ext)
            paths.append(path)
    finally:
        plt.close(fig)
    return paths


def _write_atomically(fig, path: Path, ext: str) -> None:
    """Save ``fig`` to ``path`` through a temporary file in the same folder, renamed into place when complete.

    An interrupted save (a signal, a full disk) leaves the previous file or none, never a truncated one that a
    later run would keep and the report embed. The temporary name carries the process id, as the results
    cache's do, so ``sims.cache.remove_stale_temporaries`` can remove a dead writer's leftovers.
    """
    tmp = path.with_name(f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
    try:
        fig.savefig(tmp, format=ext, metadata=_METADATA[ext])
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
