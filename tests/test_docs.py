"""The documentation stands alone: its files exist, every paper has a note and a BibTeX entry, every
reference resolves inside the repository, maths is typeset by a vendored MathJax (no script from the
network), absolute values in docstrings survive reST, and (slow tier) the Sphinx site builds without a
warning."""
from __future__ import annotations

import functools
import importlib.util
import re
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
SOURCES = [p for pkg in ("theory", "sims", "paper_checks", "figures", "tests") for p in (ROOT / pkg).rglob("*.py")
           if "__pycache__" not in p.parts]
PAPER_KEY = re.compile(r"Paper\(\s*key\s*=\s*\"([a-z0-9_]+)\"")


def paper_keys() -> set[str]:
    """The paper keys declared in paper_checks (read from the sources: no topic is imported)."""
    return {k for p in (ROOT / "paper_checks").rglob("*.py") for k in PAPER_KEY.findall(p.read_text())}


def test_docs_files_exist():
    for rel in ("conf.py", "index.md", "usage.md", "release.md", "references.md", "references.bib",
                "design/architecture.md", "design/claims.md", "design/experiments.md", "design/cache.md",
                "design/figures.md", "papers/index.md", "api/index.md"):
        assert (DOCS / rel).is_file(), rel
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")


def test_every_paper_has_a_note_and_a_bibtex_entry():
    keys = paper_keys()
    assert {"meng2024", "hessian2026", "compagnoni2025", "singh2026", "sao2026"} <= keys
    bib = set(re.findall(r"^@\w+\{([a-z0-9_]+),", (DOCS / "references.bib").read_text(), re.M))
    assert keys <= bib, f"papers without BibTeX: {sorted(keys - bib)}"
    notes = {p.stem for p in (DOCS / "papers").glob("*.md")} - {"index"}
    assert keys <= notes, f"papers without a note in docs/papers: {sorted(keys - notes)}"
    index = (DOCS / "index.md").read_text() + (DOCS / "papers" / "index.md").read_text()
    assert all(f"{k}" in index for k in keys)


def test_steplab_note_names_every_steplab_claim():
    """docs/papers/steplab.md names each claim registered under the key ``steplab`` (read from the sources: a
    ``@claim("steplab.<name>"`` decorator), so a finding added without its line is caught."""
    ids = {m for p in (ROOT / "paper_checks").rglob("*.py")
           for m in re.findall(r"@claim\(\s*\"(steplab\.[a-z0-9_]+)\"", p.read_text())}
    assert len(ids) > 20, "the steplab claims were not found in the sources"
    note = (DOCS / "papers" / "steplab.md").read_text()
    assert not {i for i in ids if f"`{i}`" not in note}, "steplab claims missing from docs/papers/steplab.md"


def test_citation_file_matches_the_package():
    cff = (ROOT / "CITATION.cff").read_text()
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert cff.startswith("cff-version: 1.2.0")
    assert re.search(rf"^version: {re.escape(version)}$", cff, re.M)
    assert re.search(r"^license: MIT$", cff, re.M) and re.search(r"^title: ", cff, re.M)


def test_docs_extra_and_make_target():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    docs = " ".join(meta["project"]["optional-dependencies"]["docs"])
    assert "sphinx" in docs and "myst-parser" in docs
    assert re.search(r"^docs: ", (ROOT / "Makefile").read_text(), re.M)


def _md_files() -> list[Path]:
    return [*DOCS.rglob("*.md"), ROOT / "README.md"]


def test_links_and_toctrees_resolve():
    for md in DOCS.rglob("*.md"):
        text = md.read_text()
        for block in re.findall(r"```\{toctree\}(.*?)```", text, re.S):
            for entry in block.splitlines():
                entry = entry.strip()
                if entry and not entry.startswith(":"):
                    assert any((md.parent / f"{entry}{ext}").exists() for ext in (".md", ".rst")), f"{md}: {entry}"
    for md in _md_files():
        text = re.sub(r"^```.*?^```", "", md.read_text(), flags=re.M | re.S)  # code blocks hold no links
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
            if not re.match(r"^[a-z]+:", target):  # relative links only
                assert (md.parent / target).exists(), f"{md.relative_to(ROOT)}: broken link {target}"


def test_every_page_is_listed():
    """Every page of docs/ is in some toctree (Sphinx warns about one in none, but only `make docs` would see it),
    and every paper note has a row in the table of docs/papers/index.md."""
    listed = set()
    for md in DOCS.rglob("*.md"):
        for block in re.findall(r"```\{toctree\}(.*?)```", md.read_text(), re.S):
            listed |= {(md.parent / e.strip()).resolve() for e in block.splitlines() if e.strip() and not e.strip().startswith(":")}
    pages = [p for p in [*DOCS.rglob("*.md"), *DOCS.rglob("*.rst")]
             if not {"_build", "_static"} & set(p.relative_to(DOCS).parts) and p != DOCS / "index.md"]
    orphans = sorted(str(p.relative_to(DOCS)) for p in pages if p.with_suffix("").resolve() not in listed)
    assert not orphans, f"pages in no toctree (add each to a toctree, e.g. in docs/index.md): {orphans}"
    table = (DOCS / "papers" / "index.md").read_text()
    notes = sorted(p.stem for p in (DOCS / "papers").glob("*.md") if p.stem != "index")
    unlisted = [n for n in notes if f"]({n}.md)" not in table]
    assert not unlisted, f"paper notes without a row in the table of docs/papers/index.md: {unlisted}"


# written in pieces so that this file does not match itself
_OUTSIDE = [re.compile(p) for p in (
    r"\.\./" + "shared", "shared/" + "papers", "DESIGN" + r"\.md", "/work" + "/",
    # the planning notes by file name: their content lives in docs/papers now
    r"\b(logistic_gd_cycles|hessian_linear_nets|sde_l0l1_compression|signsgd_noise_floor|softmax_taylor_radius"
    r"|edge_of_stability|noisy_quadratics|sgd_stability)" + r"\.md\b")]


def test_no_reference_points_outside_the_repository():
    offenders = []
    for path in [*SOURCES, *_md_files()]:
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if any(p.search(line) for p in _OUTSIDE):
                offenders.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()[:90]}")
    assert not offenders, "references to files outside the repository:\n" + "\n".join(offenders)


_ROLE = re.compile(r":(mod|func|class|meth|data|attr|exc):`~?((?:theory|sims|paper_checks|figures)(?:\.\w+)*)`")


def _module_exists(dotted: str) -> bool:
    base = ROOT.joinpath(*dotted.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def test_docstring_cross_references_resolve():
    """:mod: names an existing module; other roles name an object (or a method) in an existing module."""
    broken = []
    for path in SOURCES:
        for role, target in _ROLE.findall(path.read_text()):
            parts = target.split(".")
            if role == "mod":
                ok = _module_exists(target)
            else:
                ok = any(_module_exists(".".join(parts[:k])) for k in range(max(1, len(parts) - 2), len(parts)))
            if not ok:
                broken.append(f"{path.relative_to(ROOT)}: :{role}:`{target}`")
    assert not broken, "cross-references to modules that do not exist:\n" + "\n".join(broken)


@pytest.mark.slow
def test_sphinx_builds_without_warnings(tmp_path):
    _sphinx_or_skip()
    done = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
                           str(DOCS), str(tmp_path / "html")], capture_output=True, text=True, timeout=600,
                          cwd=ROOT)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-6000:]
    assert (tmp_path / "html" / "papers" / "sao2026.html").exists()
    assert not _remote_assets(tmp_path / "html"), "pages load scripts or styles from the network"
    assert 'src="../_static/mathjax/tex-svg-full.js' in (tmp_path / "html" / "api" / "sims.html").read_text()


@functools.cache
def _conf():
    """docs/conf.py as a module (it needs no Sphinx to import)."""
    spec = importlib.util.spec_from_file_location("steplab_docs_conf", DOCS / "conf.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _escaped(*lines: str) -> list[str]:
    out = list(lines)
    _conf().plain_bars(None, "module", "m", None, {}, out)
    return out


def test_absolute_values_are_escaped_anywhere_on_a_line():
    # reST reads |x| as a substitution reference: an undefined one is a build error
    assert _escaped("|x| is the norm; |y| too") == [r"\|x\| is the norm; \|y\| too"]
    assert _escaped("    |x - y| <= 1 for every pair") == [r"    \|x - y\| <= 1 for every pair"]
    assert _escaped("the bound |x| <= 1") == [r"the bound \|x\| <= 1"]


def test_line_blocks_tables_literals_and_directives_keep_their_bars():
    kept = ["| a line block", "|", "    | an indented one", ":math:`|x|` and ``|x|``", ">>> a | b",
            ".. math::", "", "   |x|^2", ""]
    assert _escaped(*kept) == kept
    table = ["+-----+-----+", "| a   | b   |", "+=====+=====+", "|x|  | y   |", "+-----+-----+"]
    assert _escaped(*table, "", "|x| after the table") == [*table, "", r"\|x\| after the table"]


def test_mathjax_is_vendored_with_its_license():
    conf = _conf()
    assert "sphinx.ext.mathjax" in conf.extensions and "_static" in conf.html_static_path
    assert not re.match(r"^(https?:)?//", conf.mathjax_path), "MathJax must not come from the network"
    bundle = DOCS / "_static" / conf.mathjax_path
    assert bundle.is_file() and 'VERSION="3.2.2"' in bundle.read_text()
    assert (bundle.parent / "LICENSE").read_text().lstrip().startswith("Apache License")


_REMOTE = re.compile(r"<script\b[^>]*\bsrc=\"(?:https?:)?//[^\"]*\"|<link\b[^>]*\bhref=\"(?:https?:)?//[^\"]*\.(?:js|css)\b[^\"]*\"")


def _remote_assets(html_dir: Path) -> list[str]:
    """Scripts and style sheets that the built pages load from the network."""
    return [f"{page.relative_to(html_dir)}: {m}" for page in sorted(html_dir.rglob("*.html"))
            for m in _REMOTE.findall(page.read_text())]


def test_remote_asset_pattern_finds_a_cdn_script(tmp_path):
    (tmp_path / "a.html").write_text('<script defer="defer" src="https://cdn.jsdelivr.net/npm/mathjax@4/tex-mml-chtml.js">'
                                     '</script><link rel="stylesheet" href="//example.org/x.css" />')
    (tmp_path / "b.html").write_text('<script src="_static/mathjax/tex-svg-full.js"></script>'
                                     '<a href="https://www.sphinx-doc.org/">Sphinx</a>')
    assert len(_remote_assets(tmp_path)) == 2 and all(r.startswith("a.html") for r in _remote_assets(tmp_path))


def _sphinx_or_skip() -> None:
    if importlib.util.find_spec("sphinx") is None or importlib.util.find_spec("myst_parser") is None:
        pytest.skip("needs the docs extra: pip install -e '.[docs]' (make docs installs it)")


def test_a_page_with_maths_and_bars_builds_offline(tmp_path):
    """docs/conf.py on a two-file site: a docstring with |x| at a line start builds without a warning, and
    the page loads MathJax from _static, no script from the network."""
    _sphinx_or_skip()
    src = tmp_path / "src"
    src.mkdir()
    (src / "barsdemo.py").write_text(textwrap.dedent('''
        """Absolute values.

        |x| is the absolute value of :math:`x`; the bound |x| <= 1 holds.

        | a line block
        | of two lines
        """
    '''))
    (src / "index.rst").write_text("Demo\n====\n\nInline :math:`\\sqrt{x}`.\n\n.. automodule:: barsdemo\n")
    done = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", "-c", str(DOCS),
                           str(src), str(tmp_path / "html")], capture_output=True, text=True, timeout=300,
                          cwd=ROOT, env={**__import__("os").environ, "PYTHONPATH": str(src)})
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    page = (tmp_path / "html" / "index.html").read_text()
    assert "|x| is the absolute value" in page and "<div class=\"line\">a line block</div>" in page
    assert 'src="_static/mathjax/tex-svg-full.js' in page and "math notranslate" in page
    assert (tmp_path / "html" / "_static" / "mathjax" / "tex-svg-full.js").is_file()
    assert not _remote_assets(tmp_path / "html")
