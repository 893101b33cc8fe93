r"""Claim mutants of the muon topic: a plausible mistake in the theory function a claim calls (``monkeypatch`` on
:mod:`theory.muon`, which the claims read as ``th``), the claim rerun at the quick budget on its cached experiment,
and the status must no longer be ``passed`` (the unmutated claims passing is ``tests/test_power.py``'s job):

* ``chen2025.spectral_ball_radius`` -- :func:`theory.muon.aligned_norm` with the decay not multiplied by the step
  (:math:`(1 - (1-\lambda)^t)/\lambda`), and with the radius :math:`1/(2\lambda)`;
* ``steplab.muon_ns5_settles_outside_the_ball`` -- the modes' recursion with the exact polar factor in place of
  Newton--Schulz (``steps`` ignored: "NS5 is exact enough"), and with one Newton--Schulz step fewer;
* ``steplab.muon_ball_window`` -- the sup from 0 without the overshoot (:math:`1 - (1-\eta\lambda)^T` for every
  :math:`\eta\lambda`), and the excess factor signed (:math:`1 - \eta\lambda`);
* ``rhee2026.modes_at_one_rate_smallest_first`` -- the arrival law of a single matrix (:math:`t_i = \phi s_i/\eta`,
  slope 1) for the factorization;
* ``steplab.muon_single_matrix_arrivals`` -- the arrival rounded up from :math:`s_i/\eta` (no half step), an n vs
  n - 1 mistake of one step;
* ``rhee2026.stable_past_the_sharpness_threshold`` -- GD's threshold from the sharpness :math:`s_{\max}` (the factor
  2 of the balanced minimum's Hessian dropped): GD's measured divergence at twice the true threshold rejects it.

Every experiment is the quick one the power test computes (cached), so the file costs the claims' checks only.
"""
from __future__ import annotations

import numpy as np
import pytest

import theory.muon as th
from paper_checks import Budget, get_claim


def _mutated_status(monkeypatch, claim_id: str, name: str, mutant) -> str:
    """The claim's status at quick with ``theory.muon.<name>`` replaced by ``mutant`` (the original passes first)."""
    claim = get_claim(claim_id)
    assert claim.status(claim.run(Budget("quick"))) == "passed"
    monkeypatch.setattr(th, name, mutant)
    return claim.status(claim.run(Budget("quick")))


_ALIGNED = th.aligned_norm


@pytest.mark.parametrize("mutant", [
    lambda eta, lam, t: (1 - (1 - np.minimum(lam, 0.99)) ** t) / lam * np.ones_like(np.asarray(eta, float)),
    lambda eta, lam, t: 0.5 * _ALIGNED(eta, lam, t),
], ids=["decay_not_scaled_by_eta", "radius_halved"])
def test_ball_radius_mutants_fail(monkeypatch, mutant):
    assert _mutated_status(monkeypatch, "chen2025.spectral_ball_radius", "aligned_norm", mutant) == "failed"


_RECURSION = th.aligned_recursion


@pytest.mark.parametrize("mutant", [
    lambda s, eta, lam, *, momentum=0.0, steps=None, n_steps=1000: _RECURSION(s, eta, lam, momentum=momentum,
                                                                               steps=None, n_steps=n_steps),
    lambda s, eta, lam, *, momentum=0.0, steps=None, n_steps=1000: _RECURSION(s, eta, lam, momentum=momentum,
                                                                               steps=max(steps - 1, 0), n_steps=n_steps),
], ids=["exact_polar_for_ns", "one_ns_step_fewer"])
def test_ns_recursion_mutants_fail(monkeypatch, mutant):
    assert _mutated_status(monkeypatch, "steplab.muon_ns5_settles_outside_the_ball", "aligned_recursion",
                           mutant) == "failed"


def test_window_without_the_overshoot_fails(monkeypatch):
    def no_overshoot(eta, lam, n_steps):
        el = np.atleast_1d(np.asarray(eta, float)) * lam
        return 1.0 - np.abs(1.0 - el) ** n_steps
    assert _mutated_status(monkeypatch, "steplab.muon_ball_window", "sup_from_zero", no_overshoot) == "failed"


def test_window_with_a_signed_excess_factor_fails(monkeypatch):
    assert _mutated_status(monkeypatch, "steplab.muon_ball_window", "excess_factor",
                           lambda eta, lam: 1.0 - np.asarray(eta, float) * lam) == "failed"


def test_factorization_read_as_a_single_matrix_fails(monkeypatch):
    assert _mutated_status(monkeypatch, "rhee2026.modes_at_one_rate_smallest_first", "factorization_arrival",
                           lambda s, eta, frac=0.9: frac * np.asarray(s, float) / eta) != "passed"


def test_arrival_without_the_half_step_fails(monkeypatch):
    assert _mutated_status(monkeypatch, "steplab.muon_single_matrix_arrivals", "single_matrix_arrival",
                           lambda s, eta: np.ceil(np.asarray(s, float) / eta)) == "failed"


def test_threshold_without_the_balanced_factor_two_fails(monkeypatch):
    assert _mutated_status(monkeypatch, "rhee2026.stable_past_the_sharpness_threshold", "gd_threshold",
                           lambda s: 2.0 / float(np.max(s))) == "failed"
