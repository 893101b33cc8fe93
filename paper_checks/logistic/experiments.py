r"""The simulations of topic ``logistic``: every named, cached, budgeted experiment behind the checks of Meng, Orvieto,
Cao, De Sa (2024) and its follow-up, and the ones the figures draw.

Each runs the JAX simulator :mod:`sims.logistic` on datasets built here or by :mod:`theory.logistic` (the random
non-separable datasets, the bump-plus-spike witnesses, the 2-D ping-pong and sphere witnesses, the cascade and
balanced data) and returns its summaries; the claim modules of :mod:`paper_checks.logistic` and ``figures/logistic.py``
read them. The experiments sit beside the constants that set their grids, starts and seeds, in the order of the claim
modules that read them (a comment names the module); helpers that a claim needs as well as its experiment (the
dataset lists :func:`_local_datasets`, :func:`_global_setup`, :func:`_cycle_witness`, :func:`_normal_form_sets`, the
cascade's :func:`cascade_points`, :func:`_stable_three_cycle`, ...) live here too. Editing a range here changes the
topic's code version and recomputes.

Longer than a theme module's ~400 lines because it holds all twenty-one experiments of the topic in one module, the
single place the figures and the claims read them from; each experiment is short.
"""
from __future__ import annotations

import functools

import numpy as np

import sims.logistic as sim
import theory.logistic as th
from paper_checks import Budget, experiment


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


# ====================================================================== (a) loss of local stability at c = 2 (local.py)
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


# ========================================================================= (b) local convergence below c = 2 (local.py)
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


# ============================================================= (c) global convergence in 1-D below c = 1 (global_1d.py)
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


# ================================================================ (d) stable 2-cycles for every c in (1, 2) (cycles.py)
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


# ========================================================= (e) a stable cycle below c = 1 in two dimensions (cycles.py)
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


# ==================================================== the flip normal form and the second period doubling (doubling.py)
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


# ========================================================== balanced data: one stable 2-cycle, no cascade (doubling.py)
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


# =================================================== the period-doubling cascade and the Feigenbaum ratio (doubling.py)
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


# ============================================================================= only c = eta * lambda matters (scale.py)
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


# ====================================================================== two points cycle below 2/lambda (two_points.py)
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


# ============================================== the follow-up: equal magnitudes converge globally in 1-D (follow_up.py)
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


# ========================================================= the follow-up: data on the sphere still cycle (follow_up.py)
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


# ======================================= (c) with power: the bump-plus-spike family pushed to c -> 1 (near_critical.py)
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


# ================================================================================= experiments read only by the figures
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
