r"""The simulations of the batch-size topic: named, cached, budgeted experiments.

Claims and ``figures/batch_size.py`` both read these; figures never simulate.

* ``batch_size.one_step``: Monte Carlo of one minibatch step on a rotated 20-dimensional quadratic
  (:func:`sims.batch_size.one_step`), at :math:`B = 1, 4, 16, 64`;
* ``batch_size.hyperbola``: exact greedy steps to a target on the diagonal NQM over a grid of batch sizes
  (:func:`theory.batch_size.greedy_steps`, a deterministic moment recursion), with :math:`S_{\min}`, :math:`E_{\min}`
  and the batch size where the steps--examples product leaves :math:`1 \pm 10\,\%`;
* ``batch_size.linear_rule``: SGD on an 8-mode NQM at :math:`\eta = \eta_1 B` (:func:`sims.nqm.simulate`), inside the
  rule's range, beyond it, and beyond the divergence edge;
* ``batch_size.sign_rule``: signSGD on :math:`x^2/2` with additive noise :math:`\sigma/\sqrt B`
  (:func:`sims.sign_floor.simulate`) under :math:`\eta \propto \sqrt B` and :math:`\eta \propto B`, and far along the
  square-root rule.
"""
from __future__ import annotations

import math

import jax
import numpy as np
from scipy import optimize

import sims.batch_size as sb
import sims.nqm as sn
import sims.sign_floor as ssf
import theory.batch_size as th
from paper_checks import Budget, experiment

SEED = 20261202

# ----------------------------------------------------------------------------- one step
ONE_STEP_D = 20
ONE_STEP_B = np.array([1, 4, 16, 64])


def one_step_problem() -> dict:
    r"""The quadratic of the one-step claims: :math:`H = Q\,\mathrm{diag}(\mathrm{geomspace}(1, 0.01, 20))\,Q^\top` with
    :math:`Q` a random orthogonal matrix, :math:`\theta \sim N(0, I)`, :math:`\Sigma = \mathrm{diag}(U(0.5, 2))` (one fixed
    draw)."""
    rng = np.random.default_rng(SEED)
    q, _ = np.linalg.qr(rng.standard_normal((ONE_STEP_D, ONE_STEP_D)))
    H = q @ np.diag(np.geomspace(1.0, 0.01, ONE_STEP_D)) @ q.T
    H = 0.5 * (H + H.T)
    theta = rng.standard_normal(ONE_STEP_D)
    Sigma = np.diag(rng.uniform(0.5, 2.0, ONE_STEP_D))
    return {"H": H, "theta": theta, "Sigma": Sigma, "G": H @ theta}


def ratio_and_se(num: np.ndarray, den: np.ndarray, power: int = 1) -> tuple[np.ndarray, np.ndarray]:
    r"""Means :math:`\bar a^{p}/\bar b` over the last axis and their delta-method standard errors (from the sample
    covariance of :math:`(a, b)` over the independent draws)."""
    n = num.shape[-1]
    ma, mb = num.mean(-1), den.mean(-1)
    va, vb = num.var(-1, ddof=1), den.var(-1, ddof=1)
    cab = ((num - ma[..., None]) * (den - mb[..., None])).sum(-1) / (n - 1)
    r = ma**power / mb
    ga, gb = power * ma ** (power - 1) / mb, -(ma**power) / mb**2
    se = np.sqrt((ga**2 * va + gb**2 * vb + 2 * ga * gb * cab) / n)
    return r, se


@experiment("batch_size.one_step")
def one_step(budget: Budget) -> dict:
    """Per-draw slope and curvature of the loss along one minibatch step, B = 1, 4, 16, 64; Rademacher examples."""
    p = one_step_problem()
    n = budget.pick(quick=4096, full=40960)   # whole chunks of sims.batch_size.CHUNK
    out = sb.one_step(jax.random.key(SEED + 1), p["theta"], p["H"], p["Sigma"], ONE_STEP_B, n_draws=n)
    return {"batch_size": ONE_STEP_B, "d1": out["d1"], "d2": out["d2"]}


# ----------------------------------------------------------------------------- steps against examples
HYP_D = 200
HYP_TARGET = 0.1
HYP_X = np.array([0.01, 0.03, 0.1, 0.3, 1.0, 3.2, 10.0, 32.0, 100.0])   # B / B_crit
WINDOW = 0.10   # the hyperbola "holds" where its product is within 10 % of 1


def hyperbola_problem() -> dict:
    r"""Diagonal NQM: :math:`\lambda_i = 1/i` (:math:`i = 1..200`), per-example noise :math:`\sigma_i^2 = \lambda_i`
    (covariance proportional to the Hessian), start :math:`E x_i^2 = 1/\lambda_i` (equal initial loss per mode)."""
    lam = 1.0 / np.arange(1, HYP_D + 1)
    return {"lam": lam, "sigma2": lam.copy(), "m0": 1.0 / lam, "target": HYP_TARGET}


def _product_at(p: dict, b: float, s_min: float, e_min: float) -> float:
    r = th.greedy_steps(p["lam"], p["sigma2"], p["m0"], b, p["target"])
    return float(th.hyperbola_product(r["steps"], r["examples"], s_min, e_min)[0])


@experiment("batch_size.hyperbola")
def hyperbola(budget: Budget) -> dict:
    r"""Exact greedy steps to :math:`0.1\,L_0` at :math:`B/B_{\rm crit}` from 0.01 to 100 (more points at full), the
    limits :math:`S_{\min}` (:math:`B \to \infty`) and :math:`E_{\min}` (:math:`B \to 0`), and the batch size where the
    product first exceeds :math:`1 + 10\,\%` (Brent's method on the recursion)."""
    p = hyperbola_problem()
    s_min = th.greedy_min_steps(p["lam"], p["sigma2"], p["m0"], p["target"])
    e_min = th.greedy_min_examples(p["lam"], p["sigma2"], p["m0"], p["target"])
    b_crit = e_min / s_min
    x = HYP_X if budget.name != "full" else np.geomspace(0.01, 100.0, 25)
    r = th.greedy_steps(p["lam"], p["sigma2"], p["m0"], x * b_crit, p["target"])
    edge = optimize.brentq(lambda lx: _product_at(p, math.exp(lx) * b_crit, s_min, e_min) - (1 + WINDOW),
                           math.log(1.0), math.log(10.0), xtol=1e-4)
    return {"x": x, "batch_size": x * b_crit, "steps": r["steps"], "examples": r["examples"],
            "noise_start": r["noise_start"], "noise_end": r["noise_end"], "s_min": s_min, "e_min": e_min,
            "b_crit": b_crit, "edge_x": math.exp(edge)}


# ----------------------------------------------------------------------------- the linear rule (SGD)
LIN_LAM = np.geomspace(1.0, 0.25, 8)
LIN_SIGMA = np.ones(8)
LIN_ETA1 = 0.05                                     # eta = eta1 B; B_max = 2/(eta1 lam_max) = 40
LIN_B = np.array([1, 2, 4, 6, 8, 12, 16, 24, 32, 48, 60])
LIN_T = 2000


@experiment("batch_size.linear_rule")
def linear_rule(budget: Budget) -> dict:
    r"""SGD at :math:`\eta = 0.05B` on the 8-mode NQM (:math:`\lambda` from 1 to 1/4, :math:`\sigma_i = 1`), from 0, its
    time-averaged loss after the burn-in; :math:`B = 48, 60` lie beyond :math:`B_{\max} = 40`."""
    n = budget.pick(quick=64, full=256)
    T = budget.pick(quick=1200, full=LIN_T)   # >= 1026: B = 48 (|1 - eta lam_max| = 1.4) overflows 1e150 by then
    burn = T // 4
    etas = np.repeat((LIN_ETA1 * LIN_B)[:, None], T, axis=1)
    out = sn.simulate(jax.random.key(SEED + 2), T=T, burn=burn, eta=etas, x0=np.zeros(LIN_LAM.size), lam=LIN_LAM,
                      sigma_a=LIN_SIGMA, batch_size=LIN_B, n_chains=n)
    return {"batch_size": LIN_B, "mean_loss": out["mean_loss"], "diverged": out["diverged"],
            "diverged_step": out["diverged_step"], "T": T, "burn": burn}


# ----------------------------------------------------------------------------- the square-root rule (sign)
SIGN_ETA1 = 1e-3                   # eta at B = 1; sigma = 1, a = 1
SIGN_B = np.array([1, 4, 16, 64])
SIGN_FAR_B = np.array([256, 362, 512, 1024, 4096])   # along the square-root rule, past its range


def sign_configs() -> dict:
    """(eta, B, rule) of every signSGD configuration: B = 1 once, then the square-root and linear rules, then far B."""
    sq = SIGN_ETA1 * np.sqrt(SIGN_B)
    lin = SIGN_ETA1 * SIGN_B[1:]
    far = SIGN_ETA1 * np.sqrt(SIGN_FAR_B)
    return {"eta": np.concatenate([sq, lin, far]),
            "batch_size": np.concatenate([SIGN_B, SIGN_B[1:], SIGN_FAR_B]),
            "rule": np.array(["sqrt"] * SIGN_B.size + ["linear"] * (SIGN_B.size - 1) + ["far"] * SIGN_FAR_B.size)}


@experiment("batch_size.sign_rule", uses=("sign_floor",))
def sign_rule(budget: Budget) -> dict:
    r"""signSGD on :math:`x^2/2`, additive Gaussian noise :math:`1/\sqrt B`, from :math:`x_0 = \eta/2` (the lattice offset
    of the exact chain), the time average of :math:`f` after the burn-in per chain."""
    c = sign_configs()
    n = budget.pick(quick=64, full=256)
    T = budget.pick(quick=9000, full=16000)
    burn = budget.pick(quick=4500, full=6000)
    out = ssf.simulate(jax.random.key(SEED + 3), eta=c["eta"], x0=0.5 * c["eta"][:, None], h=1.0, method="sign",
                       sigma_a=1.0 / np.sqrt(c["batch_size"]), T=T, burn=burn, n_chains=n)
    return {**c, "mean_f": out["mean_f"], "diverged": out["diverged"], "T": T, "burn": burn}


# ----------------------------------------------------------------------------- the second moment's half-life
HL_BETA2 = 0.999                  # beta2 at the reference batch size B0 = 1: a half-life of 692.8 examples
HL_RULE_B = np.array([1, 4, 16, 64, 256, 512])
HL_FIXED_B = np.array([4, 16, 64])
HL_LINEAR_B = np.array([4, 16, 64, 128, 176, 224, 256, 512])   # 176, 224 around the 10 % edge (B = 194)
HL_STEPS = 720                    # > the 693 steps of the B = 1 half-life
HL_EDGE_B = np.array([96, 128, 160, 192, 224, 256, 320])   # the first-order rule around its 10 % edge (B = 194)
HL_EDGE_STEPS = 32                # > the 7 steps of the slowest of them


def half_life_configs() -> dict:
    """(beta2, B, rule) of every second-moment configuration: the half-life rule (B = 1 is the reference), beta2 fixed,
    and the first-order rule 1 - beta2 = (1 - beta2(1)) B."""
    rule = th.half_life_beta2(HL_BETA2, 1.0, HL_RULE_B.astype(float))
    lin = 1 - (1 - HL_BETA2) * HL_LINEAR_B
    return {"beta2": np.concatenate([rule, np.full(HL_FIXED_B.size, HL_BETA2), lin]),
            "batch_size": np.concatenate([HL_RULE_B, HL_FIXED_B, HL_LINEAR_B]).astype(float),
            "rule": np.array(["half_life"] * HL_RULE_B.size + ["fixed"] * HL_FIXED_B.size
                             + ["linear"] * HL_LINEAR_B.size)}


@experiment("batch_size.half_life")
def half_life(budget: Budget) -> dict:
    r"""Adam's second-moment EMA from 0 on pure-noise minibatch gradients (:func:`sims.batch_size.second_moment_ema`): the
    mean rise of :math:`v_t/E\hat g^2` over chains for every configuration of :func:`half_life_configs`."""
    c = half_life_configs()
    n = budget.pick(quick=1024, full=4096)
    out = sb.second_moment_ema(jax.random.key(SEED + 4), c["beta2"], c["batch_size"], n_steps=HL_STEPS, n_chains=n)
    # the edge runs are short (half-lives of 3-7 steps), so many chains are cheap: the ratio moves by only 0.1 per
    # e-fold of B there, and locating its 0.9 crossing to ~10 % in B needs its per-B error near 0.3 %
    n_edge = budget.pick(quick=16384, full=65536)
    edge = sb.second_moment_ema(jax.random.key(SEED + 5), 1 - (1 - HL_BETA2) * HL_EDGE_B, HL_EDGE_B.astype(float),
                                n_steps=HL_EDGE_STEPS, n_chains=n_edge)
    return {**c, "mean": out["mean"], "se": out["se"], "edge_batch_size": HL_EDGE_B.astype(float),
            "edge_mean": edge["mean"], "edge_se": edge["se"]}
