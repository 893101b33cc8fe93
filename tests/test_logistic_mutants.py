"""Tests that pin behaviour of theory.logistic which the mutation runs (tests/mutation.py) found unpinned.

Each test compares two independently obtained numbers (a hand derivation, or a second solver of the
same equation); none pastes the code's own output back in.
"""
import numpy as np
import pytest

import theory.logistic as th
from paper_checks import Budget, get_claim
from paper_checks.logistic import experiments as E
from tests.mutation import mutant_module

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


# ------------------------------------------------------------------------------------------- claim power
# Issue 27: a plausible mistake in the theory a claim tests must turn the claim red. The experiment is read before
# the patch (so the patched function never reaches a cached result) and the claim runs uncached (``Claim.run``).

QUICK = Budget("quick")


def _failed_checks(claim_id: str) -> list[str]:
    """The quantities of the claim's checks whose prediction is rejected now (empty: the claim passes)."""
    result = get_claim(claim_id).run(QUICK)
    return [c.quantity for c in result.checks if not c.prediction().accepted]


def _cycle_dataset_aimed_with_sigma_squared(c, *, K=1e5, J=0.01):
    r""":func:`theory.logistic.cycle_dataset` with a sign slip in the bump's curvature while aiming :math:`w^\star`:
    :math:`\sigma(w)\sigma(w)` for :math:`\sigma(w)\sigma(-w)` (about 2 % off at :math:`c = 1.5`). The dataset
    is still a valid bump-plus-spike witness (its prediction uses the polished :math:`w^\star, \lambda`); only its
    minimizer misses half the existence bound."""
    lam = 0.25
    for _ in range(50):
        w_aim = -0.5 * J * (c - 1) / (lam * (2 - c))
        lam = (1 - J / K) * th._sigmoid(w_aim) ** 2
    p = (1 - J / K) * th._sigmoid(w_aim) - J * th._sigmoid(-K * w_aim)
    z, weights = np.array([1.0, -1.0, K]), np.array([p, 1 - p - J / K, J / K])
    w_num, lam_num = th.minimizer(z, weights)
    pl = th.piecewise_linear_cycle()
    subs = {th.sp.Symbol("w_star", real=True): w_num[0], th.sp.Symbol("J", real=True): J, th.lam: lam_num,
            th.sp.Symbol("c", real=True): c}
    return {"z": z, "weights": weights, "w_star": float(w_num[0]), "lam": lam_num, "eta": c / lam_num, "c": c,
            "u": float(pl["u"].subs(subs)), "v": float(pl["v"].subs(subs)),
            "multiplier": float(pl["multiplier"].subs(subs)), "K": K, "J": J}


def test_witness_aimed_off_half_the_existence_bound_fails_the_cycles_claim(monkeypatch):
    """The 1-D witnesses must sit where they are built to: w* at half the existence bound (rtol 1e-10). The
    mistaken aim moves w* by 1e-3 to 4e-2 relative (c = 1.05 to 1.8), which only the margin check can see: the
    cycle still exists and matches its own piecewise-linear formula. Control: the true construction passes."""
    E.cycles_1d(QUICK)
    assert _failed_checks("meng2024.cycles_between_1_and_2") == []
    monkeypatch.setattr(th, "cycle_dataset", _cycle_dataset_aimed_with_sigma_squared)
    failed = _failed_checks("meng2024.cycles_between_1_and_2")
    # the simulated cycles were measured on the true datasets, so the checks against them fail here too; under the
    # mutation tool (experiment recomputed on the mistaken datasets) the margin check is the only one that fails
    assert any(q.startswith("witness margin") for q in failed)


_TRUE_WITNESS_2D = th.construct_witness_2d


def _ping_pong_with_sign_slip(*args, **kwargs):
    r""":func:`theory.logistic.construct_witness_2d` with :math:`p_2 = ((1 + c)m_B + m_A)/(2 - c)` for
    :math:`((1 - c)m_B + m_A)/(2 - c)`. The virtual minimizers are recovered from the true pair:
    :math:`m_A + m_B = p_1 + p_2`, :math:`m_A - m_B = -(2 - c)(p_1 - p_2)/c`."""
    out = _TRUE_WITNESS_2D(*args, **kwargs)
    c, (p1, p2) = out["c"], out["predicted_cycle"]
    total, diff = p1 + p2, -(2 - c) * (p1 - p2) / c
    mA, mB = (total + diff) / 2, (total - diff) / 2
    return {**out, "predicted_cycle": np.stack([p1, ((1 + c) * mB + mA) / (2 - c)])}


def test_ping_pong_prediction_with_a_sign_slip_fails_the_2d_claim(monkeypatch):
    """The 2-D witness's simulated cycle is within a first-order bound (2.8e-4) of the piecewise-linear ping-pong;
    a sign slip in the second point moves it by about 0.1. Control: the true prediction passes."""
    E.witness_2d(QUICK)
    assert _failed_checks("meng2024.cycle_below_1_over_lambda_2d") == []
    monkeypatch.setattr(th, "construct_witness_2d", _ping_pong_with_sign_slip)
    assert _failed_checks("meng2024.cycle_below_1_over_lambda_2d") == [
        "simulated 2-cycle points vs the piecewise-linear ping-pong p₁,₂ = ((1 − c)m_{A,B} + m_{B,A})/(2 − c)"]


def test_normal_form_expanded_without_its_minus_x_fails_the_amplitude_claim(monkeypatch):
    """Survivor (claims-only, seed 0, n 16 at 36aefb5): the sympy derivation expanded T(T(x)) instead of
    T(T(x)) - x. The claim now predicts from that derivation (and checks the numeric coefficients' closed form against
    it); the mistaken expansion has no positive root X, so the derivation raises and the claim errs. Control: the
    true derivation passes."""
    E.normal_form(QUICK)
    assert _failed_checks("meng2024.normal_form_amplitude") == []
    mutant = mutant_module(th, "residual = sp.expand(T(T(x)) - x)", "T(T(x)) - x", "drop-term")
    monkeypatch.setattr(th, "normal_form_amplitude", mutant.normal_form_amplitude)
    with pytest.raises(IndexError):
        get_claim("meng2024.normal_form_amplitude").run(QUICK)
