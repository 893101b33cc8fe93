r"""The variance reduction of an exponential moving average of SGD's iterates, on your alpha, step and curvature.

Mirrors claim ``morales2024.ema_variance_ratio`` (Morales-Brotons, Vogels, Hendrikx 2024; ratio derived in steplab).

The maths. SGD on one mode :math:`\lambda x^2/2` with additive gradient noise is the AR(1) process
:math:`x^+ = \rho x - \eta\sigma\xi`, :math:`\rho = 1 - \eta\lambda`. Its EMA :math:`z^+ = (1-\alpha)z + \alpha x^+` has the
stationary variance ratio (discrete Lyapunov equation, :func:`theory.noisy_quadratic.ema_variance_sympy`)

.. math:: \frac{\mathrm{Var}\,z}{\mathrm{Var}\,x} = \frac{\alpha(1+\rho(1-\alpha))}{(2-\alpha)(1-\rho(1-\alpha))},

below 1 for :math:`\alpha < 1` (:func:`theory.noisy_quadratic.ema_variance_ratio`); the i.i.d. value
:math:`\alpha/(2-\alpha)` is the case :math:`\rho = 0`. Averaging helps less when the iterates are correlated
(:math:`\rho` near 1).

The measurement. ``n_chains`` runs of :func:`sims.nqm.simulate` (SGD, ``ema=alpha``) from :math:`x_0 = 0`; per run
the ratio of the time averages of :math:`z^2` and :math:`x^2` after ``burn`` steps; mean and standard error over
runs against the formula, by the claim's own checks
(:func:`paper_checks.noisy_quadratic.averaging.ema_variance_ratio_checks`: 4 SE, with the O(correlation time /
window) bias of a ratio of finite time averages). Rival: the i.i.d. value.

Run: ``python examples/noisy_quadratic.py --alpha 0.05,0.1,0.3 --eta 0.2 --lam 1``
"""
from __future__ import annotations

import argparse

import jax
import numpy as np

import sims.nqm as sn
from _common import floats, outcome, report
from paper_checks.noisy_quadratic.averaging import ema_variance_ratio_checks
from theory import validate as V

CLAIM = "morales2024.ema_variance_ratio"


def run(alpha=(0.05, 0.1, 0.3), eta: float = 0.2, lam: float = 1.0, *, n_chains: int = 64, n_steps: int = 8000,
        burn: int = 2000, seed: int = 0) -> dict:
    """The stationary Var(EMA)/Var(x) of SGD on lam x^2/2 for each EMA rate ``alpha``.

    Returns the outcome of :func:`_common.outcome` plus ``alpha``, ``rho`` and the per-alpha ``ratio`` and ``se``.
    """
    a = np.atleast_1d(V.array("alpha", alpha, ndim=(0, 1), low=0.0, high=1.0, low_open=True))
    eta = V.real("eta", eta, low=0.0, low_open=True)
    lam = V.real("lam", lam, low=0.0, low_open=True)
    if not eta * lam < 2:
        raise ValueError(f"eta, lam: SGD is stable only for eta * lam < 2, got {eta * lam:g}")
    n_chains = V.integer("n_chains", n_chains, low=2)
    n_steps = V.integer("n_steps", n_steps, low=2)
    burn = V.integer("burn", burn, low=0, high=n_steps - 1)
    # the slower of the two correlation times, 1/alpha and 1/(eta lam), must fit many times into the burn-in
    tau = max(1 / a.min(), 1 / min(eta * lam, 2 - eta * lam))
    if burn < 20 * tau:
        raise ValueError(f"burn: the correlation time {tau:.0f} steps needs burn >= {20 * tau:.0f}; raise burn and n_steps")
    out = sn.simulate(jax.random.key(seed), T=n_steps, eta=eta, x0=np.zeros(1), lam=np.array([lam]), sigma_a=1.0,
                      ema=a, n_chains=n_chains, n_rec=1, burn=burn)
    result = ema_variance_ratio_checks(a, eta, lam, out["mode_m2_ema"][..., 0], out["mode_m2"][..., 0], n_steps - burn)
    return outcome(CLAIM, result, alpha=a, rho=1 - eta * lam, ratio=result.arrays["ratio"], se=result.arrays["se"])


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--alpha", type=floats, default=[0.05, 0.1, 0.3], help="EMA rates in (0, 1] (default 0.05,0.1,0.3)")
    p.add_argument("--eta", type=float, default=0.2, help="step size (default 0.2)")
    p.add_argument("--lam", type=float, default=1.0, help="curvature (default 1)")
    p.add_argument("--n-chains", type=int, default=64, help="independent runs (default 64)")
    args = p.parse_args(argv)
    try:
        out = run(args.alpha, args.eta, args.lam, n_chains=args.n_chains)
    except (TypeError, ValueError) as err:
        p.error(str(err))
    for a, r, s in zip(out["alpha"], out["ratio"], out["se"]):
        print(f"alpha = {a:g}: Var(EMA)/Var(x) = {r:.4f} ± {s:.4f}")
    print(report(out))
    return out


if __name__ == "__main__":
    main()
