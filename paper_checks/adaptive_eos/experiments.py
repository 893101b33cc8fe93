r"""The simulations of the adaptive-EoS topic: named, cached, budgeted experiments on :mod:`sims.adaptive_eos`.

Claims and ``figures/adaptive_eos.py`` both read these; figures never simulate. Every Adam run has
:math:`\epsilon = 0` and bias correction. With :math:`\epsilon = 0` a quadratic run is scale-equivariant
(:math:`x \to cx`, :math:`\eta \to c\eta` maps runs onto runs), so :math:`\eta` enters only through
:math:`\eta\lambda_{\max}(P^{-1}H)`; starts are multiples of Adam's EMA-cycle amplitude
:math:`A^\ast = \eta(1-\beta_1)/(2(1+\beta_1))`, which keeps the long-memory runs out of the subnormal range.
"""
from __future__ import annotations

import jax
import numpy as np

import sims.adaptive_eos as sim
import theory.adaptive_eos as th
from paper_checks import Budget, experiment

SEED = 20260207
ETA = 1e-2
BETA1S = (0.0, 0.5, 0.9, 0.95)


def rotated_quadratic(seed: int, d: int = 6, top: float = 10.0, bottom: float = 0.1) -> np.ndarray:
    r""":math:`H = Q\,\mathrm{diag}(\mathrm{geomspace}(top, bottom, d))\,Q^\top` with :math:`Q` a seeded random orthogonal matrix."""
    rng = np.random.default_rng(seed)
    q, r = np.linalg.qr(rng.normal(size=(d, d)))
    q = q * np.sign(np.diag(r))
    H = q @ np.diag(np.geomspace(top, bottom, d)) @ q.T
    return 0.5 * (H + H.T)


# ----------------------------------------------------------------------------- frozen preconditioner
FROZEN_D = 4
FROZEN_FACTORS = (1.0005, 1.001, 1.002)   # eta q / threshold where the growth rate is compared (no overflow)


def frozen_problem() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A 4-D quadratic (kappa = 20, rotated), a frozen diagonal P with entries in [0.5, 2], and a start."""
    rng = np.random.default_rng(SEED)
    H = rotated_quadratic(SEED, FROZEN_D, 4.0, 0.2)
    return H, rng.uniform(0.5, 2.0, FROZEN_D), rng.normal(size=FROZEN_D)


@experiment("adaptive_eos.frozen")
def frozen(budget: Budget) -> dict:
    """Frozen-P Adam on :func:`frozen_problem` at ``BETA1S``: :func:`frozen_edges` with a budgeted grid."""
    H, p, x0 = frozen_problem()
    return frozen_edges(H, p, x0, BETA1S, FROZEN_FACTORS, n_grid=budget.pick(quick=24, full=48),
                        rounds=budget.pick(quick=4, full=5))


def frozen_edges(H: np.ndarray, p: np.ndarray, x0: np.ndarray, beta1, factors, *, n_grid: int, rounds: int,
                 burn: int = 1800, tail: int = 200) -> dict:
    r"""Frozen-P Adam: the critical step bisected by zooming grids of step sizes, and growth rates above threshold.

    Each round runs a grid of ``n_grid`` step sizes per :math:`\beta_1` over the current bracket (first
    :math:`[0.8, 1.25]` times the threshold :math:`2(1+\beta_1)/(1-\beta_1)` over :math:`q = \lambda_{\max}(P^{-1}H)`)
    and keeps the cell where the tail's log-growth changes sign (stable below, growing above); the tail (``tail``
    steps after ``burn``) lets the top mode dominate. The per-step log growth is also read at
    :math:`\eta q` = threshold times each of ``factors``. Returns the brackets ``eta_lo``, ``eta_hi`` and ``rate``
    (beta1, factor).
    """
    q = th.preconditioned_sharpness(H, p)
    b1 = np.array(beta1)
    thr = np.array([th.frozen_threshold(b) for b in b1])
    # a long burn-in: the other modes decay only as sqrt(beta_1)^t (0.975^t at beta_1 = 0.95), and near the edge the
    # growth to be read over the tail is ~(cell width) x tail
    factors = np.array(factors)
    eta_r = (thr[:, None] * factors[None, :] / q).ravel()  # the rate runs ride along every round (one program)
    b1_all = np.r_[np.repeat(b1, n_grid), np.repeat(b1, factors.size)]
    lo, hi = 0.8 * thr / q, 1.25 * thr / q
    for _ in range(rounds):
        frac = np.linspace(0.0, 1.0, n_grid)
        etas = lo[:, None] + (hi - lo)[:, None] * frac[None, :]
        out = sim.adam_quadratic(H, np.tile(x0, (b1_all.size, 1)), np.r_[etas.ravel(), eta_r], b1_all, 0.5,
                                 n_steps=burn + tail, n_blocks=1, block=tail, precond=p)
        grows = ((out["log_growth_tail"] > 0) | out["diverged"])[:etas.size].reshape(etas.shape)
        first = np.argmax(grows, axis=1)  # the first growing step size of each row (every row brackets its edge)
        if not np.all(grows[np.arange(b1.size), first]) or np.any(first == 0):
            raise RuntimeError("frozen: a bisection bracket lost its edge")
        lo, hi = etas[np.arange(b1.size), first - 1], etas[np.arange(b1.size), first]
    rate = out["log_growth_tail"][etas.size:] / tail
    return {"beta1": b1, "q": q, "eta_lo": lo, "eta_hi": hi, "threshold": thr, "factors": factors,
            "rate": rate.reshape(b1.size, factors.size), "tail": tail, "burn": burn}


# ----------------------------------------------------------------------------- RMSProp and full Adam
RMS_BETA2 = (0.9, 0.99, 0.999)
ADAM_BETA1 = (0.5, 0.9, 0.95)
ADAM_BETA2 = (0.99, 0.999)
WINDOW_OMEGA = (0.003, 0.0053, 0.0095, 0.0169, 0.03, 0.0533, 0.0949, 0.1687, 0.3)   # 1 - beta_2 of the window scan
START_SCALES = (5.0, 3.5, 6.5, 10.0, 2.0, 8.0, 4.0, 7.5)   # starts, in units of A*
N_BLOCKS = 20


class _Batch:
    """Runs of one dimension collected into one simulator call (one compiled program per dimension)."""

    def __init__(self, d: int):
        self.d, self.H, self.x0, self.eta, self.b1, self.b2, self.groups = d, [], [], [], [], [], {}

    def add(self, group: str, H, x0, eta, b1, b2) -> None:
        self.groups.setdefault(group, []).append(len(self.x0))
        self.H.append(H)
        self.x0.append(x0)
        self.eta.append(eta)
        self.b1.append(b1)
        self.b2.append(b2)

    def run(self, n_steps: int, block: int) -> dict:
        out = sim.adam_quadratic(np.array(self.H), np.array(self.x0), np.array(self.eta), np.array(self.b1),
                                 np.array(self.b2), n_steps=n_steps, n_blocks=N_BLOCKS, block=block)
        res = {}
        for group, idx in self.groups.items():
            res.update({f"{group}_{k}": np.asarray(v)[idx] for k, v in out.items()})
            res.update({f"{group}_eta": np.array(self.eta)[idx], f"{group}_beta1": np.array(self.b1)[idx],
                        f"{group}_beta2": np.array(self.b2)[idx], f"{group}_H": np.array(self.H)[idx]})
        return res


@experiment("adaptive_eos.quadratics")
def quadratics(budget: Budget) -> dict:
    """Every RMSProp and full-Adam run on quadratics, in one simulator call per dimension.

    Groups (keys ``<group>_<output>`` of :func:`sims.adaptive_eos.adam_quadratic`, plus ``_eta``, ``_beta1``,
    ``_beta2``, ``_H``): ``rms6`` RMSProp on rotated 6-D quadratics (kappa = 100; seeded, some with and some without
    a lattice cycle on the threshold) from 0.05 * ones at two steps and two beta_2 (three at full); ``rms1`` RMSProp
    on 1-D a = 0.5, 10 from 5 A*; ``one`` Adam in 1-D (a = 1; with eps = 0 a 1-D run does not depend on a) over
    beta_1 x beta_2 from several starts (multiples of A*); ``scaled`` the beta_1 = 0.9 runs at eta / 8 with starts
    / 8 (scale equivariance); ``six`` Adam on rotated 6-D quadratics at beta_1 = 0.9 (every beta_1 at full);
    ``window`` 1-D Adam over 1 - beta_2 in WINDOW_OMEGA at beta_1 = 0.5, 0.9, 0.95.
    """
    n_steps, block = budget.pick(quick=30_000, full=100_000), budget.pick(quick=1000, full=4000)
    one, six = _Batch(1), _Batch(6)
    rms_b2 = RMS_BETA2[:budget.pick(quick=2, full=3)]
    for seed in SEED + np.arange(budget.pick(quick=4, full=8)):
        H = rotated_quadratic(int(seed))
        for eta in (ETA, ETA / 8):
            for b2 in rms_b2:
                six.add("rms6", H, np.full(6, 0.05), eta, 0.0, b2)
    for a in (0.5, 10.0):
        for eta in (ETA, ETA / 8):
            for b2 in rms_b2:
                one.add("rms1", [[a]], [5 * th.ema_cycle_amplitude(eta, 0.0)], eta, 0.0, b2)
    n_starts = budget.pick(quick=4, full=8)
    for b1 in ADAM_BETA1:
        for b2 in ADAM_BETA2 + budget.pick(quick=(), full=(0.9999,)):
            for k in range(n_starts):
                one.add("one", [[1.0]], [START_SCALES[k] * th.ema_cycle_amplitude(ETA, b1)], ETA, b1, b2)
    for b2 in ADAM_BETA2:
        for k in range(n_starts):
            one.add("scaled", [[1.0]], [START_SCALES[k] * th.ema_cycle_amplitude(ETA / 8, 0.9)], ETA / 8, 0.9, b2)
    for b1 in (0.5, 0.9, 0.95):
        for om in WINDOW_OMEGA:
            one.add("window", [[1.0]], [5 * th.ema_cycle_amplitude(ETA, b1)], ETA, b1, 1.0 - om)
    signs = np.random.default_rng(SEED).choice([-1.0, 1.0], size=(budget.pick(quick=2, full=4), 6))
    for b1 in budget.pick(quick=(0.9,), full=ADAM_BETA1):
        for b2 in ADAM_BETA2:
            for k, sg in enumerate(signs):
                six.add("six", rotated_quadratic(SEED + 100 + k), 5 * th.ema_cycle_amplitude(ETA, b1) * sg, ETA, b1, b2)
    out = {"n_steps": n_steps, "block": block, "omega": np.array(WINDOW_OMEGA), "n_starts": n_starts}
    out.update(one.run(n_steps, block))
    out.update(six.run(n_steps, block))
    return out


# ----------------------------------------------------------------------------- a tiny network
MLP_N, MLP_D, MLP_HIDDEN = 32, 4, 16     # 32 samples, 4 inputs, 16 tanh units: 80 parameters
MLP_EVERY = 50


@experiment("adaptive_eos.network", uses=("eos",))
def network(budget: Budget) -> dict:
    """Full-batch Adam (beta_1 = 0.9, beta_2 = 0.99, eps = 0) on a 4-16-1 tanh MLP (80 parameters) fitting the eos
    topic's teacher data (:func:`sims.eos.mlp_data`, 32 samples), several initializations; the preconditioned
    sharpness by 10 Lanczos steps on HVPs every 50 steps, from step 50 on (1000 steps; 2000, and eta = 0.003 too, at
    full)."""
    from sims.eos import mlp_data

    X, Y = mlp_data(jax.random.key(SEED), MLP_N, MLP_D)
    n_seeds = budget.pick(quick=8, full=12)
    etas = budget.pick(quick=(0.01,), full=(0.01, 0.003))
    eta = np.repeat(etas, n_seeds)
    keys = jax.random.split(jax.random.key(SEED + 1), eta.size)
    n_meas = budget.pick(quick=20, full=40)
    out = sim.adam_mlp(keys, eta, 0.9, 0.99, X, Y, hidden=MLP_HIDDEN, n_burn=0, n_meas=n_meas, every=MLP_EVERY,
                       lanczos_iter=10)
    return {"eta": eta, "sharp": out["sharp"], "loss": out["loss"], "every": MLP_EVERY,
            "first_step": out["first_step"], "g0": out["g0"], "theta": out["theta"], "X": np.asarray(X),
            "Y": np.asarray(Y),
            "step": MLP_EVERY * np.arange(1, n_meas + 1)}
