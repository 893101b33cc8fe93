r"""Two distinct points suffice to cycle below :math:`2/\lambda` in 1-D: :math:`z = (250, -1)` has a stable 3-cycle
(found by steplab, a counterexample to a naive reading; experiment ``logistic.two_point``).
"""
from __future__ import annotations

import numpy as np

import theory.logistic as th
from paper_checks import STEPLAB, Bound, Budget, Categorical, Exact, Result, claim
from paper_checks.logistic.experiments import TWO_POINT, _stable_three_cycle, two_point


@claim("steplab.two_points_cycle_below_2_over_lambda", paper=STEPLAB, provenance="derived", kind="existence",
       source="found here (search over the two-point family), beside meng2024's cycles; the belief it answers is a naive "
              "reading, not a statement of the paper",
       statement="Two distinct data points suffice for a stable cycle below 2/lambda in 1-D: z = (250, -1), weighted so "
                 "that w* puts the point 250 at margin -9, has a stable 3-cycle at eta*lambda = 1.3, 1.5, 1.9 that "
                 "attracts most starts, while w* stays locally attracting. (A counterexample to the naive belief that "
                 "two-point datasets never cycle below 2/lambda and that three distinct magnitudes are needed.)",
       latex=r"z = (250, -1):\ \exists \text{ stable 3-cycle at } \eta\lambda \in \{1.3, 1.5, 1.9\}")
def two_points_cycle(budget: Budget) -> Result:
    """Periods from theory's 3-cycle (+1e-6) and from w* + 1e-3; the simulated 3-cycle against the scipy roots of
    T^3(u) = u; the autodiff multiplier of T^3 against theory's; its modulus below 1.

    Rivals: two-point datasets never cycle below 2/lambda (periods 1, 1: three distinct magnitudes needed); the
    cycle replaces w* (periods 3, 3); the 2-cycle of the bump-plus-spike picture (periods 2, 1).
    """
    data = two_point(budget)
    z, a = th.two_point_dataset(*TWO_POINT)
    _, lam = th.minimizer(z, a)
    theory = np.array([_stable_three_cycle(z, a, c / lam) for c in data["c"]])
    n = len(data["c"])
    checks = [
        Categorical("attractor period from the 3-cycle (+1e-6) and from w* + 1e-3 (rows: ηλ)",
                    measured=data["period"].astype(int), predicted=np.tile([3, 1], (n, 1)),
                    rivals={"two-point datasets never cycle below 2/λ (three distinct magnitudes needed)":
                            np.tile([1, 1], (n, 1)),
                            "the cycle replaces w* as the attractor": np.tile([3, 3], (n, 1)),
                            "a 2-cycle, as in the bump-plus-spike picture": np.tile([2, 1], (n, 1))},
                    why="periods are exact integers (tail tolerance 1e-12 relative)"),
        Exact("simulated 3-cycle points vs the scipy roots of T³(u) = u", predicted=theory[:, :3],
              measured=data["points"], atol=1e-8,
              why="the attractor test stops within 1e-12 relative and the cycle contracts by |(T³)'| ≤ 0.5 per period"),
        Exact("multiplier (T³)' at the simulated cycle (autodiff) vs theory's", predicted=theory[:, 3],
              measured=data["multiplier"], rtol=1e-6, atol=1e-9,
              why="the simulated point is within 1e-9 of the root; the spike's curvature (up to s²J/4 ≈ 30) "
                  "amplifies that by < 1e3"),
        Bound("|(T³)'| of the simulated 3-cycles (stable iff < 1)", measured=np.abs(data["multiplier"]), bound=1.0,
              why="linear stability of the cycle"),
    ]
    return Result(checks, arrays={k: data[k] for k in ("c", "points", "multiplier", "share_cycling")},
                  detail=f"z = (250, −1), weight {a[0]:.3e} on 250: stable 3-cycles at ηλ = "
                         + ", ".join(f"{c:g} (|mult| {abs(m):.3f}, {100 * f:.0f} % of starts)"
                                     for c, m, f in zip(data["c"], data["multiplier"], data["share_cycling"])))
