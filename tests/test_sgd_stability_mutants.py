r"""Claims of the ``sgd_stability`` topic against plausible mistakes in the theory they test (issue 27, "power you can
measure").

Each test applies one mistake to the theory function a claim calls (``monkeypatch`` on the module the claim reads it
from), reruns the claim at the quick budget on the same cached experiment, and asserts the claim turns ``failed``:
the measurement, obtained without that function, rejects the mutated prediction. The unmutated claim passing is
``tests/test_power.py``'s job.

* ``mulayoff2024.second_moment_of_paths_large_n`` -- the mixture weight with :math:`n` where :math:`n - 1` belongs,
  :math:`p = (n-B)/(Bn)` (1.6 % off at :math:`n = 64`): the second moment over eight steps cannot see it, the per-step
  batch-noise share does.
* ``steplab.heavy_ball_optimal_rate`` -- the tuned momentum :math:`\mu^* = ((\sqrt\kappa-1)/(\sqrt\kappa+1))^2` taken
  for the rate (the rate is its square root): 10 % to 50 % off over :math:`\kappa` = 10 .. 1e4, against a measured
  rate resolved to 1e-7.
* ``wusu2023.sharpness_is_a_parameter_norm`` -- the weighted norm :math:`\sum_k a_k(u_k^2+v_k^2)` read without the feature
  weights :math:`a_k` (as if the inputs were whitened): the autodiff trace, resolved to round-off, rejects it.
* ``mulayoff2024.moderate_batch_near_gd`` -- the threshold of batches drawn with replacement (:math:`p = 1/B`) where
  they are drawn without (:math:`p = (n-B)/(B(n-1))`, 12 % off in the gap at :math:`B = 64`, :math:`n = 512`): the gap
  measured from sampled batches rejects it;
* ``mulayoff2024.necessary_conditions`` -- condition (15) without the weight :math:`p` (the single-sample spread at every
  :math:`B`): the located thresholds exceed it; and condition (16) doubled: it is attained at :math:`B = 1` on unit
  rank-one Hessians, which the located threshold shows.
* ``mulayoff2024.mixture_identity`` -- the sympy derivation with independent inclusions (:math:`P(i,j\in\mathcal B) =
  (B/n)^2`): the weights read off the enumeration reject it.
* ``steplab.naive_monte_carlo_trap`` -- the simulator's :math:`\log\|\theta_T\|^2` halved (the log norm): each group's
  naive rate leaves the interval between its paths' mean and largest :math:`2\gamma_p`.
* ``steplab.almost_sure_threshold_is_larger`` -- the Lyapunov exponent divided by :math:`T` instead of :math:`T - b`: the
  exponent at a quarter of the crossing misses the commuting closed form.
* ``mulayoff2024.covariance_limit``, ``mulayoff2024.covariance_exists_below_threshold`` and
  ``steplab.covariance_small_step_window`` -- the mixture weight with :math:`n` where :math:`n - 1` belongs (the limit
  13 % to 90 % off, the threshold and the small-step law's boundary moved): the exact moments and the paths reject the
  limit, the located edges the threshold and the boundary; and the limit without the multiplicative term
  (:math:`(2C)^{-1}` for :math:`(2C - \eta D)^\dagger`, the small-step solution), rejected by both measurements.
* (issue 33 audit) ``wusu2023.trace_bound_at_batch_one`` -- the trace bound without its factor 2
  (:math:`\mathrm{tr}H \le 1/\eta`): the located :math:`\eta^*(1)\,\mathrm{tr}H` reaches 1.998;
  ``polyak1964.momentum_stability_regions`` -- Nesterov's edge taken as heavy ball's :math:`2(1+\mu)`: the located edges
  reject it; ``polyak1964.heavy_ball_stationary_variance`` -- the variance without :math:`(1+\mu)/(1-\mu)`: the paths'
  time averages reject it.

Claims-only mutation score (``python -m tests.mutation --topic sgd_stability --claims-only --n 16 --seed 0``): 10/16
before these, 14/16 after; the two left are the divergence flag of ``moment_growth`` (read by no claim) and the default
quartic coefficient of ``delayed_noisy`` (no claim uses the default), both killed by unit tests.
"""
from __future__ import annotations

import numpy as np
import pytest

import sims.sgd_stability as sim
import theory.sgd_stability as th
from paper_checks import Budget, get_claim
from paper_checks.sgd_stability import experiments as ex

pytestmark = pytest.mark.xdist_group("sgd_stability")


def _mutated_status(monkeypatch, claim_id: str, name: str, mutant) -> str:
    """The claim's status with ``theory.sgd_stability.<name>`` replaced by ``mutant``, after one unmutated run that must
    pass (its experiments are then cached with the true theory: the mutant changes the prediction only)."""
    claim = get_claim(claim_id)
    assert claim.status(claim.run(Budget("quick"))) == "passed"
    monkeypatch.setattr(th, name, mutant)
    return claim.status(claim.run(Budget("quick")))


def test_mixture_weight_with_n_instead_of_n_minus_one_fails_the_paths_claim(monkeypatch):
    original = th.batch_weight

    def with_n(n, batch_size, sampling="without"):
        if sampling == "with":
            return original(n, batch_size, sampling)
        return (n - batch_size) / (batch_size * n)

    assert with_n(64, 16) == pytest.approx(48 / 1024)
    assert _mutated_status(monkeypatch, "mulayoff2024.second_moment_of_paths_large_n", "batch_weight", with_n) == "failed"


def test_momentum_taken_for_the_rate_fails_the_heavy_ball_rate_claim(monkeypatch):
    original = th.heavy_ball_optimal

    def momentum_as_rate(lam_min, lam_max):
        out = original(lam_min, lam_max)
        return {**out, "rate": out["mu"]}

    assert momentum_as_rate(0.01, 1.0)["rate"] == pytest.approx((9 / 11) ** 2)
    assert _mutated_status(monkeypatch, "steplab.heavy_ball_optimal_rate", "heavy_ball_optimal", momentum_as_rate) == "failed"


def test_unweighted_norm_fails_the_sharpness_norm_claim(monkeypatch):
    original = th.dln_sharpness_norm

    def unweighted(u, v, X):
        out = original(u, v, X)
        return {**out, "trace": out["norm_sq"]}

    assert unweighted([1.0, 2.0], [1.0, 0.5], [[2.0, 0.0]])["trace"] == pytest.approx(6.25)
    assert _mutated_status(monkeypatch, "wusu2023.sharpness_is_a_parameter_norm", "dln_sharpness_norm",
                           unweighted) == "failed"


def test_with_replacement_threshold_fails_the_moderate_batch_claim(monkeypatch):
    original = th.ms_threshold

    def with_replacement(hessians, batch_size, sampling="without", *, max_bytes=None):
        return original(hessians, batch_size, "with", max_bytes=max_bytes)

    assert _mutated_status(monkeypatch, "mulayoff2024.moderate_batch_near_gd", "ms_threshold", with_replacement) == "failed"


def test_unweighted_spread_fails_the_necessary_conditions_claim(monkeypatch):
    original = th.necessary_conditions

    def unweighted(hessians, batch_size, sampling="without"):
        return {**original(hessians, batch_size, sampling), "top": original(hessians, 1)["top"]}

    assert _mutated_status(monkeypatch, "mulayoff2024.necessary_conditions", "necessary_conditions", unweighted) == "failed"


# ------------------------------------------------------------------------------------------- issue 27, second pass
# Survivors of the claims-only mutation run (seed 0, n 16) that a claim now sees. For a simulator mistake the experiment
# is recomputed uncached (``Experiment.fn``) with the mistake in place and the claim judged on it (``Claim.run``).

def _status_with_experiment(monkeypatch, claim_id: str, name: str, wrong: dict) -> str:
    """The claim's status when the experiment ``name`` of ``paper_checks.sgd_stability.experiments`` returns ``wrong``."""
    monkeypatch.setattr(ex, name, lambda budget: wrong)
    claim = get_claim(claim_id)
    return claim.status(claim.run(Budget("quick")))


def test_independent_inclusions_fail_the_mixture_identity_claim(monkeypatch):
    r"""The pair inclusion probability taken as :math:`(B/n)^2` (two members drawn independently) in the sympy derivation:
    the weight of :math:`H\otimes H` becomes 1 at every :math:`B` and the per-sample weight :math:`(n-B)/(nB)`; the weights
    read off the enumerated :math:`E[H_B\otimes H_B]` reject it (the closed form :func:`kron_second_moment` is untouched)."""
    original = th.mixture_identity_sympy

    def independent():
        out = original()
        n, b = out["n"], out["B"]
        p2 = (b / n) ** 2
        w_hh = th.sp.factor(th.sp.simplify(p2 * n**2 / b**2))
        w_s = th.sp.factor(th.sp.simplify(n * (out["p1"] - p2) / b**2))
        return {**out, "p2": p2, "w_hh": w_hh, "w_s": w_s, "p": th.sp.factor(th.sp.simplify(1 - w_hh))}

    assert float(independent()["w_s"].subs({original()["n"]: 8, original()["B"]: 2})) == pytest.approx(3 / 8)
    assert _mutated_status(monkeypatch, "mulayoff2024.mixture_identity", "mixture_identity_sympy", independent) == "failed"


def test_doubled_frobenius_bound_fails_the_necessary_conditions_claim(monkeypatch):
    r"""Condition (16) with the Rayleigh quotient's denominator :math:`C = H\otimes I + I\otimes H` (the factor 1/2
    dropped): the bound doubles and still holds, but at :math:`B = 1` on unit rank-one Hessians it is attained
    (:math:`\eta^*(1) = 2`, each step a reflection), which the located threshold shows."""
    original = th.necessary_conditions

    def doubled(hessians, batch_size, sampling="without"):
        out = original(hessians, batch_size, sampling)
        return {**out, "frobenius": 2 * out["frobenius"]}

    assert _mutated_status(monkeypatch, "mulayoff2024.necessary_conditions", "necessary_conditions", doubled) != "passed"


def test_log_norm_for_log_squared_norm_fails_the_naive_trap_claim(monkeypatch):
    r"""``lyapunov_paths`` returning :math:`\log\|\theta_T\|` where :math:`\log\|\theta_T\|^2` belongs: every group's naive
    rate leaves the interval between its paths' mean and largest :math:`2\gamma_p` (a log-mean-exp must lie there)."""
    ex.naive_trap(Budget("quick"))
    original = sim.lyapunov_paths

    def halved(*args, **kwargs):
        out = original(*args, **kwargs)
        return {**out, "log_sq_norm": out["log_sq_norm"] / 2}

    monkeypatch.setattr(sim, "lyapunov_paths", halved)
    wrong = ex.naive_trap.fn(Budget("quick"))
    assert _status_with_experiment(monkeypatch, "steplab.naive_monte_carlo_trap", "naive_trap", wrong) == "failed"


def test_burn_in_counted_in_the_exponent_fails_the_almost_sure_claim(monkeypatch):
    r"""``lyapunov_paths`` dividing :math:`\ell_T - \ell_b` by :math:`T` instead of :math:`T - b` (10 % low at
    :math:`b = T/10`): the crossings do not move (a positive factor keeps every sign), but the exponent at a quarter of
    the crossing misses the commuting closed form :math:`\max_k E\log|1 - \eta h_{\mathcal B k}|` by ~10 SE."""
    ex.as_thresholds(Budget("quick"))
    original = sim.lyapunov_paths

    def over_all_steps(*args, n_steps, burn=0, **kwargs):
        out = original(*args, n_steps=n_steps, burn=burn, **kwargs)
        return {**out, "gamma": out["gamma"] * (n_steps - burn) / n_steps}

    monkeypatch.setattr(sim, "lyapunov_paths", over_all_steps)
    wrong = ex.as_thresholds.fn(Budget("quick"))
    assert _status_with_experiment(monkeypatch, "steplab.almost_sure_threshold_is_larger", "as_thresholds", wrong) == "failed"


def test_delay_counted_twice_fails_the_delay_claim(monkeypatch):
    r"""The root modulus of :math:`z^{S+2} - z^{S+1} + a` (the delay counted one step too long) where
    :math:`z^{S+1} - z^S + a` belongs: the growth rates measured on both sides of each edge reject it."""
    original = th.delay_spectral_radius

    def one_more(a, delay):
        return original(a, int(delay) + 1)

    assert one_more(0.5, 0) == pytest.approx(np.sqrt(0.5))
    assert _mutated_status(monkeypatch, "levinmay1976.delay_threshold", "delay_spectral_radius", one_more) == "failed"


def test_l1_floor_without_the_weights_fails_the_sharpness_norm_claim(monkeypatch):
    r"""The l1 floor :math:`2\sum_k a_k|\beta_k|` read as :math:`2\sum_k|\beta_k|` (whitened features): the balanced minimum's
    autodiff trace, which attains the true floor, rejects it."""
    original = th.dln_sharpness_norm

    def unweighted_floor(u, v, X):
        out = original(u, v, X)
        return {**out, "l1_floor": 2.0 * float(np.sum(np.abs(np.asarray(u) * np.asarray(v))))}

    assert _mutated_status(monkeypatch, "wusu2023.sharpness_is_a_parameter_norm", "dln_sharpness_norm",
                           unweighted_floor) == "failed"


def test_mixture_weight_with_n_fails_the_covariance_claims(monkeypatch):
    """p = (n - B)/(Bn): the limit moves 14 % (B = 1) and more, eta*(B) moves with p, and so does the small-step law's
    10 % boundary (0.146 -> 0.133 of eta*(1) measured on the same scale): all three claims turn red."""
    original = th.batch_weight

    def with_n(n, batch_size, sampling="without"):
        if sampling == "with":
            return original(n, batch_size, sampling)
        return (n - batch_size) / (batch_size * n)

    assert _mutated_status(monkeypatch, "mulayoff2024.covariance_limit", "batch_weight", with_n) == "failed"
    for other in ("mulayoff2024.covariance_exists_below_threshold", "steplab.covariance_small_step_window"):
        assert get_claim(other).status(get_claim(other).run(Budget("quick"))) == "failed", other


def test_limit_without_the_multiplicative_term_fails_the_covariance_claim(monkeypatch):
    """(2C)^-1 in place of (2C - eta D)^+: the small-step solution of H S + S H = eta p Sigma_g (a pinned copy of the
    theory with eta D dropped from the solve)."""
    from tests.mutation import mutant_module

    copy = mutant_module(th, "sig = (step * p * np.linalg.solve(2 * c - step * dm", "2 * c - step * dm", "drop-term")

    def dropped(hessians, gradients, batch_size, eta, sampling="without", *, max_bytes=None):
        return copy.stationary_covariance(hessians, gradients, batch_size, eta, sampling, max_bytes=max_bytes)

    assert _mutated_status(monkeypatch, "mulayoff2024.covariance_limit", "stationary_covariance", dropped) == "failed"


# ------------------------------------------------------------------------------------------- issue 33 audit
# Claims of the issue-33 papers whose named mistake had no pinned test.

def test_trace_bound_without_its_factor_two_fails_the_trace_bound_claim(monkeypatch):
    r"""``wusu2023.trace_bound_at_batch_one`` with the trace bound read as :math:`\mathrm{tr}H \le 1/\eta` (the factor 2
    dropped, the rival the claim names): the thresholds located on the enumerated second moment reach
    :math:`\eta^*(1)\,\mathrm{tr}H \approx 2` where the per-sample gradients are alike, twice the mutated bound."""
    original = th.trace_bound

    def halved(hessians):
        out = original(hessians)
        return {**out, "eta_trace": out["eta_trace"] / 2}

    # by hand: two unit rank-one Hessians e1 e1^T, e2 e2^T: tr H = 1, so 2/tr H = 2 and the mutant gives 1
    hs = np.stack([np.diag([1.0, 0.0]), np.diag([0.0, 1.0])])
    assert original(hs)["eta_trace"] == pytest.approx(2.0, rel=1e-15)
    assert halved(hs)["eta_trace"] == pytest.approx(1.0, rel=1e-15)
    assert _mutated_status(monkeypatch, "wusu2023.trace_bound_at_batch_one", "trace_bound", halved) == "failed"


def test_nesterov_edge_taken_as_heavy_balls_fails_the_momentum_regions_claim(monkeypatch):
    r"""``polyak1964.momentum_stability_regions`` with Nesterov's edge given as heavy ball's :math:`2(1+\mu)` (the two
    methods' characteristic polynomials confused; the rival the claim names): Nesterov's edges located by bisection on
    the simulated growth reject it (the grid check writes its regions inline, so only the located edges see the
    theory function)."""
    original = th.momentum_threshold

    def as_heavy_ball(mu, method):
        return original(mu, "heavy_ball")

    # by hand at mu = 1/2: heavy ball 2(3/2) = 3, Nesterov 3/2
    assert original(0.5, "nesterov") == pytest.approx(1.5, rel=1e-15)
    assert as_heavy_ball(0.5, "nesterov") == pytest.approx(3.0, rel=1e-15)
    assert _mutated_status(monkeypatch, "polyak1964.momentum_stability_regions", "momentum_threshold",
                           as_heavy_ball) == "failed"


def test_variance_without_the_momentum_factor_fails_the_heavy_ball_variance_claim(monkeypatch):
    r"""``polyak1964.heavy_ball_stationary_variance`` without the factor :math:`(1+\mu)/(1-\mu)` (the rival the claim
    names: plain SGD's variance with heavy ball's edge): the time-averaged :math:`x^2` of the noisy paths rejects it
    at every :math:`\mu > 0` of the grid."""
    original = th.momentum_stationary_variance

    def without_factor(eta, lam, mu, sigma):
        return original(eta, lam, mu, sigma) * (1 - mu) / (1 + mu)

    # by hand: eta = lam = sigma = 1, mu = 1/2: 1 * 1.5 / (0.5 * (3 - 1)) = 1.5; without the factor 1/(3 - 1) = 0.5
    assert original(1.0, 1.0, 0.5, 1.0) == pytest.approx(1.5, rel=1e-14)
    assert without_factor(1.0, 1.0, 0.5, 1.0) == pytest.approx(0.5, rel=1e-14)
    assert _mutated_status(monkeypatch, "polyak1964.heavy_ball_stationary_variance", "momentum_stationary_variance",
                           without_factor) == "failed"
