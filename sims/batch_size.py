r"""Monte Carlo of one minibatch SGD step on a quadratic (the batch-size topic's one-step law).

The loss is :math:`L(\theta) = \tfrac12\theta^\top H\theta`. A per-example gradient is :math:`G + R\,r` with
:math:`G = H\theta`, :math:`R` a square root of the per-example covariance (:math:`RR^\top = \Sigma`) and :math:`r` a
vector of independent Rademacher signs (mean 0, covariance :math:`I`, not Gaussian); the minibatch gradient
:math:`\hat g_B` is the mean of :math:`B` such examples, summed one example at a time (a loop of traced length, so
every batch size shares one compiled program). Along the step, :math:`\ell(\eta) = L(\theta - \eta\hat g_B)`; its
first two derivatives at :math:`\eta = 0` are taken by :func:`jax.grad` of the loss (not from a closed form). Since
:math:`\ell` is a quadratic in :math:`\eta`, :math:`E\,\ell(\eta) - L = \eta E\ell'(0) + \tfrac12\eta^2E\ell''(0)`
exactly, so the two means give the expected one-step loss at every :math:`\eta`, its minimizer
:math:`-E\ell'/E\ell''` and its best decrease :math:`(E\ell')^2/(2E\ell'')`.

:func:`second_moment_ema` runs Adam's second-moment EMA :math:`v_{t+1} = \beta_2v_t + (1-\beta_2)\hat g_t^2` from
:math:`v_0 = 0` on a flat direction (the minibatch gradient is pure noise, :math:`\hat g_t \sim N(0, \sigma^2/B)`: the
mean of :math:`B` Gaussian examples drawn as one Gaussian of that variance), one ``lax.scan`` per chain; with a Threefry
key, step :math:`t` hashes element :math:`t` of the chain's draw ``jax.random.normal(key, (n_steps,))``
(:func:`sims.nqm.noise_at`, the same values).

Draws run through :func:`sims.sweep.run_grid`; draw :math:`j` at batch size :math:`B` uses
``fold_in(fold_in(key, B), j)`` (example :math:`k` of it ``fold_in`` of that with :math:`k`), so a batch size's draws do
not depend on the other batch sizes of the call. Float64 (importing :mod:`sims` turns it on). A step cannot diverge: nothing is iterated.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

import sims  # noqa: F401  (float64)
from sims.nqm import noise_at
from sims.sweep import run_grid
from theory import validate as V

__all__ = ["CHUNK", "MAX_BATCH", "one_step", "second_moment_ema"]

#: the largest batch a draw may average (each example is one loop iteration)
MAX_BATCH = 1 << 20
#: draws per compiled chunk; every call pads to whole chunks, so calls of any size share one compiled program
CHUNK = 4096


def _loss(theta, H):
    return 0.5 * theta @ H @ theta


def _draw(point, theta, H, R, *, impl: str):
    """One minibatch and the first two derivatives of the loss along its step."""
    base = jax.random.wrap_key_data(point["key_data"], impl=impl)
    key = jax.random.fold_in(jax.random.fold_in(base, point["batch"]), point["index"])
    G = jax.grad(_loss)(theta, H)
    d = theta.shape[0]

    def add(k, acc):
        r = jax.random.rademacher(jax.random.fold_in(key, k), (d,), dtype=jnp.float64)
        return acc + G + R @ r

    g = jax.lax.fori_loop(0, point["batch"], add, jnp.zeros(d)) / point["batch"]
    def ell(eta):
        return _loss(theta - eta * g, H)
    return {"d1": jax.grad(ell)(0.0), "d2": jax.grad(jax.grad(ell))(0.0)}


def one_step(key: jax.Array, theta, H, Sigma, batch_size, *, n_draws: int) -> dict[str, np.ndarray]:
    r"""Per-draw slope and curvature of the loss along one minibatch step, for each batch size.

    Args:
      key: a typed PRNG key (``jax.random.key``).
      theta: the point (d,).
      H: the Hessian (d, d), symmetric PSD.
      Sigma: the per-example gradient covariance (d, d), symmetric PSD (its Cholesky factor scales the signs;
        a singular one is regularized by nothing: pass a PSD matrix with a Cholesky factor).
      batch_size: integers in ``1..MAX_BATCH``, a scalar or (k,).
      n_draws: minibatches per batch size, >= 2.

    Returns:
      ``d1`` and ``d2`` (k, n_draws): :math:`\ell'(0)` and :math:`\ell''(0)` per draw; ``batch_size`` (k,).
    """
    V.key("key", key)
    th = V.array("theta", theta, ndim=1)
    d = th.size
    h = V.symmetric_psd("H", V.array("H", H, shape=(d, d)), "the Hessian H")
    s = V.symmetric_psd("Sigma", V.array("Sigma", Sigma, shape=(d, d)), "the per-example covariance Sigma")
    try:
        R = np.linalg.cholesky(s)
    except np.linalg.LinAlgError:
        raise ValueError("Sigma: expected a positive definite covariance (it needs a Cholesky factor)") from None
    b = np.atleast_1d(V.integers("batch_size", batch_size, ndim=(0, 1), low=1, high=MAX_BATCH))
    n = V.integer("n_draws", n_draws, low=2)
    V.check_bytes({"batch_size": f"{b.size} sizes", "n_draws": n}, 8 * 4 * b.size * n, what="the per-draw outputs")
    impl = str(jax.random.key_impl(key))
    grid = {"key_data": np.broadcast_to(np.asarray(jax.random.key_data(key)), (b.size * n,)
                                        + tuple(np.shape(jax.random.key_data(key)))).copy(),
            "index": np.tile(np.arange(n, dtype=np.int64), b.size), "batch": np.repeat(b.astype(np.int64), n)}
    out = run_grid(_draw, grid, jnp.asarray(th), jnp.asarray(h), jnp.asarray(R), static={"impl": impl},
                   chunk_size=CHUNK, pad_to_chunk=True, desc="batch_size one_step")
    return {"d1": out["d1"].reshape(b.size, n), "d2": out["d2"].reshape(b.size, n), "batch_size": b}


def _ema_chain(point, *, n_steps: int, impl: str, hashed: bool = False):
    """One chain of Adam's second-moment EMA from 0 on pure-noise minibatch gradients, in units of E g^2 = sigma^2/B.

    ``hashed`` (a Threefry key in counter mode, ``jax_threefry_partitionable``): step t hashes element t of
    ``jax.random.normal(key, (n_steps,))`` itself (:func:`sims.nqm.noise_at`, bit for bit), so the chunk's
    (chains, n_steps) draws are never stored and read back at a stride (one CPU chain-step 34 -> 26 ns); other keys
    draw the whole row first.
    """
    key = jax.random.fold_in(jax.random.wrap_key_data(point["key_data"], impl=impl), point["index"])

    def step(v, zt):
        if hashed:
            zt = noise_at(key, zt, "gaussian", 0, n_steps)
        v = point["beta2"] * v + (1 - point["beta2"]) * (point["scale"] * zt) ** 2
        return v, v

    _, path = jax.lax.scan(step, jnp.zeros(()), jnp.arange(n_steps) if hashed else jax.random.normal(key, (n_steps,)))
    return {"v": path / point["scale"] ** 2}


def second_moment_ema(key: jax.Array, beta2, batch_size, *, sigma: float = 1.0, n_steps: int,
                      n_chains: int, paired: bool = False) -> dict[str, np.ndarray]:
    r"""Adam's second-moment EMA from :math:`v_0 = 0` on pure-noise minibatch gradients, per configuration.

    Args:
      key: a typed PRNG key; chain :math:`j` of configuration :math:`g` uses ``fold_in(key, g n + j)`` (independent
        configurations), or ``fold_in(key, j)`` with ``paired=True`` (common random numbers: a configuration's result
        then does not depend on the others).
      beta2: decays in (0, 1), (G,).
      batch_size: batch sizes > 0, (G,) (real: only the noise level :math:`\sigma/\sqrt B` depends on it).
      sigma: the per-example gradient's standard deviation, > 0.
      n_steps: steps per chain, >= 1.
      n_chains: chains per configuration, >= 2.
      paired: a bool, see ``key``.

    Returns:
      ``mean`` and ``se`` (G, n_steps): the mean over chains of :math:`v_t/(\sigma^2/B)`, :math:`t = 1..T`, and its
      standard error (chains independent).
    """
    V.key("key", key)
    b2 = np.atleast_1d(V.array("beta2", beta2, ndim=(0, 1), low=0.0, high=1.0, low_open=True, high_open=True))
    b = np.atleast_1d(V.array("batch_size", batch_size, ndim=(0, 1), low=0.0, low_open=True))
    if b.size != b2.size:
        raise ValueError(f"batch_size: expected one per beta2 ({b2.size}), got {b.size}")
    sigma = V.real("sigma", sigma, low=0.0, low_open=True)
    n_steps = V.integer("n_steps", n_steps, low=1)
    n = V.integer("n_chains", n_chains, low=2)
    if not isinstance(paired, bool):
        raise TypeError(f"paired: expected a bool, got {type(paired).__name__}")
    V.check_bytes({"n_steps": n_steps, "n_chains": n, "beta2": f"{b2.size} decays"}, 8 * 3 * b2.size * n * n_steps,
                  what="every chain's path")
    impl = str(jax.random.key_impl(key))
    g = b2.size
    grid = {"key_data": np.broadcast_to(np.asarray(jax.random.key_data(key)), (g * n,)
                                        + tuple(np.shape(jax.random.key_data(key)))).copy(),
            "index": np.tile(np.arange(n, dtype=np.int64), g) if paired else np.arange(g * n, dtype=np.int64),
            "beta2": np.repeat(b2, n),
            "scale": np.repeat(sigma / np.sqrt(b), n)}
    hashed = impl == "threefry2x32" and bool(jax.config.jax_threefry_partitionable)
    out = run_grid(_ema_chain, grid, static={"n_steps": n_steps, "impl": impl, "hashed": hashed},
                   desc="batch_size second_moment_ema")
    v = out["v"].reshape(g, n, n_steps)
    return {"mean": v.mean(axis=1), "se": v.std(axis=1, ddof=1) / np.sqrt(n)}
