r"""Where Muon with Newton--Schulz settles instead of the spectral ball 1/lambda, on your spectrum, decay and NS steps.

Mirrors claim ``steplab.muon_ns5_settles_outside_the_ball`` (found on Chen, Li & Liu 2025's spectral-norm constraint).

The maths. With the exact polar factor :math:`O = UV^\top`, Muon with decoupled decay,
:math:`W^+ = (1-\eta\lambda)W - \eta\,O(M)`, keeps :math:`\|W\|_{op} \le 1/\lambda`. The public reference code replaces
:math:`O` by :math:`k` steps of :math:`p(s) = 3.4445s - 4.7750s^3 + 2.0315s^5` on the singular values of
:math:`M/\|M\|_F`, whose outputs are not 1. From :math:`W_0 = 0` toward :math:`Y = U\mathrm{diag}(s)V^\top` every iterate
stays :math:`U\mathrm{diag}(w)V^\top`, and each mode follows the scalar recursion
:math:`m^+ = \beta m + (w - s)`, :math:`w^+ = (1-\eta\lambda)w + \eta\,p^{\circ k}(|m^+|/\|m^+\|)`
(:func:`theory.muon.aligned_recursion`); the top singular value settles where that recursion does.

The measurement. :func:`sims.muon.train` runs the matrix iteration (random orthonormal :math:`U`, :math:`V`) for each
:math:`k`; :math:`\lambda\|W_T\|_{op}` is compared with the recursion's :math:`\lambda\max_i w_i(T)` to round-off by the
claim's own check (:func:`paper_checks.muon.spectral_ball.ns5_settles_outside_checks`). Rivals: the exact polar
factor's ball (1) and the top and bottom of the band of :math:`p^{\circ k}`.

Run: ``python examples/muon.py --s 5,4,3,2 --lam 2 --eta 0.02 --steps 2,5,8``
"""
from __future__ import annotations

import argparse

import jax
import numpy as np

import sims.muon as sm
from _common import floats, outcome, report
from paper_checks.muon.spectral_ball import ns5_settles_outside_checks
from theory import validate as V

CLAIM = "steplab.muon_ns5_settles_outside_the_ball"


def _orthonormal(key, p: int, r: int) -> np.ndarray:
    q, _ = np.linalg.qr(sm.normal_draws(key, (p, r)))
    return q


def run(s=(5.0, 4.0, 3.0, 2.0), lam: float = 2.0, eta: float = 0.02, steps=(2, 5, 8), *, momentum: float = 0.9,
        rows: int = 12, n_steps: int = 600, seed: int = 0) -> dict:
    """Aligned Muon runs with ``k`` Newton-Schulz steps for each ``k`` in ``steps``: the settled lambda |W|_op.

    Returns the outcome of :func:`_common.outcome` plus ``steps``, ``settled`` and ``predicted``.
    """
    sv = np.sort(np.atleast_1d(V.array("s", s, ndim=(0, 1), low=0.0, low_open=True)))[::-1]
    lam = V.real("lam", lam, low=0.0, low_open=True)
    eta = V.real("eta", eta, low=0.0, low_open=True)
    if eta * lam > 1:
        raise ValueError(f"eta, lam: the exact-polar ball is invariant only for eta * lam <= 1, got {eta * lam:g}")
    if np.any(sv * lam <= 1):
        raise ValueError("s: expected every target value outside the ball (s * lam > 1), so that every mode is pinned")
    ks = np.atleast_1d(V.integers("steps", steps, ndim=(0, 1), low=1, high=50))
    rows = V.integer("rows", rows, low=sv.size)
    n_steps = V.integer("n_steps", n_steps, low=1, high=100_000)
    ku, kv = jax.random.split(jax.random.key(V.integer("seed", seed, low=0)))
    y = _orthonormal(ku, rows, sv.size) @ np.diag(sv) @ _orthonormal(kv, sv.size, sv.size).T
    out = sm.train(eta, lam, y, np.zeros_like(y), method="ns", ns_steps=ks, momentum=momentum, n_steps=n_steps)
    result = ns5_settles_outside_checks(sv, eta, lam, momentum, ks, n_steps, out["sv"][:, -1, 0])
    return outcome(CLAIM, result, steps=ks, settled=result.arrays["settled"], predicted=result.arrays["predicted"])


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--s", type=floats, default=[5.0, 4.0, 3.0, 2.0], help="target singular values (default 5,4,3,2)")
    p.add_argument("--lam", type=float, default=2.0, help="decoupled weight decay (default 2)")
    p.add_argument("--eta", type=float, default=0.02, help="step size (default 0.02)")
    p.add_argument("--steps", type=lambda t: [int(x) for x in t.split(",")], default=[2, 5, 8],
                   help="Newton-Schulz step counts (default 2,5,8)")
    args = p.parse_args(argv)
    try:
        out = run(args.s, args.lam, args.eta, args.steps)
    except (TypeError, ValueError) as err:
        p.error(str(err))
    for k, m in zip(out["steps"], out["settled"]):
        print(f"k = {k}: settled lambda |W|_op = {m:.6f}")
    print(report(out))
    return out


if __name__ == "__main__":
    main()
