"""Unit tests of the Signum floor constant (theory.sign_floor.signum_constant).

The claim singh2026.signum_floor_constant (tests/test_power.py) compares it with float Signum chains of the
simulator; here: its exact limit beta = 0, its invariances, its O(h^2) grid error, and a NumPy Monte Carlo
of the eta-free chain with a non-integer Student-t df (which the float simulator cannot draw).
"""
import numpy as np
import pytest

from theory import sign_floor as T
from theory.sign_floor import signum as SG  # the transfer operator's internals, tested where they are defined


@pytest.mark.parametrize("law, sigma, df", [("gaussian", 1.0, None), ("uniform", 1.5, None), ("student", 0.7, 2.5)])
def test_beta_zero_is_the_two_ladder_law(law, sigma, df):
    # at beta = 0 the buffer is a u (1 + sigma xi) and the split at 0 is exact: signSGD's closed forms
    mid = T.signum_constant(0.0, sigma, "mid", law=law, df=df)
    unif = T.signum_constant(0.0, sigma, "uniform", law=law, df=df)  # C(theta) is quadratic: Gauss-Legendre is exact
    assert mid.value == pytest.approx(T.c_mid(sigma, law, df), rel=1e-9)
    assert unif.value == pytest.approx(T.c_unif(sigma, law, df), rel=1e-9)
    assert mid.err < 1e-9 and unif.err < 1e-9


def test_free_of_a_and_mirror_symmetric():
    base = T.signum_constant(0.5, 0.5, 0.3, cells=2)
    # v/a is free of a: the buffer grid scales with a, so the numbers agree to round-off
    assert T.signum_constant(0.5, 0.5, 0.3, a=7.3, cells=2).value == pytest.approx(base.value, rel=1e-9)
    # u -> -u maps offset theta to 1 - theta (the grid is symmetric about v = 0)
    assert T.signum_constant(0.5, 0.5, 0.7, cells=2).value == pytest.approx(base.value, rel=1e-9)
    assert base.leak < 1e-10


@pytest.mark.parametrize("law, df, var", [("gaussian", None, 1.0), ("uniform", None, 1 / 3), ("student", 5.5, 5.5 / 3.5)])
def test_one_step_moves_mass_by_the_buffer_law(law, df, var):
    # one step from a point-like buffer: total mass 1, and, summed over both lattice rows it reaches, the buffer's mean
    # beta v + (1 - beta) a u and variance ((1 - beta) sigma a u)^2 Var(xi) + h^2/6 (two cell-wide uniforms convolved)
    beta, sigma, theta, a, h, n_max = 0.6, 0.8, 0.3, 1.7, 0.05, 6
    op = SG._signum_operator(beta, sigma, theta, law, df, a, h, n_max, w_max=150.0)
    step, shape, u = op.step, op.shape, op.u
    P = np.zeros(shape)
    row, cell = n_max + 2, shape[1] // 2 + 37  # u = theta + 2, v in the cell centred at 37.5 h
    P[row, cell] = 1.0
    out, (leak_w, leak_n) = step(P)
    centres = (np.arange(shape[1]) - shape[1] // 2 + 0.5) * h
    v = out.sum(axis=0)
    mean = beta * centres[cell] + (1 - beta) * a * u[row]
    # round-off: second differences of G cancel to ~1e-16 |G| s/h per cell, over ~1e3 cells
    assert out.sum() + leak_w == pytest.approx(1.0, abs=1e-9) and leak_w < 1e-7 and leak_n < 1e-12
    assert v @ centres == pytest.approx(mean, rel=1e-8)
    # the contracted source spans beta h: its variance is (beta h)^2/12, plus h^2/12 for the target cell's width
    spread = ((1 - beta) * sigma * a * u[row]) ** 2 * var + (beta * h) ** 2 / 12 + h**2 / 12
    assert v @ (centres - mean) ** 2 == pytest.approx(spread, rel=2e-3)


@pytest.mark.parametrize("beta, sigma, law", [(0.5, 1.0, "gaussian"), (0.8, 0.5, "gaussian"), (0.6, 1.5, "uniform")])
def test_arnoldi_solve_equals_the_power_iteration(beta, sigma, law):
    # the same truncated operator (cells = 2), solved by Arnoldi on one parity class (residual 1e-14) and by plain power
    # iteration on both (stopped when C moves < 1e-13 per step; it converges at rate <= 0.95 per step here, so it
    # sits within 1e-13/(1 - 0.95) = 2e-12 of its limit): C to 1e-10 relative (round-off of sums of ~1e4 cells is
    # 1e-13), each parity class of mass 1/2, the laws to 1e-9 in L1, the same leak
    h = min(beta, 1 - beta) / 2
    op = SG._signum_operator(beta, sigma, 0.3, law, None, 1.0, h, n_max=16, w_max=17.0)
    fast = SG._signum_stationary(op, tol=1e-12, method="arnoldi")
    slow = SG._signum_stationary(op, tol=1e-13, method="power")
    assert fast[0] == pytest.approx(slow[0], rel=1e-10)
    assert fast[1][0::2].sum() == pytest.approx(0.5, abs=1e-14) and fast[1][1::2].sum() == pytest.approx(0.5, abs=1e-14)
    assert np.abs(fast[1] - slow[1]).sum() < 1e-9 and fast[1].min() >= 0
    assert fast[2] == pytest.approx(slow[2], rel=1e-6, abs=1e-16)
    # the whole constant (box sizing, coarse and fine grids) agrees with the power iteration's within its error bar
    c_fast = SG._signum_at(beta, sigma, 0.3, law, None, 1.0, 2, method="arnoldi")
    c_slow = SG._signum_at(beta, sigma, 0.3, law, None, 1.0, 2, method="power")
    assert c_fast[3:] == c_slow[3:]  # the same box N, W
    assert c_fast[0] == pytest.approx(c_slow[0], rel=1e-9) and c_fast[1] == pytest.approx(c_slow[1], rel=1e-9)


def test_grid_error_is_second_order():
    # err(cells) = |C_h - C_2h|, h = a min(beta, 1 - beta)/cells: successive differences shrink by 4 for an O(h^2)
    # scheme; beta = 0.6 puts edges / beta between grid edges (at 0.5 the contraction maps edges onto edges)
    coarse, fine = (T.signum_constant(0.6, 1.0, "mid", cells=k) for k in (4, 8))
    assert 3.5 < coarse.err / fine.err < 4.5
    assert abs(fine.value - coarse.value) == pytest.approx(fine.err, rel=1e-6)


def test_uniform_offset_is_the_mean_over_offsets():
    # Gauss-Legendre on (0, 1/2) with the mirror symmetry against a midpoint rule over 8 offsets of (0, 1/2)
    unif = T.signum_constant(0.5, 0.5, "uniform", cells=2)
    thetas = (np.arange(8) + 0.5) / 16
    midpoint = np.mean([T.signum_constant(0.5, 0.5, th, cells=2).value for th in thetas])
    assert unif.value == pytest.approx(midpoint, abs=1e-3)


def test_momentum_raises_the_floor_monotonically():
    values = [T.signum_constant(b, 0.5, "mid", cells=4).value for b in (0.0, 0.25, 0.5)]
    assert np.all(np.diff(values) > 0)


def _eta_free_chain(beta, sigma, df, theta, n_chains, steps, burn, seed):
    """NumPy Monte Carlo of v' = beta v + (1 - beta) u (1 + sigma xi), u' = u - sign(v'): per-chain means of u^2/2."""
    rng = np.random.default_rng(seed)
    u = theta + rng.integers(-3, 3, n_chains).astype(float)
    v = np.zeros(n_chains)
    acc = np.zeros(n_chains)
    for k in range(steps):  # a reference loop over steps (NumPy, not the simulator)
        v = beta * v + (1 - beta) * u * (1 + sigma * rng.standard_t(df, n_chains))
        u = u - np.sign(v)
        if k >= burn:
            acc += u * u / 2
    return acc / (steps - burn)


def test_non_integer_student_df_against_a_monte_carlo():
    beta, sigma, df = 0.5, 0.5, 2.5
    c = T.signum_constant(beta, sigma, "mid", law="student", df=df, cells=4)  # heavy tails: a wide buffer grid
    per_chain = _eta_free_chain(beta, sigma, df, 0.5, n_chains=4000, steps=1000, burn=100, seed=3)
    mean, se = per_chain.mean(), per_chain.std(ddof=1) / np.sqrt(len(per_chain))
    # 4 SE over independent chains' time averages, plus the grid's error bound
    assert abs(mean - c.value) <= 4 * se + c.err
    assert abs(mean - T.c_mid(sigma, "student", df)) > 5 * (4 * se + c.err)  # far from signSGD's constant


@pytest.mark.parametrize("bad, name", [({"beta": 1.0}, "beta"), ({"sigma": 0.0}, "sigma"), ({"offset": 0.0}, "offset"),
                                       ({"offset": "edge"}, "offset"), ({"cells": 3}, "cells"), ({"a": -1.0}, "a")])
def test_bad_input_names_the_parameter(bad, name):
    kw = {"beta": 0.5, "sigma": 1.0, "offset": "mid", "cells": 2} | bad
    with pytest.raises((ValueError, TypeError), match=name):
        T.signum_constant(kw.pop("beta"), kw.pop("sigma"), kw.pop("offset"), **kw)
