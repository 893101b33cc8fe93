r"""Where bf16 round-to-nearest gradient descent freezes, for your step sizes and minimizers.

Mirrors claim ``shang2026.half_ulp_freeze`` (Shang 2026, abstract; the band is steplab's derivation).

The maths. Gradient descent on :math:`f(w) = a(w - w^*)^2/2` with the weight stored in bf16 by round-to-nearest
moves the stored weight by a whole number of ulps, :math:`\mathrm{rne}(\eta a e/\mathrm{ulp})`, and stops for good at
the first grid point where the update :math:`\eta a e` is below half an ulp. Approaching from above, the frozen
error is the grid offset in :math:`[U - \mathrm{ulp}, U)` with :math:`U = \mathrm{ulp}/(2\eta a)`
(:func:`theory.low_precision.rn_frozen_error`), so the floor grows like :math:`1/\eta`.

The measurement. One run per minimizer and step size (:func:`sims.low_precision.gd`, bf16 emulated bit by bit on
float32 words), its final error in ulps against the closed form, run by run, by the claim's own check
(:func:`paper_checks.low_precision.freeze.half_ulp_freeze_checks`). Rivals: the update rounding away only below a
full ulp, a floor of one ulp whatever :math:`\eta`, a floor proportional to :math:`\eta`.

Run: ``python examples/low_precision.py --eta-a 0.02,0.1,0.4 --w-star 1,1.5 --n 200``
"""
from __future__ import annotations

import argparse

import numpy as np
from _common import floats, outcome, report

import sims.low_precision as S
import theory.low_precision as T
from paper_checks.low_precision.freeze import half_ulp_freeze_checks
from theory import validate as V

CLAIM = "shang2026.half_ulp_freeze"


def run(eta_a=(0.02, 0.1, 0.4), w_star=(1.0, 1.5), *, w0: float = 255 / 128, n: int = 200, seed: int = 0) -> dict:
    """Frozen errors of bf16 RN gradient descent from ``w0`` towards minimizers drawn uniformly in ``w_star``.

    ``eta_a``: step sizes times curvature in (0, 1); ``w_star``: the interval ``(low, high)`` of the minimizers,
    inside one binade [2^(e-1), 2^e) that also holds ``w0``, with ``w0`` above it. Returns the outcome of
    :func:`_common.outcome` plus ``eta_a`` and ``n_steps``.
    """
    rates = np.atleast_1d(V.array("eta_a", eta_a, ndim=(0, 1), low=0.0, high=1.0, low_open=True, high_open=True))
    lo, hi = V.array("w_star", w_star, shape=(2,), low=0.0, low_open=True)
    start = V.real("w0", w0, low=0.0, low_open=True)
    n = V.integer("n", n, low=2, high=100_000)
    binade = np.ldexp(1.0, np.frexp(lo)[1] - 1)
    if not (lo < hi <= start < 2 * binade):
        raise ValueError(f"w_star, w0: expected low < high <= w0 inside one binade [{binade:g}, {2 * binade:g}), "
                         f"got w_star = ({lo:g}, {hi:g}), w0 = {start:g}")
    q = binade * 2.0**-7
    ws = np.random.default_rng(seed).uniform(lo, hi, n)
    w0_stored = float(T.round_nearest(start))
    if w0_stored >= 2 * binade:
        raise ValueError(f"w0: {start:g} rounds to {w0_stored:g} in bf16, outside w_star's binade; lower it")
    rates32 = rates.astype(np.float32).astype(float)
    steps = int(2 * np.max(T.reference_freeze_step(w0_stored - lo, rates32, q)) + 20)
    out = S.gd(ws, rates32, w0=w0_stored, n_steps=steps)
    result = half_ulp_freeze_checks(out["w_star"], rates32, out["w"], q)
    return outcome(CLAIM, result, eta_a=rates32, n_steps=steps)


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--eta-a", type=floats, default=[0.02, 0.1, 0.4], help="eta times a, each in (0, 1)")
    p.add_argument("--w-star", type=floats, default=[1.0, 1.5], help="low,high of the minimizers (default 1,1.5)")
    p.add_argument("--w0", type=float, default=255 / 128, help="the start, above the minimizers (default 255/128)")
    p.add_argument("--n", type=int, default=200, help="minimizers (runs per step size, default 200)")
    p.add_argument("--seed", type=int, default=0, help="seed of the minimizers (default 0)")
    args = p.parse_args(argv)
    try:
        out = run(args.eta_a, args.w_star, w0=args.w0, n=args.n, seed=args.seed)
    except (TypeError, ValueError) as err:
        p.error(str(err))
    print(f"{out['n_steps']} steps per run")
    print(report(out))
    return out


if __name__ == "__main__":
    main()
