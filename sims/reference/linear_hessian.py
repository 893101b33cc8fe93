r"""NumPy references for the linear-network Hessian topic, and its benchmark cases.

* :func:`numpy_hvp` -- the Hessian-vector product of the deep linear net written out by hand
  (product rule on :math:`\nabla_{W_l}\mathcal L=A_l^\top RB_l^\top`), batched over directions;
* :func:`numpy_dense_hessian` -- the dense Hessian from the analytic HVP on every basis vector;
* :func:`numpy_lanczos` -- Lanczos with full reorthogonalization in NumPy (no restarts);
* :func:`numpy_train_gd` -- full-batch GD on the deep linear net, vectorized over step sizes.

They share no code with the JAX path (autodiff through :mod:`sims.hvp`), so agreement between the
two is evidence for both. :func:`bench_cases` times the top Hessian eigenvalue of an unbalanced
deep linear net at a global minimum, JAX (HVP-Lanczos and dense) against NumPy, as :math:`P` grows
(the dense NumPy side asks LAPACK for the top eigenvalue alone through ``scipy.linalg.eigvalsh``,
as the JAX side does).
"""
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import scipy.linalg

import sims  # noqa: F401  (float64)
from sims import hvp as H
from sims import linear_hessian as S
from theory import validate as V
from theory.linear_hessian import validate_widths

__all__ = ["numpy_hvp", "numpy_dense_hessian", "numpy_lanczos", "numpy_balanced_minimum", "numpy_train_gd",
           "bench_cases", "SCALES"]

SCALES = ("small", "large")


def _np_chain(mats: list[np.ndarray], lo: int, hi: int, eye_dim: int) -> np.ndarray:
    # W_hi ... W_lo (0-based, inclusive); identity of size eye_dim when empty
    out = np.eye(eye_dim)
    for l in range(lo, hi + 1):
        out = mats[l] @ out
    return out


def numpy_hvp(theta: np.ndarray, V_: np.ndarray, Sxx: np.ndarray, Syx: np.ndarray, widths) -> np.ndarray:
    r"""Analytic :math:`Hv` of the deep linear net in NumPy; ``V_`` may carry leading batch axes ``(..., P)``.

    :math:`\mathcal L=\tfrac12\operatorname{tr}(W\Sigma_{xx}W^\top)-\operatorname{tr}(\Sigma_{yx}^\top W)+c`,
    :math:`\nabla_{W_l}=A_l^\top RB_l^\top` with :math:`R=W\Sigma_{xx}-\Sigma_{yx}`; its directional
    derivative is :math:`\dot A_l^\top RB_l^\top+A_l^\top\dot W\Sigma_{xx}B_l^\top+A_l^\top R\dot B_l^\top`
    with :math:`\dot W=\sum_kA_kV_kB_k` and :math:`\dot A_l,\dot B_l` the sums over the layer replaced.
    """
    w = validate_widths(widths)
    L = len(w) - 1
    P = sum(w[l] * w[l - 1] for l in range(1, L + 1))
    theta = V.array("theta", theta, shape=(P,))
    V_ = V.array("V_", V_)
    if V_.shape[-1] != P:
        raise ValueError(f"V_: expected directions of length P = {P} in the last axis, got shape {V_.shape}")
    Sxx = V.array("Sxx", Sxx, shape=(w[0], w[0]))
    Syx = V.array("Syx", Syx, shape=(w[-1], w[0]))
    shapes = [(w[l], w[l - 1]) for l in range(1, L + 1)]
    offs = np.cumsum([0] + [a * b for a, b in shapes])
    mats = [theta[offs[l]:offs[l + 1]].reshape(shapes[l]) for l in range(L)]
    dirs = [V_[..., offs[l]:offs[l + 1]].reshape(V_.shape[:-1] + shapes[l]) for l in range(L)]
    A = [_np_chain(mats, l + 1, L - 1, w[l + 1]) for l in range(L)]   # A[l] = W_L ... W_{l+2} (0-based l)
    B = [_np_chain(mats, 0, l - 1, w[0]) for l in range(L)]           # B[l] = W_l ... W_1
    W = A[0] @ mats[0]
    R = W @ Sxx - Syx
    dW = sum(A[k] @ dirs[k] @ B[k] for k in range(L))
    dR = dW @ Sxx
    out = []
    for l in range(L):
        dA = 0.0
        for k in range(l + 1, L):   # replace W_k in A_l = W_L ... W_{l+1}
            dA = dA + _np_chain(mats, k + 1, L - 1, w[k + 1]) @ dirs[k] @ _np_chain(mats, l + 1, k - 1, w[l + 1])
        dB = 0.0
        for k in range(l):          # replace W_k in B_l = W_{l-1} ... W_1
            dB = dB + _np_chain(mats, k + 1, l - 1, w[k + 1]) @ dirs[k] @ _np_chain(mats, 0, k - 1, w[0])
        term = A[l].T @ dR @ B[l].T
        if l + 1 < L:
            term = term + np.swapaxes(dA, -1, -2) @ R @ B[l].T
        if l > 0:
            term = term + A[l].T @ R @ np.swapaxes(dB, -1, -2)
        out.append(term.reshape(V_.shape[:-1] + (-1,)))
    return np.concatenate(out, axis=-1)


def numpy_dense_hessian(theta, Sxx, Syx, widths, *, max_bytes=None) -> np.ndarray:
    r"""Dense Hessian from the analytic HVP applied to every basis vector at once (batched), symmetrized.

    ``max_bytes``: the allocation limit (:func:`theory.validate.byte_limit`) for the basis, the products and the
    symmetrized copy, :math:`P\times P` each.
    """
    P = np.asarray(theta).size
    V.check_bytes({"theta": f"P = {P}"}, 6 * 8 * P * P, what="the P x P basis, HVPs and symmetrized copy",
                  max_bytes=max_bytes)
    Hm = numpy_hvp(theta, np.eye(P), Sxx, Syx, widths)
    return 0.5 * (Hm + Hm.T)


def numpy_lanczos(v0: np.ndarray, matvec, num_iter: int) -> np.ndarray:
    """NumPy Lanczos with full reorthogonalization (stops at breakdown; no restart): ascending Ritz values."""
    v0 = V.array("v0", v0, ndim=1)
    if not np.linalg.norm(v0) > 0:
        raise ValueError("v0: expected a non-zero start vector")
    if not callable(matvec):
        raise TypeError(f"matvec: expected a callable v -> Hv, got {type(matvec).__name__}")
    dim = v0.size
    num_iter = V.integer("num_iter", num_iter, low=1, high=dim)
    basis = np.zeros((num_iter + 1, dim))
    basis[0] = v0 / np.linalg.norm(v0)
    alpha, beta = np.zeros(num_iter), np.zeros(num_iter)
    for i in range(num_iter):
        w = np.asarray(matvec(basis[i]), dtype=float)
        if not np.all(np.isfinite(w)):  # a NaN product would turn into NaN Ritz values without a word
            raise ValueError(f"matvec: returned non-finite values (NaN or inf) at Lanczos step {i}")
        alpha[i] = basis[i] @ w
        w = w - basis.T @ (basis @ w)
        w = w - basis.T @ (basis @ w)
        beta[i] = np.linalg.norm(w)
        if beta[i] < 1e-13:
            break
        basis[i + 1] = w / beta[i]
    m = i + 1
    T = np.diag(alpha[:m]) + np.diag(beta[:m - 1], 1) + np.diag(beta[:m - 1], -1)
    return np.linalg.eigvalsh(T)


# ----------------------------------------------------------------------------------------------
# benchmark: top eigenvalue by HVP-Lanczos and by the dense Hessian, JAX vs NumPy, as P grows
# ----------------------------------------------------------------------------------------------

def numpy_balanced_minimum(rng: np.random.Generator, X, Y, widths, gauge: float = 0.0, *,
                           max_bytes=None) -> np.ndarray:
    r"""A global minimum of the deep linear net in NumPy: balanced, then optionally unbalanced by a random gauge.

    :math:`W^*=\Sigma_{yx}\Sigma_{xx}^{-1}=USV^\top` is factored as :math:`W_l=P_lS^{1/L}P_{l-1}^\top`
    with :math:`P_0=V`, :math:`P_L=U` and Haar hidden frames (the top :math:`k=\min_ld_l` triplets),
    then :math:`W_l\to G_lW_l`, :math:`W_{l+1}\to W_{l+1}G_l^{-1}` with
    :math:`G_l=I+\text{gauge}\,N_l/\sqrt{d_l}` (the product is unchanged). ``max_bytes``: the allocation limit
    (:func:`theory.validate.byte_limit`) for the parameters and the hidden frames.
    """
    w = validate_widths(widths)
    X = V.array("X", X, shape=(w[0], None))
    Y = V.array("Y", Y, shape=(w[-1], X.shape[1]))
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng: expected a numpy.random.Generator (np.random.default_rng(seed)), got {type(rng).__name__}")
    gauge = V.real("gauge", gauge, low=0.0)  # the sign of gauge is the sign of N_l, whose law is symmetric
    V.check_bytes({"widths": w}, 8 * (2 * sum(a * b for a, b in zip(w[:-1], w[1:])) + 4 * sum(d * d for d in w[1:-1])),
                  what="the parameters, the hidden layers' Haar frames and gauges", max_bytes=max_bytes)
    L, k, n = len(w) - 1, min(w), X.shape[1]
    Wstar = np.linalg.solve((X @ X.T / n).T, (Y @ X.T / n).T).T
    U, s, Vt = np.linalg.svd(Wstar, full_matrices=False)
    s = np.where(s > 1e-12 * s[0], s, 0.0)
    frames = [Vt[:k].T] + [np.linalg.qr(rng.normal(size=(w[l], w[l])))[0][:, :k] for l in range(1, L)] + [U[:, :k]]
    mats = [frames[l] @ (s[:k, None] ** (1.0 / L) * frames[l - 1].T) for l in range(1, L + 1)]
    for l in range(L - 1):
        G = np.eye(w[l + 1]) + gauge * rng.normal(size=(w[l + 1], w[l + 1])) / np.sqrt(w[l + 1])
        mats[l] = G @ mats[l]
        mats[l + 1] = np.linalg.solve(G.T, mats[l + 1].T).T
    return np.concatenate([m.ravel() for m in mats])


@functools.lru_cache(maxsize=None)
def _bench_problem(widths: tuple[int, ...], seed: int):
    # whitened inputs, generic rank-min(widths) labels, an unbalanced global minimum (gauge 0.3)
    rng = np.random.default_rng(seed)
    d0, dL, n = widths[0], widths[-1], 4 * widths[0]
    X = np.sqrt(n) * np.linalg.qr(rng.normal(size=(n, d0)))[0].T
    r = min(widths)
    Y = rng.normal(size=(dL, r)) @ rng.normal(size=(r, n))
    theta = numpy_balanced_minimum(rng, X, Y, widths, gauge=0.3)
    return jnp.asarray(theta), jnp.asarray(X), jnp.asarray(Y), X @ X.T / n, Y @ X.T / n


def _run_jax_lanczos(widths: tuple[int, ...], num_iter: int):
    theta, X, Y, _, _ = _bench_problem(widths, 0)
    return _jax_lanczos_top(theta, X, Y, widths=widths, num_iter=num_iter)


@functools.partial(jax.jit, static_argnames=("widths", "num_iter"))
def _jax_lanczos_top(theta, X, Y, *, widths, num_iter):
    # the simulator's own route (sims.linear_hessian.top_eigenvalues: HVP of the second-moment loss)
    return S.top_eigenvalues(jax.random.key(1), theta, X, Y, widths, k=1, num_iter=num_iter)[0]


def _run_jax_dense(widths: tuple[int, ...]):
    theta, X, Y, _, _ = _bench_problem(widths, 0)
    return _jax_dense_top(theta, X, Y, widths=widths)


@functools.partial(jax.jit, static_argnames=("widths",))
def _jax_dense_top(theta, X, Y, *, widths):
    # eigenvalues only (jnp.linalg.eigvalsh also forms the eigenvectors on CPU; NumPy's does not)
    return H.largest_eigenvalue(S.dense_hessian(theta, X, Y, widths))


def _run_numpy_lanczos(widths: tuple[int, ...], num_iter: int):
    theta, _, _, Sxx, Syx = _bench_problem(widths, 0)
    # the JAX side's start vector (sims.hvp.lanczos draws it from the first half of its key): the same
    # algorithm from the same start, so the two top Ritz values agree to round-off even where 40 steps
    # have not converged (P = 163840: the two starts' Ritz values differ by 1.4e-6 relative)
    v0 = np.asarray(jax.random.normal(jax.random.split(jax.random.key(1))[0], (theta.size,)))
    hv = functools.partial(numpy_hvp, np.asarray(theta), Sxx=Sxx, Syx=Syx, widths=widths)
    return np.float64(numpy_lanczos(v0, hv, num_iter)[-1])


def _run_numpy_dense(widths: tuple[int, ...]):
    theta, _, _, Sxx, Syx = _bench_problem(widths, 0)
    Hm = numpy_dense_hessian(np.asarray(theta), Sxx, Syx, widths)
    # the top eigenvalue alone, as the JAX side computes it: LAPACK's selected-eigenvalue driver (dsyevx:
    # tridiagonal reduction, then bisection for the one eigenvalue asked for, no vectors); faster than
    # numpy.linalg.eigvalsh, which finds all P eigenvalues (P = 640: 9 ms against 12 ms)
    P = Hm.shape[0]
    return np.float64(scipy.linalg.eigvalsh(Hm, subset_by_index=[P - 1, P - 1], driver="evx", overwrite_a=True,
                                            check_finite=False)[0])


def numpy_train_gd(theta0, X, Y, widths, etas, steps: int, *, max_bytes=None) -> tuple[np.ndarray, np.ndarray]:
    r"""GD :math:`\theta\leftarrow\theta-\eta\nabla\mathcal L` on the deep linear net, one run per step size, in NumPy.

    Vectorized over ``etas`` (batched matrix products, one Python iteration per step), with the
    gradient from second moments as in the JAX simulator:
    :math:`\nabla_{W_l}=A_l^\top(W\Sigma_{xx}-\Sigma_{yx})B_l^\top`, prefix products
    :math:`B_l=W_{l-1}\cdots W_1` and suffix products :math:`A_l=W_L\cdots W_{l+1}` built once per
    step. Returns the final parameter vectors ``(len(etas), P)`` and the final losses (from the
    data). No divergence handling: give step sizes that converge. ``max_bytes``: the allocation limit
    (:func:`theory.validate.byte_limit`) for every run's parameters, products and gradients.
    """
    w = validate_widths(widths)
    P = sum(w[l] * w[l - 1] for l in range(1, len(w)))
    theta0 = V.array("theta0", theta0, shape=(P,))
    X = V.array("X", X, shape=(w[0], None))
    Y = V.array("Y", Y, shape=(w[-1], X.shape[1]))
    etas = V.array("etas", etas, ndim=1, low=0.0, low_open=True)
    steps = V.integer("steps", steps, low=1)
    V.check_bytes({"etas": f"{etas.size} runs", "widths": w}, 8 * 8 * etas.size * (P + sum(d * d for d in w)),
                  what="every run's parameters, prefix/suffix products and gradients", max_bytes=max_bytes)
    n, B, L = X.shape[1], etas.size, len(w) - 1
    Sxx, Syx = X @ X.T / n, Y @ X.T / n
    shapes = [(w[l], w[l - 1]) for l in range(1, L + 1)]
    offs = np.cumsum([0] + [a * b for a, b in shapes])
    mats = [np.broadcast_to(theta0[offs[l]:offs[l + 1]].reshape(shapes[l]), (B,) + shapes[l]).copy()
            for l in range(L)]
    scale = etas[:, None, None]
    eye_in, eye_out = np.broadcast_to(np.eye(w[0]), (B, w[0], w[0])), np.broadcast_to(np.eye(w[-1]), (B, w[-1], w[-1]))
    for _ in range(steps):
        pre = [eye_in]                    # pre[l] = W_l ... W_1 (pre[0] = I)
        for W in mats:
            pre.append(W @ pre[-1])
        suf = [eye_out]                   # suf[k] = W_L ... W_{L-k+1}
        for W in mats[::-1]:
            suf.append(suf[-1] @ W)
        R = pre[-1] @ Sxx - Syx
        grads = [np.swapaxes(suf[L - 1 - l], -1, -2) @ R @ np.swapaxes(pre[l], -1, -2) for l in range(L)]
        for l in range(L):
            mats[l] -= scale * grads[l]
    h = np.broadcast_to(X, (B,) + X.shape)
    for W in mats:
        h = W @ h
    loss = 0.5 * np.sum((h - Y) ** 2, axis=(1, 2)) / n
    return np.concatenate([m.reshape(B, -1) for m in mats], axis=1), loss


@functools.lru_cache(maxsize=None)
def _train_problem(widths: tuple[int, ...], runs: int, seed: int):
    # whitened one-hot class data, one small init shared by every run, step sizes spread below eta_c
    rng = np.random.default_rng(seed)
    n, K = 100, widths[-1]
    counts = np.full(K, n // K)
    counts[0] += n - counts.sum()
    Y = np.repeat(np.eye(K), counts, axis=1)
    ind = Y.T / np.sqrt(counts)
    G = rng.normal(size=(n, widths[0] - K))
    G -= ind @ (ind.T @ G)
    X = np.sqrt(n) * np.concatenate([ind, np.linalg.qr(G)[0]], axis=1).T
    theta0 = 0.05 * rng.normal(size=S.n_params(widths))
    L = len(widths) - 1
    eta_c = 2.0 / (L * (counts.max() / n) ** (1 - 1 / L))
    etas = eta_c * np.linspace(0.3, 0.9, runs)
    return theta0, X, Y, etas


_TRAIN_CHUNK = 256  # step sizes per gd_sweep call: one compiled shape, and --max-seconds can stop between calls


def _run_jax_train(widths: tuple[int, ...], runs: int, steps: int):
    theta0, X, Y, etas = _train_problem(widths, runs, 0)
    parts = []
    for lo in range(0, runs, _TRAIN_CHUNK):
        out = S.gd_sweep(theta0, X, Y, widths, etas[lo:lo + _TRAIN_CHUNK], steps=steps)
        parts.append(jnp.concatenate([out["theta"], out["loss"][:, None]], axis=1))
    return jnp.concatenate(parts)


def _run_numpy_train(widths: tuple[int, ...], runs: int, steps: int):
    theta0, X, Y, etas = _train_problem(widths, runs, 0)
    theta, loss = numpy_train_gd(theta0, X, Y, widths, etas, steps)
    return np.concatenate([theta, loss[:, None]], axis=1)


def _close_train(a, b):
    # the same float64 GD iteration in a different order of operations: round-off ~1e-13 relative
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-7, atol=1e-12)


def _close(a, b):
    # Lanczos against Lanczos from the same start vector: the same float64 recursion, round-off apart;
    # Lanczos against a dense eigensolve: 40 steps converge the isolated top value to << 1e-8 (P <= 5760)
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-8)


def bench_cases(scale: str) -> list:
    """Top Hessian eigenvalue of an unbalanced deep linear net at a global minimum, as :math:`P` grows; and a GD sweep.

    ``scale``: ``"small"`` (CPU, seconds) or ``"large"`` (GPU-sized). Each case pairs the JAX path
    (jitted, autodiff through :mod:`sims.hvp`) with the NumPy reference on the same problem and
    checks that they agree. Problems are built on first use (listing the cases is free).
    """
    from sims.bench import BenchCase

    scale = V.choice("scale", scale, SCALES)
    train_widths, train_runs, train_steps = ((6, 4, 3), 256, 400) if scale == "small" else ((32, 32, 10), 4096, 1000)
    # a GD step from second moments: prefix and suffix products and the gradient of each layer (about three
    # products of each layer's size with d_0-column moments, 2 flops per multiply-add)
    d0 = train_widths[0]
    step_flops = 3 * 2.0 * d0 * sum(a * b for a, b in zip(train_widths[:-1], train_widths[1:]))
    cases_train = [BenchCase(f"linear_hessian GD sweep {train_runs} runs x {train_steps} steps, widths {train_widths}",
                             "GD steps", float(train_runs * train_steps),
                             functools.partial(_run_jax_train, train_widths, train_runs, train_steps),
                             functools.partial(_run_numpy_train, train_widths, train_runs, train_steps), _close_train,
                             cost={"matmul_flop": step_flops})]
    if scale == "small":
        sizes, dense_max = [(8, 8, 8, 4), (16, 16, 16, 8), (32, 32, 32, 16)], 2000
        # the matrix-free route against the dense one a NumPy user would take: every Hessian column, then the top
        # eigenvalue by LAPACK (scipy.linalg.eigvalsh, selected eigenvalue only)
        versus = [(16, 16, 16, 8), (32, 32, 32, 16), (48, 48, 48, 24)]
    else:
        sizes, dense_max = [(32, 32, 32, 16), (128, 128, 128, 64), (256, 256, 256, 128)], 12000
        # the NumPy side is one LAPACK call that --max-seconds cannot interrupt, so P stays where it finishes
        versus = [(32, 32, 32, 16), (48, 48, 48, 24), (64, 64, 64, 32)]
    iters = 40
    cases = []
    for widths in sizes:
        P = S.n_params(widths)
        m = min(iters, P)
        cases.append(BenchCase(f"linear_hessian lanczos top eig P={P}", "HVP (Lanczos steps)", float(m),
                               functools.partial(_run_jax_lanczos, widths, m),
                               functools.partial(_run_numpy_lanczos, widths, m), _close,
                               cost={"matmul_flop": _hvp_flops(widths)}))
        if P <= dense_max:
            cases.append(BenchCase(f"linear_hessian dense top eig P={P}", "Hessian columns", float(P),
                                   functools.partial(_run_jax_dense, widths),
                                   functools.partial(_run_numpy_dense, widths), _close,
                                   cost={"matmul_flop": _hvp_flops(widths) + 4.0 * P**2 / 3}))
    for widths in versus:
        P = S.n_params(widths)
        cases.append(BenchCase(f"linear_hessian top eig P={P}: JAX HVP-Lanczos vs NumPy dense eigvalsh",
                               "top eigenvalues", 1.0, functools.partial(_run_jax_lanczos, widths, iters),
                               functools.partial(_run_numpy_dense, widths), _close,
                               cost={"matmul_flop": iters * _hvp_flops(widths)}))
    return cases + cases_train


def _hvp_flops(widths: tuple[int, ...]) -> float:
    r"""Matrix-product flops of one Hessian-vector product of the second-moment loss by forward-over-reverse
    autodiff: about 4 passes (value, gradient and their tangents) through the chain of layers applied to the
    :math:`d_0` columns of :math:`\Sigma_{xx}`, :math:`4\cdot 2d_0\sum_l d_l d_{l-1}`."""
    return 4.0 * 2 * widths[0] * sum(a * b for a, b in zip(widths[:-1], widths[1:]))
