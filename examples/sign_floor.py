r"""The loss floor of signSGD under additive noise, on your curvature, step sizes and noise level.

Mirrors claim ``singh2026.sign_additive_exact_chain`` (Singh, Mishra, Raut 2026; steplab's derivation).

The maths. signSGD on :math:`f(x) = a x^2/2` with additive Gaussian noise,
:math:`x_{k+1} = x_k - \eta\,\mathrm{sign}(a x_k + \sigma\xi_k)`, moves by :math:`\pm\eta` on the lattice
:math:`x_0 + \eta\mathbb Z`. It steps away from 0 with probability :math:`\Phi(-a|x|/\sigma)`, so it is a
birth--death chain with detailed balance
:math:`\pi(n+1)/\pi(n) = \Phi(-a x_n/\sigma)/\Phi(a x_{n+1}/\sigma)` and a stationary floor
:math:`E f = \tfrac a2 E_\pi[x^2]` that depends on :math:`\kappa = a\eta/\sigma`
(:func:`theory.sign_floor.floor`; offset :math:`x_0 = \eta/2`). For small :math:`\kappa` it is
:math:`\sigma\eta(\sqrt{2\pi}/8 + \pi\kappa/32 + O(\kappa^2))`.

The measurement. ``n_chains`` chains of ``T`` steps per configuration (:func:`sims.sign_floor.simulate`);
the Cesàro average of :math:`f` after ``burn`` steps, mean and standard error over chains, against
the exact chain's floor by the claim's own check
(:func:`paper_checks.sign_floor.additive.sign_additive_exact_chain_checks`, 4 SE). Rivals: the small-:math:`\kappa` series and SGD's
additive floor :math:`\eta\sigma^2/(2(2 - \eta a))`. The series is rejected only where some
:math:`\kappa` is of order one (its error is :math:`O(\kappa^2)`).

Run: ``python examples/sign_floor.py --a 1 --eta 0.1,0.5,2 --sigma 1``
"""
from __future__ import annotations

import argparse

import jax
import numpy as np

import sims.sign_floor as S
from _common import floats, outcome, report
from paper_checks.sign_floor.additive import sign_additive_exact_chain_checks
from theory import validate as V

CLAIM = "singh2026.sign_additive_exact_chain"


def run(a=1.0, eta=(0.1, 0.5, 2.0), sigma=1.0, *, n_chains: int = 256, n_steps: int = 1500, burn: int = 500,
        seed: int = 0) -> dict:
    """Stationary E f of signSGD with additive noise per configuration (a, eta, sigma).

    ``a``, ``eta``, ``sigma``: scalars or sequences of one common length (one configuration each).
    Returns the outcome of :func:`_common.outcome` plus ``a``, ``eta``, ``sigma``, ``kappa`` and
    ``n_diverged`` (chains left out of the statistics).
    """
    cfg = [V.array(name, v, ndim=(0, 1), low=0.0, low_open=True) for name, v in (("a", a), ("eta", eta), ("sigma", sigma))]
    try:
        a, eta, sigma = (np.atleast_1d(v).astype(float) for v in np.broadcast_arrays(*cfg))
    except ValueError:
        raise ValueError(f"a, eta, sigma: expected scalars or sequences of one common length, got lengths "
                         f"{[np.size(v) for v in cfg]}") from None
    n_chains = V.integer("n_chains", n_chains, low=2)
    n_steps = V.integer("n_steps", n_steps, low=2)
    burn = V.integer("burn", burn, low=0, high=n_steps - 1)
    kappa = a * eta / sigma
    # the chain forgets its start in about 1/kappa steps (drift ~ kappa of a lattice site per site of distance)
    if burn < 10 / kappa.min():
        raise ValueError(f"burn: kappa = a*eta/sigma = {kappa.min():.3g} needs burn >= 10/kappa = "
                         f"{10 / kappa.min():.0f} steps to forget the start; got burn = {burn} (raise burn and n_steps)")
    res = S.simulate(jax.random.key(seed), eta=eta, x0=(eta / 2)[:, None], h=a[:, None], method="sign", sigma_a=sigma,
                     T=n_steps, n_rec=1, burn=burn, n_chains=n_chains)
    s = S.summarize(res["mean_f"], res["diverged"])
    if np.any(s.n < 2):
        raise ValueError("eta: fewer than two finite chains in some configuration; lower eta")
    result = sign_additive_exact_chain_checks(a, eta, sigma, s.mean, s.se)
    return outcome(CLAIM, result, a=a, eta=eta, sigma=sigma, kappa=kappa, n_diverged=int(np.sum(s.n_diverged)))


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--a", type=floats, default=[1.0], help="curvature(s) a of f = a x^2/2 (default 1)")
    p.add_argument("--eta", type=floats, default=[0.1, 0.5, 2.0], help="step size(s), comma-separated (default 0.1,0.5,2)")
    p.add_argument("--sigma", type=floats, default=[1.0], help="additive noise level(s) sigma (default 1)")
    p.add_argument("--n-chains", type=int, default=256, help="independent chains per configuration (default 256)")
    p.add_argument("--n-steps", type=int, default=1500, help="steps per chain (default 1500)")
    p.add_argument("--burn", type=int, default=500, help="steps left out of the Cesàro average (default 500)")
    p.add_argument("--seed", type=int, default=0, help="PRNG seed (default 0)")
    args = p.parse_args(argv)
    try:
        out = run(args.a, args.eta, args.sigma, n_chains=args.n_chains, n_steps=args.n_steps, burn=args.burn,
                  seed=args.seed)
    except (TypeError, ValueError) as err:
        p.error(str(err))
    print(f"kappa = a*eta/sigma = {np.round(out['kappa'], 4).tolist()}; {out['n_diverged']} diverged chains")
    print(report(out))
    return out


if __name__ == "__main__":
    main()
