"""The row type of the simulator contract table (``tests/test_contract.py``).

It lives in a module of its own so that ``tests/contract_<topic>.py`` can import it by name
(``from tests._contract_table import Sim``) without importing the test module that loads them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable


@dataclass
class Sim:
    """One public simulator in the contract table.

    ``name`` is ``"<topic>.<function>"`` (e.g. ``"logistic.gd"``).
    ``call(**overrides)`` runs the baseline call with keyword overrides and returns its output.
    ``outputs(out)`` picks the arrays to compare (default: ``out`` itself, or its dict values).
    ``grid``: (name of the grid-axis keyword, values, output axis) for vmap-equals-loop.
    ``bad``: list of (overrides, parameter name the error must mention).
    ``diverging``: (overrides, flag(out) -> bool array that must be all True).
    ``vary``: overrides giving new data of the same shapes (for the no-recompilation test).
    ``rtol``: round-off tolerance between jit and eager / vmap and loop (say why when not 1e-10).
    ``nan_padding``: output keys that hold documented NaN padding in a run that did not diverge, with the
    reason (variable-length results, a record the call asked not to take); every other output is finite.
    """

    name: str
    call: Callable[..., Any]
    outputs: Callable[[Any], list] | None = None
    grid: tuple[str, Any, int] | None = None
    bad: list[tuple[dict, str]] = field(default_factory=list)
    diverging: tuple[dict, Callable[[Any], Any]] | None = None
    vary: dict | None = None
    rtol: float = 1e-10
    atol: float = 1e-12
    skip: dict[str, str] = field(default_factory=dict)
    nan_padding: dict[str, str] = field(default_factory=dict)
