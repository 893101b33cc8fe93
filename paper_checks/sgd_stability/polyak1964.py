r"""Momentum on a quadratic: heavy-ball and Nesterov stability regions, and the heavy-ball stationary variance.

Heavy ball (Polyak, 1964) and Nesterov's method on :math:`\lambda x^2/2`, :math:`h = \eta\lambda`,
:math:`0 \le \mu < 1`: stable iff :math:`0 < h < 2(1+\mu)` (heavy ball) or :math:`0 < h < 2(1+\mu)/(1+2\mu)`
(Nesterov), the edge being the flip :math:`p(-1) = 0` of the characteristic polynomial (SECONDARY,
re-derived with sympy). The stationary variance under additive gradient noise,
:math:`\eta\sigma^2(1+\mu)/(\lambda(1-\mu)(2(1+\mu) - \eta\lambda))`, is DERIVED here (discrete Lyapunov
equation).
"""
from __future__ import annotations

import numpy as np

import theory.sgd_stability as th
from paper_checks import Budget, Count, Exact, Paper, Result, Statistical, claim
from paper_checks.sgd_stability import _experiments as ex

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
