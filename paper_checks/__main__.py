"""Run registered claims and print the verification table (non-zero exit unless every claim is
passed, refutes paper or differs from paper)."""
from __future__ import annotations

import argparse
import sys

from paper_checks import BUDGETS, claims, exit_code, format_table, run_claims, to_json
from sims.cache import recompute


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m paper_checks", description=__doc__)
    parser.add_argument("--paper", help="only this paper key (e.g. meng2024)")
    parser.add_argument("--claim", help="only this claim id")
    parser.add_argument("--topic", help="only this topic (module name, e.g. logistic)")
    parser.add_argument("--budget", choices=BUDGETS, default="full",
                        help="quick: the seconds-scale budget of the tests; full: the report's budget (default)")
    parser.add_argument("--json", action="store_true", help="print JSON (every check, rival and margin) instead of the table")
    parser.add_argument("--list", action="store_true", help="list the selected claims without running them")
    parser.add_argument("--no-cache", action="store_true", help="do not read or write cached claim results")
    parser.add_argument("--fresh", action="store_true", help="recompute and overwrite cached results")
    args = parser.parse_args(argv)
    try:
        selected = claims(paper=args.paper, claim_id=args.claim, topic=args.topic)
    except ValueError as exc:
        parser.error(str(exc))
    if args.list:
        for c in selected:
            print(f"{c.id}  [{c.topic}, {c.kind}, {c.provenance}; {c.source}]  {c.statement}")
        return 0
    with recompute(args.fresh):
        outcomes = run_claims(selected, args.budget, use_cache=not args.no_cache, progress=not args.json)
    print(to_json(outcomes) if args.json else format_table(outcomes))
    for o in outcomes:
        if o.status == "error":
            print(f"\n{o.claim.id} error:\n{o.error}", file=sys.stderr)
        elif o.status in ("failed", "inconclusive"):
            print(f"\n{o.claim.id} {o.status.upper()}: {o.result.detail}", file=sys.stderr)
    return exit_code(outcomes)


if __name__ == "__main__":
    sys.exit(main())
