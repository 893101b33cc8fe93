r"""The Taylor radius of a binary cross-entropy line loss ("ghosts of softmax"), on your logit gaps and slopes.

Mirrors claim ``sao2026.binary_radius_exact`` (Sao 2026, Theorem 4.3).

The maths. Move the parameters a distance :math:`t` along a direction; with logits linear in
:math:`t`, :math:`z_k + a_k t`, the cross-entropy of one sample is
:math:`\ell(t) = \log F(t) - z_y - a_y t`, :math:`F(t) = \sum_k e^{z_k + a_k t}`. Its Taylor series in
:math:`t` converges up to the nearest complex zero of :math:`F` (a "ghost": :math:`F > 0` on the real
line). For two classes with logit gap :math:`\delta = z_1 - z_2` and slope difference
:math:`\Delta a = a_1 - a_2`, :math:`F = 0` at :math:`t_k = (-\delta + i\pi(2k+1))/\Delta a`, so the radius is

.. math:: \rho^* = \sqrt{\delta^2 + \pi^2}\,/\,|\Delta a|

(:func:`theory.softmax_radius.binary_radius`): a step longer than :math:`\rho^*` leaves the region
where the loss's Taylor expansion (and every finite-order model of it) can be trusted.

The measurement. The Taylor coefficients of :math:`\ell` to order ``order`` by ``jax.experimental.jet``
(:func:`sims.softmax_radius.logit_line_taylor`, through the claim's own
:func:`paper_checks.softmax_radius.exact_theory.jet_ghosts`); a Prony fit of the nearest conjugate pair of
singularities (:func:`theory.softmax_radius.prony_pair`) gives :math:`|t_0|`, the radius the series
itself shows, compared with :math:`\rho^*` to 4 times the fit's error scale
:math:`(\rho_1/\rho_2)^{N/2}` (:func:`theory.softmax_radius.prony_error_scale`), by the claim's checks
(:func:`paper_checks.softmax_radius.exact_theory.binary_radius_exact_checks`). A second Exact check:
the certified nearest zero of :math:`F` (Newton and the argument principle). Rivals: the margin-free
bound :math:`\pi/|\Delta a|`, no square root, :math:`(|\delta| + \pi)/|\Delta a|`. Large gaps
:math:`|\delta|` bring the next ghost close (the fit's error grows): raise ``order`` there.

Run: ``python examples/softmax_radius.py --delta 0.5,-2,3.5 --delta-a 1,-0.4,2.5``
"""
from __future__ import annotations

import argparse

import numpy as np

import theory.softmax_radius as T
from _common import floats, outcome, report
from paper_checks.softmax_radius.exact_theory import binary_radius_exact_checks, jet_ghosts
from theory import validate as V

CLAIM = "sao2026.binary_radius_exact"


def run(delta=(0.5, -2.0, 3.5), delta_a=(1.0, -0.4, 2.5), *, order: int = 16) -> dict:
    """Radius of each binary line loss (one per pair ``delta[i]``, ``delta_a[i]``; scalars broadcast).

    Returns the outcome of :func:`_common.outcome` plus ``delta``, ``delta_a``, ``ghost`` (the located
    :math:`t_0`, Im > 0) and ``radius`` (the closed form).
    """
    d = V.array("delta", delta, ndim=(0, 1))
    da = V.array("delta_a", delta_a, ndim=(0, 1))
    try:
        d, da = (np.atleast_1d(x).astype(float) for x in np.broadcast_arrays(d, da))
    except ValueError:
        raise ValueError(f"delta, delta_a: expected one slope difference per logit gap, got {d.size} and {da.size}") from None
    if not np.all(np.abs(da) > 0):
        raise ValueError("delta_a: every slope difference must be non-zero (at delta_a = 0, F never vanishes: "
                         f"the radius is infinite), got {da.tolist()}")
    order = V.integer("order", order, low=8, high=64)
    # two logits (delta, 0) with slopes (delta_a, 0): the radius depends on the differences only
    z, a = np.stack([d, np.zeros_like(d)], axis=1), np.stack([da, np.zeros_like(da)], axis=1)
    ghost = jet_ghosts(z, a, order)
    result = binary_radius_exact_checks(d, da, np.abs(ghost), np.atleast_1d(T.radius(z, a)), order)
    return outcome(CLAIM, result, delta=d, delta_a=da, ghost=ghost, radius=result.arrays["rho_closed"])


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--delta", type=floats, default=[0.5, -2.0, 3.5], help="logit gaps z1 - z2 (default 0.5,-2,3.5)")
    p.add_argument("--delta-a", type=floats, default=[1.0, -0.4, 2.5],
                   help="slope differences a1 - a2 along the direction, non-zero (default 1,-0.4,2.5)")
    p.add_argument("--order", type=int, default=16, help="Taylor order of the jet series, 8..64 (default 16)")
    args = p.parse_args(argv)
    try:
        out = run(args.delta, args.delta_a, order=args.order)
    except (TypeError, ValueError) as err:
        p.error(str(err))
    for d, da, g, r in zip(out["delta"], out["delta_a"], out["ghost"], out["radius"]):
        print(f"delta = {d:g}, delta_a = {da:g}: ghost t0 = {g:.6g}, |t0| = {abs(g):.6g}, rho* = {r:.6g}")
    print(report(out))
    return out


if __name__ == "__main__":
    main()
