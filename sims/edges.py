r"""Where a measured quantity crosses a level: the edge locators shared by the threshold claims.

A threshold claim measures an indicator over a grid of a parameter (a step size, a batch size, a compression
level) or a quantity along a run, and asks where it crosses. The pieces, each written once:

* :func:`first_crossing` -- the first index of a sequence at or above a level (a run's sharpness reaching
  :math:`2/\eta`);
* :func:`switch_bracket` -- the grid interval :math:`[g_{i-1}, g_i]` where an off/on indicator (a run diverged, the
  loss stopped decreasing) first switches on, whose half-width is the edge's resolution on that grid;
* :func:`interpolated_crossing` -- the crossing of a measured curve :math:`y(x)` with a level by linear
  interpolation (in :math:`x` or :math:`\log x`) between the two grid points around it, with the delta-method
  standard error from the two points' independent standard errors;
* :func:`refine_crossing` -- a bracket refined round by round, for several items at once, from a measured rate whose
  sign changes at the edge (:math:`q` trial values per round and item).

Pure NumPy: the measurements come from the topics' simulators; what is located here is where they switch.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from theory import validate as V

__all__ = ["first_crossing", "switch_bracket", "interpolated_crossing", "refine_crossing"]


def first_crossing(values: Any, level: float) -> int:
    """The first index ``i`` with ``values[i] >= level``, or -1 when the sequence never reaches ``level``.

    NaN entries never count as reaching it (a diverged record is not a crossing)."""
    v = V.array("values", values, ndim=1, finite=False)
    lvl = V.real("level", level)
    above = v >= lvl
    return int(np.argmax(above)) if above.any() else -1


def _grid(name: str, grid: Any) -> np.ndarray:
    g = V.array(name, grid, ndim=1)
    if g.size < 2 or not np.all(np.diff(g) > 0):
        raise ValueError(f"{name}: expected at least two strictly increasing values, got {g.tolist()!r:.80}")
    return g


def switch_bracket(grid: Any, on: Any, *, monotone: bool = True) -> tuple[float, float]:
    r"""``(grid[i - 1], grid[i])`` for the first ``i`` where the indicator ``on`` is true: the edge lies in that
    interval, and half its width is the resolution the grid gives.

    ``(nan, nan)`` when the indicator never switches on inside the grid or is on at its first point, and, with
    ``monotone`` (the default), when it switches off again after ``i``: a pattern that is not a single off-to-on switch
    contradicts every threshold, and a NaN bracket makes any check built on it fail.
    """
    g = _grid("grid", grid)
    if not isinstance(monotone, (bool, np.bool_)):
        raise TypeError(f"monotone: expected a bool, got {type(monotone).__name__} {monotone!r}")
    raw = np.asarray(on)
    if raw.dtype != bool:
        raise TypeError(f"on: expected an array of booleans, got dtype {raw.dtype}")
    if raw.shape != g.shape:
        raise ValueError(f"on: expected one value per grid point ({g.size}), got shape {raw.shape}")
    if not raw.any() or raw[0]:
        return math.nan, math.nan
    i = int(np.argmax(raw))
    if monotone and not raw[i:].all():
        return math.nan, math.nan
    return float(g[i - 1]), float(g[i])


def interpolated_crossing(x: Any, y: Any, level: float, se: Any = None, *, log_x: bool = False) -> tuple[float, float]:
    r"""Where the measured curve ``y`` over the increasing grid ``x`` first reaches ``level``, by linear interpolation
    between the grid points :math:`k-1, k` around it (in :math:`u = \log x` with ``log_x``):

    .. math:: u^\times = u_{k-1} + (\ell - y_{k-1})\,\frac{u_k - u_{k-1}}{y_k - y_{k-1}},

    and its standard error from independent standard errors ``se`` of the two values (delta method:
    :math:`\partial u^\times/\partial y_{k-1} = -(u_k - u_{k-1})(y_k - \ell)/(y_k - y_{k-1})^2`,
    :math:`\partial u^\times/\partial y_k = -(u_k - u_{k-1})(\ell - y_{k-1})/(y_k - y_{k-1})^2`); the SE is of
    :math:`u^\times`, so of :math:`\log x^\times` with ``log_x`` (a relative error of :math:`x^\times`). Without ``se``
    the error is NaN. A curve that starts at or above ``level``, or never reaches it, raises ``ValueError``.
    """
    if not isinstance(log_x, (bool, np.bool_)):
        raise TypeError(f"log_x: expected a bool, got {type(log_x).__name__} {log_x!r}")
    xs = _grid("x", x)
    if log_x and not np.all(xs > 0):
        raise ValueError(f"x: expected positive values with log_x, got min {xs.min()!r}")
    ys = V.array("y", y, shape=xs.shape)
    lvl = V.real("level", level)
    s = np.full(xs.shape, np.nan) if se is None else V.array("se", se, shape=xs.shape, low=0.0)
    k = int(np.argmax(ys >= lvl))
    if k == 0 or ys[k] < lvl:
        raise ValueError(f"y: expected a curve that starts below level = {lvl} and reaches it, got {ys.tolist()!r:.80}")
    u0, u1 = (math.log(xs[k - 1]), math.log(xs[k])) if log_x else (float(xs[k - 1]), float(xs[k]))
    r0, r1 = ys[k - 1], ys[k]
    ux = u0 + (lvl - r0) * (u1 - u0) / (r1 - r0)
    d0 = -(u1 - u0) * (r1 - lvl) / (r1 - r0) ** 2
    d1 = -(u1 - u0) * (lvl - r0) / (r1 - r0) ** 2
    err = math.sqrt((d0 * s[k - 1]) ** 2 + (d1 * s[k]) ** 2)
    return (math.exp(ux) if log_x else float(ux)), err


def refine_crossing(rate, lo, hi, *, n_points: int = 9, n_rounds: int = 5, geometric: bool = True,
                    max_bytes=None) -> dict:
    r"""Where a measured rate changes sign from negative to non-negative, for several items at once.

    ``rate(values)`` maps an array of shape :math:`(k, q)` (:math:`q` = ``n_points`` trial values per
    item) to measured rates of the same shape. Each round places :math:`q` points (geometric or
    linear) across every item's bracket :math:`[lo_i, hi_i]` and keeps the first sub-interval whose
    right end has a non-negative rate; the crossing is the linear interpolation of the rate in the
    final bracket. Resolution: the final bracket, :math:`(hi - lo)/(q-1)^{R}` for :math:`R` rounds.
    Items whose initial bracket shows no sign change get NaN. Returns ``crossing``, ``lo``, ``hi``
    (final brackets) and ``found``. A NaN rate has no sign (a ``ValueError`` naming ``rate``: counted as
    negative it would move the crossing); :math:`\pm\infty` are signs (a run that blew up or collapsed).
    ``max_bytes``: the allocation limit (:func:`theory.validate.byte_limit`) for a round's ``(items, n_points)``
    trial values and rates (what ``rate`` itself allocates is its own).
    """
    if not callable(rate):
        raise TypeError(f"rate: expected a callable mapping trial values to rates, got {type(rate).__name__}")
    if not isinstance(geometric, (bool, np.bool_)):
        raise TypeError(f"geometric: expected a bool, got {type(geometric).__name__} {geometric!r}")
    lo = V.array("lo", np.atleast_1d(lo), ndim=1, low=0.0 if geometric else None, low_open=geometric)
    hi = V.array("hi", np.atleast_1d(hi), ndim=1)
    if lo.shape != hi.shape or not np.all(hi > lo):
        raise ValueError(f"hi: expected one bracket end above each lo, got lo={lo.tolist()} hi={hi.tolist()}")
    q = V.integer("n_points", n_points, low=2)
    rounds = V.integer("n_rounds", n_rounds, low=1)
    V.check_bytes({"n_points": q, "lo": f"{lo.size} items"}, 6 * 8 * lo.size * q,
                  what="a round's trial values, rates and masks", max_bytes=max_bytes)
    found = np.ones(lo.size, dtype=bool)
    r_lo = r_hi = np.zeros(lo.size)
    for _ in range(rounds):  # refinement rounds over a parameter, not optimisation steps
        t = np.linspace(0.0, 1.0, q)
        vals = (lo[:, None] * (hi / lo)[:, None] ** t) if geometric else lo[:, None] + (hi - lo)[:, None] * t
        r = np.asarray(rate(vals), dtype=float)
        if r.shape != vals.shape:
            raise ValueError(f"rate: expected rates of shape {vals.shape}, got {r.shape}")
        if np.isnan(r).any():
            raise ValueError(f"rate: returned NaN at {np.isnan(r).sum()} of {r.size} trial values (a rate needs a sign)")
        up = r >= 0
        ok = ~up[:, 0] & up.any(axis=1)
        found &= ok
        j = np.where(ok, np.argmax(up, axis=1), 1)
        rows = np.arange(lo.size)
        lo, hi = vals[rows, j - 1], vals[rows, j]
        r_lo, r_hi = r[rows, j - 1], r[rows, j]
    with np.errstate(invalid="ignore", divide="ignore"):
        crossing = lo + (hi - lo) * (-r_lo) / (r_hi - r_lo)
    crossing = np.where(found & np.isfinite(crossing), crossing, np.nan)
    return {"crossing": crossing, "lo": lo, "hi": hi, "found": found}
