"""The verification report: ``report.md`` and ``report.html`` listing every claim and embedding figures."""
from __future__ import annotations

import html
from pathlib import Path

from paper_checks import Outcome
from paper_checks._runner import format_number, summary_counts

_STATUS_COLOR = {"passed": "#2e7d32", "refutes paper": "#8d6cab", "differs from paper": "#b26a00",
                 "inconclusive": "#6d6d6d", "failed": "#c62828", "error": "#c62828"}

_PREAMBLE = (
    "Every claim pairs a prediction (sympy / closed form in `theory/`) with an independent "
    "measurement (JAX simulation in `sims/`). **passed**: they agree within the stated tolerance. "
    "**refutes paper**: the check reproduces a refutation of the paper's statement (a result). "
    "**failed**: steplab's own prediction disagrees with its own simulation. Provenance: "
    "`quoted` = the paper's own statement; `secondary` = from third-party notes, re-derived here; "
    "`derived` = worked out here because the paper text was not available."
)


def _row_cells(o: Outcome) -> list[str]:
    p = o.result.primary if o.result else None
    return [o.claim.id, o.claim.kind, o.claim.provenance,
            format_number(p.predicted_value()) if p else "", format_number(p.measured_value()) if p else "",
            p.tolerance_text() if p else "", o.status]


def write_markdown(outcomes: list[Outcome], figures: dict[str, list[Path]], out: Path, budget: str) -> Path:
    lines = ["# steplab verification report", "", f"Budget: `{budget}`.", "", _PREAMBLE, ""]
    counts = summary_counts(outcomes)
    lines += ["Summary: " + ", ".join(f"{n} {s}" for s, n in counts.items()), ""]
    for paper in dict.fromkeys(o.claim.paper for o in outcomes):
        mine = [o for o in outcomes if o.claim.paper == paper]
        lines += [f"## {paper.title}", "", paper.cite(), ""]
        lines += ["| id | kind | provenance | predicted | measured | tolerance | status |",
                  "|---|---|---|---|---|---|---|"]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in _row_cells(o)) + " |" for o in mine]
        lines.append("")
        for o in mine:
            lines.append(f"- **{o.claim.id}** — {o.claim.statement}")
            if o.claim.latex:
                lines.append(f"  - $ {o.claim.latex} $")
            detail = o.result.detail if o.result else o.error.strip().splitlines()[-1]
            lines.append(f"  - {o.status}: {detail}" + (f" (seed {o.result.seed})" if o.result and o.result.seed is not None else ""))
        lines.append("")
        for topic in dict.fromkeys(o.claim.topic for o in mine):
            for path in figures.get(topic, []):
                if path.suffix == ".png":
                    lines += [f"![{path.stem}]({path.name})", ""]
    path = Path(out) / "report.md"
    path.write_text("\n".join(lines) + "\n")
    return path


def write_html(outcomes: list[Outcome], figures: dict[str, list[Path]], out: Path, budget: str) -> Path:
    e = html.escape
    parts = ["<!doctype html><html><head><meta charset='utf-8'><title>steplab report</title>",
             "<style>body{font-family:sans-serif;max-width:1100px;margin:auto;padding:1em}"
             "table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:3px 6px}"
             "td.num{text-align:right;font-family:monospace}img{max-width:100%}</style></head><body>",
             "<h1>steplab verification report</h1>", f"<p>Budget: <code>{e(budget)}</code>.</p>",
             f"<p>{e(_PREAMBLE)}</p>"]
    for paper in dict.fromkeys(o.claim.paper for o in outcomes):
        mine = [o for o in outcomes if o.claim.paper == paper]
        parts += [f"<h2>{e(paper.title)}</h2>", f"<p>{e(paper.cite())}</p>", "<table><tr>"]
        parts += [f"<th>{h}</th>" for h in ("id", "kind", "provenance", "predicted", "measured", "tolerance", "status", "detail")]
        parts.append("</tr>")
        for o in mine:
            cells = _row_cells(o)
            detail = o.result.detail if o.result else o.error.strip().splitlines()[-1]
            color = _STATUS_COLOR[o.status]
            parts.append("<tr>" + "".join(
                f"<td class='num'>{e(c)}</td>" if 3 <= i <= 5 else f"<td>{e(c)}</td>" for i, c in enumerate(cells[:-1]))
                + f"<td style='color:{color};font-weight:bold'>{e(cells[-1])}</td><td>{e(detail)}</td></tr>")
        parts.append("</table><ul>")
        parts += [f"<li><b>{e(o.claim.id)}</b>: {e(o.claim.statement)}</li>" for o in mine]
        parts.append("</ul>")
        for topic in dict.fromkeys(o.claim.topic for o in mine):
            for path in figures.get(topic, []):
                if path.suffix == ".png":
                    parts.append(f"<figure><img src='{e(path.name)}' alt='{e(path.stem)}'><figcaption>{e(path.stem)}</figcaption></figure>")
    parts.append("</body></html>")
    path = Path(out) / "report.html"
    path.write_text("\n".join(parts) + "\n")
    return path
