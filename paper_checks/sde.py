r"""Claims of Compagnoni et al. (arXiv 2506.00181): SDEs of compressed and sign-based SGD under
(L0,L1)-smoothness.

The full text was not available to steplab: the abstract's statements are the paper's, the modified
equations and Theorem 4.2's step condition come from secondary summaries and are re-derived in
:mod:`theory.sde`; every concrete setup (toy functions, noise models, grids, the exact 1-D DCSGD
factors, the Lyapunov exponent, the linearized sign variance, the MLP) is ours and labelled
``derived``. Each check pairs a closed form from :mod:`theory.sde` with a measurement of the
*discrete* algorithm (or of an SDE path) from :mod:`sims.sde`, and names rivals evaluated on the
same measurement. Simulations are the ``sde.*`` experiments below; figures read the same ones.
"""
from __future__ import annotations

import math

import jax
import numpy as np
import sympy as sp

import sims  # noqa: F401  (float64)
from paper_checks._checks import Bound, Count, Exact, Rate, Statistical
from paper_checks._experiment import experiment
from paper_checks._registry import Budget, Paper, Result, claim
from sims import sde as S
from sims.sweep import cartesian, run_grid
from theory import sde as T

PAPER = Paper(
    key="compagnoni2025",
    title="On the Interaction of Batch Noise, Adaptivity, and Compression, under (L0,L1)-Smoothness: An SDE Approach",
    authors="E. Monzio Compagnoni, R. Islamov, F. N. Proske, A. Lucchi, A. Orvieto, E. Gorbunov",
    year=2025,
    arxiv="2506.00181",
)

ETA_TOY = 0.1               # step of the quartic / cosh threshold sweeps
LAMBDAS = (0.5, 1.0, 4.0)   # curvatures of the quadratic sweeps
_LAM = sp.Symbol("lambda", positive=True)


def _bracket(grid: np.ndarray, grew: np.ndarray) -> tuple[float, float]:
    """[last point where |x| did not grow, first point where it grew] of a monotone escape indicator.

    Returns (nan, nan) when the indicator is not a single off-to-on switch inside the grid, which
    makes any Exact check on it fail (a non-monotone escape pattern contradicts every threshold).
    """
    grew = np.asarray(grew, bool)
    if not grew.any() or grew[0]:
        return math.nan, math.nan
    i = int(np.argmax(grew))
    if not grew[i:].all():
        return math.nan, math.nan
    return float(grid[i - 1]), float(grid[i])


def _mid_and_halfwidth(grid: np.ndarray, grew: np.ndarray) -> tuple[float, float]:
    """Geometric midpoint of the bracket and its relative half-width (the measurement's resolution)."""
    lo, hi = _bracket(grid, grew)
    return math.sqrt(lo * hi), math.sqrt(hi / lo) - 1.0


# ============================================================================= experiments

def _escape_grid(grid: dict) -> dict:
    """:func:`sims.sde._escape_point` over ``grid``, padded to a fixed chunk so every sweep shares one compilation."""
    return run_grid(S._escape_point, grid, static={"gd_steps": 20, "ode_steps": 200}, chunk_size=1024,
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


_WEAK_SEED = 20250601


@experiment("sde.weak")
def weak_errors(budget: Budget, sigma0: float = 0.3) -> dict:
    r"""Weak error :math:`E f(x_K) - E f(X_T)` of DSGD on :math:`x^4/4` (:math:`x_0 = 1`, T = 1) against each
    SDE, on coupled paths; mean and standard error over the finite paths, diverged count beside."""
    etas = np.asarray(budget.pick(quick=[0.2, 0.1, 0.05, 0.025], full=[0.2, 0.1, 0.05, 0.025, 0.0125]))
    m = budget.pick(quick=2500, full=16000)
    grid, shape = cartesian(eta=etas, key=jax.random.split(jax.random.key(_WEAK_SEED), m))
    r = run_grid(S._weak_point, grid, static={"problem": "quartic", "x0": 1.0, "T": 1.0,
                                             "max_steps": int(round(1.0 / etas.min())), "substeps": 4,
                                             "sigma0": sigma0})
    ok = ~np.asarray(r["diverged"]).reshape(shape)
    out = {"eta": etas, "n": m, "n_diverged": ok.size - int(ok.sum())}
    for kind in T.DRIFT_KINDS:
        d = (r["loss"] - r[f"loss_{kind}"]).reshape(shape)
        out[f"{kind}_err"] = np.array([row[k].mean() for row, k in zip(d, ok)])
        out[f"{kind}_se"] = np.array([row[k].std(ddof=1) / math.sqrt(k.sum()) for row, k in zip(d, ok)])
    return out


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
        fp = sp.lambdify(T._X, sp.diff(T.toy_function(name), T._X), "numpy")(xs)
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


# ============================================================================= claims: step-size restrictions

def _gd_escape_prediction(sw: dict) -> dict[str, np.ndarray]:
    """Where GD's |x| must grow, from the sympy critical steps (quadratic, quartic, 2cosh at eta = 0.1)."""
    lam = np.asarray(LAMBDAS)[:, None]
    u_star = np.array([float(T.quadratic_threshold("gd", _LAM).subs(_LAM, v)) * v for v in LAMBDAS])[:, None]
    return {"quad": np.broadcast_to(sw["u"][None, :] > u_star, (lam.size, sw["u"].size)),
            "quart": sw["s"] > float(T.quartic_thresholds()["gd"]),
            "cosh": sw["x0"] > T.escape_threshold_x("cosh2", "gd", ETA_TOY)}


@claim("compagnoni2025.classic_equations_miss_step_restriction", paper=PAPER, provenance="derived", kind="qualitative",
       source="abstract (claim); the toy functions and grids are derived here",
       statement="The first- and second-order modified equations from the literature do not model GD's step-size "
                 "restriction: on lambda x^2/2, x^4/4 and 2cosh x, discrete GD escapes exactly beyond its critical step "
                 "(eta lambda > 2, eta x0^2 > 2, eta sinh(x0)/x0 > 1), where both classic equations predict contraction.",
       latex=r"|x_{k}|\uparrow \iff \eta > \eta^\ast_{GD}(x_0),\qquad b_{1,2}\ \text{predict}\ |X_t|\downarrow")
def classic_equations_miss_step_restriction(budget: Budget) -> Result:
    """Counts, over every deterministic run of the threshold sweeps, whether discrete GD's |x| grew, against
    GD's sympy critical steps; the rival is the classic equations' prediction (no escape anywhere, read off
    sympy's critical step of the first- and second-order drifts) and a threshold moved 5 % lower."""
    sw = escape_sweeps(budget)
    measured = np.concatenate([sw["quad_gd_grew"].ravel(), sw["quart_gd_grew"], sw["cosh_gd_grew"]])
    pred = _gd_escape_prediction(sw)
    predicted = np.concatenate([pred["quad"].ravel(), pred["quart"], pred["cosh"]])
    classic = [T.critical_step(T.toy_function(n), k) for n in ("quadratic", "quartic", "cosh2")
               for k in ("first_order", "second_order")]
    classic_pred = np.zeros_like(predicted) if all(c is None for c in classic) else ~np.zeros_like(predicted)
    shifted = np.concatenate([
        (sw["u"][None, :] > 0.95 * 2.0).repeat(len(LAMBDAS), 0).ravel(), sw["s"] > 0.95 * 2.0,
        sw["x0"] > 0.95 * T.escape_threshold_x("cosh2", "gd", ETA_TOY)])
    n_esc = int(measured.sum())
    return Result(
        checks=[Count("runs where GD's |x| grew (quadratic, x^4/4, 2cosh)", measured=measured, predicted=predicted,
                      rivals={"classic modified equations: |x| never grows (no positive critical step)": classic_pred,
                              "GD's critical step 5 % lower": shifted},
                      why="deterministic runs on geometric grids that avoid the thresholds: every run must agree")],
        detail=f"GD's |x| grew in {n_esc} of {measured.size} deterministic runs, exactly beyond its sympy critical "
               "step; the classic first/second-order equations (no positive critical step) would predict 0.",
        arrays={"u": sw["u"], "s": sw["s"], "x0": sw["x0"]})


@claim("compagnoni2025.quadratic_log_rates", paper=PAPER, provenance="derived", kind="exact",
       source="derived here (rates of the modified equations from secondary sources)",
       statement="On f = lambda x^2/2 the corrected modified equation's log-rate -2 lambda + eta lambda^2 is the tangent "
                 "of discrete GD's log-rate (2/eta) log|1 - eta lambda| at the edge eta = 2/lambda (slope lambda^2), "
                 "while for small eta it misses GD's rate at first order, by -2 eta lambda^2.",
       latex=r"\partial_\eta r_{GD}\big|_{2/\lambda}=\lambda^2=\partial_\eta r_c,\quad r_{GD}-r_c=-2\eta\lambda^2+O(\eta^2)")
def quadratic_log_rates(budget: Budget) -> Result:
    """Measures discrete GD's per-time log-rate (20 steps of x - eta*lambda*x, no closed form used) on either side
    of eta = 2/lambda and at eta*lambda = 1e-3, for three curvatures. (1) The central difference of the measured
    rate across the edge, over lambda^2, against sympy's slope of the corrected rate (1); rivals: the classic
    second-order (-1) and first-order (0) slopes and a half-size curvature correction (1/2). (2) The measured
    gap r_GD - r_c at small eta over eta*lambda^2, against sympy's series (-2 - (2/3) eta lambda); rival 0: the
    corrected rate tracking GD to second order, as the classic second-order rate does."""
    h, u_small = 1e-3, 1e-3
    g = gd_rates(budget, h=h, u_small=u_small)
    lam = np.asarray(LAMBDAS)
    rate = np.asarray(g["rate"])
    slope = (rate[:, 1] - rate[:, 0]) / (4 * h / lam) / lam**2
    pred_slope = float(T.quadratic_rate_slope("corrected", _LAM, 2 / _LAM) / _LAM**2)
    rivals = {k: float(sp.simplify(T.quadratic_rate_slope(k, _LAM, 2 / _LAM) / _LAM**2))
              for k in ("second_order", "first_order")}
    # Truncation of the central difference: |g'''(2)| (2h)^2 / 6 with g(u) = 2 log|1-u|/u the rate in units of lambda.
    u = sp.Symbol("u", positive=True)
    g3 = abs(float(sp.diff(sp.log((1 - u) ** 2) / u, u, 3).subs(u, 2)))
    trunc = g3 * (2 * h) ** 2 / 6
    eta_small = u_small / lam
    coef = (rate[:, 2] - np.array([float(T.quadratic_log_rate("corrected", v, e)) for v, e in zip(lam, eta_small)])) \
        / (eta_small * lam**2)
    gap = T.quadratic_rate_gap("corrected", 3)
    coef_pred = np.array([float((gap / (T.ETA * _LAM**2)).subs({T.ETA: e, _LAM: v})) for v, e in zip(lam, eta_small)])
    # The series is cut after eta^2: the next term is O((eta lambda)^2) = 1e-6 relative; float64 round-off of the
    # 20-step rate is ~eps/(eta^2 lambda^2) ~ 1e-10 relative.
    return Result(
        checks=[Exact("slope of GD's log-rate at eta = 2/lambda, in units of lambda^2", predicted=pred_slope,
                      measured=slope, rtol=10 * trunc,
                      rivals={"classic 2nd-order rate's slope (-lambda^2)": rivals["second_order"],
                              "classic 1st-order rate's slope (0)": rivals["first_order"],
                              "half-size curvature correction eta/4 (slope lambda^2/2)": 0.5},
                      why=f"10x the central-difference truncation |g'''(2)|(2h)^2/6 = {trunc:.1e} (h = {h:g})"),
                Exact("(r_GD - r_c)/(eta lambda^2) at eta lambda = 1e-3", predicted=coef_pred, measured=coef, rtol=1e-5,
                      rivals={"the corrected rate matches GD to O(eta^2) (coefficient 0)": 0.0,
                              "the gap of the classic 1st-order rate (-1)": -1.0},
                      why="next series term O((eta lambda)^2) = 1e-6 relative; round-off ~1e-10")],
        detail=f"Measured GD rate slope at the edge / lambda^2 = {', '.join(f'{v:.6f}' for v in slope)} "
               f"(lambda = {LAMBDAS}); small-eta gap coefficient {', '.join(f'{v:.5f}' for v in coef)}.",
        arrays={"slope": slope, "coef": coef})


@claim("compagnoni2025.quadratic_threshold_two_over_lambda", paper=PAPER, provenance="secondary", kind="exact",
       source="secondary sources on the proposed SDEs; checked here against discrete GD",
       statement="On quadratics the curvature-corrected modified equation becomes unstable exactly at discrete GD's "
                 "threshold eta = 2/lambda.",
       latex=r"-2\lambda+\eta\lambda^2=0\iff\eta=2/\lambda=\eta^\ast_{GD}")
def quadratic_threshold_two_over_lambda(budget: Budget) -> Result:
    """Brackets discrete GD's escape on the eta*lambda grid for three curvatures and compares the bracket's
    geometric midpoint with the corrected equation's sympy threshold (2/lambda, times lambda); rivals: the
    oscillation onset 1/lambda, and the threshold moved by 5 % either way (5x the grid's half-cell)."""
    sw = escape_sweeps(budget)
    mids, halves = zip(*(_mid_and_halfwidth(sw["u"], sw["quad_gd_grew"][i]) for i in range(len(LAMBDAS))))
    pred = np.array([float(T.quadratic_threshold("corrected", _LAM).subs(_LAM, v) * v) for v in LAMBDAS])
    tol = max(halves)
    return Result(
        checks=[Exact("GD's escape threshold eta* lambda (bracket midpoint)", predicted=pred, measured=np.array(mids),
                      rtol=tol, rivals={"oscillation onset eta = 1/lambda": 1.0, "threshold 5 % higher": 2.1,
                                        "threshold 5 % lower": 1.9},
                      why="half the geometric grid cell that brackets the switch (the indicator only changes on the grid)")],
        detail="GD escape threshold x lambda: " + ", ".join(f"{m:.4f} (lambda={v:g})" for m, v in zip(mids, LAMBDAS))
               + f"; corrected SDE (sympy) 2; grid half-cell {tol:.1e}.",
        arrays={"lam": np.asarray(LAMBDAS), "pred": pred, "meas": np.array(mids)})


@claim("compagnoni2025.quartic_thresholds", paper=PAPER, provenance="derived", kind="exact",
       source="derived here",
       statement="On f = x^4/4 discrete GD escapes iff eta x0^2 > 2, while the curvature-corrected drift is repulsive iff "
                 "eta x0^2 > 2/3: the corrected equation flags the step restriction, 3x too conservatively.",
       latex=r"x^+=x(1-\eta x^2):\ \eta x_0^2>2;\quad \tfrac{d}{dt}f=-X^6+\tfrac{3\eta}2X^8:\ \eta X^2>\tfrac23")
def quartic_thresholds(budget: Budget) -> Result:
    """Brackets, on the grid of s = eta x0^2 (eta = 0.1), where discrete GD's |x| starts to grow and where the
    corrected ODE's does (Heun, JAX HVP), against sympy's thresholds 2 and 2/3. Rivals: for GD, the corrected
    equation's 2/3 (the belief that it reproduces GD's threshold) and 2 moved 5 %; for the ODE, GD's 2."""
    sw = escape_sweeps(budget)
    th = T.quartic_thresholds()
    (m_gd, h_gd), (m_c, h_c) = (_mid_and_halfwidth(sw["s"], sw[f"quart_{k}_grew"]) for k in ("gd", "corrected"))
    why = "half the geometric grid cell that brackets the switch"
    return Result(
        checks=[Exact("GD's escape threshold s* = eta x0^2", predicted=float(th["gd"]), measured=m_gd, rtol=h_gd,
                      rivals={"the corrected equation's threshold 2/3": float(th["corrected"]),
                              "threshold 5 % higher": 2.1, "threshold 5 % lower": 1.9}, why=why),
                Exact("corrected ODE's escape threshold s*", predicted=float(th["corrected"]), measured=m_c, rtol=h_c,
                      rivals={"GD's threshold 2 (the corrected equation reproduces GD)": float(th["gd"]),
                              "threshold 5 % higher": 0.7}, why=why)],
        detail=f"x^4/4 at eta = {ETA_TOY}: GD escapes above s = {m_gd:.4f} (sympy 2), the corrected ODE above "
               f"{m_c:.4f} (sympy 2/3): ratio {m_gd / m_c:.3f}; the classic ODEs never escape.",
        arrays={"s": sw["s"], **{f"{k}_grew": np.asarray(sw[f"quart_{k}_grew"]) for k in T.ESCAPE_KINDS}})


@claim("compagnoni2025.cosh_thresholds", paper=PAPER, provenance="derived", kind="exact",
       source="derived here",
       statement="On f = 2cosh x at eta = 0.1, discrete GD escapes iff eta sinh(x0)/x0 > 1 and the corrected drift iff "
                 "eta cosh(x0) > 1; the classic drifts never.",
       latex=r"\eta^\ast_{GD}(x)=x/\sinh x,\quad \eta^\ast_c(x)=1/\cosh x")
def cosh_thresholds(budget: Budget) -> Result:
    """Brackets the x0 where discrete GD's |x| starts to grow and where the corrected ODE's does, against the roots
    of eta = x/sinh x and eta = 1/cosh x (sympy critical steps, brentq). Rivals: each other's threshold, and the
    prediction moved 5 %."""
    sw = escape_sweeps(budget)
    pred = {k: T.escape_threshold_x("cosh2", k, ETA_TOY) for k in ("gd", "corrected")}
    (m_gd, h_gd), (m_c, h_c) = (_mid_and_halfwidth(sw["x0"], sw[f"cosh_{k}_grew"]) for k in ("gd", "corrected"))
    why = "half the geometric grid cell that brackets the switch"
    return Result(
        checks=[Exact("GD's escape threshold x0*", predicted=pred["gd"], measured=m_gd, rtol=h_gd,
                      rivals={"the corrected equation's threshold acosh(1/eta)": pred["corrected"],
                              "threshold 5 % lower": 0.95 * pred["gd"]}, why=why),
                Exact("corrected ODE's escape threshold x0*", predicted=pred["corrected"], measured=m_c, rtol=h_c,
                      rivals={"GD's threshold": pred["gd"], "threshold 5 % higher": 1.05 * pred["corrected"]}, why=why)],
        detail=f"2cosh at eta = {ETA_TOY}: GD escapes above x0 = {m_gd:.4f} (theory {pred['gd']:.4f}), the corrected ODE "
               f"above {m_c:.4f} (theory {pred['corrected']:.4f}).",
        arrays={"x0": sw["x0"], **{f"{k}_grew": np.asarray(sw[f"cosh_{k}_grew"]) for k in T.ESCAPE_KINDS}})


# ============================================================================= claims: weak order

def _next_order(eta: np.ndarray, err: np.ndarray, se: np.ndarray, p: int) -> float:
    r"""Bias of the log-log slope over the fitted range from the next order of the expansion.

    Fits :math:`e(\eta) = C\eta^p + D\eta^{p+1}` to the signed errors (weights :math:`1/\mathrm{SE}^2`), then
    returns :math:`|s - p|`, s the weighted log-log slope (same weights as :class:`Rate`) of the fitted
    two-term curve itself. If the fitted curve changes sign in the range the slope has no meaning: inf.
    """
    A = np.stack([eta**p, eta ** (p + 1)], axis=1) / se[:, None]
    C, D = np.linalg.lstsq(A, err / se, rcond=None)[0]
    model = C * eta**p + D * eta ** (p + 1)
    if np.any(model == 0) or np.any(np.sign(model) != np.sign(model[0])):
        return math.inf
    from paper_checks._checks import fit_slope

    s, _ = fit_slope(eta, np.abs(model), sigma=se * np.abs(model) / np.abs(err))
    return abs(s - p)


def _weak_check(kind: str, order: int):
    def check(budget: Budget) -> Result:
        w = weak_errors(budget)
        eta, err, se = w["eta"], w[f"{kind}_err"], w[f"{kind}_se"]
        bias = _next_order(eta, err, se, order)
        rate = Rate(f"log-log slope of |E f(x_K) - E f(X_T)| ({kind.replace('_', '-')} SDE) in eta", x=eta,
                    y=np.abs(err), sigma=se, predicted=float(order), next_order=bias,
                    rivals={f"weak order {order - 1}": float(order - 1), f"weak order {order + 1}": float(order + 1)},
                    why="4 SE of the weighted slope (Monte Carlo SE per point) plus the slope bias of the next "
                        f"order, from a fit of C eta^{order} + D eta^{order + 1} ({bias:.2f})")
        return Result(
            checks=[rate],
            detail=f"Weak error of the {kind.replace('_', '-')} SDE vs DSGD on x^4/4 (x0 = 1, sigma0 = 0.3, T = 1, "
                   f"{int(w['n'])} coupled paths, {int(w['n_diverged'])} diverged): {abs(err[0]):.2e} at eta = {eta[0]:g} "
                   f"to {abs(err[-1]):.2e} at eta = {eta[-1]:g} (smallest |err|/SE {np.min(np.abs(err) / se):.1f}); "
                   f"slope {rate.slope:.3f} +- {rate.se:.3f}.",
            arrays={"eta": eta, "err": np.abs(err), "se": se, "slope": np.asarray(rate.slope)}, seed=_WEAK_SEED)

    check.__doc__ = (f"Fits the log-log slope of the weak error of the {kind.replace('_', '-')} SDE against DSGD on "
                     f"x^4/4 (coupled Brownian paths) and compares it with order {order}; rivals: orders {order - 1} "
                     f"and {order + 1}, on the same fitted slope.")
    check.__name__ = check.__qualname__ = f"weak_order_{kind}"
    return check


# why a weak-order slope cannot resolve 10 % at the quick budget
WEAK_ORDER_RESOLUTION = ("a weak error is a difference of two Monte Carlo means, a few SE large at the smallest step: "
                         "the fitted slope's 4-SE band is what the coupled paths resolve, and halving it takes four "
                         "times the paths")


for _kind, _order, _prov, _src in (
        ("first_order", 1, "secondary", "standard result (Li et al.), via secondary sources"),
        ("second_order", 2, "secondary", "standard result (Li et al.), via secondary sources"),
        ("corrected", 1, "derived", "derived here (the paper's new SDEs are first order)")):
    claim(f"compagnoni2025.weak_order_{_kind}", paper=PAPER, provenance=_prov, kind="rate", source=_src,
          coarse_reason=WEAK_ORDER_RESOLUTION,
          statement=f"The {_kind.replace('_', '-')} SDE approximates DSGD's averaged trajectory with weak error "
                    f"O(eta^{_order})" + (" (the corrected drift matches the one-step decrease of f, not the "
                                          "trajectory, so it is only first order)" if _kind == "corrected" else "") + ".",
          latex=rf"|E f(x_{{T/\eta}}) - E f(X_T)| = O(\eta^{_order})")(_weak_check(_kind, _order))


# ============================================================================= claims: DCSGD

def _cell_factor(cell) -> float:
    om, s1 = cell
    return T.normalization_factor(4, np.asarray(om), s1)


@claim("compagnoni2025.dcsgd_ms_threshold", paper=PAPER, provenance="derived", kind="statistical",
       source="derived here; agrees with Theorem 4.2's step condition at sigma0 = 0, L1 = 0, d = 1",
       statement="DCSGD on f = a x^2/2 with multiplicative noise (1 + sigma1 xi), N agents and Bernoulli compressors of "
                 "variances omega_i has the one-step mean-square factor (1 - eta a)^2 + eta^2 a^2 V/N, "
                 "V = mean_i(omega_i + sigma1^2 (1 + omega_i)): it is mean-square stable iff eta < 2/(a (1 + V/N)).",
       latex=r"\rho=(1-\eta a)^2+\frac{\eta^2a^2\bar V}{N},\ \eta^\ast=\frac{2}{a(1+\bar V/N)}")
def dcsgd_ms_threshold(budget: Budget) -> Result:
    """Measures the mean of the per-step multipliers (x_{k+1}/x_k)^2 along simulated DCSGD paths (i.i.d. on a
    quadratic) at steps c/(a(1+V/N)), c = 1, 2, 3, in four (omega_i, sigma1) cells, one with agent-specific
    omegas; at c = 2 the step is the predicted threshold, where the factor must be 1. Rivals on the same
    estimates: plain GD's factor (1 - eta a)^2 (compression and noise average out), the factor with the noise
    and compression variances added instead of compounded (omega + sigma1^2), and compression ignored."""
    r = dcsgd_quadratic(budget)
    N = 4

    def factor(om, s1, c, kind):
        F = _cell_factor((om, s1))
        eta = c / (DCSGD_A * F)
        if kind == "exact":
            return T.dcsgd_ms_factor(eta, DCSGD_A, N, np.asarray(om), s1)
        if kind == "gd":
            return (1 - eta * DCSGD_A) ** 2
        V = np.mean(np.asarray(om) + s1**2) if kind == "additive" else s1**2
        return (1 - eta * DCSGD_A) ** 2 + (eta * DCSGD_A) ** 2 * V / N

    table = {k: np.array([[factor(om, s1, c, k) for c in DCSGD_C] for om, s1 in DCSGD_CELLS])
             for k in ("exact", "gd", "additive", "no_compression")}
    return Result(
        checks=[Statistical("mean-square factor E(x_{k+1}/x_k)^2 per (cell, c)", estimate=r["rho"], se=r["rho_se"],
                            predicted=table["exact"],
                            rivals={"plain GD's factor (1 - eta a)^2": table["gd"],
                                    "variances added: omega + sigma1^2": table["additive"],
                                    "compression ignored: sigma1^2 only": table["no_compression"]},
                            why="standard error of the mean over i.i.d. multipliers (all steps of all paths); "
                                "12 estimates, so 4 SE")],
        detail=f"Mean-square factor at eta = c/(a(1+V/N)), c = {DCSGD_C}, a = {DCSGD_A}, N = {N}, over "
               f"{int(r['n_paths'])} paths x {int(r['n_steps'])} steps per cell ({int(r['n_dropped'])} paths dropped): "
               f"at c = 2 (the threshold) measured {', '.join(f'{v:.3f}' for v in r['rho'][:, 1])}, predicted 1.",
        arrays={"c": r["c"], "rho": r["rho"], "rho_se": r["rho_se"], "rho_theory": table["exact"]},
        seed=_DCSGD_SEED)


@claim("compagnoni2025.normalization_prevents_divergence", paper=PAPER, provenance="derived", kind="statistical",
       source="abstract (normalization as the condition for stability); the Lyapunov analysis is derived here",
       statement="Under the prescribed normalization eta_t = c/((L0 + L1|f'|)(1 + (omega + sigma1^2(1 + omega))/N)), "
                 "DCSGD's paths contract almost surely for every c <= 2 in every compression/noise cell: on a x^2/2 the "
                 "per-step Lyapunov exponent E log|1 - c S/F| is negative (and predicted exactly), strictly below the "
                 "mean-square rate, which the prescription's c < 2 keeps at or below 0.",
       latex=r"\gamma(c)=E\log\Bigl|1-\frac{c\,S}{1+\bar V/N}\Bigr|<\tfrac12\log\rho(c)\le0\ \ (c\le2)")
def normalization_prevents_divergence(budget: Budget) -> Result:
    """Measures the Lyapunov exponent (mean of log|x_{k+1}/x_k|) of normalized DCSGD paths on a x^2/2 (L1 = 0, so
    the prescription is the step c/(a F)) for c = 1, 2, 3 in four cells, against its exact value by quadrature over
    the kept-agent patterns. Rivals: the mean-square rate (1/2) log rho (what the mean-square analysis behind the
    prescription predicts for paths) and the noise-free rate log|1 - c/F| (compression and noise average out).
    (On x^4/4 no normalized run diverges while constant steps do -- experiment ``sde.quartic_divergence``, drawn
    in the figures -- but every bounded-increment rule shares that property, so it is not a check here.)"""
    r = dcsgd_quadratic(budget)
    pred, ms, mean_field = (np.empty((len(DCSGD_CELLS), len(DCSGD_C))) for _ in range(3))
    for i, (om, s1) in enumerate(DCSGD_CELLS):
        F = _cell_factor((om, s1))
        for j, c in enumerate(DCSGD_C):
            eta = c / (DCSGD_A * F)
            pred[i, j] = T.dcsgd_lyapunov(eta, DCSGD_A, 4, np.asarray(om), s1)
            ms[i, j] = 0.5 * math.log(T.dcsgd_ms_factor(eta, DCSGD_A, 4, np.asarray(om), s1))
            mean_field[i, j] = math.log(abs(1 - eta * DCSGD_A))
    return Result(
        checks=[Statistical("Lyapunov exponent E log|x_{k+1}/x_k| of normalized DCSGD per (cell, c)", estimate=r["gamma"],
                            se=r["gamma_se"], predicted=pred,
                            rivals={"mean-square rate (1/2) log rho": ms, "noise-free rate log|1 - c/F|": mean_field},
                            why="standard error of the mean over i.i.d. log-multipliers; quadrature error < 1e-10")],
        detail=f"Lyapunov exponent at c = 2 (the mean-square edge, rho = 1): measured "
               f"{', '.join(f'{v:.3f}' for v in r['gamma'][:, 1])}, predicted {', '.join(f'{v:.3f}' for v in pred[:, 1])} "
               f"(all < 0: paths contract); at c = 3: {', '.join(f'{v:+.3f}' for v in r['gamma'][:, 2])} (the "
               "almost-sure edge lies beyond the mean-square edge c = 2).",
        arrays={"c": r["c"], "gamma": r["gamma"], "gamma_se": r["gamma_se"], "gamma_theory": pred, "gamma_ms": ms},
        seed=_DCSGD_SEED)


# ============================================================================= claims: (L0, L1)

@claim("compagnoni2025.l0l1_constants", paper=PAPER, provenance="secondary", kind="exact",
       source="standard (L0,L1)-smoothness examples, via secondary sources; constants derived here",
       statement="x^4/4 is (L0,L1)-smooth with L0 = 4/L1^2 (but not L-smooth), 2cosh x with (2,1), log cosh x is L-smooth "
                 "with L = 1.",
       latex=r"|f''|\le L_0+L_1|f'|:\ x^4/4:\ L_0=4/L_1^2;\ 2\cosh x:\ (2,1);\ \log\cosh x:\ (1,0)")
def l0l1_constants(budget: Budget) -> Result:
    """Measures sup(|f''| - L1|f'|) by autodiff on zoomed grids and compares it with sympy's L0 (x^4/4 at L1 = 2
    and 1, 2cosh at L1 = 1, log cosh at L1 = 0). Rivals: L0 = 2/L1^2 for x^4/4 (a factor 2), L0 = 1 for 2cosh."""
    m = l0l1_sup(budget)
    pred = np.array([float(T.l0_for_l1(T.toy_function(n), L1)) for n, L1 in _L0L1_SUP_CASES])
    half = np.where([n == "quartic" for n, _ in _L0L1_SUP_CASES], pred / 2, pred)
    cosh1 = np.where([n == "cosh2" for n, _ in _L0L1_SUP_CASES], 1.0, pred)
    return Result(
        checks=[Exact("sup_x (|f''| - L1 |f'|)", predicted=pred, measured=m["sup"], rtol=1e-12,
                      rivals={"L0 = 2/L1^2 for x^4/4": half, "2cosh x is (1,1)-smooth": cosh1},
                      why="after four zooms the grid misses the sup by |h''| dx^2/8 < 1e-20; float64 round-off of "
                          "f'' - L1 f' is ~1e-15 relative")],
        detail="sup(|f''| - L1|f'|) by autodiff vs sympy L0: "
               + ", ".join(f"{n}(L1={l1:g}) {v:.12g}/{p:.12g}" for (n, l1), v, p in zip(_L0L1_SUP_CASES, m["sup"], pred)) + ".")


@claim("compagnoni2025.l0l1_sufficient_step_descends", paper=PAPER, provenance="secondary", kind="bound",
       source="Theorem 4.2 (noise-free, uncompressed case), via secondary sources",
       statement="Noise-free and uncompressed, every step eta < 2/(L0 + L1|f'(x)|) decreases f on the (L0,L1) toy functions "
                 "from any start, and the constant 2 is tight (on 2cosh x near its minimizer).",
       latex=r"\eta=\frac{2c}{L_0+L_1|f'(x)|},\ c<c^\ast(x),\ \inf_x c^\ast(x)\ge1,\ =1\text{ for }2\cosh x")
def l0l1_sufficient_step_descends(budget: Budget) -> Result:
    """Measures, by bisection on the loss at 4000 starts in [-40, 40], the largest factor c*(x) by which the step
    2/(L0 + L1|f'(x)|) can be stretched while one GD step still decreases f; the bound is min c* >= 1. Rival bound:
    min c* >= 2 (twice the step still safe). Then compares the per-function minimum with sympy's infimum of
    x (L0 + L1 f')/f' (3, 3, 1); rival: the step is tight for every function (1, 1, 1)."""
    d = descent_factors(budget)
    mins = np.array([float(np.min(d[f"{n}_{L1:g}_c"])) for n, L1 in _L0L1_CASES])
    pred = np.array([float(T.descent_margin(n, L1)) for n, L1 in _L0L1_CASES])
    x_min = float(np.min(np.abs(d["x"])))
    return Result(
        checks=[Bound("min over starts and functions of the safe stretch c*(x)", measured=mins, bound=1.0, side=">=",
                      slack=1e-12, rivals={"twice the step is safe: min c* >= 2": 2.0},
                      why="bisection resolution 100 * 2^-60 ~ 1e-16"),
                Exact("min_x c*(x) per function (x^4/4 L1=2, x^4/4 L1=1, 2cosh L1=1)", predicted=pred, measured=mins,
                      rtol=2 * x_min, rivals={"tight for every function (1, 1, 1)": np.ones(3),
                                              "half the predicted stretch": pred / 2},
                      why=f"the 2cosh infimum is approached as x -> 0 and c* - 1 ~ x there; the grid stops at |x| = {x_min:g}")],
        detail="min c*(x): " + ", ".join(f"{n}(L1={l1:g}) {v:.4f} (sympy {p:g})" for (n, l1), v, p in zip(_L0L1_CASES, mins, pred))
               + "; a constant step escapes x^4/4 once eta x0^2 > 2 (quartic threshold claim).")


# ============================================================================= claims: sign methods

@claim("compagnoni2025.mean_sign_laws", paper=PAPER, provenance="secondary", kind="statistical",
       source="secondary sources (earlier SignSGD SDE paper, extended to Student-t)",
       statement="The mean sign of g + sigma Z is erf(g/(sqrt2 sigma)) (Gaussian), 2F_nu(g/sigma) - 1 (Student-t) and "
                 "(2/pi) arctan(g/sigma) (Cauchy).",
       latex=r"E\,\mathrm{sign}(g+\sigma Z)=2F(g/\sigma)-1")
def mean_sign_laws(budget: Budget) -> Result:
    """Monte Carlo mean sign of g + Z at 17 points for three noise laws against the closed forms (SE from the sample
    variance); rivals: the Gaussian erf law for every noise (the earlier SignSGD SDE) and the Cauchy law for every
    noise. (The variance 1 - m^2 of a +-1 variable is an identity, checked by the unit tests, not a claim.)"""
    r = mean_sign_mc(budget)
    u, n = r["u"], int(r["n"])
    laws = [law for law, _ in SIGN_LAWS]
    est = np.stack([r[f"{law}_mean"] for law in laws])
    var = np.stack([r[f"{law}_var"] for law in laws])
    pred = np.stack([T.mean_sign(u, 1.0, law, nu=nu) for law, nu in SIGN_LAWS])
    gauss = np.broadcast_to(T.mean_sign(u, 1.0, "gaussian"), pred.shape)
    cauchy = np.broadcast_to(T.mean_sign(u, 1.0, "cauchy"), pred.shape)
    se = np.sqrt(np.maximum(var, 1.0 / n) / n)  # at |u| = 4 nearly every draw agrees: floor the SE at one draw
    return Result(
        checks=[Statistical("E sign(g + Z) per law and g", estimate=est, se=se, predicted=pred,
                            rivals={"Gaussian erf law for every noise": gauss, "Cauchy law for every noise": cauchy},
                            why="standard error from the sample variance of n draws; 51 estimates, so 4 SE "
                                "(P(max |z| > 4) ~ 3e-3)")],
        detail=f"Mean sign over {n} draws at {u.size} points per law: max |MC - closed form| "
               f"{np.max(np.abs(est - pred)):.1e}.",
        arrays={"u": u, **{f"{law}_mc": r[f"{law}_mean"] for law in laws}}, seed=_SIGN_SEED)


@claim("compagnoni2025.sign_converges_under_cauchy", paper=PAPER, provenance="derived", kind="statistical",
       source="abstract (DSignSGD converges under heavy-tailed noise with standard schedules); setup derived here",
       statement="DSignSGD converges even under Cauchy noise with eta_k = eta/sqrt(k+1): on 2cosh x (N = 4) its gap "
                 "f - f* follows the linearized variance recursion v_{k+1} = (1 - eta_k kappa)^2 v_k + eta_k^2/N with "
                 "kappa = f''(0) 2 rho_Cauchy(0) = 4/pi, decaying like k^(-1/2), and no run diverges.",
       latex=r"E[f-f^\ast]\approx v_k,\ v_{k+1}=(1-\eta_k\kappa)^2v_k+\tfrac{\eta_k^2}{N},\ \kappa=\tfrac{4}{\pi}")
def sign_converges_under_cauchy(budget: Budget) -> Result:
    """Measures the mean gap f - f* of DSignSGD paths (Cauchy noise, 1/sqrt(k+1) schedule, x0 = 3) over two late
    windows of checkpoints, divided by the variance recursion's v_k with the Cauchy mean-sign slope (predicted 1).
    Rivals on the same ratios: the Gaussian mean-sign law's slope (v_k with kappa = 4/sqrt(2 pi)), a gap that stalls
    at its first-window level (a constant-step floor), and a gap decaying like 1/k. Counts diverged runs (none)."""
    r = cauchy_sign(budget)
    k, gap, div = r["k"], np.asarray(r["gap"]), np.asarray(r["diverged"])
    steps = int(r["n_steps"])
    etas = CAUCHY_ETA / np.sqrt(np.arange(steps) + 1.0)
    curv = float(sp.diff(T.toy_function("cosh2"), T._X, 2).subs(T._X, 0))   # f''(0) = 2
    v = {law: T.sign_linear_variance(etas, T.sign_contraction(curv, 1.0, law), CAUCHY_AGENTS)[k - 1]
         for law in ("cauchy", "gaussian")}
    # f - f* = 2cosh x - 2 = x^2 + x^4/12 + ...: E gap = v + O(v^2) (v < 1e-3 in the windows).
    wins = [(k > steps // 2) & (k <= 3 * steps // 4), k > 3 * steps // 4]
    ok = ~div
    per_path = np.stack([(gap[ok][:, w] / v["cauchy"][w]).mean(axis=1) for w in wins], axis=1)
    est, se = per_path.mean(axis=0), per_path.std(axis=0, ddof=1) / math.sqrt(per_path.shape[0])
    vbar = [v["cauchy"][w].mean() for w in wins]
    kbar = [k[w].mean() for w in wins]
    rivals = {"Gaussian mean-sign law (kappa = 4/sqrt(2 pi))": [float((v["gaussian"][w] / v["cauchy"][w]).mean()) for w in wins],
              "the gap stalls at its first-window level": [1.0, vbar[0] / vbar[1]],
              "the gap decays like 1/k": [1.0, (vbar[0] * kbar[0] / kbar[1]) / vbar[1]]}
    # The recursion linearizes the mean sign (2/pi) arctan(2 sinh x) ~ (4/pi) x and sets 1 - m^2 ~ 1: relative
    # corrections O(v) < 1e-3 in these windows.
    return Result(
        checks=[Statistical("mean gap / v_k in the windows (k/K in (1/2, 3/4], (3/4, 1])", estimate=est, se=se,
                            predicted=np.ones(2), bias=1e-3, rivals={k_: np.asarray(v_) for k_, v_ in rivals.items()},
                            why="standard error over independent paths of each path's window average; bias: "
                                "O(v) nonlinear corrections"),
                Count("DSignSGD runs that stayed finite", measured=~div, predicted=True,
                      why="|x_{k+1} - x_k| <= eta_k: a signed update is bounded whatever the noise")],
        detail=f"Cauchy noise, eta_k = {CAUCHY_ETA}/sqrt(k+1), {gap.shape[0]} runs x {steps} steps: mean gap / v_k = "
               f"{est[0]:.3f} +- {se[0]:.3f}, {est[1]:.3f} +- {se[1]:.3f} (Gaussian-law rival {rivals['Gaussian mean-sign law (kappa = 4/sqrt(2 pi))'][0]:.3f}); "
               f"median gap at the end {np.median(gap[:, -1]):.1e}; {int(div.sum())} runs diverged.",
        arrays={"k": k, "gap_mean": gap[ok].mean(axis=0), "gap_median": np.median(gap[ok], axis=0),
                "v_cauchy": v["cauchy"], "v_gaussian": v["gaussian"]}, seed=_CAUCHY_SEED)


# ============================================================================= claims: MLP

def _edge(cs: np.ndarray, decreased: np.ndarray) -> tuple[float, float]:
    """[last c before the first c at which most runs failed to decrease the loss, that c] (nan if none fails)."""
    bad = decreased.mean(axis=-1) <= 0.5
    if not bad.any() or bad[0]:
        return math.nan, math.nan
    i = int(np.argmax(bad))
    return float(cs[i - 1]), float(cs[i])


@claim("compagnoni2025.mlp_pattern", paper=PAPER, provenance="derived", kind="bound",
       source="the paper's MLP experiment (secondary sources); this smaller setup and the edge measurement are derived here",
       statement="On a small MLP (d = 49, N = 8 agents, rand-k compression, injected affine-variance noise) the prescribed "
                 "normalization's compression/noise factor is sufficient and necessary in order of magnitude: the edge "
                 "in c where training stops decreasing the loss does not shrink when omega grows from 0 to 48, but it "
                 "grows far less than the factor (1 + V/N) itself, so dropping the factor would destabilize training; "
                 "every run with c < 2 decreases the loss.",
       latex=r"R=\frac{c^\ast(\omega=48)}{c^\ast(\omega=0)}\ge1,\quad R\ll\frac{1+V(48)/N}{1+V(0)/N}")
def mlp_pattern(budget: Budget) -> Result:
    """Measures, on a geometric grid of c, the edge c*(omega) where most runs of the normalized rule stop decreasing
    the loss, for omega = 0 and 48, and bounds R = c*(48)/c*(0) using the brackets' extremes. Prediction: R >= 1
    (the factor compensates compression; lower bracket ratio). Rival: R >= F(48)/F(0) = 32, what compression-
    blind stability would give (the factor only shrinking steps; upper bracket ratio). Counts that every run
    with c < 2 decreased the loss."""
    r = mlp_edge(budget)
    cs, omegas, ratio = r["c"], r["omega"], np.asarray(r["ratio"])
    decreased = (ratio < 1) & ~np.asarray(r["diverged"])
    i0, i1 = 0, int(np.argmax(omegas))
    (lo0, hi0), (lo1, hi1) = _edge(cs, decreased[:, i0]), _edge(cs, decreased[:, i1])
    F = np.array([T.normalization_factor(MLP_AGENTS, om, MLP_SIGMA1, S.MLP_DIM) for om in omegas])
    blind = float(F[i1] / F[i0])
    safe = decreased[cs < 2]
    return Result(
        checks=[Bound("largest R = c*(omega=48)/c*(omega=0) compatible with the brackets", measured=hi1 / lo0, bound=1.0,
                      side=">=", rivals={f"compression-blind stability: R >= F(48)/F(0) = {blind:.1f}": blind},
                      why="the brackets' extreme ratio already accounts for the grid resolution"),
                Bound("smallest R compatible with the brackets", measured=lo1 / hi0, bound=1.0, side=">=",
                      why="R >= 1 must hold even at the unfavourable ends of both brackets"),
                Count("runs with c < 2 that decreased the loss", measured=safe.ravel(), predicted=True,
                      why="the prescription (c < 2) must train in every run")],
        detail=f"MLP (d = {S.MLP_DIM}), N = {MLP_AGENTS}, rand-k, sigma1 = {MLP_SIGMA1}, {int(r['n'])} runs x "
               f"{int(r['n_steps'])} steps per cell: edge c* in [{lo0:.3g}, {hi0:.3g}] at omega = 0 and "
               f"[{lo1:.3g}, {hi1:.3g}] at omega = {omegas[i1]:g}: R in [{lo1 / hi0:.2f}, {hi1 / lo0:.2f}], while the "
               f"factor grows {blind:.1f}x; the factor over-compensates by about {blind / math.sqrt(lo1 * hi1 / (lo0 * hi0)):.0f}x. "
               f"{int(np.sum(r['diverged']))} of {r['diverged'].size} runs diverged (counted as not decreasing the loss).",
        arrays={"c": cs, "omega": omegas, "median_ratio": np.median(ratio, axis=-1), "factor": F,
                "edges": np.array([[lo0, hi0], [lo1, hi1]])}, seed=_MLP_SEED)


# ============================================================================= claims: mean-square thresholds per model

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


_COEF = {"first_order": 0.0, "second_order": -1.0, "corrected": 1.0}


def _em_root_bias(model: str, cell, excess_hat: float) -> float:
    r"""How far Euler-Maruyama's own mean-square edge lies from its SDE's, relative: each of the
    :data:`MS_SUBSTEPS` steps multiplies :math:`E X^2` by :math:`(1 + c\,dt)^2 + \sigma^2dt` (drift :math:`cX`,
    diffusion :math:`\sigma X`, :math:`dt` as run), whose root in :math:`\eta` is not that of :math:`2c + \sigma^2`. From the
    model's coefficients (the simulator's inputs), not from the threshold under test."""
    from scipy import optimize

    a, n, om, s1 = _ms_cell_args(cell)
    e = T.ms_excess(n, om, s1)

    def coefficients(eta):
        c, sig2 = -a + _COEF[model] * eta / 2 * a**2, eta * a**2 * e
        return c, sig2, MS_HORIZON_SPREAD / (eta * a**2 * excess_hat) / MS_SUBSTEPS

    def sde(eta):
        c, sig2, _ = coefficients(eta)
        return 2 * c + sig2

    def em(eta):
        c, sig2, dt = coefficients(eta)
        return (1 + c * dt) ** 2 + sig2 * dt - 1

    lo, hi = 1e-3 / a, 1e3 / a
    if not sde(hi) > 0:
        return 0.0
    r_sde = optimize.brentq(sde, lo, hi, xtol=1e-14, rtol=1e-14)
    # Euler-Maruyama's edge near the SDE's (far below it the huge dt of a tiny eta makes the factor exceed 1 again)
    r_em = optimize.brentq(em, r_sde / 2, 2 * r_sde, xtol=1e-14, rtol=1e-14)
    return abs(r_em - r_sde) / r_sde


@claim("compagnoni2025.ms_threshold_per_model", paper=PAPER, provenance="derived", kind="statistical",
       source="abstract (classic modified equations miss the step-size restriction; the new SDEs capture it); the "
              "quadratic with compressed multiplicative noise and the Ito second-moment analysis are derived here",
       statement="On f = a x^2/2 with multiplicative noise (1 + sigma1 xi), unbiased compression of variance omega_i and "
                 "N agents (E = mean_i(omega_i + sigma1^2(1 + omega_i))/N), DCSGD is mean-square stable iff "
                 "eta < 2/(a(1 + E)), and so is the curvature-corrected SDE; the classic first-order SDE puts the "
                 "threshold at 2/(aE), the classic second-order SDE at 2/(a(E - 1)) (none for E <= 1).",
       latex=r"\eta^\ast_{\rm DCSGD}=\eta^\ast_{\rm corr}=\frac{2}{a(1+E)},\ \eta^\ast_{1}=\frac{2}{aE},\ "
             r"\eta^\ast_{2}=\frac{2}{a(E-1)}")
def ms_threshold_per_model(budget: Budget) -> Result:
    """(1) Measures DCSGD's threshold from one-step draws of its direction D at x = 1: the one-step factor
    1 - 2 eta E D + eta^2 E D^2 equals 1 at eta* = 2 E D / E D^2, so 1/eta* = E D^2 / (2 E D) (ratio estimate, delta-
    method SE); predicted 1/ms_threshold('discrete') (= the corrected SDE's); rivals: the classic first- and
    second-order SDEs' 1/eta* (0 where a model has no threshold). (2) Measures each SDE's own mean-square edge on the
    SDE: whether its second-moment rate turns positive on a grid up to 8x the measured discrete threshold, and where
    (the root of a weighted line through the rates on a fine grid across the sign change, delta-method SE), against
    ms_threshold(model) per cell and model; the allowance is Euler-Maruyama's own shift of the edge. Rivals: the
    SDE inherits DCSGD's threshold; the curvature correction does not matter (the first-order SDE's threshold); the
    Ito term dropped (the ODE's threshold, none without the correction)."""
    from paper_checks._checks import Categorical

    r = ms_thresholds(budget)
    n = int(r["n_draws"])
    cells = [_ms_cell_args(c) for c in MS_CELLS]
    table = {mod: np.array([T.ms_threshold(mod, *c) for c in cells]) for mod in T.MS_MODELS}
    inv = {mod: 1.0 / table[mod] for mod in T.MS_MODELS}
    d1, d2 = r["d1"], r["d2"]
    est = d2 / (2 * d1)
    # delta method for g(m1, m2) = m2 / (2 m1): grad = (-m2/(2 m1^2), 1/(2 m1))
    g1, g2 = -d2 / (2 * d1**2), 1 / (2 * d1)
    var = (g1**2 * r["d1_sd"] ** 2 + g2**2 * r["d2_sd"] ** 2 + 2 * g1 * g2 * r["cov12"]) / n
    se = np.sqrt(var)
    checks = [Statistical("1/eta* of DCSGD from its one-step second-moment factor, per cell", estimate=est, se=se,
                          predicted=inv["discrete"],
                          rivals={"classic first-order SDE: eta* = 2/(aE)": inv["first_order"],
                                  "classic second-order SDE: eta* = 2/(a(E-1)), none for E <= 1": inv["second_order"]},
                          why="delta-method standard error of the ratio of sample moments of i.i.d. one-step draws; "
                              "4 cells, so 4 SE")]
    kinds = T.DRIFT_KINDS
    has = np.isfinite(np.stack([table[k] for k in kinds], axis=1))            # cells x models
    no_ito = np.zeros_like(has)
    no_ito[:, kinds.index("corrected")] = True                                # rate -2a + coef eta a^2: only coef > 0
    checks.append(Categorical(f"second-moment rate positive somewhere up to {MS_GRID[1]:g} x the measured discrete "
                              "threshold, per cell and SDE", measured=r["crossing"], predicted=has,
                              rivals={"every modified equation has a threshold (the second-order SDE too)":
                                      np.ones_like(has),
                                      "the Ito term dropped: only the corrected SDE has one": no_ito},
                              why="the finite thresholds lie below 5x the discrete one; a rate without a root stays "
                                  "below -2a"))
    rivals = {"first_order": {"the SDE inherits DCSGD's threshold 2/(a(1+E))": "discrete"},
              "second_order": {"the SDE inherits DCSGD's threshold 2/(a(1+E))": "discrete",
                               "the curvature term does not matter: 2/(aE)": "first_order"},
              "corrected": {"the curvature term does not matter: 2/(aE)": "first_order"}}
    for ci, cell in enumerate(MS_CELLS):
        for ki, mod in enumerate(kinds):
            if not (has[ci, ki] and r["crossing"][ci, ki]):
                continue
            bias = _em_root_bias(mod, cell, float(r["excess_hat"][ci])) * table[mod][ci]
            riv = {label: float(table[other][ci]) for label, other in rivals[mod].items()}
            if mod == "corrected":
                riv["the Ito term dropped: the ODE's 2/a"] = 2.0 / cell[0]
            checks.append(Statistical(
                f"{mod} SDE's mean-square edge, cell {ci + 1} (a = {cell[0]:g}, E = {T.ms_excess(*cells[ci][1:]):.3g})",
                estimate=r["sde_root"][ci, ki], se=r["sde_root_se"][ci, ki], predicted=table[mod][ci], z=4.0,
                bias=bias, rivals=riv,
                why=f"delta-method standard error of the root of a weighted line through {MS_FINE} SDE rates, each "
                    f"over {int(r['n_fine'])} independent paths; bias: Euler-Maruyama's own edge, {bias:.1e} away"))
    return Result(
        checks=checks,
        detail="thresholds per cell (discrete measured | theory; SDE edges measured | theory, first, second, corrected): "
               + "; ".join(f"{1 / est[i]:.3f} | {table['discrete'][i]:.3f}; "
                           + ", ".join(f"{r['sde_root'][i, k]:.3g} ± {r['sde_root_se'][i, k]:.2g} | {table[m][i]:.3g}"
                                       if r["crossing"][i, k] else f"none | {table[m][i]:.3g}"
                                       for k, m in enumerate(kinds)) for i in range(len(cells))),
        arrays={"eta_measured": 1 / est, "eta_measured_se": se / est**2, "sde_root": r["sde_root"],
                "sde_root_se": r["sde_root_se"], **{f"eta_{mod}": table[mod] for mod in T.MS_MODELS}},
        seed=_MS_SEED)


# ============================================================================= claims: one-step drift

# (function, x, eta * f''(x)) of the one-step test; DCSGD with N = 4 agents, per-agent Bernoulli compressors and
# multiplicative noise. eta f'' = 0.05 keeps the O(eta^2) remainder about 20x below the curvature term tested.
ONE_STEP_POINTS = (("quartic", 0.6, 0.05), ("quartic", 1.0, 0.05), ("quartic", 1.4, 0.05), ("cosh2", 0.5, 0.05),
                   ("cosh2", 1.2, 0.05))
ONE_STEP_OMEGA, ONE_STEP_SIGMA1, ONE_STEP_AGENTS = (0.0, 1.0, 3.0, 0.5), 0.5, 4
_ONE_STEP_SEED = 8080


def _toy_f(name: str, x):
    return x**4 / 4 if name == "quartic" else 2 * np.cosh(x)


def _one_step_eta(name: str, x: float, h: float) -> float:
    fpp = float(sp.diff(T.toy_function(name), T._X, 2).subs(T._X, x))
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


@claim("compagnoni2025.one_step_drift", paper=PAPER, provenance="derived", kind="statistical",
       source="the construction of the corrected drift (matching the one-step decrease of f), via secondary sources; "
              "the DCSGD setup and the exact one-step expectations are derived here",
       statement="For DCSGD (N = 4, Bernoulli compressors, multiplicative noise) on the non-quadratic x^4/4 and 2cosh x, "
                 "the one-step decrease E[f(x+) - f(x)]/eta equals the corrected SDE's generator "
                 "-f'^2 + (eta/2)(f'^2 f'' + Sigma f'') up to O(eta^2); the classic drifts miss the curvature term "
                 "(eta/2) f'^2 f'' (first order) or flip its sign (second order).",
       latex=r"\frac{E f(x^+)-f(x)}{\eta}=-f'^2+\tfrac\eta2\bigl(f'^2f''+\Sigma f''\bigr)+O(\eta^2)")
def one_step_drift_check(budget: Budget) -> Result:
    """Measures the one-step decrease of simulated DCSGD at five points (x^4/4 and 2cosh, eta f'' = 0.05) with a
    zero-mean control variate, against the corrected SDE's generator on f; bias: the exact O(eta^2) remainder
    (exact one-step expectation minus the generator, computed in closed form). Rivals: the classic first- and
    second-order SDEs' generators, with the same band."""
    r = one_step_drift(budget)
    pts = [(name, x, _one_step_eta(name, x, h)) for name, x, h in ONE_STEP_POINTS]
    args = (ONE_STEP_AGENTS, np.asarray(ONE_STEP_OMEGA), ONE_STEP_SIGMA1)
    gen = {k: np.array([T.one_step_generator(k, x, e, *args, name=name) for name, x, e in pts]) for k in T.DRIFT_KINDS}
    exact = np.array([T.dcsgd_one_step_quotient(x, e, *args, name=name) for name, x, e in pts])
    # The O(eta^2) remainder: the exact quotient minus its Taylor part -f' E D + (eta/2) f'' E D^2, from the moments
    # of D (independent of the generators being tested).
    taylor = []
    for name, x, e in pts:
        f1, f2 = (float(sp.diff(T.toy_function(name), T._X, j).subs(T._X, x)) for j in (1, 2))
        m = T.dcsgd_direction_moments(f1, *args, order=2)
        taylor.append(-f1 * m[1] + e / 2 * f2 * m[2])
    bias = float(np.max(np.abs(exact - np.array(taylor))))
    return Result(
        checks=[Statistical("one-step decrease E[f(x+) - f(x)]/eta of DCSGD at 5 points", estimate=r["mean"],
                            se=r["se"], predicted=gen["corrected"], bias=bias,
                            rivals={"classic first-order SDE: -f'^2 + (eta/2) Sigma f''": gen["first_order"],
                                    "classic second-order SDE: -f'^2 - (eta/2) f'^2 f'' + (eta/2) Sigma f''":
                                        gen["second_order"]},
                            why=f"standard error of the mean over {int(r['n'])} i.i.d. one-step draws (control variate "
                                f"f'(D - f'), mean 0); bias: the exact O(eta^2) remainder, at most {bias:.1e}")],
        detail="one-step decrease measured | corrected, first-order, second-order generator | exact: "
               + "; ".join(f"{n_}({x:g}) {m:.4f}+-{s:.1e} | {c:.4f}, {f:.4f}, {q:.4f} | {e:.4f}" for (n_, x, _), m, s, c, f, q, e
                           in zip(pts, r["mean"], r["se"], gen["corrected"], gen["first_order"], gen["second_order"], exact))
               + f" (control variate cuts the SE {np.median(r['plain_se'] / r['se']):.0f}x).",
        arrays={"measured": r["mean"], "se": r["se"], "exact": exact, **{f"gen_{k}": v for k, v in gen.items()}},
        seed=_ONE_STEP_SEED)


# ============================================================================= claims: the degree of normalization

NORM_A, NORM_AGENTS, NORM_SIGMA1, NORM_SIGMA0 = 1.0, 4, 0.5, 0.1
NORM_OMEGAS = (0.0, 3.0, 15.0, 63.0)     # edge cells: from no compression to keeping 1/64 of the coordinates
FLOOR_OMEGAS, FLOOR_C = (0.0, 3.0), (0.5, 1.0)
_NORM_SEED = 5150


def _norm_factor(omega: float) -> float:
    return T.normalization_factor(NORM_AGENTS, omega, NORM_SIGMA1)


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


def _floor(c: float, omega: float, factor: float) -> float:
    r"""Stationary :math:`E f = \tfrac a2 v_\infty` of DCSGD with step :math:`c/(aF)` and affine noise on a x^2/2:
    :math:`E x_{k+1}^2 = \rho E x_k^2 + \eta^2(1+\omega)\sigma_0^2/N` gives
    :math:`v_\infty = \eta^2(1+\omega)\sigma_0^2/(N(1-\rho))` (inf if :math:`\rho \ge 1`); :math:`\rho` from
    :func:`theory.sde.dcsgd_ms_factor` (the :math:`\sigma_0` part adds no multiplicative term)."""
    eta = c / (NORM_A * factor)
    rho = T.dcsgd_ms_factor(eta, NORM_A, NORM_AGENTS, omega, NORM_SIGMA1)
    if rho >= 1:
        return math.inf
    return NORM_A / 2 * eta**2 * (1 + omega) * NORM_SIGMA0**2 / (NORM_AGENTS * (1 - rho))


@claim("compagnoni2025.normalization_degree", paper=PAPER, provenance="derived", kind="statistical",
       source="abstract (the degree of normalization is set by the noise structure and the compression rate); the "
              "quadratic edge and floor are derived here",
       statement="The normalization's compression/noise factor F = 1 + (omega + sigma1^2 omega + sigma1^2)/N is precisely "
                 "what keeps DCSGD mean-square stable: on a x^2/2 (L1 = 0) the prescribed step c/(a F) is stable exactly "
                 "for c < 2 at every compression level, while the same rule without F (or with the noise counted only "
                 "additively) crosses the threshold for large omega; with affine noise the converged runs settle at "
                 "the floor E f = c sigma0^2 (1 + omega)/(2 a F N (2 - c)).",
       latex=r"c^\ast = a F\,\eta^\ast = 2\ \forall\omega,\qquad E f_\infty=\frac{c\,\sigma_0^2(1+\omega)}{2aFN(2-c)}")
def normalization_degree_check(budget: Budget) -> Result:
    """(1) Measures the mean-square edge of the prescribed rule in c, c* = a F eta*, with eta* = 2 E D / E D^2 from
    one-step draws of DCSGD's direction (delta-method SE), at omega = 0, 3, 15, 63: predicted 2 everywhere. Rivals:
    the rule without its factor is already stable up to c = 2 (c* = 2F; at |x| = 1 this is also plain 1/|f'|
    normalization), and the factor counting the noise only additively, F' = 1 + (omega + sigma1^2)/N
    (c* = 2F/F'). (2) Measures the late-time mean loss of the rule's paths with affine noise at c = 0.5, 1 and
    omega = 0, 3 (SE over paths) against the stationary floor; rival: the floor of the same c without F."""
    r = normalization_degree(budget)
    n = int(r["n"])
    m1, m2, s1, s2, cov = r["moments"].T
    F = np.array([_norm_factor(om) for om in NORM_OMEGAS])
    Fp = np.array([1 + (om + NORM_SIGMA1**2) / NORM_AGENTS for om in NORM_OMEGAS])
    est = NORM_A * F * 2 * m1 / m2
    g1, g2 = NORM_A * F * 2 / m2, -NORM_A * F * 2 * m1 / m2**2
    se = np.sqrt((g1**2 * s1**2 + g2**2 * s2**2 + 2 * g1 * g2 * cov) / n)
    fl = np.asarray(r["floor_path_means"])
    fl_est, fl_se = fl.mean(axis=-1), fl.std(axis=-1, ddof=1) / math.sqrt(fl.shape[-1])
    pred = np.array([[_floor(c, om, _norm_factor(om)) for c in FLOOR_C] for om in FLOOR_OMEGAS])
    blind = np.array([[_floor(c, om, 1.0) for c in FLOOR_C] for om in FLOOR_OMEGAS])
    # burn-in: the mean square forgets x0 = 1 like rho^(K/2) <= 0.63^24 < 1e-4 of the floor's scale in every cell
    rho_max = max(T.dcsgd_ms_factor(c / (NORM_A * _norm_factor(om)), NORM_A, NORM_AGENTS, om, NORM_SIGMA1)
                  for om in FLOOR_OMEGAS for c in FLOOR_C)
    burn = NORM_A / 2 * rho_max ** (int(r["n_steps"]) // 2) / (1 - rho_max) / (int(r["n_steps"]) // 2)
    return Result(
        checks=[Statistical("mean-square edge c* = a F eta* of the prescribed rule per omega", estimate=est, se=se,
                            predicted=np.full(len(NORM_OMEGAS), 2.0),
                            rivals={"the rule without its factor is stable up to c = 2 (c* = 2F; = plain 1/|f'| at |x| = 1)":
                                        2 * F,
                                    "noise counted additively: F' = 1 + (omega + sigma1^2)/N (c* = 2F/F')": 2 * F / Fp},
                            why=f"delta-method standard error of a ratio of sample moments of {n} i.i.d. one-step draws; "
                                "4 SE"),
                Statistical("late-time mean loss of the prescribed rule with affine noise per (omega, c)", estimate=fl_est,
                            se=fl_se, predicted=pred, bias=burn,
                            rivals={"the same c without the factor F (1e300 where that step is mean-square unstable)":
                                        np.where(np.isfinite(blind), blind, 1e300)},
                            why="standard error over independent paths of each path's late-time average; bias: the "
                                f"transient from x0 = 1 left in the window, at most {burn:.1e}")],
        detail=f"edge c* per omega {NORM_OMEGAS}: " + ", ".join(f"{v:.3f}+-{s:.3f}" for v, s in zip(est, se))
               + f" (F = {', '.join(f'{v:.2f}' for v in F)}); without F the rule at c = 1 has rho = "
               + ", ".join(f"{T.dcsgd_ms_factor(1.0 / NORM_A, NORM_A, NORM_AGENTS, om, NORM_SIGMA1):.2f}" for om in NORM_OMEGAS)
               + f". Floors measured {', '.join(f'{v:.2e}' for v in fl_est.ravel())} vs predicted "
               + f"{', '.join(f'{v:.2e}' for v in pred.ravel())} ({int(np.sum(r['floor_diverged']))} paths diverged).",
        arrays={"omega": np.asarray(NORM_OMEGAS), "edge": est, "edge_se": se, "factor": F, "floor": fl_est,
                "floor_se": fl_se, "floor_theory": pred, "floor_blind": blind}, seed=_NORM_SEED)


# ============================================================================= claims: weak order of the new SDEs

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
    cfg = S.Config(problem="quartic", algo="dcsgd", n_agents=w["agents"], compressor="bernoulli", noise="gaussian",
                   n_steps=k_max, n_record=k_max)
    r = S.paths(cfg, {**common, "key": jax.random.split(keys[0], size), "omega": np.full(size, w["omega"]),
                      "sigma1": np.full(size, w["sigma1"])}, chunk_size=size)
    out["dcsgd_mean"], out["dcsgd_se"], out["dcsgd_div"] = read(r["loss"], r["diverged_at"], 1)
    kinds = np.repeat([0, 2], size)   # first_order, corrected as data: one compilation
    r = S.sde_sweep("dcsgd", {"key": jax.random.split(keys[1], 2 * size), "x0": np.tile(common["x0"], (2, 1)),
                              "eta": np.tile(eta, 2), "dt": np.tile(eta / m, 2), "omega": np.full(2 * size, w["omega"]),
                              "sigma1": np.full(2 * size, w["sigma1"]), "n_agents": np.full(2 * size, float(w["agents"])),
                              "kind": kinds}, problem="quartic", kind=None, n_steps=m * k_max, n_record=k_max,
                    chunk_size=2 * size)
    for j, kind in enumerate(("first_order", "corrected")):
        sl = slice(j * size, (j + 1) * size)
        out[f"dcsgd_{kind}_mean"], out[f"dcsgd_{kind}_se"], out[f"dcsgd_{kind}_div"] = read(
            r["loss"][sl], r["diverged_at"][sl], m)
    # 16 agents for the signs: the Monte Carlo noise of f(x_K) shrinks like 1/sqrt(N), the drift's O(eta) error does not
    cfg = S.Config(problem="quartic", algo="dsignsgd", n_agents=w["sign_agents"], noise="gaussian", n_steps=k_max,
                   n_record=k_max)
    r = S.paths(cfg, {**common, "key": jax.random.split(keys[2], size), "sigma0": np.full(size, w["sign_sigma0"])},
                chunk_size=size)
    out["dsignsgd_mean"], out["dsignsgd_se"], out["dsignsgd_div"] = read(r["loss"], r["diverged_at"], 1)
    r = S.sde_sweep("dsignsgd", {**common, "key": jax.random.split(keys[3], size), "dt": eta / m,
                                 "sigma0": np.full(size, w["sign_sigma0"]),
                                 "n_agents": np.full(size, float(w["sign_agents"]))},
                    problem="quartic", kind="first_order", noise="gaussian", n_steps=m * k_max, n_record=k_max,
                    chunk_size=size)
    out["dsignsgd_first_order_mean"], out["dsignsgd_first_order_se"], out["dsignsgd_first_order_div"] = read(
        r["loss"], r["diverged_at"], m)
    return out


_WEAK_NEW_CASES = (("dcsgd", "first_order"), ("dcsgd", "corrected"), ("dsignsgd", "first_order"))


@claim("compagnoni2025.weak_order_new_sdes", paper=PAPER, provenance="derived", kind="rate",
       coarse_reason=WEAK_ORDER_RESOLUTION,
       source="the paper's SDEs are first-order weak approximations (secondary sources); the setup is derived here",
       statement="With multiplicative noise and compression (DCSGD, N = 4, omega = 1, sigma1 = 0.5) and with Gaussian "
                 "noise for signs (DSignSGD, N = 16), the SDEs approximate the discrete algorithms on x^4/4 with weak "
                 "error O(eta): the first-order and the curvature-corrected DCSGD SDE, and the first-order DSignSGD SDE.",
       latex=r"|E f(x_{T/\eta}) - E f(X_T)| = O(\eta)")
def weak_order_new_sdes(budget: Budget) -> Result:
    """Fits the log-log slope of |E f(x_K) - E f(X_T)| (independent Monte Carlo of the discrete chain and of the
    Euler-Maruyama SDE with dt = eta/4, whose own error is also O(eta)) for each of the three SDEs, against
    order 1; band: 4 SE of the weighted slope plus the slope bias of a fitted C1 eta + C2 eta^2 (two-term fit).
    Rivals: orders 0 (the SDE misses a fixed amount) and 2."""
    w = weak_new(budget)
    eta = w["eta"]
    checks, parts, arrays = [], [], {"eta": eta}
    for method, kind in _WEAK_NEW_CASES:
        err = w[f"{method}_mean"] - w[f"{method}_{kind}_mean"]
        se = np.hypot(w[f"{method}_se"], w[f"{method}_{kind}_se"])
        bias = _next_order(eta, err, se, 1)
        rate = Rate(f"log-log slope of |E f(x_K) - E f(X_T)| for the {method} {kind.replace('_', '-')} SDE", x=eta,
                    y=np.abs(err), sigma=se, predicted=1.0, next_order=bias,
                    rivals={"weak order 0 (a fixed gap)": 0.0, "weak order 2": 2.0},
                    why="4 SE of the weighted slope (Monte Carlo SE per point, discrete and SDE independent) plus the "
                        f"slope bias of the fitted C1 eta + C2 eta^2 ({bias:.2f})")
        checks.append(rate)
        parts.append(f"{method}/{kind}: slope {rate.slope:.2f} +- {rate.se:.2f}, |err| {abs(err[0]):.1e} -> "
                     f"{abs(err[-1]):.1e} (min |err|/SE {np.min(np.abs(err) / se):.1f}, diverged "
                     f"{int(w[f'{method}_div'])}/{int(w[f'{method}_{kind}_div'])})")
        arrays[f"{method}_{kind}_err"], arrays[f"{method}_{kind}_se"] = np.abs(err), se
    return Result(checks=checks, detail=f"{int(w['n'])} runs per step size and chain: " + "; ".join(parts) + ".",
                  arrays=arrays, seed=_WEAK_NEW_SEED)


# ============================================================================= claims: DSignSGD under Student-t noise

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


@claim("compagnoni2025.student_t_sign_schedules", paper=PAPER, provenance="derived", kind="statistical",
       source="the paper's DSignSGD experiment with heavy-tailed noise (secondary sources); the linearized variance "
              "law and this setup are derived here",
       statement="Under Student-t noise with nu = 1.5 (infinite variance), DSignSGD with a constant step is stable but "
                 "does not converge: its gap settles at the floor of v_{k+1} = (1 - eta kappa)^2 v_k + eta^2/N, "
                 "kappa = f''(0) 2 rho_nu(0)/sigma; with eta_k = eta/sqrt(k+1) it converges for every sigma, the gap "
                 "following the same recursion down like k^(-1/2).",
       latex=r"v_{k+1}=(1-\eta_k\kappa)^2v_k+\tfrac{\eta_k^2}{N},\ \kappa=\tfrac{2f''(0)\rho_\nu(0)}{\sigma}")
def student_t_sign_schedules(budget: Budget) -> Result:
    """Per sigma = 0.5, 1, 2: (1) constant step: each path's mean gap over the last half of its checkpoints divided by
    the recursion's v at those steps (predicted 1); rivals: convergence (gap 0) and the Gaussian mean-sign law's
    slope in kappa. (2) 1/sqrt(k+1): the same ratio in two late windows (k/K in (1/2, 3/4], (3/4, 1]); rivals: the
    gap stalls at its first-window level, and the Gaussian law. Counts diverged runs (none: signed steps are
    bounded)."""
    r = student_t_sign(budget)
    curv = float(sp.diff(T.toy_function("cosh2"), T._X, 2).subs(T._X, 0))
    checks, parts, arrays = [], [], {"sigmas": r["sigmas"]}
    for schedule, eta in (("constant", T_ETA_CONST), ("inv_sqrt", T_ETA_DECAY)):
        steps, k = int(r[f"{schedule}_steps"]), r[f"{schedule}_k"]
        etas = np.full(steps, eta) if schedule == "constant" else eta / np.sqrt(np.arange(steps) + 1.0)
        gap, div = r[f"{schedule}_gap"], r[f"{schedule}_diverged"]
        wins = [k > steps // 2] if schedule == "constant" else [(k > steps // 2) & (k <= 3 * steps // 4), k > 3 * steps // 4]
        est, se, gauss, stall = [], [], [], []
        for i, s in enumerate(r["sigmas"]):
            v = {law: T.sign_linear_variance(etas, T.sign_contraction(curv, s, law, nu=T_NU if law == "student_t" else None),
                                             T_AGENTS)[k - 1] for law in ("student_t", "gaussian")}
            ok = ~div[i]
            per = np.stack([(gap[i][ok][:, w] / v["student_t"][w]).mean(axis=1) for w in wins], axis=1)
            est.append(per.mean(axis=0))
            se.append(per.std(axis=0, ddof=1) / math.sqrt(per.shape[0]))
            gauss.append([float((v["gaussian"][w] / v["student_t"][w]).mean()) for w in wins])
            vbar = [v["student_t"][w].mean() for w in wins]
            stall.append([1.0, vbar[0] / vbar[1]] if len(wins) == 2 else [0.0])
            arrays[f"{schedule}_v_{i}"] = v["student_t"]
        est, se = np.array(est), np.array(se)
        rivals = {"Gaussian mean-sign law (kappa with rho_Gauss(0))": np.array(gauss)}
        if schedule == "constant":
            rivals["the constant step converges (gap -> 0)"] = np.zeros_like(est)
        else:
            rivals["the gap stalls at its first-window level"] = np.array(stall)
        # nonlinear corrections: the mean sign's cubic term and 2cosh - 2 = x^2 + x^4/12 are O(v/sigma^2) relative
        bias = float(4 * max(np.max(arrays[f"{schedule}_v_{i}"][k > steps // 2]) / s**2 for i, s in enumerate(r["sigmas"])))
        checks.append(Statistical(f"mean gap / v_k per sigma, {schedule} step (late windows)", estimate=est, se=se,
                                  predicted=np.ones_like(est), bias=bias, rivals=rivals,
                                  why="standard error over independent paths of each path's window average; bias: "
                                      f"O(v/sigma^2) nonlinear corrections ({bias:.1e})"))
        checks.append(Count(f"DSignSGD runs that stayed finite ({schedule})", measured=~div.ravel(), predicted=True,
                            why="|x_{k+1} - x_k| <= eta_k: a signed update is bounded whatever the noise"))
        parts.append(f"{schedule}: gap/v_k " + ", ".join(f"{e.mean():.3f}+-{s_.max():.3f}" for e, s_ in zip(est, se))
                     + f" (median final gap {np.median(gap[..., -1]):.1e})")
        arrays[f"{schedule}_gap_mean"] = np.array([gap[i][~div[i]].mean(axis=0) for i in range(len(r["sigmas"]))])
        arrays[f"{schedule}_k"] = k
    return Result(checks=checks, detail=f"Student-t nu = {T_NU}, N = {T_AGENTS}, {int(r['n'])} runs per sigma "
                  f"{tuple(float(s) for s in r['sigmas'])}: " + "; ".join(parts) + ".", arrays=arrays, seed=_T_SEED)


# ============================================================================= claims: Theorem 4.2's step condition

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


# ============================================================================= claims: DSignSGD's one-step descent (Theorem 4.3)

SD_NU, SD_SIGMA, SD_AGENTS = 1.5, 1.0, 4
SD_DIMS, SD_LEVELS = (1, 8), (0.1, 0.5, 2.0)   # per-coordinate |grad|/sigma around these levels
SD_CASES = tuple((name, d, u) for name in T.SIGN_DESCENT_FUNCTIONS for d in SD_DIMS for u in SD_LEVELS)
SD_RIVAL_RULES = ("no_noise", "no_sqrt_d", "theorem43")
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


_SD_F = {name: tuple(sp.lambdify(T._X, sp.diff(T.toy_function(name, lam=1), T._X, k), "numpy") for k in range(3))
         for name in T.SIGN_DESCENT_FUNCTIONS}


def _sd_derivative(name: str, x: np.ndarray, k: int) -> np.ndarray:
    """k-th derivative of the 1-D toy function at each entry (numpy, from sympy): the problem's definition, used to
    place starts and to evaluate f at the drawn steps; the measurement is the simulator's draws of D."""
    with np.errstate(over="ignore"):
        return np.asarray(_SD_F[name][k](x), float) * np.ones_like(x)


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


# ============================================================================= claims: pre-scheduled steps need normalization (v1)

SCHED_ETA0, SCHED_AGENTS, SCHED_OMEGA, SCHED_SIGMA1 = 0.1, 4, 1.0, 0.5
SCHED_S0 = (1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 6.0)        # s0 = eta0 x0^2 of the noisy pre-scheduled runs
SCHED_NORM_S0 = (0.5, 2.0, 6.0, 20.0)                  # starts of the normalized runs (same eta0 -> x0 map)
SCHED_C, SCHED_L0, SCHED_L1 = 1.0, 1.0, 2.0            # the prescription's constant and x^4/4's (L0, L1)
SCHED_CONVERGED = 1e-3
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


@claim("compagnoni2025.schedule_needs_normalization", paper=PAPER, provenance="derived", kind="statistical",
       source="v1 abstract (compressed SGD with a pre-scheduled decaying step fails to converge unless the schedule "
              "depends inversely on the gradient norm); the s-chain, its edge and its divergence law are derived here",
       statement="On x^4/4 a pre-scheduled step eta_t = eta0/sqrt(t+1) diverges from every start with s0 = eta0 x0^2 "
                 "above s* = 2.1697 without noise (the decay saves only starts within 8.5 % of the constant step's edge "
                 "2); with compression (N = 4, omega = 1) and multiplicative Gaussian noise (sigma1 = 0.5) it diverges "
                 "with the probability of the Markov chain s_{t+1} = r_t s_t (1 - s_t S_t)^2 (r_t = sqrt((t+1)/(t+2))), "
                 "positive well below s*, and under affine noise (sigma0 = 40, sigma1 = 0.25) with that of the chain "
                 "of |x_t|; the same schedule times the normalization 1/((L0 + L1|f'|)F) converges from every start.",
       latex=r"s_{t+1}=r_ts_t(1-s_tS_t)^2,\quad s^\ast_{1/\sqrt{t+1}}=2.1697,\quad "
             r"P(\mathrm{div}\mid s_0)=\lim_T V_0(s_0)")
def schedule_needs_normalization(budget: Budget) -> Result:
    """(1) Brackets the noise-free escape edge on the s0 grid and compares its midpoint with the bisection of the
    s-chain (2.1697); rivals: the constant step's edge 2 (the decay changes nothing) and the edge moved by a factor
    2 either way. (2) The diverged fraction of the noisy compressed runs per s0 (binomial SE) against the backward
    recursion's probability (the s-chain; for the affine cell the chain of |x|); rivals: decay alone suffices (0),
    the edge moved by a factor 2 either way (P(s0/2), P(2 s0)), the constant step's law, and for the affine cell the
    law without sigma0. (3) Counts the normalized runs (same schedule, c = 1) that stay finite and end
    below 1e-3; rival: the pre-scheduled step's noise-free rule (diverges iff s0 > s*)."""
    r = schedule_divergence(budget)
    n = int(r["n"])
    s_star = T.quartic_schedule_threshold("inv_sqrt")
    mid, half = _mid_and_halfwidth(r["s_grid"], r["grid_diverged"])
    s0 = np.asarray(SCHED_S0)
    x0 = np.sqrt(s0 / SCHED_ETA0)
    args = (SCHED_AGENTS, SCHED_OMEGA, SCHED_SIGMA1)
    aff = (SCHED_AGENTS, SCHED_OMEGA) + SCHED_AFFINE

    def law(schedule="inv_sqrt", scale=1.0, fine=False):
        """[multiplicative cell (s-chain), affine cell (x-chain)] at every s0 * scale."""
        kw = {"n_grid": 800, "n_nodes": 241} if fine else {}
        kx = {"n_grid": 800, "n_nodes": 161} if fine else {}
        return np.concatenate([T.quartic_schedule_divergence(s0 * scale, schedule, *args, **kw),
                               T.quartic_schedule_divergence_affine(x0 * math.sqrt(scale), SCHED_ETA0, schedule, *aff,
                                                                    **kx)])

    pred = law()
    bias = float(2 * np.max(np.abs(law(fine=True) - pred)))
    frac = np.concatenate([r["noisy_diverged"].mean(axis=1), r["affine_diverged"].mean(axis=1)])
    se = np.sqrt(np.maximum(frac * (1 - frac), 1.0 / n) / n)
    # the affine cell's law with sigma0 dropped: the multiplicative s-chain at sigma1 = 0.25
    no_sigma0 = np.concatenate([pred[:s0.size], T.quartic_schedule_divergence(s0, "inv_sqrt", SCHED_AGENTS, SCHED_OMEGA,
                                                                              SCHED_AFFINE[1])])
    rivals = {"decay alone suffices (no run diverges)": np.zeros_like(pred),
              "the edge moved by a factor 2 (s* -> 2 s*)": law(scale=0.5),
              "the edge moved by a factor 1/2": law(scale=2.0),
              "the constant step's law (the decay changes nothing)": law("constant"),
              "the additive part sigma0 does not matter (multiplicative law)": no_sigma0}
    ok = ~r["norm_diverged"] & (r["norm_final"] < SCHED_CONVERGED)
    naive = ~(r["norm_s0"] > s_star)
    return Result(
        checks=[Exact("noise-free escape edge s* = eta0 x0^2 of the 1/sqrt(t+1) schedule (bracket midpoint)",
                      predicted=s_star, measured=mid, rtol=half,
                      rivals={"the constant step's edge 2": 2.0, "the edge moved by a factor 2": 2 * s_star,
                              "the edge moved by a factor 1/2": s_star / 2},
                      why="half the geometric grid cell that brackets the switch"),
                Statistical("diverged fraction of pre-scheduled DCSGD per s0 (multiplicative cell, then affine cell)",
                            estimate=frac, se=se, predicted=pred,
                            bias=bias, rivals=rivals,
                            why=f"binomial SE of a fraction of {n} independent runs (floored at one run); bias: twice "
                                f"the change of the recursion on a 2x finer grid and quadrature ({bias:.1e})"),
                Count("normalized runs (same schedule x 1/((L0 + L1|f'|)F), c = 1) that stay finite and end below 1e-3",
                      measured=ok, predicted=True,
                      rivals={"the pre-scheduled step's noise-free rule: converges iff s0 < s*": naive},
                      why=f"deterministic part contracts from every start (eta x^2/(L0 + L1|x|^3) <= 1/3); near 0, "
                          f"1/x^2 grows like 4c sqrt(T)/F, so f ~ 3e-5 after {int(r['norm_steps'])} steps: 1e-3 is 30x that")],
        detail=f"noise-free edge {mid:.4f} (theory {s_star:.4f}, grid half-cell {half:.1e}); diverged fraction per s0 "
               f"{SCHED_S0} (sigma1 = {SCHED_SIGMA1}; then sigma0, sigma1 = {SCHED_AFFINE}): "
               + ", ".join(f"{v:.3f}" for v in frac) + " vs " + ", ".join(f"{v:.3f}" for v in pred)
               + f" ({n} runs each); normalized: {int(np.sum(r['norm_diverged']))} of {ok.size} diverged, largest "
               f"final loss {np.max(r['norm_final']):.1e} from s0 up to {max(SCHED_NORM_S0):g}.",
        arrays={"s0": s0, "frac": frac, "frac_se": se, "pred": pred,
                "pred_constant": rivals["the constant step's law (the decay changes nothing)"],
                "s_grid": r["s_grid"], "grid_diverged": r["grid_diverged"]}, seed=_SCHED_SEED)


# ============================================================================= claims: is Theorem 4.3's Grönwall factor phi needed?

PHI_NU, PHI_AGENTS = 1.5, 8          # Monte Carlo starts: Student-t nu = 1.5, N = 8 agents
PHI_MC_STARTS = ((1, 0.5, 8.0), (8, 0.5, 8.0), (32, 0.5, 4.0), (8, 2.0, 1.0), (1, 0.1, 0.05))  # (d, |g_j|/sigma, L1 y)
PHI_MC_STEPS = ("steplab", "half_phi", "below", "above")   # h_phi, h_{1/2}, 0.8 h*, 1.25 h*
PHI_LARGE = 0.55                     # "phi is large": phi(L1 h_{1/2} sqrt d) above 1/2 by 10%
_PHI_SEED = 4242


def _phi_grid(budget: Budget) -> list[tuple]:
    """Starts of the exact search: (noise, nu, d, N, u = |grad_j|/sigma, a = L1 y) with L0 = L1 = 1 (any other pair is
    a rescaling of x and f)."""
    noises = budget.pick(quick=(("gaussian", None), ("student_t", PHI_NU)),
                         full=(("gaussian", None), ("student_t", PHI_NU), ("student_t", 3.5), ("cauchy", None)))
    us = budget.pick(quick=(0.1, 0.5, 2.0, 1e3), full=(0.01, 0.1, 0.3, 0.5, 1.0, 2.0, 5.0, 1e3))
    as_ = budget.pick(quick=(0.05, 0.5, 2.0, 8.0), full=(0.01, 0.05, 0.2, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0))
    return [(noise, nu, d, n, u, a) for noise, nu in noises for d in (1, 2, 8, 32) for n in (1, 2, 8)
            for u in us for a in as_]


def _phi_scale(d: int, u: float, a: float) -> float:
    """Noise scale sigma that puts every gradient coordinate F'(y)/sqrt(d) at u sigma (L0 = L1 = 1)."""
    return math.expm1(a) / math.sqrt(d) / u


def _ridge_f(y: np.ndarray) -> np.ndarray:
    """The ridge's profile (L0 = L1 = 1) written out directly: e^|y| - 1 - |y| (the problem's definition; the theory
    sums Taylor remainders instead)."""
    return np.expm1(np.abs(y)) - np.abs(y)


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


def _ridge_delta(d: int, a: float, h: float) -> np.ndarray:
    """F(y - h <u, D>) - F(y) at L1 y = a for every total B = 0..dN of +1 signs (the problem's definition)."""
    z = (2 * np.arange(d * PHI_AGENTS + 1) - d * PHI_AGENTS) / (PHI_AGENTS * math.sqrt(d))
    return _ridge_f(a - h * z) - _ridge_f(np.array(a))


def _radial_delta(d: int, a: float, h: float, s1: np.ndarray, s2: np.ndarray) -> np.ndarray:
    """F(|x - hD|) - F(|x|) at L1 |x| = a for the coordinates' sums (S1, S2) of k_j = N D_j."""
    rho = np.sqrt(np.maximum(a * a - 2 * h * a * s1 / (PHI_AGENTS * math.sqrt(d)) + h * h * s2 / PHI_AGENTS**2, 0.0))
    return _ridge_f(rho) - _ridge_f(np.array(a))


def _mean_se(w: np.ndarray, delta: np.ndarray, n: int) -> tuple[float, float]:
    """Mean of ``delta`` under the empirical weights ``w`` of n draws, and its SE."""
    mu = float(w @ delta)
    return mu, math.sqrt(max(float(w @ delta**2) - mu**2, 0.0) / (n - 1))


def _kurtosis(w: np.ndarray, delta: np.ndarray) -> float:
    r"""Kurtosis :math:`E(\Delta - \mu)^4/\mathrm{Var}^2` of ``delta`` under the exact law ``w``."""
    c = delta - w @ delta
    return float(w @ c**4) / float(w @ c**2) ** 2


def _phi_mc_change(d: int, a: float, counts: np.ndarray, h: float) -> tuple[float, float]:
    """Monte Carlo mean of F(y - h <u, D>) - F(y) over the draws (from the count table) and its SE."""
    n = int(counts.sum())
    return _mean_se(counts / n, _ridge_delta(d, a, h), n)


def _phi_mc_radial(d: int, a: float, r: dict, i: int, h: float) -> tuple[float, float]:
    """Monte Carlo mean of F(|x - hD|) - F(|x|) over the draws (from the (S1, S2) table) and its SE."""
    w = r[f"pair_counts_{i}"] / r[f"pair_counts_{i}"].sum()
    return _mean_se(w, _radial_delta(d, a, h, r[f"s1_{i}"], r[f"s2_{i}"]), int(r["n"]))


def _phi_kurtosis_radial(d: int, u: float, a: float, h: float) -> float:
    """As :func:`_phi_kurtosis` for the radial function (exact multinomial law of (S1, S2))."""
    w, s1, s2 = T._radial_law(d, PHI_AGENTS, T.mean_sign(u, 1.0, "student_t", PHI_NU))
    return _kurtosis(w, _radial_delta(d, a, h, s1, s2))


def _phi_kurtosis(d: int, u: float, a: float, h: float) -> float:
    r"""Kurtosis :math:`E(\Delta - \mu)^4/\mathrm{Var}^2` of one draw's change under the exact binomial law: a sample of n
    draws estimates its own SE to about :math:`\sqrt{\kappa/n}`, so items with :math:`\kappa > n/100` (rare uphill
    moves into the exponential wall carry the mean) are left to the exact sum (design, decided before the draws)."""
    w, _ = T._ridge_law(d, PHI_AGENTS, T.mean_sign(u, 1.0, "student_t", PHI_NU))
    return _kurtosis(w, _ridge_delta(d, a, h))


def _phi_bound_value(d: int, n: int, u: float, a: float, h: float, phi: float) -> float:
    r"""The descent bound :math:`-h\langle\nabla f, m\rangle + h^2(L_0 + L_1G)\varphi\,E\|D\|^2` on the ridge with a given
    value of the factor (1/2: the small-step bound)."""
    g = np.full(d, math.expm1(a) / math.sqrt(d))
    m = np.full(d, T.mean_sign(u, 1.0, "student_t", PHI_NU))
    second = (1 - 1 / n) * float(m @ m) + d / n
    return -h * float(g @ m) + h**2 * math.exp(a) * phi * second


PHI_SHAPES = ("ridge", "radial")


def _phi_shape(shape: str):
    """(critical step, exact one-step change) of the ridge F(<u,x>) or the radial F(|x|)."""
    return {"ridge": (T.ridge_critical_step, T.ridge_one_step_change),
            "radial": (T.radial_critical_step, T.radial_one_step_change)}[shape]


def _phi_feasible(shape: str, d: int, n: int) -> bool:
    """The radial sum runs over C(d + N, N) states; the ridge's over d N + 1. In d = 1 the two functions coincide, so the
    radial one is searched from d = 2 on."""
    return shape == "ridge" or (d > 1 and math.comb(d + n, n) <= T.RADIAL_MAX_STATES)


@claim("compagnoni2025.sign_descent_phi_slack", paper=PAPER, provenance="derived", kind="statistical",
       source="Theorem 4.3's Taylor-remainder bound (secondary sources; its constants not recovered); the extremal "
              "functions, the search and the comparison argument are derived here",
       statement="steplab's one-step descent condition for DSignSGD carries the Grönwall factor phi(L1 h sqrt(d)) = "
                 "(e^a - 1 - a)/a^2 >= 1/2. On the two extremal (L0,L1)-smooth functions built from "
                 "F(y) = (L0/L1^2)(e^(L1|y|) - 1 - L1|y|) (F'' = L0 + L1|F'| everywhere): the ridge F(<u,x>), u = 1/sqrt(d) "
                 "(a sign step with all signs agreeing moves <u,x> by h sqrt(d): the step length inside phi is "
                 "attained) and the radial F(|x|) (curved in every direction: the noise share d/N costs in full; the "
                 "isotropic quadratic near 0), the condition with phi replaced by its small-step value 1/2 is still "
                 "sufficient at every start searched (d = 1, 2, 8, 32; N = 1, 2, 8; Gaussian and Student-t noise; "
                 "|grad_j|/sigma from 0.1 to 1000; L1|x| from 0.05 to 8; the radial function from d = 2 on, where its "
                 "exact sum is feasible), tight (h*/h_{1/2} -> 1) only in the quadratic limit, with room where phi would be largest: "
                 "phi is never needed there, and the condition with phi is conservative by the measured factor "
                 "h*/h_phi. In d = 1 F is the pointwise largest (L0,L1)-smooth function with a given slope, so there "
                 "the phi = 1/2 condition suffices for every (L0,L1)-smooth f at the starts searched.",
       latex=r"\min_{\rm starts} h^\ast/h_{1/2} \ge 1,\quad h_{1/2}:\ \tfrac h2\Bigl[(1-\tfrac1N)\|m\|^2+\tfrac dN\Bigr]"
             r"(L_0+L_1\|\nabla f\|)=\langle\nabla f,m\rangle,\quad f=F(\langle u,x\rangle),\ F(\|x\|)")
def sign_descent_phi_slack(budget: Budget) -> Result:
    """On the ridge F(<u, x>) and the radial F(|x|) (L0 = L1 = 1): (1) the Monte Carlo one-step change of DSignSGD
    (simulator's sign draws, N = 8, Student-t nu = 1.5) at h_phi, h_{1/2}, 0.8 h* and 1.25 h* at five starts, against
    the exact finite sums; rivals: the phi = 1/2 bound and steplab's bound with phi are attained there. (2) whether each
    of those steps descends (items resolved beyond 4 SE) against the exact sign; rival: phi is needed where it is large
    (the h_{1/2} step ascends where phi(L1 h_{1/2} sqrt d) > 0.55). (3) per function, min over the exact search of
    h*/h_{1/2} >= 1 (phi = 1/2 suffices); rival: the phi = 1/2 condition keeps 10% room everywhere. (4) min of
    h*/h_phi >= 1 (steplab's condition); rival: twice its step still descends everywhere."""
    r = phi_ridge(budget)
    n_draws = int(r["n"])
    est, se, exact, half_bound, phi_bound = [], [], [], [], []
    desc_meas, desc_pred, desc_rival = [], [], []
    mc = {"ridge": lambda d, a, i, h: _phi_mc_change(d, a, r[f"counts_{i}"], h),
          "radial": lambda d, a, i, h: _phi_mc_radial(d, a, r, i, h)}
    kurt = {"ridge": _phi_kurtosis, "radial": _phi_kurtosis_radial}
    for shape in PHI_SHAPES:
        critical, change = _phi_shape(shape)
        for i, (d, u, a) in enumerate(PHI_MC_STARTS):
            if not _phi_feasible(shape, d, PHI_AGENTS):
                continue
            args = (d, _phi_scale(d, u, a), PHI_AGENTS, "student_t", PHI_NU)
            hstar = critical(a, *args)
            steps = T.ridge_condition_steps(a, *args)     # both functions have the gradient F'(a) u at x = a u
            hs = {"steplab": steps["steplab"], "half_phi": steps["half_phi"], "below": 0.8 * hstar, "above": 1.25 * hstar}
            for which in PHI_MC_STEPS:
                h = hs[which]
                if kurt[shape](d, u, a, h) > n_draws / 100:
                    continue
                mu, sd = mc[shape](d, a, i, h)
                ex = change(a, h, *args)
                est.append(mu), se.append(sd), exact.append(ex)
                half_bound.append(_phi_bound_value(d, PHI_AGENTS, u, a, h, 0.5))
                phi_bound.append(_phi_bound_value(d, PHI_AGENTS, u, a, h, T.sign_remainder_factor(h * math.sqrt(d))))
                if abs(mu) > 4 * sd:
                    desc_meas.append(mu < 0), desc_pred.append(ex < 0)
                    desc_rival.append(not (which == "half_phi" and steps["phi_at_half"] > PHI_LARGE) and ex < 0)
    # the exact search
    rows = []
    for noise, nu, d, n, u, a in _phi_grid(budget):
        args = (d, _phi_scale(d, u, a), n, noise, nu)
        steps = T.ridge_condition_steps(a, *args)
        for shape in PHI_SHAPES:
            if _phi_feasible(shape, d, n):
                hstar = _phi_shape(shape)[0](a, *args)
                rows.append((shape, noise if nu is None else f"{noise}_{nu:g}", d, n, u, a,
                             hstar / steps["half_phi"], hstar / steps["steplab"], steps["phi_at_half"]))
    cols = list(zip(*rows))
    arrays = {key: np.array(col) for key, col in zip(("shape", "noise", "d", "n_agents", "u", "a", "ratio_half",
                                                       "ratio_phi", "phi_half"), cols)}
    ratio_half, ratio_phi, phi_half = arrays["ratio_half"], arrays["ratio_phi"], arrays["phi_half"]
    # root accuracy: brentq to rtol 1e-14 on h*, the condition steps to 1e-14; 1e-9 leaves room for either's round-off
    root_tol = 1e-9
    bounds, parts = [], []
    for shape in PHI_SHAPES:
        k = arrays["shape"] == shape
        rh, rp, ph = ratio_half[k], ratio_phi[k], phi_half[k]
        big = ph > PHI_LARGE
        w = int(np.argmin(rh))
        bounds.append(Bound(f"min over the search of h*/h_{{1/2}} on the {shape} (the phi = 1/2 condition is sufficient)",
                            measured=float(rh.min()), bound=1.0, side=">=", slack=root_tol,
                            rivals={"the phi = 1/2 condition keeps 10% room everywhere (min ratio >= 1.1)": 1.1},
                            why="exact roots (finite sums, brentq to rtol 1e-14): the slack 1e-9 covers their round-off; "
                                "the ratio tends to 1 in the quadratic limit, where the condition is exact"))
        parts.append(f"{shape} ({int(k.sum())} starts): h*/h_{{1/2}} from {rh.min():.6f} (d = {arrays['d'][k][w]}, "
                     f"N = {arrays['n_agents'][k][w]}, |g_j|/sigma = {arrays['u'][k][w]:g}, L1|x| = {arrays['a'][k][w]:g}) "
                     f"to {rh.max():.1f}, >= {rh[big].min():.2f} where phi(L1 h_{{1/2}} sqrt d) > {PHI_LARGE} "
                     f"({int(big.sum())} starts, phi up to {ph.max():.2f}); h*/h_phi from {rp.min():.4f} to {rp.max():.1f} "
                     f"(median {np.median(rp):.2f})")
    return Result(
        checks=[Statistical("Monte Carlo one-step change on the ridge and the radial function at h_phi, h_{1/2}, "
                            "0.8 h*, 1.25 h* (5 starts)",
                            estimate=np.array(est), se=np.array(se), predicted=np.array(exact),
                            rivals={"the phi = 1/2 bound is attained: -h<g,m> + (h^2/2)(L0 + L1 G) E|D|^2":
                                    np.array(half_bound),
                                    "steplab's bound with phi(L1 h sqrt d) is attained": np.array(phi_bound)},
                            why=f"SE of the mean over {n_draws} draws per start (each draw's change is a function of "
                                "(S1, S2), tabulated); the exact change is a finite sum; items whose one-draw kurtosis "
                                f"exceeds n/100 (their SE is not estimable from n draws) are left out; {len(est)} "
                                "estimates, 4 SE"),
                Count("steps that descend (items resolved by the draws beyond 4 SE)",
                      measured=np.array(desc_meas), predicted=np.array(desc_pred),
                      rivals={f"phi is needed where it is large: the h_1/2 step ascends where phi(L1 h_1/2 sqrt d) > "
                              f"{PHI_LARGE}": np.array(desc_rival)},
                      why="each item's sign is resolved by the Monte Carlo mean beyond 4 SE; the exact change decides "
                          "the prediction"),
                *bounds,
                Bound("min over the search of h*/h_phi, both functions (steplab's condition with phi is sufficient)",
                      measured=float(ratio_phi.min()), bound=1.0, side=">=", slack=root_tol,
                      rivals={"twice steplab's step still descends everywhere (min ratio >= 2)": 2.0},
                      why="exact roots as above; h_phi <= h_{1/2} since phi >= 1/2")],
        detail="L0 = L1 = 1. " + "; ".join(parts) + ". The phi = 1/2 step never ascends: phi is never needed on either "
               f"extremal function; phi itself costs up to a factor {np.max(ratio_phi / ratio_half):.2f} in the step "
               "(the rest of h*/h_phi on the ridge in d > 1 is its use of only E<u,D>^2 of E|D|^2). Monte Carlo "
               f"({n_draws} draws per start, N = {PHI_AGENTS}, Student-t nu = {PHI_NU}): {len(desc_meas)} step signs "
               f"resolved, {int(np.sum(desc_meas))} descend.",
        arrays=arrays, seed=_PHI_SEED)
