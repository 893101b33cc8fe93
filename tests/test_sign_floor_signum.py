"""Unit tests of the Signum floor constant (theory.sign_floor.signum_constant).

The claim singh2026.signum_floor_constant (tests/test_power.py) compares it with float Signum chains of the
simulator; here: its exact limit beta = 0, its invariances, its O(h^2) grid error, and a NumPy Monte Carlo
of the eta-free chain with a non-integer Student-t df (which the float simulator cannot draw).
"""
import numpy as np
import pytest

from theory import sign_floor as T


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


def test_grid_error_is_second_order():
    # err(cells) = |C_h - C_2h|, h = a min(beta, 1 - beta)/cells: successive differences shrink by 4 for an O(h^2) scheme
    coarse, fine = (T.signum_constant(0.5, 1.0, "mid", cells=k) for k in (4, 8))
    assert 3.5 < coarse.err / fine.err < 4.5
    assert abs(fine.value - coarse.value) == pytest.approx(fine.err, rel=1e-6)


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
    c = T.signum_constant(beta, sigma, "mid", law="student", df=df, cells=8)
    per_chain = _eta_free_chain(beta, sigma, df, 0.5, n_chains=1000, steps=800, burn=100, seed=3)
    mean, se = per_chain.mean(), per_chain.std(ddof=1) / np.sqrt(len(per_chain))
    # 4 SE over independent chains' time averages, plus the grid's error bound
    assert abs(mean - c.value) <= 4 * se + c.err
    assert abs(mean - T.c_mid(sigma, "student", df)) > 10 * (4 * se + c.err)  # far from signSGD's constant


@pytest.mark.parametrize("bad, name", [({"beta": 1.0}, "beta"), ({"sigma": 0.0}, "sigma"), ({"offset": 0.0}, "offset"),
                                       ({"offset": "edge"}, "offset"), ({"cells": 3}, "cells"), ({"a": -1.0}, "a")])
def test_bad_input_names_the_parameter(bad, name):
    kw = {"beta": 0.5, "sigma": 1.0, "offset": "mid", "cells": 2} | bad
    with pytest.raises((ValueError, TypeError), match=name):
        T.signum_constant(kw.pop("beta"), kw.pop("sigma"), kw.pop("offset"), **kw)
