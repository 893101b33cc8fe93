r"""The line loss at complex distances: Taylor coefficients and the analytic continuation.

Taylor coefficients of every per-sample line loss by ``jax.experimental.jet`` (custom-derivative calls
inlined first); the model continued to a complex step with the base point's decisions kept (so a piecewise
model continues its active piece); the zeros of the partition function (ghost zeros) located by winding
numbers, the margin to them, the singularities of attention, and the branch points of normalization layers.
"""
from __future__ import annotations

import functools
import math
from typing import Callable

import jax
import jax.extend as jex
import jax.numpy as jnp
import numpy as np
from jax.experimental import jet

import sims  # noqa: F401  (float64)
from theory import validate as V
from sims.softmax_radius.directions import _along
from sims.sweep import cpu_fast_compile
from sims.softmax_radius.models import (
    _applied, _apply_fn, _attention_exponents, _finite_logits, _inputs, _labels, _model_inputs, _tree, make_model
)

__all__ = [
    "continued_logits", "ghost_zeros", "partition_margin", "zeros_inside", "attention_singularities",
    "normalization_branch_point", "continued_line_loss", "line_taylor", "logit_line_taylor"
]


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


# the primitives whose complex zeros are square-root branch points of the continued model (normalization layers)
_ROOTS = ("sqrt", "rsqrt")


def _eval_continued(jaxpr, consts, real_args, cx_args, moving_args=None, record=None):
    """The continued evaluation (see above); with ``record`` (a list), the complex argument of every square root
    whose argument depends on t is appended to it, flattened, in the order of evaluation."""
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
        if record is not None and name in _ROOTS and mov[0]:
            record.append(jnp.ravel(cxs[0]))
        if inner is not None and inner in eqn.params:
            closed = eqn.params[inner]
            outs = _eval_continued(closed.jaxpr, closed.consts, res, cxs, mov, record)
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


def _continue(fn: Callable, t, record=None):
    """``fn(s)`` (a function of the real distance ``s``) continued to the complex distance ``t`` (a complex scalar),
    the piece active at s = 0 kept; ``record`` as :func:`_eval_continued`'s."""
    closed = jax.make_jaxpr(fn)(jnp.zeros(()))
    ((_, out),) = _eval_continued(closed.jaxpr, closed.consts, [jnp.zeros(())], [t.astype(jnp.complex128)],
                                  record=record)
    return out


def _continued_logits(apply, params, v, x, t, record=None):
    """Logits at the complex distance ``t`` (a complex scalar), continuing the piece active at t = 0."""
    return _continue(lambda s: apply(_along(params, v, s), x), t, record)


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

    return _continue(lambda s: row(_along(params, v, s), x, i), t)


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


# XLA's CPU fusion emitters compile the long elementwise chains of jet's series and of the complex-continued models
# slowly: without them (XLA's older loop emitters) and with one codegen partition, the order-16 series programs of
# the trained models compile in 55-60 % of the CPU time (mlp_ln 6.8 -> 4.6 s, attention 13.1 -> 7.3 s) and run as
# fast. The emitted arithmetic differs: results move by round-off (a Taylor coefficient by <= 2e-9 relative).
@functools.lru_cache(maxsize=None)
def _jitted(fn: Callable, static_argnums: tuple):
    """``jax.jit(fn)`` with :func:`sims.sweep.cpu_fast_compile`, built on first use (the backend is known by then)."""
    return jax.jit(fn, static_argnums=static_argnums, compiler_options=cpu_fast_compile(jax.default_backend()) or None)


def _picked_jit(*args):
    return _jitted(_continued_picked, (0, 6))(*args)


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

    def F(tt):
        # the shift s cancels in the secant quotient only if it is the same at both points: the sums, not F/s
        return _continued_rows(apply, params, v, x, rows, tt, sums=True)[0]

    t = _secant(F, start.astype(complex), iters, tol=1e-14)
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


def _continued_roots(apply, params, v, x, t):
    """Logits at the complex distance ``t`` and the arguments of every t-dependent square root of the continued
    model there (one flat complex vector; empty for a model without one)."""
    rec = []
    out = _continued_logits(apply, params, v, x, t, rec)
    return out, (jnp.concatenate(rec) if rec else jnp.zeros((0,), jnp.complex128))


_roots_at = jax.vmap(_continued_roots, in_axes=(None, None, None, None, 0))


def _roots_jit(*args):
    return _jitted(_roots_at, (0,))(*args)


def _secant(fn, t, iters: int, tol: float = 1e-15):
    """The secant method on ``fn`` (complex, elementwise over the vector ``t``) from the starts ``t``: each step
    moves at most half of ``|t|`` (a start far from the zero must not jump across the plane); the iteration ends when
    every step is below ``tol`` |t|, or after ``iters`` steps. A non-finite step (an overflow) leaves its element where
    it is."""
    t_prev = t * (1 + 1e-3)
    f_prev = fn(t_prev)
    for _ in range(iters):
        f = fn(t)
        with np.errstate(invalid="ignore", over="ignore"):  # an overflowed element: its step is dropped below
            den = f - f_prev
            step = np.where(np.abs(den) > 0, f * (t - t_prev) / np.where(den == 0, 1, den), 0)
            lim = 0.5 * np.abs(t)
            step = np.where(np.abs(step) > lim, step * lim / np.maximum(np.abs(step), 1e-300), step)
        step = np.where(np.isfinite(step), step, 0)
        t_prev, f_prev, t = t, f, t - step
        if np.all(np.abs(step) <= tol * np.abs(t)):
            break
    return t


def normalization_branch_point(apply: Callable, params, v, x, rows, *, start: float = 1.0, iters: int = 80) -> dict:
    r"""The nearest square-root branch point of the continued logits :math:`z_i(\theta_0+tv)` of each sample
    ``rows[j]``, located on the model's own continued evaluation (:func:`continued_logits`, the whole batch ``x``).

    A normalization layer divides by :math:`\sqrt{s(t)}`, :math:`s=\mathrm{Var}(h(t))+\epsilon` of its group (the
    features of one sample for a layer norm; the batch and pixels of one channel for a batch norm). Where :math:`s`
    vanishes the continued logits have a square-root branch point, :math:`z_{ik}\approx A_{ik}(t-t_*)^{-1/2}`, and
    nowhere else do they stop being analytic (the other operations of these models are polynomial along the line, a
    ReLU continuing its active piece). Three steps:

    1. *Candidates.* The continuation's interpreter records the argument :math:`s_m(t)` of every square root that
       depends on :math:`t`; each :math:`s_m` is analytic (a polynomial of degree 2 for the first normalized layer),
       and the secant method from :math:`t=i\,`\ ``start`` finds its zero :math:`t_m` in the upper half-plane (real
       models: the singularities come in conjugate pairs).
    2. *Singularities of the row.* Near a branch point :math:`t_*` of row :math:`i`

       .. math:: f_i(t)=1\Big/\sum_kz_{ik}(t)^2\approx\frac{t-t_*}{\sum_kA_{ik}^2}

       has a simple zero, and it is O(1) at a regular point. A candidate is a singularity of row :math:`i`
       when the residual :math:`|f_i(t_m)|\sum_k|z_{ik}(0)|^2` (round-off at a branch point, O(1) at a regular
       point) is below :math:`10^{-8}`; a layer norm's candidates from other samples are not (row :math:`i`'s logits
       do not depend on them).
    3. *Refinement.* From the nearest such candidate, the secant method on :math:`f_i` itself (a simple zero, so it
       converges to round-off, though :math:`f_i` carries a :math:`(t-t_*)^{3/2}` term from the principal branch);
       the point counts if it stays within :math:`10^{-6}|t_m|` of the candidate with the residual below
       :math:`10^{-8}`.

    Returns ``point`` (the nearest singularity of each row, :math:`\mathrm{Im}\ge0`; ``nan`` where no candidate is
    one), ``residual`` there, ``count`` (how many candidates are singularities of the row) and ``candidates`` (every
    zero of a square-root argument, :math:`\mathrm{Im}\ge0`). Poles of other divisions and logarithmic branch points
    are not searched: this locates the branch points of normalization layers. ``start``: the modulus of the
    candidates' starting point (positive); ``iters``: secant steps (each moves at most half of :math:`|t|`).
    """
    apply, params, v, x, rows = _validated_rows(apply, params, v, x, rows)
    start = V.real("start", start, low=0.0, low_open=True)
    iters = V.integer("iters", iters, low=1, high=1000)
    n_args = int(jax.eval_shape(functools.partial(_continued_roots, apply), params, v, x,
                                jnp.zeros((), jnp.complex128))[1].shape[0])
    nan = np.full(rows.size, complex(np.nan, np.nan))
    if n_args == 0:  # no square root moves with t: nothing to locate
        return {"point": nan, "residual": np.full(rows.size, np.nan), "count": np.zeros(rows.size, dtype=int),
                "candidates": np.zeros(0, dtype=complex)}
    size = max(n_args, rows.size)  # one compiled shape: longer requests go in chunks of it

    def evaluate(t):
        zs, ss = [], []
        for lo in range(0, t.size, size):
            part = t[lo:lo + size]
            pad = np.concatenate([part, np.full(size - part.size, part[-1])])
            z, s = _roots_jit(apply, params, v, x, jnp.asarray(pad, dtype=jnp.complex128))
            zs.append(np.asarray(z)[:part.size])
            ss.append(np.asarray(s)[:part.size])
        return np.concatenate(zs), np.concatenate(ss)

    # 1. the zero of every square root's argument: argument m evaluated at its own iterate
    own = np.arange(n_args)
    cand = _secant(lambda t: evaluate(t)[1][own, own], np.full(n_args, 1j * start), iters)
    cand = np.where(cand.imag < 0, cand.conj(), cand)
    # 2. which candidates are singularities of which row: 1/sum_k z_ik^2 at every candidate, for every row
    z0 = evaluate(np.zeros(1, dtype=complex))[0][0]
    scale = np.sum(np.abs(z0[rows]) ** 2, axis=1)

    def recip(t, rr):
        z = evaluate(t)[0][np.arange(t.size), rr]
        return 1.0 / np.sum(z * z, axis=-1)

    hit = (np.abs(recip(np.tile(cand, rows.size), np.repeat(rows, n_args))).reshape(rows.size, n_args)
           * scale[:, None] < 1e-8)
    dist = np.where(hit, np.abs(cand)[None, :], np.inf)
    best = np.argmin(dist, axis=1)
    found = np.isfinite(dist[np.arange(rows.size), best])
    # 3. the nearest one refined on the logits themselves
    t = _secant(lambda tt: recip(tt, rows), cand[best], iters)
    residual = np.abs(recip(t, rows)) * scale
    t = np.where(t.imag < 0, t.conj(), t)
    found &= (residual < 1e-8) & (np.abs(t - cand[best]) <= 1e-6 * np.abs(cand[best]))
    return {"point": np.where(found, t, nan), "residual": np.where(found, residual, np.nan),
            "count": hit.sum(axis=1), "candidates": cand}


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


def _line_taylor_jit(*args):
    return _jitted(_line_taylor, (0, 5))(*args)


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
