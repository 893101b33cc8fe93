"""The command line: strict names, exit codes, help for every option, progress lines, the cache command,
the claim index behind ``steplab list`` and a quiet end on a closed pipe.

Runs against a scratch registry of tiny synthetic claims, so it needs no topic to be importable.
"""
from __future__ import annotations

import argparse
import dataclasses
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
import types
from pathlib import Path

import numpy as np
import pytest

import figures.__main__ as figures_main
import sims.cache
import paper_checks.__main__ as checks_main
from figures import _cli, _index, plot
from paper_checks import Exact, Paper, Result, run_claims
from paper_checks import _registry
from paper_checks._registry import Claim

ROOT = Path(__file__).resolve().parent.parent
TOY = Paper(key="toy2024", title="Toy", authors="A. Author", year=2024, arxiv="2401.00001")
BAD = Paper(key="bad2025", title="Bad", authors="B. Author", year=2025)


def _good(budget):
    """Two equal numbers; the rival 1 is rejected."""
    return Result(Exact("x", 2.0, 2.0, rtol=1e-12, rivals={"x = 1": 1.0}, why="exact"), arrays={"x": np.arange(3.0)})


def _also_good(budget):
    """As _good, with a seed."""
    return Result(Exact("y", 1.0, 1.0, atol=1e-12, rivals={"y = 0": 0.0}, why="exact"), seed=3)


def _bad(budget):
    """Prediction 2, measurement 3: failed."""
    return Result(Exact("z", 2.0, 3.0, rtol=1e-6, rivals={"z = 1": 1.0}, why="exact"))


@pytest.fixture(autouse=True)
def private_index(monkeypatch, tmp_path):
    """Every test writes its claim index to its own folder: never the checkout's build/claim-index.json."""
    path = tmp_path / "index" / "claim-index.json"
    monkeypatch.setattr(_index, "index_path", lambda: path)
    return path


@pytest.fixture
def scratch(monkeypatch, tmp_path):
    """Replace the registry with three synthetic claims in topics 'toy' and 'bad'."""
    reg = {
        "toy2024.good": Claim("toy2024.good", TOY, "x is 2", r"x = \tfrac{4}{2}", "derived", "exact", "derived here",
                              _good, "toy"),
        "toy2024.also_good": Claim("toy2024.also_good", TOY, "y is 1", "", "quoted", "exact", "Lemma 1", _also_good,
                                   "toy"),
        "bad2025.broken": Claim("bad2025.broken", BAD, "z is 2", "", "derived", "exact", "derived here", _bad, "bad"),
    }
    monkeypatch.setattr(_registry, "_REGISTRY", reg)
    monkeypatch.setattr(_registry, "load_all", lambda: None)
    # a real topic that failed to import in an earlier test of this worker is no error of the scratch registry
    monkeypatch.setattr(_registry, "_IMPORT_ERRORS", {})
    # the cache keys results by topic: let it know the scratch topics
    real = sims.cache.topic_names()
    monkeypatch.setattr(sims.cache, "topic_names", lambda: (*real, "toy", "bad"))
    monkeypatch.setenv("STEPLAB_RESULTS", str(tmp_path / "results"))
    return reg


@pytest.mark.parametrize("argv, valid", [
    (["check", "--topic", "logistc"], "valid: toy, bad"),
    (["check", "--paper", "meng"], "valid: toy2024, bad2025"),
    (["check", "--claim", "toy2024.god"], "(did you mean toy2024.good, toy2024.also_good?); valid: toy2024.good, "
                                          "toy2024.also_good, bad2025.broken"),
    (["list", "--topic", "typo"], "valid: toy, bad"),
    (["list", "--claim", "broken"], "(did you mean bad2025.broken?)"),
    (["figures", "--topic", "typo"], "valid: toy, bad"),
])
def test_unknown_names_exit_nonzero_and_list_the_valid_ones(scratch, capsys, argv, valid):
    with pytest.raises(SystemExit) as exc:
        _cli.main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert valid in err and f"steplab {argv[0]}" in err


def test_an_unknown_name_among_many_gets_the_five_nearest_not_all():
    from paper_checks._registry import unknown_name

    ids = [f"paper{p}.claim_{w}" for p in range(14) for w in ("alpha", "beta", "gamma", "delta", "omega",
                                                                  "sigma", "kappa", "theta", "zeta", "eta")]
    msg = unknown_name("claim", "paper3.claim_thta", ids)
    near = msg[msg.index("(did you mean ") + 14:msg.index("?)")].split(", ")
    assert near[0] == "paper3.claim_theta" and len(near) == 5 and set(near) <= set(ids)
    assert msg.endswith(f"`steplab list claims` shows all {len(ids)}") and "paper13.claim_zeta" not in msg
    # a name typed without its paper key: the ids containing it come first
    msg = unknown_name("claim", "claim_omega", ids)
    assert msg.count("claim_omega") == 6 and "paper0.claim_omega" in msg
    assert "did you mean" not in unknown_name("paper", "zzzz", ids)


def test_check_suggests_names_from_the_live_registry(scratch, capsys):
    """`check` checks names against the registry before running: the suggestion, not a list of every id."""
    scratch.update({f"bad2025.c{k}": dataclasses.replace(scratch["bad2025.broken"], id=f"bad2025.c{k}")
                    for k in range(20)})
    with pytest.raises(SystemExit) as exc:
        _cli.main(["check", "--claim", "bad2025.brokn"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "(did you mean bad2025.broken, " in err and "shows all 23" in err
    assert err.count("bad2025.c") == 4  # five suggestions in all, not the 23 names


def test_python_m_entry_points_are_as_strict(scratch, capsys):
    for main in (checks_main.main, figures_main.main):
        with pytest.raises(SystemExit) as exc:
            main(["--topic", "logistc"])
        assert exc.value.code == 2
        assert "valid: toy" in capsys.readouterr().err


def test_a_selection_matching_nothing_is_an_error(scratch, capsys):
    with pytest.raises(SystemExit) as exc:
        _cli.main(["check", "--topic", "toy", "--paper", "bad2025"])
    assert exc.value.code == 2 and "no claim matches --topic toy, --paper bad2025" in capsys.readouterr().err


def test_check_runs_reports_progress_and_exit_codes(scratch, capsys):
    assert _cli.main(["check", "--topic", "toy", "--budget", "quick", "--no-cache"]) == 0
    captured = capsys.readouterr()
    assert "toy2024.good" in captured.out and "2 passed" in captured.out
    lines = [ln for ln in captured.err.splitlines() if ln.startswith("[")]
    assert re.match(r"^\[1/2\] toy2024\.good … \d+\.\d s passed  +\d+% \[", lines[0]), lines
    assert lines[1].startswith("[2/2] toy2024.also_good … ")
    assert _cli.main(["check", "--topic", "bad", "--budget", "quick", "--no-cache", "--quiet"]) == 1
    captured = capsys.readouterr()
    assert "failed" in captured.out and captured.err.count("[1/1]") == 0


def test_check_json_and_cached_second_run(scratch, capsys):
    assert _cli.main(["check", "--claim", "toy2024.good", "--budget", "quick", "--json"]) == 0
    first = capsys.readouterr()
    assert json.loads(first.out)[0]["status"] == "passed" and "(cached)" not in first.err
    assert _cli.main(["check", "--claim", "toy2024.good", "--budget", "quick", "--json"]) == 0
    second = capsys.readouterr()
    assert "(cached) passed" in second.err and json.loads(second.out)[0]["cached"] is True


def test_list_and_check_list(scratch, capsys):
    assert _cli.main(["check", "--list", "--paper", "toy2024"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [ln.split()[0] for ln in out] == ["toy2024.good", "toy2024.also_good"]
    assert _cli.main(["list", "topics"]) == 0
    assert capsys.readouterr().out.splitlines() == ["toy  (2 claims; paper toy2024)", "bad  (1 claims; paper bad2025)"]
    assert _cli.main(["list", "papers"]) == 0
    assert capsys.readouterr().out.startswith("toy2024  (2 claims, topic toy)")
    assert _cli.main(["list", "--json", "--topic", "bad"]) == 0
    assert [r["id"] for r in json.loads(capsys.readouterr().out)] == ["bad2025.broken"]


def test_every_option_has_help():
    parser = _cli.build_parser()
    parsers = {"steplab": parser}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            parsers.update(action.choices)
            assert all(a.help for a in action._choices_actions), "every subcommand has a help line"
    parsers["python -m paper_checks"] = checks_main.build_parser()
    parsers["python -m figures"] = figures_main.build_parser()
    for name, p in parsers.items():
        for action in p._actions:
            if not isinstance(action, argparse._SubParsersAction):
                assert action.help and action.help.strip(), f"{name}: {action.option_strings or action.dest} has no help"


def _draw_toy(results, out):
    """The toy topic's one figure, drawn from the good claim's arrays."""
    fig, ax = plot.figure()
    ax.plot(results["toy2024.good"].arrays["x"], color=plot.THEORY)
    return plot.save(fig, "toy_x", out)


def test_figures_draws_links_and_writes_a_topic_report(scratch, monkeypatch, tmp_path, capsys):
    def make(results, out, budget):
        return _draw_toy(results, out)

    monkeypatch.setitem(sys.modules, "figures.toy", types.SimpleNamespace(make=make))
    monkeypatch.setattr(figures_main, "topic_modules", lambda: ["toy"])
    out = tmp_path / "out"
    assert _cli.main(["figures", "--topic", "toy", "--budget", "quick", "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == [figures_main.STAMP, "report_toy.html", "report_toy.md",
                                                     "toy_x.pdf", "toy_x.png"]
    page = (out / "report_toy.html").read_text()
    good = page[page.index("id='toy2024.good'"):]
    assert "#img-toy_x" in good[:good.index("</section>")]  # the figure sits under the claim it read
    capsys.readouterr()
    assert _cli.main(["figures", "--list"]) == 0
    assert capsys.readouterr().out.strip() == "toy"


def test_figures_are_redrawn_only_when_their_inputs_changed(scratch, monkeypatch, tmp_path):
    drawn = []

    def make(results, out, budget):
        drawn.append(budget.name)
        return _draw_toy(results, out)

    monkeypatch.setitem(sys.modules, "figures.toy", types.SimpleNamespace(make=make))
    monkeypatch.setattr(figures_main, "topic_modules", lambda: ["toy"])
    out = tmp_path / "out"

    def run(*extra):
        assert _cli.main(["figures", "--topic", "toy", "--out", str(out), "--quiet", *extra]) == 0
        page = (out / "report_toy.html").read_text()
        good = page[page.index("id='toy2024.good'"):]
        assert "#img-toy_x" in good[:good.index("</section>")]  # the link survives a skipped drawing

    run("--budget", "quick")
    run("--budget", "quick")
    assert drawn == ["quick"]  # same sources, same budget, files present: kept
    run("--budget", "full")
    assert drawn == ["quick", "full"]  # another budget: drawn
    (out / "toy_x.pdf").unlink()
    run("--budget", "full")
    assert drawn == ["quick", "full", "full"]  # a missing file: drawn
    run("--budget", "full", "--fresh")
    assert len(drawn) == 4
    monkeypatch.setattr(figures_main, "drawing_key", lambda budget_name, name: "edited sources")
    run("--budget", "full")
    assert len(drawn) == 5  # an edited source changes the key: drawn


def test_a_raising_figure_script_is_reported_not_fatal(scratch, monkeypatch, tmp_path, capsys):
    def make(results, out, budget):
        raise RuntimeError("drawing failed")

    monkeypatch.setitem(sys.modules, "figures.toy", types.SimpleNamespace(make=make))
    monkeypatch.setattr(figures_main, "topic_modules", lambda: ["toy"])
    assert _cli.main(["figures", "--topic", "toy", "--budget", "quick", "--out", str(tmp_path), "--quiet"]) == 1
    assert "RuntimeError: drawing failed" in capsys.readouterr().err
    assert "figures/toy.py raised an error" in (tmp_path / "report_toy.html").read_text()


def test_figures_jobs_run_each_topic_in_a_worker_and_read_it_back(scratch, monkeypatch, tmp_path, capsys):
    """--jobs N: the parent hands every topic to figures._jobs.topic_job (here called in-process, as a worker would
    run it), reads the claims back from the cache without recomputing them, and stamps and reports what the worker
    drew; a worker's raising figure script is reported like an in-process one; nothing to draw, no workers."""
    from figures import _jobs

    drawn, calls, handed = [], [], []

    def make(results, out, budget):
        drawn.append(budget.name)
        return _draw_toy(results, out)

    def fake_parallel(names, to_draw, budget, out, args, on_done=None):
        handed.append((sorted(names), sorted(to_draw), args.jobs))
        return {n: _jobs.topic_job(n, budget.name, str(out), args.fresh, n in to_draw) for n in names}

    monkeypatch.setitem(sys.modules, "figures.toy", types.SimpleNamespace(make=make))
    monkeypatch.setattr(figures_main, "topic_modules", lambda: ["toy", "bad"])
    monkeypatch.setitem(sys.modules, "figures.bad", types.SimpleNamespace(make=lambda *a: []))
    monkeypatch.setattr(figures_main, "_parallel", fake_parallel)
    def counted(budget):
        """_good, counting its runs."""
        calls.append(1)
        return _good(budget)

    monkeypatch.setitem(scratch, "toy2024.good", dataclasses.replace(scratch["toy2024.good"], check=counted))
    out = tmp_path / "out"
    assert _cli.main(["figures", "--budget", "quick", "--out", str(out), "--jobs", "2", "--quiet"]) == 1  # bad fails
    assert handed == [(["bad", "toy"], ["bad", "toy"], 2)]
    assert drawn == ["quick"] and len(calls) == 1  # drawn and computed once, by the worker; the parent read it back
    stamp = json.loads((out / figures_main.STAMP).read_text())
    assert sorted(stamp["toy"]["files"]) == ["toy_x.pdf", "toy_x.png"]
    page = (out / "report.html").read_text()
    good = page[page.index("id='toy2024.good'"):]
    assert "#img-toy_x" in good[:good.index("</section>")]
    # warm: nothing to draw, so no workers and nothing recomputed
    assert _cli.main(["figures", "--budget", "quick", "--out", str(out), "--jobs", "2", "--quiet"]) == 1
    assert len(handed) == 1 and drawn == ["quick"] and len(calls) == 1
    # a worker whose figure script raises: reported, not fatal
    monkeypatch.setitem(sys.modules, "figures.toy", types.SimpleNamespace(make=lambda *a: 1 / 0))
    assert _cli.main(["figures", "--budget", "quick", "--out", str(out), "--jobs", "2", "--quiet", "--fresh"]) == 1
    assert "ZeroDivisionError" in capsys.readouterr().err
    assert "figures/toy.py raised an error" in (out / "report.html").read_text()
    assert len(calls) == 2  # --fresh: recomputed once, by the worker, and read back by the parent


def test_figures_worker_task_is_importable_by_name():
    """A spawned worker unpickles its task by module and name: it must not live in ``__main__``."""
    import pickle

    from figures import _jobs

    assert _jobs.topic_job.__module__ == "figures._jobs"
    assert pickle.loads(pickle.dumps(_jobs.topic_job)) is _jobs.topic_job


def test_figures_workers_take_the_longest_topics_first():
    """Workers' queue: a cold cache falls back on the measured prior, so the longest topic
    does not start last; a topic's own cached seconds override it, and a topic without them is scaled from the prior
    by the cached topics' ratio (another budget's or machine's seconds)."""
    from figures import _jobs
    from figures.__main__ import topic_modules
    from paper_checks._dispatch import PRIOR_S

    names = sorted(topic_modules())
    assert set(PRIOR_S) <= set(names)  # no stale name (a topic added since goes last until measured)
    cold = _jobs.queue_order(names, {})
    assert cold == sorted(names, key=lambda n: -PRIOR_S.get(n, 0.0))
    assert cold[0] == max(PRIOR_S, key=PRIOR_S.get)
    # cached at about a third of the prior's scale, eos slower than its prior says: eos's own 100 s puts it ahead of
    # sde's scaled 60 s, where the prior alone would put sde first
    hints = {"sign_floor": 22.0, "eos": 100.0}
    scale = (22.0 + 100.0) / (PRIOR_S["sign_floor"] + PRIOR_S["eos"])
    order = _jobs.queue_order(["sde", "eos", "sign_floor", "softmax_radius", "not_a_topic"], hints)
    expected = {"sde": scale * PRIOR_S["sde"], "eos": 100.0, "sign_floor": 22.0,
                "softmax_radius": scale * PRIOR_S["softmax_radius"], "not_a_topic": 0.0}
    assert order == sorted(expected, key=lambda n: -expected[n])
    assert order[-1] == "not_a_topic"


class _Tty(io.StringIO):
    def isatty(self):
        return True


def test_progress_on_a_terminal_and_in_a_log(scratch):
    claims = list(_registry._REGISTRY.values())
    log = io.StringIO()
    run_claims(claims, "quick", progress=True, stream=log)
    lines = log.getvalue().splitlines()
    assert len(lines) == 3 and all(re.match(r"^\[\d/3\] \S+ … \d+\.\d s (passed|failed)  +\d+% \[", ln) for ln in lines)
    assert "\r" not in log.getvalue()  # one whole line per update when the output is not a terminal
    tty = _Tty()
    run_claims(claims, "quick", progress=True, stream=tty)
    assert "\r[3/3] bad2025.broken … " in tty.getvalue() and "/3 claims [" in tty.getvalue()


def test_cache_command_shows_and_clears_only_cache_files(scratch, tmp_path, capsys, monkeypatch):
    # a stand-in XLA cache: the real one (shared with the other test worker) must never be cleared by a test
    xla = tmp_path / "xla"
    monkeypatch.setenv("JAX_COMPILATION_CACHE_DIR", str(xla))
    assert _cli.main(["check", "--topic", "toy", "--budget", "quick", "--quiet"]) == 0
    folder = tmp_path / "results"
    (folder / "notes.json").write_text('{"mine": 1}')
    (xla / "sub").mkdir(parents=True)
    (xla / "sub" / "program-cache").write_bytes(b"x" * 1000)
    capsys.readouterr()
    assert _cli.main(["cache"]) == 0
    out = capsys.readouterr().out
    assert "(2 cached results" in out and f"{xla}  (XLA compilation cache: 1 files" in out
    assert _cli.main(["cache", "--clear", "--keep-xla"]) == 0  # what `make clean` runs
    assert "removed 4 files" in capsys.readouterr().out and (xla / "sub" / "program-cache").exists()
    assert sorted(p.name for p in folder.iterdir()) == ["notes.json"]
    assert _cli.main(["cache", "--clear"]) == 0
    assert f"removed {xla} (1 compiled programs' files)" in capsys.readouterr().out and not xla.exists()


def test_bench_options_go_to_the_benchmark_runner(capsys):
    with pytest.raises(SystemExit) as exc:
        _cli.main(["bench", "--help"])
    out = capsys.readouterr().out
    assert exc.value.code == 0 and "--scale" in out and out.startswith("usage: steplab bench ")
    with pytest.raises(SystemExit) as exc:
        _cli.main(["bench", "--scale", "huge"])
    assert exc.value.code == 2 and "steplab bench: error: argument --scale" in capsys.readouterr().err


def _listing(records: list[dict]) -> list[str]:
    """What `steplab list` prints for these records: paper_checks' describe() lines."""
    return [f"{r['id']}  [{r['topic']}, {r['kind']}, {r['provenance']}; {r['source']}]  {r['statement']}"
            for r in records]


def test_list_reads_a_current_index_and_rebuilds_a_stale_one(scratch, private_index, monkeypatch, capsys):
    assert _cli.main(["list"]) == 0
    first = capsys.readouterr().out.splitlines()
    assert [ln.split()[0] for ln in first] == list(scratch)
    stored = json.loads(private_index.read_text())
    assert stored["key"] == _index.sources_key() and [r["id"] for r in stored["claims"]] == list(scratch)
    # the registry changes but no source does (only a test can do that): the index is what is read
    monkeypatch.setitem(scratch, "toy2024.good", dataclasses.replace(scratch["toy2024.good"], statement="x is two"))
    assert _cli.main(["list", "--claim", "toy2024.good"]) == 0
    assert capsys.readouterr().out.endswith("]  x is 2\n")
    # a source changed: the key no longer matches, the registry is read and the index rewritten
    monkeypatch.setattr(_index, "sources_key", lambda: "edited")
    assert _cli.main(["list", "--claim", "toy2024.good"]) == 0
    assert capsys.readouterr().out.endswith("]  x is two\n")
    assert json.loads(private_index.read_text())["key"] == "edited"
    for broken in ("{not json", '{"key": "edited", "claims": [{"id": "x"}]}', "[]"):
        private_index.write_text(broken)
        assert _cli.main(["list", "papers"]) == 0
        assert capsys.readouterr().out.startswith("toy2024  (2 claims, topic toy)  A. Author (2024). Toy.")
        assert json.loads(private_index.read_text())["key"] == "edited"


def test_a_failing_topic_is_reported_and_never_indexed(scratch, private_index, monkeypatch, capsys):
    records, _ = _index.live_records()
    monkeypatch.setattr(_index, "live_records", lambda: (records, {"broken": "Traceback: ImportError"}))
    for _ in range(2):  # reported on every listing, since nothing was written
        assert _cli.main(["list", "topics"]) == 0
        assert "topic 'broken' failed to import" in capsys.readouterr().err
    assert not private_index.exists()


def test_list_of_the_live_registry_equals_check_list(private_index, capsys):
    """The index holds what the registry holds: `steplab list` prints what `steplab check --list` prints."""
    from paper_checks.__main__ import describe

    assert _cli.main(["list"]) == 0
    assert capsys.readouterr().out == describe(_registry.claims()) + "\n"
    topic = _registry.claims()[-1].topic
    assert _cli.main(["list", "--json", "--topic", topic]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed == [{"id": c.id, "paper": c.paper.key, "topic": c.topic, "kind": c.kind, "provenance": c.provenance,
                       "source": c.source, "statement": c.statement} for c in _registry.claims(topic=topic)]
    # ... and the listing wrote the index, unless a topic fails to import (test_registry.py fails then)
    assert private_index.exists() == (not _registry.import_errors())


# A `steplab list` in a fresh process, with the index at argv[1]; it waits for a line on stdin before listing
# (so a test can close the pipe first) and reports on stderr whether JAX or paper_checks got imported.
_LIST_IN_A_FRESH_PROCESS = """
import sys
from pathlib import Path
import figures._index as index
index.index_path = lambda: Path(sys.argv[1])
from figures._cli import main
sys.stdin.readline()
status = main(["list", *sys.argv[2:]])
sys.stderr.write(" ".join(m for m in ("jax", "paper_checks") if m in sys.modules) or "no imports")
sys.exit(status)
"""


def _index_file(path: Path, n: int) -> list[dict]:
    """Write a current index of ``n`` synthetic claims at ``path``; return the records."""
    records = [{"id": f"toy2024.c{k}", "paper": "toy2024", "topic": "toy", "kind": "exact", "provenance": "derived",
                "source": "derived here", "statement": f"claim {k}", "cite": TOY.cite()} for k in range(n)]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"key": _index.sources_key(), "claims": records}))
    return records


def _fresh_list(path: Path, *args: str, close_stdout: bool = False) -> tuple[int, str, str]:
    proc = subprocess.Popen([sys.executable, "-c", _LIST_IN_A_FRESH_PROCESS, str(path), *args], cwd=ROOT,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if close_stdout:
        proc.stdout.close()  # the reader is gone before anything is written, as `steplab list | head -0`
    proc.stdin.write("go\n")
    proc.stdin.close()
    out = "" if close_stdout else proc.stdout.read()
    err = proc.stderr.read()
    return proc.wait(timeout=120), out, err


def test_list_from_a_current_index_imports_neither_jax_nor_the_claims(tmp_path):
    records = _index_file(tmp_path / "claim-index.json", 3)
    status, out, err = _fresh_list(tmp_path / "claim-index.json", "--claim", "toy2024.c1")
    assert (status, err) == (0, "no imports")
    assert out.splitlines() == _listing(records[1:2])


@pytest.mark.parametrize("n", [2, 2000])  # output still buffered at exit; output larger than the pipe's buffer
def test_a_closed_pipe_ends_quietly_with_the_sigpipe_status(tmp_path, n):
    _index_file(tmp_path / "claim-index.json", n)
    status, _, err = _fresh_list(tmp_path / "claim-index.json", close_stdout=True)
    assert (status, err) == (141, "no imports")  # no BrokenPipeError traceback, and 128 + SIGPIPE


def test_console_script_is_declared_and_importable():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    target = meta["project"]["scripts"]["steplab"]
    assert target == "figures._cli:main"
    exe = shutil.which("steplab") or next((str(p) for p in [Path(sys.executable).parent / "steplab"] if p.exists()), None)
    if exe is None:
        pytest.skip("the steplab script is installed by `pip install -e .` (make bootstraps it)")
    done = subprocess.run([exe, "--help"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "check" in done.stdout and "figures" in done.stdout


def test_python_m_paper_checks_help_runs():
    done = subprocess.run([sys.executable, "-m", "paper_checks", "--help"], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)
    assert done.returncode == 0
    for option in ("--topic", "--paper", "--claim", "--budget", "--json", "--list", "--fresh", "--no-cache"):
        assert option in done.stdout


def test_xla_warnings_stay_out_of_the_terminal_unless_verbose(monkeypatch):
    """XLA's C++ warnings are silenced by default, let through with --verbose, and a user's own level is kept."""
    from figures._cli import quiet_xla

    monkeypatch.delenv("TF_CPP_MIN_LOG_LEVEL", raising=False)
    quiet_xla(["figures", "--verbose"])
    assert "TF_CPP_MIN_LOG_LEVEL" not in os.environ
    quiet_xla(["figures"])
    assert os.environ["TF_CPP_MIN_LOG_LEVEL"] == "2"
    monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", "0")
    quiet_xla(["figures"])
    assert os.environ["TF_CPP_MIN_LOG_LEVEL"] == "0"
