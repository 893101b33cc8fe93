r"""Random 32-bit words for the simulators' inner loops: ``jax.random.bits``'s law at a third of its CPU cost.

``jax.random.bits`` (JAX 0.10, ``jax_threefry_partitionable`` on by default) derives its counters so that a
sharded draw equals the unsharded one; on a CPU that costs about 6.7 ns of one core per 32-bit word under
``vmap`` over per-path keys. Hashing the plain counters :math:`0, 1, \dots, n-1` with the key's Threefry-2x32
costs about 2.2 ns (measured single-threaded; both are counter mode: each key is a pseudo-random function of
the counter, so distinct keys give independent streams, exactly as ``jax.random`` with the flag off). The
simulators vmap over per-path keys and never shard inside one key's draw, so they lose nothing by it.

A key of another PRNG implementation (``rbg``, ``unsafe_rbg``) falls back to ``jax.random.bits``.
"""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp
from jax import lax
from jax.extend.random import threefry_2x32

from theory.validate import check_bytes, key as _key

__all__ = ["words"]

_THREEFRY = jax.random.key_impl(jax.random.key(0, impl="threefry2x32"))


def words(key: jax.Array, shape, *, max_bytes=None) -> jax.Array:
    r"""Independent uniform 32-bit words of ``shape`` from one typed key: :math:`P(w < t\,2^{32}) =
    \lceil t\,2^{32}\rceil/2^{32}`, so a compare against :math:`t\,2^{32}` is a Bernoulli(t) to within
    :math:`2^{-32}`. ``max_bytes``: the allocation limit (:func:`theory.validate.byte_limit`) for the words and
    their counters."""
    key = _key("key", key)
    shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    if not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in shape):
        raise ValueError(f"shape: expected a tuple of non-negative integers, got {shape!r}")
    if jax.random.key_impl(key) != _THREEFRY:
        return jax.random.bits(key, shape, jnp.uint32)
    n = math.prod(shape)
    if n >= 2**32:
        raise ValueError(f"shape: at most 2**32 - 1 words per key, got {shape!r} ({n} words)")
    check_bytes({"shape": shape}, 2 * 4 * n, what="the uint32 words and their counters", max_bytes=max_bytes)
    return threefry_2x32(jax.random.key_data(key), lax.iota(jnp.uint32, n)).reshape(shape)
