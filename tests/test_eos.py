"""Unit tests of the edge-of-stability topic: sympy closed forms, simulators against references, bad input.

Simulator calls reuse the static configurations of tests/contract_eos.py and the quick experiments, so
this file compiles (almost) nothing of its own.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import sympy as sp

import sims.eos as sim
import sims.eos_relu as relu_sim
import theory.eos as th
from paper_checks import fit_slope
from sims.reference import eos as ref
from tests.contract_eos import _MLP, _TRACK, _catapult, _mlp, _poly_gd, _track

a_, b_, e_, m_, ys_ = th.a_, th.beta_, th.eta_, th.mu_, th.ys_


# ------------------------------------------------------------------------------------------- theory

def test_cycle_equations_are_the_momentum_thresholds():
    expected = {"gd": (2 / e_ - a_, b_ / ys_),
                "heavy_ball": (2 * (1 + m_) / e_ - a_, b_ / ys_),
                "nesterov": (2 * (1 + m_) / ((1 + 2 * m_) * e_) - a_, b_ / ((1 + 2 * m_) ** 2 * ys_))}
    for method, (y2, r2) in expected.items():
        got_y2, got_r2 = th.selfstab_cycle_equations(method)
        assert sp.simplify(got_y2 - y2) == 0, method
        assert sp.simplify(got_r2 - r2) == 0, method
        # the sharpness along x on the cycle, a + y*^2, is the method's critical sharpness
        z = sp.Symbol("z")
        crit = sp.solve(th.momentum_characteristic_polynomial(method).subs(z, -1), sp.Symbol("lambda"))[0]
        assert sp.simplify(a_ + got_y2 - crit) == 0, method


def test_equilibrium_numbers_and_errors():
    ys, s2 = th.selfstab_equilibrium(1.0, 0.1, 0.5)  # y* = sqrt(3), |r*| = sqrt(0.1/sqrt(3))
    assert ys == pytest.approx(1.7320508075688772, rel=1e-15)
    assert np.sqrt(s2) == pytest.approx(0.24028114141347542, rel=1e-14)
    ys, s2 = th.selfstab_equilibrium(1.0, 0.1, 0.5, 0.5)
    assert ys == pytest.approx(np.sqrt(6 - 1), rel=1e-14) and s2 == pytest.approx(0.1 / np.sqrt(5), rel=1e-14)
    ys, s2 = th.selfstab_equilibrium(1.0, 0.1, 0.5, 0.5, nesterov=True)
    assert ys == pytest.approx(np.sqrt(3 / 1 - 1), rel=1e-14) and s2 == pytest.approx(0.1 / np.sqrt(2) / 4, rel=1e-14)
    with pytest.raises(ValueError, match="a, eta: no equilibrium"):
        th.selfstab_equilibrium(4.0, 0.1, 0.5)  # eta a = 2: S >= a = 2/eta everywhere
    for kwargs, name in (({"eta": 0.0}, "eta"), ({"eta": np.nan}, "eta"), ({"beta": -1.0}, "beta"),
                         ({"a": True}, "a"), ({"momentum": 1.0}, "momentum")):
        args = {"a": 1.0, "beta": 0.1, "eta": 0.5, **kwargs}
        with pytest.raises((ValueError, TypeError), match=name):
            th.selfstab_equilibrium(args["a"], args["beta"], args["eta"], args.get("momentum", 0.0))
    with pytest.raises(TypeError, match="nesterov"):
        th.selfstab_equilibrium(1.0, 0.1, 0.5, 0.3, nesterov=1)


def test_central_flow_loss_is_the_cycle_average():
    ys = sp.sqrt(2 / e_ - a_)
    sigma2 = b_ / ys
    cycle = sp.Rational(1, 2) * (a_ + ys ** 2) * sigma2 - b_ * ys
    assert sp.simplify(cycle - (-b_ * ys + sigma2 / e_)) == 0
    for a in (3.5, 3.8, 3.95):
        assert th.selfstab_cycle_loss(a, 0.1, 0.5) == pytest.approx(th.selfstab_central_flow_loss(a, 0.1, 0.5), rel=1e-13)


def test_cycle_jacobian_matches_autodiff_and_modulus_formula():
    for a, beta, eta in ((3.6, 0.1, 0.5), (1.85, 0.05, 1.0), (3.4, 0.2, 0.5)):
        ys, s2 = th.selfstab_equilibrium(a, beta, eta)
        C = jnp.asarray(th.selfstab_coefficients(a, beta))
        step = lambda w: w - eta * sim.poly_grad(w, C)  # noqa: E731
        J = jax.jacobian(lambda w: step(step(w)))(jnp.array([np.sqrt(s2), ys]))
        np.testing.assert_allclose(th.selfstab_cycle_jacobian(a, beta, eta), J, rtol=1e-12, atol=1e-13)
        mult = th.selfstab_cycle_multipliers(a, beta, eta)
        assert np.all(mult.imag != 0)
        np.testing.assert_allclose(np.abs(mult), 1 - eta * beta / ys + 4 * eta ** 2 * beta * ys, rtol=1e-12)


def test_window_edges():
    assert th._ns_edge_eta_a() == sp.Rational(7, 4)
    win = th.selfstab_window(0.1, 0.5)
    assert win["lower"] == pytest.approx(1.75, abs=1e-12) and win["lower_kind"] == "neimark_sacker"
    assert win["upper_kind"] == "fold" and 1.9996 < win["upper"] < 1.9998 and win["diverge"] == 2.0
    radius = lambda ea: np.max(np.abs(th.selfstab_cycle_multipliers(ea / 0.5, 0.1, 0.5)))  # noqa: E731
    assert all(radius(ea) < 1 for ea in np.linspace(1.7501, win["upper"] - 1e-6, 40))
    assert radius(1.7499) > 1 and radius(win["upper"] + 2e-6) > 1
    # at the fold one multiplier is +1
    assert np.min(np.abs(th.selfstab_cycle_multipliers(win["upper"] / 0.5, 0.1, 0.5) - 1)) < 1e-6
    assert th.selfstab_window(1.0, 0.5)["upper"] == pytest.approx(1.9721359549995794, rel=1e-12)
    with pytest.raises(ValueError, match="beta"):
        th.selfstab_window(-0.1, 0.5)


def test_averaged_dynamics_jacobian_and_eigenvalues():
    """The averaged self-stabilization dynamics: the sympy Jacobian against the hand derivation, its eigenvalues against
    the roots of lambda^2 + (eta beta/y*) lambda + 4 eta^2 beta y*, and their rate against GD's exact two-step one."""
    J = th.selfstab_averaged_jacobian()
    # hand: d/dp 2 eta (y^2 - y*^2) = 0, d/dy = 4 eta y*; d/dp eta(beta - y e^p) = -eta y* (beta/y*), d/dy = -eta beta/y*
    assert sp.simplify(J - sp.Matrix([[0, 4 * e_ * ys_], [-b_ * e_, -b_ * e_ / ys_]])) == sp.zeros(2, 2)
    for a, beta, eta in ((3.8, 0.1, 0.5), (1.85, 0.05, 1.0)):
        ys, _ = th.selfstab_equilibrium(a, beta, eta)
        lam = np.sort_complex(th.selfstab_averaged_eigenvalues(a, beta, eta))
        np.testing.assert_allclose(lam, np.sort_complex(np.roots([1.0, eta * beta / ys, 4 * eta ** 2 * beta * ys])),
                                   rtol=1e-12)
        # GD's exact rate per step, ln|mu|/2, keeps the eta^2 term the averaging drops: here tens of per cent apart
        exact = np.log(np.abs(th.selfstab_cycle_multipliers(a, beta, eta)[0])) / 2
        assert abs(exact / lam[0].real - 1) > 0.2
    with pytest.raises(ValueError, match="a, eta: no equilibrium"):
        th.selfstab_averaged_eigenvalues(4.0, 0.1, 0.5)


def test_central_flow_mean_loss_is_the_two_cycle_average():
    """At the toy's 2-cycle (S = 2/eta at the centre, x = +-r): L(0, y*) + sigma^2 S/2 equals the loss averaged over
    the cycle's two iterates (theory.eos.selfstab_cycle_loss, a separate formula), on the quadratic direction x exactly."""
    for a in (3.5, 3.8, 3.95):
        ys, s2 = th.selfstab_equilibrium(a, 0.1, 0.5)
        got = th.central_flow_mean_loss(-0.1 * ys, s2 * (a + ys * ys))
        assert float(got) == pytest.approx(th.selfstab_cycle_loss(a, 0.1, 0.5), rel=1e-13)
    np.testing.assert_allclose(th.central_flow_mean_loss([1.0, 2.0], [0.5, 0.0]), [1.25, 2.0], rtol=1e-15)
    with pytest.raises(ValueError, match="sigma2_sharpness"):
        th.central_flow_mean_loss([1.0, 2.0], [0.5])
    with pytest.raises(ValueError, match="sigma2_sharpness"):
        th.central_flow_mean_loss(1.0, -0.1)


def test_rod_flow_fixed_point_is_the_gd_cycle():
    for got, want in zip(th.rod_flow_fixed_point_equations(), th.selfstab_cycle_equations("gd")):
        assert sp.simplify(got - want) == 0


@pytest.mark.parametrize("momentum", [0.0, 0.3, 0.9])
@pytest.mark.parametrize("nesterov", [False, True])
def test_critical_sharpness_is_where_the_quadratic_loses_stability(momentum, nesterov):
    eta = 0.37
    crit = th.critical_sharpness(eta, momentum, nesterov=nesterov)
    want = 2 * (1 + momentum) / ((1 + 2 * momentum) if nesterov else 1) / eta
    assert crit == pytest.approx(want, rel=1e-14)
    method = "gd" if momentum == 0 else ("nesterov" if nesterov else "heavy_ball")
    z, lam = sp.symbols("z lambda")
    poly = th.momentum_characteristic_polynomial(method).subs({th.eta_: eta, th.mu_: momentum})
    radius = lambda value: max(abs(complex(r)) for r in sp.Poly(poly.subs(lam, value), z).nroots())  # noqa: E731
    assert all(radius(f * crit) < 1 for f in (0.05, 0.5, 0.9, 0.999))  # z = -1 is the first root to leave
    assert radius(1.001 * crit) > 1
    with pytest.raises(ValueError, match="momentum"):
        th.critical_sharpness(eta, 1.0)


def test_catapult_map_matches_a_gd_step():
    f_new, lam_new = th.catapult_map()
    f, lam, m = sp.symbols("f lambda m", real=True)
    fn = sp.lambdify((f, lam, th.eta_, m), [f_new, lam_new])
    rng = np.random.default_rng(0)
    for width in (3, 50):
        u, v = rng.normal(size=width), rng.normal(size=width)
        eta = 0.7
        f0, lam0 = u @ v / np.sqrt(width), (u @ u + v @ v) / width
        u1, v1 = u - eta * f0 * v / np.sqrt(width), v - eta * f0 * u / np.sqrt(width)
        np.testing.assert_allclose(fn(f0, lam0, eta, width), [u1 @ v1 / np.sqrt(width), (u1 @ u1 + v1 @ v1) / width],
                                   rtol=1e-12)
    # the curvature moves by (eta f^2 / m)(eta lambda - 4): the 4 of the catapult's divergence edge
    assert sp.simplify(lam_new - lam - th.eta_ * f ** 2 / m * (th.eta_ * lam - 4)) == 0
    assert [th.catapult_phase(c) for c in (1.9, 2.0, 2.1, 3.9, 4.0, 4.1)] == \
        ["lazy", "boundary", "catapult", "catapult", "boundary", "divergent"]
    with pytest.raises(ValueError, match="eta_lambda0"):
        th.catapult_phase(-1.0)


def test_uv_closed_forms():
    assert th.uv_conserved_quantity() == 0
    for u, v in ((1.5, 0.0), (4.0, 0.05), (-0.3, 2.0)):
        H = np.array([[v * v, 2 * u * v - 1], [2 * u * v - 1, u * u]])
        assert th.uv_sharpness(u, v) == pytest.approx(np.linalg.eigvalsh(H)[-1], rel=1e-13)
    assert th.uv_gradient_flow_limit_sharpness(1.5, 0.0) == pytest.approx(np.sqrt(2.25 ** 2 + 4), rel=1e-15)
    with pytest.raises(ValueError, match="u0"):
        th.uv_gradient_flow_limit_sharpness(1.0, -1.0)  # u0^2 = v0^2 and u0 v0 < 0: the saddle


def test_coefficients_match_the_sympy_losses():
    assert sp.simplify(th.poly_expr(th.selfstab_coefficients(3, 0.25)) - th.selfstab_loss_expr().subs(
        {th.a_: 3, th.beta_: sp.Rational(1, 4)})) == 0
    assert sp.simplify(th.poly_expr(th.uv_coefficients()) - sp.Rational(1, 2) * (th.x * th.y - 1) ** 2) == 0
    with pytest.raises(ValueError, match="a"):
        th.selfstab_coefficients(0.0, 0.1)


# ------------------------------------------------------------------------------------------- simulators

def _autodiff_sharpness(p, C):
    return jnp.linalg.eigvalsh(jax.hessian(sim.poly_loss)(p, C))[-1]


@jax.jit
def _explicit_and_autodiff(w, C):
    """(explicit gradient, S, grad S) of sims.eos and the same three by autodiff through eigvalsh, one program."""
    g, S, gS = sim._sharpness_and_gradient(w, C)
    return (sim.poly_loss(w, C), g, S, gS, jax.grad(sim.poly_loss)(w, C), _autodiff_sharpness(w, C),
            jax.grad(_autodiff_sharpness)(w, C))


def test_poly_derivatives_match_autodiff_sympy_and_numpy():
    rng = np.random.default_rng(1)
    for _ in range(3):
        C = rng.normal(size=(3, 3))
        w = rng.normal(size=2)
        L, g, S, gS, g_ad, S_ad, gS_ad = _explicit_and_autodiff(jnp.asarray(w), jnp.asarray(C))
        assert float(L) == pytest.approx(float(th.poly_expr(C).subs({th.x: w[0], th.y: w[1]})), rel=1e-12)
        np.testing.assert_allclose(g, g_ad, rtol=1e-13, atol=1e-14)
        assert float(S) == pytest.approx(float(S_ad), rel=1e-12)
        assert float(S) == pytest.approx(float(ref.poly_sharpness_numpy(w, C)), rel=1e-12)
        np.testing.assert_allclose(gS, gS_ad, rtol=1e-9, atol=1e-11)
        np.testing.assert_allclose(ref.poly_grad_numpy(w, C), g, rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("momentum, nesterov", [(0.0, False), (0.4, False), (0.4, True)])
def test_poly_gd_matches_numpy_reference(momentum, nesterov):
    coef = np.stack([th.selfstab_coefficients(a, 0.1) for a in (3.6, 3.8)])
    kw = dict(n_steps=20, n_blocks=10, momentum=momentum, nesterov=nesterov)
    jx = _poly_gd(coef=coef, eta=0.5, w0=(0.1, 0.05), **kw)
    npy = ref.poly_gd_numpy(coef, 0.5, (0.1, 0.05), **kw)
    for k in ("block_mean", "block_end", "final", "gap2"):
        np.testing.assert_allclose(jx[k], npy[k], rtol=1e-12, atol=1e-14, err_msg=k)
    # divergence: same step, statistics NaN from the diverging block on, the last finite iterate kept
    bad = th.selfstab_coefficients(5.0, 0.1)
    jx, npy = _poly_gd(coef=bad, eta=(0.5, 0.6), w0=(0.1, 0.0)), ref.poly_gd_numpy(bad, (0.5, 0.6), (0.1, 0.0), n_steps=20,
                                                                                    n_blocks=10)
    assert jx["diverged"].all()
    np.testing.assert_array_equal(jx["diverged_step"], npy["diverged_step"])
    assert np.all(np.isfinite(jx["final"]))
    blk = jx["diverged_step"] // 2
    assert all(np.isnan(jx["block_mean"][i, b:]).all() and np.isfinite(jx["block_mean"][i, :b]).all()
               for i, b in enumerate(blk))


def test_poly_gd_lands_on_the_exact_two_cycle():
    a, beta, eta = 3.8, 0.1, 0.5
    ys, s2 = th.selfstab_equilibrium(a, beta, eta)
    out = sim.poly_gd(th.selfstab_coefficients(a, beta), eta, (0.1, 0.0), n_steps=800, n_blocks=400)
    tail = out["block_mean"][0, -1]
    np.testing.assert_allclose(tail[1:4], [ys, s2, th.selfstab_cycle_loss(a, beta, eta)], rtol=1e-9)
    assert tail[4] > 2 / eta  # the iterates' sharpness exceeds the centre's 2/eta by O(r^2)
    assert out["gap2"][0] < 1e-12 and np.linalg.norm(out["block_end"][0, -1] - out["block_end"][0, -2]) < 1e-12


@pytest.mark.parametrize("flow", sim.FLOWS)
def test_poly_flow_matches_scipy(flow):
    C = th.selfstab_coefficients(3.8, 0.1)
    out = sim.poly_flow(C, 0.5, (0.1, 0.0), np.linspace(0.0, 50.0, sim.N_SAVE), flow=flow)
    want = ref.poly_flow_scipy(C, 0.5, (0.1, 0.0), 50.0, flow=flow)
    # two adaptive integrators at rtol 1e-10; the reference's finite-difference grad S adds ~1e-10
    np.testing.assert_allclose(out["center"][0, -1], want[:2], rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(out["r"][0, -1], want[2:], rtol=1e-6, atol=1e-8)
    if flow == "central":  # locked at the edge: S = 2/eta, sigma^2 = beta/y*
        ys, s2 = th.selfstab_equilibrium(3.8, 0.1, 0.5)
        assert out["sharpness"][0, -1] == pytest.approx(4.0, rel=1e-8)
        assert out["sigma2"][0, -1] == pytest.approx(s2, rel=1e-6)


def test_catapult_gd_matches_numpy_reference():
    keys = jax.random.split(jax.random.key(0), 2)
    cs = np.array([1.5, 3.0, 4.5])
    out = _catapult(keys=keys, eta_lambda0=cs)
    U, Vv = [], []
    for k in keys:
        ku, kv = jax.random.split(k)
        U.append(np.asarray(jax.random.normal(ku, (64,))))
        Vv.append(np.asarray(jax.random.normal(kv, (64,))))
    U, Vv = np.tile(np.array(U), (3, 1)), np.tile(np.array(Vv), (3, 1))
    lam0 = (np.sum(U * U, 1) + np.sum(Vv * Vv, 1)) / 64
    npy = ref.catapult_numpy(U, Vv, np.repeat(cs, 2) / lam0, 40)
    np.testing.assert_array_equal(out["diverged"].ravel(), npy["diverged"])
    np.testing.assert_allclose(out["final_eta_lambda"].ravel(), npy["final_eta_lambda"], rtol=1e-10)
    np.testing.assert_allclose(out["eta"] * out["lambda0"], np.broadcast_to(cs[:, None], (3, 2)), rtol=1e-14)
    assert out["diverged"][2].all() and not out["diverged"][:2].any()


def test_top_eigenpair_matches_eigh():
    rng = np.random.default_rng(2)
    A = rng.normal(size=(30, 30))
    A = A @ A.T
    pair = jax.jit(lambda M, v0: sim.top_eigenpair(lambda v: M @ v, v0, 30))
    S, u, S2 = pair(jnp.asarray(A), jnp.asarray(rng.normal(size=30)))
    vals, vecs = np.linalg.eigh(A)
    assert float(S) == pytest.approx(vals[-1], rel=1e-10) and float(S2) == pytest.approx(vals[-2], rel=1e-8)
    assert abs(abs(float(u @ vecs[:, -1])) - 1) < 1e-10


def test_top_eigenpair_refuses_a_nan_matvec():
    """Issue 29: a matvec returning NaN gave a NaN eigenpair and no flag; concrete, it is an error naming matvec."""
    with pytest.raises(ValueError, match="matvec: returned non-finite values"):
        sim.top_eigenpair(lambda v: v * jnp.nan, jnp.ones(3), 3)
    # under jit the NaN comes back for the caller's divergence flag (mlp_run's diverged)
    S, _, _ = jax.jit(lambda v0: sim.top_eigenpair(lambda v: v * jnp.nan, v0, 3))(jnp.ones(3))
    assert np.isnan(float(S))


def test_mlp_sharpness_at_init_matches_the_dense_hessian():
    out = _mlp(methods=("gd",))
    theta0 = sim.mlp_init(jax.random.split(jax.random.split(jax.random.key(3), 1)[0])[0], _MLP["widths"])
    # jitted: run eagerly, the Hessian compiles each of its ~130 primitives as a program of its own
    H = jax.jit(jax.hessian(lambda t: sim.mlp_loss(t, _MLP["X"], _MLP["Y"], _MLP["widths"])))(theta0)
    vals = np.linalg.eigvalsh(np.asarray(H))
    assert out["sharpness"][0, 0] == pytest.approx(vals[-1], rel=1e-8)
    assert out["loss"][0, 0] == pytest.approx(float(sim.mlp_loss(theta0, _MLP["X"], _MLP["Y"], _MLP["widths"])), rel=1e-14)


def test_mlp_gradient_flow_is_gd_with_the_euler_step():
    """Metamorphic: Euler gradient flow with s substeps per unit at step eta is GD at eta/s, s steps per unit."""
    s = _MLP["substeps"]
    flow = _mlp(methods=("gradient",), eta=0.5, every=1)
    gd = _mlp(methods=("gd",), eta=0.5 / s, every=s)
    np.testing.assert_allclose(flow["loss"], gd["loss"], rtol=1e-12)
    assert np.all(flow["sigma2"] == 0)


def test_mlp_heavy_ball_with_zero_momentum_is_gd():
    hb = _mlp(methods=("heavy_ball", "nesterov"), momentum=0.0)
    gd = _mlp(methods=("gd",))
    np.testing.assert_allclose(hb["loss"], np.repeat(gd["loss"], 2, axis=0), rtol=1e-13)


# ------------------------------------------------------------------------------------------- claim measurements

@pytest.mark.parametrize("phase", [0.0, 0.7, 2.1, 4.0])
def test_ringing_rates_recover_a_damped_cosine_within_their_bounds(phase):
    """The overshoot envelope and zero-crossing fits of cohen2025.selfstab_transient, on an exactly linear signal.

    A scalar observable of a linear 2-D map sampled at blocks k = 0, 1, ... (2 steps each) is A rho^k cos(k theta +
    phi). The fitted slopes must lie within their derived next_order bounds of ln(rho)/2 per step and 2 pi/theta
    steps, for any sampling phase (the bounds hold whatever phi is; the SE term is not needed here).
    """
    from paper_checks.eos.central_flow import half_cycle_extrema, sampling_bias_bound, zero_crossings

    rho, theta = 0.932918, 0.425517  # the toy's multiplier at eta*a = 1.9
    k = np.arange(300)
    t = 2.0 * k + 0.5
    u = 0.3 * rho ** k * np.cos(theta * k + phase)
    te, ue = half_cycle_extrema(t, u)
    assert np.all(ue[1:] * ue[:-1] < 0)  # consecutive overshoots alternate
    width = -np.log(np.cos(np.arctan(np.log(1 / rho) / theta) + theta))
    slope, _ = fit_slope(te, np.log(np.abs(ue)), log=False)
    assert abs(slope - np.log(rho) / 2) <= sampling_bias_bound(te, width)
    tc = zero_crossings(t, u)
    spacing, _ = fit_slope(np.arange(tc.size, dtype=float), tc, log=False)
    assert abs(spacing - 2 * np.pi / theta) <= sampling_bias_bound(np.arange(tc.size, dtype=float), abs(np.log(rho)) / 2)
    # the bound is not vacuous: the rate is resolved to a few per cent
    assert sampling_bias_bound(te, width) < 0.05 * abs(np.log(rho) / 2)


def test_proportional_fit_matches_least_squares():
    """The fit through the origin of the edge-of-stability claims against numpy's least squares and the textbook SE."""
    from paper_checks.eos.edge_of_stability import proportional_fit

    rng = np.random.default_rng(4)
    T = rng.uniform(3.0, 5.0, 9)
    S = 1.02 * T + rng.normal(0, 0.03, 9)
    c, se = proportional_fit(T, S)
    (c_ls,), res, _, _ = np.linalg.lstsq(T[:, None], S, rcond=None)
    assert c == pytest.approx(c_ls, rel=1e-13)
    assert se == pytest.approx(np.sqrt(res[0] / (T.size - 1) / (T @ T)), rel=1e-12)
    with pytest.raises(ValueError, match="threshold"):
        proportional_fit([4.0], [4.1])


def test_catapult_trajectory_equals_numpy_gd_on_the_uv_model():
    """The scaled two-variable map iterated by theory.eos equals plain NumPy GD on u, v (m = 50) to round-off, and its
    sympy form is the (f, lambda) map rescaled: z = eta^2 f^2/m, c = eta lambda."""
    z, c = sp.symbols("z c", real=True)
    z_new, c_new = th.catapult_scaled_map()
    assert sp.simplify(z_new - z * (1 - c + z) ** 2) == 0 and sp.simplify(c_new - (c + z * (c - 4))) == 0
    rng = np.random.default_rng(3)
    m, n_steps = 50, 60
    u, v = rng.standard_normal(m), rng.standard_normal(m)
    lam0 = (u @ u + v @ v) / m
    eta = 2.7 / lam0
    f0 = u @ v / np.sqrt(m)
    out = th.catapult_trajectory(2.7, eta ** 2 * f0 ** 2 / m, n_steps)
    for _ in range(n_steps):
        f = u @ v / np.sqrt(m)
        u, v = u - eta * f * v / np.sqrt(m), v - eta * f * u / np.sqrt(m)
    np.testing.assert_allclose(out["eta_lambda"][0, -1], eta * (u @ u + v @ v) / m, rtol=1e-10)
    # z has decayed to ~1e-37 by the end (the run converged): round-off of f is absolute, ~1e-16 f0
    np.testing.assert_allclose(out["z"][0, -1], eta ** 2 * (u @ v) ** 2 / m ** 2, rtol=1e-8, atol=1e-30)
    assert out["z"][0, :].max() > 10 * out["z"][0, 0]  # the run did catapult (z rose before it decayed)


def test_mlp_track_gd_runs_equal_a_plain_gd_loop_and_the_projection_holds_the_edge():
    """mlp_track's GD trajectories (eta, and eta/2 two steps per unit) equal plain GD on mlp_loss (window means of the
    iterates, to round-off), the flows start where GD does, and the projected flow's sigma^2 is the central flow's at
    threshold 2/eta. Same shapes as the contract row (one compiled program)."""
    widths, eta, n_steps, window = (4, 8, 1), 1.0, 40, 20
    keys = jax.random.split(jax.random.key(5), 2)
    out = _track(keys, eta, n_steps, window)
    grad = jax.jit(jax.grad(lambda th: sim.mlp_loss(th, _TRACK["X"], _TRACK["Y"], widths)))
    for i in range(2):
        theta0 = sim.mlp_init(keys[i], widths)
        np.testing.assert_allclose(out["theta0"][i, 1], theta0, rtol=1e-15)
        for run, step, per_unit in ((0, eta, 1), (3, eta / 2, 2)):
            th_, iterates = theta0, []
            for _ in range(n_steps * per_unit):
                iterates.append(np.asarray(th_))
                th_ = th_ - step * grad(th_)
            # each iterate is held for substeps/per_unit substeps: the window mean is the plain mean of the iterates
            means = np.asarray(iterates).reshape(n_steps // window, window * per_unit, -1).mean(axis=1)
            np.testing.assert_allclose(out["mean_theta"][i, run], means, rtol=1e-9, atol=1e-12)
    g, gS = np.array([0.3, -0.2, 0.1]), np.array([1.0, 0.5, -0.25])
    np.testing.assert_allclose(sim._constrained_sigma2(g, gS, 2.1, 0.8, 2.0 / 0.8, 1.0),
                               sim.central_flow_sigma2(g, gS, 2.1, 0.8, 1.0), rtol=1e-15)
    # the constrained run holds its sharpness at 2/eta once the projection is active (within the 1 % Euler bound)
    assert np.all(out["sharpness"][:, 1] <= 2.0 / eta * 1.01)


def test_mlp_track_records_are_nan_from_the_diverging_window_on():
    r"""At :math:`\eta = 50` (sharpness ~1.3 at the start, :math:`|1 - 50S| \gg 1`) every trajectory of
    ``mlp_track`` diverges: the flows within the first window of 10 steps, GD at :math:`\eta` and :math:`\eta/2`
    in a later one (the iterate grows ~100x a step until it passes ``DIVERGENCE_BOUND``). GD's ``diverged_step``
    equals the first step at which a plain GD loop leaves the bound, and every record is finite before the window
    holding the diverging step and NaN from it on (the module's "divergence is data"). No claim reads these records
    (every claim refuses a diverged trajectory), so this test is what sees the mask: the claims-only sample at seed 3
    let a flipped ``>=`` through (NaN before the divergence, stale finite values after it), and the step used to be
    counted from the diverging window's start."""
    widths, eta, n_steps, window = (4, 8, 1), 50.0, 40, 10
    keys = jax.random.split(jax.random.key(5), 2)
    out = _track(keys, eta, n_steps, window)
    grad = jax.jit(jax.grad(lambda th: sim.mlp_loss(th, _TRACK["X"], _TRACK["Y"], widths)))
    for i in range(2):
        th_, first_bad = sim.mlp_init(keys[i], widths), -1
        for step in range(1, n_steps + 1):
            th_ = th_ - eta * grad(th_)
            if not np.all(np.isfinite(th_)) or np.max(np.abs(th_)) > sim.DIVERGENCE_BOUND:
                first_bad = step
                break
        assert int(out["diverged_step"][i, 0]) == first_bad > 0
    assert np.all(out["diverged"])
    first_dead = (out["diverged_step"] - 1) // window  # the window holding each trajectory's diverging step
    # both sides of the mask are exercised: a trajectory that dies in window 0, and one with finite windows before
    assert first_dead.min() == 0 and first_dead.max() >= 1
    for name in ("mean_theta", "mean_loss", "mean_sigma2", "sharpness", "second", "euler_remainder"):
        rec = out[name].reshape(out[name].shape[:3] + (-1,))
        for (i, r), k in np.ndenumerate(first_dead):
            assert np.all(np.isfinite(rec[i, r, :k])) and np.all(np.isnan(rec[i, r, k:])), (name, i, r)
    assert not np.any(out["active"][first_dead[..., None] <= np.arange(n_steps // window)])


@pytest.mark.parametrize("case", ["rank one", "full rank", "zero"])
def test_central_flow_sigma_matrix_solves_the_complementarity_problem(case):
    r"""The matrix :math:`\sigma^2` against the problem's optimality conditions, checked directly: :math:`\Sigma \succeq
    0`, :math:`Z = \mathcal Q\Sigma - B \succeq 0`, :math:`\langle\Sigma, Z\rangle = 0` (to 1e-9 of the scale of
    :math:`B`: the accelerated iteration converges linearly, 3000 steps on a condition number below 100), on random
    :math:`G` (k = 2, P = 6) with right-hand sides whose solution has rank one, two or zero; and for k = 1 the closed
    form :func:`sims.eos.central_flow_sigma2` (same :math:`G = \nabla S`, same :math:`B`)."""
    rng = np.random.default_rng(7)
    G = rng.normal(size=(2, 2, 6))
    G = 0.5 * (G + G.transpose(1, 0, 2))  # G_ij = grad(u_i^T H u_j) is symmetric in (i, j)
    Q = np.einsum("ijp,klp->ijkl", G, G)
    B = {"rank one": np.diag([1.5, -2.0]), "full rank": Q.reshape(4, 4) @ np.array([1.0, 0.2, 0.2, 0.5]),
         "zero": np.diag([-1.0, -0.3])}[case].reshape(2, 2)
    S = np.asarray(sim.central_flow_sigma_matrix(jnp.asarray(Q), jnp.asarray(B), jnp.zeros((2, 2)), n_iter=3000))
    Z = (Q.reshape(4, 4) @ S.reshape(-1)).reshape(2, 2) - B
    scale = np.abs(B).max()
    assert np.linalg.eigvalsh(S).min() >= -1e-9 * scale
    assert np.linalg.eigvalsh(0.5 * (Z + Z.T)).min() >= -1e-9 * scale
    assert abs(np.sum(S * Z)) <= 1e-9 * scale * max(1.0, np.abs(S).max())
    rank = int(np.sum(np.linalg.eigvalsh(S) > 1e-6 * max(np.abs(S).max(), 1e-300)))
    assert rank == {"rank one": 1, "full rank": 2, "zero": 0}[case]
    # k = 1: the closed form, with B = 2<-g, grad S> + kappa (S - 2/eta) and Q = |grad S|^2
    g, gS, lam, eta = rng.normal(size=6), G[0, 0], 2.6, 0.8
    b = 2.0 * (-g @ gS) + (2.0 / eta) * (lam - 2.0 / eta)
    one = sim.central_flow_sigma_matrix(jnp.full((1, 1, 1, 1), gS @ gS), jnp.full((1, 1), b), jnp.zeros((1, 1)), n_iter=50)
    np.testing.assert_allclose(float(one[0, 0]), float(sim.central_flow_sigma2(g, gS, lam, eta)), rtol=1e-12, atol=1e-15)


# ------------------------------------------------------------------------------------------- ReLU networks (c_act)

def _relu_numpy_gd(theta, X, Y, widths, eta, n_steps, ratio):
    """Plain NumPy GD on the NTK-parameterized ReLU network (hand-written backpropagation): loss at each step, the
    first step whose loss is not finite or above ``ratio`` times the first (-1 if none), and the final loss."""
    sizes = list(zip(widths[:-1], widths[1:]))
    bounds = np.cumsum([0] + [a * b for a, b in sizes])
    Ws = [theta[s:e].reshape(a, b).copy() for s, e, (a, b) in zip(bounds[:-1], bounds[1:], sizes)]
    N, losses, div_step = X.shape[0], [], -1
    for t in range(n_steps + 1):
        hs, pre = [X], []
        for W in Ws[:-1]:
            pre.append(hs[-1] @ W * np.sqrt(2.0 / W.shape[0]))
            hs.append(np.maximum(pre[-1], 0.0))
        f = hs[-1] @ Ws[-1] / np.sqrt(Ws[-1].shape[0])
        loss = 0.5 * np.sum((f - Y) ** 2) / N
        losses.append(loss)
        if t == n_steps:
            break
        if not np.isfinite(loss) or loss > ratio * losses[0]:
            div_step = t
            break
        g = (f - Y) / N
        grads = [None] * len(Ws)
        grads[-1] = hs[-1].T @ g / np.sqrt(Ws[-1].shape[0])
        back = g @ Ws[-1].T / np.sqrt(Ws[-1].shape[0])
        for k in range(len(Ws) - 2, -1, -1):
            scale = np.sqrt(2.0 / Ws[k].shape[0])
            back = back * (pre[k] > 0)
            grads[k] = hs[k].T @ back * scale
            back = back @ Ws[k].T * scale
        Ws = [W - eta * G for W, G in zip(Ws, grads)]
    return np.array(losses), div_step


def _relu_theta0(key):
    from tests.contract_eos import RELU_WIDTHS

    return np.asarray(relu_sim.relu_init(jax.random.split(key)[0], RELU_WIDTHS))


def test_relu_lambda0_is_the_dense_gauss_newton_top_and_the_linearized_models_edge():
    r""":math:`\lambda_0` of relu_gd (12 Lanczos steps) and of relu_gauss_newton_top against ``eigvalsh`` of the dense
    :math:`J^\top J/N` (J by reverse mode, a path the JVP/VJP Lanczos does not take); then GD on the network linearized
    at :math:`\theta_0` converges at :math:`\eta = 1.98/\lambda_0` and grows at :math:`2.02/\lambda_0`: the
    normalization makes :math:`c = 2` the linearized model's edge."""
    from tests.contract_eos import RELU_DATA, RELU_WIDTHS, _relu

    X, Y = (np.asarray(a) for a in RELU_DATA)
    key = jax.random.split(jax.random.key(4), 1)[0]
    theta0 = _relu_theta0(key)
    J = np.asarray(jax.jit(jax.jacrev(lambda t: relu_sim.relu_net(t, X, RELU_WIDTHS).ravel()))(theta0))
    G = J.T @ J / X.shape[0]
    top = np.linalg.eigvalsh(G)[-1]
    # Lanczos with full reorthogonalization: the top Ritz value converges geometrically; 12 steps on these 656
    # parameters leave it 1e-9 relative off or better (60: round-off)
    assert _relu()["lambda0"][0] == pytest.approx(top, rel=1e-9)
    assert float(relu_sim.relu_gauss_newton_top(theta0, X, RELU_WIDTHS, jax.random.key(9), num_iter=60)) == pytest.approx(
        top, rel=1e-12)
    f0 = np.asarray(relu_sim.relu_net(theta0, X, RELU_WIDTHS)).ravel()
    for c, grows in ((1.98, False), (2.02, True)):
        r, eta = f0 - Y.ravel(), c / top
        for _ in range(3000):  # residual of the linearized model: r <- r - eta J J^T r / N
            r = r - eta * J @ (J.T @ r) / X.shape[0]
        # along the top eigenvector r scales by |1 - c| per step: 0.98^3000 ~ 1e-26, 1.02^3000 ~ 1e26
        assert (np.linalg.norm(r) > 1e10 * np.linalg.norm(f0 - Y.ravel())) == grows, c


def test_relu_gd_equals_a_numpy_loop_and_classifies_divergence():
    """relu_gd's final loss, loss spike and divergence step against plain NumPy GD with hand-written backpropagation
    from the same start and step (the contract row's program: 20 steps), converging, catapulting and dying runs
    (c = 1.5, 3, 60) and diverging ones (c = 1e4, 1e6)."""
    from tests.contract_eos import RELU_DATA, RELU_WIDTHS, _relu

    X, Y = (np.asarray(a) for a in RELU_DATA)
    theta0 = _relu_theta0(jax.random.split(jax.random.key(4), 1)[0])
    for cs in ((1.5, 3.0, 60.0), (1e4, 1e6)):
        out = _relu(eta_lambda0=cs)
        for i, c in enumerate(cs):
            losses, div_step = _relu_numpy_gd(theta0, X, Y, RELU_WIDTHS, out["eta"][i], 20, relu_sim.RELU_DIVERGENCE_RATIO)
            assert out["loss0"][i] == pytest.approx(losses[0], rel=1e-13)
            assert bool(out["diverged"][i]) == (div_step >= 0) and int(out["diverged_step"][i]) == div_step, c
            if div_step < 0:
                # 20 steps of float64 GD: round-off grows with the catapult's spike (at most ~400x here)
                assert out["final_loss"][i] == pytest.approx(losses[-1], rel=1e-9), c
                assert out["max_loss_ratio"][i] == pytest.approx(losses.max() / losses[0], rel=1e-9), c
            else:
                assert np.isnan(out["final_loss"][i]) and np.isinf(out["max_loss_ratio"][i])
    assert out["diverged"].all()
