"""Unit tests of the sgd_stability topic: sympy derivations, closed forms, JAX simulators against NumPy references.

The claims (tests/test_power.py) compare theory and simulation on the topic's problems; these tests
pin the pieces: the mixture identity symbolically and by brute force, the threshold's defining
property and its invariances (rotation, permutation, scaling, padding), bad input, and each JAX
simulator against its NumPy reference or a closed form.
"""
from __future__ import annotations

import itertools

import jax
import numpy as np
import pytest
import sympy as sp

import sims.sgd_stability as sim
import theory.sgd_stability as th
from sims.reference import sgd_stability as ref


def _ls(n: int, d: int, seed: int) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal((n, d))
    return np.einsum("ni,nj->nij", x, x)


H5 = _ls(5, 2, 1)  # small problem shared with the contract rows (same shapes: one compilation)


# ----------------------------------------------------------------------------- theory: the mixture identity
def test_mixture_identity_sympy_gives_the_without_replacement_weight():
    r = th.mixture_identity_sympy()
    n, b = r["n"], r["B"]
    assert sp.simplify(r["p"] - (n - b) / (b * (n - 1))) == 0
    assert sp.simplify(r["w_s"] - r["p"]) == 0  # weights sum to one: (1 - p) + p
    assert sp.simplify(r["p1"] - b / n) == 0 and sp.simplify(r["p2"] - b * (b - 1) / (n * (n - 1))) == 0


@pytest.mark.parametrize("batch_size", [1, 2, 3, 5])
def test_kron_second_moment_equals_brute_force_without_replacement(batch_size):
    brute = np.mean([np.kron(m, m) for m in (H5[list(c)].mean(axis=0)
                                             for c in itertools.combinations(range(5), batch_size))], axis=0)
    np.testing.assert_allclose(th.kron_second_moment(H5, batch_size), brute, rtol=1e-13, atol=1e-13)


def test_kron_second_moment_with_replacement_equals_brute_force():
    brute = np.mean([np.kron(m, m) for m in (H5[list(c)].mean(axis=0)
                                             for c in itertools.product(range(5), repeat=2))], axis=0)
    np.testing.assert_allclose(th.kron_second_moment(H5, 2, "with"), brute, rtol=1e-13, atol=1e-13)


def test_batch_weight_values():
    assert th.batch_weight(8, 1) == 1.0 and th.batch_weight(8, 8) == 0.0 and th.batch_weight(1, 1) == 0.0
    assert th.batch_weight(8, 2) == pytest.approx(6 / 14, rel=1e-15)
    assert th.batch_weight(8, 4, "with") == 0.25


# ----------------------------------------------------------------------------- theory: the threshold
@pytest.mark.parametrize("batch_size", [1, 2, 4, 6])
def test_ms_threshold_is_where_the_spectral_radius_crosses_one(batch_size):
    h = _ls(6, 3, 2)
    e = th.ms_threshold(h, batch_size)
    assert th.spectral_radius(h, batch_size, e) == pytest.approx(1.0, abs=1e-11)
    assert th.spectral_radius(h, batch_size, 0.999 * e) < 1 < th.spectral_radius(h, batch_size, 1.001 * e)
    # the whole interval below is stable (no gaps): sample it
    assert all(th.spectral_radius(h, batch_size, f * e) < 1 for f in np.linspace(0.01, 0.99, 25))


def test_ms_threshold_nondecreasing_and_gd_limit_on_random_problems():
    for seed in range(5):
        h = _ls(7, 3, 10 + seed)
        t = np.array([th.ms_threshold(h, b) for b in range(1, 8)])
        assert np.all(np.diff(t) >= -1e-12)
        assert t[-1] == pytest.approx(2 / np.linalg.eigvalsh(h.mean(axis=0))[-1], rel=1e-12)
        # without replacement is at least as stable as with replacement (p smaller)
        assert all(th.ms_threshold(h, b) >= th.ms_threshold(h, b, "with") * (1 - 1e-12) for b in range(1, 8))


def test_ms_threshold_metamorphic_invariances():
    h = _ls(6, 3, 3)
    e = th.ms_threshold(h, 2)
    q, _ = np.linalg.qr(np.random.default_rng(0).standard_normal((3, 3)))
    assert th.ms_threshold(q @ h @ q.T, 2) == pytest.approx(e, rel=1e-11)                # rotation
    assert th.ms_threshold(h[::-1], 2) == pytest.approx(e, rel=1e-12)                     # sample order
    assert th.ms_threshold(3.0 * h, 2) == pytest.approx(e / 3.0, rel=1e-12)               # curvature scale
    # issue 29: at 1e200 the Kronecker squares overflow (a LinAlgError before); the threshold is e / 1e200
    assert th.ms_threshold(1e200 * h, 2) * 1e200 == pytest.approx(e, rel=1e-12)
    with pytest.raises(ValueError, match="eta: the second-moment operator overflows float64"):
        th.spectral_radius(h, 2, 1e200)
    padded = np.zeros((6, 4, 4))
    padded[:, :3, :3] = h                                                                 # a flat direction
    assert th.ms_threshold(padded, 2) == pytest.approx(e, rel=1e-11)


@pytest.mark.parametrize("kwargs, name", [
    ({"batch_size": 0}, "batch_size"), ({"batch_size": 7}, "batch_size"), ({"batch_size": 2.0}, "batch_size"),
    ({"batch_size": True}, "batch_size"), ({"hessians": np.ones((6, 3))}, "hessians"),
    ({"hessians": np.ones((6, 3, 4))}, "hessians"), ({"hessians": "H"}, "hessians"),
    ({"hessians": _ls(6, 3, 0) + np.triu(np.ones((3, 3)), 1)}, "hessians"),
    ({"hessians": -_ls(6, 3, 0)}, "hessians"), ({"hessians": np.full((6, 3, 3), np.nan)}, "hessians"),
    ({"hessians": np.zeros((6, 3, 3))}, "hessians"), ({"sampling": "maybe"}, "sampling"),
])
def test_ms_threshold_bad_input_names_the_parameter(kwargs, name):
    args = {"hessians": _ls(6, 3, 0), "batch_size": 2, **kwargs}
    with pytest.raises((ValueError, TypeError)) as exc:
        th.ms_threshold(**args)
    assert name in str(exc.value)


def test_trace_bound_chain_for_rank_one_hessians():
    for seed in range(4):
        h = _ls(6, 4, 20 + seed)
        tb = th.trace_bound(h)
        assert tb["rank_one"]
        assert th.ms_threshold(h, 1) <= tb["eta_bound"] * (1 + 1e-12) <= tb["eta_trace"] * (1 + 1e-12)
    full_rank = np.stack([np.eye(3) * (i + 1) for i in range(4)])
    assert not th.trace_bound(full_rank)["rank_one"]


@pytest.mark.parametrize("kwargs, name", [({"u": np.ones(5)}, "u"), ({"X": np.ones(6)}, "X"), ({"y": np.ones(3)}, "y"),
                                          ({"v": "v"}, "v"), ({"u": np.full(6, np.nan)}, "u")])
def test_dln_hessians_bad_input(kwargs, name):
    args = {"u": np.ones(6), "v": np.ones(6), "X": np.ones((4, 6)), **kwargs}
    with pytest.raises((ValueError, TypeError)) as exc:
        sim.dln_hessians(**args)
    assert name in str(exc.value)


def test_dln_gradients_match_autodiff_hessians():
    x = np.random.default_rng(4).standard_normal((4, 6))
    u, v = th.dln_minimum(np.random.default_rng(5).standard_normal(6), 1.7)
    g = th.dln_gradients(u, v, x)
    np.testing.assert_allclose(sim.dln_hessians(u, v, x), np.einsum("ni,nj->nij", g, g), rtol=1e-12, atol=1e-12)


def test_dln_sharpness_norm_brackets_the_autodiff_trace():
    # an unbalanced minimum (c = 2.3) on anisotropic features: the bounds are strict and the l1 floor is not reached
    x = np.random.default_rng(14).standard_normal((5, 4)) * np.array([2.0, 1.0, 0.5, 0.3])
    u, v = th.dln_minimum(np.random.default_rng(15).standard_normal(4), 2.3)
    out = th.dln_sharpness_norm(u, v, x)
    trace = float(np.trace(sim.dln_hessians(u, v, x).mean(axis=0)))
    assert out["trace"] == pytest.approx(trace, rel=1e-13)
    assert out["lower"] < trace < out["upper"] and out["l1_floor"] < trace
    balanced = th.dln_sharpness_norm(*th.dln_minimum(u * v, 1.0), x)
    assert balanced["trace"] == pytest.approx(balanced["l1_floor"], rel=1e-13)


# ----------------------------------------------------------------------------- theory: a.s. threshold (commuting)
def test_as_threshold_commuting_is_a_root_and_not_below_ms():
    c = np.exp(np.random.default_rng(6).standard_normal((6, 2)))
    h = np.stack([np.diag(r) for r in c])
    for b in (1, 2, 3, 6):
        e = th.as_threshold_commuting(c, b)
        assert th.lyapunov_commuting(c, b, e) == pytest.approx(0.0, abs=1e-10)
        assert e >= th.ms_threshold(h, b) * (1 - 1e-12)  # Jensen
    assert th.as_threshold_commuting(c, 6) == pytest.approx(th.ms_threshold(h, 6), rel=1e-10)  # B = n: deterministic


# ----------------------------------------------------------------------------- theory: delays
def test_delay_threshold_values_and_sympy_root():
    expected = [2.0, 1.0, 0.618034, 0.445042, 0.347296, 0.284630, 0.241073]
    np.testing.assert_allclose([th.delay_threshold(s) for s in range(7)], expected, atol=5e-7)
    for s in range(4):
        poly, z, a = th.delay_char_poly_sympy(s)
        assert sp.expand(poly - (z ** (s + 1) - z**s + a)) == 0
        assert th.delay_boundary_residual_sympy(s) == 0
    for s in range(9):
        assert th.delay_spectral_radius(th.delay_threshold(s), s) == pytest.approx(1.0, abs=1e-9)
        assert th.delay_spectral_radius(0.99 * th.delay_threshold(s), s) < 1 < th.delay_spectral_radius(1.01 * th.delay_threshold(s), s)


# ----------------------------------------------------------------------------- theory: momentum
def test_momentum_flip_and_threshold():
    mu = sp.Symbol("mu")
    hb, _, m1 = th.momentum_flip_sympy("heavy_ball")
    nag, _, m2 = th.momentum_flip_sympy("nesterov")
    assert sp.simplify(hb.subs(m1, mu) - 2 * (1 + mu)) == 0
    assert sp.simplify(nag.subs(m2, mu) - 2 * (1 + mu) / (1 + 2 * mu)) == 0
    for method in th.METHODS:
        for m in (0.0, 0.3, 0.9):
            h = th.momentum_threshold(m, method)
            assert th.momentum_spectral_radius(h, m, method) == pytest.approx(1.0, abs=1e-9)
            assert th.momentum_spectral_radius(0.99 * h, m, method) < 1 < th.momentum_spectral_radius(1.01 * h, m, method)


def test_momentum_variance_sympy_matches_closed_form():
    var, (eta, lam, mu, sigma) = th.momentum_variance_sympy()
    closed = eta * sigma**2 * (1 + mu) / (lam * (1 - mu) * (2 * (1 + mu) - eta * lam))
    assert sp.simplify(var - closed) == 0
    assert th.momentum_stationary_variance(0.5, 2.0, 0.0, 1.0) == pytest.approx(0.5 / (2.0 * (2 - 1.0)), rel=1e-15)


def test_heavy_ball_optimal_sympy_is_polyaks_tuning_with_double_roots_at_both_ends():
    (e, (L, m)) = th.heavy_ball_optimal_sympy()
    sk = sp.sqrt(L / m)
    assert sp.simplify(e["eta"] - 4 / (sp.sqrt(L) + sp.sqrt(m)) ** 2) == 0
    assert sp.simplify(e["rate"] - (sk - 1) / (sk + 1)) == 0 and sp.simplify(e["mu"] - e["rate"] ** 2) == 0
    z = sp.Symbol("z")
    for lam, root in ((m, e["rate"]), (L, -e["rate"])):  # a double root at each end: p(z) = (z - root)^2
        poly = z**2 - (1 + e["mu"] - e["eta"] * lam) * z + e["mu"]
        assert sp.simplify(sp.expand(poly - (z - root) ** 2)) == 0


def test_heavy_ball_optimal_numbers_and_no_better_tuning_on_a_grid():
    for kappa in (4.0, 10.0, 1e4):
        out = th.heavy_ball_optimal(1.0 / kappa, 1.0)
        sk = np.sqrt(kappa)
        assert out["rate"] == pytest.approx((sk - 1) / (sk + 1), rel=1e-14)
        assert out["eta"] == pytest.approx(4 / (1 + 1 / sk) ** 2, rel=1e-14) and out["kappa"] == pytest.approx(kappa)
        # every curvature in [1/kappa, 1] has root modulus sqrt(mu) there (complex or double roots) ...
        lams = np.geomspace(1 / kappa, 1, 7)
        radii = [th.momentum_spectral_radius(out["eta"] * x, out["mu"], "heavy_ball") for x in lams]
        np.testing.assert_allclose(radii, out["rate"], rtol=1e-7)  # a double root carries sqrt(eps) round-off
        # ... and no (eta, mu) of a coarse grid does better (the bound holds at every grid point)
        for eta in np.linspace(0.05, 4.0, 25):
            for mu in np.linspace(0.0, 0.99, 25):
                worst = max(th.momentum_spectral_radius(eta * x, mu, "heavy_ball") for x in (1 / kappa, 1.0))
                assert worst >= out["rate"] * (1 - 1e-7)
    assert th.heavy_ball_optimal(2.0, 2.0)["rate"] == 0.0  # kappa = 1: one step to the minimum from a rest start


def test_momentum_map_is_the_update_rule_and_norms_match_a_numpy_loop():
    eta, mu, lams = np.array([0.3, 1.2, 2.5]), np.array([0.0, 0.5, 0.9]), np.array([0.1, 0.6, 1.0])
    for name, nu in (("heavy_ball", 0.0), ("nesterov", 1.0)):
        out = sim.momentum_map(eta, mu, lams=lams, method=name)
        for i in range(eta.size):
            for j, lam in enumerate(lams):
                h = eta[i] * lam
                want = np.array([[1 + mu[i] - h * (1 + nu * mu[i]), -mu[i] * (1 - nu * h)], [1.0, 0.0]])
                np.testing.assert_allclose(out["map"][i, j], want, rtol=1e-14, atol=1e-15)
            radius = max(th.momentum_spectral_radius(eta[i] * lam, mu[i], name) for lam in lams)
            assert out["radius"][i] == pytest.approx(radius, rel=1e-12)
        assert not out["diverged"].any()
        n = sim.momentum_norms(eta, mu, lams=lams, method=name, n_steps=8)
        for i in range(eta.size):
            x, xp, want = np.ones(3), np.ones(3), []
            for _ in range(8):
                y = x + nu * mu[i] * (x - xp)
                x, xp = x + mu[i] * (x - xp) - eta[i] * lams * y, x
                want.append(np.log(np.linalg.norm(x)))
            np.testing.assert_allclose(n["log_norm"][i], want, rtol=1e-12, atol=1e-12)
            # the NumPy norms stay far below the divergence bound 1e150: no step is flagged
            assert max(want) < sim.LOG_BOUND and not n["diverged"][i] and n["diverged_step"][i] == -1
    per_point = sim.momentum_map(eta, mu, lams=np.array([[0.1], [0.6], [1.0]]))["map"][:, 0]
    np.testing.assert_allclose(per_point[:, 0, 0], 1 + mu - eta * np.array([0.1, 0.6, 1.0]), rtol=1e-14)


@pytest.mark.parametrize("call, name", [
    (lambda: th.momentum_threshold(1.0, "heavy_ball"), "mu"), (lambda: th.momentum_threshold(0.5, "adam"), "method"),
    (lambda: th.momentum_stationary_variance(4.0, 1.0, 0.5, 1.0), "eta"),
    (lambda: th.momentum_stationary_variance(0.5, 1.0, float("nan"), 1.0), "mu"),
    (lambda: th.delay_threshold(-1), "delay"), (lambda: th.delay_threshold(1.5), "delay"),
    (lambda: th.as_threshold_commuting(np.zeros((4, 2)), 1), "curvatures"),
])
def test_theory_bad_input(call, name):
    with pytest.raises((ValueError, TypeError)) as exc:
        call()
    assert name in str(exc.value)


# ----------------------------------------------------------------------------- simulators against references
def test_moment_growth_matches_numpy():
    # (the growth rate against log rho(M_B) is a claim: mulayoff2024.threshold_nondecreasing_in_batch)
    etas = np.array([0.1, 0.2, 0.3])
    out = sim.moment_growth(H5, 2, etas, n_steps=4)
    ref_out = ref.moment_growth_numpy(H5, 2, etas, 4)
    np.testing.assert_allclose(out["log_trace"], ref_out["log_trace"], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(out["rate"], ref_out["rate"], rtol=1e-10, atol=1e-12)


def test_operator_reference_matches_the_enumerating_reference():
    """The bench's NumPy reference steps the summed d^2 x d^2 operator; the test reference sums A_B S A_B over the
    batches at every step: the same log traces to round-off (re-associated sums over 10 batches, 12 steps)."""
    etas = np.array([0.1, 0.25, 0.6])
    op = ref._moment_growth_operator(H5, 2, etas, 12)
    enum = ref.moment_growth_numpy(H5, 2, etas, 12)
    np.testing.assert_allclose(op["log_trace"], enum["log_trace"], rtol=1e-12, atol=1e-12)


def test_kron_enumerated_matches_numpy():
    out = sim.kron_enumerated(H5, [1, 2, 3])
    for k, b in enumerate([1, 2, 3]):
        np.testing.assert_allclose(out[k], ref.kron_enumerated_numpy(H5, b), rtol=1e-13, atol=1e-13)


def test_subset_masks_take_exactly_b_items_uniformly():
    m = np.asarray(sim._subset_masks(jax.random.key(3), 6, 2.0, 30000))
    assert np.all(m.sum(axis=1) == 2)
    # inclusion and pair frequencies of a uniform 2-subset of 6: 1/3 and 1/15 (binomial SEs ~3e-3, ~1.4e-3)
    np.testing.assert_allclose(m.mean(axis=0), 1 / 3, atol=0.012)
    np.testing.assert_allclose((m[:, 0] * m[:, 1]).mean(), 1 / 15, atol=0.006)


def test_sgd_paths_second_moment_matches_operator():
    theta0 = np.array([1.0, 0.0])
    out = sim.sgd_paths(jax.random.key(4), H5, 2, [0.3], theta0, n_steps=3, n_paths=4000)
    sq = out["sq_norm"][0]
    pred = th.moment_trace(H5, 2, 0.3, np.outer(theta0, theta0), 3)
    se = sq.std(axis=0, ddof=1) / np.sqrt(sq.shape[0])
    assert np.all(np.abs(sq.mean(axis=0) - pred)[1:] < 4.5 * se[1:])


def test_sgd_paths_takes_a_single_step():
    """The shortest run is one step: its second moment is the exact one-step operator's (4000 paths, 4.5 SE)."""
    theta0 = np.array([1.0, 0.0])
    out = sim.sgd_paths(jax.random.key(5), H5, 2, [0.3], theta0, n_steps=1, n_paths=4000)
    sq = out["sq_norm"][0]
    assert sq.shape == (4000, 2)
    pred = th.moment_trace(H5, 2, 0.3, np.outer(theta0, theta0), 1)
    se = sq[:, 1].std(ddof=1) / np.sqrt(sq.shape[0])
    assert abs(sq[:, 1].mean() - pred[1]) < 4.5 * se


def test_delayed_and_momentum_growth_match_numpy_and_roots():
    a = np.array([0.1, 0.5, 1.0])
    out = sim.delayed_growth(a, 2, n_steps=8)
    np.testing.assert_allclose(out["rate"], ref.delayed_growth_numpy(a, 2, 8)["rate"], rtol=1e-10, atol=1e-12)
    eta = np.array([0.5, 1.0, 2.5])  # Nesterov at h = 1 lands on exactly 0: rate -inf on both sides
    for name, nesterov in (("heavy_ball", False), ("nesterov", True)):
        m = sim.momentum_growth(eta, 0.5, method=name, n_steps=8)
        np.testing.assert_allclose(m["rate"], ref.momentum_growth_numpy(eta, 0.5, nesterov, 8)["rate"], rtol=1e-10,
                                   atol=1e-12)
    assert np.isneginf(sim.momentum_growth([1.0], 0.5, method="nesterov", n_steps=8)["rate"][0])


def test_refine_crossing_finds_a_known_root_and_flags_none():
    out = sim.refine_crossing(lambda v: v - np.array([[0.3], [5.0]]), [0.01, 0.01], [1.0, 1.0], n_points=9, n_rounds=6)
    assert out["crossing"][0] == pytest.approx(0.3, rel=1e-12) and out["found"][0]
    assert np.isnan(out["crossing"][1]) and not out["found"][1]
    with pytest.raises(ValueError, match="hi"):
        sim.refine_crossing(lambda v: v, [1.0], [0.5])


def test_bench_cases_reject_unknown_scale():
    with pytest.raises(ValueError, match="scale"):
        ref.bench_cases("medium")
    assert [c.name for c in ref.bench_cases("small")]


# ----------------------------------------------------------------------------- boundaries (mutation testing)
def test_three_steps_is_the_shortest_rate_run():
    """A rate is a slope over the run's second half, which needs two points: n_steps = 3 gives finite rates,
    n_steps = 2 (a slope of one point, formerly a silent NaN) names the parameter."""
    eta = np.array([0.1, 0.2, 0.3])
    assert np.all(np.isfinite(sim.moment_growth(H5, 2, eta, n_steps=3)["rate"]))
    assert np.all(np.isfinite(sim.delayed_growth(np.array([0.1, 0.5, 1.0]), 2, n_steps=3)["rate"]))
    assert np.all(np.isfinite(sim.momentum_growth(eta, 0.5, n_steps=3)["rate"]))
    for call in (lambda: sim.moment_growth(H5, 2, eta, n_steps=2),
                 lambda: sim.delayed_growth(np.array([0.5]), 1, n_steps=2),
                 lambda: sim.momentum_growth(eta, 0.5, n_steps=2)):
        with pytest.raises(ValueError, match="n_steps"):
            call()


@pytest.mark.parametrize("burn", [0, 1, 2])
def test_lyapunov_exponent_is_exact_for_a_deterministic_product(burn):
    """With one batch (B = n) and theta0 on an eigenvector, every step multiplies the norm by |1 - eta*lam|:
    gamma = log|1 - eta*lam| exactly, whatever the burn-in (the average runs over n_steps - burn steps)."""
    h = np.stack([np.diag([2.0, 0.5])] * 3)
    out = sim.lyapunov_paths(jax.random.key(0), h, 3, np.array([0.1, 0.3]), n_steps=6, n_paths=2, burn=burn,
                             theta0=np.array([1.0, 0.0]))
    np.testing.assert_allclose(out["gamma"], np.log(np.abs(1 - np.array([0.2, 0.6])))[:, None] * np.ones((1, 2)),
                               rtol=1e-12)


def test_lyapunov_paths_divergence_step():
    """Steps count from 1. With one batch and theta0 = e1, log|theta_t| = t log(2 eta - 1): eta = 1e200 passes
    the bound (LOG_BOUND / 2 = 172.7) at step 1, eta = 1e60 (138.8 per step) at step 2, a stable eta never (-1)."""
    h = np.stack([np.diag([2.0, 0.5])] * 3)
    out = sim.lyapunov_paths(jax.random.key(0), h, 3, np.array([1e200, 1e60, 0.1]), n_steps=4, n_paths=2,
                             theta0=np.array([1.0, 0.0]))
    assert sim.LOG_BOUND / 2 > np.log(2e60) and 2 * np.log(2e60) > sim.LOG_BOUND / 2  # the design above holds
    np.testing.assert_array_equal(out["diverged"], [[True, True], [True, True], [False, False]])
    np.testing.assert_array_equal(out["diverged_step"], [[1, 1], [2, 2], [-1, -1]])


def test_moment_growth_divergence_step():
    """Steps count from 0 (the start). One sample h = 1 in one dimension: tr Sigma_t = (1 - eta)^(2t) exactly, so the
    first step past the bound is the first t with 2t log|1 - eta| > LOG_BOUND, measured from the start (not from step 1)."""
    etas = np.array([1 + 1e60, 1 + 1e100, 0.5])
    out = sim.moment_growth(np.ones((1, 1, 1)), 1, etas, n_steps=4)
    with np.errstate(divide="ignore"):
        per_step = 2 * np.log(np.abs(1 - etas))
    first = np.where(per_step > 0, np.floor(sim.LOG_BOUND / per_step) + 1, -1)
    assert first.tolist() == [2, 1, -1]  # the design holds: 276 and 461 per step against the bound 345
    np.testing.assert_array_equal(out["diverged_step"], first)
    np.testing.assert_array_equal(out["diverged"], first > 0)


def test_delayed_noisy_divergence_step_and_cubic_sign():
    """Steps count from 1: noise of scale eta*sigma = 5e5 leaves the bound (1000) at the first step; without noise
    the path stays at its start 0 (never diverges). The cubic term restores (+kappa x^3): at eta = 0.5, lam =
    kappa = 1, sigma = 0.7 (stationary std ~0.4) no path reaches the overshoot region |x| > 2.4 in 200 steps,
    whereas with the cubic's sign flipped a path escapes once |x| > 1 (99 % of paths within 200 steps)."""
    key = jax.random.key(4)
    out = sim.delayed_noisy(key, np.array([0.5, 0.5]), 1, np.array([1e6, 0.0]), n_steps=4, n_paths=3)
    np.testing.assert_array_equal(out["diverged_step"], [[1, 1, 1], [-1, -1, -1]])
    out = sim.delayed_noisy(key, np.array([0.5]), 0, 0.7, kappa=1.0, n_steps=200, n_paths=8)
    assert not out["diverged"].any()
    # the documented toy f = x^2/2 + x^4/4 is the default (lam = kappa = 1): at sigma = 1.5 every path escapes, at steps
    # that move with kappa (9..50 here, 4..27 at kappa = 2), and the same paths without the arguments escape alike
    loud = sim.delayed_noisy(key, np.array([0.5, 0.5]), 0, 1.5, lam=1.0, kappa=1.0, n_steps=200, n_paths=8)
    default = sim.delayed_noisy(key, np.array([0.5, 0.5]), 0, 1.5, n_steps=200, n_paths=8)
    assert loud["diverged"].all()
    np.testing.assert_array_equal(default["diverged_step"], loud["diverged_step"])


def test_momentum_noise_without_noise_stays_at_its_start():
    """Paths start at x = x_prev = 0 with an empty running sum: without noise every x_t is 0, so mean_sq is exactly 0."""
    out = sim.momentum_noise(jax.random.key(5), np.array([0.5, 1.0]), 0.5, sigma=0.0, n_steps=6, burn=2, n_paths=2)
    np.testing.assert_array_equal(out["mean_sq"], np.zeros((2, 2)))
    assert not out["diverged"].any()


def test_dln_minimum_realises_beta_with_the_requested_balance():
    """u * v = beta exactly, and |u| = c^2 |v| (c = scale; c = 1 is the balanced minimum)."""
    beta = np.array([1.5, -0.25, 0.0, 4.0])
    u, v = th.dln_minimum(beta, 2.0)
    np.testing.assert_allclose(u * v, beta, rtol=1e-14, atol=0)
    np.testing.assert_allclose(np.abs(u), 4.0 * np.abs(v), rtol=1e-14, atol=0)
    assert np.all(v >= 0)


def test_momentum_noise_burn_in_drops_exactly_the_first_steps():
    """mean_sq averages x_t^2 over t = burn+1..T: (T - b) * mean_sq(b) - (T - b - 1) * mean_sq(b + 1) = x_{b+1}^2,
    which is positive (x_1 = -eta*sigma*xi_0 from x_0 = 0) -- and zero if the window started one step early."""
    key, t = jax.random.key(6), 6
    m0 = sim.momentum_noise(key, np.array([0.5]), 0.0, sigma=1.0, n_steps=t, burn=0, n_paths=3)["mean_sq"]
    m1 = sim.momentum_noise(key, np.array([0.5]), 0.0, sigma=1.0, n_steps=t, burn=1, n_paths=3)["mean_sq"]
    x1_sq = t * m0 - (t - 1) * m1
    assert np.all(x1_sq > 1e-8), x1_sq


# ----------------------------------------------------------------------------- necessary conditions; sampled batch noise
def test_necessary_conditions_are_rayleigh_quotients_of_the_generalized_problem():
    rng = np.random.default_rng(21)
    x = rng.standard_normal((7, 3)) * np.array([1.0, 0.8, 0.4])
    h = np.einsum("ni,nj->nij", x, x) + 0.1 * np.eye(3)  # full rank, so C is invertible
    hbar, eye = h.mean(axis=0), np.eye(3)
    w, u = np.linalg.eigh(hbar)
    for b in (1, 3, 7):
        p = (7 - b) / (b * 6)
        d_mat = (1 - p) * np.kron(hbar, hbar) + p * np.mean([np.kron(m, m) for m in h], axis=0)
        c_mat = 0.5 * (np.kron(hbar, eye) + np.kron(eye, hbar))
        out = th.necessary_conditions(h, b)
        for key, vec in (("top", np.kron(u[:, -1], u[:, -1])), ("frobenius", eye.reshape(-1))):
            assert out[key] == pytest.approx(2 * (vec @ c_mat @ vec) / (vec @ d_mat @ vec), rel=1e-12)
        # a Rayleigh quotient bounds the top generalized eigenvalue: both conditions are at least the threshold
        assert min(out["top"], out["frobenius"]) >= th.ms_threshold(h, b) * (1 - 1e-12)
    assert th.necessary_conditions(h, 7)["top"] == pytest.approx(2 / w[-1], rel=1e-13)


def test_sampled_batch_noise_matches_enumeration_within_its_standard_error():
    x = np.random.default_rng(22).standard_normal((6, 2))
    h = np.einsum("ni,nj->nij", x, x)
    out = sim.sampled_batch_noise(jax.random.key(11), h, np.array([1, 2, 4, 6]), n_batches=4000, n_groups=8)
    hbar = h.mean(axis=0)
    exact = sim.kron_enumerated(h, np.array([1, 2, 4, 6])) - np.kron(hbar, hbar)
    est, se = out["noise"].mean(axis=1), out["noise"].std(axis=1, ddof=1) / np.sqrt(8)
    z = np.abs(est[:3] - exact[:3]) / np.maximum(se[:3], 1e-300)
    assert np.all(z < 5)  # 3 x 16 entries at 5 SE: a false alarm has probability ~3e-5
    np.testing.assert_allclose(out["noise"][3], 0.0, atol=1e-12)  # B = n: every batch is the full set
