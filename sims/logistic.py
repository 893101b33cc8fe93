r"""JIT-compiled GD on logistic regression, over grids of step sizes and initializations.

One run iterates :math:`w_{t+1} = w_t - \eta \nabla L(w_t)` with
:math:`\nabla L(w) = -\sum_i a_i \sigma(-z_i^\top w) z_i` (``jax.nn.sigmoid`` is stable for any
argument) under ``lax.scan``; grids of (step size :math:`\eta` x initialization) go through
:func:`sims.sweep.run_grid`. Float64 by default; :func:`gd` also runs in float32 (its ``dtype``), :func:`attractors`
only in float64 (its period test works at 1e-9, below float32's round-off).

**Divergence is data.** The gradient is bounded (:math:`\|\nabla L\| \le \sum_i a_i \|z_i\|`), so
an iterate can only become non-finite through an absurd step size (:math:`\eta \sum_i a_i\|z_i\|
\cdot t` beyond the float64 range). On *separable* data there is no finite minimizer and GD runs
off to infinity instead: steplab certifies this by the first iterate that strictly separates the
data, :math:`z_i^\top w_t > 0` for every point with :math:`a_i > 0` -- impossible on non-separable
data, so the flag never fires there, whatever :math:`\eta` (on non-separable data every orbit
stays bounded; see :func:`theory.logistic.orbit_bound_1d`). Every sweep returns, per run,

* ``escaped``: the run met that certificate (it escapes to infinity);
* ``diverged``: escaped, or some iterate is non-finite;
* ``diverged_step``: the first step :math:`t` (0 = the initialization) at which either happened,
  -1 if never.

:func:`attractors` classifies where each run ends up: ``period`` 1 (fixed point), :math:`k \ge 2`
(a :math:`k`-cycle), :data:`PERIOD_NONE` = 0 (bounded, but no period up to ``max_period``:
aperiodic or not yet converged), :data:`PERIOD_NONFINITE` = -1 (a non-finite iterate),
:data:`PERIOD_ESCAPED` = -2 (escaped to infinity on separable data). Weakly separable data (a
direction with :math:`z_i^\top u \ge 0` and equality for some points) never produces the
certificate; its runs drift slowly and come out as period 0.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from sims.sweep import cartesian, padded_length, run_grid
from theory import validate as V
from theory.logistic import validate_dataset

__all__ = ["loss", "grad", "hessian", "gd", "attractors", "cycle_jacobian", "rod_flow",
           "PERIOD_NONE", "PERIOD_NONFINITE", "PERIOD_ESCAPED"]

PERIOD_NONE = 0         # bounded, no period <= max_period found
PERIOD_NONFINITE = -1   # some iterate is inf/NaN
PERIOD_ESCAPED = -2     # an iterate strictly separates the data: GD runs off to infinity


# ---------------------------------------------------------------------------------------------
# Traced kernels (private: called inside jit/vmap/scan, no validation possible there)
# ---------------------------------------------------------------------------------------------
def _loss(w: jax.Array, z: jax.Array, a: jax.Array) -> jax.Array:
    r""":math:`L(w) = \sum_i a_i\, \mathrm{softplus}(-z_i^\top w)`."""
    return jnp.sum(a * jnp.logaddexp(0.0, -(z @ w)))


def _grad(w: jax.Array, z: jax.Array, a: jax.Array) -> jax.Array:
    r"""Closed-form :math:`\nabla L(w) = -\sum_i a_i \sigma(-z_i^\top w) z_i` (tested against ``jax.grad``)."""
    return -(a * jax.nn.sigmoid(-(z @ w))) @ z


def _separates(m: jax.Array, active: jax.Array) -> jax.Array:
    """True iff every point with positive weight has a strictly positive margin ``m_i = z_i.w``."""
    return jnp.all((m > 0) | ~active)


def _iterate(z, a, eta, w0, n_before, keep: int):
    r"""``n_before + keep`` GD steps from ``w0``: the last ``keep`` iterates (keep, d) and the first non-finite / escape steps.

    ``n_before`` is traced (a ``fori_loop`` bound), so sweeps that differ only in their number of
    steps share one compilation; ``keep`` is static (it sets the output shape). The carry holds the
    margins :math:`m = z w` so each step costs two mat-vecs (gradient and new margins), the same as
    a plain GD step; the escape test reuses them.
    """
    active = a > 0
    never = jnp.asarray(-1, dtype=jnp.int64)
    m0 = z @ w0
    carry0 = (w0, m0, jnp.asarray(0, dtype=jnp.int64), never, jnp.where(_separates(m0, active), 0, never))

    def step(carry):
        w, m, t, bad, esc = carry
        w = w + eta * ((a * jax.nn.sigmoid(-m)) @ z)  # w - eta * grad, the gradient written from the margins
        m = z @ w
        t = t + 1
        bad = jnp.where((bad < 0) & ~jnp.all(jnp.isfinite(w)), t, bad)
        esc = jnp.where((esc < 0) & _separates(m, active), t, esc)
        return w, m, t, bad, esc

    def record(carry, _):
        carry = step(carry)
        return carry, carry[0]

    carry = jax.lax.fori_loop(0, n_before, lambda _, c: step(c), carry0)
    carry, tail = jax.lax.scan(record, carry, None, length=keep)
    return tail, carry[3], carry[4]


def _gd_point(point, z, a, n_before, *, keep: int):
    """Per-run function of :func:`gd` (module level: compiled once per static configuration and shapes)."""
    tail, bad, esc = _iterate(z, a, point["eta"], point["w0"], n_before, keep)
    return {"w": tail, "nonfinite_step": bad, "escape_step": esc}


def _classify(tail: jax.Array, max_period: int, tol: float):
    r"""Smallest :math:`p \le` ``max_period`` with :math:`\|w_{t+p} - w_t\|_\infty \le tol\,(1 + \max_t\|w_t\|_\infty)` over the tail.

    Returns ``(period, points)``: period 0 when none fits, -1 when the tail is not finite; the
    cycle's points are the last ``period`` iterates in time order, NaN-padded to ``max_period``.
    """
    bad = ~jnp.all(jnp.isfinite(tail))
    scale = 1.0 + jnp.max(jnp.abs(tail))
    n = tail.shape[0] - max_period

    def periodic(p):
        shifted = jax.lax.dynamic_slice_in_dim(tail, p, n, axis=0)
        return jnp.max(jnp.abs(shifted - tail[:n])) <= tol * scale

    ps = jnp.arange(1, max_period + 1)
    ok = jax.vmap(periodic)(ps)
    period = jnp.where(jnp.any(ok), ps[jnp.argmax(ok)], PERIOD_NONE)
    period = jnp.where(bad, PERIOD_NONFINITE, period)
    last = tail[-max_period:]
    idx = jnp.arange(max_period)
    p = jnp.maximum(period, 1)
    points = jnp.where((idx < jnp.maximum(period, 0))[:, None], last[(max_period - p + idx) % max_period], jnp.nan)
    return period, points


def _attractor_point(point, z, a, n_before, *, keep: int, max_period: int, tol: float):
    """Per-run function of :func:`attractors`: iterate, then classify the tail (escape overrides the period)."""
    tail, bad, esc = _iterate(z, a, point["eta"], point["w0"], n_before, keep)
    period, points = _classify(tail, max_period, tol)
    period = jnp.where((esc >= 0) & (bad < 0), PERIOD_ESCAPED, period)
    points = jnp.where(period > 0, points, jnp.nan)
    return {"period": period, "points": points, "last": tail[-1], "nonfinite_step": bad, "escape_step": esc}


@jax.jit
def _loss_jit(w, z, a):
    return _loss(w, z, a)


@jax.jit
def _grad_jit(w, z, a):
    return _grad(w, z, a)


_hessian_jit = jax.jit(jax.hessian(_loss))


def _power(w, z, a, eta, period: int):
    """:math:`T^{period}(w)`: ``period`` GD steps (``period`` static)."""
    def step(v, _):
        return v - eta * _grad(v, z, a), None
    return jax.lax.scan(step, w, None, length=period)[0]


_power_jacobian = jax.jit(jax.jacfwd(_power), static_argnums=(4,))


# ---------------------------------------------------------------------------------------------
# Public API (validated)
# ---------------------------------------------------------------------------------------------
def _validate_grid(z, weights, eta, inits, n_steps, chunk_size):
    z2, a = validate_dataset(z, weights)
    d = z2.shape[1]
    steps = np.atleast_1d(V.array("eta", eta, ndim=(0, 1), low=0.0, low_open=True))
    w0 = V.array("inits", inits, ndim=(0, 1, 2))
    if d == 1 and w0.ndim <= 1:
        w0 = w0.reshape(-1, 1)
    elif w0.ndim == 1 and w0.shape[0] == d:
        w0 = w0[None, :]
    if w0.ndim != 2 or w0.shape[1] != d:
        raise ValueError(f"inits: expected shape (k, {d}) (or (k,) for 1-D data), got {np.shape(inits)}")
    n_steps = V.integer("n_steps", n_steps, low=1)
    chunk_size = V.integer("chunk_size", chunk_size, low=1)
    return z2, a, steps, w0, n_steps, chunk_size


def _bucket(n: int, chunk_size: int) -> int:
    """Compiled grid length for ``n`` runs: the next power of two (at least 8), capped at ``chunk_size``.

    Grids are padded to it (:func:`sims.sweep.run_grid` with ``pad_to_chunk``), so sweeps of nearby
    sizes share one compiled program: on this topic compilation costs far more than the runs.
    """
    return padded_length(n, least=8, most=chunk_size)


def _flags(out: dict, shape: tuple) -> dict[str, np.ndarray]:
    bad, esc = out["nonfinite_step"].reshape(shape), out["escape_step"].reshape(shape)
    first = np.where(bad < 0, esc, np.where(esc < 0, bad, np.minimum(bad, esc)))
    return {"diverged": first >= 0, "diverged_step": first, "escaped": esc >= 0}


def gd(z, weights, eta, inits, n_steps: int, *, keep_last: int | None = None,
       chunk_size: int = 4096, max_bytes=None, dtype=None) -> dict[str, np.ndarray]:
    r"""GD trajectories on the grid ``eta x inits``.

    Args:
      z: (n,) or (n, d) signed features :math:`z_i = y_i x_i`.
      weights: (n,) non-negative, or None (uniform :math:`1/n`).
      eta: step size(s), a positive number or an (m,) array.
      inits: (k, d) initializations (or (k,) for 1-D data).
      n_steps: GD steps per run, :math:`\ge 1`.
      keep_last: how many final iterates to return, in ``1..n_steps`` (default all ``n_steps``).
      max_bytes: the allocation limit (:func:`theory.validate.byte_limit`) for the kept iterates of every run.
      dtype: ``None``/``"float64"`` (the default) or ``"float32"`` (:func:`theory.validate.float_dtype`): data,
        weights, steps, iterates and margins in float32, and ``w`` returned in float32. Sound for a bifurcation
        sweep's picture: on a stable fixed point or cycle with contraction factor :math:`\rho` per step the float32
        orbit stays within about :math:`2^{-24}/(1-\rho)` (relative) of the float64 one. Not sound for what needs
        more digits: chaotic orbits (the two precisions part after :math:`\sim 17/\lambda_{Lyap}` steps; only their
        statistics compare), locating doubling points or cycles to better than ~1e-6 (use float64 and
        :func:`attractors`), or the escape certificate on data separable only by a margin below float32's
        round-off.

    Returns:
      ``w``: (m, k, keep_last, d) iterates :math:`w_{T-keep+1}, \dots, w_T`;
      ``diverged``, ``escaped`` (m, k) booleans and ``diverged_step`` (m, k) integers (-1 = never),
      as defined in the module docstring.
    """
    z2, a, steps, w0, n_steps, chunk_size = _validate_grid(z, weights, eta, inits, n_steps, chunk_size)
    dt = V.float_dtype("dtype", dtype)
    keep = n_steps if keep_last is None else V.integer("keep_last", keep_last, low=1, high=n_steps)
    runs = steps.size * w0.shape[0]
    # the kept iterates of every run (device chunks, then the host's concatenation), padded to a chunk
    V.check_bytes({"keep_last" if keep_last is not None else "n_steps": keep, "runs": runs, "d": w0.shape[1]},
                  2 * 8 * keep * w0.shape[1] * max(runs, _bucket(runs, chunk_size)),
                  what="the kept iterates of every run", max_bytes=max_bytes)
    if dt != np.float64:  # every float the kernel reads in float32 (validated in float64 above)
        z2, a, steps, w0 = (v.astype(dt) for v in (z2, a, steps, w0))
    grid, shape = cartesian(eta=steps, w0=w0)
    out = run_grid(_gd_point, grid, jnp.asarray(z2), jnp.asarray(a), jnp.asarray(n_steps - keep),
                   static={"keep": keep},
                   chunk_size=_bucket(int(np.prod(shape)), chunk_size), pad_to_chunk=True, desc="logistic gd")
    return {"w": out["w"].reshape(shape + out["w"].shape[1:]), **_flags(out, shape)}


def attractors(z, weights, eta, inits, *, n_steps: int = 20_000, max_period: int = 16,
               tol: float = 1e-9, chunk_size: int = 4096, dtype=None) -> dict[str, np.ndarray]:
    r"""Attractor reached from each (step size, init): period and points.

    Runs ``n_steps`` GD steps and inspects the last ``min(4 max_period, n_steps)`` iterates
    (``n_steps >= 2 max_period``). A period :math:`p` fits when (``tol`` in (0, 1))
    :math:`\|w_{t+p} - w_t\|_\infty \le` ``tol`` :math:`(1 + \max\|w_t\|_\infty)` over that tail.

    Returns ``period`` (m, k): 1 fixed point, :math:`p \ge 2` a :math:`p`-cycle, 0 bounded with no
    period up to ``max_period``, -1 non-finite, -2 escaped (module docstring); ``points``
    (m, k, max_period, d): the cycle's points in time order, the last of them being the final
    iterate :math:`w_T` (NaN beyond its period and for periods <= 0); ``last`` (m, k, d): the final iterate :math:`w_T` (to continue a run that has not
    settled); ``diverged``, ``diverged_step``, ``escaped`` as in :func:`gd`.

    ``dtype``: ``None`` or ``"float64"`` only (``"float32"`` is a ``ValueError``): the period test compares iterates
    to ``tol`` relative (1e-9 by default), below float32's round-off :math:`2^{-24} \approx 6\times10^{-8}`, and
    near a doubling point the cycle's multiplier tends to -1, so float32 round-off would be read as a period.
    """
    V.float_dtype("dtype", dtype, allowed=("float64",),
                  why="the period test works to tol = 1e-9 relative, below float32's round-off of 6e-8")
    z2, a, steps, w0, n_steps, chunk_size = _validate_grid(z, weights, eta, inits, n_steps, chunk_size)
    max_period = V.integer("max_period", max_period, low=1, high=256)
    tol = V.real("tol", tol, low=0.0, high=1.0, low_open=True, high_open=True)
    keep = min(4 * max_period, n_steps)
    if keep < 2 * max_period:
        raise ValueError(f"n_steps: need at least {2 * max_period} steps to check periods up to "
                         f"max_period = {max_period}, got {n_steps}")
    grid, shape = cartesian(eta=steps, w0=w0)
    out = run_grid(_attractor_point, grid, jnp.asarray(z2), jnp.asarray(a), jnp.asarray(n_steps - keep),
                   static={"keep": keep, "max_period": max_period, "tol": tol},
                   chunk_size=_bucket(int(np.prod(shape)), chunk_size), pad_to_chunk=True,
                   desc="logistic attractors")
    return {"period": out["period"].reshape(shape), "points": out["points"].reshape(shape + out["points"].shape[1:]),
            "last": out["last"].reshape(shape + out["last"].shape[1:]), **_flags(out, shape)}


def cycle_jacobian(z, weights, eta, point, period: int) -> np.ndarray:
    r"""Jacobian of :math:`T^{p}` (``period`` GD steps) at ``point`` by forward-mode autodiff, shape (d, d).

    At a point of a :math:`p`-cycle its eigenvalues are the cycle's multipliers (stable iff all
    have modulus < 1). ``eta`` > 0; ``point``: (d,) (a number for 1-D data); ``period`` in 1..1024.
    """
    z2, a = validate_dataset(z, weights)
    step = V.real("eta", eta, low=0.0, low_open=True)
    p = np.atleast_1d(V.array("point", point, ndim=(0, 1)))
    if p.shape != (z2.shape[1],):
        raise ValueError(f"point: expected shape ({z2.shape[1]},) to match the data, got {np.shape(point)}")
    period = V.integer("period", period, low=1, high=1024)
    return np.asarray(_power_jacobian(jnp.asarray(p), jnp.asarray(z2), jnp.asarray(a), step, period))


def _at(w, z, weights):
    z2, a = validate_dataset(z, weights)
    p = np.atleast_1d(V.array("w", w, ndim=(0, 1)))
    if p.shape != (z2.shape[1],):
        raise ValueError(f"w: expected shape ({z2.shape[1]},) to match the data, got {np.shape(w)}")
    return jnp.asarray(p), jnp.asarray(z2), jnp.asarray(a)


def loss(w, z, weights=None) -> float:
    r""":math:`L(w) = \sum_i a_i \log(1 + e^{-z_i^\top w})` (JAX, softplus form; stable for any margin)."""
    return float(_loss_jit(*_at(w, z, weights)))


def grad(w, z, weights=None) -> np.ndarray:
    r""":math:`\nabla L(w) = -\sum_i a_i \sigma(-z_i^\top w) z_i` (JAX closed form; the simulator's gradient)."""
    return np.asarray(_grad_jit(*_at(w, z, weights)))


def hessian(w, z, weights=None) -> np.ndarray:
    r""":math:`\nabla^2 L(w)` by autodiff of the JAX loss (independent of the closed form in :mod:`theory.logistic`)."""
    return np.asarray(_hessian_jit(*_at(w, z, weights)))


# ---------------------------------------------------------------------------------------------
# The rod flow on the logistic loss (diffrax)
# ---------------------------------------------------------------------------------------------
def _rod_field(t, state, args):
    r"""Rod-flow vector field on (c, r) (time unit: one GD step):
    :math:`\dot c = -\tfrac\eta2[\nabla L(c+r) + \nabla L(c-r)]`, :math:`\dot r = \tfrac\eta2[\nabla L(c+r) - \nabla L(c-r)] - 2r`."""
    z, a, eta = args
    d = state.shape[0] // 2
    c, r = state[:d], state[d:]
    gp, gm = _grad(c + r, z, a), _grad(c - r, z, a)
    return jnp.concatenate([-0.5 * eta * (gp + gm), 0.5 * eta * (gp - gm) - 2.0 * r])


def _rod_point(point, z, a, ts, *, rtol: float, atol: float, max_steps: int):
    """Per-run function of :func:`rod_flow`: start from GD's first two iterates, integrate, save at ``ts``."""
    import diffrax

    eta, w0 = point["eta"], point["w0"]
    w1 = w0 - eta * _grad(w0, z, a)
    state0 = jnp.concatenate([0.5 * (w0 + w1), 0.5 * (w0 - w1)])
    sol = diffrax.diffeqsolve(
        diffrax.ODETerm(_rod_field), diffrax.Tsit5(), t0=0.0, t1=ts[-1], dt0=0.05, y0=state0, args=(z, a, eta),
        saveat=diffrax.SaveAt(ts=ts), stepsize_controller=diffrax.PIDController(rtol=rtol, atol=atol),
        max_steps=max_steps, throw=False)
    ys = sol.ys
    d = w0.shape[0]
    bad = ~jnp.all(jnp.isfinite(ys), axis=1)
    failed = (sol.result != diffrax.RESULTS.successful) | jnp.any(bad)
    return {"center": ys[:, :d], "r": ys[:, d:], "diverged": failed,
            "diverged_step": jnp.where(jnp.any(bad), jnp.argmax(bad), -1)}


def rod_flow(z, weights, eta, inits, ts, *, rtol: float = 1e-10, atol: float = 1e-12,
             max_steps: int = 100_000) -> dict[str, np.ndarray]:
    r"""The rod flow of the logistic loss on the grid ``eta x inits``, saved at times ``ts`` (in GD steps).

    The rod has centre :math:`c` and half-rod :math:`r`, started from GD's first two iterates
    (:math:`c = (w_0 + w_1)/2`, :math:`r = (w_0 - w_1)/2`) and moved by

    .. math:: \dot c = -\tfrac\eta2[\nabla L(c+r) + \nabla L(c-r)],\qquad
              \dot r = \tfrac\eta2[\nabla L(c+r) - \nabla L(c-r)] - 2r .

    Its stationary rods are exactly GD's 2-cycles :math:`\{c + r, c - r\}` (the right-hand sides
    vanish iff :math:`\nabla L(c+r) = -\nabla L(c-r)` and :math:`c - r = (c + r) - \eta\nabla L(c + r)`).
    Integrated by diffrax (Tsit5, PID step control with ``rtol``/``atol``).

    Args: ``z``, ``weights``, ``eta``, ``inits`` as in :func:`gd`; ``ts``: increasing save times
    :math:`\ge 0` (at least one). Returns ``center`` and ``r`` of shape (m, k, T, d), ``diverged``
    (m, k) (the solver failed or a state is non-finite) and ``diverged_step`` (m, k): the first
    save index with a non-finite state, -1 if none.
    """
    z2, a, steps, w0, _, _ = _validate_grid(z, weights, eta, inits, 1, 1)
    times = V.array("ts", ts, ndim=1, low=0.0)
    if times.size == 0 or not np.all(np.diff(times) > 0):
        raise ValueError(f"ts: expected increasing save times (at least one), got {np.asarray(ts).tolist()!r:.60}")
    rtol = V.real("rtol", rtol, low=0.0, low_open=True)
    atol = V.real("atol", atol, low=0.0, low_open=True)
    max_steps = V.integer("max_steps", max_steps, low=1)
    grid, shape = cartesian(eta=steps, w0=w0)
    out = run_grid(_rod_point, grid, jnp.asarray(z2), jnp.asarray(a), jnp.asarray(times),
                   static={"rtol": rtol, "atol": atol, "max_steps": max_steps},
                   chunk_size=_bucket(int(np.prod(shape)), 4096), pad_to_chunk=True, desc="logistic rod flow")
    tail = out["center"].shape[1:]
    return {"center": out["center"].reshape(shape + tail), "r": out["r"].reshape(shape + tail),
            "diverged": out["diverged"].reshape(shape), "diverged_step": out["diverged_step"].reshape(shape)}
