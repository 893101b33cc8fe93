r"""Monte Carlo SGD on the power-law noisy quadratic of :mod:`theory.lr_horizon`, at constant step sizes.

The model: curvatures :math:`\lambda_k`, a deterministic start :math:`x_{k,0} = \sqrt{w_k m_{k,0}}` (so the bias is
exactly the model's) and additive Gaussian noise of standard deviation :math:`\sigma_k = \sqrt{\sigma^2 w_k\lambda_k}`
per represented mode; a step at the constant step :math:`\eta` is

.. math:: x_{t+1} = x_t - \eta\,(\lambda\odot x_t + \sigma\odot z_{t+1}),

rounded as the per-run simulator rounded it (:func:`_paired_chain`). The runs are paired (common random numbers): chain :math:`j` sees the same standard normals
:math:`z_t` at every step size, so differences between step sizes are measured on the same noise. The final loss
:math:`\tfrac12\sum_k\lambda_k x_{k,N}^2` is computed from the final iterate.

**One draw per chain and step** (:func:`_paired_chain`): one run of the kernel is one chain, carrying the iterates of
all :math:`m` step sizes as an :math:`(m, K)` array (:math:`K` represented modes); a step hashes the chain's
:math:`K` normals once and broadcasts them over the step sizes, instead of once per (step size, chain) run. The draws
are those of :func:`sims.nqm.simulate` with ``paired=True`` and one recording block (the run key
``fold_in(key, j)``, its additive key the third of ``split(run key, 3)``, :math:`z_{t+1}` the elements
:math:`tK..tK+K-1` of that key's flat draw, :func:`sims.nqm.noise_at`), and a step rounds the same operations, so the
results are those of the per-run simulator bit for bit on a CPU (tests/test_lr_horizon.py checks it, divergence
included; a GPU compiler may contract the multiply-adds otherwise) at :math:`1/m` of its draws.

**Divergence is data**: a run that leaves :data:`sims.nqm.BOUND` is flagged ``diverged`` with its first bad step in
``diverged_step`` (-1 if never), and its final loss is ``inf``.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

import sims  # noqa: F401  (float64)
import sims.nqm as sn
import theory.lr_horizon as th
from sims.sweep import padded_length, run_grid
from theory import validate as V

__all__ = ["constant_step_runs", "MAX_STEPS"]

#: the longest horizon :func:`constant_step_runs` accepts
MAX_STEPS = 1_000_000

# a chunk of chains carries about this many iterates (x and the divergence codes: two arrays of chunk x m x K float64
# values, ~0.5 MiB, in a core's share of L2): fewer would pay the loop's per-step overhead more often (at the bench
# case's 16 x 59: 32 chains 1.37 ns per mode update, 64 1.42, 8 2.0)
_CACHE_VALUES = 2**15
_HASH_VALUES = 512  # normals per chain hashed at once (about 512 / K steps; measured fastest)
# the per-run simulator (sims.nqm) hashed 64 // K steps at once (rounded down to a power of two); from 2 steps on, i.e.
# for K <= 32 modes, its step stored the noise per run, which decides how the step rounds (see _paired_chain)
_STORED_NOISE_MODES = 32


def _paired_chain(point: dict, shared: dict, *, noisy: bool, sub: int, stored_noise: bool) -> dict:
    r"""One chain: :math:`N` SGD steps at every step size of ``shared["eta"]`` on one shared noise (pure; mapped over
    the chains by :func:`constant_step_runs`).

    ``point``: ``key_data`` (the base key's words) and ``key_index`` :math:`j` (the chain). ``shared``: ``eta``
    :math:`(m,)`, ``lam``, ``sigma``, ``x0`` :math:`(K,)` and ``T`` (:math:`N`, an integer: a loop bound, not a shape).
    Static: ``noisy`` (False drops the noise: :math:`\sigma = 0`), ``sub`` (steps whose :math:`K` normals are hashed at
    once; the last part may hash values past step :math:`N`, never used) and ``stored_noise`` (below).

    Step :math:`t` (:math:`1 \le t \le N`) computes :math:`g = \lambda x + \sigma z_t` and
    :math:`x \leftarrow x - \eta g` for the :math:`(m, K)` iterates, :math:`z_t` (elements :math:`(t-1)K..tK-1` of the
    additive key's flat draw, :func:`sims.nqm.noise_at`) broadcast over the step sizes. On a CPU, XLA contracts a
    product feeding a sum into one fused multiply-add, so :math:`x \leftarrow \mathrm{fma}(-\eta, g, x)`, and which
    product of :math:`g` is contracted follows the layout: with :math:`\sigma z_t` computed once per chain it is
    rounded and :math:`\lambda x` contracted, :math:`g = \mathrm{fma}(\lambda, x, \mathrm{fl}(\sigma z_t))`; with
    :math:`z_t` stored per iterate (``stored_noise``: one broadcast copy per step size) :math:`\lambda x` is rounded
    and :math:`\sigma z_t` contracted, :math:`g = \mathrm{fma}(\sigma, z_t, \mathrm{fl}(\lambda x))`. The per-run
    simulator :func:`sims.nqm.simulate` had the first layout for :math:`K > 32` modes and the second for
    :math:`K \le 32`; :func:`constant_step_runs` picks the same, so each run rounds as it did.

    Divergence costs one elementwise update per step and no reduction over modes: each iterate keeps
    :math:`c = \max_t c_t` with :math:`c_t = 0` while :math:`|x_t| \le` :data:`sims.nqm.BOUND` and
    :math:`c_t = N + 2 - t` once it is not (NaN fails the comparison), an exact integer that decreases with :math:`t`;
    a step size's first bad step is :math:`N + 2 - \max_k c_k`.

    Returns ``final_x`` :math:`(m, K)`, ``diverged`` :math:`(m,)` and ``diverged_step`` :math:`(m,)` (-1 = never).
    """
    T = shared["T"]
    eta, lam, sig, x0 = shared["eta"][:, None], shared["lam"], shared["sigma"], shared["x0"]
    m, k_modes = eta.shape[0], x0.shape[-1]
    run_key = jax.random.fold_in(jax.random.wrap_key_data(point["key_data"], impl="threefry2x32"), point["key_index"])
    k_add = jax.random.split(run_key, 3)[2]  # the per-run simulator's additive key of its one recording block
    rows = jnp.arange(sub, dtype=T.dtype)[:, None] * k_modes + jnp.arange(k_modes, dtype=T.dtype)
    size = T * k_modes

    def part(p, carry):
        first = p * sub
        z = sn.noise_at(k_add, first * k_modes + rows, "gaussian", 0, size) if noisy else None
        if noisy and stored_noise:
            # the barrier keeps the copies: without it the product sigma z is hoisted out of the step sizes' loop
            z = lax.optimization_barrier(jnp.broadcast_to(z[:, None, :], (sub, m, k_modes)))

        def one(i, carry):
            x, code = carry
            g = lam * x
            if noisy:
                g = g + sig * z[i]
            x = x - eta * g
            t = first + i + 1  # the step just taken
            return x, jnp.maximum(code, jnp.where(jnp.abs(x) <= sn.BOUND, 0.0, (T + 2 - t).astype(x.dtype)))

        return lax.fori_loop(jnp.zeros_like(T), jnp.minimum(sub, T - first), one, carry)

    x = jnp.broadcast_to(x0, (m, k_modes))
    x, code = lax.fori_loop(jnp.zeros_like(T), (T + sub - 1) // sub, part, (x, jnp.zeros_like(x)))
    top = jnp.max(code, axis=-1)
    diverged = top > 0
    return {"final_x": x, "diverged": diverged, "diverged_step": jnp.where(diverged, T + 2 - top.astype(T.dtype), -1)}


def constant_step_runs(key: jax.Array, eta, n_steps: int, beta: float, s: float, sigma2: float, d: int, *,
                       n_chains: int = 32, max_bytes=None) -> dict[str, np.ndarray]:
    r"""``n_chains`` paired SGD runs of ``n_steps`` steps at each constant step in ``eta``.

    Chain :math:`j` runs every step size on the same normals (see the module: one draw per chain and step, shared by
    the step sizes; bit for bit the runs of :func:`sims.nqm.simulate` with ``paired=True``).

    Args:
      key: a typed PRNG key (``jax.random.key``; threefry2x32, whose draws hash counters one value at a time).
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
    if str(jax.random.key_impl(key)) != "threefry2x32":
        raise ValueError(f"key: expected a threefry2x32 key (jax.random.key(seed)), whose draws hash counters one "
                         f"value at a time; got a {jax.random.key_impl(key)} key")
    steps = np.atleast_1d(V.array("eta", eta, ndim=(0, 1), low=0.0, low_open=True))
    n = V.integer("n_steps", n_steps, low=1, high=MAX_STEPS)
    sig = V.real("sigma2", sigma2, low=0.0)
    chains = V.integer("n_chains", n_chains, low=1, high=1_000_000)
    lam, w, load = th.spectrum(beta, s, d)
    m, k = steps.size, lam.size
    # step sizes padded (copies of the last, dropped again) to a power of two up to 16, then to a multiple of 16: a
    # handful of compiled shapes, at most 16 wasted rows
    m_pad = padded_length(m, least=4) if m <= 16 else -(-m // 16) * 16
    V.check_bytes({"eta": f"{m} steps", "n_chains": chains, "d": f"{k} represented modes"}, 8 * m_pad * chains * k * 4,
                  what="the runs' final iterates (returned, reordered and squared)", max_bytes=max_bytes)
    shared = {"eta": np.concatenate([steps, np.full(m_pad - m, steps[-1])]), "lam": lam,
              "sigma": np.sqrt(sig * w * lam), "x0": np.sqrt(load / lam), "T": np.int64(n)}
    data = np.asarray(jax.random.key_data(key))
    grid = {"key_data": np.broadcast_to(data, (chains,) + data.shape), "key_index": np.arange(chains, dtype=np.int64)}
    chunk = min(padded_length(chains, least=8), max(8, 1 << max(0, (_CACHE_VALUES // (m_pad * k)).bit_length() - 1)))
    sub = 1 << (max(1, _HASH_VALUES // k).bit_length() - 1)
    static = {"noisy": bool(sig > 0), "sub": sub, "stored_noise": k <= _STORED_NOISE_MODES}
    out = run_grid(_paired_chain, grid, shared, static=static, chunk_size=chunk, pad_to_chunk=True,
                   desc="lr_horizon chains", max_bytes=max_bytes)
    # (m, chains, K) in C order, as the per-run simulator returned it: the loss's sum over modes then adds in its order
    final = np.ascontiguousarray(np.moveaxis(out["final_x"][:, :m], 0, 1))
    flagged = np.ascontiguousarray(out["diverged"][:, :m].T)
    with np.errstate(over="ignore", invalid="ignore"):
        loss = 0.5 * np.sum(lam * final**2, axis=-1)
    return {"loss": np.where(flagged, np.inf, loss), "diverged": flagged,
            "diverged_step": np.ascontiguousarray(out["diverged_step"][:, :m].T)}
