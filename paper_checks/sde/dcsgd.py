r"""DCSGD on :math:`a x^2/2` under the prescribed normalization: its one-step mean-square factor (threshold
:math:`2/(a(1 + V/N))`) and its Lyapunov exponent, from the per-step multipliers of simulated paths (experiment
``sde.dcsgd_quadratic``).
"""
from __future__ import annotations

import math

from dataclasses import replace

import numpy as np

from paper_checks._checks import Statistical
from paper_checks._registry import Budget, Result, claim
from paper_checks.sde import PAPER
from paper_checks.sde.experiments import _DCSGD_SEED, DCSGD_A, DCSGD_C, DCSGD_CELLS, dcsgd_quadratic
from theory import sde as T


def _cell_factor(cell) -> float:
    om, s1 = cell
    return T.normalization_factor(4, np.asarray(om), s1)


@claim("compagnoni2025.dcsgd_ms_threshold", paper=PAPER, provenance="derived", kind="statistical",
       source="derived here; agrees with Theorem 4.2's step condition at sigma0 = 0, L1 = 0, d = 1",
       statement="DCSGD on f = a x^2/2 with multiplicative noise (1 + sigma1 xi), N agents and Bernoulli compressors of "
                 "variances omega_i has the one-step mean-square factor (1 - eta a)^2 + eta^2 a^2 V/N, "
                 "V = mean_i(omega_i + sigma1^2 (1 + omega_i)): it is mean-square stable iff eta < 2/(a (1 + V/N)).",
       latex=r"\rho=(1-\eta a)^2+\frac{\eta^2a^2\bar V}{N},\ \eta^\ast=\frac{2}{a(1+\bar V/N)}")
def dcsgd_ms_threshold(budget: Budget) -> Result:
    """Measures the mean of the per-step multipliers (x_{k+1}/x_k)^2 along simulated DCSGD paths (i.i.d. on a
    quadratic) at steps c/(a(1+V/N)), c = 1, 2, 3, in four (omega_i, sigma1) cells, one with agent-specific
    omegas; at c = 2 the step is the predicted threshold, where the factor must be 1. Rivals on the same
    estimates: plain GD's factor (1 - eta a)^2 (compression and noise average out), the factor with the noise
    and compression variances added instead of compounded (omega + sigma1^2), and compression ignored."""
    r = dcsgd_quadratic(budget)
    N = 4
    eta = np.array([[c / (DCSGD_A * _cell_factor((om, s1))) for c in DCSGD_C] for om, s1 in DCSGD_CELLS])
    omega = np.array([[om for _ in DCSGD_C] for om, _ in DCSGD_CELLS])
    sigma1 = np.array([[s1 for _ in DCSGD_C] for _, s1 in DCSGD_CELLS])
    result = dcsgd_ms_threshold_checks(DCSGD_A, eta, omega, sigma1, r["rho"], r["rho_se"], over="(cell, c)")
    return replace(
        result,
        detail=f"Mean-square factor at eta = c/(a(1+V/N)), c = {DCSGD_C}, a = {DCSGD_A}, N = {N}, over "
               f"{int(r['n_paths'])} paths x {int(r['n_steps'])} steps per cell ({int(r['n_dropped'])} paths dropped): "
               f"at c = 2 (the threshold) measured {', '.join(f'{v:.3f}' for v in r['rho'][:, 1])}, predicted 1.",
        arrays={"c": r["c"], "rho": r["rho"], "rho_se": r["rho_se"], "rho_theory": result.arrays["rho_theory"]},
        seed=_DCSGD_SEED)


def dcsgd_ms_threshold_checks(a: float, eta: np.ndarray, omega: np.ndarray, sigma1: np.ndarray, rho: np.ndarray,
                              rho_se: np.ndarray, *, over: str = "step size") -> Result:
    r"""Core of ``compagnoni2025.dcsgd_ms_threshold``: the check on measured mean-square factors of DCSGD.

    Per estimate (any shape S): the step ``eta``, the agents' compression variances ``omega`` (S + (N,)) and the noise
    level ``sigma1``; ``rho``, ``rho_se``: the mean of the i.i.d. per-step multipliers :math:`(x_{k+1}/x_k)^2` along
    simulated paths on :math:`a x^2/2`, and its standard error. Predicted (:func:`theory.sde.dcsgd_ms_factor`):

    .. math:: \rho = (1-\eta a)^2 + \eta^2 a^2\,\bar V/N,\qquad \bar V = \frac1N\sum_i\big(\omega_i + \sigma_1^2(1+\omega_i)\big),

    within 4 SE (floored at round-off, :math:`10^{-15}\rho`, where the multipliers are deterministic). Rivals: plain GD's
    factor :math:`(1-\eta a)^2`; the variances added, :math:`\bar V = \overline{\omega + \sigma_1^2}`; compression
    ignored, :math:`\bar V = \sigma_1^2`. ``over`` names what the estimates run over.
    """
    N = omega.shape[-1]
    pred, gd, additive, no_comp = (np.empty(np.shape(eta)) for _ in range(4))
    for i in np.ndindex(np.shape(eta)):
        e, om, s1 = eta[i], np.asarray(omega[i]), sigma1[i]
        pred[i] = T.dcsgd_ms_factor(e, a, N, om, s1)
        gd[i] = (1 - e * a) ** 2
        additive[i] = (1 - e * a) ** 2 + (e * a) ** 2 * np.mean(om + s1**2) / N
        no_comp[i] = (1 - e * a) ** 2 + (e * a) ** 2 * s1**2 / N
    se = np.maximum(rho_se, 1e-15 * rho)
    floored = " (floored at round-off)" if np.any(se > rho_se) else ""
    return Result(
        checks=[Statistical(f"mean-square factor E(x_{{k+1}}/x_k)^2 per {over}", estimate=rho, se=se, predicted=pred,
                            rivals={"plain GD's factor (1 - eta a)^2": gd,
                                    "variances added: omega + sigma1^2": additive,
                                    "compression ignored: sigma1^2 only": no_comp},
                            why=f"standard error of the mean over i.i.d. multipliers (all steps of all paths){floored}; "
                                f"{np.size(rho)} estimates, so 4 SE")],
        arrays={"rho": rho, "rho_se": rho_se, "rho_theory": pred})


@claim("compagnoni2025.normalization_prevents_divergence", paper=PAPER, provenance="derived", kind="statistical",
       source="abstract (normalization as the condition for stability); the Lyapunov analysis is derived here",
       statement="Under the prescribed normalization eta_t = c/((L0 + L1|f'|)(1 + (omega + sigma1^2(1 + omega))/N)), "
                 "DCSGD's paths contract almost surely for every c <= 2 in every compression/noise cell: on a x^2/2 the "
                 "per-step Lyapunov exponent E log|1 - c S/F| is negative (and predicted exactly), strictly below the "
                 "mean-square rate, which the prescription's c < 2 keeps at or below 0.",
       latex=r"\gamma(c)=E\log\Bigl|1-\frac{c\,S}{1+\bar V/N}\Bigr|<\tfrac12\log\rho(c)\le0\ \ (c\le2)")
def normalization_prevents_divergence(budget: Budget) -> Result:
    """Measures the Lyapunov exponent (mean of log|x_{k+1}/x_k|) of normalized DCSGD paths on a x^2/2 (L1 = 0, so
    the prescription is the step c/(a F)) for c = 1, 2, 3 in four cells, against its exact value by quadrature over
    the kept-agent patterns. Rivals: the mean-square rate (1/2) log rho (what the mean-square analysis behind the
    prescription predicts for paths) and the noise-free rate log|1 - c/F| (compression and noise average out).
    (On x^4/4 no normalized run diverges while constant steps do -- experiment ``sde.quartic_divergence``, drawn
    in the figures -- but every bounded-increment rule shares that property, so it is not a check here.)"""
    r = dcsgd_quadratic(budget)
    pred, ms, mean_field = (np.empty((len(DCSGD_CELLS), len(DCSGD_C))) for _ in range(3))
    for i, (om, s1) in enumerate(DCSGD_CELLS):
        F = _cell_factor((om, s1))
        for j, c in enumerate(DCSGD_C):
            eta = c / (DCSGD_A * F)
            pred[i, j] = T.dcsgd_lyapunov(eta, DCSGD_A, 4, np.asarray(om), s1)
            ms[i, j] = 0.5 * math.log(T.dcsgd_ms_factor(eta, DCSGD_A, 4, np.asarray(om), s1))
            mean_field[i, j] = math.log(abs(1 - eta * DCSGD_A))
    return Result(
        checks=[Statistical("Lyapunov exponent E log|x_{k+1}/x_k| of normalized DCSGD per (cell, c)", estimate=r["gamma"],
                            se=r["gamma_se"], predicted=pred,
                            rivals={"mean-square rate (1/2) log rho": ms, "noise-free rate log|1 - c/F|": mean_field},
                            why="standard error of the mean over i.i.d. log-multipliers; quadrature error < 1e-10")],
        detail=f"Lyapunov exponent at c = 2 (the mean-square edge, rho = 1): measured "
               f"{', '.join(f'{v:.3f}' for v in r['gamma'][:, 1])}, predicted {', '.join(f'{v:.3f}' for v in pred[:, 1])} "
               f"(all < 0: paths contract); at c = 3: {', '.join(f'{v:+.3f}' for v in r['gamma'][:, 2])} (the "
               "almost-sure edge lies beyond the mean-square edge c = 2).",
        arrays={"c": r["c"], "gamma": r["gamma"], "gamma_se": r["gamma_se"], "gamma_theory": pred, "gamma_ms": ms},
        seed=_DCSGD_SEED)
