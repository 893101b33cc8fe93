r"""Experiments: named, cached, budgeted simulations that claims and figures both read.

A topic declares each simulation once::

    @experiment("logistic.bifurcation")
    def bifurcation(budget: Budget) -> dict:
        n_c = budget.pick(quick=120, full=700)
        ...
        return {"c": cs, "tail": tail}

Calling ``bifurcation(budget, **config)`` returns the cached result when its key matches
(experiment name, budget, ``config`` by content, and the code version of the experiment's own
topic plus the shared engine; see :mod:`sims.cache`) and computes it otherwise. The grid ranges
live inside the experiment, so editing one changes the topic's code version and recomputes it.
Figures call experiments; they never simulate.
"""
from __future__ import annotations

import inspect

import functools
import re
from dataclasses import dataclass
from typing import Any, Callable

from paper_checks._registry import Budget, topic_of, as_uses, as_budget
from sims.cache import cached

__all__ = ["experiment", "Experiment", "experiments"]

_NAME = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z0-9_]+)+$")
_EXPERIMENTS: dict[str, "Experiment"] = {}


@dataclass(eq=False)
class Experiment:
    """A registered experiment: ``fn(budget, **config) -> dict`` of arrays and JSON scalars."""

    name: str
    topic: str
    fn: Callable[..., dict]
    uses: tuple[str, ...] = ()

    @property
    def scope(self) -> tuple[str, ...]:
        """The topics whose sources key the cache: its own and those it ``uses``."""
        return (self.topic, *self.uses)

    def _default_seed(self, config: dict) -> dict:
        """``{"seed": default}`` when ``fn`` has a ``seed`` keyword with a default that ``config`` does not set, so
        every cache record names the seed its numbers came from."""
        p = inspect.signature(self.fn).parameters.get("seed")
        if p is None or p.default is inspect.Parameter.empty or "seed" in config:
            return {}
        return {"seed": p.default}

    def __call__(self, budget: "Budget | str", **config: Any) -> dict[str, Any]:
        b = as_budget(budget)
        key = {"experiment": self.name, "budget": b.name, **self._default_seed(config), **config}
        return cached(f"exp.{self.name}.{b.name}", key, lambda: self.fn(b, **config), topic=self.scope)


def experiment(name: str, *, uses: tuple[str, ...] = ()) -> Callable[[Callable[..., dict]], Experiment]:
    """Register ``fn(budget, **config) -> dict`` as the cached experiment ``name`` (``<topic>.<what>``).

    ``uses`` names other topics whose theory or simulators the experiment calls (a cross-link), so an
    edit to their sources recomputes it too.
    """
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(f"name: expected '<topic>.<snake_case name>', got {name!r}")
    uses = as_uses(uses)

    def register(fn: Callable[..., dict]) -> Experiment:
        topic = topic_of(fn.__module__)
        if name.split(".")[0] != topic:
            raise ValueError(f"name: experiment {name!r} of topic {topic!r} must start with '{topic}.'")
        if name in _EXPERIMENTS and _EXPERIMENTS[name].fn.__qualname__ != fn.__qualname__:
            raise ValueError(f"name: experiment {name!r} is already registered")
        exp = Experiment(name, topic, fn, uses)
        functools.update_wrapper(exp, fn)
        _EXPERIMENTS[name] = exp
        return exp

    return register


def experiments() -> dict[str, Experiment]:
    """Every registered experiment by name (topic modules loaded)."""
    from paper_checks._registry import load_all

    load_all()
    return dict(_EXPERIMENTS)
