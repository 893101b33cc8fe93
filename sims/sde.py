r"""Distributed (compressed / sign) SGD and their modified equations, simulated over many paths.

Topic ``sde`` (Compagnoni et al., arXiv 2506.00181). Float64 (``import sims`` enables x64).

Discrete algorithms, N agents, agent i observing :math:`g_i = \nabla f(x) + Z_i`:

* ``dsgd``: :math:`x^+ = x - \eta\eta_k\frac1N\sum_i g_i`;
* ``dcsgd``: :math:`x^+ = x - \eta\eta_k\frac1N\sum_i C_i(g_i)`, unbiased compressors with variance
  :math:`\omega_i` (``bernoulli``: :math:`vB/q` per coordinate, :math:`\omega = 1/q - 1`; ``rand_k``:
  keep :math:`k = d/(1+\omega)` random coordinates scaled by :math:`d/k`); agent-specific :math:`\omega_i`;
* ``dcsgd_normalized``: the same with :math:`\eta` replaced by the normalization prescription
  :math:`\eta\,\eta_k / [(L_0 + L_1\|\nabla f(x)\|)(1 + (\bar\omega + d(\sigma_1^2\bar\omega+\sigma_1^2))/N)]`
  (uses the exact :math:`\|\nabla f\|`, the oracle the prescription is stated with);
* ``dsignsgd``: :math:`x^+ = x - \eta\eta_k\frac1N\sum_i \mathrm{sign}(g_i)`.

Noise :math:`Z_i = s(\nabla f)\,\zeta_i` with per-coordinate scale
:math:`s = \sqrt{\sigma_0^2 + \sigma_1^2\|\nabla f\|^2}` (affine variance) and :math:`\zeta` standard
Gaussian, Student-t(ν) or Cauchy. Schedules :math:`\eta_k`: ``constant``, ``inv_sqrt``
(:math:`1/\sqrt{k+1}`) or any traceable callable ``k -> factor``.

Modified equations (:func:`sde_path`): :math:`dX = b(X)dt + \sqrt{\eta}\,s(\nabla f(X))N^{-1/2}dW` with
:math:`b \in \{-\nabla f,\ -\nabla f - \tfrac\eta2\nabla^2f\nabla f,\ -\nabla f + \tfrac\eta2\nabla^2f\nabla f\}`;
the Hessian-vector product comes from ``jax.jvp`` (independent of the sympy drifts in
:mod:`theory.sde`). The diffusion reuses :func:`noise_scale`, the same noise model as the discrete
algorithms (Gaussian only: the SDE needs a covariance).

Why a hand-written integrator rather than diffrax: the weak-error check couples each SDE path to
a discrete path by summing the SDE's Brownian sub-increments into the discrete algorithm's noise
(:func:`coupled_weak_paths`); that needs the increments on a fixed grid that we own, it is a plain
``lax.scan`` that vmaps over thousands of paths with one compilation, and for additive noise the
stochastic Heun scheme used here is weak order 2 (:math:`E\,\Delta W\,dt/2` reproduces
:math:`E\,\Delta Z\,\Delta W = dt^2/2`, and :math:`\tfrac14 b''\sigma^2\Delta W^2dt` the
:math:`\tfrac14\sigma^2b''dt^2` term of the order-2 weak Taylor scheme), so the integrator error
stays below the :math:`O(\eta^2)` effects being measured. Multiplicative noise uses Euler-Maruyama
(Heun would converge to the Stratonovich SDE). The unit tests cross-check the deterministic Heun
path against ``diffrax.Heun``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

import sims  # noqa: F401  (float64)
from sims.bench import BenchCase
from sims.sweep import diverged, run_grid

__all__ = [
    "PROBLEMS", "NOISES", "COMPRESSORS", "ALGORITHMS", "SCHEDULES", "DRIFT_KINDS",
    "Config", "loss_fn", "noise_scale", "sample_noise", "compress", "direction", "schedule_factor",
    "simulate", "paths", "drift", "sde_path", "coupled_weak_paths", "escape_paths",
    "mlp_data", "mlp_init", "mean_sign_mc", "mean_sign_mc_many", "aggregate_samples", "bench_cases",
]

PROBLEMS = ("quadratic", "quartic", "cosh2", "logcosh", "mlp")
NOISES = ("none", "gaussian", "student_t", "cauchy")
COMPRESSORS = ("none", "bernoulli", "rand_k")
ALGORITHMS = ("dsgd", "dcsgd", "dcsgd_normalized", "dsignsgd")
SCHEDULES = ("constant", "inv_sqrt")
DRIFT_KINDS = ("first_order", "second_order", "corrected")

# ----------------------------------------------------------------------------- problems

_MLP_IN, _MLP_HIDDEN, _MLP_POINTS = 4, 8, 64
MLP_DIM = _MLP_IN * _MLP_HIDDEN + _MLP_HIDDEN + _MLP_HIDDEN + 1


def mlp_data(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Fixed regression data for the MLP test problem: a random tanh teacher plus small noise."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((_MLP_POINTS, _MLP_IN))
    w = rng.standard_normal((_MLP_IN, 3))
    y = np.tanh(X @ w).sum(axis=1) + 0.1 * rng.standard_normal(_MLP_POINTS)
    return X, y


_MLP_X, _MLP_Y = (jnp.asarray(a) for a in mlp_data(0))


def _mlp_loss(theta: jax.Array) -> jax.Array:
    i, h = _MLP_IN, _MLP_HIDDEN
    W1 = theta[: i * h].reshape(i, h)
    b1 = theta[i * h: i * h + h]
    w2 = theta[i * h + h: i * h + 2 * h]
    b2 = theta[-1]
    pred = jnp.tanh(_MLP_X @ W1 + b1) @ w2 + b2
    return 0.5 * jnp.mean((pred - _MLP_Y) ** 2)


@jax.jit
def mlp_init(key: jax.Array, scale: float = 1.0) -> jax.Array:
    """Initial MLP parameters (flat vector of length :data:`MLP_DIM`), Gaussian with std ``scale/sqrt(fan_in)``."""
    k1, k2 = jax.random.split(key)
    w1 = jax.random.normal(k1, (_MLP_IN * _MLP_HIDDEN,)) * scale / math.sqrt(_MLP_IN)
    w2 = jax.random.normal(k2, (_MLP_HIDDEN,)) * scale / math.sqrt(_MLP_HIDDEN)
    return jnp.concatenate([w1, jnp.zeros(_MLP_HIDDEN), w2, jnp.zeros(1)])


def loss_fn(problem: str) -> Callable[[jax.Array, jax.Array], jax.Array]:
    r"""``f(x, lam)`` summed over coordinates: quadratic :math:`\lambda x^2/2`, quartic :math:`x^4/4`,
    cosh2 :math:`2\cosh x`, logcosh :math:`\log\cosh x` (``lam`` used by the quadratic only), or the MLP."""
    if problem not in PROBLEMS:
        raise ValueError(f"problem: expected one of {PROBLEMS}, got {problem!r}")
    if problem == "quadratic":
        return lambda x, lam: 0.5 * jnp.sum(lam * x**2)
    if problem == "quartic":
        return lambda x, lam: jnp.sum(x**4) / 4
    if problem == "cosh2":
        return lambda x, lam: 2 * jnp.sum(jnp.cosh(x))
    if problem == "logcosh":
        # log cosh x = |x| + log1p(exp(-2|x|)) - log 2, stable for large |x|
        return lambda x, lam: jnp.sum(jnp.abs(x) + jnp.log1p(jnp.exp(-2 * jnp.abs(x))) - jnp.log(2.0))
    return lambda x, lam: _mlp_loss(x)


# ----------------------------------------------------------------------------- noise and compressors

def noise_scale(grad: jax.Array, sigma0, sigma1) -> jax.Array:
    r"""Per-coordinate noise scale :math:`\sqrt{\sigma_0^2 + \sigma_1^2\|\nabla f\|^2}` (affine variance)."""
    return jnp.sqrt(sigma0**2 + sigma1**2 * jnp.sum(grad**2))


def sample_noise(key: jax.Array, kind: str, grad: jax.Array, sigma0, sigma1, n_agents: int, nu: float = 3.0) -> jax.Array:
    """Noise of each agent, shape ``(n_agents, d)``: scale times a standard Gaussian / Student-t / Cauchy draw."""
    shape = (n_agents,) + grad.shape
    if kind == "none":
        return jnp.zeros(shape, grad.dtype)
    if kind == "gaussian":
        z = jax.random.normal(key, shape, grad.dtype)
    elif kind == "student_t":
        if float(nu).is_integer() and nu <= 30:
            # t_nu = Z / sqrt(chi2_nu / nu) with chi2_nu a sum of nu squared normals: same law as
            # jax.random.t, without compiling the gamma rejection sampler (seconds on CPU).
            kz, kc = jax.random.split(key)
            chi2 = jnp.sum(jax.random.normal(kc, (int(nu),) + shape, grad.dtype) ** 2, axis=0)
            z = jax.random.normal(kz, shape, grad.dtype) / jnp.sqrt(chi2 / nu)
        else:
            z = jax.random.t(key, nu, shape, grad.dtype)
    elif kind == "cauchy":
        z = jax.random.cauchy(key, shape, grad.dtype)
    else:
        raise ValueError(f"noise: expected one of {NOISES}, got {kind!r}")
    return noise_scale(grad, sigma0, sigma1) * z


def compress(key: jax.Array, kind: str, v: jax.Array, omega: jax.Array) -> jax.Array:
    r"""Unbiased compression of each agent's message ``v`` (``(N, d)``) with variances ``omega`` (``(N,)``).

    ``bernoulli``: keep each coordinate with probability :math:`q = 1/(1+\omega)`, scale by :math:`1/q`.
    ``rand_k``: keep :math:`k = \max(1, \mathrm{round}(d/(1+\omega)))` coordinates chosen uniformly
    without replacement, scale by :math:`d/k` (exact variance :math:`d/k - 1`).
    """
    n, d = v.shape
    omega = jnp.broadcast_to(omega, (n,))
    if kind == "none":
        return v
    if kind == "bernoulli":
        q = 1.0 / (1.0 + omega)
        keep = jax.random.uniform(key, v.shape) < q[:, None]
        return jnp.where(keep, v / q[:, None], 0.0)
    if kind == "rand_k":
        k = jnp.clip(jnp.round(d / (1.0 + omega)), 1, d)
        ranks = jnp.argsort(jnp.argsort(jax.random.uniform(key, v.shape), axis=1), axis=1)
        keep = ranks < k[:, None]
        return jnp.where(keep, v * (d / k)[:, None], 0.0)
    raise ValueError(f"compressor: expected one of {COMPRESSORS}, got {kind!r}")


def schedule_factor(schedule, k: jax.Array) -> jax.Array:
    """:math:`\\eta_k`: 1 (``constant``), :math:`1/\\sqrt{k+1}` (``inv_sqrt``) or ``schedule(k)``."""
    if callable(schedule):
        return schedule(k)
    if schedule == "constant":
        return jnp.ones((), jnp.float64)
    if schedule == "inv_sqrt":
        return 1.0 / jnp.sqrt(k + 1.0)
    raise ValueError(f"schedule: expected one of {SCHEDULES} or a callable, got {schedule!r}")


# ----------------------------------------------------------------------------- configuration

@dataclass(frozen=True)
class Config:
    """Static part of a run (one compilation per distinct Config); traced values go in the grid."""

    problem: str = "quartic"
    algo: str = "dcsgd"
    n_agents: int = 4
    compressor: str = "bernoulli"
    noise: str = "gaussian"
    nu: float = 3.0
    schedule: Any = "constant"
    n_steps: int = 1000
    n_record: int = 10
    bound: float = 1e100

    def __post_init__(self) -> None:
        if self.problem not in PROBLEMS:
            raise ValueError(f"problem: expected one of {PROBLEMS}, got {self.problem!r}")
        if self.algo not in ALGORITHMS:
            raise ValueError(f"algo: expected one of {ALGORITHMS}, got {self.algo!r}")
        if isinstance(self.n_agents, bool) or not isinstance(self.n_agents, (int, np.integer)) or self.n_agents < 1:
            raise ValueError(f"n_agents: expected a positive integer, got {self.n_agents!r}")
        if self.compressor not in COMPRESSORS:
            raise ValueError(f"compressor: expected one of {COMPRESSORS}, got {self.compressor!r}")
        if self.noise not in NOISES:
            raise ValueError(f"noise: expected one of {NOISES}, got {self.noise!r}")
        if not (isinstance(self.nu, (int, float)) and self.nu > 0):
            raise ValueError(f"nu: expected degrees of freedom > 0, got {self.nu!r}")
        if not callable(self.schedule) and self.schedule not in SCHEDULES:
            raise ValueError(f"schedule: expected one of {SCHEDULES} or a callable, got {self.schedule!r}")
        for name in ("n_steps", "n_record"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise ValueError(f"{name}: expected a positive integer, got {v!r}")
        if self.n_steps % self.n_record:
            raise ValueError(f"n_record: must divide n_steps={self.n_steps}, got {self.n_record}")
        if not self.bound > 0:
            raise ValueError(f"bound: expected > 0, got {self.bound!r}")


_DEFAULTS = {"lam": 1.0, "omega": 0.0, "sigma0": 0.0, "sigma1": 0.0, "L0": 1.0, "L1": 1.0, "normalized": 0.0}


def direction(key: jax.Array, cfg: Config, grad: jax.Array, omega, sigma0, sigma1) -> jax.Array:
    """The agent-averaged update direction of ``cfg.algo`` at true gradient ``grad`` (one draw)."""
    k_noise, k_comp = jax.random.split(key)
    msgs = grad[None, :] + sample_noise(k_noise, cfg.noise, grad, sigma0, sigma1, cfg.n_agents, cfg.nu)
    if cfg.algo == "dsignsgd":
        return jnp.mean(jnp.sign(msgs), axis=0)
    if cfg.algo in ("dcsgd", "dcsgd_normalized"):
        msgs = compress(k_comp, cfg.compressor, msgs, omega)
    return jnp.mean(msgs, axis=0)


def simulate(key: jax.Array, x0: jax.Array, eta, cfg: Config, **params) -> dict[str, jax.Array]:
    r"""One path of ``cfg.algo`` from ``x0`` with base step ``eta``; traceable (vmap/jit).

    ``params``: ``lam`` (quadratic curvature), ``omega`` (scalar or per agent), ``sigma0``, ``sigma1``,
    ``L0``, ``L1`` (normalization) and ``normalized`` (> 0 turns ``dcsgd`` into ``dcsgd_normalized``
    inside one compilation, so constant and normalized runs can share a grid). Returns ``loss`` at ``n_record`` checkpoints (frozen at the last
    finite state once a path diverges), ``x`` (final state), ``diverged`` and ``diverged_at``.
    """
    unknown = set(params) - set(_DEFAULTS)
    if unknown:
        raise TypeError(f"params: unknown names {sorted(unknown)}; allowed {sorted(_DEFAULTS)}")
    p = {**_DEFAULTS, **params}
    f = loss_fn(cfg.problem)
    grad_f = jax.grad(f)
    x0 = jnp.atleast_1d(jnp.asarray(x0, jnp.float64))
    d = x0.shape[0]
    omega = jnp.broadcast_to(jnp.asarray(p["omega"], jnp.float64), (cfg.n_agents,))
    norm_factor = 1.0 + (jnp.mean(omega) + d * (p["sigma1"] ** 2 * jnp.mean(omega) + p["sigma1"] ** 2)) / cfg.n_agents

    def step(carry, k):
        x, bad, at, key = carry
        key, sub = jax.random.split(key)
        g = grad_f(x, p["lam"])
        lr = eta * schedule_factor(cfg.schedule, k)
        if cfg.algo in ("dcsgd", "dcsgd_normalized"):
            on = (p["normalized"] > 0) | (cfg.algo == "dcsgd_normalized")
            lr = jnp.where(on, lr / ((p["L0"] + p["L1"] * jnp.linalg.norm(g)) * norm_factor), lr)
        x_new = x - lr * direction(sub, cfg, g, omega, p["sigma0"], p["sigma1"])
        now_bad = diverged(x_new[None], cfg.bound)[0] | ~jnp.isfinite(f(x_new, p["lam"]))
        at = jnp.where(bad | ~now_bad, at, k + 1)
        bad = bad | now_bad
        x = jnp.where(bad, x, x_new)
        return (x, bad, at, key), None

    per_block = cfg.n_steps // cfg.n_record

    def block(carry, b):
        carry, _ = lax.scan(step, carry, b * per_block + jnp.arange(per_block))
        return carry, f(carry[0], p["lam"])

    init = (x0, jnp.zeros((), bool), jnp.asarray(-1), key)
    (x, bad, at, _), losses = lax.scan(block, init, jnp.arange(cfg.n_record))
    return {"loss": losses, "x": x, "diverged": bad, "diverged_at": at, "loss0": f(x0, p["lam"])}


def paths(cfg: Config, grid: dict[str, Any], *, chunk_size: int = 4096, progress: bool | None = None) -> dict[str, np.ndarray]:
    """Run :func:`simulate` over a grid (``key``, ``x0``, ``eta`` and any ``params``) with ``run_grid``."""
    if not isinstance(cfg, Config):
        raise TypeError(f"cfg: expected a sims.sde.Config, got {type(cfg).__name__}")
    for name in ("key", "x0", "eta"):
        if name not in grid:
            raise ValueError(f"grid: missing required entry {name!r}; has {sorted(grid)}")
    unknown = set(grid) - {"key", "x0", "eta"} - set(_DEFAULTS)
    if unknown:
        raise ValueError(f"grid: unknown entries {sorted(unknown)}; allowed key, x0, eta, {sorted(_DEFAULTS)}")
    eta = np.asarray(grid["eta"])
    if not np.all(np.isfinite(eta)) or np.any(eta <= 0):
        raise ValueError("grid['eta']: step sizes must be finite and > 0")
    if "omega" in grid and np.any(np.asarray(grid["omega"]) < 0):
        raise ValueError("grid['omega']: compressor variances must be >= 0")

    def one(pt):
        rest = {k: v for k, v in pt.items() if k not in ("key", "x0", "eta")}
        return simulate(pt["key"], pt["x0"], pt["eta"], cfg, **rest)

    return run_grid(one, grid, chunk_size=chunk_size, progress=progress, desc=f"{cfg.algo}/{cfg.problem}")


# ----------------------------------------------------------------------------- modified equations

_DRIFT_COEF = {"first_order": 0.0, "second_order": -1.0, "corrected": 1.0}


def _drift_coef(problem: str, coef, x: jax.Array, eta, lam) -> jax.Array:
    grad_f = jax.grad(loss_fn(problem))
    g, hg = jax.jvp(lambda y: grad_f(y, lam), (x,), (grad_f(x, lam),))
    return -g + coef * eta / 2 * hg


def drift(problem: str, kind: str, x: jax.Array, eta, lam=1.0) -> jax.Array:
    r"""Drift :math:`-\nabla f + \kappa\tfrac\eta2\nabla^2 f\nabla f`, :math:`\kappa = 0, -1, +1` for
    ``first_order``, ``second_order``, ``corrected``; ``jax.grad`` and a ``jax.jvp`` Hessian-vector product."""
    if kind not in DRIFT_KINDS:
        raise ValueError(f"kind: expected one of {DRIFT_KINDS}, got {kind!r}")
    return _drift_coef(problem, _DRIFT_COEF[kind], x, eta, lam)


def _heun_or_em(problem, coef, x, eta, lam, dt, dw, sigma0, sigma1, n_agents, scheme):
    def diff(y):
        return jnp.sqrt(eta / n_agents) * noise_scale(jax.grad(loss_fn(problem))(y, lam), sigma0, sigma1)

    b = _drift_coef(problem, coef, x, eta, lam)
    if scheme == "euler":
        return x + b * dt + diff(x) * dw
    pred = x + b * dt + diff(x) * dw
    return x + 0.5 * (b + _drift_coef(problem, coef, pred, eta, lam)) * dt + diff(x) * dw


def sde_path(key: jax.Array, x0: jax.Array, eta, *, problem: str, kind: str, dt, n_steps: int,
             lam=1.0, sigma0=0.0, sigma1=0.0, n_agents: int = 1, scheme: str = "heun") -> dict[str, jax.Array]:
    r"""One path of :math:`dX = b(X)dt + \sqrt{\eta/N}\,s(\nabla f(X))\,dW` over ``n_steps`` steps of ``dt``.

    ``scheme="heun"`` (weak order 2) is only valid for additive noise (``sigma1 = 0``, checked when
    concrete); ``"euler"`` is Euler-Maruyama. Returns the final state, the loss at the end and
    whether the path left every bound (``diverged``: blow-up is data).
    """
    if scheme not in ("heun", "euler"):
        raise ValueError(f"scheme: expected 'heun' or 'euler', got {scheme!r}")
    if kind not in DRIFT_KINDS:
        raise ValueError(f"kind: expected one of {DRIFT_KINDS}, got {kind!r}")
    if scheme == "heun" and isinstance(sigma1, (int, float)) and sigma1 != 0:
        raise ValueError(f"sigma1: scheme='heun' needs additive noise (sigma1=0), got {sigma1}; use scheme='euler'")
    return _sde_path(key, x0, eta, problem, _DRIFT_COEF[kind], dt, n_steps, lam, sigma0, sigma1, n_agents, scheme)


def _sde_path(key, x0, eta, problem, coef, dt, n_steps, lam, sigma0, sigma1, n_agents, scheme):
    x0 = jnp.atleast_1d(jnp.asarray(x0, jnp.float64))
    dws = jax.random.normal(key, (n_steps,) + x0.shape) * jnp.sqrt(dt)

    def step(carry, dw):
        x, bad = carry
        x_new = _heun_or_em(problem, coef, x, eta, lam, dt, dw, sigma0, sigma1, n_agents, scheme)
        bad = bad | diverged(x_new[None], 1e100)[0]
        return (jnp.where(bad, x, x_new), bad), None

    (x, bad), _ = lax.scan(step, (x0, jnp.zeros((), bool)), dws)
    return {"x": x, "diverged": bad, "loss": loss_fn(problem)(x, lam)}


def coupled_weak_paths(key: jax.Array, x0, eta, *, problem: str, T: float, max_steps: int, substeps: int,
                       lam=1.0, sigma0=0.0, n_agents: int = 1) -> dict[str, jax.Array]:
    r"""DSGD and the three SDEs on one shared Brownian path (additive Gaussian noise), horizon ``T``.

    The discrete algorithm takes :math:`K = \mathrm{round}(T/\eta)` steps (``eta`` may be traced; the
    scan runs ``max_steps`` and freezes the state after step K, so one compilation serves every
    step size). Each SDE takes ``substeps`` Heun steps of :math:`dt = \eta/m` per discrete step; the
    discrete algorithm's agent-averaged noise at step k is
    :math:`-\sigma_0 N^{-1/2}\sum_j \Delta W_{kj}/\sqrt\eta`, exactly :math:`\mathcal N(0, \sigma_0^2/N)`
    as for N independent Gaussian agents. The coupling leaves every expectation unchanged and
    removes most Monte Carlo noise from the differences. Returns the final states ``x`` (discrete)
    and ``X_<kind>`` and their losses.
    """
    x0 = jnp.atleast_1d(jnp.asarray(x0, jnp.float64))
    n_active = jnp.round(T / eta)
    dt = eta / substeps
    f = loss_fn(problem)
    grad_f = jax.grad(f)
    dws = jax.random.normal(key, (max_steps, substeps) + x0.shape) * jnp.sqrt(dt)

    def step(carry, inp):
        k, dw_k = inp
        x, xs = carry
        # Minus sign: the SDE adds +diffusion*dW while SGD subtracts eta*noise; the law is symmetric.
        noise = -sigma0 / jnp.sqrt(n_agents) * jnp.sum(dw_k, axis=0) / jnp.sqrt(eta)
        live = k < n_active
        x = jnp.where(live, x - eta * (grad_f(x, lam) + noise), x)
        # The three drifts differ only in the coefficient of the HVP: one vmapped integrator, one trace.
        Y = jax.vmap(lambda c, X: lax.fori_loop(0, substeps, lambda j, X: _heun_or_em(
            problem, c, X, eta, lam, dt, dw_k[j], sigma0, 0.0, n_agents, "heun"), X))(coefs, xs)
        return (x, jnp.where(live, Y, xs)), None

    coefs = jnp.asarray([_DRIFT_COEF[k] for k in DRIFT_KINDS])
    (x, xs), _ = lax.scan(step, (x0, jnp.stack([x0] * 3)), (jnp.arange(max_steps), dws))
    out = {"x": x, "loss": f(x, lam), "n_steps": n_active}
    for kind, X in zip(DRIFT_KINDS, xs):
        out[f"X_{kind}"] = X
        out[f"loss_{kind}"] = f(X, lam)
    return out


def escape_paths(x0, eta, *, problem: str, lam=1.0, gd_steps: int = 400, ode_steps: int = 400,
                 dt_scale: float = 0.01) -> dict[str, jax.Array]:
    r"""Deterministic GD and the three modified ODEs (Heun, no noise) from ``x0`` at step ``eta``.

    The ODE step is :math:`dt = \mathrm{dt\_scale}/(\kappa(1+\eta\kappa))` with :math:`\kappa` the largest
    diagonal Hessian entry at :math:`x_0` (the fastest time scale of every drift there). Returns per
    method whether :math:`\|x\|` grew (or blew up) and the per-unit-time log-rate of f over the run
    (time :math:`k\eta` for GD); blown-up runs report ``inf``.
    """
    x0 = jnp.atleast_1d(jnp.asarray(x0, jnp.float64))
    f = loss_fn(problem)
    grad_f = jax.grad(f)
    # Separable toy problems: the Hessian diagonal is the HVP with the all-ones vector.
    kappa = jnp.max(jax.jvp(lambda y: grad_f(y, lam), (x0,), (jnp.ones_like(x0),))[1])
    dt = dt_scale / (kappa * (1 + eta * kappa))
    n0, f0 = jnp.linalg.norm(x0), f(x0, lam)

    def gd_step(carry, _):
        x, bad = carry
        x_new = x - eta * grad_f(x, lam)
        bad = bad | diverged(x_new[None], 1e100)[0]
        return (jnp.where(bad, x, x_new), bad), None

    out = {}
    (x, bad), _ = lax.scan(gd_step, (x0, jnp.zeros((), bool)), None, length=gd_steps)
    out["gd_grew"] = bad | (jnp.linalg.norm(x) > n0)
    out["gd_rate"] = jnp.where(bad, jnp.inf, (jnp.log(f(x, lam)) - jnp.log(f0)) / (gd_steps * eta))
    coefs = jnp.asarray([_DRIFT_COEF[k] for k in DRIFT_KINDS])
    rs = jax.vmap(lambda c: _sde_path(jax.random.key(0), x0, eta, problem, c, dt, ode_steps, lam, 0.0, 0.0, 1, "heun"))(coefs)
    for i, kind in enumerate(DRIFT_KINDS):
        bad, x = rs["diverged"][i], rs["x"][i]
        out[f"{kind}_grew"] = bad | (jnp.linalg.norm(x) > n0)
        out[f"{kind}_rate"] = jnp.where(bad, jnp.inf, (jnp.log(rs["loss"][i]) - jnp.log(f0)) / (ode_steps * dt))
    return out


# ----------------------------------------------------------------------------- Monte Carlo helpers

def _mean_sign_mc(key, grad, scale, noise, n, nu):
    g = jnp.atleast_1d(jnp.asarray(grad, jnp.float64))
    # sample_noise with sigma1 = 0 gives scale * zeta; n "agents" are the n draws.
    s = jnp.sign(g[None, :] + sample_noise(key, noise, g, scale, 0.0, n, nu))
    return {"mean": s.mean(axis=0), "var": s.var(axis=0)}


@partial(jax.jit, static_argnames=("noise", "n", "nu"))
def mean_sign_mc(key: jax.Array, grad, scale, noise: str, n: int, nu: float = 3.0) -> dict[str, jax.Array]:
    """Monte Carlo mean and variance of :math:`\\mathrm{sign}(g + \\sigma Z)` from ``n`` draws (via :func:`sample_noise`)."""
    return _mean_sign_mc(key, grad, scale, noise, n, nu)


@partial(jax.jit, static_argnames=("noises", "n", "nu"))
def mean_sign_mc_many(keys: jax.Array, grad, scale, noises: tuple[str, ...], n: int, nu: float = 3.0) -> dict[str, dict]:
    """:func:`mean_sign_mc` for several noise laws in one compilation (one key per law)."""
    return {law: _mean_sign_mc(keys[i], grad, scale, law, n, nu) for i, law in enumerate(noises)}


def aggregate_samples(key: jax.Array, cfg: Config, grad, n: int, *, omega=0.0, sigma0=0.0, sigma1=0.0) -> jax.Array:
    """``n`` independent draws of :func:`direction` at gradient ``grad`` (shape ``(n, d)``)."""
    g = jnp.atleast_1d(jnp.asarray(grad, jnp.float64))
    om = jnp.broadcast_to(jnp.asarray(omega, jnp.float64), (cfg.n_agents,))
    return jax.vmap(lambda k: direction(k, cfg, g, om, sigma0, sigma1))(jax.random.split(key, n))


# ----------------------------------------------------------------------------- bench

def _numpy_dcsgd_quartic(x0, eta, q, sigma1, n_agents, n_steps, rng):
    """Vectorized NumPy DCSGD on x^4/4 (Bernoulli compressor, multiplicative Gaussian noise), many paths."""
    x = x0.copy()
    bad = np.zeros(x.shape, bool)
    for _ in range(n_steps):
        g = x**3
        z = rng.standard_normal((n_agents,) + x.shape)
        keep = rng.random((n_agents,) + x.shape) < q
        msg = np.where(keep, (g + np.abs(g) * sigma1 * z) / q, 0.0)
        with np.errstate(all="ignore"):
            x_new = x - eta * msg.mean(axis=0)
        now = ~np.isfinite(x_new) | (np.abs(x_new) > 1e100)
        bad |= now
        x = np.where(bad, x, x_new)
    return bad


def bench_cases(scale: str) -> list[BenchCase]:
    """DCSGD on x^4/4: paths x steps per second, JAX (run_grid + lax.scan) vs vectorized NumPy."""
    n_paths, n_steps = (2000, 500) if scale == "small" else (200_000, 3000)
    cfg = Config(problem="quartic", algo="dcsgd", n_agents=4, compressor="bernoulli", noise="gaussian",
                 n_steps=n_steps, n_record=1)
    keys = jax.random.split(jax.random.key(0), n_paths)
    grid = {"key": keys, "x0": jnp.full((n_paths, 1), 1.5), "eta": jnp.full(n_paths, 0.1),
            "omega": jnp.full(n_paths, 1.0), "sigma1": jnp.full(n_paths, 1.0)}

    # run_grid builds a fresh jit on every call, so the bench times the same vmapped kernel compiled
    # once (the bench excludes compile time by design); sweeps use paths()/run_grid.
    kernel = jax.jit(jax.vmap(lambda k, x0, eta, om, s1: simulate(k, x0, eta, cfg, omega=om, sigma1=s1)["diverged"]))

    def run_jax():
        return kernel(grid["key"], grid["x0"], grid["eta"], grid["omega"], grid["sigma1"])

    def run_numpy():
        return _numpy_dcsgd_quartic(np.full(n_paths, 1.5), 0.1, 0.5, 1.0, 4, n_steps, np.random.default_rng(0))

    def check(a, b):
        # Different random streams: compare divergence fractions within 5 binomial standard errors.
        fa, fb = float(np.mean(a)), float(np.mean(b))
        se = math.sqrt(max(fa * (1 - fa), 1e-4) / n_paths) * math.sqrt(2)
        assert abs(fa - fb) < 5 * se + 1e-9, (fa, fb)

    return [BenchCase("sde: DCSGD x^4/4 paths x steps", "path-steps", n_paths * n_steps, run_jax, run_numpy, check)]
