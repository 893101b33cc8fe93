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

Everything that varies between runs (method, :math:`\beta`, noise levels, step, cooldown
fraction, curvatures, start, key) is *data* on the grid, so one compilation serves a whole sweep.
Grids go through :func:`sims.sweep.run_grid`; steps are a ``lax.scan`` nested in a scan over
``n_rec`` recording blocks, and the noise of a block is drawn in one call (a key split per step
costs more than the step itself).

The lattice :math:`c + \eta\mathbb Z` of signSGD is fragile in floating point (drift, and
``sign(0) = 0`` absorbing at :math:`c = 0`), so constants are estimated with the integer ladder
(:func:`ladder_run`): :math:`x = \eta(n + \theta)` with integer :math:`n`.

Importing :mod:`sims` enables float64.
"""
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

import sims  # noqa: F401  (float64)
from sims.bench import BenchCase
from sims.sweep import diverged, run_grid

__all__ = [
    "METHOD_IDS", "LAWS", "schedule", "chain_run", "simulate", "ladder_run", "ladder", "summarize",
    "numpy_sign_chains", "bench_cases",
]

METHOD_IDS = {"sgd": 0, "sign": 1, "normalized": 2}
LAWS = ("gaussian", "student")


def _check_int(name: str, value, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{name}: expected an integer >= {low}, got {value!r}")
    return int(value)


def _noise(key: jax.Array, shape, law: str, df: int) -> jax.Array:
    r"""Standard Gaussian or Student-t noise with integer ``df`` (unit scale).

    :math:`\nu = 1, 2`: exact inverse CDF of a uniform, :math:`\tan(\pi(u - \tfrac12))` and
    :math:`(2u-1)/\sqrt{2u(1-u)}`; other :math:`\nu`: :math:`z/\sqrt{\chi^2_\nu/\nu}` with :math:`\chi^2_\nu`
    a sum of :math:`\nu` squared normals. No rejection sampler, so kernels compile quickly.
    """
    if law == "gaussian":
        return jax.random.normal(key, shape)
    if df in (1, 2):
        # u in [tiny, 1): the quantile stays finite (|t| <~ 1e154) even at the smallest draw
        u = jax.random.uniform(key, shape, minval=jnp.finfo(jnp.float64).tiny)
        if df == 1:
            return jnp.tan(jnp.pi * (u - 0.5))
        return (2 * u - 1) / jnp.sqrt(2 * u * (1 - u))
    k_z, k_chi = jax.random.split(key)
    chi2 = jnp.sum(jax.random.normal(k_chi, (df,) + tuple(shape)) ** 2, axis=0)
    return jax.random.normal(k_z, shape) / jnp.sqrt(chi2 / df)


def _check_law(law: str, df) -> int:
    if law not in LAWS:
        raise ValueError(f"law: expected one of {LAWS}, got {law!r}")
    if law == "student":
        if isinstance(df, bool) or not isinstance(df, (int, np.integer)) or not 1 <= df <= 64:
            raise ValueError(f"df: expected an integer number of degrees of freedom in [1, 64], got {df!r}")
        return int(df)
    return 0


CHUNK = 1024  # every sweep is cut into chunks of this many runs, so each static setup compiles once


@functools.lru_cache(maxsize=None)
def _kernel(name: str, **static):
    """One function object per static setup: ``run_grid`` then reuses its compiled executable."""
    return functools.partial({"chain": chain_run, "ladder": ladder_run}[name], **static)


def _run(fn, grid: dict, chunk: int) -> dict:
    """``run_grid`` padded to at least one full chunk (a fixed shape, compiled once)."""
    return run_grid(fn, grid, chunk_size=chunk, pad_to_chunk=True)


def schedule(k, T: int, eta, cooldown):
    r""":math:`\eta_k = \eta\min\{1, (T-k)/(\phi T)\}` (:math:`\phi` = ``cooldown``; :math:`\phi = 0`: constant)."""
    frac = jnp.where(cooldown > 0, jnp.clip((T - k) / jnp.maximum(cooldown * T, 1e-300), 0.0, 1.0), 1.0)
    return eta * frac


def chain_run(point: dict, *, T: int, n_rec: int, law: str, df: int = 0) -> dict:
    r"""One chain of :math:`T` steps (pure; vmapped by :func:`simulate`).

    ``point`` keys: ``key`` (typed), ``x0`` and ``h`` (shape ``(d,)``), scalars ``eta``,
    ``cooldown``, ``method`` (id from :data:`METHOD_IDS`), ``beta``, ``sigma_m``, ``sigma_a``,
    ``burn``; the noise law and integer ``df`` are static. Returns the Cesàro average
    :math:`\frac{1}{T-b}\sum_{b < k \le T} f(x_k)` (``mean_f``), the final :math:`f(x_T)`
    (``final_f``), :math:`f` at ``n_rec`` equally spaced times (``curve``; the last is :math:`x_T`)
    and a divergence flag.
    """
    h, eta, cd = point["h"], point["eta"], point["cooldown"]
    method, beta, burn = point["method"], point["beta"], point["burn"]
    s_m, s_a = point["sigma_m"], point["sigma_a"]
    block = T // n_rec

    def step(carry, inputs):
        x, m, acc = carry
        k, xi = inputs  # xi[0] multiplicative, xi[1] additive noise of this step
        g = h * x * (1 + s_m * xi[0]) + s_a * xi[1]
        m = beta * m + (1 - beta) * g
        norm = jnp.sqrt(jnp.sum(m * m))
        direction = jnp.where(method == 0, m, jnp.where(method == 1, jnp.sign(m),
                                                         m / jnp.where(norm > 0, norm, 1.0)))
        x = x - schedule(k, T, eta, cd) * direction
        f = 0.5 * jnp.sum(h * x * x)
        acc = acc + jnp.where(k + 1 > burn, f, 0.0)
        return (x, m, acc), None

    def outer(carry, j):
        x, m, key, acc = carry
        key, k_block = jax.random.split(key)
        # one draw per block of steps: far cheaper than a key split per step
        xi = _noise(k_block, (block, 2) + x.shape, law, df)
        (x, m, acc), _ = lax.scan(step, (x, m, acc), (j * block + jnp.arange(block), xi))
        return (x, m, key, acc), 0.5 * jnp.sum(h * x * x)

    init = (point["x0"], jnp.zeros_like(point["x0"]), point["key"], jnp.zeros((), point["x0"].dtype))
    (x, _, _, acc), curve = lax.scan(outer, init, jnp.arange(n_rec))
    return {"mean_f": acc / (T - burn), "final_f": curve[-1], "curve": curve, "diverged": diverged(x[None])[0]}


def simulate(key: jax.Array, *, eta, x0, h=1.0, method="sign", beta=0.0, sigma_m=0.0, sigma_a=0.0,
             cooldown=0.0, T: int, burn: int = 0, n_chains: int = 1, n_rec: int = 1, law: str = "gaussian",
             df: int = 0, paired: bool = False, chunk_size: int = CHUNK) -> dict:
    r"""Run ``n_chains`` independent chains for every configuration in a list of configurations.

    Scalar arguments ``eta, method, beta, sigma_m, sigma_a, cooldown`` may be 1-D sequences of one
    common length :math:`G` (one configuration each; scalars broadcast). ``x0`` is ``(d,)`` or
    ``(G, d)``, or ``(G, n_chains, d)`` for per-chain starts; ``h`` is a scalar or ``(d,)``.
    Chains get independent keys split from ``key``; with ``paired=True`` chain :math:`j` uses the
    same key in every configuration (common random numbers: differences between configurations,
    e.g. schedules, then have a much smaller standard error). Returns arrays with leading shape
    ``(G, n_chains)``: ``mean_f``, ``final_f``, ``curve`` (``(..., n_rec)``), ``diverged``.
    """
    T = _check_int("T", T, 1)
    n_rec = _check_int("n_rec", n_rec, 1)
    n_chains = _check_int("n_chains", n_chains, 1)
    burn = _check_int("burn", burn, 0)
    if burn >= T:
        raise ValueError(f"burn: expected burn < T={T}, got {burn}")
    if T % n_rec:
        raise ValueError(f"n_rec: expected a divisor of T={T}, got {n_rec}")
    df = _check_law(law, df)
    methods = [method] if isinstance(method, str) else list(method)
    for mth in methods:
        if mth not in METHOD_IDS:
            raise ValueError(f"method: expected one of {tuple(METHOD_IDS)}, got {mth!r}")
    params = {"eta": eta, "beta": beta, "sigma_m": sigma_m, "sigma_a": sigma_a, "cooldown": cooldown}
    params = {k: np.atleast_1d(np.asarray(v, dtype=float)) for k, v in params.items()}
    params["method"] = np.array([METHOD_IDS[m] for m in methods], dtype=np.int32)
    G = max(len(v) for v in params.values())
    for name, v in params.items():
        if len(v) not in (1, G):
            raise ValueError(f"{name}: expected a scalar or length {G}, got length {len(v)}")
        params[name] = np.broadcast_to(v, (G,))
    if np.any(params["eta"] <= 0) or not np.all(np.isfinite(params["eta"])):
        raise ValueError(f"eta: expected finite step sizes > 0, got {eta!r}")
    if np.any(params["sigma_m"] < 0) or np.any(params["sigma_a"] < 0):
        raise ValueError(f"sigma_m/sigma_a: expected noise levels >= 0, got {sigma_m!r}, {sigma_a!r}")
    if np.any((params["beta"] < 0) | (params["beta"] >= 1)):
        raise ValueError(f"beta: expected momentum in [0, 1), got {beta!r}")
    if np.any((params["cooldown"] < 0) | (params["cooldown"] > 1)):
        raise ValueError(f"cooldown: expected a fraction in [0, 1], got {cooldown!r}")
    x0 = np.asarray(x0, dtype=float)
    if x0.ndim == 1:
        x0 = np.broadcast_to(x0, (G, n_chains, x0.shape[0]))
    elif x0.ndim == 2 and x0.shape[0] == G:
        x0 = np.broadcast_to(x0[:, None, :], (G, n_chains, x0.shape[1]))
    if x0.ndim != 3 or x0.shape[:2] != (G, n_chains) or not np.all(np.isfinite(x0)):
        raise ValueError(f"x0: expected finite starts of shape (d,), ({G}, d) or ({G}, {n_chains}, d), "
                         f"got shape {np.shape(x0)}")
    d = x0.shape[-1]
    h = np.asarray(h, dtype=float)
    h = np.broadcast_to(h if h.ndim == 2 else np.broadcast_to(h, (d,)), (G, d))
    if np.any(h <= 0) or not np.all(np.isfinite(h)):
        raise ValueError(f"h: expected finite positive curvatures, got {h!r}")

    block_bytes = min(chunk_size, G * n_chains) * (T // n_rec) * 2 * d * 8
    if block_bytes > 2**30:
        raise ValueError(f"n_rec: noise is drawn per recording block; T/n_rec = {T // n_rec} steps x {d} dims x "
                         f"chunk {chunk_size} needs {block_bytes / 2**30:.1f} GiB; use a larger n_rec or chunk_size")
    if paired:
        keys = jnp.tile(jax.random.split(key, n_chains), G)
    else:
        keys = jax.random.split(key, G * n_chains)
    grid = {name: np.repeat(v, n_chains) for name, v in params.items()}
    grid.update(key=keys, x0=x0.reshape(G * n_chains, d), h=np.repeat(h, n_chains, axis=0),
                burn=np.full(G * n_chains, burn, dtype=np.int32))
    out = _run(_kernel("chain", T=T, n_rec=n_rec, law=law, df=df), grid, chunk_size)
    return {k: v.reshape((G, n_chains) + v.shape[1:]) for k, v in out.items()}


def ladder_run(point: dict, *, T: int, law: str, df: int = 0) -> dict:
    r"""signSGD on :math:`a x^2/2` with multiplicative noise, on the integer ladder (one chain).

    :math:`x = \eta(n + \theta)`, :math:`\theta \in (0, 1)`, so :math:`\mathrm{sign}(x) = +1` iff
    :math:`n \ge 0`; the update :math:`n \leftarrow n - \mathrm{sign}(x)\,\mathrm{sign}(1 + \sigma\xi)` is
    exact in integers (no float drift, no dependence on :math:`a` or :math:`\eta`). Returns the sums
    of :math:`(n_k+\theta)^2` over :math:`b < k \le T` (``acc``) and over even such :math:`k`
    (``acc_even``), and the last two states :math:`n_{T-1}` (``n_prev``), :math:`n_T` (``n``).
    """
    theta, sigma, burn = point["theta"], point["sigma"], point["burn"]

    def step(carry, k):
        n, n_prev, key, acc, acc_even = carry
        key, k_noise = jax.random.split(key)
        flip = jnp.sign(1 + sigma * _noise(k_noise, (), law, df)).astype(jnp.int32)
        new = n - jnp.where(n >= 0, 1, -1) * flip
        y2 = (new + theta) ** 2
        keep = k + 1 > burn
        acc = acc + jnp.where(keep, y2, 0.0)
        acc_even = acc_even + jnp.where(keep & ((k + 1) % 2 == 0), y2, 0.0)
        return (new, n, key, acc, acc_even), None

    init = (point["n0"], point["n0"], point["key"], jnp.zeros(()), jnp.zeros(()))
    (n, n_prev, _, acc, acc_even), _ = lax.scan(step, init, jnp.arange(T))
    return {"acc": acc, "acc_even": acc_even, "n_prev": n_prev, "n": n}




def ladder(key: jax.Array, *, sigma, theta, T: int, burn: int = 0, n_chains: int = 1, n0: int = 0,
           law: str = "gaussian", df: int = 0, chunk_size: int = CHUNK) -> dict:
    r"""Integer-ladder signSGD chains for each :math:`(\sigma, \theta)` configuration.

    ``sigma`` and ``theta`` are scalars or 1-D sequences of a common length :math:`G`;
    ``theta`` may also be ``(G, n_chains)`` (per-chain offsets, e.g. uniform). ``T`` and ``burn``
    should be even so that even/odd averages have equal counts. Returns, with leading shape
    ``(G, n_chains)``: ``m2`` (Cesàro mean of :math:`(n+\theta)^2`, i.e. :math:`E x^2/\eta^2`),
    ``m2_even``, ``m2_odd`` (the same over even / odd times), ``n_prev``, ``n``, ``theta``.
    """
    T = _check_int("T", T, 2)
    burn = _check_int("burn", burn, 0)
    n_chains = _check_int("n_chains", n_chains, 1)
    if T % 2 or burn % 2 or burn >= T:
        raise ValueError(f"T, burn: expected even T > burn >= 0, got T={T}, burn={burn}")
    df = _check_law(law, df)
    sigma = np.atleast_1d(np.asarray(sigma, dtype=float))
    theta = np.asarray(theta, dtype=float)
    G = max(len(sigma), theta.shape[0] if theta.ndim else 1)
    if len(sigma) not in (1, G):
        raise ValueError(f"sigma: expected a scalar or length {G}, got length {len(sigma)}")
    if np.any(sigma < 0):
        raise ValueError(f"sigma: expected >= 0, got {sigma!r}")
    if theta.ndim == 0:
        theta = np.full((G, n_chains), float(theta))
    elif theta.ndim == 1 and len(theta) in (1, G):
        theta = np.broadcast_to(theta[:, None], (G, n_chains))
    elif theta.shape != (G, n_chains):
        raise ValueError(f"theta: expected a scalar, length {G} or shape ({G}, {n_chains}), got {theta.shape}")
    if np.any((theta <= 0) | (theta >= 1)):
        raise ValueError("theta: expected offsets strictly inside (0, 1) (theta = 0 puts 0 on the lattice)")
    sigma = np.broadcast_to(sigma, (G,))
    keys = jax.random.split(key, G * n_chains)
    grid = {"key": keys, "sigma": np.repeat(sigma, n_chains), "theta": theta.reshape(-1),
            "burn": np.full(G * n_chains, burn, dtype=np.int32),
            "n0": np.full(G * n_chains, n0, dtype=np.int32)}
    out = _run(_kernel("ladder", T=T, law=law, df=df), grid, chunk_size)
    half = (T - burn) // 2
    shape = (G, n_chains)
    return {
        "m2": (out["acc"] / (T - burn)).reshape(shape),
        "m2_even": (out["acc_even"] / half).reshape(shape),
        "m2_odd": ((out["acc"] - out["acc_even"]) / half).reshape(shape),
        "n_prev": out["n_prev"].reshape(shape), "n": out["n"].reshape(shape), "theta": theta,
    }


def summarize(samples: np.ndarray, axis: int = -1) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard error over independent chains (``axis``)."""
    samples = np.asarray(samples, dtype=float)
    n = samples.shape[axis]
    return samples.mean(axis=axis), samples.std(axis=axis, ddof=1) / np.sqrt(n)


# ----------------------------------------------------------------------------- NumPy reference and bench
def numpy_sign_chains(seed: int, *, a: float, eta: float, sigma_m: float, sigma_a: float, x0: float,
                      T: int, n_chains: int, burn: int = 0) -> np.ndarray:
    """Vectorized NumPy signSGD (1-d, Gaussian mixed noise): per-chain Cesàro mean of f (reference)."""
    rng = np.random.default_rng(seed)
    x = np.full(n_chains, float(x0))
    acc = np.zeros(n_chains)
    for k in range(T):
        g = a * x * (1 + sigma_m * rng.standard_normal(n_chains)) + sigma_a * rng.standard_normal(n_chains)
        x = x - eta * np.sign(g)
        if k + 1 > burn:
            acc += 0.5 * a * x * x
    return acc / (T - burn)


def bench_cases(scale: str) -> list[BenchCase]:
    """signSGD chains x steps per second, JAX (run_grid + scan) against vectorized NumPy."""
    n_chains, T = (2048, 2000) if scale == "small" else (262144, 4000)
    burn = T // 2
    cfg = dict(a=1.0, eta=0.05, sigma_m=1.0, sigma_a=0.0, x0=1.0 + 0.025)

    def run_jax():
        out = simulate(jax.random.key(0), eta=cfg["eta"], x0=np.array([cfg["x0"]]), h=cfg["a"], method="sign",
                       sigma_m=cfg["sigma_m"], T=T, burn=burn, n_chains=n_chains, chunk_size=n_chains)
        return out["mean_f"][0]

    def run_numpy():
        return numpy_sign_chains(0, T=T, n_chains=n_chains, burn=burn, **cfg)

    def check(a, b):
        ma, sa = summarize(a)
        mb, sb = summarize(b)
        z = abs(ma - mb) / np.hypot(sa, sb)
        assert z < 5, f"JAX and NumPy Cesàro means differ by {z:.1f} standard errors ({ma:.4g} vs {mb:.4g})"

    return [BenchCase("sign_floor: signSGD chains (mult. noise)", "chain-steps", float(n_chains * T),
                      run_jax, run_numpy, check)]
