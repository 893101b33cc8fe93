r"""Damian, Nichani, Lee (2023): GD at the edge of stability follows the constrained trajectory.

The constrained trajectory is projected gradient flow onto :math:`\{S \le 2/\eta\}`: gradient flow while the sharpness
is below :math:`2/\eta`, then :math:`-\eta\nabla L` with its component that would raise :math:`S` removed
(:func:`sims.eos.mlp_track`, explicit Euler, four substeps per step). With one direction at the edge this is the
one-direction central flow of :mod:`paper_checks.eos.central_flow`. It is compared here with GD's window-averaged
iterate on a 40-parameter tanh network whose exact Hessian is cheap, over 400 steps from several initializations,
against the two unconstrained alternatives: gradient flow, and GD at half the step (stable over the horizon far longer).
"""
from __future__ import annotations

import numpy as np

import sims.eos as sim
import theory.eos as th
from paper_checks import Bound, Count, Paper, Result, claim
from paper_checks.eos import experiments as E

PAPER = Paper(key="damian2023", title="Self-Stabilization: The Implicit Bias of Gradient Descent at the Edge of Stability",
              authors="A. Damian, E. Nichani, J. D. Lee", year=2023, arxiv="2209.15594", venue="ICLR 2023")

RUN = {name: k for k, name in enumerate(sim.TRACK_RUNS)}  # axis 1 of every record of the experiment
# Round-off of the two-sided hold bound (relative to 2/eta): eigh's eigenvalues are accurate to ~1e-15 of the
# Hessian's norm per substep; the recursion sums them over a window's 80 substeps, so 1e-12 leaves a margin of ten.
HOLD_SLACK = 1e-12


def first_catapult_end(sharpness: np.ndarray, threshold: float) -> int:
    """Index of the first sample back below ``threshold`` after the first at or above it (-1 if there is none).

    GD's first crossing of 2/eta starts a catapult: the iterate leaves the constrained trajectory while its
    oscillation grows, and the comparison starts once the sharpness has come back below the edge.
    """
    S = np.asarray(sharpness, float)
    up = np.flatnonzero(S >= threshold)
    if up.size == 0:
        return -1
    down = np.flatnonzero(S[up[0]:] < threshold)
    return int(up[0] + down[0]) if down.size else -1


def edge_hold_excess(sharpness: np.ndarray, remainder: np.ndarray, active: np.ndarray, level: float, *,
                     substeps: int, window: int, relax: float, upper_only: bool = False) -> np.ndarray:
    r"""How far an edge flow's window-end sharpness is from its level beyond what its Euler error allows (relative).

    While the projection is active the explicit Euler step makes :math:`\langle\nabla S, \Delta w\rangle =
    -\omega\,dt\,(S - S_c)` exactly (that is how :math:`\sigma^2` is chosen), so the offset :math:`\delta_n = S_n - S_c`
    obeys :math:`\delta_{n+1} = (1 - \omega dt)\delta_n + e_n`, :math:`e_n` the step's second-order remainder in
    :math:`S`. Over a window of :math:`N` active substeps from :math:`\delta_0` (the previous window's end),
    :math:`|\delta_N| \le (1 - \omega dt)^N|\delta_0| + \max|e_n|/(\omega dt)`. Returned, for every window after the
    first in which every substep was active (per run, flattened):
    :math:`[|\delta_N| - (1 - \omega dt)^N|\delta_0| - \max|e_n|/(\omega dt)]/S_c`, which is :math:`\le 0` up to
    round-off when the flow holds its level as it should, on both sides. ``upper_only``: the same with
    :math:`\max(\delta_N, 0)` in place of :math:`|\delta_N|` (only a rise above the level counts).
    """
    S, rem, act = (np.asarray(a) for a in (sharpness, remainder, active))
    dt = 1.0 / substeps
    keep = 1.0 - relax * dt
    delta = np.abs(S - level)
    end = np.maximum(S - level, 0.0) if upper_only else delta
    excess = end[..., 1:] - keep ** (window * substeps) * delta[..., :-1] - rem[..., 1:] / (relax * dt)
    return excess[act[..., 1:].astype(bool)] / level


def distances(mean_theta: np.ndarray, a: str, b: str) -> np.ndarray:
    """Distance between the window means of trajectories ``a`` and ``b`` (per init and window)."""
    return np.linalg.norm(mean_theta[:, RUN[a]] - mean_theta[:, RUN[b]], axis=-1)


@claim("damian2023.gd_follows_constrained_trajectory", paper=PAPER, provenance="quoted", kind="qualitative",
       source="abstract",
       quote="A key consequence of self-stabilization is that gradient descent at the edge of stability implicitly "
             "follows projected gradient descent (PGD) under the constraint S(\u03b8) \u2264 2/\u03b7.",
       where="arXiv:2209.15594, abstract",
       statement="On a small tanh network trained by full-batch GD at the edge of stability, GD's iterate averaged over "
                 "windows of 20 steps stays nearer, at every window of a 400-step horizon after its first catapult, to "
                 "the constrained trajectory (projected gradient flow onto S <= 2/eta) than to gradient flow or to GD "
                 "at half the step, both of which leave {S <= 2/eta}.",
       latex=r"\|\bar\theta^{\mathrm{GD}}_t - \theta^\dagger_t\| < \|\bar\theta^{\mathrm{GD}}_t - \theta^{\mathrm{GF}}_t\|,"
             r"\ \|\bar\theta^{\mathrm{GD}}_t - \theta^{\eta/2}_t\|")
def gd_follows_constrained_trajectory(budget) -> Result:
    r"""GD's window-mean iterate against the constrained trajectory and the two unconstrained ones, window by window.

    Per initialization of :func:`paper_checks.eos.experiments.constrained` (two at quick, six at full): the windows
    from the end of GD's first catapult (:func:`first_catapult_end`, GD's sharpness back below
    :func:`theory.eos.critical_sharpness`) to step 400. Items: at each such window, :math:`\bar\theta^{GD}` is nearer
    the constrained trajectory :math:`\theta^\dagger` (its window mean) than it is to gradient flow's, and than to GD
    at :math:`\eta/2`'s (both unconstrained, time counted in steps of :math:`\eta`). Rivals: GD follows gradient flow;
    GD follows GD at the smaller, stable step. Bounds: the constrained trajectory keeps :math:`S \le 2/\eta` (up to its
    Euler step) while gradient flow's sharpness leaves it (by more than 50 % at the horizon).
    """
    ex = E.constrained(budget)
    if np.any(ex["diverged"]):
        raise RuntimeError("a trajectory of the constrained experiment diverged")
    eta = float(ex["eta"])
    T = th.critical_sharpness(eta)
    m = ex["mean_theta"]
    start = np.array([first_catapult_end(s, T) for s in ex["sharpness"][:, RUN["gd"]]])
    to_c, to_gf, to_half = distances(m, "gd", "constrained"), distances(m, "gd", "gradient"), distances(m, "gd", "gd_half")
    rows = [(i, k) for i, s0 in enumerate(start) if s0 >= 0 for k in range(s0, m.shape[2])]
    if rows:
        ii, kk = np.array(rows).T
        nearer_gf = to_c[ii, kk] < to_gf[ii, kk]
        nearer_half = to_c[ii, kk] < to_half[ii, kk]
    else:  # GD never crossed the constraint level and came back: nothing follows, one failing item says so
        nearer_gf = nearer_half = np.array([False])
    c = RUN["constrained"]
    held = ex["active"][:, c]
    excess = edge_hold_excess(ex["sharpness"][:, c], ex["euler_remainder"][:, c], held, T, substeps=int(ex["substeps"]),
                              window=int(ex["window"]), relax=float(ex["relax"]))
    if excess.size == 0:  # no held window: the Count above fails and says so; one item keeps the Bound well formed
        excess = np.zeros(1)
    S_gf_end = ex["sharpness"][:, RUN["gradient"], -1]
    S_half_max = np.max(ex["sharpness"][:, RUN["gd_half"]], axis=-1)
    checks = [
        Count("windows after GD's first catapult where GD's averaged iterate is nearer the constrained trajectory than "
              "gradient flow (all inits)", measured=nearer_gf, predicted=True,
              rivals={"GD follows gradient flow (the unconstrained trajectory)": np.zeros(nearer_gf.size, bool)},
              why="'follows' at every window of the horizon, not on average"),
        Count("windows after GD's first catapult where GD's averaged iterate is nearer the constrained trajectory than "
              "GD at eta/2 (all inits)", measured=nearer_half, predicted=True,
              rivals={"GD follows GD at the smaller, stable step eta/2": np.zeros(nearer_half.size, bool)},
              why="'follows' at every window of the horizon, not on average"),
        Count("inits whose GD reaches 2/eta and comes back below it (a catapult, then the edge of stability)",
              measured=start >= 0, predicted=True,
              rivals={"GD never reaches the edge (the constraint never binds)": np.zeros(start.size, bool)},
              why="the comparison needs GD at the edge"),
        Count("inits whose constrained trajectory is held at its level (projection active at every substep of the "
              "last window)", measured=held[:, -1], predicted=True,
              rivals={"the constraint never binds (the constrained trajectory is gradient flow)": np.zeros(held.shape[0], bool)},
              why="the two-sided bound below is checked on these windows"),
        Bound("constrained trajectory's |S - 2/eta| beyond its Euler error, (|delta_N| - (1 - omega dt)^N |delta_0| - "
              "max|e|/(omega dt)) / (2/eta), every window held at the level", measured=excess, bound=0.0, side="<=",
              slack=HOLD_SLACK,
              why="two-sided: the projection gives <grad S, step> = -omega dt (S - 2/eta) exactly, so the offset can only "
                  "come from the step's second-order remainder e (recorded per substep); slack: eigenvalue round-off"),
        Bound("gradient flow's sharpness at the horizon relative to 2/eta", measured=S_gf_end / T, bound=1.5,
              side=">=", why="the unconstrained flow must have left {S <= 2/eta} for the comparison to mean anything"),
        Bound("GD at eta/2: its largest window-end sharpness relative to 2/eta", measured=S_half_max / T, bound=1.1,
              side=">=", why="the other unconstrained rival must leave {S <= 2/eta} too (GD at eta/2 is stable up to "
                             "4/eta); 10 % is far outside any hold tolerance of the constrained trajectory (1e-2)"),
    ]
    second_at_edge = [int(ex["t"][np.argmax(s2 >= 0.99 * T)]) if np.any(s2 >= 0.99 * T) else None
                      for s2 in ex["second"][:, RUN["constrained"]]]
    detail = (f"{start.size} inits {ex['inits'].tolist()}, eta = {eta}, windows of {int(ex['window'])} steps; comparison "
              f"from window {start.tolist()}; at step {int(ex['n_steps'])}: |GD - constrained| = "
              f"{np.round(to_c[:, -1], 3).tolist()}, |GD - gradient flow| = {np.round(to_gf[:, -1], 3).tolist()}, "
              f"|GD - GD(eta/2)| = {np.round(to_half[:, -1], 3).tolist()}; gradient flow's sharpness "
              f"{np.round(S_gf_end, 2).tolist()} (2/eta = {T:g}); the constrained trajectory's second Hessian eigenvalue "
              f"reaches 0.99 x 2/eta at step {second_at_edge}; its |S/(2/eta) - 1| at the held windows' ends is at most "
              f"{np.nanmax(np.where(held, np.abs(ex['sharpness'][:, c] / T - 1), np.nan)):.1e} "
              "(from there two directions sit at the edge and the top eigenvector the projection uses alternates "
              "between them)")
    return Result(checks, detail=detail,
                  arrays={"t": ex["t"], "to_constrained": to_c, "to_gradient": to_gf, "to_half": to_half, "start": start,
                          "sharpness": ex["sharpness"], "second": ex["second"]}, seed=E.SEED)
