r"""Signum (signSGD with momentum): the floor constant from the transfer operator of its chain.

The operator on (position, momentum) cells, its stationary law by power iteration or Arnoldi (with the
BLAS threads pinned), and :func:`signum_constant`.
"""
from __future__ import annotations

import contextlib
import functools
import math
from typing import NamedTuple

import numpy as np
from scipy import fft, sparse, special

from theory import validate as V
from theory.sign_floor.additive import _cdf, student_density_at_zero
from theory.sign_floor.multiplicative import _law

__all__ = ["SignumConstant", "ARNOLDI_FLOATS", "MAX_STATES", "signum_constant"]


# ----------------------------------------------------------------------------- Signum: the floor constant
class SignumConstant(NamedTuple):
    r"""The Signum floor constant :math:`C = E_\pi f/(a\eta^2)` of :func:`signum_constant`, with its error budget.

    ``value``: :math:`C` on the fine grid; ``err``: the discretisation-error estimate (fine minus coarse
    grid, plus the offset quadrature's change where ``offset = "uniform"``); ``leak``: the stationary mass
    that leaves the truncated state space per step (lattice index beyond :math:`\pm N`, buffer beyond
    :math:`\pm W`), which the iteration renormalises away; ``n_max`` (:math:`N`) and ``w_max``
    (:math:`W/a`, the buffer range in units of :math:`a\eta`); ``cells``: cells per :math:`a\min(\beta, 1-\beta)`
    of the buffer on the fine grid.
    """

    value: float
    err: float
    leak: float
    n_max: int
    w_max: float
    cells: int


def _cdf_antiderivative(x: np.ndarray, law: str, df: float | None) -> np.ndarray:
    r"""An antiderivative :math:`G` of the noise CDF, :math:`G' = F_\xi` (defined up to a constant).

    Gaussian: :math:`G(x) = x\Phi(x) + \varphi(x)`. Uniform on :math:`[-1, 1]`: :math:`0`,
    :math:`(x+1)^2/4`, :math:`x` on :math:`x < -1`, :math:`|x| \le 1`, :math:`x > 1`. Student-t with any
    real :math:`\nu > 0`: :math:`G(x) = xF(x) - \int_0^x t f(t)\,dt` (integration by parts), where
    :math:`\int_0^x t f(t)\,dt = k_\nu\frac{\nu}{1-\nu}\big[(1 + x^2/\nu)^{(1-\nu)/2} - 1\big]`
    (:math:`\tfrac{k_1}{2}\log(1+x^2)` at :math:`\nu = 1`), :math:`k_\nu = f(0)`: finite for every
    :math:`\nu`, although :math:`\int_{-\infty}^x F` diverges for :math:`\nu \le 1`. Only second differences
    of :math:`G` are used, so the constant does not matter.
    """
    if law == "gaussian":
        return x * special.ndtr(x) + np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)
    if law == "uniform":
        return np.where(x < -1, 0.0, np.where(x > 1, x, (x + 1) ** 2 / 4))
    k = student_density_at_zero(df)
    half = (1.0 - df) / 2.0
    log1p = np.log1p(x * x / df)
    if abs(half) < 1e-12:
        inner = k / 2 * log1p
    else:
        inner = k * df / (1.0 - df) * np.expm1(half * log1p)
    return x * special.stdtr(df, x) - inner


def _noise_quantile(law: str, df: float | None, tail: float) -> float:
    """The level q with P(|xi| > q) = tail (the uniform law: 1, its support), capped at 20 for heavy tails."""
    if law == "uniform":
        return 1.0
    if law == "gaussian":
        return float(-special.ndtri(tail / 2))
    return min(20.0, float(-special.stdtrit(df, tail / 2)))


class _SignumOperator(NamedTuple):
    r"""The truncated Signum transfer operator of :func:`_signum_operator`.

    ``step(P)``: one step of the whole law ``P[row, cell]`` (row :math:`r = n + N`), returning
    ``(P', (leak_w, leak_n))``; ``half(X, parity)``: one step of the rows of one parity alone (``X`` holds
    rows ``parity, parity + 2, ...``), returning the rows of the other parity it feeds (mass that leaves the
    box is dropped); ``shape``: ``(2N + 1, cells)``; ``u``: :math:`\theta + n` per row.
    """

    step: object
    shape: tuple
    u: np.ndarray
    half: object


def _signum_operator(beta, sigma, theta, law, df, a, h, n_max, w_max) -> _SignumOperator:
    r"""One step of the Signum chain on the truncated, discretised state space, as a function on mass arrays.

    State: lattice index :math:`n \in [-N, N]` (:math:`u = \theta + n`) and the buffer
    :math:`v = m/\eta` in cells of width ``h`` on :math:`[-W, W]` (0 is an edge), mass ``P[n, cell]``
    piecewise constant within cells. A step: the buffer's law is contracted by :math:`\beta` (the exact
    law of :math:`\beta v`, projected on the grid), convolved with the law of
    :math:`(1-\beta) a u (1 + \sigma\xi)` integrated over a source cell (second differences of
    :func:`_cdf_antiderivative`: a Toeplitz kernel per :math:`n`, applied by FFT), and split at
    :math:`v' = 0`: mass with :math:`v' > 0` moves to :math:`n - 1`, with :math:`v' < 0` to
    :math:`n + 1`. At :math:`\beta = 0` the contracted law is a point mass at 0 and the kernel is
    the exact cell law (differences of :math:`F_\xi`, the end cells taking the tails): the split at 0 is exact.

    Every step moves :math:`n` by :math:`\pm 1`, so the rows of one parity feed only the rows of the other:
    ``half`` advances one parity class at half the cost of ``step``. Returns a :class:`_SignumOperator`;
    ``step``'s ``leak`` is the mass that left the grid, as a pair (past :math:`\pm W`, past :math:`\pm N`).
    """
    m_half = int(math.ceil(w_max / h - 1e-9))  # W is a whole number of coarse cells, up to round-off
    edges = np.arange(-m_half, m_half + 1) * h
    cells_total = 2 * m_half  # cells m_half, m_half + 1, ... have v > 0
    n = np.arange(-n_max, n_max + 1)
    rows = len(n)
    u = theta + n
    mu = ((1 - beta) * a * u)[:, None]
    s = ((1 - beta) * sigma * a * np.abs(u))[:, None]
    if beta == 0:
        # v' = a u (1 + sigma xi) exactly: the cell law is a difference of CDFs (no source cell to average)
        cdf = _cdf((edges[None, :] - mu) / s, law, df)
        cdf[:, 0], cdf[:, -1] = 0.0, 1.0  # the end cells take the tails: the next step does not read v at beta = 0
        kernel = np.diff(cdf, axis=1)

        def transport(X, sel):
            return X.sum(axis=1, keepdims=True) * kernel[sel]
    else:
        offsets = np.arange(-(cells_total - 1), cells_total) * h  # target minus source cell centre
        x = offsets[None, :] - mu
        G = functools.partial(_cdf_antiderivative, law=law, df=df)
        kernel = np.maximum(s / h * (G((x + h) / s) - 2 * G(x / s) + G((x - h) / s)), 0.0)  # round-off can go below 0
        support = np.nonzero(kernel.max(axis=0) > 1e-18)[0]  # beyond: below round-off of the cell masses
        lo, hi = support[0], support[-1] + 1
        kernel = kernel[:, lo:hi]
        shift = lo - (cells_total - 1)  # offset, in cells, of the kernel's first entry
        start = -shift  # full-convolution index of target cell 0
        full_len = cells_total + kernel.shape[1] - 1
        lo_t, hi_t = max(0, start), min(full_len, start + cells_total)
        # a circular convolution of length L equals the full one, aliased mod L: the targets [lo_t, hi_t) are
        # free of aliasing once L >= hi_t and L >= full_len - lo_t (both inputs must also fit in L)
        length = fft.next_fast_len(max(cells_total, kernel.shape[1], hi_t, full_len - lo_t), real=True)
        kernel_f = fft.rfft(kernel, length, axis=1)
        # the law of beta v: its cell masses are a fixed linear map of the old ones (the old CDF piecewise linear
        # between edges, read at edges / beta): a sparse matrix, about 1 + 1/beta old cells per new cell
        t = np.clip(edges / beta, edges[0], edges[-1])
        first = np.clip(np.searchsorted(edges, t, side="right") - 1, 0, cells_total - 1)  # old cell holding t_j
        span = int((first[1:] - first[:-1]).max()) + 1  # old cells a new cell can overlap
        j = np.repeat(np.arange(cells_total), span)
        i = np.minimum(first[:-1, None] + np.arange(span)[None, :], cells_total - 1).ravel()

        def below(tt, ii):  # the share of old cell ii below tt
            return np.clip((tt - edges[ii]) / h, 0.0, 1.0)
        share = below(t[1:][j], i) - below(t[:-1][j], i)
        keep = (share > 0) & (np.arange(len(i)) % span <= first[1:][j] - first[:-1][j])  # no cell counted twice
        contract = sparse.csr_matrix((share[keep], (i[keep], j[keep])), shape=(cells_total, cells_total))

        def transport(X, sel):
            R = (contract.T @ X.T).T if X.shape[0] else X
            full = fft.irfft(fft.rfft(R, length, axis=1) * kernel_f[sel], length, axis=1)
            if lo_t - start == 0 and hi_t - start == cells_total:
                return full[:, lo_t:hi_t]
            C = np.zeros_like(X)
            C[:, lo_t - start:hi_t - start] = full[:, lo_t:hi_t]
            return C

    def step(P):
        return _split(transport(P, slice(None)), m_half, P.sum())

    def half(X, parity):
        # rows r = parity + 2i; v' > 0 moves r to r - 1, v' < 0 to r + 1 (both of the other parity)
        C = transport(X, slice(parity, None, 2))
        Y = np.zeros(((rows + parity) // 2, cells_total))
        if parity == 0:  # targets 1, 3, ...: row 2i - 1 is target i - 1, row 2i + 1 is target i
            Y[:, m_half:] = C[1:, m_half:]
            Y[:, :m_half] = C[:-1, :m_half]
        else:  # targets 0, 2, ...: row 2i + 1 - 1 is target i, row 2i + 1 + 1 is target i + 1
            Y[:-1, m_half:] = C[:, m_half:]
            Y[1:, :m_half] = C[:, :m_half]
        return Y
    return _SignumOperator(step, (rows, cells_total), u, half)


def _split(C: np.ndarray, m_half: int, total: float):
    r"""Move the buffer law ``C[n, cell]`` by its sign: :math:`v' > 0` (cells ``m_half`` on) to row n - 1,
    :math:`v' < 0` to row n + 1.

    Returns the new law and the mass lost per step past :math:`\pm W` (``total`` minus the mass of
    ``C``) and past :math:`\pm N` (the two rows that move off the lattice's box).
    """
    out = np.empty_like(C)
    out[:-1, m_half:] = C[1:, m_half:]
    out[-1, m_half:] = 0.0
    out[1:, :m_half] = C[:-1, :m_half]
    out[0, :m_half] = 0.0
    kept = C.sum()
    return out, (max(total - kept, 0.0), max(float(C[0, m_half:].sum() + C[-1, :m_half].sum()), 0.0))


def _signum_power(op, start=None, tol=1e-11, max_iter=50_000):
    r"""Power iteration to the stationary law; returns ``(C, P, (leak_w, leak_n))`` (leaks per step, relative).

    The chain has period 2 (every step moves :math:`n` by :math:`\pm 1`), so iterates alternate between
    the two parity classes; the average of two successive iterates converges to :math:`\pi` (each class
    carries mass 1/2, restored after every step). Stops when :math:`C = E_\pi[u^2]/2` changes by less than ``tol``
    relative. The reference of :func:`_signum_stationary` (slow near :math:`\beta = 1`: it converges at the rate of
    the chain's second eigenvalue).
    """
    step, shape, u = op.step, op.shape, op.u

    def halves(P):
        # each parity class of n carries mass 1/2 at stationarity; renormalising each class on its own keeps a
        # leak that differs between the classes from making the two-step average oscillate
        P = P.copy()
        P[0::2] *= 0.5 / P[0::2].sum()
        P[1::2] *= 0.5 / P[1::2].sum()
        return P

    if start is None:
        P = np.zeros(shape)
        P[shape[0] // 2, shape[1] // 2] = 0.5  # u = theta > 0 with v > 0, and u = theta - 1 < 0 with v < 0
        P[shape[0] // 2 - 1, shape[1] // 2 - 1] = 0.5
    else:
        P = halves(start)
    prev = None
    for _ in range(max_iter):
        Q, leak = step(P)
        Q = halves(Q)
        A = (P + Q) / 2
        c = float(A.sum(axis=1) @ (u * u) / 2)
        if prev is not None and abs(c - prev) <= tol * c:
            return c, A, leak
        prev = c
        P = Q
    raise ValueError(f"beta: the Signum chain did not converge in {max_iter} iterations (C = {c:.6g})")


ARNOLDI_FLOATS = 32_000_000  # the Krylov basis of one Signum solve: at most 256 MB (fewer vectors on larger grids)


def _perron_arnoldi(matvec, v0: np.ndarray, tol: float, m: int = 60, cycles: int = 25):
    r"""The eigenpair of largest modulus of a real linear map, by Arnoldi restarted from its Ritz vector.

    Each cycle builds an orthonormal Krylov basis :math:`V` of up to ``m`` vectors from the current guess
    (Gram--Schmidt twice, for orthogonality to round-off), :math:`M V_j = V_{j+1} \bar H_j`; the Ritz pair
    :math:`(\theta, V_j y)` of largest :math:`|\theta|` has the residual
    :math:`\|M x - \theta x\| = \bar H_{j+1, j} |y_j|` (:math:`\|x\| = \|y\| = 1`), which stops the
    cycle once below ``tol``; otherwise the next cycle starts from :math:`x`. Returns ``(theta, x, residual)``
    with the last residual reached (the caller checks it). ``m`` shrinks to keep the basis within
    :data:`ARNOLDI_FLOATS` numbers (Arnoldi converges in about 45 products here from a coarse grid's law, where the
    power iteration needs 3 to 6 times as many near :math:`\beta = 0.9`).
    """
    x = v0 / np.linalg.norm(v0)
    m = int(min(m, max(10, ARNOLDI_FLOATS // len(x)), len(x) - 1))  # the basis within its memory budget
    theta, res = np.nan, np.inf
    for _ in range(cycles):
        V = np.empty((m + 1, len(x)))
        H = np.zeros((m + 1, m))
        V[0] = x
        for j in range(m):
            w = matvec(V[j])
            norm_w = np.linalg.norm(w)
            h = V[:j + 1] @ w
            w -= h @ V[:j + 1]
            if np.linalg.norm(w) < 0.7 * norm_w:  # cancellation: orthogonalise again ("twice is enough")
                h2 = V[:j + 1] @ w
                w -= h2 @ V[:j + 1]
                h += h2
            H[:j + 1, j], H[j + 1, j] = h, np.linalg.norm(w)
            vals, vecs = np.linalg.eig(H[:j + 1, :j + 1])
            top = np.argmax(np.abs(vals))
            theta, y = vals[top], vecs[:, top]
            res = H[j + 1, j] * abs(y[-1]) / np.linalg.norm(y)
            if res <= tol * abs(theta) or H[j + 1, j] == 0.0:
                break
            V[j + 1] = w / H[j + 1, j]
        y = y / y[np.argmax(np.abs(y))]  # the phase: real at the largest entry (the Perron vector is real)
        x = V[:len(y)].T @ y.real
        x /= np.linalg.norm(x)
        if res <= tol * abs(theta) or abs(theta.imag) > 0:
            break
    return theta, x, res


@functools.cache
def _blas_controller():
    """threadpoolctl's view of the loaded BLAS libraries (scanned once: a scan reads the process's memory map), or
    None without threadpoolctl (installed with scikit-learn)."""
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:  # pragma: no cover - only without scikit-learn
        return None
    return ThreadpoolController()


def _one_blas_thread():
    """A context with BLAS on one thread: Gram--Schmidt's matrix-vector products are memory-bound, and a threaded
    BLAS on a busy machine stalls them (seen: 5 to 10 times slower on 2 shared cores)."""
    controller = _blas_controller()
    return contextlib.nullcontext() if controller is None else controller.limit(limits=1, user_api="blas")


def _signum_arnoldi(op, start, tol):
    r"""The stationary law as the Perron vector of the two-step operator on one parity class (Arnoldi).

    Two steps map the rows of the parity of :math:`n = 0` to themselves; the truncated chain's stationary law on
    them is that map's eigenvector of largest modulus (eigenvalue :math:`1 -` the leak, real and simple: the
    period-2 eigenvalue :math:`-1` of one step becomes the same eigenvalue 1 and leaves the class), one step of it
    gives the other class, and each class is normalised to mass 1/2 -- the fixed point of :func:`_signum_power`.
    ``tol``: the relative residual :math:`\|Mx - \lambda x\|/|\lambda|` of :func:`_perron_arnoldi`. Returns
    ``(C, P, (leak_w, leak_n))``, or None when the answer fails a check (no convergence, a complex or small
    eigenvalue, mass of both signs beyond round-off).
    """
    shape, p = op.shape, (op.shape[0] // 2) % 2  # row n + N of n = 0
    k = len(range(p, shape[0], 2))

    def two_steps(x):
        return op.half(op.half(x.reshape(k, shape[1]), p), 1 - p).ravel()

    if start is None:
        v0 = np.zeros((k, shape[1]))
        v0[k // 2, shape[1] // 2] = 1.0  # u = theta, v > 0
    else:
        v0 = start[p::2]
    if not v0.sum() > 0:
        return None
    with _one_blas_thread():
        lam, x, res = _perron_arnoldi(two_steps, v0.ravel(), tol)
    x = x * np.sign(x.sum())
    # lam: 1 minus the leak, up to the kernel's round-off (its second differences of G conserve mass to ~1e-9)
    if not (res <= tol * abs(lam) and lam.imag == 0 and 0.5 < lam.real < 1 + 1e-6
            and x.min() >= -1e-9 * x.max()):
        return None
    X = np.maximum(x, 0.0).reshape(k, shape[1])  # round-off below 0: the law is nonnegative
    Y = np.maximum(op.half(X, p), 0.0)  # FFT round-off leaves entries of order -1e-17
    if not Y.sum() > 0:
        return None
    P = np.zeros(shape)
    P[p::2], P[1 - p::2] = X * (0.5 / X.sum()), Y * (0.5 / Y.sum())
    _, leak = op.step(P)
    return float(P.sum(axis=1) @ (op.u * op.u) / 2), P, leak


def _signum_stationary(op, start=None, tol=1e-11, method="arnoldi"):
    r"""The stationary law of the Signum operator ``op``: ``(C, P, (leak_w, leak_n))``, leaks per step, relative.

    ``method``: ``"arnoldi"`` (:func:`_signum_arnoldi`, to a residual of ``tol`` / 100, which puts :math:`C`
    closer to its limit than the power iteration stopped at ``tol``; falls back to the power iteration when its
    answer fails a check) or ``"power"`` (:func:`_signum_power`, stopped when :math:`C` changes by less than
    ``tol`` relative). ``start``: a law on ``op``'s grid to start from.
    """
    if method == "arnoldi":
        out = _signum_arnoldi(op, start, tol / 100)
        if out is not None:
            return out
    return _signum_power(op, start, tol)


MAX_STATES = 4_000_000  # lattice rows x buffer cells of one Signum grid (32 MB per law array)


def _recentre(P: np.ndarray, shape: tuple) -> np.ndarray:
    """A law on a box of rows x cells, centred in a box of ``shape`` (the same cell width): padded with zeros, or
    cropped where the new box is smaller (a start for the next solve; both boxes are symmetric about n = 0, v = 0)."""
    out = np.zeros(shape)
    src, dst = [], []
    for have, want in zip(P.shape, shape):
        d = abs(want - have) // 2
        src.append(slice(0, have) if want >= have else slice(d, d + want))
        dst.append(slice(d, d + have) if want >= have else slice(0, want))
    out[tuple(dst)] = P[tuple(src)]
    return out


def _signum_at(beta, sigma, theta, law, df, a, cells, tol=1e-10, method="arnoldi"):
    r"""(fine, coarse, leak, N, W) at one offset ``theta``.

    N and W start small and grow on the coarse grid until each leak per step is below ``tol``: N from the
    measured geometric decay of the marginal law of n, W by half each time (W stops growing at 20 noise
    scales of the largest kernel: a heavy-tailed law keeps a reported leak instead of an unbounded grid).
    A leak of 1e-10 per step moves :math:`C` by far less than the grid error (the mass it removes sits at
    :math:`|u| \approx N`, and the chain forgets it within its mixing time). Each solve starts from the
    previous one's law (embedded in the grown box, split onto the finer cells). ``method``: that of
    :func:`_signum_stationary`.
    """
    # the buffer moves by (1 - beta) a u per step and its contracted law beta v spans beta |v|: resolve both
    h = a * min(beta, 1 - beta) / cells if beta > 0 else a / cells
    w_cap = a * (1 + (1 - beta) * sigma * _noise_quantile(law, df, tol))
    n_max, w_units = 8, 1.0  # W = w_units * a (N + 1)
    h_size = max(2 * h, a * min(beta, 1 - beta)) if beta > 0 else 2 * h  # the box is sized on a coarser grid
    P = None
    for _ in range(12):
        w_max = 2 * h * math.ceil(min(w_units, w_cap / a) * a * (n_max + 1) / (2 * h))
        states = (2 * n_max + 1) * 2 * round(w_max / h)
        if states > MAX_STATES:
            raise ValueError(f"cells, beta, sigma: the Signum grid would need {states:.3g} states (N = {n_max}, "
                             f"W = {w_max:.3g}); expected at most {MAX_STATES:.0e}: lower cells, beta or sigma")
        op = _signum_operator(beta, sigma, theta, law, df, a, h_size, n_max, w_max)
        _, P, (leak_w, leak_n) = _signum_stationary(op, None if P is None else _recentre(P, op.shape), tol=1e-8,
                                                    method=method)
        marg = P.sum(axis=1)
        grow_n = leak_n > tol or marg[:2].sum() + marg[-2:].sum() > tol
        grow_w = leak_w > tol and w_units * a < w_cap
        if not (grow_n or grow_w):
            break
        if grow_w:
            w_units *= 1.5
        if grow_n:
            tail = marg[n_max:][marg[n_max:] > 1e3 * tol]
            rho = min(max(tail[-1] / tail[-2], 0.05), 0.95) if len(tail) >= 3 else 0.7
            extra = math.log(tol / tail[-1]) / math.log(rho) if len(tail) else n_max
            n_max = max(n_max + 4, len(tail) + int(math.ceil(extra)) + 3)
    op = _signum_operator(beta, sigma, theta, law, df, a, 2 * h, n_max, w_max)
    # the sizing grid's law, split onto the coarse cells (h_size is a whole number of coarse cells)
    split = round(h_size / (2 * h))
    start = _recentre(np.repeat(P, split, axis=1) / split, op.shape) if beta > 0 else None
    coarse, P, leak_coarse = _signum_stationary(op, start, method=method)
    op = _signum_operator(beta, sigma, theta, law, df, a, h, n_max, w_max)
    start = np.repeat(P, 2, axis=1) / 2 if beta > 0 else None  # the coarse law as the fine start
    fine, _, leak_fine = _signum_stationary(op, start, method=method)
    return fine, coarse, max(*leak_coarse, *leak_fine), n_max, w_max


def signum_constant(beta, sigma, offset="mid", *, law: str = "gaussian", df: float | None = None, a: float = 1.0,
                    cells: int = 4) -> SignumConstant:
    r"""The stationary floor constant :math:`C = E_\pi f/(a\eta^2)` of Signum on :math:`f = a x^2/2` under multiplicative noise.

    Signum: :math:`g = a x(1 + \sigma\xi)`, :math:`m \leftarrow \beta m + (1-\beta) g` (from :math:`m_0 = 0`),
    :math:`x \leftarrow x - \eta\,\mathrm{sign}(m)`. In :math:`u = x/\eta`, :math:`v = m/\eta` the chain

    .. math:: v' = \beta v + (1-\beta)\,a u\,(1 + \sigma\xi), \qquad u' = u - \mathrm{sign}(v')

    is free of :math:`\eta`, and :math:`u` stays on the lattice :math:`\theta + \mathbb Z`
    (:math:`\theta = c/\eta`, :math:`c = x_0 \bmod \eta`), so :math:`E f = \tfrac{a\eta^2}{2} E_\pi[u^2]`
    with :math:`\pi` the stationary law of :math:`(n, v)`, :math:`u = \theta + n`; :math:`v/a` is free of
    :math:`a` too, so :math:`C` depends on :math:`\beta`, :math:`\sigma`, the noise law and :math:`\theta` only.
    Given :math:`(n, v)`, :math:`v'` is an affine image of :math:`\xi`, so the probability of a buffer
    cell is a difference of CDFs (averaged over the source cell: a second difference of the CDF's
    antiderivative). :math:`\pi` is the fixed point of this transfer operator on :math:`|n| \le N`,
    :math:`|v| \le W` (cells of width :math:`h = a\min(\beta, 1-\beta)/`\ ``cells``: the buffer moves by
    :math:`(1-\beta)au` per step and the contracted law of :math:`\beta v` spans :math:`\beta|v|`; both are
    resolved), found by power iteration; :math:`N`
    and :math:`W` grow until the stationary mass leaving that box per step is below :math:`10^{-10}`
    (``leak``; heavy-tailed laws may stay above it: ``W`` is capped at 20 noise scales). At
    :math:`\beta = 0` the buffer is :math:`a u(1+\sigma\xi)` and the split at :math:`v' = 0` is exact:
    the two-ladder law of signSGD (:func:`c_mid`, :func:`c_unif`) to round-off. For :math:`\beta > 0`
    the error is :math:`O(h^2)` in the cell width; ``err`` is :math:`|C_h - C_{2h}|` (three times the
    error when the :math:`h^2` term dominates).

    ``offset``: ``"mid"`` (:math:`\theta = 1/2`), a fraction :math:`\theta \in (0, 1)`, or ``"uniform"``
    (:math:`\theta` uniform on :math:`(0, 1)`, as for a random start): :math:`C(\theta) = C(1-\theta)`
    (the reflection :math:`u \to -u`), so :math:`C_{\rm unif} = 2\int_0^{1/2} C(\theta)\,d\theta` by
    3-point Gauss--Legendre on :math:`(0, 1/2)`, whose change against the 2-point rule is added to
    ``err``. ``a``: the curvature (the constant does not depend on it; it scales the buffer grid).
    ``cells``: an even number of buffer cells per :math:`a\min(\beta, 1-\beta)` on the fine grid (the coarse grid
    has half as many). Returns a :class:`SignumConstant`.
    """
    beta = V.real("beta", beta, low=0.0, high=1.0, high_open=True)
    sigma = V.real("sigma", sigma, low=0.0, low_open=True)
    df = _law(law, df)
    a = V.real("a", a, low=0.0, low_open=True)
    cells = V.integer("cells", cells, low=2, high=256)
    if cells % 2:
        raise ValueError(f"cells: expected an even number (the error estimate halves it), got {cells}")
    if isinstance(offset, str):
        if offset not in ("mid", "uniform"):
            raise ValueError(f"offset: expected 'mid', 'uniform' or a fraction theta in (0, 1), got {offset!r}")
    else:
        offset = V.real("offset", offset, low=0.0, high=1.0, low_open=True, high_open=True)
    if offset != "uniform":
        theta = 0.5 if offset == "mid" else offset
        fine, coarse, leak, n_max, w_max = _signum_at(beta, sigma, theta, law, df, a, cells)
        return SignumConstant(fine, abs(fine - coarse), leak, n_max, w_max / a, cells)
    runs = {}
    rules = {k: np.polynomial.legendre.leggauss(k) for k in (2, 3)}
    values = {}
    for k, (nodes, weights) in rules.items():
        total = 0.0
        for x, w in zip(nodes, weights):
            theta = (x + 1) / 4  # (-1, 1) -> (0, 1/2)
            if theta not in runs:
                runs[theta] = _signum_at(beta, sigma, theta, law, df, a, cells)
            total += w / 2 * np.array(runs[theta][:2])  # weights sum to 2 on (-1, 1); the mean over (0, 1/2)
        values[k] = total
    fine, coarse = values[3]
    err = abs(fine - coarse) + abs(values[3][0] - values[2][0])
    leak = max(r[2] for r in runs.values())
    return SignumConstant(float(fine), float(err), leak, max(r[3] for r in runs.values()),
                          max(r[4] for r in runs.values()) / a, cells)
