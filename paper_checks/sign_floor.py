r"""Singh, Mishra, Raut (2026): noise structure and normalization decide whether cooldown helps.

Only the abstract of arXiv 2607.12360 was available (note: ``shared/papers/signsgd_noise_floor.md``).
Every claim is therefore labelled ``derived``: even where a statement restates an abstract sentence
(geometric contraction of SGD, the η² floor of sign/normalized methods, additive noise reinstating
a floor, scale invariance in d > 1, robustness to heavy tails, the cooldown dissociation), the
formulas, constants and rates that make it checkable were worked out for steplab, not read in the
paper.

Each check pairs a closed form from :mod:`theory.sign_floor` with a JAX simulation from
:mod:`sims.sign_floor` (or, for the additive expansion, with the exact birth--death chain).
Monte Carlo tolerances are multiples of the standard error across independent chains, with
the seed fixed and recorded.
"""
from __future__ import annotations

import functools

import jax
import numpy as np
import sympy as sp

from paper_checks._registry import Paper, Result, claim
from sims import sign_floor as S
from theory import sign_floor as T

PAPER = Paper(
    key="singh2026",
    title=("Same Loss, Same Noise, Opposite Schedules: Noise Structure and Optimizer Normalization "
           "Jointly Determine Whether Learning-Rate Cooldown Helps"),
    authors="S. Singh, A. Mishra, S. Raut", year=2026, arxiv="2607.12360",
)

Z = 4.0  # |z| < 4: a fixed seed and a handful of comparisons per claim; a 4-SE miss is a real disagreement


def _q(budget: str, quick, full):
    return quick if budget == "quick" else full


# One step count per budget for every float simulation (and one for the integer ladder), so the
# whole topic compiles a handful of kernels: run_grid reuses a kernel whose shapes match.
def _steps(budget: str) -> tuple[int, int]:
    """(T, n_rec) of the float simulations."""
    return _q(budget, (1500, 30), (4000, 80))


def _ladder_steps(budget: str) -> int:
    return _q(budget, 1000, 8000)


def _small_chunk(budget: str) -> int:
    """Fixed chunk of the expensive kernels (d = 10, Student-t): less padding at the quick budget."""
    return _q(budget, 128, 256)


def _slope(log_eta: np.ndarray, log_f: np.ndarray, se_log_f: np.ndarray) -> tuple[float, float]:
    """Weighted least-squares slope of log f against log eta and its standard error."""
    w = 1 / se_log_f**2
    xm = np.sum(w * log_eta) / np.sum(w)
    sxx = np.sum(w * (log_eta - xm) ** 2)
    slope = np.sum(w * (log_eta - xm) * log_f) / sxx
    return float(slope), float(1 / np.sqrt(sxx))


# ----------------------------------------------------------------------------- multiplicative, exact law
@claim("singh2026.sign_mult_floor_constant", paper=PAPER, provenance="derived", kind="statistical",
       statement=("signSGD on a x^2/2 with multiplicative Gaussian noise settles on E f = C a eta^2 with "
                  "C_mid = 1/(4 e^2) - 1/8 (offset eta/2) and C_unif = 1/(4 e^2) - 1/12 (uniform offset), "
                  "e = erf(1/(sqrt(2) sigma)); integer-ladder Cesàro averages agree for every sigma."),
       latex=r"C_{\rm mid} = \tfrac{1}{4e_\sigma^2} - \tfrac18,\ C_{\rm unif} = \tfrac{1}{4e_\sigma^2} - \tfrac1{12}")
def check_constant(budget: str) -> Result:
    seed = 11
    sigmas = np.array(_q(budget, [0.5, 1.0, 2.0], [0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 2.5, 3.0]))
    n_chains, burn = _q(budget, (160, 200), (512, 400))
    steps = _ladder_steps(budget)
    G = len(sigmas)
    rng = np.random.default_rng(seed)
    theta = np.concatenate([np.full((G, n_chains), 0.5), rng.uniform(1e-9, 1 - 1e-9, (G, n_chains))])
    out = S.ladder(jax.random.key(seed), sigma=np.concatenate([sigmas, sigmas]), theta=theta, T=steps,
                   burn=burn, n_chains=n_chains)
    mean, se = S.summarize(out["m2"] / 2)  # E f/(a eta^2) = E[(n+theta)^2]/2
    pred = np.array([T.c_mid(s) for s in sigmas] + [T.c_unif(s) for s in sigmas])
    z = (mean - pred) / se
    i1 = int(np.argmin(np.abs(sigmas - 1.0)))
    return Result(
        predicted=float(pred[i1]), measured=float(mean[i1]), tolerance=f"|z| < {Z:g} for all {2 * G}",
        passed=bool(np.all(np.abs(z) < Z)), seed=seed,
        detail=(f"C_mid(1) = {pred[i1]:.4f} vs ladder {mean[i1]:.4f} ± {se[i1]:.4f}; C_unif(1) = "
                f"{pred[G + i1]:.4f} vs {mean[G + i1]:.4f}; max |z| = {np.max(np.abs(z)):.2f} over "
                f"sigma = {sigmas.tolist()} ({n_chains} chains x {steps} steps)"),
        arrays={"sigma": sigmas, "c_mid_sim": mean[:G], "c_mid_se": se[:G], "c_unif_sim": mean[G:],
                "c_unif_se": se[G:], "c_mid_pred": pred[:G], "c_unif_pred": pred[G:]},
    )


@claim("singh2026.sign_mult_constant_free_of_a_eta", paper=PAPER, provenance="derived", kind="statistical",
       statement=("The floor constant E f/(a eta^2) does not depend on the curvature a or the step eta: "
                  "float simulations at a in {0.5, 4}, eta in {1e-3, 1e-2} all match C_mid(1)."),
       latex=r"E f/(a\eta^2) = C_{\rm mid}(\sigma)\ \ \forall a, \eta")
def check_free_of_a_eta(budget: str) -> Result:
    seed = 12
    a_grid, etas = np.array([0.5, 4.0]), np.array([1e-3, 1e-2])
    n_chains, burn = _q(budget, (256, 100), (512, 200))
    steps, n_rec = _steps(budget)
    A, E = np.meshgrid(a_grid, etas, indexing="ij")
    A, E = A.ravel(), E.ravel()
    # start on the lattice c = eta/2 (x0 = 3.5 eta): the float walk stays eta/2 away from 0, so
    # rounding drift (~1e-16 per step) never breaks the lattice within the run
    res = S.simulate(jax.random.key(seed), eta=E, x0=(3.5 * E)[:, None], h=A[:, None], method="sign",
                     sigma_m=1.0, T=steps, n_rec=n_rec, burn=burn, n_chains=n_chains)
    mean, se = S.summarize(res["mean_f"] / (A * E**2)[:, None])
    pred = T.c_mid(1.0)
    z = (mean - pred) / se
    return Result(
        predicted=pred, measured=float(np.mean(mean)), tolerance=f"|z| < {Z:g} for all 4",
        passed=bool(np.all(np.abs(z) < Z)), seed=seed,
        detail=(f"E f/(a eta^2) at (a, eta) = {list(zip(A.tolist(), E.tolist()))}: "
                + ", ".join(f"{m:.4f}±{s:.4f}" for m, s in zip(mean, se)) + f" vs C_mid(1) = {pred:.4f}"),
        arrays={"a": A, "eta": E, "ratio": mean, "ratio_se": se},
    )


@claim("singh2026.sign_mult_period_two", paper=PAPER, provenance="derived", kind="statistical",
       statement=("The signSGD chain has period 2: from n0 = 0 (offset theta = 0.2) the law at even times "
                  "is 2 pi on even n and at odd times 2 pi on odd n, with different E x^2; the Cesàro "
                  "average converges to pi."),
       latex=r"E_{\rm even}[x^2] \ne E_{\rm odd}[x^2],\quad \tfrac12(E_{\rm even}+E_{\rm odd}) = E_\pi[x^2]")
def check_period_two(budget: str) -> Result:
    seed, theta, sigma = 13, 0.2, 1.0
    n_chains, burn = _q(budget, (4096, 100), (16384, 200))
    steps = _ladder_steps(budget)
    out = S.ladder(jax.random.key(seed), sigma=sigma, theta=theta, T=steps, burn=burn, n_chains=n_chains)
    p = T.away_probability(sigma)
    even_pred, odd_pred = T.parity_second_moments(p, 1.0, theta)
    pi_pred = T.second_moment(p, 1.0, theta)
    y_even = (out["n"][0] + theta) ** 2  # T even: n_T is in the class of n0
    y_odd = (out["n_prev"][0] + theta) ** 2
    (me, se_e), (mo, se_o) = S.summarize(y_even), S.summarize(y_odd)
    mc, se_c = S.summarize(out["m2"][0])
    z = np.array([(me - even_pred) / se_e, (mo - odd_pred) / se_o, (mc - pi_pred) / se_c])
    parity_ok = bool(np.all(out["n"][0] % 2 == 0) and np.all(out["n_prev"][0] % 2 == 1))
    split_z = (mo - me) / np.hypot(se_e, se_o)  # the split itself must be resolved, not just consistent
    return Result(
        predicted=odd_pred - even_pred, measured=float(mo - me),
        tolerance=f"|z| < {Z:g} (3 moments); split > {Z:g} SE",
        passed=bool(np.all(np.abs(z) < Z) and parity_ok and split_z > Z), seed=seed,
        detail=(f"E x^2/eta^2 even {me:.4f}±{se_e:.4f} (pred {even_pred:.4f}), odd {mo:.4f}±{se_o:.4f} "
                f"(pred {odd_pred:.4f}), split {split_z:.1f} SE; Cesàro {mc:.4f}±{se_c:.4f} (pi {pi_pred:.4f}); parity classes exact: {parity_ok}"),
        arrays={"n_even": out["n"][0].astype(np.int32), "n_odd": out["n_prev"][0].astype(np.int32),
                "theta": np.array(theta), "p": np.array(p)},
    )


@claim("singh2026.sign_heavy_tail_floor", paper=PAPER, provenance="derived", kind="statistical",
       statement=("With Student-t noise (nu = 2, infinite variance) signSGD keeps the eta^2 floor, with the "
                  "constant given by the same law at p = F_t(-1/sigma)."),
       latex=r"E f = a\eta^2\Big(\tfrac{1}{4(1-2p)^2} - \tfrac18\Big),\ p = F_{t_2}(-1/\sigma)")
def check_heavy_tail(budget: str) -> Result:
    seed, nu, sigma = 14, 2, 1.0
    etas = np.array([1e-3, 1e-2])
    n_chains, burn = _q(budget, (64, 100), (1024, 200))
    steps, n_rec = _steps(budget)
    res = S.simulate(jax.random.key(seed), eta=etas, x0=(3.5 * etas)[:, None], h=1.0, method="sign",
                     sigma_m=sigma, T=steps, n_rec=n_rec, burn=burn, n_chains=n_chains, law="student", df=nu,
                     chunk_size=_small_chunk(budget))
    mean, se = S.summarize(res["mean_f"] / etas[:, None] ** 2)
    pred = T.c_mid(sigma, law="student", df=nu)
    gauss = T.c_mid(sigma)
    z = (mean - pred) / se
    return Result(
        predicted=pred, measured=float(mean[0]), tolerance=f"|z| < {Z:g} at both eta",
        passed=bool(np.all(np.abs(z) < Z)), seed=seed,
        detail=(f"t_2 noise, p = {T.away_probability(sigma, 'student', nu):.4f}: E f/eta^2 = "
                + ", ".join(f"{m:.4f}±{s:.4f}" for m, s in zip(mean, se))
                + f" at eta = {etas.tolist()} vs {pred:.4f} (Gaussian law would give {gauss:.4f})"),
        arrays={"eta": etas, "ratio": mean, "ratio_se": se},
    )


@claim("singh2026.c_sigma_limits", paper=PAPER, provenance="derived", kind="exact",
       statement=("Limits of the floor constant: C_mid -> 1/8 and C_unif -> 1/6 as sigma -> 0; "
                  "C = pi sigma^2/8 + pi/24 - 1/8 (mid) + O(sigma^-2) as sigma -> infinity."),
       latex=r"C_{\rm mid}\to\tfrac18,\ C_{\rm mid} = \tfrac{\pi\sigma^2}{8} + \tfrac{\pi}{24} - \tfrac18 + O(\sigma^{-2})")
def check_limits(budget: str) -> Result:
    lim = T.c_limits()
    s = sp.Symbol("sigma", positive=True)
    big = 200.0
    # sympy series (symbolic) against scipy's erf in the closed form: independent routes
    asym = float(lim["mid_inf"].subs(s, big))
    num = T.c_mid(big)
    small = T.c_mid(0.05), T.c_unif(0.05)
    rel = abs(num - asym) / num
    # remainder O(sigma^-2) relative to a sigma^2 leading term: ~sigma^-4 ~ 6e-10; float64 cancellation
    # in 1 - 2p at sigma = 200 costs ~1e-16/e^2 ~ 1e-11 relative, so 1e-8 is a safe bound
    tol = 1e-8
    ok = (rel < tol and abs(small[0] - float(lim["mid0"])) < 1e-12 and abs(small[1] - float(lim["unif0"])) < 1e-12)
    return Result(
        predicted=asym, measured=num, tolerance=tol, passed=ok,
        detail=(f"sympy: mid0 = {lim['mid0']}, unif0 = {lim['unif0']}, mid_inf = {lim['mid_inf']}; numeric "
                f"C_mid(0.05) = {small[0]:.12f}, C_unif(0.05) = {small[1]:.12f}; at sigma = {big:g} relative "
                f"gap {rel:.1e}"),
    )


# ----------------------------------------------------------------------------- slopes
@functools.lru_cache(maxsize=2)
def _normalized_d10(budget: str) -> dict:
    seed = 21
    etas = np.array(_q(budget, [1e-3, 1e-2], [1e-3, 3e-3, 1e-2]))
    n_chains, burn = _q(budget, (64, 500), (384, 1000))
    steps, n_rec = _steps(budget)
    h = np.linspace(1.0, 10.0, 10)
    res = S.simulate(jax.random.key(seed), eta=etas, x0=np.full(10, 0.05), h=h, method="normalized",
                     sigma_m=1.0, T=steps, n_rec=n_rec, burn=burn, n_chains=n_chains, chunk_size=_small_chunk(budget))
    mean, se = S.summarize(res["mean_f"])
    return {"eta": etas, "mean": mean, "se": se, "seed": seed, "n_chains": n_chains}


@claim("singh2026.mult_floor_slope_two", paper=PAPER, provenance="derived", kind="rate",
       statement=("Under multiplicative noise the floors of signSGD, Signum (beta = 0.9) and normalized SGD "
                  "(d = 10) scale as eta^2: log-log slope 2."),
       latex=r"\frac{d\log E f}{d\log\eta} = 2")
def check_mult_slope(budget: str) -> Result:
    seed = 22
    etas = np.array(_q(budget, [1e-3, 1e-2], [1e-3, 2e-3, 5e-3, 1e-2, 2e-2]))
    n_chains, burn = _q(budget, (256, 500), (384, 1000))
    steps, n_rec = _steps(budget)
    rng = np.random.default_rng(seed)
    G = 2 * len(etas)
    # random starts: the lattice offset is uniform, so the sign floor is C_unif a eta^2
    x0 = rng.uniform(0.05, 0.1, (G, n_chains, 1))
    res = S.simulate(jax.random.key(seed), eta=np.tile(etas, 2), x0=x0, h=1.0, method="sign",
                     beta=np.repeat([0.0, 0.9], len(etas)), sigma_m=1.0, T=steps, n_rec=n_rec, burn=burn,
                     n_chains=n_chains)
    mean, se = S.summarize(res["mean_f"])
    norm = _normalized_d10(budget)
    series = {"sign": (etas, mean[:len(etas)], se[:len(etas)]), "signum": (etas, mean[len(etas):], se[len(etas):]),
              "normalized_d10": (norm["eta"], norm["mean"], norm["se"])}
    slopes, ok = {}, True
    for name, (e, m, s) in series.items():
        b, sb = _slope(np.log(e), np.log(m), s / m)
        slopes[name] = (b, sb)
        ok &= abs(b - 2) < Z * sb  # scale invariance makes 2 exact at stationarity; only MC error remains
    c_pred = T.c_unif(1.0)
    arrays = {f"{k}_{q}": v for k, (e, m, s) in series.items() for q, v in (("eta", e), ("mean", m), ("se", s))}
    arrays["sign_pred"] = c_pred * etas**2
    return Result(
        predicted=2.0, measured=slopes["sign"][0], tolerance=f"|slope - 2| < {Z:g} SE per method",
        passed=bool(ok), seed=seed,
        detail=("slopes " + ", ".join(f"{k} {b:.3f}±{sb:.3f}" for k, (b, sb) in slopes.items())
                + f"; sign E f/eta^2 = {np.mean(mean[:len(etas)] / etas**2):.4f} vs C_unif = {c_pred:.4f} (a = 1)"),
        arrays=arrays,
    )


@claim("singh2026.normalized_scale_invariance", paper=PAPER, provenance="derived", kind="statistical",
       statement=("Normalized SGD in d = 10 (h = linspace(1, 10), multiplicative noise sigma = 1) is scale "
                  "invariant: E f/eta^2 is the same at every eta (the note reports about 3.68)."),
       latex=r"E f/\eta^2 = \text{const}")
def check_normalized(budget: str) -> Result:
    r = _normalized_d10(budget)
    ratio, se = r["mean"] / r["eta"] ** 2, r["se"] / r["eta"] ** 2
    w = 1 / se**2
    pooled = float(np.sum(w * ratio) / np.sum(w))
    z = (ratio - pooled) / se  # deviation of each eta from the pooled constant
    return Result(
        predicted=pooled, measured=float(ratio[0]), tolerance=f"|z| < {Z:g} around the pooled value",
        passed=bool(np.all(np.abs(z) < Z)), seed=r["seed"],
        detail=("E f/eta^2 = " + ", ".join(f"{m:.3f}±{s:.3f}" for m, s in zip(ratio, se))
                + f" at eta = {r['eta'].tolist()}; pooled {pooled:.3f} (note: ~3.68)"),
        arrays={"eta": r["eta"], "ratio": ratio, "ratio_se": se},
    )


@claim("singh2026.additive_floor_slope_one", paper=PAPER, provenance="derived", kind="rate",
       statement=("Any additive noise reinstates a floor of order eta for every method: SGD, signSGD, Signum "
                  "and normalized SGD (d = 10) all have log-log slope 1 (SGD and signSGD: the exact local "
                  "slope of their closed-form floors)."),
       latex=r"E f \propto \eta\ \text{(additive noise)}")
def check_additive_slope(budget: str) -> Result:
    seed = 23
    etas = np.array(_q(budget, [0.01, 0.04], [0.01, 0.02, 0.04, 0.08]))
    n_chains, burn = _q(budget, (160, 500), (384, 1000))
    steps, n_rec = _steps(budget)
    methods = ["sgd", "sign", "sign"]
    betas = [0.0, 0.0, 0.9]
    names = ["sgd", "sign", "signum"]
    k = len(etas)
    res = S.simulate(jax.random.key(seed), eta=np.tile(etas, 3), x0=np.array([0.0]), h=1.0,
                     method=[m for m in methods for _ in etas], beta=np.repeat(betas, k), sigma_a=1.0,
                     T=steps, n_rec=n_rec, burn=burn, n_chains=n_chains)
    mean, se = S.summarize(res["mean_f"])
    nres = S.simulate(jax.random.key(seed + 1), eta=etas, x0=np.zeros(10), h=np.linspace(1, 10, 10),
                      method="normalized", sigma_a=1.0, T=steps, n_rec=n_rec, burn=burn,
                      n_chains=_q(budget, 64, 192), chunk_size=_small_chunk(budget))
    nmean, nse = S.summarize(nres["mean_f"])
    log_e = np.log(etas)
    theory_curves = {"sgd": np.array([T.floor(1.0, e, 1.0, "additive", "sgd") for e in etas]),
                     "sign": np.array([T.floor(1.0, e, 1.0, "additive", "sign") for e in etas])}
    kappa_max = float(etas.max())  # a = sigma = 1
    slopes, ok, preds = {}, True, {}
    arrays = {"eta": etas}
    for i, name in enumerate(names + ["normalized_d10"]):
        m, s = (mean[i * k:(i + 1) * k], se[i * k:(i + 1) * k]) if i < 3 else (nmean, nse)
        b, sb = _slope(log_e, np.log(m), s / m)
        if name in theory_curves:
            pred = float(np.polyfit(log_e, np.log(theory_curves[name]), 1)[0])
            tol = Z * sb  # exact closed form: only Monte Carlo error
            arrays[f"{name}_pred"] = theory_curves[name]
        else:
            # no closed form: slope 1 + O(kappa); allow the O(kappa) term with unit constant
            pred, tol = 1.0, Z * sb + kappa_max
        slopes[name], preds[name] = (b, sb), pred
        ok &= abs(b - pred) < tol
        arrays[f"{name}_mean"], arrays[f"{name}_se"] = m, s
    return Result(
        predicted=preds["sign"], measured=slopes["sign"][0], tolerance=f"{Z:g} SE (+ kappa_max for Signum/normalized)",
        passed=bool(ok), seed=seed,
        detail=("slopes " + ", ".join(f"{n} {b:.3f}±{sb:.3f} (pred {preds[n]:.3f})" for n, (b, sb) in slopes.items())),
        arrays=arrays,
    )


# ----------------------------------------------------------------------------- additive, exact chain
@claim("singh2026.sign_additive_exact_chain", paper=PAPER, provenance="derived", kind="statistical",
       statement=("signSGD with additive Gaussian noise: the exact birth-death chain (log-CDF detailed balance) "
                  "gives E f for any (a, eta, sigma), including kappa = a eta/sigma of order 1 where the "
                  "small-kappa expansion fails."),
       latex=r"\frac{\pi(n+1)}{\pi(n)} = \frac{\Phi(-a x_n/\sigma)}{\Phi(a x_{n+1}/\sigma)}")
def check_additive_chain(budget: str) -> Result:
    seed = 31
    configs = [(1.0, 0.02, 1.0), (2.0, 0.1, 0.5), (1.0, 0.5, 0.25)]  # kappa = 0.02, 0.4, 2
    n_chains, burn = _q(budget, (320, 500), (512, 1000))
    steps, n_rec = _steps(budget)
    a, eta, sigma = (np.array(v) for v in zip(*configs))
    res = S.simulate(jax.random.key(seed), eta=eta, x0=(eta / 2)[:, None], h=a[:, None], method="sign",
                     sigma_a=sigma, T=steps, n_rec=n_rec, burn=burn, n_chains=n_chains)
    means, ses = S.summarize(res["mean_f"])
    preds = np.array([T.floor(*c, "additive", "sign") for c in configs])
    z = (means - preds) / ses
    series = [float(sp.N(T.phi_add_series(a * e / s))) * s * e for a, e, s in configs]
    return Result(
        predicted=float(preds[-1]), measured=float(means[-1]), tolerance=f"|z| < {Z:g} for all 3",
        passed=bool(np.all(np.abs(z) < Z)), seed=seed,
        detail=("kappa = 0.02, 0.4, 2: chain " + ", ".join(f"{p:.5g}" for p in preds) + " vs sim "
                + ", ".join(f"{m:.5g}±{s:.2g}" for m, s in zip(means, ses))
                + "; small-kappa series would give " + ", ".join(f"{v:.5g}" for v in series)),
        arrays={"pred": preds, "mean": means, "se": ses},
    )


@claim("singh2026.additive_small_kappa", paper=PAPER, provenance="derived", kind="exact",
       statement=("For small kappa = a eta/sigma the additive floor is E f = sigma eta (sqrt(2 pi)/8 + (pi/32) kappa "
                  "+ O(kappa^2)) (both coefficients derived in sympy from detailed balance, checked against the "
                  "exact chain); for a general symmetric noise density the leading term is eta/(8 rho(0)) "
                  "(checked with Student-t, nu = 3)."),
       latex=r"\frac{E f}{\sigma\eta} = \frac{\sqrt{2\pi}}{8} + \frac{\pi}{32}\kappa + O(\kappa^2)")
def check_small_kappa(budget: str) -> Result:
    kappas = np.array(_q(budget, [1e-3, 3e-3], [3e-4, 1e-3, 3e-3, 1e-2]))
    phi = np.array([T.floor(1.0, k, 1.0, "additive", "sign") / k for k in kappas])  # a = sigma = 1: eta = kappa
    series = T.phi_add_expansion_sym()  # derived in sympy from the detailed-balance recursion
    kappa = sp.Symbol("kappa", positive=True)
    c0, c1 = float(series.subs(kappa, 0)), float(sp.diff(series, kappa))
    coef = (phi - c0) / kappas  # -> pi/32 with an O(kappa) remainder
    # O(kappa^2) remainder in phi: |coef - pi/32| = O(kappa); unit constant (the chain gives ~0.01 kappa)
    ok = bool(np.all(np.abs(coef - c1) < kappas))
    nu = 3.0
    expr, rho0 = T.additive_drift_floor_sym()
    rho_t = float(sp.gamma(sp.Rational(2)) / (sp.sqrt(3 * sp.pi) * sp.gamma(sp.Rational(3, 2))))
    eta_t = 1e-3
    lead_t = float(expr.subs({rho0: rho_t, T.eta_sym: eta_t, T.sigma_sym: 1}))
    chain_t = T.floor(1.0, eta_t, 1.0, "additive", "sign", law="student", df=nu)
    rel_t = abs(chain_t - lead_t) / lead_t
    ok &= rel_t < 10 * eta_t  # leading order only: O(kappa) relative correction, kappa = 1e-3
    return Result(
        predicted=c1, measured=float(coef[0]), tolerance="|coef - pi/32| < kappa; t: rel < 10 kappa",
        passed=ok,
        detail=(f"sympy series {series}; (Phi_chain - {c0:.6f})/kappa = " + ", ".join(f"{c:.6f}" for c in coef)
                + f" at kappa = {kappas.tolist()} vs {c1:.6f}; Student-t(3): chain {chain_t:.6g} vs "
                f"eta/(8 rho(0)) = {lead_t:.6g} (rel {rel_t:.1e})"),
        arrays={"kappa": kappas, "phi": phi},
    )


# ----------------------------------------------------------------------------- SGD baselines
@claim("singh2026.sgd_mult_geometric", paper=PAPER, provenance="derived", kind="statistical",
       statement=("With multiplicative noise SGD at a constant step contracts geometrically (no floor): "
                  "E x_k^2 = rho^k x_0^2 with rho = (1 - eta a)^2 + eta^2 a^2 sigma^2 < 1 iff eta a (1 + sigma^2) < 2."),
       latex=r"E x_{k}^2 = \big((1-\eta a)^2 + \eta^2a^2\sigma^2\big)^k x_0^2")
def check_sgd_geometric(budget: str) -> Result:
    seed, a, eta, sigma = 41, 1.0, 0.02, 1.0
    n_chains = _q(budget, 1024, 4096)
    steps, n_rec = _steps(budget)
    res = S.simulate(jax.random.key(seed), eta=eta, x0=np.array([1.0]), h=a, method="sgd", sigma_m=sigma,
                     T=steps, n_rec=n_rec, n_chains=n_chains)
    x2 = 2 * res["curve"][0] / a  # (n_chains, n_rec): x_k^2 at k = T/n_rec, 2T/n_rec, ..., T
    k = np.arange(1, n_rec + 1) * (steps // n_rec)
    # E x_k^2 is a mean of products of k factors: its relative spread grows like (E x^4/(E x^2)^2)^k
    # ~ exp(4 k s^2), s = eta a sigma/(1 - eta a), and a heavy-tailed sample mean is biased low with a
    # jackknife SE that is too small. Fit the first quarter of the run (4 k s^2 <= 0.6 quick, 1.7 full),
    # where the mean is still well sampled; the noise term k s^2 there is 0.16 / 0.42 in log E x^2.
    window = k <= steps // 4

    def rate(x2_chains):
        return np.polyfit(np.concatenate([[0], k[window]]),
                          np.log(np.concatenate([[1.0], x2_chains.mean(0)[window]])), 1)[0]

    groups = np.array_split(np.arange(n_chains), 16)
    measured = float(rate(x2))
    jack = np.array([rate(np.delete(x2, g, axis=0)) for g in groups])
    se = float(np.sqrt((len(groups) - 1) / len(groups) * np.sum((jack - jack.mean()) ** 2)))  # jackknife SE
    pred = float(np.log(T.sgd_contraction(a, eta, sigma)))
    no_noise = float(np.log((1 - eta * a) ** 2))
    eta_max = float(T.sgd_threshold()[0].subs({T.a_sym: a, T.sigma_sym: sigma}))
    return Result(
        predicted=pred, measured=measured, tolerance=f"{Z:g} SE = {Z * se:.2g}",
        passed=abs(measured - pred) < Z * se and eta < eta_max, seed=seed,
        detail=(f"log-contraction per step {measured:.6f} ± {se:.6f} vs log rho = {pred:.6f} (noiseless "
                f"{no_noise:.6f}; eta = {eta} < threshold {eta_max:.2f}); E f_T = {x2.mean(0)[-1] * a / 2:.2e} "
                f"after {steps} steps: no floor"),
        arrays={"k": k, "x2": x2.mean(0), "pred": np.exp(pred * k)},
    )


@claim("singh2026.sgd_additive_mixed_floor", paper=PAPER, provenance="derived", kind="statistical",
       statement=("SGD floors: additive noise E f = eta sigma^2/(2(2 - eta a)); mixed noise "
                  "E x^2 = eta sigma_a^2/(a(2 - eta a(1 + sigma_m^2)))."),
       latex=r"E f_\infty = \frac{\eta\sigma^2}{2(2-\eta a)},\ E x_\infty^2 = \frac{\eta\sigma_a^2}{a(2-\eta a(1+\sigma_m^2))}")
def check_sgd_floors(budget: str) -> Result:
    seed, a = 42, 1.0
    n_chains, burn = _q(budget, (256, 200), (512, 500))
    steps, n_rec = _steps(budget)
    etas = np.array([0.05, 0.2, 0.05, 0.2])
    s_m = np.array([0.0, 0.0, 1.0, 1.0])
    res = S.simulate(jax.random.key(seed), eta=etas, x0=np.array([0.0]), h=a, method="sgd", sigma_m=s_m,
                     sigma_a=1.0, T=steps, n_rec=n_rec, burn=burn, n_chains=n_chains)
    mean, se = S.summarize(res["mean_f"])
    pred = np.array([T.sgd_additive_floor(a, e, 1.0) if m == 0 else a / 2 * T.sgd_mixed_second_moment(a, e, m, 1.0)
                     for e, m in zip(etas, s_m)])
    z = (mean - pred) / se
    return Result(
        predicted=float(pred[-1]), measured=float(mean[-1]), tolerance=f"|z| < {Z:g} for all 4",
        passed=bool(np.all(np.abs(z) < Z)), seed=seed,
        detail=("(eta, sigma_m) = " + ", ".join(f"({e}, {m}): {mu:.5f}±{s:.5f} vs {p:.5f}"
                                                for e, m, mu, s, p in zip(etas, s_m, mean, se, pred))),
        arrays={"eta": etas, "sigma_m": s_m, "mean": mean, "se": se, "pred": pred},
    )


# ----------------------------------------------------------------------------- cooldown
COOL = {"eta": 1e-2, "a": 2.0, "sigma": 1.0}
RUNS = [("sgd", "mult"), ("sgd", "add"), ("sign", "mult"), ("sign", "add")]


@functools.lru_cache(maxsize=2)
def _cooldown_sweep(budget: str) -> dict:
    seed = 51
    fractions = np.array(_q(budget, [0.0, 0.2, 0.5, 1.0], [0.0, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0]))
    n_chains = _q(budget, 64, 256)
    steps, n_rec = _steps(budget)
    cfg = [(m, n, f) for m, n in RUNS for f in fractions]
    # common random numbers: chain j sees the same noise under every schedule, so schedule
    # differences are measured per chain (paired), with a far smaller standard error
    # x0 = 1 + eta/2: the constant-step sign walk lives on the lattice with offset eta/2 (x0 = 1 would put
    # 0 on the lattice up to float drift, the degenerate offset)
    res = S.simulate(jax.random.key(seed), eta=COOL["eta"], x0=np.array([1.0 + COOL["eta"] / 2]), h=COOL["a"],
                     paired=True,
                     method=[c[0] for c in cfg], sigma_m=[COOL["sigma"] * (c[1] == "mult") for c in cfg],
                     sigma_a=[COOL["sigma"] * (c[1] == "add") for c in cfg], cooldown=[c[2] for c in cfg],
                     T=steps, n_chains=n_chains, n_rec=n_rec)
    shape = (len(RUNS), len(fractions))
    final, final_se = S.summarize(res["final_f"])
    exact = np.zeros(shape)
    times = np.arange(1, n_rec + 1) * (steps // n_rec)
    exact_curves = np.full(shape + (n_rec,), np.nan)
    k = np.arange(steps)
    x0_sq = (1.0 + COOL["eta"] / 2) ** 2
    for i, (m, n) in enumerate(RUNS):
        if m != "sgd":
            continue
        for j, f in enumerate(fractions):
            etas = np.asarray(S.schedule(k, steps, COOL["eta"], f))
            v = T.sgd_schedule_second_moment(COOL["a"], etas, x0_sq, COOL["sigma"] * (n == "mult"),
                                             COOL["sigma"] * (n == "add"))
            exact[i, j] = COOL["a"] / 2 * v[-1]
            exact_curves[i, j] = COOL["a"] / 2 * v[times]
    a, e, sg = COOL["a"], COOL["eta"], COOL["sigma"]
    floors = np.array([0.0, T.floor(a, e, sg, "additive", "sgd"), T.floor(a, e, sg, "multiplicative", "sign"),
                       T.floor(a, e, sg, "additive", "sign")])
    return {"fractions": fractions, "final": final.reshape(shape), "final_se": final_se.reshape(shape),
            "final_chains": res["final_f"].reshape(shape + (n_chains,)),
            "exact": exact, "curve": res["curve"].mean(axis=1).reshape(shape + (n_rec,)),
            "exact_curves": exact_curves, "floors": floors, "times": times, "seed": seed,
            "diverged": int(res["diverged"].sum())}


@claim("singh2026.cooldown_dissociation", paper=PAPER, provenance="derived", kind="qualitative",
       statement=("Same loss, same noise, opposite schedules: with multiplicative noise a WSD cooldown gives SGD "
                  "nothing (it converges geometrically at the constant step) but lowers signSGD's eta^2 floor by "
                  "orders of magnitude; with additive noise it helps both."),
       latex=r"\frac{E f_{\rm const}}{E f_{\rm WSD}}:\ \text{SGD-mult} \le 1,\ \text{sign-mult} \gg 1")
def check_dissociation(budget: str) -> Result:
    r = _cooldown_sweep(budget)
    j_wsd = int(np.argmin(np.abs(r["fractions"] - 0.2)))
    gain = r["final"][:, 0] / r["final"][:, j_wsd]
    gain_exact_sgd = r["exact"][:2, 0] / r["exact"][:2, j_wsd]
    # "large" = two orders of magnitude: the sign floor is ~C eta^2 and the cooldown ends at eta -> 0
    ok = gain[0] < 1 and gain[2] > 100 and gain[1] > 1 and gain[3] > 1
    names = [f"{m}-{n}" for m, n in RUNS]
    return Result(
        predicted="SGD-mult gain < 1; sign-mult gain > 100; additive gains > 1",
        measured=f"gains {', '.join(f'{n} {g:.3g}' for n, g in zip(names, gain))}",
        tolerance="orderings (gain > 100 for 'large')", passed=bool(ok), seed=r["seed"],
        detail=("final E f constant vs WSD(20%): " + ", ".join(
            f"{n} {c:.2e} vs {w:.2e}" for n, c, w in zip(names, r["final"][:, 0], r["final"][:, j_wsd]))
            + f"; exact SGD gains (mean-square recursion) {gain_exact_sgd[0]:.3g}, {gain_exact_sgd[1]:.3g}"),
        arrays={"times": r["times"], "curve_const": r["curve"][:, 0], "curve_wsd": r["curve"][:, j_wsd],
                "exact_const": r["exact_curves"][:, 0], "exact_wsd": r["exact_curves"][:, j_wsd],
                "floors": r["floors"], "names": np.array(names)},
    )


@claim("singh2026.cooldown_fraction_endpoint", paper=PAPER, provenance="derived", kind="qualitative",
       statement=("Across cooldown fractions the best final loss is at an endpoint: 0 (constant) for "
                  "SGD with multiplicative noise, 1 (full linear decay) otherwise; never interior."),
       latex=r"\arg\min_\phi E f_T(\phi) \in \{0, 1\}")
def check_fraction(budget: str) -> Result:
    r = _cooldown_sweep(budget)
    fr, final, se = r["fractions"], r["final"], r["final_se"]
    names = [f"{m}-{n}" for m, n in RUNS]
    expected = [0.0, 1.0, 1.0, 1.0]
    ok, best, zs = True, [], []
    for i in range(len(RUNS)):
        best.append(float(fr[int(np.argmin(final[i]))]))
        end = 0 if expected[i] == 0 else len(fr) - 1
        # paired per-chain differences endpoint - interior (same noise under every schedule):
        # no interior fraction may beat the predicted endpoint by more than Z standard errors
        diff = r["final_chains"][i, end][None, :] - r["final_chains"][i, 1:-1]
        m, s = S.summarize(diff)
        z = m / s
        zs.append(float(np.max(z)))
        ok &= bool(np.all(z < Z))
    exact_best = [float(fr[int(np.argmin(r["exact"][i]))]) for i in range(2)]
    ok &= exact_best == expected[:2]
    return Result(
        predicted="best fraction: " + ", ".join(f"{n} {e:g}" for n, e in zip(names, expected)),
        measured="argmin: " + ", ".join(f"{n} {b:g}" for n, b in zip(names, best)),
        tolerance=f"no interior point better than the endpoint by > {Z:g} paired SE", passed=bool(ok),
        seed=r["seed"],
        detail=(f"fractions {fr.tolist()}; exact SGD argmin (mean-square recursion) {exact_best}; largest paired "
                f"z of (endpoint - interior) per run " + ", ".join(f"{n} {z:.1f}" for n, z in zip(names, zs))
                + "; sign-mult final " + ", ".join(f"{v:.2e}" for v in final[2])),
        arrays={"fractions": fr, "final": final, "final_se": se, "exact": r["exact"], "names": np.array(names)},
    )
