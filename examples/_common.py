r"""Shared by the example scripts: the verdict of a claim's typed checks and a plain-text printout.

Each example runs its simulation on the user's parameters and hands the measurements to its claim's
core (the public ``<claim>_checks`` function of the claim's module, which the registered claim calls
on the paper's setup), so the typed checks and rivals are written once; it then asks the registered
claim for the status those checks earn
(:meth:`paper_checks.Claim.status`): ``passed`` when every prediction is accepted and every rival
rejected, ``failed`` when a prediction is rejected, ``inconclusive`` when a rival survives (the
user's parameters cannot tell the claim from that rival).
"""
from __future__ import annotations

import argparse
from typing import Any, Sequence

import numpy as np

from paper_checks import Check, Result, get_claim


def outcome(claim_id: str, checks: Result | Sequence[Check], **extra: Any) -> dict:
    """The dictionary every ``run`` returns: claim, status, the checks and their assessments, plus ``extra``.

    ``checks``: the :class:`~paper_checks.Result` of the claim's core, or its checks.

    ``prediction``/``measurement`` are those of the first check (the claim's central comparison);
    ``rivals`` lists its rivals' assessments (label, value, accepted, margin).
    """
    claim = get_claim(claim_id)
    result = checks if isinstance(checks, Result) else Result(list(checks))
    first = result.checks[0]
    return {"claim": claim_id, "statement": claim.statement, "status": claim.status(result),
            "prediction": first.predicted_value(), "measurement": first.measured_value(),
            "checks": result.checks, "assessments": [c.to_dict() for c in result.checks], **extra}


def _show(x: Any) -> str:
    a = np.asarray(x)
    if a.dtype.kind not in "fc":
        return str(x)
    if a.size == 1:
        return f"{a.reshape(()).item():.6g}"
    return np.array2string(a, precision=6, max_line_width=100)


def report(out: dict) -> str:
    """Plain-text summary of ``out``: per check the prediction beside the measurement, then each rival."""
    lines = [f"claim {out['claim']}: {out['statement']}", ""]
    for c in out["checks"]:
        pred = c.prediction()
        lines += [f"[{c.kind}] {c.quantity}",
                  f"  predicted (theory):    {_show(c.predicted_value())}",
                  f"  measured (simulation): {_show(c.measured_value())}",
                  f"  tolerance: {c.tolerance_text()}  -- {c.why}",
                  f"  prediction {'ACCEPTED' if pred.accepted else 'REJECTED'}: {pred.text}"]
        for r in c.rival_assessments():
            lines.append(f"  rival {'accepted' if r.accepted else 'rejected'}: {r.label}: {r.text}")
        lines.append("")
    lines.append(f"status on your parameters: {out['status']}")
    return "\n".join(lines)


def floats(text: str) -> list[float]:
    """argparse type: a comma-separated list of numbers, e.g. ``"0.5,1,2"``."""
    try:
        return [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text!r}") from None


def matrix(text: str) -> list[list[float]]:
    """argparse type: rows separated by ``;``, entries by ``,``, e.g. ``"1,0;0,2"``."""
    try:
        return [[float(v) for v in row.split(",")] for row in text.split(";") if row.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected rows 'a,b;c,d' of numbers, got {text!r}") from None
