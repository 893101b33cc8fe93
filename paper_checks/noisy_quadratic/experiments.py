r"""The simulations of the noisy-quadratic topic: named, cached, budgeted experiments.

Claims and ``figures/noisy_quadratic.py`` both call these; figures never simulate. The quadratic
experiments run on the shared simulator :mod:`sims.nqm`; each groups its configurations into one
call (one compiled kernel: the method, the horizon and the recording grid are the static parts).
"""
from __future__ import annotations

import math

import jax
import numpy as np

import sims.noisy_quadratic as sq
import sims.noisy_quadratic_sampled as ss
import sims.nqm as sn
import theory.noisy_quadratic as th
import theory.noisy_quadratic_sampled as ts
from paper_checks import Budget, experiment

SEED = 20251130

# ----------------------------------------------------------------------------- schedules
D_MODES = 64
SCHED_T = 3000
SCHED_REC = 30
PLATEAU_ETA = 1.2  # the WSD/constant peak: eta*lambda up to 1.2, where 2 - eta*lambda differs from 2
HORIZONS = (300, 1000, 3000, 10000)
SIM_HORIZONS = (300, 1000)   # simulated D2Z vs cosine besides T = 3000 (the schedules experiment)


def spectrum() -> tuple[np.ndarray, np.ndarray]:
    r"""The NQM of the schedule claims: :math:`\lambda_i` log-spaced on :math:`[10^{-3}, 1]`, noise :math:`\sigma_i^2 = \lambda_i`."""
    lam = np.logspace(0.0, -3.0, D_MODES)
    return lam, np.sqrt(lam)


@experiment("noisy_quadratic.schedules")
def schedules(budget: Budget) -> dict:
    """Constant and WSD at eta = 1.2, and D2Z and cosine-to-10 % at their tuned peaks; SGD on the 64-mode NQM from x0 = 1."""
    lam, sa = spectrum()
    # 1536 runs at full (2048 before the D2Z-cosine horizons and the worst-case search were added: this keeps the
    # topic's full-budget time unchanged; the plateau excess still resolves 0.15 %)
    n = budget.pick(quick=128, full=1536)
    _, p_d2z = th.tuned_final_loss(lam, sa, "d2z", SCHED_T)
    _, p_cos = th.tuned_final_loss(lam, sa, "cosine", SCHED_T)
    etas = np.stack([th.schedule("constant", SCHED_T, PLATEAU_ETA), th.schedule("wsd", SCHED_T, PLATEAU_ETA),
                     th.schedule("d2z", SCHED_T, p_d2z), th.schedule("cosine", SCHED_T, p_cos)])
    burn = SCHED_T // 2
    out = sn.simulate(jax.random.key(SEED), T=SCHED_T, eta=etas, x0=np.ones(D_MODES), lam=lam, sigma_a=sa,
                      n_chains=n, n_rec=SCHED_REC, burn=burn, paired=True)
    return {"lam": lam, "sigma_a": sa, "etas": etas, "names": np.array(["constant", "wsd", "d2z", "cosine"]),
            "peaks": np.array([PLATEAU_ETA, PLATEAU_ETA, p_d2z, p_cos]), "burn": burn, "T": SCHED_T,
            "curve": out["curve"], "mode_m2": out["mode_m2"], "diverged": out["diverged"],
            "t_rec": (SCHED_T // SCHED_REC) * np.arange(1, SCHED_REC + 1)}


@experiment("noisy_quadratic.horizons")
def horizons(budget: Budget) -> dict:
    """Tuned peaks and final losses (exact recursion) of D2Z and cosine-to-10 % over horizons T; and simulated final
    losses of both at their tuned peaks (paired runs) at the horizons of ``SIM_HORIZONS`` (T = 3000 is the schedules
    experiment's)."""
    lam, sa = spectrum()
    Ts = HORIZONS if budget.name == "full" else HORIZONS[:3]
    rows = [(th.tuned_final_loss(lam, sa, "d2z", T), th.tuned_final_loss(lam, sa, "cosine", T)) for T in Ts]
    out = {"T": np.array(Ts), "d2z": np.array([r[0][0] for r in rows]), "cosine": np.array([r[1][0] for r in rows]),
           "d2z_peak": np.array([r[0][1] for r in rows]), "cosine_peak": np.array([r[1][1] for r in rows])}
    n = budget.pick(quick=384, full=1024)
    sim = []
    for T in SIM_HORIZONS:
        k = Ts.index(T)
        etas = np.stack([th.schedule("d2z", T, out["d2z_peak"][k]), th.schedule("cosine", T, out["cosine_peak"][k])])
        run = sn.simulate(jax.random.key(SEED + 9 + T), T=T, eta=etas, x0=np.ones(D_MODES), lam=lam, sigma_a=sa,
                          n_chains=n, paired=True)
        sim.append(0.5 * np.sum(lam * run["final_x"] ** 2, axis=-1))     # (2, n): final loss per run
    out.update(sim_T=np.array(SIM_HORIZONS), sim_loss=np.stack(sim))      # (horizons, schedule, run)
    return out


# ----------------------------------------------------------------------------- last-iterate bound
ABS_SIGMA = 2.0
ABS_SCHEDULES = ("constant", "wsd", "d2z", "cosine")


def abs_schedules(T: int) -> np.ndarray:
    r"""The four schedules of the bound claim at peak :math:`1/\sqrt T` (cosine decays to 0)."""
    peak = 1 / np.sqrt(T)
    return np.stack([th.schedule(k, T, peak, floor=0.0) for k in ABS_SCHEDULES])


@experiment("noisy_quadratic.last_iterate")
def last_iterate(budget: Budget) -> dict:
    """SGD on |x| from x = 1 with subgradient noise +-2 along four schedules; |x_T| per run."""
    T = budget.pick(quick=400, full=1600)
    etas = abs_schedules(T)
    out = sq.abs_sgd(jax.random.key(SEED + 1), etas, x0=1.0, sigma=ABS_SIGMA,
                     n_chains=budget.pick(quick=4096, full=16384))
    return {"T": T, "etas": etas, "final": out["final"], "diverged": out["diverged"]}


WORST_D, WORST_G = 0.5, 1.0       # distance to the minimizer and gradient bound of the worst-case constructions
WORST_KINDS = ("constant", "d2z")  # schedules at peak 1 (the bound is tightest where the steps, not D, dominate)


def worst_case_steps(kind: str, T: int) -> np.ndarray:
    """The schedule of a worst-case construction: ``theory.noisy_quadratic.schedule(kind, T, 1.0)``."""
    return th.schedule(kind, T, 1.0)


@experiment("noisy_quadratic.worst_case")
def worst_case(budget: Budget) -> dict:
    """For each schedule of ``WORST_KINDS`` and horizon T, the convex G-Lipschitz instance that SLSQP finds worst for
    the last iterate (``sims.noisy_quadratic.worst_case_instance``), realized as a maximum of affine pieces and run
    through the subgradient method (``sims.noisy_quadratic.subgradient_max_affine``)."""
    Ts = (2, 3, 4)
    starts = budget.pick(quick=3, full=6)
    rows = []
    for kind in WORST_KINDS:
        for T in Ts:
            eta = worst_case_steps(kind, T)
            w = sq.worst_case_instance(eta, WORST_D, WORST_G, starts=starts, seed=SEED % 2**31)
            xs = [w["x1"]]
            for t in range(T - 1):
                xs.append(xs[-1] - eta[t] * w["g"][t])
            run = sq.subgradient_max_affine(w["x1"], eta, np.array(xs), w["g"], w["f"])
            rows.append((kind, T, run["value"], w["value"], w["violation"], run["activity"], run["min_gap"]))
    cols = list(zip(*rows))
    return {"kind": np.array(cols[0]), "T": np.array(cols[1]), "value": np.array(cols[2]),
            "search_value": np.array(cols[3]), "violation": np.array(cols[4]), "activity": np.array(cols[5]),
            "min_gap": np.array(cols[6])}


# ----------------------------------------------------------------------------- checkpoint merging
MERGE_T = 200
MERGE_WINDOW = 40
MERGE_ETA = 0.1
MERGE_LAM = np.concatenate([[0.0], np.geomspace(0.005, 0.16, 6)])  # eta*lambda*W from 0.02 to 0.64


@experiment("noisy_quadratic.merging")
def merging(budget: Budget) -> dict:
    """Constant-step SGD recorded every step and the merged-equivalent decayed run, paired noise.

    Mode 0 is flat (the gradients are the noise itself: a fixed gradient sequence), the others have
    curvature. Uniform weights on the last ``MERGE_WINDOW`` checkpoints emulate a linear decay.
    """
    n = budget.pick(quick=256, full=2048)
    ck = np.arange(MERGE_T - MERGE_WINDOW + 1, MERGE_T + 1)
    w = np.full(ck.size, 1.0 / ck.size)
    eff = th.merge_effective_schedule(MERGE_ETA, ck, w, MERGE_T)
    etas = np.stack([np.full(MERGE_T, MERGE_ETA), eff])
    x0 = np.zeros(MERGE_LAM.size)
    x0[0] = 1.0
    out = sn.simulate(jax.random.key(SEED + 2), T=MERGE_T, eta=etas, x0=x0, lam=MERGE_LAM, sigma_a=1.0,
                      n_chains=n, n_rec=MERGE_T, paired=True)
    path = out["path"][0]                                    # (n, T, d): x_1..x_T of the constant run
    merged = np.einsum("k,nkd->nd", w, path[:, ck - 1])
    return {"lam": MERGE_LAM, "checkpoints": ck, "weights": w, "eta_eff": eff, "merged": merged,
            "decayed": out["final_x"][1], "last": path[:, -1], "x0": x0, "diverged": out["diverged"]}


MERGE_LOSS_T, MERGE_LOSS_W = 1000, 200   # the merge of the last 20 % emulates WSD's 20 % linear cooldown


@experiment("noisy_quadratic.merging_loss")
def merging_loss(budget: Budget) -> dict:
    """The schedule claims' 64-mode NQM from x0 = 1: a constant-step run at eta = 1.2 whose last ``MERGE_LOSS_W``
    checkpoints are merged with uniform weights (its window mean), and the paired WSD run whose linear cooldown over
    those steps is the merge's effective schedule; losses per run."""
    lam, sa = spectrum()
    T, W = MERGE_LOSS_T, MERGE_LOSS_W
    n = budget.pick(quick=256, full=1024)
    etas = np.stack([th.schedule("constant", T, PLATEAU_ETA), th.schedule("wsd", T, PLATEAU_ETA, cooldown=W / T)])
    out = sn.simulate(jax.random.key(SEED + 8), T=T, eta=etas, x0=np.ones(D_MODES), lam=lam, sigma_a=sa, n_chains=n,
                      burn=T - W, paired=True, window_mean=True)
    merged, last = out["mean_x"][0], out["final_x"]
    loss = lambda x: 0.5 * np.sum(lam * x**2, axis=-1)  # noqa: E731
    return {"lam": lam, "sigma_a": sa, "T": T, "W": W, "etas": etas, "loss_merged": loss(merged),
            "loss_constant": loss(last[0]), "loss_wsd": loss(last[1]), "mode_m2_merged": (merged**2).mean(axis=0),
            "mode_m2_constant": (last[0] ** 2).mean(axis=0), "mode_m2_wsd": (last[1] ** 2).mean(axis=0),
            "diverged": out["diverged"]}


WSM_T, WSM_W = 1000, 200                 # the merge of the last 20 %, as MERGE_LOSS_T, MERGE_LOSS_W
WSM_DECAYS = ("cosine", "linear", "sqrt")  # the WSD cooldowns whose merges are measured (th.DECAYS)
WSM_FLAT = 4                             # flat modes (lambda = 0, sigma = 1): the gradients are a fixed sequence there
WSM_REC = 10                             # recording blocks: the noise is drawn per block (memory)


def wsm_problem() -> tuple[np.ndarray, np.ndarray]:
    r"""The schedule claims' 64-mode NQM (:func:`spectrum`) and ``WSM_FLAT`` flat modes with unit noise: ``(lam, sigma_a)``."""
    lam, sa = spectrum()
    return np.r_[lam, np.zeros(WSM_FLAT)], np.r_[sa, np.ones(WSM_FLAT)]


def wsm_schedules() -> np.ndarray:
    """The three decayed schedules of ``WSM_DECAYS``: plateau ``PLATEAU_ETA``, then a cooldown over the last ``WSM_W`` steps."""
    return np.stack([th.schedule("wsd", WSM_T, PLATEAU_ETA, cooldown=WSM_W / WSM_T, decay=k) for k in WSM_DECAYS])


def wsm_merges() -> dict:
    """The merge weights on x_1..x_T: each decay's inverse map (``theory.noisy_quadratic.merge_weights_for_schedule``),
    and the rivals' -- the uniform window mean, and each decay's values over the window read as merge coefficients."""
    eff = wsm_schedules()
    inverse = np.stack([th.merge_weights_for_schedule(e, PLATEAU_ETA) for e in eff])
    uniform = np.r_[np.zeros(WSM_T - WSM_W), np.full(WSM_W, 1.0 / WSM_W)]
    window = eff[:, WSM_T - WSM_W:]                                  # the decay's values at steps T-W..T-1
    proportional = np.concatenate([np.zeros((len(eff), WSM_T - WSM_W)), window / window.sum(axis=1, keepdims=True)], 1)
    return {"inverse": inverse, "uniform": uniform, "proportional": proportional}


@experiment("noisy_quadratic.wsm")
def wsm(budget: Budget) -> dict:
    """A constant-step run (eta = 1.2) whose checkpoints are merged with seven weightings (``wsm_merges``: each decay's
    inverse map, the uniform window mean, each decay's values as coefficients), and the three WSD runs with cosine,
    linear and 1 - sqrt cooldowns over the last 20 %, on the same noise (paired; one call, so one compiled kernel: the
    decayed runs' merges are computed too and dropped); 64 curved and 4 flat modes, x0 = 1."""
    lam, sa = wsm_problem()
    n = budget.pick(quick=128, full=512)
    m = wsm_merges()
    weights = np.concatenate([m["inverse"], m["uniform"][None], m["proportional"]])
    etas = np.concatenate([np.full((1, WSM_T), PLATEAU_ETA), wsm_schedules()])
    out = sn.simulate(jax.random.key(SEED + 10), T=WSM_T, eta=etas, x0=np.ones(lam.size), lam=lam, sigma_a=sa,
                      n_chains=n, n_rec=WSM_REC, paired=True, merge_weights=weights)
    merged = out["merged_x"][0]                                      # (n, 7, d): the constant run's merges
    k = len(WSM_DECAYS)
    return {"lam": lam, "sigma_a": sa, "merged_inverse": merged[:, :k].transpose(1, 0, 2),
            "merged_uniform": merged[:, k], "merged_proportional": merged[:, k + 1:].transpose(1, 0, 2),
            "decayed": out["final_x"][1:], "last": out["final_x"][0], "max_abs": out["max_abs"].max(),
            "diverged": out["diverged"].ravel()}


EMA_HORIZONS = (300, 1000, 3000)   # the full budget's; the quick budget's are the first two


@experiment("noisy_quadratic.ema_vs_decay")
def ema_vs_decay(budget: Budget) -> dict:
    """Per horizon T: linear decay to zero at its tuned peak (``theory.noisy_quadratic.tuned_final_loss``) and a
    constant-step run with an EMA at their jointly tuned step and rate (``tuned_ema_final_loss``), paired runs on the
    schedule claims' 64-mode NQM from x0 = 1; and the best constant step (exact; no run)."""
    lam, sa = spectrum()
    n = budget.pick(quick=128, full=384)
    Ts = EMA_HORIZONS if budget.name == "full" else EMA_HORIZONS[:2]
    rows = []
    for T in Ts:
        _, p_d2z = th.tuned_final_loss(lam, sa, "d2z", T)
        _, p_const = th.tuned_final_loss(lam, sa, "constant", T)
        _, eta, alpha = th.tuned_ema_final_loss(lam, sa, T)
        out = sn.simulate(jax.random.key(SEED + 11 + T), T=T, eta=np.stack([th.schedule("d2z", T, p_d2z),
                                                                            np.full(T, eta)]),
                          x0=np.ones(D_MODES), lam=lam, sigma_a=sa, ema=[0.0, alpha], n_chains=n, n_rec=10,
                          paired=True)
        loss = lambda x: 0.5 * np.sum(lam * x**2, axis=-1)  # noqa: E731
        rows.append((p_d2z, p_const, eta, alpha, loss(out["final_x"][0]), loss(out["final_ema"][1]),
                     loss(out["final_x"][1]), out["diverged"].ravel()))
    cols = list(zip(*rows))
    return {"lam": lam, "sigma_a": sa, "T": np.array(Ts), "d2z_peak": np.array(cols[0]),
            "const_peak": np.array(cols[1]), "ema_eta": np.array(cols[2]), "ema_alpha": np.array(cols[3]),
            "loss_d2z": np.stack(cols[4]), "loss_ema": np.stack(cols[5]), "loss_last": np.stack(cols[6]),
            "diverged": np.concatenate(cols[7])}


# ----------------------------------------------------------------------------- averaging and momentum
AVG_T = 4000
AVG_BURN = 1000
AVG_REC = 50
AVG_LAM = 1.0
EMA_ETA = 0.2
EMA_ALPHAS = (0.05, 0.1, 0.3)
# (alpha, eta) of the noise-free EMA runs: both branches of max(1 - alpha, |1 - eta lambda|), the second with the
# iterate decaying (eta lambda = 0.2) and oscillating (eta lambda = 1.8, where |1 - eta lambda| = 0.8, not -0.8)
EMA_CLEAN = ((0.05, 0.2), (0.1, 0.2), (0.3, 0.2), (0.05, 1.8), (0.3, 1.8))
MOMENTUM_POINTS = ((0.05, 0.9), (0.2, 0.5))  # (eta, mu) of the heavy-ball runs
NESTEROV_POINTS = ((0.1, 0.5), (0.3, 0.7))


@experiment("noisy_quadratic.averaging")
def averaging(budget: Budget) -> dict:
    """One mode (lambda = 1) with additive noise: SGD with EMAs, SGD baselines, heavy ball, Nesterov; and noise-free EMA
    runs at the (alpha, eta) of ``EMA_CLEAN``."""
    n = budget.pick(quick=64, full=512)
    burn = AVG_BURN
    key = jax.random.key(SEED + 3)
    lam = np.array([AVG_LAM])
    # SGD: EMA configurations (noisy), SGD baselines at the Nesterov step sizes, noise-free EMA configurations
    ema = list(EMA_ALPHAS) + [0.0] * len(NESTEROV_POINTS) + [a for a, _ in EMA_CLEAN]
    etas = [EMA_ETA] * len(EMA_ALPHAS) + [e for e, _ in NESTEROV_POINTS] + [e for _, e in EMA_CLEAN]
    sig = np.array([1.0] * (len(EMA_ALPHAS) + len(NESTEROV_POINTS)) + [0.0] * len(EMA_CLEAN))[:, None]
    x0 = np.array([0.0] * (len(EMA_ALPHAS) + len(NESTEROV_POINTS)) + [1.0] * len(EMA_CLEAN))[:, None]
    sgd = sn.simulate(key, T=AVG_T, eta=np.stack([np.full(AVG_T, e) for e in etas]), x0=x0, lam=lam, sigma_a=sig,
                      ema=ema, n_chains=n, n_rec=AVG_REC, burn=burn)
    mom = sn.simulate(key, T=AVG_T, eta=np.stack([np.full(AVG_T, e) for e, _ in MOMENTUM_POINTS]), x0=np.zeros(1),
                      lam=lam, sigma_a=1.0, method="heavy_ball", momentum=[m for _, m in MOMENTUM_POINTS],
                      n_chains=n, n_rec=AVG_REC, burn=burn)
    nag = sn.simulate(key, T=AVG_T, eta=np.stack([np.full(AVG_T, e) for e, _ in NESTEROV_POINTS]), x0=np.zeros(1),
                      lam=lam, sigma_a=1.0, method="nesterov", momentum=[m for _, m in NESTEROV_POINTS],
                      n_chains=n, n_rec=AVG_REC, burn=burn)
    k, m = len(EMA_ALPHAS), len(NESTEROV_POINTS)
    return {"alphas": np.array(EMA_ALPHAS), "ema_m2_x": sgd["mode_m2"][:k, :, 0], "ema_m2_z": sgd["mode_m2_ema"][:k, :, 0],
            "sgd_m2": sgd["mode_m2"][k:k + m, :, 0], "clean_path_ema": sgd["path_ema"][k + m:, 0, :, 0],
            "clean_path": sgd["path"][k + m:, 0, :, 0], "clean_points": np.array(EMA_CLEAN), "t_rec": (AVG_T // AVG_REC) * np.arange(1, AVG_REC + 1),
            "hb_points": np.array(MOMENTUM_POINTS), "hb_m2": mom["mode_m2"][:, :, 0],
            "nag_points": np.array(NESTEROV_POINTS), "nag_m2_iterate": nag["mode_m2_step"][:, :, 0],
            "nag_m2_lookahead": nag["mode_m2"][:, :, 0],
            "diverged": np.concatenate([sgd["diverged"].ravel(), mom["diverged"].ravel(), nag["diverged"].ravel()])}


# ----------------------------------------------------------------------------- weight-decay equilibria
WD_POINTS = ((0.1, 0.005, 0.0), (0.1, 0.005, 0.9))  # (eta, wd, momentum) of heavy ball with coupled decay
SIGN_POINT = (0.01, 0.1)                            # (eta, wd) of sign updates with decoupled decay
NO_DECAY_ETA, NO_DECAY_MOMENTA = 0.1, (0.0, 0.9)    # heavy ball without decay, from |w0|^2 = 10 eta/(1 - momentum)
NO_DECAY_D, NO_DECAY_T = 64, 4200
NO_DECAY_W0 = tuple(math.sqrt(10 * NO_DECAY_ETA / (1 - m)) for m in NO_DECAY_MOMENTA)  # (eta/(1-mom))^2/|w0|^4 = 0.01


@experiment("noisy_quadratic.sphere")
def sphere(budget: Budget) -> dict:
    """The random-walk model of scale-invariant weights: heavy ball (two momenta) with coupled decay, sign with decoupled,
    and heavy ball (momenta 0 and 0.9) without decay."""
    d = budget.pick(quick=64, full=512)
    T = budget.pick(quick=4200, full=15000)
    n_rec = 60
    n = budget.pick(quick=8, full=32)
    hb = sq.sphere_walk(jax.random.key(SEED + 4), eta=[p[0] for p in WD_POINTS], wd=[p[1] for p in WD_POINTS],
                        momentum=[p[2] for p in WD_POINTS], d=d, T=T, n_rec=n_rec, n_chains=n,
                        w0_norm=[1.2 * th.sgd_wd_exact(*p[:2], 1.0)[1] for p in WD_POINTS])
    sg = sq.sphere_walk(jax.random.key(SEED + 5), eta=SIGN_POINT[0], wd=SIGN_POINT[1], method="sign", d=d, T=T,
                        n_rec=n_rec, n_chains=n, w0_norm=1.0)
    # without decay: d = 64 and 4200 steps at every budget (the quick budget's heavy-ball shapes: one compiled program
    # there), more runs at full
    free = sq.sphere_walk(jax.random.key(SEED + 7), eta=NO_DECAY_ETA, wd=0.0, momentum=list(NO_DECAY_MOMENTA),
                          d=NO_DECAY_D, T=NO_DECAY_T, n_rec=n_rec, n_chains=n, w0_norm=list(NO_DECAY_W0))
    return {"d": d, "T": T, "t_rec": (T // n_rec) * np.arange(1, n_rec + 1), "hb_angle": hb["angle"],
            "hb_norm": hb["norm"], "sign_angle": sg["angle"][0], "sign_norm": sg["norm"][0],
            "free_angle": free["angle"], "free_norm": free["norm"], "free_d": NO_DECAY_D, "free_T": NO_DECAY_T,
            "free_t_rec": (NO_DECAY_T // n_rec) * np.arange(1, n_rec + 1),
            "diverged": np.concatenate([hb["diverged"].ravel(), sg["diverged"].ravel(), free["diverged"].ravel()])}


TAU_ETA, TAU_D = 0.01, 256            # sign updates with decoupled decay (AdamW at beta1 = 0) in d dimensions
TAU_HORIZONS = (200, 600, 1800)
TAU_REF = 600                          # the fixed-lambda runs keep the lambda of tau = T at this horizon
TAU_BLOCK = 100                        # steps per record: every horizon ends a block


def tau_decays() -> np.ndarray:
    """The decays lambda = 1/(eta T) of tau = 1/(eta lambda) = T at each horizon of ``TAU_HORIZONS`` (the ``TAU_REF``
    one is also the fixed lambda of every horizon)."""
    return 1.0 / (TAU_ETA * np.array(TAU_HORIZONS, float))


def tau_start_norm(wd) -> np.ndarray:
    r"""The mean-square equilibrium norm :math:`\sqrt{\eta d/(\lambda(2-\eta\lambda))}` of sign updates with decoupled decay."""
    wd = np.asarray(wd, float)
    return np.sqrt(TAU_ETA * TAU_D / (wd * (2 - TAU_ETA * wd)))


@experiment("noisy_quadratic.wd_timescale")
def wd_timescale(budget: Budget) -> dict:
    """The random-walk model of a scale-invariant layer under sign updates with decoupled decay (AdamW, beta1 = 0), from
    its mean-square equilibrium norm, at each decay of ``tau_decays`` (paired runs, one call: the runs' first T steps do
    not depend on how long they go on, so every horizon is read off the records of one run of the longest): the
    start's share <w_t, w_0>/|w_0|^2 and |w_t| at every block end."""
    n = budget.pick(quick=32, full=192)
    T = max(TAU_HORIZONS)
    wd = tau_decays()
    out = sq.sphere_walk(jax.random.key(SEED + 12), eta=TAU_ETA, wd=wd, method="sign", d=TAU_D, T=T,
                         n_rec=T // TAU_BLOCK, n_chains=n, w0_norm=tau_start_norm(wd), overlap=True)
    return {"horizons": np.array(TAU_HORIZONS), "wd": wd, "w0_norm": tau_start_norm(wd),
            "t_rec": TAU_BLOCK * np.arange(1, T // TAU_BLOCK + 1), "share": out["overlap"], "norm": out["norm"],
            "diverged": out["diverged"].ravel()}   # share, norm: (decay, run, record)


LOGISTIC_ETA, LOGISTIC_WD = 0.5, 0.002


def logistic_data() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """256 Gaussian points in 32 dimensions with noisy linear labels (not separable), and a start."""
    rng = np.random.default_rng(SEED)
    X = rng.normal(size=(256, 32))
    y = np.sign(X @ rng.normal(size=32) + 2.0 * rng.normal(size=256))
    return X, y, rng.normal(size=32)


@experiment("noisy_quadratic.logistic")
def logistic(budget: Budget) -> dict:
    """Full-batch logistic regression on w/|w|: no decay (the identity), decay without and with momentum 0.9."""
    X, y, w0 = logistic_data()
    T = budget.pick(quick=8000, full=32000)
    out = sq.logistic_sphere(X, y, w0, eta=LOGISTIC_ETA, wd=[0.0, LOGISTIC_WD, LOGISTIC_WD], momentum=[0.0, 0.0, 0.9],
                             T=T, n_rec=80)
    return {"T": T, "t_rec": (T // 80) * np.arange(1, 81), **out}


# ----------------------------------------------------------------------------- Lion's box
LION_T = 2000
LION_WD = 1.0
LION_ETAS = (0.008, 0.016, 0.032, 0.064)
LION_WDS = (0.5, 1.0, 2.0)   # decays of the box-radius runs (the radius 1/lambda measured at three scales)
LION_RADIUS_ETAWD = 0.016    # eta * lambda of the box-radius runs


def lion_problem() -> tuple[np.ndarray, np.ndarray]:
    r"""Least squares in d = 6 as :math:`\tfrac12(x-c)^\top H(x-c)`, :math:`H = A^\top A/12`; five coordinates of :math:`c` lie outside the unit box."""
    rng = np.random.default_rng(3)
    A = rng.normal(size=(12, 6))
    return A.T @ A / 12, rng.normal(size=6) * 2.0


@experiment("noisy_quadratic.lion")
def lion(budget: Budget) -> dict:
    """Lion (b1 = 0.9, b2 = 0.99) with decoupled decay on the least-squares problem, recorded every step.

    Rows: constant eta in ``LION_ETAS`` from 0 and a decaying eta_t = 0.05/sqrt(1 + t/10) from 0, at decay
    ``LION_WD``; then, per decay lambda in ``LION_WDS`` at eta lambda = ``LION_RADIUS_ETAWD``, the problem scaled to
    the box (center c/lambda) from 0 and from 3/lambda in every coordinate (outside the box).
    """
    H, c = lion_problem()
    t = np.arange(LION_T)
    rows = [np.full(LION_T, e) for e in LION_ETAS] + [0.05 / np.sqrt(1 + t / 10.0)]
    centers = [c] * len(rows)
    starts = [np.zeros(6)] * len(rows)
    wds = [LION_WD] * len(rows)
    for wd in LION_WDS:
        for x0 in (np.zeros(6), np.full(6, 3.0 / wd)):
            rows.append(np.full(LION_T, LION_RADIUS_ETAWD / wd))
            centers.append(c / wd)
            starts.append(x0)
            wds.append(wd)
    out = sn.simulate(jax.random.key(SEED + 6), T=LION_T, eta=np.stack(rows), x0=np.stack(starts), H=H,
                      center=np.stack(centers), method="lion", momentum=0.9, b2=0.99, wd=wds, n_rec=LION_T)
    return {"H": H, "c": c, "etas": np.stack(rows), "centers": np.stack(centers), "starts": np.stack(starts),
            "wds": np.array(wds), "path": out["path"][:, 0], "max_abs": out["max_abs"][:, 0],
            "n_const": len(LION_ETAS), "diverged": out["diverged"][:, 0]}


def lion_logistic_data() -> tuple[np.ndarray, np.ndarray]:
    r"""64 Gaussian points in d = 6 with labels from a linear rule plus noise (not separable): the unconstrained
    logistic minimizer has five coordinates outside the unit box, the box solution three on its faces."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(64, 6))
    y = np.where(X @ np.array([3.0, -2.5, 1.5, 0.6, -0.4, 0.2]) + rng.normal(size=64) > 0, 1.0, -1.0)
    return X, y


@experiment("noisy_quadratic.lion_logistic")
def lion_logistic(budget: Budget) -> dict:
    """Lion (b1 = 0.9, b2 = 0.99) with decoupled decay ``LION_WD`` on full-batch logistic regression from 0, along the
    decaying step eta_t = 0.05/sqrt(1 + t/10) of the least-squares run."""
    X, y = lion_logistic_data()
    t = np.arange(LION_T)
    eta = 0.05 / np.sqrt(1 + t / 10.0)
    out = sq.lion_logistic(X, y, np.zeros(X.shape[1]), eta=eta, wd=LION_WD, n_rec=LION_T // 10)
    return {"eta": eta, "path": out["path"][0], "diverged": out["diverged"][0]}


# ----------------------------------------------------------------------------- sampled least squares (Kidambi et al.)
SAMPLED_C = 2.0  # E z^4 = 2c = 4: z = +-sqrt(2), the least noisy z the paper's instance allows


def sampled_atoms(kappa: float) -> tuple[np.ndarray, np.ndarray]:
    r"""The paper's Section 3 instance with :math:`\sigma_1 = 1`, :math:`z = \pm\sqrt2` (:math:`c = 2`): a row is
    :math:`\pm\sqrt2\sigma_ie_i` with probability 1/2 each, so mode :math:`i`'s curvature :math:`x_i^2` is
    :math:`2\sigma_i^2` (row :math:`i` sampled) or 0; :math:`\sigma_2^2 = 2c/\kappa`. Returns (atoms (2, 2), probabilities)."""
    s2 = 2 * SAMPLED_C / kappa
    return np.array([[2.0, 0.0], [2.0 * s2, 0.0]]), np.array([0.5, 0.5])


def _sampled_search(method: str, kappas: np.ndarray) -> dict:
    """The best measured rate of ``method`` over its parameters, per kappa: :func:`theory.noisy_quadratic_sampled.grid_search`
    (a generic maximizer, all kappas at once) over the simulated map's rates."""
    laws = np.stack([sampled_atoms(k)[0] for k in kappas])
    probs = sampled_atoms(kappas[0])[1]

    def rates(u):
        b, k, dim = u.shape
        p = ts.search_params(method, u.reshape(-1, dim))
        kw = {"alpha": p[:, 1]} if method in ("heavy_ball", "nesterov") else {}
        out = ss.sampled_moment_map(method, p[:, 0], h_atoms=np.repeat(laws, k, axis=0), h_probs=probs, **kw)
        return out["rate"].reshape(b, k)

    boxes = np.stack([ts.search_box(method, k / (2 * SAMPLED_C)) for k in kappas])
    n = ts.SEARCH_N[method]  # the theory's search settings: the same maximizer on both sides
    return ts.grid_search(rates, boxes, n=n, rounds=ts.SEARCH_ROUNDS, keep=max(2, n // 3))


@experiment("noisy_quadratic.sampled_rates")
def sampled_rates(budget: Budget) -> dict:
    r"""Mean-square rates on the sampled least-squares instance (:func:`sampled_atoms`), :math:`\kappa` = 1e3 .. 1e5
    (quick) or 1e6 (full), from the exact second-moment map read off each method's update rule
    (:func:`sims.noisy_quadratic_sampled.sampled_moment_map`).

    SGD, heavy ball and Nesterov: the best rate over the step (and momentum), by a grid zoom over the simulated rates from a
    grid that spans :math:`\delta \in [10^{-4}, 3]`, :math:`1-\alpha \in [10^{-7}, 1]` (every point of the paper's
    :math:`\alpha \in [0, 1)` that converges). Heavy ball and ASGD also at the parameters
    :func:`theory.noisy_quadratic_sampled.tuned_sampled_rate` names (where to measure; for ASGD this is the measurement:
    its claim is that some parameters reach the rate), and each mode's spectral radius at half that step
    (``*_mode_radius_half_step``).
    """
    kappas = np.array(budget.pick(quick=(1e3, 1e4, 1e5), full=(1e3, 1e4, 1e5, 1e6)))
    out = {"kappa": kappas, "c": SAMPLED_C}
    for method in ("sgd", "heavy_ball", "nesterov"):
        found = _sampled_search(method, kappas)
        out[f"{method}_best"] = found["rate"]
        out[f"{method}_first"] = found["first_max"]
        out[f"{method}_best_params"] = ts.search_params(method, found["u"])
    modes = np.stack([ts.kidambi_modes(k, SAMPLED_C) for k in kappas])
    laws, probs = np.stack([sampled_atoms(k)[0] for k in kappas]), sampled_atoms(kappas[0])[1]
    for method in ("heavy_ball", "asgd"):
        p = ts.tuned_sampled_rates(method, modes)["params"]
        kw = {"alpha": p[:, 1]} if method == "heavy_ball" else {"long_step": p[:, 1], "xi": p[:, 2]}
        out[f"{method}_params"] = p
        out[f"{method}_at_params"] = ss.sampled_moment_map(method, p[:, 0], h_atoms=laws, h_probs=probs, **kw)["rate"]
        # at half the tuned step the two modes contract at different speeds (the tuning equalizes them)
        half = ss.sampled_moment_map(method, 0.5 * p[:, 0], h_atoms=laws, h_probs=probs, **kw)
        out[f"{method}_mode_radius_half_step"] = half["mode_radius"]
    return out


# ----------------------------------------------------------------------------- a river valley (Wen et al. 2024)
RIVER_T = 1200
RIVER_REC = 6             # recorded blocks of 200 steps: the WSD-S checkpoints sit at their ends (600, 1200)
RIVER_ETA = 1.2           # the peak: eta * lambda_hill = 1.2, the hill oscillates about the river
RIVER_COOL = 200          # every cooldown: linear over 200 steps
RIVER_SLOPE = 0.06        # the river's force g = lambda_r R at the start, the same for every river curvature
RIVER_LAM = 1e-5          # the schedules' river curvature: lambda_r sum eta <= 0.015, far inside the area law
RIVER_WINDOW = np.geomspace(1e-5, 3e-3, 8)  # river curvatures of the window: lambda_r sum eta from 0.014 to 4.3
RIVER_SIGMA = (0.03, 1.0)  # gradient noise (river, hill); the hill's curvature is 1
RIVER_SCHEDULES = ("constant", "half", "wsd", "early", "cosine", "wsd_s", "wsd_branch")


def _linear_cooldown(peak: float, n: int, end: float = 0.0) -> np.ndarray:
    return peak + (end - peak) * np.arange(1, n + 1) / n


def river_schedules() -> dict:
    r"""The schedules of the river claims, all :math:`T = 1200` steps at peak 1.2 with 200-step linear cooldowns.

    ``constant``; ``half`` (0.6 throughout); ``wsd`` (1000 steps at the peak, then the cooldown to 0); ``early`` (the
    cooldown first, to 10 % of the peak, then 1000 steps there); ``cosine`` (to 0); ``wsd_s`` (WSD-S: 400 at the peak,
    a cooldown -- checkpoint 1 at step 600 --, resumed at the peak from the decayed iterate for 400 steps, a cooldown --
    checkpoint 2 at 1200); ``wsd_branch`` (WSD's second checkpoint at the same total compute: its main branch also paid
    for the first checkpoint's 200-step branch, so it has 800 steps at the peak and the cooldown; 200 idle steps at
    :math:`\eta = 0` first line its end up with WSD-S's).
    """
    p, c = RIVER_ETA, RIVER_COOL
    out = {"constant": np.full(RIVER_T, p), "half": np.full(RIVER_T, p / 2),
           "wsd": np.r_[np.full(RIVER_T - c, p), _linear_cooldown(p, c)],
           "early": np.r_[_linear_cooldown(p, c, 0.1 * p), np.full(RIVER_T - c, 0.1 * p)],
           "cosine": th.schedule("cosine", RIVER_T, p, floor=0.0),
           "wsd_s": np.r_[np.full(400, p), _linear_cooldown(p, c), np.full(400, p), _linear_cooldown(p, c)],
           "wsd_branch": np.r_[np.zeros(c), np.full(800, p), _linear_cooldown(p, c)]}
    return {k: out[k] for k in RIVER_SCHEDULES}


def river_problem(lam_river) -> dict:
    r"""The valley: river mode :math:`\frac{\lambda_r}2(r - R)^2` with :math:`R = g/\lambda_r` (force :math:`g` at the start
    :math:`r_0 = 0`), hill mode :math:`\frac12 h^2` from :math:`h_0 = 0`; ``lam``, ``center`` (k, 2) for each curvature."""
    lr = np.atleast_1d(np.asarray(lam_river, dtype=float))
    return {"lam": np.stack([lr, np.ones_like(lr)], axis=1),
            "center": np.stack([RIVER_SLOPE / lr, np.zeros_like(lr)], axis=1)}


@experiment("noisy_quadratic.river")
def river(budget: Budget) -> dict:
    r"""SGD in a two-mode river valley: the seven :func:`river_schedules` at :math:`\lambda_r = 10^{-5}`, and the constant
    schedule at the window's river curvatures; paired runs (common random numbers) from :math:`(r, h) = (0, 0)`."""
    names = list(RIVER_SCHEDULES)
    table = river_schedules()
    lam_r = np.r_[np.full(len(names), RIVER_LAM), RIVER_WINDOW]
    etas = np.stack([table[k] for k in names] + [table["constant"]] * RIVER_WINDOW.size)
    prob = river_problem(lam_r)
    n = budget.pick(quick=256, full=1024)
    out = sn.simulate(jax.random.key(SEED + 71), T=RIVER_T, eta=etas, x0=np.zeros(2), lam=prob["lam"],
                      center=prob["center"], sigma_a=np.array(RIVER_SIGMA), n_chains=n, n_rec=RIVER_REC, paired=True)
    return {"names": np.array(names), "lam_river": lam_r, "etas": etas, "center": prob["center"],
            "lam": prob["lam"], "path": out["path"], "curve": out["curve"], "final_x": out["final_x"],
            "diverged": out["diverged"], "t_rec": (RIVER_T // RIVER_REC) * np.arange(1, RIVER_REC + 1)}


# ----------------------------------------------------------------------------- Lion on a non-convex loss (Chen et al.)
DW_A = np.array([4.0, 0.25, 1.5, 2.5])  # wells at about +-2, +-0.5, +-1.22, +-1.58: three outside the unit box
DW_SIGNS = np.array([[1, 1, 1, 1], [-1, 1, -1, 1], [1, -1, 1, -1], [-1, -1, 1, 1], [1, 1, -1, -1], [-1, -1, -1, -1]], float)
DW_START = 0.4  # every start: 0.4 x a sign pattern, inside the box


def dw_problem() -> tuple[np.ndarray, np.ndarray]:
    r"""The double wells :math:`a` and the coupling :math:`C = 0.2\,L` (:math:`L` the path graph's Laplacian, PSD)."""
    lap = np.diag([1.0, 2.0, 2.0, 1.0]) - np.diag(np.ones(3), 1) - np.diag(np.ones(3), -1)
    return DW_A, 0.2 * lap


@experiment("noisy_quadratic.lion_double_well")
def lion_double_well(budget: Budget) -> dict:
    """Lion (b1 = 0.9, b2 = 0.99) with decoupled decay ``LION_WD`` on the coupled double wells from six starts, along the
    decaying step eta_t = 0.05/sqrt(1 + t/10) of the least-squares runs (deterministic: the budget changes nothing)."""
    a, C = dw_problem()
    t = np.arange(LION_T)
    eta = 0.05 / np.sqrt(1 + t / 10.0)
    starts = DW_START * DW_SIGNS
    out = sq.lion_double_well(a, C, starts, eta=eta, wd=LION_WD, n_rec=LION_T // 100)
    return {"eta": eta, "starts": starts, "path": out["path"], "diverged": out["diverged"]}
