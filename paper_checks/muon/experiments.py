r"""The simulations of the Muon topic: named, cached, budgeted experiments.

Claims and ``figures/muon.py`` both read these; figures never simulate. All runs are :func:`sims.muon.train` (Muon with
decoupled decay on :math:`\tfrac12\|W - Y\|_F^2`) or :func:`sims.muon.factorization` (Muon and GD on a two-factor
product, the setting of Rhee, Simon & Karkada's notebooks).
"""
from __future__ import annotations

import jax
import numpy as np

import sims.muon as sm
import theory.muon as th
from paper_checks import Budget, experiment

SEED = 20261202

#: every single-matrix run is 16x8 and takes the same number of steps, and sims.muon.train pads its grid to 16 runs,
#: so the topic's runs share one compiled program per method (compilation, not the runs, is most of their cost)
SHAPE = (16, 8)


def train_steps(budget: Budget) -> int:
    """Steps of every single-matrix run."""
    return budget.pick(quick=600, full=2000)


# ----------------------------------------------------------------------------- aligned targets (every mode outside)
ALIGNED_SHAPE = SHAPE
ALIGNED_S = np.linspace(10.0, 2.5, 8)   # lambda s >= 1.25 at every lambda below: each mode outside the ball
BALL_LAMS = np.array([0.5, 1.0, 2.0])
BALL_ETA_LAM = 0.04                    # eta lambda of the ball runs
NS_LAM, NS_ETA, NS_BETA = 2.0, 0.02, 0.9
NS_STEPS = (1, 2, 3, 5, 8)

# ----------------------------------------------------------------------------- the generic noisy runs
GEN_SHAPE = SHAPE
GEN_LAM, GEN_ETA, GEN_BETA, GEN_NOISE = 2.0, 0.02, 0.9, 0.5


def normal(key, shape) -> np.ndarray:
    """Standard normal entries from a typed key (:func:`sims.muon.normal_draws`: one compiled draw for every shape)."""
    return sm.normal_draws(key, tuple(shape))


def _orthonormal(key, p: int, q: int) -> np.ndarray:
    """A (p, q) matrix with orthonormal columns (QR of a Gaussian matrix)."""
    q_, r = np.linalg.qr(normal(key, (p, q)))
    return q_ * np.sign(np.diag(r))


def aligned_target(s=ALIGNED_S, shape=ALIGNED_SHAPE, seed: int = SEED) -> np.ndarray:
    r""":math:`Y = U\mathrm{diag}(s)V^\top` with random orthonormal :math:`U` (p, r), :math:`V` (q, r)."""
    ku, kv = jax.random.split(jax.random.key(seed))
    r = len(s)
    return _orthonormal(ku, shape[0], r) @ np.diag(s) @ _orthonormal(kv, shape[1], r).T


def generic_problem(seed: int = SEED + 1) -> tuple[np.ndarray, np.ndarray, jax.Array]:
    r""":math:`Y` with N(0, 4) entries (:math:`\lambda\|Y\|_{op} \approx 27`), :math:`W_0 = 3\,N(0,1)/\sqrt{16}`, the noise key."""
    ky, kw, kn = jax.random.split(jax.random.key(seed), 3)
    y = 2.0 * normal(ky, GEN_SHAPE)
    w0 = 3.0 * normal(kw, GEN_SHAPE) / np.sqrt(GEN_SHAPE[0])
    return y, w0, kn


def _window_target() -> np.ndarray:
    return aligned_target(s=np.full(SHAPE[1], 1000.0 / WINDOW_LAM), seed=SEED + 2)


def _single_target() -> np.ndarray:
    return aligned_target(s=SINGLE_S, seed=SEED + 4)


@experiment("muon.single_matrix")
def single_matrix(budget: Budget) -> dict:
    """Every single-matrix run of the topic, in two calls (one per method, each one compiled program):

    exact polar -- the aligned ball runs (lambda = 0.5, 1, 2, eta lambda = 0.04, momentum 0.9, from 0), the generic
    noisy run (random Y and start, lambda = 2, eta = 0.02, momentum 0.9, noise 0.5), the window runs (eta lambda from
    0.1 to 5, lambda s = 1000, no momentum, from 0) and the arrival run (no decay, no momentum, eta = 0.0123, from 0);
    Newton-Schulz -- the aligned runs at k = 1, 2, 3, 5, 8 (lambda = 2, eta = 0.02, momentum 0.9) and the generic
    noisy run at k = 5 on the same noise as its exact-polar twin."""
    n = train_steps(budget)
    y_al, (y_gen, w0_gen, key) = aligned_target(), generic_problem()
    zero = np.zeros(SHAPE)
    el = window_grid(budget)
    nb, nw = BALL_LAMS.size, el.size
    runs = [  # (eta, lam, momentum, noise, target, w0)
        *[(BALL_ETA_LAM / w, w, 0.9, 0.0, y_al, zero) for w in BALL_LAMS],
        (GEN_ETA, GEN_LAM, GEN_BETA, GEN_NOISE, y_gen, w0_gen),
        *[(e / WINDOW_LAM, WINDOW_LAM, 0.0, 0.0, _window_target(), zero) for e in el],
        (SINGLE_ETA, 0.0, 0.0, 0.0, _single_target(), zero),
    ]
    cols = list(zip(*runs))
    pol = sm.train(np.array(cols[0]), np.array(cols[1]), np.stack(cols[4]), np.stack(cols[5]), method="polar",
                   momentum=np.array(cols[2]), noise=np.array(cols[3]), key=key, n_steps=n)
    ks = np.array(NS_STEPS + (5,))
    nk = len(NS_STEPS)
    ns_run = sm.train(NS_ETA, NS_LAM, np.stack([y_al] * nk + [y_gen]), np.stack([zero] * nk + [w0_gen]), method="ns",
                      ns_steps=ks, momentum=NS_BETA, noise=np.r_[np.zeros(nk), GEN_NOISE], key=key, n_steps=n)
    i_gen, i_win, i_single = nb, nb + 1, nb + 1 + nw
    return {"T": n, "aligned_sv": pol["sv"][:nb],
            "gen_op_polar": pol["sv"][i_gen, :, 0], "gen_op_ns": ns_run["sv"][nk, :, 0],
            "gen_op_target": float(np.linalg.svd(y_gen, compute_uv=False)[0]),
            "gen_frob_target": float(np.linalg.norm(y_gen)),
            "eta_lam": el, "window_sv0": pol["sv"][i_win:i_single, :, 0], "window_diverged": pol["diverged"][i_win:i_single],
            "window_diverged_step": pol["diverged_step"][i_win:i_single],
            "single_sv": pol["sv"][i_single], "ks": np.array(NS_STEPS), "ns_sv": ns_run["sv"][:nk]}


def ball(budget: Budget) -> dict:
    """The exact-polar ball runs (aligned and generic) and the generic NS5 run, from :func:`single_matrix`."""
    ex = single_matrix(budget)
    return {"aligned_sv": ex["aligned_sv"], "aligned_T": ex["T"], "gen_op_polar": ex["gen_op_polar"],
            "gen_op_ns": ex["gen_op_ns"], "gen_T": ex["T"], "gen_op_target": ex["gen_op_target"],
            "gen_frob_target": ex["gen_frob_target"]}


def ns(budget: Budget) -> dict:
    """The aligned Newton-Schulz runs, k = 1, 2, 3, 5, 8, from :func:`single_matrix`."""
    ex = single_matrix(budget)
    return {"ks": ex["ks"], "sv": ex["ns_sv"], "T": ex["T"]}


# ----------------------------------------------------------------------------- the window of eta lambda
WINDOW_LAM = 1.0
WINDOW_FACTOR_T = 10   # the excess factor is read over the first 10 steps (before round-off takes over)


def window_grid(budget: Budget) -> np.ndarray:
    """eta lambda values: both sides of 1 (the invariance edge) and of 2 (the divergence edge), away from 1 itself
    (where the excess vanishes in one step and a factor cannot be read)."""
    n = budget.pick(quick=4, full=8)
    return np.concatenate([np.linspace(0.1, 0.75, n), np.linspace(1.25, 1.9, n), [3.5, 4.0, 5.0]])


def window(budget: Budget) -> dict:
    """The window runs from :func:`single_matrix`: the largest lambda |W_t|_op of each (NaN for a diverged run) and
    the excess after 10 steps."""
    ex = single_matrix(budget)
    op = ex["window_sv0"] * WINDOW_LAM
    ok = ~ex["window_diverged"]
    sup = np.where(ok, op.max(axis=1), np.nan)
    return {"eta_lam": ex["eta_lam"], "sup": sup, "op_path": op, "diverged": ex["window_diverged"], "T": ex["T"],
            "diverged_step": ex["window_diverged_step"], "excess_t": op[:, WINDOW_FACTOR_T - 1] - 1.0}


# ----------------------------------------------------------------------------- mode learning
MODES_ETA = 5e-3
MODES_ALPHA = 5e-3
MODES_FRAC = 0.9
SINGLE_S = np.array([5.0, 4.0, 3.0, 2.0, 1.0, 0.6, 0.4, 0.2])
SINGLE_ETA = 0.0123    # s / eta never within 1e-6 of a half-integer: no arrival on a rounding boundary


def factor_target(n: int) -> np.ndarray:
    """The notebooks' target spectrum 10/k, k = 1..n."""
    return 10.0 / np.arange(1, n + 1)


def first_crossing(path: np.ndarray, level: np.ndarray) -> np.ndarray:
    """First step (counted from 1) at which each column of ``path`` reaches ``level``; -1 if never."""
    hit = path >= level
    return np.where(hit.any(axis=0), hit.argmax(axis=0) + 1, -1)


STAB_ALPHA = 0.1                       # the notebooks' start scale for their learning-rate sweep
STAB_MULTIPLES = np.array([2.0, 5.0, 10.0])  # eta / eta_c, eta_c = 2 / lambda_max at the balanced minimum
GD_MULTIPLES = np.array([0.5, 0.9, 2.0, 5.0, 10.0])  # GD on both sides of its threshold


@experiment("muon.modes")
def modes(budget: Budget) -> dict:
    """Muon on W2 W1 -> diag(10/k), k = 1..32, from small Gaussian starts (alpha = 5e-3, eta = 5e-3: the notebooks'
    setting; 8 starts and 1000 steps at full, 3 starts and 650 steps at quick, past the last arrival near 600); in
    the same call, Muon from alpha = 0.1 at 2, 5 and 10 times GD's sharpness threshold 2/lambda_max, and GD at 0.5,
    0.9, 2, 5 and 10 times it (the threshold from theory.muon.gd_threshold)."""
    n = 32
    runs = budget.pick(quick=3, full=8)
    steps = budget.pick(quick=650, full=1000)
    k1, k2, k3, k4 = jax.random.split(jax.random.key(SEED + 3), 4)
    s = factor_target(n)
    eta_c = th.gd_threshold(s)
    nst, ngd = STAB_MULTIPLES.size, GD_MULTIPLES.size
    v1, v2 = STAB_ALPHA * normal(k3, (ngd, n, n)), STAB_ALPHA * normal(k4, (ngd, n, n))
    w1 = np.concatenate([MODES_ALPHA * normal(k1, (runs, n, n)), v1[-nst:]])
    w2 = np.concatenate([MODES_ALPHA * normal(k2, (runs, n, n)), v2[-nst:]])
    etas = np.r_[np.full(runs, MODES_ETA), STAB_MULTIPLES * eta_c]
    fac = sm.factorization(etas, s, w1, w2, n_steps=steps)
    gd = sm.factorization(GD_MULTIPLES * eta_c, s, v1, v2, method="gd", n_steps=steps)
    prod = np.einsum("mij,mjk->mik", fac["w2"][runs:], fac["w1"][runs:])
    loss = 0.5 * np.sum((prod - np.diag(s)) ** 2, axis=(1, 2)) / (0.5 * np.sum(s**2))
    arrival = np.stack([first_crossing(m, MODES_FRAC * s) for m in fac["modes"][:runs]])
    return {"s": s, "modes": fac["modes"][0], "arrival": arrival, "n": n, "T": steps, "eta_c": eta_c,
            "stab_eta": STAB_MULTIPLES * eta_c, "stab_loss": loss, "stab_diverged": fac["diverged"][runs:],
            "gd_eta": GD_MULTIPLES * eta_c, "gd_diverged": gd["diverged"], "gd_diverged_step": gd["diverged_step"]}


def single(budget: Budget) -> dict:
    """The single-matrix arrival run from :func:`single_matrix`: each mode's first step within eta/2 of its target."""
    sv = single_matrix(budget)["single_sv"]
    arrived = np.abs(sv - SINGLE_S) <= SINGLE_ETA / 2
    return {"sv": sv, "arrival": np.where(arrived.any(axis=0), arrived.argmax(axis=0) + 1, -1),
            "final_gap": float(np.max(np.abs(sv[-1] - SINGLE_S)))}
