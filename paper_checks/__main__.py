"""Run the registered claims and print the verification table (also ``steplab check``).

Exit status: 0 when every selected claim is passed, refutes paper or differs from paper; 1 when
any is failed, inconclusive or error; 2 on a usage error -- an unknown topic, paper or claim
(the message lists the valid names), a selection that matches no claim, or a results folder that
cannot be written; 130 (Ctrl-C, SIGINT) or 143 (SIGTERM) when stopped by a signal: the run stops
at once, prints one line saying what it kept and no table; every result written to the cache before
the signal is intact, so the same command resumes from there.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import re
import signal
import os
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from paper_checks import BUDGETS, claims, exit_code, format_table, import_errors, run_claims, to_records

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def add_selection_arguments(parser: argparse.ArgumentParser) -> None:
    """``--topic``, ``--paper`` and ``--claim`` (repeatable): which claims a command acts on (all by default)."""
    parser.add_argument("--topic", metavar="T", help="only the claims of this topic (e.g. logistic; see `steplab list topics`)")
    parser.add_argument("--paper", metavar="KEY", help="only the claims of this paper key (e.g. meng2024)")
    parser.add_argument("--claim", metavar="ID", action=_ClaimOption,
                        help="only this claim id (e.g. meng2024.cycles_between_1_and_2); repeat for several")
    parser.set_defaults(claims=None)


class _ClaimOption(argparse.Action):
    """``--claim ID``, repeatable: ``claims`` collects every id given, ``claim`` holds the last one.

    ``claim`` stays a single id so that code reading one (``steplab check`` checks the names it is given
    before running) keeps working; :func:`select` reads ``claims``.
    """

    def __call__(self, parser, namespace, values, option_string=None):
        namespace.claims = [*(getattr(namespace, "claims", None) or []), values]
        setattr(namespace, self.dest, values)


def add_budget_argument(parser: argparse.ArgumentParser) -> None:
    """``--budget quick|full``."""
    parser.add_argument("--budget", choices=BUDGETS, default="full",
                        help="quick: the seconds-scale budget of the tests; full: the report's budget (default)")


def add_cache_arguments(parser: argparse.ArgumentParser) -> None:
    """``--fresh`` and ``--no-cache``."""
    parser.add_argument("--fresh", action="store_true",
                        help="recompute cached experiments and claim results and overwrite them")
    parser.add_argument("--no-cache", action="store_true",
                        help="neither read nor write the results folder: compute everything in this run (an "
                             "experiment several claims share still runs once)")


def claim_ids(args: argparse.Namespace) -> list[str]:
    """The ``--claim`` ids given, in order, each once (empty: no ``--claim``)."""
    ids = getattr(args, "claims", None) or ([args.claim] if getattr(args, "claim", None) else [])
    return list(dict.fromkeys(ids))


def select(args: argparse.Namespace, parser: argparse.ArgumentParser) -> list:
    """The claims selected by ``--topic/--paper/--claim``; a usage error (exit 2) if none or a name is unknown.

    Several ``--claim`` select each of them (in registry order); ``--topic`` and ``--paper`` narrow that.
    """
    ids = claim_ids(args)
    try:
        selected = claims(paper=args.paper, topic=args.topic)
        for claim_id in ids:
            claims(claim_id=claim_id)  # an unknown id is an error listing the valid ones
    except ValueError as exc:
        parser.error(str(exc))
    if ids:
        selected = [c for c in selected if c.id in ids]
    for topic, trace in import_errors().items():
        print(f"topic {topic!r} failed to import; its claims are missing:\n{trace}", file=sys.stderr)
    if not selected:
        given = [f"--{k} {v}" for k, v in (("topic", args.topic), ("paper", args.paper)) if v]
        given += [f"--claim {i}" for i in ids]
        parser.error(f"no claim matches {', '.join(given)}")
    return selected


def describe(selected: list) -> str:
    """One line per claim: id, topic, kind, provenance, source and statement."""
    return "\n".join(f"{c.id}  [{c.topic}, {c.kind}, {c.provenance}; {c.source}]  {c.statement}" for c in selected)


def describe_json(selected: list) -> str:
    """The selected claims as JSON: the fields of ``steplab list --json``."""
    return json.dumps([{"id": c.id, "paper": c.paper.key, "topic": c.topic, "kind": c.kind,
                        "provenance": c.provenance, "source": c.source, "statement": c.statement}
                       for c in selected], indent=2)


def outcomes_json(outcomes: list, timings: bool = False) -> str:
    """The JSON of ``--json``: every record of :func:`paper_checks.to_records`, without the wall seconds
    (which differ from run to run, so two identical runs print identical bytes) unless ``timings``."""
    records = to_records(outcomes)
    if not timings:
        records = [{k: v for k, v in r.items() if k != "wall_s"} for r in records]
    return json.dumps(records, indent=2, default=str)


def build_parser(parser: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    """The options of ``python -m paper_checks`` / ``steplab check`` (added to ``parser`` when given)."""
    if parser is None:
        parser = argparse.ArgumentParser(prog="python -m paper_checks", description=__doc__,
                                         formatter_class=argparse.RawDescriptionHelpFormatter)
    add_selection_arguments(parser)
    add_budget_argument(parser)
    parser.add_argument("--json", action="store_true",
                        help="print JSON (every check, rival and margin) instead of the table; with --list, the "
                             "selected claims as JSON")
    parser.add_argument("--timings", action="store_true",
                        help="with --json: include each claim's wall seconds (wall_s), which differ from run to run")
    parser.add_argument("--list", action="store_true", help="list the selected claims without running them")
    add_cache_arguments(parser)
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    parser.add_argument("--verbose", action="store_true",
                        help="let XLA's own C++ warnings through (by default only its errors reach the terminal)")
    return parser


# ---------------------------------------------------------------------------------------------
# stopping on a signal (shared with ``python -m figures``)


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM arrived during a run: raised in the main thread to unwind it (``signum`` says which).

    A ``KeyboardInterrupt``, so the ``except Exception`` that records a crashing claim as an error does not
    catch it.
    """

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


_DEFER = {"depth": 0, "pending": None}  # inside defer_signals(): the signal that arrived, raised at its end


def _on_signal(signum: int, frame) -> None:
    if _DEFER["depth"]:
        _DEFER["pending"] = _DEFER["pending"] or signum
        return
    # one stop per run: a second Ctrl-C while the run unwinds must not interrupt the clean-up that ends the
    # worker processes (it takes a second or two); the handlers are restored when the run returns
    for s in STOP_SIGNALS:
        signal.signal(s, signal.SIG_IGN)
    raise Interrupted(signum)


@contextlib.contextmanager
def signals_stop_the_run() -> Iterator[None]:
    """Within: SIGINT and SIGTERM raise :class:`Interrupted` in the main thread (outside the main thread,
    where handlers cannot be installed, nothing changes)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.getsignal(s) for s in STOP_SIGNALS}
    for s in STOP_SIGNALS:
        signal.signal(s, _on_signal)
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


@contextlib.contextmanager
def defer_signals() -> Iterator[None]:
    """Within: a stopping signal waits until the block is done (writing a file the next run reads back must
    not stop halfway), then raises :class:`Interrupted`."""
    _DEFER["depth"] += 1
    try:
        yield
    finally:
        _DEFER["depth"] -= 1
        pending, _DEFER["pending"] = _DEFER["pending"], None
        if pending is not None and not _DEFER["depth"]:
            _on_signal(pending, None)
        elif pending is not None:
            _DEFER["pending"] = pending


@dataclass
class Progress:
    """What a run has done, for the line printed when a signal stops it."""

    folder: Path | None  # the results folder; None when nothing is written (--no-cache)
    total: int
    unit: str = "claims"
    done: int = 0
    since: float = 0.0
    written: str = ""  # the table or report the run wrote, if it got that far

    def __post_init__(self) -> None:
        self.since = self.since or time.time()


_ENTRY_JSON = re.compile(r"\.[0-9a-f]{16}\.json$")


def _entries_written_since(folder: Path, since: float) -> int:
    """Cache entries (their ``.json``) in ``folder`` written at or after ``since`` (by any process)."""
    count = 0
    with contextlib.suppress(OSError):
        for path in folder.iterdir():
            with contextlib.suppress(OSError):
                count += bool(_ENTRY_JSON.search(path.name)) and path.stat().st_mtime >= since - 1.0
    return count


def stopped_line(signum: int, progress: Progress) -> str:
    """The one line a run stopped by ``signum`` prints: how far it got and what it kept."""
    head = f"stopped by {signal.Signals(signum).name} after {progress.done} of {progress.total} {progress.unit}"
    if progress.folder is None:
        kept = "nothing was cached (--no-cache)"
    else:
        n = _entries_written_since(progress.folder, progress.since)
        kept = (f"{n} cache {'entry' if n == 1 else 'entries'} written during the run kept in {progress.folder}, "
                f"where the same command resumes")
    return f"{head}; {kept}; {progress.written or 'no table or report written'}"


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Run the selected claims as ``args`` says; return the exit status (128 + the signal's number when
    SIGINT or SIGTERM stopped it)."""
    progress = Progress(folder=None, total=0)
    with signals_stop_the_run():
        try:
            return _run(args, parser, progress)
        except Interrupted as exc:
            print(stopped_line(exc.signum, progress), file=sys.stderr, flush=True)
            return 128 + exc.signum


def _run(args: argparse.Namespace, parser: argparse.ArgumentParser, progress: Progress) -> int:
    from sims.cache import ResultsFolderError, memory_only, prepare_results_dir, recompute

    selected = select(args, parser)
    if args.list:
        print(describe_json(selected) if args.json else describe(selected))
        return 0
    if not args.no_cache:
        try:
            progress.folder = prepare_results_dir()
        except ResultsFolderError as exc:
            parser.error(f"{exc}, or run with --no-cache")
    progress.total = len(selected)

    def done(k: int, n: int, outcome) -> None:
        progress.done = k

    with memory_only(args.no_cache), recompute(args.fresh and not args.no_cache):
        outcomes = run_claims(selected, args.budget, use_cache=not args.no_cache, progress=not args.quiet,
                              on_done=done)
    with defer_signals():
        print(outcomes_json(outcomes, args.timings) if args.json else format_table(outcomes), flush=True)
        progress.written = "the table was printed"
    for o in outcomes:
        if o.status == "error":
            print(f"\n{o.claim.id} error:\n{o.error}", file=sys.stderr)
        elif o.status in ("failed", "inconclusive"):
            print(f"\n{o.claim.id} {o.status.upper()}: {o.result.detail}", file=sys.stderr)
    return max(exit_code(outcomes), int(bool(import_errors())))


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--verbose" not in argv:  # XLA's C++ warnings are notes for its developers (as in figures._cli.quiet_xla)
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    parser = build_parser()
    return run(parser.parse_args(argv), parser)


if __name__ == "__main__":
    sys.exit(main())
