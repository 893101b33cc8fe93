r"""The best constant step against the horizon, eta*(N) ~ N^(-s/(s+1)), on your power-law spectrum and horizons.

Mirrors claim ``li2026.constant_step_exponent`` (the law derived in steplab; Li et al. 2026 study the schedules).

The maths. SGD on a diagonal noisy quadratic with curvatures :math:`\lambda_j = j^{-\beta}`, initial error
:math:`\lambda_j E x_{j,0}^2 = j^{-(1+s\beta)}` and additive noise of variance :math:`\sigma^2\lambda_j` ends a run of
:math:`N` constant steps with :math:`E L_N \approx A(\eta N)^{-s} + C\eta` (:func:`theory.lr_horizon.asymptotic_loss_expr`),
so the best step falls as :math:`N^{-s/(s+1)}`, up to first-order corrections of relative size :math:`\eta\lambda_1`
and :math:`(\eta N)^{-(1-1/\beta)}` (:func:`theory.lr_horizon.slope_correction`).

The measurement. At each horizon the exact final loss (a closed form of the exact moment recursion) is minimized over
:math:`\log\eta` by SciPy's bounded scalar search (no grid); the log-log slope of the optima is compared with
:math:`-s/(s+1)` by the claim's own Rate check (:func:`paper_checks.lr_horizon.constant_step.constant_step_exponent_checks`),
whose band is 4 SE plus twice the largest first-order shift. Rivals: -1/2 for every
shape, -3/4 (a generic bound), 0 (the step transfers). Horizons where the law bends (the best step near the stability
cap :math:`2/\lambda_1`, or :math:`(\eta N)^{1/\beta}` near ``d``) make it fail: that is the law's window.

Run: ``python examples/lr_horizon.py --beta 2 --s 0.5 --sigma2 1 --horizons 1e4,1e5,1e6,1e7``
"""
from __future__ import annotations

import argparse

import numpy as np

import theory.lr_horizon as th
from _common import floats, outcome, report
from paper_checks.lr_horizon.constant_step import constant_step_exponent_checks
from theory import validate as V

CLAIM = "li2026.constant_step_exponent"


def run(beta: float = 2.0, s: float = 0.5, sigma2: float = 1.0, horizons=(1e4, 1e5, 1e6, 1e7), *,
        d: int = 10**6) -> dict:
    """Exact best constant steps at ``horizons`` and their slope against -s/(s+1).

    Returns the outcome of :func:`_common.outcome` plus ``horizons``, ``eta_star`` and the law's ``eta_law``.
    """
    n = np.atleast_1d(V.array("horizons", horizons, ndim=(0, 1), low=1.0))
    if n.size < 3 or np.any(np.diff(n) <= 0) or np.any(n != np.round(n)):
        raise ValueError(f"horizons: expected at least 3 increasing integers, got {horizons!r}")
    eta = np.array([th.optimal_constant_step(int(k), beta, s, sigma2, d)[0] for k in n])
    result = constant_step_exponent_checks(n, eta, beta, s, sigma2, d)
    return outcome(CLAIM, result, horizons=n, eta_star=eta, eta_law=th.asymptotic_step(n, beta, s, sigma2, d))


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--beta", type=float, default=2.0, help="capacity exponent > 1 (default 2)")
    p.add_argument("--s", type=float, default=0.5, help="source exponent > 0 (default 0.5)")
    p.add_argument("--sigma2", type=float, default=1.0, help="noise level sigma^2 > 0 (default 1)")
    p.add_argument("--horizons", type=floats, default=[1e4, 1e5, 1e6, 1e7], help="increasing horizons (steps)")
    p.add_argument("--d", type=int, default=10**6, help="number of modes (default 1e6)")
    args = p.parse_args(argv)
    try:
        out = run(args.beta, args.s, args.sigma2, args.horizons, d=args.d)
    except (TypeError, ValueError) as err:
        p.error(str(err))
    for k, e, law in zip(out["horizons"], out["eta_star"], out["eta_law"]):
        print(f"N = {k:.4g}: eta* = {e:.5g} (law {law:.5g})")
    print(report(out))
    return out


if __name__ == "__main__":
    main()
