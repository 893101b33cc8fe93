r"""Claim mutants of the batch-size topic: a plausible mistake in the theory a claim calls (``monkeypatch`` on the
module the claim reads it from), the claim rerun at the quick budget on the same cached experiment, and the claim
must no longer pass -- the measurement, obtained without that function, rejects the mutated prediction:

* ``mccandlish2018.optimal_step_noise_scale`` -- the minibatch noise taken as :math:`\mathrm{tr}(H\Sigma)/(2B)` (a
  factor 2 in the noise scale), and the best step written as the noiseless :math:`\eta_{\max}` times
  :math:`B/(B + B_{\rm simple})`, and the expected one-step change with the noise not divided by :math:`B`;
* ``mccandlish2018.steps_examples_hyperbola`` -- the steps' hyperbola with exponent 0.8 on :math:`B_{\rm crit}/B`;
* ``malladi2022.linear_rule_sgd`` -- SGD's stationary excess without its :math:`2 - \eta\lambda` factor
  (:math:`\eta\sigma^2/(4B)`, the small-step limit);
* ``steplab.linear_rule_edge`` -- the floor's growth taken from the stiffest mode alone,
  :math:`2/(2 - \eta_1B\lambda_{\max})` (every mode read as the fastest);
* ``malladi2022.sqrt_rule_sign`` -- the batch left out of the sign floor's noise (:math:`\sigma` instead of
  :math:`\sigma/\sqrt B`);
* ``steplab.sqrt_rule_edge`` -- the floor's small-:math:`\kappa` constant taken as :math:`\sqrt{2\pi}/4` (the edge
  searched against twice the floor);
* ``marek2025.beta2_half_life_in_tokens`` -- the EMA's rise one step late (:math:`1 - \beta_2^{t+1}`: the first
  update counted as the start);
* ``steplab.beta2_linear_rule_window`` -- the first-order rule's edge computed against a reference batch of 2.
"""
from __future__ import annotations

import numpy as np

import theory.batch_size as th
from paper_checks import Budget, get_claim
from theory import nqm


def _mutated_status(monkeypatch, claim_id: str, target, name: str, mutant) -> str:
    """The claim's status with ``target.<name>`` replaced by ``mutant`` (after checking it passes unmutated)."""
    claim = get_claim(claim_id)
    assert claim.status(claim.run(Budget("quick"))) == "passed"
    monkeypatch.setattr(target, name, mutant)
    return claim.status(claim.run(Budget("quick")))


def test_noise_scale_off_by_two_fails_the_one_step_claim(monkeypatch):
    original = th.optimal_step
    assert _mutated_status(monkeypatch, "mccandlish2018.optimal_step_noise_scale", th, "optimal_step",
                           lambda G, H, S, b: original(G, H, S, 2 * np.asarray(b))) != "passed"


def test_b_simple_in_the_one_step_law_fails(monkeypatch):
    def with_b_simple(G, H, S, b):
        return th.max_step(G, H) / (1 + th.simple_noise_scale(G, S) / np.asarray(b, float))
    assert _mutated_status(monkeypatch, "mccandlish2018.optimal_step_noise_scale", th, "optimal_step",
                           with_b_simple) != "passed"


def test_hyperbola_exponent_fails_the_steps_claim(monkeypatch):
    assert _mutated_status(monkeypatch, "mccandlish2018.steps_examples_hyperbola", th, "hyperbola_steps",
                           lambda b, s_min, b_crit: s_min * (1 + (b_crit / np.asarray(b)) ** 0.8)) != "passed"


def test_stationary_excess_without_its_factor_fails_the_linear_rule(monkeypatch):
    def small_step(lam, eta, sigma_a=1.0, sigma_m=0.0, batch_size=1):
        lam = np.asarray(lam, float)
        return eta * np.broadcast_to(np.asarray(sigma_a, float), lam.shape) ** 2 / (4 * batch_size)
    assert _mutated_status(monkeypatch, "malladi2022.linear_rule_sgd", nqm, "stationary_excess",
                           small_step) != "passed"


def test_linear_ratio_of_the_stiffest_mode_fails_the_edge(monkeypatch):
    def stiffest(lam, sigma_a, eta1, batch_size):
        return 2 / (2 - eta1 * np.asarray(batch_size, float) * float(np.max(lam)))
    assert _mutated_status(monkeypatch, "steplab.linear_rule_edge", th, "linear_rule_ratio", stiffest) != "passed"


def test_sign_floor_without_the_batch_fails_the_sqrt_rule(monkeypatch):
    original = th.sign_rule_floor
    assert _mutated_status(monkeypatch, "malladi2022.sqrt_rule_sign", th, "sign_rule_floor",
                           lambda a, eta, sigma, b: original(a, eta, sigma, 1.0)) != "passed"


def test_sqrt_edge_against_twice_the_floor_fails(monkeypatch):
    original = th.sqrt_rule_edge
    # the constant sqrt(2 pi)/4: the searched ratio is half the true one, i.e. the true ratio at twice the level
    assert _mutated_status(monkeypatch, "steplab.sqrt_rule_edge", th, "sqrt_rule_edge",
                           lambda a, eta1, sigma, level, **kw: original(a, eta1, sigma, 2 * level, **kw)) != "passed"


def test_ema_rise_one_step_late_fails_the_half_life_claim(monkeypatch):
    """The rise counted from v_1 instead of v_0 (1 - beta2^(t+1)): one step of B examples too early, which the
    large-batch runs (half-lives of 1-3 steps) reject."""
    original = th.ema_rise
    assert _mutated_status(monkeypatch, "marek2025.beta2_half_life_in_tokens", th, "ema_rise",
                           lambda beta2, n: original(beta2, n + 1)[..., 1:]) != "passed"


def test_edge_with_the_reference_batch_doubled_fails_the_window(monkeypatch):
    """The first-order rule's edge computed against B0 = 2 (the sweep's first batch read as the reference): the edge
    doubles, which the located crossing (to about 20 % in B) rejects."""
    original = th.linear_beta2_edge
    assert _mutated_status(monkeypatch, "steplab.beta2_linear_rule_window", th, "linear_beta2_edge",
                           lambda beta2_ref, batch_ref, level: original(beta2_ref, 2 * batch_ref, level)) != "passed"


def test_one_step_change_without_the_batch_fails(monkeypatch):
    """The expected one-step change with the minibatch noise tr(H Sigma) not divided by B (one example's noise)."""
    original = th.expected_one_step_loss
    assert _mutated_status(monkeypatch, "mccandlish2018.optimal_step_noise_scale", th, "expected_one_step_loss",
                           lambda G, H, S, b, eta: original(G, H, S, 1.0, eta)) != "passed"
