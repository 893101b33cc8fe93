"""JAX simulators, one module per topic, plus the shared sweep engine and results cache.

Importing :mod:`sims` enables 64-bit floats in JAX (``jax_enable_x64``): cycles, radii and
spectra are checked to ~1e-10 and need float64, so every simulator computes in float64 unless its
docstring says otherwise (the ``low_precision`` topic emulates bfloat16 on purpose).

It also turns on JAX's persistent compilation cache in the user's cache folder (see
:func:`sims.cache.xla_cache_dir`: ``$JAX_COMPILATION_CACHE_DIR`` if set, else
``$XDG_CACHE_HOME/steplab-xla``, default ``~/.cache/steplab-xla``), for programs that take at least
``$JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS`` to compile (default 0: every program). Most of a cold run is
compiling XLA programs; with the cache a second clone, a second process or a later session reads
them back instead. ``steplab cache --clear`` removes it; ``make clean`` leaves it.
"""
import os

import jax

jax.config.update("jax_enable_x64", True)


def _use_compilation_cache() -> None:
    # an explicit setting (the environment, or a caller's jax.config before importing sims) wins
    from sims.cache import xla_cache_dir

    if not jax.config.jax_compilation_cache_dir:
        jax.config.update("jax_compilation_cache_dir", str(xla_cache_dir()))
    if "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS" not in os.environ:
        # JAX's default (1 s) leaves out the many short programs that make most of a cold run's compiling; reading
        # one back costs less than compiling it, and the fast tier's ~2,000 programs take ~26 MB
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)


_use_compilation_cache()
