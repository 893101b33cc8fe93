"""The shared noisy-quadratic substrate: theory.nqm, sims.nqm and sims.optimizers."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
import sympy as sp

import sims.nqm as sn
import theory.nqm as tn
from sims import optimizers as opt

pytestmark = pytest.mark.xdist_group("noisy_quadratic")


# ----------------------------------------------------------------------------- theory
def test_moment_recursion_reaches_the_stationary_moment():
    lam = np.array([0.1, 1.0, 3.0])
    m = tn.moment_recursion(lam, np.full(3000, 0.5), 1.0, sigma_a=2.0, sigma_m=0.3, batch_size=4)
    np.testing.assert_allclose(m[-1], tn.stationary_second_moment(lam, 0.5, 2.0, 0.3, 4), rtol=1e-12)
    excess = tn.stationary_excess(lam, 0.5, 1.0)
    np.testing.assert_allclose(excess, 0.5 / (2 * (2 - 0.5 * lam)), rtol=1e-15)


def test_full_recursion_equals_diagonal_and_is_rotation_invariant():
    rng = np.random.default_rng(0)
    lam = np.array([0.2, 0.7, 1.5, 2.5])
    eta = np.linspace(0.6, 0.05, 200)
    m = tn.moment_recursion(lam, eta, 1.0, sigma_a=0.5)
    diag_loss, _ = tn.full_moment_recursion(np.diag(lam), eta, np.eye(4), sigma_a=0.5)
    np.testing.assert_allclose(diag_loss, tn.expected_loss(lam, m), rtol=1e-12)
    q, _ = np.linalg.qr(rng.normal(size=(4, 4)))
    rot_loss, _ = tn.full_moment_recursion(q @ np.diag(lam) @ q.T, eta, np.eye(4), sigma_a=0.5)
    np.testing.assert_allclose(rot_loss, diag_loss, rtol=1e-10)
    # several schedules at once equal one at a time
    both = tn.moment_recursion(lam, np.stack([eta, eta[::-1]]), 1.0, sigma_a=0.5)
    np.testing.assert_allclose(both[1], tn.moment_recursion(lam, eta[::-1], 1.0, sigma_a=0.5), rtol=1e-14)


def test_momentum_closed_forms():
    var, (eta, lam, mu, sigma) = tn.momentum_variance_sympy("heavy_ball")
    assert sp.simplify(var - eta * sigma**2 * (1 + mu) / (lam * (1 - mu) * (2 * (1 + mu) - eta * lam))) == 0
    excess, closed, _ = tn.nesterov_variance_excess_sympy()
    assert sp.simplify(excess - closed) == 0
    assert tn.momentum_threshold(0.5, "heavy_ball") == pytest.approx(3.0, rel=1e-15)
    assert tn.momentum_threshold(0.5, "nesterov") == pytest.approx(1.5, rel=1e-15)
    assert tn.momentum_threshold(0.3, "gd") == pytest.approx(2.0, rel=1e-15)
    assert tn.critical_curvature(0.5, 0.0, "gd") == pytest.approx(4.0, rel=1e-15)
    # mu = 0: both reduce to SGD's eta sigma^2 / (lam (2 - eta lam))
    for method in ("heavy_ball", "nesterov"):
        assert tn.momentum_stationary_variance(0.3, 2.0, 0.0, 1.5, method) == pytest.approx(
            0.3 * 1.5**2 / (2.0 * (2 - 0.6)), rel=1e-14)


@pytest.mark.parametrize("call, name", [
    (lambda: tn.stationary_second_moment(1.0, 2.5), "eta"),
    (lambda: tn.stationary_second_moment(-1.0, 0.1), "lam"),
    (lambda: tn.moment_recursion([1.0, 2.0], [0.1, np.nan], 1.0), "eta"),
    (lambda: tn.moment_recursion([1.0, 2.0], [0.1], [1.0, 1.0, 1.0]), "m0"),
    (lambda: tn.full_moment_recursion([[1.0, 2.0], [0.0, 1.0]], [0.1], np.eye(2)), "H"),
    (lambda: tn.full_moment_recursion(np.diag([1.0, -1.0]), [0.1], np.eye(2)), "H"),  # not a quadratic *model*
    (lambda: tn.full_moment_recursion(np.eye(2), [0.1], np.diag([1.0, -1.0])), "S0"),  # not a second moment
    (lambda: tn.momentum_threshold(1.0, "heavy_ball"), "mu"),
    (lambda: tn.momentum_threshold(0.5, "adam"), "method"),
    (lambda: tn.momentum_stationary_variance(1.0, 2.0, 0.5, 1.0, "nesterov"), "eta"),
])
def test_theory_bad_input(call, name):
    with pytest.raises((ValueError, TypeError)) as exc:
        call()
    assert name in str(exc.value)


# ----------------------------------------------------------------------------- optimizers against optax
def _optax(method, eta, hyper):
    mu, b2, wd = hyper.momentum, hyper.b2, hyper.wd
    chain = {
        "sgd": optax.sgd(eta),
        "heavy_ball": optax.sgd(eta, momentum=mu),
        "nesterov": optax.sgd(eta, momentum=mu, nesterov=True),
        "sign": optax.sign_sgd(eta),
        "signum": optax.signum(eta, beta=mu),
        "lion": optax.lion(eta, b1=mu, b2=b2, weight_decay=wd),
        "normalized": optax.chain(optax.ema(mu, debias=False), optax.normalize_by_update_norm(eps=0.0),
                                  optax.scale_by_learning_rate(eta)),
    }[method]
    if method != "lion" and wd:
        chain = optax.chain(*chain_parts(method, mu), optax.add_decayed_weights(wd), optax.scale_by_learning_rate(eta))
    return chain


def chain_parts(method, mu):
    """The direction part of each optax optimizer (for checking decoupled decay on top of it)."""
    return {"sgd": (optax.identity(),), "heavy_ball": (optax.trace(mu),), "nesterov": (optax.trace(mu, nesterov=True),),
            "sign": (optax.scale_by_sign(),), "signum": (optax.ema(mu, debias=False), optax.scale_by_sign()),
            "normalized": (optax.ema(mu, debias=False), optax.normalize_by_update_norm(eps=0.0))}[method]


@pytest.mark.parametrize("method", opt.METHODS)
@pytest.mark.parametrize("wd", [0.0, 0.05])
def test_update_rules_match_optax(method, wd):
    rng = np.random.default_rng(1)
    hyper = opt.Hyper(momentum=0.7, b2=0.95, wd=wd)
    eta = 0.1
    ref = _optax(method, eta, hyper)
    x = x_ref = jnp.asarray(rng.normal(size=5))
    state, ref_state = opt.init(method, x, hyper), ref.init(x_ref)
    for _ in range(6):
        g = jnp.asarray(rng.normal(size=5))
        x, state = opt.step(method, g, state, x, eta, hyper)
        upd, ref_state = ref.update(g, ref_state, x_ref)
        x_ref = optax.apply_updates(x_ref, upd)
        np.testing.assert_allclose(np.asarray(x), np.asarray(x_ref), rtol=1e-13, atol=1e-15)


def test_coupled_decay_is_an_l2_term():
    hyper = opt.Hyper(momentum=0.5, coupled_wd=0.2)
    x, g = jnp.array([1.0, -2.0]), jnp.array([0.3, 0.1])
    s = opt.init("heavy_ball", x, hyper)
    got, _ = opt.step("heavy_ball", g, s, x, 0.1, hyper)
    want, _ = opt.step("heavy_ball", g + 0.2 * x, s, x, 0.1, opt.Hyper(momentum=0.5))
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-15)


def test_heavy_ball_is_polyak_and_nesterov_iterate_is_the_gradient_step():
    """With a constant step, optax's trace is Polyak's recursion; Nesterov's iterate is y - eta g(y)."""
    lam, eta, mu = 0.8, 0.3, 0.6
    x = jnp.array([1.0])
    s = opt.init("heavy_ball", x, opt.Hyper(mu))
    xs = [x]
    for _ in range(5):
        x, s = opt.step("heavy_ball", lam * x, s, x, eta, opt.Hyper(mu))
        xs.append(x)
    xs = np.array(xs).ravel()
    np.testing.assert_allclose(xs[2:], (1 + mu - eta * lam) * xs[1:-1] - mu * xs[:-2], rtol=1e-13)
    y = jnp.array([1.0])
    s = opt.init("nesterov", y, opt.Hyper(mu))
    iterates = []
    for _ in range(6):
        iterates.append(float((y - eta * lam * y)[0]))
        y, s = opt.step("nesterov", lam * y, s, y, eta, opt.Hyper(mu))
    it = np.array(iterates)
    a, b = (1 + mu) * (1 - eta * lam), -mu * (1 - eta * lam)
    np.testing.assert_allclose(it[2:], a * it[1:-1] + b * it[:-2], rtol=1e-12)


# ----------------------------------------------------------------------------- simulator
def test_simulator_matches_the_exact_recursion_along_a_schedule():
    lam = np.array([0.3, 1.0, 2.0])
    T = 200
    eta = np.concatenate([np.full(150, 0.6), np.linspace(0.6, 0.0, 50, endpoint=False)])
    out = sn.simulate(jax.random.key(5), T=T, eta=eta, x0=np.ones(3), lam=lam, sigma_a=0.7, sigma_m=0.4,
                      batch_size=2, n_chains=1024, n_rec=4)
    m = tn.moment_recursion(lam, eta, 1.0, sigma_a=0.7, sigma_m=0.4, batch_size=2)
    pred = tn.expected_loss(lam, m[T // 4::T // 4])
    s = sn.summarize(out["curve"][0].T)
    assert np.all(np.abs(s.mean - pred) < 5 * s.se), (s.mean, pred, s.se)


def test_full_matrix_equals_the_rotated_diagonal_problem():
    rng = np.random.default_rng(2)
    q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    lam = np.array([0.5, 1.0, 1.7])
    x0 = np.array([1.0, -0.5, 0.3])
    kw = dict(T=50, eta=0.4, n_rec=5, method="heavy_ball", momentum=0.5)
    diag = sn.simulate(jax.random.key(0), x0=x0, lam=lam, **kw)
    full = sn.simulate(jax.random.key(0), x0=q @ x0, H=q @ np.diag(lam) @ q.T, **kw)
    np.testing.assert_allclose(full["curve"], diag["curve"], rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(full["final_x"][0, 0], q @ diag["final_x"][0, 0], rtol=1e-9, atol=1e-13)


def test_batch_size_divides_the_noise_variance():
    """Metamorphic: B = 4 with sigma equals B = 1 with sigma/2 (same draws)."""
    kw = dict(T=40, eta=0.3, x0=np.ones(2), lam=np.array([1.0, 2.0]), n_chains=3, n_rec=2)
    a = sn.simulate(jax.random.key(9), sigma_a=1.0, batch_size=4, sigma_m=0.4, **kw)
    b = sn.simulate(jax.random.key(9), sigma_a=0.5, batch_size=1, sigma_m=0.2, **kw)
    np.testing.assert_allclose(a["curve"], b["curve"], rtol=1e-12)
    # each noise has its own subkey: the multiplicative stream is the same without additive noise (a negligible
    # additive level keeps the compiled kernel; exactly zero switches the draw off and gives the same numbers)
    c = sn.simulate(jax.random.key(9), sigma_a=1e-300, batch_size=1, sigma_m=0.2, **kw)
    d = sn.simulate(jax.random.key(9), sigma_a=0.0, batch_size=1, sigma_m=0.2, **kw)
    np.testing.assert_allclose(c["final_x"], d["final_x"], rtol=1e-14)


def test_summarize_counts_diverged_runs():
    s = sn.summarize(np.array([[1.0, 3.0, np.inf, 2.0]]), diverged=np.array([[False, False, False, True]]))
    assert s.mean[0] == 2.0 and s.n[0] == 2 and s.n_diverged[0] == 2


def test_simulator_matches_the_numpy_reference_without_noise():
    from sims.reference.noisy_quadratic import bench_cases, nqm_numpy

    lam = np.array([0.2, 1.0, 1.8])
    eta = np.stack([np.linspace(0.5, 0.1, 30), np.full(30, 0.3)])
    for method in ("sgd", "heavy_ball", "nesterov"):
        out = sn.simulate(jax.random.key(0), T=30, eta=eta, x0=np.ones(3), lam=lam, center=np.array([0.1, 0, -0.2]),
                          method=method, momentum=0.6, n_rec=3)
        ref = nqm_numpy(lam, eta, np.ones((2, 3)), method=method, momentum=0.6, center=np.array([0.1, 0, -0.2]),
                        n_rec=3)
        np.testing.assert_allclose(out["final_x"][:, 0], ref["final_x"], rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(out["curve"][:, 0], ref["curve"], rtol=1e-12, atol=1e-14)
    assert bench_cases("small")[0].work > 0



def test_divergence_step_and_max_norm_match_a_numpy_loop():
    r"""Noise-free SGD, :math:`x_{t+1} = (1-\eta\lambda)x_t`, per coordinate: ``diverged_step`` is the first step
    :math:`k \ge 1` at which some :math:`|x_{k,i}|` exceeds :data:`sims.nqm.BOUND` (a plain loop finds it), ``max_abs``
    is :math:`\max_{k\ge1}\|x_k\|_\infty` for a finite run and :math:`+\infty` for a diverged one.

    Growth factors :math:`|1-\eta\lambda_i|` of (1, 3, 0) (the second coordinate crosses at step 315, with the
    first still at 1), of about :math:`10^{30}` (a crossing within a few steps, in the first recording block; later
    steps overflow to inf and NaN) and two contracting runs.
    """
    lam, x0, T = np.array([1.0, 2.0, 0.5]), np.array([1.0, -1.0, 0.5]), 600
    etas = np.array([2.0, 1e30, 0.4, 0.6])
    out = sn.simulate(jax.random.key(0), T=T, eta=np.repeat(etas[:, None], T, axis=1), x0=x0, lam=lam, n_rec=4)
    for g, eta in enumerate(etas):
        x, first, top = x0.copy(), -1, 0.0
        for k in range(1, T + 1):
            with np.errstate(over="ignore", invalid="ignore"):
                x = x - eta * (lam * x)
            top = max(top, float(np.max(np.abs(x))))
            if first < 0 and not np.max(np.abs(x)) <= sn.BOUND:
                first = k
        assert out["diverged_step"][g, 0] == first and out["diverged"][g, 0] == (first > 0), (eta, first)
        if first < 0:
            np.testing.assert_allclose(out["max_abs"][g, 0], top, rtol=1e-13)
        else:
            assert out["max_abs"][g, 0] == np.inf
    assert out["diverged_step"][0, 0] > 300 and 1 <= out["diverged_step"][1, 0] <= 10  # the cases meant
    assert not out["diverged"][2:].any()


def test_per_configuration_arrays_equal_separate_runs():
    r"""Curvatures, centres and additive noise levels given per configuration (rows of a grid) or once (shared by
    every run of a call) give the same runs: configuration :math:`g` of a paired sweep equals a sweep of
    :math:`g` alone."""
    lam = np.array([[1.0, 0.3], [0.5, 2.0]])
    center, sigma_a = np.array([[0.1, -0.2], [0.0, 0.3]]), np.array([[0.5, 0.1], [0.2, 0.4]])
    kw = dict(T=24, eta=0.3, x0=np.ones(2), n_chains=3, n_rec=3, sigma_m=0.2, method="heavy_ball", momentum=0.4,
              paired=True)
    both = sn.simulate(jax.random.key(3), lam=lam, center=center, sigma_a=sigma_a, **kw)
    for g in range(2):
        one = sn.simulate(jax.random.key(3), lam=lam[g], center=center[g], sigma_a=sigma_a[g], **kw)
        for name in ("curve", "final_x", "mode_m2", "max_abs"):
            np.testing.assert_allclose(both[name][g], one[name][0], rtol=1e-13, atol=1e-15, err_msg=name)


def test_runs_do_not_depend_on_the_chunk_size():
    r"""A sweep walked in chunks of 8 runs (the last one padded) equals the same sweep in one chunk: every run's
    stream is keyed by its index, and its statistics (divergence included) are its own."""
    kw = dict(T=30, eta=np.repeat([[0.2], [0.5], [1e8]], 30, axis=1), x0=np.array([1.0, -0.5, 2.0]), lam=np.array([0.3, 1.0, 1.2]),
              method="heavy_ball", momentum=0.5, sigma_a=0.4, sigma_m=0.3, ema=0.2, burn=5, n_chains=7, n_rec=3)
    one = sn.simulate(jax.random.key(8), **kw)
    chunked = sn.simulate(jax.random.key(8), chunk_size=8, **kw)
    assert one["diverged"][2].all() and not one["diverged"][:2].any()  # the third step size diverges
    for name in one:
        np.testing.assert_allclose(chunked[name], one[name], rtol=1e-14, atol=0, err_msg=name)


_draw = jax.jit(lambda key, law, df: sn.noise(key, (200_000,), law, df), static_argnums=(1, 2))


@pytest.mark.parametrize("law, df, cdf", [("student", 1, "t1"), ("student", 2, "t2"), ("student", 3, "t3"),
                                          ("gaussian", 0, "norm"), ("uniform", 0, "unif"), ("rademacher", 0, "rad")])
def test_noise_laws(law, df, cdf):
    """Each sampler path (Gaussian, Cauchy and t_2 quantiles, chi-square mixture, uniform on [-1, 1], +-1) against
    scipy's CDF at a few points, within 5 binomial standard errors (200 000 draws)."""
    from scipy import stats

    F = {"t1": stats.t(1).cdf, "t2": stats.t(2).cdf, "t3": stats.t(3).cdf, "norm": stats.norm.cdf,
         "unif": stats.uniform(-1, 2).cdf, "rad": lambda q: np.where(q < -1, 0.0, np.where(q < 1, 0.5, 1.0))}[cdf]
    z = np.asarray(_draw(jax.random.key(2), law, df))
    for q in (-3.0, -0.999, -0.2, 0.5):
        frac, pt = np.mean(z < q), float(F(q))
        assert abs(frac - pt) <= 5 * np.sqrt(pt * (1 - pt) / z.size) + 1e-12, (law, df, q, frac, pt)


def test_nqm_window_averages_match_a_numpy_loop():
    r"""Noise-free SGD with an EMA: :math:`x_{t+1} = (1-\eta\lambda)x_t`, :math:`z_{t+1} = (1-\alpha)z_t + \alpha x_{t+1}`, :math:`z_0 = x_0`.

    The simulator's averages run over the iterates after updates ``burn + 1 .. T`` (:math:`T - \text{burn}` of
    them); a plain NumPy loop gives the same means of :math:`x^2`, :math:`z^2` and the loss.
    """
    lam, x0 = np.array([1.0, 0.5]), np.array([1.0, -2.0])
    eta, alpha, T, burn = 0.5, 0.3, 8, 2
    out = sn.simulate(jax.random.key(6), T=T, eta=eta, x0=x0, lam=lam, ema=alpha, burn=burn)
    x, z, xs, zs = x0.copy(), x0.copy(), [], []
    for _ in range(T):
        x = (1 - eta * lam) * x
        z = (1 - alpha) * z + alpha * x
        xs.append(x)
        zs.append(z)
    xs, zs = np.array(xs[burn:]), np.array(zs[burn:])
    np.testing.assert_allclose(out["mode_m2"][0, 0], np.mean(xs**2, axis=0), rtol=1e-13)
    np.testing.assert_allclose(out["mode_m2_ema"][0, 0], np.mean(zs**2, axis=0), rtol=1e-13)
    np.testing.assert_allclose(out["mean_loss"][0, 0], np.mean(0.5 * np.sum(lam * xs**2, axis=1)), rtol=1e-13)
    np.testing.assert_allclose(out["final_ema"][0, 0], zs[-1], rtol=1e-13)


def test_weighted_merges_match_a_numpy_sum_over_the_recorded_iterates():
    r"""``merge_weights`` rows :math:`w_m` give :math:`\sum_{k=1}^T w_{m,k}x_k` per run: against a NumPy sum over the path
    recorded at every step (heavy ball with both noises on three coordinates, two configurations, a burn-in that the
    merges ignore), for two merges at once and one merge given as a vector. Without ``merge_weights`` the runs and every
    other output are bit-identical (the merge adds a statistic, never a step), and invalid weights are refused by name.
    """
    T = 12
    rng = np.random.default_rng(4)
    w = np.stack([rng.random(T), np.r_[np.zeros(T - 4), np.full(4, 0.25)]])
    w[0] /= w[0].sum()
    kw = dict(T=T, eta=np.stack([np.full(T, 0.2), np.linspace(0.3, 0.05, T)]), x0=np.array([1.0, -0.5, 2.0]),
              lam=np.array([0.3, 1.0, 1.5]), method="heavy_ball", momentum=0.4, sigma_a=0.5, sigma_m=0.2, burn=3,
              n_chains=3, n_rec=T)
    plain = sn.simulate(jax.random.key(11), **kw)
    out = sn.simulate(jax.random.key(11), merge_weights=w, **kw)
    assert out["merged_x"].shape == (2, 3, 2, 3)
    # sums of 12 terms of size <= ~5: round-off ~1e-15 relative
    np.testing.assert_allclose(out["merged_x"], np.einsum("mk,gnkd->gnmd", w, plain["path"]), rtol=1e-13, atol=1e-14)
    one = sn.simulate(jax.random.key(11), merge_weights=w[1], **kw)
    assert one["merged_x"].shape == (2, 3, 3)
    np.testing.assert_array_equal(one["merged_x"], out["merged_x"][:, :, 1])
    assert "merged_x" not in plain
    for name, value in plain.items():
        np.testing.assert_array_equal(out[name], value, err_msg=name)
    for bad in (w[:, :-1], -w, 2 * w, np.full(T, np.nan)):
        with pytest.raises(ValueError, match="merge_weights"):
            sn.simulate(jax.random.key(11), merge_weights=bad, **kw)


def test_lion_default_b2_is_the_published_value():
    r"""``Hyper``'s default :math:`\beta_2` is Lion's published 0.99 (also optax's default): the shared optimizer
    with ``Hyper(momentum=0.9)`` takes the steps of optax's Lion with :math:`\beta_1 = 0.9`, :math:`\beta_2 = 0.99`."""
    rng = np.random.default_rng(5)
    eta = 0.1
    ref = optax.chain(optax.scale_by_lion(b1=0.9, b2=0.99), optax.scale(-eta))
    x = x_ref = jnp.asarray(rng.normal(size=4))
    hyper = opt.Hyper(momentum=0.9)
    state, ref_state = opt.init("lion", x, hyper), ref.init(x_ref)
    for _ in range(6):
        g = jnp.asarray(rng.normal(size=4))
        x, state = opt.step("lion", g, state, x, eta, hyper)
        upd, ref_state = ref.update(g, ref_state, x_ref)
        x_ref = optax.apply_updates(x_ref, upd)
    np.testing.assert_allclose(np.asarray(x), np.asarray(x_ref), rtol=1e-13, atol=1e-15)


def test_normalized_step_survives_tiny_gradients():
    r"""A normalized step has length :math:`\eta` at any gradient scale: entries of 1e-160 square to 0 in float64,
    so the direction is computed from the gradient divided by its largest entry."""
    x = jnp.zeros(3)
    hyper = opt.Hyper(momentum=0.0)
    for scale in (1e-160, 1.0, 1e150):
        g = scale * jnp.array([3.0, 0.0, -4.0])
        new, _ = opt.step("normalized", g, opt.init("normalized", x, hyper), x, 0.1, hyper)
        np.testing.assert_allclose(np.asarray(new), [-0.06, 0.0, 0.08], rtol=1e-15, atol=1e-17)
    zero, _ = opt.step("normalized", jnp.zeros(3), opt.init("normalized", x, hyper), x, 0.1, hyper)
    np.testing.assert_array_equal(np.asarray(zero), np.zeros(3))


@pytest.mark.parametrize("law, df", [("gaussian", 0), ("rademacher", 0), ("uniform", 0), ("student", 1),
                                     ("student", 2), ("student", 5)])
def test_noise_at_is_the_whole_draw_element_by_element(law, df):
    r""":func:`sims.nqm.noise_at` at scattered counters equals the same elements of one jitted ``noise(key, (size,))``
    (JAX's counter-mode Threefry): bit for bit, except Student-t with :math:`\nu > 2`, whose :math:`\chi^2` sum over
    :math:`\nu` rows may be reduced in another order (a few ulps)."""
    size, key = 1000, jax.random.key(4)
    whole = np.asarray(jax.jit(lambda k: sn.noise(k, (size,), law, df))(key))
    idx = np.array([0, 1, 63, 64, 65, 400, 998, 999])
    part = np.asarray(jax.jit(lambda k, i: sn.noise_at(k, i, law, df, size))(key, jnp.asarray(idx)))
    if law == "student" and df > 2:
        np.testing.assert_allclose(part, whole[idx], rtol=1e-14, atol=0)  # round-off of a 5-term sum
    else:
        np.testing.assert_array_equal(part, whole[idx])


def test_steps_use_their_blocks_draws_across_sub_blocks():
    r"""SGD with additive noise, recomputed in NumPy from each recording block's one-call draw
    ``noise(additive key, (T/n_rec, d))`` (the run key ``fold_in(key, run)``, split into (next, multiplicative,
    additive) per block): 100-step blocks span sub-blocks of 64 steps and a partial one; equal to round-off."""
    T, n_rec, d = 200, 2, 3
    lam, eta, sa = np.array([1.0, 0.4, 0.1]), 0.3, np.array([0.5, 1.0, 2.0])
    out = sn.simulate(jax.random.key(12), T=T, eta=eta, x0=np.ones(d), lam=lam, sigma_a=sa, n_chains=2, n_rec=n_rec)
    for run in range(2):
        key, x = jax.random.fold_in(jax.random.key(12), run), np.ones(d)
        for j in range(n_rec):
            key, _, k_add = jax.random.split(key, 3)
            xi = np.asarray(sn.noise(k_add, (T // n_rec, d)))
            for i in range(T // n_rec):
                x = x - eta * (lam * x + sa * xi[i])
            np.testing.assert_allclose(out["path"][0, run, j], x, rtol=1e-12, atol=1e-14)


def test_horizons_share_a_kernel_and_blocks_do_not_depend_on_the_horizon():
    r"""The horizon and the number of blocks are data: a 20-step run in one block ends where the first of two 20-step
    blocks of a 40-step run ends (the same key and counters), through the same compiled kernel."""
    kw = dict(eta=0.2, x0=np.ones(2), lam=np.array([1.0, 0.3]), sigma_a=0.5, sigma_m=0.2, n_chains=3)
    short = sn.simulate(jax.random.key(13), T=20, n_rec=1, **kw)
    long = sn.simulate(jax.random.key(13), T=40, n_rec=2, **kw)
    np.testing.assert_array_equal(long["path"][:, :, 0], short["final_x"])
    assert short["path"].shape[2] == 1 and long["curve"].shape[2] == 2


def test_splitting_configurations_by_noise_changes_no_run(monkeypatch):
    r"""Configurations of one method that use different noises run in one kernel drawing both, or (past
    ``_SPLIT_VALUES`` wasted values) in one kernel per noise pattern drawing only their own: the same runs, to
    round-off (the joint kernel multiplies by :math:`1 + 0\cdot\xi` and adds :math:`0\cdot\xi`, which the compiler
    may fuse into the neighbouring operations differently: a few ulps over 30 steps)."""
    kw = dict(T=30, eta=0.2, x0=np.ones(2), lam=np.array([1.0, 0.3]), sigma_m=[0.4, 0.0, 0.3],
              sigma_a=np.array([[0.0, 0.0], [0.5, 0.2], [0.5, 0.0]]), n_chains=3, n_rec=3)
    joint = sn.simulate(jax.random.key(14), **kw)
    monkeypatch.setattr(sn, "_SPLIT_VALUES", 0)
    assert len(sn._groups(["sgd"] * 3, np.array([True, False, True]), np.array([False, True, True]), 1)) == 3
    split = sn.simulate(jax.random.key(14), **kw)
    for name in joint:
        np.testing.assert_allclose(split[name], joint[name], rtol=1e-13, atol=1e-300, err_msg=name)