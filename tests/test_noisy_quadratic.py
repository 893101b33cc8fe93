"""The noisy-quadratic topic: theory.noisy_quadratic, sims.noisy_quadratic and the overlay of a user's run."""
from __future__ import annotations

import csv
import math
from fractions import Fraction

import jax
import numpy as np
import pytest
import sympy as sp

import sims.noisy_quadratic as sq
import sims.nqm as sn
import theory.noisy_quadratic as th
import theory.nqm as tn

pytestmark = pytest.mark.xdist_group("noisy_quadratic")


# ----------------------------------------------------------------------------- theory
def test_ema_ratio_sympy_matches_the_closed_form_and_iid_limit():
    ratio, (a, r) = th.ema_variance_sympy()
    closed = a * (1 + r * (1 - a)) / ((2 - a) * (1 - r * (1 - a)))
    assert sp.simplify(ratio - closed) == 0
    assert sp.simplify(ratio.subs(r, 0) - a / (2 - a)) == 0
    assert th.ema_variance_ratio(0.1, 0.2, 1.0) == pytest.approx(0.1 * 1.72 / (1.9 * 0.28), rel=1e-14)
    assert th.ema_variance_ratio(1.0, 0.5, 1.0) == pytest.approx(1.0, rel=1e-15)  # alpha = 1: z = x


def test_ema_and_uniform_bias_against_a_direct_recursion():
    alpha, eta, lam = 0.1, 0.3, 1.0
    rho = 1 - eta * lam
    x, z, zs, xs = 1.0, 1.0, [], []
    for _ in range(50):
        x = rho * x
        z = (1 - alpha) * z + alpha * x
        zs.append(z)
        xs.append(x)
    t = np.arange(1, 51)
    np.testing.assert_allclose(th.ema_bias(alpha, eta, lam, t), zs, rtol=1e-12)
    np.testing.assert_allclose(th.uniform_average_bias(eta, lam, t), np.cumsum(xs) / t, rtol=1e-12)
    # the degenerate case rho = 1 - alpha
    np.testing.assert_allclose(th.ema_bias(0.3, 0.3, 1.0, [5.0]), [0.7**5 + 0.3 * 5 * 0.7**5], rtol=1e-12)


def test_ema_final_second_moment_against_the_moment_recursion():
    r"""The closed form of :math:`E z_T^2` against a NumPy loop of the exact second moments of :math:`(x, z)`:
    :math:`M^+ = AMA^\top + \eta^2\sigma^2bb^\top`, :math:`A = ((\rho, 0), (\alpha\rho, 1-\alpha))`, :math:`b = (1, \alpha)`,
    :math:`M_0 = x_0^2\mathbf 1\mathbf 1^\top`, on modes that cover every branch of the geometric sums: a flat mode, both
    bases positive (either larger), equal bases (:math:`\eta\lambda = \alpha`) and an oscillating iterate
    (:math:`\rho < 0`); and at :math:`\alpha = 1` SGD's own moment (:func:`theory.nqm.final_second_moment`).
    """
    lam, eta, alpha, T, sa = np.array([0.0, 0.01, 1.0, 0.6, 3.0]), 0.5, 0.3, 40, np.array([1.0, 0.5, 2.0, 1.0, 0.3])
    x0 = np.array([1.0, -2.0, 0.5, 1.0, 1.5])
    want = []
    for lm, s_, m in zip(lam, sa, x0):
        rho = 1 - eta * lm
        A, b, M = np.array([[rho, 0.0], [alpha * rho, 1 - alpha]]), np.array([1.0, alpha]), m**2 * np.ones((2, 2))
        for _ in range(T):
            M = A @ M @ A.T + (eta * s_) ** 2 * np.outer(b, b)
        want.append(M[1, 1])
    # sums of 40 geometric terms: round-off ~1e-15 relative
    np.testing.assert_allclose(th.ema_final_second_moment(lam, eta, alpha, T, sa, x0), want, rtol=1e-12)
    np.testing.assert_allclose(th.ema_final_second_moment(lam, eta, 1.0, T, sa, x0),
                               tn.final_second_moment(lam, np.full(T, eta), x0**2, sa), rtol=1e-12)


def test_tuned_ema_final_loss_is_a_minimum():
    r"""The returned point is interior here and no nearby point (1 % in either parameter) has a lower exact loss."""
    lam, sa, T = np.logspace(0, -2, 6), np.sqrt(np.logspace(0, -2, 6)), 200
    loss, eta, alpha = th.tuned_ema_final_loss(lam, sa, T)
    at = lambda e, a: float(tn.expected_loss(lam, th.ema_final_second_moment(lam, e, a, T, sa, 1.0)))  # noqa: E731
    assert loss == pytest.approx(at(eta, alpha), rel=1e-12)
    assert 1e-4 < eta * lam.max() < 1.99 and 1e-7 < alpha < 1
    for e, a in ((1.01 * eta, alpha), (0.99 * eta, alpha), (eta, 1.01 * alpha), (eta, 0.99 * alpha)):
        assert at(e, a) >= loss * (1 - 1e-9)


def test_wsd_decay_shapes_by_hand():
    r"""The cooldown over the last half of :math:`T = 8` steps at :math:`u = 0, 1/4, 1/2, 3/4`: cosine
    :math:`\tfrac12(1+\cos\pi u)`, 1 - sqrt :math:`1-\sqrt u`, linear as before; the plateau untouched."""
    u = np.array([0.0, 0.25, 0.5, 0.75])
    np.testing.assert_allclose(th.schedule("wsd", 8, 2.0, cooldown=0.5, decay="cosine"),
                               np.r_[[2.0] * 4, 2.0 * 0.5 * (1 + np.cos(np.pi * u))], rtol=1e-15)
    np.testing.assert_allclose(th.schedule("wsd", 8, 2.0, cooldown=0.5, decay="sqrt"),
                               np.r_[[2.0] * 4, 2.0 * (1 - np.sqrt(u))], rtol=1e-15)
    np.testing.assert_array_equal(th.schedule("wsd", 8, 2.0, cooldown=0.5, decay="linear"),
                                  th.schedule("wsd", 8, 2.0, cooldown=0.5))


def test_sign_wd_start_cosine_against_the_norm_recursion():
    r""":math:`E\|w_T\|^2` from a loop of :math:`v^+ = (1-\eta\lambda)^2v + \eta^2d` and the share :math:`(1-\eta\lambda)^T`
    give the cosine; from the mean-square equilibrium norm it is the share itself, and at :math:`T = 0` it is 1."""
    eta, wd, d, w0, T = 0.01, 3.0, 16, 0.7, 120
    v = w0**2
    for _ in range(T):
        v = (1 - eta * wd) ** 2 * v + eta**2 * d
    a = (1 - eta * wd) ** T
    assert th.sign_wd_start_cosine(eta, wd, T, d, w0) == pytest.approx(a * w0 / math.sqrt(v), rel=1e-12)
    eq = math.sqrt(eta * d / (wd * (2 - eta * wd)))
    np.testing.assert_allclose(th.sign_wd_start_cosine(eta, wd, [0, 50, T], d, eq),
                               (1 - eta * wd) ** np.array([0, 50, T]), rtol=1e-12)


def test_last_iterate_bound_hand_cases_and_monotonicity():
    assert th.last_iterate_bound([1.0, 1.0], 1.0, 1.0) == pytest.approx(float(Fraction(5, 4)), rel=1e-15)
    assert th.last_iterate_bound([1.0, 0.5, 0.25], 1.0, 1.0) == pytest.approx(float(Fraction(265, 168)), rel=1e-15)
    # per-step G equals a scalar G; doubling D raises only the first term
    e = th.schedule("d2z", 50, 0.1)
    assert th.last_iterate_bound(e, 1.0, np.full(50, 2.0)) == pytest.approx(th.last_iterate_bound(e, 1.0, 2.0))
    assert th.last_iterate_bound(e, 2.0, 1.0) - th.last_iterate_bound(e, 1.0, 1.0) == pytest.approx(3 / (2 * e.sum()))


def test_merging_identity_and_its_inverse():
    rng = np.random.default_rng(0)
    T, eta = 30, 0.2
    g = rng.normal(size=T)
    ck, w = np.array([10, 20, 25, 30]), np.array([0.1, 0.2, 0.3, 0.4])
    x = np.concatenate([[1.0], 1.0 - eta * np.cumsum(g)])       # x_0..x_T of the constant run
    eff = th.merge_effective_schedule(eta, ck, w, T)
    assert np.dot(w, x[ck]) == pytest.approx(1.0 - np.dot(eff, g), rel=1e-14)
    back = th.merge_weights_for_schedule(eff, eta)
    nz = np.flatnonzero(back > 1e-15) + 1
    np.testing.assert_array_equal(nz, ck)
    np.testing.assert_allclose(back[ck - 1], w, rtol=1e-12)
    assert th.merge_error_variance(0.0, eta, ck, w, T)[0] == pytest.approx(0.0, abs=1e-30)


def test_adamw_weights_are_the_unrolled_recursion():
    rng = np.random.default_rng(1)
    eta, wd = th.schedule("cosine", 40, 0.3, floor=0.0), 0.7
    u = rng.normal(size=40)
    x = 2.0
    for e, ui in zip(eta, u):
        x = (1 - e * wd) * x - e * ui
    c = th.adamw_ema_weights(eta, wd)
    assert x == pytest.approx(np.prod(1 - eta * wd) * 2.0 - np.dot(c, u) / wd, rel=1e-12)


def test_weight_decay_formulas():
    angle, norm = th.sgd_wd_exact(0.1, 0.005, 1.0)
    assert angle == pytest.approx(math.sqrt(2 * 0.1 * 0.005), rel=1e-3)
    assert norm == pytest.approx(th.wd_equilibrium_norm(0.1, 0.005, 1.0), rel=1e-3)
    # the exact map's fixed point: v = (1 - eta wd)^2 v + eta^2 G^2 / v
    v = norm**2
    assert (1 - 0.0005) ** 2 * v + 0.01 / v == pytest.approx(v, rel=1e-14)
    assert th.wd_angular_update(0.1, 0.005, 0.9) == pytest.approx(math.sqrt(0.001 / 1.9), rel=1e-15)
    assert th.sign_wd_equilibrium_norm(0.01, 0.1, 512) == pytest.approx(math.sqrt(25.6), rel=1e-15)
    assert th.wd_norm_relaxation(0.1, 0.005) == pytest.approx(1 - 4 * 0.0005 + 2 * 0.0005**2, rel=1e-15)


def test_box_minimizer_satisfies_kkt():
    rng = np.random.default_rng(2)
    A = rng.normal(size=(10, 4))
    H, c = A.T @ A / 10, 3 * rng.normal(size=4)
    x = th.box_minimizer(H, c, 1.0)
    g = H @ (x - c)
    free = np.abs(x) < 1 - 1e-9
    assert np.all(np.abs(g[free]) < 1e-7)
    assert np.all(g[~free] * np.sign(x[~free]) <= 1e-9)  # the gradient points into the box on active faces
    np.testing.assert_allclose(th.l2_minimizer(H, c, 1e-12), c, rtol=1e-6)


def test_box_minimizer_refuses_an_indefinite_curvature():
    """Issue 29: with H = diag(1, -1) and c = (2, -0.5) L-BFGS-B stopped at the saddle (1, -0.5) (the box minimizer
    of that non-convex f is (1, +-1)); the contract is a convex f, so the call is refused, naming H."""
    H, c = np.diag([1.0, -1.0]), np.array([2.0, -0.5])
    for call in (lambda: th.box_minimizer(H, c, 1.0), lambda: th.l2_minimizer(H, c, 0.1)):
        with pytest.raises(ValueError, match=r"H: .*positive semidefinite; smallest eigenvalue -1"):
            call()
    # a PSD H on the edge (one zero curvature) is convex and answered
    np.testing.assert_allclose(th.box_minimizer(np.diag([1.0, 0.0]), c, 1.0)[0], 1.0)


def test_logistic_minimizer_satisfies_kkt():
    """Box: zero gradient on free coordinates, gradient pointing into the box on active faces; the penalized
    minimizer zeroes the penalized gradient; the unconstrained one the plain gradient (non-separable data)."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(40, 4))
    y = np.where(X @ np.array([4.0, -3.0, 0.5, 0.2]) + rng.normal(size=40) > 0, 1.0, -1.0)

    def grad(x):
        return X.T @ (-y / (1 + np.exp(y * (X @ x)))) / X.shape[0]

    x = th.logistic_minimizer(X, y, radius=1.0)
    g = grad(x)
    free = np.abs(x) < 1 - 1e-9
    assert free.any() and (~free).any()
    assert np.all(np.abs(g[free]) < 1e-7)
    assert np.all(g[~free] * np.sign(x[~free]) <= 1e-9)
    xl = th.logistic_minimizer(X, y, wd=0.5)
    np.testing.assert_allclose(grad(xl) + 0.5 * xl, 0.0, atol=1e-7)
    np.testing.assert_allclose(grad(th.logistic_minimizer(X, y)), 0.0, atol=1e-7)


def test_tuned_final_loss_finds_an_interior_minimum():
    lam = np.logspace(0, -2, 8)
    loss, peak = th.tuned_final_loss(lam, np.sqrt(lam), "d2z", 300)
    for f in (0.8, 1.25):
        eta = th.schedule("d2z", 300, peak * f)
        assert tn.expected_loss(lam, tn.final_second_moment(lam, eta, 1.0, np.sqrt(lam))) > loss


@pytest.mark.parametrize("call, name", [
    (lambda: th.schedule("linear", 10, 0.1), "kind"),
    (lambda: th.schedule("wsd", 10, -0.1), "peak"),
    (lambda: th.ema_variance_ratio(0.0, 0.1, 1.0), "alpha"),
    (lambda: th.ema_variance_ratio(0.5, 3.0, 1.0), "eta"),
    (lambda: th.last_iterate_bound([1.0, 0.0], 1.0, 1.0), "eta"),
    (lambda: th.merge_effective_schedule(0.1, [5, 3, 10], [0.2, 0.3, 0.5], 10), "checkpoints"),
    (lambda: th.merge_effective_schedule(0.1, [5, 10], [0.2, 0.3], 10), "weights"),
    (lambda: th.wd_angular_update(0.1, 0.01, 1.0), "momentum"),
    (lambda: th.lion_box_radius(2.0, 1.0), "eta"),
    (lambda: th.box_minimizer(np.eye(2), [1.0, 2.0, 3.0], 1.0), "center"),
    (lambda: th.logistic_minimizer(np.eye(2), [1.0, 0.5]), "y"),
    (lambda: th.fit_nqm_to_log([0, 5, 3], [0.1, 0.1, 0.1], [1.0, 0.5, 0.4]), "step"),
])
def test_theory_bad_input(call, name):
    with pytest.raises((ValueError, TypeError)) as exc:
        call()
    assert name in str(exc.value)


# ----------------------------------------------------------------------------- simulators
def test_merging_equals_its_effective_schedule_on_a_fixed_gradient_sequence():
    r"""An identity of the update rule (once tian2025's claim): on a flat mode the gradients are the noise, a sequence
    that does not depend on the iterate, so the merged checkpoints :math:`\sum_kw_kx_{t_k}` of the constant run equal
    the last iterate of the run at :math:`\eta(1 - C_s)` on the same noise (round-off: 1e-13 of
    :math:`\eta T\max|g|`). The window mean ``mean_x`` (``window_mean=True``, ``burn = T - W``) is the uniform merge of
    the last W iterates of the recorded path, on the flat and on a curved mode (a NumPy mean of the path).
    """
    T, W, eta = 60, 12, 0.1
    ck = np.arange(T - W + 1, T + 1)
    w = np.full(W, 1.0 / W)
    eff = th.merge_effective_schedule(eta, ck, w, T)
    out = sn.simulate(jax.random.key(21), T=T, eta=np.stack([np.full(T, eta), eff]), x0=np.array([1.0, 0.5]),
                      lam=np.array([0.0, 2.0]), sigma_a=1.0, n_chains=4, n_rec=T, burn=T - W, paired=True,
                      window_mean=True)
    path = out["path"][0]                                      # (runs, T, d): x_1..x_T of the constant run
    merged = np.einsum("k,nkd->nd", w, path[:, ck - 1])
    scale = eta * T * 5.0
    np.testing.assert_allclose(merged[:, 0], out["final_x"][1][:, 0], rtol=0, atol=1e-13 * scale)
    np.testing.assert_allclose(out["mean_x"][0], path[:, T - W:].mean(axis=1), rtol=1e-12, atol=1e-14)
    assert abs(merged[0, 1] - out["final_x"][1][0, 1]) > 1e-6   # a curved mode: only approximately
    assert "mean_x" not in sn.simulate(jax.random.key(21), T=4, eta=0.1, x0=np.ones(2), lam=np.ones(2))


def test_nqm_statistics_not_computed_are_absent_not_nan():
    """Issue 29: simulate(eta=5e-324) returned NaN mode_m2_step and mean_x beside diverged=False (placeholders for
    statistics that were not computed, indistinguishable from a broken run); now every returned value is finite."""
    out = sn.simulate(jax.random.key(0), T=8, eta=5e-324, x0=np.ones(2), lam=np.array([1.0, 0.5]), sigma_a=0.5,
                      n_chains=2, n_rec=2)
    assert "mode_m2_step" not in out and "mean_x" not in out and not out["diverged"].any()
    assert all(np.all(np.isfinite(v)) for v in out.values() if np.asarray(v).dtype.kind == "f")
    mixed = sn.simulate(jax.random.key(0), T=8, eta=0.1, x0=np.ones(2), lam=np.array([1.0, 0.5]), sigma_a=0.5,
                        method=["sgd", "nesterov"], momentum=0.5, n_rec=2)
    assert np.all(np.isfinite(mixed["mode_m2_step"]))


def test_adamw_final_iterate_is_the_moving_average_of_its_updates():
    r"""An identity of the update rule (once wang2024's claim): with decoupled decay and any schedule,
    :math:`x_T = \prod_t(1-\eta_t\lambda)x_0 - \frac1\lambda\sum_tc_tu_t`, :math:`c_t = \eta_t\lambda\prod_{k>t}(1-\eta_k\lambda)`;
    on a flat mode the updates :math:`u_t` are the noise, read off the paired constant-step run's path. Round-off:
    the same linear recursion summed in another order (1e-12)."""
    T, eta, wd = 50, 0.2, 0.5
    sched = th.schedule("wsd", T, eta, cooldown=0.4)
    out = sn.simulate(jax.random.key(22), T=T, eta=np.stack([np.full(T, eta), sched]), x0=np.array([1.5]),
                      lam=np.array([0.0]), sigma_a=1.0, wd=[0.0, wd], n_chains=3, n_rec=T, paired=True)
    steps = np.concatenate([np.full((3, 1), 1.5), out["path"][0][:, :, 0]], axis=1)
    u = -(steps[:, 1:] - steps[:, :-1]) / eta
    c = th.adamw_ema_weights(sched, wd)
    pred = np.prod(1 - sched * wd) * 1.5 - u @ c / wd
    np.testing.assert_allclose(out["final_x"][1][:, 0], pred, rtol=1e-12, atol=1e-12)


def test_merged_second_moment_against_a_direct_sum():
    r""":math:`E\bar x^2` from the explicit linear map of the noise (a NumPy matrix of the recursion), for two modes."""
    T, eta, lam, sig, x0 = 20, 0.3, np.array([0.5, 1.5]), np.array([1.0, 0.4]), np.array([1.0, -2.0])
    ck, w = np.array([5, 12, 20]), np.array([0.2, 0.3, 0.5])
    for i in range(2):
        rho = 1 - eta * lam[i]
        A = np.zeros((T + 1, T))                         # x_t = rho^t x0 + A[t] @ xi
        for t in range(1, T + 1):
            A[t] = rho * A[t - 1]
            A[t, t - 1] = -eta * sig[i]
        mean = x0[i] * np.sum(w * rho**ck)
        var = np.sum((w @ A[ck]) ** 2)
        assert th.merged_second_moment(lam[i], eta, ck, w, T, sig[i], x0[i])[0] == pytest.approx(mean**2 + var,
                                                                                              rel=1e-12)


def test_subgradient_max_affine_on_the_absolute_value_by_hand():
    r"""Pieces :math:`\pm x` (points 1 and -1 with gradients :math:`\pm1`, values 1): :math:`F = |x|` (the 0 piece never
    wins). From :math:`x_1 = 0.25`, steps 0.5, 0.5, 0.5: the oracle's step-0 piece (+1) is active at 0.25, so
    :math:`x_2 = -0.25`; step 1 takes piece 1 (-x), active at -0.25: :math:`x_3 = 0.25`; :math:`F(x_3) = 0.25`."""
    out = sq.subgradient_max_affine(np.array([0.25]), np.full(3, 0.5), np.array([[1.0], [-1.0]]),
                                    np.array([[1.0], [-1.0]]), np.array([1.0, 1.0]))
    np.testing.assert_allclose(out["x_T"], [0.25], rtol=1e-15)
    assert out["value"] == pytest.approx(0.25, rel=1e-15) and out["min_gap"] == 0.0 and out["activity"] == 0.0


def test_subgradient_max_affine_falls_back_to_an_active_piece_by_hand():
    r"""The oracle's own piece inactive: pieces ordered :math:`(-x, +x)` (points -1 and 1, gradients -1 and +1, values 1),
    so at step 0 the piece :math:`-x` is not active at :math:`x_1 = 0.25` and the first active piece (:math:`+x`) gives the
    subgradient +1: :math:`x_2 = 0.25 - 0.5 = -0.25`; at step 1 the piece :math:`+x` is inactive at -0.25 and :math:`-x`
    gives -1: :math:`x_3 = -0.25 + 0.2 = -0.05`, :math:`F(x_3) = 0.05`. A returned piece is always active (shortfall 0)."""
    out = sq.subgradient_max_affine(np.array([0.25]), np.array([0.5, 0.2, 0.1]), np.array([[-1.0], [1.0]]),
                                    np.array([[-1.0], [1.0]]), np.array([1.0, 1.0]))
    np.testing.assert_allclose(out["x_T"], [-0.05], rtol=1e-14)
    assert out["value"] == pytest.approx(0.05, rel=1e-14) and out["activity"] == 0.0


def test_worst_case_instance_is_valid_and_at_least_the_kink_construction():
    r"""The search returns a valid instance (its interpolation conditions, Lipschitz and distance constraints hold to
    1e-10) whose value lies between a hand construction and the bound: at :math:`T = 2`, :math:`\eta = 1`, :math:`G = 1`,
    :math:`f = |\langle u, x\rangle|` from :math:`x_1 = x^\star = 0` with the subgradient :math:`u` at the kink gives
    :math:`f(x_2) = \eta G^2 = 1`, so the worst case is at least 1; the bound is 1.0625 at :math:`D = 0.5`."""
    w = sq.worst_case_instance(np.ones(2), 0.5, 1.0, starts=2, seed=1)
    assert w["violation"] <= 1e-10
    assert np.linalg.norm(w["x1"]) <= 0.5 + 1e-9 and np.all(np.linalg.norm(w["g"], axis=1) <= 1 + 1e-9)
    assert 1.0 - 1e-9 <= w["value"] <= th.last_iterate_bound(np.ones(2), 0.5, 1.0) + 1e-9


def test_lion_box_is_invariant_from_inside_under_noise():
    r"""An identity of the update rule (once presented as chen2023 evidence): :math:`|\mathrm{sign}| \le 1`, so
    :math:`|x^+| \le (1-\eta\lambda)|x| + \eta \le 1/\lambda` whenever :math:`|x| \le 1/\lambda` and :math:`\eta\lambda \le 1`.

    Random centers far outside, unit gradient noise, starts inside, :math:`\eta\lambda = 0.5` and 1 at two decays: the
    largest :math:`\lambda\|x_t\|_\infty` over every step stays at most 1 (round-off of :math:`(1-\eta\lambda)x + \eta`: 1e-12).
    Also the theory's radius at hand values.
    """
    rng = np.random.default_rng(11)
    wds = np.array([0.5, 0.5, 2.0, 2.0])
    etas = np.array([0.5, 1.0, 0.5, 1.0]) / wds
    out = sn.simulate(jax.random.key(12), T=300, eta=np.stack([np.full(300, e) for e in etas]),
                      x0=rng.uniform(-1, 1, size=(4, 3)) / wds[:, None], lam=np.array([0.5, 1.0, 2.0]),
                      center=rng.normal(size=(4, 3)) * 5 / wds[:, None], sigma_a=1.0, method="lion", momentum=0.9,
                      b2=0.99, wd=wds, n_chains=3, n_rec=1)
    assert np.max(out["max_abs"] * wds[:, None]) <= 1 + 1e-12
    assert np.max(out["max_abs"] * wds[:, None]) > 0.99   # the noise and the centers drive it to the face
    assert th.lion_box_radius(0.3, 2.0) == 0.5 and th.lion_box_radius(1.0, 0.25) == 4.0


def test_lion_excess_outside_the_box_contracts_by_one_minus_eta_lambda():
    r"""An identity of the update rule (once a chen2023 claim): outside the box, with the update pointing outward
    (:math:`u = -1` in every coordinate: the minimizer further out on the same side),
    :math:`\lambda x^+ - 1 = (1-\eta\lambda)(\lambda x - 1)` exactly; pointing inward it contracts faster,
    :math:`(1-\eta\lambda)(\lambda x - 1) - 2\eta\lambda`. Ratios to 1e-8 (round-off of an excess >= 1e-6 at |x| ~ 1).
    """
    wd, eta, T = 1.0, 0.05, 400
    out = sn.simulate(jax.random.key(13), T=T, eta=np.full((2, T), eta), x0=np.full((2, 2), 3.0),
                      lam=np.array([1.0, 0.5]), center=np.array([[5.0, 5.0], [-5.0, -5.0]]), method="lion",
                      momentum=0.9, b2=0.99, wd=wd, n_rec=T)
    path = np.concatenate([np.full((2, 1, 2), 3.0), out["path"][:, 0]], axis=1)
    excess = np.abs(path).max(axis=2) * wd - 1
    q = 1 - eta * wd
    out_ = excess[0, :-1] > 1e-6
    np.testing.assert_allclose(excess[0, 1:][out_] / excess[0, :-1][out_], q, rtol=1e-8)
    assert out_.sum() > 100
    # pointing inward: the first step already takes 2 eta lambda more
    assert excess[1, 1] == pytest.approx(q * excess[1, 0] - 2 * eta * wd, rel=1e-12)


def test_lion_logistic_first_steps_by_hand():
    r"""Lion with :math:`\beta_1 = \beta_2 = 0` is sign descent with decoupled decay:
    :math:`x^+ = x - \eta(\mathrm{sign}\,\nabla f(x) + \lambda x)`, the gradient of the mean logistic loss
    :math:`-\frac1n\sum_i y_i x_i/(1 + e^{y_i x_i\cdot x})` in NumPy; two configurations, the second from a run of two
    blocks of one step (``n_rec`` = T)."""
    rng = np.random.default_rng(4)
    X, y = rng.normal(size=(12, 3)), np.where(rng.normal(size=12) > 0, 1.0, -1.0)
    x0 = np.array([0.3, -0.2, 0.1])
    eta, wd = np.array([[0.1, 0.05], [0.2, 0.2]]), np.array([0.5, 2.0])
    out = sq.lion_logistic(X, y, x0, eta=eta, wd=wd, b1=0.0, b2=0.0, n_rec=2)
    for g in range(2):
        x = x0.copy()
        for t in range(2):
            grad = X.T @ (-y / (1 + np.exp(y * (X @ x)))) / 12
            x = x - eta[g, t] * (np.sign(grad) + wd[g] * x)
            np.testing.assert_allclose(out["path"][g, t], x, rtol=1e-13)
    assert not out["diverged"].any()


def test_abs_sgd_without_noise_is_deterministic_and_paired():
    eta = np.stack([np.full(20, 0.3), np.full(20, 0.1)])
    out = sq.abs_sgd(jax.random.key(0), eta, x0=1.0, sigma=0.0, n_chains=2)
    # |x| shrinks by eta per step until it oscillates within eta of 0; without noise every chain is the same
    assert np.all(out["final"][1] <= 0.1 + 1e-12) and np.all(out["final"][0] <= 0.3 + 1e-12)
    assert out["final"][0, 0] == out["final"][0, 1]
    assert not out["diverged"].any()


def test_sphere_walk_plain_sgd_is_the_exact_norm_map():
    out = sq.sphere_walk(jax.random.key(1), eta=0.1, wd=0.01, d=8, T=200, n_rec=4, n_chains=2, w0_norm=2.0)
    v = 4.0
    for _ in range(200):
        v = (1 - 0.001) ** 2 * v + 0.01 / v
    np.testing.assert_allclose(out["norm"][0, :, -1], math.sqrt(v), rtol=1e-12)


def test_sphere_walk_overlap_is_the_start_share():
    r"""With decoupled decay the sign walk is :math:`w_t = (1-\eta\lambda)^tw_0 - \eta\sum_s(1-\eta\lambda)^{t-1-s}u_s` with
    :math:`E[u_s\,|\,w_s] = 0` (the gradient's law is symmetric), so the recorded share
    :math:`\langle w_t, w_0\rangle/\|w_0\|^2` has mean :math:`(1-\eta\lambda)^t`: within 5 standard errors over 400 runs at
    every block end; Cauchy-Schwarz bounds it by :math:`\|w_t\|/\|w_0\|` run by run; and the runs and their other
    outputs are those of a call without ``overlap``, bit for bit."""
    eta, wd, T, n_rec = 0.02, 1.0, 200, 4
    kw = dict(eta=eta, wd=wd, method="sign", d=16, T=T, n_rec=n_rec, n_chains=400, w0_norm=1.5)
    out = sq.sphere_walk(jax.random.key(7), overlap=True, **kw)
    share = out["overlap"][0]
    t = (T // n_rec) * np.arange(1, n_rec + 1)
    se = share.std(axis=0, ddof=1) / math.sqrt(share.shape[0])
    assert np.all(np.abs(share.mean(axis=0) - (1 - eta * wd) ** t) <= 5 * se)
    assert np.all(np.abs(share) * 1.5 <= out["norm"][0] * (1 + 1e-12))
    plain = sq.sphere_walk(jax.random.key(7), **kw)
    assert "overlap" not in plain
    for name, value in plain.items():
        np.testing.assert_array_equal(out[name], value, err_msg=name)


def test_logistic_sphere_is_scale_invariant():
    rng = np.random.default_rng(3)
    X, y, w0 = rng.normal(size=(20, 3)), np.sign(rng.normal(size=20)), rng.normal(size=3)
    a = sq.logistic_sphere(X, y, w0, eta=0.3, wd=0.0, T=50, n_rec=5)
    b = sq.logistic_sphere(X, y, 2.0 * w0, eta=1.2, wd=0.0, T=50, n_rec=5)  # |w| x 2 with eta x 4: same directions
    np.testing.assert_allclose(a["angle"], b["angle"], rtol=1e-9)
    np.testing.assert_allclose(2.0 * a["norm"], b["norm"], rtol=1e-12)


def test_logistic_sphere_refuses_a_zero_start():
    """Issue 29: w0 = 0 ran and reported every configuration "diverged" with NaN angles and norms; the loss sees
    w/|w|, undefined at 0, so the start is bad input, not a divergence."""
    X, y = np.random.default_rng(0).normal(size=(8, 3)), np.array([-1.0, 1.0] * 4)
    with pytest.raises(ValueError, match=r"w0: expected a nonzero start"):
        sq.logistic_sphere(X, y, np.zeros(3), eta=0.1, wd=0.1, T=8, n_rec=2)


# ----------------------------------------------------------------------------- a user's run
def _write_run(path, *, T=1500, every=10, seed=0):
    """A run on a known 3-mode NQM (WSD schedule), logged every ``every`` steps with 1 % noise."""
    lam = np.array([0.5, 0.05, 0.005])
    eta = th.schedule("wsd", T, 0.5)
    m = tn.moment_recursion(lam, eta, [1.0, 4.0, 2.0], sigma_a=[0.3, 0.2, 0.1])
    loss = tn.expected_loss(lam, m) + 0.1
    steps = np.arange(0, T + 1, every)
    rng = np.random.default_rng(seed)
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["step", "lr", "loss"])
        for s in steps:
            w.writerow([s, eta[min(s, T - 1)], loss[s] * (1 + 0.01 * rng.normal())])
    return loss[steps]


def test_nqm_fit_recovers_a_generated_run(tmp_path):
    truth = _write_run(tmp_path / "run.csv")
    rows = np.loadtxt(tmp_path / "run.csv", delimiter=",", skiprows=1)
    step, lr, loss = rows.T
    fit = th.fit_nqm_to_log(step, lr, loss)
    assert fit["relative_residual"] < 0.01          # the 1 % logging noise, not a model error
    np.testing.assert_allclose(fit["predicted"], truth, rtol=0.03)
    # a constant-lr fit of the same log is worse: the schedule matters
    flat = th.fit_nqm_to_log(step, np.full_like(lr, lr.max()), loss)
    assert flat["relative_residual"] > 2 * fit["relative_residual"]


def test_overlay_cli_draws_and_rejects_a_bad_csv(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    from figures import noisy_quadratic as fig

    _write_run(tmp_path / "run.csv", T=600)
    assert fig.main(["overlay", str(tmp_path / "run.csv"), "--out", str(tmp_path / "o")]) == 0
    assert "relative residual" in capsys.readouterr().out
    assert (tmp_path / "o" / "noisy_quadratic_overlay.png").exists()
    (tmp_path / "bad.csv").write_text("step,loss\n0,1\n")
    with pytest.raises(SystemExit):
        fig.main(["overlay", str(tmp_path / "bad.csv")])
    assert "lr" in capsys.readouterr().err


# ----------------------------------------------------------------------------- the river valley (wen2024)
def test_river_progress_is_the_mean_recursion_and_the_area_law_brackets_it():
    import theory.noisy_quadratic as th
    rng = np.random.default_rng(33)
    eta = rng.uniform(0.0, 1.5, (3, 400))
    lam = np.array([1e-4, 3e-3, 2e-2])  # lambda_r sum eta from 0.03 to 6
    mean = np.ones(3)                     # E(r - R) / (r_0 - R), one step at a time
    for t in range(eta.shape[1]):
        mean = (1 - eta[:, t] * lam) * mean
    np.testing.assert_allclose(th.river_progress(lam, eta), 1 - mean, rtol=1e-12)
    law = th.river_area_law(lam, eta)
    np.testing.assert_allclose(law["law"], lam * eta.sum(axis=1), rtol=1e-13)
    gap = law["law"] - th.river_progress(lam, eta)
    assert np.all(gap >= 0) and np.all(gap <= law["next_order"])
    # a scalar curvature and one schedule give a scalar
    assert np.ndim(th.river_progress(1e-3, eta[0])) == 0


def test_river_mean_progress_matches_simulation_with_an_idle_start():
    import theory.noisy_quadratic as th
    # eta = 0 steps move nothing (not even the noise): the schedules of different lengths share one horizon
    eta = np.r_[np.zeros(50), np.full(150, 0.8)]
    out = sn.simulate(jax.random.key(5), T=200, eta=eta, x0=np.zeros(2), lam=np.array([1e-2, 1.0]),
                      center=np.array([10.0, 0.0]), sigma_a=np.array([0.05, 1.0]), n_chains=400)
    s = sn.summarize(out["final_x"][0, :, 0] / 10.0)
    assert abs(s.mean - th.river_progress(1e-2, eta)) < 4 * s.se


# ----------------------------------------------------------------------------- Lion on a non-convex loss (chen2023)
def test_double_well_gradient_and_kkt_residual():
    import theory.noisy_quadratic as th
    rng = np.random.default_rng(41)
    a, m = rng.uniform(0.2, 3.0, 4), rng.standard_normal((4, 4))
    C = 0.1 * m @ m.T
    x = rng.uniform(-1, 1, 4)
    loss = lambda z: 0.25 * jax.numpy.sum((z * z - a) ** 2) + 0.5 * z @ C @ z  # noqa: E731
    np.testing.assert_allclose(th.double_well_grad(a, C, x), jax.grad(loss)(x), rtol=1e-12, atol=1e-14)
    k = th.double_well_kkt_point(a, C, 1.0, x)
    assert th.box_kkt_residual(a, C, 1.0, k) < 1e-8 and np.all(np.abs(k) <= 1.0)
    # off a KKT point the residual is positive: a coordinate nudged inward from a face, or an interior one moved
    assert th.box_kkt_residual(a, C, 1.0, k * 0.9) > 1e-3


def test_lion_double_well_equals_a_numpy_loop():
    a, C = np.array([2.0, 0.5]), np.array([[0.2, -0.1], [-0.1, 0.2]])
    x0, eta, wd, b1, b2 = np.array([0.3, -0.4]), np.linspace(0.05, 0.01, 12), 1.0, 0.9, 0.99
    out = sq.lion_double_well(a, C, x0, eta=eta, wd=wd, b1=b1, b2=b2, n_rec=3)
    x, m = x0.copy(), np.zeros(2)
    rec = []
    for t, e in enumerate(eta):
        g = x * (x * x - a) + C @ x
        x = x - e * (np.sign(b1 * m + (1 - b1) * g) + wd * x)
        m = b2 * m + (1 - b2) * g
        if (t + 1) % 4 == 0:
            rec.append(x.copy())
    np.testing.assert_allclose(out["path"][0], np.array(rec), rtol=1e-13, atol=1e-15)
    assert not out["diverged"][0]
