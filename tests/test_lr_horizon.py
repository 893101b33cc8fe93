r"""Unit tests of the lr_horizon topic: each number of :mod:`theory.lr_horizon` against one obtained another way.

* the constant step's closed form against the step-by-step moment recursion :func:`theory.nqm.moment_recursion`, and
  against the schedule path (:func:`theory.nqm.final_second_moment`) at a flat schedule;
* the sympy argmin and exponent against a numerical minimization and a finite difference;
* the bias constant :math:`A` against the model's own sum at large :math:`\tau`, and the binned spectrum against
  the mode-by-mode sum it stands for;
* the bounded search's optimum against its neighbours, the first-order step against the exact optimum (its error
  second order), the bend horizon against the corrected step it solves;
* the Monte Carlo simulator without noise against the closed form (a deterministic run), and divergence as data;
* its paired kernel (one draw per chain and step, shared by the step sizes) against the per-run simulator
  :func:`sims.nqm.simulate` it replaced, bit for bit;
* the NumPy reference (:mod:`sims.reference.lr_horizon`) against the simulator on its own draws, and its own draws
  against the closed form.
"""
import math

import jax
import numpy as np
import pytest
import sympy as sp
from scipy import optimize

import sims.lr_horizon as sl
import sims.nqm as sn
import theory.lr_horizon as th
import theory.nqm as tn
from sims.reference.lr_horizon import constant_step_numpy

pytestmark = pytest.mark.xdist_group("lr_horizon")

B, S, D = 2.0, 0.5, 100


def test_constant_closed_form_equals_the_moment_recursion_and_the_schedule_path():
    lam, w, load = th.spectrum(B, S, D)
    eta, n, sig2 = np.array([0.05, 0.4, 1.5]), 40, 0.3
    closed = th.constant_step_loss(eta, n, B, S, sig2, D)
    for e, c in zip(eta, closed):
        m = tn.moment_recursion(lam, np.full(n, e), load / lam, np.sqrt(sig2 * w * lam))[-1]
        # float64 round-off over 40 multiply-adds per mode
        assert c == pytest.approx(float(tn.expected_loss(lam, m)), rel=1e-12)
        assert c == pytest.approx(th.schedule_loss(e, n, 0.0, B, S, sig2, D), rel=1e-12)
    assert np.isinf(th.constant_step_loss(2.5, n, B, S, sig2, D))   # past 2/lambda_1: no stationary law


def test_sympy_argmin_and_exponent_against_numerics():
    a, c, s, n = 0.3, 0.7, 0.5, 1e4
    num = optimize.minimize_scalar(lambda le: a * (math.exp(le) * n) ** -s + c * math.exp(le),
                                   bounds=(-20, 2), method="bounded", options={"xatol": 1e-12}).x
    _, root, exponent = th.asymptotic_loss_expr()
    sym = float(root.subs({th._A: a, th._C: c, th._s: s, th._N: n}))
    assert sym == pytest.approx(math.exp(num), rel=1e-8)   # the bounded search to 1e-12 in log eta
    f = sp.lambdify(th._N, root.subs({th._A: a, th._C: c, th._s: s}))
    fd = (math.log(f(n * 1.001)) - math.log(f(n / 1.001))) / (2 * math.log(1.001))
    assert fd == pytest.approx(th.constant_exponent(s), rel=1e-9)   # a power law: the central difference is exact
    assert th.constant_exponent(s) == pytest.approx(-s / (s + 1), rel=1e-15)


def test_bias_constant_matches_the_models_sum_at_large_time():
    r""":math:`\tfrac12\sum_k w_k j_k^{-1-s\beta}e^{-2\tau\lambda_k} \to A\tau^{-s}`; the spectrum's cut-off and the top
    modes' sum-vs-integral error are below 1e-3 at :math:`\tau = 10^4`, d = 1e8."""
    for s in (0.5, 2.0):
        lam, w, load = th.spectrum(B, s, 10**8)
        tau = 1e4
        bias = 0.5 * np.sum(load * np.exp(-2 * tau * lam))
        a = math.gamma(s) / (2 * B * 2**s)
        assert bias == pytest.approx(a * tau**-s, rel=2e-3)


def test_binned_spectrum_stands_for_every_mode():
    lam, w, load = th.spectrum(B, S, 10**4)
    j = np.arange(1, 10**4 + 1, dtype=float)
    assert np.sum(w) == pytest.approx(10**4 - 0.5 + 0.5, rel=1e-12)   # 16 modes + (d + 1/2) - (16 + 1/2)
    # midpoint-in-log quadrature: relative error ~ (ln 10 / 24)^2 / 24 = 4e-4 on the binned part
    assert np.sum(w * lam) == pytest.approx(np.sum(j**-B), rel=4e-4)
    assert np.sum(load) == pytest.approx(np.sum(j ** -(1 + S * B)), rel=4e-4)


def test_optimum_is_a_minimum_and_the_first_order_step_is_second_order_close():
    for n in (1e4, 1e6):
        e, loss = th.optimal_constant_step(int(n), B, S, 0.02, 10**6)
        around = th.constant_step_loss(np.array([e * 0.999, e * 1.001]), int(n), B, S, 0.02, 10**6)
        assert np.all(around >= loss)
        e0 = float(th.asymptotic_step(n, B, S, 0.02, 10**6))
        e1 = float(th.corrected_step(n, B, S, 0.02, 10**6))
        shift = math.log(e1 / e0)
        # the leading order is off by about the shift; the corrected step by its square
        assert abs(e / e0 - 1) > 0.5 * abs(shift)
        assert abs(e / e1 - 1) < shift**2 + 1e-3


def test_bend_horizon_solves_the_corrected_step():
    n = th.bend_horizon(0.1, B, S, 0.02, 10**6)
    ratio = float(th.corrected_step(n, B, S, 0.02, 10**6) / th.asymptotic_step(n, B, S, 0.02, 10**6))
    assert ratio == pytest.approx(0.9, rel=1e-9)
    with pytest.raises(ValueError, match="gap"):
        th.bend_horizon(0.999, B, S, 0.02, 10**6)


def test_cutoff_law_is_the_truncated_bias_integral():
    r"""The incomplete-gamma bias :math:`\Gamma(s, 2\tau\lambda_{\rm end})/(2\beta(2\tau)^s)` against quadrature of
    :math:`\tfrac12\int_0^{d+1/2} j^{-1-s\beta}e^{-2\tau j^{-\beta}}dj`; far below the end the law is the power law,
    and the edge solves its own ratio."""
    from scipy import integrate, special

    for s, tau in ((0.5, 1e3), (0.5, 1e6), (2.0, 1e5)):
        d = 1000
        closed = (2 * tau) ** -s * math.gamma(s) * special.gammaincc(s, 2 * tau * (d + 0.5) ** -B) / (2 * B)
        # in u = log j the integrand is smooth; quad to its default 1.5e-8 relative
        num = integrate.quad(lambda u: 0.5 * math.exp(-s * B * u) * math.exp(-2 * tau * math.exp(-B * u)),
                             -10.0, math.log(d + 0.5), limit=200)[0]
        assert closed == pytest.approx(num, rel=1e-7)
    # 2 tau_0 lambda_end ~ 1e-5 at N = 1e4, d = 1e6: the incomplete gamma is the complete one to ~1e-3 relative
    assert float(th.cutoff_step(1e4, B, S, 1.0, 10**6)) == pytest.approx(float(th.asymptotic_step(1e4, B, S, 1.0, 10**6)),
                                                                         rel=2e-3)
    n = th.cutoff_horizon(0.1, B, S, 1.0, 1000)
    ratio = float(th.cutoff_step(n, B, S, 1.0, 1000) / th.asymptotic_step(n, B, S, 1.0, 1000))
    assert ratio == pytest.approx(0.9, rel=1e-8)


def test_cap_horizon_is_where_the_law_reaches_two_over_lambda1():
    n = th.cap_horizon(B, S, 0.02, 10**6)
    assert float(th.asymptotic_step(n, B, S, 0.02, 10**6)) == pytest.approx(2.0, rel=1e-12)


def test_peak_exponent_and_its_regime():
    assert th.peak_exponent(1.0, 2.0) == pytest.approx(1 / 3, rel=1e-15)
    assert th.peak_exponent(0.5, 2.0) == pytest.approx(0.0, abs=1e-15)   # the regimes' border: WSD's flat peak
    with pytest.raises(ValueError, match="s"):
        th.peak_exponent(0.25, 2.0)


def test_wsd_schedule_by_hand_and_its_optimum_is_local():
    np.testing.assert_allclose(th.wsd_schedule(2.0, 4, 0.5), [2.0, 2.0, 2.0, 1.0], rtol=1e-15)
    np.testing.assert_allclose(th.wsd_schedule(1.0, 4, 1.0), th.power_schedule(1.0, 4, 1.0), rtol=1e-15)
    for s in (0.25, 1.0):
        peak, frac, loss = th.optimal_wsd(200, B, s, 1.0, D)
        for dp, df in ((0.99, 0.0), (1.0, -0.02)):
            if peak * dp <= 2.0 and 0.01 <= frac + df <= 1.0:
                lam, w, load = th.spectrum(B, s, D)
                other = th._sched_loss(th.wsd_schedule(peak * dp, 200, frac + df), lam, w, load, 1.0)
                assert other >= loss * (1 - 1e-9)
    assert th.hard_regime(0.25, 2.0) and not th.hard_regime(0.5, 2.0) and not th.hard_regime(1.0, 2.0)


def test_power_schedule_by_hand():
    np.testing.assert_allclose(th.power_schedule(2.0, 4, 3.0), 2.0 * np.array([1, 0.75**3, 0.5**3, 0.25**3]),
                               rtol=1e-15)


def test_simulator_without_noise_is_the_closed_form_and_flags_divergence():
    eta = np.array([0.05, 0.2, 0.8])   # the contract row's shapes: one compiled kernel
    out = sl.constant_step_runs(jax.random.key(0), eta, 20, B, S, 0.0, D, n_chains=2)
    exact = th.constant_step_loss(eta, 20, B, S, 0.0, D)
    # the same products, rounded in another order: float64 round-off over 20 steps
    np.testing.assert_allclose(out["loss"], np.repeat(exact[:, None], 2, axis=1), rtol=1e-11)
    bad = sl.constant_step_runs(jax.random.key(0), np.array([1e3, 2e3, 3e3]), 60, B, S, 0.0, D, n_chains=2)
    assert bad["diverged"].all() and np.isinf(bad["loss"]).all()
    # |1 - 1000|^t first exceeds 1e150 (x0 of mode 1 is 1) at t = ceil(150 / log10(999))
    assert (bad["diverged_step"][0] == math.ceil(150 / math.log10(999.0))).all()


def _per_run(key, eta, n, beta, s, sigma2, d, chains):
    """The runs as sims.lr_horizon made them before its paired kernel: one sims.nqm.simulate run per (step, chain),
    paired (chain j's key at every step size), each hashing its own normals."""
    lam, w, load = th.spectrum(beta, s, d)
    out = sn.simulate(key, T=n, eta=np.repeat(np.asarray(eta, float)[:, None], n, axis=1), x0=np.sqrt(load / lam),
                      lam=lam, sigma_a=np.sqrt(sigma2 * w * lam), n_chains=chains, paired=True)
    flagged = np.asarray(out["diverged"])
    with np.errstate(over="ignore", invalid="ignore"):
        loss = 0.5 * np.sum(lam * np.asarray(out["final_x"]) ** 2, axis=-1)
    return {"loss": np.where(flagged, np.inf, loss), "diverged": flagged, "diverged_step": out["diverged_step"]}


@pytest.mark.parametrize("eta, n, sigma2, d, chains", [
    ([0.05, 0.8, 1e3], 60, 0.5, D, 2),        # 35 modes (noise rounded once per chain), the step 1e3 diverges
    ([0.3, 1.9, 5.0], 300, 1.0, 24, 3),       # 21 modes (noise stored per iterate), the step 5 diverges near 250
    ([0.05, 0.2, 0.8], 20, 0.0, D, 2),        # no noise
])
def test_paired_kernel_is_the_per_run_simulator_bit_for_bit(eta, n, sigma2, d, chains):
    r"""One normal per chain, mode and step, shared by the step sizes: the same values the per-run simulator hashed
    for each (step size, chain) run, and the same roundings, so the same final losses, flags and first bad steps bit
    for bit (``np.array_equal``), divergence included."""
    key = jax.random.key(11)
    new = sl.constant_step_runs(key, np.array(eta), n, B, S, sigma2, d, n_chains=chains)
    old = _per_run(key, eta, n, B, S, sigma2, d, chains)
    for name in ("loss", "diverged", "diverged_step"):
        assert new[name].dtype == old[name].dtype and np.array_equal(new[name], old[name]), name
    if eta[-1] > 2:
        assert new["diverged"][-1].all() and not new["diverged"][:2].any()


def test_reference_replays_the_simulators_draws_and_divergence():
    r"""The NumPy reference fed the simulator's own normals (chain :math:`j`'s run key ``fold_in(key, j)`` at every step
    size, paired; one recording block, so its additive key is the third of ``split(run key, 3)`` and step :math:`t`
    reads row :math:`t` of ``noise(additive key, (N, modes))``) gives the same final losses to round-off: the
    simulator rounds :math:`x - \eta(\lambda x + \sigma z)`, the reference :math:`(1 - \eta\lambda)x - \eta\sigma z`, a
    few ulps per step over 60 contracting steps, so rtol 1e-10; and the same divergence flags and first bad steps
    exactly (the step 1e3 crosses the bound near step 50, far from a rounding tie)."""
    eta = np.array([0.05, 0.8, 1e3])   # the divergence test's shapes
    key, n, chains = jax.random.key(4), 60, 2
    out = sl.constant_step_runs(key, eta, n, B, S, 0.5, D, n_chains=chains)
    modes = th.spectrum(B, S, D)[0].size
    z = np.stack([np.asarray(sn.noise(jax.random.split(jax.random.fold_in(key, j), 3)[2], (n, modes)))
                  for j in range(chains)])
    ref = constant_step_numpy(eta, n, B, S, 0.5, D, n_chains=chains, noise=z)
    np.testing.assert_array_equal(ref["diverged"], out["diverged"])
    np.testing.assert_array_equal(ref["diverged_step"], out["diverged_step"])
    assert out["diverged"][2].all() and not out["diverged"][:2].any()
    np.testing.assert_allclose(ref["loss"], out["loss"], rtol=1e-10)
    # without noise (the reference then draws nothing): the same deterministic runs
    quiet = sl.constant_step_runs(key, eta, n, B, S, 0.0, D, n_chains=chains)
    ref = constant_step_numpy(eta, n, B, S, 0.0, D, n_chains=chains, rng=np.random.default_rng(0))
    np.testing.assert_array_equal(ref["diverged_step"], quiet["diverged_step"])
    np.testing.assert_allclose(ref["loss"], quiet["loss"], rtol=1e-10)


def test_reference_draws_match_the_closed_form():
    """The reference's own paired draws: the mean final loss of 4000 chains at each step within 5 standard errors of
    the exact E L_N (theory.lr_horizon.constant_step_loss)."""
    eta = np.array([0.05, 0.2, 0.8])
    ref = constant_step_numpy(eta, 20, B, S, 0.5, D, n_chains=4000, rng=np.random.default_rng(0))
    exact = th.constant_step_loss(eta, 20, B, S, 0.5, D)
    se = ref["loss"].std(axis=1, ddof=1) / math.sqrt(4000)
    assert np.all(np.abs(ref["loss"].mean(axis=1) - exact) <= 5 * se), (ref["loss"].mean(axis=1), exact, se)


def test_bench_case_counts_its_work():
    """The bench case (built, not run): mode updates = steps x chains x horizon x represented modes."""
    from sims.reference.lr_horizon import bench_cases

    with pytest.raises(ValueError, match="scale"):
        bench_cases("huge")
    (case,) = bench_cases("small")
    assert case.unit == "mode updates" and case.work == 16 * 64 * 1000 * th.spectrum(2.0, 0.5, 1000)[0].size
    assert bench_cases("large")[0].work > case.work
