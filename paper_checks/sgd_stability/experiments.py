r"""The simulations of the ``sgd_stability`` topic: named, cached, budgeted experiments.

Claims and ``figures/sgd_stability.py`` both read these; nothing here uses a closed form of
:mod:`theory.sgd_stability` to produce a measurement (one names where to run: Polyak's tuned point, at which
:func:`heavy_ball_rate` measures). Thresholds are *located* by
:func:`sims.sgd_stability.refine_crossing` on simulated growth rates, from brackets that do not depend on
the predictions. The problems are fixed, seeded data sets (NumPy generators for data; typed JAX keys
for every simulated path).
"""
from __future__ import annotations

import numpy as np
import jax
from scipy import linalg

import sims.sgd_stability as sim
import theory.sgd_stability as th
from paper_checks import Budget, experiment

__all__ = [
    "SEED", "ls_problem", "commuting_problem", "large_problem", "dln_data", "mixture_identity", "ms_thresholds",
    "as_thresholds", "naive_trap", "large_n_moments", "dln_trace", "dln_stable_set", "delay_thresholds",
    "delay_noise", "momentum_region", "momentum_variance", "HB_KAPPAS", "hb_curvatures", "heavy_ball_rate",
]

SEED = 20240613
N_POINTS = 9  # trial values per item and refinement round: each round shrinks a bracket 8x


# Horizons shared by every experiment that runs a given simulator (a horizon is static configuration:
# one value per budget means one compilation per simulator and problem shape).
def _moment_steps(budget: Budget) -> int:
    return budget.pick(quick=200, full=400)


def _lyapunov_steps(budget: Budget) -> int:
    return budget.pick(quick=600, full=3000)


def _short_steps(budget: Budget) -> int:
    # short horizons on purpose: beyond ~8 steps the paths that carry E||theta_t||^2 grow rare and the
    # sample standard error starts to understate the real one (the trap of the naive estimate, in small)
    return 8


# ----------------------------------------------------------------------------- problems (data, not simulation)
def ls_problem() -> np.ndarray:
    r"""Least squares at interpolation, :math:`n = 8`, :math:`d = 3`: :math:`H_i = x_ix_i^\top`, :math:`x_i \sim N(0, I)`."""
    x = np.random.default_rng(SEED).standard_normal((8, 3))
    return np.einsum("ni,nj->nij", x, x)


def commuting_problem() -> np.ndarray:
    r"""Diagonal (commuting) per-sample Hessians, :math:`n = 8`, :math:`d = 3`: log-normal curvatures, axes scaled 1, 0.5, 0.25.

    The same shape as :func:`ls_problem`, so both run through one compiled simulator.
    """
    c = np.exp(np.random.default_rng(SEED + 1).standard_normal((8, 3))) * np.array([1.0, 0.5, 0.25])
    return np.stack([np.diag(row) for row in c])


def large_problem() -> np.ndarray:
    r"""Least squares with :math:`n = 64`, :math:`d = 4` (too many batches to enumerate): anisotropic Gaussian features."""
    x = np.random.default_rng(SEED + 2).standard_normal((64, 4)) * np.array([1.0, 0.7, 0.5, 0.3])
    return np.einsum("ni,nj->nij", x, x)


def dln_data(spread: float, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    r"""Inputs :math:`X = \bar x + \epsilon Z` (:math:`n = 4` samples, :math:`d = 6` features) and a target :math:`\beta`
    for the diagonal linear net; small ``spread`` :math:`\epsilon` makes the samples (and their gradients) alike.
    """
    rng = np.random.default_rng(SEED + 10 + seed)
    xbar, z, beta = rng.standard_normal(6), rng.standard_normal((4, 6)), rng.standard_normal(6)
    return xbar + spread * z, beta


def _on_range(h: np.ndarray) -> np.ndarray:
    """Per-sample Hessians in an orthonormal basis of the range of their mean (from its eigenvectors).

    The flat directions of a minimum manifold never move under linearized SGD; simulated in full,
    their round-off (1e-16) would outlast a decaying second moment and fake a zero growth rate.
    """
    w, u = np.linalg.eigh(h.mean(axis=0))
    u = u[:, w > 1e-10 * w.max()]
    return np.einsum("ia,nij,jb->nab", u, h, u)


def _dln_minimum(beta: np.ndarray, scale: float) -> tuple[np.ndarray, np.ndarray]:
    """u = c sqrt|beta| sign(beta), v = sqrt|beta| / c: a minimum with u * v = beta (its own targets are X beta)."""
    root = np.sqrt(np.abs(beta))
    return scale * root * np.sign(beta), root / scale


# ----------------------------------------------------------------------------- mean-square thresholds
def _moment_crossing(hessians, sizes, lo, hi, *, n_steps, n_rounds, sigma0=None) -> dict:
    """Where the exact second moment's growth rate changes sign, per item (bracket refinement).

    ``hessians``: one problem :math:`(n, d, d)` for every item, or one per item :math:`(k, n, d, d)` (then
    ``sigma0`` may be one per item as well).
    """
    sizes = np.asarray(sizes)
    per_item = np.ndim(hessians) == 4

    def rate(vals):
        k, q = vals.shape
        h = np.repeat(hessians, q, axis=0) if per_item else hessians
        s0 = np.repeat(sigma0, q, axis=0) if sigma0 is not None and np.ndim(sigma0) == 3 else sigma0
        out = sim.moment_growth(h, np.repeat(sizes, q), vals.ravel(), n_steps=n_steps, sigma0=s0)
        return out["rate"].reshape(k, q)

    return sim.refine_crossing(rate, np.broadcast_to(lo, sizes.shape).astype(float),
                               np.broadcast_to(hi, sizes.shape).astype(float), n_points=N_POINTS, n_rounds=n_rounds)


@experiment("sgd_stability.mixture_identity")
def mixture_identity(budget: Budget) -> dict:
    r""":math:`E[H_{\mathcal B}\otimes H_{\mathcal B}]` by enumerating every batch, :math:`B = 1..n`, on :func:`ls_problem`."""
    h = ls_problem()
    sizes = np.arange(1, h.shape[0] + 1)
    return {"batch_sizes": sizes, "enumerated": sim.kron_enumerated(h, sizes)}


@experiment("sgd_stability.ms_thresholds")
def ms_thresholds(budget: Budget) -> dict:
    r"""Measured mean-square thresholds :math:`\hat\eta^*(B)`, :math:`B = 1..8`, and growth-rate curves :math:`r(\eta)`.

    The growth rate of the exactly enumerated second moment (:func:`sims.sgd_stability.moment_growth`,
    :math:`T` steps) is located in :math:`\eta \in [0.02, 4]` by bracket refinement; the curves sample
    :math:`r(\eta)` on a fixed grid (each tends to :math:`\log\rho(\mathcal M_B)`).
    """
    h = ls_problem()
    sizes = np.arange(1, h.shape[0] + 1)
    n_steps = _moment_steps(budget)
    found = _moment_crossing(h, sizes, 0.02, 4.0, n_steps=n_steps, n_rounds=budget.pick(quick=5, full=7))
    etas = np.linspace(0.05, 1.6, budget.pick(quick=8, full=24))
    # the curve's last point is the naive-trap step 1.1 x the measured eta*(1) (one sweep, one compilation)
    trap_eta = 1.1 * float(found["crossing"][0])
    curve = sim.moment_growth(h, np.append(np.repeat(sizes, etas.size), 1), np.append(np.tile(etas, sizes.size), trap_eta),
                              n_steps=n_steps)
    m = sizes.size * etas.size
    return {"batch_sizes": sizes, "n_steps": n_steps, **found, "curve_eta": etas,
            "curve_rate": curve["rate"][:m].reshape(sizes.size, etas.size),
            "curve_diverged": curve["diverged"][:m].reshape(sizes.size, etas.size),
            "trap_eta": trap_eta, "trap_rate": float(curve["rate"][m])}


# ----------------------------------------------------------------------------- almost-sure thresholds
def _lyapunov_crossing(hessians, sizes, key, *, lo, hi, n_steps, n_paths, n_rounds) -> dict:
    r"""Where the mean simulated Lyapunov exponent crosses 0, per batch size, with a delta-method standard error.

    The same paths (one key, common random numbers) serve every trial :math:`\eta`, so
    :math:`\hat\gamma(\eta)` is smooth in :math:`\eta`. At the crossing :math:`\hat\eta`, the per-path
    exponents interpolated from the final bracket give :math:`\mathrm{SE}(\bar\gamma)`; then
    :math:`\mathrm{SE}(\hat\eta) = \mathrm{SE}(\bar\gamma)/|\partial_\eta\bar\gamma|`. Also the mean exponent and its
    standard error over the paths at a quarter of the crossing (``probe_eta``, ``probe_gamma``, ``probe_se``).
    """
    sizes = np.asarray(sizes)
    burn = n_steps // 10  # the direction forgets its start geometrically fast; the increments after are unbiased

    def paths(eta, b):
        return sim.lyapunov_paths(key, hessians, b, eta, n_steps=n_steps, n_paths=n_paths, burn=burn)

    def rate(vals):
        k, q = vals.shape
        return paths(vals.ravel(), np.repeat(sizes, q))["gamma"].mean(axis=1).reshape(k, q)

    found = sim.refine_crossing(rate, np.full(sizes.size, lo), np.full(sizes.size, hi), n_points=7, n_rounds=n_rounds)
    # the bracket's ends, and a probe at a quarter of the crossing where the exponent itself (not only its sign) is
    # measured: there the top coordinate's rate leads the others' by >= 0.2 per step on the commuting problem, so the
    # burn-in leaves no start bias (half the crossing, where two rates are within 0.09, shows one of ~1e-2 relative)
    probe = 0.25 * found["crossing"]
    ends = paths(np.concatenate([found["lo"], found["hi"], probe]), np.concatenate([sizes, sizes, sizes]))
    k = sizes.size
    g_lo, g_hi, g_probe = ends["gamma"][:k], ends["gamma"][k:2 * k], ends["gamma"][2 * k:]
    w = ((found["crossing"] - found["lo"]) / (found["hi"] - found["lo"]))[:, None]
    g_at = g_lo + w * (g_hi - g_lo)
    slope = (g_hi.mean(axis=1) - g_lo.mean(axis=1)) / (found["hi"] - found["lo"])
    se = g_at.std(axis=1, ddof=1) / np.sqrt(n_paths) / np.abs(slope)
    return {**found, "se": se, "n_diverged": ends["diverged"][:2 * k].sum(axis=1), "probe_eta": probe,
            "probe_gamma": g_probe.mean(axis=1), "probe_se": g_probe.std(axis=1, ddof=1) / np.sqrt(n_paths)}


@experiment("sgd_stability.as_thresholds")
def as_thresholds(budget: Budget) -> dict:
    r"""Almost-sure thresholds :math:`\hat\eta_{as}(B)` from simulated top Lyapunov exponents.

    On :func:`commuting_problem` (where the exponent has a closed form) and on :func:`ls_problem`
    (where it has none); brackets :math:`[0.05, 5]`.
    """
    n_steps, n_paths = _lyapunov_steps(budget), budget.pick(quick=48, full=256)
    n_rounds = budget.pick(quick=5, full=6)
    key_c, key_l = jax.random.split(jax.random.key(SEED))
    # B = n is gradient descent: deterministic, a.s. = mean-square = 2/lambda_max, no spread to estimate
    c_sizes = np.array(budget.pick(quick=[1, 2, 4], full=list(range(1, 8))))
    l_sizes = np.array(budget.pick(quick=[1, 2, 4], full=list(range(1, 9))))
    com = _lyapunov_crossing(commuting_problem(), c_sizes, key_c, lo=0.05, hi=5.0, n_steps=n_steps, n_paths=n_paths,
                             n_rounds=n_rounds)
    ls = _lyapunov_crossing(ls_problem(), l_sizes, key_l, lo=0.05, hi=5.0, n_steps=n_steps, n_paths=n_paths,
                            n_rounds=n_rounds)
    return {"n_steps": n_steps, "n_paths": n_paths, "commuting_sizes": c_sizes,
            **{f"commuting_{k}": v for k, v in com.items()}, "ls_sizes": l_sizes, **{f"ls_{k}": v for k, v in ls.items()}}


# ----------------------------------------------------------------------------- the naive Monte Carlo trap
@experiment("sgd_stability.naive_trap")
def naive_trap(budget: Budget) -> dict:
    r"""At :math:`\eta = 1.1\,\hat\eta^*(1)` on :func:`ls_problem` (the *measured* threshold): three estimates of growth.

    * exact: the enumerated second moment's growth rate per step (from :func:`ms_thresholds`);
    * naive Monte Carlo: :math:`\frac1T\log\big(\frac1P\sum_p\|\theta_T^{(p)}\|^2\big)` over long paths, in
      ``n_groups`` independent groups (the mean is taken in log space, exactly what the plain average
      of :math:`\|\theta_T\|^2` would give without overflow);
    * short horizon, many paths: :math:`\frac1P\sum_p\|\theta_t^{(p)}\|^2` for :math:`t \le t_s` with its standard error.
    """
    h = ls_problem()
    ms = ms_thresholds(budget)
    eta = float(ms["trap_eta"])
    # the horizons match the other experiments' (static configuration), so no simulator compiles twice
    n_long, n_groups, per_group = _lyapunov_steps(budget), 8, budget.pick(quick=250, full=500)
    t_short, n_short = _short_steps(budget), budget.pick(quick=20000, full=100000)
    key_long, key_short = jax.random.split(jax.random.key(SEED + 3))
    long = sim.lyapunov_paths(key_long, h, 1, [eta], n_steps=n_long, n_paths=n_groups * per_group)
    logs = long["log_sq_norm"][0].reshape(n_groups, per_group)
    top = logs.max(axis=1, keepdims=True)
    naive = (top[:, 0] + np.log(np.mean(np.exp(logs - top), axis=1))) / n_long
    theta0 = np.ones(h.shape[1]) / np.sqrt(h.shape[1])
    short = sim.sgd_paths(key_short, h, 1, [eta], theta0, n_steps=t_short, n_paths=n_short)
    sq, dead = short["sq_norm"][0], short["diverged"][0]
    ok = sq[~dead]
    return {"eta": eta, "n_long": n_long, "exact_rate": float(ms["trap_rate"]), "naive_rate": naive,
            "gamma": long["gamma"][0], "long_diverged": int(long["diverged"].sum()),
            "theta0": theta0, "short_mean": ok.mean(axis=0), "short_se": ok.std(axis=0, ddof=1) / np.sqrt(ok.shape[0]),
            "short_diverged": int(dead.sum()), "n_short": n_short}


@experiment("sgd_stability.large_n_moments")
def large_n_moments(budget: Budget) -> dict:
    r"""Short-horizon second moments of SGD paths on :func:`large_problem` (:math:`n = 64`), batches without replacement.

    :math:`B \in \{16, 32\}` at :math:`\eta = 1.9/\lambda_{\max}(H)` (below GD's limit, where the batch
    noise decides); mean :math:`\|\theta_t\|^2` over paths with its standard error, :math:`t \le t_s`; and the share
    of the population's spread that the batches add as noise, the mean over all paths and steps of
    :math:`\|(H_{\mathcal B}-H)\theta_t\|^2 / \frac1n\sum_i\|(H_i-H)\theta_t\|^2`, with its standard error.
    """
    h = large_problem()
    lam = float(np.linalg.eigvalsh(h.mean(axis=0))[-1])
    sizes = np.array([16, 32])
    eta = np.full(sizes.size, 1.9 / lam)
    theta0 = np.ones(h.shape[1]) / np.sqrt(h.shape[1])
    # 2^15 paths at quick: the per-step noise share then has a 0.2 % standard error, fine enough to tell p with n - 1
    # from p with n (1.6 % apart at n = 64); 0.1 % at full
    n_paths, t_short = budget.pick(quick=32768, full=100000), _short_steps(budget)
    out = sim.sgd_paths(jax.random.key(SEED + 4), h, sizes, eta, theta0, n_steps=t_short, n_paths=n_paths)
    sq = np.where(out["diverged"][..., None], np.nan, out["sq_norm"])
    # the batch-noise share of the population's spread, step by step: given theta_t the ratio's expectation is the
    # mixture weight p whatever theta_t is, so the ratios of all steps and paths are uncorrelated draws around p (a
    # martingale-difference sequence) and their sample standard deviation / sqrt(count) is the standard error
    live = out["spread"] > 0
    ratio = [out["batch_noise"][k][live[k]] / out["spread"][k][live[k]] for k in range(sizes.size)]
    share = np.array([r.mean() for r in ratio])
    share_se = np.array([r.std(ddof=1) / np.sqrt(r.size) for r in ratio])
    return {"batch_sizes": sizes, "eta": eta, "theta0": theta0, "mean": np.nanmean(sq, axis=1),
            "se": np.nanstd(sq, axis=1, ddof=1) / np.sqrt((~out["diverged"]).sum(axis=1))[:, None],
            "n_diverged": out["diverged"].sum(axis=1), "n_paths": n_paths, "noise_share": share,
            "noise_share_se": share_se}


# ----------------------------------------------------------------------------- diagonal linear net
@experiment("sgd_stability.dln_trace")
def dln_trace(budget: Budget) -> dict:
    r"""Measured :math:`\hat\eta^*(1)` and :math:`\hat\eta^*(n)` at balanced minima of diagonal linear nets, with :math:`\mathrm{tr}H`.

    Per-sample Hessians by autodiff (:func:`sims.sgd_stability.dln_hessians`), restricted to the range of
    :math:`H` (``_on_range``); thresholds located on the exact second moment. Sample spreads :math:`\epsilon` from alike to diverse.
    """
    spreads = np.array(budget.pick(quick=[0.05, 0.3, 1.0], full=list(np.geomspace(0.03, 1.5, 8))))
    seeds = list(range(budget.pick(quick=1, full=3)))
    n_steps, n_rounds = _moment_steps(budget), budget.pick(quick=5, full=7)
    members = [(seed, float(eps)) for seed in seeds for eps in spreads]
    hessians = []
    for seed, eps in members:  # one Hessian set per data set
        x, beta = dln_data(eps, seed)
        hessians.append(_on_range(sim.dln_hessians(*_dln_minimum(beta, 1.0), x)))
    hessians = np.array(hessians)
    n = hessians.shape[1]
    hbar = hessians.mean(axis=1)
    items = np.concatenate([hessians, hessians])
    sizes = np.repeat([1, n], len(members))
    found = _moment_crossing(items, sizes, 1e-3, 10.0, n_steps=n_steps, n_rounds=n_rounds)
    k = len(members)
    return {"seed": np.array([m[0] for m in members]), "spread": np.array([m[1] for m in members]),
            "eta_1": found["crossing"][:k], "eta_n": found["crossing"][k:], "width_1": (found["hi"] - found["lo"])[:k],
            "width_n": (found["hi"] - found["lo"])[k:], "trace": np.trace(hbar, axis1=1, axis2=2),
            "frob4": np.mean(np.sum(hessians * hessians, axis=(2, 3)), axis=1),
            "lam_max": np.linalg.eigvalsh(hbar)[:, -1], "n_samples": int(n)}


@experiment("sgd_stability.dln_stable_set")
def dln_stable_set(budget: Budget) -> dict:
    r"""Which minima along the balance curve :math:`u = c\sqrt{|\beta|}`, :math:`v = \sqrt{|\beta|}/c` are mean-square stable at one :math:`\eta`, per :math:`B`.

    Data spread :math:`\epsilon = 0.8`; :math:`\eta = 1/\lambda_{\max}` of the balanced minimum (half of
    GD's limit there); stability is the sign of the exact second moment's growth rate on the range of
    :math:`H` (``_on_range``).
    """
    x, beta = dln_data(0.8)
    scales = np.geomspace(0.4, 2.5, budget.pick(quick=25, full=61))
    sizes = np.arange(1, x.shape[0] + 1)
    u, v = _dln_minimum(beta, 1.0)
    eta = 1.0 / float(np.linalg.eigvalsh(sim.dln_hessians(u, v, x).mean(axis=0))[-1])
    n_steps = _moment_steps(budget)
    hessians = np.array([_on_range(sim.dln_hessians(*_dln_minimum(beta, float(c)), x)) for c in scales])
    hbar = hessians.mean(axis=1)
    pts = np.repeat(np.arange(scales.size), sizes.size)
    out = sim.moment_growth(hessians[pts], np.tile(sizes, scales.size), np.full(pts.size, eta), n_steps=n_steps)
    return {"eta": eta, "scales": scales, "batch_sizes": sizes, "rate": out["rate"].reshape(scales.size, sizes.size),
            "trace": np.trace(hbar, axis1=1, axis2=2), "lam_max": np.linalg.eigvalsh(hbar)[:, -1]}


# ----------------------------------------------------------------------------- delayed gradients
@experiment("sgd_stability.delay_thresholds")
def delay_thresholds(budget: Budget) -> dict:
    r"""Measured stability edge :math:`\hat a^*(S)` of :math:`x_{t+1} = x_t - a x_{t-S}`, :math:`S = 0..8`, bracket :math:`[0.01, 3]`;
    and the growth rate at 0.6 and 1.4 times each edge (``probe_a``, ``probe_rate``: delays 0..8 twice)."""
    delays = np.arange(9)
    n_steps = budget.pick(quick=2000, full=8000)

    def rate(vals):
        k, q = vals.shape
        return sim.delayed_growth(vals.ravel(), np.repeat(delays, q), n_steps=n_steps)["rate"].reshape(k, q)

    found = sim.refine_crossing(rate, np.full(delays.size, 0.01), np.full(delays.size, 3.0), n_points=N_POINTS,
                                n_rounds=budget.pick(quick=6, full=8))
    # the growth rate itself on both sides of each edge (0.6 and 1.4 times it; 18 points share the sweep's compilation)
    probe = np.concatenate([0.6 * found["crossing"], 1.4 * found["crossing"]])
    probe_rate = sim.delayed_growth(probe, np.concatenate([delays, delays]), n_steps=n_steps)["rate"]
    return {"delays": delays, "n_steps": n_steps, **found, "probe_a": probe, "probe_rate": probe_rate}


@experiment("sgd_stability.delay_noise")
def delay_noise(budget: Budget) -> dict:
    r"""Escape threshold of noisy delayed SGD on :math:`f = x^2/2 + x^4/4` (:math:`\lambda = \kappa = 1`).

    For each delay :math:`S` and noise level :math:`\sigma`, the step :math:`\hat\eta_c` at which half of the
    ``n_paths`` paths (started at the minimum) leave :math:`|x| \le 10^3` within :math:`T` steps; located
    by bracket refinement of (fraction escaped :math:`-\tfrac12`) with common random numbers.
    """
    delays = np.array(budget.pick(quick=[0, 2], full=[0, 1, 2, 4]))
    sigmas = np.array(budget.pick(quick=[0.1, 0.3], full=[0.05, 0.1, 0.2, 0.3, 0.5]))
    items_s, items_sigma = np.repeat(delays, sigmas.size), np.tile(sigmas, delays.size)
    n_steps, n_paths = budget.pick(quick=1000, full=4000), budget.pick(quick=32, full=128)
    key = jax.random.key(SEED + 5)

    def rate(vals):
        k, q = vals.shape
        # the toy's curvatures passed explicitly: the experiment's problem must not move with the simulator's defaults
        out = sim.delayed_noisy(key, vals.ravel(), np.repeat(items_s, q), np.repeat(items_sigma, q), lam=1.0, kappa=1.0,
                                n_steps=n_steps, n_paths=n_paths)
        return out["diverged"].mean(axis=1).reshape(k, q) - 0.5

    found = sim.refine_crossing(rate, np.full(items_s.size, 0.02), np.full(items_s.size, 3.0), n_points=N_POINTS,
                                n_rounds=budget.pick(quick=3, full=4))
    return {"delays": items_s, "sigmas": items_sigma, "n_steps": n_steps, "n_paths": n_paths, **found}


# ----------------------------------------------------------------------------- momentum
@experiment("sgd_stability.momentum_region")
def momentum_region(budget: Budget) -> dict:
    r"""Simulated growth or decay of heavy ball and Nesterov on :math:`x^2/2` over an :math:`(h, \mu)` grid, and the located edge per :math:`\mu`.

    Grid :math:`h = \eta\lambda \in [0.05, 4.5]`, :math:`\mu \in [0, 0.95]`; edges located in :math:`h \in [0.01, 6]`.
    """
    n_steps = budget.pick(quick=400, full=1500)
    hs = np.linspace(0.05, 4.5, budget.pick(quick=19, full=46))
    mus = np.linspace(0.0, 0.95, budget.pick(quick=11, full=39))
    methods = ["heavy_ball", "nesterov"]
    hh, mm = np.meshgrid(hs, mus, indexing="ij")
    rates = {}
    for name in methods:
        out = sim.momentum_growth(hh.ravel(), mm.ravel(), method=name, n_steps=n_steps)
        rates[name] = out["rate"].reshape(hh.shape)
    edge_mu = np.array([0.0, 0.25, 0.5, 0.75, 0.9])
    item_mu, item_method = np.tile(edge_mu, 2), [m for m in methods for _ in edge_mu]

    def rate(vals):
        k, q = vals.shape
        return sim.momentum_growth(vals.ravel(), np.repeat(item_mu, q), method=[m for m in item_method for _ in range(q)],
                                   n_steps=n_steps)["rate"].reshape(k, q)

    found = sim.refine_crossing(rate, np.full(item_mu.size, 0.01), np.full(item_mu.size, 6.0), n_points=N_POINTS,
                                n_rounds=budget.pick(quick=5, full=7))
    return {"h": hs, "mu": mus, "rate_heavy_ball": rates["heavy_ball"], "rate_nesterov": rates["nesterov"],
            "edge_mu": item_mu, "edge_nesterov": np.array([m == "nesterov" for m in item_method]), **found}


@experiment("sgd_stability.momentum_variance")
def momentum_variance(budget: Budget) -> dict:
    r"""Stationary :math:`E[x^2]` of heavy-ball SGD with additive noise (:math:`\lambda = \sigma = 1`) at several :math:`(\eta, \mu)`.

    Each path's time average after a burn-in is one independent replicate; the standard error is their
    spread over :math:`\sqrt P`.
    """
    eta = np.array([0.5, 0.5, 0.2, 1.5, 1.0])
    mu = np.array([0.0, 0.5, 0.9, 0.5, 0.8])
    n_steps, burn, n_paths = budget.pick(quick=1500, full=20000), 300, budget.pick(quick=128, full=512)
    out = sim.momentum_noise(jax.random.key(SEED + 6), eta, mu, sigma=1.0, n_steps=n_steps, burn=burn, n_paths=n_paths)
    ms, dead = out["mean_sq"], out["diverged"]
    ok = ~dead
    return {"eta": eta, "mu": mu, "mean": np.nanmean(ms, axis=1),
            "se": np.nanstd(ms, axis=1, ddof=1) / np.sqrt(ok.sum(axis=1)), "n_diverged": dead.sum(axis=1),
            "n_paths": n_paths, "n_steps": n_steps, "burn": burn}


HB_KAPPAS = (10.0, 100.0, 1000.0, 10000.0)  # condition numbers of the tuned-heavy-ball quadratics (L = 1)


def hb_curvatures(kappa: float) -> np.ndarray:
    r"""The quadratic of condition number :math:`\kappa`: six curvatures log-spaced in :math:`[1/\kappa, 1]` (both ends and four inside)."""
    return np.geomspace(1.0 / kappa, 1.0, 6)


@experiment("sgd_stability.heavy_ball_rate")
def heavy_ball_rate(budget: Budget) -> dict:
    r"""Heavy ball at Polyak's tuned :math:`(\eta^*, \mu^*)` on quadratics of condition number :math:`\kappa` = 10 .. 1e4.

    Per :math:`\kappa` (curvatures :func:`hb_curvatures`): :math:`\log\|x_t\|` over :math:`T` steps from
    :math:`x_0 = x_{-1} = 1` (:func:`sims.sgd_stability.momentum_norms`), the spectral radius of the one-step map read
    off the update rule at :math:`(\eta^*, \mu^*)` (:func:`sims.sgd_stability.momentum_map`), and the smallest radius of
    that map over an :math:`(\eta, \mu)` grid (:math:`\eta \in (0, 4]`, :math:`1-\mu` log-spaced in
    :math:`[10^{-4}, 1]`) that does not depend on the tuned point. The tuned point comes from
    :func:`theory.sgd_stability.heavy_ball_optimal` (where to run); the rates are measured.
    """
    kappas = np.array(HB_KAPPAS)
    lams = np.stack([hb_curvatures(k) for k in kappas])
    tuned = [th.heavy_ball_optimal(1.0 / k, 1.0) for k in kappas]
    eta, mu = np.array([t["eta"] for t in tuned]), np.array([t["mu"] for t in tuned])
    n_steps = budget.pick(quick=2000, full=8000)
    norms = sim.momentum_norms(eta, mu, lams=lams, n_steps=n_steps)
    at_tuned = sim.momentum_map(eta, mu, lams=lams)
    n = budget.pick(quick=121, full=401)
    ge, gm = np.meshgrid(np.linspace(4.0 / n, 4.0, n), 1.0 - np.geomspace(1e-4, 1.0, n), indexing="ij")
    k = kappas.size
    grid = sim.momentum_map(np.tile(ge.ravel(), k), np.tile(gm.ravel(), k), lams=np.repeat(lams, ge.size, axis=0))
    radius = grid["radius"].reshape(k, -1)
    best = np.argmin(radius, axis=1)
    return {"kappa": kappas, "eta": eta, "mu": mu, "n_steps": n_steps, "log_norm": norms["log_norm"],
            "diverged": norms["diverged"], "radius_tuned": at_tuned["radius"], "grid_n": n,
            "grid_min": radius[np.arange(k), best], "grid_eta": ge.ravel()[best], "grid_mu": gm.ravel()[best]}


# ----------------------------------------------------------------------------- the threshold at realistic n; necessary conditions
GAP_N = 512
GAP_SIZES = np.array([1, 2, 4, 8, 16, 32, 64])
GAP_GROUPS = 16


def gap_problem() -> np.ndarray:
    r"""Least squares with :math:`n = 512`, :math:`d = 3`: Gaussian features with scales 1, 0.7, 0.5 (:math:`H_i = x_ix_i^\top`)."""
    x = np.random.default_rng(SEED + 20).standard_normal((GAP_N, 3)) * np.array([1.0, 0.7, 0.5])
    return np.einsum("ni,nj->nij", x, x)


def incoherent_problem() -> np.ndarray:
    r""":math:`n = 8`, :math:`d = 3`, :math:`H_i = u_iu_i^\top` with unit :math:`u_i` spread over the sphere (a whitened random
    frame): every sample has the same spectrum (1, 0, 0) in its own basis, and no direction dominates :math:`H`."""
    u = np.random.default_rng(3).standard_normal((8, 3))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    w, v = np.linalg.eigh(u.T @ u / 8)
    u = u @ v @ np.diag(w**-0.5) @ v.T
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    return np.einsum("ni,nj->nij", u, u)


def _threshold_of(hbar: np.ndarray, noise: np.ndarray) -> float:
    """1 / lambda_max(H (x) H + N, H (x) I + I (x) H): the threshold of a second moment with batch noise N (H full rank)."""
    eye = np.eye(hbar.shape[0])
    q = np.kron(hbar, hbar) + 0.5 * (noise + noise.T)
    return 1.0 / float(linalg.eigh(q, np.kron(hbar, eye) + np.kron(eye, hbar), eigvals_only=True)[-1])


@experiment("sgd_stability.batch_gap")
def batch_gap(budget: Budget) -> dict:
    r"""The relative gap :math:`1 - \hat\eta^*(B)\lambda_{\max}/2` to gradient descent's threshold at :math:`n = 512`.

    The batch noise :math:`E[\delta\otimes\delta]` of each batch size is sampled (:func:`sims.sgd_stability.sampled_batch_noise`,
    16 independent groups); the threshold of the second moment it defines is a generalized eigenvalue; the standard error
    is the jackknife over the groups.
    """
    h = gap_problem()
    out = sim.sampled_batch_noise(jax.random.key(SEED + 21), h, GAP_SIZES, n_batches=budget.pick(quick=1024, full=4096),
                                  n_groups=GAP_GROUPS)
    hbar = out["hbar"]
    lam = float(np.linalg.eigvalsh(hbar)[-1])
    gap, se = [], []
    for groups in out["noise"]:
        full = 1 - _threshold_of(hbar, groups.mean(axis=0)) * lam / 2
        loo = np.array([1 - _threshold_of(hbar, (groups.sum(axis=0) - g) / (len(groups) - 1)) * lam / 2 for g in groups])
        gap.append(full)
        se.append(np.sqrt((len(groups) - 1) / len(groups) * np.sum((loo - loo.mean()) ** 2)))
    return {"batch_sizes": GAP_SIZES, "n": GAP_N, "lam_max": lam, "gap": np.array(gap), "gap_se": np.array(se)}


@experiment("sgd_stability.incoherent_thresholds")
def incoherent_thresholds(budget: Budget) -> dict:
    r"""Measured :math:`\hat\eta^*(B)`, :math:`B = 1..8`, on :func:`incoherent_problem`, located as in :func:`ms_thresholds`
    (same shapes: one compilation) in :math:`\eta \in [0.02, 8]`."""
    h = incoherent_problem()
    sizes = np.arange(1, h.shape[0] + 1)
    found = _moment_crossing(h, sizes, 0.02, 8.0, n_steps=_moment_steps(budget), n_rounds=budget.pick(quick=5, full=7))
    return {"batch_sizes": sizes, **found}
