r"""Unit tests of least squares with sampled rows (Kidambi et al. 2018): :mod:`theory.noisy_quadratic_sampled` and
:mod:`sims.noisy_quadratic_sampled`.

The mean-square operator is checked against Monte Carlo paths of the algorithms themselves (the paper's Algorithms
1--3 written out here in NumPy, on the two-coordinate instance with sampled rows), the simulated map against the
operator, SGD's tuned rate against sympy and a brute-force search, and the grid zoom against a known maximum.
"""
from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

import sims.noisy_quadratic_sampled as ss
import theory.noisy_quadratic_sampled as ts

KAPPA, C = 100.0, 2.0
PARAMS = {"sgd": [0.9], "heavy_ball": [0.3, 0.7], "nesterov": [0.3, 0.8], "asgd": [0.4, 50.0, 4.0]}


def _paths(method, p, kappa, n_steps, n_paths, seed):
    r"""The paper's algorithms on :math:`w^* = 0` (error coordinates) with rows :math:`x = \pm\sqrt2\sigma_ie_i`, each
    coordinate with probability 1/2 (:math:`c = 2`), from :math:`w_0 = (1, 1)`: the loss :math:`\sum_i\sigma_i^2w_i^2`
    of every path after ``n_steps`` updates."""
    rng = np.random.default_rng(seed)
    s2 = np.array([1.0, 2 * C / kappa])
    w = np.ones((n_paths, 2))
    aux = w.copy()  # w_{-1} (SGD, heavy ball), v_0 (Nesterov), the running average (ASGD): all start at w_0
    for _ in range(n_steps):
        coord = rng.integers(0, 2, n_paths)
        x = np.zeros((n_paths, 2))
        x[np.arange(n_paths), coord] = rng.choice([-1.0, 1.0], n_paths) * np.sqrt(2 * s2[coord])
        g = lambda v: x * np.sum(x * v, axis=1, keepdims=True)  # noqa: E731  (x x^T (w - w*))
        if method == "sgd":
            w, aux = w - p[0] * g(w), w
        elif method == "heavy_ball":
            w, aux = w - p[0] * g(w) + p[1] * (w - aux), w
        elif method == "nesterov":
            v = w - p[0] * g(w)
            w, aux = (1 + p[1]) * v - p[1] * aux, v
        else:
            beta = p[2] / p[1]
            avg = (1 - beta) * aux + beta * (w - p[1] * p[0] / 0.7 * g(w))
            w, aux = 0.7 / (0.7 + beta) * (w - p[0] * g(w)) + beta / (0.7 + beta) * avg, avg
    return np.sum(s2 * w**2, axis=1)


def _predicted_loss(method, p, kappa, n_steps):
    """E f(w_T) from powers of each mode's operator (the state starts at (1, 1) in every mode)."""
    total = 0.0
    for h1, h2 in ts.kidambi_modes(kappa, C):
        M = ts.sampled_mode_operator(method, p, h1, h2)
        S = np.linalg.matrix_power(M, n_steps) @ np.ones(4)  # vec of the outer product (1, 1)(1, 1)^T
        total += h1 * S[0]  # sigma_i^2 E e_i^2 (E h = sigma_i^2)
    return total


@pytest.mark.parametrize("method", ts.SAMPLED_METHODS)
def test_operator_predicts_the_monte_carlo_loss_of_each_algorithm(method):
    # 15 updates: the loss falls to 2-7 % of its start, while its spread across paths stays mild (by 40 updates the
    # momentum methods' losses are heavy-tailed and the sample standard error understates the real one)
    n_steps, n_paths = 15, 20000
    loss = _paths(method, PARAMS[method], KAPPA, n_steps, n_paths, seed=11 + ts.SAMPLED_METHODS.index(method))
    pred = _predicted_loss(method, PARAMS[method], KAPPA, n_steps)
    se = loss.std(ddof=1) / np.sqrt(n_paths)
    # independent paths: the mean is within 4.5 standard errors of the exact expectation (a false alarm ~1e-5);
    # the expectation has decayed well below its start (the check is not a trivial one)
    assert abs(loss.mean() - pred) < 4.5 * se and pred < 0.1 * _predicted_loss(method, PARAMS[method], KAPPA, 0)


def test_rate_is_the_asymptotic_decay_of_the_exact_loss():
    for method in ts.SAMPLED_METHODS:
        p, rate = PARAMS[method], ts.sampled_ms_rate(method, PARAMS[method], ts.kidambi_modes(KAPPA, C))
        slope = np.log(_predicted_loss(method, p, KAPPA, 3000) / _predicted_loss(method, p, KAPPA, 2000)) / 1000
        assert -slope == pytest.approx(rate, rel=1e-3)  # the subdominant modes have died out by step 2000


def test_simulated_map_equals_the_operator_and_needs_only_two_moments():
    modes = ts.kidambi_modes(KAPPA, C)
    s = modes[:, 0]
    paper = (np.stack([2 * s, 0 * s], axis=1), np.array([0.5, 0.5]))  # z = +-sqrt(2): h = 2 sigma_i^2 or 0
    other = (np.stack([0 * s, s, 3 * s], axis=1), np.array([1 / 3, 1 / 2, 1 / 6]))  # the same E h = s, E h^2 = 2 s^2
    for h, w in (paper, other):
        np.testing.assert_allclose(h @ w, s, rtol=1e-14)
        np.testing.assert_allclose(h**2 @ w, C * s**2, rtol=1e-14)
    for method, p in PARAMS.items():
        kw = {"alpha": p[1]} if len(p) == 2 else ({"long_step": p[1], "xi": p[2]} if len(p) == 3 else {})
        want = ts.sampled_ms_rate(method, p, modes)
        for h, w in (paper, other):
            out = ss.sampled_moment_map(method, [p[0]], h_atoms=h, h_probs=w, **kw)
            assert out["rate"][0] == pytest.approx(want, rel=1e-9)  # round-off of two 4 x 4 eigensolves
            assert not out["diverged"][0]


def test_simulated_map_flags_a_diverging_step_and_takes_one_law_per_point():
    atoms, probs = np.array([[2.0, 0.0], [0.08, 0.0]]), np.array([0.5, 0.5])
    out = ss.sampled_moment_map("heavy_ball", [0.1, 3.0], alpha=0.5, h_atoms=atoms, h_probs=probs)
    assert not out["diverged"][0] and out["diverged"][1] and out["rate"][1] < 0
    per_point = ss.sampled_moment_map("sgd", [0.5, 0.5], h_atoms=np.stack([atoms, atoms * 0.5]), h_probs=probs)
    single = ss.sampled_moment_map("sgd", [0.5], h_atoms=atoms * 0.5, h_probs=probs)
    assert per_point["rate"][1] == pytest.approx(single["rate"][0], rel=1e-14)


def test_sgd_tuned_rate_sympy_and_brute_force():
    exprs, (s1, s2, c) = ts.sgd_tuned_rate_sympy()
    assert sp.simplify(exprs["delta"] - 2 / (c * (s1 + s2))) == 0
    assert sp.simplify(exprs["factor"] - (1 - 4 * s1 * s2 / (c * (s1 + s2) ** 2))) == 0
    for kappa in (50.0, 1e3, 1e5):
        out = ts.sgd_tuned_rate(kappa, C)
        modes = ts.kidambi_modes(kappa, C)
        deltas = out["delta"] * np.linspace(0.9, 1.1, 2001)
        brute = max(ts.sampled_ms_rate("sgd", [d], modes) for d in deltas)
        assert out["rate"] == pytest.approx(brute, rel=1e-6)  # the grid's spacing at a kink: 1e-4 in delta
        assert out["rate"] * kappa == pytest.approx(8.0, rel=20 / kappa)  # ~ 8/kappa (the note's number)


def test_grid_search_finds_a_known_maximum_in_a_batch():
    def rates(u):
        return -np.sum((u - np.array([0.3, -0.7])) ** 2, axis=-1) - np.abs(u[..., 0] - 0.3)

    out = ts.grid_search(rates, np.array([[[-2.0, -2.0], [2.0, 2.0]], [[0.0, -1.0], [1.0, 0.0]]]), n=21, rounds=40,
                         keep=7)
    # 40 rounds shrink the window by (20/14)^40 ~ 1.6e6: the last cell is ~1e-7 of the first box
    np.testing.assert_allclose(out["u"], [[0.3, -0.7], [0.3, -0.7]], atol=1e-6)
    np.testing.assert_allclose(out["rate"], 0.0, atol=1e-6)
    single = ts.grid_search(lambda u: -np.abs(u[..., 0] - 0.25), np.array([[0.0], [1.0]]), n=9, rounds=30, keep=3)
    # keep 3 of 9: the window shrinks by 8/6 per round, (4/3)^30 ~ 5600: the last cell is ~2e-5
    assert single["u"][0] == pytest.approx(0.25, abs=1e-4)


def test_tuned_rates_sgd_matches_the_closed_form_and_heavy_ball_beats_sgd_by_a_constant():
    modes = np.stack([ts.kidambi_modes(k, C) for k in (1e3, 1e4)])
    sgd = ts.tuned_sampled_rates("sgd", modes)["rate"]
    np.testing.assert_allclose(sgd, [ts.sgd_tuned_rate(k, C)["rate"] for k in (1e3, 1e4)], rtol=1e-6)
    hb = ts.tuned_sampled_rates("heavy_ball", modes)["rate"]
    assert np.all((hb / sgd > 1.5) & (hb / sgd < 2.0))  # a constant factor, not sqrt(kappa)


@pytest.mark.parametrize("call, name", [
    (lambda: ts.sampled_blocks("heavy_ball", [0.1, 1.0]), "params"),
    (lambda: ts.sampled_blocks("asgd", [0.1, 4.0, 3.0]), "params"),
    (lambda: ts.sampled_blocks("adam", [0.1]), "method"),
    (lambda: ts.sampled_mode_operator("sgd", [0.1], 1.0, 0.5), "h_sq"),
    (lambda: ts.kidambi_modes(3.0, 2.0), "kappa"),
    (lambda: ts.kidambi_modes(100.0, 1.5), "c"),
    (lambda: ss.sampled_moment_map("sgd", [0.1], h_atoms=np.ones((2, 2)), h_probs=[0.3, 0.3]), "h_probs"),
    (lambda: ss.sampled_moment_map("asgd", [0.1], long_step=4.0, xi=3.0, h_atoms=np.ones((2, 2)), h_probs=[0.5, 0.5]),
     "xi"),
])
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises((ValueError, TypeError)) as exc:
        call()
    assert name in str(exc.value)
