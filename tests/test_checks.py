"""The typed comparisons: each accepts what it should, rejects what it should, and refuses bad input."""
import math

import numpy as np
import pytest

from paper_checks import Bound, Categorical, Count, Exact, Rate, Statistical, fit_slope


def test_exact_accepts_within_tolerance_and_rejects_rivals():
    c = Exact("c_crit", predicted=2.0, measured=2.0 + 1e-9, atol=1e-8, rivals={"c = 1": 1.0, "c = 2.0000001": 2.0000001})
    assert c.prediction().accepted and c.prediction().score == pytest.approx(0.1, rel=1e-6)
    assert [a.accepted for a in c.rival_assessments()] == [False, False]
    # elementwise: the worst element decides
    arr = Exact("x", predicted=np.ones(3), measured=[1.0, 1.0, 1.1], rtol=0.05)
    assert not arr.prediction().accepted
    assert not Exact("x", predicted=1.0, measured=np.nan, atol=1.0).prediction().accepted  # NaN never passes


def test_bound_sides_slack_and_rival_bounds():
    b = Bound("max |w - w*|", measured=[1e-14, 3e-13], bound=1e-12, rivals={"tighter: 1e-13": 1e-13})
    assert b.prediction().accepted and not b.rival_assessments()[0].accepted
    lo = Bound("rho / rho_a", measured=[1.2, 1.05], bound=1.0, side=">=", rivals={"rho >= 1.1 rho_a": 1.1})
    assert lo.prediction().accepted and not lo.rival_assessments()[0].accepted
    assert Bound("x", measured=1.01, bound=1.0, slack=0.02).prediction().accepted
    assert not Bound("x", measured=[np.inf], bound=1.0).prediction().accepted


def test_accepted_is_a_python_bool_in_json():
    """Array bounds decide with NumPy comparisons; their verdicts must reach the JSON as true/false, not as the
    strings "True"/"False" (a reader testing truthiness would count a rejected rival as accepted)."""
    import json

    # a NumPy slack makes the violation, and so the verdict, NumPy scalars
    b = Bound("x", measured=np.array([1.2, 1.05]), bound=1.0, side=">=", slack=np.float64(0.01), rivals={"x >= 2": 2.0})
    for a in (b.prediction(), *b.rival_assessments()):
        assert type(a.accepted) is bool
        assert json.loads(json.dumps(a.to_dict(), default=str))["accepted"] in (True, False)


def test_fit_slope_standard_error_matches_monte_carlo():
    # y = 3 x^2 with log-normal noise of 5 %: the OLS SE must match the spread of slopes over replicates
    rng = np.random.default_rng(0)
    x = np.geomspace(1, 100, 12)
    slopes, ses = [], []
    for _ in range(2000):
        s, se = fit_slope(x, 3 * x**2 * np.exp(0.05 * rng.standard_normal(x.size)))
        slopes.append(s)
        ses.append(se)
    # 2000 replicates: the empirical SD is within ~3 % of its mean (SE of an SD ~ 1/sqrt(2N))
    assert np.std(slopes) == pytest.approx(np.mean(ses), rel=0.06)
    assert np.mean(slopes) == pytest.approx(2.0, abs=4 * np.std(slopes) / math.sqrt(2000))
    with pytest.raises(ValueError, match="3 points"):
        fit_slope([1, 2], [1, 2])


def test_rate_band_from_se_and_next_order():
    x = np.geomspace(1e-3, 1e-1, 6)
    y = x**2 * (1 + 0.3 * x)  # exponent 2 with a next-order term of relative size 0.3 x
    r = Rate("weak error order", x, y, predicted=2.0, next_order=0.05, rivals={"order 1": 1.0, "order 3": 3.0})
    assert r.prediction().accepted
    assert not any(a.accepted for a in r.rival_assessments())
    assert not Rate("p", x, y, predicted=2.0, next_order=0.0, z=1e-6).prediction().accepted


def test_statistical_z_gate():
    s = Statistical("E x", estimate=0.52, se=0.01, predicted=0.5, z=4, rivals={"0.6": 0.6})
    assert s.prediction().accepted and not s.rival_assessments()[0].accepted
    assert not Statistical("E x", estimate=0.56, se=0.01, predicted=0.5).prediction().accepted
    with pytest.raises(ValueError, match="se"):
        Statistical("E x", estimate=0.5, se=0.0, predicted=0.5)


def test_statistical_coverage_with_few_degrees_of_freedom():
    """The band's coverage against Student's t in closed form (the rule itself does not change)."""
    z = 4.0
    # t with 1 dof is Cauchy: P(|t| <= z) = (2/pi) atan z; with 2 dof the CDF is 1/2 + t / (2 sqrt(2 + t^2))
    assert Statistical("E x", 0.5, 0.01, 0.5, dof=1).coverage() == pytest.approx(2 / math.pi * math.atan(z), rel=1e-12)
    two = Statistical("E x", 0.5, 0.01, 0.5, dof=2)
    assert two.coverage() == pytest.approx(z / math.sqrt(2 + z * z), rel=1e-12)
    assert "94.3 % coverage at 2 dof" in two.tolerance_text()
    # many dof: the normal band, 1 - P(|N| > 4) = 1 - 6.33e-5 (normal tail, Abramowitz-Stegun 26.2)
    normal = Statistical("E x", 0.5, 0.01, 0.5)
    assert normal.coverage() == pytest.approx(1 - 6.334e-5, abs=1e-8)
    assert Statistical("E x", 0.5, 0.01, 0.5, dof=1e7).coverage() == pytest.approx(normal.coverage(), abs=1e-8)
    assert "coverage" not in normal.tolerance_text()
    assert two.prediction().accepted == normal.prediction().accepted
    with pytest.raises(ValueError, match="dof"):
        Statistical("E x", 0.5, 0.01, 0.5, dof=0.5)
    with pytest.raises(TypeError, match="dof"):
        Statistical("E x", 0.5, 0.01, 0.5, dof="2")


def test_count_and_categorical():
    c = np.array([0.5, 0.9, 1.05, 1.1, 1.5])
    cycled = np.array([False, False, True, True, True])
    cnt = Count("cycles iff c > 1", measured=cycled, predicted=c > 1, rivals={"threshold 1.11": c > 1.11})
    assert cnt.prediction().accepted and not cnt.rival_assessments()[0].accepted
    assert Count("most", measured=cycled, predicted=True, required=3).prediction().accepted
    cat = Categorical("periods", measured=[2, 4], predicted=[2, 4], rivals={"no doubling": [2, 2]})
    assert cat.prediction().accepted and not cat.rival_assessments()[0].accepted
    with pytest.raises(TypeError, match="floats"):
        Categorical("periods", measured=[2.0], predicted=[2.0])


@pytest.mark.parametrize("make, match", [
    (lambda: Exact("x", 1.0, 1.0), "positive tolerance"),
    (lambda: Exact("", 1.0, 1.0, atol=1), "quantity"),
    (lambda: Exact("x", 1.0, 1.0, atol=-1), "atol"),
    (lambda: Exact("x", 1.0, 1.0, rtol=float("nan")), "rtol"),
    (lambda: Exact("x", [1.0, 2.0], [1.0, 2.0, 3.0], atol=1), "shapes"),
    (lambda: Exact("x", 1.0, 1.0, atol=1, rivals=[1.0]), "rivals"),
    (lambda: Bound("x", 1.0, 1.0, side="<"), "side"),
    (lambda: Count("x", measured=[1, 0]), "booleans"),
    (lambda: Count("x", measured=[True], required=2), "required"),
    (lambda: Statistical("x", 1.0, 0.1, 1.0, z=0), "z"),
])
def test_bad_input_names_the_parameter(make, match):
    with pytest.raises((ValueError, TypeError), match=match):
        make()


def test_resolution_is_computed_on_the_rule():
    """The resolution is the smallest relative change of the prediction the check's own rule rejects."""
    # Exact: measured 1.0, rtol 0.1 around p: p(1 - d) is rejected once d > 0.1 (1 - d), i.e. d > 1/11
    assert Exact("x", 1.0, 1.0, rtol=0.1).resolution() == pytest.approx(1 / 11, rel=2e-3)
    # a one-sided bound resolves only its tightening direction: the room 0.5 of a bound 2
    assert Bound("x", 1.5, 2.0).resolution() == pytest.approx(0.25, rel=2e-3)
    # a slope's band: |slope - p| <= z SE + next order; an exact power law has SE 0, so the band is next_order
    x = np.geomspace(1, 10, 5)
    assert Rate("s", x, x**2, 2.0, next_order=0.1).resolution() == pytest.approx(0.05, rel=2e-3)
    assert Statistical("m", 1.0, 0.01, 1.0, z=4).resolution() == pytest.approx(0.04, rel=2e-3)  # band 4 SE, absolute
    # a rejected prediction resolves everything; discrete outcomes and zero predictions have no relative one
    assert Exact("x", 1.0, 2.0, rtol=0.1).resolution() == 0.0
    assert Count("c", np.ones(3, bool)).resolution() is None
    assert Categorical("k", np.array([2, 2]), 2).resolution() is None
    # discrete outcomes have no absolute resolution either, even when every predicted outcome is False (0)
    for discrete in (Count("c", np.zeros(3, bool), predicted=False), Categorical("k", np.array([0, 0]), 0)):
        assert discrete.resolution() is None and discrete.absolute_resolution() is None
    zero = Exact("g", 0.0, 1e-5, atol=1e-4)
    assert zero.resolution() is None and zero.absolute_resolution() == pytest.approx(1e-4 - 1e-5, rel=2e-3)
    # a prediction on the very edge of its band is rejected at every change: resolution ~0, and it terminates
    edge = Exact("x", 1.0, 1.5, rtol=0.5)  # binary-exact: |1.5 - 1| = 0.5 · 1
    assert edge.prediction().accepted and edge.resolution() < 1e-12
