r"""Modified equations as SDEs: the drifts of :mod:`theory.sde.modified` in JAX, paths by a
path-coupled Heun (or Euler-Maruyama) integrator, weak-error paths coupled to GD, and the escape of GD and
of each drift from a toy's basin.
"""
from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

import sims  # noqa: F401  (float64)
from sims.sweep import diverged as _beyond
from theory.validate import check_bytes, choice, integer, real
from sims.sde.problems import (
    DRIFT_KINDS, ESCAPE_PROBLEMS, PROBLEMS, TOY_PROBLEMS, _BOUND, _arr, _num, _prng, _traced, loss_fn
)

__all__ = ["drift", "sde_path", "coupled_weak_paths", "escape_paths", "escape_point", "weak_point"]


# ----------------------------------------------------------------------------- modified equations

_DRIFT_COEF = {"first_order": 0.0, "second_order": -1.0, "corrected": 1.0}


def _drift_coef(problem: str, coef, x: jax.Array, eta, lam) -> jax.Array:
    grad_f = jax.grad(loss_fn(problem))
    g, hg = jax.jvp(lambda y: grad_f(y, lam), (x,), (grad_f(x, lam),))
    return -g + coef * eta / 2 * hg


def drift(problem: str, kind: str, x: jax.Array, eta, lam=1.0) -> jax.Array:
    r"""Drift :math:`-\nabla f + \kappa\tfrac\eta2\nabla^2 f\nabla f`, :math:`\kappa = 0, -1, +1` for
    ``first_order``, ``second_order``, ``corrected``; ``jax.grad`` and a ``jax.jvp`` Hessian-vector product."""
    choice("problem", problem, PROBLEMS)
    choice("kind", kind, DRIFT_KINDS)
    _arr("x", x, ndim=1)
    _num("eta", eta, low=0.0, low_open=True)
    _num("lam", lam, low=0.0, low_open=True)
    x = jnp.asarray(x, jnp.float64)
    if problem == "mlp":
        return _drift_mlp(_DRIFT_COEF[kind], x, eta, lam)
    return _drift_toy(TOY_PROBLEMS.index(problem), _DRIFT_COEF[kind], x, eta, lam)


@jax.jit
def _drift_toy(index, coef, x, eta, lam):
    # the four toy problems behind one switch: one compilation per shape of x serves them all
    return lax.switch(index, [partial(_drift_coef, p) for p in TOY_PROBLEMS], coef, x, eta, lam)


_drift_mlp = jax.jit(partial(_drift_coef, "mlp"))


def _heun_or_em(problem, coef, x, eta, lam, dt, dw, sigma0, sigma1, n_agents, scheme):
    def diff(y):
        return jnp.sqrt(eta / n_agents) * jnp.sqrt(sigma0**2 + sigma1**2 * jnp.sum(jax.grad(loss_fn(problem))(y, lam) ** 2))

    b = _drift_coef(problem, coef, x, eta, lam)
    if scheme == "euler":
        return x + b * dt + diff(x) * dw
    pred = x + b * dt + diff(x) * dw
    return x + 0.5 * (b + _drift_coef(problem, coef, pred, eta, lam)) * dt + diff(x) * dw


def _sde_path(key, x0, eta, problem, coef, dt, n_steps, lam, sigma0, sigma1, n_agents, scheme):
    x0 = jnp.atleast_1d(jnp.asarray(x0, jnp.float64))
    dws = jax.random.normal(key, (n_steps,) + x0.shape) * jnp.sqrt(dt)

    def step(carry, inp):
        k, dw = inp
        x, bad, at = carry
        x_new = _heun_or_em(problem, coef, x, eta, lam, dt, dw, sigma0, sigma1, n_agents, scheme)
        now = _beyond(x_new[None], _BOUND)[0]
        at = jnp.where(bad | ~now, at, k + 1)
        bad = bad | now
        return (jnp.where(bad, x, x_new), bad, at), None

    init = (x0, jnp.zeros((), bool), jnp.asarray(-1))
    (x, bad, at), _ = lax.scan(step, init, (jnp.arange(n_steps), dws))
    return {"x": x, "diverged": bad, "diverged_at": at, "loss": loss_fn(problem)(x, lam)}


_sde_path_jit = jax.jit(_sde_path, static_argnames=("problem", "n_steps", "n_agents", "scheme"))


def sde_path(key: jax.Array, x0, eta, *, problem: str, kind: str, dt, n_steps: int, lam=1.0, sigma0=0.0,
             sigma1=0.0, n_agents: int = 1, scheme: str = "heun", max_bytes=None) -> dict[str, jax.Array]:
    r"""One path of :math:`dX = b(X)dt + \sqrt{\eta/N}\,s(\nabla f(X))\,dW` over ``n_steps`` steps of ``dt > 0``.

    ``scheme="heun"`` (weak order 2) needs additive noise (``sigma1 = 0``); ``"euler"`` is Euler-Maruyama.
    Returns the final state ``x``, its ``loss``, ``diverged`` and ``diverged_at`` (first step whose
    state left :math:`|x| \le 10^{100}`, -1 if none; the path freezes there). ``max_bytes``: the allocation limit
    (:func:`theory.validate.byte_limit`) for the Brownian increments, drawn for the whole path at once.
    """
    _prng("key", key)
    choice("problem", problem, PROBLEMS)
    choice("kind", kind, DRIFT_KINDS)
    choice("scheme", scheme, ("heun", "euler"))
    _arr("x0", x0, ndim=(0, 1))
    _num("eta", eta, low=0.0, low_open=True)
    _num("dt", dt, low=0.0, low_open=True)
    n_steps = integer("n_steps", n_steps, low=1)
    check_bytes({"n_steps": n_steps, "x0": f"size {np.size(x0)}"}, 2 * 8 * n_steps * max(np.size(x0), 1),
                what="the path's Brownian increments", max_bytes=max_bytes)
    _num("lam", lam, low=0.0, low_open=True)
    _num("sigma0", sigma0, low=0.0)
    _num("sigma1", sigma1, low=0.0)
    n_agents = integer("n_agents", n_agents, low=1)
    if scheme == "heun" and not _traced(sigma1) and float(sigma1) != 0:
        raise ValueError(f"sigma1: scheme='heun' needs additive noise (sigma1=0), got {sigma1}; use scheme='euler'")
    return _sde_path_jit(key, x0, eta, problem, _DRIFT_COEF[kind], dt, n_steps, lam, sigma0, sigma1, n_agents, scheme)


def _coupled(key, x0, eta, problem, T, max_steps, substeps, lam, sigma0, n_agents):
    x0 = jnp.atleast_1d(jnp.asarray(x0, jnp.float64))
    n_active = jnp.round(T / eta)
    dt = eta / substeps
    f = loss_fn(problem)
    grad_f = jax.grad(f)
    dws = jax.random.normal(key, (max_steps, substeps) + x0.shape) * jnp.sqrt(dt)
    coefs = jnp.asarray([_DRIFT_COEF[k] for k in DRIFT_KINDS])

    def step(carry, inp):
        k, dw_k = inp
        x, xs, bad, at = carry
        # Minus sign: the SDE adds +diffusion*dW while SGD subtracts eta*noise; the law is symmetric.
        noise = -sigma0 / jnp.sqrt(n_agents) * jnp.sum(dw_k, axis=0) / jnp.sqrt(eta)
        live = (k < n_active) & ~bad
        x_new = x - eta * (grad_f(x, lam) + noise)
        # The three drifts differ only in the coefficient of the HVP: one vmapped integrator, one trace.
        Y = jax.vmap(lambda c, X: lax.fori_loop(0, substeps, lambda j, X: _heun_or_em(
            problem, c, X, eta, lam, dt, dw_k[j], sigma0, 0.0, n_agents, "heun"), X))(coefs, xs)
        now = live & (_beyond(x_new[None], _BOUND)[0] | _beyond(Y.reshape(1, -1), _BOUND)[0])
        at = jnp.where(now, k + 1, at)
        bad = bad | now
        keep = live & ~now
        return (jnp.where(keep, x_new, x), jnp.where(keep, Y, xs), bad, at), None

    init = (x0, jnp.stack([x0] * 3), jnp.zeros((), bool), jnp.asarray(-1))
    (x, xs, bad, at), _ = lax.scan(step, init, (jnp.arange(max_steps), dws))
    out = {"x": x, "loss": f(x, lam), "n_steps": n_active, "diverged": bad, "diverged_at": at}
    for kind, X in zip(DRIFT_KINDS, xs):
        out[f"X_{kind}"] = X
        out[f"loss_{kind}"] = f(X, lam)
    return out


_coupled_jit = jax.jit(_coupled, static_argnames=("problem", "max_steps", "substeps", "n_agents"))


def coupled_weak_paths(key: jax.Array, x0, eta, *, problem: str, T: float, max_steps: int, substeps: int,
                       lam=1.0, sigma0=0.0, n_agents: int = 1, max_bytes=None) -> dict[str, jax.Array]:
    r"""DSGD and the three SDEs on one shared Brownian path (additive Gaussian noise), horizon ``T``.

    The discrete algorithm takes :math:`K = \mathrm{round}(T/\eta)` steps (the scan runs ``max_steps >= K``
    and freezes the state after step K, so one compilation serves every step size). Each SDE takes
    ``substeps`` Heun steps of :math:`dt = \eta/m` per discrete step; the discrete algorithm's
    agent-averaged noise at step k is :math:`-\sigma_0 N^{-1/2}\sum_j \Delta W_{kj}/\sqrt\eta`, exactly
    :math:`\mathcal N(0, \sigma_0^2/N)` as for N independent Gaussian agents. The coupling leaves every
    expectation unchanged and removes most Monte Carlo noise from the differences.

    Returns the final states ``x`` (discrete) and ``X_<kind>``, their losses, ``n_steps`` (K),
    ``diverged`` (any of the four left :math:`|x| \le 10^{100}`; all four freeze at that step) and
    ``diverged_at``. ``max_bytes``: the allocation limit (:func:`theory.validate.byte_limit`) for the shared
    Brownian path, ``(max_steps, substeps, d)`` increments drawn at once.
    """
    _prng("key", key)
    choice("problem", problem, PROBLEMS)
    _arr("x0", x0, ndim=(0, 1))
    T = real("T", T, low=0.0, low_open=True)
    max_steps = integer("max_steps", max_steps, low=1)
    substeps = integer("substeps", substeps, low=1)
    check_bytes({"max_steps": max_steps, "substeps": substeps, "x0": f"size {np.size(x0)}"},
                2 * 8 * max_steps * substeps * max(np.size(x0), 1), what="the shared Brownian increments",
                max_bytes=max_bytes)
    n_agents = integer("n_agents", n_agents, low=1)
    if not _traced(eta):
        e = real("eta", eta, low=0.0, low_open=True)
        if round(T / e) > max_steps:
            raise ValueError(f"max_steps: T/eta = {T / e:g} steps do not fit in max_steps={max_steps}")
    _num("lam", lam, low=0.0, low_open=True)
    _num("sigma0", sigma0, low=0.0)
    return _coupled_jit(key, x0, eta, problem, T, max_steps, substeps, lam, sigma0, n_agents)


def _escape(x0, eta, problem, lam, gd_steps, ode_steps, dt_scale):
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
        bad = bad | _beyond(x_new[None], _BOUND)[0]
        return (jnp.where(bad, x, x_new), bad), None

    out = {}
    (x, bad), _ = lax.scan(gd_step, (x0, jnp.zeros((), bool)), None, length=gd_steps)
    out["gd_diverged"] = bad
    out["gd_grew"] = bad | (jnp.linalg.norm(x) > n0)
    out["gd_rate"] = jnp.where(bad, jnp.inf, (jnp.log(f(x, lam)) - jnp.log(f0)) / (gd_steps * eta))
    coefs = jnp.asarray([_DRIFT_COEF[k] for k in DRIFT_KINDS])
    rs = jax.vmap(lambda c: _sde_path(jax.random.key(0), x0, eta, problem, c, dt, ode_steps, lam, 0.0, 0.0, 1,
                                      "heun"))(coefs)
    for i, kind in enumerate(DRIFT_KINDS):
        bad, x = rs["diverged"][i], rs["x"][i]
        out[f"{kind}_diverged"] = bad
        out[f"{kind}_grew"] = bad | (jnp.linalg.norm(x) > n0)
        out[f"{kind}_rate"] = jnp.where(bad, jnp.inf, (jnp.log(rs["loss"][i]) - jnp.log(f0)) / (ode_steps * dt))
    return out


_escape_jit = jax.jit(_escape, static_argnames=("problem", "gd_steps", "ode_steps"))


def escape_paths(x0, eta, *, problem: str, lam=1.0, gd_steps: int = 400, ode_steps: int = 400,
                 dt_scale: float = 0.01, max_bytes=None) -> dict[str, jax.Array]:
    r"""Deterministic GD and the three modified ODEs (Heun, no noise) from ``x0`` at step ``eta``.

    The ODE step is :math:`dt = \mathrm{dt\_scale}/(\kappa(1+\eta\kappa))` with :math:`\kappa` the largest
    diagonal Hessian entry at :math:`x_0` (the fastest time scale of every drift there). Returns per
    method (``gd`` and :data:`DRIFT_KINDS`) ``<m>_grew`` (:math:`\|x\|` ended above :math:`\|x_0\|`, or the
    path diverged), ``<m>_diverged`` and ``<m>_rate``, the per-unit-time log-rate of f over the run
    (time :math:`k\eta` for GD; ``inf`` for a diverged path). ``max_bytes``: the allocation limit
    (:func:`theory.validate.byte_limit`) for the three ODE paths' (zero-noise) increments, ``ode_steps`` each.
    """
    choice("problem", problem, TOY_PROBLEMS)
    _arr("x0", x0, ndim=(0, 1), low=None)
    _num("eta", eta, low=0.0, low_open=True)
    _num("lam", lam, low=0.0, low_open=True)
    gd_steps = integer("gd_steps", gd_steps, low=1)
    ode_steps = integer("ode_steps", ode_steps, low=1)
    check_bytes({"ode_steps": ode_steps, "x0": f"size {np.size(x0)}"}, 3 * 2 * 8 * ode_steps * max(np.size(x0), 1),
                what="the three ODE paths' increments", max_bytes=max_bytes)
    _num("dt_scale", dt_scale, low=0.0, low_open=True)
    if not _traced(x0) and not np.any(np.asarray(x0) != 0):
        raise ValueError(f"x0: expected a nonzero start (the minimizer cannot grow), got {x0!r}")
    return _escape_jit(x0, eta, problem, lam, gd_steps, ode_steps, dt_scale)


def escape_point(pt: dict, *, gd_steps: int, ode_steps: int, dt_scale: float = 0.01) -> dict[str, jax.Array]:
    """Per-run function for ``run_grid``: :func:`escape_paths` with the problem chosen by the traced index
    ``pt['problem']`` into ``("quadratic", "quartic", "cosh2")`` (one compilation for the three problems);
    ``pt`` also holds scalars ``x0``, ``eta`` and ``lam``."""
    integer("gd_steps", gd_steps, low=1)
    integer("ode_steps", ode_steps, low=1)
    real("dt_scale", dt_scale, low=0.0, low_open=True)
    branches = [partial(_escape_branch, problem=p, gd_steps=gd_steps, ode_steps=ode_steps, dt_scale=dt_scale)
                for p in ESCAPE_PROBLEMS]
    return lax.switch(pt["problem"], branches, pt["x0"], pt["eta"], pt["lam"])


def _escape_branch(x0, eta, lam, *, problem, gd_steps, ode_steps, dt_scale):
    return _escape(jnp.reshape(x0, (1,)), eta, problem, lam, gd_steps, ode_steps, dt_scale)


def weak_point(pt: dict, *, problem: str, x0: float, T: float, max_steps: int, substeps: int,
               sigma0: float, n_agents: int = 1) -> dict[str, jax.Array]:
    """Per-run function for ``run_grid``: :func:`coupled_weak_paths` at ``pt['key']``, ``pt['eta']``."""
    choice("problem", problem, PROBLEMS)
    real("x0", x0)
    real("T", T, low=0.0, low_open=True)
    integer("max_steps", max_steps, low=1)
    integer("substeps", substeps, low=1)
    real("sigma0", sigma0, low=0.0)
    integer("n_agents", n_agents, low=1)
    return _coupled(pt["key"], jnp.full((1,), x0), pt["eta"], problem, T, max_steps, substeps, 1.0, sigma0, n_agents)
