"""Tests written against surviving mutants of theory/sign_floor/ and sims/sign_floor.py (tests/mutation.py).

Each compares two independently obtained numbers:

* the Bernoulli sign chain's Cesàro mean after a burn-in, its records and its schedule against a
  NumPy replay of the same sign draws (the replay re-derives the threshold from the theory);
* the mixed-noise chain near the largest allowed multiplicative noise, with vanishing additive
  noise, against the closed-form multiplicative floor (its lattice must reach far into the slow
  geometric tail, or the truncated mass shows up well above round-off);
* the floor constants and the parity moments at numeric arguments against hand values and a
  direct sum over the numeric ladder law (the symbolic results hide some wrong arguments);
* ladder's default chain count, noiseless SGD in closed form, the schedule law (multiplicative
  through a halving of its grid scale, additive at vanishing noise) against exact recursions,
  and the counter-based words against the bijection an odd stride guarantees;
* the one-step log-moment E log(1 - c(1 + sigma xi))^2 (quadrature split at its log singularity)
  against a closed form: (xi - x*)^2 is a noncentral chi-square with one degree of freedom, a
  Poisson mixture of central ones whose log-means are log 2 + digamma(k/2).

The chain reuses the static setup of tests/test_sign_floor.py's Bernoulli replay (T = 300, 3 records,
chunks of 8, d = 1), so in one process it compiles nothing new.
"""
import math

import jax
import numpy as np
import sympy as sp
from scipy import special, stats

from sims import sign_floor as S
from tests.test_sign_floor import _replay_flips  # the NumPy replay of the Bernoulli kernels' signs
from theory import sign_floor as T


def test_bernoulli_chain_cesaro_mean_after_burn_in_records_and_schedule_match_a_replay():
    r"""signSGD under multiplicative noise (the Bernoulli kernel), WSD schedule, burn-in 100 of T = 300:
    ``mean_f`` is :math:`\frac{1}{T-b}\sum_{b<k\le T} f(x_k)` (divided by T - b, not T), the records are
    f at steps 100, 200, 300 and the step is :math:`\eta\min\{1, (T-k)/(\phi T)\}`; all from a NumPy replay
    of the same signs (round-off only: rel 1e-9)."""
    key, eta, x0, h, sg, burn, cd, n_steps = jax.random.key(11), 0.05, 0.1234, 2.0, 1.3, 100, 0.5, 300
    out = S.simulate(key, eta=eta, x0=np.array([x0]), h=h, method="sign", sigma_m=sg, cooldown=cd, T=n_steps,
                     n_rec=3, burn=burn, n_chains=2, chunk_size=8)
    k = np.arange(n_steps)
    steps = eta * np.minimum(1.0, (n_steps - k) / (cd * n_steps))
    for j in range(2):
        x, f = x0, []
        for eta_k, s in zip(steps, _replay_flips(key, j, n_steps, sg)):
            x -= eta_k * np.sign(x) * s
            f.append(0.5 * h * x * x)
        f = np.array(f)  # f[i] = f(x_(i+1))
        assert math.isclose(out["mean_f"][0, j], f[burn:].mean(), rel_tol=1e-9)
        np.testing.assert_allclose(out["curve"][0, j], f[[99, 199, 299]], rtol=1e-9)
        assert math.isclose(out["final_f"][0, j], f[-1], rel_tol=1e-9)
    assert not out["diverged"].any() and np.all(out["diverged_step"] == -1)


def test_mixed_chain_reaches_deep_into_the_slow_geometric_tail():
    r"""At sigma_m = 7.5 (p = 0.447, tail ratio r = p/(1-p) = 0.81, close to the 0.45 limit) and
    sigma_a = 1e-12 the mixed chain is the multiplicative one, whose floor
    :math:`\tfrac a2 E_\pi x^2` is :func:`theory.sign_floor.second_moment` in closed form. The lattice
    reaches 80 e-folds into the tail, so the truncated mass is ~e^-80 and the two agree to round-off of the
    cumulative log-sums (~1e-14; the test allows 1e-12). A lattice cut after about 60 sites would miss
    a mass r^60 ~ 1e-6 of the tail and the floor by ~1e-8."""
    a, eta, sg = 2.0, 0.1, 7.5
    p = T.away_probability(sg)
    assert 0.44 < p < 0.45
    exact = a / 2 * T.second_moment(p, eta, eta / 2)
    assert math.isclose(T.mixed_floor(a, eta, sg, 1e-12), exact, rel_tol=1e-12)


def test_floor_constants_at_numeric_contractions_match_the_hand_values():
    r"""``c_mid_sym`` / ``c_unif_sym`` also take a number :math:`e = 1 - 2p` in :math:`(0, 1]`: the ladder
    sums at that :math:`p` give the hand values :math:`1/(4e^2) - 1/8` and :math:`1/(4e^2) - 1/12`
    (:math:`e = 1/2`: 7/8 and 11/12; :math:`e = 1`, no wrong signs: 1/8 and 1/6). The symbolic results cannot
    tell :math:`p = (1-e)/2` from :math:`(1+e)/2` (the closed form is symmetric under :math:`p \to 1-p`);
    a number can (:math:`p \ge 1/2` is no contracting chain)."""
    half = sp.Rational(1, 2)
    assert T.c_mid_sym(half) == sp.Rational(7, 8) and T.c_mid_sym(1) == sp.Rational(1, 8)
    assert T.c_unif_sym(half) == sp.Rational(11, 12)
    assert math.isclose(float(T.c_mid_sym(0.5)), 7 / 8, rel_tol=1e-14)


def test_ladder_runs_one_chain_per_configuration_by_default():
    """``ladder`` without ``n_chains`` runs one walk per configuration (outputs of shape (G, 1)), and that walk is
    chain 0 of an explicit run on the same key (run keys are fold_in(key, g n + j))."""
    args = dict(sigma=1.3, theta=0.3, T=12, burn=4, chunk_size=8)
    one = S.ladder(jax.random.key(8), **args)
    three = S.ladder(jax.random.key(8), n_chains=3, **args)
    for name in ("m2", "m2_even", "m2_odd", "n", "n_prev", "theta"):
        assert one[name].shape == (1, 1), (name, one[name].shape)
        np.testing.assert_array_equal(one[name][:, 0], three[name][:, 0])


def test_noiseless_sgd_records_final_and_cesaro_mean_are_the_closed_form():
    r"""SGD without noise on :math:`\tfrac12\sum_i h_i x_i^2` (the chains of the shared noisy quadratic):
    :math:`x_k = (1-\eta h)^k x_0`, so :math:`f_k = \tfrac12\sum_i h_i(1-\eta h_i)^{2k}x_{0,i}^2` in closed form;
    the records are :math:`f_4, f_8, f_{12}`, ``final_f`` is :math:`f_{12}` (the last record, not an earlier
    one) and ``mean_f`` the mean of :math:`f_5..f_{12}` after a burn-in of 4 (round-off: rel 1e-12)."""
    eta, x0, h = 0.05, np.array([0.4, -0.1]), np.array([1.0, 3.0])
    out = S.simulate(jax.random.key(3), eta=eta, x0=x0, h=h, method="sgd", burn=4, n_chains=1, T=12, n_rec=3,
                     chunk_size=8)
    k = np.arange(13)[:, None]
    f = 0.5 * np.sum(h * (1 - eta * h) ** (2 * k) * x0**2, axis=1)  # f_0 .. f_12
    np.testing.assert_allclose(out["curve"][0, 0], f[[4, 8, 12]], rtol=1e-12)
    assert math.isclose(out["final_f"][0, 0], f[12], rel_tol=1e-12)
    assert math.isclose(out["mean_f"][0, 0], f[5:].mean(), rel_tol=1e-12)


def test_parity_moments_at_numeric_arguments_match_a_direct_sum():
    r"""``parity_second_moments_sym`` at numbers (:math:`p = 1/5`, :math:`\eta = 1`, :math:`c = 1/5`) against the
    direct sums :math:`2\sum_{n\ \rm even/odd}\pi(n)(c+n\eta)^2` over the numeric two-ladder law
    :func:`theory.sign_floor.ladder_pmf` (tail beyond |n| = 400 below 1e-200; rel 1e-12)."""
    even, odd = T.parity_second_moments_sym(p=sp.Rational(1, 5), eta=1, c=sp.Rational(1, 5))
    n = np.arange(-400, 401)
    w = T.ladder_pmf(0.2, n) * (0.2 + n) ** 2
    assert math.isclose(float(even), 2 * w[n % 2 == 0].sum(), rel_tol=1e-12)
    assert math.isclose(float(odd), 2 * w[n % 2 == 1].sum(), rel_tol=1e-12)


def test_sign_schedule_law_is_exact_through_a_halving_of_the_scale():
    r"""Steps :math:`\eta = (0.32, 0.16, 0.01)`: the grid's scale :math:`\max(\eta_k, 16\min\eta)` halves after
    the first step (a rescale by exactly 2, which maps each cell onto two cells: no projection error). From
    :math:`x_0 \sim U(1, 2)` the walk never reaches 0, so :math:`x_{k+1} = x_k - \eta_k s_k` with
    :math:`P(s_k = -1) = p` and :math:`E x^2` follows the exact recursion
    :math:`E x_{k+1}^2 = E x_k^2 - 2\eta_k(1-2p)E x_k + \eta_k^2`, :math:`E x_{k+1} = E x_k - \eta_k(1-2p)`
    (round-off: rel 1e-12)."""
    a, sg, eta = 1.5, 1.0, np.array([0.32, 0.16, 0.01])
    mean_f, err = T.sign_schedule_mean_f(a, eta, sg, x0_low=1.0, x0_high=2.0)
    e = 1 - 2 * T.away_probability(sg)
    m1, m2, want = 1.5, 7 / 3, [a / 2 * 7 / 3]
    for step in eta:
        m1, m2 = m1 - step * e, m2 - 2 * step * e * m1 + step**2
        want.append(a / 2 * m2)
    np.testing.assert_allclose(mean_f, want, rtol=1e-12)
    assert np.all(err < 1e-12)


def test_words_are_distinct_across_the_whole_32_bit_counter_range():
    r"""A block's counters run up to :math:`B d - 1 < 2^{32}` (``simulate`` refuses more), and distinct counters
    must give distinct words: the stride :math:`s_1 | 1` is odd for every seed, so :math:`c \mapsto c k_1 + s_0`
    is a bijection of 32-bit words (and so is the mixer). Checked on 16 counters :math:`j\,2^{28}` spread
    over the whole range, for seeds whose :math:`s_1` is even (0, 4, 6, 2^31): an even stride would map
    :math:`j` and :math:`j + 8` (or 0 and :math:`2^{31}`) to the same word."""
    counters = np.arange(16, dtype=np.uint64) << 28
    for s1 in (0, 4, 6, 2**31):
        w = np.asarray(S.words(np.array([12345, s1], np.uint32), counters))
        assert len(set(w.tolist())) == 16, (s1, w)


def test_additive_schedule_law_keeps_the_deterministic_oscillation_on_its_grid():
    r"""Additive noise far below the gradient (:math:`\sigma = 10^{-4}`, :math:`a = \eta = 1`): from
    :math:`x_0 \sim U(1/8, 1/4)` the away probability :math:`\Phi(-a|x|/\sigma) < \Phi(-1000)` vanishes, so the
    walk oscillates :math:`x_0, x_0 - 1, x_0, \dots` and :math:`E x^2` alternates between
    :math:`E x_0^2 = 7/192` and :math:`E x_0^2 - 2E x_0 + 1`. The start lies on cell edges and steps are whole
    cells, so the grid law is exact; its grid must reach the swing to :math:`x_0 - 1`, beyond the start and
    the (here tiny) stationary width."""
    m0 = 7 / 192
    m1 = m0 - 2 * 0.1875 + 1
    mean_f, err = T.sign_schedule_mean_f(1.0, np.ones(4), 1e-4, "additive", x0_low=0.125, x0_high=0.25)
    np.testing.assert_allclose(mean_f, 0.5 * np.array([m0, m1, m0, m1, m0]), rtol=1e-12)
    assert np.all(err < 1e-12)


def _log_step_by_poisson_mixture(c: float, sigma: float) -> float:
    r""":math:`E\log(1-c(1+\sigma\xi))^2 = 2\log(c\sigma) + E\log(\xi-x^*)^2`, :math:`x^* = (1-c)/(c\sigma)`;
    :math:`(\xi-x^*)^2 \mid J \sim \chi^2_{1+2J}`, :math:`J \sim \mathrm{Poisson}(x^{*2}/2)`, and
    :math:`E\log\chi^2_k = \log 2 + \psi(k/2)`."""
    xs = (1 - c) / (c * sigma)
    half = xs * xs / 2
    j = np.arange(int(half + 40 * math.sqrt(half + 1) + 50))  # the Poisson mass beyond is below 1e-300
    return 2 * math.log(c * sigma) + math.log(2) + float(np.sum(stats.poisson.pmf(j, half) * special.digamma(0.5 + j)))


def test_one_step_log_moment_matches_the_noncentral_chi_square_mixture():
    """The quadrature (split at x*) against the Poisson mixture, with the singularity in the Gaussian's bulk (x* = 1,
    0.58, 0.22), at its centre (c = 1), beyond the step that overshoots (c = 1.5) and far out (x* = 40).

    Tolerance 1e-9 absolute: the two agree to ~1e-15 where x* is in the bulk and to 3e-13 at x* = 40 (round-off in
    a Poisson sum of ~10^3 terms and the quadrature's 1e-12 relative target)."""
    for c, sigma in ((0.5, 1.0), (0.3, 2.0), (0.9, 0.5), (1.0, 1.0), (1.5, 0.7), (0.2, 0.1)):
        assert abs(T.sgd_mult_log_step(c, sigma) - _log_step_by_poisson_mixture(c, sigma)) < 1e-9, (c, sigma)


def test_one_step_log_moment_without_noise_is_the_deterministic_log():
    """sigma = 0: log(1 - c)^2, which is -inf at c = 1 (the step lands on the minimizer)."""
    assert T.sgd_mult_log_step(1.0, 0.0) == -math.inf
    assert T.sgd_mult_log_step(0.5, 0.0) == 2 * math.log(0.5)
    assert T.sgd_mult_log_step(3.0, 0.0) == 2 * math.log(2.0)


# ------------------------------------------------------------------------------------------- claim power
# Issue 27: each survivor of the claims-only mutation run (tests/mutation.py --claims-only) that the claims now see is
# pinned here. The mistake is the tool's own mutation, applied to a private copy of the theory module (the working
# module is untouched); the copy's function is monkeypatched in where the claim calls it. The experiment is read
# first (so nothing patched reaches the cache) and the claim runs uncached (``Claim.run``). Control: unpatched, the
# same checks pass.


import pytest  # noqa: E402

import theory.sign_floor.multiplicative as TM  # noqa: E402
import theory.sign_floor.sgd as TS  # noqa: E402
import theory.sign_floor.signum as TN  # noqa: E402
from paper_checks import Budget, get_claim  # noqa: E402
from paper_checks.sign_floor import experiments as E  # noqa: E402
from tests import mutation as M  # noqa: E402

QUICK = Budget("quick")


def _failed_checks(claim_id: str) -> list[str]:
    """The quantities of the claim's checks whose prediction is rejected now (empty: the claim passes)."""
    return [c.quantity for c in get_claim(claim_id).run(QUICK).checks if not c.prediction().accepted]


# (claim, experiment, theory module, function the claim calls, the site, the check that must fail)
_CASES = {
    "odd_parity_moment_eta_divided": (
        "singh2026.sign_mult_period_two", E.period_two, TM, "parity_second_moments",
        ("odd = 2 * A * (r * _geometric_sum(", "(2 * k + 1) * eta", "operator"), "E x²/η²"),
    "floor_at_offset_cubed": (
        "singh2026.sign_mult_constant_free_of_a_eta", E.float_constant_grid, TS, "floor",
        ("value = a / 2 * ((c**2 + (eta - c) ** 2) / 2 + excess)", "2 + (eta - c)", "constant"), "E f/(aη²)"),
}


@pytest.mark.parametrize("name", sorted(_CASES))
def test_a_survivor_of_the_claims_only_run_now_fails_its_claim(monkeypatch, name):
    """Survivors of ``--claims-only`` (seed 0, n 16) and the check that now sees each one:

    * the odd-parity moment with (2k + 1)/eta for (2k + 1) eta: invisible at eta = 1, where the claim used to
      evaluate it; at eta = 1e-2 the parity prediction is off;
    * signSGD's floor with c^3 for c^2 at the lattice offset: E f/(a eta^2) is no longer C_mid(1).
    """
    claim_id, experiment, module, function, site, check = _CASES[name]
    experiment(QUICK)
    assert _failed_checks(claim_id) == []
    monkeypatch.setattr(T, function, getattr(M.mutant_module(module, *site), function))
    failed = _failed_checks(claim_id)
    assert failed and all(q.startswith(check) for q in failed), failed


def test_beta_zero_cell_law_without_its_drift_fails_the_signum_claim(monkeypatch):
    """Survivor: the beta = 0 cell law of the Signum operator without its drift a u (``edges - mu`` -> ``edges``). The
    claim now evaluates the operator at beta = 0 against signSGD's closed form; without the drift the lattice walk is
    symmetric, has no stationary law, and the operator's box grows until the state cap refuses it. The copy's cap is
    lowered to 2e4 states so that this happens in milliseconds (the claim's true beta = 0 boxes hold at most 5.6e3);
    the copy serves only beta = 0 (the mutated line is in the beta = 0 branch, and the beta > 0 rows need more states)."""
    E.signum_constants(QUICK)
    mutant = M.mutant_module(TN, "cdf = _cdf((edges[None, :] - mu) / s", "edges[None, :] - mu", "drop-term")
    mutant.MAX_STATES = 20_000
    true, asked = T.signum_constant, []

    def at_zero_mutated(beta, *args, **kwargs):
        asked.append(beta)
        return (mutant.signum_constant if beta == 0 else true)(beta, *args, **kwargs)

    monkeypatch.setattr(T, "signum_constant", at_zero_mutated)
    with pytest.raises(ValueError, match="states"):
        get_claim("singh2026.signum_floor_constant").run(QUICK)
    assert asked[-1] == 0.0  # refused at beta = 0, after every beta > 0 row was computed


def test_noiseless_ladder_that_steps_away_half_the_time_fails_the_constant_claim(monkeypatch):
    """Survivor in the simulator: the host away-probability at sigma = 0 set to 1 (``np.where(sigma > 0, p, 0.0)`` ->
    ``1.0``; the threshold clips it to 1/2), so the noiseless ladder becomes a symmetric random walk. The claim now
    runs the ladder at sigma = 0, where the deterministic oscillation gives C_mid(0) = 1/8 exactly. The experiment is
    recomputed with the mistake through its uncached function and handed to the claim (nothing reaches the cache)."""
    import paper_checks.sign_floor.multiplicative as claims

    E.ladder_constants(QUICK)
    assert _failed_checks("singh2026.sign_mult_floor_constant") == []
    mutant = M.mutant_module(S, "return np.where(sigma > 0, p, 0.0)", "0.0)", "constant")
    monkeypatch.setattr(S, "away_probability_host", mutant.away_probability_host)
    data = E.ladder_constants.fn(QUICK)
    monkeypatch.setattr(claims, "ladder_constants", lambda budget: data)
    assert _failed_checks("singh2026.sign_mult_floor_constant") == [
        "noiseless end C_mid(0) (ladder at σ = 0, offset η/2; per chain)"]
