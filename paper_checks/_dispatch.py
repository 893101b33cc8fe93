r"""Dispatch: the claims of a selection as independent tasks on an executor -- local processes or a cluster.

``steplab dispatch`` (also ``python -m paper_checks._dispatch``) plans, submits and reports; ``make figures``
(or ``steplab check``) afterwards reads every result from the cache and computes nothing that a task
computed::

    steplab dispatch --budget full                          # local worker processes, one per core
    steplab dispatch --backend slurm --partition gpu --time 30 --gpus 1   # a SLURM job array (submitit)
    make figures                                            # draws from the cache

**Plan.** Only cache misses are submitted: a claim whose result is already cached under the current code
version (:func:`sims.cache.read_meta` with the claim's key) is left out, so running the same command again
after a failure or an interruption resumes with what is missing. The remaining claims are packed into tasks
topic by topic, in registry order (a topic's claims share experiments, which a task then computes once), up to
``group_s`` seconds of estimated work per task: a claim's estimate is the wall time of its last cached
result under any code version, else (full budget) its topic's measured cold seconds :data:`PRIOR_S` shared over
the topic's claims, else :data:`DEFAULT_ESTIMATE_S`. A claim is never split, so a claim longer than ``group_s`` is
a task of its own. Tasks are submitted longest first.

**Run.** A task (:func:`run_task`) runs its claims with the results cache on, in ``results`` (a folder on a
filesystem every worker sees): each experiment and claim result is written once, atomically, under a key
that covers the code, the configuration and the libraries (:mod:`sims.cache`), so two tasks that compute the
same experiment write the same bytes and never a half-written entry. A claim's own error is its status
(``error``), as in ``steplab check``; a task that dies (an exception outside the claims, a killed job) is
reported with its claims and never cancels the other tasks.

**Executors.** Any :class:`concurrent.futures.Executor`-like object with ``submit(fn, *args)`` returning a
future works (:func:`dispatch`). :func:`make_executor` builds the three this command offers: ``local``
(:class:`concurrent.futures.ProcessPoolExecutor` with the ``spawn`` start method, so no worker inherits a
forked JAX runtime), ``slurm`` (submitit's SLURM executor: one job array, ``--partition``, ``--time`` minutes
per task, ``--gpus`` per task) and ``submitit-local`` (submitit's local executor: the same code path as
``slurm``, each task a separate process on this machine; what the tests run). submitit is an optional
dependency (``pip install -e '.[cluster]'``); :mod:`jax.distributed` is not used -- the claims are independent.
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import contextlib
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Task", "plan", "run_task", "dispatch", "make_executor", "estimate_s", "is_cached", "BACKENDS",
           "DEFAULT_ESTIMATE_S", "PRIOR_S", "main"]

BACKENDS = ("local", "slurm", "submitit-local")
# a claim never run before: a guess of the order of the suite's median claim at each budget
DEFAULT_ESTIMATE_S = {"quick": 2.0, "full": 30.0}
#: Seconds each topic took (its claims and figures, one worker process per topic) in a cold ``make figures`` on a
#: fresh clone (full budget, two workers on a 2-core VM, 2026-12-03): the order of work before the results cache
#: holds a topic's own times, for ``--jobs`` workers (:mod:`figures._jobs`) and dispatched tasks alike. Only the
#: order matters: a stale number costs wall time, never a result. A topic not named here goes last.
PRIOR_S = {"adaptive_eos": 29.0, "batch_size": 20.0, "eos": 218.0, "linear_hessian": 76.0, "logistic": 59.0,
           "low_precision": 16.0, "lr_horizon": 14.0, "muon": 13.0, "mup_transfer": 14.0, "noisy_quadratic": 170.0,
           "sde": 212.0, "sgd_stability": 98.0, "sign_floor": 227.0, "softmax_radius": 935.0}


@dataclass(frozen=True)
class Task:
    """Claims run together by one worker: their ids (one topic) and the summed estimate in seconds."""

    topic: str
    claim_ids: tuple[str, ...]
    estimate_s: float


@dataclass
class Report:
    """What :func:`dispatch` did: the tasks, each finished task's per-claim records, and the tasks that died."""

    tasks: list[Task]
    records: list[dict] = field(default_factory=list)
    failed: list[tuple[Task, str]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Every task finished and no claim ended ``failed``, ``inconclusive`` or ``error``."""
        from paper_checks._registry import OK_STATUSES

        return not self.failed and all(r["status"] in OK_STATUSES for r in self.records)


def is_cached(claim, budget: str) -> bool:
    """Whether ``claim``'s result at ``budget`` is cached under the current code version (in the folder in use)."""
    from paper_checks._runner import claim_cache_key
    from sims.cache import read_meta

    name, config = claim_cache_key(claim, budget)
    return read_meta(name, config, topic=claim.scope) is not None


def estimate_s(claim, budget: str) -> float:
    """Seconds ``claim`` is expected to take: its last cached result's wall time (any code version), else at the
    full budget its topic's :data:`PRIOR_S` shared evenly over the topic's registered claims, else the budget's
    default (:data:`DEFAULT_ESTIMATE_S`)."""
    from paper_checks._registry import claims as registered
    from paper_checks._runner import claim_cache_key
    from sims.cache import read_meta

    meta = read_meta(claim_cache_key(claim, budget)[0])
    wall = meta.get("wall_s") if meta else None
    if isinstance(wall, (int, float)) and wall >= 0:
        return float(wall)
    if budget == "full" and claim.topic in PRIOR_S:
        return PRIOR_S[claim.topic] / max(len(registered(topic=claim.topic)), 1)
    return DEFAULT_ESTIMATE_S[budget]


def plan(claims: list, budget: str, *, group_s: float = 1200.0, only_missing: bool = True) -> list[Task]:
    r"""Pack ``claims`` into :class:`Task`\ s of at most ``group_s`` estimated seconds each (:func:`estimate_s`), topic
    by topic, returned longest first (ties in the order of ``claims``), so that a pool of N processes does not end on
    its longest task alone.

    Args:
      claims: registered claims, in the order to run them.
      budget: ``"quick"`` or ``"full"``.
      group_s: the most estimated work per task (a longer claim is a task of its own); 0 puts every claim in
        a task of its own.
      only_missing: leave out claims already cached under the current code version (resuming).
    """
    from paper_checks._registry import check_budget
    from theory import validate as V

    budget = check_budget(budget)
    group_s = V.real("group_s", group_s, low=0.0)
    tasks: list[Task] = []
    current: list = []
    spent = 0.0

    def close() -> None:
        nonlocal current, spent
        if current:
            tasks.append(Task(current[0].topic, tuple(c.id for c in current), round(spent, 3)))
        current, spent = [], 0.0

    for claim in claims:
        if only_missing and is_cached(claim, budget):
            continue
        cost = estimate_s(claim, budget)
        if current and (claim.topic != current[0].topic or spent + cost > group_s):
            close()
        current.append(claim)
        spent += cost
    close()
    return sorted(tasks, key=lambda t: -t.estimate_s)


def run_task(claim_ids: tuple[str, ...] | list[str], budget: str, results: str | None = None) -> list[dict]:
    """A worker's task: run each claim with the results cache on, in ``results`` (default: the folder in use).

    Returns one record per claim: ``id``, ``status``, ``wall_s``, ``cached`` and ``error`` (the traceback of an
    ``error``). An unknown claim id raises ``KeyError`` (the task dies; :func:`dispatch` reports it).
    """
    if results is not None:
        os.environ["STEPLAB_RESULTS"] = str(results)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    from paper_checks import get_claim, load_all
    from paper_checks._runner import run_claim

    load_all()
    chosen = [get_claim(i) for i in claim_ids]
    records = []
    for claim in chosen:
        o = run_claim(claim, budget, use_cache=True)
        records.append({"id": claim.id, "status": o.status, "wall_s": round(o.wall_s, 3), "cached": o.cached,
                        "error": o.error})
    return records


def make_executor(backend: str, *, jobs: int | None = None, log_dir: Path | None = None,
                  partition: str | None = None, time_min: int = 30, gpus: int = 0, cpus: int = 1,
                  parallelism: int | None = None):
    """An executor for ``backend`` (one of :data:`BACKENDS`; see the module docstring).

    ``jobs`` caps the local pool (default: the CPU count); ``log_dir`` holds submitit's pickles and logs (on a
    filesystem every node sees); ``partition``, ``time_min`` (minutes per task), ``gpus`` and ``cpus`` (per
    task) and ``parallelism`` (how many array tasks run at once) are passed to SLURM.
    """
    if backend not in BACKENDS:
        raise ValueError(f"backend: expected one of {', '.join(BACKENDS)}, got {backend!r}")
    if backend == "local":
        import multiprocessing

        return cf.ProcessPoolExecutor(max_workers=jobs or os.cpu_count() or 1,
                                      mp_context=multiprocessing.get_context("spawn"))
    try:
        import submitit
    except ImportError as exc:  # the optional dependency is missing: say how to get it
        raise ImportError(f"backend {backend!r} needs submitit: pip install -e '.[cluster]'") from exc
    if log_dir is None:
        raise ValueError(f"log_dir: backend {backend!r} needs a folder for submitit's job files, got None")
    executor = submitit.AutoExecutor(folder=str(log_dir), cluster="local" if backend == "submitit-local" else "slurm")
    params: dict[str, Any] = {"timeout_min": int(time_min), "cpus_per_task": int(cpus), "name": "steplab"}
    if backend == "slurm":
        params.update(slurm_partition=partition, slurm_gpus_per_task=int(gpus) or None,
                      slurm_array_parallelism=parallelism or 256)
        params = {k: v for k, v in params.items() if v is not None}
    executor.update_parameters(**params)
    return executor


def _submit(executor, tasks: list[Task], budget: str, results: str | None) -> list:
    """One future per task; on submitit all of them go out as one job array."""
    # a submitit executor batches the submissions into one job array; any other executor submits them one by one
    batching = executor.batch() if hasattr(executor, "update_parameters") else contextlib.nullcontext()
    with batching:
        futures = [executor.submit(run_task, t.claim_ids, budget, results) for t in tasks]
    return futures


def dispatch(claims: list, budget: str, executor, *, results: str | Path | None = None, group_s: float = 1200.0,
             stream=None) -> Report:
    """Plan the cache misses among ``claims``, submit one :func:`run_task` per task to ``executor`` and wait.

    One line per finished task on ``stream`` (default stderr); a task that raises is reported (with its claim ids
    and the error's last line) and the others carry on. Returns the :class:`Report`.
    """
    stream = sys.stderr if stream is None else stream
    folder = None if results is None else str(Path(results).resolve())
    if folder is not None:
        os.environ["STEPLAB_RESULTS"] = folder  # plan against the folder the tasks write into
    tasks = plan(claims, budget, group_s=group_s)
    report = Report(tasks)
    cached = len(claims) - sum(len(t.claim_ids) for t in tasks)
    print(f"{len(claims)} claims at the {budget} budget: {cached} cached, {len(tasks)} tasks to run", file=stream)
    if not tasks:
        return report
    futures = _submit(executor, tasks, budget, folder)
    pending = dict(zip(range(len(tasks)), futures))
    done_count = 0
    start = time.perf_counter()
    while pending:
        for k in list(pending):
            fut = pending[k]
            if not fut.done():
                continue
            del pending[k]
            done_count += 1
            task = tasks[k]
            try:
                records = fut.result()  # a submitit job's result() raises on a failed job, as a future's
            except Exception as exc:  # noqa: BLE001 - a dead task is reported, never fatal
                last = (str(exc).strip().splitlines() or [type(exc).__name__])[-1]
                report.failed.append((task, last))
                print(f"[{done_count}/{len(tasks)}] {task.topic} ({len(task.claim_ids)} claims) FAILED: {last}",
                      file=stream, flush=True)
                continue
            report.records.extend(records)
            counts: dict[str, int] = {}
            for r in records:
                counts[r["status"]] = counts.get(r["status"], 0) + 1
            summary = ", ".join(f"{n} {s}" for s, n in counts.items())
            print(f"[{done_count}/{len(tasks)}] {task.topic} ({len(task.claim_ids)} claims, "
                  f"{sum(r['wall_s'] for r in records):.1f} s) {summary}", file=stream, flush=True)
        if pending:
            time.sleep(0.2)
    print(f"done in {time.perf_counter() - start:.1f} s: {len(report.records)} claims run, "
          f"{len(report.failed)} tasks failed", file=stream)
    return report


def build_parser(parser: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    """The options of ``steplab dispatch`` / ``python -m paper_checks._dispatch``."""
    from paper_checks.__main__ import add_budget_argument, add_selection_arguments

    if parser is None:
        parser = argparse.ArgumentParser(prog="python -m paper_checks._dispatch", description=__doc__,
                                         formatter_class=argparse.RawDescriptionHelpFormatter)
    add_selection_arguments(parser)
    add_budget_argument(parser)
    parser.add_argument("--backend", choices=BACKENDS, default="local",
                        help="local worker processes (default), a SLURM job array, or submitit's local executor")
    parser.add_argument("--jobs", type=int, default=None, help="local: worker processes (default: the CPU count)")
    parser.add_argument("--group-minutes", type=float, default=20.0,
                        help="the most estimated minutes of claims per task (default 20; 0: one claim per task)")
    parser.add_argument("--partition", help="slurm: the partition")
    parser.add_argument("--time", type=int, default=30, help="slurm/submitit: minutes allowed per task (default 30)")
    parser.add_argument("--gpus", type=int, default=0, help="slurm: GPUs per task (default 0)")
    parser.add_argument("--cpus", type=int, default=1, help="slurm/submitit: CPUs per task (default 1)")
    parser.add_argument("--log-dir", type=Path, default=None,
                        help="slurm/submitit: folder for job files and logs, on a filesystem every node sees "
                             "(default: dispatch-logs/ in the results folder)")
    parser.add_argument("--dry-run", action="store_true", help="print the plan (tasks and estimates) and stop")
    return parser


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """``steplab dispatch``: exit 0 when every task finished and every claim is passed / refutes / differs."""
    from paper_checks.__main__ import select
    from sims.cache import prepare_results_dir

    if args.jobs is not None and args.jobs < 1:
        parser.error(f"--jobs: expected a positive integer, got {args.jobs}")
    if args.group_minutes < 0:
        parser.error(f"--group-minutes: expected a non-negative number, got {args.group_minutes}")
    selected = select(args, parser)
    folder = prepare_results_dir()
    if args.dry_run:
        for t in plan(selected, args.budget, group_s=60 * args.group_minutes):
            print(f"{t.topic}  {len(t.claim_ids)} claims  ~{t.estimate_s:.0f} s  {' '.join(t.claim_ids)}")
        return 0
    log_dir = args.log_dir or folder / "dispatch-logs"
    executor = make_executor(args.backend, jobs=args.jobs, log_dir=log_dir, partition=args.partition,
                             time_min=args.time, gpus=args.gpus, cpus=args.cpus)
    report = dispatch(selected, args.budget, executor, results=folder, group_s=60 * args.group_minutes)
    if isinstance(executor, cf.Executor):
        executor.shutdown()
    for task, why in report.failed:
        print(f"failed task ({task.topic}): {' '.join(task.claim_ids)}: {why}", file=sys.stderr)
    return 0 if report.ok else 1


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    return run(parser.parse_args(argv), parser)


if __name__ == "__main__":
    sys.exit(main())
