r"""Monte Carlo of one minibatch SGD step on a quadratic (the batch-size topic's one-step law).

The loss is :math:`L(\theta) = \tfrac12\theta^\top H\theta`. A per-example gradient is :math:`G + R\,r` with
:math:`G = H\theta`, :math:`R` a square root of the per-example covariance (:math:`RR^\top = \Sigma`) and :math:`r` a
vector of independent Rademacher signs (mean 0, covariance :math:`I`, not Gaussian); the minibatch gradient
:math:`\hat g_B` is the mean of :math:`B` such examples, :math:`\hat g_B = G + R\,\bar r` with :math:`\bar r = S/B` and
:math:`S` the vector of the :math:`B` examples' sign sums. A coordinate's sum of :math:`B` signs is
:math:`2K - B` with :math:`K` the number of ones among :math:`B` fair bits (exactly Binomial(:math:`B`, 1/2): the same
law as summing the signs one by one), so each draw takes :math:`d\lceil B/32\rceil` random 32-bit words, counts their
ones with ``lax.population_count`` and applies :math:`R` once. Along the step, :math:`\ell(\eta) =
L(\theta - \eta\hat g_B)`; its first two derivatives at :math:`\eta = 0`,
:math:`\ell'(0) = -\hat g_B^\top\nabla L(\theta)` and :math:`\ell''(0) = \hat g_B^\top\nabla^2L(\theta)\,\hat g_B`,
take :math:`\nabla L` and :math:`\nabla^2L` from :func:`jax.grad` and :func:`jax.hessian` of the loss (autodiff at
:math:`\theta`, once per compiled chunk; not a closed form). Since :math:`\ell` is a quadratic in :math:`\eta`,
:math:`E\,\ell(\eta) - L = \eta E\ell'(0) + \tfrac12\eta^2E\ell''(0)` exactly, so the two means give the expected
one-step loss at every :math:`\eta`, its minimizer :math:`-E\ell'/E\ell''` and its best decrease
:math:`(E\ell')^2/(2E\ell'')`.

The draw, exactly: draw :math:`j` at batch size :math:`B` has the key :math:`k_j` = ``fold_in(fold_in(key, B), j)``
(so a batch size's draws do not depend on the other batch sizes of the call); its word block :math:`w = 0, \dots,
\lceil B/32\rceil - 1` is ``sims.rng.words(fold_in(`` :math:`k_j` ``, w), (d,))``, and coordinate :math:`i` counts the
ones of word :math:`i` of block :math:`w` among its lowest :math:`\min(32, B - 32w)` bits. (:math:`k_j` itself is
only folded, never drawn from: ``words`` hashes the counter pairs :math:`(i, i + \lceil d/2\rceil)` and ``fold_in``
the pair :math:`(0, x)`, so drawing from a key that is also folded would repeat hashes.) With a Threefry key the
words are hashed by an unrolled copy of JAX's Threefry-2x32 rounds, bit for bit ``sims.rng.words`` (tested): XLA's CPU
lowering of the Threefry primitive is a rolled loop over whole arrays, and fused with the popcounts the unrolled
rounds hash each counter pair once, in registers. (An ``rbg`` key's ``jax.random.bits`` differs under ``vmap``
from its unbatched draw, so with such a key the blocks are those words as drawn inside the mapped kernel.) The batch
size is traced (a loop over word blocks of traced length), so every batch size shares one compiled program.

:func:`second_moment_ema` runs Adam's second-moment EMA :math:`v_{t+1} = \beta_2v_t + (1-\beta_2)\hat g_t^2` from
:math:`v_0 = 0` on a flat direction (the minibatch gradient is pure noise, :math:`\hat g_t \sim N(0, \sigma^2/B)`: the
mean of :math:`B` Gaussian examples drawn as one Gaussian of that variance). One kernel runs all the chains of a
configuration side by side, one ``lax.scan`` over steps, and keeps only the mean over chains of
:math:`v_t/(\sigma^2/B)` and its sum of squared deviations at every step (the chains' paths never leave the kernel).
Chain :math:`j` draws ``jax.random.normal(fold_in(key, index_j), (n_steps,))``; with a Threefry key in counter mode
(``jax_threefry_partitionable``, the default) step :math:`t` hashes element :math:`t` of it alone
(:func:`sims.nqm.noise_at`'s map, its Threefry rounds unrolled as above: the same values, tested).

Draws run through :func:`sims.sweep.run_grid`. Float64 (importing :mod:`sims` turns it on). A step cannot diverge:
nothing is iterated.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

import sims  # noqa: F401  (float64)
from sims.rng import words
from sims.sweep import run_grid
from theory import validate as V

__all__ = ["CHUNK", "EMA_CHUNK", "MAX_BATCH", "one_step", "second_moment_ema"]

#: the largest batch a draw may average (a draw hashes d ceil(B/32) words)
MAX_BATCH = 1 << 20
#: draws per compiled chunk; every call pads to whole chunks, so calls of any size share one compiled program
CHUNK = 16384
#: chains per compiled chunk of :func:`second_moment_ema` (whole configurations, at least one)
EMA_CHUNK = 8192

_THREEFRY = "threefry2x32"
# jax.random.normal's float64 map of a uniform (the constants of sims.nqm.noise_at)
_SQRT2 = np.sqrt(np.float64(2.0))
_NORMAL_LOW = np.nextafter(np.float64(-1.0), np.float64(0.0))
# Threefry-2x32's rotations, in JAX's order (jax._src.random.threefry2x32)
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))


def _threefry(k0, k1, x0, x1):
    """Threefry-2x32 (20 rounds) of the counter pairs ``(x0, x1)`` under the key words ``(k0, k1)``: JAX's
    ``threefry2x32`` primitive with its rounds unrolled (the same bits; ``tests/test_batch_size.py`` checks it against
    :func:`sims.rng.words`). Plain uint32 arithmetic, so XLA fuses it with its consumers."""
    ks = (k0, k1, k0 ^ k1 ^ np.uint32(0x1BD11BDA))
    x0, x1 = x0 + ks[0], x1 + ks[1]
    for i in range(5):
        for r in _ROTATIONS[i % 2]:
            x0 = x0 + x1
            x1 = x0 ^ ((x1 << np.uint32(r)) | (x1 >> np.uint32(32 - r)))
        x0 = x0 + ks[(i + 1) % 3]
        x1 = x1 + ks[(i + 2) % 3] + np.uint32(i + 1)
    return x0, x1


def _sign_sums(key_j, b, d: int, *, impl: str):
    r"""The :math:`d` sums of :math:`B` Rademacher signs of one draw (int64): :math:`2K - B`, :math:`K` the ones among
    the lowest :math:`\min(32, B - 32w)` bits of word :math:`i` of ``words(fold_in(key_j, w), (d,))``, summed over
    blocks :math:`w < \lceil B/32\rceil`.

    ``words`` hashes the counter pair :math:`(i, i + h)` (:math:`h = \lceil d/2\rceil`; for odd :math:`d` the last pair
    is :math:`(h - 1, 0)` and its second word is dropped) into words :math:`i` and :math:`i + h`. One loop element
    takes both words of a pair and keeps their two counts in one int64 (low and high 32 bits), so the fused loop
    hashes each pair once.
    """
    h = (d + 1) // 2
    c = lax.iota(jnp.uint32, h)
    c1 = c + np.uint32(h)
    if d % 2:
        c1 = jnp.where(c == h - 1, np.uint32(0), c1)
    full, rem = b // 32, (b % 32).astype(jnp.uint32)

    def block(w, acc):
        kw = jax.random.fold_in(key_j, w)
        if impl == _THREEFRY:
            kd = jax.random.key_data(kw)
            lo, hi = _threefry(kd[0], kd[1], c, c1)
        else:
            u = words(kw, (d,))
            lo, hi = u[:h], jnp.pad(u[h:], (0, 2 * h - d))
        mask = jnp.where(w < full, np.uint32(0xFFFFFFFF), (np.uint32(1) << rem) - np.uint32(1))
        return acc + (lax.population_count(lo & mask).astype(jnp.int64)
                      + (lax.population_count(hi & mask).astype(jnp.int64) << 32))

    # every draw has a first block; the loop over the others has traced length (0 below B = 33)
    acc = lax.fori_loop(1, (b + 31) // 32, block, block(0, jnp.zeros(h, jnp.int64)))
    ones = jnp.concatenate([acc & 0xFFFFFFFF, (acc >> 32)[:d - h]])
    return 2 * ones - b


def _loss(theta, H):
    return 0.5 * theta @ H @ theta


def _draw(point, key_data, theta, H, R, *, impl: str):
    """One minibatch and the first two derivatives of the loss along its step."""
    base = jax.random.wrap_key_data(key_data, impl=impl)
    key = jax.random.fold_in(jax.random.fold_in(base, point["batch"]), point["index"])
    # unbatched (theta and H are shared arguments): computed once per chunk
    grad, hess = jax.grad(_loss)(theta, H), jax.hessian(_loss)(theta, H)
    s = _sign_sums(key, point["batch"], theta.shape[0], impl=impl)
    g = grad + R @ (s.astype(jnp.float64) / point["batch"])
    return {"d1": -(g @ grad), "d2": g @ (hess @ g)}


def _one_step_inputs(theta, H, Sigma, batch_size, n_draws):
    """:func:`one_step`'s arguments checked (also its NumPy reference's): ``(theta, H, R, batch_size (k,), n_draws)``
    with ``R`` the Cholesky factor of ``Sigma``; a ``ValueError`` names the argument otherwise."""
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
    return th, h, R, b, n


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
    th, h, R, b, n = _one_step_inputs(theta, H, Sigma, batch_size, n_draws)
    V.check_bytes({"batch_size": f"{b.size} sizes", "n_draws": n}, 8 * 4 * b.size * n, what="the per-draw outputs")
    impl = str(jax.random.key_impl(key))
    grid = {"index": np.tile(np.arange(n, dtype=np.int64), b.size), "batch": np.repeat(b.astype(np.int64), n)}
    out = run_grid(_draw, grid, jax.random.key_data(key), jnp.asarray(th), jnp.asarray(h), jnp.asarray(R),
                   static={"impl": impl}, chunk_size=CHUNK, pad_to_chunk=True, desc="batch_size one_step")
    return {"d1": out["d1"].reshape(b.size, n), "d2": out["d2"].reshape(b.size, n), "batch_size": b}


def _normal_at(k0, k1, t):
    r"""Element ``t`` of ``jax.random.normal(key, (n,))`` for the key words ``(k0, k1)`` (Threefry, counter mode:
    ``jax_threefry_partitionable``): :func:`sims.nqm.noise_at`'s Gaussian, its hash by :func:`_threefry` (the same
    bits, tested): the counter's high and low words hashed, their 52 high bits a uniform in [1, 2), shifted onto
    (-1, 1) and mapped by :math:`\sqrt2\,\mathrm{erf}^{-1}`."""
    i = jnp.asarray(t).astype(jnp.uint64)
    hi, lo = _threefry(k0, k1, (i >> 32).astype(jnp.uint32), i.astype(jnp.uint32))
    bits = (hi.astype(jnp.uint64) << 32) | lo.astype(jnp.uint64)
    one = np.array(1.0, np.float64).view(np.uint64)
    u = lax.bitcast_convert_type((bits >> 12) | one, jnp.float64) - 1.0
    return _SQRT2 * lax.erf_inv(jnp.maximum(_NORMAL_LOW, u * (np.float64(1.0) - _NORMAL_LOW) + _NORMAL_LOW))


def _ema_config(point, *, n_chains: int, n_steps: int, impl: str, hashed: bool = False):
    """All chains of one configuration of Adam's second-moment EMA from 0 on pure-noise minibatch gradients: per step,
    the mean over chains of v_t / (sigma^2/B) and the sum of squared deviations from it.

    Chain ``j`` has the key ``fold_in(key, first + j)``. ``hashed`` (a Threefry key in counter mode,
    ``jax_threefry_partitionable``): step t hashes element t of ``jax.random.normal(key_j, (n_steps,))`` itself
    (:func:`_normal_at`, bit for bit), so the (chains, n_steps) draws are never stored; other keys draw the whole rows
    first. Each chain's state is updated by the same operations as a chain run alone, so the results move only in
    the last bits (where XLA contracts the update into FMAs otherwise, and the sums over chains change order).
    """
    base = jax.random.wrap_key_data(point["key_data"], impl=impl)
    keys = jax.vmap(jax.random.fold_in, (None, 0))(base, point["first"] + jnp.arange(n_chains))
    beta2, scale = point["beta2"], point["scale"]
    kd = jax.random.key_data(keys)

    def step(v, zt):
        if hashed:
            zt = _normal_at(kd[:, 0], kd[:, 1], zt)
        v = beta2 * v + (1 - beta2) * (scale * zt) ** 2
        u = v / scale**2
        mean = jnp.mean(u)
        return v, (mean, jnp.sum((u - mean) ** 2))

    xs = jnp.arange(n_steps) if hashed else jax.vmap(lambda k: jax.random.normal(k, (n_steps,)))(keys).T
    _, (mean, sq) = lax.scan(step, jnp.zeros(n_chains), xs)
    return {"mean": mean, "sq": sq}


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
      standard error (chains independent), both reduced inside the kernel step by step (the chains' paths are never
      stored).
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
    impl = str(jax.random.key_impl(key))
    g = b2.size
    hashed = impl == _THREEFRY and bool(jax.config.jax_threefry_partitionable)
    per_chunk = max(1, EMA_CHUNK // n)   # configurations per chunk
    # the records (mean and squared deviations per configuration and step, in the kernel and on the host) and the
    # chains' states; without hashing, a chunk's normals (its chains' whole rows)
    rows = 0 if hashed else min(per_chunk, g) * n * n_steps
    V.check_bytes({"n_steps": n_steps, "n_chains": n, "beta2": f"{g} decays"},
                  8 * (4 * g * n_steps + 3 * min(per_chunk, g) * n + rows),
                  what="the per-step records and the chains' states")
    grid = {"key_data": np.broadcast_to(np.asarray(jax.random.key_data(key)), (g,)
                                        + tuple(np.shape(jax.random.key_data(key)))).copy(),
            "first": np.zeros(g, np.int64) if paired else np.arange(g, dtype=np.int64) * n,
            "beta2": b2.astype(np.float64), "scale": sigma / np.sqrt(b)}
    out = run_grid(_ema_config, grid, static={"n_chains": n, "n_steps": n_steps, "impl": impl, "hashed": hashed},
                   chunk_size=per_chunk, desc="batch_size second_moment_ema")
    return {"mean": out["mean"], "se": np.sqrt(out["sq"] / (n - 1)) / np.sqrt(n)}
