r"""The step conditions of Theorems 4.2 and 4.3, measured on one-step draws.

Theorem 4.2's compression/noise factor is exact, not conservative, on isotropic quadratics in every dimension
(experiment ``sde.theorem42``); steplab's one-step descent condition for DSignSGD is sufficient, while Theorem 4.3's
x-independent step read as a per-step condition, and the SDEs' one-step predictions, are not (experiment
``sde.sign_descent``).
"""
from __future__ import annotations

import math

import numpy as np
import sympy as sp

from paper_checks._checks import Bound, Count, Statistical
from paper_checks._registry import Budget, Result, claim
from paper_checks.sde import PAPER
from paper_checks.sde.experiments import (_SD_SEED, _THM42_SEED, SD_AGENTS, SD_CASES, SD_DIMS, SD_LEVELS, SD_NU,
    SD_SIGMA, THM42_CELLS, THM42_DIMS, _sd_derivative, sign_descent, theorem42)
from theory import sde as T


# ========================================================================================= Theorem 4.2's step condition

@claim("compagnoni2025.theorem42_factor_exact", paper=PAPER, provenance="derived", kind="statistical",
       source="Theorem 4.2's step condition (secondary sources), evaluated here at sigma0 = 0, L1 = 0 on isotropic "
              "quadratics; the exactness of its factor is derived here",
       statement="Theorem 4.2's compression/noise factor 1 + (omega + d(sigma1^2 omega + sigma1^2))/N is exact, not "
                 "conservative, on isotropic quadratics a|x|^2/2 in every dimension d: the step bound "
                 "2/(a(1 + (omega + d(sigma1^2 omega + sigma1^2))/N)) equals DCSGD's mean-square threshold (ratio 1), "
                 "the dimension entering through the trace of the noise covariance.",
       latex=r"\frac{\eta_{\rm bound}}{\eta^\ast}=1,\ \ \eta_{\rm bound}=\frac{2}{a\bigl(1+(\bar\omega+d(\sigma_1^2\bar\omega+\sigma_1^2))/N\bigr)}")
def theorem42_factor_exact(budget: Budget) -> Result:
    """Measures DCSGD's mean-square threshold on a|x|^2/2 from one-step draws at a unit point x, eta* =
    2 E<x, D>/E|D|^2 (E|x+|^2 = |x|^2 - 2 eta E<x,D> + eta^2 E|D|^2; delta-method SE), in d = 1 and 8 for three
    (a, omega_i, sigma1) cells, and compares the ratio bound/eta* with 1. Rivals: the factor without the dimension
    (d = 1 in it: ratio F_1/F_d) and the factor without the noise-compression cross term sigma1^2 omega."""
    r = theorem42(budget)
    n = int(r["n"])
    u, v, su, sv, cov = np.moveaxis(r["moments"], -1, 0)
    F = np.array([[T.normalization_factor(4, np.asarray(om), s1, d) for _, om, s1 in THM42_CELLS] for d in THM42_DIMS])
    F1 = np.array([[T.normalization_factor(4, np.asarray(om), s1, 1) for _, om, s1 in THM42_CELLS] for _ in THM42_DIMS])
    Fx = np.array([[1 + (np.mean(om) + d * s1**2) / 4 for _, om, s1 in THM42_CELLS] for d in THM42_DIMS])
    a = np.array([c[0] for c in THM42_CELLS])[None, :]
    # ratio = (2/(a F)) / (2u/v) = v / (a F u)
    est = v / (a * F * u)
    g_u, g_v = -v / (a * F * u**2), 1 / (a * F * u)
    se = np.sqrt((g_u**2 * su**2 + g_v**2 * sv**2 + 2 * g_u * g_v * cov) / n)
    return Result(
        checks=[Statistical("ratio of Theorem 4.2's step bound to DCSGD's mean-square threshold per (d, cell)",
                            estimate=est, se=se, predicted=np.ones_like(est),
                            rivals={"the factor without the dimension (d = 1 inside it)": F1 / F,
                                    "the factor without the cross term sigma1^2 omega": Fx / F},
                            why=f"delta-method standard error of a ratio of sample moments over {n} i.i.d. one-step "
                                "draws; 6 estimates, 4 SE")],
        detail="bound / threshold per d " + "; ".join(f"d={d}: " + ", ".join(f"{e:.3f}+-{s:.3f}" for e, s in zip(est[i], se[i]))
                                                      for i, d in enumerate(THM42_DIMS))
               + " (1 = the bound is exactly the threshold; no reconstruction of Theorem 4.3's constants was attempted).",
        arrays={"dims": np.asarray(THM42_DIMS), "ratio": est, "ratio_se": se, "factor": F}, seed=_THM42_SEED)


# ============================================================================ DSignSGD's one-step descent (Theorem 4.3)

SD_RIVAL_RULES = ("no_noise", "no_sqrt_d", "theorem43")


class _CountChange:
    r"""Monte Carlo one-step change :math:`\overline{f(x - hD)} - f(x)` from the count table of the draws, for any h.

    Per coordinate, :math:`D_j = (2b - N)/N` with the observed frequencies; the sample mean over draws is the sum of
    the coordinates' frequency-weighted changes (exactly the mean over the draws). Its SE adds the coordinates'
    sample variances: the simulator draws every coordinate's signs independently."""

    def __init__(self, name: str, x: np.ndarray, counts: np.ndarray):
        self.name, self.x, self.n = name, x, int(counts[0].sum())
        self.freq = counts / self.n
        self.step = (2 * np.arange(SD_AGENTS + 1) - SD_AGENTS) / SD_AGENTS
        self.f0 = _sd_derivative(name, x, 0)

    def _delta(self, hs: np.ndarray) -> np.ndarray:
        moved = self.x[None, :, None] - hs[:, None, None] * self.step[None, None, :]
        return _sd_derivative(self.name, moved, 0) - self.f0[None, :, None]

    def mean_se(self, hs) -> tuple[np.ndarray, np.ndarray]:
        hs = np.atleast_1d(np.asarray(hs, float))
        dl = self._delta(hs)
        mu = np.sum(self.freq * dl, axis=2)
        var = np.sum(self.freq * dl**2, axis=2) - mu**2
        return mu.sum(axis=1), np.sqrt(np.maximum(var.sum(axis=1), 0.0) * self.n / (self.n - 1) / self.n)

    def root(self) -> tuple[float, float]:
        """First h > 0 where the Monte Carlo mean change turns non-negative, and its delta-method SE."""
        from scipy import optimize

        hs = np.geomspace(1e-6, 1e2, 1201)   # a start moved by 100 has long passed h* on these problems
        mu, _ = self.mean_se(hs)
        up = np.nonzero(~(mu < 0))[0]
        if up.size == 0 or up[0] == 0:
            return math.nan, math.nan
        i = int(up[0])
        h = float(optimize.brentq(lambda v: float(self.mean_se(v)[0][0]), hs[i - 1], hs[i], xtol=1e-300, rtol=1e-12))
        eps = 1e-6 * h
        slope = float(np.diff(self.mean_se([h - eps, h + eps])[0])[0]) / (2 * eps)
        return h, float(self.mean_se(h)[1][0]) / abs(slope)


def _sd_theory(name: str, x: np.ndarray) -> dict:
    """steplab's sufficient step, its rivals, the exact and first-order-SDE critical steps at x."""
    L0, L1 = T.sign_l0l1(name)
    g = _sd_derivative(name, x, 1)
    args = (SD_SIGMA, L0, L1, SD_AGENTS, "student_t", SD_NU)
    out = {rule: T.sign_sufficient_step(g, *args, rule=rule) for rule in T.SIGN_STEP_RULES}
    out["theorem43"] = T.theorem43_step(L0, L1, x.size, SD_SIGMA, SD_AGENTS, "student_t", SD_NU)
    for model in T.SIGN_CHANGE_MODELS:
        out[model] = T.sign_critical_step(x, name, SD_SIGMA, SD_AGENTS, "student_t", SD_NU, model=model)
    return out


@claim("compagnoni2025.sign_descent_condition", paper=PAPER, provenance="derived", kind="statistical",
       source="Theorem 4.3's step restriction (secondary sources: eta eta_t < l_nu/K, K = L1 d sigma/(2N) + "
              "sqrt(d)(L0 + L1) M_nu, constants not recovered); steplab's descent condition and its test are derived here",
       statement="One DSignSGD step x+ = x - hD (N agents, Student-t noise, any nu) on an (L0,L1)-smooth f decreases f in "
                 "expectation whenever h phi(L1 h sqrt(d)) [(1 - 1/N)|m|^2 + d/N] (L0 + L1|grad f|) < <grad f, m>, "
                 "phi(a) = (e^a - 1 - a)/a^2, m = 2F_nu(grad f/sigma) - 1; the condition is exact on isotropic "
                 "quadratics and conservative by the measured factor elsewhere. Dropping the noise share d/N or the "
                 "dimension (1/N, L1 h) breaks sufficiency. steplab's reading of Theorem 4.3's x-independent step "
                 "l_nu/K (l_nu = 2F_nu(1) - 1, M_nu = 2 rho_nu(0)) as a per-step descent condition is a rival, not the "
                 "paper's statement (the theorem is a convergence result whose text steplab has not recovered): it "
                 "ascends at starts with small gradients, where the critical step shrinks like |grad f|^2. The first-order and the "
                 "curvature-corrected DSignSGD SDEs' one-step predictions miss the discrete critical step (the corrected "
                 "one is right only where the mean sign is linear).",
       latex=r"h\,\varphi(L_1h\sqrt d)\Bigl[(1-\tfrac1N)\|m\|^2+\tfrac dN\Bigr](L_0+L_1\|\nabla f\|)<\langle\nabla f,m\rangle"
             r"\Rightarrow E f(x^+)<f(x)")
def sign_descent_condition(budget: Budget) -> Result:
    """At 18 starts (quadratic, x^4/4, 2cosh; d = 1, 8; |grad|/sigma ~ 0.1, 0.5, 2) under Student-t noise nu = 1.5:
    (1) the critical step h*, where the Monte Carlo mean change of one DSignSGD step turns non-negative (delta-method
    SE), against the exact binomial-sum root; rivals: the first-order and the curvature-corrected SDE generators'
    roots and h* = h_suff (steplab's condition tight everywhere). (2) min over starts of h*_MC / h_suff >= 1 (sufficiency); rival: twice the step is
    still sufficient; the same for the condition written with the constants l_nu, M_nu. (3) the Monte Carlo change
    at every rule's step against the exact change; rivals: the first-order and the corrected SDE generators. (4) whether each rival rule's step ascends (items the draws resolve beyond 4 SE), against the exact
    sign; rivals: every rule is sufficient; steplab's reading of Theorem 4.3's step as a per-step descent condition
    (a convergence theorem's step condition does not promise per-step descent, so this is no verdict on the paper)."""
    r = sign_descent(budget)
    n = int(r["n"])
    crit, crit_se, crit_exact, crit_gen, crit_cor, suff, ratio, over, ratio_explicit = ([] for _ in range(9))
    chg, chg_se, chg_exact, chg_gen, chg_cor = ([] for _ in range(5))
    asc_meas, asc_pred, asc_paper, asc_labels = [], [], [], []
    for i, (name, d, u) in enumerate(SD_CASES):
        x, cc = r[f"x_{i}"], _CountChange(name, r[f"x_{i}"], r[f"counts_{i}"])
        th = _sd_theory(name, x)
        h, se = cc.root()
        crit.append(h), crit_se.append(se), crit_exact.append(th["discrete"])
        crit_gen.append(th["first_order_sde"]), crit_cor.append(th["corrected_sde"])
        suff.append(th["steplab"]), ratio.append(h / th["steplab"]), over.append(th["theorem43"] / th["discrete"])
        ratio_explicit.append(h / th["explicit"])
        for rule in ("steplab",) + SD_RIVAL_RULES:
            hr = th[rule]
            mu, s = (float(a[0]) for a in cc.mean_se(hr))
            exact = T.sign_one_step_change(x, hr, name, SD_SIGMA, SD_AGENTS, "student_t", SD_NU)
            chg.append(mu), chg_se.append(s), chg_exact.append(exact)
            chg_gen.append(T.sign_generator_change(x, hr, name, SD_SIGMA, SD_AGENTS, "student_t", SD_NU))
            chg_cor.append(T.sign_generator_change(x, hr, name, SD_SIGMA, SD_AGENTS, "student_t", SD_NU,
                                                   model="corrected_sde"))
            if rule != "steplab" and abs(mu) > 4 * s:
                asc_meas.append(mu > 0), asc_pred.append(exact > 0), asc_labels.append((i, rule))
                asc_paper.append(False if rule == "theorem43" else exact > 0)
    crit, crit_se, ratio, ratio_explicit = np.array(crit), np.array(crit_se), np.array(ratio), np.array(ratio_explicit)
    # Theorem 4.3's form: steplab's K(G) (explicit constants, linear regime) at |grad f| = 1, phi = 1/2, vs the paper's K
    Ks, (G_, s_, L0_, L1_, d_, N_, M_, phi_) = T.sign_descent_K_symbolic()
    ell, M = T.sign_slope_bounds("student_t", SD_NU)
    k_cmp = []
    for name in T.SIGN_DESCENT_FUNCTIONS:
        L0, L1 = T.sign_l0l1(name)
        for d in SD_DIMS:
            ours = float(Ks.subs({G_: 1, phi_: sp.Rational(1, 2), s_: SD_SIGMA, L0_: L0, L1_: L1, d_: d, N_: SD_AGENTS,
                                  M_: M}))
            k_cmp.append(ours * T.theorem43_step(L0, L1, d, SD_SIGMA, SD_AGENTS, "student_t", SD_NU) / ell)
    rel = float(np.max(crit_se / np.array(suff)))
    chg, chg_se = np.array(chg), np.array(chg_se)
    n_paper_up = sum(m for m, (i, rule) in zip(asc_meas, asc_labels) if rule == "theorem43")
    return Result(
        checks=[Statistical("critical step h* of one DSignSGD step per start (Monte Carlo root)", estimate=crit,
                            se=crit_se, predicted=np.array(crit_exact),
                            rivals={"first-order SDE generator's root 2N<g,m>/sum f''(1-m^2)": np.array(crit_gen),
                                    "curvature-corrected SDE generator's root": np.array(crit_cor),
                                    "steplab's condition is tight everywhere (h* = h_suff)": np.array(suff)},
                            why=f"delta-method SE of the root of the mean over {n} draws per start (SE of the mean "
                                "change / slope of the mean curve there); 18 estimates, 4 SE"),
                Bound("min over starts of h*_MC / h_suff (sufficiency of steplab's condition)", measured=float(ratio.min()),
                      bound=1.0, side=">=", slack=4 * rel,
                      rivals={"twice steplab's step still descends everywhere (min ratio >= 2)": 2.0},
                      why=f"4 x the largest relative SE of h*_MC ({rel:.1e}); on the isotropic quadratic the condition "
                          "is exact, so the ratio sits at 1 there"),
                Bound("min over starts of h*_MC / h_explicit (the condition with the constants l_nu, M_nu)",
                      measured=float(ratio_explicit.min()), bound=1.0, side=">=", slack=4 * rel,
                      rivals={"twice the explicit step still descends everywhere (min ratio >= 2)": 2.0},
                      why=f"4 x the largest relative SE of h*_MC relative to h_suff ({rel:.1e}; h_explicit <= h_suff)"),
                Statistical("Monte Carlo one-step change at each rule's step (steplab, no noise, no sqrt d, Theorem 4.3)",
                            estimate=chg, se=chg_se, predicted=np.array(chg_exact),
                            rivals={"first-order SDE generator -h<g,m> + (h^2/2) sum f''(1-m^2)/N": np.array(chg_gen),
                                    "curvature-corrected SDE generator (adds (h^2/2) <g, J_m m>)": np.array(chg_cor)},
                            why=f"SE of the mean over {n} draws (coordinates independent by construction); the exact "
                                "change is a finite binomial sum (no truncation); 72 estimates, 4 SE"),
                Count("rival rules' steps that ascend (items resolved by the draws beyond 4 SE)",
                      measured=np.array(asc_meas), predicted=np.array(asc_pred),
                      rivals={"every rule is a sufficient condition (no step ascends)": np.zeros(len(asc_meas), bool),
                              "Theorem 4.3's step, read by steplab as a per-step descent condition, never ascends":
                                  np.array(asc_paper)},
                      why="each item's sign is resolved by the Monte Carlo mean beyond 4 SE; the exact change decides "
                          "the prediction")],
        detail=f"Student-t nu = {SD_NU}, sigma = {SD_SIGMA}, N = {SD_AGENTS}, {n} draws per start. The SDEs' descent "
               f"steps miss the discrete h* by factors up to {np.max(np.array(crit_gen) / crit_exact):.1f} (first order) and "
               f"{np.max(np.array(crit_cor) / crit_exact):.1f} (corrected; exact only where the mean sign is linear). "
               "h*/h_suff per start "
               "(quadratic, x^4/4, 2cosh x d = 1, 8 x |g|/sigma ~ 0.1, 0.5, 2): "
               + ", ".join(f"{v:.2f}" for v in ratio) + f" (min {ratio.min():.3f}: sufficient; 1 on the quadratic: exact); "
               f"with the explicit constants l = {ell:.3f}, M = {M:.3f}: h*/h_explicit from {ratio_explicit.min():.2f} "
               f"to {ratio_explicit.max():.1f}. In Theorem 4.3's form at |grad f| = 1, phi = 1/2 steplab's K shares the "
               f"theorem's term L1 d sigma/(2N) but not the rest: K_steplab/K_paper = "
               + ", ".join(f"{v:.2f}" for v in k_cmp) + " (quadratic, quartic, cosh x d = 1, 8). "
               f"Rival steps resolved: {len(asc_meas)}, of which {int(np.sum(asc_meas))} ascend; Theorem 4.3's step "
               f"l/K ascends at {n_paper_up} starts (near the minimizer h* ~ |grad f|^2 while l/K is fixed) and exceeds "
               f"the exact h* by up to {max(over):.0f}x at these starts (without bound as |grad f| -> 0): no x-independent "
               "reading of its constants makes it a per-step descent condition. That reading is steplab's: the theorem "
               "is a convergence statement, so this is no verdict on the paper.",
        arrays={"ratio": ratio, "ratio_explicit": ratio_explicit, "crit": crit, "crit_se": crit_se, "crit_exact": np.array(crit_exact),
                "suff": np.array(suff), "levels": np.asarray(SD_LEVELS), "dims": np.asarray(SD_DIMS)}, seed=_SD_SEED)
