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

Two families act on other objects and have their own rules (no state, no step):

* Muon's orthogonalization of a momentum *matrix* :math:`M = U\Sigma V^\top` (:func:`orthogonalize`): the exact
  polar factor :math:`UV^\top` (:func:`polar`) or :math:`k` quintic Newton--Schulz steps (:func:`newton_schulz`,
  the public reference code's coefficients :data:`theory.muon.NS5`), which maps each singular value through a
  polynomial instead of to 1 (tested against optax's ``orthogonalize_via_newton_schulz`` and a NumPy
  eigen-decomposition);
* Adam's direction with :math:`\epsilon = 0` (:func:`adam_direction`), :math:`\hat m/\sqrt{\hat v}` with 0 where
  :math:`\hat v = 0`, the form the threshold :math:`2(1+\beta_1)/(1-\beta_1)` is stated for.

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
from theory.muon import NS5

__all__ = ["METHODS", "MOMENTUM_METHODS", "Hyper", "transform", "init", "step", "ORTH_METHODS", "polar",
           "newton_schulz", "orthogonalize", "adam_direction"]

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


# ----------------------------------------------------------------------------------------------
# Muon's orthogonalization and Adam's epsilon-free direction

ORTH_METHODS = ("polar", "ns")


def polar(m):
    r"""The polar factor :math:`UV^\top` of a matrix :math:`M = U\Sigma V^\top` (thin SVD); 0 where :math:`M = 0`.

    Singular directions of a zero singular value keep weight 1 (``jnp.linalg.svd`` picks them): the polar factor of
    a rank-deficient matrix is not unique, and Muon's update is then only defined on the range of :math:`M`.
    """
    m = V.traceable("m", m, ndim=2)
    u, _, vt = jnp.linalg.svd(m, full_matrices=False)
    return jnp.where(jnp.any(m != 0), u @ vt, jnp.zeros_like(m))


def _ns(m, steps, coeffs):
    a, b, c = coeffs
    tall = m.shape[0] > m.shape[1]
    x = m.T if tall else m  # the Gram matrix A = X X^T is the smaller of the two
    norm = jnp.sqrt(jnp.sum(x * x))
    x = x / jnp.where(norm > 0, norm, 1.0)

    def body(_, x):
        g = x @ x.T
        return a * x + (b * g + c * g @ g) @ x

    x = jax.lax.fori_loop(0, steps, body, x)
    return x.T if tall else x


def newton_schulz(m, steps=5, coeffs=NS5):
    r"""``steps`` quintic Newton--Schulz steps :math:`X \leftarrow aX + (bA + cA^2)X`, :math:`A = XX^\top`, from
    :math:`X_0 = M/\|M\|_F` (0 for :math:`M = 0`).

    Each singular value moves separately, :math:`\sigma \mapsto p^{\circ k}(\sigma/\|M\|_F)` with
    :math:`p(s) = as + bs^3 + cs^5`, so the output's singular values lie in the polynomial's band
    (:func:`theory.muon.ns_band`), not at 1.

    Args:
      m: a real matrix ``(p, q)``.
      steps: the number of iterations, an integer >= 0 (may be traced, so a grid can map over it).
      coeffs: :math:`(a, b, c)`; the public reference code's :data:`theory.muon.NS5` by default.
    """
    m = V.traceable("m", m, ndim=2)
    if not V.is_tracer(steps):
        steps = V.integer("steps", steps, low=0, high=10_000)
    coeffs = tuple(V.real(f"coeffs[{i}]", c) for i, c in enumerate(V.array("coeffs", coeffs, shape=(3,))))
    return _ns(m, steps, coeffs)


def orthogonalize(m, method: str = "polar", ns_steps=5):
    r"""Muon's direction for a momentum matrix :math:`M`: :func:`polar` (``"polar"``) or ``ns_steps`` steps of
    :func:`newton_schulz` with the reference coefficients (``"ns"``).

    One Muon step with decoupled decay :math:`\lambda` and heavy-ball momentum :math:`\beta` is then
    :math:`M \leftarrow \beta M + G`, :math:`W \leftarrow (1-\eta\lambda)W - \eta\,\mathrm{orthogonalize}(M)`.
    """
    V.choice("method", method, ORTH_METHODS)
    if not V.is_tracer(ns_steps):
        ns_steps = V.integer("ns_steps", ns_steps, low=0, high=10_000)
    return polar(m) if method == "polar" else newton_schulz(m, ns_steps)


def adam_direction(m_hat, v_hat):
    r"""Adam's direction with :math:`\epsilon = 0`: :math:`\hat m/\sqrt{\hat v}` elementwise, 0 where :math:`\hat v = 0`.

    The guard keeps :math:`0/0` out (a coordinate whose gradient has been exactly 0 since the start has
    :math:`\hat m = \hat v = 0`), and ``sqrt`` never sees a negative or NaN argument from the masked branch.
    Arrays of one shape, traced or not (values are checked when concrete: finite, :math:`\hat v \ge 0`).
    """
    m_hat = V.traceable("m_hat", m_hat)
    v_hat = V.traceable("v_hat", v_hat, low=0.0)
    if m_hat.shape != v_hat.shape:
        raise ValueError(f"v_hat: expected the shape of m_hat {m_hat.shape}, got {v_hat.shape}")
    pos = v_hat > 0
    return jnp.where(pos, m_hat / jnp.sqrt(jnp.where(pos, v_hat, 1.0)), 0.0)
