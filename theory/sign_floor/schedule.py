r"""signSGD along a decaying step size: the exact law of :math:`x_k` evolved on a grid.
"""
from __future__ import annotations

import math

import numpy as np

from theory import validate as V
from theory.sign_floor.multiplicative import NOISES, _law, away_probability
from theory.sign_floor.additive import _cdf

__all__ = ["sign_schedule_mean_f"]


# ----------------------------------------------------------------------------- signSGD along a schedule
def _push(mass: np.ndarray, cells: float) -> np.ndarray:
    r"""Move a piecewise-constant law by ``cells`` (any real number of cells) and project it back on the grid.

    With ``cells`` :math:`= j + \alpha` (:math:`0 \le \alpha < 1`) each cell's mass lands on cells
    :math:`i + j` and :math:`i + j + 1` in the proportions :math:`1 - \alpha` and :math:`\alpha`: the exact
    image, spread uniformly over the grid cells it covers (mean kept, variance up by
    :math:`\alpha(1-\alpha)h^2`). Mass leaving the grid is dropped.
    """
    j = math.floor(cells)
    alpha = cells - j
    out = _shift_cells(mass, j)
    if alpha > 0:
        out = (1 - alpha) * out + alpha * _shift_cells(mass, j + 1)
    return out


def _shift_cells(mass: np.ndarray, cells: int) -> np.ndarray:
    """Move a law by a whole number of cells (exact); mass leaving the grid is dropped (and counted by the caller)."""
    out = np.zeros_like(mass)
    if cells > 0:
        out[cells:] = mass[:-cells]
    elif cells < 0:
        out[:cells] = mass[-cells:]
    else:
        out[:] = mass
    return out


def _rescale(mass: np.ndarray, edges: np.ndarray, factor: float) -> np.ndarray:
    """The law of ``factor * y`` (``factor > 0``) projected on the grid of ``y``."""
    cdf = np.concatenate([[0.0], np.cumsum(mass)])
    return np.diff(np.interp(edges / factor, edges, cdf, left=0.0, right=cdf[-1]))


def _evolve_sign_law(a, eta, sigma, multiplicative, p_const, x0_low, x0_high, cells, law, df) -> np.ndarray:
    """The grid evolution of :func:`sign_schedule_mean_f` at one cell width: :math:`E x_k^2`, k = 0..K."""
    h = 1.0 / cells
    if multiplicative:
        # coordinates y = x / s_k with s_k = max(eta_k, 16 min eta): whole-cell steps while eta_k is the
        # scale; the floor keeps the lagging law of the last steps of a decay on the grid
        scale = np.maximum(eta, min(16 * eta.min(), eta.max()))
        r = p_const / (1 - p_const)
        tail = 3.0 if r == 0 else 1.5 * (math.log(1e-30) / math.log(r) + 3)  # stationary weight beyond: < 1e-45
    else:
        # coordinates z = x / max(eta): the additive law keeps a fixed width in x, below sqrt(eta sigma / a)
        scale = np.full_like(eta, eta.max())
        tail = 12 * math.sqrt(eta.max() * sigma / a) / eta.max() + 3
    top = max(abs(x0_low), abs(x0_high)) / scale[0] + tail
    n_half = int(math.ceil(top * cells))
    if not 2 * n_half <= 4_000_000:
        raise ValueError(f"cells, x0_high: the grid needs {2 * n_half:.3g} cells (the start is {top:.3g} steps from 0); "
                         "expected at most 4e6: lower cells or start closer to 0")
    edges = np.arange(-n_half, n_half + 1) * h
    centres = (edges[:-1] + edges[1:]) / 2
    positive = centres > 0
    lo, hi = x0_low / scale[0], x0_high / scale[0]
    mass = np.diff(np.clip((edges - lo) / (hi - lo), 0.0, 1.0))
    # away-from-0 probability per cell: constant (multiplicative), or F(-a|x|/sigma) on the fixed x-grid
    p = p_const if multiplicative else _cdf(-a * np.abs(centres) * scale[0] / sigma, law, df)
    K = len(eta)
    scales = np.concatenate([scale, [scale[-1]]])  # the state at time k is stored in units of scales[k]
    second = np.empty(K + 1)
    for k in range(K + 1):
        second[k] = scales[k] ** 2 * (np.sum(mass * centres**2) + mass.sum() * h * h / 12)
        if k == K:
            break
        down = np.where(positive, mass * (1 - p), mass * p)  # moves toward -infinity
        up = mass - down
        whole = eta[k] / scales[k] * cells  # the step in cells
        if abs(whole - round(whole)) < 1e-9 * whole:
            whole = round(whole)  # a whole number of cells up to round-off: the move is exact
        mass = _push(down, -whole) + _push(up, whole)
        factor = scales[k] / scales[k + 1]
        if factor != 1.0:
            mass = _rescale(mass, edges, factor)
    return second


def sign_schedule_mean_f(a: float, eta, sigma: float, noise: str = "multiplicative", *, x0_low: float,
                         x0_high: float, cells: int = 64, law: str = "gaussian", df: float | None = None,
                         ) -> tuple[np.ndarray, np.ndarray]:
    r""":math:`E f(x_k)`, :math:`k = 0..K`, of 1-d signSGD along step sizes ``eta`` :math:`= (\eta_0..\eta_{K-1})`.

    :math:`x_0` is uniform on ``(x0_low, x0_high)`` (an interval not containing 0);
    :math:`g = a x(1+\sigma\xi)` (``"multiplicative"``) or :math:`a x + \sigma\xi` (``"additive"``).
    The law of :math:`x_k` is evolved as a piecewise-constant density on a grid: a step sends the
    mass at :math:`x` to :math:`x - \eta_k\,\mathrm{sign}(x)` with probability :math:`1 - p(x)` and to
    :math:`x + \eta_k\,\mathrm{sign}(x)` with probability :math:`p(x)` (:math:`p = F_\xi(-1/\sigma)`, or
    :math:`F_\xi(-a|x|/\sigma)` at the cell centre). The grid has ``cells`` cells per unit of a scale
    :math:`s_k`: for multiplicative noise :math:`s_k = \max(\eta_k, 16\min_j\eta_j)` (the law's width is
    :math:`\propto\eta_k`, so each step moves whole cells and only a change of scale is projected back
    on the grid; the floor keeps the lagging law of a decay's last steps resolved), for additive
    noise :math:`s_k = \max_j \eta_j` (its law keeps a fixed width in :math:`x`; steps with
    :math:`\eta_k < s_k` are projected). A uniform start keeps the law flat within cells, so at a
    constant step the evolution is exact; each projection spreads mass within a cell, an
    :math:`O(h^2)` error. The grid reaches past the start and the stationary law's tail (weight
    beyond the edge below 1e-30).

    Returns ``(mean_f, err)``, both of length :math:`K + 1`: :math:`E f(x_k)` with ``cells`` cells
    per unit, and the change when the cell width is doubled, :math:`|E_h - E_{2h}|`. For an
    :math:`O(h^2)` error this is three times the error of :math:`E_h` (the tests check the ratio 4
    of successive differences).
    """
    a = V.real("a", a, low=0.0, low_open=True)
    eta = V.array("eta", eta, ndim=1, low=0.0, low_open=True)
    V.choice("noise", noise, NOISES)
    sigma = V.real("sigma", sigma, low=0.0, low_open=(noise == "additive"))
    x0_low = V.real("x0_low", x0_low)
    x0_high = V.real("x0_high", x0_high)
    if not x0_high > x0_low:
        raise ValueError(f"x0_high: expected x0_high > x0_low = {x0_low}, got {x0_high}")
    if x0_low < 0 < x0_high:
        raise ValueError(f"x0_low: the start interval must not contain 0 (a grid edge), got ({x0_low}, {x0_high})")
    cells = V.integer("cells", cells, low=2, high=4096)
    if cells % 2:
        raise ValueError(f"cells: expected an even number (the error estimate halves it), got {cells}")
    df = _law(law, df)
    multiplicative = noise == "multiplicative"
    p_const = None
    if multiplicative:
        p_const = away_probability(sigma, law, df)
        if not p_const < 0.5:
            raise ValueError(f"sigma: signSGD contracts only while p = F(-1/sigma) < 1/2, got p = {p_const}")
    args = (a, eta, sigma, multiplicative, p_const, x0_low, x0_high)
    fine = _evolve_sign_law(*args, cells, law, df)
    coarse = _evolve_sign_law(*args, cells // 2, law, df)
    return a / 2 * fine, a / 2 * np.abs(fine - coarse)
