"""The one plotting style of steplab: theory as lines, simulation as markers, thresholds labelled.

Figures are byte-stable across reruns: PNG and PDF metadata carry no dates or versions.
"""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

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

_METADATA = {
    "png": {"Software": None},
    "pdf": {"Creator": None, "Producer": None, "CreationDate": None},
}


def figure(ncols: int = 1, nrows: int = 1, *, width: float = 4.2, height: float = 3.2, **kwargs):
    """A new figure in the steplab style: ``(fig, axes)`` with axes squeezed like ``plt.subplots``."""
    plt.rcParams.update(RC)
    return plt.subplots(nrows, ncols, figsize=(width * ncols, height * nrows), constrained_layout=True, **kwargs)


def threshold(ax, x: float, label: str, *, vertical: bool = True, color: str = MUTED) -> None:
    """Draw and label a threshold (e.g. ``1/λ``, ``2/λ``, ``r = 1``) as a dashed guide line."""
    if vertical:
        ax.axvline(x, color=color, ls="--", lw=1)
        ax.annotate(label, (x, 1), xycoords=("data", "axes fraction"), xytext=(2, -10),
                    textcoords="offset points", color=color, fontsize=8)
    else:
        ax.axhline(x, color=color, ls="--", lw=1)
        ax.annotate(label, (0, x), xycoords=("axes fraction", "data"), xytext=(4, 2),
                    textcoords="offset points", color=color, fontsize=8)


def save(fig, name: str, out: Path) -> list[Path]:
    """Write ``out/<name>.png`` and ``out/<name>.pdf`` deterministically; close the figure."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for ext in ("png", "pdf"):
        path = out / f"{name}.{ext}"
        fig.savefig(path, metadata=_METADATA[ext])
        paths.append(path)
    plt.close(fig)
    return paths
