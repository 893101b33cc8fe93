r"""The authors' Table 1 setting: their three architectures in JAX and the runs over them.
"""
from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np
import optax

import sims  # noqa: F401  (float64)
from sims.sweep import run_grid
from theory import validate as V
from sims.softmax_radius.models import MODES, _gelu_erf, _seeds
from sims.softmax_radius.directions import _accuracy, _cross_entropy, _rho_from_slopes, _tree_norm

__all__ = ["ARCHGRID_NAMES", "archgrid_digits", "archgrid_runs", "finite_median"]


# ----------------------------------------------------------------------------- the authors' Table 1 setting
# The paper's Table 1 comes from the authors' script experiments/archgrid/run.py (github.com/piyush314/
# ghosts-of-softmax), whose setting differs from the paper's text: full-batch Adam at lr 0.015 for every
# architecture, 200 steps, the spike at step 50 only, float32, the first 20 % of the digits as the test split;
# its "Transformer" embeds each image as one token (so its attention softmax runs over a single key), its
# MLP+LN has three GELU layers, its CNN+BN convolves the 64 pixels as a 1-d sequence with batch normalization
# (running statistics for the controller's JVP, batch statistics otherwise), and its controller caps
# lr·||g|| at rho_a along the normalized gradient. The models below are those architectures in JAX, with
# PyTorch's default initialization distributions (drawn from JAX keys, so not the same draws).
ARCHGRID_NAMES = ("transformer", "mlp_ln3", "cnn1d_bn")
_AG_BN_MOMENTUM = 0.1  # PyTorch's BatchNorm default
_AG_EPS = 1e-5  # LayerNorm and BatchNorm eps (PyTorch's default)


def archgrid_digits() -> dict:
    """The digits as the authors' Table 1 script splits them: pixels / 16 in float32, the first
    ``int(0.2 · 1797) = 359`` images the test split, the other 1438 the (full-batch) training set."""
    from sklearn.datasets import load_digits

    raw = load_digits()
    x = np.asarray(raw.data, dtype=np.float32) / np.float32(16.0)
    y = np.asarray(raw.target, dtype=np.int32)
    n_test = int(0.2 * len(y))
    return {"x_train": x[n_test:], "y_train": y[n_test:], "x_test": x[:n_test], "y_test": y[:n_test]}


def _ag_uniform(key, shape, fan_in):
    """PyTorch's default for Linear/Conv1d weights and biases: U(-1/sqrt(fan_in), 1/sqrt(fan_in)) (kaiming_uniform
    with a = sqrt(5) gives this bound for the weights)."""
    b = 1.0 / math.sqrt(fan_in)
    return jax.random.uniform(key, shape, jnp.float32, -b, b)


def _ag_linear(key, n_in, n_out) -> dict:
    kw, kb = jax.random.split(key)
    return {"W": _ag_uniform(kw, (n_in, n_out), n_in), "b": _ag_uniform(kb, (n_out,), n_in)}


def _ag_norm(n) -> dict:
    return {"g": jnp.ones(n, jnp.float32), "c": jnp.zeros(n, jnp.float32)}


def _ag_init(name: str, key) -> dict:
    """Parameters (nested dicts of float32 arrays) of one of the authors' Table 1 models."""
    ks = jax.random.split(key, 8)
    if name == "transformer":
        d = 32
        return {"embed": _ag_linear(ks[0], 64, d), "qkv": _ag_linear(ks[1], d, 3 * d), "out": _ag_linear(ks[2], d, d),
                "ffn1": _ag_linear(ks[3], d, 4 * d), "ffn2": _ag_linear(ks[4], 4 * d, d), "norm1": _ag_norm(d),
                "norm2": _ag_norm(d), "head": _ag_linear(ks[5], d, 10)}
    if name == "mlp_ln3":
        d = 64
        return {"fc1": _ag_linear(ks[0], 64, d), "fc2": _ag_linear(ks[1], d, d), "fc3": _ag_linear(ks[2], d, d),
                "norm1": _ag_norm(d), "norm2": _ag_norm(d), "norm3": _ag_norm(d), "head": _ag_linear(ks[3], d, 10)}
    ch = 32  # cnn1d_bn: kernels stored (3, C_in, C_out), tap-major (see _ag_conv)
    return {"conv1": {"W": _ag_uniform(ks[0], (3, 1, ch), 3), "b": _ag_uniform(ks[1], (ch,), 3)},
            "conv2": {"W": _ag_uniform(ks[2], (3, ch, ch), 3 * ch), "b": _ag_uniform(ks[3], (ch,), 3 * ch)},
            "bn1": _ag_norm(ch), "bn2": _ag_norm(ch), "head": _ag_linear(ks[4], ch, 10)}


def _ag_dense(p, h):
    return h @ p["W"] + p["b"]


def _ag_layer_norm(p, h):
    mu = h.mean(-1, keepdims=True)
    var = ((h - mu) ** 2).mean(-1, keepdims=True)
    return (h - mu) / jnp.sqrt(var + _AG_EPS) * p["g"] + p["c"]


def _ag_conv(p, h):
    r"""PyTorch's ``Conv1d(k=3, padding=1)`` (a cross-correlation) on channels-last ``h`` (N, L, C):
    :math:`y_{lo}=b_o+\sum_{j,c}W_{jco}h_{l+j-1,c}`, as one product of the three shifted copies (im2col). Measured on
    two CPU cores for the training step (value and gradient over the 1438 images): XLA's convolution
    (``lax.conv_general_dilated``) costs 0.14 CPU-s against 0.16-0.19 for this product when jitted alone, but inside
    the sweep's ``vmap`` (the weights batched, even over one run) it becomes ~5 CPU-s; three shifted products summed
    cost 0.23, one product to the three taps followed by shifted sums of its outputs 0.64. Re-measured on one pinned
    core (2026-12-03): vmapped over one run but outside the training loop, XLA's convolution is the faster one (value
    and gradient 131 against 199 ms, the controller's JVP 50 against 200 ms); inside :func:`_ag_run`'s ``scan`` a
    step takes 3.4 s against 110 ms, and so does value and gradient alone in a ``scan`` with or without the ``vmap``
    (XLA's CPU convolution inside a loop body, not the batching)."""
    L = h.shape[1]
    hp = jnp.pad(h, ((0, 0), (1, 1), (0, 0)))
    patches = jnp.concatenate([hp[:, j:j + L, :] for j in range(3)], axis=-1)
    return patches @ p["W"].reshape(-1, p["W"].shape[-1]) + p["b"]


def _ag_batch_norm(p, h, stats):
    """BatchNorm1d over the samples and positions of ``h`` (N, L, C): with ``stats`` None the batch's mean and
    biased variance (training mode, differentiated by :func:`_ag_bn_train`'s closed form; also returns the unbiased
    variance the running average takes), else the running ``(mean, var)`` (evaluation mode)."""
    if stats is None:
        y, mu, var = _ag_bn_train(h, p["g"], p["c"])
        n = h.shape[0] * h.shape[1]
        return y, (mu, var * n / (n - 1))
    return _ag_normalize(h, *stats, p["g"], p["c"])[0], None


def _ag_normalize(h, mu, var, g, c):
    r""":math:`(\hat xg+c,\ \hat x,\ s)` with :math:`\hat x=(h-\mu)/s`, :math:`s=\sqrt{\sigma^2+\epsilon}`: the one
    normalization formula of both modes."""
    s = jnp.sqrt(var + _AG_EPS)
    xhat = (h - mu) / s
    return xhat * g + c, xhat, s


def _ag_bn_forward(h, g, c):
    mu = h.mean(axis=(0, 1))
    var = ((h - mu) ** 2).mean(axis=(0, 1))
    y, xhat, s = _ag_normalize(h, mu, var, g, c)
    return (y, mu, var), (xhat, s, g)


@jax.custom_vjp
def _ag_bn_train(h, g, c):
    r"""Training-mode batch normalization of ``h`` (N, L, C) over its first two axes:
    :math:`y=\hat x\,g+c`, :math:`\hat x=(h-\mu)/s`, :math:`s=\sqrt{\sigma^2+\epsilon}`, with the batch's mean
    :math:`\mu` and biased variance :math:`\sigma^2` (returned too). Its gradient is the closed form over the
    :math:`n=NL` entries of a channel,
    :math:`\bar h=\frac{g}{s}\big(\bar y-\overline{\bar y}-\hat x\,\overline{\bar y\hat x}\big)
    +\frac{\bar\mu}{n}+\frac{2\bar\sigma^2}{n}\,s\hat x`, :math:`\bar g=\sum\bar y\hat x`,
    :math:`\bar c=\sum\bar y` (bars: cotangents; overlines: channel means): two fused passes over the activations
    where reverse mode through the forward formula takes several. On one core (2026-12-03) the authors' CNN+BN value
    and gradient went from 138 to 112 ms and one seed's three 200-step runs from 78 to 56 CPU-s. The forward is
    :func:`_ag_normalize`, as in evaluation mode; the gradient differs from reverse mode's by float32 round-off."""
    return _ag_bn_forward(h, g, c)[0]


def _ag_bn_vjp(res, cot):
    xhat, s, g = res
    dy, dmu, dvar = cot
    n = xhat.shape[0] * xhat.shape[1]
    dc = dy.sum(axis=(0, 1))
    dg = (dy * xhat).sum(axis=(0, 1))
    dh = g / s * (dy - dc / n - xhat * (dg / n)) + dmu / n + (2 * dvar / n) * s * xhat
    return dh, dg, dc


_ag_bn_train.defvjp(_ag_bn_forward, _ag_bn_vjp)


def _ag_apply(name: str, p, x, stats=None):
    """Logits of an authors' Table 1 model and, for ``cnn1d_bn`` in training mode (``stats`` None), the two
    layers' batch statistics ``((mean, unbiased var), ...)`` (``()`` for the others and in evaluation mode)."""
    gelu = _gelu_erf  # the authors' F.gelu: PyTorch's default, the exact GELU
    if name == "transformer":
        h = _ag_dense(p["embed"], x)[:, None, :]  # one token per image
        q, k, v = jnp.split(_ag_dense(p["qkv"], _ag_layer_norm(p["norm1"], h)), 3, axis=-1)
        scores = q @ jnp.swapaxes(k, 1, 2) * (32 ** -0.5)  # (N, 1, 1): a softmax over one key
        h = h + _ag_dense(p["out"], jax.nn.softmax(scores, axis=-1) @ v)
        h = h + _ag_dense(p["ffn2"], gelu(_ag_dense(p["ffn1"], _ag_layer_norm(p["norm2"], h))))
        return _ag_dense(p["head"], h[:, 0]), ()
    if name == "mlp_ln3":
        h = x
        for i in (1, 2, 3):
            h = gelu(_ag_layer_norm(p[f"norm{i}"], _ag_dense(p[f"fc{i}"], h)))
        return _ag_dense(p["head"], h), ()
    h = x[:, :, None]  # cnn1d_bn: the 64 pixels as a sequence of one channel
    new = []
    for i in (1, 2):
        h, s = _ag_batch_norm(p[f"bn{i}"], _ag_conv(p[f"conv{i}"], h), None if stats is None else stats[i - 1])
        h = jax.nn.relu(h)
        new.append(s)
    return _ag_dense(p["head"], h.mean(axis=1)), (tuple(new) if stats is None else ())


def _ag_running(old, new):
    """PyTorch's running-statistics update ``(1 - m)·old + m·batch`` (unbiased batch variance), m = 0.1."""
    return jax.tree_util.tree_map(lambda o, b: (1 - _AG_BN_MOMENTUM) * o + _AG_BN_MOMENTUM * b, old, new)


def _ag_controller(name, p, g, g_norm, run, lr, x):
    r"""The controller's :math:`(\rho_a, s)`: :math:`\rho_a` by one JVP of the logits on ``x`` along
    :math:`-g/\|g\|` (batch normalization in evaluation mode with the running statistics ``run``) and
    :math:`s=\min(1,\rho_a/(\mathrm{lr}\,\|g\|))` (1 for a vanishing gradient)."""
    v = jax.tree_util.tree_map(lambda w: -w / jnp.where(g_norm > 0, g_norm, 1.0), g)
    a = jax.jvp(lambda q: _ag_apply(name, q, x, run if name == "cnn1d_bn" else None)[0], (p,), (v,))[1]
    rho = _rho_from_slopes(a, 1.0)
    tau = lr * g_norm
    scale = jnp.where(g_norm < 1e-12, 1.0, jnp.minimum(1.0, rho / jnp.where(tau > 0, tau, 1.0)))
    return jnp.asarray(rho, jnp.float32), jnp.asarray(scale, jnp.float32)


def _ag_uncontrolled(name, p, g, g_norm, run, lr, x):
    return jnp.asarray(jnp.nan, jnp.float32), jnp.asarray(1.0, jnp.float32)


def _ag_run(point, data, eta, factor, spike_step, mode, *, name, steps):
    r"""One seed of the authors' Table 1 run (traceable): full-batch Adam (optax ``scale_by_adam``, PyTorch's
    defaults), the learning rate ``eta·factor`` at step ``spike_step`` only. ``mode`` (an int32 shared by the runs of
    a sweep, not a grid axis): 0 plain, 1 clip (PyTorch's ``clip_grad_norm_(·, 1)``: g·min(1, 1/(||g|| + 1e-6))),
    2 controller (step size lr·s, :func:`_ag_controller`). One program serves the three modes: the clipping factor
    is 1 outside the clip mode (an exact product) and the controller's JVP is a ``lax.cond`` branch, a real branch
    because ``mode`` is not batched. Per step it records the training loss before the step, the test accuracy
    after it (a training-mode forward pass, as the authors' script evaluates, which also moves the running
    statistics), the scale s and :math:`\rho_a` (NaN outside the controller)."""
    xtr, ytr, xte, yte = data["x_train"], data["y_train"], data["x_test"], data["y_test"]
    params = _ag_init(name, jax.random.key(point["seed"]))
    bn = name == "cnn1d_bn"
    running = ((jnp.zeros(32, jnp.float32), jnp.ones(32, jnp.float32)),) * 2 if bn else ()
    adam = optax.scale_by_adam()

    def loss_fn(p):
        z, stats = _ag_apply(name, p, xtr)
        return _cross_entropy(z, ytr), stats

    def step(carry, i):
        p, s, run = carry
        (loss, stats), g = jax.value_and_grad(loss_fn, has_aux=True)(p)
        if bn:
            run = _ag_running(run, stats)
        g_norm = _tree_norm(g)
        lr = eta * jnp.where(i == spike_step, factor, 1.0)
        clip = jnp.where(mode == 1, jnp.minimum(1.0, 1.0 / (g_norm + 1e-6)), 1.0)
        g = jax.tree_util.tree_map(lambda w: w * clip, g)
        rho, scale = jax.lax.cond(mode == 2, functools.partial(_ag_controller, name),
                                  functools.partial(_ag_uncontrolled, name), p, g, g_norm, run, lr, xtr)
        u, s = adam.update(g, s, p)
        p = jax.tree_util.tree_map(lambda w, d: w - (lr * scale) * d, p, u)
        z_te, stats_te = _ag_apply(name, p, xte)
        if bn:
            run = _ag_running(run, stats_te)
        out = {"loss": loss, "test_acc": _accuracy(z_te, yte), "scale": scale, "rho_a": rho}
        return (p, s, run), out

    _, trace = jax.lax.scan(step, (params, adam.init(params), running), jnp.arange(steps, dtype=jnp.int32))
    return trace


def archgrid_runs(name: str, *, seeds, modes=MODES, steps: int = 200, eta: float = 0.015, factor: float = 1e4,
                  spike_step: int = 50) -> dict:
    r"""The authors' Table 1 runs of model ``name`` (:data:`ARCHGRID_NAMES`) on :func:`archgrid_digits`, for every
    (mode, seed): full-batch Adam, one step at ``eta·factor`` (step ``spike_step``; ``factor`` 1 for an unspiked
    run), see :func:`_ag_run`. Float32, as the authors'. One compiled program per (model, steps), whatever the mode,
    factor and spike step; the runs go one seed at a time (``chunk_size`` 1: on two CPU cores a vmap over the seeds
    cost ~1.5x their sequential time, its products of different weights being batched matrix products). Returns,
    mode-major: ``mode, seed (G,)``; ``loss`` (training loss before each step), ``test_acc`` (after each step),
    ``scale``, ``rho_a (G, steps)`` (``rho_a`` NaN outside the controller); ``final_acc``, ``final_loss (G,)`` and
    ``diverged (G,)`` -- Table 1's rule: the final loss exceeds 10 (or is not finite). The runs are reproducible
    on one machine, not across thread counts: XLA's CPU products split their float32 sums over the threads they
    have, and the post-spike runs amplify that round-off (a wrecked run's final accuracy moves by points)."""
    V.choice("name", name, ARCHGRID_NAMES)
    if isinstance(modes, str) or not hasattr(modes, "__iter__"):
        raise TypeError(f"modes: expected a sequence of mode names, got {type(modes).__name__}")
    codes = [MODES.index(V.choice("modes", m, MODES)) for m in modes]
    if not codes:
        raise ValueError("modes: expected at least one mode, got none")
    seeds = _seeds(seeds)
    steps = V.integer("steps", steps, low=1, high=100_000)
    eta = V.real("eta", eta, low=0.0, low_open=True)
    factor = V.real("factor", factor, low=0.0, low_open=True)
    spike_step = V.integer("spike_step", spike_step, low=-1, high=steps - 1)
    data = {k: jnp.asarray(v) for k, v in archgrid_digits().items()}
    parts = []
    for code in codes:
        out = run_grid(_ag_run, {"seed": jnp.asarray(seeds)}, data, jnp.asarray(eta, jnp.float32),
                       jnp.asarray(factor, jnp.float32), jnp.asarray(spike_step, jnp.int32),
                       jnp.asarray(code, jnp.int32), static={"name": name, "steps": steps}, chunk_size=1)
        out["mode"], out["seed"] = np.full(seeds.size, code, dtype=np.int32), np.asarray(seeds)
        parts.append(out)
    res = {k: np.concatenate([p_[k] for p_ in parts]) for k in parts[0]}
    res["final_acc"], res["final_loss"] = res["test_acc"][:, -1], res["loss"][:, -1]
    res["diverged"] = ~np.isfinite(res["final_loss"]) | (res["final_loss"] > 10)
    return res


def finite_median(values, diverged) -> tuple[float, int]:
    """Median of ``values`` over the runs not flagged ``diverged``, and the number of diverged runs.

    ``values``: one number per run (a diverged run's value may be anything, NaN included);
    ``diverged``: one boolean per run. ``(nan, n)`` when every run diverged.
    """
    vals = V.array("values", values, ndim=1, finite=False)
    flag = np.asarray(diverged)
    if flag.dtype != bool or flag.shape != vals.shape:
        raise ValueError(f"diverged: expected one boolean per run (shape {vals.shape}), got {flag.dtype} {flag.shape}")
    keep = vals[~flag]
    if keep.size and not np.all(np.isfinite(keep)):
        raise ValueError("values: a run not flagged diverged has a non-finite value")
    return (float(np.median(keep)) if keep.size else math.nan), int(flag.sum())
