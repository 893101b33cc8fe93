r"""The test problems of the ``sde`` simulators and the shared argument checks.

The 1-D toy losses (quadratic, quartic, :math:`2\cosh x`, log-cosh) and the small tanh MLP on fixed
regression data, the toys' first and second derivatives by autodiff, and the one-step descent edge: the
largest multiple :math:`c` of a unit step that still decreases the loss, found by bisection.
"""
from __future__ import annotations

import math
from functools import partial
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

import sims  # noqa: F401  (float64)
from theory.validate import array, choice, integer, key as _key, real, traceable as _traceable

__all__ = [
    "PROBLEMS", "TOY_PROBLEMS", "NOISES", "COMPRESSORS", "ALGORITHMS", "SCHEDULES", "DRIFT_KINDS",
    "ESCAPE_PROBLEMS", "MLP_DIM", "mlp_data", "mlp_init", "loss_fn", "derivatives", "descent_edge"
]


PROBLEMS = ("quadratic", "quartic", "cosh2", "logcosh", "mlp")
TOY_PROBLEMS = PROBLEMS[:4]
NOISES = ("none", "gaussian", "student_t", "cauchy")
COMPRESSORS = ("none", "bernoulli", "rand_k")
ALGORITHMS = ("dsgd", "dcsgd", "dcsgd_normalized", "dsignsgd")
SCHEDULES = ("constant", "inv_sqrt")
DRIFT_KINDS = ("first_order", "second_order", "corrected")
ESCAPE_PROBLEMS = ("quadratic", "quartic", "cosh2")
_BOUND = 1e100
_MAX_BLOCK = 256  # random draws per block of at most this many steps (one key split per block)
_MAX_DRAWS = 2048  # ... and at most this many values per path and kind (memory: chunk x 16 KiB per kind)

# ----------------------------------------------------------------------------- validation helpers


def _traced(x: Any) -> bool:
    return isinstance(x, jax.core.Tracer)


def _num(name: str, x: Any, **kw) -> Any:
    """Validate a concrete real scalar (``theory.validate.real``); traced values pass through."""
    if _traced(x):
        return x
    if isinstance(x, (np.ndarray, jax.Array)) and np.ndim(x) == 0:
        x = np.asarray(x).item() if np.asarray(x).dtype.kind in "iuf" else x
    return real(name, x, **kw)


def _arr(name: str, x: Any, **kw) -> Any:
    """Validate a concrete real array (``theory.validate.array``); traced values pass through."""
    if _traced(x):
        return x
    return array(name, x, **kw)


def _grad_arg(name: str, x: Any) -> Any:
    """A gradient vector (shape ``(d,)``, real, finite); a tracer has its type and shape checked only."""
    return _traceable(name, x, ndim=1)


def _omega_arg(x: Any, n: int) -> None:
    """``omega``: a scalar or one value per agent (``(n,)``), each >= 0."""
    if _traced(x):
        _traceable("omega", x, ndim=(0, 1))
        shape = x.shape
    else:
        shape = array("omega", x, ndim=(0, 1), low=0.0).shape
    if shape not in ((), (n,)):
        raise ValueError(f"omega: expected a scalar or one value per agent (shape ({n},)), got shape {shape}")


def _prng(name: str, x: Any) -> Any:
    if _traced(x):
        return x
    return _key(name, x)


# ----------------------------------------------------------------------------- problems

_MLP_IN, _MLP_HIDDEN, _MLP_POINTS = 4, 8, 64
MLP_DIM = _MLP_IN * _MLP_HIDDEN + _MLP_HIDDEN + _MLP_HIDDEN + 1


def mlp_data(seed: int) -> tuple[np.ndarray, np.ndarray]:
    r"""Regression data for the MLP test problem: inputs :math:`X \sim \mathcal N(0, I_4)`, 64 points, targets
    :math:`y = \sum_{j\le3}\tanh(Xw)_j + 0.1\,\varepsilon` (a random tanh teacher). ``seed`` (an integer
    >= 0) is required: the same seed always gives the same data."""
    seed = integer("seed", seed, low=0)
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((_MLP_POINTS, _MLP_IN))
    w = rng.standard_normal((_MLP_IN, 3))
    y = np.tanh(X @ w).sum(axis=1) + 0.1 * rng.standard_normal(_MLP_POINTS)
    return X, y


_MLP_X, _MLP_Y = (jnp.asarray(a) for a in mlp_data(0))


def _mlp_loss(theta: jax.Array) -> jax.Array:
    i, h = _MLP_IN, _MLP_HIDDEN
    W1 = theta[: i * h].reshape(i, h)
    b1 = theta[i * h: i * h + h]
    w2 = theta[i * h + h: i * h + 2 * h]
    b2 = theta[-1]
    # the data in the parameters' precision (a no-op in float64; float32 paths would otherwise promote)
    X, y = _MLP_X.astype(theta.dtype), _MLP_Y.astype(theta.dtype)
    pred = jnp.tanh(X @ W1 + b1) @ w2 + b2
    return 0.5 * jnp.mean((pred - y) ** 2)


@jax.jit
def _mlp_init(key: jax.Array, scale) -> jax.Array:
    k1, k2 = jax.random.split(key)
    w1 = jax.random.normal(k1, (_MLP_IN * _MLP_HIDDEN,)) * scale / math.sqrt(_MLP_IN)
    w2 = jax.random.normal(k2, (_MLP_HIDDEN,)) * scale / math.sqrt(_MLP_HIDDEN)
    return jnp.concatenate([w1, jnp.zeros(_MLP_HIDDEN), w2, jnp.zeros(1)])


def mlp_init(key: jax.Array, scale: float = 1.0) -> jax.Array:
    r"""Initial MLP parameters (flat vector of length :data:`MLP_DIM`): weights
    :math:`\mathcal N(0, \mathrm{scale}^2/\mathrm{fan\_in})`, biases 0; ``key`` a typed PRNG key."""
    _prng("key", key)
    scale = _num("scale", scale, low=0.0, low_open=True)
    return _mlp_init(key, jnp.asarray(scale, jnp.float64))


def _quadratic(x, lam):
    return 0.5 * jnp.sum(lam * x**2)


def _quartic(x, lam):
    return jnp.sum(x**4) / 4


def _cosh2(x, lam):
    return 2 * jnp.sum(jnp.cosh(x))


def _logcosh(x, lam):
    # log cosh x = |x| + log1p(exp(-2|x|)) - log 2, stable for large |x|
    return jnp.sum(jnp.abs(x) + jnp.log1p(jnp.exp(-2 * jnp.abs(x))) - jnp.log(2.0))


def _mlp(x, lam):
    return _mlp_loss(x)


_LOSSES = {"quadratic": _quadratic, "quartic": _quartic, "cosh2": _cosh2, "logcosh": _logcosh, "mlp": _mlp}


def loss_fn(problem: str) -> Callable[[jax.Array, jax.Array], jax.Array]:
    r"""``f(x, lam)`` summed over coordinates: quadratic :math:`\lambda x^2/2`, quartic :math:`x^4/4`,
    cosh2 :math:`2\cosh x`, logcosh :math:`\log\cosh x` (``lam`` used by the quadratic only), or the MLP
    (``x`` its :data:`MLP_DIM` parameters). The same function object every call (stable for ``jit``)."""
    return _LOSSES[choice("problem", problem, PROBLEMS)]


@jax.jit
def _derivatives(x, lam):
    # All four toy functions in one kernel: one compilation per shape of x serves every problem.
    out = {}
    for problem in TOY_PROBLEMS:
        f1 = jax.grad(lambda y, _f=_LOSSES[problem]: _f(y[None], lam))
        out[problem] = jax.vmap(lambda y, _g=f1: (_g(y), jax.grad(_g)(y)))(x)
    return out


def derivatives(problem: str, x, lam=1.0) -> tuple[jax.Array, jax.Array]:
    r""":math:`(f'(x_j), f''(x_j))` of a 1-D toy function at each entry of ``x`` by autodiff (``jax.grad``
    twice; independent of the sympy derivatives of :mod:`theory.sde`)."""
    choice("problem", problem, TOY_PROBLEMS)
    x = _arr("x", x, ndim=1)
    lam = _num("lam", lam, low=0.0, low_open=True)
    return _derivatives(jnp.asarray(x), lam)[problem]


# ----------------------------------------------------------------------------- descent factor

@partial(jax.jit, static_argnames=("problem", "n_bisect"))
def _descent_edge(x, eta_unit, problem, lam, c_max, n_bisect):
    f = _LOSSES[problem]

    def one(x, e):
        g = jax.grad(lambda y: f(y[None], lam))(x)
        fx = f(x[None], lam)

        def halve(_, lohi):
            lo, hi = lohi
            mid = 0.5 * (lo + hi)
            down = f((x - mid * e * g)[None], lam) < fx
            return jnp.where(down, mid, lo), jnp.where(down, hi, mid)

        lo, _ = lax.fori_loop(0, n_bisect, halve, (jnp.zeros(()), jnp.asarray(c_max, jnp.float64)))
        return lo

    return jax.vmap(one)(x, eta_unit)


def descent_edge(x, eta_unit, *, problem: str, lam=1.0, c_max: float = 100.0, n_bisect: int = 60) -> jax.Array:
    r"""Largest :math:`c \in [0, c_{\max}]` with :math:`f(x - c\,\eta_{\mathrm{unit}} f'(x)) < f(x)`, per entry of ``x``.

    Bisection on the actual loss (``n_bisect`` halvings, resolution :math:`c_{\max}2^{-n}`); assumes the
    one-step decrease holds on an interval :math:`[0, c^\ast)` (true for the even convex toy functions,
    where it means :math:`|x^+| < |x|`). Returns :math:`c_{\max}` where no increase was found below it.
    """
    choice("problem", problem, TOY_PROBLEMS)
    x = _arr("x", x, ndim=1)
    eta_unit = _arr("eta_unit", eta_unit, ndim=1, low=0.0, low_open=True)
    if not _traced(x) and not _traced(eta_unit) and np.shape(x) != np.shape(eta_unit):
        raise ValueError(f"eta_unit: expected the shape of x {np.shape(x)}, got {np.shape(eta_unit)}")
    _num("lam", lam, low=0.0, low_open=True)
    c_max = real("c_max", c_max, low=0.0, low_open=True)
    n_bisect = integer("n_bisect", n_bisect, low=1, high=200)
    return _descent_edge(jnp.asarray(x), jnp.asarray(eta_unit), problem, lam, c_max, n_bisect)
