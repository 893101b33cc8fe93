"""Unit tests of the linear-network Hessian topic: sympy identities, closed forms vs autodiff, simulator plumbing."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import sympy as sp

from paper_checks import linear_hessian as P
from sims import linear_hessian as S
from theory import linear_hessian as T

# ----------------------------------------------------------------------------------------------
# sympy derivations (exact)
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_hessian_is_gauss_newton_at_a_minimum(depth):
    assert T.gauss_newton_gap(depth) == sp.zeros(depth, depth)


@pytest.mark.parametrize("depth", [1, 2, 3, 4])
def test_balanced_identities(depth):
    for residual in T.balanced_identity_residuals(depth):
        assert residual == sp.zeros(2, 2)


def test_balanced_identities_can_fail():
    # an unbalanced factorization must leave a non-zero residual (the test is not vacuous)
    t1 = sp.Symbol("t1", positive=True)
    W1, W2 = sp.diag(t1, 1), sp.diag(2 * t1, 1)
    assert sp.simplify(W2.T * W2 - W1 * W1.T) != sp.zeros(2, 2)


def test_kappa_geometric_identity_symbolic_in_depth():
    generic, equal = T.kappa_geometric_identity()
    assert sp.simplify(equal) == 0
    assert generic == 0


@pytest.mark.parametrize("depth", [2, 3, 4])
def test_kappa_sum_equals_closed_form(depth):
    si, sj = sp.symbols("s_i s_j", positive=True)
    diff = T.kappa_sum(si, sj, depth) - T.kappa_closed(si, sj, depth)
    # substitute s = t^L so the fractional powers become monomials
    ti, tj = sp.symbols("t_i t_j", positive=True)
    assert sp.simplify(diff.subs({si: ti**depth, sj: tj**depth})) == 0


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_trace_formula_equals_sum_of_spectrum(depth):
    s = sp.symbols("s1:3", positive=True)
    d0, dL = 4, 3
    if depth == 1:
        total = sum(v * m for v, m in T.depth_one_terms(d0, dL))
        # L = 1: trace d0*dL*alpha, whatever the labels
        assert sp.simplify(total - T.trace_formula(s, d0, dL, 1)) == 0
        return
    total = sum(v * m for v, m in T.spectrum_terms(s, d0, dL, depth))
    assert sp.simplify(sp.expand(total - T.trace_formula(s, d0, dL, depth))) == 0


def test_class_corollary_symbolic():
    L = T.L_SYM
    p = sp.Symbol("pi_max", positive=True)
    assert sp.simplify(T.class_sharpness_symbolic(2) - 2 * sp.sqrt(p)) == 0
    alpha = sp.Symbol("alpha", positive=True)
    assert sp.simplify(T.class_sharpness_symbolic(L, alpha) - L * alpha ** (1 / L) * p ** (1 - 1 / L)) == 0
    assert sp.simplify(T.critical_step_symbolic(2) - 1 / sp.sqrt(p)) == 0
    terms = T.class_spectrum_terms(3, sp.Symbol("d0"), L)
    assert len(terms["class"]) == 3 and len(terms["cross"]) == 6 and len(terms["bulk"]) == 3
    pi1 = sp.Symbol("pi1", positive=True)
    assert sp.simplify(terms["class"][0][0] - L * pi1 ** ((L - 1) / L)) == 0
    assert sp.simplify(terms["bulk"][0][0] - pi1 ** ((L - 1) / L)) == 0


def test_origin_hessian_scalar():
    H = T.origin_hessian_scalar()
    syx = sp.Symbol("sigma_yx", positive=True)
    assert set(H.eigenvals()) == {syx, -syx}


def test_sympy_hessian_matches_jax_hessian_at_random_points():
    # scalar chain with one sample: sympy Hessian of (x w3 w2 w1 - y)^2 / 2 vs jax.hessian of sims.loss
    w = sp.symbols("w1:4", real=True)
    x, y = 1.3, -0.7
    expr = (x * w[0] * w[1] * w[2] - y) ** 2 / 2
    H_sym = sp.lambdify(w, sp.hessian(expr, w), "numpy")
    rng = np.random.default_rng(1)
    hess = jax.jit(lambda t: S.dense_hessian(t, jnp.array([[x]]), jnp.array([[y]]), (1, 1, 1, 1)))
    for _ in range(3):
        theta = rng.normal(size=3)
        H_jax = hess(jnp.asarray(theta))
        np.testing.assert_allclose(np.asarray(H_jax), np.asarray(H_sym(*theta), float), rtol=1e-12, atol=1e-12)


# ----------------------------------------------------------------------------------------------
# numeric closed forms
# ----------------------------------------------------------------------------------------------


def test_note_worked_example():
    ev = T.class_spectrum([0.5, 0.3, 0.2], (10, 6, 3))
    assert ev.size == 78 and np.sum(ev == 0) == 48
    vals, counts = np.unique(np.round(ev, 6), return_counts=True)
    table = dict(zip(vals, counts))
    for v, m in [(1.414214, 1), (1.095445, 1), (0.894427, 1), (1.15432, 2), (0.994936, 2),
                 (0.707107, 7), (0.547723, 7), (0.447214, 7)]:
        assert table[v] == m
    # the note lists the (.5, .3) cross-class value as 1.254837; the closed form gives 1.2548293
    # (0.2 / (sqrt .5 - sqrt .3)): a typo in the note, 6e-6 relative
    assert table[1.254829] == 2
    assert T.class_sharpness([0.6, 0.3, 0.1], 3) == pytest.approx(2.13413598, rel=1e-8)
    assert T.class_sharpness([0.4, 0.4, 0.2], 4) == pytest.approx(2.01189349, rel=1e-8)


def test_spectrum_structure():
    w, alpha, sv = (5, 4, 6, 3), 2.0, [1.2, 0.5]
    ev = T.spectrum(w, alpha, sv)
    P_ = 5 * 4 + 4 * 6 + 6 * 3
    assert ev.size == P_ and np.all(np.diff(ev) >= 0)
    assert T.numeric_rank(ev) == 2 * (5 + 3 - 2)
    s = np.array(sv) / alpha
    assert ev[-1] == pytest.approx(alpha * 3 * s[0] ** (4 / 3), rel=1e-13)
    # L = 1: every eigenvalue alpha, label-independent
    assert np.all(T.spectrum((4, 3), 1.7, [3.0, 1.0]) == 1.7)


def test_spectrum_alpha_scaling():
    # rescaling the inputs by alpha with Sigma_yx -> Sigma_yx * sqrt(alpha) (X -> sqrt(alpha) X)
    # multiplies lambda_max by alpha^(1/L) (class corollary)
    for depth in (2, 3):
        w = (4,) + (3,) * (depth - 1) + (3,)
        p = np.array([0.5, 0.3, 0.2])
        a = 2.5
        top = T.spectrum(w, a, np.sqrt(a * p))[-1]
        assert top == pytest.approx(T.class_sharpness(p, depth, a), rel=1e-13)
        assert top == pytest.approx(a ** (1 / depth) * T.class_sharpness(p, depth), rel=1e-13)


def test_origin_spectrum_numeric():
    ev = T.origin_spectrum((6, 4, 3), [0.7, 0.5])
    assert ev.size == 6 * 4 + 4 * 3 and np.sum(ev == 0.7) == 4 and np.sum(ev == -0.5) == 4
    assert np.all(T.origin_spectrum((3, 2, 2, 2), [1.0]) == 0)


@pytest.mark.parametrize("call, match", [
    (lambda: T.class_sharpness([0.5, 0.3], 2), "sum to 1"),
    (lambda: T.class_sharpness([0.5, 0.6, -0.1], 2), ">= 0"),
    (lambda: T.class_sharpness([0.5, 0.5], 0), "depth >= 1"),
    (lambda: T.class_sharpness([0.5, 0.5], True), "depth"),
    (lambda: T.class_sharpness([0.5, 0.5], 2.0), "depth"),
    (lambda: T.spectrum((4, 1, 3), 1.0, [1.0, 0.5]), "bottleneck"),
    (lambda: T.spectrum((4, 3), 0.0, [1.0]), "alpha"),
    (lambda: T.spectrum((4, 3), 1.0, [1.0, -1.0]), ">= 0"),
    (lambda: T.spectrum((2, 3), 1.0, [1.0, 1.0, 1.0]), "at most 2"),
    (lambda: T.spectrum((4,), 1.0, [1.0]), "widths"),
    (lambda: T.spectrum((4, 0, 2), 1.0, [1.0]), "widths"),
    (lambda: T.class_spectrum([0.5, 0.3, 0.2], (2, 4, 3)), "cannot be fit exactly"),
    (lambda: T.class_spectrum([0.5, 0.5], (4, 4, 3)), "output width"),
    (lambda: T.origin_spectrum((4, 3), [1.0]), "depth >= 2"),
])
def test_theory_bad_inputs(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()


# ----------------------------------------------------------------------------------------------
# simulators
# ----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def small_problem():
    widths = (4, 3, 3, 2)
    X, Y = S.whitened_data(jax.random.key(3), 4, 2, 12, alpha=1.5, rank=2)
    theta_bal = S.balanced_minimum(jax.random.key(4), X, Y, widths)
    theta = S.random_gauge(jax.random.key(5), theta_bal, widths, 0.5)
    return widths, X, Y, theta_bal, theta


@pytest.mark.slow
def test_constructors(small_problem):
    widths, X, Y, theta_bal, theta = small_problem
    n = X.shape[1]
    np.testing.assert_allclose(np.asarray(X @ X.T / n), 1.5 * np.eye(4), atol=1e-12)
    assert float(S.balancedness_error(theta_bal, widths)) < 1e-12
    assert float(S.balancedness_error(theta, widths)) > 1e-2        # the gauge unbalances ...
    g = jax.grad(S.loss)
    assert float(jnp.linalg.norm(g(theta_bal, X, Y, widths))) < 1e-12
    assert float(jnp.linalg.norm(g(theta, X, Y, widths))) < 1e-10  # ... but stays a global minimum
    assert float(S.loss(theta, X, Y, widths)) == pytest.approx(float(S.loss(theta_bal, X, Y, widths)), rel=1e-12)
    Xc, Yc = S.class_data(jax.random.key(6), np.array([5, 3, 2]), 4)
    np.testing.assert_allclose(np.asarray(Xc @ Xc.T / 10), np.eye(4), atol=1e-12)
    sv = np.linalg.svd(np.asarray(Yc @ Xc.T / 10), compute_uv=False)
    np.testing.assert_allclose(sv, np.sqrt([0.5, 0.3, 0.2]), rtol=1e-12)


@pytest.mark.slow
def test_dense_spectrum_matches_theory_plain(small_problem):
    widths, X, Y, theta_bal, _ = small_problem
    n = X.shape[1]
    sv = np.linalg.svd(np.asarray(Y @ X.T / n), compute_uv=False)
    ev = np.asarray(S.hessian_eigvalsh(theta_bal, X, Y, widths))
    np.testing.assert_allclose(ev, T.spectrum(widths, 1.5, sv), atol=1e-12 * ev[-1])


@pytest.mark.slow
def test_jax_hvp_matches_numpy_reference(small_problem):
    widths, X, Y, _, theta = small_problem
    n = X.shape[1]
    Sxx, Syx = np.asarray(X @ X.T / n), np.asarray(Y @ X.T / n)
    rng = np.random.default_rng(0)
    # away from the minimum, where the residual (second-order) term is non-zero
    th = np.asarray(theta) + 0.3 * rng.normal(size=theta.size)
    V = rng.normal(size=(3, theta.size))
    jax_hv = np.stack([np.asarray(S.hvp(jnp.asarray(th), jnp.asarray(v), X, Y, widths)) for v in V])
    np.testing.assert_allclose(S.numpy_hvp(th, V, Sxx, Syx, widths), jax_hv, rtol=1e-11, atol=1e-12)
    H = np.asarray(S.dense_hessian(jnp.asarray(th), X, Y, widths))
    np.testing.assert_allclose(S.numpy_dense_hessian(th, Sxx, Syx, widths), 0.5 * (H + H.T), atol=1e-11)


@pytest.mark.slow
def test_lanczos_matches_dense(small_problem):
    widths, X, Y, _, theta = small_problem
    P_ = S.n_params(widths)
    dense = np.sort(np.asarray(S.hessian_eigvalsh(theta, X, Y, widths)))[::-1]
    top = jax.jit(lambda th: S.top_eigenvalues(jax.random.key(7), th, X, Y, widths, k=3, num_iter=P_))
    np.testing.assert_allclose(np.asarray(top(theta)), dense[:3], rtol=1e-10)
    # NumPy Lanczos on the analytic HVP agrees on the (isolated) top eigenvalue
    n = X.shape[1]
    Sxx, Syx = np.asarray(X @ X.T / n), np.asarray(Y @ X.T / n)
    ritz = S.numpy_lanczos(np.ones(P_), lambda v: S.numpy_hvp(np.asarray(theta), v, Sxx, Syx, widths), P_)
    assert ritz[-1] == pytest.approx(dense[0], rel=1e-10)


def test_frame_constructors_via_campaign():
    # the constructed points the claims use: balanced exact minima, gauged minima still minima,
    # whitened one-hot data with Sigma_yx singular values sqrt(pi_k)
    camp = P.minimum_campaign("quick")
    for i in P._select(camp, "class"):
        assert camp["balance"][i] < 1e-12 and camp["grad_norm"][i] < 1e-12
        p = P._proportions(camp["cases"][i]["counts"])
        np.testing.assert_allclose(camp["sv"][i][:3], np.sort(np.sqrt(p))[::-1], rtol=1e-12)
    for i in P._select(camp, "gauge"):
        assert camp["balance"][i] > 1e-2 and camp["grad_norm"][i] < 1e-8
    for i in P._select(camp, "origin"):
        assert camp["grad_norm"][i] == 0.0


def test_lanczos_top_k_matches_numpy_dense():
    # matrix-free JAX Lanczos (HVP = jvp of grad) vs the dense NumPy analytic Hessian, at a generic point
    widths = (4, 3, 3, 2)
    rng = np.random.default_rng(11)
    X, Y = rng.normal(size=(4, 9)), rng.normal(size=(2, 9))
    th = rng.normal(size=S.n_params(widths))
    dense = np.linalg.eigvalsh(S.numpy_dense_hessian(th, X @ X.T / 9, Y @ X.T / 9, widths))[::-1]
    top = jax.jit(lambda t: S.top_eigenvalues(jax.random.key(3), t, jnp.asarray(X), jnp.asarray(Y), widths,
                                              k=3, num_iter=24))(jnp.asarray(th))
    # 24 of P = 27 Krylov steps with full reorthogonalization: the top Ritz values are converged to round-off
    np.testing.assert_allclose(np.asarray(top), dense[:3], rtol=1e-9)


def test_lanczos_recovers_multiplicities():
    # a diagonal operator with a 3-fold top eigenvalue: the restart on breakdown finds every copy
    diag = jnp.array([5.0, 5.0, 5.0, 2.0, 1.0, 0.0, 0.0, -1.0])
    ritz = S.lanczos(jax.random.key(0), lambda v: diag * v, 8, 8)
    np.testing.assert_allclose(np.sort(np.asarray(ritz)), np.sort(np.asarray(diag)), atol=1e-10)


def test_tiny_net_jit_eager_numpy():
    # a tiny net keeps eager dispatch cheap: jit == eager, and JAX HVP == NumPy analytic HVP
    widths = (3, 2, 2)
    rng = np.random.default_rng(5)
    X, Y = rng.normal(size=(3, 7)), rng.normal(size=(2, 7))
    th, v = rng.normal(size=S.n_params(widths)), rng.normal(size=S.n_params(widths))
    eager = np.asarray(S.hvp(jnp.asarray(th), jnp.asarray(v), jnp.asarray(X), jnp.asarray(Y), widths))
    jitted = np.asarray(jax.jit(lambda a, b: S.hvp(a, b, jnp.asarray(X), jnp.asarray(Y), widths))(th, v))
    np.testing.assert_allclose(jitted, eager, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(S.numpy_hvp(th, v, X @ X.T / 7, Y @ X.T / 7, widths), eager, rtol=1e-11, atol=1e-12)


@pytest.mark.slow
def test_jit_equals_eager(small_problem):
    widths, X, Y, _, theta = small_problem
    v = jnp.ones_like(theta)
    eager = S.hvp(theta, v, X, Y, widths)
    jitted = jax.jit(lambda t, u: S.hvp(t, u, X, Y, widths))(theta, v)
    np.testing.assert_allclose(np.asarray(jitted), np.asarray(eager), rtol=1e-12, atol=1e-13)


def test_frame_embedding_equals_plain_net():
    # run_grid over frame-embedded nets equals a loop over the plain nets: Hessian spectra against the
    # NumPy analytic Hessian (linear), losses against the plain JAX loss (tanh)
    rng = np.random.default_rng(2)
    cases = [(3, 2), (4, 5, 2), (6, 3, 4, 5, 1), (2, 2, 2, 2, 2, 3)]
    grid = {"key": jax.random.split(jax.random.key(0), len(cases)),
            "widths": np.stack([S.frame_widths(w, S.LMAX) for w in cases]),
            "depth": np.array([len(w) - 1 for w in cases], np.int32), "act": np.zeros(len(cases), np.int32)}
    thetas, Xs, Ys, plain = [], [], [], []
    for k, w in enumerate(cases):
        th = rng.normal(size=S.n_params(w))
        X = rng.normal(size=(w[0], S.N_SAMPLES))
        Y = rng.normal(size=(w[-1], S.N_SAMPLES))
        full = np.zeros(S.LMAX * S.DMAX**2)
        full[S.active_indices(w, S.DMAX, S.LMAX)] = th
        Xp, Yp = np.zeros((S.DMAX, S.N_SAMPLES)), np.zeros((S.DMAX, S.N_SAMPLES))
        Xp[: w[0]], Yp[: w[-1]] = X, Y
        thetas.append(full), Xs.append(Xp), Ys.append(Yp)
        n = S.N_SAMPLES
        plain.append(np.linalg.eigvalsh(S.numpy_dense_hessian(th, X @ X.T / n, Y @ X.T / n, w)))
        if k == 2:
            frame = S.frame_loss(jnp.asarray(full), grid["widths"][k], len(w) - 1, jnp.asarray(Xp), jnp.asarray(Yp), 1)
            ref = S.loss(jnp.asarray(th), jnp.asarray(X), jnp.asarray(Y), w, "tanh")
            assert float(frame) == pytest.approx(float(ref), rel=1e-12)
    grid.update(theta=np.stack(thetas), X=np.stack(Xs), Y=np.stack(Ys))
    eigs = S.strip_sentinel(P._spectra(grid), cases)
    for e, p in zip(eigs, plain):
        assert e.size == p.size
        np.testing.assert_allclose(np.sort(e), p, atol=1e-10 * np.abs(p).max())


def test_divergence_is_data():
    # GD far above eta_c blows up: the run is flagged inside the shared sweep, which does not crash,
    # and its sharpness is reported as NaN rather than computed from inf parameters
    camp = P.training_campaign("quick")
    (bad,) = P._tselect(camp, "diverge")
    assert camp["diverged"][bad] and not np.isfinite(camp["loss"][bad, -1]) and np.isnan(camp["final_top"][bad])
    good = P._tselect(camp, "after_gd")
    assert not np.any(camp["diverged"][good]) and np.all(camp["loss"][good, -1] < 1e-16)


@pytest.mark.parametrize("call, match", [
    (lambda: S.class_data(jax.random.key(0), np.array([5, 0, 2]), 3), "positive integers"),
    (lambda: S.class_data(jax.random.key(0), np.array([5, 3, 2]), 2), "d0"),
    (lambda: S.class_data(jax.random.key(0), np.array([5, 3, 2]), 3, n=11), "sum"),
    (lambda: S.lanczos(jax.random.key(0), lambda v: v, 4, 5), "num_iter"),
    (lambda: S.train_run(101, 20), "multiple"),
    (lambda: S.construct_grid(2, widths=[(3, 2)] * 2, bogus=[1, 2]), "bogus"),
    (lambda: S.construct_grid(2, widths=[(3, 2)] * 2, alpha=[1.0]), "leading axis"),
    (lambda: S.frame_widths((2,) * 8, 5), "lmax"),
    (lambda: S.forward(jnp.ones(6), jnp.ones((3, 2)), (3, 2), "gelu"), "activation"),
    (lambda: S.whitened_data(jax.random.key(0), 5, 2, 4), "d0 <= n"),
])
def test_sims_bad_inputs(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.slow
def test_plain_train_gd_tracks_sharpness():
    # plain (unpadded) trainer: converges from small init to lambda_max ~ 2 sqrt(pi_max), Lanczos
    # tracking agrees with the dense Hessian at the end; a huge step is flagged as diverged
    widths = (4, 3, 3)
    X, Y = S.class_data(jax.random.key(0), np.array([10, 6, 4]), 4)
    theta0 = S.init_params(jax.random.key(1), widths, 0.05)
    lam = T.class_sharpness([0.5, 0.3, 0.2], 2)
    run = jax.jit(lambda lr: S.train_gd(jax.random.key(2), theta0, X, Y, widths, lr, steps=600, record_every=100))
    out = run(0.5 * 2 / lam)
    assert not bool(out["diverged"]) and float(out["loss"][-1]) < 1e-16
    dense = float(S.hessian_eigvalsh(out["theta"], X, Y, widths)[-1])
    assert float(out["sharpness"][-1]) == pytest.approx(dense, rel=1e-8)
    assert dense == pytest.approx(lam, rel=1e-2)
    assert bool(run(100.0)["diverged"])
    assert S.xavier_init(jax.random.key(3), widths).shape == (S.n_params(widths),)
