r"""Heavy tails and other noise laws: the two-ladder constant under Cauchy, Student-t and uniform noise, the
additive floors of uniform and Cauchy noise, and the :math:`\eta^2` slope of normalized SGD under Cauchy noise and of
Lion (experiments ``sign_floor.ladder_any_law``, ``additive_laws``, ``heavy_normalized_lion``).
"""
from __future__ import annotations

import numpy as np

from paper_checks import Budget, Rate, Result, Statistical, claim
from paper_checks.sign_floor import PAPER, SOURCE, WHY_MC, Z
from paper_checks.sign_floor.experiments import additive_laws, heavy_normalized_lion, ladder_any_law
from theory import sign_floor as T

LAW_LABELS = {("student", 1.0): "Cauchy", ("student", 1.5): "t(ν=1.5)", ("uniform", None): "uniform[−1, 1]"}


@claim("singh2026.sign_floor_any_noise_law", paper=PAPER, provenance="derived", kind="statistical", source=SOURCE,
       statement=("The two-ladder floor constant C_mid = 1/(4(1-2p)^2) - 1/8 holds for any symmetric noise law with "
                  "p = F_xi(-1/sigma): Cauchy, Student-t with non-integer nu = 1.5 (infinite variance) and uniform "
                  "noise, at several sigma."),
       latex=r"C_{\rm mid} = \frac{1}{4(1-2p)^2} - \frac18,\quad p = F_\xi(-1/\sigma)\ \text{(any law)}")
def check_any_law(budget: Budget) -> Result:
    """Integer-ladder constants (offset eta/2) under Cauchy, t(1.5) and uniform noise against C_mid at p = F(-1/sigma)
    of each law; rivals: the Gaussian constant at the same sigma (the law ignored) and the first-order SDE's
    Laplace-law constant of the same law."""
    r = ladder_any_law(budget)
    laws = [(str(l), float(d) if str(l) == "student" else None) for l, d in zip(r["law"], r["df"])]
    pred = np.array([T.c_mid(s, l, d) for (l, d), s in zip(laws, r["sigma"])])
    gauss = np.array([T.c_mid(s) for s in r["sigma"]])
    sde = np.array([T.c_sde(s, l, d) for (l, d), s in zip(laws, r["sigma"])])
    return Result(
        checks=Statistical("C_mid = E f/(aη²) under Cauchy, t(1.5) and uniform noise", r["c_mid"], r["c_mid_se"], pred,
                           z=Z, why=WHY_MC + "; the integer ladder is exact (no float drift), so there is no bias term",
                           rivals={"the Gaussian constant at the same σ": gauss,
                                   "the first-order SDE (Laplace law) constant": sde}),
        detail=", ".join(f"{LAW_LABELS[k]} σ={s:g}: {m:.4f}±{e:.4f} (pred {p:.4f}, Gaussian {g:.4f})"
                         for k, s, m, e, p, g in zip(laws, r["sigma"], r["c_mid"], r["c_mid_se"], pred, gauss)),
        arrays={"sigma": r["sigma"], "law": np.array([LAW_LABELS[k] for k in laws]), "c_mid_sim": r["c_mid"],
                "c_mid_se": r["c_mid_se"], "c_mid_pred": pred, "gauss": gauss}, seed=int(r["seed"]),
    )


@claim("singh2026.additive_floor_other_laws", paper=PAPER, provenance="derived", kind="statistical", source=SOURCE,
       statement=("Additive noise with other laws: uniform noise on [-B, B] gives the exact floor E f = eta B/4 "
                  "(= eta/(8 rho(0))) and Cauchy noise the exact t_1 chain's floor (about pi sigma eta/8), "
                  "not the Gaussian sqrt(2 pi) sigma eta/8."),
       latex=r"E f \approx \frac{\eta}{8\rho(0)}:\ \text{uniform } \tfrac{\eta B}{4},\ \text{Cauchy } \tfrac{\pi\sigma\eta}{8}")
def check_additive_laws(budget: Budget) -> Result:
    """Float signSGD floors under additive uniform and Cauchy noise (sigma = B = 1) against the exact lattice chains;
    rival: the Gaussian chain at the same sigma (the law ignored, as a variance-free argument would)."""
    r = additive_laws(budget)
    eu, ec = r["uniform_eta"], r["student_eta"]
    pred = np.concatenate([[T.uniform_additive_floor(1.0, e, 1.0) for e in eu],
                           [T.floor(1.0, e, 1.0, "additive", law="student", df=1.0) for e in ec]])
    gauss = np.array([T.floor(1.0, e, 1.0, "additive") for e in np.concatenate([eu, ec])])
    mean = np.concatenate([r["uniform_mean"], r["student_mean"]])
    se = np.concatenate([r["uniform_se"], r["student_se"]])
    return Result(
        checks=Statistical("E f under additive uniform (η = 0.02, 0.05) and Cauchy (η = 0.02, 0.05) noise", mean, se,
                           pred, z=Z, why=WHY_MC + "; burn-in ≥ 4.5 relaxation times of E x² (rate 4ρ(0)aη/σ)",
                           rivals={"the Gaussian chain at the same σ": gauss}),
        detail=("E f/eta: uniform " + ", ".join(f"{m / e:.4f}±{s / e:.4f}" for m, s, e in zip(r["uniform_mean"], r["uniform_se"], eu))
                + " (exact 1/4); Cauchy " + ", ".join(f"{m / e:.4f}±{s / e:.4f}" for m, s, e in zip(r["student_mean"], r["student_se"], ec))
                + f" (pi/8 = {np.pi / 8:.4f}); diverged {r['uniform_n_diverged'] + r['student_n_diverged']}"),
        arrays={"eta": np.concatenate([eu, ec]), "mean": mean, "se": se, "pred": pred, "gauss": gauss},
        seed=int(r["seed"]),
    )


@claim("singh2026.heavy_normalized_lion_slope_two", paper=PAPER, provenance="derived", kind="rate",
       source="abstract (heavy tails, momentum); derived here",
       statement=("The eta^2 floor survives heavy tails in d > 1 and other 0-homogeneous methods: normalized SGD in d = 10 "
                  "under Cauchy multiplicative noise, and Lion (beta1 = 0.9, beta2 = 0.99), both have log-log slope 2."),
       latex=r"\frac{d\log E f}{d\log\eta} = 2\ \text{(normalized SGD, Cauchy noise; Lion)}")
def check_heavy_normalized_lion(budget: Budget) -> Result:
    """Weighted log-log slopes of the stationary E f against eta for normalized SGD (d = 10, Cauchy noise; geometric
    mean over chains, whose per-chain averages are heavy-tailed) and Lion, against 2 (scale invariance: both updates are 0-homogeneous in the gradients and the noise scales with x); rivals:
    slope 1 (an O(eta) floor) and slope 0."""
    r = heavy_normalized_lion(budget)
    eta = r["eta"]
    why = ("scale invariance makes E f ∝ η² exact at stationarity (x_k/η is an η-free chain, whatever the noise law), "
           "so no next-order term; 4 SE of the weighted fit")
    labels = {"normalized_cauchy": "normalized SGD, d=10, Cauchy noise (geometric mean)", "lion": "Lion β=(0.9, 0.99)"}
    checks = [Rate(f"slope of log E f on log η, {label}", eta, r[f"{name}_mean"], 2.0, z=Z, sigma=r[f"{name}_se"],
                   why=why, rivals={"slope 1 (an O(η) floor)": 1.0, "slope 0 (no shrinking with η)": 0.0})
              for name, label in labels.items()]
    return Result(
        checks=checks,
        detail=("slopes " + ", ".join(f"{labels[n]} {c.slope:.3f}±{c.se:.3f}" for n, c in zip(labels, checks))
                + "; E f/eta^2 " + ", ".join(f"{labels[n]} {np.mean(r[f'{n}_mean'] / eta**2):.3f}" for n in labels)
                + f"; {r['n_diverged']} diverged runs"),
        arrays={"eta": eta, **{f"{n}_{q}": r[f"{n}_{q}"] for n in labels for q in ("mean", "se")}},
        seed=int(r["seed"]),
    )
