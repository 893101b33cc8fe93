r"""JAX simulators for the cross-entropy Taylor radius (Sao 2026, "Ghosts of Softmax").

Vocabulary. A step moves the parameters along a unit direction :math:`v`,
:math:`\theta(t)=\theta_0+tv`; :math:`t` is the distance travelled. The learning rate is ``eta``
(:math:`\eta`): an update :math:`p=-\eta\,u` travels :math:`t=\|p\|`. The paper's *normalized
step* is :math:`r=t/\rho_a(v)` with :math:`\rho_a(v)=\pi/\max_x\Delta a(x;v)`; ``r`` means that
ratio and nothing else.

* :func:`directional_derivatives` -- logits :math:`z` and :math:`a=J_zv` per sample by one ``jax.jvp``;
* :func:`rho_a` -- the data-set bound :math:`\rho_a(v)=\pi T/\max_x\Delta a(x;v)`;
* :func:`line_taylor` -- Taylor coefficients of every per-sample line loss by
  ``jax.experimental.jet``, for any model (custom-derivative functions such as ``jax.nn.relu``
  are inlined first; see :func:`line_taylor`); :func:`logit_line_taylor` -- the same for logits
  that are exactly linear in :math:`t`;
* :func:`one_step_sweep` -- loss ratio, accuracy and the logit derivatives after one step
  :math:`t=r\rho_a(v)` for a grid of ``r`` and several directions (``run_grid`` over directions);
* :func:`run_adam` / :func:`train` -- Adam (optax ``scale_by_adam``) over minibatches in ``lax.scan``
  (given, or drawn from a key), optionally a
  one-step learning-rate spike, gradient clipping, or the controller
  :math:`s=\min(1,\rho_a(p/\|p\|)/\|p\|)` on the Adam update :math:`p`; :func:`spike_runs` and
  :func:`temperature_runs` are its grids (``run_grid`` over the seeds of each mode, over temperatures x seeds);
* JAX evaluations used as independent measurements of closed forms: :func:`tilted_kl`,
  :func:`cgf_increment`, :func:`logistic_loss_taylor`, :func:`logistic_inverse_curvature`;
* models in plain JAX (parameters are flat dicts of arrays): linear softmax, MLP (ReLU/GELU/tanh),
  MLP+LayerNorm, a small CNN, a one-head attention model over the image rows;
* data: scikit-learn's 8x8 digits (shipped with the package, no download).

Everything runs in float64 (``import sims`` enables x64). **Divergence is data**: every training
run returns ``diverged`` (the loss or the parameters became non-finite or exceeded
:math:`10^{150}`) and ``diverged_step`` (the first such step, -1 if none); the run continues
and nothing raises. Statistics over runs are taken over the finite runs, with the number of
diverged runs reported beside them (:func:`finite_median`). NumPy references and benchmark
cases live in :mod:`sims.reference.softmax_radius`.

The package's modules, one theme each (every public name is re-exported
here, so ``import sims.softmax_radius`` reaches all of them):

* :mod:`sims.softmax_radius.models` -- the models and data of the Taylor-radius simulators, and the argument checks
  they share;
* :mod:`sims.softmax_radius.directions` -- directions in parameter space and what a step along one does to the
  logits;
* :mod:`sims.softmax_radius.continuation` -- the line loss at complex distances: Taylor coefficients and the
  analytic continuation;
* :mod:`sims.softmax_radius.training` -- one-step sweeps and training runs;
* :mod:`sims.softmax_radius.archgrid` -- the authors' Table 1 setting: their three architectures in JAX and the runs
  over them.
"""
from __future__ import annotations

from sims.softmax_radius.models import MODEL_NAMES, MODES, digits, Model, make_model
from sims.softmax_radius.directions import (
    evaluate, normalize, random_directions, gradient_direction, directional_derivatives, logit_curvature, rho_a,
    tilted_kl, cgf_increment, logistic_loss_taylor, logistic_inverse_curvature
)
from sims.softmax_radius.continuation import (
    continued_logits, ghost_zeros, partition_margin, zeros_inside, attention_singularities, normalization_branch_point,
    continued_line_loss, line_taylor, logit_line_taylor
)
from sims.softmax_radius.training import (
    one_step_sweep, onset, mode_code, run_adam, train, spike_runs, temperature_runs
)
from sims.softmax_radius.archgrid import ARCHGRID_NAMES, archgrid_digits, archgrid_runs, finite_median

__all__ = [
    "MODEL_NAMES", "MODES", "digits", "Model", "make_model", "evaluate", "normalize", "random_directions",
    "gradient_direction", "directional_derivatives", "logit_curvature", "rho_a", "line_taylor",
    "logit_line_taylor", "continued_logits", "ghost_zeros", "attention_singularities", "normalization_branch_point",
    "zeros_inside",
    "continued_line_loss", "partition_margin", "one_step_sweep", "onset", "mode_code", "run_adam", "train",
    "spike_runs", "temperature_runs", "finite_median", "tilted_kl", "cgf_increment", "logistic_loss_taylor",
    "logistic_inverse_curvature", "ARCHGRID_NAMES", "archgrid_digits", "archgrid_runs"
]
