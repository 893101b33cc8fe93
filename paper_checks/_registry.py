r"""The claim contract, version 2: a claim is data, registered once, consumed by pytest, the report
and the figures, and its verdict follows from typed comparisons (:mod:`paper_checks._checks`).

A topic module ``paper_checks/<topic>.py`` (or a package ``paper_checks/<topic>/``) declares one
``PAPER`` and registers each claim with :func:`claim` on a documented check function
``check(budget: Budget) -> Result``. The :class:`Result` carries one or more typed checks; each
compares a measurement with steplab's prediction and with at least one *rival* (the most
plausible wrong statement) on the same measurement. The status follows:

* ``error`` -- the check raised, or its result breaks the contract (no rival; checks that do not
  fit the claim's ``kind``);
* ``failed`` -- some prediction is rejected: steplab's theory and simulation disagree;
* ``inconclusive`` -- every prediction accepted, but some rival is accepted too: the measurement
  at this budget cannot tell the claim from its rival;
* ``refutes paper`` -- the claim is registered ``refutes_paper=True`` and the paper's value
  (``paper=`` on a check) is rejected while steplab's prediction is accepted;
* ``differs from paper`` -- as above for a claim not registered as a refutation: steplab's theory
  and simulation agree, but a number the paper states is not reproduced;
* ``passed`` -- every prediction accepted, every rival rejected, no paper value rejected.

Claim layer v3: a verdict against a paper rests on the paper's own words. A claim with
``provenance="quoted"`` or ``refutes_paper=True`` carries ``quote=`` (the paper's verbatim words that
say what the claim tests) and ``where=`` (arXiv id and locator); a check's ``paper=`` value carries
its own quote and locator (:mod:`paper_checks._checks` refuses it otherwise). steplab's own findings
(a trap, a counterexample to a naive reading, a cross-link between papers) are registered under the
paper :data:`STEPLAB` (key ``steplab``), so a paper's count counts the paper's statements.
Every claim reports a *resolution* (:meth:`Claim.resolution`); a quantitative claim coarser than
:data:`COARSE` is flagged ``coarse`` unless it states why it cannot be sharper (``coarse_reason=``).
"""
from __future__ import annotations

import difflib
import importlib
import pkgutil
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from paper_checks._checks import Bound, Categorical, Check, Count, Exact, Rate, Statistical

__all__ = [
    "Paper", "Result", "Claim", "Budget", "claim", "claims", "get_claim", "load_all", "import_errors", "topics",
    "papers", "STEPLAB", "COARSE", "QUANTITATIVE", "unknown_name",
    "KINDS", "PROVENANCES", "BUDGETS", "STATUSES", "OK_STATUSES", "check_budget", "as_budget",
]

PROVENANCES = ("quoted", "secondary", "derived")
BUDGETS = ("quick", "full")
STATUSES = ("passed", "refutes paper", "differs from paper", "inconclusive", "failed", "error")
OK_STATUSES = ("passed", "refutes paper", "differs from paper")  # a CLI run exits 0 only on these
# kind -> (check types of which at least one must be present, check types allowed besides)
KIND_RULES: dict[str, tuple[tuple[type, ...], tuple[type, ...]]] = {
    "exact": ((Exact,), (Exact, Bound, Categorical, Count)),
    "bound": ((Bound,), (Bound, Exact, Categorical, Count)),
    "rate": ((Rate,), (Rate, Exact, Bound, Categorical)),
    "statistical": ((Statistical,), (Statistical, Exact, Bound, Categorical, Count)),
    "existence": ((Exact, Bound, Categorical, Count), (Exact, Bound, Categorical, Count, Statistical)),
    "qualitative": ((Categorical, Count, Bound), (Categorical, Count, Bound, Statistical, Exact)),
}
KINDS = tuple(KIND_RULES)
#: kinds whose claim is a number: their resolution must be at most COARSE or say why not
QUANTITATIVE = ("exact", "statistical", "rate")
COARSE = 0.10
_ID = re.compile(r"^[a-z][a-z0-9_]*\.[a-z0-9_]+$")

_FEW_NAMES = 10  # up to this many valid names, an unknown-name message lists them all
_REGISTRY: dict[str, "Claim"] = {}
_IMPORT_ERRORS: dict[str, str] = {}


@dataclass(frozen=True)
class Budget:
    """A compute budget: ``quick`` (tests and CI, seconds) or ``full`` (the report and figures).

    Checks and experiments size their work with :meth:`pick`, never with string tests.
    """

    name: str

    def __post_init__(self) -> None:
        if self.name not in BUDGETS:
            raise ValueError(f"budget: expected one of {BUDGETS}, got {self.name!r}")

    def pick(self, *, quick: Any, full: Any) -> Any:
        """The value for this budget."""
        return quick if self.name == "quick" else full

    def __str__(self) -> str:
        return self.name


def as_budget(budget: "Budget | str") -> Budget:
    """A :class:`Budget` from a budget or its name (``ValueError`` for an unknown name)."""
    if isinstance(budget, Budget):
        return budget
    if not isinstance(budget, str):
        raise TypeError(f"budget: expected 'quick', 'full' or a Budget, got {type(budget).__name__}")
    return Budget(budget)


def check_budget(budget: "Budget | str") -> str:
    """The name of a valid budget (``ValueError`` otherwise)."""
    return as_budget(budget).name


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


#: steplab's own findings: statements no paper makes (traps, counterexamples, cross-links)
STEPLAB = Paper(key="steplab", title="steplab's own findings", authors="steplab contributors", year=2026)


@dataclass
class Result:
    """Outcome of one check function: typed comparisons plus what the report and figures need.

    ``checks``: one :class:`~paper_checks._checks.Check` or a sequence of them; the verdict follows
    from them alone. ``detail``: one or two sentences on what was measured. ``arrays``: data a figure
    draws. ``seed``: the PRNG seed when the check is random (printed in the report).
    """

    checks: Sequence[Check]
    detail: str = ""
    arrays: dict[str, np.ndarray] = field(default_factory=dict)
    seed: int | None = None

    def __post_init__(self) -> None:
        if isinstance(self.checks, Check):
            self.checks = [self.checks]
        self.checks = list(self.checks)
        if not self.checks:
            raise ValueError("checks: a result needs at least one typed check")
        for c in self.checks:
            if not isinstance(c, Check):
                raise TypeError(f"checks: expected typed checks (Exact, Bound, ...), got {type(c).__name__}")
        if not isinstance(self.detail, str):
            raise TypeError(f"detail: expected a string, got {type(self.detail).__name__}")
        if self.seed is not None and (isinstance(self.seed, bool) or not isinstance(self.seed, (int, np.integer))):
            raise TypeError(f"seed: expected an integer or None, got {self.seed!r}")
        self.seed = None if self.seed is None else int(self.seed)

    @property
    def primary(self) -> Check:
        """The first check: its numbers fill the table's predicted/measured/tolerance columns."""
        return self.checks[0]


@dataclass(frozen=True)
class Claim:
    """One registered claim: a paper statement paired with steplab's check of it."""

    id: str
    paper: Paper
    statement: str
    latex: str
    provenance: str
    kind: str
    source: str
    check: Callable[[Budget], Result]
    topic: str
    refutes_paper: bool = False
    uses: tuple[str, ...] = ()
    quote: str = ""
    where: str = ""
    coarse_reason: str = ""

    @property
    def scope(self) -> tuple[str, ...]:
        """The topics whose sources key the claim's cached result: its own and those it ``uses``."""
        return (self.topic, *self.uses)

    @property
    def doc(self) -> str:
        return (self.check.__doc__ or "").strip()

    def run(self, budget: "Budget | str") -> Result:
        """Run the check at ``budget``; the check must return a :class:`Result`."""
        result = self.check(as_budget(budget))
        if not isinstance(result, Result):
            raise TypeError(f"claim {self.id}: check returned {type(result).__name__}, expected Result")
        return result

    def contract_error(self, result: Result) -> str:
        """Why ``result`` breaks the contract for this claim ('' if it does not)."""
        required, allowed = KIND_RULES[self.kind]
        types = [type(c) for c in result.checks]
        if not any(issubclass(t, required) for t in types):
            return (f"kind {self.kind!r} needs a {' or '.join(t.__name__ for t in required)} check; "
                    f"got {[t.__name__ for t in types]}")
        stray = [t.__name__ for t in types if not issubclass(t, allowed)]
        if stray:
            return f"kind {self.kind!r} does not take {stray} checks"
        if not any(c.rivals for c in result.checks) and not any(c.paper is not None for c in result.checks):
            return "no rival: name the most plausible wrong statement and evaluate it on the same measurement"
        if self.refutes_paper and not any(c.paper is not None for c in result.checks):
            return "refutes_paper=True but no check carries the paper's value (paper=...)"
        return ""

    def resolution(self, result: Result) -> float | None:
        """The claim's resolution: the finest :meth:`~paper_checks._checks.Check.resolution` among the checks
        of the type its ``kind`` requires (the checks that carry the claim), ``None`` if none has one."""
        required = KIND_RULES[self.kind][0]
        values = [c.resolution() for c in result.checks if isinstance(c, required)]
        values = [v for v in values if v is not None]
        return min(values) if values else None

    def coarse(self, result: Result) -> bool:
        """A quantitative claim whose resolution is coarser than :data:`COARSE` (a claim whose predictions are all
        zero has an absolute resolution instead, shown beside it, and is never flagged)."""
        if self.kind not in QUANTITATIVE:
            return False
        res = self.resolution(result)
        return res is not None and res > COARSE

    def paper_quotes(self, result: Result | None = None) -> list[tuple[str, str]]:
        """``(quote, where)`` pairs the claim rests on: its own, then each paper value's (deduplicated)."""
        pairs = [(self.quote, self.where)] if self.quote else []
        if result is not None:
            pairs += [(c.quote, c.where) for c in result.checks if c.paper is not None]
        return list(dict.fromkeys(pairs))

    def status(self, result: Result) -> str:
        """The status that ``result`` earns (see the module docstring)."""
        if self.contract_error(result):
            return "error"
        if not all(c.prediction().accepted for c in result.checks):
            return "failed"
        if any(a.accepted for c in result.checks for a in c.rival_assessments()):
            return "inconclusive"
        papers = [c.paper_assessment() for c in result.checks if c.paper is not None]
        if any(not a.accepted for a in papers):
            return "refutes paper" if self.refutes_paper else "differs from paper"
        return "inconclusive" if self.refutes_paper else "passed"


def topic_of(module: str) -> str:
    """``paper_checks.<topic>`` or ``paper_checks.<topic>.<part>`` -> ``<topic>``; elsewhere the module's name."""
    parts = module.split(".")
    return parts[1] if len(parts) >= 2 and parts[0] == "paper_checks" else parts[-1]


def claim(
    id: str, *, paper: Paper, statement: str, latex: str = "", provenance: str, kind: str, source: str,
    refutes_paper: bool = False, uses: tuple[str, ...] = (), quote: str = "", where: str = "",
    coarse_reason: str = "",
) -> Callable[[Callable[[Budget], Result]], Callable[[Budget], Result]]:
    """Decorator registering ``check(budget) -> Result`` as claim ``id`` (``<paper.key>.<name>``).

    ``source`` says where the statement comes from: "abstract", "Theorem 2", "eq. (26)",
    "Table 1", or "derived here". The check function needs a docstring saying what it measures.
    ``uses`` names other topics whose theory or simulators the check calls (a cross-link), so that
    an edit to their sources invalidates the cached result. ``quote``/``where``: the paper's verbatim
    words and their locator, required for ``provenance="quoted"`` and ``refutes_paper=True``.
    ``coarse_reason``: why a quantitative claim cannot resolve better than :data:`COARSE`.
    """
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
    if not isinstance(statement, str) or not statement.strip():
        raise ValueError("statement: a claim needs its statement in words")
    if not isinstance(source, str) or not source.strip():
        raise ValueError("source: say where the statement comes from (e.g. 'Theorem 2', 'abstract', 'derived here')")
    for name, value in (("quote", quote), ("where", where), ("coarse_reason", coarse_reason)):
        if not isinstance(value, str):
            raise TypeError(f"{name}: expected a string, got {type(value).__name__}")
    if bool(quote.strip()) != bool(where.strip()):
        raise ValueError(f"quote/where: claim {id!r} gives one without the other; a quote needs its locator")
    if provenance == "quoted" and not quote.strip():
        raise ValueError(f"provenance: claim {id!r} is 'quoted' but carries no quote= (the paper's verbatim words "
                         "that state what the claim tests) and where=; without them it is 'derived'")
    if refutes_paper and not quote.strip():
        raise ValueError(f"refutes_paper: claim {id!r} accuses the paper; it needs quote= (the paper's verbatim "
                         "words it refutes) and where=")
    if paper.key == STEPLAB.key and (provenance != "derived" or refutes_paper):
        raise ValueError(f"paper: claim {id!r} is steplab's own finding: provenance 'derived', never a refutation")

    def register(check: Callable[[Budget], Result]) -> Callable[[Budget], Result]:
        if not (check.__doc__ or "").strip():
            raise ValueError(f"check: claim {id!r} needs a docstring saying what it measures and against what")
        if id in _REGISTRY and _REGISTRY[id].check.__qualname__ != check.__qualname__:
            raise ValueError(f"id: claim {id!r} is already registered by {_REGISTRY[id].check.__module__}")
        _REGISTRY[id] = Claim(id, paper, statement, latex, provenance, kind, source, check,
                              topic_of(check.__module__), refutes_paper, as_uses(uses), quote.strip(), where.strip(),
                              coarse_reason.strip())
        return check

    return register


def as_uses(uses) -> tuple[str, ...]:
    from sims.cache import topic_names

    if not isinstance(uses, (tuple, list)) or not all(isinstance(u, str) for u in uses):
        raise TypeError(f"uses: expected a tuple of topic names, got {uses!r:.60}")
    for u in uses:
        if u not in topic_names():
            raise ValueError(f"uses: unknown topic {u!r}; valid: {', '.join(topic_names())}")
    return tuple(uses)


def load_all() -> None:
    """Import every topic module or package of :mod:`paper_checks` (names not starting with ``_``).

    A topic that fails to import does not take the others down: its traceback is kept in
    :func:`import_errors`, which the command line reports (non-zero exit) and a test asserts empty.
    """
    import traceback

    import paper_checks

    for info in pkgutil.iter_modules(paper_checks.__path__):
        if info.name.startswith("_"):
            continue
        try:
            module = importlib.import_module(f"paper_checks.{info.name}")
            if info.ispkg:
                for sub in pkgutil.iter_modules(module.__path__):
                    if not sub.name.startswith("_"):
                        importlib.import_module(f"paper_checks.{info.name}.{sub.name}")
        except Exception:  # noqa: BLE001 - reported by import_errors(), never swallowed
            _IMPORT_ERRORS[info.name] = traceback.format_exc()
        else:
            _IMPORT_ERRORS.pop(info.name, None)


def import_errors() -> dict[str, str]:
    """Topics whose claim modules failed to import, with their tracebacks (empty when all import)."""
    load_all()
    return dict(_IMPORT_ERRORS)


def topics() -> list[str]:
    """Topic names with registered claims, in registration order."""
    load_all()
    return list(dict.fromkeys(c.topic for c in _REGISTRY.values()))


def papers() -> list[str]:
    """Paper keys with registered claims, in registration order."""
    load_all()
    return list(dict.fromkeys(c.paper.key for c in _REGISTRY.values()))


def unknown_name(what: str, value: str, valid: list[str]) -> str:
    """The usage message for an unknown ``--<what> value``: at most five near names, never a wall of them.

    Names containing ``value`` come first (a claim id typed without its paper key), then the closest
    by :func:`difflib.get_close_matches`, each group closest first. When there are few valid names
    they are all listed; otherwise the message says which ``steplab list`` prints them.
    """
    def closeness(name: str) -> float:
        return difflib.SequenceMatcher(None, value, name).ratio()

    near = sorted((v for v in valid if value and value in v), key=closeness, reverse=True)[:5]
    near += [v for v in difflib.get_close_matches(value, valid, n=5) if v not in near]
    message = f"--{what}: unknown {what} {value!r}"
    if near:
        message += f" (did you mean {', '.join(near[:5])}?)"
    if len(valid) <= _FEW_NAMES:
        return f"{message}; valid: {', '.join(valid)}"
    return f"{message}; `steplab list {what}s` shows all {len(valid)}"


def claims(*, paper: str | None = None, claim_id: str | None = None, topic: str | None = None) -> list[Claim]:
    """Registered claims (all topic modules loaded), optionally filtered; in registration order.

    An unknown paper key, topic or claim id raises ``ValueError`` listing the valid names, so a typo
    never selects nothing.
    """
    load_all()
    selected = list(_REGISTRY.values())
    for value, attr, what in ((paper, lambda c: c.paper.key, "paper"), (topic, lambda c: c.topic, "topic"),
                              (claim_id, lambda c: c.id, "claim")):
        if value is None:
            continue
        known = list(dict.fromkeys(attr(c) for c in _REGISTRY.values()))
        if value not in known:
            raise ValueError(unknown_name(what, value, known))
        selected = [c for c in selected if attr(c) == value]
    return selected


def get_claim(claim_id: str) -> Claim:
    """The registered claim with this id."""
    return claims(claim_id=claim_id)[0]
