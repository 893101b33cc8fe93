"""Sphinx configuration of the steplab documentation (``make docs``).

The notes in ``docs/`` are Markdown (MyST); the API pages are generated from the docstrings by
autodoc. An API page lists its modules with one line, ``.. steplab-modules:: <package>``, which is
expanded here into one ``automodule`` section per module found on disk, so a new module is
documented without editing the docs. Maths is typeset by a vendored copy of MathJax
(``_static/mathjax``), so the site renders with no network.
"""
from __future__ import annotations

import os
import pkgutil
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
# Never touch a user's results cache while importing modules for autodoc.
os.environ.setdefault("STEPLAB_RESULTS", str(ROOT / "docs" / "_build" / "results"))

project = "steplab"
author = "steplab contributors"
copyright = "2026, steplab contributors"  # noqa: A001 - Sphinx's name for it

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
myst_enable_extensions = ["dollarmath", "deflist"]
myst_heading_anchors = 3
exclude_patterns = ["_build"]
autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "show-inheritance": True}
autodoc_typehints = "description"
napoleon_google_docstring = True
napoleon_numpy_docstring = False
html_theme = "alabaster"
html_static_path = ["_static"]
# MathJax 3.2.2's single-file bundle from npm's `mathjax` package (es5/tex-svg-full.js, Apache-2.0, its
# LICENSE beside it): SVG output needs no font files and "full" has every TeX extension, so nothing is
# fetched at view time; Sphinx's default loads MathJax from a CDN and offline pages show raw \( ... \).
# A relative path is relative to _static in the built site.
mathjax_path = "mathjax/tex-svg-full.js"
html_theme_options = {"description": "step sizes, claim by claim", "fixed_sidebar": True}

_DIRECTIVE = re.compile(r"^\.\. steplab-modules:: (\S+)\s*$", re.M)
# inline literals and roles keep their text as it is; a bare "|" elsewhere is an absolute value
_VERBATIM = re.compile(r"(``.+?``|:[\w:+-]+:`[^`]*`|`[^`]*`)")
_BLOCK_START = re.compile(r"^(\s*)(\.\. [\w:-]+::|.*::\s*$)")
# a line of a line block is "|" then a space (or nothing); "|x| <= 1" is an absolute value
_LINE_BLOCK = re.compile(r"^\|(\s|$)")
# the top border of a grid table; the table runs to the next blank line
_TABLE_BORDER = re.compile(r"^\+[-=]+\+")


def _escape_bars(line: str) -> str:
    parts = _VERBATIM.split(line)
    return "".join(p if k % 2 else p.replace("|", "\\|") for k, p in enumerate(parts))


def plain_bars(app, what, name, obj, options, lines: list[str]) -> None:
    """Docstrings write absolute values as ``|x|``; reST would read them as substitutions.

    Escape every bare ``|`` outside inline literals, roles, directive bodies and literal blocks
    (where the text is passed on verbatim, e.g. to LaTeX), and outside tables and line blocks.
    """
    block_indent = None
    in_table = False
    for i, line in enumerate(lines):
        stripped = line.lstrip()
        indent = len(line) - len(stripped)
        if block_indent is not None:
            if not stripped or indent > block_indent:
                continue
            block_indent = None
        start = _BLOCK_START.match(line)
        if start:
            block_indent = len(start.group(1))
        in_table = bool(stripped) and (in_table or bool(_TABLE_BORDER.match(stripped)))
        if in_table or _LINE_BLOCK.match(stripped) or stripped.startswith(("..", ">>>")):
            continue  # tables, line blocks, directives, doctest lines
        lines[i] = _escape_bars(line)


def modules_of(package: str) -> list[str]:
    """Every module of ``package`` (itself first), ``__main__`` modules excluded, sorted by name."""
    pkg = __import__(package, fromlist=["__path__"])
    names = [package]
    for info in pkgutil.walk_packages(pkg.__path__, prefix=f"{package}."):
        if not info.name.endswith("__main__"):
            names.append(info.name)
    return sorted(names, key=lambda n: (n != package, n))


def _expand(app, docname, source) -> None:
    def sections(match: re.Match) -> str:
        out = []
        for name in modules_of(match.group(1)):
            out += [f"``{name}``", "-" * (len(name) + 4), "", f".. automodule:: {name}", ""]
        return "\n".join(out)

    source[0] = _DIRECTIVE.sub(sections, source[0])


def setup(app):
    app.connect("source-read", _expand)
    app.connect("autodoc-process-docstring", plain_bars)
