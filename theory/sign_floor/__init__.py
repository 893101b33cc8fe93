r"""Noise floors of signSGD and SGD on the quadratic :math:`f(x) = a x^2/2`, and their constants.

Paper: Singh, Mishra, Raut (2026), arXiv 2607.12360. Only the abstract was available; every
formula here is DERIVED (worked out for steplab) and checked against simulation in
``paper_checks/sign_floor/`` (the experiments in ``paper_checks/sign_floor/experiments.py``).

**Multiplicative noise**, :math:`g = a x (1 + \sigma\xi)` with :math:`\xi` symmetric, CDF
:math:`F_\xi`. A signSGD step :math:`x \mapsto x - \eta\,\mathrm{sign}(g)` moves away from 0 with
probability :math:`p = F_\xi(-1/\sigma)`, independent of :math:`x` and :math:`a`. The lattice
:math:`c + \eta\mathbb Z` (:math:`c = x_0 \bmod \eta`) is invariant; write :math:`x = c + n\eta`,
:math:`r = p/(1-p)`. Detailed balance gives two geometric ladders

.. math:: \pi(n) = \tfrac{1-r}{2} r^{n} \;(n \ge 0), \qquad \pi(n) = \tfrac{1-r}{2} r^{-n-1} \;(n \le -1),

every step changes :math:`n` by :math:`\pm 1` (period 2), and

.. math:: E_\pi[x^2] = \tfrac{c^2 + (\eta - c)^2}{2} + \frac{2\eta^2 p(1-p)}{(1-2p)^2}.

**Additive noise**, :math:`g = a x + \sigma\xi`: a birth--death chain on the same lattice with
:math:`P(x \to x - \eta) = F_\xi(a x/\sigma)`.

**Schedules.** Along a decaying step size neither chain has a closed form; :func:`sign_schedule_mean_f`
evolves the exact law of :math:`x_k` on a grid (the only error is the grid's, and it is returned),
and SGD's exact second-moment recursion and fixed points are those of the shared noisy quadratic
(:func:`theory.nqm.moment_recursion`, :func:`theory.nqm.stationary_second_moment`,
:func:`theory.nqm.stationary_excess`: :math:`g = a x(1+\sigma_m\xi_1) + \sigma_a\xi_2` is its one-mode
case at batch size 1).

No JAX and no I/O here: sympy for the algebra, numpy/scipy for the numeric helpers. Every public
function validates its arguments (:mod:`theory.validate`).

The package's modules, one theme each (every public name is re-exported
here, so ``import theory.sign_floor`` reaches all of them):

* :mod:`theory.sign_floor.multiplicative` -- signSGD under multiplicative noise: the two geometric ladders and their
  constants;
* :mod:`theory.sign_floor.additive` -- signSGD under additive and mixed noise: birth--death chains on the lattice;
* :mod:`theory.sign_floor.sgd` -- the SGD baselines and the stationary floor of either method;
* :mod:`theory.sign_floor.schedule` -- signSGD along a decaying step size: the exact law of :math:`x_k` evolved on a
  grid;
* :mod:`theory.sign_floor.signum` -- Signum (signSGD with momentum): the floor constant from the transfer operator
  of its chain.
"""
from __future__ import annotations

from theory.sign_floor.multiplicative import (
    NOISES, METHODS, LAWS, p_sym, sigma_sym, eta_sym, a_sym, c_sym, n_sym, finite, ladder_law, second_moment_sym,
    parity_second_moments_sym, c_mid_sym, c_unif_sym, c_limits, away_probability, contraction, c_mid, c_unif,
    c_sde, second_moment, parity_second_moments, ladder_pmf
)
from theory.sign_floor.additive import (
    additive_chain, additive_floor, phi_add_expansion_sym, phi_add_series, additive_drift_floor_sym, mixed_chain,
    mixed_floor, crossover_eta, uniform_additive_floor, student_density_at_zero
)
from theory.sign_floor.sgd import (
    sgd_contraction_sym, sgd_threshold, sgd_contraction, sgd_additive_floor, floor, sgd_mult_log_step,
    sgd_mult_log_f, sgd_mult_log_mean_f
)
from theory.sign_floor.schedule import sign_schedule_mean_f
from theory.sign_floor.signum import SignumConstant, ARNOLDI_FLOATS, MAX_STATES, signum_constant

__all__ = [
    "p_sym", "ladder_law", "second_moment_sym", "parity_second_moments_sym", "c_mid_sym", "c_unif_sym", "c_limits",
    "away_probability", "contraction", "c_mid", "c_unif", "c_sde", "second_moment", "parity_second_moments",
    "ladder_pmf", "additive_chain", "additive_floor", "phi_add_expansion_sym", "phi_add_series",
    "additive_drift_floor_sym", "student_density_at_zero", "sgd_contraction_sym", "sgd_threshold",
    "sgd_contraction", "sgd_additive_floor", "sgd_mult_log_step", "sgd_mult_log_f", "sgd_mult_log_mean_f",
    "sign_schedule_mean_f", "floor", "mixed_chain", "mixed_floor", "crossover_eta", "uniform_additive_floor",
    "SignumConstant", "signum_constant", "NOISES", "METHODS", "LAWS", "finite", "sigma_sym", "eta_sym", "a_sym",
    "c_sym", "n_sym", "ARNOLDI_FLOATS", "MAX_STATES"
]
