"""Unit tests of the adaptive-EoS topic: the sympy frozen map against NumPy roots, the Adam simulator against a
NumPy loop (adaptive and frozen), the lattice cycles against a direct sign check, the EMA cycle against iteration,
and the underflow trap flagged as data."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import sympy as sp

import sims.adaptive_eos as sim
import theory.adaptive_eos as th


def test_threshold_is_the_flip_of_the_characteristic_polynomial():
    b = th.BETA1
    assert sp.simplify(th._threshold_expr() - 2 * (1 + b) / (1 - b)) == 0
    for beta1 in (0.0, 0.5, 0.9, 0.95):
        thr = th.frozen_threshold(beta1)
        # the state matrix's eigenvalues (NumPy) at the threshold: one at -1, the other -beta_1
        M = np.array(th.frozen_update_matrix().subs({th.ETA: 1.0, th.Q: thr, th.BETA1: beta1}), dtype=float)
        ev = np.sort(np.linalg.eigvals(M).real)
        np.testing.assert_allclose(ev, np.sort([-1.0, -beta1]), atol=1e-12)
        assert th.frozen_spectral_radius(0.999 * thr, beta1) < 1 < th.frozen_spectral_radius(1.001 * thr, beta1)


def _numpy_adam(H, x0, eta, b1, b2, n, p=None):
    x, m, v = x0.copy(), np.zeros_like(x0), np.zeros_like(x0)
    for t in range(1, n + 1):
        g = H @ x
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        mh, vh = m / (1 - b1**t), v / (1 - b2**t)
        x = x - eta * (mh / np.sqrt(vh) if p is None else mh / p)
    return x


@pytest.mark.parametrize("frozen", [False, True])
def test_simulator_equals_a_numpy_loop(frozen):
    rng = np.random.default_rng(3)
    A = rng.normal(size=(3, 3))
    H = A @ A.T + 0.1 * np.eye(3)
    x0 = rng.normal(size=(2, 3))
    p = np.array([0.7, 1.3, 2.0]) if frozen else None
    out = sim.adam_quadratic(H, x0, [0.05, 0.02], [0.9, 0.5], [0.99, 0.9], n_steps=40, n_blocks=2, block=5,
                             precond=p)
    ref = np.stack([_numpy_adam(H, x0[i], e, b1, b2, 40, p) for i, (e, b1, b2) in
                    enumerate([(0.05, 0.9, 0.99), (0.02, 0.5, 0.9)])])
    np.testing.assert_allclose(out["x"], ref, rtol=1e-11, atol=1e-14)
    assert not out["underflowed"].any() and not out["diverged"].any()


def test_lattice_signs_and_cycle_values_by_hand():
    rng = np.random.default_rng(5)
    A = rng.normal(size=(4, 4))
    H = A @ A.T
    S = th.rmsprop_cycle_signs(H)
    for s in S:
        assert np.array_equal(np.sign(H @ s), s)
        eta = 0.02
        x = eta / 2 * s
        assert np.array_equal(x - eta * np.sign(H @ x), -x)  # one RMSProp step (v = g^2) flips the cycle
        assert th.rmsprop_cycle_loss(H, s, eta) == pytest.approx(0.5 * x @ H @ x, rel=1e-14)
        P = np.abs(H @ x)
        evals = np.linalg.eigvals(np.diag(1 / P) @ H).real
        assert np.min(np.abs(evals - 2 / eta)) < 1e-9 / eta
        assert th.rmsprop_cycle_sharpness(H, s, eta) == pytest.approx(eta * evals.max(), rel=1e-10)
    # every other sign vector fails the condition
    n_all = sum(np.array_equal(np.sign(H @ np.r_[1.0, t]), np.r_[1.0, t]) for t in
                np.array(np.meshgrid(*[[1.0, -1.0]] * 3)).reshape(3, -1).T)
    assert n_all == len(S)


def test_ema_cycle_amplitude_is_self_consistent():
    eta, b1 = 0.01, 0.9
    A = th.ema_cycle_amplitude(eta, b1)
    m, g = 0.0, 1.0
    for _ in range(2000):  # the EMA of an alternating gradient +-g settles to +-g (1 - b1)/(1 + b1)
        g = -g
        m = b1 * m + (1 - b1) * g
    assert eta * abs(m) == pytest.approx(2 * A, rel=1e-12)


def test_underflow_trap_is_flagged_not_frozen_silently():
    # beta_1 = 0.5 with a long beta_2 memory from 5 A*: x contracts below the smallest normal float64
    eta, b1 = 0.01, 0.5
    x0 = np.array([[5 * th.ema_cycle_amplitude(eta, b1)], [5 * th.ema_cycle_amplitude(eta, b1)]])
    out = sim.adam_quadratic(np.array([[1.0]]), x0, eta, b1, [0.9999, 0.99], n_steps=12000, n_blocks=1, block=10)
    assert out["underflowed"].tolist() == [True, False]
    assert 0 < out["underflow_step"][0] < 12000
    assert np.isnan(out["sharp_mean"][0]).all() and np.isfinite(out["sharp_mean"][1]).all()


def test_mlp_adam_and_its_lanczos_sharpness_against_a_loop_and_a_dense_hessian():
    import jax
    import jax.numpy as jnp

    # the shapes and static settings of the contract row (tests/contract_adaptive_eos.py): one compiled program
    X = np.random.default_rng(1).normal(size=(6, 2))
    Y = np.sin(X[:, 0])
    keys = jax.random.split(jax.random.key(7), 3)
    etas, n_par = [0.01, 0.02, 0.005], 2 * 3 + 3
    out = sim.adam_mlp(keys, etas, 0.9, 0.99, X, Y, hidden=3, n_burn=2, n_meas=2, every=2, lanczos_iter=n_par)

    def loss(w):
        return 0.5 * jnp.mean((jnp.tanh(X @ w[:6].reshape(2, 3)) @ w[6:] - Y) ** 2)

    for i, eta in enumerate(etas):
        k1, k2, _ = jax.random.split(keys[i], 3)
        w = np.concatenate([np.asarray(jax.random.normal(k1, (6,))) / np.sqrt(2),
                            np.asarray(jax.random.normal(k2, (3,))) / np.sqrt(3)])
        m, v = np.zeros(n_par), np.zeros(n_par)
        for t in range(1, 7):  # a NumPy loop of Adam (eps = 0), gradients from jax.grad
            g = np.asarray(jax.grad(loss)(w))
            m, v = 0.9 * m + 0.1 * g, 0.99 * v + 0.01 * g * g
            w = w - eta * (m / (1 - 0.9**t)) / np.sqrt(v / (1 - 0.99**t))
        np.testing.assert_allclose(out["theta"][i], w, rtol=1e-10, atol=1e-13)
        r = 1 / np.sqrt(np.sqrt(out["v_hat"][i]))
        dense = np.asarray(jax.hessian(loss)(jnp.asarray(w)))
        top = eta * np.linalg.eigvalsh(r[:, None] * dense * r[None, :])[-1]
        # Lanczos with as many steps as parameters is exact up to round-off
        assert out["sharp"][i, -1] == pytest.approx(top, rel=1e-8)


@pytest.mark.parametrize("frozen", [False, True])
def test_numpy_reference_equals_the_simulator(frozen):
    """sims.reference.adaptive_eos.adam_quadratic_numpy against the simulator, every output, on the shapes of
    test_simulator_equals_a_numpy_loop (3-D: the stacked-eigvalsh sharpness) and on a 2-D problem with one H per run
    (the closed-form top eigenvalue), a coordinate whose gradient is exactly 0 (underflow flag at step 1, NaN
    statistics) and, frozen, a step size far above the threshold (the divergence step and the frozen iterate).
    Tolerance: both sides run float64 with a different summation order (jax.grad's two products against one
    symmetrized product; LAPACK's eigensolver with and without eigenvectors): a few ulps per step, which 40 steps of
    these non-chaotic runs leave below 1e-12 (measured), so rtol 1e-9; the flags and steps exactly."""
    from sims.reference.adaptive_eos import adam_quadratic_numpy

    rng = np.random.default_rng(3)
    A = rng.normal(size=(3, 3))
    H = A @ A.T + 0.1 * np.eye(3)
    x0 = rng.normal(size=(2, 3))
    p = np.array([0.7, 1.3, 2.0]) if frozen else None
    H2 = np.stack([np.array([[2.0, 0.5], [0.5, 1.0]]), np.diag([3.0, 0.0])])
    cases = [(H, x0, [0.05, 0.02], [0.9, 0.5], [0.99, 0.9], p),
             (H2, np.array([[0.3, -0.2], [0.1, 0.4]]), [0.05, 1e4 if frozen else 0.03], [0.9, 0.5], [0.99, 0.9],
              np.array([1.0, 0.5]) if frozen else None)]
    for Hc, xc, eta, b1, b2, pc in cases:
        kw = {"n_steps": 40, "n_blocks": 2, "block": 5, "precond": pc}
        out, ref = sim.adam_quadratic(Hc, xc, eta, b1, b2, **kw), adam_quadratic_numpy(Hc, xc, eta, b1, b2, **kw)
        assert set(ref) == set(out)
        for k in out:
            if out[k].dtype.kind in "biu":
                np.testing.assert_array_equal(ref[k], out[k], err_msg=k)
            else:
                np.testing.assert_allclose(ref[k], out[k], rtol=1e-9, atol=0, err_msg=k)
    assert out["underflowed"][1] and out["underflow_step"][1] == 1 and np.isnan(out["sharp_mean"][1]).all()
    assert out["diverged"][1] == frozen and not out["diverged"][0]



def test_sharpness_against_lapack():
    """The preconditioned sharpness (sims.hvp.largest_eigenvalue of the scaled matrix) against NumPy's LAPACK
    eigvalsh on random positive definite H and preconditioners at d = 1, 2, 3, 6, 17 (1e-12 relative: both backward
    stable, ~d eps ||S||), and its NaN (a zero preconditioner entry meets 0 * inf) and huge (1e-300) cases."""
    from sims.adaptive_eos import _sharpness

    rng = np.random.default_rng(4)
    for d in (1, 2, 3, 6, 17):
        a = rng.normal(size=(20, d, d))
        h = a @ np.swapaxes(a, 1, 2) + 0.1 * np.eye(d)
        p = rng.uniform(0.1, 3.0, size=(20, d))
        got = np.asarray(jax.vmap(_sharpness, in_axes=(0, 0, None))(jnp.asarray(h), jnp.asarray(p), 0.7))
        s = h / np.sqrt(p[:, :, None] * p[:, None, :])
        np.testing.assert_allclose(got, 0.7 * np.linalg.eigvalsh(s)[:, -1], rtol=1e-12)
    h, traced = jnp.asarray(np.diag([2.0, 1.0, 0.5]) + 0.1), jax.jit(_sharpness)  # as inside the runs
    assert np.isnan(float(traced(h, jnp.array([0.0, 1.0, 1.0]), 1.0)))
    assert float(traced(h, jnp.array([1e-300, 1.0, 1.0]), 1.0)) == pytest.approx(2.1e300, rel=1e-2)
