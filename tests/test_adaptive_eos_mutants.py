r"""Claim mutants of the adaptive-EoS topic: a plausible mistake in the theory function a claim calls (monkeypatched
on the module the claim reads it from), the claim rerun at the quick budget on the same cached experiment, and the
claim must no longer pass:

* ``cohen2022.frozen_preconditioner_threshold`` -- the threshold without the EMA's normalization,
  :math:`2(1+\beta_1)` (heavy ball's), and GD's at the effective step, :math:`2/(1-\beta_1)`;
* ``cohen2022.rmsprop_lattice_cycle`` -- the cycle's amplitude :math:`\eta` instead of :math:`\eta/2` (then no lattice
  cycle sits on the threshold and the claim cannot even name its prediction);
* ``cohen2022.adam_equilibrates_near_38_over_eta``, ``steplab.adam_equilibrium_below_threshold`` and
  ``cohen2022.adam_network_equilibrates_near_38_over_eta`` -- the threshold read as :math:`2/(1-\beta_1)`.
"""
from __future__ import annotations

import pytest

import theory.adaptive_eos as th
from paper_checks import Budget, get_claim

QUICK = Budget("quick")


def _mutated_status(monkeypatch, claim_id: str, name: str, mutant) -> str:
    """The claim's status with ``theory.adaptive_eos.<name>`` replaced by ``mutant``; the claim runs unmutated first
    (it must pass, and its experiments are then cached with the true theory: the experiments call the threshold to
    place their brackets and starts, so the mutant changes the prediction only, never the measurement)."""
    claim = get_claim(claim_id)
    assert claim.status(claim.run(QUICK)) == "passed"
    monkeypatch.setattr(th, name, mutant)
    try:
        return claim.status(claim.run(QUICK))
    except ValueError:  # the mutant leaves no on-threshold cycle to predict: the claim cannot be evaluated
        return "error"


@pytest.mark.parametrize("wrong", [lambda b: 2.0 * (1.0 + b), lambda b: 2.0 / (1.0 - b)],
                         ids=["heavy_ball_unnormalized", "gd_effective_step"])
def test_frozen_threshold_mutant_fails(monkeypatch, wrong):
    assert _mutated_status(monkeypatch, "cohen2022.frozen_preconditioner_threshold", "frozen_threshold", wrong) == "failed"


def test_rmsprop_amplitude_eta_fails(monkeypatch):
    assert _mutated_status(monkeypatch, "cohen2022.rmsprop_lattice_cycle", "rmsprop_cycle_amplitude",
                           lambda eta: float(eta)) in ("failed", "error")


@pytest.mark.parametrize("claim_id", ["cohen2022.adam_equilibrates_near_38_over_eta",
                                      "steplab.adam_equilibrium_below_threshold",
                                      "cohen2022.adam_network_equilibrates_near_38_over_eta"])
def test_equilibrium_threshold_mutant_fails(monkeypatch, claim_id):
    assert _mutated_status(monkeypatch, claim_id, "frozen_threshold", lambda b: 2.0 / (1.0 - b)) == "failed"
