r"""Derived claims past :math:`c = 2`: the flip normal form's amplitude, the second period doubling :math:`c_2`,
balanced data's single 2-cycle (no cascade), the cascade :math:`c_3, c_4, \ldots` of the 3/4-weighted data and its
Feigenbaum ratio (experiments ``logistic.normal_form``, ``second_doubling``, ``balanced``, ``cascade``).
"""
from __future__ import annotations

import numpy as np
import sympy as sp
from scipy import optimize

import theory.logistic as th
from paper_checks import Budget, Categorical, Exact, Result, claim
from paper_checks.logistic import PAPER
from paper_checks.logistic.experiments import (CASCADE, _normal_form_sets, balanced, cascade, cascade_points,
    normal_form, second_doubling)


# ---------------------------------------------------------------------------------------------
# Derived: the flip normal form at c = 2 and the second period doubling
# ---------------------------------------------------------------------------------------------
@claim("meng2024.normal_form_amplitude", paper=PAPER, provenance="derived", kind="exact", source="derived here",
       statement="Past c = 2 the 2-cycle grows like sqrt(c - 2) with the amplitude of the flip normal form.",
       latex=r"A \simeq \sqrt{(c-2)/(a^2+b)},\ a = -\eta L'''(w^\star)/2,\ b = -\eta L''''(w^\star)/6")
def normal_form_amplitude(budget: Budget) -> Result:
    """A/sqrt(c - 2) from simulated 2-cycles, extrapolated linearly to c -> 2, against 1/sqrt(a^2 + b) as the sympy
    expansion of T(T(x)) - x derives it; the numeric coefficients' closed form against the same derivation.

    Rivals: the amplitude without the cubic coefficient b (1/|a|), and the normal form with a
    factor 2 either way (sqrt(2) times or 1/sqrt(2) times the prediction).
    """
    data = normal_form(budget)
    coefs = [th.normal_form_coefficients(z, a) for z, a in _normal_form_sets(budget)]
    # the prediction is the sympy derivation's A/sqrt(mu) (expansion of T(T(x)) - x), not the coefficient's closed form
    amplitude, a_sym, b_sym = th.normal_form_amplitude()
    derived = sp.lambdify((a_sym, b_sym), amplitude.subs(th.mu, 1), "numpy")
    predicted = np.array([float(derived(co["a"], co["b"])) for co in coefs])
    # A/sqrt(mu) = coefficient + O(mu): the linear fit's intercept removes the O(mu) term
    fits = np.array([np.polyfit(data["mu"], r, 1) for r in data["ratio"]])
    measured = fits[:, 1]
    check = Exact(
        "A/√(c − 2) extrapolated to c → 2 (one per dataset)", predicted=predicted, measured=measured, rtol=1e-5,
        rivals={"no cubic term: A = √(c − 2)/|a|": np.array([1 / abs(co["a"]) for co in coefs]),
                "a factor 2 in the normal form: A = √(2(c − 2)/(a² + b))": np.sqrt(2) * predicted,
                "a factor 2 the other way: A = √((c − 2)/(2(a² + b)))": predicted / np.sqrt(2)},
        why="after the linear extrapolation the residual is O(μ²) relative (~1e-7 at μ ≤ 4e-4); the attractor "
            "tolerance 1e-12 on amplitudes ~2e-2 adds 1e-10")
    closed = Exact(
        "normal_form_coefficients' 1/√(a² + b) vs the sympy derivation's A/√(c − 2) (one per dataset)",
        predicted=predicted, measured=np.array([co["amplitude_coefficient"] for co in coefs]), rtol=1e-12,
        rivals={"no cubic term: A = √(c − 2)/|a|": np.array([1 / abs(co["a"]) for co in coefs])},
        why="the same closed form evaluated twice in float64 (numpy and a lambdified sympy expression): round-off")
    return Result([check, closed], arrays={"mu": data["mu"], "predicted": predicted, "measured": measured},
                  detail="; ".join(f"predicted {p:.6f}, simulated {m:.6f}" for p, m in zip(predicted, measured))
                         + " (first dataset: z = ±1 with weights 0.3/0.7)")


@claim("meng2024.period_four_beyond_second_doubling", paper=PAPER, provenance="derived", kind="exact",
       source="derived here",
       statement="Period doubling continues: the 2-cycle born at c = 2 loses stability at a second doubling c_2, "
                 "beyond which GD settles on a 4-cycle (z = +-1 with 3/4 of the weight on +1: c_2 = 2.6351716).",
       latex=r"(1-\eta L''(u))(1-\eta L''(v)) = -1 \text{ at } c = c_2")
def period_four(budget: Budget) -> Result:
    """c_2 from the exact cycle equations (scipy) against the c where the simulated 2-cycle's multiplier
    (autodiff, below c_2) extrapolates to -1; periods 2, 4, 4 at c_2 - 0.03, c_2 + 0.03, 2.75.

    Rivals: the logistic map's second doubling 1 + sqrt(6) shifted so its first sits at 2 (c_2 = sqrt(6)),
    c_2 moved by 0.01 (a bifurcation diagram's resolution), and "the 2-cycle persists past c_2".
    """
    z, a = CASCADE
    predicted = th.period_doubling_step(z, a)
    data = second_doubling(budget, c2=round(predicted, 10))
    coef = np.polyfit(data["c"], data["multiplier"] + 1, 2)
    roots = np.roots(coef)
    roots = roots[np.isreal(roots)].real
    measured = float(roots[np.argmin(np.abs(roots - data["c"][-1]))])
    lin = np.polyfit(data["c"][-2:], data["multiplier"][-2:] + 1, 1)
    # tolerance: the extrapolation error, estimated by the gap between the linear (last two points) and
    # the quadratic extrapolations, doubled (the cubic term is smaller than the quadratic one it corrects)
    tol = 2 * abs(-lin[1] / lin[0] - measured)
    c2 = Exact("second doubling c₂: simulated multiplier extrapolated to −1 vs the exact cycle equations",
               predicted=predicted, measured=measured, atol=tol,
               rivals={"c₂ = √6 ≈ 2.449 (the logistic map's 1 + √6, shifted so its first doubling sits at 2)":
                       np.sqrt(6.0),
                       "c₂ moved by 0.01 (a bifurcation diagram's resolution)": predicted + 0.01},
               why="extrapolation error estimated by twice the gap between linear and quadratic extrapolations")
    periods = Categorical("attractor period at c₂ − 0.03, c₂ + 0.03 and ηλ = 2.75",
                          measured=data["periods"].astype(int), predicted=[2, 4, 4],
                          rivals={"the 2-cycle persists past c₂": [2, 2, 2], "chaos right after c₂": [2, 0, 0]},
                          why="periods are exact integers (tail tolerance 1e-9 relative)")
    return Result([c2, periods], arrays={"c": data["c"], "multiplier": data["multiplier"]},
                  detail=f"c₂ = {predicted:.7f} (scipy) vs {measured:.7f} (simulation); periods around: "
                         f"{data['periods'].tolist()}")


# ---------------------------------------------------------------------------------------------
# Balanced data: one stable 2-cycle for every c > 2, no cascade
# ---------------------------------------------------------------------------------------------
def _solve_tanh_rival(c: float) -> float:
    """Root of a/tanh(a) = c (the cycle equation with the argument's factor 1/2 dropped)."""
    return float(optimize.brentq(lambda t: t - c * np.tanh(t), 1e-8 + np.sqrt(3 * max(c - 1, 1e-12)) / 4, c + 1))


def _cascade_periods(cs: np.ndarray) -> np.ndarray:
    """Periods that the 3/4 dataset's cascade would give at ``cs``: 2, 4, 8, 16 between its doublings, 0 beyond."""
    pts = cascade_points()
    edges = pts[:5]
    k = np.searchsorted(edges, cs)          # number of doubling points below c
    return np.where(k >= 5, 0, 2 ** np.maximum(k, 0)).astype(int)


@claim("meng2024.balanced_two_cycle", paper=PAPER, provenance="derived", kind="exact", source="derived here",
       statement="On balanced data (z = +-1, weights 1/2) there is no period-doubling cascade: for every c = eta*lambda > 2 "
                 "GD settles on one stable 2-cycle +-a whose half-width solves a / tanh(a/2) = c.",
       latex=r"\frac{a}{\tanh(a/2)} = \eta\lambda,\qquad (T^2)'(a) = \left(1 - \frac{2a}{\sinh a}\right)^2 \in (0, 1)")
def balanced_two_cycle(budget: Budget) -> Result:
    """Simulated 2-cycle half-width against ``theory.logistic.balanced_cycle_amplitude``; periods from five starts
    against 2; the autodiff multiplier of T^2 against (1 - 2a/sinh a)^2.

    Rivals: the flip normal form sqrt(6(c - 2)) used beyond its range; the cycle equation with the factor 1/2
    dropped (a/tanh(a) = c); the cascade of the 3/4-weighted data (periods 4, 8, 16, chaos past its doublings);
    the one-step multiplier 1 - c sech^2(a/2).
    """
    data = balanced(budget)
    cs = data["c"]
    amp = np.array([th.balanced_cycle_amplitude(c) for c in cs])
    n_start = data["period"].shape[1]
    checks = [
        Exact("2-cycle half-width a (one per ηλ)", predicted=amp, measured=data["half_width"], rtol=1e-10,
              rivals={"the flip normal form √(6(ηλ − 2)) holds at every ηλ": np.sqrt(6 * (cs - 2)),
                      "a/tanh(a) = ηλ (the factor 1/2 in the argument dropped)": np.array([_solve_tanh_rival(c) for c in cs])},
              why="the attractor test stops within 1e-12 relative; Brent solves a/tanh(a/2) = c to 1e-15"),
        Categorical("attractor period from 5 starts in [−9, 25] (rows: ηλ)", measured=data["period"].astype(int),
                    predicted=np.full(data["period"].shape, 2),
                    rivals={"balanced data double like the 3/4-weighted data (4, 8, 16, chaos past its doublings)":
                            np.repeat(_cascade_periods(cs)[:, None], n_start, axis=1)},
                    why="periods are exact integers (tail tolerance 1e-12 relative, periods up to 16 tested)"),
        Exact("multiplier (T²)' at the simulated cycle (autodiff)", predicted=[th.balanced_cycle_multiplier(c) for c in cs],
              measured=data["multiplier"], rtol=1e-8, atol=1e-12,
              rivals={"the one-step multiplier 1 − ηλ sech²(a/2) (it would cross −1: a doubling)":
                      1 - cs / np.cosh(amp / 2) ** 2},
              why="the simulated point is within 1e-12 of the exact cycle; the multiplier's derivative there is O(1)"),
    ]
    return Result(checks, arrays={"c": cs, "half_width": data["half_width"], "predicted": amp},
                  detail="ηλ = " + ", ".join(f"{c:g}" for c in cs) + ": every start reaches the 2-cycle ±a; "
                         + ", ".join(f"a({c:g}) = {x:.6f}" for c, x in zip(cs, amp)))


# ---------------------------------------------------------------------------------------------
# The period-doubling cascade of the 3/4-weighted data, and the Feigenbaum ratio
# ---------------------------------------------------------------------------------------------
def _extrapolate_to_minus_one(cs: np.ndarray, mult: np.ndarray) -> tuple[float, float]:
    """Root of the quadratic fit of m(c) + 1, and twice its gap to the linear extrapolation of the last two points."""
    roots = np.roots(np.polyfit(cs, mult + 1, 2))
    roots = roots[np.isreal(roots)].real
    quad = float(roots[np.argmin(np.abs(roots - cs[-1]))])
    lin = np.polyfit(cs[-2:], mult[-2:] + 1, 1)
    return quad, 2 * abs(-lin[1] / lin[0] - quad)


@claim("meng2024.period_doubling_cascade", paper=PAPER, provenance="derived", kind="exact", source="derived here",
       statement="On z = +-1 with 3/4 of the weight on +1 the doublings continue: the 4-cycle loses stability at "
                 "c_3 = 2.8143853 and the 8-cycle at c_4 = 2.853017 (then 16, 32, ...), and by c = 3 no attractor of "
                 "period <= 32 remains.",
       latex=r"(T_{c_k}^{2^{k-1}})'(u) = -1:\ c_3 = 2.8143853,\ c_4 = 2.853017")
def period_doubling_cascade(budget: Budget) -> Result:
    """c_3, c_4 (and c_5 at full) located in simulation -- the autodiff multiplier of the simulated 2^{k-1}-cycle
    extrapolated to -1 -- against the exact cycle equations (scipy); the simulated Feigenbaum ratio
    (c_3 - c_2)/(c_4 - c_3) against theory's; periods 2, 4, 8, 16 between the doublings and none <= 32 at c = 3.

    Rivals: each c_k predicted by Feigenbaum's ratio from the two previous points (universality assumed from the
    start); the ratio already at its limit 4.6692; the cascade halting at period 8, or a stable 32-cycle at c = 3.
    """
    pts = cascade_points()
    data = cascade(budget, points=tuple(round(float(p), 12) for p in pts))
    checks, found = [], {}
    for k in data["k"]:
        k = int(k)
        measured, tol = _extrapolate_to_minus_one(data[f"c_{k}"], data[f"multiplier_{k}"])
        found[k] = measured
        universal = pts[k - 2] + (pts[k - 2] - pts[k - 3]) / th.FEIGENBAUM_DELTA
        checks.append(Exact(
            f"c_{k}: simulated {2 ** (k - 1)}-cycle multiplier extrapolated to −1 vs the exact cycle equations",
            predicted=float(pts[k - 1]), measured=measured, atol=tol,
            rivals={f"c_{k} = c_{k - 1} + (c_{k - 1} − c_{k - 2})/δ (Feigenbaum's ratio from the start)": universal},
            why="extrapolation error estimated by twice the gap between the quadratic and the linear (last two points) "
                "extrapolations of the multiplier"))
    ratio_sim = (found[3] - pts[1]) / (found[4] - found[3])
    ratio_th = (pts[2] - pts[1]) / (pts[3] - pts[2])
    # propagate the c_3, c_4 tolerances into the ratio (first order)
    tol3, tol4 = checks[0].atol, checks[1].atol
    d43 = pts[3] - pts[2]
    ratio_tol = ratio_th * ((tol3 + tol4) / d43 + tol3 / (pts[2] - pts[1]))
    checks.append(Exact("Feigenbaum ratio (c_3 − c_2)/(c_4 − c_3) from the simulated c_3, c_4", predicted=ratio_th,
                        measured=ratio_sim, atol=ratio_tol,
                        rivals={"the ratio has reached Feigenbaum's δ = 4.6692 by the third doubling": th.FEIGENBAUM_DELTA},
                        why="first-order propagation of the c_3, c_4 tolerances"))
    n_start = data["mid_periods"].shape[1]
    expected = np.array([2, 4, 8, 16, 0])
    checks.append(Categorical(
        "attractor period (≤ 32) at the midpoints of [c_1, c_2], ..., [c_4, c_5] and at ηλ = 3 (two starts)",
        measured=data["mid_periods"].astype(int), predicted=np.repeat(expected[:, None], n_start, axis=1),
        rivals={"the cascade halts at period 8": np.repeat(np.array([2, 4, 8, 8, 8])[:, None], n_start, axis=1),
                "a stable 32-cycle at ηλ = 3 (accumulation beyond 3)":
                np.repeat(np.array([2, 4, 8, 16, 32])[:, None], n_start, axis=1)},
        why="periods are exact integers (tail tolerance 1e-10 relative); 0 = no period ≤ 32"))
    return Result(checks, arrays={"points": pts, **{f"c_{k}": data[f"c_{k}"] for k in data["k"]},
                                  **{f"multiplier_{k}": data[f"multiplier_{k}"] for k in data["k"]}},
                  detail="theory c_1..c_7 = " + ", ".join(f"{p:.7f}" for p in pts) + "; simulated "
                         + ", ".join(f"c_{k} = {v:.7f}" for k, v in found.items())
                         + f"; ratio {ratio_sim:.4f} (theory {ratio_th:.4f})")


@claim("meng2024.feigenbaum_ratio", paper=PAPER, provenance="derived", kind="exact", source="derived here",
       statement="The ratios of successive doubling intervals of the 3/4-weighted data converge to Feigenbaum's "
                 "universal delta = 4.6692.",
       latex=r"\delta_k = \frac{c_k - c_{k-1}}{c_{k+1} - c_k} \to \delta = 4.6692\ldots")
def feigenbaum_ratio(budget: Budget) -> Result:
    """delta_k from the doubling points c_1..c_7 (exact cycle equations for periods up to 64) against Feigenbaum's
    constant (a universal number of the renormalization of quadratic maxima, obtained independently of this map).

    Tolerance: the last increment |delta_5 - delta_4| (the sequence converges at least geometrically with ratio
    below 1/2 from k = 3 on, so the remaining error is below the last increment). Rivals: the plateau value
    delta_2 (a cascade read off four doublings); the other Feigenbaum constant alpha = 2.5029; delta_1 (no
    convergence).
    """
    pts = cascade_points()
    ratios = th.feigenbaum_ratios(pts)
    step = abs(ratios[-1] - ratios[-2])
    check = Exact("δ_5 = (c_6 − c_5)/(c_7 − c_6), the last ratio from c_1..c_7", predicted=th.FEIGENBAUM_DELTA,
                  measured=float(ratios[-1]), atol=step,
                  rivals={"the plateau δ_2 = (c_3 − c_2)/(c_4 − c_3) read off the first four doublings": float(ratios[1]),
                          "Feigenbaum's other constant α = 2.5029": 2.502907875095893,
                          "no convergence: every ratio equals δ_1": float(ratios[0])},
                  why="the ratios approach their limit at least geometrically (factor < 1/2 per doubling from k = 3): "
                      "the remaining error is below the last increment")
    errors = np.abs(ratios - th.FEIGENBAUM_DELTA)
    return Result(check, arrays={"ratios": ratios},
                  detail="δ_k = " + ", ".join(f"{r:.5f}" for r in ratios) + "; |δ_k − δ| = "
                         + ", ".join(f"{e:.1e}" for e in errors))
