r"""The topic's simulations as named, cached experiments (claims and figures both read them).

* :func:`minima` -- constructed points (balanced minima of random shapes and of class data, gauged
  minima near and far from balance, minima with mixed inputs, the origin) and their exact Hessian
  spectra by autodiff;
* :func:`gd` -- one shared GD sweep (after-GD law, max-LR law, Glorot init, mixed inputs,
  tanh/ReLU, one deliberately diverging run) with the Hessian spectra of the final iterates;
* :func:`sharpening` -- two-layer GD from an aligned and from a random small init with the
  sharpness (HVP-Lanczos) and the mode strengths recorded at every step.

Grids are built here from the budget; the simulators are in :mod:`sims.linear_hessian.spectrum`,
:mod:`sims.linear_hessian.train` and :mod:`sims.linear_hessian`. Every array is keyed by case;
string labels are stored as integer codes (``GROUPS`` tuples below).
"""
from __future__ import annotations

import jax
import numpy as np

from paper_checks._experiment import experiment
from paper_checks._registry import Budget
from sims import linear_hessian as S
from sims.linear_hessian import frame as F
from sims.linear_hessian import laws as LW
from sims.linear_hessian.frame import cases as records
from sims.linear_hessian.spectrum import constructed_minima, hessian_spectra
from sims.linear_hessian.train import train_sweep
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


PLAIN_DEPTHS = (2, 4)  # one "shape" case per depth rebuilt by the plain constructor (one compilation each)


@experiment("linear_hessian.plain_minima")
def plain_minima(budget: Budget) -> dict:
    r"""Balanced minima built by the plain (unframed) constructors, on the shapes of :func:`minima`'s random cases.

    For the first random-shape case of each depth in :data:`PLAIN_DEPTHS`: its widths, input scale
    :math:`\alpha` and label rank, fresh whitened data from :func:`sims.linear_hessian.whitened_data`
    (:math:`n=4d_0`) and the balanced minimum from :func:`sims.linear_hessian.balanced_minimum` (Haar hidden
    frames). Per case ``k``: ``theta_k``, ``widths_k``, the data's moments ``sigma_xx_k``, ``sigma_yx_k`` and the
    requested ``alpha``. A construction independent of the frame's batched one.
    """
    m = minima(budget)
    shape = np.flatnonzero(m["group"] == MINIMA_GROUPS.index("shape"))
    keys = jax.random.split(jax.random.key(SEED + 30), 2 * len(PLAIN_DEPTHS))
    out: dict = {"alpha": [], "seed": SEED + 30}
    for k, depth in enumerate(PLAIN_DEPTHS):
        i = shape[m["depth"][shape] == depth][0]
        w = tuple(int(x) for x in m["widths"][i][: depth + 1])
        alpha, n = float(m["alpha"][i]), 4 * w[0]
        X, Y = S.whitened_data(keys[2 * k], w[0], w[-1], n, alpha=alpha, rank=int(m["rank"][i]))
        out[f"theta_{k}"] = np.asarray(S.balanced_minimum(keys[2 * k + 1], X, Y, w))
        out[f"widths_{k}"] = np.array(w)
        out[f"sigma_xx_{k}"], out[f"sigma_yx_{k}"] = np.asarray(X @ X.T) / n, np.asarray(Y @ X.T) / n
        out["alpha"].append(alpha)
    out["alpha"] = np.array(out["alpha"])
    return out


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


# ----------------------------------------------------------------------------------------------
# laws beyond whitened full-rank inputs: orthogonal class means, general alpha, projected inputs
# ----------------------------------------------------------------------------------------------

LAW_GROUPS = ("means", "alpha", "projected", "projected_class")
MEANS_COUNTS = ((50, 30, 20), (40, 35, 25), (70, 20, 10))


def _frame_case(theta: np.ndarray, X: np.ndarray, Y: np.ndarray, widths) -> tuple[np.ndarray, ...]:
    """A plain net and its data embedded in the frame (zero-padded rows)."""
    Xp, Yp = np.zeros((F.DMAX, F.N_SAMPLES)), np.zeros((F.DMAX, F.N_SAMPLES))
    Xp[: X.shape[0]], Yp[: Y.shape[0]] = X, Y
    return F.embed(theta, widths), Xp, Yp, F.frame_widths(widths)


@experiment("linear_hessian.laws")
def laws(budget: Budget) -> dict:
    r"""Balanced minimum-norm minima of non-whitened or rank-deficient data and their autodiff spectra.

    ``means``: inputs at orthogonal class means of norm :math:`r` (:func:`sims.linear_hessian.laws.class_means_data`);
    ``alpha``: whitened inputs of scale :math:`\alpha` with one-hot labels; ``projected`` /
    ``projected_class``: inputs whitened on an :math:`m<d_0` dimensional subspace with generic
    or one-hot labels. Each net is built in NumPy, embedded in the frame and its Hessian taken by
    autodiff in the shared frame sweep.
    """
    rng = np.random.default_rng(SEED + 10)
    # one key per draw from a counter (unstacking a split array would compile a 512-way program)
    keys = (jax.random.key(SEED + 1000 + i) for i in range(10 ** 6))
    cases, thetas, Xs, Ys, fws = [], [], [], [], []

    def add(group, widths, X, Y, **info):
        theta = LW.min_norm_balanced_minimum(next(keys), X, Y, widths)
        t, Xp, Yp, fw = _frame_case(theta, X, Y, widths)
        thetas.append(t), Xs.append(Xp), Ys.append(Yp), fws.append(fw)
        cases.append(dict(group=group, widths=widths, **info))

    radii = budget.pick(quick=(0.5, 3.0), full=(0.5, 2.0, 3.0))
    for depth in range(1, budget.pick(quick=4, full=5) + 1):
        for j, radius in enumerate(radii):
            counts = np.array(MEANS_COUNTS[(depth + j) % len(MEANS_COUNTS)])
            d0 = 3 + 2 * ((depth + j) % 2)            # d0 = K (full rank) and d0 > K (rank-deficient X)
            w = (d0,) + tuple(int(x) for x in rng.integers(3, F.DMAX + 1, depth - 1)) + (3,)
            X, Y = LW.class_means_data(next(keys), counts, d0, radius)
            add("means", w, X, Y, counts=counts, radius=radius)
    alphas = budget.pick(quick=(0.25, 4.0), full=(0.25, 2.0, 4.0, 9.0))
    for depth in range(1, budget.pick(quick=4, full=5) + 1):
        for j, alpha in enumerate(alphas):
            counts = np.array(MEANS_COUNTS[(depth + j + 1) % len(MEANS_COUNTS)])
            w = class_widths(depth)
            X, Y = LW.projected_data(next(keys), w[0], F.N_SAMPLES, w[0], alpha=alpha, counts=counts)
            add("alpha", w, X, Y, counts=counts, alpha=alpha)
    for depth in range(1, budget.pick(quick=4, full=5) + 1):
        for _ in range(budget.pick(quick=2, full=4)):
            m = int(rng.integers(2, F.DMAX))           # 2 .. 5 < d0 = 6
            dL = int(rng.integers(1, F.DMAX + 1))
            r = int(rng.integers(1, min(m, dL) + 1))
            w = (F.DMAX,) + tuple(int(x) for x in rng.integers(r, F.DMAX + 1, depth - 1)) + (dL,)
            alpha = float(rng.uniform(0.5, 2.0))
            while True:
                X, Y = LW.projected_data(next(keys), F.DMAX, F.N_SAMPLES, m, alpha=alpha, dL=dL, rank=r)
                sv = np.linalg.svd(Y @ X.T / F.N_SAMPLES, compute_uv=False)
                # redraw a nearly rank-deficient Sigma_yx: a 1e-5 singular value would put eigenvalues at the
                # 1e-8 rank threshold (the spectrum would still agree, the rank count would not be meaningful)
                if sv[r - 1] > 1e-2 * sv[0]:
                    break
            add("projected", w, X, Y, alpha=alpha, input_rank=m, rank=r)
        m = 4
        X, Y = LW.projected_data(next(keys), F.DMAX, F.N_SAMPLES, m, alpha=1.0, counts=np.array(COUNTS_BASE))
        add("projected_class", class_widths(depth), X, Y, counts=np.array(COUNTS_BASE), input_rank=m)
    depth = np.array([len(c["widths"]) - 1 for c in cases], np.int32)
    spec = hessian_spectra(np.stack(thetas), np.stack(fws), depth, np.stack(Xs), np.stack(Ys))
    Xs, Ys = np.stack(Xs), np.stack(Ys)
    return {
        "group": np.array([LAW_GROUPS.index(c["group"]) for c in cases]), "widths": np.stack(fws), "depth": depth,
        "counts": np.stack([c.get("counts", np.zeros(3, int)) for c in cases]),
        "radius": np.array([c.get("radius", np.nan) for c in cases]),
        "alpha": np.array([c.get("alpha", np.nan) for c in cases]),
        "input_rank": np.array([c.get("input_rank", 0) for c in cases]),
        "sigma_xx": np.einsum("nia,nja->nij", Xs, Xs) / F.N_SAMPLES,
        "sigma_yx": np.einsum("nia,nja->nij", Ys, Xs) / F.N_SAMPLES,
        "eigenvalues": spec["eigenvalues"], "n_params": spec["n_params"], "seed": SEED + 10,
    }


# ----------------------------------------------------------------------------------------------
# Lanczos at scale: top eigenvalues of a large net, matrix-free
# ----------------------------------------------------------------------------------------------

SCALE_TOP_S = (3.0, 2.0, 1.5)   # leading singular values of W*, well separated; the rest uniform in [0.1, 1]
SCALE_K = 3                     # top distinct eigenvalues compared (kappa_11, kappa_12, kappa_13: gaps >= 13 %)


def scale_widths(budget: Budget) -> tuple[int, ...]:
    """Widths of the Lanczos-at-scale net: P = 1e5 at full, 4e3 at quick."""
    return budget.pick(quick=(40, 40, 40, 20), full=(200, 200, 200, 100))


@experiment("linear_hessian.lanczos_scale")
def lanczos_scale(budget: Budget) -> dict:
    r"""Top Hessian eigenvalues of a balanced deep linear net at a global minimum by HVP-Lanczos, timed.

    Whitened inputs (:math:`XX^\top=nI`), labels :math:`Y=W^*X` with :math:`W^*=U\,\mathrm{diag}(s)V^\top`
    (leading :math:`s` = :data:`SCALE_TOP_S`, the rest uniform in [0.1, 1]); the balanced
    minimum from :func:`sims.linear_hessian.balanced_minimum`; ``num_iter`` Lanczos steps
    (:func:`sims.linear_hessian.top_eigenvalues`, compiled once, then timed on a second call).
    """
    import time

    widths = scale_widths(budget)
    d0, dL = widths[0], widths[-1]
    n = 2 * d0
    rng = np.random.default_rng(SEED + 20)
    r = min(d0, dL)
    s = np.concatenate([SCALE_TOP_S, rng.uniform(0.1, 1.0, r - len(SCALE_TOP_S))])
    U = np.linalg.qr(rng.normal(size=(dL, dL)))[0][:, :r]
    Vm = np.linalg.qr(rng.normal(size=(d0, d0)))[0][:, :r]
    X = np.sqrt(n) * np.linalg.qr(rng.normal(size=(n, d0)))[0].T
    Y = (U * s) @ Vm.T @ X
    # the balanced minimum in NumPy (the jitted constructor would add a compilation per shape)
    theta = jax.numpy.asarray(LW.min_norm_balanced_minimum(jax.random.key(SEED + 20), X, Y, widths))
    num_iter = budget.pick(quick=40, full=60)
    Xj, Yj = jax.numpy.asarray(X), jax.numpy.asarray(Y)
    run = jax.jit(lambda t, k: S.top_eigenvalues(k, t, Xj, Yj, widths, k=2 * SCALE_K + 2, num_iter=num_iter))
    key = jax.random.key(SEED + 21)
    t0 = time.perf_counter()
    jax.block_until_ready(run(theta, key))
    compile_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    top = np.asarray(jax.block_until_ready(run(theta, key)))
    run_s = time.perf_counter() - t0
    return {"widths": np.array(widths), "n_params": S.n_params(widths), "singular_values": s, "ritz": top,
            "num_iter": num_iter, "run_s": run_s, "compile_s": compile_s, "seed": SEED + 20}


# ----------------------------------------------------------------------------------------------
# the sharpening staircase: random tiny init, every step's spectrum
# ----------------------------------------------------------------------------------------------

STAIR_COUNTS = (60, 30, 10)   # well separated class sizes: the modes are learned at well separated times
STAIR_INIT = 1e-12            # tiny random init: long plateaus between the stages
STAIR_RATIO = 0.5             # eta / eta_c


@experiment("linear_hessian.staircase")
def staircase(budget: Budget) -> dict:
    r"""Two-layer GD from a random tiny init on class data; the whole autodiff spectrum at every step.

    Same static configuration as :func:`sharpening` (widths, steps, one record per step) so the GD
    program compiles once; the top Hessian eigenvalues come from dense autodiff Hessians of the
    recorded iterates (:math:`P=36`), the mode strengths from :func:`sims.linear_hessian.mode_strengths`.
    """
    steps = budget.pick(quick=200, full=300)
    counts = np.array(STAIR_COUNTS)
    X, Y = S.class_data(jax.random.key(SEED + 30), counts, F.DMAX)
    eta = STAIR_RATIO * T.critical_step(proportions(counts), 2)
    theta0 = S.init_params(jax.random.key(SEED + 31), SHARPEN_WIDTHS, STAIR_INIT)
    run = S.train_gd(jax.random.key(SEED + 32), theta0, X, Y, SHARPEN_WIDTHS, eta, steps=steps, record_every=1,
                     lanczos_iter=S.n_params(SHARPEN_WIDTHS))
    thetas = np.asarray(run["thetas"])
    eig = two_layer_hessians(thetas, X, Y)[:, ::-1]
    return {"eta": float(eta), "steps": steps, "top": eig[:, :8], "lanczos": np.asarray(run["sharpness"]),
            "loss": np.asarray(run["loss"]), "strengths": S.mode_strengths(thetas, X, Y, SHARPEN_WIDTHS),
            "diverged": bool(run["diverged"]),
            "singular_values": np.linalg.svd(np.asarray(Y @ X.T) / X.shape[1], compute_uv=False)[:3],
            "seed": SEED + 30}


HESS_BATCH = 64   # fixed batch: the staircase and the gauge test share one compiled Hessian program


@jax.jit
def _batched_hessian(thetas, X, Y):
    return jax.vmap(lambda t: S.dense_hessian(t, X, Y, SHARPEN_WIDTHS))(thetas)


def two_layer_hessians(thetas: np.ndarray, X, Y) -> np.ndarray:
    """Eigenvalues (ascending) of the autodiff Hessians of the ``SHARPEN_WIDTHS`` net at every row of ``thetas``.

    Batches of :data:`HESS_BATCH` (the last one padded), so every call runs the same compiled program; the
    eigenvalues by LAPACK (JAX's batched ``eigvalsh`` of small matrices is slow on CPU).
    """
    n = thetas.shape[0]
    pad = (-n) % HESS_BATCH
    th = np.concatenate([thetas, np.zeros((pad, thetas.shape[1]))]) if pad else thetas
    X, Y = jax.numpy.asarray(X), jax.numpy.asarray(Y)
    out = [np.asarray(_batched_hessian(jax.numpy.asarray(th[i:i + HESS_BATCH]), X, Y))
           for i in range(0, th.shape[0], HESS_BATCH)]
    return np.linalg.eigvalsh(np.concatenate(out)[:n])


# ----------------------------------------------------------------------------------------------
# balanced minima are flattest: second-order test along the gauge directions
# ----------------------------------------------------------------------------------------------

GAUGE_H = 1e-3   # finite-difference step in the gauge algebra


def gauge_cases(budget: Budget) -> tuple[tuple[int, ...], ...]:
    """Widths of the second-order gauge test (hidden layers carry the gauge)."""
    return budget.pick(quick=(SHARPEN_WIDTHS,), full=(SHARPEN_WIDTHS, (6, 3, 3), (4, 3, 3, 3)))


def gauge_stencil(dim: int, h: float) -> np.ndarray:
    r"""Points of the central-difference gradient and Hessian in :math:`\mathbb R^{dim}`: 0, :math:`\pm he_i`, :math:`\pm h(e_i\pm e_j)`."""
    I = np.eye(dim)
    pts = [np.zeros(dim)] + [s * h * I[i] for i in range(dim) for s in (1, -1)]
    for i in range(dim):
        for j in range(i + 1, dim):
            pts += [h * (I[i] + I[j]), h * (I[i] - I[j]), -h * (I[i] - I[j]), -h * (I[i] + I[j])]
    return np.array(pts)


@experiment("linear_hessian.gauge_local")
def gauge_local(budget: Budget) -> dict:
    r"""lambda_max on the gauge orbit around a balanced minimum, on a finite-difference stencil.

    The orbit: :math:`W_l\to G_lW_lG_{l-1}^{-1}`, :math:`G_l=\exp(E_l)` on hidden layers
    (:math:`G_0=G_L=I`), coordinates :math:`E=(E_1,\dots,E_{L-1})` in :math:`\oplus_l\mathfrak{gl}(d_l)`.
    Every stencil point's Hessian is an autodiff Hessian; its top eigenvalue is recorded.
    """
    from scipy.linalg import expm

    out: dict = {"seed": SEED + 40, "h": GAUGE_H}
    for c, widths in enumerate(gauge_cases(budget)):
        X, Y = LW.projected_data(jax.random.key(SEED + 40 + c), widths[0], F.N_SAMPLES, widths[0],
                                 counts=np.array(COUNTS_BASE))
        theta = LW.min_norm_balanced_minimum(jax.random.key(SEED + 50 + c), X, Y, widths)
        shapes = S.param_shapes(widths)
        offs = np.cumsum([0] + [a * b for a, b in shapes])
        mats = [theta[offs[l]:offs[l + 1]].reshape(shapes[l]) for l in range(len(shapes))]
        hidden = widths[1:-1]
        dim = sum(d * d for d in hidden)
        pts = gauge_stencil(dim, GAUGE_H)
        thetas = []
        for e in pts:
            ms, o = [m.copy() for m in mats], 0
            for l, d in enumerate(hidden):
                G = expm(e[o:o + d * d].reshape(d, d))
                o += d * d
                ms[l], ms[l + 1] = G @ ms[l], np.linalg.solve(G.T, ms[l + 1].T).T
            thetas.append(np.concatenate([m.ravel() for m in ms]))
        thetas = np.array(thetas)
        if widths == SHARPEN_WIDTHS:
            out[f"lam_{c}"] = two_layer_hessians(thetas, X, Y)[:, -1]
        else:
            hess = jax.jit(jax.vmap(lambda t: S.dense_hessian(t, X, Y, widths)))(jax.numpy.asarray(thetas))
            out[f"lam_{c}"] = np.linalg.eigvalsh(np.asarray(hess))[:, -1]
        out[f"widths_{c}"] = np.array(widths)
        out[f"dim_{c}"] = dim
    out["n_cases"] = len(gauge_cases(budget))
    return out


# ----------------------------------------------------------------------------------------------
# the class law's trend under the linear relaxations (paired over pi_max)
# ----------------------------------------------------------------------------------------------

TREND_RELAXATIONS = ("xavier", "mixed")  # Glorot initialisation; non-whitened (Gaussian-mixed) inputs
TREND_PI = (0.34, 0.62, 0.9)  # a wider span than NONLIN_PI: the trend is weaker than the whitened law's here


@experiment("linear_hessian.relaxed_trend")
def relaxed_trend(budget: Budget) -> dict:
    """Two-layer linear nets trained by GD under each linear relaxation (Glorot init; non-whitened inputs) at
    pi_max in ``TREND_PI``, paired design: pair j shares its key (init and input rotation) across pi_max, as the
    nonlinear runs of :func:`gd`; the step is 0.2 eta_c of the whitened law (as there), the final spectra by autodiff."""
    runs = []
    for relax in TREND_RELAXATIONS:
        for pm in TREND_PI:
            for j in range(budget.pick(quick=6, full=12)):
                counts = counts_for(pm)
                runs.append(dict(relax=relax, counts=counts, pair=j,
                                 eta=0.2 * T.critical_step(proportions(counts), 2)))
    n = len(runs)
    n_pairs = max(r["pair"] for r in runs) + 1
    keys = jax.random.split(jax.random.key(SEED + 5), 2 * n_pairs)
    key_idx = np.array([TREND_RELAXATIONS.index(r["relax"]) * n_pairs + r["pair"] for r in runs])
    steps, every = gd_config(budget)  # the shared sweep's static configuration: its compiled kernel
    out = train_sweep(keys[key_idx], np.stack([r["counts"] for r in runs]), [class_widths(2)] * n,
                      np.array([r["eta"] for r in runs]), init_scale=INIT,
                      xavier=np.array([r["relax"] == "xavier" for r in runs]), act=np.zeros(n, int),
                      gaussian=np.array([r["relax"] == "mixed" for r in runs]), steps=steps, record_every=every)
    finite = ~out["diverged"]
    eig = np.full((n, F.LMAX * F.DMAX * F.DMAX), np.nan)
    n_params = np.zeros(n, np.int64)
    spec = hessian_spectra(out["theta"][finite], out["widths"][finite], out["depth"][finite], out["X"][finite],
                           out["Y"][finite], act=out["act"][finite])
    eig[finite], n_params[finite] = spec["eigenvalues"], spec["n_params"]
    spectra = {"widths": out["widths"], "depth": out["depth"], "eigenvalues": eig, "n_params": n_params}
    top = np.array([c["eigenvalues"][-1] if c["eigenvalues"].size else np.nan for c in records(spectra)])
    return {"relax": np.array([TREND_RELAXATIONS.index(r["relax"]) for r in runs]),
            "pi_max": proportions(np.stack([r["counts"] for r in runs])).max(axis=1),
            "pair": np.array([r["pair"] for r in runs]), "top": top, "loss": out["loss"][:, -1],
            "diverged": out["diverged"], "seed": SEED + 5}
