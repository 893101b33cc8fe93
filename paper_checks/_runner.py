"""Running claims: optional caching of results, the claims table, JSON output."""
from __future__ import annotations

import json
import time
import traceback
from dataclasses import dataclass

import numpy as np

from paper_checks._registry import Claim, Result, check_budget
from sims.cache import cached

__all__ = ["Outcome", "run_claim", "run_claims", "format_table", "to_json", "format_number"]


@dataclass
class Outcome:
    claim: Claim
    result: Result | None
    status: str  # passed | refutes paper | failed | error
    wall_s: float
    error: str = ""


def _cached_result(claim: Claim, budget: str, fresh: bool) -> Result:
    def compute() -> dict:
        r = claim.run(budget)
        values = {f"array.{k}": np.asarray(v) for k, v in r.arrays.items()}
        values.update(predicted=r.predicted, measured=r.measured, tolerance=r.tolerance,
                      passed=r.passed, detail=r.detail, seed=r.seed)
        return values

    v = cached(f"claim.{claim.id}.{budget}", {"claim": claim.id, "budget": budget}, compute, fresh=fresh)
    arrays = {k[len("array."):]: v[k] for k in v if k.startswith("array.")}
    return Result(v["predicted"], v["measured"], v["tolerance"], v["passed"], v["detail"], arrays, v["seed"])


def run_claim(claim: Claim, budget: str, *, use_cache: bool = False, fresh: bool = False) -> Outcome:
    """Run one claim; exceptions become status ``error`` (never abort the whole run)."""
    check_budget(budget)
    start = time.perf_counter()
    try:
        result = _cached_result(claim, budget, fresh) if use_cache else claim.run(budget)
    except Exception:  # noqa: BLE001 - a crashing check is reported, not propagated
        return Outcome(claim, None, "error", time.perf_counter() - start, traceback.format_exc())
    return Outcome(claim, result, claim.status(result), time.perf_counter() - start)


def run_claims(claims: list[Claim], budget: str, *, use_cache: bool = False, fresh: bool = False,
               progress: bool = False) -> list[Outcome]:
    outcomes = []
    for c in claims:
        if progress:
            print(f"  running {c.id} ({budget}) ...", flush=True)
        outcomes.append(run_claim(c, budget, use_cache=use_cache, fresh=fresh))
    return outcomes


def format_number(x: float | str | None) -> str:
    if x is None:
        return ""
    if isinstance(x, str):
        return x
    if isinstance(x, bool):
        return str(x)
    if x == 0 or (1e-3 <= abs(x) < 1e5):
        return f"{x:.6g}"
    return f"{x:.4e}"


def format_table(outcomes: list[Outcome]) -> str:
    """Plain-text claims table: id, kind, provenance, predicted, measured, tolerance, status."""
    header = ("id", "kind", "provenance", "predicted", "measured", "tolerance", "status")
    rows = []
    for o in outcomes:
        r = o.result
        rows.append((
            o.claim.id, o.claim.kind, o.claim.provenance,
            format_number(r.predicted if r else None), format_number(r.measured if r else None),
            format_number(r.tolerance if r else None), o.status,
        ))
    widths = [max(len(h), *(len(row[i]) for row in rows)) if rows else len(h) for i, h in enumerate(header)]
    line = lambda row: "  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip()  # noqa: E731
    out = [line(header), line(tuple("-" * w for w in widths))]
    out += [line(row) for row in rows]
    counts = {s: sum(o.status == s for o in outcomes) for s in ("passed", "refutes paper", "failed", "error")}
    out.append("")
    out.append(", ".join(f"{n} {s}" for s, n in counts.items()))
    return "\n".join(out)


def to_json(outcomes: list[Outcome]) -> str:
    items = []
    for o in outcomes:
        r = o.result
        items.append({
            "id": o.claim.id, "paper": o.claim.paper.key, "topic": o.claim.topic, "kind": o.claim.kind,
            "provenance": o.claim.provenance, "statement": o.claim.statement, "status": o.status,
            "predicted": r.predicted if r else None, "measured": r.measured if r else None,
            "tolerance": r.tolerance if r else None, "detail": r.detail if r else o.error,
            "seed": r.seed if r else None, "wall_s": round(o.wall_s, 3),
        })
    return json.dumps(items, indent=2)
