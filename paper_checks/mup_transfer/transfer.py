r"""Where the optimal one-step rate goes as the width grows: a non-zero constant under μP, zero under SP, a random
kernel-regime value under SP (rescaled) and NTP.

The optimum of a seed is the first local minimizer of its exact one-step loss (:func:`theory.mup_transfer.first_minimizer`);
the predictions are the closed forms of :mod:`theory.mup_transfer` (:func:`eta_infinity`, :func:`kernel_factor`,
:func:`kernel_optimum`).
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import sympy as sp

import sims.mup_transfer as sm
import theory.mup_transfer as th
from paper_checks import STEPLAB, Exact, Rate, Result, Statistical, claim, fit_slope, mean_se, standard_error
from paper_checks.mup_transfer import PAPER
from paper_checks.mup_transfer import experiments as E

ABSTRACT_MUP = ("We show that under μP, the optimal learning rate converges to a non-zero constant as width goes to "
                "infinity, providing a theoretical explanation to learning rate transfer.")
ABSTRACT_OTHERS = ("In contrast, we show that this property fails to hold under alternative parametrizations such as "
                   "Standard Parametrization (SP) and Neural Tangent Parametrization (NTP).")
FIT_FROM = 1024  # the widths of the intercept fit start here (the 1/n bias at least 4x its next order, see below)


def intercept_fit(widths, mean, se) -> tuple[float, float, float]:
    r"""Weighted least squares of :math:`\bar\eta_n = \eta + b/n`: the intercept :math:`\eta`, its standard error and
    :math:`b` (weights :math:`1/\mathrm{SE}_n^2`; the SE scaled up by the reduced :math:`\chi^2` when above 1)."""
    A = np.column_stack([np.ones_like(widths, dtype=float), 1.0 / np.asarray(widths, dtype=float)])
    w = 1.0 / np.asarray(se) ** 2
    cov = np.linalg.inv(A.T @ (A * w[:, None]))
    beta = cov @ (A.T @ (w * mean))
    chi2 = float(np.sum(w * (mean - A @ beta) ** 2)) / max(1, len(mean) - 2)
    return float(beta[0]), float(np.sqrt(cov[0, 0] * max(1.0, chi2))), float(beta[1])


@claim("hayou2025.mup_optimum_converges_to_eta_inf", paper=PAPER, provenance="quoted", kind="statistical",
       source="abstract; the limit value derived here", quote=ABSTRACT_MUP, where="arXiv:2511.01734, abstract",
       statement="Under μP (SGD table: W0 ~ N(0, 1/d) at rate eta n, W1 ~ N(0, 1/n) at eta, V ~ N(0, 1/n^2) at eta/n), "
                 "the optimal one-step rate of a three-layer linear network converges as n -> infinity to the non-zero "
                 "constant eta_inf = c^T X y / (kappa |X^T c|^2), c = X y / m, kappa = 1 + 2/d.",
       latex=r"\eta_n \to \eta_\infty = \frac{c^\top X y}{(1 + 2/d)\,\|X^\top c\|^2}")
def mup_optimum_converges_to_eta_inf(budget) -> Result:
    r"""Per-seed first-basin optima at widths 1024 .. 2^22; the seed means fitted as :math:`\eta + b/n` (weighted by their
    standard errors) and the intercept compared with :func:`theory.mup_transfer.eta_infinity`.

    The seed mean's bias is :math:`O(1/n)` (a smooth function of coefficients fluctuating like :math:`n^{-1/2}`); the
    next order, :math:`O(n^{-3/2})`, is below a tenth of the intercept's SE from n = 1024 on. Rivals: 0 (the μP optimum
    drifting to 0 like SP's), the limit with the input layer's share only (:math:`\kappa = 1`), with one of the two
    :math:`1/d` shares lost (:math:`\kappa = 1 + 1/d`), and the kernel value of the NTK parametrization
    (:math:`\kappa = 3/d`, its initial output set to 0).
    """
    ex = E.widths(budget)
    X, y = E.dataset()
    keep = ex["widths"] >= FIT_FROM
    result = mup_optimum_converges_to_eta_inf_checks(X, y, ex["widths"][keep], ex["eta_mup"][keep])
    return replace(result, arrays={"widths": ex["widths"], "mean": ex["eta_mup"].mean(axis=1)}, seed=E.SEED)


def mup_optimum_converges_to_eta_inf_checks(X: np.ndarray, y: np.ndarray, widths: np.ndarray, eta: np.ndarray) -> Result:
    r"""Core of ``hayou2025.mup_optimum_converges_to_eta_inf``: the check on per-seed μP optima at several widths.

    ``eta``: (width, seed) first-basin optima of the exact one-step loss on the data ``X`` (d, m), ``y`` (m,)
    (:func:`paper_checks.mup_transfer.experiments.optima`; NaN where a seed has no minimizer). The seed means
    (standard errors over the finite seeds) are fitted as :math:`\eta + b/n` (:func:`intercept_fit`) and the
    intercept is compared with

    .. math:: \eta_\infty = \frac{c^\top X y}{(1 + 2/d)\,\|X^\top c\|^2},\qquad c = Xy/m,

    within 4 SE. The seed mean's bias is :math:`O(1/n)`, fitted; its next order :math:`O(n^{-3/2})` must be negligible
    over the widths given (below a tenth of the intercept's SE from n = 1024 on, at the claim's setup). Rivals: 0 (the
    optimum drifting to 0 as under SP), :math:`\kappa = 1` (the input layer's share only), :math:`\kappa = 1 + 1/d`
    (one hidden share lost), the NTK parametrization's kernel value (:math:`\kappa = 3/d`, its initial output 0).
    """
    d, m = X.shape
    n_ok = np.sum(np.isfinite(eta), axis=1)
    mean, se = np.nanmean(eta, axis=1), np.nanstd(eta, axis=1, ddof=1) / np.sqrt(n_ok)
    icpt, icpt_se, b = intercept_fit(widths, mean, se)
    pred = th.eta_infinity(X, y)
    return Result(
        Statistical("intercept of the seed means fitted as eta + b/n", estimate=icpt, se=icpt_se, predicted=pred,
                    why="standard error of the weighted intercept (seeds independent per width); the fit's next order "
                        "O(n^-3/2) is negligible from n = 1024",
                    rivals={"0: the optimum drifts to zero as under SP": 0.0,
                            "kappa = 1 (only the input layer's update counts)": th.kernel_optimum(X, y, 1.0),
                            "kappa = 1 + 1/d (one hidden share lost)": th.kernel_optimum(X, y, 1.0 + 1.0 / d),
                            "the NTK parametrization's kernel value (kappa = 3/d, f0 = 0)":
                                th.kernel_optimum(X, y, th.limit_kernel_factor("ntp", d))}),
        detail=f"eta_inf = {pred:.5f}; intercept {icpt:.5f} +- {icpt_se:.1e} (b = {b:.2f}) from {len(widths)} widths "
               f"{widths[0]}..{widths[-1]}, {eta.shape[1]} seeds each; d = {d}, m = {m}",
        arrays={"widths": widths, "mean": mean})


@claim("hayou2025.sp_and_ntp_do_not_transfer", paper=PAPER, provenance="quoted", kind="rate",
       source="abstract and Figure 1; the rates derived here", quote=ABSTRACT_OTHERS, where="arXiv:2511.01734, abstract",
       statement="Under SP (fan-in init, one global rate) the optimal one-step rate shrinks like 1/kappa_n, "
                 "kappa_n = 1 + 2n/d, i.e. like 1/n; under NTP it keeps a seed-to-seed spread that does not shrink with "
                 "width (it converges to a random variable, not a constant).",
       latex=r"\eta_n^{\rm SP} \propto (1 + 2n/d)^{-1},\quad \mathrm{sd}(\eta_n^{\rm NTP}) \to \text{const} > 0")
def sp_and_ntp_do_not_transfer(budget) -> Result:
    r"""Log-log slopes over widths 256 .. 2^22: of the SP seed-mean optimum (predicted: the least-squares slope of
    :math:`1/\kappa_n` over the same widths, :func:`theory.mup_transfer.kernel_factor`) and of the NTP seed spread
    (predicted 0).

    Next order: both limits are reached with relative corrections :math:`O(n^{-1/2})`, which tilt a log-log slope over
    widths from 256 up by at most about :math:`256^{-1/2}/2`. Rivals: SP transfers (slope 0) or shrinks like
    :math:`n^{-1/2}`; NTP's spread shrinks like :math:`n^{-1/2}` as μP's does.
    """
    ex = E.widths(budget)
    keep = ex["widths"] >= 256
    n = ex["widths"][keep].astype(float)
    sp_eta, ntp_eta = ex["eta_sp"][keep], ex["eta_ntp"][keep]
    s = sp_eta.shape[1]
    kappa = np.array([th.kernel_factor("sp", int(w), E.D) for w in n])
    pred_sp, _ = fit_slope(n, 1.0 / kappa)
    nxt = 0.5 / np.sqrt(n[0])
    sd_ntp = ntp_eta.std(axis=1, ddof=1)
    return Result([
        Rate("SP: seed-mean optimum vs width", x=n, y=sp_eta.mean(axis=1), predicted=pred_sp, next_order=nxt,
             sigma=sp_eta.std(axis=1, ddof=1) / np.sqrt(s),
             why="weighted log-log fit (SE of each seed mean); next order: O(n^-1/2) relative corrections",
             rivals={"0: SP transfers": 0.0, "-1/2": -0.5},
             quote="Under SP, the optimal learning rate η⋆_n shifts toward 0 as width grows.",
             where="arXiv:2511.01734, Figure 1 caption"),
        Rate("NTP: seed spread of the optimum vs width", x=n, y=sd_ntp, predicted=0.0, next_order=nxt,
             sigma=sd_ntp / np.sqrt(2 * (s - 1)),
             why="SE of a sample sd, sd/sqrt(2(S-1)); next order: O(n^-1/2) relative corrections",
             rivals={"-1/2: NTP concentrates like μP": -0.5})],
        detail=f"{len(n)} widths {int(n[0])}..{int(n[-1])}, {s} seeds each; SP mean x kappa_n at the widest: "
               f"{sp_eta.mean(axis=1)[-1] * kappa[-1]:.3f}; NTP sd at the widest: {sd_ntp[-1]:.3f}",
        arrays={"widths": n, "sp_mean": sp_eta.mean(axis=1), "ntp_sd": sd_ntp}, seed=E.SEED)


def kernel_expectation(kappa: float, draws: int, seed: int, parametrization: str = "ntp") -> tuple[float, float]:
    r"""Monte Carlo mean and SE of :func:`theory.mup_transfer.kernel_optimum` over initial outputs
    :math:`f_0 \sim N(0, v\,X^\top X)`, :math:`v` the width limit of :func:`theory.mup_transfer.output_variance_expr`
    (:math:`1/d` under SP and NTP): the law of the initial output in the kernel regime."""
    X, y = E.dataset()
    var = float(sp.limit(th.output_variance_expr(parametrization), th.N, sp.oo).subs(th.D, E.D))
    rng = np.random.default_rng(seed)
    f0 = rng.standard_normal((draws, E.D)) @ X * np.sqrt(var)
    eta = th.kernel_optimum(X, y, kappa, f0)
    return float(eta.mean()), float(standard_error(eta))


@claim("steplab.kernel_regime_optimum_is_random", paper=STEPLAB, provenance="derived", kind="statistical",
       source="derived here",
       statement="Under NTP the optimal one-step rate tends to the kernel-regime optimum eta(f0) with kappa = 3/d of "
                 "the random initial output f0 ~ N(0, X^T X / d); under SP, kappa_n eta_n tends to the same with "
                 "kappa = 1: the mean over initializations differs from the value at f0 = 0.",
       latex=r"\eta_n^{\rm NTP} \Rightarrow \eta(f_0;\,3/d),\ \kappa_n\eta_n^{\rm SP} \Rightarrow \eta(f_0;\,1),\ "
             r"f_0 \sim N(0, X^\top X/d)")
def kernel_regime_optimum_is_random(budget) -> Result:
    r"""Seed means of the NTP optimum and of :math:`\kappa_n\eta_n^{\rm SP}` at width :math:`2^{20}` against the Monte
    Carlo mean of :func:`theory.mup_transfer.kernel_optimum` over Gaussian initial outputs (independent draws).

    SE: the two sides' standard errors in quadrature; bias: the width's :math:`O(n^{-1/2})` corrections,
    :math:`\le 10^{-3}` relative at :math:`2^{20}`. Rival: the optimum at :math:`f_0 = 0`.
    """
    ex = E.kernel_limit(budget)
    X, y = E.dataset()
    kap_sp = th.kernel_factor("sp", ex["n"], E.D)
    kap_ntp = th.limit_kernel_factor("ntp", E.D)
    sim = np.stack([ex["eta_sp"] * kap_sp, ex["eta_ntp"]])
    m_sim, se_sim = mean_se(sim, axis=1)
    draws = budget.pick(quick=20_000, full=200_000)  # Gaussian initial outputs of the Monte Carlo side
    mc = [kernel_expectation(k, draws, E.SEED + i, name)
          for i, (k, name) in enumerate(((1.0, "sp"), (kap_ntp, "ntp")))]
    pred = np.array([m for m, _ in mc])
    se = np.hypot(se_sim, [s for _, s in mc])
    zero = np.array([th.kernel_optimum(X, y, 1.0), th.kernel_optimum(X, y, kap_ntp)])
    return Result(
        Statistical("seed mean of (kappa_n eta_SP, eta_NTP) at n = 2^20", estimate=m_sim, se=se, predicted=pred,
                    bias=float(1e-3 * np.max(pred)),
                    why="SEs of the simulated and Monte Carlo means in quadrature; bias: O(n^-1/2) at n = 2^20",
                    rivals={"the optimum at f0 = 0 (a deterministic kernel limit)": zero}),
        detail=f"SP: {m_sim[0]:.4f} vs {pred[0]:.4f} (f0 = 0: {zero[0]:.4f}); NTP: {m_sim[1]:.4f} vs {pred[1]:.4f} "
               f"(f0 = 0: {zero[1]:.4f}); {sim.shape[1]} seeds, {draws} Gaussian draws",
        arrays={"sim": m_sim, "pred": pred}, seed=E.SEED)


@claim("steplab.reduced_algebra_reproduces_gd_step", paper=STEPLAB, provenance="derived", kind="exact",
       source="derived here",
       statement="The one-step output of V^T W1 W0 x is a cubic in eta whose coefficients depend on the width-n "
                 "weights only through five Gram statistics (|V|^2, W0^T W0, W0^T z, |z|^2, (ZB)^T (ZB)); the "
                 "closed-form algebra reproduces a dense GD step (gradients by autodiff) to round-off.",
       latex=r"f_1(x) = \sum_{k=0}^{3} c_k(\|V\|^2, W_0^\top W_0, W_0^\top z, \|z\|^2, H)\,\eta^k")
def reduced_algebra_reproduces_gd_step(budget) -> Result:
    r"""Dense draws at width 24 under μP, SP and NTP: their coefficients (jax.grad, expanded layer by layer) against
    :func:`sims.mup_transfer.coefficients_from_statistics` on each draw's own Gram statistics.

    Rivals: the hidden layer's update left out (its multiplier set to 0), the terms of order :math:`\eta^2` and
    :math:`\eta^3` dropped (the linearized step), and μP's statistics read with SP's single global rate.
    """
    ex = E.dense(budget)
    X, y = E.dataset()
    meas, pred, no_hidden, linear, wrong_table = [], [], [], [], []
    for name in th.TABLES:
        stats = {k: ex[f"{k}_{name}"] for k in ("vv", "K", "zeta", "zz", "H")}
        c = sm.coefficients_from_statistics(X, y, name, ex["n"], stats)
        meas.append(ex[f"coef_{name}"])
        pred.append(c)
        lin = c.copy()
        lin[..., 2:] = 0.0
        linear.append(lin)
        no_hidden.append(sm.coefficients_from_statistics(X, y, name, ex["n"], stats, freeze_hidden=True))
        wrong_table.append(sm.coefficients_from_statistics(X, y, "sp" if name == "mup" else "mup", ex["n"], stats))
    cat = np.concatenate
    scale = float(np.max(np.abs(cat(pred))))
    return Result(
        Exact("one-step output coefficients c_ik (all parametrizations, all draws)", predicted=cat(pred),
              measured=cat(meas), atol=1e-9 * scale,
              why="float64 round-off of products of width-24 matrices and of rates up to n = 24 (1e-9 of the largest "
                  "coefficient: ~1e4 roundings amplified by the rate multipliers)",
              rivals={"the hidden layer's update left out": cat(no_hidden),
                      "the linearized step (eta^2, eta^3 terms dropped)": cat(linear),
                      "the other table's rates on the same draws (mup <-> sp)": cat(wrong_table)}),
        detail=f"{ex['n_seeds']} dense draws per parametrization at width {ex['n']}; max |c| = {scale:.3g}",
        arrays={}, seed=E.SEED)


def _moments(coef: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per example: E c0^2, E c1, E c1^2 over the seeds, and their standard errors."""
    parts = [coef[:, :, 0] ** 2, coef[:, :, 1], coef[:, :, 1] ** 2]
    return (np.concatenate([p.mean(axis=0) for p in parts]),
            np.concatenate([p.std(axis=0, ddof=1) for p in parts]) / np.sqrt(coef.shape[0]))


@claim("steplab.reduced_draw_has_the_dense_law", paper=STEPLAB, provenance="derived", kind="statistical",
       source="derived here",
       statement="Drawing the five Gram statistics from a Wishart(n) and an independent Wishart(n - 1) matrix of size "
                 "d + 1 (Bartlett) and |V|^2 ~ sigma_V^2 chi2_n gives the one-step coefficients the law of a dense "
                 "draw at the same finite width.",
       latex=r"(c_0, c_1)\big|_{\rm reduced} \overset{d}{=} (c_0, c_1)\big|_{\rm dense},\ n = 24")
def reduced_draw_has_the_dense_law(budget) -> Result:
    r"""μP at width 24: per-example :math:`\mathbb{E}c_0^2`, :math:`\mathbb{E}c_1` and :math:`\mathbb{E}c_1^2` of reduced
    draws against dense NumPy draws (independent seeds) whose statistics go through the same algebra
    (:func:`sims.mup_transfer.coefficients_from_statistics`, itself checked against autodiff by
    ``steplab.reduced_algebra_reproduces_gd_step``).

    SE: both sides' in quadrature; z = 4.5 for 192 correlated comparisons (a false alarm below ~0.1 %). Rival: the
    width limit's values (:math:`f_0 = 0`, :math:`c_1 = \kappa X^\top X y/m`), which a finite width must not match.
    """
    ex = E.law(budget)
    X, y = E.dataset()
    mr, sr = _moments(ex["reduced"])
    md, sd_ = _moments(ex["dense"])
    lin = th.limit_kernel_factor("mup", E.D) * X.T @ X @ y / E.M
    limit = np.concatenate([np.zeros(E.M), lin, lin**2])
    return Result(
        Statistical("per-example E c0^2, E c1, E c1^2 (reduced vs dense)", estimate=mr, se=np.hypot(sr, sd_),
                    predicted=md, z=4.5, why="both sides' standard errors in quadrature; z = 4.5 for 192 comparisons",
                    rivals={"the width limit (f0 = 0, c1 = kappa X^T X y / m)": limit}),
        detail=f"{ex['n_seeds']} reduced and {ex['n_seeds']} dense draws at width {ex['n']}",
        arrays={"reduced": mr, "dense": md}, seed=E.SEED)
