"""Unit tests of the muon topic: the update rules against independent NumPy computations, the simulators against
NumPy loops, the closed forms against brute force and an ODE solver, divergence as data."""
import numpy as np
import pytest
import sympy as sp
from scipy.integrate import solve_ivp

import sims.muon as sm
import theory.muon as th


def _numpy_polar(m):
    """O = M (M^T M)^(-1/2) from a symmetric eigendecomposition (no SVD), for a full-column-rank M (transposed if wide)."""
    wide = m.shape[0] < m.shape[1]
    a = m.T if wide else m
    vals, vecs = np.linalg.eigh(a.T @ a)
    o = a @ (vecs / np.sqrt(vals)) @ vecs.T
    return o.T if wide else o


@pytest.mark.parametrize("shape", [(7, 4), (4, 7), (5, 5)])
def test_polar_equals_an_eigendecomposition_polar_factor(shape):
    m = np.random.default_rng(0).normal(size=shape)
    np.testing.assert_allclose(np.asarray(sm.polar(m)), _numpy_polar(m), atol=1e-12)  # round-off of two factorizations
    np.testing.assert_array_equal(np.asarray(sm.polar(np.zeros(shape))), 0.0)


@pytest.mark.parametrize("shape, steps", [((7, 4), 5), ((4, 7), 3), ((6, 6), 8)])
def test_newton_schulz_maps_each_singular_value_by_the_scalar_polynomial(shape, steps):
    m = np.random.default_rng(1).normal(size=shape)
    u, sig, vt = np.linalg.svd(m, full_matrices=False)
    x = sig / np.linalg.norm(m)
    a, b, c = th.NS5
    for _ in range(steps):  # the scalar map written out here, not theory.muon.ns_map
        x = a * x + b * x**3 + c * x**5
    np.testing.assert_allclose(np.asarray(sm.newton_schulz(m, steps)), (u * x) @ vt, atol=1e-12)
    assert th.ns_map(sig / np.linalg.norm(m), steps) == pytest.approx(x, abs=1e-14)


@pytest.mark.parametrize("shape, steps", [((7, 4), 5), ((4, 7), 3), ((6, 6), 8)])
def test_newton_schulz_equals_optaxs_muon_iteration(shape, steps):
    """optax's Muon (an independent implementation) with its norm's epsilon set to 0 runs the same iteration."""
    import jax.numpy as jnp
    from optax.contrib._muon import orthogonalize_via_newton_schulz

    import sims.optimizers as so

    m = np.random.default_rng(2).normal(size=shape)
    theirs = orthogonalize_via_newton_schulz(jnp.asarray(m), jnp.asarray(th.NS5), steps, eps=0.0)
    # round-off: steps of products of matrices with entries O(1), summed in a different order
    np.testing.assert_allclose(np.asarray(so.newton_schulz(m, steps)), np.asarray(theirs), atol=1e-12)
    np.testing.assert_array_equal(np.asarray(so.orthogonalize(m, "ns", steps)), np.asarray(so.newton_schulz(m, steps)))
    np.testing.assert_array_equal(np.asarray(so.orthogonalize(m, "polar")), np.asarray(so.polar(m)))
    with pytest.raises(ValueError, match="method"):
        so.orthogonalize(m, "svd")


def test_adam_direction_equals_optaxs_adam_without_epsilon():
    """optax's scale_by_adam(eps=0) over three steps gives m_hat/sqrt(v_hat); a coordinate whose gradients are all 0
    gives 0 here where optax's 0/0 gives NaN."""
    import jax.numpy as jnp
    import optax

    import sims.optimizers as so

    b1, b2 = 0.9, 0.95
    grads = np.random.default_rng(3).normal(size=(3, 4))
    grads[:, 3] = 0.0
    tx = optax.scale_by_adam(b1=b1, b2=b2, eps=0.0)
    state, m, v = tx.init(jnp.zeros(4)), np.zeros(4), np.zeros(4)
    for t, g in enumerate(grads, start=1):
        theirs, state = tx.update(jnp.asarray(g), state)
        m, v = b1 * m + (1 - b1) * g, b2 * v + (1 - b2) * g * g
        ours = np.asarray(so.adam_direction(m / (1 - b1**t), v / (1 - b2**t)))
        np.testing.assert_allclose(ours[:3], np.asarray(theirs)[:3], rtol=1e-13)  # round-off of one division
        assert ours[3] == 0.0 and np.isnan(np.asarray(theirs)[3])


def test_ns_polynomial_and_band():
    p = th.ns_poly_expr()
    assert float(sp.diff(p, th.S).subs(th.S, 0)) == pytest.approx(3.4445, abs=1e-15)
    lo, hi = th.ns_band(5)
    s = np.linspace(1e-3, 1.0, 1_000_001)
    y = np.polynomial.polynomial.polyval(s, [0, 3.4445, 0, -4.7750, 0, 2.0315])
    for _ in range(4):
        y = np.polynomial.polynomial.polyval(y, [0, 3.4445, 0, -4.7750, 0, 2.0315])
    # the refined max sits at or above this grid's, and above it by less than the grid's miss of a peak:
    # (spacing 1e-6)^2 |p''| / 8, far below 1e-6 for the composed polynomial's curvature (~1e5 at most)
    assert hi >= y.max() - 1e-12 and hi - y.max() < 1e-6
    assert lo == pytest.approx(y.min(), abs=1e-6) and lo < 1.0 < hi


def test_aligned_norm_solves_the_recursion_and_its_sup():
    w = th.aligned_norm_expr()
    assert sp.simplify(w.subs(th.T, th.T + 1) - (1 - th.ETA * th.LAM) * w - th.ETA) == 0
    assert sp.simplify(w.subs(th.T, 0)) == 0
    for el in (0.3, 1.0, 1.4, 1.9):
        ts = np.arange(1, 41)
        brute = max(th.aligned_norm(el / 2.0, 2.0, int(t)) * 2.0 for t in ts)
        assert th.sup_from_zero(el / 2.0, 2.0, 40)[0] == pytest.approx(float(brute), rel=1e-13)
    assert th.ball_radius(0.1, 2.0) == 0.5 and th.excess_factor(0.75, 2.0) == pytest.approx(0.5)


def test_aligned_recursion_with_the_exact_polar_factor_is_the_closed_form():
    s = np.array([3.0, 2.0, 1.0])  # every mode outside the ball of radius 1/lam = 1/2
    out = th.aligned_recursion(s, 0.02, 2.0, momentum=0.9, n_steps=50)
    want = np.array([th.aligned_norm(0.02, 2.0, t) for t in range(1, 51)])
    np.testing.assert_allclose(out, np.repeat(want[:, None], 3, axis=1), rtol=1e-13)


def _numpy_train(eta, lam, y, w0, beta, steps, ns=None):
    w, m, svs = w0.copy(), np.zeros_like(w0), []
    for _ in range(steps):
        m = beta * m + (w - y)
        if ns is None:
            o = _numpy_polar(m)
        else:
            u, sig, vt = np.linalg.svd(m, full_matrices=False)
            o = (u * th.ns_map(sig / np.linalg.norm(m), ns)) @ vt
        w = (1 - eta * lam) * w - eta * o
        svs.append(np.linalg.svd(w, compute_uv=False))
    return np.array(svs), w


# shapes and step counts of tests/contract_muon.py's rows: the compiled programs are shared
@pytest.mark.parametrize("method, ns", [("polar", None), ("ns", 3)])
def test_train_equals_a_numpy_loop(method, ns):
    rng = np.random.default_rng(2)
    y, w0 = rng.normal(size=(5, 3)), 0.2 * rng.normal(size=(5, 3))
    out = sm.train(np.array([0.05, 0.1]), 0.7, y, w0, method=method, ns_steps=ns or 5, momentum=0.8, n_steps=20)
    for i, eta in enumerate((0.05, 0.1)):
        svs, w = _numpy_train(eta, 0.7, y, w0, 0.8, 20, ns)
        np.testing.assert_allclose(out["sv"][i], svs, atol=1e-11)
        np.testing.assert_allclose(out["w"][i], w, atol=1e-11)
    assert not out["diverged"].any()


def test_train_divergence_is_flagged_at_the_numpy_loops_step():
    rng = np.random.default_rng(3)
    y = 1e3 * rng.normal(size=(5, 3))
    out = sm.train(np.array([0.5, 4.0]), 1.0, y, np.zeros_like(y), n_steps=400)
    w, first = np.zeros_like(y), -1
    for t in range(1, 401):  # eta lambda = 4: the singular values grow by a factor 3 per step, past 1e150 near t = 315
        w = (1 - 4.0) * w - 4.0 * _numpy_polar(w - y)
        if np.abs(w).max() > 1e150:
            first = t
            break
    assert out["diverged"].tolist() == [False, True] and out["diverged_step"].tolist() == [-1, first]


def test_factorization_equals_a_numpy_loop():
    rng = np.random.default_rng(4)
    s = np.array([3.0, 1.0, 0.5])
    w1, w2 = 0.1 * rng.normal(size=(3, 3)), 0.1 * rng.normal(size=(3, 3))
    etas = (0.01, 0.03, 0.05)
    out = sm.factorization(np.array(etas), s, w1, w2, n_steps=20)
    for i, eta in enumerate(etas):
        a, b = w1.copy(), w2.copy()
        for _ in range(20):
            r = b @ a - np.diag(s)
            ga, gb = b.T @ r, r @ a.T  # gradients of 1/2 |W2 W1 - M|^2 by hand
            a, b = a - eta * _numpy_polar(ga), b - eta * _numpy_polar(gb)
        np.testing.assert_allclose(out["modes"][i, -1], np.diag(b @ a), atol=1e-11)


def test_single_matrix_arrival_by_brute_force():
    s, eta = np.array([0.37, 1.0, 2.21]), 0.03
    want = [next(t for t in range(1, 10_000) if abs(t * eta - si) <= eta / 2) for si in s]
    np.testing.assert_array_equal(th.single_matrix_arrival(s, eta), want)


def test_gd_arrival_is_the_logistic_flows_hitting_time():
    s, eta, alpha, frac = 2.0, 0.01, 0.05, 0.9
    sol = solve_ivp(lambda t, u: 2 * eta * u * (s - u), (0, 1e5), [alpha**2], rtol=1e-11, atol=1e-14,
                    events=lambda t, u: u[0] - frac * s)
    assert th.gd_factorization_arrival(s, eta, alpha, frac) == pytest.approx(sol.t_events[0][0], rel=1e-7)
    assert th.factorization_arrival(4.0, 0.01, 0.25) == pytest.approx(100.0)


def test_gd_threshold_is_two_over_a_finite_difference_sharpness():
    s = 3.0
    a = b = np.sqrt(s)
    f = lambda x, y: 0.5 * (x * y - s) ** 2  # noqa: E731
    h = 1e-4
    hess = np.array([[(f(a + h, b) - 2 * f(a, b) + f(a - h, b)) / h**2,
                      (f(a + h, b + h) - f(a + h, b - h) - f(a - h, b + h) + f(a - h, b - h)) / (4 * h**2)],
                     [0.0, (f(a, b + h) - 2 * f(a, b) + f(a, b - h)) / h**2]])
    hess[1, 0] = hess[0, 1]
    # central differences: O(h^2) truncation, 1e-6 relative with margin
    assert th.gd_threshold(np.array([1.0, s])) == pytest.approx(2.0 / np.linalg.eigvalsh(hess).max(), rel=1e-6)


# --- the NumPy reference of make bench (sims/reference/muon.py), on tests/contract_muon.py's calls (shared programs)
def test_train_equals_the_bench_reference():
    import jax

    from sims.reference import muon as ref
    from tests import contract_muon as c

    key = jax.random.key(3)
    xi = sm.normal_draws(key, (20,) + c.Y.shape)  # the draws the simulator reads, replayed by the reference
    noise = np.array([0.3, 0.0, 0.6])
    for method, ks in (("polar", 5), ("ns", np.array([5, 3, 8]))):  # per-run Newton-Schulz counts: the masked loop
        out = c._train(method=method, ns_steps=ks, noise=noise, key=key)
        want = ref.train_numpy(c.ETA, 0.5, c.Y, c.W0, method=method, ns_steps=ks, momentum=0.9, noise=noise, xi=xi,
                               n_steps=20)
        # the same LAPACK gesdd and the same steps on both sides: round-off (1e-16 per operation, amplified by the
        # polar factor's sensitivity ~1/sigma_min of the momentum and 20 steps) stays far below 1e-10, while a wrong
        # factor anywhere moves the singular values by O(1e-2) or more
        np.testing.assert_allclose(out["sv"], want["sv"], rtol=0, atol=1e-10)
        np.testing.assert_allclose(out["w"], want["w"], rtol=0, atol=1e-10)
        assert not want["diverged"].any()
    # the contract's diverging call (eta lambda = 4 and 5): flagged at the same step, frozen at 0 alike
    out = c._train(eta=np.array([4.0, 5.0]), lam=1.0, noise=0.0, momentum=0.0, n_steps=400)
    want = ref.train_numpy(np.array([4.0, 5.0]), 1.0, c.Y, c.W0, n_steps=400)
    assert want["diverged"].all() and out["diverged_step"].tolist() == want["diverged_step"].tolist()
    np.testing.assert_allclose(out["sv"], want["sv"], rtol=1e-10, atol=0)


def test_factorization_equals_the_bench_reference():
    from sims.reference import muon as ref
    from tests import contract_muon as c

    out = c._factorization()
    want = ref.factorization_numpy(c.ETA, c.S, c.A1, c.A2, n_steps=20)
    # hand gradients and the product formed once per step against jax.grad and two products: round-off only (modes
    # are O(1), a factor 2 in a gradient or a step moves them by O(eta) = O(1e-2))
    np.testing.assert_allclose(out["modes"], want["modes"], rtol=0, atol=1e-11)
    np.testing.assert_allclose(out["w1"], want["w1"], rtol=0, atol=1e-11)
    np.testing.assert_allclose(out["w2"], want["w2"], rtol=0, atol=1e-11)
    assert out["diverged_step"].tolist() == want["diverged_step"].tolist() == [-1, -1, -1]
