r"""The laws of a noisy sign: :math:`E\,\mathrm{sign}(g + sZ)` and its variance under Gaussian,
Student-t and Cauchy noise, the density at zero that sets the slope at :math:`g = 0`, the contraction of
DSignSGD on a quadratic and the variance of its linearized recursion.
"""
from __future__ import annotations

import math
import numpy as np
import sympy as sp
from scipy import special

from theory.validate import array, choice, integer
from theory.sde.modified import NOISE_LAWS, _pos

__all__ = [
    "noise_density_at_zero", "mean_sign", "sign_variance", "mean_sign_symbolic", "mean_sign_slope_at_zero",
    "sign_contraction", "sign_linear_variance"
]


# ----------------------------------------------------------------------------- sign laws

def _noise_args(noise: str, nu):
    choice("noise", noise, NOISE_LAWS)
    if noise == "student_t":
        if nu is None:
            raise ValueError("nu: noise='student_t' needs the degrees of freedom nu > 0, got None")
        return _pos("nu", nu)
    if nu is not None:
        raise ValueError(f"nu: only noise='student_t' takes nu; got nu={nu!r} with noise={noise!r}")
    return None


def noise_density_at_zero(noise: str = "gaussian", nu=None) -> float:
    r"""Density :math:`\rho(0)` of the standard noise law: :math:`1/\sqrt{2\pi}`, :math:`1/\pi` (Cauchy),
    :math:`\Gamma(\tfrac{\nu+1}2)/(\sqrt{\nu\pi}\,\Gamma(\tfrac\nu2))` (Student-t)."""
    nu = _noise_args(noise, nu)
    if noise == "gaussian":
        return 1 / math.sqrt(2 * math.pi)
    if noise == "cauchy":
        return 1 / math.pi
    return math.exp(special.gammaln((nu + 1) / 2) - special.gammaln(nu / 2)) / math.sqrt(nu * math.pi)


def mean_sign(grad, scale, noise: str = "gaussian", nu=None):
    r""":math:`E\,\mathrm{sign}(g + \sigma Z)` for symmetric noise Z: :math:`2F(g/\sigma) - 1`.

    Gaussian :math:`\mathrm{erf}(g/(\sqrt2\sigma))`; Student-t :math:`2F_\nu(g/\sigma) - 1`; Cauchy
    :math:`\tfrac{2}{\pi}\arctan(g/\sigma)`. ``grad`` is a number or array, ``scale`` > 0.
    """
    nu = _noise_args(noise, nu)
    scale = _pos("scale", scale)
    g = array("grad", grad, nonempty=False)
    u = g / scale
    if noise == "gaussian":
        m = special.erf(u / np.sqrt(2.0))
    elif noise == "cauchy":
        m = 2.0 / np.pi * np.arctan(u)
    else:
        m = 2.0 * special.stdtr(nu, u) - 1.0
    return float(m) if m.ndim == 0 else m


def sign_variance(grad, scale, noise: str = "gaussian", nu=None, n_agents: int = 1):
    r"""Per-coordinate variance of the agent-averaged sign: :math:`(1 - m^2)/N`."""
    n = integer("n_agents", n_agents, low=1)
    return (1.0 - np.square(mean_sign(grad, scale, noise, nu))) / n


def mean_sign_symbolic(noise: str, nu: int | None = None) -> sp.Expr:
    r""":math:`2\int_{-\infty}^{u}\rho(z)\,dz - 1` integrated by sympy for the density :math:`\rho` of the
    noise law (``u`` = g/σ); Student-t for a given integer :math:`\nu`."""
    choice("noise", noise, NOISE_LAWS)
    if noise == "student_t":
        nu = integer("nu", nu, low=1)
    elif nu is not None:
        raise ValueError(f"nu: only noise='student_t' takes nu; got nu={nu!r} with noise={noise!r}")
    u, z = sp.Symbol("u", real=True), sp.Symbol("z", real=True)
    if noise == "gaussian":
        rho = sp.exp(-z**2 / 2) / sp.sqrt(2 * sp.pi)
    elif noise == "cauchy":
        rho = 1 / (sp.pi * (1 + z**2))
    else:
        n = sp.Integer(nu)
        rho = sp.gamma((n + 1) / 2) / (sp.sqrt(n * sp.pi) * sp.gamma(n / 2)) * (1 + z**2 / n) ** (-(n + 1) / 2)
    # Symmetric density: 2F(u) - 1 = 2 * integral of rho over [0, u].
    return sp.simplify(2 * sp.integrate(rho, (z, 0, u)))


def mean_sign_slope_at_zero(scale, noise: str = "gaussian", nu=None) -> float:
    r"""Slope :math:`2\rho(0)/\sigma` of the mean sign at :math:`g = 0`."""
    scale = _pos("scale", scale)
    return 2 * noise_density_at_zero(noise, nu) / scale


def sign_contraction(curvature, scale, noise: str = "gaussian", nu=None) -> float:
    r"""Linear contraction rate :math:`\kappa = f''(x^\ast)\cdot 2\rho(0)/\sigma` of the DSignSGD drift near a
    minimizer: :math:`E[x_{k+1} - x_k] = -\eta_k\,m(f'(x_k)) \approx -\eta_k\kappa\,(x_k - x^\ast)`."""
    curvature = _pos("curvature", curvature)
    return curvature * mean_sign_slope_at_zero(scale, noise, nu)


def sign_linear_variance(etas, kappa, n_agents: int = 1) -> np.ndarray:
    r"""Variance :math:`v_k` of linearized DSignSGD near a minimizer after each step of the schedule ``etas``.

    Near :math:`x^\ast` the agent-averaged sign has mean :math:`\kappa(x - x^\ast)` and variance
    :math:`(1 - m^2)/N \approx 1/N`, so :math:`v_{k+1} = (1 - \eta_k\kappa)^2 v_k + \eta_k^2/N` from
    :math:`v_0 = 0` (the transient from a far start is forgotten geometrically). For
    :math:`\eta_k = \eta/\sqrt{k+1}` it settles to :math:`v_k \approx \eta_k/(2\kappa N)`: the gap
    :math:`E f - f^\ast \approx \tfrac{f''}{2}v_k` decays like :math:`k^{-1/2}`. Returns
    :math:`(v_1, \ldots, v_K)`.
    """
    etas = array("etas", etas, ndim=1, low=0.0, low_open=True)
    kappa = _pos("kappa", kappa)
    n = integer("n_agents", n_agents, low=1)
    # Linear recursion v_k = a_k v_{k-1} + b_k solved in closed form, in log space so that long schedules
    # neither underflow nor overflow: v_k = exp(C_k) * sum_{j<=k} b_j exp(-C_j), C_k = sum_{i<=k} log a_i.
    a = np.maximum((1.0 - etas * kappa) ** 2, 1e-300)  # a step with eta*kappa = 1 erases the past (a = 0)
    C = np.cumsum(np.log(a))
    return np.exp(C + np.logaddexp.accumulate(2 * np.log(etas) - math.log(n) - C))
