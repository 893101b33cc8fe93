r"""Tests that pin what the mutation run of topic ``sde`` (tests/mutation.py, seeds 0 and 1) found unpinned.

Each test compares the code with a value obtained independently of it: a number worked out by hand from the
stated formula (closed forms in ``math``/``scipy.special``, never the code's own output), or an identity that
holds exactly on a degenerate case (one agent, a one-dimensional problem, zero sign noise in a coordinate).

* the DSignSGD direction of ONE agent under noise of scale :math:`0 < s \le 1` is a sign, so every entry is
  exactly :math:`\pm 1` (a switch to the noise-free ``sign(grad)`` at the wrong scale gives 0 at grad = 0);
* Theorem 4.3's step restriction in one dimension, :math:`\ell/K` with
  :math:`K = L_1\sigma/(2N) + (L_0 + L_1)M`, Gaussian :math:`\ell = \mathrm{erf}(1/\sqrt2)`, :math:`M = 2/\sqrt{2\pi}`
  (d = 1 is a valid dimension);
* the SDE generator's one-step change on :math:`x^2/2`:
  :math:`-hgm + \tfrac{h^2}2(1 - m^2)/N`, :math:`m = \mathrm{erf}(g/(\sqrt2\sigma))`, plus the corrected term
  :math:`\tfrac{h^2}2\,g\,m\,2\rho(g/\sigma)/\sigma`;
* the sufficient step at :math:`L_1 = 0`, where the defining equation is linear:
  :math:`h = 2\langle g, m\rangle/(L_0[(1 - 1/N)\|m\|^2 + d/N])`;
* the Lyapunov exponent of DCSGD with two agents and no multiplicative noise, a finite sum over the four kept
  sets: :math:`q^2\log|1 - \eta a/q| + 2q(1-q)\log|1 - \eta a/(2q)|` (one agent cannot tell a wrong
  drop probability: a dropped step multiplies by 1, whose log is 0);
* the sufficient step at :math:`L_1 > 0` plugged into its defining equation
  :math:`h\varphi(L_1h\sqrt d) = \langle g, m\rangle/((L_0 + L_1\|g\|)[\dots])`,
  :math:`\varphi(a) = (e^a - 1 - a)/a^2`, and its value 0 at a stationary point;
* ``paths`` with one scalar start per run (a 1-D ``grid['x0']``) and with chunks of one run: the same paths as
  starts of shape (runs, 1) in one chunk;
* (claim-sensitivity run at the Binomial-mask commit, seed 0) ``coupled_weak_paths``' ``diverged_at``, a recorded step no
  claim reads: the frozen discrete state is GD's after ``diverged_at - 1`` steps (a NumPy loop);
* (claim-sensitivity run, seed 0) two valid inputs no claim passes: ``mean_sign_mc`` with n = 2 draws (the fewest
  with a variance) and ``escape_paths`` from a scalar start at curvature 0.5, against GD's log-rate by hand;
* (issue 27) ``compagnoni2025.ms_threshold_per_model`` turns ``failed`` when the SDEs' Itô diffusion in
  ``theory.sde`` is 20 % too large: the SDE edges are measured on the SDEs, not inferred from the theory's rates.
* (issue 33 audit) ``compagnoni2025.theorem42_factor_exact`` turns ``failed`` when Theorem 4.2's factor is read without
  the dimension (d = 1 inside it): the ratio measured from one-step draws in d = 8 rejects it; and
  ``compagnoni2025.sign_descent_condition`` when steplab's sufficient step drops the sign noise's share d/N: the
  Monte Carlo critical steps fall below the mutated step (their minimum ratio to it is about 0.03, not >= 1);
  ``compagnoni2025.normalization_degree`` when the factor counts the noise additively (66 SE off at the edges) and
  ``compagnoni2025.dcsgd_ms_threshold`` when the one-step factor adds the variances instead of compounding them (23 SE);
  ``compagnoni2025.sign_descent_phi_slack`` when the Grönwall factor is halved (min h*/h_phi about 0.5, not >= 1).
"""
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import special

from sims import sde as S
from theory import sde as T

GAUSS_ELL = math.erf(1 / math.sqrt(2))          # m(1) = 2 Phi(1) - 1
GAUSS_M = 2 / math.sqrt(2 * math.pi)            # 2 rho(0)


def _gauss_mean_sign(g, s):
    return special.erf(np.asarray(g, float) / (math.sqrt(2) * s))


def test_one_agent_sign_direction_is_a_sign_for_noise_scale_below_one():
    """n_agents = 1, grad = 0, sigma0 = 0.5: the single agent's sign of pure noise is +-1 in every coordinate,
    never the noise-free sign(0) = 0 (that branch is for a zero noise scale only)."""
    cfg = S.Config(problem="quartic", algo="dsignsgd", n_agents=1, noise="gaussian", n_steps=4, n_record=2)
    d = np.asarray(S.direction(jax.random.key(0), cfg, jnp.zeros(8), 0.0, 0.5, 0.0))
    assert np.array_equal(np.abs(d), np.ones(8)), d
    # zero noise scale: the direction is the sign of the gradient itself
    d0 = np.asarray(S.direction(jax.random.key(9), cfg, jnp.array([0.2, -0.3, 0.0, 0, 0, 0, 0, 0]), 0.0, 0.0, 0.0))
    assert np.array_equal(d0, [1.0, -1.0] + [0.0] * 6)


def test_theorem43_step_in_one_dimension_by_hand():
    L0, L1, scale, n = 2.0, 1.0, 0.5, 4
    K = L1 * 1 * scale / (2 * n) + math.sqrt(1) * (L0 + L1) * GAUSS_M
    assert T.theorem43_step(L0, L1, 1, scale, n, "gaussian") == pytest.approx(GAUSS_ELL / K, rel=1e-13)


@pytest.mark.parametrize("n", [1, 3])
def test_sign_generator_change_on_the_quadratic_by_hand(n):
    x, h, s = 0.3, 0.2, 0.5                      # quadratic x^2/2: g = x, curvature 1
    m = float(_gauss_mean_sign(x, s))
    first = -h * x * m + h**2 / 2 * (1 - m**2) / n
    rho = math.exp(-0.5 * (x / s) ** 2) / math.sqrt(2 * math.pi)
    corrected = first + h**2 / 2 * x * m * 2 * rho / s
    args = ("quadratic", s, n, "gaussian")
    assert T.sign_generator_change(np.array([x]), h, *args) == pytest.approx(first, rel=1e-12)
    assert T.sign_generator_change(np.array([x]), h, *args, model="corrected_sde") == pytest.approx(corrected, rel=1e-12)


def test_sufficient_step_at_L1_zero_is_the_linear_root():
    g, s, L0, n = np.array([0.3, -0.7]), 0.5, 2.0, 2
    m = _gauss_mean_sign(g, s)
    second = (1 - 1 / n) * float(m @ m) + g.size / n
    expected = 2 * float(g @ m) / (L0 * second)
    assert T.sign_sufficient_step(g, s, L0, 0.0, n, "gaussian") == pytest.approx(expected, rel=1e-12)
    # the rival that forgets the sign noise's share d/N has a larger step
    assert T.sign_sufficient_step(g, s, L0, 0.0, n, "gaussian", rule="no_noise") > 1.5 * expected


def test_dcsgd_lyapunov_two_agents_without_noise_by_hand():
    eta, a, omega = 0.3, 1.0, 1.0
    q = 1 / (1 + omega)
    expected = q**2 * math.log(abs(1 - eta * a / q)) + 2 * q * (1 - q) * math.log(abs(1 - eta * a / (2 * q)))
    assert T.dcsgd_lyapunov(eta, a, 2, omega, 0.0) == pytest.approx(expected, rel=1e-12)


def _phi(a):
    return (math.expm1(a) - a) / a**2             # (e^a - 1 - a)/a^2, a > 0


def test_sufficient_step_with_L1_solves_its_equation_by_hand():
    """L1 > 0: the returned h satisfies h phi(L1 h sqrt d) = <g, m>/((L0 + L1|g|)[(1 - 1/N)|m|^2 + d/N]),
    every factor computed here from the formula (a slip that drops L1|g| from the Lipschitz factor moves h)."""
    g, s, L0, L1, n = np.array([0.3, -0.7, 1.1]), 0.5, 2.0, 1.5, 4
    m = _gauss_mean_sign(g, s)
    rhs = float(g @ m) / ((L0 + L1 * float(np.linalg.norm(g))) * ((1 - 1 / n) * float(m @ m) + g.size / n))
    h = T.sign_sufficient_step(g, s, L0, L1, n, "gaussian")
    assert h * _phi(L1 * h * math.sqrt(g.size)) == pytest.approx(rhs, rel=1e-10)


def test_sufficient_step_is_zero_at_a_stationary_point():
    """grad = 0: the mean sign is 0, no step decreases f in expectation (only the sign noise moves x), so 0."""
    assert T.sign_sufficient_step(np.zeros(3), 0.5, 2.0, 1.0, 4, "gaussian") == 0.0
    assert T.sign_sufficient_step(np.zeros(3), 0.5, 2.0, 0.0, 4, "gaussian") == 0.0


def test_mean_sign_mc_takes_two_draws_the_fewest_with_a_variance():
    """n = 2 is the smallest sample with an unbiased variance, so it is accepted and n = 1 is refused (a validation
    bound one too strict survived the claims, which draw thousands). Far from 0 every sign is +1: mean 1, variance 0."""
    r = S.mean_sign_mc(jax.random.key(5), np.array([1e9, -1e9]), 1.0, "gaussian", 2)
    assert np.array_equal(np.asarray(r["mean"]), [1.0, -1.0]) and np.array_equal(np.asarray(r["var"]), [0.0, 0.0])
    with pytest.raises(ValueError, match="n"):
        S.mean_sign_mc(jax.random.key(5), np.array([1.0]), 1.0, "gaussian", 1)


def test_escape_paths_scalar_start_and_flat_curvature_by_hand():
    """escape_paths from a scalar start on lam x^2/2 with lam = 0.5 < 1 (both valid; the claims call the grid form
    only): GD's per-time log-rate of f is exactly (2/eta) log|1 - eta lam|, by hand."""
    eta, lam = 0.1, 0.5
    r = S.escape_paths(1.0, eta, problem="quadratic", lam=lam, gd_steps=20, ode_steps=4)
    assert float(r["gd_rate"]) == pytest.approx(2 / eta * math.log(1 - eta * lam), rel=1e-12)
    assert not bool(r["gd_grew"])


def _contract_paths(x0, **kw):
    # the shapes and configuration of the contract rows of sde.paths (tests/contract_sde.py)
    cfg = S.Config(problem="quartic", algo="dcsgd", n_agents=3, compressor="bernoulli", noise="gaussian", n_steps=4,
                   n_record=2)
    keys = jax.random.split(jax.random.key(11), 3)
    grid = {"key": keys, "x0": x0, "eta": np.full(3, 0.1), "omega": np.full(3, 1.0), "sigma1": np.full(3, 0.5)}
    return S.paths(cfg, grid, **kw)


def test_paths_take_scalar_starts_and_one_run_chunks():
    """A 1-D grid['x0'] (one scalar start per run) is the same problem as starts of shape (runs, 1), and chunks of
    one run give the same paths as one chunk of all runs (the same keys drive the same draws)."""
    ref = _contract_paths(np.full((3, 1), 1.2))
    for out in (_contract_paths(np.full(3, 1.2)), _contract_paths(np.full((3, 1), 1.2), chunk_size=1)):
        for name in ("loss", "x", "diverged", "diverged_at"):
            assert np.array_equal(np.asarray(out[name]).reshape(3, -1), np.asarray(ref[name]).reshape(3, -1)), name


# ----------------------------------------------------------------------------- claims against mutated theory (issue 27)
def test_ito_diffusion_twenty_percent_off_fails_the_ms_threshold_claim(monkeypatch):
    """``compagnoni2025.ms_threshold_per_model`` with the Itô term of every SDE's second-moment growth 20 % too large
    (``theory.sde.dcsgd._ms_growth``: the generator's sigma^2/2 phi'' with sigma^2 = 1.2 eta a^2 x^2 E): the SDE edges it
    predicts move by 4-23 %; the edges measured on the SDEs themselves reject them. The claim runs unmutated first
    (it must pass, and its experiment is then cached with the true theory)."""
    import functools

    import sympy as sp

    from paper_checks import Budget, get_claim
    from theory.sde import dcsgd  # defines the growth and every caller of it: the patch must land there

    claim = get_claim("compagnoni2025.ms_threshold_per_model")
    assert claim.status(claim.run(Budget("quick"))) == "passed"
    original = dcsgd._ms_growth.__wrapped__

    def more_diffusion(model):
        growth, (eta, a, e) = original(model)
        if model == "discrete":
            return growth, (eta, a, e)
        return sp.expand(growth + sp.Rational(1, 5) * eta * a**2 * e), (eta, a, e)

    monkeypatch.setattr(dcsgd, "_ms_growth", functools.lru_cache(maxsize=8)(more_diffusion))
    monkeypatch.setattr(dcsgd, "_ms_threshold_sym", functools.lru_cache(maxsize=8)(dcsgd._ms_threshold_sym.__wrapped__))
    assert T.ms_threshold("first_order", 2.0, 1, 0.0, 1.0) == pytest.approx(2 / (2.0 * 1.2 * 1.0))  # in place
    assert claim.status(claim.run(Budget("quick"))) == "failed"


def test_coupled_weak_paths_diverged_at_is_the_frozen_step():
    """No noise, eta lam = 3 on lam x^2/2: GD doubles |x| per step, the curvature-corrected SDE grows by e^(3/2) per
    step and crosses the bound 1e100 first (near step 150); every path freezes there, the discrete one after
    diverged_at - 1 GD steps x+ = -2x (exact in floats, a NumPy loop). A recorded step no claim reads (a
    claim-sensitivity survivor): an off-by-two in it breaks the identity."""
    r = S.coupled_weak_paths(jax.random.key(0), np.array([1.0]), 1.0, problem="quadratic", T=400.0, max_steps=400,
                             substeps=8, lam=3.0)
    at = int(r["diverged_at"])
    assert bool(r["diverged"]) and 100 < at < 400, at
    x = np.array([1.0])
    for _ in range(at - 1):
        x = x - 3.0 * x
    np.testing.assert_array_equal(np.asarray(r["x"]), x)


# ------------------------------------------------------------------- claims against mutated theory (issue 33 audit)
def _status_quick(claim_id: str) -> str:
    from paper_checks import Budget, get_claim

    claim = get_claim(claim_id)
    return claim.status(claim.run(Budget("quick")))


def test_factor_without_the_dimension_fails_the_theorem42_claim(monkeypatch):
    r"""``compagnoni2025.theorem42_factor_exact`` with :func:`theory.sde.normalization_factor` read without the dimension
    (:math:`d = 1` inside it, the rival its docstring names: the noise counted per coordinate, not through the trace of
    its covariance). The ratio of the bound to DCSGD's threshold measured from one-step draws then sits at
    :math:`F_d/F_1 \ne 1` in d = 8, which the draws reject; in d = 1 nothing changes, so the claim must see the
    dimension. The unmutated claim passes first (and its experiment is then cached with the true theory)."""
    import theory.sde as TS

    assert _status_quick("compagnoni2025.theorem42_factor_exact") == "passed"
    original = TS.normalization_factor

    def without_dimension(n_agents, omega, sigma1, d=1):
        return original(n_agents, omega, sigma1, 1)

    # by hand: N = 4, omega = 1, sigma1 = 1, d = 8 -> 1 + (1 + 8 * 2)/4 = 5.25; the mutant gives 1 + (1 + 2)/4 = 1.75
    assert original(4, 1.0, 1.0, 8) == pytest.approx(5.25, rel=1e-15)
    assert without_dimension(4, 1.0, 1.0, 8) == pytest.approx(1.75, rel=1e-15)
    monkeypatch.setattr(TS, "normalization_factor", without_dimension)
    assert _status_quick("compagnoni2025.theorem42_factor_exact") == "failed"


def test_sufficient_step_without_the_noise_share_fails_the_sign_descent_claim(monkeypatch):
    r"""``compagnoni2025.sign_descent_condition`` with steplab's sufficient step computed without the sign noise's share
    :math:`d/N` of :math:`E\|D\|^2` (the mistake its statement names: "Dropping the noise share d/N ... breaks
    sufficiency"; a mean-field, noise-free analysis of the signed step). The mutated step exceeds the critical step
    located by Monte Carlo at the starts where the noise dominates, so the sufficiency bound
    :math:`\min h^\ast_{MC}/h_{\rm suff} \ge 1` fails. The unmutated claim passes first."""
    import theory.sde as TS

    assert _status_quick("compagnoni2025.sign_descent_condition") == "passed"
    original = TS.sign_sufficient_step

    def without_noise_share(grad, scale, L0, L1, n_agents, noise="student_t", nu=None, rule="steplab"):
        return original(grad, scale, L0, L1, n_agents, noise, nu, rule="no_noise" if rule == "steplab" else rule)

    # the mutant really moves the step: at L1 = 0 the root is linear, 2<g,m>/(L0[(1 - 1/N)|m|^2 + d/N]) with and
    # without d/N (one coordinate, g = sigma = 1, Gaussian m = erf(1/sqrt 2), N = 8)
    m = math.erf(1 / math.sqrt(2))
    true_step = 2 * m / ((1 - 1 / 8) * m**2 + 1 / 8)
    assert original(np.array([1.0]), 1.0, 1.0, 0.0, 8, "gaussian") == pytest.approx(true_step, rel=1e-12)
    assert without_noise_share(np.array([1.0]), 1.0, 1.0, 0.0, 8, "gaussian") == pytest.approx(
        2 * m / ((1 - 1 / 8) * m**2), rel=1e-12)
    monkeypatch.setattr(TS, "sign_sufficient_step", without_noise_share)
    assert _status_quick("compagnoni2025.sign_descent_condition") == "failed"


def test_factor_counting_noise_additively_fails_the_normalization_degree_claim(monkeypatch):
    r"""``compagnoni2025.normalization_degree`` with the normalization's factor counting the noise only additively,
    :math:`F' = 1 + (\bar\omega + \sigma_1^2)/N` (the compounding term :math:`\sigma_1^2\bar\omega` dropped; the rival the
    claim names): the rule's mean-square edge measured from one-step draws stays at :math:`c^\ast = 2` in the true
    :math:`F`'s units, so in the mutated units it reads :math:`2F'/F`, 0.81 at :math:`\omega = 63` (:math:`\sigma_1 = 0.5`,
    N = 4). The unmutated claim passes first."""
    import theory.sde as TS

    assert _status_quick("compagnoni2025.normalization_degree") == "passed"
    original = TS.normalization_factor

    def additive(n_agents, omega, sigma1, d=1):
        return 1.0 + (float(np.mean(omega)) + d * sigma1**2) / n_agents

    # by hand at N = 4, omega = 63, sigma1 = 0.5: F = 1 + (63 + 0.25 * 64)/4 = 20.75, F' = 1 + 63.25/4 = 16.8125
    assert original(4, 63.0, 0.5) == pytest.approx(20.75, rel=1e-15)
    assert additive(4, 63.0, 0.5) == pytest.approx(16.8125, rel=1e-15)
    monkeypatch.setattr(TS, "normalization_factor", additive)
    assert _status_quick("compagnoni2025.normalization_degree") == "failed"


def test_variances_added_fail_the_dcsgd_threshold_claim(monkeypatch):
    r"""``compagnoni2025.dcsgd_ms_threshold`` with the one-step factor's excess
    :math:`\overline{\omega + \sigma_1^2}/N` (the compression and noise variances added, not compounded: the rival the
    claim names) where :math:`\overline{\omega + \sigma_1^2(1+\omega)}/N` belongs: the mean multipliers measured along
    simulated paths reject it in the cells where both are present. The unmutated claim passes first."""
    import theory.sde as TS

    assert _status_quick("compagnoni2025.dcsgd_ms_threshold") == "passed"
    original = TS.dcsgd_ms_factor

    def added(eta, a, n_agents, omega, sigma1):
        return (1 - eta * a) ** 2 + (eta * a) ** 2 * float(np.mean(np.asarray(omega) + sigma1**2)) / n_agents

    # by hand: eta a = 1/2, N = 4, omega = 1, sigma1 = 1: 1/4 + (1/4)(1 + 2)/4 = 0.4375; added: 1/4 + (1/4)(2)/4 = 0.375
    assert original(0.25, 2.0, 4, 1.0, 1.0) == pytest.approx(0.4375, rel=1e-15)
    assert added(0.25, 2.0, 4, 1.0, 1.0) == pytest.approx(0.375, rel=1e-15)
    monkeypatch.setattr(TS, "dcsgd_ms_factor", added)
    assert _status_quick("compagnoni2025.dcsgd_ms_threshold") == "failed"


def test_remainder_factor_halved_fails_the_phi_slack_claim(monkeypatch):
    r"""``compagnoni2025.sign_descent_phi_slack`` with the Grönwall factor :math:`\varphi(a) = (e^a - 1 - a)/a^2` halved
    (the Taylor remainder's 1/2 counted twice, :math:`\varphi(0) = 1/4`): steplab's condition with :math:`\varphi`
    then allows about twice the step near the quadratic limit, and the exact critical steps of the extremal functions
    (finite sums, computed without :math:`\varphi`) fall below it: :math:`\min h^\ast/h_\varphi \approx 0.5`, not
    :math:`\ge 1`. The unmutated claim passes first."""
    import theory.sde.sign_descent as sign_descent  # sign_sufficient_step reads the factor from its own module

    assert _status_quick("compagnoni2025.sign_descent_phi_slack") == "passed"
    original = sign_descent.sign_remainder_factor
    # by hand: phi(1) = e - 2
    assert original(1.0) == pytest.approx(math.e - 2, rel=1e-14)
    monkeypatch.setattr(sign_descent, "sign_remainder_factor", lambda a: original(a) / 2)
    assert _status_quick("compagnoni2025.sign_descent_phi_slack") == "failed"
