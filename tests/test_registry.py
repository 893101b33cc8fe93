import json

import pytest

import paper_checks
from paper_checks import Paper, Result, claim
from paper_checks import _registry
from paper_checks.__main__ import main

DEMO = Paper("demo2000", "A demo paper", "A. Author", 2000, arxiv="0000.00000")


@pytest.fixture
def scratch_registry(monkeypatch):
    monkeypatch.setattr(_registry, "_REGISTRY", {})
    monkeypatch.setattr(_registry, "load_all", lambda: None)
    yield _registry._REGISTRY


def test_status_and_cli_exit_codes(scratch_registry, capsys):
    @claim("demo2000.agrees", paper=DEMO, statement="two numbers agree", provenance="quoted", kind="exact")
    def agrees(budget):
        return Result(1.0, 1.0 + 1e-15, 1e-12, True, "round-off only")

    @claim("demo2000.refuted", paper=DEMO, statement="the stated constant is off", provenance="quoted",
           kind="exact", refutes_paper=True)
    def refuted(budget):
        return Result(2.0, 1.0, 1e-12, True, "paper says 2, maths says 1")

    assert main(["--no-cache", "--budget", "quick"]) == 0
    table = capsys.readouterr().out
    assert "refutes paper" in table and "1 passed" in table

    @claim("demo2000.disagrees", paper=DEMO, statement="a bug", provenance="derived", kind="exact")
    def disagrees(budget):
        return Result(1.0, 2.0, 1e-12, False, "mismatch")

    @claim("demo2000.crashes", paper=DEMO, statement="a crash", provenance="derived", kind="exact")
    def crashes(budget):
        raise RuntimeError("boom")

    assert main(["--no-cache", "--budget", "quick", "--json"]) == 1
    rows = json.loads(capsys.readouterr().out)
    assert {r["id"]: r["status"] for r in rows} == {
        "demo2000.agrees": "passed", "demo2000.refuted": "refutes paper",
        "demo2000.disagrees": "failed", "demo2000.crashes": "error"}


@pytest.mark.parametrize("kwargs, match", [
    (dict(id="Bad Id"), "id"),
    (dict(id="other.name"), "paper key"),
    (dict(kind="vibes"), "kind"),
    (dict(provenance="rumour"), "provenance"),
])
def test_bad_registrations(scratch_registry, kwargs, match):
    args = dict(id="demo2000.x", paper=DEMO, statement="s", provenance="quoted", kind="exact") | kwargs
    with pytest.raises(ValueError, match=match):
        claim(args.pop("id"), **args)


def test_bad_budget_and_result_types():
    with pytest.raises(ValueError, match="budget"):
        paper_checks.check_budget("huge")
    with pytest.raises(TypeError, match="predicted"):
        Result([1, 2], 1.0, 0.1, True, "")
