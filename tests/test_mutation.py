"""The mutant reruns' pinned sites still name their lines.

``tests/test_<topic>_mutants.py`` pin each deliberate mistake by the text of its source line (``mutant_module``), so an
edit of that line leaves a stale pin; the reruns are slow-tier tests (``make test-all``), so without this check a stale
pin is found only there. Reading the pins from the test files' syntax trees costs milliseconds.
"""
from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest

from tests import mutation as M

ROOT = Path(__file__).resolve().parent
FILES = sorted(ROOT.glob("test_*_mutants.py"))


def _source(name: str) -> tuple[str, str] | None:
    """(path, text) of module ``name``'s source, or None when ``name`` is not a module (an imported function)."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or not (spec.origin or "").endswith(".py"):
        return None
    return spec.origin, Path(spec.origin).read_text()


def _resolves(name: str, site: tuple[str, ...]) -> bool:
    src = _source(name)
    if src is None:
        return False
    try:
        M.site_index(src[1], *site, where=src[0])
    except ValueError:
        return False
    return True


def _calls(path: Path) -> list[ast.Call]:
    return [n for n in ast.walk(ast.parse(path.read_text())) if M.is_mutant_call(n)]


@pytest.mark.parametrize("path", [p for p in FILES if _calls(p)], ids=lambda p: p.stem)
def test_every_pinned_site_names_one_line_of_one_module(path):
    """Each site resolves (one line holds its text, one mutation of its kind starts at ``at``) in the module its call
    names, or, for a site passed on as ``*site``, in exactly one of the ``theory``/``sims`` modules the file imports."""
    sites = M.pinned_sites(path)
    calls = _calls(path)
    starred = [c for c in calls if any(isinstance(a, ast.Starred) for a in c.args)]
    literal = [c for c in calls if c not in starred]
    # every call is read: its literal site, or (for *site) at least one site tuple in the file
    assert len([s for s in sites if s[0] is not None]) == len(literal), (path.name, sites)
    assert not starred or any(s[0] is None for s in sites), path.name
    modules = M.imported_modules(path)
    stale = []
    for module, site in sites:
        if module is not None:
            if not _resolves(module, site):
                stale.append((module, site))
        elif sum(_resolves(m, site) for m in modules) != 1:
            stale.append((f"one of {modules}", site))
    assert not stale, f"{path.name}: stale pinned sites (the line was edited?): {stale}"


def test_a_stale_site_is_reported_naming_what_no_longer_matches():
    src = "def f(x):\n    return 2 * x + 1\n"
    # two operator mutations start at "2 * x" (of 2 * x + 1 and of 2 * x): ambiguous until the change names one
    with pytest.raises(ValueError, match="^kind: 2 'operator' mutations"):
        M.site_index(src, "return 2 * x", "2 * x", "operator")
    assert M.site_index(src, "return 2 * x", "2 * x", "operator", "Mult") >= 0
    with pytest.raises(ValueError, match="^line_text: 0 lines"):
        M.site_index(src, "return 3 * x", "3 * x", "operator")
    with pytest.raises(ValueError, match="^at: line 2"):
        M.site_index(src, "return 2 * x", "y", "operator")
    with pytest.raises(ValueError, match="^kind: 0 'comparison'"):
        M.site_index(src, "return 2 * x", "2 * x", "comparison")
