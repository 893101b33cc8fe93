"""Runs that keep only whole files: repeatable --claim, stable --json, --no-cache writing nothing, usage errors for
folders that cannot be written, figures written atomically and redrawn when a file no longer matches its stamp.

Runs against a scratch registry of tiny synthetic claims (topic ``toy``), in this process.
"""
from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import numpy as np
import pytest

import figures.__main__ as figures_main
import paper_checks.__main__ as checks_main
import sims.cache
from figures import plot
from paper_checks import Exact, Paper, Result
from paper_checks import _registry
from paper_checks._registry import Claim

TOY = Paper(key="toy2024", title="Toy", authors="A. Author", year=2024)


@pytest.fixture
def toy(monkeypatch, tmp_path):
    """Three toy claims; two read one shared experiment (``exp.toy.shared.<budget>``). Returns the call log."""
    calls: list[str] = []

    def shared(budget):
        def compute():
            calls.append("experiment")
            return {"x": np.arange(3.0)}

        return sims.cache.cached(f"exp.toy.shared.{budget.name}", {"experiment": "toy.shared"}, compute, topic="toy")

    def first(budget):
        """x read from the shared experiment."""
        calls.append("first")
        return Result(Exact("x", 2.0, float(shared(budget)["x"][2]), rtol=1e-12, rivals={"x = 1": 1.0}, why="exact"),
                      arrays={"x": np.arange(3.0)}, seed=5)

    def second(budget):
        """y from the same experiment."""
        calls.append("second")
        return Result(Exact("y", 1.0, float(shared(budget)["x"][1]), rtol=1e-12, rivals={"y = 0": 0.0}, why="exact"))

    def third(budget):
        """z, alone."""
        calls.append("third")
        return Result(Exact("z", 0.0, 0.0, atol=1e-12, rivals={"z = 1": 1.0}, why="exact"))

    reg = {c.id: c for c in (
        Claim("toy2024.first", TOY, "x is 2", "", "derived", "exact", "derived here", first, "toy"),
        Claim("toy2024.second", TOY, "y is 1", "", "derived", "exact", "derived here", second, "toy"),
        Claim("toy2024.third", TOY, "z is 0", "", "derived", "exact", "derived here", third, "toy"),
    )}
    monkeypatch.setattr(_registry, "_REGISTRY", reg)
    monkeypatch.setattr(_registry, "load_all", lambda: None)
    real = sims.cache.topic_names()
    monkeypatch.setattr(sims.cache, "topic_names", lambda: (*real, "toy"))
    monkeypatch.setenv("STEPLAB_RESULTS", str(tmp_path / "results"))
    return calls


def _usage_error(main, argv, capsys) -> str:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    return capsys.readouterr().err


def test_claim_is_repeatable(toy, capsys):
    assert checks_main.main(["--claim", "toy2024.third", "--claim", "toy2024.first", "--list"]) == 0
    assert [ln.split()[0] for ln in capsys.readouterr().out.splitlines()] == ["toy2024.first", "toy2024.third"]
    err = _usage_error(checks_main.main, ["--claim", "toy2024.first", "--claim", "toy2024.fist", "--list"], capsys)
    assert "toy2024.fist" in err and "valid: toy2024.first" in err
    err = _usage_error(checks_main.main, ["--claim", "toy2024.first", "--paper", "meng2024", "--list"], capsys)
    assert "paper" in err


def test_json_list_prints_json(toy, capsys):
    assert checks_main.main(["--list", "--json", "--claim", "toy2024.first", "--claim", "toy2024.second"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [r["id"] for r in listed] == ["toy2024.first", "toy2024.second"]
    assert listed[0] == {"id": "toy2024.first", "paper": "toy2024", "topic": "toy", "kind": "exact",
                         "provenance": "derived", "source": "derived here", "statement": "x is 2"}


def test_json_is_byte_stable_and_timings_are_opt_in(toy, capsys):
    argv = ["--topic", "toy", "--budget", "quick", "--json", "--quiet"]
    outs = []
    for extra in ([], [], [], ["--timings"]):
        assert checks_main.main(argv + extra) == 0
        outs.append(capsys.readouterr().out)
    cold, warm, again, timed = outs
    assert warm == again  # two identical runs, identical bytes
    assert "wall_s" not in warm and all("wall_s" in r for r in json.loads(timed))
    # the cold run differs only in having computed what the warm run read back
    assert [{**r, "cached": True} for r in json.loads(cold)] == json.loads(warm)
    assert all(r["seed"] == (5 if r["id"] == "toy2024.first" else None) for r in json.loads(warm))


def test_no_cache_writes_nothing_and_runs_a_shared_experiment_once(toy, tmp_path, capsys):
    assert checks_main.main(["--topic", "toy", "--budget", "quick", "--no-cache", "--quiet"]) == 0
    assert not (tmp_path / "results").exists()
    assert toy == ["first", "experiment", "second", "third"]


def test_an_unwritable_results_folder_is_a_usage_error_before_any_work(toy, tmp_path, monkeypatch, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("STEPLAB_RESULTS", str(blocker / "results"))
    err = _usage_error(checks_main.main, ["--topic", "toy", "--budget", "quick"], capsys)
    assert f"results folder {blocker / 'results'} is not writable" in err and "--no-cache" in err
    err = _usage_error(figures_main.main, ["--topic", "toy", "--budget", "quick", "--out", str(tmp_path / "out")],
                       capsys)
    assert f"results folder {blocker / 'results'} is not writable" in err
    assert toy == []  # nothing computed, nothing thrown away
    assert checks_main.main(["--topic", "toy", "--budget", "quick", "--no-cache", "--quiet"]) == 0  # the way out


@pytest.mark.parametrize("where", ["a file", "under a file"])
def test_figures_out_must_be_a_writable_folder(toy, tmp_path, capsys, where):
    path = tmp_path / "report.html"
    path.write_text("<html></html>")
    out = path if where == "a file" else path / "out"
    err = _usage_error(figures_main.main, ["--topic", "toy", "--budget", "quick", "--out", str(out)], capsys)
    assert f"--out: {str(out)!r} is not a writable folder" in err and "Traceback" not in err
    assert toy == [] and path.read_text() == "<html></html>"


def _toy_figures(monkeypatch) -> list[str]:
    """The toy topic's figure script (one figure from claim toy2024.first); returns the log of drawings."""
    drawn: list[str] = []

    def make(results, out, budget):
        drawn.append(budget.name)
        fig, ax = plot.figure()
        ax.plot(results["toy2024.first"].arrays["x"], color=plot.THEORY)
        return plot.save(fig, "toy_x", out)

    monkeypatch.setitem(sys.modules, "figures.toy", types.SimpleNamespace(make=make))
    monkeypatch.setattr(figures_main, "topic_modules", lambda: ["toy"])
    return drawn


def test_a_figure_that_no_longer_matches_its_stamp_is_redrawn(toy, monkeypatch, tmp_path):
    drawn = _toy_figures(monkeypatch)
    out = tmp_path / "out"
    argv = ["--topic", "toy", "--budget", "quick", "--out", str(out), "--quiet"]
    assert figures_main.main(argv) == 0
    png, pdf = out / "toy_x.png", out / "toy_x.pdf"
    whole = {p: p.read_bytes() for p in (png, pdf)}
    stamp = json.loads((out / figures_main.STAMP).read_text())["toy"]["files"]
    assert stamp["toy_x.png"]["size"] == len(whole[png]) and len(stamp["toy_x.pdf"]["sha256"]) == 64
    assert figures_main.main(argv) == 0 and len(drawn) == 1  # intact: kept
    for damage in (lambda p: p.write_bytes(whole[p][: len(whole[p]) // 2]),  # truncated (an interrupted drawing)
                   lambda p: p.write_bytes(whole[p][:-1] + bytes([whole[p][-1] ^ 1]))):  # same size, one byte off
        for p in (png, pdf):
            n = len(drawn)
            damage(p)
            assert figures_main.main(argv) == 0 and len(drawn) == n + 1, p.name
            assert p.read_bytes() == whole[p]  # redrawn whole (figures are byte-stable)
    assert not [p.name for p in out.iterdir() if p.name.endswith(".tmp")]


def test_an_interrupted_save_keeps_the_previous_file(tmp_path, monkeypatch):
    fig, ax = plot.figure()
    ax.plot([0, 1], [0, 1])
    (png, pdf) = plot.save(fig, "line", tmp_path)
    before = png.read_bytes()
    fig, ax = plot.figure()
    ax.plot([0, 1], [1, 0])

    def interrupted(self, fname, **kwargs):
        Path(fname).write_bytes(b"\x89PNG half")
        raise KeyboardInterrupt

    monkeypatch.setattr(type(fig), "savefig", interrupted)
    with pytest.raises(KeyboardInterrupt):
        plot.save(fig, "line", tmp_path)
    assert png.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["line.pdf", "line.png"]
