r"""JIT-compiled GD on logistic regression, over grids of step sizes and initializations.

One run iterates :math:`w_{t+1} = w_t - \gamma \nabla L(w_t)` with
:math:`\nabla L(w) = -\sum_i a_i \sigma(-z_i^\top w) z_i` (``jax.nn.sigmoid`` is stable for any
argument) under ``lax.scan``; grids of (step size x initialization) go through
:func:`sims.sweep.run_grid`. :func:`attractors` classifies where each run ends up: period 1
(fixed point), :math:`k \ge 2` (a :math:`k`-cycle), 0 (no period up to ``max_period``: aperiodic
or not yet converged) or -1 (diverged: non-finite iterates). Float64 throughout.
"""
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from scipy import special

from sims.bench import BenchCase
from sims.sweep import cartesian, run_grid
from theory.logistic import validate_dataset

__all__ = ["loss", "grad", "gd", "attractors", "cycle_jacobian", "gd_numpy", "bench_cases"]


def loss(w: jax.Array, z: jax.Array, a: jax.Array) -> jax.Array:
    r""":math:`L(w) = \sum_i a_i\, \mathrm{softplus}(-z_i^\top w)`."""
    return jnp.sum(a * jnp.logaddexp(0.0, -(z @ w)))


def grad(w: jax.Array, z: jax.Array, a: jax.Array) -> jax.Array:
    r"""Closed-form :math:`\nabla L(w) = -\sum_i a_i \sigma(-z_i^\top w) z_i` (checked against ``jax.grad``)."""
    return -(a * jax.nn.sigmoid(-(z @ w))) @ z


def _run(z, a, step, w0, n_steps: int, keep: int):
    """Iterate GD ``n_steps`` times from ``w0``; return the last ``keep`` iterates, shape (keep, d)."""
    def update(w, _):
        w = w - step * grad(w, z, a)
        return w, None

    def record(w, _):
        w = w - step * grad(w, z, a)
        return w, w

    w, _ = jax.lax.scan(update, w0, None, length=n_steps - keep)
    _, tail = jax.lax.scan(record, w, None, length=keep)
    return tail


def _validate_grid(z, weights, step_sizes, inits, n_steps):
    z2, a = validate_dataset(z, weights)
    d = z2.shape[1]
    steps = np.atleast_1d(np.asarray(step_sizes, dtype=np.float64))
    if steps.ndim != 1 or steps.size == 0:
        raise ValueError(f"step_sizes: expected a non-empty 1-D array, got shape {np.shape(step_sizes)}")
    if not np.all(np.isfinite(steps)) or np.any(steps <= 0):
        raise ValueError(f"step_sizes: every step size must be finite and > 0, got min {steps.min():.3g}")
    w0 = np.asarray(inits, dtype=np.float64)
    if d == 1 and w0.ndim <= 1:
        w0 = w0.reshape(-1, 1)
    if w0.ndim == 1 and w0.shape[0] == d:
        w0 = w0[None, :]
    if w0.ndim != 2 or w0.shape[1] != d or w0.shape[0] == 0:
        raise ValueError(f"inits: expected shape (k, {d}) (or (k,) for 1-D data), got {np.shape(inits)}")
    if not np.all(np.isfinite(w0)):
        raise ValueError("inits: every initialization must be finite")
    if not isinstance(n_steps, (int, np.integer)) or isinstance(n_steps, bool) or n_steps < 1:
        raise ValueError(f"n_steps: expected a positive integer, got {n_steps!r}")
    return z2, a, steps, w0


def gd(z, weights, step_sizes, inits, n_steps: int, *, keep_last: int | None = None,
       chunk_size: int = 4096) -> np.ndarray:
    r"""GD trajectories on the grid ``step_sizes x inits``.

    ``z``: (n,) or (n, d) signed features; ``weights``: (n,) or None (uniform :math:`1/n`);
    ``step_sizes``: (m,) positive; ``inits``: (k, d) (or (k,) for 1-D data); returns the last
    ``keep_last`` (default all ``n_steps``) iterates, shape ``(m, k, keep_last, d)``.
    """
    z2, a, steps, w0 = _validate_grid(z, weights, step_sizes, inits, n_steps)
    keep = n_steps if keep_last is None else keep_last
    if not isinstance(keep, (int, np.integer)) or not 1 <= keep <= n_steps:
        raise ValueError(f"keep_last: expected an integer in [1, n_steps={n_steps}], got {keep_last!r}")
    grid, shape = cartesian(step=steps, w0=w0)
    out = run_grid(_trajectory_fn(n_steps, int(keep)), grid, jnp.asarray(z2), jnp.asarray(a),
                   chunk_size=chunk_size, desc="logistic gd")
    return out.reshape(shape + out.shape[1:])


@functools.lru_cache(maxsize=64)
def _trajectory_fn(n_steps: int, keep: int):
    """Per-run function for :func:`gd`; cached so repeated sweeps reuse one compilation."""
    def fn(point, z, a):
        return _run(z, a, point["step"], point["w0"], n_steps, keep)
    return fn


@functools.lru_cache(maxsize=64)
def _attractor_fn(n_steps: int, keep: int, max_period: int, tol: float):
    """Per-run function for :func:`attractors`: iterate, then classify the tail."""
    def fn(point, z, a):
        tail = _run(z, a, point["step"], point["w0"], n_steps, keep)
        period, points = _classify(tail, max_period, tol)
        return {"period": period, "points": points}
    return fn


def _classify(tail: jax.Array, max_period: int, tol: float):
    r"""Smallest :math:`p \le` ``max_period`` with :math:`\|w_{t+p} - w_t\|_\infty \le tol\,(1 + \|w_t\|_\infty)` over the tail."""
    bad = ~jnp.all(jnp.isfinite(tail))
    scale = 1.0 + jnp.max(jnp.abs(tail))
    n = tail.shape[0] - max_period

    def periodic(p):
        shifted = jax.lax.dynamic_slice_in_dim(tail, p, n, axis=0)
        return jnp.max(jnp.abs(shifted - tail[:n])) <= tol * scale

    ps = jnp.arange(1, max_period + 1)
    ok = jax.vmap(periodic)(ps)
    period = jnp.where(jnp.any(ok), ps[jnp.argmax(ok)], 0)
    period = jnp.where(bad, -1, period)
    # the cycle's points: the last `period` iterates, NaN-padded to max_period
    last = tail[-max_period:]
    idx = jnp.arange(max_period)
    points = jnp.where((idx < jnp.maximum(period, 0))[:, None], last[(max_period - jnp.maximum(period, 1) + idx) % max_period], jnp.nan)
    return period, points


def attractors(z, weights, step_sizes, inits, *, n_steps: int = 20_000, max_period: int = 16,
               tol: float = 1e-9, chunk_size: int = 4096) -> dict[str, np.ndarray]:
    r"""Attractor reached from each (step size, init): period and points.

    Runs ``n_steps`` GD steps and inspects the last ``4 * max_period`` iterates. Returns
    ``period`` of shape (m, k) -- 1 fixed point, :math:`k \ge 2` a :math:`k`-cycle, 0 no period up to
    ``max_period`` (aperiodic or unconverged), -1 diverged (non-finite) -- and ``points`` of shape
    (m, k, max_period, d), the cycle's points (NaN beyond its period).
    """
    z2, a, steps, w0 = _validate_grid(z, weights, step_sizes, inits, n_steps)
    if not isinstance(max_period, (int, np.integer)) or max_period < 1:
        raise ValueError(f"max_period: expected a positive integer, got {max_period!r}")
    if not (isinstance(tol, (float, int)) and tol > 0):
        raise ValueError(f"tol: expected a positive number, got {tol!r}")
    keep = min(4 * max_period, n_steps)
    if keep < 2 * max_period:
        raise ValueError(f"n_steps: need at least {2 * max_period} steps to check periods up to {max_period}")
    grid, shape = cartesian(step=steps, w0=w0)
    out = run_grid(_attractor_fn(n_steps, keep, int(max_period), float(tol)), grid, jnp.asarray(z2), jnp.asarray(a),
                   chunk_size=chunk_size, desc="logistic attractors")
    return {"period": out["period"].reshape(shape), "points": out["points"].reshape(shape + out["points"].shape[1:])}


def cycle_jacobian(z, weights, step: float, point, period: int) -> np.ndarray:
    r"""Jacobian of :math:`T^{p}` at ``point`` by forward-mode autodiff; its eigenvalues are the cycle's multipliers."""
    z2, a = validate_dataset(z, weights)
    zj, aj = jnp.asarray(z2), jnp.asarray(a)
    if not isinstance(period, (int, np.integer)) or period < 1:
        raise ValueError(f"period: expected a positive integer, got {period!r}")

    def T_p(w):
        for _ in range(int(period)):  # p is tiny (a cycle's period), unrolled on purpose
            w = w - step * grad(w, zj, aj)
        return w

    return np.asarray(jax.jacfwd(T_p)(jnp.asarray(np.atleast_1d(point), dtype=jnp.float64)))


def gd_numpy(z, weights, step_sizes, inits, n_steps: int, *, keep_last: int = 1) -> np.ndarray:
    """Vectorized NumPy reference of :func:`gd` (loop over steps, arrays over the grid)."""
    z2, a, steps, w0 = _validate_grid(z, weights, step_sizes, inits, n_steps)
    m, k, d = steps.size, w0.shape[0], w0.shape[1]
    W = np.broadcast_to(w0[None], (m, k, d)).reshape(m * k, d).copy()
    S = np.repeat(steps, k)[:, None]
    tail = np.empty((keep_last, m * k, d))
    for t in range(n_steps):
        W -= S * (-(a * special.expit(-(W @ z2.T))) @ z2)
        if t >= n_steps - keep_last:
            tail[t - (n_steps - keep_last)] = W
    return tail.transpose(1, 0, 2).reshape(m, k, keep_last, d)


def bench_cases(scale: str = "small") -> list[BenchCase]:
    """Bifurcation sweep: step sizes x inits on a 64-point 1-D dataset; unit = GD updates x data points."""
    rng = np.random.default_rng(0)
    n = 64
    z = np.concatenate([rng.uniform(0.2, 3.0, n // 2), -rng.uniform(0.2, 3.0, n // 2)])
    weights = rng.dirichlet(np.ones(n))
    m, k, steps_ = (512, 4, 1000) if scale == "small" else (16384, 16, 2000)
    lam = 0.25 * float(np.sum(weights * z * z))  # scale only; exact lambda is not needed to time a sweep
    step_sizes = np.linspace(0.5, 3.0, m) / lam
    inits = np.linspace(-2, 2, k)
    work = float(m * k * steps_ * n)

    def check(jx, npy):
        np.testing.assert_allclose(jx, npy, rtol=1e-9, atol=1e-9)

    return [BenchCase(
        name=f"logistic.bifurcation_sweep[{m}x{k}x{steps_}]", unit="GD updates x data points", work=work,
        run_jax=lambda: gd(z, weights, step_sizes, inits, steps_, keep_last=1),
        run_numpy=lambda: gd_numpy(z, weights, step_sizes, inits, steps_, keep_last=1), check=check)]
