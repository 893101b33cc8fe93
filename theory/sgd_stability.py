r"""Linear stability of SGD near an interpolating minimum: batch size, delays, momentum.

**Mean-square stability with minibatches.** Near a minimum of :math:`L = \frac1n\sum_i \ell_i` where
every per-sample gradient vanishes (interpolation), SGD with a batch :math:`\mathcal B` of size
:math:`B` drawn uniformly *without replacement* is, to first order,

.. math:: \theta_{t+1} = (I - \eta H_{\mathcal B_t})\,\theta_t, \qquad H_{\mathcal B} = \tfrac1B \textstyle\sum_{i\in\mathcal B} H_i ,

with :math:`H_i` the per-sample Hessians and :math:`H = \frac1n\sum_i H_i`. Batches are independent
across steps, so the second moment :math:`\Sigma_t = E[\theta_t\theta_t^\top]` obeys
:math:`\mathrm{vec}\,\Sigma_{t+1} = \mathcal M_B\,\mathrm{vec}\,\Sigma_t` with

.. math:: \mathcal M_B = I\otimes I - \eta\,(H\otimes I + I\otimes H) + \eta^2\, E[H_{\mathcal B}\otimes H_{\mathcal B}] .

Counting pairs of samples in a batch (:math:`P(i\in\mathcal B) = B/n`,
:math:`P(i,j\in\mathcal B) = B(B-1)/(n(n-1))` for :math:`i \ne j`) gives the exact mixture

.. math:: E[H_{\mathcal B}\otimes H_{\mathcal B}] = (1-p)\,H\otimes H + p\,\tfrac1n\textstyle\sum_i H_i\otimes H_i,
          \qquad p = \frac{n-B}{B(n-1)}

(:func:`mixture_identity_sympy` derives it). :math:`\mathcal M_B` is a symmetric matrix and a
positive map (it sends PSD :math:`\Sigma` to PSD), so its spectral radius is its largest eigenvalue
and has a PSD eigenvector. Writing :math:`L_H = H\otimes I + I\otimes H` and
:math:`Q_B = E[H_{\mathcal B}\otimes H_{\mathcal B}]`, :math:`\lambda_{\max}(\mathcal M_B) < 1` iff
:math:`\eta\,Q_B \prec L_H` on the range of :math:`H`, hence the mean-square threshold is a
generalized eigenvalue,

.. math:: \eta^*(B) = \sup\{\eta : \rho(\mathcal M_B) < 1\} = 1/\lambda_{\max}(Q_B, L_H),

and the stable set is the whole interval :math:`(0, \eta^*(B))`. Because the maximizing direction
is a PSD matrix, on which the covariance term :math:`\frac1n\sum_i (H_i - H)\otimes(H_i - H)` is
non-negative, :math:`\eta^*(B)` is non-decreasing in :math:`B` (:math:`p` falls) and
:math:`\eta^*(n) = 2/\lambda_{\max}(H)` (:math:`p = 0`: gradient descent).

**Non-interpolating (regular) minima.** Where the per-sample gradients :math:`g_i` do not vanish (only their mean
does) and every :math:`H_i` is PSD, a step adds the noise :math:`-\eta g_{\mathcal B}` with
:math:`E[g_{\mathcal B}g_{\mathcal B}^\top] = p\,\frac1n\sum_i g_ig_i^\top`; the second moment then tends to the fixed
point of :math:`\mathrm{vec}\,\Sigma \mapsto \mathcal M_B\,\mathrm{vec}\,\Sigma + \eta^2 p\,\mathrm{vec}\,\Sigma_g`,
which exists iff :math:`\eta < \eta^*(B)` (:func:`stationary_covariance`).

**Almost-sure stability** is governed by the top Lyapunov exponent
:math:`\gamma = \lim_t \frac1t\log\|\theta_t\|`. Jensen's inequality gives
:math:`2\gamma \le \log\rho(\mathcal M_B)`, so the almost-sure threshold is at least
:math:`\eta^*(B)`. For commuting (diagonal) Hessians it is explicit:
:math:`\gamma = \max_k E_{\mathcal B}\log|1 - \eta\,(h_{\mathcal B})_k|`.

**The trace bound at** :math:`B = 1`. :math:`\mathcal M_1` is symmetric, so its top eigenvalue is at
least the Rayleigh quotient at :math:`\Sigma = P` (the projector onto the range of :math:`H`, of
rank :math:`r`): :math:`\langle P, \mathcal M_1 P\rangle = r - 2\eta\,\mathrm{tr}H + \eta^2\frac1n\sum_i\|H_i\|_F^2`.
Stability therefore needs :math:`\eta < 2\,\mathrm{tr}H \,/\, \frac1n\sum_i\|H_i\|_F^2`. For rank-one
per-sample Hessians :math:`H_i = g_i g_i^\top` (single-output squared loss at interpolation)
:math:`\|H_i\|_F^2 = \|g_i\|^4` and Cauchy--Schwarz gives :math:`\frac1n\sum_i\|g_i\|^4 \ge (\mathrm{tr}H)^2`, so

.. math:: \eta^*(1) \;\le\; \frac{2\,\mathrm{tr}H}{\frac1n\sum_i \|g_i\|^4} \;\le\; \frac{2}{\mathrm{tr}H}.

**Delayed gradients.** :math:`x_{t+1} = x_t - a\,x_{t-S}` (:math:`a = \eta\lambda`) has characteristic
polynomial :math:`z^{S+1} - z^S + a`. A root crosses the unit circle at :math:`z = e^{i\omega}` when
:math:`e^{i\omega S}(e^{i\omega} - 1) = -a`; the modulus gives :math:`a = 2\sin(\omega/2)` and the phase
:math:`\omega(S + \tfrac12) = \tfrac\pi2`, so the recursion is stable iff
:math:`0 < a < 2\sin\big(\pi/(2(2S+1))\big)`.

**Momentum** on :math:`f = \lambda x^2/2`, :math:`h = \eta\lambda`. Heavy ball:
:math:`x_{t+1} = (1+\mu-h)x_t - \mu x_{t-1}`, characteristic :math:`z^2 - (1+\mu-h)z + \mu`;
Nesterov: :math:`x_{t+1} = (1-h)\big((1+\mu)x_t - \mu x_{t-1}\big)`, characteristic
:math:`z^2 - (1-h)(1+\mu)z + (1-h)\mu`. For :math:`0 \le \mu < 1` the Schur--Cohn conditions reduce to
:math:`p(1) = h > 0` and the flip condition :math:`p(-1) > 0`: :math:`h < 2(1+\mu)` (heavy ball),
:math:`h < 2(1+\mu)/(1+2\mu)` (Nesterov). With additive gradient noise of variance :math:`\sigma^2`,
the heavy-ball stationary variance (discrete Lyapunov equation, :func:`momentum_variance_sympy`; the
momentum closed forms live once in :mod:`theory.nqm`) is

.. math:: \mathrm{Var}\,x = \frac{\eta\sigma^2(1+\mu)}{\lambda(1-\mu)\big(2(1+\mu) - \eta\lambda\big)} .

**The tuned heavy ball** on a quadratic with curvatures in :math:`[m, L]`, :math:`\kappa = L/m`. The roots of
:math:`z^2 - (1+\mu-\eta\lambda)z + \mu` have modulus :math:`\sqrt\mu` while complex, i.e. while
:math:`(1-\sqrt\mu)^2 \le \eta\lambda \le (1+\sqrt\mu)^2`; a real root outside that window is larger. The
smallest :math:`\mu` for which one :math:`\eta` puts the whole spectrum in the window makes both ends double
roots, :math:`\eta m = (1-\sqrt\mu)^2` and :math:`\eta L = (1+\sqrt\mu)^2` (:func:`heavy_ball_optimal_sympy`):

.. math:: \eta^* = \frac{4}{(\sqrt L+\sqrt m)^2}, \qquad \mu^* = \Big(\frac{\sqrt\kappa-1}{\sqrt\kappa+1}\Big)^2,
          \qquad \rho^* = \sqrt{\mu^*} = \frac{\sqrt\kappa-1}{\sqrt\kappa+1} ,

against gradient descent's best :math:`(\kappa-1)/(\kappa+1)`. At :math:`(\eta^*, \mu^*)` the iteration matrix of each
end of the spectrum is a Jordan block: :math:`\|x_t\|` contracts like :math:`t\,(\rho^*)^t`, not :math:`(\rho^*)^t`.

No JAX and no I/O here: sympy for the algebra, NumPy/SciPy for eigenvalues and roots. Every
public function validates its arguments (:mod:`theory.validate`).
"""
from __future__ import annotations

import functools
import itertools
import math

import numpy as np
import sympy as sp
from scipy import linalg, optimize

from theory import validate as val
from theory import nqm

__all__ = [
    "METHODS", "SAMPLINGS", "check_hessians", "least_squares_hessians", "batch_weight", "mixture_identity_sympy",
    "kron_second_moment", "second_moment_operator", "spectral_radius", "ms_threshold", "moment_trace",
    "batch_means", "lyapunov_commuting", "as_threshold_commuting", "trace_bound", "dln_gradients",
    "dln_minimum", "delay_threshold", "delay_char_poly_sympy", "delay_boundary_residual_sympy",
    "delay_spectral_radius", "momentum_char_poly_sympy", "momentum_flip_sympy", "momentum_threshold",
    "momentum_spectral_radius", "momentum_variance_sympy", "momentum_stationary_variance", "heavy_ball_optimal_sympy",
    "heavy_ball_optimal", "dln_sharpness_norm", "necessary_conditions", "least_squares_minimum",
    "stationary_covariance",
]

METHODS = ("heavy_ball", "nesterov")

# Symmetry and PSD are checked to this relative tolerance (float64 round-off of a product x x^T).
_SYM_RTOL = val.PSD_RTOL


# ----------------------------------------------------------------------------- Hessians and batches
def check_hessians(hessians) -> np.ndarray:
    r"""Per-sample Hessians as a float64 array of shape :math:`(n, d, d)`, each symmetric and PSD.

    ``ValueError`` names ``hessians`` for a wrong shape, a non-finite entry, an asymmetric matrix or a
    negative eigenvalue beyond round-off (:math:`10^{-10}` of the largest entry).
    """
    h = val.array("hessians", hessians, ndim=3)
    n, d, d2 = h.shape
    if d != d2:
        raise ValueError(f"hessians: expected shape (n, d, d) with square matrices, got {h.shape}")
    return _symmetric_psd("hessians", h, "every H_i")


def _symmetric_psd(name: str, m: np.ndarray, what: str) -> np.ndarray:
    r"""``m`` (a stack :math:`(\dots, d, d)` of finite square matrices), checked symmetric and PSD to round-off.

    Asymmetry beyond :math:`10^{-10}` of the largest entry, or an eigenvalue below :math:`-10^{-10}\,d` times
    it, is a ``ValueError`` naming ``name`` (``what`` says which matrices, for the message).
    """
    return val.symmetric_psd(name, m, what)  # the shared check (theory.validate), same tolerance


def _kron_bytes(h: np.ndarray, arrays: int, max_bytes, what: str) -> None:
    """Refuse a call that holds ``arrays`` float64 matrices of size :math:`d^2 \times d^2` (issue 29: ms_threshold at
    d = 200 grew past 5 GiB; each such matrix is 12.8 GB there)."""
    d = h.shape[-1]
    val.check_bytes({"hessians": f"d = {d}"}, arrays * 8 * d**4, what=what, max_bytes=max_bytes)


def _batch_size(batch_size, n: int) -> int:
    return val.integer("batch_size", batch_size, low=1, high=n)


def least_squares_hessians(X, *, max_bytes=None) -> np.ndarray:
    r"""Per-sample Hessians :math:`H_i = x_i x_i^\top` of :math:`\ell_i = \frac12(x_i^\top\theta - y_i)^2` (rows of ``X``).

    ``max_bytes``: the allocation limit (:func:`theory.validate.byte_limit`) for the ``(n, d, d)`` result.
    """
    x = val.array("X", X, ndim=2)
    val.check_bytes({"X": f"shape {x.shape}"}, 8 * x.shape[0] * x.shape[1] ** 2, what="the (n, d, d) Hessians",
                    max_bytes=max_bytes)
    return np.einsum("ni,nj->nij", x, x)


SAMPLINGS = ("without", "with")


def batch_weight(n, batch_size, sampling="without") -> float:
    r"""The weight :math:`p` of :math:`\frac1n\sum_i H_i\otimes H_i` in :math:`E[H_{\mathcal B}\otimes H_{\mathcal B}]`.

    Without replacement (SGD's usual sampling) :math:`p = (n - B)/(B(n-1))`: :math:`p = 1` at
    :math:`B = 1`, :math:`p = 0` at :math:`B = n` (and for :math:`n = 1`). With replacement (i.i.d.
    indices) :math:`p = 1/B`.
    """
    n = val.integer("n", n, low=1)
    b = _batch_size(batch_size, n)
    if val.choice("sampling", sampling, SAMPLINGS) == "with":
        return 1.0 / b
    return 0.0 if b == n else (n - b) / (b * (n - 1))


def mixture_identity_sympy() -> dict:
    r"""Derive the mixture identity symbolically from inclusion probabilities.

    :math:`P(i\in\mathcal B) = \binom{n-1}{B-1}/\binom nB` and
    :math:`P(i,j\in\mathcal B) = \binom{n-2}{B-2}/\binom nB`. Then
    :math:`E[H_{\mathcal B}\otimes H_{\mathcal B}] = B^{-2}\big(P_1 S + P_2(n^2 H\otimes H - S)\big)` with
    :math:`S = \sum_i H_i\otimes H_i`. Returns the simplified coefficients ``w_hh`` (of
    :math:`H\otimes H`) and ``w_s`` (of :math:`\frac1n S`), ``p`` :math:`= 1 - w_{hh}`, and the
    inclusion probabilities ``p1``, ``p2``.
    """
    n, b = sp.symbols("n B", positive=True, integer=True)
    p1 = sp.gammasimp(sp.binomial(n - 1, b - 1) / sp.binomial(n, b))
    p2 = sp.gammasimp(sp.binomial(n - 2, b - 2) / sp.binomial(n, b))
    w_hh = sp.factor(sp.simplify(p2 * n**2 / b**2))
    w_s = sp.factor(sp.simplify(n * (p1 - p2) / b**2))
    return {"n": n, "B": b, "p1": p1, "p2": p2, "w_hh": w_hh, "w_s": w_s, "p": sp.factor(sp.simplify(1 - w_hh))}


def kron_second_moment(hessians, batch_size, sampling="without", *, max_bytes=None) -> np.ndarray:
    r""":math:`E[H_{\mathcal B}\otimes H_{\mathcal B}] = (1-p)H\otimes H + p\frac1n\sum_i H_i\otimes H_i`, shape :math:`(d^2, d^2)` (:func:`batch_weight` gives :math:`p`).

    ``max_bytes``: the allocation limit (:func:`theory.validate.byte_limit`) for the :math:`d^2\times d^2` matrices
    (here and in the functions built on this one).
    """
    h = check_hessians(hessians)
    p = batch_weight(h.shape[0], batch_size, sampling)
    _kron_bytes(h, 4, max_bytes, "four (d^2, d^2) float64 matrices")
    hbar = h.mean(axis=0)
    with np.errstate(over="ignore", invalid="ignore"):  # checked below: products of entries beyond ~1e154 overflow
        s = np.einsum("nij,nkl->ikjl", h, h).reshape(h.shape[1] ** 2, -1) / h.shape[0]
        q = (1 - p) * np.kron(hbar, hbar) + p * s
    if not np.all(np.isfinite(q)):
        raise ValueError(f"hessians: E[H_B kron H_B] overflows float64 (products of entries up to "
                         f"{float(np.abs(h).max()):.3g}); expected Hessians whose squares are representable")
    return q


def second_moment_operator(hessians, batch_size, eta, sampling="without", *, max_bytes=None) -> np.ndarray:
    r""":math:`\mathcal M_B = I\otimes I - \eta(H\otimes I + I\otimes H) + \eta^2 E[H_{\mathcal B}\otimes H_{\mathcal B}]` (row-major ``vec``).

    ``max_bytes``: as for :func:`kron_second_moment`.
    """
    h = check_hessians(hessians)
    eta = val.real("eta", eta, low=0.0, low_open=True)
    _kron_bytes(h, 7, max_bytes, "seven (d^2, d^2) float64 matrices")
    q = kron_second_moment(h, batch_size, sampling, max_bytes=max_bytes)
    d = h.shape[1]
    hbar, eye = h.mean(axis=0), np.eye(d)
    with np.errstate(over="ignore", invalid="ignore"):  # eta * eta, not eta**2: inf (checked), not OverflowError
        m = np.eye(d * d) - eta * (np.kron(hbar, eye) + np.kron(eye, hbar)) + (eta * eta) * q
    if not np.all(np.isfinite(m)):
        raise ValueError(f"eta: the second-moment operator overflows float64 at eta = {eta} (eta^2 times "
                         f"E[H_B kron H_B] up to {float(np.abs(q).max()):.3g}); its spectral radius is not representable")
    return m


def spectral_radius(hessians, batch_size, eta, sampling="without", *, max_bytes=None) -> float:
    r""":math:`\rho(\mathcal M_B)` at step ``eta`` (the largest eigenvalue: :math:`\mathcal M_B` is symmetric and a positive map).

    ``max_bytes``: as for :func:`kron_second_moment` (the eigensolver holds two more :math:`d^2\times d^2` matrices).
    """
    _kron_bytes(check_hessians(hessians), 9, max_bytes, "the operator, its parts and the eigensolver's copies")
    m = second_moment_operator(hessians, batch_size, eta, sampling, max_bytes=max_bytes)
    return float(np.max(np.abs(np.linalg.eigvalsh(m))))


def _range_basis(h: np.ndarray) -> np.ndarray:
    """Orthonormal basis of the range of the mean Hessian (directions every H_i leaves fixed are dropped)."""
    w, u = np.linalg.eigh(h.mean(axis=0))
    keep = w > _SYM_RTOL * max(float(w.max()), 1e-300) * h.shape[1]
    if not keep.any():
        raise ValueError("hessians: the mean Hessian is zero; SGD does not move and has no threshold")
    return u[:, keep]


def ms_threshold(hessians, batch_size, sampling="without", *, max_bytes=None) -> float:
    r"""The mean-square threshold :math:`\eta^*(B) = \sup\{\eta: \rho(\mathcal M_B) < 1\} = 1/\lambda_{\max}(Q_B, L_H)`.

    ``hessians``: per-sample Hessians, shape :math:`(n, d, d)`, symmetric PSD. ``batch_size``: an
    integer in :math:`1..n` (batches drawn uniformly without replacement). Directions in the common
    null space of the :math:`H_i` never move (:math:`\rho = 1` there for every :math:`\eta`) and are
    excluded: the threshold is that of the range of :math:`H`. Solved as a generalized symmetric
    eigenproblem (see the module docstring), so the result is exact to round-off. ``sampling="with"``:
    the threshold of batches drawn with replacement (:math:`p = 1/B`). ``max_bytes``: as for
    :func:`kron_second_moment` (the generalized eigenproblem holds about ten :math:`r^2\times r^2` matrices).
    """
    h = check_hessians(hessians)
    b = _batch_size(batch_size, h.shape[0])
    _kron_bytes(h, 10, max_bytes, "about ten (d^2, d^2) float64 matrices of the generalized eigenproblem")
    # eta*(c H) = eta*(H) / c: solved at unit scale (a power of two, exact), so Hessians near 1e200, whose
    # Kronecker squares overflow, still have their (representable) threshold
    scale = 2.0 ** np.frexp(max(float(np.abs(h).max()), 1e-300))[1]
    h = h / scale
    u = _range_basis(h)
    hr = np.einsum("ia,nij,jb->nab", u, h, u)
    r = hr.shape[1]
    hbar, eye = hr.mean(axis=0), np.eye(r)
    lh = np.kron(hbar, eye) + np.kron(eye, hbar)
    q = kron_second_moment(hr, b, sampling, max_bytes=max_bytes)
    top = float(linalg.eigh(q, lh, eigvals_only=True)[-1])
    return 1.0 / top / scale


def moment_trace(hessians, batch_size, eta, sigma0, n_steps, sampling="without", *, max_bytes=None) -> np.ndarray:
    r""":math:`\mathrm{tr}\,\Sigma_t` for :math:`t = 0..T` from :math:`\mathrm{vec}\,\Sigma_t = \mathcal M_B^t\,\mathrm{vec}\,\Sigma_0` (``sigma0`` symmetric PSD, :math:`(d, d)`).

    ``sigma0`` that is not symmetric PSD (to round-off) is refused: it is not a second moment. ``max_bytes``: as for
    :func:`kron_second_moment`.
    """
    h = check_hessians(hessians)
    d = h.shape[1]
    s0 = _symmetric_psd("sigma0", val.array("sigma0", sigma0, shape=(d, d)), "Sigma_0 (a second moment)")
    n_steps = val.integer("n_steps", n_steps, low=0)
    val.check_bytes({"n_steps": n_steps}, 8 * (n_steps + 1), what="the trace record", max_bytes=max_bytes)
    m = second_moment_operator(h, batch_size, eta, sampling, max_bytes=max_bytes)
    out, s = np.empty(n_steps + 1), s0.reshape(-1)
    for t in range(n_steps + 1):  # a d^2 x d^2 matrix power series, not an optimisation loop
        out[t] = np.trace(s.reshape(d, d))
        s = m @ s
    return out


def batch_means(hessians, batch_size, *, max_bytes=None) -> np.ndarray:
    r"""Every batch mean :math:`H_{\mathcal B}` over the :math:`\binom nB` subsets, in ``itertools.combinations`` order.

    ``hessians``: :math:`(n, d, d)` symmetric PSD (:func:`check_hessians`), or :math:`(n, d)` non-negative
    diagonals of diagonal Hessians. ``max_bytes``: the allocation limit (:func:`theory.validate.byte_limit`) for
    the gathered batches, :math:`\binom nB \times B` matrices (or diagonals).
    """
    h = val.array("hessians", hessians, ndim=(2, 3))
    h = val.array("hessians", h, ndim=2, low=0.0) if h.ndim == 2 else check_hessians(h)
    b = _batch_size(batch_size, h.shape[0])
    if math.comb(h.shape[0], b) > 200_000:
        raise ValueError(f"batch_size: C({h.shape[0]}, {b}) batches are too many to enumerate (limit 200000)")
    c, each = math.comb(h.shape[0], b), int(np.prod(h.shape[1:]))
    val.check_bytes({"batch_size": b, "hessians": f"shape {h.shape}"}, 8 * c * (b + 1) * (each + 1),
                    what="the gathered batches and their means", max_bytes=max_bytes)
    idx = np.array(list(itertools.combinations(range(h.shape[0]), b)))
    return h[idx].mean(axis=1)


# ----------------------------------------------------------------------------- commuting Hessians: a.s. threshold
def _diag_curvatures(curvatures) -> np.ndarray:
    return val.array("curvatures", curvatures, ndim=2, low=0.0)


def _commuting_exponent(hb: np.ndarray, eta: np.ndarray) -> np.ndarray:
    r""":math:`\max_k \mathrm{mean}_{\mathcal B}\log|1 - \eta\,(h_{\mathcal B})_k|` for an array of steps (batch means ``hb``: :math:`(C, d)`)."""
    with np.errstate(divide="ignore"):
        return np.max(np.mean(np.log(np.abs(1.0 - np.multiply.outer(eta, hb))), axis=-2), axis=-1)


def lyapunov_commuting(curvatures, batch_size, eta, *, max_bytes=None) -> float:
    r"""Top Lyapunov exponent :math:`\gamma = \max_k E_{\mathcal B}\log|1 - \eta\,(h_{\mathcal B})_k|` for diagonal :math:`H_i = \mathrm{diag}(h_i)`.

    ``curvatures``: :math:`(n, d)` array of the non-negative diagonals :math:`h_i`. Products of
    diagonal matrices act coordinate-wise, so the strong law of large numbers gives each
    coordinate's exponent exactly; :math:`-\infty` when some batch makes a factor exactly zero. ``max_bytes``: as
    for :func:`batch_means`.
    """
    c = _diag_curvatures(curvatures)
    eta = val.real("eta", eta, low=0.0, low_open=True)
    return float(_commuting_exponent(batch_means(c, batch_size, max_bytes=max_bytes), np.float64(eta)))


def as_threshold_commuting(curvatures, batch_size, *, eta_max=None, max_bytes=None) -> float:
    r"""The almost-sure threshold :math:`\inf\{\eta > 0: \gamma(\eta) \ge 0\}` for diagonal Hessians.

    Located by a scan of :math:`\gamma` on a fine grid up to ``eta_max`` (default
    :math:`4/\min_k \bar h_k` over coordinates with :math:`\bar h_k > 0`) and Brent's method on the
    first sign change. ``ValueError`` if no crossing exists below ``eta_max``. ``max_bytes``: the allocation limit
    (:func:`theory.validate.byte_limit`) for the scan, 4000 steps times every batch mean.
    """
    c = _diag_curvatures(curvatures)
    hbar = c.mean(axis=0)
    if not (hbar > 0).any():
        raise ValueError("curvatures: every coordinate has zero mean curvature; no threshold")
    top = 4.0 / float(hbar[hbar > 0].min()) if eta_max is None else val.real("eta_max", eta_max, low=0.0, low_open=True)
    hb = batch_means(c, batch_size, max_bytes=max_bytes)
    val.check_bytes({"batch_size": batch_size, "curvatures": f"shape {c.shape}"}, 3 * 8 * 4000 * hb.size,
                    what="the scan over 4000 steps of every batch mean (and two temporaries)", max_bytes=max_bytes)
    grid = np.linspace(top / 4000, top, 4000)
    vals = _commuting_exponent(hb, grid)
    up = np.flatnonzero((vals[:-1] < 0) & (vals[1:] >= 0))
    if up.size == 0:
        raise ValueError(f"eta_max: no almost-sure threshold below {top:.6g}")
    k = int(up[0])
    return float(optimize.brentq(lambda e: float(_commuting_exponent(hb, np.float64(e))), grid[k], grid[k + 1],
                                 xtol=1e-14, rtol=1e-13))


# ----------------------------------------------------------------------------- the trace bound; a diagonal linear net
def trace_bound(hessians) -> dict:
    r"""Quantities of the :math:`B = 1` trace bound: ``trace`` :math:`\mathrm{tr}H`, ``frob4``
    :math:`\frac1n\sum_i\|H_i\|_F^2`, ``eta_bound`` :math:`2\,\mathrm{tr}H/\mathrm{frob4}` (an upper bound on
    :math:`\eta^*(1)` for any PSD :math:`H_i`), ``eta_trace`` :math:`2/\mathrm{tr}H` (a further upper bound
    when every :math:`H_i` has rank one) and ``rank_one`` (whether they do, to round-off). All-zero
    :math:`H_i` (:math:`\mathrm{tr}H = 0`: nothing to bound) are refused.
    """
    h = check_hessians(hessians)
    tr = float(np.trace(h.mean(axis=0)))
    if not tr > 0:  # PSD H_i with zero mean trace are all zero: SGD does not move and no bound exists
        raise ValueError("hessians: every H_i is zero (tr H = 0); the trace bound 2 tr H / mean ||H_i||_F^2 is undefined")
    frob = float(np.mean(np.sum(h * h, axis=(1, 2))))
    sv = np.linalg.eigvalsh(h)
    rank_one = bool(np.all(sv[:, :-1] <= _SYM_RTOL * max(float(sv.max()), 1e-300) * h.shape[1]))
    return {"trace": tr, "frob4": frob, "eta_bound": 2 * tr / frob, "eta_trace": 2 / tr, "rank_one": rank_one}


def dln_gradients(u, v, X) -> np.ndarray:
    r"""Per-sample gradients of the diagonal linear net :math:`f(x) = \sum_k u_k v_k x_k` w.r.t. :math:`(u, v)`:
    :math:`g_i = (v\odot x_i,\ u\odot x_i)`, shape :math:`(n, 2d)`. At an interpolating minimum of the
    squared loss :math:`\ell_i = \frac12(f(x_i) - y_i)^2` the per-sample Hessian is :math:`g_i g_i^\top`.
    """
    x = val.array("X", X, ndim=2)
    uu = val.array("u", u, shape=(x.shape[1],))
    vv = val.array("v", v, shape=(x.shape[1],))
    return np.concatenate([vv * x, uu * x], axis=1)


def dln_minimum(beta, scale) -> tuple[np.ndarray, np.ndarray]:
    r"""A minimum :math:`(u, v)` of the diagonal net realising :math:`u\odot v = \beta`, with balance ``scale`` :math:`c > 0`:
    :math:`u_k = c\sqrt{|\beta_k|}\,\mathrm{sign}\beta_k`, :math:`v_k = \sqrt{|\beta_k|}/c` (:math:`c = 1`: balanced).
    """
    b = val.array("beta", beta, ndim=1)
    c = val.real("scale", scale, low=0.0, low_open=True)
    root = np.sqrt(np.abs(b))
    return c * root * np.where(b < 0, -1.0, 1.0), root / c


# ----------------------------------------------------------------------------- delayed gradients
def _delay(delay) -> int:
    return val.integer("delay", delay, low=0, high=64)


def delay_threshold(delay) -> float:
    r""":math:`a^*(S) = 2\sin\big(\pi/(2(2S+1))\big)`: :math:`x_{t+1} = x_t - a x_{t-S}` is stable iff :math:`0 < a < a^*(S)`."""
    s = _delay(delay)
    return 2.0 * math.sin(math.pi / (2 * (2 * s + 1)))


def delay_char_poly_sympy(delay):
    r"""Characteristic polynomial :math:`z^{S+1} - z^S + a` of the delayed recursion, from its companion matrix (sympy)."""
    s = _delay(delay)
    z, a = sp.symbols("z a")
    # state (x_t, x_{t-1}, ..., x_{t-S}); x_{t+1} = x_t - a x_{t-S}
    m = sp.zeros(s + 1, s + 1)
    m[0, 0] += 1
    m[0, s] += -a
    for i in range(1, s + 1):
        m[i, i - 1] = 1
    return sp.expand(m.charpoly(z).as_expr()), z, a


def delay_boundary_residual_sympy(delay):
    r"""The characteristic polynomial at :math:`z = e^{i\pi/(2S+1)}`, :math:`a = 2\sin(\pi/(2(2S+1)))`; simplifies to 0."""
    poly, z, a = delay_char_poly_sympy(delay)
    s = _delay(delay)
    return sp.simplify(sp.expand_complex(
        poly.subs({z: sp.exp(sp.I * sp.pi / (2 * s + 1)), a: 2 * sp.sin(sp.pi / (2 * (2 * s + 1)))})))


def delay_spectral_radius(a, delay) -> float:
    r"""Largest root modulus of :math:`z^{S+1} - z^S + a` (the asymptotic growth factor per step)."""
    a = val.real("a", a)
    s = _delay(delay)
    coeffs = np.zeros(s + 2)
    coeffs[0], coeffs[1], coeffs[-1] = 1.0, -1.0, a
    if s == 0:
        coeffs = np.array([1.0, a - 1.0])
    return float(np.max(np.abs(np.roots(coeffs))))


# ----------------------------------------------------------------------------- momentum
def _method(method) -> str:
    return val.choice("method", method, METHODS)


def momentum_char_poly_sympy(method):
    r"""Characteristic polynomial in :math:`z` of heavy ball or Nesterov on :math:`\lambda x^2/2`, :math:`h = \eta\lambda`.

    The shared form :func:`theory.nqm.momentum_characteristic_polynomial` with :math:`\lambda = h/\eta`.
    Returns ``(poly, z, h, mu)``.
    """
    m_ = _method(method)
    z, h, lam = sp.Symbol("z"), sp.Symbol("h"), sp.Symbol("lambda")
    poly = sp.expand(nqm.momentum_characteristic_polynomial(m_).subs(lam, h / nqm.eta_))
    return poly, z, h, nqm.mu_


def momentum_flip_sympy(method):
    r"""The flip boundary: the root :math:`h` of :math:`p(-1) = 0` (sympy), e.g. :math:`2(1+\mu)` for heavy ball."""
    poly, z, h, mu = momentum_char_poly_sympy(method)
    sols = sp.solve(sp.Eq(poly.subs(z, -1), 0), h)
    return sp.factor(sols[0]), h, mu


def momentum_threshold(mu, method) -> float:
    r"""Largest stable :math:`h = \eta\lambda` for momentum :math:`0 \le \mu < 1`: :math:`2(1+\mu)` (heavy ball), :math:`2(1+\mu)/(1+2\mu)` (Nesterov).

    The shared :func:`theory.nqm.momentum_threshold` (one derivation for every topic).
    """
    mu = val.real("mu", mu, low=0.0, high=1.0, high_open=True)
    return nqm.momentum_threshold(mu, _method(method))


@val.renamed_keyword("h", "c")
def momentum_spectral_radius(c, mu, method) -> float:
    r"""Largest root modulus of the momentum characteristic polynomial (:func:`momentum_char_poly_sympy`) at the
    dimensionless step :math:`c = \eta\lambda` and momentum :math:`\mu` (the keyword ``h=`` is deprecated)."""
    c = val.real("c", c)
    mu = val.real("mu", mu, low=0.0, high=1.0, high_open=True)
    if _method(method) == "heavy_ball":
        coeffs = [1.0, -(1 + mu - c), mu]
    else:
        coeffs = [1.0, -(1 - c) * (1 + mu), (1 - c) * mu]
    return float(np.max(np.abs(np.roots(coeffs))))


def momentum_variance_sympy():
    r"""Stationary :math:`\mathrm{Var}\,x` of heavy ball with additive noise (the shared :func:`theory.nqm.momentum_variance_sympy`).

    Returns ``(variance, (eta, lambda, mu, sigma))``.
    """
    return nqm.momentum_variance_sympy("heavy_ball")


def momentum_stationary_variance(eta, lam, mu, sigma) -> float:
    r""":math:`\mathrm{Var}\,x = \eta\sigma^2(1+\mu)/\big(\lambda(1-\mu)(2(1+\mu) - \eta\lambda)\big)` (heavy ball, stable region only).

    The shared :func:`theory.nqm.momentum_stationary_variance` (also used by the noisy-quadratic topic).
    """
    return nqm.momentum_stationary_variance(eta, lam, mu, sigma, "heavy_ball")


@functools.lru_cache(maxsize=None)
def heavy_ball_optimal_sympy():
    r"""The tuned heavy ball on curvatures :math:`[m, L]` (sympy): both ends of the spectrum double roots.

    With :math:`s = \sqrt\mu`, a double root of :math:`z^2 - (1+s^2-\eta\lambda)z + s^2` at :math:`\lambda = m` (root
    :math:`+s`) and at :math:`\lambda = L` (root :math:`-s`) means :math:`1+s^2-\eta m = 2s` and
    :math:`1+s^2-\eta L = -2s`; solved for :math:`(\eta, s)`. Returns ``({"eta", "mu", "rate"}, (L, m))`` with the rate
    :math:`s`, the modulus of every root at that point.
    """
    L, m, eta, s = sp.symbols("L m eta s", positive=True)
    a, b = sp.symbols("a b", positive=True)  # a = sqrt(L), b = sqrt(m): the solutions are rational in them
    sols = sp.solve([sp.Eq(1 + s**2 - eta * b**2, 2 * s), sp.Eq(1 + s**2 - eta * a**2, -2 * s)], [eta, s], dict=True)
    # two roots s = (a - b)/(a + b) and (a + b)/(a - b): a momentum s^2 < 1 keeps the one below 1 (checked at a = 2b)
    sol = [x for x in sols if x[s].subs({a: 2, b: 1}) < 1]
    if len(sol) != 1:  # pragma: no cover - the two roots are reciprocal: exactly one is below 1
        raise RuntimeError(f"expected one solution with s < 1, got {sols}")
    back = {a: sp.sqrt(L), b: sp.sqrt(m)}
    e, r = (sp.factor(sp.cancel(sol[0][k])).subs(back) for k in (eta, s))
    return {"eta": e, "mu": sp.simplify(r**2), "rate": r}, (L, m)


@functools.lru_cache(maxsize=None)
def _heavy_ball_optimal_fns():
    exprs, syms = heavy_ball_optimal_sympy()
    return {k: sp.lambdify(syms, v, "math") for k, v in exprs.items()}


def heavy_ball_optimal(lam_min, lam_max) -> dict:
    r"""Polyak's tuned heavy ball on curvatures in ``[lam_min, lam_max]``: ``{"eta", "mu", "rate", "kappa"}``.

    :math:`\eta^* = 4/(\sqrt L+\sqrt m)^2`, :math:`\mu^* = ((\sqrt\kappa-1)/(\sqrt\kappa+1))^2` and the spectral
    radius :math:`\rho^* = (\sqrt\kappa-1)/(\sqrt\kappa+1)` of the iteration there (from :func:`heavy_ball_optimal_sympy`).
    """
    lam_min = val.real("lam_min", lam_min, low=0.0, low_open=True)
    lam_max = val.real("lam_max", lam_max, low=0.0, low_open=True)
    if not lam_max >= lam_min:
        raise ValueError(f"lam_max: expected a curvature >= lam_min = {lam_min}, got {lam_max}")
    fns = _heavy_ball_optimal_fns()
    out = {k: float(f(lam_max, lam_min)) for k, f in fns.items()}
    return {**out, "kappa": lam_max / lam_min}


# ----------------------------------------------------------------------------- sharpness as a parameter norm (diagonal net)
def dln_sharpness_norm(u, v, X) -> dict:
    r"""The trace of the Hessian at an interpolating minimum of the diagonal net, as a weighted parameter norm.

    With :math:`\ell_i = \frac12(\sum_k u_kv_kx_{ik} - y_i)^2` and :math:`L = \frac1n\sum_i\ell_i`, the Hessian at a
    minimum is :math:`H = \frac1n\sum_i g_ig_i^\top`, :math:`g_i = (v\odot x_i, u\odot x_i)`, so
    :math:`\mathrm{tr}H = \frac1n\sum_i\|g_i\|^2 = \sum_k a_k(u_k^2 + v_k^2)` with the feature second moments
    :math:`a_k = \frac1n\sum_i x_{ik}^2`. Hence
    :math:`\min_k a_k\,\|\theta\|^2 \le \mathrm{tr}H \le \max_k a_k\,\|\theta\|^2`, :math:`\theta = (u, v)`, and
    :math:`u_k^2 + v_k^2 \ge 2|u_kv_k|` gives :math:`\mathrm{tr}H \ge 2\sum_k a_k|\beta_k|`, :math:`\beta = u\odot v`
    (equality at balanced minima :math:`|u| = |v|`).

    Returns ``trace`` (:math:`\sum_k a_k(u_k^2+v_k^2)`), ``weights`` (:math:`a`, shape ``(d,)``), ``norm_sq``
    (:math:`\|\theta\|^2`), ``lower``/``upper`` (the two norm bounds) and ``l1_floor`` (:math:`2\sum_k a_k|\beta_k|`).
    """
    x = val.array("X", X, ndim=2)
    uu = val.array("u", u, shape=(x.shape[1],))
    vv = val.array("v", v, shape=(x.shape[1],))
    a = np.mean(x * x, axis=0)
    sq = uu * uu + vv * vv
    norm_sq = float(np.sum(sq))
    return {"trace": float(a @ sq), "weights": a, "norm_sq": norm_sq, "lower": float(a.min()) * norm_sq,
            "upper": float(a.max()) * norm_sq, "l1_floor": 2.0 * float(a @ np.abs(uu * vv))}


# ----------------------------------------------------------------------------- simple necessary conditions
def necessary_conditions(hessians, batch_size, sampling="without") -> dict:
    r"""Two upper bounds on the mean-square threshold :math:`\eta^*(B)` that need no :math:`d^2\times d^2` eigenproblem.

    :math:`\eta^*(B) = 2/\lambda_{\max}(C^\dagger D)` with :math:`C = \frac12(H\otimes I + I\otimes H)` and
    :math:`D = E[H_{\mathcal B}\otimes H_{\mathcal B}] = (1-p)H\otimes H + p\frac1n\sum_iH_i\otimes H_i`; a Rayleigh
    quotient :math:`u^\top Du/u^\top Cu` at any :math:`u` in the range of :math:`C` is at most :math:`\lambda_{\max}(C^\dagger D)`.
    At :math:`u = v\otimes v` (:math:`v` the top eigenvector of :math:`H`, eigenvalue :math:`\lambda`) it gives ``top``

    .. math:: \eta^*(B) \le \frac{2\lambda}{\lambda^2 + \frac pn\sum_i(v^\top H_iv - \lambda)^2},

    and at :math:`u = \mathrm{vec}(I)` (projected on the range of :math:`H`) it gives ``frobenius``

    .. math:: \eta^*(B) \le \frac{2\,\mathrm{tr}H}{(1-p)\|H\|_F^2 + \frac pn\sum_i\|H_i\|_F^2}.

    Returns ``{"top", "frobenius", "gd"}`` (``gd``: :math:`2/\lambda`, the value of both at :math:`p = 0`) and ``p``.
    """
    h = check_hessians(hessians)
    b = _batch_size(batch_size, h.shape[0])
    p = batch_weight(h.shape[0], b, sampling)
    hbar = h.mean(axis=0)
    w, u = np.linalg.eigh(hbar)
    lam, v = float(w[-1]), u[:, -1]
    if not lam > 0:
        raise ValueError("hessians: the mean Hessian is zero; SGD does not move and has no threshold")
    along = np.einsum("i,nij,j->n", v, h, v)
    top = 2 * lam / (lam**2 + p * float(np.mean((along - lam) ** 2)))
    frob = 2 * float(np.trace(hbar)) / ((1 - p) * float(np.sum(hbar * hbar)) + p * float(np.mean(np.sum(h * h, axis=(1, 2)))))
    return {"top": top, "frobenius": frob, "gd": 2 / lam, "p": p}


# ----------------------------------------------------------------------------- non-interpolating minima
def least_squares_minimum(X, y) -> dict:
    r"""The minimum of :math:`L(\theta) = \frac1n\sum_i\frac12(x_i^\top\theta - y_i)^2` and its per-sample derivatives there.

    :math:`\theta^*` solves the normal equations :math:`X^\top(X\theta - y) = 0` (the minimum-norm solution when
    ``X`` (:math:`n\times d`) is rank deficient). The per-sample gradients :math:`g_i = x_i(x_i^\top\theta^* - y_i)`
    sum to zero (the normal equations) but do not vanish unless the targets ``y`` (:math:`(n,)`) are fitted exactly:
    the minimum is *regular*, not interpolating (every :math:`H_i = x_ix_i^\top` is PSD). Returns ``theta``
    :math:`(d,)`, ``hessians`` :math:`(n, d, d)`, ``gradients`` :math:`(n, d)` and ``residuals`` :math:`(n,)`.
    """
    x = val.array("X", X, ndim=2)
    target = val.array("y", y, shape=(x.shape[0],))
    theta = np.linalg.lstsq(x, target, rcond=None)[0]
    res = x @ theta - target
    return {"theta": theta, "hessians": least_squares_hessians(x), "gradients": x * res[:, None], "residuals": res}


def stationary_covariance(hessians, gradients, batch_size, eta, sampling="without", *, max_bytes=None) -> np.ndarray:
    r"""The limit :math:`\Sigma_\infty = \lim_t E[(\theta_t - \theta^*)(\theta_t - \theta^*)^\top]` of linearized SGD at a regular minimum.

    Near a minimum where the per-sample gradients :math:`g_i` need not vanish (only their mean does) and every
    :math:`H_i` is PSD, linearized SGD is :math:`\theta_{t+1} - \theta^* = (I - \eta H_{\mathcal B})(\theta_t - \theta^*)
    - \eta g_{\mathcal B}`. The batch is independent of :math:`\theta_t`, :math:`E[g_{\mathcal B}] = 0`, and drawing
    without replacement gives :math:`E[g_{\mathcal B}g_{\mathcal B}^\top] = p\,\Sigma_g`,
    :math:`\Sigma_g = \frac1n\sum_i g_ig_i^\top`, :math:`p = (n-B)/(B(n-1))` (the pair counts of
    :func:`mixture_identity_sympy`). Once the mean has decayed (:math:`\eta < 2/\lambda_{\max}`) the cross terms
    vanish and :math:`\mathrm{vec}\,\Sigma_{t+1} = \mathcal M_B\,\mathrm{vec}\,\Sigma_t + \eta^2p\,\mathrm{vec}\,\Sigma_g`.
    With :math:`\mathcal M_B = I - 2\eta C + \eta^2D`, :math:`C = \frac12(H\otimes I + I\otimes H)`,
    :math:`D = E[H_{\mathcal B}\otimes H_{\mathcal B}]`, the fixed point is

    .. math:: \mathrm{vec}\,\Sigma_\infty = \eta\,p\,(2C - \eta D)^{\dagger}\,\mathrm{vec}\,\Sigma_g^{\perp},

    solved on the range of :math:`H` (gradient components in the common null space of the :math:`H_i` make a random
    walk there and are dropped: :math:`\Sigma_g^\perp`). It exists iff :math:`\rho(\mathcal M_B) < 1`, i.e.
    :math:`0 < \eta < \eta^*(B)` (:func:`ms_threshold`); ``eta`` outside that interval is a ``ValueError``.
    ``gradients``: :math:`(n, d)`, their mean zero to round-off (a minimum). ``sampling="with"``: batches drawn with
    replacement, :math:`p = 1/B` in both the noise and :math:`D`. ``max_bytes``: as for :func:`kron_second_moment`.
    """
    h = check_hessians(hessians)
    n, d = h.shape[0], h.shape[1]
    g = val.array("gradients", gradients, shape=(n, d))
    scale = max(float(np.abs(g).max()), 1e-300)
    drift = float(np.abs(g.mean(axis=0)).max())
    if drift > 1e-9 * scale:
        raise ValueError(f"gradients: expected per-sample gradients at a minimum (their mean vanishes), got a mean "
                         f"of size {drift:.3g} against entries up to {scale:.3g}")
    b = _batch_size(batch_size, n)
    step = val.real("eta", eta, low=0.0, low_open=True)
    edge = ms_threshold(h, b, sampling, max_bytes=max_bytes)
    if not step < edge:
        raise ValueError(f"eta: expected 0 < eta < eta*(B) = {edge:.6g} (B = {b}, these hessians), got {step}; at or beyond the "
                         f"mean-square threshold the second moment has no limit")
    p = batch_weight(n, b, sampling)
    u = _range_basis(h)
    hr = np.einsum("ia,nij,jb->nab", u, h, u)
    gr = g @ u
    r = hr.shape[1]
    hbar, eye = hr.mean(axis=0), np.eye(r)
    c = 0.5 * (np.kron(hbar, eye) + np.kron(eye, hbar))
    dm = kron_second_moment(hr, b, sampling, max_bytes=max_bytes)
    sg = gr.T @ gr / n
    sig = (step * p * np.linalg.solve(2 * c - step * dm, sg.reshape(-1))).reshape(r, r)
    out = u @ sig @ u.T
    return 0.5 * (out + out.T)
