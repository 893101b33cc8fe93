r"""Claims of Compagnoni et al. (arXiv 2506.00181): SDEs of compressed and sign-based SGD under
(L0,L1)-smoothness (topic ``sde``).

The full text was not available to steplab: the abstract's statements are the paper's, the modified
equations and Theorem 4.2's step condition come from secondary summaries and are re-derived in
:mod:`theory.sde`; every concrete setup (toy functions, noise models, grids, the exact 1-D DCSGD
factors, the Lyapunov exponent, the linearized sign variance, the MLP) is ours and labelled
``derived``. Each check pairs a closed form from :mod:`theory.sde` with a measurement of the
*discrete* algorithm (or of an SDE path) from :mod:`sims.sde`, and names rivals evaluated on the
same measurement.

One module per theme, imported below in the order their claims are registered (the order of the report):

* :mod:`paper_checks.sde.escape` -- the classic modified equations miss GD's step-size restriction: escape
  thresholds on :math:`\lambda x^2/2`, :math:`x^4/4`, :math:`2\cosh x` and the quadratic's log-rates;
* :mod:`paper_checks.sde.weak_order` -- weak order of the classic first- and second-order SDEs and the corrected one;
* :mod:`paper_checks.sde.dcsgd` -- DCSGD on :math:`a x^2/2`: its mean-square factor and its Lyapunov exponent;
* :mod:`paper_checks.sde.l0l1` -- the toys' :math:`(L_0, L_1)` constants and the sufficient step;
* :mod:`paper_checks.sde.sign` -- the mean-sign laws and DSignSGD's convergence under Cauchy noise;
* :mod:`paper_checks.sde.mlp` -- the normalization's edge on a small MLP;
* :mod:`paper_checks.sde.models` -- which modified equation matches discrete DCSGD: mean-square thresholds per model
  and the one-step drift;
* :mod:`paper_checks.sde.normalization` -- the degree of normalization: the prescribed rule's edge and noise floor;
* :mod:`paper_checks.sde.weak_order_new` -- weak order of the paper's new DCSGD and DSignSGD SDEs;
* :mod:`paper_checks.sde.student_t` -- DSignSGD under Student-t noise with a constant and a decaying step;
* :mod:`paper_checks.sde.step_conditions` -- Theorem 4.2's factor is exact; DSignSGD's one-step descent (Theorem 4.3);
* :mod:`paper_checks.sde.schedule` -- pre-scheduled decaying steps diverge unless normalized;
* :mod:`paper_checks.sde.phi` -- whether Theorem 4.3's Grönwall factor :math:`\varphi` is needed.

The simulations are the named, cached experiments of :mod:`paper_checks.sde.experiments`, shared with
``figures/sde.py``.
"""
from __future__ import annotations

from paper_checks._registry import Paper

PAPER = Paper(
    key="compagnoni2025",
    title="On the Interaction of Batch Noise, Adaptivity, and Compression, under (L0,L1)-Smoothness: An SDE Approach",
    authors="E. Monzio Compagnoni, R. Islamov, F. N. Proske, A. Lucchi, A. Orvieto, E. Gorbunov",
    year=2025,
    arxiv="2506.00181",
)

# The claim modules register their claims on import, in this order; they read PAPER above.
from paper_checks.sde import (  # noqa: E402,F401,I001  (registration, in this order)
    escape, weak_order, dcsgd, l0l1, sign, mlp, models, normalization, weak_order_new, student_t, step_conditions,
    schedule, phi,
)
