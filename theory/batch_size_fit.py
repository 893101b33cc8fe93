r"""The steps--batch-size hyperbola fitted to a user's own sweep, with standard errors and residuals.

A user measures, at each batch size :math:`B_i` of a sweep, the steps :math:`S_i` to reach a fixed target loss.
:func:`fit_hyperbola` fits the trade-off of :mod:`theory.batch_size`,

.. math:: S(B) = S_{\min}\Big(1 + \frac{B_{\rm crit}}{B}\Big) = S_{\min} + \frac{E_{\min}}{B},\qquad
          E_{\min} = S_{\min}B_{\rm crit},

which is linear in :math:`(S_{\min}, E_{\min})` with regressors :math:`(1, 1/B)`. Step counts scatter roughly in
proportion to their size, so the fit is weighted least squares on relative residuals, iterated once with the fitted
curve as the scale (so that a row's weight does not depend on its own noise):

.. math:: \min_{S_{\min}, E_{\min}} \sum_i \Big(\frac{S_i - S_{\min} - E_{\min}/B_i}{\tilde S_i}\Big)^2 .

Standard errors come from the residual variance :math:`\hat\sigma^2 = \mathrm{RSS}/(n-2)` times
:math:`(X^\top WX)^{-1}`; :math:`B_{\rm crit} = E_{\min}/S_{\min}` gets the delta method. The residuals say how well the
hyperbola describes the sweep, but they understate its failure far above :math:`B_{\rm crit}`: there
:math:`S/S_{\min} - 1` is small, so a 1 % miss of :math:`S` is a large miss of the steps--examples product (on a noisy
quadratic with the greedy step the product reaches about 9 at :math:`100B_{\rm crit}` while the fitted steps stay within
2 %; ``paper_checks/batch_size``). Read :math:`B_{\rm crit}` from a sweep that covers it from below.

No JAX and no I/O here. Every public function validates its arguments (:mod:`theory.validate`).
"""
from __future__ import annotations

import math

import numpy as np

from theory import validate as V

__all__ = ["fit_hyperbola"]


def _solve(b: np.ndarray, s: np.ndarray, scale: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Weighted least squares of s on (1, 1/b) with weights 1/scale^2: coefficients, their covariance, RSS."""
    X = np.stack([np.ones_like(b), 1.0 / b], axis=1) / scale[:, None]
    y = s / scale
    coef, *_ = np.linalg.lstsq(X, y, rcond=None)
    rss = float(np.sum((y - X @ coef) ** 2))
    dof = b.size - 2
    cov = (rss / dof if dof > 0 else math.nan) * np.linalg.inv(X.T @ X)
    return coef, cov, rss


def fit_hyperbola(batch_size, steps) -> dict:
    r"""Fit :math:`S(B) = S_{\min}(1 + B_{\rm crit}/B)` to a sweep (module docstring).

    Args:
      batch_size: (n,) batch sizes > 0, at least two distinct values.
      steps: (n,) steps to the target at those batch sizes, > 0; n >= 3 (two parameters and a residual).

    Returns:
      ``s_min``, ``e_min``, ``b_crit`` and their standard errors ``s_min_se``, ``e_min_se``, ``b_crit_se``;
      ``predicted`` (n,) the fitted steps; ``residual`` (n,) the relative residuals :math:`S_i/\hat S_i - 1`;
      ``rms`` their root mean square. ``ValueError`` naming ``steps`` when the fitted :math:`S_{\min}` or
      :math:`E_{\min}` is not positive (the sweep shows no steps--batch trade-off).
    """
    b = V.array("batch_size", batch_size, ndim=1, low=0.0, low_open=True)
    s = V.array("steps", steps, ndim=1, low=0.0, low_open=True)
    if s.size != b.size:
        raise ValueError(f"steps: expected one value per batch size ({b.size}), got {s.size}")
    if b.size < 3:
        raise ValueError(f"batch_size: expected at least 3 rows (2 parameters and a residual), got {b.size}")
    if np.unique(b).size < 2:
        raise ValueError(f"batch_size: expected at least two distinct batch sizes, got only {b[0]:g}")
    coef, cov, _ = _solve(b, s, s)
    fitted = coef[0] + coef[1] / b
    if np.all(fitted > 0):
        coef, cov, _ = _solve(b, s, fitted)
    s_min, e_min = float(coef[0]), float(coef[1])
    if not (s_min > 0 and e_min > 0):
        raise ValueError(f"steps: the fit gives S_min = {s_min:.4g}, E_min = {e_min:.4g}; expected both > 0 (steps that "
                         "fall with the batch size towards a positive floor)")
    b_crit = e_min / s_min
    grad = np.array([-e_min / s_min**2, 1.0 / s_min])
    pred = s_min + e_min / b
    resid = s / pred - 1
    return {"s_min": s_min, "e_min": e_min, "b_crit": b_crit,
            "s_min_se": float(math.sqrt(cov[0, 0])), "e_min_se": float(math.sqrt(cov[1, 1])),
            "b_crit_se": float(math.sqrt(grad @ cov @ grad)), "predicted": pred, "residual": resid,
            "rms": float(np.sqrt(np.mean(resid**2)))}
