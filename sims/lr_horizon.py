r"""Monte Carlo SGD on the power-law noisy quadratic of :mod:`theory.lr_horizon`, at constant step sizes.

Each step size is one configuration of the shared simulator :func:`sims.nqm.simulate` (one compiled kernel for the
whole grid): curvatures :math:`\lambda_k`, a deterministic start :math:`x_{k,0} = \sqrt{w_k m_{k,0}}` (so the bias
is exactly the model's) and additive Gaussian noise of variance :math:`\sigma^2 w_k\lambda_k` per represented mode.
The runs are paired (common random numbers across step sizes), so differences between step sizes are measured on
the same noise. The final loss :math:`\tfrac12\sum_k\lambda_k x_{k,N}^2` is computed from the final iterate.

**Divergence is data**: a run that leaves :data:`sims.nqm.BOUND` is flagged ``diverged`` with its first bad step in
``diverged_step`` (-1 if never), and its final loss is ``inf``.
"""
from __future__ import annotations

import jax
import numpy as np

import sims  # noqa: F401  (float64)
import sims.nqm as sn
import theory.lr_horizon as th
from theory import validate as V

__all__ = ["constant_step_runs", "MAX_STEPS"]

#: the longest horizon :func:`constant_step_runs` accepts
MAX_STEPS = 1_000_000


def constant_step_runs(key: jax.Array, eta, n_steps: int, beta: float, s: float, sigma2: float, d: int, *,
                       n_chains: int = 32, max_bytes=None) -> dict[str, np.ndarray]:
    r"""``n_chains`` paired SGD runs of ``n_steps`` steps at each constant step in ``eta``.

    Args:
      key: a typed PRNG key (``jax.random.key``).
      eta: a positive step or an (m,) array of them.
      n_steps: the horizon :math:`N`, in ``1..MAX_STEPS``.
      beta, s, sigma2, d: the model (:func:`theory.lr_horizon.spectrum`; ``sigma2`` :math:`\ge 0`).
      n_chains: runs per step size.
      max_bytes: the allocation limit (:func:`theory.validate.byte_limit`).

    Returns:
      ``loss`` (m, n_chains) final losses (``inf`` where diverged); ``diverged`` (m, n_chains) booleans;
      ``diverged_step`` (m, n_chains) integers (-1 = never).
    """
    V.key("key", key)
    steps = np.atleast_1d(V.array("eta", eta, ndim=(0, 1), low=0.0, low_open=True))
    n = V.integer("n_steps", n_steps, low=1, high=MAX_STEPS)
    sig = V.real("sigma2", sigma2, low=0.0)
    chains = V.integer("n_chains", n_chains, low=1, high=1_000_000)
    lam, w, load = th.spectrum(beta, s, d)
    V.check_bytes({"eta": f"{steps.size} steps", "n_chains": chains, "d": f"{lam.size} represented modes"},
                  8 * steps.size * (chains * lam.size * 4 + n), what="the runs' states and the schedules",
                  max_bytes=max_bytes)
    out = sn.simulate(key, T=n, eta=np.repeat(steps[:, None], n, axis=1), x0=np.sqrt(load / lam), lam=lam,
                      sigma_a=np.sqrt(sig * w * lam), n_chains=chains, paired=True, max_bytes=max_bytes)
    flagged = np.asarray(out["diverged"])
    with np.errstate(over="ignore", invalid="ignore"):
        loss = 0.5 * np.sum(lam * np.asarray(out["final_x"]) ** 2, axis=-1)
    return {"loss": np.where(flagged, np.inf, loss), "diverged": flagged,
            "diverged_step": np.asarray(out["diverged_step"])}
