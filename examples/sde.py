r"""Mean-square stability of compressed distributed SGD (DCSGD), on your compression and noise levels.

Mirrors claim ``compagnoni2025.dcsgd_ms_threshold`` (Compagnoni et al. 2025, SDEs of compressed SGD).

The maths. On :math:`f(x) = a x^2/2` each of :math:`N` agents sends :math:`C_i(g_i)`, with
:math:`g_i = a x (1 + \sigma_1\xi_i)` (multiplicative Gaussian noise) and :math:`C_i` a Bernoulli
compressor of variance :math:`\omega_i` (keep with probability :math:`1/(1+\omega_i)`, rescale). The step
:math:`x_{k+1} = x_k - \eta\frac1N\sum_i C_i(g_i)` multiplies :math:`x_k^2` by an i.i.d. factor of mean

.. math:: \rho(\eta) = (1 - \eta a)^2 + \frac{\eta^2 a^2\,\bar V}{N}, \qquad
   \bar V = \frac1N\sum_i \bigl[\omega_i + \sigma_1^2(1 + \omega_i)\bigr],

so DCSGD is mean-square stable iff :math:`\eta < \eta^\ast = 2/(a(1 + \bar V/N))`
(:func:`theory.sde.dcsgd_ms_factor`, :func:`theory.sde.dcsgd_threshold`).

The measurement. ``n_paths`` DCSGD paths of ``n_steps`` steps per step size (:func:`sims.sde.paths`);
the mean of the per-step multipliers :math:`(x_{k+1}/x_k)^2` over all steps and paths, with its
standard error, is compared with :math:`\rho` by the claim's own check
(:func:`paper_checks.sde.dcsgd.dcsgd_ms_threshold_checks`, 4 SE). Rivals, on the same
estimates: plain GD's :math:`(1 - \eta a)^2`, the variances added (:math:`\omega + \sigma_1^2`) instead of
compounded, and compression ignored (:math:`\sigma_1^2` only). With no compression and no noise
every rival coincides with the prediction: the verdict is then ``inconclusive`` by design.

Run: ``python examples/sde.py --a 2 --omega 0,1,3,0.5 --sigma1 0.7 --c 1,2,3``
"""
from __future__ import annotations

import argparse
import math

import jax
import numpy as np

import sims.sde as S
import theory.sde as T
from _common import floats, outcome, report
from paper_checks.sde.dcsgd import dcsgd_ms_threshold_checks
from theory import validate as V

CLAIM = "compagnoni2025.dcsgd_ms_threshold"


def run(a: float = 2.0, omega=(0.0, 1.0, 3.0, 0.5), sigma1: float = 0.7, eta=None, *, n_agents: int | None = None,
        n_paths: int = 256, n_steps: int = 48, seed: int = 0) -> dict:
    """Mean-square factor of DCSGD at each step size in ``eta`` (default: 0.5, 1 and 1.5 times the threshold).

    ``omega``: one compression variance per agent (or a scalar with ``n_agents``). Returns the outcome
    of :func:`_common.outcome` plus ``eta``, ``threshold`` and ``n_dropped`` (paths whose loss left
    (0, inf): diverged or underflowed, left out of the statistics).
    """
    a = V.real("a", a, low=0.0, low_open=True)
    om = V.array("omega", omega, ndim=(0, 1), low=0.0)
    if n_agents is None:
        n_agents = len(om) if om.ndim else 4
    n = V.integer("n_agents", n_agents, low=1)
    om = np.broadcast_to(om, (n,)) if om.ndim == 0 else om
    if om.shape != (n,):
        raise ValueError(f"omega: expected one value per agent (n_agents = {n}), got {om.size} values")
    sigma1 = V.real("sigma1", sigma1, low=0.0)
    if not (sigma1 > 0 or np.any(om > 0)):
        raise ValueError("omega, sigma1: with no compression (omega = 0) and no noise (sigma1 = 0) DCSGD is plain GD, "
                         "a deterministic factor: give some omega_i > 0 or sigma1 > 0")
    threshold = T.dcsgd_threshold(a, n, om, sigma1)
    etas = threshold * np.array([0.5, 1.0, 1.5]) if eta is None else V.array("eta", eta, ndim=1, low=0.0, low_open=True)
    n_paths, n_steps = V.integer("n_paths", n_paths, low=2), V.integer("n_steps", n_steps, low=1)
    m = etas.size * n_paths
    cfg = S.Config(problem="quadratic", algo="dcsgd", n_agents=n, compressor="bernoulli", noise="gaussian",
                   n_steps=n_steps, n_record=n_steps)
    r = S.paths(cfg, {"key": jax.random.split(jax.random.key(seed), m), "x0": np.ones((m, 1)),
                      "eta": np.repeat(etas, n_paths), "lam": np.full(m, a), "omega": np.tile(om, (m, 1)),
                      "sigma1": np.full(m, sigma1)})
    f = np.concatenate([np.asarray(r["loss0"])[:, None], np.asarray(r["loss"])], axis=1)
    ok = (~np.asarray(r["diverged"]) & np.all((f > 0) & np.isfinite(f), axis=1)).reshape(etas.size, n_paths)
    mult = (f[:, 1:] / np.where(f[:, :-1] > 0, f[:, :-1], 1.0)).reshape(etas.size, n_paths, n_steps)
    est, se = np.empty(etas.size), np.empty(etas.size)
    for i in range(etas.size):  # over step sizes, not optimisation steps
        v = mult[i][ok[i]].ravel()
        if v.size < 2:
            raise ValueError(f"eta: at step size {etas[i]:.6g} fewer than two paths kept a loss in (0, inf) "
                             "(diverged, or underflowed to 0); lower eta or n_steps")
        est[i], se[i] = v.mean(), v.std(ddof=1) / math.sqrt(v.size)
    result = dcsgd_ms_threshold_checks(a, etas, np.tile(om, (etas.size, 1)), np.full(etas.size, sigma1), est, se)
    return outcome(CLAIM, result, eta=etas, threshold=threshold, n_dropped=int(ok.size - ok.sum()))


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--a", type=float, default=2.0, help="curvature a of f = a x^2/2 (default 2)")
    p.add_argument("--omega", type=floats, default=[0.0, 1.0, 3.0, 0.5],
                   help="compression variance of each agent, comma-separated (default 0,1,3,0.5: N = 4 agents)")
    p.add_argument("--sigma1", type=float, default=0.7, help="multiplicative noise level sigma1 (default 0.7)")
    steps = p.add_mutually_exclusive_group()
    steps.add_argument("--eta", type=floats, help="step sizes, comma-separated")
    steps.add_argument("--c", type=floats, help="step sizes eta = c/(a(1 + V/N)): c = 2 is the threshold")
    p.add_argument("--n-paths", type=int, default=256, help="paths per step size (default 256)")
    p.add_argument("--n-steps", type=int, default=48, help="steps per path (default 48)")
    p.add_argument("--seed", type=int, default=0, help="PRNG seed (default 0)")
    args = p.parse_args(argv)
    try:
        eta = args.eta
        if args.c is not None:
            eta = np.asarray(args.c) / 2 * T.dcsgd_threshold(args.a, len(args.omega), args.omega, args.sigma1)
        out = run(args.a, args.omega, args.sigma1, eta, n_paths=args.n_paths, n_steps=args.n_steps, seed=args.seed)
    except (TypeError, ValueError) as err:
        p.error(str(err))
    print(f"threshold eta* = {out['threshold']:.6g}; step sizes {np.round(out['eta'], 6).tolist()}; "
          f"{out['n_dropped']} paths dropped")
    print(report(out))
    return out


if __name__ == "__main__":
    main()
