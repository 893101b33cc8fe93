r"""The simulations of topic ``sign_floor``: every named, cached, budgeted experiment behind the checks of Singh,
Mishra, Raut (2026).

Each runs a JAX simulation from :mod:`sims.sign_floor` or :mod:`sims.sign_floor_regime` (one runs the first-order
SignSGD SDE of :mod:`sims.sde`) and returns its summaries; the claim modules of :mod:`paper_checks.sign_floor` read
them. The experiments sit beside the constants that set their grids and seeds, in the order of the claim modules
that read them (a comment names the module). All float simulations share one ``(T, n_rec)`` per budget and the
integer ladder one ``T`` (:func:`_steps`, :func:`_ladder_steps`), so the topic compiles a handful of kernels.

Longer than a theme module's ~400 lines because it holds all twenty-two experiments of the topic in one module,
with the budgets they share; each experiment is short.
"""
from __future__ import annotations

import jax
import numpy as np

from paper_checks import Budget, experiment
from sims import sign_floor as S
from sims import sign_floor_regime as SR
from theory import sign_floor as T
from theory import sign_floor_regime as TR

H10 = np.linspace(1.0, 10.0, 10)  # curvatures of the d = 10 quadratic for normalized SGD


# ----------------------------------------------------------------------------- budgets shared by the kernels
# One (T, n_rec) per budget for every float simulation and one T for the integer ladder: run_grid
# compiles one kernel per static setup (method, additive noise, law, T, n_rec, chunk), so the
# topic compiles a handful of kernels and reuses each.
def _steps(budget: Budget) -> tuple[int, int]:
    """(T, n_rec) of the float simulations."""
    return budget.pick(quick=(1500, 30), full=(4000, 80))


def _ladder_steps(budget: Budget) -> int:
    return budget.pick(quick=1000, full=8000)


CHUNK_D1 = 1024  # chunk of the d = 1 kernels (cheap steps: large chunks)
CHUNK_D10 = 256  # chunk of the d = 10 kernels


def _stats(samples, diverged=None) -> tuple[np.ndarray, np.ndarray, int]:
    """Mean and SE over chains (last axis, finite runs only) and the number of diverged runs."""
    s = S.summarize(samples, diverged)
    return s.mean, s.se, int(np.sum(s.n_diverged))


# ================================================================== multiplicative noise, exact law (multiplicative.py)
@experiment("sign_floor.ladder_constants")
def ladder_constants(budget: Budget) -> dict:
    """Integer-ladder Cesàro averages of :math:`E x^2/(2\\eta^2)` at offsets :math:`\\eta/2` and uniform, per :math:`\\sigma`."""
    seed = 11
    sigmas = np.array(budget.pick(quick=[0.5, 1.0, 2.0, 4.0], full=[0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0]))
    n_chains = budget.pick(quick=512, full=2048)
    steps, burn = _ladder_steps(budget), budget.pick(quick=200, full=400)
    G = len(sigmas)
    rng = np.random.default_rng(seed)
    theta = np.concatenate([np.full((G, n_chains), 0.5), rng.uniform(1e-9, 1 - 1e-9, (G, n_chains))])
    out = S.ladder(jax.random.key(seed), sigma=np.concatenate([sigmas, sigmas]), theta=theta, T=steps, burn=burn,
                   n_chains=n_chains, chunk_size=CHUNK_D1)
    mean, se, _ = _stats(out["m2"] / 2)  # E f/(a eta^2) = E[(n + theta)^2]/2
    # the noiseless end of the law (sigma = 0, offset eta/2): a deterministic walk, so two chains suffice
    quiet = S.ladder(jax.random.key(seed + 1), sigma=0.0, theta=0.5, T=steps, burn=burn, n_chains=2, chunk_size=CHUNK_D1)
    return {"sigma": sigmas, "c_mid": mean[:G], "c_mid_se": se[:G], "c_unif": mean[G:], "c_unif_se": se[G:],
            "c_mid_noiseless": np.asarray(quiet["m2"]).reshape(-1) / 2,
            "seed": seed, "n_chains": n_chains, "steps": steps}


@experiment("sign_floor.float_constant_grid")
def float_constant_grid(budget: Budget) -> dict:
    """Float signSGD at curvatures :math:`a \\in \\{0.5, 4\\}` and steps :math:`\\eta \\in \\{10^{-3}, 10^{-2}\\}`, offset :math:`\\eta/2`."""
    seed = 12
    A, E = (g.ravel() for g in np.meshgrid([0.5, 4.0], [1e-3, 1e-2], indexing="ij"))
    n_chains, burn = budget.pick(quick=256, full=1024), budget.pick(quick=300, full=500)
    steps, n_rec = _steps(budget)
    # start on the lattice c = eta/2 (x0 = 3.5 eta): the float walk stays eta/2 away from 0, so
    # rounding drift (~1e-16 per step) never breaks the lattice within the run
    res = S.simulate(jax.random.key(seed), eta=E, x0=(3.5 * E)[:, None], h=A[:, None], method="sign", sigma_m=1.0,
                     T=steps, n_rec=n_rec, burn=burn, n_chains=n_chains, chunk_size=CHUNK_D1)
    mean, se, n_div = _stats(res["mean_f"] / (A * E**2)[:, None], res["diverged"])
    return {"a": A, "eta": E, "ratio": mean, "ratio_se": se, "n_diverged": n_div, "seed": seed}


@experiment("sign_floor.period_two")
def period_two(budget: Budget) -> dict:
    """Integer-ladder chains from :math:`n_0 = 0` at offset :math:`\\theta = 0.2`: the last two states and the Cesàro mean."""
    seed, theta, sigma = 13, 0.2, 1.0
    n_chains = budget.pick(quick=8192, full=32768)
    out = S.ladder(jax.random.key(seed), sigma=sigma, theta=theta, T=_ladder_steps(budget), burn=200,
                   n_chains=n_chains, chunk_size=CHUNK_D1)
    return {"n_even": out["n"][0], "n_odd": out["n_prev"][0], "m2": out["m2"][0], "theta": theta, "sigma": sigma,
            "seed": seed}


@experiment("sign_floor.heavy_tail")
def heavy_tail(budget: Budget) -> dict:
    """Float signSGD with Student-t noise (:math:`\\nu = 2`, infinite variance) at two steps, offset :math:`\\eta/2`."""
    seed, nu, sigma = 14, 2, 1.0
    etas = np.array([1e-3, 1e-2])
    n_chains, burn = budget.pick(quick=256, full=1024), budget.pick(quick=300, full=500)
    steps, n_rec = _steps(budget)
    res = S.simulate(jax.random.key(seed), eta=etas, x0=(3.5 * etas)[:, None], h=1.0, method="sign", sigma_m=sigma,
                     T=steps, n_rec=n_rec, burn=burn, n_chains=n_chains, law="student", df=nu, chunk_size=CHUNK_D1)
    mean, se, n_div = _stats(res["mean_f"] / etas[:, None] ** 2, res["diverged"])
    return {"eta": etas, "ratio": mean, "ratio_se": se, "nu": nu, "sigma": sigma, "n_diverged": n_div, "seed": seed}


# ============================================================================== slopes and scale invariance (slopes.py)
@experiment("sign_floor.mult_slopes")
def mult_slopes(budget: Budget) -> dict:
    """Stationary :math:`E f` of signSGD, Signum (:math:`\\beta = 0.9`) and normalized SGD (d = 10) under multiplicative noise, per step."""
    seed = 22
    etas = np.array(budget.pick(quick=[1e-3, 3e-3, 1e-2], full=[1e-3, 2e-3, 5e-3, 1e-2, 2e-2]))
    n_chains, burn = budget.pick(quick=256, full=1024), budget.pick(quick=500, full=1000)
    steps, n_rec = _steps(budget)
    k = len(etas)
    rng = np.random.default_rng(seed)
    # random starts: the lattice offset is uniform, so the sign floor is C_unif a eta^2
    x0 = rng.uniform(0.05, 0.1, (2 * k, n_chains, 1))
    res = S.simulate(jax.random.key(seed), eta=np.tile(etas, 2), x0=x0, h=1.0, method="sign",
                     beta=np.repeat([0.0, 0.9], k), sigma_m=1.0, T=steps, n_rec=n_rec, burn=burn, n_chains=n_chains,
                     chunk_size=CHUNK_D1)
    mean, se, n_div = _stats(res["mean_f"], res["diverged"])
    nres = S.simulate(jax.random.key(seed + 1), eta=etas, x0=np.full(10, 0.05), h=H10, method="normalized", sigma_m=1.0,
                      T=steps, n_rec=n_rec, burn=burn, n_chains=budget.pick(quick=128, full=384), chunk_size=CHUNK_D10)
    nmean, nse, n_div_n = _stats(nres["mean_f"], nres["diverged"])
    return {"eta": etas, "sign_mean": mean[:k], "sign_se": se[:k], "signum_mean": mean[k:], "signum_se": se[k:],
            "normalized_d10_mean": nmean, "normalized_d10_se": nse, "n_diverged": n_div + n_div_n, "seed": seed}


@experiment("sign_floor.normalized_invariance")
def normalized_invariance(budget: Budget) -> dict:
    r"""Normalized SGD, d = 10, multiplicative noise: :math:`E f/(\lambda\eta^2)` on a grid of steps
    :math:`\eta` and curvature scales :math:`\lambda` (:math:`h = \lambda\,\mathrm{linspace}(1, 10)`), and at
    a reference point run with independent keys."""
    seed = 21
    eta_ref, lam_ref = 3e-3, 2.0
    E, L = (g.ravel() for g in np.meshgrid([1e-3, 1e-2], [1.0, 4.0], indexing="ij"))
    E, L = np.append(E, eta_ref), np.append(L, lam_ref)
    n_chains, burn = budget.pick(quick=128, full=512), budget.pick(quick=500, full=1000)
    steps, n_rec = _steps(budget)
    res = S.simulate(jax.random.key(seed), eta=E, x0=np.full(10, 0.05), h=L[:, None] * H10, method="normalized",
                     sigma_m=1.0, T=steps, n_rec=n_rec, burn=burn, n_chains=n_chains, chunk_size=CHUNK_D10)
    mean, se, n_div = _stats(res["mean_f"] / (L * E**2)[:, None], res["diverged"])
    return {"eta": E[:-1], "lam": L[:-1], "ratio": mean[:-1], "ratio_se": se[:-1], "eta_ref": eta_ref,
            "lam_ref": lam_ref, "ref": float(mean[-1]), "ref_se": float(se[-1]), "n_diverged": n_div, "seed": seed}


@experiment("sign_floor.additive_slopes")
def additive_slopes(budget: Budget) -> dict:
    """Stationary :math:`E f` of SGD, signSGD, Signum and normalized SGD (d = 10) under additive noise, per step."""
    seed = 23
    etas = np.array(budget.pick(quick=[0.01, 0.02, 0.04], full=[0.01, 0.02, 0.04, 0.08]))
    n_chains, burn = budget.pick(quick=256, full=512), budget.pick(quick=500, full=1000)
    steps, n_rec = _steps(budget)
    names, methods, betas = ["sgd", "sign", "signum"], ["sgd", "sign", "sign"], [0.0, 0.0, 0.9]
    k = len(etas)
    res = S.simulate(jax.random.key(seed), eta=np.tile(etas, 3), x0=np.array([0.0]), h=1.0,
                     method=[m for m in methods for _ in etas], beta=np.repeat(betas, k), sigma_a=1.0,
                     T=steps, n_rec=n_rec, burn=burn, n_chains=n_chains, chunk_size=CHUNK_D1)
    mean, se, n_div = _stats(res["mean_f"], res["diverged"])
    nres = S.simulate(jax.random.key(seed + 1), eta=etas, x0=np.zeros(10), h=H10, method="normalized", sigma_a=1.0,
                      T=steps, n_rec=n_rec, burn=burn, n_chains=budget.pick(quick=128, full=384), chunk_size=CHUNK_D10)
    nmean, nse, n_div_n = _stats(nres["mean_f"], nres["diverged"])
    out = {"eta": etas, "n_diverged": n_div + n_div_n, "seed": seed,
           "normalized_d10_mean": nmean, "normalized_d10_se": nse}
    for i, name in enumerate(names):
        out[f"{name}_mean"], out[f"{name}_se"] = mean[i * k:(i + 1) * k], se[i * k:(i + 1) * k]
    return out


# ============================================================================ additive noise, exact chain (additive.py)
ADDITIVE_CONFIGS = np.array([(1.0, 0.02, 1.0), (2.0, 0.1, 0.5), (1.0, 0.5, 0.25)])  # (a, eta, sigma): kappa 0.02, 0.4, 2


@experiment("sign_floor.additive_chain")
def additive_chain(budget: Budget) -> dict:
    """Float signSGD with additive Gaussian noise at :math:`\\kappa = a\\eta/\\sigma \\in \\{0.02, 0.4, 2\\}`, offset :math:`\\eta/2`."""
    seed = 31
    n_chains, burn = budget.pick(quick=256, full=1024), budget.pick(quick=500, full=1000)
    steps, n_rec = _steps(budget)
    a, eta, sigma = ADDITIVE_CONFIGS.T
    res = S.simulate(jax.random.key(seed), eta=eta, x0=(eta / 2)[:, None], h=a[:, None], method="sign",
                     sigma_a=sigma, T=steps, n_rec=n_rec, burn=burn, n_chains=n_chains, chunk_size=CHUNK_D1)
    mean, se, n_div = _stats(res["mean_f"], res["diverged"])
    return {"a": a, "eta": eta, "sigma": sigma, "mean": mean, "se": se, "n_diverged": n_div, "seed": seed}


# =============================================================================================== SGD baselines (sgd.py)
SGD_GEOMETRIC = {"a": 1.0, "eta": 0.02, "sigma": 1.0}


@experiment("sign_floor.sgd_geometric")
def sgd_geometric(budget: Budget) -> dict:
    """SGD with multiplicative noise from :math:`x_0 = 1`: :math:`x_k^2` at the recorded times, mean and SE over chains."""
    seed = 41
    n_chains = budget.pick(quick=4096, full=16384)
    steps, n_rec = _steps(budget)
    c = SGD_GEOMETRIC
    res = S.simulate(jax.random.key(seed), eta=c["eta"], x0=np.array([1.0]), h=c["a"], method="sgd",
                     sigma_m=c["sigma"], T=steps, n_rec=n_rec, n_chains=n_chains, chunk_size=CHUNK_D1)
    x2 = 2 * res["curve"][0] / c["a"]  # (n_chains, n_rec): x_k^2 at k = T/n_rec, 2T/n_rec, ..., T
    mean, se, n_div = _stats(x2.T, res["diverged"][0][None, :])
    return {"k": np.arange(1, n_rec + 1) * (steps // n_rec), "x2": mean, "x2_se": se, "n_diverged": n_div,
            "n_chains": n_chains, "seed": seed}


SGD_FLOORS = {"a": 1.0, "eta": np.array([0.05, 0.2, 0.05, 0.2]), "sigma_m": np.array([0.0, 0.0, 1.0, 1.0])}


@experiment("sign_floor.sgd_floors")
def sgd_floors(budget: Budget) -> dict:
    """SGD Cesàro floors under additive (:math:`\\sigma_m = 0`) and mixed (:math:`\\sigma_m = 1`) noise, :math:`\\sigma_a = 1`."""
    seed = 42
    n_chains, burn = budget.pick(quick=512, full=2048), budget.pick(quick=300, full=500)
    steps, n_rec = _steps(budget)
    c = SGD_FLOORS
    res = S.simulate(jax.random.key(seed), eta=c["eta"], x0=np.array([0.0]), h=c["a"], method="sgd",
                     sigma_m=c["sigma_m"], sigma_a=1.0, T=steps, n_rec=n_rec, burn=burn, n_chains=n_chains,
                     chunk_size=CHUNK_D1)
    mean, se, n_div = _stats(res["mean_f"], res["diverged"])
    return {"eta": c["eta"], "sigma_m": c["sigma_m"], "mean": mean, "se": se, "n_diverged": n_div, "seed": seed}


# ============================================================================================== cooldown (schedules.py)
# The cooldown demo: one loss (a x^2/2), one noise level, four (method, noise) pairs, schedules
# from constant (phi = 0) through WSD to linear decay (phi = 1). T is the same at both budgets: the
# SGD-multiplicative second moment is a product of T random factors whose relative variance grows
# like exp(4 T s^2), s = eta a sigma/(1 - eta a); at T = 1500 that is exp(0.6), a sample mean whose
# standard error is itself reliable.
COOL = {"a": 1.0, "eta": 1e-2, "sigma": 1.0, "x0_low": 0.1, "T": 1500, "n_rec": 30}
RUNS = (("sgd", "multiplicative"), ("sgd", "additive"), ("sign", "multiplicative"), ("sign", "additive"))
WSD = 0.2  # the cooldown fraction of the usual WSD schedule
STATIONARY_FROM = 300  # first recorded step of the stationary window of the constant schedules


def _cool_fractions(budget: Budget) -> np.ndarray:
    return np.array(budget.pick(quick=[0.0, 0.2, 0.5, 1.0], full=[0.0, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0]))


@experiment("sign_floor.cooldown")
def cooldown(budget: Budget) -> dict:
    r"""Paired chains of the four (method, noise) pairs along cooldown schedules with fractions :math:`\phi`.

    Chain :math:`j` starts at :math:`x_0 = 0.1 + \eta u_j` (:math:`u_j` uniform, so the signSGD lattice
    offset is uniform) and sees the same noise under every schedule (common random numbers).
    Returns :math:`f` at the recorded times, mean and SE over chains, and the final :math:`f_T` per chain.
    """
    seed = 51
    fractions = _cool_fractions(budget)
    n_chains = budget.pick(quick=1024, full=4096)
    c = COOL
    cfg = [(m, n, f) for m, n in RUNS for f in fractions]
    u = np.random.default_rng(seed).uniform(0.0, 1.0, n_chains)
    x0 = np.broadcast_to((c["x0_low"] + c["eta"] * u)[None, :, None], (len(cfg), n_chains, 1))
    res = S.simulate(jax.random.key(seed), eta=c["eta"], x0=x0, h=c["a"], paired=True, method=[m for m, _, _ in cfg],
                     sigma_m=[c["sigma"] * (n == "multiplicative") for _, n, _ in cfg],
                     sigma_a=[c["sigma"] * (n == "additive") for _, n, _ in cfg], cooldown=[f for _, _, f in cfg],
                     T=c["T"], n_chains=n_chains, n_rec=c["n_rec"], chunk_size=CHUNK_D1)
    shape = (len(RUNS), len(fractions))
    curve = res["curve"]  # (G, n_chains, n_rec)
    mean, se, n_div = _stats(np.moveaxis(curve, 1, -1), res["diverged"][:, None, :])
    times = np.arange(1, c["n_rec"] + 1) * (c["T"] // c["n_rec"])
    # per-chain time average of f over the stationary window of the constant schedules (k >= 300: 4.8
    # relaxation times of E x^2 for the slowest chain, signSGD with additive noise, 1/(4 rho(0) a eta/sigma)
    # = 63 steps; the leftover transient biases the window average by < 1e-3 relative)
    window = times >= STATIONARY_FROM
    constant = np.flatnonzero(np.array([f for _, _, f in cfg]) == 0)
    return {"fractions": fractions, "times": times,
            "curve": mean.reshape(shape + (c["n_rec"],)), "curve_se": se.reshape(shape + (c["n_rec"],)),
            "stationary": curve[constant][:, :, window].mean(axis=-1),
            "final": res["final_f"].reshape(shape + (n_chains,)), "n_diverged": n_div, "seed": seed}


# ============================================================================ the cooldown demo at scale (schedules.py)
# The dissociation at the scale of a long run: f = x^2 (a = 2 in steplab's a x^2/2, so the loss is the same
# function), eta_max = 1e-2, sigma = 1, T = 20000, 5000 paired runs per schedule at the full budget. The
# quick budget cannot afford a simulation of its own (8 schedules x 1024 runs x 1500 steps cost 7 CPU-s, 6 of
# them compiling the float kernels; at T = 20000, 512 runs cost 10 CPU-s and the exact signSGD laws 5 more):
# it re-examines the constant and WSD runs of `cooldown` (a = 1, T = 1500; already simulated for the
# neighbouring claims) with the same checks, which already separate every rival there. SGD with
# multiplicative noise is checked in E log f: its E f is a product of T random factors (relative variance
# ~ exp(4 T s^2) = e^33 at T = 20000), while log f is a sum of T independent terms. At the full budget its runs
# start at x_0 = 1e140 (the chain is scale-free in d = 1, and E log f_T - log f_0 = -816 would underflow
# float64 from x_0 = 0.1); the other pairs start at 0.1 + eta u as in `cooldown`.
SCALE = {"eta": 1e-2, "sigma": 1.0, "x0_low": 0.1, "x0_mult": 1e140}


def _scale_setup(budget: Budget) -> dict:
    """Curvature a, T, n_rec, runs of the at-scale demo (quick: the runs of `cooldown`)."""
    return budget.pick(quick={"a": COOL["a"], "T": COOL["T"], "n_rec": COOL["n_rec"], "n_chains": 1024},
                       full={"a": 2.0, "T": 20000, "n_rec": 20, "n_chains": 5000})


@experiment("sign_floor.cooldown_at_scale")
def cooldown_at_scale(budget: Budget) -> dict:
    r"""Paired runs (common noise) of the four (method, noise) pairs under the constant and the WSD (20 % linear
    cooldown) schedule. Returns per-run :math:`\log f_k - \log f_0` of SGD with multiplicative noise at its recorded
    times, mean and SE of :math:`f` at the recorded times for the others, and the final :math:`f_T` per run.
    Quick: the constant and WSD runs of :func:`cooldown` (SGD-mult recorded at :math:`T` only)."""
    setup = _scale_setup(budget)
    c = SCALE
    steps, n_rec, n_chains = setup["T"], setup["n_rec"], setup["n_chains"]
    if budget.name == "quick":
        r = cooldown(budget)
        j = [int(np.argmin(np.abs(r["fractions"] - phi))) for phi in (0.0, WSD)]
        u = np.random.default_rng(int(r["seed"])).uniform(0.0, 1.0, r["final"].shape[-1])
        log_f0 = np.log(setup["a"] / 2 * (c["x0_low"] + c["eta"] * u) ** 2)
        return {"times": r["times"], "mult_times": np.array([steps]), "T": steps, "n_chains": r["final"].shape[-1],
                "log_curve_mult": (np.log(r["final"][0, j]) - log_f0)[..., None],
                "curve": r["curve"][1:, j], "curve_se": r["curve_se"][1:, j], "final": r["final"][:, j],
                "n_diverged": r["n_diverged"], "seed": r["seed"]}
    seed = 57
    cfg = [(m, n, f) for m, n in RUNS for f in (0.0, WSD)]
    u = np.random.default_rng(seed).uniform(0.0, 1.0, n_chains)
    x0 = np.stack([np.full(n_chains, c["x0_mult"]) if (m, n) == ("sgd", "multiplicative") else c["x0_low"] + c["eta"] * u
                   for m, n, _ in cfg])[:, :, None]
    res = S.simulate(jax.random.key(seed), eta=c["eta"], x0=x0, h=setup["a"], paired=True, method=[m for m, _, _ in cfg],
                     sigma_m=[c["sigma"] * (n == "multiplicative") for _, n, _ in cfg],
                     sigma_a=[c["sigma"] * (n == "additive") for _, n, _ in cfg], cooldown=[f for _, _, f in cfg],
                     T=steps, n_chains=n_chains, n_rec=n_rec, chunk_size=CHUNK_D1)
    curve = res["curve"].reshape(len(RUNS), 2, n_chains, n_rec)
    mean, se, n_div = _stats(np.moveaxis(curve[1:], 2, -1), res["diverged"].reshape(len(RUNS), 2, n_chains)[1:, :, None])
    times = np.arange(1, n_rec + 1) * (steps // n_rec)
    return {"times": times, "mult_times": times, "T": steps, "n_chains": n_chains,
            "log_curve_mult": np.log(curve[0]) - np.log(setup["a"] / 2 * c["x0_mult"] ** 2),  # (schedule, run, time)
            "curve": mean, "curve_se": se,  # (pair 1..3, schedule, time)
            "final": res["final_f"].reshape(len(RUNS), 2, n_chains), "n_diverged": n_div, "seed": seed}


# ============================================================= mixed noise: the slope-2 -> slope-1 crossover (mixed.py)
MIXED = {"a": 1.0, "sigma_m": 1.0, "sigma_a": 0.01}
MIXED_SPAN = np.geomspace(1 / 30, 30, 7)  # steps in units of the predicted crossover eta_x


@experiment("sign_floor.mixed_crossover")
def mixed_crossover(budget: Budget) -> dict:
    r"""Float signSGD under mixed noise :math:`g = a x(1 + \sigma_m\xi_1) + \sigma_a\xi_2` at seven steps from
    :math:`\eta_\times/30` to :math:`30\eta_\times` (offset :math:`\eta/2`): Cesàro floors, mean and SE over chains."""
    seed = 61
    c = MIXED
    etas = T.crossover_eta(c["a"], c["sigma_m"], c["sigma_a"]) * MIXED_SPAN
    n_chains, burn = budget.pick(quick=292, full=1170), budget.pick(quick=500, full=1000)
    steps, n_rec = _steps(budget)
    res = S.simulate(jax.random.key(seed), eta=etas, x0=(etas / 2)[:, None], h=c["a"], method="sign",
                     sigma_m=c["sigma_m"], sigma_a=c["sigma_a"], T=steps, n_rec=n_rec, burn=burn, n_chains=n_chains,
                     chunk_size=CHUNK_D1)
    mean, se, n_div = _stats(res["mean_f"], res["diverged"])
    return {"eta": etas, "mean": mean, "se": se, "n_diverged": n_div, "seed": seed}


# ===================================================================== heavy tails and other noise laws (noise_laws.py)
ANY_LAW = (("student", 1.0, (0.5, 1.0, 2.0)), ("student", 1.5, (0.5, 1.0, 2.0)), ("uniform", None, (1.5, 3.0)))


@experiment("sign_floor.ladder_any_law")
def ladder_any_law(budget: Budget) -> dict:
    r"""Integer-ladder :math:`E f/(a\eta^2)` at offset :math:`\eta/2` under Cauchy, Student-t (:math:`\nu = 1.5`) and
    uniform multiplicative noise: the sign steps are Bernoulli(:math:`F_\xi(-1/\sigma)`) draws, so any law and any
    real :math:`\nu` cost the same."""
    seed = 71
    n_chains = budget.pick(quick=512, full=2048)
    steps, burn = _ladder_steps(budget), budget.pick(quick=200, full=400)
    out = {"law": [], "df": [], "sigma": [], "c_mid": [], "c_mid_se": []}
    for i, (law, df, sigmas) in enumerate(ANY_LAW):
        r = S.ladder(jax.random.key(seed + i), sigma=np.array(sigmas), theta=0.5, T=steps, burn=burn, n_chains=n_chains,
                     law=law, df=df or 0, chunk_size=CHUNK_D1)
        mean, se, _ = _stats(r["m2"] / 2)
        out["law"] += [law] * len(sigmas)
        out["df"] += [df or 0.0] * len(sigmas)
        out["sigma"] += list(sigmas)
        out["c_mid"] += list(mean)
        out["c_mid_se"] += list(se)
    return {k: np.array(v) for k, v in out.items()} | {"seed": seed, "n_chains": n_chains}


ADD_LAWS = {"uniform": (None, np.array([0.02, 0.05])), "student": (1, np.array([0.02, 0.05]))}  # sigma = B = 1


@experiment("sign_floor.additive_laws")
def additive_laws(budget: Budget) -> dict:
    """Float signSGD with additive uniform (on [-1, 1]) and Cauchy noise, sigma = 1, offset eta/2, at two steps."""
    seed = 72
    n_chains, burn = budget.pick(quick=512, full=2048), budget.pick(quick=700, full=1000)
    steps, n_rec = _steps(budget)
    out = {}
    for i, (law, (df, etas)) in enumerate(ADD_LAWS.items()):
        res = S.simulate(jax.random.key(seed + i), eta=etas, x0=(etas / 2)[:, None], h=1.0, method="sign", sigma_a=1.0,
                         T=steps, n_rec=n_rec, burn=burn, n_chains=n_chains, law=law, df=df or 0, chunk_size=CHUNK_D1)
        mean, se, n_div = _stats(res["mean_f"], res["diverged"])
        out |= {f"{law}_eta": etas, f"{law}_mean": mean, f"{law}_se": se, f"{law}_n_diverged": n_div}
    return out | {"seed": seed}


@experiment("sign_floor.heavy_normalized_lion")
def heavy_normalized_lion(budget: Budget) -> dict:
    r"""Stationary :math:`E f` per step of normalized SGD (d = 10) under Cauchy multiplicative noise, and of Lion
    (:math:`\beta_1 = 0.9`, :math:`\beta_2 = 0.99`, d = 1) under Gaussian multiplicative noise."""
    seed = 73
    etas = np.array(budget.pick(quick=[1e-3, 3e-3, 1e-2], full=[1e-3, 2e-3, 5e-3, 1e-2, 2e-2]))
    burn = budget.pick(quick=500, full=1000)
    steps, n_rec = _steps(budget)
    # starts proportional to eta: by scale invariance the whole path of x/eta, transient included, is then eta-free
    # (Cauchy noise makes the drift toward 0 weak, and a fixed start would leave small steps far from stationarity)
    nres = S.simulate(jax.random.key(seed), eta=etas, x0=5 * etas[:, None] * np.ones(10), h=H10, method="normalized",
                      sigma_m=1.0,
                      T=steps, n_rec=n_rec, burn=burn, n_chains=budget.pick(quick=128, full=384), law="student", df=1,
                      chunk_size=CHUNK_D10)
    # Cauchy noise gives the per-chain averages a heavy right tail: average their logs (the geometric mean). Scale
    # invariance makes the whole law of mean_f/eta^2 eta-free, so E log mean_f = 2 log eta + const exactly.
    nlog, nlog_se, n1 = _stats(np.log(nres["mean_f"]), nres["diverged"])
    nmean, nse = np.exp(nlog), np.exp(nlog) * nlog_se  # delta method for the geometric mean
    n_chains = budget.pick(quick=256, full=1024)
    x0 = np.random.default_rng(seed).uniform(0.05, 0.1, (len(etas), n_chains, 1))
    lres = S.simulate(jax.random.key(seed + 1), eta=etas, x0=x0, h=1.0, method="lion", beta=0.9, beta2=0.99, sigma_m=1.0,
                      T=steps, n_rec=n_rec, burn=burn, n_chains=n_chains, chunk_size=CHUNK_D1)
    lmean, lse, n2 = _stats(lres["mean_f"], lres["diverged"])
    return {"eta": etas, "normalized_cauchy_mean": nmean, "normalized_cauchy_se": nse, "lion_mean": lmean,
            "lion_se": lse, "n_diverged": n1 + n2, "seed": seed}


# =================================================================== the first-order SignSGD SDE's floor (sde_floor.py)
SDE_SIGMAS = np.array([0.5, 1.0, 2.0])  # a subset of the ladder experiment's noise levels


@experiment("sign_floor.sign_sde_floor", uses=("sde",))
def sign_sde_floor(budget: Budget) -> dict:
    r"""Euler--Maruyama paths of the first-order SignSGD SDE (:func:`sims.sde.sde_sweep`, ``dsignsgd``, quadratic
    :math:`x^2/2`, multiplicative noise :math:`s = \sigma|f'(x)|`, :math:`\eta = 1`): :math:`f` recorded once per
    unit time, averaged over records after the burn-in and over paths. The step ``dt`` is 1/80 of the Laplace
    scale :math:`b = (1 - e^2)/(2e)` of the law it should reach, and a path runs for about 100 relaxation times
    :math:`b/e`."""
    from sims import sde as SDE  # the sde topic's public simulator (kept out of this module's import time)

    seed = 81
    n_paths = budget.pick(quick=256, full=1024)
    e = np.array([T.contraction(s) for s in SDE_SIGMAS])
    b = (1 - e**2) / (2 * e)
    n_steps, n_record, burn = 8000, 100, 20  # 100 relaxation times b/e, one record per ~1.3 of them, 20 burnt
    dt = b / 80
    G = len(SDE_SIGMAS)
    keys = jax.random.split(jax.random.key(seed), G * n_paths)
    grid = {"key": keys, "x0": np.zeros((G * n_paths, 1)), "eta": np.ones(G * n_paths), "dt": np.repeat(dt, n_paths),
            "sigma1": np.repeat(SDE_SIGMAS, n_paths)}
    out = SDE.sde_sweep("dsignsgd", grid, problem="quadratic", kind="first_order", n_steps=n_steps, n_record=n_record)
    loss = np.asarray(out["loss"]).reshape(G, n_paths, n_record)[:, :, burn:].mean(axis=-1)  # per-path time average
    mean, se, n_div = _stats(loss, np.asarray(out["diverged"]).reshape(G, n_paths))
    return {"sigma": SDE_SIGMAS, "c_sde_sim": mean, "c_sde_se": se, "n_diverged": n_div, "seed": seed,
            "dt_over_scale": 1 / 80}


# =========================================================== the noise-regime diagnostic and the local form (regime.py)
REGIME_ROWS = ("minibatch", "multiplicative", "gaussian")  # the three gradient oracles on digits
ETA_SGD = np.array([0.0125, 0.025, 0.05, 0.1])  # SGD floors near Θ*: relaxation 1/(2ηh_min) ≤ 400 steps
ETA_SIGN = np.array([0.0025, 0.005, 0.01])  # signSGD floors near Θ*
ETA_SGD_ORIGIN = np.array([0.5, 1.0, 1.5])  # SGD from Θ = 0 under multiplicative noise: ηh_max(1+σ²) < 2


@experiment("sign_floor.regime_diagnostic")
def regime_diagnostic(budget: Budget) -> dict:
    r"""The affine-variance diagnostic on digits: Monte Carlo :math:`E\|g - \nabla f\|^2` of each oracle at 13
    points of a full-batch GD trajectory from :math:`\Theta = 0` (steps 0 to 300, :math:`\|\nabla f\|^2` from
    0.66 down to ~1e-32), and the weighted affine fit :math:`\sigma_0^2 + \sigma_1^2\|\nabla f\|^2` with its SEs."""
    seed = 91
    steps = np.concatenate([[0], np.unique(np.geomspace(1, 300, 12).astype(np.int64))])
    thetas = SR.gd_checkpoints(steps, eta=1.0)
    out = {"steps": steps, "seed": seed}
    for i, oracle in enumerate(REGIME_ROWS):
        v = SR.noise_variance(jax.random.key(seed + i), thetas, oracle=oracle, batch=8, sigma=1.0,
                              n_draws=budget.pick(quick=128, full=1024))
        fit = TR.affine_variance_fit(v["grad_sq"], v["variance"], v["variance_se"])
        out |= {f"{oracle}_{k}": v[k] for k in v} | {f"{oracle}_{k}": fit[k] for k in
                                                    ("sigma0_sq", "sigma0_sq_se", "sigma1_sq", "sigma1_sq_se", "chi2")}
    P = SR.digits_problem()
    out["trace_s_over_b"] = float(np.trace(P["S"]) / 8)  # the exact additive part at the minimizer
    return out


@experiment("sign_floor.regime_floors")
def regime_floors(budget: Budget) -> dict:
    r"""SGD and signSGD on digits at constant steps: minibatch noise (SGD and signSGD from :math:`\Theta^*`),
    injected multiplicative noise (signSGD from :math:`\Theta^*`, SGD from :math:`\Theta = 0`) and Gaussian noise
    with the minibatch covariance (signSGD from :math:`\Theta^*`). Per configuration: the mean over chains (and SE)
    of the time-averaged :math:`f - f^*` and :math:`\|\nabla f\|^2`, and the largest final :math:`|f - f^*|`."""
    seed = 92
    n_chains = budget.pick(quick=8, full=32)
    k1, k2 = jax.random.split(jax.random.key(seed))
    T_mb, T_full = budget.pick(quick=2000, full=8000), budget.pick(quick=500, full=2000)
    mb = SR.digits_floors(k1, np.concatenate([ETA_SGD, ETA_SIGN]), ["sgd"] * len(ETA_SGD) + ["sign"] * len(ETA_SIGN),
                          oracle="minibatch", T=T_mb, n_rec=20, burn=T_mb // 4, n_chains=n_chains)
    k = len(ETA_SIGN)
    full = SR.digits_floors(k2, np.concatenate([ETA_SIGN, ETA_SIGN, ETA_SGD_ORIGIN]),
                            ["sign"] * (2 * k) + ["sgd"] * len(ETA_SGD_ORIGIN),
                            oracle=["multiplicative"] * k + ["gaussian"] * k + ["multiplicative"] * len(ETA_SGD_ORIGIN),
                            start=["minimizer"] * (2 * k) + ["origin"] * len(ETA_SGD_ORIGIN),
                            T=T_full, n_rec=20, burn=T_full // 4, n_chains=n_chains)
    rows = {"sgd_minibatch": (mb, slice(0, len(ETA_SGD))), "sign_minibatch": (mb, slice(len(ETA_SGD), None)),
            "sign_multiplicative": (full, slice(0, k)), "sign_gaussian": (full, slice(k, 2 * k)),
            "sgd_multiplicative": (full, slice(2 * k, None))}
    out = {"seed": seed, "n_chains": n_chains, "eta_sgd": ETA_SGD, "eta_sign": ETA_SIGN, "eta_sgd_origin": ETA_SGD_ORIGIN}
    for name, (res, sl) in rows.items():
        mean, se, n_div = _stats(res["mean_excess"][sl], res["diverged"][sl])
        g, g_se, _ = _stats(res["mean_grad_sq"][sl], res["diverged"][sl])
        out |= {f"{name}_mean": mean, f"{name}_se": se, f"{name}_grad_sq": g, f"{name}_n_diverged": n_div,
                f"{name}_final": np.max(np.abs(res["final_excess"][sl]), axis=1), f"{name}_curve": res["curve"][sl].mean(1)}
    return out


WELL_SMALL = {"eta": 0.02, "sigma": (1.0, 2.0)}  # the local form's regime: relative corrections O(eta^2) ~ 1e-3
WELL_LARGE = {"eta": 0.5, "sigma": 1.0}  # the ladder sum departs from the local form by 10-50 %


@experiment("sign_floor.local_form_wells")
def local_form_wells(budget: Budget) -> dict:
    r"""Float signSGD on the three wells (quartic, exp, logcosh; :mod:`theory.sign_floor_regime`) with
    multiplicative Gaussian noise, offset :math:`\eta/2`: Cesàro :math:`E f - f^*` at :math:`\eta = 0.02`
    (:math:`\sigma = 1, 2`) and at :math:`\eta = 0.5` (:math:`\sigma = 1`)."""
    seed = 93
    names = list(TR.WELLS) * 3
    eta = np.array([WELL_SMALL["eta"]] * 6 + [WELL_LARGE["eta"]] * 3)
    sigma = np.array([s for s in WELL_SMALL["sigma"] for _ in TR.WELLS] + [WELL_LARGE["sigma"]] * 3)
    n_chains = budget.pick(quick=256, full=1024)
    r = SR.well_chains(jax.random.key(seed), names, eta, sigma, T=budget.pick(quick=2000, full=8000), burn=200,
                       n_chains=n_chains, chunk_size=len(names) * n_chains)
    mean, se, n_div = _stats(r["mean_f"], r["diverged"])
    return {"name": np.array(names), "eta": eta, "sigma": sigma, "mean": mean, "se": se, "n_diverged": n_div,
            "seed": seed}


@experiment("sign_floor.sign_bias")
def sign_bias(budget: Budget) -> dict:
    r"""Monte Carlo mean sign per coordinate at :math:`\Theta^*` of the digits gradient oracles: minibatches of 1 and
    8 samples, and Gaussian noise with the covariance of the 8-sample minibatch."""
    seed = 94
    n_draws = budget.pick(quick=4096, full=32768)
    out = {"seed": seed, "n_draws": n_draws}
    for i, (name, oracle, batch) in enumerate((("b1", "minibatch", 1), ("b8", "minibatch", 8),
                                               ("gauss8", "gaussian", 8))):
        r = SR.mean_sign(jax.random.key(seed + i), oracle=oracle, batch=batch, n_draws=n_draws)
        out |= {f"{name}_mean": r["mean"], f"{name}_se": r["se"]}
    return out


# =============================================================================== Signum: the floor constant (signum.py)
# (law, sigma, beta, a, eta, offset): a and eta vary across rows (the constant must not depend on them);
# "mid" starts at x0 = 3.5 eta (offset eta/2), "uniform" at random x0 (offset uniform on (0, eta))
SIGNUM_QUICK = (("gaussian", 0.5, 0.5, 1.0, 1e-2, "mid"), ("gaussian", 1.0, 0.5, 2.0, 1e-3, "mid"),
                ("gaussian", 0.5, 0.9, 0.5, 1e-2, "mid"), ("uniform", 1.5, 0.5, 1.0, 1e-2, "mid"))
SIGNUM_FULL = SIGNUM_QUICK + (("gaussian", 1.0, 0.9, 1.0, 1e-2, "mid"), ("uniform", 1.5, 0.9, 4.0, 1e-3, "mid"),
                              ("gaussian", 1.0, 0.75, 1.0, 1e-2, "mid"), ("gaussian", 1.0, 0.5, 1.0, 1e-2, "uniform"))


def _signum_configs(budget: Budget) -> tuple:
    return budget.pick(quick=SIGNUM_QUICK, full=SIGNUM_FULL)


@experiment("sign_floor.signum_constants")
def signum_constants(budget: Budget) -> dict:
    r"""Float Signum chains (:math:`m_0 = 0`, buffer :math:`m \leftarrow \beta m + (1-\beta)g`) at the rows of
    :data:`SIGNUM_QUICK` / :data:`SIGNUM_FULL`: per-chain Cesàro averages of :math:`f/(a\eta^2)` after the burn-in."""
    seed = 31
    rows = _signum_configs(budget)
    n_chains, burn = budget.pick(quick=512, full=2048), budget.pick(quick=500, full=1000)
    steps, n_rec = _steps(budget)
    rng = np.random.default_rng(seed)
    G = len(rows)
    ratio, ratio_se, n_div = np.empty(G), np.empty(G), 0
    for i, law in enumerate(sorted({r[0] for r in rows})):
        idx = [g for g, r in enumerate(rows) if r[0] == law]
        sigma, beta, a, eta = (np.array([rows[g][j] for g in idx]) for j in (1, 2, 3, 4))
        # offset eta/2: x0 = 3.5 eta stays eta/2 away from 0 (no float drift onto the minimizer); uniform: random x0
        x0 = np.stack([np.full((n_chains, 1), 3.5 * rows[g][4]) if rows[g][5] == "mid"
                       else rng.uniform(3 * rows[g][4], 4 * rows[g][4], (n_chains, 1)) for g in idx])
        res = S.simulate(jax.random.key(seed + i), eta=eta, x0=x0, h=a[:, None], method="sign", beta=beta,
                         sigma_m=sigma, T=steps, n_rec=n_rec, burn=burn, n_chains=n_chains, law=law,
                         chunk_size=CHUNK_D1)
        mean, se, nd = _stats(res["mean_f"] / (a * eta**2)[:, None], res["diverged"])
        ratio[idx], ratio_se[idx], n_div = mean, se, n_div + nd
    return {"ratio": ratio, "ratio_se": ratio_se, "n_diverged": n_div, "n_chains": n_chains, "steps": steps,
            "burn": burn, "seed": seed}
