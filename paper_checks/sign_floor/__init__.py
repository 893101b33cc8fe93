r"""Singh, Mishra, Raut (2026): noise structure and normalization decide whether cooldown helps (topic ``sign_floor``).

Only the abstract of arXiv 2607.12360 was available. Every claim is therefore labelled ``derived``:
even where a statement restates an abstract sentence (geometric contraction of SGD, the
:math:`\eta^2` floor of sign/normalized methods, additive noise reinstating a floor, scale
invariance in d > 1, robustness to heavy tails, the cooldown dissociation), the formulas,
constants and rates that make it checkable were worked out for steplab, not read in the paper.

Each claim pairs a closed form (or an exact numerical law) from :mod:`theory.sign_floor` with a
JAX simulation from :mod:`sims.sign_floor`, run as a named, cached experiment of
:mod:`paper_checks.sign_floor.experiments`, and names the most plausible wrong statements (the other
lattice constant, the first-order SDE's constant, the floor without its :math:`\eta^2` factor, slope 1
instead of 2, a chain without its period-2 parity, the loss tracking the instantaneous floor during a
cooldown, ...) which the same measurement must reject. Monte Carlo bands are :math:`z = 4` standard errors
across independent chains (a fixed seed and a handful of comparisons per claim: a 4-SE miss is a real
disagreement).

One module per theme, imported below in the order their claims are registered (the order of the report):

* :mod:`paper_checks.sign_floor.multiplicative` -- multiplicative noise, exact law: the two lattice constants, free
  of a and eta, the period-2 chain, Student-t noise;
* :mod:`paper_checks.sign_floor.slopes` -- the eta^2 slopes under multiplicative noise, scale invariance, the
  slope 1 under additive noise;
* :mod:`paper_checks.sign_floor.additive` -- additive noise: the exact chain and its small-kappa series;
* :mod:`paper_checks.sign_floor.sgd` -- SGD baselines: geometric contraction, additive and mixed floors;
* :mod:`paper_checks.sign_floor.schedules` -- cooldown schedules: the dissociation, the best fraction, the demo
  at scale;
* :mod:`paper_checks.sign_floor.mixed` -- mixed noise: the exact chain and the slope crossover;
* :mod:`paper_checks.sign_floor.noise_laws` -- heavy tails and other noise laws;
* :mod:`paper_checks.sign_floor.sde_floor` -- the first-order SignSGD SDE's floor;
* :mod:`paper_checks.sign_floor.regime` -- the noise-regime diagnostic on digits, the local form, the minibatch
  sign bias;
* :mod:`paper_checks.sign_floor.signum` -- Signum's floor constant.

``PAPER``, ``SOURCE`` (the claims' common source), ``Z`` (the Monte Carlo band in SE) and ``WHY_MC`` (its reason)
are defined here and read by every claim module.
"""
from __future__ import annotations

from paper_checks import Paper

PAPER = Paper(
    key="singh2026",
    title=("Same Loss, Same Noise, Opposite Schedules: Noise Structure and Optimizer Normalization "
           "Jointly Determine Whether Learning-Rate Cooldown Helps"),
    authors="S. Singh, A. Mishra, S. Raut", year=2026, arxiv="2607.12360",
)
SOURCE = "derived here (only the abstract was available)"
Z = 4.0
WHY_MC = ("4 standard errors of the mean over independent chains (per-chain Cesàro averages are "
          "independent); the stationary chain is reached long before the burn-in ends, so no bias term")

# The claim modules register their claims on import, in this order; they read the names above.
from paper_checks.sign_floor import (  # noqa: E402,F401,I001  (registration, in this order)
    multiplicative, slopes, additive, sgd, schedules, mixed, noise_laws, sde_floor, regime, signum,
)
