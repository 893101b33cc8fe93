"""steplab: the command line of the suite.

    steplab check    run claims, print the verification table   (= python -m paper_checks)
    steplab figures  run claims, draw figures, write the report (= python -m figures)
    steplab list     list topics, papers and claims
    steplab bench    JAX simulators against NumPy references   (= python -m sims.bench)
    steplab cache    the results and XLA compilation caches; --clear removes both
    steplab dispatch the claims not yet cached as tasks on local processes or SLURM (submitit)
    steplab overlay  fit the noisy quadratic model to your logged run (CSV), with errors; draw it

Every subcommand has --help. An unknown topic, paper or claim is a usage error (exit 2)
whose message names the closest valid names, so a typo never selects nothing and passes.
``steplab list`` reads the claims' metadata from an index (:mod:`figures._index`) and imports no JAX; nor does
``steplab overlay`` (:mod:`figures._overlay`).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

__all__ = ["main", "build_parser", "clear_cache"]

# (option, field of a claim record): how --topic/--paper/--claim select claims
_SELECTORS = (("topic", "topic"), ("paper", "paper"), ("claim", "id"))
_LIST_DESCRIPTION = "List what is registered (claims by default), without running anything."


def _check_names(records: list[dict], args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    """A usage error (exit 2) for a --topic/--paper/--claim (every one given) that names nothing registered."""
    for option, field in _SELECTORS:
        values = (getattr(args, "claims", None) or []) if option == "claim" else []
        value = getattr(args, option, None)
        values = list(dict.fromkeys([*values, *([value] if value is not None else [])]))
        valid = list(dict.fromkeys(r[field] for r in records))
        for v in values:
            if v not in valid:
                # imported only on this path: the registry's module brings JAX with it, a listing must not
                from paper_checks._registry import unknown_name

                parser.error(unknown_name(option, v, valid))


def _select(records: list[dict], args: argparse.Namespace, parser: argparse.ArgumentParser) -> list[dict]:
    """The records --topic/--paper/--claim select; a usage error if a name is unknown or none is left
    (as ``paper_checks.__main__.select`` does for the live registry)."""
    _check_names(records, args, parser)
    chosen = {field: getattr(args, option) for option, field in _SELECTORS if getattr(args, option) is not None}
    selected = [r for r in records if all(r[field] == value for field, value in chosen.items())]
    if not selected:
        given = ", ".join(f"--{option} {getattr(args, option)}" for option, field in _SELECTORS if field in chosen)
        parser.error(f"no claim matches {given}")
    return selected


def _add_list_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The options of ``steplab list``.

    The selection options repeat ``paper_checks.__main__.add_selection_arguments`` because importing
    that module imports the :mod:`paper_checks` package, and with it JAX: listing must not.
    """
    parser.add_argument("what", nargs="?", choices=("claims", "topics", "papers"), default="claims",
                        help="what to list (default: claims)")
    parser.add_argument("--topic", metavar="T", help="only the claims of this topic (e.g. logistic)")
    parser.add_argument("--paper", metavar="KEY", help="only the claims of this paper key (e.g. meng2024)")
    parser.add_argument("--claim", metavar="ID", help="only this claim id (e.g. meng2024.cycles_between_1_and_2)")
    parser.add_argument("--json", action="store_true", help="print the selected claims as JSON")
    return parser


def _overlay_parser(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """``parser`` with the options of ``steplab overlay`` (imported here: ``steplab list`` must not load NumPy)."""
    from figures import _overlay

    parser.description = _overlay.DESCRIPTION
    return _overlay.add_arguments(parser)


def _list(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from figures._index import claim_records

    selected = _select(claim_records(), args, parser)
    if args.json:
        print(json.dumps([{k: r[k] for k in r if k != "cite"} for r in selected], indent=2))
    elif args.what == "topics":
        for topic in dict.fromkeys(r["topic"] for r in selected):
            mine = [r for r in selected if r["topic"] == topic]
            print(f"{topic}  ({len(mine)} claims; paper {', '.join(dict.fromkeys(r['paper'] for r in mine))})")
    elif args.what == "papers":
        for paper in dict.fromkeys(r["paper"] for r in selected):
            mine = [r for r in selected if r["paper"] == paper]
            print(f"{paper}  ({len(mine)} claims, topic {mine[0]['topic']})  {mine[0]['cite']}")
    else:  # the lines of paper_checks.__main__.describe
        print("\n".join(f"{r['id']}  [{r['topic']}, {r['kind']}, {r['provenance']}; {r['source']}]  {r['statement']}"
                        for r in selected))
    return 0


def _cache_entries(folder: Path) -> list[Path]:
    """The files of steplab's results cache in ``folder`` (and nothing else that may live there)."""
    if not folder.is_dir():
        return []
    found = []
    for path in sorted(folder.iterdir()):
        if not path.is_file():
            continue
        if path.suffix == ".json":
            try:
                meta = json.loads(path.read_text())
            except (OSError, ValueError):
                continue
            if isinstance(meta, dict) and "key" in meta and "npz_sha256" in meta:
                found.append(path)
        elif path.suffix == ".npz" and (path.with_suffix(".json").exists() or path.name.startswith(("claim.", "exp."))):
            found.append(path)
        elif path.name.endswith(".tmp") and path.name.startswith(("claim.", "exp.")):
            found.append(path)  # left behind by an interrupted write
    return found


def clear_cache(folder: Path | None = None) -> list[Path]:
    """Delete the cached results in ``folder`` (default: the cache folder in use); return what was deleted.

    Only files the cache writes are removed (``<name>.npz`` with its ``<name>.json``, and temporary
    files of interrupted writes); the folder itself goes when it is left empty.
    """
    from sims.cache import results_dir

    folder = results_dir() if folder is None else Path(folder)
    paths = _cache_entries(folder)
    for path in paths:
        path.unlink()
    if folder.is_dir() and not any(folder.iterdir()):
        folder.rmdir()
    return paths


def _tree_size(folder: Path) -> tuple[int, int]:
    """(files, bytes) under ``folder`` (0, 0 when it does not exist)."""
    files = [p for p in folder.rglob("*") if p.is_file()] if folder.is_dir() else []
    return len(files), sum(p.stat().st_size for p in files)


def _cache(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    import shutil

    from sims.cache import results_dir, xla_cache_dir

    folder, xla = results_dir(), xla_cache_dir()
    entries = _cache_entries(folder)
    if args.clear:
        removed = clear_cache(folder)
        print(f"removed {len(removed)} files from {folder}")
        if not args.keep_xla and xla.is_dir():
            n, _ = _tree_size(xla)
            shutil.rmtree(xla)
            print(f"removed {xla} ({n} compiled programs' files)")
        return 0
    size = sum(p.stat().st_size for p in entries)
    print(f"{folder}  ({len([p for p in entries if p.suffix == '.npz'])} cached results, {size / 1e6:.1f} MB)")
    print("rule: $STEPLAB_RESULTS if set; else results/ in the steplab checkout when run inside it; "
          "else $XDG_CACHE_HOME/steplab (default ~/.cache/steplab)")
    n, size = _tree_size(xla)
    print(f"{xla}  (XLA compilation cache: {n} files, {size / 1e6:.1f} MB)")
    print("rule: $JAX_COMPILATION_CACHE_DIR if set; else $XDG_CACHE_HOME/steplab-xla (default ~/.cache/steplab-xla)")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The ``steplab`` parser with its subcommands."""
    from figures.__main__ import build_parser as figures_parser
    from paper_checks.__main__ import build_parser as check_parser

    parser = argparse.ArgumentParser(prog="steplab", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    check = check_parser(sub.add_parser("check", help="run claims and print the verification table",
                                description="Run claims and print the verification table. Exit status 0 only when "
                                            "every claim is passed, refutes paper or differs from paper."))
    figs = figures_parser(sub.add_parser("figures", help="run claims, draw the figures, write the report",
                                  description="Run claims, draw every figure and write report.html/report.md."))
    lister = _add_list_arguments(sub.add_parser("list", help="list topics, papers or claims",
                                                description=_LIST_DESCRIPTION))
    bench = sub.add_parser("bench", add_help=False, help="time the JAX simulators against NumPy references "
                                                 "(options: steplab bench --help)")
    cache = sub.add_parser("cache", help="show where cached results live; --clear removes them",
                           description="Show the results cache and the XLA compilation cache: folders and sizes.")
    cache.add_argument("--clear", action="store_true",
                       help="delete every cached result in that folder and the XLA compilation cache")
    cache.add_argument("--keep-xla", action="store_true",
                       help="with --clear: keep the XLA compilation cache (what `make clean` does)")
    from paper_checks._dispatch import build_parser as dispatch_parser

    dispatch = dispatch_parser(sub.add_parser("dispatch", help="run the claims not yet cached as tasks on local "
                                              "processes or a SLURM cluster (submitit)",
                                              description="Run the selected claims that are not cached yet as "
                                              "independent tasks; `make figures` then draws from the cache."))
    overlay = _overlay_parser(sub.add_parser("overlay", help="fit the noisy quadratic model to your logged run "
                                             "(CSV) with standard errors; draw it over the log"))
    for p in (check, figs, lister, bench, cache, dispatch, overlay):
        p.set_defaults(subparser=p)  # usage errors are reported by the subcommand's own parser
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``steplab`` console script.

    Output piped into a reader that stops early (``steplab list | head``) ends quietly with status
    141, as a process killed by SIGPIPE, instead of a ``BrokenPipeError`` traceback.
    """
    try:
        status = _run(list(sys.argv[1:] if argv is None else argv))
        sys.stdout.flush()  # a reader gone before buffered output was written shows up here
    except BrokenPipeError:
        return _reader_gone()
    return status


def _reader_gone() -> int:
    """The exit status after stdout's reader went away, with stdout pointed at devnull.

    Python flushes stdout once more at exit: writing what is still buffered into the closed pipe
    would raise again, outside any handler. Nothing can be printed about it either (the reader of
    stdout is gone, and stderr may be the same pipe).
    """
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # stdout is not a real file (captured, replaced)
        pass
    return 128 + 13  # 13 = SIGPIPE


def quiet_xla(argv: list[str]) -> None:
    """Keep XLA's C++ warnings (e.g. "Constant folding an instruction is taking > 1s") out of the terminal.

    They are notes for XLA's developers, not for the user of a run, and they interleave with the progress
    lines. Sets ``TF_CPP_MIN_LOG_LEVEL=2`` (errors only) unless ``--verbose`` is in ``argv`` or the user set
    the variable; must run before JAX creates its CPU client (the level is read once, at the first message).
    Worker processes inherit it.
    """
    if "--verbose" not in argv:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def _run(argv: list[str]) -> int:
    """Parse ``argv`` and run its subcommand; return the exit status."""
    quiet_xla(argv)
    if argv and argv[0] == "bench" and "--profile" in argv:  # `bench [--json PATH] --profile CMD ARGS`
        from figures._profile import main as profile_main

        at = argv.index("--profile")
        before = argv[1:at]  # only `--json PATH` may come before the profiled command
        if before and (len(before) != 2 or before[0] != "--json"):
            print(f"steplab bench: with --profile, only --json PATH may precede it, got {' '.join(before)}",
                  file=sys.stderr)
            return 2
        return profile_main(argv[at + 1:], Path(before[1]) if before else None)
    if argv and argv[0] == "bench":  # every option belongs to the benchmark runner, help included
        from sims.bench import main as bench_main

        return bench_main(argv[1:], prog="steplab bench")
    if argv and argv[0] == "overlay":  # without build_parser(): a CSV fit needs no JAX
        from figures._overlay import run as overlay

        parser = _overlay_parser(argparse.ArgumentParser(prog="steplab overlay"))
        return overlay(parser.parse_args(argv[1:]), parser)
    if argv and argv[0] == "list":  # without build_parser(): its other subcommands' options import JAX
        lister = _add_list_arguments(argparse.ArgumentParser(prog="steplab list", description=_LIST_DESCRIPTION))
        return _list(lister.parse_args(argv[1:]), lister)
    parser = build_parser()
    args = parser.parse_args(argv)
    sub = args.subparser
    if args.command == "check":
        from figures._index import claim_records
        from paper_checks.__main__ import run

        # names checked here so a typo gets the closest names (the registry's own message lists all)
        _check_names(claim_records(report=False), args, sub)
        return run(args, sub)
    if args.command == "figures":
        from figures.__main__ import run

        return run(args, sub)
    if args.command == "list":
        return _list(args, sub)
    if args.command == "overlay":
        from figures._overlay import run as overlay

        return overlay(args, sub)
    if args.command == "dispatch":
        from figures._index import claim_records
        from paper_checks._dispatch import run as dispatch

        _check_names(claim_records(report=False), args, sub)
        return dispatch(args, sub)
    return _cache(args, sub)


if __name__ == "__main__":
    sys.exit(main())
