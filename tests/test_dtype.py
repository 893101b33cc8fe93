r"""The ``dtype`` argument of the sweep simulators: float32 runs against float64 runs of the same keys.

Each simulator's float32 run is compared with its float64 run (the default, whose results the claims pin) on the same
keys, to a tolerance derived from float32's unit round-off :math:`\epsilon_{32} = 2^{-24}` and the number of rounded
steps, or, where the two precisions draw from different random streams, to Monte Carlo standard errors. Every float
output must come back float32, and the compiled float32 kernel must hold no float64 value at all (a Python float or
a float64 constant in the wrong place silently promotes a float32 kernel to float64 under x64). The validation itself
(:func:`theory.validate.float_dtype`) is tested first.
"""
from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from sims import sweep
from theory import validate as V

EPS32 = 2.0**-24  # float32's unit round-off: one rounding moves a value by at most this, relative
# The compiled-kernel scans (a program per method, law and statistic, compiled for its text) and the non-Gaussian
# laws cost ~40 CPU-s on a cold compilation cache: the slow tier (make test-all) runs them, the fast tier keeps one
# float32-against-float64 comparison per simulator and the output-dtype checks
SLOW = pytest.mark.slow


# ----------------------------------------------------------------------------- the validator

@pytest.mark.parametrize("given, want", [(None, np.float64), ("float32", np.float32), ("float64", np.float64),
                                         (np.float32, np.float32), (np.float64, np.float64),
                                         (np.dtype("float32"), np.float32), (jnp.float32, np.float32)])
def test_float_dtype_takes_none_the_two_names_and_their_numpy_and_jax_types(given, want):
    assert V.float_dtype("dtype", given) == np.dtype(want)


@pytest.mark.parametrize("bad", ["float16", "f4", "bfloat16", "", np.float16, jnp.bfloat16, np.int32, complex, True, 1.0,
                                 3, [1]])
def test_float_dtype_refuses_everything_else_naming_the_parameter_the_value_and_the_choices(bad):
    with pytest.raises(ValueError, match=r"^dtype: expected None \(float64\) or 'float32' or 'float64' \(") as e:
        V.float_dtype("dtype", bad)
    assert V._show(bad) in str(e.value)


def test_float_dtype_narrowed_to_float64_says_why():
    with pytest.raises(ValueError, match=r"^dtype: expected None \(float64\) or 'float64' .*got 'float32'; float32 is "
                                         r"refused here: a reason$"):
        V.float_dtype("dtype", "float32", allowed=("float64",), why="a reason")
    assert V.float_dtype("dtype", None, allowed=("float64",)) == np.float64


# ----------------------------------------------------------------------------- shared checks

def _float32_outputs(out: dict) -> None:
    floats = {k: v.dtype for k, v in out.items() if np.asarray(v).dtype.kind == "f"}
    assert floats and all(d == np.float32 for d in floats.values()), floats


def _compiled_kernels(monkeypatch, module) -> list[str]:
    """Wrap ``module.run_grid`` so that each sweep also compiles its per-run function for one grid point and keeps the
    optimized HLO text: a float64 value left in a float32 kernel shows there as an ``f64`` type (constants folded)."""
    texts = []

    def spy(fn, grid, *args, static=None, **kw):
        point = jax.tree_util.tree_map(lambda v: v[0], grid)
        texts.append(jax.jit(functools.partial(fn, **(static or {}))).lower(point, *args).compile().as_text())
        return sweep.run_grid(fn, grid, *args, static=static, **kw)

    monkeypatch.setattr(module, "run_grid", spy)
    return texts


def _no_float64(texts: list[str]) -> None:
    assert texts, "no sweep ran"
    for text in texts:
        bad = [line.strip()[:160] for line in text.splitlines() if "f64" in line]
        assert not bad, bad[:3]


# ----------------------------------------------------------------------------- sims.nqm.simulate

def test_nqm_heavy_ball_sweep_in_float32_follows_float64_to_round_off():
    r"""The bench's noise-free heavy-ball sweep (64 modes, steps 0.05..1.5, momentum 0.5), smaller: float32 against
    float64. Each step rounds the gradient, the buffer and the iterate (3 roundings of at most :math:`\epsilon_{32}`
    of values bounded by :math:`\|x_0\|_\infty` times the transient growth of heavy ball, at most :math:`1/(1-\mu)
    = 2`); the recursion is stable, so the errors add up at most linearly: :math:`|x^{32}_T - x^{64}_T| \le 6T\epsilon_{32}`
    (:math:`\|x_0\|_\infty = 1`). The time-averaged loss adds one rounding per step of the running sum:
    :math:`8T\epsilon_{32}` relative."""
    from sims.nqm import simulate

    n, T, d = 16, 400, 64
    lam = np.logspace(0, -3, d)
    sched = np.repeat(np.linspace(0.05, 1.5, n)[:, None], T, axis=1)
    run = functools.partial(simulate, jax.random.key(0), T=T, eta=sched, x0=np.ones(d), lam=lam, method="heavy_ball",
                            momentum=0.5, n_rec=4)
    a, b = run(), run(dtype="float32")
    _float32_outputs(b)
    assert a["final_x"].dtype == np.float64
    assert np.max(np.abs(b["final_x"] - a["final_x"])) <= 6 * T * EPS32
    assert np.max(np.abs(b["path"] - a["path"])) <= 6 * T * EPS32
    np.testing.assert_allclose(b["mean_loss"], a["mean_loss"], rtol=8 * T * EPS32)
    np.testing.assert_allclose(b["curve"], a["curve"], rtol=8 * T * EPS32)
    assert not a["diverged"].any() and not b["diverged"].any()


@pytest.mark.parametrize("law, df", [("gaussian", 0), pytest.param("rademacher", 0, marks=SLOW),
                                      pytest.param("uniform", 0, marks=SLOW), pytest.param("student", 3, marks=SLOW)])
def test_nqm_noisy_runs_in_float32_agree_in_law_and_draw_coupled_noise(law, df):
    r"""Noisy runs of four optimizers on 4 modes. The float32 noise is the float64 draw of the same key rounded to 23
    bits, so the runs stay coupled; the Monte Carlo means of the time-averaged loss agree within 4 standard errors
    of one estimate (a paired difference is far smaller; 4 SE is the bound a wrongly scaled float32 noise would
    break). Rademacher and uniform noise are the float64 values to one rounding, so there each SGD and heavy-ball
    run's time-averaged loss matches to :math:`16T\epsilon_{32}` relative (a few roundings per step, added over
    :math:`T` steps); not Signum's, whose step :math:`\mathrm{sign}(m)` round-off flips where :math:`m` is near 0."""
    from sims.nqm import simulate

    T = 300
    run = functools.partial(simulate, jax.random.key(1), T=T, eta=0.1, x0=np.ones(4), lam=np.array([1.0, 0.5, 0.2, 0.1]),
                            method=["sgd", "heavy_ball", "signum", "normalized"], momentum=0.5, sigma_a=1.0,
                            sigma_m=0.5, n_chains=64, law=law, df=df, ema=0.1)
    a, b = run(), run(dtype=np.float32)
    _float32_outputs(b)
    se = a["mean_loss"].std(axis=1, ddof=1) / math.sqrt(a["mean_loss"].shape[1])
    assert np.all(np.abs(b["mean_loss"].mean(axis=1) - a["mean_loss"].mean(axis=1)) < 4 * se)
    if law in ("rademacher", "uniform"):
        np.testing.assert_allclose(b["mean_loss"][:2], a["mean_loss"][:2], rtol=16 * T * EPS32)


def test_nqm_float32_divergence_uses_its_own_bound():
    r"""SGD at :math:`\eta\lambda = 12` multiplies :math:`x` by -11 per step: float64 flags the first :math:`|x_k| >
    10^{150}` (k = 145: :math:`11^{144} < 10^{150} < 11^{145}`), float32 the first :math:`|x_k| >` ``BOUND32`` =
    1e15 (k = 15: :math:`11^{14} = 3.8\times10^{14}`, :math:`11^{15} = 4.2\times10^{15}`); both far from the
    boundaries, so round-off cannot move them."""
    from sims import nqm

    run = functools.partial(nqm.simulate, jax.random.key(0), T=200, eta=12.0, x0=np.ones(1), lam=np.ones(1))
    for dtype, bound in ((None, nqm.BOUND), ("float32", nqm.BOUND32)):
        out = run(dtype=dtype)
        want = math.ceil(math.log(bound) / math.log(11.0))
        assert out["diverged"][0, 0] and out["diverged_step"][0, 0] == want, (dtype, out["diverged_step"], want)
        assert out["max_abs"][0, 0] == np.inf


def test_nqm_float32_refuses_horizons_its_step_code_cannot_count():
    from sims.nqm import _T_MAX32, simulate

    with pytest.raises(ValueError, match=r"T, dtype: .*at most 16777215; got T = 16777216"):
        simulate(jax.random.key(0), T=_T_MAX32 + 1, eta=0.1, x0=np.ones(1), lam=np.ones(1), dtype="float32")


@SLOW
def test_nqm_float32_kernels_hold_no_float64(monkeypatch):
    """Every method, noise law and statistic of the float32 kernel: no float64 value after compilation (every method
    under Gaussian noise with every statistic on; each other law, whose draws do not depend on the method, once)."""
    import sims.nqm as sn

    texts = _compiled_kernels(monkeypatch, sn)
    common = dict(T=20, eta=0.1, x0=np.ones(3), sigma_a=1.0, sigma_m=0.5, n_chains=2, dtype="float32")
    sn.simulate(jax.random.key(1), lam=np.array([1.0, 0.5, 0.2]), center=np.full(3, 0.1), ema=0.1,
                method=["sgd", "heavy_ball", "nesterov", "sign", "signum", "lion", "normalized"], momentum=0.5,
                window_mean=True, merge_weights=np.full(20, 1 / 20), **common)
    for law, df in (("rademacher", 0), ("uniform", 0), ("student", 3), ("student", 1)):
        sn.simulate(jax.random.key(1), lam=np.array([1.0, 0.5, 0.2]), law=law, df=df, **common)
    sn.simulate(jax.random.key(1), H=np.eye(3), law="student", df=2, **common)
    _no_float64(texts)


# ----------------------------------------------------------------------------- sims.sign_floor.simulate

def test_sign_floor_bernoulli_chains_in_float32_draw_the_same_signs():
    r"""The bench's signSGD chains (multiplicative noise, no momentum), smaller, started at :math:`3.5\eta`.
    The float32 chains compare the same 32-bit words with the same threshold (computed on the host in float64),
    so each takes the float64 chain's signs and moves by the same :math:`\pm\eta` up to one rounding of
    :math:`|x|` per step: :math:`|x^{32}_k - x^{64}_k| \le (k+1)\epsilon_{32}\max|x|`. The chain stays on the
    lattice :math:`\eta(\mathbb Z + \tfrac12)` (never nearer 0 than :math:`\eta/2`) and, pulled to 0 by a drift
    :math:`1 - 2p = 0.68` per step, below :math:`10\eta` (a tail :math:`(p/(1-p))^{10} = 6\times10^{-8}` per step
    over 512 x 1000 steps), so :math:`f = ax^2/2` moves by at most :math:`2(k+1)\epsilon_{32}\cdot 20` relative,
    and the Cesàro sum adds one rounding per step: each chain's ``mean_f`` within :math:`42(T+1)\epsilon_{32}`
    relative; divergence flags equal."""
    from sims import sign_floor as S

    T, n, eta = 1000, 512, 0.05
    run = functools.partial(S.simulate, jax.random.key(0), eta=eta, x0=np.array([3.5 * eta]), h=1.0, method="sign",
                            sigma_m=1.0, T=T, burn=T // 2, n_rec=10, n_chains=n, chunk_size=512)
    a, b = run(), run(dtype="float32")
    _float32_outputs(b)
    tol = 42 * (T + 1) * EPS32
    np.testing.assert_allclose(b["mean_f"], a["mean_f"], rtol=tol)
    np.testing.assert_allclose(b["curve"], a["curve"], rtol=tol)
    np.testing.assert_array_equal(b["diverged_step"], a["diverged_step"])


@SLOW
def test_sign_floor_float_chains_pass_float32_on_and_no_kernel_holds_float64(monkeypatch):
    """A mixed call (Bernoulli sign chains, Signum, SGD with momentum and additive noise, Lion, normalized): every float
    output float32, neither the Bernoulli kernel nor the shared NQM kernel holding a float64 value."""
    import sims.nqm as sn
    import sims.sign_floor as S

    texts = _compiled_kernels(monkeypatch, S)
    nqm_texts = _compiled_kernels(monkeypatch, sn)
    out = S.simulate(jax.random.key(0), eta=[0.05] * 5, x0=np.array([0.2]), h=1.0,
                     method=["sign", "sign", "sgd", "lion", "normalized"], beta=[0.0, 0.5, 0.5, 0.5, 0.0], sigma_m=1.0,
                     sigma_a=[0.0, 0.1, 0.1, 0.1, 0.1], cooldown=0.3, T=100, burn=50, n_rec=5, n_chains=4,
                     dtype="float32")
    _float32_outputs(out)
    S.simulate(jax.random.key(0), eta=0.05, x0=np.array([0.2]), method="sign", sigma_m=1.0, law="student", df=2.5, T=50,
               n_chains=2, dtype="float32")
    _no_float64(texts)
    _no_float64(nqm_texts)


# ----------------------------------------------------------------------------- sims.logistic.gd

def test_logistic_gd_in_float32_lands_on_the_float64_fixed_point_to_round_off():
    r"""The bench's 64-point dataset at step sizes below the first doubling, where GD converges to :math:`w^*`.
    The float32 fixed point is where the float32 gradient vanishes: a sum of 64 terms, each rounded, is off by at
    most :math:`64\epsilon_{32}\sum_i a_i|z_i|` (summation's worst case), which moves the fixed point by that over
    the curvature :math:`\lambda = L''(w^*)`; the iteration's own rounding of :math:`w` (:math:`\epsilon_{32}|w^*|` a
    step) is carried with the contraction :math:`\rho = |1 - \eta\lambda|`, adding :math:`\epsilon_{32}|w^*|/(1-\rho)`.
    Twice their sum bounds the gap of the last iterates."""
    from sims import logistic as L
    from sims.reference.logistic import _bench_data

    z, weights, _ = _bench_data()
    a_star = L.gd(z, weights, 0.5, [0.0], 4000, keep_last=1)["w"][0, 0, 0, 0]
    lam = L.hessian([a_star], z, weights)[0, 0]
    eta = np.linspace(0.3, 1.8, 12) / lam  # eta * lambda < 2: w* is attracting
    run = functools.partial(L.gd, z, weights, eta, np.linspace(-2, 2, 4), 1500, keep_last=2)
    a, b = run(), run(dtype="float32")
    _float32_outputs({"w": b["w"]})
    rho = np.abs(1 - eta * lam)[:, None]
    tol = 2 * EPS32 * (64 * np.sum(weights * np.abs(z)) / lam + abs(a_star) / (1 - rho))
    assert np.all(np.abs(a["w"][:, :, -1, 0] - a_star) < 1e-9)  # the float64 runs did converge
    assert np.all(np.abs(b["w"][:, :, -1, 0] - a["w"][:, :, -1, 0]) <= tol)
    np.testing.assert_array_equal(b["diverged"], a["diverged"])


@SLOW
def test_logistic_float32_kernel_holds_no_float64_and_attractors_refuse_float32(monkeypatch):
    import sims.logistic as L

    texts = _compiled_kernels(monkeypatch, L)
    L.gd(np.array([1.0, -0.5, 2.0]), None, [0.5, 1.0], np.zeros((2, 1)), 5, dtype="float32")
    _no_float64(texts)
    with pytest.raises(ValueError, match=r"dtype: .* or 'float64' .*got 'float32'; float32 is refused here: the period"):
        L.attractors(np.array([1.0, -0.5, 2.0]), None, 0.5, [0.0], dtype="float32")


# ----------------------------------------------------------------------------- sims.sde.paths

def _sde_grid(n: int) -> dict:
    return {"key": jax.random.split(jax.random.key(0), n), "x0": np.full((n, 1), 1.5), "eta": np.full(n, 0.1),
            "omega": np.full(n, 1.0), "sigma1": np.full(n, 1.0)}


def test_sde_noise_free_compressed_paths_in_float32_follow_float64_to_round_off():
    r"""DCSGD on :math:`x^4/4` (N = 4, Bernoulli masks at :math:`q = 1/2`, no gradient noise). The masks' thresholds
    are exact in float32 here (the Binomial(4, 1/2) CDF is a multiple of 1/16), so both precisions keep the same
    agents at every step. A step :math:`x^+ = x(1 - \eta c x^2)`, :math:`c = K/(Nq) \le 2`, has
    :math:`|d\log x^+/d\log x| \le 1` while :math:`3\eta c x^2 \le 2` (:math:`x \le 1.5`): relative errors are carried,
    not amplified, and each step adds three roundings, so :math:`|x^{32}_T/x^{64}_T - 1| \le 3T\epsilon_{32}`; the
    recorded loss :math:`x^4/4` has four times that, plus its own rounding."""
    from sims import sde as S

    T = 400
    cfg = S.Config(problem="quartic", algo="dcsgd", n_agents=4, compressor="bernoulli", noise="none", n_steps=T,
                   n_record=4)
    a, b = S.paths(cfg, _sde_grid(256)), S.paths(cfg, _sde_grid(256), dtype="float32")
    _float32_outputs(b)
    np.testing.assert_allclose(b["x"], a["x"], rtol=3 * T * EPS32)
    np.testing.assert_allclose(b["loss"], a["loss"], rtol=(12 * T + 1) * EPS32)


def test_sde_noisy_paths_in_float32_agree_with_float64_in_law():
    r"""DCSGD on :math:`x^2/2` with affine Gaussian noise (:math:`\sigma_0 = 1`, :math:`\sigma_1 = 1/2`) and Bernoulli
    masks, 200 steps (20 relaxation times :math:`1/\eta`: stationary), where the second moment is proportional to
    the noise's variance. Float32 draws its noise from JAX's float32 sampler, a stream of its own, so the two
    precisions agree in law: :math:`E x_T^2` within 5 standard errors of the difference of two independent means
    (10,000 paths: 5 SE is 10 % of the moment, so a noise scale off by 10 %, 21 % in variance, fails), and no path
    diverges in either."""
    from sims import sde as S

    n, T = 10_000, 200
    cfg = S.Config(problem="quadratic", algo="dcsgd", n_agents=4, compressor="bernoulli", noise="gaussian", n_steps=T,
                   n_record=1)
    grid = {**_sde_grid(n), "x0": np.ones((n, 1)), "sigma0": np.full(n, 1.0), "sigma1": np.full(n, 0.5)}
    a, b = S.paths(cfg, grid, chunk_size=n), S.paths(cfg, grid, chunk_size=n, dtype="float32")
    _float32_outputs(b)
    xa, xb = a["x"][:, 0] ** 2, b["x"][:, 0].astype(np.float64) ** 2
    se = math.hypot(xa.std(ddof=1), xb.std(ddof=1)) / math.sqrt(n)
    assert abs(xa.mean() - xb.mean()) < 5 * se, (xa.mean(), xb.mean(), se)
    assert not a["diverged"].any() and not b["diverged"].any()


@SLOW
def test_sde_float32_kernels_hold_no_float64_and_rand_k_is_refused(monkeypatch):
    """Every algorithm, noise law, schedule and toy problem (and the MLP) compiles without a float64 value in float32;
    the rand-k compressor, whose ranking of float32 uniforms would meet ties, is refused."""
    import sims.sde.algorithms as A
    from sims import sde as S

    texts = _compiled_kernels(monkeypatch, A)
    grid = _sde_grid(4)
    for algo, noise, comp, schedule, problem in (("dcsgd", "gaussian", "bernoulli", "constant", "quartic"),
                                                 ("dcsgd", "student_t", "bernoulli", "inv_sqrt", "cosh2"),
                                                 ("dsignsgd", "cauchy", "none", "inv_sqrt", "logcosh"),
                                                 ("dsignsgd", "student_t", "none", "constant", "quadratic"),
                                                 ("dcsgd_normalized", "cauchy", "bernoulli", "constant", "quadratic"),
                                                 ("dsgd", "gaussian", "none", "constant", "quartic")):
        cfg = S.Config(problem=problem, algo=algo, n_agents=4, compressor=comp, noise=noise, schedule=schedule,
                       n_steps=8, n_record=2, nu=2.5 if algo == "dsignsgd" else 3.0)
        _float32_outputs(S.paths(cfg, grid, dtype="float32"))
    mlp = {"key": grid["key"], "x0": np.full((4, S.MLP_DIM), 0.1), "eta": np.full(4, 0.1),
           "omega": np.tile([0.0, 1.0, 2.0, 3.0], (4, 1))}
    S.paths(S.Config(problem="mlp", algo="dcsgd", compressor="bernoulli", n_steps=4, n_record=1), mlp, dtype="float32")
    _no_float64(texts)
    with pytest.raises(ValueError, match=r"dtype, cfg.compressor: rand_k .* d = 49"):
        S.paths(S.Config(problem="mlp", algo="dcsgd", compressor="rand_k", n_steps=4, n_record=1), mlp, dtype="float32")


# ----------------------------------------------------------------------------- sims.linear_hessian.gd_sweep

def test_linear_hessian_gd_sweep_in_float32_follows_float64():
    r"""The bench's linear-net GD sweep (widths (6, 4, 3), whitened one-hot data, small init), at step sizes
    :math:`0.3..0.9\,\eta_c` (converging) and :math:`0.9..2.7\,\eta_c` (most blow up). Converging runs: each step rounds
    the products of the gradient (a few roundings of at most :math:`\epsilon_{32}` relative, three factors deep), and
    along the flat directions of the minimum manifold nothing contracts them, so they add up: within
    :math:`3T\epsilon_{32}\max|\theta|` of the float64 run. Both precisions flag the same runs; a float32 run is flagged
    at its first non-finite iterate, which comes no later than float64's first :math:`|\theta| > 10^{100}`, and at
    most 2 steps earlier: past float32's overflow (:math:`3\times10^{38}`) the gradient, of degree :math:`2L - 1 = 3`,
    triples the exponent of :math:`|\theta|` every step."""
    from sims.linear_hessian import net as S
    from sims.reference.linear_hessian import _train_problem

    T = 400
    theta0, X, Y, etas = _train_problem((6, 4, 3), 16, 0)
    a = S.gd_sweep(theta0, X, Y, (6, 4, 3), etas, steps=T)
    b = S.gd_sweep(theta0, X, Y, (6, 4, 3), etas, steps=T, dtype="float32")
    _float32_outputs({k: np.asarray(v) for k, v in b.items()})
    ta = np.asarray(a["theta"])
    assert not np.asarray(a["diverged"]).any() and not np.asarray(b["diverged"]).any()
    assert np.max(np.abs(np.asarray(b["theta"]) - ta)) <= 3 * T * EPS32 * np.max(np.abs(ta))
    a, b = (S.gd_sweep(theta0, X, Y, (6, 4, 3), 3 * etas, steps=T, dtype=d) for d in (None, "float32"))
    da, db = np.asarray(a["diverged_step"]), np.asarray(b["diverged_step"])
    np.testing.assert_array_equal(np.asarray(b["diverged"]), np.asarray(a["diverged"]))
    assert np.asarray(a["diverged"]).sum() > 8
    gap = (da - db)[da >= 0]
    assert np.all((gap >= 0) & (gap <= 2)), (da, db)


@SLOW
def test_linear_hessian_float32_program_holds_no_float64():
    from sims.linear_hessian import net as S
    from sims.reference.linear_hessian import _train_problem

    theta0, X, Y, etas = (jnp.asarray(v, jnp.float32) for v in _train_problem((6, 4, 3), 4, 0))
    program = S._sweep_program(jax.default_backend())
    _no_float64([program.lower(jnp.broadcast_to(theta0, (4, theta0.size)), X, Y, etas, widths=(6, 4, 3),
                               steps=5).compile().as_text()])


# ----------------------------------------------------------------------------- sims.eos.poly_gd, catapult_gd

def test_eos_poly_gd_in_float32_holds_the_self_stabilization_cycle_to_round_off():
    r"""GD on the self-stabilization toy (:math:`a = 3.8`, :math:`\beta = 0.1`, :math:`\eta = 0.5`) started on its
    2-cycle :math:`(r, y^\star)` (:func:`theory.eos.selfstab_equilibrium`), whose two-step Jacobian :math:`M`
    (:func:`theory.eos.selfstab_cycle_jacobian`) has spectral radius :math:`\rho = 0.933` and eigenvectors of condition
    number :math:`\kappa = 1.31`. Each float32 step rounds the start (once), the gradient (its 9-term sums, ~4 roundings
    of values below :math:`S\max|w|`, :math:`\eta S \le 2`) and the update (2): at most :math:`k = 12` roundings of
    :math:`\max|w|` a step, :math:`(\|M\| + 1)k\epsilon_{32}\max|w|` per two steps. Carried by :math:`M^n`
    (:math:`\|M^n\| \le \kappa\rho^n`) they stay below :math:`\kappa\epsilon_{32}\max|w|[1 + (\|M\|+1)k/(1-\rho)]` for
    every iterate, block end and :math:`x, y` block mean (of :math:`x^2`: :math:`2\max|x|` times that, plus the
    block sum's own :math:`2\epsilon_{32}` relative per addend). Both precisions stay on the cycle, not diverging."""
    from sims import eos as E
    from theory.eos import selfstab_coefficients, selfstab_cycle_jacobian, selfstab_equilibrium

    a_, beta, eta, T, blocks = 3.8, 0.1, 0.5, 4000, 20
    ys, s2 = selfstab_equilibrium(a_, beta, eta)
    w0 = np.array([math.sqrt(s2), ys])
    run = functools.partial(E.poly_gd, selfstab_coefficients(a_, beta), [eta], w0, n_steps=T, n_blocks=blocks)
    a, b = run(), run(dtype="float32")
    _float32_outputs(b)
    assert a["final"].dtype == np.float64
    M = selfstab_cycle_jacobian(a_, beta, eta)
    rho, vecs = np.max(np.abs(np.linalg.eigvals(M))), np.linalg.eig(M)[1]
    wmax = np.max(np.abs(w0))
    tol = np.linalg.cond(vecs) * EPS32 * wmax * (1 + (np.linalg.norm(M, 2) + 1) * 12 / (1 - rho))
    assert rho < 1 and not a["diverged"].any() and not b["diverged"].any()
    assert np.max(np.abs(b["final"] - a["final"])) <= tol
    assert np.max(np.abs(b["block_end"] - a["block_end"])) <= tol
    assert np.max(np.abs(b["block_mean"][..., :2] - a["block_mean"][..., :2])) <= tol
    x2 = a["block_mean"][..., 2]
    assert np.max(np.abs(b["block_mean"][..., 2] - x2)) <= 2 * wmax * tol + 2 * (T // blocks) * EPS32 * np.max(x2)


def test_eos_poly_gd_float32_flags_divergence_at_its_own_bound():
    r"""GD on :math:`x^2/2` at :math:`\eta = 3` multiplies :math:`x` by -2 per step (exactly, in both precisions):
    float64 flags the first :math:`|x_k| > 10^{50}` (k = 167: :math:`2^{166} < 10^{50} < 2^{167}`), float32 the first
    :math:`|x_k| >` ``DIVERGENCE_BOUND32`` = 1e8 (k = 27: :math:`2^{26} < 10^8 < 2^{27}`); both NaN every block from
    the diverging one on."""
    from sims import eos as E

    C = np.zeros((3, 3))
    C[2, 0] = 0.5
    for dtype, bound in ((None, E.DIVERGENCE_BOUND), ("float32", E.DIVERGENCE_BOUND32)):
        out = E.poly_gd(C, [3.0, 1.0], [1.0, 0.0], n_steps=400, n_blocks=4, dtype=dtype)
        want = math.ceil(math.log2(bound))
        assert list(out["diverged"]) == [True, False] and out["diverged_step"][0] == want, (dtype, out["diverged_step"])
        assert np.all(np.isnan(out["block_mean"][0, want // 100:])) and np.all(np.isfinite(out["block_mean"][1]))


def _catapult_draws(keys, width: int) -> np.ndarray:
    """The float64 initial vectors (u, v) of :func:`sims.eos.catapult_gd`'s runs, drawn here as the kernel draws them."""
    return np.stack([np.stack([np.asarray(jax.random.normal(k, (width,))) for k in jax.random.split(key)])
                     for key in keys])


def test_eos_catapult_gd_in_float32_follows_float64():
    r"""The uv model (width 64, 4 seeds). Float32 draws :math:`u, v` as the float64 draws' uniforms rounded to 23 bits:
    each :math:`z` moves by at most :math:`2^{-23}/\varphi(z)` (the Gaussian quantile's slope), which moves
    :math:`\lambda_0 = \|z\|^2/m` by at most :math:`\delta_0 = 2\sum|z|2^{-23}/\varphi(z)/\|z\|^2` relative (computed from
    the draws). Below :math:`c = 2` (here :math:`|1 - c| \le 1/2`) :math:`f` contracts at least 2x a step while the
    directions orthogonal to it do not move, so after 40 steps the update is below half an ulp and both iterates are
    frozen: at most 40 steps of ~4 roundings of each coordinate, and the :math:`2m`-term sums of :math:`\lambda` (each
    at most :math:`2m\epsilon_{32}` relative), so :math:`\eta\lambda` at the end within
    :math:`2\delta_0 + (320 + 8m)\epsilon_{32}` relative (:math:`\eta = c/\lambda_0` carries the draw's gap once more).
    Through the catapult (:math:`2 < c < 4`) the phase is the same: a loss spike (here at least 7x the initial loss in
    float64) and a landing at :math:`\eta\lambda < 2`. Past :math:`c = 4` both diverge, float32 first (its bound 1e8 is below 1e50 and the runs
    agree, to :math:`\delta_0`, until the blow-up)."""
    from sims import eos as E

    keys, m = jax.random.split(jax.random.key(0), 4), 64
    cs = np.array([0.5, 1.0, 1.5, 2.5, 3.0, 3.5, 4.5, 6.0])
    run = functools.partial(E.catapult_gd, keys, cs, width=m, n_steps=400, n_blocks=8)
    a, b = run(), run(dtype="float32")
    _float32_outputs(b)
    z = _catapult_draws(keys, m).reshape(len(keys), -1)
    phi = np.exp(-z * z / 2) / math.sqrt(2 * math.pi)
    delta0 = np.sum(2 * np.abs(z) * 2.0**-23 / phi, axis=1) / np.sum(z * z, axis=1)
    np.testing.assert_allclose(b["lambda0"], a["lambda0"], rtol=0, atol=np.max(delta0 * a["lambda0"]) + 2 * m * EPS32)
    lo, mid, hi = slice(0, 3), slice(3, 6), slice(6, 8)
    tol = 2 * delta0 + (320 + 8 * m) * EPS32
    assert np.all(np.abs(b["final_eta_lambda"][lo] / a["final_eta_lambda"][lo] - 1) <= tol)
    for o in (a, b):
        assert not o["diverged"][:6].any() and o["diverged"][6:].all()
        assert np.all(o["final_eta_lambda"][mid] < 2) and np.all(o["max_loss_ratio"][mid] > 5)
    da, db = a["diverged_step"][hi], b["diverged_step"][hi]
    assert np.all((db > 0) & (db <= da)), (da, db)


def test_eos_mlp_track_refuses_float32_and_every_eos_dtype_is_validated():
    from sims import eos as E

    X, Y = np.ones((4, 3)), np.zeros(4)
    base = dict(widths=(3, 2, 1), n_steps=2)
    with pytest.raises(ValueError, match=r"^dtype: .*'float64' .*got 'float32'; float32 is refused here: the held"):
        E.mlp_track(jax.random.key(0)[None], 0.5, X, Y, window=1, dtype="float32", **base)
    for bad in ("float16", "f4", 3):
        with pytest.raises(ValueError, match=r"^dtype: expected None"):
            E.poly_gd(np.eye(3), 0.1, [0.1, 0.1], n_steps=2, n_blocks=1, dtype=bad)
        with pytest.raises(ValueError, match=r"^dtype: expected None"):
            E.catapult_gd(jax.random.key(0)[None], 1.0, width=4, n_steps=2, n_blocks=1, dtype=bad)
        with pytest.raises(ValueError, match=r"^dtype: expected None"):
            E.mlp_run(jax.random.key(0), 0.5, X, Y, every=1, dtype=bad, **base)
    with pytest.raises(ValueError, match=r"^keys, dtype: .*threefry2x32 keys.*got rbg"):
        E.catapult_gd(jax.random.key(0, impl="rbg")[None], 1.0, width=4, n_steps=2, n_blocks=1, dtype="float32")
    with pytest.raises(ValueError, match=r"^keys, dtype: .*threefry2x32 keys.*got rbg"):
        E.mlp_run(jax.random.key(0, impl="rbg"), 0.5, X, Y, every=1, dtype="float32", **base)


# the five methods of sims.eos.mlp_run on a (3, 6, 1) tanh network and 16 samples: GD, heavy ball and Nesterov well
# below the edge (eta S <= 0.9), gradient flow, and the central flow at eta = 1.5, where it holds S at 2/eta
_MLP = dict(eta=[0.5, 0.5, 0.5, 1.5, 0.5], momentum=[0.0, 0.5, 0.5, 0.0, 0.0], widths=(3, 6, 1), substeps=2,
            lanczos_iter=4)


def _mlp_data():
    X = np.random.default_rng(0).standard_normal((16, 3))
    return X, np.sin(X[:, 0])


def test_eos_mlp_run_in_float32_follows_float64():
    r"""All five methods for 20 steps (40 substeps) on the same keys in both precisions.

    The float32 run starts from the float64 draws rounded through their uniforms' top 23 bits (each :math:`z` moved by
    at most :math:`2^{-23}/\varphi(z)`: :math:`\theta_0` within :math:`\delta_0 = \|2^{-23}/\varphi(z)\|/\|z\|`
    relative, computed from the draws, 2e-6 here). Each substep then rounds the forward and backward passes (sums of
    at most 16 samples, 6 and 3 units: :math:`\gamma_{16} + \gamma_6 + \gamma_3 \approx 25\epsilon_{32}` relative),
    the update (2) and the Lanczos refresh (its Ritz value exact for an operator within
    :math:`\sim\sqrt P\epsilon_{32}\lVert H\rVert`, :math:`\sqrt{24} \approx 5`): at most :math:`k = 32` roundings
    a substep. None of these runs amplifies a perturbation (GD, heavy ball and Nesterov at :math:`\eta S \le 0.9 < 2`;
    the flows move by Euler steps of :math:`\eta/2`, and the central flow pulls :math:`S` back to :math:`2/\eta` at
    rate :math:`\omega = 1`), so to first order the errors add: sharpness, loss and the block means of the loss,
    :math:`\sigma^2` and :math:`\sigma^2 S` within :math:`\delta_0 + Nk\epsilon_{32}` (:math:`N = 40`: 7.8e-5)
    relative. (Measured: 1.6e-6 at most.) The instantaneous :math:`\sigma^2` is a quotient whose numerator holds
    :math:`\kappa(S - 2/\eta)`, a difference of nearly equal numbers that carries :math:`S`'s float32 error unaveraged,
    so only its support (where the constraint is active) is compared; the second Ritz value of a warm start converged
    to round-off is set by that round-off's direction and is not compared at all."""
    from sims import eos as E

    X, Y = _mlp_data()
    keys = jax.random.split(jax.random.key(5), 5)
    run = functools.partial(E.mlp_run, keys, X=X, Y=Y, methods=E.MLP_METHODS, n_steps=20, every=10, **_MLP)
    a, b = run(), run(dtype="float32")
    _float32_outputs(b)
    assert a["sharpness"].dtype == np.float64
    delta0 = 0.0
    for key in keys:
        theta0 = np.asarray(E.mlp_init(jax.random.split(key)[0], _MLP["widths"]))
        z = np.concatenate([theta0[:18] * math.sqrt(3), theta0[18:] * math.sqrt(6)])  # the draws, before 1/sqrt(fan_in)
        phi = np.exp(-z * z / 2) / math.sqrt(2 * math.pi)
        delta0 = max(delta0, np.linalg.norm(2.0**-23 / phi) / np.linalg.norm(z))
    tol = delta0 + 40 * 32 * EPS32
    assert not a["diverged"].any() and not b["diverged"].any()
    for name in ("sharpness", "loss", "mean_loss", "mean_sigma2", "mean_sigma2_sharpness"):
        np.testing.assert_allclose(b[name], a[name], rtol=tol, atol=0, err_msg=name)
    np.testing.assert_array_equal(b["sigma2"] > 0, a["sigma2"] > 0)
    assert np.all(a["sigma2"][3, 1:] > 0) and np.all(a["sigma2"][[0, 1, 2, 4]] == 0)  # the constraint is exercised


def test_hvp_top_eigenpair_on_a_float32_problem_computes_in_float32():
    r"""``sims.hvp.top_eigenpair`` from a float32 start: float32 eigenvalue, Ritz vector and second Ritz value (eager
    and under ``jit``, a matvec in float32 or closing over float64 data), against the float64 run on the same (float32)
    matrix. :math:`A = Q\,\mathrm{diag}(\lambda)Q^\top`, :math:`n = 40`, :math:`\lambda` in :math:`[-1, 1]` and a top
    eigenvalue 3 (gap 2), 20 Lanczos steps: float64 lands on the top eigenvalue to round-off. In float32 every matvec
    is within :math:`\gamma_n\lVert A\rVert_F \approx n\epsilon_{32}\lVert A\rVert_F` of :math:`Av` (a unit :math:`v`:
    each row's dot product, Cauchy-Schwarz), and twice-is-enough Gram-Schmidt keeps the basis orthonormal to
    :math:`O(\epsilon_{32})` per vector against the :math:`m` others: the Ritz value is exact for a perturbation of
    :math:`A` of norm at most :math:`E = (n\lVert A\rVert_F + 2m\lVert A\rVert)\epsilon_{32}` (1.6e-5 here; a float32
    matvec of float64 data rounds once more, :math:`\epsilon_{32}\lVert A\rVert`), and the Ritz vector within
    :math:`E/\mathrm{gap}` (Davis-Kahan) plus its own rounding. (Measured: 5e-7 and 8e-8.)"""
    from sims import hvp as H

    n, m = 40, 20
    rng = np.random.default_rng(0)
    Q = np.linalg.qr(rng.standard_normal((n, n)))[0]
    A32 = ((Q * np.concatenate([np.linspace(-1, 1, n - 1), [3.0]])) @ Q.T).astype(np.float32)
    A32 = (A32 + A32.T) / 2
    A = A32.astype(np.float64)
    v0 = rng.standard_normal(n).astype(np.float32)
    S64, u64, _ = H.top_eigenpair(lambda v: jnp.asarray(A) @ v, v0.astype(np.float64), m)
    assert abs(float(S64) - np.linalg.eigvalsh(A)[-1]) <= 1e-12
    norm = np.linalg.norm(A, 2)
    E_ = (n * np.linalg.norm(A) + (2 * m + 1) * norm) * EPS32
    for pair in (H.top_eigenpair(lambda v: jnp.asarray(A32) @ v, v0, m),
                 jax.jit(lambda v: H.top_eigenpair(lambda x: jnp.asarray(A) @ x, v, m))(v0)):
        assert [x.dtype for x in pair] == [jnp.float32] * 3
        assert abs(float(pair[0]) - float(S64)) <= E_
        u = np.asarray(pair[1], np.float64)
        assert min(np.max(np.abs(u - s * np.asarray(u64))) for s in (1, -1)) <= E_ / 2 + EPS32


def test_hvp_largest_eigenvalue_and_hutchinson_keep_float32_eagerly_and_under_jit():
    r"""``largest_eigenvalue`` of a float32 stack answers in float32 eagerly as under ``jit`` (the same bits), within
    the backward-stable bound :math:`cP\epsilon_{32}\lVert A\rVert` (c = 8) of LAPACK's float64 answer on the same
    float32 matrices. ``hutchinson_trace`` on a float32 model compiles without float64, and its probes are fair signs:
    for :math:`f = w_0w_1` every probe gives :math:`z^\top Hz = 2z_0z_1 = \pm2`, whose mean over m = 4000 probes is
    within 4 standard errors (:math:`2/\sqrt m`) of 0; float64 probes are still JAX's ``rademacher`` draws, bit for bit.
    """
    from sims import hvp as H

    rng = np.random.default_rng(7)
    B = rng.standard_normal((3, 9, 9)).astype(np.float32)
    A32 = (B + np.swapaxes(B, 1, 2)) / 2
    eager, jitted = H.largest_eigenvalue(A32), jax.jit(H.largest_eigenvalue)(jnp.asarray(A32))
    assert eager.dtype == jitted.dtype == jnp.float32
    np.testing.assert_array_equal(np.asarray(eager), np.asarray(jitted))
    ref = np.linalg.eigvalsh(A32.astype(np.float64))[:, -1]
    assert np.all(np.abs(np.asarray(eager, np.float64) - ref) <= 8 * 9 * EPS32 * np.abs(ref).max())

    def f(p):
        return p["w"][0] * p["w"][1]

    m = 4000
    run = jax.jit(lambda p, k: H.hutchinson_trace(f, p, k, num_samples=m))
    w32 = {"w": jnp.ones(2, jnp.float32)}
    assert "f64" not in run.lower(w32, jax.random.key(0)).compile().as_text()
    quad = np.asarray(run(w32, jax.random.key(3)).samples)
    assert quad.dtype == np.float32 and set(np.unique(quad)) == {-2.0, 2.0}
    assert abs(quad.mean()) <= 4 * 2 / np.sqrt(m)
    z = np.asarray(jax.random.rademacher(jax.random.key(3), (m, 2), dtype=jnp.float64))
    np.testing.assert_array_equal(np.asarray(run({"w": jnp.ones(2)}, jax.random.key(3)).samples), 2 * z[:, 0] * z[:, 1])


@SLOW
def test_eos_float32_kernels_hold_no_float64(monkeypatch):
    """GD, heavy ball and Nesterov on the polynomial losses and the catapult sweep: no float64 value after compilation."""
    import sims.eos as E

    texts = _compiled_kernels(monkeypatch, E)
    out = E.poly_gd(np.eye(3), [0.1, 0.2, 0.3], [0.1, 0.2], n_steps=4, n_blocks=2, momentum=[0.0, 0.3, 0.3],
                    nesterov=[False, False, True], dtype="float32")
    _float32_outputs(out)
    _float32_outputs(E.catapult_gd(jax.random.split(jax.random.key(0), 2), [1.0, 3.0], width=8, n_steps=4, n_blocks=2,
                                   dtype=np.float32))
    assert len(texts) == 2
    _no_float64(texts)


@SLOW
def test_eos_mlp_run_float32_kernel_and_lanczos_hold_no_float64(monkeypatch):
    """mlp_run's program (all five methods: one program, with the Lanczos refresh, the third-derivative contraction and
    the central flow's sigma^2) and sims.hvp.top_eigenpair on its own: no float64 value after compilation."""
    import sims.eos as E
    from sims import hvp as H

    texts = _compiled_kernels(monkeypatch, E)
    X, Y = _mlp_data()
    _float32_outputs(E.mlp_run(jax.random.split(jax.random.key(5), 5), X=X, Y=Y, methods=E.MLP_METHODS, n_steps=4,
                               every=2, dtype="float32", **_MLP))
    assert len(texts) == 1
    A = jnp.asarray(np.diag(np.arange(1.0, 7.0)), jnp.float32)
    texts.append(jax.jit(lambda v: H.top_eigenpair(lambda x: A @ x, v, 4)).lower(jnp.ones(6, jnp.float32))
                 .compile().as_text())
    _no_float64(texts)
