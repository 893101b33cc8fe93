r"""Is Theorem 4.3's Grönwall factor :math:`\varphi` needed? On the two extremal :math:`(L_0, L_1)`-smooth functions,
the ridge :math:`F(\langle u, x\rangle)` and the radial :math:`F(\|x\|)`, an exact search of the critical step and
Monte Carlo one-step draws (experiment ``sde.phi_ridge``) find the condition with :math:`\varphi = 1/2` already
sufficient.
"""
from __future__ import annotations

import math

import numpy as np

from paper_checks._checks import Bound, Count, Statistical
from paper_checks._registry import Budget, Result, claim
from paper_checks.sde import PAPER
from paper_checks.sde.experiments import _PHI_SEED, PHI_AGENTS, PHI_MC_STARTS, PHI_NU, phi_ridge
from theory import sde as T

PHI_MC_STEPS = ("steplab", "half_phi", "below", "above")   # h_phi, h_{1/2}, 0.8 h*, 1.25 h*
PHI_LARGE = 0.55                     # "phi is large": phi(L1 h_{1/2} sqrt d) above 1/2 by 10%


def _phi_grid(budget: Budget) -> list[tuple]:
    """Starts of the exact search: (noise, nu, d, N, u = |grad_j|/sigma, a = L1 y) with L0 = L1 = 1 (any other pair is
    a rescaling of x and f)."""
    noises = budget.pick(quick=(("gaussian", None), ("student_t", PHI_NU)),
                         full=(("gaussian", None), ("student_t", PHI_NU), ("student_t", 3.5), ("cauchy", None)))
    us = budget.pick(quick=(0.1, 0.5, 2.0, 1e3), full=(0.01, 0.1, 0.3, 0.5, 1.0, 2.0, 5.0, 1e3))
    as_ = budget.pick(quick=(0.05, 0.5, 2.0, 8.0), full=(0.01, 0.05, 0.2, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0))
    return [(noise, nu, d, n, u, a) for noise, nu in noises for d in (1, 2, 8, 32) for n in (1, 2, 8)
            for u in us for a in as_]


def _phi_scale(d: int, u: float, a: float) -> float:
    """Noise scale sigma that puts every gradient coordinate F'(y)/sqrt(d) at u sigma (L0 = L1 = 1)."""
    return math.expm1(a) / math.sqrt(d) / u


def _ridge_f(y: np.ndarray) -> np.ndarray:
    """The ridge's profile (L0 = L1 = 1) written out directly: e^|y| - 1 - |y| (the problem's definition; the theory
    sums Taylor remainders instead)."""
    return np.expm1(np.abs(y)) - np.abs(y)


def _ridge_delta(d: int, a: float, h: float) -> np.ndarray:
    """F(y - h <u, D>) - F(y) at L1 y = a for every total B = 0..dN of +1 signs (the problem's definition)."""
    z = (2 * np.arange(d * PHI_AGENTS + 1) - d * PHI_AGENTS) / (PHI_AGENTS * math.sqrt(d))
    return _ridge_f(a - h * z) - _ridge_f(np.array(a))


def _radial_delta(d: int, a: float, h: float, s1: np.ndarray, s2: np.ndarray) -> np.ndarray:
    """F(|x - hD|) - F(|x|) at L1 |x| = a for the coordinates' sums (S1, S2) of k_j = N D_j."""
    rho = np.sqrt(np.maximum(a * a - 2 * h * a * s1 / (PHI_AGENTS * math.sqrt(d)) + h * h * s2 / PHI_AGENTS**2, 0.0))
    return _ridge_f(rho) - _ridge_f(np.array(a))


def _mean_se(w: np.ndarray, delta: np.ndarray, n: int) -> tuple[float, float]:
    """Mean of ``delta`` under the empirical weights ``w`` of n draws, and its SE."""
    mu = float(w @ delta)
    return mu, math.sqrt(max(float(w @ delta**2) - mu**2, 0.0) / (n - 1))


def _kurtosis(w: np.ndarray, delta: np.ndarray) -> float:
    r"""Kurtosis :math:`E(\Delta - \mu)^4/\mathrm{Var}^2` of ``delta`` under the exact law ``w``."""
    c = delta - w @ delta
    return float(w @ c**4) / float(w @ c**2) ** 2


def _phi_mc_change(d: int, a: float, counts: np.ndarray, h: float) -> tuple[float, float]:
    """Monte Carlo mean of F(y - h <u, D>) - F(y) over the draws (from the count table) and its SE."""
    n = int(counts.sum())
    return _mean_se(counts / n, _ridge_delta(d, a, h), n)


def _phi_mc_radial(d: int, a: float, r: dict, i: int, h: float) -> tuple[float, float]:
    """Monte Carlo mean of F(|x - hD|) - F(|x|) over the draws (from the (S1, S2) table) and its SE."""
    w = r[f"pair_counts_{i}"] / r[f"pair_counts_{i}"].sum()
    return _mean_se(w, _radial_delta(d, a, h, r[f"s1_{i}"], r[f"s2_{i}"]), int(r["n"]))


def _phi_kurtosis_radial(d: int, u: float, a: float, h: float) -> float:
    """As :func:`_phi_kurtosis` for the radial function (exact multinomial law of (S1, S2))."""
    w, s1, s2 = T.radial_law(d, PHI_AGENTS, T.mean_sign(u, 1.0, "student_t", PHI_NU))
    return _kurtosis(w, _radial_delta(d, a, h, s1, s2))


def _phi_kurtosis(d: int, u: float, a: float, h: float) -> float:
    r"""Kurtosis :math:`E(\Delta - \mu)^4/\mathrm{Var}^2` of one draw's change under the exact binomial law: a sample of n
    draws estimates its own SE to about :math:`\sqrt{\kappa/n}`, so items with :math:`\kappa > n/100` (rare uphill
    moves into the exponential wall carry the mean) are left to the exact sum (design, decided before the draws)."""
    w, _ = T.ridge_law(d, PHI_AGENTS, T.mean_sign(u, 1.0, "student_t", PHI_NU))
    return _kurtosis(w, _ridge_delta(d, a, h))


def _phi_bound_value(d: int, n: int, u: float, a: float, h: float, phi: float) -> float:
    r"""The descent bound :math:`-h\langle\nabla f, m\rangle + h^2(L_0 + L_1G)\varphi\,E\|D\|^2` on the ridge with a given
    value of the factor (1/2: the small-step bound)."""
    g = np.full(d, math.expm1(a) / math.sqrt(d))
    m = np.full(d, T.mean_sign(u, 1.0, "student_t", PHI_NU))
    second = (1 - 1 / n) * float(m @ m) + d / n
    return -h * float(g @ m) + h**2 * math.exp(a) * phi * second


PHI_SHAPES = ("ridge", "radial")


def _phi_shape(shape: str):
    """(critical step, exact one-step change) of the ridge F(<u,x>) or the radial F(|x|)."""
    return {"ridge": (T.ridge_critical_step, T.ridge_one_step_change),
            "radial": (T.radial_critical_step, T.radial_one_step_change)}[shape]


def _phi_feasible(shape: str, d: int, n: int) -> bool:
    """The radial sum runs over C(d + N, N) states; the ridge's over d N + 1. In d = 1 the two functions coincide, so the
    radial one is searched from d = 2 on."""
    return shape == "ridge" or (d > 1 and math.comb(d + n, n) <= T.RADIAL_MAX_STATES)


@claim("compagnoni2025.sign_descent_phi_slack", paper=PAPER, provenance="derived", kind="statistical",
       source="Theorem 4.3's Taylor-remainder bound (secondary sources; its constants not recovered); the extremal "
              "functions, the search and the comparison argument are derived here",
       statement="steplab's one-step descent condition for DSignSGD carries the Grönwall factor phi(L1 h sqrt(d)) = "
                 "(e^a - 1 - a)/a^2 >= 1/2. On the two extremal (L0,L1)-smooth functions built from "
                 "F(y) = (L0/L1^2)(e^(L1|y|) - 1 - L1|y|) (F'' = L0 + L1|F'| everywhere): the ridge F(<u,x>), u = 1/sqrt(d) "
                 "(a sign step with all signs agreeing moves <u,x> by h sqrt(d): the step length inside phi is "
                 "attained) and the radial F(|x|) (curved in every direction: the noise share d/N costs in full; the "
                 "isotropic quadratic near 0), the condition with phi replaced by its small-step value 1/2 is still "
                 "sufficient at every start searched (d = 1, 2, 8, 32; N = 1, 2, 8; Gaussian and Student-t noise; "
                 "|grad_j|/sigma from 0.1 to 1000; L1|x| from 0.05 to 8; the radial function from d = 2 on, where its "
                 "exact sum is feasible), tight (h*/h_{1/2} -> 1) only in the quadratic limit, with room where phi would be largest: "
                 "phi is never needed there, and the condition with phi is conservative by the measured factor "
                 "h*/h_phi. In d = 1 F is the pointwise largest (L0,L1)-smooth function with a given slope, so there "
                 "the phi = 1/2 condition suffices for every (L0,L1)-smooth f at the starts searched.",
       latex=r"\min_{\rm starts} h^\ast/h_{1/2} \ge 1,\quad h_{1/2}:\ \tfrac h2\Bigl[(1-\tfrac1N)\|m\|^2+\tfrac dN\Bigr]"
             r"(L_0+L_1\|\nabla f\|)=\langle\nabla f,m\rangle,\quad f=F(\langle u,x\rangle),\ F(\|x\|)")
def sign_descent_phi_slack(budget: Budget) -> Result:
    """On the ridge F(<u, x>) and the radial F(|x|) (L0 = L1 = 1): (1) the Monte Carlo one-step change of DSignSGD
    (simulator's sign draws, N = 8, Student-t nu = 1.5) at h_phi, h_{1/2}, 0.8 h* and 1.25 h* at five starts, against
    the exact finite sums; rivals: the phi = 1/2 bound and steplab's bound with phi are attained there. (2) whether each
    of those steps descends (items resolved beyond 4 SE) against the exact sign; rival: phi is needed where it is large
    (the h_{1/2} step ascends where phi(L1 h_{1/2} sqrt d) > 0.55). (3) per function, min over the exact search of
    h*/h_{1/2} >= 1 (phi = 1/2 suffices); rival: the phi = 1/2 condition keeps 10% room everywhere. (4) min of
    h*/h_phi >= 1 (steplab's condition); rival: twice its step still descends everywhere."""
    r = phi_ridge(budget)
    n_draws = int(r["n"])
    est, se, exact, half_bound, phi_bound = [], [], [], [], []
    desc_meas, desc_pred, desc_rival = [], [], []
    mc = {"ridge": lambda d, a, i, h: _phi_mc_change(d, a, r[f"counts_{i}"], h),
          "radial": lambda d, a, i, h: _phi_mc_radial(d, a, r, i, h)}
    kurt = {"ridge": _phi_kurtosis, "radial": _phi_kurtosis_radial}
    for shape in PHI_SHAPES:
        critical, change = _phi_shape(shape)
        for i, (d, u, a) in enumerate(PHI_MC_STARTS):
            if not _phi_feasible(shape, d, PHI_AGENTS):
                continue
            args = (d, _phi_scale(d, u, a), PHI_AGENTS, "student_t", PHI_NU)
            hstar = critical(a, *args)
            steps = T.ridge_condition_steps(a, *args)     # both functions have the gradient F'(a) u at x = a u
            hs = {"steplab": steps["steplab"], "half_phi": steps["half_phi"], "below": 0.8 * hstar, "above": 1.25 * hstar}
            for which in PHI_MC_STEPS:
                h = hs[which]
                if kurt[shape](d, u, a, h) > n_draws / 100:
                    continue
                mu, sd = mc[shape](d, a, i, h)
                ex = change(a, h, *args)
                est.append(mu), se.append(sd), exact.append(ex)
                half_bound.append(_phi_bound_value(d, PHI_AGENTS, u, a, h, 0.5))
                phi_bound.append(_phi_bound_value(d, PHI_AGENTS, u, a, h, T.sign_remainder_factor(h * math.sqrt(d))))
                if abs(mu) > 4 * sd:
                    desc_meas.append(mu < 0), desc_pred.append(ex < 0)
                    desc_rival.append(not (which == "half_phi" and steps["phi_at_half"] > PHI_LARGE) and ex < 0)
    # the exact search
    rows = []
    for noise, nu, d, n, u, a in _phi_grid(budget):
        args = (d, _phi_scale(d, u, a), n, noise, nu)
        steps = T.ridge_condition_steps(a, *args)
        for shape in PHI_SHAPES:
            if _phi_feasible(shape, d, n):
                hstar = _phi_shape(shape)[0](a, *args)
                rows.append((shape, noise if nu is None else f"{noise}_{nu:g}", d, n, u, a,
                             hstar / steps["half_phi"], hstar / steps["steplab"], steps["phi_at_half"]))
    cols = list(zip(*rows))
    arrays = {key: np.array(col) for key, col in zip(("shape", "noise", "d", "n_agents", "u", "a", "ratio_half",
                                                       "ratio_phi", "phi_half"), cols)}
    ratio_half, ratio_phi, phi_half = arrays["ratio_half"], arrays["ratio_phi"], arrays["phi_half"]
    # root accuracy: brentq to rtol 1e-14 on h*, the condition steps to 1e-14; 1e-9 leaves room for either's round-off
    root_tol = 1e-9
    bounds, parts = [], []
    for shape in PHI_SHAPES:
        k = arrays["shape"] == shape
        rh, rp, ph = ratio_half[k], ratio_phi[k], phi_half[k]
        big = ph > PHI_LARGE
        w = int(np.argmin(rh))
        bounds.append(Bound(f"min over the search of h*/h_{{1/2}} on the {shape} (the phi = 1/2 condition is sufficient)",
                            measured=float(rh.min()), bound=1.0, side=">=", slack=root_tol,
                            rivals={"the phi = 1/2 condition keeps 10% room everywhere (min ratio >= 1.1)": 1.1},
                            why="exact roots (finite sums, brentq to rtol 1e-14): the slack 1e-9 covers their round-off; "
                                "the ratio tends to 1 in the quadratic limit, where the condition is exact"))
        parts.append(f"{shape} ({int(k.sum())} starts): h*/h_{{1/2}} from {rh.min():.6f} (d = {arrays['d'][k][w]}, "
                     f"N = {arrays['n_agents'][k][w]}, |g_j|/sigma = {arrays['u'][k][w]:g}, L1|x| = {arrays['a'][k][w]:g}) "
                     f"to {rh.max():.1f}, >= {rh[big].min():.2f} where phi(L1 h_{{1/2}} sqrt d) > {PHI_LARGE} "
                     f"({int(big.sum())} starts, phi up to {ph.max():.2f}); h*/h_phi from {rp.min():.4f} to {rp.max():.1f} "
                     f"(median {np.median(rp):.2f})")
    return Result(
        checks=[Statistical("Monte Carlo one-step change on the ridge and the radial function at h_phi, h_{1/2}, "
                            "0.8 h*, 1.25 h* (5 starts)",
                            estimate=np.array(est), se=np.array(se), predicted=np.array(exact),
                            rivals={"the phi = 1/2 bound is attained: -h<g,m> + (h^2/2)(L0 + L1 G) E|D|^2":
                                    np.array(half_bound),
                                    "steplab's bound with phi(L1 h sqrt d) is attained": np.array(phi_bound)},
                            why=f"SE of the mean over {n_draws} draws per start (each draw's change is a function of "
                                "(S1, S2), tabulated); the exact change is a finite sum; items whose one-draw kurtosis "
                                f"exceeds n/100 (their SE is not estimable from n draws) are left out; {len(est)} "
                                "estimates, 4 SE"),
                Count("steps that descend (items resolved by the draws beyond 4 SE)",
                      measured=np.array(desc_meas), predicted=np.array(desc_pred),
                      rivals={f"phi is needed where it is large: the h_1/2 step ascends where phi(L1 h_1/2 sqrt d) > "
                              f"{PHI_LARGE}": np.array(desc_rival)},
                      why="each item's sign is resolved by the Monte Carlo mean beyond 4 SE; the exact change decides "
                          "the prediction"),
                *bounds,
                Bound("min over the search of h*/h_phi, both functions (steplab's condition with phi is sufficient)",
                      measured=float(ratio_phi.min()), bound=1.0, side=">=", slack=root_tol,
                      rivals={"twice steplab's step still descends everywhere (min ratio >= 2)": 2.0},
                      why="exact roots as above; h_phi <= h_{1/2} since phi >= 1/2")],
        detail="L0 = L1 = 1. " + "; ".join(parts) + ". The phi = 1/2 step never ascends: phi is never needed on either "
               f"extremal function; phi itself costs up to a factor {np.max(ratio_phi / ratio_half):.2f} in the step "
               "(the rest of h*/h_phi on the ridge in d > 1 is its use of only E<u,D>^2 of E|D|^2). Monte Carlo "
               f"({n_draws} draws per start, N = {PHI_AGENTS}, Student-t nu = {PHI_NU}): {len(desc_meas)} step signs "
               f"resolved, {int(np.sum(desc_meas))} descend.",
        arrays=arrays, seed=_PHI_SEED)
