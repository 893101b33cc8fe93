r"""Adam's stability threshold with a frozen preconditioner, on your beta_1 values and a random quadratic.

Mirrors claim ``cohen2022.frozen_preconditioner_threshold`` (Cohen et al. 2022: "For Adam with step size η and
β₁ = 0.9, this stability threshold is 38/η"; the general form derived in steplab).

The maths. With :math:`P` frozen, Adam's EMA :math:`m \leftarrow \beta_1 m + (1-\beta_1)g` and step
:math:`x \leftarrow x - \eta P^{-1}m` act along each eigenvector of :math:`P^{-1}H` (eigenvalue :math:`q`) as a
two-step recursion with characteristic polynomial :math:`z^2 - (1+\beta_1-(1-\beta_1)\eta q)z + \beta_1`
(:func:`theory.adaptive_eos.frozen_characteristic_polynomial`); a root crosses :math:`z = -1` at
:math:`\eta q = 2(1+\beta_1)/(1-\beta_1)` (:func:`theory.adaptive_eos.frozen_threshold`).

The measurement. Simulated Adam (:func:`sims.adaptive_eos.adam_quadratic`, bias-corrected, ``precond`` frozen at a
random diagonal in [0.5, 2]) on a random ``d``-dimensional quadratic; the critical step is located by zooming grids
of step sizes (the tail's log-growth changes sign), and the growth rate just above it, by the claim's own measurement
and checks (:func:`paper_checks.adaptive_eos.experiments.frozen_edges`,
:func:`paper_checks.adaptive_eos.thresholds.frozen_preconditioner_threshold_checks`). Rivals: 2 (GD's threshold),
2/(1 - beta_1), 2(1 + beta_1); for the rate, no growth and GD's root.

Run: ``python examples/adaptive_eos.py --beta1 0,0.5,0.9,0.95 --d 4``
"""
from __future__ import annotations

import argparse

import numpy as np

import sims.adaptive_eos as sim
import theory.adaptive_eos as th
from _common import floats, outcome, report
from paper_checks.adaptive_eos.experiments import FROZEN_FACTORS, frozen_edges
from paper_checks.adaptive_eos.thresholds import frozen_preconditioner_threshold_checks
from theory import validate as V

CLAIM = "cohen2022.frozen_preconditioner_threshold"


def run(beta1=(0.0, 0.5, 0.9), d: int = 4, *, seed: int = 0, n_grid: int = 16, rounds: int = 4) -> dict:
    """The simulated critical eta q of frozen-P Adam for each ``beta1``, against 2(1 + beta_1)/(1 - beta_1).

    Returns the outcome of :func:`_common.outcome` plus ``beta1``, ``q`` (lambda_max(P^-1 H)) and ``critical``.
    """
    b1 = np.atleast_1d(V.array("beta1", beta1, ndim=(0, 1), low=0.0, high=0.97))
    d = V.integer("d", d, low=1, high=sim.MAX_DIM)
    n_grid = V.integer("n_grid", n_grid, low=4)
    rounds = V.integer("rounds", rounds, low=1)
    rng = np.random.default_rng(V.integer("seed", seed, low=0))
    A = rng.normal(size=(d, d))
    H = A @ A.T / d + 0.1 * np.eye(d)
    p = rng.uniform(0.5, 2.0, d)
    x0 = rng.normal(size=d)
    ex = frozen_edges(H, p, x0, b1, FROZEN_FACTORS, n_grid=n_grid, rounds=rounds)
    result = frozen_preconditioner_threshold_checks(ex)
    return outcome(CLAIM, result, beta1=b1, q=ex["q"], critical=result.arrays["critical"])

def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--beta1", type=floats, default=[0.0, 0.5, 0.9], help="momenta in [0, 0.97] (default 0,0.5,0.9)")
    p.add_argument("--d", type=int, default=4, help="dimension of the quadratic (default 4)")
    p.add_argument("--seed", type=int, default=0, help="seed of the quadratic, P and the start (default 0)")
    args = p.parse_args(argv)
    try:
        out = run(args.beta1, args.d, seed=args.seed)
    except (TypeError, ValueError) as err:
        p.error(str(err))
    for b, c in zip(out["beta1"], out["critical"]):
        print(f"beta_1 = {b:g}: critical eta q = {c:.6g} (formula {th.frozen_threshold(b):.6g})")
    print(report(out))
    return out


if __name__ == "__main__":
    main()
