r"""Distributed (compressed / sign) SGD and their modified equations, simulated over many paths.

Topic ``sde`` (Compagnoni et al., arXiv 2506.00181). Float64 (``import sims`` enables x64); :func:`paths` also runs
in float32 (its ``dtype``).

Discrete algorithms, N agents, agent i observing :math:`g_i = \nabla f(x) + Z_i`, base step :math:`\eta`,
schedule :math:`\eta_k`:

* ``dsgd``: :math:`x^+ = x - \eta\eta_k\frac1N\sum_i g_i`;
* ``dcsgd``: :math:`x^+ = x - \eta\eta_k\frac1N\sum_i C_i(g_i)`, unbiased compressors with variance
  :math:`\omega_i` (``bernoulli``: :math:`vB/q` per coordinate, :math:`\omega = 1/q - 1`; ``rand_k``:
  keep :math:`k = d/(1+\omega)` random coordinates scaled by :math:`d/k`); agent-specific :math:`\omega_i`
  (with one :math:`\omega` for every agent, ``simulate``/``paths`` draw the Bernoulli masks of a coordinate as their
  count :math:`K \sim \mathrm{Binomial}(N, q)` from one 32-bit word instead of N: the same law, fewer draws);
* ``dcsgd_normalized``: the same with :math:`\eta` replaced by the normalization prescription
  :math:`\eta\,\eta_k / [(L_0 + L_1\|\nabla f(x)\|)(1 + (\bar\omega + d(\sigma_1^2\bar\omega+\sigma_1^2))/N)]`
  (uses the exact :math:`\|\nabla f\|`, the oracle the prescription is stated with; ``eta`` plays the
  role of the prescription's constant :math:`c`);
* ``dsignsgd``: :math:`x^+ = x - \eta\eta_k\frac1N\sum_i \mathrm{sign}(g_i)`, each sign drawn directly as
  :math:`+1` with probability :math:`F(\partial_j f/s)` (exact in law for every noise law and real :math:`\nu`).

Noise :math:`Z_i = s(\nabla f)\,\zeta_i` with per-coordinate scale
:math:`s = \sqrt{\sigma_0^2 + \sigma_1^2\|\nabla f\|^2}` (affine variance) and :math:`\zeta` standard
Gaussian, Student-t(ν) or Cauchy. Schedules :math:`\eta_k`: ``constant`` or ``inv_sqrt`` (:math:`1/\sqrt{k+1}`).

Random numbers (:func:`simulate`): drawn per block of steps in one call (time-major, one key split per block;
blocks divide the recording interval), noise values as float64 variates, sign steps and Bernoulli masks as one
32-bit word each (:func:`sims.rng.words`; :math:`P(b < t\,2^{32})` is within :math:`2^{-32}` of :math:`t`). Gaussian
and Cauchy noise are stable laws, so the agents' compressed noise is one draw per coordinate and step, scaled by
:math:`(\sum_i c_{ij}^2)^{1/2}` or :math:`\sum_i c_{ij}` (:func:`_direction`): the same law as N draws. On a CPU the
draws are still most of a step's cost: a float64 normal costs ~15 ns of a core through ``erf_inv`` against a few ns
for NumPy's ziggurat, so these paths run at about NumPy's speed with the same reduction (``make bench``); on a GPU
the same draws are cheap.

Modified equations (:func:`sde_path`): :math:`dX = b(X)dt + \sqrt{\eta}\,s(\nabla f(X))N^{-1/2}dW` with
:math:`b \in \{-\nabla f,\ -\nabla f - \tfrac\eta2\nabla^2f\nabla f,\ -\nabla f + \tfrac\eta2\nabla^2f\nabla f\}`;
the Hessian-vector product comes from ``jax.jvp`` (independent of the sympy drifts in
:mod:`theory.sde`). The diffusion reuses :func:`noise_scale`, the same noise model as the discrete
algorithms (Gaussian only: the SDE needs a covariance).

Why a hand-written integrator rather than diffrax: the weak-error measurement couples each SDE path
to a discrete path by summing the SDE's Brownian sub-increments into the discrete algorithm's noise
(:func:`coupled_weak_paths`); that needs the increments on a fixed grid that we own, it is a plain
``lax.scan`` that vmaps over thousands of paths with one compilation, and for additive noise the
stochastic Heun scheme used here is weak order 2 (:math:`E\,\Delta W\,dt/2` reproduces
:math:`E\,\Delta Z\,\Delta W = dt^2/2`, and :math:`\tfrac14 b''\sigma^2\Delta W^2dt` the
:math:`\tfrac14\sigma^2b''dt^2` term of the order-2 weak Taylor scheme), so the integrator error
stays below the :math:`O(\eta^2)` effects being measured. Multiplicative noise uses Euler-Maruyama
(Heun would converge to the Stratonovich SDE). The unit tests cross-check the deterministic Heun
path against ``diffrax.Heun``.

**Divergence is data.** Every simulator returns a boolean ``diverged`` (a state left
``|x| <= bound`` or turned non-finite) and, where steps are counted, ``diverged_at`` (the first step
index k >= 1 whose result diverged; -1 if none). A diverged path freezes at its last finite state,
so its other outputs stay finite; statistics are taken over the finite paths only, with the number
of diverged paths reported beside them.

**Validation.** Public functions check their concrete arguments with :mod:`theory.validate`
(``ValueError``/``TypeError`` naming the parameter); values that arrive traced (inside ``jit``/``vmap``)
were validated where the sweep was built.

The package's modules, one theme each (every public name is re-exported
here, so ``import sims.sde`` reaches all of them):

* :mod:`sims.sde.problems` -- the test problems of the ``sde`` simulators and the shared argument checks;
* :mod:`sims.sde.noise` -- gradient noise, compressors and step schedules of the distributed optimizers;
* :mod:`sims.sde.algorithms` -- the discrete distributed optimizers (DSGD, DCSGD, normalized DCSGD, DSignSGD): one
  configuration, the update direction of each algorithm, batched simulation of their paths, and Monte Carlo
  estimates of the mean sign :math:`E\,\mathrm{sign}(g + sZ)` and of the aggregated direction;
* :mod:`sims.sde.modified` -- modified equations as SDEs: the drifts of :mod:`theory.sde.modified` in JAX, paths by
  a path-coupled Heun (or Euler-Maruyama) integrator, weak-error paths coupled to GD, and the escape of GD and of
  each drift from a toy's basin;
* :mod:`sims.sde.distributed` -- the SDEs of DCSGD and DSignSGD in any dimension: their drift and diffusion
  coefficients (with the mean-sign law of the noise), an Euler-Maruyama integrator in blocks of random draws, and
  the sweep over step sizes.
"""
from __future__ import annotations

from sims.sde.problems import (
    PROBLEMS, TOY_PROBLEMS, NOISES, COMPRESSORS, ALGORITHMS, SCHEDULES, DRIFT_KINDS, MLP_DIM, mlp_data, mlp_init,
    loss_fn, derivatives, descent_edge
)
from sims.sde.noise import noise_scale, sample_noise, compress, schedule_factor, SIGN_NOISES, mean_sign_law
from sims.sde.algorithms import Config, direction, simulate, paths, mean_sign_mc, mean_sign_mc_many, aggregate_samples
from sims.sde.modified import drift, sde_path, coupled_weak_paths, escape_paths, escape_point, weak_point
from sims.sde.distributed import SDE_METHODS, sde_coefficients, dcsgd_sde, dsignsgd_sde, sde_sweep

__all__ = [
    "PROBLEMS", "TOY_PROBLEMS", "NOISES", "COMPRESSORS", "ALGORITHMS", "SCHEDULES", "DRIFT_KINDS", "MLP_DIM",
    "Config", "mlp_data", "mlp_init", "loss_fn", "derivatives", "noise_scale", "sample_noise", "compress",
    "direction", "schedule_factor", "simulate", "paths", "drift", "sde_path", "coupled_weak_paths", "escape_paths",
    "descent_edge", "mean_sign_mc", "mean_sign_mc_many", "aggregate_samples", "SDE_METHODS", "SIGN_NOISES",
    "mean_sign_law", "sde_coefficients", "dcsgd_sde", "dsignsgd_sde", "sde_sweep", "escape_point", "weak_point"
]
