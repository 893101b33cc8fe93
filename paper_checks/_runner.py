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

from paper_checks._checks import format_value
from paper_checks._registry import COARSE, OK_STATUSES, STATUSES, Budget, Claim, Result, as_budget
from sims.cache import cached

__all__ = ["Outcome", "run_claim", "run_claims", "claim_cache_key", "format_table", "to_json", "to_records", "format_number",
           "format_resolution", "discrepancy",
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


def claim_cache_key(claim: Claim, budget: str) -> tuple[str, dict]:
    """The name and configuration under which a claim's result at ``budget`` is cached (also read by dispatch)."""
    return f"claim.{claim.id}.{budget}", {"claim": claim.id, "budget": budget}


def _cached_result(claim: Claim, budget: Budget) -> tuple[Result, bool]:
    computed = []

    def compute() -> dict:
        computed.append(True)
        # the Result holds typed checks (dataclasses of numbers and arrays): stored pickled, read back only
        # from steplab's own results folder under a key that covers the claim layer's source
        result = claim.run(budget)
        return {"result": np.frombuffer(pickle.dumps(result), dtype=np.uint8), "seed": result.seed}

    v = cached(*claim_cache_key(claim, budget.name), compute, topic=claim.scope)
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
    return format_value(x)


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


def format_resolution(value: float | None, absolute: float | None = None) -> str:
    """A resolution as a percentage (``"0.3 %"``); an all-zero prediction's absolute one as ``"± 1e-04 abs"``;
    ``"n/a"`` where neither means anything (discrete outcomes)."""
    if value is None:
        return f"± {format_value(float(absolute))} abs" if absolute is not None and np.isfinite(absolute) else "n/a"
    if value == 0:
        return "0 (rejected)"
    if not np.isfinite(value):
        return "> 1000×"
    return f"{100 * value:.2g} %" if value < 10 else f"{value:.3g}×"


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


TABLE_WIDTH = 120


def format_table(outcomes: list[Outcome], *, wide: bool = False) -> str:
    """Plain-text claims table, one claim per line: id, kind, status, predicted, measured, resolution.

    Each line fits :data:`TABLE_WIDTH` columns (long cells are clipped with "…") and is followed by an
    indented line naming the first rival and its verdict; ``wide=True`` clips nothing.
    """
    header = ("id", "kind", "status", "predicted", "measured", "resolution")
    rows, rivals = [], []
    for o in outcomes:
        r = o.result
        p = r.primary if r else None
        res = o.claim.resolution(r) if r else None
        coarse = bool(r) and o.claim.coarse(r)
        rows.append((
            o.claim.id, o.claim.kind, o.status,
            format_number(p.predicted_value()) if p else "", format_number(p.measured_value()) if p else "",
            format_resolution(res) + (" coarse" if coarse else "") if r else "",
        ))
        rivals.append(_first_rival(r) if r else "")
    widths = [max(len(h), *(len(row[i]) for row in rows)) if rows else len(h) for i, h in enumerate(header)]
    if not wide:
        # the id column keeps its width; predicted and measured share what is left of the line
        fixed = widths[0] + widths[1] + widths[2] + widths[5] + 2 * (len(header) - 1)
        room = max(20, TABLE_WIDTH - fixed)
        widths[3] = min(widths[3], room // 2)
        widths[4] = min(widths[4], room - widths[3])
    line = lambda row: "  ".join(_clip(str(c), w).ljust(w) for c, w in zip(row, widths)).rstrip()  # noqa: E731
    out = [line(header), line(tuple("-" * w for w in widths))]
    for row, rival in zip(rows, rivals):
        out.append(line(row))
        if rival:
            text = f"    rival {rival}"
            out.append(text if wide else _clip(text, TABLE_WIDTH))
    out.append("")
    out.append(", ".join(f"{n} {s}" for s, n in summary_counts(outcomes).items()))
    n_coarse = sum(bool(o.result) and o.claim.coarse(o.result) for o in outcomes)
    if n_coarse:
        out.append(f"{n_coarse} quantitative claim(s) coarser than {100 * COARSE:.0f} % (marked coarse)")
    return "\n".join(out)


def discrepancy(outcome: Outcome) -> str:
    """One sentence stating what a verdict against the paper rests on: the paper's value, steplab's number.

    Empty unless some check's paper value is rejected (``refutes paper`` / ``differs from paper``).
    """
    r = outcome.result
    if r is None:
        return ""
    for c in r.checks:
        pa = c.paper_assessment()
        if pa is None or pa.accepted:
            continue
        return (f"{c.quantity}: the paper says {_value_summary(c.paper)}, steplab measures "
                f"{_value_summary(c.measured_value())} and predicts {_value_summary(c.predicted_value())} "
                f"(the paper's value: {pa.text})")
    return ""


def _value_summary(value) -> str:
    """A value in words short enough for one sentence (arrays as a compact summary, never a shape)."""
    if isinstance(value, str):
        return value
    return format_value(value)


def to_records(outcomes: list[Outcome]) -> list[dict]:
    """One JSON-ready record per claim: metadata, status, the paper's words it rests on (``quote``, ``where``
    and every ``quotes`` pair), the claim's resolution, and every check with its rivals and margins."""
    items = []
    for o in outcomes:
        r = o.result
        quotes = o.claim.paper_quotes(r)
        res = o.claim.resolution(r) if r else None
        items.append({
            "id": o.claim.id, "paper": o.claim.paper.key, "topic": o.claim.topic, "kind": o.claim.kind,
            "provenance": o.claim.provenance, "source": o.claim.source, "statement": o.claim.statement,
            "latex": o.claim.latex, "refutes_paper": o.claim.refutes_paper, "status": o.status,
            "quote": quotes[0][0] if quotes else "", "where": quotes[0][1] if quotes else "",
            "quotes": [{"quote": q, "where": w} for q, w in quotes], "discrepancy": discrepancy(o),
            "resolution": res if res is None or np.isfinite(res) else "inf",
            "coarse": bool(r) and o.claim.coarse(r), "coarse_reason": o.claim.coarse_reason,
            "budget": o.budget, "cached": o.cached,
            "checks": [c.to_dict() for c in r.checks] if r else [],
            "detail": r.detail if r else "", "error": o.error, "seed": r.seed if r else None,
            "wall_s": round(o.wall_s, 3),
        })
    return items


def to_json(outcomes: list[Outcome]) -> str:
    return json.dumps(to_records(outcomes), indent=2, default=str)
