r"""Tests written against mutants of the noisy-quadratic sources (``python -m tests.mutation``).

Each test compares the code with a number obtained another way (a hand computation, a degenerate run
whose trajectory is known step by step, a NumPy loop, optax), never with the code's own earlier output:

* :func:`sims.noisy_quadratic.abs_sgd`: the divergence step (steps count from 1; without noise and far
  from 0 the iterate moves by exactly one step size per update, so one huge step crosses the bound at a
  known update) and one schedule given as a vector (a noise-free hand value);
* :func:`sims.noisy_quadratic.logistic_sphere`: the recorded norm-identity defect equals the decay factor
  :math:`1 - (1-\eta\lambda)^2` (before, only a weight-decay claim read this output);
* :func:`theory.noisy_quadratic.schedule`'s WSD ramp and :func:`theory.noisy_quadratic.schedule_from_log` at
  hand-computed values (the log fit tolerates a one-entry shift of the schedule; a direct check does not),
  and the fit's relative residual is scale free (a log of 10 L).

(The shared substrate's tests that came out of the same run -- window averages against a NumPy loop, Lion's
default :math:`\beta_2` -- live in ``tests/test_nqm.py``.) Small shapes throughout: the whole file runs in a few seconds, most of it compilation.

The claim mutants below (issue 27, "power you can measure") apply a plausible mistake to the theory function a claim
calls (``monkeypatch`` on the module the claim reads it from), rerun the claim at the quick budget on the same
cached experiment, and assert it turns ``failed``: the measurement, obtained without that function, rejects the
mutated prediction (the unmutated claims passing is ``tests/test_power.py``'s job):

* ``kosson2023.equilibrium_angle_and_norm`` -- the sign update's angle off by :math:`\sqrt2` either way (once hidden
  by an allowance taken at the norm's scale);
* ``morales2024.ema_bias_rate`` -- :math:`\max(1-\alpha, 1-\eta\lambda)` without the modulus (an oscillating iterate
  read as a fast-decaying one), and the EMA's own factor :math:`1-\alpha` alone;
* ``chen2023.box_radius`` and ``chen2023.box_minimizer`` -- :func:`theory.noisy_quadratic.lion_box_radius` halved (no
  Lion claim called it before);
* ``kosson2023.no_decay_angular_update`` -- the momentum factor of the norm's growth dropped (heavy ball growing the
  norm like plain SGD);
* ``tian2025.merged_loss_vs_decay`` -- the merged model's second moment taken to be that of its effective schedule's
  run (the fixed-gradient identity carried over to a problem whose gradients depend on the iterate);
* ``bergsma2025.d2z_beats_cosine`` -- the baseline read as cosine decay to zero instead of to 10 % (the prediction's
  schedule, not the runs'): the measured ratios reject it;
* ``defazio2023.last_iterate_bound`` -- the last-iterate sum at half its weight (a constant of the bound): a
  constructed worst case exceeds it (the SGD-on-|x| runs, 8-500x below the bound, never could);
* ``kidambi2018.heavy_ball_no_faster_than_sgd`` -- the sampled gradient's noise dropped from the mean-square operator
  (:math:`E h^2 = (E h)^2` in :func:`theory.noisy_quadratic_sampled.kidambi_modes`: heavy ball with exact gradients,
  which accelerates): the measured best rates of heavy ball reject the mutated optimum;
* ``steplab.nesterov_accelerates_with_sampled_rows`` -- Nesterov's state update built as heavy ball's (the gradient
  taken at :math:`w` and applied once, not at the look-ahead of Algorithm 2): the measured best rates, 5-44x heavy
  ball's, reject it;
* ``tian2025.merge_weights_emulate_decays`` -- the inverse map's coefficients taken proportional to the decay itself
  (WSM's decay weights :math:`w_i` read as its merge coefficients :math:`c_j`): the merged models' measured losses
  reject the mutated exact losses;
* ``wang2024.timescale_fraction_fixes_the_memory`` -- the EMA timescale read as :math:`1/\lambda` (the decoupled decay
  not multiplied by the step): the measured memory of the start rejects a share :math:`(1-\lambda)^T`;
* ``morales2024.ema_of_constant_step_beats_decay`` -- the EMA's variance taken as an average of independent iterates
  (:math:`\alpha/(2-\alpha)` of the iterate's, the correlation of consecutive iterates ignored): the measured EMA losses
  reject it.
* ``wen2024.river_progress_is_lr_area`` -- the river's mean contracted by :math:`(1-\eta\lambda_r)^2` per step (the
  second moment's factor), twice the area: the measured progress rejects it;
* ``wen2024.stable_then_decay_beats_early_decay`` and ``wen2024.wsd_s_reuses_the_decay`` -- the second moment's
  contraction taken as :math:`1-\eta\lambda` instead of its square (in :func:`theory.nqm.moment_recursion`, which
  their exact losses read): the river loss then falls at half the rate, and the measured losses reject it.
* ``chen2023.kkt_points_nonconvex`` -- the box ignored and the unconstrained local minimizer clipped to it (decay read
  as a projection of the unconstrained limit): the final iterates reject it.
* ``steplab.merging_error_grows_with_curvature_window`` -- the decayed run's noise coefficient contracted from its own
  step (an off-by-one in :func:`theory.noisy_quadratic.merge_error_variance`): the measured mean-square gaps reject it;
* ``kidambi2018.heavy_ball_no_faster_than_sgd`` -- the simulator's per-mode radii reported as the top one for every mode:
  the theory's per-mode operators at half the tuned step reject it;
* ``chen2023.kkt_points_nonconvex`` -- the KKT residual with the wells' gradient read as :math:`x^3`: SciPy's KKT points
  are then not stationary.

Claims-only mutation score (``python -m tests.mutation --topic noisy_quadratic --claims-only --n 16 --seed 0``): 10/16
before the last three, 13/16 after; the three left are equivalent for the claims (``reshape(-1)`` -> ``reshape(-2)``,
the padded chunk size of ``sampled_moment_map``, and the fallback branch of ``subgradient_max_affine`` that the
constructed worst case never reaches -- a unit test in ``tests/test_noisy_quadratic.py`` kills that one).
"""
from __future__ import annotations

import jax
import numpy as np
import pytest

import sims.noisy_quadratic as sq
import theory.noisy_quadratic as th
import theory.noisy_quadratic_sampled as ts
import theory.nqm as tn
from paper_checks import Budget, get_claim
from sims.nqm import BOUND

pytestmark = pytest.mark.xdist_group("noisy_quadratic")


def test_abs_sgd_divergence_step_is_the_update_that_crosses_the_bound():
    r"""Update :math:`t` (counted from 1) uses :math:`\eta_t`; a step of :math:`10\,B` at the third update flags step 3.

    :math:`x_0 = 1`, :math:`\sigma = 0`, :math:`\eta = 0.1`: :math:`x_1 = 0.9`, :math:`x_2 = 0.8`, then
    :math:`x_3 = 0.8 - 10B` with :math:`|x_3| > B`. The companion schedule never leaves :math:`[-0.1, 1]`.
    """
    eta = np.full((2, 20), 0.1)
    eta[0, 2] = 10 * BOUND
    out = sq.abs_sgd(jax.random.key(3), eta, x0=1.0, sigma=0.0, n_chains=2)
    np.testing.assert_array_equal(out["diverged"], [[True, True], [False, False]])
    np.testing.assert_array_equal(out["diverged_step"], [[3, 3], [-1, -1]])


def test_wsd_schedule_hand_values():
    r""":math:`\eta_t = \eta\min\{1, (T-t)/(\phi T)\}`: with :math:`T = 10`, :math:`\phi = 0.2` only the last step is cut (to half).

    With :math:`T = 8`, :math:`\phi = 0.5` the ramp covers the last four steps: :math:`1, 3/4, 1/2, 1/4`.
    """
    np.testing.assert_allclose(th.schedule("wsd", 10, 2.0, cooldown=0.2), [2.0] * 9 + [1.0], rtol=1e-15)
    np.testing.assert_allclose(th.schedule("wsd", 8, 1.0, cooldown=0.5),
                               [1.0] * 5 + [0.75, 0.5, 0.25], rtol=1e-15)


def test_abs_sgd_accepts_one_schedule_as_a_vector():
    r"""A 1-D ``eta`` is one schedule: far from 0 without noise, :math:`x_T = x_0 - \sum_{t<T}\eta_t` exactly.

    :math:`x_0 = 5`, 19 updates of 0.1: :math:`|x_T| = 3.1`, returned with shape ``(1, n_chains)``.
    """
    out = sq.abs_sgd(jax.random.key(4), np.full(20, 0.1), x0=5.0, sigma=0.0, n_chains=2)
    assert out["final"].shape == (1, 2)
    np.testing.assert_allclose(out["final"], [[3.1, 3.1]], rtol=1e-13)
    np.testing.assert_array_equal(out["diverged_step"], [[-1, -1]])


def test_logistic_sphere_identity_defect_is_the_decay_factor():
    r"""Without momentum, :math:`w^+ = (1-\eta\lambda)w - \eta g` with :math:`g \perp w` (scale invariance), so

    :math:`\|w^+\|^2 - \|w\|^2 - \eta^2\|g\|^2 = ((1-\eta\lambda)^2 - 1)\|w\|^2`: the recorded relative defect is
    :math:`1 - (1-\eta\lambda)^2` at every step, whatever :math:`\|w\|` (here :math:`\|w_0\| \ne 1`), and 0 without decay.
    """
    rng = np.random.default_rng(3)
    X, y, w0 = rng.normal(size=(20, 3)), np.sign(rng.normal(size=20)), rng.normal(size=3)
    eta, wd = 0.3, 0.01
    out = sq.logistic_sphere(X, y, 2.0 * w0, eta=eta, wd=wd, T=50, n_rec=5)
    # the defect is a difference of O(|w|^2) terms over |w|^2: round-off ~1e-15 against 6e-3
    np.testing.assert_allclose(out["identity_defect"], [1 - (1 - eta * wd) ** 2], rtol=1e-9)
    free = sq.logistic_sphere(X, y, 2.0 * w0, eta=eta, wd=0.0, T=50, n_rec=5)
    assert free["identity_defect"][0] < 1e-12


def test_schedule_from_log_holds_each_logged_rate_until_the_next_entry():
    r"""A rate logged at step :math:`s_j` holds for :math:`s_j \le t < s_{j+1}`; before the first entry the first rate holds.

    Hand cases: log (0, 0.3), (2, 0.2), (5, 0.1) gives :math:`\eta_0..\eta_4 = 0.3, 0.3, 0.2, 0.2, 0.2` (the last entry
    only ends the run); log (2, 0.5), (4, 0.1) gives 0.5 for all four steps.
    """
    np.testing.assert_array_equal(th.schedule_from_log([0, 2, 5], [0.3, 0.2, 0.1]), [0.3, 0.3, 0.2, 0.2, 0.2])
    np.testing.assert_array_equal(th.schedule_from_log([2, 4], [0.5, 0.1]), [0.5] * 4)


def test_fit_relative_residual_is_scale_free():
    r"""The fit is linear in the loss (non-negative least squares): a log of :math:`10\,L` gives 10 times the
    coefficients and the residual, so the residual over the loss's range is unchanged."""
    step = np.arange(0, 201, 10)
    loss = 1.0 + np.exp(-step / 50) + 0.01 * np.sin(step)   # not exactly an NQM curve: the residual is not 0
    lr = np.full(step.size, 0.1)
    one, ten = th.fit_nqm_to_log(step, lr, loss, n_modes=4), th.fit_nqm_to_log(step, lr, 10 * loss, n_modes=4)
    assert one["relative_residual"] > 1e-4
    np.testing.assert_allclose(ten["residual_rms"], 10 * one["residual_rms"], rtol=1e-9)
    np.testing.assert_allclose(ten["relative_residual"], one["relative_residual"], rtol=1e-9)


# ----------------------------------------------------------------------------- claims against mutated theory
def _mutated_status(monkeypatch, claim_id: str, name: str, mutant) -> str:
    """The claim's status with ``theory.noisy_quadratic.<name>`` replaced by ``mutant``.

    The claim runs once unmutated first: it must pass (the power test's verdict), and its experiments are then cached
    with the true theory, so the mutant changes the prediction only, never the measurement (an experiment that calls
    the same function, e.g. ``schedule``, would otherwise simulate the mutant too).
    """
    claim = get_claim(claim_id)
    assert claim.status(claim.run(Budget("quick"))) == "passed"
    monkeypatch.setattr(th, name, mutant)
    return claim.status(claim.run(Budget("quick")))


@pytest.mark.parametrize("factor", [2**0.5, 2**-0.5])
def test_sign_angle_off_by_sqrt2_fails_the_equilibrium_claim(monkeypatch, factor):
    original = th.sign_wd_angular_update
    assert _mutated_status(monkeypatch, "kosson2023.equilibrium_angle_and_norm", "sign_wd_angular_update",
                           lambda eta, wd: factor * original(eta, wd)) == "failed"


@pytest.mark.parametrize("mutant", [lambda a, e, lam: max(1 - a, 1 - e * lam), lambda a, e, lam: 1 - a],
                         ids=["modulus_dropped", "ema_factor_only"])
def test_ema_bias_rate_without_the_iterate_branch_fails(monkeypatch, mutant):
    assert _mutated_status(monkeypatch, "morales2024.ema_bias_rate", "ema_bias_rate", mutant) == "failed"


@pytest.mark.parametrize("claim_id", ["chen2023.box_radius", "chen2023.box_minimizer"])
def test_lion_box_radius_halved_fails_the_box_claims(monkeypatch, claim_id):
    original = th.lion_box_radius
    assert _mutated_status(monkeypatch, claim_id, "lion_box_radius", lambda eta, wd: 0.5 * original(eta, wd)) == "failed"


def test_no_decay_norm_growth_without_its_momentum_factor_fails(monkeypatch):
    original = th.no_decay_norm
    assert _mutated_status(monkeypatch, "kosson2023.no_decay_angular_update", "no_decay_norm",
                           lambda eta, t, momentum=0.0, grad_scale=1.0, w0_norm=1.0:
                           original(eta * (1 - momentum), t, momentum, grad_scale, w0_norm)) == "failed"


def test_merged_moment_as_its_decay_fails_the_merging_claim(monkeypatch):
    def as_decay(lam, eta, checkpoints, weights, T, sigma_a=1.0, x0=1.0):
        eff = th.merge_effective_schedule(eta, checkpoints, weights, T)
        return tn.final_second_moment(np.atleast_1d(lam), eff, np.asarray(x0, float) ** 2, sigma_a)

    assert _mutated_status(monkeypatch, "tian2025.merged_loss_vs_decay", "merged_second_moment", as_decay) == "failed"


def test_cosine_to_zero_in_the_prediction_fails_the_d2z_claim(monkeypatch):
    original = th.schedule
    assert _mutated_status(monkeypatch, "bergsma2025.d2z_beats_cosine", "schedule",
                           lambda kind, T, peak, *, cooldown=0.2, floor=0.1:
                           original(kind, T, peak, cooldown=cooldown, floor=0.0 if kind == "cosine" else floor)
                           ) == "failed"


def test_last_iterate_sum_at_half_weight_fails_the_bound_claim(monkeypatch):
    def halved(eta, D, G):
        e = np.asarray(eta, float)
        q = e**2 * np.broadcast_to(np.asarray(G, float), e.shape) ** 2
        tail_eta, tail_q = np.cumsum(e[::-1])[::-1], np.cumsum(q[::-1])[::-1]
        k = np.arange(e.size - 1)
        extra = 0.5 * np.sum(e[k] / tail_eta[k + 1] * tail_q[k] / tail_eta[k])
        return float((D**2 + q.sum()) / (2 * e.sum()) + 0.5 * extra)

    # the mutant is the bound with its last sum halved: equal to the bound where that sum is 0
    assert halved([1.0, 1.0], 1.0, 1.0) == pytest.approx(th.last_iterate_bound([1.0, 1.0], 1.0, 1.0) - 0.25)
    assert _mutated_status(monkeypatch, "defazio2023.last_iterate_bound", "last_iterate_bound", halved) == "failed"


def test_sampled_noise_dropped_fails_the_heavy_ball_rate_claim(monkeypatch):
    original = ts.kidambi_modes

    def noiseless(kappa, c=2.0, sigma1=1.0):
        modes = original(kappa, c, sigma1)
        return np.stack([modes[:, 0], modes[:, 0] ** 2], axis=1)  # E h^2 = (E h)^2: the gradient treated as exact

    assert noiseless(100.0)[1, 1] == pytest.approx(0.04**2)
    claim = get_claim("kidambi2018.heavy_ball_no_faster_than_sgd")
    assert claim.status(claim.run(Budget("quick"))) == "passed"
    monkeypatch.setattr(ts, "kidambi_modes", noiseless)
    assert claim.status(claim.run(Budget("quick"))) == "failed"


def test_nesterov_built_as_heavy_ball_fails_the_nesterov_claim(monkeypatch):
    original = ts._batched_blocks

    def as_heavy_ball(method, p):
        return original("heavy_ball" if method == "nesterov" else method, p)

    claim = get_claim("steplab.nesterov_accelerates_with_sampled_rows")
    assert claim.status(claim.run(Budget("quick"))) == "passed"
    monkeypatch.setattr(ts, "_batched_blocks", as_heavy_ball)
    assert claim.status(claim.run(Budget("quick"))) == "failed"


def test_decay_values_as_merge_coefficients_fail_the_wsm_claim(monkeypatch):
    original = th.merge_weights_for_schedule

    def as_coefficients(eta_eff, eta):
        w, e = original(eta_eff, eta), np.asarray(eta_eff, float)
        first = int(np.flatnonzero(w > 0)[0])              # the window: from the first checkpoint the decay merges
        out = np.zeros_like(e)
        out[first:] = e[first:] / e[first:].sum()
        return out

    # the mutant is a merge (non-negative, summing to 1) of the same window, weighted like the decay, not like its drops
    w = as_coefficients(th.schedule("wsd", 10, 1.0, cooldown=0.5), 1.0)
    assert w.sum() == pytest.approx(1.0) and np.all(w[5:] > 0) and np.all(w[:5] == 0) and w[5] > w[-1]
    assert _mutated_status(monkeypatch, "tian2025.merge_weights_emulate_decays", "merge_weights_for_schedule",
                           as_coefficients) == "failed"


def test_timescale_as_one_over_lambda_fails_the_wang_claim(monkeypatch):
    original = th.sign_wd_start_cosine
    assert _mutated_status(monkeypatch, "wang2024.timescale_fraction_fixes_the_memory", "sign_wd_start_cosine",
                           lambda eta, wd, T, d, w0_norm: original(1.0, wd, T, d, w0_norm)) == "failed"


def test_ema_of_independent_iterates_fails_the_ema_claim(monkeypatch):
    def independent(lam, eta, alpha, T, sigma_a=1.0, x0=1.0):
        lam = np.atleast_1d(np.asarray(lam, float))
        m = tn.final_second_moment(lam, np.full(T, eta), np.asarray(x0, float) ** 2, sigma_a)
        mean2 = (np.asarray(x0, float) * (1 - eta * lam) ** T) ** 2
        return mean2 + alpha / (2 - alpha) * (m - mean2)

    assert _mutated_status(monkeypatch, "morales2024.ema_of_constant_step_beats_decay", "ema_final_second_moment",
                           independent) == "failed"


def test_second_moment_factor_in_the_area_law_fails_the_river_claim(monkeypatch):
    original = th.river_area_law

    def doubled(lam_river, eta):
        out = original(lam_river, eta)
        return {"law": 2 * out["law"], "next_order": 4 * out["next_order"]}

    assert doubled(1e-3, np.full(10, 1.0))["law"] == pytest.approx(0.02)
    assert _mutated_status(monkeypatch, "wen2024.river_progress_is_lr_area", "river_area_law", doubled) == "failed"


def _unsquared_recursion(lam, eta, m0, sigma_a=0.0, sigma_m=0.0, batch_size=1, *, max_bytes=None):
    """The moment recursion with the contraction 1 - eta lambda where (1 - eta lambda)^2 belongs."""
    lam, e = np.asarray(lam, float), np.asarray(eta, float)
    m = np.broadcast_to(np.asarray(m0, float), lam.shape).copy()
    sa = np.broadcast_to(np.asarray(sigma_a, float), lam.shape)
    out = [m.copy()]
    for t in range(e.shape[-1]):
        m = (1 - e[t] * lam) * m + e[t] ** 2 * sa**2
        out.append(m.copy())
    return np.array(out)


@pytest.mark.parametrize("claim_id", ["wen2024.stable_then_decay_beats_early_decay", "wen2024.wsd_s_reuses_the_decay"])
def test_unsquared_contraction_fails_the_river_loss_claims(monkeypatch, claim_id):
    claim = get_claim(claim_id)
    assert claim.status(claim.run(Budget("quick"))) == "passed"
    assert _unsquared_recursion(np.array([0.5]), np.array([1.0]), 1.0)[-1, 0] == pytest.approx(0.5)
    monkeypatch.setattr(tn, "moment_recursion", _unsquared_recursion)
    assert claim.status(claim.run(Budget("quick"))) == "failed"


def test_clipped_unconstrained_limit_fails_the_kkt_claim(monkeypatch):
    original = th.double_well_kkt_point

    def clipped(a, C, radius, start):
        return np.clip(original(a, C, 1e6, start), -radius, radius)

    assert _mutated_status(monkeypatch, "chen2023.kkt_points_nonconvex", "double_well_kkt_point", clipped) == "failed"


# ----------------------------------------------------------------------------- issue 27, second pass (claims-only, seed 0, n 16)
def test_decay_contraction_from_its_own_step_fails_the_merging_error_claim(monkeypatch):
    r""":func:`theory.noisy_quadratic.merge_error_variance` with the decayed run's noise coefficient contracted from step
    :math:`s` itself (:math:`\prod_{j\ge s}` where :math:`\prod_{j>s}` belongs, an off-by-one): the exact mean-square gap
    moves by 7-10 standard errors of the measured one on the five smaller modes."""
    def from_own_step(lam, eta, checkpoints, weights, T, sigma=1.0, *, max_bytes=None):
        lam_a = np.atleast_1d(np.asarray(lam, dtype=float))
        eff = th.merge_effective_schedule(eta, checkpoints, weights, T)
        tk, w = np.asarray(checkpoints, dtype=int), np.asarray(weights, dtype=float)
        out = []
        for lm in lam_a:
            merged = th._merged_noise_coefficients(1 - eta * lm, eta, tk, w, int(T))
            after = np.cumprod((1 - eff * lm)[::-1])[::-1]
            out.append(sigma**2 * np.sum((merged + eff * after) ** 2))
        return np.array(out)

    assert from_own_step([0.0], 1.0, [1, 2], [0.5, 0.5], 2) == pytest.approx(th.merge_error_variance([0.0], 1.0, [1, 2],
                                                                                                    [0.5, 0.5], 2))
    assert _mutated_status(monkeypatch, "steplab.merging_error_grows_with_curvature_window", "merge_error_variance",
                           from_own_step) == "failed"


def test_top_radius_for_every_mode_fails_the_kidambi_claim(monkeypatch):
    r"""The simulator's per-mode radii reported as the largest one for every mode (a max over the wrong axis): at half the
    theory's step the two modes contract at different speeds (0.93 and 0.993 for heavy ball at kappa = 1e3), which the
    theory's per-mode operators show. (One run: the unmutated claim passing is ``tests/test_power.py``'s job, and the
    claim's theory search costs ~10 s.)"""
    from paper_checks.noisy_quadratic import experiments as E
    claim = get_claim("kidambi2018.heavy_ball_no_faster_than_sgd")
    true = E.sampled_rates(Budget("quick"))
    wrong = {**true, **{k: np.repeat(true[k].max(axis=-1, keepdims=True), true[k].shape[-1], axis=-1)
                        for k in ("heavy_ball_mode_radius_half_step", "asgd_mode_radius_half_step")}}
    monkeypatch.setattr(E, "sampled_rates", lambda budget: wrong)
    assert claim.status(claim.run(Budget("quick"))) == "failed"


def test_residual_without_the_wells_fails_the_kkt_claim(monkeypatch):
    r""":func:`theory.noisy_quadratic.box_kkt_residual` with the wells' gradient :math:`x(x^2 - a)` read as :math:`x^3` (the
    wells' depths dropped): the interior coordinates of SciPy's KKT points (0.67 and 0) are no longer stationary."""
    def no_wells(a, C, radius, x):
        xx, cc = np.asarray(x, dtype=float), np.asarray(C, dtype=float)
        g = xx**3 + cc @ xx
        return float(np.max(np.abs(xx - np.clip(xx - g, -radius, radius))))

    assert no_wells([1.0], [[0.0]], 1.0, [0.5]) == pytest.approx(0.125)
    assert _mutated_status(monkeypatch, "chen2023.kkt_points_nonconvex", "box_kkt_residual", no_wells) == "failed"
