r"""Which floor law applies: the affine-variance noise diagnostic, and the local form of the sign floor.

**Affine-variance diagnostic.** A stochastic gradient :math:`g` of :math:`f` is modelled by

.. math:: E\|g - \nabla f\|^2 = \sigma_0^2 + \sigma_1^2\,\|\nabla f\|^2 ,

and :func:`affine_variance_fit` estimates :math:`(\sigma_0^2, \sigma_1^2)` by weighted least squares
from noisy variance estimates at points along a trajectory. At an operating point the ratio
:math:`\rho = \sigma_0^2/(\sigma_1^2\|\nabla f\|^2)` (:func:`noise_ratio`) says which part of the
noise dominates: :math:`\rho \ll 1` is the multiplicative regime (the noise shrinks with the
gradient: sign and normalized methods have an :math:`\eta^2` floor, SGD contracts), :math:`\rho \gg 1`
the additive regime (an :math:`O(\eta)` floor for every method). :func:`regime` decides with the
fit's standard error; :func:`floor_slope` gives the predicted log-log slope of the floor.

Near a minimizer :math:`\theta^*` with Hessian eigenvalues :math:`h_i` and minibatch noise of
covariance :math:`S/B` (per-sample covariance :math:`S`, batch :math:`B` drawn with replacement),
SGD on the local quadratic has the exact stationary excess (:func:`sgd_local_floor`)

.. math:: E f - f^* = \sum_i \frac{\eta\,\tilde S_{ii}}{2B(2 - \eta h_i)} \;\to\; \frac{\eta\,\mathrm{tr}\,S}{4B},

:math:`\tilde S` being :math:`S` in the Hessian's eigenbasis: the slope-1 law of the additive regime.

**Local form.** signSGD under multiplicative noise :math:`g = f'(x)(1 + \sigma\xi)` on a 1-D
function whose derivative has the sign of :math:`x - x^*` takes exactly the steps it takes on the
quadratic: :math:`\mathrm{sign}(g) = \mathrm{sign}(x - x^*)\,\mathrm{sign}(1 + \sigma\xi)`. So
:math:`x - x^*` follows the same two-ladder law :math:`\pi` whatever :math:`f` is, and

.. math:: E f - f^* = \sum_n \pi(n)\,[f(x^* + c + n\eta) - f^*]
          = C(\sigma)\,f''(x^*)\,\eta^2\,(1 + O(\eta^2))

(:func:`local_floor`, :func:`local_form`): the curvature *at the minimizer* sets the constant,
not a smoothness bound over a region. The odd moments of :math:`\pi` vanish at offset :math:`\eta/2`,
so the first correction is the quartic term :math:`f''''(x^*)E(x-x^*)^4/24 = O(\eta^4)`. Three
test functions, each with :math:`x^* = 0` (:data:`WELLS`): ``"quartic"`` :math:`x^2/2 + x^4/4`
(:math:`(L_0, L_1)`-smooth, not globally smooth), ``"exp"`` :math:`2(e^x - x - 1)` (the classic
:math:`(L_0, L_1)` example, asymmetric) and ``"logcosh"`` :math:`2x^2 - 3\log\cosh x` (globally
4-smooth, curvature 1 at the minimizer).

NumPy/SciPy only; every public function validates its arguments (:mod:`theory.validate`).
"""
from __future__ import annotations

import math

import numpy as np

from theory import validate as V
from theory import sign_floor as SF

__all__ = ["WELLS", "REGIMES", "well", "curvature", "smoothness", "local_floor", "local_form",
           "affine_variance_fit", "noise_ratio", "regime", "floor_slope", "sgd_local_floor"]

WELLS = ("quartic", "exp", "logcosh")
REGIMES = ("additive", "multiplicative", "undecided")


# ----------------------------------------------------------------------------- the wells
def well(name: str, x) -> np.ndarray:
    r""":math:`f(x) - f(x^*)` of the test function ``name`` (:data:`WELLS`), :math:`x^* = 0`, elementwise.

    ``"quartic"``: :math:`x^2/2 + x^4/4`; ``"exp"``: :math:`2(e^x - x - 1)`; ``"logcosh"``:
    :math:`2x^2 - 3\log\cosh x` (written with :math:`\log\cosh x = |x| + \log(1 + e^{-2|x|}) - \log 2`,
    which does not overflow).
    """
    V.choice("name", name, WELLS)
    x = V.array("x", x)
    with np.errstate(over="ignore", invalid="ignore"):
        if name == "quartic":
            return x * x / 2 + x**4 / 4
        if name == "exp":
            # e^x - 1 - x without cancellation near 0
            return 2 * np.where(np.abs(x) < 1e-3, x * x / 2 + x**3 / 6 + x**4 / 24, np.expm1(x) - x)
        ax = np.abs(x)
        logcosh = ax + np.log1p(np.exp(-2 * ax)) - math.log(2.0)
        return 2 * x * x - 3 * logcosh


def curvature(name: str) -> float:
    r""":math:`f''(x^*)` of the well ``name``: 1 (quartic), 2 (exp), :math:`4 - 3 = 1` (logcosh)."""
    V.choice("name", name, WELLS)
    return {"quartic": 1.0, "exp": 2.0, "logcosh": 1.0}[name]


def smoothness(name: str, radius: float) -> float:
    r""":math:`\max_{|x - x^*| \le R} f''(x)`: the smoothness constant over the interval of radius ``radius``.

    :math:`f''` is :math:`1 + 3x^2` (quartic), :math:`2e^x` (exp), :math:`4 - 3\,\mathrm{sech}^2 x`
    (logcosh); each is largest at :math:`|x| = R` (at :math:`x = R` for exp).
    """
    V.choice("name", name, WELLS)
    r = V.real("radius", radius, low=0.0)
    if name == "quartic":
        return 1.0 + 3.0 * r * r
    if name == "exp":
        return SF.finite(2.0 * np.exp(np.float64(r)), radius=r)
    return 4.0 - 3.0 / math.cosh(min(r, 350.0)) ** 2


def local_floor(name: str, eta: float, sigma: float, offset="mid", *, law: str = "gaussian",
                df: float | None = None) -> float:
    r"""Exact stationary :math:`E f - f^*` of signSGD on the well ``name`` under multiplicative noise.

    :math:`\sum_n \pi(n)[f(c + n\eta) - f^*]` over the two-ladder law :math:`\pi` of
    :func:`theory.sign_floor.ladder_pmf` (the same law as on the quadratic: see the module
    docstring), :math:`p = F_\xi(-1/\sigma)`, offset :math:`c = \eta/2` (``"mid"``) or a number in
    :math:`(0, \eta)`. The ladder is summed until the weight :math:`r^n` falls below :math:`10^{-300}`
    (every well grows at most like :math:`e^{|x|}`). ``inf`` when the series diverges
    (:math:`r e^{\eta} \ge 1` for the exponential well) or when signSGD does not contract (:math:`p \ge 1/2`).
    """
    V.choice("name", name, WELLS)
    eta = V.real("eta", eta, low=0.0, low_open=True)
    sigma = V.real("sigma", sigma, low=0.0)
    if isinstance(offset, str):
        V.choice("offset", offset, ("mid",))
        c = eta / 2
    else:
        c = V.real("offset", offset, low=0.0, high=eta, low_open=True, high_open=True)
    p = SF.away_probability(sigma, law, df)
    if not p < 0.5:
        return math.inf
    if p == 0:
        return float(well(name, np.array([c, c - eta])).sum() / 2)  # the deterministic 2-cycle
    r = p / (1 - p)
    if name == "exp" and not r * math.exp(min(eta, 700.0)) < 1:
        return math.inf
    n_max = int(min(math.ceil(-300 * math.log(10) / math.log(r)) + 2, 2_000_000))
    k = np.arange(n_max)
    w = (1 - r) / 2 * np.exp(k * math.log(r))  # pi(k) = pi(-1-k)
    vals = well(name, c + k * eta) + well(name, c - (k + 1) * eta)
    with np.errstate(over="ignore", invalid="ignore"):
        total = float(np.sum(np.where(w > 0, w * vals, 0.0)))
    return total if np.isfinite(total) else math.inf


def local_form(name: str, eta: float, sigma: float, *, law: str = "gaussian", df: float | None = None) -> float:
    r"""The local form :math:`C_{\rm mid}(\sigma)\,f''(x^*)\,\eta^2`: the quadratic's floor constant at the
    minimizer's curvature (the :math:`\eta \to 0` limit of :func:`local_floor` at offset :math:`\eta/2`)."""
    V.choice("name", name, WELLS)
    eta = V.real("eta", eta, low=0.0, low_open=True)
    return SF.c_mid(sigma, law, df) * curvature(name) * eta**2


# ----------------------------------------------------------------------------- affine-variance diagnostic
def affine_variance_fit(grad_sq, variance, variance_se) -> dict:
    r"""Weighted least squares of :math:`v_j = \sigma_0^2 + \sigma_1^2 G_j` (:math:`G_j = \|\nabla f\|^2` at point :math:`j`).

    ``variance`` :math:`v_j` are estimates of :math:`E\|g - \nabla f\|^2` with standard errors
    ``variance_se`` (weights :math:`1/\mathrm{SE}_j^2`). Returns ``sigma0_sq``, ``sigma1_sq``, their
    standard errors ``sigma0_sq_se``, ``sigma1_sq_se`` (from :math:`(A^\top W A)^{-1}`, scaled up by
    the reduced :math:`\chi^2` when it exceeds 1: a misfit of the affine model widens them), ``cov``
    (their covariance) and ``chi2`` (reduced). At least three points, not all at one :math:`G`.
    """
    G = V.array("grad_sq", grad_sq, ndim=1, low=0.0)
    v = V.array("variance", variance, ndim=1, low=0.0)
    s = V.array("variance_se", variance_se, ndim=1, low=0.0, low_open=True)
    if not (len(G) == len(v) == len(s)):
        raise ValueError(f"grad_sq, variance, variance_se: expected one value each per point, got lengths "
                         f"{len(G)}, {len(v)}, {len(s)}")
    if len(G) < 3:
        raise ValueError(f"grad_sq: an affine fit with a standard error needs at least 3 points, got {len(G)}")
    if not np.ptp(G) > 0:
        raise ValueError("grad_sq: all points have the same gradient norm; the slope sigma1^2 is not identified")
    A = np.stack([np.ones_like(G), G], axis=1)
    w = 1.0 / s**2
    AtWA = A.T @ (w[:, None] * A)
    coef = np.linalg.solve(AtWA, A.T @ (w * v))
    resid = v - A @ coef
    chi2 = float(np.sum(w * resid**2) / (len(G) - 2))
    cov = np.linalg.inv(AtWA) * max(chi2, 1.0)
    return {"sigma0_sq": float(coef[0]), "sigma1_sq": float(coef[1]), "sigma0_sq_se": float(math.sqrt(cov[0, 0])),
            "sigma1_sq_se": float(math.sqrt(cov[1, 1])), "cov": cov, "chi2": chi2}


def noise_ratio(sigma0_sq: float, sigma1_sq: float, grad_sq: float) -> float:
    r""":math:`\rho = \sigma_0^2/(\sigma_1^2\|\nabla f\|^2)`: additive over multiplicative noise at an operating point.

    ``inf`` when the multiplicative part vanishes there (:math:`\sigma_1^2 G = 0 < \sigma_0^2`), 0 when
    :math:`\sigma_0^2 = 0`. ``sigma0_sq`` and ``sigma1_sq`` are variances (:math:`\ge 0`).
    """
    s0 = V.real("sigma0_sq", sigma0_sq, low=0.0)
    s1 = V.real("sigma1_sq", sigma1_sq, low=0.0)
    G = V.real("grad_sq", grad_sq, low=0.0)
    if s0 == 0:
        return 0.0
    den = s1 * G
    return math.inf if den == 0 else s0 / den


def regime(fit: dict, grad_sq: float, z: float = 4.0) -> str:
    r"""The noise regime at an operating point :math:`\|\nabla f\|^2 = ` ``grad_sq``, from an :func:`affine_variance_fit`.

    ``"additive"`` when :math:`\rho > 1` even at the low end of the band, :math:`\sigma_0^2 - z\,\mathrm{SE}
    > \sigma_1^2 G`; ``"multiplicative"`` when :math:`\rho < 1` at its high end,
    :math:`\sigma_0^2 + z\,\mathrm{SE} < \sigma_1^2 G`; otherwise ``"undecided"`` (the fit cannot tell
    at this resolution; near :math:`\rho = 1` both floors matter, the mixed-noise crossover).
    """
    if not isinstance(fit, dict) or not {"sigma0_sq", "sigma0_sq_se", "sigma1_sq"} <= set(fit):
        raise TypeError(f"fit: expected the dict of affine_variance_fit, got {type(fit).__name__}")
    s0 = V.real("fit['sigma0_sq']", fit["sigma0_sq"])
    se = V.real("fit['sigma0_sq_se']", fit["sigma0_sq_se"], low=0.0)
    s1 = V.real("fit['sigma1_sq']", fit["sigma1_sq"])
    G = V.real("grad_sq", grad_sq, low=0.0)
    z = V.real("z", z, low=0.0, low_open=True)
    mult = max(s1, 0.0) * G
    if s0 - z * se > mult:
        return "additive"
    if s0 + z * se < mult:
        return "multiplicative"
    return "undecided"


def floor_slope(regime_name: str, method: str) -> float:
    r"""Predicted log-log slope of the floor :math:`E f - f^*` in :math:`\eta` for ``method`` in a noise regime.

    Additive regime: 1 for every method. Multiplicative regime: 2 for ``"sign"`` (and every
    0-homogeneous update); SGD has no floor there (it contracts), so its slope is ``nan``.
    """
    V.choice("regime_name", regime_name, REGIMES[:2])
    V.choice("method", method, ("sgd", "sign"))
    if regime_name == "additive":
        return 1.0
    return 2.0 if method == "sign" else math.nan


def sgd_local_floor(h, s_diag, eta: float, batch: int) -> float:
    r"""SGD's exact stationary excess on the local quadratic: :math:`\sum_i \eta\tilde S_{ii}/(2B(2 - \eta h_i))`.

    ``h``: Hessian eigenvalues at the minimizer (:math:`\ge 0`); ``s_diag``: the per-sample gradient
    covariance's diagonal in that eigenbasis (:math:`\ge 0`, same length); a minibatch of ``batch``
    samples drawn with replacement has covariance :math:`S/B`. From the fixed point of
    :math:`P = (I - \eta H)P(I - \eta H) + \eta^2 S/B`: :math:`P_{ii} = \eta\tilde S_{ii}/(B h_i(2 - \eta h_i))`
    and :math:`E f - f^* = \tfrac12\sum_i h_i P_{ii}`. ``ValueError`` unless :math:`\eta h_i < 2` (stable).
    """
    h = V.array("h", h, ndim=1, low=0.0)
    s = V.array("s_diag", s_diag, ndim=1, low=0.0)
    if h.shape != s.shape:
        raise ValueError(f"h, s_diag: expected one value each per eigen-direction, got shapes {h.shape} and {s.shape}")
    eta = V.real("eta", eta, low=0.0, low_open=True)
    batch = V.integer("batch", batch, low=1)
    if not eta * h.max() < 2:
        raise ValueError(f"eta: SGD is stable only for eta * max(h) < 2, got eta = {eta} with max(h) = {h.max():.6g}")
    return float(np.sum(eta * s / (2 * batch * (2 - eta * h))))
