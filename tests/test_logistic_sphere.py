r"""Data on the sphere (the follow-up paper): the lift of 1-D data onto unit vectors and the shipped witness.

Each test compares two independently obtained numbers: the lifted loss against the 1-D loss, the JAX
simulator against the numpy closed forms, hand formulas for the transverse curvature and the cycle's
multipliers against the eigenvalues of autodiff Hessians and Jacobians.
"""
import numpy as np
import pytest
from scipy.special import expit

import sims.logistic as sim
import theory.logistic as th

BASE_Z = np.array([1.0, 0.4, -0.25, -1.0])
BASE_A = np.array([0.1, 0.4, 0.3, 0.2])


def _ss(m):
    return expit(m) * expit(-m)


@pytest.mark.parametrize("d", [2, 3, 7])
def test_lift_puts_every_point_on_the_sphere_and_keeps_the_1d_loss_on_the_axis(d):
    z, a = th.sphere_lift(BASE_Z, BASE_A, d)
    assert z.shape == (2 + 2 * d, d) and a.shape == (2 + 2 * d,)
    assert np.max(np.abs(np.linalg.norm(z, axis=1) - 1)) <= 4e-16
    assert a.sum() == pytest.approx(1.0, abs=1e-15)
    for t in (-3.0, 0.4, 5.0):
        w = np.zeros(d)
        w[0] = t
        assert th.loss(w, z, a) == pytest.approx(th.loss([t], BASE_Z, BASE_A), rel=1e-14)
        g = th.grad(w, z, a)
        assert g[0] == pytest.approx(th.grad([t], BASE_Z, BASE_A)[0], rel=1e-13, abs=1e-16)
        assert np.max(np.abs(g[1:])) <= 1e-16   # the axis is invariant: no transverse gradient


def test_lifted_hessian_is_block_diagonal_with_the_transverse_curvature_formula():
    d, t = 5, 1.7
    z, a = th.sphere_lift(BASE_Z, BASE_A, d)
    w = np.zeros(d)
    w[0] = t
    H = sim.hessian(w, z, a)    # autodiff of the JAX loss
    axis = np.sum(BASE_A * BASE_Z**2 * _ss(BASE_Z * t))
    inner = np.abs(BASE_Z) < 1
    transverse = np.sum(BASE_A[inner] * (1 - BASE_Z[inner] ** 2) * _ss(BASE_Z[inner] * t)) / (d - 1)
    assert H[0, 0] == pytest.approx(axis, rel=1e-13)
    assert np.max(np.abs(H[0, 1:])) <= 1e-16
    assert np.allclose(H[1:, 1:], transverse * np.eye(d - 1), rtol=0, atol=1e-15)


def test_gd_on_the_lift_from_the_axis_is_1d_gd():
    z, a = th.sphere_lift(BASE_Z, BASE_A, 4)
    starts = np.array([[-2.0, 0, 0, 0], [3.5, 0, 0, 0]])
    lifted = sim.gd(z, a, [6.0], starts, 50)["w"][0]
    flat = sim.gd(BASE_Z, BASE_A, [6.0], starts[:, :1], 50)["w"][0]
    assert np.max(np.abs(lifted[..., 0] - flat[..., 0])) <= 1e-12
    assert np.max(np.abs(lifted[..., 1:])) <= 1e-12


def test_sphere_witness_is_a_stable_two_cycle_below_two_over_lambda():
    w = th.sphere_witness()
    z, a, eta = w["z"], w["weights"], w["eta"]
    assert np.max(np.abs(np.linalg.norm(z, axis=1) - 1)) <= 4e-16
    # lambda_max is the axis curvature (the lift does not raise it), so c is the 1-D base's c
    assert w["lam_transverse"] < w["lam_axis"] == pytest.approx(w["lam_max"], rel=1e-14)
    assert eta * float(np.linalg.eigvalsh(sim.hessian(w["w_star"], z, a))[-1]) == pytest.approx(1.995, rel=1e-12)
    # the cycle lies on the axis and is the 1-D base's stable 2-cycle
    base = th.cycles_1d(w["base_z"], w["base_weights"], eta, 2)
    stable = base[np.abs(base[:, -1]) < 1]
    assert stable.shape[0] == 1
    assert np.max(np.abs(w["cycle"][:, 1:])) <= 1e-12
    assert np.sort(w["cycle"][:, 0]) == pytest.approx(np.sort(stable[0, :2]), abs=1e-10)
    # multipliers by hand: the 1-D one on the axis, prod_k (1 - eta h_perp(x_k)) on each transverse direction
    inner = np.abs(w["base_z"]) < 1
    h_perp = [np.sum(w["base_weights"][inner] * (1 - w["base_z"][inner] ** 2) * _ss(w["base_z"][inner] * x))
              / (w["d"] - 1) for x in w["cycle"][:, 0]]
    transverse = np.prod([1 - eta * h for h in h_perp])
    expected = max(abs(stable[0, -1]), abs(transverse))
    assert w["multiplier"] == pytest.approx(expected, rel=1e-9)
    jac = sim.cycle_jacobian(z, a, eta, w["cycle"][0], 2)
    assert np.max(np.abs(np.linalg.eigvals(jac))) == pytest.approx(expected, rel=1e-9)
    assert expected < 1


def test_the_same_base_lifted_to_the_plane_makes_w_star_unstable():
    """The lift needs room: in d = 2 the bump's transverse curvature is 32x larger and dominates lambda_max."""
    w = th.sphere_witness()
    z2, a2 = th.sphere_lift(w["base_z"], w["base_weights"], 2)
    ws2, lam2 = th.minimizer(z2, a2)
    assert ws2[0] == pytest.approx(w["w_star"][0], rel=1e-12)
    assert w["eta"] * lam2 > 2   # at the witness's step, w* is no longer locally attracting


def test_periodic_orbit_polishes_a_cycle_and_refuses_the_fixed_point():
    d = th.cycle_dataset(1.5)
    orbit, radius = th.periodic_orbit(d["z"], d["weights"], d["eta"], [d["u"]], 2)
    uv, mult = th.solve_two_cycle(d["z"], d["weights"], d["eta"], [d["u"], d["v"]])
    assert np.sort(orbit[:, 0]) == pytest.approx(np.sort(uv), abs=1e-12)
    assert radius == pytest.approx(abs(mult), rel=1e-9)
    with pytest.raises(ValueError, match="guess"):
        th.periodic_orbit(d["z"], d["weights"], d["eta"], [d["w_star"] + 1e-9], 2)


def test_sphere_lift_rejects_magnitudes_above_one_and_non_1d_data():
    with pytest.raises(ValueError, match="z"):
        th.sphere_lift([1.5, -1.0], None, 3)
    with pytest.raises(ValueError, match="z"):
        th.sphere_lift(np.ones((2, 2)), None, 3)
    with pytest.raises(ValueError, match="d"):
        th.sphere_lift([0.5, -1.0], None, 1)
