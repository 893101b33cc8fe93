"""The benchmark runner: JSON schema, guards and the time profile (never a timed assertion)."""
import json
import os
import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from figures._profile import CATEGORIES, TimeProfile
from sims import bench
from sims.reference.logistic import _case as logistic_case

ROW_FIELDS = {"status", "jax_per_s_at_most", "name", "unit", "work", "cost", "jax_s", "numpy_s", "jax_per_s", "numpy_per_s", "ratio", "ratio_at_least",
              "jax_cpu_s", "numpy_cpu_s", "cpu_ratio", "fraction_of_limit", "compile_s", "trace_lower_s",
              "first_call_s", "check", "error"}
SCALING_FIELDS = {"status", "case", "runs", "unit", "work", "seconds", "runs_per_s", "units_per_s", "cpu_s", "units_per_cpu_s",
                  "compile_s", "peak_memory_mb", "memory_source", "error"}


def _tiny_cases(scale):
    return [logistic_case(8, 20, 5)]


@pytest.fixture(autouse=True)
def _no_minimum_timing(monkeypatch):
    """These tests check the runner's outputs, not timings: no side is sampled for its minimum 0.3 s."""
    monkeypatch.setattr(bench, "_MIN_SECONDS", 0.0)


def test_tiny_run_writes_the_schema(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(bench, "discover", _tiny_cases)
    out = tmp_path / "bench.json"
    code = bench.main(["--repeats", "1", "--scaling-max", "1000", "--json", str(out), "--cores", "all"])
    assert code == 0, capsys.readouterr()
    report = json.loads(out.read_text())
    assert report["schema"] == bench.SCHEMA
    assert {"device_kind", "device_count", "platform", "jax_version", "scale", "limits", "rows", "scaling",
            "cores"} <= set(report)
    assert set(report["limits"]["rates_per_s"]) == set(bench.COST_KINDS)
    assert all(v > 0 for v in report["limits"]["rates_per_s"].values())
    (row,) = report["rows"]
    assert set(row) == ROW_FIELDS
    assert row["status"] == "ok" and row["error"] is None and row["check"] == "passed"
    assert row["jax_per_s"] > 0 and row["numpy_per_s"] > 0 and row["fraction_of_limit"] > 0
    assert row["compile_s"] >= 0
    assert [r["runs"] for r in report["scaling"]] == [100, 1000]
    assert all(set(r) == SCALING_FIELDS and r["error"] is None and r["units_per_s"] > 0 for r in report["scaling"])
    printed = capsys.readouterr().out
    assert "JAX /s" in printed and "of limit" in printed and "units/cpu-s" in printed


def _fails():
    raise FloatingPointError("boom")


def _slow_numpy():
    deadline = time.perf_counter() + 30
    while time.perf_counter() < deadline:  # a Python loop, as the NumPy references are
        np.sum(np.ones(10))
    return np.ones(1)


@jax.jit
def _ones():
    return jnp.ones(1)


def test_errors_and_timeouts_are_rows_not_crashes():
    broken = bench.BenchCase("broken", "u", 1.0, _fails, _fails)
    slow = bench.BenchCase("slow numpy", "u", 1.0, _ones, _slow_numpy)
    wrong = bench.BenchCase("disagree", "u", 1.0, _ones, lambda: np.zeros(1),
                            check=lambda a, b: np.testing.assert_allclose(a, b))
    rows = bench.run_cases([broken, slow, wrong], repeats=1, max_seconds=0.5)
    assert rows[0]["status"] == "error" and "FloatingPointError" in rows[0]["error"]
    assert rows[1]["status"] == "stopped" and rows[1]["error"] is None
    assert rows[1]["numpy_per_s"] is None and rows[1]["ratio_at_least"] > 0 and rows[1]["check"].startswith("skipped")
    assert rows[2]["status"] == "error" and rows[2]["check"] == "failed" and "disagree" in rows[2]["error"]
    slow_jax = bench.BenchCase("slow jax", "u", 1.0, _slow_numpy, _ones)
    (row,) = bench.run_cases([slow_jax], repeats=1, max_seconds=0.3)
    assert row["status"] == "stopped" and row["jax_per_s_at_most"] > 0 and row["jax_per_s"] is None


def test_bad_options_and_costs(capsys):
    with pytest.raises(SystemExit):
        bench.main(["--repeats", "0", "--cores", "all"])
    for cores in ("0", "two", "-1"):
        with pytest.raises(SystemExit):
            bench.main(["--cores", cores])
        assert f"--cores: expected a positive integer or 'all', got '{cores}'" in capsys.readouterr().err
    with pytest.raises(ValueError, match="cost"):
        bench.BenchCase("x", "u", 1.0, _ones, _ones, cost={"flops": 1})
    with pytest.raises(ValueError, match="scale"):
        bench.discover("huge")


def _sympy_then_compile():
    import sympy

    x = sympy.Symbol("x")
    sympy.series(sympy.exp(sympy.sin(x)) / (1 - x), x, 0, 12)
    jax.jit(lambda v: jnp.cumsum(jnp.sin(v)) @ jnp.ones(64))(jnp.arange(64.0)).block_until_ready()


def test_time_profile_sees_sympy_and_compilation():
    with TimeProfile(interval=0.002) as prof:
        _sympy_then_compile()
    total = {c: sum(per[c] for per in prof.table.values()) for c in CATEGORIES}
    assert total["sympy"] > 0
    assert prof.as_dict()["jax_events"]["trace_s"] > 0
    assert abs(sum(total.values()) - prof.wall) < 0.5 * prof.wall + 0.05  # samples cover the wall time
    assert "XLA compiles" in prof.format()


def test_time_profile_files_a_sample_under_the_innermost_topic_frame_past_shared_ones():
    """A sweep's samples stand inside the shared ``sims/sweep.py``: the topic is that of the next frame out that is in
    a topic's file (here ``sims/logistic.py``, inside ``tests/test_eos.py``), not 'shared'."""
    from figures._profile import _ROOT

    def frames(*rel):
        return [("/usr/lib/python3/site-packages/jax/_src/compiler.py", "compile")] + [(str(_ROOT / r), "f") for r in rel]

    prof = TimeProfile()
    assert prof._topic(frames("sims/sweep.py", "sims/logistic.py", "tests/test_eos.py")) == "logistic"
    assert prof._topic(frames("sims/sweep.py", "paper_checks/_registry.py", "tests/test_power.py")) is None
    assert prof._topic(frames("sims/sweep.py", "paper_checks/_runner.py", "figures/sign_floor.py")) == "sign_floor"


def test_main_stack_reads_the_sampled_threads_frames_innermost_first():
    """The sampler's stack of another thread (faulthandler's dump, parsed): this test's frames, innermost first."""
    import tempfile
    import threading

    from figures._profile import _main_stack

    got = []

    def marker_for_the_sampler(fd):
        t = threading.Thread(target=lambda: got.append(_main_stack(threading.main_thread().ident, fd)))
        t.start()
        t.join()

    with tempfile.TemporaryFile() as scratch:
        marker_for_the_sampler(scratch.fileno())
        marker_for_the_sampler(scratch.fileno())  # the scratch file is rewritten from its start: one stack again
    for stack in got:
        names = [name for file, name in stack if file.endswith("test_bench.py")]
        assert names[:2] == ["marker_for_the_sampler", "test_main_stack_reads_the_sampled_threads_frames_innermost_first"]
        assert stack[0][0].endswith("threading.py")  # innermost: the join this thread waits in
        assert names.count("marker_for_the_sampler") == 1  # one dump, not the previous one's tail as well


@pytest.mark.filterwarnings("ignore:'sims.bench' found in sys.modules:RuntimeWarning")  # runpy, as under -m
def test_python_dash_m_runs_the_imported_module(tmp_path, monkeypatch):
    """Under ``python -m sims.bench`` the topics' BenchCase must be the runner's class (module run as __main__)."""
    import runpy
    import sys

    monkeypatch.setattr(bench, "discover", _tiny_cases)
    monkeypatch.setattr(sys, "argv", ["sims.bench", "--repeats", "1", "--scaling", "off",
                                      "--json", str(tmp_path / "b.json"), "--cores", "all"])
    with pytest.raises(SystemExit) as done:
        runpy.run_module("sims.bench", run_name="__main__")
    assert done.value.code == 0
    assert json.loads((tmp_path / "b.json").read_text())["rows"][0]["status"] == "ok"


def test_short_calls_are_sampled_until_the_minimum_time(monkeypatch):
    """A side is called at least ``repeats`` times and, while calls are short, until _MIN_SECONDS have passed (at
    most _MAX_CALLS calls); a slow call is not repeated beyond ``repeats``."""
    monkeypatch.setattr(bench, "_MIN_SECONDS", 0.05)
    calls = []
    bench._time_both(lambda: calls.append(1), 2)
    assert 2 < len(calls) <= bench._MAX_CALLS
    calls.clear()
    bench._time_both(lambda: (calls.append(1), time.sleep(0.03)), 3)
    assert len(calls) == 3


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="needs CPU affinity (Linux)")
def test_cores_re_executes_on_fewer_cores_with_the_same_arguments(monkeypatch):
    """``--cores 1`` on a process allowed more cores: a fresh ``python -m sims.bench`` with the same arguments, pinned
    to one core, its BLAS told one thread and marked so that it does not pin itself again; with enough cores
    already, or marked, no re-execution."""
    calls = []

    class Exec(Exception):
        pass

    def fake_execve(path, args, env):
        calls.append((path, args, env))
        raise Exec

    affinity = []
    monkeypatch.setattr(os, "execve", fake_execve)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2})
    monkeypatch.setattr(os, "sched_setaffinity", lambda pid, cpus: affinity.append(set(cpus)))
    monkeypatch.delenv(bench._PINNED, raising=False)
    argv = ["--only", "heavy", "--cores", "1"]
    with pytest.raises(Exec):
        bench.main(argv)
    ((path, args, env),) = calls
    assert args[1:] == ["-m", "sims.bench", *argv] and path == args[0]
    assert affinity == [{0}] and env[bench._PINNED] == "1" and env["OPENBLAS_NUM_THREADS"] == "1"
    monkeypatch.setenv(bench._PINNED, "1")  # the re-executed process
    monkeypatch.setattr(bench, "discover", lambda scale: [])
    assert bench.main(argv) == 1 and len(calls) == 1  # ran (no case matched) without pinning again
    monkeypatch.delenv(bench._PINNED)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})
    assert bench.main(argv) == 1 and len(calls) == 1  # one core already
