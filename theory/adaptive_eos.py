r"""Adaptive gradient methods at the edge of stability: the thresholds of Adam and RMSProp on a quadratic.

Adam with first-moment EMA :math:`m \leftarrow \beta_1 m + (1-\beta_1)g` and a *frozen* diagonal preconditioner
:math:`P` steps :math:`x \leftarrow x - \eta P^{-1}m` (bias correction only rescales the transient). On
:math:`f = \tfrac12 x^\top Hx`, along an eigenvector of :math:`P^{-1}H` with eigenvalue :math:`q` the state
:math:`(x, m)` is multiplied by the matrix :func:`frozen_update_matrix`; its characteristic polynomial
(:func:`frozen_characteristic_polynomial`, derived here with sympy) is

.. math:: z^2 - \bigl(1 + \beta_1 - (1-\beta_1)\eta q\bigr)z + \beta_1,

whose root leaves the unit disc through :math:`z = -1` at

.. math:: \eta q = \frac{2(1+\beta_1)}{1-\beta_1}

(:func:`frozen_threshold`: 38 at :math:`\beta_1 = 0.9`, 2 for RMSProp, :math:`\beta_1 = 0`). Complex roots have
:math:`|z| = \sqrt{\beta_1}`.

**RMSProp's lattice 2-cycle** (:math:`\beta_1 = 0`, :math:`\epsilon = 0`). With :math:`v = g^2` the update is
:math:`x \leftarrow x - \eta\,\mathrm{sign}(Hx)`; for any sign vector :math:`s \in \{\pm1\}^d` with
:math:`\mathrm{sign}(Hs) = s` (:func:`rmsprop_cycle_signs`) the orbit :math:`x = \pm(\eta/2)s` is an exact 2-cycle
(:func:`rmsprop_cycle_amplitude` solves :math:`A - \eta = -A`). On it :math:`|g|` is constant, so :math:`v = g^2`
for every :math:`\beta_2`, :math:`P = (\eta/2)|Hs|` and :math:`P^{-1}Hs = (2/\eta)s`: :math:`s` is an eigenvector with
:math:`\eta q = 2`, RMSProp's own threshold; the loss is :math:`(\eta^2/8)s^\top Hs` (:func:`rmsprop_cycle_loss`).

**Adam's EMA 2-cycle** (:math:`\beta_1 > 0`, one dimension): with :math:`g` alternating in sign the stationary EMA
is :math:`m = \tfrac{1-\beta_1}{1+\beta_1}g`, so :math:`x = \pm A^\ast` with
:math:`A^\ast = \eta(1-\beta_1)/(2(1+\beta_1))` (:func:`ema_cycle_amplitude`) is self-consistent and sits exactly
at :math:`\eta q = 2(1+\beta_1)/(1-\beta_1)`. It is not attracting (steplab measures Adam's orbit hovering
below the threshold instead).

Pure maths: no JAX, no I/O; every public function validates its arguments with :mod:`theory.validate`.
"""
from __future__ import annotations

import functools
import itertools

import numpy as np
import sympy as sp

from theory import validate as V

__all__ = [
    "BETA1",
    "ETA",
    "MAX_SIGN_DIM",
    "Q",
    "Z",
    "ema_cycle_amplitude",
    "frozen_characteristic_polynomial",
    "frozen_spectral_radius",
    "frozen_threshold",
    "frozen_update_matrix",
    "preconditioned_sharpness",
    "rmsprop_cycle_amplitude",
    "rmsprop_cycle_loss",
    "rmsprop_cycle_sharpness",
    "rmsprop_cycle_signs",
]

Z = sp.Symbol("z")
ETA, Q = sp.symbols("eta q", positive=True)
BETA1 = sp.Symbol("beta_1", nonnegative=True)
_U = sp.Symbol("u", positive=True)  # eta * q, the only combination the frozen map depends on

#: the largest dimension :func:`rmsprop_cycle_signs` enumerates (2^(d-1) sign vectors)
MAX_SIGN_DIM = 16


@functools.cache
def frozen_update_matrix() -> sp.Matrix:
    r"""The map :math:`(x, m) \mapsto (x', m')` of frozen-preconditioner Adam along one eigenvector of :math:`P^{-1}H`.

    In the eigen-coordinate the gradient preconditioned by :math:`P` is :math:`q x`, so
    :math:`m' = \beta_1 m + (1-\beta_1)qx`, :math:`x' = x - \eta m'` (read off the update rule, then expanded).
    """
    x, m = sp.symbols("x m")
    m_new = BETA1 * m + (1 - BETA1) * Q * x
    x_new = x - ETA * m_new
    return sp.Matrix([x_new, m_new]).jacobian([x, m]).applyfunc(sp.expand)


@functools.cache
def frozen_characteristic_polynomial() -> sp.Expr:
    r""":math:`\det(zI - M)` of :func:`frozen_update_matrix`, in :math:`z`, :math:`u = \eta q` and :math:`\beta_1`."""
    M = frozen_update_matrix()
    poly = sp.expand((Z * sp.eye(2) - M).det())
    return sp.expand(poly.subs(Q, _U / ETA))


@functools.cache
def _threshold_expr() -> sp.Expr:
    # the flip: the root at z = -1 (the polynomial at z = 1 vanishes only at u = 0, the lower edge)
    (root,) = sp.solve(sp.Eq(frozen_characteristic_polynomial().subs(Z, -1), 0), _U)
    return sp.simplify(root)


def frozen_threshold(beta1) -> float:
    r"""The largest stable :math:`\eta q` of frozen-preconditioner Adam: :math:`2(1+\beta_1)/(1-\beta_1)`.

    Solved by sympy from :func:`frozen_characteristic_polynomial` at :math:`z = -1`. ``beta1`` in :math:`[0, 1)`.
    """
    b = V.real("beta1", beta1, low=0.0, high=1.0, high_open=True)
    return float(_threshold_expr().subs(BETA1, b))


@functools.cache
def _coefficients():
    poly = sp.Poly(frozen_characteristic_polynomial(), Z)
    return sp.lambdify((_U, BETA1), poly.all_coeffs(), "numpy")


def frozen_spectral_radius(eta_q, beta1) -> np.ndarray:
    r"""The spectral radius :math:`\max|z|` of the frozen map at each :math:`\eta q` (the per-step growth factor).

    Args:
      eta_q: a positive :math:`\eta q` or an (m,) array of them.
      beta1: :math:`\beta_1 \in [0, 1)`.
    """
    u = np.atleast_1d(V.array("eta_q", eta_q, ndim=(0, 1), low=0.0, low_open=True))
    b = V.real("beta1", beta1, low=0.0, high=1.0, high_open=True)
    coef = _coefficients()
    out = np.array([np.max(np.abs(np.roots([float(np.broadcast_to(c, ()) if np.ndim(c) == 0 else c)
                                            for c in coef(ui, b)]))) for ui in u])
    return out.reshape(np.shape(eta_q))


def preconditioned_sharpness(H, p) -> float:
    r""":math:`\lambda_{\max}(P^{-1}H)` for a symmetric PSD :math:`H` (d, d) and a positive diagonal :math:`P` = ``p`` (d,).

    Computed as the top eigenvalue of the similar symmetric matrix :math:`P^{-1/2}HP^{-1/2}`.
    """
    H = V.symmetric_psd("H", V.array("H", H, ndim=2), "H")
    p = V.array("p", p, ndim=1, low=0.0, low_open=True)
    if p.shape[0] != H.shape[0]:
        raise ValueError(f"p: expected one entry per row of H ({H.shape[0]}), got {p.shape[0]}")
    r = 1.0 / np.sqrt(p)
    return float(np.linalg.eigvalsh(r[:, None] * H * r[None, :])[-1])


@functools.cache
def _rmsprop_amplitude_expr() -> sp.Expr:
    A = sp.Symbol("A", positive=True)
    # one step maps A s to A s - eta sign(H s) = (A - eta) s; a 2-cycle needs that to be -A s
    (root,) = sp.solve(sp.Eq(A - ETA, -A), A)
    return root


def rmsprop_cycle_amplitude(eta) -> float:
    r"""The amplitude :math:`A` of RMSProp's lattice 2-cycle :math:`x = \pm A s`: :math:`\eta/2` (sympy)."""
    e = V.real("eta", eta, low=0.0, low_open=True)
    return float(_rmsprop_amplitude_expr().subs(ETA, e))


def _sym_psd(H) -> np.ndarray:
    return V.symmetric_psd("H", V.array("H", H, ndim=2), "H")


def rmsprop_cycle_signs(H) -> np.ndarray:
    r"""Every sign vector :math:`s` (first entry +1; :math:`-s` is the same cycle) with :math:`\mathrm{sign}(Hs) = s`.

    ``H``: symmetric PSD, dimension at most :data:`MAX_SIGN_DIM`. Returns an (k, d) array (k may be 0).
    """
    H = _sym_psd(H)
    d = V.integer("H.shape[0]", H.shape[0], low=1, high=MAX_SIGN_DIM)
    found = []
    for tail in itertools.product((1.0, -1.0), repeat=d - 1):
        s = np.array((1.0,) + tail)
        if np.array_equal(np.sign(H @ s), s):
            found.append(s)
    return np.array(found).reshape(len(found), d)


def _sign_vector(s, d: int) -> np.ndarray:
    s = V.array("s", s, shape=(d,))
    if not np.all(np.abs(s) == 1.0):
        raise ValueError(f"s: expected a sign vector (entries +1 or -1) of length {d}, got {s.tolist()}")
    return s


def rmsprop_cycle_loss(H, s, eta) -> float:
    r"""The loss :math:`\tfrac12 x^\top Hx` on the cycle :math:`x = \pm(\eta/2)s`: :math:`(\eta^2/8)s^\top Hs`."""
    H = _sym_psd(H)
    s = _sign_vector(s, H.shape[0])
    A = rmsprop_cycle_amplitude(eta)
    return float(0.5 * A * A * (s @ H @ s))


def rmsprop_cycle_sharpness(H, s, eta) -> float:
    r""":math:`\eta\lambda_{\max}(P^{-1}H)` on the cycle, with :math:`P = |g| = (\eta/2)|Hs|` (:math:`v = g^2` exactly).

    ``s`` must satisfy :math:`\mathrm{sign}(Hs) = s` (then :math:`s` is an eigenvector with :math:`\eta q = 2`;
    whether it is the top one depends on :math:`H`, which this function reports rather than assumes).
    """
    H = _sym_psd(H)
    s = _sign_vector(s, H.shape[0])
    e = V.real("eta", eta, low=0.0, low_open=True)
    hs = H @ s
    if not np.array_equal(np.sign(hs), s):
        raise ValueError(f"s: expected sign(H s) = s (a lattice cycle of RMSProp), got sign(H s) = {np.sign(hs).tolist()}")
    return e * preconditioned_sharpness(H, rmsprop_cycle_amplitude(e) * np.abs(hs))


def ema_cycle_amplitude(eta, beta1) -> float:
    r"""Adam's self-consistent 1-D EMA 2-cycle amplitude :math:`A^\ast = \eta(1-\beta_1)/(2(1+\beta_1))`.

    On :math:`x = \pm A` with :math:`g` alternating, the stationary EMA is :math:`m = g(1-\beta_1)/(1+\beta_1)` and
    :math:`\sqrt v = |g|`; a step moves :math:`x` by :math:`\eta(1-\beta_1)/(1+\beta_1)`, which must be :math:`2A`.
    """
    e = V.real("eta", eta, low=0.0, low_open=True)
    b = V.real("beta1", beta1, low=0.0, high=1.0, high_open=True)
    return float(_ema_amplitude_expr().subs({ETA: e, BETA1: b}))


@functools.cache
def _ema_amplitude_expr() -> sp.Expr:
    A, g, m = sp.symbols("A g m", positive=True)
    # the EMA after a gradient -g must be -m when the one before was m (the gradient alternates in sign)
    (m_alt,) = sp.solve(sp.Eq(-m, BETA1 * m + (1 - BETA1) * (-g)), m)
    (root,) = sp.solve(sp.Eq(2 * A, ETA * m_alt / g), A)
    return root
