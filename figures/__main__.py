"""``python -m figures [--fresh] [--topic T] [--out DIR]``: every figure plus the report."""
from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from pathlib import Path

import figures
from figures._report import write_html, write_markdown
from paper_checks import claims, run_claims


def topic_modules() -> list[str]:
    return [m.name for m in pkgutil.iter_modules(figures.__path__) if not m.name.startswith("_")]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m figures")
    parser.add_argument("--fresh", action="store_true", help="recompute cached results")
    parser.add_argument("--topic", help="only this topic")
    parser.add_argument("--budget", default="full", choices=("quick", "full"))
    parser.add_argument("--out", default="figures/out")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    selected = claims(topic=args.topic)
    print(f"running {len(selected)} claims at budget {args.budget!r} (cached results reused)", flush=True)
    outcomes = run_claims(selected, args.budget, use_cache=True, fresh=args.fresh, progress=True)
    results = {o.claim.id: o.result for o in outcomes if o.result is not None}

    made: dict[str, list[Path]] = {}
    for name in topic_modules():
        if args.topic and name != args.topic:
            continue
        print(f"  drawing figures/{name}.py", flush=True)
        module = importlib.import_module(f"figures.{name}")
        made[name] = module.make(results, out, budget=args.budget, fresh=args.fresh)
    n_fig = sum(len(v) for v in made.values())
    if args.topic:  # a partial run must not overwrite the full report with one topic's claims
        print(f"wrote {n_fig} figure files (report not rewritten for a single topic)")
    else:
        md = write_markdown(outcomes, made, out, args.budget)
        page = write_html(outcomes, made, out, args.budget)
        print(f"wrote {n_fig} figure files, {md} and {page}")
    bad = [o for o in outcomes if o.status in ("failed", "error")]
    for o in bad:
        print(f"  {o.status}: {o.claim.id}", file=sys.stderr)
    return int(bool(bad))


if __name__ == "__main__":
    sys.exit(main())
