"""The layers import one way: theory <- sims <- paper_checks <- figures (no upward import, so no import circle)."""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ORDER = ("theory", "sims", "paper_checks", "figures")


def _imported_layers(path: Path) -> set[str]:
    """The top-level packages of steplab's layers that ``path`` imports (anywhere in the file, lazily or not)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                 else [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module else [])
        found |= {n.split(".")[0] for n in names} & set(ORDER)
    return found


@pytest.mark.parametrize("layer", ORDER[:-1])
def test_no_layer_imports_a_layer_above_it(layer):
    above = set(ORDER[ORDER.index(layer) + 1:])
    bad = {str(p.relative_to(ROOT)): sorted(_imported_layers(p) & above) for p in (ROOT / layer).rglob("*.py")}
    assert not {k: v for k, v in bad.items() if v}, f"{layer} must not import {sorted(above)}"


def _package(path: Path) -> str:
    """``theory/sde/noise.py`` -> ``theory.sde``: the package a module lives in."""
    return ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])


def _private_reads(path: Path) -> list[str]:
    """Underscore names of another steplab module that ``path`` imports or reads as an attribute.

    Inside one topic package (``theory/sde/*``) modules share their private helpers; a top-level layer is not such a
    package. An underscore *module* of one's own layer (``figures._style``) is the layer's own machinery. The standard
    library's underscore names (``sys._getframe``) are not steplab's."""
    tree = ast.parse(path.read_text(), str(path))
    pkg = _package(path)
    ours = set(ORDER) | {"examples", "steplab"}

    def shared(module: str) -> bool:
        return "." in pkg and (module == pkg or module.startswith(pkg + "."))

    bad, aliases = [], {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for a in node.names:
                full = f"{node.module}.{a.name}"
                aliases[a.asname or a.name] = full
                if node.module.split(".")[0] in ours and a.name.startswith("_") and not a.name.startswith("__"):
                    own_layer_module = node.module == pkg.split(".")[0] and node.module == path.parts[-2]
                    if not shared(node.module) and not own_layer_module:
                        bad.append(f"{node.lineno}: from {node.module} import {a.name}")
        elif isinstance(node, ast.Import):
            for a in node.names:
                aliases[a.asname or a.name.split(".")[0]] = a.asname and a.name or a.name.split(".")[0]
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
                and isinstance(node.value, ast.Name) and node.value.id in aliases):
            module = aliases[node.value.id]
            if module.split(".")[0] in ours and not shared(module):
                bad.append(f"{node.lineno}: {module}.{node.attr}")
    return bad


def test_no_module_reads_another_modules_private_names():
    """A leading underscore means "may change without notice": no steplab module outside the tests imports or reads
    another module's underscore name (helpers shared across modules are public, or live inside one topic package)."""
    found = {}
    for layer in (*ORDER, "examples"):
        for p in sorted((ROOT / layer).rglob("*.py")):
            if p.parent.name == "reference":
                continue  # the bench's references time a simulator's compiled core, without its argument checks
            bad = _private_reads(p)
            if bad:
                found[str(p.relative_to(ROOT))] = bad
    assert not found, "private names read across modules:\n" + "\n".join(f"  {k}: {v}" for k, v in found.items())


#: paper_checks modules allowed past ~400 lines, and why: a topic's experiments live in one module (the unit the
#: results cache and the figures read), and the claim layer's check classes and registry are one piece each
LONG_PAPER_CHECKS = {"experiments.py": "every experiment of a topic in one module, read by its claims and figures",
                     "_checks.py": "the typed check classes and their shared formatting",
                     "_registry.py": "the claim and paper registry"}


def test_no_file_over_1000_lines_and_claim_modules_stay_small():
    """A file past 1,000 lines becomes a package (theory/<topic>/, sims/<topic>/); a claim module stays near 400 lines
    (one paper or theme per module), except the modules of LONG_PAPER_CHECKS."""
    long = {str(p.relative_to(ROOT)): n for layer in ORDER for p in (ROOT / layer).rglob("*.py")
            if (n := len(p.read_text().splitlines())) > 1000}
    assert not long, f"files over 1,000 lines: {long}"
    claims = {str(p.relative_to(ROOT)): n for p in (ROOT / "paper_checks").rglob("*.py")
              if p.name not in LONG_PAPER_CHECKS and (n := len(p.read_text().splitlines())) > 450}
    assert not claims, f"claim modules over ~400 lines (split by paper or theme): {claims}"
