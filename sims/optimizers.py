r"""Optimizers as small pure update rules, shared by every simulator that needs them.

Each rule maps a gradient :math:`g`, its state and the parameters :math:`x` to a *direction*
:math:`d` (no step size), built from optax's gradient transformations where optax has one:

* ``sgd``: :math:`d = g` (identity);
* ``heavy_ball``: :math:`m \leftarrow \mu m + g`, :math:`d = m` (``optax.trace(mu)``);
* ``nesterov``: :math:`m \leftarrow \mu m + g`, :math:`d = g + \mu m` (``optax.trace(mu, nesterov=True)``);
* ``sign``: :math:`d = \mathrm{sign}(g)` (``optax.scale_by_sign()``);
* ``signum``: :math:`m \leftarrow \mu m + (1-\mu)g`, :math:`d = \mathrm{sign}(m)` (``optax.ema(mu, debias=False)``, then sign);
* ``lion``: :math:`d = \mathrm{sign}(\beta_1 m + (1-\beta_1)g)`, then :math:`m \leftarrow \beta_2 m + (1-\beta_2)g`
  (``optax.scale_by_lion(b1, b2)``);
* ``normalized``: :math:`m \leftarrow \mu m + (1-\mu)g`, :math:`d = m/\|m\|` (``optax.ema``, then an exact normalization).

One step (:func:`step`) with step size :math:`\eta`, *decoupled* weight decay :math:`\lambda_d` (AdamW
style, multiplied by :math:`\eta`) and *coupled* weight decay :math:`\lambda_c` (an L2 term added to the
gradient) is

.. math:: g \leftarrow g + \lambda_c x,\qquad x \leftarrow x - \eta\,(d + \lambda_d x).

With a constant step, ``heavy_ball`` is Polyak's :math:`x_{t+1} = x_t - \eta g_t + \mu(x_t - x_{t-1})`, and
``nesterov`` runs Nesterov's method in the look-ahead variable: the parameters are the points
:math:`y_t` where gradients are taken, and :math:`x_{t+1} = y_t - \eta g(y_t)` is the iterate.

Normalization is written out (:math:`m/\|m\|`, and 0 for :math:`m = 0`) because optax's
``normalize_by_update_norm`` adds a jitter to the norm; the two agree to that jitter (tested).
Hyperparameters may be traced values, so a sweep can map over them without recompiling. Every rule
is tested against the corresponding optax optimizer in ``tests/test_nqm.py``.
"""
from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import optax

import sims  # noqa: F401  (float64)
from theory import validate as V

__all__ = ["METHODS", "MOMENTUM_METHODS", "Hyper", "transform", "init", "step"]

METHODS = ("sgd", "heavy_ball", "nesterov", "sign", "signum", "lion", "normalized")
MOMENTUM_METHODS = ("heavy_ball", "nesterov", "signum", "lion", "normalized")  # methods that read Hyper.momentum


class Hyper(NamedTuple):
    """Hyperparameters of one run (floats or traced scalars).

    ``momentum``: :math:`\\mu` (heavy ball, Nesterov, Signum, normalized) or Lion's :math:`\\beta_1`;
    ``b2``: Lion's :math:`\\beta_2`; ``wd``: decoupled decay :math:`\\lambda_d`; ``coupled_wd``: L2 :math:`\\lambda_c`.
    """

    momentum: Any = 0.0
    b2: Any = 0.99
    wd: Any = 0.0
    coupled_wd: Any = 0.0


def _normalize() -> optax.GradientTransformation:
    """:math:`m/\\|m\\|` over the whole update tree, exactly (0 where the norm is 0).

    Computed as :math:`(m/s)/\\|m/s\\|` with :math:`s = \\max_i |m_i|`: squaring entries below about
    1e-154 underflows to 0 in float64, and a plain norm would then stop a normalized method dead.
    """

    def update(updates, state, params=None):
        del params
        leaves = jax.tree.leaves(updates)
        scale = jnp.max(jnp.stack([jnp.max(jnp.abs(u)) for u in leaves]))
        safe = jnp.where(scale > 0, scale, 1.0)
        scaled = jax.tree.map(lambda u: u / safe, updates)
        norm = optax.tree.norm(scaled)  # in [1, sqrt(size)] when scale > 0: no underflow, no overflow
        return jax.tree.map(lambda u: jnp.where(scale > 0, u / norm, 0.0 * u), scaled), state

    return optax.GradientTransformation(optax.init_empty_state, update)


def transform(method: str, hyper: Hyper = Hyper()) -> optax.GradientTransformation:
    """The optax transformation computing ``method``'s direction (see the module table); no step size, no decay."""
    V.choice("method", method, METHODS)
    mu = hyper.momentum
    if method == "sgd":
        return optax.identity()
    if method == "heavy_ball":
        return optax.trace(decay=mu)
    if method == "nesterov":
        return optax.trace(decay=mu, nesterov=True)
    if method == "sign":
        return optax.scale_by_sign()
    if method == "signum":
        return optax.chain(optax.ema(mu, debias=False), optax.scale_by_sign())
    if method == "lion":
        return optax.scale_by_lion(b1=mu, b2=hyper.b2)
    return optax.chain(optax.ema(mu, debias=False), _normalize())


def _params(name: str, x):
    """A parameter vector (or gradient) ``(d,)``, real and non-empty; finite when concrete (a tracer has no values)."""
    return V.traceable(name, x, ndim=1)


def _hyper(hyper) -> Hyper:
    if not isinstance(hyper, Hyper):
        raise TypeError(f"hyper: expected a sims.optimizers.Hyper, got {type(hyper).__name__} {hyper!r}")
    return hyper


def init(method: str, params, hyper: Hyper = Hyper()):
    """The initial state of ``method`` for ``params`` (a vector ``(d,)``; zero momentum buffers)."""
    return transform(method, _hyper(hyper)).init(_params("params", params))


def _direction(method: str, grad, state, params, hyper: Hyper = Hyper()):
    """``(d, state)``: the direction of ``method`` for gradient ``grad`` and the new state (no checks: see :func:`step`)."""
    return transform(method, hyper).update(grad, state, params)


def step(method: str, grad, state, params, eta, hyper: Hyper = Hyper()):
    r"""One update :math:`x \leftarrow x - \eta(d(g + \lambda_c x) + \lambda_d x)`; returns ``(params, state)``.

    ``params`` and ``grad`` are vectors of one shape ``(d,)``; ``state`` the state of :func:`init` for
    ``method`` and ``params``; ``eta`` a scalar >= 0 (traced or not) -- schedules pass :math:`\eta_t`
    per step. Shapes and types are checked at trace time, values only when concrete.
    """
    V.choice("method", method, METHODS)
    hyper = _hyper(hyper)
    params = _params("params", params)
    grad = _params("grad", grad)
    if grad.shape != params.shape:
        raise ValueError(f"grad: expected the shape of params {params.shape}, got {grad.shape}")
    eta = V.traceable_real("eta", eta, low=0.0)
    want = jax.tree.structure(jax.eval_shape(lambda x: transform(method, hyper).init(x), params))
    if jax.tree.structure(state) != want:
        raise TypeError(f"state: expected the state init({method!r}, params, hyper) returns ({want}), got {state!r}")
    g = jax.tree.map(lambda gi, xi: gi + hyper.coupled_wd * xi, grad, params)
    d, state = _direction(method, g, state, params, hyper)
    new = jax.tree.map(lambda xi, di: xi - eta * (di + hyper.wd * xi), params, d)
    return new, state
