"""SIGINT (Ctrl-C) and SIGTERM stop real runs of ``python -m figures --jobs 2`` and ``python -m paper_checks``.

Each test starts a real process on a toy registry (``_TOY``: a claim that finishes at once in topic ``fast``, one
that waits a minute in topic ``slow``), waits until the fast claim's result is in the cache and the slow claim
is running, sends a real signal and checks: the run ends within seconds with status 130 or 143 and one line
saying what it kept, no traceback, no report or table, no worker left running; the same command then resumes
from the cache (the fast claim is not computed again; checked after SIGINT).
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# Run as a script, so that the figures workers (spawned: they import the parent's main script as __mp_main__)
# see the same toy registry and figure scripts as the parent.
_TOY = r'''
import os, sys, time, types
from pathlib import Path

import sims.cache
from paper_checks import Exact, Paper, Result, _registry
from paper_checks._registry import Claim

MARKS = Path(os.environ["TOY_MARKS"])
TOY = Paper(key="toy2024", title="Toy", authors="A. Author", year=2024)


def fast(budget):
    """Agrees at once."""
    (MARKS / f"fast.{os.getpid()}.{time.monotonic_ns()}").write_text("")
    return Result(Exact("x", 2.0, 2.0, rtol=1e-12, rivals={"x = 1": 1.0}, why="exact"))


def slow(budget):
    """Agrees after TOY_SLOW_S seconds."""
    (MARKS / f"slow.{os.getpid()}").write_text("")
    deadline = time.monotonic() + float(os.environ["TOY_SLOW_S"])
    while time.monotonic() < deadline:
        time.sleep(0.05)
    return Result(Exact("y", 1.0, 1.0, rtol=1e-12, rivals={"y = 0": 0.0}, why="exact"))


_registry._REGISTRY = {c.id: c for c in (
    Claim("toy2024.fast", TOY, "x is 2", "", "derived", "exact", "derived here", fast, "fast"),
    Claim("toy2024.slow", TOY, "y is 1", "", "derived", "exact", "derived here", slow, "slow"))}
_registry.load_all = lambda: None
_topics = sims.cache.topic_names()
sims.cache.topic_names = lambda: (*_topics, "fast", "slow")


def make(results, out, budget):
    from figures import plot

    fig, ax = plot.figure()
    ax.plot([0.0, 1.0, 2.0], color=plot.THEORY)
    return plot.save(fig, "fast_line", out)


sys.modules["figures.fast"] = types.SimpleNamespace(make=make)
sys.modules["figures.slow"] = types.SimpleNamespace(make=lambda results, out, budget: [])

if __name__ == "__main__":
    import figures.__main__
    import paper_checks.__main__

    figures.__main__.topic_modules = lambda: ["fast", "slow"]
    command, argv = sys.argv[1], sys.argv[2:]
    sys.exit((figures.__main__ if command == "figures" else paper_checks.__main__).main(argv))
'''

_COMMANDS = {
    "figures": ["figures", "--budget", "quick", "--jobs", "{jobs}", "--out", "{out}"],
    "check": ["check", "--budget", "quick"],
}


def _alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, ended but not yet reaped, does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def _wait_for(condition, what: str, proc: subprocess.Popen, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if proc.poll() is not None:
            raise AssertionError(f"the run ended (status {proc.returncode}) before {what}:\n{proc.stderr.read()}")
        if time.monotonic() > deadline:
            proc.kill()
            raise AssertionError(f"no {what} after {timeout} s:\n{proc.communicate()[1]}")
        time.sleep(0.05)


def _run(tmp_path: Path, command: str, slow_s: float, jobs: str = "2", **popen) -> subprocess.Popen:
    script = tmp_path / "toy_run.py"
    script.write_text(_TOY)
    (tmp_path / "marks").mkdir(exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "STEPLAB_RESULTS": str(tmp_path / "results"),
           "TOY_MARKS": str(tmp_path / "marks"), "TOY_SLOW_S": str(slow_s), "JAX_PLATFORMS": "cpu"}
    argv = [a.format(out=tmp_path / "out", jobs=jobs) for a in _COMMANDS[command]]
    return subprocess.Popen([sys.executable, str(script), *argv], cwd=tmp_path, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **popen)


@pytest.mark.parametrize("command, signum, to_group", [
    ("figures", signal.SIGINT, True),    # Ctrl-C: the terminal signals the whole process group
    ("figures", signal.SIGTERM, False),  # `kill PID`: the parent alone; its workers must not be orphaned
    ("check", signal.SIGINT, True),
    ("check", signal.SIGTERM, False),
])
def test_a_signal_stops_the_run_and_the_next_run_resumes(tmp_path, command, signum, to_group):
    marks, results = tmp_path / "marks", tmp_path / "results"
    proc = _run(tmp_path, command, slow_s=120.0, start_new_session=True)
    try:
        _wait_for(lambda: any(results.glob("claim.toy2024.fast.quick.*.json")) and any(marks.glob("slow.*")),
                  "fast claim in the cache while the slow one runs", proc)
        workers = {int(p.name.split(".")[1]) for p in marks.iterdir()} - {proc.pid}
        assert len(workers) == (2 if command == "figures" else 0)
        sent = time.monotonic()
        os.killpg(proc.pid, signum) if to_group else os.kill(proc.pid, signum)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    took = time.monotonic() - sent
    assert proc.returncode == 128 + signum, err
    assert took < 10.0, f"stopping took {took:.1f} s"
    assert "Traceback" not in err, err
    line = err.strip().splitlines()[-1]
    assert line.startswith(f"stopped by {signum.name} after ") and "kept in" in line and "no table or report" in line
    assert out == ""  # no partial table
    assert not list(tmp_path.glob("out/report*"))
    deadline = time.monotonic() + 5.0  # a worker ended by the parent is gone, not left running on its own
    while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [pid for pid in workers if _alive(pid)]
    assert not list(results.glob("*.tmp"))

    if signum != signal.SIGINT:
        return  # resuming is the same after either signal: checked once per command
    # the next run reads the fast claim back and computes only the slow one (figures: in one process, which
    # reads the same cache and skips the workers' seconds of start-up)
    again = _run(tmp_path, command, slow_s=0.0, jobs="1")
    out, err = again.communicate(timeout=120)
    assert again.returncode == 0, err
    assert len(list(marks.glob("fast.*"))) == 1, "the fast claim was computed again"
    assert len(list(marks.glob("slow.*"))) >= 2
    if command == "figures":
        assert (tmp_path / "out" / "report.html").exists() and (tmp_path / "out" / "fast_line.png").exists()
    else:
        assert "toy2024.fast" in out and "2 passed" in out
