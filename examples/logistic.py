r"""Local convergence of GD on logistic regression, on your dataset and your step sizes.

Mirrors claim ``meng2024.local_convergence_below_2_over_lambda`` (Meng, Orvieto, Cao, De Sa 2024).

The maths. On non-separable data :math:`z_i = y_i x_i` with weights :math:`a_i` the loss
:math:`L(w) = \sum_i a_i \log(1 + e^{-z_i^\top w})` has one minimizer :math:`w^\star`; let
:math:`\lambda = \lambda_{\max}(\nabla^2 L(w^\star))`. Near :math:`w^\star` the GD map
:math:`T(w) = w - \eta\nabla L(w)` is :math:`w^\star + (I - \eta\nabla^2 L(w^\star))(w - w^\star)`, whose
largest multiplier in modulus is :math:`|1 - \eta\lambda|` once :math:`\eta\lambda > 1`: GD started close
to :math:`w^\star` converges to it iff :math:`\eta\lambda < 2`.

The measurement. For each step size, ``n_inits`` runs of :func:`sims.logistic.gd` start within
``radius`` of :math:`w^\star` and run long enough for the slowest predicted contraction to shrink the
start below round-off; a run *converged* if it ends within ``1e-12 max(1, |w*|)`` of :math:`w^\star`.
Checks (the claim's own, :func:`paper_checks.logistic.local.local_convergence_checks`): a Bound on the final distance of the runs with :math:`\eta\lambda < 2`, and a
Count of converged runs against the prediction "converged iff :math:`\eta\lambda < 2`". Rivals: the
1-D global threshold :math:`\eta\lambda < 1`, the classical smooth-convex step :math:`\eta < 2/L_{\rm smooth}`,
and the threshold moved to :math:`\eta\lambda = 2.05`. A rival is rejected only if one of your step
sizes lies between its threshold and 2.

Run: ``python examples/logistic.py --z "1;-1" --weights 0.75,0.25 --c 0.5,1.6,1.9,2.03,2.1``
"""
from __future__ import annotations

import argparse
import math

import numpy as np

import sims.logistic as sim
import theory.logistic as th
from _common import floats, matrix, outcome, report
from paper_checks.logistic.experiments import CONV_CS
from paper_checks.logistic.local import local_convergence_checks
from theory import validate as V

CLAIM = "meng2024.local_convergence_below_2_over_lambda"


def run(z, weights=None, eta=None, *, radius: float = 1e-4, n_inits: int = 4, seed: int = 0,
        max_steps: int = 200_000) -> dict:
    """GD from ``n_inits`` starts within ``radius`` of w* at each step size in ``eta`` (default: ηλ in CONV_CS).

    ``z``: (n,) or (n, d) signed features; ``weights``: (n,) or None (uniform). Returns the outcome
    dictionary of :func:`_common.outcome` plus ``c`` (ηλ per step), ``distance`` (step x init) and ``n_steps``.
    """
    z2, a = th.validate_dataset(z, weights)
    w_star, lam = th.minimizer(z2, a)
    etas = CONV_CS / lam if eta is None else V.array("eta", eta, ndim=1, low=0.0, low_open=True)
    radius = V.real("radius", radius, low=0.0, low_open=True, high=1e-2)
    n_inits = V.integer("n_inits", n_inits, low=1)
    max_steps = V.integer("max_steps", max_steps, low=1)
    c = etas * lam
    if not np.any(c < 2):
        raise ValueError(f"eta: the check needs at least one step size with eta*lambda < 2 (lambda = {lam:.6g} "
                         f"for this data), got eta*lambda = {np.round(c, 4).tolist()}")
    # horizon: the slowest linear contraction max_i |1 - eta h_i| must take radius below 1e-14
    h = np.linalg.eigvalsh(th.hessian(w_star, z2, a))
    rate = np.max(np.abs(1 - etas[c < 2, None] * h[None, :]), axis=1)
    need = np.log(1e-14 / radius) / np.log(np.maximum(rate, 1e-300))
    if np.any(need > max_steps):
        bad = float(etas[c < 2][np.argmax(need)])
        raise ValueError(f"eta: step size {bad:.6g} (eta*lambda = {bad * lam:.9g}) contracts too slowly to decide "
                         f"convergence within max_steps = {max_steps}; move it away from eta*lambda = 2 (or 0)")
    n_steps = max(100, int(math.ceil(np.max(need))))
    inits = w_star + radius * np.random.default_rng(seed).standard_normal((n_inits, w_star.size))
    final = sim.gd(z2, a, etas, inits, n_steps, keep_last=1)["w"][:, :, 0]
    dist = np.max(np.abs(final - w_star), axis=-1)                     # (step, init)
    tol = 1e-12 * max(1.0, float(np.max(np.abs(w_star))))
    per_run = np.repeat(c[:, None], n_inits, axis=1)
    smooth = 2 * lam / th.smoothness(z2, a)                           # eta = 2/L_smooth in units of c
    result = local_convergence_checks(
        per_run, dist, tol, smooth=smooth,
        why=("a converged iterate sits at w* up to float64 round-off; the horizon shrinks the start to 1e-14",
             "per-run outcome; above ηλ = 2 the perturbation grows towards the 2-cycle"))
    return outcome(CLAIM, result, c=c, distance=dist, n_steps=n_steps, w_star=w_star, lam=lam)


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--z", type=matrix, help="signed features y_i x_i, rows separated by ';' (e.g. '1,0;-1,2;0,-1'); "
                   "default: z = 1;-1 with weights 0.75,0.25")
    p.add_argument("--weights", type=floats, help="one weight per row of z (default: uniform)")
    steps = p.add_mutually_exclusive_group()
    steps.add_argument("--eta", type=floats, help="step sizes, comma-separated")
    steps.add_argument("--c", type=floats, help="normalized step sizes eta*lambda (lambda from your data)")
    p.add_argument("--radius", type=float, default=1e-4, help="distance of the starts from w* (default 1e-4)")
    p.add_argument("--n-inits", type=int, default=4, help="starts per step size (default 4)")
    p.add_argument("--seed", type=int, default=0, help="seed of the starts (default 0)")
    args = p.parse_args(argv)
    z, weights = (args.z, args.weights) if args.z is not None else ([1.0, -1.0], [0.75, 0.25])
    try:
        eta = args.eta if args.c is None else np.asarray(args.c) / th.minimizer(z, weights)[1]
        out = run(z, weights, eta, radius=args.radius, n_inits=args.n_inits, seed=args.seed)
    except (TypeError, ValueError) as err:
        p.error(str(err))
    print(f"w* = {out['w_star']}, lambda = {out['lam']:.6g}, {out['n_steps']} steps; eta*lambda = {out['c']}")
    print(report(out))
    return out


if __name__ == "__main__":
    main()
