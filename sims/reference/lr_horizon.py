r"""NumPy reference of :mod:`sims.lr_horizon` and its benchmark case.

* :func:`constant_step_numpy` -- paired constant-step SGD on the power-law noisy quadratic of
  :func:`theory.lr_horizon.spectrum` (:func:`sims.lr_horizon.constant_step_runs`): a Python loop over steps, arrays
  over step sizes, chains and modes; the final loss (``inf`` where a run left :data:`sims.nqm.BOUND`), the divergence
  flags and the first bad step, with the noise drawn by a NumPy generator or given as an array (so the simulator's
  own draws can be replayed);
* :func:`bench_cases` -- the JAX simulator against :func:`constant_step_numpy` for ``make bench``.
"""
from __future__ import annotations

import math

import numpy as np

import theory.lr_horizon as th
from sims.bench import BenchCase
from sims.nqm import BOUND
from theory import validate as V

__all__ = ["constant_step_numpy", "bench_cases"]


def constant_step_numpy(eta, n_steps: int, beta: float, s: float, sigma2: float, d: int, *, n_chains: int = 32,
                        rng: np.random.Generator | None = None, noise=None, max_bytes=None) -> dict:
    r"""``n_chains`` paired SGD runs of ``n_steps`` steps at each constant step in ``eta``, stepped in Python.

    The model of :func:`theory.lr_horizon.spectrum`: curvatures :math:`\lambda_k`, start :math:`x_{k,0} =
    \sqrt{w_k m_{k,0}}` and additive Gaussian gradient noise of standard deviation :math:`\sqrt{\sigma^2w_k\lambda_k}`, so
    a step is :math:`x \leftarrow (1 - \eta\lambda)x - \eta\sqrt{\sigma^2w\lambda}\,z`. The runs are paired (common
    random numbers): chain :math:`j` sees the same draws :math:`z` at every step size, so a step's draws are one
    ``(n_chains, modes)`` array broadcast over the step sizes.

    Args:
      eta: a positive step or an (m,) array of them.
      n_steps: the horizon :math:`N`, >= 1.
      beta, s, sigma2, d: the model (``sigma2`` :math:`\ge 0`).
      n_chains: runs per step size, >= 1.
      rng: a NumPy ``Generator`` drawing the standard normals (exactly one of ``rng`` and ``noise``).
      noise: the standard normals themselves, ``(n_chains, n_steps, modes)`` (modes: the size of the spectrum).
      max_bytes: the allocation limit (:func:`theory.validate.byte_limit`) for the runs' states.

    Returns:
      ``loss`` (m, n_chains): :math:`\tfrac12\sum_k\lambda_kx_{k,N}^2`, ``inf`` where diverged; ``diverged`` (m, n_chains)
      booleans (some :math:`|x_{k,t}|` beyond :data:`sims.nqm.BOUND` or NaN); ``diverged_step`` (m, n_chains), the
      first such :math:`t \ge 1` (-1 = never).
    """
    steps = np.atleast_1d(V.array("eta", eta, ndim=(0, 1), low=0.0, low_open=True))
    n = V.integer("n_steps", n_steps, low=1)
    sig = V.real("sigma2", sigma2, low=0.0)
    chains = V.integer("n_chains", n_chains, low=1)
    lam, w, load = th.spectrum(beta, s, d)
    k = lam.size
    if (rng is None) == (noise is None):
        raise ValueError("rng, noise: give exactly one of rng (a NumPy Generator) or noise (the standard normals)")
    if rng is not None and not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng: expected a numpy Generator (np.random.default_rng(seed)), got {type(rng).__name__}")
    if noise is not None:
        noise = V.array("noise", noise, shape=(chains, n, k))
    V.check_bytes({"eta": f"{steps.size} steps", "n_chains": chains, "d": f"{k} represented modes"},
                  8 * (3 * steps.size * chains * k + chains * k), what="the runs' states and a step's draws",
                  max_bytes=max_bytes)
    m = steps.size
    a = 1.0 - steps[:, None, None] * lam                      # (m, 1, k): the contraction of each mode
    b = steps[:, None, None] * np.sqrt(sig * w * lam)         # (m, 1, k): the noise's step
    x = np.broadcast_to(np.sqrt(load / lam), (m, chains, k)).copy()
    tmp = np.empty_like(x)
    bad = np.zeros((m, chains), bool)
    first = np.full((m, chains), -1, np.int64)
    with np.errstate(over="ignore", invalid="ignore"):
        for t in range(n):  # the reference steps in Python on purpose: it is the baseline
            x *= a
            if sig > 0:  # without noise nothing is drawn (the simulator's kernel then drops the noise too)
                np.multiply(b, rng.standard_normal((chains, k)) if noise is None else noise[:, t], out=tmp)
                x -= tmp
            # a run is bad from the first step where some mode leaves the bound or turns NaN (NaN fails <=)
            now = ~(np.abs(x, out=tmp).max(axis=2) <= BOUND) & ~bad
            first[now] = t + 1
            bad |= now
        loss = 0.5 * np.sum(lam * x * x, axis=2)
    return {"loss": np.where(bad, np.inf, loss), "diverged": bad, "diverged_step": first}


def bench_cases(scale: str = "small") -> list[BenchCase]:
    """Paired noisy constant-step SGD on the power-law quadratic (units: mode updates)."""
    V.choice("scale", scale, ("small", "large"))
    import jax

    from sims.lr_horizon import constant_step_runs

    # the transfer experiment's model (paper_checks.lr_horizon: beta 2, s 1/2, sigma^2 1, d = 1000: 59 represented
    # modes) over a grid of step sizes up to near the stability edge eta lambda_1 = 2
    beta, s, sigma2, d = 2.0, 0.5, 1.0, 1000
    m, chains, n = (16, 64, 1000) if scale == "small" else (256, 1024, 10_000)
    etas = np.geomspace(0.01, 1.9, m)
    modes = th.spectrum(beta, s, d)[0].size

    def run_jax():
        out = constant_step_runs(jax.random.key(0), etas, n, beta, s, sigma2, d, n_chains=chains)
        return out["loss"], out["diverged"]

    def run_numpy():
        out = constant_step_numpy(etas, n, beta, s, sigma2, d, n_chains=chains, rng=np.random.default_rng(0))
        return out["loss"], out["diverged"]

    def check(jx, npy):
        # Different generators: the runs agree in law. Every step is below the stability edge, so no run may diverge
        # on either side; the mean final loss per step size within 5 standard errors of the difference (the chains
        # are independent; a false alarm among the m comparisons at 5 SE has probability ~m * 6e-7).
        (la, fa), (lb, fb) = jx, npy
        assert not fa.any() and not fb.any(), (fa.sum(), fb.sum())
        ma, mb = la.mean(axis=1), lb.mean(axis=1)
        se = np.hypot(la.std(axis=1, ddof=1), lb.std(axis=1, ddof=1)) / math.sqrt(chains)
        assert np.all(np.abs(ma - mb) <= 5 * se), (ma, mb, se)

    return [BenchCase(f"lr_horizon.constant_step_runs[{m}x{chains}x{n}x{modes}]", "mode updates",
                      float(m * chains * n * modes), run_jax, run_numpy, check,
                      # per mode and step, as the JAX kernel does it: gradient and step 4 (lam x, + sigma z, eta g,
                      # subtract: two multiply-adds), the divergence test 4 (abs, compare, select, max); one Gaussian
                      # draw (and sigma z) per chain, mode and step, shared by the m step sizes
                      cost={"flop": 8 + 1 / m, "normal": 1 / m})]
