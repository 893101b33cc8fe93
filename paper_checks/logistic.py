r"""Meng, Orvieto, Cao, De Sa (2024): GD on logistic regression with non-separable data and large steps.

Claims (a)-(e) of the paper's abstract, plus two derived ones (the flip normal form and the
second period doubling). Each pairs a closed form from :mod:`theory.logistic`
(numpy/scipy/sympy, float64) with the JAX simulator :mod:`sims.logistic`, and names the most
plausible wrong statement as a rival evaluated on the same measurement. The witnesses (the 1-D
bump-plus-spike family, the 2-D ping-pong dataset) and the normal-form constants are derived here.
Step sizes are written :math:`\eta` (the paper's :math:`\gamma`) and :math:`c = \eta\lambda`.

Every simulation is a named experiment (``logistic.<name>``): claims and figures read them, and
their grids live here, so editing a range changes the topic's code version and recomputes.
"""
from __future__ import annotations

import numpy as np

import sims.logistic as sim
import theory.logistic as th
from paper_checks import Bound, Budget, Categorical, Count, Exact, Paper, Result, claim, experiment

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
