r"""Simulators for noise floors of SGD, signSGD, normalized SGD and Signum on quadratics.

Objective :math:`f(x) = \tfrac12\sum_i h_i x_i^2` in :math:`d \ge 1` dimensions (:math:`d = 1`,
:math:`h = a` is the scalar :math:`a x^2/2`). Stochastic gradient with mixed noise

.. math:: g = h \odot x \odot (1 + \sigma_m \xi_1) + \sigma_a \xi_2,

:math:`\xi_{1,2}` i.i.d. per coordinate, Gaussian or Student-t (unit scale). Momentum buffer
:math:`m \leftarrow \beta m + (1-\beta) g` (:math:`\beta = 0`: plain), update
:math:`x \leftarrow x - \eta_k\,D(m)` with :math:`D(m) = m` (SGD), :math:`\mathrm{sign}(m)`
(signSGD; Signum when :math:`\beta > 0`) or :math:`m/\|m\|` (normalized SGD). Schedule:
:math:`\eta_k = \eta\min\{1, (T-k)/(\phi T)\}` -- constant for :math:`\phi = 0`, WSD with cooldown
fraction :math:`\phi`, linear decay for :math:`\phi = 1`.

The method and whether additive noise is present select code, so they are static configuration
of the per-run function :func:`chain_run` (one compiled kernel per method); everything else that
varies between runs (:math:`\beta`, noise levels, step, cooldown fraction, curvatures, start, key)
is data on the grid. Grids go through :func:`sims.sweep.run_grid`; steps are a ``lax.scan``
nested in a scan over ``n_rec`` recording blocks, and the noise of a block is drawn in one call
(a key split per step costs more than the step itself).

**Divergence is data.** A run whose state becomes non-finite or exceeds :data:`BOUND` in absolute
value is flagged ``diverged`` and ``diverged_step`` holds the first step :math:`k \ge 1` at which
:math:`x_k` was bad (``-1`` for finite runs). :func:`summarize` averages over finite runs only and
reports the number of diverged runs beside the mean.

The lattice :math:`c + \eta\mathbb Z` of signSGD is fragile in floating point (drift, and
``sign(0) = 0`` absorbing at :math:`c = 0`), so constants are estimated with the integer ladder
(:func:`ladder`): :math:`x = \eta(n + \theta)` with integer :math:`n`.

Importing :mod:`sims` enables float64.
"""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

import sims  # noqa: F401  (float64)
from sims.sweep import run_grid
from theory import _validate as V

__all__ = [
    "METHODS", "LAWS", "BOUND", "CHUNK", "schedule", "chain_run", "simulate", "ladder_run", "ladder",
    "Summary", "summarize",
]

METHODS = ("sgd", "sign", "normalized")
LAWS = ("gaussian", "student")
BOUND = 1e150  # |x| beyond this counts as diverged (squares would overflow float64)
CHUNK = 1024  # default chunk: every sweep is padded to it, so each static setup compiles once
_MEMORY = 2**30  # bytes of noise one recording block may hold


# ----------------------------------------------------------------------------- noise and schedule
def _noise(key: jax.Array, shape, law: str, df: int) -> jax.Array:
    r"""Standard Gaussian or Student-t noise with integer ``df`` (unit scale), of ``shape``.

    :math:`\nu = 1, 2`: exact inverse CDF of a uniform, :math:`\tan(\pi(u - \tfrac12))` and
    :math:`(2u-1)/\sqrt{2u(1-u)}`; other :math:`\nu`: :math:`z/\sqrt{\chi^2_\nu/\nu}` with :math:`\chi^2_\nu`
    a sum of :math:`\nu` squared normals. No rejection sampler, so kernels compile quickly. Draws
    are made flat and reshaped: XLA compiles the generator for a flat shape several times faster
    than for a trailing axis such as ``d = 10``.
    """
    size = int(np.prod(shape))
    if law == "gaussian":
        return jax.random.normal(key, (size,)).reshape(shape)
    if df in (1, 2):
        # u in [tiny, 1): the quantile stays finite (|t| <~ 1e154) even at the smallest draw
        u = jax.random.uniform(key, (size,), minval=jnp.finfo(jnp.float64).tiny)
        t = jnp.tan(jnp.pi * (u - 0.5)) if df == 1 else (2 * u - 1) / jnp.sqrt(2 * u * (1 - u))
        return t.reshape(shape)
    k_z, k_chi = jax.random.split(key)
    chi2 = jnp.sum(jax.random.normal(k_chi, (df * size,)).reshape(df, size) ** 2, axis=0)
    return (jax.random.normal(k_z, (size,)) / jnp.sqrt(chi2 / df)).reshape(shape)


def _law(law, df) -> int:
    """The noise law; Student-t needs an integer ``df`` in [1, 64] (the sampler sums ``df`` normals)."""
    V.choice("law", law, LAWS)
    if law == "student":
        return V.integer("df", df, low=1, high=64)
    return 0


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


def _sweep(fn, grid: dict, static: dict, chunk_size: int, desc: str) -> dict:
    """``run_grid`` on a grid padded in NumPy to a whole number of chunks (and trimmed back).

    Every chunk then has the compiled shape, so neither the padding nor the trimming of a partial
    chunk dispatches (and compiles) eager JAX operations; padded runs repeat the last point.
    """
    n = len(next(iter(grid.values())))
    size = chunk_size * -(-n // chunk_size)
    padded = {k: np.concatenate([v, np.repeat(v[-1:], size - n, axis=0)]) if size > n else v for k, v in grid.items()}
    out = run_grid(fn, padded, static=static, chunk_size=chunk_size, pad_to_chunk=True, desc=desc)
    return {k: v[:n] for k, v in out.items()}


def _static(T, n_rec, law, df) -> tuple[int, int, str, int]:
    """Validate the static configuration shared by the per-run functions."""
    T = V.integer("T", T, low=1)
    n_rec = V.integer("n_rec", n_rec, low=1)
    if T % n_rec:
        raise ValueError(f"n_rec: expected a divisor of T={T}, got {n_rec}")
    return T, n_rec, law, _law(law, df)


def schedule(k, T: int, eta, cooldown):
    r""":math:`\eta_k = \eta\min\{1, (T-k)/(\phi T)\}` (:math:`\phi` = ``cooldown``; :math:`\phi = 0`: constant).

    Traceable (used inside the scan); ``k`` may be an array of step indices, ``eta`` and ``cooldown``
    traced scalars; the horizon ``T`` is a static integer.
    """
    T = V.integer("T", T, low=1)
    frac = jnp.where(cooldown > 0, jnp.clip((T - k) / jnp.maximum(cooldown * T, 1e-300), 0.0, 1.0), 1.0)
    return eta * frac


def _direction(m: jax.Array, method: str) -> jax.Array:
    """The update direction of ``method`` from the (momentum-averaged) gradient ``m``."""
    if method == "sgd":
        return m
    if method == "sign":
        return jnp.sign(m)
    norm = jnp.sqrt(jnp.sum(m * m))
    return m / jnp.where(norm > 0, norm, 1.0)


# ----------------------------------------------------------------------------- float chains
def chain_run(point: dict, *, T: int, n_rec: int, method: str, additive: bool, law: str = "gaussian",
              df: int = 0, impl: str = "threefry2x32") -> dict:
    r"""One chain of :math:`T` steps (pure; mapped over a grid by :func:`simulate`).

    ``point`` keys: ``key_data`` and ``key_index`` (the run's key is
    ``fold_in(wrap_key_data(key_data, impl), key_index)``), ``x0`` and ``h`` (shape ``(d,)``), scalars
    ``eta``, ``cooldown``, ``beta``, ``sigma_m``, ``sigma_a`` (ignored unless ``additive``), ``burn``.
    Static: ``method`` (one of :data:`METHODS`), ``additive`` (draw the additive noise at all),
    the noise ``law``, its integer ``df`` and the PRNG ``impl``. The multiplicative and additive noises come from
    separate subkeys, so switching ``additive`` on leaves the multiplicative stream unchanged.

    Returns the Cesàro average :math:`\frac{1}{T-b}\sum_{b < k \le T} f(x_k)` (``mean_f``), the final
    :math:`f(x_T)` (``final_f``), :math:`f` at ``n_rec`` equally spaced times (``curve``; the last is
    :math:`x_T`), ``diverged`` and ``diverged_step`` (first bad step, -1 if none).
    """
    T, n_rec, law, df = _static(T, n_rec, law, df)
    V.choice("method", method, METHODS)
    if not isinstance(additive, bool):
        raise TypeError(f"additive: expected a bool (static configuration), got {type(additive).__name__}")
    h, eta, cd = point["h"], point["eta"], point["cooldown"]
    beta, burn = point["beta"], point["burn"]
    s_m, s_a = point["sigma_m"], point["sigma_a"]
    block = T // n_rec

    def step(carry, inputs):
        x, m, acc, bad_step = carry
        k, xi = inputs
        g = h * x * (1 + s_m * xi[0])
        if additive:
            g = g + s_a * xi[1]
        m = beta * m + (1 - beta) * g
        x = x - schedule(k, T, eta, cd) * _direction(m, method)
        f = 0.5 * jnp.sum(h * x * x)
        acc = acc + jnp.where(k + 1 > burn, f, 0.0)
        bad = ~jnp.all(jnp.isfinite(x)) | (jnp.max(jnp.abs(x)) > BOUND)
        bad_step = jnp.where((bad_step < 0) & bad, k + 1, bad_step)
        return (x, m, acc, bad_step), None

    def outer(carry, j):
        x, m, key, acc, bad_step = carry
        key, k_mult, k_add = jax.random.split(key, 3)
        # one draw per block of steps: far cheaper than a key split per step
        draws = [_noise(k_mult, (block,) + x.shape, law, df)]
        if additive:
            draws.append(_noise(k_add, (block,) + x.shape, law, df))
        xi = jnp.stack(draws, axis=1)
        (x, m, acc, bad_step), _ = lax.scan(step, (x, m, acc, bad_step), (j * block + jnp.arange(block), xi))
        return (x, m, key, acc, bad_step), 0.5 * jnp.sum(h * x * x)

    x0 = point["x0"]
    init = (x0, jnp.zeros_like(x0), _run_key(point, impl), jnp.zeros((), x0.dtype), jnp.array(-1, jnp.int64))
    (x, _, _, acc, bad_step), curve = lax.scan(outer, init, jnp.arange(n_rec))
    return {"mean_f": acc / (T - burn), "final_f": curve[-1], "curve": curve, "diverged": bad_step >= 0,
            "diverged_step": bad_step}


def _per_config(name: str, value) -> np.ndarray:
    """A scalar or 1-D sequence (one value per configuration) as a float array; NaN-proof."""
    return V.array(name, value, ndim=(0, 1)).reshape(-1)


def simulate(key: jax.Array, *, eta, x0, h=1.0, method="sign", beta=0.0, sigma_m=0.0, sigma_a=0.0,
             cooldown=0.0, T: int, burn: int = 0, n_chains: int = 1, n_rec: int = 1, law: str = "gaussian",
             df: int = 0, paired: bool = False, chunk_size: int = CHUNK) -> dict:
    r"""Run ``n_chains`` independent chains for every configuration in a list of configurations.

    Scalar arguments ``eta, method, beta, sigma_m, sigma_a, cooldown`` may be 1-D sequences of one
    common length :math:`G` (one configuration each; scalars broadcast). ``x0`` is ``(d,)`` or
    ``(G, d)``, or ``(G, n_chains, d)`` for per-chain starts; ``h`` is a scalar, ``(d,)`` or ``(G, d)``.
    Chain :math:`j` of configuration :math:`g` runs on ``fold_in(key, g n + j)``; with ``paired=True``
    chain :math:`j` runs on ``fold_in(key, j)`` in every configuration
    (common random numbers: differences between configurations, e.g. schedules, then have a much
    smaller standard error, and a configuration's result does not depend on the others).
    Configurations are run in groups of equal ``(method, sigma_a > 0)``, one compiled kernel each.

    Returns arrays with leading shape ``(G, n_chains)``: ``mean_f``, ``final_f``, ``curve``
    (``(..., n_rec)``), ``diverged`` (bool) and ``diverged_step`` (first bad step, -1 if none).
    """
    V.key("key", key)
    T, n_rec, law, df = _static(T, n_rec, law, df)
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
    params = {"eta": _per_config("eta", eta), "beta": _per_config("beta", beta),
              "sigma_m": _per_config("sigma_m", sigma_m), "sigma_a": _per_config("sigma_a", sigma_a),
              "cooldown": _per_config("cooldown", cooldown)}
    lengths = {name: len(v) for name, v in params.items()} | {"method": len(methods)}
    G = max(lengths.values())
    longest = max(lengths, key=lengths.get)
    for name, n in lengths.items():
        if n not in (1, G):
            raise ValueError(f"{name}: expected a scalar or one value per configuration (length {G}, as {longest}), "
                             f"got length {n}")
    params = {name: np.broadcast_to(v, (G,)) for name, v in params.items()}
    methods = methods * G if len(methods) == 1 else methods
    if not np.all(params["eta"] > 0):
        raise ValueError(f"eta: expected step sizes > 0, got {eta!r}")
    if not np.all(params["sigma_m"] >= 0):
        raise ValueError(f"sigma_m: expected noise levels >= 0, got {sigma_m!r}")
    if not np.all(params["sigma_a"] >= 0):
        raise ValueError(f"sigma_a: expected noise levels >= 0, got {sigma_a!r}")
    if not np.all((params["beta"] >= 0) & (params["beta"] < 1)):
        raise ValueError(f"beta: expected momentum in [0, 1), got {beta!r}")
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
    h = V.array("h", h, ndim=(0, 1, 2), low=0.0, low_open=True)
    if h.ndim < 2:
        h = np.broadcast_to(h, (d,))
    if h.shape not in ((d,), (G, d)):
        raise ValueError(f"h: expected a scalar, shape ({d},) or ({G}, {d}), got {h.shape}")
    h = np.broadcast_to(h, (G, d))

    additive = params["sigma_a"] > 0
    n_noise = 1 + int(additive.any())
    student = df + 1 if law == "student" and df > 2 else 1  # the chi-square mixture draws df + 1 normals
    block_bytes = min(chunk_size, G * n_chains) * (T // n_rec) * n_noise * student * d * 8
    if block_bytes > _MEMORY:
        raise ValueError(f"n_rec: noise is drawn per recording block; T/n_rec = {T // n_rec} steps x {d} dims x "
                         f"chunk {min(chunk_size, G * n_chains)} needs {block_bytes / 2**30:.1f} GiB; "
                         "use a larger n_rec or a smaller chunk_size")
    index = np.arange(G * n_chains).reshape(G, n_chains) % (n_chains if paired else G * n_chains)
    impl = str(jax.random.key_impl(key))

    out: dict[str, np.ndarray] = {}
    groups: dict[tuple[str, bool], list[int]] = {}
    for g in range(G):
        groups.setdefault((methods[g], bool(additive[g])), []).append(g)
    for (mth, add), idx in groups.items():
        idx = np.array(idx)
        grid = {name: np.repeat(v[idx], n_chains) for name, v in params.items()}
        grid.update(_key_grid(key, index[idx].reshape(-1)), x0=x0[idx].reshape(-1, d),
                    h=np.repeat(h[idx], n_chains, axis=0), burn=np.full(len(idx) * n_chains, burn, dtype=np.int64))
        static = dict(T=T, n_rec=n_rec, method=mth, additive=add, law=law, df=df, impl=impl)
        res = _sweep(chain_run, grid, static, chunk_size, f"sign_floor {mth}")
        for name, v in res.items():
            if name not in out:
                out[name] = np.empty((G, n_chains) + v.shape[1:], dtype=v.dtype)
            out[name][idx] = v.reshape((len(idx), n_chains) + v.shape[1:])
    return out


# ----------------------------------------------------------------------------- integer ladder
def ladder_run(point: dict, *, T: int, law: str = "gaussian", df: int = 0, impl: str = "threefry2x32") -> dict:
    r"""signSGD on :math:`a x^2/2` with multiplicative noise, on the integer ladder (one chain; pure).

    :math:`x = \eta(n + \theta)`, :math:`\theta \in (0, 1)`, so :math:`\mathrm{sign}(x) = +1` iff
    :math:`n \ge 0`; the update :math:`n \leftarrow n - \mathrm{sign}(x)\,\mathrm{sign}(1 + \sigma\xi)` is
    exact in integers (no float drift, no dependence on :math:`a` or :math:`\eta`). ``point`` keys:
    ``key_data``, ``key_index`` (as in :func:`chain_run`), ``sigma``, ``theta``, ``burn``, ``n0`` (any
    integer type; carried as int64). Returns the sums
    of :math:`(n_k+\theta)^2` over :math:`b < k \le T` (``acc``) and over even such :math:`k`
    (``acc_even``), and the last two states :math:`n_{T-1}` (``n_prev``), :math:`n_T` (``n``).
    The walk cannot diverge: :math:`|n_k| \le |n_0| + k`.
    """
    T = V.integer("T", T, low=1)
    df = _law(law, df)
    theta, sigma, burn = point["theta"], point["sigma"], point["burn"]
    xi = _noise(_run_key(point, impl), (T,), law, df)  # all draws at once: T floats per chain

    def step(carry, inputs):
        n, n_prev, acc, acc_even = carry
        k, z = inputs
        flip = jnp.where(1 + sigma * z > 0, 1, jnp.where(1 + sigma * z < 0, -1, 0)).astype(jnp.int64)
        new = n - jnp.where(n >= 0, 1, -1).astype(jnp.int64) * flip
        y2 = (new + theta) ** 2
        keep = k + 1 > burn
        acc = acc + jnp.where(keep, y2, 0.0)
        acc_even = acc_even + jnp.where(keep & ((k + 1) % 2 == 0), y2, 0.0)
        return (new, n, acc, acc_even), None

    n0 = jnp.asarray(point["n0"]).astype(jnp.int64)
    zero = jnp.zeros((), jnp.float64)
    (n, n_prev, acc, acc_even), _ = lax.scan(step, (n0, n0, zero, zero), (jnp.arange(T), xi))
    return {"acc": acc, "acc_even": acc_even, "n_prev": n_prev, "n": n}


def ladder(key: jax.Array, *, sigma, theta, T: int, burn: int = 0, n_chains: int = 1, n0: int = 0,
           law: str = "gaussian", df: int = 0, paired: bool = False, chunk_size: int = CHUNK) -> dict:
    r"""Integer-ladder signSGD chains for each :math:`(\sigma, \theta)` configuration.

    ``sigma`` and ``theta`` are scalars or 1-D sequences of a common length :math:`G`;
    ``theta`` may also be ``(G, n_chains)`` (per-chain offsets, e.g. uniform). ``T`` and ``burn``
    must be even so that even/odd averages have equal counts. Run keys as in :func:`simulate`
    (``paired``: chain :math:`j` sees the same noise in every configuration). Returns, with
    leading shape ``(G, n_chains)``: ``m2`` (Cesàro mean of :math:`(n+\theta)^2`, i.e.
    :math:`E x^2/\eta^2`), ``m2_even``, ``m2_odd`` (the same over even / odd times), ``n_prev``,
    ``n``, ``theta``. Integer walks cannot diverge (:math:`|n_k| \le |n_0| + k`), so there is no flag.
    """
    V.key("key", key)
    T = V.integer("T", T, low=2)
    burn = V.integer("burn", burn, low=0)
    n_chains = V.integer("n_chains", n_chains, low=1)
    n0 = V.integer("n0", n0)
    chunk_size = V.integer("chunk_size", chunk_size, low=1)
    if T % 2 or burn % 2 or burn >= T:
        raise ValueError(f"T: expected even T > burn >= 0 with burn even, got T={T}, burn={burn}")
    df = _law(law, df)
    if not isinstance(paired, bool):
        raise TypeError(f"paired: expected a bool, got {type(paired).__name__}")
    sigma = V.array("sigma", sigma, ndim=(0, 1), low=0.0).reshape(-1)
    theta = V.array("theta", theta, ndim=(0, 1, 2))
    G = max(len(sigma), theta.shape[0] if theta.ndim else 1)
    if len(sigma) not in (1, G):
        raise ValueError(f"sigma: expected a scalar or length {G}, got length {len(sigma)}")
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
    grid = {**_key_grid(key, index), "sigma": np.repeat(sigma, n_chains), "theta": theta.reshape(-1),
            "burn": np.full(G * n_chains, burn, dtype=np.int64), "n0": np.full(G * n_chains, n0, dtype=np.int64)}
    static = dict(T=T, law=law, df=df, impl=str(jax.random.key_impl(key)))
    out = _sweep(ladder_run, grid, static, chunk_size, "sign_floor ladder")
    half = (T - burn) // 2
    shape = (G, n_chains)
    return {
        "m2": (out["acc"] / (T - burn)).reshape(shape),
        "m2_even": (out["acc_even"] / half).reshape(shape),
        "m2_odd": ((out["acc"] - out["acc_even"]) / half).reshape(shape),
        "n_prev": out["n_prev"].reshape(shape), "n": out["n"].reshape(shape), "theta": np.array(theta),
    }


# ----------------------------------------------------------------------------- statistics
class Summary(NamedTuple):
    """Mean and standard error over the finite runs, with the counts beside them."""

    mean: np.ndarray
    se: np.ndarray
    n: np.ndarray
    n_diverged: np.ndarray


def summarize(samples, diverged=None, axis: int = -1) -> Summary:
    r"""Mean and standard error over independent runs (``axis``), finite runs only.

    A run counts as diverged where ``diverged`` is True or its sample is not finite; it is left
    out of the mean and the standard error :math:`s/\sqrt{n}` (:math:`s` with :math:`n - 1` degrees of
    freedom) and counted in ``n_diverged``. Where fewer than two runs are finite the standard error
    is NaN (and the mean NaN where none is).
    """
    x = V.array("samples", samples, finite=False)
    if x.ndim == 0:
        raise ValueError(f"samples: expected an array with a runs axis, got a scalar {float(x)!r}")
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis: expected an axis of an array with {x.ndim} dimension(s), got {axis!r}")
    ok = np.isfinite(x)
    if diverged is not None:
        flag = np.asarray(diverged)
        if flag.dtype != bool:
            raise TypeError(f"diverged: expected a boolean array, got dtype {flag.dtype}")
        try:
            ok &= ~np.broadcast_to(flag, x.shape)
        except ValueError:
            raise ValueError(f"diverged: shape {flag.shape} does not broadcast to the samples' {x.shape}") from None
    n = ok.sum(axis=axis)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(ok, x, 0.0).sum(axis=axis) / np.where(n > 0, n, np.nan)
        dev = np.where(ok, x - np.expand_dims(mean, axis), 0.0)
        var = (dev**2).sum(axis=axis) / np.where(n > 1, n - 1, np.nan)
        se = np.sqrt(var / n)
    return Summary(mean, se, n, x.shape[axis] - n)
