r"""How the Hessian spectrum of (linear) networks depends on data (HiLD workshop @ ICML 2026, ``hessian2026``).

Only the abstract was available. Its two statements -- every Hessian eigenvalue of a deep linear
network is available in closed form for arbitrary widths, depths and data, and for classification
with the squared loss the sharpness is set by the largest class proportion -- are ``quoted``; the
formulas that make them precise (the spectrum at a balanced global minimum,
:math:`\lambda_{\max}=L\pi_{\max}^{1-1/L}`, :math:`\eta_c=2/\lambda_{\max}`, the aligned two-layer
path, the Gauss--Newton operator beyond whitened balanced minima) were derived for steplab in
:mod:`theory.linear_hessian` and are ``derived``.

Layout: :mod:`~paper_checks.linear_hessian.experiments` holds the cached simulations (constructed
minima and their autodiff spectra, one shared GD sweep, the sharpening runs);
:mod:`~paper_checks.linear_hessian.spectrum` the claims about exact spectra at constructed points;
:mod:`~paper_checks.linear_hessian.training` the claims about GD; and
:mod:`~paper_checks.linear_hessian.shed` the shed-assumption claim;
:mod:`~paper_checks.linear_hessian.laws` the laws beyond whitened full-rank inputs, Lanczos at scale, the
local gauge test and the robustness count;
:mod:`~paper_checks.linear_hessian.trend` the trend reading of the robustness (the law's direction under each
relaxation).
"""
from paper_checks._registry import Paper

PAPER = Paper(
    key="hessian2026",
    title="How the Hessian-Spectrum of Neural Networks Depends on Data",
    authors="J. Singh, E. Monzio Compagnoni, A. Orvieto",
    year=2026,
    arxiv="2607.13631",
    venue="HiLD workshop @ ICML 2026, OpenReview 0kwxebmjLV",
)

# claims register in this order (spectra, then GD, then the shed assumptions)
from paper_checks.linear_hessian import spectrum, training, shed, laws, trend  # noqa: E402,F401
