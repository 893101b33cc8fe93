r"""NumPy reference of :func:`sims.low_precision.gd` and its benchmark cases.

* :func:`gd_numpy` -- gradient descent on :math:`a(w - w^*)^2/2`, coordinate by coordinate, with the iterate stored in
  bf16 (round-to-nearest or stochastic rounding) or float32, every step size and coordinate of the grid as one
  (m, n) float32 array and a Python loop over steps. bf16 is emulated as :mod:`sims.low_precision` does it, on the
  uint32 words of float32 arrays (``ndarray.view``): the same float32 arithmetic (the product formed exactly in
  float64 and cast, no fused multiply-add), the same round-once rule near bf16 midpoints, the same divergence and
  last-move bookkeeping; round-to-nearest and float32 runs are bit-identical to the simulator's. Stochastic
  rounding draws 16-bit offsets from a NumPy generator (full 64-bit words split in four, the cheapest uniform
  16-bit draw NumPy has), or takes them as an array (``offsets``), so a test can replay the simulator's words;
* :func:`bench_cases` -- the simulator against :func:`gd_numpy` for ``make bench``, one case per storage.
"""
from __future__ import annotations

import numpy as np

from sims.bench import SCALES, BenchCase
from theory import validate as V

__all__ = ["gd_numpy", "bench_cases"]

STORAGE = ("bf16_rn", "bf16_sr", "float32")
#: a coordinate beyond this magnitude (or non-finite) has diverged (:data:`sims.low_precision.BOUND`, in float32)
BOUND = np.float32(1e30)
_LOW, _HIGH = np.uint32(0xFFFF), np.uint32(0xFFFF0000)
_MID, _HALF, _CELL = np.uint32(0x8000), np.uint32(0x7FFF), np.uint32(0x10000)


def _rn_words(bits: np.ndarray) -> None:
    """Round-to-nearest-even onto bf16, in place on uint32 words (NaN words aside: the caller restores those)."""
    odd = (bits >> 16) & 1
    odd += _HALF
    bits += odd
    bits &= _HIGH


def _rn(x: np.ndarray) -> np.ndarray:
    """RN of float32 values onto the bf16 grid (a new float32 array; NaN stays NaN)."""
    out = x.copy()
    _rn_words(out.view(np.uint32))
    return np.where(np.isnan(x), x, out)


def _sr(x: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Stochastic rounding of float32 values with 16-bit ``offsets`` (a new float32 array; NaN stays NaN)."""
    out = x.copy()
    bits = out.view(np.uint32)
    bits += offsets & _LOW
    bits &= _HIGH
    return np.where(np.isnan(x), x, out)


def _offsets(name: str, offsets, shape: tuple[int, ...]) -> np.ndarray:
    """Integer offsets of ``shape``; only the low 16 bits are read (uint32 words pass unchanged)."""
    raw = None if isinstance(offsets, (str, bytes)) else np.asarray(offsets)
    if raw is None or raw.dtype == bool or raw.dtype.kind not in "iu":
        raise TypeError(f"{name}: expected an integer array of random words, got {type(offsets).__name__}")
    if raw.shape != shape:
        raise ValueError(f"{name}: expected shape {shape} (the start, then one (m, n) slice per step), got {raw.shape}")
    if raw.size and (raw.min() < 0 or raw.max() > 0xFFFFFFFF):
        raise ValueError(f"{name}: expected 32-bit unsigned words in [0, 2**32), got values in [{raw.min()}, "
                         f"{raw.max()}]")
    return (raw.astype(np.uint32) & _LOW).astype(np.uint16)


def _draw(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Uniform 16-bit offsets: full-range 64-bit words viewed as four uint16 each (about 1 ns per offset)."""
    size = int(np.prod(shape))
    words = rng.integers(0, 2**64 - 1, size=(size + 3) // 4, dtype=np.uint64, endpoint=True)
    return words.view(np.uint16)[:size].reshape(shape)


def gd_numpy(w_star, eta_a, *, w0, n_steps: int, storage: str = "bf16_rn", rng=None, offsets=None, snapshots=(),
             max_bytes=None) -> dict[str, np.ndarray]:
    r"""Gradient descent on :math:`a(w - w^*)^2/2` per coordinate with stored weights, every step size at once.

    Arguments and outputs are those of :func:`sims.low_precision.gd` (``storage`` one of ``"bf16_rn"``,
    ``"bf16_sr"``, ``"float32"``), except the randomness of ``"bf16_sr"``: either ``rng``, a NumPy Generator that
    draws the 16-bit offsets (the same law as the simulator's words), or ``offsets``, an integer array
    (n_steps + 1, m, n) of 32-bit words whose low 16 bits are the offsets: ``offsets[0]`` rounds the start,
    ``offsets[t]`` step t (the simulator's words replayed give its runs bit for bit). ``max_bytes``: the allocation
    limit (:func:`theory.validate.byte_limit`) for the (m, n) working arrays and snapshots.
    """
    ws = V.array("w_star", w_star, ndim=1).astype(np.float32)
    rates = np.atleast_1d(V.array("eta_a", eta_a, ndim=(0, 1), low=0.0, low_open=True)).astype(np.float32)
    start = np.broadcast_to(V.array("w0", w0, ndim=(0, 1)), ws.shape) if np.ndim(w0) == 0 else \
        V.array("w0", w0, shape=(ws.size,))
    storage = V.choice("storage", storage, STORAGE)
    n_steps = V.integer("n_steps", n_steps, low=1, high=200_000)
    if not isinstance(snapshots, (tuple, list)):
        raise TypeError(f"snapshots: expected a tuple of step counts, got {type(snapshots).__name__}")
    snaps = tuple(V.integer("snapshots", s, low=1, high=n_steps) for s in snapshots)
    m, n = rates.size, ws.size
    V.check_bytes({"w_star": f"{n} coordinates", "eta_a": f"{m} step sizes", "snapshots": len(snaps)},
                  m * n * (4 * (12 + len(snaps)) + (2 * (n_steps + 1) if offsets is not None else 0)),
                  what="the (m, n) working arrays, snapshots and offsets", max_bytes=max_bytes)
    if storage == "bf16_sr":
        if (rng is None) == (offsets is None):
            raise ValueError("rng, offsets: stochastic rounding takes exactly one of rng (a NumPy Generator) and "
                             "offsets (an array of words), got " + ("neither" if rng is None else "both"))
        if rng is not None and not isinstance(rng, np.random.Generator):
            raise TypeError(f"rng: expected a NumPy Generator (np.random.default_rng(seed)), got {type(rng).__name__}")
        if offsets is not None:
            offsets = _offsets("offsets", offsets, (n_steps + 1, m, n))
    elif rng is not None or offsets is not None:
        given = "rng" if rng is not None else "offsets"
        raise ValueError(f"{given}: storage {storage!r} is deterministic and takes neither rng nor offsets, got {given}")

    def draw(t: int) -> np.ndarray:
        return offsets[t] if offsets is not None else _draw(rng, (m, n))

    w = np.broadcast_to(start.astype(np.float32), (m, n))
    w = _rn(w) if storage == "bf16_rn" else _sr(w, draw(0)) if storage == "bf16_sr" else w.copy()
    eta64 = rates.astype(np.float64)[:, None]
    ws2 = ws[None, :]
    last = np.zeros((m, n), np.int64)
    first = np.full((m, n), -1, np.int64)
    out_snaps = np.empty((m, len(snaps), n), np.float32)
    # NaN can enter only through a non-finite stored iterate (inf - inf); until one exists the NaN guard is skipped
    guard = not np.all(np.isfinite(w))
    prod = np.empty((m, n))
    with np.errstate(over="ignore", invalid="ignore"):  # a diverging run overflows: data, flagged below
        for t in range(1, n_steps + 1):
            np.multiply(eta64, w - ws2, out=prod)  # float32 difference, exact float64 product (no fused multiply-add)
            delta = prod.astype(np.float32)
            new = w - delta
            if storage == "bf16_rn":
                bits = new.view(np.uint32)
                mid = np.flatnonzero((bits & _LOW) == _MID)  # a float32 difference on a bf16 midpoint (rare)
                if mid.size:
                    s, wm, dm = new.ravel()[mid], w.ravel()[mid], delta.ravel()[mid]
                    r = -dm - (s - wm)  # Fast2Sum: s + r is the exact w - delta
                    away = np.sign(r) == np.sign(s)
                    decided = (s.view(np.uint32) & _HIGH) + np.where(away, _CELL, np.uint32(0))
                raw = new.copy() if guard else None
                _rn_words(bits)
                if mid.size:
                    exact = r != 0  # on the midpoint with a remainder: its sign says the side, not ties-to-even
                    new.ravel()[mid[exact]] = decided[exact].view(np.float32)
                if guard:
                    new = np.where(np.isnan(raw), raw, new)
            elif storage == "bf16_sr":
                raw = new.copy() if guard else None
                bits = new.view(np.uint32)
                bits += draw(t)
                bits &= _HIGH
                if guard:
                    new = np.where(np.isnan(raw), raw, new)
            np.copyto(last, t, where=new != w)
            inside = np.abs(new) <= BOUND  # False where non-finite or beyond the bound
            if not inside.all():
                np.copyto(first, t, where=~inside & (first < 0))
                guard = True
            for k, s_ in enumerate(snaps):
                if s_ == t:
                    out_snaps[:, k] = new
            w = new
    return {"w": w.astype(np.float64), "last_move": last, "snapshots": out_snaps.astype(np.float64),
            "diverged": first >= 0, "diverged_step": first, "eta_a": rates.astype(np.float64),
            "w_star": ws.astype(np.float64)}


def _check_exact(jx: dict, npy: dict) -> None:
    """Deterministic storage: the same float32 arithmetic on both sides, so every output bit for bit."""
    for k in ("w", "last_move", "diverged_step", "snapshots"):
        np.testing.assert_array_equal(jx[k], npy[k], err_msg=k)


def _check_law(jx: dict, npy: dict) -> None:
    r"""Stochastic rounding: different random streams, the same law. The errors :math:`w_t - w^*` of the two sides
    are paired by (step size, coordinate) (the same problem), and per step size the mean paired difference must
    lie within 5 standard errors of 0 at each snapshot: an early one (the transient :math:`e_0(1-\eta a)^t`, which
    a wrong step or rounding bias moves by thousands of standard errors) and the end. Every final iterate must also
    lie on the bf16 grid (low 16 bits zero)."""
    ej = jx["snapshots"] - jx["w_star"][None, None, :]
    en = npy["snapshots"] - npy["w_star"][None, None, :]
    diff = ej - en  # (m, snapshots, n)
    mean = diff.mean(axis=2)
    se = diff.std(axis=2, ddof=1) / np.sqrt(diff.shape[2])
    z = np.abs(mean) / np.maximum(se, 1e-300)
    assert np.all((z < 5) | (mean == 0)), f"paired mean differences {mean} exceed 5 standard errors {se}"
    for side in (jx, npy):
        assert not np.any(side["w"].astype(np.float32).view(np.uint32) & _LOW), "an iterate off the bf16 grid"


# Arithmetic per coordinate-step of the simulator's program, each elementwise float32/uint32 operation counted as one
# flop (twice as many 32-bit lanes per vector as float64 ones: one such operation takes half the issue slot of a float64
# FMA, which the limit counts as 2 flops). Every storage: the difference, two casts and the float64 product (4), the
# new difference (1), the last-move compare and select (2), the divergence test (isfinite, not, abs, compare, or: 5)
# and first-step update (3), two snapshot selects (2). RN once (sims.low_precision._rn_of_difference): the Fast2Sum
# remainder (3), the midpoint test (2), the side (5), the decided word (3), the nearest-even word with its NaN guard
# (7), the final choice (2); SR: the mask, add, mask and NaN guard (5), half a 32-bit word of sims.rng.words (its two
# 16-bit halves are two offsets), whose Threefry-2x32 hash is uint32 arithmetic too (20 rounds of add, rotate (3) and
# xor per pair of words, and 5 key injections: ~58 per word, ~29 per offset), and the split (2). The hash is counted as
# flops, not as "uniform" draws: the limit's uniform stream is jax.random's partitionable Threefry, about 3 times the
# cost per word (sims.rng), and would read above 1.
_COST = {"bf16_rn": {"flop": 39}, "bf16_sr": {"flop": 53}, "float32": {"flop": 17}}


def _case(storage: str, m: int, n: int, n_steps: int) -> BenchCase:
    ws = np.random.default_rng(0).uniform(1.0, 1.5, n).astype(np.float32).astype(np.float64)
    etas = np.geomspace(0.01, 0.6, m)  # the topic's range (ETA_RN 0.01..0.5, ETA_SR 0.05..0.6)
    snaps = (20, n_steps)  # early (the transient, step-size sensitive) and final

    def run_jax():
        import jax

        from sims.low_precision import gd

        key = jax.random.key(1) if storage == "bf16_sr" else None
        return gd(ws, etas, w0=255 / 128, n_steps=n_steps, storage=storage, key=key, snapshots=snaps)

    def run_numpy():
        rng = np.random.default_rng(1) if storage == "bf16_sr" else None
        return gd_numpy(ws, etas, w0=255 / 128, n_steps=n_steps, storage=storage, rng=rng, snapshots=snaps)

    return BenchCase(f"low_precision.gd[{storage}, {m}x{n}x{n_steps}]", "coordinate-steps", float(m * n * n_steps),
                     run_jax, run_numpy, _check_law if storage == "bf16_sr" else _check_exact, cost=_COST[storage],
                     runs=m * n)


def bench_cases(scale: str = "small") -> list[BenchCase]:
    """GD with bf16 (RN, SR) and float32 storage: ``m`` step sizes x ``n`` minimizers x ``T`` steps from
    :math:`w_0 = 255/128` (units: coordinate-steps). ``small``: 8 x 4096 x 1000; ``large``: 32 x 65536 x 1600."""
    V.choice("scale", scale, SCALES)
    m, n, n_steps = (8, 4096, 1000) if scale == "small" else (32, 65_536, 1600)
    return [_case(s, m, n, n_steps) for s in STORAGE]
