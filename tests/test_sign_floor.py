"""Unit tests of theory/sign_floor.py and sims/sign_floor.py (the claims run in test_claims.py)."""
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import sympy as sp
from scipy import special, stats

from sims import sign_floor as S
from theory import sign_floor as T

p, eta, c, a, sigma = T.p_sym, T.eta_sym, T.c_sym, T.a_sym, T.sigma_sym


# ----------------------------------------------------------------------------- theory, exact
def test_second_moment_closed_form():
    note = (c**2 + (eta - c) ** 2) / 2 + 2 * eta**2 * p * (1 - p) / (1 - 2 * p) ** 2
    assert sp.simplify(T.second_moment_sym() - note) == 0


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
    for prob in (0.05, 0.2, 0.4):
        n = np.arange(-400, 400)
        pi = T.ladder_pmf(prob, n)
        assert abs(pi.sum() - 1) < 1e-12
        # detailed balance across each edge n <-> n+1 on the positive ladder, and at the 0 | -1 edge
        assert np.allclose(pi[400:-1] * prob, pi[401:] * (1 - prob), rtol=1e-12, atol=0)
        assert np.allclose(pi[:399] * (1 - prob), pi[1:400] * prob, rtol=1e-12, atol=0)
        assert math.isclose(pi[399], pi[400], rel_tol=1e-14)


def test_limits():
    lim = T.c_limits()
    s = sp.Symbol("sigma", positive=True)
    assert lim["mid0"] == sp.Rational(1, 8) and lim["unif0"] == sp.Rational(1, 6)
    assert sp.simplify(lim["mid_inf"] - (sp.pi * s**2 / 8 + sp.pi / 24 - sp.Rational(1, 8))) == 0


def test_sgd_threshold_and_optimum():
    eta_max, eta_star = T.sgd_threshold()
    assert sp.simplify(eta_max - 2 / (a * (1 + sigma**2))) == 0
    assert sp.simplify(eta_star - 1 / (a * (1 + sigma**2))) == 0


def test_sgd_contraction_matches_autodiff():
    """d/dx E[x_{k+1}^2] = 2 rho x, with E taken exactly over Rademacher noise (mean 0, variance 1)."""
    rho = T.sgd_contraction_sym()
    rng = np.random.default_rng(0)
    for _ in range(5):
        av, ev, sv, x = rng.uniform(0.2, 2.0, 4)

        def mean_square(x):
            xi = jnp.array([-1.0, 1.0])
            return jnp.mean((x - ev * av * x * (1 + sv * xi)) ** 2)

        grad = float(jax.grad(mean_square)(x))
        assert math.isclose(grad, 2 * x * float(rho.subs({a: av, eta: ev, sigma: sv})), rel_tol=1e-12)


def test_additive_small_kappa_expansion_derived():
    kappa = sp.Symbol("kappa", positive=True)
    expected = sp.sqrt(2 * sp.pi) / 8 + sp.pi / 32 * kappa
    assert sp.simplify(T.phi_add_expansion_sym() - expected) == 0


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
    # the mass at the truncation edges is negligible
    assert pi[0] < 1e-30 and pi[-1] < 1e-30
    # Student-t chain: doubling the truncation width changes nothing
    f1 = T.floor(1.0, 0.01, 1.0, "additive", law="student", df=3)
    xs, ps = T.additive_chain(1.0, 0.01, 1.0, 0.005, law="student", df=3, width=80)
    assert math.isclose(f1, 0.5 * np.sum(ps * xs**2), rel_tol=1e-10)


def test_floor_api_values():
    e1 = math.erf(1 / math.sqrt(2))
    assert math.isclose(T.floor(2.0, 0.1, 1.0), 2.0 * 0.01 * (1 / (4 * e1**2) - 1 / 8), rel_tol=1e-12)
    assert math.isclose(T.floor(2.0, 0.1, 1.0, offset="uniform"), 2.0 * 0.01 * T.c_unif(1.0), rel_tol=1e-12)
    assert math.isclose(T.floor(1.0, 0.1, 1.0, offset=0.05), T.floor(1.0, 0.1, 1.0), rel_tol=1e-12)
    assert T.floor(1.0, 0.1, 1.0, offset=0.0) == 0.0
    assert T.floor(1.0, 0.1, 1.0, method="sgd") == 0.0
    assert T.floor(1.0, 1.0, 1.0, method="sgd") == math.inf  # eta a (1 + sigma^2) = 2
    assert math.isclose(T.floor(1.0, 0.1, 2.0, "additive", "sgd"), 0.1 * 4 / (2 * 1.9), rel_tol=1e-12)
    t_p = stats.t.cdf(-1.0, 2)
    assert math.isclose(T.away_probability(1.0, "student", 2), t_p, rel_tol=1e-12)
    add = T.floor(1.0, 1e-3, 1.0, "additive")
    assert abs(add / 1e-3 - float(sp.N(T.phi_add_series(1e-3)))) < 1e-5


@pytest.mark.parametrize("kwargs, name", [
    (dict(eta=0.0), "eta"), (dict(eta=-1.0), "eta"), (dict(sigma=-0.1), "sigma"), (dict(a=0.0), "a"),
    (dict(noise="both"), "noise"), (dict(method="adam"), "method"), (dict(offset=0.2), "offset"),
    (dict(offset=0.1), "offset"), (dict(offset=-0.01), "offset"), (dict(offset="left"), "offset"),
    (dict(law="cauchy"), "law"), (dict(law="student", df=0), "df"), (dict(eta=float("nan")), "eta"),
])
def test_floor_bad_arguments(kwargs, name):
    args = dict(a=1.0, eta=0.1, sigma=1.0) | kwargs
    with pytest.raises(ValueError, match=name):
        T.floor(**args)


def test_floor_type_errors():
    with pytest.raises(TypeError, match="eta"):
        T.floor(1.0, "0.1", 1.0)
    with pytest.raises(ValueError, match="p"):
        T.second_moment(0.5, 1.0, 0.5)


# ----------------------------------------------------------------------------- simulators
def _point(**over):
    pt = dict(key=jax.random.key(3), x0=jnp.array([0.3, -0.2]), h=jnp.array([1.0, 3.0]), eta=0.05, cooldown=0.0,
              method=1, beta=0.0, sigma_m=0.5, sigma_a=0.2, burn=2)
    pt.update(over)
    return pt


# one jitted single-chain runner shared by several tests (a single compilation)
_single = jax.jit(lambda q: S.chain_run(q, T=12, n_rec=3, law="gaussian"))


def test_noiseless_sgd_steps_are_gradient_steps():
    pt = _point(method=0, sigma_m=0.0, sigma_a=0.0)
    out = _single(pt)
    h, x = pt["h"], pt["x0"]
    grad = jax.grad(lambda y: 0.5 * jnp.sum(h * y * y))
    for _ in range(4):  # the first record is after T / n_rec = 4 steps
        x = x - pt["eta"] * grad(x)
    assert math.isclose(float(out["curve"][0]), float(0.5 * jnp.sum(h * x * x)), rel_tol=1e-13)


def test_jit_equals_eager():
    pt = _point(method=2, beta=0.5)  # normalized direction with momentum: the most involved branch
    eager = S.chain_run(pt, T=12, n_rec=3, law="gaussian")
    jitted = _single(pt)
    for k in eager:
        np.testing.assert_allclose(np.asarray(eager[k]), np.asarray(jitted[k]), rtol=1e-12)


def test_simulate_equals_loop():
    key = jax.random.key(7)
    etas, methods = [0.05, 0.1, 0.02], ["sgd", "sign", "normalized"]
    out = S.simulate(key, eta=etas, x0=np.array([0.4, -0.1]), h=np.array([1.0, 2.0]), method=methods,
                     sigma_m=0.3, sigma_a=0.1, cooldown=0.5, T=12, n_rec=3, burn=4, n_chains=2, chunk_size=8)
    keys = jax.random.split(key, 6)
    for g in range(3):
        for j in range(2):
            pt = dict(key=keys[2 * g + j], x0=jnp.array([0.4, -0.1]), h=jnp.array([1.0, 2.0]), eta=etas[g],
                      cooldown=0.5, method=S.METHOD_IDS[methods[g]], beta=0.0, sigma_m=0.3, sigma_a=0.1, burn=4)
            ref = _single(pt)  # one run at a time, no vmap
            np.testing.assert_allclose(out["curve"][g, j], np.asarray(ref["curve"]), rtol=1e-12)
            np.testing.assert_allclose(out["mean_f"][g, j], float(ref["mean_f"]), rtol=1e-12)


def test_ladder_matches_numpy_reference():
    """The integer ladder against a NumPy walk driven by the same Gaussian draws."""
    key, steps, theta, sig = jax.random.key(5), 40, 0.3, 1.3
    pt = dict(key=key, n0=jnp.int32(0), theta=theta, sigma=sig, burn=jnp.int32(10))
    out = S.ladder_run(pt, T=steps, law="gaussian")
    draws, k = [], key
    for _ in range(steps):  # replay the key chain of ladder_run
        k, sub = jax.random.split(k)
        draws.append(float(jax.random.normal(sub, ())))
    n, path = 0, []
    for z in draws:
        n -= (1 if n >= 0 else -1) * (1 if 1 + sig * z > 0 else -1)
        path.append(n)
    path = np.array(path)
    y2 = (path[10:] + theta) ** 2
    assert int(out["n"]) == path[-1] and int(out["n_prev"]) == path[-2]
    assert math.isclose(float(out["acc"]), y2.sum(), rel_tol=1e-12)
    assert math.isclose(float(out["acc_even"]), y2[1::2].sum(), rel_tol=1e-12)  # k + 1 = 12, 14, ...


def test_jax_vs_numpy_statistics():
    cfg = dict(a=1.0, eta=0.05, sigma_m=1.0, sigma_a=0.0, x0=1.025)
    # T = 1500, n_rec = 30: the claims' kernel, already compiled when the suite runs together
    ref = S.numpy_sign_chains(1, T=1500, n_chains=512, burn=100, **cfg)
    out = S.simulate(jax.random.key(1), eta=0.05, x0=np.array([1.025]), method="sign", sigma_m=1.0,
                     T=1500, n_rec=30, burn=100, n_chains=512)
    (m1, s1), (m2, s2) = S.summarize(ref), S.summarize(out["mean_f"][0])
    assert abs(m1 - m2) < 5 * math.hypot(s1, s2)  # independent RNGs: 5 SE


def test_schedule():
    k = np.arange(100)
    np.testing.assert_allclose(np.asarray(S.schedule(k, 100, 0.1, 0.0)), 0.1)
    wsd = np.asarray(S.schedule(k, 100, 0.1, 0.2))
    assert np.all(wsd[:80] == 0.1) and math.isclose(wsd[99], 0.1 / 20) and np.all(np.diff(wsd[80:]) < 0)
    np.testing.assert_allclose(np.asarray(S.schedule(k, 100, 0.1, 1.0)), 0.1 * (100 - k) / 100)


@pytest.mark.parametrize("df", [1, 2, 3])
def test_student_noise_tail(df):
    """Each sampler path (Cauchy and t_2 quantiles, chi-square mixture) against scipy's CDF."""
    z = np.asarray(S._noise(jax.random.key(2), (200_000,), "student", df))
    for q in (-3.0, -1.0, 0.5):
        frac, pt = np.mean(z < q), stats.t.cdf(q, df)
        assert abs(frac - pt) < 5 * math.sqrt(pt * (1 - pt) / z.size)


def test_divergence_is_data():
    # |1 - eta a| = 4 per step: the state overflows to inf/NaN long before T = 1500
    out = S.simulate(jax.random.key(0), eta=[5.0, 0.1], x0=np.array([1.0]), method="sgd", sigma_m=0.1,
                     T=1500, n_rec=30, n_chains=2)
    assert out["diverged"][0].all() and not out["diverged"][1].any()


@pytest.mark.parametrize("kwargs, name", [
    (dict(eta=0.0), "eta"), (dict(method="adam"), "method"), (dict(burn=20), "burn"), (dict(n_rec=3), "n_rec"),
    (dict(cooldown=1.5), "cooldown"), (dict(beta=1.0), "beta"), (dict(law="cauchy"), "law"),
    (dict(law="student", df=2.5), "df"), (dict(sigma_m=-1.0), "sigma"), (dict(h=-1.0), "h"),
    (dict(T=0), "T"), (dict(T=10**6, n_rec=1, n_chains=1024), "n_rec"), (dict(eta=[0.1, 0.2], beta=[0.0, 0.1, 0.2]), "length"), (dict(x0=np.zeros((3, 1))), "x0"),
])
def test_simulate_bad_arguments(kwargs, name):
    args = dict(eta=0.1, x0=np.array([1.0]), T=20) | kwargs
    with pytest.raises(ValueError, match=name):
        S.simulate(jax.random.key(0), **args)


@pytest.mark.parametrize("kwargs, name", [
    (dict(theta=0.0), "theta"), (dict(T=21), "T"), (dict(sigma=-1.0), "sigma"), (dict(law="x"), "law"),
])
def test_ladder_bad_arguments(kwargs, name):
    args = dict(sigma=1.0, theta=0.5, T=20) | kwargs
    with pytest.raises(ValueError, match=name):
        S.ladder(jax.random.key(0), **args)
