r"""The sweep engine: one jitted function mapped over a grid of independent runs.

A *grid* is a pytree whose leaves share a leading axis of length ``n`` (one entry per run:
step size, initialization, PRNG key, dataset, ...). :func:`run_grid` evaluates ``fn`` on every
grid point with ``jax.vmap``, shards the grid axis over a 1-D mesh of ``jax.devices()`` and
walks the grid in equal chunks so memory stays bounded. ``fn`` is the per-run function: it
typically runs ``lax.scan`` over optimization steps, so no Python loop ever touches a step.

The same code runs on one CPU, one GPU, many devices on one host, or many hosts joined by
``jax.distributed.initialize()`` (``jax.devices()`` then lists every host's devices and outputs
are gathered to every process); the result does not depend on the device count (bit-identical
on 1 and 4 virtual CPU devices, tested) nor on the chunk size. Device memory is bounded by the
chunk: a chunk that does not fit raises ``MemoryError`` naming ``chunk_size``.
"""
from __future__ import annotations

import functools
import math
import sys
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from theory import validate as V

__all__ = ["run_grid", "cartesian", "grid_size", "diverged", "floats_as", "padded_length"]


def grid_size(grid: Any) -> int:
    """Length of the shared leading axis of every leaf of ``grid``; ``ValueError`` if they differ."""
    leaves = jax.tree_util.tree_leaves(grid)
    if not leaves:
        raise ValueError("grid: expected at least one array leaf, got an empty pytree")
    sizes = {int(np.shape(x)[0]) if np.ndim(x) else -1 for x in leaves}
    if -1 in sizes:
        raise ValueError("grid: every leaf needs a leading grid axis; got a 0-d leaf")
    if len(sizes) != 1:
        raise ValueError(f"grid: leaves have different leading lengths {sorted(sizes)}; they must agree")
    n = sizes.pop()
    if n == 0:
        raise ValueError("grid: the grid axis is empty (length 0)")
    return n


def cartesian(**axes: Any) -> tuple[dict[str, Any], tuple[int, ...]]:
    r"""Flatten the Cartesian product of named axes into one grid axis.

    Each axis is an array (or typed key array) whose leading dimension indexes its values.
    Returns ``(grid, shape)`` where ``grid[name]`` has leading length :math:`\prod_k n_k`
    in C order, and ``shape = (n_1, ..., n_K)`` reshapes any per-run output back.
    """
    if not axes:
        raise ValueError("cartesian: give at least one named axis")
    lengths = []
    for name, values in axes.items():
        if np.ndim(values) == 0:
            raise ValueError(f"{name}: axis must have a leading dimension, got a scalar")
        if not _is_key(values):
            a = np.asarray(values)
            if a.dtype.kind not in "biufc":
                raise TypeError(f"{name}: axis must hold numbers or typed keys, got dtype {a.dtype}")
            if a.dtype.kind in "fc" and not np.all(np.isfinite(a)):
                raise ValueError(f"{name}: axis values must be finite, got {a[~np.isfinite(a)][:3]}")
        if int(np.shape(values)[0]) == 0:
            raise ValueError(f"{name}: axis is empty (the product would be an empty sweep)")
        lengths.append(int(np.shape(values)[0]))
    index = np.indices(lengths).reshape(len(lengths), -1)
    grid = {name: values[index[k]] for k, (name, values) in enumerate(axes.items())}
    return grid, tuple(lengths)


def diverged(x: jax.Array, bound: float = 1e150) -> jax.Array:
    """True where a state is non-finite or beyond ``bound`` in absolute value (reduced over trailing axes).

    Divergence is data: sweeps mark such runs instead of failing. ``bound`` is a positive number.
    """
    if not isinstance(bound, jax.core.Tracer):
        from theory import validate as V

        V.real("bound", bound, low=0.0, low_open=True)
    bad = ~jnp.isfinite(x) | (jnp.abs(x) > bound)
    return bad.reshape(bad.shape[:1] + (-1,)).any(axis=1) if bad.ndim > 1 else bad


def floats_as(grid: dict, dtype) -> dict:
    """``grid`` (a dict of arrays) with every floating array cast to ``dtype`` (``"float32"`` or ``"float64"``, see
    :func:`theory.validate.float_dtype`: a float32 sweep's inputs, validated in float64) and every other entry
    (integers, booleans, PRNG keys) as it is."""
    dt = V.float_dtype("dtype", dtype)
    if not isinstance(grid, dict):
        raise TypeError(f"grid: expected a dict of arrays, got {type(grid).__name__}")
    bad = [k for k, v in grid.items() if not hasattr(v, "dtype")]
    if bad:
        raise TypeError(f"grid: expected a dict of arrays; entry {bad[0]!r} is a {type(grid[bad[0]]).__name__}")
    return {k: v.astype(dt) if jnp.issubdtype(v.dtype, jnp.floating) else v for k, v in grid.items()}


def padded_length(n: int, *, least: int = 1, most: int | None = None) -> int:
    r"""A padded size for ``n`` items: the smallest power of two :math:`2^k \ge n`, at least ``least``, at most
    ``most`` (None: no cap), i.e. :math:`\min(\text{most}, \max(\text{least}, 2^{\lceil\log_2 n\rceil}))`.

    As a ``run_grid`` chunk with ``pad_to_chunk`` (or a padded loop length), it gives a simulator a handful of
    compiled shapes however many points its calls have, while a grid never runs more than twice its points."""
    n = V.integer("n", n, low=0)
    least = V.integer("least", least, low=1)
    most = None if most is None else V.integer("most", most, low=1)
    size = max(least, 1 << max(n - 1, 0).bit_length())
    return size if most is None else min(most, size)


def _is_key(x: Any) -> bool:
    return hasattr(x, "dtype") and jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key)


def _chunk(x: Any, start: int, stop: int, size: int) -> Any:
    """Rows ``start:stop`` of a grid leaf, padded to ``size`` by repeating the last row (padded runs stay finite).

    Plain arrays are sliced and padded in NumPy: doing it with jnp would compile one small eager
    program per chunk shape. Typed PRNG keys have no NumPy form and are handled by JAX.
    """
    if _is_key(x):
        piece = x[start:stop]
        missing = size - piece.shape[0]
        return piece if missing == 0 else jnp.concatenate([piece, jnp.repeat(piece[-1:], missing, axis=0)], axis=0)
    piece = np.asarray(x)[start:stop]
    missing = size - piece.shape[0]
    return piece if missing == 0 else np.concatenate([piece, np.repeat(piece[-1:], missing, axis=0)], axis=0)


def _host(y: Any, n: int) -> Any:
    """The first ``n`` rows of an output as a writable host array (keys stay JAX arrays).

    Across hosts (``jax.distributed``) each process holds only its own devices' rows of a chunk;
    they are gathered first, so every process returns the whole grid.
    """
    if not _is_key(y) and not getattr(y, "is_fully_addressable", True):
        from jax.experimental import multihost_utils

        y = multihost_utils.process_allgather(y, tiled=True)
    return y[:n] if _is_key(y) else np.array(np.asarray(y)[:n])


class _Lines:
    """A stream for tqdm outside a terminal: each redraw becomes one plain line (no carriage returns)."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream

    def write(self, s: str) -> None:
        s = s.replace("\r", "").strip()
        if s:
            self.stream.write(s + "\n")

    def flush(self) -> None:
        self.stream.flush()


def _frozen(static: dict) -> tuple:
    """``static`` as a hashable, order-independent cache key (``TypeError`` naming an unhashable entry)."""
    if not isinstance(static, dict):
        raise TypeError(f"static: expected a dict of hashable configuration values, got {type(static).__name__}")
    items = tuple(sorted(static.items()))
    for name, value in items:
        try:
            hash(value)
        except TypeError:
            raise TypeError(f"static: entry {name!r} = {type(value).__name__} is not hashable; pass arrays as "
                            "arguments, and numbers, strings or tuples as static configuration") from None
    return items


def _check_stable(fn: Callable) -> None:
    """Refuse per-run functions that are new objects on every call (each would compile anew)."""
    if isinstance(fn, functools.partial):
        raise TypeError("fn: a functools.partial is a new object per call and recompiles every sweep; pass the "
                        "function itself and its configuration through static={...}")
    qualname = getattr(fn, "__qualname__", "")
    if getattr(fn, "__closure__", None) or "<lambda>" in qualname or "<locals>" in qualname:
        raise TypeError(f"fn: {qualname or fn!r} is a closure or a locally defined function, compiled anew on "
                        "every call; define it at module level and pass its configuration through static={...}")


# XLA's CPU backend hands elementwise-and-reduce fusions to its YNNPACK library by default. For some of the
# simulators' step programs (small elementwise kernels per step, products of tiny matrices) XLA's own loop fusions
# are measurably faster (the DCSGD paths: 54 against 75 CPU-ns per path-step, interleaved in one process; the
# linear-net GD sweep: 3-4x), for others slower, so a program opts in. Other backends ignore xla_cpu_* options.
_LOOP_FUSIONS = {"xla_cpu_experimental_ynn_fusion_type": ""}


def cpu_loop_fusions(platform: str) -> dict:
    """Compiler options that keep a program on XLA's own loop fusions on ``platform`` ``"cpu"`` (``{}`` elsewhere,
    or where this jaxlib does not know the option: the default fusions, the same results)."""
    if not isinstance(platform, str):
        raise TypeError(f"platform: expected a JAX platform name such as 'cpu' or 'gpu', got {platform!r:.60}")
    return dict(_known(tuple(_LOOP_FUSIONS.items()))) if platform == "cpu" else {}


# Cheaper code generation: XLA's elemental emitters instead of its fusion emitters, and each program's LLVM module in
# one piece. For a program compiled once and run briefly, compilation is most of its cost: the DCSGD and SDE path
# programs of sims.sde compile in about half the CPU time this way, their runs as fast (a topic's cold full budget,
# measured back to back). The tests compile every program this way (tests/conftest.py sets the same options).
_FAST_COMPILE = {"xla_cpu_use_fusion_emitters": False, "xla_cpu_parallel_codegen_split_count": 1}


def cpu_fast_compile(platform: str) -> dict:
    """Compiler options for cheaper code generation on ``platform`` ``"cpu"`` (``{}`` elsewhere, or where this jaxlib
    does not know them: the default code generation). Results agree with the default build to round-off."""
    if not isinstance(platform, str):
        raise TypeError(f"platform: expected a JAX platform name such as 'cpu' or 'gpu', got {platform!r:.60}")
    return dict(_known(tuple(_FAST_COMPILE.items()))) if platform == "cpu" else {}


@functools.lru_cache(maxsize=None)
def _known(options: tuple) -> dict:
    """``dict(options)`` if this XLA compiles a program with them, else ``{}``."""
    try:
        jax.jit(lambda x: x + 1, compiler_options=dict(options)).lower(jnp.zeros(())).compile()
    except Exception:  # noqa: BLE001  (an XLA without the options)
        return {}
    return dict(options)


@functools.lru_cache(maxsize=256)
def _batched(fn: Callable, static: tuple, devices: tuple, n_args: int, loop_fusions: bool = False,
             fast_compile: bool = False):
    """jit(vmap(fn(., *args, **static))) with the grid axis sharded and arguments replicated; cached.

    The key is the function object, its static configuration, the devices, the argument count and the
    compiler choices: repeated sweeps of one per-run function with new data of the same shapes compile nothing
    (jit's own cache keys on shapes and dtypes).
    """
    mesh = Mesh(np.array(devices), ("grid",))
    sharded, replicated = NamedSharding(mesh, PartitionSpec("grid")), NamedSharding(mesh, PartitionSpec())
    run = functools.partial(fn, **dict(static)) if static else fn
    platform = devices[0].platform
    options = {**(cpu_loop_fusions(platform) if loop_fusions else {}), **(cpu_fast_compile(platform) if fast_compile else {})}
    batched = jax.jit(jax.vmap(run, in_axes=(0,) + (None,) * n_args),
                      in_shardings=(sharded,) + (replicated,) * n_args, out_shardings=sharded,
                      compiler_options=options or None)
    return batched, sharded, replicated


def _nbytes(x: Any) -> int:
    """Bytes of a grid leaf (a typed PRNG key counts as its raw data: two uint32 words for threefry)."""
    if hasattr(x, "dtype") and jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key):
        return int(np.size(jax.random.key_data(x))) * 4
    return int(np.asarray(x).nbytes) if not hasattr(x, "nbytes") else int(x.nbytes)


def _chunk_length(n: int, chunk_size: int, n_devices: int, pad_to_chunk: bool) -> int:
    r"""Points per compiled chunk: :math:`\lceil n/\lceil n/c\rceil\rceil` rounded up to a multiple of the device count
    (:math:`c` = ``chunk_size``; ``c`` itself with ``pad_to_chunk``), so that 288 points at ``chunk_size`` 256 run as
    two chunks of 144, not as 256 and 32 padded to 256."""
    chunk = chunk_size if pad_to_chunk else min(chunk_size, n)
    if not pad_to_chunk and n > chunk:
        chunk = math.ceil(n / math.ceil(n / chunk))
    return n_devices * math.ceil(max(chunk, 1) / n_devices)


def run_grid(
    fn: Callable[..., Any],
    grid: Any,
    *args: Any,
    static: dict | None = None,
    chunk_size: int = 8192,
    pad_to_chunk: bool = False,
    devices: list | None = None,
    progress: bool | None = None,
    desc: str = "sweep",
    loop_fusions: bool = False,
    fast_compile: bool = False,
    max_bytes: Any = None,
) -> Any:
    r"""Evaluate ``fn`` at every grid point: ``out[i] = fn(grid[i], *args, **static)``, stacked along axis 0.

    ``fn`` maps one grid point (the pytree ``grid`` with the leading axis removed) and the shared
    ``args`` (pytrees of arrays, e.g. a dataset; replicated on every device, not mapped) to a
    pytree of arrays; it must be pure and traceable. ``static`` holds its hashable configuration
    (step counts, method names, shapes that select code paths). The engine owns compile stability:
    ``fn`` must be a module-level function (closures, lambdas and ``partial`` objects are refused
    with ``TypeError``), and the compiled sweep is cached on ``(fn, static)``, so repeating a sweep
    with new data of the same shapes compiles nothing. The grid axis is vmapped, sharded over a 1-D mesh
    of ``devices`` (default ``jax.devices()``) and processed in chunks of at most ``chunk_size``
    points (rounded up to a multiple of the device count), as equal as the grid allows: a grid of
    :math:`n` points runs as :math:`\lceil n/c\rceil` chunks of :math:`\lceil n/\lceil n/c\rceil\rceil`
    (:math:`c` = ``chunk_size``), the last one padded with copies of the last point and trimmed again, so
    padding never costs more than one point per chunk and device. Outputs come back as writable NumPy arrays.

    ``pad_to_chunk``: also pad a grid smaller than ``chunk_size`` to a full chunk, so sweeps of
    different sizes share one compiled shape (worth it when compilation, not the runs, dominates).

    ``loop_fusions``: on a CPU, compile with XLA's own loop fusions instead of its YNNPACK route
    (:func:`cpu_loop_fusions`); faster for some step programs, slower for others: measure before opting in.
    ``fast_compile``: on a CPU, cheaper code generation (:func:`cpu_fast_compile`), for programs whose compilation
    costs more than their runs; some run slower this way: measure before opting in.

    ``max_bytes``: the allocation limit (:func:`theory.validate.byte_limit`) for the grid padded to a chunk (a
    ``chunk_size`` far above the grid, with ``pad_to_chunk``, copies the last point that many times). What ``fn``
    allocates per run is its caller's to check, from its own size arguments.

    ``progress``: show a tqdm bar over chunks (default: whenever there are several chunks; on a
    terminal it redraws in place, in a log it prints one line per update at most every 15 s)
    and stderr is a terminal).
    """
    if not callable(fn):
        raise TypeError(f"fn: expected a callable, got {type(fn).__name__}")
    _check_stable(fn)
    frozen = _frozen({} if static is None else static)
    chunk_size = V.integer("chunk_size", chunk_size, low=1)
    for flag, value, allowed in (("pad_to_chunk", pad_to_chunk, (bool,)), ("progress", progress, (bool, type(None))),
                                 ("desc", desc, (str,)), ("loop_fusions", loop_fusions, (bool,)),
                                 ("fast_compile", fast_compile, (bool,))):
        if not isinstance(value, allowed):
            raise TypeError(f"{flag}: expected {' or '.join(t.__name__ for t in allowed)}, got "
                            f"{type(value).__name__} {value!r:.60}")
    n = grid_size(grid)
    if isinstance(devices, (str, bytes)):
        raise TypeError(f"devices: expected a list of jax devices, got {devices!r:.60}")
    devices = tuple(jax.devices()) if devices is None else tuple(devices)
    if not devices:
        raise ValueError("devices: expected at least one device, got an empty list")
    if not all(isinstance(d, jax.Device) for d in devices):
        raise TypeError(f"devices: expected jax devices (jax.devices()), got {devices!r:.80}")
    n_dev = len(devices)
    chunk = _chunk_length(n, int(chunk_size), n_dev, pad_to_chunk)
    per_point = sum(_nbytes(x) for x in jax.tree_util.tree_leaves(grid)) / max(n, 1)
    V.check_bytes({"chunk_size": chunk_size, "grid": f"{n} points"}, 2 * per_point * min(chunk, max(n, chunk)),
                  what="one chunk of the grid (padded), host and device", max_bytes=max_bytes)
    n_chunks = math.ceil(n / chunk)
    batched, sharded, replicated = _batched(fn, frozen, devices, len(args), loop_fusions, fast_compile)
    shared = jax.device_put(args, replicated)

    if progress is None:
        progress = n_chunks > 1
    starts = range(0, n, chunk)
    if progress:
        from tqdm.auto import tqdm

        tty = sys.stderr.isatty()
        starts = tqdm(starts, total=n_chunks, desc=desc, unit="chunk", file=None if tty else _Lines(sys.stderr),
                      mininterval=0.1 if tty else 15.0)

    # Dispatch is asynchronous: chunk k+1 is launched before chunk k is copied back, so the host's
    # slicing, padding and copying overlap the device's work; at most two chunks are alive at once.
    pieces, pending = [], None
    try:
        for start in starts:
            stop = min(start + chunk, n)
            piece = jax.tree_util.tree_map(lambda x: _chunk(x, start, stop, chunk), grid)
            out = batched(jax.device_put(piece, sharded), *shared)
            if pending is not None:
                pieces.append(jax.tree_util.tree_map(lambda y: _host(y, pending[1]), pending[0]))
            pending = (out, stop - start)
        pieces.append(jax.tree_util.tree_map(lambda y: _host(y, pending[1]), pending[0]))
    except jax.errors.JaxRuntimeError as exc:
        if "RESOURCE_EXHAUSTED" not in str(exc):
            raise
        name, where = getattr(fn, '__qualname__', fn), f"{n_dev} x {devices[0].device_kind}"
        first = str(exc).splitlines()[0][:160]
        if chunk <= n_dev:  # one run per device already: no chunk_size helps, the run itself is too big
            raise MemoryError(
                f"one run of {name} does not fit in the memory of {where} ({first}); a smaller chunk_size cannot "
                f"help: the run's own sizes (its caller's size arguments, static={dict(frozen)!r:.120}) are too "
                "large") from exc
        raise MemoryError(
            f"chunk_size: one chunk of {chunk} runs of {name} does not fit in the memory of "
            f"{where} ({first}); memory grows linearly with "
            "the chunk, so pass a smaller chunk_size (and draw per-step random numbers inside the scan, in "
            "blocks, rather than for a whole run at once)") from exc
    if len(pieces) == 1:
        return pieces[0]
    return jax.tree_util.tree_map(lambda *ys: np.concatenate(ys, axis=0), *pieces)
