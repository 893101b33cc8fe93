"""Worker processes for ``python -m figures --jobs N``: one topic per task (its claims, then its figures).

Kept out of ``figures/__main__.py`` because a spawned worker unpickles its task function by module name, and
``__main__`` names a different module in the worker.
"""
from __future__ import annotations

import importlib
import json
import sys
import time
import traceback
from pathlib import Path


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


def topic_job(name: str, budget_name: str, out: str, fresh: bool, with_figures: bool) -> dict:
    """A worker's task (``--jobs``): topic ``name``'s claims (into the results cache) and, with ``with_figures``, its
    figures.

    Returns what the parent needs: the files and figure-claim links, the traceback if the figure script raised,
    and the wall seconds (the parent reads the claims' outcomes back from the cache).
    """
    from paper_checks import as_budget, claims, run_claims, topics
    from sims.cache import recompute

    # workers share the parent's terminal: progress bars redrawn in place by two processes would garble each
    # other, so a worker's bars print as occasional plain lines (what they do in a log)
    if sys.stderr.isatty():
        sys.stderr = _NotATerminal(sys.stderr)
    budget, start = as_budget(budget_name), time.perf_counter()
    with recompute(fresh):
        outcomes = run_claims(claims(topic=name) if name in topics() else [], budget, use_cache=True)
        results = {o.claim.id: o.result for o in outcomes if o.result is not None}
        files, links, error = [], {}, None
        if with_figures:
            try:
                paths, drawn = draw(name, results, Path(out), budget)
                files, links = [str(p) for p in paths], {k: list(v) for k, v in drawn.items()}
            except Exception:  # noqa: BLE001 - reported by the parent like an in-process failure
                error = traceback.format_exc()
    return {"files": files, "links": links, "error": error, "seconds": time.perf_counter() - start}


def cost_hints(budget_name: str) -> dict[str, float]:
    """Per topic, the seconds its cached claims and experiments took when last computed at this budget (any code
    version; a claim's time includes the experiments it ran, so this over-counts, which ordering tolerates): the
    workers take the longest topics first, so the last one does not finish alone."""
    from sims.cache import results_dir

    hints: dict[str, float] = {}
    for path in results_dir().glob(f"*.{budget_name}.json"):
        try:
            meta = json.loads(path.read_text())
            owners = meta["topic"]
            owner = owners if isinstance(owners, str) else owners[0]
            hints[owner] = hints.get(owner, 0.0) + float(meta.get("wall_s") or 0.0)
        except (OSError, ValueError, KeyError, IndexError, TypeError):
            continue
    return hints


def run_parallel(names: list[str], drawn: set[str], budget, out: Path, args) -> dict[str, dict]:
    """Run :func:`topic_job` for every topic in ``names`` on ``args.jobs`` worker processes (spawned: a forked JAX is
    unsafe); a topic whose worker died is left out (the caller then runs it in this process)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    hints = cost_hints(budget.name)
    order = sorted(names, key=lambda n: -hints.get(n, 0.0))
    done: dict[str, dict] = {}
    with ProcessPoolExecutor(max_workers=min(args.jobs, len(order)),
                             mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = {pool.submit(topic_job, n, budget.name, str(out), args.fresh, n in drawn): n for n in order}
        for future in as_completed(futures):
            name = futures[future]
            try:
                done[name] = future.result()
            except Exception as exc:  # noqa: BLE001 - a dead worker: redo the topic here
                print(f"worker for topic {name} failed ({type(exc).__name__}: {exc}); running it here",
                      file=sys.stderr, flush=True)
                continue
            if not args.quiet:
                print(f"topic {name}: claims{' and figures' if name in drawn else ''} in "
                      f"{done[name]['seconds']:.1f} s (worker)", file=sys.stderr, flush=True)
    return done
