"""Run the claims, draw every figure and write the report (also ``steplab figures``).

Each selected claim runs at the budget (cached results are reused when still valid), each topic's
``figures/<topic>.py`` draws from the claims' results and the topic's experiments, and the
report is written beside the figures: ``report.html`` (self-contained) and ``report.md``.
A topic whose figures were drawn from exactly the same sources at the same budget, and whose files are
all still there with the bytes it wrote, is not drawn again (``.figures-stamp.json`` in the output folder
records the key, each file's size and sha256 and the figure-claim links; ``--fresh`` redraws). Figures are
written to a temporary name and renamed when complete, so an interrupted drawing never leaves a truncated
file behind. With ``--topic T`` only that topic runs and
its report goes to ``report_T.{html,md}``, so the full report is never overwritten by a part of it.
With ``--jobs N`` (``make figures`` passes ``WORKERS``, 2), N worker processes take the topics with
something to draw, longest first, each running its topic's claims into the results cache and drawing its
figures; this process then reads the claims back and writes the stamp and the report. The claims and
figures are the same as in one process (each is a deterministic function of its code, budget and
configuration).
Exit status as for ``steplab check``; 1 also when a topic's figure script raises; 2 also when ``--out`` or
the results folder cannot be written. SIGINT (Ctrl-C) or SIGTERM stops the run within seconds: queued topics
never start, the workers are ended, every figure and cache entry already written stays intact, no report is
written, one line says what was kept, and the exit status is 130 or 143; the same command resumes from there.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import pkgutil
import re
import sys
import time
import traceback
from pathlib import Path

import figures
from figures._jobs import draw as _draw, run_parallel as _parallel


def topic_modules() -> list[str]:
    """Names of the figure scripts ``figures/<topic>.py`` (modules not starting with ``_``, ``plot`` excluded)."""
    return [m.name for m in pkgutil.iter_modules(figures.__path__) if not m.name.startswith("_") and m.name != "plot"]


def build_parser(parser: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    """The options of ``python -m figures`` / ``steplab figures`` (added to ``parser`` when given)."""
    from paper_checks.__main__ import add_budget_argument

    if parser is None:
        parser = argparse.ArgumentParser(prog="python -m figures", description=__doc__,
                                         formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--topic", metavar="T",
                        help="only this topic's claims and figures; the report goes to report_T.{html,md}")
    add_budget_argument(parser)
    parser.add_argument("--out", default="figures/out", metavar="DIR",
                        help="folder for the figures and the report (default figures/out)")
    parser.add_argument("--fresh", action="store_true",
                        help="recompute cached experiments and claim results and overwrite them")
    parser.add_argument("--list", action="store_true", help="list the topics with figure scripts and exit")
    parser.add_argument("--jobs", type=_jobs, default=1, metavar="N",
                        help="worker processes for the topics (each runs its topic's claims and draws its figures; "
                             "default 1: everything in this process)")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    parser.add_argument("--verbose", action="store_true",
                        help="let XLA's own C++ warnings through (by default only its errors reach the terminal)")
    parser.add_argument("--profile", action="store_true",
                        help="print where the time went (XLA compilation, tracing, running, sympy, plotting) by "
                             "topic; also the claims phase and each figure script's wall time")
    return parser


STAMP = ".figures-stamp.json"


def _jobs(text: str) -> int:
    """``--jobs``: a positive integer."""
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a positive number of worker processes, got {text!r}")
    return n


_TOPIC_IMPORT = re.compile(r"\b(?:theory|sims|paper_checks)(?:\.|\s+import\s+)(\w+)")


def drawing_scope(name: str) -> tuple[str, ...]:
    """The topics whose sources topic ``name``'s figures depend on: itself, the topics its claims and experiments
    declare in ``uses=``, and those whose theory, simulators or checks ``figures/<name>.py`` imports."""
    from paper_checks import claims, topics
    from paper_checks._experiment import experiments
    from sims.cache import topic_names

    known = set(topic_names())
    scope = {name} & known
    if name in topics():
        scope.update(u for c in claims(topic=name) for u in c.uses)
    scope.update(u for e in experiments().values() if e.topic == name for u in e.uses)
    source = Path(figures.__file__).with_name(f"{name}.py")
    if source.exists():
        scope.update(m for m in _TOPIC_IMPORT.findall(source.read_text()) if m in known)
    return tuple(sorted(scope))


def drawing_key(budget_name: str, name: str) -> str:
    """What topic ``name``'s figures are a function of: the sources of the topics in :func:`drawing_scope` and
    the shared sources (theory, sims, paper_checks), its figure script and the shared figure modules, the budget
    and matplotlib's version.

    Claim results and experiments are deterministic functions of their code, budget and configuration
    (configurations live in those sources), so equal keys mean equal figures. An edit to one topic's sources
    redraws that topic and the topics that declare it in ``uses=`` or import it, not the others; an edit to a
    shared source (or an unscoped one) redraws every topic.
    """
    import matplotlib

    from sims.cache import part_owner, code_version, topic_names

    scope = drawing_scope(name)
    digest = hashlib.sha256(f"{code_version(scope or None)}|{budget_name}|matplotlib {matplotlib.__version__}".encode())
    for path in sorted(Path(figures.__file__).parent.glob("*.py")):
        owner = part_owner(path.stem, topic_names())
        if owner is None or owner in scope or path.stem == name:
            digest.update(path.name.encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _read_stamp(out: Path) -> dict:
    try:
        stamp = json.loads((out / STAMP).read_text())
    except (OSError, ValueError):
        return {}  # missing or unreadable: every topic is drawn
    return stamp if isinstance(stamp, dict) else {}


def _fingerprint(path: Path) -> dict:
    """What the stamp records of a file: its size and sha256."""
    data = path.read_bytes()
    return {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def _stamp_entry(key: str, files: list[Path], links: dict, out: Path) -> dict:
    """A topic's stamp: the drawing key, its files relative to ``out`` with their size and sha256 and, per figure,
    the claims it shows."""
    return {"key": key, "files": {os.path.relpath(p, out): _fingerprint(Path(p)) for p in files},
            "claims": {k: list(v) for k, v in links.items()}}


def _reusable(entry: object, key: str, out: Path) -> list[Path] | None:
    """The files of a stamp entry when it was drawn under ``key`` and every file still has the size and sha256
    recorded (a truncated, edited or missing file means: draw again)."""
    if not isinstance(entry, dict) or entry.get("key") != key or not isinstance(entry.get("files"), dict):
        return None
    paths = []
    for name, recorded in entry["files"].items():
        path = out / name
        try:
            if path.stat().st_size != recorded["size"] or _fingerprint(path) != recorded:
                return None
        except (OSError, TypeError, KeyError):
            return None
        paths.append(path)
    return paths


def _write_stamp(out: Path, stamp: dict) -> None:
    """Write the stamp atomically (an interrupted write keeps the old one)."""
    from sims.cache import write_atomic

    write_atomic(out / STAMP, json.dumps(stamp, indent=1, sort_keys=True).encode())


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Run claims, draw figures, write the report; return the exit status (``--profile``: under a time profile;
    128 + the signal's number when SIGINT or SIGTERM stopped it)."""
    from paper_checks.__main__ import Interrupted, Progress, signals_stop_the_run, stopped_line

    progress = Progress(folder=None, total=0, unit="topics")
    with signals_stop_the_run():
        try:
            if not getattr(args, "profile", False):
                return _run(args, parser, progress)
            from figures._profile import TimeProfile

            with TimeProfile() as prof:
                code = _run(args, parser, progress)
            print(f"time profile (seconds; sampled every {prof.interval * 1e3:.0f} ms):\n{prof.format()}",
                  file=sys.stderr)
            return code
        except Interrupted as exc:
            print(stopped_line(exc.signum, progress), file=sys.stderr, flush=True)
            return 128 + exc.signum


def _run(args: argparse.Namespace, parser: argparse.ArgumentParser, progress) -> int:
    from figures._report import write_html, write_markdown
    from paper_checks import as_budget, claims, exit_code, run_claims, topics
    from paper_checks.__main__ import defer_signals
    from sims.cache import ResultsFolderError, prepare_results_dir, recompute, remove_stale_temporaries, unwritable

    drawable = topic_modules()
    if args.list:
        print("\n".join(drawable))
        return 0
    if args.topic is not None:
        valid = list(dict.fromkeys([*topics(), *drawable]))
        if args.topic not in valid:
            parser.error(f"topic: unknown topic {args.topic!r}; valid: {', '.join(valid)}")
    budget = as_budget(args.budget)
    out = Path(args.out)
    why = unwritable(out)
    if why is not None:
        parser.error(f"--out: {str(out)!r} is not a writable folder ({why})")
    try:
        progress.folder = prepare_results_dir()
    except ResultsFolderError as exc:
        parser.error(str(exc))
    remove_stale_temporaries(out)  # figures and stamps of interrupted writes

    selected = claims(topic=args.topic) if args.topic is None or args.topic in topics() else []
    if not args.quiet:
        print(f"running {len(selected)} claims at budget {budget.name!r} (cached results reused)",
              file=sys.stderr, flush=True)
    broken: list[str] = []
    seconds: dict[str, float] = {}  # wall time of the claims phase and of each figure script
    stamp = _read_stamp(out)
    wanted = [n for n in drawable if not args.topic or n == args.topic]
    keys = {n: drawing_key(budget.name, n) for n in wanted}
    to_draw = {n for n in wanted if args.fresh or _reusable(stamp.get(n), keys[n], out) is None}
    # --jobs: when figures are to be drawn, every topic's claims and figures run in worker processes first (the
    # claims land in the results cache, read back below); a warm run (nothing to draw) stays in this process
    parallel: dict[str, dict] = {}
    progress.total = len(wanted)
    if args.jobs > 1 and to_draw:
        start = time.perf_counter()
        jobs = list(dict.fromkeys([*(c.topic for c in selected), *wanted]))

        def finished(name: str, result: dict) -> None:
            progress.done += name in wanted

        parallel = _parallel(jobs, to_draw, budget, out, args, on_done=finished)
        seconds["workers"] = time.perf_counter() - start
        progress.done = 0  # counted again below, as each topic is stamped
    with recompute(args.fresh):
        start = time.perf_counter()
        # the workers' claims are read back from the cache (--fresh was theirs to apply), the rest run here
        with recompute(False):
            by_worker = run_claims([c for c in selected if c.topic in parallel], budget, use_cache=True)
        # "cached" only for what no worker computed in this run: a worker's fresh result is this run's computation
        fresh = {cid: wall for job in parallel.values() for cid, wall in job.get("computed", {}).items()}
        for o in by_worker:
            if o.claim.id in fresh:
                o.cached, o.wall_s = False, fresh[o.claim.id]
        here = run_claims([c for c in selected if c.topic not in parallel], budget, use_cache=True,
                          progress=not args.quiet)
        done = {o.claim.id: o for o in [*by_worker, *here]}
        outcomes = [done[c.id] for c in selected]
        seconds["claims"] = time.perf_counter() - start
        results = {o.claim.id: o.result for o in outcomes if o.result is not None}
        made: dict[str, list[Path]] = {}
        links: dict[str, tuple[str, ...]] = {}
        # a claim that errored may draw differently once fixed: its topic's figures are never stamped
        errored = {o.claim.topic for o in outcomes if o.result is None}
        for name in wanted:
            job = parallel.get(name) if name in to_draw else None
            if job is None:
                kept = None if name in to_draw else _reusable(stamp.get(name), keys[name], out)
                if kept is not None:
                    made[name] = kept
                    links.update({k: tuple(v) for k, v in stamp[name].get("claims", {}).items()})
                    if not args.quiet:
                        print(f"figures/{name}.py: unchanged sources and budget, {len(kept)} files kept",
                              file=sys.stderr, flush=True)
                    progress.done += 1
                    continue
                if not args.quiet:
                    print(f"drawing figures/{name}.py", file=sys.stderr, flush=True)
                start = time.perf_counter()
                try:
                    files, drawn, error = *_draw(name, results, out, budget), None
                except Exception:  # noqa: BLE001 - one broken figure script must not lose the others or the report
                    files, drawn, error = None, {}, traceback.format_exc()
                seconds[f"figures/{name}.py"] = time.perf_counter() - start
            else:  # drawn by a worker (with its claims)
                files, drawn, error = [Path(p) for p in job["files"]], job["links"], job["error"]
                seconds[f"figures/{name}.py (worker, with claims)"] = job["seconds"]
            stamp.pop(name, None)
            if files is not None:
                made[name] = files
            links.update({k: tuple(v) for k, v in drawn.items()})
            if error is not None:
                print(f"figures/{name}.py raised:\n{error}", file=sys.stderr)
                broken.append(name)
            elif name not in errored:
                stamp[name] = _stamp_entry(keys[name], files, drawn, out)
            with defer_signals():
                _write_stamp(out, stamp)
                progress.done += 1
    notes = [f"figures/{name}.py raised an error; its figures are missing" for name in broken]
    stem = "report" if args.topic is None else f"report_{args.topic}"
    with defer_signals():  # a report is written whole or not at all
        md = write_markdown(outcomes, made, out, budget.name, figure_claims=links, name=stem, notes=notes)
        page = write_html(outcomes, made, out, budget.name, figure_claims=links, name=stem, notes=notes)
        progress.written = f"the report was written ({md.name}, {page.name})"
    n_fig = sum(len(v) for v in made.values())
    print(f"wrote {n_fig} figure files, {md} and {page}")
    if not args.quiet or getattr(args, "profile", False):
        print("wall seconds: " + ", ".join(f"{k} {v:.1f}" for k, v in seconds.items()), file=sys.stderr)
    for o in outcomes:
        if o.status not in ("passed", "refutes paper", "differs from paper"):
            print(f"  {o.status}: {o.claim.id}", file=sys.stderr)
    return max(exit_code(outcomes), int(bool(broken)))


def main(argv: list[str] | None = None) -> int:
    from figures._cli import quiet_xla

    quiet_xla(list(sys.argv[1:] if argv is None else argv))
    parser = build_parser()
    return run(parser.parse_args(argv), parser)


if __name__ == "__main__":
    sys.exit(main())
