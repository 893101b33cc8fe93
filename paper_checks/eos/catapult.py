r"""Lewkowycz, Bahri, Dyer, Sohl-Dickstein, Gur-Ari (2020): the catapult phase of large-step-size GD.

The uv model :math:`f = u^\top v/\sqrt m` with one sample (label 0, loss :math:`\tfrac12 f^2`) closes on
:math:`(f, \lambda)` (:func:`theory.eos.catapult_map`): lazy for :math:`\eta\lambda_0 < 2`, a loss spike and
a curvature drop below :math:`2/\eta` for :math:`2 < \eta\lambda_0 < 4`, divergence above 4. Simulated
with the full :math:`m`-dimensional GD of :func:`sims.eos.catapult_gd`.
"""
from __future__ import annotations

import numpy as np

import theory.eos as th
from paper_checks import Bound, Categorical, Count, Exact, Paper, Result, claim
from paper_checks.eos import experiments as E

PAPER = Paper(key="lewkowycz2020", title="The Large Learning Rate Phase of Deep Learning: the Catapult Mechanism",
              authors="A. Lewkowycz, Y. Bahri, E. Dyer, J. Sohl-Dickstein, G. Gur-Ari", year=2020, arxiv="2003.02218")

# The lazy phase moves the curvature by O(f0^2/m): at the widths used (>= 256) that is about 1 % or less; 5 % is
# the resolution at which "the curvature stays put" is asserted.
LAZY_RTOL = 0.05


def measured_phase(diverged, max_loss_ratio) -> np.ndarray:
    """``divergent`` if the run diverged, ``catapult`` if the loss ever rose above its start, else ``lazy``."""
    return np.where(diverged, "divergent", np.where(max_loss_ratio > 1.0 + 1e-12, "catapult", "lazy"))


@claim("lewkowycz2020.catapult_phases", paper=PAPER, provenance="secondary", kind="qualitative",
       source="Sec. 2 (the uv model: lazy / catapult / divergent phases), as relayed by secondary notes",
       statement="In the uv model with one sample, GD is lazy (monotone loss, curvature unchanged) for eta*lambda0 < 2; "
                 "for 2 < eta*lambda0 < 4 the loss spikes and training converges with final eta*lambda < 2; above 4 it "
                 "diverges.",
       latex=r"\eta\lambda_0<2:\ \text{lazy};\ 2<\eta\lambda_0<4:\ \text{catapult},\ \eta\lambda_\infty<2;\ "
             r"\eta\lambda_0>4:\ \text{divergent}")
def catapult_phases(budget) -> Result:
    r"""Phase of every run (coarse grid of eta*lambda0 x seeds, widest network) against :func:`theory.eos.catapult_phase`.

    The measured phase uses only the loss trace and the divergence flag (:func:`measured_phase`). Rival:
    the quadratic (lazy, NTK) picture, converging iff :math:`\eta\lambda_0 < 2`. Bounds: catapult runs end
    with :math:`\eta\lambda < 2`; lazy runs keep :math:`\eta\lambda` within ``LAZY_RTOL`` of :math:`\eta\lambda_0`.
    """
    ex = E.catapult(budget)
    w = int(np.argmax(ex["widths"]))
    nc = int(ex["n_coarse"])
    cs = ex["c"][:nc]
    phase = measured_phase(ex["diverged"][w, :nc], ex["max_loss_ratio"][w, :nc])
    predicted = np.array([[th.catapult_phase(c)] * phase.shape[1] for c in cs])
    quadratic = np.where(cs[:, None] < th.catapult_edges()[0], "lazy", "divergent") * np.ones_like(phase, dtype=object)
    final = ex["final_eta_lambda"][w, :nc]
    cat = predicted == "catapult"
    lazy = predicted == "lazy"
    checks = [
        Categorical("phase of each run (eta*lambda0 x seed)", measured=phase, predicted=predicted,
                    rivals={"quadratic model: converges iff eta*lambda0 < 2": quadratic.astype(str)},
                    why="phases read from the loss trace (any rise above the start) and the divergence flag"),
        Bound("final eta*lambda of catapult-phase runs", measured=final[cat], bound=2.0, side="<=",
              why="converged runs must end below the stability edge 2 of their final curvature"),
        Bound("|final eta*lambda / eta*lambda0 - 1| of lazy-phase runs", measured=np.abs(final[lazy] / cs[:, None].repeat(
            phase.shape[1], 1)[lazy] - 1), bound=LAZY_RTOL, side="<=",
              why=f"the lazy phase moves the curvature by O(f0^2/m), about 1 % or less at m = {int(ex['widths'][w])}"),
    ]
    detail = (f"m = {int(ex['widths'][w])}, {phase.shape[1]} seeds, eta*lambda0 in {cs.tolist()}: "
              + ", ".join(f"{c:g}->{'/'.join(sorted(set(p)))}" for c, p in zip(cs, phase))
              + f"; final eta*lambda in the catapult phase {np.nanmin(final[cat]):.3f}-{np.nanmax(final[cat]):.3f}")
    return Result(checks, detail=detail, arrays={"c": cs, "phase": phase, "final_eta_lambda": final}, seed=E.SEED)


@claim("lewkowycz2020.divergence_edge_at_four", paper=PAPER, provenance="secondary", kind="exact",
       source="Sec. 2 (maximal step eta = 4/lambda0 in the uv model), as relayed by secondary notes",
       statement="The largest trainable step of the uv model is eta*lambda0 = 4, twice the quadratic model's 2; for this "
                 "model (one sample, label 0) the edge is exactly 4 at every width, since lambda grows whenever "
                 "eta*lambda > 4.",
       latex=r"\lambda^+ - \lambda = \tfrac{\eta f^2}{m}(\eta\lambda - 4) \Rightarrow (\eta\lambda_0)_{\max} = 4")
def divergence_edge_at_four(budget) -> Result:
    """Fine grid of eta*lambda0 around 4 (step 0.01) at several widths: where GD starts to diverge.

    Located edge per width: midpoint between the largest value where no seed diverges and the smallest
    where one does (half a grid step of resolution). Rival: the quadratic model's edge 2.
    """
    ex = E.catapult(budget)
    nc, h = int(ex["n_coarse"]), float(ex["h"])
    cs = ex["c"][nc:]
    div = ex["diverged"][:, nc:]            # (width, c, seed)
    any_div = div.any(axis=2)
    edges = []
    for row in any_div:
        k = int(np.argmax(row)) if row.any() else len(row)
        edges.append(0.5 * (cs[k - 1] + cs[k]) if 0 < k < len(cs) else np.nan)
    edges = np.array(edges)
    edge = th.catapult_edges()[1]
    pred = np.broadcast_to(cs[None, :, None] > edge, div.shape)
    checks = [
        Exact("located divergence edge in eta*lambda0, per width", predicted=np.full(edges.size, edge), measured=edges,
              atol=h / 2, rivals={"the quadratic model's edge eta*lambda0 = 2": np.full(edges.size, 2.0)},
              why=f"located between two grid points {h} apart: half a step is the resolution"),
        Count("runs diverging exactly when eta*lambda0 > 4 (all widths and seeds)", measured=div.ravel(),
              predicted=pred.ravel(), rivals={"every run above eta*lambda0 = 2 diverges": np.ones(div.size, bool)},
              why="lambda rises at every step with eta*lambda > 4, so f can never settle"),
    ]
    detail = "located edges: " + ", ".join(f"m = {int(m)}: {e:.3f}" for m, e in zip(ex["widths"], edges))
    return Result(checks, detail=detail, arrays={"widths": ex["widths"], "edges": edges}, seed=E.SEED)
