r"""JAX simulators for the cross-entropy Taylor radius (Sao 2026, "Ghosts of Softmax").

* :func:`directional_derivatives` -- logits :math:`z` and :math:`a=J_zv` per sample by one
  ``jax.jvp`` through any model ``apply(params, x)``;
* :func:`rho_a` -- the data-set bound :math:`\rho_a(v)=\pi/\max_x\Delta a(x;v)`;
* :func:`line_taylor` -- Taylor coefficients of the per-sample line loss
  :math:`\ell_i(\tau)=\mathrm{CE}(f_{\theta+\tau v}(x_i),y_i)` by ``jax.experimental.jet``;
* :func:`one_step_sweep` -- loss ratio and accuracy after one step :math:`\tau=r\rho_a(v)` for a
  grid of :math:`r` and several directions (``run_grid`` over directions);
* :func:`train` -- Adam (optax) with minibatches in ``lax.scan``, optionally an LR spike, gradient
  clipping, or the controller :math:`s=\min(1,\rho_a(v)/\|p\|)` applied to the Adam update
  :math:`p` (``run_grid`` over seeds / temperatures);
* models in plain JAX (parameters are flat dicts of arrays): linear softmax, MLP (ReLU/GELU,
  any depth), MLP+LayerNorm, a small CNN, a one-head attention model over the image rows;
* data: scikit-learn's 8x8 digits (shipped with the package, no download).

Everything runs in float64 (``import sims`` enables x64). Diverged runs are data: losses are
``inf``/``nan`` and accuracies are whatever the (finite or not) logits give; nothing raises.
"""
from __future__ import annotations

import math
from functools import lru_cache
from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax.experimental import jet

import sims  # noqa: F401  (float64)
from sims.bench import BenchCase
from sims.cache import cached
from sims.sweep import diverged, run_grid

__all__ = [
    "digits", "Model", "make_model", "MODEL_NAMES", "cross_entropy", "accuracy",
    "directional_derivatives", "rho_a", "line_taylor", "tree_norm", "normalize",
    "random_directions", "one_step_sweep", "onset", "train", "trained_model", "bench_cases",
]

MODEL_NAMES = ("linear", "mlp", "mlp_ln", "cnn", "attention")


# ----------------------------------------------------------------------------- data
@lru_cache(maxsize=4)
def digits(seed: int = 0, test_fraction: float = 0.25) -> dict:
    """The 8x8 digits (1797 images, 10 classes), pixels scaled to [0, 1], split once by ``seed``."""
    from sklearn.datasets import load_digits

    if not 0 < test_fraction < 1:
        raise ValueError(f"test_fraction: expected a number in (0, 1), got {test_fraction!r}")
    d = load_digits()
    x = np.asarray(d.data, dtype=np.float64) / 16.0
    y = np.asarray(d.target, dtype=np.int32)
    perm = np.random.default_rng(seed).permutation(len(y))
    n_test = int(round(test_fraction * len(y)))
    te, tr = perm[:n_test], perm[n_test:]
    return {"x_train": x[tr], "y_train": y[tr], "x_test": x[te], "y_test": y[te]}


# ----------------------------------------------------------------------------- models
class Model(NamedTuple):
    name: str
    init: Callable  # key -> params (flat dict of arrays)
    apply: Callable  # (params, x[N, 64]) -> logits[N, 10]


def _dense(key, n_in, n_out):
    return jax.random.normal(key, (n_in, n_out)) * math.sqrt(1.0 / n_in), jnp.zeros(n_out)


def _layer_norm(h, gain, bias, eps=1e-5):
    mu = h.mean(-1, keepdims=True)
    var = ((h - mu) ** 2).mean(-1, keepdims=True)
    return (h - mu) / jnp.sqrt(var + eps) * gain + bias


_ACTS = {"relu": jax.nn.relu, "gelu": jax.nn.gelu, "tanh": jnp.tanh}


def make_model(name: str, *, hidden: tuple[int, ...] = (128,), act: str = "relu",
               n_in: int = 64, n_out: int = 10) -> Model:
    """A small classifier for 8x8 images: ``linear``, ``mlp``, ``mlp_ln``, ``cnn``, ``attention``.

    ``hidden`` (widths) and ``act`` apply to the MLPs. Parameters are flat dicts of arrays, so
    they can be cached as ``.npz`` and used as JVP tangents directly.
    """
    if name not in MODEL_NAMES:
        raise ValueError(f"name: expected one of {MODEL_NAMES}, got {name!r}")
    if act not in _ACTS:
        raise ValueError(f"act: expected one of {tuple(_ACTS)}, got {act!r}")
    hidden = tuple(int(h) for h in hidden)
    if not hidden or min(hidden) < 1:
        raise ValueError(f"hidden: expected positive widths, got {hidden!r}")
    f = _ACTS[act]

    if name == "linear":
        def init(key):
            w, b = _dense(key, n_in, n_out)
            return {"W": w * 0.1, "b": b}

        def apply(p, x):
            return x @ p["W"] + p["b"]

    elif name in ("mlp", "mlp_ln"):
        widths = (n_in,) + hidden + (n_out,)
        ln = name == "mlp_ln"

        def init(key):
            keys = jax.random.split(key, len(widths) - 1)
            p = {}
            for i, k in enumerate(keys):
                p[f"W{i}"], p[f"b{i}"] = _dense(k, widths[i], widths[i + 1])
                if ln and i < len(widths) - 2:
                    p[f"g{i}"], p[f"c{i}"] = jnp.ones(widths[i + 1]), jnp.zeros(widths[i + 1])
            return p

        def apply(p, x):
            h = x
            for i in range(len(widths) - 1):
                h = h @ p[f"W{i}"] + p[f"b{i}"]
                if i < len(widths) - 2:
                    if ln:
                        h = _layer_norm(h, p[f"g{i}"], p[f"c{i}"])
                    h = f(h)
            return h

    elif name == "cnn":
        ch = 8

        def init(key):
            k1, k2 = jax.random.split(key)
            w2, b2 = _dense(k2, 4 * 4 * ch, n_out)
            return {"K": jax.random.normal(k1, (3, 3, 1, ch)) / 3.0, "c": jnp.zeros(ch), "W": w2, "b": b2}

        def apply(p, x):
            img = x.reshape(-1, 8, 8, 1)
            h = jax.lax.conv_general_dilated(img, p["K"], (1, 1), "SAME",
                                             dimension_numbers=("NHWC", "HWIO", "NHWC"))
            h = jax.nn.relu(h + p["c"])
            h = h.reshape(-1, 4, 2, 4, 2, ch).mean(axis=(2, 4))  # 2x2 average pool
            return h.reshape(h.shape[0], -1) @ p["W"] + p["b"]

    else:  # attention: 8 tokens (image rows) of 8 pixels, one head, mean pooling
        d = 16

        def init(key):
            ks = jax.random.split(key, 6)
            p = {"E": jax.random.normal(ks[0], (8, d)) / math.sqrt(8), "pos": 0.1 * jax.random.normal(ks[1], (8, d))}
            for name_, k in zip(("Q", "Kw", "V"), ks[2:5]):
                p[name_] = jax.random.normal(k, (d, d)) / math.sqrt(d)
            p["W"], p["b"] = _dense(ks[5], d, n_out)
            return p

        def apply(p, x):
            tok = x.reshape(-1, 8, 8) @ p["E"] + p["pos"]
            q, k, v = tok @ p["Q"], tok @ p["Kw"], tok @ p["V"]
            att = jax.nn.softmax(q @ jnp.swapaxes(k, 1, 2) / math.sqrt(d), axis=-1)
            h = tok + att @ v
            return jax.nn.gelu(h).mean(axis=1) @ p["W"] + p["b"]

    return Model(name, init, apply)


def cross_entropy(logits, y, temperature=1.0):
    """Mean cross-entropy of ``logits / temperature`` against integer labels ``y``."""
    z = logits / temperature
    return jnp.mean(jax.nn.logsumexp(z, axis=-1) - jnp.take_along_axis(z, y[:, None], axis=-1)[:, 0])


def accuracy(logits, y):
    return jnp.mean(jnp.argmax(logits, axis=-1) == y)


# ----------------------------------------------------------------------------- directions
def tree_norm(t) -> jax.Array:
    return jnp.sqrt(sum(jnp.sum(x**2) for x in jax.tree_util.tree_leaves(t)))


def normalize(t):
    """``t / ||t||`` (global norm over the pytree); a zero tree stays zero."""
    n = tree_norm(t)
    return jax.tree_util.tree_map(lambda x: x / jnp.where(n > 0, n, 1.0), t)


def random_directions(key, params, n: int):
    """``n`` independent uniformly random unit directions (Gaussian, normalized), stacked on axis 0."""
    leaves, treedef = jax.tree_util.tree_flatten(params)
    keys = jax.random.split(key, len(leaves))
    raw = [jax.random.normal(k, (n,) + x.shape) for k, x in zip(keys, leaves)]
    stacked = jax.tree_util.tree_unflatten(treedef, raw)
    return jax.vmap(normalize)(stacked)


def directional_derivatives(apply: Callable, params, v, x):
    r"""Logits :math:`z=f_\theta(x)` and directional derivatives :math:`a=J_z v`, both ``(N, n)``,
    by one forward-mode ``jax.jvp`` (the cost of about two forward passes)."""
    return jax.jvp(lambda p: apply(p, x), (params,), (v,))


def rho_a(apply: Callable, params, v, x, temperature=1.0) -> jax.Array:
    r""":math:`\rho_a(v)=\pi T/\max_x(\max_ka_k-\min_ka_k)` over the samples ``x`` (``inf`` if
    every spread is 0). ``temperature`` T rescales the logits to :math:`z/T`."""
    _, a = directional_derivatives(apply, params, v, x)
    spread = jnp.max(jnp.max(a, axis=-1) - jnp.min(a, axis=-1))
    return jnp.where(spread > 0, jnp.pi * temperature / jnp.where(spread > 0, spread, 1.0), jnp.inf)


def line_taylor(apply: Callable, params, v, x, y, order: int) -> jax.Array:
    r"""Taylor coefficients :math:`c_0..c_N` of every per-sample line loss
    :math:`\ell_i(\tau)=\mathrm{CE}(f_{\theta+\tau v}(x_i),y_i)` about :math:`\tau=0`, shape ``(N_samples, order+1)``.

    ``jax.experimental.jet`` propagates the truncated series of :math:`\tau` through the model
    and the loss; ``jet`` returns derivatives, divided here by :math:`n!`.
    """
    if not isinstance(order, int) or order < 1:
        raise ValueError(f"order: expected a positive int, got {order!r}")

    def per_sample(tau):
        p = jax.tree_util.tree_map(lambda w, d: w + tau * d, params, v)
        z = apply(p, x)
        return jax.nn.logsumexp(z, axis=-1) - jnp.take_along_axis(z, y[:, None], axis=-1)[:, 0]

    series_in = [jnp.ones(())] + [jnp.zeros(())] * (order - 1)
    primal, series = jet.jet(per_sample, (jnp.zeros(()),), (series_in,))
    fact = jnp.asarray([math.factorial(n) for n in range(1, order + 1)], dtype=jnp.float64)
    return jnp.concatenate([primal[:, None], jnp.stack(series, axis=1) / fact], axis=1)


# ----------------------------------------------------------------------------- one-step sweeps
def one_step_sweep(apply: Callable, params, directions, x, y, r_grid, *, temperature=1.0,
                   chunk_size: int = 64) -> dict:
    r"""Loss ratio :math:`\ell(\theta+r\rho_a(v)v)/\ell(\theta)` and accuracy on ``(x, y)`` for every
    stacked unit direction (leading axis of ``directions``) and every ``r`` in ``r_grid``.

    ``run_grid`` maps over directions; the ``r`` grid is vmapped inside. Returns NumPy arrays:
    ``rho_a (D,)``, ``loss0``, ``acc0`` (scalars), ``ratio (D, R)``, ``acc (D, R)``,
    ``diverged (D, R)`` (non-finite post-step loss).
    """
    r_grid = jnp.asarray(r_grid, dtype=jnp.float64)
    if r_grid.ndim != 1 or not bool(jnp.all(r_grid >= 0)):
        raise ValueError(f"r_grid: expected a 1-d array of non-negative values, got shape {r_grid.shape}")
    x, y = jnp.asarray(x), jnp.asarray(y)
    loss0 = cross_entropy(apply(params, x), y, temperature)
    acc0 = accuracy(apply(params, x), y)

    def per_direction(point):
        v, base = point["v"], point["params"]
        rho = rho_a(apply, base, v, x, temperature)

        def at(r):
            p = jax.tree_util.tree_map(lambda w, d: w + r * rho * d, base, v)
            z = apply(p, x)
            return cross_entropy(z, y, temperature), accuracy(z, y)

        loss, acc = jax.vmap(at)(r_grid)
        return {"rho_a": rho, "ratio": loss / loss0, "acc": acc}

    n_dir = jax.tree_util.tree_leaves(directions)[0].shape[0]
    # the parameters ride along the grid axis (one copy per direction) so XLA sees them as inputs,
    # not constants: constant-folding data @ weights at compile time is slow
    tiled = jax.tree_util.tree_map(lambda w: jnp.broadcast_to(w, (n_dir,) + w.shape), params)
    out = run_grid(per_direction, {"v": directions, "params": tiled}, chunk_size=chunk_size)
    out["diverged"] = np.asarray(diverged(jnp.asarray(out["ratio"]).reshape(-1))).reshape(out["ratio"].shape)
    out["loss0"], out["acc0"] = float(loss0), float(acc0)
    return out


def onset(r_grid, ratio, threshold: float = 1.1) -> np.ndarray:
    """First ``r`` where the loss ratio reaches ``threshold`` (non-finite counts); ``inf`` if never.
    ``ratio`` has shape ``(..., len(r_grid))``."""
    r_grid = np.asarray(r_grid)
    ratio = np.asarray(ratio)
    hit = ~np.isfinite(ratio) | (ratio >= threshold)
    first = np.argmax(hit, axis=-1)
    return np.where(hit.any(axis=-1), r_grid[first], np.inf)


# ----------------------------------------------------------------------------- training
_MODES = ("plain", "clip", "controller")


def mode_code(mode) -> int:
    """Integer code of a training mode (0 plain, 1 clip, 2 controller), so modes can be a grid axis."""
    if mode not in _MODES:
        raise ValueError(f"mode: expected one of {_MODES}, got {mode!r}")
    return _MODES.index(mode)


def train(key, model: Model, data: dict, *, steps: int, batch: int, lr: float, mode="plain",
          spike_step: int = -1, spike_factor: float = 1.0, clip_norm: float = 1.0,
          temperature=1.0, eval_every_step: bool = False, track_radius: bool = True):
    r"""One Adam run (optax ``scale_by_adam``) with minibatches drawn from ``key``.

    ``lr`` is multiplied by ``spike_factor`` at step ``spike_step`` only (a one-step spike).
    ``mode``: ``"plain"``; ``"clip"`` (global-norm clipping of the gradient to ``clip_norm``
    before Adam); ``"controller"`` (the Adam update :math:`p` is scaled by
    :math:`s=\min(1,\rho_a(p/\|p\|)/\|p\|)`, :math:`\rho_a` from one JVP over the full training
    set). ``mode`` may also be a (traced) integer code from :func:`mode_code`, so that one
    compilation serves a grid over modes; ``temperature`` may be traced too.
    Returns ``(params, trace)`` with per-step ``loss`` (minibatch), ``r`` (:math:`\|p\|/\rho_a`
    of the proposed update), ``scale`` (the factor applied) and, if ``eval_every_step``,
    ``test_acc`` after the step. ``track_radius=False`` skips the per-step JVP (then ``r`` is
    ``nan``); it is refused for the controller, which needs :math:`\rho_a`.
    """
    code = mode_code(mode) if isinstance(mode, str) else mode
    if not track_radius and not (isinstance(mode, str) and mode != "controller"):
        raise ValueError(f"track_radius: the controller (mode={mode!r}) needs rho_a at every step; pass True")
    if steps < 1 or batch < 1 or not lr > 0:
        raise ValueError(f"steps, batch, lr: expected positive values, got {steps}, {batch}, {lr}")
    k_init, k_batch = jax.random.split(key)
    params = model.init(k_init)
    xtr, ytr = jnp.asarray(data["x_train"]), jnp.asarray(data["y_train"])
    xte, yte = jnp.asarray(data["x_test"]), jnp.asarray(data["y_test"])
    n = xtr.shape[0]
    idx = jax.random.randint(k_batch, (steps, batch), 0, n)
    adam = optax.scale_by_adam()
    clipper = optax.clip_by_global_norm(clip_norm)
    state = adam.init(params)

    def loss_fn(p, xb, yb):
        return cross_entropy(model.apply(p, xb), yb, temperature)

    def step(carry, inp):
        p, s = carry
        t, ib = inp
        loss, g = jax.value_and_grad(loss_fn)(p, xtr[ib], ytr[ib])
        g_clip, _ = clipper.update(g, clipper.init(g))
        g = jax.tree_util.tree_map(lambda a, b: jnp.where(code == 1, b, a), g, g_clip)
        u, s = adam.update(g, s, p)
        eta = lr * jnp.where(t == spike_step, spike_factor, 1.0)
        upd = jax.tree_util.tree_map(lambda x: -eta * x, u)
        norm = tree_norm(upd)
        rho = rho_a(model.apply, p, normalize(upd), xtr, temperature) if track_radius else jnp.nan
        ctrl = jnp.minimum(1.0, rho / jnp.where(norm > 0, norm, 1.0))
        scale = jnp.where(code == 2, ctrl, 1.0)
        p = jax.tree_util.tree_map(lambda w, d: w + scale * d, p, upd)
        out = {"loss": loss, "r": norm / rho, "scale": scale}
        if eval_every_step:
            out["test_acc"] = accuracy(model.apply(p, xte), yte)
        return (p, s), out

    (params, _), trace = jax.lax.scan(step, (params, state), (jnp.arange(steps), idx))
    return params, trace


def trained_model(name: str, *, seed: int = 0, steps: int = 400, batch: int = 128, lr: float = 3e-3,
                  hidden: tuple[int, ...] = (64,), fresh: bool = False) -> dict:
    """Train ``name`` once with plain Adam on digits and cache it (``sims.cache.cached``).

    Returns ``{"params": dict, "train_acc", "test_acc", "train_loss"}``; parameters come back
    from the ``.npz`` so figures and claims reuse the same model.
    """
    model = make_model(name, hidden=hidden)
    config = {"model": name, "seed": seed, "steps": steps, "batch": batch, "lr": lr, "hidden": list(hidden)}

    def compute():
        data = digits()
        run = jax.jit(lambda key, dd: train(key, model, dd, steps=steps, batch=batch, lr=lr, track_radius=False))
        # data passed as an argument (not a closure constant) so XLA does not constant-fold it
        params, _ = run(jax.random.key(seed), {k: jnp.asarray(v) for k, v in data.items()})
        out = {f"param.{k}": np.asarray(v) for k, v in params.items()}
        xtr, ytr = jnp.asarray(data["x_train"]), jnp.asarray(data["y_train"])
        out["train_loss"] = float(cross_entropy(model.apply(params, xtr), ytr))
        out["train_acc"] = float(accuracy(model.apply(params, xtr), ytr))
        out["test_acc"] = float(accuracy(model.apply(params, jnp.asarray(data["x_test"])), jnp.asarray(data["y_test"])))
        return out

    v = cached(f"softmax_radius.model.{name}.s{seed}", config, compute, fresh=fresh)
    params = {k[len("param."):]: jnp.asarray(v[k]) for k in v if k.startswith("param.")}
    return {"model": model, "params": params, "train_loss": float(v["train_loss"]),
            "train_acc": float(v["train_acc"]), "test_acc": float(v["test_acc"])}


# ----------------------------------------------------------------------------- bench
def _rho_a_fd_numpy(W, V, x, h=1e-6):
    """NumPy reference for a one-hidden-layer ReLU MLP: central finite difference of the logits
    along ``V``, then the data-set bound pi / max spread."""
    def logits(W0, b0, W1, b1):
        return np.maximum(x @ W0 + b0, 0.0) @ W1 + b1

    plus = logits(*(w + h * d for w, d in zip(W, V)))
    minus = logits(*(w - h * d for w, d in zip(W, V)))
    a = (plus - minus) / (2 * h)
    return np.pi / np.max(a.max(axis=1) - a.min(axis=1))


def bench_cases(scale: str) -> list[BenchCase]:
    """rho_a over a data set (per-sample JVP, max spread) vs a NumPy finite-difference reference."""
    if scale not in ("small", "large"):
        raise ValueError(f"scale: expected 'small' or 'large', got {scale!r}")
    n, width = (1797, 128) if scale == "small" else (200_000, 512)
    rng = np.random.default_rng(0)
    x = rng.random((n, 64))
    model = make_model("mlp", hidden=(width,))
    params = model.init(jax.random.key(0))
    v = normalize(jax.tree_util.tree_map(lambda w: jnp.asarray(rng.normal(size=w.shape)), params))
    f = jax.jit(lambda p, d: rho_a(model.apply, p, d, jnp.asarray(x)))
    order = ("W0", "b0", "W1", "b1")
    Wn = [np.asarray(params[k]) for k in order]
    Vn = [np.asarray(v[k]) for k in order]

    def check(a, b):
        # central differences are exact for a piecewise-linear net up to round-off ~eps/h ~ 1e-10,
        # except where a ReLU flips inside [-h, h] (measure zero for random data)
        np.testing.assert_allclose(float(a), float(b), rtol=1e-6)

    return [BenchCase(name=f"softmax_radius.rho_a_jvp[{n}x{width}]", unit="sample JVPs", work=float(n),
                      run_jax=lambda: f(params, v), run_numpy=lambda: _rho_a_fd_numpy(Wn, Vn, x), check=check)]


# ----------------------------------------------------------------------------- experiments
def spike_runs(model: Model, data: dict, *, modes=_MODES, seeds, base_lr: float, factor: float,
               steps: int = 200, batch: int = 64, spike_step: int = 50) -> dict:
    r"""Adam runs with a one-step LR spike (``base_lr * factor`` at ``spike_step``) for every
    (mode, seed) pair, one compilation for the whole ``run_grid``. Returns ``mode (G,)`` (codes),
    ``seed (G,)``, ``test_acc (G, steps)``, ``final_acc (G,)``, ``r (G, steps)``
    (:math:`\|p\|/\rho_a` of the proposed update) and ``scale (G, steps)``."""
    from sims.sweep import cartesian

    seeds = np.asarray(seeds, dtype=np.uint32)
    if seeds.ndim != 1 or seeds.size < 1:
        raise ValueError(f"seeds: expected a non-empty 1-d list of seeds, got shape {seeds.shape}")
    codes = np.asarray([mode_code(m) for m in modes], dtype=np.int32)
    grid, _ = cartesian(mode=jnp.asarray(codes), seed=jnp.asarray(seeds))

    def one(point):
        _, trace = train(jax.random.key(point["seed"]), model, data, steps=steps, batch=batch, lr=base_lr,
                         mode=point["mode"], spike_step=spike_step, spike_factor=factor, eval_every_step=True)
        return {"test_acc": trace["test_acc"], "r": trace["r"], "scale": trace["scale"], "loss": trace["loss"]}

    out = run_grid(one, grid)
    out["final_acc"] = out["test_acc"][:, -1]
    out["mode"] = np.asarray(grid["mode"])
    out["seed"] = np.asarray(grid["seed"])
    return out


def temperature_runs(data: dict, *, temperatures, seeds, r_grid, steps: int = 120, batch: int = 256,
                     lr: float = 1e-2, hidden: tuple[int, ...] = (128, 128), threshold: float = 1.1) -> dict:
    r"""Temperature study: an MLP (GELU) trained with logits :math:`z/T` for every (T, seed) pair
    (``run_grid`` over the Cartesian grid), then one step along the normalized descent direction
    at :math:`\tau=r\rho_a(T)` for every ``r``; the collapse onset is the first step whose loss
    ratio reaches ``threshold``. Returns ``temperature, seed (G,)``, ``rho_a (G,)``,
    ``ratio (G, R)``, ``onset_r``, ``onset_tau (G,)``."""
    from sims.sweep import cartesian

    model = make_model("mlp", hidden=hidden, act="gelu")
    temps = jnp.asarray(temperatures, dtype=jnp.float64)
    seeds = np.asarray(seeds, dtype=np.uint32)
    grid, shape = cartesian(temperature=temps, seed=jnp.asarray(seeds))
    r_grid = jnp.asarray(r_grid, dtype=jnp.float64)
    xtr, ytr = jnp.asarray(data["x_train"]), jnp.asarray(data["y_train"])

    def one(point):
        T = point["temperature"]
        params, _ = train(jax.random.key(point["seed"]), model, data, steps=steps, batch=batch, lr=lr,
                          temperature=T, track_radius=False)
        loss_fn = lambda p: cross_entropy(model.apply(p, xtr), ytr, T)  # noqa: E731
        loss0, g = jax.value_and_grad(loss_fn)(params)
        v = jax.tree_util.tree_map(lambda x: -x, normalize(g))
        rho = rho_a(model.apply, params, v, xtr, T)

        def at(r):
            return loss_fn(jax.tree_util.tree_map(lambda w, d: w + r * rho * d, params, v))

        return {"rho_a": rho, "ratio": jax.vmap(at)(r_grid) / loss0, "loss0": loss0}

    out = run_grid(one, grid)
    out["temperature"] = np.asarray(grid["temperature"])
    out["seed"] = np.asarray(grid["seed"])
    out["onset_r"] = onset(np.asarray(r_grid), out["ratio"], threshold)
    out["onset_tau"] = out["onset_r"] * out["rho_a"]
    out["shape"] = np.asarray(shape)
    return out
