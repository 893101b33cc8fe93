r"""Matrix-free curvature of any JAX model: Hessian-vector products, top eigenvalues, trace.

Everything takes a scalar loss ``loss_fn(params) -> float`` of a parameter pytree ``params`` (a flat
vector, a list of matrices, a dict of layers: any pytree of float arrays):

* :func:`hvp` -- :math:`H(\theta)v` as forward-over-reverse differentiation,
  :math:`Hv=\partial_\epsilon\nabla\mathcal L(\theta+\epsilon v)|_{\epsilon=0}` (``jvp`` of ``grad``):
  one gradient's cost, no :math:`P\times P` matrix;
* :func:`dense_hessian` -- the :math:`P\times P` matrix (``jax.hessian`` on the flattened
  parameters; small :math:`P` only), the reference the matrix-free routines are tested against;
* :func:`largest_eigenvalue` -- the top eigenvalue of a dense symmetric matrix, eigenvalues only
  (tridiagonal reduction and Sturm-count multisection);
* :func:`lanczos` / :func:`top_eigenvalues` -- the largest eigenvalues by Lanczos on the HVP;
* :func:`top_eigenpair` -- the top eigenvalue with its Ritz vector (and the second Ritz value) by a few Lanczos
  steps from a given start, for tracking the sharpness along a trajectory warm-started at the last eigenvector;
* :func:`hutchinson_trace` -- :math:`\operatorname{tr}H` by Hutchinson's estimator with its
  standard error.

Random routines take a typed key (``jax.random.key``) and are traceable: call them under
``jax.jit`` with ``loss_fn`` closed over the data. Everything computes in the parameters' dtype:
float64 for arrays made after importing :mod:`sims` (which enables it), float32 for a float32 model
(a GPU-sized network), with float32's round-off (relative errors near :math:`10^{-6}` instead of
:math:`10^{-15}`). A parameter pytree that mixes dtypes is raveled to the widest of them.
"""
from __future__ import annotations

from typing import Any, Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.flatten_util import ravel_pytree

import sims  # noqa: F401  (float64)
from theory import validate as V

__all__ = ["hvp", "dense_hessian", "largest_eigenvalue", "lanczos", "top_eigenvalues", "hutchinson_trace", "TraceEstimate",
           "top_eigenpair"]


_NOT_FINITE = "in its curvature at params (the loss or its derivatives are NaN or overflow there)"


def _callable(name: str, fn: Any) -> Callable:
    if not callable(fn):
        raise TypeError(f"{name}: expected a callable loss_fn(params) -> scalar, got {type(fn).__name__}")
    return fn


def _leaves(name: str, tree: Any) -> list:
    """The leaves of a parameter pytree: floating-point arrays, finite where concrete (NaN-proof)."""
    leaves = jax.tree_util.tree_leaves(tree)
    if not leaves:
        raise ValueError(f"{name}: expected a pytree with at least one array, got an empty pytree")
    for leaf in leaves:
        dtype = getattr(leaf, "dtype", None)
        if dtype is None:
            dtype = np.asarray(leaf).dtype
        if not jnp.issubdtype(dtype, jnp.floating):
            raise TypeError(f"{name}: expected floating-point arrays, got a leaf of dtype {dtype} ({leaf!r:.60})")
        if not V.is_tracer(leaf) and not np.all(np.isfinite(np.asarray(leaf))):
            raise ValueError(f"{name}: every value must be finite, got a leaf with NaN or infinity")
    return leaves


def _float_dtype(name: str, dtype: Any) -> np.dtype:
    """``dtype`` as a NumPy dtype, which must be floating (float16 to float64)."""
    try:
        dt = jnp.dtype(dtype)
    except TypeError:
        raise TypeError(f"{name}: expected a floating dtype such as jnp.float32, got {dtype!r:.60}") from None
    if not jnp.issubdtype(dt, jnp.floating):
        raise TypeError(f"{name}: expected a floating dtype such as jnp.float32 or jnp.float64, got {dt}")
    return dt


def _scalar_loss(loss_fn: Callable, params: Any) -> None:
    """``loss_fn(params)`` must trace to a real scalar (checked abstractly: nothing is computed)."""
    try:
        out = jax.eval_shape(loss_fn, params)
    except Exception as exc:  # noqa: BLE001  (re-raised naming both arguments)
        raise TypeError(f"params: loss_fn(params) fails on these params ({type(exc).__name__}: "
                        f"{str(exc).splitlines()[0][:120]})") from exc
    if getattr(out, "shape", None) != () or not jnp.issubdtype(out.dtype, jnp.floating):
        raise TypeError(f"loss_fn: expected a real scalar loss, got {out}")


def _flat(loss_fn: Callable, params: Any) -> tuple[jax.Array, Callable[[jax.Array], jax.Array]]:
    """``params`` as one vector and the loss as a function of that vector."""
    _leaves("params", params)
    _scalar_loss(loss_fn, params)
    flat, unravel = ravel_pytree(params)
    return flat, lambda x: loss_fn(unravel(x))


def hvp(loss_fn: Callable[[Any], jax.Array], params: Any, v: Any) -> Any:
    r"""Hessian-vector product :math:`H(\theta)v`, a pytree shaped like ``params``.

    Forward-over-reverse: the directional derivative of :math:`\nabla\mathcal L` along ``v``,
    :math:`\frac{d}{d\epsilon}\nabla\mathcal L(\theta+\epsilon v)\big|_0=H(\theta)v`. ``v`` has the
    structure and shapes of ``params``; each of its leaves is cast to the dtype of the matching
    ``params`` leaf (a float64 direction for a float32 model is rounded to float32, the precision
    the product is computed in anyway).

    Args:
        loss_fn: scalar loss of the parameter pytree.
        params: the point :math:`\theta`.
        v: the direction.
    """
    _callable("loss_fn", loss_fn)
    _leaves("params", params)
    _leaves("v", v)
    if jax.tree_util.tree_structure(v) != jax.tree_util.tree_structure(params):
        raise ValueError("v: expected the same pytree structure as params, got "
                         f"{jax.tree_util.tree_structure(v)} vs {jax.tree_util.tree_structure(params)}")
    for a, b in zip(jax.tree_util.tree_leaves(v), jax.tree_util.tree_leaves(params)):
        if jnp.shape(a) != jnp.shape(b):
            raise ValueError(f"v: leaf of shape {jnp.shape(a)} where params has shape {jnp.shape(b)}")
    _scalar_loss(loss_fn, params)
    # jvp needs each tangent in its primal's dtype: it refuses a float64 direction for float32 weights
    v = jax.tree_util.tree_map(lambda a, b: jnp.asarray(a, dtype=jnp.result_type(b)), v, params)
    return V.finite_output("loss_fn", jax.jvp(jax.grad(loss_fn), (params,), (v,))[1], _NOT_FINITE)


def dense_hessian(loss_fn: Callable[[Any], jax.Array], params: Any, *, max_bytes=None) -> jax.Array:
    r"""The :math:`P\times P` Hessian in the flattened coordinates of ``params`` (``ravel_pytree`` order).

    Built one leaf at a time: the columns belonging to leaf :math:`k` are
    :math:`\partial\nabla\mathcal L/\partial\theta_k`, forward-mode derivatives of the full gradient
    along that leaf's basis directions only (``jacfwd`` over the leaf). The other leaves' tangents are
    then structurally zero, so each column costs one HVP restricted to one layer, not to all of
    :math:`\theta` (for a flat parameter vector this is ``jax.hessian``). Symmetrized,
    :math:`\tfrac12(H+H^\top)`, so round-off asymmetry cannot leak into ``eigvalsh``. Memory
    :math:`O(P^2)`: use :func:`top_eigenvalues` beyond a few thousand parameters; ``max_bytes`` is the allocation
    limit (:func:`theory.validate.byte_limit`) for the columns, the matrix and its symmetrization.
    """
    _callable("loss_fn", loss_fn)
    P = sum(int(np.size(leaf)) for leaf in _leaves("params", params))
    V.check_bytes({"params": f"{P} parameters"}, 4 * 8 * P * P, what="the P x P Hessian (columns, matrix, symmetrized)",
                  max_bytes=max_bytes)
    _scalar_loss(loss_fn, params)
    leaves, treedef = jax.tree_util.tree_flatten(params)
    dtype = ravel_pytree(params)[0].dtype

    def flat_grad(leaves):
        return ravel_pytree(jax.grad(loss_fn)(jax.tree_util.tree_unflatten(treedef, leaves)))[0]

    cols = []
    for i, leaf in enumerate(leaves):
        leaf = jnp.asarray(leaf)

        def along(x, i=i):
            return flat_grad(leaves[:i] + [x] + leaves[i + 1:])

        # (P,) + leaf.shape -> (P, leaf.size): row-major, the leaf's order inside ravel_pytree
        cols.append(jax.jacfwd(along)(leaf).reshape(-1, leaf.size).astype(dtype))
    H = jnp.concatenate(cols, axis=1)
    return V.finite_output("loss_fn", 0.5 * (H + H.T), _NOT_FINITE)


def largest_eigenvalue(matrix: Any) -> jax.Array:
    r"""The largest eigenvalue of a real symmetric matrix (or a stack ``(..., P, P)``), eigenvalues only.

    No eigenvectors are formed (``jnp.linalg.eigvalsh`` computes them on CPU, several times the
    work). Householder reduction to a tridiagonal :math:`T=Q^\top AQ` (LAPACK ``sytrd``, the same
    first step as NumPy's ``eigvalsh``), then multisection on Sturm counts: the number of
    eigenvalues of :math:`T` below :math:`x` is the number of negative pivots of
    :math:`T-xI=LDL^\top`, :math:`q_1=d_1-x`, :math:`q_i=d_i-x-e_{i-1}^2/q_{i-1}`. Starting from the
    Gershgorin interval (at most :math:`6\lVert A\rVert` wide: every entry of :math:`T` is at most
    :math:`\lVert A\rVert`), each round counts at 3 points at once and keeps the sub-interval where
    the count reaches :math:`P`; after :math:`54/2=27` rounds (a factor 4 each) its
    width is below :math:`\epsilon\lVert A\rVert`. Both steps are backward stable, so
    the error is :math:`O(P\epsilon\lVert A\rVert)`, as for a dense eigensolver. Only the lower
    triangle is read.
    """
    A = V.traceable("matrix", matrix)
    if A.ndim < 2 or A.shape[-1] != A.shape[-2] or A.shape[-1] < 1:
        raise ValueError(f"matrix: expected a square matrix (..., P, P), got shape {A.shape}")
    # the caller's dtype decides, eagerly as under jit (validation hands a concrete array back in float64)
    A = A.astype(_pair_dtype(getattr(matrix, "dtype", np.float64)))
    return jnp.vectorize(_largest_eigenvalue, signature="(n,n)->()")(A)


# Sturm counts per round: 2 bits of the answer per pass over the tridiagonal. Fewer, longer rounds do less arithmetic
# (P * sections * rounds pivots); measured on one core, batched: P = 6 1.2 us a matrix at 3 against 4.2 at 127,
# P = 160 396 us against 461, P = 640 equal (the reduction dominates), the same top eigenvalues
_SECTIONS = 3


def _largest_eigenvalue(A: jax.Array) -> jax.Array:
    P = A.shape[-1]
    if P == 1:
        return A[0, 0]
    _, d, e, _ = lax.linalg.tridiagonal(A, lower=True)
    # scale by a power of two (exact) so that e^2 can neither overflow nor underflow
    big = jnp.maximum(jnp.max(jnp.abs(d)), jnp.max(jnp.abs(e)))
    unit = jnp.ldexp(jnp.ones((), A.dtype), jnp.frexp(jnp.where(big > 0, big, 1.0))[1])
    d, e = d / unit, e / unit
    e2 = e * e
    ae = jnp.abs(e)
    radius = jnp.concatenate([ae, jnp.zeros(1, ae.dtype)]) + jnp.concatenate([jnp.zeros(1, ae.dtype), ae])
    lo, hi = jnp.min(d - radius), jnp.max(d + radius)     # Gershgorin: every eigenvalue lies in [lo, hi]
    # LAPACK's pivot floor (dlaebz): a zero pivot counts as negative, and no division by zero
    pivmin = jnp.finfo(A.dtype).tiny * jnp.maximum(1.0, jnp.max(e2, initial=0.0))
    frac = jnp.arange(1, _SECTIONS + 1, dtype=A.dtype) / (_SECTIONS + 1)

    def count_below(x):
        def pivot(q):
            return jnp.where(jnp.abs(q) < pivmin, -pivmin, q)

        def step(carry, de):
            q, c = carry
            q = pivot(de[0] - x - de[1] / q)
            return (q, c + (q < 0)), None

        q0 = pivot(d[0] - x)
        (_, c), _ = lax.scan(step, (q0, (q0 < 0).astype(jnp.int32)), (d[1:], e2))
        return c

    def rnd(_, bracket):
        # invariant: fewer than P eigenvalues below lo, all P below hi (or hi is the Gershgorin bound)
        lo, hi = bracket
        x = lo + (hi - lo) * frac
        above_top = count_below(x) == P
        return jnp.max(jnp.where(above_top, lo, x)), jnp.min(jnp.where(above_top, x, hi))

    rounds = -(-54 // int(np.log2(_SECTIONS + 1)))   # (hi - lo) <= 2||A|| shrinks below 2^-53 ||A||
    lo, hi = lax.fori_loop(0, rounds, rnd, (lo, hi))
    return 0.5 * (lo + hi) * unit


def lanczos(key: jax.Array, matvec: Callable[[jax.Array], jax.Array], dim: int, num_iter: int, *,
            dtype: Any = jnp.float64, max_bytes=None) -> jax.Array:
    r"""Ritz values (ascending, ``num_iter`` of them) of a symmetric operator after ``num_iter`` Lanczos steps.

    Builds an orthonormal Krylov basis :math:`V=[v_0,\dots,v_{m-1}]` from a Gaussian start and the
    tridiagonal :math:`T=V^\top HV` (:math:`\alpha_i=v_i^\top Hv_i`, :math:`\beta_i=\lVert w_i\rVert`).
    Every new vector is orthogonalized against all previous ones twice (full reorthogonalization),
    which keeps :math:`V` orthonormal to round-off and prevents spurious copies of converged
    eigenvalues. On breakdown (:math:`\beta_i` below :math:`450\epsilon` of the operator scale seen so
    far, :math:`\epsilon` the machine epsilon of ``dtype``: :math:`10^{-13}` in float64,
    :math:`5\cdot10^{-5}` in float32; an invariant subspace is exhausted and what is left of
    :math:`w_i` is round-off) the iteration continues from a fresh random vector orthogonal to
    :math:`V` with :math:`\beta_i=0`, so repeated eigenvalues are found with their multiplicity.
    With ``num_iter == dim`` the Ritz values are the whole spectrum; otherwise the extreme ones
    converge first.

    Args:
        key: typed PRNG key (start vector and restarts).
        matvec: :math:`v\mapsto Hv` on vectors of length ``dim`` (traceable).
        dim: the operator's dimension.
        num_iter: Krylov steps, :math:`1\le m\le\mathrm{dim}`.
        dtype: the floating dtype of the Krylov vectors, the one ``matvec`` takes (float32 for a
            float32 model: JAX's ``jvp`` refuses a tangent of another dtype than its primal).

    A ``matvec`` that returns NaN or infinity makes every Ritz value undefined: a ``ValueError`` naming
    ``matvec`` when the result is concrete (under ``jit`` the NaN values come back). ``max_bytes``: the
    allocation limit (:func:`theory.validate.byte_limit`) for the Krylov basis, ``(dim, num_iter + 1)``.
    """
    V.key("key", key)
    _callable("matvec", matvec)
    dim = V.integer("dim", dim, low=1)
    num_iter = V.integer("num_iter", num_iter, low=1, high=dim)
    dtype = _float_dtype("dtype", dtype)
    V.check_bytes({"dim": dim, "num_iter": num_iter}, 2 * dtype.itemsize * dim * (num_iter + 1),
                  what="the Krylov basis (and its update)", max_bytes=max_bytes)
    return V.finite_output("matvec", _lanczos(key, matvec, dim, num_iter, dtype), "during the Lanczos iteration")


def _lanczos(key: jax.Array, matvec: Callable[[jax.Array], jax.Array], dim: int, num_iter: int,
             dtype: np.dtype) -> jax.Array:
    """:func:`lanczos` on validated arguments, its output unchecked (the path inside a training scan, where
    a non-finite value is a record of divergence, not an error)."""
    info = jnp.finfo(dtype)
    k_start, k_restart = jax.random.split(key)
    v0 = jax.random.normal(k_start, (dim,), dtype)
    # the basis as columns, (dim, m + 1): both products of the reorthogonalization, c = w B and B c, then
    # read B along its contiguous axis (XLA's CPU matrix-vector product against a transposed row basis
    # is several times slower, and it dominates a step once the HVP is cheap)
    basis = jnp.zeros((dim, num_iter + 1), dtype).at[:, 0].set(v0 / jnp.linalg.norm(v0))

    def orth(w, basis):
        # classical Gram-Schmidt twice ("twice is enough"); columns not yet filled are zero
        w = w - basis @ (w @ basis)
        return w - basis @ (w @ basis)

    def fresh(i, basis):
        # a restart direction after breakdown: drawn (and orthogonalized) only when it is needed
        f = orth(jax.random.normal(jax.random.fold_in(k_restart, i), (dim,), dtype), basis)
        return f / jnp.maximum(jnp.linalg.norm(f), info.tiny)

    def body(i, carry):
        basis, alpha, beta, scale = carry
        v = basis[:, i]
        w = matvec(v).astype(dtype)
        a = jnp.vdot(v, w)
        w = orth(w, basis)
        b = jnp.linalg.norm(w)
        scale = jnp.maximum(scale, jnp.maximum(jnp.abs(a), b))
        broke = b <= 450 * info.eps * jnp.maximum(scale, info.tiny)
        nxt = lax.cond(broke, lambda: fresh(i, basis), lambda: w / jnp.where(broke, 1.0, b))
        return basis.at[:, i + 1].set(nxt), alpha.at[i].set(a), beta.at[i].set(jnp.where(broke, 0.0, b)), scale

    init = (basis, jnp.zeros(num_iter, dtype), jnp.zeros(num_iter, dtype), jnp.zeros((), dtype))
    _, alpha, beta, _ = lax.fori_loop(0, num_iter, body, init)
    T = jnp.diag(alpha) + jnp.diag(beta[:-1], 1) + jnp.diag(beta[:-1], -1)
    return jnp.linalg.eigvalsh(T)


def top_eigenvalues(loss_fn: Callable[[Any], jax.Array], params: Any, key: jax.Array, *, k: int = 1,
                    num_iter: int = 30, max_bytes=None) -> jax.Array:
    r"""The ``k`` largest Hessian eigenvalues (descending) by Lanczos on :func:`hvp`; no dense matrix.

    ``num_iter`` Krylov steps (capped at :math:`P`); each costs one HVP. The top Ritz value
    converges geometrically in ``num_iter`` at a rate set by the gap to the next eigenvalue; with
    ``num_iter == P`` the result is exact to round-off.

    Args:
        loss_fn: scalar loss of the parameter pytree.
        params: the point :math:`\theta`.
        key: typed PRNG key.
        k: how many eigenvalues, :math:`1\le k\le` ``min(num_iter, P)``.
        num_iter: Lanczos steps.
        max_bytes: the allocation limit (:func:`theory.validate.byte_limit`) for the Krylov basis.
    """
    _callable("loss_fn", loss_fn)
    V.key("key", key)
    flat, f = _flat(loss_fn, params)
    m = min(V.integer("num_iter", num_iter, low=1), flat.size)
    k = V.integer("k", k, low=1, high=m)
    V.check_bytes({"num_iter": m, "params": f"{flat.size} parameters"}, 2 * flat.dtype.itemsize * flat.size * (m + 1),
                  what="the Krylov basis (and its update)", max_bytes=max_bytes)
    grad = jax.grad(f)
    ritz = _lanczos(key, lambda v: jax.jvp(grad, (flat,), (v,))[1], flat.size, m, flat.dtype)
    return V.finite_output("loss_fn", ritz[::-1][:k], _NOT_FINITE)


class TraceEstimate(NamedTuple):
    r"""Hutchinson's estimate of :math:`\operatorname{tr}H`: ``estimate`` :math:`\pm` ``se`` from ``samples``."""

    estimate: jax.Array
    se: jax.Array
    samples: jax.Array


def _rademacher(key: jax.Array, shape: tuple, dtype) -> jax.Array:
    r"""Independent signs :math:`\pm1` with probability 1/2 each, in ``dtype``. JAX's ``rademacher`` compares a
    uniform draw in the precision of its Python ``p = 0.5`` (float64 here), which would put float64 into a float32
    program; float32 draws compare a float32 uniform instead (the same law; float64 draws are unchanged)."""
    if dtype == jnp.float32:
        return 2 * jax.random.bernoulli(key, jnp.float32(0.5), shape).astype(dtype) - 1
    return jax.random.rademacher(key, shape, dtype=dtype)


def hutchinson_trace(loss_fn: Callable[[Any], jax.Array], params: Any, key: jax.Array, *,
                     num_samples: int = 64, max_bytes=None) -> TraceEstimate:
    r"""Hutchinson's estimator :math:`\widehat{\operatorname{tr}H}=\frac1m\sum_{i=1}^m z_i^\top Hz_i` with Rademacher :math:`z_i`.

    Unbiased, :math:`\mathbb E[z^\top Hz]=\operatorname{tr}H`, with variance
    :math:`2\sum_{a\ne b}H_{ab}^2` per probe (Rademacher probes have the smallest variance of all
    i.i.d. unit-variance probes). The standard error is the sample standard deviation of the
    :math:`m` probes over :math:`\sqrt m` (needs :math:`m\ge2`). The probes run under ``vmap``.

    Returns a :class:`TraceEstimate` (estimate, standard error, the per-probe values). ``max_bytes``: the
    allocation limit (:func:`theory.validate.byte_limit`) for the probes and their HVPs, ``(num_samples, P)`` each.
    """
    _callable("loss_fn", loss_fn)
    V.key("key", key)
    m = V.integer("num_samples", num_samples, low=2)
    flat, f = _flat(loss_fn, params)
    V.check_bytes({"num_samples": m, "params": f"{flat.size} parameters"}, 3 * flat.dtype.itemsize * m * flat.size,
                  what="the probes and their HVPs under vmap", max_bytes=max_bytes)
    grad = jax.grad(f)
    z = _rademacher(key, (m, flat.size), flat.dtype)
    quad = V.finite_output("loss_fn", jax.vmap(lambda v: jnp.vdot(v, jax.jvp(grad, (flat,), (v,))[1]))(z), _NOT_FINITE)
    return TraceEstimate(jnp.mean(quad), jnp.std(quad, ddof=1) / jnp.sqrt(m), quad)


def _pair_dtype(dtype) -> np.dtype:
    """The arithmetic of :func:`top_eigenpair` for a start vector of ``dtype``: float32 for float32, else float64 (an
    integer or half-precision start is widened, as it always was)."""
    return np.dtype(np.float32) if jnp.dtype(dtype) == jnp.float32 else np.dtype(np.float64)


def _top_eigenpair(matvec, v0: jax.Array, num_iter: int) -> tuple[jax.Array, jax.Array, jax.Array]:
    r"""Largest eigenvalue, its unit Ritz vector and the second Ritz value after ``num_iter`` Lanczos steps from ``v0``.

    Full reorthogonalization (Gram-Schmidt twice); the Ritz vector is :math:`V^\top s` for the top
    eigenvector :math:`s` of the tridiagonal :math:`T`. Warm-starting ``v0`` at the previous
    eigenvector makes a few steps enough along a slowly moving trajectory. Computed in float32 for a float32 ``v0``
    (basis, coefficients, ``matvec``'s output cast to it), else in float64.
    """
    dim = v0.shape[0]
    dtype = _pair_dtype(v0.dtype)
    # the floor of a vanishing residual's norm: 1e-300 in float64 (unchanged, so float64 runs stay bit-identical),
    # float32's smallest normal number in float32 (1e-300 rounds to 0 there)
    floor = 1e-300 if dtype == jnp.float64 else jnp.finfo(dtype).tiny
    basis = jnp.zeros((num_iter + 1, dim), dtype).at[0].set(v0 / jnp.linalg.norm(v0))

    def body(i, carry):
        basis, alpha, beta = carry
        # a matvec closing over float64 data would promote the whole iteration: its product is read in the basis's
        # dtype (in float64 a no-op, or an exact widening)
        w = matvec(basis[i]).astype(dtype)
        a = jnp.vdot(basis[i], w)
        w = w - basis.T @ (basis @ w)
        w = w - basis.T @ (basis @ w)
        b = jnp.linalg.norm(w)
        return basis.at[i + 1].set(w / jnp.maximum(b, floor)), alpha.at[i].set(a), beta.at[i].set(b)

    init = (basis, jnp.zeros(num_iter, dtype), jnp.zeros(num_iter, dtype))
    basis, alpha, beta = lax.fori_loop(0, num_iter, body, init)
    T = jnp.diag(alpha) + jnp.diag(beta[:-1], 1) + jnp.diag(beta[:-1], -1)
    vals, vecs = jnp.linalg.eigh(T)
    u = basis[:num_iter].T @ vecs[:, -1]
    return vals[-1], u / jnp.linalg.norm(u), vals[-2] if num_iter > 1 else -jnp.inf


def top_eigenpair(matvec, v0: jax.Array, num_iter: int, *, max_bytes=None) -> tuple[jax.Array, jax.Array, jax.Array]:
    r"""Largest eigenvalue, its unit Ritz vector and the second Ritz value after ``num_iter`` Lanczos steps from ``v0``.

    ``matvec``: :math:`v \mapsto Hv` for a symmetric :math:`H`; ``v0`` a nonzero vector; ``1 <= num_iter <= len(v0)``
    (one step has no second Ritz value: it is returned as :math:`-\infty`).
    Full reorthogonalization (Gram-Schmidt twice); warm-starting ``v0`` at the previous eigenvector makes a
    few steps enough along a slowly moving trajectory. A ``matvec`` that returns NaN or infinity makes
    the eigenpair undefined: a ``ValueError`` naming ``matvec`` when the result is concrete (under ``jit``
    the NaN eigenpair comes back, for the caller's divergence flag). ``max_bytes``: the allocation limit
    (:func:`theory.validate.byte_limit`) for the Krylov basis, ``(num_iter + 1, len(v0))``.

    Computed in the dtype of ``v0`` when that is float32 (the basis, the tridiagonal and ``matvec``'s products, which
    are cast to it; the outputs float32), else in float64. In float32 the Ritz values carry the round-off of the
    basis: with full reorthogonalization they are exact for an operator within :math:`(n\lVert H\rVert_F +
    2m\lVert H\rVert)\,\epsilon_{32}` of :math:`H` in the worst case (:math:`n` = ``len(v0)``, :math:`m` =
    ``num_iter``, :math:`\epsilon_{32} = 2^{-24}`; typically :math:`\sim\sqrt n\,\epsilon_{32}\lVert H\rVert`, plus
    the error of ``matvec`` itself), so the top one is within that of float64's after the same number of steps
    (:math:`3\epsilon_{32}\lVert H\rVert` measured at :math:`n = 40`).
    """
    if not callable(matvec):
        raise TypeError(f"matvec: expected a callable v -> H v, got {type(matvec).__name__}")
    given = getattr(v0, "dtype", None)
    v0 = V.traceable("v0", v0, ndim=1)
    if isinstance(given, np.dtype) and given == np.float32:  # traceable returns a concrete array in float64
        v0 = v0.astype(jnp.float32)
    num_iter = V.integer("num_iter", num_iter, low=1, high=v0.shape[0])
    V.check_bytes({"num_iter": num_iter, "v0": f"length {v0.shape[0]}"},
                  2 * _pair_dtype(v0.dtype).itemsize * (num_iter + 1) * v0.shape[0],
                  what="the Krylov basis (and its products)", max_bytes=max_bytes)
    if not V.is_tracer(v0) and not float(jnp.linalg.norm(v0)) > 0:
        raise ValueError("v0: expected a nonzero start vector, got zeros")
    top, vec, second = _top_eigenpair(matvec, v0, num_iter)
    # one step has no second Ritz value: its -inf is the answer, not a non-finite product of matvec
    V.finite_output("matvec", (top, vec) if num_iter == 1 else (top, vec, second), "during the Lanczos iteration")
    return top, vec, second
