r"""Modified equations, (L0,L1)-smoothness, compressed and sign-based distributed SGD: closed forms.

Topic ``sde`` (Compagnoni et al., arXiv 2506.00181). The modified equations below are standard and
re-derived here in sympy; the exact 1-D DCSGD factors, the quartic/cosh thresholds, the Lyapunov
exponent of normalized DCSGD and the linearized DSignSGD variance are derived here.

Modified equations of gradient descent :math:`x_{k+1} = x_k - \eta\nabla f(x_k)` (drifts):

.. math::
   b_1 = -\nabla f,\qquad
   b_2 = -\nabla\bigl(f + \tfrac{\eta}{4}\|\nabla f\|^2\bigr) = -\nabla f - \tfrac{\eta}{2}\nabla^2 f\,\nabla f,\qquad
   b_c = -\nabla f + \tfrac{\eta}{2}\nabla^2 f\,\nabla f .

:math:`b_c` (the curvature-corrected drift) makes :math:`\tfrac{d}{dt}f(X_t)` equal the one-step
Taylor quotient :math:`(f(x-\eta\nabla f)-f(x))/\eta = -\|\nabla f\|^2 + \tfrac{\eta}{2}\nabla f^\top
\nabla^2 f\,\nabla f + O(\eta^2)`; the SDEs add the diffusion :math:`\sqrt{\eta}\,\Sigma^{1/2}dW`.

Pure mathematics: sympy, with numpy/scipy for the numeric closed forms (erf, Student-t CDF,
quadrature, root finding). No JAX, no I/O, no plotting. Every public function validates its
arguments (:mod:`theory.validate`).

The package's modules, one theme each (every public name is re-exported
here, so ``import theory.sde`` reaches all of them):

* :mod:`theory.sde.modified` -- modified equations of gradient descent and the 1-D toy functions (closed forms in
  sympy);
* :mod:`theory.sde.thresholds` -- step-size thresholds of gradient descent and its modified equations on the toy
  functions, and the (L0, L1)-smoothness step conditions;
* :mod:`theory.sde.sign_laws` -- the laws of a noisy sign: :math:`E\,\mathrm{sign}(g + sZ)` and its variance under
  Gaussian, Student-t and Cauchy noise, the density at zero that sets the slope at :math:`g = 0`, the contraction of
  DSignSGD on a quadratic and the variance of its linearized recursion;
* :mod:`theory.sde.dcsgd` -- compressed distributed SGD (DCSGD) on the quadratic: exact mean-square factors and
  thresholds, the normalization prescription, the Lyapunov exponent, the per-model mean-square thresholds of the
  SDEs and the one-step generator quotients;
* :mod:`theory.sde.sign_descent` -- distributed SignSGD (DSignSGD): the one-step descent bound and its remainder,
  the sufficient step (and Theorem 4.3's), the (L0, L1) constants of the toys, the exact one-step change and the
  critical step of the sign models;
* :mod:`theory.sde.extremal` -- DSignSGD on the extremal (L0, L1)-smooth functions: the ridge (one coordinate) and
  the radial function (all coordinates), their exact one-step change and critical step, and the steps at which the
  sufficient-decrease condition holds;
* :mod:`theory.sde.schedule` -- pre-scheduled steps :math:`\eta_t = \eta_0c_t` on the quartic :math:`x^4/4`: the
  escape threshold without noise, the divergence probability of DCSGD under multiplicative or affine noise.
"""
from __future__ import annotations

from theory.sde.modified import (
    DRIFT_KINDS, ESCAPE_KINDS, NOISE_LAWS, TOY_FUNCTIONS, ETA, X, gradient, hessian, drift, modified_drifts,
    taylor_quotient, energy_rate, toy_function
)
from theory.sde.thresholds import (
    quadratic_log_rate, quadratic_rate_slope, quadratic_rate_gap, quadratic_threshold, critical_step,
    quartic_thresholds, escape_threshold_x, l0_for_l1, sufficient_step, descent_margin
)
from theory.sde.sign_laws import (
    noise_density_at_zero, mean_sign, sign_variance, mean_sign_symbolic, mean_sign_slope_at_zero, sign_contraction,
    sign_linear_variance
)
from theory.sde.dcsgd import (
    dcsgd_ms_factor_symbolic, dcsgd_ms_factor, dcsgd_threshold, normalization_factor, normalized_step,
    dcsgd_lyapunov, MS_MODELS, ms_growth_symbolic, ms_threshold_symbolic, ms_excess, ms_threshold, ms_rate,
    dcsgd_noise_variance, dcsgd_direction_moments, ONE_STEP_FUNCTIONS, dcsgd_one_step_quotient, one_step_generator
)
from theory.sde.sign_descent import (
    SIGN_DESCENT_FUNCTIONS, SIGN_STEP_RULES, sign_descent_bound_symbolic, sign_remainder_factor, sign_slope_bounds,
    sign_descent_bound, sign_sufficient_step, sign_descent_K_symbolic, theorem43_step, sign_l0l1,
    sign_one_step_change, SIGN_CHANGE_MODELS, sign_generator_change, sign_critical_step
)
from theory.sde.extremal import (
    RIDGE_MAX_TRIALS, l0l1_extremal_symbolic, l0l1_extremal, ridge_law, ridge_one_step_change, ridge_critical_step,
    ridge_condition_steps, RADIAL_MAX_STATES, radial_law, radial_one_step_change, radial_critical_step
)
from theory.sde.schedule import (
    SCHEDULE_KINDS, quartic_schedule_map, quartic_schedule_threshold, quartic_schedule_divergence,
    quartic_schedule_divergence_affine
)

__all__ = [
    "DRIFT_KINDS", "ESCAPE_KINDS", "NOISE_LAWS", "TOY_FUNCTIONS", "ETA", "gradient", "hessian", "drift",
    "modified_drifts", "taylor_quotient", "energy_rate", "toy_function", "quadratic_log_rate",
    "quadratic_rate_slope", "quadratic_rate_gap", "quadratic_threshold", "critical_step", "quartic_thresholds",
    "escape_threshold_x", "l0_for_l1", "sufficient_step", "descent_margin", "dcsgd_ms_factor_symbolic",
    "dcsgd_ms_factor", "dcsgd_threshold", "normalization_factor", "normalized_step", "dcsgd_lyapunov",
    "noise_density_at_zero", "mean_sign", "sign_variance", "mean_sign_symbolic", "mean_sign_slope_at_zero",
    "sign_contraction", "sign_linear_variance", "MS_MODELS", "ms_growth_symbolic", "ms_threshold_symbolic",
    "ms_threshold", "ms_rate", "ms_excess", "dcsgd_noise_variance", "dcsgd_one_step_quotient",
    "dcsgd_direction_moments", "ONE_STEP_FUNCTIONS", "one_step_generator", "SIGN_DESCENT_FUNCTIONS",
    "SIGN_STEP_RULES", "SIGN_CHANGE_MODELS", "sign_descent_bound_symbolic", "sign_remainder_factor",
    "sign_slope_bounds", "sign_descent_bound", "sign_sufficient_step", "theorem43_step", "sign_l0l1",
    "sign_one_step_change", "sign_critical_step", "sign_generator_change", "sign_descent_K_symbolic",
    "RIDGE_MAX_TRIALS", "l0l1_extremal_symbolic", "l0l1_extremal", "ridge_one_step_change", "ridge_critical_step",
    "ridge_condition_steps", "RADIAL_MAX_STATES", "radial_one_step_change", "radial_critical_step",
    "SCHEDULE_KINDS", "quartic_schedule_map", "quartic_schedule_threshold", "quartic_schedule_divergence",
    "quartic_schedule_divergence_affine", "X", "radial_law", "ridge_law"
]
