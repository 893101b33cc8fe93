"""The shared curvature module (sims.hvp) against dense ``jax.hessian`` on a small nonlinear model."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from sims import hvp as H

# a small tanh network with a dict of parameters (any pytree must work), fixed data
_rng = np.random.default_rng(0)
X = jnp.asarray(_rng.normal(size=(12, 4)))
Y = jnp.asarray(_rng.normal(size=(12, 2)))
PARAMS = {"W1": jnp.asarray(0.7 * _rng.normal(size=(4, 3))), "b1": jnp.asarray(0.1 * _rng.normal(size=3)),
          "W2": jnp.asarray(0.7 * _rng.normal(size=(3, 2)))}
P = 4 * 3 + 3 + 3 * 2


def mlp_loss(p):
    r = jnp.tanh(X @ p["W1"] + p["b1"]) @ p["W2"] - Y
    return 0.5 * jnp.mean(jnp.sum(r * r, axis=1))


@pytest.fixture(scope="module")
def dense():
    Hd = np.asarray(jax.jit(lambda p: H.dense_hessian(mlp_loss, p))(PARAMS))
    return Hd, np.linalg.eigvalsh(Hd)


def test_dense_hessian_is_symmetric_and_sized(dense):
    Hd, _ = dense
    assert Hd.shape == (P, P)
    np.testing.assert_array_equal(Hd, Hd.T)


def test_dense_hessian_by_leaf_equals_jax_hessian_of_the_flat_loss(dense):
    # the columns are built one leaf at a time; jax.hessian on the raveled vector is the plain route
    Hd, _ = dense
    flat, unravel = jax.flatten_util.ravel_pytree(PARAMS)
    Hf = np.asarray(jax.jit(jax.hessian(lambda x: mlp_loss(unravel(x))))(flat))
    np.testing.assert_allclose(Hd, 0.5 * (Hf + Hf.T), rtol=1e-12, atol=1e-14)


def _spectra_cases():
    rng = np.random.default_rng(4)
    Q = np.linalg.qr(rng.normal(size=(24, 24)))[0]

    def sym(ev):
        return Q @ np.diag(ev) @ Q.T

    A = rng.normal(size=(24, 24))
    return {
        "random": A + A.T,
        "threefold top": sym(np.r_[np.full(3, 2.0), rng.uniform(-1, 1, 21)]),
        "gap 1e-12": sym(np.r_[1.0 + 1e-12, 1.0, rng.uniform(-1, 0.5, 22)]),
        "negative definite": sym(-rng.uniform(1, 2, 24)),
        "spiky psd": sym(np.r_[1e6, 1e-3 * rng.uniform(size=23)]),
        "huge": 1e200 * (A + A.T),
        "tiny": 1e-200 * (A + A.T),
        "diagonal": np.diag(np.arange(24.0)),
        "zero": np.zeros((24, 24)),
    }


def test_largest_eigenvalue_equals_lapack_to_round_off():
    cases = _spectra_cases()
    got = np.asarray(jax.jit(H.largest_eigenvalue)(jnp.asarray(np.stack(list(cases.values())))))   # a stack
    for (name, A), g in zip(cases.items(), got):
        ev = np.linalg.eigvalsh(A)
        # both are backward stable: |error| <= c P eps ||A||
        assert abs(g - ev[-1]) <= 24 * 4e-16 * max(np.abs(ev).max(), 1e-300), (name, g, ev[-1])
    # it resolves a 1e-12 gap: the second eigenvalue is far outside the error bound
    assert got[2] - 1.0 > 0.9e-12
    assert float(H.largest_eigenvalue(np.array([[3.0]]))) == 3.0
    assert float(H.largest_eigenvalue(np.array([[0.0, 1.0], [1.0, 0.0]]))) == pytest.approx(1.0, rel=1e-15)


def test_hvp_equals_dense_times_vector(dense):
    Hd, _ = dense
    v = jax.tree_util.tree_map(lambda a: jnp.asarray(_rng.normal(size=a.shape)), PARAMS)
    flat_v, _ = jax.flatten_util.ravel_pytree(v)
    hv = H.hvp(mlp_loss, PARAMS, v)
    assert jax.tree_util.tree_structure(hv) == jax.tree_util.tree_structure(PARAMS)
    flat_hv, _ = jax.flatten_util.ravel_pytree(hv)
    np.testing.assert_allclose(np.asarray(flat_hv), Hd @ np.asarray(flat_v), rtol=1e-11, atol=1e-13)


def test_top_eigenvalues_full_krylov_equal_dense(dense):
    _, ev = dense
    top = jax.jit(lambda p: H.top_eigenvalues(mlp_loss, p, jax.random.key(1), k=4, num_iter=P))(PARAMS)
    # a full Krylov space with reorthogonalization: exact up to eigvalsh round-off
    np.testing.assert_allclose(np.asarray(top), ev[::-1][:4], rtol=1e-10, atol=1e-12)


def test_top_eigenvalue_converges_before_full_krylov(dense):
    _, ev = dense
    top = jax.jit(lambda p: H.top_eigenvalues(mlp_loss, p, jax.random.key(2), k=1, num_iter=15))(PARAMS)
    # the top eigenvalue is isolated (gap ~ ev[-1] - ev[-2]); 15 of 21 steps converge it to round-off
    assert float(top[0]) == pytest.approx(ev[-1], rel=1e-9)


def _model_in(dtype):
    """The tanh network's loss, its parameters and its data, all in ``dtype``."""
    X_, Y_ = X.astype(dtype), Y.astype(dtype)

    def loss(p):
        r = jnp.tanh(X_ @ p["W1"] + p["b1"]) @ p["W2"] - Y_
        return 0.5 * jnp.mean(jnp.sum(r * r, axis=1))

    return loss, jax.tree_util.tree_map(lambda a: a.astype(dtype), PARAMS)


@pytest.mark.parametrize("dtype", [jnp.float32, jnp.float64])
def test_top_eigenvalue_in_the_models_dtype_equals_dense_jax_hessian(dtype):
    """A float32 model is computed in float32 (JAX's jvp refuses a float64 tangent for float32 weights)."""
    loss, params = _model_in(dtype)
    flat, unravel = jax.flatten_util.ravel_pytree(params)
    Hd = np.asarray(jax.jit(jax.hessian(lambda x: loss(unravel(x))))(flat))
    assert Hd.dtype == dtype
    ev = np.linalg.eigvalsh(0.5 * (Hd + Hd.T))  # LAPACK in the same precision
    top = jax.jit(lambda p: H.top_eigenvalues(loss, p, jax.random.key(1), k=2, num_iter=P))(params)
    assert top.dtype == dtype
    # Both sides are backward stable in `dtype`: each eigenvalue is exact for a matrix within
    # c P eps ||H|| of the Hessian (Lanczos with full reorthogonalization, Householder + QR in LAPACK),
    # and the two Hessians are the same derivatives evaluated with round-off eps. c = 8 covers both;
    # in float32 that is 2e-5 ||H||, in float64 4e-14 ||H||.
    tol = 8 * P * np.finfo(dtype).eps * np.abs(ev).max()
    np.testing.assert_allclose(np.asarray(top), ev[::-1][:2], rtol=0, atol=tol)
    # the tolerance separates the top two eigenvalues, so answering the second one would fail
    assert ev[-1] - ev[-2] > 10 * tol


def test_float32_hvp_takes_a_float64_direction_and_matches_the_float32_hessian():
    loss, params = _model_in(jnp.float32)
    flat, unravel = jax.flatten_util.ravel_pytree(params)
    Hd = np.asarray(jax.hessian(lambda x: loss(unravel(x)))(flat), dtype=np.float64)
    v = jax.tree_util.tree_map(lambda a: jnp.asarray(_rng.normal(size=a.shape)), PARAMS)  # float64
    hv = H.hvp(loss, params, v)
    flat_hv, _ = jax.flatten_util.ravel_pytree(hv)
    assert flat_hv.dtype == jnp.float32
    v32 = np.asarray(jax.flatten_util.ravel_pytree(v)[0], dtype=np.float32).astype(np.float64)
    # float32 round-off in every product: c P eps32 ||H|| ||v|| with c = 8
    tol = 8 * P * np.finfo(np.float32).eps * np.abs(Hd).sum(axis=1).max() * np.abs(v32).max()
    np.testing.assert_allclose(np.asarray(flat_hv, dtype=np.float64), Hd @ v32, rtol=0, atol=tol)
    est = H.hutchinson_trace(loss, params, jax.random.key(3), num_samples=4)
    assert est.estimate.dtype == jnp.float32


def test_lanczos_finds_repeated_eigenvalues():
    diag = jnp.array([5.0, 5.0, 5.0, 2.0, 1.0, 0.0, 0.0, -1.0])
    ritz = jax.jit(lambda k: H.lanczos(k, lambda v: diag * v, 8, 8))(jax.random.key(0))
    np.testing.assert_allclose(np.sort(np.asarray(ritz)), np.sort(np.asarray(diag)), atol=1e-10)


def test_hutchinson_within_its_standard_error(dense):
    Hd, _ = dense
    exact = float(np.trace(Hd))
    est = jax.jit(lambda p, k: H.hutchinson_trace(mlp_loss, p, k, num_samples=400))(PARAMS, jax.random.key(3))
    # Rademacher probes: Var(z^T H z) = 2 sum_{a != b} H_ab^2; the reported SE estimates sqrt(Var / m)
    se_theory = np.sqrt(2 * (np.sum(Hd**2) - np.sum(np.diag(Hd) ** 2)) / 400)
    assert float(est.se) == pytest.approx(se_theory, rel=0.25)  # SE of an SE from 400 probes ~ 4-10 %
    z = abs(float(est.estimate) - exact) / float(est.se)
    assert z < 4.0, f"Hutchinson {float(est.estimate):.4f} vs exact {exact:.4f}: {z:.1f} SE"
    # the estimate can fail: twice the trace is far outside the band
    assert abs(float(est.estimate) - 2 * exact) / float(est.se) > 4.0


def test_hutchinson_is_exact_for_diagonal_hessians():
    # z_a^2 = 1 for Rademacher probes, so a diagonal Hessian gives the trace with zero spread
    d = jnp.array([1.0, 2.0, 3.0])
    est = jax.jit(lambda k: H.hutchinson_trace(lambda x: 0.5 * jnp.sum(d * x * x), jnp.ones(3), k, num_samples=5))(
        jax.random.key(0))
    assert float(est.estimate) == pytest.approx(6.0, rel=1e-14) and float(est.se) < 1e-13


@pytest.mark.parametrize("call, param", [
    (lambda: H.top_eigenvalues(mlp_loss, PARAMS, jax.random.PRNGKey(0)), "key"),
    (lambda: H.top_eigenvalues(mlp_loss, PARAMS, jax.random.key(0), k=5, num_iter=4), "k"),
    (lambda: H.top_eigenvalues(mlp_loss, PARAMS, jax.random.key(0), num_iter=0), "num_iter"),
    (lambda: H.top_eigenvalues("loss", PARAMS, jax.random.key(0)), "loss_fn"),
    (lambda: H.hutchinson_trace(mlp_loss, PARAMS, jax.random.key(0), num_samples=1), "num_samples"),
    (lambda: H.hvp(mlp_loss, PARAMS, {"W1": jnp.ones((4, 3)), "b1": jnp.ones(3), "W2": jnp.ones((2, 3))}), "v"),
    (lambda: H.hvp(mlp_loss, PARAMS, jnp.ones(P)), "v"),
    (lambda: H.lanczos(jax.random.key(0), lambda v: v, 4, 5), "num_iter"),
    (lambda: H.lanczos(jax.random.key(0), lambda v: v, 4, 4, dtype=jnp.int32), "dtype"),
    (lambda: H.lanczos(jax.random.key(0), lambda v: v, 4, 4, dtype="float96x"), "dtype"),
    (lambda: H.dense_hessian(mlp_loss, {}), "params"),
    (lambda: H.largest_eigenvalue(np.ones((3, 4))), "matrix"),
    (lambda: H.largest_eigenvalue(np.full((2, 2), np.nan)), "matrix"),
])
def test_bad_input_names_the_parameter(call, param):
    with pytest.raises((ValueError, TypeError), match=param):
        call()


def _nan_loss(params):
    return jnp.sum(params ** 2) * jnp.nan


@pytest.mark.parametrize("call, param", [
    (lambda: H.lanczos(jax.random.key(0), lambda v: v * jnp.nan, 4, 3), "matvec"),
    (lambda: H.top_eigenvalues(_nan_loss, jnp.ones(3), jax.random.key(0)), "loss_fn"),
    (lambda: H.hutchinson_trace(_nan_loss, jnp.ones(3), jax.random.key(0), num_samples=4), "loss_fn"),
    (lambda: H.hvp(_nan_loss, jnp.ones(3), jnp.ones(3)), "loss_fn"),
    (lambda: H.dense_hessian(_nan_loss, jnp.ones(3)), "loss_fn"),
])
def test_a_nan_callback_is_named_not_returned(call, param):
    """Issue 29: a NaN from the user's loss or operator came back as NaN eigenvalues, traces and products."""
    with pytest.raises(ValueError, match=rf"{param}: returned non-finite values"):
        call()


def test_a_nan_callback_under_jit_returns_nan_for_the_callers_flag():
    ritz = jax.jit(lambda k: H.lanczos(k, lambda v: v * jnp.nan, 4, 3))(jax.random.key(0))
    assert np.all(np.isnan(np.asarray(ritz)))


def test_one_lanczos_step_gives_the_rayleigh_quotient_and_no_second_ritz_value():
    """After one step the Krylov space is span(v0): the top Ritz value is the Rayleigh quotient v0'Hv0/v0'v0 (NumPy,
    to round-off), the Ritz vector v0 itself, and there is no second Ritz value (-inf), eagerly as under jit."""
    from sims.hvp import top_eigenpair

    H = np.array([[3.0, 1.0, 0.0], [1.0, 2.0, 0.5], [0.0, 0.5, 1.0]])
    v0 = np.array([1.0, -2.0, 0.5])
    for call in (top_eigenpair, jax.jit(top_eigenpair, static_argnums=(0, 2))):
        top, vec, second = call(lambda v: jnp.asarray(H) @ v, jnp.asarray(v0), 1)
        np.testing.assert_allclose(float(top), v0 @ H @ v0 / (v0 @ v0), rtol=1e-14)  # a few roundings of O(1) sums
        np.testing.assert_allclose(np.abs(np.asarray(vec)), np.abs(v0) / np.linalg.norm(v0), rtol=1e-14)
        assert float(second) == -np.inf
