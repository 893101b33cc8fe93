r"""Data and minima beyond whitened full-rank inputs: orthogonal class means, and inputs whitened on a subspace.

* :func:`class_means_data` -- one-hot-like inputs: sample :math:`i` of class :math:`c` is
  :math:`x_i=r\,o_c` with orthonormal class directions :math:`o_c` (a Haar frame), so the class means
  are orthogonal with norm :math:`r` and :math:`\Sigma_{xx}=r^2\sum_cp_co_co_c^\top` is *not* a
  multiple of the identity (nor of a projection) unless the classes are balanced;
* :func:`projected_data` -- inputs whitened on an :math:`m`-dimensional subspace,
  :math:`\Sigma_{xx}=\alpha P` with :math:`P` an orthogonal projection of rank :math:`m<d_0`
  (rank-deficient :math:`X`), with generic rank-:math:`r` labels or one-hot class labels;
* :func:`min_norm_balanced_minimum` -- the balanced factorization of the minimum-norm global
  minimizer :math:`W^*=\Sigma_{yx}\Sigma_{xx}^{+}` (pseudo-inverse), which exists for singular
  :math:`\Sigma_{xx}` where :func:`sims.linear_hessian.balanced_minimum` refuses.

These are constructions, not iterations: NumPy linear algebra on Gaussian draws from a typed key
(a NumPy stream seeded by the key's bits);
nothing diverges. The Hessians are measured elsewhere (autodiff in the frame sweep of
:mod:`sims.linear_hessian.spectrum`).
"""
from __future__ import annotations

import jax
import numpy as np

import sims  # noqa: F401  (float64)
from theory import validate as V
from theory.linear_hessian import validate_widths

__all__ = ["class_means_data", "projected_data", "min_norm_balanced_minimum"]

_RANK_RTOL = 1e-10  # singular values below this fraction of the largest are round-off zeros


def _stream(key) -> np.random.Generator:
    # a NumPy generator seeded by the typed key's raw bits: one key, one reproducible stream, and no
    # compilation of JAX samplers or key splits (these constructors run eagerly, once per case)
    return np.random.default_rng(np.asarray(jax.random.key_data(key)).ravel().tolist())


def _haar(rng: np.random.Generator, n: int, m: int) -> np.ndarray:
    """``n x m`` with orthonormal columns, Haar distributed."""
    q, r = np.linalg.qr(rng.normal(size=(n, n)))
    return (q * np.sign(np.diag(r)))[:, :m]


def _counts(counts) -> np.ndarray:
    return V.integers("counts", counts, ndim=1, low=1)  # samples per class


def class_means_data(key, counts, d0: int, radius: float, *, max_bytes=None) -> tuple[np.ndarray, np.ndarray]:
    r"""Inputs at orthogonal class means of norm ``radius`` and one-hot labels, samples grouped by class.

    :math:`X=r\,O\,Y` with :math:`O\in\mathbb R^{d_0\times K}` orthonormal columns (Haar, ``key``)
    and :math:`Y\in\{0,1\}^{K\times n}` one-hot (class sizes ``counts``). Hence
    :math:`\Sigma_{xx}=r^2O\operatorname{diag}(p)O^\top` (rank :math:`K`; :math:`p_c=n_c/n`),
    :math:`\Sigma_{yx}=r\operatorname{diag}(p)O^\top` and the labels are fit exactly by
    :math:`W=O^\top/r`. Needs :math:`K\le d_0`. ``max_bytes``: the allocation limit
    (:func:`theory.validate.byte_limit`) for ``X``, ``Y`` and the Haar factor.
    """
    V.key("key", key)
    c = _counts(counts)
    K = c.size
    d0 = V.integer("d0", d0, low=K)
    n = int(c.sum())
    V.check_bytes({"counts": f"n = {n} samples", "d0": d0}, 8 * (2 * d0 * n + 2 * K * n + 3 * d0 * d0),
                  what="X, Y and the Haar draw", max_bytes=max_bytes)
    r = V.real("radius", radius, low=0.0, low_open=True)
    Y = np.repeat(np.eye(K), c, axis=1)
    O = _haar(_stream(key), d0, K)
    return r * O @ Y, Y


def projected_data(key, d0: int, n: int, input_rank: int, *, alpha: float = 1.0, dL: int | None = None,
                   rank: int | None = None, counts=None, max_bytes=None) -> tuple[np.ndarray, np.ndarray]:
    r"""Inputs whitened on a subspace, :math:`XX^\top=n\alpha P` with :math:`\operatorname{rank}P=m` (``input_rank``).

    :math:`X=\sqrt{n\alpha}\,O_mQ^\top` with :math:`O_m\in\mathbb R^{d_0\times m}` and
    :math:`Q\in\mathbb R^{n\times m}` orthonormal columns (Haar). Labels: one-hot with class sizes
    ``counts`` (then the first :math:`K` columns of :math:`Q` are the normalized class indicators,
    so the labels are fit exactly and :math:`\Sigma_{yx}` has singular values
    :math:`\sqrt{\alpha\pi_k}`), or else generic Gaussian labels :math:`Y=BZ` of rank ``rank``
    with ``dL`` rows (a non-zero residual at the minimum). Needs :math:`m\le\min(d_0,n)`. ``max_bytes``: the
    allocation limit (:func:`theory.validate.byte_limit`) for ``X``, ``Y`` and the Haar draws.
    """
    V.key("key", key)
    n = V.integer("n", n, low=1)
    d0 = V.integer("d0", d0, low=1)
    dl = 1 if dL is None or isinstance(dL, bool) or not isinstance(dL, (int, np.integer)) else max(int(dL), 1)
    V.check_bytes({"n": n, "d0": d0, "dL": dl}, 8 * (3 * d0 * n + 3 * d0 * d0 + 3 * n * n + 2 * dl * n),
                  what="X, Y and the Haar draws (n x n at most)", max_bytes=max_bytes)
    m = V.integer("input_rank", input_rank, low=1, high=min(d0, n))
    alpha = V.real("alpha", alpha, low=0.0, low_open=True)
    rng = _stream(key)
    O = _haar(rng, d0, m)
    if counts is not None:
        c = _counts(counts)
        if int(c.sum()) != n:
            raise ValueError(f"counts: class sizes must sum to n = {n}, got {int(c.sum())}")
        if c.size > m:
            raise ValueError(f"counts: {c.size} classes need input_rank >= {c.size} to be fit exactly, got {m}")
        Y = np.repeat(np.eye(c.size), c, axis=1)
        ind = Y.T / np.sqrt(c)
        G = rng.normal(size=(n, m - c.size))
        G = G - ind @ (ind.T @ G)
        Q = np.concatenate([ind, np.linalg.qr(G)[0]], axis=1) if m > c.size else ind
    else:
        dL = V.integer("dL", 1 if dL is None else dL, low=1)
        rank = V.integer("rank", min(m, dL) if rank is None else rank, low=1, high=min(m, dL))
        Q = _haar(rng, n, m)
        Y = rng.normal(size=(dL, rank)) @ rng.normal(size=(rank, n))
    return np.sqrt(n * alpha) * O @ Q.T, Y


def min_norm_balanced_minimum(key, X, Y, widths, *, max_bytes=None) -> np.ndarray:
    r"""The balanced factorization of :math:`W^*=\Sigma_{yx}\Sigma_{xx}^{+}`, as a flat parameter vector.

    :math:`W^*=USV^\top` (the :math:`r` non-zero singular triplets, relative cutoff :math:`10^{-10}`)
    is factored as :math:`W_l=P_lS^{1/L}P_{l-1}^\top` with :math:`P_0=V`, :math:`P_L=U` and Haar
    :math:`P_l\in\mathbb R^{d_l\times r}` on hidden layers (``key``), so
    :math:`W_{l+1}^\top W_{l+1}=W_lW_l^\top`. The normal equations
    :math:`W^*\Sigma_{xx}=\Sigma_{yx}\Sigma_{xx}^+\Sigma_{xx}=\Sigma_{yx}` hold because the rows of
    :math:`\Sigma_{yx}` lie in the range of :math:`\Sigma_{xx}`: this is a global minimum even
    when :math:`X` is rank deficient. Needs every hidden width :math:`\ge r` (A3). ``max_bytes``: the allocation
    limit (:func:`theory.validate.byte_limit`) for the parameters and the hidden layers' Haar draws.
    """
    V.key("key", key)
    w = validate_widths(widths)
    V.check_bytes({"widths": w}, 8 * (2 * sum(a * b for a, b in zip(w[:-1], w[1:])) + 3 * sum(d * d for d in w[1:-1])),
                  what="the parameters and the hidden layers' Haar draws", max_bytes=max_bytes)
    X = V.array("X", X, shape=(w[0], None))
    Y = V.array("Y", Y, shape=(w[-1], X.shape[1]))
    n, L = X.shape[1], len(w) - 1
    Sxx, Syx = X @ X.T / n, Y @ X.T / n
    Wstar = Syx @ np.linalg.pinv(Sxx, rcond=_RANK_RTOL, hermitian=True)
    U, s, Vt = np.linalg.svd(Wstar, full_matrices=False)
    r = int(np.sum(s > _RANK_RTOL * s[0])) if s[0] > 0 else 0
    if r == 0:
        raise ValueError("Y: the labels have no component in the row space of X (W* = 0); nothing to factor")
    if min(w[1:-1], default=r) < r:
        raise ValueError(f"widths: hidden width {min(w[1:-1])} < rank r = {r} of W*: a bottleneck (A3 fails)")
    rng = _stream(key)
    frames = [Vt[:r].T] + [_haar(rng, w[l], r) for l in range(1, L)] + [U[:, :r]]
    root = s[:r] ** (1.0 / L)
    return np.concatenate([(frames[l] @ (root[:, None] * frames[l - 1].T)).ravel() for l in range(1, L + 1)])
