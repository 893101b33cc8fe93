r"""The simulations of the Muon topic: named, cached, budgeted experiments.

Claims and ``figures/muon.py`` both read these; figures never simulate. All runs are :func:`sims.muon.train` (Muon with
decoupled decay on :math:`\tfrac12\|W - Y\|_F^2`) or :func:`sims.muon.factorization` (Muon and GD on a two-factor
product, the setting of Rhee, Simon & Karkada's notebooks).
"""
from __future__ import annotations

import jax
import numpy as np

import sims.muon as sm
from paper_checks import Budget, experiment

SEED = 20261202

# ----------------------------------------------------------------------------- aligned targets (every mode outside)
ALIGNED_SHAPE = (16, 8)
ALIGNED_S = np.linspace(10.0, 2.5, 8)   # lambda s >= 1.25 at every lambda below: each mode outside the ball
BALL_LAMS = np.array([0.5, 1.0, 2.0])
BALL_ETA_LAM = 0.04                    # eta lambda of the ball runs
NS_LAM, NS_ETA, NS_BETA = 2.0, 0.02, 0.9
NS_STEPS = (1, 2, 3, 5, 8)

# ----------------------------------------------------------------------------- the generic noisy runs
GEN_SHAPE = (32, 16)
GEN_LAM, GEN_ETA, GEN_BETA, GEN_NOISE = 2.0, 0.02, 0.9, 0.5


def _orthonormal(key, p: int, q: int) -> np.ndarray:
    """A (p, q) matrix with orthonormal columns (QR of a Gaussian matrix)."""
    q_, r = np.linalg.qr(np.asarray(jax.random.normal(key, (p, q))))
    return q_ * np.sign(np.diag(r))


def aligned_target(s=ALIGNED_S, shape=ALIGNED_SHAPE, seed: int = SEED) -> np.ndarray:
    r""":math:`Y = U\mathrm{diag}(s)V^\top` with random orthonormal :math:`U` (p, r), :math:`V` (q, r)."""
    ku, kv = jax.random.split(jax.random.key(seed))
    r = len(s)
    return _orthonormal(ku, shape[0], r) @ np.diag(s) @ _orthonormal(kv, shape[1], r).T


def generic_problem(seed: int = SEED + 1) -> tuple[np.ndarray, np.ndarray, jax.Array]:
    r""":math:`Y` with N(0, 4) entries (:math:`\lambda\|Y\|_{op} \approx 33`), :math:`W_0 = 3\,N(0,1)/\sqrt{32}`, the noise key."""
    ky, kw, kn = jax.random.split(jax.random.key(seed), 3)
    y = 2.0 * np.asarray(jax.random.normal(ky, GEN_SHAPE))
    w0 = 3.0 * np.asarray(jax.random.normal(kw, GEN_SHAPE)) / np.sqrt(GEN_SHAPE[0])
    return y, w0, kn


@experiment("muon.ball")
def ball(budget: Budget) -> dict:
    """Exact-polar Muon with decay: aligned runs from 0 (every mode outside the ball, lambda = 0.5, 1, 2, momentum
    0.9), and the generic noisy run (random Y and start, momentum 0.9, gradient noise 0.5) with the exact polar
    factor and with NS5 on the same noise."""
    n_al = budget.pick(quick=300, full=600)
    y = aligned_target()
    al = sm.train(BALL_ETA_LAM / BALL_LAMS, BALL_LAMS, y, np.zeros_like(y), momentum=0.9, n_steps=n_al)
    n_gen = budget.pick(quick=1500, full=4000)
    yg, w0, key = generic_problem()
    runs = {m: sm.train(GEN_ETA, GEN_LAM, yg, w0, method=m, ns_steps=5, momentum=GEN_BETA, noise=GEN_NOISE, key=key,
                        n_steps=n_gen) for m in ("polar", "ns")}
    return {"aligned_sv": al["sv"], "aligned_T": n_al, "frob_target": float(np.linalg.norm(y)),
            "op_target": float(np.linalg.svd(y, compute_uv=False)[0]),
            **{f"gen_op_{m}": r["sv"][0, :, 0] for m, r in runs.items()},
            **{f"gen_frob_{m}": np.linalg.norm(r["sv"][0], axis=1) for m, r in runs.items()},
            "gen_T": n_gen, "gen_op_target": float(np.linalg.svd(yg, compute_uv=False)[0]),
            "gen_frob_target": float(np.linalg.norm(yg))}


@experiment("muon.ns")
def ns(budget: Budget) -> dict:
    """Aligned runs from 0 with the k-step Newton-Schulz iteration in place of the polar factor, k = 1, 2, 3, 5, 8
    (lambda = 2, eta = 0.02, momentum 0.9): where the top singular value settles."""
    n = budget.pick(quick=800, full=1500)
    y = aligned_target()
    ks = np.array(NS_STEPS)
    out = sm.train(np.full(ks.size, NS_ETA), NS_LAM, y, np.zeros_like(y), method="ns", ns_steps=ks,
                   momentum=NS_BETA, n_steps=n)
    return {"ks": ks, "sv": out["sv"], "T": n}


# ----------------------------------------------------------------------------- the window of eta lambda
WINDOW_LAM = 1.0
WINDOW_T = 1000
WINDOW_FACTOR_T = 10   # the excess factor is read over the first 10 steps (before round-off takes over)


def window_grid(budget: Budget) -> np.ndarray:
    """eta lambda values: both sides of 1 (the invariance edge) and of 2 (the divergence edge), away from 1 itself
    (where the excess vanishes in one step and a factor cannot be read)."""
    n = budget.pick(quick=4, full=8)
    return np.concatenate([np.linspace(0.1, 0.75, n), np.linspace(1.25, 1.9, n), [2.5, 3.0, 3.5]])


@experiment("muon.window")
def window(budget: Budget) -> dict:
    """Aligned exact-polar runs from 0 without momentum, every mode far outside the ball (lambda s = 1000), over
    eta lambda from 0.1 to 3.5: the largest lambda |W_t|_op and the excess after 10 steps."""
    el = window_grid(budget)
    y = aligned_target(s=np.full(4, 1000.0 / WINDOW_LAM), shape=(8, 4), seed=SEED + 2)
    out = sm.train(el / WINDOW_LAM, WINDOW_LAM, y, np.zeros_like(y), n_steps=WINDOW_T)
    op = out["sv"][:, :, 0] * WINDOW_LAM
    ok = ~out["diverged"]
    sup = np.where(ok, np.max(np.where(np.isfinite(op), op, -np.inf), axis=1), np.nan)
    return {"eta_lam": el, "sup": sup, "op_path": op, "diverged": out["diverged"],
            "diverged_step": out["diverged_step"], "excess_t": op[:, WINDOW_FACTOR_T - 1] - 1.0}


# ----------------------------------------------------------------------------- mode learning
MODES_ETA = 5e-3
MODES_ALPHA = 5e-3
MODES_FRAC = 0.9
SINGLE_S = np.array([5.0, 4.0, 3.0, 2.0, 1.5, 1.0, 0.8, 0.6, 0.4, 0.2])
SINGLE_ETA = 0.0123    # s / eta never within 1e-6 of a half-integer: no arrival on a rounding boundary


def factor_target(n: int) -> np.ndarray:
    """The notebooks' target spectrum 10/k, k = 1..n."""
    return 10.0 / np.arange(1, n + 1)


def first_crossing(path: np.ndarray, level: np.ndarray) -> np.ndarray:
    """First step (counted from 1) at which each column of ``path`` reaches ``level``; -1 if never."""
    hit = path >= level
    return np.where(hit.any(axis=0), hit.argmax(axis=0) + 1, -1)


@experiment("muon.modes")
def modes(budget: Budget) -> dict:
    """Muon on W2 W1 -> diag(10/k), k = 1..32, from small Gaussian starts (alpha = 5e-3, eta = 5e-3, 1000 steps: the
    notebooks' setting; 8 starts at full, 3 at quick), and single-matrix Muon from 0 on 20x10 with the spectrum
    5 ... 0.2."""
    n = 32
    runs = budget.pick(quick=3, full=8)
    steps = 1000
    k1, k2 = jax.random.split(jax.random.key(SEED + 3))
    w1 = MODES_ALPHA * np.asarray(jax.random.normal(k1, (runs, n, n)))
    w2 = MODES_ALPHA * np.asarray(jax.random.normal(k2, (runs, n, n)))
    s = factor_target(n)
    fac = sm.factorization(MODES_ETA, s, w1, w2, n_steps=steps)
    y = aligned_target(s=SINGLE_S, shape=(20, 10), seed=SEED + 4)
    single = sm.train(SINGLE_ETA, 0.0, y, np.zeros_like(y), n_steps=int(SINGLE_S.max() / SINGLE_ETA) + 60)
    sv = single["sv"][0]
    arrived = np.abs(sv - SINGLE_S) <= SINGLE_ETA / 2
    single_arr = np.where(arrived.any(axis=0), arrived.argmax(axis=0) + 1, -1)
    arrival = np.stack([first_crossing(m, MODES_FRAC * s) for m in fac["modes"]])
    return {"s": s, "modes": fac["modes"][0], "arrival": arrival, "n": n, "T": steps, "single_sv": sv,
            "single_arrival": single_arr, "single_final_gap": float(np.max(np.abs(sv[-1] - SINGLE_S)))}
