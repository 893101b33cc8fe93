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
