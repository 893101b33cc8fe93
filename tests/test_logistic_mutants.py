"""Tests that pin behaviour of theory.logistic which the mutation run (tests/mutation.py, seed 0) found unpinned.

Each test compares two independently obtained numbers (a hand derivation, or a second solver of the
same equation); none pastes the code's own output back in.
"""
import numpy as np
import pytest

import theory.logistic as th

BALANCED = ([1.0, -1.0], [0.5, 0.5])


def test_normal_form_of_balanced_data_is_supercritical_with_coefficient_sqrt6():
    r"""Balanced data :math:`z = \pm 1`, weights 1/2: the flip at :math:`c = 2` is supercritical.

    By hand: :math:`w^\star = 0`, :math:`\lambda = 1/4`, :math:`g_2 = 0` (odd moment), :math:`\ell''''(0) =
    -2(\tfrac14)^2 = -1/8` so :math:`g_3 = -1/8`, :math:`a = 0`, :math:`b = -\eta g_3/6 = 1/6` at
    :math:`\eta = 8`: :math:`a^2 + b = 1/6 > 0` and the coefficient is :math:`\sqrt 6`. Here
    :math:`b > a^2`, so a supercriticality test on :math:`a^2 - b` (a sign slip) would wrongly
    report NaN; the asymmetric data of the other test has :math:`a^2 > b` and cannot tell.
    Independent check: the exact balanced 2-cycle (Brent on :math:`a/\tanh(a/2) = c`) has
    half-width :math:`\approx \sqrt 6\,\sqrt{c - 2}`; at :math:`c - 2 = 10^{-8}` the relative
    correction is :math:`O(c - 2)`.
    """
    co = th.normal_form_coefficients(*BALANCED)
    assert co["w_star"] == pytest.approx(0.0, abs=1e-14)
    assert co["lam"] == pytest.approx(0.25, rel=1e-14)
    assert co["a"] == pytest.approx(0.0, abs=1e-14)
    assert co["b"] == pytest.approx(1 / 6, rel=1e-12)
    assert co["amplitude_coefficient"] == pytest.approx(np.sqrt(6.0), rel=1e-12)
    mu = 1e-8
    assert th.balanced_cycle_amplitude(2 + mu) / np.sqrt(mu) == pytest.approx(co["amplitude_coefficient"], rel=1e-6)


def test_chain_rule_applied_once_fails_the_certified_claim(monkeypatch):
    """``meng2024.global_convergence_1d_certified`` against the bound |h'| <= sup|T'| + 1 (the chain rule applied once):
    cells beside the unstable 2-cycle's lower point are declared empty, so fewer points are located than the sign
    scan of ``cycles_1d`` finds. The claim runs unmutated first (it must pass; its experiment is then cached)."""
    from paper_checks import Budget, get_claim
    claim = get_claim("meng2024.global_convergence_1d_certified")
    assert claim.status(claim.run(Budget("quick"))) == "passed"
    assert th._two_step_slope(np.array(3.0), np.array(5.0)) == pytest.approx(16.0)
    monkeypatch.setattr(th, "_two_step_slope", lambda s1, s2: s1 + 1)
    assert claim.status(claim.run(Budget("quick"))) == "failed"
