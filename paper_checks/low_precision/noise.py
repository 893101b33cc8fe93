r"""Gradient noise dithers the round-to-nearest freeze, until the update's noise falls below a fraction of an ulp.

With a Gaussian gradient :math:`a(w - w^* + \sigma\xi)` the stored step :math:`\mathrm{rne}(\eta a(e + \sigma\xi)/\mathrm{ulp})`
is random, and the bf16 chain's law on the grid evolves exactly by a banded transition matrix
(:func:`theory.low_precision.rn_sgd_window_mean_sq`). While the update's noise :math:`\eta a\sigma` is a good fraction
of an ulp the chain is dithered like stochastic rounding and its loss sits near float64's; below it the freeze
returns, so lowering the step (a cooldown) can raise the loss by orders of magnitude.
"""
from __future__ import annotations

import numpy as np

import theory.low_precision as th
from paper_checks import STEPLAB, Categorical, Result, Statistical, claim, mean_se
from paper_checks.low_precision import Z
from paper_checks.low_precision import experiments as E


def _float64_window(eta_a: float, e0: float, c: float) -> float:
    """Exact SGD (no rounding): E e_t^2 = e0^2 r^t + (eta a c)^2 (1 - r^t)/(1 - r), r = (1 - eta a)^2, in ulps^2,
    averaged over the window."""
    r = (1 - eta_a) ** 2
    t = np.arange(E.NOISE_STEPS - E.NOISE_WINDOW + 1, E.NOISE_STEPS + 1)
    return float(np.mean(e0**2 * r**t + (eta_a * c) ** 2 * (1 - r**t) / (1 - r)))


@claim("steplab.gradient_noise_dithers_the_freeze", paper=STEPLAB, provenance="derived", kind="statistical",
       source="derived here",
       statement="With Gaussian gradient noise sigma = 10 ulps, round-to-nearest bf16 gradient descent follows the "
                 "exact law of its grid index: near float64's loss while the update's noise eta a sigma is 0.2 ulp "
                 "or more, and frozen again below about 0.15 ulp, so lowering eta a from 0.02 to 0.01 raises the "
                 "window-averaged loss about 260-fold where float64's halves (a cooldown below that point hurts).",
       latex=r"P(k \to k - j) = \Phi\Big(\frac{j + \frac12 - \mu_k}{s}\Big) - \Phi\Big(\frac{j - \frac12 - \mu_k}{s}\Big),"
             r"\ \mu_k = \eta a (k - f),\ s = \eta a\sigma")
def gradient_noise_dithers_the_freeze(budget) -> Result:
    r"""The mean over chains of each chain's window average of :math:`e_t^2/\mathrm{ulp}^2` (``low_precision.noisy_runs``:
    eta a = 0.01 .. 0.1, 600 of 1200 steps, sigma = 10 ulps, w* at f = 0.3 of its cell, start 40 ulps above), with
    the standard error over independent chains, against :func:`theory.low_precision.rn_sgd_window_mean_sq`; and the
    direction in which the loss moves when eta a is lowered from one grid value to the next.

    Rivals: float64 SGD's exact loss (no rounding); the noiseless RN freeze (the band point's square); a smaller
    step always lowering the loss (float64's ordering).
    """
    run = E.noisy_runs(budget)
    etas, m = run["eta_a"], run["mean_sq"]
    est, se = mean_se(m, axis=1)
    frac = E.NOISE_W_STAR / E.ULP - np.floor(E.NOISE_W_STAR / E.ULP)
    law = np.array([th.rn_sgd_window_mean_sq(k, E.NOISE_SIGMA_ULPS, frac, E.NOISE_K0, E.NOISE_STEPS,
                                             E.NOISE_WINDOW)["mean_sq"] for k in etas])
    e0 = E.NOISE_K0 - frac
    exact64 = np.array([_float64_window(k, e0, E.NOISE_SIGMA_ULPS) for k in etas])
    band = np.array([(th.rn_frozen_error(np.array([E.NOISE_W_STAR]), k)[0] / E.ULP) ** 2 for k in etas])
    lower_raises = law[:-1] > law[1:]  # lowering eta a from etas[i + 1] to etas[i] raises the loss
    checks = [
        Statistical("window mean of e^2 / ulp^2 per eta a", estimate=est, se=se, predicted=law, z=Z,
                    why=f"{Z:g} standard errors over independent chains (one window average each); the lattice law is "
                        "exact up to its truncation (< 1e-12 of the mass), so no bias term",
                    rivals={"float64 SGD's exact loss (no rounding)": exact64,
                            "the noiseless RN freeze: the band point squared": band}),
        Categorical("lowering eta a to the next grid value raises the loss", measured=est[:-1] > est[1:],
                    predicted=lower_raises, why="an outcome per pair of step sizes",
                    rivals={"a smaller step always lowers the loss (float64)": exact64[:-1] > exact64[1:]}),
    ]
    return Result(checks, detail="window mean e^2/ulp^2 +- SE (exact law; float64) per eta a: " + ", ".join(
        f"{k:.3g}: {v:.3f} +- {s:.3f} ({w:.3f}; {x:.3f})" for k, v, s, w, x in zip(etas, est, se, law, exact64)),
        seed=E.SEED + 7, arrays={"eta_a": etas, "mean_sq": est, "se": se, "law": law, "float64": exact64})
