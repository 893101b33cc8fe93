r"""Adaptive gradient methods at the edge of stability (Cohen et al. 2022): Adam's and RMSProp's thresholds.

* :mod:`paper_checks.adaptive_eos.thresholds` -- the frozen-preconditioner threshold
  :math:`\eta\lambda_{\max}(P^{-1}H) < 2(1+\beta_1)/(1-\beta_1)` (38 at :math:`\beta_1 = 0.9`) bisected on simulated
  Adam with :math:`P` frozen, and RMSProp's exact lattice 2-cycle sitting on its threshold 2;
* :mod:`paper_checks.adaptive_eos.equilibrium` -- full Adam on quadratics and on a tiny MLP: the preconditioned
  sharpness equilibrates near (below) 38/:math:`\eta`, the departure measured with its standard error, and the
  window in :math:`\beta_2` (a slowly varying preconditioner) where the threshold holds.

The simulations are the experiments of :mod:`paper_checks.adaptive_eos.experiments` on :mod:`sims.adaptive_eos`;
the closed forms are :mod:`theory.adaptive_eos`.
"""
from paper_checks import Paper

PAPER = Paper(key="cohen2022", title="Adaptive Gradient Methods at the Edge of Stability",
              authors="J. M. Cohen, B. Ghorbani, S. Krishnan, N. Agarwal, S. Medapati, M. Badura, D. Suo, D. Cardoze, "
                      "Z. Nado, G. E. Dahl, J. Gilmer", year=2022, arxiv="2207.14484")

WHERE = "arXiv:2207.14484, abstract"
QUOTE_38 = "For Adam with step size η and β₁ = 0.9, this stability threshold is 38/η."
QUOTE_EQ = ("during full-batch training, the maximum eigenvalue of the preconditioned Hessian typically equilibrates "
            "at a certain numerical value -- the stability threshold of a gradient descent algorithm.")
