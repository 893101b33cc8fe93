r"""The simulator contract, driven by one table.

``SIMULATORS`` is assembled from ``tests/contract_<topic>.py`` (each defines a list of
:class:`Sim` rows for its topic's public simulators). For every row the generic tests assert:

* **jit equals eager** (slow tier, ``make test-all``): the call under ``jax.disable_jit()`` matches
  the compiled call to round-off. Eager evaluation compiles every primitive of the simulator on its own
  (about 2,000 small XLA programs over the table, two minutes of the fast tier's CPU on two cores),
  and a mutant of a simulator changes both sides alike, so this structural check runs with the
  full-budget claims rather than on every ``make test``;
* **vmap equals a loop**: each point's result does not depend on the other points of its grid or on
  its position in it. One more call at the grid's own shape (so nothing new is compiled), with the
  grid reversed and its first point replaced by a second copy of the last, must give the same rows
  picked the same way. The set of points changes, so a mean or any other coupling across the grid
  shows, and every point but a middle one changes position, so a dependence on the row index (a
  key drawn from it, a padding mix-up) shows;
* **bad input raises** ``ValueError``/``TypeError`` whose message names the parameter;
* **divergence is data**: a diverging configuration returns normally with its runs flagged;
* **NaN only when flagged**: the baseline call (no run diverged) returns finite values in every output, save
  documented NaN padding (``nan_padding``): a NaN beside ``diverged = False`` reads as a broken run;
* **no recompilation**: repeating the call with new data of the same shapes compiles nothing.

A row that cannot take part in one of these names the reason in ``skip`` (shown by pytest).
"""
from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path
from typing import Any

import jax
import jax.monitoring as monitoring
import numpy as np
import pytest

import sims  # noqa: F401  (float64)
from tests._contract_table import Sim  # noqa: F401  (re-exported: contract rows may import it from here)


def _load() -> list[Sim]:
    rows = []
    here = Path(__file__).parent
    for info in pkgutil.iter_modules([str(here)]):
        if info.name.startswith("contract_"):
            rows += importlib.import_module(f"tests.{info.name}").SIMULATORS
    return rows


SIMULATORS = _load()


def _arrays(sim: Sim, out: Any) -> list[np.ndarray]:
    if sim.outputs is not None:
        picked = sim.outputs(out)
    elif isinstance(out, dict):
        picked = [out[k] for k in sorted(out)]
    elif isinstance(out, (tuple, list)):
        picked = list(out)
    else:
        picked = [out]
    return [np.asarray(a) for a in picked]


def _close(sim: Sim, a: list, b: list) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b):
        if x.dtype.kind in "fc":
            np.testing.assert_allclose(x, y, rtol=sim.rtol, atol=sim.atol, equal_nan=True)
        else:
            np.testing.assert_array_equal(x, y)


def _param(check: str):
    rows = [pytest.param(s, id=s.name, marks=pytest.mark.skip(reason=s.skip[check])) if check in s.skip
            else pytest.param(s, id=s.name) for s in SIMULATORS]
    return pytest.mark.parametrize("sim", rows)


def test_table_covers_every_topic():
    from paper_checks import topics

    covered = {s.name.split(".")[0] for s in SIMULATORS}
    assert set(topics()) <= covered, f"topics without contract rows: {set(topics()) - covered}"


@pytest.mark.slow
@_param("jit")
def test_jit_equals_eager(sim):
    compiled = _arrays(sim, sim.call())
    with jax.disable_jit():
        eager = _arrays(sim, sim.call())
    _close(sim, compiled, eager)


@_param("vmap")
def test_vmap_equals_loop(sim):
    if sim.grid is None:
        pytest.skip(f"{sim.name} has no grid axis")
    name, values, axis = sim.grid
    n = len(values)
    assert n >= 2, f"{sim.name}: a grid of one point cannot show independence"
    whole = _arrays(sim, sim.call(**{name: values}))
    # the grid reversed, its first point replaced by a second copy of the last: n = 3 gives points (2, 2, 1)
    picks = np.r_[n - 1, np.arange(n - 1, 0, -1)]
    moved = _arrays(sim, sim.call(**{name: values[picks]}))  # index arrays: typed keys too
    _close(sim, [np.take(w, picks, axis=axis) for w in whole], moved)


@_param("bad")
def test_bad_input_names_the_parameter(sim):
    assert sim.bad, f"{sim.name}: list at least one bad input"
    for overrides, param in sim.bad:
        with pytest.raises((ValueError, TypeError)) as exc:
            sim.call(**overrides)
        assert param in str(exc.value), f"{sim.name}{overrides}: message does not name {param!r}: {exc.value}"


@_param("diverge")
def test_divergence_is_data(sim):
    assert sim.diverging is not None, f"{sim.name}: give a diverging configuration or a skip reason"
    overrides, flag = sim.diverging
    out = sim.call(**overrides)
    assert np.all(np.asarray(flag(out))), f"{sim.name}: diverging runs are not flagged"


def _float_leaves(out: Any) -> dict[str, np.ndarray]:
    items = out.items() if isinstance(out, dict) else enumerate(out if isinstance(out, (tuple, list)) else [out])
    leaves = {}
    for k, v in items:
        a = np.asarray(v)
        if a.dtype.kind in "fc":
            leaves[str(k)] = a
    return leaves


@_param("finite")
def test_nan_only_when_flagged(sim):
    out = sim.call()
    if isinstance(out, dict) and "diverged" in out and np.asarray(out["diverged"]).any():
        pytest.skip(f"{sim.name}: the baseline has diverged runs (their NaN is flagged data)")
    bad = [k for k, a in _float_leaves(out).items() if k not in sim.nan_padding and not np.all(np.isfinite(a))]
    assert not bad, f"{sim.name}: non-finite values in {bad} with no run flagged diverged"


@_param("compile")
def test_no_recompilation(sim):
    assert sim.vary is not None, f"{sim.name}: give new data of the same shapes or a skip reason"
    sim.call()
    compiles = []

    def listen(event, duration, **kw):
        if event.endswith("backend_compile_duration"):
            compiles.append(event)

    monitoring.register_event_duration_secs_listener(listen)
    try:
        sim.call(**sim.vary)
    finally:
        monitoring.unregister_event_duration_listener(listen)  # only ours: others (profilers) keep theirs
    assert not compiles, f"{sim.name}: repeating with new data of the same shapes compiled {len(compiles)} programs"
