r"""Gradient descent with weights stored in bf16 (round-to-nearest or stochastic rounding) or float32, emulated
exactly by bit manipulation of float32 words in JAX.

**Rounding.** A float32 word is sign, 8 exponent bits and 23 stored significand bits; bf16 keeps the upper 16
bits. :func:`round_bf16` rounds a float32 array onto the bf16 grid and returns it as float32 (every bf16 value is
a float32): round-to-nearest-even adds :math:`2^{15} - 1` plus the lowest kept bit to the word and clears the low
16 bits (a carry into the exponent is the step to the next binade, as it should be); stochastic rounding adds a
uniform 16-bit random integer :math:`r` instead, so the word rounds up with probability exactly
:math:`(\text{low 16 bits})/2^{16}`, the fractional position of the float32 value in its bf16 cell. NaN stays
NaN. ``tests/test_low_precision.py`` checks both against ``ml_dtypes``' bfloat16 cast and against
:func:`theory.low_precision.round_nearest`.

**The runs** (:func:`gd`): :math:`f(w) = a(w - w^*)^2/2` per coordinate, with :math:`a` folded into the step
(only :math:`\eta a` matters); the gradient and the update :math:`\delta = \eta a (w - w^*)` are computed in float32
and :math:`w - \delta` is stored by ``storage``: ``"bf16_rn"``, ``"bf16_sr"`` or ``"float32"`` (no further rounding).
RN rounds the exact difference once: the float32 difference rounded again to bf16 would double-round the rare
step that lies within :math:`2^{-17}` ulp of a bf16 midpoint (float32 arithmetic lands it on the midpoint, and
ties-to-even then decides instead of the side it lies on), so the float32 difference is corrected by its exact
Fast2Sum remainder. ``"bf16_rn_f32"`` stores the float32 difference rounded again to bf16 (what a float32 update
followed by a cast does), double rounding included. Every float32 product that meets a later subtraction is formed
exactly in float64 and cast to float32, so that XLA's CPU backend cannot contract the two into one fused
multiply-add (which skips the product's rounding and moves the rare step near a tie). Every coordinate is an
independent problem; a grid of step sizes goes through :func:`sims.sweep.run_grid`, each step size with its own
PRNG stream for stochastic rounding (the key folded with the step size's float32 bits, then one fresh key per step
by ``fold_in``; the 16-bit offsets are both halves of the 32-bit words of :func:`sims.rng.words`, :func:`_offsets`).

:func:`adamw` runs AdamW under cosine decay on linear losses (bf16 RN weights, or a float64 reference path);
:func:`kahan_gd` runs Kahan-compensated bf16 gradient descent in a 16-bit unit.

**Divergence is data.** A coordinate whose iterate becomes non-finite or exceeds :math:`10^{30}` in magnitude is
flagged ``diverged``, with the first such step in ``diverged_step`` (-1 if never).
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

import sims  # noqa: F401  (x64 on: the counters are int64; the arithmetic here is float32 by choice)
from sims.rng import words
from sims.sweep import run_grid
from theory import validate as V

__all__ = ["ADAM_STORAGE", "BOUND", "MAX_STEPS", "STORAGE", "adamw", "gd", "kahan_gd", "noisy_gd", "round_bf16"]

#: how the iterate is stored after each step
STORAGE = ("bf16_rn", "bf16_sr", "float32", "bf16_rn_f32")
#: how :func:`adamw` stores the iterate: the bf16 formats, or a float64 reference path (float64 arithmetic)
ADAM_STORAGE = ("bf16_rn", "float64")
#: the longest run :func:`gd` accepts
MAX_STEPS = 200_000
#: a coordinate beyond this magnitude (or non-finite) has diverged; far below float32's 3.4e38
BOUND = 1e30

_LOW = np.uint32(0xFFFF)
_HIGH = np.uint32(0xFFFF0000)


def _rn_bits(x: jax.Array) -> jax.Array:
    bits = lax.bitcast_convert_type(x, jnp.uint32)
    keep_odd = (bits >> 16) & jnp.uint32(1)
    rounded = (bits + jnp.uint32(0x7FFF) + keep_odd) & _HIGH
    return jnp.where(jnp.isnan(x), x, lax.bitcast_convert_type(rounded, jnp.float32))


def _sr_bits(x: jax.Array, r: jax.Array) -> jax.Array:
    """``r``: uint32 words whose low 16 bits are the uniform offsets."""
    bits = lax.bitcast_convert_type(x, jnp.uint32)
    rounded = (bits + (r & _LOW)) & _HIGH
    return jnp.where(jnp.isnan(x), x, lax.bitcast_convert_type(rounded, jnp.float32))


def _offsets(key: jax.Array, shape: tuple) -> jax.Array:
    r"""Uniform 16-bit offsets of ``shape`` (as uint32) for stochastic rounding: both halves of each 32-bit word of
    :func:`sims.rng.words` (the low halves first, then the high halves). The two halves of a uniform word are
    independent uniform 16-bit integers, so this is the law of one word per offset at half the hashing."""
    n = int(np.prod(shape))
    w = words(key, ((n + 1) // 2,))
    return jnp.concatenate([w & _LOW, w >> 16])[:n].reshape(shape)


def _rn_of_difference(w: jax.Array, delta: jax.Array) -> jax.Array:
    r"""RN onto bf16 of the exact :math:`w - \delta` (float32 operands, :math:`|\delta| \le |w|`), rounded once.

    The float32 difference :math:`s` is itself rounded; Fast2Sum's remainder :math:`r = (-\delta) - (s - w)` is exact,
    :math:`s + r = w - \delta`. RN of :math:`s` is RN of the exact value except when :math:`s` sits exactly on a bf16
    midpoint and :math:`r \ne 0`: then the sign of :math:`r` says on which side the exact value lies.
    """
    s = w - delta
    r = -delta - (s - w)
    bits = lax.bitcast_convert_type(s, jnp.uint32)
    on_midpoint = (bits & _LOW) == jnp.uint32(0x8000)
    away = (r != 0) & (jnp.sign(r) == jnp.sign(s))  # the exact value lies farther from 0 than the midpoint
    decided = jnp.where(away, (bits & _HIGH) + jnp.uint32(0x10000), bits & _HIGH)
    exact = lax.bitcast_convert_type(decided, jnp.float32)
    return jnp.where(on_midpoint & (r != 0), exact, _rn_bits(s))


def round_bf16(x, *, mode: str = "nearest", key=None) -> jax.Array:
    r"""Round float32 values onto the bf16 grid (returned as float32).

    Args:
      x: a finite real number or vector (cast to float32 first: bf16 storage of a float32 value).
      mode: ``"nearest"`` (ties to even) or ``"stochastic"`` (up with probability equal to the value's fractional
        position in its bf16 cell, at 16-bit resolution, which is exact for a float32 input).
      key: a typed PRNG key, required for ``"stochastic"`` and refused for ``"nearest"``.
    """
    V.choice("mode", mode, ("nearest", "stochastic"))
    v = V.array("x", x, ndim=(0, 1)).astype(np.float32)
    if mode == "nearest":
        if key is not None:
            raise ValueError(f"key: round-to-nearest is deterministic and takes no key, got {key!r}")
        return _rn_bits(jnp.asarray(v))
    k = V.key("key", key)
    return _sr_bits(jnp.asarray(v), _offsets(k, v.shape))


def _store(w, delta, key, t, storage):
    r"""The stored :math:`w - \delta`: RN rounds the exact difference once (:func:`_rn_of_difference`); SR and float32
    take the float32 difference (SR's 16-bit offsets make its double rounding a bias below 2^-16 of an ulp)."""
    if storage == "bf16_rn":
        return _rn_of_difference(w, delta)
    x = w - delta
    if storage == "bf16_rn_f32":  # the float32 difference rounded again: double rounding near bf16 midpoints
        return _rn_bits(x)
    if storage == "bf16_sr":
        return _sr_bits(x, _offsets(jax.random.fold_in(key, t), x.shape))
    return x


def _run(point, w_star, w0, key, *, n_steps, storage, snapshots):
    """One step size's runs (``eta_a``, the grid point); every coordinate of ``w_star`` is its own problem. The SR
    stream is keyed by the step size's float32 bits, so a run does not depend on the grid around it."""
    eta_a = point
    key = jax.random.fold_in(key, lax.bitcast_convert_type(eta_a, jnp.uint32))
    n = w_star.shape[0]

    def step(carry, t):
        w, last, first, snaps = carry
        # float32: w - w* is exact (Sterbenz) within w*'s binade; a is folded into eta_a. The product of two float32
        # numbers is exact in float64 and its cast is the rounded float32 product; done in float32, XLA's CPU backend
        # may contract it with w - delta into one fused multiply-add (no rounding of the product), which moves the
        # rare step that lies within a float32 rounding of a bf16 midpoint
        delta = (eta_a.astype(jnp.float64) * (w - w_star).astype(jnp.float64)).astype(jnp.float32)
        new = _store(w, delta, key, t, storage)
        last = jnp.where(new != w, t, last)
        bad = ~jnp.isfinite(new) | (jnp.abs(new) > BOUND)
        first = jnp.where((first < 0) & bad, t, first)
        snaps = tuple(jnp.where(t == s, new, z) for s, z in zip(snapshots, snaps))
        return (new, last, first, snaps), None

    zeros = jnp.zeros(n, jnp.int64)
    start = (w0, zeros, zeros - 1, tuple(w0 for _ in snapshots))
    (w, last, first, snaps), _ = lax.scan(step, start, jnp.arange(1, n_steps + 1, dtype=jnp.int64))
    return {"w": w, "last_move": last, "diverged_step": first,
            "snapshots": jnp.stack(snaps) if snapshots else jnp.zeros((0, n), jnp.float32)}


def gd(w_star, eta_a, *, w0, n_steps: int, storage: str = "bf16_rn", key=None, snapshots=()) -> dict[str, np.ndarray]:
    r"""Gradient descent on :math:`a(w - w^*)^2/2`, coordinate by coordinate, with stored weights.

    Args:
      w_star: (n,) minimizers (cast to float32), one independent problem each.
      eta_a: a step size times curvature :math:`\eta a > 0` or an (m,) array of them (cast to float32).
      w0: the start, a number or (n,) array; it is stored (rounded) by ``storage`` before the first step.
      n_steps: steps per run, in ``1..MAX_STEPS``.
      storage: one of :data:`STORAGE`.
      key: a typed PRNG key, required for ``"bf16_sr"`` and refused otherwise; each step size's stream is the key
        folded with its float32 bits (a run does not depend on the other step sizes of the grid).
      snapshots: step counts in ``1..n_steps`` at which to record the iterate.

    Returns:
      ``w`` (m, n): the final iterates (float32 values, as float64); ``last_move`` (m, n): the last step at which
      the stored iterate changed (0 if never): after it the run is frozen; ``snapshots`` (m, s, n); ``diverged``
      (m, n) and ``diverged_step`` (m, n, -1 = never) as in the module docstring. ``eta_a`` and ``w_star`` are
      returned as the float32 values the runs used.
    """
    ws = V.array("w_star", w_star, ndim=1).astype(np.float32)
    rates = np.atleast_1d(V.array("eta_a", eta_a, ndim=(0, 1), low=0.0, low_open=True)).astype(np.float32)
    start = np.broadcast_to(V.array("w0", w0, ndim=(0, 1)), ws.shape) if np.ndim(w0) == 0 else \
        V.array("w0", w0, shape=(ws.size,))
    storage = V.choice("storage", storage, STORAGE)
    n_steps = V.integer("n_steps", n_steps, low=1, high=MAX_STEPS)
    if not isinstance(snapshots, (tuple, list)):
        raise TypeError(f"snapshots: expected a tuple of step counts, got {type(snapshots).__name__}")
    snaps = tuple(V.integer("snapshots", s, low=1, high=n_steps) for s in snapshots)
    if storage == "bf16_sr":
        k = V.key("key", key)
    elif key is not None:
        raise ValueError(f"key: storage {storage!r} is deterministic and takes no key, got {key!r}")
    else:
        k = jax.random.key(0)  # never read: a placeholder of the grid's shape
    V.check_bytes({"w_star": ws.shape, "eta_a": rates.shape}, 8 * rates.size * ws.size * (4 + len(snaps)),
                  what="the runs' iterates, counters and snapshots")
    w0_32 = start.astype(np.float32)
    if storage == "bf16_sr":
        w0_stored = _sr_bits(jnp.asarray(w0_32), _offsets(jax.random.fold_in(k, 0), ws.shape))
    elif storage in ("bf16_rn", "bf16_rn_f32"):
        w0_stored = _rn_bits(jnp.asarray(w0_32))
    else:
        w0_stored = jnp.asarray(w0_32)
    out = run_grid(_run, jnp.asarray(rates), jnp.asarray(ws), w0_stored, k,
                   static={"n_steps": n_steps, "storage": storage, "snapshots": snaps}, desc="low_precision gd")
    flagged = out["diverged_step"] >= 0
    return {"w": out["w"].astype(np.float64), "last_move": out["last_move"],
            "snapshots": out["snapshots"].astype(np.float64), "diverged": flagged,
            "diverged_step": out["diverged_step"], "eta_a": rates.astype(np.float64), "w_star": ws.astype(np.float64)}


def _adam_run(eta_max, grad, w0, hyper, *, n_steps, storage, record):
    """One peak step size's AdamW runs under cosine decay; every coordinate of ``grad`` is its own linear loss.
    ``hyper``: (beta1, beta2, eps, weight_decay), traced (a new value compiles nothing)."""
    dt = jnp.float64 if storage == "float64" else jnp.float32
    g = grad.astype(dt)
    b1, b2, e, lam = (h.astype(dt) for h in hyper)
    peak = eta_max.astype(dt)

    def step(carry, t):
        w, m, v, last = carry
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        tt = t.astype(dt)
        u = (m / (1 - b1**tt)) / (jnp.sqrt(v / (1 - b2**tt)) + e)
        eta = peak * (1 + jnp.cos(jnp.pi * (tt - 1) / n_steps)) / 2
        if storage == "float64":
            delta = eta * (u + lam * w)
            new = w - delta
        else:  # float32 terms, each product rounded (formed in float64, cast): no fused multiply-add
            f64 = jnp.float64
            decay = (lam.astype(f64) * w.astype(f64)).astype(dt)
            delta = (eta.astype(f64) * (u + decay).astype(f64)).astype(dt)
            new = _rn_of_difference(w, delta)
        last = jnp.where(new != w, t, last)
        rec = (w, delta) if record else None
        return (new, m, v, last), rec

    zeros = jnp.zeros(g.shape, dt)
    start = (w0.astype(dt), zeros, zeros, jnp.zeros(g.shape, jnp.int64))
    (w, _, _, last), rec = lax.scan(step, start, jnp.arange(1, n_steps + 1, dtype=jnp.int64))
    out = {"w": w.astype(jnp.float64), "last_move": last}
    if record:
        out["w_before"], out["delta"] = rec[0].astype(jnp.float64), rec[1].astype(jnp.float64)
    return out


def adamw(grad, eta_max, *, w0, n_steps: int, storage: str = "bf16_rn", beta1: float = 0.9, beta2: float = 0.999,
          eps: float = 1e-8, weight_decay: float = 0.0, record: bool = False) -> dict[str, np.ndarray]:
    r"""AdamW with a cosine schedule on linear losses :math:`f(w) = g\,w`, coordinate by coordinate, with stored weights.

    Update :math:`t = 1..T`: :math:`m_t, v_t` the EMAs of :math:`g` and :math:`g^2`, :math:`u_t = \hat m_t/(\sqrt{\hat v_t} +
    \epsilon)` with bias-corrected moments (:math:`u_t = g/(|g| + \epsilon)` in exact arithmetic: a sign-like update),
    :math:`\eta_t = \eta_{\max}(1 + \cos(\pi (t-1)/T))/2` and :math:`w_t = w_{t-1} - \eta_t(u_t + \lambda w_{t-1})`
    (decoupled decay). ``storage="bf16_rn"`` computes in float32 and rounds :math:`w_{t-1} - \delta_t` once onto bf16;
    ``"float64"`` is the high-precision reference path.

    Args:
      grad: (n,) nonzero gradients, one coordinate each.
      eta_max: a peak step size or an (m,) array of them.
      w0: the start, a number or (n,) array (rounded onto bf16 for ``"bf16_rn"``).
      n_steps: :math:`T`, in ``1..MAX_STEPS``.
      storage: one of :data:`ADAM_STORAGE`.
      beta1, beta2: the EMA factors in [0, 1); eps: :math:`\epsilon \ge 0`; weight_decay: :math:`\lambda \ge 0`.
      record: also return the path before each update, ``w_before`` (m, T, n), and each update ``delta`` (m, T, n).

    Returns:
      ``w`` (m, n) and ``last_move`` (m, n): the last update that changed the stored weight (0 if none).
      ``diverged`` (m, n) and ``diverged_step``: a decaying, bounded update cannot diverge, so always False and -1
      (kept for the common contract).
    """
    g = V.array("grad", grad, ndim=1)
    if np.any(g == 0):
        raise ValueError("grad: expected nonzero gradients (u = g/(|g| + eps) has no sign at 0)")
    peaks = np.atleast_1d(V.array("eta_max", eta_max, ndim=(0, 1), low=0.0, low_open=True))
    start = np.broadcast_to(V.array("w0", w0, ndim=0), g.shape) if np.ndim(w0) == 0 else \
        V.array("w0", w0, shape=(g.size,))
    storage = V.choice("storage", storage, ADAM_STORAGE)
    n_steps = V.integer("n_steps", n_steps, low=1, high=MAX_STEPS)
    b1 = V.real("beta1", beta1, low=0.0, high=1.0, high_open=True)
    b2 = V.real("beta2", beta2, low=0.0, high=1.0, high_open=True)
    e = V.real("eps", eps, low=0.0)
    lam = V.real("weight_decay", weight_decay, low=0.0)
    if not isinstance(record, (bool, np.bool_)):
        raise TypeError(f"record: expected a bool, got {type(record).__name__} {record!r}")
    V.check_bytes({"grad": g.shape, "eta_max": peaks.shape, "n_steps": n_steps},
                  8 * peaks.size * g.size * (4 + (2 * n_steps if record else 0)),
                  what="the runs' states and recorded paths")
    w0_dev = jnp.asarray(start.astype(np.float64)) if storage == "float64" else _rn_bits(jnp.asarray(start, jnp.float32))
    hyper = tuple(jnp.asarray(h, jnp.float64) for h in (b1, b2, e, lam))
    out = run_grid(_adam_run, jnp.asarray(peaks), jnp.asarray(g), w0_dev, hyper,
                   static={"n_steps": n_steps, "storage": storage, "record": bool(record)}, desc="low_precision adamw")
    out["diverged"] = np.zeros(out["w"].shape, bool)
    out["diverged_step"] = np.full(out["w"].shape, -1, np.int64)
    return out


def _kahan_run(eta_a, w_star, w0, *, n_steps, average_from):
    r"""One step size's Kahan-compensated runs: weight and compensation stored in bf16, arithmetic in float32, every
    result rounded onto bf16 (a 16-bit unit). Accumulates :math:`w_t - w^*` (float64) for :math:`t >` ``average_from``."""
    def step(carry, t):
        w, c, acc, z_mid = carry
        delta = (eta_a.astype(jnp.float64) * (w - w_star).astype(jnp.float64)).astype(jnp.float32)  # rounded product
        y = _rn_bits(-delta - c)
        new = _rn_bits(w + y)
        c = _rn_bits(_rn_bits(new - w) - y)  # what the rounding of w + y lost, itself rounded onto bf16
        acc = acc + jnp.where(t > average_from, new.astype(jnp.float64) - w_star.astype(jnp.float64), 0.0)
        z_mid = jnp.where(t == average_from, new.astype(jnp.float64) - c.astype(jnp.float64), z_mid)
        return (new, c, acc, z_mid), None

    zero = jnp.zeros(w_star.shape, jnp.float64)
    start = (w0, jnp.zeros(w_star.shape, jnp.float32), zero, zero)
    (w, c, acc, z_mid), _ = lax.scan(step, start, jnp.arange(1, n_steps + 1, dtype=jnp.int64))
    return {"w": w.astype(jnp.float64), "c": c.astype(jnp.float64), "mean_error": acc / (n_steps - average_from),
            "z_mid": z_mid}


def kahan_gd(w_star, eta_a, *, w0, n_steps: int, average_from: int) -> dict[str, np.ndarray]:
    r"""Gradient descent on :math:`a(w - w^*)^2/2` with Kahan-compensated bf16 weights (a 16-bit unit: every result
    rounded onto bf16).

    Per step: :math:`\delta = \eta a (w - w^*)`, :math:`y = \mathrm{RN}(-\delta - c)`, :math:`w' = \mathrm{RN}(w + y)`,
    :math:`c' = \mathrm{RN}(\mathrm{RN}(w' - w) - y)`. In exact arithmetic :math:`z = w - c` would accumulate every update
    exactly; here the roundings of :math:`y` and :math:`c` still lose a little per step.

    Args:
      w_star: (n,) minimizers (float32); eta_a: a positive number or (m,) array; w0: the start (stored in bf16);
      n_steps: steps, in ``2..MAX_STEPS``; average_from: the window's start, in ``1..n_steps - 1``.

    Returns:
      ``w``, ``c`` (m, n): the final weight and compensation; ``mean_error`` (m, n): the mean of :math:`w_t - w^*`
      over :math:`t` in (``average_from``, ``n_steps``]; ``z_mid`` (m, n): :math:`w - c` at ``average_from``;
      ``diverged`` (m, n): a non-finite final weight or compensation, and ``diverged_step`` (-1, or ``n_steps``
      for a flagged run: the step is not tracked inside the window).
    """
    ws = V.array("w_star", w_star, ndim=1).astype(np.float32)
    rates = np.atleast_1d(V.array("eta_a", eta_a, ndim=(0, 1), low=0.0, low_open=True)).astype(np.float32)
    start = V.real("w0", w0)
    n_steps = V.integer("n_steps", n_steps, low=2, high=MAX_STEPS)
    mid = V.integer("average_from", average_from, low=1, high=n_steps - 1)
    V.check_bytes({"w_star": ws.shape, "eta_a": rates.shape}, 8 * rates.size * ws.size * 6,
                  what="the runs' weights, compensations and sums")
    w0_dev = _rn_bits(jnp.full(ws.shape, start, jnp.float32))
    out = run_grid(_kahan_run, jnp.asarray(rates), jnp.asarray(ws), w0_dev,
                   static={"n_steps": n_steps, "average_from": mid}, desc="low_precision kahan")
    bad = ~(np.isfinite(out["w"]) & np.isfinite(out["c"]) & (np.abs(out["w"]) <= BOUND))
    out["diverged"] = bad
    out["diverged_step"] = np.where(bad, n_steps, -1)
    return out


def _noisy_run(eta_a, w_star, w0, key, sigma, *, n_steps, window):
    """One step size's RN runs with Gaussian gradient noise; accumulates (w - w*)^2 over the last ``window`` steps."""
    key = jax.random.fold_in(key, lax.bitcast_convert_type(eta_a, jnp.uint32))

    def step(carry, t):
        w, acc = carry
        xi = jax.random.normal(jax.random.fold_in(key, t), w.shape, jnp.float32)
        grad = (w - w_star) + sigma * xi  # a folded into eta_a: the gradient a (w - w* + sigma xi)
        delta = (eta_a.astype(jnp.float64) * grad.astype(jnp.float64)).astype(jnp.float32)  # rounded product
        new = _rn_of_difference(w, delta)
        err = new.astype(jnp.float64) - w_star.astype(jnp.float64)
        acc = acc + jnp.where(t > n_steps - window, err * err, 0.0)
        return (new, acc), None

    start = (w0, jnp.zeros(w_star.shape, jnp.float64))
    (w, acc), _ = lax.scan(step, start, jnp.arange(1, n_steps + 1, dtype=jnp.int64))
    return {"w": w.astype(jnp.float64), "mean_sq": acc / window}


def noisy_gd(w_star, eta_a, sigma, *, w0, n_steps: int, window: int, key) -> dict[str, np.ndarray]:
    r"""Round-to-nearest bf16 gradient descent with Gaussian gradient noise: :math:`\delta = \eta a(w - w^* + \sigma\xi)`,
    :math:`\xi \sim N(0, 1)` fresh per coordinate and step (float32), :math:`w \leftarrow \mathrm{RN}(w - \delta)`.

    Args:
      w_star: (n,) minimizers (float32), one independent chain each; eta_a: a positive number or (m,) array;
      sigma: the noise's standard deviation in units of :math:`w` (the gradient's is :math:`a\sigma`), >= 0;
      w0: the start; n_steps: steps, in ``1..MAX_STEPS``; window: the last steps averaged, in ``1..n_steps``;
      key: a typed PRNG key (each step size's stream is the key folded with its float32 bits).

    Returns:
      ``w`` (m, n): the final weights; ``mean_sq`` (m, n): the mean of :math:`(w_t - w^*)^2` over the window;
      ``diverged`` (m, n) (a non-finite or huge final weight) and ``diverged_step`` (-1, or ``n_steps`` if flagged).
    """
    ws = V.array("w_star", w_star, ndim=1).astype(np.float32)
    rates = np.atleast_1d(V.array("eta_a", eta_a, ndim=(0, 1), low=0.0, low_open=True)).astype(np.float32)
    noise = V.real("sigma", sigma, low=0.0)
    start = V.real("w0", w0)
    n_steps = V.integer("n_steps", n_steps, low=1, high=MAX_STEPS)
    window = V.integer("window", window, low=1, high=n_steps)
    k = V.key("key", key)
    V.check_bytes({"w_star": ws.shape, "eta_a": rates.shape}, 8 * rates.size * ws.size * 4,
                  what="the runs' weights and sums")
    w0_dev = _rn_bits(jnp.full(ws.shape, start, jnp.float32))
    out = run_grid(_noisy_run, jnp.asarray(rates), jnp.asarray(ws), w0_dev, k, jnp.asarray(noise, jnp.float32),
                   static={"n_steps": n_steps, "window": window}, desc="low_precision noisy gd")
    bad = ~(np.isfinite(out["w"]) & (np.abs(out["w"]) <= BOUND))
    out["diverged"] = bad
    out["diverged_step"] = np.where(bad, n_steps, -1)
    return out
