r"""One-step sweeps and training runs.

:func:`one_step_sweep` (the loss ratio, accuracy and logit derivatives after one step :math:`t = r\rho_a(v)`
over a grid of ``r`` and directions) and the onset of the loss increase; Adam over minibatches in
``lax.scan`` with an optional learning-rate spike, clipping or the radius controller, and its grids over
modes, temperatures and seeds. Divergence is data: every run returns ``diverged`` and its step.
"""
from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax

import sims  # noqa: F401  (float64)
from sims.sweep import cartesian, run_grid
from theory import validate as V
from sims.softmax_radius.models import (
    MODES, Model, _BLOWUP, _key, _logits_jit, _model, _model_data, _model_inputs, _seeds, _tree, make_model
)
from sims.softmax_radius.directions import (
    _accuracy, _along, _blown, _cross_entropy, _evaluate_jit, _jvp, _normalize, _rho_a, _rho_from_slopes,
    _tree_norm
)

__all__ = ["one_step_sweep", "onset", "mode_code", "run_adam", "train", "spike_runs", "temperature_runs"]


# ----------------------------------------------------------------------------- one-step sweeps
def _one_step_point(point, x, y, r, temperature, xt, yt, *, model, with_test):
    """One direction: slopes, rho_a and the loss/accuracy after t = r rho_a for every r (and, ``with_test``, the
    accuracy on ``(xt, yt)`` after the same steps)."""
    v, base = point["v"], point["params"]
    _, a = _jvp(model.apply, base, v, x)
    rho = _rho_from_slopes(a, temperature)

    def at(ri):
        moved = _along(base, v, ri * rho)
        z = model.apply(moved, x)
        test = _accuracy(model.apply(moved, xt), yt) if with_test else jnp.nan
        return _cross_entropy(z, y, temperature), _accuracy(z, y), test

    loss, acc, test_acc = jax.vmap(at)(r)
    out = {"rho_a": rho, "loss": loss, "acc": acc, "a": a / temperature}
    return out | ({"test_acc": test_acc} if with_test else {})


def _chunking(chunk_size: Any) -> dict:
    """run_grid options: one chunk of the whole grid (None), or fixed chunks of ``chunk_size`` runs, small
    grids padded to a full chunk so that sweeps of different sizes share one compiled program."""
    if chunk_size is None:
        return {}
    return {"chunk_size": V.integer("chunk_size", chunk_size, low=1, high=1_000_000), "pad_to_chunk": True}


def one_step_sweep(model: Model, params, directions, x, y, r, *, temperature=1.0, chunk_size: int | None = None,
                   test=None) -> dict:
    r"""One step :math:`\theta+r\rho_a(v)v` from ``params`` for every stacked unit direction
    (leading axis of ``directions``) and every normalized step ``r`` (the paper's
    :math:`r=t/\rho_a`, a 1-d array of values >= 0).

    ``run_grid`` maps over directions (the model is static configuration); the ``r`` grid is
    vmapped inside; ``chunk_size`` (None: one chunk) fixes the compiled grid size. Returns NumPy arrays: ``rho_a (D,)``; ``loss0``, ``acc0`` (scalars);
    ``loss``, ``ratio`` (= loss / loss0), ``acc`` and ``diverged`` (non-finite or > 1e150 post-step
    loss) of shape ``(D, R)``; the logits ``z (N, n)`` and slopes ``a (D, N, n)`` of the scaled
    logits :math:`z/T` at the start, from which the linearized loss follows in closed form. With
    ``test=(x_test, y_test)`` also ``test_acc (D, R)`` and ``test_acc0``: the accuracy on the held-out split after
    the same steps (the direction and :math:`\rho_a` stay those of ``x``; a batch-normalized model normalizes the
    test split with its own batch statistics).
    """
    model = _model(model)
    params = _tree("params", params)
    x, y = _model_inputs(model.apply, params, x, y)
    r = V.array("r", r, ndim=1, low=0.0)
    T = V.real("temperature", temperature, low=0.0, low_open=True)
    chunking = _chunking(chunk_size)
    directions = _tree("directions", directions)
    d_leaves, d_def = jax.tree_util.tree_flatten(directions)
    p_leaves, p_def = jax.tree_util.tree_flatten(params)
    n_dir = int(np.shape(d_leaves[0])[0]) if np.ndim(d_leaves[0]) else 0
    if d_def != p_def or n_dir < 1 or any(np.shape(d) != (n_dir,) + np.shape(w) for d, w in zip(d_leaves, p_leaves)):
        raise ValueError("directions: expected the pytree of params with one leading axis (one entry per direction)")
    if test is None:
        xt, yt = x, y
    else:
        if not isinstance(test, (tuple, list)) or len(test) != 2:
            raise TypeError(f"test: expected a pair (x_test, y_test), got {type(test).__name__}")
        try:
            xt, yt = _model_inputs(model.apply, params, test[0], test[1])
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"test: {exc}") from None
    loss0, acc0 = _evaluate_jit(model.apply, params, x, y, T)
    # the parameters ride along the grid axis (one copy per direction) so XLA sees them as inputs,
    # not constants: constant-folding data @ weights at compile time is slow
    tiled = jax.tree_util.tree_map(lambda w: jnp.broadcast_to(w, (n_dir,) + w.shape), params)
    out = run_grid(_one_step_point, {"v": directions, "params": tiled}, x, y, jnp.asarray(r), jnp.asarray(T), xt, yt,
                   static={"model": model, "with_test": test is not None}, **chunking)
    if test is not None:
        out["test_acc0"] = float(_evaluate_jit(model.apply, params, xt, yt, T)[1])
    loss0 = float(loss0)
    out["loss0"], out["acc0"] = loss0, float(acc0)
    out["ratio"] = out["loss"] / loss0
    out["diverged"] = ~np.isfinite(out["loss"]) | (np.abs(out["loss"]) > _BLOWUP)
    out["z"] = np.asarray(_logits_jit(model.apply, params, x)) / T
    return out


def onset(r, ratio, threshold: float = 1.1) -> np.ndarray:
    """First ``r`` where the loss ratio reaches ``threshold`` (> 1; a non-finite ratio counts); ``inf``
    if never. ``ratio`` has shape ``(..., len(r))``; ``r`` is increasing."""
    rr = V.array("r", r, ndim=1, low=0.0)
    if not np.all(np.diff(rr) > 0):
        raise ValueError("r: expected strictly increasing values")
    # Non-finite ratios are data (a diverged step counts as reaching the threshold), hence finite=False.
    raw = V.array("ratio", ratio, finite=False)
    if raw.ndim < 1 or raw.shape[-1] != rr.size:
        raise ValueError(f"ratio: expected shape (..., {rr.size}) matching r, got {raw.shape}")
    threshold = V.real("threshold", threshold, low=1.0, low_open=True)
    hit = ~np.isfinite(raw) | (raw >= threshold)
    first = np.argmax(hit, axis=-1)
    return np.where(hit.any(axis=-1), rr[first], np.inf)


# ----------------------------------------------------------------------------- training
def mode_code(mode: str) -> int:
    """Integer code of a training mode (0 plain, 1 clip, 2 controller), so modes can be a grid axis."""
    return MODES.index(V.choice("mode", mode, MODES))


def _adam_core(params, data, batches, eta, spike_factor, spike_step, clip_norm, temperature, mode, *, model,
               eval_every_step, track_radius, eval_at=None):
    r"""Adam from ``params`` over the minibatch index rows ``batches`` (traceable; see :func:`run_adam`).

    ``eval_at`` (a tuple of step indices, static) records the test accuracy after those steps only (NaN after the
    others), in place of ``eval_every_step``; ``track_radius="spike"`` computes :math:`\rho_a` at ``spike_step`` only
    (NaN at the other steps; not for the controller, which needs it at every step). Both are a ``lax.cond`` on the
    step index, which a ``vmap`` over runs leaves a branch (the index is not batched), so the other steps skip the
    work."""
    xtr, ytr = data["x_train"], data["y_train"]
    xte, yte = data["x_test"], data["y_test"]
    adam = optax.scale_by_adam()
    recorded = None if eval_at is None else np.isin(np.arange(batches.shape[0]), eval_at)

    def test_acc(p):
        return _accuracy(model.apply(p, xte), yte).astype(jnp.result_type(float))

    def skip(p):
        return jnp.asarray(jnp.nan, jnp.result_type(float))

    def radius(p, upd):
        return _rho_a(model.apply, p, _normalize(upd), xtr, temperature).astype(jnp.result_type(float))

    def loss_fn(p, xb, yb):
        return _cross_entropy(model.apply(p, xb), yb, temperature)

    def step(carry, inp):
        p, s, first_bad = carry
        i, ib = inp
        loss, g = jax.value_and_grad(loss_fn)(p, xtr[ib], ytr[ib])
        # global-norm clipping g <- g min(1, clip_norm/||g||), applied in the clip mode only
        g_norm = _tree_norm(g)
        shrink = jnp.where(mode == 1, jnp.minimum(1.0, clip_norm / jnp.where(g_norm > 0, g_norm, 1.0)), 1.0)
        g = jax.tree_util.tree_map(lambda x: shrink * x, g)
        u, s = adam.update(g, s, p)
        eta_i = eta * jnp.where(i == spike_step, spike_factor, 1.0)
        upd = jax.tree_util.tree_map(lambda x: -eta_i * x, u)
        norm = _tree_norm(upd)
        if track_radius == "spike":
            rho = jax.lax.cond(i == spike_step, radius, lambda q, d: jnp.asarray(jnp.nan, jnp.result_type(float)),
                               p, upd)
        else:
            rho = radius(p, upd) if track_radius else jnp.nan
        ctrl = jnp.minimum(1.0, rho / jnp.where(norm > 0, norm, 1.0))
        scale = jnp.where(mode == 2, ctrl, 1.0)
        p = jax.tree_util.tree_map(lambda w, d: w + scale * d, p, upd)
        bad = ~jnp.isfinite(loss) | _blown(p)
        first_bad = jnp.where((first_bad < 0) & bad, i, first_bad)
        out = {"loss": loss, "r": norm / rho, "scale": scale}
        if recorded is not None:
            out["test_acc"] = jax.lax.cond(jnp.asarray(recorded)[i], test_acc, skip, p)
        elif eval_every_step:
            out["test_acc"] = _accuracy(model.apply(p, xte), yte)
        return (p, s, first_bad), out

    init = (params, adam.init(params), jnp.asarray(-1, dtype=jnp.int32))
    steps = jnp.arange(batches.shape[0], dtype=jnp.int32)
    (params, _, first_bad), trace = jax.lax.scan(step, init, (steps, batches))
    return {"params": params, **trace, "diverged": first_bad >= 0, "diverged_step": first_bad}


def _training_bytes(runs: int, steps: int, batch: int, data: dict, max_bytes) -> None:
    """Refuse training runs whose minibatch indices and gathered minibatches (``steps x batch`` per run, drawn at
    once) and per-step records exceed the allocation limit (:func:`theory.validate.byte_limit`)."""
    features = int(np.prod(np.shape(data["x_train"])[1:])) if "x_train" in data else 64
    V.check_bytes({"steps": steps, "batch": batch, "runs": runs},
                  8 * runs * (steps * batch + 2 * batch * features + 8 * steps),
                  what="the minibatch indices and gathered minibatches, and the per-step records", max_bytes=max_bytes)


def _train_core(key, data, eta, spike_factor, spike_step, clip_norm, temperature, mode, *, model, steps, batch,
                eval_every_step, track_radius, eval_at=None):
    r"""Initialization and minibatches from ``key``, then :func:`_adam_core` (traceable; see :func:`train`)."""
    k_init, k_batch = jax.random.split(key)
    batches = jax.random.randint(k_batch, (steps, batch), 0, data["x_train"].shape[0])
    return _adam_core(model.init(k_init), data, batches, eta, spike_factor, spike_step, clip_norm, temperature, mode,
                      model=model, eval_every_step=eval_every_step, track_radius=track_radius, eval_at=eval_at)


_train_jit = jax.jit(_train_core, static_argnames=("model", "steps", "batch", "eval_every_step", "track_radius"))
_adam_jit = jax.jit(_adam_core, static_argnames=("model", "eval_every_step", "track_radius"))


def _adam_options(mode, eval_every_step, track_radius, steps, eta, spike_step, spike_factor, clip_norm,
                  temperature) -> tuple:
    mode_i = mode_code(mode)
    if not isinstance(track_radius, bool) or not isinstance(eval_every_step, bool):
        raise TypeError("track_radius/eval_every_step: expected booleans")
    if not track_radius and mode == "controller":
        raise ValueError("track_radius: the controller (mode='controller') needs rho_a at every step; pass True")
    eta = V.real("eta", eta, low=0.0, low_open=True)
    spike_step = V.integer("spike_step", spike_step, low=-1, high=steps - 1)
    spike_factor = V.real("spike_factor", spike_factor, low=0.0, low_open=True)
    clip_norm = V.real("clip_norm", clip_norm, low=0.0, low_open=True)
    temperature = V.real("temperature", temperature, low=0.0, low_open=True)
    return (jnp.asarray(eta), jnp.asarray(spike_factor), jnp.asarray(spike_step, jnp.int32), jnp.asarray(clip_norm),
            jnp.asarray(temperature), jnp.asarray(mode_i, jnp.int32))


def run_adam(model: Model, params, data: dict, batches, *, eta: float, mode: str = "plain", spike_step: int = -1,
             spike_factor: float = 1.0, clip_norm: float = 1.0, temperature: float = 1.0,
             eval_every_step: bool = False, track_radius: bool = True) -> dict:
    r"""Adam (optax ``scale_by_adam``, learning rate ``eta``) from ``params``, one step per row of
    ``batches`` (integer indices into ``data["x_train"]``, shape ``(steps, batch)``): deterministic.

    At step ``spike_step`` only (-1: never) the learning rate is ``eta * spike_factor`` (a one-step
    spike). ``mode``: ``"plain"``; ``"clip"`` (global-norm clipping of the gradient to
    ``clip_norm`` before Adam); ``"controller"`` (the Adam update :math:`p` is scaled by
    :math:`s=\min(1,\rho_a(p/\|p\|)/\|p\|)`, :math:`\rho_a` from one JVP over the full training set,
    so the step never travels further than :math:`\rho_a`). ``temperature`` T trains on logits z/T.

    Returns a dict: ``params``; per step ``loss`` (minibatch, before the step), ``r``
    (:math:`\|p\|/\rho_a` of the proposed update, the paper's normalized step; ``nan`` without
    ``track_radius``), ``scale`` (the factor applied) and, with ``eval_every_step``, ``test_acc``
    after the step; ``diverged`` (bool) and ``diverged_step`` (first step whose loss or updated
    parameters are non-finite or beyond 1e150; -1 if none). Divergence is data: the run goes on
    and nothing raises. ``track_radius=False`` skips the per-step JVP; the controller needs it.
    """
    data = _model_data(model, data)
    params = _tree("params", params, like=jax.eval_shape(model.init, jax.random.key(0)))
    raw = np.asarray(batches) if not isinstance(batches, (str, bytes)) and batches is not None else None
    if raw is None or raw.dtype.kind not in "iu":
        raise TypeError(f"batches: expected an integer array of sample indices, got {type(batches).__name__}")
    n = int(data["x_train"].shape[0])
    idx = V.array("batches", raw, ndim=2, low=0, high=n - 1, dtype=np.int32)
    options = _adam_options(mode, eval_every_step, track_radius, idx.shape[0], eta, spike_step, spike_factor,
                            clip_norm, temperature)
    return _adam_jit(params, data, jnp.asarray(idx), *options, model=model, eval_every_step=eval_every_step,
                     track_radius=track_radius)


def train(key, model: Model, data: dict, *, steps: int, batch: int, eta: float, mode: str = "plain",
          spike_step: int = -1, spike_factor: float = 1.0, clip_norm: float = 1.0, temperature: float = 1.0,
          eval_every_step: bool = False, track_radius: bool = True, max_bytes=None) -> dict:
    r"""``model.init`` and ``steps`` minibatches of ``batch`` uniform indices drawn from ``key``, then
    :func:`run_adam` (same options, same returned dict, including ``diverged``/``diverged_step``). ``max_bytes``:
    the allocation limit (:func:`theory.validate.byte_limit`) for the ``steps x batch`` indices, drawn at once."""
    key = _key("key", key)
    data = _model_data(model, data)
    steps = V.integer("steps", steps, low=1, high=1_000_000)
    batch = V.integer("batch", batch, low=1, high=1_000_000)
    _training_bytes(1, steps, batch, data, max_bytes)
    options = _adam_options(mode, eval_every_step, track_radius, steps, eta, spike_step, spike_factor, clip_norm,
                            temperature)
    return _train_jit(key, data, *options, model=model, steps=steps, batch=batch, eval_every_step=eval_every_step,
                      track_radius=track_radius)


def _spike_run(point, data, eta, factor, spike_step, *, model, steps, batch, eval_at, track):
    """One (mode, seed) run of the spike study; every mode of a seed shares its key (a paired design)."""
    out = _train_core(jax.random.key(point["seed"]), data, eta, factor, spike_step, jnp.asarray(1.0), jnp.asarray(1.0),
                      point["mode"], model=model, steps=steps, batch=batch, eval_every_step=True, track_radius=track,
                      eval_at=eval_at)
    return {k: out[k] for k in ("test_acc", "r", "scale", "loss", "diverged", "diverged_step")}


def _eval_steps(steps: int, spike_step: int, every: int) -> np.ndarray:
    """The steps after which the spike study records the test accuracy: every ``every``-th, the two around the spike
    (the one before it is the accuracy the spike is judged against) and the last."""
    marks = [i for i in (spike_step - 1, spike_step, steps - 1) if 0 <= i < steps]
    return np.union1d(np.arange(0, steps, every), marks).astype(np.int64)


def spike_runs(model: Model, data: dict, *, modes=MODES, seeds, eta: float, factor: float, steps: int = 200,
               batch: int = 64, spike_step: int = 50, eval_every: int = 1, chunk_size: int | None = None,
               max_bytes=None) -> dict:
    r"""Adam runs with a one-step learning-rate spike (``eta * factor`` at ``spike_step``) for every
    (mode, seed) pair (mode-major order).

    All modes of one seed share the initialization and the minibatches (a paired comparison).
    ``chunk_size`` (None: one chunk) fixes the compiled grid size (see :func:`one_step_sweep`).
    The test accuracy is recorded after the steps :math:`i` with :math:`i\equiv 0 \pmod k` (``eval_every`` = k),
    after the steps just before and at the spike and after the last step (every step for k = 1); the other steps skip
    the test set. Returns ``mode (G,)`` (codes, see :func:`mode_code`), ``seed (G,)``, ``eval_step (E,)`` (the
    recorded steps, increasing), ``test_acc (G, E)`` (after those steps), ``final_acc (G,)`` (after the last step),
    ``r`` (the normalized step :math:`\|p\|/\rho_a` at every step for the controller, at ``spike_step`` only for the
    other modes, NaN at their other steps: :math:`\rho_a` costs a JVP over the training set), ``scale``,
    ``loss (G, steps)``, ``diverged (G,)``, ``diverged_step (G,)``. One sweep per mode (``run_grid`` over the
    seeds); plain Adam and clipping share one compiled program, the controller has its own.
    ``max_bytes``: the allocation limit (:func:`theory.validate.byte_limit`) for every run's minibatch indices and
    records (a chunk of runs draws its indices at once).
    """
    data = _model_data(model, data)
    if isinstance(modes, str) or not hasattr(modes, "__iter__"):
        raise TypeError(f"modes: expected a sequence of mode names, got {type(modes).__name__}")
    for m in modes:
        if not any(type(m) is type(o) and m == o for o in MODES):
            raise ValueError(f"modes: expected names from {MODES}, got {tuple(modes)!r}")
    codes = np.asarray([mode_code(m) for m in modes], dtype=np.int32)
    if codes.size == 0:
        raise ValueError("modes: expected at least one mode, got none")
    seeds = _seeds(seeds)
    steps = V.integer("steps", steps, low=1, high=1_000_000)
    batch = V.integer("batch", batch, low=1, high=1_000_000)
    _training_bytes(codes.size * seeds.size, steps, batch, data, max_bytes)
    spike_step = V.integer("spike_step", spike_step, low=-1, high=steps - 1)
    eta = V.real("eta", eta, low=0.0, low_open=True)
    factor = V.real("factor", factor, low=0.0, low_open=True)
    eval_every = V.integer("eval_every", eval_every, low=1, high=1_000_000)
    eval_step = _eval_steps(steps, spike_step, eval_every)
    # every step: the program without the branch (eval_at None)
    eval_at = None if eval_step.size == steps else tuple(int(i) for i in eval_step)
    grid, _ = cartesian(mode=codes, seed=seeds)
    parts = []
    for code in codes:  # one sweep per mode: rho_a at every step for the controller, at the spike for the others
        sel = np.asarray(grid["mode"]) == code
        track = True if code == mode_code("controller") else "spike"
        parts.append(run_grid(_spike_run, {k: v[sel] for k, v in grid.items()}, data, jnp.asarray(eta),
                              jnp.asarray(factor), jnp.asarray(spike_step, jnp.int32),
                              static={"model": model, "steps": steps, "batch": batch, "eval_at": eval_at,
                                      "track": track}, **_chunking(chunk_size)))
    out = {k: np.concatenate([p_[k] for p_ in parts]) for k in parts[0]}
    out["test_acc"] = out["test_acc"][:, eval_step]
    out["eval_step"] = eval_step
    out["final_acc"] = out["test_acc"][:, -1]
    out["mode"], out["seed"] = np.asarray(grid["mode"]), np.asarray(grid["seed"])
    return out


def _temperature_run(point, data, r, eta, *, model, steps, batch):
    """Train at temperature T, then one step along the descent direction at t = r rho_a(T) for every r."""
    T = point["temperature"]
    out = _train_core(jax.random.key(point["seed"]), data, eta, jnp.asarray(1.0), jnp.asarray(-1, jnp.int32),
                      jnp.asarray(1.0), T, jnp.asarray(0, jnp.int32), model=model, steps=steps, batch=batch,
                      eval_every_step=False, track_radius=False)
    params, xtr, ytr = out["params"], data["x_train"], data["y_train"]

    def loss_fn(p):
        return _cross_entropy(model.apply(p, xtr), ytr, T)

    loss0, g = jax.value_and_grad(loss_fn)(params)
    v = jax.tree_util.tree_map(lambda t: -t, _normalize(g))
    rho = _rho_a(model.apply, params, v, xtr, T)
    ratio = jax.vmap(lambda ri: loss_fn(_along(params, v, ri * rho)))(r) / loss0
    return {"rho_a": rho, "ratio": ratio, "loss0": loss0, "diverged": out["diverged"],
            "diverged_step": out["diverged_step"]}


def temperature_runs(data: dict, *, temperatures, seeds, r, steps: int = 120, batch: int = 256, eta: float = 1e-2,
                     hidden=(128, 128), threshold: float = 1.1, chunk_size: int | None = None,
                     max_bytes=None) -> dict:
    r"""Temperature study: an MLP (GELU) trained by Adam on logits :math:`z/T` for every (T, seed) pair
    (``run_grid`` over the Cartesian grid, T-major), then one step along the normalized descent
    direction at distance :math:`t=r\rho_a(T)` for every normalized step ``r``; the collapse onset
    is the first ``r`` whose loss ratio reaches ``threshold``.

    Returns ``temperature, seed (G,)``, ``rho_a (G,)``, ``ratio (G, R)``, ``onset_r`` and
    ``onset_distance`` (:math:`r_{\rm onset}\rho_a`, the raw distance) ``(G,)``, and the training's
    ``diverged``/``diverged_step (G,)`` (a diverged run's onsets are ``nan``). ``chunk_size`` and ``max_bytes`` as in
    :func:`spike_runs`.
    """
    temps = V.array("temperatures", temperatures, ndim=1, low=0.0, low_open=True)
    seeds = _seeds(seeds)
    rr = V.array("r", r, ndim=1, low=0.0)
    if not np.all(np.diff(rr) > 0):
        raise ValueError("r: expected strictly increasing values (the onset is the first r that fails)")
    threshold = V.real("threshold", threshold, low=1.0, low_open=True)
    steps = V.integer("steps", steps, low=1, high=1_000_000)
    batch = V.integer("batch", batch, low=1, high=1_000_000)
    eta = V.real("eta", eta, low=0.0, low_open=True)
    model = make_model("mlp", hidden=hidden, act="gelu")
    data = _model_data(model, data)
    _training_bytes(temps.size * seeds.size, steps, batch, data, max_bytes)
    grid, _ = cartesian(temperature=temps, seed=seeds)
    out = run_grid(_temperature_run, grid, data, jnp.asarray(rr), jnp.asarray(eta),
                   static={"model": model, "steps": steps, "batch": batch}, **_chunking(chunk_size))
    out["temperature"], out["seed"] = np.asarray(grid["temperature"]), np.asarray(grid["seed"])
    on = onset(rr, out["ratio"], threshold)
    out["onset_r"] = np.where(out["diverged"], np.nan, on)
    out["onset_distance"] = out["onset_r"] * out["rho_a"]
    return out
