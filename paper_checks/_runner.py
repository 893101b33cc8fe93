"""Running claims: the verdict of each, optional caching of results, the claims table, JSON output."""
from __future__ import annotations

import json
import pickle
import sys
import time
import traceback
from dataclasses import dataclass
from typing import Callable

import numpy as np

from paper_checks._checks import _fmt
from paper_checks._registry import OK_STATUSES, STATUSES, Budget, Claim, Result, as_budget
from sims.cache import cached

__all__ = ["Outcome", "run_claim", "run_claims", "format_table", "to_json", "to_records", "format_number",
           "summary_counts", "exit_code"]


@dataclass
class Outcome:
    """A claim run at a budget: its result (None on error), status, why (for error/contract), timing."""

    claim: Claim
    result: Result | None
    status: str
    wall_s: float
    error: str = ""
    budget: str = "quick"
    cached: bool = False


def _cached_result(claim: Claim, budget: Budget) -> tuple[Result, bool]:
    computed = []

    def compute() -> dict:
        computed.append(True)
        # the Result holds typed checks (dataclasses of numbers and arrays): stored pickled, read back only
        # from steplab's own results folder under a key that covers the claim layer's source
        return {"result": np.frombuffer(pickle.dumps(claim.run(budget)), dtype=np.uint8)}

    v = cached(f"claim.{claim.id}.{budget.name}", {"claim": claim.id, "budget": budget.name}, compute,
               topic=claim.scope)
    return pickle.loads(np.asarray(v["result"]).tobytes()), not computed


def run_claim(claim: Claim, budget: "Budget | str", *, use_cache: bool = False) -> Outcome:
    """Run one claim; exceptions become status ``error`` (never abort the whole run)."""
    b = as_budget(budget)
    start = time.perf_counter()
    try:
        result, hit = _cached_result(claim, b) if use_cache else (claim.run(b), False)
    except Exception:  # noqa: BLE001 - a crashing check is reported, not propagated
        return Outcome(claim, None, "error", time.perf_counter() - start, traceback.format_exc(), b.name)
    status = claim.status(result)
    error = claim.contract_error(result) if status == "error" else ""
    return Outcome(claim, result, status, time.perf_counter() - start, error, b.name, hit)


class _ClaimProgress:
    """Progress over a list of claims on ``stream``: ``[k/N] id … 12.3 s (cached) status``.

    On a terminal a tqdm bar over the claims (with the running claim's id and an ETA) sits below
    one finished line per claim. Elsewhere (CI logs, pipes) every update is one whole line: the
    finished line with the bar's counts and ETA appended, and a ``… running`` line for a claim
    still busy after ``notice_s`` seconds, so a long claim is never silent.
    """

    def __init__(self, n: int, stream, notice_s: float = 10.0):
        from tqdm import tqdm

        self.n, self.stream, self.notice_s = n, stream, notice_s
        self.tty = bool(getattr(stream, "isatty", lambda: False)())
        self.start_time = time.perf_counter()
        self._timer = None
        self._format_meter = tqdm.format_meter
        self.bar = (tqdm(total=n, unit="claim", file=stream, dynamic_ncols=True, leave=False,
                         bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} claims [{elapsed}<{remaining}]{postfix}")
                    if self.tty else None)

    def _line(self, text: str) -> None:
        if self.bar is not None:
            self.bar.write(text, file=self.stream)
        else:
            print(text, file=self.stream, flush=True)

    def start(self, k: int, claim_id: str) -> None:
        if self.bar is not None:
            self.bar.set_postfix_str(claim_id, refresh=True)
            return
        import threading

        self._timer = threading.Timer(self.notice_s, self._line, (f"[{k}/{self.n}] {claim_id} … running",))
        self._timer.daemon = True
        self._timer.start()

    def done(self, k: int, outcome: "Outcome") -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        text = (f"[{k}/{self.n}] {outcome.claim.id} … {outcome.wall_s:.1f} s"
                f"{' (cached)' if outcome.cached else ''} {outcome.status}")
        if self.bar is not None:
            self._line(text)
            self.bar.update(1)
        else:
            meter = self._format_meter(k, self.n, time.perf_counter() - self.start_time, unit="claim",
                                       bar_format="{percentage:3.0f}% [{elapsed}<{remaining}]")
            self._line(f"{text}  {meter}")

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        if self.bar is not None:
            self.bar.close()


def run_claims(claims: list[Claim], budget: "Budget | str", *, use_cache: bool = False,
               progress: bool = False, on_done: Callable[[int, int, Outcome], None] | None = None,
               stream=None) -> list[Outcome]:
    """Run claims in order.

    With ``progress``, report on ``stream`` (default stderr) one line per claim,
    ``[k/N] id … 12.3 s (cached) status``, under a tqdm bar on a terminal, with counts and an ETA
    appended elsewhere (see :class:`_ClaimProgress`). ``on_done(k, N, outcome)`` is called after each claim.
    """
    outcomes = []
    n = len(claims)
    bar = _ClaimProgress(n, sys.stderr if stream is None else stream) if progress else None
    try:
        for k, c in enumerate(claims, 1):
            if bar is not None:
                bar.start(k, c.id)
            o = run_claim(c, budget, use_cache=use_cache)
            outcomes.append(o)
            if bar is not None:
                bar.done(k, o)
            if on_done is not None:
                on_done(k, n, o)
    finally:
        if bar is not None:
            bar.close()
    return outcomes


def format_number(x) -> str:
    if x is None:
        return ""
    return _fmt(x)


def summary_counts(outcomes: list[Outcome]) -> dict[str, int]:
    return {s: sum(o.status == s for o in outcomes) for s in STATUSES}


def exit_code(outcomes: list[Outcome]) -> int:
    """0 only if every claim is passed, refutes paper or differs from paper."""
    return int(any(o.status not in OK_STATUSES for o in outcomes))


def _first_rival(r: Result) -> str:
    for c in r.checks:
        for a in c.rival_assessments():
            return f"{a.label}: {'REJECTED' if not a.accepted else 'accepted'} ({a.text})"
    return ""


def format_table(outcomes: list[Outcome]) -> str:
    """Plain-text claims table: id, kind, predicted, measured, tolerance, status, first rival."""
    header = ("id", "kind", "predicted", "measured", "tolerance", "status", "rival")
    rows = []
    for o in outcomes:
        r = o.result
        p = r.primary if r else None
        rows.append((
            o.claim.id, o.claim.kind,
            format_number(p.predicted_value()) if p else "", format_number(p.measured_value()) if p else "",
            p.tolerance_text() if p else "", o.status, _first_rival(r) if r else "",
        ))
    widths = [max(len(h), *(len(row[i]) for row in rows)) if rows else len(h) for i, h in enumerate(header)]
    line = lambda row: "  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip()  # noqa: E731
    out = [line(header), line(tuple("-" * w for w in widths))]
    out += [line(row) for row in rows]
    out.append("")
    out.append(", ".join(f"{n} {s}" for s, n in summary_counts(outcomes).items()))
    return "\n".join(out)


def to_records(outcomes: list[Outcome]) -> list[dict]:
    """One JSON-ready record per claim: metadata, status, and every check with its rivals and margins."""
    items = []
    for o in outcomes:
        r = o.result
        items.append({
            "id": o.claim.id, "paper": o.claim.paper.key, "topic": o.claim.topic, "kind": o.claim.kind,
            "provenance": o.claim.provenance, "source": o.claim.source, "statement": o.claim.statement,
            "latex": o.claim.latex, "refutes_paper": o.claim.refutes_paper, "status": o.status,
            "budget": o.budget, "cached": o.cached,
            "checks": [c.to_dict() for c in r.checks] if r else [],
            "detail": r.detail if r else "", "error": o.error, "seed": r.seed if r else None,
            "wall_s": round(o.wall_s, 3),
        })
    return items


def to_json(outcomes: list[Outcome]) -> str:
    return json.dumps(to_records(outcomes), indent=2, default=str)
