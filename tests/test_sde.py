"""Unit tests of theory/sde.py and sims/sde.py (topic ``sde``)."""
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import sympy as sp

from sims import sde as S
from theory import sde as T

X, Y = sp.symbols("x y", real=True)
ETA = T.ETA
LAM = sp.Symbol("lambda", positive=True)


# ----------------------------------------------------------------------------- sympy, exact

def test_second_order_drift_is_gradient_flow_of_modified_loss():
    f = X**4 / 4 + sp.cosh(Y) * X**2
    g, H = T.gradient(f, [X, Y]), T.hessian(f, [X, Y])
    assert sp.simplify(T.drift(f, [X, Y], "second_order") - (-g - ETA / 2 * H * g)) == sp.zeros(2, 1)
    assert sp.simplify(T.drift(f, [X, Y], "corrected") - (-g + ETA / 2 * H * g)) == sp.zeros(2, 1)
    assert T.drift(f, [X, Y], "first_order") == -g


def test_corrected_drift_matches_one_step_taylor_quotient_and_classic_does_not():
    f = X**4 / 4 + X**2 * Y**2 / 2 + sp.exp(Y)
    tq = T.taylor_quotient(f, [X, Y])
    assert sp.simplify(T.energy_rate(f, [X, Y], "corrected") - tq) == 0
    assert sp.simplify(T.energy_rate(f, [X, Y], "second_order") - tq) != 0


def test_quadratic_rates_and_thresholds_exact():
    assert sp.simplify(T.quadratic_log_rate("first_order") + 2 * LAM) == 0
    assert sp.simplify(T.quadratic_log_rate("second_order") - (-2 * LAM - ETA * LAM**2)) == 0
    assert sp.simplify(T.quadratic_log_rate("corrected") - (-2 * LAM + ETA * LAM**2)) == 0
    assert sp.simplify(T.quadratic_threshold("gd") - 2 / LAM) == 0
    assert sp.simplify(T.quadratic_threshold("corrected") - 2 / LAM) == 0
    assert T.quadratic_threshold("first_order") is None and T.quadratic_threshold("second_order") is None


def test_quartic_and_cosh_critical_steps():
    th = T.quartic_thresholds()
    assert th["gd"] == 2 and th["corrected"] == sp.Rational(2, 3)
    assert th["first_order"] is None and th["second_order"] is None
    assert sp.simplify(T.critical_step(T.toy_function("cosh2"), "corrected") - 1 / sp.cosh(T._X)) == 0
    x0 = T.escape_threshold_x("cosh2", "corrected", 0.1)
    assert math.isclose(x0, math.acosh(10.0), rel_tol=1e-12)


def test_l0_for_l1_exact():
    L1 = sp.Symbol("L1", positive=True)
    assert sp.simplify(T.l0_for_l1(T.toy_function("quartic"), L1) - 4 / L1**2) == 0
    assert T.l0_for_l1(T.toy_function("cosh2"), 1) == 2
    assert T.l0_for_l1(T.toy_function("logcosh"), 0) == 1
    assert math.isclose(T.sufficient_step(1.0, 2.0, 3.0), 2 / 7)


def test_dcsgd_factor_symbolic_matches_closed_form_and_numeric():
    factor, thr, (eta, a, n, om, s1) = T.dcsgd_ms_factor_symbolic()
    closed = (1 - eta * a) ** 2 + eta**2 * a**2 * (om + s1**2 * (1 + om)) / n
    assert sp.simplify(factor - closed) == 0
    assert sp.simplify(thr - 2 / (a * (1 + (om + s1**2 * (1 + om)) / n))) == 0
    rng = np.random.default_rng(0)
    for _ in range(5):
        v = dict(zip((a, n, om, s1), (rng.uniform(0.1, 3), int(rng.integers(1, 9)), rng.uniform(0, 5), rng.uniform(0, 2))))
        assert math.isclose(float(thr.subs(v)), T.dcsgd_threshold(v[a], v[n], v[om], v[s1]), rel_tol=1e-12)
        e = float(thr.subs(v))
        assert math.isclose(T.dcsgd_ms_factor(e, v[a], v[n], v[om], v[s1]), 1.0, rel_tol=1e-12)
    # agent-specific omegas average their per-agent variances
    assert math.isclose(T.dcsgd_threshold(1.0, 2, [0.0, 2.0], 0.0), 2 / (1 + 1.0 / 2))


def test_mean_sign_symbolic_equals_closed_forms():
    u = sp.Symbol("u", real=True)
    assert sp.simplify(T.mean_sign_symbolic("gaussian") - sp.erf(u / sp.sqrt(2))) == 0
    assert sp.simplify(T.mean_sign_symbolic("cauchy") - 2 / sp.pi * sp.atan(u)) == 0
    assert sp.simplify(T.mean_sign_symbolic("student_t", 2) - u / sp.sqrt(u**2 + 2)) == 0
    for law, nu, expr in (("gaussian", None, sp.erf(u / sp.sqrt(2))), ("cauchy", None, 2 / sp.pi * sp.atan(u)),
                          ("student_t", 2, u / sp.sqrt(u**2 + 2))):
        for val in (-2.5, 0.3, 1.7):
            assert math.isclose(T.mean_sign(val, 1.0, law, nu=nu), float(expr.subs(u, val)), rel_tol=1e-12)
        slope = float(sp.diff(expr, u).subs(u, 0))
        assert math.isclose(T.mean_sign_slope_at_zero(1.0, law, nu=nu), slope, rel_tol=1e-12)
    assert math.isclose(T.sign_variance(0.5, 1.0, "cauchy", n_agents=4), (1 - (2 / np.pi * np.arctan(0.5)) ** 2) / 4)


# ----------------------------------------------------------------------------- sympy vs JAX autodiff

@pytest.mark.parametrize("name", ["quadratic", "quartic", "cosh2", "logcosh"])
def test_jax_drifts_match_sympy(name):
    f = T.toy_function(name, lam=sp.Rational(3, 2))
    rng = np.random.default_rng(1)
    # The toy losses are sums over coordinates, so a vector of random points is evaluated in one call.
    x, eta = rng.uniform(-2, 2, 5), 0.37
    for kind in T.DRIFT_KINDS:
        b = sp.lambdify((T._X, ETA), T.drift(f, [T._X], kind)[0], "numpy")
        got = np.asarray(S.drift(name, kind, jnp.asarray(x), eta, 1.5))
        np.testing.assert_allclose(got, b(x, eta) * np.ones_like(x), rtol=1e-11, atol=1e-13)
    fpp = sp.lambdify(T._X, sp.diff(f, T._X, 2), "numpy")
    h = jax.hessian(lambda y: S.loss_fn(name)(y, 1.5))(jnp.asarray(x))
    np.testing.assert_allclose(np.diag(np.asarray(h)), fpp(x) * np.ones_like(x), rtol=1e-11)


# ----------------------------------------------------------------------------- simulators

def _cfg(**kw):
    base = dict(problem="quartic", algo="dcsgd", n_agents=3, compressor="bernoulli", noise="gaussian", n_steps=20, n_record=4)
    base.update(kw)
    return S.Config(**base)


# One jitted simulator shared by the tests: the static Config picks the compilation, so tests that
# use the same Config reuse it.
_SIM = jax.jit(S.simulate, static_argnames=("cfg",))
_GD = dict(algo="dsgd", noise="none", n_agents=1, n_steps=20, n_record=20)


def _params(**kw):
    """Every traced parameter as a float64 array, so calls share one trace per Config."""
    base = dict(omega=0.0, sigma1=0.0, L0=1.0, L1=1.0, normalized=0.0)
    base.update(kw)
    return {k: jnp.asarray(v, jnp.float64) for k, v in base.items()}


def test_jit_equals_eager_and_run_grid_equals_loop():
    cfg = _cfg()
    keys = jax.random.split(jax.random.key(5), 3)
    x0 = jnp.array([[1.0], [1.5], [0.5]])
    eta = jnp.array([0.1, 0.05, 0.2])
    om = jnp.array([0.0, 1.0, 3.0])
    grid = {"key": keys, "x0": x0, "eta": eta, "omega": om, "sigma1": jnp.full(3, 0.5)}
    batched = S.paths(cfg, grid)
    for i in range(3):
        one = _SIM(keys[i], x0[i], eta[i], cfg=cfg, **_params(omega=om[i], sigma1=0.5))
        np.testing.assert_allclose(batched["loss"][i], np.asarray(one["loss"]), rtol=1e-12)
    # eager vs jit on one update direction (the simulator's per-step kernel)
    g = jnp.array([0.7, -1.2])
    k = jax.random.key(9)
    eager = S.direction(k, cfg, g, om, 0.1, 0.5)
    jitted = jax.jit(S.direction, static_argnums=1)(k, cfg, g, om, 0.1, 0.5)
    np.testing.assert_allclose(np.asarray(eager), np.asarray(jitted), rtol=1e-12)


def test_noise_free_dsgd_equals_numpy_gd_and_normalized_flag_equals_algo():
    r = _SIM(jax.random.key(0), jnp.array([1.2]), 0.1, cfg=_cfg(**_GD))
    x, ref = 1.2, []
    for _ in range(20):
        x = x - 0.1 * x**3
        ref.append(x**4 / 4)
    np.testing.assert_allclose(np.asarray(r["loss"]), ref, rtol=1e-13)
    k, one = jax.random.key(3), jnp.asarray(1.0)
    a = _SIM(k, jnp.array([2.0]), one, cfg=_cfg(algo="dcsgd_normalized"), **_params(omega=1.0, sigma1=1.0, L1=2.0))
    b = _SIM(k, jnp.array([2.0]), one, cfg=_cfg(), **_params(omega=1.0, sigma1=1.0, L1=2.0, normalized=1.0))
    np.testing.assert_array_equal(np.asarray(a["loss"]), np.asarray(b["loss"]))


def test_divergence_is_data():
    r = _SIM(jax.random.key(0), jnp.array([30.0]), 0.1, cfg=_cfg(**_GD))  # eta x0^2 = 90 > 2
    assert bool(r["diverged"]) and 0 < int(r["diverged_at"]) <= 20 and np.all(np.isfinite(np.asarray(r["loss"])))


@pytest.mark.parametrize("kind,omega", [("bernoulli", 1.5), ("rand_k", 3.0)])
def test_compressors_unbiased_with_variance_omega(kind, omega):
    d, n = 8, 40000
    v = jnp.arange(1.0, d + 1)
    out = jax.vmap(lambda k: S.compress(k, kind, v[None], jnp.array([omega]))[0])(jax.random.split(jax.random.key(2), n))
    out = np.asarray(out)
    # Monte Carlo: mean within 5 SE per coordinate; E||C(v)-v||^2 within 5 SE of omega ||v||^2.
    se = out.std(axis=0) / math.sqrt(n)
    assert np.all(np.abs(out.mean(axis=0) - np.asarray(v)) < 5 * se)
    sq = ((out - np.asarray(v)) ** 2).sum(axis=1)
    assert abs(sq.mean() - omega * float(v @ v)) < 5 * sq.std() / math.sqrt(n)


@pytest.mark.slow
def test_student_t_and_cauchy_noise_laws_match_scipy():
    from scipy import stats
    g = jnp.zeros(1)
    for kind, dist in (("student_t", stats.t(3)), ("cauchy", stats.cauchy())):
        z = np.asarray(S.sample_noise(jax.random.key(4), kind, g, 1.0, 0.0, 5000, 3.0)).ravel()
        assert stats.kstest(z, dist.cdf).pvalue > 1e-3


def _corrected_quartic_path(eta=0.1, x0=1.3, dt=0.01, n=200):
    return S.sde_path(jax.random.key(0), jnp.array([x0]), eta, problem="quartic", kind="corrected", dt=dt, n_steps=n)


def test_heun_ode_matches_numpy():
    eta, x0, dt, n = 0.1, 1.3, 0.01, 200
    r = _corrected_quartic_path(eta, x0, dt, n)
    x = x0
    for _ in range(n):
        b = lambda y: -y**3 + 1.5 * eta * y**5  # noqa: E731  (corrected drift of x^4/4, by hand)
        x = x + 0.5 * (b(x) + b(x + dt * b(x))) * dt
    assert math.isclose(float(r["x"][0]), x, rel_tol=1e-12)


@pytest.mark.slow
def test_heun_ode_matches_diffrax():
    import diffrax
    eta, x0, dt, n = 0.1, 1.3, 0.01, 200
    r = _corrected_quartic_path(eta, x0, dt, n)
    term = diffrax.ODETerm(lambda t, y, args: -y**3 + 1.5 * eta * y**5)
    sol = diffrax.diffeqsolve(term, diffrax.Heun(), t0=0.0, t1=n * dt, dt0=dt, y0=jnp.array([x0]),
                              stepsize_controller=diffrax.ConstantStepSize())
    np.testing.assert_allclose(np.asarray(r["x"]), np.asarray(sol.ys[-1]), rtol=1e-10)


def test_coupled_weak_paths_noise_free_is_gd_and_masks_steps():
    r = S.coupled_weak_paths(jax.random.key(0), jnp.array([1.0]), 0.25, problem="quartic", T=1.0, max_steps=10, substeps=2)
    x = 1.0
    for _ in range(4):
        x = x - 0.25 * x**3
    assert math.isclose(float(r["x"][0]), x, rel_tol=1e-13) and int(r["n_steps"]) == 4


def test_mean_sign_mc_close_to_closed_form():
    m = S.mean_sign_mc(jax.random.key(1), jnp.array([0.5]), 1.0, "cauchy", 40000)
    exact = T.mean_sign(0.5, 1.0, "cauchy")
    assert abs(float(m["mean"][0]) - exact) < 5 * math.sqrt((1 - exact**2) / 40000)


def test_bench_case_runs_small():
    (case,) = S.bench_cases("small")
    assert case.unit and case.work > 0


# ----------------------------------------------------------------------------- bad inputs

@pytest.mark.parametrize("call,exc,word", [
    (lambda: T.dcsgd_threshold(0.0, 4, 1.0, 0.5), ValueError, "a"),
    (lambda: T.dcsgd_threshold(1.0, 0, 1.0, 0.5), ValueError, "n_agents"),
    (lambda: T.dcsgd_threshold(1.0, 2.5, 1.0, 0.5), TypeError, "n_agents"),
    (lambda: T.dcsgd_threshold(1.0, True, 1.0, 0.5), TypeError, "n_agents"),
    (lambda: T.dcsgd_threshold(1.0, 4, -1.0, 0.5), ValueError, "omega"),
    (lambda: T.dcsgd_threshold(1.0, 4, [1.0, 2.0], 0.5), ValueError, "omega"),
    (lambda: T.dcsgd_threshold(1.0, 4, "big", 0.5), TypeError, "omega"),
    (lambda: T.dcsgd_threshold(1.0, 4, 1.0, -0.1), ValueError, "sigma1"),
    (lambda: T.dcsgd_threshold("1", 4, 1.0, 0.1), TypeError, "a"),
    (lambda: T.mean_sign(1.0, 1.0, "laplace"), ValueError, "noise"),
    (lambda: T.mean_sign(1.0, 1.0, "student_t"), ValueError, "nu"),
    (lambda: T.mean_sign(1.0, 1.0, "gaussian", nu=3), ValueError, "nu"),
    (lambda: T.mean_sign(1.0, 0.0), ValueError, "scale"),
    (lambda: T.mean_sign(float("nan"), 1.0), ValueError, "grad"),
    (lambda: T.mean_sign("x", 1.0), TypeError, "grad"),
    (lambda: T.normalized_step(2.0, 1.0, 1.0, 1.0, 4, 1.0, 0.5), ValueError, "c"),
    (lambda: T.drift(X**2, [X], "third_order"), ValueError, "kind"),
    (lambda: T.gradient("x**2", [X]), TypeError, "f"),
    (lambda: T.gradient(X**2, ["x"]), TypeError, "variables"),
    (lambda: T.gradient(X**2, []), ValueError, "variables"),
    (lambda: S.Config(problem="sphere"), ValueError, "problem"),
    (lambda: S.Config(algo="adam"), ValueError, "algo"),
    (lambda: S.Config(n_agents=0), ValueError, "n_agents"),
    (lambda: S.Config(noise="laplace"), ValueError, "noise"),
    (lambda: S.Config(compressor="top_k"), ValueError, "compressor"),
    (lambda: S.Config(schedule="cosine"), ValueError, "schedule"),
    (lambda: S.Config(n_steps=10, n_record=3), ValueError, "n_record"),
    (lambda: S.paths(S.Config(), {"key": jax.random.split(jax.random.key(0), 2), "x0": jnp.ones((2, 1))}), ValueError, "eta"),
    (lambda: S.paths(S.Config(), {"key": jax.random.split(jax.random.key(0), 2), "x0": jnp.ones((2, 1)),
                                  "eta": jnp.array([0.1, -0.1])}), ValueError, "eta"),
    (lambda: S.paths(S.Config(), {"key": jax.random.split(jax.random.key(0), 2), "x0": jnp.ones((2, 1)),
                                  "eta": jnp.ones(2), "gamma": jnp.ones(2)}), ValueError, "gamma"),
    (lambda: S.paths("cfg", {}), TypeError, "cfg"),
    (lambda: S.drift("quartic", "fourth", jnp.ones(1), 0.1), ValueError, "kind"),
    (lambda: S.sde_path(jax.random.key(0), jnp.ones(1), 0.1, problem="quartic", kind="corrected", dt=0.1,
                        n_steps=2, sigma1=0.5), ValueError, "sigma1"),
    (lambda: S.loss_fn("sphere"), ValueError, "problem"),
])
def test_bad_inputs_raise_naming_parameter(call, exc, word):
    with pytest.raises(exc, match=word):
        call()
