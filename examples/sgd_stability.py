r"""The exact mean-square stability threshold of SGD, on your per-sample Hessians and batch sizes.

Mirrors claim ``mulayoff2024.threshold_nondecreasing_in_batch`` (Mulayoff & Michaeli, COLT 2024).

The maths. Near a minimum with per-sample Hessians :math:`H_1..H_n` (mean :math:`H`), linearized SGD
with batches :math:`\mathcal B` of size :math:`B` drawn uniformly without replacement is
:math:`\theta_{t+1} = (I - \eta H_{\mathcal B})\theta_t`, and its second moment evolves by
:math:`\Sigma_{t+1} = E[(I - \eta H_{\mathcal B})\Sigma_t(I - \eta H_{\mathcal B})]`. With
:math:`E[H_{\mathcal B}\otimes H_{\mathcal B}] = (1-p)H\otimes H + \frac pn\sum_i H_i\otimes H_i`,
:math:`p = (n-B)/(B(n-1))`, the threshold where the operator's spectral radius reaches 1 is a
generalized eigenvalue, :math:`\eta^*(B) = 1/\lambda_{\max}(Q_B, H\otimes I + I\otimes H)`
(:func:`theory.sgd_stability.ms_threshold`); it is non-decreasing in :math:`B` and equals
:math:`2/\lambda_{\max}(H)` at :math:`B = n`.

The measurement. :func:`sims.sgd_stability.moment_growth` iterates the second moment exactly, by
enumerating every batch, and fits its growth rate; :func:`sims.sgd_stability.refine_crossing` locates
the step where that rate changes sign, from the bracket :math:`[10^{-3}, 3]/\lambda_{\max}(H)` (which
does not depend on the prediction). The claim's own checks
(:func:`paper_checks.sgd_stability.mulayoff2024.threshold_nondecreasing_checks`): an Exact check with the final
brackets' relative width as tolerance (rivals: :math:`2/\lambda_{\max}` for every :math:`B`, linear scaling
:math:`B\,\eta^*(1)`, batches drawn with replacement, :math:`p = 1/B`), :math:`2/\lambda_{\max}` at :math:`B = n`
when you include it, and the signs of consecutive differences. The Hessians are rotated onto the range of
:math:`H` first: flat directions never move, and their round-off would fake a zero growth rate.

Run: ``python examples/sgd_stability.py --X "1,0.2;0.3,1;-0.5,0.8;1.2,-0.4;0.1,0.9" --batch-sizes 1,2,3,5``
"""
from __future__ import annotations

import argparse

import numpy as np

import sims.sgd_stability as sim
import theory.sgd_stability as th
from _common import floats, matrix, outcome, report
from paper_checks.sgd_stability.experiments import ls_problem
from paper_checks.sgd_stability.mulayoff2024 import threshold_nondecreasing_checks
from theory import validate as V

CLAIM = "mulayoff2024.threshold_nondecreasing_in_batch"


def run(hessians=None, batch_sizes=None, *, X=None, n_steps: int = 200, n_rounds: int = 6) -> dict:
    """Measured and predicted eta*(B) for each batch size (default 1..n).

    Give ``hessians`` (n, d, d), symmetric PSD, or a data matrix ``X`` (n, d) for least squares
    (:math:`H_i = x_ix_i^\\top`); neither: the claim's problem (n = 8, d = 3). Returns the outcome of
    :func:`_common.outcome` plus ``batch_sizes``, ``measured``, ``predicted`` and ``bracket`` (lo, hi).
    """
    if hessians is not None and X is not None:
        raise ValueError("hessians, X: give per-sample Hessians or a data matrix X, not both")
    h = th.least_squares_hessians(X) if X is not None else ls_problem() if hessians is None else hessians
    h = th.check_hessians(h)
    n = h.shape[0]
    sizes = np.arange(1, n + 1) if batch_sizes is None else V.array("batch_sizes", batch_sizes, ndim=1, low=1, high=n)
    if not np.all(sizes == np.round(sizes)):
        raise ValueError(f"batch_sizes: expected integers in 1..{n}, got {np.asarray(batch_sizes).tolist()}")
    sizes = sizes.astype(int)
    n_steps, n_rounds = V.integer("n_steps", n_steps, low=10), V.integer("n_rounds", n_rounds, low=1)
    w, u = np.linalg.eigh(h.mean(axis=0))
    u = u[:, w > 1e-10 * w.max()]
    on_range = np.einsum("ia,nij,jb->nab", u, h, u)
    lam = float(w.max())

    def rate(vals: np.ndarray) -> np.ndarray:          # (batch sizes, trial steps) -> growth rates
        out = sim.moment_growth(on_range, np.repeat(sizes, vals.shape[1]), vals.ravel(), n_steps=n_steps)
        return out["rate"].reshape(vals.shape)

    found = sim.refine_crossing(rate, np.full(sizes.size, 1e-3 / lam), np.full(sizes.size, 3.0 / lam),
                                n_points=9, n_rounds=n_rounds)
    result = threshold_nondecreasing_checks(h, sizes, found["crossing"], found["lo"], found["hi"])
    return outcome(CLAIM, result, batch_sizes=sizes, measured=found["crossing"], predicted=result.arrays["predicted"],
                   bracket=np.stack([found["lo"], found["hi"]], axis=1))


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--X", type=matrix, help="least-squares data, rows x_i separated by ';' (H_i = x_i x_i^T); "
                                            "default: the claim's problem (n = 8, d = 3)")
    p.add_argument("--hessians", type=str, help="per-sample Hessians as a .npy file of shape (n, d, d)")
    p.add_argument("--batch-sizes", type=floats, help="batch sizes, comma-separated (default 1..n)")
    p.add_argument("--n-steps", type=int, default=200, help="exact second-moment steps per growth rate (default 200)")
    p.add_argument("--n-rounds", type=int, default=6, help="bracket refinement rounds, 8x narrower each (default 6)")
    args = p.parse_args(argv)
    try:
        h = None if args.hessians is None else np.load(args.hessians)
        out = run(h, args.batch_sizes, X=args.X, n_steps=args.n_steps, n_rounds=args.n_rounds)
    except (TypeError, ValueError, OSError) as err:
        p.error(str(err))
    for b, m, q in zip(out["batch_sizes"], out["measured"], out["predicted"]):
        print(f"B = {b}: measured eta* = {m:.6g}, predicted {q:.6g}")
    print(report(out))
    return out


if __name__ == "__main__":
    main()
