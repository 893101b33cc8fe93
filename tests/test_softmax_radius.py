"""Unit tests for theory/sims softmax_radius (the claims themselves run in tests/test_claims.py)."""
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import sympy as sp

import sims  # noqa: F401
from sims import softmax_radius as S
from theory import softmax_radius as T


# ----------------------------------------------------------------------------- sympy, exact
def test_binary_zeros_and_radius_exact():
    assert T.binary_zeros()["residual"] == 0
    rho = T.binary_radius_expr()
    assert sp.simplify(rho - sp.sqrt(T.delta**2 + sp.pi**2) / T.Dpos) == 0
    m = T.binary_radius_minimum()
    assert m["argmin"] == [0] and sp.simplify(m["minimum"] - sp.pi / T.Dpos) == 0
    fp = T.binary_flip_point()
    assert fp["re_t0_minus_flip"] == 0
    assert sp.simplify(fp["im_t0"] - sp.pi / (T.a1 - T.a2)) == 0


def test_half_plane_and_constants_exact():
    hp = T.half_plane_lower_bound()
    assert hp["term_residual"] == 0
    assert sp.simplify(hp["strip_half_width"] - sp.pi / T.Dpos) == 0
    c = T.kl_remainder_constants()
    assert sp.simplify(c["forward"] - 1 / (36 * sp.sqrt(3))) == 0
    assert sp.simplify(c["reverse"] - c["paper"]) == 0
    ext = T.third_moment_extremum()
    assert sp.simplify(ext["max"] - ext["bound"]) == 0
    assert sp.simplify(ext["argmax"][0] - (3 - sp.sqrt(3)) / 6) == 0


def test_kl_identities_two_classes():
    ident = T.kl_identities(2)
    assert ident["forward_residual"] == 0 and ident["reverse_residual"] == 0
    assert abs(float(ident["paper_label_residual_at_witness"])) > 1e-3


def test_logistic_curvature_sympy_vs_jax_grad():
    sc = T.logistic_scales()
    assert sc["singularity_residual"] == 0
    f = lambda x: jnp.log1p(jnp.exp(-x))  # noqa: E731
    fpp = jax.grad(jax.grad(f))
    for d in np.random.default_rng(0).uniform(-8, 12, 5):
        assert float(sc["fpp"].subs(sp.Symbol("x"), d)) == pytest.approx(float(fpp(d)), rel=1e-12)
        assert float(sc["inv_curvature"].subs(T.delta, d)) == pytest.approx(1 / float(fpp(d)), rel=1e-12)


# ----------------------------------------------------------------------------- numerics
def test_radius_matches_binary_closed_form_and_bounds():
    rng = np.random.default_rng(1)
    for _ in range(10):
        z, a = rng.normal(size=2) * 3, rng.normal(size=2)
        assert T.radius(z, a) == pytest.approx(T.binary_radius(z[0] - z[1], a[0] - a[1]), rel=1e-10)
    for _ in range(10):
        n = int(rng.integers(3, 9))
        z, a = rng.normal(size=n) * 2, rng.normal(size=n)
        det = T.radius_details(z, a)
        assert det["certified"] and det["residual"] < 1e-10
        assert det["radius"] >= T.lower_bound(a) * (1 - 1e-12)
        assert abs(det["zero"]) == pytest.approx(det["radius"], rel=1e-12)


def test_radius_batched_equals_loop_and_degenerate_inf():
    rng = np.random.default_rng(2)
    z, a = rng.normal(size=(4, 5)), rng.normal(size=(4, 5))
    batched = T.radius(z, a)
    assert np.allclose(batched, [T.radius(zi, ai) for zi, ai in zip(z, a)], rtol=0)
    assert T.radius([0.3, 1.0, -2.0], [1.0, 1.0, 1.0]) == math.inf
    assert T.binary_radius(0.5, 0.0) == math.inf
    lb = T.lower_bound(np.array([[1.0, 1.0], [0.0, 2.0]]))
    assert lb[0] == math.inf and lb[1] == pytest.approx(math.pi / 2)


def test_log_partition_taylor_vs_jax_derivatives():
    rng = np.random.default_rng(3)
    z, a = rng.normal(size=4), rng.normal(size=4)
    c = T.log_partition_taylor(z, a, 5)
    g = lambda t: jax.nn.logsumexp(jnp.asarray(z) + jnp.asarray(a) * t)  # noqa: E731
    d = g
    for n in range(6):
        assert c[n] == pytest.approx(float(d(0.0)) / math.factorial(n), rel=1e-10, abs=1e-14)
        d = jax.grad(d)


def test_taylor_estimates_recover_binary_radius():
    c = T.log_partition_taylor([1.5, 0.0], [2.0, 0.0], 200)
    exact = T.binary_radius(1.5, 2.0)
    assert T.cauchy_hadamard_radius(c) == pytest.approx(exact, rel=1e-2)
    assert T.prony_radius(c[:25]) == pytest.approx(exact, rel=1e-4)


def test_strip_margin_obeys_half_plane_bound():
    rng = np.random.default_rng(4)
    z, a = rng.normal(size=6), rng.normal(size=6)
    da = a.max() - a.min()
    y = np.linspace(-0.99, 0.99, 21) * math.pi / da
    t = np.linspace(-5, 5, 31)[None, :] + 1j * y[:, None]
    assert np.all(T.strip_margin(z, a, t) >= np.cos(da * np.abs(y) / 2)[:, None] - 1e-14)


@pytest.mark.parametrize("call, match", [
    (lambda: T.binary_radius(np.nan, 1.0), "delta"),
    (lambda: T.binary_radius(1.0, "x"), "delta_a"),
    (lambda: T.lower_bound(1.0), "a"),
    (lambda: T.radius([0.0, 1.0], [1.0]), "z, a"),
    (lambda: T.radius(np.zeros((2, 2, 2)), np.zeros((2, 2, 2))), "z"),
    (lambda: T.log_partition_taylor([0.0], [1.0], 0), "order"),
    (lambda: T.cauchy_hadamard_radius([1.0, 2.0]), "coeffs"),
    (lambda: T.prony_radius(np.ones(10), n_min=9), "n_min"),
    (lambda: T.third_central_moment([-1.0, 2.0], [0.0, 1.0]), "p"),
    (lambda: S.make_model("resnet"), "name"),
    (lambda: S.make_model("mlp", act="swish"), "act"),
    (lambda: S.make_model("mlp", hidden=(0,)), "hidden"),
    (lambda: S.mode_code("adamw"), "mode"),
    (lambda: S.digits(test_fraction=1.5), "test_fraction"),
    (lambda: S.bench_cases("huge"), "scale"),
])
def test_bad_inputs_raise(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()


# ----------------------------------------------------------------------------- JAX sims
@pytest.fixture(scope="module")
def small():
    d = S.digits()
    x, y = jnp.asarray(d["x_train"][:64]), jnp.asarray(d["y_train"][:64])
    model = S.make_model("mlp", hidden=(16,))
    params = model.init(jax.random.key(0))
    v = S.normalize(jax.tree_util.tree_map(lambda w: jnp.cos(jnp.arange(w.size).reshape(w.shape) * 1.3), params))
    return model, params, v, x, y


def test_jvp_matches_finite_difference(small):
    model, params, v, x, y = small
    z, a = S.directional_derivatives(model.apply, params, v, x)
    h = 1e-6
    plus = model.apply(jax.tree_util.tree_map(lambda w, d: w + h * d, params, v), x)
    minus = model.apply(jax.tree_util.tree_map(lambda w, d: w - h * d, params, v), x)
    np.testing.assert_allclose(np.asarray(a), np.asarray((plus - minus) / (2 * h)), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(np.asarray(z), np.asarray(model.apply(params, x)))
    # rho_a: jit equals eager, and equals the theory lower bound's bottleneck sample
    eager = float(S.rho_a(model.apply, params, v, x))
    jitted = float(jax.jit(lambda p, d: S.rho_a(model.apply, p, d, x))(params, v))
    assert jitted == pytest.approx(eager, rel=1e-13)
    assert eager == pytest.approx(float(np.min(T.lower_bound(np.asarray(a)))), rel=1e-13)


def test_sweep_run_grid_equals_loop(small):
    model, params, v, x, y = small
    dirs = S.random_directions(jax.random.key(5), params, 2)
    assert float(S.tree_norm(jax.tree_util.tree_map(lambda t: t[1], dirs))) == pytest.approx(1.0)
    r = np.array([0.0, 0.5, 2.0])
    out = S.one_step_sweep(model.apply, params, dirs, x, y, r)
    assert np.allclose(out["ratio"][:, 0], 1.0)
    @jax.jit
    def loss_after(vi, rr):
        rho = S.rho_a(model.apply, params, vi, x)
        p = jax.tree_util.tree_map(lambda w, d: w + rr * rho * d, params, vi)
        return S.cross_entropy(model.apply(p, x), y)

    for i in range(2):  # a plain Python loop over directions and r
        vi = jax.tree_util.tree_map(lambda t: t[i], dirs)
        for j, rr in enumerate(r):
            assert out["ratio"][i, j] == pytest.approx(float(loss_after(vi, rr)) / out["loss0"], rel=1e-10)
    assert S.onset(r, np.array([[1.0, 1.05, 3.0], [1.0, np.nan, 1.0], [1.0, 1.0, 1.0]])).tolist() == [2.0, 0.5, math.inf]
    with pytest.raises(ValueError, match="r_grid"):
        S.one_step_sweep(model.apply, params, dirs, x, y, np.array([-1.0]))


def test_line_taylor_linear_model_equals_log_partition_series():
    d = S.digits()
    x, y = jnp.asarray(d["x_train"][:5]), jnp.asarray(d["y_train"][:5])
    model = S.make_model("linear")
    params = jax.tree_util.tree_map(lambda w: 3 * w, model.init(jax.random.key(1)))
    v = S.normalize(jax.tree_util.tree_map(lambda w: jnp.sin(jnp.arange(w.size).reshape(w.shape)), params))
    c = np.asarray(jax.jit(lambda p, d: S.line_taylor(model.apply, p, d, x, y, 6))(params, v))
    z, a = (np.asarray(t) for t in S.directional_derivatives(model.apply, params, v, x))
    for i in range(5):
        ref = T.log_partition_taylor(z[i], a[i], 6)
        ref[0] -= z[i, int(y[i])]
        ref[1] -= a[i, int(y[i])]
        np.testing.assert_allclose(c[i], ref, rtol=1e-9, atol=1e-12)
    with pytest.raises(ValueError, match="order"):
        S.line_taylor(model.apply, params, v, x, y, 0)


def test_train_jit_equals_eager_and_controller_caps_step():
    d = S.digits()
    data = {k: v[:80] for k, v in d.items()}
    model = S.make_model("linear")
    kw = dict(steps=3, batch=8, lr=0.5, spike_step=2, spike_factor=100.0)
    p_eager, tr_eager = S.train(jax.random.key(3), model, data, mode="controller", **kw)
    p_jit, tr_jit = jax.jit(lambda k: S.train(k, model, data, mode="controller", **kw))(jax.random.key(3))
    for name in p_eager:
        np.testing.assert_allclose(np.asarray(p_eager[name]), np.asarray(p_jit[name]), rtol=1e-12, atol=1e-14)
    scale, r = np.asarray(tr_jit["scale"]), np.asarray(tr_jit["r"])
    assert np.all(scale <= 1) and np.all(scale * r <= 1 + 1e-12)  # the taken step never exceeds rho_a
    assert scale[2] < 1  # the spike is the step the controller cuts
    with pytest.raises(ValueError, match="track_radius"):
        S.train(jax.random.key(0), model, data, mode="controller", track_radius=False, **kw)
    with pytest.raises(ValueError, match="mode"):
        S.train(jax.random.key(0), model, data, mode="sgd", **kw)


def test_models_shapes():
    x = jnp.asarray(S.digits()["x_train"][:3])
    for name in S.MODEL_NAMES:
        m = S.make_model(name, hidden=(8,))
        assert jax.eval_shape(lambda k: m.apply(m.init(k), x), jax.random.key(0)).shape == (3, 10)


def test_bench_case_numpy_reference_agrees():
    (case,) = S.bench_cases("small")
    case.check(np.asarray(case.run_jax()), case.run_numpy())
