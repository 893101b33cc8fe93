r"""JAX simulators for the edge of stability: GD and its flows on 2-D polynomial losses, the catapult, a tiny MLP.

Float64 by default (importing :mod:`sims` enables it); :func:`poly_gd`, :func:`catapult_gd` and :func:`mlp_run` also
run in float32 (their ``dtype``: each docstring says what float32 keeps); :func:`mlp_track` refuses float32 (its
docstring says why), and the flows of :func:`poly_flow` are float64 only. Every grid goes through
:func:`sims.sweep.run_grid` with a module-level per-run function and explicit static configuration;
randomness comes from typed keys (``jax.random.key``), split per run and never reused.

**Divergence is data.** Every simulator returns ``diverged`` (bool per run: an iterate became
non-finite or exceeded ``DIVERGENCE_BOUND`` in absolute value, ``DIVERGENCE_BOUND32`` in float32) and
``diverged_step`` (the first step where that happened, -1 if never). A diverged run is frozen at its last finite
iterate and its per-block statistics from the diverging block on are NaN, so averages are only ever taken over
finite stretches; callers count diverged runs beside any statistic.

Simulators:

* :func:`poly_gd` -- GD, heavy ball or Nesterov on :math:`L(x, y) = \sum_{i,j\le2} C_{ij}x^iy^j`
  (the self-stabilization toy and :math:`\tfrac12(uv-1)^2` are such polynomials; see
  :func:`theory.eos.selfstab_coefficients`), with block averages of :math:`x, y, x^2, L, S`.
* :func:`poly_flow` -- gradient flow, the central flow and the rod flow of the same losses, integrated
  by diffrax (Tsit5, adaptive): one compiled program serves the three flows.
* :func:`catapult_gd` -- GD on the uv model :math:`f = u^\top v/\sqrt m` with one sample (label 0).
* :func:`mlp_run` -- full-batch GD / heavy ball / Nesterov on a tiny tanh MLP with Lanczos sharpness, and the
  central flow and gradient flow of the same network (explicit Euler): one compiled program for all five.

The ReLU networks of the largest trainable step (lewkowycz2020's :math:`c_{\rm act}`) are in :mod:`sims.eos_relu`.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

import sims  # noqa: F401  (float64)
from sims.hvp import top_eigenpair  # the warm-started Lanczos lives with the other curvature tools
from sims.nqm import noise_at  # float32 draws coupled to the float64 ones of the same key
from sims.sweep import floats_as, run_grid
from theory import validate as V

__all__ = [
    "DIVERGENCE_BOUND", "DIVERGENCE_BOUND32", "BOUNDS", "FLOWS", "poly_loss", "poly_grad", "poly_sharpness", "poly_gd",
    "poly_flow", "central_flow_sigma2", "catapult_gd", "mlp_data", "mlp_init", "mlp_loss", "mlp_run", "MLP_METHODS",
    "top_eigenpair", "TRACK_RUNS", "TRACK_TOP", "central_flow_sigma_matrix", "mlp_track",
]

DIVERGENCE_BOUND = 1e50
# float32 runs (``dtype="float32"``): 1e50 is beyond float32's range (3.4e38), and the statistics the runs record are
# up to quartic in the state (the polynomial losses' x^2 y^2, the catapult's f^2 = (u.v)^2/m), which overflow float32
# past |w| ~ 1e9; below 1e8 they stay finite (w^4 <= 1e32, with room for coefficients and widths up to ~1e6)
DIVERGENCE_BOUND32 = 1e8
# the bound of each arithmetic as a constant of its dtype (a float64 constant would promote a float32 kernel)
BOUNDS = {"float64": DIVERGENCE_BOUND, "float32": np.float32(DIVERGENCE_BOUND32)}
FLOWS = ("gradient", "central", "rod")
GD_CHUNK = 64     # runs per compiled GD sweep on the polynomial losses (sweeps are padded to a multiple)
FLOW_CHUNK = 4    # runs per compiled flow integration
N_SAVE = 401      # save times of the flows used throughout the topic (one compiled diffrax program)
CATAPULT_CHUNK = 64  # runs per compiled catapult sweep


# ----------------------------------------------------------------------------------------------
# 2-D polynomial losses
# ----------------------------------------------------------------------------------------------

def _powers(t: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
    r"""The power basis :math:`p(t) = (1, t, t^2)` and its first two derivatives."""
    one, zero = jnp.ones_like(t), jnp.zeros_like(t)
    return jnp.stack([one, t, t * t]), jnp.stack([zero, one, 2.0 * t]), jnp.stack([zero, zero, 2.0 * one])


def _poly_loss(w: jax.Array, coef: jax.Array) -> jax.Array:
    r""":math:`L(x, y) = p(x)^\top C\, p(y)` with :math:`p(t) = (1, t, t^2)`."""
    px, _, _ = _powers(w[0])
    py, _, _ = _powers(w[1])
    return px @ coef @ py


def _point(w, coef):
    """A point (2,) and a coefficient matrix (3, 3), validated (values only when concrete: these also run under jit)."""
    return V.traceable("w", w, shape=(2,)), V.traceable("coef", coef, shape=(3, 3))


def poly_loss(w: jax.Array, coef: jax.Array) -> jax.Array:
    r""":math:`L(x, y) = p(x)^\top C\, p(y)` with :math:`p(t) = (1, t, t^2)`; ``w`` (2,), ``coef`` (3, 3)."""
    return _poly_loss(*_point(w, coef))


def _poly_grad(w: jax.Array, coef: jax.Array) -> jax.Array:
    r""":math:`\nabla L = (p'(x)^\top C p(y),\ p(x)^\top C p'(y))` (explicit; tested against autodiff)."""
    px, dpx, _ = _powers(w[0])
    py, dpy, _ = _powers(w[1])
    return jnp.stack([dpx @ coef @ py, px @ coef @ dpy])


def poly_grad(w: jax.Array, coef: jax.Array) -> jax.Array:
    r""":math:`\nabla L = (p'(x)^\top C p(y),\ p(x)^\top C p'(y))` (explicit; tested against autodiff)."""
    return _poly_grad(*_point(w, coef))


def _derivatives(w: jax.Array, coef: jax.Array):
    """Gradient, Hessian and the two Hessian slices dH/dx, dH/dy of the polynomial (explicit)."""
    px, dpx, ddpx = _powers(w[0])
    py, dpy, ddpy = _powers(w[1])
    g = jnp.stack([dpx @ coef @ py, px @ coef @ dpy])
    hxx, hyy, hxy = ddpx @ coef @ py, px @ coef @ ddpy, dpx @ coef @ dpy
    # third derivatives: L_xxx = L_yyy = 0 for degree <= 2 in each variable
    hxxy, hxyy = ddpx @ coef @ dpy, dpx @ coef @ ddpy
    H = jnp.array([[hxx, hxy], [hxy, hyy]])
    dH_dx = jnp.array([[0.0 * hxx, hxxy], [hxxy, hxyy]])
    dH_dy = jnp.array([[hxxy, hxyy], [hxyy, 0.0 * hyy]])
    return g, H, dH_dx, dH_dy


def _floor(dtype) -> float | np.floating:
    """The floor of a norm or a root's argument: 1e-300 in float64, float32's smallest normal in float32 (where 1e-300
    would round to 0), as a constant of that dtype."""
    return 1e-300 if jnp.dtype(dtype) == jnp.float64 else np.finfo(jnp.dtype(dtype)).tiny


def _top_eig_2x2(H: jax.Array) -> tuple[jax.Array, jax.Array]:
    r"""Largest eigenvalue and its unit eigenvector of a symmetric 2x2 matrix (closed form).

    :math:`\lambda = \tfrac{p+s}2 + \sqrt{(\tfrac{p-s}2)^2 + q^2}` for :math:`\begin{pmatrix}p&q\\q&s\end{pmatrix}`;
    the eigenvector is :math:`(\lambda - s, q)` when :math:`p \ge s`, else :math:`(q, \lambda - p)` (the
    better-conditioned of the two). The root's argument is floored at :math:`10^{-300}` (float32: at its smallest
    normal number).
    """
    p, q, s = H[0, 0], H[0, 1], H[1, 1]
    tiny = _floor(H.dtype)
    half_gap = 0.5 * (p - s)
    root = jnp.sqrt(jnp.maximum(half_gap * half_gap + q * q, tiny))
    lam = 0.5 * (p + s) + root
    u = jnp.where(p >= s, jnp.stack([lam - s, q]), jnp.stack([q, lam - p]))
    return lam, u / jnp.maximum(jnp.linalg.norm(u), tiny)


def _poly_sharpness(w: jax.Array, coef: jax.Array) -> jax.Array:
    r"""Largest Hessian eigenvalue :math:`S(w)` of :func:`poly_loss` (closed form for 2x2)."""
    _, H, _, _ = _derivatives(w, coef)
    return _top_eig_2x2(H)[0]


def poly_sharpness(w: jax.Array, coef: jax.Array) -> jax.Array:
    r"""Largest Hessian eigenvalue :math:`S(w)` of :func:`poly_loss` (closed form for 2x2)."""
    return _poly_sharpness(*_point(w, coef))


def _sharpness_and_gradient(w: jax.Array, coef: jax.Array):
    r""":math:`\nabla L`, :math:`S` and :math:`\nabla S = (u^\top\partial_xH\,u,\ u^\top\partial_yH\,u)` (simple top eigenvalue)."""
    g, H, dH_dx, dH_dy = _derivatives(w, coef)
    S, u = _top_eig_2x2(H)
    return g, S, jnp.stack([u @ dH_dx @ u, u @ dH_dy @ u])


def _bad(w: jax.Array) -> jax.Array:
    """Whether ``w`` has a non-finite entry or one beyond the divergence bound of its dtype (:data:`BOUNDS`)."""
    return ~jnp.all(jnp.isfinite(w)) | (jnp.max(jnp.abs(w)) > BOUNDS[jnp.dtype(w.dtype).name])


def _poly_gd_run(point, *, n_steps: int, n_blocks: int):
    """One optimizer run on the polynomial loss; block means of (x, y, x^2, L, S) over the visited iterates."""
    coef, eta, w0, mom, nest = point["coef"], point["eta"], point["w0"], point["momentum"], point["nesterov"]
    block = n_steps // n_blocks

    def step(carry, _):
        w, w_prev, w_prev2, div, div_step, t = carry
        stats = jnp.stack([w[0], w[1], w[0] * w[0], _poly_loss(w, coef), _poly_sharpness(w, coef)])
        z = w + nest * mom * (w - w_prev)  # Nesterov's look-ahead; w itself for GD and heavy ball
        new = w + mom * (w - w_prev) - eta * _poly_grad(z, coef)
        bad = ~div & _bad(new)
        div_step = jnp.where(bad, t + 1, div_step)
        div = div | bad
        # a diverged run is frozen at its last finite iterate (no NaN propagates into the carry)
        keep = lambda new_value, old_value: jnp.where(div, old_value, new_value)  # noqa: E731
        return (keep(new, w), keep(w, w_prev), keep(w_prev, w_prev2), div, div_step, t + 1), stats

    def run_block(carry, _):
        carry, stats = lax.scan(step, carry, None, length=block)
        return carry, (jnp.mean(stats, axis=0), carry[0])

    init = (w0, w0, w0, jnp.array(False), jnp.array(-1), jnp.array(0))
    (w, _, w_prev2, div, div_step, _), (means, ends) = lax.scan(run_block, init, None, length=n_blocks)
    dead = div & (jnp.arange(n_blocks) >= div_step // block)  # the diverging block and every later one
    means = jnp.where(dead[:, None], jnp.nan, means)
    return {"block_mean": means, "block_end": jnp.where(dead[:, None], jnp.nan, ends), "final": w,
            "gap2": jnp.where(div, jnp.nan, jnp.linalg.norm(w - w_prev2)), "diverged": div, "diverged_step": div_step}


BLOCK_STATS = ("x", "y", "x2", "loss", "sharpness")
"""Columns of ``block_mean`` in :func:`poly_gd`."""


def _coef(coef) -> np.ndarray:
    C = V.array("coef", coef, ndim=(2, 3))
    if C.shape[-2:] != (3, 3):
        raise ValueError(f"coef: expected a (3, 3) coefficient matrix or (n, 3, 3) of them, got shape {C.shape}")
    return C


def _runs(coef, eta, w0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validate and broadcast (coef, eta, w0) to one row per run."""
    C = _coef(coef)
    etas = _grid_vector("eta", eta, low=0.0, low_open=True)
    starts = V.array("w0", w0, ndim=(1, 2))
    if starts.shape[-1] != 2:
        raise ValueError(f"w0: expected points (x, y) of length 2, got shape {starts.shape}")
    starts = starts[None] if starts.ndim == 1 else starts
    C = C[None] if C.ndim == 2 else C
    n = max(etas.size, starts.shape[0], C.shape[0])
    for name, size in (("eta", etas.size), ("w0", starts.shape[0]), ("coef", C.shape[0])):
        if size not in (1, n):
            raise ValueError(f"{name}: expected 1 or {n} rows (one per run), got {size}")
    return (np.broadcast_to(C, (n, 3, 3)).copy(), np.broadcast_to(etas, (n,)).copy(),
            np.broadcast_to(starts, (n, 2)).copy())


def _grid_vector(name: str, x, n: int | None = None, *, low=None, low_open=False, high=None) -> np.ndarray:
    """A 1-D float vector (a scalar becomes one entry), validated; broadcast to ``n`` entries when given."""
    if x is not None and not isinstance(x, (str, bytes)) and np.ndim(x) == 0:
        x = [x]
    a = V.array(name, x, ndim=1, low=low, low_open=low_open, high=high)
    if n is not None and a.size not in (1, n):
        raise ValueError(f"{name}: expected 1 or {n} values (one per run), got {a.size}")
    return a if n is None or a.size == n else np.full(n, a[0])


def poly_gd(coef, eta, w0, *, n_steps: int, n_blocks: int, momentum=0.0, nesterov=False,
            max_bytes=None, dtype=None) -> dict[str, np.ndarray]:
    r"""GD, heavy ball or Nesterov on the polynomial loss :func:`poly_loss`, one run per (eta, w0) row.

    Update (momentum :math:`\mu`, look-ahead :math:`\nu \in \{0, 1\}`):
    :math:`z_t = w_t + \nu\mu(w_t - w_{t-1})`, :math:`w_{t+1} = w_t + \mu(w_t - w_{t-1}) - \eta\nabla L(z_t)`
    with :math:`w_{-1} = w_0`: GD is :math:`\mu = 0`, heavy ball :math:`\nu = 0`, Nesterov :math:`\nu = 1`.

    Args:
        coef: (3, 3) coefficients :math:`C_{ij}` of :math:`x^iy^j`, or (n, 3, 3): one loss per run.
        eta: (n,) step sizes (> 0), one per run (a scalar is broadcast).
        w0: (n, 2) or (2,) initial points.
        n_steps: steps per run; a multiple of ``n_blocks``.
        n_blocks: the run is cut into ``n_blocks`` blocks of ``n_steps // n_blocks`` steps.
        momentum: (n,) or scalar in [0, 1).
        nesterov: bool or (n,) bools (look-ahead gradient).

    ``max_bytes``: the allocation limit (:func:`theory.validate.byte_limit`) for the per-block records.

    ``dtype``: ``None``/``"float64"`` (the default) or ``"float32"`` (:func:`theory.validate.float_dtype`): the
    coefficients, step sizes, momenta, iterates and block sums in float32, every float output float32, divergence
    past ``DIVERGENCE_BOUND32`` = 1e8 (the recorded loss, quartic in :math:`w`, stays within float32's range). Each
    step rounds the gradient and the update a few times, :math:`O(2^{-24})` of :math:`\max|w|`; near an attracting
    orbit (a minimum, or the edge-of-stability 2-cycle whose two-step Jacobian has spectral radius :math:`\rho < 1`)
    these errors are contracted, so float32 stays within :math:`\sim\kappa\,2^{-24}\max|w|/(1-\rho)` of the
    float64 orbit (:math:`\kappa` the condition number of that Jacobian's eigenvectors): enough for the
    self-stabilization picture (:math:`y^\star`, :math:`\sigma^2`, the time-averaged loss to ~6 digits), not for a
    loss converged below ~1e-7 of its scale, a chaotic orbit (only its statistics compare), or ``gap2`` on a cycle
    (zero to each precision's own round-off).

    Returns (leading axis = run): ``block_mean`` (n, n_blocks, 5): means over each block of the
    visited iterates :math:`w_t` of :math:`x, y, x^2, L(w_t), S(w_t)` (``BLOCK_STATS``; a block of 2
    steps is the time average of a period-2 orbit); ``block_end`` (n, n_blocks, 2); ``final``
    :math:`w_T`; ``gap2`` :math:`\|w_T - w_{T-2}\|` (zero on a 2-cycle); ``diverged``, ``diverged_step``
    (see the module docstring; NaN statistics from the diverging block on).
    """
    n_steps = V.integer("n_steps", n_steps, low=1)
    n_blocks = V.integer("n_blocks", n_blocks, low=1, high=n_steps)
    if n_steps % n_blocks:
        raise ValueError(f"n_blocks: must divide n_steps = {n_steps}, got {n_blocks}")
    C, etas, starts = _runs(coef, eta, w0)
    n = etas.size
    # 7 records per block and run, on the device and again on the host (runs padded to GD_CHUNK)
    V.check_bytes({"n_blocks": n_blocks, "runs": n}, 2 * 7 * 8 * n_blocks * (n + GD_CHUNK),
                  what="the per-block records", max_bytes=max_bytes)
    mom = _grid_vector("momentum", momentum, n, low=0.0)
    if np.any(mom >= 1.0):
        raise ValueError(f"momentum: every value must be in [0, 1), got max {mom.max():.6g}")
    nest = np.atleast_1d(np.asarray(nesterov))
    if nest.dtype != bool:
        raise TypeError(f"nesterov: expected a bool or an array of bools, got {nesterov!r}")
    if nest.size not in (1, n):
        raise ValueError(f"nesterov: expected 1 or {n} values, got {nest.size}")
    dt = V.float_dtype("dtype", dtype)
    grid = {"coef": C, "eta": etas, "w0": starts, "momentum": mom, "nesterov": np.broadcast_to(nest, (n,)).astype(float)}
    if dt != np.float64:  # every float the kernel reads (validated in float64 above)
        grid = floats_as(grid, dt)
    # one compiled program per (n_steps, n_blocks) whatever the grid size: every sweep is padded to GD_CHUNK runs
    return run_grid(_poly_gd_run, grid, static={"n_steps": n_steps, "n_blocks": n_blocks},
                    chunk_size=GD_CHUNK, pad_to_chunk=True)


# ----------------------------------------------------------------------------------------------
# flows of the polynomial losses (diffrax)
# ----------------------------------------------------------------------------------------------

def _sigma2(grad_L: jax.Array, grad_S: jax.Array, S: jax.Array, eta, relax=1.0) -> jax.Array:
    r"""The central flow's oscillation variance :math:`\sigma^2` (one unstable direction).

    :math:`\sigma^2 = \max\{0,\ [2\langle-\nabla L, \nabla S\rangle + \kappa(S - 2/\eta)]/\|\nabla S\|^2\}`,
    :math:`\kappa = 2\omega/\eta`. With this :math:`\sigma^2` the flow
    :math:`\dot w = -\eta[\nabla L + \tfrac12\sigma^2\nabla S]` has
    :math:`\dot S = -\omega(S - 2/\eta)` whenever :math:`\sigma^2 > 0`: :math:`S` is held at
    :math:`2/\eta` (and pulled back at rate :math:`\omega` per step if it is off, which also makes
    the vector field continuous). Far below :math:`2/\eta` the bracket is negative and the flow is
    gradient flow; the switch happens once :math:`2/\eta - S` falls below the gradient flow's
    sharpening rate over :math:`\omega`. :math:`\omega` = ``relax``.
    """
    kappa = 2.0 * relax / eta
    num = 2.0 * jnp.vdot(-grad_L, grad_S) + kappa * (S - 2.0 / eta)
    return jnp.maximum(0.0, num / jnp.maximum(jnp.vdot(grad_S, grad_S), _floor(grad_S.dtype)))


def central_flow_sigma2(grad_L: jax.Array, grad_S: jax.Array, S: jax.Array, eta, relax=1.0) -> jax.Array:
    r"""The central flow's oscillation variance :math:`\sigma^2` (one unstable direction).

    :math:`\sigma^2 = \max\{0,\ [2\langle-\nabla L, \nabla S\rangle + \kappa(S - 2/\eta)]/\|\nabla S\|^2\}`,
    :math:`\kappa = 2\omega/\eta` (:math:`\omega` = ``relax`` > 0, :math:`\eta` > 0); ``grad_L`` and
    ``grad_S`` are vectors of one length, ``S`` a scalar. See the module's flows for its role.
    """
    grad_L = V.traceable("grad_L", grad_L, ndim=1)
    grad_S = V.traceable("grad_S", grad_S, shape=grad_L.shape)
    S = V.traceable_real("S", S)
    eta = V.traceable_real("eta", eta, low=0.0, low_open=True)
    relax = V.traceable_real("relax", relax, low=0.0, low_open=True)
    return _sigma2(grad_L, grad_S, S, eta, relax)


def _flow_field(t, state, args):
    r"""Vector field of the three flows on the state (c, r) (time unit: one GD step).

    gradient: :math:`\dot c = -\eta\nabla L(c)`; central: :math:`\dot c = -\eta[\nabla L + \tfrac12\sigma^2\nabla S]`;
    rod: :math:`\dot c = -\tfrac\eta2[\nabla L(c+r) + \nabla L(c-r)]`,
    :math:`\dot r = \tfrac\eta2[\nabla L(c+r) - \nabla L(c-r)] - 2r`. ``r`` is frozen for the first two.
    """
    coef, eta, code, relax = args
    c, r = state[:2], state[2:]
    g, S, gS = _sharpness_and_gradient(c, coef)
    s2 = _sigma2(g, gS, S, eta, relax)
    gp, gm = _poly_grad(c + r, coef), _poly_grad(c - r, coef)
    dc = jnp.where(code == 0, -eta * g, jnp.where(code == 1, -eta * (g + 0.5 * s2 * gS), -0.5 * eta * (gp + gm)))
    dr = jnp.where(code == 2, 0.5 * eta * (gp - gm) - 2.0 * r, jnp.zeros_like(r))
    return jnp.concatenate([dc, dr])


def _poly_flow_run(point, ts, *, rtol: float, atol: float, max_steps: int):
    import diffrax

    coef, eta, w0, code, relax = point["coef"], point["eta"], point["w0"], point["code"], point["relax"]
    # the rod starts as GD's first two iterates: c = (w0 + w1)/2, r = (w0 - w1)/2 with w1 = w0 - eta grad L(w0)
    w1 = w0 - eta * _poly_grad(w0, coef)
    rod = code == 2
    state0 = jnp.concatenate([jnp.where(rod, 0.5 * (w0 + w1), w0), jnp.where(rod, 0.5 * (w0 - w1), 0.0 * w0)])
    sol = diffrax.diffeqsolve(
        diffrax.ODETerm(_flow_field), diffrax.Tsit5(), t0=0.0, t1=ts[-1], dt0=0.05, y0=state0,
        args=(coef, eta, code, relax), saveat=diffrax.SaveAt(ts=ts),
        stepsize_controller=diffrax.PIDController(rtol=rtol, atol=atol), max_steps=max_steps, throw=False)
    ys = sol.ys
    c, r = ys[:, :2], ys[:, 2:]
    loss = jax.vmap(poly_loss, (0, None))(c, coef)
    g, S, gS = jax.vmap(_sharpness_and_gradient, (0, None))(c, coef)
    s2 = jax.vmap(central_flow_sigma2, (0, 0, 0, None, None))(g, gS, S, eta, relax)
    # the mean loss at the rod's two ends c +- r: the rod flow's prediction of GD's time-averaged loss, and L(c) for the
    # other flows (r = 0); the central flow's prediction L + sigma^2 S / 2 is theory (theory.eos.central_flow_mean_loss)
    end_loss = 0.5 * (jax.vmap(poly_loss, (0, None))(c + r, coef) + jax.vmap(poly_loss, (0, None))(c - r, coef))
    sigma2 = jnp.where(code == 1, s2, jnp.where(code == 2, jnp.sum(r * r, axis=1), 0.0))
    failed = sol.result != diffrax.RESULTS.successful
    div = failed | ~jnp.all(jnp.isfinite(ys)) | (jnp.max(jnp.abs(jnp.where(jnp.isfinite(ys), ys, 0.0))) > DIVERGENCE_BOUND)
    first_bad = jnp.argmax(~jnp.all(jnp.isfinite(ys), axis=1))
    return {"center": c, "r": r, "loss": loss, "sharpness": S, "sigma2": sigma2, "end_loss": end_loss,
            "diverged": div, "diverged_step": jnp.where(div, jnp.where(jnp.any(~jnp.isfinite(ys)), first_bad, -1), -1)}


def poly_flow(coef, eta, w0, ts, *, flow: str = "central", relax: float = 1.0, rtol: float = 1e-10,
              atol: float = 1e-12, max_steps: int = 200_000) -> dict[str, np.ndarray]:
    r"""Gradient flow, central flow or rod flow of :func:`poly_loss`, one run per (eta, w0) row, saved at ``ts``.

    Time is measured in GD steps (the flows move at speed :math:`\eta\nabla L`). ``coef``, ``eta``,
    ``w0`` as in :func:`poly_gd` (one row per run, broadcast). ``flow``:

    * ``"gradient"``: :math:`\dot w = -\eta\nabla L(w)`;
    * ``"central"``: :math:`\dot w = -\eta[\nabla L + \tfrac12\sigma^2\nabla S]` with :math:`\sigma^2`
      from :func:`central_flow_sigma2` (``relax`` = its :math:`\omega`); :math:`\nabla S` by autodiff
      of the closed-form top eigenvalue of the 2x2 Hessian;
    * ``"rod"``: the rod flow on (centre :math:`c`, half-rod :math:`r`), started from GD's first two
      iterates :math:`c = (w_0 + w_1)/2`, :math:`r = (w_0 - w_1)/2`.

    Integrated by diffrax (Tsit5, PID step control with ``rtol``/``atol``); a solver failure or a
    non-finite state marks the run ``diverged``. Returns (leading axis = run, then time):
    ``center`` (n, T, 2), ``r`` (n, T, 2) (zero except for the rod), ``loss`` :math:`L(c)`,
    ``sharpness`` :math:`S(c)`, ``sigma2`` (the central flow's :math:`\sigma^2`; the rod's
    :math:`\|r\|^2`; 0 for gradient flow), ``end_loss`` (the mean loss at the rod's two ends,
    :math:`\tfrac12[L(c+r) + L(c-r)]`: the rod flow's prediction of GD's time-averaged loss; :math:`L(c)` for the
    other flows), ``diverged``, ``diverged_step`` (index into ``ts`` of the first non-finite state, -1 if none).
    The central flow's prediction of GD's time-averaged loss is
    :func:`theory.eos.central_flow_mean_loss` of ``loss`` and ``sigma2 * sharpness``.
    """
    V.choice("flow", flow, FLOWS)
    relax = V.real("relax", relax, low=0.0, low_open=True)
    rtol = V.real("rtol", rtol, low=0.0, low_open=True)
    atol = V.real("atol", atol, low=0.0, low_open=True)
    max_steps = V.integer("max_steps", max_steps, low=1)
    times = V.array("ts", ts, ndim=1, low=0.0)
    if times.size < 2 or not np.all(np.diff(times) > 0) or times[0] != 0.0:
        raise ValueError(f"ts: expected increasing save times starting at 0 (at least 2), got {times[:4]}...")
    C, etas, starts = _runs(coef, eta, w0)
    n = etas.size
    grid = {"coef": C, "eta": etas, "w0": starts, "code": np.full(n, FLOWS.index(flow)), "relax": np.full(n, relax)}
    # diffrax programs are expensive to compile (seconds): every call is padded to FLOW_CHUNK runs so that one
    # compiled program serves every flow, problem and grid size with the same number of save times
    out = run_grid(_poly_flow_run, grid, jnp.asarray(times),
                   static={"rtol": rtol, "atol": atol, "max_steps": max_steps}, chunk_size=FLOW_CHUNK, pad_to_chunk=True)
    out["t"] = times
    return out


# ----------------------------------------------------------------------------------------------
# the catapult: uv model, one sample, label 0
# ----------------------------------------------------------------------------------------------

def _catapult_run(point, *, width: int, n_steps: int, n_blocks: int):
    r"""GD on :math:`\tfrac12 f^2`, :math:`f = u^\top v/\sqrt m`, from :math:`u, v \sim N(0, I_m)`, with :math:`\eta = c/\lambda_0`."""
    c, key = point["eta_lambda0"], point["key"]
    ku, kv = jax.random.split(key)
    if c.dtype == jnp.float64:
        u, v = jax.random.normal(ku, (width,)), jax.random.normal(kv, (width,))
    else:  # float32: the float64 draws of the same keys, from their uniforms' top 23 bits (sims.nqm.noise_at)
        u, v = _normal32(ku, width), _normal32(kv, width)
    scale = jnp.sqrt(jnp.asarray(1.0 * width, c.dtype))
    lam0 = (u @ u + v @ v) / width
    eta = c / lam0
    loss0 = 0.5 * (u @ v / scale) ** 2
    block = n_steps // n_blocks

    def step(carry, _):
        u, v, div, div_step, t = carry
        f = u @ v / scale
        nu, nv = u - eta * f * v / scale, v - eta * f * u / scale
        bad = ~div & (_bad(nu) | _bad(nv))
        div_step = jnp.where(bad, t + 1, div_step)
        div = div | bad
        u, v = jnp.where(div, u, nu), jnp.where(div, v, nv)
        return (u, v, div, div_step, t + 1), 0.5 * f * f

    def run_block(carry, _):
        carry, losses = lax.scan(step, carry, None, length=block)
        u, v = carry[0], carry[1]
        return carry, (jnp.max(losses), 0.5 * (u @ v / scale) ** 2, eta * (u @ u + v @ v) / width)

    init = (u, v, jnp.array(False), jnp.array(-1), jnp.array(0))
    (u, v, div, div_step, _), (bmax, bloss, bel) = lax.scan(run_block, init, None, length=n_blocks)
    dead = div & (jnp.arange(n_blocks) >= div_step // block)
    nan = lambda a: jnp.where(dead, jnp.nan, a)  # noqa: E731
    return {"eta": eta, "lambda0": lam0, "loss0": loss0, "block_max_loss": nan(bmax), "block_loss": nan(bloss),
            "block_eta_lambda": nan(bel), "final_eta_lambda": jnp.where(div, jnp.nan, bel[-1]),
            "max_loss_ratio": jnp.where(div, jnp.inf, jnp.max(bmax) / loss0), "diverged": div,
            "diverged_step": div_step}


def catapult_gd(keys, eta_lambda0, *, width: int, n_steps: int, n_blocks: int,
                max_bytes=None, dtype=None) -> dict[str, np.ndarray]:
    r"""GD on the uv model with one sample (label 0) over a grid of :math:`\eta\lambda_0` x seeds.

    Each run draws :math:`u, v \sim N(0, I_m)` from its key, sets :math:`\eta = c/\lambda_0` with
    :math:`\lambda_0 = (\|u\|^2 + \|v\|^2)/m` (so :math:`\eta\lambda_0 = c` exactly) and iterates
    :math:`u^+ = u - \eta f v/\sqrt m`, :math:`v^+ = v - \eta f u/\sqrt m` on :math:`\tfrac12 f^2`.

    Args:
        keys: typed PRNG keys, shape (n_seeds,) (one run per key and value of ``eta_lambda0``).
        eta_lambda0: (n_c,) values :math:`c = \eta\lambda_0 > 0`.
        width: :math:`m`.
        n_steps: steps per run (a multiple of ``n_blocks``).
        n_blocks: blocks over which the loss maximum, the loss and :math:`\eta\lambda` are recorded.
        max_bytes: the allocation limit (:func:`theory.validate.byte_limit`) for a chunk's vectors and the records.
        dtype: ``None``/``"float64"`` (the default) or ``"float32"`` (:func:`theory.validate.float_dtype`; threefry
            keys): :math:`u, v`, :math:`\eta` and every record in float32, divergence past ``DIVERGENCE_BOUND32``.
            The initial vectors are the float64 draws of the same keys to :math:`2^{-23}/\varphi(z)` (the uniform
            underneath keeps its top 23 bits, :func:`sims.nqm.noise_at`), and :math:`\eta\lambda_0 = c` to a few
            roundings. Below :math:`c = 2` a step moves :math:`(u, v)` only along :math:`\nabla f`, by amounts that
            shrink geometrically with :math:`f`, so float32 follows float64 to their initial gap plus a few roundings of
            :math:`\max|u|` per step while :math:`f` is non-negligible (1e-7 relative in :math:`\eta\lambda`,
            measured at width 64); through a catapult (:math:`2 < c < 4`) the phase is kept (the loss spikes,
            :math:`\eta\lambda` ends below 2) but the spike's size and the landing sharpness only to the gap the
            growth phase amplifies (measured at width 64: 4e-6 and up to 2e-4 relative at :math:`c = 3.9`); past
            :math:`c = 4` both flag divergence, float32 earlier (its bound is lower).

    Returns arrays of shape (n_c, n_seeds, ...): ``eta``, ``lambda0``, ``loss0``, ``block_max_loss``,
    ``block_loss``, ``block_eta_lambda`` (at each block's end), ``final_eta_lambda``,
    ``max_loss_ratio`` (largest loss over the first, :math:`\infty` when diverged), ``diverged``,
    ``diverged_step``.
    """
    V.key("keys", keys)
    ks = jnp.asarray(keys)
    if ks.ndim != 1 or ks.shape[0] == 0:
        raise ValueError(f"keys: expected a 1-D array of typed keys (one per seed), got shape {ks.shape}")
    cs = _grid_vector("eta_lambda0", eta_lambda0, low=0.0, low_open=True)
    width = V.integer("width", width, low=1)
    n_steps = V.integer("n_steps", n_steps, low=1)
    n_blocks = V.integer("n_blocks", n_blocks, low=1, high=n_steps)
    if n_steps % n_blocks:
        raise ValueError(f"n_blocks: must divide n_steps = {n_steps}, got {n_blocks}")
    n_c, n_s = cs.size, ks.shape[0]
    # a chunk holds u, v and their updates (about 8 width-vectors a run); the records 3 values per block and run,
    # device and host. Checked here so that a width no chunk can hold is named, not run_grid's chunk_size
    V.check_bytes({"width": width, "n_blocks": n_blocks, "runs": n_c * n_s},
                  8 * 8 * width * CATAPULT_CHUNK + 2 * 3 * 8 * n_blocks * (n_c * n_s + CATAPULT_CHUNK),
                  what="a chunk's u, v vectors and the per-block records", max_bytes=max_bytes)
    dt = V.float_dtype("dtype", dtype)
    _coupled_keys(ks, dt, "initial vectors")
    grid = {"eta_lambda0": np.repeat(cs, n_s).astype(dt), "key": jnp.tile(ks, n_c)}
    # padded to CATAPULT_CHUNK runs: one compiled program per (width, n_steps, n_blocks) whatever the grid size
    out = run_grid(_catapult_run, grid, static={"width": width, "n_steps": n_steps, "n_blocks": n_blocks},
                   chunk_size=CATAPULT_CHUNK, pad_to_chunk=True)
    return {k: v.reshape((n_c, n_s) + v.shape[1:]) for k, v in out.items()}


# ----------------------------------------------------------------------------------------------
# a tiny tanh MLP trained by full-batch GD, and its central flow
# ----------------------------------------------------------------------------------------------

def mlp_data(key, n: int, d: int, *, max_bytes=None) -> tuple[jax.Array, jax.Array]:
    r"""Regression data: :math:`X \sim N(0, I_d)` (n rows), :math:`y = \sin(2 X w/\sqrt d)` for a Gaussian teacher :math:`w`.

    ``max_bytes``: the allocation limit (:func:`theory.validate.byte_limit`) for ``X`` and its draw.
    """
    V.key("key", key)
    n = V.integer("n", n, low=1)
    d = V.integer("d", d, low=1)
    # X and the random bits it is drawn from (issue 29: n = 1e11 returned, and the process aborted later)
    V.check_bytes({"n": n, "d": d}, 2 * 8 * n * d + 3 * 8 * n, what="X, an (n, d) float64 array, and its draw",
                  max_bytes=max_bytes)
    kx, kw = jax.random.split(key)
    X = jax.random.normal(kx, (n, d))
    return X, jnp.sin(2.0 * X @ jax.random.normal(kw, (d,)) / np.sqrt(d))


def _widths(widths) -> tuple[int, ...]:
    ws = V.layer_widths("widths", widths, at_least=2, form="(d, h, ..., 1)")
    if ws[-1] != 1:
        raise ValueError(f"widths: expected (d, h, ..., 1) with output width 1, got {ws}")
    return ws


def _unflatten(theta: jax.Array, widths: tuple[int, ...]) -> list[jax.Array]:
    mats, start = [], 0
    for a, b in zip(widths[:-1], widths[1:]):
        mats.append(theta[start:start + a * b].reshape(a, b))
        start += a * b
    return mats


def mlp_init(key, widths, *, max_bytes=None) -> jax.Array:
    r"""Flat parameters of the bias-free MLP, layer :math:`k` Gaussian with variance :math:`1/\mathrm{fan\_in}`.

    ``max_bytes``: the allocation limit (:func:`theory.validate.byte_limit`) for the parameters.
    """
    V.key("key", key)
    ws = _widths(widths)
    V.check_bytes({"widths": ws}, 3 * 8 * sum(a * b for a, b in zip(ws[:-1], ws[1:])),
                  what="the flat parameters (with the layers they are drawn as)", max_bytes=max_bytes)
    keys = jax.random.split(key, len(ws) - 1)
    return jnp.concatenate([(jax.random.normal(k, (a, b)) / np.sqrt(a)).ravel()
                            for k, a, b in zip(keys, ws[:-1], ws[1:])])


def _mlp_loss(theta: jax.Array, X: jax.Array, Y: jax.Array, widths) -> jax.Array:
    r""":math:`\frac1{2n}\sum_i (f(x_i) - y_i)^2` for :math:`f(x) = W_L^\top\tanh(\cdots\tanh(W_1^\top x))`."""
    mats = _unflatten(theta, tuple(widths))
    h = X
    for W in mats[:-1]:
        h = jnp.tanh(h @ W)
    return 0.5 * jnp.mean(((h @ mats[-1])[:, 0] - Y) ** 2)


def mlp_loss(theta: jax.Array, X: jax.Array, Y: jax.Array, widths) -> jax.Array:
    r""":math:`\frac1{2n}\sum_i (f(x_i) - y_i)^2` for :math:`f(x) = W_L^\top\tanh(\cdots\tanh(W_1^\top x))`.

    ``theta``: the flat parameters (:func:`mlp_init`); ``X`` (n, widths[0]); ``Y`` (n,).
    """
    ws = _widths(widths)
    theta = V.traceable("theta", theta, shape=(sum(a * b for a, b in zip(ws[:-1], ws[1:])),))
    X = V.traceable("X", X, shape=(None, ws[0]))
    Y = V.one_per_row("Y", V.traceable("Y", Y, ndim=1), "X", X.shape[0])
    return _mlp_loss(theta, X, Y, ws)


MLP_METHODS = ("gd", "heavy_ball", "nesterov", "central", "gradient")
"""Dynamics of :func:`mlp_run`: three optimizers and two flows."""


def _mlp_run(point, X, Y, every, substeps, *, widths, n_meas: int, lanczos_iter: int, relax: float):
    r"""One run of :func:`mlp_run`: ``n_meas`` blocks of ``every`` units, ``substeps`` substeps per unit.

    Every substep refreshes the top eigenpair (warm-started Lanczos), :math:`\nabla L` and :math:`\nabla S`;
    a flow moves by Euler, an optimizer takes its step on the last substep of each unit (its iterate is
    constant in between, so averages over substeps are averages over its iterates). ``every`` and ``substeps`` are
    data (traced loop bounds), so runs of any length and any substep count with the same number of measurements share
    one program.
    """
    eta, mom, code = point["eta"], point["momentum"], point["code"]
    nest = (code == 2).astype(eta.dtype)
    is_flow = code >= 3
    central = (code == 3).astype(eta.dtype)
    k_init, k_start = jax.random.split(point["key"])
    loss = lambda th: _mlp_loss(th, X, Y, widths)  # noqa: E731
    grad = jax.grad(loss)
    f32 = X.dtype == jnp.float32
    theta0 = _mlp_init32(k_init, widths) if f32 else mlp_init(k_init, widths)
    # the int -> float conversion the float64 division did implicitly, in the run's dtype
    dt = 1.0 / substeps.astype(X.dtype)

    def substep(i, state):
        # i < 0: warm-up of the eigenvector at theta0 (a cold start needs more Krylov steps than a refresh);
        # nothing moves and nothing is recorded. One loop body serves both, so the program holds one Lanczos.
        (th, th_prev, u, div, div_step), (acc, first) = state
        live = i >= 0
        S, u, S2 = top_eigenpair(lambda v: jax.jvp(grad, (th,), (v,))[1], u, lanczos_iter)
        # one gradient: at Nesterov's look-ahead z, which is th itself for every other method and for the flows
        z = th + nest * mom * (th - th_prev)
        g = grad(z)
        # grad_theta of u^T H(theta) u at fixed u: the third derivative contracted twice with the top eigenvector
        gS = jax.grad(lambda p: jnp.vdot(u, jax.jvp(grad, (p,), (u,))[1]))(th)
        s2 = central * _sigma2(g, gS, S, eta, relax)
        flow_new = th - dt * eta * (g + 0.5 * s2 * gS)
        opt_new = th + mom * (th - th_prev) - eta * g
        step_now = live & ((i % substeps) == substeps - 1)
        new = jnp.where(live & is_flow, flow_new, jnp.where(step_now, opt_new, th))
        new_prev = jnp.where(step_now & ~is_flow, th, th_prev)
        bad = ~div & _bad(new)
        div_step = jnp.where(bad, i // substeps + 1, div_step)  # relative to the block start; shifted below
        div = div | bad
        L = loss(th)
        first = jnp.where(i == 0, jnp.stack([S, S2, s2, L]), first)
        carry = (jnp.where(div, th, new), jnp.where(div, th_prev, new_prev), u, div, div_step)
        return carry, (acc + jnp.where(live, jnp.stack([L, s2, s2 * S]), 0.0), first)

    def block(carry, k):
        was_div = carry[3]
        start = jnp.where(k == 0, -WARMUP * lanczos_iter, 0)
        carry, (acc, first) = lax.fori_loop(start, every * substeps, substep,
                                            (carry, (jnp.zeros(3, X.dtype), jnp.zeros(4, X.dtype))))
        th, th_prev, u, div, div_step = carry
        div_step = jnp.where(div & ~was_div, k * every + div_step, div_step)
        return (th, th_prev, u, div, div_step), (acc / (every * substeps), *first)

    u0 = _normal32(k_start, theta0.size) if f32 else jax.random.normal(k_start, theta0.shape)
    init = (theta0, theta0, u0 / jnp.linalg.norm(u0), jnp.array(False), jnp.array(-1))
    (_, _, _, div, div_step), (avg, S, S2, s2, L) = lax.scan(block, init, jnp.arange(n_meas))
    dead = div & (jnp.arange(n_meas) >= (div_step - 1) // every)  # the diverging block and every later one
    nan = lambda a: jnp.where(dead, jnp.nan, a)  # noqa: E731
    return {"sharpness": nan(S), "second": nan(S2), "sigma2": nan(s2), "loss": nan(L), "mean_loss": nan(avg[:, 0]),
            "mean_sigma2": nan(avg[:, 1]), "mean_sigma2_sharpness": nan(avg[:, 2]),
            "diverged": div, "diverged_step": div_step}


def _normal32(key: jax.Array, size: int) -> jax.Array:
    """``jax.random.normal(key, (size,))`` in float32 arithmetic: the float64 draw to float32 round-off (the uniform
    underneath keeps its top 23 bits, :func:`sims.nqm.noise_at`; a row-major draw of any shape is this one reshaped)."""
    return noise_at(key, jnp.arange(size), "gaussian", 0, size, "float32")


def _coupled_keys(ks: jax.Array, dt: np.dtype, what: str) -> None:
    """Refuse float32 runs on keys :func:`_normal32` cannot couple: it draws the float64 runs' ``what`` value by value,
    which needs threefry2x32 keys."""
    if dt != np.float64 and str(jax.random.key_impl(ks)) != "threefry2x32":
        raise ValueError(f"keys, dtype: float32 runs draw the float64 runs' {what} value by value, which needs "
                         f"threefry2x32 keys (jax.random.key(seed)); got {jax.random.key_impl(ks)} keys")


def _mlp_init32(key: jax.Array, widths: tuple[int, ...]) -> jax.Array:
    r""":func:`mlp_init` of ``key`` in float32: each layer's float64 draw to :math:`2^{-23}/\varphi(z)` (coupled), over
    :math:`\sqrt{\mathrm{fan\_in}}` rounded to float32."""
    keys = jax.random.split(key, len(widths) - 1)
    return jnp.concatenate([_normal32(k, a * b) / np.float32(np.sqrt(a)) for k, a, b in zip(keys, widths[:-1], widths[1:])])


def _mlp_args(X, Y, widths):
    ws = _widths(widths)
    Xa = V.array("X", X, ndim=2)
    Ya = V.one_per_row("Y", V.array("Y", Y, ndim=1), "X", Xa.shape[0])
    if Xa.shape[1] != ws[0]:
        raise ValueError(f"widths: the input width {ws[0]} does not match X's {Xa.shape[1]} columns")
    return Xa, Ya, ws


# runs per compiled network program (grids are padded to it: one program for every sweep size). The cost is linear in
# the runs of a chunk at these sizes (0.5 ms per run-substep at 2, 4 and 6 runs alike), so a small chunk wastes
# least on padding
MLP_CHUNK = 2
WARMUP = 8  # restarted Lanczos rounds (x lanczos_iter loop iterations) for a network run's initial eigenvector


def mlp_run(keys, eta, X, Y, *, widths, methods="gd", momentum=0.0, n_steps: int, every: int, substeps: int = 2,
            lanczos_iter: int = 6, relax: float = 1.0, max_bytes=None, dtype=None) -> dict[str, np.ndarray]:
    r"""Full-batch GD, heavy ball, Nesterov, the central flow or gradient flow on :func:`mlp_loss`, with the sharpness.

    One run per row of (``keys``, ``eta``, ``methods``, ``momentum``) (scalars and single values broadcast).
    A run's key is split into the initialization key (:func:`mlp_init`, so runs with equal keys start
    from the same parameters) and the Lanczos start. Time is counted in GD steps; each unit is cut into
    ``substeps`` substeps, at each of which the top Hessian eigenpair is refreshed by
    :func:`top_eigenpair` (``lanczos_iter`` steps, warm-started at the previous eigenvector).

    * ``"gd"``, ``"heavy_ball"``, ``"nesterov"``: the update of :func:`poly_gd` (momentum :math:`\mu`,
      Nesterov's gradient at the look-ahead), one step per unit;
    * ``"central"``: :math:`\dot\theta = -\eta[\nabla L + \tfrac12\sigma^2\nabla S]`, :math:`\sigma^2` from
      :func:`central_flow_sigma2` (``relax`` its :math:`\omega`), :math:`\nabla S = \nabla_\theta(u^\top H u)`
      at the top eigenvector :math:`u`; explicit Euler with step ``1/substeps``;
    * ``"gradient"``: the same with :math:`\sigma^2 = 0`.

    Returns per run and measurement :math:`k` (at time :math:`k\cdot` ``every``): ``sharpness``, ``second``
    (the second Ritz value), ``sigma2`` (0 but for the central flow), ``loss`` :math:`L(\theta)`, and means over
    the next ``every`` units (every substep): ``mean_loss`` of :math:`L(\theta)` (for the optimizers their
    time-averaged loss), ``mean_sigma2`` of :math:`\sigma^2` and ``mean_sigma2_sharpness`` of :math:`\sigma^2S`
    (from which :func:`theory.eos.central_flow_mean_loss` forms the central flow's prediction of GD's
    time-averaged loss), ``diverged``, ``diverged_step``. ``max_bytes``: the allocation limit
    (:func:`theory.validate.byte_limit`) for a chunk's parameters, Krylov bases and activations, and the records.

    ``dtype``: ``None``/``"float64"`` (the default) or ``"float32"`` (:func:`theory.validate.float_dtype`): the
    parameters, data, step sizes, momenta, the Lanczos basis (:func:`sims.hvp.top_eigenpair` computes in its start
    vector's dtype), the running sums and every float output in float32, divergence past ``DIVERGENCE_BOUND32``. The
    initial parameters and Lanczos start are the float64 draws of the same keys to float32 round-off
    (:func:`sims.nqm.noise_at`; threefry keys only). Each substep rounds the forward and backward passes, the HVPs
    and the update (relative :math:`O(2^{-24})` per operation, a few per layer); Lanczos with full reorthogonalization
    returns a Ritz value exact for an operator within :math:`\sim\sqrt P\,2^{-24}\lVert H\rVert` of the float32
    Hessian (:func:`sims.hvp.top_eigenpair`). Along a trajectory that does not amplify perturbations (GD, heavy ball
    and Nesterov below :math:`2/\eta`, gradient flow, the central flow) the errors add up linearly, at most
    :math:`\sim 32\cdot2^{-24}` relative a substep: the sharpness, the loss and the block means within ~1e-6..1e-5 of
    float64's (measured on a (3, 6, 1) network, all five methods: sharpness 8e-7, loss and block means 1.7e-6 after
    20 steps, 3e-6 after 200). Not kept: the instantaneous ``sigma2`` (its numerator holds :math:`\kappa(S - 2/\eta)`,
    a difference of nearly equal numbers; 2e-5 measured, the block means average it), ``second`` (the second Ritz
    value of a start converged to round-off follows that round-off's direction, in either precision), a sharpness
    held to 1e-6 of :math:`2/\eta` (:func:`mlp_track` refuses float32), a chaotic edge-of-stability orbit (only its
    statistics compare), or a loss converged below ~1e-7 of its scale.
    """
    dt = V.float_dtype("dtype", dtype)
    Xa, Ya, ws = _mlp_args(X, Y, widths)
    V.key("keys", keys)
    ks = jnp.atleast_1d(jnp.asarray(keys))
    if ks.ndim != 1:
        raise ValueError(f"keys: expected a 1-D array of typed keys, got shape {ks.shape}")
    _coupled_keys(ks, dt, "initial parameters")
    every = V.integer("every", every, low=1)
    n_steps = V.integer("n_steps", n_steps, low=every)
    if n_steps % every:
        raise ValueError(f"every: must divide n_steps = {n_steps}, got {every}")
    substeps = V.integer("substeps", substeps, low=1)
    P = sum(a * b for a, b in zip(ws[:-1], ws[1:]))
    lanczos_iter = V.integer("lanczos_iter", lanczos_iter, low=2, high=P)
    relax = V.real("relax", relax, low=0.0, low_open=True)
    if isinstance(methods, (str, np.str_)):
        names = [str(methods)]
    elif isinstance(methods, (list, tuple, np.ndarray)):
        names = [str(m) if isinstance(m, np.str_) else m for m in np.asarray(methods, dtype=object).ravel()]
    else:
        raise TypeError(f"methods: expected a method name or a sequence of them, got {type(methods).__name__}")
    for m in names:
        V.choice("methods", m, MLP_METHODS)
    etas = _grid_vector("eta", eta, low=0.0, low_open=True)
    mom = _grid_vector("momentum", momentum, low=0.0)
    if np.any(mom >= 1.0):
        raise ValueError(f"momentum: every value must be in [0, 1), got max {mom.max():.6g}")
    n = max(ks.shape[0], etas.size, len(names), mom.size)
    for name, size in (("keys", ks.shape[0]), ("eta", etas.size), ("methods", len(names)), ("momentum", mom.size)):
        if size not in (1, n):
            raise ValueError(f"{name}: expected 1 or {n} values (one per run), got {size}")
    codes = np.array([MLP_METHODS.index(m) for m in names])
    # per run of a chunk: the Krylov basis and ~8 parameter-sized vectors (theta, gradients, JVPs) and every layer's
    # activations over the data; the records: 7 values per measurement and run, device and host
    acts = Xa.shape[0] * sum(ws)
    V.check_bytes({"widths": ws, "lanczos_iter": lanczos_iter, "n_steps / every": n_steps // every, "X": Xa.shape},
                  dt.itemsize * (MLP_CHUNK * ((lanczos_iter + 9) * P + 4 * acts) + 2 * 7 * (n_steps // every) * (n + MLP_CHUNK)),
                  what="a chunk's parameters, Krylov bases and activations, and the records", max_bytes=max_bytes)
    grid = {"eta": np.broadcast_to(etas, (n,)).astype(dt), "key": jnp.broadcast_to(ks, (n,)) if ks.shape[0] == 1 else ks,
            "momentum": np.broadcast_to(mom, (n,)).astype(dt), "code": np.broadcast_to(codes, (n,)).copy()}
    # the number of measurements shapes the output (static); their spacing and the substeps are data, so short runs
    # (tests), long ones and optimizers at one substep per step share one compiled program with the flows
    return run_grid(_mlp_run, grid, jnp.asarray(Xa, dt), jnp.asarray(Ya, dt), jnp.asarray(every), jnp.asarray(substeps),
                    static={"widths": ws, "n_meas": n_steps // every, "lanczos_iter": lanczos_iter, "relax": relax},
                    chunk_size=MLP_CHUNK, pad_to_chunk=True)


# ----------------------------------------------------------------------------------------------
# GD against the constrained trajectory (projected gradient flow onto {S <= threshold}) on a tiny MLP
# ----------------------------------------------------------------------------------------------

TRACK_CHUNK = 10  # trajectories per compiled program (two keys; padded, so any number of keys shares it)
TRACK_RUNS = ("gd", "constrained", "gradient", "gd_half", "central")
"""The five trajectories of :func:`mlp_track`, in the order of its leading output axis."""
TRACK_TOP = 2  # the central flow's edge subspace: the top two Hessian eigenvectors
SIGMA_ITERS = 60  # accelerated projected-gradient iterations per substep for the matrix sigma^2 (warm-started)
TRACK_FLOAT32 = ("the held sharpness (to 1e-6 of 2/eta) and the Euler remainder in S are below the accuracy of a float32 "
                 "Hessian eigendecomposition (~P 2^-24 relative)")


def _constrained_sigma2(g: jax.Array, gS: jax.Array, S: jax.Array, eta, threshold, relax) -> jax.Array:
    r""":math:`\sigma^2 = \max\{0, [2\langle-\nabla L, \nabla S\rangle + (2\omega/\eta)(S - S_c)]/\|\nabla S\|^2\}`.

    The multiplier that makes :math:`\dot w = -\eta[\nabla L + \tfrac12\sigma^2\nabla S]` hold :math:`S` at the
    constraint level :math:`S_c` (``threshold``; pulled back at rate :math:`\omega` if it is off): the projection of
    :math:`-\nabla L` onto the tangent of :math:`\{S = S_c\}` whenever it points out of :math:`\{S \le S_c\}`, i.e.
    projected gradient flow. At :math:`S_c = 2/\eta` it is :func:`central_flow_sigma2`.
    """
    num = 2.0 * jnp.vdot(-g, gS) + (2.0 * relax / eta) * (S - threshold)
    return jnp.maximum(0.0, num / jnp.maximum(jnp.vdot(gS, gS), 1e-300))


def _psd_part(A: jax.Array) -> jax.Array:
    """The nearest positive semidefinite matrix to the symmetric ``A`` (Frobenius norm): negative eigenvalues clipped."""
    w, V_ = jnp.linalg.eigh(0.5 * (A + A.T))
    return (V_ * jnp.maximum(w, 0.0)) @ V_.T


def _sigma_matrix(Q: jax.Array, B: jax.Array, start: jax.Array, n_iter: int = SIGMA_ITERS) -> jax.Array:
    """:func:`central_flow_sigma_matrix` without the argument checks (called at every substep of the flows)."""
    k = B.shape[0]
    Qm = Q.reshape(k * k, k * k)
    step = 1.0 / jnp.maximum(jnp.linalg.eigvalsh(0.5 * (Qm + Qm.T))[-1], 1e-300)
    apply = lambda S: (Qm @ S.reshape(-1)).reshape(k, k)  # noqa: E731

    def body(_, state):
        S, Y, t = state
        S_new = _psd_part(Y - step * (apply(Y) - B))
        t_new = 0.5 * (1.0 + jnp.sqrt(1.0 + 4.0 * t * t))
        return S_new, S_new + ((t - 1.0) / t_new) * (S_new - S), t_new

    S0 = _psd_part(start)
    return lax.fori_loop(0, n_iter, body, (S0, S0, jnp.ones((), B.dtype)))[0]


def central_flow_sigma_matrix(Q: jax.Array, B: jax.Array, start: jax.Array, n_iter: int = SIGMA_ITERS) -> jax.Array:
    r"""The central flow's oscillation covariance :math:`\Sigma` on a k-dimensional edge subspace (k x k, PSD).

    With :math:`G_{ij} = \nabla_w(u_i^\top H u_j)` (:math:`u_i` the subspace's orthonormal basis, held fixed),
    the flow :math:`\dot w = -\eta[\nabla L + \tfrac12\sum_{kl}\Sigma_{kl}G_{kl}]` moves the restricted Hessian
    :math:`M = U^\top HU` at :math:`\dot M_{ij} = \langle G_{ij}, \dot w\rangle`. :math:`\Sigma` solves the
    semidefinite complementarity problem

    .. math:: \Sigma \succeq 0,\quad Z = \mathcal Q\Sigma - B \succeq 0,\quad \langle\Sigma, Z\rangle = 0,

    :math:`(\mathcal Q\Sigma)_{ij} = \sum_{kl}\langle G_{ij}, G_{kl}\rangle\Sigma_{kl}`,
    :math:`B = 2\langle-\nabla L, G\rangle + (2\omega/\eta)(M - \tfrac2\eta I)`: :math:`Z \succeq 0` is
    :math:`\dot M \preceq -\omega(M - \tfrac2\eta I)` (no direction of the subspace rises above the edge, each is
    pulled back at rate :math:`\omega` if it is off), and complementarity lets :math:`\Sigma` act only along
    directions held at it. These are the optimality conditions of the convex problem
    :math:`\min_{\Sigma\succeq0}\tfrac12\langle\Sigma,\mathcal Q\Sigma\rangle - \langle B,\Sigma\rangle`, solved by
    ``n_iter`` accelerated projected-gradient steps (step :math:`1/\lambda_{\max}(\mathcal Q)`) from ``start``. For
    k = 1 the solution is :func:`central_flow_sigma2`. ``Q``: (k, k, k, k), ``B`` and ``start``: (k, k);
    ``n_iter`` >= 1.
    """
    B = V.traceable("B", B, ndim=2)
    k = B.shape[0]
    if B.shape != (k, k):
        raise ValueError(f"B: expected a square (k, k) matrix, got shape {B.shape}")
    Q = V.traceable("Q", Q, shape=(k, k, k, k))
    start = V.traceable("start", start, shape=(k, k))
    n_iter = V.integer("n_iter", n_iter, low=1)
    return _sigma_matrix(Q, B, start, n_iter)


def _track_run(point, X, Y, *, widths, n_windows: int, window: int, substeps: int, relax: float):
    r"""One trajectory of :func:`mlp_track`: ``n_windows`` windows of ``window`` time units, ``substeps`` per unit.

    ``code`` 0: GD with step ``eta`` every ``period`` substeps (``period = substeps``: one step per unit; half of
    it: two steps of half the size); 1: projected gradient flow at ``threshold`` (explicit Euler, :math:`dt` =
    1/``substeps``); 2: gradient flow; 3: the central flow on the top ``TRACK_TOP`` eigenvectors (matrix
    :math:`\Sigma` of :func:`central_flow_sigma_matrix`, level ``threshold``). Window records: mean of
    :math:`\theta` over the window's substeps (for GD: over its iterates, each held for ``period`` substeps), mean
    loss, mean :math:`\sigma^2` (:math:`\mathrm{tr}\,\Sigma` for code 3), the top Hessian eigenvalue at the
    window's end and the second's largest value over the window, and for the two edge flows the Euler remainder of
    their sharpness: per substep :math:`e_n = S_{n+1} - S_n - \langle\nabla S_n, w_{n+1} - w_n\rangle` (the local
    error of the step in :math:`S`), its largest modulus over the window's steps and whether every one of them had
    :math:`\sigma^2 > 0` (:math:`\mathrm{tr}\,\Sigma > 0`).
    """
    eta, threshold, code, period = point["eta"], point["threshold"], point["code"], point["period"]
    theta0 = mlp_init(point["key"], widths)
    loss = lambda th: _mlp_loss(th, X, Y, widths)  # noqa: E731
    grad = jax.grad(loss)
    hess = jax.hessian(loss)
    flow = code >= 1
    constrained = (code == 1).astype(eta.dtype)
    central = (code == 3).astype(eta.dtype)
    k = TRACK_TOP

    def restricted(p, U):
        """:math:`U^\top H(p) U` with the basis U held fixed (its gradient in p gives the G_ij)."""
        HU = jax.vmap(lambda u: jax.jvp(grad, (p,), (u,))[1])(U.T)
        return HU @ U

    def substep(carry, i):
        th, div, div_step, pred, was_active, Sig, U_prev = carry
        w, vecs = jnp.linalg.eigh(hess(th))
        u = vecs[:, -1]
        g = grad(th)
        gS = jax.grad(lambda p: jnp.vdot(u, jax.jvp(grad, (p,), (u,))[1]))(th)
        s2 = constrained * _constrained_sigma2(g, gS, w[-1], eta, threshold, relax)
        # the matrix sigma^2 on the top-k eigenspace; warm start: the previous substep's Sigma in this basis
        U = vecs[:, -k:]
        G = jax.jacrev(restricted)(th, U)  # (k, k, P)
        R = U.T @ U_prev
        B = 2.0 * jnp.einsum("ijp,p->ij", G, -g) + (2.0 * relax / eta) * (jnp.diag(w[-k:]) - threshold * jnp.eye(k))
        Sig = central * _sigma_matrix(jnp.einsum("ijp,klp->ijkl", G, G), B, R @ Sig @ R.T)
        drift = g + 0.5 * s2 * gS + 0.5 * jnp.einsum("ij,ijp->p", Sig, G)
        flow_new = th - (eta / substeps) * drift
        step_now = (i % period) == period - 1
        new = jnp.where(flow, flow_new, jnp.where(step_now, th - eta * g, th))
        bad = ~div & _bad(new)
        div_step = jnp.where(bad, i // substeps + 1, div_step)
        div = div | bad
        remainder = jnp.where(was_active, jnp.abs(w[-1] - pred), 0.0)  # the previous step's Euler remainder in S
        active = (s2 > 0) | (jnp.trace(Sig) > 0)
        carry = (jnp.where(div, th, new), div, div_step, w[-1] + jnp.vdot(gS, new - th), active, Sig, U)
        return carry, (th, loss(th), s2 + jnp.trace(Sig), w[-1], w[-2], remainder, was_active)

    def block(carry, n):
        # the run's substep indices (not the window's): diverged_step counts steps from the start, and the GD step
        # phase is unchanged because period divides window * substeps (k is taken: the edge subspace's size)
        carry, (ths, L, s2, S, S2, rem, active) = lax.scan(substep, carry, n * window * substeps
                                                           + jnp.arange(window * substeps))
        # the second eigenvalue's largest value over the window: whether a second direction reaches the edge
        return carry, (jnp.mean(ths, axis=0), jnp.mean(L), jnp.mean(s2), S[-1], jnp.max(S2), jnp.max(rem),
                       jnp.all(active))

    P = theta0.shape[0]
    init = (theta0, jnp.array(False), jnp.array(-1), jnp.zeros(()), jnp.array(False), jnp.zeros((k, k)),
            jnp.eye(P)[:, -k:])
    (_, div, div_step, *_), (mean, L, s2, S, S2, rem, active) = lax.scan(block, init, jnp.arange(n_windows))
    dead = div & (jnp.arange(n_windows) >= (div_step - 1) // window)
    nan = lambda a: jnp.where(dead.reshape((-1,) + (1,) * (a.ndim - 1)), jnp.nan, a)  # noqa: E731
    return {"mean_theta": nan(mean), "mean_loss": nan(L), "mean_sigma2": nan(s2), "sharpness": nan(S),
            "second": nan(S2), "euler_remainder": nan(rem), "active": active & ~dead, "theta0": theta0,
            "diverged": div, "diverged_step": div_step}


def mlp_track(keys, eta, X, Y, *, widths, threshold=None, n_steps: int, window: int, substeps: int = 4,
              relax: float = 1.0, max_bytes=None, dtype=None) -> dict[str, np.ndarray]:
    r"""GD on :func:`mlp_loss` against its constrained trajectory, its central flow, gradient flow and GD at half the step.

    Per key, five trajectories from :math:`\theta_0` = :func:`mlp_init` (the key), time counted in GD steps at
    ``eta`` (``TRACK_RUNS`` order): ``gd`` -- GD at :math:`\eta`; ``constrained`` -- projected gradient flow onto
    :math:`\{S \le S_c\}`, :math:`\dot\theta = -\eta[\nabla L + \tfrac12\sigma^2\nabla S]` with :math:`\sigma^2` of
    :func:`_constrained_sigma2` (:math:`S_c` = ``threshold``, default :math:`2/\eta`; for :math:`S_c = 2/\eta` this
    is the one-direction central flow); ``gradient`` -- gradient flow; ``gd_half`` -- GD at :math:`\eta/2`, two steps
    per unit; ``central`` -- the central flow on the top ``TRACK_TOP`` Hessian eigenvectors,
    :math:`\dot\theta = -\eta[\nabla L + \tfrac12\sum_{ij}\Sigma_{ij}\nabla(u_i^\top Hu_j)]` with the matrix
    :math:`\Sigma` of :func:`central_flow_sigma_matrix` at the level :math:`S_c` (several directions may sit at the
    edge at once). The flows are integrated by explicit Euler with ``substeps`` steps per unit (``substeps`` even).
    The Hessian is formed exactly (:func:`jax.hessian`) and diagonalized at every substep: meant for networks of a
    few dozen parameters.

    Returns, per key (axis 0), trajectory (axis 1) and window of ``window`` units (axis 2, ``n_steps // window``
    windows): ``mean_theta`` (the window mean of :math:`\theta`), ``mean_loss``, ``mean_sigma2`` (the central flow's:
    :math:`\mathrm{tr}\,\Sigma`), ``sharpness`` (the top Hessian eigenvalue at the window's end), ``second`` (the
    second's largest value over the window), ``euler_remainder`` and ``active`` (an edge flow's largest one-substep
    Euler remainder in :math:`S` over the window, and whether its projection was active at every substep of it; 0
    and False for GD and gradient flow); per
    key and trajectory ``theta0``, ``diverged`` and ``diverged_step`` (as in the module docstring; NaN records from
    the diverging window on).

    ``dtype``: ``None``/``"float64"`` only (:func:`theory.validate.float_dtype`); ``"float32"`` is refused: what the
    run is for -- the edge flows holding :math:`S` at :math:`S_c` (the claims resolve it to :math:`10^{-6}` of
    :math:`2/\eta`) and their Euler remainder :math:`S_{n+1} - S_n - \langle\nabla S_n, w_{n+1} - w_n\rangle`, a
    difference of nearly equal sharpnesses -- is below the accuracy of a float32 eigendecomposition of the
    :math:`P \times P` Hessian (:math:`\sim P\,2^{-24}` relative, :math:`10^{-6}` at :math:`P = 20`).
    """
    V.float_dtype("dtype", dtype, allowed=("float64",), why=TRACK_FLOAT32)
    V.key("keys", keys)
    ks = jnp.atleast_1d(jnp.asarray(keys))
    if ks.ndim != 1:
        raise ValueError(f"keys: expected a 1-D array of typed keys, got shape {ks.shape}")
    Xa, Ya, ws = _mlp_args(X, Y, widths)
    eta = V.real("eta", eta, low=0.0, low_open=True)
    threshold = 2.0 / eta if threshold is None else V.real("threshold", threshold, low=0.0, low_open=True)
    n_steps = V.integer("n_steps", n_steps, low=1)
    window = V.integer("window", window, low=1, high=n_steps)
    if n_steps % window:
        raise ValueError(f"window: must divide n_steps = {n_steps}, got {window}")
    substeps = V.integer("substeps", substeps, low=2)
    if substeps % 2:
        raise ValueError(f"substeps: must be even (GD at eta/2 steps every substeps/2), got {substeps}")
    relax = V.real("relax", relax, low=0.0, low_open=True)
    P = sum(a * b for a, b in zip(ws[:-1], ws[1:]))
    n_runs = 5 * ks.shape[0]
    # per run: the Hessian and its eigenvectors (P x P, twice), the window's substep records, the outputs
    V.check_bytes({"widths": ws, "window": window, "substeps": substeps, "n_steps": n_steps, "keys": ks.shape[0]},
                  8 * n_runs * (3 * P * P + window * substeps * (P + 6) + (n_steps // window) * (P + 7)),
                  what="the Hessians, the window's records and the outputs of five trajectories per key",
                  max_bytes=max_bytes)
    n_keys = ks.shape[0]
    grid = {"key": jnp.repeat(ks, 5), "eta": np.tile([eta, eta, eta, eta / 2, eta], n_keys),
            "threshold": np.full(n_runs, threshold), "code": np.tile([0, 1, 2, 0, 3], n_keys),
            "period": np.tile([substeps, substeps, substeps, substeps // 2, substeps], n_keys)}
    out = run_grid(_track_run, grid, jnp.asarray(Xa), jnp.asarray(Ya),
                   static={"widths": ws, "n_windows": n_steps // window, "window": window, "substeps": substeps,
                           "relax": relax}, chunk_size=TRACK_CHUNK, pad_to_chunk=True, desc="mlp track")
    return {k: v.reshape((n_keys, 5) + v.shape[1:]) for k, v in out.items()}
