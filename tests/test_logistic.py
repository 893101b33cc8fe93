import jax
import jax.numpy as jnp
import numpy as np
import pytest
import sympy as sp

import sims.logistic as sim
import theory.logistic as th

Z2 = np.array([[1.0, 0.3], [-0.5, 1.2], [0.7, -1.1], [-1.3, -0.2], [2.0, 0.5]])
A2 = np.array([0.1, 0.3, 0.2, 0.25, 0.15])


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


def test_sympy_gradient_and_hessian_match_autodiff_and_closed_form():
    expr, ws = th.loss_expr(Z2, A2)
    g_sym = sp.lambdify(ws, [sp.diff(expr, w) for w in ws])
    H_sym = sp.lambdify(ws, sp.hessian(expr, ws))
    g_fn, H_fn, grad_fn = jax.jit(jax.grad(sim.loss)), jax.jit(jax.hessian(sim.loss)), jax.jit(sim.grad)
    rng = np.random.default_rng(0)
    for _ in range(4):
        w = rng.normal(size=2) * 2
        wj = jnp.asarray(w)
        g_ad = g_fn(wj, jnp.asarray(Z2), jnp.asarray(A2))
        H_ad = H_fn(wj, jnp.asarray(Z2), jnp.asarray(A2))
        # float64 round-off on O(1) quantities
        np.testing.assert_allclose(g_ad, g_sym(*w), rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(H_ad, np.array(H_sym(*w), dtype=float), rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(grad_fn(wj, jnp.asarray(Z2), jnp.asarray(A2)), g_ad, rtol=1e-13, atol=1e-15)
        np.testing.assert_allclose(th.hessian(w, Z2, A2), H_ad, rtol=1e-12, atol=1e-14)


def test_gd_map_expr_matches_one_simulated_step():
    expr, ws = th.loss_expr(Z2, A2)
    T = sp.lambdify(ws, th.gd_map_expr(expr, ws, sp.Float(0.7)))
    w0 = np.array([0.4, -0.9])
    step = sim.gd(Z2, A2, [0.7], w0[None], 1)[0, 0, 0]
    np.testing.assert_allclose(step, np.array(T(*w0), dtype=float).ravel(), rtol=1e-13)


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


def test_piecewise_linear_cycle_solves_its_equations():
    pl = th.piecewise_linear_cycle()
    ws, J, c = sp.symbols("w_star J c", real=True)
    lam = th.lam
    u, v = pl["u"], pl["v"]
    g_left = lam * (u - ws)
    g_right = lam * (v - ws) + J
    assert sp.simplify(v - (u - c / lam * g_left)) == 0
    assert sp.simplify(u - (v - c / lam * g_right)) == 0
    assert sp.simplify(pl["multiplier"] - (c - 1) ** 2) == 0


def test_minimizer_is_stationary_and_lambda_matches_autodiff():
    w, lam = th.minimizer(Z2, A2)
    assert np.max(np.abs(th.grad(w, Z2, A2))) < 1e-15  # Newton-polished to round-off
    H = jax.hessian(sim.loss)(jnp.asarray(w), jnp.asarray(Z2), jnp.asarray(A2))
    assert abs(np.linalg.eigvalsh(np.asarray(H))[-1] - lam) < 1e-14


@pytest.mark.parametrize("z, weights, match", [
    ([1.0, 2.0, 3.0], None, "separable"),
    ([[1.0, 0.0], [2.0, 0.0], [-1.0, 0.0]], None, "spans only 1 of 2"),
    ([1.0, np.nan], None, "non-finite"),
    ([1.0, -1.0], [0.5, -0.5], "non-negative"),
    ([1.0, -1.0], [0.5, 0.2, 0.3], "shape"),
    ([1.0, -1.0], [0.0, 0.0], "all weights are zero"),
    ([], None, "non-empty"),
])
def test_minimizer_rejects_bad_data(z, weights, match):
    with pytest.raises(ValueError, match=match):
        th.minimizer(z, weights)


def test_minimizer_type_error():
    with pytest.raises(TypeError, match="z"):
        th.minimizer(object())


@pytest.mark.parametrize("c", [0.9, 1.0, 2.0, 2.5])
def test_cycle_dataset_rejects_c_outside_1_2(c):
    with pytest.raises(ValueError, match=r"c: .*\(1, 2\)"):
        th.cycle_dataset(c)


def test_cycle_dataset_has_the_requested_c_and_minimizer():
    d = th.cycle_dataset(1.3)
    w, lam = th.minimizer(d["z"], d["weights"])
    assert abs(d["step"] * lam - 1.3) < 1e-12
    target = -0.5 * d["J"] * 0.3 / (lam * 0.7)
    assert abs(w[0] - target) < 1e-6 * abs(target)  # fixed-point construction of p, to round-off of lambda


def test_shipped_witness_equals_a_fresh_construction():
    shipped = th.witness_2d()
    fresh = th.construct_witness_2d(c=shipped["c"], theta_deg=shipped["theta_deg"], J=shipped["J"],
                                    K=shipped["K"], offset=shipped["offset"])
    np.testing.assert_allclose(shipped["z"], fresh["z"], rtol=1e-15)
    np.testing.assert_allclose(shipped["weights"], fresh["weights"], rtol=1e-14)
    np.testing.assert_allclose(shipped["cycle_point"], fresh["cycle_point"], rtol=1e-10, atol=1e-12)
    assert "note" in shipped and shipped["step"] * th.minimizer(shipped["z"], shipped["weights"])[1] < 1


def test_jax_gd_matches_numpy_reference_and_loop_and_eager():
    steps, inits = np.array([1.0, 5.0, 9.0]), np.array([[0.5, -0.5], [2.0, 1.0]])
    jx = sim.gd(Z2, A2, steps, inits, 60, keep_last=5)
    npy = sim.gd_numpy(Z2, A2, steps, inits, 60, keep_last=5)
    np.testing.assert_allclose(jx, npy, rtol=1e-11, atol=1e-13)  # same float64 recursion, 60 steps of round-off
    for i, s in enumerate(steps):
        for k, w0 in enumerate(inits):
            one = sim.gd(Z2, A2, [s], w0[None], 60, keep_last=5)[0, 0]
            np.testing.assert_allclose(jx[i, k], one, rtol=1e-13, atol=1e-15)
    with jax.disable_jit():
        eager = sim._run(jnp.asarray(Z2), jnp.asarray(A2), 5.0, jnp.asarray(inits[1]), 60, 5)
    np.testing.assert_allclose(jx[1, 1], eager, rtol=1e-12, atol=1e-14)


def test_attractor_classification_including_divergence():
    # z = +-1e3 with an absurd step overflows to inf: classified -1, the sweep does not crash
    out = sim.attractors([1e3, -1e3], [0.3, 0.7], [1e-6, 1e306], [0.0], n_steps=200, max_period=4)
    assert out["period"][:, 0].tolist() == [1, -1]
    w, lam = th.minimizer([1.0, -1.0], [0.3, 0.7])
    out = sim.attractors([1.0, -1.0], [0.3, 0.7], np.array([1.5, 2.25]) / lam, [0.0], n_steps=4000, max_period=4)
    assert out["period"][:, 0].tolist() == [1, 2]
    np.testing.assert_allclose(out["points"][0, 0, 0], w, atol=1e-12)
    assert np.isnan(out["points"][0, 0, 1:]).all()


@pytest.mark.parametrize("kwargs, exc, match", [
    (dict(step_sizes=[0.0]), ValueError, "step_sizes"),
    (dict(step_sizes=[np.inf]), ValueError, "step_sizes"),
    (dict(inits=np.zeros((2, 3))), ValueError, "inits"),
    (dict(inits=[np.nan, 0.0]), ValueError, "inits"),
    (dict(n_steps=0), ValueError, "n_steps"),
])
def test_gd_rejects_bad_arguments(kwargs, exc, match):
    args = dict(z=Z2, weights=A2, step_sizes=[1.0], inits=np.zeros((1, 2)), n_steps=10) | kwargs
    with pytest.raises(exc, match=match):
        sim.gd(**args)


def test_attractors_reject_bad_arguments():
    with pytest.raises(ValueError, match="max_period"):
        sim.attractors(Z2, A2, [1.0], np.zeros((1, 2)), max_period=0)
    with pytest.raises(ValueError, match="tol"):
        sim.attractors(Z2, A2, [1.0], np.zeros((1, 2)), tol=-1.0)
    with pytest.raises(ValueError, match="keep_last"):
        sim.gd(Z2, A2, [1.0], np.zeros((1, 2)), 10, keep_last=11)
