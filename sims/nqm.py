r"""Simulator of the noisy quadratic model (NQM), shared by every topic that needs one.

Objective :math:`L(x) = \tfrac12 (x-c)^\top H (x-c)`, :math:`H = \mathrm{diag}(\lambda)` or a full matrix, minimizer
:math:`c` (``center``, 0 by default). At
batch size :math:`B` the stochastic gradient is

.. math:: g = H(x-c)\odot\Big(1 + \frac{\sigma_m}{\sqrt B}\xi_1\Big) + \frac{\sigma_a}{\sqrt B}\odot\xi_2,

:math:`\xi_{1,2}` i.i.d. per coordinate from the noise ``law``: ``"gaussian"``, ``"student"`` (integer
``df``, unit scale), ``"rademacher"`` (:math:`\pm1`) or ``"uniform"`` (on :math:`[-1, 1]`, unit scale: variance
:math:`1/3`, so a noise level :math:`\sigma` there is :math:`\sigma/\sqrt3` in the moment recursion's units). Any optimizer of :mod:`sims.optimizers` takes
the step, along any step-size schedule :math:`\eta_t` (arrays: WSD, cosine, decay to zero, ...).
:func:`theory.nqm.moment_recursion` is the exact law of SGD's second moments on this model.

Per run (:func:`_nqm_run`, mapped over a grid by :func:`sims.sweep.run_grid`): a loop over ``n_rec`` recording
blocks, each a loop over its steps. The noise is hashed a few steps at a time (:func:`noise_at`: the values the
block's one-call draw ``noise(block key, (steps, d))`` holds at those steps, about 64 per run), so no noise block is
ever stored and a step's working set stays in cache. The method, the noise law and which noises are present select code
and are static; the horizon :math:`T` and ``n_rec`` are data (loop bounds), the records padded to a power of two and
the schedules to a power-of-two length, so a handful of compiled kernels serves every horizon; everything else
(curvatures, noise levels, batch size, momentum, decay, EMA rate, schedule, start, key) is data as well.

Arrays given once for all configurations (``lam`` and ``center`` as ``(d,)``, ``sigma_a`` as a scalar or ``(d,)``,
and ``H``) are passed once, replicated, instead of copied into each run's grid point: a per-run copy is one more
state-sized array streamed through every step. The choice follows the shapes given, so new data of the same shapes
reuses the compiled sweep.

**Divergence is data.** A run whose state becomes non-finite or exceeds :data:`BOUND` is flagged
``diverged``; ``diverged_step`` is the first bad step :math:`k \ge 1` (-1 for finite runs).
Statistics over runs use :func:`summarize` (finite runs only, with the number diverged beside them).

Importing :mod:`sims` enables float64; :func:`simulate` also runs in float32 (its ``dtype``, where it says what
float32 keeps).
"""
from __future__ import annotations

import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.extend.random import threefry2x32_p

import sims  # noqa: F401  (float64)
from sims import optimizers as opt
from sims.sweep import floats_as, padded_length, run_grid
from theory import validate as V

__all__ = ["LAWS", "BOUND", "BOUND32", "BOUNDS", "CHUNK", "noise", "noise_at", "simulate", "Summary", "summarize",
           "broadcast_configurations"]

LAWS = ("gaussian", "student", "rademacher", "uniform")
BOUND = 1e150  # |x| beyond this counts as diverged (squares would overflow float64)
CHUNK = 4096
# a step streams the chunk's state (x, optimizer state, EMA, running sums, peak: up to ~8 arrays of chunk x d values)
# through the core: chunks are capped so that it stays in a core's share of L2 (2 MiB), whatever memory would allow
_CACHE_VALUES = 2**15
_MIN_T_PAD = 4096  # schedules are padded to a power-of-two length of at least this: short horizons share one kernel
_MIN_REC_PAD = 8   # records are padded to a power of two of at least this
_SUB = 64          # noise values per run hashed at once (see simulate)
# a coordinate past the bound (or NaN) at step k stores (T + 2 - k) * 2**540 instead of |x|: larger than any tracked
# |x| <= BOUND and larger for earlier steps, so one running maximum keeps both max |x| and the first bad step; a power of
# two times an integer below 2**53 is exact, so the step is read back exactly
_STEP_CODE = 2.0**540
# float32 (``simulate(dtype="float32")``): float32 squares overflow past ~1.8e19, so the bound is 1e15 (a loss summed over
# up to ~1e8 such modes stays finite) and the code (T + 2 - k) * 2**60, above the bound; its integer factor is exact up to
# 2**24, so float32 runs are limited to T <= 2**24 - 1, and the largest code, 2**84, is far below float32's 2**128
BOUND32 = 1e15
_STEP_CODE32 = 2.0**60
_T_MAX32 = 2**24 - 1


# the divergence bound of each arithmetic, as a constant of that dtype (a float64 constant in a float32 kernel would
# promote it); also read by sims.sign_floor's chains
BOUNDS = {"float64": BOUND, "float32": np.float32(BOUND32)}


def _limits(dtype: str) -> tuple:
    """``(bound, step code)`` of the divergence bookkeeping in ``dtype`` (:data:`BOUNDS`), as constants of that dtype."""
    return BOUNDS[dtype], (np.float32(_STEP_CODE32) if dtype == "float32" else _STEP_CODE)


def noise(key: jax.Array, shape, law: str = "gaussian", df: int = 0, *, max_bytes=None) -> jax.Array:
    r"""Unit-scale noise of ``shape``: standard Gaussian, Student-t with integer ``df`` (unit scale), Rademacher, or uniform on [-1, 1].

    Student-t: :math:`\nu \le 2` by the exact inverse CDF of a uniform, otherwise
    :math:`z/\sqrt{\chi^2_\nu/\nu}` with :math:`\chi^2_\nu` a sum of squared normals (no rejection
    sampler). Drawn flat and reshaped (XLA compiles a flat draw faster than a trailing axis).

    ``key`` a typed PRNG key (a tracer inside a kernel); ``shape`` a non-empty tuple of integers >= 1;
    ``df`` an integer in [1, 64] for ``law="student"``, else an integer >= 0 (ignored). Everything but
    ``key`` is static, so the checks run once, at trace time. ``max_bytes``: the allocation limit
    (:func:`theory.validate.byte_limit`) for one draw (a Student-t draw holds about ``df + 2`` arrays of ``shape``).
    """
    V.key("key", key)
    shape = _shape(shape)
    df = _law(law, df)
    size = math.prod(shape)  # a Python int: np.prod would wrap around beyond int64
    V.check_bytes({"shape": shape}, 8 * size * (df + 2 if law == "student" else 2), what="one draw and its temporaries",
                  max_bytes=max_bytes)
    if law == "gaussian":
        return jax.random.normal(key, (size,)).reshape(shape)
    if law == "rademacher":
        return jax.random.rademacher(key, (size,), dtype=jnp.float64).reshape(shape)
    if law == "uniform":
        return jax.random.uniform(key, (size,), minval=-1.0, maxval=1.0).reshape(shape)
    if df in (1, 2):
        u = jax.random.uniform(key, (size,), minval=jnp.finfo(jnp.float64).tiny)
        t = jnp.tan(jnp.pi * (u - 0.5)) if df == 1 else (2 * u - 1) / jnp.sqrt(2 * u * (1 - u))
        return t.reshape(shape)
    k_z, k_chi = jax.random.split(key)
    chi2 = jnp.sum(jax.random.normal(k_chi, (df * size,)).reshape(df, size) ** 2, axis=0)
    return (jax.random.normal(k_z, (size,)) / jnp.sqrt(chi2 / df)).reshape(shape)


def _law(law, df) -> int:
    """The validated ``df`` (0 unless ``law`` is Student-t, whose df is an integer in [1, 64])."""
    V.choice("law", law, LAWS)
    if law == "student":
        return V.integer("df", df, low=1, high=64)
    V.integer("df", df, low=0)  # unused by this law, but a non-integer df is still a caller's mistake
    return 0


def _shape(shape) -> tuple:
    """``shape`` as a tuple of ints >= 1 (at least one axis): the static shape of a draw."""
    if not isinstance(shape, (tuple, list)) or not shape:
        raise TypeError(f"shape: expected a non-empty tuple of integers >= 1, got {shape!r}")
    return tuple(V.integer("shape", n, low=1) for n in shape)


_SQRT2 = np.sqrt(np.float64(2.0))
_NORMAL_LOW = np.nextafter(np.float64(-1.0), np.float64(0.0))
_SQRT2_32 = np.sqrt(np.float32(2.0))
_NORMAL_LOW32 = np.nextafter(np.float32(-1.0), np.float32(0.0))


def _bits64(key: jax.Array, index: jax.Array) -> jax.Array:
    """Threefry-2x32 of the 64-bit counters ``index`` under ``key``: JAX's partitionable 64-bit random bits, whose
    element ``i`` of a flat draw hashes the counter ``i`` (high word, low word)."""
    k = jax.random.key_data(key)
    i = index.astype(jnp.uint64)
    # the key words stay scalars: the primitive broadcasts them (broadcasting them first to the counters' shape
    # materializes them per value under vmap, 4x slower)
    hi, lo = threefry2x32_p.bind(k[0], k[1], (i >> 32).astype(jnp.uint32), i.astype(jnp.uint32))
    return (hi.astype(jnp.uint64) << 32) | lo.astype(jnp.uint64)


def _uniform_at(key: jax.Array, index: jax.Array, low, high, dtype: str = "float64") -> jax.Array:
    """``jax.random.uniform``'s float64 map of :func:`_bits64`: 52 random mantissa bits in [1, 2), shifted and scaled.

    ``dtype="float32"``: the top 23 of those bits (the high word's, so the uniform is the float64 one rounded down to a
    multiple of :math:`2^{-23}`: the two precisions draw coupled values from one key), in float32 arithmetic.
    """
    if dtype == "float32":
        k = jax.random.key_data(key)
        i = index.astype(jnp.uint64)
        hi, _ = threefry2x32_p.bind(k[0], k[1], (i >> 32).astype(jnp.uint32), i.astype(jnp.uint32))
        one = np.array(1.0, np.float32).view(np.uint32)
        u = lax.bitcast_convert_type((hi >> np.uint32(9)) | one, jnp.float32) - np.float32(1.0)
        lo32, hi32 = np.float32(low), np.float32(high)
        return jnp.maximum(lo32, u * (hi32 - lo32) + lo32)
    one = np.array(1.0, np.float64).view(np.uint64)
    u = lax.bitcast_convert_type((_bits64(key, index) >> 12) | one, jnp.float64) - 1.0
    return jnp.maximum(low, u * (np.float64(high) - np.float64(low)) + low)


def noise_at(key: jax.Array, index: jax.Array, law: str, df: int, size, dtype=None) -> jax.Array:
    r"""Elements ``index`` of the flat draw ``noise(key, (size,), law, df)``, computed alone (no other element drawn).

    JAX's Threefry keys draw in counter mode (``jax_threefry_partitionable``, on by default): element :math:`i` of a
    draw is a fixed map of the hash of the counter :math:`i`, so it can be computed alone; ``size`` matters only to
    Student-t with :math:`\nu > 2`, whose :math:`\chi^2` rows sit at counters :math:`r\,\mathrm{size} + i`.
    ``index`` an integer array (a tracer inside a kernel), ``size`` an integer (a tracer allowed); ``law`` and ``df``
    as :func:`noise` (static: checked once, at trace time; ``index`` and ``size`` are not checked, being tracers in
    the kernel's inner loop).

    ``dtype``: ``None``/``"float64"`` (the values above) or ``"float32"`` (:func:`theory.validate.float_dtype`): the
    uniform underneath rounded down to 23 bits (:func:`_uniform_at`) and mapped in float32, so each value is the
    float64 one to float32 round-off (Gaussian: to :math:`2^{-23}/\varphi(z)`, which grows in the far tails).
    """
    V.key("key", key)
    df = _law(law, df)
    dt = V.float_dtype("dtype", dtype).name
    one = np.dtype(dt).type(1.0)
    if law == "gaussian":
        sqrt2, low = (_SQRT2_32, _NORMAL_LOW32) if dt == "float32" else (_SQRT2, _NORMAL_LOW)
        return sqrt2 * lax.erf_inv(_uniform_at(key, index, low, 1.0, dt))
    if law == "rademacher":
        # typed ones: jnp.where of two Python floats would be float64 under x64
        return jnp.where(_uniform_at(key, index, 0.0, 1.0, dt) < 0.5, one, -one)
    if law == "uniform":
        return _uniform_at(key, index, -1.0, 1.0, dt)
    if df in (1, 2):
        u = _uniform_at(key, index, np.finfo(dt).tiny, 1.0, dt)
        return jnp.tan(jnp.pi * (u - 0.5)) if df == 1 else (2 * u - 1) / jnp.sqrt(2 * u * (1 - u))
    k_z, k_chi = jax.random.split(key)
    rows = jnp.arange(df, dtype=index.dtype).reshape((df,) + (1,) * index.ndim) * size + index
    chi2 = jnp.sum(noise_at(k_chi, rows, "gaussian", 0, size, dt) ** 2, axis=0)
    return noise_at(k_z, index, "gaussian", 0, size, dt) / jnp.sqrt(chi2 / df)


def _run_key(point: dict, impl: str) -> jax.Array:
    """``fold_in(base key, run index)``; the base key travels as raw data so the grid holds only NumPy arrays."""
    return jax.random.fold_in(jax.random.wrap_key_data(point["key_data"], impl=impl), point["key_index"])


def _nqm_run(point: dict, etas: jax.Array, shared: dict, *, n_rec_pad: int, sub: int, method: str, full: bool, additive: bool,
             multiplicative: bool, law: str = "gaussian", df: int = 0, impl: str = "threefry2x32", ema: bool = True,
             centered: bool = True, window_mean: bool = False, step_stat: bool = False, merge: int = 0,
             dtype: str = "float64") -> dict:
    r"""One run of :math:`T` steps on the NQM (pure; mapped over a grid by :func:`simulate`).

    ``point`` keys: ``key_data``, ``key_index``; ``x0`` and ``center`` (d,); ``lam`` (d,) or, when ``full``, ``H`` (d, d);
    ``sigma_a`` (d,); any of ``lam``, ``H``, ``center``, ``sigma_a`` may come in ``shared`` instead (the same for
    every run, not mapped); scalars ``sigma_m``, ``inv_sqrt_b`` (:math:`1/\sqrt B`), ``momentum``, ``b2``, ``wd``,
    ``coupled_wd``, ``ema`` (EMA rate :math:`\alpha` of :math:`z^+ = (1-\alpha)z + \alpha x`, :math:`z_0 = x_0`),
    ``sched`` (row of ``etas``, the shared schedules, at least :math:`T` long) and ``burn``. ``shared["T"]`` and
    ``shared["n_rec"]`` (integers, ``n_rec`` dividing :math:`T`, at most the static ``n_rec_pad``) are the horizon and
    the number of recording blocks: loop bounds, not shapes.

    Returns ``curve``, ``path`` and ``path_ema`` (:math:`L`, :math:`x` and :math:`z` at the end of each of the ``n_rec``
    blocks; ``n_rec_pad`` rows, those past ``n_rec`` zero), ``mean_loss``
    (:math:`\frac{1}{T-b}\sum_{b<k\le T} L(x_k)`), per coordinate over the same steps the time averages
    ``mode_m2`` of :math:`x_k^2`, ``mode_m2_step`` of :math:`(x_{k-1} - \eta_{k-1} g_{k-1})^2` (the plain
    gradient step from the parameters: Nesterov's iterate) and ``mode_m2_ema`` of :math:`z_k^2`;
    ``final_x``, ``final_ema``, ``max_abs`` (:math:`\max_{k\ge1}\|x_k\|_\infty`; :math:`+\infty` for a diverged run,
    whose iterates past the bound are not tracked), ``diverged``, ``diverged_step``; and ``mean_x``, the time average
    :math:`\frac{1}{T-b}\sum_{b<k\le T} x_k` (the uniform merge of the last :math:`T-b` checkpoints) when the static
    ``window_mean`` is on; and ``merged_x`` ``(merge, d)``, the weighted merges :math:`\sum_{k=1}^T w_{m,k}x_k` with the
    rows of ``shared["merge_w"]`` ``(merge, T)`` (weight :math:`w_{m,k}` on the iterate after update :math:`k`, every
    step, whatever ``burn``) when the static ``merge`` (the number of rows) is positive. A statistic that is not
    computed is absent, not NaN: a NaN beside ``diverged = False`` would read as a broken run.

    Noise: block :math:`j` splits the run's key into (next key, multiplicative key, additive key); step :math:`i` of the
    block of :math:`s = T/n_{rec}` steps uses elements :math:`i d .. i d + d - 1` of the flat draws of :math:`s d` values
    under each noise's key (:func:`noise_at`), hashed ``sub`` steps at a time (static; the last part of a block may
    hash values past its end, never used).

    Static switches that drop per-step work (a step of the noise-free diagonal model is a handful of flops, so
    statistics dominate it): ``ema=False`` when every run has :math:`\alpha = 0`, where :math:`z_k = x_0` exactly
    and its outputs are filled in without the recursion; ``centered=False`` when :math:`c = 0`, where the diagonal
    model's ``mean_loss`` is :math:`\tfrac12\sum_i\lambda_i` ``mode_m2``:math:`_i` (one per-mode sum, no per-step
    reduction). ``mode_m2_step`` is accumulated only with the static ``step_stat`` (:func:`simulate` turns it on
    when some configuration runs ``nesterov``, where it is the iterate; for the other methods of such a call it is
    the plain step from their iterate).

    Divergence and the max-norm cost one elementwise update per step and no reduction over coordinates: each
    coordinate keeps :math:`p_i = \max_k |x_{k,i}|` while :math:`|x_{k,i}| \le` :data:`BOUND`, and from its first bad
    step :math:`k` on (NaN fails the comparison, :math:`\pm\infty` exceeds the bound) a code
    :math:`(T + 2 - k)\,2^{540}` that exceeds every tracked value and decreases with :math:`k`; after the run
    :math:`\max_i p_i` is the max-norm, or decodes the run's first bad step :math:`\min_i k_i`. With the static
    ``dtype="float32"`` (every array of ``point`` and ``shared`` then float32) the bound is :data:`BOUND32` and the code
    :math:`(T + 2 - k)\,2^{60}` (:func:`_limits`), and the noise is drawn in float32 (:func:`noise_at`).
    """
    point = {**point, **shared}
    hyper = opt.Hyper(point["momentum"], point["b2"], point["wd"], point["coupled_wd"])
    x0, sa, sm, isb = point["x0"], point["sigma_a"], point["sigma_m"], point["inv_sqrt_b"]
    alpha, burn = point["ema"], point["burn"]
    T, n_rec = point["T"], point["n_rec"]
    sched = point["sched"]
    # c = 0 is a static zero, so the subtraction (and reading a centre per run every step) folds away
    c = point["center"] if centered else 0.0
    block = T // n_rec
    cols = jnp.arange(x0.shape[-1], dtype=T.dtype)
    size = block * x0.shape[-1]  # values per noise and block (Student-t's chi^2 rows are offset by it)
    if full:
        H = point["H"]
        hx = lambda x: H @ (x - c)  # noqa: E731
        loss = lambda x: 0.5 * (x - c) @ (H @ (x - c))  # noqa: E731
    else:
        lam = point["lam"]
        hx = lambda x: lam * (x - c)  # noqa: E731
        loss = lambda x: 0.5 * jnp.sum(lam * (x - c) ** 2)  # noqa: E731

    # diagonal model: the loss's time average from per-mode sums of (x - c)^2 (no reduction over modes per step)
    mode_loss = not full

    # running sums over the kept steps; only those the outputs need are carried
    sums = {"m2": lambda x, z, plain: x * x}
    if not mode_loss:
        sums["loss"] = lambda x, z, plain: loss(x)
    elif centered:
        sums["dev"] = lambda x, z, plain: (x - c) ** 2
    if step_stat:
        sums["step"] = lambda x, z, plain: plain * plain
    if ema:
        sums["ema"] = lambda x, z, plain: z * z
    if window_mean:
        sums["x"] = lambda x, z, plain: x

    merge_w = point["merge_w"] if merge else None
    bound, step_code = _limits(dtype)

    d = x0.shape[-1]
    rows = jnp.arange(sub, dtype=T.dtype)[:, None] * d + cols  # a sub-block's counters, from its first step's

    def outer(j, carry):
        x, state, z, key, acc, peak, rec = carry
        key, k_mult, k_add = jax.random.split(key, 3)

        def part(p, inner):
            # steps p*sub .. of the block: their noise computed at once (sub x d values per noise, a cache's worth
            # for the chunk), then stepped through
            first = p * sub
            xi = [noise_at(k, first * d + rows, law, df, size, dtype) for k, on in ((k_mult, multiplicative),
                                                                              (k_add, additive)) if on]

            def one(i, inner):
                x, state, z, acc, peak = inner
                k = j * block + first + i
                # one value of the shared table per step (a per-run copy of the row would be read at a stride of T)
                eta = etas[sched, k]
                g = hx(x)
                if multiplicative:
                    g = g * (1 + sm * isb * xi[0][i])
                if additive:
                    g = g + sa * isb * xi[-1][i]
                plain = x - eta * g
                x, state = opt.step(method, g, state, x, eta, hyper)
                if ema:
                    z = (1 - alpha) * z + alpha * x
                keep = k + 1 > burn
                acc = {name: acc[name] + jnp.where(keep, term(x, z, plain), 0.0) for name, term in sums.items()} | (
                    {"merge": acc["merge"] + merge_w[:, k][:, None] * x[None, :]} if merge else {})
                a = jnp.abs(x)
                code = (T + 1 - k).astype(x.dtype) * step_code  # step k + 1
                return x, state, z, acc, jnp.maximum(peak, jnp.where(a <= bound, a, code))

            return lax.fori_loop(jnp.zeros_like(block), jnp.minimum(sub, block - first), one, inner)

        n_parts = (block + sub - 1) // sub
        x, state, z, acc, peak = lax.fori_loop(jnp.zeros_like(block), n_parts, part, (x, state, z, acc, peak))
        curve, path, path_ema = rec
        rec = (curve.at[j].set(loss(x)), path.at[j].set(x), path_ema.at[j].set(z))
        return x, state, z, key, acc, peak, rec

    zero = jnp.zeros((), x0.dtype)
    acc0 = {name: zero if name == "loss" else jnp.zeros_like(x0) for name in sums} | (
        {"merge": jnp.zeros((merge,) + x0.shape, x0.dtype)} if merge else {})
    rec0 = (jnp.zeros((n_rec_pad,), x0.dtype), jnp.zeros((n_rec_pad,) + x0.shape, x0.dtype),
            jnp.zeros((n_rec_pad,) + x0.shape, x0.dtype))
    init = (x0, opt.init(method, x0, hyper), x0, _run_key(point, impl), acc0, jnp.zeros_like(x0), rec0)
    x, _, z, _, acc, peak, (curve, path, path_ema) = lax.fori_loop(jnp.zeros_like(n_rec), n_rec, outer, init)
    top = jnp.max(peak)
    diverged = top > bound
    bad = jnp.where(diverged, T + 2 - (top / step_code).astype(jnp.int64), -1)
    n = T - burn
    if mode_loss:
        mean_loss = 0.5 * jnp.sum(lam * acc["dev" if centered else "m2"]) / n
    else:
        mean_loss = acc["loss"] / n
    # without EMA z_k = x_0 at every step, exactly what the recursion with alpha = 0 gives
    out = {"curve": curve, "path": path, "path_ema": path_ema, "mean_loss": mean_loss, "mode_m2": acc["m2"] / n,
           "mode_m2_ema": acc["ema"] / n if ema else x0 * x0, "max_abs": jnp.where(diverged, jnp.inf, top),
           "final_x": x, "final_ema": z, "diverged": diverged, "diverged_step": bad}
    if step_stat:
        out["mode_m2_step"] = acc["step"] / n
    if window_mean:
        out["mean_x"] = acc["x"] / n
    if merge:
        out["merged_x"] = acc["merge"]
    return out


def _per_config(name: str, value, low=None, high=None, high_open=False) -> np.ndarray:
    return V.array(name, value, ndim=(0, 1), low=low, high=high, high_open=high_open).reshape(-1)


def _schedules(eta, T: int) -> np.ndarray:
    """``eta`` as a ``(S, T)`` array: a scalar (constant), one schedule (T,) or one per configuration (G, T)."""
    e = V.array("eta", eta, ndim=(0, 1, 2), low=0.0)
    # a schedule may rest at 0 for some steps (warm-up, a pause), but one that never moves is a caller's mistake
    flat = e.reshape(-1, e.shape[-1]) if e.ndim else e.reshape(1, 1)
    if np.any(np.all(flat == 0, axis=-1)):
        raise ValueError(f"eta: expected a step size > 0 (or a schedule with some step > 0), got an all-zero "
                         f"schedule in {eta!r}")
    if e.ndim == 0:
        return np.full((1, T), float(e))
    e = e.reshape(-1, e.shape[-1])
    if e.shape[1] != T:
        raise ValueError(f"eta: a schedule needs one step size per step (T = {T}), got length {e.shape[1]}")
    return e



def broadcast_configurations(lengths: dict, params: dict, methods: list) -> tuple[int, dict, list]:
    r"""The number of configurations :math:`G` and every per-configuration setting broadcast to length :math:`G`.

    ``lengths`` maps each setting's name to its length (1 = shared by every configuration); a length
    other than 1 or :math:`G` raises ``ValueError`` naming that setting and the longest one.
    ``params`` (1-D arrays) are broadcast to :math:`(G,)` and a single method is repeated (``methods``: a list of
    one name or of :math:`G`). Shared by the simulators that take lists of configurations.
    """
    for name, value, kind in (("lengths", lengths, dict), ("params", params, dict), ("methods", methods, list)):
        if not isinstance(value, kind) or not value:
            raise TypeError(f"{name}: expected a non-empty {kind.__name__}, got {type(value).__name__} {value!r:.60}")
    for name, n in lengths.items():
        V.integer(f"lengths[{name!r}]", n, low=1)
    G = max(lengths.values())
    longest = max(lengths, key=lengths.get)
    for name, n in lengths.items():
        if n not in (1, G):
            raise ValueError(f"{name}: expected a scalar or one value per configuration (length {G}, as {longest}), "
                             f"got length {n}")
    return G, {k: np.broadcast_to(v, (G,)) for k, v in params.items()}, (methods * G if len(methods) == 1 else methods)


def simulate(key: jax.Array, *, T: int, eta, x0, lam=None, H=None, center=None, method="sgd", momentum=0.0, b2=0.99, wd=0.0,
             coupled_wd=0.0, sigma_a=0.0, sigma_m=0.0, batch_size=1, ema=0.0, burn: int = 0, n_chains: int = 1,
             n_rec: int = 1, law: str = "gaussian", df: int = 0, paired: bool = False,
             chunk_size: int = CHUNK, window_mean: bool = False, merge_weights=None, max_bytes=None,
             dtype=None) -> dict:
    r"""Run ``n_chains`` independent runs of every configuration in a list of :math:`G` configurations.

    Problem: ``lam`` (curvatures, ``(d,)`` or ``(G, d)``) or ``H`` (one ``(d, d)`` symmetric matrix).
    ``center`` (the minimizer, default 0): ``(d,)`` or ``(G, d)``.
    ``x0``: ``(d,)``, ``(G, d)`` or ``(G, n_chains, d)``. ``eta``: a scalar, one schedule ``(T,)`` or one per
    configuration ``(G, T)``. ``sigma_a``: a scalar, ``(d,)`` or ``(G, d)``. Scalars ``momentum, b2, wd,
    coupled_wd, sigma_m, batch_size, ema`` may each be a 1-D sequence of length :math:`G`; ``method`` one
    name of :data:`sims.optimizers.METHODS` or one per configuration (runs are grouped by method, one
    compiled kernel each). Run :math:`j` of configuration :math:`g` uses ``fold_in(key, g n + j)``, or
    ``fold_in(key, j)`` with ``paired=True`` (common random numbers across configurations).

    ``window_mean``: also return ``mean_x``, the average of the iterates after ``burn`` (the uniform merge of the last
    :math:`T - b` checkpoints); off by default, since it costs a sum per coordinate and step.

    ``merge_weights``: weights on the iterates :math:`x_1..x_T` (the checkpoints after every update), one merge ``(T,)``
    or :math:`M` merges ``(M, T)``, each row non-negative and summing to 1; returns ``merged_x``, the merged models
    :math:`\sum_k w_kx_k` of every run, ``(G, n_chains, d)`` for one merge or ``(G, n_chains, M, d)``. A checkpoint not
    merged has weight 0 (:func:`theory.noisy_quadratic.merge_weights_for_schedule` gives the weights that emulate a
    schedule). Off by default (``None``): the runs and their other outputs are then those of a call without it, bit for
    bit (the weights add a statistic, never a step).

    Returns arrays with leading shape ``(G, n_chains)``: see :func:`_nqm_run` (``mode_m2_step`` only when some
    configuration runs ``nesterov``, ``mean_x`` only with ``window_mean``, ``merged_x`` only with
    ``merge_weights``). ``max_bytes``: the allocation limit (:func:`theory.validate.byte_limit`) for the records
    (``path`` and ``path_ema`` hold ``n_rec`` iterates per run).

    ``dtype``: ``None`` or ``"float64"`` (the default arithmetic), or ``"float32"``
    (:func:`theory.validate.float_dtype`): then the state, the optimizer's buffers, every parameter and schedule, the
    noise (:func:`noise_at`, coupled to the float64 draw of the same key) and the running sums are float32, and so are
    the returned floats. Sound for sweeps and Monte Carlo statistics: a step's round-off is :math:`2^{-24}` relative,
    the iterates of a contracting run stay within about :math:`T\,2^{-24}` (relative) of the float64 ones, and a
    time average over :math:`T` steps adds at most :math:`T\,2^{-24}` (typically :math:`\sqrt T\,2^{-24}`), far below a
    Monte Carlo standard error. Not sound where a result needs more than ~7 digits: losses that converge below
    :math:`10^{-7}` of their start, or differences of nearly equal losses (schedule comparisons on common random
    numbers). Divergence: a run past :data:`BOUND32` (1e15; float32 squares overflow beyond ~1e19) is flagged, and
    :math:`T` is at most :math:`2^{24} - 1` (the first bad step is read back from an exact float32 integer).
    """
    V.key("key", key)
    if str(jax.random.key_impl(key)) != "threefry2x32":
        raise ValueError(f"key: expected a threefry2x32 key (jax.random.key(seed)), whose draws hash counters one "
                         f"value at a time; got a {jax.random.key_impl(key)} key")
    dt = V.float_dtype("dtype", dtype)
    T = V.integer("T", T, low=1)
    if dt == np.float32 and T > _T_MAX32:
        raise ValueError(f"T, dtype: float32 runs record their first bad step as an exact float32 integer, so T is at "
                         f"most {_T_MAX32}; got T = {T} with dtype float32 (use dtype='float64')")
    n_rec = V.integer("n_rec", n_rec, low=1)
    if T % n_rec:
        raise ValueError(f"n_rec: expected a divisor of T = {T}, got {n_rec}")
    burn = V.integer("burn", burn, low=0, high=T - 1)
    n_chains = V.integer("n_chains", n_chains, low=1)
    chunk_size = V.integer("chunk_size", chunk_size, low=1)
    df = _law(law, df)
    if not isinstance(paired, bool):
        raise TypeError(f"paired: expected a bool, got {type(paired).__name__}")
    if not isinstance(window_mean, bool):
        raise TypeError(f"window_mean: expected a bool, got {type(window_mean).__name__}")
    if (lam is None) == (H is None):
        raise ValueError("lam, H: give exactly one of lam (diagonal curvatures) or H (a full matrix)")
    methods = [method] if isinstance(method, str) else list(method) if isinstance(method, (list, tuple)) else None
    if not methods:
        raise TypeError(f"method: expected one of {opt.METHODS} or a non-empty list of them, got {method!r}")
    for m in methods:
        V.choice("method", m, opt.METHODS)
    etas = _schedules(eta, T)
    merge_w = None if merge_weights is None else _merge_weights(merge_weights, T)
    params = {"momentum": _per_config("momentum", momentum, 0.0, 1.0, True), "b2": _per_config("b2", b2, 0.0, 1.0),
              "wd": _per_config("wd", wd, 0.0), "coupled_wd": _per_config("coupled_wd", coupled_wd, 0.0),
              "sigma_m": _per_config("sigma_m", sigma_m, 0.0), "batch_size": _per_config("batch_size", batch_size, 1.0),
              "ema": _per_config("ema", ema, 0.0, 1.0)}
    if not np.all(params["batch_size"] == np.round(params["batch_size"])):
        raise ValueError(f"batch_size: expected integers >= 1, got {batch_size!r}")
    lengths = {k: len(v) for k, v in params.items()} | {"method": len(methods), "eta": etas.shape[0]}
    if lam is not None:
        lam_a = V.array("lam", lam, ndim=(1, 2), low=0.0)
        if lam_a.ndim == 2:
            lengths["lam"] = lam_a.shape[0]
        d = lam_a.shape[-1]
    else:
        H_a = V.array("H", H, ndim=2)
        d = H_a.shape[0]
        if H_a.shape != (d, d) or not np.allclose(H_a, H_a.T, rtol=1e-12, atol=1e-14):
            raise ValueError(f"H: expected a symmetric square matrix, got shape {H_a.shape}")
    ctr = V.array("center", np.zeros(d) if center is None else center, ndim=(1, 2))
    if ctr.ndim == 2:
        lengths["center"] = ctr.shape[0]
    if ctr.shape[-1] != d:
        raise ValueError(f"center: expected {d} coordinates (as the problem), got shape {ctr.shape}")
    sa = V.array("sigma_a", sigma_a, ndim=(0, 1, 2), low=0.0)
    if sa.ndim == 2:
        lengths["sigma_a"] = sa.shape[0]
    x0_a = V.array("x0", x0, ndim=(1, 2, 3))
    if x0_a.ndim >= 2:
        lengths["x0"] = x0_a.shape[0]
    G, params, methods = broadcast_configurations(lengths, params, methods)
    sched = np.arange(G) if etas.shape[0] == G and G > 1 else np.zeros(G, np.int64)
    if x0_a.shape[-1] != d:
        problem = (f"lam: shape {lam_a.shape}, curvatures (d,) or one row per configuration (G, d)" if lam is not None
                   else f"H: shape {H_a.shape}")
        raise ValueError(f"x0: expected starts with {d} coordinates, as the problem ({problem}), got shape {x0_a.shape}")
    if x0_a.ndim == 1:
        x0_a = np.broadcast_to(x0_a, (G, n_chains, d))
    elif x0_a.ndim == 2:
        x0_a = np.broadcast_to(x0_a[:, None, :], (G, n_chains, x0_a.shape[-1])) if x0_a.shape[0] in (1, G) else x0_a
        x0_a = np.broadcast_to(x0_a, (G, n_chains, x0_a.shape[-1]))
    if x0_a.shape != (G, n_chains, d):
        raise ValueError(f"x0: expected starts of shape ({d},), ({G}, {d}) or ({G}, {n_chains}, {d}), got {x0_a.shape}")
    if sa.ndim == 1 and sa.shape[0] != d:
        raise ValueError(f"sigma_a: expected a scalar, ({d},) or ({G}, {d}), got shape {sa.shape}")
    # given per configuration, or once for all (then passed once, see below): decided by shape, never by value, so
    # new data of the same shapes reuses the compiled sweep
    per_config = {"lam": lam is not None and lam_a.ndim == 2, "center": ctr.ndim == 2, "sigma_a": sa.ndim == 2}
    sa = np.broadcast_to(sa if sa.ndim else np.full(d, float(sa)), (G, d))
    # per run: curve, path and path_ema (n_rec records of 1, d and d values, padded to a power of two) and ~10
    # d-vectors of statistics, on the device and again on the host
    n_merge = 0 if merge_w is None else merge_w.shape[0]
    n_rec_pad = padded_length(n_rec, least=_MIN_REC_PAD)
    # steps whose noise is hashed at once: about _SUB values per run (one step of a wide model, a few dozen of a
    # narrow one: measured fastest); cut to the block's length where the values hashed past a block's end would
    # cost more than a compiled kernel (short test runs keep one kernel for every block length)
    sub = 1 << (max(1, _SUB // d).bit_length() - 1)
    block = T // n_rec
    if G * n_chains * n_rec * (-(-block // sub) * sub - block) * d > _SPLIT_VALUES // 8:
        sub = min(sub, padded_length(block))
    V.check_bytes({"n_chains": n_chains, "n_rec": n_rec, "configurations": G, "d": d, "merges": n_merge},
                  2 * 8 * G * n_chains * (n_rec_pad * (2 * d + 1) + (10 + n_merge) * d),
                  what="the per-run records", max_bytes=max_bytes)
    # the horizon is a loop bound: schedules (and merge weights) padded to a power-of-two length, with rows for a
    # power-of-two number of schedules, keep the compiled shapes few (the padding is never read)
    T_pad = padded_length(T, least=_MIN_T_PAD)
    etas = np.pad(etas, ((0, padded_length(etas.shape[0], least=4) - etas.shape[0]), (0, T_pad - T)))
    if merge_w is not None:
        merge_w = np.pad(merge_w, ((0, 0), (0, T_pad - T)))

    index = np.arange(G * n_chains).reshape(G, n_chains) % (n_chains if paired else G * n_chains)
    data = np.asarray(jax.random.key_data(key))
    impl = str(jax.random.key_impl(key))
    out: dict[str, np.ndarray] = {}
    mult = params["sigma_m"] > 0
    add = np.any(sa > 0, axis=1)
    for (m, multiplicative, additive), idx in _groups(methods, mult, add, n_chains * T * d).items():
        idx = np.array(idx)
        n = len(idx) * n_chains
        rep = lambda v: np.repeat(v[idx], n_chains, axis=0)  # noqa: E731
        grid = {"key_data": np.broadcast_to(data, (n,) + data.shape), "key_index": index[idx].reshape(-1),
                "x0": x0_a[idx].reshape(-1, d), "sigma_m": rep(params["sigma_m"]),
                "inv_sqrt_b": rep(1.0 / np.sqrt(params["batch_size"])), "momentum": rep(params["momentum"]),
                "b2": rep(params["b2"]), "wd": rep(params["wd"]), "coupled_wd": rep(params["coupled_wd"]),
                "ema": rep(params["ema"]), "sched": rep(sched).astype(np.int64),
                "burn": np.full(n, burn, np.int64)}
        # an array given once for all configurations is passed once (replicated), not copied into every run
        shared = {"H": H_a} if lam is None else {}
        if merge_w is not None:
            shared["merge_w"] = merge_w
        for name, value in (("lam", lam_a if lam is not None else None), ("center", ctr), ("sigma_a", sa)):
            if value is None:
                continue
            if per_config[name]:
                grid[name] = rep(np.broadcast_to(value, (G, d)))
            else:
                shared[name] = np.broadcast_to(value, (G, d))[0]
        shared["T"], shared["n_rec"] = np.int64(T), np.int64(n_rec)
        static = dict(n_rec_pad=n_rec_pad, sub=sub if multiplicative or additive else 1, method=m, full=H is not None, additive=additive,
                      multiplicative=multiplicative, law=law, df=df, impl=impl, ema=bool(np.any(params["ema"] > 0)),
                      centered=bool(np.any(ctr != 0)), window_mean=window_mean, step_stat="nesterov" in methods,
                      merge=n_merge, dtype=dt.name)
        if dt != np.float64:
            # every float the kernel reads in the chosen precision (the validation above ran in float64)
            grid, shared = floats_as(grid, dt), floats_as(shared, dt)
        # pad each group to a power of two (at least 8 runs): sweeps of nearby sizes then share one compiled shape;
        # at most a cache's worth of state per step
        chunk = min(chunk_size, padded_length(n, least=8), max(8, 1 << max(0, (_CACHE_VALUES // d).bit_length() - 1)))
        res = run_grid(_nqm_run, grid, etas.astype(dt, copy=False), shared, static=static, chunk_size=chunk, pad_to_chunk=True, desc=f"nqm {m}")
        for name, v in res.items():
            if name not in out:
                out[name] = np.empty((G, n_chains) + v.shape[1:], dtype=v.dtype)
            out[name][idx] = v.reshape((len(idx), n_chains) + v.shape[1:])
    for name in ("curve", "path", "path_ema"):
        out[name] = out[name][:, :, :n_rec]
    if merge_weights is not None and np.ndim(merge_weights) == 1:
        out["merged_x"] = out["merged_x"][:, :, 0]
    return out


# splitting a method's configurations by the noises they use drops the draws of the noise a part does not use, for
# one more compiled kernel: worth it from about this many values saved (a kernel compiles in ~1 CPU-s; a value costs
# ~10 CPU-ns to hash and map)
_SPLIT_VALUES = 2**26


def _groups(methods: list, mult: np.ndarray, add: np.ndarray, per_config: int) -> dict:
    r"""Configurations grouped into kernels: ``{(method, multiplicative, additive): indices}``.

    Configurations of one method share a kernel that draws every noise some of them use; where the draws that
    configurations without that noise would waste exceed :data:`_SPLIT_VALUES` (``per_config`` values per configuration
    and noise), the method's configurations are split by the noises they use. The runs are the same either way: a
    noise level 0 multiplies its noise by 0, and each noise has its own key.
    """
    out: dict[tuple, list[int]] = {}
    for m in dict.fromkeys(methods):
        idx = [g for g in range(len(methods)) if methods[g] == m]
        parts: dict[tuple, list[int]] = {}
        for g in idx:
            parts.setdefault((m, bool(mult[g]), bool(add[g])), []).append(g)
        joint = (m, bool(mult[idx].any()), bool(add[idx].any()))
        waste = sum(len(p) * ((joint[1] and not k[1]) + (joint[2] and not k[2])) for k, p in parts.items())
        if waste * per_config > _SPLIT_VALUES:
            out.update(parts)
        else:
            out[joint] = idx
    return out


def _merge_weights(weights, T: int) -> np.ndarray:
    """``weights`` as an ``(M, T)`` array of merges: rows of T non-negative weights summing to 1."""
    w = V.array("merge_weights", weights, ndim=(1, 2), low=0.0)
    w = w.reshape(-1, w.shape[-1])
    if w.shape[1] != T:
        raise ValueError(f"merge_weights: expected one weight per iterate x_1..x_T (T = {T}), got length {w.shape[1]}")
    # a merge is a convex combination; 1e-9 covers the rounding of a float sum of up to ~1e6 weights
    sums = w.sum(axis=1)
    if np.any(np.abs(sums - 1.0) > 1e-9):
        raise ValueError(f"merge_weights: expected each merge's weights to sum to 1, got sums {sums.tolist()!r:.120}")
    return w


class Summary(NamedTuple):
    """Mean and standard error over the finite runs, with the counts beside them."""

    mean: np.ndarray
    se: np.ndarray
    n: np.ndarray
    n_diverged: np.ndarray


def summarize(samples, diverged=None, axis: int = -1) -> Summary:
    r"""Mean and standard error :math:`s/\sqrt n` over independent runs (``axis``), finite runs only.

    A run counts as diverged where ``diverged`` is True or its sample is not finite; it is left out
    and counted in ``n_diverged``. Fewer than two finite runs give a NaN standard error.
    """
    x = V.array("samples", samples, finite=False)
    if x.ndim == 0:
        raise ValueError(f"samples: expected an array with a runs axis, got a scalar {float(x)!r}")
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis: expected an axis of an array with {x.ndim} dimension(s), got {axis!r}")
    ok = np.isfinite(x)
    if diverged is not None:
        flag = np.asarray(diverged)
        if flag.dtype != bool:
            raise TypeError(f"diverged: expected a boolean array, got dtype {flag.dtype}")
        try:
            ok &= ~np.broadcast_to(flag, x.shape)
        except ValueError:
            raise ValueError(f"samples, diverged: the flags' shape {flag.shape} does not broadcast to the samples' "
                             f"{x.shape}; expected one flag per sample") from None
    n = ok.sum(axis=axis)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(ok, x, 0.0).sum(axis=axis) / np.where(n > 0, n, np.nan)
        dev = np.where(ok, x - np.expand_dims(mean, axis), 0.0)
        se = np.sqrt((dev**2).sum(axis=axis) / np.where(n > 1, n - 1, np.nan) / n)
    return Summary(mean, se, n, x.shape[axis] - n)
