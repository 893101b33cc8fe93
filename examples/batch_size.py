r"""The steps--examples hyperbola of batch-size scaling, on your spectrum, target and batch sizes.

Mirrors claim ``mccandlish2018.steps_examples_hyperbola`` (McCandlish, Kaplan, Amodei 2018; re-derived in steplab).

The maths. On a diagonal noisy quadratic with curvatures :math:`\lambda_i = i^{-p}` (:math:`i = 1..d`), per-example
noise variances :math:`\sigma_i^2 = \lambda_i` and start :math:`E x_i^2 = 1/\lambda_i`, every step takes the greedy
step computed from the exact second moments (:func:`theory.batch_size.greedy_steps`). If the noise scale stayed
fixed, the steps :math:`S` and examples :math:`E = BS` to a target would obey

.. math:: \Big(\frac{S}{S_{\min}} - 1\Big)\Big(\frac{E}{E_{\min}} - 1\Big) = 1,\qquad B_{\rm crit} = E_{\min}/S_{\min},

with :math:`S_{\min}` the noiseless greedy steps (:math:`B \to \infty`) and :math:`E_{\min}` the :math:`B \to 0`
examples (an ODE in examples, :func:`theory.batch_size.greedy_min_examples`). The noise scale grows as the loss falls,
so the hyperbola holds to 10 % only up to about :math:`B_{\rm crit}`: ask for batch sizes beyond it (``--x 10``) and
the status becomes ``failed``.

The measurement. The exact steps at each :math:`B = x\,B_{\rm crit}` you list; the checks are the claim's own
(:func:`paper_checks.batch_size.noise_scale.steps_examples_hyperbola_checks`): the product and the steps within 10 %
(rivals: the exponents 0.8 and 1.25; :math:`B_{\rm crit}` replaced by the noise scale at the start or the target).

Run: ``python examples/batch_size.py --d 100 --p 1 --target 0.1 --x 0.01,0.1,1``
"""
from __future__ import annotations

import argparse

import numpy as np
from _common import floats, outcome, report

import theory.batch_size as th
from paper_checks.batch_size.noise_scale import steps_examples_hyperbola_checks
from theory import validate as V

CLAIM = "mccandlish2018.steps_examples_hyperbola"


def run(d: int = 100, p: float = 1.0, target: float = 0.1, x=(0.01, 0.1, 1.0)) -> dict:
    """The greedy steps to ``target`` x L0 at B = x B_crit on the d-mode NQM with lambda_i = i^-p.

    Returns the outcome of :func:`_common.outcome` plus ``b_crit``, ``s_min``, ``e_min``, ``x`` and ``product``.
    """
    d = V.integer("d", d, low=2, high=20_000)
    p = V.real("p", p, low=0.0, low_open=True, high=4.0)
    target = V.real("target", target, low=0.0, high=1.0, low_open=True, high_open=True)
    xs = np.atleast_1d(V.array("x", x, ndim=(0, 1), low=1e-3, high=1e3))
    lam = np.arange(1, d + 1, dtype=float) ** -p
    s2, m0 = lam.copy(), 1.0 / lam
    s_min = th.greedy_min_steps(lam, s2, m0, target, max_steps=1_000_000)
    e_min = th.greedy_min_examples(lam, s2, m0, target)
    b_crit = e_min / s_min
    r = th.greedy_steps(lam, s2, m0, xs * b_crit, target, max_steps=1_000_000)
    result = steps_examples_hyperbola_checks(xs, r["steps"], r["examples"], s_min, e_min, r["noise_start"][0],
                                             float(np.mean(r["noise_end"])))
    return outcome(CLAIM, result, b_crit=b_crit, s_min=s_min, e_min=e_min, x=xs, product=result.arrays["product"])

def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--d", type=int, default=100, help="modes (default 100)")
    ap.add_argument("--p", type=float, default=1.0, help="spectrum exponent: lambda_i = i^-p (default 1)")
    ap.add_argument("--target", type=float, default=0.1, help="target loss as a fraction of L0 (default 0.1)")
    ap.add_argument("--x", type=floats, default=[0.01, 0.1, 1.0], help="batch sizes in units of B_crit")
    args = ap.parse_args(argv)
    try:
        out = run(args.d, args.p, args.target, args.x)
    except (TypeError, ValueError) as err:
        ap.error(str(err))
    print(f"S_min = {out['s_min']:.4g}, E_min = {out['e_min']:.4g}, B_crit = {out['b_crit']:.4g}")
    for x, pr in zip(out["x"], out["product"]):
        print(f"B = {x:g} B_crit: product {pr:.4f}")
    print(report(out))
    return out


if __name__ == "__main__":
    main()
