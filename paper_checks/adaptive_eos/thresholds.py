r"""The frozen-preconditioner threshold of Adam and RMSProp's lattice 2-cycle on its threshold.

With :math:`P` frozen, Adam on a quadratic is a linear recursion whose top root leaves the unit disc at
:math:`\eta\lambda_{\max}(P^{-1}H) = 2(1+\beta_1)/(1-\beta_1)` (:func:`theory.adaptive_eos.frozen_threshold`); the
claim bisects the edge on simulated Adam. RMSProp (:math:`\beta_1 = 0`, :math:`\epsilon = 0`) sits exactly on its
threshold 2: its orbit settles on :math:`x = \pm(\eta/2)s` with :math:`\mathrm{sign}(Hs) = s`, when such a cycle
has :math:`\eta\lambda_{\max}(P^{-1}H) = 2` and :math:`P` varies slowly (:math:`\beta_2 \ge 0.99`).
"""
from __future__ import annotations

import numpy as np

import theory.adaptive_eos as th
from paper_checks import Count, Exact, Result, claim
from paper_checks.adaptive_eos import PAPER, QUOTE_38, WHERE
from paper_checks.adaptive_eos import experiments as E


@claim("cohen2022.frozen_preconditioner_threshold", paper=PAPER, provenance="quoted", kind="exact",
       source="abstract (38/eta at beta_1 = 0.9); the general threshold derived here with sympy",
       quote=QUOTE_38, where=WHERE,
       statement="Adam with a frozen diagonal preconditioner P is stable on a quadratic iff "
                 "eta lambda_max(P^-1 H) < 2(1 + beta_1)/(1 - beta_1): 38 at beta_1 = 0.9, 2 for RMSProp (beta_1 = 0); "
                 "above it the iterates grow by the spectral radius of the two-step recursion.",
       latex=r"\eta\,\lambda_{\max}(P^{-1}H) < \frac{2(1+\beta_1)}{1-\beta_1}\ (=38\ \text{at}\ \beta_1 = 0.9)")
def frozen_preconditioner_threshold(budget) -> Result:
    r"""Simulated Adam (bias-corrected, :math:`P` frozen at a random positive diagonal) on a rotated 4-D quadratic: the
    critical :math:`\eta q`, :math:`q = \lambda_{\max}(P^{-1}H)`, located by zooming grids of step sizes (the tail's
    log-growth changes sign), at :math:`\beta_1` = 0, 0.5, 0.9, 0.95, against the sympy root of the characteristic
    polynomial at :math:`z = -1`; and the per-step growth rate just above the edge against the log spectral radius.

    Rivals: :math:`2` (GD's threshold: the :math:`\beta_1` factor forgotten), :math:`2/(1-\beta_1)` (GD at the
    effective step :math:`\eta/(1-\beta_1)`), :math:`2(1+\beta_1)` (heavy ball without the EMA's
    :math:`1-\beta_1` normalization); for the rates, the complex-root modulus :math:`\sqrt{\beta_1}` (no growth).
    """
    return frozen_preconditioner_threshold_checks(E.frozen(budget))


def frozen_preconditioner_threshold_checks(ex: dict) -> Result:
    r"""Core of ``cohen2022.frozen_preconditioner_threshold``: the checks on one :func:`~paper_checks.adaptive_eos.experiments.frozen_edges` measurement.

    The critical :math:`\eta q` (the final bracket's midpoint, :math:`q = \lambda_{\max}(P^{-1}H)`) against
    :math:`2(1+\beta_1)/(1-\beta_1)` within the bracket's relative half width; the per-step log growth at
    :math:`\eta q` = threshold :math:`\times` factor against the log of the two-step recursion's spectral radius.
    Rivals: :math:`2`, :math:`2/(1-\beta_1)`, :math:`2(1+\beta_1)`; for the rates, :math:`\sqrt{\beta_1}` (no growth)
    and GD's root :math:`|1-\eta q|`.
    """
    b1, q = ex["beta1"], float(ex["q"])
    thr = np.array([th.frozen_threshold(b) for b in b1])
    crit = 0.5 * (ex["eta_lo"] + ex["eta_hi"]) * q
    half_width = 0.5 * float(np.max((ex["eta_hi"] - ex["eta_lo"]) * q / thr))
    rho = np.array([[th.frozen_spectral_radius(f * t, b) for f in ex["factors"]] for t, b in zip(thr, b1)])
    pred_rate = np.log(rho)
    checks = [
        Exact("critical η·λ_max(P⁻¹H) of simulated frozen-P Adam, β₁ = 0, 0.5, 0.9, 0.95", predicted=thr,
              measured=crit, rtol=half_width + 1e-9,
              why="the last grid cell's half width (relative); the sign of the tail's log-growth is decided well inside "
                  "a cell (the top root moves by |dz/d(ηq)| = 1 at the flip, so a cell of 1e-5 changes the growth over "
                  "200 steps by ~1e-3, far above round-off)",
              rivals={"2 (GD's threshold: β₁ forgotten)": np.full_like(thr, 2.0),
                      "2/(1 − β₁) (GD at the effective step η/(1 − β₁))": 2.0 / (1.0 - b1),
                      "2(1 + β₁) (heavy ball without the EMA's 1 − β₁)": 2.0 * (1.0 + b1)}),
        Exact("per-step log growth above the edge, ηq/threshold = " + ", ".join(f"{f:g}" for f in ex["factors"]),
              predicted=pred_rate, measured=ex["rate"], rtol=1e-6, atol=1e-9,
              why="the other root's share decays as |z₂/z₁|^burn (below 1e-20 after 400 steps) and the bias correction "
                  "as β₁^burn: left are round-off over 200 steps (atol 1e-9) and its relative share (1e-6)",
              rivals={"no growth: the complex-root modulus √β₁ (|z| < 1)": np.log(np.maximum(
                  np.sqrt(b1), 1e-300))[:, None] * np.ones_like(pred_rate),
                      "GD's root |1 − ηq| (the momentum's second root dropped)": np.log(np.abs(
                          1.0 - thr[:, None] * ex["factors"][None, :]))}),
    ]
    detail = (f"q = λ_max(P⁻¹H) = {q:.4f}; critical ηq/threshold − 1 = "
              + ", ".join(f"{c / t - 1:+.1e}" for c, t in zip(crit, thr)) + f" (β₁ = {', '.join(f'{b:g}' for b in b1)})")
    return Result(checks, detail=detail, arrays={"beta1": b1, "critical": crit, "threshold": thr,
                                                 "factors": ex["factors"], "rate": ex["rate"], "rate_theory": pred_rate})


@claim("cohen2022.rmsprop_lattice_cycle", paper=PAPER, provenance="derived", kind="exact",
       source="derived here (RMSProp with eps = 0 on a quadratic); the paper's threshold 2/eta for beta_1 = 0",
       statement="RMSProp (beta_1 = 0, eps = 0) on a quadratic settles on the exact 2-cycle x = +-(eta/2) s with "
                 "s in {+-1}^d, sign(H s) = s, when one such cycle has eta lambda_max(P^-1 H) = 2 (then it is that "
                 "one): P = (eta/2)|H s|, the preconditioned sharpness is exactly 2/eta (RMSProp's threshold), the "
                 "loss is (eta^2/8) s^T H s, whatever beta_2 and the curvature scale. Without such a cycle the orbit "
                 "never settles at beta_2 >= 0.99 (at beta_2 = 0.9 a fast preconditioner can hold a cycle slightly "
                 "above the threshold).",
       latex=r"x_t = \pm\tfrac{\eta}{2}s,\ \mathrm{sign}(Hs) = s,\ \eta\lambda_{\max}(P^{-1}H) = 2,\ "
             r"L = \tfrac{\eta^2}{8}s^\top Hs")
def rmsprop_lattice_cycle(budget) -> Result:
    r"""RMSProp runs on rotated 6-D quadratics (:math:`\kappa = 100`, several seeds, two step sizes, two or three
    :math:`\beta_2`) and on 1-D quadratics (:math:`a` = 0.5, 10). Exact: on the runs the theory says settle, the last
    iterate divided by :math:`\eta/2` against the theory's sign vector (the unique :math:`s` whose cycle has top
    preconditioned sharpness 2, :func:`theory.adaptive_eos.rmsprop_cycle_signs`), the tail's mean loss against
    :math:`(\eta^2/8)s^\top Hs`, and the tail's :math:`\eta\lambda_{\max}(P^{-1}H)` against 2. Count: which runs settle
    (2-periodicity residual below 1e-9) at :math:`\beta_2 \ge 0.99` against which matrices have a lattice cycle on the
    threshold (at :math:`\beta_2 = 0.9` the preconditioner is fast enough to hold some cycles above it: reported).

    Rivals: amplitude :math:`\eta` (loss :math:`\eta^2 s^\top Hs/2`); a loss floor :math:`\propto\eta` (the noise-floor
    reading, scaled to agree at the larger step); Adam's threshold at :math:`\beta_1 = 0.9` (38) and Adam's measured
    equilibrium ratio applied to RMSProp; every matrix settling (any lattice cycle attracts).
    """
    ex = E.quadratics(budget)
    Hs, eta = ex["rms6_H"], ex["rms6_eta"]
    target, has = [], []
    for H, e in zip(Hs, eta):
        S = th.rmsprop_cycle_signs(H)
        sharp = np.array([th.rmsprop_cycle_sharpness(H, s, e) for s in S])
        on = np.flatnonzero(np.abs(sharp - 2.0) < 1e-9)
        has.append(on.size == 1)
        target.append(S[on[0]] if on.size == 1 else np.full(H.shape[0], np.nan))
    has, target = np.array(has), np.array(target)
    period2 = ex["rms6_period2"][:, -1]
    sharp6, loss6 = ex["rms6_sharp_mean"][:, -1], ex["rms6_loss_mean"][:, -1]
    settled = (period2 < 1e-9) & ~(ex["rms6_underflowed"] | ex["rms6_diverged"])
    ok = has & settled
    slow = ex["rms6_beta2"] >= 0.99 - 1e-12  # the frozen-P reading needs a slowly varying preconditioner
    fast_extra = settled & ~has & ~slow
    sign = np.sign(ex["rms6_x"][ok, :1])  # the phase of the cycle at the last step
    ratio = ex["rms6_x"][ok] / (eta[ok, None] / 2) * sign
    loss_pred = np.array([th.rmsprop_cycle_loss(H, s, e) for H, s, e in zip(Hs[ok], target[ok], eta[ok])])
    big = eta[ok] == eta.max()
    loss_eta_rival = np.where(big, loss_pred, loss_pred * eta.max() / eta[ok])  # agrees at the larger step, ∝ η
    x1 = np.abs(ex["rms1_x"][:, 0]) / (ex["rms1_eta"] / 2)
    amp = np.array([th.rmsprop_cycle_amplitude(e) / (e / 2) for e in eta[ok]])
    amp1 = np.array([th.rmsprop_cycle_amplitude(e) / (e / 2) for e in ex["rms1_eta"]])
    sharp1 = ex["rms1_sharp_mean"][:, -1]
    checks = [
        Exact("x_T/(η/2) on settled runs (6-D, each up to the cycle's phase) and |x_T|/(η/2) in 1-D",
              predicted=np.r_[(target[ok] * amp[:, None]).ravel(), amp1], measured=np.r_[ratio.ravel(), x1], rtol=1e-9,
              why="the run sits on the cycle to round-off once settled (2-periodicity residual < 1e-9, the same "
                  "tolerance)", rivals={"amplitude η (a step across 0 and back)": np.r_[2 * target[ok].ravel(),
                                                                                     2 * np.ones_like(x1)]}),
        Exact("tail mean loss on settled 6-D runs", predicted=loss_pred, measured=loss6[ok], rtol=1e-8,
              why="the loss of an exact cycle; 1e-8 covers the residual of settling (period residual < 1e-9, squared "
                  "into the loss ×2)",
              rivals={"amplitude η: (η²/2) sᵀHs": 4 * loss_pred,
                      "a floor ∝ η (equal at the larger step)": loss_eta_rival}),
        Exact("tail mean η·λ_max(P⁻¹H), P = √v̂, on settled runs (6-D and 1-D)", predicted=np.full(ok.sum() + x1.size, 2.0),
              measured=np.r_[sharp6[ok], sharp1], rtol=1e-8,
              why="on the cycle v = g² exactly (|g| is constant), so √v̂ = |g| up to the bias correction's "
                  "β₂^t (< 1e-9 after the burn-in) and the settling residual",
              rivals={"Adam's β₁ = 0.9 threshold 38": np.full(ok.sum() + x1.size, 38.0),
                      "Adam's measured equilibrium ratio applied to RMSProp, 0.93 × 2": np.full(ok.sum() + x1.size, 1.86)}),
        Count("runs at β₂ ≥ 0.99 that settle on a 2-cycle (6-D) vs matrices with a lattice cycle at η λ_max(P⁻¹H) = 2",
              measured=settled[slow], predicted=has[slow],
              why="every run must match: settling is exact (residual 0 to round-off) or visibly absent (residual "
                  "> 1e-2)", rivals={"every lattice cycle attracts (all settle)": np.ones_like(has[slow])}),
    ]
    detail = (f"{int(has.sum())} of {has.size} 6-D runs have an on-threshold lattice cycle, {int(settled.sum())} settle "
              f"({int(fast_extra.sum())} at β₂ = 0.9 on a cycle above the threshold: "
              + ", ".join(f"{v:.4f}" for v in sharp6[fast_extra]) + "); "
              "unsettled runs' tail mean ηλ_max(P⁻¹H): "
              + ", ".join(f"{v:.3f}" for v in sharp6[~settled]) + f"; {ex['n_steps']} steps")
    return Result(checks, detail=detail, arrays={"eta": eta, "beta2": ex["rms6_beta2"], "settled": settled, "has": has,
                                                 "sharp_mean": sharp6, "loss": loss6, "period2": period2})
