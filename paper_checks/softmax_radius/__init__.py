r"""Claims of Sao (2026), "Ghosts of Softmax: complex singularities that limit safe step sizes in
cross-entropy" (arXiv 2603.13552) (topic ``softmax_radius``).

Each check compares a closed form of :mod:`theory.softmax_radius` (sympy, or NumPy root finding
certified by the argument principle) with an independent measurement: Taylor coefficients of the
line loss from ``jax.experimental.jet``, JVPs through trained models on the 8x8 digits, or a
simulation. Every check names the most plausible wrong statement (a rival) and evaluates it on the
same measurement. The simulations are the cached experiments of :mod:`paper_checks.softmax_radius.experiments`
(``softmax_radius.*``); the figures read them too.

Vocabulary: ``t`` is a distance along a unit direction, ``eta`` a learning rate, and ``r`` the
paper's normalized step :math:`r=t/\rho_a`.

One module per theme, imported below in the order their claims are registered (the order of the report):

* :mod:`paper_checks.softmax_radius.exact_theory` -- §4: the binary radius and its ghost above the flip point, the
  multiclass lower bound, its infimum, the zero-free strip, logistic / softmax regression;
* :mod:`paper_checks.softmax_radius.scalar_logistic` -- Appendix 5: the scalar logistic loss's radius against its
  curvature, and the Hessian ratio 4000x;
* :mod:`paper_checks.softmax_radius.hessian_scale` -- Appendix 5.4-5.5: the Hessian step scale 2/κ against ρ_a along
  random directions at three training stages, and the crossover margin of eq. (48);
* :mod:`paper_checks.softmax_radius.kl` -- Appendix 4: the KL remainder bound, the direction label of eq. (26), the
  sharp third moment;
* :mod:`paper_checks.softmax_radius.one_step` -- §6.2: one step from trained models, no accuracy lost below r = 1,
  onsets between r = 1 and 10;
* :mod:`paper_checks.softmax_radius.trained_radius` -- the Taylor radius on trained models: at least rho_a (Prop.
  App. 1.1), the located ghost, the truncation error;
* :mod:`paper_checks.softmax_radius.temperature_scaling` -- §6.4: temperature and the onset's spread;
* :mod:`paper_checks.softmax_radius.spike` -- Table 1: the learning-rate spike and the controller;
* :mod:`paper_checks.softmax_radius.normalization` -- steplab's: the branch points of the normalization layers of
  ``mlp_ln`` and ``cnn_bn``, in closed form and on the continued models.

``PAPER`` and ``ARXIV`` (the prefix of every locator) are defined here and read by every claim module.
"""
from __future__ import annotations

from paper_checks import Paper

PAPER = Paper(
    key="sao2026",
    title="Ghosts of Softmax: complex singularities that limit safe step sizes in cross-entropy",
    authors="Piyush Sao",
    year=2026,
    arxiv="2603.13552",
)

ARXIV = "arXiv:2603.13552"
# the paper's text: the author's repository github.com/piyush314/ghosts-of-softmax, assets/paper.pdf (builds of
# 2026-03-13, = arXiv v1, and 2026-03-26); a locator names the later build where a quote is in it only

# The claim modules register their claims on import, in this order; they read the names above.
from paper_checks.softmax_radius import (  # noqa: E402,F401,I001  (registration, in this order)
    exact_theory, scalar_logistic, hessian_scale, kl, one_step, trained_radius, temperature_scaling, spike,
    normalization,
)
