r"""Claims (a) and (b) of the abstract: :math:`w^\star` loses local stability exactly at the critical step
:math:`c = \eta\lambda = 2` (the multiplier :math:`1 - c` crosses -1, a 2-cycle is born), and any smaller step converges
from nearby (experiments ``logistic.local_multipliers``, ``logistic.local_convergence``).
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

import theory.logistic as th
from paper_checks import Bound, Budget, Categorical, Count, Exact, Result, claim
from paper_checks.logistic import PAPER
from paper_checks.logistic.experiments import CONV_CS, SEED, _local_datasets, local_convergence, local_multipliers


# ---------------------------------------------------------------------------------------------
# (a) loss of local stability at c = 2
# ---------------------------------------------------------------------------------------------
@claim("meng2024.local_stability_boundary", paper=PAPER, provenance="quoted", kind="exact", source="abstract",
       quote="In fact, the behaviour can be much more complex -- a sequence of period-doubling bifurcations begins "
             "at the critical step size 2/λ, where λ is the largest eigenvalue of the Hessian at the solution.",
       where="arXiv:2406.05033, abstract",
       statement="w* loses local stability, and period doubling begins, exactly at the critical step size "
                 "eta = 2/lambda.",
       latex=r"T'(w^\star) = 1 - \eta\lambda \Rightarrow |T'(w^\star)| = 1 \iff \eta\lambda = 2")
def local_stability_boundary(budget: Budget) -> Result:
    """Critical c where the simulated multiplier at w* crosses -1 (random 1-D and 2-D data) against 2.

    Rivals: stability lost at c = 1 (the 1-D global threshold) or at the classical smooth-convex
    step eta = 2/L_smooth (c = 2 lambda / L_smooth < 2 whenever w* is off the curvature peak);
    and, on the attractors just below/above c = 2, "w* still attracting at 2.02" and "a 4-cycle is born".
    """
    data = local_multipliers(budget)
    sets = _local_datasets(budget)
    ratio = np.array([2 * th.minimizer(z, a)[1] / th.smoothness(z, a) for z, a in sets])
    n = len(sets)
    crit = Exact(
        "critical c = ηλ at which the simulated multiplier at w* crosses −1 (one per dataset)",
        predicted=2.0, measured=data["c_crit"], atol=1e-6,
        rivals={"stability is lost at ηλ = 1 (the 1-D global-convergence threshold)": 1.0,
                "stability is lost at the classical smooth-convex step η = 2/L_smooth": ratio},
        why="the multiplier is affine in c (1 − c); its estimate is biased by the second-order term "
            "|L'''|·|δ|/λ with |δ| ≤ max deviation (≤ 5e-7 here) and by round-off 1e-16/ε ≈ 1e-8 per ratio: "
            "both below 1e-6")
    att = Categorical(
        "attractor period from w* + 1e-4·v at ηλ = 1.98 and 2.02 (one row per dataset)",
        measured=data["periods"].astype(int), predicted=np.tile([1, 2], (n, 1)),
        rivals={"w* is still attracting at ηλ = 2.02 (the threshold lies above)": np.tile([1, 1], (n, 1)),
                "a 4-cycle, not a 2-cycle, is born at ηλ = 2": np.tile([1, 4], (n, 1))},
        why="periods are exact integers (tail tolerance 1e-12 relative; 0.98^5000 leaves nothing of the start)")
    return Result([crit, att], seed=SEED, arrays={"c_crit": data["c_crit"]},
                  detail=f"{n} random datasets (1-D and 2-D): max |c_crit − 2| = "
                         f"{np.max(np.abs(data['c_crit'] - 2)):.1e}; 2λ/L_smooth ranges "
                         f"{ratio.min():.3f}–{ratio.max():.3f}")


# ---------------------------------------------------------------------------------------------
# (b) local convergence below c = 2
# ---------------------------------------------------------------------------------------------
@claim("meng2024.local_convergence_below_2_over_lambda", paper=PAPER, provenance="quoted", kind="bound",
       quote="Using a smaller-than-critical step size guarantees convergence if initialized nearby the solution",
       where="arXiv:2406.05033, abstract",
       source="abstract",
       statement="Any step size eta < 2/lambda gives local convergence: GD initialized near w* converges to it.",
       latex=r"\eta < 2/\lambda \Rightarrow w_t \to w^\star \text{ for } \|w_0 - w^\star\| \text{ small}")
def local_convergence_claim(budget: Budget) -> Result:
    """Runs from within 1e-4 of w* at c in {0.5, 1.5, 1.9, 1.97} reach w*; at c in {2.03, 2.1} they do not.

    Bound: the final distance below c = 2 is at round-off. Count: per run, "converged" against
    c < 2; rivals move the local threshold to c = 1 (the global one) or to 2.05 (beyond the grid's
    resolution).
    """
    data = local_convergence(budget)
    dist, c = data["distance"].ravel(), data["c"].ravel()
    result = local_convergence_checks(
        c, dist, 1e-12,
        why=("a converged iterate sits at w* up to float64 round-off (~1e-16·|w*|, |w*| ≲ 10 here); "
             "the slowest contraction 0.97^3000 ≈ 1e-40 leaves nothing of the 1e-4 start",
             "per-run outcome; beyond c = 2 the 1.03^3000 growth reaches the 2-cycle, O(√(c−2)) away"))
    return replace(result, seed=SEED + 2,
                   detail=f"{data['distance'].shape[0]} random datasets (1-D and 2-D) × c ∈ {CONV_CS.tolist()} × "
                          f"{data['distance'].shape[2]} inits; max distance below c = 2: {dist[c < 2].max():.1e}, "
                          f"min distance above: {dist[c > 2].min():.2e}")


def local_convergence_checks(c: np.ndarray, distance: np.ndarray, tol: float, *, why: tuple[str, str],
                             smooth: float | None = None) -> Result:
    r"""Core of ``meng2024.local_convergence_below_2_over_lambda``: the checks on GD runs started near :math:`w^\star`.

    ``c``: :math:`\eta\lambda` per run; ``distance``: each run's final :math:`\|w_T - w^\star\|_\infty`. A run converged
    if its distance is at most ``tol`` (round-off at :math:`w^\star`). Predicted: converged iff :math:`\eta\lambda < 2`
    (the linearized map's top multiplier :math:`|1 - \eta\lambda| < 1`); a Bound on the distances below 2 and a Count
    of converged runs. ``why``: the justifications of the Bound's tolerance and of the Count's outcomes, which depend
    on the runs' horizon. Rivals: the threshold at :math:`\eta\lambda = 1` (global convergence in 1-D) or 2.05, and,
    when ``smooth`` (:math:`2\lambda/L_{\rm smooth}`) is given, the classical smooth step :math:`\eta < 2/L_{\rm smooth}`.
    """
    rivals = {"local convergence only for ηλ < 1 (as for global convergence)": c < 1,
              "local convergence persists up to ηλ = 2.05": c < 2.05}
    if smooth is not None:
        rivals[f"the classical smooth step η < 2/L_smooth (ηλ < {smooth:.4f})"] = c < smooth
    below = Bound("max ‖w_T − w*‖∞ over runs with ηλ < 2", measured=distance[c < 2], bound=tol, side="<=", why=why[0])
    count = Count(f"runs that converge to w* (‖w_T − w*‖∞ ≤ {tol:g})", measured=distance <= tol, predicted=c < 2,
                  rivals=rivals, why=why[1])
    return Result([below, count])
