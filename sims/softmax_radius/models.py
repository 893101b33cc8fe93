r"""The models and data of the Taylor-radius simulators, and the argument checks they share.

Activations (ReLU, exact and tanh GELU, tanh; which ones have complex poles), the 8x8 digits, and the
models in plain JAX with flat dicts of parameters: linear softmax, MLP, MLP+LayerNorm, a small CNN (with
and without batch normalization) and a one-head attention model over the image rows; the exponents of the
attention model's inner partition functions, the MLP's directional logit derivatives written out by hand,
and the patch moments that give the batch-normalized CNN's statistics.
"""
from __future__ import annotations

import math
from functools import lru_cache
from typing import Any, Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

import sims  # noqa: F401  (float64)
from theory import validate as V

__all__ = ["MODEL_NAMES", "MODES", "digits", "Model", "make_model"]


MODEL_NAMES = ("linear", "mlp", "mlp_ln", "cnn", "cnn_bn", "attention")
MODES = ("plain", "clip", "controller")


def _gelu_erf(x):
    r"""Exact GELU :math:`x\Phi(x)=\tfrac x2\operatorname{erfc}(-x/\sqrt2)` (PyTorch's ``F.gelu`` default): entire, no
    complex singularity (the paper's App. 2.2)."""
    return jax.nn.gelu(x, approximate=False)


def _gelu_tanh(x):
    r"""The tanh approximation :math:`\tfrac x2(1+\tanh u)`, :math:`u=\sqrt{2/\pi}(x+0.044715x^3)` (``jax.nn.gelu``'s
    default): poles wherever :math:`\cosh u=0` (the paper's App. 2.4: it "reintroduces tanh poles")."""
    return jax.nn.gelu(x, approximate=True)


# "gelu" is the exact (erf) GELU, as in the paper's PyTorch models; "gelu_tanh" the approximation, a named variant
_ACTS = {"relu": jax.nn.relu, "gelu": _gelu_erf, "gelu_tanh": _gelu_tanh, "tanh": jnp.tanh}
# the activations with complex poles, and the argument u(h) whose cosh vanishes at them (tanh h = sinh h / cosh h)
_POLE_ARGUMENT = {"tanh": lambda h: h, "gelu_tanh": lambda h: math.sqrt(2 / math.pi) * (h + 0.044715 * h**3)}
# the activation of each model when make_model is given none: the paper's attention models use (exact) GELU
_DEFAULT_ACT = {"attention": "gelu"}
_BLOWUP = 1e150  # a finite value beyond this counts as diverged (squares would overflow float64)


# ----------------------------------------------------------------------------- validation
def _key(name: str, key: Any) -> Any:
    key = V.key(name, key)
    if key.shape != ():
        raise ValueError(f"{name}: expected one key (shape ()), got a batch of shape {key.shape}")
    return key


def _apply_fn(apply: Any) -> Callable:
    if not callable(apply):
        raise TypeError(f"apply: expected a callable apply(params, x) -> logits, got {type(apply).__name__}")
    return apply


def _tree(name: str, tree: Any, like: Any = None) -> Any:
    """A pytree of finite float arrays (same structure and shapes as ``like`` when given)."""
    leaves, treedef = jax.tree_util.tree_flatten(tree)
    if not leaves:
        raise ValueError(f"{name}: expected a pytree of arrays, got an empty one")
    out = []
    for leaf in leaves:
        arr = np.asarray(leaf)
        if arr.dtype.kind not in "iuf" or arr.dtype == bool:
            raise TypeError(f"{name}: expected arrays of real numbers, got dtype {arr.dtype}")
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"{name}: every value must be finite, got a non-finite entry")
        out.append(jnp.asarray(arr, dtype=jnp.float64))
    result = jax.tree_util.tree_unflatten(treedef, out)
    if like is not None:
        l_leaves, l_def = jax.tree_util.tree_flatten(like)
        if l_def != treedef or any(np.shape(a) != np.shape(b) for a, b in zip(l_leaves, out)):
            raise ValueError(f"{name}: expected the structure and shapes of params, got a different pytree")
    return result


def _inputs(x: Any) -> jax.Array:
    return jnp.asarray(V.array("x", x, ndim=2))


def _applied(apply: Callable, params: Any, x: jax.Array) -> tuple[int, int]:
    """The logits shape ``(N, n_classes)`` of ``apply(params, x)`` (traced, not run); errors name ``x``."""
    try:
        shape = jax.eval_shape(apply, params, x).shape
    except Exception as exc:  # noqa: BLE001 - any failure to apply the model is bad input here
        raise ValueError(f"x: apply(params, x) fails for x of shape {tuple(x.shape)}: {exc}") from None
    if len(shape) != 2 or shape[0] != x.shape[0]:
        raise ValueError(f"x: apply(params, x) must give logits of shape ({x.shape[0]}, n_classes), got {shape}")
    return shape


def _finite_logits(apply: Callable, params: Any, x: jax.Array) -> None:
    """A user's ``apply`` must give finite logits at ``params`` (one forward pass): NaN or infinite logits have
    no derivatives, series or continuation, and every quantity computed from them would be NaN, unflagged."""
    V.finite_output("apply", _logits_jit(apply, params, x), "as the logits apply(params, x)")


def _model_inputs(apply: Callable, params: Any, x: Any, y: Any) -> tuple[jax.Array, jax.Array]:
    """Validated inputs ``x`` and labels ``y`` (integers in 0..n_classes-1, one per row of x)."""
    x = _inputs(x)
    _, n_classes = _applied(apply, params, x)
    return x, _labels(y, x.shape[0], n_classes)


def _labels(y: Any, n: int, n_classes: int | None = None) -> jax.Array:
    raw = np.asarray(y) if not isinstance(y, (str, bytes)) and y is not None else None
    if raw is None or raw.dtype.kind not in "iu":
        raise TypeError(f"y: expected an integer array of class labels, got {type(y).__name__}")
    yy = V.array("y", raw, ndim=1, low=0, high=None if n_classes is None else n_classes - 1, dtype=np.int32)
    V.one_per_row("y", yy, "x", n)
    return jnp.asarray(yy)


def _model(model: Any) -> "Model":
    if not isinstance(model, Model):
        raise TypeError(f"model: expected a Model from make_model(...), got {type(model).__name__}")
    return model


def _data(data: Any) -> dict:
    if not isinstance(data, dict):
        raise TypeError(f"data: expected a dict with x_train, y_train, x_test, y_test, got {type(data).__name__}")
    missing = [k for k in ("x_train", "y_train", "x_test", "y_test") if k not in data]
    if missing:
        raise ValueError(f"data: missing keys {missing}")
    xtr, xte = V.array("data['x_train']", data["x_train"], ndim=2), V.array("data['x_test']", data["x_test"], ndim=2)
    return {"x_train": jnp.asarray(xtr), "y_train": _labels(data["y_train"], xtr.shape[0]),
            "x_test": jnp.asarray(xte), "y_test": _labels(data["y_test"], xte.shape[0])}


def _model_data(model: "Model", data: Any) -> dict:
    """Validated training data that ``model`` can classify (labels within its classes)."""
    model = _model(model)
    data = _data(data)
    params = jax.eval_shape(model.init, jax.random.key(0))
    for split in ("train", "test"):
        try:
            shape = jax.eval_shape(model.apply, params, data[f"x_{split}"]).shape
        except Exception as exc:  # noqa: BLE001 - any failure to apply the model is bad input here
            raise ValueError(f"data: model {model.name!r} cannot classify data['x_{split}'] of shape "
                             f"{tuple(data[f'x_{split}'].shape)}: {exc}") from None
        if not int(jnp.max(data[f"y_{split}"])) < shape[1]:
            raise ValueError(f"data: labels of data['y_{split}'] exceed the model's {shape[1]} classes")
    return data


def _seeds(seeds: Any) -> np.ndarray:
    raw = np.asarray(seeds)
    if raw.dtype.kind not in "iu":
        raise TypeError(f"seeds: expected integer seeds, got dtype {raw.dtype}")
    return V.array("seeds", raw, ndim=1, low=0, high=2**32 - 1, dtype=np.int64).astype(np.uint32)


# ----------------------------------------------------------------------------- data
def digits(seed: int = 0, test_fraction: float = 0.25) -> dict:
    """The 8x8 digits (1797 images, 10 classes), pixels scaled to [0, 1], split once by ``seed``.

    Returns ``x_train, y_train, x_test, y_test`` (NumPy, float64 and int32).
    """
    return _digits(V.integer("seed", seed, low=0), V.real("test_fraction", test_fraction, low=0.0, high=1.0,
                                                          low_open=True, high_open=True))


@lru_cache(maxsize=4)
def _digits(seed: int, test_fraction: float) -> dict:
    from sklearn.datasets import load_digits

    d = load_digits()
    x = np.asarray(d.data, dtype=np.float64) / 16.0
    y = np.asarray(d.target, dtype=np.int32)
    perm = np.random.default_rng(seed).permutation(len(y))
    n_test = int(round(test_fraction * len(y)))
    te, tr = perm[:n_test], perm[n_test:]
    return {"x_train": x[tr], "y_train": y[tr], "x_test": x[te], "y_test": y[te]}


# ----------------------------------------------------------------------------- models
class Model(NamedTuple):
    """A classifier: ``init(key) -> params`` (flat dict of arrays), ``apply(params, x[N, 64]) -> logits[N, 10]``.

    Models from :func:`make_model` are canonical (one object per configuration), so they can be
    static configuration of a sweep without recompiling.
    """

    name: str
    init: Callable
    apply: Callable


def _gaussians(key, shapes: list[tuple[int, ...]]) -> list[jax.Array]:
    """Independent standard normal arrays of the given shapes from one draw (one random-bits program
    to compile instead of one per array)."""
    sizes = [int(np.prod(s)) for s in shapes]
    flat = jax.random.normal(key, (sum(sizes),))
    return [part.reshape(s) for part, s in zip(jnp.split(flat, np.cumsum(sizes)[:-1]), shapes)]


def _layer_norm(h, gain, bias, eps=1e-5):
    mu = h.mean(-1, keepdims=True)
    var = ((h - mu) ** 2).mean(-1, keepdims=True)
    return (h - mu) / jnp.sqrt(var + eps) * gain + bias


def make_model(name: str, *, hidden=(128,), act: str | None = None) -> Model:
    """A small classifier for 8x8 images: ``linear``, ``mlp``, ``mlp_ln``, ``cnn``, ``cnn_bn``, ``attention``.

    ``cnn_bn`` normalizes the convolution's channels with the statistics of the batch it is applied
    to (training-mode batch normalization everywhere, no running averages), so its logits depend on
    the whole batch ``x``; evaluate it on a whole split at once.

    ``hidden`` (widths, positive integers) applies to the MLPs; ``act`` to the MLPs and the attention model:
    ``relu``, ``gelu`` (the exact, erf-based GELU, entire), ``gelu_tanh`` (its tanh approximation, with complex
    poles), ``tanh``. Default (None): ``gelu`` for ``attention`` (the paper's models use PyTorch's exact GELU),
    ``relu`` for the others. Parameters are flat dicts of arrays, so they can be cached as ``.npz`` and used as
    JVP tangents directly.
    """
    V.choice("name", name, MODEL_NAMES)
    act = _DEFAULT_ACT.get(name, "relu") if act is None else V.choice("act", act, tuple(_ACTS))
    if isinstance(hidden, (str, bytes)) or not hasattr(hidden, "__iter__"):
        raise TypeError(f"hidden: expected a tuple of positive widths, got {type(hidden).__name__}")
    widths = tuple(V.integer("hidden", h, low=1, high=100_000) for h in hidden)
    if not widths:
        raise ValueError("hidden: expected at least one hidden width, got ()")
    return _build_model(name, widths, act)


_ATT_D = 16  # the attention model's token width


def _attention_scores(p, x):
    r"""Tokens (image rows embedded, plus positions), attention scores :math:`s=qk^\top/\sqrt d` and values of
    the attention model, shapes (N, 8, d), (N, 8, 8), (N, 8, d)."""
    tok = x.reshape(-1, 8, 8) @ p["E"] + p["pos"]
    q, k, v = tok @ p["Q"], tok @ p["Kw"], tok @ p["V"]
    return tok, q @ jnp.swapaxes(k, 1, 2) / math.sqrt(_ATT_D), v


@lru_cache(maxsize=None)
def _attention_exponents(act: str = "gelu") -> Callable:
    r"""``exponents(p, x)``: the exponents of the inner partition functions of the attention model with activation
    ``act``, shape (N, 8, 8) for an activation without poles (``gelu``, ``relu``) and (N, 8 + 8·d, 8) for one with
    (``gelu_tanh``, ``tanh``).

    Rows 0..7 of a sample: the scores of one query token, whose partition function
    :math:`D_q=\sum_je^{s_{qj}}` is the attention softmax's denominator. For an activation with poles, the other
    rows are :math:`(u,-u)` padded with :math:`-\infty`, for every activation input :math:`h` with :math:`u(h)` the
    argument whose :math:`\cosh` vanishes at the poles (:data:`_POLE_ARGUMENT`: :math:`u=\sqrt{2/\pi}(h+0.044715h^3)`
    for the tanh-approximate GELU, :math:`u=h` for tanh): their partition function :math:`e^u+e^{-u}=2\cosh u`
    vanishes exactly at the poles of :math:`\tanh u`. Every singularity of the continued logits is a zero of one of
    them (a pole of the attention weights at a zero of :math:`D_q`; a pole of the activation at a zero of
    :math:`\cosh u`). The exact GELU is entire and the ReLU piece continued from t = 0 is linear: they add no row.
    One function object per ``act`` (a static argument of the compiled continuation)."""
    pole = _POLE_ARGUMENT.get(V.choice("act", act, tuple(_ACTS)))

    def exponents(p, x):
        tok, scores, v = _attention_scores(p, x)
        if pole is None:
            return scores
        h = tok + jax.nn.softmax(scores, axis=-1) @ v
        u = pole(h)
        u = u.reshape(u.shape[0], -1, 1)
        pair = jnp.concatenate([u, -u, jnp.full(u.shape[:2] + (6,), -jnp.inf)], axis=-1)
        return jnp.concatenate([scores, pair], axis=1)

    exponents.row = _one_sample(exponents)
    return exponents


@lru_cache(maxsize=None)
def _build_model(name: str, hidden: tuple[int, ...], act: str, n_in: int = 64, n_out: int = 10) -> Model:
    f = _ACTS[act]
    if name == "linear":
        def init(key):
            (w,) = _gaussians(key, [(n_in, n_out)])
            return {"W": 0.1 * w / math.sqrt(n_in), "b": jnp.zeros(n_out)}

        def apply(p, x):
            return x @ p["W"] + p["b"]

    elif name in ("mlp", "mlp_ln"):
        widths = (n_in,) + hidden + (n_out,)
        ln = name == "mlp_ln"

        def init(key):
            ws = _gaussians(key, list(zip(widths[:-1], widths[1:])))
            p = {}
            for i, w in enumerate(ws):  # fan-in scaled weights, zero biases
                p[f"W{i}"], p[f"b{i}"] = w / math.sqrt(widths[i]), jnp.zeros(widths[i + 1])
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

        if not ln and len(hidden) == 1:
            # an explicit forward-mode path for rho_a (deeper MLPs keep the generic JVP: with a hidden
            # layer between, the stacked layout needs extra copies and measured no faster)
            def slopes_t(p, v, x):
                return _mlp_slopes_t(p, v, x, f)

            apply.slopes_t = slopes_t

    elif name in ("cnn", "cnn_bn"):
        ch = 8
        bn = name == "cnn_bn"

        def init(key):
            kern, w = _gaussians(key, [(3, 3, 1, ch), (4 * 4 * ch, n_out)])
            p = {"K": kern / 3.0, "c": jnp.zeros(ch), "W": w / math.sqrt(4 * 4 * ch), "b": jnp.zeros(n_out)}
            if bn:
                p["g"] = jnp.ones(ch)
            return p

        def conv(p, x):
            return jax.lax.conv_general_dilated(x.reshape(-1, 8, 8, 1), p["K"], (1, 1), "SAME",
                                                dimension_numbers=("NHWC", "HWIO", "NHWC"))

        def head(p, h, mu, var):
            if bn:
                h = (h - mu) / jnp.sqrt(var + 1e-5) * p["g"]
            h = jax.nn.relu(h + p["c"])
            h = h.reshape(-1, 4, 2, 4, 2, ch).mean(axis=(2, 4))  # 2x2 average pool
            return h.reshape(h.shape[0], -1) @ p["W"] + p["b"]

        def apply(p, x):
            h = conv(p, x)
            mu = var = None
            if bn:  # per-channel statistics over the batch and the pixels
                mu = h.mean(axis=(0, 1, 2))
                var = ((h - mu) ** 2).mean(axis=(0, 1, 2))
            return head(p, h, mu, var)

        def row(p, x, i):
            mu = var = None
            if bn:  # the batch statistics from the patch moments (see _patch_stats), not from every sample
                mu, var = _patch_stats(x, p["K"])
            return head(p, conv(p, jax.lax.dynamic_slice_in_dim(x, i, 1)), mu, var)[0]

        apply.row = row

    else:  # attention: 8 tokens (image rows) of 8 pixels, one head, mean pooling
        d = _ATT_D

        def init(key):
            e, pos, q, k, v, w = _gaussians(key, [(8, d), (8, d), (d, d), (d, d), (d, d), (d, n_out)])
            return {"E": e / math.sqrt(8), "pos": 0.1 * pos, "Q": q / math.sqrt(d), "Kw": k / math.sqrt(d),
                    "V": v / math.sqrt(d), "W": w / math.sqrt(d), "b": jnp.zeros(n_out)}

        def apply(p, x):
            tok, scores, v = _attention_scores(p, x)
            h = tok + jax.nn.softmax(scores, axis=-1) @ v
            return f(h).mean(axis=1) @ p["W"] + p["b"]

    if not hasattr(apply, "row"):  # every model but cnn_bn maps each sample on its own
        apply.row = _one_sample(apply)
    return Model(name, init, apply)


def _one_sample(apply: Callable) -> Callable:
    """``row(p, x, i)``: row ``i`` of ``apply(p, x)`` for a function that maps every sample on its own,
    computed from sample ``i`` alone (what :func:`_continued_row` uses instead of the whole batch)."""
    def row(p, x, i):
        return apply(p, jax.lax.dynamic_slice_in_dim(x, i, 1))[0]

    return row


def _mlp_slopes_t(p, v, x, f):
    r"""Directional logit derivatives :math:`a=J_zv` of a one-hidden-layer MLP, transposed: ``(n_out, N)``.

    The forward-mode derivative that ``jax.jvp`` of the model computes, written as two explicit
    products in a unit-major layout (hidden units and classes first, samples last). With
    :math:`(V_0,c_0,V_1,c_1)` the direction's weights and biases,

    .. math:: [z;\dot z]=[W_0\,V_0]^\top x^\top+[b_0;c_0],\qquad
       (h,\dot h)=(f(z),f'(z)\dot z),\qquad a=[W_1;V_1]^\top[\dot h;h]+c_1,

    i.e. :math:`a=W_1^\top\dot h+V_1^\top h+c_1`. The input has no tangent, so the primal and
    tangent pre-activations are one product of the stacked weights with :math:`x`; the primal
    logits are never formed; the activation and its tangent (``jax.jvp`` of ``f``, so ReLU keeps
    its derivative rule at 0) are one fused elementwise pass that writes the stacked
    :math:`[\dot h;h]` the second product reads. The generic JVP instead runs four separate
    products (two per layer) and two elementwise passes. Same arithmetic, so the same ``a`` up to
    round-off.
    """
    zz = jnp.einsum("kih,ni->khn", jnp.stack([p["W0"], v["W0"]]), x) + jnp.stack([p["b0"], v["b0"]])[:, :, None]
    h, dh = jax.jvp(f, (zz[0],), (zz[1],))
    return jnp.einsum("khc,khn->cn", jnp.stack([p["W1"], v["W1"]]), jnp.stack([dh, h])) + v["b1"][:, None]


def _patch_stats(x, kernel):
    r"""Per-channel mean and variance, over the samples and pixels of ``x``, of the 3x3 'SAME' convolution of
    the images ``x`` with ``kernel`` (3, 3, 1, C), from the patch moments: with :math:`P` the 9 pixels of a
    neighbourhood, :math:`m=\overline P` and :math:`\Sigma=\overline{(P-m)(P-m)^\top}` (data only),
    :math:`\mu=m^\top k_c` and :math:`\sigma^2=k_c^\top\Sigma k_c` -- the same bilinear forms as the batch
    statistics of the convolved batch, without convolving every sample (and analytic in the kernel)."""
    img = jnp.pad(x.reshape(-1, 8, 8), ((0, 0), (1, 1), (1, 1)))
    patches = jnp.stack([img[:, i:i + 8, j:j + 8] for i in range(3) for j in range(3)], axis=-1).reshape(-1, 9)
    m = patches.mean(axis=0)
    centred = patches - m
    cov = centred.T @ centred / patches.shape[0]
    k = kernel.reshape(9, -1)
    return m @ k, jnp.sum(k * (cov @ k), axis=0)
_logits_jit = jax.jit(lambda apply, params, x: apply(params, x), static_argnums=0)
