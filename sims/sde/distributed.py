r"""The SDEs of DCSGD and DSignSGD in any dimension: their drift and diffusion coefficients
(with the mean-sign law of the noise), an Euler-Maruyama integrator in blocks of random draws, and the
sweep over step sizes.
"""
from __future__ import annotations

from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

import sims  # noqa: F401  (float64)
from sims.sweep import diverged as _beyond, run_grid
from theory.validate import check_bytes, choice, integer
from sims.sde.problems import DRIFT_KINDS, PROBLEMS, _BOUND, _MAX_DRAWS, _arr, _num, _prng, _traced, loss_fn
from sims.sde.noise import SIGN_NOISES, _block_size, _mean_sign, _nu
from sims.sde.modified import _DRIFT_COEF

__all__ = ["SDE_METHODS", "sde_coefficients", "dcsgd_sde", "dsignsgd_sde", "sde_sweep"]


# ----------------------------------------------------------------------------- SDEs of DCSGD and DSignSGD (any d)

SDE_METHODS = ("dcsgd", "dsignsgd")
_SDE_DEFAULTS = {"lam": 1.0, "omega": 0.0, "sigma0": 0.0, "sigma1": 0.0, "n_agents": 1.0}


def _coefficients(x, p, method, problem, noise, nu):
    """Mean update direction h(x) and the per-coordinate variance of one step's direction (before eta)."""
    g = jax.grad(loss_fn(problem))(x, p["lam"])
    s2 = p["sigma0"] ** 2 + p["sigma1"] ** 2 * jnp.sum(g**2)
    if method == "dcsgd":
        # agent i: omega_i (g_j + Z_ij)^2 compression variance plus s^2 noise variance, averaged over N agents
        return g, (p["omega"] * g**2 + (1.0 + p["omega"]) * s2) / p["n_agents"]
    s = jnp.sqrt(s2)
    safe = jnp.where(s > 0, s, 1.0)
    m = jnp.where(s > 0, _mean_sign(g / safe, noise, nu), jnp.sign(g))
    return m, (1.0 - m**2) / p["n_agents"]


def sde_coefficients(x, eta, *, method: str, problem: str = "quadratic", kind: str = "first_order",
                     noise: str = "gaussian", nu: float | None = None, lam=1.0, omega=0.0, sigma0=0.0, sigma1=0.0,
                     n_agents: int = 1) -> dict[str, jax.Array]:
    r"""Drift and diffusion variance of the SDE of ``method`` at the point ``x`` (shape ``(d,)``).

    ``dcsgd``: mean direction :math:`h = \nabla f`, step variance
    :math:`\Sigma_{jj} = [\bar\omega g_j^2 + (1+\bar\omega)s^2]/N` (Bernoulli compressors, noise of
    per-coordinate scale :math:`s^2 = \sigma_0^2 + \sigma_1^2\|\nabla f\|^2`, independent coordinates).
    ``dsignsgd``: :math:`h_j = 2F(g_j/s) - 1` for the noise law (erf, Student-t, arctan), variance
    :math:`(1 - h_j^2)/N`. Drift :math:`b = -h + \kappa\tfrac\eta2 J_h h` with :math:`\kappa = 0, -1, +1` for
    ``first_order``, ``second_order``, ``corrected`` (:math:`J_h h` by ``jax.jvp``; for DCSGD it is
    :math:`\nabla^2 f\nabla f`). Returns ``drift`` and ``variance`` (the SDE's diffusion is
    :math:`\sqrt{\eta\Sigma}`).
    """
    method = choice("method", method, SDE_METHODS)
    p = _sde_params(method, problem, kind, noise, nu, lam, omega, sigma0, sigma1, n_agents)
    _arr("x", x, ndim=1)
    _num("eta", eta, low=0.0, low_open=True)
    nu = _nu(noise, nu) if method == "dsignsgd" else None
    return _coefficients_jit(jnp.asarray(x, jnp.float64), jnp.asarray(eta, jnp.float64), p, method, problem, noise, nu,
                             _DRIFT_COEF[kind])


def _drift_and_var(x, eta, p, coef, method, problem, noise, nu):
    h, var = _coefficients(x, p, method, problem, noise, nu)
    if isinstance(coef, float) and coef == 0.0:
        return -h, var  # static first-order drift: no Jacobian-vector product traced
    _, jh = jax.jvp(lambda y: _coefficients(y, p, method, problem, noise, nu)[0], (x,), (h,))
    return -h + coef * eta / 2 * jh, var


@partial(jax.jit, static_argnames=("method", "problem", "noise", "nu", "coef"))
def _coefficients_jit(x, eta, p, method, problem, noise, nu, coef):
    b, var = _drift_and_var(x, eta, p, coef, method, problem, noise, nu)
    return {"drift": b, "variance": var}


def _em(key, x0, eta, dt, p, coef, *, method, problem, noise, nu, n_steps, n_record):
    """Euler-Maruyama path; increments drawn per block of steps (time-major), the state checked every step."""
    x0 = jnp.atleast_1d(jnp.asarray(x0, jnp.float64))
    f = loss_fn(problem)
    per_record = n_steps // n_record
    block = _block_size(per_record)
    n_blocks = per_record // block
    sqdt = jnp.sqrt(dt)

    def step(carry, z):
        x, bad, at, k = carry
        b, var = _drift_and_var(x, eta, p, coef, method, problem, noise, nu)
        x_new = x + b * dt + jnp.sqrt(eta * var) * sqdt * z
        now = ~bad & (_beyond(x_new[None], _BOUND)[0] | ~jnp.isfinite(f(x_new, p["lam"])))
        at = jnp.where(now, k + 1, at)
        bad = bad | now
        return (jnp.where(bad, x, x_new), bad, at, k + 1), None

    def run_block(carry, k_block):
        z = jax.random.normal(k_block, (block,) + x0.shape, jnp.float64)
        carry, _ = lax.scan(step, carry, z)
        return carry, None

    def record(carry, k_rec):
        carry, _ = lax.scan(run_block, carry, jax.random.split(k_rec, n_blocks))
        return carry, f(carry[0], p["lam"])

    init = (x0, jnp.zeros((), bool), jnp.asarray(-1), jnp.asarray(0))
    (x, bad, at, _), losses = lax.scan(record, init, jax.random.split(key, n_record))
    return {"x": x, "loss": losses, "diverged": bad, "diverged_at": at}


_em_jit = jax.jit(_em, static_argnames=("coef", "method", "problem", "noise", "nu", "n_steps", "n_record"))


def _sde_params(method, problem, kind, noise, nu, lam, omega, sigma0, sigma1, n_agents) -> dict:
    choice("problem", problem, PROBLEMS)
    choice("kind", kind, DRIFT_KINDS)
    if method == "dsignsgd":
        choice("noise", noise, SIGN_NOISES)
        _nu(noise, nu)
    n_agents = integer("n_agents", n_agents, low=1)
    _num("lam", lam, low=0.0, low_open=True)
    _num("sigma0", sigma0, low=0.0)
    _num("sigma1", sigma1, low=0.0)
    om = _arr("omega", omega, ndim=(0, 1), low=0.0)
    if not _traced(om) and np.ndim(om) == 1 and np.shape(om)[0] != n_agents:
        raise ValueError(f"omega: expected a scalar or {n_agents} per-agent values, got shape {np.shape(om)}")
    # Only the agents' mean compression variance enters the SDE (the messages are averaged).
    return {"lam": jnp.asarray(lam, jnp.float64), "omega": jnp.mean(jnp.asarray(om, jnp.float64)),
            "sigma0": jnp.asarray(sigma0, jnp.float64), "sigma1": jnp.asarray(sigma1, jnp.float64),
            "n_agents": jnp.asarray(float(n_agents), jnp.float64)}


def _sde_common(key, x0, eta, dt, n_steps, n_record, max_bytes=None):
    _prng("key", key)
    _arr("x0", x0, ndim=(0, 1))
    _num("eta", eta, low=0.0, low_open=True)
    _num("dt", dt, low=0.0, low_open=True)
    n_steps = integer("n_steps", n_steps, low=1)
    n_record = integer("n_record", n_record, low=1)
    if n_steps % n_record:
        raise ValueError(f"n_record: must divide n_steps={n_steps}, got {n_record}")
    # per record: the loss and a split key (two words), and the increments of one block (at most _MAX_DRAWS)
    check_bytes({"n_record": n_record}, 3 * 8 * n_record + 2 * 8 * _MAX_DRAWS, what="the records and a block's draws",
                max_bytes=max_bytes)
    return n_steps, n_record


def dcsgd_sde(key: jax.Array, x0, eta, *, problem: str = "quadratic", kind: str = "corrected", dt, n_steps: int,
              n_record: int = 1, lam=1.0, omega=0.0, sigma0=0.0, sigma1=0.0, n_agents: int = 1,
              max_bytes=None) -> dict[str, jax.Array]:
    r"""One Euler-Maruyama path of the SDE of DCSGD (N agents, Bernoulli compressors, affine-variance noise):

    .. math:: dX = \Bigl(-\nabla f + \kappa\tfrac\eta2\nabla^2 f\nabla f\Bigr)dt
       + \sqrt{\eta/N}\,\mathrm{diag}\bigl(\bar\omega\,(\partial_j f)^2 + (1+\bar\omega)s^2\bigr)^{1/2} dW,

    :math:`s^2 = \sigma_0^2 + \sigma_1^2\|\nabla f\|^2`, :math:`\kappa` from ``kind`` (``corrected``: +1, the
    curvature-corrected drift; ``first_order``: 0; ``second_order``: -1). ``x0`` has shape ``(d,)`` (or is a
    scalar), ``omega`` is a scalar or one value per agent (their mean enters). ``n_steps`` steps of ``dt``;
    the loss is recorded every ``n_steps/n_record`` steps. Returns ``x`` (final state), ``loss``
    (``(n_record,)``), ``diverged`` and ``diverged_at`` (first step whose state left
    :math:`|x| \le 10^{100}` or whose loss overflowed; the path freezes there; -1 if none). ``max_bytes``: the
    allocation limit (:func:`theory.validate.byte_limit`) for the ``n_record`` records.
    """
    n_steps, n_record = _sde_common(key, x0, eta, dt, n_steps, n_record, max_bytes)
    p = _sde_params("dcsgd", problem, kind, "gaussian", None, lam, omega, sigma0, sigma1, n_agents)
    return _em_jit(key, x0, eta, dt, p, _DRIFT_COEF[kind], method="dcsgd", problem=problem, noise="gaussian", nu=None,
                   n_steps=n_steps, n_record=n_record)


def dsignsgd_sde(key: jax.Array, x0, eta, *, problem: str = "quadratic", noise: str = "gaussian",
                 nu: float | None = None, kind: str = "first_order", dt, n_steps: int, n_record: int = 1, lam=1.0,
                 sigma0=0.0, sigma1=0.0, n_agents: int = 1, max_bytes=None) -> dict[str, jax.Array]:
    r"""One Euler-Maruyama path of the SDE of DSignSGD under the noise law ``noise``:

    .. math:: dX = \Bigl(-m + \kappa\tfrac\eta2 J_m m\Bigr)dt + \sqrt{\eta/N}\,\mathrm{diag}(1 - m^2)^{1/2}dW,
       \qquad m_j = 2F\bigl(\partial_j f(X)/s\bigr) - 1,

    F the CDF of the standard ``gaussian`` (:math:`m = \mathrm{erf}(\cdot/\sqrt2)`), ``student_t`` with ``nu``
    degrees of freedom (any real :math:`\nu > 0`) or ``cauchy`` law, :math:`s^2 = \sigma_0^2 +
    \sigma_1^2\|\nabla f\|^2` (:math:`m = \mathrm{sign}\,\partial_j f` when :math:`s = 0`). ``kind="first_order"``
    (:math:`\kappa = 0`) is the first-order SignSGD SDE; the other kinds add the curvature term of the
    update map. Same shapes, recording, divergence rule and ``max_bytes`` as :func:`dcsgd_sde`.
    """
    n_steps, n_record = _sde_common(key, x0, eta, dt, n_steps, n_record, max_bytes)
    choice("noise", noise, SIGN_NOISES)
    nu = _nu(noise, nu)
    p = _sde_params("dsignsgd", problem, kind, noise, nu, lam, 0.0, sigma0, sigma1, n_agents)
    return _em_jit(key, x0, eta, dt, p, _DRIFT_COEF[kind], method="dsignsgd", problem=problem, noise=noise, nu=nu,
                   n_steps=n_steps, n_record=n_record)


_SWEEP_OPTIONAL = ("lam", "omega", "sigma0", "sigma1", "n_agents", "kind")


def _sde_point(pt, *, method, problem, noise, nu, coef, n_steps, n_record):
    p = {k: jnp.asarray(pt.get(k, v), jnp.float64) for k, v in _SDE_DEFAULTS.items()}
    if coef is None:  # the drift kind is data: an index into DRIFT_KINDS
        coef = jnp.asarray([_DRIFT_COEF[k] for k in DRIFT_KINDS])[pt["kind"]]
    return _em(pt["key"], pt["x0"], pt["eta"], pt["dt"], p, coef, method=method, problem=problem, noise=noise, nu=nu,
               n_steps=n_steps, n_record=n_record)


def sde_sweep(method: str, grid: dict[str, Any], *, problem: str = "quadratic", kind: str | None = "first_order",
              noise: str = "gaussian", nu: float | None = None, n_steps: int, n_record: int = 1,
              chunk_size: int = 4096, progress: bool | None = None, max_bytes=None) -> dict[str, np.ndarray]:
    r""":func:`dcsgd_sde` / :func:`dsignsgd_sde` (``method``) at every point of ``grid`` through
    :func:`sims.sweep.run_grid` (vmapped, one compilation per static configuration and grid shapes).

    ``grid`` needs ``key``, ``x0`` (``(n, d)``), ``eta`` and ``dt``; optional ``lam``, ``omega`` (the agents'
    mean compression variance, DCSGD only), ``sigma0``, ``sigma1``, ``n_agents`` (a number per run: in the
    SDE it only scales the diffusion) and ``kind`` (an integer index into :data:`DRIFT_KINDS`, with
    ``kind=None`` here, so that several drifts share one compilation). ``max_bytes``: the allocation limit
    (:func:`theory.validate.byte_limit`) for every run's records and a chunk's block draws.
    """
    method = choice("method", method, SDE_METHODS)
    choice("problem", problem, PROBLEMS)
    if method == "dsignsgd":
        choice("noise", noise, SIGN_NOISES)
        nu = _nu(noise, nu)
    else:
        noise, nu = "gaussian", None
    if not isinstance(grid, dict):
        raise TypeError(f"grid: expected a dict of arrays, got {type(grid).__name__}")
    for name in ("key", "x0", "eta", "dt"):
        if name not in grid:
            raise ValueError(f"grid: missing required entry {name!r}; has {sorted(grid)}")
    unknown = set(grid) - {"key", "x0", "eta", "dt"} - set(_SWEEP_OPTIONAL)
    if unknown:
        raise ValueError(f"grid: unknown entries {sorted(unknown)}; allowed key, x0, eta, dt, {list(_SWEEP_OPTIONAL)}")
    if method == "dsignsgd" and "omega" in grid:
        raise ValueError("grid: 'omega' (compression) is not an input of the DSignSGD SDE")
    if kind is None:
        if "kind" not in grid:
            raise ValueError("kind: kind=None reads the drift per run from grid['kind'], which is missing")
        ks = np.asarray(grid["kind"])
        if ks.dtype.kind not in "iu" or ks.ndim != 1 or np.any((ks < 0) | (ks >= len(DRIFT_KINDS))):
            raise ValueError(f"grid['kind']: expected integer indices into {DRIFT_KINDS}, got {ks!r}")
        coef = None
    else:
        choice("kind", kind, DRIFT_KINDS)
        if "kind" in grid:
            raise ValueError(f"kind: pass kind=None to read grid['kind'] (got kind={kind!r} as well)")
        coef = _DRIFT_COEF[kind]
    _prng("grid['key']", grid["key"])
    _arr("grid['x0']", grid["x0"], ndim=2)
    _arr("grid['eta']", grid["eta"], ndim=1, low=0.0)
    _arr("grid['dt']", grid["dt"], ndim=1, low=0.0, low_open=True)
    for name, low, open_ in (("lam", 0.0, True), ("omega", 0.0, False), ("sigma0", 0.0, False),
                             ("sigma1", 0.0, False), ("n_agents", 1.0, False)):
        if name in grid:
            _arr(f"grid[{name!r}]", grid[name], ndim=1, low=low, low_open=open_)
    n_steps = integer("n_steps", n_steps, low=1)
    n_record = integer("n_record", n_record, low=1)
    if n_steps % n_record:
        raise ValueError(f"n_record: must divide n_steps={n_steps}, got {n_record}")
    chunk_size = integer("chunk_size", chunk_size, low=1)
    runs, d = np.shape(grid["x0"])
    check_bytes({"n_record": n_record, "grid": f"{runs} runs", "chunk_size": chunk_size},
                2 * 3 * 8 * runs * n_record * (d + 1) + 2 * 8 * min(chunk_size, runs) * _MAX_DRAWS,
                what="every run's records and a chunk's block draws", max_bytes=max_bytes)
    typed = {k: (v if k in ("key", "kind") else np.asarray(v, np.float64)) for k, v in grid.items()}
    return run_grid(_sde_point, typed, static={"method": method, "problem": problem, "noise": noise, "nu": nu,
                                               "coef": coef, "n_steps": n_steps, "n_record": n_record},
                    chunk_size=chunk_size, progress=progress, desc=f"{method} SDE/{problem}")
