"""The figure style: byte-stable files, the public helpers, and the layout checker (red on bad layouts)."""
import warnings

import numpy as np
import pytest

from figures import _style, plot


@pytest.fixture(autouse=True)
def _close_figures():
    """Each test's figures closed after it: pyplot keeps every open figure, and warns past 20."""
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


def _draw(out, name):
    fig, ax = _style.figure()
    x = np.linspace(0, 1, 50)
    ax.plot(x, x**2, color=_style.THEORY, label="theory")
    ax.plot(x[::5], x[::5] ** 2, "o", color=_style.SIM, label="simulation")
    _style.threshold(ax, 0.5, "η = 0.5")
    ax.set(xlabel="η", ylabel="loss", title="a clean figure")
    ax.legend(loc="lower right")
    return _style.save(fig, name, out)


def test_figures_are_byte_stable(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error", plot.LayoutWarning)  # the clean figure raises no layout warning
        first = [p.read_bytes() for p in _draw(tmp_path / "a", "demo")]
        second = [p.read_bytes() for p in _draw(tmp_path / "b", "demo")]
    assert first == second
    assert [p.suffix for p in (tmp_path / "a").iterdir()] != []


def _crowded_figure():
    """Eleven long x tick labels on a narrow axes: they overlap each other."""
    fig, ax = plot.figure(width=3.0, height=2.4)
    ax.plot([0, 1], [0, 1])
    ticks = np.linspace(0, 1, 11)
    ax.set_xticks(ticks, [f"{t:.6f}" for t in ticks])
    return fig


def test_layout_checker_flags_overlapping_tick_labels():
    fig = _crowded_figure()
    problems = plot.check_layout(fig)
    assert any(p.kind == "overlap" and "x tick labels" in p.message and "'0.500000'" in p.message for p in problems)


def test_layout_checker_passes_a_clean_figure():
    fig, ax = plot.figure()
    x = np.linspace(0.1, 2, 40)
    plot.theory_vs_simulation(ax, x, 1 / x, x[::4], 1 / x[::4], yerr=0.02 + 0 * x[::4])
    plot.threshold(ax, 1.0, "η = 1")
    plot.threshold(ax, 0.5, "floor", vertical=False)
    ax.set(xlabel="η", ylabel="f", title="clean")
    ax.legend(loc="upper right")
    assert plot.check_layout(fig) == []


@pytest.mark.parametrize("defect, kind", [
    ("title", "overlap"), ("outside", "outside"), ("single", "single tick label"), ("legend", "no legend"),
    ("markers on title", "data over text"), ("line through legend", "data over text"),
    ("line through label", "data over text"), ("raw tex", "raw TeX"),
])
def test_layout_checker_names_each_defect(defect, kind):
    fig, ax = plot.figure()
    ax.plot([1, 2], [1, 2], label="a")
    if defect == "title":
        ax.set_title("a long title over the axes")
        ax.text(0.3, 1.01, "a label on the title", transform=ax.transAxes)
        ax.legend()
    elif defect == "outside":
        ax.text(1.4, 0.5, "beyond the right edge", transform=ax.transAxes)
        ax.legend()
    elif defect == "single":
        ax.set_yscale("log")
        ax.set_ylim(5, 30)  # one decade tick (10) inside, minor labels off
        ax.yaxis.set_minor_formatter(plt_null())
        ax.legend()
    elif defect == "markers on title":
        ax.set_title("title inside the axes", y=0.85)
        ax.plot([1.5], [1.9], "o", ms=8, clip_on=False)
        ax.legend(loc="lower right")
    elif defect == "line through legend":
        ax.plot([1, 2], [1.9, 1.9], label="b")  # runs along the top, where the legend is
        ax.legend(loc="upper center")
    elif defect == "line through label":
        ax.annotate("7/4", (1.5, 1.5), fontsize=9)
        ax.legend(loc="lower right")
    elif defect == "raw tex":
        ax.set_xlabel(r"\lambda_{max} and \rho(M_B)^{t}")
        ax.legend()
    else:
        ax.plot([1, 2], [2, 1], label="b")
    kinds = {p.kind for p in plot.check_layout(fig)}
    assert kind in kinds


def test_data_over_text_spares_guides_and_clean_placements():
    """Threshold guides cross their own labels by design; mathtext in $...$ is typeset, not raw."""
    fig, ax = plot.figure()
    x = np.linspace(0, 1, 30)
    ax.plot(x, x, label=r"$\lambda_{\max}$ theory")
    ax.plot(x[::3], x[::3], "o", label="simulation")
    plot.threshold(ax, 0.5, "η = 0.5")
    ax.set(title="clean", xlabel=r"$\rho(M_B)^t$")
    ax.legend(loc="lower right")
    assert plot.check_layout(fig) == []


class _Result:
    def __init__(self, checks):
        self.checks = checks


def _audited_figure(theory_y, x, measured):
    fig, ax = plot.figure()
    xx = np.linspace(x[0], x[-1], 200)
    ax.plot(xx, theory_y(xx), color=plot.THEORY, label="theory")
    ax.plot(x, measured, "o", color=plot.SIM, label="simulation")
    ax.legend()
    return fig


def test_a_rival_drawn_as_theory_is_caught_and_the_prediction_is_not():
    """The logistic bifurcation defect, in small: the line labelled theory is the rival's formula."""
    from paper_checks import Exact

    x = np.linspace(1.2, 1.9, 8)
    pred, rival = np.sqrt(x - 1.0), 0.9 * (x - 1.0)     # the claim's prediction and a rival
    measured = pred * (1 + 1e-4 * np.cos(7 * x))        # a simulation that follows the prediction
    check = Exact("half-width", pred, measured, rtol=1e-3, rivals={"piecewise-linear": rival})
    results = {"toy.cycle": _Result([check])}
    bad, n_bad = plot.audit_theory_lines(_audited_figure(lambda t: 0.9 * (t - 1.0), x, measured), results, ["toy.cycle"])
    good, n_good = plot.audit_theory_lines(_audited_figure(lambda t: np.sqrt(t - 1.0), x, measured), results,
                                           ["toy.cycle"])
    assert n_bad == n_good == 1
    assert [p.kind for p in bad] == ["rival drawn as theory"] and "piecewise-linear" in bad[0].message
    assert good == []


def test_save_refuses_a_rival_drawn_as_theory(tmp_path):
    from paper_checks import Exact

    x = np.linspace(1.2, 1.9, 8)
    pred, rival = np.sqrt(x - 1.0), 0.9 * (x - 1.0)
    check = Exact("half-width", pred, pred, rtol=1e-3, rivals={"piecewise-linear": rival})
    with plot.track_claims({"toy.cycle": _Result([check])}) as tracked:
        tracked["toy.cycle"]
        with pytest.raises(plot.LayoutError, match="rival drawn as theory|follows the rival"):
            plot.save(_audited_figure(lambda t: 0.9 * (t - 1.0), x, pred), "rival_as_theory", tmp_path, layout="error")
    assert plot.theory_audits()["rival_as_theory"] == 1


def plt_null():
    from matplotlib.ticker import NullFormatter

    return NullFormatter()


def test_save_warns_with_the_figure_name_and_labels(tmp_path):
    with pytest.warns(plot.LayoutWarning, match=r"figure 'crowded'.*x tick labels overlap.*'0\.100000'"):
        paths = plot.save(_crowded_figure(), "crowded", tmp_path, layout="warn")
    assert [p.name for p in paths] == ["crowded.png", "crowded.pdf"]
    with pytest.raises(plot.LayoutError, match="crowded"):
        plot.save(_crowded_figure(), "crowded2", tmp_path)  # the default: refuse, write nothing
    assert not (tmp_path / "crowded2.png").exists()
    with pytest.raises(ValueError, match="layout"):
        plot.save(_crowded_figure(), "x", tmp_path, layout="loud")


def test_save_links_figures_to_the_claims_they_read(tmp_path):
    results = {"toy.a": 1, "toy.b": 2, "toy.c": 3}
    with plot.track_claims(results) as tracked:
        fig, ax = plot.figure()
        ax.plot([0, 1], [tracked["toy.a"], tracked.get("toy.b")])
        plot.save(fig, "linked_ab", tmp_path)
        tracked.get("toy.missing")
        fig, ax = plot.figure()
        ax.plot([0, 1], [0, tracked["toy.c"]])
        plot.save(fig, "linked_explicit", tmp_path, claims=["toy.a"])
    links = plot.figure_claims()
    assert links["linked_ab"] == ("toy.a", "toy.b")
    assert links["linked_explicit"] == ("toy.a",)


def test_bifurcation_skips_diverged_runs_and_checks_shapes():
    fig, ax = plot.figure()
    dots = plot.bifurcation(ax, [1.0, 2.0], [[0.1, 0.2], [np.inf, 0.3]], center=0.1)
    assert len(dots.get_xdata()) == 3
    with pytest.raises(ValueError, match="iterates"):
        plot.bifurcation(ax, [1.0, 2.0, 3.0], [[0.1, 0.2], [0.3, 0.4]])
    import matplotlib.pyplot as plt

    plt.close(fig)


def test_a_theory_series_holding_a_rivals_values_is_caught():
    """Markers presented as theory at the check's own points: the rival's values are caught, the prediction's not."""
    from paper_checks import Exact

    x = np.linspace(1.2, 1.9, 8)
    pred, rival = np.sqrt(x - 1.0), 0.9 * (x - 1.0)
    check = Exact("half-width", pred, pred, rtol=1e-3, rivals={"piecewise-linear": rival})
    results = {"toy.cycle": _Result([check])}
    for y, n_problems in ((rival, 1), (pred, 0)):
        fig, ax = plot.figure()
        ax.plot(x + 5, y, "s", label="predicted cycle (theory)")  # x unrelated to any plotted simulation
        problems, compared = plot.audit_theory_lines(fig, results, ["toy.cycle"])
        assert compared >= 1 and len(problems) == n_problems


@pytest.mark.slow
@pytest.mark.parametrize("topic", __import__("figures.__main__", fromlist=["topic_modules"]).topic_modules())
def test_every_figure_of_a_topic_passes_the_layout_check_and_draws_no_rival_as_theory(topic, tmp_path):
    """Each topic's figures at the quick budget, drawn as ``make figures`` draws them: no layout problem and no
    series presented as theory that follows a rival of the claims it shows (slow tier: it runs every claim)."""
    from figures._jobs import draw
    from paper_checks import as_budget, claims, run_claims, topics

    budget = as_budget("quick")
    outcomes = run_claims(claims(topic=topic) if topic in topics() else [], budget, use_cache=True)
    results = {o.claim.id: o.result for o in outcomes if o.result is not None}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", plot.LayoutWarning)
        files, links = draw(topic, results, tmp_path, budget)
    problems = [str(w.message) for w in caught if issubclass(w.category, plot.LayoutWarning)]
    assert files and not problems, "\n".join(problems)
    audited = {name: n for name, n in plot.theory_audits().items() if name in links}
    print(f"{topic}: theory series compared with the claims' checks, per figure: {audited}")
    # every figure with a series presented as theory is compared with a claim check, or says why it cannot be
    coverage = plot.theory_coverage()
    uncovered = [f"{p.stem}: {coverage[p.stem].problem()}" for p in files
                 if p.suffix == ".png" and p.stem in coverage and coverage[p.stem].problem()]
    assert not uncovered, "\n".join(uncovered)


def test_a_series_that_is_one_claims_prediction_and_anothers_rival_is_not_flagged():
    """A figure comparing two laws: the mean-square threshold is one claim's prediction and the other's rival."""
    from paper_checks import Exact

    x = np.linspace(1.0, 2.0, 6)
    ms, a_s = 2.0 / x, 2.4 / x
    results = {"toy.ms": _Result([Exact("η* mean square", ms, ms, rtol=1e-3, rivals={"a.s.": a_s})]),
               "toy.as": _Result([Exact("η* almost sure", a_s, a_s, rtol=1e-3, rivals={"mean square": ms})])}
    fig, ax = plot.figure()
    ax.plot(x, ms, "s", label="mean-square η* (theory)")
    problems, compared = plot.audit_theory_lines(fig, results, ["toy.ms", "toy.as"])
    assert compared == 2 and problems == []
    problems, _ = plot.audit_theory_lines(fig, results, ["toy.as"])
    assert [p.kind for p in problems] == ["rival drawn as theory"]


def test_a_constant_rival_is_not_held_by_a_curve_that_passes_through_it_once():
    """"GD's 2 for every μ" is not what an edge curve starting at 2 draws (the values must be distinct points)."""
    from paper_checks import Exact

    mu = np.array([0.0, 0.25, 0.5, 0.75, 0.9])
    edge = 2.0 / (1.0 + mu)
    results = {"toy.edge": _Result([Exact("edge", edge * 1.3, edge * 1.3, rtol=1e-3, rivals={"2": np.full(5, 2.0)})])}
    fig, ax = plot.figure()
    ax.plot(np.linspace(0, 0.95, 50), 2.0 / (1.0 + np.linspace(0, 0.95, 50)), color=plot.THEORY)
    assert plot.audit_theory_lines(fig, results, ["toy.edge"])[0] == []
    ax.plot(mu, np.full(5, 2.0), "o", color=plot.THEORY)  # five points at 2: constant values identify no formula
    assert plot.audit_theory_lines(fig, results, ["toy.edge"])[0] == []
