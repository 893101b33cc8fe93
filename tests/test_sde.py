"""Unit tests of theory/sde/, sims/sde/ and sims/reference/sde.py (topic ``sde``).

Simulator calls reuse the shapes and static configurations of the contract rows (tests/contract_sde.py)
where they can, so that one process compiles each kernel once.
"""
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import sympy as sp

from sims import sde as S
from sims.reference import sde as R
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


def test_quadratic_rates_slopes_gaps_and_thresholds_exact():
    assert sp.simplify(T.quadratic_log_rate("first_order") + 2 * LAM) == 0
    assert sp.simplify(T.quadratic_log_rate("second_order") - (-2 * LAM - ETA * LAM**2)) == 0
    assert sp.simplify(T.quadratic_log_rate("corrected") - (-2 * LAM + ETA * LAM**2)) == 0
    assert sp.simplify(T.quadratic_threshold("gd") - 2 / LAM) == 0
    assert sp.simplify(T.quadratic_threshold("corrected") - 2 / LAM) == 0
    assert T.quadratic_threshold("first_order") is None and T.quadratic_threshold("second_order") is None
    # the corrected rate is GD's tangent at the edge; the classic slopes are 0 and -lambda^2
    edge = 2 / LAM
    assert sp.simplify(T.quadratic_rate_slope("gd", LAM, edge) - LAM**2) == 0
    assert sp.simplify(T.quadratic_rate_slope("corrected", LAM, edge) - LAM**2) == 0
    assert sp.simplify(T.quadratic_rate_slope("second_order", LAM, edge) + LAM**2) == 0
    assert T.quadratic_rate_slope("first_order", LAM, edge) == 0
    assert sp.simplify(T.quadratic_rate_gap("corrected", 3) - (-2 * ETA * LAM**2 - sp.Rational(2, 3) * ETA**2 * LAM**3)) == 0
    assert sp.simplify(T.quadratic_rate_gap("second_order", 3) + sp.Rational(2, 3) * ETA**2 * LAM**3) == 0


def test_quartic_corrected_threshold_is_threefold_conservative_and_cosh_roots():
    th = T.quartic_thresholds()
    assert th["gd"] == 2 and th["corrected"] == sp.Rational(2, 3) and th["gd"] / th["corrected"] == 3
    assert th["first_order"] is None and th["second_order"] is None
    assert sp.simplify(T.critical_step(T.toy_function("cosh2"), "corrected") - 1 / sp.cosh(T.X)) == 0
    assert math.isclose(T.escape_threshold_x("cosh2", "corrected", 0.1), math.acosh(10.0), rel_tol=1e-12)
    x_gd = T.escape_threshold_x("cosh2", "gd", 0.1)
    assert math.isclose(x_gd / math.sinh(x_gd), 0.1, rel_tol=1e-12)


def test_l0_for_l1_sufficient_step_and_descent_margin_exact():
    L1 = sp.Symbol("L1", positive=True)
    assert sp.simplify(T.l0_for_l1(T.toy_function("quartic"), L1) - 4 / L1**2) == 0
    assert T.l0_for_l1(T.toy_function("cosh2"), 1) == 2
    assert T.l0_for_l1(T.toy_function("logcosh"), 0) == 1
    assert math.isclose(T.sufficient_step(1.0, 2.0, 3.0), 2 / 7)
    assert T.descent_margin("quartic", 2) == 3 and T.descent_margin("quartic", 1) == 3
    assert T.descent_margin("cosh2", 1) == 1


def test_dcsgd_factor_symbolic_matches_closed_form_and_numeric():
    factor, thr, (eta, a, n, om, s1) = T.dcsgd_ms_factor_symbolic()
    closed = (1 - eta * a) ** 2 + eta**2 * a**2 * (om + s1**2 * (1 + om)) / n
    assert sp.simplify(factor - closed) == 0
    assert sp.simplify(thr - 2 / (a * (1 + (om + s1**2 * (1 + om)) / n))) == 0
    rng = np.random.default_rng(0)
    for _ in range(5):
        v = dict(zip((a, n, om, s1), (rng.uniform(0.1, 3), int(rng.integers(1, 9)), rng.uniform(0, 5), rng.uniform(0, 2))))
        e = float(thr.subs(v))
        assert math.isclose(e, T.dcsgd_threshold(v[a], v[n], v[om], v[s1]), rel_tol=1e-12)
        assert math.isclose(T.dcsgd_ms_factor(e, v[a], v[n], v[om], v[s1]), 1.0, rel_tol=1e-12)
        # the prescription's factor is exactly 1 + V/N in one dimension
        assert math.isclose(T.normalization_factor(v[n], v[om], v[s1]) * v[a] * e, 2.0, rel_tol=1e-12)
    assert math.isclose(T.dcsgd_threshold(1.0, 2, [0.0, 2.0], 0.0), 2 / (1 + 1.0 / 2))


def test_lyapunov_exponent_closed_form_and_jensen():
    # One agent, no noise: x+ = x (1 - eta a B/q): gamma = q log|1 - eta a/q| exactly.
    q, eta, a = 0.25, 0.3, 2.0
    assert math.isclose(T.dcsgd_lyapunov(eta, a, 1, 1 / q - 1, 0.0), q * math.log(abs(1 - eta * a / q)), rel_tol=1e-12)
    # Plain GD when nothing is compressed and there is no noise.
    assert math.isclose(T.dcsgd_lyapunov(0.4, 2.0, 3, 0.0, 0.0), math.log(0.2), rel_tol=1e-12)
    # Gaussian-only noise, one agent: E log|u + vZ| against a fine quadrature on a grid.
    u, v = 1 - 0.5 * 2.0, 0.5 * 2.0 * 0.8
    z = np.linspace(-12, 12, 2_000_001)
    dens = np.exp(-z**2 / 2) / math.sqrt(2 * math.pi)
    with np.errstate(divide="ignore"):
        grid = np.trapezoid(np.where(np.isfinite(np.log(np.abs(u + v * z))), np.log(np.abs(u + v * z)), 0) * dens, z)
    assert math.isclose(T.dcsgd_lyapunov(0.5, 2.0, 1, 0.0, 0.8), grid, rel_tol=1e-4)
    for c in (1.0, 2.0, 3.0):
        e = c / (2.0 * T.normalization_factor(4, [0.0, 1.0, 3.0, 0.5], 0.7))
        assert T.dcsgd_lyapunov(e, 2.0, 4, [0.0, 1.0, 3.0, 0.5], 0.7) < 0.5 * math.log(
            T.dcsgd_ms_factor(e, 2.0, 4, [0.0, 1.0, 3.0, 0.5], 0.7))


def test_sign_laws_densities_and_linear_variance():
    from scipy import stats

    u = sp.Symbol("u", real=True)
    assert sp.simplify(T.mean_sign_symbolic("gaussian") - sp.erf(u / sp.sqrt(2))) == 0
    assert sp.simplify(T.mean_sign_symbolic("cauchy") - 2 / sp.pi * sp.atan(u)) == 0
    assert sp.simplify(T.mean_sign_symbolic("student_t", 2) - u / sp.sqrt(u**2 + 2)) == 0
    for law, nu, dist in (("gaussian", None, stats.norm()), ("cauchy", None, stats.cauchy()),
                          ("student_t", 3.0, stats.t(3))):
        assert math.isclose(T.noise_density_at_zero(law, nu), dist.pdf(0.0), rel_tol=1e-12)
        for val in (-2.5, 0.3, 1.7):
            assert math.isclose(T.mean_sign(val, 1.0, law, nu=nu), 2 * dist.cdf(val) - 1, rel_tol=1e-10)
    assert math.isclose(T.sign_contraction(2.0, 1.0, "cauchy"), 4 / math.pi)
    assert math.isclose(T.sign_variance(0.5, 1.0, "cauchy", n_agents=4), (1 - (2 / np.pi * np.arctan(0.5)) ** 2) / 4)
    etas = 0.1 / np.sqrt(np.arange(3000) + 1.0)
    v, w, ref = T.sign_linear_variance(etas, 4 / math.pi, 4), 0.0, []
    for e in etas:
        w = (1 - e * 4 / math.pi) ** 2 * w + e * e / 4
        ref.append(w)
    np.testing.assert_allclose(v, ref, rtol=1e-10)
    # settles to eta_k / (2 kappa N) up to O(1/(k eta_k)) corrections
    assert abs(v[-1] / (etas[-1] / (2 * 4 / math.pi * 4)) - 1) < 0.1


# ----------------------------------------------------------------------------- sympy vs JAX autodiff

@pytest.mark.parametrize("name", ["quadratic", "quartic", "cosh2", "logcosh"])
def test_jax_drifts_and_derivatives_match_sympy(name):
    f = T.toy_function(name, lam=1)
    x, eta = np.array([-2.0, 0.3, 1.5]), 0.2  # the contract rows' points, so the kernels are shared
    for kind in T.DRIFT_KINDS:
        b = sp.lambdify((T.X, ETA), T.drift(f, [T.X], kind)[0], "numpy")
        np.testing.assert_allclose(np.asarray(S.drift(name, kind, x, eta)), b(x, eta) * np.ones_like(x), rtol=1e-11,
                                   atol=1e-13)
    fp, fpp = (sp.lambdify(T.X, sp.diff(f, T.X, k), "numpy") for k in (1, 2))
    d1, d2 = S.derivatives(name, x)
    np.testing.assert_allclose(np.asarray(d1), fp(x) * np.ones_like(x), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(np.asarray(d2), fpp(x) * np.ones_like(x), rtol=1e-12, atol=1e-14)


# ----------------------------------------------------------------------------- simulators

CFG = S.Config(problem="quartic", algo="dcsgd", n_agents=3, compressor="bernoulli", noise="gaussian", n_steps=4, n_record=2)


def test_dcsgd_without_compression_or_noise_equals_numpy_reference_gd():
    """omega = 0, sigma = 0: DCSGD is plain GD; the NumPy reference and the JAX simulator agree to round-off,
    including where and whether a path diverges."""
    key = jax.random.key(3)
    for x0 in (1.2, 30.0):
        r = S.simulate(key, np.array([x0]), 0.1, CFG, omega=0.0, sigma1=0.0)
        ref = R.dcsgd_quartic(np.array([x0]), 0.1, 1.0, 0.0, 3, CFG.n_steps, np.random.default_rng(0))
        assert bool(r["diverged"]) == bool(ref["diverged"][0]) and int(r["diverged_at"]) == int(ref["diverged_at"][0])
        np.testing.assert_allclose(np.asarray(r["x"]), ref["x"], rtol=1e-13)
    assert bool(S.simulate(key, np.array([30.0]), 0.1, CFG, omega=0.0, sigma1=0.0)["diverged"])


def test_normalized_flag_equals_its_algorithm():
    k = jax.random.key(3)
    cfg_n = S.Config(**{**CFG.__dict__, "algo": "dcsgd_normalized"})
    a = S.simulate(k, np.array([2.0]), 1.0, cfg_n, omega=1.0, sigma1=1.0, L1=2.0)
    b = S.simulate(k, np.array([2.0]), 1.0, CFG, omega=1.0, sigma1=1.0, L1=2.0, normalized=1.0)
    np.testing.assert_array_equal(np.asarray(a["loss"]), np.asarray(b["loss"]))


def test_compressors_unbiased_with_variance_omega():
    d, n = 8, 20000
    v = jnp.arange(1.0, d + 1)
    # both compressors in one compiled kernel: agent 0 Bernoulli (omega 1.5), agent 1 rand-k (omega 3)
    draw = jax.jit(jax.vmap(lambda k: jnp.stack([S.compress(k, "bernoulli", v[None], jnp.array([1.5]))[0],
                                                 S.compress(k, "rand_k", v[None], jnp.array([3.0]))[0]])))
    both = np.asarray(draw(jax.random.split(jax.random.key(2), n)))
    for out, omega in ((both[:, 0], 1.5), (both[:, 1], 3.0)):
        # Monte Carlo: mean within 5 SE per coordinate; E||C(v)-v||^2 within 5 SE of omega ||v||^2.
        se = out.std(axis=0) / math.sqrt(n)
        assert np.all(np.abs(out.mean(axis=0) - np.asarray(v)) < 5 * se)
        sq = ((out - np.asarray(v)) ** 2).sum(axis=1)
        assert abs(sq.mean() - omega * float(v @ v)) < 5 * sq.std() / math.sqrt(n)
    assert np.all((both[:, 1] != 0).sum(axis=1) == d // 4)  # rand-k keeps exactly k = d/(1+omega) coordinates


@pytest.mark.slow
def test_student_t_and_cauchy_noise_laws_match_scipy():
    from scipy import stats
    g = jnp.zeros(1)
    for kind, dist in (("student_t", stats.t(3)), ("cauchy", stats.cauchy())):
        z = np.asarray(S.sample_noise(jax.random.key(4), kind, g, 1.0, 0.0, 5000, 3.0)).ravel()
        assert stats.kstest(z, dist.cdf).pvalue > 1e-3


def test_heun_ode_matches_numpy_reference():
    eta, x0, dt, n = 0.1, 1.3, 0.01, 3  # the contract row's static configuration
    r = S.sde_path(jax.random.key(0), np.array([x0]), eta, problem="quartic", kind="corrected", dt=dt, n_steps=n)
    ref = R.heun_ode(lambda y: -y**3 + 1.5 * eta * y**5, x0, dt, n)  # corrected drift of x^4/4, by hand
    assert math.isclose(float(r["x"][0]), ref, rel_tol=1e-13)


@pytest.mark.slow
def test_heun_ode_matches_diffrax():
    import diffrax
    eta, x0, dt, n = 0.1, 1.3, 0.01, 200
    r = S.sde_path(jax.random.key(0), np.array([x0]), eta, problem="quartic", kind="corrected", dt=dt, n_steps=n)
    term = diffrax.ODETerm(lambda t, y, args: -y**3 + 1.5 * eta * y**5)
    sol = diffrax.diffeqsolve(term, diffrax.Heun(), t0=0.0, t1=n * dt, dt0=dt, y0=jnp.array([x0]),
                              stepsize_controller=diffrax.ConstantStepSize())
    np.testing.assert_allclose(np.asarray(r["x"]), np.asarray(sol.ys[-1]), rtol=1e-10)


def _numpy_coupled(dws, x0, eta, sigma0, n_active, substeps):
    """DSGD and the first-order SDE (Heun) driven by the given Brownian sub-increments, in NumPy."""
    x, X = x0, x0
    dt = eta / substeps
    for k in range(n_active):
        x = x - eta * (x**3 - sigma0 * dws[k].sum() / math.sqrt(eta))
        for j in range(substeps):
            b = -X**3
            pred = X + b * dt + math.sqrt(eta) * sigma0 * dws[k, j]
            X = X + 0.5 * (b - pred**3) * dt + math.sqrt(eta) * sigma0 * dws[k, j]
    return x, X


def test_coupled_weak_paths_share_the_noise_and_mask_steps():
    """The discrete path's noise is minus the sum of the SDE's sub-increments over sqrt(eta): rebuilt from the
    key in NumPy, both paths agree to round-off; steps beyond K = T/eta are frozen; sigma0 = 0 gives GD."""
    key, eta, sigma0 = jax.random.key(3), 0.5, 0.3          # the contract row: max_steps 3, substeps 1, T = 1
    r = S.coupled_weak_paths(key, np.array([1.0]), eta, problem="quartic", T=1.0, max_steps=3, substeps=1,
                             sigma0=sigma0)
    dws = np.asarray(jax.random.normal(key, (3, 1, 1))) * math.sqrt(eta)
    x, X = _numpy_coupled(dws[..., 0], 1.0, eta, sigma0, 2, 1)
    assert int(r["n_steps"]) == 2 and not bool(r["diverged"])
    assert math.isclose(float(r["x"][0]), x, rel_tol=1e-12)
    assert math.isclose(float(r["X_first_order"][0]), X, rel_tol=1e-12)
    r0 = S.coupled_weak_paths(key, np.array([1.0]), eta, problem="quartic", T=1.0, max_steps=3, substeps=1, sigma0=0.0)
    x0 = 1.0
    for _ in range(2):
        x0 = x0 - eta * x0**3
    assert math.isclose(float(r0["x"][0]), x0, rel_tol=1e-13)


def test_descent_edge_is_the_closed_form_stretch():
    x = np.array([-2.0, 0.3, 1.5])   # the contract row's points
    c = np.asarray(S.descent_edge(x, np.full(3, 0.5), problem="cosh2", n_bisect=30))
    # |x - c e f'| < |x|  <=>  c < 2x/(e f'(x)), f' = 2 sinh x
    np.testing.assert_allclose(c, 2 * x / (0.5 * 2 * np.sinh(x)), rtol=1e-7)


def test_mean_sign_variance_is_the_identity_of_a_sign():
    """A +-1 variable has sample variance n/(n-1) (1 - mean^2) exactly (why variance is not a claim)."""
    m = S.mean_sign_mc(jax.random.key(3), np.array([0.0, 0.5]), 1.0, "cauchy", 500)
    np.testing.assert_allclose(np.asarray(m["var"]), 500 / 499 * (1 - np.asarray(m["mean"]) ** 2), rtol=1e-12)


def test_mlp_data_is_deterministic_and_needs_a_seed():
    a, b, c = S.mlp_data(0), S.mlp_data(0), S.mlp_data(1)
    np.testing.assert_array_equal(a[0], b[0]) and np.testing.assert_array_equal(a[1], b[1])
    assert not np.allclose(a[0], c[0])
    with pytest.raises(TypeError, match="seed"):
        S.mlp_data(None)
    with pytest.raises(TypeError, match="seed"):
        S.mlp_data()


def test_bench_cases_name_their_scale():
    with pytest.raises(ValueError, match="scale"):
        R.bench_cases("huge")
    (case,) = R.bench_cases("small")
    assert case.unit == "path-steps" and case.work == 2000 * 500


# ----------------------------------------------------------------------------- thresholds per model, SDE simulators

A_, E_ = sp.symbols("a E", positive=True)


def test_ms_thresholds_symbolic_closed_forms_and_infinities():
    want = {"discrete": 2 / (A_ * (1 + E_)), "corrected": 2 / (A_ * (1 + E_)), "first_order": 2 / (A_ * E_),
            "second_order": 2 / (A_ * (E_ - 1))}
    for model, expr in want.items():
        root, (a, e) = T.ms_threshold_symbolic(model)
        assert sp.simplify(root.subs({a: A_, e: E_}) - expr) == 0, model
    # numeric: agrees with the older exact DCSGD threshold; no threshold where a model is always stable
    om = np.array([0.0, 1.0, 3.0, 0.5])
    assert math.isclose(T.ms_threshold("discrete", 2.0, 4, om, 0.7), T.dcsgd_threshold(2.0, 4, om, 0.7), rel_tol=1e-14)
    assert T.ms_threshold("second_order", 2.0, 4, om, 0.7) == math.inf          # E = 0.54 <= 1
    assert T.ms_threshold("first_order", 1.0, 3, 0.0, 0.0) == math.inf          # E = 0: the first-order SDE is a flow
    assert math.isclose(T.ms_threshold("second_order", 0.5, 1, 1.0, 1.0), 2.0)  # E = 3
    assert math.isclose(T.ms_threshold("first_order", 0.5, 1, 1.0, 1.0), 4 / 3)
    # rates: the discrete per-time log-factor and the SDE rates change sign at their thresholds
    assert math.isclose(T.ms_rate("discrete", 0.3, 2.0, 4, om, 0.7),
                        math.log(T.dcsgd_ms_factor(0.3, 2.0, 4, om, 0.7)) / 0.3, rel_tol=1e-13)
    for model in T.DRIFT_KINDS:
        th = T.ms_threshold(model, 0.5, 1, 1.0, 1.0)
        assert abs(T.ms_rate(model, th, 0.5, 1, 1.0, 1.0)) < 1e-12
        assert T.ms_rate(model, 0.9 * th, 0.5, 1, 1.0, 1.0) < 0 < T.ms_rate(model, 1.1 * th, 0.5, 1, 1.0, 1.0)


def test_dcsgd_direction_moments_and_noise_variance():
    """Moments of the 1-D direction: the second is g^2 (1 + E); the variance formula is the d-dim, sigma0 version."""
    m = T.dcsgd_direction_moments(1.5, 4, [0.0, 1.0, 3.0, 0.5], 0.7)
    assert m[0] == 1 and math.isclose(m[1], 1.5)
    assert math.isclose(m[2], 1.5**2 * (1 + T.ms_excess(4, [0.0, 1.0, 3.0, 0.5], 0.7)), rel_tol=1e-13)
    # one agent, no compression: D = g (1 + s xi), E D^4 = g^4 (1 + 6 s^2 + 3 s^4)
    assert math.isclose(T.dcsgd_direction_moments(2.0, 1, 0.0, 0.5)[4], 16 * (1 + 6 * 0.25 + 3 * 0.0625), rel_tol=1e-13)
    v = T.dcsgd_noise_variance([1.0, -2.0], 2, [1.0, 3.0], 0.5, 0.0)
    np.testing.assert_allclose(v, (2.0 * np.array([1.0, 4.0]) + 3.0 * 0.25) / 2, rtol=1e-14)
    # exact one-step quotient of x^4/4 against its Taylor expansion by sympy with the moments as symbols
    x, eta, d = sp.symbols("x eta D", real=True)
    ms = sp.symbols("m0:5")
    poly = sp.expand(((x - eta * d) ** 4 / 4 - x**4 / 4) / eta)
    exact = sum(poly.coeff(d, k) * ms[k] for k in range(5))
    mm = T.dcsgd_direction_moments(1.2**3, 4, 1.0, 0.5)
    val = float(exact.subs({x: 1.2, eta: 0.05, **{ms[k]: mm[k] for k in range(5)}}))
    assert math.isclose(T.dcsgd_one_step_quotient(1.2, 0.05, 4, 1.0, 0.5), val, rel_tol=1e-12)


def test_stable_noise_reduction_keeps_the_direction_law():
    """The simulator draws one Gaussian (or Cauchy) value per coordinate for all agents (the stable-law reduction
    in sims.sde.algorithms._direction). Gaussian: the raw moments E D^k, k = 1..4, of 50k draws against the closed form of
    the per-agent construction (theory.sde.dcsgd_direction_moments), within 5 standard errors of each sample
    moment. Cauchy: a two-sample Kolmogorov-Smirnov test against directions built agent by agent from
    sample_noise and compress (independent keys; p below 1e-6 would be a real difference)."""
    import scipy.stats

    g, om, s1, n = 1.5, np.array([0.0, 1.0, 3.0, 0.5]), 0.7, 50_000
    keys = jax.random.split(jax.random.key(11), n)
    cfg = S.Config(problem="quadratic", algo="dcsgd", n_agents=4, compressor="bernoulli", noise="gaussian")
    draw = jax.jit(jax.vmap(lambda k: S.direction(k, cfg, jnp.array([g]), om, 0.0, s1)[0]))
    d = np.asarray(draw(keys))
    exact = T.dcsgd_direction_moments(g, 4, om, s1)
    for k in range(1, 5):
        se = np.std(d**k) / math.sqrt(n)
        assert abs(np.mean(d**k) - exact[k]) < 5 * se, (k, np.mean(d**k), exact[k], se)

    ccfg = S.Config(problem="quadratic", algo="dcsgd", n_agents=4, compressor="bernoulli", noise="cauchy")
    reduced = np.asarray(jax.jit(jax.vmap(lambda k: S.direction(k, ccfg, jnp.array([g]), om, 0.3, 0.0)[0]))(keys))

    def by_agent(key):
        kn, kc = jax.random.split(key)
        msgs = g + S.sample_noise(kn, "cauchy", jnp.array([g]), 0.3, 0.0, 4)
        return jnp.mean(S.compress(kc, "bernoulli", msgs, om), axis=0)[0]

    direct = np.asarray(jax.jit(jax.vmap(by_agent))(jax.random.split(jax.random.key(12), n)))
    assert scipy.stats.ks_2samp(reduced, direct).pvalue > 1e-6


def test_dcsgd_sde_variance_is_the_closed_form():
    """The SDE's diffusion variance (JAX) equals the closed form of the discrete direction's covariance (whose trace
    the claim compagnoni2025.theorem42_factor_exact measures on simulated DCSGD in d = 1 and 8)."""
    g = np.array([0.7, -1.1])
    x = np.cbrt(g)                       # x^4/4: gradient x^3
    om, s0, s1 = np.array([0.0, 1.0, 3.0]), 0.4, 0.5
    c = S.sde_coefficients(x, 0.2, method="dcsgd", problem="quartic", kind="first_order", omega=om, sigma0=s0,
                           sigma1=s1, n_agents=3)
    np.testing.assert_allclose(np.asarray(c["variance"]), T.dcsgd_noise_variance(g, 3, om, s0, s1), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(c["drift"]), -g, rtol=1e-12)


def test_dsignsgd_sde_coefficients_are_the_mean_sign_laws():
    """Drift -m with m the closed-form mean sign (scipy; Student-t with non-integer nu), variance (1 - m^2)/N; the
    corrected drift adds (eta/2) m' f'' m / s (chain rule by hand, sigma1 = 0)."""
    x = np.array([0.6, -0.3])
    s0, eta, N = 0.8, 0.3, 4
    g = x**3
    for noise, nu in (("gaussian", None), ("student_t", 2.5), ("cauchy", None)):
        m = T.mean_sign(g, s0, noise, nu=nu)
        c = S.sde_coefficients(x, eta, method="dsignsgd", problem="quartic", kind="first_order", noise=noise, nu=nu,
                               sigma0=s0, n_agents=N)
        np.testing.assert_allclose(np.asarray(c["drift"]), -m, rtol=1e-10)
        np.testing.assert_allclose(np.asarray(c["variance"]), (1 - m**2) / N, rtol=1e-10)
    h = 1e-6
    m = T.mean_sign(g, s0, "cauchy")
    dm = (T.mean_sign(g + h, s0, "cauchy") - T.mean_sign(g - h, s0, "cauchy")) / (2 * h)
    cc = S.sde_coefficients(x, eta, method="dsignsgd", problem="quartic", kind="corrected", noise="cauchy",
                            sigma0=s0, n_agents=N)
    np.testing.assert_allclose(np.asarray(cc["drift"]), -m + eta / 2 * dm * 3 * x**2 * m, rtol=1e-7)


def test_one_step_quotient_of_cosh_and_generators_differ_at_the_right_order():
    """The exact one-step quotient minus the corrected generator is O(eta^2) (ratio ~4 when eta halves); the
    classic first-order generator misses it at O(eta) (ratio ~2)."""
    args = (4, [0.0, 1.0, 3.0, 0.5], 0.5)
    for name in T.ONE_STEP_FUNCTIONS:
        gaps = {k: [T.dcsgd_one_step_quotient(1.0, e, *args, name=name) - T.one_step_generator(k, 1.0, e, *args, name=name)
                    for e in (0.01, 0.005)] for k in ("corrected", "first_order")}
        assert 3.6 < gaps["corrected"][0] / gaps["corrected"][1] < 4.4, (name, gaps)
        assert 1.8 < gaps["first_order"][0] / gaps["first_order"][1] < 2.2, (name, gaps)


@pytest.mark.slow
def test_dcsgd_sde_euler_maruyama_equals_diffrax_on_the_same_brownian_path():
    """diffrax's Euler scheme driven by the simulator's own increments (rebuilt from the documented key schedule:
    one key per record, one per block, time-major normals) reproduces the path to round-off, in d = 2."""
    import diffrax

    key, x0, eta, dt, n = jax.random.key(4), np.array([0.9, -0.6]), 0.2, 0.02, 20
    om, s0, s1, N = 1.0, 0.3, 0.5, 2
    r = S.dcsgd_sde(key, x0, eta, problem="quartic", kind="corrected", dt=dt, n_steps=n, omega=om, sigma0=s0,
                    sigma1=s1, n_agents=N)
    (k_rec,) = jax.random.split(key, 1)
    (k_blk,) = jax.random.split(k_rec, 1)
    w = np.concatenate([np.zeros((1, 2)), np.cumsum(np.asarray(jax.random.normal(k_blk, (n, 2))) * math.sqrt(dt), 0)])
    ts = jnp.arange(n + 1) * dt

    def drift(t, y, args):                       # corrected drift of x^4/4 by hand: -x^3 + (eta/2) 3x^2 x^3
        return -y**3 + 1.5 * eta * y**5

    def diffusion(t, y, args):
        g = y**3
        var = (om * g**2 + (1 + om) * (s0**2 + s1**2 * jnp.sum(g**2))) / N
        return jnp.diag(jnp.sqrt(eta * var))

    terms = diffrax.MultiTerm(diffrax.ODETerm(drift),
                              diffrax.ControlTerm(diffusion, diffrax.LinearInterpolation(ts=ts, ys=jnp.asarray(w))))
    sol = diffrax.diffeqsolve(terms, diffrax.Euler(), t0=0.0, t1=float(n * dt), dt0=dt, y0=jnp.asarray(x0),
                              stepsize_controller=diffrax.ConstantStepSize())
    np.testing.assert_allclose(np.asarray(r["x"]), np.asarray(sol.ys[-1]), rtol=1e-9)


def test_sde_sweep_kind_as_data_equals_static_kind():
    """The contract row's sweep (drift kind read from the grid) equals the one-path simulator with a static kind."""
    keys = jax.random.split(jax.random.key(11), 3)          # the contract row's keys and shapes
    grid = {"key": keys, "x0": np.full((3, 1), 1.2), "eta": np.full(3, 0.1), "dt": np.full(3, 0.01),
            "sigma1": np.full(3, 0.5), "n_agents": np.full(3, 3.0), "kind": np.array([2, 2, 2])}
    swept = S.sde_sweep("dcsgd", grid, problem="quartic", kind=None, n_steps=4, n_record=2)
    one = S.dcsgd_sde(keys[1], np.array([1.2]), 0.1, problem="quartic", kind="corrected", dt=0.01, n_steps=4,
                      n_record=2, sigma1=0.5, n_agents=3)
    np.testing.assert_allclose(swept["x"][1], np.asarray(one["x"]), rtol=1e-13)
    np.testing.assert_allclose(swept["loss"][1], np.asarray(one["loss"]), rtol=1e-13)


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
    (lambda: T.dcsgd_threshold(1.0, 4, 1.0, float("nan")), ValueError, "sigma1"),
    (lambda: T.dcsgd_threshold("1", 4, 1.0, 0.1), TypeError, "a"),
    (lambda: T.dcsgd_ms_factor(float("nan"), 1.0, 4, 1.0, 0.1), ValueError, "eta"),
    (lambda: T.dcsgd_lyapunov(0.1, 1.0, 13, 1.0, 0.1), ValueError, "n_agents"),
    (lambda: T.dcsgd_lyapunov(-0.1, 1.0, 2, 1.0, 0.1), ValueError, "eta"),
    (lambda: T.normalization_factor(4, 1.0, 0.5, d=0), ValueError, "d"),
    (lambda: T.mean_sign(1.0, 1.0, "laplace"), ValueError, "noise"),
    (lambda: T.mean_sign(1.0, 1.0, "student_t"), ValueError, "nu"),
    (lambda: T.mean_sign(1.0, 1.0, "gaussian", nu=3), ValueError, "nu"),
    (lambda: T.mean_sign(1.0, 0.0), ValueError, "scale"),
    (lambda: T.mean_sign(float("nan"), 1.0), ValueError, "grad"),
    (lambda: T.mean_sign("x", 1.0), TypeError, "grad"),
    (lambda: T.mean_sign_symbolic("student_t", 2.5), TypeError, "nu"),
    (lambda: T.noise_density_at_zero("student_t", -1.0), ValueError, "nu"),
    (lambda: T.sign_linear_variance([0.1, -0.1], 1.0), ValueError, "etas"),
    (lambda: T.sign_linear_variance([0.1], float("inf")), ValueError, "kappa"),
    (lambda: T.sign_contraction(0.0, 1.0), ValueError, "curvature"),
    (lambda: T.normalized_step(2.0, 1.0, 1.0, 1.0, 4, 1.0, 0.5), ValueError, "c"),
    (lambda: T.normalized_step(float("nan"), 1.0, 1.0, 1.0, 4, 1.0, 0.5), ValueError, "c"),
    (lambda: T.sufficient_step(0.0, 0.0, 1.0), ValueError, "L0"),
    (lambda: T.sufficient_step(1.0, float("nan"), 1.0), ValueError, "L1"),
    (lambda: T.escape_threshold_x("cosh2", "gd", 0.0), ValueError, "eta"),
    (lambda: T.escape_threshold_x("sphere", "gd", 0.1), ValueError, "name"),
    (lambda: T.quadratic_log_rate("gd", lam=-1.0), ValueError, "lam"),
    (lambda: T.quadratic_rate_gap("corrected", 0), ValueError, "order"),
    (lambda: T.descent_margin("quartic", -1.0), ValueError, "L1"),
    (lambda: T.toy_function("sphere"), ValueError, "name"),
    (lambda: T.drift(X**2, [X], "third_order"), ValueError, "kind"),
    (lambda: T.drift(X**2, [X], "corrected", eta=-1.0), ValueError, "eta"),
    (lambda: T.gradient("x**2", [X]), TypeError, "f"),
    (lambda: T.gradient(X**2, ["x"]), TypeError, "variables"),
    (lambda: T.gradient(X**2, []), ValueError, "variables"),
    (lambda: T.l0_for_l1(X**2, float("nan")), ValueError, "L1"),
    (lambda: S.Config(problem="sphere"), ValueError, "problem"),
    (lambda: S.Config(algo="adam"), ValueError, "algo"),
    (lambda: S.Config(n_agents=0), ValueError, "n_agents"),
    (lambda: S.Config(noise="laplace"), ValueError, "noise"),
    (lambda: S.Config(compressor="top_k"), ValueError, "compressor"),
    (lambda: S.Config(schedule="cosine"), ValueError, "schedule"),
    (lambda: S.Config(n_steps=10, n_record=3), ValueError, "n_record"),
    (lambda: S.Config(bound=float("nan")), ValueError, "bound"),
    (lambda: S.Config(nu=float("nan")), ValueError, "nu"),
    (lambda: S.paths(S.Config(), {"key": jax.random.split(jax.random.key(0), 2), "x0": np.ones((2, 1))}), ValueError, "eta"),
    (lambda: S.schedule_factor("cosine", 0), ValueError, "schedule"),
    (lambda: S.loss_fn("sphere"), ValueError, "problem"),
    (lambda: S.mlp_init(jax.random.key(0), -1.0), ValueError, "scale"),
    (lambda: S.noise_scale(jnp.ones(2), -1.0, 0.0), ValueError, "sigma0"),
    (lambda: S.sample_noise(jax.random.key(0), "laplace", jnp.ones(2), 1.0, 0.0, 2), ValueError, "kind"),
    (lambda: S.sample_noise(jax.random.key(0), "gaussian", jnp.ones(2), 1.0, 0.0, 0), ValueError, "n_agents"),
    (lambda: S.sample_noise(jax.random.key(0), "gaussian", jnp.ones(2), 1.0, float("nan"), 2), ValueError, "sigma1"),
    (lambda: S.sample_noise(np.zeros(2, np.uint32), "gaussian", jnp.ones(2), 1.0, 0.0, 2), TypeError, "key"),
    (lambda: S.compress(jax.random.key(0), "top_k", jnp.ones((2, 3)), 1.0), ValueError, "kind"),
    (lambda: S.compress(jax.random.key(0), "rand_k", jnp.ones(3), 1.0), ValueError, "v"),
    (lambda: S.compress(jax.random.key(0), "rand_k", jnp.ones((2, 3)), -1.0), ValueError, "omega"),
    (lambda: S.mlp_init(np.zeros(2, np.uint32)), TypeError, "key"),
    (lambda: S.direction(jax.random.key(0), "cfg", jnp.ones(1), 0.0, 0.0, 0.0), TypeError, "cfg"),
    (lambda: T.ms_threshold("third_order", 1.0, 2, 0.0, 0.0), ValueError, "model"),
    (lambda: T.ms_threshold("discrete", 0.0, 2, 0.0, 0.0), ValueError, "a"),
    (lambda: T.ms_threshold("discrete", -1.0, 2, 0.0, 0.0), ValueError, "a"),
    (lambda: T.ms_threshold("corrected", 1.0, 0, 0.0, 0.0), ValueError, "n_agents"),
    (lambda: T.ms_threshold("corrected", 1.0, 2, [1.0, 2.0, 3.0], 0.0), ValueError, "omega"),
    (lambda: T.ms_threshold("corrected", 1.0, 2, 0.0, float("nan")), ValueError, "sigma1"),
    (lambda: T.ms_rate("corrected", 0.0, 1.0, 2, 0.0, 0.0), ValueError, "eta"),
    (lambda: T.ms_growth_symbolic("sde"), ValueError, "model"),
    (lambda: T.dcsgd_noise_variance([1.0], 2, -1.0, 0.0, 0.0), ValueError, "omega"),
    (lambda: T.dcsgd_one_step_quotient(1.0, 0.0, 2, 0.0, 0.0), ValueError, "eta"),
    (lambda: T.dcsgd_direction_moments(1.0, 2, 0.0, 0.0, order=0), ValueError, "order"),
    (lambda: S.mean_sign_law(0.5, "laplace"), ValueError, "noise"),
    (lambda: S.mean_sign_law(0.5, "student_t"), ValueError, "nu"),
    (lambda: S.mean_sign_law(0.5, "cauchy", nu=2.0), ValueError, "nu"),
    (lambda: S.sde_coefficients(np.ones(1), 0.1, method="adam"), ValueError, "method"),
    (lambda: S.sde_coefficients(np.ones(1), 0.1, method="dcsgd", kind="third"), ValueError, "kind"),
    (lambda: S.sde_coefficients(np.ones(1), -0.1, method="dcsgd"), ValueError, "eta"),
    (lambda: S.sde_sweep("dcsgd", {"key": jax.random.split(jax.random.key(0), 2), "x0": np.ones((2, 1)),
                                   "eta": np.ones(2)}, n_steps=2), ValueError, "dt"),
    (lambda: S.sde_sweep("dsignsgd", {"key": jax.random.split(jax.random.key(0), 2), "x0": np.ones((2, 1)),
                                      "eta": np.ones(2), "dt": np.ones(2), "omega": np.ones(2)}, n_steps=2),
     ValueError, "omega"),
    (lambda: S.sde_sweep("dcsgd", {"key": jax.random.split(jax.random.key(0), 2), "x0": np.ones((2, 1)),
                                   "eta": np.ones(2), "dt": np.ones(2)}, kind=None, n_steps=2), ValueError, "kind"),
    (lambda: S.sde_sweep("dcsgd", {"key": jax.random.split(jax.random.key(0), 2), "x0": np.ones((2, 1)),
                                   "eta": np.ones(2), "dt": np.ones(2), "kind": np.array([0, 3])}, kind=None,
                         n_steps=2), ValueError, "kind"),
])
def test_bad_inputs_raise_naming_parameter(call, exc, word):
    with pytest.raises(exc, match=word):
        call()


# ----------------------------------------------------------------------------- DSignSGD one-step descent (Theorem 4.3)

def test_sign_descent_bound_symbolic_pieces():
    bound, phi, second, (h, A, G, L0, L1, d, N, m2, a) = T.sign_descent_bound_symbolic()
    assert sp.simplify(phi - (sp.exp(a) - 1 - a) / a**2) == 0
    assert sp.limit(phi, a, 0) == sp.Rational(1, 2)
    assert sp.simplify(second - ((1 - 1 / N) * m2 + d / N)) == 0
    # at L1 = 0 the bound is the quadratic's exact change -hA + (L0 h^2/2) E|D|^2
    assert sp.simplify(sp.limit(bound, L1, 0) - (-h * A + L0 * h**2 / 2 * second)) == 0
    for v in (0.0, 1e-6, 0.3, 5.0):   # series below 1e-4 (the closed form cancels there), expm1 above
        ref = float(phi.subs(a, sp.Rational(v)).evalf(30)) if v else 0.5
        assert T.sign_remainder_factor(v) == pytest.approx(ref, rel=1e-9)


def test_student_t_mean_sign_is_concave_and_slope_bounds_hold():
    u, nu = sp.symbols("u nu", positive=True)
    rho = (1 + u**2 / nu) ** (-(nu + 1) / 2)          # Student-t density up to its constant
    assert sp.simplify(sp.diff(rho, u) / rho + (nu + 1) * u / (nu + u**2)) == 0   # < 0 for u > 0: m concave there
    grid = np.linspace(-6, 6, 1201)
    for noise, v in (("student_t", 1.5), ("student_t", 0.7), ("gaussian", None), ("cauchy", None)):
        ell, M = T.sign_slope_bounds(noise, v)
        m = np.abs(T.mean_sign(grid, 1.0, noise, v))
        assert np.all(m >= ell * np.minimum(np.abs(grid), 1) - 1e-12)
        assert np.all(m <= np.minimum(M * np.abs(grid), 1) + 1e-12)
    ell, M = T.sign_slope_bounds("student_t", 1.5)
    assert ell == pytest.approx(0.5488646, abs=1e-6) and M == pytest.approx(0.6814700, abs=1e-6)


def _grad(name, x):
    return {"quadratic": x, "quartic": x**3, "cosh2": 2 * np.sinh(x)}[name]


def test_sufficient_step_descends_exactly_and_is_tight_on_the_quadratic():
    rng = np.random.default_rng(0)
    args = (1.0, 4, "student_t", 1.5)
    for name in T.SIGN_DESCENT_FUNCTIONS:
        L0, L1 = T.sign_l0l1(name)
        for d in (1, 3, 8):
            for scale in (0.05, 0.5, 2.0):
                x = rng.normal(0, scale, d)
                h = T.sign_sufficient_step(_grad(name, x), 1.0, L0, L1, 4, "student_t", 1.5)
                assert T.sign_descent_bound(h, _grad(name, x), 1.0, L0, L1, 4, "student_t", 1.5) == pytest.approx(
                    0.0, abs=1e-12 * h)
                assert T.sign_one_step_change(x, 0.999 * h, name, *args) < 0
                if name == "quadratic":   # the bound is the exact change: h_suff is the critical step
                    assert T.sign_critical_step(x, name, *args) == pytest.approx(h, rel=1e-9)
    assert T.sign_l0l1("quartic") == (1.0, 2.0) and T.sign_l0l1("cosh2") == (2.0, 1.0)


def test_rival_rules_overshoot_near_the_minimizer_and_theorem43_value():
    x = np.full(8, 0.05)
    args = (1.0, 4, "student_t", 1.5)
    h_star = T.sign_critical_step(x, "quadratic", *args)
    for rule in ("no_noise", "no_sqrt_d"):
        h = T.sign_sufficient_step(x, 1.0, 1.0, 0.0, 4, "student_t", 1.5, rule=rule)
        assert h > h_star and T.sign_one_step_change(x, h, "quadratic", *args) > 0
    ell, M = T.sign_slope_bounds("student_t", 1.5)
    assert T.theorem43_step(2.0, 1.0, 8, 1.0, 4, "student_t", 1.5) == pytest.approx(
        ell / (1.0 * 8 * 1.0 / 8 + math.sqrt(8) * 3.0 * M))
    assert T.theorem43_step(1.0, 0.0, 8, 1.0, 4, "student_t", 1.5) > h_star


def test_critical_step_roots_and_first_order_generator():
    x = np.array([0.4, -1.1, 0.2])
    args = (1.0, 3, "student_t", 2.5)
    h = T.sign_critical_step(x, "cosh2", *args)
    assert abs(T.sign_one_step_change(x, h, "cosh2", *args)) < 1e-12
    assert T.sign_one_step_change(x, 0.99 * h, "cosh2", *args) < 0 < T.sign_one_step_change(x, 1.01 * h, "cosh2", *args)
    g, m = 2 * np.sinh(x), T.mean_sign(2 * np.sinh(x), 1.0, "student_t", 2.5)
    h_gen = T.sign_critical_step(x, "cosh2", *args, model="first_order_sde")
    assert h_gen == pytest.approx(2 * 3 * (g @ m) / np.sum(2 * np.cosh(x) * (1 - m**2)))
    # vectorized over steps
    hs = np.array([0.1, 0.2])
    assert np.allclose(T.sign_one_step_change(x, hs, "cosh2", *args),
                       [T.sign_one_step_change(x, v, "cosh2", *args) for v in hs])



@pytest.mark.parametrize("fn, first", [
    ("sign_descent_bound", lambda: {"grad": np.array([0.3, -0.2]), "scale": 1.0, "L0": 2.0, "L1": 1.0, "n_agents": 3,
                                     "nu": 1.5}),
    ("sign_one_step_change", lambda: {"x": np.array([0.3, -0.2]), "name": "cosh2", "scale": 1.0, "n_agents": 3, "nu": 1.5}),
    ("sign_generator_change", lambda: {"x": np.array([0.3, -0.2]), "name": "cosh2", "scale": 1.0, "n_agents": 3, "nu": 1.5}),
    ("ridge_one_step_change", lambda: {"y": 0.7, "d": 4, "scale": 1.0, "n_agents": 2, "nu": 1.5}),
    ("radial_one_step_change", lambda: {"y": 0.7, "d": 4, "scale": 1.0, "n_agents": 2, "nu": 1.5}),
])
def test_the_step_is_eta_and_h_still_works_for_one_release(fn, first):
    """The step keyword is ``eta`` (the package's glossary); ``h=`` gives the same number with a DeprecationWarning,
    and a bad step is reported under the new name."""
    f, kw = getattr(T, fn), first()
    new = f(**kw, eta=0.1)
    with pytest.warns(DeprecationWarning, match=f"{fn}.*'h'.*'eta'"):
        assert f(**kw, h=0.1) == new
    with pytest.raises(ValueError, match="eta"):
        f(**kw, eta=-1.0)


# ----------------------------------------------------------------------------- pre-scheduled steps on x^4/4

def test_quartic_schedule_map_and_thresholds():
    s_next, (s, r, S_) = T.quartic_schedule_map()
    assert sp.simplify(s_next - r * s * (1 - s * S_) ** 2) == 0
    assert T.quartic_schedule_threshold("constant") == pytest.approx(2.0, abs=1e-12)
    s_star = T.quartic_schedule_threshold("inv_sqrt")
    assert s_star == pytest.approx(2.169702, abs=1e-6)

    def escapes(s0, eta0=0.1, steps=200):   # GD on x^4/4 with eta0/sqrt(t+1), straight from x
        x = math.sqrt(s0 / eta0)
        for t in range(steps):
            x = x - eta0 / math.sqrt(t + 1) * x**3
            if not abs(x) < 1e30:
                return True
        return False

    assert escapes(s_star * 1.001) and not escapes(s_star * 0.999)


def test_quartic_schedule_divergence_limits():
    s0 = np.array([1.0, 1.8, 2.1, 2.6, 3.0])
    s_star = T.quartic_schedule_threshold("inv_sqrt")
    # without noise or compression the law is the noise-free edge, away from the log grid's cell (8 %) around s*
    clean = T.quartic_schedule_divergence(s0[[0, 1, 3, 4]], "inv_sqrt", 4, 0.0, 0.0)
    assert np.allclose(clean, s0[[0, 1, 3, 4]] > s_star, atol=1e-9)
    p = T.quartic_schedule_divergence(s0, "inv_sqrt", 4, 1.0, 0.5)
    assert np.all(np.diff(p) > 0) and 0 < p[0] < p[-1] < 1
    assert np.allclose(p, T.quartic_schedule_divergence(s0, "inv_sqrt", 4, 1.0, 0.5, n_steps=60), atol=1e-6)
    assert np.all(T.quartic_schedule_divergence(s0, "constant", 4, 1.0, 0.5) > p)


def test_affine_schedule_law_reduces_to_the_s_chain_and_grows_with_sigma0():
    s0 = np.array([1.0, 2.0, 3.0])
    x0 = np.sqrt(s0 / 0.1)
    chain = T.quartic_schedule_divergence(s0, "inv_sqrt", 4, 1.0, 0.5)
    assert np.allclose(T.quartic_schedule_divergence_affine(x0, 0.1, "inv_sqrt", 4, 1.0, 0.0, 0.5), chain, atol=5e-3)
    p = [T.quartic_schedule_divergence_affine(x0[0], 0.1, "inv_sqrt", 4, 1.0, s, 0.25) for s in (0.0, 20.0, 40.0)]
    assert p[0] < p[1] < p[2]


def test_corrected_sign_sde_matches_the_discrete_step_only_where_the_mean_sign_is_linear():
    args = (1.0, 4, "student_t", 1.5)
    small, big = np.full(4, 0.005), np.full(4, 3.0)
    for x in (small, big):
        assert T.sign_generator_change(x, 0.0, "quadratic", *args, model="corrected_sde") == 0.0
    exact = [T.sign_critical_step(x, "quadratic", *args) for x in (small, big)]
    corr = [T.sign_critical_step(x, "quadratic", *args, model="corrected_sde") for x in (small, big)]
    first = [T.sign_critical_step(x, "quadratic", *args, model="first_order_sde") for x in (small, big)]
    assert corr[0] == pytest.approx(exact[0], rel=1e-4) and corr[1] > 1.5 * exact[1] and first[1] > corr[1]


def test_explicit_constants_condition_and_theorem43_form():
    K, (G, sig, L0, L1, d, N, M, phi) = T.sign_descent_K_symbolic()
    at_one = sp.expand(K.subs({G: 1, phi: sp.Rational(1, 2)}))
    assert sp.simplify(at_one.coeff(L1).coeff(d) - sig / (2 * N)) == 0        # Theorem 4.3's first term
    assert sp.simplify(at_one.coeff(L0).coeff(d) - sig / (2 * N)) == 0        # the noise floor's term it lacks
    rng = np.random.default_rng(3)
    for name in T.SIGN_DESCENT_FUNCTIONS:
        L0v, L1v = T.sign_l0l1(name)
        x = rng.normal(0, 0.4, 5)
        g = _grad(name, x)
        he = T.sign_sufficient_step(g, 1.0, L0v, L1v, 4, "student_t", 1.5, rule="explicit")
        assert 0 < he <= T.sign_sufficient_step(g, 1.0, L0v, L1v, 4, "student_t", 1.5)
        assert T.sign_one_step_change(x, he, name, 1.0, 4, "student_t", 1.5) < 0


def test_binomial_kept_count_is_the_per_agent_bernoulli_law():
    """With one omega for every agent ``paths`` draws DCSGD's Bernoulli masks as their count K ~ Binomial(N, q) (one
    32-bit word per coordinate, not N). One step from x = 1 on a x^2/2 at eta = 1 gives the direction D = 1 - x1.
    Without noise D = K g/(Nq): the counts against scipy's Binomial(4, 0.4) pmf (chi-square, p below 1e-6 would be a
    real difference). With multiplicative Gaussian noise the raw moments E D^k, k = 1..4, within 5 standard errors of
    the per-agent closed form theory.sde.dcsgd_direction_moments. Student-t noise (no stable-law shortcut): a
    two-sample Kolmogorov-Smirnov test against directions drawn agent by agent (sims.sde.direction, independent keys)."""
    import scipy.stats

    g, om, s1, n, agents = 1.5, 1.5, 0.7, 20_000, 4
    q = 1 / (1 + om)
    cfg = S.Config(problem="quadratic", algo="dcsgd", n_agents=agents, compressor="bernoulli", noise="gaussian",
                   n_steps=1, n_record=1)
    grid = {"key": jax.random.split(jax.random.key(21), 2 * n), "x0": np.ones((2 * n, 1)), "eta": np.ones(2 * n),
            "lam": np.full(2 * n, g), "omega": np.full(2 * n, om), "sigma1": np.repeat([0.0, s1], n)}
    d = 1.0 - np.asarray(S.paths(cfg, grid)["x"])[:, 0]
    kept = d[:n] * agents * q / g
    assert np.all(np.abs(kept - np.rint(kept)) < 1e-9)
    counts = np.bincount(np.rint(kept).astype(int), minlength=agents + 1)
    assert scipy.stats.chisquare(counts, n * scipy.stats.binom(agents, q).pmf(np.arange(agents + 1))).pvalue > 1e-6
    exact = T.dcsgd_direction_moments(g, agents, np.full(agents, om), s1)
    for k in range(1, 5):
        se = np.std(d[n:] ** k) / math.sqrt(n)
        assert abs(np.mean(d[n:] ** k) - exact[k]) < 5 * se, (k, np.mean(d[n:] ** k), exact[k], se)

    tcfg = S.Config(problem="quadratic", algo="dcsgd", n_agents=agents, compressor="bernoulli", noise="student_t",
                    nu=3.0, n_steps=1, n_record=1)
    m = n // 2
    tgrid = {"key": jax.random.split(jax.random.key(22), m), "x0": np.ones((m, 1)), "eta": np.ones(m),
             "lam": np.full(m, g), "omega": np.full(m, om), "sigma1": np.full(m, s1)}
    binomial = 1.0 - np.asarray(S.paths(tcfg, tgrid)["x"])[:, 0]
    by_agent = np.asarray(jax.jit(jax.vmap(lambda k: S.direction(k, tcfg, jnp.array([g]), np.full(agents, om), 0.0,
                                                                 s1)[0]))(jax.random.split(jax.random.key(23), m)))
    assert scipy.stats.ks_2samp(binomial, by_agent).pvalue > 1e-6
