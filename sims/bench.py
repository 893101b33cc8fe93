r"""``python -m sims.bench``: throughput of each JAX simulator against a NumPy reference, same process.

Every module ``sims/reference/<topic>.py`` defines ``bench_cases(scale) -> list[BenchCase]``. Each case
runs the *same* computation twice: through the JIT-compiled JAX path and through a vectorized
NumPy reference. Work units (e.g. GD updates x data points) are counted by the case; the table
reports units/s for both and the ratio. JAX is warmed up first so compile time is excluded (and
printed separately); each side reports the best of ``repeats`` runs. Absolute numbers depend on
the machine: quote ratios from a CPU, absolute throughput only from a GPU.
"""
from __future__ import annotations

import argparse
import importlib
import json
import pkgutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import jax
import numpy as np

import sims

__all__ = ["BenchCase", "time_best", "run_cases", "main"]


@dataclass(frozen=True)
class BenchCase:
    """``run_jax()`` and ``run_numpy()`` do the same ``work`` units of ``unit`` and return arrays.

    ``check(a, b)`` (optional) asserts the two outputs agree, so the comparison is like for like.
    """

    name: str
    unit: str
    work: float
    run_jax: Callable[[], Any]
    run_numpy: Callable[[], Any]
    check: Callable[[Any, Any], None] | None = None


def _block(x: Any) -> Any:
    return jax.block_until_ready(x)


def time_best(fn: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    """Best wall time of ``repeats`` calls (results blocked until ready) and the last output."""
    best, out = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        out = _block(fn())
        best = min(best, time.perf_counter() - start)
    return best, out


SCALES = ("small", "large")


def discover(scale: str) -> list[BenchCase]:
    """Every topic's bench cases at ``scale`` (``small``: seconds on a laptop; ``large``: GPU-sized)."""
    if scale not in SCALES:
        raise ValueError(f"scale: expected one of {SCALES}, got {scale!r}")
    import sims.reference

    cases = []
    for info in pkgutil.iter_modules(sims.reference.__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"sims.reference.{info.name}")
        cases.extend(module.bench_cases(scale))
    return cases


def run_cases(cases: list[BenchCase], repeats: int = 3) -> list[dict]:
    rows = []
    for case in cases:
        start = time.perf_counter()
        _block(case.run_jax())  # compile + first run
        first = time.perf_counter() - start
        t_jax, out_jax = time_best(case.run_jax, repeats)
        t_np, out_np = time_best(case.run_numpy, max(1, repeats - 1))
        if case.check is not None:
            case.check(np.asarray(out_jax) if not isinstance(out_jax, tuple) else out_jax, out_np)
        rows.append({
            "name": case.name, "unit": case.unit, "work": case.work,
            "jax_s": t_jax, "numpy_s": t_np, "jax_first_call_s": first,
            "jax_per_s": case.work / t_jax, "numpy_per_s": case.work / t_np, "speedup": t_np / t_jax,
        })
    return rows


def format_rows(rows: list[dict]) -> str:
    header = f"{'case':44s} {'unit':28s} {'JAX /s':>11s} {'NumPy /s':>11s} {'ratio':>8s} {'compile+1st s':>13s}"
    lines = [header, "-" * len(header)]
    for r in rows:
        lines.append(f"{r['name']:44s} {r['unit']:28s} {r['jax_per_s']:11.3e} {r['numpy_per_s']:11.3e} "
                     f"{r['speedup']:7.1f}x {r['jax_first_call_s']:13.2f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sims.bench")
    parser.add_argument("--scale", choices=("small", "large"), default="small",
                        help="problem sizes: small (CPU, seconds) or large (GPU)")
    parser.add_argument("--repeats", type=int, default=3,
                        help="timed runs per side; the best is reported (default 3)")
    parser.add_argument("--only", help="substring filter on case names")
    parser.add_argument("--json", type=Path, default=None,
                        help="where to write the rows as JSON (default: bench.json in the results folder)")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error(f"--repeats: expected a positive integer, got {args.repeats}")
    if args.json is None:
        from sims.cache import results_dir

        args.json = results_dir() / "bench.json"
    cases = [c for c in discover(args.scale) if not args.only or args.only in c.name]
    if not cases:
        print("no bench cases matched", file=sys.stderr)
        return 1
    devices = jax.devices()
    print(f"devices: {len(devices)} x {devices[0].device_kind} ({devices[0].platform}); scale={args.scale}")
    rows = run_cases(cases, args.repeats)
    print(format_rows(rows))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"device_kind": devices[0].device_kind, "device_count": len(devices),
                                     "platform": devices[0].platform, "scale": args.scale, "rows": rows}, indent=2))
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
