"""The theory audit reaches every figure: a series declared to draw a claim check is read at the check's points
however it is drawn, and compared with its prediction and its rivals (red on a rival, green on the prediction)."""
import numpy as np
import pytest

from figures import plot
from paper_checks import Exact, Rate


class _Result:
    def __init__(self, checks):
        self.checks = checks


def _ratio_check():
    """A check on Var(z)/Var(x) at three EMA rates: the prediction and the i.i.d. rival differ by 10–40 %."""
    alpha = np.array([0.05, 0.1, 0.3])
    rho = 0.8
    pred = alpha * (1 + rho * (1 - alpha)) / ((2 - alpha) * (1 - rho * (1 - alpha)))
    iid = alpha / (2 - alpha)
    return alpha, pred, iid, Exact("Var(EMA)/Var(x)", pred, pred * (1 + 1e-4), rtol=1e-3,
                                   rivals={"α/(2 − α) (iid)": iid})


def _dense(alpha_fine, rho=0.8):
    return alpha_fine * (1 + rho * (1 - alpha_fine)) / ((2 - alpha_fine) * (1 - rho * (1 - alpha_fine)))


def _figure(y_of_alpha, *, scale=1.0, check="toy.ema:Var(EMA)/Var(x)", at=None, transform=None):
    """A theory line on a dense grid of α, scaled by ``scale`` (a transformed quantity), with no simulation drawn:
    the old audit could not read it."""
    alpha, *_ = _ratio_check()
    fig, ax = plot.figure()
    a = np.linspace(0.02, 0.5, 400)
    plot.theory_line(ax, a, scale * y_of_alpha(a), check=check, at=alpha if at is None else at, transform=transform)
    return fig


def _results():
    *_, check = _ratio_check()
    return {"toy.ema": _Result([check])}


def test_a_declared_theory_line_is_compared_on_its_own_grid_and_a_rival_there_is_caught():
    good, n_good = plot.audit_theory_lines(_figure(_dense), _results(), ["toy.ema"])
    bad, n_bad = plot.audit_theory_lines(_figure(lambda a: a / (2 - a)), _results(), ["toy.ema"])
    assert n_good == n_bad == 1
    assert good == []
    assert [p.kind for p in bad] == ["rival drawn as theory"] and "iid" in bad[0].message


def test_a_transformed_quantity_is_compared_through_the_declared_transform():
    """The line draws ½·ratio: with the transform declared it is the prediction; without it, it is off its check."""
    half = lambda v: 0.5 * np.asarray(v)  # noqa: E731
    good, _ = plot.audit_theory_lines(_figure(_dense, scale=0.5, transform=half), _results(), ["toy.ema"])
    bad, _ = plot.audit_theory_lines(_figure(lambda a: a / (2 - a), scale=0.5, transform=half), _results(),
                                     ["toy.ema"])
    undeclared, _ = plot.audit_theory_lines(_figure(_dense, scale=0.5), _results(), ["toy.ema"])
    assert good == []
    assert [p.kind for p in bad] == ["rival drawn as theory"]
    assert [p.kind for p in undeclared] == ["theory line off its check"] and "off its prediction" in undeclared[0].message


def test_a_declared_line_that_is_neither_prediction_nor_rival_is_off_its_check():
    problems, compared = plot.audit_theory_lines(_figure(lambda a: 1.1 * _dense(a)), _results(), ["toy.ema"])
    assert compared == 1 and [p.kind for p in problems] == ["theory line off its check"]


@pytest.mark.parametrize("check, at, words", [
    ("toy.other", None, "not among the figure's claims"),
    ("toy.ema:Var(z)", None, "no numeric check"),
    ("toy.ema", np.array([0.6, 0.7, 0.8]), "does not cover"),      # beyond the drawn grid
    ("toy.ema", np.array([0.1, 0.2]), "does not cover"),           # two x for three values
])
def test_a_declaration_that_cannot_be_read_is_reported(check, at, words):
    problems, _ = plot.audit_theory_lines(_figure(_dense, check=check, at=at), _results(), ["toy.ema"])
    assert [p.kind for p in problems] == ["theory line off its check"] and words in problems[0].message


def test_a_scalar_check_is_drawn_through_a_formula_of_its_value():
    """A Rate check's slope drawn as c·x^s: the predicted slope passes, the rival's slope is caught."""
    x = np.geomspace(1, 100, 12)
    y = 3.0 * x ** -0.5 * (1 + 1e-3 * np.cos(x))
    check = Rate("loss decay exponent", x, y, predicted=-0.5, next_order=1e-2, rivals={"1/t decay": -1.0})
    results = {"toy.rate": _Result([check])}
    xs = np.geomspace(1, 100, 5)
    for slope, kind in ((-0.5, []), (-1.0, ["rival drawn as theory"])):
        fig, ax = plot.figure()
        xx = np.geomspace(1, 100, 300)
        plot.theory_line(ax, xx, 3.0 * xx ** slope, check="toy.rate", at=xs, transform=lambda s: 3.0 * xs ** s)
        problems, compared = plot.audit_theory_lines(fig, results, ["toy.rate"])
        assert compared == 1 and [p.kind for p in problems] == kind


def test_a_declared_series_is_theory_whatever_its_label_and_a_quantity_may_be_named_by_its_start():
    """A line labelled "L = 2" that declares its check is audited (red when it draws the rival); "Var(EMA)" names the
    one check whose quantity starts so."""
    alpha, pred, iid, _ = _ratio_check()
    for y, kinds in ((_dense, []), (lambda a: a / (2 - a), ["rival drawn as theory"])):
        fig, ax = plot.figure()
        a = np.linspace(0.02, 0.5, 400)
        (line,) = ax.plot(a, y(a), color=plot.PALETTE[2], label="L = 2")
        plot.draws(line, "toy.ema:Var(EMA)", at=alpha)
        problems, compared = plot.audit_theory_lines(fig, _results(), ["toy.ema"])
        assert compared == 1 and [p.kind for p in problems] == kinds


def test_bad_declarations_are_refused():
    fig, ax = plot.figure()
    (line,) = ax.plot([0, 1], [0, 1])
    with pytest.raises(ValueError, match="check"):
        plot.draws(line, ":quantity")
    with pytest.raises(TypeError, match="y: expected a function"):
        plot.draws(line, "toy.ema", at=[0.1], y=3.0)
    with pytest.raises(ValueError, match="at: expected finite"):
        plot.draws(line, "toy.ema", at=[0.1, np.nan])


def test_save_records_coverage_and_checks_the_stated_reason(tmp_path, monkeypatch):
    """Coverage per figure: a compared figure, an exempt one with its reason, one with neither (a problem)."""
    # what is tested is the record save() keeps; drawing the layout check and the files would only cost time
    monkeypatch.setattr(plot, "check_layout", lambda fig: [])
    monkeypatch.setattr(plot, "_write_atomically", lambda fig, path, ext: None)
    with plot.track_claims(_results()) as tracked:
        tracked["toy.ema"]
        plot.save(_figure(_dense), "audit_bound", tmp_path)
        fig, ax = plot.figure()
        ax.plot([0.0, 1.0], [1.0, 2.0], label="theory")
        tracked["toy.ema"]
        plot.save(fig, "audit_exempt", tmp_path, unaudited="the line draws a bias curve that no check predicts")
        fig, ax = plot.figure()
        ax.plot([0.0, 1.0], [1.0, 2.0], label="theory")
        tracked["toy.ema"]
        plot.save(fig, "audit_silent", tmp_path)
        fig, ax = plot.figure()
        ax.plot([0.0, 1.0], [1.0, 2.0], "o", label="simulation")
        plot.save(fig, "audit_stale", tmp_path, unaudited="the line draws a bias curve that no check predicts")
        with pytest.raises(ValueError, match="unaudited: expected a reason"):
            plot.save(plot.figure()[0], "audit_terse", tmp_path, unaudited="no check")
    cov = plot.theory_coverage()
    assert cov["audit_bound"] == plot.TheoryCoverage(1, 1, None) and cov["audit_bound"].problem() is None
    assert cov["audit_exempt"].problem() is None and cov["audit_exempt"].unaudited.startswith("the line")
    assert "none compared" in cov["audit_silent"].problem()
    assert "draws no series presented as theory" in cov["audit_stale"].problem()
    assert "compared 1" in plot.TheoryCoverage(1, 1, "a reason of five words here").problem()



def _logistic_cycles():
    from paper_checks import as_budget, get_claim, run_claims

    budget = as_budget("quick")
    claim = "meng2024.cycles_between_1_and_2"
    return budget, {claim: run_claims([get_claim(claim)], budget, use_cache=True)[0].result}


@pytest.mark.slow
def test_a_rival_planted_in_a_real_figure_is_caught(tmp_path, monkeypatch):
    """The logistic cobweb, drawn from the cache at the quick budget: as committed its predicted 2-cycle is compared
    with the claim's check and passes; with the cycle moved to the check's rival (the formula without its 1/(2 − c)
    factor) the same figure is refused, naming the rival (slow tier: the claim and the figure take seconds)."""
    import figures.logistic as fl

    budget, results = _logistic_cycles()
    with plot.track_claims(results):
        fl.cobweb(budget, tmp_path)
    assert plot.theory_coverage()["logistic_cobweb"].compared >= 1
    dataset = fl.th.cycle_dataset

    def without_factor(c):  # u, v of the piecewise-linear formula with its 1/(2 − c) factor dropped
        d = dict(dataset(c))
        d["u"], d["v"] = d["w_star"] - d["J"] / d["lam"], d["w_star"] + d["J"] * (c - 1) / d["lam"]
        return d

    monkeypatch.setattr(fl.th, "cycle_dataset", without_factor)
    with plot.track_claims(results), pytest.raises(plot.LayoutError, match="rival drawn as theory|without the 1/"):
        fl.cobweb(budget, tmp_path)


@pytest.mark.slow
def test_the_bifurcation_figure_refuses_the_piecewise_linear_cycle(tmp_path, monkeypatch):
    """The figure that started the audit: its exact 2-cycle branches are compared with the claim's exact cycle at
    ηλ = 1.5; the piecewise-linear limit drawn in their place is 0.74 % off there (less than the 5 % that makes a
    rival distinct on a plot, more than the 0.2 % interpolation error) and is refused as off its check."""
    import figures.logistic as fl

    budget, results = _logistic_cycles()
    with plot.track_claims(results):
        fl.bifurcation(budget, tmp_path)
    assert plot.theory_coverage()["logistic_bifurcation"].compared == 2

    def piecewise_linear(z, weights, eta, guess):  # the guess handed in is the piecewise-linear cycle itself
        return np.asarray(guess, dtype=float), 0.0

    monkeypatch.setattr(fl.th, "solve_two_cycle", piecewise_linear)
    with plot.track_claims(results), pytest.raises(plot.LayoutError, match="off its prediction"):
        fl.bifurcation(budget, tmp_path)
