r"""Simulators for noise floors of SGD, signSGD, Signum, Lion and normalized SGD on quadratics.

Objective :math:`f(x) = \tfrac12\sum_i h_i x_i^2` in :math:`d \ge 1` dimensions (:math:`d = 1`,
:math:`h = a` is the scalar :math:`a x^2/2`), stochastic gradient with mixed noise

.. math:: g = h \odot x \odot (1 + \sigma_m \xi_1) + \sigma_a \xi_2,

:math:`\xi_{1,2}` i.i.d. per coordinate, Gaussian, Student-t or uniform on :math:`[-1, 1]` (unit
scale). Momentum buffer :math:`m \leftarrow \beta m + (1-\beta) g` (:math:`\beta = 0`: plain), update
:math:`x \leftarrow x - \eta_k\,D(m)` with :math:`D(m) = m` (SGD), :math:`\mathrm{sign}(m)`
(signSGD; Signum when :math:`\beta > 0`) or :math:`m/\|m\|` (normalized SGD); Lion steps along
:math:`\mathrm{sign}(\beta m + (1-\beta) g)` and moves its buffer with :math:`\beta_2`. Schedule:
:math:`\eta_k = \eta\min\{1, (T-k)/(\phi T)\}` -- constant for :math:`\phi = 0`, WSD with cooldown
fraction :math:`\phi`, linear decay for :math:`\phi = 1` (:func:`schedule`, :func:`schedules_host`).

**Two engines.** This is the one-mode-per-coordinate noisy quadratic at batch size 1, so every
chain that needs noise *values* -- SGD (with momentum: heavy ball at the step :math:`\eta(1-\beta)`),
signSGD/Signum with additive noise or momentum, normalized SGD, Lion -- runs on the shared
simulator :func:`sims.nqm.simulate` with the update rules of :mod:`sims.optimizers`. signSGD under
purely multiplicative noise and without momentum needs no noise values at all: a step is
:math:`-\eta_k\,\mathrm{sign}(x)\,s` with :math:`s = -1` with probability :math:`p = F_\xi(-1/\sigma)`,
exact in law for every noise law, drawn by comparing counter-based 32-bit words (:func:`words`)
with :math:`\lfloor p\,2^{32}\rfloor` in this module's kernel :func:`chain_run` (one key split per
block of :data:`BLOCK` steps). Grids go through :func:`sims.sweep.run_grid`.

**Divergence is data.** A run whose state becomes non-finite or exceeds :data:`BOUND` in absolute
value is flagged ``diverged`` and ``diverged_step`` holds the first step :math:`k \ge 1` at which
:math:`x_k` was bad (``-1`` for finite runs). :func:`summarize` (the shared one of :mod:`sims.nqm`)
averages over finite runs only and reports the number of diverged runs beside the mean.

The lattice :math:`c + \eta\mathbb Z` of signSGD is fragile in floating point (drift, and
``sign(0) = 0`` absorbing at :math:`c = 0`), so constants are estimated with the integer ladder
(:func:`ladder`): :math:`x = \eta(n + \theta)` with integer :math:`n`.

Importing :mod:`sims` enables float64; :func:`simulate` also runs in float32 (its ``dtype``), the ladder does not.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from scipy import special

import sims  # noqa: F401  (float64)
from sims import nqm
from sims.nqm import Summary, summarize  # noqa: F401  (the shared statistics, re-exported)
from sims.sweep import floats_as, run_grid
from theory import validate as V

__all__ = [
    "METHODS", "LAWS", "BOUND", "CHUNK", "BLOCK", "block_seed", "words", "schedule", "schedules_host",
    "away_probability", "away_probability_host", "threshold", "flips", "is_bernoulli", "chain_run", "simulate",
    "ladder_run", "ladder", "Summary", "summarize",
]

METHODS = ("sgd", "sign", "normalized", "lion")
LAWS = ("gaussian", "student", "uniform")
BOUND = 1e150  # |x| beyond this counts as diverged (squares would overflow float64)
CHUNK = 1024  # default chunk: every sweep is padded to it, so each static setup compiles once
BLOCK = 256  # steps per noise block (one key split per block)


# ----------------------------------------------------------------------------- random numbers
_MIX = (np.uint32(0x7FEB352D), np.uint32(0x846CA68B))


def _mix32(x: jax.Array) -> jax.Array:
    """A bijective avalanche map of 32-bit words: xor-shift, multiply by an odd constant, twice, xor-shift."""
    x = x ^ (x >> 16)
    x = x * _MIX[0]
    x = x ^ (x >> 15)
    x = x * _MIX[1]
    return x ^ (x >> 16)


def block_seed(key: jax.Array) -> jax.Array:
    """The two 32-bit seeds of one block of steps (one threefry call per block)."""
    return jax.random.bits(key, (2,), jnp.uint32)


def words(seed: jax.Array, counter) -> jax.Array:
    r"""Uniform 32-bit words at integer ``counter`` values: :math:`M(c\,k_1 + s_0)`, :math:`k_1 = s_1 \,|\, 1`.

    ``seed`` = :math:`(s_0, s_1)` from :func:`block_seed`; :math:`M` is the bijective mixer
    :func:`_mix32`. Within a block the inputs form an arithmetic progression with a random odd
    stride, so distinct counters give distinct words; two blocks (or chains) have different strides
    and offsets, so their inputs coincide only at isolated counters, never along shifted runs. A
    counter-based generator: a word costs a few integer operations computed where it is used
    (inside the step), so no block of noise is stored, read back or transposed; one key split per
    block keeps chains, blocks and paired runs on the typed-key streams.
    """
    c = jnp.asarray(counter).astype(jnp.uint32)
    return _mix32(c * (seed[1] | np.uint32(1)) + seed[0])


def away_probability(sigma, law: str, df: float):
    r""":math:`p = F_\xi(-1/\sigma)`, the probability that :math:`1 + \sigma\xi < 0` (traceable; ``sigma >= 0``).

    Gaussian :math:`\Phi(-1/\sigma)`; Student-t with any real :math:`\nu > 0`,
    :math:`\tfrac12 I_{\nu/(\nu + t^2)}(\nu/2, \tfrac12)` at :math:`t = 1/\sigma` (regularized incomplete
    beta); uniform on :math:`[-1, 1]`, :math:`\max(0, (1 - 1/\sigma)/2)`. :math:`p = 0` at :math:`\sigma = 0`.
    """
    V.choice("law", law, LAWS)  # static: validated even when sigma is traced
    if law == "student":
        V.real("df", df, low=0.0, low_open=True)
    t = 1.0 / jnp.where(sigma > 0, sigma, 1.0)
    if law == "gaussian":
        p = jax.scipy.special.ndtr(-t)
    elif law == "student":
        p = 0.5 * jax.scipy.special.betainc(df / 2.0, 0.5, df / (df + t * t))
    else:
        p = jnp.maximum(0.0, (1.0 - t) / 2.0)
    return jnp.where(sigma > 0, p, 0.0)


def away_probability_host(sigma, law: str, df: float) -> np.ndarray:
    """:func:`away_probability` in NumPy/SciPy, for arrays of ``sigma`` on the host (sweeps pass it as data)."""
    sigma = V.array("sigma", sigma, ndim=(0, 1), low=0.0)
    law = V.choice("law", law, LAWS)
    if law == "student":
        df = V.real("df", df, low=0.0, low_open=True)
    t = 1.0 / np.where(sigma > 0, sigma, 1.0)
    if law == "gaussian":
        p = special.ndtr(-t)
    elif law == "student":
        p = special.stdtr(df, -t)
    else:
        p = np.maximum(0.0, (1.0 - t) / 2.0)
    return np.where(sigma > 0, p, 0.0)


def threshold(p) -> jax.Array:
    r"""The 32-bit threshold :math:`\lfloor p\,2^{32}\rfloor` of a Bernoulli(:math:`p`) drawn as ``word < threshold``.

    The drawn law is Bernoulli(:math:`\lfloor p 2^{32}\rfloor/2^{32}`), within :math:`2^{-32}` of :math:`p`
    (``p`` is clipped to :math:`[0, 1/2]`, the range of :func:`away_probability`).
    """
    return jnp.floor(jnp.clip(p, 0.0, 0.5) * 2.0**32).astype(jnp.uint32)


def flips(seed: jax.Array, counter, thresh, dtype=None) -> jax.Array:
    """Signs: -1.0 where the word at ``counter`` is below ``thresh`` (a 32-bit integer compare), else +1.0; of
    ``dtype`` (:func:`theory.validate.float_dtype`: float64 by default, or float32)."""
    one = V.float_dtype("dtype", dtype).type(1.0)  # typed: Python floats would make the select float64 under x64
    return jnp.where(words(seed, counter) < thresh, -one, one)


def _law(law, df, integer_df: bool) -> float:
    """The noise law's ``df``: Student-t needs ``df > 0`` (an integer in [1, 64] where normals are summed)."""
    V.choice("law", law, LAWS)
    if law != "student":
        if V.real("df", df, low=0.0) != 0:  # never NaN, a string or a bool either
            raise ValueError(f"df: only the Student-t law takes degrees of freedom; expected 0 for law {law!r}, got {df!r}")
        return 0
    if integer_df:
        return V.integer("df", df, low=1, high=64)
    if isinstance(df, (int, np.integer)) and not isinstance(df, bool):
        return V.integer("df", df, low=1)
    return V.real("df", df, low=0.0, low_open=True)


def _key_grid(key: jax.Array, index: np.ndarray) -> dict:
    """Grid entries from which each run derives its own key, ``fold_in(key, index)``, inside the kernel.

    Only NumPy arrays go into the grid (the base key's raw data repeated, and the run's index), so
    building and slicing the grid compiles nothing.
    """
    data = np.asarray(jax.random.key_data(key))
    return {"key_data": np.broadcast_to(data, (len(index),) + data.shape), "key_index": np.asarray(index, np.int64)}


def _run_key(point: dict, impl: str) -> jax.Array:
    """The key of one run: ``fold_in`` of the base key (rebuilt from its data) with the run's index."""
    return jax.random.fold_in(jax.random.wrap_key_data(point["key_data"], impl=impl), point["key_index"])


def _sweep(fn, grid: dict, static: dict, chunk_size: int, desc: str, *args) -> dict:
    """``run_grid`` on a grid padded in NumPy to a whole number of chunks (and trimmed back).

    Every chunk then has the compiled shape, so neither the padding nor the trimming of a partial
    chunk dispatches (and compiles) eager JAX operations; padded runs repeat the last point.
    """
    n = len(next(iter(grid.values())))
    size = chunk_size * -(-n // chunk_size)
    padded = {k: np.concatenate([v, np.repeat(v[-1:], size - n, axis=0)]) if size > n else v for k, v in grid.items()}
    out = run_grid(fn, padded, *args, static=static, chunk_size=chunk_size, pad_to_chunk=True, desc=desc)
    return {k: v[:n] for k, v in out.items()}


def _point_and_burn(point, burn, needed: tuple[str, ...], either: tuple[str, ...]) -> None:
    """Refuse a per-run ``point`` that is not a dict holding ``needed`` and one of ``either``, and a non-integer ``burn``
    (checked on its dtype, so a traced ``burn`` passes)."""
    if not isinstance(point, dict):
        raise TypeError(f"point: expected a dict of per-run data, got {type(point).__name__} {point!r}")
    missing = [k for k in needed if k not in point] + ([either[0]] if not any(k in point for k in either) else [])
    if missing:
        raise ValueError(f"point: missing {missing} (expected keys {list(needed)} and one of {list(either)})")
    if burn is None or isinstance(burn, (str, bytes, bool, np.bool_)) or not jnp.issubdtype(jnp.result_type(burn),
                                                                                          jnp.integer):
        raise TypeError(f"burn: expected an integer number of burn-in steps, got {type(burn).__name__} {burn!r}")
    if isinstance(burn, (int, np.integer)):  # a concrete Python int beyond int64 would fail inside jit, unnamed
        V.integer("burn", burn)


def _static(T, n_rec, law, df, integer_df: bool = True) -> tuple[int, int, str, float]:
    """Validate the static configuration shared by the per-run functions."""
    T = V.integer("T", T, low=1)
    n_rec = V.integer("n_rec", n_rec, low=1)
    if T % n_rec:
        raise ValueError(f"n_rec: expected a divisor of T={T}, got {n_rec}")
    return T, n_rec, law, _law(law, df, integer_df)


def schedule(k, T: int, eta, cooldown) -> np.ndarray:
    r""":math:`\eta_k = \eta\min\{1, (T-k)/(\phi T)\}` at the step indices ``k`` (:math:`\phi` = ``cooldown``; :math:`\phi = 0`: constant).

    On the host (NumPy): ``k`` integers in :math:`[0, T)` (a scalar or an array), ``eta > 0``,
    ``cooldown`` in :math:`[0, 1]`. The kernel :func:`chain_run` evaluates the same formula inside its scan.
    """
    T = V.integer("T", T, low=1)
    k_raw = np.asarray(k) if not isinstance(k, (str, bytes)) and k is not None else k
    if not isinstance(k_raw, np.ndarray) or k_raw.dtype.kind not in "iu":
        raise TypeError(f"k: expected integer step indices, got {type(k).__name__} {k!r}")
    k_a = V.array("k", k_raw, ndim=(0, 1), low=0.0, high=T, high_open=True)
    eta = V.real("eta", eta, low=0.0, low_open=True)
    cooldown = V.real("cooldown", cooldown, low=0.0, high=1.0)
    if cooldown == 0:
        return np.full(k_a.shape, eta)
    return eta * np.clip((T - k_a) / (cooldown * T), 0.0, 1.0)


def _loss(x, h):
    return 0.5 * jnp.sum(h * x * x)


def _is_bad(x):
    # float32 has its own bound (sims.nqm.BOUND32: BOUND itself is infinite in float32)
    return ~jnp.all(jnp.isfinite(x)) | (jnp.max(jnp.abs(x)) > nqm.BOUNDS[x.dtype.name])


def _bookkeeping(state, x, h, k, add, rec, idx, check: bool):
    """Cesàro sum (if ``add``), the record of f at step k+1 (if ``rec``, in slot ``idx``) and the first bad step.

    ``add``, ``rec`` and ``idx`` depend on the step index and the sweep's shared burn-in only, the
    same for every run of a sweep: under ``vmap`` each ``lax.cond`` stays a branch, so neither f
    nor the record costs anything on the steps that do not need them. ``check``: look for a bad
    state at this step (static).
    """
    acc, curve, bad_step = state
    acc = lax.cond(add, lambda a: a + _loss(x, h), lambda a: a, acc)
    curve = lax.cond(rec, lambda c: lax.dynamic_update_index_in_dim(c, _loss(x, h), idx, 0), lambda c: c, curve)
    if check:
        bad_step = jnp.where((bad_step < 0) & _is_bad(x), k + 1, bad_step)
    return acc, curve, bad_step


def is_bernoulli(method: str, additive: bool, momentum: bool) -> bool:
    r"""Whether a chain's sign steps are exact Bernoulli draws: signSGD without momentum and without additive noise.

    Then :math:`\mathrm{sign}(g_i) = \mathrm{sign}(x_i)\,\mathrm{sign}(1 + \sigma\xi_i)` and the second factor is
    :math:`-1` with probability :math:`p = F_\xi(-1/\sigma)`, independently per coordinate and step, for
    any noise law: only :math:`p` enters, so any real :math:`\nu` costs nothing.
    """
    V.choice("method", method, METHODS)
    for name, flag in (("additive", additive), ("momentum", momentum)):
        if not isinstance(flag, (bool, np.bool_)):
            raise TypeError(f"{name}: expected a bool, got {type(flag).__name__} {flag!r}")
    return method == "sign" and not additive and not momentum


# ----------------------------------------------------------------------------- Bernoulli sign chains
def chain_run(point: dict, burn, *, T: int, n_rec: int, law: str = "gaussian", df: float = 0,
              impl: str = "threefry2x32", block: int = BLOCK) -> dict:
    r"""One signSGD chain of :math:`T` steps under multiplicative noise, without momentum (pure; mapped by :func:`simulate`).

    Every sign step is an exact Bernoulli draw (:func:`is_bernoulli`): :math:`x \leftarrow x - \eta_k\,\mathrm{sign}(x)\,s`
    per coordinate, :math:`s = -1` with probability :math:`p` (:func:`away_probability`; 32-bit integer
    compares of counter-based words, :func:`flips`), one key split per block of ``block`` steps.
    ``point`` keys: ``key_data`` and ``key_index`` (the run's key is
    ``fold_in(wrap_key_data(key_data, impl), key_index)``), ``x0`` and ``h`` (shape ``(d,)``), scalars
    ``eta``, ``cooldown`` and either ``p_away`` (the away probability itself, as :func:`simulate` passes
    it: one compiled kernel for every law), ``thresh`` (its 32-bit threshold :func:`threshold`, computed on the host:
    :func:`simulate` passes it for float32 chains, whose float32 :math:`p` would move it by ~:math:`2^8`) or
    ``sigma_m`` (then :math:`p = F_\xi(-1/\sigma_m)` from the static ``law`` and any real ``df``). The chain computes
    in the dtype of ``x0`` (float64 or float32; ``h``, ``eta`` and ``cooldown`` of the same dtype). ``burn`` (an integer in :math:`[0, T)`) is shared by every run of
    a sweep (an unmapped argument: the Cesàro weight of a step is one scalar for the whole batch).
    Schedule: :math:`\eta_k = \eta\min\{1, (T-k)/(\phi T)\}` (:func:`schedule`).

    Returns the Cesàro average :math:`\frac{1}{T-b}\sum_{b < k \le T} f(x_k)` (``mean_f``), the final
    :math:`f(x_T)` (``final_f``), :math:`f` at ``n_rec`` equally spaced times (``curve``; the last is
    :math:`x_T`), ``diverged`` and ``diverged_step``. A sign step moves each coordinate by :math:`\eta_k`,
    so a chain can only leave :data:`BOUND` if :math:`|x_0| + \sum_k \eta_k` does (which :func:`simulate`
    refuses); the state is checked once per block and ``diverged_step`` is the end of the block in
    which it was found bad. The other chains (momentum, additive noise, normalized, Lion) run on the
    shared noisy quadratic, :func:`sims.nqm.simulate`.
    """
    _point_and_burn(point, burn, ("key_data", "key_index", "x0", "h", "eta", "cooldown"),
                    ("p_away", "thresh", "sigma_m"))
    if "thresh" in point and "p_away" in point:
        raise ValueError("point: expected one of 'thresh' and 'p_away' (the same probability twice), got both")
    T, n_rec, law, df = _static(T, n_rec, law, df, integer_df=False)
    B = min(V.integer("block", block, low=1), T)
    n_blocks, every = -(-T // B), T // n_rec
    h, eta, cd, x0 = point["h"], point["eta"], point["cooldown"], point["x0"]
    if "thresh" in point:
        thresh = point["thresh"]
    else:
        thresh = threshold(point["p_away"] if "p_away" in point else away_probability(point["sigma_m"], law, df))
    d = x0.shape[0]
    coord = jnp.arange(d)

    def per_step(k):
        """Whether step k enters the Cesàro sum and the record, and its record slot (unbatched: branches)."""
        live = k < T
        return live & (k + 1 > burn), live & ((k + 1) % every == 0), jnp.clip((k + 1) // every - 1, 0, n_rec - 1)

    # schedule() with its division hoisted out of the loop: cd = 0 gives a huge slope, clipped to 1 (the floor is
    # float32's smallest normal in a float32 chain: 1e-300 would round to 0 there, and 0 * inf at k = T to NaN)
    slope = 1.0 / jnp.maximum(cd * T, np.finfo(np.float32).tiny if x0.dtype == jnp.float32 else 1e-300)

    def step(carry, k, seed):
        x, book = carry
        eta_k = eta * jnp.clip((T - k) * slope, 0.0, 1.0)  # 0 past T (a padded block): the state stays
        x = x - eta_k * jnp.sign(x) * flips(seed, (k % B) * d + coord, thresh, x0.dtype)
        return (x, _bookkeeping(book, x, h, k, *per_step(k), check=False)), None

    def outer(carry, j):
        key, state = carry
        key, sub = jax.random.split(key)
        seed = block_seed(sub)
        (x, (acc, curve, bad_step)), _ = lax.scan(lambda c, k: step(c, k, seed), state, j * B + jnp.arange(B))
        # a sign step moves each coordinate by eta_k: checked once per block (see the docstring)
        bad_step = jnp.where((bad_step < 0) & _is_bad(x), jnp.minimum((j + 1) * B, T), bad_step)
        return (key, (x, (acc, curve, bad_step))), None

    book = (jnp.zeros((), x0.dtype), jnp.zeros(n_rec, x0.dtype), jnp.array(-1, jnp.int64))
    (_, (_, (acc, curve, bad_step))), _ = lax.scan(outer, (_run_key(point, impl), (x0, book)), jnp.arange(n_blocks))
    return {"mean_f": acc / (T - burn), "final_f": curve[-1], "curve": curve, "diverged": bad_step >= 0,
            "diverged_step": bad_step}


def _per_config(name: str, value) -> np.ndarray:
    """A scalar or 1-D sequence (one value per configuration) as a float array; NaN-proof."""
    return V.array(name, value, ndim=(0, 1)).reshape(-1)


def simulate(key: jax.Array, *, eta, x0, h=1.0, method="sign", beta=0.0, beta2=0.99, sigma_m=0.0, sigma_a=0.0,
             cooldown=0.0, T: int, burn: int = 0, n_chains: int = 1, n_rec: int = 1, law: str = "gaussian",
             df: float = 0, paired: bool = False, chunk_size: int = CHUNK, max_bytes=None, dtype=None) -> dict:
    r"""Run ``n_chains`` independent chains for every configuration in a list of configurations.

    Scalar arguments ``eta, method, beta, beta2, sigma_m, sigma_a, cooldown`` may be 1-D sequences of one
    common length :math:`G` (one configuration each; scalars broadcast). ``x0`` is ``(d,)`` or
    ``(G, d)``, or ``(G, n_chains, d)`` for per-chain starts; ``h`` is a scalar, ``(d,)`` or ``(G, d)``.
    Chain :math:`j` of configuration :math:`g` runs on ``fold_in(key, g n + j)``; with ``paired=True``
    chain :math:`j` runs on ``fold_in(key, j)`` in every configuration
    (common random numbers: differences between configurations, e.g. schedules, then have a much
    smaller standard error, and a configuration's result does not depend on the others).
    Configurations are run in groups of equal ``(method, sigma_a > 0, beta > 0)``, one compiled
    kernel each (:func:`chain_run`); signSGD without momentum or additive noise draws its sign
    steps as Bernoulli variables (:func:`is_bernoulli`), so there any law and any real Student-t
    ``df > 0`` is allowed; elsewhere Student-t noise needs an integer ``df`` in [1, 64]. ``beta2`` is
    Lion's buffer momentum (``method="lion"``; ``beta`` is then its interpolation weight).

    Returns arrays with leading shape ``(G, n_chains)``: ``mean_f``, ``final_f``, ``curve``
    (``(..., n_rec)``), ``diverged`` (bool) and ``diverged_step`` (first bad step, -1 if none). ``max_bytes``: the
    allocation limit (:func:`theory.validate.byte_limit`) for the records of every chain and a chunk's noise block.

    ``dtype``: ``None``/``"float64"`` (the default) or ``"float32"`` (:func:`theory.validate.float_dtype`): the
    states, parameters, records and Cesàro sums in float32, and the returned floats too. The Bernoulli sign chains
    draw exactly the same signs in both (integer words against a threshold computed on the host in float64), and
    their iterate moves by exactly :math:`\pm\eta_k`, so a float32 chain stays on the float64 one's lattice point to
    a round-off of :math:`2^{-24}` per step (:math:`|x^{32}_k - x^{64}_k| \lesssim k\,2^{-24}\max|x|`) and its Cesàro
    mean within :math:`\sim 3T\,2^{-24}` relative: sound for the floors (Monte Carlo means whose standard errors are
    percents), not for a quantity read from the lattice's offset below :math:`10^{-7}` (the exact ladder
    :func:`ladder` stays float64). The float chains run in float32 on :func:`sims.nqm.simulate` (see there). A
    float32 sign chain must keep :math:`|x_0| + T\eta` below :data:`sims.nqm.BOUND32`.
    """
    V.key("key", key)
    dt = V.float_dtype("dtype", dtype)
    bound = nqm.BOUNDS[dt.name]
    T, n_rec, law, df = _static(T, n_rec, law, df, integer_df=False)
    n_chains = V.integer("n_chains", n_chains, low=1)
    burn = V.integer("burn", burn, low=0, high=T - 1)
    chunk_size = V.integer("chunk_size", chunk_size, low=1)
    if not isinstance(paired, bool):
        raise TypeError(f"paired: expected a bool, got {type(paired).__name__}")
    methods = [method] if isinstance(method, str) else list(method) if isinstance(method, (list, tuple)) else None
    if methods is None or not methods:
        raise TypeError(f"method: expected one of {METHODS} or a non-empty list of them, got {method!r}")
    for mth in methods:
        V.choice("method", mth, METHODS)
    params = {"eta": _per_config("eta", eta), "beta": _per_config("beta", beta), "beta2": _per_config("beta2", beta2),
              "sigma_m": _per_config("sigma_m", sigma_m), "sigma_a": _per_config("sigma_a", sigma_a),
              "cooldown": _per_config("cooldown", cooldown)}
    lengths = {name: len(v) for name, v in params.items()} | {"method": len(methods)}
    G, params, methods = nqm.broadcast_configurations(lengths, params, methods)
    if not np.all(params["eta"] > 0):
        raise ValueError(f"eta: expected step sizes > 0, got {eta!r}")
    if not np.all(params["sigma_m"] >= 0):
        raise ValueError(f"sigma_m: expected noise levels >= 0, got {sigma_m!r}")
    if not np.all(params["sigma_a"] >= 0):
        raise ValueError(f"sigma_a: expected noise levels >= 0, got {sigma_a!r}")
    if not np.all((params["beta"] >= 0) & (params["beta"] < 1)):
        raise ValueError(f"beta: expected momentum in [0, 1), got {beta!r}")
    if not np.all((params["beta2"] >= 0) & (params["beta2"] < 1)):
        raise ValueError(f"beta2: expected momentum in [0, 1), got {beta2!r}")
    if not np.all((params["cooldown"] >= 0) & (params["cooldown"] <= 1)):
        raise ValueError(f"cooldown: expected a fraction in [0, 1], got {cooldown!r}")
    x0 = V.array("x0", x0, ndim=(1, 2, 3))
    if x0.ndim == 1:
        x0 = np.broadcast_to(x0, (G, n_chains, x0.shape[0]))
    elif x0.ndim == 2 and x0.shape[0] == G:
        x0 = np.broadcast_to(x0[:, None, :], (G, n_chains, x0.shape[1]))
    if x0.shape[:2] != (G, n_chains):
        raise ValueError(f"x0: expected starts of shape (d,), ({G}, d) or ({G}, {n_chains}, d), got {x0.shape}")
    d = x0.shape[-1]
    # per chain: the n_rec-point curve and ~6 summaries, device and host; a chunk draws a block of noise at once
    # runs are padded to whole chunks of chunk_size (_sweep): a chunk far above the runs costs its full size
    V.check_bytes({"n_chains": n_chains, "n_rec": n_rec, "configurations": G, "d": d, "chunk_size": chunk_size},
                  2 * 8 * max(G * n_chains, chunk_size) * (n_rec + d + 6) + 3 * 8 * chunk_size * min(BLOCK, T) * d,
                  what="every chain's start, records and a chunk's noise block", max_bytes=max_bytes)
    h = V.array("h", h, ndim=(0, 1, 2), low=0.0, low_open=True)
    if h.ndim == 1 and h.shape != (d,):
        raise ValueError(f"x0, h: starts with {d} coordinate(s) (x0 of shape {x0.shape}) and {h.shape[0]} curvatures; "
                         "expected one curvature per coordinate")
    if h.ndim < 2:
        h = np.broadcast_to(h, (d,))
    if h.shape not in ((d,), (G, d)):
        raise ValueError(f"h: expected a scalar, shape ({d},) or ({G}, {d}), got {h.shape}")
    h = np.broadcast_to(h, (G, d))

    additive = params["sigma_a"] > 0
    momentum = params["beta"] > 0
    groups: dict[tuple[str, bool, bool], list[int]] = {}
    for g in range(G):
        groups.setdefault((methods[g], bool(additive[g]), bool(momentum[g])), []).append(g)
    floats = [key_ for key_ in groups if not is_bernoulli(*key_)]
    for key_, idx in groups.items():
        reach = np.max(np.abs(x0[idx])) + T * np.max(params["eta"][idx])
        if is_bernoulli(*key_) and not reach <= bound:
            raise ValueError(f"eta: a sign chain moves by eta per step, so |x0| + T eta = {reach:.3g} must stay below "
                             f"the divergence bound {bound:g} ({dt.name}); got eta up to "
                             f"{np.max(params['eta'][idx]):.3g}")
    if floats and law == "student":
        df = _law(law, df, integer_df=True)  # the float chains sum df squared normals
    if len(floats) < len(groups) and min(BLOCK, T) * d >= 2**32:  # the Bernoulli kernel's counters: one word each
        raise ValueError(f"x0: the noise counters of a block ({min(BLOCK, T)} steps x {d} dims) "
                         f"overflow 32 bits; expected fewer dimensions")
    index = np.arange(G * n_chains).reshape(G, n_chains) % (n_chains if paired else G * n_chains)
    impl = str(jax.random.key_impl(key))

    out: dict[str, np.ndarray] = {}

    def put(res: dict, idx: np.ndarray) -> None:
        """Store per-run results (leading axis: the runs of ``idx``, configuration-major) at their configurations."""
        for name, v in res.items():
            v = v.reshape((len(idx), n_chains) + v.shape[1:])
            if name not in out:
                out[name] = np.empty((G, n_chains) + v.shape[2:], dtype=v.dtype)
            out[name][idx] = v

    for (mth, add, mom), idx in groups.items():
        if not is_bernoulli(mth, add, mom):
            continue
        idx = np.array(idx)
        grid = {name: np.repeat(params[name][idx], n_chains) for name in ("eta", "cooldown")}
        grid.update(_key_grid(key, index[idx].reshape(-1)), x0=x0[idx].reshape(-1, d),
                    h=np.repeat(h[idx], n_chains, axis=0))
        # only p = F(-1/sigma) enters: pass it as data, so every law shares one compiled kernel
        grid["p_away"] = away_probability_host(np.repeat(params["sigma_m"][idx], n_chains), law, df)
        if dt != np.float64:
            # the threshold from the float64 p (the same signs as a float64 chain), the floats in float32
            p = grid.pop("p_away")
            grid = floats_as(grid, dt)
            grid["thresh"] = np.asarray(threshold(p))  # float64 arithmetic: p is a float64 array here
        static = dict(T=T, n_rec=n_rec, impl=impl, block=BLOCK)
        put(_sweep(chain_run, grid, static, chunk_size, f"sign_floor {mth}", np.int64(burn)), idx)
    if floats:
        idx = np.array(sorted(g for key_ in floats for g in groups[key_]))
        put(_nqm_chains(key, idx, methods, params, x0, h, T=T, n_rec=n_rec, burn=burn, n_chains=n_chains, law=law,
                        df=int(df) if law == "student" else 0, paired=paired, chunk_size=chunk_size, dtype=dt), idx)
    return out


# this topic's method (with its momentum beta) -> the shared optimizer that takes the same steps
_NQM_METHOD = {("sgd", False): "sgd", ("sgd", True): "heavy_ball", ("sign", False): "sign", ("sign", True): "signum",
               ("normalized", False): "normalized", ("normalized", True): "normalized", ("lion", False): "lion",
               ("lion", True): "lion"}


def schedules_host(T: int, eta, cooldown, *, max_bytes=None) -> np.ndarray:
    r"""The schedules :math:`\eta_{g,k} = \eta_g\min\{1, (T-k)/(\phi_g T)\}`, :math:`k = 0..T-1`, as a ``(G, T)`` NumPy array.

    One row of :func:`schedule` per configuration (``eta``, ``cooldown``: 1-D, one value each;
    :math:`\phi = 0` is a constant step): the step-size arrays the shared simulator takes. ``max_bytes``: the
    allocation limit (:func:`theory.validate.byte_limit`) for the ``(G, T)`` schedules.
    """
    T = V.integer("T", T, low=1)
    eta = V.array("eta", eta, ndim=1, low=0.0, low_open=True)
    V.check_bytes({"T": T, "eta": f"{eta.size} configurations"}, 3 * 8 * eta.size * T,
                  what="the (G, T) schedules and their step indices", max_bytes=max_bytes)
    cooldown = V.array("cooldown", cooldown, shape=eta.shape, low=0.0, high=1.0)
    return np.stack([schedule(np.arange(T), T, e, c) for e, c in zip(eta, cooldown)])


def _nqm_chains(key, idx, methods, params, x0, h, *, T, n_rec, burn, n_chains, law, df, paired, chunk_size,
                dtype=None) -> dict:
    r"""The float chains of configurations ``idx``, run on the shared noisy quadratic (:func:`sims.nqm.simulate`).

    The model is the same (:math:`g = h\odot x\odot(1+\sigma_m\xi_1) + \sigma_a\xi_2`, batch 1, noise law
    and Student-t sampler of :mod:`sims.nqm`); each method maps to the shared optimizer taking the
    same steps: SGD with momentum :math:`m \leftarrow \beta m + (1-\beta)g` is heavy ball
    :math:`m \leftarrow \beta m + g` at the step :math:`\eta(1-\beta)` (the buffers differ by the factor
    :math:`1-\beta`); signSGD with momentum is Signum; normalized SGD and Lion are themselves. Returns
    this module's outputs (``mean_f``, ``final_f``, ``curve``, ``diverged``, ``diverged_step``) for ``idx``.
    """
    beta = params["beta"][idx]
    names = [_NQM_METHOD[methods[g], bool(params["beta"][g] > 0)] for g in idx]
    step_scale = np.where([n == "heavy_ball" for n in names], 1.0 - beta, 1.0)
    etas = schedules_host(T, params["eta"][idx] * step_scale, params["cooldown"][idx])
    res = nqm.simulate(key, T=T, eta=etas, x0=x0[idx], lam=h[idx], method=names, momentum=beta,
                       b2=params["beta2"][idx], sigma_m=params["sigma_m"][idx],
                       sigma_a=np.broadcast_to(params["sigma_a"][idx][:, None], h[idx].shape), burn=burn,
                       n_chains=n_chains, n_rec=n_rec, law=law, df=df, paired=paired, chunk_size=chunk_size, dtype=dtype)
    flat = lambda v: v.reshape((-1,) + v.shape[2:])  # noqa: E731  (runs configuration-major, as a sweep returns them)
    return {"mean_f": flat(res["mean_loss"]), "final_f": flat(res["curve"][..., -1]), "curve": flat(res["curve"]),
            "diverged": flat(res["diverged"]), "diverged_step": flat(res["diverged_step"])}


# ----------------------------------------------------------------------------- integer ladder
def ladder_run(point: dict, burn, *, T: int, law: str = "gaussian", df: float = 0, impl: str = "threefry2x32",
               block: int = BLOCK) -> dict:
    r"""signSGD on :math:`a x^2/2` with multiplicative noise, on the integer ladder (one chain; pure).

    :math:`x = \eta(n + \theta)`, :math:`\theta \in (0, 1)`, so :math:`\mathrm{sign}(x) = +1` iff
    :math:`n \ge 0`; the update :math:`n \leftarrow n - \mathrm{sign}(x)\,s` with :math:`s = -1` with
    probability :math:`p = F_\xi(-1/\sigma)` (:func:`away_probability`, any law, any real ``df``) is
    exact in integers (no float drift, no dependence on :math:`a` or :math:`\eta`). The signs are
    drawn from 32-bit words (:func:`flips`), one key split per block of ``block`` steps. ``point`` keys:
    ``key_data``, ``key_index`` (as in :func:`chain_run`), ``sigma`` (or ``p_away``, the away probability
    itself, which then replaces ``sigma``, ``law`` and ``df``), ``theta``, ``n0`` (any
    integer type; carried as int64); ``burn`` is shared by the sweep (as in :func:`chain_run`). Returns the sums
    of :math:`(n_k+\theta)^2` over :math:`b < k \le T` (``acc``) and over even such :math:`k`
    (``acc_even``), and the last two states :math:`n_{T-1}` (``n_prev``), :math:`n_T` (``n``).
    The walk cannot diverge: :math:`|n_k| \le |n_0| + k`.
    """
    _point_and_burn(point, burn, ("key_data", "key_index", "theta", "n0"), ("p_away", "sigma"))
    T = V.integer("T", T, low=1)
    df = _law(law, df, integer_df=False)
    B = min(V.integer("block", block, low=1), T)
    theta = point["theta"]
    thresh = threshold(point["p_away"] if "p_away" in point else away_probability(point["sigma"], law, df))

    def step(carry, k, seed):
        n, n_prev, acc, acc_even = carry
        live = k < T
        s = jnp.where(live, flips(seed, k % B, thresh), 0.0).astype(jnp.int64)  # 0 past T: the walk stays
        new = n - jnp.where(n >= 0, 1, -1).astype(jnp.int64) * s
        y2 = (new + theta) ** 2
        keep = (k + 1 > burn) & live
        acc = acc + jnp.where(keep, y2, 0.0)
        acc_even = acc_even + jnp.where(keep & ((k + 1) % 2 == 0), y2, 0.0)
        return (new, jnp.where(live, n, n_prev), acc, acc_even)

    def outer(carry, j):
        key, state = carry
        key, sub = jax.random.split(key)
        seed = block_seed(sub)
        state, _ = lax.scan(lambda c, k: (step(c, k, seed), None), state, j * B + jnp.arange(B))
        return (key, state), None

    n0 = jnp.asarray(point["n0"]).astype(jnp.int64)
    zero = jnp.zeros((), jnp.float64)
    (_, (n, n_prev, acc, acc_even)), _ = lax.scan(outer, (_run_key(point, impl), (n0, n0, zero, zero)),
                                                  jnp.arange(-(-T // B)))
    return {"acc": acc, "acc_even": acc_even, "n_prev": n_prev, "n": n}


def ladder(key: jax.Array, *, sigma, theta, T: int, burn: int = 0, n_chains: int = 1, n0: int = 0,
           law: str = "gaussian", df: int = 0, paired: bool = False, chunk_size: int = CHUNK, max_bytes=None) -> dict:
    r"""Integer-ladder signSGD chains for each :math:`(\sigma, \theta)` configuration.

    ``sigma`` and ``theta`` are scalars or 1-D sequences of a common length :math:`G`;
    ``theta`` may also be ``(G, n_chains)`` (per-chain offsets, e.g. uniform). ``T`` and ``burn``
    must be even so that even/odd averages have equal counts. Run keys as in :func:`simulate`
    (``paired``: chain :math:`j` sees the same noise in every configuration). Returns, with
    leading shape ``(G, n_chains)``: ``m2`` (Cesàro mean of :math:`(n+\theta)^2`, i.e.
    :math:`E x^2/\eta^2`), ``m2_even``, ``m2_odd`` (the same over even / odd times), ``n_prev``,
    ``n``, ``theta``. Integer walks cannot diverge (:math:`|n_k| \le |n_0| + k`), so there is no flag.
    ``max_bytes``: the allocation limit (:func:`theory.validate.byte_limit`) for every chain's entries.
    """
    V.key("key", key)
    T = V.integer("T", T, low=2)
    burn = V.integer("burn", burn, low=0)
    n_chains = V.integer("n_chains", n_chains, low=1)
    n0 = V.integer("n0", n0)
    chunk_size = V.integer("chunk_size", chunk_size, low=1)
    if T % 2 or burn % 2 or burn >= T:
        raise ValueError(f"T: expected even T > burn >= 0 with burn even, got T={T}, burn={burn}")
    df = _law(law, df, integer_df=False)
    if not isinstance(paired, bool):
        raise TypeError(f"paired: expected a bool, got {type(paired).__name__}")
    sigma = V.array("sigma", sigma, ndim=(0, 1), low=0.0).reshape(-1)
    theta = V.array("theta", theta, ndim=(0, 1, 2))
    G = max(len(sigma), theta.shape[0] if theta.ndim else 1)
    if len(sigma) not in (1, G):
        raise ValueError(f"sigma: expected a scalar or length {G}, got length {len(sigma)}")
    # per chain: the offsets, grid entries and ~6 outputs (device and host); a chunk's block of sign words
    V.check_bytes({"n_chains": n_chains, "configurations": G, "chunk_size": chunk_size},
                  2 * 8 * 12 * max(G * n_chains, chunk_size) + 4 * chunk_size * BLOCK,
                  what="every chain's offsets, grid entries and outputs", max_bytes=max_bytes)
    if theta.ndim == 0:
        theta = np.full((G, n_chains), float(theta))
    elif theta.ndim == 1 and len(theta) in (1, G):
        theta = np.broadcast_to(theta[:, None], (G, n_chains))
    elif theta.shape != (G, n_chains):
        raise ValueError(f"theta: expected a scalar, length {G} or shape ({G}, {n_chains}), got {theta.shape}")
    if not np.all((theta > 0) & (theta < 1)):
        raise ValueError("theta: expected offsets strictly inside (0, 1) (theta = 0 puts 0 on the lattice)")
    sigma = np.broadcast_to(sigma, (G,))
    index = np.arange(G * n_chains) % (n_chains if paired else G * n_chains)
    # only p = F(-1/sigma) enters the walk: it travels as data, so every law shares one compiled kernel
    grid = {**_key_grid(key, index), "p_away": np.repeat(away_probability_host(sigma, law, df), n_chains),
            "theta": theta.reshape(-1),
            "n0": np.full(G * n_chains, n0, dtype=np.int64)}
    static = dict(T=T, law="gaussian", df=0, impl=str(jax.random.key_impl(key)), block=BLOCK)
    out = _sweep(ladder_run, grid, static, chunk_size, "sign_floor ladder", np.int64(burn))
    half = (T - burn) // 2
    shape = (G, n_chains)
    return {
        "m2": (out["acc"] / (T - burn)).reshape(shape),
        "m2_even": (out["acc_even"] / half).reshape(shape),
        "m2_odd": ((out["acc"] - out["acc_even"]) / half).reshape(shape),
        "n_prev": out["n_prev"].reshape(shape), "n": out["n"].reshape(shape), "theta": np.array(theta),
    }


# ----------------------------------------------------------------------------- statistics
