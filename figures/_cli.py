"""steplab: the command line of the suite.

    steplab check    run claims, print the verification table   (= python -m paper_checks)
    steplab figures  run claims, draw figures, write the report (= python -m figures)
    steplab list     list topics, papers and claims
    steplab bench    JAX simulators against NumPy references   (= python -m sims.bench)
    steplab cache    where cached results live; --clear removes them

Every subcommand has --help. An unknown topic, paper or claim is a usage error (exit 2)
whose message lists the valid names, so a typo never selects nothing and passes.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

__all__ = ["main", "build_parser", "clear_cache"]


def _list(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from paper_checks.__main__ import describe, select

    selected = select(args, parser)
    if args.json:
        print(json.dumps([{"id": c.id, "paper": c.paper.key, "topic": c.topic, "kind": c.kind,
                           "provenance": c.provenance, "source": c.source, "statement": c.statement}
                          for c in selected], indent=2))
    elif args.what == "topics":
        for topic in dict.fromkeys(c.topic for c in selected):
            mine = [c for c in selected if c.topic == topic]
            print(f"{topic}  ({len(mine)} claims; paper {', '.join(dict.fromkeys(c.paper.key for c in mine))})")
    elif args.what == "papers":
        for paper in dict.fromkeys(c.paper for c in selected):
            mine = [c for c in selected if c.paper == paper]
            print(f"{paper.key}  ({len(mine)} claims, topic {mine[0].topic})  {paper.cite()}")
    else:
        print(describe(selected))
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


def _cache(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from sims.cache import results_dir

    folder = results_dir()
    entries = _cache_entries(folder)
    if args.clear:
        removed = clear_cache(folder)
        print(f"removed {len(removed)} files from {folder}")
        return 0
    size = sum(p.stat().st_size for p in entries)
    print(f"{folder}  ({len([p for p in entries if p.suffix == '.npz'])} cached results, {size / 1e6:.1f} MB)")
    print("rule: $STEPLAB_RESULTS if set; else results/ in the steplab checkout when run inside it; "
          "else $XDG_CACHE_HOME/steplab (default ~/.cache/steplab)")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The ``steplab`` parser with its subcommands."""
    from figures.__main__ import build_parser as figures_parser
    from paper_checks.__main__ import add_selection_arguments
    from paper_checks.__main__ import build_parser as check_parser

    parser = argparse.ArgumentParser(prog="steplab", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    check = check_parser(sub.add_parser("check", help="run claims and print the verification table",
                                description="Run claims and print the verification table. Exit status 0 only when "
                                            "every claim is passed, refutes paper or differs from paper."))
    figs = figures_parser(sub.add_parser("figures", help="run claims, draw the figures, write the report",
                                  description="Run claims, draw every figure and write report.html/report.md."))
    lister = sub.add_parser("list", help="list topics, papers or claims",
                            description="List what is registered (claims by default).")
    lister.add_argument("what", nargs="?", choices=("claims", "topics", "papers"), default="claims",
                        help="what to list (default: claims)")
    add_selection_arguments(lister)
    lister.add_argument("--json", action="store_true", help="print the selected claims as JSON")
    bench = sub.add_parser("bench", add_help=False, help="time the JAX simulators against NumPy references "
                                                 "(options: steplab bench --help)")
    cache = sub.add_parser("cache", help="show where cached results live; --clear removes them",
                           description="Show the results cache folder and its size.")
    cache.add_argument("--clear", action="store_true", help="delete every cached result in that folder")
    for p in (check, figs, lister, bench, cache):
        p.set_defaults(subparser=p)  # usage errors are reported by the subcommand's own parser
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``steplab`` console script."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "bench":  # every option belongs to the benchmark runner, help included
        from sims.bench import main as bench_main

        return bench_main(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    sub = args.subparser
    if args.command == "check":
        from paper_checks.__main__ import run

        return run(args, sub)
    if args.command == "figures":
        from figures.__main__ import run

        return run(args, sub)
    if args.command == "list":
        return _list(args, sub)
    return _cache(args, sub)


if __name__ == "__main__":
    sys.exit(main())
