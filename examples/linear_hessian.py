r"""The largest step at which GD trains a deep linear classifier, on your class sizes, depth and steps.

Mirrors claim ``hessian2026.max_lr_law`` (the linear-network Hessian paper, 2026; law derived in steplab).

The maths. Fit one-hot labels of :math:`K` classes with proportions :math:`\pi_k` by a depth-:math:`L`
linear network :math:`W_L\cdots W_1` under :math:`\mathcal L = \tfrac1{2n}\lVert W_L\cdots W_1X - Y\rVert_F^2`
with whitened inputs (:math:`XX^\top = nI`). At a balanced global minimum the sharpness is
:math:`\lambda_{\max} = L\,\pi_{\max}^{1-1/L}`, and balanced minima are the flattest points of their
gauge orbit, so no global minimum is linearly stable for GD beyond
:math:`\eta_c = 2/(L\,\pi_{\max}^{1-1/L})` (:func:`theory.linear_hessian.critical_step`): GD from a small
initialization converges for :math:`\eta < \eta_c` and cannot for :math:`\eta > \eta_c`.

The measurement. One GD run per step size :math:`\eta = r\,\eta_c` (``ratios`` :math:`r`) from one
small Gaussian start (:func:`sims.linear_hessian.train_gd`, data from
:func:`sims.linear_hessian.class_data`); a run *converged* if its final loss is below
:math:`10^{-16}` (a converging run reaches round-off, a failing one stalls above :math:`10^{-3}` or
diverges). The claim's own checks (:func:`paper_checks.linear_hessian.training.max_lr_law_checks`): the
largest converged ratio is :math:`\le 1`, the smallest failed
one :math:`\ge 1`, and every run agrees with "converges iff :math:`r < 1`". Rivals: the threshold 3 %
lower or higher (rejected only if you give ratios within 3 % of 1 on that side) and the exponent-1
law :math:`\eta_c = 2/(L\pi_{\max})`. Small ratios need more ``steps`` (escaping the small start is slow).

Run: ``python examples/linear_hessian.py --counts 50,30,20 --depth 2 --ratios 0.9,0.98,1.02,1.1 --sharpness``
"""
from __future__ import annotations

import argparse

import jax
import numpy as np

import sims.linear_hessian as S
import theory.linear_hessian as T
from _common import floats, outcome, report
from paper_checks.linear_hessian.training import max_lr_law_checks
from theory import validate as V

CLAIM = "hessian2026.max_lr_law"


def run(counts=(50, 30, 20), depth: int = 2, ratios=(0.98, 1.02), *, d0: int = 6, hidden: int = 4,
        init: float = 0.05, steps: int = 800, seed: int = 0, sharpness: bool = False) -> dict:
    """GD at eta = ratio * eta_c for each ratio; ``counts``: samples per class (K = len(counts) outputs).

    Returns the outcome of :func:`_common.outcome` plus ``eta_c``, ``ratios``, ``final_loss``, ``diverged``
    and, with ``sharpness=True``, ``final_sharpness`` (exact top Hessian eigenvalue of each final iterate, by
    Lanczos over the whole parameter space: slower to compile).
    """
    c = V.array("counts", counts, ndim=1, low=1, dtype=np.int64)
    if not np.array_equal(c, np.asarray(counts, dtype=float)):
        raise ValueError(f"counts: expected whole numbers of samples per class, got {np.asarray(counts).tolist()}")
    depth = V.integer("depth", depth, low=1)
    r = V.array("ratios", ratios, ndim=1, low=0.0, low_open=True)
    hidden = V.integer("hidden", hidden, low=c.size)
    init = V.real("init", init, low=0.0, low_open=True, high=0.5)
    widths = (V.integer("d0", d0, low=c.size, high=int(c.sum())),) + (hidden,) * (depth - 1) + (c.size,)
    X, Y = S.class_data(jax.random.key(seed), c, widths[0])
    pi = c / c.sum()
    eta_c = T.critical_step(pi, depth)
    theta0 = S.init_params(jax.random.key(seed + 1), widths, init)
    out = S.train_gd(jax.random.key(seed + 2), theta0, X, Y, widths, r * eta_c, steps=steps, record_every=steps,
                     lanczos_iter=S.n_params(widths) if sharpness else 0)
    final = np.asarray(out["loss"])[:, -1]
    diverged = np.asarray(out["diverged"])
    result = max_lr_law_checks(r * eta_c, np.tile(pi, (r.size, 1)), np.full(r.size, depth), final, diverged)
    extra = {"final_sharpness": np.asarray(out["sharpness"])[:, -1]} if sharpness else {}
    return outcome(CLAIM, result, eta_c=eta_c, ratios=r, final_loss=final, diverged=diverged, widths=widths, **extra)


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--counts", type=floats, default=[50, 30, 20], help="samples per class (default 50,30,20)")
    p.add_argument("--depth", type=int, default=2, help="number of layers L (default 2)")
    p.add_argument("--ratios", type=floats, default=[0.98, 1.02], help="step sizes as multiples of eta_c (default 0.98,1.02)")
    p.add_argument("--d0", type=int, default=6, help="input dimension, >= number of classes (default 6)")
    p.add_argument("--hidden", type=int, default=4, help="hidden width, >= number of classes (default 4)")
    p.add_argument("--init", type=float, default=0.05, help="std of the Gaussian initialization (default 0.05)")
    p.add_argument("--steps", type=int, default=800, help="GD steps per run (default 800)")
    p.add_argument("--seed", type=int, default=0, help="PRNG seed of data and init (default 0)")
    p.add_argument("--sharpness", action="store_true", help="also report each final iterate's exact lambda_max")
    args = p.parse_args(argv)
    try:
        out = run(args.counts, args.depth, args.ratios, d0=args.d0, hidden=args.hidden, init=args.init,
                  steps=args.steps, seed=args.seed, sharpness=args.sharpness)
    except (TypeError, ValueError) as err:
        p.error(str(err))
    print(f"widths {out['widths']}, eta_c = {out['eta_c']:.6g} (sharpness law {2 / out['eta_c']:.6g})")
    for i, (q, f) in enumerate(zip(out["ratios"], out["final_loss"])):
        top = f", final lambda_max {out['final_sharpness'][i]:.6g}" if args.sharpness else ""
        print(f"  eta/eta_c = {q:g}: final loss {f:.3e}{top}")
    print(report(out))
    return out


if __name__ == "__main__":
    main()
