r"""Low-precision weights: the round-to-nearest freeze and stochastic rounding (topic ``low_precision``).

Papers: Shang (2026), *The Silent Freeze: Predicting When Low-Precision Training Stops Learning* (arXiv 2607.09800;
only its abstract was recovered), and Zamirai, Zhang, Aberger, De Sa (2020), *Revisiting BFloat16 Training* (arXiv
2010.06192; its abstract). The claims quote their abstracts; every closed form that makes a sentence checkable (the
freeze band, its :math:`1/\eta` floor, the freeze step from the exact path, the stochastic-rounding two-point law)
is derived in :mod:`theory.low_precision`, and the runs are :func:`sims.low_precision.gd` (bf16 emulated bit by bit
on float32 words in JAX).

Modules, imported below in the order their claims are registered:

* :mod:`paper_checks.low_precision.freeze` -- round-to-nearest: the frozen error, its band and :math:`1/\eta` floor,
  float32 against bf16 storage, the freeze step predicted from the exact path and where that prediction breaks;
* :mod:`paper_checks.low_precision.stochastic` -- stochastic rounding: no freeze, the two-point stationary law.

The experiments are in :mod:`paper_checks.low_precision.experiments`. ``SHANG``, ``ZAMIRAI`` (the papers), ``Z``
(the Monte Carlo band in standard errors) are defined here.
"""
from __future__ import annotations

from paper_checks import Paper

SHANG = Paper(key="shang2026", title="The Silent Freeze: Predicting When Low-Precision Training Stops Learning",
              authors="Z. Shang", year=2026, arxiv="2607.09800")
ZAMIRAI = Paper(key="zamirai2020", title="Revisiting BFloat16 Training",
                authors="P. Zamirai, J. Zhang, C. R. Aberger, C. De Sa", year=2020, arxiv="2010.06192")
Z = 4.0

# The claim modules register their claims on import, in this order.
from paper_checks.low_precision import freeze, stochastic, kahan, adam, noise  # noqa: F401, I001  (registration, in this order)
