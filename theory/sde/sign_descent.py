r"""Distributed SignSGD (DSignSGD): the one-step descent bound and its remainder, the sufficient
step (and Theorem 4.3's), the (L0, L1) constants of the toys, the exact one-step change and the critical step
of the sign models.
"""
from __future__ import annotations

import functools
import math
import numpy as np
import sympy as sp
from scipy import optimize, special

from theory.validate import array, choice, integer, renamed_keyword
from theory.sde.modified import X, _pos, toy_function
from theory.sde.sign_laws import _noise_args, mean_sign, noise_density_at_zero
from theory.sde.thresholds import l0_for_l1

__all__ = [
    "SIGN_DESCENT_FUNCTIONS", "SIGN_STEP_RULES", "sign_descent_bound_symbolic", "sign_remainder_factor",
    "sign_slope_bounds", "sign_descent_bound", "sign_sufficient_step", "sign_descent_K_symbolic", "theorem43_step",
    "sign_l0l1", "sign_one_step_change", "SIGN_CHANGE_MODELS", "sign_generator_change", "sign_critical_step"
]


# ----------------------------------------------------------------------------- DSignSGD: one-step descent under (L0, L1)

SIGN_DESCENT_FUNCTIONS = ("quadratic", "quartic", "cosh2")
SIGN_STEP_RULES = ("steplab", "explicit", "no_noise", "no_sqrt_d", "half_phi")


@functools.lru_cache(maxsize=1)
def _sign_descent_symbolic():
    h, A, G, L0, L1, d, n, m2, a, t = sp.symbols("h A G L0 L1 d N m2 a t", positive=True)
    # Taylor remainder along the segment: int_0^1 (1 - t) e^{a t} dt, the Hessian growing at most like e^{L1 r}.
    phi = sp.simplify(sp.integrate((1 - t) * sp.exp(a * t), (t, 0, 1)))
    # One coordinate of the agent-averaged sign: (1/N) sum_i s_i, E s_i = m, s_i^2 = 1, agents independent:
    # E(sum s_i)^2 = N + N(N-1) m^2. Summed over coordinates: ||m||^2 (1 - 1/N) + d/N.
    second = sp.expand((n * d + n * (n - 1) * m2) / n**2)
    bound = -h * A + h**2 * (L0 + L1 * G) * phi.subs(a, L1 * h * sp.sqrt(d)) * second
    return bound, phi, second, (h, A, G, L0, L1, d, n, m2, a)


def sign_descent_bound_symbolic() -> tuple[sp.Expr, sp.Expr, sp.Expr, tuple[sp.Symbol, ...]]:
    r"""Upper bound on the expected one-step change of DSignSGD on an :math:`(L_0, L_1)`-smooth f (sympy).

    One step :math:`x^+ = x - hD`, :math:`h = \eta\eta_t`, :math:`D_j = \frac1N\sum_i\mathrm{sign}(\partial_jf + Z_{ij})`,
    :math:`E D_j = m_j`. Taylor with integral remainder, :math:`\|\nabla^2 f(z)\| \le L_0 + L_1\|\nabla f(z)\|` and
    Grönwall (:math:`\|\nabla f(z)\| + L_0/L_1 \le (G + L_0/L_1)e^{L_1\|z-x\|}`, :math:`G = \|\nabla f(x)\|`) give

    .. math:: E f(x^+) - f(x) \le -h\langle\nabla f, m\rangle
       + h^2 (L_0 + L_1 G)\,\varphi(L_1 h\sqrt d)\,\Bigl[(1 - \tfrac1N)\|m\|^2 + \tfrac dN\Bigr],\quad
       \varphi(a) = \int_0^1(1-t)e^{at}dt = \frac{e^a - 1 - a}{a^2},

    using :math:`\|hD\| \le h\sqrt d` (every entry of D is in [-1, 1]) inside :math:`\varphi` (increasing) and the
    exact second moment :math:`E\|D\|^2`. Returns ``(bound, phi, second_moment, (h, A, G, L0, L1, d, N, m2, a))``
    with :math:`A = \langle\nabla f, m\rangle`, :math:`m_2 = \|m\|^2`.
    """
    return _sign_descent_symbolic()


def sign_remainder_factor(a) -> float:
    r""":math:`\varphi(a) = (e^a - 1 - a)/a^2` (:math:`\varphi(0) = 1/2`), evaluated without cancellation."""
    a = _pos("a", a, zero=True)
    if a < 1e-4:
        return 0.5 + a / 6 + a**2 / 24
    return (math.expm1(a) - a) / a**2


def sign_slope_bounds(noise: str = "student_t", nu=None) -> tuple[float, float]:
    r"""The two constants of the mean sign :math:`m(u) = 2F(u) - 1` of a symmetric unimodal law:
    :math:`\ell = m(1)` and :math:`M = 2\rho(0)`, so that for every u

    .. math:: \ell\,\min(|u|, 1) \le |m(u)| \le \min(M|u|, 1)

    (m is concave on :math:`u \ge 0` because the density decreases there: chord below, tangent above).
    Student-t :math:`\nu = 1.5`: :math:`\ell = 0.549`, :math:`M = 0.681`."""
    nu = _noise_args(noise, nu)
    return float(mean_sign(1.0, 1.0, noise, nu)), 2.0 * noise_density_at_zero(noise, nu)


def _sign_inputs(grad, scale, L0, L1, n_agents, noise, nu):
    g = array("grad", grad, ndim=1)
    scale = _pos("scale", scale)
    L0, L1 = _pos("L0", L0, zero=True), _pos("L1", L1, zero=True)
    n = integer("n_agents", n_agents, low=1)
    nu = _noise_args(noise, nu)
    if not L0 + L1 * float(np.linalg.norm(g)) > 0:
        raise ValueError(f"L0, L1: L0 + L1*|grad| must be > 0, got L0={L0}, L1={L1}")
    m = np.atleast_1d(mean_sign(g, scale, noise, nu))
    return g, m, L0, L1, n


@renamed_keyword("h", "eta")
def sign_descent_bound(eta, grad, scale, L0, L1, n_agents, noise: str = "student_t", nu=None) -> float:
    r"""The bound of :func:`sign_descent_bound_symbolic` at step ``eta`` (its :math:`h`) and gradient ``grad`` (noise
    scale ``scale``, noise law ``noise``/``nu``, N = ``n_agents``). ``h=`` is the deprecated name of ``eta``."""
    h = _pos("eta", eta)
    g, m, L0, L1, n = _sign_inputs(grad, scale, L0, L1, n_agents, noise, nu)
    d = g.size
    second = (1 - 1 / n) * float(m @ m) + d / n
    lip = L0 + L1 * float(np.linalg.norm(g))
    return -h * float(g @ m) + h**2 * lip * sign_remainder_factor(L1 * h * math.sqrt(d)) * second


def sign_sufficient_step(grad, scale, L0, L1, n_agents, noise: str = "student_t", nu=None,
                         rule: str = "steplab") -> float:
    r"""Largest h at which :func:`sign_descent_bound` is still :math:`\le 0`: every step :math:`h < h_{\rm suff}(x)`
    decreases f in expectation. The root of

    .. math:: h\,\varphi(L_1h\sqrt d) = \frac{\langle\nabla f, m\rangle}{(L_0 + L_1G)\bigl[(1-\tfrac1N)\|m\|^2 + \tfrac dN\bigr]}

    (the left side increases in h). ``rule`` also gives two tempting wrong versions, used as rivals:
    ``explicit`` is the same condition with the mean sign replaced by its two constants
    (:func:`sign_slope_bounds`): :math:`\langle\nabla f, m\rangle \ge \ell\,\Psi`,
    :math:`\Psi = \sum_j\min(g_j^2/\sigma, |g_j|)`, and :math:`\|m\|^2 \le \Xi = \sum_j\min(M^2g_j^2/\sigma^2, 1)`:
    sufficient too, and in theorem form :math:`h < \ell/K(x)` (:func:`sign_descent_K_symbolic`).
    ``no_noise`` drops the sign noise's share :math:`d/N` of :math:`E\|D\|^2` (what a mean-field, noise-free
    analysis of the signed step gives), ``no_sqrt_d`` counts the noise and the step length of one coordinate only
    (:math:`1/N` for :math:`d/N`, :math:`L_1h` for :math:`L_1h\sqrt d`), ``half_phi`` replaces the Grönwall factor
    :math:`\varphi(L_1h\sqrt d)` by its small-step value :math:`\varphi(0) = 1/2` (the local-curvature condition
    :math:`h < 2\langle\nabla f, m\rangle/((L_0 + L_1G)E\|D\|^2)`).
    """
    choice("rule", rule, SIGN_STEP_RULES)
    g, m, L0, L1, n = _sign_inputs(grad, scale, L0, L1, n_agents, noise, nu)
    d = g.size
    noise_part = {"steplab": d / n, "explicit": d / n, "no_noise": 0.0, "no_sqrt_d": 1 / n, "half_phi": d / n}[rule]
    root_d = 1.0 if rule == "no_sqrt_d" else math.sqrt(d)
    second = (1 - 1 / n) * float(m @ m) + noise_part
    gm = float(g @ m)
    if rule == "explicit":
        ell, M = sign_slope_bounds(noise, nu)
        sc = _pos("scale", scale)
        second = (1 - 1 / n) * float(np.sum(np.minimum(M**2 * g**2 / sc**2, 1.0))) + d / n
        gm = ell * float(np.sum(np.minimum(g**2 / sc, np.abs(g))))
    if gm <= 0:
        return 0.0
    if second == 0:
        return math.inf
    rhs = gm / ((L0 + L1 * float(np.linalg.norm(g))) * second)
    if L1 == 0 or rule == "half_phi":
        return 2.0 * rhs
    lhs = lambda h: h * sign_remainder_factor(L1 * h * root_d) - rhs  # noqa: E731
    hi = 2.0 * rhs
    while lhs(hi) < 0:   # h phi(.) >= h/2: 2*rhs is an upper bracket; kept as a loop for safety
        hi *= 2
    return float(optimize.brentq(lhs, 0.0, hi, xtol=1e-300, rtol=1e-14))


@functools.lru_cache(maxsize=1)
def _sign_K():
    G, s, L0, L1, d, n, M, phi = sp.symbols("G sigma L0 L1 d N M phi", positive=True)
    psi, xi = G**2 / s, M**2 * G**2 / s**2          # linear regime: every |g_j| <= sigma
    K = sp.expand(phi * (L0 + L1 * G) * ((1 - 1 / n) * xi + d / n) / psi)
    return K, (G, s, L0, L1, d, n, M, phi)


def sign_descent_K_symbolic() -> tuple[sp.Expr, tuple[sp.Symbol, ...]]:
    r"""steplab's ``explicit`` condition in Theorem 4.3's form :math:`h < \ell_\nu/K`, where every coordinate's
    gradient is below the noise scale (:math:`\Psi = G^2/\sigma`, :math:`\Xi = M^2G^2/\sigma^2`):

    .. math:: K(G) = \varphi\Bigl[\frac{L_1d\sigma}{NG} + \frac{L_0d\sigma}{NG^2}
       + \bigl(1 - \tfrac1N\bigr)\frac{(L_0 + L_1G)M^2}{\sigma}\Bigr],\qquad \varphi = \varphi(L_1h\sqrt d) \ge \tfrac12 .

    At :math:`\|\nabla f\| = 1` and :math:`\varphi = 1/2` its first term is Theorem 4.3's :math:`L_1d\sigma/(2N)`; the
    second (the noise floor near a minimizer, growing like :math:`G^{-2}`) and the curvature term
    :math:`(1 - 1/N)(L_0 + L_1)M^2/(2\sigma)` differ from the theorem's :math:`\sqrt d(L_0 + L_1)M_\nu`.
    Returns ``(K, (G, sigma, L0, L1, d, N, M, phi))``."""
    return _sign_K()


def theorem43_step(L0, L1, d, scale, n_agents, noise: str = "student_t", nu=None) -> float:
    r"""Theorem 4.3's step restriction as secondary sources state it, :math:`\eta\eta_t < \ell_\nu/K`,
    :math:`K = L_1 d\sigma/(2N) + \sqrt d(L_0 + L_1)M_\nu`, with steplab's reading of its constants
    (:func:`sign_slope_bounds`: :math:`\ell_\nu = 2F_\nu(1) - 1`, :math:`M_\nu = 2\rho_\nu(0)`). Independent of x."""
    L0, L1 = _pos("L0", L0, zero=True), _pos("L1", L1, zero=True)
    d = integer("d", d, low=1)
    scale = _pos("scale", scale)
    n = integer("n_agents", n_agents, low=1)
    ell, M = sign_slope_bounds(noise, nu)
    K = L1 * d * scale / (2 * n) + math.sqrt(d) * (L0 + L1) * M
    if not K > 0:
        raise ValueError(f"L0, L1: K must be > 0, got L0={L0}, L1={L1}")
    return ell / K


@functools.lru_cache(maxsize=8)
def _toy_numeric(name: str):
    f = toy_function(name, lam=1)
    return tuple(sp.lambdify(X, sp.diff(f, X, k), "numpy") for k in range(3))


def sign_l0l1(name: str) -> tuple[float, float]:
    r""":math:`(L_0, L_1)` used for the separable d-dimensional :math:`\sum_j\phi(x_j)` of a toy function:
    :math:`\|\nabla^2 f\| = \max_j\phi''(x_j) \le L_0 + L_1\max_j|\phi'(x_j)| \le L_0 + L_1\|\nabla f\|_2` with the
    1-D constants of :func:`l0_for_l1`: quadratic (1, 0), quartic (1, 2), cosh2 (2, 1)."""
    choice("name", name, SIGN_DESCENT_FUNCTIONS)
    L1 = {"quadratic": 0, "quartic": 2, "cosh2": 1}[name]
    return float(l0_for_l1(toy_function(name, lam=1), L1)), float(L1)


def _sign_point(x, name, scale, n_agents, noise, nu):
    choice("name", name, SIGN_DESCENT_FUNCTIONS)
    x = array("x", x, ndim=1)
    scale = _pos("scale", scale)
    n = integer("n_agents", n_agents, low=1, high=512)
    nu = _noise_args(noise, nu)
    f0, f1, f2 = _toy_numeric(name)
    g = np.asarray(f1(x), float) * np.ones_like(x)
    return x, g, np.atleast_1d(mean_sign(g, scale, noise, nu)), n, (f0, f1, f2)


def _binomial_change(x, hs, m, n, f0):
    r""":math:`\sum_j\sum_b P(B_j = b)[\phi(x_j - h(2b - N)/N) - \phi(x_j)]` for every h in ``hs``."""
    b = np.arange(n + 1)
    p = (1 + m) / 2
    logw = (special.gammaln(n + 1) - special.gammaln(b + 1) - special.gammaln(n - b + 1))[None, :] \
        + b[None, :] * np.log(np.maximum(p, 1e-300))[:, None] + (n - b)[None, :] * np.log(np.maximum(1 - p, 1e-300))[:, None]
    w = np.exp(logw)                                   # (d, N+1)
    step = (2 * b - n) / n                             # values of D_j
    moved = x[None, :, None] - hs[:, None, None] * step[None, None, :]
    with np.errstate(over="ignore"):
        delta = np.asarray(f0(moved), float) - np.asarray(f0(x), float)[None, :, None]
    return np.sum(w[None] * delta, axis=(1, 2))


@renamed_keyword("h", "eta")
def sign_one_step_change(x, eta, name: str, scale, n_agents, noise: str = "student_t", nu=None):
    r"""Exact :math:`E f(x - hD) - f(x)` of one DSignSGD step on the separable :math:`f = \sum_j\phi(x_j)`
    (``name``: quadratic :math:`x^2/2`, quartic :math:`x^4/4`, cosh2 :math:`2\cosh x`).

    Each coordinate's agent-averaged sign is :math:`D_j = (2B_j - N)/N` with
    :math:`B_j \sim \mathrm{Binomial}(N, (1 + m_j)/2)`, independent across coordinates, so the expectation is a
    finite sum over :math:`d(N+1)` terms (no expansion in h). ``eta`` (the step :math:`h`) a number or a 1-D array;
    ``h=`` is its deprecated name."""
    x, g, m, n, (f0, _, _) = _sign_point(x, name, scale, n_agents, noise, nu)
    hs = array("eta", eta, ndim=(0, 1), low=0.0)
    out = _binomial_change(x, np.atleast_1d(hs), m, n, f0)
    return float(out[0]) if hs.ndim == 0 else out


SIGN_CHANGE_MODELS = ("discrete", "first_order_sde", "corrected_sde")


def _noise_density(u, noise: str, nu):
    """Density of the standard noise law at u (the mean sign's slope is twice it)."""
    if noise == "gaussian":
        return np.exp(-0.5 * u**2) / math.sqrt(2 * math.pi)
    if noise == "cauchy":
        return 1 / (math.pi * (1 + u**2))
    return np.exp(special.gammaln((nu + 1) / 2) - special.gammaln(nu / 2)) / math.sqrt(nu * math.pi) \
        * (1 + u**2 / nu) ** (-(nu + 1) / 2)


@renamed_keyword("h", "eta")
def sign_generator_change(x, eta, name: str, scale, n_agents, noise: str = "student_t", nu=None,
                          model: str = "first_order_sde") -> float:
    r"""What a DSignSGD SDE predicts for the one-step change over time h: h times its generator on f at x (separable
    toy f, noise scale fixed),

    .. math:: -h\langle\nabla f, m\rangle + \tfrac{h^2}{2}\Bigl[\kappa\sum_j\phi'(x_j)\,\phi''(x_j)\,m_j\,
       \frac{2\rho(\phi'(x_j)/\sigma)}{\sigma} + \sum_j\phi''(x_j)\frac{1 - m_j^2}{N}\Bigr],

    :math:`\kappa = 0` for ``first_order_sde``, 1 for ``corrected_sde`` (the drift :math:`-m + \tfrac h2J_mm`,
    :math:`J_m = \mathrm{diag}(2\rho/\sigma)\nabla^2f`). The discrete step has :math:`\sum_j\phi''m_j^2` in that
    place instead: the corrected term agrees with it where the mean sign is linear (:math:`m \approx 2\rho(0)g/\sigma`)
    and vanishes in the sign regime, where the discrete term is largest. ``eta`` is the step (the time) :math:`h`;
    ``h=`` is its deprecated name."""
    choice("model", model, SIGN_CHANGE_MODELS[1:])
    x, g, m, n, (_, _, f2) = _sign_point(x, name, scale, n_agents, noise, nu)
    h = _pos("eta", eta, zero=True)
    scale = _pos("scale", scale)
    nu = _noise_args(noise, nu)
    curv = np.asarray(f2(x), float) * np.ones_like(x)
    second = float(np.sum(curv * (1 - m**2))) / n
    if model == "corrected_sde":
        second += float(np.sum(g * curv * m * 2 * _noise_density(g / scale, noise, nu) / scale))
    return -h * float(g @ m) + h**2 / 2 * second


def sign_critical_step(x, name: str, scale, n_agents, noise: str = "student_t", nu=None,
                       model: str = "discrete") -> float:
    r"""Smallest h > 0 at which the expected one-step change stops being negative.

    ``discrete``: the first root of :func:`sign_one_step_change` (scanned on a geometric grid, then ``brentq``).
    ``first_order_sde``, ``corrected_sde``: the root of :func:`sign_generator_change` (the first-order SDE misses
    the mean step's own curvature term :math:`\tfrac{h^2}2\sum_j\phi''m_j^2`; the corrected SDE has it only where
    the mean sign is linear)."""
    choice("model", model, SIGN_CHANGE_MODELS)
    x, g, m, n, (f0, _, f2) = _sign_point(x, name, scale, n_agents, noise, nu)
    gm = float(g @ m)
    if model != "discrete":
        # the generator's change is -h gm + (h^2/2) C: its root is 2 gm / C
        curv = 2 * (sign_generator_change(x, 1.0, name, scale, n_agents, noise, nu, model=model) + gm)
        return 2 * gm / curv if curv > 0 else math.inf
    hs = np.geomspace(1e-9, 1e4, 1301)
    v = _binomial_change(x, hs, m, n, f0)
    up = np.nonzero(~(v < 0))[0]
    if up.size == 0:
        return math.inf
    i = int(up[0])
    if i == 0:
        return 0.0
    fun = lambda h: float(_binomial_change(x, np.array([h]), m, n, f0)[0])  # noqa: E731
    return float(optimize.brentq(fun, hs[i - 1], hs[i], xtol=1e-300, rtol=1e-13))
