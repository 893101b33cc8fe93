r"""Muon on matrix parameters: the exact polar factor, the quintic Newton--Schulz iteration, and two simulators.

**The update rules** (small pure functions of a matrix, in :mod:`sims.optimizers`; re-exported here). For a momentum :math:`M = U\Sigma V^\top` (thin SVD),

* :func:`polar`: the exact polar factor :math:`O = UV^\top` (every nonzero singular value mapped to 1), from
  ``jnp.linalg.svd``; 0 for :math:`M = 0`;
* :func:`newton_schulz`: :math:`k` steps of :math:`X \leftarrow aX + (bA + cA^2)X`, :math:`A = XX^\top`, from
  :math:`X_0 = M/\|M\|_F`, with the public reference code's coefficients
  :data:`theory.muon.NS5` :math:`= (3.4445, -4.7750, 2.0315)`. It acts on each singular value separately,
  :math:`\sigma \mapsto p^{\circ k}(\sigma/\|M\|_F)` with :math:`p(s) = as + bs^3 + cs^5`, so its output's singular
  values lie in the polynomial's band (:func:`theory.muon.ns_band`), not at 1.

**One Muon step** with decoupled weight decay :math:`\lambda`, heavy-ball momentum :math:`\beta` and gradient
:math:`G_t`:

.. math:: M_{t+1} = \beta M_t + G_t,\qquad W_{t+1} = (1-\eta\lambda)\,W_t - \eta\,\mathrm{orth}(M_{t+1}).

:func:`train` runs it on :math:`f(W) = \tfrac12\|W - Y\|_F^2` with :math:`G_t = (W_t - Y) + \sigma\xi_t`
(:math:`\xi_t` standard normal, :func:`normal_draws`), one run per grid point of :func:`sims.sweep.run_grid` with
its own :math:`(\eta, \lambda, k, \beta, \sigma, Y, W_0)`; :func:`factorization` runs Muon without momentum or decay
on both factors of :math:`\tfrac12\|W_2W_1 - M_\star\|_F^2` (the setting of Rhee, Simon & Karkada's notebooks), a
grid of step sizes, each from its own start. Float64 throughout (importing :mod:`sims` turns it on).

**Divergence is data**: a run whose iterate leaves :math:`|w| \le 10^{150}` or becomes non-finite
(:func:`sims.sweep.diverged`) is flagged ``diverged`` with the first such step in ``diverged_step`` (-1 if never);
from that step on the run is frozen at :math:`W = 0` (its recorded values are then 0: not a result).
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

import sims  # noqa: F401  (float64)
from sims.optimizers import newton_schulz, orthogonalize, polar  # the rules live with the other optimizers
from sims.sweep import diverged, run_grid
from theory import validate as V

__all__ = ["METHODS", "MAX_STEPS", "normal_draws", "polar", "newton_schulz", "train", "factorization"]

METHODS = ("polar", "ns")
MAX_STEPS = 200_000
_CHUNK = 2**15  # draws come in blocks of this many: one compiled random-number program serves every shape


def normal_draws(key, shape) -> np.ndarray:
    r"""Standard normal entries of ``shape`` from a typed key: the first :math:`\prod` shape entries of the blocks
    ``jax.random.normal(fold_in(key, i), (2**15,))``, i = 0, 1, ... (every shape reuses one compiled draw).

    Args:
      key: a typed PRNG key (``jax.random.key``).
      shape: a tuple of non-negative integers.
    """
    key = V.key("key", key)
    if not isinstance(shape, tuple) or not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool) and d >= 0
                                               for d in shape):
        raise ValueError(f"shape: expected a tuple of non-negative integers, got {shape!r}")
    n = int(np.prod(shape, dtype=np.int64))
    V.check_bytes({"shape": shape}, 8.0 * n, what="the normal draws")
    blocks = [np.asarray(jax.random.normal(jax.random.fold_in(key, i), (_CHUNK,))) for i in range(-(-n // _CHUNK))]
    return np.concatenate(blocks)[:n].reshape(shape) if blocks else np.zeros(shape)


def _train_run(point, xi, *, n_steps, method):
    """One run: the grid point holds its (eta, lam, ns_steps, momentum, noise, target, w0); returns the singular
    values of W after each step. Every run reads the same standard normal draws ``xi`` (n_steps, p, q), scaled by
    its own noise level (drawn outside: the compiled step holds no random-number program)."""
    eta, lam, ns_steps = point["eta"], point["lam"], point["ns_steps"]
    beta, sigma, target = point["momentum"], point["noise"], point["target"]

    def step(carry, inputs):
        t, xi_t = inputs
        w, m, first = carry
        g = w - target + sigma * xi_t
        m = beta * m + g
        w = (1.0 - eta * lam) * w - eta * orthogonalize(m, method, ns_steps)
        first = jnp.where((first < 0) & diverged(w[None])[0], t + 1, first)
        # a diverged run is frozen at 0: an SVD of entries near the float64 limit overflows, and LAPACK's iteration
        # on NaN may not end
        w = jnp.where(first >= 0, 0.0, w)
        m = jnp.where(first >= 0, 0.0, m)
        return (w, m, first), jnp.linalg.svd(w, compute_uv=False)

    w0 = point["w0"]
    start = (w0, jnp.zeros_like(w0), jnp.asarray(-1, jnp.int64))
    (w, _, first), sv = lax.scan(step, start, (jnp.arange(n_steps), xi))
    return {"sv": sv, "w": w, "diverged_step": first}


def _per_run(name: str, x, m: int, tail: tuple) -> np.ndarray:
    """``x`` (shape ``tail``, shared) or ``(m,) + tail`` (one per run), as an ``(m,) + tail`` array."""
    a = np.asarray(x)
    if a.shape == tail:
        return np.broadcast_to(a, (m,) + tail)
    if a.shape == (m,) + tail:
        return a
    raise ValueError(f"{name}: expected shape {tail} (shared) or {(m,) + tail} (one per run), got {a.shape}")


def train(eta, lam, target, w0, *, method: str = "polar", ns_steps=5, momentum=0.0, noise=0.0,
          key=None, n_steps: int = 1000) -> dict[str, np.ndarray]:
    r"""Muon with decoupled weight decay on :math:`\tfrac12\|W - Y\|_F^2`, one run per grid point.

    Every per-run quantity is a scalar (or a matrix) shared by all runs or an array with one entry per run; the runs
    are ``m`` = the longest of them. One call therefore runs a whole topic's sweeps of one method and shape in one
    compiled program.

    Args:
      eta: step sizes, a positive number or an (m,) array.
      lam: decoupled decays :math:`\lambda \ge 0`, a number or an (m,) array.
      target: :math:`Y`, a real matrix ``(p, q)`` or ``(m, p, q)``.
      w0: the start :math:`W_0`, of the shape of ``target`` (or ``(m, p, q)``).
      method: ``"polar"`` (exact :math:`UV^\top`) or ``"ns"`` (:func:`newton_schulz`).
      ns_steps: Newton--Schulz steps :math:`k`, an integer >= 0 or an (m,) array (read only by ``"ns"``).
      momentum: :math:`\beta \in [0, 1)`, a number or an (m,) array.
      noise: :math:`\sigma \ge 0`, the gradient noise's standard deviation per entry, a number or an (m,) array.
      key: a typed PRNG key (``jax.random.key``), required when any ``noise > 0``; every run reads the same normal
        draws, :func:`normal_draws` ``(key, (n_steps, p, q))``, times its own :math:`\sigma`.
      n_steps: steps per run, in ``1..MAX_STEPS``.

    Returns:
      ``sv`` (m, n_steps, min(p, q)): the singular values of :math:`W_t` after each step, descending; ``w``
      (m, p, q): the final iterates; ``diverged`` (m,) and ``diverged_step`` (m,), as in the module docstring.
    """
    V.choice("method", method, METHODS)
    etas = np.atleast_1d(V.array("eta", eta, ndim=(0, 1), low=0.0, low_open=True))
    lams = np.atleast_1d(V.array("lam", lam, ndim=(0, 1), low=0.0))
    ks = np.atleast_1d(V.integers("ns_steps", ns_steps, ndim=(0, 1), low=0, high=10_000))
    betas = np.atleast_1d(V.array("momentum", momentum, ndim=(0, 1), low=0.0))
    if np.any(betas >= 1.0):
        raise ValueError(f"momentum: expected values in [0, 1), got max {betas.max()!r}")
    sigmas = np.atleast_1d(V.array("noise", noise, ndim=(0, 1), low=0.0))
    y = V.array("target", target, ndim=(2, 3))
    start = V.array("w0", w0, ndim=(2, 3))
    if start.shape[-2:] != y.shape[-2:]:
        raise ValueError(f"w0: expected matrices of the target's shape {y.shape[-2:]}, got {start.shape}")
    n_steps = V.integer("n_steps", n_steps, low=1, high=MAX_STEPS)
    key = jax.random.key(0) if key is None and not np.any(sigmas > 0) else V.key("key", key)
    vectors = {"eta": etas, "lam": lams, "ns_steps": ks, "momentum": betas, "noise": sigmas}
    m = max([v.size for v in vectors.values()] + [y.shape[0] if y.ndim == 3 else 1,
                                                   start.shape[0] if start.ndim == 3 else 1])
    for name, v in vectors.items():
        if v.size not in (1, m):
            raise ValueError(f"{name}: expected a scalar or one entry per run ({m} runs), got shape {v.shape}")
    shape = y.shape[-2:]
    V.check_bytes({"n_steps": n_steps, "eta": m}, 8.0 * (m * min(shape) + shape[0] * shape[1]) * n_steps,
                  what="the recorded singular values and the noise draws")
    grid = {name: jnp.asarray(np.broadcast_to(v, (m,)), jnp.int64 if name == "ns_steps" else float)
            for name, v in vectors.items()}
    grid["target"] = jnp.asarray(_per_run("target", y, m, shape))
    grid["w0"] = jnp.asarray(_per_run("w0", start, m, shape))
    xi = normal_draws(key, (n_steps,) + shape) if np.any(sigmas > 0) else np.zeros((n_steps,) + shape)
    out = run_grid(_train_run, grid, jnp.asarray(xi), static={"n_steps": n_steps, "method": method}, chunk_size=16,
                   desc="muon train")
    first = out["diverged_step"]
    return {"sv": out["sv"], "w": out["w"], "diverged": first >= 0, "diverged_step": first}


def _factor_run(point, target, *, n_steps, method):
    """One run of Muon (or GD) on both factors from the grid point's start; records diag(W2 W1) (the target is
    diagonal)."""
    eta, w1, w2 = point["eta"], point["w1"], point["w2"]

    def loss(w1, w2):
        r = w2 @ w1 - target
        return 0.5 * jnp.sum(r * r)

    def step(carry, t):
        w1, w2, first = carry
        g1, g2 = jax.grad(loss, argnums=(0, 1))(w1, w2)
        if method == "polar":
            w1, w2 = w1 - eta * polar(g1), w2 - eta * polar(g2)
        else:  # plain gradient descent, the comparison of the paper's figures
            w1, w2 = w1 - eta * g1, w2 - eta * g2
        bad = diverged(w1[None])[0] | diverged(w2[None])[0]
        first = jnp.where((first < 0) & bad, t + 1, first)
        w1, w2 = jnp.where(first >= 0, 0.0, w1), jnp.where(first >= 0, 0.0, w2)  # frozen, as in train
        return (w1, w2, first), jnp.diagonal(w2 @ w1)

    (w1, w2, first), modes = lax.scan(step, (w1, w2, jnp.asarray(-1, jnp.int64)), jnp.arange(n_steps))
    return {"modes": modes, "w1": w1, "w2": w2, "diverged_step": first}


def factorization(eta, target_sv, w1, w2, *, method: str = "polar", n_steps: int = 1000) -> dict[str, np.ndarray]:
    r"""Muon (``"polar"``) or gradient descent (``"gd"``) on :math:`\tfrac12\|W_2W_1 - \mathrm{diag}(s)\|_F^2`, one run per start.

    Args:
      eta: step sizes, a positive number or an (m,) array.
      target_sv: the target's singular values :math:`s` (n,), positive: :math:`M_\star = \mathrm{diag}(s)`.
      w1: :math:`W_1` at the start, ``(h, n)`` (shared) or ``(m, h, n)`` (one per run).
      w2: :math:`W_2` at the start, ``(n, h)`` or ``(m, n, h)``, as ``w1``.
      method: ``"polar"`` (Muon without momentum or decay, exact polar factor) or ``"gd"``.
      n_steps: steps per run, in ``1..MAX_STEPS``.

    Returns:
      ``modes`` (m, n_steps, n): :math:`(W_2W_1)_{ii}` after each step, the product's component along target mode
      :math:`i`; ``w1``, ``w2``: the final factors; ``diverged`` (m,) and ``diverged_step`` (m,).
    """
    V.choice("method", method, ("polar", "gd"))
    etas = np.atleast_1d(V.array("eta", eta, ndim=(0, 1), low=0.0, low_open=True))
    s = V.array("target_sv", target_sv, ndim=1, low=0.0, low_open=True)
    a = V.array("w1", w1, ndim=(2, 3))
    if a.shape[-1] != s.size:
        raise ValueError(f"w1: expected shape (h, {s.size}) or (m, h, {s.size}) (one column per target mode), "
                         f"got {a.shape}")
    b = V.array("w2", w2, ndim=(2, 3))
    if b.shape[-2:] != (s.size, a.shape[-2]):
        raise ValueError(f"w2: expected trailing shape ({s.size}, {a.shape[-2]}) to match w1, got {b.shape}")
    m = max(etas.size, a.shape[0] if a.ndim == 3 else 1, b.shape[0] if b.ndim == 3 else 1)
    for name, x in (("eta", etas), ("w1", a[None] if a.ndim == 2 else a), ("w2", b[None] if b.ndim == 2 else b)):
        if x.shape[0] not in (1, m):
            raise ValueError(f"{name}: expected 1 or {m} runs, got {x.shape[0]}")
    etas = np.broadcast_to(etas, (m,))
    a = np.broadcast_to(a if a.ndim == 3 else a[None], (m,) + a.shape[-2:])
    b = np.broadcast_to(b if b.ndim == 3 else b[None], (m,) + b.shape[-2:])
    n_steps = V.integer("n_steps", n_steps, low=1, high=MAX_STEPS)
    V.check_bytes({"n_steps": n_steps, "eta": m}, 8.0 * m * n_steps * s.size, what="the recorded modes")
    grid = {"eta": jnp.asarray(etas), "w1": jnp.asarray(a), "w2": jnp.asarray(b)}
    out = run_grid(_factor_run, grid, jnp.diag(jnp.asarray(s)), static={"n_steps": n_steps, "method": method},
                   desc="muon factorization")
    first = out["diverged_step"]
    return {"modes": out["modes"], "w1": out["w1"], "w2": out["w2"], "diverged": first >= 0, "diverged_step": first}
