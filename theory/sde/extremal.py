r"""DSignSGD on the extremal (L0, L1)-smooth functions: the ridge (one coordinate) and the radial
function (all coordinates), their exact one-step change and critical step, and the steps at which the
sufficient-decrease condition holds.
"""
from __future__ import annotations

import functools
import itertools
import math
import numpy as np
import sympy as sp
from scipy import optimize, special, stats

from theory.validate import array, integer, real, renamed_keyword
from theory.sde.sign_laws import _noise_args, mean_sign
from theory.sde.modified import _pos
from theory.sde.sign_descent import sign_remainder_factor, sign_sufficient_step

__all__ = [
    "RIDGE_MAX_TRIALS", "l0l1_extremal_symbolic", "l0l1_extremal", "ridge_law", "ridge_one_step_change",
    "ridge_critical_step", "ridge_condition_steps", "RADIAL_MAX_STATES", "radial_law", "radial_one_step_change",
    "radial_critical_step"
]


# ----------------------------------------------------------------------------- DSignSGD on the extremal (L0, L1) ridge

RIDGE_MAX_TRIALS = 20_000   # d * N signs per step enter one binomial law; beyond this the sum is left to Monte Carlo


@functools.lru_cache(maxsize=1)
def _extremal_symbolic():
    y, L0, L1 = sp.symbols("y L0 L1", positive=True)
    return L0 / L1**2 * (sp.exp(L1 * y) - 1 - L1 * y), (y, L0, L1)


def l0l1_extremal_symbolic() -> tuple[sp.Expr, tuple[sp.Symbol, ...]]:
    r"""The extremal :math:`(L_0, L_1)`-smooth function of one variable on :math:`y \ge 0` (sympy):

    .. math:: F(y) = \frac{L_0}{L_1^2}\bigl(e^{L_1|y|} - 1 - L_1|y|\bigr),\qquad
       F'(y) = \mathrm{sign}(y)\frac{L_0}{L_1}\bigl(e^{L_1|y|} - 1\bigr),\qquad F''(y) = L_0e^{L_1|y|} = L_0 + L_1|F'(y)| .

    The curvature bound :math:`F'' \le L_0 + L_1|F'|` holds with equality everywhere (F is even, :math:`C^2` at 0:
    :math:`F'(0) = 0`, :math:`F''(0^\pm) = L_0`): among functions with :math:`F(0) = F'(0) = 0` and that bound, F is the
    largest at every y (Grönwall on :math:`|F'| + L_0/L_1`). Returns ``(F on y >= 0, (y, L0, L1))``."""
    return _extremal_symbolic()


def _e2(t: np.ndarray) -> np.ndarray:
    r""":math:`e^t - 1 - t` without cancellation (Taylor series for :math:`|t| < 10^{-2}`, relative error < 1e-15)."""
    t = np.asarray(t, float)
    small = np.abs(t) < 1e-2
    ts = np.where(small, t, 0.0)
    series = ts**2 * (0.5 + ts * (1 / 6 + ts * (1 / 24 + ts * (1 / 120 + ts * (1 / 720 + ts / 5040)))))
    with np.errstate(over="ignore", invalid="ignore"):
        direct = np.expm1(np.where(small, 1.0, t)) - np.where(small, 1.0, t)
    return np.where(small, series, direct)


def _l0l1_pair(L0, L1) -> tuple[float, float]:
    return _pos("L0", L0), _pos("L1", L1)


def l0l1_extremal(y, L0=1.0, L1=1.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Values of :math:`F, F', F''` of :func:`l0l1_extremal_symbolic` at ``y`` (a number or an array; any sign),
    without cancellation near 0. The d-dimensional ridge :math:`f(x) = F(\langle u, x\rangle)`, :math:`u = \mathbf 1/\sqrt d`,
    has :math:`\nabla f = F'u`, :math:`\nabla^2 f = F''\,uu^\top`, hence :math:`\|\nabla^2 f\| = F'' = L_0 + L_1\|\nabla f\|`:
    it is :math:`(L_0, L_1)`-smooth with the same constants, with equality."""
    L0, L1 = _l0l1_pair(L0, L1)
    y = array("y", y, ndim=(0, 1))
    a = L1 * np.abs(y)
    with np.errstate(over="ignore"):
        out = (L0 / L1**2 * _e2(a), np.sign(y) * L0 / L1 * np.expm1(a), L0 * np.exp(a))
    return out if y.ndim else tuple(float(v) for v in out)


def _ridge_inputs(y, d, scale, n_agents, noise, nu, L0, L1):
    y = real("y", y)
    d = integer("d", d, low=1, high=RIDGE_MAX_TRIALS)
    scale = _pos("scale", scale)
    n = integer("n_agents", n_agents, low=1, high=RIDGE_MAX_TRIALS)
    if d * n > RIDGE_MAX_TRIALS:
        raise ValueError(f"d, n_agents: d*n_agents must be <= {RIDGE_MAX_TRIALS} (one binomial law of d*N signs), "
                         f"got d={d}, n_agents={n}")
    nu = _noise_args(noise, nu)
    L0, L1 = _l0l1_pair(L0, L1)
    a = L1 * abs(y)
    if not a < 700.0:
        raise ValueError(f"y, L1: L1*|y| must be < 700 (e^(L1|y|) finite), got y={y}, L1={L1}")
    grad_coord = L0 / L1 * math.expm1(a) / math.sqrt(d)   # every coordinate of grad f at x = y u (taken y >= 0)
    m = float(mean_sign(grad_coord, scale, noise, nu))
    return a, d, n, m, grad_coord, L0, L1


def ridge_law(d: int, n: int, m: float) -> tuple[np.ndarray, np.ndarray]:
    r"""Law of :math:`\langle u, D\rangle = (2B - dN)/(N\sqrt d)`, :math:`B \sim` Binomial(dN, (1 + m)/2): weights, values."""
    d, n, m = integer("d", d, low=1), integer("n", n, low=1), real("m", m, low=-1.0, high=1.0)
    trials = d * n
    b = np.arange(trials + 1)
    return stats.binom.pmf(b, trials, (1.0 + m) / 2.0), (2 * b - trials) / (n * math.sqrt(d))


def _ridge_change(a, hs, d, n, m, L0, L1, law=None):
    r"""Exact :math:`E F(y - hZ) - F(y)` for :math:`L_1y = a \ge 0` and every h in ``hs`` (see
    :func:`ridge_one_step_change`); the linear part :math:`-h\sqrt d\,mF'(y)` is taken out exactly, the rest summed as
    Taylor remainders :math:`F(y + s) - F(y) - F'(y)s \ge 0` (no cancellation)."""
    w, z = ridge_law(d, n, m) if law is None else law       # z: the values of <u, D>
    t = -L1 * np.asarray(hs, float)[:, None] * z[None, :]     # L1 times the move of <u, x>
    ga = math.expm1(a)
    with np.errstate(over="ignore", invalid="ignore"):
        same = math.exp(a) * _e2(t)                           # a + t >= 0: e^a E2(t)
        cross = _e2(-a - t) - _e2(np.array(a)) - ga * t       # a + t < 0: the step passes the minimizer
        rem = np.where(a + t >= 0, same, cross)
        lin = -L1 * np.asarray(hs, float) * math.sqrt(d) * m * ga
        return L0 / L1**2 * (lin + np.sum(w[None, :] * rem, axis=1))


@renamed_keyword("h", "eta")
def ridge_one_step_change(y, eta, d, scale, n_agents, noise: str = "student_t", nu=None, L0=1.0, L1=1.0):
    r"""Exact expected change :math:`E f(x - hD) - f(x)` of one DSignSGD step on the ridge
    :math:`f(x) = F(\langle u, x\rangle)` (:func:`l0l1_extremal`, :math:`u = \mathbf 1/\sqrt d`) at :math:`x = yu`.

    Every coordinate of :math:`\nabla f(x)` equals :math:`F'(y)/\sqrt d`, so each of the dN signs
    :math:`\mathrm{sign}(\partial_jf + \sigma Z_{ij})` (noise law ``noise``/``nu``, scale :math:`\sigma` = ``scale``) is
    +1 with the same probability :math:`p = (1 + m)/2`, :math:`m = 2F_\nu(F'(y)/(\sqrt d\sigma)) - 1`, independently. The
    step moves only :math:`\langle u, x\rangle`, by

    .. math:: -h\langle u, D\rangle = -h\,\frac{2B - dN}{N\sqrt d},\qquad B \sim \mathrm{Binomial}(dN, p),

    so :math:`E f(x^+) - f(x) = \sum_b P(B = b)\,[F(y - hz_b) - F(y)]`: a finite sum, no expansion in h. All signs
    agreeing moves :math:`\langle u, x\rangle` by :math:`h\sqrt d`: the step length :math:`\|hD\| \le h\sqrt d` used inside
    the Grönwall factor is attained. ``eta`` (the step :math:`h`) a number or a 1-D array (>= 0); ``h=`` is its
    deprecated name."""
    a, d, n, m, _, L0, L1 = _ridge_inputs(y, d, scale, n_agents, noise, nu, L0, L1)
    hs = array("eta", eta, ndim=(0, 1), low=0.0)
    out = _ridge_change(a, np.atleast_1d(hs), d, n, m, L0, L1)
    return float(out[0]) if hs.ndim == 0 else out


def ridge_critical_step(y, d, scale, n_agents, noise: str = "student_t", nu=None, L0=1.0, L1=1.0) -> float:
    r"""The exact critical step :math:`h^\ast`: the root of :func:`ridge_one_step_change` in h > 0.

    :math:`h \mapsto E F(y - hZ)` is convex (F is), so the change divided by h increases from
    :math:`-\langle\nabla f, m\rangle < 0` at :math:`h = 0^+`: one root, every :math:`h < h^\ast` descends in expectation and
    every larger one ascends (bracketed by doubling, then ``brentq``). 0 where :math:`\nabla f = 0` (y = 0)."""
    a, d, n, m, gc, L0, L1 = _ridge_inputs(y, d, scale, n_agents, noise, nu, L0, L1)
    return _convex_root(_ridge_change, ridge_law, a, d, n, m, gc, L0, L1)


def _convex_root(change, law_of, a, d, n, m, gc, L0, L1) -> float:
    r"""The positive root of a one-step change that is convex in h with slope :math:`-\langle\nabla f, m\rangle` at 0
    (``change(a, hs, d, n, m, L0, L1, law)``, ``law = law_of(d, n, m)``): the change over h increases, so the root is
    bracketed by doubling from :math:`1/(L_1\sqrt d)` and found by ``brentq``; 0 where
    :math:`\langle\nabla f, m\rangle \le 0`."""
    slope0 = math.sqrt(d) * gc * m                                # <grad f, m>
    if not slope0 > 0:
        return 0.0
    law = law_of(d, n, m)

    def quotient(h: float) -> float:
        return -slope0 if h == 0 else float(change(a, np.array([h]), d, n, m, L0, L1, law)[0]) / h

    hi = 1.0 / (L1 * math.sqrt(d))
    while quotient(hi) < 0:
        hi *= 2.0
        if hi > 1e6:   # cannot happen for p < 1 or a > 0 (F grows); a guard against an endless loop
            return math.inf
    return float(optimize.brentq(quotient, 0.0, hi, xtol=1e-300, rtol=1e-14, maxiter=500))


def ridge_condition_steps(y, d, scale, n_agents, noise: str = "student_t", nu=None, L0=1.0, L1=1.0) -> dict:
    r"""The steps that steplab's descent condition allows on the ridge at :math:`x = yu` (gradient
    :math:`F'(y)u`): ``steplab`` with the Grönwall factor :math:`\varphi(L_1h\sqrt d)`, ``half_phi`` with
    :math:`\varphi` replaced by 1/2 (:func:`sign_sufficient_step`), and ``phi_at_half``
    :math:`= \varphi(L_1h_{1/2}\sqrt d)`, what the factor would be at the :math:`\varphi = 1/2` step."""
    a, d, n, m, gc, L0, L1 = _ridge_inputs(y, d, scale, n_agents, noise, nu, L0, L1)
    g = np.full(d, gc)
    args = (scale, L0, L1, n, noise, nu)
    out = {rule: sign_sufficient_step(g, *args, rule=rule) for rule in ("steplab", "half_phi")}
    out["phi_at_half"] = sign_remainder_factor(L1 * out["half_phi"] * math.sqrt(d))
    return out


RADIAL_MAX_STATES = 200_000   # compositions of d coordinates over the N + 1 values of one coordinate's sign sum


@functools.lru_cache(maxsize=32)
def _compositions(d: int, k: int) -> np.ndarray:
    """Every vector of k non-negative counts summing to d (stars and bars), one per row."""
    rows = []
    for bars in itertools.combinations(range(d + k - 1), k - 1):
        edges = (-1,) + bars + (d + k - 1,)
        rows.append([edges[i + 1] - edges[i] - 1 for i in range(k)])
    return np.array(rows, dtype=np.int64)


def radial_law(d: int, n: int, m: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Joint law of :math:`(S_1, S_2) = (\sum_jk_j, \sum_jk_j^2)`, :math:`k_j = 2B_j - N`, :math:`B_j` iid
    Binomial(N, (1 + m)/2): a multinomial over how many coordinates take each of the N + 1 values."""
    d, n, m = integer("d", d, low=1), integer("n", n, low=1), real("m", m, low=-1.0, high=1.0)
    k = 2 * np.arange(n + 1) - n
    q = stats.binom.pmf(np.arange(n + 1), n, (1.0 + m) / 2.0)
    C = _compositions(d, n + 1)
    logq = np.log(np.where(q > 0, q, 1.0)) - np.where(q > 0, 0.0, 1e300)   # a value of probability 0: weight 0
    logw = special.gammaln(d + 1) - np.sum(special.gammaln(C + 1), axis=1) + C @ logq
    return np.exp(logw), C @ k, C @ k**2


def _radial_inputs(y, d, scale, n_agents, noise, nu, L0, L1):
    out = _ridge_inputs(y, d, scale, n_agents, noise, nu, L0, L1)
    d, n = out[1], out[2]
    states = math.comb(d + n, n)
    if states > RADIAL_MAX_STATES:
        raise ValueError(f"d, n_agents: the exact radial sum runs over C(d + N, N) = {states} states, more than "
                         f"{RADIAL_MAX_STATES}; got d={d}, n_agents={n}")
    return out


def _radial_change(a, hs, d, n, m, L0, L1, law=None):
    r"""Exact :math:`E F(\|x - hD\|) - F(r)` at :math:`L_1r = a` for every h in ``hs`` (see
    :func:`radial_one_step_change`), the radius change computed as :math:`(\rho^2 - r^2)/(\rho + r)` and F's change as
    :math:`F'(r)\delta + e^{L_1r}\tfrac{L_0}{L_1^2}E_2(L_1\delta)` (both radii are >= 0: no cancellation)."""
    w, s1, s2 = radial_law(d, n, m) if law is None else law
    hs = np.asarray(hs, float)[:, None]
    r = a / L1
    num = -2 * hs * r * s1[None, :] / (n * math.sqrt(d)) + hs**2 * s2[None, :] / n**2    # rho^2 - r^2
    rho = np.sqrt(np.maximum(r * r + num, 0.0))
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        delta = np.where(rho + r > 0, num / np.where(rho + r > 0, rho + r, 1.0), 0.0)
        t = L1 * delta
        change = math.expm1(a) * t + math.exp(a) * _e2(t)
        return L0 / L1**2 * np.sum(w[None, :] * change, axis=1)


@renamed_keyword("h", "eta")
def radial_one_step_change(y, eta, d, scale, n_agents, noise: str = "student_t", nu=None, L0=1.0, L1=1.0):
    r"""Exact expected change :math:`E f(x - hD) - f(x)` of one DSignSGD step on the radial
    :math:`f(x) = F(\|x\|)` (:func:`l0l1_extremal`) at :math:`x = yu`, :math:`u = \mathbf 1/\sqrt d` (the same gradient as the
    ridge of :func:`ridge_one_step_change` there, hence the same condition steps, :func:`ridge_condition_steps`).

    :math:`\nabla^2 f` has the eigenvalue :math:`F''(\|x\|) = L_0 + L_1\|\nabla f\|` radially and
    :math:`F'(\|x\|)/\|x\| \le F''` across (F' is convex with F'(0) = 0), so f is :math:`(L_0, L_1)`-smooth with the same
    constants; unlike the ridge it curves in every direction, so the whole noise share :math:`d/N` of
    :math:`E\|D\|^2` costs (near the minimizer it is the isotropic quadratic, where the condition is exact). With
    :math:`k_j = ND_j` the new radius is :math:`\sqrt{r^2 - 2hrS_1/(N\sqrt d) + h^2S_2/N^2}`, :math:`S_1 = \sum_jk_j`,
    :math:`S_2 = \sum_jk_j^2`: a finite sum over the multinomial law of the coordinates' values
    (:math:`\binom{d+N}{N}` states, at most :data:`RADIAL_MAX_STATES`). ``eta`` is the step :math:`h` (a number or a
    1-D array, >= 0); ``h=`` is its deprecated name."""
    a, d, n, m, _, L0, L1 = _radial_inputs(y, d, scale, n_agents, noise, nu, L0, L1)
    hs = array("eta", eta, ndim=(0, 1), low=0.0)
    out = _radial_change(a, np.atleast_1d(hs), d, n, m, L0, L1)
    return float(out[0]) if hs.ndim == 0 else out


def radial_critical_step(y, d, scale, n_agents, noise: str = "student_t", nu=None, L0=1.0, L1=1.0) -> float:
    r"""The root :math:`h^\ast > 0` of :func:`radial_one_step_change`: :math:`h \mapsto \|x - hD\|` is convex and F is
    convex and increasing in the radius, so the expected change is convex in h and has one positive root, as on the
    ridge. 0 where :math:`\nabla f = 0`."""
    a, d, n, m, gc, L0, L1 = _radial_inputs(y, d, scale, n_agents, noise, nu, L0, L1)
    return _convex_root(_radial_change, radial_law, a, d, n, m, gc, L0, L1)
