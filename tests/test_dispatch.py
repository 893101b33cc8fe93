"""`steplab dispatch`: claims as tasks on an executor, written once into a shared results folder."""
import concurrent.futures as cf

import pytest

from figures import _cli
from paper_checks import Task, dispatch, get_claim, load_all, make_executor, plan, run_claims
from paper_checks import _dispatch

# two cheap logistic claims with experiments of their own (so the folder holds claim and experiment entries)
CLAIMS = ("meng2024.normal_form_amplitude", "meng2024.only_eta_lambda_matters")  # registry order


class _InProcess:
    """The smallest executor: ``submit`` runs the task at once in this process."""

    def submit(self, fn, *args):
        future = cf.Future()
        try:
            future.set_result(fn(*args))
        except Exception as exc:  # noqa: BLE001 - handed to the caller through the future, as a pool does
            future.set_exception(exc)
        return future


def _entries(folder):
    return {p.name: p.read_bytes() for p in folder.glob("*.npz")}


@pytest.fixture(scope="module")
def claims():
    load_all()
    return [get_claim(i) for i in CLAIMS]


def test_one_task_and_n_tasks_write_the_same_bytes_and_a_rerun_resumes(claims, tmp_path, monkeypatch):
    monkeypatch.setenv("STEPLAB_RESULTS", str(tmp_path / "unused"))  # restored after dispatch points it elsewhere
    one = dispatch(claims, "quick", _InProcess(), results=tmp_path / "one", group_s=1e9)
    assert [len(t.claim_ids) for t in one.tasks] == [2] and one.ok
    # N tasks through submitit's local executor: each task a separate process, the code path of a SLURM array
    many = dispatch(claims, "quick", make_executor("submitit-local", log_dir=tmp_path / "logs", time_min=10),
                    results=tmp_path / "many", group_s=0)
    assert [len(t.claim_ids) for t in many.tasks] == [1, 1] and many.ok, many.failed
    a, b = _entries(tmp_path / "one"), _entries(tmp_path / "many")
    assert sum(n.startswith("claim.") for n in a) == 2 and sum(n.startswith("exp.") for n in a) >= 2
    assert a.keys() == b.keys() and all(a[n] == b[n] for n in a)  # every experiment and claim, byte for byte
    # resuming plans nothing, and a later check (or make figures) reads every result from the folder
    assert plan(claims, "quick") == [] and dispatch(claims, "quick", _InProcess()).tasks == []
    assert all(o.cached and o.status == "passed" for o in run_claims(claims, "quick", use_cache=True))


def test_a_dead_task_is_reported_and_the_others_finish(claims, tmp_path, monkeypatch):
    monkeypatch.setenv("STEPLAB_RESULTS", str(tmp_path / "results"))
    tasks = [Task("logistic", ("meng2024.no_such_claim",), 1.0), Task("logistic", (CLAIMS[0],), 1.0)]
    monkeypatch.setattr(_dispatch, "plan", lambda *a, **k: tasks)
    report = dispatch(claims, "quick", _InProcess(), results=tmp_path / "results")
    assert [t for t, _ in report.failed] == tasks[:1] and "no_such_claim" in report.failed[0][1]
    assert [r["id"] for r in report.records] == [CLAIMS[0]] and not report.ok


def test_the_plan_packs_a_topic_up_to_the_group_size_and_never_splits_a_claim(claims, tmp_path, monkeypatch):
    monkeypatch.setenv("STEPLAB_RESULTS", str(tmp_path / "empty"))
    monkeypatch.setattr(_dispatch, "estimate_s", lambda claim, budget: 5.0)
    assert [t.claim_ids for t in plan(claims, "quick", group_s=10)] == [CLAIMS]
    assert [t.claim_ids for t in plan(claims, "quick", group_s=9)] == [CLAIMS[:1], CLAIMS[1:]]
    assert [t.estimate_s for t in plan(claims, "quick", group_s=0)] == [5.0, 5.0]
    with pytest.raises(ValueError, match="group_s"):
        plan(claims, "quick", group_s=-1)
    with pytest.raises(ValueError, match="budget"):
        plan(claims, "slow")
    with pytest.raises(ValueError, match="backend: expected one of local, slurm, submitit-local, got 'mpi'"):
        make_executor("mpi")


def test_a_cold_full_plan_puts_the_longest_topics_first(tmp_path, monkeypatch):
    """No cached time: at the full budget a claim's estimate is its topic's measured cold seconds over the topic's
    claims, and the tasks come longest first (a pool of processes takes them in that order); the quick budget keeps
    the default, and equal estimates keep the registry's order."""
    from paper_checks import claims as registered

    monkeypatch.setenv("STEPLAB_RESULTS", str(tmp_path / "empty"))
    picked = [registered(topic="logistic")[0], registered(topic="softmax_radius")[0]]  # registry order
    tasks = plan(picked, "full", group_s=0)
    per_claim = {t: _dispatch.PRIOR_S[t] / len(registered(topic=t)) for t in ("logistic", "softmax_radius")}
    assert per_claim["softmax_radius"] > per_claim["logistic"]
    assert [(t.topic, t.estimate_s) for t in tasks] == [(t, round(per_claim[t], 3)) for t in ("softmax_radius",
                                                                                               "logistic")]
    assert [t.topic for t in plan(picked, "quick", group_s=0)] == ["logistic", "softmax_radius"]


def test_the_command_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("STEPLAB_RESULTS", str(tmp_path / "results"))
    assert _cli.main(["dispatch", "--claim", CLAIMS[0], "--claim", CLAIMS[1], "--budget", "quick", "--dry-run",
                      "--group-minutes", "0"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [ln.split()[-1] for ln in lines] == list(CLAIMS) and all(ln.startswith("logistic  1 claims") for ln in lines)
    for argv, message in ((["--jobs", "0"], "--jobs: expected a positive integer, got 0"),
                          (["--group-minutes", "-1"], "--group-minutes: expected a non-negative number, got -1"),
                          (["--topic", "logistc"], "unknown topic 'logistc'")):
        with pytest.raises(SystemExit) as exc:
            _cli.main(["dispatch", "--budget", "quick", *argv])
        assert exc.value.code == 2 and message in capsys.readouterr().err


def _run(args, results, cwd):
    import os
    import subprocess
    import sys

    env = dict(os.environ, STEPLAB_RESULTS=str(results))
    proc = subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=900)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]


def _report(folder, topic):
    """The report's text without the lines that say when and how long (its header, the generated stamp, each card's
    "computed in ... s" or "cached (computed in ...)": a dispatched result is read from the cache, by design; and
    the results folder's path)."""
    text = (folder / f"report_{topic}.md").read_text()
    return [line for line in text.splitlines()
            if "UTC" not in line and "computed in" not in line and "results cache" not in line]


@pytest.mark.slow
def test_dispatch_then_figures_gives_the_report_of_figures_alone(tmp_path):
    """`steplab dispatch --backend local` into a results folder, then `figures` drawing from it: the same report, the
    same figure bytes as `figures` computing everything itself (muon at the quick budget: six claims, four figures)."""
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    _run(["figures._cli", "dispatch", "--topic", "muon", "--budget", "quick", "--backend", "local", "--jobs", "2"],
         tmp_path / "dispatched", root)
    _run(["figures", "--topic", "muon", "--budget", "quick", "--out", str(tmp_path / "a"), "--quiet"],
         tmp_path / "dispatched", root)
    _run(["figures", "--topic", "muon", "--budget", "quick", "--out", str(tmp_path / "b"), "--quiet"],
         tmp_path / "alone", root)
    a, b = tmp_path / "a", tmp_path / "b"
    assert _report(a, "muon") == _report(b, "muon")
    pngs = sorted(p.name for p in a.glob("*.png"))
    assert pngs and pngs == sorted(p.name for p in b.glob("*.png"))
    assert all((a / n).read_bytes() == (b / n).read_bytes() for n in pngs)
