"""Figures: one script per topic, ``figures/<topic>.py`` with ``make(results, out, budget) -> list[Path]``.

``results`` maps claim ids to their :class:`~paper_checks.Result`; other data comes from the topic's
cached experiments (figures never simulate). ``python -m figures`` (or ``steplab figures``) runs every
registered claim at the ``full`` budget, reusing valid cached results, calls each topic's ``make``
and writes ``figures/out/report.md`` and ``report.html``. Public plotting helpers live in
:mod:`figures.plot`; the ``steplab`` command in :mod:`figures._cli`. Only this package imports
matplotlib.
"""
