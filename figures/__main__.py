"""``python -m figures [--fresh] [--topic T] [--budget B] [--out DIR]``: every figure plus the report."""
from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from pathlib import Path

import figures
from figures._report import write_html, write_markdown
from paper_checks import BUDGETS, as_budget, claims, exit_code, run_claims, topics
from sims.cache import recompute


def topic_modules() -> list[str]:
    return [m.name for m in pkgutil.iter_modules(figures.__path__) if not m.name.startswith("_")]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m figures", description=__doc__)
    parser.add_argument("--fresh", action="store_true", help="recompute cached experiments and claim results")
    parser.add_argument("--topic", help="only this topic's claims and figures (the report is not rewritten)")
    parser.add_argument("--budget", default="full", choices=BUDGETS,
                        help="quick: the tests' budget; full: the report's budget (default)")
    parser.add_argument("--out", default="figures/out", help="output folder (default figures/out)")
    args = parser.parse_args(argv)
    if args.topic is not None and args.topic not in topics():
        parser.error(f"topic: unknown topic {args.topic!r}; valid: {', '.join(topics())}")
    budget = as_budget(args.budget)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    selected = claims(topic=args.topic)
    print(f"running {len(selected)} claims at budget {budget.name!r} (cached results reused)", flush=True)
    with recompute(args.fresh):
        outcomes = run_claims(selected, budget, use_cache=True, progress=True)
        results = {o.claim.id: o.result for o in outcomes if o.result is not None}
        made: dict[str, list[Path]] = {}
        for name in topic_modules():
            if args.topic and name != args.topic:
                continue
            print(f"drawing figures/{name}.py", flush=True)
            module = importlib.import_module(f"figures.{name}")
            made[name] = module.make(results, out, budget)
    n_fig = sum(len(v) for v in made.values())
    if args.topic:  # a partial run must not overwrite the full report with one topic's claims
        print(f"wrote {n_fig} figure files (report not rewritten for a single topic)")
    else:
        md = write_markdown(outcomes, made, out, budget.name)
        page = write_html(outcomes, made, out, budget.name)
        print(f"wrote {n_fig} figure files, {md} and {page}")
    for o in outcomes:
        if o.status not in ("passed", "refutes paper", "differs from paper"):
            print(f"  {o.status}: {o.claim.id}", file=sys.stderr)
    return exit_code(outcomes)


if __name__ == "__main__":
    sys.exit(main())
