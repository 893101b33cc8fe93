r"""Muon (orthogonalized momentum updates) on matrix parameters: one module per theme.

* :mod:`paper_checks.muon.spectral_ball` -- Chen, Li & Liu 2025 (Muon with decoupled weight decay optimizes under a
  spectral-norm constraint): the ball :math:`\|W\|_{op} \le 1/\lambda` with the exact polar factor, the window of
  :math:`\eta\lambda` where it is invariant, and steplab's measurement of where the public reference code's quintic
  Newton--Schulz iteration settles instead (outside the ball);
* :mod:`paper_checks.muon.modes` -- Rhee, Simon & Karkada 2026 (Muon learns the modes of a matrix factorization at
  one rate, the smallest first; it stays stable past gradient descent's sharpness threshold) in the authors' notebook
  setting, and the single-matrix arrival times :math:`t_i = s_i/\eta`.

The simulations are the experiments of :mod:`paper_checks.muon.experiments` on :mod:`sims.muon`; the closed forms are
:mod:`theory.muon`.
"""
from paper_checks._registry import Paper

CHEN2025 = Paper(key="chen2025", title="Muon Optimizes Under Spectral Norm Constraints",
                 authors="L. Chen, J. Li, Q. Liu", year=2025, arxiv="2506.15054")
RHEE2026 = Paper(key="rhee2026",
                 title="Muon learns balanced solutions in matrix factorization without slow saddle-to-saddle dynamics",
                 authors="Rhee, Simon, Karkada", year=2026, arxiv="2606.30509")
