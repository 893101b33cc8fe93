r"""Deep linear (and tanh / ReLU) networks in JAX: model, data, minima, GD, and sweeps over many shapes at once.

Topic ``linear_hessian`` (Singh, Monzio Compagnoni, Orvieto 2026). Float64 (``import sims`` enables x64).

Model and loss (the conventions of :mod:`theory.linear_hessian`):
:math:`f_\theta(X)=W_L\,\phi(W_{L-1}\cdots\phi(W_1X))`, :math:`\mathcal L=\tfrac1{2n}\lVert f_\theta(X)-Y\rVert_F^2`,
:math:`\theta\in\mathbb R^P` the row-major concatenation of :math:`W_1,\dots,W_L`. Sweeps embed every net in one
padded frame (:data:`sims.linear_hessian.frame.DMAX`, :data:`sims.linear_hessian.frame.LMAX`) so that a single compiled program covers all widths, depths and
activations.

**Divergence is data**: GD runs report ``diverged`` and ``diverged_step`` (``-1`` if none), freeze the iterate at the
last finite point and record NaN from then on.

The package's modules, one theme each (every public name is re-exported here, so ``import sims.linear_hessian``
reaches all of them):

* :mod:`sims.linear_hessian.net` -- the plain net: parameters, forward pass and losses, dense Hessians and
  HVP-Lanczos, whitened and class data, balanced minima and gauges, initialisations, GD with the sharpness tracked
  (:func:`sims.linear_hessian.net.train_gd`) and a batched GD sweep over step sizes
  (:func:`sims.linear_hessian.net.gd_sweep`);
* :mod:`sims.linear_hessian.frame` -- the padded embedding ("frame") and its traced building blocks, and
  :func:`sims.linear_hessian.frame.cases`, which reads a padded sweep result back one unpadded case at a time;
* :mod:`sims.linear_hessian.spectrum` -- constructed points (balanced / gauged minima, the origin) and their exact
  autodiff spectra, as sweeps;
* :mod:`sims.linear_hessian.train` -- GD sweeps on frame-embedded nets, and the reduced GD map of the aligned
  two-layer path;
* :mod:`sims.linear_hessian.laws` -- data and minima beyond whitened full-rank inputs (orthogonal class means,
  inputs whitened on a subspace, the minimum-norm balanced minimum).

Private helpers are shared between these modules only; callers use the names below.
"""
from __future__ import annotations

from sims.linear_hessian.net import (
    ACTIVATIONS, BLOWUP, param_shapes, n_params, unflatten, flatten, forward, loss, class_losses, covariance_loss,
    dense_hessian, hessian_eigvalsh, top_eigenvalues, class_data, whitened_data, balanced_minimum, random_gauge,
    balancedness_error, init_params, xavier_init, aligned_init, mode_strengths, train_gd, gd_sweep,
)
from sims.linear_hessian.frame import (
    DMAX, LMAX, N_SAMPLES, ACT_CODES, frame_widths, active_indices, embed, strip, PADDED, cases,
)
from sims.linear_hessian.laws import class_means_data, projected_data, min_norm_balanced_minimum
from sims.linear_hessian.spectrum import CHUNK, constructed_minima, hessian_spectra, case_grid
from sims.linear_hessian.train import train_sweep, aligned_path

__all__ = [
    # net
    "ACTIVATIONS", "BLOWUP", "param_shapes", "n_params", "unflatten", "flatten", "forward", "loss", "class_losses",
    "covariance_loss", "dense_hessian", "hessian_eigvalsh", "top_eigenvalues",
    "class_data", "whitened_data", "balanced_minimum", "random_gauge", "balancedness_error",
    "init_params", "xavier_init", "aligned_init", "mode_strengths", "train_gd", "gd_sweep",
    # frame
    "DMAX", "LMAX", "N_SAMPLES", "ACT_CODES", "frame_widths", "active_indices", "embed", "strip", "PADDED", "cases",
    # laws
    "class_means_data", "projected_data", "min_norm_balanced_minimum",
    # spectrum
    "CHUNK", "constructed_minima", "hessian_spectra", "case_grid",
    # train
    "train_sweep", "aligned_path",
]
