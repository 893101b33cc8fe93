"""Edge-of-stability tests that kill mutants the topic's other tests let through (see tests/mutation.py).

Two kinds. Pinned quantities: one number, with the reason the expected value holds written beside it (they
reuse the compiled programs of tests/contract_eos.py). Claim power (issue 27, "power you can measure"): each
test applies a plausible mistake to the theory a claim tests -- by monkeypatching the theory function the
claim calls, or by feeding the claim a model integrated with the mistake -- reruns the claim at the quick
budget on the same (cached) measurement, and asserts it fails; the unbroken theory passes on that same
measurement (the control). The experiments are read before any patch, so a patched function never reaches a
cached result, and claims are run with ``Claim.run`` (uncached), never ``run_claim``.
"""
from __future__ import annotations

import functools

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import theory.eos as th
from paper_checks import Budget, get_claim
from paper_checks.eos import experiments as E
from tests.contract_eos import _catapult

QUICK = Budget("quick")


def test_catapult_initial_loss_is_the_first_recorded_loss():
    r"""``loss0`` = :math:`\tfrac12 f_0^2`. At :math:`\eta\lambda_0 = 0.5` the output contracts every step
    (:math:`f_{t+1} \approx (1 - \eta\lambda_t) f_t` with :math:`\eta\lambda_t \le 0.5 + O(f^2/m)`), so the
    largest loss of the first block is the loss at step 0, which must equal ``loss0``."""
    out = _catapult(eta_lambda0=(0.5,))
    np.testing.assert_allclose(out["loss0"], out["block_max_loss"][..., 0], rtol=1e-12)
    assert np.all(out["block_loss"][..., -1] < out["loss0"])


# ------------------------------------------------------------------------------------------- claim power

def _status(claim_id: str) -> str:
    """The status the claim earns now (uncached: ``Claim.run``, not ``run_claim``, so no patched result is stored)."""
    claim = get_claim(claim_id)
    return claim.status(claim.run(QUICK))


def _scaled_threshold(factor: float, *, nesterov_only: bool = False):
    """``theory.eos.critical_sharpness`` times ``factor`` (only Nesterov's, with ``nesterov_only``)."""
    true = th.critical_sharpness

    def wrong(eta, momentum=0.0, *, nesterov=False):
        hit = (nesterov and momentum > 0) if nesterov_only else True
        return (factor if hit else 1.0) * true(eta, momentum, nesterov=nesterov)

    return wrong


@pytest.mark.parametrize("factor", [1.0, 0.92, 1.08])
def test_gd_threshold_off_by_8_percent_fails_the_edge_of_stability_claim(monkeypatch, factor):
    """A GD threshold 8 % off (1.84/eta or 2.16/eta) is outside "right at, or just above" the settled sharpness.

    The settled sharpness sits 1-3 % above 2/eta with a fitted SE of ~0.4 %: 2.16/eta puts the fitted ratio near
    0.94, below 1 - 4 SE; 1.84/eta near 1.11, above 1.05 + 4 SE. Control (factor 1): the claim passes.
    """
    E.mlp(QUICK)  # the measurement, before the theory is broken
    monkeypatch.setattr(th, "critical_sharpness", _scaled_threshold(factor))
    assert _status("cohen2021.sharpness_at_two_over_eta") == ("passed" if factor == 1.0 else "failed")


@pytest.mark.parametrize("factor", [1.0, 0.89, 1.11])
def test_nesterov_threshold_off_by_11_percent_fails_the_momentum_claim(monkeypatch, factor):
    """Nesterov's threshold 11 % off, heavy ball's left alone: the Nesterov runs' fitted ratio leaves [1, 1.05].

    The Nesterov runs settle 1-2 % above their threshold (SE ~0.2 %); scaled by 1/1.11 or 1/0.89 their ratio is
    0.91 or 1.14. Control (factor 1): the claim passes.
    """
    E.mlp(QUICK)
    monkeypatch.setattr(th, "critical_sharpness", _scaled_threshold(factor, nesterov_only=True))
    assert _status("cohen2022.momentum_thresholds_network") == ("passed" if factor == 1.0 else "failed")


@pytest.mark.parametrize("factor", [1.0, 0.9, 1.1])
def test_relaxation_rate_off_by_10_percent_fails_the_transient_claim(monkeypatch, factor):
    """The 2-cycle's relaxation rate ln(1/|mu|) 10 % off (the multipliers' modulus |mu|^factor, angle kept).

    GD's overshoots decay at -0.03472 per step (envelope fit, band ~6e-4 per step: 2 %); a 10 % error moves the
    prediction by 3.5e-3. Control (factor 1): the claim passes.
    """
    E.selfstab_transient(QUICK)
    true = th.selfstab_cycle_multipliers

    def wrong(a, beta, eta):
        mu = true(a, beta, eta)
        return np.abs(mu) ** factor * np.exp(1j * np.angle(mu))

    monkeypatch.setattr(th, "selfstab_cycle_multipliers", wrong)
    assert _status("cohen2025.selfstab_transient") == ("passed" if factor == 1.0 else "failed")


@pytest.mark.parametrize("half", [0.5, 0.25])
def test_quarter_instead_of_half_fails_the_network_time_averaged_loss(monkeypatch, half):
    """L + sigma^2 S/4 instead of L + sigma^2 S/2 as the central flow's time-averaged loss.

    The oscillation term is ~half of GD's averaged loss here: with 1/4 the predicted loss drops by ~25 % and GD's
    ratio to it rises to ~1.3, against a 4-SE band of ~0.1. Control (1/2, the theory): the claim passes.
    """
    E.mlp(QUICK)
    monkeypatch.setattr(th, "central_flow_mean_loss",
                        lambda loss, sigma2_sharpness: np.asarray(loss) + half * np.asarray(sigma2_sharpness))
    assert _status("cohen2025.network_time_averaged_loss") == ("passed" if half == 0.5 else "failed")


# a rod flow with a wrong restoring term: integrated here (SciPy), since the simulator's is compiled in

def _poly(w, C) -> tuple[float, np.ndarray]:
    """(L, grad L) of sum_ij C_ij x^i y^j at the point w (the power basis of sims.eos)."""
    x, y = w
    px, py = np.array([1.0, x, x * x]), np.array([1.0, y, y * y])
    dpx, dpy = np.array([0.0, 1.0, 2 * x]), np.array([0.0, 1.0, 2 * y])
    return float(px @ C @ py), np.array([dpx @ C @ py, px @ C @ dpy])


def _rod_final(C, eta: float, w0, t1: float, pull: float) -> tuple[np.ndarray, np.ndarray]:
    r"""Centre and half-rod at ``t1`` of :math:`\dot c = -\tfrac\eta2[\nabla L(c+r) + \nabla L(c-r)]`,
    :math:`\dot r = \tfrac\eta2[\nabla L(c+r) - \nabla L(c-r)] - \mathrm{pull}\,r` from GD's first two iterates
    (``pull`` = 2 is the rod flow of :func:`sims.eos.poly_flow`), by SciPy's DOP853 at rtol 1e-10."""
    C, w = np.asarray(C, float), np.asarray(w0, float)
    w1 = w - eta * _poly(w, C)[1]

    def field(t, z):
        gp, gm = _poly(z[:2] + z[2:], C)[1], _poly(z[:2] - z[2:], C)[1]
        return np.concatenate([-0.5 * eta * (gp + gm), 0.5 * eta * (gp - gm) - pull * z[2:]])

    z = solve_ivp(field, (0.0, t1), np.concatenate([0.5 * (w + w1), 0.5 * (w - w1)]), method="DOP853",
                  rtol=1e-10, atol=1e-12).y[:, -1]
    return z[:2], z[2:]


@functools.lru_cache(maxsize=None)
def _rod_toy_with(pull: float) -> dict:
    """The rod experiment of the self-stabilization claim, its rods integrated with restoring term ``pull``."""
    ex = dict(E.rod_toy(QUICK))
    ends = [_rod_final(th.selfstab_coefficients(ea / E.TOY_ETA, b), E.TOY_ETA, E.TOY_INIT, float(ex["ts"][-1]), pull)
            for ea, b in zip(ex["eta_a"], ex["beta"])]
    ex["center"], ex["r"] = (np.array([[end[k]] for end in ends]) for k in (0, 1))
    return ex


@functools.lru_cache(maxsize=None)
def _uv_with(pull: float) -> dict:
    """The (uv - 1)^2 experiment with the rods of its 2-cycle settings integrated with restoring term ``pull``.

    (The converging settings keep the simulator's rods: under the real mutation their sharpness comparison with
    the central flow stays as it is -- checked once on a mutated copy of the sources -- so only the 2-cycle
    settings can turn the claim red, and only they are recomputed here.)
    """
    ex = {k: np.array(v, copy=True) if isinstance(v, np.ndarray) else v for k, v in E.uv_compare(QUICK).items()}
    C = th.uv_coefficients()
    for i in np.flatnonzero(ex["cycle"]):
        c, r = _rod_final(C, float(ex["eta"][i]), ex["w0"][i], float(ex["ts"][-1]), pull)
        ex["rod_final_center"][i], ex["rod_final_r"][i] = c, r
        ex["rod_final_sharpness"][i] = th.uv_sharpness(*c)
        ex["rod_final_end_loss"][i] = 0.5 * (_poly(c + r, C)[0] + _poly(c - r, C)[0])
    return ex


def test_scipy_rod_matches_the_simulated_rod():
    """The SciPy rod of these tests (pull 2) is the simulator's rod flow: diffrax and DOP853, each at rtol 1e-10,
    agree to 1e-7 at the ends of the quick runs (the toy at t = 3000, the 2-cycle settings of (uv - 1)^2 at
    t = 4000), so feeding the claims the pull-2.2 rods below changes only the restoring term."""
    toy, uv = E.rod_toy(QUICK), E.uv_compare(QUICK)
    mine = _rod_toy_with(2.0)
    np.testing.assert_allclose(mine["center"][:, -1], toy["center"][:, -1], rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(mine["r"][:, -1], toy["r"][:, -1], rtol=1e-7, atol=1e-9)
    mine, cyc = _uv_with(2.0), uv["cycle"]
    np.testing.assert_allclose(mine["rod_final_center"][cyc], uv["rod_final_center"][cyc], rtol=1e-7)
    np.testing.assert_allclose(mine["rod_final_end_loss"][cyc], uv["rod_final_end_loss"][cyc], rtol=1e-7)


@pytest.mark.parametrize("claim_id", ["regis2026.rod_flow_self_stabilizes", "regis2026.rod_flow_beats_central_flow_on_uv"])
def test_wrong_rod_restoring_term_fails_the_rod_flow_claims(monkeypatch, claim_id):
    """A consistently wrong rod flow (-2r -> -2.2r): its stationary rods are its own, not GD's 2-cycles.

    Measured on GD (its simulated 2-cycles and their closed form), the wrong rod's centre sits where
    eta (a + y^2) = 2.2 on the toy and off the midpoint of GD's cycle on (uv - 1)^2: far outside the 1e-8 and
    1e-6 tolerances. (Before issue 27 both claims compared the rod with its own fixed point and stayed green.)
    """
    toy, uv = _rod_toy_with(2.2), _uv_with(2.2)  # from the true experiments, before they are replaced
    monkeypatch.setattr(E, "rod_toy", lambda budget: toy)
    monkeypatch.setattr(E, "uv_compare", lambda budget: uv)
    assert _status(claim_id) == "failed"


# ------------------------------------------------------------------ issue 33: the headline claims added for eos

@pytest.mark.parametrize("factor", [1.0, 2.0, 0.5])
def test_wrong_gd_threshold_fails_the_nonmonotone_loss_claim(monkeypatch, factor):
    """4/eta or 1/eta as GD's threshold: the loss claim splits each run at the threshold's first crossing.

    4/eta is never reached (no run has an 'after' part, so no uptick there); 1/eta lies below the initial
    sharpness 2.8-3.0 (no 'before' part: the runs do not start below the threshold). A threshold only 8 % high is
    not caught here -- the sharpness overshoots 2/eta by more at its first crossing, so the split moves little; the
    sharpness claim catches that one (test_gd_threshold_off_by_8_percent_fails_the_edge_of_stability_claim).
    Control (factor 1): the claim passes.
    """
    E.mlp(QUICK)
    monkeypatch.setattr(th, "critical_sharpness", _scaled_threshold(factor))
    assert _status("cohen2021.loss_nonmonotone_but_decreasing") == ("passed" if factor == 1.0 else "failed")


def _catapult_map_with(mistake: str):
    """The scaled catapult map (z, c) -> (z+, c+) with a plausible mistake, as theory.eos's lambdified map."""
    def fn(z, c):
        if mistake == "linear output":  # f+ = (1 - eta lambda) f: the output's update linearised (NTK)
            return [z * (1 - c) ** 2, c + z * (c - 4)]
        if mistake == "edge 3":         # lambda+ - lambda = (eta f^2/m)(eta lambda - 3)
            return [z * (1 - c + z) ** 2, c + z * (c - 3)]
        return [z * (1 - c + z) ** 2, c + z * (c - 4)]
    return lambda: fn


@pytest.mark.parametrize("claim_id", ["lewkowycz2020.catapult_converges_to_flatter_minima",
                                      "steplab.catapult_flattening_window"])
@pytest.mark.parametrize("mistake", ["none", "linear output", "edge 3"])
def test_wrong_catapult_map_fails_the_flattening_claims(monkeypatch, claim_id, mistake):
    """The closed-form map with the output's update linearised, or the curvature's sign change moved from 4 to 3.

    The runs and the exact map agree to 1e-13 in eta*lambda; either mistake moves the map's final eta*lambda by
    O(0.1) or more (the linear map never stops the spike; the moved edge removes curvature faster), far beyond the
    1e-9 tolerance, and moves the first minimum of lambda_final/lambda0 by grid steps. Control: the true map passes.
    """
    E.catapult_curvature(QUICK)
    monkeypatch.setattr(th, "_catapult_scaled_fn", _catapult_map_with(mistake))
    assert _status(claim_id) == ("passed" if mistake == "none" else "failed")


@pytest.mark.parametrize("factor", [1.0, 2.0, 0.5])
def test_wrong_constraint_level_fails_the_constrained_trajectory_claim(monkeypatch, factor):
    """The constrained trajectory projected onto {S <= 4/eta} or {S <= 1/eta} instead of {S <= 2/eta}.

    A consistent mistake: the experiment is recomputed (uncached, ``Experiment.fn``) with the wrong level and the
    claim judged with it. At 4/eta the 'constrained' trajectory is gradient flow until its sharpness reaches 4 (a
    few hundred steps), far from GD's average; at 1/eta it is held below GD's own sharpness from the first steps.
    Either way GD never crosses the wrong level and comes back, so no window is compared and the claim fails. A level
    off by 10-25 % is not caught by this claim (GD's average stays nearer to such a trajectory than to the
    unconstrained ones: its tracking error at step 400 is 0.15 at 2/eta, 0.22-0.42 at 0.9-1.25 x 2/eta, against 0.9-1.5
    for the rivals); the sharpness claims catch those. Control (factor 1, recomputed the same way): the claim passes.
    """
    if factor != 1.0:  # the control is the cached experiment itself (the same computation: no recompilation)
        monkeypatch.setattr(th, "critical_sharpness", _scaled_threshold(factor))
        wrong = E.constrained.fn(QUICK)
        monkeypatch.setattr(E, "constrained", lambda budget: wrong)
    assert _status("damian2023.gd_follows_constrained_trajectory") == ("passed" if factor == 1.0 else "failed")


@pytest.mark.parametrize("square", [True, False])
def test_output_growth_for_loss_growth_fails_the_catapult_time_claim(monkeypatch, square):
    """The loss scale's growth per step taken as |1 - eta lambda0| (the output's) instead of (1 - eta lambda0)^2.

    The predicted slope doubles (2.74 -> 5.48 steps per e-fold of 1/z0) against a fitted 2.81 +- 0.02 with a band of
    ~0.2. Control (the square): the claim passes.
    """
    E.catapult_time(QUICK)
    true = th.catapult_growth_factor
    monkeypatch.setattr(th, "catapult_growth_factor", true if square else lambda c: float(np.sqrt(true(c))))
    assert _status("lewkowycz2020.catapult_time_grows_like_log_width") == ("passed" if square else "failed")


# ------------------------------------------------- issue 27: the survivors of the claims-only sample at seed 1

def _constrained_with(module) -> dict:
    """The constrained experiment recomputed (uncached) with ``sims.eos``'s trajectories taken from ``module``."""
    import sims.eos as sim

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sim, "_track_run", module._track_run)  # a new function: run_grid compiles it afresh
        return E.constrained.fn(QUICK)


def test_sigma2_times_grad_s_squared_fails_the_constrained_trajectory_claim(monkeypatch):
    r"""The projection's :math:`\sigma^2` multiplied by :math:`\|\nabla S\|^2` instead of divided (the tool's mutant
    ``Div -> Mult`` in ``_constrained_sigma2``): the flow still bends away from the edge, and its sharpness settles
    ~1 % below 2/eta -- under the one-sided bound that the claim used to check, but the step no longer moves S at
    -omega (S - 2/eta), so the offset is no longer the Euler remainder's: the two-sided hold bound (slack 1e-12
    relative, against offsets of 1e-2) fails. The unmutated trajectories pass it (test_power)."""
    import sims.eos as sim
    from tests.mutation import mutant_module

    wrong = _constrained_with(mutant_module(sim, "num / jnp.maximum(jnp.vdot(gS, gS)", "num / jnp", "operator",
                                            "Div -> Mult"))
    monkeypatch.setattr(E, "constrained", lambda budget: wrong)
    assert _status("damian2023.gd_follows_constrained_trajectory") == "failed"


def test_third_eigenvalue_as_second_fails_the_central_flow_iterate_claim(monkeypatch):
    r"""``second`` recorded from the third Hessian eigenvalue (the tool's mutant ``w[-2]`` -> ``w[-3]``): the matrix
    central flow's second direction then never reaches the edge on the network, so the claim finds no window with
    two directions at 2/eta and its one-direction rival goes untested -- it fails. (Before issue 27, ``second`` was a
    window-end record that no check read.) The unmutated record passes (test_power)."""
    import sims.eos as sim
    from tests.mutation import mutant_module

    wrong = _constrained_with(mutant_module(sim, "w[-1], w[-2], remainder, was_active", "2], remainder", "constant",
                                            "2 -> 3"))
    monkeypatch.setattr(E, "constrained", lambda budget: wrong)
    assert _status("cohen2025.network_central_flow_iterate") == "failed"


def test_rod_centre_at_double_speed_fails_the_rod_self_stabilization_claim(monkeypatch):
    r"""The rod's centre moved at :math:`-\eta[\nabla L(c+r) + \nabla L(c-r)]` instead of half that (the tool's mutant
    ``0.5 -> 1.0`` in the rod's field, a survivor of the claims-only sample at seed 2): its stationary rods are GD's
    2-cycles all the same, so only the transient can see it. Integrated here (SciPy DOP853, rtol 1e-10; the speed-1/2
    rod agrees with the simulator's to 1e-9), it sharpens twice as fast as GD's 2-step averages and misses them by
    more than the central flow in the first 50 steps (rms 0.34 against 0.25). Control (speed 1/2): the claim passes."""
    tr = dict(E.selfstab_transient(QUICK))
    C, eta = th.selfstab_coefficients(E.TRANSIENT_ETA_A / E.TOY_ETA, E.TOY_BETA), E.TOY_ETA

    def rod_y(speed: float) -> np.ndarray:
        w = np.asarray(E.TOY_INIT, float)
        w1 = w - eta * _poly(w, C)[1]

        def field(t, z):
            gp, gm = _poly(z[:2] + z[2:], C)[1], _poly(z[:2] - z[2:], C)[1]
            return np.concatenate([-speed * eta * (gp + gm), 0.5 * eta * (gp - gm) - 2.0 * z[2:]])

        return solve_ivp(field, (0.0, float(tr["ts"][-1])), np.concatenate([0.5 * (w + w1), 0.5 * (w - w1)]),
                         method="DOP853", rtol=1e-10, atol=1e-12, t_eval=tr["ts"]).y[1]

    np.testing.assert_allclose(rod_y(0.5), tr["y_rod"], atol=1e-8)
    E.rod_toy(QUICK), E.selfstab_points(QUICK)  # the claim's other measurements, before the patch
    wrong = {**tr, "y_rod": rod_y(1.0)}
    monkeypatch.setattr(E, "selfstab_transient", lambda budget: wrong)
    assert _status("regis2026.rod_flow_self_stabilizes") == "failed"


def test_gd_at_half_step_made_a_constrained_flow_fails_the_constrained_trajectory_claim(monkeypatch):
    r"""The run meant as GD at :math:`\eta/2` given the constrained trajectory's code (the tool's mutant ``0 -> 1`` in
    the fourth entry of ``mlp_track``'s run codes, a survivor of the claims-only sample at seed 1): the rival is then
    itself held at :math:`S \le 2/\eta`, GD's averaged iterate is as near to it as to the constrained trajectory, and
    the statement's "GD at eta/2 leaves {S <= 2/eta}" bound (largest window-end sharpness at least 1.1 x 2/eta,
    measured 2.28 x unmutated) fails. The unmutated record passes (test_power)."""
    import sims.eos as sim
    from tests.mutation import mutant_module

    copy = mutant_module(sim, '"code": np.tile([0, 1, 2, 0, 3]', "0, 3]", "constant", "0 -> 1")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sim, "mlp_track", copy.mlp_track)  # its own _track_run: compiled afresh
        wrong = E.constrained.fn(QUICK)
    monkeypatch.setattr(E, "constrained", lambda budget: wrong)
    assert _status("damian2023.gd_follows_constrained_trajectory") == "failed"


def test_lambda0_without_the_losss_1_over_n_fails_the_relu_max_lr_claim(monkeypatch):
    r""":math:`\lambda_0` taken from :math:`J^\top J` instead of :math:`J^\top J/N` (the loss's :math:`1/N` dropped, as for a
    summed instead of a mean squared error): every step is then :math:`N = 128` times smaller than its nominal
    :math:`c/\lambda_0`, so no run of the grid (nominal c up to 26, effective 0.2) diverges, no edge is located and
    lewkowycz2020.relu_max_lr_about_12 fails (no constant is nearest an edge that is not there; the loss never
    spikes). The unmutated measurement gives 'differs from paper' (test_power)."""
    import types

    import sims.eos_relu as sim

    line = "return pullback(jax.jvp(net, (theta,), (v,))[1])[0] / X.shape[0]"
    src = open(sim.__file__).read()
    assert src.count(line) == 1
    copy = types.ModuleType(sim.__name__ + "_mutant")
    exec(compile(src.replace(line, line.replace(" / X.shape[0]", "")), sim.__file__, "exec"), copy.__dict__)  # noqa: S102
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sim, "relu_gd", copy.relu_gd)  # its own _relu_run and _gn_top: compiled afresh
        wrong = E.relu_max_lr.fn(QUICK)
    assert not np.any(wrong["diverged"] == 1.0)
    monkeypatch.setattr(E, "relu_max_lr", lambda budget: wrong)
    assert _status("lewkowycz2020.relu_max_lr_about_12") == "failed"
