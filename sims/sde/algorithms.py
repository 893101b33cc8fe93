r"""The discrete distributed optimizers (DSGD, DCSGD, normalized DCSGD, DSignSGD): one
configuration, the update direction of each algorithm, batched simulation of their paths, and Monte Carlo
estimates of the mean sign :math:`E\,\mathrm{sign}(g + sZ)` and of the aggregated direction.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

import sims  # noqa: F401  (float64)
from sims.sweep import diverged as _beyond, run_grid
from theory.validate import check_bytes, choice, float_dtype, integer, real
from sims.sde.problems import (
    ALGORITHMS, COMPRESSORS, NOISES, PROBLEMS, SCHEDULES, _BOUND, _MAX_DRAWS, _arr, _grad_arg, _num, _omega_arg,
    _prng, _traced, loss_fn
)
from sims.sde.noise import (
    _below, _bits, _block_size, _compress, _compression_draws, _mean_sign, _standard, noise_scale, sample_noise,
    schedule_factor
)

__all__ = ["Config", "direction", "simulate", "paths", "mean_sign_mc", "mean_sign_mc_many", "aggregate_samples"]


# ----------------------------------------------------------------------------- configuration

@dataclass(frozen=True)
class Config:
    """Static part of a run (one compilation per distinct Config); traced values go in the grid.

    ``bound``: a state with an entry beyond it in absolute value (or a non-finite loss) is diverged.
    """

    problem: str = "quartic"
    algo: str = "dcsgd"
    n_agents: int = 4
    compressor: str = "bernoulli"
    noise: str = "gaussian"
    nu: float = 3.0
    schedule: str = "constant"
    n_steps: int = 1000
    n_record: int = 10
    bound: float = _BOUND

    def __post_init__(self) -> None:
        choice("problem", self.problem, PROBLEMS)
        choice("algo", self.algo, ALGORITHMS)
        integer("n_agents", self.n_agents, low=1)
        choice("compressor", self.compressor, COMPRESSORS)
        choice("noise", self.noise, NOISES)
        real("nu", self.nu, low=0.0, low_open=True)
        choice("schedule", self.schedule, SCHEDULES)
        integer("n_steps", self.n_steps, low=1)
        integer("n_record", self.n_record, low=1)
        if self.n_steps % self.n_record:
            raise ValueError(f"n_record: must divide n_steps={self.n_steps}, got {self.n_record}")
        real("bound", self.bound, low=0.0, low_open=True)


_DEFAULTS = {"lam": 1.0, "omega": 0.0, "sigma0": 0.0, "sigma1": 0.0, "L0": 1.0, "L1": 1.0, "normalized": 0.0}
_LOW = {"lam": (0.0, True), "omega": (0.0, False), "sigma0": (0.0, False), "sigma1": (0.0, False),
        "L0": (0.0, False), "L1": (0.0, False), "normalized": (0.0, False)}


def direction(key: jax.Array, cfg: Config, grad: jax.Array, omega, sigma0, sigma1) -> jax.Array:
    """The agent-averaged update direction of ``cfg.algo`` at true gradient ``grad`` (one draw)."""
    if not isinstance(cfg, Config):
        raise TypeError(f"cfg: expected a sims.sde.Config, got {type(cfg).__name__}")
    key = _prng("key", key)
    grad = _grad_arg("grad", grad)
    _omega_arg(omega, cfg.n_agents)
    _num("sigma0", sigma0, low=0.0)
    _num("sigma1", sigma1, low=0.0)
    omega = jnp.broadcast_to(jnp.asarray(omega, jnp.float64), (cfg.n_agents,))
    return _direction(cfg, grad, omega, sigma0, sigma1, *_draws(key, cfg, (), jnp.shape(grad)[0]))


def _draws(key: jax.Array, cfg: Config, lead: tuple, d: int, binomial: bool = False, dtype=jnp.float64) -> tuple:
    r"""The random inputs of ``lead`` steps (time-major) of ``cfg.algo`` with :math:`N` agents in :math:`d` coordinates:
    standard noise values :math:`z` (the DCSGD family, unless ``noise="none"``) and the draws :math:`u` of a sign step's
    Bernoulli or of the compressor (:func:`_bits`, :func:`_compression_draws`), of shape ``lead + (N, d)``, or
    ``None`` where the algorithm needs none. Gaussian and Cauchy noise are stable laws, so :func:`_direction` needs
    one value per coordinate (shape ``lead + (1, d)``) instead of one per agent. ``binomial``: Bernoulli masks with
    one keep probability for all agents, drawn as the number of kept agents, one 32-bit word per coordinate
    (shape ``lead + (1, d)``; :func:`_binomial_direction`). Noise values in ``dtype`` (float64 or float32)."""
    k_noise, k_comp = jax.random.split(key)
    shape = lead + (cfg.n_agents, d)
    if cfg.algo == "dsignsgd":
        return None, None if cfg.noise == "none" else _bits(k_noise, shape)
    agents = 1 if cfg.noise in _STABLE else cfg.n_agents
    z = None if cfg.noise == "none" else _standard(k_noise, cfg.noise, lead + (agents, d), cfg.nu, dtype)
    if binomial:
        return z, _bits(k_comp, lead + (1, d))
    compresses = cfg.algo in ("dcsgd", "dcsgd_normalized") and cfg.compressor != "none"
    return z, _compression_draws(k_comp, cfg.compressor, shape) if compresses else None


def _binomial_ok(cfg: Config, omega, agents_axis: int = 0) -> bool:
    r"""Whether the compressed DCSGD family's masks may be drawn as their count (:func:`_binomial_direction`): Bernoulli
    compression with the same :math:`\omega` for every agent, known before tracing. ``omega`` holds the agents
    along axis ``agents_axis`` (0 for one run's ``omega``, 1 for a grid's): fewer axes mean one value for all agents,
    more than one value along it must all be equal."""
    if cfg.algo not in ("dcsgd", "dcsgd_normalized") or cfg.compressor != "bernoulli" or _traced(omega):
        return False
    om = np.asarray(omega)
    return om.ndim <= agents_axis or bool(np.all(om == np.take(om, [0], axis=agents_axis)))


def _binomial_thresholds(q, n: int) -> jax.Array:
    r"""The integers :math:`t_k = \lceil P(K < k)\,2^{32}\rceil`, :math:`k = 1..N`, of :math:`K \sim
    \mathrm{Binomial}(N, q)`. For one uniform 32-bit word :math:`u`, :math:`K = \#\{k : u \ge t_k\}` has
    :math:`P(K \ge k) = 1 - t_k/2^{32}`: the Binomial law to within :math:`2^{-32}` per atom, as each agent's mask
    (:func:`sims.sde.noise._below`) is a Bernoulli(q) to within :math:`2^{-32}`. Computed in the dtype of ``q``: a
    float32 ``q`` gives thresholds rounded to float32 (within :math:`2^{-24}` per atom)."""
    j = np.arange(n)
    dt = _real(q)
    comb = jnp.asarray([float(math.comb(n, int(i))) for i in j], dt)
    pmf = comb * q ** jnp.asarray(j, dt) * (1.0 - q) ** jnp.asarray(n - j, dt)   # P(K = j), j < N
    cdf = jnp.minimum(jnp.cumsum(pmf), 1.0)                                                         # P(K < j + 1)
    return jnp.ceil(cdf * 2.0**32).astype(jnp.uint64)


def _real(x) -> Any:
    """The float dtype a path computes in: float32 for a float32 array, else float64 (an integer one included)."""
    return jnp.float32 if jnp.result_type(x) == jnp.float32 else jnp.result_type(x, jnp.float64)


# noise laws whose weighted sums of independent copies are one copy: sum_i c_i Z_i = (sum_i c_i^p)^(1/p) Z (p = 2
# Gaussian, p = 1 Cauchy, weights c_i >= 0)
_STABLE = {"gaussian": 2, "cauchy": 1}


def _direction(cfg: Config, grad, omega, sigma0, sigma1, z, u) -> jax.Array:
    r""":func:`direction` from the draws :func:`_draws` made for one step.

    Agent :math:`i` sends :math:`c_{ij}(g_j + s Z_{ij})` with compression weights :math:`c_{ij}` (:math:`1/q_i` or 0 for
    ``bernoulli``, :math:`d/k_i` or 0 for ``rand_k``, 1 for ``none``); the mean over agents is
    :math:`\bar c_j g_j + \frac sN \sum_i c_{ij} Z_{ij}`. For a stable noise law the sum is, exactly in law given the
    weights, :math:`(\sum_i c_{ij}^p)^{1/p} Z_j` with one draw :math:`Z_j` per coordinate (p = 2 Gaussian, 1 Cauchy):
    one noise value per coordinate and step instead of N."""
    if cfg.algo == "dsignsgd":
        return _sign_direction(u, cfg, grad, sigma0, sigma1)
    ones = jnp.ones((cfg.n_agents,) + jnp.shape(grad), _real(grad))
    c = ones if u is None else _compress(u, cfg.compressor, ones, omega)
    step = jnp.mean(c, axis=0) * grad
    if z is None:
        return step
    s = noise_scale(grad, sigma0, sigma1)
    if cfg.noise in _STABLE:
        p = _STABLE[cfg.noise]
        weight = jnp.sqrt(jnp.sum(c * c, axis=0)) if p == 2 else jnp.sum(c, axis=0)
        return step + s * weight * z[0] / cfg.n_agents
    return step + s * jnp.mean(c * z, axis=0)


def _binomial_direction(cfg: Config, grad, q, thresholds, sigma0, sigma1, z, u) -> jax.Array:
    r""":func:`_direction` for Bernoulli masks that keep each agent's coordinate with the same probability :math:`q`,
    from the number :math:`K_j \sim \mathrm{Binomial}(N, q)` of agents that keep coordinate :math:`j` (one 32-bit word
    ``u`` per coordinate, :func:`_binomial_thresholds`). The mean message is :math:`\frac{K_j}{Nq}g_j` plus the noise
    :math:`\frac{s}{Nq}\sum_{i \in S_j} Z_{ij}` over the :math:`K_j` kept agents :math:`S_j`; the noise values are
    i.i.d. and independent of the masks, so the sum over any :math:`K_j` of them has the same law: the first
    :math:`K_j`, or for a stable law :math:`K_j^{1/p}Z_j` (p = 2 Gaussian, 1 Cauchy). Exact in law: the same
    direction as :func:`_direction`'s per-agent masks, from one word per coordinate instead of :math:`N`."""
    kept = jnp.sum(u[0].astype(jnp.uint64)[None, :] >= thresholds[:, None], axis=0).astype(_real(grad))
    step = kept / (cfg.n_agents * q) * grad
    if z is None:
        return step
    s = noise_scale(grad, sigma0, sigma1)
    if cfg.noise in _STABLE:
        weight = jnp.sqrt(kept) if _STABLE[cfg.noise] == 2 else kept
        return step + s * weight * z[0] / (cfg.n_agents * q)
    first = jnp.arange(cfg.n_agents)[:, None] < kept[None, :]
    return step + s * jnp.sum(jnp.where(first, z, 0.0), axis=0) / (cfg.n_agents * q)


def _sign_direction(u, cfg: Config, grad, sigma0, sigma1):
    r"""Mean of N agents' :math:`\mathrm{sign}(g_j + sZ_{ij})`, drawn as the sign it is: :math:`+1` with probability
    :math:`F(g_j/s)` (F the CDF of the standard noise law), from the 32-bit words ``u`` (:func:`_bits`), one per agent
    and coordinate.

    Exact in law for any symmetric law, any real :math:`\nu` (Student-t through the incomplete beta function),
    with no noise variate drawn at all; :math:`s = 0` (or ``noise="none"``) gives :math:`\mathrm{sign}(g_j)`."""
    if cfg.noise == "none":
        return jnp.sign(grad)
    s = noise_scale(grad, sigma0, sigma1)
    safe = jnp.where(s > 0, s, 1.0)
    p = 0.5 * (1.0 + _mean_sign(grad / safe, cfg.noise, cfg.nu))
    one = jnp.ones((), _real(grad))  # typed: two Python floats would make the select float64 under x64
    signs = jnp.where(_below(u, p[None, :]), one, -one)
    return jnp.where(s > 0, jnp.mean(signs, axis=0), jnp.sign(grad))


def _simulate(key, x0, eta, cfg: Config, params: dict, binomial: bool = False,
              dtype: str = "float64") -> dict[str, jax.Array]:
    p = {**_DEFAULTS, **params}
    f = loss_fn(cfg.problem)
    grad_f = jax.grad(f)
    x0 = jnp.atleast_1d(jnp.asarray(x0, dtype))
    d = x0.shape[0]
    omega = jnp.broadcast_to(jnp.asarray(p["omega"], dtype), (cfg.n_agents,))
    # The prescription's compression/noise factor 1 + (mean omega + d(sigma1^2 mean omega + sigma1^2))/N.
    factor = 1.0 + (jnp.mean(omega) + d * (p["sigma1"] ** 2 * jnp.mean(omega) + p["sigma1"] ** 2)) / cfg.n_agents
    # binomial: one keep probability for every agent (_binomial_ok), so the count's thresholds are fixed per path
    q = 1.0 / (1.0 + omega[0])
    thresholds = _binomial_thresholds(q, cfg.n_agents) if binomial else None

    # noise for a block of steps in one call (time-major), one key split per block; blocks divide the recording
    # interval and hold at most _MAX_DRAWS values per path and kind
    # a bound beyond float32's range is its overflow (the largest float32, not a cast to inf with a warning)
    bound = cfg.bound if dtype == "float64" else min(cfg.bound, float(np.finfo(dtype).max))
    per_record = cfg.n_steps // cfg.n_record
    block = _block_size(per_record, max(1, _MAX_DRAWS // (cfg.n_agents * d)))
    n_blocks = per_record // block

    def step(carry, inputs):
        x, bad, at = carry
        k, z, u = inputs
        g = grad_f(x, p["lam"])
        eta_k = eta * schedule_factor(cfg.schedule, k, dtype)
        if cfg.algo in ("dcsgd", "dcsgd_normalized"):
            on = (p["normalized"] > 0) | (cfg.algo == "dcsgd_normalized")
            eta_k = jnp.where(on, eta_k / ((p["L0"] + p["L1"] * jnp.linalg.norm(g)) * factor), eta_k)
        if binomial:
            move = _binomial_direction(cfg, g, q, thresholds, p["sigma0"], p["sigma1"], z, u)
        else:
            move = _direction(cfg, g, omega, p["sigma0"], p["sigma1"], z, u)
        x_new = x - eta_k * move
        now_bad = _beyond(x_new[None], bound)[0] | ~jnp.isfinite(f(x_new, p["lam"]))
        at = jnp.where(bad | ~now_bad, at, k + 1)
        bad = bad | now_bad
        x = jnp.where(bad, x, x_new)
        return (x, bad, at), None

    def run_block(carry, inputs):
        k_block, k0 = inputs
        z, u = _draws(k_block, cfg, (block,), d, binomial, dtype)
        carry, _ = lax.scan(step, carry, (k0 + jnp.arange(block), z, u))
        return carry, None

    def record(carry, inputs):
        k_rec, r = inputs
        starts = r * per_record + block * jnp.arange(n_blocks)
        carry, _ = lax.scan(run_block, carry, (jax.random.split(k_rec, n_blocks), starts))
        return carry, f(carry[0], p["lam"])

    init = (x0, jnp.zeros((), bool), jnp.asarray(-1))
    (x, bad, at), losses = lax.scan(record, init, (jax.random.split(key, cfg.n_record), jnp.arange(cfg.n_record)))
    return {"loss": losses, "x": x, "diverged": bad, "diverged_at": at, "loss0": f(x0, p["lam"])}


_simulate_jit = jax.jit(_simulate, static_argnames=("cfg", "binomial"))


def _check_params(params: dict, where: str) -> None:
    unknown = set(params) - set(_DEFAULTS)
    if unknown:
        raise TypeError(f"{where}: unknown names {sorted(unknown)}; allowed {sorted(_DEFAULTS)}")


def simulate(key: jax.Array, x0, eta, cfg: Config, **params) -> dict[str, jax.Array]:
    r"""One path of ``cfg.algo`` from ``x0`` with base step ``eta`` (jit-compiled per ``cfg``).

    ``params``: ``lam`` (quadratic curvature), ``omega`` (scalar or per agent; one value for every agent draws the
    Bernoulli masks as their count, :func:`_binomial_direction`), ``sigma0``, ``sigma1``,
    ``L0``, ``L1`` (normalization) and ``normalized`` (> 0 turns ``dcsgd`` into ``dcsgd_normalized``
    inside one compilation, so constant and normalized runs can share a grid).

    Returns ``loss`` at ``cfg.n_record`` evenly spaced checkpoints (frozen at the last finite state once
    the path diverges), ``x`` (final state), ``loss0``, ``diverged`` and ``diverged_at`` (first diverged
    step, -1 if none).
    """
    if not isinstance(cfg, Config):
        raise TypeError(f"cfg: expected a sims.sde.Config, got {type(cfg).__name__}")
    _prng("key", key)
    _arr("x0", x0, ndim=(0, 1))
    _num("eta", eta, low=0.0, low_open=True)
    _check_params(params, "params")
    for name, value in params.items():
        low, open_ = _LOW[name]
        if name == "omega":
            _omega_arg(value, cfg.n_agents)
        else:
            _num(name, value, low=low, low_open=open_)
    # Every parameter is passed (defaults filled in) so that calls with different keyword sets share one compilation.
    typed = {k: jnp.asarray(params.get(k, v), jnp.float64) for k, v in _DEFAULTS.items()}
    return _simulate_jit(key, jnp.asarray(x0, jnp.float64), jnp.asarray(eta, jnp.float64), cfg, typed,
                         _binomial_ok(cfg, params.get("omega", 0.0)))


def _path_point(pt, cfg, binomial=False, dtype="float64"):
    return _simulate(pt["key"], pt["x0"], pt["eta"], cfg, {k: v for k, v in pt.items() if k not in ("key", "x0", "eta")},
                     binomial, dtype)


def paths(cfg: Config, grid: dict[str, Any], *, chunk_size: int = 512, progress: bool | None = None,
          max_bytes=None, dtype=None) -> dict[str, np.ndarray]:
    """:func:`simulate` at every point of ``grid`` (``key``, ``x0``, ``eta`` and any ``params``, leading axis = runs),
    through :func:`sims.sweep.run_grid` (one compilation per ``cfg`` and grid shapes). ``max_bytes``: the allocation
    limit (:func:`theory.validate.byte_limit`) for every run's ``cfg.n_record`` records and a chunk's block draws.

    ``chunk_size`` (runs per compiled call) changes no path (each run draws from its own key): 512 keeps a chunk's
    block draws in the CPU's cache (DCSGD on 20,000 paths: 36 % less CPU time than chunks of 4,096, bit-identical).

    ``dtype``: ``None``/``"float64"`` (the default) or ``"float32"`` (:func:`theory.validate.float_dtype`): states,
    parameters, noise values (JAX's float32 samplers: a stream of their own, so float32 paths agree with float64
    ones in law, not path by path), compression weights and records in float32, and the returned floats too. Sound
    for what these paths measure, Monte Carlo means and divergence fractions over many paths: a step's round-off
    (:math:`2^{-24}` relative) is far below the noise it carries, and the Bernoulli masks' 32-bit thresholds are
    computed in float32 (each keep probability within :math:`2^{-24}`). Without noise (``noise="none"``) the masks
    are the float64 paths' own, so such paths match the float64 ones to round-off. Divergence: ``cfg.bound`` above
    float32's range (the default 1e100) leaves the overflow of the state or the loss as the float32 test. Refused:
    the ``rand_k`` compressor (it ranks :math:`d` uniform draws per agent and step, where a tie would keep more than
    :math:`k` coordinates; float32 uniforms tie with probability about :math:`d^2 2^{-24}` per ranking, so a long
    run would meet ties).
    """
    if not isinstance(cfg, Config):
        raise TypeError(f"cfg: expected a sims.sde.Config, got {type(cfg).__name__}")
    if not isinstance(grid, dict):
        raise TypeError(f"grid: expected a dict of arrays, got {type(grid).__name__}")
    for name in ("key", "x0", "eta"):
        if name not in grid:
            raise ValueError(f"grid: missing required entry {name!r}; has {sorted(grid)}")
    unknown = set(grid) - {"key", "x0", "eta"} - set(_DEFAULTS)
    if unknown:
        raise ValueError(f"grid: unknown entries {sorted(unknown)}; allowed key, x0, eta, {sorted(_DEFAULTS)}")
    _prng("grid['key']", grid["key"])
    _arr("grid['x0']", grid["x0"], ndim=(1, 2))
    _arr("grid['eta']", grid["eta"], ndim=1, low=0.0, low_open=True)
    for name in set(grid) & set(_DEFAULTS):
        low, open_ = _LOW[name]
        _arr(f"grid[{name!r}]", grid[name], ndim=(1, 2), low=low, low_open=open_)
    chunk_size = integer("chunk_size", chunk_size, low=1)
    dt = float_dtype("dtype", dtype)
    if dt == np.float32 and cfg.algo in ("dcsgd", "dcsgd_normalized") and cfg.compressor == "rand_k":
        raise ValueError("dtype, cfg.compressor: rand_k ranks uniform draws that float32 would tie (probability about "
                         f"d^2 2^-24 per ranking, d = {int(np.shape(grid['x0'])[-1]) if np.ndim(grid['x0']) == 2 else 1}); "
                         "got dtype float32 with compressor 'rand_k': use dtype='float64' or the bernoulli compressor")
    runs = int(np.shape(grid["eta"])[0])
    d = int(np.shape(grid["x0"])[-1]) if np.ndim(grid["x0"]) == 2 else 1
    check_bytes({"cfg.n_record": cfg.n_record, "grid": f"{runs} runs", "chunk_size": chunk_size},
                2 * 3 * 8 * runs * cfg.n_record * (d + 1) + 3 * 8 * min(chunk_size, runs) * _MAX_DRAWS,
                what="every run's records and a chunk's block draws", max_bytes=max_bytes)
    typed = {k: (v if k == "key" else np.asarray(v, dt)) for k, v in grid.items()}
    # XLA's loop fusions: 54 against 75 CPU-ns per DCSGD path-step on a CPU (interleaved in one process); the cheaper
    # code generation: the topic's cold full budget compiled its 126 programs in 30 CPU-s instead of 59, runs unchanged
    binomial = _binomial_ok(cfg, typed.get("omega", 0.0), agents_axis=1)
    return run_grid(_path_point, typed, static={"cfg": cfg, "binomial": binomial, "dtype": dt.name}, chunk_size=chunk_size,
                    progress=progress, desc=f"{cfg.algo}/{cfg.problem}", loop_fusions=True,
                    fast_compile=True)


# ----------------------------------------------------------------------------- Monte Carlo helpers

def _mean_sign_mc(key, grad, scale, noise, n, nu):
    g = jnp.atleast_1d(jnp.asarray(grad, jnp.float64))
    # sample_noise with sigma1 = 0 gives scale * zeta; the n "agents" are the n draws.
    s = jnp.sign(g[None, :] + sample_noise(key, noise, g, scale, 0.0, n, nu))
    return {"mean": s.mean(axis=0), "var": s.var(axis=0, ddof=1)}


@partial(jax.jit, static_argnames=("noise", "n", "nu"))
def _mean_sign_mc_jit(key, grad, scale, noise, n, nu):
    return _mean_sign_mc(key, grad, scale, noise, n, nu)


@partial(jax.jit, static_argnames=("noises", "n", "nu"))
def _mean_sign_mc_many_jit(keys, grad, scale, noises, n, nu):
    return {law: _mean_sign_mc(keys[i], grad, scale, law, n, nu) for i, law in enumerate(noises)}


def _sign_args(grad, scale, n, nu, laws: int = 1, max_bytes=None):
    _arr("grad", grad, ndim=(0, 1))
    _num("scale", scale, low=0.0, low_open=True)
    n = integer("n", n, low=2)
    nu = real("nu", nu, low=0.0, low_open=True)
    # per law: the draws (Student-t: nu more normal arrays at integer nu <= 30) and their signs, (n, d) each
    arrays = (int(nu) + 4 if float(nu).is_integer() and nu <= 30 else 4)
    check_bytes({"n": n, "grad": f"size {np.size(grad)}"}, 8 * laws * arrays * n * max(np.size(grad), 1),
                what="the draws and their signs", max_bytes=max_bytes)


def mean_sign_mc(key: jax.Array, grad, scale, noise: str, n: int, nu: float = 3.0, *,
                 max_bytes=None) -> dict[str, jax.Array]:
    r"""Monte Carlo mean and (unbiased) variance of :math:`\mathrm{sign}(g + \sigma Z)` from ``n`` draws per
    entry of ``grad`` (through :func:`sample_noise`; ``nu`` is used by ``student_t`` only). ``max_bytes``: the
    allocation limit (:func:`theory.validate.byte_limit`) for the ``(n, d)`` draws."""
    _prng("key", key)
    choice("noise", noise, NOISES[1:])
    _sign_args(grad, scale, n, nu, max_bytes=max_bytes)
    return _mean_sign_mc_jit(key, grad, scale, noise, n, float(nu))


def mean_sign_mc_many(keys: jax.Array, grad, scale, noises: tuple[str, ...], n: int,
                      nu: float = 3.0, *, max_bytes=None) -> dict[str, dict]:
    """:func:`mean_sign_mc` for several noise laws in one compilation, with exactly one key per law (``max_bytes``
    for all of them at once)."""
    _prng("keys", keys)
    if not isinstance(noises, tuple) or not noises:
        raise TypeError(f"noises: expected a non-empty tuple of noise laws, got {noises!r}")
    for law in noises:
        choice("noises", law, NOISES[1:])
    if not _traced(keys) and (jnp.ndim(keys) != 1 or keys.shape[0] != len(noises)):
        raise ValueError(f"keys: expected one key per law ({len(noises)}), got shape {jnp.shape(keys)}")
    _sign_args(grad, scale, n, nu, laws=len(noises), max_bytes=max_bytes)
    return _mean_sign_mc_many_jit(keys, grad, scale, noises, n, float(nu))


@partial(jax.jit, static_argnames=("cfg", "n"))
def _aggregate(key, cfg, grad, n, omega, sigma0, sigma1):
    g = jnp.atleast_1d(jnp.asarray(grad, jnp.float64))
    om = jnp.broadcast_to(jnp.asarray(omega, jnp.float64), (cfg.n_agents,))
    return jax.vmap(lambda k: direction(k, cfg, g, om, sigma0, sigma1))(jax.random.split(key, n))


def aggregate_samples(key: jax.Array, cfg: Config, grad, n: int, *, omega=0.0, sigma0=0.0, sigma1=0.0,
                      max_bytes=None) -> jax.Array:
    """``n`` independent draws of :func:`direction` at gradient ``grad`` (shape ``(n, d)``).

    ``max_bytes``: the allocation limit (:func:`theory.validate.byte_limit`) for the vmapped draws, every agent's
    noise and message for every sample.
    """
    _prng("key", key)
    if not isinstance(cfg, Config):
        raise TypeError(f"cfg: expected a sims.sde.Config, got {type(cfg).__name__}")
    _arr("grad", grad, ndim=(0, 1))
    n = integer("n", n, low=1)
    check_bytes({"n": n, "cfg.n_agents": cfg.n_agents, "grad": f"size {np.size(grad)}"},
                4 * 8 * n * cfg.n_agents * max(np.size(grad), 1), what="every sample's agent draws and messages",
                max_bytes=max_bytes)
    _omega_arg(omega, cfg.n_agents)
    _num("sigma0", sigma0, low=0.0)
    _num("sigma1", sigma1, low=0.0)
    return _aggregate(key, cfg, grad, n, omega, sigma0, sigma1)
