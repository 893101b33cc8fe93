"""Figures: one script per topic (``figures/<topic>.py`` with ``make(results, out) -> list[Path]``).

``python -m figures`` runs every registered claim at the ``full`` budget (reusing valid cached
results), calls each topic's ``make`` and writes ``figures/out/report.md`` and ``report.html``.
Only this package imports matplotlib.
"""
