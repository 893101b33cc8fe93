"""The report renders from synthetic outcomes: counts, anchors, figures, no external resources."""
from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

from figures import _report, plot
from paper_checks import Bound, Categorical, Count, Exact, Outcome, Paper, Rate, Result, Statistical
from paper_checks._registry import STATUSES, Claim
from paper_checks._runner import summary_counts

PAPER_A = Paper(key="toy2024", title="A toy paper on step sizes", authors="A. Author", year=2024, arxiv="2401.00001")
PAPER_B = Paper(key="other2025", title="Another paper", authors="B. Author", year=2025, venue="a workshop")
PROVENANCE = {"git revision": "abc123", "generated (UTC)": "2026-01-01 00:00", "budget": "quick",
              "device": "1 × cpu (cpu)", "packages": "numpy 2"}


def _check(budget):
    """Synthetic check (never run)."""


def _claim(cid, paper, topic, *, kind="exact", latex="", refutes=False, statement=None):
    return Claim(cid, paper, statement or f"Statement of {cid} with $\\eta\\lambda < 2$.", latex, "derived", kind,
                 "Theorem 1", _check, topic, refutes)


def _outcome(claim, result, *, error="", cached=False):
    status = "error" if result is None else claim.status(result)
    error = error or (claim.contract_error(result) if result is not None and status == "error" else "")
    return Outcome(claim, result, status, 1.25, error, "quick", cached)


def synthetic_outcomes() -> list[Outcome]:
    """One claim per status (two for error), across two papers and two topics."""
    x = np.geomspace(1e-3, 1e-1, 8)
    out = [
        _outcome(_claim("toy2024.threshold", PAPER_A, "toy", latex=r"\eta_c = \tfrac{2}{\lambda},\ \sqrt3 \le 2"),
                 Result([Exact("critical step $\\eta_c\\lambda$", 2.0, 2.0 + 3e-9, rtol=1e-8, rivals={"η_c λ = 1": 1.0},
                               why="bisection to 1e-9 relative"),
                         Count("runs below η_c converge", np.ones(10, bool), rivals={"none converge": False},
                               why="every run must agree")],
                        detail="Bisection on the simulated map.", seed=7), cached=True),
        _outcome(_claim("toy2024.ratio_is_small", PAPER_A, "toy", refutes=True, latex=r"\rho_1/\rho_2 = 1.0"),
                 Result([Exact("radius ratio", 1.0, 1.0 + 1e-6, rtol=1e-4, paper=4000.0, rivals={"ratio 2": 2.0},
                               why="root finder tolerance", quote="the ratio exceeds 4000",
                               where="arXiv:2401.00001, Fig. 3")], detail="The paper's 4000 is off.")),
        _outcome(_claim("toy2024.spread", PAPER_A, "toy", kind="statistical"),
                 Result([Statistical("spread reduction", 1.7, 0.1, 1.7, paper=6.0, rivals={"no reduction": 1.0},
                                     why="4 SE over 64 seeds", quote="the spread drops 6×", where="arXiv:2401.00001, §6")],
                        seed=3)),
        _outcome(_claim("toy2024.slope", PAPER_A, "toy", kind="rate"),
                 Result([Rate("floor slope", x, 3.0 * x ** 2, 2.0, next_order=0.05, rivals={"slope 2.01": 2.01},
                              why="next-order term bounds the bias")])),
        _outcome(_claim("other2025.bound", PAPER_B, "other", kind="bound", latex=r"\|x\| \le 1 \quad \Big(\text{always}\Big)"),
                 Result([Bound("max |x|", [0.5, 3.0], 2.0, rivals={"bound 1": 1.0}, why="exact arithmetic")])),
        _outcome(_claim("other2025.crashes", PAPER_B, "other"), None,
                 error="Traceback (most recent call last):\n  File 'x.py'\nValueError: eta: expected > 0, got -1"),
        _outcome(_claim("other2025.no_rival", PAPER_B, "other", kind="qualitative", latex=r"\unknowncommand{x}"),
                 Result([Categorical("period", np.array([2, 2]), 2)])),
    ]
    return out


class _Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids, self.hrefs, self.uses, self.srcs, self.text = [], [], [], [], []
        self.order = []
        self._skip = 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag in ("style",):
            self._skip += 1
        if "id" in a:
            self.ids.append(a["id"])
            self.order.append(a["id"])
        if tag == "a" and "href" in a:
            self.hrefs.append(a["href"])
        if tag == "use":
            self.uses.append(a["href"])
        if tag in ("img", "script", "link", "image", "iframe"):
            self.srcs.append(a.get("src") or a.get("href") or "")

    handle_startendtag = handle_starttag

    def handle_endtag(self, tag):
        if tag == "style":
            self._skip -= 1

    def handle_data(self, data):
        if not self._skip:
            self.text.append(data)


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    figs = {}
    for topic, names in {"toy": ["toy_threshold", "toy_overview"], "other": ["other_bound"],
                         "ghost": ["ghost_lonely"]}.items():
        figs[topic] = []
        for name in names:
            fig, ax = plot.figure(width=2.5, height=2.0)
            ax.plot([0, 1], [0, 1])
            figs[topic] += plot.save(fig, name, out, layout="ignore")
    outcomes = synthetic_outcomes()
    links = {"toy_threshold": ("toy2024.threshold",)}
    page = _report.write_html(outcomes, figs, out, "quick", figure_claims=links, provenance=PROVENANCE)
    md = _report.write_markdown(outcomes, figs, out, "quick", figure_claims=links, provenance=PROVENANCE)
    return outcomes, figs, page.read_text(), md.read_text()


def test_every_status_is_represented():
    assert {o.status for o in synthetic_outcomes()} == set(STATUSES)


def test_html_banner_counts_match_the_outcomes(rendered):
    outcomes, _, page, _ = rendered
    counts = summary_counts(outcomes)
    banner = page[page.index("id='summary'"):page.index("</header>")]
    for status, n in counts.items():
        assert re.search(rf"<b>{n}</b>{re.escape(status)}</span>", banner), status
    # every claim that is not a plain pass, and every coarse one, is linked from the banner, and nothing else is
    linked = re.findall(r"<a href='#([^']+)'>", banner)
    coarse = [o.claim.id for o in outcomes if o.result is not None and o.claim.coarse(o.result)]
    assert coarse == ["toy2024.spread"]  # 4 SE of 0.1 around 1.7: a 24 % resolution
    assert f"<b>{len(coarse)} coarse</b>" in banner
    assert sorted(linked) == sorted([o.claim.id for o in outcomes if o.status != "passed"] + coarse)


def test_accusations_lead_with_the_papers_words(rendered):
    """Each verdict against a paper is on the first screen with the quote, its locator and the discrepancy."""
    outcomes, _, page, md = rendered
    banner = page[page.index("id='summary'"):page.index("</header>")]
    assert "Verdicts against a paper" in banner
    for o in outcomes:
        if o.status in ("refutes paper", "differs from paper"):
            quote, where = o.claim.paper_quotes(o.result)[0]
            assert quote in banner and where in banner
            assert "the paper says" in banner
    assert "“the ratio exceeds 4000” — arXiv:2401.00001, Fig. 3" in md


def test_html_anchors_links_and_figures(rendered):
    outcomes, figs, page, _ = rendered
    p = _Page()
    p.feed(page)
    ids = set(p.ids)
    assert len(p.ids) == len(ids), "duplicate ids"
    for o in outcomes:
        assert o.claim.id in ids
    assert {"paper-toy2024", "paper-other2025", "summary", "contents", "provenance"} <= ids
    for href in p.hrefs:
        if href.startswith("#"):
            assert href[1:] in ids, href
    for paths in figs.values():
        for path in paths:
            if path.suffix == ".png":
                assert f"fig-{path.stem}" in ids
                assert f"#img-{path.stem}" in p.uses
    assert all(u[1:] in ids for u in p.uses)
    # the banner comes before the contents, the contents before the first claim
    assert p.order.index("summary") < p.order.index("contents") < p.order.index(outcomes[0].claim.id)


def test_html_is_self_contained_and_has_no_raw_markdown(rendered):
    _, _, page, _ = rendered
    p = _Page()
    p.feed(page)
    assert p.srcs and all(s.startswith("data:") for s in p.srcs)
    assert "<script" not in page and "<link" not in page
    text = "".join(p.text)
    assert "**" not in text and "`" not in text
    assert "$" not in text.replace("$$", "")  # every $...$ segment was rendered as a formula


def test_html_claim_details(rendered):
    outcomes, _, page, _ = rendered
    section = page[page.index("id='toy2024.threshold'"):]
    section = section[:section.index("</section>")]
    assert "bisection to 1e-9 relative" in section and "seed 7" in section and "cached" in section
    assert "η_c λ = 1" in section and "rejected" in section and "Theorem 1" in section
    assert "data:image/svg+xml;base64" in section  # the LaTeX is rendered
    assert "#img-toy_threshold" in section  # the linked figure is shown inline
    refute = page[page.index("id='toy2024.ratio_is_small'"):]
    refute = refute[:refute.index("</section>")]
    assert "<th>paper says</th>" in refute and "4000" in refute
    assert "<th>paper says</th>" not in section
    # tolerances never break inside a number
    assert "<span class='num'>rtol 1.0e-08</span>" in section
    unknown = page[page.index("id='other2025.no_rival'"):]
    assert "tex-src" in unknown[:unknown.index("</section>")]  # unparseable LaTeX falls back to its source
    assert "ValueError: eta: expected &gt; 0, got -1" in page
    assert "abc123" in page and "numpy 2" in page


def test_markdown_matches(rendered):
    outcomes, figs, _, md = rendered
    counts = summary_counts(outcomes)
    assert "**Summary:** " + " · ".join(f"{n} {s}" for s, n in counts.items()) in md
    for o in outcomes:
        assert f'<a id="{o.claim.id}"></a>' in md
        if o.status != "passed":
            assert f"](#{o.claim.id})" in md.split("## Contents")[0]
    for paths in figs.values():
        for path in paths:
            if path.suffix == ".png":
                assert f"]({path.name})" in md
    assert "| check | quantity | paper says | steplab predicts |" in md
    assert r"\tfrac{2}{\lambda}" in md  # the LaTeX source is kept for renderers that read it


def test_latex_normalisation_and_rendering():
    n = _report.normalise_latex(r"\tfrac12 + \frac\eta2 + {\rm mid} + \sqrt{\tfrac14\sqrt3} \le \Big(x\Big) \iff y")
    assert n == r"\frac{1}{2} + \frac{\eta}{2} + \mathrm{mid} + \sqrt{\frac{1}{4}\sqrt{3}} \leq (x) \Leftrightarrow y"
    svg, height, depth = _report.render_math(f"${n}$")
    assert svg.startswith("<svg") and "<path" in svg and height > 0 and depth >= 0
    assert _report.render_math(r"$\notacommand$") is None


def test_value_display():
    assert _report._value_text(0.5) == "0.5"
    assert _report._value_text(np.arange(3.0)) == "[0, 1, 2]"
    assert _report._value_text(np.arange(10.0)).endswith("(10 values)")
    assert _report._value_text("<= 2") == "<= 2"


def test_report_files_written(rendered, tmp_path):
    outcomes, figs, _, _ = rendered
    path = _report.write_html(outcomes[:1], {}, tmp_path, "full", provenance=PROVENANCE, name="report_toy")
    assert path == Path(tmp_path) / "report_toy.html" and "Every claim passed" in path.read_text()
