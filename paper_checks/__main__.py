"""Run the registered claims and print the verification table (also ``steplab check``).

Exit status: 0 when every selected claim is passed, refutes paper or differs from paper; 1 when
any is failed, inconclusive or error; 2 on a usage error -- an unknown topic, paper or claim
(the message lists the valid names) or a selection that matches no claim.
"""
from __future__ import annotations

import argparse
import sys

from paper_checks import BUDGETS, claims, exit_code, format_table, import_errors, run_claims, to_json


def add_selection_arguments(parser: argparse.ArgumentParser) -> None:
    """``--topic``, ``--paper`` and ``--claim``: which claims a command acts on (all by default)."""
    parser.add_argument("--topic", metavar="T", help="only the claims of this topic (e.g. logistic; see `steplab list topics`)")
    parser.add_argument("--paper", metavar="KEY", help="only the claims of this paper key (e.g. meng2024)")
    parser.add_argument("--claim", metavar="ID", help="only this claim id (e.g. meng2024.cycles_between_1_and_2)")


def add_budget_argument(parser: argparse.ArgumentParser) -> None:
    """``--budget quick|full``."""
    parser.add_argument("--budget", choices=BUDGETS, default="full",
                        help="quick: the seconds-scale budget of the tests; full: the report's budget (default)")


def add_cache_arguments(parser: argparse.ArgumentParser) -> None:
    """``--fresh`` and ``--no-cache``."""
    parser.add_argument("--fresh", action="store_true",
                        help="recompute cached experiments and claim results and overwrite them")
    parser.add_argument("--no-cache", action="store_true",
                        help="neither read nor write cached claim results (experiments still use the cache)")


def select(args: argparse.Namespace, parser: argparse.ArgumentParser) -> list:
    """The claims selected by ``--topic/--paper/--claim``; a usage error (exit 2) if none or a name is unknown."""
    try:
        selected = claims(paper=args.paper, claim_id=args.claim, topic=args.topic)
    except ValueError as exc:
        parser.error(str(exc))
    for topic, trace in import_errors().items():
        print(f"topic {topic!r} failed to import; its claims are missing:\n{trace}", file=sys.stderr)
    if not selected:
        given = ", ".join(f"--{k} {v}" for k, v in (("topic", args.topic), ("paper", args.paper),
                                                      ("claim", args.claim)) if v)
        parser.error(f"no claim matches {given}")
    return selected


def describe(selected: list) -> str:
    """One line per claim: id, topic, kind, provenance, source and statement."""
    return "\n".join(f"{c.id}  [{c.topic}, {c.kind}, {c.provenance}; {c.source}]  {c.statement}" for c in selected)


def build_parser(parser: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    """The options of ``python -m paper_checks`` / ``steplab check`` (added to ``parser`` when given)."""
    if parser is None:
        parser = argparse.ArgumentParser(prog="python -m paper_checks", description=__doc__,
                                         formatter_class=argparse.RawDescriptionHelpFormatter)
    add_selection_arguments(parser)
    add_budget_argument(parser)
    parser.add_argument("--json", action="store_true",
                        help="print JSON (every check, rival and margin) instead of the table")
    parser.add_argument("--list", action="store_true", help="list the selected claims without running them")
    add_cache_arguments(parser)
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    return parser


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Run the selected claims as ``args`` says; return the exit status."""
    from sims.cache import recompute

    selected = select(args, parser)
    if args.list:
        print(describe(selected))
        return 0
    with recompute(args.fresh):
        outcomes = run_claims(selected, args.budget, use_cache=not args.no_cache, progress=not args.quiet)
    print(to_json(outcomes) if args.json else format_table(outcomes))
    for o in outcomes:
        if o.status == "error":
            print(f"\n{o.claim.id} error:\n{o.error}", file=sys.stderr)
        elif o.status in ("failed", "inconclusive"):
            print(f"\n{o.claim.id} {o.status.upper()}: {o.result.detail}", file=sys.stderr)
    return max(exit_code(outcomes), int(bool(import_errors())))


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    return run(parser.parse_args(argv), parser)


if __name__ == "__main__":
    sys.exit(main())
