r"""Damian, Nichani, Lee: self-stabilization, on the exactly solvable toy :math:`\tfrac12(a + y^2)x^2 - \beta y`.

The toy, its equilibrium and its window are worked out here (sympy, :mod:`theory.eos`); the
mechanism -- sharpening along :math:`y`, oscillation along :math:`x`, the cubic term pulling the
sharpness back to :math:`2/\eta` -- is the paper's. GD is simulated by :func:`sims.eos.poly_gd`.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

import theory.eos as th
from paper_checks import STEPLAB, Count, Exact, Paper, Result, claim
from paper_checks.eos import experiments as E

PAPER = Paper(key="damian2023", title="Self-Stabilization: The Implicit Bias of Gradient Descent at the Edge of Stability",
              authors="A. Damian, E. Nichani, J. D. Lee", year=2023, arxiv="2209.15594", venue="ICLR 2023")

# Relative tolerance of "GD's time averages equal the equilibrium". Inside the window GD converges geometrically to
# the exact 2-cycle; the check functions verify from the closed-form multipliers that after the run the distance left
# is below HOLD_RTOL / 100 at every grid point used (per unit distance at the start), and the 1000-step tail averages
# of a period-2 orbit carry only float64 round-off (~1e-15). Outside the window the averages are off by 1e-2 or more
# (or the run diverges), four decades above.
HOLD_RTOL = 1e-6


def _predictions(eta_a: np.ndarray, beta, eta: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(y*, sigma^2, central-flow loss) per row; NaN where no equilibrium exists."""
    beta = np.broadcast_to(np.asarray(beta, float), eta_a.shape)
    ys, s2, loss = (np.full(eta_a.shape, np.nan) for _ in range(3))
    for i, (e, b) in enumerate(zip(eta_a, beta)):
        if e < 2.0:
            ys[i], s2[i] = th.selfstab_equilibrium(e / eta, b, eta)
            loss[i] = th.selfstab_central_flow_loss(e / eta, b, eta)
    return ys, s2, loss


def _holds(run: dict, ys, s2, loss) -> np.ndarray:
    """Per run: finite, and the tail averages of y, x^2 and L match (y*, sigma^2, L + sigma^2/eta) to HOLD_RTOL."""
    with np.errstate(invalid="ignore"):
        ok = (~run["diverged"]) & np.isfinite(ys)
        for m, p in ((run["mean_y"], ys), (run["mean_x2"], s2), (run["mean_loss"], loss)):
            ok &= np.abs(m - p) <= HOLD_RTOL * np.abs(p)
    return np.asarray(ok, dtype=bool)


def _contraction_left(eta_a: np.ndarray, beta: float, eta: float, n_steps: int) -> float:
    """Largest rho^((n_steps - 2000)/2) over the points whose cycle is stable (rho < 1, closed-form multipliers).

    The distance to the cycle left at the end of the run, per unit distance at the start (the first 2000
    steps are allowed for the approach). Points whose cycle is unstable are not bounded (they must fail).
    """
    rhos = [np.max(np.abs(th.selfstab_cycle_multipliers(e / eta, beta, eta))) for e in eta_a if e < 2.0]
    stable = [r for r in rhos if r < 1.0]
    return float(max(stable) ** ((n_steps - 2000) / 2)) if stable else 0.0


@claim("damian2023.selfstab_equilibrium", paper=PAPER, provenance="derived", kind="exact",
       source="derived here (the toy and its closed form; the self-stabilization mechanism is the paper's, Sec. 4)",
       statement="On L = (a + y^2) x^2 / 2 - beta y, GD settles on an exact 2-cycle x = +-r, y = y* with "
                 "y* = sqrt(2/eta - a) and r^2 = beta/y*: its time averages are <y> = y*, <x^2> = beta/y* and "
                 "<L> = L(0, y*) + sigma^2/eta, the central flow's equilibrium (sharpness a + y*^2 = 2/eta).",
       latex=r"\langle y\rangle = \sqrt{2/\eta - a},\quad \langle x^2\rangle = \sigma^2 = \beta/y^\star,\quad "
             r"\langle L\rangle = L(0, y^\star) + \sigma^2/\eta")
def selfstab_equilibrium(budget) -> Result:
    r"""GD from jittered starts at four (eta*a, beta) inside the window: 1000-step tail averages against the closed forms.

    Measured: :func:`sims.eos.poly_gd` tail averages of :math:`y`, :math:`x^2` and :math:`L` (statistics over
    finite runs only; the count of diverged or non-periodic runs is a separate check). Predicted: the sympy
    equilibrium of :func:`theory.eos.selfstab_equilibrium`. Rivals: GD's averages follow gradient flow (the
    oscillation dies, :math:`\langle x^2\rangle = 0`; :math:`y` keeps growing at :math:`\eta\beta` per step;
    the loss is that of the central point, without :math:`\sigma^2/\eta`).
    """
    run = E.selfstab_points(budget)
    eta_a, beta = run["eta_a"], run["beta"]
    left = max(_contraction_left(np.unique(eta_a[beta == b]), b, E.TOY_ETA, run["n_steps"]) for b in np.unique(beta))
    result = selfstab_equilibrium_checks(eta_a, beta, E.TOY_ETA, run["inits"][:, 1], run["n_steps"], run["diverged"],
                                         run["gap2"], run["mean_y"], run["mean_x2"], run["mean_loss"], left)
    return replace(result, seed=E.SEED)


def selfstab_equilibrium_checks(eta_a: np.ndarray, beta: np.ndarray, eta: float, y0, n_steps: int,
                                diverged: np.ndarray, gap2: np.ndarray, mean_y: np.ndarray, mean_x2: np.ndarray,
                                mean_loss: np.ndarray, left: float) -> Result:
    r"""Core of ``damian2023.selfstab_equilibrium``: the checks on GD's runs of the toy, one per ``(eta_a, beta)`` row.

    Per run, started at :math:`y_0` (``y0``) and run ``n_steps`` at step ``eta``: whether it ``diverged``, the
    two-step gap ``gap2`` :math:`|w_T - w_{T-2}|`, and the 1000-step tail averages of :math:`y`, :math:`x^2`, :math:`L`.
    A Count of runs on a 2-cycle (finite, gap < 1e-9), then, over those runs, Exact checks (``HOLD_RTOL``) against

    .. math:: \langle y\rangle = y^\star = \sqrt{2/\eta - a},\quad \langle x^2\rangle = \beta/y^\star,\quad
              \langle L\rangle = L(0, y^\star) + \sigma^2/\eta .

    ``left``: the distance to the cycle left at the end, per unit distance at the start (closed-form multipliers);
    the tolerance argument needs ``left < HOLD_RTOL / 100``. Rivals (gradient flow): the oscillation dies,
    :math:`\langle x^2\rangle = 0`; :math:`y` keeps growing as :math:`y_0 + \eta\beta T`; the loss is the central
    point's, without :math:`\sigma^2/\eta`.
    """
    beta = np.broadcast_to(np.asarray(beta, float), eta_a.shape)
    ys, s2, loss = _predictions(eta_a, beta, eta)
    finite = ~diverged
    periodic = finite & (gap2 < 1e-9)
    if not left < HOLD_RTOL / 100:  # the tolerance argument needs the run to be long enough for every point used
        raise RuntimeError(f"runs too short: rho^(n/2) = {left:.2e} at the slowest point")
    k = periodic
    gf_y = np.broadcast_to(np.asarray(y0, float), eta_a.shape)[k] + eta * beta[k] * n_steps
    why = (f"inside the window the distance to the 2-cycle contracts by the closed-form multipliers; after "
           f"{n_steps} steps at most {left:.1e} of it is left, and the tail averages of the period-2 orbit "
           "carry only float64 round-off")
    checks = [
        Count("runs ending on a 2-cycle (finite, |w_T - w_{T-2}| < 1e-9)", measured=periodic, predicted=True,
              rivals={"the oscillation dies out and GD converges to a point (gap 0 but <x^2> = 0)":
                      periodic & (mean_x2 < 1e-12)},
              why="every start lies in the cycle's basin at these (eta a, beta); a 2-cycle repeats to round-off"),
        Exact("<y> over the last 1000 steps", predicted=ys[k], measured=mean_y[k], rtol=HOLD_RTOL,
              rivals={"y keeps growing like gradient flow, y0 + eta beta t": gf_y}, why=why),
        Exact("<x^2> over the last 1000 steps", predicted=s2[k], measured=mean_x2[k], rtol=HOLD_RTOL,
              rivals={"GD stops oscillating like gradient flow: <x^2> = 0": np.zeros(int(k.sum()))}, why=why),
        Exact("<L> over the last 1000 steps", predicted=loss[k], measured=mean_loss[k], rtol=HOLD_RTOL,
              rivals={"the average loss is the central point's, L(0, y*) = -beta y*": -beta[k] * ys[k]}, why=why),
    ]
    worst = float(np.max(np.abs(mean_y[k] / ys[k] - 1))) if k.any() else np.nan
    return Result(checks, detail=(f"{int(periodic.sum())}/{periodic.size} runs on a 2-cycle ({int((~finite).sum())} diverged) "
                                  f"at (eta a, beta) in {sorted(set(zip(eta_a.tolist(), beta.tolist())))}; "
                                  f"max |<y>/y* - 1| = {worst:.1e}"),
                  arrays={"eta_a": eta_a, "beta": beta, "mean_y": mean_y, "y_star": ys})


@claim("steplab.validity_window", paper=STEPLAB, provenance="derived", kind="exact",
       source="found here: the window of damian2023's self-stabilization toy, from its 2-cycle's two-step Jacobian "
              "(sympy); the paper states no window",
       statement="The equilibrium prediction (GD's time averages = the central flow's fixed point) holds exactly on a "
                 "window of eta*a: from 7/4, where the 2-cycle's complex multipliers leave the unit circle, up to a fold "
                 "just below 2 (eta*a = 1.999688 at beta = 0.1, eta = 0.5), beyond which GD diverges; below 7/4 GD's "
                 "averages drift off the equilibrium (then GD diverges further down).",
       latex=r"\text{holds} \iff \tfrac74 < \eta a < (\eta a)_{\mathrm{fold}};\ "
             r"|\mu|^2 = \big(1 - \eta\beta/y^\star + 4\eta^2\beta y^\star\big)^2 > 1 \iff \eta a < \tfrac74")
def validity_window(budget) -> Result:
    """Sweep eta*a (uniform grid, and a fine grid near 2); locate where the prediction holds and where GD diverges.

    A grid point *holds* when GD from (0.1, 0) is finite and its tail averages of :math:`y, x^2, L` match the
    closed forms to ``HOLD_RTOL``. The simulated lower edge is the midpoint between the last failing and
    the first holding point of the uniform grid, the upper edge the midpoint between the last holding and
    the first diverging point of the fine grid; each is within half a grid step of the true transition.
    Predictions: the edges of :func:`theory.eos.selfstab_window` (roots of the sympy edge polynomials).
    """
    run = E.selfstab_window(budget)
    eta_a, n_grid, h, h_fine = run["eta_a"], int(run["n_grid"]), float(run["h"]), float(run["h_fine"])
    win = th.selfstab_window(E.TOY_BETA, E.TOY_ETA)
    lower, upper = float(win["lower"]), float(win["upper"])
    ys, s2, loss = _predictions(eta_a, E.TOY_BETA, E.TOY_ETA)
    holds = _holds(run, ys, s2, loss)
    inside = (eta_a > lower) & (eta_a < upper)
    left = _contraction_left(eta_a, E.TOY_BETA, E.TOY_ETA, run["n_steps"])
    if not left < HOLD_RTOL / 100:
        raise RuntimeError(f"runs too short for the tolerance argument: rho^(n/2) = {left:.2e}")

    grid, fine = slice(0, n_grid), slice(n_grid, None)
    g_ea, g_holds = eta_a[grid], holds[grid]
    first = int(np.argmax(g_holds)) if g_holds.any() else 0
    lower_sim = 0.5 * (g_ea[first] + g_ea[first - 1]) if first > 0 else np.nan
    f_ea, f_holds = eta_a[fine], holds[fine]
    last = len(f_holds) - 1 - int(np.argmax(f_holds[::-1])) if f_holds.any() else -1
    upper_sim = 0.5 * (f_ea[last] + f_ea[last + 1]) if 0 <= last < len(f_ea) - 1 else np.nan
    div = run["diverged"]
    div_low = g_ea[(g_ea < lower) & div[grid]]
    checks = [
        Exact("lower edge of the window in eta*a (uniform grid)", predicted=lower, measured=lower_sim, atol=h / 2,
              rivals={"the window extends down to eta*a = 1.5": 1.5,
                      "the cycle is still stable at eta*a = 1.7 (edge moved by 3 %)": 1.7},
              why=f"the transition is located between two grid points {h} apart: half a step is the resolution"),
        Exact("upper edge of the window in eta*a (fine grid)", predicted=upper, measured=upper_sim, atol=h_fine / 2,
              rivals={"the window extends to eta*a = 2, where the equilibrium ceases to exist": 2.0},
              why=f"located between two fine-grid points {h_fine:g} apart: half a step is the resolution"),
        Count("prediction holds at each eta*a (both grids)", measured=holds, predicted=inside,
              rivals={"holds for 1.5 < eta*a < 2": (eta_a > 1.5) & (eta_a < 2.0),
                      "holds wherever the equilibrium exists (eta*a < 2)": eta_a < 2.0},
              why=f"'holds' = tail averages within {HOLD_RTOL:g} (relative) of the closed forms; inside the window "
                  f"at most {left:.1e} of the start's distance is left, outside the averages are off by >= 1e-2"),
        Count("GD diverges beyond the upper edge (both grids)", measured=div[eta_a >= upper],
              predicted=np.ones(int((eta_a >= upper).sum()), bool),
              rivals={"GD converges until eta*a = 2": eta_a[eta_a >= upper] >= 2.0},
              why="past the fold the cycle is a saddle and every point has sharpness >= a; a run is diverged when "
                  "an iterate leaves |w| < 1e50"),
    ]
    detail = (f"holds on {int(holds.sum())}/{holds.size} grid points; simulated window ({lower_sim:.4f}, {upper_sim:.6f}) "
              f"vs closed form ({lower:.4f}, {upper:.6f}) [{win['lower_kind']}, {win['upper_kind']}]; "
              f"GD diverges at eta*a >= {upper_sim:.5f} and again below the window from eta*a = "
              f"{div_low.max() if div_low.size else float('nan'):.3f} down (no closed form)")
    return Result(checks, detail=detail,
                  arrays={"eta_a": eta_a, "holds": holds, "diverged": div, "mean_y": run["mean_y"], "y_star": ys,
                          "mean_x2": run["mean_x2"], "sigma2": s2, "n_grid": np.array(n_grid),
                          "edges": np.array([lower, upper, lower_sim, upper_sim])})
