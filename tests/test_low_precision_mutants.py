r"""Claim mutants of the low_precision topic (``python -m tests.mutation``; issue 27, "power you can measure").

Each test applies a plausible mistake to the theory function a claim calls (``monkeypatch`` on
:mod:`theory.low_precision`, which the claim modules read as ``th``), reruns the claim at the quick budget on the
same cached experiment, and asserts it turns ``failed``: the bf16 runs, obtained without that function, reject the
mutated prediction (the unmutated claims passing is ``tests/test_power.py``'s job):

* ``shang2026.half_ulp_freeze`` -- the freeze read as an update below a full ulp (the band doubled); the ulp of a
  :math:`p - 1`-bit grid (the implicit bit forgotten);
* ``zamirai2020.nearest_rounding_cancels_small_updates`` -- the same implicit-bit slip at 24 bits;
* ``steplab.rn_floor_inverse_eta`` -- the floor's exponent doubled (:math:`U = \mathrm{ulp}/(2\eta^2a^2)`);
* ``shang2026.freeze_step_from_reference`` -- the reference freeze step without the factor 2 of the half ulp;
* ``shang2026.freeze_step_from_reference`` and ``steplab.freeze_step_window`` -- the lattice chain recording the
  step before its last move (freeze steps counted from 0);
* ``shang2026.sr_removes_freeze`` -- SR's stationary second moment taken as a uniform error (:math:`1/12`), and
  as :math:`f(1-f)/2`;
* ``shang2026.adamw_cosine_freeze_point`` -- the cosine freeze point of a full-ulp criterion (:math:`r \to 2r`), and
  the reference-path predictor comparing the update with a full ulp;
* ``steplab.frozen_iterates_ulp_binds`` -- the upper binade chosen when the band's top (not its bottom) clears the
  binade's edge;
* ``steplab.float32_cast_moves_the_freeze`` -- the float32-then-cast chain replaced by a single rounding;
* ``zamirai2020.kahan_summation_remedies_the_freeze`` -- the bias bound without the rounding of :math:`y`;
* ``steplab.band_holds_below_eta_a_one`` -- the band's domain widened to the stability edge :math:`\eta a < 2`;
* ``steplab.gradient_noise_dithers_the_freeze`` -- the update noise's variance used as its standard deviation.
"""
from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

import theory.low_precision as th
from paper_checks import Budget, get_claim

pytestmark = pytest.mark.xdist_group("low_precision")


def _mutated_status(monkeypatch, claim_id: str, name: str, mutant) -> str:
    claim = get_claim(claim_id)
    assert claim.status(claim.run(Budget("quick"))) == "passed"
    monkeypatch.setattr(th, name, mutant)
    return claim.status(claim.run(Budget("quick")))


def test_full_ulp_freeze_fails_the_band_claim(monkeypatch):
    original = th.rn_frozen_error
    assert _mutated_status(monkeypatch, "shang2026.half_ulp_freeze", "rn_frozen_error",
                           lambda w_star, eta_a, mantissa_bits=8: original(w_star, np.asarray(eta_a) / 2,
                                                                           mantissa_bits)) == "failed"


@pytest.mark.parametrize("claim_id", ["shang2026.half_ulp_freeze",
                                      "zamirai2020.nearest_rounding_cancels_small_updates"])
def test_ulp_without_the_implicit_bit_fails(monkeypatch, claim_id):
    original = th.rn_frozen_error
    assert _mutated_status(monkeypatch, claim_id, "rn_frozen_error",
                           lambda w_star, eta_a, mantissa_bits=8: original(w_star, eta_a, mantissa_bits - 1)) == "failed"


def test_floor_exponent_doubled_fails_the_rate_claim(monkeypatch):
    assert _mutated_status(monkeypatch, "steplab.rn_floor_inverse_eta", "freeze_error_sym",
                           lambda: th.ULP / (2 * th.ETA_A**2)) == "failed"


def test_reference_step_without_the_half_fails(monkeypatch):
    original = th.reference_freeze_step
    assert _mutated_status(monkeypatch, "shang2026.freeze_step_from_reference", "reference_freeze_step",
                           lambda e0, eta_a, ulp_value: original(e0, eta_a, 2 * ulp_value)) == "failed"


@pytest.mark.parametrize("claim_id", ["shang2026.freeze_step_from_reference", "steplab.freeze_step_window"])
def test_lattice_chain_one_step_early_fails(monkeypatch, claim_id):
    original = th.rn_lattice_run

    def early(*args, **kwargs):
        out = original(*args, **kwargs)
        return {"error": out["error"], "freeze_step": np.maximum(out["freeze_step"] - 1, 0)}

    assert _mutated_status(monkeypatch, claim_id, "rn_lattice_run", early) == "failed"


@pytest.mark.parametrize("scale", ["uniform", "half"])
def test_sr_second_moment_mutants_fail(monkeypatch, scale):
    original = th.sr_second_moment

    def mutant(w_star, mantissa_bits=8):
        law = original(w_star, mantissa_bits)
        return np.full_like(law, 1 / 12) if scale == "uniform" else law / 2

    assert _mutated_status(monkeypatch, "shang2026.sr_removes_freeze", "sr_second_moment", mutant) == "failed"


def test_sympy_exponent_reads_one():
    """The rate claim reads the floor's exponent off the sympy form: it must be 1 in eta a."""
    assert sp.degree(sp.denom(th.freeze_error_sym()), th.ETA_A) == 1


def test_cosine_freeze_at_a_full_ulp_fails_the_adamw_claim(monkeypatch):
    original = th.cosine_freeze_fraction
    assert _mutated_status(monkeypatch, "shang2026.adamw_cosine_freeze_point", "cosine_freeze_fraction",
                           lambda ratio: original(np.minimum(2 * np.asarray(ratio), 1.999))) == "failed"


def test_half_ulp_predictor_at_a_full_ulp_fails_the_adamw_claim(monkeypatch):
    original = th.half_ulp_last_move
    assert _mutated_status(monkeypatch, "shang2026.adamw_cosine_freeze_point", "half_ulp_last_move",
                           lambda w_path, updates, mantissa_bits=8: original(w_path, np.asarray(updates) / 2,
                                                                             mantissa_bits)) == "failed"


def test_binade_rule_on_the_band_top_fails_the_window_claim(monkeypatch):
    """The upper binade chosen when the band's top, not its bottom, clears the binade's edge."""
    def mutant(w_star, w0, eta_a, mantissa_bits=8):
        ws = np.asarray(w_star, float)
        q2, u2 = 2.0**-6, 2.0**-6 / (2 * eta_a)
        upper = ws + u2 >= 2.0
        return np.where(upper, (np.ceil((ws + u2) / q2) - 1.0) * q2 - ws, th.rn_frozen_error(ws, eta_a))

    assert _mutated_status(monkeypatch, "steplab.frozen_iterates_ulp_binds", "rn_frozen_error_across_binades",
                           mutant) == "failed"


def test_cast_chain_rounding_once_fails_the_cast_claim(monkeypatch):
    """The float32-then-cast chain replaced by single rounding (the exact difference rounded once)."""
    def once(w_star, w0, eta_a, n_steps):
        ws = np.asarray(w_star, np.float32).astype(float)
        return {"w": np.stack([th.rn_frozen_error(ws, float(k)) + ws
                               for k in np.atleast_1d(np.asarray(eta_a, np.float32)).astype(float)])}

    assert _mutated_status(monkeypatch, "steplab.float32_cast_moves_the_freeze", "cast_chain", once) == "failed"


def test_kahan_bias_without_the_rounding_of_y_fails(monkeypatch):
    """The bias bound with only the compensation's own rounding (2^-(p+2)): y's rounding forgotten."""
    assert _mutated_status(monkeypatch, "zamirai2020.kahan_summation_remedies_the_freeze", "kahan_bias_bound",
                           lambda mantissa_bits=8: 2.0 ** (-mantissa_bits - 2)) == "failed"


def test_band_domain_up_to_two_fails_the_edge_claim(monkeypatch):
    """The band's closed form accepted up to the stability edge eta a < 2 (the overshoot past the cell ignored)."""
    def wide(eta_a, ulp_value):
        k = np.asarray(eta_a, float)
        if np.any(k <= 0) or np.any(k >= 2):
            raise ValueError("eta_a: expected values in (0, 2)")
        upper = ulp_value / (2 * k)
        return upper - ulp_value, upper

    assert _mutated_status(monkeypatch, "steplab.band_holds_below_eta_a_one", "rn_band", wide) == "failed"


def test_lattice_noise_variance_as_its_deviation_fails_the_noise_claim(monkeypatch):
    """The update noise's variance (eta a sigma)^2 used as its standard deviation in the lattice law."""
    original = th.rn_sgd_window_mean_sq
    assert _mutated_status(monkeypatch, "steplab.gradient_noise_dithers_the_freeze", "rn_sgd_window_mean_sq",
                           lambda eta_a, sigma_ulps, frac, k0, n_steps, window:
                           original(eta_a, eta_a * sigma_ulps**2, frac, k0, n_steps, window)) == "failed"
