"""Worker processes for ``python -m figures --jobs N``: one topic per task (its claims, then its figures).

Kept out of ``figures/__main__.py`` because a spawned worker unpickles its task function by module name, and
``__main__`` names a different module in the worker.

The pool is this module's own, not ``concurrent.futures``: the parent hands one topic at a time to an idle
worker over that worker's pipe, so on SIGINT/SIGTERM it knows exactly which processes to end and no queued
topic starts; a worker that dies is noticed by its process sentinel and its topic redone in the parent.
Workers ignore SIGINT (Ctrl-C reaches the whole process group; the parent decides) and exit on their own
when the parent is gone, so no worker outlives the run.
"""
from __future__ import annotations

import contextlib
import importlib
import json
import os
import re
import signal
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Iterator

STOP_TIMEOUT_S = 3.0  # a worker still running this long after SIGTERM is killed


def draw(name: str, results: dict, out: Path, budget) -> tuple[list[Path], dict[str, tuple[str, ...]]]:
    """Draw topic ``name``'s figures from ``results`` (``figures.<name>.make(results, out, budget)``): the files and,
    per figure, the claims it shows."""
    from figures import plot

    module = importlib.import_module(f"figures.{name}")
    with plot.track_claims(results) as tracked:
        files = [Path(p) for p in module.make(tracked, out, budget)]
    saved = plot.figure_claims()
    return files, {p.stem: saved[p.stem] for p in files if p.stem in saved}


class _NotATerminal:
    """A worker's stderr: the parent's stream, reporting that it is not a terminal."""

    def __init__(self, stream) -> None:
        self.stream = stream

    def isatty(self) -> bool:
        return False

    def write(self, text: str) -> int:
        return self.stream.write(text)

    def flush(self) -> None:
        self.stream.flush()


def topic_job(name: str, budget_name: str, out: str, fresh: bool, with_figures: bool, quiet: bool = True) -> dict:
    """A worker's task (``--jobs``): topic ``name``'s claims (into the results cache) and, with ``with_figures``, its
    figures; unless ``quiet``, one ``[k/N] id … s status`` line per claim on stderr.

    Returns what the parent needs: the files and figure-claim links, the traceback if the figure script raised,
    the wall seconds, and the claims computed here (not read from the cache) with their wall seconds (the parent
    reads the claims' outcomes back from the cache, and reports these as computed in this run).
    """
    from paper_checks import as_budget, claims, run_claims, topics
    from sims.cache import recompute

    # workers share the parent's terminal: progress bars redrawn in place by two processes would garble each
    # other, so a worker's bars print as occasional plain lines (what they do in a log)
    if sys.stderr.isatty():
        sys.stderr = _NotATerminal(sys.stderr)
    budget, start = as_budget(budget_name), time.perf_counter()
    with recompute(fresh):
        outcomes = run_claims(claims(topic=name) if name in topics() else [], budget, use_cache=True,
                              progress=not quiet)
        computed = {o.claim.id: o.wall_s for o in outcomes if not o.cached}
        results = {o.claim.id: o.result for o in outcomes if o.result is not None}
        files, links, error = [], {}, None
        if with_figures:
            try:
                paths, drawn = draw(name, results, Path(out), budget)
                files, links = [str(p) for p in paths], {k: list(v) for k, v in drawn.items()}
            except Exception:  # noqa: BLE001 - reported by the parent like an in-process failure
                error = traceback.format_exc()
    return {"files": files, "links": links, "error": error, "seconds": time.perf_counter() - start,
            "computed": computed}


_ENTRY_JSON = re.compile(r"^(?P<name>.+)\.[0-9a-f]{16}\.json$")


def queue_order(names: list[str], hints: dict[str, float]) -> list[str]:
    r"""``names``, longest expected first (ties keep their order). A topic's expected seconds are its cached time
    ``hints[name]`` (:func:`cost_hints`), else its measured cold cost
    (:data:`paper_checks._dispatch.PRIOR_S`; without it a fresh clone ran the topics alphabetically, the longest,
    softmax_radius, last and alone) times
    :math:`\sum_{t}\mathrm{hints}_t/\sum_{t}\mathrm{prior}_t` over the topics that have both (the cache's scale:
    another budget or machine; 1 when none has both), else 0."""
    from paper_checks._dispatch import PRIOR_S

    both = [n for n in hints if PRIOR_S.get(n, 0.0) > 0]
    scale = sum(hints[n] for n in both) / sum(PRIOR_S[n] for n in both) if both else 1.0

    def expected(name: str) -> float:
        return hints[name] if name in hints else scale * PRIOR_S.get(name, 0.0)

    return sorted(names, key=lambda n: -expected(n))


def cost_hints(budget_name: str) -> dict[str, float]:
    """Per topic, the seconds its cached claims and experiments took when last computed at this budget (the newest
    entry of each name, any code version; a claim's time includes the experiments it ran, so this over-counts,
    which ordering tolerates): the workers take the longest topics first, so the last one does not finish alone."""
    from sims.cache import results_dir

    newest: dict[str, tuple[str, str, float]] = {}  # entry name -> (written, topic, seconds)
    try:
        paths = list(results_dir().iterdir())
    except OSError:
        return {}
    for path in paths:
        m = _ENTRY_JSON.match(path.name)
        if m is None or not m["name"].endswith(f".{budget_name}"):
            continue
        try:
            meta = json.loads(path.read_text())
            owners = meta["topic"]
            owner = owners if isinstance(owners, str) else owners[0]
            entry = (str(meta.get("written", "")), owner, float(meta.get("wall_s") or 0.0))
        except (OSError, ValueError, KeyError, IndexError, TypeError):
            continue
        if entry > newest.get(m["name"], ("", "", 0.0)):
            newest[m["name"]] = entry
    hints: dict[str, float] = {}
    for _, owner, seconds in newest.values():
        hints[owner] = hints.get(owner, 0.0) + seconds
    return hints


def _exit_with_parent(parent: int) -> None:
    """In a worker: end this process within a second of its parent's death (even by SIGKILL, which leaves the
    parent no chance to end its workers)."""
    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def _serve(conn, parent: int) -> None:
    """A worker's loop: run each task the parent sends (``None``: exit) and send back ``("done", result)`` or
    ``("failed", traceback)``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole process group; the parent decides
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _exit_with_parent(parent)
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):
            return  # the parent is gone
        if task is None:
            return
        try:
            reply = ("done", topic_job(*task))
        except Exception:  # noqa: BLE001 - the parent redoes the topic in its own process
            reply = ("failed", traceback.format_exc())
        conn.send(reply)


@contextlib.contextmanager
def _sigint_ignored() -> Iterator[None]:
    """SIGINT ignored while workers are started: a spawned child inherits the ignored disposition, so a
    Ctrl-C during its start-up (seconds of imports) cannot kill it with a traceback. The parent's own handler
    is back as soon as the processes exist."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    yield  # a run stopping on an exception (a SIGTERM meanwhile) keeps SIGINT ignored while it ends its workers
    signal.signal(signal.SIGINT, previous)


class _Worker:
    """One worker process, its end of the pipe and the topic it is running (None: idle or finished)."""

    def __init__(self, context, parent: int) -> None:
        self.conn, child = context.Pipe()
        self.process = context.Process(target=_serve, args=(child, parent), name="steplab-figures-worker")
        self.process.start()
        child.close()
        self.topic: str | None = None


def stop_workers(workers: list, *, now: bool = True) -> None:
    """End every worker: SIGTERM (``now``; otherwise first :data:`STOP_TIMEOUT_S` to exit as told), then SIGKILL
    for one still running :data:`STOP_TIMEOUT_S` later. Returns when every worker is gone."""
    for stage in (["wait"] if not now else []) + ["terminate", "kill"]:
        deadline = time.monotonic() + STOP_TIMEOUT_S
        for w in workers:
            if stage != "wait" and w.process.is_alive():
                getattr(w.process, stage)()
        for w in workers:
            w.process.join(max(0.0, deadline - time.monotonic()))
        if not any(w.process.is_alive() for w in workers):
            break
    for w in workers:
        w.conn.close()


def run_parallel(names: list[str], drawn: set[str], budget, out: Path, args, on_done=None) -> dict[str, dict]:
    """Run :func:`topic_job` for every topic in ``names`` on ``args.jobs`` worker processes (spawned: a forked JAX is
    unsafe); a topic whose worker died or raised is left out (the caller then runs it in this process).

    ``on_done(name, result)`` is called as each topic finishes. Any exception here, an :class:`Interrupted` by a
    signal included, ends every worker before it propagates: queued topics never start and no worker is left.
    """
    import multiprocessing
    from multiprocessing.connection import wait

    queue = queue_order(names, cost_hints(budget.name))
    context = multiprocessing.get_context("spawn")
    done: dict[str, dict] = {}
    workers: list[_Worker] = []
    finished = False
    try:
        with _sigint_ignored():
            for _ in range(min(args.jobs, len(queue))):
                workers.append(_Worker(context, os.getpid()))  # one by one: stop_workers ends those started

        def hand_out(w: _Worker) -> None:
            w.topic = queue.pop(0) if queue else None
            try:
                w.conn.send(None if w.topic is None else (w.topic, budget.name, str(out), args.fresh, w.topic in drawn,
                                                          args.quiet))
                if w.topic is not None and not args.quiet:
                    print(f"topic {w.topic}: started (worker)", file=sys.stderr, flush=True)
            except OSError:  # the worker died between two topics: another worker (or the parent) takes this one
                if w.topic is not None:
                    queue.insert(0, w.topic)
                w.topic = None

        for w in workers:
            hand_out(w)
        while any(w.topic is not None for w in workers):
            busy = [w for w in workers if w.topic is not None]
            ready = wait([w.conn for w in busy] + [w.process.sentinel for w in busy])
            for w in busy:
                if w.conn not in ready and w.process.sentinel not in ready:
                    continue
                name = w.topic
                try:
                    kind, payload = w.conn.recv() if w.conn.poll() else ("died", None)
                except (EOFError, OSError):
                    kind, payload = "died", None
                if kind == "done":
                    done[name] = payload
                    if on_done is not None:
                        on_done(name, payload)
                    if not args.quiet:
                        print(f"topic {name}: claims{' and figures' if name in drawn else ''} in "
                              f"{payload['seconds']:.1f} s (worker)", file=sys.stderr, flush=True)
                    hand_out(w)
                    continue
                why = (payload.strip().splitlines()[-1] if kind == "failed"
                       else f"the worker process ended with status {w.process.exitcode}")
                print(f"worker for topic {name} failed ({why}); running it here", file=sys.stderr, flush=True)
                if kind == "failed":
                    hand_out(w)
                else:
                    w.topic = None  # a dead worker takes no more topics
        finished = True
    finally:
        # finished: every worker was told to exit and is given the time to; otherwise (a signal, an error) they are
        # ended at once, whatever they were running
        stop_workers(workers, now=not finished)
    return done
