"""Unit tests of the asymptotic covariance of SGD at a non-interpolating minimum (``theory.sgd_stability``, and the
simulators of ``sims.sgd_stability`` that measure it: the enumerated moment map and the paths).

Each test compares two independently obtained numbers: the closed form against finite differences, against a sympy fixed point of
the scalar variance recursion with every batch enumerated, against the enumerated moment recursion of batches drawn
with replacement, and against its own invariances (rotation, scaling, a padded null direction).
"""
from __future__ import annotations

import itertools

import jax
import numpy as np
import pytest
import sympy as sp

import sims.sgd_stability as sim
import theory.sgd_stability as th

pytestmark = pytest.mark.xdist_group("sgd_stability")


def _noisy(n: int = 6, d: int = 2, seed: int = 3):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d))
    y = x @ np.ones(d) + rng.standard_normal(n)
    return x, y, th.least_squares_minimum(x, y)


def test_least_squares_minimum_matches_finite_differences():
    """g_i and H_i at theta* from central differences of the per-sample loss (exact for a quadratic, up to round-off);
    the mean gradient vanishes and no sample is fitted."""
    x, y, pr = _noisy()
    step, eye = 1e-3, np.eye(x.shape[1])

    def loss(theta):
        return 0.5 * (x @ theta - y) ** 2  # every sample's loss, (n,)

    theta = pr["theta"]
    g = np.stack([(loss(theta + step * e) - loss(theta - step * e)) / (2 * step) for e in eye], axis=1)
    h = np.stack([[(loss(theta + step * (a + b)) - loss(theta + step * (a - b)) - loss(theta - step * (a - b))
                    + loss(theta - step * (a + b))) / (4 * step**2) for b in eye] for a in eye], axis=-1)
    # round-off: losses of size ~1 differenced over 2e-3 (gradients) and 4e-6 (Hessians)
    np.testing.assert_allclose(pr["gradients"], g, atol=1e-10)
    np.testing.assert_allclose(pr["hessians"], h.transpose(1, 0, 2), atol=1e-7)
    assert np.abs(pr["gradients"].mean(axis=0)).max() < 1e-13 * np.abs(g).max() * x.shape[0]  # the normal equations
    assert np.abs(pr["residuals"]).min() > 1e-3  # non-interpolating: no sample is fitted


@pytest.mark.parametrize("batch_size", [1, 2, 3])
def test_scalar_limit_matches_a_sympy_fixed_point_over_enumerated_batches(batch_size):
    """d = 1: v = E_B[(1 - eta h_B)^2] v + eta^2 E_B[g_B^2], every batch enumerated in exact rationals (no p)."""
    hs = [sp.Rational(k, 4) for k in (1, 3, 5, 2, 6)]
    gs = [sp.Rational(k, 3) for k in (2, -1, 3, -5, 1)]
    assert sum(gs) == 0  # a minimum: the mean gradient vanishes
    eta, v = sp.Rational(1, 5), sp.Symbol("v")
    batches = list(itertools.combinations(range(5), batch_size))
    hb = [sum(hs[i] for i in b) / batch_size for b in batches]
    gb = [sum(gs[i] for i in b) / batch_size for b in batches]
    k = len(batches)
    rhs = sum((1 - eta * a) ** 2 for a in hb) / k * v + eta**2 * sum(c**2 for c in gb) / k
    (exact,) = sp.solve(sp.Eq(v, rhs), v)
    got = th.stationary_covariance(np.array([[[float(a)]] for a in hs]), np.array([[float(c)] for c in gs]),
                                   batch_size, float(eta))
    assert got.shape == (1, 1)
    assert got[0, 0] == pytest.approx(float(exact), rel=1e-13)  # a 1 x 1 solve: round-off only


def test_with_replacement_matches_the_enumerated_iid_recursion():
    """sampling="with": the fixed point of the moment recursion over all n^B ordered index tuples (i.i.d. draws)."""
    _, _, pr = _noisy(n=5, d=2, seed=4)
    h, g = pr["hessians"], pr["gradients"]
    b, eta = 2, 0.5 * th.ms_threshold(h, 2, "with")
    tuples = list(itertools.product(range(5), repeat=b))
    hb = np.array([h[list(t)].mean(axis=0) for t in tuples])
    gb = np.array([g[list(t)].mean(axis=0) for t in tuples])
    a = np.eye(2) - eta * hb
    m = np.einsum("kij,kab->iajb", a, a).reshape(4, 4) / len(tuples)
    c = eta**2 * np.einsum("ki,ka->ia", gb, gb).reshape(4) / len(tuples)
    fixed = np.linalg.solve(np.eye(4) - m, c).reshape(2, 2)
    np.testing.assert_allclose(th.stationary_covariance(h, g, b, eta, "with"), fixed, rtol=1e-11, atol=1e-15)


def test_invariances_rotation_scale_and_a_null_direction():
    """Sigma(R H R', R g) = R Sigma R'; Sigma(c g) = c^2 Sigma(g); a padded direction no H_i touches stays at 0."""
    _, _, pr = _noisy(n=6, d=2, seed=5)
    h, g = pr["hessians"], pr["gradients"]
    base = th.stationary_covariance(h, g, 2, 0.1)
    r = np.array([[np.cos(0.7), -np.sin(0.7)], [np.sin(0.7), np.cos(0.7)]])
    rot = th.stationary_covariance(np.einsum("ij,njk,lk->nil", r, h, r), g @ r.T, 2, 0.1)
    np.testing.assert_allclose(rot, r @ base @ r.T, rtol=1e-10, atol=1e-15)
    np.testing.assert_allclose(th.stationary_covariance(h, 3.0 * g, 2, 0.1), 9.0 * base, rtol=1e-12)
    hp = np.zeros((6, 3, 3))
    hp[:, :2, :2] = h
    gp = np.c_[g, np.zeros(6)]
    padded = th.stationary_covariance(hp, gp, 2, 0.1)
    np.testing.assert_allclose(padded[:2, :2], base, rtol=1e-12)
    assert np.all(padded[2] == 0) and np.all(padded[:, 2] == 0)


def test_full_batch_and_interpolation_give_zero():
    """B = n is gradient descent at the minimum (no noise: p = 0); zero gradients are an interpolating minimum."""
    _, _, pr = _noisy()
    h, g = pr["hessians"], pr["gradients"]
    assert np.all(th.stationary_covariance(h, g, 6, 0.1) == 0)
    assert np.all(th.stationary_covariance(h, np.zeros_like(g), 2, 0.1) == 0)


def test_limit_blows_up_at_the_threshold_and_is_refused_beyond():
    """tr Sigma grows like 1/(eta* - eta) (the product tends to a constant), and eta >= eta*(B) is a ValueError."""
    _, _, pr = _noisy()
    h, g = pr["hessians"], pr["gradients"]
    edge = th.ms_threshold(h, 2)
    gaps = np.array([1e-3, 1e-4, 1e-5])
    prod = [gap * np.trace(th.stationary_covariance(h, g, 2, edge * (1 - gap))) for gap in gaps]
    assert prod[2] == pytest.approx(prod[1], rel=1e-3)  # the residue: the next order is O(gap)
    with pytest.raises(ValueError, match="eta"):
        th.stationary_covariance(h, g, 2, edge * (1 + 1e-9))


# ----------------------------------------------------------------------------- the simulators (sims.sgd_stability)
def test_moment_map_fixed_point_is_the_closed_form():
    """The enumerated one-step map's fixed point (every batch, no p) equals eta p (2C - eta D)^+ vec Sigma_g."""
    _, _, pr = _noisy(n=6, d=2, seed=6)
    h, g = pr["hessians"], pr["gradients"]
    for b in (1, 2, 4):
        eta = 0.7 * th.ms_threshold(h, b)
        w = sim.nonzero_gradient_moment_map(h, g, b, eta)
        z = np.linalg.solve(np.eye(w.shape[0] - 1) - w[:-1, :-1], w[:-1, -1])
        np.testing.assert_allclose(z[:4].reshape(2, 2), th.stationary_covariance(h, g, b, eta), rtol=1e-9, atol=1e-14)
        np.testing.assert_allclose(z[4:], 0.0, atol=1e-12)  # the mean decays to the minimum


def test_evolved_moments_agree_with_matrix_powers_and_flag_divergence():
    """evolve_moments (repeated squaring) against numpy's matrix_power at T = 2^5; bounded below the threshold with
    negative log growth, diverged above it with positive growth."""
    _, _, pr = _noisy(n=6, d=2, seed=6)
    h, g = pr["hessians"], pr["gradients"]
    x0, edge = np.array([0.3, -0.2]), th.ms_threshold(h, 2)
    w = sim.nonzero_gradient_moment_map(h, g, 2, 0.5 * edge)
    run = sim.evolve_moments(w, x0, 5)
    direct = sim.second_moment_after(w, x0, 32)
    np.testing.assert_allclose(run["sigma"], 0.5 * (direct + direct.T), rtol=1e-12)
    assert not run["diverged"] and run["diverged_step"] == -1
    above = sim.nonzero_gradient_moment_map(h, g, 2, 1.1 * edge)
    assert sim.evolve_moments(above, x0, 30)["diverged"]
    assert sim.moment_log_growth(above, x0, 2**10) > 0 > sim.moment_log_growth(
        sim.nonzero_gradient_moment_map(h, g, 2, 1e-3 * edge), np.array([30.0, -20.0]), 2**4)


def test_paths_match_the_exact_moments_and_flag_divergence():
    """Path averages of x_T x_T' within 5 standard errors of the exact moments at T = 20; a step far past the
    threshold leaves every path out of bound (flagged, statistics NaN)."""
    _, _, pr = _noisy(n=6, d=2, seed=6)
    h, g = pr["hessians"], pr["gradients"]
    x0, eta = np.array([0.3, -0.2]), 0.5 * th.ms_threshold(h, 2)
    out = sim.sgd_paths_second_moment(jax.random.key(5), h, g, 2, eta, x0, n_steps=20, n_paths=4000)
    exact = sim.second_moment_after(sim.nonzero_gradient_moment_map(h, g, 2, eta), x0, 20)
    assert not out["diverged"].any()
    assert np.all(np.abs(out["mean"] - exact) <= 5 * out["se"])
    gone = sim.sgd_paths_second_moment(jax.random.key(5), h, g, 2, 50.0, x0, n_steps=200, n_paths=4, bound=1e50)
    assert gone["diverged"].all() and np.all(gone["diverged_step"] > 0) and np.isnan(gone["mean"]).all()
