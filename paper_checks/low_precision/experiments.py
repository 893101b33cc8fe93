r"""The runs of the ``low_precision`` topic, as cached experiments (read by the claims and the figures).

Every run is :func:`sims.low_precision.gd` on independent one-dimensional problems :math:`a(w - w^*)^2/2` with
:math:`w^*` drawn uniformly in :math:`[1, 1.5)` (float32) and the start :math:`w_0 = 255/128`, the largest bf16 value
below 2: start and minimizer share the binade :math:`[1, 2)`, where bf16's ulp is :math:`2^{-7}`. The step sizes are
float32 numbers; the experiments return the float32 values the runs used, and the claims hand exactly those to
:mod:`theory.low_precision`.
"""
from __future__ import annotations

import jax
import numpy as np

from paper_checks import Budget, experiment
from sims import low_precision as S

SEED = 20260717
W0 = 255 / 128
ULP = 2.0**-7  # bf16's ulp on [1, 2)
ULP32 = 2.0**-23  # float32's
#: eta a for the round-to-nearest runs: 0.01 .. 0.5, across the freeze-step window's edge (between 0.05 and 0.07)
ETA_RN = (0.01, 0.015, 0.02, 0.03, 0.05, 0.07, 0.1, 0.15, 0.2, 0.3, 0.5)
#: the float32-storage runs: eta a large enough to reach float32's band within RN_F32_STEPS steps, and with
#: 1/(2 eta a) far from an integer. A float32 w* lies on float32's own grid, so the error is a whole number k of
#: float32 ulps, and at 1/(2 eta a) ~ k (0.05, 0.1, 0.5) the float32 product eta a * k ulp rounds onto the tie ulp/2
#: itself: ties-to-even then decides, which the exact-arithmetic band does not model
ETA_F32 = (0.07, 0.15, 0.2, 0.3)
RN_STEPS = 400  # the slowest bf16 run (eta a = 0.01) freezes by step 80
RN_F32_STEPS = 600  # float32 at eta a = 0.07: ln(2 eta a e0 / ulp32) / eta a < 220
#: eta a for the stochastic-rounding runs, and their two horizons (the second twice the first)
ETA_SR = (0.05, 0.2, 0.6)
SR_STEPS = 1600  # 80 / 0.05: the two-point set is reached (~ln(128)/eta a steps) and mixed long before 800


def _minimizers(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).uniform(1.0, 1.5, n).astype(np.float32).astype(np.float64)


@experiment("low_precision.rn_runs")
def rn_runs(budget: Budget) -> dict:
    """Round-to-nearest bf16 runs at every eta a of ``ETA_RN``, and float32-stored runs at ``ETA_F32``, on the same
    minimizers: the final iterates and the last step at which each run moved."""
    ws = _minimizers(budget.pick(quick=400, full=3000), SEED)
    bf = S.gd(ws, np.array(ETA_RN), w0=W0, n_steps=RN_STEPS, storage="bf16_rn")
    f32 = S.gd(ws, np.array(ETA_F32), w0=W0, n_steps=RN_F32_STEPS, storage="float32")
    return {"w_star": bf["w_star"], "eta_a": bf["eta_a"], "w": bf["w"], "last_move": bf["last_move"],
            "eta_a_f32": f32["eta_a"], "w_f32": f32["w"], "last_move_f32": f32["last_move"],
            "diverged": bf["diverged"] | np.any(f32["diverged"])}


@experiment("low_precision.sr_runs")
def sr_runs(budget: Budget) -> dict:
    """Stochastic-rounding bf16 runs at every eta a of ``ETA_SR`` from the same start, recorded at SR_STEPS / 2 and
    SR_STEPS (independent chains: one per minimizer and step size)."""
    ws = _minimizers(budget.pick(quick=3000, full=12000), SEED + 1)
    out = S.gd(ws, np.array(ETA_SR), w0=W0, n_steps=SR_STEPS, storage="bf16_sr", key=jax.random.key(SEED + 2),
               snapshots=(SR_STEPS // 2, SR_STEPS))
    return {"w_star": out["w_star"], "eta_a": out["eta_a"], "w_half": out["snapshots"][:, 0],
            "w_end": out["snapshots"][:, 1], "last_move": out["last_move"], "diverged": out["diverged"]}


#: AdamW under cosine decay: T steps, peaks ulp / r, gradients spanning 10 decades (the first near eps)
ADAM_T = 100
ADAM_R = (0.5, 0.7, 0.9, 1.2, 1.6)  # ulp / (eta_max |u|) in (0, 2): the path stays in [1, 2) for r >= 0.5 at T = 100
ADAM_GRADS = (1e-7, 1e-3, 1e3)
ADAM_EPS = 1e-8
ADAM_DECAYS = (0.0, 0.05)
ADAM_W0 = 1.9921875  # bf16's largest value below 2 (the start the float64 reference shares)


@experiment("low_precision.adamw_runs")
def adamw_runs(budget: Budget) -> dict:
    """AdamW (beta 0.9/0.999, eps 1e-8) with cosine decay on linear losses, bf16 round-to-nearest weights and the
    float64 reference path (recorded), at each decay of ``ADAM_DECAYS`` and peak ulp / r. Deterministic: the
    budget does not change it (it costs milliseconds)."""
    peaks = ULP / np.array(ADAM_R)
    out = {"peaks": peaks, "grads": np.array(ADAM_GRADS)}
    for k, lam in enumerate(ADAM_DECAYS):
        bf = S.adamw(np.array(ADAM_GRADS), peaks, w0=ADAM_W0, n_steps=ADAM_T, eps=ADAM_EPS, weight_decay=lam)
        ref = S.adamw(np.array(ADAM_GRADS), peaks, w0=ADAM_W0, n_steps=ADAM_T, eps=ADAM_EPS, weight_decay=lam,
                      storage="float64", record=True)
        out[f"last_move_{k}"] = bf["last_move"]
        out[f"w_{k}"] = bf["w"]
        out[f"ref_w_{k}"] = ref["w_before"]
        out[f"ref_delta_{k}"] = ref["delta"]
    return out


#: runs that start two binades up: w* in [1, 2), w0 = 255/64 in [2, 4) where the ulp is 2^-6
BINADE_W0 = 255 / 64
BINADE_ETA = (0.01, 0.03, 0.1, 0.3)
BINADE_STEPS = 600  # eta a = 0.01 from e0 < 3: the float path needs ln(3 * 0.02 * 128) / 0.01 ~ 200 steps


@experiment("low_precision.binade_runs")
def binade_runs(budget: Budget) -> dict:
    """Round-to-nearest bf16 runs from 255/64 towards w* uniform in [1, 2): the path crosses from the binade
    [2, 4) (ulp 2^-6) into w*'s (ulp 2^-7) unless it freezes first."""
    ws = np.random.default_rng(SEED + 3).uniform(1.0, 2.0, budget.pick(quick=500, full=3000))
    out = S.gd(ws.astype(np.float32).astype(np.float64), np.array(BINADE_ETA), w0=BINADE_W0, n_steps=BINADE_STEPS)
    return {"w_star": out["w_star"], "eta_a": out["eta_a"], "w": out["w"], "diverged": out["diverged"]}


@experiment("low_precision.cast_runs")
def cast_runs(budget: Budget) -> dict:
    """bf16 runs whose update is a float32 difference cast to bf16 (``storage="bf16_rn_f32"``: two roundings), at
    every eta a of ``ETA_RN``, from 255/128 towards w* uniform in [1, 1.5): many minimizers, since a double rounding
    that moves the freeze needs the last decision within 2^-17 ulp of a tie."""
    ws = _minimizers(budget.pick(quick=4000, full=16000), SEED + 4)
    out = S.gd(ws, np.array(ETA_RN), w0=W0, n_steps=RN_STEPS, storage="bf16_rn_f32")
    return {"w_star": out["w_star"], "eta_a": out["eta_a"], "w": out["w"], "diverged": out["diverged"]}


#: Kahan-compensated bf16 runs: settle for KAHAN_SETTLE steps, then average over KAHAN_WINDOW
KAHAN_ETA = (0.1, 0.3)
KAHAN_SETTLE = 600  # 60 / 0.1: the compensated sum z converges like (1 - eta a)^t
KAHAN_WINDOW = 16384  # the window's transient term 3 / KAHAN_WINDOW stays far below the bias bound 3 * 2^-10


@experiment("low_precision.kahan_runs")
def kahan_runs(budget: Budget) -> dict:
    """Kahan-compensated bf16 gradient descent (weight and compensation in bf16, every result rounded) from 255/128
    towards w* uniform in [1, 1.5), and the time-averaged error over the window after the settling steps."""
    ws = _minimizers(budget.pick(quick=200, full=1000), SEED + 5)
    out = S.kahan_gd(ws, np.array(KAHAN_ETA), w0=W0, n_steps=KAHAN_SETTLE + KAHAN_WINDOW, average_from=KAHAN_SETTLE)
    return {"w_star": ws, "eta_a": np.array(KAHAN_ETA).astype(np.float32).astype(np.float64),
            "mean_error": out["mean_error"], "diverged": out["diverged"]}


#: eta a across 1, where the round-to-nearest chain starts to overshoot the minimizer by more than it approaches;
#: eleven values and the same sizes as ``rn_runs`` (its compiled program is reused)
ETA_EDGE = (0.5, 0.8, 0.9, 0.95, 0.99, 1.02, 1.05, 1.1, 1.2, 1.5, 1.9)


@experiment("low_precision.edge_runs")
def edge_runs(budget: Budget) -> dict:
    """Round-to-nearest bf16 runs from 255/128 towards w* uniform in [1, 1.5) at eta a on both sides of 1."""
    ws = _minimizers(budget.pick(quick=400, full=3000), SEED + 6)
    out = S.gd(ws, np.array(ETA_EDGE), w0=W0, n_steps=RN_STEPS, storage="bf16_rn")
    return {"w_star": out["w_star"], "eta_a": out["eta_a"], "w": out["w"], "last_move": out["last_move"],
            "diverged": out["diverged"]}


#: RN gradient descent with Gaussian gradient noise of 10 ulps: one minimizer (f = 0.3 of a cell), chains differ by
#: their noise; the update noise eta a sigma crosses ~0.15 ulp inside the grid
NOISE_SIGMA_ULPS = 10.0
NOISE_ETA = (0.01, 0.015, 0.02, 0.05, 0.1)
NOISE_W_STAR = float(np.float32(1.25 + 0.3 * 2.0**-7))
NOISE_K0 = 40  # the start 40 ulps above the minimizer's cell: w0 = L + 40 ulp, inside [1, 2)
NOISE_STEPS, NOISE_WINDOW = 1200, 600  # from 40 ulps, (1 - 0.01)^600 ~ e^-6: the window sees the settled chain


@experiment("low_precision.noisy_runs")
def noisy_runs(budget: Budget) -> dict:
    """RN bf16 gradient descent with gradient noise sigma = 10 ulps at each eta a of ``NOISE_ETA``: the mean of
    (w_t - w*)^2 over the last 600 of 1200 steps, per chain (independent chains, one noise stream each)."""
    n = budget.pick(quick=1000, full=8000)
    base = np.floor(NOISE_W_STAR / ULP) * ULP
    out = S.noisy_gd(np.full(n, NOISE_W_STAR), np.array(NOISE_ETA), NOISE_SIGMA_ULPS * ULP, w0=base + NOISE_K0 * ULP,
                     n_steps=NOISE_STEPS, window=NOISE_WINDOW, key=jax.random.key(SEED + 7))
    return {"eta_a": np.array(NOISE_ETA).astype(np.float32).astype(np.float64), "mean_sq": out["mean_sq"] / ULP**2,
            "diverged": out["diverged"]}
