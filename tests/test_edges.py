"""sims.edges: the shared edge locators against plain loops, exact lines and numerical derivatives."""
import math

import numpy as np
import pytest

from sims import edges


def test_first_crossing_is_the_first_index_at_or_above_the_level():
    rng = np.random.default_rng(0)
    for _ in range(50):
        v = rng.normal(size=12)
        v[rng.random(12) < 0.1] = np.nan
        level = rng.normal()
        loop = next((i for i, x in enumerate(v) if x >= level), -1)  # NaN >= level is False
        assert edges.first_crossing(v, level) == loop


def test_switch_bracket_against_a_loop():
    grid = np.linspace(0.1, 2.0, 9)
    rng = np.random.default_rng(1)
    for _ in range(200):
        on = rng.random(9) < 0.5
        first = next((i for i, x in enumerate(on) if x), None)
        single = first is not None and first > 0 and on[first:].all()
        lo, hi = edges.switch_bracket(grid, on)
        if single:
            assert (lo, hi) == (grid[first - 1], grid[first])
        else:
            assert math.isnan(lo) and math.isnan(hi)
        lo2, hi2 = edges.switch_bracket(grid, on, monotone=False)
        if first is not None and first > 0:
            assert (lo2, hi2) == (grid[first - 1], grid[first])
        else:
            assert math.isnan(lo2) and math.isnan(hi2)


@pytest.mark.parametrize("log_x", [False, True])
def test_interpolated_crossing_is_exact_on_a_line_and_its_se_is_the_delta_method(log_x):
    x = np.array([1.0, 2.0, 4.0, 8.0, 16.0])
    u = np.log(x) if log_x else x
    y = 0.3 + 0.5 * u  # linear in u: the interpolation is exact
    level = 0.3 + 0.5 * (np.log(5.0) if log_x else 5.0)
    se = np.array([0.01, 0.02, 0.03, 0.04, 0.05])
    xc, err = edges.interpolated_crossing(x, y, level, se, log_x=log_x)
    assert xc == pytest.approx(5.0, rel=1e-12)  # round-off of one interpolation (and a log and an exp)
    # the delta method against central differences of the crossing in each measured value (independent of the formula)
    grads = []
    for k in range(x.size):
        h = 1e-6
        up, down = y.copy(), y.copy()
        up[k] += h
        down[k] -= h
        f = lambda yy: edges.interpolated_crossing(x, yy, level, log_x=log_x)[0]  # noqa: E731
        g = (f(up) - f(down)) / (2 * h)
        grads.append(g / xc if log_x else g)  # the SE is of log x with log_x
    expected = math.sqrt(sum((g * s) ** 2 for g, s in zip(grads, se)))
    assert err == pytest.approx(expected, rel=1e-6)  # central differences: O(h^2) of a piecewise-linear map, round-off ~1e-10/h
    assert math.isnan(edges.interpolated_crossing(x, y, level)[1])


def test_a_curve_that_never_crosses_or_starts_above_is_refused_by_name():
    x = np.array([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="y: expected a curve that starts below"):
        edges.interpolated_crossing(x, np.array([0.0, 0.1, 0.2]), 1.0)
    with pytest.raises(ValueError, match="y: expected a curve that starts below"):
        edges.interpolated_crossing(x, np.array([2.0, 0.1, 0.2]), 1.0)
    with pytest.raises(ValueError, match="grid: expected at least two strictly increasing"):
        edges.switch_bracket(np.array([1.0, 1.0, 2.0]), np.array([False, True, True]))
    with pytest.raises(TypeError, match="on: expected an array of booleans"):
        edges.switch_bracket(x, np.array([0, 1, 1]))
