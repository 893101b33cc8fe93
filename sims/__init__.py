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

``$STEPLAB_WORKERS`` = N says that this process is one of N worker processes sharing the machine's cores (the
test workers, ``make figures``' workers and ``steplab dispatch --backend local`` set it; see :func:`share_cores`).
Its XLA and BLAS thread pools then get :func:`worker_threads` threads instead of one per core: with every core
already busy with a worker, more threads only add synchronisation and spinning, never speed.
"""
import os


def _cores() -> int:
    """The cores this process may run on (its CPU affinity where the platform has one)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def worker_threads() -> int | None:
    r"""Threads per pool for one of ``$STEPLAB_WORKERS`` = N workers: :math:`\max(1, \lfloor c/N\rfloor)` for
    :math:`c` cores; None when the variable is unset (every pool keeps its own default, one thread per core)."""
    raw = os.environ.get("STEPLAB_WORKERS", "").strip()
    if not raw:
        return None
    if not raw.isdigit() or int(raw) < 1:
        raise ValueError(f"STEPLAB_WORKERS: expected a positive integer (worker processes sharing the cores), "
                         f"got {raw!r}")
    return max(1, _cores() // int(raw))


def share_cores(workers: int) -> None:
    """Before starting ``workers`` worker processes on this machine: tell them, through the environment they inherit,
    that they share its cores (``$STEPLAB_WORKERS``, and the BLAS libraries' thread counts, read when NumPy and SciPy
    load). A value the user set is kept. This process's own pools are already made and do not change."""
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers: expected a positive int, got {workers!r}")
    os.environ.setdefault("STEPLAB_WORKERS", str(workers))
    _blas_threads(worker_threads())


def _blas_threads(threads: int | None) -> None:
    """The BLAS libraries' thread counts (OpenBLAS, OpenMP, MKL), unless set: they read them when they load."""
    if threads is not None:
        for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ.setdefault(var, str(threads))


_blas_threads(worker_threads())  # before `import jax` loads NumPy and its BLAS

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)


def _size_thread_pools(threads: int | None) -> None:
    """XLA sizes its CPU thread pool from the process's CPU affinity when it creates the CPU client. Create it inside
    an affinity of ``threads`` cores, then give every thread (the pool's included) all the cores back, so the few
    threads still run wherever a core is free."""
    if threads is None or not hasattr(os, "sched_setaffinity"):
        return
    full = os.sched_getaffinity(0)
    if threads >= len(full):
        return
    os.sched_setaffinity(0, set(sorted(full)[:threads]))
    try:
        jax.devices()
    finally:
        for tid in os.listdir("/proc/self/task"):
            try:
                os.sched_setaffinity(int(tid), full)
            except OSError:  # a thread that ended meanwhile
                pass


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
_size_thread_pools(worker_threads())
