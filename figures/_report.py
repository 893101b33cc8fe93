r"""The verification report: a self-contained ``report.html`` dashboard and ``report.md`` beside it.

The HTML page needs no network and no other file: figures are embedded once as base64 PNG (and
shown again wherever a claim uses them, by reference, not by copy), and every formula is
rendered here with matplotlib's mathtext into an embedded SVG image. Its first screen holds the
counts per status and a linked list of every claim that is not a plain pass (refutations,
differences from the paper, inconclusive, failed, error); then a per-paper table of contents;
then, per claim (anchor: the claim id), the statement, the formula, each typed check ("paper
says", "steplab predicts", "measured" in separate columns, the tolerance and its reason), the
rivals with the margin by which each was rejected, the source pointer, provenance, seed, budget,
cached or computed, wall time, and the figures of the claim's topic. A footer records the git
revision, the date, the package versions and the device.

``report.md`` carries the same content for reading on a code host (formulas as ``$...$``,
figures as links to the PNG files beside it).
"""
from __future__ import annotations

import base64
import functools
import html
import io
import platform
import re
import struct
import subprocess
import time
import warnings
from importlib import metadata
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from paper_checks import Outcome
from paper_checks._checks import Bound, Check, format_value
from paper_checks._registry import COARSE, STATUSES
from paper_checks._runner import discrepancy, format_resolution, summary_counts

__all__ = ["write_html", "write_markdown", "render_html", "render_markdown", "collect_provenance",
           "render_math", "normalise_latex", "ATTENTION", "STATUS_MEANING"]

#: Statuses listed on the first screen, most urgent first.
ATTENTION = ("failed", "error", "inconclusive", "refutes paper", "differs from paper")

STATUS_MEANING = {
    "passed": "steplab's prediction agrees with its simulation and every rival statement is rejected",
    "refutes paper": "steplab's theory and simulation agree, and the paper's stated value is rejected: "
                     "a finding, reproduced on every run",
    "differs from paper": "steplab's theory and simulation agree, but a number or claim the paper states "
                          "is not reproduced",
    "inconclusive": "the prediction is accepted, but so is a rival: the measurement at this budget cannot "
                    "tell the claim from the rival",
    "failed": "steplab's own prediction disagrees with its own simulation: a bug or a finding to investigate",
    "error": "the check raised, or its result breaks the claim contract (no rival, checks that do not fit "
             "the claim's kind)",
}
PROVENANCE_MEANING = {
    "quoted": "the paper's own statement (abstract, theorem, table)",
    "secondary": "taken from third-party accounts of the paper and re-derived here",
    "derived": "worked out here, because the paper's text was not available",
}
_COLOR = {"passed": "#2e7d32", "refutes paper": "#6a4c93", "differs from paper": "#b26a00",
          "inconclusive": "#5f6368", "failed": "#c62828", "error": "#c62828"}
_PACKAGES = ("steplab", "jax", "jaxlib", "numpy", "scipy", "sympy", "matplotlib", "optax", "diffrax", "tqdm")


# ----------------------------------------------------------------------------------------------
# provenance


def _git(*args: str) -> str:
    root = Path(__file__).resolve().parent.parent
    try:
        out = subprocess.run(["git", *args], capture_output=True, text=True, timeout=5, cwd=root)
        return out.stdout.strip() if out.returncode == 0 else ""
    except (OSError, subprocess.SubprocessError):
        return ""


def collect_provenance(budget: str = "") -> dict[str, str]:
    """Where and with what the report was made: git revision, UTC date, versions, device, cache folder."""
    rev = _git("rev-parse", "--short=12", "HEAD") or "unknown (not a git checkout)"
    if _git("status", "--porcelain", "--untracked-files=no"):
        rev += " (with uncommitted changes)"
    versions = []
    for dist in _PACKAGES:
        try:
            versions.append(f"{dist} {metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            pass
    try:
        import jax

        devices = jax.devices()
        device = f"{len(devices)} × {devices[0].device_kind} ({devices[0].platform})"
    except Exception as exc:  # noqa: BLE001 - a report is still useful without the device line
        device = f"unknown ({type(exc).__name__})"
    try:
        from sims.cache import results_dir

        cache = str(results_dir())
    except Exception:  # noqa: BLE001
        cache = "unknown"
    return {
        "git revision": rev,
        "generated (UTC)": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        "budget": budget,
        "python": f"{platform.python_version()} on {platform.system()} {platform.machine()}",
        "device": device,
        "packages": ", ".join(versions),
        "results cache": cache,
    }


# ----------------------------------------------------------------------------------------------
# formulas: LaTeX -> matplotlib mathtext -> SVG, offline

_ONE_ARG = ("sqrt", "mathcal", "mathrm", "mathbb", "mathbf", "mathit", "mathsf", "text", "hat", "bar", "tilde",
            "vec", "dot", "overline", "operatorname", "boldsymbol")
_TWO_ARGS = ("frac", "tfrac", "dfrac", "binom")
_RENAME = {r"\tfrac": r"\frac", r"\dfrac": r"\frac", r"\le": r"\leq", r"\ge": r"\geq", r"\iff": r"\Leftrightarrow",
           r"\implies": r"\Rightarrow", r"\textrm": r"\mathrm", r"\emph": r"\mathit", r"\lvert": "|",
           r"\rvert": "|", r"\lVert": r"\|", r"\rVert": r"\|", r"\dots": r"\ldots", r"\coloneqq": ":=",
           r"\tag": r"\quad", r"\displaystyle": "", r"\textstyle": "", r"\!": ""}
_SUP_STAR = re.compile(r"\^\s*(?:\\star|\\ast|\{\s*\\(?:star|ast)\s*\})(?![A-Za-z])")
_SIZING = re.compile(r"\\(?:big|Big|bigg|Bigg)[lrm]?(?![A-Za-z])")
_TOKEN = re.compile(r"\\[A-Za-z]+|\\.|\{|\}|[^\\{}]", re.S)


def normalise_latex(tex: str) -> str:
    r"""Rewrite common LaTeX that matplotlib's mathtext does not parse into an equivalent it does.

    ``\tfrac12`` -> ``\frac{1}{2}``, ``\sqrt3`` -> ``\sqrt{3}``, ``{\rm x}`` -> ``\mathrm{x}``,
    ``\le``/``\ge``/``\iff`` -> ``\leq``/``\geq``/``\Leftrightarrow``; ``\big``-style sizing is dropped;
    a superscript star (``w^\star``, the optimum) becomes ``w^{*}``, which mathtext sets tightly.
    """
    tex = _SIZING.sub("", tex)
    tex = _SUP_STAR.sub("^{*}", tex)
    tex = re.sub(r"\{\\rm\s+([^{}]*)\}", r"\\mathrm{\1}", tex)
    tex = re.sub(r"\{\\rm\s*\{([^{}]*)\}\}", r"\\mathrm{\1}", tex)
    tex = re.sub(r"\\rm\s*\{([^{}]*)\}", r"\\mathrm{\1}", tex)
    text, _ = _normalise_tokens(_TOKEN.findall(tex), 0, closing=False)
    return text


def _normalise_tokens(tokens: list[str], i: int, *, closing: bool) -> tuple[str, int]:
    """Normalise ``tokens[i:]`` up to the matching ``}`` (``closing``) or the end; return text and next index."""
    out: list[str] = []
    while i < len(tokens):
        tok = tokens[i]
        i += 1
        if tok == "}" and closing:
            return "".join(out), i
        if tok == "{":
            inner, i = _normalise_tokens(tokens, i, closing=True)
            out.append("{" + inner + "}")
            continue
        out.append(_RENAME.get(tok, tok))
        name = tok[1:] if tok.startswith("\\") else ""
        for _ in range(2 if name in _TWO_ARGS else 1 if name in _ONE_ARG else 0):
            while i < len(tokens) and tokens[i].isspace():
                i += 1
            if i >= len(tokens):
                break
            if tokens[i] == "{":
                inner, i = _normalise_tokens(tokens, i + 1, closing=True)
                out.append("{" + inner + "}")
            else:  # a single-token argument gets braces: \frac18 -> \frac{1}{8}, \sqrt3 -> \sqrt{3}
                out.append("{" + _RENAME.get(tokens[i], tokens[i]) + "}")
                i += 1
    return "".join(out), i


@functools.lru_cache(maxsize=4096)
def render_math(text: str, size: float = 12.0) -> tuple[str, float, float] | None:
    r"""Render mathtext (``"$...$"`` segments, plain text around them allowed) as an SVG document.

    Returns ``(svg, height_pt, depth_pt)`` or None when matplotlib cannot parse the expression (the
    caller then shows the LaTeX source). Glyphs are drawn as paths in Computer Modern, so the
    result needs no font on the reader's machine.
    """
    from matplotlib import rc_context
    from matplotlib.figure import Figure
    from matplotlib.font_manager import FontProperties
    from matplotlib.mathtext import MathTextParser

    prop = FontProperties(size=size, math_fontfamily="cm")
    try:
        with warnings.catch_warnings(), rc_context({"svg.fonttype": "path", "svg.hashsalt": "steplab"}):
            warnings.simplefilter("ignore")
            width, height, depth, _, _ = MathTextParser("path").parse(text, dpi=72, prop=prop)
            if not (width > 0 and height > 0):
                return None
            fig = Figure(figsize=(width / 72, height / 72))
            fig.text(0, depth / height, text, fontproperties=prop)
            buf = io.BytesIO()
            fig.savefig(buf, format="svg", dpi=72, transparent=True, metadata={"Date": None, "Creator": None})
    except Exception:  # noqa: BLE001 - any parse or layout failure falls back to the source text
        return None
    svg = buf.getvalue().decode()
    svg = svg[svg.index("<svg"):]  # drop the XML prolog and doctype: not needed in a data URI
    return svg, float(height), float(depth)


def _math_img(tex: str, *, size: float, css: str, alt: str) -> str:
    rendered = render_math(tex, size)
    if rendered is None:
        return f"<code class='tex-src' title='formula shown as source'>{html.escape(alt)}</code>"
    svg, height, depth = rendered
    data = base64.b64encode(svg.encode()).decode()
    style = f"height:{height:.2f}pt;vertical-align:{-depth:.2f}pt" if css == "inline" else f"height:{height:.2f}pt"
    return f"<img class='tex {css}' style='{style}' alt='{html.escape(alt)}' src='data:image/svg+xml;base64,{data}'>"


_INLINE_MATH = re.compile(r"\$([^$]+)\$")


def _rich(text: str) -> str:
    """HTML for a line of text whose ``$...$`` segments are formulas (rendered inline)."""
    parts, last = [], 0
    for m in _INLINE_MATH.finditer(text):
        parts.append(html.escape(text[last:m.start()]))
        parts.append(_math_img(f"${normalise_latex(m.group(1))}$", size=12.5, css="inline", alt=m.group(0)))
        last = m.end()
    parts.append(html.escape(text[last:]))
    return "".join(parts)


def _display_math(latex: str) -> str:
    # a long formula list ("a,\ b;\ c") renders as one line; mathtext has no line breaking
    return _math_img(f"${normalise_latex(latex)}$", size=15.0, css="display", alt=latex)


# ----------------------------------------------------------------------------------------------
# numbers and cells


def _value_text(value: Any) -> str:
    """A compact display of a number, a short array or a string."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    a = np.asarray(value)
    if a.dtype == object:
        return str(value)
    if a.ndim == 0:
        return format_value(a.item() if a.dtype.kind != "f" else float(a))
    flat = a.ravel()
    items = [_value_text(v) for v in (flat if flat.size <= 6 else [*flat[:3], *flat[-2:]])]
    if flat.size > 6:
        items.insert(3, "…")
    shape = "×".join(str(s) for s in a.shape)
    return f"[{', '.join(items)}]" + (f" ({shape} values)" if flat.size > 6 else "")


def _candidate_text(check: Check, value: Any) -> str:
    """A candidate value (prediction, rival, paper) in the form the check compares it."""
    if isinstance(check, Bound):
        return f"{check.side} {_value_text(value)}"
    return _value_text(value)


def _num(text: str) -> str:
    """A number, never broken across lines; a list of numbers breaks only between its items."""
    if text.startswith("[") and ", " in text:
        return ", ".join(f"<span class='num'>{html.escape(item)}</span>" for item in text.split(", "))
    return f"<span class='num'>{html.escape(text)}</span>"


def _tolerance(text: str) -> str:
    """Tolerance text: each term unbreakable, breaks allowed only between the terms (and before a coverage note)."""
    return "; ".join(" + ".join(_num(part) for part in clause.split(" + ")) for clause in text.split("; "))


def _status_badge(status: str) -> str:
    return f"<span class='badge' style='background:{_COLOR[status]}'>{html.escape(status)}</span>"


def _anchor(claim_id: str) -> str:
    return claim_id


def _fig_anchor(stem: str) -> str:
    return f"fig-{stem}"


def _paper_anchor(key: str) -> str:
    return f"paper-{key}"


def _run_note(o: Outcome) -> str:
    """Budget, seed, cached/computed and wall time of one outcome, in words."""
    parts = [f"budget {o.budget}"]
    if o.result is not None and o.result.seed is not None:
        parts.append(f"seed {o.result.seed}")
    if o.cached:
        meta = None
        try:
            from sims.cache import read_meta

            # the exact entry this outcome was read from, not the newest of that name
            meta = read_meta(f"claim.{o.claim.id}.{o.budget}", {"claim": o.claim.id, "budget": o.budget},
                             topic=o.claim.scope)
        except Exception:  # noqa: BLE001 - the note is informative only
            meta = None
        if meta and "wall_s" in meta:
            parts.append(f"cached (computed in {float(meta['wall_s']):.1f} s on {str(meta.get('written', ''))[:10]}; "
                         f"read in {o.wall_s:.2f} s)")
        else:
            parts.append(f"cached (read in {o.wall_s:.2f} s)")
    else:
        parts.append(f"computed in {o.wall_s:.1f} s")
    return " · ".join(parts)


def _error_text(o: Outcome) -> str:
    lines = [ln for ln in o.error.strip().splitlines() if ln.strip()]
    return "\n".join(lines[-12:])


def _first_line(o: Outcome) -> str:
    if o.result is not None and o.result.detail:
        return o.result.detail
    lines = [ln for ln in o.error.strip().splitlines() if ln.strip()]
    return lines[-1] if lines else ""


def _short(text: str, n: int = 150) -> str:
    """At most ``n`` characters, never cutting a ``$...$`` formula in half."""
    if len(text) <= n:
        return text
    cut = text[: n - 1]
    if cut.count("$") % 2:
        cut = cut[: cut.rindex("$")]
    if " " in cut[n // 2:]:  # end on a whole word
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip(" ,;:") + " …"


def _accusations(outcomes: Sequence[Outcome]) -> list[Outcome]:
    return [o for o in outcomes if o.status in ("refutes paper", "differs from paper")]


def _coarse(outcomes: Sequence[Outcome]) -> list[Outcome]:
    return [o for o in outcomes if o.result is not None and o.claim.coarse(o.result)]


def _quote_html(o: Outcome) -> str:
    """The paper's words a claim rests on, each with its locator (empty when it rests on none)."""
    pairs = o.claim.paper_quotes(o.result)
    return "".join(f"<blockquote class='quote'>“{html.escape(q)}”<cite>{html.escape(w)}</cite></blockquote>"
                   for q, w in pairs)


def _png_size(data: bytes) -> tuple[int, int]:
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG file")
    return struct.unpack(">II", data[16:24])


def _papers(outcomes: Sequence[Outcome]) -> list:
    return list(dict.fromkeys(o.claim.paper for o in outcomes))


def _n_papers(outcomes: Sequence[Outcome]) -> str:
    n = len(_papers(outcomes))
    return f"{n} paper{'s' if n != 1 else ''}"


def _pngs(figures: Mapping[str, Iterable[Path]]) -> dict[str, list[Path]]:
    return {topic: [Path(p) for p in paths if Path(p).suffix == ".png"] for topic, paths in figures.items()}


def _links(outcomes: Sequence[Outcome], pngs: Mapping[str, list[Path]],
           figure_claims: Mapping[str, Sequence[str]]) -> dict[str, list[Path]]:
    """Claim id -> the figures that show it (linked explicitly or by the results they read)."""
    by_stem = {p.stem: p for paths in pngs.values() for p in paths}
    out: dict[str, list[Path]] = {o.claim.id: [] for o in outcomes}
    for stem, ids in figure_claims.items():
        if stem in by_stem:
            for cid in ids:
                if cid in out and by_stem[stem] not in out[cid]:
                    out[cid].append(by_stem[stem])
    return out


# ----------------------------------------------------------------------------------------------
# HTML

_CSS = """
:root{--fg:#1d1d1f;--muted:#5f6368;--line:#dadce0;--bg:#fff;--soft:#f6f7f9}
*{box-sizing:border-box}
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:var(--fg);
  background:var(--bg);max-width:1180px;margin:0 auto;padding:0 18px 40px}
h1{font-size:22px;margin:14px 0 2px}h2{font-size:19px;margin:28px 0 6px}h3{font-size:16px;margin:0 0 4px}
a{color:#1a56b8;text-decoration:none}a:hover{text-decoration:underline}
code,.num{font-family:ui-monospace,"DejaVu Sans Mono",Menlo,monospace;font-size:13px}
.num{white-space:nowrap}
.sub{color:var(--muted);font-size:13px}
.banner{border:1px solid var(--line);border-radius:8px;padding:10px 14px 8px;margin:8px 0 12px;background:var(--soft)}
.counts{display:flex;flex-wrap:wrap;gap:6px;margin:8px 0}
.count{border-radius:6px;padding:3px 10px;color:#fff;font-weight:600;font-size:14px}
.count.zero{background:#e8eaed!important;color:#80868b;font-weight:400}
.count b{font-size:17px;margin-right:4px}
.attention{margin:4px 0 2px;padding:0;list-style:none;font-size:14px}
.attention li{margin:3px 0;line-height:1.35}
.accusations li{margin:8px 0}
blockquote.quote{margin:4px 0 4px 12px;padding:2px 10px;border-left:3px solid #b26a00;font-style:italic;font-size:13px}
blockquote.quote cite{display:block;font-style:normal;color:#5f6368;font-size:12px}
.badge{display:inline-block;border-radius:4px;padding:0 7px;color:#fff;font-size:12px;font-weight:600;
  white-space:nowrap;vertical-align:1px}
.toc{columns:2 380px;column-gap:28px;font-size:14px}
.toc .paper{break-inside:avoid;margin:0 0 10px}
.toc ul{margin:3px 0 0;padding-left:4px;list-style:none}.toc li{margin:1px 0}
.dot{display:inline-block;width:9px;height:9px;border-radius:50%;margin-right:5px}
details.legend{font-size:13.5px;margin:6px 0}details.legend dt{font-weight:600}details.legend dd{margin:0 0 4px 18px}
.paper-head{border-top:3px solid var(--fg);margin-top:34px;padding-top:6px}
.claim{border:1px solid var(--line);border-left:6px solid var(--c);border-radius:6px;padding:10px 14px;margin:14px 0}
.claim:target{box-shadow:0 0 0 3px #fbbc04}
.claim .statement{margin:4px 0 6px}
.claim .meta{color:var(--muted);font-size:13px;margin:2px 0 8px}
.latex{margin:6px 0 10px;overflow-x:auto}
img.tex.display{max-width:none}
table{border-collapse:collapse;font-size:13.5px;margin:6px 0;width:100%}
th,td{border:1px solid var(--line);padding:3px 7px;vertical-align:top;text-align:left}
th{background:var(--soft);font-weight:600;white-space:nowrap}
td.why{color:var(--muted);font-size:12.5px;border-top:none}
tr.check td{border-bottom:none}
.ok{color:#2e7d32;font-weight:600}.bad{color:#c62828;font-weight:600}
.detail{margin:6px 0}.run{color:var(--muted);font-size:13px;margin:4px 0}
pre.error{background:#fdecea;padding:8px;overflow-x:auto;font-size:12px}
code.tex-src{background:var(--soft);padding:2px 4px}
figure{margin:10px 0}figure svg{width:100%;height:auto;max-width:var(--w);display:block}
figcaption{font-size:13px;color:var(--muted)}
.thumbs{display:flex;flex-wrap:wrap;gap:8px;align-items:flex-end;margin:6px 0}
.thumbs a{display:block;font-size:11.5px;color:var(--muted)}
.thumbs svg{display:block;border:1px solid var(--line)}
td.q{min-width:13em}td.verdict{min-width:11em}
.gallery figure{border-top:1px solid var(--line);padding-top:8px}
footer{border-top:1px solid var(--line);margin-top:36px;font-size:13px}
footer dt{font-weight:600;float:left;clear:left;width:130px}footer dd{margin:0 0 3px 140px}
"""


def _figure_defs(pngs: Mapping[str, list[Path]]) -> tuple[str, dict[str, tuple[int, int]]]:
    """One hidden SVG holding every figure once (base64 PNG); figures are then shown by reference."""
    defs, sizes = [], {}
    for paths in pngs.values():
        for p in paths:
            data = p.read_bytes()
            w, h = _png_size(data)
            sizes[p.stem] = (w, h)
            b64 = base64.b64encode(data).decode()
            defs.append(f"<image id='img-{html.escape(p.stem)}' width='{w}' height='{h}' "
                        f"href='data:image/png;base64,{b64}'/>")
    svg = ("<svg width='0' height='0' style='position:absolute' aria-hidden='true'><defs>"
           + "".join(defs) + "</defs></svg>")
    return svg, sizes


def _use(stem: str, sizes: Mapping[str, tuple[int, int]], label: str, height: int | None = None) -> str:
    """Show an embedded figure by reference (at ``height`` pixels, or as wide as its container allows)."""
    w, h = sizes[stem]
    size = f" width='{round(height * w / h)}' height='{height}'" if height else ""
    return (f"<svg viewBox='0 0 {w} {h}'{size} role='img' aria-label='{html.escape(label)}'>"
            f"<use href='#img-{html.escape(stem)}'/></svg>")


def _checks_table(o: Outcome) -> str:
    checks = o.result.checks
    with_paper = any(c.paper is not None for c in checks)
    head = ["check", "quantity"] + (["paper says"] if with_paper else []) + [
        "steplab predicts", "measured", "tolerance", "verdict", "resolution"]
    rows = ["<table class='checks'><tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr>"]
    for c in checks:
        pred = c.prediction()
        cells = [f"<td>{html.escape(c.kind)}</td>", f"<td class='q'>{_rich(c.quantity)}</td>"]
        if with_paper:
            cells.append(f"<td>{_num(_candidate_text(c, c.paper)) if c.paper is not None else ''}</td>")
        cells += [f"<td>{_num(_value_text(c.predicted_value()))}</td>",
                  f"<td>{_num(_value_text(c.measured_value()))}</td>",
                  f"<td>{_tolerance(c.tolerance_text())}</td>",
                  f"<td class='verdict'><span class='{'ok' if pred.accepted else 'bad'}'>"
                  f"{'accepted' if pred.accepted else 'REJECTED'}</span> ({html.escape(pred.text)})</td>",
                  f"<td>{_num(format_resolution(c.resolution(), c.absolute_resolution()))}</td>"]
        rows.append(f"<tr{' class=check' if c.why else ''}>" + "".join(cells) + "</tr>")
        if c.why:
            rows.append(f"<tr><td class='why' colspan='{len(head)}'>why this tolerance: {_rich(c.why)}</td></tr>")
    rows.append("</table>")
    return "".join(rows)


def _rivals_table(o: Outcome) -> str:
    rows = []
    for c in o.result.checks:
        for a in c.rival_assessments():
            verdict = ("<span class='ok'>rejected</span>" if not a.accepted
                       else "<span class='bad'>ACCEPTED (the measurement cannot rule it out)</span>")
            rows.append(f"<tr><td>{_rich(a.label)}</td><td>{_num(_candidate_text(c, a.value))}</td>"
                        f"<td class='q'>{_rich(c.quantity)}</td><td>{verdict}</td><td>{html.escape(a.text)}</td></tr>")
        pa = c.paper_assessment()
        if pa is not None:
            verdict = ("<span class='bad'>rejected by the measurement</span>" if not pa.accepted
                       else "<span class='ok'>reproduced</span>")
            rows.append(f"<tr><td><i>the paper's value</i></td><td>{_num(_candidate_text(c, pa.value))}</td>"
                        f"<td>{_rich(c.quantity)}</td><td>{verdict}</td><td>{html.escape(pa.text)}</td></tr>")
    if not rows:
        return "<p class='bad'>No rival is named for this claim.</p>"
    head = "".join(f"<th>{h}</th>" for h in ("rival statement", "its value", "quantity", "verdict", "margin"))
    return f"<table class='rivals'><tr>{head}</tr>{''.join(rows)}</table>"


def _claim_html(o: Outcome, topic_pngs: list[Path], linked: list[Path], sizes) -> str:
    c = o.claim
    color = _COLOR[o.status]
    parts = [f"<section class='claim' id='{html.escape(_anchor(c.id))}' style='--c:{color}'>",
             f"<h3><a href='#{html.escape(_anchor(c.id))}'><code>{html.escape(c.id)}</code></a> "
             f"{_status_badge(o.status)}</h3>",
             f"<p class='statement'>{_rich(c.statement)}</p>"]
    if c.latex:
        parts.append(f"<div class='latex'>{_display_math(c.latex)}</div>")
    flags = " · refutation registered" if c.refutes_paper else ""
    if o.result is not None:
        res = c.resolution(o.result)
        flags += f" · resolution <b>{html.escape(format_resolution(res))}</b>"
        if c.coarse(o.result):
            flags += " <b class='bad'>coarse</b>" + (f" ({html.escape(c.coarse_reason)})" if c.coarse_reason else "")
    parts.append(f"<p class='meta'>kind <b>{html.escape(c.kind)}</b> · provenance <b>{html.escape(c.provenance)}</b> "
                 f"· source: {html.escape(c.source)} · topic <code>{html.escape(c.topic)}</code>{flags}</p>")
    parts.append(_quote_html(o))
    if o.result is not None:
        parts.append(_checks_table(o))
        parts.append(_rivals_table(o))
        if o.result.detail:
            parts.append(f"<p class='detail'>{_rich(o.result.detail)}</p>")
    if o.error:
        parts.append(f"<pre class='error'>{html.escape(_error_text(o))}</pre>")
    parts.append(f"<p class='run'>{html.escape(_run_note(o))}</p>")
    if linked:
        for p in linked:
            w = sizes[p.stem][0]
            parts.append(f"<figure style='--w:{min(w, 760)}px'>{_use(p.stem, sizes, p.stem)}"
                         f"<figcaption><a href='#{_fig_anchor(p.stem)}'>{html.escape(p.stem)}</a></figcaption></figure>")
    elif topic_pngs:
        thumbs = "".join(f"<a href='#{_fig_anchor(p.stem)}'>{_use(p.stem, sizes, p.stem, height=96)}"
                         f"{html.escape(p.stem)}</a>"
                         for p in topic_pngs)
        parts.append(f"<div class='sub'>Figures of topic <code>{html.escape(c.topic)}</code>:</div>"
                     f"<div class='thumbs'>{thumbs}</div>")
    parts.append("</section>")
    return "".join(parts)


def render_html(outcomes: Sequence[Outcome], figures: Mapping[str, Iterable[Path]], budget: str, *,
                figure_claims: Mapping[str, Sequence[str]] | None = None,
                provenance: Mapping[str, str] | None = None, title: str = "steplab verification report",
                notes: Sequence[str] = ()) -> str:
    """The report page as one HTML string (see the module docstring). ``notes``: extra lines for the banner."""
    e = html.escape
    pngs = _pngs(figures)
    links = _links(outcomes, pngs, figure_claims or {})
    prov = dict(collect_provenance(budget) if provenance is None else provenance)
    counts = summary_counts(list(outcomes))
    defs, sizes = _figure_defs(pngs)

    parts = ["<!doctype html><html lang='en'><head><meta charset='utf-8'>",
             "<meta name='viewport' content='width=device-width,initial-scale=1'>",
             f"<title>{e(title)}</title><style>{_CSS}</style></head><body>", defs]

    # first screen: counts and every claim that is not a plain pass
    attention = [o for s in ATTENTION for o in outcomes if o.status == s]
    chips = "".join(
        f"<span class='count{'' if counts[s] else ' zero'}' style='background:{_COLOR[s]}' "
        f"title='{e(STATUS_MEANING[s])}'><b>{counts[s]}</b>{e(s)}</span>" for s in STATUSES)
    parts += ["<header class='banner' id='summary'>",
              f"<h1>{e(title)}</h1>",
              f"<div class='sub'>{len(outcomes)} claims from {_n_papers(outcomes)} · budget "
              f"<b>{e(budget)}</b> · git {e(prov.get('git revision', '?'))} · {e(prov.get('generated (UTC)', ''))} UTC</div>",
              f"<div class='counts'>{chips}</div>"]
    parts += [f"<div class='sub'>{e(n)}</div>" for n in notes]
    accused = _accusations(outcomes)
    if accused:
        # a verdict against a paper leads the page, with the paper's words, so a reader can check it in a minute
        items = "".join(
            f"<li>{_status_badge(o.status)} <a href='#{e(_anchor(o.claim.id))}'><code>{e(o.claim.id)}</code></a>"
            f"<div>{_rich(discrepancy(o))}</div>{_quote_html(o)}</li>" for o in accused)
        parts.append(f"<h2>Verdicts against a paper</h2><ul class='attention accusations'>{items}</ul>")
    others = [o for o in attention if o not in accused]
    if others:
        items = "".join(
            f"<li>{_status_badge(o.status)} <a href='#{e(_anchor(o.claim.id))}'><code>{e(o.claim.id)}</code></a> "
            f"— {_rich(_short(_first_line(o), 160))}</li>" for o in others)
        parts.append(f"<ul class='attention'>{items}</ul>")
    if not attention:
        parts.append("<p class='attention'>Every claim passed: each prediction accepted, each rival rejected.</p>")
    coarse = _coarse(outcomes)
    if coarse:
        items = ", ".join(f"<a href='#{e(_anchor(o.claim.id))}'><code>{e(o.claim.id)}</code></a> "
                          f"({e(format_resolution(o.claim.resolution(o.result)))})" for o in coarse)
        parts.append(f"<div class='sub'><b>{len(coarse)} coarse</b> quantitative claim(s), resolution above "
                     f"{100 * COARSE:.0f} %: {items}</div>")
    parts.append("</header>")

    # legend and contents
    legend = "".join(f"<dt>{_status_badge(s)}</dt><dd>{e(STATUS_MEANING[s])}</dd>" for s in STATUSES)
    legend += "".join(f"<dt>{e(k)}</dt><dd>{e(v)}</dd>" for k, v in PROVENANCE_MEANING.items())
    parts.append("<details class='legend'><summary>How to read this report</summary><p>Every claim pairs a "
                 "prediction (a closed form or symbolic derivation in <code>theory/</code>) with an independent "
                 "measurement (a JAX simulation in <code>sims/</code>) through typed checks. Each check also "
                 "evaluates <i>rivals</i> — the most plausible wrong statements — on the same measurement; a claim "
                 "passes only when its prediction is accepted and every rival rejected. Statuses and provenance:"
                 f"</p><dl>{legend}</dl></details>")
    toc = []
    for paper in _papers(outcomes):
        mine = [o for o in outcomes if o.claim.paper == paper]
        pc = summary_counts(mine)
        tally = ", ".join(f"{n} {s}" for s, n in pc.items() if n)
        items = "".join(f"<li><span class='dot' style='background:{_COLOR[o.status]}' title='{e(o.status)}'></span>"
                        f"<a href='#{e(_anchor(o.claim.id))}'>{e(o.claim.id.split('.', 1)[1])}</a></li>" for o in mine)
        toc.append(f"<div class='paper'><a href='#{_paper_anchor(paper.key)}'><b>{e(paper.title)}</b></a> "
                   f"<span class='sub'>({e(paper.key)}; {e(tally)})</span><ul>{items}</ul></div>")
    parts.append(f"<h2 id='contents'>Contents</h2><nav class='toc'>{''.join(toc)}</nav>")

    # per paper: claims, then every figure of its topics
    for paper in _papers(outcomes):
        mine = [o for o in outcomes if o.claim.paper == paper]
        topics = list(dict.fromkeys(o.claim.topic for o in mine))
        where = (f"<a href='https://arxiv.org/abs/{e(paper.arxiv)}'>arXiv:{e(paper.arxiv)}</a>" if paper.arxiv
                 else e(paper.venue or ""))
        pc = summary_counts(mine)
        parts += [f"<div class='paper-head' id='{_paper_anchor(paper.key)}'><h2>{e(paper.title)}</h2>",
                  f"<div class='sub'>{e(paper.authors)} ({paper.year}) · {where} · key <code>{e(paper.key)}</code> · "
                  f"topic {', '.join(f'<code>{e(t)}</code>' for t in topics)} · "
                  f"{e(', '.join(f'{n} {s}' for s, n in pc.items() if n))}</div></div>"]
        for o in mine:
            parts.append(_claim_html(o, pngs.get(o.claim.topic, []), links.get(o.claim.id, []), sizes))
        gallery = [p for t in topics for p in pngs.get(t, [])]
        if gallery:
            parts.append("<div class='gallery'><h3>Figures</h3>")
            for p in gallery:
                shows = [cid for cid, ps in links.items() if p in ps]
                caption = e(p.stem) + (" — shows " + ", ".join(
                    f"<a href='#{e(_anchor(cid))}'><code>{e(cid)}</code></a>" for cid in shows) if shows else "")
                parts.append(f"<figure id='{_fig_anchor(p.stem)}' style='--w:{min(sizes[p.stem][0], 1100)}px'>"
                             f"{_use(p.stem, sizes, p.stem)}<figcaption>{caption}</figcaption></figure>")
            parts.append("</div>")

    # figures of topics without claims in this report (e.g. a topic whose claims all errored on import)
    covered = {o.claim.topic for o in outcomes}
    orphans = [p for t, ps in pngs.items() if t not in covered for p in ps]
    if orphans:
        parts.append("<div class='gallery'><h2>Other figures</h2>")
        parts += [f"<figure id='{_fig_anchor(p.stem)}' style='--w:{min(sizes[p.stem][0], 1100)}px'>"
                  f"{_use(p.stem, sizes, p.stem)}<figcaption>{e(p.stem)}</figcaption></figure>" for p in orphans]
        parts.append("</div>")

    rows = "".join(f"<dt>{e(k)}</dt><dd>{e(str(v))}</dd>" for k, v in prov.items())
    parts.append(f"<footer id='provenance'><h2>Provenance</h2><dl>{rows}</dl></footer></body></html>")
    return "\n".join(parts) + "\n"


def write_html(outcomes: Sequence[Outcome], figures: Mapping[str, Iterable[Path]], out: Path | str, budget: str,
               *, figure_claims: Mapping[str, Sequence[str]] | None = None,
               provenance: Mapping[str, str] | None = None, name: str = "report", notes: Sequence[str] = ()) -> Path:
    """Write ``out/<name>.html`` (self-contained) and return its path."""
    from sims.cache import write_atomic

    path = Path(out) / f"{name}.html"
    # atomic: an interrupted or crashing run never leaves half a report under the final name
    write_atomic(path, render_html(outcomes, figures, budget, figure_claims=figure_claims, provenance=provenance,
                                   notes=notes).encode("utf-8"))
    return path


# ----------------------------------------------------------------------------------------------
# Markdown


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _md_code(text: str) -> str:
    return f"`{text}`" if text else ""


def render_markdown(outcomes: Sequence[Outcome], figures: Mapping[str, Iterable[Path]], budget: str, *,
                    figure_claims: Mapping[str, Sequence[str]] | None = None,
                    provenance: Mapping[str, str] | None = None, title: str = "steplab verification report",
                    notes: Sequence[str] = ()) -> str:
    """The report as Markdown, with the same content and anchors as :func:`render_html`."""
    pngs = _pngs(figures)
    links = _links(outcomes, pngs, figure_claims or {})
    prov = dict(collect_provenance(budget) if provenance is None else provenance)
    counts = summary_counts(list(outcomes))
    lines = [f"# {title}", "",
             f"{len(outcomes)} claims from {_n_papers(outcomes)} · budget `{budget}` · "
             f"git {prov.get('git revision', '?')} · {prov.get('generated (UTC)', '')} UTC", "",
             "**Summary:** " + " · ".join(f"{n} {s}" for s, n in counts.items()), ""]
    lines += [f"{n}" for n in notes] + ([""] if notes else [])
    attention = [o for s in ATTENTION for o in outcomes if o.status == s]
    accused = _accusations(outcomes)
    if accused:
        lines += ["**Verdicts against a paper:**", ""]
        for o in accused:
            lines.append(f"- **{o.status}** [`{o.claim.id}`](#{_anchor(o.claim.id)}) — {discrepancy(o)}")
            lines += [f"  > “{q}” — {w}" for q, w in o.claim.paper_quotes(o.result)]
        lines.append("")
    others = [o for o in attention if o not in accused]
    if others:
        lines += ["**Not a plain pass:**", ""]
        lines += [f"- **{o.status}** [`{o.claim.id}`](#{_anchor(o.claim.id)}) — {_short(_first_line(o), 160)}"
                  for o in others]
    if not attention:
        lines.append("Every claim passed: each prediction accepted, each rival rejected.")
    coarse = _coarse(outcomes)
    if coarse:
        lines += ["", f"**{len(coarse)} coarse** quantitative claim(s), resolution above {100 * COARSE:.0f} %: "
                  + ", ".join(f"[`{o.claim.id}`](#{_anchor(o.claim.id)}) "
                              f"({format_resolution(o.claim.resolution(o.result))})" for o in coarse)]
    lines += ["", "Statuses: " + "; ".join(f"**{s}**: {m}" for s, m in STATUS_MEANING.items()) + ".",
              "Provenance: " + "; ".join(f"`{k}`: {v}" for k, v in PROVENANCE_MEANING.items()) + ".", "",
              "## Contents", ""]
    for paper in _papers(outcomes):
        mine = [o for o in outcomes if o.claim.paper == paper]
        tally = ", ".join(f"{n} {s}" for s, n in summary_counts(mine).items() if n)
        lines.append(f"- [{paper.title}](#{_paper_anchor(paper.key)}) (`{paper.key}`; {tally})")
        lines += [f"  - [`{o.claim.id}`](#{_anchor(o.claim.id)}) {o.status}" for o in mine]
    for paper in _papers(outcomes):
        mine = [o for o in outcomes if o.claim.paper == paper]
        topics = list(dict.fromkeys(o.claim.topic for o in mine))
        lines += ["", f'<a id="{_paper_anchor(paper.key)}"></a>', "", f"## {paper.title}", "", paper.cite(), ""]
        for o in mine:
            c = o.claim
            lines += [f'<a id="{_anchor(c.id)}"></a>', "", f"### `{c.id}` — {o.status}", "", c.statement, ""]
            if c.latex:
                lines += ["$$", c.latex, "$$", ""]
            res_note = ""
            if o.result is not None:
                res_note = f" · resolution **{format_resolution(c.resolution(o.result))}**" + (
                    " **coarse**" + (f" ({c.coarse_reason})" if c.coarse_reason else "") if c.coarse(o.result) else "")
            lines += [f"kind **{c.kind}** · provenance **{c.provenance}** · source: {c.source} · topic `{c.topic}`"
                      + (" · refutation registered" if c.refutes_paper else "") + res_note, ""]
            lines += [f"> “{q}” — {w}" for q, w in c.paper_quotes(o.result)] + (
                [""] if c.paper_quotes(o.result) else [])
            if o.result is not None:
                checks = o.result.checks
                with_paper = any(k.paper is not None for k in checks)
                head = ["check", "quantity"] + (["paper says"] if with_paper else []) + [
                    "steplab predicts", "measured", "tolerance", "verdict", "resolution"]
                lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
                for k in checks:
                    pred = k.prediction()
                    row = [k.kind, _md_cell(k.quantity)]
                    if with_paper:
                        row.append(_md_code(_md_cell(_candidate_text(k, k.paper))) if k.paper is not None else "")
                    row += [_md_code(_md_cell(_value_text(k.predicted_value()))),
                            _md_code(_md_cell(_value_text(k.measured_value()))),
                            _md_code(_md_cell(k.tolerance_text())),
                            f"{'accepted' if pred.accepted else '**REJECTED**'} ({_md_cell(pred.text)})",
                            format_resolution(k.resolution(), k.absolute_resolution())]
                    lines.append("| " + " | ".join(row) + " |")
                lines.append("")
                lines += [f"- why this tolerance ({k.quantity}): {k.why}" for k in checks if k.why]
                for k in checks:
                    for a in k.rival_assessments():
                        lines.append(f"- rival: {a.label} = `{_candidate_text(k, a.value)}` — "
                                     f"{'rejected' if not a.accepted else '**ACCEPTED**'} ({a.text})")
                    pa = k.paper_assessment()
                    if pa is not None:
                        lines.append(f"- the paper's value `{_candidate_text(k, pa.value)}` — "
                                     f"{'**rejected by the measurement**' if not pa.accepted else 'reproduced'} ({pa.text})")
                lines.append("")
                if o.result.detail:
                    lines += [o.result.detail, ""]
            if o.error:
                lines += ["```", _error_text(o), "```", ""]
            lines += [f"_{_run_note(o)}_", ""]
            shown = links.get(c.id, [])
            if shown:
                lines += [f"![{p.stem}]({p.name})" for p in shown] + [""]
            elif pngs.get(c.topic):
                lines += ["Figures of the topic: " + ", ".join(f"[{p.stem}](#{_fig_anchor(p.stem)})"
                                                              for p in pngs[c.topic]), ""]
        gallery = [p for t in topics for p in pngs.get(t, [])]
        if gallery:
            lines += ["### Figures", ""]
            for p in gallery:
                lines += [f'<a id="{_fig_anchor(p.stem)}"></a>', "", f"![{p.stem}]({p.name})", "", f"*{p.stem}*", ""]
    covered = {o.claim.topic for o in outcomes}
    orphans = [p for t, ps in pngs.items() if t not in covered for p in ps]
    if orphans:
        lines += ["## Other figures", ""]
        for p in orphans:
            lines += [f'<a id="{_fig_anchor(p.stem)}"></a>', "", f"![{p.stem}]({p.name})", ""]
    lines += ["## Provenance", ""] + [f"- **{k}**: {v}" for k, v in prov.items()]
    return "\n".join(lines) + "\n"


def write_markdown(outcomes: Sequence[Outcome], figures: Mapping[str, Iterable[Path]], out: Path | str, budget: str,
                   *, figure_claims: Mapping[str, Sequence[str]] | None = None,
                   provenance: Mapping[str, str] | None = None, name: str = "report",
                   notes: Sequence[str] = ()) -> Path:
    """Write ``out/<name>.md`` and return its path."""
    from sims.cache import write_atomic

    path = Path(out) / f"{name}.md"
    write_atomic(path, render_markdown(outcomes, figures, budget, figure_claims=figure_claims,
                                       provenance=provenance, notes=notes).encode("utf-8"))
    return path
