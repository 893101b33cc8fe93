r"""Pre-scheduled steps :math:`\eta_t = \eta_0c_t` on the quartic :math:`x^4/4`.

The map of the scale-free variable :math:`s_t = \eta_tx_t^2`, the noise-free escape threshold :math:`s^\ast`,
and the probability that DCSGD diverges under multiplicative noise (a Markov chain in :math:`s_t`) or under
affine noise :math:`\sigma_0^2 + \sigma_1^2f'(x)^2` (a chain in :math:`|x|`).
"""
from __future__ import annotations

import functools
import math
import numpy as np
import sympy as sp

from theory.validate import array, check_bytes, choice, integer
from theory.sde.dcsgd import _merged_kept_laws, _normal_nodes, _omegas
from theory.sde.modified import _pos

__all__ = [
    "SCHEDULE_KINDS", "quartic_schedule_map", "quartic_schedule_threshold", "quartic_schedule_divergence",
    "quartic_schedule_divergence_affine"
]


# ----------------------------------------------------------------------------- pre-scheduled steps on x^4/4

SCHEDULE_KINDS = ("constant", "inv_sqrt")


def _schedule_ratio(schedule: str, t: np.ndarray | int):
    r""":math:`r_t = \eta_{t+1}/\eta_t`: 1 (constant) or :math:`\sqrt{(t+1)/(t+2)}` (:math:`\eta_t = \eta_0/\sqrt{t+1}`)."""
    return 1.0 if schedule == "constant" else math.sqrt((t + 1) / (t + 2))


@functools.lru_cache(maxsize=1)
def _quartic_schedule_map():
    x, eta0, eta1, S = sp.symbols("x eta_t eta_t1 S", positive=True)
    s = sp.Symbol("s", positive=True)
    x_next = x - eta0 * x**3 * S            # one step on x^4/4 with direction f'(x) S
    s_next = sp.simplify((eta1 * x_next**2).subs(x, sp.sqrt(s / eta0)))
    return sp.simplify(s_next.subs(eta1, sp.Symbol("r", positive=True) * eta0)), (s, sp.Symbol("r", positive=True), S)


def quartic_schedule_map() -> tuple[sp.Expr, tuple[sp.Symbol, ...]]:
    r"""The step of :math:`f = x^4/4` in the scale-free variable :math:`s_t = \eta_tx_t^2` (sympy).

    DCSGD's direction on :math:`x^4/4` with multiplicative noise and unbiased compression is :math:`f'(x)S`
    (:math:`S = \frac1N\sum_iB_i(1+\sigma_1\xi_i)/q_i`, :math:`ES = 1`; S = 1 without noise), so
    :math:`x_{t+1} = x_t(1 - s_tS_t)` and, with :math:`r_t = \eta_{t+1}/\eta_t`,

    .. math:: s_{t+1} = r_t\,s_t\,(1 - s_tS_t)^2 .

    x itself has dropped out: the divergence of a pre-scheduled step depends on :math:`(\eta_0, x_0)` only
    through :math:`s_0 = \eta_0x_0^2`. Returns ``(s_next, (s, r, S))``."""
    return _quartic_schedule_map()


def _sure_escape(schedule: str) -> float:
    r"""Level above which :math:`s_t` never decreases again without noise: :math:`r_{\min}(s-1)^2 \ge 1`
    (:math:`r_{\min} = 1` constant, :math:`1/\sqrt2` for :math:`1/\sqrt{t+1}`), solved by sympy."""
    s, r = sp.symbols("s r", positive=True)
    r_min = 1 if schedule == "constant" else 1 / sp.sqrt(2)
    roots = [v for v in sp.solve(sp.Eq(r * (s - 1) ** 2, 1).subs(r, r_min), s) if v > 1]
    return float(roots[0])


@functools.lru_cache(maxsize=64)
def _schedule_threshold(schedule: str, t0: int) -> float:
    sure = _sure_escape(schedule)

    def escapes(s0: float) -> bool:
        s = s0
        for t in range(t0, t0 + 100_000):
            if s <= 2.0:
                return False            # |x| stops growing and the step keeps shrinking: never escapes
            if s >= sure:
                return True
            s = _schedule_ratio(schedule, t) * s * (1 - s) ** 2
        return False

    lo, hi = 2.0, sure
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if escapes(mid) else (mid, hi)
    return 0.5 * (lo + hi)


def quartic_schedule_threshold(schedule: str = "inv_sqrt") -> float:
    r"""Noise-free escape threshold :math:`s^\ast` of GD on :math:`x^4/4` with :math:`\eta_t = \eta_0c_t`:
    :math:`|x_t| \to \infty` iff :math:`s_0 = \eta_0x_0^2 > s^\ast`.

    By :func:`quartic_schedule_map` with S = 1, :math:`s_{t+1} = r_ts_t(1 - s_t)^2`. Once :math:`s_t \le 2`,
    :math:`|x|` stops growing and :math:`s` only decreases, so the start escapes iff :math:`s_t > 2` for every t;
    the map increases in s for s > 1, so the escaping starts form a half-line, found by bisection (each orbit is
    followed until :math:`s_t \le 2` or :math:`s_t` passes the sympy level where it can no longer fall).
    Constant step: 2; :math:`1/\sqrt{t+1}`: 2.1697 (the decay saves only starts within 8.5 % of the edge)."""
    choice("schedule", schedule, SCHEDULE_KINDS)
    return _schedule_threshold(schedule, 0)


def quartic_schedule_divergence(s0, schedule: str, n_agents, omega, sigma1, n_steps: int = 20,
                                n_grid: int = 400, n_nodes: int = 161, *, max_bytes=None):
    r"""Probability that DCSGD with the pre-scheduled step :math:`\eta_t = \eta_0c_t` diverges on :math:`x^4/4`
    from :math:`s_0 = \eta_0x_0^2` (multiplicative Gaussian noise :math:`\sigma_1`, Bernoulli compressors of
    variances ``omega``, N agents).

    :math:`s_t` is a Markov chain (:func:`quartic_schedule_map`) with i.i.d. :math:`S_t`, a mixture over the kept
    agents K of :math:`\mathcal N(\mu_K, s_K^2)`. Backward recursion on a log grid of s,
    :math:`V_t(s) = E\,V_{t+1}(r_ts(1 - sS))^2)`, over ``n_steps`` steps; at the horizon the noise-free rule
    (escape iff :math:`s > s^\ast` of the schedule restarted there); :math:`s < 10^{-6}` counts as converged
    and :math:`s > 10^8` as diverged (from there escape fails only if :math:`|1 - sS| < O(s^{-1/2})`). The
    Gaussian part is integrated on ``n_nodes`` equally spaced nodes over :math:`\pm 8` standard deviations. The
    default horizon of 20 steps changes the law by < 1e-12 against 60 steps (an escape starts within a few steps;
    later the shrinking step makes one exponentially unlikely). ``max_bytes``: the allocation limit
    (:func:`theory.validate.byte_limit`) for a backward step's ``(n_grid, components x n_nodes)`` tables.
    """
    choice("schedule", schedule, SCHEDULE_KINDS)
    s0 = array("s0", s0, ndim=(0, 1), low=0.0, low_open=True)
    n = integer("n_agents", n_agents, low=1, high=12)
    om = _omegas(omega, n)
    s1 = _pos("sigma1", sigma1, zero=True)
    n_steps = integer("n_steps", n_steps, low=1, high=10_000)
    n_grid = integer("n_grid", n_grid, low=16)
    n_nodes = integer("n_nodes", n_nodes, low=3)
    merged = _merged_kept_laws(n, om, s1)
    # each backward step holds (n_grid, components x n_nodes) arrays: the next states, their logs, the interpolation
    check_bytes({"n_grid": n_grid, "n_nodes": n_nodes, "n_agents": n}, 4 * 8 * n_grid * len(merged) * n_nodes,
                what="a backward step's (grid, quadrature node) tables", max_bytes=max_bytes)
    ls = np.linspace(math.log(1e-6), math.log(1e8), n_grid)
    s = np.exp(ls)
    z, wz = _normal_nodes(n_nodes)
    values, weights = [], []
    for (mu, var), prob in merged.items():
        if var > 0:
            values.append(mu + math.sqrt(var) * z)
            weights.append(prob * wz)
        else:
            values.append(np.array([mu]))
            weights.append(np.array([prob]))
    S, w = np.concatenate(values), np.concatenate(weights)
    V = (s > _schedule_threshold(schedule, n_steps)).astype(float)
    for t in reversed(range(n_steps)):
        nxt = _schedule_ratio(schedule, t) * s[:, None] * (1 - s[:, None] * S[None, :]) ** 2
        lv = np.log(np.maximum(nxt, 1e-300))
        V = np.interp(lv, ls, V, left=0.0, right=1.0) @ w
    out = np.interp(np.log(s0), ls, V)
    return float(out) if s0.ndim == 0 else out


def quartic_schedule_divergence_affine(x0, eta0, schedule: str, n_agents, omega, sigma0, sigma1, n_steps: int = 20,
                                       n_grid: int = 400, n_nodes: int = 81, *, max_bytes=None):
    r""":func:`quartic_schedule_divergence` under affine noise :math:`\sigma_0^2 + \sigma_1^2 f'(x)^2` (per-agent
    Gaussian noise of that variance, then Bernoulli compression), as a function of the start ``x0`` and ``eta0``.

    With :math:`\sigma_0 > 0` the chain is no longer scale-free, so the recursion runs on :math:`|x|` (the law is
    symmetric): given the kept agents K, DCSGD's direction is Gaussian,
    :math:`D \sim \mathcal N(f'(x)\mu_K,\ s^2\sum_{i\in K}(Nq_i)^{-2})`, :math:`s^2 = \sigma_0^2 + \sigma_1^2f'(x)^2`,
    and :math:`V_t(x) = E\,V_{t+1}(|x - \eta_tD|)` on a log grid of :math:`|x| \in [10^{-4}, 10^8]`
    (outside: converged / diverged), with the noise-free rule at the horizon. At :math:`\sigma_0 = 0` it is the
    s-chain law at :math:`s_0 = \eta_0x_0^2`. ``max_bytes``: as for :func:`quartic_schedule_divergence`."""
    choice("schedule", schedule, SCHEDULE_KINDS)
    x0 = array("x0", x0, ndim=(0, 1), low=0.0, low_open=True)
    eta0 = _pos("eta0", eta0)
    n = integer("n_agents", n_agents, low=1, high=12)
    om = _omegas(omega, n)
    s0_, s1 = _pos("sigma0", sigma0, zero=True), _pos("sigma1", sigma1, zero=True)
    n_steps = integer("n_steps", n_steps, low=1, high=10_000)
    n_grid = integer("n_grid", n_grid, low=16)
    n_nodes = integer("n_nodes", n_nodes, low=3)
    merged = _merged_kept_laws(n, om, 1.0)   # sigma1 = 1 here: var is sum_K (N q_i)^-2
    check_bytes({"n_grid": n_grid, "n_nodes": n_nodes, "n_agents": n}, 5 * 8 * n_grid * len(merged) * n_nodes,
                what="the (grid, component, node) direction table and a backward step's tables", max_bytes=max_bytes)
    lx = np.linspace(math.log(1e-4), math.log(1e8), n_grid)
    x = np.exp(lx)
    z, wz = _normal_nodes(n_nodes)
    mus = np.array([k[0] for k in merged])
    sds = np.sqrt(np.array([k[1] for k in merged]))
    probs = np.array(list(merged.values()))
    g = x**3
    s = np.sqrt(s0_**2 + s1**2 * g**2)
    # nodes: (grid point, component, z): D = g mu + s sd z (a component with sd = 0 gets the same value at every z)
    D = g[:, None, None] * mus[None, :, None] + (s[:, None, None] * sds[None, :, None]) * z[None, None, :]
    w = probs[:, None] * wz[None, :]
    eta = lambda t: eta0 * (1.0 if schedule == "constant" else 1.0 / math.sqrt(t + 1))  # noqa: E731
    V = (eta(n_steps) * x**2 > _schedule_threshold(schedule, n_steps)).astype(float)
    for t in reversed(range(n_steps)):
        nxt = np.abs(x[:, None, None] - eta(t) * D)
        V = np.einsum("gkz,kz->g", np.interp(np.log(np.maximum(nxt, 1e-300)), lx, V, left=0.0, right=1.0), w)
    out = np.interp(np.log(x0), lx, V)
    return float(out) if x0.ndim == 0 else out
