r"""Checkpoint merging as an implicit decay, and AdamW's weights as a moving average of its updates.

Averaging checkpoints :math:`x_{t_k}` of a constant-step run with weights :math:`w_k` rewrites as one run with
per-step rate :math:`\eta(1 - C_s)`, :math:`C_s = \sum_{t_k\le s}w_k` (:func:`theory.noisy_quadratic.merge_effective_schedule`):
exact for a fixed gradient sequence, approximate when gradients depend on the iterate.
"""
from __future__ import annotations

import numpy as np

import theory.noisy_quadratic as th
from paper_checks import STEPLAB, Exact, Paper, Rate, Result, claim, fit_slope
from paper_checks.noisy_quadratic import _experiments as E

PAPER = Paper(key="tian2025", title="WSM: Decay-Free Learning Rate Schedule via Checkpoint Merging for LLM Pre-training",
              authors="C. Tian, J. Wang, Q. Zhao, K. Chen, J. Liu, Z. Liu, J. Mao, W. X. Zhao, Z. Zhang, J. Zhou",
              year=2025, arxiv="2507.17634")
WANG = Paper(key="wang2024", title="How to set AdamW's weight decay as you scale model and dataset size",
             authors="X. Wang, L. Aitchison", year=2024, arxiv="2405.13698")


@claim("tian2025.merging_equals_decay", paper=PAPER, provenance="derived", kind="exact",
       source="abstract (merging emulates decay); the identity derived here",
       quote="WSM provides a unified theoretical foundation for emulating various decay strategies—including cosine "
             "decay, linear decay and inverse square root decay—as principled model averaging schemes",
       where="arXiv:2507.17634v2, abstract",
       statement="For a fixed gradient sequence, merging the constant-step checkpoints x_{t_k} with weights w_k equals "
                 "the last iterate of one run with step eta (1 - C_s), C_s = sum_{t_k <= s} w_k: uniform weights on the "
                 "last W checkpoints are a linear decay over W steps.",
       latex=r"\sum_k w_k x_{t_k} = x_0 - \sum_s \eta\,(1 - C_s)\,g_s")
def merging_equals_decay(budget) -> Result:
    r"""A flat mode (:math:`\lambda = 0`: the gradients are the noise, independent of the iterate) of paired runs:
    the merged checkpoints of the constant run against the final iterate of the :math:`\eta_{\rm eff}` run.

    Rival: merging changes nothing, the merged model is the last checkpoint.
    """
    ex = E.merging(budget)
    merged, decayed, last = ex["merged"][:, 0], ex["decayed"][:, 0], ex["last"][:, 0]
    scale = float(np.max(np.abs(ex["updates"][:, :, 0]))) * E.MERGE_ETA * E.MERGE_T
    checks = [Exact("merged checkpoints vs the decayed run's x_T (flat mode, every run)", predicted=merged,
                    measured=decayed, atol=1e-13 * scale, rtol=0.0,
                    rivals={"the merged model is just the last checkpoint": last},
                    why=f"two float64 sums of {E.MERGE_T} terms of size up to eta*max|g|: round-off, 1e-13 of "
                        f"eta*T*max|g| = {scale:.3g}")]
    err = float(np.max(np.abs(merged - decayed)))
    return Result(checks, detail=f"max |merged - decayed| = {err:.2e} over {merged.size} runs (window {E.MERGE_WINDOW}, "
                                 f"uniform weights); max |last - merged| = {np.max(np.abs(last - merged)):.3g}",
                  seed=E.SEED + 2, arrays={"eta_eff": ex["eta_eff"], "identity_error": np.abs(merged - decayed)})


@claim("steplab.merging_error_grows_with_curvature_window", paper=STEPLAB, provenance="derived", kind="rate",
       source="found here (where tian2025's merging-decay identity stops being exact; the paper states no error law)",
       statement="On a noisy quadratic the gradients depend on the iterates and merging only approximates the decay: the "
                 "root-mean-square gap between the merged model and the decayed run grows linearly in curvature x "
                 "window, eta lambda W (leading order).",
       latex=r"\sqrt{E(\bar x - y_T)^2} \propto \eta\lambda W")
def merging_error_scaling(budget) -> Result:
    r"""RMS gap :math:`\sqrt{E(\bar x - y_T)^2}` over the paired runs, per mode, against :math:`\eta\lambda W` (0.02..0.64).

    The slope's next-order term is the deviation of the exact gap's slope (:func:`theory.noisy_quadratic.merge_error_variance`)
    from 1 over the same range. Rivals: the gap grows like :math:`(\eta\lambda W)^2`, or like its square root.
    """
    ex = E.merging(budget)
    lam = ex["lam"][1:]
    gap2 = (ex["merged"][:, 1:] - ex["decayed"][:, 1:]) ** 2
    n = gap2.shape[0]
    ms, se_ms = gap2.mean(axis=0), gap2.std(axis=0, ddof=1) / np.sqrt(n)
    rms, se_rms = np.sqrt(ms), se_ms / (2 * np.sqrt(ms))
    x = E.MERGE_ETA * lam * E.MERGE_WINDOW
    exact = np.sqrt(th.merge_error_variance(lam, E.MERGE_ETA, ex["checkpoints"], ex["weights"], E.MERGE_T))
    exact_slope, _ = fit_slope(x, exact)
    checks = [Rate("log-log slope of the RMS gap in eta*lambda*W", x=x, y=rms, sigma=se_rms, predicted=1.0,
                   next_order=abs(exact_slope - 1.0), z=4.0,
                   rivals={"the gap grows like (ηλW)²": 2.0, "the gap grows like √(ηλW)": 0.5},
                   why="weighted fit with Monte Carlo standard errors; next order: the exact gap's own slope over this "
                       f"range ({exact_slope:.3f})")]
    return Result(checks, detail="RMS gap / exact: " + ", ".join(f"{a:.3g}: {r:.3g}/{e:.3g}" for a, r, e in zip(x, rms, exact)),
                  seed=E.SEED + 2, arrays={"x": x, "rms": rms, "se": se_rms, "exact": exact})


@claim("wang2024.adamw_weights_are_an_ema", paper=WANG, provenance="derived", kind="exact",
       source="abstract (AdamW's weights as an exponential moving average of updates, at a given learning rate); the "
              "any-schedule weights c_t are Bergsma et al.'s extension (arXiv:2502.15938, 'coefficients governed by the LR "
              "schedule'), re-derived here",
       quote="We show that weights learned by AdamW can be understood as an exponential moving average (EMA) of recent "
             "updates.",
       where="arXiv:2405.13698v3, abstract",
       statement="With decoupled weight decay lambda and any schedule, x_T = prod(1 - eta_t lambda) x_0 - (1/lambda) "
                 "sum_t c_t u_t with c_t = eta_t lambda prod_{k>t}(1 - eta_k lambda): an exponential moving average of "
                 "the updates.",
       latex=r"x_T = \textstyle\prod_t(1-\eta_t\lambda)x_0 - \frac1\lambda\sum_t c_t u_t,\ c_t = \eta_t\lambda\prod_{k>t}(1-\eta_k\lambda)")
def adamw_ema(budget) -> Result:
    r"""The decoupled-decay run (WSD schedule, :math:`\lambda = 0.5`) on the flat mode, whose update directions are
    read off the paired constant-step run, against the moving-average formula.

    Rival: decay acts as a first-order penalty, :math:`c_t = \eta_t\lambda` without the products.
    """
    ex = E.merging(budget)
    u = ex["updates"][:, :, 0]
    c = th.adamw_ema_weights(ex["wsd"], E.MERGE_WD)
    keep = np.prod(1 - ex["wsd"] * E.MERGE_WD)
    pred = keep * ex["x0"][0] - u @ c / E.MERGE_WD
    naive = (1 - np.sum(ex["wsd"]) * E.MERGE_WD) * ex["x0"][0] - u @ (ex["wsd"] * E.MERGE_WD) / E.MERGE_WD
    checks = [Exact("x_T of the decoupled-decay run (every run)", predicted=pred, measured=ex["adamw"][:, 0],
                    atol=1e-12, rtol=1e-12, rivals={"decay as a first-order penalty, c_t = eta_t lambda": naive},
                    why="the same linear recursion summed in another order: round-off")]
    return Result(checks, detail=f"max |x_T - EMA formula| = {np.max(np.abs(pred - ex['adamw'][:, 0])):.2e}; "
                                 f"sum c_t = {c.sum():.6f} (= 1 - prod(1 - eta_t lambda) = {1 - keep:.6f})",
                  seed=E.SEED + 2, arrays={"weights": c})
