r"""Claim mutants of the lr_horizon topic (issue 27's "power you can measure"): a plausible mistake in a theory
function a claim reads its prediction from, applied with ``monkeypatch`` on :mod:`theory.lr_horizon`; the claim is rerun
at the quick budget on the same cached measurements (exact argmins and Monte Carlo runs, obtained without the mutated
function) and must turn ``failed``:

* ``li2026.constant_step_exponent`` -- the horizon exponent read as :math:`-1/(s+1)` (the exponent of
  :math:`\tau = \eta N` taken for that of :math:`\eta`), and the first-order step with the :math:`2 - \eta\lambda`
  correction's sign flipped (the noise floor's factor :math:`1/(2-\eta\lambda)` expanded the wrong way);
* ``li2026.constant_step_law_window`` -- the bend horizon solved without the :math:`1/(s+1)` of the log-shift (the
  loss's relative correction taken for the step's);
* ``li2026.constant_step_law_cutoff`` -- the spectrum's end read as :math:`\lambda_d = d^{-\beta}` with the bias
  decaying as :math:`e^{-\tau\lambda}` (the iterate's rate, not the second moment's :math:`e^{-2\tau\lambda}`);
* ``li2026.exact_optimum_against_simulation`` -- the second moment's decay factor taken as the iterate's,
  :math:`(1-\eta\lambda)^N` for :math:`(1-\eta\lambda)^{2N}` (a mean's contraction read as a second moment's);
* ``li2026.wsd_in_the_hard_regime`` -- the regimes' boundary read as :math:`s < 1 + 1/\beta` (every shape hard);
* ``li2026.power_decay_peak_exponent`` -- the quoted exponent with :math:`s + 1` for :math:`s + 1/\beta` in its
  denominator.
"""
from __future__ import annotations

import numpy as np
import pytest

import theory.lr_horizon as th
from paper_checks import Budget, get_claim

pytestmark = pytest.mark.xdist_group("lr_horizon")


def _mutated_status(monkeypatch, claim_id: str, name: str, mutant) -> str:
    claim = get_claim(claim_id)
    assert claim.status(claim.run(Budget("quick"))) == "passed"
    monkeypatch.setattr(th, name, mutant)
    return claim.status(claim.run(Budget("quick")))


def test_tau_exponent_for_the_steps_fails_the_exponent_claim(monkeypatch):
    assert _mutated_status(monkeypatch, "li2026.constant_step_exponent", "constant_exponent",
                           lambda s: -1.0 / (s + 1.0)) == "failed"


def test_flipped_curvature_correction_fails_the_exponent_claim(monkeypatch):
    original = th.corrected_step

    def flipped(n_steps, beta, s, sigma2, d):
        eta0 = th.asymptotic_step(n_steps, beta, s, sigma2, d)
        _, _, _, kappa = th._constants(beta, s, d, sigma2)
        # the 2 kappa eta term enters with the opposite sign: exp(+2 kappa eta0/(s+1)) instead of exp(-...)
        return original(n_steps, beta, s, sigma2, d) * np.exp(4.0 * kappa * eta0 / (s + 1.0))

    assert _mutated_status(monkeypatch, "li2026.constant_step_exponent", "corrected_step", flipped) == "failed"


def test_bend_without_the_step_factor_fails_the_window_claim(monkeypatch):
    s = 0.5
    # 1 - gap' with log(1 - gap') = (s + 1) log(1 - gap): the shift of the loss taken for the shift of the step
    original = th.bend_horizon
    mutant = lambda gap, beta, s_, sigma2, d: original(1 - (1 - gap) ** (s + 1), beta, s_, sigma2, d)  # noqa: E731
    assert _mutated_status(monkeypatch, "li2026.constant_step_law_window", "bend_horizon", mutant) == "failed"


def test_iterate_rate_in_the_cutoff_law_fails_the_cutoff_claim(monkeypatch):
    from scipy import optimize, special

    def iterate_rate(n_steps, beta, s, sigma2, d):
        _, c, _, _ = th._constants(beta, s, d, sigma2)
        lam_d = float(d) ** -beta

        def best(n):
            f = lambda le: (np.exp(le) * n) ** -s * special.gamma(s) * special.gammaincc(s, np.exp(le) * n * lam_d) \
                / (2 * beta) + c * np.exp(le)  # noqa: E731
            return float(np.exp(optimize.minimize_scalar(f, bounds=(-40.0, 0.0), method="bounded").x))

        return np.array([best(float(n)) for n in np.atleast_1d(n_steps)]).reshape(np.shape(n_steps))

    assert _mutated_status(monkeypatch, "li2026.constant_step_law_cutoff", "cutoff_step", iterate_rate) == "failed"


def test_mean_contraction_for_the_second_moment_fails_the_simulation_claim(monkeypatch):
    def mean_factor(eta, n_steps, beta, s, sigma2, d):
        lam, w, load = th.spectrum(beta, s, d)
        e = np.atleast_1d(eta)[:, None]
        q = np.exp(1.0 * n_steps * np.log(np.abs(1 - e * lam)))
        return 0.5 * q @ load + 0.5 * sigma2 * np.sum(e * w * lam * (1 - q) / (2 - e * lam), axis=1)

    assert _mutated_status(monkeypatch, "li2026.exact_optimum_against_simulation", "constant_step_loss",
                           mean_factor) == "failed"


def test_wrong_denominator_fails_the_peak_claim(monkeypatch):
    assert _mutated_status(monkeypatch, "li2026.power_decay_peak_exponent", "peak_exponent",
                           lambda s, beta: (s - 1 + 1 / beta) / (s + 1)) == "failed"


def test_boundary_above_one_fails_the_hard_regime_claim(monkeypatch):
    assert _mutated_status(monkeypatch, "li2026.wsd_in_the_hard_regime", "hard_regime",
                           lambda s, beta: s < 1 + 1 / beta) == "failed"
