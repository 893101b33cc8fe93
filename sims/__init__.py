"""JAX simulators, one module per topic, plus the shared sweep engine and results cache.

Importing :mod:`sims` enables 64-bit floats in JAX (``jax_enable_x64``): cycles, radii and
spectra are checked to ~1e-10 and need float64. Simulators that make sense in float32 (large
GPU sweeps) take a ``dtype`` argument; everything else computes in float64.
"""
import jax

jax.config.update("jax_enable_x64", True)
