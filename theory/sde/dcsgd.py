r"""Compressed distributed SGD (DCSGD) on the quadratic: exact mean-square factors and thresholds,
the normalization prescription, the Lyapunov exponent, the per-model mean-square thresholds of the SDEs
and the one-step generator quotients.
"""
from __future__ import annotations

import functools
import itertools
import math
import numpy as np
import sympy as sp
from scipy import integrate

from theory.validate import array, check_bytes, choice, integer, real
from theory.sde.modified import DRIFT_KINDS, ETA, X, _pos, drift, toy_function

__all__ = [
    "dcsgd_ms_factor_symbolic", "dcsgd_ms_factor", "dcsgd_threshold", "normalization_factor", "normalized_step",
    "dcsgd_lyapunov", "MS_MODELS", "ms_growth_symbolic", "ms_threshold_symbolic", "ms_excess", "ms_threshold",
    "ms_rate", "dcsgd_noise_variance", "dcsgd_direction_moments", "ONE_STEP_FUNCTIONS", "dcsgd_one_step_quotient",
    "one_step_generator"
]


# ----------------------------------------------------------------------------- DCSGD

def _expect(expr: sp.Expr, moments: dict) -> sp.Expr:
    """E[expr] for a polynomial in independent random symbols with given raw moments E[Z^k]."""
    poly = sp.Poly(sp.expand(expr), *moments)
    total = 0
    for powers, coeff in poly.terms():
        term = coeff
        for (sym, m), p in zip(moments.items(), powers):
            term *= m(p)
        total += term
    return sp.simplify(total)


def dcsgd_ms_factor_symbolic() -> tuple[sp.Expr, sp.Expr, tuple[sp.Symbol, ...]]:
    r"""Exact one-step mean-square factor and threshold of DCSGD on :math:`f = a x^2/2`.

    Agent :math:`i` sends :math:`C_i(g_i)`, :math:`g_i = a x(1+\sigma_1\xi_i)`, :math:`\xi_i` standard,
    :math:`C(v) = vB/q`, :math:`B\sim\mathrm{Bernoulli}(q)`, :math:`\omega = 1/q-1`; the step averages N
    i.i.d. messages. Expanding with :math:`E\xi=0, E\xi^2=1, E B^k = q`:

    .. math:: \rho = \frac{E x_{k+1}^2}{x_k^2} = (1-\eta a)^2 + \frac{\eta^2 a^2\,[\omega + \sigma_1^2(1+\omega)]}{N},
       \qquad \eta^\ast = \frac{2}{a\,[1 + (\omega + \sigma_1^2(1+\omega))/N]} .

    Returns ``(factor, threshold, (eta, a, N, omega, sigma1))``.
    """
    return _dcsgd_ms_factor_symbolic()


@functools.lru_cache(maxsize=1)
def _dcsgd_ms_factor_symbolic():
    eta, a, n, omega, s1, x = sp.symbols("eta a N omega sigma1 x", positive=True)
    xi, b = sp.symbols("xi B", real=True)
    q = 1 / (1 + omega)
    message = a * x * (1 + s1 * xi) * b / q
    moments = {xi: lambda p: [1, 0, 1][p] if p < 3 else None, b: lambda p: 1 if p == 0 else q}
    mean = _expect(message, moments)
    var = sp.simplify(_expect(message**2, moments) - mean**2)
    factor = sp.simplify(sp.expand(((x - eta * mean) ** 2 + eta**2 * var / n) / x**2))
    roots = [r for r in sp.solve(sp.Eq(factor, 1), eta) if r != 0]
    return factor, sp.simplify(roots[0]), (eta, a, n, omega, s1)


def _omegas(omega, n_agents: int) -> np.ndarray:
    # one value per agent (a scalar is broadcast to all of them), then a few same-sized temporaries in the formulas;
    # the limit is the process's (STEPLAB_MAX_BYTES): these closed forms take no max_bytes of their own
    check_bytes({"n_agents": n_agents}, 4 * 8 * n_agents, what="one compression variance per agent and temporaries",
                per_call=False)
    arr = array("omega", omega, ndim=(0, 1), low=0.0)
    if arr.ndim == 0:
        arr = np.full(n_agents, float(arr))
    if arr.shape[0] != n_agents:
        raise ValueError(f"omega: expected a scalar or {n_agents} per-agent values, got shape {arr.shape}")
    return arr


def _excess(n_agents, omega, sigma1) -> float:
    r""":math:`\overline V/N`, :math:`\overline V = \frac1N\sum_i[\omega_i + \sigma_1^2(1+\omega_i)]`."""
    n = integer("n_agents", n_agents, low=1)
    om = _omegas(omega, n)
    s1 = _pos("sigma1", sigma1, zero=True)
    return float(np.mean(om + s1**2 * (1 + om))) / n


def dcsgd_ms_factor(eta, a, n_agents, omega, sigma1) -> float:
    r"""Numeric one-step factor :math:`\rho = (1-\eta a)^2 + \eta^2a^2\,\overline{V}/N`,
    :math:`\overline V = \frac1N\sum_i[\omega_i + \sigma_1^2(1+\omega_i)]` (agent-specific :math:`\omega_i` allowed)."""
    eta, a = _pos("eta", eta), _pos("a", a)
    return (1 - eta * a) ** 2 + (eta * a) ** 2 * _excess(n_agents, omega, sigma1)


def dcsgd_threshold(a, n_agents, omega, sigma1) -> float:
    r"""Exact mean-square threshold :math:`\eta^\ast = 2/(a[1 + \overline V/N])` of DCSGD on :math:`a x^2/2`
    (see :func:`dcsgd_ms_factor_symbolic`); ``omega`` is a scalar or one value per agent."""
    a = _pos("a", a)
    return 2.0 / (a * (1.0 + _excess(n_agents, omega, sigma1)))


def normalization_factor(n_agents, omega, sigma1, d: int = 1) -> float:
    r"""The compression/noise factor of the normalization prescription,
    :math:`1 + (\bar\omega + d(\sigma_1^2\bar\omega + \sigma_1^2))/N` (:math:`\bar\omega` the agents' mean)."""
    n = integer("n_agents", n_agents, low=1)
    om = float(np.mean(_omegas(omega, n)))
    s1 = _pos("sigma1", sigma1, zero=True)
    d = integer("d", d, low=1)
    return 1.0 + (om + d * (s1**2 * om + s1**2)) / n


def normalized_step(c, L0, L1, grad_norm, n_agents, omega, sigma1, d: int = 1) -> float:
    r"""Normalization prescription (derived):
    :math:`\eta_t = c\,/\,\bigl[(L_0 + L_1\|\nabla f(x_t)\|)(1 + (\bar\omega + d(\sigma_1^2\bar\omega + \sigma_1^2))/N)\bigr]`,
    :math:`0 < c < 2`; guarantees decrease of the corrected SDE's drift term when :math:`\sigma_0 = 0`."""
    c = real("c", c, low=0.0, high=2.0, low_open=True, high_open=True)
    L0, L1 = _pos("L0", L0, zero=True), _pos("L1", L1, zero=True)
    grad_norm = _pos("grad_norm", grad_norm, zero=True)
    lip = L0 + L1 * grad_norm
    if not lip > 0:
        raise ValueError(f"L0, L1: L0 + L1*grad_norm must be > 0, got L0={L0}, L1={L1}, grad_norm={grad_norm}")
    return c / (lip * normalization_factor(n_agents, omega, sigma1, d))


def _expected_log_abs(u: float, v: float) -> float:
    r""":math:`E\log|u + vZ|`, :math:`Z` standard normal (:math:`v \ge 0`); quadrature around the singularity."""
    if v == 0.0:
        return math.log(abs(u)) if u != 0 else -math.inf
    dens = lambda z: math.exp(-0.5 * z * z) / math.sqrt(2 * math.pi)  # noqa: E731
    root = -u / v  # log|u + v z| is -inf there (integrable)
    lo, hi = min(root, 0.0) - 12.0, max(root, 0.0) + 12.0
    val, _ = integrate.quad(lambda z: math.log(abs(u + v * z)) * dens(z), lo, hi, points=[root], limit=400,
                            epsabs=1e-13, epsrel=1e-12)
    return val


def dcsgd_lyapunov(eta, a, n_agents, omega, sigma1) -> float:
    r"""Per-step Lyapunov exponent :math:`\gamma = E\log|x_{k+1}/x_k|` of DCSGD on :math:`f = a x^2/2`.

    With Bernoulli compressors (keep probability :math:`q_i = 1/(1+\omega_i)`) and multiplicative noise,
    :math:`x_{k+1} = x_k(1 - \eta a S)`, :math:`S = \frac1N\sum_i B_i(1+\sigma_1\xi_i)/q_i`. Given the kept
    set :math:`K`, :math:`S \sim \mathcal N(\mu_K, s_K^2)` with :math:`\mu_K = \sum_{i\in K} 1/(Nq_i)`,
    :math:`s_K^2 = \sigma_1^2\sum_{i\in K} 1/(Nq_i)^2`; the exponent sums :math:`P(K)\,E\log|1-\eta a S|`
    over the :math:`2^N` kept sets (one-dimensional quadrature each). Paths converge almost surely iff
    :math:`\gamma < 0`; by Jensen :math:`\gamma \le \tfrac12\log\rho` (:func:`dcsgd_ms_factor`), so mean-square
    stability implies almost-sure stability, not the converse.
    """
    eta, a = _pos("eta", eta), _pos("a", a)
    n = integer("n_agents", n_agents, low=1, high=12)  # 2^N kept sets are enumerated
    om = _omegas(omega, n)
    s1 = _pos("sigma1", sigma1, zero=True)
    q = 1.0 / (1.0 + om)
    total = 0.0
    for kept in itertools.product((False, True), repeat=n):
        k = np.asarray(kept)
        prob = float(np.prod(np.where(k, q, 1 - q)))
        if prob == 0.0:
            continue
        w = 1.0 / (n * q[k])
        mu, sd = float(w.sum()), s1 * float(np.sqrt(np.sum(w**2)))
        total += prob * _expected_log_abs(1.0 - eta * a * mu, eta * a * sd)
    return total



# ----------------------------------------------------------------------------- mean-square thresholds per model

MS_MODELS = ("discrete",) + DRIFT_KINDS


@functools.lru_cache(maxsize=8)
def _ms_growth(model: str):
    eta, a, e, x = sp.symbols("eta a E x", positive=True)
    if model == "discrete":
        # One DCSGD step x -> x - eta*D with E D = a x and Var D = a^2 x^2 E: E x+^2 / x^2 - 1.
        mean, var = a * x, a**2 * x**2 * e
        growth = sp.expand(((x - eta * mean) ** 2 + eta**2 * var) / x**2 - 1)
    else:
        # Ito generator of phi = x^2 for dX = b(X)dt + sigma(X)dW: L phi = b phi' + sigma^2 phi''/2, with the
        # modified drift of GD on a x^2/2 and the diffusion sqrt(eta Sigma), Sigma = a^2 x^2 E (the variance of D).
        b = drift(a * x**2 / 2, [x], model, eta)[0]
        sigma2 = eta * a**2 * x**2 * e
        phi = x**2
        growth = sp.expand((b * sp.diff(phi, x) + sigma2 / 2 * sp.diff(phi, x, 2)) / phi)
    return growth, (eta, a, e)


def ms_growth_symbolic(model: str) -> tuple[sp.Expr, tuple[sp.Symbol, ...]]:
    r"""Sign-defining growth of the second moment on :math:`f = a x^2/2`, symbolic in :math:`(\eta, a, E)`.

    :math:`E = \overline V/N` is the relative variance of the agent-averaged compressed gradient
    (:math:`\mathrm{Var}\,D = a^2x^2E`, see :func:`ms_excess`). ``discrete``: the one-step factor minus one,
    :math:`(1-\eta a)^2 + \eta^2a^2E - 1`. An SDE :math:`dX = b\,dt + \sqrt{\eta a^2 E}\,|X|\,dW` (Itô) has
    :math:`\tfrac{d}{dt}E X^2 = r\,E X^2` with :math:`r = 2b/x + \eta a^2E` (generator on :math:`x^2`):
    first order :math:`-2a + \eta a^2E`, second order :math:`-2a - \eta a^2 + \eta a^2E`, corrected
    :math:`-2a + \eta a^2 + \eta a^2E`. Mean-square stable iff the growth is negative.
    Returns ``(growth, (eta, a, E))``.
    """
    choice("model", model, MS_MODELS)
    return _ms_growth(model)


@functools.lru_cache(maxsize=8)
def _ms_threshold_sym(model: str):
    growth, (eta, a, e) = _ms_growth(model)
    roots = [r for r in sp.solve(sp.Eq(growth, 0), eta) if r != 0]
    return (sp.simplify(roots[0]) if roots else None), (a, e)


def ms_threshold_symbolic(model: str):
    r"""Positive root in :math:`\eta` of :func:`ms_growth_symbolic` (sympy ``solve``), symbolic in :math:`(a, E)`:
    discrete and corrected :math:`2/(a(1+E))`, first order :math:`2/(aE)`, second order :math:`2/(a(E-1))`
    (a threshold only where it is positive, i.e. :math:`E > 1`). Returns ``(root, (a, E))``."""
    choice("model", model, MS_MODELS)
    return _ms_threshold_sym(model)


def ms_excess(n_agents, omega, sigma1) -> float:
    r""":math:`E = \overline V/N`, :math:`\overline V = \frac1N\sum_i[\omega_i + \sigma_1^2(1+\omega_i)]`: the
    variance of the agent-averaged compressed gradient relative to :math:`\|\nabla f\|^2` under multiplicative
    noise :math:`g_i = \nabla f(1 + \sigma_1\xi_i)` (``omega`` a scalar or one value per agent)."""
    return _excess(n_agents, omega, sigma1)


def ms_threshold(model: str, a, n_agents, omega, sigma1) -> float:
    r"""Mean-square stability threshold of the step size for DCSGD on :math:`f = a x^2/2` (``model="discrete"``)
    or for its modified equation ``model`` (``first_order``, ``second_order``, ``corrected``; Itô SDEs with
    the diffusion :math:`\sqrt{\eta\Sigma}` of the compressed multiplicative noise).

    Multiplicative noise :math:`g_i = a x(1+\sigma_1\xi_i)`, unbiased compressors of variances ``omega``
    (a scalar or one per agent), N agents; with :math:`E` = :func:`ms_excess`:

    .. math:: \eta^\ast_{\rm discrete} = \eta^\ast_{\rm corrected} = \frac{2}{a(1+E)},\quad
       \eta^\ast_{\rm first} = \frac{2}{aE},\quad \eta^\ast_{\rm second} = \frac{2}{a(E-1)}\ (E>1).

    ``math.inf`` where the model is mean-square stable at every step size (first order with :math:`E = 0`,
    second order with :math:`E \le 1`). Evaluated from :func:`ms_threshold_symbolic`.
    """
    choice("model", model, MS_MODELS)
    a = real("a", a, low=0.0, low_open=True)
    e = _excess(n_agents, omega, sigma1)
    root, (sa, se) = _ms_threshold_sym(model)
    growth, (seta, sa2, se2) = _ms_growth(model)
    if root is None:
        return math.inf
    value = float(root.subs({sa: a, se: e})) if e > 0 or model != "first_order" else math.inf
    if not value > 0 or not math.isfinite(value):
        return math.inf
    # The root is a threshold only if the growth is negative below it (small steps are stable for every model).
    slope = float(sp.diff(growth, seta).subs({seta: value, sa2: a, se2: e}))
    return value if slope > 0 else math.inf


def ms_rate(model: str, eta, a, n_agents, omega, sigma1) -> float:
    r"""Second-moment growth of ``model`` at step ``eta``: for an SDE the per-time rate :math:`r` with
    :math:`E X_t^2 = X_0^2 e^{rt}`; for ``discrete`` the per-time log-factor :math:`\log\rho/\eta`
    (:math:`\rho = E x_{k+1}^2/x_k^2`, time :math:`k\eta`). From :func:`ms_growth_symbolic`."""
    choice("model", model, MS_MODELS)
    eta, a = real("eta", eta, low=0.0, low_open=True), real("a", a, low=0.0, low_open=True)
    e = _excess(n_agents, omega, sigma1)
    growth, (se_, sa, sx) = _ms_growth(model)
    g = float(growth.subs({se_: eta, sa: a, sx: e}))
    return math.log1p(g) / eta if model == "discrete" else g


def dcsgd_noise_variance(grad, n_agents, omega, sigma0, sigma1):
    r"""Per-coordinate variance of DCSGD's agent-averaged direction at true gradient ``grad`` (Bernoulli
    compressors of variances :math:`\omega_i`, noise of per-coordinate scale
    :math:`s^2 = \sigma_0^2 + \sigma_1^2\|\nabla f\|^2`, independent across coordinates and agents):

    .. math:: \Sigma_{jj} = \frac1N\Bigl[\bar\omega\,g_j^2 + (1+\bar\omega)\,s^2\Bigr]

    (agent i's message has variance :math:`\omega_i E(g_j+Z_{ij})^2 + s^2 = \omega_i g_j^2 + (1+\omega_i)s^2`;
    the mean of N independent messages divides their average variance by N). Off-diagonal entries are 0.
    """
    g = array("grad", grad, ndim=(0, 1))
    n = integer("n_agents", n_agents, low=1)
    om = float(np.mean(_omegas(omega, n)))
    s0, s1 = _pos("sigma0", sigma0, zero=True), _pos("sigma1", sigma1, zero=True)
    s2 = s0**2 + s1**2 * float(np.sum(g**2))
    return (om * g**2 + (1 + om) * s2) / n


def dcsgd_direction_moments(a_grad, n_agents, omega, sigma1, order: int = 4) -> np.ndarray:
    r"""Raw moments :math:`E D^k`, :math:`k = 0..\mathrm{order}`, of DCSGD's 1-D agent-averaged direction
    :math:`D = \frac{g}{N}\sum_i B_i(1+\sigma_1\xi_i)/q_i` (Bernoulli keep probability :math:`q_i = 1/(1+\omega_i)`,
    Gaussian :math:`\xi_i`, multiplicative noise, true gradient ``a_grad`` = g).

    Per agent :math:`E Y_i^k = E(1+\sigma_1\xi)^k / q_i^{k-1}` (:math:`k \ge 1`); the moments of the sum follow
    from the agents' cumulants, which add (moment/cumulant recursions, exact in rational arithmetic)."""
    g = real("a_grad", a_grad)
    n = integer("n_agents", n_agents, low=1)
    om = _omegas(omega, n)
    s1 = _pos("sigma1", sigma1, zero=True)
    order = integer("order", order, low=1, high=8)
    # E(1 + s xi)^k for standard Gaussian xi: sum_j C(k, j) s^j E xi^j, E xi^j = (j-1)!! for even j.
    gauss = [1.0 if j % 2 == 0 and j == 0 else (0.0 if j % 2 else float(np.prod(np.arange(j - 1, 0, -2))))
             for j in range(order + 1)]
    base = [sum(math.comb(k, j) * s1**j * gauss[j] for j in range(k + 1)) for k in range(order + 1)]
    total_cum = np.zeros(order + 1)
    for w in om:
        q = 1.0 / (1.0 + w)
        mom = [1.0] + [base[k] / q ** (k - 1) for k in range(1, order + 1)]
        total_cum += _cumulants(mom)
    moms = _moments(total_cum)
    return np.array([moms[k] * (g / n) ** k for k in range(order + 1)])


def _cumulants(m: list[float]) -> np.ndarray:
    r"""Cumulants :math:`\kappa_1..\kappa_K` from raw moments :math:`m_0 = 1, m_1..m_K` (index 0 unused)."""
    K = len(m) - 1
    k = np.zeros(K + 1)
    for n in range(1, K + 1):
        k[n] = m[n] - sum(math.comb(n - 1, j - 1) * k[j] * m[n - j] for j in range(1, n))
    return k


def _moments(k: np.ndarray) -> list[float]:
    """Raw moments from cumulants (inverse of :func:`_cumulants`)."""
    K = len(k) - 1
    m = [1.0] + [0.0] * K
    for n in range(1, K + 1):
        m[n] = k[n] + sum(math.comb(n - 1, j - 1) * k[j] * m[n - j] for j in range(1, n))
    return m


def _kept_sets(n_agents, omega, sigma1):
    r"""Kept-agent patterns K of Bernoulli compressors with :math:`P(K)`, :math:`\mu_K = \sum_{i\in K}1/(Nq_i)` and
    :math:`s_K^2 = \sigma_1^2\sum_{i\in K}1/(Nq_i)^2`: given K, :math:`S = \frac1N\sum_i B_i(1+\sigma_1\xi_i)/q_i
    \sim\mathcal N(\mu_K, s_K^2)`."""
    q = 1.0 / (1.0 + omega)
    for kept in itertools.product((False, True), repeat=n_agents):
        k = np.asarray(kept)
        prob = float(np.prod(np.where(k, q, 1 - q)))
        if prob > 0.0:
            w = 1.0 / (n_agents * q[k])
            yield prob, float(w.sum()), sigma1**2 * float(np.sum(w**2))


ONE_STEP_FUNCTIONS = ("quartic", "cosh2")



def _normal_nodes(n_nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """Equally spaced nodes on [-8, 8] with normalized standard-normal weights (a quadrature of E h(Z))."""
    z = np.linspace(-8.0, 8.0, n_nodes)
    wz = np.exp(-0.5 * z**2)
    return z, wz / wz.sum()


def _merged_kept_laws(n: int, om, s1: float) -> dict[tuple[float, float], float]:
    """(mean, variance) of the averaged multiplier -> its probability, summed over kept sets with equal laws.

    Equal compressors give the same law for every kept set of one size, so each law is integrated once.
    """
    merged: dict[tuple[float, float], float] = {}
    for prob, mu, var in _kept_sets(n, om, s1):
        k = (round(mu, 12), round(var, 12))
        merged[k] = merged.get(k, 0.0) + prob
    return merged

def dcsgd_one_step_quotient(x, eta, n_agents, omega, sigma1, name: str = "quartic") -> float:
    r"""Exact :math:`E[f(x^+) - f(x)]/\eta` of one DCSGD step :math:`x^+ = x - \eta D` in 1-D (multiplicative noise,
    Bernoulli compressors, N agents), :math:`D = f'(x)\,S`.

    ``quartic`` (:math:`x^4/4`, a polynomial): with the moments :math:`m_k` of :func:`dcsgd_direction_moments`,
    :math:`-x^3 m_1 + \tfrac32\eta x^2 m_2 - \eta^2 x m_3 + \tfrac{\eta^3}{4}m_4`. ``cosh2``
    (:math:`2\cosh x`): given the kept set K, S is Gaussian and
    :math:`E\,2\cosh(x - \eta f' S) = 2\cosh(x - \eta f'\mu_K)\,e^{\eta^2 f'^2 s_K^2/2}`, summed over
    the :math:`2^N` kept sets (see :func:`_kept_sets`).
    """
    choice("name", name, ONE_STEP_FUNCTIONS)
    x, eta = real("x", x), real("eta", eta, low=0.0, low_open=True)
    n = integer("n_agents", n_agents, low=1, high=12)
    om = _omegas(omega, n)
    s1 = _pos("sigma1", sigma1, zero=True)
    if name == "quartic":
        m = dcsgd_direction_moments(x**3, n, om, s1, 4)
        return -x**3 * m[1] + 1.5 * eta * x**2 * m[2] - eta**2 * x * m[3] + eta**3 / 4 * m[4]
    g = 2 * math.sinh(x)
    total = 0.0
    for prob, mu, s2 in _kept_sets(n, om, s1):
        total += prob * (2 * math.cosh(x - eta * g * mu) * math.exp(eta**2 * g**2 * s2 / 2) - 2 * math.cosh(x))
    return total / eta


def one_step_generator(model: str, x, eta, n_agents, omega, sigma1, name: str = "quartic") -> float:
    r"""What the SDE ``model`` predicts for the one-step decrease: its generator on f at x,
    :math:`\mathcal L f = f' b + \tfrac\eta2\Sigma f''` with :math:`\Sigma = f'^2 E` (the variance of D,
    :math:`E` = :func:`ms_excess`) and the drift of ``model`` (sympy, :func:`drift`):
    corrected :math:`-f'^2 + \tfrac\eta2(f'^2f'' + \Sigma f'')`, first order :math:`-f'^2 + \tfrac\eta2\Sigma f''`,
    second order :math:`-f'^2 - \tfrac\eta2 f'^2f'' + \tfrac\eta2\Sigma f''`. It matches
    :func:`dcsgd_one_step_quotient` up to :math:`O(\eta^2)` only for the corrected drift."""
    choice("model", model, DRIFT_KINDS)
    choice("name", name, ONE_STEP_FUNCTIONS)
    x, eta = real("x", x), real("eta", eta, low=0.0, low_open=True)
    e = _excess(n_agents, omega, sigma1)
    f = toy_function(name)
    fp, fpp = sp.diff(f, X), sp.diff(f, X, 2)
    b = drift(f, [X], model, ETA)[0]
    value = fp * b + ETA / 2 * fp**2 * e * fpp
    return float(value.subs({X: x, ETA: eta}))
