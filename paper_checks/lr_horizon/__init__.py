r"""The best step size against the training horizon on power-law noisy quadratics (topic ``lr_horizon``).

Li, Wang, Chen, Zhao, Zheng, Wu (2026) derive optimal learning-rate schedules under functional scaling laws, where
the loss is governed by a source exponent :math:`s` and a capacity exponent :math:`\beta`. steplab checks, on a
diagonal noisy quadratic with :math:`\lambda_j = j^{-\beta}` (:mod:`theory.lr_horizon`):

* :mod:`paper_checks.lr_horizon.constant_step` -- the best *constant* step's horizon law
  :math:`\eta^*(N) \propto N^{-s/(s+1)}` (derived here), where it holds and where it bends (the stability cap and
  the :math:`2 - \eta\lambda` correction below, the spectrum's end above, where the loss turns noise-dominated), and
  the exact optimum against Monte Carlo SGD with steps carried over from a short run by other rules;
* :mod:`paper_checks.lr_horizon.decay` -- the peak of the quoted optimal power decay
  :math:`(1 - z/N)^{2\beta-1}` against the quoted exponent :math:`-(s - 1 + 1/\beta)/(s + 1/\beta)`, read in step
  time; and the quoted phase transition: tuned WSD keeps its plateau at the largest admissible step in the hard regime
  :math:`s < 1 - 1/\beta` and decays over the whole run in the easy one.

Every optimum is an exact argmin (SciPy's bounded searches on the exact final loss), never a grid; the
measurements are the cached experiments of :mod:`paper_checks.lr_horizon.experiments`.
"""
from paper_checks import Paper

PAPER = Paper(key="li2026", title="Optimal Learning-Rate Schedules under Functional Scaling Laws: Power Decay and "
                                  "Warmup-Stable-Decay",
              authors="B. Li, Z. Wang, F. Chen, S. Zhao, R. Zheng, L. Wu", year=2026, arxiv="2602.06797")
