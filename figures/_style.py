"""The plotting style of the topic figures (``from figures import _style as st``).

A thin alias of the public :mod:`figures.plot`: the colours, ``figure``, ``threshold`` and ``save``
(byte-stable PNG + PDF, layout checked) live there.
"""
from __future__ import annotations

from figures.plot import (  # noqa: F401
    ACCENT, MUTED, PALETTE, RC, SIM, THEORY, METADATA, bifurcation, check_layout, figure, save,
    theory_vs_simulation, threshold,
)
