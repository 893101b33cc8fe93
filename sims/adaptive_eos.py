r"""Adam and RMSProp with :math:`\epsilon = 0` on quadratics, measuring the preconditioned sharpness.

Adam's rule with bias correction and :math:`\epsilon = 0`:

.. math:: m \leftarrow \beta_1 m + (1-\beta_1)g,\quad v \leftarrow \beta_2 v + (1-\beta_2)g^2,\quad
          x \leftarrow x - \eta\,\hat m/\sqrt{\hat v},\qquad \hat m = \frac{m}{1-\beta_1^t},\ \hat v = \frac{v}{1-\beta_2^t},

RMSProp being :math:`\beta_1 = 0`. The preconditioner is :math:`P = \sqrt{\hat v}` (diagonal), and the measured
quantity is the *preconditioned sharpness* :math:`\eta\lambda_{\max}(P^{-1}H)`, the top eigenvalue of the symmetric
:math:`P^{-1/2}HP^{-1/2}` (a dense symmetric eigenvalue problem per step). With ``precond`` given, :math:`P` is frozen at that vector (the preconditioner of the stability analysis)
and only the EMA of :math:`g` runs. The gradient is :func:`jax.grad` of the loss, never the closed form.

**Underflow is data.** With :math:`\epsilon = 0` and a long :math:`\beta_2` memory, :math:`x` can contract to a
subnormal number before :math:`\hat v` forgets the early gradients; then :math:`\eta\hat m/\sqrt{\hat v}` loses its
digits and the run freezes, a float64 artefact, not dynamics. A step whose gradient has an entry below the
smallest normal float64 (:data:`TINY`, zero included) flags ``underflowed`` with the first such step in
``underflow_step`` (-1 if never); a zero :math:`\hat v` entry gives a zero direction instead of 0/0. Likewise a
run whose iterate leaves :math:`|x| \le 10^{150}` (:func:`sims.sweep.diverged`) is flagged ``diverged`` with its
step. Tail statistics of a flagged run are NaN from the flagged block on.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

import sims  # noqa: F401  (float64)
from sims import hvp as _hvp
from sims.optimizers import adam_direction
from sims.sweep import diverged, run_grid
from theory import validate as V

__all__ = ["MAX_DIM", "MAX_STEPS", "TINY", "adam_mlp", "adam_quadratic"]

#: the smallest normal float64: a gradient entry below it has lost digits (or is 0)
TINY = float(np.finfo(np.float64).tiny)
#: the longest run the simulators accept
MAX_STEPS = 2_000_000
#: the largest quadratic dimension (a dense eigen-decomposition per tail step)
MAX_DIM = 64


def _direction(m_hat, v_hat, precond):
    """Adam's eps = 0 direction (:func:`sims.optimizers.adam_direction`), or the momentum over a frozen ``precond``."""
    return adam_direction(m_hat, v_hat) if precond is None else m_hat / precond


def _sharpness(H, pdiag, eta):
    r""":math:`\eta\lambda_{\max}(P^{-1/2}HP^{-1/2})` (infinite where a preconditioner entry is 0)."""
    r = jnp.where(pdiag > 0, 1.0 / jnp.sqrt(jnp.where(pdiag > 0, pdiag, 1.0)), jnp.inf)
    return eta * _hvp.largest_eigenvalue(r[:, None] * H * r[None, :])


def _quad_loss(x, H):
    return 0.5 * x @ H @ x


def _quad_run(point, *, n_burn: int, n_blocks: int, block: int, frozen: bool):
    """One Adam run on 1/2 x^T H x: a burn-in of n_burn steps, then n_blocks tail blocks of `block` steps."""
    H, x0, eta, b1, b2 = point["H"], point["x0"], point["eta"], point["b1"], point["b2"]
    precond = point["p"] if frozen else None
    grad = jax.grad(_quad_loss)

    def step(state):
        x, m, v, t, bad_u, bad_d = state
        g = grad(x, H)
        t = t + 1
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        tf = t.astype(x.dtype)
        m_hat, v_hat = m / (1 - b1**tf), v / (1 - b2**tf)
        x_new = x - eta * _direction(m_hat, v_hat, precond)
        bad_u = jnp.where((bad_u < 0) & jnp.any(jnp.abs(g) < TINY), t, bad_u)
        bad_d = jnp.where((bad_d < 0) & jnp.any(diverged(x_new)), t, bad_d)
        x_new = jnp.where(bad_d >= 0, x, x_new)  # a diverged run is frozen at its last finite iterate
        return (x_new, m, v, t, bad_u, bad_d), v_hat

    def burn_body(state, _):
        return step(state)[0], None

    d = x0.shape[0]
    zero = jnp.zeros(d, x0.dtype)
    init = (x0, zero, zero, jnp.asarray(0, jnp.int64), jnp.asarray(-1, jnp.int64), jnp.asarray(-1, jnp.int64))
    state, _ = lax.scan(burn_body, init, None, length=n_burn)

    def tail_body(carry, _):
        state, x_prev2, x_prev = carry
        x_before = state[0]
        new, v_hat = step(state)
        # the preconditioned sharpness at the point where the gradient was taken, with the P that step used
        sharp = frozen_sharp if frozen else _sharpness(H, jnp.sqrt(v_hat), eta)
        loss = _quad_loss(x_before, H)
        period2 = jnp.max(jnp.abs(x_before - x_prev2)) / jnp.maximum(jnp.max(jnp.abs(x_before)), TINY)
        return (new, x_prev, x_before), (sharp, loss, period2)

    def block_body(carry, _):
        carry, (sharp, loss, period2) = lax.scan(tail_body, carry, None, length=block)
        flagged = (carry[0][4] >= 0) | (carry[0][5] >= 0)
        nan = jnp.asarray(jnp.nan, x0.dtype)
        stats = (jnp.where(flagged, nan, jnp.mean(sharp)), jnp.where(flagged, nan, jnp.max(sharp)),
                 jnp.where(flagged, nan, jnp.mean(loss)), jnp.where(flagged, nan, jnp.max(period2)),
                 jnp.where(flagged, nan, jnp.mean(sharp * sharp)))
        return carry, stats

    x_tail = state[0]
    frozen_sharp = _sharpness(H, precond, eta) if frozen else None  # a constant: computed once
    carry = (state, state[0], state[0])
    (state, _, _), (sharp_mean, sharp_max, loss_mean, period2, sharp_sq) = lax.scan(
        block_body, carry, None, length=n_blocks)
    x, _, _, _, bad_u, bad_d = state
    log_growth = jnp.log(jnp.linalg.norm(x)) - jnp.log(jnp.linalg.norm(x0))
    log_growth_tail = jnp.log(jnp.linalg.norm(x)) - jnp.log(jnp.linalg.norm(x_tail))
    return {"x": x, "sharp_mean": sharp_mean, "sharp_max": sharp_max,
            "sharp_sq": sharp_sq, "loss_mean": loss_mean, "period2": period2, "log_growth": log_growth,
            "log_growth_tail": log_growth_tail,
            "underflow_step": bad_u, "diverged_step": bad_d}


def _per_run(name: str, x, n: int, *, low=None, low_open=False, high=None, high_open=False) -> np.ndarray:
    a = np.atleast_1d(V.array(name, x, ndim=(0, 1), low=low, low_open=low_open, high=high, high_open=high_open))
    if a.shape[0] not in (1, n):
        raise ValueError(f"{name}: expected one value or one per run ({n}), got {a.shape[0]}")
    return np.broadcast_to(a, (n,)).astype(float)


def _quadratic_inputs(H, x0, eta, beta1, beta2, n_steps, n_blocks, block, precond):
    """:func:`adam_quadratic`'s arguments checked and broadcast to its runs (also its NumPy reference's):
    ``(H, x0 (m, d), eta, b1, b2 (m,), n_steps, n_blocks, block, p)``, ``p`` the frozen preconditioner (m, d) or
    None; a ``ValueError`` names the argument otherwise."""
    H = V.array("H", H, ndim=(2, 3))
    x0 = np.atleast_2d(V.array("x0", x0, ndim=(1, 2)))
    # one run per row of x0, or per entry of the per-run hyperparameters when x0 is a single start
    lengths = {np.size(a) for a in (eta, beta1, beta2) if np.ndim(a) == 1} - {1}
    m, d = (max(lengths) if x0.shape[0] == 1 and lengths else x0.shape[0]), x0.shape[1]
    x0 = np.broadcast_to(x0, (m, d)) if x0.shape[0] == 1 else x0
    V.integer("x0.shape[1]", d, low=1, high=MAX_DIM)
    if H.shape[-2:] != (d, d) or (H.ndim == 3 and H.shape[0] != m):
        raise ValueError(f"H: expected ({d}, {d}) or ({m}, {d}, {d}) for x0 of shape {x0.shape}, got {H.shape}")
    for Hi in (H if H.ndim == 3 else H[None]):
        V.symmetric_psd("H", Hi, "H")
    if np.any(np.all(x0 == 0, axis=1)):
        raise ValueError("x0: expected nonzero starts (the growth is measured relative to |x0|), got a zero row")
    eta = _per_run("eta", eta, m, low=0.0, low_open=True)
    b1 = _per_run("beta1", beta1, m, low=0.0, high=1.0, high_open=True)
    b2 = _per_run("beta2", beta2, m, low=0.0, low_open=True, high=1.0, high_open=True)
    n_steps = V.integer("n_steps", n_steps, low=1, high=MAX_STEPS)
    n_blocks = V.integer("n_blocks", n_blocks, low=1)
    block = V.integer("block", block, low=1)
    if n_blocks * block > n_steps:
        raise ValueError(f"n_blocks: the tail n_blocks * block = {n_blocks * block} exceeds n_steps = {n_steps}")
    p = None
    if precond is not None:
        p = np.atleast_2d(V.array("precond", precond, ndim=(1, 2), low=0.0, low_open=True))
        if p.shape[1] != d or p.shape[0] not in (1, m):
            raise ValueError(f"precond: expected ({d},) or ({m}, {d}), got {p.shape}")
        p = np.broadcast_to(p, (m, d))
    return H, x0, eta, b1, b2, n_steps, n_blocks, block, p


def adam_quadratic(H, x0, eta, beta1, beta2, *, n_steps: int, n_blocks: int = 10, block: int = 100,
                   precond=None) -> dict[str, np.ndarray]:
    r"""Adam (:math:`\epsilon = 0`, bias-corrected) on :math:`\tfrac12 x^\top Hx`, one run per row of ``x0``.

    Args:
      H: a symmetric PSD (d, d) matrix shared by every run, or (m, d, d), one per run; d <= :data:`MAX_DIM`.
      x0: starts, (m, d), nonzero; a single start (d,) or (1, d) is shared by every run of the other arguments.
      eta, beta1, beta2: one value or one per run; :math:`\eta > 0`, :math:`\beta_1 \in [0, 1)`, :math:`\beta_2 \in (0, 1)`.
      n_steps: total steps; the last ``n_blocks * block`` of them are the tail where statistics are taken.
      n_blocks, block: tail blocks and their length (statistics are per block).
      precond: ``None`` (adaptive :math:`P = \sqrt{\hat v}`) or a frozen positive diagonal, (d,) or (m, d).

    Returns:
      ``x`` (m, d) final iterates; per tail block (m, n_blocks):
      ``sharp_mean``, ``sharp_max`` and ``sharp_sq`` (mean, max and mean square of
      :math:`\eta\lambda_{\max}(P^{-1}H)`, with :math:`P` the preconditioner of each step), ``loss_mean``, ``period2``
      (:math:`\max_t\|x_t - x_{t-2}\|_\infty/\|x_t\|_\infty`, 0 on an exact 2-cycle); ``log_growth`` (m,)
      :math:`\log\|x_T\|/\|x_0\|` and ``log_growth_tail`` (m,) the same over the tail only; ``underflowed``/``underflow_step`` and ``diverged``/``diverged_step`` as in the
      module docstring.
    """
    H, x0, eta, b1, b2, n_steps, n_blocks, block, p = _quadratic_inputs(H, x0, eta, beta1, beta2, n_steps, n_blocks,
                                                                         block, precond)
    (m, d), frozen = x0.shape, precond is not None
    p = np.ones((m, d)) if p is None else p
    Hs = np.broadcast_to(H, (m, d, d))
    grid = {"H": jnp.asarray(Hs), "x0": jnp.asarray(x0), "eta": jnp.asarray(eta), "b1": jnp.asarray(b1),
            "b2": jnp.asarray(b2), "p": jnp.asarray(p)}
    out = run_grid(_quad_run, grid, static={"n_burn": n_steps - n_blocks * block, "n_blocks": n_blocks,
                                            "block": block, "frozen": frozen}, desc="adam quadratic")
    out["underflowed"] = out["underflow_step"] >= 0
    out["diverged"] = out["diverged_step"] >= 0
    return out


# ----------------------------------------------------------------------------------------------
# a tiny MLP
# ----------------------------------------------------------------------------------------------

def _mlp_loss(theta, X, Y, hidden: int):
    r""":math:`\frac1{2n}\sum_i (w_2^\top\tanh(W_1^\top x_i) - y_i)^2` with ``theta`` = (W_1 flattened, w_2)."""
    d = X.shape[1]
    W1 = theta[: d * hidden].reshape(d, hidden)
    return 0.5 * jnp.mean((jnp.tanh(X @ W1) @ theta[d * hidden:] - Y) ** 2)


def _mlp_run(point, X, Y, *, hidden: int, n_burn: int, n_meas: int, every: int, lanczos_iter: int):
    """One Adam run on the MLP: n_burn steps, then n_meas measurements every `every` steps."""
    theta0, eta, b1, b2, key = point["theta0"], point["eta"], point["b1"], point["b2"], point["key"]
    grad = jax.grad(_mlp_loss)

    def step(state, _):
        th, m, v, t = state
        g = grad(th, X, Y, hidden)
        t = t + 1
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        tf = t.astype(th.dtype)
        th = th - eta * _direction(m / (1 - b1**tf), v / (1 - b2**tf), None)
        return (th, m, v, t), None

    zero = jnp.zeros_like(theta0)
    start = (theta0, zero, zero, jnp.asarray(0, jnp.int64))
    first = step(start, None)[0][0] - theta0  # the first update, recorded beside the run (which starts anew below)
    state, _ = lax.scan(step, start, None, length=n_burn)

    def meas(state, k):
        state, _ = lax.scan(step, state, None, length=every)
        th, _, v, t = state
        # the P of the next step: sqrt(v_hat) at the current iterate (eps = 0; a zero entry is clamped to TINY)
        r = 1.0 / jnp.sqrt(jnp.maximum(jnp.sqrt(v / (1 - b2 ** t.astype(th.dtype))), TINY))

        def matvec(u):
            return r * _hvp.hvp(lambda w: _mlp_loss(w, X, Y, hidden), th, r * u)

        ritz = _hvp.lanczos(jax.random.fold_in(key, k), matvec, th.shape[0], lanczos_iter, dtype=th.dtype)
        return state, (eta * ritz[-1], _mlp_loss(th, X, Y, hidden))

    state, (sharp, loss) = lax.scan(meas, state, jnp.arange(n_meas))
    th, _, v, t = state
    return {"sharp": sharp, "loss": loss, "theta": th, "v_hat": v / (1 - b2 ** t.astype(th.dtype)),
            "first_step": first, "g0": grad(theta0, X, Y, hidden)}


def adam_mlp(keys, eta, beta1, beta2, X, Y, *, hidden: int, n_burn: int, n_meas: int, every: int,
             lanczos_iter: int = 10) -> dict[str, np.ndarray]:
    r"""Full-batch Adam (:math:`\epsilon = 0`, bias-corrected) on a one-hidden-layer tanh MLP, one run per key.

    :math:`f(x) = w_2^\top\tanh(W_1^\top x)`, loss :math:`\frac1{2n}\sum_i(f(x_i) - y_i)^2`, init Gaussian with variance
    1/fan-in drawn from the run's key. After ``n_burn`` steps the run measures ``n_meas`` times, every ``every``
    steps, :math:`\eta\lambda_{\max}(P^{-1/2}HP^{-1/2})` with :math:`P = \sqrt{\hat v}` by ``lanczos_iter`` Lanczos
    steps on Hessian-vector products (:func:`sims.hvp.hvp`), and the loss.

    Args:
      keys: typed PRNG keys (m,), one per run (init and Lanczos starts, split, never reused).
      eta, beta1, beta2: one value or one per run.
      X: (n, d) inputs; Y: (n,) targets.
      hidden: the hidden width; n_burn, n_meas, every, lanczos_iter as above (lanczos_iter <= parameters).

    Returns:
      ``sharp`` (m, n_meas) and ``loss`` (m, n_meas); ``theta`` (m, P) and ``v_hat`` (m, P) at the end;
      ``first_step`` (m, P) the first update :math:`\theta_1 - \theta_0` and ``g0`` (m, P) the gradient at the init. A
      run that diverges records NaN/inf values (data).
    """
    V.key("keys", keys)
    if np.ndim(keys) != 1:
        raise ValueError(f"keys: expected a 1-D array of typed keys (one per run), got shape {np.shape(keys)}")
    m = keys.shape[0]
    X = V.array("X", X, ndim=2)
    Y = V.one_per_row("Y", V.array("Y", Y, ndim=1), "X", X.shape[0])
    hidden = V.integer("hidden", hidden, low=1, high=4096)
    n_par = X.shape[1] * hidden + hidden
    eta = _per_run("eta", eta, m, low=0.0, low_open=True)
    b1 = _per_run("beta1", beta1, m, low=0.0, high=1.0, high_open=True)
    b2 = _per_run("beta2", beta2, m, low=0.0, low_open=True, high=1.0, high_open=True)
    n_burn = V.integer("n_burn", n_burn, low=0, high=MAX_STEPS)
    n_meas = V.integer("n_meas", n_meas, low=1, high=MAX_STEPS)
    every = V.integer("every", every, low=1, high=MAX_STEPS)
    lanczos_iter = V.integer("lanczos_iter", lanczos_iter, low=1, high=n_par)
    d = X.shape[1]

    def init(k):
        k1, k2, k3 = jax.random.split(k, 3)
        theta = jnp.concatenate([jax.random.normal(k1, (d * hidden,)) / np.sqrt(d),
                                 jax.random.normal(k2, (hidden,)) / np.sqrt(hidden)])
        return theta, k3

    theta0, k_lanczos = jax.vmap(init)(keys)
    grid = {"theta0": theta0, "eta": jnp.asarray(eta), "b1": jnp.asarray(b1), "b2": jnp.asarray(b2), "key": k_lanczos}
    return run_grid(_mlp_run, grid, jnp.asarray(X), jnp.asarray(Y),
                    static={"hidden": hidden, "n_burn": n_burn, "n_meas": n_meas, "every": every,
                            "lanczos_iter": lanczos_iter}, desc="adam mlp")
