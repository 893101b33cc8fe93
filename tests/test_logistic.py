"""Unit tests of theory.logistic, sims.logistic, its NumPy reference and the logistic experiments."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import sympy as sp

import sims.logistic as sim
import theory.logistic as th
from sims.reference.logistic import bench_cases, gd_numpy

Z2 = np.array([[1.0, 0.3], [-0.5, 1.2], [0.7, -1.1], [-1.3, -0.2], [2.0, 0.5]])
A2 = np.array([0.1, 0.3, 0.2, 0.25, 0.15])
CASCADE = ([1.0, -1.0], [0.75, 0.25])
ASYM = ([1.0, -1.0], [0.3, 0.7])


# ------------------------------------------------------------------------------------------------
# theory: symbolic derivations
# ------------------------------------------------------------------------------------------------
def test_per_point_derivatives_closed_forms():
    s = th.s
    ell, d1, d2, *_ = th.per_point_derivatives()
    sigma = lambda t: 1 / (1 + sp.exp(-t))  # noqa: E731
    exact = lambda e: sp.simplify(e.rewrite(sp.exp)) == 0  # noqa: E731  (cosh forms -> exponentials)
    assert exact(d1 + sigma(-s))
    assert exact(d2 - sigma(s) * sigma(-s))
    # curvature is even and decreasing in |s|: the 1-D mechanism behind global convergence for c < 1
    assert exact(d2 - d2.subs(s, -s))
    assert all(float(sp.diff(d2, s).subs(s, v)) < 0 for v in (0.1, 1.0, 5.0))
    assert len(th.per_point_derivatives(2)) == 3


def test_sympy_gradient_and_hessian_match_autodiff_and_closed_forms():
    expr, ws = th.loss_expr(Z2, A2)
    g_sym = sp.lambdify(ws, [sp.diff(expr, w) for w in ws])
    H_sym = sp.lambdify(ws, sp.hessian(expr, ws))
    g_ad = jax.jit(jax.grad(sim._loss))
    rng = np.random.default_rng(0)
    for _ in range(3):
        w = rng.normal(size=2) * 2
        # float64 round-off on O(1) quantities
        np.testing.assert_allclose(g_ad(jnp.asarray(w), jnp.asarray(Z2), jnp.asarray(A2)), g_sym(*w), rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(sim.grad(w, Z2, A2), g_sym(*w), rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(th.grad(w, Z2, A2), g_sym(*w), rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(sim.hessian(w, Z2, A2), np.array(H_sym(*w), dtype=float), rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(th.hessian(w, Z2, A2), np.array(H_sym(*w), dtype=float), rtol=1e-12, atol=1e-14)
        assert abs(sim.loss(w, Z2, A2) - float(expr.subs(dict(zip(ws, w))))) < 1e-13
        assert abs(th.loss(w, Z2, A2) - sim.loss(w, Z2, A2)) < 1e-14
    batch = rng.normal(size=(4, 2))
    np.testing.assert_allclose(th.loss(batch, Z2, A2), [th.loss(b, Z2, A2) for b in batch], rtol=1e-14)


def test_gd_map_expr_matches_one_simulated_step():
    expr, ws = th.loss_expr(Z2, A2)
    T = sp.lambdify(ws, th.gd_map_expr(expr, ws, 0.7))
    w0 = np.array([0.4, -0.9])
    step = sim.gd(Z2, A2, [0.7], w0[None], 1)["w"][0, 0, 0]
    np.testing.assert_allclose(step, np.array(T(*w0), dtype=float).ravel(), rtol=1e-13)
    np.testing.assert_allclose(th.gd_step(w0, 0.7, Z2, A2), step, rtol=1e-13)
    symbolic = th.gd_map_expr(expr, ws)  # default: the symbol ETA
    assert th.ETA in symbolic.free_symbols


def _cascade_gradient():
    expr, (w1,) = th.loss_expr(*CASCADE)
    return sp.diff(expr, w1), w1


def test_two_cycle_equations_vanish_on_the_numerical_cycle_and_only_there():
    g, w1 = _cascade_gradient()
    r1, r2, u, v = th.two_cycle_equations(g, w1)
    _, lam = th.minimizer(*CASCADE)
    eta = 2.3 / lam
    uv, mult = th.two_cycle_1d(*CASCADE, eta)
    at = {th.ETA: eta, u: uv[0], v: uv[1]}
    assert abs(float(r1.subs(at))) < 1e-12 and abs(float(r2.subs(at))) < 1e-12
    # the residuals are v - T(u) and u - T(v), not their negatives or a swapped pair
    off = {th.ETA: eta, u: uv[0], v: uv[1] + 0.01}
    assert float(r1.subs(off)) == pytest.approx(0.01, abs=1e-12)
    assert float(r2.subs(off)) == pytest.approx(uv[0] - th.gd_step(uv[1] + 0.01, eta, *CASCADE)[0], abs=1e-12)
    m, mu_, mv_ = th.two_cycle_multiplier(g, w1)
    assert float(m.subs({th.ETA: eta, mu_: uv[0], mv_: uv[1]})) == pytest.approx(mult, rel=1e-10)


def test_normal_form_amplitude_matches_exact_cycle_of_the_cubic_map():
    A, a, b = th.normal_form_amplitude()
    av, bv, muv = -0.4, 0.3, 1e-6
    x = sp.symbols("x")
    T = lambda y: -(1 + muv) * y + av * y**2 + bv * y**3  # noqa: E731
    poly = sp.Poly(sp.expand(T(T(x)) - x), x)
    roots = np.roots([float(c) for c in poly.all_coeffs()])
    real = np.sort(roots[np.abs(roots.imag) < 1e-12].real)
    near = real[np.abs(real) < 0.1]
    cycle = near[np.abs(near) > 1e-9]  # drop the fixed point x = 0
    half_width = (cycle.max() - cycle.min()) / 2
    predicted = float(A.subs({th.mu: muv, a: av, b: bv}))
    # leading-order amplitude; the next correction is O(mu) relative, i.e. ~1e-6 here
    assert abs(half_width - predicted) / predicted < 1e-4


def test_normal_form_coefficients_match_hand_derived_values_for_unit_data():
    # z = +-1, weights p, 1-p: e^{w*} = p/(1-p), L'' = s(1-s) with s = sigma(w*) = p,
    # L''' = s(1-s)(1-2s), L'''' = s(1-s)(1-2s)^2 - 2 (s(1-s))^2
    p = 0.3
    co = th.normal_form_coefficients(*ASYM)
    q = p * (1 - p)
    assert co["w_star"] == pytest.approx(np.log(p / (1 - p)), abs=1e-14)
    assert co["lam"] == pytest.approx(q, rel=1e-13)
    assert co["g2"] == pytest.approx(q * (1 - 2 * p), rel=1e-12)
    assert co["g3"] == pytest.approx(q * (1 - 2 * p) ** 2 - 2 * q * q, rel=1e-12)
    assert co["a"] == pytest.approx(-(2 / q) * co["g2"] / 2, rel=1e-13)
    assert co["b"] == pytest.approx(-(2 / q) * co["g3"] / 6, rel=1e-13)
    assert co["amplitude_coefficient"] == pytest.approx(1 / np.sqrt(co["a"] ** 2 + co["b"]), rel=1e-14)
    assert co["amplitude_coefficient"] == pytest.approx(2.0134682, rel=1e-7)
    other = th.normal_form_coefficients(*ASYM, eta=1.0)
    assert other["a"] == pytest.approx(-co["g2"] / 2, rel=1e-13)


def test_piecewise_linear_cycle_solves_its_equations():
    pl = th.piecewise_linear_cycle()
    ws, J, c = sp.symbols("w_star J c", real=True)
    lam = th.lam
    u, v = pl["u"], pl["v"]
    assert sp.simplify(v - (u - c / lam * lam * (u - ws))) == 0
    assert sp.simplify(u - (v - c / lam * (lam * (v - ws) + J))) == 0
    assert sp.simplify(pl["multiplier"] - (c - 1) ** 2) == 0
    assert sp.simplify(pl["existence_bound"] - J * (c - 1) / (lam * (2 - c))) == 0


# ------------------------------------------------------------------------------------------------
# theory: numerical closed forms
# ------------------------------------------------------------------------------------------------
def test_minimizer_is_stationary_and_lambda_matches_autodiff():
    w, lam = th.minimizer(Z2, A2)
    assert np.max(np.abs(th.grad(w, Z2, A2))) < 1e-15  # Newton-polished to round-off
    assert abs(np.linalg.eigvalsh(sim.hessian(w, Z2, A2))[-1] - lam) < 1e-14


def test_smoothness_bounds_every_hessian_and_is_attained_at_zero_margin():
    L = th.smoothness(Z2, A2)
    rng = np.random.default_rng(1)
    assert all(np.linalg.eigvalsh(th.hessian(w, Z2, A2))[-1] <= L + 1e-15 for w in rng.normal(size=(20, 2)))
    assert np.linalg.eigvalsh(th.hessian(np.zeros(2), Z2, A2))[-1] == pytest.approx(L, rel=1e-14)


@pytest.mark.parametrize("z, weights, match", [
    ([1.0, 2.0, 3.0], None, "separable"),
    ([[1.0, 0.0], [2.0, 0.0], [-1.0, 0.0]], None, "spans only 1 of 2"),
    ([1.0, np.nan], None, "z: every value must be finite"),
    ([1.0, -1.0], [0.5, -0.5], "weights: every value must be >= 0"),
    ([1.0, -1.0], [0.5, 0.2, 0.3], r"weights: expected shape \(2,\), one weight per point of z"),
    ([1.0, -1.0], [0.0, 0.0], "weights: all weights are zero"),
    ([], None, "z: expected at least one value"),
])
def test_minimizer_rejects_bad_data(z, weights, match):
    with pytest.raises(ValueError, match=match):
        th.minimizer(z, weights)


@pytest.mark.parametrize("call, param", [
    (lambda: th.minimizer(object()), "z"),
    (lambda: th.minimizer("abc"), "z"),
    (lambda: th.minimizer([1.0, -1.0], tol=-1.0), "tol"),
    (lambda: th.minimizer([1.0, -1.0], max_iter=0), "max_iter"),
    (lambda: th.per_point_derivatives(-1), "order"),
    (lambda: th.per_point_derivatives(2.0), "order"),
    (lambda: th.loss([1.0, 2.0], [1.0, -1.0]), "w"),
    (lambda: th.grad(np.nan, [1.0, -1.0]), "w"),
    (lambda: th.hessian([[0.0, 0.0]], Z2, A2), "w"),
    (lambda: th.gd_step(0.0, 0.0, [1.0, -1.0]), "eta"),
    (lambda: th.gd_step(0.0, np.nan, [1.0, -1.0]), "eta"),
    (lambda: th.gd_map_expr("L", (th.w,)), "loss"),
    (lambda: th.gd_map_expr(th.w**2, ("w",)), "ws"),
    (lambda: th.gd_map_expr(th.w**2, (th.w,), -1.0), "eta"),
    (lambda: th.two_cycle_equations("g"), "g"),
    (lambda: th.two_cycle_multiplier(th.w, var=1.0), "var"),
    (lambda: th.loss_expr(Z2, A2, symbols=sp.symbols("a b c")), "symbols"),
    (lambda: th.normal_form_coefficients(Z2, A2), "z"),
    (lambda: th.normal_form_coefficients(*ASYM, eta=0.0), "eta"),
    (lambda: th.cycle_dataset(1.5, K=0.5), "K"),
    (lambda: th.cycle_dataset(1.5, J=1.5), "J"),
    (lambda: th.cycle_dataset("1.5"), "c"),
    (lambda: th.cycle_dataset(np.nan), "c"),
    (lambda: th.solve_two_cycle(*CASCADE, 10.0, [0.0]), "guess"),
    (lambda: th.solve_two_cycle(Z2, A2, 10.0, [0.0, 1.0]), "z"),
    (lambda: th.two_cycle_1d(*CASCADE, -1.0), "eta"),
    (lambda: th.two_cycle_1d(*CASCADE, 1.0), "eta"),           # c < 2: no cycle born at 2 yet
    (lambda: th.two_cycle_1d(*CASCADE, 12.0, w_star=np.inf), "w_star"),
    (lambda: th.period_doubling_step(*CASCADE, c_range=(1.5, 3.0)), "c_range"),
    (lambda: th.period_doubling_step(*CASCADE, c_range=(3.0, 2.5)), "c_range"),
    (lambda: th.period_doubling_step(*CASCADE, c_range=(2.01, 2.1)), "c_range"),  # no doubling there
    (lambda: th.period_doubling_step(*CASCADE, n_scan=1), "n_scan"),
    (lambda: th.construct_witness_2d(c=2.5), "c"),
    (lambda: th.construct_witness_2d(theta_deg=30.0), "theta_deg"),
    (lambda: th.construct_witness_2d(c=0.2), "c, theta_deg, J, K, offset"),  # c < 1 + cos 2theta
    (lambda: th.construct_witness_2d(offset=2.0), "offset"),
    (lambda: th.cycle_dataset(1.5, K=1e300), "K"),
    (lambda: th.orbit_bound_1d(Z2, A2, 1.0, 0.0), "z"),
    (lambda: th.orbit_bound_1d(*ASYM, 1.0, np.inf), "w0"),
])
def test_theory_rejects_bad_arguments_naming_the_parameter(call, param):
    with pytest.raises((ValueError, TypeError)) as exc:
        call()
    assert str(exc.value).startswith(param + ":"), exc.value


@pytest.mark.parametrize("c", [0.9, 1.0, 2.0, 2.5])
def test_cycle_dataset_rejects_c_outside_1_2(c):
    with pytest.raises(ValueError, match=r"^c: expected a number [<>]"):
        th.cycle_dataset(c)


def test_cycle_dataset_has_the_requested_c_and_minimizer():
    d = th.cycle_dataset(1.3)
    w, lam = th.minimizer(d["z"], d["weights"])
    assert abs(d["eta"] * lam - 1.3) < 1e-12
    target = -0.5 * d["J"] * 0.3 / (lam * 0.7)
    assert abs(w[0] - target) < 1e-6 * abs(target)  # fixed-point construction of p, to round-off of lambda
    assert d["u"] < d["w_star"] < 0 < d["v"]
    assert d["multiplier"] == pytest.approx(0.09, rel=1e-12)


def test_solve_two_cycle_finds_the_cycle_and_refuses_the_fixed_point():
    d = th.cycle_dataset(1.5)
    uv, mult = th.solve_two_cycle(d["z"], d["weights"], d["eta"], [d["u"], d["v"]])
    np.testing.assert_allclose(th.gd_step(uv[0], d["eta"], d["z"], d["weights"]), [uv[1]], atol=1e-15)
    np.testing.assert_allclose(th.gd_step(uv[1], d["eta"], d["z"], d["weights"]), [uv[0]], atol=1e-15)
    assert 0 < mult < 1 and mult == pytest.approx(0.25, rel=0.05)  # (1 - c)^2 up to the bump's curvature variation
    with pytest.raises(ValueError, match="^guess: .*fixed point"):
        th.solve_two_cycle(d["z"], d["weights"], d["eta"], [d["w_star"], d["w_star"]])


def test_second_doubling_of_the_cascade_dataset():
    c2 = th.period_doubling_step(*CASCADE)
    assert c2 == pytest.approx(2.6351716, abs=1e-7)
    _, lam = th.minimizer(*CASCADE)
    # the 2-cycle's multiplier crosses -1 there, from above
    assert th.two_cycle_1d(*CASCADE, (c2 - 1e-3) / lam)[1] > -1 > th.two_cycle_1d(*CASCADE, (c2 + 1e-3) / lam)[1]


def test_shipped_witness_equals_a_fresh_construction():
    shipped = th.witness_2d()
    fresh = th.construct_witness_2d(c=shipped["c"], theta_deg=shipped["theta_deg"], J=shipped["J"],
                                    K=shipped["K"], offset=shipped["offset"])
    np.testing.assert_allclose(shipped["z"], fresh["z"], rtol=1e-15)
    np.testing.assert_allclose(shipped["weights"], fresh["weights"], rtol=1e-14)
    np.testing.assert_allclose(shipped["cycle_point"], fresh["cycle_point"], rtol=1e-10, atol=1e-12)
    assert shipped["eta"] == pytest.approx(fresh["eta"], rel=1e-14)
    assert "note" in shipped and shipped["eta"] * th.minimizer(shipped["z"], shipped["weights"])[1] < 1


# ------------------------------------------------------------------------------------------------
# simulator
# ------------------------------------------------------------------------------------------------
def test_jax_gd_matches_numpy_reference_values_and_flags():
    eta, inits = np.array([1.0, 5.0, 9.0]), np.array([[0.5, -0.5], [2.0, 1.0]])
    jx = sim.gd(Z2, A2, eta, inits, 60, keep_last=5)
    npy = gd_numpy(Z2, A2, eta, inits, 60, keep_last=5)
    np.testing.assert_allclose(jx["w"], npy["w"], rtol=1e-11, atol=1e-13)  # same float64 recursion, 60 steps
    for k in ("diverged", "diverged_step", "escaped"):
        np.testing.assert_array_equal(jx[k], npy[k])
    assert not jx["diverged"].any() and (jx["diverged_step"] == -1).all()
    full = sim.gd(Z2, A2, eta, inits, 6)["w"]
    assert full.shape == (3, 2, 6, 2)
    np.testing.assert_allclose(full[:, :, -1], sim.gd(Z2, A2, eta, inits, 6, keep_last=1)["w"][:, :, 0], rtol=1e-15)


def test_numpy_reference_validates_keep_last():
    with pytest.raises(ValueError, match="^keep_last"):
        gd_numpy(Z2, A2, [1.0], np.zeros((1, 2)), 5, keep_last=6)
    with pytest.raises(ValueError, match="^keep_last"):
        gd_numpy(Z2, A2, [1.0], np.zeros((1, 2)), 5, keep_last=0)
    out = gd_numpy(Z2, A2, [1.0], np.zeros((1, 2)), 5, keep_last=5)["w"]
    assert np.all(np.isfinite(out)) and out.shape == (1, 1, 5, 2)


def test_bench_cases_validate_scale():
    with pytest.raises(ValueError, match="^scale"):
        bench_cases("medium")
    (case,) = bench_cases("small")
    assert case.work > 0 and case.name.startswith("logistic.")


def test_fixed_point_has_period_one_and_cycles_their_periods_in_time_order():
    w_star, lam = th.minimizer(*CASCADE)
    out = sim.attractors(*CASCADE, np.array([1.5, 2.3, 2.75]) / lam, [w_star[0] + 0.3], n_steps=20_000,
                         max_period=8, tol=1e-12)
    assert out["period"][:, 0].tolist() == [1, 2, 4]
    np.testing.assert_allclose(out["points"][0, 0, 0], w_star, atol=1e-12)
    assert np.isnan(out["points"][0, 0, 1:]).all() and np.isnan(out["points"][1, 0, 2:]).all()
    # 2-cycle: the theory's bracketed cycle, in time order (T maps each point to the next)
    uv, _ = th.two_cycle_1d(*CASCADE, 2.3 / lam)
    np.testing.assert_allclose(np.sort(out["points"][1, 0, :2, 0]), np.sort(uv), atol=1e-9)
    for i, p in ((1, 2), (2, 4)):
        pts = out["points"][i, 0, :p]
        np.testing.assert_allclose([th.gd_step(q, np.array([1.5, 2.3, 2.75])[i] / lam, *CASCADE)[0] for q in pts],
                                   np.roll(pts[:, 0], -1), atol=1e-9)
        np.testing.assert_allclose(out["last"][i, 0], pts[-1], atol=1e-15)
    assert not out["diverged"].any()


def test_cycle_points_end_at_the_final_iterate_even_when_the_period_does_not_divide_max_period():
    w_star, lam = th.minimizer(*CASCADE)
    out = sim.attractors(*CASCADE, [2.3 / lam], [w_star[0] + 0.3], n_steps=5001, max_period=3, tol=1e-12)
    assert out["period"][0, 0] == 2
    np.testing.assert_array_equal(out["points"][0, 0, 1], out["last"][0, 0])
    np.testing.assert_allclose(th.gd_step(out["points"][0, 0, 0], 2.3 / lam, *CASCADE), out["points"][0, 0, 1],
                               atol=1e-12)


def test_period_is_judged_over_the_last_four_max_period_iterates_relative_to_their_scale():
    # slow oscillating approach (multiplier -0.9 at c = 1.9): successive differences shrink by 0.9 per step.
    # With max_period = 1 the window is the last 4 iterates; put tol between the newest and the oldest
    # difference of that window: a shorter window would call it a fixed point, the documented one must not.
    w_star, lam = th.minimizer(*CASCADE)
    eta, n = 1.9 / lam, 120
    tail = sim.gd(*CASCADE, [eta], [w_star[0] + 0.3], n, keep_last=4)["w"][0, 0, :, 0]
    diffs = np.abs(np.diff(tail))
    scale = 1 + np.max(np.abs(tail))
    tol = np.sqrt(diffs[0] * diffs[-1]) / scale
    assert diffs[-1] <= tol * scale < diffs[0]
    out = sim.attractors(*CASCADE, [eta], [w_star[0] + 0.3], n_steps=n, max_period=1, tol=tol)
    assert out["period"][0, 0] == sim.PERIOD_NONE
    # relative, not absolute: the same tail scaled far from the origin keeps its verdict at tol' = tol/scale
    loose = sim.attractors(*CASCADE, [eta], [w_star[0] + 0.3], n_steps=n, max_period=1, tol=1.01 * diffs[0] / scale)
    assert loose["period"][0, 0] == 1
    assert diffs[0] > 1.01 * diffs[0] / scale  # an absolute tolerance of the same value would reject it


def test_aperiodic_orbit_has_period_zero_and_stays_bounded():
    w_star, lam = th.minimizer(*CASCADE)
    out = sim.attractors(*CASCADE, [3.0 / lam], [w_star[0] + 0.3], n_steps=4000, max_period=16)
    assert out["period"][0, 0] == sim.PERIOD_NONE and not out["diverged"][0, 0]
    assert np.isnan(out["points"]).all()


def test_escape_on_separable_data_is_flagged_with_its_step():
    # z = 1, 2, 3 (all positive): separable along +w. From w0 = -3 the margins turn positive when w > 0.
    z, eta = [1.0, 2.0, 3.0], 0.5
    out = sim.attractors(z, None, [eta], [0.0, -3.0], n_steps=200, max_period=4)
    assert out["period"][0].tolist() == [sim.PERIOD_ESCAPED] * 2
    assert out["escaped"][0].all() and out["diverged"][0].all()
    # hand count: w_{t+1} = w_t + eta * mean(sigma(-z w_t) z) from -3; the first positive iterate
    w, t = -3.0, 0
    while w <= 0:
        w += eta * np.mean(th._sigmoid(-np.array(z) * w) * np.array(z))
        t += 1
    assert out["diverged_step"][0].tolist() == [1, t]  # from w0 = 0: margins are 0 (not > 0) at t = 0
    assert np.isnan(out["points"]).all()          # no cycle points for an escaped run
    # large margins: the increments die out (the tail looks like a fixed point), yet the run escaped
    stalled = sim.attractors([10.0, 20.0, 30.0], None, [eta], [-3.0], n_steps=2000, max_period=4)
    assert stalled["period"].tolist() == [[sim.PERIOD_ESCAPED]] and np.isnan(stalled["points"]).all()
    g = sim.gd(z, None, [eta], [0.0, -3.0], 200, keep_last=1)
    np.testing.assert_array_equal(g["diverged_step"], out["diverged_step"])
    assert (g["w"][0, :, 0, 0] > 0).all()
    # a start that already separates the data is flagged at step 0
    assert sim.gd(z, None, [eta], [0.5], 3)["diverged_step"].tolist() == [[0]]


def test_diverged_step_is_the_first_of_escape_and_overflow():
    # w0 = 1e-300 separates z = 10, 20 (step 0); the first update adds 1e308 * 0.5 * 15 and overflows (step 1)
    for out in (sim.gd([10.0, 20.0], None, [1e308], [1e-300], 3), gd_numpy([10.0, 20.0], None, [1e308], [1e-300], 3)):
        assert out["escaped"].tolist() == [[True]] and out["diverged_step"].tolist() == [[0]]
    att = sim.attractors([10.0, 20.0], None, [1e308], [1e-300], n_steps=8, max_period=2)
    assert att["period"].tolist() == [[sim.PERIOD_NONFINITE]]  # non-finite takes precedence over escaped


def test_nonfinite_iterates_are_flagged_minus_one_with_their_step():
    out = sim.attractors([1e3, -1e3], [0.3, 0.7], [1e-6, 1e306], [0.0], n_steps=200, max_period=4)
    assert out["period"][:, 0].tolist() == [1, sim.PERIOD_NONFINITE]
    assert out["diverged"][:, 0].tolist() == [False, True] and not out["escaped"].any()
    assert out["diverged_step"][:, 0].tolist() == [-1, 1]  # L'(0) = 200, so |w_1| = 2e308 overflows


def test_huge_step_on_non_separable_data_stays_bounded_and_is_not_flagged():
    # eta * lambda = 1e6: the orbit wanders but, as theory proves, never leaves |w| <= R + eta G
    w_star, lam = th.minimizer(*ASYM)
    eta = 1e6 / lam
    g = sim.gd(*ASYM, [eta], [0.0, 5.0], 4000)
    assert not g["diverged"].any() and not g["escaped"].any()
    for k, w0 in enumerate([0.0, 5.0]):
        bound = th.orbit_bound_1d(*ASYM, eta, w0)
        assert np.max(np.abs(g["w"][0, k])) <= bound
        assert np.max(np.abs(g["w"][0, k])) > 0.5 * bound  # the bound is not vacuous: the orbit reaches it
    att = sim.attractors(*ASYM, [eta], [0.0], n_steps=4000)
    assert att["period"][0, 0] >= 0 and not att["diverged"][0, 0]


@pytest.mark.parametrize("eta", [0.5, 5.0, 50.0])
def test_orbit_bound_holds_for_every_step_and_matches_its_formula(eta):
    # z = +-1, weights 0.3/0.7: L'(+inf) = 0.7, -L'(-inf) = 0.3, |w*| = log(7/3)
    w_star = np.log(0.7 / 0.3)
    for w0 in (0.0, 3.0):
        bound = th.orbit_bound_1d(*ASYM, eta, w0)
        assert bound == pytest.approx(max(w0, w_star) + 0.7 * eta, rel=1e-14)
        orbit = sim.gd(*ASYM, [eta], [w0], 500)["w"][0, 0, :, 0]
        assert np.max(np.abs(orbit)) <= bound


def test_cycle_jacobian_at_a_fixed_point_is_one_minus_eta_hessian():
    w_star, lam = th.minimizer(Z2, A2)
    eta = 1.7 / lam
    J1 = sim.cycle_jacobian(Z2, A2, eta, w_star, 1)
    np.testing.assert_allclose(J1, np.eye(2) - eta * th.hessian(w_star, Z2, A2), atol=1e-13)
    np.testing.assert_allclose(sim.cycle_jacobian(Z2, A2, eta, w_star, 3), np.linalg.matrix_power(J1, 3), atol=1e-12)
    assert np.linalg.eigvalsh(J1)[0] == pytest.approx(1 - 1.7, abs=1e-13)


# ------------------------------------------------------------------------------------------------
# experiments: cache keys follow the code
# ------------------------------------------------------------------------------------------------
def _copy_sources(root):
    import shutil
    from pathlib import Path

    src = Path(__file__).resolve().parent.parent
    for package in ("theory", "sims", "paper_checks"):
        shutil.copytree(src / package, root / package, ignore=shutil.ignore_patterns("__pycache__"))
    return root


@pytest.fixture
def source_copy(tmp_path, monkeypatch):
    """A copy of the sources that sims.cache hashes; code versions are computed from the copy."""
    import sims.cache as cache

    root = _copy_sources(tmp_path / "repo")
    monkeypatch.setattr(cache, "_ROOT", root)
    cache.code_version.cache_clear()
    cache.topic_names.cache_clear()
    yield root
    cache.code_version.cache_clear()
    cache.topic_names.cache_clear()


def _edit(path, old, new):
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))


def test_editing_an_experiment_range_changes_the_key_and_editing_sde_does_not(source_copy):
    import sims.cache as cache

    before = cache.code_version("logistic")
    _edit(source_copy / "sims" / "sde" / "algorithms.py", '"""', '"""An edit elsewhere. ')
    cache.code_version.cache_clear()
    assert cache.code_version("logistic") == before          # another topic's simulator: same key
    _edit(source_copy / "paper_checks" / "logistic" / "experiments.py", "cs = np.linspace(0.8, 2.8, n)",
          "cs = np.linspace(0.8, 3.0, n)")
    cache.code_version.cache_clear()
    assert cache.code_version("logistic") != before          # the basin experiment's range: new key


def test_an_edited_experiment_is_recomputed(source_copy, tmp_path, monkeypatch):
    import paper_checks.logistic.experiments as pc
    import sims.cache as cache

    monkeypatch.setenv("STEPLAB_RESULTS", str(tmp_path / "results"))
    calls = []
    original = pc.cobweb.fn

    def counting(budget, **config):
        calls.append(1)
        return original(budget, **config)

    monkeypatch.setattr(pc.cobweb, "fn", counting)
    first = pc.cobweb("quick")
    pc.cobweb("quick")
    assert len(calls) == 1                                   # cached
    _edit(source_copy / "paper_checks" / "logistic" / "experiments.py", "start = 0.05", "start = 0.06")
    cache.code_version.cache_clear()
    again = pc.cobweb("quick")
    assert len(calls) == 2                                   # the edit invalidated the entry
    np.testing.assert_array_equal(first["trajectory"], again["trajectory"])  # (the running code is unchanged)


# ------------------------------------------------------------------------------------------------
# balanced data, the cascade, exhaustive cycle search, two-point datasets, the rod flow
# ------------------------------------------------------------------------------------------------
def test_balanced_cycle_amplitude_solves_its_equation_and_matches_one_gd_step():
    for c in (2.001, 2.3, 3.0, 7.5):
        a = th.balanced_cycle_amplitude(c)
        assert abs(a / np.tanh(a / 2) - c) < 1e-13 * c
        # T(a) = -a for z = +-1, weights 1/2 (lambda = 1/4, eta = 4c)
        assert abs(th.gd_step(a, 4 * c, [1.0, -1.0], [0.5, 0.5])[0] + a) < 1e-12
        m = th.balanced_cycle_multiplier(c)
        assert 0 < m < 1 and abs(m - (1 - 4 * c * th.hessian(a, [1.0, -1.0], [0.5, 0.5])[0, 0]) ** 2) < 1e-12
    # normal form near c = 2: a ~ sqrt(6 (c - 2))
    assert abs(th.balanced_cycle_amplitude(2 + 1e-6) / np.sqrt(6e-6) - 1) < 1e-5
    for bad in (2.0, 1.5, np.nan, "3"):
        with pytest.raises((ValueError, TypeError), match="c"):
            th.balanced_cycle_amplitude(bad)


def test_doubling_points_of_the_cascade_data_and_feigenbaum_ratios():
    c = th.doubling_points(*CASCADE, 5)
    # c_2..c_4 to the digits stated in the claims; c_1 = 2 exactly
    np.testing.assert_allclose(c[:4], [2.0, 2.6351716, 2.8143853, 2.853017], atol=6e-7)
    assert abs(c[1] - th.period_doubling_step(*CASCADE)) < 1e-12
    r = th.feigenbaum_ratios(c)
    assert r.shape == (3,) and abs(r[-1] - th.FEIGENBAUM_DELTA) < 0.05
    with pytest.raises(ValueError, match="points"):
        th.feigenbaum_ratios([2.0, 2.5])
    with pytest.raises(ValueError, match="points"):
        th.feigenbaum_ratios([2.0, 2.5, 2.4])
    with pytest.raises(ValueError, match="count"):
        th.doubling_points(*CASCADE, 0)
    with pytest.raises(ValueError, match="z"):
        th.doubling_points(Z2, A2, 3)


def test_cycles_1d_finds_the_bump_plus_spike_cycle_and_nothing_on_equal_magnitudes():
    d = th.cycle_dataset(1.5)
    cyc = th.cycles_1d(d["z"], d["weights"], d["eta"], 2)
    stable = cyc[np.abs(cyc[:, -1]) < 1]
    uv, m = th.solve_two_cycle(d["z"], d["weights"], d["eta"], [d["u"], d["v"]])
    np.testing.assert_allclose(stable[0, :2], np.sort(uv), atol=1e-12)
    assert abs(stable[0, 2] - m) < 1e-9
    # equal magnitudes (z = +-1, any weights) have no 2- or 3-cycle below c = 2
    for p in (0.5, 0.9, 0.999):
        lam = th.minimizer([1.0, -1.0], [p, 1 - p])[1]
        for period in (2, 3):
            assert th.cycles_1d([1.0, -1.0], [p, 1 - p], 1.98 / lam, period, n_grid=2001).shape == (0, period + 1)
    with pytest.raises(ValueError, match="period"):
        th.cycles_1d(d["z"], d["weights"], d["eta"], 1)


def test_two_point_dataset_places_the_minimizer_and_has_a_stable_three_cycle():
    z, a = th.two_point_dataset(250.0, -9.0)
    w_star, lam = th.minimizer(z, a)
    assert abs(w_star[0] * 250.0 + 9.0) < 1e-9
    cyc = th.cycles_1d(z, a, 1.5 / lam, 3)
    stable = cyc[np.abs(cyc[:, -1]) < 1]
    assert len(stable) == 1
    # the orbit closes after three exact GD steps
    u = stable[0, 0]
    assert abs(th.gd_step(th.gd_step(th.gd_step(u, 1.5 / lam, z, a), 1.5 / lam, z, a), 1.5 / lam, z, a)[0] - u) < 1e-10
    with pytest.raises(ValueError, match="s"):
        th.two_point_dataset(0.5, -1.0)


def test_rod_flow_matches_scipy_and_stops_on_the_two_cycle():
    from scipy.integrate import solve_ivp

    z, a = np.array([1.0, -1.0]), np.array([0.75, 0.25])
    eta, w0 = 2.3 / th.minimizer(z, a)[1], 0.4
    ts = np.linspace(0.0, 6.0, 41)   # 41 saves of a 6-point dataset: the program the eos cross-link compiles
    out = sim.rod_flow(np.r_[z, [1.0] * 4], np.r_[a, [0.0] * 4], [eta], [w0], ts)
    g = lambda w: th.grad(w, z, a)[0]  # noqa: E731

    def field(t, y):
        c, r = y
        return [-0.5 * eta * (g(c + r) + g(c - r)), 0.5 * eta * (g(c + r) - g(c - r)) - 2 * r]

    w1 = w0 - eta * g(w0)
    ref = solve_ivp(field, (0, ts[-1]), [(w0 + w1) / 2, (w0 - w1) / 2], t_eval=ts, rtol=1e-11, atol=1e-13, method="DOP853")
    # both integrators hold ~1e-10 relative error per unit time over t <= 6
    np.testing.assert_allclose(out["center"][0, 0, :, 0], ref.y[0], rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(out["r"][0, 0, :, 0], ref.y[1], rtol=1e-7, atol=1e-9)
    assert not out["diverged"][0, 0] and out["diverged_step"][0, 0] == -1


def test_grids_are_padded_to_power_of_two_buckets():
    assert [sim._bucket(n, 4096) for n in (1, 8, 9, 100, 5000)] == [8, 8, 16, 128, 4096]
    assert sim._bucket(100, 50) == 50


def test_an_edit_to_theory_logistic_redraws_only_the_topics_that_use_it(source_copy):
    """The figures' drawing key is per topic: an edit to theory/logistic.py changes the key of logistic and of the
    topics whose claims, experiments or figure scripts use it, and no other; a shared source changes every key."""
    import figures.__main__ as fm
    import sims.cache as cache

    names = fm.topic_modules()
    before = {n: fm.drawing_key("full", n) for n in names}
    _edit(source_copy / "theory" / "logistic.py", '"""', '"""An edit. ')
    cache.code_version.cache_clear()
    changed = {n for n in names if fm.drawing_key("full", n) != before[n]}
    users = {n for n in names if "logistic" in fm.drawing_scope(n)}
    assert "logistic" in changed and changed == users and len(changed) < len(names)
    _edit(source_copy / "theory" / "validate.py", '"""', '"""A shared edit. ')
    cache.code_version.cache_clear()
    assert all(fm.drawing_key("full", n) != before[n] for n in names)


# ----------------------------------------------------------------------------- the 1-D certificate (no 2-cycle)
def test_curvature_range_encloses_sampled_curvatures():
    from theory.logistic import _curvature_range
    rng = np.random.default_rng(12)
    zz, a = np.array([1.0, -1.0, 300.0, -0.2]), np.array([0.4, 0.3, 0.01, 0.29])
    lo = rng.uniform(-0.05, 0.05, 200)
    hi = lo + rng.uniform(1e-6, 0.05, 200)
    c_min, c_max = _curvature_range(lo, hi, zz, a)
    t = lo[:, None] + (hi - lo)[:, None] * np.linspace(0, 1, 101)[None, :]
    curv = np.array([[th.hessian(v, zz, a)[0, 0] for v in row] for row in t[:20]])
    assert np.all(curv >= c_min[:20, None] * (1 - 1e-12)) and np.all(curv <= c_max[:20, None] * (1 + 1e-12))


def test_certificate_agrees_with_the_sign_scan_on_balanced_data():
    # balanced z = +-1: no 2-cycle below c = 2, one (symmetric) 2-cycle above, at +-a with a / tanh(a/2) = c
    z, a = [1.0, -1.0], [0.5, 0.5]
    assert th.certify_no_two_cycle_1d(z, a, 1.9 / 0.25)["certified"]
    out = th.certify_no_two_cycle_1d(z, a, 2.5 / 0.25)
    assert not out["certified"] and out["cycle_points"].size == 2
    amp = th.balanced_cycle_amplitude(2.5)
    np.testing.assert_allclose(np.sort(out["cycle_points"]), [-amp, amp], rtol=1e-9)
