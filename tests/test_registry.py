"""The claim registry v2: statuses follow from typed checks and rivals; the CLI cannot look green by accident."""
import json

import pytest

import paper_checks
from paper_checks import Bound, Budget, Exact, Paper, Result, claim
from paper_checks import _registry
from paper_checks.__main__ import main

DEMO = Paper("demo2000", "A demo paper", "A. Author", 2000, arxiv="0000.00000")


@pytest.fixture
def scratch_registry(monkeypatch):
    monkeypatch.setattr(_registry, "_REGISTRY", {})
    monkeypatch.setattr(_registry, "load_all", lambda: None)
    yield _registry._REGISTRY


QUOTE = dict(quote="the demo paper's own words", where="arXiv:0000.00000, abstract")


def _register(name, result, kind="exact", refutes=False):
    def check(budget):
        """demo check"""
        return result

    check.__qualname__ = name
    claim(f"demo2000.{name}", paper=DEMO, statement=name, provenance="quoted", kind=kind, source="derived here",
          refutes_paper=refutes, **QUOTE)(check)


def test_every_status_and_exit_codes(scratch_registry, capsys):
    _register("agrees", Result(Exact("x", 1.0, 1.0 + 1e-15, atol=1e-12, rivals={"x = 2": 2.0})))
    _register("refuted", Result(Exact("x", 1.0, 1.0, atol=1e-12, rivals={"x = 3": 3.0}, paper=2.0, **QUOTE)),
              refutes=True)
    _register("differs", Result(Exact("spread", 1.7, 1.72, atol=0.1, rivals={"no effect: 1": 1.0}, paper=6.0,
                                      quote="the spread drops 6x", where="arXiv:0000.00000, Fig. 2")))
    assert main(["--no-cache", "--budget", "quick"]) == 0
    out = capsys.readouterr().out
    assert "1 passed, 1 refutes paper, 1 differs from paper" in out

    _register("disagrees", Result(Exact("x", 1.0, 2.0, atol=1e-12, rivals={"x = 2": 2.0})))
    _register("weak", Result(Exact("x", 1.0, 1.05, atol=0.1, rivals={"x = 1.1": 1.1})))
    _register("no_rival", Result(Exact("x", 1.0, 1.0, atol=0.1)))
    _register("wrong_kind", Result(Bound("x", 1.0, 2.0, rivals={"0.5": 0.5})), kind="exact")
    _register("refutation_not_reproduced",
              Result(Exact("x", 1.0, 1.0, atol=0.1, rivals={"3": 3.0}, paper=1.05, **QUOTE)), refutes=True)

    def crashes(budget):
        """crashes"""
        raise RuntimeError("boom")

    claim("demo2000.crashes", paper=DEMO, statement="c", provenance="derived", kind="exact", source="derived here")(crashes)
    assert main(["--no-cache", "--budget", "quick", "--json"]) == 1
    rows = {r["id"]: r for r in json.loads(capsys.readouterr().out)}
    assert {k: r["status"] for k, r in rows.items()} == {
        "demo2000.agrees": "passed", "demo2000.refuted": "refutes paper", "demo2000.differs": "differs from paper",
        "demo2000.disagrees": "failed", "demo2000.weak": "inconclusive", "demo2000.no_rival": "error",
        "demo2000.wrong_kind": "error", "demo2000.refutation_not_reproduced": "inconclusive",
        "demo2000.crashes": "error"}
    rival = rows["demo2000.agrees"]["checks"][0]["rivals"][0]
    assert rival["label"] == "x = 2" and rival["accepted"] is False and "tolerance" in rival["margin"]
    assert rows["demo2000.agrees"]["source"] == "derived here"


def test_unknown_names_exit_nonzero_and_list_valid_ones(scratch_registry, capsys):
    _register("agrees", Result(Exact("x", 1.0, 1.0, atol=1e-12, rivals={"x = 2": 2.0})))
    for flag in ("--topic", "--paper", "--claim"):
        with pytest.raises(SystemExit) as exc:
            main([flag, "typo", "--no-cache"])
        assert exc.value.code != 0
        assert "valid:" in capsys.readouterr().err


@pytest.mark.parametrize("kwargs, match", [
    (dict(id="Bad Id"), "id"),
    (dict(id="other.name"), "paper key"),
    (dict(kind="vibes"), "kind"),
    (dict(provenance="rumour"), "provenance"),
    (dict(source=""), "source"),
    # v3: a 'quoted' statement or a registered refutation needs the paper's words and their locator
    (dict(quote="", where=""), "provenance: claim 'demo2000.x' is 'quoted' but carries no quote"),
    (dict(provenance="derived", quote="", where="", refutes_paper=True), "refutes_paper"),
    (dict(where=""), "quote/where"),
    # steplab's own findings are never a paper's statement
    (dict(id="steplab.x", paper=paper_checks.STEPLAB), "steplab's own finding"),
])
def test_bad_registrations(scratch_registry, kwargs, match):
    args = dict(id="demo2000.x", paper=DEMO, statement="s", provenance="quoted", kind="exact",
                source="abstract", **QUOTE) | kwargs
    with pytest.raises(ValueError, match=match):
        claim(args.pop("id"), **args)


def test_quote_must_be_text(scratch_registry):
    with pytest.raises(TypeError, match="quote"):
        claim("demo2000.x", paper=DEMO, statement="s", provenance="derived", kind="exact", source="x", quote=3)


def test_undocumented_check_is_refused(scratch_registry):
    with pytest.raises(ValueError, match="docstring"):
        claim("demo2000.x", paper=DEMO, statement="s", provenance="quoted", kind="exact", source="abstract",
              **QUOTE)(lambda budget: None)


def test_a_paper_value_needs_its_quote_and_locator():
    for kwargs in ({}, {"quote": "6x"}, {"where": "Fig. 2"}, {"quote": " ", "where": "Fig. 2"}):
        with pytest.raises(ValueError, match="paper: the paper's value"):
            Exact("spread", 1.7, 1.72, atol=0.1, paper=6.0, **kwargs)
    with pytest.raises(TypeError, match="quote"):
        Exact("spread", 1.7, 1.72, atol=0.1, quote=None)


def test_coarse_claims_are_flagged_unless_they_say_why(scratch_registry):
    coarse = Result(Exact("x", 1.0, 1.0, rtol=0.3, rivals={"x = 2": 2.0}))
    sharp = Result(Exact("x", 1.0, 1.0, rtol=0.01, rivals={"x = 2": 2.0}))
    _register("coarse", coarse)
    _register("sharp", sharp)
    c, s = paper_checks.get_claim("demo2000.coarse"), paper_checks.get_claim("demo2000.sharp")
    assert c.coarse(coarse) and not s.coarse(sharp)
    assert c.resolution(coarse) == pytest.approx(0.3 / 1.3, rel=2e-3)  # p(1 - d) is rejected once d > rtol (1 - d)
    # a bound claim is not flagged (its resolution is its room), a quantitative one is, whatever its rivals
    assert not paper_checks.Claim("demo2000.b", DEMO, "s", "", "derived", "bound", "x", lambda b: None, "t").coarse(
        Result(Bound("x", 0.5, 1.0, rivals={"0.1": 0.1})))


def test_budget_object_and_result_types():
    assert Budget("quick").pick(quick=1, full=2) == 1 and Budget("full").pick(quick=1, full=2) == 2
    with pytest.raises(ValueError, match="budget"):
        paper_checks.check_budget("huge")
    with pytest.raises(TypeError, match="checks"):
        Result([1.0])
    with pytest.raises(ValueError, match="checks"):
        Result([])


def _foreign_topics(path) -> set:
    """Topics other than the module's own whose theory/sims/paper_checks modules it imports."""
    import ast
    from pathlib import Path

    from sims.cache import _owner

    own, found = _owner(path), set()
    for node in ast.walk(ast.parse(path.read_text())):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
        for name in names:
            parts = name.split(".")
            if parts[0] in ("theory", "sims", "paper_checks") and len(parts) > 1:
                owner = _owner(Path(*parts).with_suffix(".py"))
                if owner not in (None, own):
                    found.add(owner)
    return found


def test_cross_topic_imports_are_declared_in_uses():
    """A claim module that calls another topic's code declares it (``uses=``), so the cache key covers it."""
    import inspect
    from pathlib import Path

    from paper_checks._experiment import experiments
    from paper_checks._registry import claims
    from sims.cache import _ROOT, _owner

    declared: dict[str, set] = {}
    for c in claims():
        declared.setdefault(c.check.__module__, set()).update(c.uses)
    for e in experiments().values():
        declared.setdefault(e.fn.__module__, set()).update(e.uses)
    for module in declared:
        path = Path(inspect.getfile(__import__(module, fromlist=["_"])))
        rel = path.relative_to(_ROOT)
        if _owner(rel) is None:
            continue
        missing = _foreign_topics(rel if rel.exists() else path) - declared[module]
        assert not missing, f"{module} imports topics {sorted(missing)} without declaring uses="
