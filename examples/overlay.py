r"""Overlay your own run: the noisy quadratic model fitted to a logged (step, lr, loss) CSV, here a synthetic one.

Writes a small CSV in a temporary folder, as a training script would log it, then runs what
``steplab overlay run.csv`` runs (:func:`figures._overlay.overlay`) and prints the fitted parameters with their
standard errors next to the values the log was generated from.

The log. SGD's exact expected loss on a noisy quadratic (:func:`theory.nqm.moment_recursion`) with ``n_curv``
curvatures at the midpoints of equal bins of :math:`\log\lambda` over the range the fit models (:data:`theory.noisy_quadratic_fit.SLOW_FACTOR`
:math:`/\sum_t\eta_t` to :math:`1/\max_t\eta_t`), each holding a share :math:`w_i \propto \lambda_i^p` of the initial excess
:math:`A` and of the gradient noise :math:`S`,

.. math:: \tfrac12\lambda_i x_{i,0}^2 = A w_i,\qquad \sigma_i^2 = S w_i,\qquad E L_t = L_\star + \tfrac12\sum_i\lambda_i E x_{i,t}^2,

along a warmup-constant-decay schedule, logged every ``every`` steps with relative noise ``noise``
(:math:`y_t = E L_t\,(1 + \text{noise}\cdot\xi_t)`, :math:`\xi_t` standard normal). Its floor at the peak rate
:math:`\eta` is :math:`L_\star + \sum_i \eta\sigma_i^2/(2(2-\eta\lambda_i))` (:func:`theory.nqm.stationary_excess`).

Run: ``python examples/overlay.py --noise 0.02`` (add ``--out DIR`` to keep the figure).
"""
from __future__ import annotations

import argparse
import csv
import tempfile
from pathlib import Path

import numpy as np

import theory.nqm as tn
from figures._overlay import overlay, summary
from theory import validate as V
from theory.noisy_quadratic_fit import SLOW_FACTOR


def schedule(T: int, peak: float, warmup: float = 0.1, decay: float = 0.3) -> np.ndarray:
    """Linear warmup over ``warmup * T`` steps, constant, linear decay to 0 over the last ``decay * T`` steps."""
    t = np.arange(T)
    w, d = int(warmup * T), int(decay * T)
    return peak * np.minimum(np.minimum((t + 1) / w, 1.0), (T - t) / d)


def write_log(path: Path, *, T: int = 1000, peak: float = 0.5, L_star: float = 0.1, A: float = 2.0, S: float = 0.4,
              p: float = 0.5, n_curv: int = 200, every: int = 2, noise: float = 0.02, seed: int = 0) -> dict:
    """Write the synthetic log to ``path`` (columns ``iteration, learning_rate, train_loss``); return the truth."""
    eta = schedule(T, peak)
    edges = np.linspace(np.log(SLOW_FACTOR / eta.sum()), np.log(1 / eta.max()), n_curv + 1)
    lam = np.exp(0.5 * (edges[:-1] + edges[1:]))     # midpoints of equal bins of log(lambda)
    w = lam**p / np.sum(lam**p)
    m = tn.moment_recursion(lam, eta, 2 * A * w / lam, sigma_a=np.sqrt(S * w))
    loss = L_star + tn.expected_loss(lam, m)
    steps = np.arange(0, T + 1, every)
    y = loss[steps] * (1 + noise * np.random.default_rng(seed).standard_normal(steps.size))
    with path.open("w", newline="") as fh:
        out = csv.writer(fh)
        out.writerow(["iteration", "learning_rate", "train_loss"])
        out.writerows(zip(steps.tolist(), eta[np.minimum(steps, T - 1)].tolist(), y.tolist()))
    floor = L_star + float(np.sum(tn.stationary_excess(lam, peak, np.sqrt(S * w))))
    return {"L_star": L_star, "A": A, "S": S, "p": p, "floor": floor}


def run(out: str | Path | None = None, *, noise: float = 0.02, every: int = 2, T: int = 1000, seed: int = 0) -> dict:
    """Write a synthetic log into ``out`` (a new temporary folder if None), overlay the fit; the fit plus ``truth``.

    ``z`` holds, per parameter, (estimate - truth) / standard error: mostly within 2, nearly always within 3.
    """
    noise = V.real("noise", noise, low=0.0, low_open=True, high=0.5)
    every = V.integer("every", every, low=1)
    T = V.integer("T", T, low=50, high=1_000_000)
    if T // every < 20:
        raise ValueError(f"every: a log of {T} steps every {every} has {T // every + 1} rows; expected at least 21")
    folder = Path(tempfile.mkdtemp(prefix="steplab-overlay-") if out is None else out)
    folder.mkdir(parents=True, exist_ok=True)
    truth = write_log(folder / "run.csv", T=T, every=every, noise=noise, seed=seed)
    fit = overlay(folder / "run.csv", folder)
    z = {k: (fit["estimates"][k][0] - v) / fit["estimates"][k][1] for k, v in truth.items()}
    return {**fit, "truth": truth, "z": z, "csv": folder / "run.csv"}


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", default=None, help="folder for run.csv and the figure (default: a new temporary folder)")
    p.add_argument("--noise", type=float, default=0.02, help="relative logging noise (default 0.02)")
    p.add_argument("--every", type=int, default=2, help="log every this many steps (default 2)")
    p.add_argument("--steps", type=int, default=1000, help="steps of the run (default 1000)")
    args = p.parse_args(argv)
    try:
        out = run(args.out, noise=args.noise, every=args.every, T=args.steps)
    except (TypeError, ValueError) as err:
        p.error(str(err))
    print(f"synthetic log: {out['csv']}")
    print(summary(out))
    for k, v in out["truth"].items():
        print(f"truth {k} = {v:.6g}: the estimate is {out['z'][k]:+.2f} standard errors away")
    print("wrote " + ", ".join(str(x) for x in out["paths"]))
    return out


if __name__ == "__main__":
    main()
