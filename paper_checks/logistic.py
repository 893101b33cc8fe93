r"""Meng, Orvieto, Cao, De Sa (2024): GD on logistic regression with non-separable data and large steps.

Claims (a)-(e) of the paper's abstract (with (c) also pushed to its limit: near-critical datasets
at 0.99 and positive controls just above 1), the follow-up's equal-magnitude statements (global convergence
in 1-D; a stable cycle of unit-norm data in higher dimensions, on a lift of 1-D data to R^33),
and derived ones: the flip normal form, the period-doubling cascade (second doubling, c_3, c_4,
the Feigenbaum ratio), balanced data's single 2-cycle, scale invariance (only eta*lambda matters)
and a two-point dataset with a stable 3-cycle below 2/lambda. Each pairs a closed form from :mod:`theory.logistic`
(numpy/scipy/sympy, float64) with the JAX simulator :mod:`sims.logistic`, and names the most
plausible wrong statement as a rival evaluated on the same measurement. The witnesses (the 1-D
bump-plus-spike family, the 2-D ping-pong dataset) and the normal-form constants are derived here.
Step sizes are written :math:`\eta` (the paper's :math:`\gamma`) and :math:`c = \eta\lambda`.

Every simulation is a named experiment (``logistic.<name>``): claims and figures read them, and
their grids live here, so editing a range changes the topic's code version and recomputes.
"""
from __future__ import annotations

import functools

import numpy as np
from scipy import optimize, special

import sims.logistic as sim
import theory.logistic as th
from paper_checks import STEPLAB, Bound, Budget, Categorical, Count, Exact, Paper, Result, claim, experiment

PAPER = Paper(
    key="meng2024",
    title="Gradient Descent on Logistic Regression with Non-Separable Data and Large Step Sizes",
    authors="S. Y. Meng, A. Orvieto, D. Y. Cao, C. De Sa", year=2024, arxiv="2406.05033",
)

SEED = 20240607
CASCADE = ([1.0, -1.0], [0.75, 0.25])  # z = +-1, 3/4 of the weight on +1: a full period-doubling cascade
ASYMMETRIC = ([1.0, -1.0], [0.3, 0.7])  # z = +-1, weights 0.3/0.7: the normal form's reference dataset


def random_datasets(seed: int, count: int, n: int, d: int) -> list[tuple[np.ndarray, np.ndarray]]:
    r"""Non-separable random datasets: magnitudes spread over decades, both signs, Dirichlet weights.

    1-D: :math:`|z_i|` log-uniform on :math:`[10^{-1}, 10^{1.5}]`; d-D: Gaussian directions with
    log-uniform norms. Wide magnitude ranges give the bump-plus-outlier geometry (a flat bulk
    plus sharp outliers) under which cycles appear above :math:`c = 1`. Separable draws (no finite
    minimizer) are skipped.
    """
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < count:
        if d == 1:
            z = 10.0 ** rng.uniform(-1, 1.5, size=(n, 1)) * rng.choice([-1.0, 1.0], size=(n, 1))
        else:
            z = rng.standard_normal((n, d)) * 10.0 ** rng.uniform(-1, 1.5, size=(n, 1))
        weights = rng.dirichlet(np.full(n, 0.7))
        try:
            th.minimizer(z, weights)
        except ValueError:  # separable draw: no finite minimizer, outside the claims' scope
            continue
        out.append((z, weights))
    return out


def _top_direction(z, a) -> tuple[np.ndarray, float, np.ndarray]:
    r""":math:`w^\star`, :math:`\lambda` and the top Hessian eigenvector at :math:`w^\star`."""
    w_star, lam = th.minimizer(z, a)
    return w_star, lam, np.linalg.eigh(th.hessian(w_star, z, a))[1][:, -1]


# ---------------------------------------------------------------------------------------------
# (a) loss of local stability at c = 2
# ---------------------------------------------------------------------------------------------
LOCAL_CS = np.array([1.9, 1.95, 2.05, 2.1])   # around c = 2, where the local multiplier 1 - c crosses -1
LOCAL_EPS, LOCAL_STEPS = 1e-8, 40


def _local_datasets(budget: Budget) -> list[tuple[np.ndarray, np.ndarray]]:
    n1, n2 = budget.pick(quick=(2, 1), full=(6, 6))
    return random_datasets(SEED, n1, 7, 1) + random_datasets(SEED + 1, n2, 9, 2)


@experiment("logistic.local_multipliers")
def local_multipliers(budget: Budget) -> dict:
    r"""Local multiplier of GD at :math:`w^\star` on random 1-D/2-D datasets, from simulated perturbations.

    A perturbation :math:`\varepsilon v` (:math:`v` the top Hessian eigenvector) is iterated
    ``LOCAL_STEPS`` steps at each :math:`c` in ``LOCAL_CS``; the geometric mean ratio of successive
    deviations along :math:`v` is the multiplier, and the linear fit in :math:`c` gives the
    crossing of -1. Also the attractor periods at :math:`c = 1.98, 2.02` from :math:`w^\star + 10^{-4} v`.
    """
    crit, periods, max_dev = [], [], []
    for z, a in _local_datasets(budget):
        w_star, lam, vec = _top_direction(z, a)
        traj = sim.gd(z, a, LOCAL_CS / lam, (w_star + LOCAL_EPS * vec)[None], LOCAL_STEPS)["w"][:, 0]
        dev = (traj - w_star) @ vec                                     # (c, t)
        dev = np.concatenate([np.full((len(LOCAL_CS), 1), LOCAL_EPS), dev], axis=1)
        ratio = np.exp(np.mean(np.diff(np.log(np.abs(dev)), axis=1), axis=1))
        mult = np.sign(dev[:, 1] / dev[:, 0]) * ratio
        slope, icpt = np.polyfit(LOCAL_CS, mult, 1)
        crit.append((-1 - icpt) / slope)
        max_dev.append(float(np.max(np.abs(dev))))
        att = sim.attractors(z, a, np.array([1.98, 2.02]) / lam, (w_star + 1e-4 * vec)[None],
                             n_steps=5000, max_period=4, tol=1e-12)
        periods.append(att["period"][:, 0])
    return {"c_crit": np.array(crit), "periods": np.array(periods), "max_dev": np.array(max_dev)}


@claim("meng2024.local_stability_boundary", paper=PAPER, provenance="quoted", kind="exact", source="abstract",
       quote="In fact, the behaviour can be much more complex -- a sequence of period-doubling bifurcations begins "
             "at the critical step size 2/λ, where λ is the largest eigenvalue of the Hessian at the solution.",
       where="arXiv:2406.05033, abstract",
       statement="w* loses local stability, and period doubling begins, exactly at the critical step size "
                 "eta = 2/lambda.",
       latex=r"T'(w^\star) = 1 - \eta\lambda \Rightarrow |T'(w^\star)| = 1 \iff \eta\lambda = 2")
def local_stability_boundary(budget: Budget) -> Result:
    """Critical c where the simulated multiplier at w* crosses -1 (random 1-D and 2-D data) against 2.

    Rivals: stability lost at c = 1 (the 1-D global threshold) or at the classical smooth-convex
    step eta = 2/L_smooth (c = 2 lambda / L_smooth < 2 whenever w* is off the curvature peak);
    and, on the attractors just below/above c = 2, "w* still attracting at 2.02" and "a 4-cycle is born".
    """
    data = local_multipliers(budget)
    sets = _local_datasets(budget)
    ratio = np.array([2 * th.minimizer(z, a)[1] / th.smoothness(z, a) for z, a in sets])
    n = len(sets)
    crit = Exact(
        "critical c = ηλ at which the simulated multiplier at w* crosses −1 (one per dataset)",
        predicted=2.0, measured=data["c_crit"], atol=1e-6,
        rivals={"stability is lost at ηλ = 1 (the 1-D global-convergence threshold)": 1.0,
                "stability is lost at the classical smooth-convex step η = 2/L_smooth": ratio},
        why="the multiplier is affine in c (1 − c); its estimate is biased by the second-order term "
            "|L'''|·|δ|/λ with |δ| ≤ max deviation (≤ 5e-7 here) and by round-off 1e-16/ε ≈ 1e-8 per ratio: "
            "both below 1e-6")
    att = Categorical(
        "attractor period from w* + 1e-4·v at ηλ = 1.98 and 2.02 (one row per dataset)",
        measured=data["periods"].astype(int), predicted=np.tile([1, 2], (n, 1)),
        rivals={"w* is still attracting at ηλ = 2.02 (the threshold lies above)": np.tile([1, 1], (n, 1)),
                "a 4-cycle, not a 2-cycle, is born at ηλ = 2": np.tile([1, 4], (n, 1))},
        why="periods are exact integers (tail tolerance 1e-12 relative; 0.98^5000 leaves nothing of the start)")
    return Result([crit, att], seed=SEED, arrays={"c_crit": data["c_crit"]},
                  detail=f"{n} random datasets (1-D and 2-D): max |c_crit − 2| = "
                         f"{np.max(np.abs(data['c_crit'] - 2)):.1e}; 2λ/L_smooth ranges "
                         f"{ratio.min():.3f}–{ratio.max():.3f}")


# ---------------------------------------------------------------------------------------------
# (b) local convergence below c = 2
# ---------------------------------------------------------------------------------------------
CONV_CS = np.array([0.5, 1.5, 1.9, 1.97, 2.03, 2.1])   # straddles c = 2 on both sides
CONV_STEPS = 3000


def _convergence_datasets(budget: Budget) -> list[tuple[np.ndarray, np.ndarray]]:
    n = budget.pick(quick=2, full=10)
    return random_datasets(SEED + 2, n, 8, 1) + random_datasets(SEED + 3, n, 8, 2)


@experiment("logistic.local_convergence")
def local_convergence(budget: Budget) -> dict:
    r"""Final distance :math:`\|w_T - w^\star\|_\infty` from inits within :math:`10^{-4}` of :math:`w^\star`, at c in ``CONV_CS``.

    :math:`T` = ``CONV_STEPS``: at :math:`c = 1.97` the contraction :math:`0.97^{3000} \approx 10^{-40}`
    is far below round-off; at :math:`c = 2.03` the growth :math:`1.03^{3000}` reaches the 2-cycle.
    """
    rng = np.random.default_rng(SEED + 4)
    n_init = budget.pick(quick=4, full=6)
    dist, c = [], []
    for z, a in _convergence_datasets(budget):
        w_star, lam = th.minimizer(z, a)
        inits = w_star[None] + 1e-4 * rng.standard_normal((n_init, w_star.size))
        final = sim.gd(z, a, CONV_CS / lam, inits, CONV_STEPS, keep_last=1)["w"][:, :, 0]
        dist.append(np.max(np.abs(final - w_star), axis=-1))            # (c, init)
        c.append(np.repeat(CONV_CS[:, None], n_init, axis=1))
    return {"distance": np.array(dist), "c": np.array(c)}


@claim("meng2024.local_convergence_below_2_over_lambda", paper=PAPER, provenance="quoted", kind="bound",
       quote="Using a smaller-than-critical step size guarantees convergence if initialized nearby the solution",
       where="arXiv:2406.05033, abstract",
       source="abstract",
       statement="Any step size eta < 2/lambda gives local convergence: GD initialized near w* converges to it.",
       latex=r"\eta < 2/\lambda \Rightarrow w_t \to w^\star \text{ for } \|w_0 - w^\star\| \text{ small}")
def local_convergence_claim(budget: Budget) -> Result:
    """Runs from within 1e-4 of w* at c in {0.5, 1.5, 1.9, 1.97} reach w*; at c in {2.03, 2.1} they do not.

    Bound: the final distance below c = 2 is at round-off. Count: per run, "converged" against
    c < 2; rivals move the local threshold to c = 1 (the global one) or to 2.05 (beyond the grid's
    resolution).
    """
    data = local_convergence(budget)
    dist, c = data["distance"].ravel(), data["c"].ravel()
    tol = 1e-12
    below = Bound("max ‖w_T − w*‖∞ over runs with ηλ < 2", measured=dist[c < 2], bound=tol, side="<=",
                  why="a converged iterate sits at w* up to float64 round-off (~1e-16·|w*|, |w*| ≲ 10 here); "
                      "the slowest contraction 0.97^3000 ≈ 1e-40 leaves nothing of the 1e-4 start")
    count = Count("runs that converge to w* (‖w_T − w*‖∞ ≤ 1e-12)", measured=dist <= tol, predicted=c < 2,
                  rivals={"local convergence only for ηλ < 1 (as for global convergence)": c < 1,
                          "local convergence persists up to ηλ = 2.05": c < 2.05},
                  why="per-run outcome; beyond c = 2 the 1.03^3000 growth reaches the 2-cycle, O(√(c−2)) away")
    return Result([below, count], seed=SEED + 2,
                  detail=f"{data['distance'].shape[0]} random datasets (1-D and 2-D) × c ∈ {CONV_CS.tolist()} × "
                         f"{data['distance'].shape[2]} inits; max distance below c = 2: {dist[c < 2].max():.1e}, "
                         f"min distance above: {dist[c > 2].min():.2e}")


# ---------------------------------------------------------------------------------------------
# (c) global convergence in 1-D below c = 1, and its sharpness
# ---------------------------------------------------------------------------------------------
GLOBAL_CS = np.array([0.5, 0.9, 0.99, 0.999])   # random datasets; the witnesses swap 0.999 for their own c' > 1
GLOBAL_INITS = np.linspace(-30, 30, 13)
GLOBAL_STEPS, GLOBAL_MORE, GLOBAL_ROUNDS = 20_000, 200_000, 5
GLOBAL_TOL = 1e-9
GLOBAL_N = 6   # points per dataset (witnesses are padded with zero-weight points: one compiled sweep for all)


def _padded(z, a, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The same loss on ``n`` points: zero-weight copies of the first point appended."""
    z, a = np.asarray(z, dtype=float), np.asarray(a, dtype=float)
    extra = n - z.shape[0]
    return np.concatenate([z, np.repeat(z[:1], extra, axis=0)]), np.concatenate([a, np.zeros(extra)])


def _global_setup(budget: Budget) -> tuple[list, list[float]]:
    """Datasets (random, then bump-plus-spike witnesses) and the witnesses' cycling steps c' in (1, 1.05)."""
    n_random = budget.pick(quick=8, full=80)
    witness_cs = budget.pick(quick=[1.02, 1.04], full=[1.01, 1.02, 1.03, 1.04, 1.2, 1.5, 1.8])
    sets = random_datasets(SEED + 5, n_random, GLOBAL_N, 1)
    sets += [_padded(d["z"][:, None], d["weights"], GLOBAL_N) for d in (th.cycle_dataset(c) for c in witness_cs)]
    return sets, witness_cs


def _settle(z, a, etas: np.ndarray, inits: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    r"""Attractor periods (m, k) and 2-cycle points (m, k, 2) over ``etas x inits``; unsettled runs are continued.

    Far starts can be thrown far past :math:`w^\star` and walk back slowly at a bounded speed, so a
    run with no period after ``GLOBAL_STEPS`` is continued from its last iterate in rounds of
    ``GLOBAL_MORE`` steps (at most ``GLOBAL_ROUNDS``) instead of being counted as non-convergent.
    """
    att = sim.attractors(z, a, etas, inits, n_steps=GLOBAL_STEPS, max_period=4, tol=1e-12)
    period, points, last = att["period"], att["points"][..., :2, 0], att["last"][..., 0]
    steps = GLOBAL_STEPS
    for _ in range(GLOBAL_ROUNDS):
        todo = np.argwhere(period == sim.PERIOD_NONE)
        if todo.size == 0:
            break
        for i, k in todo:
            more = sim.attractors(z, a, etas[i], last[i, k], n_steps=GLOBAL_MORE, max_period=4, tol=1e-12)
            period[i, k], points[i, k], last[i, k] = more["period"][0, 0], more["points"][0, 0, :2, 0], more["last"][0, 0, 0]
        steps += GLOBAL_MORE
    return period, points, steps


@experiment("logistic.global_convergence_1d")
def global_convergence_1d(budget: Budget) -> dict:
    r"""Attractors from 13 starts in [-30, 30] (plus w* ± 0.1) on random and bump-plus-spike 1-D datasets.

    Items are (dataset, c): every random dataset at :math:`c \in` ``GLOBAL_CS`` (< 1), and each
    witness built for :math:`c' \in (1, 1.05)` at 0.5, 0.9, 0.99 and at :math:`c'` itself. Per item: whether every start
    converges to :math:`w^\star`, and for the non-converging starts the 2-cycle they settle on.
    """
    sets, witness_cs = _global_setup(budget)
    n_random = len(sets) - len(witness_cs)
    item_c, item_set, converged, cycle_u, cycle_v, longest = [], [], [], [], [], 0
    for k, (z, a) in enumerate(sets):
        w_star, lam = th.minimizer(z, a)
        inits = np.concatenate([GLOBAL_INITS, w_star[0] + np.array([-0.1, 0.1])])
        cs = list(GLOBAL_CS[:-1]) + [witness_cs[k - n_random]] if k >= n_random else list(GLOBAL_CS)
        period, points, steps = _settle(z, a, np.array(cs) / lam, inits)
        longest = max(longest, steps)
        for i, c in enumerate(cs):
            at_star = (period[i] == 1) & (np.abs(points[i, :, 0] - w_star[0]) <= GLOBAL_TOL * (1 + abs(w_star[0])))
            cyc = np.flatnonzero(period[i] == 2)
            item_c.append(c)
            item_set.append(k)
            converged.append(bool(np.all(at_star)))
            cycle_u.append(np.min(points[i, cyc[0]]) if cyc.size else np.nan)
            cycle_v.append(np.max(points[i, cyc[0]]) if cyc.size else np.nan)
    return {"c": np.array(item_c), "dataset": np.array(item_set), "converged": np.array(converged),
            "cycle_u": np.array(cycle_u), "cycle_v": np.array(cycle_v), "n_random": n_random, "longest": longest}


@claim("meng2024.global_convergence_1d_below_1_over_lambda", paper=PAPER, provenance="quoted", kind="qualitative",
       quote="In one dimension, we show that a step size less than 1/λ suffices for global convergence.",
       where="arXiv:2406.05033, abstract",
       source="abstract",
       statement="In one dimension, eta < 1/lambda suffices for global convergence from every initialization, "
                 "and the threshold is sharp: just above 1/lambda some 1-D datasets cycle.",
       latex=r"d = 1,\ \eta\lambda < 1 \Rightarrow w_t \to w^\star\ \forall w_0")
def global_convergence_1d_claim(budget: Budget) -> Result:
    """Per (dataset, c): does every start converge? Predicted: yes iff c < 1 or no stable 2-cycle exists.

    Hard cases: the bump-plus-spike witnesses (which cycle just above c = 1) at c < 1, and the same
    witnesses at c' in (1, 1.05), where theory (the exact cycle equations, solved by scipy) gives
    a stable 2-cycle. Rivals: the threshold is 1.05/lambda or 1.1/lambda (both predict convergence
    at c' = 1.02, 1.04), or it needs a margin (0.95/lambda: predicts failures at c = 0.99). The
    simulated non-converging starts must sit on theory's exact 2-cycle (Exact).
    """
    data = global_convergence_1d(budget)
    sets, _ = _global_setup(budget)
    c, which, conv = data["c"], data["dataset"].astype(int), data["converged"].astype(bool)
    # theory's prediction per item: below c = 1 convergence (the theorem); above, a stable 2-cycle
    # solved from the exact cycle equations (started at the piecewise-linear guess) means some start fails
    predicted = c < 1
    cyc_pred, cyc_meas = [], []
    for i in np.flatnonzero(c > 1):
        z, a = sets[which[i]]
        d = th.cycle_dataset(float(c[i]))
        uv, mult = th.solve_two_cycle(z, a, d["eta"], [d["u"], d["v"]])
        predicted[i] = not abs(mult) < 1
        cyc_pred.append(np.sort(uv))
        cyc_meas.append([data["cycle_u"][i], data["cycle_v"][i]])
    count = Count(
        "(dataset, ηλ) items on which every start in [−30, 30] converges to w*", measured=conv, predicted=predicted,
        rivals={"the 1-D global threshold is ηλ = 1.05": c < 1.05, "the 1-D global threshold is ηλ = 1.1": c < 1.1,
                "global convergence needs a margin: ηλ < 0.95": c < 0.95},
        why="per-item outcome; a start counts as converged when its attractor is the fixed point w* "
            "(period 1, within 1e-9); runs with no period yet are continued up to 1.02e6 steps")
    cycles = Exact(
        "2-cycle (u, v) reached by the non-converging starts at ηλ = c' ∈ (1, 1.05) vs the exact cycle equations",
        predicted=np.array(cyc_pred), measured=np.array(cyc_meas), atol=1e-8,
        rivals={"the piecewise-linear cycle (no curvature correction)":
                np.array([[th.cycle_dataset(float(ci))[k] for k in ("u", "v")] for ci in c[c > 1]])},
        why="the attractor test stops at ‖w_{t+2} − w_t‖ ≤ 1e-12·scale and the cycle contracts by (1−c)² ≈ 1e-3 "
            "per period: the simulated points agree with the scipy root to ≪ 1e-8")
    n_random = int(data["n_random"])
    return Result([count, cycles], seed=SEED + 5, arrays={"c": c, "converged": conv, "predicted": predicted},
                  detail=f"{n_random} random 1-D datasets and {len(sets) - n_random} bump-plus-spike witnesses "
                         f"× ηλ ∈ {GLOBAL_CS.tolist()} (+ each witness at its own c' > 1); "
                         f"{int(np.sum(~conv & (c < 1)))} items below ηλ = 1 failed to converge; "
                         f"{int(np.sum(~conv & (c > 1)))}/{int(np.sum(c > 1))} witnesses cycle above 1; "
                         f"longest horizon {int(data['longest'])} steps")


# ---------------------------------------------------------------------------------------------
# (d) stable 2-cycles for every c in (1, 2)
# ---------------------------------------------------------------------------------------------
def _cycle_cs(budget: Budget) -> list[float]:
    return budget.pick(quick=[1.05, 1.2, 1.5, 1.8], full=[1.02, 1.05, 1.1, 1.2, 1.35, 1.5, 1.65, 1.8, 1.9])


def _cycle_witness(c: float) -> dict:
    r"""The bump-plus-spike witness for ``c`` with spike height :math:`J = \min(0.01, 0.025(2 - c))`.

    The cycle's size grows like :math:`J/(\lambda(2-c))`; shrinking :math:`J` near :math:`c = 2`
    keeps the bump's curvature variation over the cycle (the piecewise-linear formula's error,
    amplified by :math:`1/(2-c)`) below a few per cent for every c.
    """
    return th.cycle_dataset(c, J=min(0.01, 0.025 * (2 - c)))


@experiment("logistic.cycles_1d")
def cycles_1d(budget: Budget) -> dict:
    r"""Bump-plus-spike datasets built for each c in (1, 2): attractors from the cycle's basin and next to w*.

    Starts: :math:`u + 10^{-4}` (inside the cycle's basin) and :math:`0.9 w^\star` (10 % of the way
    from :math:`w^\star < 0` towards the spike at 0, on the flat side for every c). Also the
    autodiff multiplier of :math:`T^2` at the simulated cycle point.
    """
    period, u_sim, v_sim, jac = [], [], [], []
    for c in _cycle_cs(budget):
        d = _cycle_witness(c)
        att = sim.attractors(d["z"], d["weights"], [d["eta"]], [d["u"] + 1e-4, 0.9 * d["w_star"]],
                             n_steps=20_000, max_period=4, tol=1e-12)
        pts = att["points"][0, 0, :2, 0]
        period.append(att["period"][0])
        u_sim.append(float(np.min(pts)))
        v_sim.append(float(np.max(pts)))
        jac.append(float(sim.cycle_jacobian(d["z"], d["weights"], d["eta"], u_sim[-1], 2)[0, 0]))
    return {"c": np.array(_cycle_cs(budget)), "period": np.array(period), "u": np.array(u_sim),
            "v": np.array(v_sim), "multiplier": np.array(jac)}


@claim("meng2024.cycles_between_1_and_2", paper=PAPER, provenance="quoted", kind="existence", source="abstract",
       quote="However, for all step sizes between 1/λ and the critical step size 2/λ, one can construct a dataset "
             "such that GD converges to a stable cycle.",
       where="arXiv:2406.05033, abstract",
       statement="For every eta in (1/lambda, 2/lambda) there is a 1-D dataset on which GD converges to a stable "
                 "cycle, while w* stays locally attracting.",
       latex=r"\forall c = \eta\lambda \in (1,2)\ \exists\, (z, a):\ \text{stable 2-cycle } u = w^\star - \frac{J}{\lambda(2-c)},\ "
             r"v = w^\star + \frac{J(c-1)}{\lambda(2-c)}")
def cycles_between_1_and_2(budget: Budget) -> Result:
    """On the bump-plus-spike witness for each c: period 2 from the cycle's basin and 1 next to w*;
    the simulated cycle against the piecewise-linear formula (per c, tolerance from the bump's
    curvature variation) and against the exact cycle equations; the autodiff multiplier against the
    exact one.

    Rivals: cycles need c > 2 (only period doubling makes them); the cycle replaces w* as attractor;
    the formula without its 1/(2 − c) factor; the one-step multiplier 1 − c for the 2-cycle's.
    """
    data = cycles_1d(budget)
    cs = [float(c) for c in data["c"]]
    n = len(cs)
    checks = [Categorical(
        "attractor period from u + 1e-4 and from 0.9·w* (one row per c)", measured=data["period"].astype(int),
        predicted=np.tile([2, 1], (n, 1)),
        rivals={"cycles exist only beyond ηλ = 2 (born by period doubling)": np.tile([1, 1], (n, 1)),
                "the cycle replaces w* as the attractor": np.tile([2, 2], (n, 1))},
        why="periods are exact integers (tail tolerance 1e-12 relative)")]
    exact_uv, exact_mult = [], []
    for k, c in enumerate(cs):
        d = _cycle_witness(c)
        uv, mult = th.solve_two_cycle(d["z"], d["weights"], d["eta"], [d["u"], d["v"]])
        exact_uv.append(np.sort(uv))
        exact_mult.append(mult)
        diam = d["v"] - d["u"]
        # first-order perturbation: the bump's curvature sigma(w)sigma(-w) differs from lambda by a relative
        # (w^2 - w*^2)/4 <= max(u^2, v^2)/4 over the cycle, amplified by the conditioning 1/(2 - c)
        tol = max(d["u"] ** 2, d["v"] ** 2) / 4 / (2 - c) * diam
        no_factor = [d["w_star"] - d["J"] / d["lam"], d["w_star"] + d["J"] * (c - 1) / d["lam"]]
        checks.append(Exact(
            f"ηλ = {c:g}: simulated 2-cycle (u, v) vs the piecewise-linear formula", predicted=np.array([d["u"], d["v"]]),
            measured=np.array([data["u"][k], data["v"][k]]), atol=tol,
            rivals={"the formula without the 1/(2 − c) factor": np.array(no_factor)},
            why="the piecewise-linear limit ignores the bump's curvature variation, relative max(u², v²)/4, "
                "amplified by 1/(2 − c): first-order bound times the cycle's diameter"))
    checks.append(Exact(
        "simulated 2-cycle (u, v) vs the exact cycle equations (scipy), all c", predicted=np.array(exact_uv),
        measured=np.stack([data["u"], data["v"]], axis=1), atol=1e-8,
        rivals={"the piecewise-linear cycle is exact (no curvature correction)":
                np.array([[_cycle_witness(c)[k] for k in ("u", "v")] for c in cs])},
        why="both are the same fixed point of T²; the attractor test stops within 1e-12 relative and the "
            "cycle contracts by (1−c)² ≤ 0.64 per period"))
    checks.append(Exact(
        "multiplier (T²)' at the simulated cycle: autodiff vs (1 − ηL''(u))(1 − ηL''(v)) at the exact cycle",
        predicted=np.array(exact_mult), measured=data["multiplier"], rtol=1e-7, atol=1e-10,
        rivals={"the one-step multiplier 1 − c": 1 - np.array(cs)},
        why="the simulated point differs from the exact root by ≲ 1e-9; L''' there is ≲ 1 (spike far away), "
            "so the multiplier moves by ≲ 1e-8 relative"))
    checks.append(Bound("largest |multiplier| of the simulated 2-cycles (stable iff < 1)",
                        measured=np.abs(data["multiplier"]), bound=1.0, side="<=",
                        why="linear stability; the piecewise-linear value is (1 − c)² ≤ 0.81"))
    return Result(checks, arrays={k: data[k] for k in ("c", "u", "v", "multiplier")},
                  detail="stable 2-cycles at ηλ = " + ", ".join(f"{c:g}" for c in cs)
                         + "; autodiff multipliers " + ", ".join(f"{m:.4f}" for m in data["multiplier"])
                         + "; the start next to w* converges to w* in every case (the minimizer coexists)")


# ---------------------------------------------------------------------------------------------
# (e) a stable cycle below c = 1 in two dimensions
# ---------------------------------------------------------------------------------------------
@experiment("logistic.witness_2d")
def witness_2d(budget: Budget) -> dict:
    r"""The shipped 2-D witness: attractors from the cycle point, a 1e-3 perturbation of it and w* + 1e-3.

    Also :math:`\lambda_{\max}` by autodiff of the JAX loss at :math:`w^\star` and the autodiff
    Jacobian of :math:`T^2` at the simulated cycle point.
    """
    w = th.witness_2d()
    z, a, eta, p = w["z"], w["weights"], w["eta"], w["cycle_point"]
    w_star, _ = th.minimizer(z, a)
    lam_autodiff = float(np.linalg.eigvalsh(sim.hessian(w_star, z, a))[-1])
    att = sim.attractors(z, a, [eta], [p, p + 1e-3, w_star + 1e-3], n_steps=budget.pick(quick=5000, full=20_000),
                         max_period=4, tol=1e-12)
    pts = att["points"][0, 0, :2]
    first = int(np.argmin(np.linalg.norm(pts - p, axis=1)))    # the simulated point nearest the shipped one
    pts = np.roll(pts, -first, axis=0)
    mult = np.abs(np.linalg.eigvals(sim.cycle_jacobian(z, a, eta, pts[0], 2)))
    return {"period": att["period"][0], "points": pts, "c": eta * lam_autodiff, "multipliers": np.sort(mult)}


@claim("meng2024.cycle_below_1_over_lambda_2d", paper=PAPER, provenance="quoted", kind="existence", source="abstract",
       quote="In higher dimensions, this is actually possible even for step sizes less than 1/λ.",
       where="arXiv:2406.05033, abstract",
       statement="In higher dimensions a stable cycle can exist even for eta < 1/lambda.",
       latex=r"\exists\,(z, a) \subset \mathbb{R}^2:\ \eta\lambda_{\max} < 1 \text{ and a stable 2-cycle}")
def cycle_below_1_over_lambda_2d(budget: Budget) -> Result:
    """The 2-D ping-pong witness at c = 0.75 (lambda_max by autodiff): periods 2, 2, 1 from the cycle point,
    its 1e-3 perturbation and w* + 1e-3; the cycle against the scipy-polished one; its multipliers
    against the piecewise-linear (1 - c)^2.

    Rivals: the 1-D theorem extends (no stable cycle below 1/lambda: periods 1, 1, 1); the cycle
    is the attractor from everywhere; the one-step multiplier |1 - c|; the witness sits at c = 1.
    """
    data = witness_2d(budget)
    w = th.witness_2d()
    c = float(w["c"])
    fresh = th.construct_witness_2d(c=c, theta_deg=w["theta_deg"], J=w["J"], K=w["K"], offset=w["offset"])
    exact = np.stack([w["cycle_point"], th.gd_step(w["cycle_point"], w["eta"], w["z"], w["weights"])])
    w_star = fresh["w_star"]
    # curvature variation of the bump between w* and the cycle points: sigma(s)sigma(-s) = 1/4 (1 - s^2/4 + ...)
    delta = float(np.max(exact**2) + np.max(w_star**2)) / 4
    checks = [
        Categorical("attractor period from [cycle point, cycle point + 1e-3, w* + 1e-3]",
                    measured=data["period"].astype(int), predicted=[2, 2, 1],
                    rivals={"no stable cycle below ηλ = 1 in any dimension (the 1-D theorem extends)": [1, 1, 1],
                            "the cycle is the only attractor": [2, 2, 2]},
                    why="periods are exact integers (tail tolerance 1e-12 relative)"),
        Exact("ηλ_max with λ_max from the autodiff Hessian of the JAX loss at w*", predicted=c,
              measured=float(data["c"]), rtol=1e-10,
              rivals={"the witness needs ηλ_max ≥ 1 (sits on the 1-D threshold)": 1.0},
              why="two float64 Hessians (closed form vs autodiff) at the Newton-polished w*: round-off"),
        Exact("simulated 2-cycle points vs the shipped (scipy-polished) cycle", predicted=exact,
              measured=data["points"], atol=1e-8,
              rivals={"the piecewise-linear cycle is exact": fresh["predicted_cycle"]},
              why="the attractor test stops within 1e-12 relative; the cycle contracts by ≈ 0.06 per period"),
        Exact("|multipliers| of the simulated 2-cycle vs the piecewise-linear (1 − c)²",
              predicted=(1 - c) ** 2, measured=data["multipliers"], rtol=2 * c / (1 - c) * delta,
              rivals={"the one-step multiplier |1 − c|": abs(1 - c)},
              why=f"the bump's curvature varies by a relative δ ≤ (max p² + max w*²)/4 = {delta:.2e} between w* "
                  f"and the cycle; (1 − ηλ(1 − δ))² moves by 2c/(1 − c)·δ relative"),
    ]
    return Result(checks, arrays={"points": data["points"]},
                  detail=f"shipped 2-D witness: ηλ_max = {float(data['c']):.6f} (autodiff); periods "
                         f"{data['period'].tolist()}; |multipliers| = {np.round(data['multipliers'], 4).tolist()}")


# ---------------------------------------------------------------------------------------------
# Derived: the flip normal form at c = 2 and the second period doubling
# ---------------------------------------------------------------------------------------------
NORMAL_MUS = np.array([1e-4, 2e-4, 4e-4])


def _normal_form_sets(budget: Budget) -> list[tuple[list, list]]:
    return [ASYMMETRIC] + budget.pick(quick=[], full=[CASCADE, ([2.0, -0.5, 1.0], [0.2, 0.5, 0.3])])


@experiment("logistic.normal_form")
def normal_form(budget: Budget) -> dict:
    r"""Simulated 2-cycle half-width over :math:`\sqrt{\mu}` at :math:`c = 2 + \mu`, :math:`\mu \in` ``NORMAL_MUS``.

    Starts on the predicted cycle; the 2-cycle multiplier is about :math:`1 - 4\mu`, so
    :math:`12/\mu` steps converge to :math:`e^{-48}`.
    """
    ratios = []
    for z, a in _normal_form_sets(budget):
        w_star, lam = th.minimizer(z, a)
        start = w_star[0] - 0.5 * np.sqrt(NORMAL_MUS[0])
        row = []
        for mu in NORMAL_MUS:
            att = sim.attractors(z, a, [(2 + mu) / lam], [start], n_steps=int(12 / mu), max_period=4, tol=1e-12)
            pts = att["points"][0, 0, :2, 0]
            row.append((pts.max() - pts.min()) / 2 / np.sqrt(mu))
        ratios.append(row)
    return {"mu": NORMAL_MUS, "ratio": np.array(ratios)}


@claim("meng2024.normal_form_amplitude", paper=PAPER, provenance="derived", kind="exact", source="derived here",
       statement="Past c = 2 the 2-cycle grows like sqrt(c - 2) with the amplitude of the flip normal form.",
       latex=r"A \simeq \sqrt{(c-2)/(a^2+b)},\ a = -\eta L'''(w^\star)/2,\ b = -\eta L''''(w^\star)/6")
def normal_form_amplitude(budget: Budget) -> Result:
    """A/sqrt(c - 2) from simulated 2-cycles, extrapolated linearly to c -> 2, against 1/sqrt(a^2 + b).

    Rivals: the amplitude without the cubic coefficient b (1/|a|), and the normal form with a
    factor 2 either way (sqrt(2) times or 1/sqrt(2) times the prediction).
    """
    data = normal_form(budget)
    coefs = [th.normal_form_coefficients(z, a) for z, a in _normal_form_sets(budget)]
    predicted = np.array([co["amplitude_coefficient"] for co in coefs])
    # A/sqrt(mu) = coefficient + O(mu): the linear fit's intercept removes the O(mu) term
    fits = np.array([np.polyfit(data["mu"], r, 1) for r in data["ratio"]])
    measured = fits[:, 1]
    check = Exact(
        "A/√(c − 2) extrapolated to c → 2 (one per dataset)", predicted=predicted, measured=measured, rtol=1e-5,
        rivals={"no cubic term: A = √(c − 2)/|a|": np.array([1 / abs(co["a"]) for co in coefs]),
                "a factor 2 in the normal form: A = √(2(c − 2)/(a² + b))": np.sqrt(2) * predicted,
                "a factor 2 the other way: A = √((c − 2)/(2(a² + b)))": predicted / np.sqrt(2)},
        why="after the linear extrapolation the residual is O(μ²) relative (~1e-7 at μ ≤ 4e-4); the attractor "
            "tolerance 1e-12 on amplitudes ~2e-2 adds 1e-10")
    return Result(check, arrays={"mu": data["mu"], "predicted": predicted, "measured": measured},
                  detail="; ".join(f"predicted {p:.6f}, simulated {m:.6f}" for p, m in zip(predicted, measured))
                         + " (first dataset: z = ±1 with weights 0.3/0.7)")


def _doubling_offsets(budget: Budget) -> np.ndarray:
    return budget.pick(quick=np.array([0.04, 0.02, 0.01]), full=np.array([0.05, 0.03, 0.02, 0.01, 0.005]))


DOUBLING_AROUND = (-0.03, +0.03)   # offsets from c_2 at which the attractor's period is read, plus c = 2.75


@experiment("logistic.second_doubling")
def second_doubling(budget: Budget, c2: float) -> dict:
    r"""Multiplier of the simulated 2-cycle at :math:`c_2 - \delta` and attractor periods around :math:`c_2`.

    ``c2``: where to centre the grid (the theory's second doubling; part of the cache key). The
    multiplier is the autodiff Jacobian of :math:`T^2` at the simulated 2-cycle.
    """
    z, a = CASCADE
    w_star, lam = th.minimizer(z, a)
    cs = c2 - _doubling_offsets(budget)
    att = sim.attractors(z, a, cs / lam, [w_star[0] + 0.3], n_steps=20_000, max_period=4, tol=1e-12)
    mult = np.array([sim.cycle_jacobian(z, a, c / lam, att["points"][i, 0, 0], 2)[0, 0] for i, c in enumerate(cs)])
    around = np.array([c2 + DOUBLING_AROUND[0], c2 + DOUBLING_AROUND[1], 2.75])
    periods = sim.attractors(z, a, around / lam, [w_star[0] + 0.3], n_steps=40_000, max_period=16)["period"][:, 0]
    return {"c": cs, "multiplier": mult, "around": around, "periods": periods}


@claim("meng2024.period_four_beyond_second_doubling", paper=PAPER, provenance="derived", kind="exact",
       source="derived here",
       statement="Period doubling continues: the 2-cycle born at c = 2 loses stability at a second doubling c_2, "
                 "beyond which GD settles on a 4-cycle (z = +-1 with 3/4 of the weight on +1: c_2 = 2.6351716).",
       latex=r"(1-\eta L''(u))(1-\eta L''(v)) = -1 \text{ at } c = c_2")
def period_four(budget: Budget) -> Result:
    """c_2 from the exact cycle equations (scipy) against the c where the simulated 2-cycle's multiplier
    (autodiff, below c_2) extrapolates to -1; periods 2, 4, 4 at c_2 - 0.03, c_2 + 0.03, 2.75.

    Rivals: the logistic map's second doubling 1 + sqrt(6) shifted so its first sits at 2 (c_2 = sqrt(6)),
    c_2 moved by 0.01 (a bifurcation diagram's resolution), and "the 2-cycle persists past c_2".
    """
    z, a = CASCADE
    predicted = th.period_doubling_step(z, a)
    data = second_doubling(budget, c2=round(predicted, 10))
    coef = np.polyfit(data["c"], data["multiplier"] + 1, 2)
    roots = np.roots(coef)
    roots = roots[np.isreal(roots)].real
    measured = float(roots[np.argmin(np.abs(roots - data["c"][-1]))])
    lin = np.polyfit(data["c"][-2:], data["multiplier"][-2:] + 1, 1)
    # tolerance: the extrapolation error, estimated by the gap between the linear (last two points) and
    # the quadratic extrapolations, doubled (the cubic term is smaller than the quadratic one it corrects)
    tol = 2 * abs(-lin[1] / lin[0] - measured)
    c2 = Exact("second doubling c₂: simulated multiplier extrapolated to −1 vs the exact cycle equations",
               predicted=predicted, measured=measured, atol=tol,
               rivals={"c₂ = √6 ≈ 2.449 (the logistic map's 1 + √6, shifted so its first doubling sits at 2)":
                       np.sqrt(6.0),
                       "c₂ moved by 0.01 (a bifurcation diagram's resolution)": predicted + 0.01},
               why="extrapolation error estimated by twice the gap between linear and quadratic extrapolations")
    periods = Categorical("attractor period at c₂ − 0.03, c₂ + 0.03 and ηλ = 2.75",
                          measured=data["periods"].astype(int), predicted=[2, 4, 4],
                          rivals={"the 2-cycle persists past c₂": [2, 2, 2], "chaos right after c₂": [2, 0, 0]},
                          why="periods are exact integers (tail tolerance 1e-9 relative)")
    return Result([c2, periods], arrays={"c": data["c"], "multiplier": data["multiplier"]},
                  detail=f"c₂ = {predicted:.7f} (scipy) vs {measured:.7f} (simulation); periods around: "
                         f"{data['periods'].tolist()}")


# ---------------------------------------------------------------------------------------------
# Balanced data: one stable 2-cycle for every c > 2, no cascade
# ---------------------------------------------------------------------------------------------
BALANCED = ([1.0, -1.0], [0.5, 0.5])   # z = +-1 with equal weights: L'(w) = tanh(w/2)/2, w* = 0, lambda = 1/4
BALANCED_STARTS = np.array([0.3, -1.7, 4.0, -9.0, 25.0])


def _balanced_cs(budget: Budget) -> np.ndarray:
    # c <= 10: the cycle's multiplier (1 - 2a/sinh a)^2 reaches 0.996 there, still contracting within the horizon
    return budget.pick(quick=np.array([2.05, 2.5, 2.75, 2.9, 4.0, 10.0]),
                       full=np.array([2.01, 2.05, 2.2, 2.5, 2.7, 2.75, 2.83, 2.86, 2.9, 3.0, 3.5, 4.0, 6.0, 10.0]))


@experiment("logistic.balanced")
def balanced(budget: Budget) -> dict:
    r"""Attractors of GD on balanced data over :math:`c > 2` from five starts in [-9, 25] (periods up to 16).

    Also the half-width of the 2-cycle reached from the first start and the autodiff multiplier of
    :math:`T^2` there. The dataset is padded with zero-weight points to the topic's common size.
    """
    z, a = _padded(*BALANCED, GLOBAL_N)
    _, lam = th.minimizer(z, a)
    cs = _balanced_cs(budget)
    att = sim.attractors(z, a, cs / lam, BALANCED_STARTS, n_steps=20_000, max_period=16, tol=1e-12)
    pts = att["points"][:, 0, :2, 0]
    mult = [sim.cycle_jacobian(z, a, c / lam, pts[i, 0], 2)[0, 0] for i, c in enumerate(cs)]
    return {"c": cs, "period": att["period"], "half_width": (pts.max(1) - pts.min(1)) / 2, "multiplier": np.array(mult)}


def _solve_tanh_rival(c: float) -> float:
    """Root of a/tanh(a) = c (the cycle equation with the argument's factor 1/2 dropped)."""
    return float(optimize.brentq(lambda t: t - c * np.tanh(t), 1e-8 + np.sqrt(3 * max(c - 1, 1e-12)) / 4, c + 1))


def _cascade_periods(cs: np.ndarray) -> np.ndarray:
    """Periods that the 3/4 dataset's cascade would give at ``cs``: 2, 4, 8, 16 between its doublings, 0 beyond."""
    pts = cascade_points()
    edges = pts[:5]
    k = np.searchsorted(edges, cs)          # number of doubling points below c
    return np.where(k >= 5, 0, 2 ** np.maximum(k, 0)).astype(int)


@claim("meng2024.balanced_two_cycle", paper=PAPER, provenance="derived", kind="exact", source="derived here",
       statement="On balanced data (z = +-1, weights 1/2) there is no period-doubling cascade: for every c = eta*lambda > 2 "
                 "GD settles on one stable 2-cycle +-a whose half-width solves a / tanh(a/2) = c.",
       latex=r"\frac{a}{\tanh(a/2)} = \eta\lambda,\qquad (T^2)'(a) = \left(1 - \frac{2a}{\sinh a}\right)^2 \in (0, 1)")
def balanced_two_cycle(budget: Budget) -> Result:
    """Simulated 2-cycle half-width against ``theory.logistic.balanced_cycle_amplitude``; periods from five starts
    against 2; the autodiff multiplier of T^2 against (1 - 2a/sinh a)^2.

    Rivals: the flip normal form sqrt(6(c - 2)) used beyond its range; the cycle equation with the factor 1/2
    dropped (a/tanh(a) = c); the cascade of the 3/4-weighted data (periods 4, 8, 16, chaos past its doublings);
    the one-step multiplier 1 - c sech^2(a/2).
    """
    data = balanced(budget)
    cs = data["c"]
    amp = np.array([th.balanced_cycle_amplitude(c) for c in cs])
    n_start = data["period"].shape[1]
    checks = [
        Exact("2-cycle half-width a (one per ηλ)", predicted=amp, measured=data["half_width"], rtol=1e-10,
              rivals={"the flip normal form √(6(ηλ − 2)) holds at every ηλ": np.sqrt(6 * (cs - 2)),
                      "a/tanh(a) = ηλ (the factor 1/2 in the argument dropped)": np.array([_solve_tanh_rival(c) for c in cs])},
              why="the attractor test stops within 1e-12 relative; Brent solves a/tanh(a/2) = c to 1e-15"),
        Categorical("attractor period from 5 starts in [−9, 25] (rows: ηλ)", measured=data["period"].astype(int),
                    predicted=np.full(data["period"].shape, 2),
                    rivals={"balanced data double like the 3/4-weighted data (4, 8, 16, chaos past its doublings)":
                            np.repeat(_cascade_periods(cs)[:, None], n_start, axis=1)},
                    why="periods are exact integers (tail tolerance 1e-12 relative, periods up to 16 tested)"),
        Exact("multiplier (T²)' at the simulated cycle (autodiff)", predicted=[th.balanced_cycle_multiplier(c) for c in cs],
              measured=data["multiplier"], rtol=1e-8, atol=1e-12,
              rivals={"the one-step multiplier 1 − ηλ sech²(a/2) (it would cross −1: a doubling)":
                      1 - cs / np.cosh(amp / 2) ** 2},
              why="the simulated point is within 1e-12 of the exact cycle; the multiplier's derivative there is O(1)"),
    ]
    return Result(checks, arrays={"c": cs, "half_width": data["half_width"], "predicted": amp},
                  detail="ηλ = " + ", ".join(f"{c:g}" for c in cs) + ": every start reaches the 2-cycle ±a; "
                         + ", ".join(f"a({c:g}) = {x:.6f}" for c, x in zip(cs, amp)))


# ---------------------------------------------------------------------------------------------
# The period-doubling cascade of the 3/4-weighted data, and the Feigenbaum ratio
# ---------------------------------------------------------------------------------------------
CASCADE_COUNT = 7           # doubling points c_1..c_7 from the exact cycle equations (periods up to 64)
CASCADE_FRACTIONS = np.array([0.1, 0.05, 0.025])   # c_k - f (c_k - c_{k-1}): where the 2^{k-1}-cycle's multiplier is read


@functools.lru_cache(maxsize=1)
def _cascade_points_cached() -> tuple[float, ...]:
    return tuple(th.doubling_points(*CASCADE, CASCADE_COUNT))


def cascade_points() -> np.ndarray:
    """Doubling points c_1 = 2, c_2, ..., c_7 of the 3/4-weighted data (theory, cached)."""
    return np.array(_cascade_points_cached())


@experiment("logistic.cascade")
def cascade(budget: Budget, points: tuple) -> dict:
    r"""Multipliers of the simulated :math:`2^{k-1}`-cycles just below :math:`c_k`, and attractor periods across the cascade.

    ``points``: theory's doubling points (they centre the grids; part of the cache key). For
    :math:`k` = 3, 4 (and 5 at full) the cycle reached from :math:`w^\star + 0.3` at
    :math:`c_k - f(c_k - c_{k-1})`, :math:`f \in` ``CASCADE_FRACTIONS``, and the autodiff Jacobian of
    :math:`T^{p}` there. Periods (up to 32) at the midpoints between successive doublings and at :math:`c = 3`.
    """
    pts = np.asarray(points, dtype=float)
    z, a = _padded(*CASCADE, GLOBAL_N)
    w_star, lam = th.minimizer(z, a)
    ks = budget.pick(quick=[3, 4], full=[3, 4, 5])
    out = {"k": np.array(ks)}
    for k in ks:
        p = 2 ** (k - 1)
        cs = pts[k - 1] - CASCADE_FRACTIONS * (pts[k - 1] - pts[k - 2])
        att = sim.attractors(z, a, cs / lam, [w_star[0] + 0.3], n_steps=40_000, max_period=16, tol=1e-12)
        out[f"c_{k}"] = cs
        out[f"period_{k}"] = att["period"][:, 0]
        out[f"multiplier_{k}"] = np.array([sim.cycle_jacobian(z, a, c / lam, att["points"][i, 0, 0], p)[0, 0]
                                           for i, c in enumerate(cs)])
    mids = np.append((pts[:4] + pts[1:5]) / 2, 3.0)
    att = sim.attractors(z, a, mids / lam, [w_star[0] + 0.3, w_star[0] - 0.7], n_steps=60_000, max_period=32,
                         tol=1e-10)
    out.update(mids=mids, mid_periods=att["period"])
    return out


def _extrapolate_to_minus_one(cs: np.ndarray, mult: np.ndarray) -> tuple[float, float]:
    """Root of the quadratic fit of m(c) + 1, and twice its gap to the linear extrapolation of the last two points."""
    roots = np.roots(np.polyfit(cs, mult + 1, 2))
    roots = roots[np.isreal(roots)].real
    quad = float(roots[np.argmin(np.abs(roots - cs[-1]))])
    lin = np.polyfit(cs[-2:], mult[-2:] + 1, 1)
    return quad, 2 * abs(-lin[1] / lin[0] - quad)


@claim("meng2024.period_doubling_cascade", paper=PAPER, provenance="derived", kind="exact", source="derived here",
       statement="On z = +-1 with 3/4 of the weight on +1 the doublings continue: the 4-cycle loses stability at "
                 "c_3 = 2.8143853 and the 8-cycle at c_4 = 2.853017 (then 16, 32, ...), and by c = 3 no attractor of "
                 "period <= 32 remains.",
       latex=r"(T_{c_k}^{2^{k-1}})'(u) = -1:\ c_3 = 2.8143853,\ c_4 = 2.853017")
def period_doubling_cascade(budget: Budget) -> Result:
    """c_3, c_4 (and c_5 at full) located in simulation -- the autodiff multiplier of the simulated 2^{k-1}-cycle
    extrapolated to -1 -- against the exact cycle equations (scipy); the simulated Feigenbaum ratio
    (c_3 - c_2)/(c_4 - c_3) against theory's; periods 2, 4, 8, 16 between the doublings and none <= 32 at c = 3.

    Rivals: each c_k predicted by Feigenbaum's ratio from the two previous points (universality assumed from the
    start); the ratio already at its limit 4.6692; the cascade halting at period 8, or a stable 32-cycle at c = 3.
    """
    pts = cascade_points()
    data = cascade(budget, points=tuple(round(float(p), 12) for p in pts))
    checks, found = [], {}
    for k in data["k"]:
        k = int(k)
        measured, tol = _extrapolate_to_minus_one(data[f"c_{k}"], data[f"multiplier_{k}"])
        found[k] = measured
        universal = pts[k - 2] + (pts[k - 2] - pts[k - 3]) / th.FEIGENBAUM_DELTA
        checks.append(Exact(
            f"c_{k}: simulated {2 ** (k - 1)}-cycle multiplier extrapolated to −1 vs the exact cycle equations",
            predicted=float(pts[k - 1]), measured=measured, atol=tol,
            rivals={f"c_{k} = c_{k - 1} + (c_{k - 1} − c_{k - 2})/δ (Feigenbaum's ratio from the start)": universal},
            why="extrapolation error estimated by twice the gap between the quadratic and the linear (last two points) "
                "extrapolations of the multiplier"))
    ratio_sim = (found[3] - pts[1]) / (found[4] - found[3])
    ratio_th = (pts[2] - pts[1]) / (pts[3] - pts[2])
    # propagate the c_3, c_4 tolerances into the ratio (first order)
    tol3, tol4 = checks[0].atol, checks[1].atol
    d43 = pts[3] - pts[2]
    ratio_tol = ratio_th * ((tol3 + tol4) / d43 + tol3 / (pts[2] - pts[1]))
    checks.append(Exact("Feigenbaum ratio (c_3 − c_2)/(c_4 − c_3) from the simulated c_3, c_4", predicted=ratio_th,
                        measured=ratio_sim, atol=ratio_tol,
                        rivals={"the ratio has reached Feigenbaum's δ = 4.6692 by the third doubling": th.FEIGENBAUM_DELTA},
                        why="first-order propagation of the c_3, c_4 tolerances"))
    n_start = data["mid_periods"].shape[1]
    expected = np.array([2, 4, 8, 16, 0])
    checks.append(Categorical(
        "attractor period (≤ 32) at the midpoints of [c_1, c_2], ..., [c_4, c_5] and at ηλ = 3 (two starts)",
        measured=data["mid_periods"].astype(int), predicted=np.repeat(expected[:, None], n_start, axis=1),
        rivals={"the cascade halts at period 8": np.repeat(np.array([2, 4, 8, 8, 8])[:, None], n_start, axis=1),
                "a stable 32-cycle at ηλ = 3 (accumulation beyond 3)":
                np.repeat(np.array([2, 4, 8, 16, 32])[:, None], n_start, axis=1)},
        why="periods are exact integers (tail tolerance 1e-10 relative); 0 = no period ≤ 32"))
    return Result(checks, arrays={"points": pts, **{f"c_{k}": data[f"c_{k}"] for k in data["k"]},
                                  **{f"multiplier_{k}": data[f"multiplier_{k}"] for k in data["k"]}},
                  detail="theory c_1..c_7 = " + ", ".join(f"{p:.7f}" for p in pts) + "; simulated "
                         + ", ".join(f"c_{k} = {v:.7f}" for k, v in found.items())
                         + f"; ratio {ratio_sim:.4f} (theory {ratio_th:.4f})")


@claim("meng2024.feigenbaum_ratio", paper=PAPER, provenance="derived", kind="exact", source="derived here",
       statement="The ratios of successive doubling intervals of the 3/4-weighted data converge to Feigenbaum's "
                 "universal delta = 4.6692.",
       latex=r"\delta_k = \frac{c_k - c_{k-1}}{c_{k+1} - c_k} \to \delta = 4.6692\ldots")
def feigenbaum_ratio(budget: Budget) -> Result:
    """delta_k from the doubling points c_1..c_7 (exact cycle equations for periods up to 64) against Feigenbaum's
    constant (a universal number of the renormalization of quadratic maxima, obtained independently of this map).

    Tolerance: the last increment |delta_5 - delta_4| (the sequence converges at least geometrically with ratio
    below 1/2 from k = 3 on, so the remaining error is below the last increment). Rivals: the plateau value
    delta_2 (a cascade read off four doublings); the other Feigenbaum constant alpha = 2.5029; delta_1 (no
    convergence).
    """
    pts = cascade_points()
    ratios = th.feigenbaum_ratios(pts)
    step = abs(ratios[-1] - ratios[-2])
    check = Exact("δ_5 = (c_6 − c_5)/(c_7 − c_6), the last ratio from c_1..c_7", predicted=th.FEIGENBAUM_DELTA,
                  measured=float(ratios[-1]), atol=step,
                  rivals={"the plateau δ_2 = (c_3 − c_2)/(c_4 − c_3) read off the first four doublings": float(ratios[1]),
                          "Feigenbaum's other constant α = 2.5029": 2.502907875095893,
                          "no convergence: every ratio equals δ_1": float(ratios[0])},
                  why="the ratios approach their limit at least geometrically (factor < 1/2 per doubling from k = 3): "
                      "the remaining error is below the last increment")
    errors = np.abs(ratios - th.FEIGENBAUM_DELTA)
    return Result(check, arrays={"ratios": ratios},
                  detail="δ_k = " + ", ".join(f"{r:.5f}" for r in ratios) + "; |δ_k − δ| = "
                         + ", ".join(f"{e:.1e}" for e in errors))


# ---------------------------------------------------------------------------------------------
# Only c = eta * lambda matters (scale invariance, a metamorphic test)
# ---------------------------------------------------------------------------------------------
SCALINGS = ((3.0, 1.0), (0.2, 5.0), (10.0, 0.1))   # (s, k): z -> s z, weights -> k a, so lambda -> k s^2 lambda
SCALE_CS = np.array([1.5, 2.3, 2.7, 2.84, 2.858])    # fixed point, 2-, 4-, 8- and 16-cycles of the cascade data
SCALE_STEPS, SCALE_START = 300, 0.9


@experiment("logistic.scale_invariance")
def scale_invariance(budget: Budget) -> dict:
    r"""GD on the cascade data and on rescaled copies :math:`(s z, k a)` at the same :math:`c`, mapped back by :math:`s`.

    Run :math:`\eta' = c/(k s^2 \lambda)` from :math:`w_0/s` on the rescaled data: if only :math:`c`
    matters, :math:`s\,w'_t = w_t`. The rival runs the *original* data at the rescaled data's raw
    step :math:`\eta'` (same :math:`\eta`, different :math:`c`).
    """
    z, a = (np.asarray(v, dtype=float) for v in CASCADE)
    _, lam = th.minimizer(z, a)
    base = sim.gd(z, a, SCALE_CS / lam, [SCALE_START], SCALE_STEPS)["w"][:, 0, :, 0]
    scaled, same_eta = [], []
    for s, k in SCALINGS:
        _, lam_s = th.minimizer(s * z, k * a)
        scaled.append(s * sim.gd(s * z, k * a, SCALE_CS / lam_s, [SCALE_START / s], SCALE_STEPS)["w"][:, 0, :, 0])
        same_eta.append(sim.gd(z, a, SCALE_CS / lam_s, [SCALE_START], SCALE_STEPS)["w"][:, 0, :, 0])
    return {"base": base, "scaled": np.array(scaled), "same_eta": np.array(same_eta), "lam": lam}


def _stretch_bound(traj: np.ndarray, cs: np.ndarray, lam: float) -> np.ndarray:
    r"""Linearized round-off bound per run: :math:`\sum_t \epsilon_t \prod_{\tau > t}|T'(w_\tau)|` with :math:`\epsilon_t = 4u(1+|w_t|)`."""
    z, a = (np.asarray(v, dtype=float) for v in CASCADE)
    m = traj[..., None] * z
    curv = (a * z * z * special.expit(m) * special.expit(-m)).sum(-1)
    stretch = np.abs(1 - (cs / lam)[:, None] * curv)
    eps = 4 * np.finfo(float).eps * (1 + np.abs(traj))   # a few ulps per step for the sum over points
    err = np.zeros(traj.shape[0])
    for t in range(traj.shape[1]):       # error recursion e_{t+1} = |T'| e_t + eps_t (300 numpy steps, no simulation)
        err = stretch[:, t] * err + eps[:, t]
    return err


@claim("meng2024.only_eta_lambda_matters", paper=PAPER, provenance="derived", kind="exact", source="derived here",
       statement="Only c = eta*lambda matters: rescaling the data (z -> s z) and the weights (a -> k a) and running "
                 "eta' = c/(k s^2 lambda) reproduces the orbit scaled by 1/s, in every regime of the cascade.",
       latex=r"w'_t = w_t/s \text{ for } (s z, k a),\ \eta' = \eta/(k s^2)")
def only_eta_lambda_matters(budget: Budget) -> Result:
    """Metamorphic test: the rescaled runs, mapped back, against the original run at c in {1.5, 2.3, 2.7, 2.84,
    2.858} (fixed point to 16-cycle), 300 steps each, three rescalings.

    Tolerance: the linearized round-off growth along the orbit. Rival: the raw step eta, not c, sets the orbit
    (the original data run at the rescaled data's eta).
    """
    data = scale_invariance(budget)
    # both runs carry their own round-off: the difference is bounded by twice one run's bound
    tol = 2 * float(np.max(_stretch_bound(data["base"], SCALE_CS, float(data["lam"]))))
    n = len(SCALINGS)
    check = Exact("s·w'_t on the rescaled data vs w_t (3 rescalings × 5 ηλ × 300 steps)",
                  predicted=np.broadcast_to(data["base"], data["scaled"].shape), measured=data["scaled"],
                  atol=tol,
                  rivals={"the raw step η, not ηλ, sets the orbit (the original data at the rescaled data's η)":
                          data["same_eta"]},
                  why="float64 round-off of a few ulps per step in each of the two runs, propagated by the linearized "
                      "map (e ← |T'(w_t)| e + 4u(1 + |w_t|)) along the original orbit")
    err = float(np.max(np.abs(data["scaled"] - data["base"])))
    return Result(check, detail=f"{n} rescalings (s, k) = {list(SCALINGS)}: max |s w' − w| = {err:.1e} "
                                f"(round-off bound {tol:.1e})")


# ---------------------------------------------------------------------------------------------
# Two points suffice to cycle below 2/lambda; equal magnitudes do not (1-D)
# ---------------------------------------------------------------------------------------------
TWO_POINT = (250.0, -9.0)   # z = (s, -1) with the point s at margin -9 at w*: a two-point bump plus spike


def _two_point_cs(budget: Budget) -> np.ndarray:
    return budget.pick(quick=np.array([1.3, 1.5, 1.9]), full=np.array([1.3, 1.4, 1.5, 1.6, 1.7, 1.8, 1.9, 1.95]))


def _stable_three_cycle(z, a, eta) -> np.ndarray:
    """Theory's stable 3-cycle (points and multiplier) of a 1-D dataset at ``eta``; ``ValueError`` if there is none."""
    cyc = th.cycles_1d(z, a, eta, 3)
    stable = cyc[np.abs(cyc[:, -1]) < 1]
    if not len(stable):
        raise ValueError(f"eta: no stable 3-cycle at eta = {eta}")
    return stable[0]


@experiment("logistic.two_point")
def two_point(budget: Budget) -> dict:
    r"""GD on the two-point dataset :math:`z = (250, -1)` (margin -9 at :math:`w^\star`) below :math:`c = 2`.

    Per :math:`c`: attractors from a point of theory's stable 3-cycle (shifted by :math:`10^{-6}`) and from
    :math:`w^\star + 10^{-3}`, the cycle reached and the autodiff multiplier of :math:`T^3` there; and the
    fraction of 101 starts spread over the invariant interval that end on a cycle rather than at :math:`w^\star`.
    """
    z, a = th.two_point_dataset(*TWO_POINT)
    zp, ap = _padded(z, a, GLOBAL_N)
    w_star, lam = th.minimizer(z, a)
    period, points, mult, share = [], [], [], []
    for c in _two_point_cs(budget):
        start = _stable_three_cycle(z, a, c / lam)[0] + 1e-6
        att = sim.attractors(zp, ap, [c / lam], [start, w_star[0] + 1e-3], n_steps=20_000, max_period=16, tol=1e-12)
        pts = att["points"][0, 0, :3, 0]
        period.append(att["period"][0])
        points.append(np.roll(pts, -int(np.argmin(pts))))
        mult.append(sim.cycle_jacobian(zp, ap, c / lam, points[-1][0], 3)[0, 0])
        R = th.orbit_bound_1d(z, a, c / lam, w_star[0])
        spread = sim.attractors(zp, ap, [c / lam], w_star[0] + np.linspace(-R, R, 101), n_steps=20_000, max_period=16,
                                tol=1e-12)["period"][0]
        share.append(float(np.mean(spread != 1)))
    return {"c": _two_point_cs(budget), "period": np.array(period), "points": np.array(points),
            "multiplier": np.array(mult), "share_cycling": np.array(share)}


@claim("steplab.two_points_cycle_below_2_over_lambda", paper=STEPLAB, provenance="derived", kind="existence",
       source="found here (search over the two-point family), beside meng2024's cycles; the belief it answers is a naive "
              "reading, not a statement of the paper",
       statement="Two distinct data points suffice for a stable cycle below 2/lambda in 1-D: z = (250, -1), weighted so "
                 "that w* puts the point 250 at margin -9, has a stable 3-cycle at eta*lambda = 1.3, 1.5, 1.9 that "
                 "attracts most starts, while w* stays locally attracting. (A counterexample to the naive belief that "
                 "two-point datasets never cycle below 2/lambda and that three distinct magnitudes are needed.)",
       latex=r"z = (250, -1):\ \exists \text{ stable 3-cycle at } \eta\lambda \in \{1.3, 1.5, 1.9\}")
def two_points_cycle(budget: Budget) -> Result:
    """Periods from theory's 3-cycle (+1e-6) and from w* + 1e-3; the simulated 3-cycle against the scipy roots of
    T^3(u) = u; the autodiff multiplier of T^3 against theory's; its modulus below 1.

    Rivals: two-point datasets never cycle below 2/lambda (periods 1, 1: three distinct magnitudes needed); the
    cycle replaces w* (periods 3, 3); the 2-cycle of the bump-plus-spike picture (periods 2, 1).
    """
    data = two_point(budget)
    z, a = th.two_point_dataset(*TWO_POINT)
    _, lam = th.minimizer(z, a)
    theory = np.array([_stable_three_cycle(z, a, c / lam) for c in data["c"]])
    n = len(data["c"])
    checks = [
        Categorical("attractor period from the 3-cycle (+1e-6) and from w* + 1e-3 (rows: ηλ)",
                    measured=data["period"].astype(int), predicted=np.tile([3, 1], (n, 1)),
                    rivals={"two-point datasets never cycle below 2/λ (three distinct magnitudes needed)":
                            np.tile([1, 1], (n, 1)),
                            "the cycle replaces w* as the attractor": np.tile([3, 3], (n, 1)),
                            "a 2-cycle, as in the bump-plus-spike picture": np.tile([2, 1], (n, 1))},
                    why="periods are exact integers (tail tolerance 1e-12 relative)"),
        Exact("simulated 3-cycle points vs the scipy roots of T³(u) = u", predicted=theory[:, :3],
              measured=data["points"], atol=1e-8,
              why="the attractor test stops within 1e-12 relative and the cycle contracts by |(T³)'| ≤ 0.5 per period"),
        Exact("multiplier (T³)' at the simulated cycle (autodiff) vs theory's", predicted=theory[:, 3],
              measured=data["multiplier"], rtol=1e-6, atol=1e-9,
              why="the simulated point is within 1e-9 of the root; the spike's curvature (up to s²J/4 ≈ 30) "
                  "amplifies that by < 1e3"),
        Bound("|(T³)'| of the simulated 3-cycles (stable iff < 1)", measured=np.abs(data["multiplier"]), bound=1.0,
              why="linear stability of the cycle"),
    ]
    return Result(checks, arrays={k: data[k] for k in ("c", "points", "multiplier", "share_cycling")},
                  detail=f"z = (250, −1), weight {a[0]:.3e} on 250: stable 3-cycles at ηλ = "
                         + ", ".join(f"{c:g} (|mult| {abs(m):.3f}, {100 * f:.0f} % of starts)"
                                     for c, m, f in zip(data["c"], data["multiplier"], data["share_cycling"])))


EQUAL_WEIGHTS_ON_PLUS = (0.5, 0.8, 0.95, 0.995, 0.9995)   # z = +-1: w* = log(p/(1-p)) up to 7.6
EQUAL_STARTS = 33


def _equal_setup(budget: Budget) -> tuple[list, np.ndarray]:
    ps = budget.pick(quick=EQUAL_WEIGHTS_ON_PLUS, full=(0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 0.995, 0.999, 0.9995))
    cs = budget.pick(quick=np.array([1.5, 1.9, 1.98]), full=np.array([1.1, 1.5, 1.8, 1.9, 1.95, 1.98]))
    return [([1.0, -1.0], [p, 1 - p]) for p in ps], cs


@experiment("logistic.equal_magnitude")
def equal_magnitude(budget: Budget) -> dict:
    r"""Every start converges? 1-D equal-magnitude data :math:`z = \pm 1` (weights p, 1 - p) at :math:`c < 2`, and
    the two-point dataset :math:`(250, -1)` at the same :math:`c` (contrast).

    ``EQUAL_STARTS`` starts spread over the invariant interval of each dataset (plus :math:`w^\star \pm 0.1`);
    unsettled runs are continued as in the global-convergence experiment.
    """
    sets, cs = _equal_setup(budget)
    sets = sets + [th.two_point_dataset(*TWO_POINT)]
    converged = []
    for z, a in sets:
        w_star, lam = th.minimizer(z, a)
        R = th.orbit_bound_1d(z, a, 2 / lam, w_star[0])
        inits = w_star[0] + np.concatenate([np.linspace(-R, R, EQUAL_STARTS), [-0.1, 0.1]])
        zp, ap = _padded(z, a, GLOBAL_N)
        period, points, _ = _settle(zp, ap, cs / lam, inits)
        at_star = (period == 1) & (np.abs(points[..., 0] - w_star[0]) <= GLOBAL_TOL * (1 + abs(w_star[0])))
        converged.append(np.all(at_star, axis=1))
    return {"c": cs, "converged": np.array(converged), "p": np.array([a[0] for _, a in sets[:-1]])}


@claim("meng2024.equal_magnitude_1d_global_convergence", paper=PAPER, provenance="quoted", kind="qualitative",
       quote="This short paper explores whether restricting the data to have equal magnitude is a sufficient "
             "condition for global convergence, under any step size below the stability threshold. We prove that "
             "this is true in a one dimensional space",
       where="arXiv:2507.11228, abstract (the follow-up)",
       source="follow-up abstract (Meng, Goujaud, Orvieto, De Sa, arXiv 2507.11228)",
       statement="With equal-magnitude data in one dimension (z = +-s, any weights) GD converges globally for every "
                 "eta < 2/lambda, although 1-D data of unequal magnitudes can cycle there.",
       latex=r"d = 1,\ |z_i| = s\ \forall i,\ \eta\lambda < 2 \Rightarrow w_t \to w^\star\ \forall w_0")
def equal_magnitude_claim(budget: Budget) -> Result:
    """Per (dataset, c): does every start in the invariant interval converge to w*? Predicted: yes for the
    equal-magnitude datasets at every c < 2 (up to 1.98), no for the two-point dataset (250, -1), where theory
    finds a stable 3-cycle.

    Rivals: equal-magnitude data cycle above 1/lambda like general 1-D data (only c < 1 converges); every two-point
    dataset converges below 2/lambda (equal magnitudes not needed).
    """
    data = equal_magnitude(budget)
    cs, conv = data["c"], data["converged"]
    n_eq = conv.shape[0] - 1
    is_eq = np.repeat(np.arange(conv.shape[0]) < n_eq, len(cs)).reshape(conv.shape)
    c_item = np.broadcast_to(cs, conv.shape)
    z2, a2 = th.two_point_dataset(*TWO_POINT)
    lam2 = th.minimizer(z2, a2)[1]
    cycles = np.array([np.any(np.abs(th.cycles_1d(z2, a2, c / lam2, 3)[:, -1]) < 1) for c in cs])
    predicted = np.where(is_eq, c_item < 2, ~cycles[None, :])
    check = Count("(dataset, ηλ) items on which every start converges to w* (rows: z = ±1 with weight p on +1, "
                  "then z = (250, −1))", measured=conv.ravel(), predicted=predicted.ravel(),
                  rivals={"equal-magnitude data cycle above ηλ = 1 like general 1-D data":
                          np.where(is_eq, c_item < 1, predicted).ravel(),
                          "every two-point 1-D dataset converges for ηλ < 2 (equal magnitudes not needed)":
                          (c_item < 2).ravel()},
                  why="per-item outcome; a start counts as converged when its attractor is w* (period 1, within 1e-9); "
                      "runs with no period yet are continued up to 1.02e6 steps")
    return Result(check, arrays={"c": cs, "converged": conv, "p": data["p"]},
                  detail=f"{n_eq} equal-magnitude datasets (p = {data['p'].tolist()}) × ηλ = {cs.tolist()}: "
                         f"{int(conv[:n_eq].sum())}/{conv[:n_eq].size} converge globally; z = (250, −1): "
                         f"{int(conv[-1].sum())}/{len(cs)} (theory: stable 3-cycle at every ηλ here)")


# ---------------------------------------------------------------------------------------------
# Follow-up: data on the sphere still cycles in higher dimensions
# ---------------------------------------------------------------------------------------------
SPHERE_STEPS = 20_000   # w* contracts by |1 - c| = 0.995 per step: 1e-3 -> 1e-12 takes ~4.1e3 steps
SPHERE_KICK = 1e-3      # size of the perturbations of the cycle point and of w* (every coordinate)


@experiment("logistic.sphere_cycle")
def sphere_cycle(budget: Budget) -> dict:
    r"""The shipped sphere witness (:func:`theory.logistic.sphere_witness`), re-simulated in :math:`\mathbb{R}^{33}`.

    Attractors (``SPHERE_STEPS`` steps, periods up to 4, tail tolerance 1e-12) from the cycle point, from the
    cycle point plus a random kick of size ``SPHERE_KICK`` in every coordinate (the transverse directions
    included) and from :math:`w^\star` plus such a kick; :math:`\lambda_{\max}` from the autodiff Hessian of
    the JAX loss at :math:`w^\star`; the autodiff Jacobian of :math:`T^2` at the simulated cycle point;
    the norms of the data points. The budget does not change the work: one witness, a few thousand steps.
    """
    w = th.sphere_witness()
    z, a, eta, w_star = w["z"], w["weights"], w["eta"], w["w_star"]
    rng = np.random.default_rng(SEED + 11)
    kicks = SPHERE_KICK * rng.uniform(-1.0, 1.0, size=(2, w["d"]))
    starts = np.stack([w["cycle"][0], w["cycle"][0] + kicks[0], w_star + kicks[1]])
    att = sim.attractors(z, a, [eta], starts, n_steps=SPHERE_STEPS, max_period=4, tol=1e-12)
    pts = att["points"][0, 1, :2]                               # the cycle reached from the kicked start
    first = int(np.argmin(np.linalg.norm(pts - w["cycle"][0], axis=1)))
    pts = np.roll(pts, -first, axis=0)
    lam_autodiff = float(np.linalg.eigvalsh(sim.hessian(w_star, z, a))[-1])
    jac = sim.cycle_jacobian(z, a, eta, pts[0], 2)
    return {"period": att["period"][0], "points": pts, "c": eta * lam_autodiff,
            "radius": float(np.max(np.abs(np.linalg.eigvals(jac)))), "norms": np.linalg.norm(z, axis=1),
            "diverged": att["diverged"][0]}


@claim("meng2024.equal_magnitude_cycle_higher_dim", paper=PAPER, provenance="quoted", kind="existence",
       quote="We prove that this is true in a one dimensional space, but in higher dimensions cycling behaviour "
             "can still occur.",
       where="arXiv:2507.11228, abstract (the follow-up)",
       source="follow-up abstract (Meng, Goujaud, Orvieto, De Sa, arXiv 2507.11228)",
       statement="Equal magnitudes do not save GD in higher dimensions: there is a dataset on the unit sphere on which "
                 "GD with eta < 2/lambda has a stable cycle, while w* stays locally attracting.",
       latex=r"\exists\,(z, a),\ \|z_i\| = 1,\ z_i \in \mathbb{R}^{33}:\ \eta\lambda_{\max} = 1.995 < 2"
             r"\text{ and a stable 2-cycle beside the attracting } w^\star")
def equal_magnitude_cycle_higher_dim(budget: Budget) -> Result:
    """The sphere witness (67 unit vectors in R^33, the lift of a 1-D bump of magnitude 1/6 plus a spike of
    magnitude 1): periods 2, 2, 1 from the cycle point, its kicked copy and a kicked w*; eta*lambda_max by autodiff
    against the design value 1.995 (< 2); the simulated cycle against the Newton-polished orbit; the spectral radius
    of the autodiff Jacobian of T^2 against theory's product of (I - eta H) and below 1; every norm 1.

    Rivals: the 1-D theorem extends to every dimension (periods 1, 1, 1); the cycle is the only attractor (2, 2, 2);
    the orbit is the period-doubling cycle of eta*lambda >= 2 (c = 2); the one-step multiplier |1 - c| (the cycle's
    stability read off w*'s).
    """
    data = sphere_cycle(budget)
    w = th.sphere_witness()
    c, orbit = float(w["c"]), w["cycle"]
    checks = [
        Exact("‖z_i‖ of the witness's 67 data points", predicted=1.0, measured=data["norms"], atol=4e-16,
              why="each row is (z, √(1 − z²)·u) with a unit simplex vertex u, or ±e₁: norm 1 up to float64 round-off "
                  "(a few ulp of 1)"),
        Categorical("attractor period from [cycle point, cycle point + kick, w* + kick] (kicks 1e-3 in all 33 coordinates)",
                    measured=data["period"].astype(int), predicted=[2, 2, 1],
                    rivals={"equal-magnitude data converge globally below 2/λ in every dimension (the 1-D theorem "
                            "extends)": [1, 1, 1],
                            "the cycle is the only attractor": [2, 2, 2]},
                    why="periods are exact integers (tail tolerance 1e-12 relative, 2e4 steps: 0.995^2e4 leaves nothing "
                        "of the kick at w*)"),
        Exact("ηλ_max with λ_max from the autodiff Hessian of the JAX loss at w*", predicted=c,
              measured=float(data["c"]), rtol=1e-10,
              rivals={"the orbit is the period-doubling 2-cycle, which needs ηλ ≥ 2": 2.0},
              why="two float64 Hessians (closed form vs autodiff) at the Newton-polished w*: round-off"),
        Bound("ηλ_max (autodiff) below the stability threshold 2", measured=float(data["c"]), bound=2.0, side="<=",
              why="w* is locally attracting iff |1 − ηλ| < 1 on every Hessian eigenvalue; 1.995 sits 5e-3 below"),
        Exact("simulated 2-cycle points vs the Newton-polished orbit (scipy, T²(x) = x in R³³)", predicted=orbit,
              measured=data["points"], atol=1e-8,
              why="the attractor test stops within 1e-12 relative (scale ~8); the cycle contracts by ≈ 0.95 per period, "
                  "so the stopping error is amplified by at most 1/(1 − 0.95) = 20"),
        Exact("spectral radius of the autodiff Jacobian of T² at the simulated cycle vs Π(I − ηH) at the polished one",
              predicted=float(w["multiplier"]), measured=data["radius"], rtol=1e-6,
              rivals={"the one-step multiplier |1 − c| of w* (the cycle's stability read off the minimizer's)": abs(1 - c)},
              why="the simulated point is within 1e-10 of the root; η·|∇³L| ≲ 300·0.01 amplifies that to ≲ 1e-8 relative"),
        Bound("spectral radius of the autodiff Jacobian of T² (stable iff < 1)", measured=data["radius"], bound=1.0,
              side="<=", why="linear stability of the cycle; the eigenvalues of a 33 × 33 float64 matrix carry ~1e-14 error"),
    ]
    return Result(checks, seed=SEED + 11,
                  arrays={"points": data["points"], "period": data["period"], "radius": data["radius"]},
                  detail=f"{len(w['weights'])} unit vectors in R^{w['d']} (lift of z = (1, ±1/6)); ηλ_max = "
                         f"{float(data['c']):.6f} (autodiff; transverse curvature {w['lam_transverse'] / w['lam_max']:.3f}"
                         f" of λ_max); periods {data['period'].tolist()}; cycle spectral radius {data['radius']:.4f}; "
                         f"max |‖z_i‖ − 1| = {np.max(np.abs(data['norms'] - 1)):.1e}")


# ---------------------------------------------------------------------------------------------
# (c) with power: the bump-plus-spike family pushed to c -> 1, at 0.99 and just above 1
# ---------------------------------------------------------------------------------------------
def _near_setup(budget: Budget) -> list[tuple[float, float]]:
    cps = budget.pick(quick=(1.002, 1.01), full=(1.001, 1.002, 1.005, 1.01))
    # K >= 1e6: the spike (width 1/K) must be much narrower than the cycle's excursion past 0, ~2e-5 at c' = 1.001
    Ks = budget.pick(quick=(1e6, 1e8), full=(1e6, 1e7, 1e8))
    return [(cp, K) for cp in cps for K in Ks]


def _near_cs(budget: Budget) -> list[float]:
    return budget.pick(quick=[0.99], full=[0.99, 0.995, 0.999])


@experiment("logistic.near_critical_1d")
def near_critical_1d(budget: Budget) -> dict:
    r"""Bump-plus-spike datasets built for :math:`c' \in (1, 1.01]` (spike :math:`K` up to :math:`10^8`) run at
    :math:`c < 1` and at :math:`c'`.

    Starts: 13 in [-30, 30], :math:`w^\star \pm 0.1`, and the two points of theory's 2-cycle at :math:`c'`
    moved inwards by :math:`10^{-6}` of its diameter (inside its basin where it exists). Per item (dataset,
    c): whether every start converges, and the 2-cycle reached by the others.
    """
    item_c, item_cp, item_K, converged, cyc = [], [], [], [], []
    for cp, K in _near_setup(budget):
        d = th.cycle_dataset(cp, K=K)
        uv, _ = th.solve_two_cycle(d["z"], d["weights"], d["eta"], [d["u"], d["v"]])
        u, v = np.sort(uv)
        inits = np.concatenate([GLOBAL_INITS, d["w_star"] + np.array([-0.1, 0.1]),
                                [u + 1e-6 * (v - u), v - 1e-6 * (v - u)]])
        cs = _near_cs(budget) + [cp]
        zp, ap = _padded(d["z"], d["weights"], GLOBAL_N)
        period, points, _ = _settle(zp, ap, np.array(cs) / d["lam"], inits)
        for i, c in enumerate(cs):
            at_star = (period[i] == 1) & (np.abs(points[i, :, 0] - d["w_star"]) <= GLOBAL_TOL * (1 + abs(d["w_star"])))
            two = np.flatnonzero(period[i] == 2)
            item_c.append(c)
            item_cp.append(cp)
            item_K.append(K)
            converged.append(bool(np.all(at_star)))
            cyc.append(np.sort(points[i, two[0]]) if two.size else [np.nan, np.nan])
    return {"c": np.array(item_c), "c_built": np.array(item_cp), "K": np.array(item_K),
            "converged": np.array(converged), "cycle": np.array(cyc)}


@claim("meng2024.global_convergence_1d_threshold_near_critical", paper=PAPER, provenance="quoted", kind="qualitative",
       quote="In one dimension, we show that a step size less than 1/λ suffices for global convergence. However, "
             "for all step sizes between 1/λ and the critical step size 2/λ, one can construct a dataset such that "
             "GD converges to a stable cycle.",
       where="arXiv:2406.05033, abstract",
       source="abstract",
       statement="The 1-D global-convergence threshold is exactly 1/lambda: datasets built to cycle as close above "
                 "eta*lambda = 1 as 1.002 (spikes up to K = 1e8) still converge from every start at 0.99, and cycle "
                 "at their own c' > 1.",
       latex=r"d = 1:\ \eta\lambda < 1 \Rightarrow w_t \to w^\star;\ \forall c' > 1\ \exists \text{ a stable 2-cycle}")
def global_convergence_near_critical(budget: Budget) -> Result:
    """Per (dataset, c): every start converges? Predicted iff c < 1. Hard items: bump-plus-spike datasets built for
    c' in {1.002, 1.01} (full: 1.001 to 1.01) with K = 1e6, 1e8 (full: 1e6, 1e7, 1e8), at c = 0.99 (full: also 0.995,
    0.999) and at c' (the positive control); the cycle reached at c' against the exact cycle equations.

    Rivals: the threshold sits at 0.98 (a margin below 1/lambda) or at 1.005 (just above, beyond the controls at
    1.002): any threshold outside [0.99, 1.002] is rejected.
    """
    data = near_critical_1d(budget)
    c, conv = data["c"], data["converged"].astype(bool)
    count = Count("(dataset, ηλ) items on which every start converges to w*", measured=conv, predicted=c < 1,
                  rivals={"the 1-D global threshold is ηλ = 0.98": c < 0.98,
                          "the 1-D global threshold is ηλ = 1.005": c < 1.005},
                  why="per-item outcome; a start counts as converged when its attractor is w* (period 1, within 1e-9)")
    above = c > 1
    exact = []
    for cp, K in zip(data["c_built"][above], data["K"][above]):
        d = th.cycle_dataset(float(cp), K=float(K))
        exact.append(np.sort(th.solve_two_cycle(d["z"], d["weights"], d["eta"], [d["u"], d["v"]])[0]))
    cyc = Exact("2-cycle (u, v) reached at c' vs the exact cycle equations (scipy)", predicted=np.array(exact),
                measured=data["cycle"][above], atol=1e-9,
                why="the attractor test stops within 1e-12 relative; the cycle contracts by (1 − c')² ≤ 1e-4 per period")
    return Result([count, cyc], arrays={"c": c, "converged": conv},
                  detail=f"{int(above.sum())} datasets (c' ∈ {sorted(set(data['c_built'].tolist()))}, K ∈ "
                         f"{sorted(set(data['K'].tolist()))}): all starts converge at ηλ < 1 on "
                         f"{int(conv[~above].sum())}/{int((~above).sum())} items; cycles at c' on "
                         f"{int((~conv[above]).sum())}/{int(above.sum())}")


# ---------------------------------------------------------------------------------------------
# Experiments read only by the figures
# ---------------------------------------------------------------------------------------------
@experiment("logistic.bifurcation")
def bifurcation(budget: Budget) -> dict:
    """Bifurcation diagrams: the cascade dataset over c in [1.5, 3.1]; the c' = 1.5 witness over c in [0.6, 2.4]."""
    n_c = budget.pick(quick=120, full=700)
    z, a = CASCADE
    w_star, lam = th.minimizer(z, a)
    cs1 = np.linspace(1.5, 3.1, n_c)
    tail1 = sim.gd(z, a, cs1 / lam, [w_star[0] + 0.3], 6000, keep_last=64)["w"][:, 0, :, 0]
    d = th.cycle_dataset(1.5)
    cs2 = np.linspace(0.6, 2.4, n_c)
    tail2 = sim.gd(d["z"], d["weights"], cs2 / d["lam"], [d["w_star"] + 1e-3, d["u"]], 6000, keep_last=16)["w"][..., 0]
    return {"c_cascade": cs1, "tail_cascade": tail1, "c_witness": cs2, "tail_witness": tail2}


@experiment("logistic.basin")
def basin(budget: Budget) -> dict:
    """Attractor period over (c in [0.8, 2.8]) x (start in w* + [-0.4, 0.4]) on the c' = 1.5 witness."""
    n = budget.pick(quick=60, full=240)
    d = th.cycle_dataset(1.5)
    cs = np.linspace(0.8, 2.8, n)
    inits = d["w_star"] + np.linspace(-0.4, 0.4, n)
    att = sim.attractors(d["z"], d["weights"], cs / d["lam"], inits, n_steps=6000, max_period=8)
    return {"c": cs, "inits": inits, "period": att["period"]}


@experiment("logistic.amplitudes")
def amplitudes(budget: Budget) -> dict:
    """2-cycle half-width at c = 2 + mu, mu log-spaced on [1e-4, 0.2], for the 0.3/0.7 and 0.75/0.25 datasets."""
    mus = np.logspace(-4, -0.7, budget.pick(quick=6, full=14))
    out = {"mu": mus}
    for tag, (z, a) in {"asymmetric": ASYMMETRIC, "cascade": CASCADE}.items():
        w_star, lam = th.minimizer(z, a)
        att = sim.attractors(z, a, (2 + mus) / lam, [w_star[0] + 0.05], n_steps=120_000, max_period=2, tol=1e-11)
        pts = att["points"][:, 0, :2, 0]
        out[tag] = np.where(att["period"][:, 0] == 2, (pts.max(1) - pts.min(1)) / 2, np.nan)
    return out


@experiment("logistic.cobweb")
def cobweb(budget: Budget) -> dict:
    """GD from w = 0.05 for 40 steps on the c' = 1.5 witness (the cobweb path)."""
    d = th.cycle_dataset(1.5)
    start = 0.05
    traj = sim.gd(d["z"], d["weights"], [d["eta"]], [start], 40)["w"][0, 0, :, 0]
    return {"trajectory": np.concatenate([[start], traj])}


@experiment("logistic.witness_trajectory")
def witness_trajectory(budget: Budget) -> dict:
    """GD from the 2-D witness's cycle point + (0.03, 0.02) for 30 steps."""
    w = th.witness_2d()
    start = w["cycle_point"] + np.array([0.03, 0.02])
    traj = sim.gd(w["z"], w["weights"], [w["eta"]], start[None], 30)["w"][0, 0]
    return {"trajectory": np.concatenate([start[None], traj])}


@experiment("logistic.two_point_bifurcation")
def two_point_bifurcation(budget: Budget) -> dict:
    """Bifurcation diagram of the two-point dataset z = (250, -1) over c in [1, 2], from w* + 1e-3 and w* - 2."""
    z, a = th.two_point_dataset(*TWO_POINT)
    zp, ap = _padded(z, a, GLOBAL_N)
    w_star, lam = th.minimizer(z, a)
    cs = np.linspace(1.0, 2.0, budget.pick(quick=120, full=600))
    tail = sim.gd(zp, ap, cs / lam, [w_star[0] + 1e-3, w_star[0] - 2.0], 6000, keep_last=16)["w"][..., 0]
    return {"c": cs, "tail": tail, "w_star": float(w_star[0])}


@experiment("logistic.sphere_trajectory")
def sphere_trajectory(budget: Budget) -> dict:
    """GD on the sphere witness from the cycle point + 0.5 (e1 + e2) and from w* + 0.5 (e1 + e2), 300 steps each."""
    w = th.sphere_witness()
    kick = np.zeros(w["d"])
    kick[:2] = 0.5
    starts = np.stack([w["cycle"][0] + kick, w["w_star"] + kick])
    traj = sim.gd(w["z"], w["weights"], [w["eta"]], starts, 300)["w"][0]
    return {"trajectory": np.concatenate([starts[:, None], traj], axis=1)}
