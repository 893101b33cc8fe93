"""sims.rng.words: the law of independent uniform 32-bit words, per key, under jit and vmap."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import scipy.stats

from sims.rng import words


def test_words_are_uniform_and_independent_across_keys():
    w = np.asarray(jax.jit(jax.vmap(lambda k: words(k, (4096,))))(jax.random.split(jax.random.key(1), 64)))
    assert w.dtype == np.uint32 and w.shape == (64, 4096)
    # top byte of every word: a chi-square goodness of fit over 256 cells (p below 1e-6 would be a real defect,
    # one false alarm in a million runs)
    counts = np.bincount((w >> 24).ravel(), minlength=256)
    assert scipy.stats.chisquare(counts).pvalue > 1e-6
    # the lowest bit too (counter mode must not leak the counter's parity)
    assert scipy.stats.binomtest(int((w & 1).sum()), w.size).pvalue > 1e-6
    # neighbouring keys and neighbouring counters uncorrelated: |r| within 5 standard errors 1/sqrt(n)
    u = w / 2.0**32
    for a, b in ((u[:-1], u[1:]), (u[:, :-1], u[:, 1:])):
        r = np.corrcoef(a.ravel(), b.ravel())[0, 1]
        assert abs(r) < 5 / np.sqrt(a.size), r


def test_words_vmap_equals_loop_and_shape_is_row_major():
    keys = jax.random.split(jax.random.key(2), 3)
    batched = np.asarray(jax.vmap(lambda k: words(k, (2, 5)))(keys))
    for i in range(3):
        one = np.asarray(words(keys[i], (2, 5)))
        np.testing.assert_array_equal(batched[i], one)
        np.testing.assert_array_equal(one.ravel(), np.asarray(words(keys[i], (10,))))


def test_words_fall_back_to_jax_random_for_other_key_kinds():
    key = jax.random.key(3, impl="rbg")
    np.testing.assert_array_equal(np.asarray(words(key, (7,))), np.asarray(jax.random.bits(key, (7,), jnp.uint32)))


def test_a_bernoulli_from_words_has_the_stated_probability():
    # P(w < t 2^32) = ceil(t 2^32)/2^32: at t = 0.3 the frequency over 2^20 words is within 5 binomial SEs
    w = np.asarray(words(jax.random.key(4), (1 << 20,)))
    t, n = 0.3, w.size
    assert abs((w < t * 2.0**32).mean() - t) < 5 * np.sqrt(t * (1 - t) / n)
