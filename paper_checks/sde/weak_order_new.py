r"""Weak order of the paper's new SDEs: DCSGD's first-order and curvature-corrected SDEs and DSignSGD's
first-order SDE against the discrete algorithms on :math:`x^4/4` (experiment ``sde.weak_new``).
"""
from __future__ import annotations

import numpy as np

from paper_checks._checks import Rate
from paper_checks._registry import Budget, Result, claim
from paper_checks.sde import PAPER
from paper_checks.sde.experiments import _WEAK_NEW_SEED, weak_new
from paper_checks.sde.weak_order import WEAK_ORDER_RESOLUTION, _next_order

WEAK_NEW_CASES = (("dcsgd", "first_order"), ("dcsgd", "corrected"), ("dsignsgd", "first_order"))


@claim("compagnoni2025.weak_order_new_sdes", paper=PAPER, provenance="derived", kind="rate",
       coarse_reason=WEAK_ORDER_RESOLUTION,
       source="the paper's SDEs are first-order weak approximations (secondary sources); the setup is derived here",
       statement="With multiplicative noise and compression (DCSGD, N = 4, omega = 1, sigma1 = 0.5) and with Gaussian "
                 "noise for signs (DSignSGD, N = 16), the SDEs approximate the discrete algorithms on x^4/4 with weak "
                 "error O(eta): the first-order and the curvature-corrected DCSGD SDE, and the first-order DSignSGD SDE.",
       latex=r"|E f(x_{T/\eta}) - E f(X_T)| = O(\eta)")
def weak_order_new_sdes(budget: Budget) -> Result:
    """Fits the log-log slope of |E f(x_K) - E f(X_T)| (independent Monte Carlo of the discrete chain and of the
    Euler-Maruyama SDE with dt = eta/4, whose own error is also O(eta)) for each of the three SDEs, against
    order 1; band: 4 SE of the weighted slope plus the slope bias of a fitted C1 eta + C2 eta^2 (two-term fit).
    Rivals: orders 0 (the SDE misses a fixed amount) and 2."""
    w = weak_new(budget)
    eta = w["eta"]
    checks, parts, arrays = [], [], {"eta": eta}
    for method, kind in WEAK_NEW_CASES:
        err = w[f"{method}_mean"] - w[f"{method}_{kind}_mean"]
        se = np.hypot(w[f"{method}_se"], w[f"{method}_{kind}_se"])
        bias = _next_order(eta, err, se, 1)
        rate = Rate(f"log-log slope of |E f(x_K) - E f(X_T)| for the {method} {kind.replace('_', '-')} SDE", x=eta,
                    y=np.abs(err), sigma=se, predicted=1.0, next_order=bias,
                    rivals={"weak order 0 (a fixed gap)": 0.0, "weak order 2": 2.0},
                    why="4 SE of the weighted slope (Monte Carlo SE per point, discrete and SDE independent) plus the "
                        f"slope bias of the fitted C1 eta + C2 eta^2 ({bias:.2f})")
        checks.append(rate)
        parts.append(f"{method}/{kind}: slope {rate.slope:.2f} +- {rate.se:.2f}, |err| {abs(err[0]):.1e} -> "
                     f"{abs(err[-1]):.1e} (min |err|/SE {np.min(np.abs(err) / se):.1f}, diverged "
                     f"{int(w[f'{method}_div'])}/{int(w[f'{method}_{kind}_div'])})")
        arrays[f"{method}_{kind}_err"], arrays[f"{method}_{kind}_se"] = np.abs(err), se
    return Result(checks=checks, detail=f"{int(w['n'])} runs per step size and chain: " + "; ".join(parts) + ".",
                  arrays=arrays, seed=_WEAK_NEW_SEED)
