r"""Momentum on a quadratic: heavy-ball and Nesterov stability regions, and the heavy-ball stationary variance.

Heavy ball (Polyak, 1964) and Nesterov's method on :math:`\lambda x^2/2`, :math:`h = \eta\lambda`,
:math:`0 \le \mu < 1`: stable iff :math:`0 < h < 2(1+\mu)` (heavy ball) or :math:`0 < h < 2(1+\mu)/(1+2\mu)`
(Nesterov), the edge being the flip :math:`p(-1) = 0` of the characteristic polynomial (SECONDARY,
re-derived with sympy). The stationary variance under additive gradient noise,
:math:`\eta\sigma^2(1+\mu)/(\lambda(1-\mu)(2(1+\mu) - \eta\lambda))`, is DERIVED here (discrete Lyapunov
equation).

Polyak's headline, the optimal rate :math:`(\sqrt\kappa-1)/(\sqrt\kappa+1)` of the tuned heavy ball on a quadratic
of condition number :math:`\kappa`, is checked here as steplab's own statement (``steplab.heavy_ball_optimal_rate``):
the paper's words could not be recovered (docs/papers/polyak1964.md says why).
"""
from __future__ import annotations

import numpy as np

import theory.sgd_stability as th
from paper_checks import STEPLAB, Bound, Budget, Count, Exact, Paper, Result, Statistical, claim
from paper_checks.sgd_stability import experiments as ex

PAPER = Paper(
    key="polyak1964", title="Some methods of speeding up the convergence of iteration methods", authors="B. T. Polyak",
    year=1964, venue="USSR Computational Mathematics and Mathematical Physics 4(5)",
)


@claim("polyak1964.momentum_stability_regions", paper=PAPER, provenance="secondary", kind="exact",
       source="heavy ball: Polyak (1964); Nesterov: Nesterov (1983); edges from the characteristic polynomial at z = -1, "
              "re-derived here with sympy",
       statement="On lambda x^2/2 with 0 <= mu < 1, heavy ball is stable iff 0 < eta lambda < 2(1 + mu) and Nesterov's "
                 "method iff 0 < eta lambda < 2(1 + mu)/(1 + 2 mu).",
       latex=r"h_{\rm HB} < 2(1+\mu),\qquad h_{\rm NAG} < \frac{2(1+\mu)}{1+2\mu}")
def momentum_regions(budget: Budget) -> Result:
    """Located edges per mu against the closed forms, and the sign of the simulated growth over an (h, mu) grid."""
    run = ex.momentum_region(budget)
    mu, nes = run["edge_mu"], run["edge_nesterov"]
    hb_pred = np.array([th.momentum_threshold(m, "heavy_ball") for m in mu])
    nag_pred = np.array([th.momentum_threshold(m, "nesterov") for m in mu])
    width = float(np.max((run["hi"] - run["lo"]) / run["crossing"]))
    why = "the sign change of the simulated growth rate lies in the final bracket (its relative width)"
    hb = Exact("heavy-ball edge ĥ(μ), μ = " + str(mu[~nes].tolist()), predicted=hb_pred[~nes], measured=run["crossing"][~nes],
               rtol=width, rivals={"gradient descent's 2 for every μ": 2.0, "Nesterov's 2(1+μ)/(1+2μ)": nag_pred[~nes]},
               why=why)
    nag = Exact("Nesterov edge ĥ(μ), μ = " + str(mu[nes].tolist()), predicted=nag_pred[nes], measured=run["crossing"][nes],
                rtol=width, rivals={"gradient descent's 2 for every μ": 2.0, "heavy ball's 2(1+μ)": hb_pred[nes]}, why=why)
    hh, mm = np.meshgrid(run["h"], run["mu"], indexing="ij")
    measured = np.concatenate([(run["rate_heavy_ball"] < 0).ravel(), (run["rate_nesterov"] < 0).ravel()])
    pred = np.concatenate([(hh < 2 * (1 + mm)).ravel(), (hh < 2 * (1 + mm) / (1 + 2 * mm)).ravel()])
    gd = np.concatenate([(hh < 2).ravel(), (hh < 2).ravel()])
    grid = Count(f"decaying runs on a {hh.shape[0]} x {hh.shape[1]} (h, μ) grid, both methods", measured=measured,
                 predicted=pred, rivals={"gradient descent's region h < 2 for both methods": gd},
                 why="deterministic runs: every grid point must agree (none lies on an edge)")
    return Result([hb, nag, grid], detail=f"edges located to {width:.1e} relative; grid: {int(measured.sum())} of "
                                          f"{measured.size} runs decay",
                  arrays={"h": run["h"], "mu": run["mu"], "rate_heavy_ball": run["rate_heavy_ball"],
                          "rate_nesterov": run["rate_nesterov"], "edge_mu": mu, "edge_nesterov": nes,
                          "edge": run["crossing"]})


@claim("polyak1964.heavy_ball_stationary_variance", paper=PAPER, provenance="derived", kind="statistical",
       source="derived here (discrete Lyapunov equation of the heavy-ball recursion, sympy)",
       statement="Heavy ball with additive gradient noise of variance sigma^2 on lambda x^2/2 has stationary variance "
                 "eta sigma^2 (1 + mu) / (lambda (1 - mu) (2 (1 + mu) - eta lambda)).",
       latex=r"\mathrm{Var}\,x = \frac{\eta\sigma^2(1+\mu)}{\lambda(1-\mu)(2(1+\mu)-\eta\lambda)}")
def stationary_variance(budget: Budget) -> Result:
    """Time-averaged x^2 over independent noisy heavy-ball paths at five (eta, mu) against the closed form."""
    run = ex.momentum_variance(budget)
    eta, mu = run["eta"], run["mu"]
    pred = np.array([th.momentum_stationary_variance(e, 1.0, m, 1.0) for e, m in zip(eta, mu)])
    check = Statistical(
        "stationary E[x²] at (η, μ) = " + str(list(zip(eta.tolist(), mu.tolist()))), estimate=run["mean"], se=run["se"],
        predicted=pred, z=4.0,
        rivals={"without the (1+μ)/(1-μ) factor: ησ²/(λ(2(1+μ) - ηλ))": eta / (2 * (1 + mu) - eta),
                "plain SGD's ησ²/(λ(2 - ηλ))": eta / (2 - np.minimum(eta, 1.9))},
        why="each path's time average after the burn-in is an independent replicate; the burn-in (300 steps) leaves a "
            "transient below |z|^600 <= 1e-13")
    return Result(check, detail=f"{run['n_paths']} paths x {run['n_steps']} steps (burn-in {run['burn']}); diverged: "
                                f"{run['n_diverged'].tolist()}",
                  arrays={"eta": eta, "mu": mu, "mean": run["mean"], "se": run["se"], "predicted": pred}, seed=ex.SEED + 6)


def _prefactor_fit(log_norm: np.ndarray, lo: int, hi: int) -> tuple[float, float]:
    r"""Least squares :math:`\log\|x_t\| = a + b\log t + t\log\rho` over steps ``lo < t <= hi``: (:math:`\hat\rho`, :math:`\hat b`).

    The polynomial prefactor :math:`t^b` is fitted, not assumed: at a double root :math:`\|x_t\| \sim t\rho^t`, and
    a pure exponential fit would read its :math:`\log t` as a rate (a bias of order :math:`1/T`, 1 % at
    :math:`\kappa = 10`).
    """
    t = np.arange(lo + 1, hi + 1, dtype=float)
    design = np.stack([np.ones_like(t), np.log(t), t], axis=1)
    coef = np.linalg.lstsq(design, log_norm[lo:hi], rcond=None)[0]
    return float(np.exp(coef[2])), float(coef[1])


@claim("steplab.heavy_ball_optimal_rate", paper=STEPLAB, provenance="derived", kind="exact",
       source="derived here (sympy: double roots at both ends of the spectrum); the classic result of Polyak (1964), "
              "whose words could not be recovered",
       statement="On a quadratic with curvatures in [m, L], kappa = L/m, heavy ball with eta = 4/(sqrt L + sqrt m)^2 and "
                 "mu = ((sqrt kappa - 1)/(sqrt kappa + 1))^2 contracts ||x_t|| at the rate (sqrt kappa - 1)/(sqrt kappa + 1) "
                 "per step (with a prefactor t: both ends of the spectrum are double roots), and no (eta, mu) gives its "
                 "iteration a smaller spectral radius; gradient descent's best is (kappa - 1)/(kappa + 1).",
       latex=r"\rho^* = \frac{\sqrt\kappa-1}{\sqrt\kappa+1}\ \text{at}\ \eta^* = \frac{4}{(\sqrt L+\sqrt m)^2},\ "
             r"\mu^* = \Big(\frac{\sqrt\kappa-1}{\sqrt\kappa+1}\Big)^2")
def heavy_ball_optimal_rate(budget: Budget) -> Result:
    r"""The contraction rate of :math:`\|x_t\|` at the tuned :math:`(\eta^*, \mu^*)` on quadratics of
    :math:`\kappa` = 10, 100, 1000, 1e4 (six curvatures in :math:`[1/\kappa, 1]`), fitted with its polynomial prefactor
    :math:`t^b` over the second half of a :math:`T`-step run, and the spectral radius of the one-step map read off the
    simulated update, both against :func:`theory.sgd_stability.heavy_ball_optimal`; and the smallest radius of that map
    over an :math:`(\eta, \mu)` grid, bounded below by :math:`\rho^*` (no tuning beats it).

    Catches: the momentum :math:`\mu^* = \rho^{*2}` taken for the rate (a common slip: the tuned momentum is the
    square of the rate), and every rival below. Rivals: gradient descent's optimal :math:`(\kappa-1)/(\kappa+1)`, its
    square root, :math:`(\sqrt\kappa-1)/\sqrt\kappa`.
    """
    run = ex.heavy_ball_rate(budget)
    kappa, T = run["kappa"], int(run["n_steps"])
    tuned = [th.heavy_ball_optimal(1.0 / k, 1.0) for k in kappa]
    pred = np.array([t["rate"] for t in tuned])
    fits = [_prefactor_fit(run["log_norm"][i], T // 2, T) for i in range(kappa.size)]
    early = np.array([_prefactor_fit(run["log_norm"][i], T // 4, T // 2)[0] for i in range(kappa.size)])
    rate, b = np.array([f[0] for f in fits]), np.array([f[1] for f in fits])
    sk = np.sqrt(kappa)
    gd = (kappa - 1) / (kappa + 1)
    rivals = {"gradient descent's optimal (κ−1)/(κ+1)": gd, "√((κ−1)/(κ+1))": np.sqrt(gd),
              "(√κ−1)/√κ": (sk - 1) / sk, "the momentum μ* = ρ*² taken for the rate": pred**2}
    # the fit's bias falls like 1/T^2 (the prefactor's next term is O(1/t)): the window a quarter of the run earlier
    # has 4x the bias, so |rho(late) - rho(early)| = 3x the late window's bias; it is the tolerance
    fit_tol = float(np.max(np.abs(rate - early) / pred))
    checks = [
        Exact("contraction rate of ‖x_t‖ at (η*, μ*), κ = " + str(kappa.tolist()), predicted=pred, measured=rate,
              rtol=fit_tol, rivals=rivals,
              why=f"fit of log‖x_t‖ = a + b log t + t log ρ over steps {T // 2}..{T}; tolerance: its change from the "
                  f"window {T // 4}..{T // 2} (3x the late window's bias, which falls like 1/T²)"),
        Exact("spectral radius of the simulated one-step map at (η*, μ*)", predicted=pred, measured=run["radius_tuned"],
              rtol=1e-7, rivals=rivals,
              why="both ends of the spectrum are double eigenvalues there: round-off of the map's entries (eps = 2.2e-16, "
                  "entries <= 3) moves a double eigenvalue by up to ~sqrt(eps)·3 = 4.5e-8; 1e-7 covers it"),
    ]
    for i, k in enumerate(kappa):
        checks.append(Bound(f"smallest map radius over a {int(run['grid_n'])}² (η, μ) grid, κ = {k:g}",
                            measured=run["grid_min"][i], bound=pred[i], side=">=", slack=1e-7 * pred[i],
                            rivals={"momentum cannot beat gradient descent: ≥ (κ−1)/(κ+1)": gd[i],
                                    "≥ √((κ−1)/(κ+1))": np.sqrt(gd[i]), "≥ (√κ−1)/√κ": (sk[i] - 1) / sk[i]},
                            why="a lower bound over every grid point; slack: the double-eigenvalue round-off (1e-7)"))
    detail = ("rate/ρ* − 1: " + ", ".join(f"{r / p - 1:.1e}" for r, p in zip(rate, pred)) + "; prefactor exponent b̂ = "
              + ", ".join(f"{x:.4f}" for x in b) + " (a double root: 1); grid min/ρ* − 1: "
              + ", ".join(f"{g / p - 1:.1e}" for g, p in zip(run["grid_min"], pred)) + f"; T = {T}")
    return Result(checks, detail=detail,
                  arrays={"kappa": kappa, "rate": rate, "predicted": pred, "gd": gd, "prefactor": b,
                          "radius_tuned": run["radius_tuned"], "grid_min": run["grid_min"]})
