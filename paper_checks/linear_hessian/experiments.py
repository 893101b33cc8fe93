r"""The topic's simulations as named, cached experiments (claims and figures both read them).

* :func:`minima` -- constructed points (balanced minima of random shapes and of class data, gauged
  minima near and far from balance, minima with mixed inputs, the origin) and their exact Hessian
  spectra by autodiff;
* :func:`gd` -- one shared GD sweep (after-GD law, max-LR law, Glorot init, mixed inputs,
  tanh/ReLU, one deliberately diverging run) with the Hessian spectra of the final iterates;
* :func:`sharpening` -- two-layer GD from an aligned and from a random small init with the
  sharpness (HVP-Lanczos) and the mode strengths recorded at every step.

Grids are built here from the budget; the simulators are in :mod:`sims.linear_hessian_spectrum`,
:mod:`sims.linear_hessian_train` and :mod:`sims.linear_hessian`. Every array is keyed by case;
string labels are stored as integer codes (``GROUPS`` tuples below).
"""
from __future__ import annotations

import jax
import numpy as np

from paper_checks._experiment import experiment
from paper_checks._registry import Budget
from sims import linear_hessian as S
from sims import linear_hessian_frame as F
from sims.linear_hessian_spectrum import constructed_minima, hessian_spectra
from sims.linear_hessian_train import train_sweep
from theory import linear_hessian as T

SEED = 20260  # every random draw of the topic derives from it
PI_BASE = (0.5, 0.3, 0.2)
COUNTS_BASE = (50, 30, 20)
MINIMA_GROUPS = ("shape", "class", "split", "origin", "gauge_far", "gauge_near", "mixed")
GD_GROUPS = ("after_gd", "max_lr", "xavier", "mixed_gd", "nonlinear", "diverge")
INIT = 0.05        # small Gaussian init of the GD sweep (std)
NONLIN_PI = (0.34, 0.57, 0.8)


def counts_for(pi_max: float, second: float | None = None) -> np.ndarray:
    """Class sizes out of ``N_SAMPLES`` with the largest share ``pi_max`` (the rest split evenly, or ``second`` next)."""
    n = F.N_SAMPLES
    top = int(round(n * pi_max))
    a = (n - top + 1) // 2 if second is None else int(round(n * second))
    return np.array([top, a, n - top - a])


def proportions(counts) -> np.ndarray:
    """Class proportions :math:`\\pi_k=n_k/n`."""
    c = np.asarray(counts, float)
    return c / c.sum(axis=-1, keepdims=True)


def class_widths(depth: int, hidden: int = 4) -> tuple[int, ...]:
    """``(DMAX, hidden, ..., hidden, 3)``: ``depth`` layers, three classes."""
    return (F.DMAX,) + (hidden,) * (depth - 1) + (3,)


# ----------------------------------------------------------------------------------------------
# constructed minima
# ----------------------------------------------------------------------------------------------

NEAR_EPS = (1e-3, 2e-3, 4e-3, 8e-3, 1.6e-2)  # gauge scales near the balanced point (both signs)


@experiment("linear_hessian.minima")
def minima(budget: Budget) -> dict:
    """Every constructed case and its exact autodiff spectrum (see the module docstring)."""
    rng = np.random.default_rng(SEED)
    cases: list[dict] = []
    # random shapes (no bottleneck: rank <= every width), random input scale, generic labels
    for depth in range(1, F.LMAX + 1):
        for _ in range(budget.pick(quick=2, full=6)):
            d0, dL = (int(x) for x in rng.integers(1, F.DMAX + 1, 2))
            r = int(rng.integers(1, min(d0, dL) + 1))
            w = (d0,) + tuple(int(x) for x in rng.integers(r, F.DMAX + 1, depth - 1)) + (dL,)
            cases.append(dict(group="shape", widths=w, alpha=float(rng.uniform(0.5, 2.0)), rank=r, classes=False))
    # the class-proportion law over pi_max and depth
    for depth in range(1, F.LMAX + 1):
        for pm in budget.pick(quick=(0.4, 0.6, 0.8), full=(0.34, 0.4, 0.5, 0.6, 0.7, 0.8)):
            cases.append(dict(group="class", widths=class_widths(depth), counts=counts_for(pm)))
    # the same pi_max = 0.5 with different splits of the rest
    for depth in (2, 3):
        for second in (0.25, 0.3, 0.4, 0.45):
            cases.append(dict(group="split", widths=class_widths(depth), counts=counts_for(0.5, second)))
    for depth in (2, 3):
        cases.append(dict(group="origin", widths=class_widths(depth), counts=np.array(COUNTS_BASE), origin=True))
    # unbalanced minima far from balance: random gauges of scale 0.3 and 1
    for depth in (2, 3):
        for scale in (0.3, 1.0):
            for _ in range(budget.pick(quick=2, full=6)):
                cases.append(dict(group="gauge_far", widths=class_widths(depth), counts=np.array(COUNTS_BASE),
                                  gauge=scale))
    # near the balanced point: the same random direction (shared key) at +-eps, and eps = 0
    direction = 0
    for depth in (2, 3):
        for _ in range(budget.pick(quick=1, full=4)):
            for eps in (0.0,) + tuple(s * e for e in NEAR_EPS for s in (1, -1)):
                cases.append(dict(group="gauge_near", widths=class_widths(depth), counts=np.array(COUNTS_BASE),
                                  gauge=eps, direction=direction))
            direction += 1
    # non-whitened (mixed) inputs at balanced minima
    for depth in (2, 3):
        for _ in range(budget.pick(quick=2, full=4)):
            cases.append(dict(group="mixed", widths=class_widths(depth), counts=np.array(COUNTS_BASE), gaussian=True))

    n = len(cases)
    keys = jax.random.split(jax.random.key(SEED), n + 64)
    # cases of one near-balance direction share a key: same data, same balanced minimum, same gauge direction
    key_idx = [n + c["direction"] if "direction" in c else i for i, c in enumerate(cases)]
    built = constructed_minima(
        keys[np.array(key_idx)], [c["widths"] for c in cases],
        counts=np.stack([c.get("counts", np.array([34, 33, 33])) for c in cases]),
        alpha=np.array([c.get("alpha", 1.0) for c in cases]),
        rank=np.array([c.get("rank", 1) for c in cases]),
        classes=np.array([c.get("classes", True) for c in cases]),
        gaussian=np.array([c.get("gaussian", False) for c in cases]),
        gauge=np.array([c.get("gauge", 0.0) for c in cases]),
        origin=np.array([c.get("origin", False) for c in cases]))
    spec = hessian_spectra(built["theta"], built["widths"], built["depth"], built["X"], built["Y"])
    return {
        "group": np.array([MINIMA_GROUPS.index(c["group"]) for c in cases]),
        "widths": built["widths"], "depth": built["depth"],
        "counts": np.stack([c.get("counts", np.array([34, 33, 33])) for c in cases]),
        "alpha": np.array([c.get("alpha", 1.0) for c in cases]), "rank": np.array([c.get("rank", 0) for c in cases]),
        "gauge": np.array([c.get("gauge", 0.0) for c in cases]),
        "direction": np.array([c.get("direction", -1) for c in cases]),
        "eigenvalues": spec["eigenvalues"], "n_params": spec["n_params"],
        "theta": built["theta"], "sv": built["sv"], "sigma_xx": built["sigma_xx"], "sigma_yx": built["sigma_yx"],
        "balance": built["balance"], "grad_norm": built["grad_norm"], "seed": SEED,
    }


# ----------------------------------------------------------------------------------------------
# the shared GD sweep
# ----------------------------------------------------------------------------------------------

MAXLR_PAIRS = {"quick": (((50, 30, 20), 2), ((60, 30, 10), 3), ((40, 40, 20), 2)),
               "full": (((50, 30, 20), 2), ((60, 30, 10), 3), ((40, 40, 20), 2),
                        ((70, 20, 10), 2), ((50, 30, 20), 3))}
MAXLR_RATIOS = {"quick": (0.98, 1.02), "full": (0.9, 0.95, 0.98, 1.02, 1.05, 1.1)}


def gd_config(budget: Budget) -> tuple[int, int]:
    """(steps, record_every) of the shared GD sweep: one static configuration, one compilation."""
    return budget.pick(quick=(800, 20), full=(2000, 20))


@experiment("linear_hessian.gd")
def gd(budget: Budget) -> dict:
    """The shared GD sweep and the spectra of its final iterates (see the module docstring)."""
    runs: list[dict] = []

    def add(group, counts, depth, ratio, **kw):
        eta = ratio * T.critical_step(proportions(counts), depth)
        runs.append(dict(group=group, counts=np.asarray(counts), depth=depth, ratio=ratio, eta=eta,
                         widths=kw.pop("widths", class_widths(depth)), **kw))

    for depth in (2, 3):
        for pm in budget.pick(quick=(0.4, 0.6), full=(0.4, 0.5, 0.6, 0.7)):
            for _ in range(budget.pick(quick=1, full=2)):
                add("after_gd", counts_for(pm), depth, 0.5)
    for counts, depth in MAXLR_PAIRS[budget.name]:
        for ratio in MAXLR_RATIOS[budget.name]:
            add("max_lr", counts, depth, ratio)
    for _ in range(budget.pick(quick=2, full=4)):
        # Glorot init starts sharp (O(1) weights): a smaller step keeps it from diverging
        add("xavier", COUNTS_BASE, 2, 0.2, xavier=True)
        # mixed inputs: Sigma_xx has eigenvalues up to ~4, so the whitened eta_c is not safe
        add("mixed_gd", COUNTS_BASE, 2, 0.2, gaussian=True)
    # far above eta_c: must blow up and be flagged (divergence is data)
    add("diverge", COUNTS_BASE, 2, 30.0)
    # tanh / ReLU, paired design: pair j shares its key (init and input rotation) across pi_max
    for act in (1, 2):
        for pm in NONLIN_PI:
            for j in range(budget.pick(quick=8, full=16)):
                add("nonlinear", counts_for(pm), 2, 0.5, act=act, widths=(F.DMAX, F.DMAX, 3), pair=j)
    n = len(runs)
    keys = jax.random.split(jax.random.key(SEED + 1), n + 16)  # the last 16: one per nonlinear pair
    key_idx = np.array([n + r["pair"] if "pair" in r else i for i, r in enumerate(runs)])
    steps, every = gd_config(budget)
    out = train_sweep(keys[key_idx], np.stack([r["counts"] for r in runs]), [r["widths"] for r in runs],
                      np.array([r["eta"] for r in runs]), init_scale=INIT,
                      xavier=np.array([r.get("xavier", False) for r in runs]),
                      act=np.array([r.get("act", 0) for r in runs]),
                      gaussian=np.array([r.get("gaussian", False) for r in runs]), steps=steps, record_every=every)
    finite = ~out["diverged"]
    eig = np.full((n, F.LMAX * F.DMAX * F.DMAX), np.nan)
    n_params = np.zeros(n, np.int64)
    spec = hessian_spectra(out["theta"][finite], out["widths"][finite], out["depth"][finite], out["X"][finite],
                           out["Y"][finite], act=out["act"][finite])
    eig[finite], n_params[finite] = spec["eigenvalues"], spec["n_params"]
    return {
        "group": np.array([GD_GROUPS.index(r["group"]) for r in runs]), "counts": np.stack([r["counts"] for r in runs]),
        "depth": out["depth"], "widths": out["widths"], "ratio": np.array([r["ratio"] for r in runs]),
        "eta": out["eta"], "act": out["act"], "pair": np.array([r.get("pair", -1) for r in runs]),
        "loss": out["loss"], "class_loss": out["class_loss"], "diverged": out["diverged"],
        "diverged_step": out["diverged_step"], "balance": out["balance"], "theta": out["theta"],
        "sigma_xx": np.einsum("nia,nja->nij", out["X"], out["X"]) / F.N_SAMPLES,
        "eigenvalues": eig, "n_params": n_params, "steps": steps, "record_every": every, "seed": SEED + 1,
    }


# ----------------------------------------------------------------------------------------------
# progressive sharpening (two layers, every step recorded)
# ----------------------------------------------------------------------------------------------

SHARPEN_WIDTHS = (F.DMAX, 4, 3)
SHARPEN_INIT = 1e-3   # small: the origin's saddle is left along the top mode first
SHARPEN_RATIO = 0.2   # eta / eta_c: slow enough that every mode takes tens of steps to learn


@experiment("linear_hessian.sharpening")
def sharpening(budget: Budget) -> dict:
    r"""Two-layer GD from an aligned and from a random small init, recorded at every step.

    Records the loss, the per-class losses, the sharpness by HVP-Lanczos with a full Krylov space
    (:math:`P` steps: exact to round-off) and the mode strengths :math:`a_k(t)=u_k^\top W(t)v_k`.
    """
    steps = budget.pick(quick=200, full=300)
    X, Y = S.class_data(jax.random.key(SEED + 2), np.array(COUNTS_BASE), F.DMAX)
    eta = SHARPEN_RATIO * T.critical_step(PI_BASE, 2)
    P = S.n_params(SHARPEN_WIDTHS)
    starts = {"aligned": S.aligned_init(X, Y, SHARPEN_WIDTHS, SHARPEN_INIT),
              "random": S.init_params(jax.random.key(SEED + 3), SHARPEN_WIDTHS, SHARPEN_INIT)}
    out: dict = {"eta": float(eta), "steps": steps, "seed": SEED + 2}
    for name, theta0 in starts.items():
        run = S.train_gd(jax.random.key(SEED + 4), theta0, X, Y, SHARPEN_WIDTHS, eta, steps=steps, record_every=1,
                         lanczos_iter=P)
        out[f"{name}_sharpness"] = np.asarray(run["sharpness"])
        out[f"{name}_loss"] = np.asarray(run["loss"])
        out[f"{name}_class_loss"] = np.asarray(run["class_loss"])
        out[f"{name}_strengths"] = S.mode_strengths(np.asarray(run["thetas"]), X, Y, SHARPEN_WIDTHS)
        out[f"{name}_diverged"] = bool(run["diverged"])
    out["singular_values"] = np.linalg.svd(np.asarray(Y @ X.T) / X.shape[1], compute_uv=False)
    return out
