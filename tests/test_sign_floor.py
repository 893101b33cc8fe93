"""Unit tests of theory/sign_floor/, sims/sign_floor.py and sims/reference/sign_floor.py.

The claims run in tests/test_power.py (ids carry the topic), the simulator contract in
tests/test_contract.py (rows in tests/contract_sign_floor.py).
"""
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import sympy as sp
from scipy import integrate, special, stats

from sims import sign_floor as S
from sims.reference import sign_floor as R
from theory import nqm as N
from theory import sign_floor as T

p, eta, c, a, sigma = T.p_sym, T.eta_sym, T.c_sym, T.a_sym, T.sigma_sym
NAN = float("nan")


# ----------------------------------------------------------------------------- theory, exact
def test_second_moment_closed_form():
    by_hand = (c**2 + (eta - c) ** 2) / 2 + 2 * eta**2 * p * (1 - p) / (1 - 2 * p) ** 2
    assert sp.simplify(T.second_moment_sym() - by_hand) == 0


def test_floor_constants_exact():
    e = sp.Symbol("e", positive=True)
    assert sp.simplify(T.c_mid_sym(e) - (1 / (4 * e**2) - sp.Rational(1, 8))) == 0
    assert sp.simplify(T.c_unif_sym(e) - (1 / (4 * e**2) - sp.Rational(1, 12))) == 0


def test_parity_classes_average_to_pi_and_split():
    even, odd = T.parity_second_moments_sym()
    assert sp.simplify((even + odd) / 2 - T.second_moment_sym()) == 0
    # at c = eta/2 the two classes are mirror images: no split in E x^2
    assert sp.simplify((even - odd).subs(c, eta / 2)) == 0
    assert sp.simplify((even - odd).subs({c: eta / 5, p: sp.Rational(1, 5), eta: 1})) != 0


def test_ladder_law_normalised_and_balanced():
    for prob in (0.0, 0.05, 0.2, 0.4):
        n = np.arange(-400, 400)
        pi = T.ladder_pmf(prob, n)
        assert abs(pi.sum() - 1) < 1e-12
        # detailed balance across each edge n <-> n+1 on the positive ladder, and at the 0 | -1 edge
        assert np.allclose(pi[400:-1] * prob, pi[401:] * (1 - prob), rtol=1e-12, atol=0)
        assert np.allclose(pi[:399] * (1 - prob), pi[1:400] * prob, rtol=1e-12, atol=0)
        assert math.isclose(pi[399], pi[400], rel_tol=1e-14)


def test_limits_of_the_constant():
    """sigma -> 0 and sigma -> infinity limits: sympy, and the float closed form along a second route (scipy erf)."""
    lim = T.c_limits()
    s = sp.Symbol("sigma", positive=True)
    assert lim["mid0"] == sp.Rational(1, 8) and lim["unif0"] == sp.Rational(1, 6)
    assert sp.simplify(lim["mid_inf"] - (sp.pi * s**2 / 8 + sp.pi / 24 - sp.Rational(1, 8))) == 0
    assert sp.simplify(lim["unif_inf"] - (sp.pi * s**2 / 8 + sp.pi / 24 - sp.Rational(1, 12))) == 0
    assert abs(T.c_mid(0.05) - 1 / 8) < 1e-12 and abs(T.c_unif(0.05) - 1 / 6) < 1e-12
    big = 200.0  # remainder O(sigma^-2) against a sigma^2 term: relative ~ sigma^-4 = 6e-10
    assert abs(T.c_mid(big) - float(lim["mid_inf"].subs(s, big))) / T.c_mid(big) < 1e-8


def test_contraction_has_no_cancellation():
    for law, df in (("gaussian", None), ("student", 2.0), ("student", 5.0)):
        for sg in (0.3, 1.0, 4.0):
            assert math.isclose(T.contraction(sg, law, df), 1 - 2 * T.away_probability(sg, law, df), rel_tol=1e-12)
    # 1 - 2p underflows at sigma = 1e17 in double precision; the contraction does not
    assert math.isclose(T.contraction(1e17), math.sqrt(2 / math.pi) / 1e17, rel_tol=1e-12)
    assert math.isclose(T.contraction(1e17, "student", 3.0), 2 * T.student_density_at_zero(3.0) / 1e17, rel_tol=1e-9)
    assert math.isclose(T.c_mid(1e17), math.pi * 1e34 / 8, rel_tol=1e-9)


def test_sde_constant_is_the_laplace_law():
    for sg in (0.5, 1.0, 2.0):
        e = T.contraction(sg)
        rate = 2 * e / (1 - e**2)  # stationary density of dY = -e sign(Y) dt + sqrt(1 - e^2) dW
        m2 = integrate.quad(lambda y: y * y * rate / 2 * math.exp(-rate * abs(y)), -np.inf, np.inf)[0]
        assert math.isclose(T.c_sde(sg), m2 / 2, rel_tol=1e-8)
    assert math.isclose(T.c_sde(1.0), 0.306 / 2, rel_tol=2e-3)  # E y^2 = 0.306 at sigma = 1


def test_student_density_at_zero():
    for df in (1.0, 2.0, 3.0, 7.5, 1e6):
        assert math.isclose(T.student_density_at_zero(df), stats.t.pdf(0.0, df), rel_tol=1e-12)
    assert math.isclose(T.student_density_at_zero(1e300), 1 / math.sqrt(2 * math.pi), rel_tol=1e-12)  # Gaussian limit


def test_sgd_threshold_and_optimum():
    eta_max, eta_star = T.sgd_threshold()
    assert sp.simplify(eta_max - 2 / (a * (1 + sigma**2))) == 0
    assert sp.simplify(eta_star - 1 / (a * (1 + sigma**2))) == 0


@jax.jit
def _mean_square_grad(x, av, ev, sv):
    """d/dx of E[x_{k+1}^2] over Rademacher noise (mean 0, variance 1), by autodiff."""
    xi = jnp.array([-1.0, 1.0])
    return jax.grad(lambda y: jnp.mean((y - ev * av * y * (1 + sv * xi)) ** 2))(x)


def test_sgd_contraction_matches_autodiff():
    """d/dx E[x_{k+1}^2] = 2 rho x, with E taken exactly over Rademacher noise (mean 0, variance 1)."""
    rho = T.sgd_contraction_sym()
    rng = np.random.default_rng(0)
    for _ in range(5):
        av, ev, sv, x = rng.uniform(0.2, 2.0, 4)
        grad = float(_mean_square_grad(x, av, ev, sv))
        assert math.isclose(grad, 2 * x * float(rho.subs({a: av, eta: ev, sigma: sv})), rel_tol=1e-12)
        assert math.isclose(float(rho.subs({a: av, eta: ev, sigma: sv})), T.sgd_contraction(av, ev, sv), rel_tol=1e-12)


def test_sgd_recursion_of_the_shared_model_is_this_topics_sgd():
    """The topic's SGD baselines come from theory.nqm (one mode, batch 1): its recursion reaches the topic's
    closed forms, decays at sgd_contraction's rate, and the sign_floor wrapper is the same number."""
    steps = np.full(4000, 0.05)
    v = N.moment_recursion([2.0], steps, 1.0, sigma_a=1.0, sigma_m=0.5)[:, 0]
    assert math.isclose(v[-1], 0.05 / (2.0 * (2 - 0.05 * 2.0 * 1.25)), rel_tol=1e-10)
    assert math.isclose(v[-1], float(N.stationary_second_moment(2.0, 0.05, 1.0, 0.5)), rel_tol=1e-10)
    v = N.moment_recursion([2.0], steps, 0.3, sigma_a=1.0)[:, 0]
    assert math.isclose(2.0 / 2 * v[-1], T.sgd_additive_floor(2.0, 0.05, 1.0), rel_tol=1e-10)
    assert math.isclose(T.sgd_additive_floor(2.0, 0.05, 1.0), 0.05 / (2 * (2 - 0.1)), rel_tol=1e-14)
    v = N.moment_recursion([2.0], steps[:10], 0.3, sigma_m=0.5)[:, 0]
    np.testing.assert_allclose(v, 0.3 * T.sgd_contraction(2.0, 0.05, 0.5) ** np.arange(11), rtol=1e-12)


def test_additive_small_kappa_expansion_derived():
    kappa = sp.Symbol("kappa", positive=True)
    expected = sp.sqrt(2 * sp.pi) / 8 + sp.pi / 32 * kappa
    assert sp.simplify(T.phi_add_expansion_sym() - expected) == 0
    assert math.isclose(T.phi_add_series(0.0), math.sqrt(2 * math.pi) / 8, rel_tol=1e-14)


def test_additive_drift_floor():
    expr, rho0 = T.additive_drift_floor_sym()
    assert sp.simplify(expr.subs(rho0, 1 / sp.sqrt(2 * sp.pi)) - sp.sqrt(2 * sp.pi) * sigma * eta / 8) == 0


def test_additive_chain_detailed_balance_and_offset():
    av, ev, sv = 1.5, 0.05, 0.7
    x, pi = T.additive_chain(av, ev, sv, 0.3 * ev)
    assert abs(pi.sum() - 1) < 1e-12
    up, down = special.ndtr(-av * x / sv), special.ndtr(av * x / sv)
    flux_up, flux_down = pi[:-1] * up[:-1], pi[1:] * down[1:]
    mask = flux_up > 1e-200
    assert np.allclose(flux_up[mask], flux_down[mask], rtol=1e-9)
    assert pi[0] < 1e-30 and pi[-1] < 1e-30  # the mass at the truncation edges is negligible
    # Student-t chain: doubling the truncation width changes nothing
    f1 = T.floor(1.0, 0.01, 1.0, "additive", law="student", df=3)
    xs, ps = T.additive_chain(1.0, 0.01, 1.0, 0.005, law="student", df=3, width=80)
    assert math.isclose(f1, 0.5 * np.sum(ps * xs**2), rel_tol=1e-10)


def test_floor_api_values():
    e1 = math.erf(1 / math.sqrt(2))
    assert math.isclose(T.floor(2.0, 0.1, 1.0), 2.0 * 0.01 * (1 / (4 * e1**2) - 1 / 8), rel_tol=1e-12)
    assert math.isclose(T.floor(2.0, 0.1, 1.0, offset="uniform"), 2.0 * 0.01 * T.c_unif(1.0), rel_tol=1e-12)
    assert math.isclose(T.floor(1.0, 0.1, 1.0, offset=0.05), T.floor(1.0, 0.1, 1.0), rel_tol=1e-12)
    assert math.isclose(T.floor(1.0, 0.1, 1.0, offset=0.02), 0.5 * T.second_moment(T.away_probability(1.0), 0.1, 0.02),
                        rel_tol=1e-12)
    assert T.floor(1.0, 0.1, 1.0, offset=0.0) == 0.0
    assert T.floor(1.0, 0.1, 1.0, method="sgd") == 0.0
    assert T.floor(1.0, 1.0, 1.0, method="sgd") == math.inf  # eta a (1 + sigma^2) = 2
    assert T.floor(1.0, 2.5, 1.0, "additive", method="sgd") == math.inf
    assert math.isclose(T.floor(1.0, 0.1, 2.0, "additive", "sgd"), 0.1 * 4 / (2 * 1.9), rel_tol=1e-12)
    assert math.isclose(T.away_probability(1.0, "student", 2), stats.t.cdf(-1.0, 2), rel_tol=1e-12)
    add = T.floor(1.0, 1e-3, 1.0, "additive")
    assert abs(add / 1e-3 - T.phi_add_series(1e-3)) < 1e-5


def test_sign_schedule_law_is_exact_at_a_constant_step():
    """From a uniform start the grid law at a constant step reaches the uniform-offset floors."""
    steps = np.full(400, 0.05)
    mf, err = T.sign_schedule_mean_f(2.0, steps, 1.0, "multiplicative", x0_low=0.3, x0_high=0.35, cells=8)
    assert math.isclose(mf[-1], T.floor(2.0, 0.05, 1.0, offset="uniform"), rel_tol=1e-10) and err[-1] < 1e-15
    assert math.isclose(mf[0], 2.0 / 2 * (0.3**2 + 0.3 * 0.05 + 0.05**2 / 3), rel_tol=1e-12)
    mf, _ = T.sign_schedule_mean_f(2.0, steps, 0.5, "additive", x0_low=0.3, x0_high=0.35, cells=16)
    assert math.isclose(mf[-1], T.floor(2.0, 0.05, 0.5, "additive", offset="uniform"), rel_tol=1e-3)


def test_sign_schedule_law_converges_like_h_squared():
    """Along a linear decay the grid error falls by 4 per halving of the cell width (the claims' error bar)."""
    steps = np.asarray(S.schedule(np.arange(300), 300, 0.02, 0.5))
    for noise, cells in (("multiplicative", (16, 32, 64)), ("additive", (8, 16, 32))):
        ends = [T.sign_schedule_mean_f(1.0, steps, 1.0, noise, x0_low=0.1, x0_high=0.12, cells=n) for n in cells]
        d1, d2 = abs(ends[0][0][-1] - ends[1][0][-1]), abs(ends[1][0][-1] - ends[2][0][-1])
        assert 2.5 < d1 / d2 < 6, (noise, d1, d2)
        assert math.isclose(ends[2][1][-1], d2, rel_tol=1e-12)  # err = |E_h - E_2h|


def test_sign_schedule_law_matches_monte_carlo():
    """The grid law against plain NumPy signSGD chains along the same decaying schedule (independent route)."""
    steps = np.asarray(S.schedule(np.arange(200), 200, 0.02, 0.5))
    rng = np.random.default_rng(3)
    n = 50_000
    for noise in ("multiplicative", "additive"):
        x = 0.1 + 0.02 * rng.uniform(size=n)
        for e in steps:
            xi = rng.standard_normal(n)
            g = x * (1 + xi) if noise == "multiplicative" else x + xi
            x = x - e * np.sign(g)
        mc, se = np.mean(x * x / 2), np.std(x * x / 2) / math.sqrt(n)
        pred, err = T.sign_schedule_mean_f(1.0, steps, 1.0, noise, x0_low=0.1, x0_high=0.12, cells=32)
        assert abs(mc - pred[-1]) < 5 * se + err[-1], (noise, mc, pred[-1], se)


# ----------------------------------------------------------------------------- theory, bad input
@pytest.mark.parametrize("call, name", [
    (lambda: T.sgd_additive_floor(1.0, 2.5, 1.0), "eta"),
    (lambda: T.sgd_additive_floor(1.0, 2.0, 1.0), "eta"),
    (lambda: T.c_mid(1e200), "sigma"), (lambda: T.c_unif(1e200), "sigma"), (lambda: T.c_sde(1e200), "sigma"),
    (lambda: T.second_moment(0.5, 1.0, 0.5), "p"), (lambda: T.parity_second_moments(0.5, 1.0, 0.2), "p"),
    (lambda: T.ladder_pmf(0.5, np.arange(3)), "p"), (lambda: T.ladder_law(0.5), "p"),
    (lambda: T.second_moment(0.2, 0.0, 0.0), "eta"), (lambda: T.second_moment(0.2, 1.0, 1.5), "c"),
    (lambda: T.away_probability(NAN), "sigma"), (lambda: T.away_probability(1.0, "student"), "df"),
    (lambda: T.away_probability(1.0, "student", NAN), "df"), (lambda: T.contraction(-1.0), "sigma"),
    (lambda: T.sgd_contraction(1.0, NAN, 1.0), "eta"), (lambda: T.sgd_contraction(0.0, 0.1, 1.0), "a"),
    (lambda: T.additive_chain(1.0, 0.1, NAN, 0.0), "sigma"), (lambda: T.additive_chain(1.0, 0.1, 1.0, 0.1), "c"),
    (lambda: T.additive_chain(1.0, 1e-9, 1.0, 0.0), "eta"), (lambda: T.additive_floor(1.0, 0.1, 1.0, "left"), "offset"),
    (lambda: T.phi_add_series(NAN), "kappa"), (lambda: T.student_density_at_zero(0.0), "df"),
    (lambda: T.sign_schedule_mean_f(1.0, [0.1], 1.0, x0_low=-0.1, x0_high=0.1), "x0_low"),
    (lambda: T.sign_schedule_mean_f(1.0, [0.1], 1.0, x0_low=0.2, x0_high=0.1), "x0_high"),
    (lambda: T.sign_schedule_mean_f(1.0, [0.1, 0.0], 1.0, x0_low=0.1, x0_high=0.2), "eta"),
    (lambda: T.sign_schedule_mean_f(1.0, [0.1], 1.0, "both", x0_low=0.1, x0_high=0.2), "noise"),
    (lambda: T.sign_schedule_mean_f(1.0, [0.1], 1.0, x0_low=0.1, x0_high=0.2, cells=7), "cells"),
    (lambda: T.sign_schedule_mean_f(1.0, [0.1], 0.0, "additive", x0_low=0.1, x0_high=0.2), "sigma"),
    (lambda: T.c_mid_sym(0.0), "e"),
    (lambda: T.second_moment(0.2, 1e300, 0.3), "eta"), (lambda: T.sgd_contraction(1.0, 1e300, 1.0), "eta"),
    (lambda: T.floor(1.0, 1e300, 1.0), "eta"), (lambda: T.additive_floor(1e300, 0.1, 1.0), "a"),
])
def test_theory_bad_input_names_the_parameter(call, name):
    with pytest.raises((ValueError, TypeError)) as exc:
        call()
    assert name in str(exc.value).split(":")[0], exc.value


@pytest.mark.parametrize("kwargs, name", [
    (dict(eta=0.0), "eta"), (dict(eta=-1.0), "eta"), (dict(sigma=-0.1), "sigma"), (dict(a=0.0), "a"),
    (dict(noise="both"), "noise"), (dict(method="adam"), "method"), (dict(offset=0.2), "offset"),
    (dict(offset=0.1), "offset"), (dict(offset=-0.01), "offset"), (dict(offset="left"), "offset"),
    (dict(law="cauchy"), "law"), (dict(law="student", df=0), "df"), (dict(eta=NAN), "eta"), (dict(sigma=NAN), "sigma"),
    (dict(offset=NAN), "offset"), (dict(a=math.inf), "a"),
])
def test_floor_bad_arguments(kwargs, name):
    args = dict(a=1.0, eta=0.1, sigma=1.0) | kwargs
    with pytest.raises(ValueError, match=name):
        T.floor(**args)


def test_floor_type_errors():
    with pytest.raises(TypeError, match="eta"):
        T.floor(1.0, "0.1", 1.0)
    with pytest.raises(TypeError, match="n"):
        T.ladder_pmf(0.2, np.array([0.5]))


# ----------------------------------------------------------------------------- simulators
# Compilation dominates these tests, so they share a few static setups: SMALL (T = 12, 3 records,
# chunks of 8, d = 2) and the claims' own setup (T = 1500, 30 records, chunks of 1024, d = 1).
SMALL = dict(T=12, n_rec=3, chunk_size=8)
CLAIMS = dict(T=1500, n_rec=30, chunk_size=1024)
X2 = np.array([0.4, -0.1])
H2 = np.array([1.0, 3.0])


def test_noiseless_sgd_steps_are_gradient_steps():
    out = S.simulate(jax.random.key(3), eta=0.05, x0=X2, h=H2, method="sgd", n_chains=1, **SMALL)
    x = jnp.asarray(X2)
    grad = jax.grad(lambda y: 0.5 * jnp.sum(jnp.asarray(H2) * y * y))
    for _ in range(4):  # the first record is after T / n_rec = 4 steps
        x = x - 0.05 * grad(x)
    assert math.isclose(float(out["curve"][0, 0, 0]), float(0.5 * jnp.sum(jnp.asarray(H2) * x * x)), rel_tol=1e-13)
    assert not out["diverged"].any() and np.all(out["diverged_step"] == -1)


def test_configurations_are_grouped_and_scattered_back():
    """Mixed methods run in one call (one kernel per method) equal each configuration run alone (paired keys)."""
    args = dict(x0=X2, h=H2, sigma_m=0.3, cooldown=0.5, n_chains=2, paired=True, **SMALL)
    mixed = S.simulate(jax.random.key(7), eta=[0.05, 0.1, 0.02], method=["sgd", "normalized", "sgd"],
                       beta=[0.0, 0.5, 0.9], **args)
    for g, (e, m, b) in enumerate(zip([0.05, 0.1, 0.02], ["sgd", "normalized", "sgd"], [0.0, 0.5, 0.9])):
        alone = S.simulate(jax.random.key(7), eta=e, method=m, beta=b, **args)
        for k in mixed:
            np.testing.assert_array_equal(mixed[k][g], alone[k][0])


def test_results_do_not_depend_on_the_chunk_size():
    args = dict(eta=[0.05, 0.1], x0=X2, h=H2, method="sgd", sigma_m=0.3, T=12, n_rec=3, n_chains=3)
    small, large = (S.simulate(jax.random.key(1), chunk_size=n, **args) for n in (2, 8))
    for k in small:  # equal up to the last bit of SIMD reassociation across batch shapes
        np.testing.assert_allclose(small[k], large[k], rtol=1e-14, atol=0)


def test_paired_chains_see_the_same_noise():
    args = dict(eta=[0.05, 0.05], x0=X2, h=H2, method="sgd", sigma_m=0.3, n_chains=2, **SMALL)
    out = S.simulate(jax.random.key(2), paired=True, **args)
    np.testing.assert_array_equal(out["curve"][0], out["curve"][1])
    out = S.simulate(jax.random.key(2), **args)
    assert not np.array_equal(out["curve"][0], out["curve"][1])


def test_additive_switch_leaves_the_multiplicative_stream_alone():
    """sigma_a -> 0 with the additive kernel tends to the run without additive noise (same multiplicative draws)."""
    args = dict(eta=0.05, x0=X2, h=H2, method="sgd", sigma_m=0.3, n_chains=2, **SMALL)
    off, tiny = (S.simulate(jax.random.key(4), sigma_a=s, **args) for s in (0.0, 1e-12))
    np.testing.assert_allclose(off["curve"], tiny["curve"], rtol=1e-9)


def test_normalized_sgd_is_pathwise_scale_invariant():
    """Same noise, x_0 proportional to eta: x_k/eta is the same chain (to round-off) for every eta and curvature scale."""
    etas = np.array([1e-3, 1e-2, 1e-1])
    lam = np.array([1.0, 4.0, 1.0])
    out = S.simulate(jax.random.key(5), eta=etas, x0=etas[:, None] * X2, h=lam[:, None] * H2, method="normalized",
                     sigma_m=1.0, n_chains=2, paired=True, **SMALL)
    ratio = out["curve"] / (etas**2 * lam)[:, None, None]
    np.testing.assert_allclose(ratio[0], ratio[1], rtol=1e-9)
    np.testing.assert_allclose(ratio[2], ratio[1], rtol=1e-9)


def _replay_flips(key, index, T, sig, law="gaussian", df=0.0):
    """The signs s_k ladder_run and the Bernoulli chains use for run ``index``: one key split per block of
    S.BLOCK steps, the word of step k at counter k mod BLOCK, s = -1 where it is below floor(p 2^32)."""
    key = jax.random.fold_in(key, index)
    thresh = int(np.floor(S.away_probability_host(sig, law, df) * 2.0**32))  # threshold() on the host
    out = []
    for start in range(0, T, S.BLOCK):
        key, sub = jax.random.split(key)
        w = np.asarray(S.words(S.block_seed(sub), np.arange(min(S.BLOCK, T - start))))
        out.append(np.where(w < thresh, -1, 1))
    return np.concatenate(out)


def _replay_ladder(key, index, T, theta, sig, n0=0, burn=0):
    """The ladder walk in NumPy, driven by the signs ladder_run draws for run ``index``."""
    n, path = n0, []
    for s in _replay_flips(key, index, T, sig):
        n -= (1 if n >= 0 else -1) * s
        path.append(n)
    path = np.array(path)
    return path, (path[burn:] + theta) ** 2


def test_ladder_matches_numpy_replay():
    key, theta, sig = jax.random.key(5), 0.3, 1.3
    out = S.ladder(key, sigma=sig, theta=theta, T=12, burn=4, n_chains=2, chunk_size=8)
    for j in range(2):
        path, y2 = _replay_ladder(key, j, 12, theta, sig, burn=4)
        assert out["n"][0, j] == path[-1] and out["n_prev"][0, j] == path[-2]
        assert math.isclose(out["m2"][0, j], y2.mean(), rel_tol=1e-12)
        assert math.isclose(out["m2_even"][0, j], y2[1::2].mean(), rel_tol=1e-12)  # k + 1 = 6, 8, ...


def test_ladder_run_takes_any_integer_start():
    """A Python int n0 (or int32) used to fail inside scan (an int64 carry against a weakly typed int)."""
    data = np.asarray(jax.random.key_data(jax.random.key(0)))
    outs = [S.ladder_run(dict(key_data=data, key_index=0, sigma=1.0, theta=0.5, n0=n0), np.int64(0), T=6)
            for n0 in (3, np.int32(3), np.int64(3))]
    assert len({int(o["n"]) for o in outs}) == 1
    out = S.ladder(jax.random.key(0), sigma=1.0, theta=0.5, T=12, n0=3, chunk_size=8)
    assert abs(int(out["n"][0, 0]) - 3) <= 12 and (int(out["n"][0, 0]) - 3) % 2 == 0


def test_jax_matches_numpy_reference():
    """Cesàro means of the JAX chains against the NumPy reference (independent random numbers): 5 SE.

    Run on the claims' compiled kernels (signSGD and SGD with both noises)."""
    for cfg in (dict(method="sign", beta=0.5, sigma_m=0.5, sigma_a=0.5), dict(method="sgd", sigma_m=0.5, sigma_a=1.0)):
        ref = R.numpy_chains(1, a=1.0, eta=0.05, x0=1.025, T=1500, n_chains=256, burn=300, **cfg)
        out = S.simulate(jax.random.key(1), eta=0.05, x0=np.array([1.025]), burn=300, n_chains=256, **cfg, **CLAIMS)
        (m1, s1), (m2, s2) = S.summarize(ref)[:2], S.summarize(out["mean_f"][0])[:2]
        assert abs(m1 - m2) < 5 * math.hypot(s1, s2), (cfg, m1, m2)


def test_bench_cases_validate_the_scale():
    with pytest.raises(ValueError, match="scale"):
        R.bench_cases("medium")
    chains, digits = R.bench_cases("small")
    assert chains.work == 2048 * 2000 and digits.work == 144 * 100


def test_schedule():
    k = np.arange(100)
    np.testing.assert_allclose(np.asarray(S.schedule(k, 100, 0.1, 0.0)), 0.1)
    wsd = np.asarray(S.schedule(k, 100, 0.1, 0.2))
    assert np.all(wsd[:80] == 0.1) and math.isclose(wsd[99], 0.1 / 20) and np.all(np.diff(wsd[80:]) < 0)
    np.testing.assert_allclose(np.asarray(S.schedule(k, 100, 0.1, 1.0)), 0.1 * (100 - k) / 100)


def test_words_are_uniform_and_uncorrelated():
    """The counter-based words: uniform bytes (chi-square), no lag-1 correlation, seeds of neighbouring blocks
    and chains unrelated, and Bernoulli frequencies at p within their binomial SE."""
    keys = jax.random.split(jax.random.key(9), 64)
    w = np.stack([np.asarray(S.words(S.block_seed(k), np.arange(4096))) for k in keys])  # (64 blocks, 4096)
    u = w / 2.0**32
    n = u.size
    counts = np.bincount((w >> 24).ravel(), minlength=256)  # top byte
    chi2 = np.sum((counts - n / 256) ** 2 / (n / 256))
    assert stats.chi2.sf(chi2, 255) > 1e-4, chi2
    low = np.bincount((w & 255).ravel(), minlength=256)  # bottom byte
    assert stats.chi2.sf(np.sum((low - n / 256) ** 2 / (n / 256)), 255) > 1e-4
    z = (u - 0.5) * math.sqrt(12)
    assert abs(np.mean(z[:, 1:] * z[:, :-1])) < 5 / math.sqrt(n)  # lag 1 within a block
    assert abs(np.mean(z[1:] * z[:-1])) < 5 / math.sqrt(n)  # same counter, neighbouring blocks
    for p in (0.01, 0.1587, 0.4):
        frac = np.mean(w < int(S.threshold(p)))
        assert abs(frac - p) < 5 * math.sqrt(p * (1 - p) / n), (p, frac)


def test_away_probability_matches_theory():
    for law, df in (("gaussian", 0.0), ("student", 1.0), ("student", 1.5), ("student", 7.0), ("uniform", 0.0)):
        for sg in (0.3, 1.0, 2.5):
            want = max(0.0, (1 - 1 / sg) / 2) if law == "uniform" else T.away_probability(sg, law, df or None)
            assert math.isclose(float(S.away_probability(sg, law, df)), want, rel_tol=1e-10, abs_tol=1e-300)
            assert math.isclose(float(S.away_probability_host(sg, law, df)), want, rel_tol=1e-10, abs_tol=1e-300)
    assert float(S.away_probability(0.0, "gaussian", 0.0)) == 0.0


def test_bernoulli_chain_replays_the_flips():
    """signSGD without momentum or additive noise: x_k = x_(k-1) - eta sign(x_(k-1)) s_k with the replayed signs,
    across a block boundary (T = 300 > BLOCK), for a non-integer Student-t df."""
    key, eta, x0 = jax.random.key(6), 0.05, 0.1234
    out = S.simulate(key, eta=eta, x0=np.array([x0]), method="sign", sigma_m=1.3, T=300, n_rec=3, n_chains=2,
                     law="student", df=1.5, chunk_size=8)
    for j in range(2):
        x = x0
        for s in _replay_flips(key, j, 300, 1.3, "student", 1.5):
            x -= eta * np.sign(x) * s
        assert math.isclose(out["final_f"][0, j], 0.5 * x * x, rel_tol=1e-9)


def test_divergence_is_data_and_statistics_skip_it():
    # |1 - eta a| = 4 per step: |x| passes 1e150 near step 250, long before T = 1500
    out = S.simulate(jax.random.key(0), eta=[5.0, 0.1], x0=np.array([1.0]), method="sgd", sigma_m=0.1, n_chains=2,
                     **CLAIMS)
    assert out["diverged"][0].all() and not out["diverged"][1].any()
    steps = out["diverged_step"][0]
    assert np.all((steps > 200) & (steps < 300)) and np.all(out["diverged_step"][1] == -1)
    s = S.summarize(out["mean_f"], out["diverged"])
    assert np.all(s.n_diverged == [2, 0]) and np.all(s.n == [0, 2]) and np.isnan(s.mean[0]) and np.isfinite(s.mean[1])


def test_summarize_counts_diverged_runs():
    x = np.array([[1.0, 2.0, 3.0, np.inf], [1.0, 2.0, 3.0, 4.0]])
    s = S.summarize(x, np.array([[False, False, True, False], [False] * 4]))
    np.testing.assert_allclose(s.mean, [1.5, 2.5])
    np.testing.assert_allclose(s.se, [0.5, np.std([1, 2, 3, 4], ddof=1) / 2])
    assert list(s.n) == [2, 4] and list(s.n_diverged) == [2, 0]
    with pytest.raises(TypeError, match="diverged"):
        S.summarize(x, np.zeros((2, 4)))


@pytest.mark.parametrize("kwargs, name", [
    (dict(eta=0.0), "eta"), (dict(eta=NAN), "eta"), (dict(method="adam"), "method"), (dict(burn=20), "burn"),
    (dict(n_rec=3), "n_rec"), (dict(cooldown=1.5), "cooldown"), (dict(cooldown=NAN), "cooldown"),
    (dict(beta=1.0), "beta"), (dict(beta=NAN), "beta"), (dict(law="cauchy"), "law"),
    (dict(law="student", df=2.5, method="sgd"), "df"), (dict(law="student", df=0.0), "df"),
    (dict(sigma_m=-1.0), "sigma_m"), (dict(sigma_m=NAN), "sigma_m"), (dict(eta=1e149), "eta"),
    (dict(beta2=1.0, method="lion"), "beta2"),
    (dict(sigma_a=NAN), "sigma_a"), (dict(h=-1.0), "h"), (dict(T=0), "T"), (dict(x0=np.array([NAN])), "x0"),
    (dict(eta=[0.1, 0.2], beta=[0.0, 0.1, 0.2]), "eta"),
    (dict(x0=np.zeros((3, 1))), "x0"), (dict(key=0), "key"), (dict(method=None), "method"),
    (dict(paired=1), "paired"), (dict(chunk_size=0), "chunk_size"),
])
def test_simulate_bad_arguments(kwargs, name):
    args = dict(key=jax.random.key(0), eta=0.1, x0=np.array([1.0]), T=20) | kwargs
    with pytest.raises((ValueError, TypeError)) as exc:
        S.simulate(**args)
    assert name in str(exc.value).split(":")[0], exc.value


@pytest.mark.parametrize("kwargs, name", [
    (dict(theta=0.0), "theta"), (dict(theta=NAN), "theta"), (dict(T=21), "T"), (dict(sigma=-1.0), "sigma"),
    (dict(sigma=NAN), "sigma"), (dict(law="x"), "law"), (dict(n0=0.5), "n0"), (dict(key=None), "key"),
])
def test_ladder_bad_arguments(kwargs, name):
    args = dict(key=jax.random.key(0), sigma=1.0, theta=0.5, T=20) | kwargs
    with pytest.raises((ValueError, TypeError)) as exc:
        S.ladder(**args)
    assert name in str(exc.value).split(":")[0], exc.value


# ----------------------------------------------------------------------------- mixed noise, other laws (theory)
def test_mixed_chain_limits_and_balance():
    """Detailed balance of the mixed chain; its floor tends to the additive chain's as sigma_m -> 0 and to
    C_mid a eta^2 as sigma_a -> 0; at the crossover step the two pure floors are equal."""
    x, pi = T.mixed_chain(1.0, 0.01, 1.0, 0.01, 0.005)
    s = np.sqrt((x * 1.0) ** 2 + 0.01**2)
    up, down = special.ndtr(-x / s), special.ndtr(x / s)
    mask = pi[:-1] * up[:-1] > 1e-200
    np.testing.assert_allclose((pi[:-1] * up[:-1])[mask], (pi[1:] * down[1:])[mask], rtol=1e-9)
    assert math.isclose(T.mixed_floor(1.0, 0.01, 1e-3, 0.01), T.floor(1.0, 0.01, 0.01, "additive"), rel_tol=1e-4)
    assert math.isclose(T.mixed_floor(2.0, 0.1, 1.0, 1e-9), T.floor(2.0, 0.1, 1.0), rel_tol=1e-6)
    ex = T.crossover_eta(2.0, 0.7, 0.03)
    assert math.isclose(T.c_mid(0.7) * 2.0 * ex**2, 0.03 * ex * T.phi_add_series(0.0), rel_tol=1e-12)


def test_uniform_additive_floor_against_the_transition_matrix():
    """The recurrent-class detailed-balance law against the stationary vector of the full transition matrix."""
    a, eta, B, c = 1.3, 0.07, 0.5, 0.02
    n = np.arange(-30, 31)
    x = c + n * eta
    up = np.clip((1 - a * x / B) / 2, 0, 1)
    P = np.zeros((len(x), len(x)))
    P[np.arange(len(x) - 1), np.arange(1, len(x))] = up[:-1]
    P[np.arange(1, len(x)), np.arange(len(x) - 1)] = 1 - up[1:]
    P[0, 1], P[-1, -2] = 1.0, 1.0  # the edges are far outside |x| < B/a: certain steps inward
    w, v = np.linalg.eig(P.T)
    pi = np.real(v[:, np.argmin(np.abs(w - 1))])
    pi /= pi.sum()
    assert math.isclose(T.uniform_additive_floor(a, eta, B, offset=c), a / 2 * np.sum(pi * x * x), rel_tol=1e-9)
    assert math.isclose(T.uniform_additive_floor(1.0, 1e-3, 2.0), 1e-3 * 2.0 / 4, rel_tol=1e-9)  # eta B/4
    assert math.isclose(T.contraction(2.0, "uniform"), 0.5) and math.isclose(T.away_probability(2.0, "uniform"), 0.25)


@pytest.mark.parametrize("call, name", [
    (lambda: T.mixed_chain(1.0, 0.01, 0.0, 0.01, 0.0), "sigma_m"), (lambda: T.mixed_chain(1.0, 0.01, 9.0, 0.01, 0.0), "sigma_m"),
    (lambda: T.mixed_floor(1.0, 0.01, 1.0, NAN), "sigma_a"), (lambda: T.mixed_floor(1.0, 0.01, 1.0, 0.1, "left"), "offset"),
    (lambda: T.crossover_eta(0.0, 1.0, 0.1), "a"), (lambda: T.uniform_additive_floor(1.0, 0.1, 0.0), "bound"),
    (lambda: T.uniform_additive_floor(1.0, 1e-9, 1.0), "eta"), (lambda: T.additive_chain(1.0, 0.1, 1.0, 0.0, law="uniform"), "law"),
])
def test_mixed_and_uniform_bad_input(call, name):
    with pytest.raises((ValueError, TypeError)) as exc:
        call()
    assert name in str(exc.value).split(":")[0], exc.value


def test_lion_follows_its_two_momenta():
    """Lion without noise from x0: the update sign(beta m + (1 - beta) g), buffer with beta2, replayed in NumPy."""
    out = S.simulate(jax.random.key(3), eta=0.05, x0=X2, h=H2, method="lion", beta=0.5, beta2=0.9, n_chains=1, **SMALL)
    x, m = X2.copy(), np.zeros(2)
    for _ in range(4):
        g = H2 * x
        x = x - 0.05 * np.sign(0.5 * m + 0.5 * g)
        m = 0.9 * m + 0.1 * g
    assert math.isclose(float(out["curve"][0, 0, 0]), 0.5 * np.sum(H2 * x * x), rel_tol=1e-13)


def test_bernoulli_chain_flags_a_state_beyond_the_bound_at_the_end_of_its_block():
    """The Bernoulli kernel checks its state once per block: a start beyond BOUND is flagged at the first block's end."""
    run = jax.jit(S.chain_run, static_argnames=("T", "n_rec", "law", "df", "impl", "block"))
    point = dict(key_data=np.asarray(jax.random.key_data(jax.random.key(0))), key_index=np.int64(0),
                 x0=np.array([4 * S.BOUND, 0.3]), h=np.array([1.0, 1.0]), eta=0.01, cooldown=0.0, p_away=0.2)
    out = run(point, np.int64(0), T=8, n_rec=2, block=4)
    assert bool(out["diverged"]) and int(out["diverged_step"]) == 4
    out = run(point | {"x0": np.array([0.3, 0.3])}, np.int64(0), T=8, n_rec=2, block=4)
    assert not bool(out["diverged"]) and int(out["diverged_step"]) == -1


# ----------------------------------------------------------------------------- SGD-mult log-moments (cooldown at scale)
def _log_step_series(c, sigma):
    r"""Through :math:`c^4`: :math:`2\log(1-u) = -2\sum_n u^n/n`, :math:`u = c(1+\sigma\xi)`, with the Gaussian
    moments :math:`E(1+\sigma\xi)^n = 1, 1+\sigma^2, 1+3\sigma^2, 1+6\sigma^2+3\sigma^4` (n = 1..4)."""
    s2 = sigma**2
    return -2 * c - (1 + s2) * c**2 - 2 / 3 * (1 + 3 * s2) * c**3 - 0.5 * (1 + 6 * s2 + 3 * s2**2) * c**4


@pytest.mark.parametrize("sigma", [0.5, 1.0, 2.0])
@pytest.mark.parametrize("c", [1e-3, 1e-2])
def test_sgd_mult_log_step_small_c_series(c, sigma):
    """The quadrature against the small-c expansion; the tolerance is twice the c^5 term, -2 E u^5/5 with
    E(1+sigma xi)^5 = 1 + 10 sigma^2 + 15 sigma^4 (the singularity's weight, Phi(-1/(c sigma)), is far below)."""
    tail = 2 * 0.4 * (1 + 10 * sigma**2 + 15 * sigma**4) * c**5
    assert abs(T.sgd_mult_log_step(c, sigma) - _log_step_series(c, sigma)) <= tail + 1e-15


@pytest.mark.parametrize("c,sigma", [(0.5, 1.0), (0.9, 0.5), (1.5, 1.0)])
def test_sgd_mult_log_step_against_monte_carlo(c, sigma):
    """Where the log singularity sits inside the Gaussian's bulk (xi* = (1-c)/(c sigma) = 1, 0.22, -0.33): the
    quadrature against a Monte Carlo mean of 2e6 draws, 5 SE (the log singularity is integrable, variance finite)."""
    xi = np.random.default_rng(7).standard_normal(2_000_000)
    v = np.log((1 - c * (1 + sigma * xi)) ** 2)
    assert abs(T.sgd_mult_log_step(c, sigma) - v.mean()) <= 5 * v.std() / math.sqrt(v.size)


def test_sgd_mult_log_step_limits():
    """sigma = 0: log (1-c)^2 exactly; c = 0: 0."""
    assert math.isclose(T.sgd_mult_log_step(0.3, 0.0), 2 * math.log(0.7), rel_tol=1e-15)
    assert T.sgd_mult_log_step(0.0, 1.0) == 0.0


def test_sgd_mult_log_f_sums_steps_and_sits_below_the_log_mean():
    """E log f_k is log f_0 plus the cumulative one-step log-moments; by Jensen it lies below log E f_k, which is
    the second-moment recursion (:func:`theory.nqm.moment_recursion`) in logs (their gap per step is
    log(1 - 2c + c^2(1 + sigma^2)) - g(c) = 2 c^2 sigma^2 + O(c^3))."""
    eta = np.array([0.02, 0.02, 0.01, 0.0])
    elog = T.sgd_mult_log_f(2.0, eta, 1.0, log_f0=1.5)
    steps = [T.sgd_mult_log_step(2.0 * e, 1.0) for e in eta]
    np.testing.assert_allclose(elog, 1.5 + np.concatenate([[0.0], np.cumsum(steps)]), rtol=0, atol=1e-14)
    logm = T.sgd_mult_log_mean_f(2.0, eta, 1.0, log_f0=1.5)
    np.testing.assert_allclose(np.exp(logm - 1.5), N.moment_recursion([2.0], eta, 1.0, 0.0, 1.0)[:, 0], rtol=1e-13)
    assert np.all(logm[1:] > elog[1:]) and logm[0] == elog[0]
