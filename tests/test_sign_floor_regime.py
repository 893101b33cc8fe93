"""Unit tests of theory/sign_floor_regime.py and sims/sign_floor_regime.py (the noise-regime diagnostic on digits and
the local form of the sign floor). Claims are in paper_checks/sign_floor/regime.py; the simulator contract rows in
tests/contract_sign_floor.py."""
from __future__ import annotations

import math

import jax
import numpy as np
import pytest
from scipy import linalg

from sims import sign_floor_regime as SR
from theory import sign_floor as SF
from theory import sign_floor_regime as TR


# ----------------------------------------------------------------------------- wells and the local form
@pytest.mark.parametrize("name", TR.WELLS)
def test_well_curvature_and_smoothness_match_finite_differences(name):
    x = np.linspace(-1.0, 1.0, 2001)
    h = 1e-4
    second = (TR.well(name, x + h) - 2 * TR.well(name, x) + TR.well(name, x - h)) / h**2
    assert TR.well(name, np.array([0.0]))[0] == 0.0
    assert np.all(TR.well(name, x[x != 0]) > 0)  # x* = 0 is the unique minimizer
    assert abs(second[1000] - TR.curvature(name)) < 1e-6
    assert abs(second.max() - TR.smoothness(name, 1.0)) < 1e-5


def test_well_logcosh_is_overflow_free():
    assert np.isfinite(TR.well("logcosh", np.array([1e4])))[0]
    assert TR.well("logcosh", np.array([1e4]))[0] == pytest.approx(2e8 - 3 * (1e4 - math.log(2)))


@pytest.mark.parametrize("name", TR.WELLS)
def test_local_floor_is_the_ladder_sum(name):
    """Against an independent sum over theory.sign_floor.ladder_pmf (two ladders, offset eta/2)."""
    eta, sigma = 0.3, 1.0
    p = SF.away_probability(sigma)
    n = np.arange(-200, 200)
    pi = SF.ladder_pmf(p, n)
    direct = float(np.sum(pi * TR.well(name, eta / 2 + n * eta)))
    assert TR.local_floor(name, eta, sigma) == pytest.approx(direct, rel=1e-12)


@pytest.mark.parametrize("name", TR.WELLS)
def test_local_floor_tends_to_the_local_form(name):
    """Relative correction O(eta^2): it shrinks by ~4 when eta halves."""
    d = [TR.local_floor(name, e, 1.0) / TR.local_form(name, e, 1.0) - 1 for e in (0.04, 0.02)]
    assert 0 < abs(d[1]) < 1e-3
    assert d[0] / d[1] == pytest.approx(4.0, rel=0.05)


def test_local_floor_edge_cases():
    assert TR.local_floor("quartic", 0.2, 0.0) == pytest.approx(float(TR.well("quartic", np.array([0.1]))[0]))
    assert TR.local_floor("exp", 2.0, 1.0) == math.inf  # r e^eta >= 1: the exp well's tail sum diverges
    assert TR.local_floor("quartic", 0.1, 1e300) == math.inf  # p = 1/2: no contraction
    assert TR.local_form("exp", 0.1, 1.0) == pytest.approx(SF.c_mid(1.0) * 2 * 0.01)


# ----------------------------------------------------------------------------- the diagnostic
def test_affine_fit_recovers_a_line_and_its_standard_errors():
    rng = np.random.default_rng(0)
    G = np.geomspace(1e-4, 1.0, 12)
    se = 0.01 + 0.02 * G
    fits = [TR.affine_variance_fit(G, 0.3 + 2.0 * G + se * rng.standard_normal(12), se) for _ in range(400)]
    s0 = np.array([f["sigma0_sq"] for f in fits])
    s1 = np.array([f["sigma1_sq"] for f in fits])
    assert abs(s0.mean() - 0.3) < 4 * s0.std() / 20 and abs(s1.mean() - 2.0) < 4 * s1.std() / 20
    # the reported SE is the spread of the estimates (chi2 < 1 is not used to shrink it: allow 20 %)
    assert np.mean([f["sigma0_sq_se"] for f in fits]) == pytest.approx(s0.std(), rel=0.2)
    exact = TR.affine_variance_fit(G, 0.3 + 2.0 * G, se)
    assert exact["sigma0_sq"] == pytest.approx(0.3) and exact["sigma1_sq"] == pytest.approx(2.0)


def test_noise_ratio_and_regime():
    assert TR.noise_ratio(1.0, 2.0, 0.25) == 2.0
    assert TR.noise_ratio(0.0, 2.0, 0.0) == 0.0 and TR.noise_ratio(1.0, 0.0, 1.0) == math.inf
    fit = {"sigma0_sq": 1.0, "sigma0_sq_se": 0.01, "sigma1_sq": 2.0}
    assert TR.regime(fit, 0.1) == "additive"
    assert TR.regime(fit, 10.0) == "multiplicative"
    assert TR.regime(fit, 0.5) == "undecided"  # rho = 1: the crossover
    assert TR.floor_slope("additive", "sgd") == 1.0 and TR.floor_slope("multiplicative", "sign") == 2.0
    assert math.isnan(TR.floor_slope("multiplicative", "sgd"))


def test_sgd_local_floor_solves_the_lyapunov_equation():
    rng = np.random.default_rng(1)
    A = rng.standard_normal((6, 6))
    H = A @ A.T / 6 + 0.1 * np.eye(6)
    M = rng.standard_normal((6, 6))
    S = M @ M.T
    eta, B = 0.3, 4
    h, U = np.linalg.eigh(H)
    Ms = np.eye(6) - eta * H
    P = linalg.solve_discrete_lyapunov(Ms, eta**2 * S / B)  # P = M P M^T + eta^2 S/B
    direct = 0.5 * np.trace(H @ P)
    got = TR.sgd_local_floor(h, np.einsum("ij,jk,ki->i", U.T, S, U), eta, B)
    assert got == pytest.approx(direct, rel=1e-10)
    assert TR.sgd_local_floor(h, np.diag(U.T @ S @ U), 1e-6, B) / 1e-6 == pytest.approx(np.trace(S) / (4 * B), rel=1e-5)


# ----------------------------------------------------------------------------- simulators
def test_digits_problem_is_solved():
    P = SR.digits_problem()
    assert P["X"].shape == (450, 17) and P["theta_star"].shape == (170,)
    assert np.max(np.abs(P["grad_star"])) < 1e-14
    assert P["h"].min() >= 0.1 - 1e-12  # L2 weight 0.1 on every parameter
    # a Newton-consistent Hessian: a gradient difference along a direction matches H v
    v = np.random.default_rng(2).standard_normal(170) * 1e-6
    g = lambda th: SR._probs_and_grad(th, P["X"], P["Y"], 0.1)[1]  # noqa: E731
    np.testing.assert_allclose(g(P["theta_star"] + v) - g(P["theta_star"] - v), 2 * P["hessian"] @ v, atol=1e-12)


def test_noise_variance_matches_the_oracles_exact_moments():
    P = SR.digits_problem()
    th = SR.gd_checkpoints(np.array([0, 5]), eta=1.0)
    m = SR.noise_variance(jax.random.key(0), th, oracle="multiplicative", sigma=0.5, n_draws=128)
    assert np.all(np.abs(m["variance"] - 0.25 * m["grad_sq"]) < 4 * m["variance_se"])
    g = SR.noise_variance(jax.random.key(1), th, oracle="gaussian", batch=8, n_draws=128)
    assert np.all(np.abs(g["variance"] - np.trace(P["S"]) / 8) < 4 * g["variance_se"])


def test_well_paths_do_not_depend_on_the_well():
    """sign(f'(x)(1 + sigma xi)) = sign(x) sign(1 + sigma xi): the same noise gives the same lattice path."""
    runs = [SR.well_chains(jax.random.key(3), name, 0.1, 1.0, T=300, burn=0, n_chains=4) for name in TR.WELLS]
    for r in runs[1:]:
        np.testing.assert_array_equal(r["x"], runs[0]["x"])
    assert not any(np.any(r["diverged"]) for r in runs)


def test_folded_full_gradient_is_each_runs_own_gradient():
    """Under vmap the full-batch gradient puts every run's Θ into one matrix product; each row must still be the
    NumPy gradient of its own Θ (two 450-term sums of O(1) products: 1e-13 absolute is a few hundred ulps), unmapped,
    mapped over Θ (the folded route) and mapped over Θ and the data (the plain route)."""
    P = SR.digits_problem()
    X, Y = P["X"], P["Y"]
    thetas = P["theta_star"] + 0.5 * np.random.default_rng(5).standard_normal((6, 170))
    want = np.stack([SR._probs_and_grad(t, X, Y, 0.1)[1] for t in thetas])
    lam = np.float64(0.1)
    folded = jax.jit(jax.vmap(SR._full_grad, in_axes=(0, None, None, None)))(thetas, X, Y, lam)
    plain = jax.vmap(SR._full_grad, in_axes=(0, 0, None, None))(thetas, np.stack([X] * 6), Y, lam)
    np.testing.assert_allclose(folded, want, rtol=0, atol=1e-13)
    np.testing.assert_allclose(plain, want, rtol=0, atol=1e-13)
    np.testing.assert_allclose(SR._full_grad(thetas[0], X, Y, lam), want[0], rtol=0, atol=1e-13)


def test_one_draw_is_the_two_draw_oracle():
    """The floors' full-batch oracle draws only the noise vector its nonzero level multiplies, from the key half the
    two-draw oracle uses for it: the same gradient, bit for bit, for the multiplicative and the Gaussian oracle."""
    P = SR.digits_problem()
    full = np.random.default_rng(6).standard_normal(170)
    for k, noise in enumerate(((0.7, 0.0), (0.0, 1.0))):
        key, noise = jax.random.key(k), np.array(noise)
        one = jax.jit(SR._one_draw, static_argnums=3)(key, full, P["chol"], 8, noise)
        np.testing.assert_array_equal(one, jax.jit(SR._noisy_full, static_argnums=3)(key, full, P["chol"], 8, noise))
        assert not np.allclose(one, full)  # the noise is there


def test_digits_floors_sgd_multiplicative_contracts_and_flags_divergence():
    r = SR.digits_floors(jax.random.key(4), np.array([1.0, 1e30]), "sgd", oracle="multiplicative", T=200, n_rec=4,
                         burn=0, start="origin")
    assert abs(r["final_excess"][0, 0]) < 1e-12 and not r["diverged"][0, 0]
    assert r["diverged"][1, 0] and r["diverged_step"][1, 0] == 50


def test_minibatch_sign_is_biased_at_the_minimizer():
    """The mechanism behind the floor the diagnostic does not predict: at Θ* the minibatch gradient has mean 0 but a
    skewed law, so E sign(g_B) != 0 there. B = 1 against the exact average of sign over the per-sample gradients;
    B = 8 far from 0 by Monte Carlo; the Gaussian surrogate of the same covariance is unbiased."""
    P = SR.digits_problem()
    X, Y, th = P["X"], P["Y"], P["theta_star"]
    p, _ = SR._probs_and_grad(th, X, Y, 0.1)
    U = (X[:, :, None] * (p - Y)[:, None, :]).reshape(len(X), -1) + 0.1 * th  # per-sample gradients at Θ*
    M = 20000
    for B, key in ((1, 0), (8, 1)):
        idx = np.asarray(jax.random.randint(jax.random.key(key), (M, B), 0, len(X)))
        m = np.sign(U[idx].mean(axis=1)).mean(axis=0)
        se = np.sqrt(np.maximum(1 - m**2, 1e-12) / M)
        assert np.max(np.abs(m) / se) > 20  # biased far beyond Monte Carlo error
        if B == 1:
            exact = np.sign(U).mean(axis=0)
            assert np.all(np.abs(m - exact) <= 4.5 * se + 1e-12)
    xi = np.asarray(jax.random.normal(jax.random.key(2), (M, 170)))
    g = (xi @ P["chol"].T)[:, :40]  # Gaussian noise of the minibatch covariance (first 40 coordinates)
    m = np.sign(g).mean(axis=0)
    assert np.all(np.abs(m) < 4.5 * np.sqrt(1 / M))
