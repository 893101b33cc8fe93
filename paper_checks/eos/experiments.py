r"""The simulations of the edge-of-stability topic: named, cached, budgeted experiments.

Claims and ``figures/eos.py`` both call these; figures never simulate. Every sweep of the
polynomial losses uses one of two GD configurations (``LONG``: tail averages of converged runs;
``SHORT``: 2-step block averages of a transient) and the flows use ``sims.eos.N_SAVE`` save times,
so the whole topic compiles a handful of programs.
"""
from __future__ import annotations

import jax
import numpy as np

import sims.eos as sim
import sims.eos_relu as relu_sim
import theory.eos as th
from paper_checks import Budget, experiment

TOY_BETA = 0.1      # the self-stabilization toy's linear coefficient beta
TOY_ETA = 0.5       # its step size (the window is swept through a, eta*a)
TOY_INIT = (0.1, 0.0)
SEED = 20250413


def long_config(budget: Budget) -> tuple[int, int]:
    """(n_steps, n_blocks) of the converged-run sweeps: the last block (1000 / 2000 steps) is the tail average."""
    return budget.pick(quick=(30_000, 30), full=(120_000, 60))


def short_config(budget: Budget) -> tuple[int, int]:
    """(n_steps, n_blocks) of the transient runs: blocks of 2 steps (the time average of a 2-cycle)."""
    return budget.pick(quick=(800, 400), full=(2000, 1000))


def _toy_runs(eta_a, beta, eta, inits, budget: Budget, *, momentum=0.0, nesterov=False) -> dict:
    """Tail statistics of GD (or momentum) on the toy, one run per row of (eta_a, beta, inits)."""
    eta_a, beta = np.broadcast_arrays(np.asarray(eta_a, float), np.asarray(beta, float))
    coef = np.stack([th.selfstab_coefficients(e / eta, b) for e, b in zip(eta_a.ravel(), beta.ravel())])
    n_steps, n_blocks = long_config(budget)
    out = sim.poly_gd(coef, eta, inits, n_steps=n_steps, n_blocks=n_blocks, momentum=momentum, nesterov=nesterov)
    tail = out["block_mean"][:, -1]
    return {"mean_y": tail[:, 1], "mean_x2": tail[:, 2], "mean_loss": tail[:, 3], "gap2": out["gap2"],
            "diverged": out["diverged"], "diverged_step": out["diverged_step"], "n_steps": n_steps,
            "tail_steps": n_steps // n_blocks}


@experiment("eos.selfstab_window")
def selfstab_window(budget: Budget) -> dict:
    """GD on the toy (beta = 0.1, eta = 0.5, from (0.1, 0)) over eta*a: a uniform grid and a fine grid near 2."""
    h = budget.pick(quick=0.01, full=0.0025)
    grid = np.round(np.arange(1.40 + h / 2, 2.10, h), 10)
    h_fine = budget.pick(quick=4e-5, full=1e-5)
    fine = np.round(1.9990 + h_fine * (np.arange(int(round(0.0014 / h_fine))) + 0.5), 12)
    eta_a = np.concatenate([grid, fine])
    out = _toy_runs(eta_a, TOY_BETA, TOY_ETA, TOY_INIT, budget)
    return {"eta_a": eta_a, "n_grid": int(grid.size), "h": h, "h_fine": h_fine, **out}


SELFSTAB_POINTS = ((1.8, 0.1), (1.9, 0.1), (1.95, 0.05), (1.85, 0.2))


@experiment("eos.selfstab_points")
def selfstab_points(budget: Budget) -> dict:
    """GD on the toy at a few (eta*a, beta) inside the window, from jittered starts near (0.1, 0)."""
    n_seeds = budget.pick(quick=3, full=12)
    rng = np.random.default_rng(SEED)
    pts = np.repeat(np.array(SELFSTAB_POINTS), n_seeds, axis=0)
    u = rng.uniform(-1.0, 1.0, size=(pts.shape[0], 2))
    inits = np.column_stack([0.1 * (1.0 + 0.5 * u[:, 0]), 0.1 * u[:, 1]])
    out = _toy_runs(pts[:, 0], pts[:, 1], TOY_ETA, inits, budget)
    return {"eta_a": pts[:, 0], "beta": pts[:, 1], "inits": inits, **out}


# (momentum, nesterov, eta*a as a fraction of eta * critical sharpness): inside each method's window (from (0.1, 0))
MOMENTUM_POINTS = ((0.3, False, 0.98), (0.6, False, 0.995), (0.3, True, 0.95), (0.6, True, 0.97))


@experiment("eos.selfstab_momentum")
def selfstab_momentum(budget: Budget) -> dict:
    """Heavy ball and Nesterov on the toy (beta = 0.1, eta = 0.5) just below each method's critical sharpness."""
    rows = []
    for mom, nest, frac in MOMENTUM_POINTS:
        a = frac * th.critical_sharpness(TOY_ETA, mom, nesterov=nest)
        rows.append((mom, nest, a))
    mom = np.array([r[0] for r in rows])
    nest = np.array([r[1] for r in rows])
    a = np.array([r[2] for r in rows])
    out = _toy_runs(a * TOY_ETA, TOY_BETA, TOY_ETA, TOY_INIT, budget, momentum=mom, nesterov=nest)
    return {"momentum": mom, "nesterov": nest, "a": a, **out}


TRANSIENT_ETA_A = 1.9


@experiment("eos.selfstab_transient")
def selfstab_transient(budget: Budget) -> dict:
    """GD on the toy from (0.1, 0) in 2-step averages, with the central flow and rod flow (diffrax) from the start."""
    n_steps, n_blocks = short_config(budget)
    a = TRANSIENT_ETA_A / TOY_ETA
    coef = th.selfstab_coefficients(a, TOY_BETA)
    gd = sim.poly_gd(coef, TOY_ETA, TOY_INIT, n_steps=n_steps, n_blocks=n_blocks)
    ts = np.linspace(0.0, float(n_steps), sim.N_SAVE)
    cf = sim.poly_flow(coef, TOY_ETA, TOY_INIT, ts, flow="central")
    rod = sim.poly_flow(coef, TOY_ETA, TOY_INIT, ts, flow="rod")
    block = n_steps // n_blocks
    means = gd["block_mean"][0]
    return {"t_gd": block * np.arange(n_blocks) + 0.5 * (block - 1), "y_gd": means[:, 1], "x2_gd": means[:, 2],
            "loss_gd": means[:, 3], "gd_diverged": bool(gd["diverged"][0]), "ts": ts,
            "y_cf": cf["center"][0, :, 1], "sigma2_cf": cf["sigma2"][0], "loss_cf": cf["loss"][0],
            "sharpness_cf": cf["sharpness"][0],
            "cf_diverged": bool(cf["diverged"][0]), "y_rod": rod["center"][0, :, 1], "r2_rod": rod["sigma2"][0],
            "rod_diverged": bool(rod["diverged"][0]), "a": a}


@experiment("eos.rod_toy")
def rod_toy(budget: Budget) -> dict:
    """The rod flow of the toy (diffrax) at the (eta*a, beta) of ``SELFSTAB_POINTS``, from GD's first two iterates at
    (0.1, 0), run to t = 3000 steps (GD's own 2-cycles there are :func:`selfstab_points`)."""
    pts = np.array(SELFSTAB_POINTS)
    coef = np.stack([th.selfstab_coefficients(e / TOY_ETA, b) for e, b in pts])
    ts = np.linspace(0.0, 3000.0, sim.N_SAVE)
    rod = sim.poly_flow(coef, TOY_ETA, TOY_INIT, ts, flow="rod")
    return {"eta_a": pts[:, 0], "beta": pts[:, 1], "center": rod["center"], "r": rod["r"], "ts": ts,
            "diverged": rod["diverged"]}


UV_CYCLE_ETAS = (1.05, 1.1)  # GD's 2-cycles of (uv - 1)^2 / 2 (stable; both runs of each on the cycle about (1, 1))


def uv_settings(budget: Budget) -> list[tuple[float, tuple[float, float]]]:
    """(eta, w0) settings of the (uv - 1)^2 comparison: at the edge of stability from (1.5, 0), stable ones elsewhere,
    and (last, ``uv_cycle_count``) step sizes above 1, where every minimum (sharpness u^2 + v^2 >= 2 on uv = 1) is
    unstable and GD from (1.2, 0.5) settles on a 2-cycle about (1, 1) instead."""
    eos = [(e, (1.5, 0.0)) for e in budget.pick(quick=(0.6, 0.7, 0.8, 0.9), full=(0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9))]
    stable = [(e, (4.0, 0.05)) for e in budget.pick(quick=(0.1, 0.12), full=(0.08, 0.1, 0.11, 0.12, 0.13))]
    mid = [(e, (2.5, 0.1)) for e in budget.pick(quick=(0.25, 0.35), full=(0.2, 0.25, 0.3, 0.35))]
    cycle = [(e, (1.2, 0.5)) for e in UV_CYCLE_ETAS]
    return eos + stable + mid + cycle


def uv_cycle_count() -> int:
    """How many of :func:`uv_settings` (the last ones) are 2-cycle settings."""
    return len(UV_CYCLE_ETAS)


@experiment("eos.uv_compare")
def uv_compare(budget: Budget) -> dict:
    """GD, rod flow, central flow and gradient flow on (uv - 1)^2 / 2: final sharpness and sharpness curves."""
    sets = uv_settings(budget)
    etas = np.array([s[0] for s in sets])
    w0 = np.array([s[1] for s in sets])
    coef = th.uv_coefficients()
    n_steps, n_blocks = long_config(budget)
    gd = sim.poly_gd(coef, etas, w0, n_steps=n_steps, n_blocks=n_blocks)
    s_steps, s_blocks = short_config(budget)
    gd_short = sim.poly_gd(coef, etas, w0, n_steps=s_steps, n_blocks=s_blocks)
    ts = np.linspace(0.0, 4000.0, sim.N_SAVE)
    flows = {k: sim.poly_flow(coef, etas, w0, ts, flow=k) for k in sim.FLOWS}
    # the first 100 steps again, finely sampled, for the figure (same compiled program: same number of save times)
    ts_short = np.linspace(0.0, 100.0, sim.N_SAVE)
    short = {k: sim.poly_flow(coef, etas, w0, ts_short, flow=k)["sharpness"] for k in sim.FLOWS}
    out = {"eta": etas, "w0": w0, "ts": ts, "gd_final_sharpness": gd["block_mean"][:, -1, 4],
           "gd_tail": gd["block_mean"][:, -1], "gd_gap2": gd["gap2"],
           "cycle": np.arange(len(sets)) >= len(sets) - uv_cycle_count(),
           "gd_diverged": gd["diverged"], "gd_short_sharpness": gd_short["block_mean"][:, :, 4],
           "gd_short_t": (s_steps // s_blocks) * np.arange(s_blocks) + 0.5,
           "gf_limit": np.array([th.uv_gradient_flow_limit_sharpness(*w) for w in w0])}
    out["ts_short"] = ts_short
    for k, f in flows.items():
        out[f"{k}_sharpness"] = f["sharpness"]
        out[f"{k}_sharpness_short"] = short[k]
        out[f"{k}_final_sharpness"] = f["sharpness"][:, -1]
        out[f"{k}_diverged"] = f["diverged"]
        # the final state: centre, half-rod (zero but for the rod), sigma^2 (the central flow's), mean loss at the ends
        out[f"{k}_final_center"] = f["center"][:, -1]
        out[f"{k}_final_r"] = f["r"][:, -1]
        out[f"{k}_final_sigma2"] = f["sigma2"][:, -1]
        out[f"{k}_final_loss"] = f["loss"][:, -1]
        out[f"{k}_final_end_loss"] = f["end_loss"][:, -1]
    return out


@experiment("eos.catapult")
def catapult(budget: Budget) -> dict:
    """The uv model with one sample over eta*lambda0 (a coarse grid and a fine one around 4) at several widths."""
    n_steps, n_blocks = 400, 40
    widths = budget.pick(quick=(64, 256), full=(16, 64, 256, 1024, 4096))
    n_seeds = budget.pick(quick=4, full=16)
    keys = jax.random.split(jax.random.key(SEED), n_seeds)
    coarse = np.array([0.5, 1.0, 1.5, 1.8, 2.2, 2.5, 3.0, 3.5, 3.8, 3.95, 4.05, 4.2, 4.5])
    h = 0.01
    fine = np.round(3.90 + h * (np.arange(20) + 0.5), 10)
    cs = np.concatenate([coarse, fine])
    runs = [sim.catapult_gd(keys, cs, width=m, n_steps=n_steps, n_blocks=n_blocks) for m in widths]
    stack = lambda k: np.stack([r[k] for r in runs])  # noqa: E731  (width, c, seed, ...)
    return {"c": cs, "n_coarse": int(coarse.size), "h": h, "widths": np.array(widths),
            "final_eta_lambda": stack("final_eta_lambda"), "max_loss_ratio": stack("max_loss_ratio"),
            "diverged": stack("diverged"), "block_loss": stack("block_loss"), "loss0": stack("loss0"),
            "block_eta_lambda": stack("block_eta_lambda"), "n_steps": n_steps}


# The network runs, (method, momentum, eta, seed). GD at MLP_ETA with MLP_SEEDS seeds, paired seed by seed with the
# central flow from the same initialization (cohen2025), and GD at four more step sizes (cohen2021: five step sizes,
# 2/eta from 3.3 to 5; each starts below its 2/eta -- the initial sharpness is 2.8-3.0 -- and settles by step 600).
# Heavy ball and Nesterov at three momenta each, with step sizes putting each method's critical sharpness between 3.4
# and 4.4, where every run has settled by step 900 (cohen2022); there 2/eta, the other method's threshold and the
# "effective step eta/(1 - mu)" threshold are 9-100 % away (per run).
MLP_ETA = 0.5
MLP_SEEDS = 4
MLP_GD_ETAS = (0.4, 0.45, 0.55, 0.6)
MLP_MOMENTUM = (("heavy_ball", 0.1, 0.5, 0), ("heavy_ball", 0.25, 0.7, 0), ("heavy_ball", 0.5, 0.8, 0),
                ("nesterov", 0.2, 0.5, 0), ("nesterov", 0.3, 0.42, 1), ("nesterov", 0.5, 0.4, 1))
N_MEAS = 80  # measurements per network run (one compiled program for every run length)


def mlp_rows() -> list[tuple[str, float, float, int]]:
    """(method, momentum, eta, seed) of every network run, in the order of :func:`mlp`'s outputs."""
    rows = [("gd", 0.0, MLP_ETA, k) for k in range(MLP_SEEDS)] + [("central", 0.0, MLP_ETA, k) for k in range(MLP_SEEDS)]
    rows += [("gd", 0.0, eta, 0) for eta in MLP_GD_ETAS]
    return rows + [tuple(r) for r in MLP_MOMENTUM]


def mlp_setup(budget: Budget) -> dict:
    """Data, architecture and integration settings of the network experiment.

    ``n_steps``: GD and the central flow; ``n_steps_momentum``: heavy ball and Nesterov, whose catapults die out
    later (at 800 steps some still spike every 100-200 steps; by 900 every run used has settled). Both are cut
    into ``N_MEAS`` measurements, so runs of both lengths share one compiled program. ``substeps``: the central
    flow's Euler steps per step; an optimizer's iterate moves once per step, so it runs at one substep per step
    (one warm-started Lanczos refresh per iterate; ``optimizer_substeps``).
    """
    # one network at both budgets (so the thresholds sit where they do at quick: above the initial sharpness);
    # the full budget adds steps and a finer integration of the flow
    X, Y = sim.mlp_data(jax.random.key(SEED), 128, 4)
    n_steps = budget.pick(quick=800, full=2000)
    return {"X": X, "Y": Y, "widths": (4, 16, 16, 1), "n_steps": n_steps, "every": n_steps // N_MEAS,
            "n_steps_momentum": budget.pick(quick=1200, full=2000),
            "substeps": budget.pick(quick=2, full=4), "optimizer_substeps": 1, "lanczos_iter": budget.pick(quick=6, full=8)}


@experiment("eos.mlp")
def mlp(budget: Budget) -> dict:
    """Every network run of :func:`mlp_rows`: GD, the central flow, heavy ball and Nesterov on the tiny MLP.

    One compiled program (:func:`sims.eos.mlp_run`, ``N_MEAS`` measurements), called once per (run length, substeps); the
    central-flow runs share their keys, hence their initializations, with the GD runs of the same seed at
    ``MLP_ETA``. ``t`` is per run (the momentum runs are longer at the quick budget).
    """
    s = mlp_setup(budget)
    rows = mlp_rows()
    keys = jax.random.split(jax.random.key(SEED + 2), 6)
    lengths = [s["n_steps_momentum"] if m in ("heavy_ball", "nesterov") else s["n_steps"] for m, _, _, _ in rows]
    subs = [s["substeps"] if m in ("central", "gradient") else s["optimizer_substeps"] for m, _, _, _ in rows]
    parts = []
    for n_steps, substeps in sorted(set(zip(lengths, subs))):
        idx = [i for i, (n, k) in enumerate(zip(lengths, subs)) if (n, k) == (n_steps, substeps)]
        parts.append((idx, sim.mlp_run(jax.numpy.stack([keys[rows[i][3]] for i in idx]), [rows[i][2] for i in idx],
                                       s["X"], s["Y"], widths=s["widths"], methods=[rows[i][0] for i in idx],
                                       momentum=[rows[i][1] for i in idx], n_steps=n_steps, every=n_steps // N_MEAS,
                                       substeps=substeps, lanczos_iter=s["lanczos_iter"])))
    out: dict = {}
    for idx, part in parts:
        for k, v in part.items():
            if k not in out:
                out[k] = np.empty((len(rows),) + v.shape[1:], v.dtype)
            out[k][idx] = v
    return {"method": np.array([r[0] for r in rows]), "momentum": np.array([r[1] for r in rows]),
            "eta": np.array([r[2] for r in rows]), "seed": np.array([r[3] for r in rows]),
            "t": np.array([(n // N_MEAS) * np.arange(N_MEAS) for n in lengths]), "n_steps": np.array(lengths), **out}


CATAPULT_CURVATURE_WIDTH = 256  # the widest network of the quick catapult sweep: its compiled program is reused


@experiment("eos.catapult_curvature")
def catapult_curvature(budget: Budget) -> dict:
    """The uv model across the catapult phase, eta*lambda0 from 2.05 to 3.95, with each run's start (eta, f0).

    Same width, length and blocks as the widest quick run of :func:`catapult` (one compiled program); the seeds are
    new keys (split from ``SEED + 3``). ``z0`` = eta^2 f0^2 / m fixes, with eta*lambda0, the run's closed-form
    trajectory (:func:`theory.eos.catapult_trajectory`).
    """
    n_steps, n_blocks = 400, 40
    width = CATAPULT_CURVATURE_WIDTH
    n_seeds = budget.pick(quick=4, full=16)
    h = budget.pick(quick=0.05, full=0.025)
    cs = np.round(np.arange(2.05, 3.95 + h / 2, h), 10)
    keys = jax.random.split(jax.random.key(SEED + 3), n_seeds)
    run = sim.catapult_gd(keys, cs, width=width, n_steps=n_steps, n_blocks=n_blocks)
    z0 = run["eta"] ** 2 * 2.0 * run["loss0"] / width
    return {"c": cs, "h": h, "width": width, "n_steps": n_steps, "z0": z0, "eta": run["eta"],
            "final_eta_lambda": run["final_eta_lambda"], "block_eta_lambda": run["block_eta_lambda"],
            "max_loss_ratio": run["max_loss_ratio"], "diverged": run["diverged"]}


# GD against its constrained trajectory on a network small enough for exact Hessians (40 parameters): the topic's data
# generator at 32 points, widths (4, 8, 1), eta = 1 (the sharpness reaches 2/eta within the first 60 steps at every
# init tried). Inits: keys 5-10 (quick: the first two); 400 steps, windows of 20 (the constrained trajectory's own
# Euler step stays stable: gradient flow's sharpness stays below 2/(eta/4) = 8 until t ~ 600).
TRACK_ETA = 1.0
TRACK_WIDTHS = (4, 8, 1)
TRACK_INITS = (5, 6, 7, 8, 9, 10)


@experiment("eos.constrained")
def constrained(budget: Budget) -> dict:
    """GD, the constrained trajectory (projected gradient flow onto {S <= 2/eta}), gradient flow, GD at eta/2 and the
    central flow with a matrix sigma^2 on the top two eigenvectors, on a 40-parameter tanh MLP, from each of
    ``TRACK_INITS`` (:func:`sims.eos.mlp_track`)."""
    X, Y = sim.mlp_data(jax.random.key(SEED), 32, TRACK_WIDTHS[0])
    inits = TRACK_INITS[:budget.pick(quick=2, full=len(TRACK_INITS))]
    keys = jax.numpy.stack([jax.random.key(k) for k in inits])
    n_steps, window = 400, 20
    substeps, relax = 4, 1.0
    out = sim.mlp_track(keys, TRACK_ETA, X, Y, widths=TRACK_WIDTHS, threshold=th.critical_sharpness(TRACK_ETA),
                        n_steps=n_steps, window=window, substeps=substeps, relax=relax)
    return {"inits": np.array(inits), "eta": TRACK_ETA, "window": window, "n_steps": n_steps, "substeps": substeps,
            "relax": relax,
            "t": window * (np.arange(n_steps // window) + 1), **out}


CATAPULT_TIME_C = 2.2  # eta*lambda0 of the catapult-time runs: slow growth (1.44 per step), so the peak moves far with m


@experiment("eos.catapult_time")
def catapult_time(budget: Budget) -> dict:
    """The uv model at eta*lambda0 = 2.2 over widths, the loss recorded at every step: when the catapult's loss peaks.

    80 steps (the latest peak comes by step 42 at full) in blocks of one step; the seeds are new keys (``SEED + 6``).
    """
    widths = budget.pick(quick=(256, 4096), full=(64, 256, 1024, 4096, 16384))
    n_seeds = budget.pick(quick=8, full=16)
    keys = jax.random.split(jax.random.key(SEED + 6), n_seeds)
    n_steps = 80
    runs = [sim.catapult_gd(keys, [CATAPULT_TIME_C], width=m, n_steps=n_steps, n_blocks=n_steps) for m in widths]
    loss = np.stack([r["block_max_loss"][0] for r in runs])  # (width, seed, step): blocks of one step
    eta = np.stack([r["eta"][0] for r in runs])
    loss0 = np.stack([r["loss0"][0] for r in runs])
    return {"c": CATAPULT_TIME_C, "widths": np.array(widths), "loss": loss, "eta": eta, "loss0": loss0,
            "z0": eta ** 2 * 2.0 * loss0 / np.array(widths)[:, None],
            "diverged": np.stack([r["diverged"][0] for r in runs]), "n_steps": n_steps}


# The largest trainable step of ReLU networks (lewkowycz2020's c_act ~ 12): fully connected, 3 hidden layers, NTK
# parameterization, MSE on one-hot digits, full-batch GD at eta = c/lambda0. c is located per network by successive
# grids of five step sizes each (one compiled program per width): RELU_C0 first, then five equally spaced points
# strictly inside the bracket (last converging, first diverging) of the previous grid.
RELU_C0 = (2.0, 8.0, 14.0, 20.0, 26.0)  # from the lazy edge 2 to twice the paper's 12 and more
RELU_SAMPLES = 128
RELU_DEPTH = 3       # hidden layers
RELU_LANCZOS = 20    # Lanczos steps for lambda0: converged to 1e-12 relative at width 128 (10 steps: 1e-4)


def relu_settings(budget: Budget) -> dict:
    """Widths, seeds per width, steps per run and bisection stages of :func:`relu_max_lr`.

    Every run that diverged in the sweeps tried diverged within 10 steps, so the quick budget's 100 steps are 10x the
    latest divergence seen and the full budget's 300 look three times further for a slow one.
    """
    return {"widths": budget.pick(quick=(128,), full=(128, 256)), "seeds": budget.pick(quick=(2,), full=(3, 1)),
            "n_steps": budget.pick(quick=100, full=300), "stages": 2}


def bracket(cs, diverged) -> tuple[float, float]:
    """(last value before the first divergence, first diverging value) of a sorted grid; (max, inf) if none diverged,
    (-inf, min) if all did."""
    cs, div = np.asarray(cs, float), np.asarray(diverged, bool)
    if not div.any():
        return float(cs[-1]), float("inf")
    k = int(np.argmax(div))
    return (float(cs[k - 1]) if k else float("-inf")), float(cs[k])


@experiment("eos.relu_max_lr")
def relu_max_lr(budget: Budget, depth: int = RELU_DEPTH) -> dict:
    """GD on the ReLU network (:func:`sims.eos_relu.relu_gd`) with ``depth`` hidden layers at the widths and seeds of
    :func:`relu_settings`: where it starts to diverge in c = eta*lambda0. Per network, every tested c with its outcome,
    and the located bracket."""
    s = relu_settings(budget)
    X, Y = relu_sim.digits_data(RELU_SAMPLES)
    rows = []
    for width, n_seeds in zip(s["widths"], s["seeds"]):
        widths = (X.shape[1],) + (width,) * depth + (Y.shape[1],)
        keys = jax.random.split(jax.random.key(SEED + 7), n_seeds)
        grids = [np.array(RELU_C0)] * n_seeds
        tested = [[] for _ in range(n_seeds)]
        for _ in range(s["stages"]):
            out = relu_sim.relu_gd(jax.numpy.repeat(keys, len(RELU_C0)), np.concatenate(grids), X, Y, widths=widths,
                              n_steps=s["n_steps"], lanczos_iter=RELU_LANCZOS)
            for i in range(n_seeds):
                sl = slice(i * len(RELU_C0), (i + 1) * len(RELU_C0))
                tested[i] += [(float(c), bool(d), int(st), float(fl), float(ml), float(lam)) for c, d, st, fl, ml, lam in
                              zip(grids[i], out["diverged"][sl], out["diverged_step"][sl], out["final_loss"][sl] /
                                  out["loss0"][sl], out["max_loss_ratio"][sl], out["lambda0"][sl])]
                rec = sorted(tested[i])
                lo, hi = bracket([r[0] for r in rec], [r[1] for r in rec])
                if not (np.isfinite(lo) and np.isfinite(hi)):
                    continue  # the edge is outside the first grid: nothing to refine (the grid is run again)
                grids[i] = np.round(lo + (hi - lo) * np.arange(1, len(RELU_C0) + 1) / (len(RELU_C0) + 1), 10)
        for i in range(n_seeds):
            rec = np.array(sorted(tested[i]))
            lo, hi = bracket(rec[:, 0], rec[:, 1].astype(bool))
            rows.append({"width": width, "seed": i, "c": rec[:, 0], "diverged": rec[:, 1].astype(bool),
                         "diverged_step": rec[:, 2].astype(int), "final_loss_ratio": rec[:, 3],
                         "max_loss_ratio": rec[:, 4], "lambda0": rec[0, 5], "lo": lo, "hi": hi})
    n_max = max(r["c"].size for r in rows)
    pad = lambda k, fill: np.array([np.pad(r[k].astype(float), (0, n_max - r[k].size), constant_values=fill)  # noqa: E731
                                    for r in rows])
    return {"width": np.array([r["width"] for r in rows]), "seed": np.array([r["seed"] for r in rows]),
            "lambda0": np.array([r["lambda0"] for r in rows]), "lo": np.array([r["lo"] for r in rows]),
            "hi": np.array([r["hi"] for r in rows]), "c": pad("c", np.nan), "diverged": pad("diverged", np.nan),
            "diverged_step": pad("diverged_step", np.nan), "final_loss_ratio": pad("final_loss_ratio", np.nan),
            "max_loss_ratio": pad("max_loss_ratio", np.nan), "n_steps": s["n_steps"], "depth": depth,
            "samples": RELU_SAMPLES}
