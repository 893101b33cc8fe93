r"""Lewkowycz, Bahri, Dyer, Sohl-Dickstein, Gur-Ari (2020): the catapult phase of large-step-size GD.

The uv model :math:`f = u^\top v/\sqrt m` with one sample (label 0, loss :math:`\tfrac12 f^2`) closes on
:math:`(f, \lambda)` (:func:`theory.eos.catapult_map`): lazy for :math:`\eta\lambda_0 < 2`, a loss spike and
a curvature drop below :math:`2/\eta` for :math:`2 < \eta\lambda_0 < 4`, divergence above 4. Simulated
with the full :math:`m`-dimensional GD of :func:`sims.eos.catapult_gd`.
"""
from __future__ import annotations

import numpy as np

import theory.eos as th
from paper_checks import STEPLAB, Bound, Categorical, Count, Exact, Paper, Rate, Result, claim
from paper_checks.eos import experiments as E

PAPER = Paper(key="lewkowycz2020", title="The Large Learning Rate Phase of Deep Learning: the Catapult Mechanism",
              authors="A. Lewkowycz, Y. Bahri, E. Dyer, J. Sohl-Dickstein, G. Gur-Ari", year=2020, arxiv="2003.02218")

# The lazy phase moves the curvature by O(f0^2/m): at the widths used (>= 256) that is about 1 % or less; 5 % is
# the resolution at which "the curvature stays put" is asserted.
LAZY_RTOL = 0.05


def measured_phase(diverged, max_loss_ratio) -> np.ndarray:
    """``divergent`` if the run diverged, ``catapult`` if the loss ever rose above its start, else ``lazy``."""
    return np.where(diverged, "divergent", np.where(max_loss_ratio > 1.0 + 1e-12, "catapult", "lazy"))


@claim("lewkowycz2020.catapult_phases", paper=PAPER, provenance="quoted", kind="qualitative",
       source="Sec. 2.1 (the warmup uv model: lazy, catapult and divergent phases)",
       quote="Two learning rates that will be important in the analysis are $\\eta_{crit} = {2/\\lambda_{0}}$ and "
             "$\\eta_{\\max} = {4/\\lambda_{0}}$. / Once the curvature drops below $2/\\eta$, training converges, "
             "ultimately reaching a minimum that is flatter than those found in the lazy phase.",
       where="arXiv:2003.02218, Sec. 2.1 ('Warmup: a simplified model') / Sec. 1.3 ('Catapult phase' paragraph)",
       statement="In the uv model with one sample, GD is lazy (monotone loss, curvature unchanged) for eta*lambda0 < 2; "
                 "for 2 < eta*lambda0 < 4 the loss spikes and training converges with final eta*lambda < 2; above 4 it "
                 "diverges.",
       latex=r"\eta\lambda_0<2:\ \text{lazy};\ 2<\eta\lambda_0<4:\ \text{catapult},\ \eta\lambda_\infty<2;\ "
             r"\eta\lambda_0>4:\ \text{divergent}")
def catapult_phases(budget) -> Result:
    r"""Phase of every run (coarse grid of eta*lambda0 x seeds, widest network) against :func:`theory.eos.catapult_phase`.

    The measured phase uses only the loss trace and the divergence flag (:func:`measured_phase`). Rival:
    the quadratic (lazy, NTK) picture, converging iff :math:`\eta\lambda_0 < 2`. Bounds: catapult runs end
    with :math:`\eta\lambda < 2`; lazy runs keep :math:`\eta\lambda` within ``LAZY_RTOL`` of :math:`\eta\lambda_0`.
    """
    ex = E.catapult(budget)
    w = int(np.argmax(ex["widths"]))
    nc = int(ex["n_coarse"])
    cs = ex["c"][:nc]
    phase = measured_phase(ex["diverged"][w, :nc], ex["max_loss_ratio"][w, :nc])
    predicted = np.array([[th.catapult_phase(c)] * phase.shape[1] for c in cs])
    quadratic = np.where(cs[:, None] < th.catapult_edges()[0], "lazy", "divergent") * np.ones_like(phase, dtype=object)
    final = ex["final_eta_lambda"][w, :nc]
    cat = predicted == "catapult"
    lazy = predicted == "lazy"
    checks = [
        Categorical("phase of each run (eta*lambda0 x seed)", measured=phase, predicted=predicted,
                    rivals={"quadratic model: converges iff eta*lambda0 < 2": quadratic.astype(str)},
                    why="phases read from the loss trace (any rise above the start) and the divergence flag"),
        Bound("final eta*lambda of catapult-phase runs", measured=final[cat], bound=2.0, side="<=",
              why="converged runs must end below the stability edge 2 of their final curvature"),
        Bound("|final eta*lambda / eta*lambda0 - 1| of lazy-phase runs", measured=np.abs(final[lazy] / cs[:, None].repeat(
            phase.shape[1], 1)[lazy] - 1), bound=LAZY_RTOL, side="<=",
              why=f"the lazy phase moves the curvature by O(f0^2/m), about 1 % or less at m = {int(ex['widths'][w])}"),
    ]
    detail = (f"m = {int(ex['widths'][w])}, {phase.shape[1]} seeds, eta*lambda0 in {cs.tolist()}: "
              + ", ".join(f"{c:g}->{'/'.join(sorted(set(p)))}" for c, p in zip(cs, phase))
              + f"; final eta*lambda in the catapult phase {np.nanmin(final[cat]):.3f}-{np.nanmax(final[cat]):.3f}")
    return Result(checks, detail=detail, arrays={"c": cs, "phase": phase, "final_eta_lambda": final}, seed=E.SEED)


@claim("lewkowycz2020.divergence_edge_at_four", paper=PAPER, provenance="quoted", kind="exact",
       source="Sec. 2, 'Divergent phase' (the uv model's maximal step eta = 4/lambda0)",
       quote="when $\\eta > \\eta_{\\max}$ the loss diverges because the kernel receives positive updates, "
             "accelerating the rate of growth of the function. Therefore, $\\eta_{\\max} = {4/\\lambda_{0}}$ is the "
             "maximum learning rate of the model.",
       where="arXiv:2003.02218, Sec. 2, 'Divergent phase' (warmup model of Sec. 2.1)",
       statement="The largest trainable step of the uv model is eta*lambda0 = 4, twice the quadratic model's 2; for this "
                 "model (one sample, label 0) the edge is exactly 4 at every width, since lambda grows whenever "
                 "eta*lambda > 4.",
       latex=r"\lambda^+ - \lambda = \tfrac{\eta f^2}{m}(\eta\lambda - 4) \Rightarrow (\eta\lambda_0)_{\max} = 4")
def divergence_edge_at_four(budget) -> Result:
    """Fine grid of eta*lambda0 around 4 (step 0.01) at several widths: where GD starts to diverge.

    Located edge per width: midpoint between the largest value where no seed diverges and the smallest
    where one does (half a grid step of resolution). Rival: the quadratic model's edge 2.
    """
    ex = E.catapult(budget)
    nc, h = int(ex["n_coarse"]), float(ex["h"])
    cs = ex["c"][nc:]
    div = ex["diverged"][:, nc:]            # (width, c, seed)
    any_div = div.any(axis=2)
    edges = []
    for row in any_div:
        k = int(np.argmax(row)) if row.any() else len(row)
        edges.append(0.5 * (cs[k - 1] + cs[k]) if 0 < k < len(cs) else np.nan)
    edges = np.array(edges)
    edge = th.catapult_edges()[1]
    pred = np.broadcast_to(cs[None, :, None] > edge, div.shape)
    checks = [
        Exact("located divergence edge in eta*lambda0, per width", predicted=np.full(edges.size, edge), measured=edges,
              atol=h / 2, rivals={"the quadratic model's edge eta*lambda0 = 2": np.full(edges.size, 2.0)},
              why=f"located between two grid points {h} apart: half a step is the resolution"),
        Count("runs diverging exactly when eta*lambda0 > 4 (all widths and seeds)", measured=div.ravel(),
              predicted=pred.ravel(), rivals={"every run above eta*lambda0 = 2 diverges": np.ones(div.size, bool)},
              why="lambda rises at every step with eta*lambda > 4, so f can never settle"),
    ]
    detail = "located edges: " + ", ".join(f"m = {int(m)}: {e:.3f}" for m, e in zip(ex["widths"], edges))
    return Result(checks, detail=detail, arrays={"widths": ex["widths"], "edges": edges}, seed=E.SEED)


def flatness_ratio(final_eta_lambda, eta_lambda0) -> np.ndarray:
    r""":math:`\lambda_\infty/\lambda_0 = (\eta\lambda_\infty)/(\eta\lambda_0)`: the final curvature in units of the initial one
    (one seed shares :math:`\lambda_0` across step sizes, so along a seed this is the final curvature itself, rescaled)."""
    return np.asarray(final_eta_lambda, float) / np.asarray(eta_lambda0, float)


def first_local_minimum(x: np.ndarray, y: np.ndarray) -> float:
    """``x`` at the first sample of ``y`` below both neighbours (the end of the first decreasing stretch); NaN if none."""
    y = np.asarray(y, float)
    k = np.flatnonzero((y[1:-1] < y[:-2]) & (y[1:-1] < y[2:]))
    return float(x[k[0] + 1]) if k.size else float("nan")


def predicted_final(c: np.ndarray, z0: np.ndarray, n_steps: int) -> np.ndarray:
    """The closed-form map's eta*lambda after ``n_steps`` for each (eta*lambda0, seed) of the experiment (shape of z0)."""
    cs = np.repeat(np.asarray(c, float), z0.shape[1])
    out = th.catapult_trajectory(cs, np.asarray(z0, float).ravel(), n_steps)["eta_lambda"][:, -1]
    return out.reshape(z0.shape)


# round-off of the m-dimensional run: float64 (1e-16) amplified through the spike, where the map's Jacobian products
# reach ~1e5 on this grid (the runs and the map agree to 2e-11 at worst at the quick budget); 1e-9 in eta*lambda keeps
# a factor 50 above that and is 1e-7 of the smallest rival gap
CATAPULT_ATOL = 1e-9
FINE_H = 0.002  # the grid on which the closed form's first minimum is located (a tenth or less of the runs' grid)


@claim("lewkowycz2020.catapult_converges_to_flatter_minima", paper=PAPER, provenance="quoted", kind="exact",
       source="abstract",
       quote="At large learning rates the model captures qualitatively distinct phenomena, including the convergence "
             "of gradient descent dynamics to flatter minima.",
       where="arXiv:2003.02218, abstract",
       statement="In the catapult phase of the uv model (2 < eta*lambda0 < 4) GD converges to a flatter minimum than it "
                 "starts from: the final eta*lambda is the closed-form (f, lambda) map's, below both eta*lambda0 (where "
                 "the lazy phase ends) and the stability edge 2.",
       latex=r"2 < \eta\lambda_0 < 4:\ \eta\lambda_\infty = \Phi^{T}(z_0, \eta\lambda_0)_c < 2 < \eta\lambda_0")
def catapult_converges_to_flatter_minima(budget) -> Result:
    r"""Final :math:`\eta\lambda` of the m-dimensional GD runs against the closed-form map iterated from each run's start.

    Each run of :func:`paper_checks.eos.experiments.catapult_curvature` (eta*lambda0 from 2.05 to 3.95, four seeds at
    quick) starts at :math:`(z_0, c_0)` = :math:`(\eta^2f_0^2/m, \eta\lambda_0)`; :func:`theory.eos.catapult_trajectory`
    iterates the exact two-variable map for the same 400 steps. Rivals: the curvature stays at its initial value
    (the lazy, NTK picture: :math:`\eta\lambda_\infty = \eta\lambda_0`); GD lands at the edge of stability
    (:math:`\eta\lambda_\infty = 2`). A bound checks every final :math:`\eta\lambda` is below 2.
    """
    ex = E.catapult_curvature(budget)
    c, z0, fin = ex["c"], ex["z0"], ex["final_eta_lambda"]
    if np.any(ex["diverged"]):
        raise RuntimeError("a catapult-phase run diverged")
    pred = predicted_final(c, z0, int(ex["n_steps"]))
    c0 = np.broadcast_to(c[:, None], fin.shape)
    checks = [
        Exact("final eta*lambda per run (eta*lambda0 x seed)", predicted=pred, measured=fin, atol=CATAPULT_ATOL,
              rivals={"the curvature stays put (lazy/NTK): eta*lambda0": c0,
                      "GD lands at the edge of stability: eta*lambda = 2": np.full(fin.shape, 2.0)},
              why="float64 round-off of the m-dimensional run amplified through the spike (the map's Jacobian products "
                  "reach ~1e5; runs and map agree to 2e-11): 1e-9 in eta*lambda"),
        Bound("final eta*lambda of every run", measured=fin, bound=2.0, side="<=",
              why="a converged run's final curvature must be stable, eta*lambda <= 2"),
    ]
    ratio = flatness_ratio(fin, c0)
    detail = (f"m = {int(ex['width'])}, {fin.shape[1]} seeds, eta*lambda0 = {c[0]:g}..{c[-1]:g} (step {float(ex['h']):g}): "
              f"lambda_final/lambda0 from {np.nanmax(ratio):.3f} to {np.nanmin(ratio):.4f}; max |run - map| = "
              f"{np.nanmax(np.abs(fin - pred)):.1e}")
    return Result(checks, detail=detail, arrays={"c": c, "final_eta_lambda": fin, "predicted": pred}, seed=E.SEED)


@claim("steplab.catapult_flattening_window", paper=STEPLAB, provenance="derived", kind="exact",
       source="derived here from the uv model's closed-form (f, lambda) map (lewkowycz2020's model)",
       statement="In the uv model the final curvature after the catapult, lambda_final/lambda0, falls steadily as the step "
                 "grows only over the lower part of the catapult phase: from eta*lambda0 = 2 to the closed form's first "
                 "minimum near 3.1-3.2 (where lambda_final nearly vanishes); above it, up to 4, it rises and falls "
                 "erratically with eta and with the start.",
       latex=r"\frac{d}{d\eta}\lambda_\infty < 0 \text{ for } 2 < \eta\lambda_0 < c_b \approx 3.15;\ "
             r"\text{non-monotone on } (c_b, 4)")
def catapult_flattening_window(budget) -> Result:
    r"""Where the final curvature stops decreasing with the step: the first local minimum of :math:`\lambda_\infty/\lambda_0`.

    Per seed (one :math:`\lambda_0`, so :math:`\lambda_\infty/\lambda_0` is the final curvature up to a constant): the
    first grid point of the runs' :math:`\lambda_\infty/\lambda_0` below both neighbours, against the same rule
    applied to the closed-form map's (:func:`theory.eos.catapult_trajectory` from each run's start); the detail adds
    the closed form's first minimum on a grid of step ``FINE_H`` (the grid's own error). Rivals: the curvature falls
    across the whole catapult phase (first minimum at its divergent edge, 4); no falling stretch at all (first
    minimum at the phase's lower edge, 2). Counts: below the located minimum every step up lowers
    :math:`\lambda_\infty/\lambda_0` (the window where the statement holds); above it, some step up raises it (where it
    breaks).
    """
    ex = E.catapult_curvature(budget)
    c, z0, fin, h = ex["c"], ex["z0"], ex["final_eta_lambda"], float(ex["h"])
    ratio = flatness_ratio(fin, c[:, None])
    n_seeds = fin.shape[1]
    located = np.array([first_local_minimum(c, ratio[:, s]) for s in range(n_seeds)])
    # the closed form on the runs' grid (same rule, same points) and, for the record, on a grid FINE_H apart
    pred = flatness_ratio(predicted_final(c, z0, int(ex["n_steps"])), c[:, None])
    theory_min = np.array([first_local_minimum(c, pred[:, s]) for s in range(n_seeds)])
    fine = np.round(np.arange(c[0], c[-1] + FINE_H / 2, FINE_H), 10)
    fine_min = np.empty(n_seeds)
    for s in range(n_seeds):
        # the closed form at this seed's start: eta*lambda0 varies along the seed, f0^2/lambda0^2 is fixed
        z = z0[0, s] * (fine / c[0]) ** 2
        end = th.catapult_trajectory(fine, z, int(ex["n_steps"]))["eta_lambda"][:, -1]
        fine_min[s] = first_local_minimum(fine, flatness_ratio(end, fine))
    below = [np.diff(ratio[c <= m, s]) < 0 for s, m in enumerate(located)]
    above = np.array([bool(np.any(np.diff(ratio[c >= m, s]) > 0)) for s, m in enumerate(located)])
    checks = [
        Exact("first local minimum of lambda_final/lambda0 over eta*lambda0, per seed", predicted=theory_min,
              measured=located, atol=h / 2,
              rivals={"the curvature falls across the whole catapult phase (minimum at 4)": np.full(n_seeds, 4.0),
                      "no falling stretch (minimum at the catapult's start, 2)": np.full(n_seeds, 2.0)},
              why=f"both located by the same rule on the same grid (step {h:g}): they agree or differ by a whole step, "
                  "so half a step separates agreement from a moved minimum"),
        Count("steps up in eta*lambda0 below the located minimum that lower lambda_final/lambda0 (all seeds)",
              measured=np.concatenate(below), predicted=True,
              rivals={"the final curvature does not depend on eta (lambda_final = lambda0 throughout)":
                      np.zeros(sum(b.size for b in below), bool)},
              why="the window where the flattening is monotone"),
        Count("seeds whose lambda_final/lambda0 rises again above the located minimum (the window's end)",
              measured=above, predicted=True,
              rivals={"monotone flattening up to eta*lambda0 = 4": np.zeros(n_seeds, bool)},
              why="the window ends inside the catapult phase"),
    ]
    detail = (f"m = {int(ex['width'])}, {n_seeds} seeds: first minimum located at {located.tolist()} (closed form on "
              f"the same grid {theory_min.tolist()}, on a grid {FINE_H:g} apart {np.round(fine_min, 3).tolist()}); "
              f"lambda_final/lambda0 there "
              f"{np.round([ratio[c == m, s][0] for s, m in enumerate(located)], 4).tolist()}")
    return Result(checks, detail=detail, arrays={"c": c, "ratio": ratio, "predicted": pred, "located": located,
                                                 "theory_min": theory_min, "fine_min": fine_min}, seed=E.SEED)


def peak_step(loss: np.ndarray) -> np.ndarray:
    """Step of the largest loss along the last axis (the catapult's peak)."""
    return np.argmax(np.asarray(loss, float), axis=-1)


@claim("lewkowycz2020.catapult_time_grows_like_log_width", paper=PAPER, provenance="quoted", kind="rate",
       source="Sec. 1.3 and Sec. 2.1 (the catapult lasts of order log(n) steps, n the width); the slope 2.74 is "
              "derived here from the closed-form (z, c) map, not stated by the paper",
       quote="This initial period lasts for a number of training steps that is of order $\\log{(n)}$, where $n$ is the "
             "network width",
       where="arXiv:2003.02218, Sec. 1.3 ('Catapult phase' paragraph); also Sec. 2.1 ('After $t \\sim {\\log{(n)}}$ "
             "steps, $|f_{t}|$ grows to order $n^{1/2}$')",
       statement="In the uv model the catapult lasts of order log n steps, width n in the paper's notation (m here): "
                 "steplab derives that at eta*lambda0 = 2.2 the loss peaks after ln(1/z0)/ln((eta*lambda0 - 1)^2) + O(1) "
                 "steps, z0 = eta^2 f0^2/m, i.e. like log m at slope 1/ln((eta*lambda0 - 1)^2) = 2.74 steps per e-fold "
                 "of 1/z0 (the paper gives the order only, no constant).",
       latex=r"t_{\mathrm{peak}} = \frac{\ln(1/z_0)}{\ln(\eta\lambda_0 - 1)^2} + O(1),\quad z_0 = \eta^2f_0^2/m")
def catapult_time_grows_like_log_width(budget) -> Result:
    r"""Step of the loss peak of every run (widths x seeds) against :math:`\ln(1/z_0)`, the slope fitted over all runs.

    :math:`z_0 = \eta^2 f_0^2/m` carries the width (and each start's :math:`f_0`, which scatters the peaks of one
    width by several steps). Predicted slope :math:`1/\ln g`, :math:`g` = :func:`theory.eos.catapult_growth_factor`
    (:math:`(1 - \eta\lambda_0)^2`: the loss scale's growth per step while it is small). ``next_order``: the peak is
    read at whole steps, up to one step from the continuous one (:func:`paper_checks.eos.central_flow.sampling_bias_bound`
    of width 1). Rivals: the duration does not depend on the width (slope 0); the output's growth factor
    :math:`|1 - \eta\lambda_0|` used for the loss's (slope :math:`1/\ln|1 - \eta\lambda_0|`, twice the prediction).
    """
    from paper_checks.eos.central_flow import sampling_bias_bound

    ex = E.catapult_time(budget)
    if np.any(ex["diverged"]):
        raise RuntimeError("a catapult-time run diverged")
    c = float(ex["c"])
    x = np.log(1.0 / ex["z0"]).ravel()
    y = peak_step(ex["loss"]).astype(float).ravel()
    slope = 1.0 / np.log(th.catapult_growth_factor(c))
    check = Rate("steps to the loss peak per unit of ln(1/z0), z0 = eta^2 f0^2/m (all widths and seeds)", x=x, y=y,
                 predicted=slope, log=False, next_order=sampling_bias_bound(x, 1.0),
                 rivals={"the catapult's duration does not depend on the width (slope 0)": 0.0,
                         "the output's growth |1 - eta lambda0| per step taken for the loss's (slope 1/ln|1 - c|)":
                         1.0 / np.log(abs(1.0 - c))},
                 why=f"SE of the least-squares slope over {y.size} runs; next_order bounds reading the peak at whole steps")
    peaks = peak_step(ex["loss"])
    detail = (f"eta*lambda0 = {c:g}, widths {ex['widths'].tolist()}, {peaks.shape[1]} seeds: mean peak step per width "
              f"{np.round(peaks.mean(axis=1), 1).tolist()}; fitted {check.slope:.3f} +- {check.se:.3f} steps per e-fold "
              f"(predicted {slope:.3f})")
    return Result([check], detail=detail, arrays={"x": x, "y": y, "widths": ex["widths"], "fit": np.array([check.slope,
                                                                                                          check.se])},
                  seed=E.SEED)


RELU_QUOTE = ("For networks with ReLU non-linearity we find empirically that $c_{{act}.} \\approx 12$. / we find that "
              "$\\eta_{\\max} \\approx {12/\\lambda_{0}}$ is a good predictor of the maximum learning rate")
RELU_WHERE = ("arXiv:2003.02218, Sec. 1.3 ('Catapult phase' paragraph) / Sec. 3 ('Early time curvature dynamics'); "
              "eta_crit = 2/lambda0 as the linear model's edge: Discussion")
RELU_C = 12.0
# the paper states c_act as "approximately" 12 ("≈ 12", one value "for all network that use ReLU non-linearity", a
# constant that "depends only weakly on other details of the architecture"): a two-digit round number, so the
# neighbouring round values a reader would have written instead, 10 and 14, bound what "≈ 12" can mean: the paper's
# value of |c_max - 12| is at most 2
RELU_BAND = 2.0
# steplab's own, weaker reading: the edge is nearer the paper's 12 than the uv model's 4 (their midpoint is 8, and 16
# mirrors it above), i.e. |c_max - 12| <= 4
RELU_NEARER = 0.5 * (RELU_C - 4.0)
RELU_ALL_QUOTE = ("We find that $c_{{act}.} \\approx 12$ for all network that use ReLU non-linearity, and it seems this "
                  "parameter depends only weakly on other details of the architecture.")
RELU_ALL_WHERE = "arXiv:2003.02218, Sec. 3 ('Experimental results', introduction)"
RELU_CANDIDATES = {"12 (the paper's ReLU constant)": 12.0, "4 (the uv model's edge, Sec. 2.1)": 4.0,
                   "2 (the linearized model's edge)": 2.0}


def located_edge(lo, hi) -> tuple[np.ndarray, np.ndarray]:
    """Midpoint and half-width of each bracket (last converging c, first diverging c); NaN where not bracketed."""
    lo, hi = np.asarray(lo, float), np.asarray(hi, float)
    ok = np.isfinite(lo) & np.isfinite(hi)
    return np.where(ok, 0.5 * (lo + hi), np.nan), np.where(ok, 0.5 * (hi - lo), np.nan)


def nearest_candidate(c_max) -> np.ndarray:
    """For each located edge, the label of the nearest of ``RELU_CANDIDATES`` ('not located' for NaN)."""
    labels, values = list(RELU_CANDIDATES), np.array(list(RELU_CANDIDATES.values()))
    c = np.asarray(c_max, float)
    k = np.argmin(np.abs(np.nan_to_num(c, nan=-1e9)[:, None] - values[None, :]), axis=1)
    return np.where(np.isfinite(c), np.array(labels, dtype=object)[k], "not located").astype(str)


@claim("lewkowycz2020.relu_max_lr_about_12", paper=PAPER, provenance="quoted", kind="bound",
       source="Sec. 1.3 ('Catapult phase': c_act ≈ 12 for ReLU) and Sec. 3 ('Early time curvature dynamics')",
       quote=RELU_QUOTE, where=RELU_WHERE,
       statement="Fully connected ReLU networks (3 hidden layers, NTK parameterization, MSE on one-hot digits) trained by "
                 "full-batch GD at eta = c/lambda0, lambda0 the top eigenvalue of the loss's Gauss-Newton matrix at "
                 "initialization (so that c = 2 is the linearized model's edge), start to diverge at c_max ≈ 12: nearer "
                 "12 than the uv model's 4 or the lazy edge 2, |c_max - 12| <= 4 (steplab), and within the paper's '≈ 12' "
                 "read as 10-14 (the paper's value); between 2 and c_max GD converges after a loss spike (the catapult). "
                 "With one hidden layer (full budget) the edge is instead nearest the uv model's 4 (steplab), not the "
                 "paper's 12 'for all network that use ReLU'.",
       latex=r"c_{\max} = \eta_{\max}\lambda_0 \approx 12\ \ (\text{uv model: }4;\ \text{linearized: }2),\quad "
             r"\lambda_0 = \lambda_{\max}\!\big(J^\top J/N\big)\big|_{\theta_0}")
def relu_max_lr_about_12(budget) -> Result:
    r"""The step size, in units of :math:`1/\lambda_0`, at which GD on a ReLU network starts to diverge.

    :func:`paper_checks.eos.experiments.relu_max_lr`: per network (width, seed) GD runs at
    :math:`c \in \{2, 8, 14, 20, 26\}`, then at five points inside the bracket (last converging, first diverging):
    brackets one unit of c wide. :math:`\lambda_0` is the top eigenvalue of :math:`J^\top J/N` (Lanczos,
    :func:`sims.eos_relu.relu_gauss_newton_top`), the paper's normalization: :math:`2/\lambda_0` is the linear model's edge.
    Checks: per network, the located edge (the bracket's midpoint) is nearest 12 among 12, 4 and 2 (rivals: 4, 2);
    :math:`|c_{\max} - 12| \le 4` (steplab's reading, nearer 12 than 4) with the paper's value 2 ('≈ 12' as 10-14),
    slack the half-bracket; every converging run with :math:`c > 2` has a loss spike (rival: lazy, monotone loss); the
    latest divergence comes within the first quarter of the run (runs long enough to show a slow divergence). At the
    full budget, networks with one hidden layer too: their edge is nearest the uv model's 4 (steplab: on each
    activation pattern the network is the paper's one-hidden-layer linear model), the paper's "for all network that
    use ReLU" 12 being its paper value.
    """
    ex = E.relu_max_lr(budget)
    mid, half = located_edge(ex["lo"], ex["hi"])
    c, div = ex["c"], ex["diverged"] == 1.0
    tested = np.isfinite(c)
    n_steps = int(ex["n_steps"])
    below = tested & ~div & (c > 2.0)
    # no converging run above 2 counts as one run without a catapult; no diverging run as one diverging at step 0
    spiked = ex["max_loss_ratio"][below] > 1.0 if below.any() else np.zeros(1, bool)
    steps = ex["diverged_step"][tested & div] if (tested & div).any() else np.zeros(1)
    slack = float(np.nanmax(half)) if np.any(np.isfinite(half)) else 0.0
    nearest = nearest_candidate(mid)
    label = list(RELU_CANDIDATES)
    checks = [
        Categorical("constant nearest the located divergence edge c_max = eta*lambda0, per network (width, seed)",
                    measured=nearest, predicted=label[0], rivals={"the uv model's edge carries over": label[1],
                                                                  "the linearized model's edge": label[2]},
                    why="edge located between the last converging and the first diverging c (one unit of c apart)"),
        Bound("|c_max - 12| per network", measured=np.abs(mid - RELU_C), bound=RELU_NEARER, side="<=", slack=slack,
              paper=RELU_BAND, quote=RELU_QUOTE, where=RELU_WHERE,
              why=f"steplab: nearer 12 than the uv model's 4 (|c_max - 12| <= {RELU_NEARER:g}); the paper's '≈ 12' read "
                  f"as 10-14 (±{RELU_BAND:g}, its neighbouring round values); slack {slack:.2g}, the half-bracket"),
        Count("converging runs at 2 < c < c_max whose loss rises above its start (a catapult)", measured=spiked,
              predicted=True, rivals={"lazy above 2: the loss decreases monotonically": np.zeros(spiked.size, bool)},
              why="the paper's catapult phase: 'a period of exponential growth in the loss' before convergence"),
        Bound("step at which the diverging runs diverge (latest)", measured=steps, bound=n_steps / 4, side="<=",
              why=f"a divergence in the last three quarters of the {n_steps} steps would mean the runs are too short "
                  "to tell a slow divergence from convergence"),
    ]
    rows = [f"width {int(w)} seed {int(s)}: lambda0 = {lam:.4g}, c_max in ({lo:g}, {hi:g})"
            for w, s, lam, lo, hi in zip(ex["width"], ex["seed"], ex["lambda0"], ex["lo"], ex["hi"])]
    if budget.pick(quick=False, full=True):
        # one hidden layer: on each activation pattern the bias-free network is the paper's one-hidden-layer linear
        # network, whose edge is the uv model's 4 (steplab's reading); the paper says 12 for every ReLU network
        one = E.relu_max_lr(budget, depth=1)
        mid1, _ = located_edge(one["lo"], one["hi"])
        checks.append(Categorical(
            "constant nearest the located edge c_max, per network with ONE hidden layer (width, seed)",
            measured=nearest_candidate(mid1), predicted=label[1], paper=label[0], quote=RELU_ALL_QUOTE,
            where=RELU_ALL_WHERE, rivals={"the linearized model's edge": label[2]},
            why="same location rule and grids as the 3-hidden-layer networks"))
        rows += [f"one hidden layer, width {int(w)} seed {int(s)}: lambda0 = {lam:.4g}, c_max in ({lo:g}, {hi:g})"
                 for w, s, lam, lo, hi in zip(one["width"], one["seed"], one["lambda0"], one["lo"], one["hi"])]
    fin = ex["final_loss_ratio"][below] if below.any() else np.full(1, np.nan)
    peak = ex["max_loss_ratio"][below] if below.any() else np.full(1, np.nan)
    detail = (f"{int(ex['depth'])} hidden layers, {int(ex['samples'])} digits, {n_steps} steps: " + "; ".join(rows)
              + f"; diverging runs diverge by step {int(steps.max())}; converging runs above c = 2: "
              f"loss spike up to {np.nanmax(peak):.3g}x the initial, final loss "
              f"{np.nanmin(fin):.2g}-{np.nanmax(fin):.2g} of the initial")
    return Result(checks, detail=detail, arrays={"width": ex["width"], "seed": ex["seed"], "lambda0": ex["lambda0"],
                                                 "lo": ex["lo"], "hi": ex["hi"], "c_max": mid}, seed=E.SEED)
