r"""Self-stabilization at the edge of stability on an exactly solvable toy, on your curvature, drift and step size.

Mirrors claim ``damian2023.selfstab_equilibrium`` (Damian, Nichani, Lee 2023; toy and closed forms derived in steplab).

The maths. On :math:`L(x, y) = \tfrac12(a + y^2)x^2 - \beta y` gradient flow drives :math:`y` up forever
(:math:`\dot y = \beta` at :math:`x = 0`), so the sharpness :math:`S = a + y^2` grows without bound. GD with
step :math:`\eta` and :math:`\eta a < 2` instead settles on an exact 2-cycle :math:`x = \pm r`,
:math:`y = y^\star` where the sharpness is pinned at :math:`2/\eta`:

.. math:: y^\star = \sqrt{2/\eta - a},\qquad \langle x^2\rangle = \sigma^2 = \beta/y^\star,\qquad
   \langle L\rangle = L(0, y^\star) + \sigma^2/\eta

(:func:`theory.eos.selfstab_equilibrium`, :func:`theory.eos.selfstab_central_flow_loss`: the central
flow's equilibrium). The cycle is stable on a window of :math:`\eta a` (:func:`theory.eos.selfstab_window`;
for small :math:`\beta` from 7/4 to a fold just below 2); outside it the prediction is not claimed.

The measurement. GD from ``init`` (:func:`sims.eos.poly_gd`) long enough for the cycle's slowest
closed-form multiplier to leave less than 1e-8 of the start's distance, then the time averages of
:math:`y`, :math:`x^2` and :math:`L` over the last 1000 steps, handed to the claim's own checks
(:func:`paper_checks.eos.selfstab.selfstab_equilibrium_checks`: Exact checks to 1e-6 relative and a Count of
runs ending on a 2-cycle). Rivals (gradient flow): :math:`y` keeps growing like
:math:`y_0 + \eta\beta t`, :math:`\langle x^2\rangle = 0`, the average loss is the central point's
:math:`-\beta y^\star`.

Run: ``python examples/eos.py --eta-a 1.8,1.9,1.95 --beta 0.1 --eta 0.5``
"""
from __future__ import annotations

import argparse
import math

import numpy as np

import sims.eos as sim
import theory.eos as th
from _common import floats, outcome, report
from paper_checks.eos.selfstab import HOLD_RTOL as RTOL
from paper_checks.eos.selfstab import selfstab_equilibrium_checks
from theory import validate as V

CLAIM = "damian2023.selfstab_equilibrium"
TAIL = 1000


def run(eta_a=(1.8, 1.9), beta=0.1, eta: float = 0.5, *, init=(0.1, 0.0), max_steps: int = 400_000) -> dict:
    """GD on the toy at each ``eta_a`` (= eta * a; ``beta`` a scalar or one per eta_a), from ``init`` = (x0, y0).

    Returns the outcome of :func:`_common.outcome` plus ``eta_a``, ``beta``, ``y_star``, ``n_steps``
    and the measured tail averages ``mean_y``, ``mean_x2``, ``mean_loss``.
    """
    ea = V.array("eta_a", eta_a, ndim=(0, 1), low=0.0, low_open=True)
    b = V.array("beta", beta, ndim=(0, 1), low=0.0, low_open=True)
    try:
        ea, b = (np.atleast_1d(v).astype(float) for v in np.broadcast_arrays(ea, b))
    except ValueError:
        raise ValueError(f"eta_a, beta: expected scalars or one beta per eta_a, got {ea.size} and {b.size}") from None
    eta = V.real("eta", eta, low=0.0, low_open=True)
    w0 = V.array("init", init, shape=(2,))
    max_steps = V.integer("max_steps", max_steps, low=2 * TAIL)
    rho = []
    for e, bb in zip(ea, b):
        win = th.selfstab_window(bb, eta)
        if not win["lower"] < e < win["upper"]:
            raise ValueError(f"eta_a: {e:g} is outside the window ({win['lower']:.6g}, {win['upper']:.6g}) where GD's "
                             f"2-cycle is stable at beta = {bb:g}, eta = {eta:g}: the claim makes no prediction there")
        rho.append(float(np.max(np.abs(th.selfstab_cycle_multipliers(e / eta, bb, eta)))))
    ys = np.array([th.selfstab_equilibrium(e / eta, bb, eta)[0] for e, bb in zip(ea, b)])
    # the transient: y climbs towards y* at about eta*beta per step (twice that time), then the cycle contracts
    # by rho per step pair: rho^((n - TAIL - transient)/2) < RTOL/100
    transient = float(np.max(2 * np.maximum(ys - w0[1], 0.0) / (eta * b)))
    need = TAIL + transient + 2 * math.log(RTOL / 100) / math.log(max(rho))
    if need > max_steps:
        raise ValueError(f"eta_a: the 2-cycle at eta_a = {ea[int(np.argmax(rho))]:g} contracts too slowly (multiplier "
                         f"{max(rho):.6f}) for max_steps = {max_steps}; move it away from the window's edges")
    n_steps = TAIL * math.ceil(need / TAIL)
    coef = np.stack([th.selfstab_coefficients(e / eta, bb) for e, bb in zip(ea, b)])
    out = sim.poly_gd(coef, eta, w0, n_steps=n_steps, n_blocks=n_steps // TAIL)
    tail = out["block_mean"][:, -1]
    mean_y, mean_x2, mean_loss = tail[:, 1], tail[:, 2], tail[:, 3]
    left = max(rho) ** ((n_steps - TAIL - transient) / 2)
    result = selfstab_equilibrium_checks(ea, b, eta, w0[1], n_steps, out["diverged"], out["gap2"], mean_y, mean_x2,
                                         mean_loss, left)
    return outcome(CLAIM, result, eta_a=ea, beta=b, y_star=ys, n_steps=n_steps, mean_y=mean_y, mean_x2=mean_x2,
                   mean_loss=mean_loss)


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--eta-a", type=floats, default=[1.8, 1.9], help="normalized curvatures eta*a (default 1.8,1.9)")
    p.add_argument("--beta", type=floats, default=[0.1], help="drift beta, one or one per eta*a (default 0.1)")
    p.add_argument("--eta", type=float, default=0.5, help="step size (default 0.5)")
    p.add_argument("--init", type=floats, default=[0.1, 0.0], help="start x0,y0 (default 0.1,0)")
    args = p.parse_args(argv)
    try:
        out = run(args.eta_a, args.beta, args.eta, init=args.init)
    except (TypeError, ValueError) as err:
        p.error(str(err))
    for e, ys, my in zip(out["eta_a"], out["y_star"], out["mean_y"]):
        print(f"eta*a = {e:g}: y* = {ys:.10g}, GD's <y> = {my:.10g} (sharpness pinned at 2/eta)")
    print(f"{out['n_steps']} GD steps per run")
    print(report(out))
    return out


if __name__ == "__main__":
    main()
