r"""Claim mutants of the mup_transfer topic (``python -m tests.mutation``; "power you can measure").

Each test applies a plausible mistake to a theory function a claim calls (``monkeypatch`` on
:mod:`theory.mup_transfer`, which the claim modules read as ``th``), reruns the claim at the quick budget on the same
cached experiment, and asserts it no longer passes (the unmutated claims passing is ``tests/test_power.py``'s job):

* ``hayou2025.mup_optimum_converges_to_eta_inf`` -- the μP kernel factor with one hidden share lost (1 + 1/d), and
  with the hidden shares counted as 1 each instead of 1/d (3: the NTK count);
* ``hayou2025.sp_and_ntp_do_not_transfer`` -- SP's kernel factor growing like :math:`\sqrt n` instead of :math:`n`;
* ``steplab.kernel_regime_optimum_is_random`` -- the kernel optimum computed at :math:`f_0 = 0` (the initial
  output's randomness forgotten), and with :math:`\kappa^2` for :math:`\kappa`;
* ``steplab.mup_transfer_window`` -- :math:`\eta_\infty` with the input layer's share only (:math:`\kappa = 1`, 12.5 %
  off: no width is within 10 % of it).
"""
from __future__ import annotations

import pytest

import theory.mup_transfer as th
from paper_checks import Budget, get_claim

pytestmark = pytest.mark.xdist_group("mup_transfer")


def _mutated_status(monkeypatch, claim_id: str, name: str, mutant) -> str:
    claim = get_claim(claim_id)
    assert claim.status(claim.run(Budget("quick"))) == "passed"
    monkeypatch.setattr(th, name, mutant)
    return claim.status(claim.run(Budget("quick")))


@pytest.mark.parametrize("kappa", [lambda d: 1.0 + 1.0 / d, lambda d: 3.0], ids=["one_share_lost", "ntk_count"])
def test_wrong_mup_kernel_factor_fails_the_limit(monkeypatch, kappa):
    original = th.limit_kernel_factor
    mutant = lambda p, d: kappa(d) if p == "mup" else original(p, d)  # noqa: E731
    assert _mutated_status(monkeypatch, "hayou2025.mup_optimum_converges_to_eta_inf", "limit_kernel_factor",
                           mutant) == "failed"


def test_sp_factor_growing_like_sqrt_n_fails(monkeypatch):
    original = th.kernel_factor
    mutant = lambda p, n, d: 1.0 + 2.0 * n**0.5 / d if p == "sp" else original(p, n, d)  # noqa: E731
    assert _mutated_status(monkeypatch, "hayou2025.sp_and_ntp_do_not_transfer", "kernel_factor", mutant) == "failed"


@pytest.mark.parametrize("which", ["f0_forgotten", "kappa_squared"])
def test_wrong_kernel_optimum_fails_the_random_limit(monkeypatch, which):
    original = th.kernel_optimum

    def mutant(X, y, kappa, f0=None):
        if which == "f0_forgotten":
            base = original(X, y, kappa)
            return base if f0 is None or f0.ndim == 1 else base + 0.0 * f0[:, 0]
        return original(X, y, kappa**2, f0)

    assert _mutated_status(monkeypatch, "steplab.kernel_regime_optimum_is_random", "kernel_optimum",
                           mutant) == "failed"


def test_input_layer_only_limit_fails_the_window(monkeypatch):
    kernel = th.kernel_optimum
    assert _mutated_status(monkeypatch, "steplab.mup_transfer_window", "eta_infinity",
                           lambda X, y: kernel(X, y, 1.0)) == "failed"
