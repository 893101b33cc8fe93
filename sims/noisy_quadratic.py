r"""Simulators of the noisy-quadratic topic that are not quadratics: :math:`|x|` and scale-invariant weights.

The quadratic experiments (schedules, merging, averaging, Lion's box) run on the shared
:mod:`sims.nqm`. Here:

* :func:`abs_sgd` -- SGD on the convex 1-Lipschitz :math:`f(x) = |x|` with noisy subgradients
  :math:`g = \mathrm{sign}(x) + \sigma\xi`, :math:`\xi = \pm1` (so :math:`E g^2 \le 1 + \sigma^2 = G^2`),
  along any schedule; the quantity of the last-iterate bound is :math:`E|x_T|`.
* :func:`sphere_walk` -- scale-invariant weights :math:`w \in \mathbb R^d` whose gradient is orthogonal
  to :math:`w` with norm :math:`\tilde G/\|w\|` and a uniformly random direction (the random-walk
  model of weight-decay equilibria), trained by heavy ball with coupled decay or by sign updates
  with decoupled decay (:mod:`sims.optimizers`).
* :func:`logistic_sphere` -- a real scale-invariant loss, logistic regression on :math:`w/\|w\|`,
  full batch: gradients are orthogonal to :math:`w` (scale invariance) but strongly correlated in time.
* :func:`lion_logistic` -- Lion with decoupled weight decay on logistic regression (full batch): a non-quadratic
  loss for the box-constrained limit of Lion.
* :func:`worst_case_instance` and :func:`subgradient_max_affine` -- a worst-case construction for the last iterate
  of the subgradient method: the convex :math:`G`-Lipschitz function (a maximum of affine pieces) that makes
  :math:`f(x_T) - f^\star` largest for a given schedule, found by SciPy's SLSQP over interpolation conditions, and
  the subgradient method run on it.

Each per-run function is pure, mapped over a grid by :func:`sims.sweep.run_grid`, with ``lax.scan``
over steps. Divergence is data (``diverged``, ``diverged_step``).
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

import sims  # noqa: F401  (float64)
from sims import optimizers as opt
from sims.nqm import BOUND, noise, noise_at
from sims.sweep import padded_length, run_grid
from theory import validate as V

__all__ = ["abs_sgd", "sphere_walk", "logistic_sphere", "lion_logistic", "lion_double_well", "worst_case_instance", "subgradient_max_affine",
           "SPHERE_METHODS"]

SPHERE_METHODS = ("heavy_ball", "sign")
_SPHERE_VALUES = 2**17  # noise values of a chunk computed at once (1 MiB): a core's share of L2


def _keys(key, n: int) -> dict:
    data = np.asarray(jax.random.key_data(key))
    return {"key_data": np.broadcast_to(data, (n,) + data.shape), "key_index": np.arange(n, dtype=np.int64)}


def _key(point, impl):
    return jax.random.fold_in(jax.random.wrap_key_data(point["key_data"], impl=impl), point["key_index"])


# ----------------------------------------------------------------------------- |x| with noisy subgradients
_ABS_CHUNK = 8192
def _abs_run(point: dict, etas: jax.Array, *, T: int, impl: str = "threefry2x32") -> dict:
    r"""SGD on :math:`|x|` for :math:`T - 1` updates with steps ``etas[sched, :T-1]`` (pure).

    :math:`x^+ = x - \eta_t(\mathrm{sign}(x) + \sigma\xi_t)`, :math:`\xi_t = \pm 1`. Returns ``final``
    :math:`|x_T|` (the iterate the bound speaks of), ``diverged`` and ``diverged_step``.
    """
    key, sched = _key(point, impl), point["sched"]

    def step(carry, k):
        x, bad = carry
        # sign k of the run's one draw of T - 1 signs, hashed at its step; the step size read from the shared
        # table (neither the signs nor a per-run copy of the schedule is stored: both were chunk x T arrays)
        z = noise_at(key, k, "rademacher", 0, T - 1)
        x = x - etas[sched, k] * (jnp.sign(x) + point["sigma"] * z)
        bad = jnp.where((bad < 0) & ~(jnp.abs(x) < BOUND), k + 1, bad)
        return (x, bad), None

    (x, bad), _ = lax.scan(step, (point["x0"], jnp.array(-1, jnp.int64)), jnp.arange(T - 1, dtype=jnp.int64))
    return {"final": jnp.abs(x), "diverged": bad >= 0, "diverged_step": bad}


def abs_sgd(key, eta, *, x0: float, sigma: float, n_chains: int, max_bytes=None) -> dict:
    r"""``n_chains`` runs of the per-run kernel per schedule; ``eta`` is ``(S, T)`` (the bound's :math:`\eta_1..\eta_T`).

    Returns ``final`` and ``diverged`` of shape ``(S, n_chains)``; run :math:`j` uses the same noise
    under every schedule (common random numbers). ``max_bytes``: the allocation limit
    (:func:`theory.validate.byte_limit`) for the schedules and the runs' states (each run hashes its sign at each
    step: no run stores its noise).
    """
    V.key("key", key)
    e = V.array("eta", eta, ndim=(1, 2), low=0.0)
    e = e.reshape(-1, e.shape[-1])
    S, T = e.shape
    if T < 2:
        raise ValueError(f"eta: expected at least 2 step sizes per schedule, got {T}")
    if not np.all(e.max(axis=1) > 0):
        raise ValueError(f"eta: every schedule needs a positive step size (an all-zero schedule never moves), "
                         f"got {np.flatnonzero(~(e.max(axis=1) > 0)).size} all-zero schedule(s)")
    x0 = V.real("x0", x0)
    sigma = V.real("sigma", sigma, low=0.0)
    n_chains = V.integer("n_chains", n_chains, low=1)
    n = S * n_chains
    V.check_bytes({"n_chains": n_chains, "eta": f"shape {e.shape}"}, 8 * S * T + 4 * 8 * n,
                  what="the schedules and every run's state", max_bytes=max_bytes)
    grid = {**_keys(key, n), "sched": np.repeat(np.arange(S), n_chains), "x0": np.full(n, x0),
            "sigma": np.full(n, sigma)}
    grid["key_index"] = np.tile(np.arange(n_chains, dtype=np.int64), S)
    # a chunk's state (a few values per run) stays in cache; runs do not depend on the chunk
    out = run_grid(_abs_run, grid, e, static=dict(T=T, impl=str(jax.random.key_impl(key))),
                   chunk_size=padded_length(n, most=_ABS_CHUNK), pad_to_chunk=True)
    return {k: v.reshape(S, n_chains) for k, v in out.items()}


# ----------------------------------------------------------------------------- scale-invariant weights
def _angle(w, w_new):
    """Angle between two vectors, accurate for tiny angles (atan2 of the orthogonal and parallel parts)."""
    nw = jnp.sqrt(jnp.sum(w * w))
    par = jnp.sum(w * w_new) / nw
    orth = jnp.sqrt(jnp.maximum(jnp.sum(w_new * w_new) - par**2, 0.0))
    return jnp.arctan2(orth, par)


def _sphere_run(point: dict, *, T: int, n_rec: int, d: int, method: str, impl: str = "threefry2x32",
                overlap: bool = False, part: int = 1) -> dict:
    r"""The random-walk model of scale-invariant weights, one run (pure).

    Gradient :math:`g = (\tilde G/\|w\|)\,u`, :math:`u` uniform on the unit sphere of :math:`w^\perp`.
    ``heavy_ball``: coupled decay :math:`\lambda` (``wd``) added to the gradient, momentum :math:`\alpha`;
    ``sign``: :math:`w^+ = w - \eta(\mathrm{sign}(g) + \lambda w)` (decoupled). Returns per recording
    block the mean angle per step (``angle``) and :math:`\|w\|` at the block end (``norm``); with the static
    ``overlap``, also :math:`\langle w, w_0\rangle/\|w_0\|^2` at the block end (``overlap``: the start's share).
    ``part`` (a divisor of :math:`T/n_{rec}`): the steps whose noise is computed at once.
    """
    eta, wd, G = point["eta"], point["wd"], point["grad_scale"]
    hyper = opt.Hyper(momentum=point["momentum"], wd=0.0 if method == "heavy_ball" else wd,
                      coupled_wd=wd if method == "heavy_ball" else 0.0)
    block = T // n_rec

    def one(carry, xi):
        w, state, acc = carry
        nw2 = jnp.sum(w * w)
        u = xi - jnp.sum(xi * w) / nw2 * w
        g = G / jnp.sqrt(nw2) * u / jnp.sqrt(jnp.sum(u * u))
        w_new, state = opt.step(method, g, state, w, eta, hyper)
        return (w_new, state, acc + _angle(w, w_new)), None

    # the block's one draw noise(sub, (block, d)) is computed a part of ``part`` steps at a time (its elements
    # hashed alone, :func:`sims.nqm.noise_at`): the same values, in a buffer that stays in cache
    rows = jnp.arange(part * d, dtype=jnp.int64).reshape(part, d)

    def piece(carry, p, sub):
        xi = noise_at(sub, p * (part * d) + rows, "gaussian", 0, block * d)
        return lax.scan(one, carry, xi)[0], None

    def outer(carry, _):
        w, state, key = carry
        key, sub = jax.random.split(key)
        (w, state, acc), _ = lax.scan(lambda c, p: piece(c, p, sub), (w, state, jnp.zeros(())),
                                      jnp.arange(block // part, dtype=jnp.int64))
        rec = (acc / block, jnp.sqrt(jnp.sum(w * w)))
        return (w, state, key), rec + ((jnp.sum(w * w0) / jnp.sum(w0 * w0),) if overlap else ())

    key = _key(point, impl)
    key, sub = jax.random.split(key)
    w0 = noise(sub, (d,))
    w0 = point["w0_norm"] * w0 / jnp.sqrt(jnp.sum(w0 * w0))
    _, recs = lax.scan(outer, (w0, opt.init(method, w0, hyper), key), None, length=n_rec)
    out = {"angle": recs[0], "norm": recs[1], "diverged": ~jnp.all(jnp.isfinite(recs[1]))}
    if overlap:
        out["overlap"] = recs[2]
    return out


def sphere_walk(key, *, eta, wd, momentum=0.0, method: str = "heavy_ball", d: int, grad_scale=1.0, w0_norm=1.0,
                T: int, n_rec: int, n_chains: int = 1, overlap: bool = False, max_bytes=None) -> dict:
    r"""Runs of the per-run kernel for configurations ``eta, wd, momentum, grad_scale, w0_norm`` (scalars or length-:math:`G` sequences).

    Run :math:`j` of every configuration uses ``fold_in(key, j)`` (common random numbers: a configuration's result
    does not depend on the others). Returns ``angle`` and ``norm`` of shape ``(G, n_chains, n_rec)`` and ``diverged``
    ``(G, n_chains)``; with ``overlap=True`` also ``overlap`` ``(G, n_chains, n_rec)``, :math:`\langle w_t, w_0\rangle/\|w_0\|^2`
    at each block's end (the share of the start left in the weights; off by default, when the runs and the other
    outputs are those of a call without it, bit for bit). ``max_bytes``: the allocation limit (:func:`theory.validate.byte_limit`) for the
    noise computed at once (a part of a block, ``(part, d)`` per run, every run in one chunk) and the records.
    """
    V.key("key", key)
    V.choice("method", method, SPHERE_METHODS)
    d = V.integer("d", d, low=2)
    T = V.integer("T", T, low=1)
    n_rec = V.integer("n_rec", n_rec, low=1)
    if T % n_rec:
        raise ValueError(f"n_rec: expected a divisor of T = {T}, got {n_rec}")
    n_chains = V.integer("n_chains", n_chains, low=1)
    if not isinstance(overlap, bool):
        raise TypeError(f"overlap: expected a bool, got {type(overlap).__name__}")
    cols = {"eta": V.array("eta", eta, ndim=(0, 1), low=0.0, low_open=True).reshape(-1),
            "wd": V.array("wd", wd, ndim=(0, 1), low=0.0).reshape(-1),
            "momentum": V.array("momentum", momentum, ndim=(0, 1), low=0.0, high=1.0, high_open=True).reshape(-1),
            "grad_scale": V.array("grad_scale", grad_scale, ndim=(0, 1), low=0.0, low_open=True).reshape(-1),
            "w0_norm": V.array("w0_norm", w0_norm, ndim=(0, 1), low=0.0, low_open=True).reshape(-1)}
    G, longest = max((len(v), k) for k, v in cols.items())
    for name, v in cols.items():
        if len(v) not in (1, G):
            raise ValueError(f"{name}: expected a scalar or {G} values (one per configuration, as {longest}), "
                             f"got {len(v)}")
    n = G * n_chains
    block, chunk = T // n_rec, padded_length(n)
    # the noise of `part` steps at once: the largest divisor of the block that keeps a chunk's part in cache
    part = max(p for p in range(1, block + 1) if block % p == 0 and (p == 1 or p * d * chunk <= _SPHERE_VALUES))
    V.check_bytes({"d": d, "T / n_rec": T // n_rec, "n_chains": n_chains, "configurations": G},
                  8 * chunk * (2 * part * d + 4 * n_rec + 6 * d), what="the runs' noise parts and records",
                  max_bytes=max_bytes)
    grid = {**_keys(key, n), **{k: np.repeat(np.broadcast_to(v, (G,)), n_chains) for k, v in cols.items()}}
    grid["key_index"] = np.tile(np.arange(n_chains, dtype=np.int64), G)  # run j sees the same noise in every configuration
    out = run_grid(_sphere_run, grid, static=dict(T=T, n_rec=n_rec, d=d, method=method,
                                                 impl=str(jax.random.key_impl(key)), overlap=overlap, part=part),
                   chunk_size=chunk, pad_to_chunk=True)
    return {k: v.reshape((G, n_chains) + v.shape[1:]) for k, v in out.items()}


# ----------------------------------------------------------------------------- a real scale-invariant loss
def _logistic_loss(w, X, y, scale):
    """Mean logistic loss of the margins :math:`s\\,y_i x_i\\cdot w/\\|w\\|` (scale invariant in :math:`w`)."""
    m = scale * y * (X @ w) / jnp.sqrt(jnp.sum(w * w))
    return jnp.mean(jnp.logaddexp(0.0, -m))


def _logistic_run(point: dict, X: jax.Array, y: jax.Array, *, T: int, n_rec: int) -> dict:
    r"""Full-batch heavy ball with coupled decay on logistic regression over :math:`w/\|w\|` (pure).

    Returns per recording block: the mean angle per step (``angle``), :math:`\|w\|` at the block end
    (``norm``), the mean of :math:`\tilde G = \|g\|\|w\|` (``grad_scale``), and over all steps the
    largest relative defect of :math:`\|w^+\|^2 = \|w\|^2 + \eta^2\|g\|^2` (``identity_defect``; exact when
    the decay and the momentum are 0).
    """
    eta, wd = point["eta"], point["wd"]
    hyper = opt.Hyper(momentum=point["momentum"], coupled_wd=wd)
    grad = jax.grad(_logistic_loss)
    block = T // n_rec

    def one(carry, _):
        w, state, acc_a, acc_g, ident = carry
        g = grad(w, X, y, point["scale"])
        w_new, state = opt.step("heavy_ball", g, state, w, eta, hyper)
        nw2, ng2 = jnp.sum(w * w), jnp.sum(g * g)
        ident = jnp.maximum(ident, jnp.abs(jnp.sum(w_new * w_new) - nw2 - eta**2 * ng2) / nw2)
        return (w_new, state, acc_a + _angle(w, w_new), acc_g + jnp.sqrt(ng2 * nw2), ident), None

    def outer(carry, _):
        w, state, ident = carry
        z = jnp.zeros(())
        (w, state, a, gs, ident), _ = lax.scan(one, (w, state, z, z, ident), None, length=block)
        return (w, state, ident), (a / block, jnp.sqrt(jnp.sum(w * w)), gs / block)

    w0 = point["w0"]
    z = jnp.zeros(())
    (_, _, ident), (angle, norm, gsc) = lax.scan(outer, (w0, opt.init("heavy_ball", w0, hyper), z), None, length=n_rec)
    return {"angle": angle, "norm": norm, "grad_scale": gsc, "identity_defect": ident,
            "diverged": ~jnp.all(jnp.isfinite(norm))}


def logistic_sphere(X, y, w0, *, eta, wd, momentum=0.0, scale: float = 4.0, T: int, n_rec: int,
                    max_bytes=None) -> dict:
    r"""Runs of the per-run kernel for configurations ``eta, wd, momentum`` (scalars or length-:math:`G` sequences).

    ``X`` (n, d) data, ``y`` (n,) labels :math:`\pm1`, ``w0`` (d,) the common start (nonzero), ``scale`` the logit
    temperature. Returns arrays with leading axis :math:`G`. ``max_bytes``: the allocation limit
    (:func:`theory.validate.byte_limit`) for the ``n_rec`` records per configuration.
    """
    Xa = V.array("X", X, ndim=2)
    ya = V.one_per_row("y", V.array("y", y, ndim=1), "X", Xa.shape[0])
    w0 = V.array("w0", w0, shape=(Xa.shape[1],))
    if not np.any(w0 != 0):  # the loss sees w/|w|: at w = 0 it is undefined, and every iterate would be NaN
        raise ValueError(f"w0: expected a nonzero start (the loss depends on w/|w|), got {w0.tolist()!r:.60}")
    if not np.all(np.abs(ya) == 1):
        raise ValueError("y: expected labels +1 or -1")
    T = V.integer("T", T, low=1)
    n_rec = V.integer("n_rec", n_rec, low=1)
    if T % n_rec:
        raise ValueError(f"n_rec: expected a divisor of T = {T}, got {n_rec}")
    scale = V.real("scale", scale, low=0.0, low_open=True)
    cols = {"eta": V.array("eta", eta, ndim=(0, 1), low=0.0, low_open=True).reshape(-1),
            "wd": V.array("wd", wd, ndim=(0, 1), low=0.0).reshape(-1),
            "momentum": V.array("momentum", momentum, ndim=(0, 1), low=0.0, high=1.0, high_open=True).reshape(-1)}
    G, longest = max((len(v), k) for k, v in cols.items())
    for name, v in cols.items():
        if len(v) not in (1, G):
            raise ValueError(f"{name}: expected a scalar or {G} values (one per configuration, as {longest}), "
                             f"got {len(v)}")
    V.check_bytes({"n_rec": n_rec, "configurations": G}, 2 * 3 * 8 * n_rec * padded_length(G) + 8 * 8 * padded_length(G) * Xa.size,
                  what="the records and each run's copy of the data's products", max_bytes=max_bytes)
    grid = {k: np.broadcast_to(v, (G,)).copy() for k, v in cols.items()}
    grid.update(w0=np.broadcast_to(w0, (G, w0.size)).copy(), scale=np.full(G, scale))
    return run_grid(_logistic_run, grid, Xa, ya, static=dict(T=T, n_rec=n_rec), chunk_size=padded_length(G),
                    pad_to_chunk=True)


# ----------------------------------------------------------------------------- Lion on a non-quadratic loss
def _logreg_loss(x, X, y):
    r"""Mean logistic loss :math:`\frac1n\sum_i\log(1 + e^{-y_i x_i\cdot x})` (convex, not quadratic)."""
    return jnp.mean(jnp.logaddexp(0.0, -y * (X @ x)))


def _lion_path(grad, x0: jax.Array, point: dict, n_rec: int) -> dict:
    r"""Lion (:math:`\beta_1, \beta_2`) with decoupled decay from ``x0`` along ``point["eta"]``, the gradient ``grad(x)``
    (pure; the common body of :func:`_lion_run` and :func:`_lion_dw_run`).

    Returns the iterate at the end of each of ``n_rec`` equal blocks (``path``), ``diverged`` (a non-finite
    iterate or one beyond :data:`sims.nqm.BOUND`) and ``diverged_step`` (the first such step, counted from 1;
    -1 if none; the run is frozen from there).
    """
    hyper = opt.Hyper(momentum=point["b1"], b2=point["b2"], wd=point["wd"])
    etas = point["eta"].reshape(n_rec, -1)

    def one(carry, e):
        x, state, bad, k = carry
        new, new_state = opt.step("lion", grad(x), state, x, e, hyper)
        broken = ~jnp.all(jnp.abs(new) < BOUND)
        bad = jnp.where((bad < 0) & broken, k + 1, bad)
        keep = bad >= 0
        x = jnp.where(keep, x, new)
        state = jax.tree.map(lambda a, b: jnp.where(keep, a, b), state, new_state)
        return (x, state, bad, k + 1), None

    def block(carry, es):
        carry, _ = lax.scan(one, carry, es)
        return carry, carry[0]

    start = (x0, opt.init("lion", x0, hyper), jnp.array(-1, jnp.int64), jnp.array(0, jnp.int64))
    (_, _, bad, _), path = lax.scan(block, start, etas)
    return {"path": path, "diverged": bad >= 0, "diverged_step": bad}


def _lion_run(point: dict, X: jax.Array, y: jax.Array, x0: jax.Array, *, n_rec: int) -> dict:
    """Full-batch Lion on :func:`_logreg_loss` (:func:`_lion_path`)."""
    grad = jax.grad(_logreg_loss)
    return _lion_path(lambda x: grad(x, X, y), x0, point, n_rec)


def lion_logistic(X, y, x0, *, eta, wd, b1=0.9, b2=0.99, n_rec: int, max_bytes=None) -> dict:
    r"""Lion with decoupled decay on full-batch logistic regression, one run per configuration.

    ``X`` (n, d) data, ``y`` (n,) labels :math:`\pm1`, ``x0`` (d,) the start; ``eta`` one schedule :math:`(T,)` or one per
    configuration :math:`(G, T)`; ``wd``, ``b1``, ``b2`` scalars or length-:math:`G` sequences. The update is
    :func:`sims.optimizers.step` with ``method="lion"``: :math:`x \leftarrow x - \eta_t(\mathrm{sign}(\beta_1 m +
    (1-\beta_1)g) + \lambda x)`, then :math:`m \leftarrow \beta_2 m + (1-\beta_2)g`. Returns ``path`` :math:`(G, n_{rec}, d)`
    (the iterate after each block of :math:`T/n_{rec}` steps), ``diverged`` and ``diverged_step`` :math:`(G,)`.
    ``max_bytes``: the allocation limit (:func:`theory.validate.byte_limit`) for the path records.
    """
    Xa = V.array("X", X, ndim=2)
    ya = V.one_per_row("y", V.array("y", y, ndim=1), "X", Xa.shape[0])
    if not np.all(np.abs(ya) == 1):
        raise ValueError("y: expected labels +1 or -1")
    x0 = V.array("x0", x0, shape=(Xa.shape[1],))
    e = V.array("eta", eta, ndim=(1, 2), low=0.0)
    e = e.reshape(-1, e.shape[-1])
    n_rec = V.integer("n_rec", n_rec, low=1)
    if e.shape[1] % n_rec:
        raise ValueError(f"n_rec: expected a divisor of the schedule's length T = {e.shape[1]}, got {n_rec}")
    cols = {"wd": V.array("wd", wd, ndim=(0, 1), low=0.0).reshape(-1),
            "b1": V.array("b1", b1, ndim=(0, 1), low=0.0, high=1.0).reshape(-1),
            "b2": V.array("b2", b2, ndim=(0, 1), low=0.0, high=1.0).reshape(-1)}
    G = max([e.shape[0]] + [len(v) for v in cols.values()])
    for name, n in [("eta", e.shape[0])] + [(k, len(v)) for k, v in cols.items()]:
        if n not in (1, G):
            raise ValueError(f"{name}: expected one value (schedule) or {G} (one per configuration), got {n}")
    V.check_bytes({"n_rec": n_rec, "configurations": G, "d": Xa.shape[1]},
                  2 * 8 * padded_length(G) * (n_rec * Xa.shape[1] + e.shape[1] + 4 * Xa.size),
                  what="the path records, schedules and each run's data products", max_bytes=max_bytes)
    grid = {"eta": np.broadcast_to(e, (G, e.shape[1])).copy(),
            **{k: np.broadcast_to(v, (G,)).copy() for k, v in cols.items()}}
    return run_grid(_lion_run, grid, Xa, ya, x0, static=dict(n_rec=n_rec), chunk_size=padded_length(G), pad_to_chunk=True)


# ----------------------------------------------------------------------------- a worst case for the last iterate
def _instance_parts(z, eta, d: int):
    r"""``(x_1..x_T, g_1..g_T, f_1..f_T)`` from the search vector: the start, the subgradients and the values; the
    iterates follow from the start by the method itself, :math:`x_{t+1} = x_t - \eta_tg_t`."""
    T = eta.shape[0]
    x1, g, f = z[:d], z[d:d + T * d].reshape(T, d), z[d + T * d:]
    steps = jnp.cumsum(eta[:T - 1, None] * g[:T - 1], axis=0)
    return jnp.concatenate([x1[None], x1[None] - steps], axis=0), g, f


def _interpolation(z, eta, D, G, *, d: int):
    r"""Constraint values, all :math:`\ge 0` for a valid instance: :math:`f_i - f_j - \langle g_j, x_i - x_j\rangle` for every
    ordered pair of the points :math:`x_1..x_T` and the minimizer :math:`x^\star = 0` (:math:`g^\star = 0`, :math:`f^\star = 0`),
    :math:`G^2 - \|g_t\|^2` and :math:`D^2 - \|x_1\|^2`. These are the conditions under which
    :math:`\max_j(f_j + \langle g_j, x - x_j\rangle)` is a convex :math:`G`-Lipschitz function with :math:`g_t \in \partial f(x_t)`."""
    xs, g, f = _instance_parts(z, eta, d)
    X = jnp.concatenate([xs, jnp.zeros((1, d))])
    S = jnp.concatenate([g, jnp.zeros((1, d))])
    F = jnp.append(f, 0.0)
    M = F[:, None] - F[None, :] - jnp.einsum("jd,ijd->ij", S, X[:, None, :] - X[None, :, :])
    n = X.shape[0]
    i, j = np.nonzero(~np.eye(n, dtype=bool))
    return jnp.concatenate([M[i, j], G**2 - jnp.sum(g * g, axis=1), (D**2 - jnp.sum(xs[0] ** 2))[None]])


_interpolation_jit = jax.jit(_interpolation, static_argnames=("d",))
_interpolation_jac = jax.jit(jax.jacfwd(_interpolation), static_argnames=("d",))


def worst_case_instance(eta, D: float, G: float, *, starts: int = 4, seed: int = 0) -> dict:
    r"""A convex :math:`G`-Lipschitz instance on which the subgradient method with steps ``eta`` (:math:`\eta_1..\eta_T`)
    from :math:`\|x_1 - x^\star\| \le D` ends with :math:`f(x_T) - f^\star` as large as SciPy's SLSQP finds.

    The unknowns are the start :math:`x_1`, subgradients :math:`g_1..g_T` and values :math:`f_1..f_T` in dimension
    :math:`T + 1` (enough for any instance, the performance-estimation argument); the iterates follow from the method
    (:math:`x_{t+1} = x_t - \eta_tg_t`, :math:`x_T` after :math:`T - 1` updates); the constraints are
    :func:`_interpolation`'s (exact Jacobian by JAX); the objective :math:`f_T`. ``starts`` random starts from
    ``seed``; the best instance whose constraints hold to 1e-10 is kept. A local optimum: a valid instance, so its value
    is a lower bound on the worst case. Returns ``x1``, ``g`` (T, d), ``f`` (T,), ``value`` (:math:`f_T`) and
    ``violation`` (the largest constraint violation, >= 0).
    """
    from scipy import optimize

    e = V.array("eta", eta, ndim=1, low=0.0, low_open=True)
    D = V.real("D", D, low=0.0, low_open=True)
    G = V.real("G", G, low=0.0, low_open=True)
    starts = V.integer("starts", starts, low=1)
    seed = V.integer("seed", seed, low=0)
    T = e.size
    if T < 2:
        raise ValueError(f"eta: a last iterate after at least one update needs T >= 2 step sizes, got {T}")
    d = T + 1
    nv = d + T * d + T
    ej = jnp.asarray(e)
    cons = {"type": "ineq", "fun": lambda z: np.asarray(_interpolation_jit(z, ej, D, G, d=d)),
            "jac": lambda z: np.asarray(_interpolation_jac(z, ej, D, G, d=d))}
    grad = np.zeros(nv)
    grad[-1] = -1.0
    rng = np.random.default_rng(seed)
    best = None
    for _ in range(starts):
        res = optimize.minimize(lambda z: -z[-1], rng.normal(size=nv) * 0.3 * max(D, G * e.max()),
                                jac=lambda z: grad, constraints=[cons], method="SLSQP",
                                options={"maxiter": 1000, "ftol": 1e-14})
        viol = float(max(0.0, -np.min(cons["fun"](res.x))))
        if viol <= 1e-10 and (best is None or -res.fun > best[0]):
            best = (-res.fun, viol, res.x)
    if best is None:
        raise ValueError("starts: no start reached a valid instance (constraints to 1e-10); use more starts")
    xs, g, f = (np.asarray(a) for a in _instance_parts(jnp.asarray(best[2]), ej, d))
    return {"x1": xs[0], "g": g, "f": f, "value": float(best[0]), "violation": best[1]}


def subgradient_max_affine(x1, eta, points, grads, values) -> dict:
    r"""The subgradient method on :math:`F(x) = \max\big(0, \max_j f_j + \langle g_j, x - x_j\rangle\big)` from ``x1``.

    ``points`` :math:`x_j`, ``grads`` :math:`g_j` (m, d) and ``values`` :math:`f_j` (m,) are the affine pieces (with the
    piece 0 for the minimizer at the origin). The oracle returns, at step :math:`t`, the gradient of piece :math:`t`
    when it is active at :math:`x_t` (within ``gap`` = 1e-9 of the maximum: a valid subgradient up to that), else of
    the first active piece (0 for the constant piece): any active piece's gradient is a subgradient, and an adversary
    may pick which. Runs :math:`x_{t+1} = x_t - \eta_t g_t` for the :math:`T - 1` updates with :math:`\eta_1..\eta_{T-1}`.
    Returns ``x_T``, ``value`` :math:`F(x_T) - F(0)` (the minimum is at most :math:`F(0)` and at least 0),
    ``min_gap`` :math:`F(0)` and ``activity`` (the largest shortfall of a returned piece below the maximum).
    """
    x = V.array("x1", x1, ndim=1)
    e = V.array("eta", eta, ndim=1, low=0.0)
    P = V.array("points", points, ndim=2)
    Gm = V.array("grads", grads, shape=P.shape)
    f = V.array("values", values, shape=(P.shape[0],))
    if P.shape[1] != x.size:
        raise ValueError(f"points: expected pieces in dimension {x.size} (as x1), got shape {P.shape}")

    def pieces(y):
        return f + np.einsum("jd,jd->j", Gm, y[None] - P)

    def F(y):
        return max(0.0, float(pieces(y).max()))

    shortfall = 0.0
    for t in range(e.size - 1):
        v = pieces(x)
        top = F(x)
        if t < f.size and v[t] >= top - 1e-9:
            g, shortfall = Gm[t], max(shortfall, top - float(v[t]))
        elif top > 0:
            g = Gm[int(np.argmax(v >= top - 1e-9))]
        else:
            g = np.zeros_like(x)
        x = x - e[t] * g
    base = F(np.zeros_like(x))
    return {"x_T": x, "value": F(x) - base, "min_gap": base, "activity": shortfall}


# ----------------------------------------------------------------------------- Lion on a non-convex loss
def _double_well_loss(x, a, C):
    return 0.25 * jnp.sum((x * x - a) ** 2) + 0.5 * x @ C @ x


def _lion_dw_run(point: dict, a: jax.Array, C: jax.Array, *, n_rec: int) -> dict:
    """Lion on :func:`_double_well_loss` from ``point["x0"]`` (:func:`_lion_path`)."""
    grad = jax.grad(_double_well_loss)
    return _lion_path(lambda x: grad(x, a, C), point["x0"], point, n_rec)


def lion_double_well(a, C, x0, *, eta, wd, b1=0.9, b2=0.99, n_rec: int, max_bytes=None) -> dict:
    r"""Lion with decoupled decay on the non-convex :math:`f(x) = \frac14\sum_k(x_k^2 - a_k)^2 + \frac12x^\top Cx`, one run per start.

    ``a`` (d,), ``C`` (d, d) symmetric PSD; ``x0`` one start (d,) or one per configuration (G, d); ``eta`` one schedule
    :math:`(T,)`; ``wd``, ``b1``, ``b2`` scalars. The gradient is :func:`jax.grad` of the loss (not a closed form); the
    update is :func:`sims.optimizers.step` with ``method="lion"``, as in :func:`lion_logistic`. Returns ``path``
    :math:`(G, n_{rec}, d)`, ``diverged`` and ``diverged_step`` :math:`(G,)` (a run past :data:`sims.nqm.BOUND` is frozen).
    ``max_bytes``: the allocation limit (:func:`theory.validate.byte_limit`) for the path records.
    """
    aa = V.array("a", a, ndim=1)
    cc = V.symmetric_psd("C", V.array("C", C, shape=(aa.size, aa.size)), "C")
    starts = V.array("x0", x0, ndim=(1, 2))
    starts = starts.reshape(-1, starts.shape[-1])
    if starts.shape[1] != aa.size:
        raise ValueError(f"x0: expected starts of length {aa.size} (one per coordinate of a), got shape {starts.shape}")
    e = V.array("eta", eta, ndim=1, low=0.0)
    n_rec = V.integer("n_rec", n_rec, low=1)
    if e.size % n_rec:
        raise ValueError(f"n_rec: expected a divisor of the schedule's length T = {e.size}, got {n_rec}")
    hyper = {"wd": V.real("wd", wd, low=0.0), "b1": V.real("b1", b1, low=0.0, high=1.0),
             "b2": V.real("b2", b2, low=0.0, high=1.0)}
    G = starts.shape[0]
    V.check_bytes({"n_rec": n_rec, "configurations": G, "d": aa.size}, 2 * 8 * padded_length(G) * (n_rec * aa.size + e.size),
                  what="the path records and the schedules", max_bytes=max_bytes)
    grid = {"x0": starts, "eta": np.broadcast_to(e, (G, e.size)).copy(), **{k: np.full(G, v) for k, v in hyper.items()}}
    return run_grid(_lion_dw_run, grid, jnp.asarray(aa), jnp.asarray(cc), static=dict(n_rec=n_rec), chunk_size=padded_length(G),
                    pad_to_chunk=True)
