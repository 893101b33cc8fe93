r"""Gradient noise, compressors and step schedules of the distributed optimizers.

Additive/multiplicative noise of Gaussian, Student-t or Cauchy law; unbiased Bernoulli and rand-k
compressors driven by counter-based random words; the constant and inverse-square-root schedules; the
exact mean sign :math:`E\,\mathrm{sign}(u + Z)` of each noise law.
"""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

import sims  # noqa: F401  (float64)
from sims.rng import words
from theory import validate as V
from theory.validate import check_bytes, choice, integer, real, traceable as _traceable
from sims.sde.problems import (
    COMPRESSORS, NOISES, SCHEDULES, _MAX_BLOCK, _arr, _grad_arg, _num, _omega_arg, _prng, _traced
)

__all__ = ["noise_scale", "sample_noise", "compress", "schedule_factor", "SIGN_NOISES", "mean_sign_law"]


# ----------------------------------------------------------------------------- noise and compressors

def noise_scale(grad: jax.Array, sigma0, sigma1) -> jax.Array:
    r"""Per-coordinate noise scale :math:`\sqrt{\sigma_0^2 + \sigma_1^2\|\nabla f\|^2}` (affine variance)."""
    grad = _grad_arg("grad", grad)
    _num("sigma0", sigma0, low=0.0)
    _num("sigma1", sigma1, low=0.0)
    return jnp.sqrt(sigma0**2 + sigma1**2 * jnp.sum(grad**2))


def sample_noise(key: jax.Array, kind: str, grad: jax.Array, sigma0, sigma1, n_agents: int,
                 nu: float = 3.0, *, max_bytes=None) -> jax.Array:
    """Noise of each agent, shape ``(n_agents, d)``: scale times a standard Gaussian / Student-t / Cauchy draw.

    ``max_bytes``: the allocation limit (:func:`theory.validate.byte_limit`) for the draw (a Student-t draw with an
    integer ``nu <= 30`` holds ``nu`` more normal arrays of that shape).
    """
    choice("kind", kind, NOISES)
    n_agents = integer("n_agents", n_agents, low=1)
    nu = real("nu", nu, low=0.0, low_open=True)
    _prng("key", key)
    _num("sigma0", sigma0, low=0.0)
    _num("sigma1", sigma1, low=0.0)
    grad = _grad_arg("grad", grad)
    shape = (n_agents,) + jnp.shape(grad)
    arrays = int(nu) + 3 if kind == "student_t" and float(nu).is_integer() and nu <= 30 else 3
    check_bytes({"n_agents": n_agents, "grad": f"shape {jnp.shape(grad)}"}, 8 * arrays * math.prod(shape),
                what="the agents' draws", max_bytes=max_bytes)
    if kind == "none":
        return jnp.zeros(shape, jnp.result_type(grad, jnp.float64))
    return noise_scale(grad, sigma0, sigma1) * _standard(key, kind, shape, nu)


def _standard(key, kind: str, shape: tuple, nu: float, dtype=jnp.float64) -> jax.Array:
    """Standard draws of the noise law ``kind`` (not ``none``) of the given shape, in ``dtype`` (float64 or float32:
    JAX's own float32 samplers, from 32 random bits a value)."""
    if kind == "gaussian":
        return jax.random.normal(key, shape, dtype)
    if kind == "student_t":
        if float(nu).is_integer() and nu <= 30:
            # t_nu = Z / sqrt(chi2_nu / nu) with chi2_nu a sum of nu squared normals: same law as
            # jax.random.t, without compiling the gamma rejection sampler (seconds on CPU).
            kz, kc = jax.random.split(key)
            chi2 = jnp.sum(jax.random.normal(kc, (int(nu),) + shape, dtype) ** 2, axis=0)
            return jax.random.normal(kz, shape, dtype) / jnp.sqrt(chi2 / nu)
        return jax.random.t(key, nu, shape, dtype)
    return jax.random.cauchy(key, shape, dtype)


def compress(key: jax.Array, kind: str, v: jax.Array, omega) -> jax.Array:
    r"""Unbiased compression of each agent's message ``v`` (``(N, d)``) with variances ``omega`` (``(N,)``).

    ``bernoulli``: keep each coordinate with probability :math:`q = 1/(1+\omega)`, scale by :math:`1/q`.
    ``rand_k``: keep :math:`k = \max(1, \mathrm{round}(d/(1+\omega)))` coordinates chosen uniformly
    without replacement (the k smallest of d uniform draws), scale by :math:`d/k` (exact variance
    :math:`d/k - 1`).
    """
    choice("kind", kind, COMPRESSORS)
    _prng("key", key)
    v = _traceable("v", v, ndim=2)
    n, d = v.shape
    _omega_arg(omega, n)
    omega = jnp.broadcast_to(jnp.asarray(omega, jnp.float64), (n,))
    if kind == "none":
        return v
    return _compress(_compression_draws(key, kind, v.shape), kind, v, omega)


def _bits(key: jax.Array, shape: tuple) -> jax.Array:
    r"""Uniform 32-bit integers (:func:`sims.rng.words`): :math:`P(b < t\,2^{32}) = \lceil t\,2^{32}\rceil/2^{32}`, a
    Bernoulli(t) to within :math:`2^{-32}` from one 32-bit word (a float64 uniform costs two)."""
    return words(key, shape)


def _below(bits: jax.Array, t) -> jax.Array:
    r"""``bits < t 2^32``, exactly: against the integer :math:`\lceil t\,2^{32}\rceil` in 64 bits (t = 1 keeps every
    draw). Zero-extending the words is one vector instruction; converting them to float64 is not, on CPUs without
    AVX-512, and was a third of a compressed step's cost."""
    return bits.astype(jnp.uint64) < jnp.ceil(t * 2.0**32).astype(jnp.uint64)


def _compression_draws(key: jax.Array, kind: str, shape: tuple) -> jax.Array:
    """32-bit words for ``bernoulli`` masks; float64 uniforms for ``rand_k`` (ranked, where ties must not occur)."""
    return _bits(key, shape) if kind == "bernoulli" else jax.random.uniform(key, shape, jnp.float64)


def _compress(u: jax.Array, kind: str, v: jax.Array, omega: jax.Array) -> jax.Array:
    """:func:`compress` from its draws ``u`` (:func:`_compression_draws`, the shape of ``v``), ``kind`` not ``none``."""
    d = v.shape[-1]
    if kind == "bernoulli":
        q = 1.0 / (1.0 + omega)
        return jnp.where(_below(u, q[:, None]), v / q[:, None], 0.0)
    k = jnp.clip(jnp.round(d / (1.0 + omega)), 1, d)
    # the k-th smallest draw, found on the draws' bit patterns: floats in [0, 1) order as their IEEE bits read as
    # int64 do (the same masks), and XLA's CPU sort of int64 is three times faster than of float64 (10 against 30
    # CPU-us for 8 x 49 draws; the float comparator also orders NaNs)
    bits = jax.lax.bitcast_convert_type(u, jnp.int64)
    kth = jnp.take_along_axis(jnp.sort(bits, axis=1), (k.astype(int) - 1)[:, None], axis=1)
    return jnp.where(bits <= kth, v * (d / k)[:, None], 0.0)


def schedule_factor(schedule: str, k, dtype=None) -> jax.Array:
    r""":math:`\eta_k`: 1 (``constant``) or :math:`1/\sqrt{k+1}` (``inv_sqrt``) at step index ``k`` (from 0), in ``dtype``
    (:func:`theory.validate.float_dtype`: float64 by default, or float32)."""
    choice("schedule", schedule, SCHEDULES)
    _num("k", k, low=0.0, high=2.0**63, high_open=True)  # a step index is an int64 (JAX with x64)
    if not _traced(k) and not float(np.asarray(k)).is_integer():
        raise ValueError(f"k: expected a whole step index (0, 1, 2, ...), got {k!r}")
    dt = V.float_dtype("dtype", dtype)
    if schedule == "constant":
        return jnp.ones((), dt)
    if dt == np.float32:  # k + 1 exact in float32 up to 2**24 steps; the step count's int64 would promote to float64
        return 1.0 / jnp.sqrt(jnp.asarray(k).astype(dt) + np.float32(1.0))
    return 1.0 / jnp.sqrt(k + 1.0)
SIGN_NOISES = ("gaussian", "student_t", "cauchy")


def _mean_sign(u: jax.Array, noise: str, nu) -> jax.Array:
    """:math:`2F(u) - 1` for the standard law ``noise`` (Student-t through the regularized incomplete beta)."""
    if noise == "gaussian":
        return jax.scipy.special.erf(u / math.sqrt(2.0))
    if noise == "cauchy":
        return 2.0 / math.pi * jnp.arctan(u)
    # F_nu(u) = 1 - I_{nu/(nu+u^2)}(nu/2, 1/2)/2 for u >= 0 (and symmetric), any real nu > 0
    return jnp.sign(u) * (1.0 - jax.scipy.special.betainc(nu / 2.0, 0.5, nu / (nu + u**2)))


def mean_sign_law(u, noise: str = "gaussian", nu: float | None = None) -> jax.Array:
    r"""JAX mean sign :math:`E\,\mathrm{sign}(u + Z) = 2F(u) - 1` of a standard noise law at ``u``:
    ``gaussian`` :math:`\mathrm{erf}(u/\sqrt2)`, ``cauchy`` :math:`\tfrac2\pi\arctan u`, ``student_t``
    :math:`\mathrm{sign}(u)(1 - I_{\nu/(\nu+u^2)}(\nu/2, 1/2))` for any real :math:`\nu > 0`."""
    noise = choice("noise", noise, SIGN_NOISES)
    nu = _nu(noise, nu)
    _arr("u", u, ndim=(0, 1))
    return _mean_sign(jnp.asarray(u, jnp.float64), noise, nu)


def _nu(noise: str, nu) -> float | None:
    if noise == "student_t":
        if nu is None:
            raise ValueError("nu: noise='student_t' needs the degrees of freedom nu > 0, got None")
        return real("nu", nu, low=0.0, low_open=True)
    if nu is not None:
        raise ValueError(f"nu: only noise='student_t' takes nu; got nu={nu!r} with noise={noise!r}")
    return None


def _block_size(per_record: int, cap: int = _MAX_BLOCK) -> int:
    """The largest divisor of ``per_record`` that is at most ``min(cap, _MAX_BLOCK)`` (steps drawn per call)."""
    return max(b for b in range(1, min(per_record, cap, _MAX_BLOCK) + 1) if per_record % b == 0)
