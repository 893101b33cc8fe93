r"""The claim contract (DESIGN.md): a claim is data, registered once, consumed by pytest, the
report and the figures.

A topic module under ``paper_checks/`` declares its :class:`Paper` and registers each claim with
the :func:`claim` decorator on its check function ``check(budget) -> Result``. The check must
compare two independently obtained numbers (e.g. a sympy prediction and a JAX simulation) and
say why its tolerance is what it is.

Status of a run:

* ``passed`` -- steplab's prediction and its simulation agree;
* ``refutes paper`` -- a claim registered with ``refutes_paper=True`` whose check reproduced
  the refutation of a published statement (a result, not a failure);
* ``failed`` -- steplab's own prediction disagrees with its own simulation (a bug or a finding);
* ``error`` -- the check raised.
"""
from __future__ import annotations

import importlib
import pkgutil
import re
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

__all__ = [
    "Paper", "Result", "Claim", "claim", "claims", "get_claim", "load_all",
    "KINDS", "PROVENANCES", "BUDGETS", "check_budget",
]

KINDS = ("exact", "bound", "rate", "statistical", "existence", "qualitative")
PROVENANCES = ("quoted", "secondary", "derived")
BUDGETS = ("quick", "full")
_ID = re.compile(r"^[a-z][a-z0-9_]*\.[a-z0-9_]+$")

_REGISTRY: dict[str, "Claim"] = {}


def check_budget(budget: str) -> str:
    """Validate a budget name (``quick`` for tests/CI, ``full`` for the report and figures)."""
    if budget not in BUDGETS:
        raise ValueError(f"budget: expected one of {BUDGETS}, got {budget!r}")
    return budget


@dataclass(frozen=True)
class Paper:
    """A paper whose claims are verified. ``key`` prefixes every claim id (e.g. ``meng2024``)."""

    key: str
    title: str
    authors: str
    year: int
    arxiv: str | None = None
    venue: str | None = None

    def cite(self) -> str:
        where = f"arXiv:{self.arxiv}" if self.arxiv else (self.venue or "")
        return f"{self.authors} ({self.year}). {self.title}. {where}".strip()


@dataclass
class Result:
    """Outcome of one check.

    ``predicted``/``measured``/``tolerance`` are numbers (or short strings where the quantity is
    categorical, e.g. an attractor period); ``arrays`` carries what a figure needs; ``seed`` is
    the PRNG seed when the check is random (printed in the report).
    """

    predicted: float | str
    measured: float | str
    tolerance: float | str
    passed: bool
    detail: str
    arrays: dict[str, np.ndarray] = field(default_factory=dict)
    seed: int | None = None

    def __post_init__(self) -> None:
        self.passed = bool(self.passed)
        for name in ("predicted", "measured", "tolerance"):
            value = getattr(self, name)
            if isinstance(value, (np.floating, np.integer)):
                setattr(self, name, value.item())
            elif not isinstance(value, (int, float, str)):
                raise TypeError(f"Result.{name}: expected a number or a short string, got {type(value).__name__}")


@dataclass(frozen=True)
class Claim:
    """One registered claim: a paper statement paired with steplab's check of it."""

    id: str
    paper: Paper
    statement: str
    latex: str
    provenance: str
    kind: str
    check: Callable[[str], Result]
    topic: str
    refutes_paper: bool = False

    def run(self, budget: str) -> Result:
        """Run the check at ``budget``; the check must return a :class:`Result`."""
        result = self.check(check_budget(budget))
        if not isinstance(result, Result):
            raise TypeError(f"claim {self.id}: check returned {type(result).__name__}, expected Result")
        return result

    def status(self, result: Result) -> str:
        if not result.passed:
            return "failed"
        return "refutes paper" if self.refutes_paper else "passed"


def claim(
    id: str, *, paper: Paper, statement: str, latex: str = "", provenance: str, kind: str,
    refutes_paper: bool = False,
) -> Callable[[Callable[[str], Result]], Callable[[str], Result]]:
    """Decorator registering ``check(budget) -> Result`` as claim ``id`` (``<paper.key>.<name>``)."""
    if not isinstance(id, str) or not _ID.match(id):
        raise ValueError(f"id: expected '<paper key>.<snake_case name>', got {id!r}")
    if not isinstance(paper, Paper):
        raise TypeError(f"paper: expected a Paper, got {type(paper).__name__}")
    if id.split(".")[0] != paper.key:
        raise ValueError(f"id: {id!r} must start with the paper key {paper.key!r}")
    if kind not in KINDS:
        raise ValueError(f"kind: expected one of {KINDS}, got {kind!r}")
    if provenance not in PROVENANCES:
        raise ValueError(f"provenance: expected one of {PROVENANCES}, got {provenance!r}")
    if not statement:
        raise ValueError("statement: a claim needs its statement in words")

    def register(check: Callable[[str], Result]) -> Callable[[str], Result]:
        if id in _REGISTRY and _REGISTRY[id].check.__qualname__ != check.__qualname__:
            raise ValueError(f"id: claim {id!r} is already registered by {_REGISTRY[id].check.__module__}")
        topic = check.__module__.rsplit(".", 1)[-1]
        _REGISTRY[id] = Claim(id, paper, statement, latex, provenance, kind, check, topic, refutes_paper)
        return check

    return register


def load_all() -> None:
    """Import every topic module of :mod:`paper_checks` (modules not starting with ``_``)."""
    import paper_checks

    for info in pkgutil.iter_modules(paper_checks.__path__):
        if not info.name.startswith("_"):
            importlib.import_module(f"paper_checks.{info.name}")


def claims(*, paper: str | None = None, claim_id: str | None = None, topic: str | None = None) -> list[Claim]:
    """Registered claims (all topic modules loaded), optionally filtered; in registration order."""
    load_all()
    selected = list(_REGISTRY.values())
    if paper is not None:
        selected = [c for c in selected if c.paper.key == paper]
        if not selected:
            known = sorted({c.paper.key for c in _REGISTRY.values()})
            raise ValueError(f"paper: no claims for {paper!r}; known paper keys: {known}")
    if topic is not None:
        selected = [c for c in selected if c.topic == topic]
    if claim_id is not None:
        selected = [c for c in selected if c.id == claim_id]
        if not selected:
            raise ValueError(f"claim: no claim with id {claim_id!r}")
    return selected


def get_claim(claim_id: str) -> Claim:
    """The registered claim with this id."""
    return claims(claim_id=claim_id)[0]
