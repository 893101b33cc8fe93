"""Unit tests of topic linear_hessian: sympy identities, closed forms against autodiff, simulators, references."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import sympy as sp

from sims import linear_hessian as S
from sims.linear_hessian import frame as F
from sims.linear_hessian.spectrum import constructed_minima, hessian_spectra
from sims.linear_hessian.train import aligned_path, train_sweep
from sims.reference import linear_hessian as R
from theory import linear_hessian as T

# jitted once per shape: eager autodiff Hessians run op by op and dominate the tier's time
_eigvalsh = jax.jit(S.hessian_eigvalsh, static_argnames=("widths", "activation"))
_grad = jax.jit(jax.grad(S.loss), static_argnames=("widths", "activation"))

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


@pytest.mark.parametrize("depth", [2, 3])
def test_balanced_identities_can_fail(depth):
    # the same product, unbalanced by W1 -> 2 W1, W2 -> W2 / 2: the identities must break
    residuals = T.balanced_identity_residuals(depth, rescale=2)
    assert any(r != sp.zeros(2, 2) for r in residuals)


def test_kappa_geometric_identity_symbolic_in_depth():
    generic, equal = T.kappa_geometric_identity()
    assert sp.simplify(equal) == 0
    assert generic == 0


@pytest.mark.parametrize("depth", [2, 3, 4])
def test_kappa_sum_equals_closed_form(depth):
    si, sj = sp.symbols("s_i s_j", positive=True)
    diff = T.kappa_sum(si, sj, depth) - T.kappa_closed(si, sj, depth)
    ti, tj = sp.symbols("t_i t_j", positive=True)  # s = t^L turns the fractional powers into monomials
    assert sp.simplify(diff.subs({si: ti**depth, sj: tj**depth})) == 0


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_trace_formula_equals_sum_of_spectrum(depth):
    s = sp.symbols("s1:3", positive=True)
    d0, dL = 4, 3
    terms = T.depth_one_terms(d0, dL) if depth == 1 else T.spectrum_terms(s, d0, dL, depth)
    total = sum(v * m for v, m in terms)
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
    syx = sp.Symbol("sigma_yx", positive=True)
    assert set(T.origin_hessian_scalar().eigenvals()) == {syx, -syx}


# ----------------------------------------------------------------------------------------------
# numeric closed forms
# ----------------------------------------------------------------------------------------------


def test_worked_example():
    # L = 2, pi = (.5, .3, .2), d0 = 10: the cross-class outliers are (pi_k - pi_m) / (sqrt(pi_k) - sqrt(pi_m))
    # = sqrt(pi_k) + sqrt(pi_m); the (1, 2) value is 1.2548293 (sqrt(.5) + sqrt(.3) = 1.25482933869..., checked
    # below in 30-digit decimal arithmetic and exactly in sympy), not 1.254837
    from decimal import Decimal, getcontext
    getcontext().prec = 30
    cross12 = Decimal("0.5").sqrt() + Decimal("0.3").sqrt()
    assert str(cross12)[:9] == "1.2548293"
    exact = (sp.Rational(1, 2) - sp.Rational(3, 10)) / (sp.sqrt(sp.Rational(1, 2)) - sp.sqrt(sp.Rational(3, 10)))
    assert abs(sp.N(exact, 25) - sp.Float(str(cross12), 25)) < 1e-20
    ev = T.class_spectrum([0.5, 0.3, 0.2], (10, 6, 3))
    assert ev.size == 78 and np.sum(ev == 0) == 48
    table = dict(zip(*np.unique(np.round(ev, 7), return_counts=True)))
    for v, m in [(1.4142136, 1), (1.0954451, 1), (0.8944272, 1), (1.2548293, 2), (1.1543204, 2), (0.9949362, 2),
                 (0.7071068, 7), (0.5477226, 7), (0.4472136, 7)]:
        assert table[v] == m
    assert 1.254837 not in table and np.round(1.254837, 7) not in table
    assert T.class_sharpness([0.6, 0.3, 0.1], 3) == pytest.approx(2.13413598, rel=1e-8)
    assert T.class_sharpness([0.4, 0.4, 0.2], 4) == pytest.approx(2.01189349, rel=1e-8)


def test_spectrum_structure_and_alpha_scaling():
    w, alpha, sv = (5, 4, 6, 3), 2.0, [1.2, 0.5]
    ev = T.spectrum(w, alpha, sv)
    assert ev.size == 5 * 4 + 4 * 6 + 6 * 3 and np.all(np.diff(ev) >= 0)
    assert T.numeric_rank(ev) == 2 * (5 + 3 - 2)
    assert ev[-1] == pytest.approx(alpha * 3 * (1.2 / alpha) ** (4 / 3), rel=1e-13)
    assert np.all(T.spectrum((4, 3), 1.7, [3.0, 1.0]) == 1.7)  # L = 1: label-independent
    p = np.array([0.5, 0.3, 0.2])
    for depth in (2, 3):
        top = T.spectrum((4,) + (3,) * depth, 2.5, np.sqrt(2.5 * p))[-1]
        assert top == pytest.approx(2.5 ** (1 / depth) * T.class_sharpness(p, depth), rel=1e-13)


def test_origin_spectrum_numeric():
    ev = T.origin_spectrum((6, 4, 3), [0.7, 0.5])
    assert ev.size == 36 and np.sum(ev == 0.7) == 4 and np.sum(ev == -0.5) == 4
    assert np.all(T.origin_spectrum((3, 2, 2, 2), [1.0]) == 0)


def test_aligned_spectrum_reduces_to_minimum_and_origin():
    w, p = (6, 4, 3), np.array([0.5, 0.3, 0.2])
    s = np.sqrt(p)
    np.testing.assert_allclose(T.two_layer_aligned_spectrum(w, s, s), T.class_spectrum(p, w), atol=1e-14)
    np.testing.assert_allclose(T.two_layer_aligned_spectrum(w, s, np.zeros(3)), T.origin_spectrum(w, s), atol=1e-14)


def test_balanced_gauss_newton_reduces_to_the_whitened_spectrum():
    rng = np.random.default_rng(4)
    U = np.linalg.qr(rng.normal(size=(3, 3)))[0]
    Vt = np.linalg.qr(rng.normal(size=(5, 5)))[0][:3]
    Syx = 1.5 * U @ np.diag([1.0, 0.6, 0.3]) @ Vt
    for depth in (1, 2, 3):
        w = (5,) + (4,) * (depth - 1) + (3,)
        full = T.spectrum(w, 1.5, [1.5, 0.9, 0.45])
        gn = T.balanced_gauss_newton_spectrum(1.5 * np.eye(5), Syx, depth)
        np.testing.assert_allclose(gn, np.sort(full)[-gn.size:], atol=1e-13)  # the top d_L d_0 eigenvalues


@pytest.mark.parametrize("call, match", [
    (lambda: T.class_sharpness([0.5, 0.3], 2), "sum to 1"),
    (lambda: T.class_sharpness([0.5, 0.6, -0.1], 2), "proportions"),
    (lambda: T.class_sharpness([0.5, 0.5], 0), "depth"),
    (lambda: T.class_sharpness([0.5, 0.5], True), "depth"),
    (lambda: T.class_sharpness([0.5, 0.5], 2.0), "depth"),
    (lambda: T.class_sharpness([0.5, np.nan], 2), "proportions"),
    (lambda: T.class_sharpness([0.5, 0.5], 2, -1.0), "sigma_xx_scale"),
    (lambda: T.spectrum((4, 1, 3), 1.0, [1.0, 0.5]), "bottleneck"),
    (lambda: T.spectrum((4, 3), 0.0, [1.0]), "sigma_xx_scale"),
    (lambda: T.spectrum((4, 3), float("nan"), [1.0]), "sigma_xx_scale"),
    (lambda: T.spectrum((4, 3), 1.0, [1.0, -1.0]), "singular_values"),
    (lambda: T.spectrum((2, 3), 1.0, [1.0, 1.0, 1.0]), "at most 2"),
    (lambda: T.spectrum((4,), 1.0, [1.0]), "widths"),
    (lambda: T.spectrum((4, 0, 2), 1.0, [1.0]), "widths"),
    (lambda: T.spectrum("43", 1.0, [1.0]), "widths"),
    (lambda: T.class_spectrum([0.5, 0.3, 0.2], (2, 4, 3)), "cannot be fit exactly"),
    (lambda: T.class_spectrum([0.5, 0.5], (4, 4, 3)), "output width"),
    (lambda: T.origin_spectrum((4, 3), [1.0]), "depth >= 2"),
    (lambda: T.numeric_rank([1.0, 0.0], rtol=0.0), "rtol"),
    (lambda: T.gauss_newton_operator([np.ones((3, 4)), np.ones((2, 2))], np.eye(4)), "mats"),
    (lambda: T.gauss_newton_operator([np.ones((3, 4))], np.eye(3)), "sigma_xx"),
    (lambda: T.gauss_newton_operator([np.ones((3, 4))], -np.eye(4)), "sigma_xx"),
    (lambda: T.balanced_gauss_newton_spectrum(np.eye(3), np.ones((2, 4)), 2), "sigma_yx"),
    (lambda: T.two_layer_aligned_spectrum((4, 3, 3), [0.5, 0.3], [0.1]), "strengths"),
    (lambda: T.two_layer_aligned_spectrum((4, 3, 3, 3), [0.5], [0.1]), "widths"),
    (lambda: T.two_layer_aligned_spectrum((4, 3, 3), [0.5], [-0.1]), "strengths"),
    (lambda: T.aligned_mode_step([0.5], [0.1], -0.1), "eta"),
    (lambda: T.balanced_identity_residuals(2, rescale=-1), "rescale"),
])
def test_theory_bad_inputs_name_the_parameter(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()


# ----------------------------------------------------------------------------------------------
# closed forms against autodiff Hessians (plain nets)
# ----------------------------------------------------------------------------------------------

_rng = np.random.default_rng(7)


def _aligned_point(widths, s, a, rng):
    """Data with Sigma_xx = I, Sigma_yx = U diag(s) V^T, and the aligned balanced weights of strengths a."""
    d0, d1, dL = widths
    r = len(s)
    U, V_, E_ = (np.linalg.qr(rng.normal(size=(d, d)))[0] for d in (dL, d0, d1))
    n = 40
    X = np.sqrt(n) * np.linalg.qr(rng.normal(size=(n, d0)))[0].T
    Y = U[:, :r] @ np.diag(s) @ V_[:, :r].T @ X
    W1 = E_[:, :r] @ np.diag(np.sqrt(a)) @ V_[:, :r].T
    W2 = U[:, :r] @ np.diag(np.sqrt(a)) @ E_[:, :r].T
    return jnp.asarray(np.concatenate([W1.ravel(), W2.ravel()])), jnp.asarray(X), jnp.asarray(Y)


@pytest.mark.parametrize("widths", [(5, 4, 3), (4, 3, 3)])
def test_aligned_spectrum_equals_autodiff_off_the_minimum(widths):
    s = np.array([0.9, 0.6, 0.3])
    a = _rng.uniform(0.0, 1.2, 3)
    theta, X, Y = _aligned_point(widths, s, a, _rng)
    ev = np.asarray(_eigvalsh(theta, X, Y, widths=widths))
    np.testing.assert_allclose(ev, T.two_layer_aligned_spectrum(widths, s, a), atol=1e-12)


def test_one_gd_step_stays_on_the_aligned_path():
    widths, s, a = (5, 4, 3), np.array([0.9, 0.6, 0.3]), np.array([0.2, 0.05, 0.01])
    theta, X, Y = _aligned_point(widths, s, a, np.random.default_rng(3))
    eta = 0.3
    new = theta - eta * _grad(theta, X, Y, widths=widths)
    roots = T.aligned_mode_step(s, np.sqrt(a), eta)
    np.testing.assert_allclose(S.mode_strengths(np.asarray(new), X, Y, widths), roots**2, rtol=1e-12)
    ev = np.asarray(_eigvalsh(new, X, Y, widths=widths))
    np.testing.assert_allclose(ev, T.two_layer_aligned_spectrum(widths, s, roots**2), atol=1e-12)
    # sims' iteration of the same map
    np.testing.assert_allclose(aligned_path(s, 0.3, eta, steps=1)[1], T.aligned_mode_step(s, np.full(3, 0.3), eta) ** 2,
                               rtol=1e-14)


def test_gauss_newton_spectrum_at_unbalanced_minimum_and_only_there():
    widths = (4, 3, 3, 2)
    rng = np.random.default_rng(11)
    X, Y = rng.normal(size=(4, 20)), rng.normal(size=(2, 20))   # not whitened: Sigma_xx != alpha I
    theta = R.numpy_balanced_minimum(rng, X, Y, widths, gauge=0.5)
    mats = [np.asarray(m) for m in S.unflatten(jnp.asarray(theta), widths)]
    ev = np.asarray(_eigvalsh(jnp.asarray(theta), jnp.asarray(X), jnp.asarray(Y), widths=widths))
    gn = T.gauss_newton_spectrum(mats, X @ X.T / 20)
    np.testing.assert_allclose(ev[-gn.size:], gn, atol=1e-11 * gn[-1])
    # away from the minimum the residual term is there and the prediction must fail
    off = theta + 0.3 * rng.normal(size=theta.size)
    ev_off = np.asarray(_eigvalsh(jnp.asarray(off), jnp.asarray(X), jnp.asarray(Y), widths=widths))
    mats_off = [np.asarray(m) for m in S.unflatten(jnp.asarray(off), widths)]
    assert np.max(np.abs(ev_off[-gn.size:] - T.gauss_newton_spectrum(mats_off, X @ X.T / 20))) > 1e-3


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


def test_constructors(small_problem):
    widths, X, Y, theta_bal, theta = small_problem
    np.testing.assert_allclose(np.asarray(X @ X.T / 12), 1.5 * np.eye(4), atol=1e-12)
    assert float(S.balancedness_error(theta_bal, widths)) < 1e-12
    assert float(S.balancedness_error(theta, widths)) > 1e-2          # the gauge unbalances ...
    assert float(jnp.linalg.norm(_grad(theta, X, Y, widths=widths))) < 1e-10   # ... but stays a global minimum
    assert float(S.loss(theta, X, Y, widths)) == pytest.approx(float(S.loss(theta_bal, X, Y, widths)), rel=1e-12)
    sv = np.linalg.svd(np.asarray(Y @ X.T / 12), compute_uv=False)
    ev = np.asarray(_eigvalsh(theta_bal, X, Y, widths=widths))
    np.testing.assert_allclose(ev, T.spectrum(widths, 1.5, sv), atol=1e-12 * ev[-1])
    Xc, Yc = S.class_data(jax.random.key(6), np.array([5, 3, 2]), 4)
    np.testing.assert_allclose(np.asarray(Xc @ Xc.T / 10), np.eye(4), atol=1e-12)
    np.testing.assert_allclose(np.linalg.svd(np.asarray(Yc @ Xc.T / 10), compute_uv=False), np.sqrt([.5, .3, .2]),
                               rtol=1e-12)


def test_jax_hvp_and_lanczos_match_numpy_reference(small_problem):
    widths, X, Y, _, theta = small_problem
    Sxx, Syx = np.asarray(X @ X.T / 12), np.asarray(Y @ X.T / 12)
    rng = np.random.default_rng(0)
    th = np.asarray(theta) + 0.3 * rng.normal(size=theta.size)    # off the minimum: the residual term is live
    H = np.asarray(jax.jit(lambda t: S.dense_hessian(t, X, Y, widths))(jnp.asarray(th)))
    np.testing.assert_allclose(R.numpy_dense_hessian(th, Sxx, Syx, widths), H, atol=1e-11)
    P_ = S.n_params(widths)
    top = jax.jit(lambda t: S.top_eigenvalues(jax.random.key(7), t, X, Y, widths, k=3, num_iter=P_))(jnp.asarray(th))
    dense = np.sort(np.linalg.eigvalsh(H))[::-1]
    np.testing.assert_allclose(np.asarray(top), dense[:3], rtol=1e-10)
    ritz = R.numpy_lanczos(np.ones(P_), lambda v: R.numpy_hvp(th, v, Sxx, Syx, widths), P_)
    assert ritz[-1] == pytest.approx(dense[0], rel=1e-10)


@pytest.mark.parametrize("activation", ["linear", "tanh"])
def test_curvature_routes_equal_the_hessian_of_the_data_loss(small_problem, activation):
    # dense_hessian (per layer; second moments for linear nets) and top_eigenvalues against jax.hessian of loss
    widths, X, Y, _, theta = small_problem
    th = jnp.asarray(np.asarray(theta) + 0.3 * np.random.default_rng(1).normal(size=theta.size))
    H = np.asarray(jax.jit(lambda t: S.dense_hessian(t, X, Y, widths, activation))(th))
    Hd = np.asarray(jax.jit(jax.hessian(lambda t: S.loss(t, X, Y, widths, activation)))(th))
    np.testing.assert_allclose(H, 0.5 * (Hd + Hd.T), atol=1e-12 * np.abs(Hd).max())
    if activation == "linear":   # the HVP of the second-moment loss (other activations take the data's, as before)
        top = jax.jit(lambda t: S.top_eigenvalues(jax.random.key(7), t, X, Y, widths, k=2, num_iter=th.size))(th)
        np.testing.assert_allclose(np.asarray(top), np.linalg.eigvalsh(Hd)[::-1][:2], rtol=1e-10)


def test_train_gd_tracks_sharpness_and_flags_divergence():
    # the static configuration of the sharpening experiment (widths, record every step, full Krylov space)
    widths, steps = (6, 4, 3), 200
    X, Y = S.class_data(jax.random.key(0), np.array([50, 30, 20]), 6)
    theta0 = S.init_params(jax.random.key(1), widths, 0.05)
    lam = T.class_sharpness([0.5, 0.3, 0.2], 2)
    P = S.n_params(widths)
    ok, bad = (jax.tree_util.tree_map(np.asarray, S.train_gd(jax.random.key(2), t0, X, Y, widths, eta, steps=steps,
                                                               record_every=1, lanczos_iter=P))
               for t0, eta in ((theta0, 0.5 * 2 / lam), (3 * theta0 / 0.05, 50.0)))
    assert not ok["diverged"] and ok["diverged_step"] == -1 and ok["loss"][-1] < 1e-16
    dense = float(_eigvalsh(jnp.asarray(ok["theta"]), X, Y, widths=widths)[-1])
    assert ok["sharpness"][-1] == pytest.approx(dense, rel=1e-10)         # Lanczos (full Krylov) == dense
    assert dense == pytest.approx(lam, rel=1e-2)                            # near-balanced minimum
    # divergence is data: flagged with its step, the iterate frozen finite, records NaN from that step on
    assert bad["diverged"] and 1 <= bad["diverged_step"] <= steps
    assert np.all(np.isfinite(bad["theta"]))
    rec = np.arange(steps + 1)
    assert np.all(np.isnan(bad["loss"][rec >= bad["diverged_step"]]))
    assert np.all(np.isfinite(bad["loss"][rec < bad["diverged_step"]]))


def test_frame_embedding_equals_plain_net():
    # sweeps over frame-embedded nets equal the plain nets: spectra against the NumPy analytic Hessian
    # (linear, four shapes), the loss against the plain JAX loss (tanh)
    rng = np.random.default_rng(2)
    cases = [(3, 2), (4, 5, 2), (6, 3, 4, 5, 1), (2, 2, 2, 2, 2, 3)]
    n = F.N_SAMPLES
    thetas, Xs, Ys, plain = [], [], [], []
    for w in cases:
        th = rng.normal(size=S.n_params(w))
        X, Y = rng.normal(size=(w[0], n)), rng.normal(size=(w[-1], n))
        Xp, Yp = np.zeros((F.DMAX, n)), np.zeros((F.DMAX, n))
        Xp[: w[0]], Yp[: w[-1]] = X, Y
        thetas.append(F.embed(th, w)), Xs.append(Xp), Ys.append(Yp)
        plain.append(np.linalg.eigvalsh(R.numpy_dense_hessian(th, X @ X.T / n, Y @ X.T / n, w)))
    fw = np.stack([F.frame_widths(w) for w in cases])
    spec = hessian_spectra(np.stack(thetas), fw, [len(w) - 1 for w in cases], np.stack(Xs), np.stack(Ys))
    for k, p in enumerate(plain):
        assert spec["n_params"][k] == p.size
        np.testing.assert_allclose(spec["eigenvalues"][k][: p.size], p, atol=1e-10 * np.abs(p).max())
        assert np.all(np.isnan(spec["eigenvalues"][k][p.size:]))
    w = cases[2]
    th = np.asarray(F.strip(thetas[2], w))
    frame = F._frame_loss(jnp.asarray(thetas[2]), fw[2], len(w) - 1, jnp.asarray(Xs[2]), jnp.asarray(Ys[2]), 1)
    plain_tanh = S.loss(jnp.asarray(th), jnp.asarray(Xs[2][: w[0]]), jnp.asarray(Ys[2][: w[-1]]), w, "tanh")
    assert float(frame) == pytest.approx(float(plain_tanh), rel=1e-12)


def test_constructed_minima_are_balanced_minima_with_the_right_data():
    w = (6, 4, 3)
    out = constructed_minima(jax.random.key(0), w, counts=(50, 30, 20), gauge=np.array([0.0, 0.5]),
                             gaussian=np.array([False, True]))
    assert out["balance"][0] < 1e-12 and out["balance"][1] > 1e-2
    assert np.all(out["grad_norm"] < 1e-10)                      # the gauge keeps a global minimum
    np.testing.assert_allclose(out["sv"][0][:3], np.sqrt([0.5, 0.3, 0.2]), rtol=1e-12)
    np.testing.assert_allclose(out["sigma_xx"][0][:6, :6], np.eye(6), atol=1e-12)
    assert np.linalg.norm(out["sigma_xx"][1][:6, :6] - np.eye(6)) > 0.1   # mixed inputs: Sigma_xx != I


def _pad_by_hand(widths, theta, X, Y, eigenvalues):
    """The frame layout written out from its definition (not through the module's embed): W_l row-major in the
    top-left corner of block l of LMAX blocks of DMAX x DMAX; zero data rows; NaN after the P eigenvalues."""
    full, o = np.zeros(F.LMAX * F.DMAX * F.DMAX), 0
    for l in range(len(widths) - 1):
        rows, cols = widths[l + 1], widths[l]
        for r in range(rows):
            full[l * F.DMAX * F.DMAX + r * F.DMAX: l * F.DMAX * F.DMAX + r * F.DMAX + cols] = theta[o + r * cols: o + (r + 1) * cols]
        o += rows * cols
    Xp, Yp = np.zeros((F.DMAX, X.shape[1])), np.zeros((F.DMAX, Y.shape[1]))
    Xp[: X.shape[0]], Yp[: Y.shape[0]] = X, Y
    eig = np.full(F.LMAX * F.DMAX * F.DMAX, np.nan)
    eig[: eigenvalues.size] = eigenvalues
    fw = list(widths) + [widths[-1]] * (F.LMAX + 1 - len(widths))
    return full, Xp, Yp, eig, np.array(fw, np.int32)


def test_cases_undoes_the_padding_of_a_hand_built_result():
    """A padded result written by hand from three plain cases (one of them a run with no spectrum, n_params = 0):
    every record holds that case's plain arrays, exactly, its per-step row unchanged (NaN included), no
    per-sweep scalar; ``select`` as indices (in their order) or as a mask."""
    rng = np.random.default_rng(7)
    shapes = [(3, 2), (4, 5, 2), (2, 2, 2, 2, 2, 3)]
    plain, padded = [], {k: [] for k in ("theta", "X", "Y", "eigenvalues", "widths")}
    for k, w in enumerate(shapes):
        P = int(np.sum(np.array(w[1:]) * np.array(w[:-1])))
        c = {"widths": w, "theta": rng.normal(size=P), "X": rng.normal(size=(w[0], 10)),
             "Y": rng.normal(size=(w[-1], 10)), "eigenvalues": np.sort(rng.normal(size=P)) if k != 1 else np.zeros(0)}
        c["sigma_xx"], c["sigma_yx"] = c["X"] @ c["X"].T / 10, c["Y"] @ c["X"].T / 10
        plain.append(c)
        for key, v in zip(("theta", "X", "Y", "eigenvalues", "widths"),
                          _pad_by_hand(w, c["theta"], c["X"], c["Y"], c["eigenvalues"])):
            padded[key].append(v)
    result = {key: np.stack(v) for key, v in padded.items()}
    result["sigma_xx"] = np.einsum("nia,nja->nij", result["X"], result["X"]) / 10
    result["sigma_yx"] = np.einsum("nia,nja->nij", result["Y"], result["X"]) / 10
    result["n_params"] = np.array([c["eigenvalues"].size for c in plain])
    result["depth"] = np.array([len(w) - 1 for w in shapes])
    result["loss"] = np.array([[1.0, 0.5, 0.25], [1.0, np.nan, np.nan], [2.0, 1.0, 0.0]])
    result["seed"], result["steps"] = 3, 3
    records = list(S.cases(result))
    assert [r["index"] for r in records] == [0, 1, 2]
    for r, c, k in zip(records, plain, range(3)):
        assert r["widths"] == c["widths"] and isinstance(r["widths"][0], int)
        for key in ("theta", "X", "Y", "eigenvalues"):
            np.testing.assert_array_equal(r[key], c[key])
        # the padded moments sum the same products over the same samples: equal to round-off
        for key in ("sigma_xx", "sigma_yx"):
            np.testing.assert_allclose(r[key], c[key], rtol=0, atol=1e-14)
        np.testing.assert_array_equal(r["loss"], result["loss"][k])
        assert "seed" not in r and "steps" not in r
    assert [r["index"] for r in S.cases(result, [2, 0])] == [2, 0]
    assert [r["index"] for r in S.cases(result, np.array([True, False, True]))] == [0, 2]
    assert list(S.cases(result, [])) == []
    for bad in (np.zeros(0, bool), np.array([True, False]), [3]):  # masks of the wrong length, an index out of range
        with pytest.raises(ValueError, match="select"):
            S.cases(result, bad)                                      # refused at the call, before any record


def test_cases_records_equal_the_cases_run_one_at_a_time():
    """Two shapes in one padded sweep (constructed minima, then their autodiff spectra): each record equals the same
    case built alone (exactly: the same compiled chunk, row by row), its eigenvalues equal the NumPy analytic
    Hessian of the record's plain weights and moments (round-off, 1e-10 of lambda_max), and its moments are those
    of its own cut data."""
    shapes, keys = [(6, 4, 3), (4, 3, 3, 3)], jax.random.split(jax.random.key(5), 2)
    gauge = np.array([0.0, 0.3])
    built = constructed_minima(keys, shapes, counts=(50, 30, 20), gauge=gauge)
    spec = hessian_spectra(built["theta"], built["widths"], built["depth"], built["X"], built["Y"])
    records = list(S.cases({**built, **spec}))
    for k, r in enumerate(records):
        alone = constructed_minima(keys[k:k + 1], [shapes[k]], counts=(50, 30, 20), gauge=gauge[k:k + 1])
        one = next(S.cases(alone))
        assert r["widths"] == one["widths"] == shapes[k]
        for key in ("theta", "X", "Y", "sv", "sigma_xx", "sigma_yx"):
            np.testing.assert_array_equal(r[key], one[key])
        Sxx, Syx = r["X"] @ r["X"].T / F.N_SAMPLES, r["Y"] @ r["X"].T / F.N_SAMPLES
        np.testing.assert_allclose(r["sigma_xx"], Sxx, rtol=0, atol=1e-14)
        np.testing.assert_allclose(r["sigma_yx"], Syx, rtol=0, atol=1e-14)
        ev = np.linalg.eigvalsh(R.numpy_dense_hessian(r["theta"], Sxx, Syx, r["widths"]))
        assert r["eigenvalues"].shape == ev.shape == (S.n_params(shapes[k]),)
        np.testing.assert_allclose(r["eigenvalues"], ev, rtol=0, atol=1e-10 * np.abs(ev).max())


def test_train_sweep_divergence_is_data():
    # the quick GD sweep's static configuration (800 steps, records every 20): one compilation serves the
    # experiment, the contract rows and this test
    out = train_sweep(jax.random.key(0), (50, 30, 20), (6, 4, 3), np.array([0.5, 80.0]), steps=800, record_every=20)
    assert list(out["diverged"]) == [False, True]
    assert out["diverged_step"][0] == -1 and 1 <= out["diverged_step"][1] <= 800
    assert np.all(np.isfinite(out["theta"][1]))                          # frozen at the last finite iterate
    finite = out["loss"][~out["diverged"], -1]                           # statistics over the finite runs only
    assert finite.size == 1 and np.isfinite(finite[0])


def test_aligned_path_is_the_reduced_map():
    s = np.array([0.7, 0.5])
    path = aligned_path(s, 0.1, 0.4, steps=3)
    w = np.full(2, 0.1)
    for t in range(1, 4):
        w = T.aligned_mode_step(s, w, 0.4)
        np.testing.assert_allclose(path[t], w**2, rtol=1e-14)


@pytest.mark.parametrize("call, param", [
    # widths that do not match X used to return a silently truncated vector
    (lambda: S.balanced_minimum(None, np.ones((4, 8)), np.ones((2, 8)), (3, 3, 2)), "X"),
    (lambda: S.balanced_minimum(None, np.eye(4), np.ones((3, 4)), (4, 3, 2)), "Y"),
    # a wrong-length parameter vector used to fail inside reshape
    (lambda: S.unflatten(jnp.ones(11), (4, 3, 2)), "theta"),
    (lambda: S.loss(jnp.ones(11), jnp.ones((4, 5)), jnp.ones((2, 5)), (4, 3, 2)), "theta"),
    (lambda: S.train_gd(jax.random.key(0), np.zeros(18), np.eye(4), np.ones((2, 4)), (4, 3, 2), -0.1, steps=4,
                        record_every=2), "eta"),                 # a negative step used to run gradient ascent
    (lambda: S.train_gd(jax.random.key(0), np.zeros(18), np.eye(4), np.ones((2, 4)), (4, 3, 2), "fast", steps=4,
                        record_every=2), "eta"),
    (lambda: S.train_gd(jax.random.key(0), np.zeros(18), np.eye(4), np.ones((2, 4)), (4, 3, 2), 0.1, steps=5,
                        record_every=2), "steps"),
    (lambda: S.train_gd(jax.random.PRNGKey(0), np.zeros(18), np.eye(4), np.ones((2, 4)), (4, 3, 2), 0.1, steps=4,
                        record_every=2), "key"),
    (lambda: S.class_data(jax.random.key(0), np.array([5, 0, 2]), 3), "counts"),
    (lambda: S.class_data(jax.random.key(0), np.array([5, 3, 2]), 2), "d0"),
    (lambda: S.whitened_data(jax.random.key(0), 5, 2, 4), "d0"),
    (lambda: S.forward(jnp.ones(6), jnp.ones((3, 2)), (3, 2), "gelu"), "activation"),
    (lambda: S.random_gauge(jax.random.key(0), jnp.ones(18), (4, 3, 2), float("nan")), "scale"),
    (lambda: F.frame_widths((2,) * 8, 5), "widths"),
    (lambda: F.frame_widths((7, 3), 5), "widths"),
    (lambda: train_sweep(jax.random.key(0), (50, 30, 20), (6, 4, 3), np.array([0.1, -0.1]), steps=4, record_every=2),
     "eta"),
    (lambda: train_sweep(jax.random.key(0), (50, 30, 21), (6, 4, 3), 0.1, steps=4, record_every=2), "counts"),
    (lambda: train_sweep(jax.random.key(0), (50, 30, 20), (6, 4, 3), 0.1, act=5, steps=4, record_every=2), "act"),
    (lambda: constructed_minima(jax.random.key(0), (6, 4, 3), gauge=[0.1, np.inf]), "gauge"),
    (lambda: constructed_minima(jax.random.key(0), [(6, 4, 3)] * 2, gauge=[0.1, 0.2, 0.3]), "widths"),
    (lambda: constructed_minima(jax.random.key(0), (6, 2, 3)), "widths"),
    (lambda: aligned_path([0.5], 0.1, 0.0, steps=3), "eta"),
    (lambda: R.bench_cases("huge"), "scale"),
])
def test_sims_bad_inputs_name_the_parameter(call, param):
    with pytest.raises((ValueError, TypeError), match=param):
        call()


def test_bench_case_runs_small():
    cases = R.bench_cases("small")
    assert [c.name for c in cases][:2] == ["linear_hessian lanczos top eig P=160", "linear_hessian dense top eig P=160"]
    # the smallest problem, matrix-free: JAX HVP-Lanczos against the NumPy analytic HVP + NumPy Lanczos
    case = cases[0]
    a, b = case.run_jax(), case.run_numpy()
    case.check(np.asarray(a), b)
    assert np.isfinite(b) and b > 0
    with pytest.raises(AssertionError):      # the comparison can fail: a 1e-6 relative error is caught
        case.check(np.asarray(a) * (1 + 1e-6), b)
    # the dense pair: JAX autodiff Hessian + eigenvalues-only top eigenvalue against the NumPy analytic Hessian +
    # LAPACK's selected-eigenvalue driver (scipy.linalg.eigvalsh)
    case = cases[1]
    a, b = case.run_jax(), case.run_numpy()
    case.check(np.asarray(a), b)
    with pytest.raises(AssertionError):
        case.check(np.asarray(a) * (1 + 1e-6), b)


# ----------------------------------------------------------------------------------------------
# laws beyond whitened full-rank inputs (constructors and closed forms; the claims sweep them)
# ----------------------------------------------------------------------------------------------

def test_class_means_and_projected_minima_against_the_numpy_hessian():
    from sims.linear_hessian import laws as LW
    X, Y = LW.class_means_data(jax.random.key(0), np.array([50, 30, 20]), 5, 2.0)
    w = (5, 4, 3)
    theta = LW.min_norm_balanced_minimum(jax.random.key(1), X, Y, w)
    n = X.shape[1]
    ev = np.linalg.eigvalsh(R.numpy_dense_hessian(theta, X @ X.T / n, Y @ X.T / n, w))
    np.testing.assert_allclose(ev, T.class_means_spectrum([0.5, 0.3, 0.2], w, 2.0), atol=1e-12)
    assert ev[-1] == pytest.approx(T.class_means_sharpness([0.5, 0.3, 0.2], 2, 2.0), rel=1e-12)
    # the whitened law at the input scale r^2 is a different number (the rival the claim rejects)
    assert abs(ev[-1] - T.class_sharpness([0.5, 0.3, 0.2], 2, 4.0)) > 0.3
    X, Y = LW.projected_data(jax.random.key(2), 6, 40, 4, alpha=1.5, dL=3, rank=2)
    np.testing.assert_allclose(np.linalg.eigvalsh(X @ X.T / 40), [0, 0, 1.5, 1.5, 1.5, 1.5], atol=1e-12)
    w = (6, 4, 3)
    theta = LW.min_norm_balanced_minimum(jax.random.key(3), X, Y, w)
    Sxx, Syx = X @ X.T / 40, Y @ X.T / 40
    ev = np.linalg.eigvalsh(R.numpy_dense_hessian(theta, Sxx, Syx, w))
    sv = np.linalg.svd(Syx, compute_uv=False)
    sv[sv < 1e-10 * sv[0]] = 0
    np.testing.assert_allclose(ev, T.projected_spectrum(w, 1.5, sv, 4), atol=1e-12 * ev[-1])
    assert T.numeric_rank(ev) == 2 * (4 + 3 - 2)


@pytest.mark.parametrize("call, param", [
    (lambda: T.class_means_sharpness([0.5, 0.5], 2, 0.0), "radius"),
    (lambda: T.class_means_spectrum([0.5, 0.5], (4, 1, 2), 1.0), "widths"),
    (lambda: T.projected_spectrum((4, 3, 2), 1.0, [1.0], 5), "input_rank"),
    (lambda: T.projected_spectrum((4, 3, 2), 1.0, [1.0, 0.5], 1), "singular_values"),
])
def test_law_bad_inputs_name_the_parameter(call, param):
    with pytest.raises((ValueError, TypeError), match=param):
        call()


@pytest.mark.parametrize("call, param", [
    (lambda: __import__("sims.linear_hessian.laws").linear_hessian.laws.class_means_data(
        jax.random.key(0), np.array([5, 3]), 1, 1.0), "d0"),
    (lambda: __import__("sims.linear_hessian.laws").linear_hessian.laws.class_means_data(
        jax.random.key(0), np.array([5, 3]), 3, -1.0), "radius"),
    (lambda: __import__("sims.linear_hessian.laws").linear_hessian.laws.projected_data(
        jax.random.key(0), 4, 10, 5), "input_rank"),
    (lambda: __import__("sims.linear_hessian.laws").linear_hessian.laws.projected_data(
        jax.random.key(0), 4, 10, 2, counts=np.array([5, 3, 2])), "counts"),
    (lambda: __import__("sims.linear_hessian.laws").linear_hessian.laws.min_norm_balanced_minimum(
        jax.random.key(0), np.eye(3), np.ones((2, 4)), (3, 2, 2)), "Y"),
    (lambda: __import__("sims.linear_hessian.laws").linear_hessian.laws.min_norm_balanced_minimum(
        jax.random.PRNGKey(0), np.eye(3), np.ones((2, 3)), (3, 2, 2)), "key"),
])
def test_laws_sims_bad_inputs_name_the_parameter(call, param):
    with pytest.raises((ValueError, TypeError), match=param):
        call()


def test_distinct_top_and_gauge_derivatives():
    from paper_checks.linear_hessian import experiments as E
    from paper_checks.linear_hessian import laws as LA
    np.testing.assert_allclose(LA.distinct_top([5.0, 4.999, 3.0, 3.0, 1.0], 3), [5.0, 3.0, 1.0])
    # central differences of a known quadratic-plus-cubic: gradient and Hessian recovered to O(h^2)
    A = np.array([[2.0, 0.5], [0.5, 1.0]])
    f = lambda e: 1.0 + np.array([0.3, -0.2]) @ e + 0.5 * e @ A @ e + e[0] ** 3  # noqa: E731
    pts = E.gauge_stencil(2, 1e-3)
    f0, g, M = LA.gauge_derivatives(np.array([f(p) for p in pts]), 2, 1e-3)
    assert f0 == 1.0
    np.testing.assert_allclose(g, [0.3, -0.2], atol=1e-5)
    np.testing.assert_allclose(M, A, atol=1e-5)


def test_bench_gd_sweep_case_agrees_and_can_fail():
    # the NumPy GD (second-moment gradient, batched over step sizes) against train_gd on a small problem
    theta0, X, Y, etas = R._train_problem((6, 4, 3), 4, 0)
    a = np.asarray(R._run_jax_train((6, 4, 3), 4, 50))
    b = R._run_numpy_train((6, 4, 3), 4, 50)
    R._close_train(a, b)
    with pytest.raises(AssertionError):
        R._close_train(a * (1 + 1e-5), b)
    # covariance_loss differs from the data loss by the constant tr(Sigma_yy) / 2: same gradient
    n = X.shape[1]
    g_data = np.asarray(_grad(jnp.asarray(theta0), jnp.asarray(X), jnp.asarray(Y), widths=(6, 4, 3)))
    g_cov = np.asarray(jax.grad(S.covariance_loss)(jnp.asarray(theta0), X @ X.T / n, Y @ X.T / n, (6, 4, 3)))
    np.testing.assert_allclose(g_cov, g_data, rtol=1e-10, atol=1e-14)
    with pytest.raises(ValueError, match="etas"):
        R.numpy_train_gd(theta0, X, Y, (6, 4, 3), np.array([0.1, -0.1]), 2)
