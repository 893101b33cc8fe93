r"""Where the time of a run goes, by topic and category: ``steplab bench --profile figures|check|test ARGS``.

A sampling profiler of the main thread (:class:`TimeProfile`) beside JAX's own compile events
(:class:`sims.bench.CompileClock`). It lives in ``figures`` because it runs the top-level commands
(``figures``, ``check``, pytest) in this process; :mod:`sims.bench` imports nothing above ``sims``.
"""
from __future__ import annotations

import faulthandler
import json
import os
import re
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from sims.bench import CompileClock, short_path

__all__ = ["TimeProfile", "CATEGORIES", "main"]

_ROOT = Path(__file__).resolve().parent.parent
_ROOT_STR = str(_ROOT)
_LAYERS = ("theory", "sims", "paper_checks", "figures", "tests", "examples")
CATEGORIES = ("xla compile", "trace+lower", "jax run", "sympy", "numpy/scipy", "plotting", "python")


_FRAME_LINE = re.compile(r'^  File "(.*)", line \d+ in (.*)$')


def _main_stack(main_id: int, fd: int) -> list[tuple[str, str]]:
    """(file, function) of every frame of thread ``main_id``, innermost first (empty when it has no Python frame).

    The stacks are read by :func:`faulthandler.dump_traceback` into the scratch file ``fd``: one C call that holds the
    interpreter lock throughout, so the sampled thread cannot push or pop a frame meanwhile. Walking ``f_back`` from
    :func:`sys._current_frames` in Python can be interrupted by a thread switch, and on CPython 3.11 a frame's ``f_back``
    read while its thread pops frames can point into reused stack memory (seen here: an ``f_back`` that was a ``str``,
    and segmentation faults of profiled runs). The dump keeps at most 100 frames per thread, innermost first.
    """
    os.lseek(fd, 0, os.SEEK_SET)
    faulthandler.dump_traceback(fd, all_threads=True)
    size = os.lseek(fd, 0, os.SEEK_CUR)
    os.lseek(fd, 0, os.SEEK_SET)
    text = os.read(fd, size).decode("utf-8", "replace")
    files, inside = [], False
    for line in text.splitlines():
        if line.startswith(("Thread 0x", "Current thread 0x")):
            inside = int(line.split("0x", 1)[1].split()[0], 16) == main_id
        elif inside:
            m = _FRAME_LINE.match(line)
            if m:
                files.append((m.group(1), m.group(2)))
    return files


class TimeProfile:
    """Where wall time goes, by topic and category: a sampling profiler of the main thread.

    Every ``interval`` seconds a background thread reads the main thread's stack and charges the
    time since its previous sample to one category -- ``xla compile`` (inside XLA's compiler or
    the persistent cache), ``trace+lower`` (JAX tracing a function or lowering it to MLIR),
    ``sympy``, ``jax run`` (executing or dispatching compiled programs, moving arrays),
    ``numpy/scipy``, ``plotting`` (matplotlib) or ``python`` (everything else) -- and to the topic
    of the innermost frame in a topic's file (``theory/``, ``sims/``, ``paper_checks/``,
    ``figures/``, ``tests/``; shared files belong to no topic). JAX's own compile events are
    counted beside it as an exact cross-check of the sampled compile time.
    """

    def __init__(self, interval: float = 0.005) -> None:
        self.interval = interval
        self.table: dict[str, dict[str, float]] = {}
        self.cpu_table: dict[str, dict[str, float]] = {}  # the same, in process CPU seconds (all threads)
        self.wall = 0.0
        self._stop = threading.Event()
        self._clock = CompileClock()
        self._owners: dict[str, str | None] = {}
        self.hot: dict[str, float] = {}  # "category: innermost file:function" -> seconds

    def _owner(self, filename: str) -> str | None:
        cached = self._owners.get(filename, "?")
        if cached != "?":
            return cached
        from sims.cache import part_owner, topic_names

        owner = None
        try:
            rel = Path(filename).resolve().relative_to(_ROOT)
        except ValueError:
            rel = None
        if rel is not None and rel.parts and rel.parts[0] in _LAYERS:
            topics = topic_names()
            # the cache's rule (a topic never owns another it is a prefix of), tests' prefixes stripped first
            for p in [*rel.parts[1:-1], Path(rel.parts[-1]).stem]:
                owner = part_owner(p.removeprefix("test_").removeprefix("contract_"), topics)
                if owner is not None:
                    break
        self._owners[filename] = owner
        return owner

    def _topic(self, files: list[tuple[str, str]]) -> str | None:
        """The topic of the innermost frame in a topic's file (``files`` innermost first), None if no frame is in one.

        Shared files are skipped, not taken: every sweep runs inside ``sims/sweep.py`` and every claim inside the
        registry, so the innermost project frame alone would file nearly all the time under no topic."""
        return next((owner for f, _ in files if f.startswith(_ROOT_STR) and (owner := self._owner(f)) is not None),
                    None)

    @staticmethod
    def _category(files: list[tuple[str, str]]) -> str:
        """``files``: (filename, function) from the innermost frame outwards."""
        paths = [f for f, _ in files]
        if any("jax/_src/compiler.py" in f or "jax/_src/compilation_cache.py" in f for f in paths):
            return "xla compile"
        if any(("jax/_src/interpreters/partial_eval.py" in f or "jax/_src/interpreters/mlir.py" in f) for f in paths):
            return "trace+lower"
        if any("/sympy/" in f or "/mpmath/" in f for f in paths):
            return "sympy"
        inner = paths[0]
        # the sweep engine's host copy is where the main thread waits for the device to finish
        if "/jax/" in inner or "/jaxlib/" in inner or inner.endswith("sims/sweep.py"):
            return "jax run"
        if "/matplotlib/" in inner or "/PIL/" in inner:
            return "plotting"
        if "/numpy/" in inner or "/scipy/" in inner:
            return "numpy/scipy"
        if any("/matplotlib/" in f for f in paths[:8]):
            return "plotting"
        return "python"

    def _sample(self, main_id: int) -> None:
        with tempfile.TemporaryFile() as scratch:
            self._sample_into(main_id, scratch.fileno())

    def _sample_into(self, main_id: int, fd: int) -> None:
        last, last_cpu = time.perf_counter(), time.process_time()
        while not self._stop.wait(self.interval):
            now, now_cpu = time.perf_counter(), time.process_time()
            dt, last, dcpu, last_cpu = now - last, now, now_cpu - last_cpu, now_cpu
            files = _main_stack(main_id, fd)
            if not files:
                continue
            topic = self._topic(files)
            cat = self._category(files)
            per = self.table.setdefault(topic or "shared", dict.fromkeys(CATEGORIES, 0.0))
            per[cat] += dt
            per_cpu = self.cpu_table.setdefault(topic or "shared", dict.fromkeys(CATEGORIES, 0.0))
            per_cpu[cat] += dcpu
            inner = f"{cat}: {short_path(files[0][0])}:{files[0][1]}"
            self.hot[inner] = self.hot.get(inner, 0.0) + dt

    def __enter__(self) -> "TimeProfile":
        self._start = time.perf_counter()
        self._clock.__enter__()
        self._thread = threading.Thread(target=self._sample, args=(threading.main_thread().ident,), daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join()
        self._clock.__exit__(*exc)
        self.wall = time.perf_counter() - self._start

    def as_dict(self) -> dict:
        return {"wall_s": self.wall, "by_topic": self.table, "cpu_by_topic": self.cpu_table,
                "jax_events": self._clock.totals,
                "innermost": dict(sorted(self.hot.items(), key=lambda kv: -kv[1])[:100]),
                "compiles_by_program": dict(sorted(self._clock.by_program.items(), key=lambda kv: -kv[1][1])),
                "compiles_by_caller": dict(sorted(self._clock.by_caller.items(), key=lambda kv: -kv[1][1]))}

    def format(self, top_programs: int = 12) -> str:
        """Two tables (wall seconds, then CPU seconds) by topic and category, then JAX's compile events."""
        lines = [self._format_table(self.table, "wall s"), "", self._format_table(self.cpu_table, "CPU s")]
        return "\n".join(lines + self._format_events(top_programs))

    def _format_table(self, table: dict[str, dict[str, float]], label: str) -> str:
        head = f"{'topic':16s} {label:>8s} " + " ".join(f"{c:>12s}" for c in CATEGORIES)
        lines = [head, "-" * len(head)]
        totals = dict.fromkeys(CATEGORIES, 0.0)
        for topic, per in sorted(table.items(), key=lambda kv: -sum(kv[1].values())):
            lines.append(f"{topic:16s} {sum(per.values()):8.1f} " + " ".join(f"{per[c]:12.1f}" for c in CATEGORIES))
            for c in CATEGORIES:
                totals[c] += per[c]
        lines.append(f"{'all':16s} {sum(totals.values()):8.1f} " + " ".join(f"{totals[c]:12.1f}" for c in CATEGORIES))
        return "\n".join(lines)

    def _format_events(self, top_programs: int) -> list[str]:
        ev = self._clock.totals
        lines = [f"wall {self.wall:.1f} s; JAX events: {int(ev['compiles'])} XLA compiles, {ev['compile_s']:.1f} s "
                 f"compiling, {ev['trace_s']:.1f} s tracing, {ev['lower_s']:.1f} s lowering; persistent cache "
                 f"{int(ev['cache_hits'])} hits / {int(ev['cache_misses'])} misses ({ev['cache_read_s']:.1f} s reading)"]
        lines.append("innermost frames (wall s): " + "; ".join(
            f"{name} {sec:.1f}" for name, sec in sorted(self.hot.items(), key=lambda kv: -kv[1])[:top_programs]))
        for label, table in (("program", self._clock.by_program), ("caller", self._clock.by_caller)):
            top = sorted(table.items(), key=lambda kv: -kv[1][1])[:top_programs]
            if top:
                lines.append(f"most compile time by {label} (compiles, seconds): " +
                             "; ".join(f"{name} {int(n)}x {sec:.1f}" for name, (n, sec) in top))
        return lines


def profile(argv: list[str], out: Path | None) -> int:
    """Run ``figures ARGS``, ``check ARGS`` or ``test ARGS`` (pytest, in this process) under :class:`TimeProfile`."""
    if not argv or argv[0] not in ("figures", "check", "test"):
        print("--profile: expected 'figures ARGS', 'check ARGS' or 'test ARGS' (pytest arguments)", file=sys.stderr)
        return 2
    what, rest = argv[0], argv[1:]
    with TimeProfile() as prof:
        try:
            if what == "figures":
                from figures.__main__ import main as run
                code = run(rest)
            elif what == "check":
                from paper_checks.__main__ import main as run
                code = run(rest)
            else:
                import pytest
                code = int(pytest.main(["-p", "no:xdist", "-p", "no:cacheprovider", *rest]))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    print(f"\ntime profile of `{' '.join(argv)}` (sampled every {prof.interval * 1e3:.0f} ms; seconds):")
    print(prof.format())
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps({"command": argv, **prof.as_dict()}, indent=2))
        print(f"wrote {out}")
    return int(code or 0)


def main(argv: list[str], out: Path | None = None) -> int:
    """``steplab bench [--json PATH] --profile CMD ARGS``: :func:`profile`, its JSON written to ``out`` (default:
    profile.json in the results folder)."""
    if out is None:
        from sims.cache import results_dir

        out = results_dir() / "profile.json"
    return profile(argv, out)
