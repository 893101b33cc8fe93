r"""``python -m sims.bench``: throughput of each JAX simulator against a NumPy reference, same process.

Every module ``sims/reference/<topic>.py`` defines ``bench_cases(scale) -> list[BenchCase]``. Each case
runs the *same* computation twice: through the JIT-compiled JAX path and through a vectorized
NumPy reference. Work units (e.g. GD updates x data points) are counted by the case; the table
reports units/s for both sides, their ratio, the compile seconds of the first JAX call (XLA's own
compile events, not a wall-clock difference) and the *fraction of this machine's limit*.

The limit is measured once per process (:class:`Limits`): the throughput of jitted streams of
elementwise float64 arithmetic (fused multiply-adds, transcendentals, Gaussian draws, all
compute-bound because each element loaded is reused many times) and the float64 matmul FLOP rate.
A case that states its arithmetic per work unit (``cost={"flop": 8, "exp": 1}``) gets
:math:`\text{fraction} = \text{units/s}\times\sum_k \text{cost}_k/\text{limit}_k`: the share of
the machine's peak that a stream of the same arithmetic would reach, so 1 is the roofline and
0.01 means 99 % of the time goes to something other than arithmetic (control flow, memory
traffic, dispatch). Cases without ``cost`` print ``-``.

A case that can be rebuilt at any grid size (``at_size=``) feeds the *scaling table*: throughput
against the number of runs from :math:`10^2` to :math:`10^6`. It should grow linearly while the
device is under-used and then flatten; memory stays bounded by the sweep's chunk size (the
table prints it), never by the grid.

``--scale large`` runs GPU-sized problems; on a CPU the ``--max-seconds`` guard (default 60 s
there) stops a side that would take too long and reports a bound instead (status ``stopped``,
not an error), so the run always completes. The guard acts between Python steps: a NumPy loop
stops within a step, a chunked sweep within a chunk; one long XLA call finishes first (and
computations a stopped case left in flight are waited for before the next case is timed).
``steplab bench --profile figures|check|test ARGS`` runs that command under the time profile of
:mod:`figures._profile` and prints where the wall time went (XLA compilation, tracing, running, sympy,
NumPy, plotting) per topic; it lives there so that this module imports nothing above ``sims``.

Absolute numbers depend on the machine: quote ratios from a CPU, absolute throughput from a GPU.
"""
from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import pkgutil
import platform
import signal
import sys
import threading
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

import jax
import jax.numpy as jnp
import numpy as np

import sims
from theory import validate as V

__all__ = ["BenchCase", "Limits", "CompileClock", "short_path", "time_best", "run_cases", "discover", "main"]

SCALES = ("small", "large")
COST_KINDS = ("flop", "exp", "normal", "uniform", "matmul_flop")
SCALING_SIZES = (100, 1_000, 10_000, 100_000, 1_000_000)
SCHEMA = 3  # 3: the "cores" the run was pinned to


@dataclass(frozen=True)
class BenchCase:
    """``run_jax()`` and ``run_numpy()`` do the same ``work`` units of ``unit`` and return arrays.

    ``check(a, b)`` (optional) asserts the two outputs agree, so the comparison is like for like.
    ``cost`` (optional): arithmetic per work unit by kind (keys of :data:`COST_KINDS`: ``flop``
    elementwise float64 operations, ``exp`` transcendentals (exp, log, tanh, sqrt, division by a
    variable), ``normal`` Gaussian and ``uniform`` uniform draws (``jax.random``), ``matmul_flop`` operations inside matrix products); it
    sets the fraction of the machine's limit. ``at_size(n)`` (optional) rebuilds the case with
    ``n`` independent runs (for the scaling table; its NumPy side is never run).
    """

    name: str
    unit: str
    work: float
    run_jax: Callable[[], Any]
    run_numpy: Callable[[], Any]
    check: Callable[[Any, Any], None] | None = None
    cost: dict[str, float] | None = None
    at_size: Callable[[int], "BenchCase"] | None = None
    runs: int | None = None

    def __post_init__(self) -> None:
        for kind in self.cost or {}:
            if kind not in COST_KINDS:
                raise ValueError(f"cost: unknown kind {kind!r} in case {self.name!r}; expected one of {COST_KINDS}")


def _block(x: Any) -> Any:
    return jax.block_until_ready(x)


class _Timeout(BaseException):
    """Raised by the alarm of :func:`_deadline` (a BaseException, so library ``except Exception`` cannot eat it)."""


@contextlib.contextmanager
def _deadline(seconds: float | None) -> Iterator[None]:
    """Interrupt the block with :class:`_Timeout` after ``seconds`` of wall time (main thread, POSIX only).

    The alarm fires between Python bytecodes, so a NumPy reference (a Python loop over steps) or a
    chunked sweep stops within one step or chunk; a single long XLA call finishes first.
    """
    if not seconds or not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield
        return

    def alarm(signum, frame):
        raise _Timeout()

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, float(seconds))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0.0)
        signal.signal(signal.SIGALRM, previous)


# A side is timed for at least this long (and at least ``repeats`` calls, at most _MAX_CALLS): a millisecond-long call
# on a shared machine is often delayed (another process's thread holds the core, BLAS threads stall), and the best
# of a few calls would then compare a lucky side with an unlucky one.
_MIN_SECONDS, _MAX_CALLS = 0.3, 200


def _time_both(fn: Callable[[], Any], repeats: int, max_seconds: float | None = None) -> tuple[float, float, Any]:
    """Best wall time and best process CPU time (all threads) over at least ``repeats`` calls, and the last output.

    Calls continue until ``_MIN_SECONDS`` have been spent (at most ``_MAX_CALLS`` calls), so short calls are
    sampled often enough for their best to be the undisturbed time. On a machine shared with other work the wall
    time of a long call includes the time it waited for a core; CPU time does not (it measures the work, not the
    waiting), so both are kept. With ``max_seconds``, no new call starts once that much wall time has been spent
    (one always runs).
    """
    wall, cpu, out, spent, calls = float("inf"), float("inf"), None, 0.0, 0
    while calls < repeats or (spent < _MIN_SECONDS and calls < _MAX_CALLS):
        start, start_cpu = time.perf_counter(), time.process_time()
        out = _block(fn())
        elapsed = time.perf_counter() - start
        wall, cpu, spent = min(wall, elapsed), min(cpu, time.process_time() - start_cpu), spent + elapsed
        calls += 1
        if max_seconds is not None and spent >= max_seconds:
            break
    return wall, cpu, out


def _timing_args(repeats: Any, max_seconds: Any) -> tuple[int, float | None]:
    """``repeats`` a positive integer, ``max_seconds`` None or a positive finite number (errors name them)."""
    repeats = V.integer("repeats", repeats, low=1)
    if max_seconds is not None:
        max_seconds = V.real("max_seconds", max_seconds, low=0.0, low_open=True)
    return repeats, max_seconds


def time_best(fn: Callable[[], Any], repeats: int, max_seconds: float | None = None) -> tuple[float, Any]:
    """Best wall time of at least ``repeats`` calls (results blocked until ready; see :func:`_time_both`) and the last
    output.

    With ``max_seconds``, no new call starts once that much time has been spent (at least one runs).
    """
    if not callable(fn):
        raise TypeError(f"fn: expected a callable taking no arguments, got {type(fn).__name__}")
    repeats, max_seconds = _timing_args(repeats, max_seconds)
    wall, _, out = _time_both(fn, repeats, max_seconds)
    return wall, out


_ROOT = Path(sims.__file__).resolve().parent.parent
_ROOT_STR = str(_ROOT)


def short_path(filename: str) -> str:
    """A file name relative to the checkout or to site-packages (for reports of where time went)."""
    if not isinstance(filename, str):
        raise TypeError(f"filename: expected a str, got {type(filename).__name__} {filename!r}")
    marker = "site-packages/"
    if marker in filename:
        return filename.split(marker, 1)[1]
    with contextlib.suppress(ValueError):
        return str(Path(filename).relative_to(_ROOT))
    return filename


class CompileClock:
    """Seconds JAX spent tracing, lowering and compiling (its monitoring events) while active."""

    EVENTS = {"/jax/core/compile/backend_compile_duration": "compile_s",
              "/jax/core/compile/jaxpr_trace_duration": "trace_s",
              "/jax/core/compile/jaxpr_to_mlir_module_duration": "lower_s",
              "/jax/compilation_cache/cache_retrieval_time_sec": "cache_read_s"}
    COUNTS = {"/jax/compilation_cache/cache_hits": "cache_hits",
              "/jax/compilation_cache/cache_misses": "cache_misses"}

    def __init__(self) -> None:
        self.totals = dict.fromkeys([*self.EVENTS.values(), *self.COUNTS.values(), "compiles"], 0.0)
        self.by_program: dict[str, list[float]] = {}  # program name -> [XLA compiles, seconds]
        self.by_caller: dict[str, list[float]] = {}  # innermost checkout file:line -> [XLA compiles, seconds]

    def _duration(self, event: str, duration: float, **kwargs: Any) -> None:
        name = self.EVENTS.get(event)
        if name is not None:
            self.totals[name] += duration
            if name == "compile_s":
                self.totals["compiles"] += 1
                entry = self.by_program.setdefault(str(kwargs.get("fun_name", "?")), [0, 0.0])
                entry[0] += 1
                entry[1] += duration
                # listeners run in the compiling thread: the innermost frame of the checkout is the caller
                frame, caller = sys._getframe(1), "?"
                while frame is not None:
                    name = frame.f_code.co_filename
                    if (name.startswith(_ROOT_STR) and "site-packages" not in name
                            and not name.endswith(("sims/bench.py", "sims/sweep.py"))):
                        caller = f"{short_path(name)}:{frame.f_lineno}"
                        break
                    frame = frame.f_back
                entry = self.by_caller.setdefault(caller, [0, 0.0])
                entry[0] += 1
                entry[1] += duration

    def _event(self, event: str, **kwargs: Any) -> None:
        name = self.COUNTS.get(event)
        if name is not None:
            self.totals[name] += 1

    def __enter__(self) -> "CompileClock":
        jax.monitoring.register_event_duration_secs_listener(self._duration)
        jax.monitoring.register_event_listener(self._event)
        return self

    def __exit__(self, *exc: Any) -> None:
        # code under measurement may have cleared every listener (jax.monitoring.clear_event_listeners)
        from jax._src import monitoring

        if self._duration in monitoring.get_event_duration_listeners():
            jax.monitoring.unregister_event_duration_listener(self._duration)
        if self._event in monitoring.get_event_listeners():
            jax.monitoring.unregister_event_listener(self._event)


# --- the machine's limit -------------------------------------------------------------------------
# Each stream is one fused elementwise kernel that reuses every loaded element many times (bound by
# arithmetic, not memory) and runs several independent chains per element (bound by throughput, not
# by the latency of one dependent chain); the operands are arguments, so XLA cannot fold them away.
_CHAINS, _DEPTH = 8, 8


def _fma_stream(x, a, b):
    ys = [x + 1e-3 * k for k in range(_CHAINS)]
    for _ in range(_DEPTH):
        ys = [y * a + b for y in ys]
    return sum(ys)


def _exp_stream(x, a):
    return sum(jnp.exp(x * (a + 1e-3 * k)) for k in range(2 * _CHAINS))


def _normal_stream(key, n):
    return jax.random.normal(key, (n,))


def _uniform_stream(key, n):
    return jax.random.uniform(key, (n,))


def _copy_stream(x, a):
    return x * a


_JIT_FMA, _JIT_EXP, _JIT_COPY = jax.jit(_fma_stream), jax.jit(_exp_stream), jax.jit(_copy_stream)
_JIT_NORMAL, _JIT_UNIFORM = jax.jit(_normal_stream, static_argnums=1), jax.jit(_uniform_stream, static_argnums=1)
_JIT_MATMUL = jax.jit(jnp.matmul)


@dataclass
class Limits:
    """This machine's float64 limits, measured once per process (best of a few timed runs).

    ``rates`` maps each cost kind to operations per second: ``flop`` (a fused multiply-add stream,
    counted as 2 flops), ``exp`` (an exp stream), ``normal`` and ``uniform`` (``jax.random`` draws),
    ``matmul_flop`` (a square float64 matmul, :math:`2n^3` flops, the faster of XLA and NumPy);
    ``memory_bytes_per_s`` is the bandwidth of a scale-and-copy over an array far larger than the caches.
    """

    rates: dict[str, float]
    memory_bytes_per_s: float
    device_kind: str
    seconds: float = 0.0

    @classmethod
    def measure(cls, repeats: int = 3) -> "Limits":
        """Measure the limits (about a second on a CPU); cached for the process after the first call."""
        global _LIMITS
        if _LIMITS is not None:
            return _LIMITS
        start = time.perf_counter()
        n = 1 << 18  # 2 MiB of float64: fits in cache, and the streams never touch memory twice
        x, a, b = jnp.linspace(0.1, 0.9, n), jnp.float64(0.999), jnp.float64(1e-4)
        key = jax.random.key(0)
        big = jnp.ones(1 << 24)  # 128 MiB, far beyond any cache
        side = 768

        def best(fn: Callable[[], Any]) -> float:
            _block(fn())
            return time_best(fn, repeats)[0]

        m = jnp.ones((side, side)) / side
        m_np = np.asarray(m)
        rates = {"flop": 2 * _CHAINS * _DEPTH * n / best(lambda: _JIT_FMA(x, a, b)),
                 "exp": 2 * _CHAINS * n / best(lambda: _JIT_EXP(x, jnp.float64(-0.5))),
                 "normal": (4 * n) / best(lambda: _JIT_NORMAL(key, 4 * n)),
                 "uniform": (4 * n) / best(lambda: _JIT_UNIFORM(key, 4 * n)),
                 # the faster of XLA's and NumPy's BLAS: a case whose JAX side beat the slower one would read > 1
                 "matmul_flop": 2 * side ** 3 / min(best(lambda: _JIT_MATMUL(m, m)),
                                                     best(lambda: np.matmul(m_np, m_np)))}
        memory = 2 * 8 * big.size / best(lambda: _JIT_COPY(big, jnp.float64(1.5)))
        _LIMITS = cls(rates=rates, memory_bytes_per_s=memory, device_kind=jax.devices()[0].device_kind,
                      seconds=time.perf_counter() - start)
        return _LIMITS

    def fraction(self, units_per_s: float, cost: dict[str, float] | None) -> float | None:
        r""":math:`\text{units/s}\times\sum_k\text{cost}_k/\text{rate}_k` (None without a cost)."""
        if not cost:
            return None
        return units_per_s * sum(c / self.rates[k] for k, c in cost.items())

    def as_dict(self) -> dict:
        return {"rates_per_s": self.rates, "memory_bytes_per_s": self.memory_bytes_per_s,
                "device_kind": self.device_kind, "measure_s": self.seconds}


_LIMITS: Limits | None = None


# --- running cases -------------------------------------------------------------------------------

def discover(scale: str) -> list[BenchCase]:
    """Every topic's bench cases at ``scale`` (``small``: seconds on a laptop; ``large``: GPU-sized).

    A topic whose ``bench_cases`` raises is reported on stderr and skipped, so one broken module
    does not hide the others (the run then exits non-zero).
    """
    if scale not in SCALES:
        raise ValueError(f"scale: expected one of {SCALES}, got {scale!r}")
    import sims.reference

    cases = []
    for info in pkgutil.iter_modules(sims.reference.__path__):
        if info.name.startswith("_"):
            continue
        try:
            module = importlib.import_module(f"sims.reference.{info.name}")
            cases.extend(module.bench_cases(scale))
        except Exception:  # noqa: BLE001 - report and go on with the other topics
            print(f"sims/reference/{info.name}.py: bench_cases({scale!r}) raised:\n{traceback.format_exc()}",
                  file=sys.stderr)
            cases.append(BenchCase(f"{info.name}: bench_cases raised", "-", 0.0, _raise_import, _raise_import))
    return cases


def _raise_import() -> None:
    raise RuntimeError("this topic's bench_cases raised (see stderr)")


def _drain() -> None:
    """Wait for every computation still in flight (an XLA call cannot be cancelled: work dispatched by a
    stopped case would otherwise run on beside, and be timed into, the next case)."""
    with contextlib.suppress(Exception):
        jax.block_until_ready(jax.live_arrays())


def _to_host(x: Any) -> Any:
    return jax.tree_util.tree_map(np.asarray, x)


def _run_case(case: BenchCase, repeats: int = 3, max_seconds: float | None = None,
              limits: Limits | None = None) -> dict:
    """Time one case (JAX first call, best of ``repeats`` on each side), check it, return its row.

    ``status`` is ``ok``, ``stopped`` (the ``max_seconds`` guard ended a side: a NumPy side that did
    not finish leaves ``ratio_at_least`` = its time so far / the JAX time, a lower bound; a JAX side
    that did not finish leaves ``jax_per_s_at_most``, an upper bound) or ``error`` (an exception or
    a failed check, in ``error``; never raised). With one repeat, a first call whose compilation
    took under 5 % of it is the timed call (large problems are not run twice to time them once).
    """
    row: dict[str, Any] = {"name": case.name, "unit": case.unit, "work": case.work, "cost": case.cost,
                           "status": "ok", "jax_s": None, "numpy_s": None, "jax_per_s": None, "numpy_per_s": None,
                           "ratio": None, "jax_cpu_s": None, "numpy_cpu_s": None, "cpu_ratio": None,
                           "ratio_at_least": None, "jax_per_s_at_most": None, "fraction_of_limit": None,
                           "compile_s": None, "trace_lower_s": None, "first_call_s": None, "check": "not run",
                           "error": None}
    start = time.perf_counter()
    try:
        with CompileClock() as clock, _deadline(max_seconds):
            start_cpu = time.process_time()
            _block(case.run_jax())  # compile + first run
            row["first_call_s"], first_cpu = time.perf_counter() - start, time.process_time() - start_cpu
        row["compile_s"] = clock.totals["compile_s"]
        row["trace_lower_s"] = clock.totals["trace_s"] + clock.totals["lower_s"]
        if repeats == 1 and row["compile_s"] + row["trace_lower_s"] < 0.05 * row["first_call_s"]:
            # the outputs are recomputed only if the check needs them (marked by passing the function on)
            t_jax, row["jax_cpu_s"], out_jax = row["first_call_s"], first_cpu, case.run_jax
        else:
            start = time.perf_counter()
            with _deadline(max_seconds):
                t_jax, row["jax_cpu_s"], out_jax = _time_both(case.run_jax, repeats, max_seconds)
        row["jax_s"], row["jax_per_s"] = t_jax, case.work / t_jax
        if limits is not None:
            row["fraction_of_limit"] = limits.fraction(row["jax_per_s"], case.cost)
    except _Timeout:
        row["status"], row["jax_per_s_at_most"] = "stopped", case.work / (time.perf_counter() - start)
        row["check"] = f"skipped (JAX side stopped by --max-seconds {max_seconds})"
        _drain()
        return row
    except Exception as exc:  # noqa: BLE001 - one failing case must not hide the others
        row["status"], row["error"] = "error", f"JAX side raised {type(exc).__name__}: {exc}"
        traceback.print_exc()
        return row
    start = time.perf_counter()
    try:
        with _deadline(max_seconds):
            # the same number of timed calls as the JAX side (whose first, compiling call is not timed)
            t_np, row["numpy_cpu_s"], out_np = _time_both(case.run_numpy, repeats, max_seconds)
    except _Timeout:
        row["status"], row["ratio_at_least"] = "stopped", (time.perf_counter() - start) / t_jax
        row["check"] = f"skipped (NumPy side stopped by --max-seconds {max_seconds})"
        return row
    except Exception as exc:  # noqa: BLE001
        row["status"], row["error"] = "error", f"NumPy side raised {type(exc).__name__}: {exc}"
        traceback.print_exc()
        return row
    row["numpy_s"], row["numpy_per_s"], row["ratio"] = t_np, case.work / t_np, t_np / t_jax
    row["cpu_ratio"] = row["numpy_cpu_s"] / row["jax_cpu_s"] if row["jax_cpu_s"] > 0 else None
    if case.check is None:
        row["check"] = "none"
        return row
    try:
        if callable(out_jax):  # timed on the first call: run once more for the outputs
            with _deadline(max_seconds):
                out_jax = _block(out_jax())
        case.check(_to_host(out_jax), out_np)
        row["check"] = "passed"
    except _Timeout:
        row["check"] = "skipped (the JAX rerun for the check was stopped by --max-seconds)"
    except AssertionError as exc:
        row["status"], row["check"] = "error", "failed"
        row["error"] = f"JAX and NumPy outputs disagree: {str(exc).strip()[:300]}"
    return row


def run_cases(cases: list[BenchCase], repeats: int = 3, max_seconds: float | None = None,
              limits: Limits | None = None, echo: bool = False) -> list[dict]:
    """:func:`_run_case` for every case, in order (``echo``: print each row as it completes)."""
    # by attributes, not isinstance: under `python -m sims.bench` this module also exists as __main__
    if not isinstance(cases, (list, tuple)) or not all(
            all(hasattr(c, a) for a in ("name", "unit", "work", "run_jax", "run_numpy")) for c in cases):
        raise TypeError(f"cases: expected a list of BenchCase, got {type(cases).__name__}"
                        + ("" if not isinstance(cases, (list, tuple)) else " with other elements"))
    repeats, max_seconds = _timing_args(repeats, max_seconds)
    if limits is not None and not (hasattr(limits, "rates") and hasattr(limits, "fraction")):
        raise TypeError(f"limits: expected None or a Limits (Limits.measure()), got {type(limits).__name__}")
    rows = []
    for case in cases:
        rows.append(_run_case(case, repeats, max_seconds, limits))
        if echo:
            print(_format_row(rows[-1]), flush=True)
    return rows


class _PeakMemory:
    """Peak memory while active, in MiB: the device's own peak counter where it has one (GPU), else the
    process's resident set sampled every 10 ms from ``/proc/self/statm`` (Linux); None elsewhere."""

    def __init__(self) -> None:
        self.peak_mb: float | None = None
        self.source = "none"

    @staticmethod
    def _rss_mb() -> float | None:
        try:
            with open("/proc/self/statm") as f:
                return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
        except (OSError, ValueError, IndexError):
            return None

    def _watch(self) -> None:
        while not self._stop.wait(0.01):
            now = self._rss_mb()
            if now is not None:
                self.peak_mb = max(self.peak_mb or 0.0, now)

    def __enter__(self) -> "_PeakMemory":
        stats = jax.devices()[0].memory_stats() if jax.devices()[0].platform != "cpu" else None
        if stats and "peak_bytes_in_use" in stats:
            self.source, self._device = "device peak bytes in use", True
            if hasattr(jax.devices()[0], "reset_memory_stats"):  # not every backend can reset its peak
                with contextlib.suppress(Exception):
                    jax.devices()[0].reset_memory_stats()
            return self
        self._device, self.source = False, "process resident set (sampled)"
        self.peak_mb = self._rss_mb()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._device:
            self.peak_mb = jax.devices()[0].memory_stats()["peak_bytes_in_use"] / 2**20
            return
        self._stop.set()
        self._thread.join()


def _scaling_table(case: BenchCase, sizes=SCALING_SIZES, repeats: int = 2,
                  max_seconds: float | None = None) -> list[dict]:
    """Throughput of ``case.at_size(n)`` for each ``n`` in ``sizes`` (JAX only; compile time apart).

    Each size is called until one call compiled nothing (or ``repeats`` calls), and the best such
    call is reported. Sizes stop at the first one that exceeds ``max_seconds``.
    """
    rows = []
    for n in sizes:
        sized = case.at_size(n)
        row: dict[str, Any] = {"case": case.name, "status": "ok", "runs": int(sized.runs or n), "unit": sized.unit,
                               "work": sized.work, "seconds": None, "runs_per_s": None, "units_per_s": None,
                               "cpu_s": None, "units_per_cpu_s": None, "compile_s": 0.0, "peak_memory_mb": None, "memory_source": None, "error": None}
        best = float("inf")
        try:
            with _deadline(max_seconds):
                for _ in range(max(1, repeats)):
                    with CompileClock() as clock, _PeakMemory() as memory:
                        start, start_cpu = time.perf_counter(), time.process_time()
                        _block(sized.run_jax())
                        elapsed, cpu = time.perf_counter() - start, time.process_time() - start_cpu
                    row["peak_memory_mb"], row["memory_source"] = memory.peak_mb, memory.source
                    row["compile_s"] += clock.totals["compile_s"] + clock.totals["trace_s"] + clock.totals["lower_s"]
                    if clock.totals["compile_s"] + clock.totals["trace_s"] == 0:
                        best, row["cpu_s"] = elapsed, cpu
                        break
            if best == float("inf"):
                raise RuntimeError(f"each of {repeats} calls compiled something; nothing left to time")
        except _Timeout:
            row["status"], row["error"] = "stopped", f"stopped by --max-seconds {max_seconds}"
        except Exception as exc:  # noqa: BLE001
            row["status"], row["error"] = "error", f"{type(exc).__name__}: {exc}"
        if row["error"] is None:
            row["seconds"], row["runs_per_s"], row["units_per_s"] = best, row["runs"] / best, sized.work / best
            row["units_per_cpu_s"] = sized.work / row["cpu_s"] if row["cpu_s"] else None
        rows.append(row)
        if row["error"] is not None:
            break
    return rows


# --- printing ------------------------------------------------------------------------------------

def _num(x: float | None, fmt: str = "11.3e") -> str:
    width = int(fmt.split(".")[0])
    return " " * (width - 1) + "-" if x is None else format(x, fmt)


_HEADER = (f"{'case':52s} {'unit':26s} {'JAX /s':>11s} {'NumPy /s':>11s} {'ratio':>8s} {'cpu ratio':>9s} "
           f"{'of limit':>9s} {'compile s':>9s}")


def _format_row(r: dict) -> str:
    if r["ratio"] is not None:
        ratio = f"{r['ratio']:7.1f}x"
    elif r["ratio_at_least"] is not None:
        ratio = f">{r['ratio_at_least']:6.1f}x"
    else:
        ratio = " " * 7 + "-"
    jax_rate = _num(r["jax_per_s"]) if r["jax_per_s_at_most"] is None else f"<{r['jax_per_s_at_most']:10.3e}"
    frac = " " * 8 + "-" if r["fraction_of_limit"] is None else f"{r['fraction_of_limit']:9.3f}"
    cpu = " " * 8 + "-" if r.get("cpu_ratio") is None else f"{r['cpu_ratio']:8.1f}x"
    line = (f"{r['name'][:52]:52s} {r['unit'][:26]:26s} {jax_rate} {_num(r['numpy_per_s'])} {ratio} "
            f"{cpu} {frac} {_num(r['compile_s'], '9.2f')}")
    if r["error"]:
        line += f"\n    ERROR: {r['error']}"
    elif r["status"] == "stopped":
        line += f"\n    stopped: {r['check']}"
    return line


def format_rows(rows: list[dict]) -> str:
    """The bench table: one line per case (errors on a second line)."""
    needed = {"name", "unit", "jax_per_s", "numpy_per_s", "ratio", "ratio_at_least", "jax_per_s_at_most",
              "fraction_of_limit", "compile_s", "status", "error", "check"}
    if not isinstance(rows, (list, tuple)) or not all(isinstance(r, dict) and needed <= set(r) for r in rows):
        raise TypeError(f"rows: expected a list of row dicts as run_cases returns (keys {sorted(needed)}), "
                        f"got {type(rows).__name__}")
    return "\n".join([_HEADER, "-" * len(_HEADER), *(_format_row(r) for r in rows)])


def _format_scaling(rows: list[dict], chunk: str = "") -> str:
    """The scaling table: runs, seconds, runs/s, units/s (per wall and per CPU second), compile s, peak memory."""
    lines = [f"scaling: {rows[0]['case']} ({rows[0]['unit']}){chunk}" if rows else "scaling: no case",
             f"{'runs':>10s} {'seconds':>9s} {'runs /s':>11s} {'units /s':>11s} {'units/cpu-s':>11s} {'compile s':>9s} "
             f"{'peak MiB':>9s}"]
    for r in rows:
        if r["error"]:
            lines.append(f"{r['runs']:10d}   {r['error']}")
        else:
            lines.append(f"{r['runs']:10d} {r['seconds']:9.3f} {r['runs_per_s']:11.3e} {r['units_per_s']:11.3e} "
                         f"{_num(r['units_per_cpu_s'])} {r['compile_s']:9.2f} {_num(r['peak_memory_mb'], '9.0f')}")
    return "\n".join(lines)


def _format_limits(limits: Limits) -> str:
    r = limits.rates
    return (f"machine limit (float64, {limits.device_kind}): FMA stream {r['flop']:.3e} flop/s, exp {r['exp']:.3e}/s, "
            f"normal draws {r['normal']:.3e}/s, uniform {r['uniform']:.3e}/s, matmul {r['matmul_flop']:.3e} flop/s, "
            f"memory {limits.memory_bytes_per_s / 1e9:.1f} GB/s (measured in {limits.seconds:.1f} s)")


# --- command line --------------------------------------------------------------------------------

def _cores_in_use() -> int:
    """The cores this process may run on (its affinity where the platform has one)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def _build_parser(prog: str = "python -m sims.bench") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", choices=SCALES, default="small",
                        help="problem sizes: small (CPU, seconds) or large (GPU-sized)")
    parser.add_argument("--repeats", type=int, default=None,
                        help="timed runs per side; the best is reported (default 3 small, 1 large)")
    parser.add_argument("--max-seconds", type=float, default=None,
                        help="stop a side after this many seconds and report a bound, not an error "
                             "(default: 60 for --scale large on a CPU, else none)")
    parser.add_argument("--only", help="substring filter on case names")
    parser.add_argument("--scaling", choices=("on", "off"), default="on",
                        help="the throughput-against-grid-size table (default on)")
    parser.add_argument("--scaling-max", type=int, default=SCALING_SIZES[-1],
                        help=f"largest grid of the scaling table (default {SCALING_SIZES[-1]})")
    parser.add_argument("--json", type=Path, default=None,
                        help="where to write the results (default: bench.json in the results folder)")
    parser.add_argument("--cores", default="1",
                        help="cores the whole process may use, both sides alike: a positive integer (default 1, "
                             "the share of one worker of make figures or make test) or 'all' (XLA's and BLAS's "
                             "default thread pools, one thread per core)")
    return parser


#: set in the re-executed process, so it does not pin itself again
_PINNED = "STEPLAB_BENCH_CORES"


def _cores_arg(value: str, parser: argparse.ArgumentParser) -> int | None:
    """``--cores``: None for 'all', else a positive integer."""
    if value == "all":
        return None
    if not value.isdigit() or int(value) < 1:
        parser.error(f"--cores: expected a positive integer or 'all', got {value!r}")
    return int(value)


def _run_on_cores(cores: int, argv: list[str]) -> None:
    """Re-execute ``python -m sims.bench argv`` on the first ``cores`` cores of this process's affinity, unless it
    has no more than that already (then return).

    XLA sizes its CPU thread pool from the affinity when it creates the CPU client, and OpenBLAS when it loads,
    both before a running process could change it: so a fresh process, its BLAS libraries told the same count.
    Pinned, both sides get the same cores and the wall and CPU ratios agree. Unpinned on two idle cores, XLA splits
    a small per-step kernel across both threads and spends more CPU time synchronising than it saves (the heavy-ball
    sweep: 2.3x wall, 1.2x CPU time; pinned to one core 2.8x both).
    """
    have = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    if len(have) <= cores or os.environ.get(_PINNED) == str(cores):
        return
    env = dict(os.environ, **{_PINNED: str(cores)},
               **{var: str(cores) for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")})
    os.sched_setaffinity(0, have[:cores])
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, [sys.executable, "-m", "sims.bench", *argv], env)


def main(argv: list[str] | None = None, *, prog: str = "python -m sims.bench") -> int:
    """Run the benchmark as ``argv`` says; ``prog`` names the command in usage and errors."""
    parser = _build_parser(prog)
    args = parser.parse_args(argv)
    cores = _cores_arg(args.cores, parser)
    if cores is not None:
        _run_on_cores(cores, sys.argv[1:] if argv is None else list(argv))
    if args.json is None:
        from sims.cache import results_dir

        args.json = results_dir() / "bench.json"
    repeats = args.repeats if args.repeats is not None else (3 if args.scale == "small" else 1)
    if repeats < 1:
        parser.error(f"--repeats: expected a positive integer, got {repeats}")
    on_cpu = jax.devices()[0].platform == "cpu"
    max_seconds = args.max_seconds if args.max_seconds is not None else (60.0 if args.scale == "large" and on_cpu
                                                                         else None)
    if max_seconds is not None and not max_seconds > 0:
        parser.error(f"--max-seconds: expected a positive number, got {max_seconds}")
    if args.scaling_max < SCALING_SIZES[0]:
        parser.error(f"--scaling-max: expected at least {SCALING_SIZES[0]}, got {args.scaling_max}")
    cases = [c for c in discover(args.scale) if not args.only or args.only in c.name]
    if not cases:
        print("no bench cases matched", file=sys.stderr)
        return 1
    devices = jax.devices()
    print(f"devices: {len(devices)} x {devices[0].device_kind} ({devices[0].platform}); scale={args.scale}; "
          f"repeats={repeats}; max seconds per side={max_seconds}; cores={_cores_in_use()}", flush=True)
    limits = Limits.measure()
    print(_format_limits(limits), flush=True)
    print(_HEADER + "\n" + "-" * len(_HEADER), flush=True)
    rows = run_cases(cases, repeats, max_seconds, limits, echo=True)
    scaling: list[dict] = []
    if args.scaling == "on":
        for case in cases:
            if case.at_size is None:
                continue
            sizes = [n for n in SCALING_SIZES if n <= args.scaling_max]
            scaling = _scaling_table(case, sizes, max_seconds=max_seconds)
            print(_format_scaling(scaling), flush=True)
            break
    args.json.parent.mkdir(parents=True, exist_ok=True)
    report = {"schema": SCHEMA, "device_kind": devices[0].device_kind, "device_count": len(devices),
              "platform": devices[0].platform, "jax_version": jax.__version__, "host": platform.node(),
              "cpu_count": os.cpu_count(), "cores": _cores_in_use(), "scale": args.scale, "repeats": repeats, "max_seconds": max_seconds,
              "limits": limits.as_dict(), "rows": rows, "scaling": scaling}
    args.json.write_text(json.dumps(report, indent=2))
    print(f"wrote {args.json}")
    errors = [r["name"] for r in rows if r["status"] == "error"] + [f"scaling {r['runs']}" for r in scaling
                                                                     if r["status"] == "error"]
    stopped = [r["name"] for r in rows if r["status"] == "stopped"]
    if stopped:
        print(f"{len(stopped)} case(s) stopped by the --max-seconds guard (bounds reported): {', '.join(stopped)}")
    if errors:
        print(f"{len(errors)} case(s) with errors: {', '.join(errors)}", file=sys.stderr)
    return int(bool(errors))


if __name__ == "__main__":
    # run the imported module's main, so the topics' BenchCase and this runner are the same class
    from sims.bench import main as _main

    sys.exit(_main())
