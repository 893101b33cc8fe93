r"""Directions in parameter space and what a step along one does to the logits.

The traceable cores (cross-entropy, accuracy, tree norms, one JVP per sample); :func:`evaluate`,
:func:`normalize`, random and gradient directions; the directional derivatives :math:`a = J_z v`, the logit
curvature and the radius :math:`\rho_a(v) = \pi T/\max_x \Delta a(x; v)`; and the JAX evaluations used as
independent measurements of closed forms (tilted KL, the CGF increment, the logistic loss's Taylor
coefficients and inverse curvature).
"""
from __future__ import annotations

import functools
import math
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import jet

import sims  # noqa: F401  (float64)
from theory import validate as V
from sims.softmax_radius.models import (
    Model, _BLOWUP, _applied, _apply_fn, _finite_logits, _inputs, _key, _model, _model_inputs, _tree
)

__all__ = [
    "evaluate", "normalize", "random_directions", "gradient_direction", "directional_derivatives",
    "logit_curvature", "loss_curvature", "rho_a", "tilted_kl", "cgf_increment", "logistic_loss_taylor", "logistic_inverse_curvature"
]


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


def _loss_curvature(apply, params, v, x, y):
    def line(t):
        return _cross_entropy(apply(_along(params, v, t), x), y)

    def slope(t):
        return jax.jvp(line, (t,), (jnp.ones(()),))[1]

    return jax.jvp(slope, (jnp.zeros(()),), (jnp.ones(()),))[1]


@functools.partial(jax.jit, static_argnums=0)
def _loss_curvature_jit(apply, params, v, x, y):
    return jax.vmap(lambda d: _loss_curvature(apply, params, d, x, y))(v)


def loss_curvature(model: Model, params, directions, x, y) -> np.ndarray:
    r"""Directional curvature of the mean cross-entropy, :math:`\kappa(v)=v^\top Hv=\frac{d^2}{dt^2}
    \bar\ell(\theta+tv)\big|_{t=0}`, by two nested forward-mode ``jax.jvp`` calls through the model (no
    linearization of the logits), for ``directions`` stacked on axis 0 (as :func:`random_directions` returns them).
    The paper's Hessian step scale along :math:`v` is :math:`\tau_H=2/\kappa` (App. 5, eq. (43)). Returns ``(D,)``."""
    model = _model(model)
    params = _tree("params", params)
    x, y = _model_inputs(model.apply, params, x, y)
    lead = {np.shape(d)[:1] for d in jax.tree_util.tree_leaves(directions)}
    if len(lead) != 1 or () in lead:
        raise ValueError(f"directions: expected the directions stacked on axis 0 of every leaf, got leading shapes {lead}")
    for name, w in params.items():
        if np.shape(directions.get(name, np.zeros(0)))[1:] != np.shape(w):
            raise ValueError(f"directions: leaf {name!r} should have shape (D, *{np.shape(w)})")
    return np.asarray(_loss_curvature_jit(model.apply, params, directions, x, y))


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
