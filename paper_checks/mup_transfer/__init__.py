r"""Learning-rate transfer across width after one GD step of a three-layer linear network (Hayou 2025).

* :mod:`paper_checks.mup_transfer.transfer` -- under μP the per-seed optimal rate converges to the closed form
  :math:`\eta_\infty`; under SP it shrinks like :math:`1/n`; under SP and NTP it stays random (the kernel-regime
  optimum of the random initial output);
* :mod:`paper_checks.mup_transfer.rates` -- how fast: the per-seed error shrinks like :math:`n^{-1/2}` on both sides
  of width 1024 (the paper's open question), the seed-averaged error like :math:`1/n`, and where a seed-averaged
  measurement switches from one to the other.

The simulations are the experiments of :mod:`paper_checks.mup_transfer.experiments` (:mod:`sims.mup_transfer`,
exact polynomial optima from :mod:`theory.mup_transfer`).
"""
from __future__ import annotations

from paper_checks import Paper

PAPER = Paper(key="hayou2025", title="A Proof of Learning Rate Transfer under μP", authors="S. Hayou", year=2025,
              arxiv="2511.01734")

from paper_checks.mup_transfer import rates, transfer  # noqa: E402,F401  (registers the claims)
