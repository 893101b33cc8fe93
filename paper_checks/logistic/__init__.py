r"""Meng, Orvieto, Cao, De Sa (2024): GD on logistic regression with non-separable data and large steps (topic
``logistic``).

Claims (a)-(e) of the paper's abstract (with (c) also pushed to its limit: near-critical datasets
at 0.99 and positive controls just above 1), the follow-up's equal-magnitude statements (global convergence
in 1-D; a stable cycle of unit-norm data in higher dimensions, on a lift of 1-D data to R^33),
and derived ones: the flip normal form, the period-doubling cascade (second doubling, c_3, c_4,
the Feigenbaum ratio), balanced data's single 2-cycle, scale invariance (only eta*lambda matters)
and a two-point dataset with a stable 3-cycle below 2/lambda. Each pairs a closed form from :mod:`theory.logistic`
(numpy/scipy/sympy, float64) with the JAX simulator :mod:`sims.logistic`, and names the most
plausible wrong statement as a rival evaluated on the same measurement. The witnesses (the 1-D
bump-plus-spike family, the 2-D ping-pong dataset) and the normal-form constants are derived here.
Step sizes are written :math:`\eta` (the paper's :math:`\gamma`) and :math:`c = \eta\lambda`.

One module per theme, imported below in the order their claims are registered (the order of the report):

* :mod:`paper_checks.logistic.local` -- (a) loss of local stability at c = 2, (b) local convergence below it;
* :mod:`paper_checks.logistic.global_1d` -- (c) global convergence in 1-D below c = 1, and its sharpness;
* :mod:`paper_checks.logistic.cycles` -- (d) stable 2-cycles for every c in (1, 2), (e) a stable cycle below c = 1
  in two dimensions;
* :mod:`paper_checks.logistic.doubling` -- past c = 2: the flip normal form, the second doubling, balanced data's
  single 2-cycle, the cascade of the 3/4-weighted data and the Feigenbaum ratio;
* :mod:`paper_checks.logistic.scale` -- only c = eta*lambda matters (a metamorphic test);
* :mod:`paper_checks.logistic.two_points` -- two points suffice to cycle below 2/lambda;
* :mod:`paper_checks.logistic.follow_up` -- the follow-up: equal magnitudes converge globally in 1-D, data on the
  sphere still cycle in higher dimensions;
* :mod:`paper_checks.logistic.near_critical` -- (c) with power: the bump-plus-spike family pushed to c -> 1.
* :mod:`paper_checks.logistic.certified` -- (c) certified: no 2-cycle below c = 1 on the same family, proved by
  interval bounds on a grid (and every 2-cycle located above it).

Every simulation is a named experiment (``logistic.<name>``) of :mod:`paper_checks.logistic.experiments`, with the
topic's seed and datasets (``SEED``, ``CASCADE``, ``ASYMMETRIC``): claims and figures read them, and their grids
live there, so editing a range changes the topic's code version and recomputes.
"""
from __future__ import annotations

from paper_checks import Paper

PAPER = Paper(
    key="meng2024",
    title="Gradient Descent on Logistic Regression with Non-Separable Data and Large Step Sizes",
    authors="S. Y. Meng, A. Orvieto, D. Y. Cao, C. De Sa", year=2024, arxiv="2406.05033",
)

# The claim modules register their claims on import, in this order; they read PAPER above.
from paper_checks.logistic import (  # noqa: E402,F401,I001  (registration, in this order)
    local, global_1d, cycles, doubling, scale, two_points, follow_up, near_critical, certified,
)
