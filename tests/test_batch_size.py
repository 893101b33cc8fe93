"""Unit tests of the batch-size topic: the sympy one-step law against an exact enumeration, the greedy recursion's
limits against each other, the scaling-rule closed forms against their definitions, the Monte Carlo step against
its moments, and the sweep fit against the hyperbola it was drawn from."""
import itertools
import math

import jax
import numpy as np
import pytest
import sympy as sp

import sims.batch_size as sb
import theory.batch_size as th
import theory.batch_size_fit as tf
from sims.nqm import noise_at
from sims.reference.batch_size import one_step_numpy, second_moment_ema_numpy
from sims.rng import words
from theory import nqm

H = np.array([[1.0, 0.3, 0.0], [0.3, 0.5, 0.1], [0.0, 0.1, 0.2]])
R = np.array([[1.0, 0.0, 0.0], [0.4, 0.8, 0.0], [0.1, -0.2, 0.5]])   # per-example noise factor: Sigma = R R^T
SIGMA = R @ R.T
THETA = np.array([1.0, -0.7, 0.4])
G = H @ THETA


def test_sympy_one_step_law():
    _, root, decrease, (_, g2, c, t, B) = th.one_step_sym()
    assert sp.simplify(root - g2 / (c + t / B)) == 0
    assert sp.simplify(decrease - g2**2 / (2 * (c + t / B))) == 0
    # the closed forms in the noise-scale shape: eta_max / (1 + B_noise / B)
    assert sp.simplify(root - (g2 / c) / (1 + (t / c) / B)) == 0


def test_one_step_expectation_by_exact_enumeration():
    """E L(theta - eta g_B) over every Rademacher sign pattern of B = 2 examples (2^6 patterns), exactly."""
    def L(x):
        return 0.5 * x @ H @ x
    eta = np.array([0.2, 0.7])
    B = 2
    total = np.zeros(eta.size)
    pats = list(itertools.product([-1.0, 1.0], repeat=3 * B))
    for p in pats:
        g = np.mean([G + R @ np.array(p[3 * k:3 * k + 3]) for k in range(B)], axis=0)
        total += np.array([L(THETA - e * g) for e in eta])
    exact = total / len(pats) - L(THETA)
    np.testing.assert_allclose(th.expected_one_step_loss(G, H, SIGMA, B, eta), exact, rtol=1e-13)
    # the minimizer over a fine grid of the enumerated quadratic (three points fix it) is optimal_step
    e3 = np.array([0.0, 0.5, 1.0])
    vals = np.array([np.mean([L(THETA - e * np.mean([G + R @ np.array(p[3 * k:3 * k + 3]) for k in range(B)], axis=0))
                              for p in pats]) for e in e3])
    a2 = (vals[2] - 2 * vals[1] + vals[0]) / 0.25 / 2
    a1 = (vals[1] - vals[0]) / 0.5 - a2 * 0.5
    assert -a1 / (2 * a2) == pytest.approx(float(th.optimal_step(G, H, SIGMA, float(B))), rel=1e-12)


def test_noise_scales_agree_only_for_isotropic_hessian():
    iso = 0.7 * np.eye(3)
    assert th.noise_scale(iso @ THETA, iso, SIGMA) == pytest.approx(th.simple_noise_scale(iso @ THETA, SIGMA), rel=1e-14)
    assert abs(th.noise_scale(G, H, SIGMA) / th.simple_noise_scale(G, SIGMA) - 1) > 0.1


def test_monte_carlo_step_matches_its_moments():
    """E l'(0) = -|G|^2 and E l''(0) = G^T H G + tr(H Sigma)/B, within 5 standard errors of 4000 draws."""
    out = sb.one_step(jax.random.key(11), THETA, H, SIGMA, np.array([1, 7]), n_draws=4000)
    for k, b in enumerate((1, 7)):
        d1, d2 = out["d1"][k], out["d2"][k]
        assert abs(d1.mean() + G @ G) <= 5 * d1.std() / math.sqrt(d1.size)
        want = G @ H @ G + np.trace(H @ SIGMA) / b
        assert abs(d2.mean() - want) <= 5 * d2.std() / math.sqrt(d2.size)
    # the draws of one batch size do not depend on the others in the call
    alone = sb.one_step(jax.random.key(11), THETA, H, SIGMA, 7, n_draws=4000)
    np.testing.assert_array_equal(alone["d1"][0], out["d1"][1])


LAM = 1.0 / np.arange(1, 21)


def test_greedy_limits_against_the_recursion():
    """E_min from the B -> 0 ODE against the recursion at a tiny B (an O(B) gap); S_min against B = 1e12."""
    s2, m0 = LAM.copy(), 1.0 / LAM
    e_min = th.greedy_min_examples(LAM, s2, m0, 0.2)
    s_min = th.greedy_min_steps(LAM, s2, m0, 0.2)
    b_crit = e_min / s_min
    small = th.greedy_steps(LAM, s2, m0, np.array([1e-3, 2e-3]) * b_crit, 0.2)
    gap = small["examples"] / e_min - 1
    assert 0 < gap[0] < gap[1] < 0.02           # E(B) - E_min grows like B near B = 0
    assert gap[1] / gap[0] == pytest.approx(2.0, rel=0.05)   # first order in B
    big = th.greedy_steps(LAM, s2, m0, 1e12, 0.2)
    assert big["steps"][0] == pytest.approx(s_min, rel=1e-9)


def test_greedy_recursion_equals_the_shared_moment_recursion():
    """The greedy run's loss curve, rebuilt step by step with theory.nqm.moment_recursion at integer B."""
    s2, m0, B = LAM.copy(), 1.0 / LAM, 3
    m, etas = m0.copy(), []
    for _ in range(40):
        e = (LAM**2 @ m) / (LAM**3 @ m + LAM @ s2 / B)
        etas.append(e)
        m = nqm.moment_recursion(LAM, np.array([e]), m, np.sqrt(s2), 0.0, B)[-1]
    loss = nqm.expected_loss(LAM, nqm.moment_recursion(LAM, np.array(etas), m0, np.sqrt(s2), 0.0, B))
    target = loss[-1] / loss[0] * 1.0001
    steps = th.greedy_steps(LAM, s2, m0, float(B), target)["steps"][0]
    assert 39 < steps <= 40


def test_linear_rule_closed_forms():
    lam, sa, e1 = np.array([1.0, 0.5]), np.array([1.0, 2.0]), 0.1
    b = 5.0
    want = (1 / (2 - e1 * b * 1.0) + 4 / (2 - e1 * b * 0.5)) / (5 / 2)
    assert float(th.linear_rule_ratio(lam, sa, e1, b)) == pytest.approx(want, rel=1e-13)
    assert th.linear_rule_limit(lam, e1) == pytest.approx(20.0, rel=1e-15)
    edge = th.linear_rule_edge(lam, sa, e1, 1.3)
    assert float(th.linear_rule_ratio(lam, sa, e1, edge)) == pytest.approx(1.3, rel=1e-10)


def test_sign_floor_small_kappa_and_sqrt_rule_edge():
    """At kappa = a eta sqrt(B)/sigma = 1e-3 the exact chain's floor is eta sigma_B sqrt(2 pi)/8 to O(kappa)."""
    eta, b = 1e-3, 4.0
    f = th.sign_rule_floor(1.0, eta, 1.0, b)
    assert f == pytest.approx(eta * 0.5 * math.sqrt(2 * math.pi) / 8, rel=5e-3)
    edge = th.sqrt_rule_edge(1.0, 0.05, 1.0, 1.2)
    ratio = th.sign_rule_floor(1.0, 0.05 * math.sqrt(edge), 1.0, edge) / (0.05 * math.sqrt(2 * math.pi) / 8)
    assert ratio == pytest.approx(1.2, rel=1e-8)


def test_fit_recovers_a_noisy_hyperbola():
    """Steps drawn from S_min (1 + B_crit/B) with 3 % log-normal scatter, 200 independent sweeps of 10 rows: the
    z-scores of S_min and B_crit spread like Student t with n - 2 = 8 dof (standard deviation 1.15; the band
    0.9..1.5 allows the sample spread of 200 heavy-tailed draws and the delta method's first order), so the standard
    errors are neither missing a factor nor inflated; a wrong SE (say without the residual variance) is off by 30x."""
    rng = np.random.default_rng(5)
    b = np.geomspace(1, 512, 10)
    z = []
    for _ in range(200):
        s = 200 * (1 + 16 / b) * np.exp(0.03 * rng.standard_normal(b.size))
        fit = tf.fit_hyperbola(b, s)
        z.append(((fit["s_min"] - 200) / fit["s_min_se"], (fit["b_crit"] - 16) / fit["b_crit_se"]))
        assert fit["rms"] < 0.06
    z = np.array(z)
    assert np.all((0.9 < z.std(axis=0)) & (z.std(axis=0) < 1.5))


def test_fit_of_the_greedy_nqm_inside_the_window():
    """The greedy NQM's steps at B <= B_crit: the fitted B_crit within 10 % of E_min / S_min from the limits."""
    s2, m0 = LAM.copy(), 1.0 / LAM
    b_crit = th.greedy_min_examples(LAM, s2, m0, 0.2) / th.greedy_min_steps(LAM, s2, m0, 0.2)
    b = b_crit * np.geomspace(0.05, 1.0, 6)
    r = th.greedy_steps(LAM, s2, m0, b, 0.2)
    fit = tf.fit_hyperbola(b, r["steps"])
    assert fit["b_crit"] == pytest.approx(b_crit, rel=0.1)
    assert fit["rms"] < 0.1


def test_half_life_rule_keeps_the_token_half_life_and_the_first_order_rule_parts_from_it():
    b = np.array([1.0, 3.0, 50.0, 400.0])
    np.testing.assert_allclose(th.token_half_life(th.half_life_beta2(0.99, 1.0, b), b), math.log(0.5) / math.log(0.99),
                               rtol=1e-12)
    edge = th.linear_beta2_edge(0.99, 1.0, 0.9)
    ratio = th.token_half_life(1 - 0.01 * edge, edge) / th.token_half_life(0.99, 1.0)
    assert float(ratio) == pytest.approx(0.9, rel=1e-9)
    # the rules part at first order in x = 1 - beta2(B0): the ratio is 1 - x (B/B0 - 1)/2 + O(x^2 B^2)
    small = th.token_half_life(1 - 0.01 * 2.0, 2.0) / th.token_half_life(th.half_life_beta2(0.99, 1.0, 2.0), 2.0)
    assert abs(float(small) - (1 - 0.01 / 2)) < 3 * 0.02**2


def test_ema_rise_and_the_simulated_second_moment():
    """The rise against a NumPy loop of the EMA on a constant input; the simulated E v_t (Gaussian minibatch noise) at
    steps 1, 5, 50 within 5 standard errors of 4000 chains, for two decays and batch sizes."""
    b2 = np.array([0.9, 0.5])
    v, loop = 0.0, []
    for _ in range(60):
        v = 0.9 * v + 0.1 * 1.0
        loop.append(v)
    np.testing.assert_allclose(th.ema_rise(b2, 60)[0], loop, rtol=1e-13)
    out = sb.second_moment_ema(jax.random.key(3), b2, np.array([1.0, 8.0]), sigma=2.0, n_steps=60, n_chains=4000)
    exact = th.ema_rise(b2, 60)
    for t in (0, 4, 49):
        assert np.all(np.abs(out["mean"][:, t] - exact[:, t]) <= 5 * out["se"][:, t])
    paired = sb.second_moment_ema(jax.random.key(3), b2[::-1], np.array([8.0, 1.0]), sigma=2.0, n_steps=60,
                                  n_chains=50, paired=True)
    alone = sb.second_moment_ema(jax.random.key(3), b2[:1], np.array([8.0]), sigma=2.0, n_steps=60, n_chains=50,
                                 paired=True)
    np.testing.assert_allclose(alone["mean"][0], paired["mean"][1], rtol=1e-13)


# ----------------------------------------------------------------------------- the draws' law
def _replayed_sign_sums(key, b, j, d):
    """The d sign sums of draw j at batch size b as sims.batch_size documents them, recomputed with sims.rng.words
    outside the kernel: block w of draw j is words(fold_in(fold_in(fold_in(key, b), j), w), (d,)), and coordinate i
    counts the ones of its word i among the lowest min(32, b - 32 w) bits."""
    key_j = jax.random.fold_in(jax.random.fold_in(key, b), j)
    ones = np.zeros(d, np.int64)
    for w in range(-(-b // 32)):
        u = np.asarray(words(jax.random.fold_in(key_j, w), (d,)))
        bits = min(32, b - 32 * w)
        ones += np.bitwise_count(u if bits == 32 else u & np.uint32((1 << bits) - 1))
    return 2 * ones - b


def _kernel_sign_sums(key, b, n, d):
    """The simulator's kernel (sims.batch_size._sign_sums, as one_step maps it over draws) for draws 0..n-1: (n, d)."""
    impl = str(jax.random.key_impl(key))

    def one(j, b):
        key_j = jax.random.fold_in(jax.random.fold_in(key, b), j)
        return sb._sign_sums(key_j, b, d, impl=impl)

    return np.asarray(jax.jit(jax.vmap(one, in_axes=(0, None)))(np.arange(n), np.int64(b)))


def test_sign_sums_are_the_documented_words():
    """The kernel's unrolled Threefry and packed popcounts give exactly the documented draw (sims.rng.words, masked):
    odd and even d (an odd d drops the second word of the padded last counter pair), B at and around the 32-bit word
    boundaries and across several blocks."""
    key = jax.random.key(21)
    for d in (1, 2, 3, 8):
        for b in (1, 5, 31, 32, 33, 64, 100):
            got = _kernel_sign_sums(key, b, 3, d)
            want = np.stack([_replayed_sign_sums(key, b, j, d) for j in range(3)])
            np.testing.assert_array_equal(got, want, err_msg=f"d={d}, B={b}")


def test_sign_sums_law():
    """The sign sums' law, from the kernel's own draws (20000 draws x 3 coordinates, d odd so that both words of a hash
    and the dropped one are in play): for each B, the mean 0 and the variance B (E S^2 = B; the sample variance's
    standard error is sqrt((E S^4 - B^2)/n) with E S^4 = 3B^2 - 2B), each within 5 standard errors (false alarm
    ~6e-7 each); the lag-one correlation between draws and the correlation between coordinates within 5/sqrt(n). At
    B = 1 every square is exactly 1. At B = 5 the counts of K = (S + B)/2 against the exact Binomial(5, 1/2) pmf by a
    chi-square test (5 dof) at p > 1e-6: the seed is fixed, so the test is deterministic, and a correct law fails it
    once in 1e6 seeds, while one bit too many or too few (S of the wrong parity: empty cells) or a bit with
    P(1) = 0.52 gives p < 1e-12 at 60000 values. A word reused across blocks (B = 64, 100) would double the variance."""
    from scipy import stats

    key, n, d = jax.random.key(22), 20000, 3
    for b in (1, 5, 32, 33, 64, 100):
        s = _kernel_sign_sums(key, b, n, d).astype(float)
        assert np.all(np.abs(s) <= b) and np.all((s + b) % 2 == 0)
        flat = s.ravel()
        assert abs(flat.mean()) <= 5 * math.sqrt(b / flat.size), (b, flat.mean())
        var = (flat**2).mean()
        if b == 1:
            assert var == 1.0
        else:
            assert abs(var - b) <= 5 * math.sqrt((2 * b * b - 2 * b) / flat.size), (b, var)
        lag = np.corrcoef(s[:-1].ravel(), s[1:].ravel())[0, 1]
        cross = [np.corrcoef(s[:, i], s[:, k])[0, 1] for i in range(d) for k in range(i + 1, d)]
        assert np.all(np.abs([lag, *cross]) <= 5 / math.sqrt(n)), (b, lag, cross)
    b = 5
    k = ((_kernel_sign_sums(key, b, n, d) + b) // 2).ravel()
    counts = np.bincount(k, minlength=b + 1)
    expected = k.size * stats.binom.pmf(np.arange(b + 1), b, 0.5)
    p = stats.chi2.sf(((counts - expected) ** 2 / expected).sum(), df=b)
    assert p > 1e-6, (counts, expected, p)


def test_ema_normal_is_jax_random_normal():
    """The EMA kernel's hashed normal (sims.batch_size._normal_at, Threefry unrolled) is jax.random.normal's element,
    bit for bit, for several chain keys, and sims.nqm.noise_at's beyond 2**32 (the counter's high word)."""
    keys = jax.vmap(lambda i: jax.random.fold_in(jax.random.key(9), i))(np.arange(4))
    kd = np.asarray(jax.random.key_data(keys))
    got = jax.jit(jax.vmap(lambda t: sb._normal_at(kd[:, 0], kd[:, 1], t)))(np.arange(50))
    want = np.stack([np.asarray(jax.random.normal(k, (50,))) for k in keys])
    np.testing.assert_array_equal(np.asarray(got).T, want)
    far = np.int64(2**32 + 7)
    np.testing.assert_array_equal(np.asarray(sb._normal_at(kd[:, 0], kd[:, 1], far)),
                                  [np.asarray(noise_at(k, far, "gaussian", 0, 2**33)) for k in keys])


# ----------------------------------------------------------------------------- NumPy references (sims.reference)
def _simulator_sign_sums(key, batch_sizes, n, d):
    """The sums of the B example sign vectors that sims.batch_size.one_step draws (its documented draw,
    _replayed_sign_sums), recomputed outside the simulator: (k, n, d) integers."""
    return np.stack([np.stack([_replayed_sign_sums(key, int(b), j, d) for j in range(n)]) for b in batch_sizes])


def test_one_step_reference_replays_the_simulators_draws():
    """The NumPy reference fed the simulator's own sign sums gives its slopes and curvatures to round-off: both apply
    R once to the mean sign vector, the simulator with the gradient and Hessian of the loss by autodiff (H theta and
    (H + H^T)/2 in another order of operations), so a few ulps on values of order 1: rtol 1e-12. B = 33 and 100 take
    several word blocks."""
    bs, n = np.array([1, 3, 5, 33, 100]), 6
    key = jax.random.key(5)
    out = sb.one_step(key, THETA, H, SIGMA, bs, n_draws=n)
    ref = one_step_numpy(THETA, H, SIGMA, bs, n_draws=n, sign_sums=_simulator_sign_sums(key, bs, n, 3))
    np.testing.assert_allclose(ref["d1"], out["d1"], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(ref["d2"], out["d2"], rtol=1e-12, atol=1e-14)
    np.testing.assert_array_equal(ref["batch_size"], out["batch_size"])


def test_one_step_reference_draws_match_the_moments():
    """The reference's own draws (popcounts of raw 64-bit words: one partial word at B = 3, one full at B = 64, two
    with a masked second at B = 100): the mean slope and curvature are -|G|^2 and G^T H G + tr(H Sigma)/B within 5
    standard errors of 4000 draws (the curvature's noise term is the variance of the sign sums, B, over B^2)."""
    bs = (1, 3, 64, 100)
    rng = np.random.default_rng(1)
    out = one_step_numpy(THETA, H, SIGMA, np.array(bs), n_draws=4000, rng=rng)
    for k, b in enumerate(bs):
        d1, d2 = out["d1"][k], out["d2"][k]
        assert abs(d1.mean() + G @ G) <= 5 * d1.std() / math.sqrt(d1.size)
        want = G @ H @ G + np.trace(H @ SIGMA) / b
        assert abs(d2.mean() - want) <= 5 * d2.std() / math.sqrt(d2.size)


def test_second_moment_ema_reference_replays_the_simulators_draws():
    """The NumPy reference fed the simulator's own normals (chain j of configuration g: jax.random.normal of
    fold_in(key, g n + j), or of fold_in(key, j) when paired) gives its means and standard errors to round-off: the
    simulator scales the noise by sigma/sqrt(B) and divides the path by its square, the reference works in those
    units directly, a few ulps per step on values of order 1 (and the se's two-pass sums in another order), so rtol
    1e-10."""
    b2, bs, n, T = np.array([0.9, 0.6]), np.array([1.0, 8.0]), 5, 30
    key = jax.random.key(8)
    for paired in (False, True):
        out = sb.second_moment_ema(key, b2, bs, sigma=2.0, n_steps=T, n_chains=n, paired=paired)
        idx = np.arange(n) if paired else np.arange(b2.size * n)
        z = np.stack([np.asarray(jax.random.normal(jax.random.fold_in(key, int(i)), (T,))) for i in idx])
        ref = second_moment_ema_numpy(b2, n_steps=T, n_chains=n, paired=paired,
                                      noise=z if paired else z.reshape(b2.size, n, T))
        np.testing.assert_allclose(ref["mean"], out["mean"], rtol=1e-10)
        np.testing.assert_allclose(ref["se"], out["se"], rtol=1e-10)


def test_second_moment_ema_reference_draws_rise_as_the_closed_form():
    """The reference's own draws: E u_t = 1 - beta2^t (theory.batch_size.ema_rise) within 5 standard errors of 4000
    chains at steps 1, 5, 50, both unpaired and paired."""
    b2 = np.array([0.9, 0.5])
    exact = th.ema_rise(b2, 60)
    for paired in (False, True):
        out = second_moment_ema_numpy(b2, n_steps=60, n_chains=4000, rng=np.random.default_rng(3), paired=paired)
        for t in (0, 4, 49):
            assert np.all(np.abs(out["mean"][:, t] - exact[:, t]) <= 5 * out["se"][:, t])


def test_bench_cases_count_their_work():
    """The bench cases (built, not run): units as named, work = examples summed over the batch sizes x draws, and
    configurations x chains x steps; the large scale is larger."""
    from sims.reference.batch_size import bench_cases

    with pytest.raises(ValueError, match="scale"):
        bench_cases("huge")
    step, ema = bench_cases("small")
    assert step.unit == "example gradients" and step.work == 4096 * (1 + 4 + 16 + 64)
    assert ema.unit == "chain steps" and ema.work == 16 * 1024 * 720
    assert all(big.work > small.work for big, small in zip(bench_cases("large"), (step, ema)))
