"""Unit tests for theory/sims softmax_radius (the claims run in tests/test_power.py, the simulator
contract in tests/test_contract.py). The small JAX setups mirror tests/contract_softmax_radius.py
(same models, shapes and static configuration), so one process compiles each program once."""
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import sympy as sp

import sims  # noqa: F401
from sims import softmax_radius as S
from sims.softmax_radius import archgrid as SA, continuation as SC, directions as SD, models as SM  # internals, tested where they are defined
from sims.reference import softmax_radius as R
from theory import softmax_radius as T

NAN = float("nan")
_D = S.digits()
_DATA = {"x_train": _D["x_train"][:32], "y_train": _D["y_train"][:32], "x_test": _D["x_test"][:16],
         "y_test": _D["y_test"][:16]}
_X, _Y = _DATA["x_train"], _DATA["y_train"]
_MLP = S.make_model("mlp", hidden=(8,))


def _away_from_kinks(params):
    """Shift every parameter a little so no ReLU input sits exactly at 0 (zero biases on blank pixels would)."""
    return {k: np.asarray(v) + 0.05 * np.cos(np.arange(np.size(v)).reshape(np.shape(v)) * 0.37)
            for k, v in params.items()}


def _unit(tree, phase=0.2):
    v = {k: np.sin(np.arange(np.size(w)).reshape(np.shape(w)) * 1.3 + phase) for k, w in tree.items()}
    n = math.sqrt(sum(float(np.sum(w**2)) for w in v.values()))
    return {k: w / n for k, w in v.items()}


_P = _away_from_kinks(_MLP.init(jax.random.key(0)))
_V = _unit(_P)


# ----------------------------------------------------------------------------- sympy, exact
def test_binary_zeros_radius_flip_point_exact():
    assert T.binary_zeros()["residual"] == 0
    assert sp.simplify(T.binary_radius_expr() - sp.sqrt(T.delta**2 + sp.pi**2) / T.Dpos) == 0
    m = T.binary_radius_minimum()
    assert m["argmin"] == [0] and sp.simplify(m["minimum"] - sp.pi / T.Dpos) == 0
    fp = T.binary_flip_point()
    assert fp["re_t0_minus_flip"] == 0 and sp.simplify(fp["im_t0"] - sp.pi / (T.a1 - T.a2)) == 0


def test_half_plane_constants_and_third_moment_exact():
    hp = T.half_plane_lower_bound()
    assert hp["term_residual"] == 0 and sp.simplify(hp["strip_half_width"] - sp.pi / T.Dpos) == 0
    c = T.kl_remainder_constants()
    assert sp.simplify(c["forward"] - 1 / (36 * sp.sqrt(3))) == 0
    assert sp.simplify(c["reverse"] - c["paper"]) == 0
    ext = T.third_moment_extremum()
    assert sp.simplify(ext["max"] - ext["bound"]) == 0
    assert sp.simplify(ext["argmax"][0] - (3 - sp.sqrt(3)) / 6) == 0


def test_kl_identities_and_the_paper_label():
    ident = T.kl_identities(2)
    assert ident["forward_residual"] == 0 and ident["reverse_residual"] == 0
    assert abs(float(ident["paper_label_residual_at_witness"])) > 1e-3


def test_logistic_curvature_sympy_vs_jax_and_numeric_closed_forms():
    sc = T.logistic_scales()
    assert sc["singularity_residual"] == 0
    for d in (-3.0, 0.0, 2.5, 10.0):
        assert S.logistic_inverse_curvature(d) == pytest.approx(float(sc["inv_curvature"].subs(T.delta, d)), rel=1e-12)
        assert T.logistic_inverse_curvature(d) == pytest.approx(float(sc["inv_curvature"].subs(T.delta, d)), rel=1e-14)
    assert T.curvature_to_radius_ratio(10.0, 2.0) == pytest.approx(2 * T.curvature_to_radius_ratio(10.0), rel=1e-15)


# ----------------------------------------------------------------------------- numerics
def test_radius_matches_binary_closed_form_and_bound():
    rng = np.random.default_rng(1)
    for _ in range(8):
        z, a = rng.normal(size=2) * 3, rng.normal(size=2)
        assert T.radius(z, a) == pytest.approx(T.binary_radius(z[0] - z[1], a[0] - a[1]), rel=1e-10)
        det = T.radius_details(z, a)
        assert det["zero"] == pytest.approx(T.binary_ghost(z[0] - z[1], a[0] - a[1]), rel=1e-10)
    for _ in range(8):
        n = int(rng.integers(3, 9))
        z, a = rng.normal(size=n) * 2, rng.normal(size=n)
        det = T.radius_details(z, a)
        assert det["certified"] and det["residual"] < 1e-10
        assert det["radius"] >= T.lower_bound(a) * (1 - 1e-12)
        assert abs(det["zero"]) == pytest.approx(det["radius"], rel=1e-12)


def test_binary_ghost_is_a_zero_above_the_flip_point():
    d, da = 1.3, -0.7
    t0 = T.binary_ghost(d, da)
    z, a = np.array([d, 0.0]), np.array([da, 0.0])
    assert abs(np.exp(z[0] + a[0] * t0) + np.exp(z[1] + a[1] * t0)) < 1e-12
    assert t0.real == pytest.approx(-d / da) and t0.imag == pytest.approx(math.pi / abs(da))


def test_radius_batched_equals_loop_and_degenerate_inf():
    rng = np.random.default_rng(2)
    z, a = rng.normal(size=(4, 5)), rng.normal(size=(4, 5))
    assert np.allclose(T.radius(z, a), [T.radius(zi, ai) for zi, ai in zip(z, a)], rtol=0)
    assert T.radius([0.3, 1.0, -2.0], [1.0, 1.0, 1.0]) == math.inf
    assert T.binary_radius(0.5, 0.0) == math.inf
    lb = T.lower_bound(np.array([[1.0, 1.0], [0.0, 2.0]]))
    assert lb[0] == math.inf and lb[1] == pytest.approx(math.pi / 2)


def test_series_estimates_recover_the_binary_ghost():
    c = T.log_partition_taylor([1.5, 0.0], [2.0, 0.0], 200)
    exact = T.binary_radius(1.5, 2.0)
    assert T.cauchy_hadamard_radius(c) == pytest.approx(exact, rel=1e-2)
    assert T.prony_radius(c[:25]) == pytest.approx(exact, rel=1e-4)
    assert T.prony_pair(c[:41]) == pytest.approx(T.binary_ghost(1.5, 2.0), rel=1e-6)
    # the Prony error scale bounds the actual error at this order
    err = abs(T.prony_radius(c[:17]) / exact - 1)
    assert err < T.prony_error_scale(1.5, 16)


def test_strip_margin_obeys_half_plane_bound():
    rng = np.random.default_rng(4)
    z, a = rng.normal(size=6), rng.normal(size=6)
    da = a.max() - a.min()
    y = np.linspace(-0.99, 0.99, 21) * math.pi / da
    t = np.linspace(-5, 5, 31)[None, :] + 1j * y[:, None]
    m = T.strip_margin(z, a, t)
    assert np.all(m >= np.cos(da * np.abs(y) / 2)[:, None] - 1e-14)
    # and the bound is attained for two classes on the line Re t = flip point
    m2 = T.strip_margin([0.0, 0.0], [1.0, -1.0], 1j * y[:, None] * 0.0 + 1j * np.array([0.5]))
    assert m2[0, 0] == pytest.approx(math.cos(1.0 * 0.5), rel=1e-12)


def test_linearized_line_loss_and_increment_bound():
    rng = np.random.default_rng(5)
    z, a, y = rng.normal(size=(6, 4)), rng.normal(size=(2, 6, 4)), rng.integers(0, 4, 6)
    t = np.linspace(0.0, 3.0, 13)
    loss = T.linearized_line_loss(z, a, y, t)
    direct = [[np.mean([np.log(np.sum(np.exp(z[i] + a[j, i] * tt))) - z[i, y[i]] - a[j, i, y[i]] * tt
                        for i in range(6)]) for tt in t] for j in range(2)]
    np.testing.assert_allclose(loss, direct, rtol=1e-13)
    B = T.increment_bound(a, y)
    assert np.all(loss - loss[:, :1] <= B[:, None] * t + 1e-13)  # the slope bound holds ...
    assert np.all(B <= np.pi / np.min(T.lower_bound(a), axis=-1) + 1e-13)  # ... and B <= pi / rho_a
    # ... and is the slope for a single sample far along the line (p(t) concentrates on the arg-max class)
    far = T.linearized_line_loss(z[:1], a[0, :1], y[:1], [1e3, 1e3 + 1])
    assert far[1] - far[0] == pytest.approx(T.increment_bound(a[0, :1], y[:1]), rel=1e-9)


def test_hessian_step_scale_is_two_over_the_curvature():
    """eq. (43): τ_H = 2/κ with κ = f''(δ)Δ² (eq. 46), against sympy's f'' and the ratios of Fig. 13 and §8.5."""
    fpp = T.logistic_scales()["fpp"]
    x = sp.Symbol("x")
    for d, da in ((10.0, 1.0), (2.0, 0.5), (-3.0, 2.0)):
        kappa = float(fpp.subs(x, d)) * da**2
        assert T.hessian_step_scale(d, da) == pytest.approx(2 / kappa, rel=1e-12)
        rho = math.sqrt(d**2 + math.pi**2) / abs(da)
        assert T.hessian_ratio(d, da, "radius") == pytest.approx(2 / kappa / rho, rel=1e-12)
        assert T.hessian_ratio(d, da, "rho_a") == pytest.approx(2 / kappa / (math.pi / abs(da)), rel=1e-12)
    # the paper's numbers at δ = 10: over 4000x against both radii; the 1/f'' reading gives 2101 against the radius
    assert 4200 < T.hessian_ratio(10.0) < 4210 and 14020 < T.hessian_ratio(10.0, against="rho_a") < 14030
    assert T.curvature_to_radius_ratio(10.0) == pytest.approx(T.hessian_ratio(10.0) / 2, rel=1e-14)


def test_accuracy_floor_and_linearized_accuracy_by_hand():
    z = np.array([[2.0, 0.0, -1.0], [0.0, 0.5, 0.0], [1.0, 0.9, 0.0]])  # margins 2, -0.5 (wrong), 0.1
    a = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 0.0], [0.0, 1.0, -1.0]])  # spreads 1, 0, 2
    y = np.array([0, 0, 0])
    np.testing.assert_allclose(T.top2_margin(z, y), [2.0, -0.5, 0.1])
    t = np.array([0.0, 0.04, 1.0, 1.9, 2.5])
    # sample 0 keeps while 2 > t; sample 1 is wrong; sample 2 keeps while 0.1 > 2t
    np.testing.assert_allclose(T.accuracy_floor(z, a, y, t), [2 / 3, 2 / 3, 1 / 3, 1 / 3, 0.0])
    # the linearized logits themselves: sample 0 flips at t = 2, sample 2 when 1 < 0.9 + t, i.e. t > 0.1
    np.testing.assert_allclose(T.linearized_accuracy(z, a, y, t), [2 / 3, 2 / 3, 1 / 3, 1 / 3, 0.0])
    # per-direction distances (D, R) with slopes (D, N, n)
    two = T.accuracy_floor(z, np.stack([a, 0 * a]), y, np.stack([t, t]))
    np.testing.assert_allclose(two[1], 2 / 3)
    assert np.all(T.accuracy_floor(z, a, y, t) <= T.linearized_accuracy(z, a, y, t) + 1e-15)


def test_perturbation_epsilon_by_hand():
    """ε = C π²/(2 Δa² min_k w_k) with C = max_k |z_k''| and w = softmax(z)."""
    z = np.array([[0.0, math.log(3.0)], [1.0, 1.0]])  # weights (1/4, 3/4) and (1/2, 1/2)
    a = np.array([[0.0, 2.0], [0.5, 0.5]])
    c2 = np.array([[0.1, -0.3], [0.2, 0.0]])
    eps = T.perturbation_epsilon(z, a, c2)
    assert eps[0] == pytest.approx(0.3 * math.pi**2 / (2 * 4.0) * 4.0, rel=1e-13)
    assert eps[1] == math.inf  # Δa = 0: no linearized zero to perturb
    assert T.perturbation_epsilon(z[:1], a[:1], 0 * c2[:1])[0] == 0.0  # linear logits: ε = 0


def test_kl_zero_probability_limit_and_small_t_ratio():
    a = np.array([0.3, -1.0, 2.0])
    for fn in (T.kl_forward, T.kl_reverse):
        with_zero = fn([0.6, 0.4, 0.0], a, 0.7)
        assert math.isfinite(with_zero)
        near = fn([0.6 - 5e-13, 0.4 - 5e-13, 1e-12], a, 0.7)  # the limit p_3 -> 0 is continuous
        assert with_zero == pytest.approx(near, abs=1e-10)
    p = np.array([(3 - math.sqrt(3)) / 6, (3 + math.sqrt(3)) / 6])
    assert T.kl_small_t_ratio(p, [1.0, 0.0], "reverse") == pytest.approx(1 / (18 * math.sqrt(3)), rel=1e-12)
    assert T.kl_small_t_ratio(p, [1.0, 0.0], "forward") == pytest.approx(1 / (36 * math.sqrt(3)), rel=1e-12)
    assert T.third_moment_bound(2.0) == pytest.approx(8 / (6 * math.sqrt(3)))


@pytest.mark.parametrize("call, match", [
    (lambda: T.binary_radius(NAN, 1.0), "delta"),
    (lambda: T.binary_radius(1.0, "x"), "delta_a"),
    (lambda: T.binary_radius(np.ones(2), np.ones(3)), "delta"),
    (lambda: T.binary_ghost(1.0, 0.0), "delta_a"),
    (lambda: T.lower_bound(1.0), "a"),
    (lambda: T.radius([0.0, 1.0], [1.0]), "a"),
    (lambda: T.radius(np.zeros((2, 2, 2)), np.zeros((2, 2, 2))), "z"),
    (lambda: T.radius_details([0.0, NAN], [1.0, 0.0]), "z"),
    (lambda: T.strip_margin([0.0, 1.0], [1.0, 0.0], "t"), "t"),
    (lambda: T.strip_margin([0.0, 1.0], [1.0, 0.0], [complex(NAN, 0)]), "t"),
    (lambda: T.log_partition_taylor([0.0], [1.0], 0), "order"),
    (lambda: T.log_partition_taylor([0.0], [1.0], 2.5), "order"),
    (lambda: T.cauchy_hadamard_radius([1.0, 2.0]), "coeffs"),
    (lambda: T.cauchy_hadamard_radius(np.ones(10), n_min=0), "n_min"),
    (lambda: T.prony_radius(np.ones(10), n_min=9), "n_min"),
    (lambda: T.prony_error_scale(1.0, 3), "order"),
    (lambda: T.logistic_inverse_curvature(800.0), "delta"),
    (lambda: T.curvature_to_radius_ratio(1.0, 0.0), "curvature_factor"),
    (lambda: T.linearized_line_loss(np.zeros((3, 2)), np.zeros((3, 3)), [0, 1, 0], [0.0]), "a"),
    (lambda: T.linearized_line_loss(np.zeros((3, 2)), np.zeros((3, 2)), [0, 2, 0], [0.0]), "y"),
    (lambda: T.linearized_line_loss(np.zeros((3, 2)), np.zeros((3, 2)), [0.5, 1, 0], [0.0]), "y"),
    (lambda: T.increment_bound(np.zeros((3, 2)), [0, 1]), "y"),
    (lambda: T.third_central_moment([-1.0, 2.0], [0.0, 1.0]), "p"),
    (lambda: T.third_central_moment([0.0, 0.0], [0.0, 1.0]), "p"),
    (lambda: T.third_moment_bound(-1.0), "width"),
    (lambda: T.kl_forward([0.5, 0.6], [0.0, 1.0], 1.0), "p"),
    (lambda: T.kl_forward([0.5, -0.5, 1.0], [0.0, 1.0, 2.0], 1.0), "p"),
    (lambda: T.kl_reverse([0.5, 0.5], [0.0, 1.0, 2.0], 1.0), "a"),
    (lambda: T.kl_reverse([0.5, 0.5], [0.0, 1.0], NAN), "t"),
    (lambda: T.kl_small_t_ratio([0.5, 0.5], [1.0, 1.0], "reverse"), "a"),
    (lambda: T.kl_small_t_ratio([0.5, 0.5], [1.0, 0.0], "both"), "direction"),
    (lambda: T.kl_identities(1), "n"),
    (lambda: S.make_model("resnet"), "name"),
    (lambda: S.make_model("mlp", act="swish"), "act"),
    (lambda: S.make_model("mlp", hidden=(0,)), "hidden"),
    (lambda: S.make_model("mlp", hidden=()), "hidden"),
    (lambda: S.make_model("mlp", hidden=8), "hidden"),
    (lambda: S.mode_code("adamw"), "mode"),
    (lambda: S.digits(test_fraction=1.5), "test_fraction"),
    (lambda: S.digits(seed=-1), "seed"),
    (lambda: S.onset([1.0, 0.5], [[1.0, 2.0]]), "r"),
    (lambda: S.onset([0.5, 1.0], [[1.0, 2.0, 3.0]]), "ratio"),
    (lambda: S.onset([0.5, 1.0], [[1.0, 2.0]], threshold=1.0), "threshold"),
    (lambda: S.finite_median([1.0, 2.0], [True]), "diverged"),
    (lambda: S.finite_median([1.0, NAN], [False, False]), "values"),
    (lambda: S.random_directions(jax.random.key(0), _P, 0), "n"),
    (lambda: S.random_directions(0, _P, 2), "key"),
    (lambda: S.normalize({"w": np.array([NAN])}), "tree"),
    (lambda: S.evaluate(_MLP, _P, _X, _Y + 10), "y"),
    (lambda: S.gradient_direction(_MLP, _P, _X[:, :5], _Y), "x"),
    (lambda: S.logistic_loss_taylor(50.0, 4), "delta"),
    (lambda: S.logistic_loss_taylor(1.0, 0), "order"),
    (lambda: S.logistic_inverse_curvature(NAN), "delta"),
    (lambda: R.bench_cases("huge"), "scale"),
    (lambda: T.domb_sykes_pair(np.ones(5)), "coeffs"),
    (lambda: T.taylor_truncation_error(np.ones(5), [1.0, 2.0], [1.0]), "values"),
    (lambda: S.continued_logits(_MLP.apply, _P, _V, _X, "t"), "t"),
    (lambda: S.ghost_zeros(_MLP.apply, _P, _V, _X, [0.5], [1j]), "rows"),
    (lambda: S.ghost_zeros(_MLP.apply, _P, _V, _X, [0, 1], [1j]), "t0"),
    (lambda: S.zeros_inside(_MLP.apply, _P, _V, _X, [0], [-1.0]), "radius"),
    (lambda: S.partition_margin(_MLP.apply, _P, _V, _X, [40], [1j]), "rows"),
    (lambda: S.continued_line_loss(_MLP.apply, _P, _V, _X, _Y, [0], [NAN]), "t"),
    (lambda: T.normalization_branch_points(np.ones((2, 3)), np.ones((2, 4)), -1, 1e-5), "hd"),
    (lambda: T.normalization_branch_points(np.ones((2, 3)), np.ones((2, 3)), (1, -1), 1e-5), "axis"),
    (lambda: T.normalization_branch_points(np.ones((2, 3)), np.ones((2, 3)), 2, 1e-5), "axis"),
    (lambda: T.normalization_branch_points(np.ones((2, 3)), np.ones((2, 3)), 1.0, 1e-5), "axis"),
    (lambda: T.normalization_branch_points(np.ones((2, 3)), np.ones((2, 3)), 1, -1e-5), "eps"),
    (lambda: S.normalization_branch_point(_MLP.apply, _P, _V, _X, [0], start=0.0), "start"),
    (lambda: R.rho_a_numpy({"W0": np.zeros((2, 2))}, {}, np.zeros((1, 2))), "params"),
])
def test_bad_inputs_raise_naming_the_parameter(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()


# ----------------------------------------------------------------------------- JAX sims
def test_jvp_and_rho_a_match_the_numpy_reference():
    z, a = S.directional_derivatives(_MLP.apply, _P, _V, _X)
    np.testing.assert_allclose(np.asarray(z), R.mlp_logits(_P, _X), rtol=1e-12)
    h = 1e-6
    fd = (R.mlp_logits({k: _P[k] + h * _V[k] for k in _P}, _X) - R.mlp_logits({k: _P[k] - h * _V[k] for k in _P}, _X))
    np.testing.assert_allclose(np.asarray(a), fd / (2 * h), rtol=1e-6, atol=1e-8)
    rho = float(S.rho_a(_MLP.apply, _P, _V, _X))
    assert rho == pytest.approx(R.rho_a_numpy(_P, _V, _X), rel=1e-6)
    assert rho == pytest.approx(float(np.min(T.lower_bound(np.asarray(a)))), rel=1e-13)
    assert float(S.rho_a(_MLP.apply, _P, _V, _X, temperature=2.0)) == pytest.approx(2 * rho, rel=1e-13)


@pytest.mark.parametrize("act", ["relu", "gelu"])
def test_explicit_forward_mode_slopes_equal_the_generic_jvp(act):
    """rho_a's explicit path for one-hidden-layer MLPs (stacked products, classes first) against
    jax.jvp of the model, both under vmap over two parameter sets: same a to round-off, also at ReLU
    kinks (a zero input row with zero biases puts every hidden input exactly at 0, where the
    derivative rule decides), and the same rho_a; deeper MLPs keep the generic JVP."""
    model = S.make_model("mlp", hidden=(8,), act=act)
    p = {k: np.asarray(w) for k, w in model.init(jax.random.key(0)).items()}
    stacked = jax.tree_util.tree_map(lambda a, b: np.stack([a, b]), p, _away_from_kinks(p))
    x = np.concatenate([np.zeros((1, 64)), _X])

    @jax.jit
    def both(ps):
        fast = jax.vmap(lambda q: model.apply.slopes_t(q, _V, x).T)(ps)
        ref = jax.vmap(lambda q: SD._jvp(model.apply, q, _V, x)[1])(ps)
        rho = jax.vmap(lambda q: SD._rho_a(model.apply, q, _V, x))(ps)
        return fast, ref, rho, jax.vmap(lambda a: SD._rho_from_slopes(a, 1.0))(ref)

    a, a_ref, rho, rho_ref = (np.asarray(o) for o in both(stacked))
    np.testing.assert_allclose(a, a_ref, rtol=1e-13, atol=1e-15 * np.max(np.abs(a_ref)))
    np.testing.assert_allclose(rho, rho_ref, rtol=1e-13)
    assert not hasattr(S.make_model("mlp", hidden=(8, 8), act=act).apply, "slopes_t")
    assert not hasattr(S.make_model("mlp_ln", hidden=(8,), act=act).apply, "slopes_t")


def _nested_jvp_coefficients(model, params, v, x, y, order):
    """c_n = l^(n)(0)/n! of every per-sample line loss by n nested jax.jvp calls (no jet). The
    parameters sit away from ReLU kinks: at a kink the line loss has no Taylor series. (Finite
    differences would need a stencil narrower than the distance to the nearest kink: the CNN has
    4096 ReLU inputs per image, some within 1e-2 of zero.)"""
    def ell(t):
        z = model.apply({k: params[k] + t * v[k] for k in params}, x)
        return jax.nn.logsumexp(z, axis=-1) - z[jnp.arange(z.shape[0]), y]

    out, f = [ell(0.0)], ell
    for n in range(1, order + 1):
        f = (lambda g: lambda t: jax.jvp(g, (t,), (1.0,))[1])(f)
        out.append(jax.jit(f)(0.0) / math.factorial(n))
    return np.stack([np.asarray(c) for c in out], axis=1)


@pytest.mark.parametrize("arch", ["mlp", "mlp_ln", "cnn", "attention", "linear"])
def test_line_taylor_every_architecture_matches_nested_jvp(arch):
    model = S.make_model(arch, hidden=(8,))
    params = _away_from_kinks(model.init(jax.random.key(0))) if arch != "mlp" else _P
    v = _unit(params, phase=0.7) if arch != "mlp" else _V
    x, y = _X[:8], _Y[:8]  # the contract row's shapes (order 2 too): the MLP's program is shared
    jet_c = np.asarray(S.line_taylor(model.apply, params, v, x, y, 2))
    ref = _nested_jvp_coefficients(model, params, v, jnp.asarray(x), jnp.asarray(y), 2)
    np.testing.assert_allclose(jet_c, ref, rtol=1e-9, atol=1e-12)
    assert np.all(np.abs(ref[:, 2]) > 1e-8)  # the second-order coefficients are not trivially zero


def test_logit_line_taylor_equals_the_log_partition_series():
    rng = np.random.default_rng(6)
    z, a, y = rng.normal(size=(4, 3)), rng.normal(size=(4, 3)), np.array([0, 2, 1, 0])
    c = np.asarray(S.logit_line_taylor(z, a, y, 6))
    for i in range(4):
        ref = T.log_partition_taylor(z[i], a[i], 6)
        ref[0] -= z[i, y[i]]
        ref[1] -= a[i, y[i]]
        np.testing.assert_allclose(c[i], ref, rtol=1e-10, atol=1e-14)


def test_one_step_sweep_matches_the_numpy_reference():
    dirs = {k: np.stack([np.roll(v, i) for i in range(3)]) for k, v in _V.items()}
    r = np.array([0.0, 0.5, 2.0])
    out = S.one_step_sweep(_MLP, _P, dirs, _X, _Y, r, chunk_size=4)
    assert np.allclose(out["ratio"][:, 0], 1.0)
    for j in range(3):
        vj = {k: v[j] for k, v in dirs.items()}
        t = r * R.rho_a_numpy(_P, vj, _X)
        np.testing.assert_allclose(out["loss"][j], R.one_step_loss_numpy(_P, vj, _X, _Y, t), rtol=1e-6)
    # the slopes come back for the linearized loss: at r -> 0 its slope is the measured one
    lin = T.linearized_line_loss(out["z"], out["a"], _Y, [0.0, 1e-7])
    assert np.allclose(lin[:, 0], out["loss0"], rtol=1e-12)


def test_one_step_sweep_test_accuracy_matches_the_numpy_reference():
    """The held-out accuracy after each step (the paper's criterion) against the NumPy forward pass."""
    dirs = {k: np.stack([np.roll(v, i) for i in range(3)]) for k, v in _V.items()}
    r = np.array([0.0, 0.5, 2.0])
    xt, yt = _DATA["x_test"], _DATA["y_test"]
    out = S.one_step_sweep(_MLP, _P, dirs, _X, _Y, r, chunk_size=4, test=(xt, yt))
    for j in range(3):
        vj = {k: v[j] for k, v in dirs.items()}
        for i, ri in enumerate(r * out["rho_a"][j]):
            ref = np.mean(R.mlp_logits({k: _P[k] + ri * vj[k] for k in _P}, xt).argmax(axis=1) == yt)
            assert out["test_acc"][j, i] == pytest.approx(ref, abs=1e-6)
    assert out["test_acc0"] == pytest.approx(np.mean(R.mlp_logits(_P, xt).argmax(axis=1) == yt), abs=1e-6)
    with pytest.raises(TypeError, match="test"):
        S.one_step_sweep(_MLP, _P, dirs, _X, _Y, r, chunk_size=4, test=xt)


def test_logit_curvature_is_the_second_derivative_of_the_forward_pass():
    """z'' by nested JVPs against central second differences of the NumPy MLP (exact for its quadratic active piece
    while no ReLU switches within ±h)."""
    h = 1e-4
    c2 = np.asarray(S.logit_curvature(_MLP.apply, _P, _V, _X))
    f = lambda t: R.mlp_logits({k: _P[k] + t * _V[k] for k in _P}, _X)  # noqa: E731
    np.testing.assert_allclose(c2, (f(h) - 2 * f(0.0) + f(-h)) / h**2, rtol=1e-4, atol=1e-6)
    assert np.max(np.abs(c2)) > 1e-3


def test_onset_and_finite_median():
    r = np.array([0.5, 1.0, 2.0])
    ratio = np.array([[1.0, 1.05, 3.0], [1.0, NAN, 1.0], [1.0, 1.0, 1.0]])
    assert S.onset(r, ratio).tolist() == [2.0, 1.0, math.inf]
    assert S.onset(r, ratio, 2.0).tolist() == [2.0, 1.0, math.inf]
    assert S.finite_median([1.0, 2.0, NAN, 4.0], [False, False, True, False]) == (2.0, 1)
    med, n = S.finite_median([NAN], [True])
    assert math.isnan(med) and n == 1


def test_train_is_init_draws_then_run_adam_and_the_controller_caps_the_step():
    kw = dict(steps=3, batch=8, eta=0.05, mode="controller", spike_step=1, spike_factor=100.0, eval_every_step=True)
    out = S.train(jax.random.key(0), _MLP, _DATA, **kw)
    # the same split and draw as train, compiled (eager threefry compiles op by op)
    k_init, batches = jax.jit(lambda k: (jax.random.split(k)[0],
                                         jax.random.randint(jax.random.split(k)[1], (3, 8), 0, 32)))(jax.random.key(0))
    again = S.run_adam(_MLP, _MLP.init(k_init), _DATA, batches,
                       **{k: v for k, v in kw.items() if k not in ("steps", "batch")})
    for k in _MLP.init(k_init):
        np.testing.assert_allclose(np.asarray(out["params"][k]), np.asarray(again["params"][k]), rtol=1e-12)
    scale, r = np.asarray(out["scale"]), np.asarray(out["r"])
    assert np.all(scale <= 1) and np.all(scale * r <= 1 + 1e-12)  # the taken step never exceeds rho_a
    assert r[1] > 1 and scale[1] < 1  # the spike is the step the controller cuts
    assert not bool(out["diverged"]) and int(out["diverged_step"]) == -1


def test_clip_mode_with_a_loose_norm_is_plain_adam_and_divergence_is_flagged():
    batches = np.arange(24).reshape(3, 8) * 3 % 32  # the contract row's batches
    common = dict(eta=0.05, spike_step=1, spike_factor=100.0, eval_every_step=True)
    plain = S.run_adam(_MLP, _P, _DATA, batches, mode="plain", **common)
    loose = S.run_adam(_MLP, _P, _DATA, batches, mode="clip", clip_norm=1e12, **common)
    tight = S.run_adam(_MLP, _P, _DATA, batches, mode="clip", clip_norm=1e-3, **common)
    np.testing.assert_allclose(np.asarray(plain["loss"]), np.asarray(loose["loss"]), rtol=1e-14)
    # Adam is scale-invariant in the gradient up to eps: clipping every step changes the steps only a little
    assert not np.allclose(np.asarray(plain["params"]["W0"]), np.asarray(tight["params"]["W0"]), rtol=1e-12)
    bad = S.run_adam(_MLP, _P, _DATA, batches, mode="plain", **(common | {"eta": 1e200}))
    assert bool(bad["diverged"]) and int(bad["diverged_step"]) == 0


def test_train_clips_at_unit_gradient_norm_by_default():
    """``train``'s default ``clip_norm`` is Table 1's ||g|| <= 1: in clip mode the default run equals an explicit 1 bit
    for bit and differs from 2 (were the gradients below both bounds, the runs would be equal: the test would fail);
    Adam is scale-free in the gradient only up to its eps, so the two runs differ in the last bits, not more."""
    kw = dict(steps=3, batch=8, eta=0.05, mode="clip")
    runs = [S.train(jax.random.key(0), _MLP, _DATA, **kw, **extra) for extra in ({}, {"clip_norm": 1.0},
                                                                                 {"clip_norm": 2.0})]
    (default, one, two) = (np.asarray(r["params"]["W0"]) for r in runs)
    assert np.array_equal(default, one) and not np.array_equal(default, two)


def test_attention_init_draws_each_weight_at_its_scale():
    """The attention model's initial weights (16 keys): token embedding N(0, 1/8) (fan-in: 8 pixels a row), positions
    N(0, 0.01), query, key, value and read-out N(0, 1/d) (d = 16, fan-in), zero read-out bias. Each sample standard
    deviation within 4 of its standard errors, 1/sqrt(2n) relative for n normal draws (n >= 2048 here: 6 %); a scale
    off by sqrt(d) or by 10 is far outside."""
    model = S.make_model("attention")
    p = jax.vmap(model.init)(jax.random.split(jax.random.key(3), 16))
    d = 16
    want = {"E": 1 / math.sqrt(8), "pos": 0.1, "Q": 1 / math.sqrt(d), "Kw": 1 / math.sqrt(d), "V": 1 / math.sqrt(d),
            "W": 1 / math.sqrt(d)}
    for name, sd in want.items():
        x = np.asarray(p[name]).ravel()
        assert abs(x.std() / sd - 1) < 4 / math.sqrt(2 * x.size), (name, x.std(), sd)
    assert not np.any(np.asarray(p["b"]))


def test_spike_runs_pair_modes_on_one_seed_and_record_what_single_runs_record():
    kw = dict(eta=0.05, steps=6, batch=8, spike_step=2)
    out = S.spike_runs(_MLP, _DATA, modes=("plain", "controller"), seeds=[0], factor=100.0, eval_every=4,
                       chunk_size=1, **kw)
    assert out["mode"].tolist() == [0, 2] and out["seed"].tolist() == [0, 0]
    # the same initialization and minibatches: identical until the spike
    assert out["loss"][0, 0] == out["loss"][1, 0] and out["loss"][0, 1] == out["loss"][1, 1]
    # the sparse records (test accuracy every 4th step, around the spike and at the end; rho_a at the spike only
    # outside the controller) against train's per-step records of the same runs: the skipped work never feeds the
    # trajectory, so equal up to the round-off of a differently batched program (1e-12)
    assert out["eval_step"].tolist() == [0, 1, 2, 4, 5]
    for g, code in enumerate(out["mode"]):
        one = S.train(jax.random.key(0), _MLP, _DATA, mode=S.MODES[code], spike_factor=100.0, eval_every_step=True,
                      **kw)
        np.testing.assert_allclose(out["test_acc"][g], np.asarray(one["test_acc"])[out["eval_step"]], atol=1e-12)
        assert out["final_acc"][g] == out["test_acc"][g, -1]
        tracked = np.arange(6) == 2 if code == 0 else np.ones(6, bool)
        np.testing.assert_allclose(out["r"][g][tracked], np.asarray(one["r"])[tracked], rtol=1e-12)
        assert np.all(np.isnan(out["r"][g][~tracked]))


def test_kl_and_cgf_in_jax_match_theory():
    p, a = np.array([0.5, 0.3, 0.2, 0.0]), np.array([1.0, -0.5, 0.3, 2.0])
    t = np.array([-0.5, 0.01, 0.3, 2.0])
    kl = S.tilted_kl(p, a, t)
    # KL ~ 1e-5 at t = 0.01 is a sum of O(1e-3) log differences: absolute round-off ~1e-16
    np.testing.assert_allclose(kl["forward"], [T.kl_forward(p, a, ti) for ti in t], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(kl["reverse"], [T.kl_reverse(p, a, ti) for ti in t], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(S.cgf_increment(p, a, t), kl["forward"], rtol=1e-12, atol=1e-15)


def test_logistic_series_jet_equals_the_log_partition_recursion():
    c = S.logistic_loss_taylor(2.0, 12)
    np.testing.assert_allclose(c, T.log_partition_taylor([0.0, -2.0], [0.0, -1.0], 12), rtol=1e-10, atol=1e-16)


def test_models_shapes_and_random_directions():
    x = jnp.asarray(_X[:3])
    for name in S.MODEL_NAMES:
        m = S.make_model(name, hidden=(8,))
        assert m is S.make_model(name, hidden=[8])  # canonical objects: static sweep configuration
        assert jax.eval_shape(lambda k: m.apply(m.init(k), x), jax.random.key(0)).shape == (3, 10)
    dirs = S.random_directions(jax.random.key(5), _P, 3)
    norms = np.sqrt(sum(np.sum(np.asarray(d) ** 2, axis=tuple(range(1, np.ndim(d)))) for d in dirs.values()))
    np.testing.assert_allclose(norms, 1.0, rtol=1e-12)
    cos = sum(np.sum(np.asarray(dirs[k][0]) * np.asarray(dirs[k][1])) for k in dirs)
    assert abs(cos) < 0.5  # independent directions in ~600 dimensions are nearly orthogonal


def test_domb_sykes_pair_and_truncation_error_on_the_binary_series():
    c = T.log_partition_taylor([1.5, 0.0], [2.0, 0.0], 24)
    exact = T.binary_radius(1.5, 2.0)
    assert T.domb_sykes_pair(c) == pytest.approx(exact, rel=1e-2)
    # the order-n truncation error shrinks like r^n inside the radius and grows outside it
    t = np.array([0.5, 2.0]) * exact
    vals = np.array([math.log(math.exp(1.5 + 2.0 * ti) + 1.0) for ti in t])
    err = T.taylor_truncation_error(c, t, vals)
    inside, outside = np.log(err[0, 12:]), np.log(err[1, 12:])
    assert np.polyfit(np.arange(12, 25), inside, 1)[0] == pytest.approx(math.log(0.5), abs=0.15)
    assert np.polyfit(np.arange(12, 25), outside, 1)[0] == pytest.approx(math.log(2.0), abs=0.15)


def _last_layer(v):
    keep = {k: (np.asarray(w) if k in ("W1", "b1") else np.zeros(np.shape(w))) for k, w in v.items()}
    n = math.sqrt(sum(float(np.sum(w**2)) for w in keep.values()))
    return {k: w / n for k, w in keep.items()}


def test_continued_model_is_the_analytic_piece_of_jet_and_the_real_forward_pass():
    x, y = _X[:8], _Y[:8]  # the shapes of the line_taylor contract row (order 2): its program is shared
    t = np.array([0.0, 1e-3, -2e-3])
    z = S.continued_logits(_MLP.apply, _P, _V, x, t)
    for j, tj in enumerate(t):  # real distances this small cross no ReLU kink: the real forward pass
        np.testing.assert_allclose(np.asarray(z[j]).real, R.mlp_logits({k: _P[k] + tj * _V[k] for k in _P}, x), rtol=1e-12)
        assert np.max(np.abs(np.asarray(z[j]).imag)) == 0
    c = np.asarray(S.line_taylor(_MLP.apply, _P, _V, x, y, 2))
    tc = 1e-3 * np.exp(0.7j)  # a complex distance: the continued loss follows the series to O(t^3)
    rows = np.arange(8)
    zc = np.asarray(S.continued_logits(_MLP.apply, _P, _V, x, np.full(1, tc)))[0]
    loss = np.log(np.exp(zc).sum(axis=1)) - zc[rows, y]
    np.testing.assert_allclose(loss, c[:, 0] + c[:, 1] * tc + c[:, 2] * tc**2, rtol=0, atol=1e-8)
    real = S.continued_line_loss(_MLP.apply, _P, _V, x, y, rows, np.full(8, 1e-3))
    np.testing.assert_allclose(real, c[:, 0] + c[:, 1] * 1e-3 + c[:, 2] * 1e-6, rtol=0, atol=1e-8)


def test_batch_norm_rows_equal_the_whole_batch_continuation():
    # the batch-normalized CNN's continuation evaluates one sample per distance with the batch statistics from
    # the patch moments; it must be the whole batch's continued logits to round-off, at real and complex t
    bn = S.make_model("cnn_bn")
    params = bn.init(jax.random.key(4))
    v, x = _unit(params, phase=0.4), _X[:20]
    h = jax.lax.conv_general_dilated(jnp.asarray(x).reshape(-1, 8, 8, 1), params["K"], (1, 1), "SAME",
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))
    mu, var = SM._patch_stats(jnp.asarray(x), params["K"])
    np.testing.assert_allclose(mu, h.mean(axis=(0, 1, 2)), rtol=1e-12)
    np.testing.assert_allclose(var, h.var(axis=(0, 1, 2)), rtol=1e-12)
    t = np.array([0.0, 0.3, 0.2 + 0.5j, -0.7j, 1.1 * np.exp(2.0j)])
    rows = np.array([0, 7, 13, 5, 19])
    whole = np.asarray(S.continued_logits(bn.apply, params, v, x, t))[np.arange(5), rows]
    np.testing.assert_allclose(SC._continued_rows(bn.apply, params, v, x, rows, t), whole, rtol=1e-12, atol=1e-12)


def test_normalization_branch_points_are_sympys_roots_of_the_variance():
    sym = T.normalizer_branch_points()
    assert sym["variance_residual"] == 0 and sym["lagrange_residual"] == 0 and sym["modulus_residual"] == 0
    assert sym["root_residual"] == [0, 0]
    rng = np.random.default_rng(3)
    h0, hd = rng.normal(size=(3, 5)), rng.normal(size=(3, 5))
    got = T.normalization_branch_points(h0, hd, -1, 1e-2)
    tt = sp.Symbol("t")
    solved = sym["solved"]
    for i in range(3):
        # sympy's own polynomial Var(h0 + t hd) + eps of the five values, solved numerically to 30 digits
        h = [sp.Float(a, 30) + tt * sp.Float(b, 30) for a, b in zip(h0[i], hd[i])]
        q = sum((x - sum(h) / 5) ** 2 for x in h) / 5 + sp.Rational(1, 100)
        roots = sorted((complex(r) for r in sp.Poly(sp.expand(q), tt).nroots(n=30)), key=lambda r: -r.imag)
        # float64 moments of five O(1) numbers and one square root: ~1e-15 relative
        np.testing.assert_allclose(got[i], roots, rtol=1e-13)
        # and sympy's solution of c t^2 + 2 b t + a + eps, at NumPy's population moments
        u, w = h0[i] - h0[i].mean(), hd[i] - hd[i].mean()
        at = {T.norm_a: np.mean(u * u), T.norm_b: np.mean(u * w), T.norm_c: np.mean(w * w), T.norm_eps: 1e-2}
        both = sorted((complex(r.subs(at).evalf()) for r in solved), key=lambda r: -r.imag)
        np.testing.assert_allclose(got[i], both, rtol=1e-13)
    # groups over several axes (a batch norm's batch and pixels): the same as the flattened group
    x0, xd = rng.normal(size=(4, 6, 2)), rng.normal(size=(4, 6, 2))
    np.testing.assert_allclose(T.normalization_branch_points(x0, xd, (0, 1), 1e-3),
                               T.normalization_branch_points(x0.reshape(24, 2), xd.reshape(24, 2), 0, 1e-3), rtol=1e-14)
    # an activation that does not move (hd constant over the group) has no branch point
    assert np.all(np.isinf(T.normalization_branch_points(h0, np.ones_like(h0), 1, 1e-5)))


def _conv3x3(x, kernel):
    """The 3x3 zero-padded cross-correlation of 8x8 images with kernel (3, 3, 1, C), in NumPy."""
    img = np.pad(np.asarray(x).reshape(-1, 8, 8), ((0, 0), (1, 1), (1, 1)))
    return sum(img[:, i:i + 8, j:j + 8, None] * np.asarray(kernel)[i, j, 0] for i in range(3) for j in range(3))


@pytest.mark.parametrize("name", ["mlp_ln", "cnn_bn"])
def test_normalization_branch_point_on_the_model_is_the_closed_form(name):
    """The nearest singularity of the continued logits located on the model (zeros of its square roots' arguments,
    refined on 1/sum_k z_k^2) against the closed form from NumPy moments of the first layer: per sample for the
    layer norm, the nearest channel for the batch norm (every sample the same)."""
    model = S.make_model(name, hidden=(8,))
    rng = np.random.default_rng(6)
    params = {k: np.asarray(w) + 0.2 * rng.normal(size=np.shape(w)) for k, w in model.init(jax.random.key(6)).items()}
    v, x = _unit(params, phase=0.9), _X[:6]
    rows = np.arange(6)
    out = S.normalization_branch_point(model.apply, params, v, x, rows)
    if name == "mlp_ln":
        closed = T.normalization_branch_points(x @ params["W0"] + params["b0"], x @ v["W0"] + v["b0"], -1, 1e-5)[:, 0]
        assert np.all(out["count"] == 1)  # the other samples' normalizers are not singularities of this row
    else:
        per_channel = T.normalization_branch_points(_conv3x3(x, params["K"]), _conv3x3(x, v["K"]), (0, 1, 2), 1e-5)[:, 0]
        closed = np.full(6, per_channel[np.argmin(np.abs(per_channel))])
        assert np.all(out["count"] == 8)  # every channel's branch points are every sample's
    # float64 moments and a simple zero reached to |step| < 1e-15 |t|: ~1e-14; 1e-10 is far below eps's effect (~1e-5)
    np.testing.assert_allclose(out["point"], closed, rtol=1e-10)
    assert np.all(out["residual"] < 1e-12)
    # a ReLU MLP has no square root along the line: nothing to locate
    plain = S.normalization_branch_point(_MLP.apply, _P, _V, x, np.array([0]))
    assert np.isnan(plain["point"]).all() and plain["count"].tolist() == [0] and plain["candidates"].size == 0

@pytest.mark.parametrize("name", ["mlp_ln", "attention", "exponents"])
def test_one_sample_rows_equal_the_whole_batch_continuation(name):
    # every built-in model but cnn_bn maps each sample on its own, so its continuation evaluates one sample per
    # distance (apply.row); it must be the whole batch's row (a function without .row takes that path), and the
    # partition sums taken inside the compiled program must be NumPy's sums of the returned exponents. One
    # model per way of mixing within a sample (a layer norm across units, attention across tokens, the attention
    # exponents' own function); linear, mlp and cnn share their row rule with these (_one_sample, or cnn_bn's)
    if name == "exponents":  # the tanh variant's, which has the cosh rows besides the attention denominators
        params, f = S.make_model("attention").init(jax.random.key(5)), SM._attention_exponents("gelu_tanh")
    else:
        model = S.make_model(name, hidden=(16, 8))
        params, f = model.init(jax.random.key(5)), model.apply
    whole_batch = lambda p, x: f(p, x)  # noqa: E731
    assert hasattr(f, "row") and not hasattr(whole_batch, "row")
    v, x = _unit(params, phase=0.6), _X[:6]
    t = np.array([0.0, 0.4, 0.3 + 0.8j, -0.6j, 1.3 * np.exp(2.5j), 0.9 - 0.1j, 2.0j])
    rows = np.array([0, 5, 2, 3, 1, 5, 4])
    z = SC._continued_rows(f, params, v, x, rows, t)
    np.testing.assert_allclose(z, SC._continued_rows(whole_batch, params, v, x, rows, t), rtol=1e-12, atol=1e-12)
    w = np.exp(z - z.real.max(axis=-1, keepdims=True))
    part, scale = SC._continued_rows(f, params, v, x, rows, t, sums=True)
    np.testing.assert_allclose(part, w.sum(axis=-1), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(scale, np.abs(w).sum(axis=-1), rtol=1e-12, atol=1e-14)


def test_ghost_zeros_and_winding_numbers_on_a_last_layer_direction():
    x = _X[:8]
    v = _last_layer(_V)  # only the output layer moves: logits exactly linear in t, F_i entire
    z, a = (np.asarray(u) for u in S.directional_derivatives(_MLP.apply, _P, v, x))
    rows = np.array([0, 3, 5])
    exact = np.array([T.radius_details(z[i], a[i])["zero"] for i in rows])
    found = S.ghost_zeros(_MLP.apply, _P, v, x, rows, exact * (1.02 + 0.01j))
    np.testing.assert_allclose(found["zero"], exact, rtol=1e-9)
    assert np.all(found["residual"] < 1e-12)
    assert S.partition_margin(_MLP.apply, _P, v, x, rows, exact).max() < 1e-10
    R = np.abs(exact)
    assert S.zeros_inside(_MLP.apply, _P, v, x, rows, 0.97 * R)["count"].tolist() == [0, 0, 0]
    assert S.zeros_inside(_MLP.apply, _P, v, x, rows, 1.03 * R)["count"].tolist() == [2, 2, 2]


@pytest.mark.parametrize("act", ["gelu_tanh", "gelu"])
def test_attention_inner_singularity_is_a_gelu_pole_or_denominator_zero(act):
    """The tanh-approximate GELU brings poles (its inner partition functions include cosh u); the exact GELU is
    entire, so only the attention denominators remain, and the exponent function has no cosh rows."""
    att = S.make_model("attention", act=act)
    params = _away_from_kinks(att.init(jax.random.key(3)))
    v, x = _unit(params, phase=0.9), _X[:2]
    rows = np.array([0, 1])
    out = S.attention_singularities(params, v, x, rows, np.full(2, 20.0), act=act, points=256, steps=14)
    rad = out["radius"]
    assert np.all(np.isfinite(rad)) and np.all(out["count_in"] == 0) and np.all(out["max_step"] < 1.0)
    # inside the located circle no inner partition function vanishes; just outside one does (a conjugate pair)
    w_in, _ = SC._inner_windings(params, v, x, rows, 0.97 * rad, 256, act)
    w_out, _ = SC._inner_windings(params, v, x, rows, 1.03 * rad, 256, act)
    assert np.abs(w_in).sum() == 0 and np.all(np.abs(w_out).sum(axis=1) >= 2)
    # at the located point the nearest inner partition function (cosh u or an attention denominator) is ~0
    f, total = SC._continued_rows(SM._attention_exponents(act), params, v, x, rows, out["at"], sums=True)
    assert np.all((np.abs(f) / total).min(axis=-1) < 0.1)
    if act == "gelu":  # entire activation: the exponents are the scores only, every singularity a denominator zero
        assert np.asarray(SM._attention_exponents("gelu")(params, x)).shape == (2, 8, 8)
        assert np.all(out["denominator"])
    else:  # this draw: the tanh poles come before any denominator zero
        assert not np.any(out["denominator"])
    # a last-layer step leaves every inner quantity fixed: no singularity at all
    last = {k: (w if k in ("W", "b") else 0 * w) for k, w in v.items()}
    none = S.attention_singularities(params, last, x, rows, np.full(2, 20.0), act=act, points=64, steps=2)
    assert np.all(np.isinf(none["radius"]))


# ----------------------------------------------------------------------------- the exact (erf) GELU
def _gelu_ref(h):
    """x Φ(x) by scipy's erf: the exact GELU of PyTorch's F.gelu."""
    from scipy.special import erf

    return 0.5 * h * (1.0 + erf(h / math.sqrt(2.0)))


def _attention_ref(p, x, gelu=_gelu_ref):
    """NumPy forward pass of the attention model (8 row tokens, one head, mean pooling)."""
    p = {k: np.asarray(w) for k, w in p.items()}
    tok = np.asarray(x).reshape(-1, 8, 8) @ p["E"] + p["pos"]
    q, k, v = tok @ p["Q"], tok @ p["Kw"], tok @ p["V"]
    s = q @ np.swapaxes(k, 1, 2) / math.sqrt(16)
    w = np.exp(s - s.max(axis=-1, keepdims=True))
    h = tok + (w / w.sum(axis=-1, keepdims=True)) @ v
    return gelu(h).mean(axis=1) @ p["W"] + p["b"]


def test_erf_gelu_is_the_default_and_the_paper_models_use_it():
    """make_model's attention model and the temperature MLP use the exact GELU (the paper's PyTorch models); the tanh
    form is a named variant. The two differ by up to ~5e-4 (a test that would not see the swap is no test)."""
    assert S.make_model("attention") is S.make_model("attention", act="gelu")
    h = np.linspace(-4, 4, 81)
    np.testing.assert_allclose(np.asarray(SM._ACTS["gelu"](jnp.asarray(h))), _gelu_ref(h), rtol=1e-13, atol=1e-15)
    assert np.max(np.abs(np.asarray(SM._ACTS["gelu_tanh"](jnp.asarray(h))) - _gelu_ref(h))) > 1e-4
    # the temperature study builds its MLP with act="gelu": that model's logits are the exact GELU's
    mlp = S.make_model("mlp", hidden=(8,), act="gelu")
    p = {k: np.asarray(w) for k, w in mlp.init(jax.random.key(2)).items()}
    ref = _gelu_ref(_X @ p["W0"] + p["b0"]) @ p["W1"] + p["b1"]
    np.testing.assert_allclose(np.asarray(mlp.apply(p, _X)), ref, rtol=1e-12, atol=1e-13)


def test_erf_gelu_attention_logits_and_rho_a_match_a_scipy_reference():
    """Logits of the exact-GELU attention model against the NumPy forward pass with scipy's erf, and ρ_a (JAX
    JVP) against central differences of that reference (O(h²) ~ 1e-10 relative at h = 1e-5)."""
    att = S.make_model("attention")
    p = _away_from_kinks(att.init(jax.random.key(7)))
    v = _unit(p, phase=0.3)
    x = _X[:16]
    np.testing.assert_allclose(np.asarray(att.apply(p, x)), _attention_ref(p, x), rtol=1e-12, atol=1e-13)
    h = 1e-5
    a = (_attention_ref({k: p[k] + h * v[k] for k in p}, x) - _attention_ref({k: p[k] - h * v[k] for k in p}, x)) / (2 * h)
    rho_ref = math.pi / np.max(a.max(axis=1) - a.min(axis=1))
    assert float(S.rho_a(att.apply, p, v, x)) == pytest.approx(rho_ref, rel=1e-8)
    # and the tanh variant is a different model (its logits differ from the exact GELU's reference)
    tanh = S.make_model("attention", act="gelu_tanh")
    assert np.max(np.abs(np.asarray(tanh.apply(p, x)) - _attention_ref(p, x))) > 1e-6


def test_erf_gelu_continues_to_complex_steps_as_mpmath_says():
    """The continuation of the exact GELU at complex arguments (scipy's Faddeeva erf through a host callback)
    against mpmath's erfc, and the continued attention logits at a complex step against the NumPy reference
    evaluated with mpmath's complex erf (independent of scipy and of JAX)."""
    import mpmath

    zs = np.array([0.3 + 0.2j, -1.5 + 2.0j, 2.5 - 1.0j, -0.2 - 3.0j])
    got = np.asarray(SC._complex_erf("erfc", jnp.asarray(zs)))
    ref = np.array([complex(mpmath.erfc(complex(z))) for z in zs])
    np.testing.assert_allclose(got, ref, rtol=1e-12)
    att = S.make_model("attention")
    p = _away_from_kinks(att.init(jax.random.key(7)))
    v = _unit(p, phase=0.3)
    x = _X[:2]
    t = 0.4 + 0.3j
    cerf = np.vectorize(lambda z: complex(mpmath.erf(complex(z))))
    ref = _attention_ref({k: p[k] + t * v[k] for k in p}, x, gelu=lambda h: 0.5 * h * (1.0 + cerf(h / math.sqrt(2.0))))
    np.testing.assert_allclose(np.asarray(S.continued_logits(att.apply, p, v, x, np.array([t])))[0], ref, rtol=1e-11)


def test_tanh_gelu_poles_where_theory_puts_them_and_the_exact_gelu_has_none():
    """The continued tanh GELU blows up at the pole gelu_tanh_pole_distance locates (a root of u(x) = ±iπ/2 nearest
    x0, searched on its circle), while the exact GELU stays bounded there."""
    for x0 in (-1.0, 0.5, 2.0):
        rho = float(T.gelu_tanh_pole_distance(x0))
        circle = x0 + rho * np.exp(1j * np.linspace(0, 2 * np.pi, 20001))
        tanh_vals = np.abs(np.asarray(SM._ACTS["gelu_tanh"](jnp.asarray(circle))))
        erf_vals = np.abs(0.5 * circle * np.asarray(SC._complex_erf("erfc", jnp.asarray(-circle / math.sqrt(2)))))
        assert tanh_vals.max() > 1e3 * np.median(tanh_vals)  # a pole on the circle
        inner = x0 + 0.9 * rho * np.exp(1j * np.linspace(0, 2 * np.pi, 2001))
        assert np.abs(np.asarray(SM._ACTS["gelu_tanh"](jnp.asarray(inner)))).max() < 1e2  # none inside
        assert erf_vals.max() < 1e3 * np.median(erf_vals)  # entire: nothing special on that circle


# ----------------------------------------------------------------------------- the authors' Table 1 setting
def test_authors_batch_norm_closed_form_gradient_matches_reverse_mode():
    """The CNN+BN's training-mode batch normalization is differentiated by a closed form (custom VJP); reverse mode
    through the forward formula is the independent reference, in float64, for cotangents on the output and on both
    returned statistics, and the forward is the evaluation-mode formula at the batch's own statistics."""
    rng = np.random.default_rng(5)
    h = jnp.asarray(rng.normal(1.0, 2.0, size=(7, 9, 4)))
    g, c = jnp.asarray(rng.normal(size=4)), jnp.asarray(rng.normal(size=4))
    wy, wm, wv = (jnp.asarray(rng.normal(size=shape)) for shape in ((7, 9, 4), (4,), (4,)))

    def plain(h, g, c):
        mu = h.mean(axis=(0, 1))
        var = ((h - mu) ** 2).mean(axis=(0, 1))
        return (h - mu) / jnp.sqrt(var + SA._AG_EPS) * g + c, mu, var

    def scalar(fn):
        return lambda h, g, c: sum(jnp.sum(w * o) for w, o in zip((wy, wm, wv), fn(h, g, c)))

    got = jax.grad(scalar(SA._ag_bn_train), argnums=(0, 1, 2))(h, g, c)
    want = jax.grad(scalar(plain), argnums=(0, 1, 2))(h, g, c)
    for a, b in zip(got, want):  # two float64 evaluations of the same derivative: round-off of sums of 63 terms
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-11, atol=1e-12)
    y, mu, var = SA._ag_bn_train(h, g, c)
    np.testing.assert_array_equal(np.asarray(y), np.asarray(SA._ag_batch_norm({"g": g, "c": c}, h, (mu, var))[0]))


def test_authors_models_conv_batch_norm_and_one_key_attention():
    """The 1-d convolution is PyTorch's Conv1d (a cross-correlation with padding 1: a NumPy sum over the three taps of
    the zero-padded input, in float64, as the reference), batch normalization uses the batch's biased variance and
    hands the unbiased one to the running average, and the one-token Transformer's attention softmax over a single
    key is 1 (so q and k do not matter)."""
    p = SA._ag_init("cnn1d_bn", jax.random.key(0))
    h = jnp.asarray(np.random.default_rng(0).normal(size=(5, 64, 32)), dtype=jnp.float32)
    w, hp = np.asarray(p["conv2"]["W"], np.float64), np.pad(np.asarray(h, np.float64), ((0, 0), (1, 1), (0, 0)))
    ref = sum(hp[:, j:j + 64, :] @ w[j] for j in range(3)) + np.asarray(p["conv2"]["b"], np.float64)
    # float32 sums of 96 terms of size ~0.1-1: round-off ~1e-6 relative to the terms
    np.testing.assert_allclose(np.asarray(SA._ag_conv(p["conv2"], h)), ref, rtol=2e-5, atol=2e-5)
    out, (mu, var) = SA._ag_batch_norm({"g": jnp.ones(32), "c": jnp.zeros(32)}, h, None)
    hn = np.asarray(h, dtype=np.float64)
    np.testing.assert_allclose(np.asarray(var), hn.var(axis=(0, 1), ddof=1), rtol=1e-4)
    np.testing.assert_allclose(np.asarray(out).std(axis=(0, 1)), 1.0, rtol=1e-3)
    x = jnp.asarray(S.archgrid_digits()["x_train"][:6])
    tp = SA._ag_init("transformer", jax.random.key(1))
    qk = jax.tree_util.tree_map(jnp.zeros_like, tp)
    qk["qkv"] = {"W": jnp.zeros_like(tp["qkv"]["W"]).at[:, :64].set(1.0), "b": jnp.zeros_like(tp["qkv"]["b"])}
    _, da = jax.jvp(lambda q: SA._ag_apply("transformer", q, x)[0], (tp,), (qk,))  # move only q and k
    assert float(jnp.max(jnp.abs(da))) == 0.0
    # counted from the authors' PyTorch modules: e.g. the Transformer 2080 + 3168 + 1056 + 4224 + 4128 + 64 + 64 + 330
    for name, n_par in (("transformer", 15_114), ("mlp_ln3", 13_514), ("cnn1d_bn", 3_690)):
        leaves = jax.tree_util.tree_leaves(SA._ag_init(name, jax.random.key(0)))
        assert sum(w.size for w in leaves) == n_par  # the authors' models' parameter counts
        assert all(w.dtype == jnp.float32 for w in leaves)


def test_authors_running_statistics_settle_on_a_repeated_batch_at_the_momentum_rate():
    """PyTorch's running average ``(1 - m) old + m batch`` (m = 0.1) has the batch's statistics as its fixed point and
    reaches it at the rate 1 - m: fed one batch's (mean, variance) 200 times from PyTorch's start (0, 1), the gap is
    0.9^200 ~ 7e-10 of the start's. A running sum (no 1 - m) or a wrong rate is off by orders; the Table 1 medians
    could not see the sum (the CNN+BN's evaluation statistics then grow ~20x, a near-uniform rescale)."""
    rng = np.random.default_rng(3)
    batch = (jnp.asarray(rng.normal(size=32), jnp.float32), jnp.asarray(rng.uniform(0.5, 2.0, size=32), jnp.float32))
    run = (jnp.zeros(32, jnp.float32), jnp.ones(32, jnp.float32))
    first = SA._ag_running(run, batch)
    for _ in range(199):
        run = SA._ag_running(run, batch)
    for got, want in zip(run, batch):
        # float32 steps: round-off ~1e-7 per step, not compounding (a contraction)
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-5)
    # one step moves a tenth of the way (the rate itself, not only the fixed point)
    np.testing.assert_allclose(np.asarray(first[1]), 0.9 + 0.1 * np.asarray(batch[1]), rtol=1e-6)


def test_authors_runs_controller_caps_the_step_and_clipping_is_plain_adam_on_small_gradients():
    d = S.archgrid_digits()
    assert d["x_test"].shape == (359, 64) and d["x_train"].shape == (1438, 64)  # the first 20 % is the test split
    out = S.archgrid_runs("mlp_ln3", seeds=[0], steps=4, spike_step=2, factor=1e4)
    ctrl = out["mode"] == 2
    assert out["test_acc"].shape == (3, 4) and np.all(np.isnan(out["rho_a"][~ctrl]))
    # the controller's step lr·s·||g|| never exceeds ρ_a; at the spike it cuts the step
    scale = out["scale"][ctrl][0]
    assert scale[2] < 1e-2 and np.all(scale <= 1)
    assert not np.any(out["diverged"][ctrl])
    # Table 1's rule: divergent iff the final loss exceeds 10 (or is not finite)
    np.testing.assert_array_equal(out["diverged"], ~np.isfinite(out["final_loss"]) | (out["final_loss"] > 10))
    with pytest.raises(ValueError, match="name"):
        S.archgrid_runs("resnet18", seeds=[0])


def test_authors_cnn_in_evaluation_mode_uses_each_layers_own_running_statistics():
    """The CNN+BN's evaluation-mode forward pass (the controller's JVP runs it) against a float64 NumPy forward pass
    from the definitions: per layer, the three-tap convolution, batch normalization with *that layer's* running
    (mean, var) -- the two layers get different statistics here, so a swapped index shows -- ReLU, then the mean over
    positions and the read-out."""
    p = SA._ag_init("cnn1d_bn", jax.random.key(2))
    rng = np.random.default_rng(1)
    stats = tuple((jnp.asarray(rng.normal(size=32), jnp.float32), jnp.asarray(rng.uniform(0.5, 2.0, 32), jnp.float32))
                  for _ in range(2))
    x = S.archgrid_digits()["x_train"][:7]
    got = np.asarray(SA._ag_apply("cnn1d_bn", p, jnp.asarray(x), stats)[0], np.float64)
    f = {k: {n: np.asarray(w, np.float64) for n, w in v.items()} for k, v in p.items()}
    h = np.asarray(x, np.float64)[:, :, None]
    for i in (1, 2):
        w, hp = f[f"conv{i}"]["W"], np.pad(h, ((0, 0), (1, 1), (0, 0)))
        h = sum(hp[:, j:j + 64, :] @ w[j] for j in range(3)) + f[f"conv{i}"]["b"]
        mu, var = (np.asarray(s_, np.float64) for s_ in stats[i - 1])
        h = np.maximum((h - mu) / np.sqrt(var + 1e-5) * f[f"bn{i}"]["g"] + f[f"bn{i}"]["c"], 0.0)
    ref = h.mean(axis=1) @ f["head"]["W"] + f["head"]["b"]
    # float32 forward pass of ~100-term sums of O(1) terms: round-off ~1e-6 relative to the logits' scale
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4 * np.abs(ref).max())


def test_authors_controller_radius_is_taken_along_the_unit_gradient_direction():
    r"""The controller's :math:`\rho_a` at a point against finite differences of the logits in float64 along
    :math:`-g/\|g\|` (normalized here in NumPy): :math:`\rho_a=\pi/\max_i(\max_k a_{ik}-\min_k a_{ik})`, and its scale
    :math:`\min(1,\rho_a/(\mathrm{lr}\,\|g\|))`. An unnormalized direction would scale :math:`\rho_a` by
    :math:`1/\|g\|`."""
    d = S.archgrid_digits()
    x, y = jnp.asarray(d["x_train"][:64]), jnp.asarray(d["y_train"][:64])
    p = SA._ag_init("mlp_ln3", jax.random.key(3))
    g = jax.grad(lambda q: SD._cross_entropy(SA._ag_apply("mlp_ln3", q, x)[0], y))(p)
    g_norm = SD._tree_norm(g)
    lr = 50.0  # large enough that the cap binds (scale < 1), so the scale is checked too
    rho, scale = (float(v) for v in SA._ag_controller("mlp_ln3", p, g, g_norm, (), jnp.float32(lr), x))
    p64 = jax.tree_util.tree_map(lambda w: w.astype(jnp.float64), p)
    g64 = jax.tree_util.tree_map(lambda w: np.asarray(w, np.float64), g)
    norm = math.sqrt(sum(float((w ** 2).sum()) for w in jax.tree_util.tree_leaves(g64)))
    x64, h = x.astype(jnp.float64), 1e-5

    def logits(t):
        return np.asarray(SA._ag_apply("mlp_ln3", jax.tree_util.tree_map(lambda w, u: w - t * u / norm, p64, g64),
                                       x64)[0])

    a = (logits(h) - logits(-h)) / (2 * h)  # central differences: error O(h^2) ~ 1e-10 relative
    rho_ref = math.pi / float(np.max(a.max(axis=1) - a.min(axis=1)))
    # the JVP runs in float32 (the authors' setting): ~1e-6 relative; the float32 gradient's direction ~1e-6 too
    assert rho == pytest.approx(rho_ref, rel=1e-3)
    assert scale < 1 and scale == pytest.approx(min(1.0, rho_ref / (lr * norm)), rel=1e-3)


def test_bench_case_numpy_reference_agrees():
    (case,) = R.bench_cases("small")
    case.check(np.asarray(case.run_jax()), case.run_numpy())


def test_median_band_coverage_against_the_checks_own_estimator():
    """The simulated coverage of Table 1's median band against a loop through the checks' own :func:`_median_se`
    (floor 0), on independent normal samples: two Monte Carlo estimates of one probability, within 4 binomial SE of
    their difference (p ~ 0.99 at 5 seeds: SE ~ 0.0018). Dropping the band's sqrt 2 gives ~0.977, a red."""
    from paper_checks.softmax_radius.spike import _median_se, median_band_coverage

    n, z, trials = 5, 4.0, 6000
    vec = median_band_coverage(n, z, np.random.default_rng(0), trials=trials)
    rng = np.random.default_rng(1)
    held = 0
    for _ in range(trials):
        a, b = rng.standard_normal((2, n))
        (ma, sa), (mb, _) = _median_se(a, rng, 0.0), _median_se(b, rng, 0.0)
        held += abs(ma - mb) <= z * math.sqrt(2) * sa
    loop = held / trials
    p = (vec + loop) / 2
    assert abs(vec - loop) <= 4 * math.sqrt(2 * p * (1 - p) / trials)
    assert vec < 0.999  # a band that is not the normal 99.994 %: what the checks' text says
