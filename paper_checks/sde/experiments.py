r"""The simulations of topic ``sde``: every named, cached, budgeted experiment behind the checks of Compagnoni et
al. 2025.

The claim modules of :mod:`paper_checks.sde` and ``figures/sde.py`` both call these; figures never simulate. Each
experiment sits beside the constants that set its grid, cells and seed, in the order of the claim modules that read
them (a comment names the module); helpers that a claim needs as well as its experiment (:func:`_ms_cell_args`,
:func:`_one_step_eta`, :func:`_sd_derivative`) live here too.

Longer than a theme module's ~400 lines because it holds all twenty experiments of the topic in one module, the
single place the figures and the claims read them from; each experiment is short, and spreading them over the theme
modules would make ``figures/sde.py`` import every one of those.
"""
from __future__ import annotations

import math

import jax
import numpy as np
import sympy as sp

import sims  # noqa: F401  (float64)
from paper_checks._experiment import experiment
from paper_checks._registry import Budget
from sims import sde as S
from sims.sweep import cartesian, run_grid
from theory import sde as T

ETA_TOY = 0.1               # step of the quartic / cosh threshold sweeps
LAMBDAS = (0.5, 1.0, 4.0)   # curvatures of the quadratic sweeps


# ======================================================================================== escape thresholds (escape.py)

def _escape_grid(grid: dict) -> dict:
    """:func:`sims.sde.escape_point` over ``grid``, padded to a fixed chunk so every sweep shares one compilation."""
    return run_grid(S.escape_point, grid, static={"gd_steps": 20, "ode_steps": 200}, chunk_size=1024,
                    pad_to_chunk=True)


@experiment("sde.escape")
def escape_sweeps(budget: Budget) -> dict:
    """Deterministic GD and the three modified ODEs on the quadratic (grid of u = eta*lambda per lambda), the
    quartic (grid of s = eta*x0^2 at eta = 0.1) and 2cosh (grid of x0 at eta = 0.1): escape flags and rates."""
    n = budget.pick(quick=161, full=641)
    # Geometric grids: no point lands on a threshold (u = 2, s = 2 or 2/3) or on eta*lambda = 1.
    u = np.geomspace(0.05, 4.0, n)
    s = np.geomspace(0.1, 4.0, n)
    x0 = np.geomspace(0.5, 6.0, n)
    lam = np.repeat(LAMBDAS, n)
    grid = {
        "problem": np.concatenate([np.zeros(lam.size, int), np.ones(n, int), np.full(n, 2)]),
        "x0": np.concatenate([np.ones(lam.size), np.sqrt(s / ETA_TOY), x0]),
        "eta": np.concatenate([np.tile(u, len(LAMBDAS)) / lam, np.full(2 * n, ETA_TOY)]),
        "lam": np.concatenate([lam, np.ones(2 * n)]),
    }
    r = _escape_grid(grid)
    q = len(LAMBDAS) * n
    out = {"u": u, "s": s, "x0": x0, "lambdas": np.asarray(LAMBDAS)}
    for k, v in r.items():
        v = np.asarray(v)
        out[f"quad_{k}"] = v[:q].reshape(len(LAMBDAS), n)
        out[f"quart_{k}"] = v[q:q + n]
        out[f"cosh_{k}"] = v[q + n:]
    return out


@experiment("sde.gd_rates")
def gd_rates(budget: Budget, h: float = 1e-3, u_small: float = 1e-3) -> dict:
    r"""Per-time log-rate of discrete GD on :math:`\lambda x^2/2`, :math:`r = \log(f_K/f_0)/(K\eta)`, at
    :math:`\eta\lambda = 2(1\pm h)` (either side of the edge) and at :math:`\eta\lambda` = ``u_small``."""
    u = np.array([2 * (1 - h), 2 * (1 + h), u_small])
    lam = np.repeat(LAMBDAS, u.size)
    # 20 steps of x <- x - eta*lambda*x, the GD half of the escape sweep's kernel (problem 0: the quadratic)
    r = _escape_grid({"problem": np.zeros(lam.size, int), "x0": np.ones(lam.size), "eta": np.tile(u, len(LAMBDAS)) / lam,
                      "lam": lam})
    return {"u": u, "lambdas": np.asarray(LAMBDAS), "rate": np.asarray(r["gd_rate"]).reshape(len(LAMBDAS), u.size),
            "diverged": np.asarray(r["gd_diverged"]).reshape(len(LAMBDAS), u.size)}


# =========================================================================================== weak order (weak_order.py)

_WEAK_SEED = 20250601


@experiment("sde.weak")
def weak_errors(budget: Budget, sigma0: float = 0.3) -> dict:
    r"""Weak error :math:`E f(x_K) - E f(X_T)` of DSGD on :math:`x^4/4` (:math:`x_0 = 1`, T = 1) against each
    SDE, on coupled paths; mean and standard error over the finite paths, diverged count beside."""
    etas = np.asarray(budget.pick(quick=[0.2, 0.1, 0.05, 0.025], full=[0.2, 0.1, 0.05, 0.025, 0.0125]))
    m = budget.pick(quick=2500, full=16000)
    grid, shape = cartesian(eta=etas, key=jax.random.split(jax.random.key(_WEAK_SEED), m))
    r = run_grid(S.weak_point, grid, static={"problem": "quartic", "x0": 1.0, "T": 1.0,
                                             "max_steps": int(round(1.0 / etas.min())), "substeps": 4,
                                             "sigma0": sigma0})
    ok = ~np.asarray(r["diverged"]).reshape(shape)
    out = {"eta": etas, "n": m, "n_diverged": ok.size - int(ok.sum())}
    for kind in T.DRIFT_KINDS:
        d = (r["loss"] - r[f"loss_{kind}"]).reshape(shape)
        out[f"{kind}_err"] = np.array([row[k].mean() for row, k in zip(d, ok)])
        out[f"{kind}_se"] = np.array([row[k].std(ddof=1) / math.sqrt(k.sum()) for row, k in zip(d, ok)])
    return out


# ================================================================== DCSGD (dcsgd.py), its divergence on x^4/4 (figures)

# Cells of the 1-D DCSGD measurements on f = a x^2/2: per-agent omegas (N = 4 agents) and sigma1.
DCSGD_A = 2.0
DCSGD_CELLS = (((0.0, 1.0, 3.0, 0.5), 0.7), ((3.0, 3.0, 3.0, 3.0), 0.0), ((0.0, 0.0, 0.0, 0.0), 1.0),
               ((1.0, 1.0, 1.0, 1.0), 1.0))
DCSGD_C = (1.0, 2.0, 3.0)
_DCSGD_SEED = 424242


@experiment("sde.dcsgd_quadratic")
def dcsgd_quadratic(budget: Budget) -> dict:
    r"""DCSGD on :math:`f = a x^2/2` (Bernoulli compressors, multiplicative noise, N = 4) with the prescribed
    normalization (:math:`L_0 = a`, :math:`L_1 = 0`, so the step is the constant :math:`c/(a F)`, F the
    compression/noise factor) for each cell and each c. The per-step multipliers
    :math:`M_k = f_{k+1}/f_k = (x_{k+1}/x_k)^2` are i.i.d.; returned: their mean (the mean-square factor)
    and the mean of :math:`\tfrac12\log M_k` (the Lyapunov exponent), each with its standard error."""
    n, steps = budget.pick(quick=256, full=4096), budget.pick(quick=48, full=64)
    cells = [(np.asarray(om), s1) for om, s1 in DCSGD_CELLS]
    grid, shape = cartesian(cell=np.arange(len(cells)), c=np.asarray(DCSGD_C),
                            key=jax.random.split(jax.random.key(_DCSGD_SEED), n))
    m = grid["c"].size
    cfg = S.Config(problem="quadratic", algo="dcsgd", n_agents=4, compressor="bernoulli", noise="gaussian",
                   n_steps=steps, n_record=steps)
    r = S.paths(cfg, {"key": grid["key"], "x0": np.ones((m, 1)), "eta": grid["c"], "lam": np.full(m, DCSGD_A),
                      "omega": np.stack([cells[i][0] for i in grid["cell"]]),
                      "sigma1": np.array([cells[i][1] for i in grid["cell"]]),
                      "normalized": np.ones(m), "L0": np.full(m, DCSGD_A), "L1": np.zeros(m)})
    f = np.concatenate([np.asarray(r["loss0"])[:, None], np.asarray(r["loss"])], axis=1)
    ok = ~np.asarray(r["diverged"]) & np.all(f > 0, axis=1)  # underflow to 0 would make a ratio meaningless
    mult = (f[:, 1:] / f[:, :-1]).reshape(shape + (steps,))
    ok = ok.reshape(shape)
    out = {"c": np.asarray(DCSGD_C), "n_paths": n, "n_steps": steps, "n_dropped": int(ok.size - ok.sum())}
    rho, rho_se, gam, gam_se = (np.empty(shape[:2]) for _ in range(4))
    for i in range(shape[0]):
        for j in range(shape[1]):
            v = mult[i, j][ok[i, j]].ravel()
            rho[i, j], rho_se[i, j] = v.mean(), v.std(ddof=1) / math.sqrt(v.size)
            lg = 0.5 * np.log(v)
            gam[i, j], gam_se[i, j] = lg.mean(), lg.std(ddof=1) / math.sqrt(lg.size)
    out.update(rho=rho, rho_se=rho_se, gamma=gam, gamma_se=gam_se)
    return out


_DIV_SEED = 31337
DIV_OMEGAS = (0.0, 1.0, 3.0, 7.0)
DIV_SIGMAS = (0.5, 1.0, 2.0)
DIV_X0 = (1.0, 2.0, 3.0)


@experiment("sde.quartic_divergence")
def quartic_divergence(budget: Budget) -> dict:
    r"""DCSGD on :math:`x^4/4` (N = 4, Bernoulli, multiplicative noise) over (omega, sigma1, x0) cells: constant
    :math:`\eta = 0.1` and the prescribed normalization with :math:`c = 1` (:math:`L_1 = 2`, :math:`L_0 = 4/L_1^2 = 1`),
    in one compilation. Diverged fractions, and the median final loss over the finite normalized runs."""
    n, steps = budget.pick(quick=32, full=1000), budget.pick(quick=100, full=1000)
    grid, shape = cartesian(omega=np.asarray(DIV_OMEGAS), sigma1=np.asarray(DIV_SIGMAS), x0=np.asarray(DIV_X0)[:, None],
                            key=jax.random.split(jax.random.key(_DIV_SEED), n))
    m = grid["omega"].shape[0]
    both = {k: (jax.numpy.concatenate if k == "key" else np.concatenate)([v, v]) for k, v in grid.items()}
    flag = np.repeat([0.0, 1.0], m)
    cfg = S.Config(problem="quartic", algo="dcsgd", n_agents=4, compressor="bernoulli", noise="gaussian",
                   n_steps=steps, n_record=10)
    r = S.paths(cfg, {**both, "normalized": flag, "eta": np.where(flag > 0, 1.0, 0.1), "L0": np.full(2 * m, 1.0),
                      "L1": np.full(2 * m, 2.0)})
    out = {"omega": np.asarray(DIV_OMEGAS), "sigma1": np.asarray(DIV_SIGMAS), "x0": np.asarray(DIV_X0), "n": n}
    for i, name in enumerate(("constant", "normalized")):
        sl = slice(i * m, (i + 1) * m)
        div = np.asarray(r["diverged"][sl]).reshape(shape)
        final = np.asarray(r["loss"][sl, -1]).reshape(shape)
        out[f"{name}_diverged"] = div
        out[f"{name}_frac"] = div.mean(axis=-1)
        out[f"{name}_final"] = np.array([np.median(fr[~dv]) if (~dv).any() else np.nan
                                         for fr, dv in zip(final.reshape(-1, n), div.reshape(-1, n))]).reshape(shape[:-1])
    return out


# =================================================================================================== (L0, L1) (l0l1.py)

_L0L1_CASES = (("quartic", 2.0), ("quartic", 1.0), ("cosh2", 1.0))


@experiment("sde.descent")
def descent_factors(budget: Budget) -> dict:
    r"""Largest factor :math:`c^\ast(x)` by which the sufficient step :math:`2/(L_0 + L_1|f'(x)|)` can be stretched
    while one GD step still decreases f, by bisection on the loss at 4000 starts in [-40, 40]."""
    xs = np.concatenate([-np.geomspace(1e-3, 40, 2000), np.geomspace(1e-3, 40, 2000)])
    out = {"x": xs}
    for name, L1 in _L0L1_CASES:
        L0 = float(T.l0_for_l1(T.toy_function(name), L1))
        # The step rule's input f'(x) (not the measurement) comes from sympy; the loss is evaluated in JAX.
        fp = sp.lambdify(T.X, sp.diff(T.toy_function(name), T.X), "numpy")(xs)
        eta_unit = np.array([T.sufficient_step(L0, L1, abs(g)) for g in fp])
        out[f"{name}_{L1:g}_c"] = np.asarray(S.descent_edge(xs, eta_unit, problem=name, c_max=100.0, n_bisect=60))
    return out


_L0L1_SUP_CASES = (("quartic", 2.0), ("quartic", 1.0), ("cosh2", 1.0), ("logcosh", 0.0))


@experiment("sde.l0l1_sup")
def l0l1_sup(budget: Budget) -> dict:
    r""":math:`\sup_{x\ge0}(|f''(x)| - L_1|f'(x)|)` by autodiff on a grid over [0, 30], zoomed four times
    around the grid maximum (each zoom: a new grid over the two neighbouring cells)."""
    n = budget.pick(quick=4001, full=40001)
    sup = []
    for name, L1 in _L0L1_SUP_CASES:
        lo, hi = 0.0, 30.0
        for _ in range(4):
            x = np.linspace(lo, hi, n)
            fp, fpp = (np.asarray(a) for a in S.derivatives(name, x))
            h = np.abs(fpp) - L1 * np.abs(fp)
            i = int(np.argmax(h))
            dx = x[1] - x[0]
            lo, hi = max(0.0, x[i] - dx), x[i] + dx
        sup.append(float(h[i]))
    return {"sup": np.asarray(sup), "L1": np.asarray([c[1] for c in _L0L1_SUP_CASES])}


# =============================================================================================== sign methods (sign.py)

_SIGN_SEED = 99
SIGN_LAWS = (("gaussian", None), ("student_t", 3.0), ("cauchy", None))


@experiment("sde.mean_sign")
def mean_sign_mc(budget: Budget) -> dict:
    r"""Monte Carlo mean and variance of :math:`\mathrm{sign}(g + Z)` for three noise laws at 17 points in [-4, 4]."""
    n = budget.pick(quick=20_000, full=400_000)
    u = np.linspace(-4, 4, 17)
    keys = jax.random.split(jax.random.key(_SIGN_SEED), len(SIGN_LAWS))
    many = S.mean_sign_mc_many(keys, u, 1.0, tuple(law for law, _ in SIGN_LAWS), n, 3.0)
    out = {"u": u, "n": n}
    for law, _ in SIGN_LAWS:
        out[f"{law}_mean"], out[f"{law}_var"] = np.asarray(many[law]["mean"]), np.asarray(many[law]["var"])
    return out


_CAUCHY_SEED = 777
CAUCHY_ETA, CAUCHY_X0, CAUCHY_AGENTS = 0.1, 3.0, 4


@experiment("sde.cauchy_sign")
def cauchy_sign(budget: Budget) -> dict:
    r"""DSignSGD on :math:`2\cosh x` with Cauchy noise (:math:`\sigma_0 = 1`), N = 4, :math:`\eta_k = 0.1/\sqrt{k+1}`,
    from :math:`x_0 = 3`: the gap :math:`f - f^\ast` at 40 checkpoints of every path, and the diverged count."""
    # quick: 2048 paths put the nearest rival (a 1/k decay, 0.85 in the late window) ~9 SE from the prediction, so 4-SE
    # bands about each stay apart unless the estimate strays 5 SE (1024 paths left 6.5 SE: a 2.5-SE draw was inconclusive)
    n, steps = budget.pick(quick=2048, full=4096), budget.pick(quick=4000, full=16000)
    cfg = S.Config(problem="cosh2", algo="dsignsgd", n_agents=CAUCHY_AGENTS, noise="cauchy", schedule="inv_sqrt",
                   n_steps=steps, n_record=40)
    r = S.paths(cfg, {"key": jax.random.split(jax.random.key(_CAUCHY_SEED), n), "x0": np.full((n, 1), CAUCHY_X0),
                      "eta": np.full(n, CAUCHY_ETA), "sigma0": np.ones(n)})
    return {"k": np.arange(1, 41) * (steps // 40), "gap": np.asarray(r["loss"]) - 2.0, "diverged": np.asarray(r["diverged"]),
            "n_steps": steps}


@experiment("sde.cauchy_dcsgd")
def cauchy_dcsgd(budget: Budget) -> dict:
    r"""For the figure: DCSGD (Bernoulli q = 0.5) and its normalization (:math:`(L_0, L_1) = (2, 1)`) under the same
    Cauchy noise and schedule as :func:`cauchy_sign`: the gap at 40 checkpoints and the diverged flags."""
    n, steps = budget.pick(quick=64, full=2000), budget.pick(quick=1000, full=4000)
    keys = jax.random.split(jax.random.key(_CAUCHY_SEED + 1), n)
    cfg = S.Config(problem="cosh2", algo="dcsgd", n_agents=CAUCHY_AGENTS, compressor="bernoulli", noise="cauchy",
                   schedule="inv_sqrt", n_steps=steps, n_record=40)
    r = S.paths(cfg, {"key": jax.numpy.concatenate([keys, keys]), "x0": np.full((2 * n, 1), CAUCHY_X0),
                      "eta": np.full(2 * n, CAUCHY_ETA), "omega": np.ones(2 * n), "sigma0": np.ones(2 * n),
                      "normalized": np.repeat([0.0, 1.0], n), "L0": np.full(2 * n, 2.0), "L1": np.ones(2 * n)})
    gap, div = np.asarray(r["loss"]) - 2.0, np.asarray(r["diverged"])
    return {"k": np.arange(1, 41) * (steps // 40), "dcsgd_gap": gap[:n], "dcsgd_diverged": div[:n],
            "normalized_gap": gap[n:], "normalized_diverged": div[n:]}


# ========================================================================================================= MLP (mlp.py)

_MLP_SEED = 2024
MLP_OMEGAS = (0.0, 48.0)
MLP_SIGMA0, MLP_SIGMA1, MLP_AGENTS, MLP_L0, MLP_L1 = 0.01, 0.5, 8, 2.6, 1.0


@experiment("sde.mlp_edge")
def mlp_edge(budget: Budget) -> dict:
    r"""The prescribed normalization on the MLP (d = 49, N = 8 agents, rand-k compression, injected affine-variance
    noise) over a geometric grid of its constant c and two compression levels: per (c, omega) the runs' final/
    initial loss ratios and diverged flags."""
    n, steps = budget.pick(quick=6, full=24), budget.pick(quick=60, full=200)
    omegas = np.asarray(budget.pick(quick=MLP_OMEGAS, full=(0.0, 3.0, 11.0, 48.0)))
    cs = np.geomspace(1.0, 128.0, budget.pick(quick=15, full=29))
    init = np.stack([np.asarray(S.mlp_init(k, 2.0)) for k in jax.random.split(jax.random.fold_in(jax.random.key(_MLP_SEED), 1), n)])
    grid, shape = cartesian(c=cs, omega=omegas, idx=np.arange(n))
    m = grid["c"].size
    cfg = S.Config(problem="mlp", algo="dcsgd", n_agents=MLP_AGENTS, compressor="rand_k", noise="gaussian",
                   n_steps=steps, n_record=1, bound=1e6)
    # Parameters beyond 1e6 count as diverged: the tanh layer saturates, so the loss grows only polynomially
    # in the weights and a 1e100 bound would take thousands of steps to trip.
    r = S.paths(cfg, {"key": jax.random.split(jax.random.key(_MLP_SEED), m), "x0": init[grid["idx"]], "eta": grid["c"],
                      "omega": grid["omega"], "normalized": np.ones(m), "sigma0": np.full(m, MLP_SIGMA0),
                      "sigma1": np.full(m, MLP_SIGMA1), "L0": np.full(m, MLP_L0), "L1": np.full(m, MLP_L1)})
    ratio = (np.asarray(r["loss"])[:, -1] / np.asarray(r["loss0"])).reshape(shape)
    return {"c": cs, "omega": omegas, "ratio": ratio, "diverged": np.asarray(r["diverged"]).reshape(shape), "n": n,
            "n_steps": steps}


# ========================================================================= mean-square thresholds per model (models.py)

# Cells (a, N, omega per agent or scalar, sigma1) of f = a x^2/2 with compressed multiplicative noise. E = V/N spans
# both sides of 1, so the classic second-order SDE has a finite threshold in two cells and none in the others.
MS_CELLS = ((2.0, 4, (0.0, 1.0, 3.0, 0.5), 0.7), (1.0, 1, (3.0,), 0.3), (1.0, 4, (0.0, 0.0, 0.0, 0.0), 1.0),
            (0.5, 1, (1.0,), 1.0))
MS_GRID = (0.5, 8.0, 13)   # coarse SDE grid: 13 steps log-spaced over [0.5, 8] x the measured discrete threshold
MS_FINE = 6                # fine SDE grid: 6 steps over +-20 % around the coarse estimate of each edge
MS_FINE_SPAN = 0.2
MS_HORIZON_SPREAD = 0.4    # each SDE runs for the time t with sigma^2 t = 0.4: the rate's standard error is least there
MS_SUBSTEPS = 32           # Euler-Maruyama steps per run
_MS_SEED = 6021


def _ms_cell_args(cell) -> tuple:
    a, n, om, s1 = cell
    return a, n, np.asarray(om), s1


def _ms_sde_rates(key, cells: list, cell: np.ndarray, kind: np.ndarray, eta: np.ndarray, excess: np.ndarray,
                  n_paths: int) -> tuple[np.ndarray, np.ndarray]:
    r"""Each point's SDE second-moment rate :math:`\log(\overline{X_t^2})/t` from :math:`X_0 = 1` over ``n_paths``
    Euler-Maruyama paths (independent keys at every point), and its delta-method standard error.

    Point :math:`p` runs model ``kind[p]`` (an index into :data:`theory.sde.DRIFT_KINDS`) of cell ``cell[p]`` at step
    ``eta[p]`` for the time :math:`t = 0.4/(\eta a^2\hat E)` (``excess`` :math:`\hat E` per cell, measured from the
    one-step draws): :math:`X_t^2` is then nearly log-normal with log-variance :math:`4\sigma^2t = 1.6`, and the rate's
    relative standard error :math:`\sqrt{(e^{4\sigma^2t} - 1)/n}/(\sigma^2t)` is least near :math:`\sigma^2t = 0.4`.
    """
    a = np.array([c[0] for c in cells])
    t = MS_HORIZON_SPREAD / (eta * a[cell] ** 2 * excess[cell])
    grid, shape = cartesian(point=np.arange(eta.size), path=np.arange(n_paths))
    pt = grid["point"]
    c = cell[pt]
    keys = jax.random.split(key, pt.size)                       # independent paths at every point
    r = S.sde_sweep("dcsgd", {"key": keys, "x0": np.ones((pt.size, 1)), "eta": eta[pt],
                              "dt": t[pt] / MS_SUBSTEPS, "lam": a[c],
                              "omega": np.array([np.mean(cells[j][2]) for j in c]),
                              "sigma1": np.array([cells[j][3] for j in c]),
                              "n_agents": np.array([float(cells[j][1]) for j in c]), "kind": kind[pt]},
                    problem="quadratic", kind=None, n_steps=MS_SUBSTEPS, chunk_size=8192)
    x2 = (np.asarray(r["x"])[:, 0] ** 2).reshape(shape)
    mean = x2.mean(axis=1)
    return np.log(mean) / t, x2.std(axis=1, ddof=1) / mean / math.sqrt(n_paths) / t


def _root_of_line(eta: np.ndarray, rate: np.ndarray, se: np.ndarray) -> tuple[float, float]:
    """Where the weighted least-squares line through (eta, rate) crosses 0, and its delta-method standard error.

    The SDE's rate is affine in eta (drift and diffusion coefficients are), so the line is the model of the curve,
    not an approximation of it (Euler-Maruyama's own curvature is in :func:`_em_root_bias`).
    """
    w = 1.0 / se**2
    X = np.stack([np.ones_like(eta), eta], axis=1)
    cov = np.linalg.inv(X.T @ (w[:, None] * X))
    b0, b1 = cov @ (X.T @ (w * rate))
    grad = np.array([-1.0 / b1, b0 / b1**2])
    return float(-b0 / b1), float(math.sqrt(grad @ cov @ grad))


@experiment("sde.ms_thresholds")
def ms_thresholds(budget: Budget) -> dict:
    r"""On :math:`f = a x^2/2` per cell of :data:`MS_CELLS`: (1) one-step draws of DCSGD's agent-averaged direction
    D at x = 1 (the simulator's own noise, compressors and averaging), whose moments give the one-step
    second-moment factor :math:`\rho(\eta) = 1 - 2\eta\,E D + \eta^2 E D^2` at every step at once; (2) each modified
    equation's own mean-square edge, located on the SDE: its second-moment rate (:func:`_ms_sde_rates`) on a coarse
    grid of :data:`MS_GRID` steps (in units of the discrete threshold measured in (1), never a prediction), then on
    :data:`MS_FINE` steps around the coarse estimate of the sign change, where a weighted line gives the root."""
    n_draws = budget.pick(quick=40_000, full=1_000_000)
    # paths per SDE step: at full the coarse and fine stages together (4 x 3 x 13 x 2000 + 10 x 6 x 18000 paths x 32
    # steps = 44.6M path-steps) run fewer than the one-step-time runs they replaced (720k paths x 64 steps = 46.1M);
    # the fine stage sets the edges' standard errors
    n_coarse, n_fine = budget.pick(quick=2_000, full=2_000), budget.pick(quick=16_000, full=18_000)
    keys = jax.random.split(jax.random.key(_MS_SEED), len(MS_CELLS) + 2)
    out = {"n_draws": n_draws, "n_coarse": n_coarse, "n_fine": n_fine}
    d1, d2, d1_se, d2_se, cov = (np.empty(len(MS_CELLS)) for _ in range(5))
    for i, cell in enumerate(MS_CELLS):
        a, n, om, s1 = _ms_cell_args(cell)
        cfg = S.Config(problem="quadratic", algo="dcsgd", n_agents=n, compressor="bernoulli", noise="gaussian")
        D = np.asarray(S.aggregate_samples(keys[i], cfg, np.array([a]), n_draws, omega=om, sigma1=s1))[:, 0]
        d1[i], d2[i] = D.mean(), (D**2).mean()
        d1_se[i], d2_se[i] = D.std(ddof=1), (D**2).std(ddof=1)
        cov[i] = np.cov(D, D**2)[0, 1]
    out.update(d1=d1, d2=d2, d1_sd=d1_se, d2_sd=d2_se, cov12=cov)
    cells = [_ms_cell_args(c) for c in MS_CELLS]
    eta_hat = 2 * d1 / d2                                 # the measured discrete threshold
    excess = d2 / d1**2 - 1                                # the measured relative variance of D
    n_cells, n_kinds = len(MS_CELLS), len(T.DRIFT_KINDS)
    frac = np.geomspace(*MS_GRID)
    c, k, f = (g.ravel() for g in np.meshgrid(np.arange(n_cells), np.arange(n_kinds), np.arange(frac.size),
                                              indexing="ij"))
    coarse, coarse_se = _ms_sde_rates(keys[-2], cells, c, k, eta_hat[c] * frac[f], excess, n_coarse)
    coarse, coarse_se = coarse.reshape(n_cells, n_kinds, -1), coarse_se.reshape(n_cells, n_kinds, -1)
    # fine grids centred on the coarse estimate of each edge (cells x models whose rate never turns positive get none):
    # the root of the weighted line through the coarse rates on both sides of the first sign change
    crossing = np.zeros((n_cells, n_kinds), bool)
    fine_eta = np.full((n_cells, n_kinds, MS_FINE), np.nan)
    for ci in range(n_cells):
        for ki in range(n_kinds):
            up = np.flatnonzero(coarse[ci, ki] > 0)
            if not (up.size and up[0] > 0):
                continue
            crossing[ci, ki] = True
            near = slice(max(up[0] - 2, 0), up[0] + 2)
            guess, _ = _root_of_line(eta_hat[ci] * frac[near], coarse[ci, ki, near], coarse_se[ci, ki, near])
            lo, hi = eta_hat[ci] * frac[up[0] - 1], eta_hat[ci] * frac[up[0]]
            centre = guess if lo <= guess <= hi else math.sqrt(lo * hi)   # a wild coarse line: the bracket's middle
            fine_eta[ci, ki] = centre * np.linspace(1 - MS_FINE_SPAN, 1 + MS_FINE_SPAN, MS_FINE)
    cc, kk = np.nonzero(crossing)
    fine, fine_se = _ms_sde_rates(keys[-1], cells, np.repeat(cc, MS_FINE), np.repeat(kk, MS_FINE),
                                  fine_eta[cc, kk].ravel(), excess, n_fine)
    root, root_se = np.full((n_cells, n_kinds), np.inf), np.full((n_cells, n_kinds), np.nan)
    fine_rate, fine_rate_se = np.full_like(fine_eta, np.nan), np.full_like(fine_eta, np.nan)
    for j, (ci, ki) in enumerate(zip(cc, kk)):
        sl = slice(j * MS_FINE, (j + 1) * MS_FINE)
        fine_rate[ci, ki], fine_rate_se[ci, ki] = fine[sl], fine_se[sl]
        root[ci, ki], root_se[ci, ki] = _root_of_line(fine_eta[ci, ki], fine[sl], fine_se[sl])
    out.update(eta_hat=eta_hat, excess_hat=excess, grid=frac, coarse_rate=coarse, coarse_rate_se=coarse_se,
               crossing=crossing, fine_eta=fine_eta, fine_rate=fine_rate, fine_rate_se=fine_rate_se, sde_root=root,
               sde_root_se=root_se)
    return out


# =========================================================================================== one-step drift (models.py)

# (function, x, eta * f''(x)) of the one-step test; DCSGD with N = 4 agents, per-agent Bernoulli compressors and
# multiplicative noise. eta f'' = 0.05 keeps the O(eta^2) remainder about 20x below the curvature term tested.
ONE_STEP_POINTS = (("quartic", 0.6, 0.05), ("quartic", 1.0, 0.05), ("quartic", 1.4, 0.05), ("cosh2", 0.5, 0.05),
                   ("cosh2", 1.2, 0.05))
ONE_STEP_OMEGA, ONE_STEP_SIGMA1, ONE_STEP_AGENTS = (0.0, 1.0, 3.0, 0.5), 0.5, 4
_ONE_STEP_SEED = 8080


def _toy_f(name: str, x):
    return x**4 / 4 if name == "quartic" else 2 * np.cosh(x)


def _one_step_eta(name: str, x: float, h: float) -> float:
    fpp = float(sp.diff(T.toy_function(name), T.X, 2).subs(T.X, x))
    return h / fpp


@experiment("sde.one_step_drift")
def one_step_drift(budget: Budget) -> dict:
    r"""One DCSGD step from each point of :data:`ONE_STEP_POINTS`: draws of the agent-averaged direction D at the
    true gradient (the simulator's noise, compressors and averaging), and per draw
    :math:`Q = [f(x - \eta D) - f(x)]/\eta + f'(x)(D - f'(x))`. The second term is a control variate with mean 0
    (D is unbiased), which removes the first-order noise; E Q is the one-step decrease. Mean and SE of Q."""
    n = budget.pick(quick=50_000, full=1_000_000)
    cfg = S.Config(problem="quartic", algo="dcsgd", n_agents=ONE_STEP_AGENTS, compressor="bernoulli", noise="gaussian")
    keys = jax.random.split(jax.random.key(_ONE_STEP_SEED), len(ONE_STEP_POINTS))
    mean, se, plain_se = (np.empty(len(ONE_STEP_POINTS)) for _ in range(3))
    for i, (name, x, h) in enumerate(ONE_STEP_POINTS):
        g = x**3 if name == "quartic" else 2 * math.sinh(x)
        eta = _one_step_eta(name, x, h)
        D = np.asarray(S.aggregate_samples(keys[i], cfg, np.array([g]), n, omega=np.asarray(ONE_STEP_OMEGA),
                                           sigma1=ONE_STEP_SIGMA1))[:, 0]
        plain = (_toy_f(name, x - eta * D) - _toy_f(name, x)) / eta
        q = plain + g * (D - g)
        mean[i], se[i] = q.mean(), q.std(ddof=1) / math.sqrt(n)
        plain_se[i] = plain.std(ddof=1) / math.sqrt(n)
    return {"mean": mean, "se": se, "plain_se": plain_se, "n": n}


# ======================================================================= the degree of normalization (normalization.py)

NORM_A, NORM_AGENTS, NORM_SIGMA1, NORM_SIGMA0 = 1.0, 4, 0.5, 0.1
NORM_OMEGAS = (0.0, 3.0, 15.0, 63.0)     # edge cells: from no compression to keeping 1/64 of the coordinates
FLOOR_OMEGAS, FLOOR_C = (0.0, 3.0), (0.5, 1.0)
_NORM_SEED = 5150


@experiment("sde.normalization_degree")
def normalization_degree(budget: Budget) -> dict:
    r"""(1) One-step draws of DCSGD's direction D at x = 1 on :math:`f = a x^2/2` (multiplicative noise, N = 4, Bernoulli
    compressors) for each omega of :data:`NORM_OMEGAS`: sample moments of D and D^2. (2) Paths of the prescribed rule
    (:math:`L_1 = 0`: the step :math:`c/(aF)`) with affine noise (:math:`\sigma_0 > 0`) for each (omega, c) of
    :data:`FLOOR_OMEGAS` x :data:`FLOOR_C`: each path's mean loss over the second half of its steps. The path grid
    has the shapes of ``sde.dcsgd_quadratic`` (one compilation for both)."""
    n = budget.pick(quick=200_000, full=4_000_000)
    cfg = S.Config(problem="quadratic", algo="dcsgd", n_agents=NORM_AGENTS, compressor="bernoulli", noise="gaussian")
    keys = jax.random.split(jax.random.key(_NORM_SEED), len(NORM_OMEGAS) + 1)
    m = np.empty((len(NORM_OMEGAS), 5))   # mean D, mean D^2, sd D, sd D^2, cov(D, D^2)
    for i, om in enumerate(NORM_OMEGAS):
        D = np.asarray(S.aggregate_samples(keys[i], cfg, np.array([NORM_A]), n, omega=om, sigma1=NORM_SIGMA1))[:, 0]
        m[i] = D.mean(), (D**2).mean(), D.std(ddof=1), (D**2).std(ddof=1), np.cov(D, D**2)[0, 1]
    n_paths, steps = budget.pick(quick=768, full=12288), budget.pick(quick=48, full=64)
    grid, shape = cartesian(omega=np.asarray(FLOOR_OMEGAS), c=np.asarray(FLOOR_C),
                            key=jax.random.split(keys[-1], n_paths))
    k = grid["c"].size
    pcfg = S.Config(problem="quadratic", algo="dcsgd", n_agents=NORM_AGENTS, compressor="bernoulli", noise="gaussian",
                    n_steps=steps, n_record=steps)
    r = S.paths(pcfg, {"key": grid["key"], "x0": np.ones((k, 1)), "eta": grid["c"], "lam": np.full(k, NORM_A),
                       "omega": np.repeat(grid["omega"][:, None], NORM_AGENTS, axis=1),
                       "sigma0": np.full(k, NORM_SIGMA0), "sigma1": np.full(k, NORM_SIGMA1), "normalized": np.ones(k),
                       "L0": np.full(k, NORM_A), "L1": np.zeros(k)})
    late = np.asarray(r["loss"])[:, steps // 2:].mean(axis=1).reshape(shape)
    div = np.asarray(r["diverged"]).reshape(shape)
    return {"n": n, "moments": m, "floor_path_means": late, "floor_diverged": div.sum(axis=-1), "n_paths": n_paths,
            "n_steps": steps}


# ======================================================================= weak order of the new SDEs (weak_order_new.py)

WEAK_NEW = {"T": 1.0, "x0": 1.0, "omega": 1.0, "sigma1": 0.5, "agents": 4, "sign_sigma0": 1.0, "sign_agents": 16,
            "substeps": 4}
_WEAK_NEW_SEED = 20260611


@experiment("sde.weak_new")
def weak_new(budget: Budget) -> dict:
    r"""Weak error :math:`E f(x_K) - E f(X_T)` on :math:`x^4/4` (:math:`x_0 = 1`, T = 1, N = 4) of (a) DCSGD (Bernoulli
    compressors omega = 1, multiplicative noise sigma1 = 0.5) against its first-order and corrected SDEs and (b)
    DSignSGD (Gaussian noise sigma0 = 1, N = 16) against its first-order SDE. Independent Monte Carlo for the discrete
    chains (``sims.sde.paths``) and the SDEs (``sims.sde.sde_sweep``, Euler-Maruyama with dt = eta/4); every
    run goes to K_max steps with the loss recorded at each discrete step, and E f is read at step K = T/eta
    (one compilation per chain for all step sizes). Means over the runs still finite at T, with SEs."""
    w = WEAK_NEW
    etas = np.asarray(budget.pick(quick=[0.2, 0.1, 0.05, 0.025], full=[0.2, 0.1, 0.05, 0.025, 0.0125]))
    n = budget.pick(quick=12_000, full=40_000)
    k_max, m = int(round(w["T"] / etas.min())), int(w["substeps"])
    K = np.rint(w["T"] / etas).astype(int)
    keys = jax.random.split(jax.random.key(_WEAK_NEW_SEED), 4)
    eta = np.repeat(etas, n)
    size = eta.size
    out = {"eta": etas, "n": n}

    def read(loss, diverged_at, steps_per_record):
        loss = np.asarray(loss).reshape(len(etas), n, -1)
        at = np.asarray(diverged_at).reshape(len(etas), n)
        vals = np.array([loss[i, :, K[i] - 1] for i in range(len(etas))])
        ok = (at < 0) | (at > K[:, None] * steps_per_record)
        mean = np.array([v[o].mean() for v, o in zip(vals, ok)])
        se = np.array([v[o].std(ddof=1) / math.sqrt(o.sum()) for v, o in zip(vals, ok)])
        return mean, se, int(ok.size - ok.sum())

    common = {"x0": np.full((size, 1), w["x0"]), "eta": eta}
    # one chunk at the quick budget (48,000 paths); at the full budget (200,000) chunks of 25,000, so that a chunk's
    # block draws (24 B x 2048 per path and kind) stay within the default allocation limit of a 16 GiB machine
    # (one chunk needed ~10 GiB; paths are independent, so the chunking changes no path)
    chunk = size if size <= 50_000 else 25_000
    cfg = S.Config(problem="quartic", algo="dcsgd", n_agents=w["agents"], compressor="bernoulli", noise="gaussian",
                   n_steps=k_max, n_record=k_max)
    r = S.paths(cfg, {**common, "key": jax.random.split(keys[0], size), "omega": np.full(size, w["omega"]),
                      "sigma1": np.full(size, w["sigma1"])}, chunk_size=chunk)
    out["dcsgd_mean"], out["dcsgd_se"], out["dcsgd_div"] = read(r["loss"], r["diverged_at"], 1)
    kinds = np.repeat([0, 2], size)   # first_order, corrected as data: one compilation
    r = S.sde_sweep("dcsgd", {"key": jax.random.split(keys[1], 2 * size), "x0": np.tile(common["x0"], (2, 1)),
                              "eta": np.tile(eta, 2), "dt": np.tile(eta / m, 2), "omega": np.full(2 * size, w["omega"]),
                              "sigma1": np.full(2 * size, w["sigma1"]), "n_agents": np.full(2 * size, float(w["agents"])),
                              "kind": kinds}, problem="quartic", kind=None, n_steps=m * k_max, n_record=k_max,
                    chunk_size=min(2 * size, 2 * chunk))
    for j, kind in enumerate(("first_order", "corrected")):
        sl = slice(j * size, (j + 1) * size)
        out[f"dcsgd_{kind}_mean"], out[f"dcsgd_{kind}_se"], out[f"dcsgd_{kind}_div"] = read(
            r["loss"][sl], r["diverged_at"][sl], m)
    # 16 agents for the signs: the Monte Carlo noise of f(x_K) shrinks like 1/sqrt(N), the drift's O(eta) error does not
    cfg = S.Config(problem="quartic", algo="dsignsgd", n_agents=w["sign_agents"], noise="gaussian", n_steps=k_max,
                   n_record=k_max)
    r = S.paths(cfg, {**common, "key": jax.random.split(keys[2], size), "sigma0": np.full(size, w["sign_sigma0"])},
                chunk_size=chunk)
    out["dsignsgd_mean"], out["dsignsgd_se"], out["dsignsgd_div"] = read(r["loss"], r["diverged_at"], 1)
    r = S.sde_sweep("dsignsgd", {**common, "key": jax.random.split(keys[3], size), "dt": eta / m,
                                 "sigma0": np.full(size, w["sign_sigma0"]),
                                 "n_agents": np.full(size, float(w["sign_agents"]))},
                    problem="quartic", kind="first_order", noise="gaussian", n_steps=m * k_max, n_record=k_max,
                    chunk_size=chunk)
    out["dsignsgd_first_order_mean"], out["dsignsgd_first_order_se"], out["dsignsgd_first_order_div"] = read(
        r["loss"], r["diverged_at"], m)
    return out


# ======================================================================== DSignSGD under Student-t noise (student_t.py)

T_NU, T_SIGMAS, T_AGENTS, T_X0 = 1.5, (0.5, 1.0, 2.0), 4, 0.5
T_ETA_CONST, T_ETA_DECAY = 0.02, 0.1
T_RECORDS = 200   # checkpoints per path: a window average over many nearly independent states (power at quick)
_T_SEED = 1515


@experiment("sde.student_t_sign")
def student_t_sign(budget: Budget) -> dict:
    r"""DSignSGD on :math:`2\cosh x` (N = 4, :math:`x_0 = 0.5`) under Student-t noise with non-integer
    :math:`\nu = 1.5` (infinite variance) of scales :data:`T_SIGMAS`, with a constant step 0.02 and with
    :math:`\eta_k = 0.1/\sqrt{k+1}`: the gap :math:`f - f^\ast` at 200 checkpoints of every path, diverged flags."""
    n = budget.pick(quick=384, full=2048)
    steps = {"constant": budget.pick(quick=1200, full=4000), "inv_sqrt": budget.pick(quick=4000, full=8000)}
    keys = jax.random.split(jax.random.key(_T_SEED), 2)
    out = {"n": n, "sigmas": np.asarray(T_SIGMAS)}
    for i, (schedule, eta) in enumerate((("constant", T_ETA_CONST), ("inv_sqrt", T_ETA_DECAY))):
        cfg = S.Config(problem="cosh2", algo="dsignsgd", n_agents=T_AGENTS, noise="student_t", nu=T_NU,
                       schedule=schedule, n_steps=steps[schedule], n_record=T_RECORDS)
        grid, shape = cartesian(sigma0=np.asarray(T_SIGMAS), key=jax.random.split(keys[i], n))
        m = grid["sigma0"].size
        r = S.paths(cfg, {"key": grid["key"], "x0": np.full((m, 1), T_X0), "eta": np.full(m, eta),
                          "sigma0": grid["sigma0"]})
        out[f"{schedule}_gap"] = (np.asarray(r["loss"]) - 2.0).reshape(shape + (T_RECORDS,))
        out[f"{schedule}_diverged"] = np.asarray(r["diverged"]).reshape(shape)
        out[f"{schedule}_k"] = np.arange(1, T_RECORDS + 1) * (steps[schedule] // T_RECORDS)
        out[f"{schedule}_steps"] = steps[schedule]
    return out


# ==================================================================== Theorem 4.2's step condition (step_conditions.py)

THM42_CELLS = ((1.0, (0.0, 1.0, 3.0, 0.5), 0.7), (1.0, (3.0, 3.0, 3.0, 3.0), 0.3), (2.0, (1.0, 1.0, 1.0, 1.0), 1.0))
THM42_DIMS = (1, 8)
_THM42_SEED = 4242


@experiment("sde.theorem42")
def theorem42(budget: Budget) -> dict:
    r"""One-step draws of DCSGD's direction D (N = 4, Bernoulli compressors of per-agent variances omega_i,
    multiplicative noise of per-coordinate scale :math:`\sigma_1\|\nabla f\|`) at a point x of the isotropic quadratic
    :math:`a\|x\|^2/2` in dimensions :data:`THM42_DIMS`: per (dimension, cell) the sample means of
    :math:`\langle x, D\rangle` and :math:`\|D\|^2`, their standard deviations and covariance."""
    n = budget.pick(quick=40_000, full=1_000_000)
    cfg = S.Config(problem="quadratic", algo="dcsgd", n_agents=4, compressor="bernoulli", noise="gaussian")
    keys = jax.random.split(jax.random.key(_THM42_SEED), len(THM42_DIMS) * len(THM42_CELLS))
    rng = np.random.default_rng(_THM42_SEED)
    m = np.empty((len(THM42_DIMS), len(THM42_CELLS), 5))
    for i, d in enumerate(THM42_DIMS):
        x = rng.standard_normal(d)
        x /= np.linalg.norm(x)      # a random unit point: the isotropic problem looks the same in every direction
        for j, (a, om, s1) in enumerate(THM42_CELLS):
            D = np.asarray(S.aggregate_samples(keys[i * len(THM42_CELLS) + j], cfg, a * x, n, omega=np.asarray(om),
                                               sigma1=s1))
            u, v = D @ x, np.sum(D**2, axis=1)
            m[i, j] = u.mean(), v.mean(), u.std(ddof=1), v.std(ddof=1), np.cov(u, v)[0, 1]
    return {"moments": m, "n": n}


# ================================================================== Theorem 4.3's one-step descent (step_conditions.py)

SD_NU, SD_SIGMA, SD_AGENTS = 1.5, 1.0, 4
SD_DIMS, SD_LEVELS = (1, 8), (0.1, 0.5, 2.0)   # per-coordinate |grad|/sigma around these levels
SD_CASES = tuple((name, d, u) for name in T.SIGN_DESCENT_FUNCTIONS for d in SD_DIMS for u in SD_LEVELS)
_SD_SEED = 4343


def _sd_point(name: str, d: int, u: float, rng: np.random.Generator) -> np.ndarray:
    """A start whose per-coordinate gradients are u*sigma times U(0.5, 1.5) with random signs (design, not theory)."""
    g = u * SD_SIGMA * rng.uniform(0.5, 1.5, d) * rng.choice([-1.0, 1.0], d)
    inverse = {"quadratic": lambda v: v, "quartic": np.cbrt, "cosh2": lambda v: np.arcsinh(v / 2)}[name]
    return inverse(g)


@experiment("sde.sign_descent")
def sign_descent(budget: Budget) -> dict:
    r"""One-step draws of DSignSGD's agent-averaged sign D (N = 4, Student-t noise :math:`\nu = 1.5`, scale 1) at a
    start x of each case of :data:`SD_CASES` (separable quadratic, :math:`x^4/4`, :math:`2\cosh`, d = 1 and 8):
    per case x and the table of counts of :math:`B_j = N(1 + D_j)/2` per coordinate (D_j takes N + 1 values,
    so the table holds every draw's D)."""
    n = budget.pick(quick=100_000, full=1_000_000)
    chunk = 25_000
    rng = np.random.default_rng(_SD_SEED)
    xs = [_sd_point(name, d, u, rng) for name, d, u in SD_CASES]
    # Every start's coordinates side by side in one gradient vector: the simulator draws each coordinate's signs
    # independently, so one call (one compilation) serves all 18 starts.
    g = np.concatenate([_sd_derivative(name, x, 1) for (name, _, _), x in zip(SD_CASES, xs)])
    cfg = S.Config(problem="quadratic", algo="dsignsgd", n_agents=SD_AGENTS, noise="student_t", nu=SD_NU)
    counts = np.zeros((g.size, SD_AGENTS + 1), int)
    for key in jax.random.split(jax.random.key(_SD_SEED), n // chunk):
        D = np.asarray(S.aggregate_samples(key, cfg, g, chunk, sigma0=SD_SIGMA))
        b = np.rint((D * SD_AGENTS + SD_AGENTS) / 2).astype(int)
        counts += np.stack([np.bincount(b[:, j], minlength=SD_AGENTS + 1) for j in range(g.size)])
    out, at = {"n": n}, 0
    for i, x in enumerate(xs):
        out[f"x_{i}"], out[f"counts_{i}"] = x, counts[at:at + x.size]
        at += x.size
    return out


_SD_F = {name: tuple(sp.lambdify(T.X, sp.diff(T.toy_function(name, lam=1), T.X, k), "numpy") for k in range(3))
         for name in T.SIGN_DESCENT_FUNCTIONS}


def _sd_derivative(name: str, x: np.ndarray, k: int) -> np.ndarray:
    """k-th derivative of the 1-D toy function at each entry (numpy, from sympy): the problem's definition, used to
    place starts and to evaluate f at the drawn steps; the measurement is the simulator's draws of D."""
    with np.errstate(over="ignore"):
        return np.asarray(_SD_F[name][k](x), float) * np.ones_like(x)


# ==================================================================================== pre-scheduled steps (schedule.py)

SCHED_ETA0, SCHED_AGENTS, SCHED_OMEGA, SCHED_SIGMA1 = 0.1, 4, 1.0, 0.5
SCHED_S0 = (1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 6.0)        # s0 = eta0 x0^2 of the noisy pre-scheduled runs
SCHED_NORM_S0 = (0.5, 2.0, 6.0, 20.0)                  # starts of the normalized runs (same eta0 -> x0 map)
SCHED_C, SCHED_L0, SCHED_L1 = 1.0, 1.0, 2.0            # the prescription's constant and x^4/4's (L0, L1)
SCHED_AFFINE = (40.0, 0.25)        # (sigma0, sigma1) of the affine cell: sigma0 comparable to sigma1 |f'| at the edge
_SCHED_SEED = 1717


@experiment("sde.schedule_divergence")
def schedule_divergence(budget: Budget) -> dict:
    r"""DCSGD on :math:`x^4/4` with the pre-scheduled step :math:`\eta_t = \eta_0/\sqrt{t+1}` (:math:`\eta_0 = 0.1`,
    N = 4): (1) noise-free and uncompressed (omega = 0, sigma1 = 0: the same kernel) on a fine geometric grid of
    :math:`s_0 = \eta_0x_0^2` around the edge; (2) with Bernoulli compressors omega = 1 and multiplicative Gaussian
    noise sigma1 = 0.5 at :data:`SCHED_S0`, and the same with affine noise :data:`SCHED_AFFINE`; (3) the same schedule times the normalization factor
    :math:`1/((L_0 + L_1|f'|)F)` (c = 1) from :data:`SCHED_NORM_S0`. Diverged flags and final losses."""
    n_grid, n = budget.pick(quick=241, full=961), budget.pick(quick=1024, full=8192)
    n_norm, norm_steps = budget.pick(quick=64, full=512), budget.pick(quick=1000, full=2000)
    keys = jax.random.split(jax.random.key(_SCHED_SEED), 3)
    s_grid = np.geomspace(1.9, 2.5, n_grid)
    s_noisy = np.repeat(np.asarray(SCHED_S0), n)
    s_all = np.concatenate([s_grid, s_noisy, s_noisy])
    m = s_all.size
    noisy = np.concatenate([np.zeros(n_grid), np.ones(2 * s_noisy.size)])
    sigma0 = np.concatenate([np.zeros(n_grid + s_noisy.size), np.full(s_noisy.size, SCHED_AFFINE[0])])
    sigma1 = np.concatenate([np.zeros(n_grid), np.full(s_noisy.size, SCHED_SIGMA1), np.full(s_noisy.size, SCHED_AFFINE[1])])
    # 100 steps: a pre-scheduled run that escapes overflows within a few dozen steps (s_t grows like s^3 per step)
    cfg = S.Config(problem="quartic", algo="dcsgd", n_agents=SCHED_AGENTS, compressor="bernoulli", noise="gaussian",
                   schedule="inv_sqrt", n_steps=100, n_record=1)
    r = S.paths(cfg, {"key": jax.random.split(keys[0], m), "x0": np.sqrt(s_all / SCHED_ETA0)[:, None],
                      "eta": np.full(m, SCHED_ETA0), "omega": noisy * SCHED_OMEGA, "sigma0": sigma0, "sigma1": sigma1})
    div = np.asarray(r["diverged"])
    s_norm = np.repeat(np.asarray(SCHED_NORM_S0), n_norm)
    k = s_norm.size
    ncfg = S.Config(problem="quartic", algo="dcsgd", n_agents=SCHED_AGENTS, compressor="bernoulli", noise="gaussian",
                    schedule="inv_sqrt", n_steps=norm_steps, n_record=10)
    rn = S.paths(ncfg, {"key": jax.random.split(keys[1], k), "x0": np.sqrt(s_norm / SCHED_ETA0)[:, None],
                        "eta": np.full(k, SCHED_C), "omega": np.full(k, SCHED_OMEGA), "sigma1": np.full(k, SCHED_SIGMA1),
                        "normalized": np.ones(k), "L0": np.full(k, SCHED_L0), "L1": np.full(k, SCHED_L1)})
    return {"s_grid": s_grid, "grid_diverged": div[:n_grid], "n": n,
            "noisy_diverged": div[n_grid:n_grid + s_noisy.size].reshape(len(SCHED_S0), n),
            "affine_diverged": div[n_grid + s_noisy.size:].reshape(len(SCHED_S0), n), "norm_s0": s_norm,
            "norm_diverged": np.asarray(rn["diverged"]), "norm_final": np.asarray(rn["loss"])[:, -1],
            "norm_loss0": np.asarray(rn["loss0"]), "norm_steps": norm_steps}


# =========================================================================== Theorem 4.3's Grönwall factor phi (phi.py)

PHI_NU, PHI_AGENTS = 1.5, 8          # Monte Carlo starts: Student-t nu = 1.5, N = 8 agents
PHI_MC_STARTS = ((1, 0.5, 8.0), (8, 0.5, 8.0), (32, 0.5, 4.0), (8, 2.0, 1.0), (1, 0.1, 0.05))  # (d, |g_j|/sigma, L1 y)
_PHI_SEED = 4242


@experiment("sde.phi_ridge")
def phi_ridge(budget: Budget) -> dict:
    r"""One-step draws of DSignSGD's agent-averaged sign D (N = 8, Student-t :math:`\nu = 1.5`) at the starts
    :data:`PHI_MC_STARTS` on the ridge :math:`f = F(\langle u, x\rangle)`: per start the table of counts of
    :math:`B = N(\sum_jD_j + d)/2` (the total of +1 signs, dN + 1 values; the step moves :math:`\langle u, x\rangle` by
    :math:`-h(2B - dN)/(N\sqrt d)`), and of the pairs :math:`(S_1, S_2) = (\sum_jk_j, \sum_jk_j^2)`, :math:`k_j = ND_j`
    (the radial :math:`F(\|x\|)` needs both). Gradients are passed in noise units (sign(g + sigma Z) = sign(g/sigma + Z))."""
    n = budget.pick(quick=20_000, full=400_000)
    chunk = 10_000
    # one call for every start: the simulator draws every coordinate's signs independently
    g = np.concatenate([np.full(d, u) for d, u, _ in PHI_MC_STARTS])
    cfg = S.Config(problem="quadratic", algo="dsignsgd", n_agents=PHI_AGENTS, noise="student_t", nu=PHI_NU)
    counts = [np.zeros(d * PHI_AGENTS + 1, int) for d, _, _ in PHI_MC_STARTS]
    pairs = [np.zeros((2 * d * PHI_AGENTS + 1) * (d * PHI_AGENTS**2 + 1), int) for d, _, _ in PHI_MC_STARTS]
    for key in jax.random.split(jax.random.key(_PHI_SEED), n // chunk):
        D = np.asarray(S.aggregate_samples(key, cfg, g, chunk, sigma0=1.0))
        at = 0
        for i, (d, _, _) in enumerate(PHI_MC_STARTS):
            k = np.rint(PHI_AGENTS * D[:, at:at + d]).astype(int)         # k_j = 2 B_j - N per coordinate
            s1, s2 = k.sum(axis=1), (k**2).sum(axis=1)
            counts[i] += np.bincount((s1 + d * PHI_AGENTS) // 2, minlength=d * PHI_AGENTS + 1)
            pairs[i] += np.bincount((s1 + d * PHI_AGENTS) * (d * PHI_AGENTS**2 + 1) + s2, minlength=pairs[i].size)
            at += d
    out = {"n": n, **{f"counts_{i}": c for i, c in enumerate(counts)}}
    for i, ((d, _, _), c) in enumerate(zip(PHI_MC_STARTS, pairs)):
        code = np.nonzero(c)[0]                   # the observed (S1, S2) pairs and their counts (sparse)
        out[f"s1_{i}"] = code // (d * PHI_AGENTS**2 + 1) - d * PHI_AGENTS
        out[f"s2_{i}"], out[f"pair_counts_{i}"] = code % (d * PHI_AGENTS**2 + 1), c[code]
    return out
