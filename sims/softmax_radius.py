r"""JAX simulators for the cross-entropy Taylor radius (Sao 2026, "Ghosts of Softmax").

Vocabulary. A step moves the parameters along a unit direction :math:`v`,
:math:`\theta(t)=\theta_0+tv`; :math:`t` is the distance travelled. The learning rate is ``eta``
(:math:`\eta`): an update :math:`p=-\eta\,u` travels :math:`t=\|p\|`. The paper's *normalized
step* is :math:`r=t/\rho_a(v)` with :math:`\rho_a(v)=\pi/\max_x\Delta a(x;v)`; ``r`` means that
ratio and nothing else.

* :func:`directional_derivatives` -- logits :math:`z` and :math:`a=J_zv` per sample by one ``jax.jvp``;
* :func:`rho_a` -- the data-set bound :math:`\rho_a(v)=\pi T/\max_x\Delta a(x;v)`;
* :func:`line_taylor` -- Taylor coefficients of every per-sample line loss by
  ``jax.experimental.jet``, for any model (custom-derivative functions such as ``jax.nn.relu``
  are inlined first; see :func:`line_taylor`); :func:`logit_line_taylor` -- the same for logits
  that are exactly linear in :math:`t`;
* :func:`one_step_sweep` -- loss ratio, accuracy and the logit derivatives after one step
  :math:`t=r\rho_a(v)` for a grid of ``r`` and several directions (``run_grid`` over directions);
* :func:`run_adam` / :func:`train` -- Adam (optax ``scale_by_adam``) over minibatches in ``lax.scan``
  (given, or drawn from a key), optionally a
  one-step learning-rate spike, gradient clipping, or the controller
  :math:`s=\min(1,\rho_a(p/\|p\|)/\|p\|)` on the Adam update :math:`p`; :func:`spike_runs` and
  :func:`temperature_runs` are its grids (``run_grid`` over modes x seeds, temperatures x seeds);
* JAX evaluations used as independent measurements of closed forms: :func:`tilted_kl`,
  :func:`cgf_increment`, :func:`logistic_loss_taylor`, :func:`logistic_inverse_curvature`;
* models in plain JAX (parameters are flat dicts of arrays): linear softmax, MLP (ReLU/GELU/tanh),
  MLP+LayerNorm, a small CNN, a one-head attention model over the image rows;
* data: scikit-learn's 8x8 digits (shipped with the package, no download).

Everything runs in float64 (``import sims`` enables x64). **Divergence is data**: every training
run returns ``diverged`` (the loss or the parameters became non-finite or exceeded
:math:`10^{150}`) and ``diverged_step`` (the first such step, -1 if none); the run continues
and nothing raises. Statistics over runs are taken over the finite runs, with the number of
diverged runs reported beside them (:func:`finite_median`). NumPy references and benchmark
cases live in :mod:`sims.reference.softmax_radius`.
"""
from __future__ import annotations

import functools
import math
from functools import lru_cache
from typing import Any, Callable, NamedTuple

import jax
import jax.extend as jex
import jax.numpy as jnp
import numpy as np
import optax
from jax.experimental import jet

import sims  # noqa: F401  (float64)
from sims.sweep import cartesian, run_grid
from theory import validate as V

__all__ = [
    "MODEL_NAMES", "MODES", "digits", "Model", "make_model", "evaluate", "normalize", "random_directions",
    "gradient_direction", "directional_derivatives", "logit_curvature", "rho_a", "line_taylor", "logit_line_taylor",
    "continued_logits", "ghost_zeros", "attention_singularities", "zeros_inside", "continued_line_loss", "partition_margin", "one_step_sweep", "onset", "mode_code", "run_adam", "train", "spike_runs", "temperature_runs", "finite_median",
    "tilted_kl", "cgf_increment", "logistic_loss_taylor", "logistic_inverse_curvature",
    "ARCHGRID_NAMES", "archgrid_digits", "archgrid_runs",
]

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


# ----------------------------------------------------------------------------- traceable cores
def _cross_entropy(logits, y, temperature=1.0):
    """Mean cross-entropy of ``logits / temperature`` against integer labels ``y``."""
    z = logits / temperature
    return jnp.mean(jax.nn.logsumexp(z, axis=-1) - jnp.take_along_axis(z, y[:, None], axis=-1)[:, 0])


def _accuracy(logits, y):
    return jnp.mean(jnp.argmax(logits, axis=-1) == y)


def _tree_norm(t) -> jax.Array:
    return jnp.sqrt(sum(jnp.sum(x**2) for x in jax.tree_util.tree_leaves(t)))


def _normalize(t):
    n = _tree_norm(t)
    return jax.tree_util.tree_map(lambda x: x / jnp.where(n > 0, n, 1.0), t)


def _along(params, v, t):
    return jax.tree_util.tree_map(lambda w, d: w + t * d, params, v)


def _jvp(apply, params, v, x):
    return jax.jvp(lambda p: apply(p, x), (params,), (v,))


def _rho_from_slopes(a, temperature, class_axis=-1):
    spread = jnp.max(jnp.max(a, axis=class_axis) - jnp.min(a, axis=class_axis))
    return jnp.where(spread > 0, jnp.pi * temperature / jnp.where(spread > 0, spread, 1.0), jnp.inf)


def _rho_a(apply, params, v, x, temperature=1.0):
    # a model with an explicit forward-mode path (plain MLPs: apply.slopes_t, classes first) skips the
    # generic JVP; both give the same a up to round-off
    fast = getattr(apply, "slopes_t", None)
    if fast is not None:
        return _rho_from_slopes(fast(params, v, x), temperature, class_axis=0)
    return _rho_from_slopes(_jvp(apply, params, v, x)[1], temperature)


def _blown(tree) -> jax.Array:
    """True if any leaf is non-finite or beyond :data:`_BLOWUP`."""
    return jnp.any(jnp.stack([jnp.any(~jnp.isfinite(x) | (jnp.abs(x) > _BLOWUP))
                              for x in jax.tree_util.tree_leaves(tree)]))


# ----------------------------------------------------------------------------- directions
def evaluate(model: Model, params, x, y, temperature=1.0) -> tuple[float, float]:
    """Mean cross-entropy of ``logits / temperature`` and accuracy of ``model`` on ``(x, y)``."""
    model = _model(model)
    params = _tree("params", params)
    x, y = _model_inputs(model.apply, params, x, y)
    T = V.real("temperature", temperature, low=0.0, low_open=True)
    loss, acc = _evaluate_jit(model.apply, params, x, y, T)
    return float(loss), float(acc)


@functools.partial(jax.jit, static_argnums=0)
def _evaluate_jit(apply, params, x, y, temperature):
    z = apply(params, x)
    return _cross_entropy(z, y, temperature), _accuracy(z, y)


def normalize(tree):
    """``tree / ||tree||`` (global Euclidean norm over the pytree); a zero tree stays zero."""
    return _normalize(_tree("tree", tree))


def random_directions(key, params, n: int, *, max_bytes=None):
    """``n`` independent uniformly random unit directions (Gaussian, normalized), stacked on axis 0.

    ``max_bytes``: the allocation limit (:func:`theory.validate.byte_limit`) for the ``(n, P)`` draw and its pieces.
    """
    key = _key("key", key)
    params = _tree("params", params)
    n = V.integer("n", n, low=1, high=100_000)
    P = sum(int(np.size(x)) for x in jax.tree_util.tree_leaves(params))
    V.check_bytes({"n": n, "params": f"P = {P}"}, 3 * 8 * n * P, what="the (n, P) draw, its pieces and the "
                  "normalized directions", max_bytes=max_bytes)
    return _random_directions_jit(key, params, n)


@functools.partial(jax.jit, static_argnums=2)
def _random_directions_jit(key, params, n):
    # one Gaussian draw for all leaves, split afterwards: a single random-bits program to compile
    leaves, treedef = jax.tree_util.tree_flatten(params)
    sizes = [int(np.prod(x.shape)) for x in leaves]
    flat = jax.random.normal(key, (n, sum(sizes)))
    parts = jnp.split(flat, np.cumsum(sizes)[:-1], axis=1)
    raw = [part.reshape((n,) + x.shape) for part, x in zip(parts, leaves)]
    return jax.vmap(_normalize)(jax.tree_util.tree_unflatten(treedef, raw))


def gradient_direction(model: Model, params, x, y, temperature=1.0):
    r"""The unit descent direction :math:`v=-\nabla\ell/\|\nabla\ell\|` of the mean cross-entropy on ``(x, y)``."""
    model = _model(model)
    params = _tree("params", params)
    x, y = _model_inputs(model.apply, params, x, y)
    T = V.real("temperature", temperature, low=0.0, low_open=True)
    return _descent_jit(model.apply, params, x, y, T)


@functools.partial(jax.jit, static_argnums=0)
def _descent_jit(apply, params, x, y, temperature):
    g = jax.grad(lambda p: _cross_entropy(apply(p, x), y, temperature))(params)
    return jax.tree_util.tree_map(lambda t: -t, _normalize(g))


def directional_derivatives(apply: Callable, params, v, x):
    r"""Logits :math:`z=f_\theta(x)` and directional derivatives :math:`a=J_zv`, both ``(N, n)``,
    by one forward-mode ``jax.jvp`` (the cost of about two forward passes)."""
    apply = _apply_fn(apply)
    params = _tree("params", params)
    v, x = _tree("v", v, like=params), _inputs(x)
    _applied(apply, params, x)
    _finite_logits(apply, params, x)
    return _jvp_jit(apply, params, v, x)


_jvp_jit = jax.jit(_jvp, static_argnums=0)
_logits_jit = jax.jit(lambda apply, params, x: apply(params, x), static_argnums=0)


def _curvature(apply, params, v, x):
    def slope(t):
        return jax.jvp(lambda s: apply(_along(params, v, s), x), (t,), (jnp.ones(()),))[1]

    return jax.jvp(slope, (jnp.zeros(()),), (jnp.ones(()),))[1]


_curvature_jit = jax.jit(_curvature, static_argnums=0)


def logit_curvature(apply: Callable, params, v, x) -> jax.Array:
    r"""Second directional derivatives of the logits, :math:`z''=\frac{d^2}{dt^2}f_{\theta+tv}(x)\big|_{t=0}`,
    ``(N, n)``, by two nested forward-mode ``jax.jvp`` calls (piecewise models: the derivative of the piece active
    at :math:`t=0`; for a one-hidden-layer ReLU MLP that piece is quadratic in :math:`t`, so :math:`z''` is exact
    on the whole line). The curvature :math:`C` of the paper's Prop. App. 1.1 is its largest modulus per sample."""
    apply = _apply_fn(apply)
    params = _tree("params", params)
    v, x = _tree("v", v, like=params), _inputs(x)
    _applied(apply, params, x)
    _finite_logits(apply, params, x)
    return _curvature_jit(apply, params, v, x)


def rho_a(apply: Callable, params, v, x, temperature=1.0) -> jax.Array:
    r""":math:`\rho_a(v)=\pi T/\max_x(\max_ka_k-\min_ka_k)` over the samples ``x`` (``inf`` if
    every spread is 0). ``temperature`` :math:`T>0` rescales the logits to :math:`z/T`."""
    apply = _apply_fn(apply)
    params = _tree("params", params)
    v = _tree("v", v, like=params)
    T = V.real("temperature", temperature, low=0.0, low_open=True)
    x = _inputs(x)
    _applied(apply, params, x)
    _finite_logits(apply, params, x)
    return _rho_jit(apply, params, v, x, T)


_rho_jit = jax.jit(_rho_a, static_argnums=0)


# ----------------------------------------------------------------------------- Taylor coefficients
# ``jet`` ignores custom derivative rules anyway, but its handling of a custom_jvp call lets a
# tracer escape (UnexpectedTracerError for jax.nn.relu and every model that uses it). The cure is to
# trace the function to a jaxpr and evaluate it with custom_jvp / custom_vjp calls (and nested jit
# calls, which may contain them) replaced by their primal bodies.
_INLINE = {"custom_jvp_call": "call_jaxpr", "custom_vjp_call": "call_jaxpr", "pjit": "jaxpr", "jit": "jaxpr"}


def _eval_inlined(jaxpr, consts, *args):
    env = {}

    def read(var):
        return var.val if isinstance(var, jex.core.Literal) else env[var]

    for var, val in zip(jaxpr.constvars, consts):
        env[var] = val
    for var, val in zip(jaxpr.invars, args):
        env[var] = val
    for eqn in jaxpr.eqns:
        inputs = [read(v) for v in eqn.invars]
        inner = _INLINE.get(eqn.primitive.name)
        if inner is not None and inner in eqn.params:
            closed = eqn.params[inner]
            outputs = _eval_inlined(closed.jaxpr, closed.consts, *inputs)
        else:
            outputs = eqn.primitive.bind(*inputs, **eqn.params)
            if not eqn.primitive.multiple_results:
                outputs = [outputs]
        for var, val in zip(eqn.outvars, outputs):
            env[var] = val
    return [read(v) for v in jaxpr.outvars]


def _inline_custom_rules(fun: Callable) -> Callable:
    """``fun`` with every custom-derivative call replaced by its primal computation (same values)."""
    def inlined(*args):
        closed, shape = jax.make_jaxpr(fun, return_shape=True)(*args)
        flat = _eval_inlined(closed.jaxpr, closed.consts, *jax.tree_util.tree_leaves(args))
        return jax.tree_util.tree_unflatten(jax.tree_util.tree_structure(shape), flat)

    return inlined


# ----------------------------------------------------------------------------- analytic continuation
# A model evaluated at a complex distance t: every floating-point value carries its real value at the
# base point (t = 0) and its complex value at t. Decisions (comparisons, max/min, argmax, selects) are
# taken on the real values, so a piecewise model (ReLU) keeps the activation pattern of t = 0 and the
# result is the analytic continuation of the active piece -- the function whose Taylor series jet
# computes. Everything else is evaluated in complex arithmetic.
_DECIDE = {"gt", "ge", "lt", "le", "eq", "ne", "is_finite", "sign", "floor", "ceil", "round", "argmax", "argmin"}


def _cx(val, like_real):
    """The complex twin of a value: floating arrays become complex128, integers and booleans stay."""
    val = jnp.asarray(val)
    return val.astype(jnp.complex128) if jnp.issubdtype(val.dtype, jnp.floating) else val


def _split_bilinear(prim, fixed_first: bool, res, cxs, params):
    r"""A bilinear primitive (convolution) with one operand that does not depend on :math:`t` (a real array):
    :math:`B(u, c)=B(u,\operatorname{Re}c)+iB(u,\operatorname{Im}c)`, two real products instead of one complex
    product (the same sums; several times cheaper on CPU)."""
    def bind(other):
        return prim.bind(res[0], other, **params) if fixed_first else prim.bind(other, res[1], **params)

    c = cxs[1] if fixed_first else cxs[0]
    return jax.lax.complex(bind(jnp.real(c)), bind(jnp.imag(c)))


def _erf_host(name: str, z: np.ndarray) -> np.ndarray:
    """scipy's erf or erfc of a complex array (Faddeeva-function algorithms, relative accuracy ~1e-13)."""
    from scipy import special

    return np.asarray((special.erf if name == "erf" else special.erfc)(np.asarray(z, dtype=np.complex128)),
                      dtype=np.complex128)


def _complex_erf(name: str, z: jax.Array) -> jax.Array:
    r"""``erf`` or ``erfc`` of a complex array: XLA's ``erf``/``erfc`` take real arguments only, so the complex
    values come from scipy through a host callback (elementwise, so batching adds leading axes). The exact GELU
    :math:`\tfrac x2\operatorname{erfc}(-x/\sqrt2)` continues through it; erf is entire, so the continued GELU has
    no singularity of its own."""
    return jax.pure_callback(functools.partial(_erf_host, name), jax.ShapeDtypeStruct(z.shape, jnp.complex128), z,
                             vmap_method="expand_dims")


def _eval_continued(jaxpr, consts, real_args, cx_args, moving_args=None):
    env = {}
    # variables whose value depends on t (the others are the same at every t: data, parameters, constants)
    moving = {var for var, m in zip(jaxpr.invars, moving_args or [True] * len(jaxpr.invars)) if m}

    def read(var):
        if isinstance(var, jex.core.Literal):
            return var.val, _cx(var.val, True)
        return env[var]

    for var, val in zip(jaxpr.constvars, consts):
        env[var] = (val, _cx(val, True))
    for var, re, cx in zip(jaxpr.invars, real_args, cx_args):
        env[var] = (re, cx)
    for eqn in jaxpr.eqns:
        ins = [read(v) for v in eqn.invars]
        res, cxs = [i[0] for i in ins], [i[1] for i in ins]
        name = eqn.primitive.name
        inner = _INLINE.get(name)
        mov = [not isinstance(v, jex.core.Literal) and v in moving for v in eqn.invars]
        if any(mov):
            moving.update(eqn.outvars)
        if inner is not None and inner in eqn.params:
            closed = eqn.params[inner]
            outs = _eval_continued(closed.jaxpr, closed.consts, res, cxs, mov)
        else:
            re_out = eqn.primitive.bind(*res, **eqn.params)
            re_list = re_out if eqn.primitive.multiple_results else [re_out]
            if name in _DECIDE or not any(mov):  # a decision, or a value that does not depend on t: the real one
                cx_list = [_cx(r, True) if jnp.issubdtype(jnp.asarray(r).dtype, jnp.floating) else r for r in re_list]
            elif name in ("max", "min"):
                take = (res[0] >= res[1]) if name == "max" else (res[0] <= res[1])
                cx_list = [jnp.where(take, cxs[0], cxs[1])]
            elif name in ("reduce_max", "reduce_min"):
                axes = tuple(eqn.params["axes"])
                hit = res[0] == jnp.expand_dims(re_out, axes)
                cx_list = [jnp.sum(jnp.where(hit, cxs[0], 0), axis=axes) / jnp.sum(hit, axis=axes)]
            elif name == "select_n":
                cx_list = [jax.lax.select_n(res[0], *[_cx(c, True) for c in cxs[1:]])]
            elif name == "convert_element_type" and jnp.issubdtype(eqn.params["new_dtype"], jnp.floating):
                cx_list = [_cx(cxs[0], True)]
            elif name == "convert_element_type" or not any(
                    jnp.issubdtype(jnp.asarray(r).dtype, jnp.floating) for r in re_list):
                cx_list = list(re_list)  # integer or boolean results: the base point's
            elif name in ("erf", "erfc"):
                cx_list = [_complex_erf(name, cxs[0])]
            elif name == "conv_general_dilated" and mov[0] != mov[1] and eqn.params.get("preferred_element_type") is None:
                cx_list = [_split_bilinear(eqn.primitive, not mov[0], res, cxs, eqn.params)]
            else:
                params = dict(eqn.params)
                if "preferred_element_type" in params and params["preferred_element_type"] is not None:
                    params["preferred_element_type"] = jnp.complex128
                cx_out = eqn.primitive.bind(*cxs, **params)
                cx_list = cx_out if eqn.primitive.multiple_results else [cx_out]
            outs = list(zip(re_list, cx_list))
        for var, val in zip(eqn.outvars, outs):
            env[var] = val
    return [read(v) for v in jaxpr.outvars]


def _continued_logits(apply, params, v, x, t):
    """Logits at the complex distance ``t`` (a complex scalar), continuing the piece active at t = 0."""
    def at(s):
        return apply(_along(params, v, s), x)

    closed = jax.make_jaxpr(at)(jnp.zeros(()))
    ((_, out),) = _eval_continued(closed.jaxpr, closed.consts, [jnp.zeros(())], [t.astype(jnp.complex128)])
    return out


def continued_logits(apply: Callable, params, v, x, t) -> jax.Array:
    r"""Logits :math:`z(\theta_0+tv)` at complex distances ``t`` (1-d), shape ``(len(t), N, n)``.

    The model is evaluated in complex arithmetic with every decision (ReLU's sign, max, argmax)
    taken at :math:`t=0`: the analytic continuation of the piece of the model that is active at
    :math:`t=0`, i.e. the function whose Taylor series :func:`line_taylor` computes. Square roots and
    logarithms take their principal branch.
    """
    apply = _apply_fn(apply)
    params = _tree("params", params)
    v, x = _tree("v", v, like=params), _inputs(x)
    _applied(apply, params, x)
    _finite_logits(apply, params, x)
    tt = np.asarray(t)
    if tt.ndim != 1 or tt.dtype.kind not in "iufc" or not np.all(np.isfinite(tt)):
        raise ValueError(f"t: expected a 1-d array of finite (complex) distances, got {tt.dtype} {tt.shape}")
    return _continued_jit(apply, params, v, x, jnp.asarray(tt, dtype=jnp.complex128))


_continued_jit = jax.jit(jax.vmap(_continued_logits, in_axes=(None, None, None, None, 0)), static_argnums=0)


def _rows(rows, n: int) -> jax.Array:
    raw = np.asarray(rows)
    if raw.dtype.kind not in "iu":
        raise TypeError(f"rows: expected integer row indices, got dtype {raw.dtype}")
    return jnp.asarray(V.array("rows", raw, ndim=1, low=0, high=n - 1, dtype=np.int32))


def _chunk(n_rows: int) -> int:
    """Distances per compiled call of the continued model: 64, fewer for big batches (memory ~ chunk x batch)."""
    return int(max(4, min(64, 16384 // max(n_rows, 1))))


def _continued_row(apply, params, v, x, t, i):
    """Row ``i`` of the continued output at the complex distance ``t``: through ``apply.row(params, x, i)``
    where the function has one (every built-in model: sample ``i`` alone, and for the batch-normalized CNN the
    batch statistics, instead of the whole batch at every t), else row ``i`` of the whole batch's output."""
    row = getattr(apply, "row", None)
    if row is None:
        return _continued_logits(apply, params, v, x, t)[i]

    def at(s):
        return row(_along(params, v, s), x, i)

    closed = jax.make_jaxpr(at)(jnp.zeros(()))
    ((_, out),) = _eval_continued(closed.jaxpr, closed.consts, [jnp.zeros(())], [t.astype(jnp.complex128)])
    return out


def _partition_sums(z: jax.Array) -> tuple[jax.Array, jax.Array]:
    r"""Over the last axis of complex logits ``z``, with :math:`s` the largest real part:
    :math:`F e^{-s} = \sum_k e^{z_k - s}` (all a phase or a winding count needs) and
    :math:`\sum_k |e^{z_k - s}|`, the scale :math:`|F|` is measured against."""
    e = jnp.exp(z - jnp.max(z.real, axis=-1, keepdims=True))
    return jnp.sum(e, axis=-1), jnp.sum(jnp.abs(e), axis=-1)


def _continued_picked(apply, params, v, x, t, rows, sums=False):
    """Row ``rows[j]`` of the continued output at ``t[j]``, for every j, or with ``sums`` its
    :func:`_partition_sums`."""
    z = jax.vmap(functools.partial(_continued_row, apply, params, v, x))(t, rows)
    return _partition_sums(z) if sums else (z,)


_picked_jit = jax.jit(_continued_picked, static_argnums=(0, 6))


def _continued_rows(apply, params, v, x, rows: np.ndarray, t: np.ndarray, sums: bool = False):
    """Continued logits of row ``rows[j]`` at distance ``t[j]`` for every j, shape (len(t), n), or with
    ``sums`` the pair :func:`_partition_sums` over their last axis; padded fixed-size chunks
    (:func:`_chunk`) of one compiled program per model, batch shape, chunk size and ``sums``. The row is
    picked, and the sums taken, inside the compiled program: only what the caller needs is copied back (a
    winding count needs one complex number per distance, not every logit)."""
    out = []
    per_row = hasattr(apply, "row")
    small = _chunk(1 if per_row else x.shape[0])  # memory ~ chunk x the samples evaluated per t
    # one sample per distance: long requests (a winding count's circle of every row) go in chunks 8x larger,
    # eight times fewer calls (their Python overhead was a quarter of the time); the rest, and short requests,
    # in small ones (at most two shapes)
    big = 8 * small if per_row else small
    lo = 0
    while lo < t.size:
        size = big if t.size - lo >= big else small
        tc, rc = t[lo:lo + size], rows[lo:lo + size]
        lo += size
        pad = np.concatenate([tc, np.full(size - tc.size, tc[-1])])
        rpad = np.concatenate([rc, np.full(size - rc.size, rc[-1])]).astype(np.int32)
        z = _picked_jit(apply, params, v, x, jnp.asarray(pad, dtype=jnp.complex128), jnp.asarray(rpad), sums)
        out.append([np.asarray(a)[:tc.size] for a in z])
    parts = tuple(np.concatenate(a) for a in zip(*out))
    return parts if sums else parts[0]


def _validated_rows(apply, params, v, x, rows):
    apply = _apply_fn(apply)
    params = _tree("params", params)
    v, x = _tree("v", v, like=params), _inputs(x)
    _applied(apply, params, x)
    _finite_logits(apply, params, x)
    return apply, params, v, x, np.asarray(_rows(rows, x.shape[0]))


def ghost_zeros(apply: Callable, params, v, x, rows, t0, *, iters: int = 40) -> dict:
    r"""Zeros of the per-sample partition function :math:`F_i(t)=\sum_ke^{z_{ik}(t)}` in the complex
    step plane, by the secant method on the continued model (:func:`continued_logits`) from the starts
    ``t0`` (one complex number per row of ``rows``).

    Returns ``zero`` (complex, per row) and ``residual`` :math:`|F|/\sum_k|e^{z_k}|` there (round-off,
    about 1e-16, at a converged simple zero). ``x`` is the whole batch (batch-normalized models
    couple the samples); ``rows`` are indices into it. The iteration is NumPy around one compiled
    program (:func:`_chunk` distances per call); each step moves at most half of ``|t|``.
    """
    apply, params, v, x, rows = _validated_rows(apply, params, v, x, rows)
    start = np.asarray(t0)
    if start.shape != rows.shape or start.dtype.kind not in "fc" or not np.all(np.isfinite(start)):
        raise ValueError(f"t0: expected one finite complex start per row (shape {rows.shape}), got {start.shape}")
    iters = V.integer("iters", iters, low=1, high=1000)
    t_prev = start.astype(complex) * (1 + 1e-3)
    t = start.astype(complex)

    def F(tt):
        return _continued_rows(apply, params, v, x, rows, tt, sums=True)[0]

    # the shift s cancels in the secant quotient only if it is the same at both points: use the one at t
    f_prev = F(t_prev)
    for _ in range(iters):
        f = F(t)
        den = f - f_prev
        step = np.where(np.abs(den) > 0, f * (t - t_prev) / np.where(den == 0, 1, den), 0)
        lim = 0.5 * np.abs(t)
        step = np.where(np.abs(step) > lim, step * lim / np.maximum(np.abs(step), 1e-300), step)
        t_prev, f_prev, t = t, f, t - step
        if np.all(np.abs(step) <= 1e-14 * np.abs(t)):
            break
    f, total = _continued_rows(apply, params, v, x, rows, t, sums=True)
    return {"zero": t, "residual": np.abs(f) / total}


def partition_margin(apply: Callable, params, v, x, rows, t) -> np.ndarray:
    r""":math:`|F_i(t)|/\sum_k|e^{z_{ik}(t)}|` of the continued model for row ``rows[j]`` at complex ``t[j]``
    (0 at a zero of :math:`F_i`, 1 where every term has the same phase)."""
    apply, params, v, x, rows = _validated_rows(apply, params, v, x, rows)
    tt = np.asarray(t)
    if tt.shape != rows.shape or tt.dtype.kind not in "iufc" or not np.all(np.isfinite(tt)):
        raise ValueError(f"t: expected one finite (complex) distance per row (shape {rows.shape}), got {tt.shape}")
    f, total = _continued_rows(apply, params, v, x, rows, tt.astype(complex), sums=True)
    return np.abs(f) / total


def zeros_inside(apply: Callable, params, v, x, rows, radius, *, points: int = 256) -> dict:
    r"""Number of zeros of :math:`F_i` inside the circle :math:`|t|=` ``radius`` (one per row), by the
    argument principle on ``points`` equispaced points: the winding number of :math:`F_i` around 0.

    Valid when :math:`F_i` is entire (ReLU networks without normalization layers: their continued
    logits are polynomials in :math:`t`). Returns ``count`` and ``max_step`` (the largest phase step
    between neighbouring points, which must stay well below :math:`\pi` for the count to be right).
    """
    apply, params, v, x, rows = _validated_rows(apply, params, v, x, rows)
    rad = V.array("radius", radius, shape=rows.shape, low=0.0, low_open=True)
    points = V.integer("points", points, low=8, high=1 << 16)
    ts = (rad[:, None] * np.exp(2j * np.pi * np.arange(points) / points)[None, :]).ravel()
    f, _ = _continued_rows(apply, params, v, x, np.repeat(rows, points), ts, sums=True)
    count, steps = _winding(f.reshape(rows.size, points))
    return {"count": count, "max_step": steps.max(axis=1)}


def _winding(f: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Winding numbers around 0 of closed curves sampled along axis 1 of ``f`` (argument principle), and the
    absolute phase steps between samples (the count holds while every step stays well below pi)."""
    dphase = np.angle(np.roll(f, -1, axis=1) / f)
    return np.round(dphase.sum(axis=1) / (2 * np.pi)).astype(int), np.abs(dphase)


_LADDER = 12  # circles that bracket the nearest inner singularity before the bisection


def _inner_windings(params, v, x, rows, radius, points, act="gelu"):
    """Zeros inside |t| = radius[j] of each inner partition function of the attention model with activation ``act``
    (row rows[j]): winding numbers (rows, M) and the largest phase step of any of them (M = 8 attention
    denominators, plus 8·d cosh rows for an activation with poles)."""
    ts = (radius[:, None] * np.exp(2j * np.pi * np.arange(points) / points)[None, :]).ravel()
    # (rows·points, M): one partition function per inner softmax or cosh
    f, _ = _continued_rows(_attention_exponents(act), params, v, x, np.repeat(rows, points), ts, sums=True)
    count, steps = _winding(f.reshape(rows.size, points, -1))
    return count, steps.max(axis=(1, 2))


def attention_singularities(params, v, x, rows, radius, *, act: str = "gelu", points: int = 512,
                            steps: int = 20) -> dict:
    r"""The nearest singularity of the attention model's continued logits along ``v``, per sample ``rows[j]``,
    searched inside :math:`|t|\le` ``radius[j]``.

    The continued logits are analytic except where an inner partition function vanishes
    (:func:`_attention_exponents`): a zero of an attention denominator :math:`D_q(t)=\sum_je^{s_{qj}(t)}`
    (scores polynomial in :math:`t`, so :math:`D_q` is entire) or, for an activation ``act`` with poles
    (``gelu_tanh``, ``tanh``), a pole of its :math:`\tanh u(t)`; the exact GELU (``gelu``, the default) is entire
    and adds none. Inside
    the nearest singularity every inner partition function is analytic, so the argument principle counts the
    zeros of all of them on a circle: the first of 12 equispaced circles with a non-zero count brackets the
    nearest one, and bisection on "some count non-zero" gives its modulus (relative precision
    :math:`2^{-\text{steps}}` of the bracket), independently of the output softmax.

    Returns ``radius`` (inf where no singularity lies inside the given radius), ``denominator`` (True where
    the nearest one is a zero of an attention denominator, False for an activation pole), ``at`` (the point of that
    circle with Im t >= 0 where the inner partition functions come nearest to 0), and the certificate on the
    circle of 0.97 times the radius: ``count_in`` (zeros counted there, 0) and ``max_step`` (the largest phase
    step there, which must stay well below :math:`\pi` for the count to hold).
    """
    params = _tree("params", params)
    model = make_model("attention", act=act)
    if set(params) != set(model.init(jax.random.key(0))):
        raise ValueError(f"params: expected the attention model's parameters, got keys {sorted(params)}")
    _, params, v, x, rows = _validated_rows(model.apply, params, v, x, rows)
    hi = V.array("radius", radius, shape=rows.shape, low=0.0, low_open=True).astype(float)
    points = V.integer("points", points, low=16, high=1 << 14)
    steps = V.integer("steps", steps, low=1, high=60)
    # a ladder of circles first: a circle beyond a zero of D_q can enclose poles of u (essential singularities of
    # cosh u) or of an attention weight, where the count means nothing, so the bracket is the first circle with
    # any non-zero count
    top, lo = hi.copy(), np.zeros(rows.size)
    found = np.zeros(rows.size, dtype=bool)
    for k in range(1, _LADDER + 1):
        rad = top * k / _LADDER
        w, st = _inner_windings(params, v, x, rows, rad, points, act)
        new = ~found & (np.abs(w).sum(axis=1) > 0)
        hi = np.where(new, rad, hi)
        lo = np.where(found | new, lo, rad)
        found |= new
    hi = np.where(found, hi, top)
    for _ in range(steps):
        mid = 0.5 * (lo + hi)
        w, st = _inner_windings(params, v, x, rows, mid, points, act)
        inside = np.abs(w).sum(axis=1) > 0
        lo, hi = np.where(inside, lo, mid), np.where(inside, mid, hi)
    wind, _ = _inner_windings(params, v, x, rows, hi, points, act)
    # the certificate: no zero inside 0.97 of the radius, with phase steps well below pi on that circle
    w_in, max_step = _inner_windings(params, v, x, rows, 0.97 * hi, points, act)
    denominator = wind[:, :8].sum(axis=1) > 0
    phi = np.linspace(0, np.pi, 257)
    t = hi[:, None] * np.exp(1j * phi)[None, :]
    f, total = _continued_rows(_attention_exponents(act), params, v, x, np.repeat(rows, phi.size), t.ravel(),
                               sums=True)
    margin = (np.abs(f) / total).min(axis=-1).reshape(t.shape)
    at = t[np.arange(rows.size), np.argmin(margin, axis=1)]
    return {"radius": np.where(found, hi, np.inf), "denominator": denominator & found,
            "at": np.where(found, at, np.nan), "count_in": np.abs(w_in).sum(axis=1), "max_step": max_step}


def continued_line_loss(apply: Callable, params, v, x, y, rows, t) -> np.ndarray:
    r"""Per-sample cross-entropy of the continued model (:func:`continued_logits`) at real distances:
    row ``rows[j]`` at ``t[j]``. Equal to the real line loss as long as no ReLU switches between 0 and
    ``t``; beyond a switch it is the analytic function whose Taylor series :func:`line_taylor` computes."""
    apply, params, v, x, rows = _validated_rows(apply, params, v, x, rows)
    y = _labels(y, x.shape[0])
    tt = V.array("t", t, shape=rows.shape)
    z = np.real(_continued_rows(apply, params, v, x, rows, tt.astype(complex)))
    m = z.max(axis=1, keepdims=True)
    return m[:, 0] + np.log(np.exp(z - m).sum(axis=1)) - z[np.arange(rows.size), np.asarray(y)[rows]]


def _line_taylor(apply, params, v, x, y, order):
    def per_sample(t):
        z = apply(_along(params, v, t), x)
        return jax.nn.logsumexp(z, axis=-1) - jnp.take_along_axis(z, y[:, None], axis=-1)[:, 0]

    series_in = [jnp.ones(())] + [jnp.zeros(())] * (order - 1)
    primal, series = jet.jet(_inline_custom_rules(per_sample), (jnp.zeros(()),), (series_in,))
    fact = jnp.asarray([math.factorial(n) for n in range(1, order + 1)], dtype=jnp.float64)
    return jnp.concatenate([primal[:, None], jnp.stack(series, axis=1) / fact], axis=1)


_line_taylor_jit = jax.jit(_line_taylor, static_argnums=(0, 5))


def line_taylor(apply: Callable, params, v, x, y, order: int) -> jax.Array:
    r"""Taylor coefficients :math:`c_0..c_N` of every per-sample line loss
    :math:`\ell_i(t)=\mathrm{CE}(f_{\theta+tv}(x_i),y_i)` about :math:`t=0`, shape ``(N_samples, order+1)``.

    ``jax.experimental.jet`` propagates the truncated series of :math:`t` through the model and
    the loss (its outputs are derivatives, divided here by :math:`n!`). Custom-derivative
    functions (``jax.nn.relu``, ``jax.nn.softmax``, ...) are inlined to their primal computation
    first, so every model works. For piecewise-linear models the coefficients are those of the
    active linear piece; exactly at a kink (a ReLU input equal to 0 at :math:`t=0` with a
    non-zero derivative) the line loss is not analytic and no series describes it. ``order``:
    1..64 (jet's cost grows like ``order**2``).
    """
    apply = _apply_fn(apply)
    params = _tree("params", params)
    v = _tree("v", v, like=params)
    x, y = _model_inputs(apply, params, x, y)
    _finite_logits(apply, params, x)
    order = V.integer("order", order, low=1, high=64)
    return _line_taylor_jit(apply, params, v, x, y, order)


def _logit_linear_apply(p, zt):
    """Logits ``z + t a`` for rows ``zt = [z | a]`` (a model whose only parameter is the distance ``t``)."""
    n = zt.shape[1] // 2
    return zt[:, :n] + p["t"] * zt[:, n:]


def logit_line_taylor(z, a, y, order: int) -> jax.Array:
    r"""Taylor coefficients of :math:`\ell_i(t)=\log\sum_ke^{z_{ik}+a_{ik}t}-z_{iy_i}-a_{iy_i}t` (logits
    exactly linear in :math:`t`) by ``jet`` through :func:`line_taylor`; ``z``, ``a``: ``(N, n)``,
    ``y``: ``(N,)`` labels; returns ``(N, order+1)``."""
    zz = V.array("z", z, ndim=2)
    aa = V.array("a", a, ndim=2)
    if aa.shape != zz.shape:  # paired entry by entry: either may be the wrong one
        raise ValueError(f"z, a: expected slopes a of the logits' shape {zz.shape}, got {aa.shape}")
    y = _labels(y, zz.shape[0], zz.shape[1])
    order = V.integer("order", order, low=1, high=64)
    zt = jnp.asarray(np.concatenate([zz, aa], axis=1))
    return _line_taylor_jit(_logit_linear_apply, {"t": jnp.zeros(())}, {"t": jnp.ones(())}, zt, y, order)


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
               eval_every_step, track_radius):
    r"""Adam from ``params`` over the minibatch index rows ``batches`` (traceable; see :func:`run_adam`)."""
    xtr, ytr = data["x_train"], data["y_train"]
    xte, yte = data["x_test"], data["y_test"]
    adam = optax.scale_by_adam()

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
        rho = _rho_a(model.apply, p, _normalize(upd), xtr, temperature) if track_radius else jnp.nan
        ctrl = jnp.minimum(1.0, rho / jnp.where(norm > 0, norm, 1.0))
        scale = jnp.where(mode == 2, ctrl, 1.0)
        p = jax.tree_util.tree_map(lambda w, d: w + scale * d, p, upd)
        bad = ~jnp.isfinite(loss) | _blown(p)
        first_bad = jnp.where((first_bad < 0) & bad, i, first_bad)
        out = {"loss": loss, "r": norm / rho, "scale": scale}
        if eval_every_step:
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
                eval_every_step, track_radius):
    r"""Initialization and minibatches from ``key``, then :func:`_adam_core` (traceable; see :func:`train`)."""
    k_init, k_batch = jax.random.split(key)
    batches = jax.random.randint(k_batch, (steps, batch), 0, data["x_train"].shape[0])
    return _adam_core(model.init(k_init), data, batches, eta, spike_factor, spike_step, clip_norm, temperature, mode,
                      model=model, eval_every_step=eval_every_step, track_radius=track_radius)


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


def _spike_run(point, data, eta, factor, spike_step, *, model, steps, batch):
    """One (mode, seed) run of the spike study; every mode of a seed shares its key (a paired design)."""
    out = _train_core(jax.random.key(point["seed"]), data, eta, factor, spike_step, jnp.asarray(1.0), jnp.asarray(1.0),
                      point["mode"], model=model, steps=steps, batch=batch, eval_every_step=True, track_radius=True)
    return {k: out[k] for k in ("test_acc", "r", "scale", "loss", "diverged", "diverged_step")}


def spike_runs(model: Model, data: dict, *, modes=MODES, seeds, eta: float, factor: float, steps: int = 200,
               batch: int = 64, spike_step: int = 50, chunk_size: int | None = None, max_bytes=None) -> dict:
    r"""Adam runs with a one-step learning-rate spike (``eta * factor`` at ``spike_step``) for every
    (mode, seed) pair (mode-major order), one compilation for the whole ``run_grid``.

    All modes of one seed share the initialization and the minibatches (a paired comparison).
    ``chunk_size`` (None: one chunk) fixes the compiled grid size (see :func:`one_step_sweep`).
    Returns ``mode (G,)`` (codes, see :func:`mode_code`), ``seed (G,)``, ``test_acc (G, steps)``,
    ``final_acc (G,)``, ``r``, ``scale``, ``loss (G, steps)``, ``diverged (G,)``, ``diverged_step (G,)``.
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
    grid, _ = cartesian(mode=codes, seed=seeds)
    out = run_grid(_spike_run, grid, data, jnp.asarray(eta), jnp.asarray(factor), jnp.asarray(spike_step, jnp.int32),
                   static={"model": model, "steps": steps, "batch": batch}, **_chunking(chunk_size))
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
    :math:`y_{lo}=b_o+\sum_{j,c}W_{jco}h_{l+j-1,c}`, as one product of the three shifted copies (im2col)."""
    L = h.shape[1]
    hp = jnp.pad(h, ((0, 0), (1, 1), (0, 0)))
    patches = jnp.concatenate([hp[:, j:j + L, :] for j in range(3)], axis=-1)
    return patches @ p["W"].reshape(-1, p["W"].shape[-1]) + p["b"]


def _ag_batch_norm(p, h, stats):
    """BatchNorm1d over the samples and positions of ``h`` (N, L, C): with ``stats`` None the batch's mean and
    biased variance (training mode; also returns the unbiased variance the running average takes), else the
    running ``(mean, var)`` (evaluation mode)."""
    if stats is None:
        mu = h.mean(axis=(0, 1))
        var = ((h - mu) ** 2).mean(axis=(0, 1))
        n = h.shape[0] * h.shape[1]
        new = (mu, var * n / (n - 1))
    else:
        (mu, var), new = stats, None
    return (h - mu) / jnp.sqrt(var + _AG_EPS) * p["g"] + p["c"], new


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


def _ag_run(point, data, eta, factor, spike_step, *, name, steps, mode):
    r"""One seed of the authors' Table 1 run (traceable): full-batch Adam (optax ``scale_by_adam``, PyTorch's
    defaults), the learning rate ``eta·factor`` at step ``spike_step`` only. ``mode`` (static): 0 plain, 1 clip
    (PyTorch's ``clip_grad_norm_(·, 1)``: g·min(1, 1/(||g|| + 1e-6))), 2 controller (step size lr·s with
    :math:`s=\min(1,\rho_a/(\mathrm{lr}\,\|g\|))`, :math:`\rho_a` by one JVP of the training logits along
    :math:`-g/\|g\|`, batch normalization in evaluation mode with the running statistics). Per step it records
    the training loss before the step, the test accuracy after it (a training-mode forward pass, as the authors'
    script evaluates, which also moves the running statistics), the scale s and :math:`\rho_a`."""
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
        if mode == 1:
            g = jax.tree_util.tree_map(lambda w: w * jnp.minimum(1.0, 1.0 / (g_norm + 1e-6)), g)
        if mode == 2:
            v = jax.tree_util.tree_map(lambda w: -w / jnp.where(g_norm > 0, g_norm, 1.0), g)
            a = jax.jvp(lambda q: _ag_apply(name, q, xtr, run if bn else None)[0], (p,), (v,))[1]
            rho = _rho_from_slopes(a, 1.0)
            tau = lr * g_norm
            scale = jnp.where(g_norm < 1e-12, 1.0, jnp.minimum(1.0, rho / jnp.where(tau > 0, tau, 1.0)))
        else:
            rho, scale = jnp.nan, 1.0
        u, s = adam.update(g, s, p)
        p = jax.tree_util.tree_map(lambda w, d: w - (lr * scale) * d, p, u)
        z_te, stats_te = _ag_apply(name, p, xte)
        if bn:
            run = _ag_running(run, stats_te)
        out = {"loss": loss, "test_acc": _accuracy(z_te, yte), "scale": jnp.asarray(scale, jnp.float32),
               "rho_a": jnp.asarray(rho, jnp.float32)}
        return (p, s, run), out

    _, trace = jax.lax.scan(step, (params, adam.init(params), running), jnp.arange(steps, dtype=jnp.int32))
    return trace


def archgrid_runs(name: str, *, seeds, modes=MODES, steps: int = 200, eta: float = 0.015, factor: float = 1e4,
                  spike_step: int = 50) -> dict:
    r"""The authors' Table 1 runs of model ``name`` (:data:`ARCHGRID_NAMES`) on :func:`archgrid_digits`, for every
    (mode, seed): full-batch Adam, one step at ``eta·factor`` (step ``spike_step``; ``factor`` 1 for an unspiked
    run), see :func:`_ag_run`. Float32, as the authors'. One compiled program per (model, mode, steps); the seeds
    of a mode are vmapped. Returns, mode-major: ``mode, seed (G,)``; ``loss`` (training loss before each step),
    ``test_acc`` (after each step), ``scale``, ``rho_a (G, steps)`` (``rho_a`` NaN outside the controller);
    ``final_acc``, ``final_loss (G,)`` and ``diverged (G,)`` -- Table 1's rule: the final loss exceeds 10 (or is
    not finite)."""
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
                       static={"name": name, "steps": steps, "mode": code})
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


# ----------------------------------------------------------------------------- closed-form measurements
def _kl_pair(logp, a, t):
    lq = jax.nn.log_softmax(logp + a * t)
    q = jnp.exp(lq)
    p = jnp.exp(logp)
    # classes with p = 0 have q = 0 and contribute their limit 0 (kept out of the logarithms)
    fwd = jnp.sum(jnp.where(p > 0, p * (logp - jnp.where(p > 0, lq, 0.0)), 0.0))
    rev = jnp.sum(jnp.where(p > 0, q * (lq - jnp.where(p > 0, logp, 0.0)), 0.0))
    return fwd, rev


_kl_jit = jax.jit(jax.vmap(_kl_pair, in_axes=(None, None, 0)))


def _prob_slopes_t(p, a, t):
    pp = V.array("p", p, ndim=1, low=0.0)
    if not abs(pp.sum() - 1.0) <= 1e-9 * pp.size:
        raise ValueError(f"p: expected probabilities summing to 1, got sum {pp.sum():.12g}")
    aa = V.array("a", a, shape=pp.shape)
    tt = V.array("t", t, ndim=1)
    with np.errstate(divide="ignore"):
        return jnp.asarray(np.log(pp)), jnp.asarray(aa), jnp.asarray(tt)


def tilted_kl(p, a, t) -> dict:
    r"""Both KL divergences of the tilted family :math:`p_k(t)\propto p_ke^{a_kt}` evaluated in JAX
    (``log_softmax``), for every ``t`` of a 1-d array: ``{"forward": KL(p(0)||p(t)), "reverse":
    KL(p(t)||p(0))}``. Zero probabilities stay zero and contribute nothing."""
    logp, aa, tt = _prob_slopes_t(p, a, t)
    fwd, rev = _kl_jit(logp, aa, tt)
    return {"forward": np.asarray(fwd), "reverse": np.asarray(rev)}


def _cgf_increment(logp, a, t):
    def K(s):
        return jax.nn.logsumexp(logp + a * s)

    return K(t) - K(0.0) - t * jax.grad(K)(0.0)


_cgf_jit = jax.jit(jax.vmap(_cgf_increment, in_axes=(None, None, 0)))


def cgf_increment(p, a, t) -> np.ndarray:
    r""":math:`K(t)-K(0)-tK'(0)` with :math:`K(t)=\log\sum_kp_ke^{a_kt}`, :math:`K'` by ``jax.grad``,
    for every ``t`` of a 1-d array (the expression the paper's eq. (26) writes for a KL)."""
    logp, aa, tt = _prob_slopes_t(p, a, t)
    return np.asarray(_cgf_jit(logp, aa, tt))


def _logistic(x):
    return jnp.log1p(jnp.exp(-x))


@functools.partial(jax.jit, static_argnums=1)
def _logistic_taylor(delta, order):
    series_in = [jnp.ones(())] + [jnp.zeros(())] * (order - 1)
    primal, series = jet.jet(_logistic, (delta,), (series_in,))
    fact = jnp.asarray([math.factorial(n) for n in range(1, order + 1)], dtype=jnp.float64)
    return jnp.concatenate([primal[None], jnp.stack(series) / fact])


def logistic_loss_taylor(delta: float, order: int) -> np.ndarray:
    r"""Taylor coefficients :math:`c_0..c_N` of :math:`f(\delta+t)=\log(1+e^{-\delta-t})` about
    :math:`t=0` by ``jet`` (``order`` N in 1..64, :math:`|\delta|\le 30`)."""
    d = V.real("delta", delta, low=-30.0, high=30.0)
    order = V.integer("order", order, low=1, high=64)
    return np.asarray(_logistic_taylor(jnp.asarray(d), order))


_logistic_curvature = jax.jit(jax.grad(jax.grad(_logistic)))


def logistic_inverse_curvature(delta: float) -> float:
    r""":math:`1/f''(\delta)` for :math:`f(x)=\log(1+e^{-x})`, :math:`f''` by ``jax.grad`` twice
    (:math:`|\delta|\le 700`)."""
    d = V.real("delta", delta, low=-700.0, high=700.0)
    return 1.0 / float(_logistic_curvature(jnp.asarray(d)))
