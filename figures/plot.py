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
label, several labelled series without a legend, data drawn over a title, legend or annotation, or
raw TeX make it refuse with a :class:`LayoutError` that names the figure and the offending labels,
writing nothing (``layout="warn"`` writes the file and issues a :class:`LayoutWarning` instead). Inside :func:`track_claims` it also runs
:func:`audit_theory_lines`: a series presented as theory that follows a rival of the figure's claims. A theory line drawn
on its own grid or as a transformed quantity declares the check it draws (:func:`draws`, :func:`theory_line`), so the
audit reads it at the check's points; a figure whose theory no check holds says why (``save(..., unaudited=...)``), and
:func:`theory_coverage` records both per figure.
"""
from __future__ import annotations

import contextlib
import contextvars
import re
import itertools
import os
import secrets
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.text import Text  # noqa: E402
from matplotlib.transforms import Bbox  # noqa: E402

__all__ = [
    "THEORY", "SIM", "ACCENT", "MUTED", "PALETTE", "RC", "LAYOUT_POLICY",
    "figure", "theory_vs_simulation", "bifurcation", "threshold", "save",
    "check_layout", "LayoutProblem", "LayoutWarning", "LayoutError",
    "track_claims", "figure_claims", "audit_theory_lines", "theory_audits",
    "draws", "theory_line", "theory_coverage", "TheoryCoverage",
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

#: What :func:`save` does with layout problems: ``"error"`` (:class:`LayoutError`, nothing written: every
#: figure of steplab passes the check at both budgets), ``"warn"`` (a :class:`LayoutWarning`, the file is
#: written) or ``"ignore"``. Pass ``layout="warn"`` to :func:`save` for a draft of one's own figure.
LAYOUT_POLICY = "error"

METADATA = {
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

    ``kind`` is ``"overlap"``, ``"outside"``, ``"single tick label"``, ``"no legend"``, ``"data over text"``,
    ``"raw TeX"`` (:func:`check_layout`), ``"rival drawn as theory"`` or ``"theory line off its check"``
    (:func:`audit_theory_lines`);
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
            if not axis.get_visible() or not ax.axison:  # set_axis_off() draws no ticks or labels
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
    * ``no legend``: an axes with two or more labelled series and no legend (in it or on the figure);
    * ``data over text``: markers inside, or a line crossing, a title, the legend or an annotation of the same
      axes (guides drawn in axes coordinates, such as :func:`threshold`'s, and contour labels excepted);
    * ``raw TeX``: a text showing TeX source (``\\lambda``, ``^{t}``) outside ``$…$``.

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
            if not axis.get_visible() or not ax.axison:  # set_axis_off() draws no ticks or labels
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
    problems += _data_over_text(fig, renderer, pad)
    problems += _raw_tex(boxes)
    return problems


# TeX that matplotlib's mathtext did not typeset: a backslash command or a ^/_ group outside $...$
_RAW_TEX = re.compile(r"\\[A-Za-z]+|[\^_]\{")


def _raw_tex(boxes) -> list[LayoutProblem]:
    """Texts that show TeX source (``\\lambda``, ``^{t}``) instead of typeset maths: outside ``$…$`` mathtext
    prints it verbatim."""
    found = []
    for t, where, _, _ in boxes:
        outside_math = re.sub(r"(?<!\\)\$.*?(?<!\\)\$", "", t.get_text())
        if _RAW_TEX.search(outside_math):
            found.append(LayoutProblem("raw TeX", f"{where} {_short(t)} shows TeX source outside $…$"))
    return found


def _data_paths(ax):
    """The data series of ``ax`` in display coordinates: ``(label, points, joined, radius, clip)`` per drawn line
    or scatter (``radius``: half the marker size in pixels; ``clip``: the box the artist is clipped to, or None).

    Lines not in data coordinates (``axvline``/``axhline`` guides, whose labels sit on them by design) are left out.
    """
    for line in ax.lines:
        if not line.get_visible() or line.get_transform() != ax.transData:
            continue
        xy = line.get_transform().transform(np.asarray(line.get_xydata(), dtype=float))
        joined = line.get_linestyle() not in ("None", "none", "", " ")
        marked = line.get_marker() not in (None, "None", "none", "", " ")
        radius = float(line.get_markersize()) * ax.figure.dpi / 72.0 / 2 if marked else 0.0
        yield str(line.get_label()), xy, joined, radius, (ax.bbox if line.get_clip_on() else None)
    for coll in ax.collections:
        if not coll.get_visible() or type(coll).__name__ != "PathCollection":
            continue
        xy = coll.get_offset_transform().transform(np.asarray(coll.get_offsets(), dtype=float))
        yield str(coll.get_label()), xy, False, 0.0, (ax.bbox if coll.get_clip_on() else None)


def _finite_runs(xy):
    """The pieces of a polyline between non-finite points (matplotlib breaks a line at NaN)."""
    ok = np.all(np.isfinite(xy), axis=1)
    edges = np.flatnonzero(np.diff(np.r_[0, ok.astype(int), 0]))
    return [xy[a:b] for a, b in zip(edges[::2], edges[1::2])]


def _segments_cross(xy, b) -> bool:
    """Whether the polyline ``xy`` (display coordinates, ``(n, 2)``) enters the box ``b`` (Liang–Barsky clipping)."""
    if len(xy) < 2:
        return False
    p0, d = xy[:-1], np.diff(xy, axis=0)
    t0, t1 = np.zeros(len(d)), np.ones(len(d))
    for k, (lo, hi) in enumerate(((b.x0, b.x1), (b.y0, b.y1))):
        dk, pk = d[:, k], p0[:, k]
        with np.errstate(divide="ignore", invalid="ignore"):
            ta, tb = (lo - pk) / dk, (hi - pk) / dk
        parallel = dk == 0
        inside = (pk >= lo) & (pk <= hi)
        t0 = np.where(parallel, np.where(inside, t0, 2.0), np.maximum(t0, np.minimum(ta, tb)))
        t1 = np.where(parallel, np.where(inside, t1, -1.0), np.minimum(t1, np.maximum(ta, tb)))
    return bool(np.any(t0 <= t1))


def _data_over_text(fig, renderer, pad: float) -> list[LayoutProblem]:
    """Data drawn over a title, a legend or an annotation of the same axes (markers inside the text's box, or a
    line crossing it): the text is hard to read and the data hidden. Boxes are shrunk by ``pad`` pixels."""
    problems = []
    for k, ax in enumerate(fig.axes):
        if not ax.get_visible():
            continue
        name = _axes_name(k, ax)
        texts = [(t, "title") for t in (ax.title, getattr(ax, "_left_title", None), getattr(ax, "_right_title", None))
                 if t is not None and t.get_visible() and t.get_text().strip()]
        # contour labels sit on their own level lines by design (clabel cuts the line under them)
        inline = {id(t) for c in ax.collections for t in getattr(c, "labelTexts", ())}
        texts += [(t, "text") for t in ax.texts if t.get_visible() and t.get_text().strip() and id(t) not in inline]
        legend = ax.get_legend()
        regions = [(t.get_window_extent(renderer), f"{what} {_short(t)}") for t, what in texts]
        if legend is not None and legend.get_visible():
            regions.append((legend.get_window_extent(renderer), "the legend"))
        for box, what in regions:
            inner = box.padded(-pad)
            if inner.width <= 0 or inner.height <= 0:
                continue
            hits: list[str] = []
            for label, xy, joined, radius, clip in _data_paths(ax):
                region = inner if clip is None else Bbox.intersection(inner, clip)
                if region is None or region.width <= 0 or region.height <= 0:
                    continue
                pts = xy[np.all(np.isfinite(xy), axis=1)]
                hit_box = region.padded(radius)
                hit = bool(np.any((pts[:, 0] > hit_box.x0) & (pts[:, 0] < hit_box.x1)
                                  & (pts[:, 1] > hit_box.y0) & (pts[:, 1] < hit_box.y1))) if len(pts) else False
                if not hit and joined:
                    hit = any(_segments_cross(part, region) for part in _finite_runs(xy))
                if hit:
                    series = repr(label[:30]) if label and not label.startswith("_") else "an unlabelled series"
                    if series not in hits:
                        hits.append(series)
            if hits:
                shown = ", ".join(hits[:4]) + (f" and {len(hits) - 4} more" if len(hits) > 4 else "")
                problems.append(LayoutProblem("data over text", f"{name}: {shown} drawn over {what}"))
    return problems


# ----------------------------------------------------------------------------------------------
# a line labelled theory is the claim's prediction, never a rival

_THEORY_WORDS = ("theory", "predict", "closed form", "exact")
_MATCH_RTOL = 1e-9    # a plotted simulation point is the check's measured number itself, up to round-off
_INTERP_RTOL = 2e-3   # a theory line drawn on its own grid, read between grid points: linear interpolation error
_DISTINCT = 0.05      # a rival within 5 % of the prediction cannot be told from it on a plot
_NEAR_ZERO = 0.05     # a declared line's departure is measured against at least 5 % of its check's largest value


@dataclass(frozen=True)
class _Draws:
    """A theory series' declaration that it draws one claim check's prediction (see :func:`draws`)."""

    claim: str
    quantity: str | None
    at: np.ndarray | None
    y: Callable[[Any], Any] | None


def draws(artist, check: str, *, at: Any = None, y: Callable[[Any], Any] | None = None):
    r"""Declare that ``artist``, a series presented as theory, draws the prediction of one claim check; returns it.

    The audit (:func:`audit_theory_lines`) then reads the series at the check's points however it was drawn (a
    dense grid, a transformed quantity) and compares it with the check's prediction and with each of its rivals.

    Args:
        artist: the line (or markers) drawn as theory.
        check: ``"claim.id:quantity"`` (the check's ``quantity`` string, or the start of exactly one check's) or
            ``"claim.id"`` when the claim has one check with a numeric prediction.
        at: the x (in the axes' data coordinates) of the check's values, one per element of its prediction; or,
            with ``y``, the x at which ``y`` gives the series' values. Default: the series' own points, in order,
            hold the values (markers drawn at the check's points; with ``y``, its values there).
        y: the series' values at ``at`` as a function of a candidate value of the check (the prediction or a
            rival, as the check holds it): a transformed quantity (``lambda v: 0.5 * lam * v``) or a curve
            fixed by a scalar (a slope :math:`s` drawn as :math:`c\,x^s`: ``lambda s: c * at ** s``). Default:
            the candidate itself, broadcast to ``at``.

    A declared series must follow its check's prediction to within the interpolation error (0.2 %): a rival
    drawn in its place is reported as a rival drawn as theory, any other departure as a theory line off its
    check, and a check that the figure's claims do not hold as an unknown check.
    """
    if not isinstance(check, str) or not check.split(":", 1)[0].strip():
        raise ValueError(f"check: expected 'claim.id' or 'claim.id:quantity', got {check!r}")
    if y is not None and not callable(y):
        raise TypeError(f"y: expected a function of a candidate value, got {type(y).__name__}")
    claim, _, quantity = check.partition(":")
    xs = None if at is None else np.asarray(at, dtype=float).ravel()
    if xs is not None and (xs.size == 0 or not np.all(np.isfinite(xs))):
        raise ValueError(f"at: expected finite x positions, got {at!r:.60}")
    declared = list(getattr(artist, "_steplab_draws", ()))
    declared.append(_Draws(claim.strip(), quantity.strip() or None, xs, y))
    artist._steplab_draws = tuple(declared)
    return artist


def theory_line(ax, x: Any, y: Any, *, check: str | None = None, at: Any = None,
                transform: Callable[[Any], Any] | None = None, label: str = "theory", color: str = THEORY, **kwargs):
    """Draw a closed form as a theory line on ``ax`` (``ax.plot`` with :data:`THEORY`'s colour and a theory label)
    and, with ``check``, declare the check whose prediction it draws (:func:`draws` with ``at`` and
    ``y=transform``). Returns the line."""
    (line,) = ax.plot(x, y, color=color, label=label, **kwargs)
    if check is not None:
        draws(line, check, at=at, y=transform)
    return line


def _is_theory(artist) -> bool:
    """A series presented as theory: one declared with :func:`draws`, one whose label says theory/prediction/closed
    form/exact and not rival, one unlabelled and drawn in :data:`THEORY`'s colour, or a solid line in that colour whose
    label does not say rival (a rival drawn like the theory must say what it is)."""
    if getattr(artist, "_steplab_draws", ()):
        return True
    label = str(artist.get_label()).lower()
    if label.startswith("_"):
        colors = [c for c in (getattr(artist, "get_color", lambda: None)(),
                              getattr(artist, "get_markeredgecolor", lambda: None)()) if isinstance(c, str)]
        return any(matplotlib.colors.same_color(c, THEORY) for c in colors if c not in ("none", "auto"))
    if "rival" in label:
        return False
    if any(w in label for w in _THEORY_WORDS):
        return True
    # a solid line in the theory colour reads as theory whatever its label says (a rival must say it is one)
    return (isinstance(artist, matplotlib.lines.Line2D) and artist.get_linestyle() in ("-", "solid")
            and isinstance(artist.get_color(), str) and matplotlib.colors.same_color(artist.get_color(), THEORY))


def _numeric_pairs(results: Mapping[str, Any], claim_ids: Sequence[str]):
    """Per check of the linked claims with array values: ``(claim, quantity, predicted, measured, rivals)`` flat."""
    for cid in claim_ids:
        result = dict.get(results, cid)  # not results.get: a tracker would count this read as the next figure's
        for check in getattr(result, "checks", ()) or ():
            measured = getattr(check, "measured", getattr(check, "estimate", None))
            if getattr(check, "discrete", True) or measured is None or not hasattr(check, "predicted"):
                continue
            try:
                p = np.asarray(check.predicted, dtype=float).ravel()
                m = np.asarray(measured, dtype=float).ravel()
                rivals = [(lab, np.broadcast_to(np.asarray(v, dtype=float).ravel(), p.shape)) for lab, v in check.rivals]
            except (TypeError, ValueError, AttributeError):
                continue
            if p.size == m.size and p.size >= 2 and np.all(np.isfinite(p)) and np.all(np.isfinite(m)):
                yield cid, check.quantity, p, m, rivals


def _match(values: np.ndarray, y: np.ndarray, *, distinct: bool = False) -> np.ndarray | None:
    """For each of ``values`` the index of a point of ``y`` equal to it to round-off (each point used once with
    ``distinct``), or None if one has no match."""
    used = np.zeros(y.size, dtype=bool)
    out = np.empty(values.size, dtype=int)
    for i, v in enumerate(values):
        k = np.flatnonzero(~used & (np.abs(y - v) <= _MATCH_RTOL * max(abs(v), 1e-300)))
        if k.size == 0:
            return None
        out[i] = k[0]
        used[k[0]] = distinct
    return out


def _locate(values: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray | None:
    """The x of each of ``values`` among the points ``(x, y)`` (matched to round-off), or None if one is missing."""
    k = _match(values, y)
    return None if k is None else x[k]


def _read_at(line, xs: np.ndarray) -> np.ndarray | None:
    """A theory series' values at ``xs``: its own points where they sit at those x, else linear interpolation of
    a joined line over its x range; None where it does not cover ``xs``."""
    x, y = (np.asarray(a, dtype=float).ravel() for a in (line.get_xdata(), line.get_ydata()))
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    if x.size == 0:
        return None
    out = np.full(xs.size, np.nan)
    for i, xi in enumerate(xs):
        k = np.flatnonzero(np.abs(x - xi) <= _MATCH_RTOL * max(abs(xi), 1e-300))
        if k.size:
            out[i] = y[k[0]]
    missing = np.isnan(out)
    if missing.any() and line.get_linestyle() not in ("None", "none", "", " ") and x.size >= 2:
        order = np.argsort(x, kind="stable")
        xo, yo = x[order], y[order]
        if np.all(np.diff(xo) > 0):
            inside = missing & (xs >= xo[0]) & (xs <= xo[-1])
            out[inside] = np.interp(xs[inside], xo, yo)
    return None if np.isnan(out).any() else out


def audit_theory_lines(fig, results: Mapping[str, Any], claim_ids: Sequence[str]) -> tuple[list[LayoutProblem], int]:
    r"""Check that no series drawn as theory is a rival of the claims the figure shows.

    For each array-valued check of the linked claims, the simulation series that plots its measured values
    (each value found among a series' points, to round-off) gives their x positions; every theory series of the
    same axes (:func:`_is_theory`) is read there (its own points, or linear interpolation of a drawn line). With
    :math:`e_p = \max_i |y_i - p_i| / s_i` and :math:`e_r` the same for a rival :math:`r`
    (:math:`s_i = \max(|p_i|, |r_i|)`), a rival that differs from the prediction by more than 5 % is reported
    when the series follows it (:math:`e_r \le 0.002`, interpolation error) and not the prediction
    (:math:`e_p > 4 e_r`).

    A series declared with :func:`draws` (or drawn by :func:`theory_line` with ``check=``) is also read at its
    check's declared points, through its declared transform, whatever the figure's grid or plotted quantity: one
    comparison each; a rival it follows is reported as above, and a departure from the prediction beyond the
    interpolation error, a check the figure's claims do not hold, or points the series does not cover, as a
    ``"theory line off its check"``.

    Returns the problems (kind ``"rival drawn as theory"``) and how many (check, theory series) pairs could be
    compared, so a test can tell a clean figure from one the audit cannot read.
    """
    problems, compared = [], 0
    checks = list(_numeric_pairs(results, claim_ids))
    for k, ax in enumerate(fig.axes):
        series = [a for a in ax.lines if a.get_visible() and a.get_transform() == ax.transData]
        theory = [a for a in series if _is_theory(a)]
        if not theory:
            continue
        others = [a for a in series if a not in theory]
        located = [_located_x(m, others) for _, _, _, m, _ in checks]
        for t in theory:
            predicts, follows = False, []
            for (cid, quantity, p, m, rivals), xs in zip(checks, located):
                verdict = _compare(t, p, rivals, xs)
                if verdict is None:
                    continue
                compared += 1
                predicts |= verdict is True
                if isinstance(verdict, tuple):
                    follows.append(f"the rival {verdict[0]!r} of {cid} ({quantity}) {verdict[1]}")
            for d in getattr(t, "_steplab_draws", ()):
                compared += 1
                verdict = _compare_declared(t, d, results, claim_ids)
                predicts |= verdict is True
                if isinstance(verdict, tuple):
                    follows.append(f"the rival {verdict[0]!r} of {d.claim} ({verdict[2]}) {verdict[1]}")
                elif isinstance(verdict, LayoutProblem):
                    problems.append(LayoutProblem(verdict.kind, f"{_axes_name(k, ax)}: {str(t.get_label())[:40]!r} "
                                                  + verdict.message))
            # a series that is one linked claim's prediction may be another's rival (a figure comparing two laws)
            if follows and not predicts:
                problems.append(LayoutProblem(
                    "rival drawn as theory", f"{_axes_name(k, ax)}: {str(t.get_label())[:40]!r} follows "
                    + "; ".join(follows) + ", and no linked claim's prediction"))
    return problems, compared


def _located_x(measured: np.ndarray, others: list) -> np.ndarray | None:
    """The x positions of a check's measured values, from the first non-theory series that plots all of them."""
    for s_ in others:
        x, y = (np.asarray(a, dtype=float).ravel() for a in (s_.get_xdata(), s_.get_ydata()))
        xs = _locate(measured, x, y)
        if xs is not None:
            return xs
    return None


def _holds(y: np.ndarray, values: np.ndarray) -> bool:
    """Whether every one of ``values`` is a distinct point of ``y`` (to round-off): a constant rival such as
    "2 for every μ" is not held by a curve that passes through 2 once. Constant values identify no formula (a
    row of markers at height 0 is not the rival "coefficient 0"): never held."""
    if values.size < 2 or np.all(values == values[0]):
        return False
    return _match(values, y, distinct=True) is not None


def _followed_rival(yt: np.ndarray, p: np.ndarray, rivals, floor: float):
    r"""The first rival that series values ``yt`` follow and the prediction ``p`` does not, as ``(label, how)``, else
    None. Per rival :math:`r` distinct from :math:`p` by more than 5 %, with :math:`s_i = \max(|p_i|, |r_i|, \text{floor})`:
    :math:`e_r = \max_i|y_i - r_i|/s_i \le 0.002` (interpolation error) and :math:`e_p > 4e_r`."""
    for label, r in rivals:
        scale = np.maximum(np.maximum(np.abs(p), np.abs(r)), floor)
        if np.max(np.abs(r - p) / scale) <= _DISTINCT:
            continue
        e_p, e_r = np.max(np.abs(yt - p) / scale), np.max(np.abs(yt - r) / scale)
        if e_r <= _INTERP_RTOL and e_p > 4 * e_r:
            return label, f"(within {e_r:.1e}; the prediction is off by {e_p:.1%})"
    return None


def _compare(t, p: np.ndarray, rivals, xs: np.ndarray | None):
    """How theory series ``t`` relates to one check: True (it holds or follows the prediction), ``(rival label,
    how)`` (it follows a rival and not the prediction), False (neither) or None (it cannot be compared)."""
    y = np.asarray(t.get_ydata(), dtype=float).ravel()
    holds = lambda v: _holds(y, v)  # noqa: E731
    if holds(p):  # drawn at the check's own points
        return True
    for label, r in rivals:
        if holds(r):
            return label, "(its values)"
    yt = None if xs is None else _read_at(t, xs)
    if yt is None:
        return None
    follows = _followed_rival(yt, p, rivals, 1e-300)
    if follows is not None:
        return follows
    verdict = False
    scale = np.maximum(np.abs(p), 1e-300)
    if np.max(np.abs(yt - p) / scale) <= _INTERP_RTOL:
        verdict = True
    return verdict


def _declared_check(results: Mapping[str, Any], claim_ids: Sequence[str], d: _Draws):
    """The check a declaration names, or a message saying why there is none."""
    if d.claim not in claim_ids:
        return f"draws {d.claim!r}, which is not among the figure's claims {tuple(claim_ids)}"
    numeric = [c for c in getattr(dict.get(results, d.claim), "checks", ()) or () if not getattr(c, "discrete", True)]
    checks = [c for c in numeric if d.quantity is None or c.quantity == d.quantity]
    if not checks and d.quantity is not None:  # a quantity named by its start (its tail may carry budget-sized text)
        checks = [c for c in numeric if c.quantity.startswith(d.quantity)]
    if len(checks) != 1:
        found = [c.quantity for c in getattr(dict.get(results, d.claim), "checks", ()) or ()]
        what = "no" if not checks else "more than one"
        return (f"draws {d.claim}:{d.quantity or ''}, but the claim has {what} numeric check of that quantity "
                f"(its checks: {found})")
    return checks[0]


def _expected(d: _Draws, value: Any, n: int | None) -> np.ndarray:
    """What a declared series should hold at its check's points if it drew the candidate ``value``."""
    v = d.y(value) if d.y is not None else value
    a = np.asarray(v, dtype=float).ravel()
    return np.broadcast_to(a, (n,)) if n is not None and a.size == 1 else a


def _compare_declared(t, d: _Draws, results: Mapping[str, Any], claim_ids: Sequence[str]):
    r"""How a series declared by :func:`draws` relates to its check: True (it follows the prediction),
    ``(rival label, how, quantity)`` (it follows a rival, not the prediction), or a :class:`LayoutProblem`
    (an unknown check, points the series does not cover, or a departure from the prediction).

    The series is read at the declared x (its own points there, else linear interpolation of the drawn line);
    the relative error to a candidate is :math:`\max_i |y_i - e_i| / s_i` with :math:`e` the candidate's expected
    values and :math:`s_i = \max(|e^p_i|, |e^r_i|)` (for the prediction alone, :math:`\max(|e^p_i|, 0.05\max_j|e^p_j|)`:
    a curve crossing zero keeps its interpolation error measured against its own scale)."""
    check = _declared_check(results, claim_ids, d)
    if isinstance(check, str):
        return LayoutProblem("theory line off its check", check)
    try:
        p = _expected(d, check.candidate(), None if d.at is None else d.at.size)
        rivals = [(lab, _expected(d, v, p.size)) for lab, v in check.rivals]
    except (TypeError, ValueError) as e:
        return LayoutProblem("theory line off its check", f"draws {d.claim}:{check.quantity}, whose values cannot be "
                             f"read as numbers ({e})")
    if d.at is None:
        y = np.asarray(t.get_ydata(), dtype=float).ravel()
        yt = y if y.size == p.size else None
    else:
        yt = _read_at(t, d.at) if d.at.size == p.size else None
    if yt is None:
        return LayoutProblem("theory line off its check", f"does not cover the {p.size} points of "
                             f"{d.claim}:{check.quantity} (declared x: {0 if d.at is None else d.at.size} values)")
    floor = 1e-12 * max(float(np.max(np.abs(p))), 1e-300)
    follows = _followed_rival(yt, p, [(lab, r) for lab, r in rivals if r.shape == p.shape], floor)
    if follows is not None:
        return (*follows, check.quantity)
    # a curve through zero (a log-rate, a Lyapunov exponent) is read against its own scale there: linear interpolation
    # leaves an absolute error of order h²|f''|, which no relative tolerance of a value near zero would allow
    e_p = float(np.max(np.abs(yt - p) / np.maximum(np.abs(p), _NEAR_ZERO * float(np.max(np.abs(p))) + floor)))
    if e_p > _INTERP_RTOL:
        return LayoutProblem("theory line off its check", f"is declared to draw {d.claim}:{check.quantity} but is "
                             f"off its prediction by {e_p:.2%} at its points (allowed: {_INTERP_RTOL:.1%}, "
                             "interpolation)")
    return True


# ----------------------------------------------------------------------------------------------
# which claims a figure shows (read by the report)

_SAVED_CLAIMS: dict[str, tuple[str, ...]] = {}
#: figure name -> how many (check, theory series) pairs :func:`audit_theory_lines` compared when it was saved
_AUDITED: dict[str, int] = {}


@dataclass(frozen=True)
class TheoryCoverage:
    """How far the audit reached into one saved figure (see :func:`theory_coverage`).

    ``theory_series``: the series presented as theory (:func:`_is_theory`); ``compared``: the (check, theory
    series) pairs :func:`audit_theory_lines` compared; ``unaudited``: the figure's stated reason why its theory
    is compared with no check (``save(..., unaudited=...)``), else None.
    """

    theory_series: int
    compared: int
    unaudited: str | None

    def problem(self) -> str | None:
        """Why this record breaks the rule "a figure with theory is audited or exempt with a reason", or None.

        An exemption must be needed: a figure without theory, or one the audit compares, must not carry one
        (a stale reason would hide a later figure change)."""
        if self.unaudited is not None:
            if self.theory_series == 0:
                return f"exempt ({self.unaudited!r}) but draws no series presented as theory"
            if self.compared:
                return f"exempt ({self.unaudited!r}) but the audit compared {self.compared} (check, series) pairs"
            return None
        if self.theory_series and not self.compared:
            return (f"{self.theory_series} series presented as theory, none compared with a claim check and no "
                    "stated reason (declare the check with draws()/theory_line(), or save(..., unaudited=reason))")
        return None


_COVERAGE: dict[str, TheoryCoverage] = {}
_MIN_REASON_WORDS = 5  # a reason names the quantity drawn and why no check predicts it: more than a word or two


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


def theory_audits() -> dict[str, int]:
    """Figure name -> the (check, theory series) pairs :func:`audit_theory_lines` compared, per figure saved in this
    process inside :func:`track_claims` with the layout check on."""
    return dict(_AUDITED)


def theory_coverage() -> dict[str, TheoryCoverage]:
    """Figure name -> its :class:`TheoryCoverage`, per figure saved in this process inside :func:`track_claims` with
    the layout check on (with or without claims)."""
    return dict(_COVERAGE)


def _theory_series(fig) -> int:
    return sum(1 for ax in fig.axes for a in ax.lines
               if a.get_visible() and a.get_transform() == ax.transData and _is_theory(a))


def _reason(unaudited: Any) -> str | None:
    if unaudited is None:
        return None
    if not isinstance(unaudited, str):
        raise TypeError(f"unaudited: expected a reason (a string), got {type(unaudited).__name__}")
    if len(unaudited.split()) < _MIN_REASON_WORDS:
        raise ValueError(f"unaudited: expected a reason of at least {_MIN_REASON_WORDS} words naming the quantity "
                         f"drawn as theory and why no claim check predicts it, got {unaudited!r}")
    return unaudited.strip()


def figure_claims() -> dict[str, tuple[str, ...]]:
    """Figure name -> the claim ids it shows, for every figure saved in this process with a known link."""
    return dict(_SAVED_CLAIMS)


def save(fig, name: str, out: Path | str, *, claims: Sequence[str] | None = None,
         layout: str | None = None, unaudited: str | None = None) -> list[Path]:
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
        unaudited: why the series this figure presents as theory are compared with no claim check (which quantity
            they draw that no check predicts); recorded in :func:`theory_coverage`. A figure with theory and
            neither a comparison nor a reason fails steplab's test of every figure.

    Returns:
        The two paths, PNG first.
    """
    policy = LAYOUT_POLICY if layout is None else layout
    if policy not in ("warn", "error", "ignore"):
        raise ValueError(f"layout: expected 'warn', 'error' or 'ignore', got {policy!r}")
    reason = _reason(unaudited)
    out = Path(out)
    tracker = _TRACKER.get()
    read = tracker.take() if tracker is not None else ()
    linked = tuple(claims) if claims is not None else read
    if linked:
        _SAVED_CLAIMS[name] = linked
    try:
        if policy != "ignore":
            problems = check_layout(fig)
            compared = 0
            if tracker is not None and linked:
                rival_problems, compared = audit_theory_lines(fig, tracker, linked)
                _AUDITED[name] = compared
                problems += rival_problems
            if tracker is not None:
                _COVERAGE[name] = TheoryCoverage(_theory_series(fig), compared, reason)
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
        fig.savefig(tmp, format=ext, metadata=METADATA[ext])
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
