"""Command line: run registered claims and print the verification table."""
from __future__ import annotations

import argparse
import sys

from paper_checks import BUDGETS, claims, format_table, run_claims, to_json


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m paper_checks", description=__doc__)
    parser.add_argument("--paper", help="only this paper key (e.g. meng2024)")
    parser.add_argument("--claim", help="only this claim id")
    parser.add_argument("--topic", help="only this topic (module name, e.g. logistic)")
    parser.add_argument("--budget", choices=BUDGETS, default="full")
    parser.add_argument("--json", action="store_true", help="print JSON instead of the table")
    parser.add_argument("--no-cache", action="store_true", help="do not read or write results/")
    parser.add_argument("--fresh", action="store_true", help="recompute and overwrite cached results")
    args = parser.parse_args(argv)
    try:
        selected = claims(paper=args.paper, claim_id=args.claim, topic=args.topic)
    except ValueError as exc:
        parser.error(str(exc))
    outcomes = run_claims(selected, args.budget, use_cache=not args.no_cache, fresh=args.fresh,
                          progress=not args.json)
    print(to_json(outcomes) if args.json else format_table(outcomes))
    for o in outcomes:
        if o.status == "error":
            print(f"\n{o.claim.id} raised:\n{o.error}", file=sys.stderr)
        elif o.status == "failed":
            print(f"\n{o.claim.id} FAILED: {o.result.detail}", file=sys.stderr)
    return int(any(o.status in ("failed", "error") for o in outcomes))


if __name__ == "__main__":
    sys.exit(main())
