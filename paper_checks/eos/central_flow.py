r"""Cohen, Damian, Talwalkar, Kolter, Lee (2025): central flows, on the toy and on a tiny network.

The central flow :math:`\dot w = -\eta[\nabla L + \tfrac12\sigma^2\nabla S]` (time in steps), with
:math:`\sigma^2` holding the sharpness at :math:`2/\eta`, is integrated by diffrax on the toy
(:func:`sims.eos.poly_flow`) and by explicit Euler on the network (:func:`sims.eos.mlp_run`);
GD by :func:`sims.eos.poly_gd` and :func:`sims.eos.mlp_run`. The flow's prediction of GD's time-averaged
loss, :math:`L + \tfrac12\sigma^2S`, is :func:`theory.eos.central_flow_mean_loss`. The flow's equations come
from secondary sources (the authors' companion site and code); the toy is derived here.
"""
from __future__ import annotations

import numpy as np
from scipy import stats

import theory.eos as th
from paper_checks import Bound, Exact, Paper, Rate, Result, Statistical, claim, fit_slope
from paper_checks.eos import experiments as E

PAPER = Paper(key="cohen2025", title="Understanding Optimization in Deep Learning with Central Flows",
              authors="J. M. Cohen, A. Damian, A. Talwalkar, J. Z. Kolter, J. D. Lee", year=2025, arxiv="2410.24206",
              venue="ICLR 2025")

# Relative tolerance once GD's transient has decayed: the comparison starts where the closed-form 2-cycle
# multiplier rho has shrunk the measured peak deviation to SETTLE_RTOL / 10 of y*; after that GD is within round-off
# of the exact cycle and the central flow within its ODE tolerance (rtol 1e-10) of y*.
SETTLE_RTOL = 1e-6
# The window of the ringing (relaxation) fits, in |<y> - y*| / y*: below RING_HI the deviation obeys the linearized
# two-step map up to terms O(|<y> - y*| / y*) <= 1e-3 relative; above RING_LO float64 round-off of the 2-step
# averages (~1e-16 y*) is below 1e-6 of the smallest deviation used.
RING_LO, RING_HI = 1e-10, 1e-3


def half_cycle_extrema(t: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Time and value of the largest ``|u|`` in each maximal run of one sign of ``u`` (an overshoot and its return).

    The first and last runs are dropped (they may be cut by the ends of the record). Consecutive extrema
    alternate in sign by construction.
    """
    sign = np.sign(u)
    runs = np.split(np.arange(u.size), np.flatnonzero(sign[1:] != sign[:-1]) + 1)[1:-1]
    idx = np.array([r[np.argmax(np.abs(u[r]))] for r in runs], dtype=int)
    return t[idx], u[idx]


def zero_crossings(t: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Times where ``u`` changes sign, by linear interpolation between the two samples around each change."""
    i = np.flatnonzero(np.sign(u[1:]) * np.sign(u[:-1]) < 0)
    return t[i] - u[i] * (t[i + 1] - t[i]) / (u[i + 1] - u[i])


def sampling_bias_bound(x: np.ndarray, width: float) -> float:
    r"""Largest change of a least-squares slope on ``x`` when every ordinate moves by some amount in an interval of ``width``.

    Ordinates :math:`y_j + \delta_j`, :math:`\delta_j \in [d, d + w]`: a constant shift leaves the slope alone,
    the rest moves it by :math:`\sum_j (x_j - \bar x)\delta_j / S_{xx}`, at most :math:`\tfrac w2\sum_j|x_j - \bar x|/S_{xx}`.
    """
    x = np.asarray(x, float)
    d = x - x.mean()
    return float(0.5 * width * np.sum(np.abs(d)) / np.sum(d * d))


@claim("cohen2025.selfstab_transient", paper=PAPER, provenance="derived", kind="rate",
       source="derived here (toy: the 2-cycle's two-step multipliers, sympy); central-flow equations from secondary "
              "sources (authors' companion site and code)",
       statement="Integrated from the start, the central flow of the toy (eta*a = 1.9) locks at y* with sigma^2 = beta/y* "
                 "once gradient-flow sharpening (GD's 2-step averages grow as eta*beta*t) reaches the edge; GD's 2-step "
                 "averages overshoot it and ring down onto the flow's y(t) and predicted loss L + sigma^2 S/2: the "
                 "overshoots alternate in sign, half a period pi/arg(mu) two-step blocks apart, and their envelope "
                 "decays at ln|mu|/2 per step, mu the closed-form multiplier of the 2-cycle (not at the averaged "
                 "self-stabilization ODE's rate eta*beta/(2 y*)).",
       latex=r"|\bar y_{\mathrm{GD}}(t) - y^\star| \propto |\mu|^{t/2},\ \text{zeros every } \tfrac{2\pi}{\arg\mu}"
             r"\text{ steps};\ \bar y_{\mathrm{GD}} \to y_{\mathrm{CF}} = y^\star,\ "
             r"\overline{L}_{\mathrm{GD}} \to L(w_{\mathrm{CF}}) + \tfrac12\sigma^2S")
def selfstab_transient(budget) -> Result:
    r"""GD's 2-step averages against the closed-form two-step multiplier and the central flow from the same start (0.1, 0).

    Relaxation: the overshoots of :math:`u = \langle y\rangle - y^\star` (the extremum of :math:`|u|` in each
    run of one sign) while :math:`10^{-10} \le |u|/y^\star \le 10^{-3}`. Rates: their envelope
    :math:`\ln|u_j|` against time (predicted slope :math:`\ln|\mu|/2`, :math:`\mu` from
    :func:`theory.eos.selfstab_cycle_multipliers`), and the zero crossings of :math:`u` against their index
    (predicted spacing :math:`2\pi/\arg\mu` steps, half a ringing period). The ``next_order`` of each rate bounds
    the error of sampling a damped cosine at whole blocks (:func:`sampling_bias_bound`). Rivals: the averaged
    (continuous-time) self-stabilization dynamics (:func:`theory.eos.selfstab_averaged_eigenvalues`); :math:`y`
    relaxing at the curvature of :math:`L` along :math:`y` alone, :math:`1 - \eta r^2` per step. Before the edge
    GD's averages sharpen like gradient flow, :math:`\eta\beta t` (tolerance: the oscillation's drag, at most
    :math:`\eta y^\star x_0^2` per step). Settled state (after the predicted relaxation): :math:`y` and the loss
    against the flow, :math:`\sigma^2` against :math:`\beta/y^\star`.
    """
    ex = E.selfstab_transient(budget)
    if ex["gd_diverged"] or ex["cf_diverged"]:
        raise RuntimeError("the transient run diverged (GD or the central flow); the configuration is inside the window")
    a, beta, eta = float(ex["a"]), E.TOY_BETA, E.TOY_ETA
    ys, s2 = th.selfstab_equilibrium(a, beta, eta)
    mu = th.selfstab_cycle_multipliers(a, beta, eta)
    mu = mu[np.argmax(mu.imag)]
    rho, theta = float(np.abs(mu)), float(np.abs(np.angle(mu)))  # per two-step block
    avg = th.selfstab_averaged_eigenvalues(a, beta, eta)
    avg = avg[np.argmax(avg.imag)]  # per step
    t, ts = ex["t_gd"], ex["ts"]
    y_cf = np.interp(t, ts, ex["y_cf"])
    pred_loss = np.interp(t, ts, th.central_flow_mean_loss(ex["loss_cf"], ex["sigma2_cf"] * ex["sharpness_cf"]))
    center_loss = np.interp(t, ts, ex["loss_cf"])
    y0, x0 = E.TOY_INIT[1], E.TOY_INIT[0]

    # before the edge: y_{t+1} = y_t + eta (beta - y_t x_t^2) with |x_t| <= x0 (|1 - eta S| <= 1 while a <= S <= 2/eta)
    # and y_t <= y*, so 0 <= eta beta t - y_t <= eta y* x0^2 t: a relative tolerance y* x0^2 / beta
    pre = (t + 0.5 < (ys - y0) / (eta * beta))
    drag = ys * x0 * x0 / beta

    # ringing: the overshoots in the linear window
    u = ex["y_gd"] - ys
    te, ue = half_cycle_extrema(t, u)
    inwin = (np.abs(ue) >= RING_LO * ys) & (np.abs(ue) <= RING_HI * ys)
    te, ue = te[inwin], ue[inwin]
    if te.size < 8:
        raise RuntimeError(f"only {te.size} overshoots in the linear window: the run ({t[-1]:.0f} steps) is too short")
    tc = zero_crossings(t, u)
    tc = tc[(tc >= te[0]) & (tc <= te[-1])]
    # a linear 2-D map's scalar observable is A rho^k cos(k theta + phi) (k: blocks of 2 steps). Its discrete extremum
    # in a half-cycle is within one block of the continuous one, whose phase is -atan(ln(1/rho)/theta): so ln|u_j| sits
    # below the envelope by between 0 and -ln cos(atan(ln(1/rho)/theta) + theta). A chord's zero is off the true zero
    # by between 0 and |f''/f'| h^2 / 8 = |ln rho| / 2 steps (f''/f' = ln rho per step at a zero, h = 2 steps).
    env_width = -np.log(np.cos(np.arctan(np.log(1.0 / rho) / theta) + theta))
    zero_width = abs(np.log(rho)) / 2.0
    slope_pred = np.log(rho) / 2.0
    half_period = 2.0 * np.pi / theta
    r2 = beta / ys

    # settled: after the predicted relaxation the comparison with the flow is to round-off
    onset = float(ts[np.argmax(ex["sigma2_cf"] > 0)])
    dev = np.abs(ex["y_gd"] - y_cf)
    after = t >= onset
    k_peak = int(np.argmax(np.where(after, dev, -np.inf)))
    peak, t_peak = float(dev[k_peak]), float(t[k_peak])
    t_settle = t_peak + 2.0 * np.log(peak / (0.1 * SETTLE_RTOL * ys)) / np.log(1.0 / rho)
    seg = t >= t_settle
    if seg.sum() < 0.2 * seg.size:
        raise RuntimeError(f"the run ({t[-1]:.0f} steps) is too short: relaxation predicted until t = {t_settle:.0f}")
    why = (f"after the predicted relaxation (rho = {rho:.4f} per 2 steps, peak deviation {peak:.3f} at t = {t_peak:.0f}) "
           "GD sits on the exact cycle to round-off and the flow at y* to its ODE tolerance")
    checks = [
        Rate("envelope of GD's overshoots about y*: slope of ln|<y> - y*| at the extrema against t (per step)",
             x=te, y=np.log(np.abs(ue)), predicted=slope_pred, log=False,
             next_order=sampling_bias_bound(te, env_width),
             rivals={"the averaged (continuous-time) self-stabilization dynamics, rate eta beta/(2 y*) per step":
                     float(avg.real),
                     "y relaxes at the curvature of L along y alone, ln(1 - eta r*^2) per step": float(np.log(1 - eta * r2))},
             why=f"SE of the least-squares slope over {te.size} overshoots; next_order bounds the whole-block sampling of "
                 f"the damped cosine (each extremum within {env_width:.3f} below the envelope in log); nonlinear "
                 f"terms <= {RING_HI:g} relative in the window"),
        Rate("half-period of GD's ringing about y*: spacing of the zero crossings of <y> - y* (steps)",
             x=np.arange(tc.size, dtype=float), y=tc, predicted=half_period, log=False,
             next_order=sampling_bias_bound(np.arange(tc.size, dtype=float), zero_width),
             rivals={"the averaged self-stabilization dynamics' half-period pi/Im(lambda)": float(np.pi / avg.imag)},
             why=f"SE of the least-squares spacing over {tc.size} crossings; next_order bounds linear interpolation "
                 f"of each zero (within {zero_width:.3f} steps, one-sided)"),
        Exact("2-step average of y before the edge (eta beta t < y*) vs gradient flow's eta beta t",
              predicted=y0 + eta * beta * t[pre], measured=ex["y_gd"][pre], rtol=drag,
              rivals={"GD's average sits at the edge from the start, y = y*": np.full(int(pre.sum()), ys)},
              why=f"the oscillation drags y by at most eta y* x0^2 per step (|x_t| <= x0 = {x0:g} below the edge): "
                  f"a relative tolerance y* x0^2/beta = {drag:.3f}"),
        Exact("2-step average of y vs the central flow's y(t), t >= t_settle", predicted=y_cf[seg],
              measured=ex["y_gd"][seg], rtol=SETTLE_RTOL,
              rivals={"GD's average follows gradient flow, y(t) = y0 + eta beta t": y0 + eta * beta * t[seg]}, why=why),
        Exact("2-step average of L vs the central flow's L + sigma^2 S / 2, t >= t_settle", predicted=pred_loss[seg],
              measured=ex["loss_gd"][seg], rtol=SETTLE_RTOL,
              rivals={"GD's average loss is the central point's loss L(w_CF)": center_loss[seg]}, why=why),
        Exact("central flow's sigma^2 at the end vs beta/y*", predicted=s2, measured=float(ex["sigma2_cf"][-1]),
              rtol=1e-6, rivals={"no oscillation at the fixed point (gradient flow): sigma^2 = 0": 0.0},
              why="the flow relaxes to S = 2/eta at rate 1 per step (relax = 1); ODE tolerance 1e-10"),
    ]
    env_slope, _ = fit_slope(te, np.log(np.abs(ue)), log=False)
    spacing, _ = fit_slope(np.arange(tc.size, dtype=float), tc, log=False)
    detail = (f"eta*a = {a * eta:g}: GD's first overshoot {peak:.3f} above y* = {ys:.4f} at t = {t_peak:.0f}; then "
              f"{te.size} overshoots in the linear window (t = {te[0]:.0f}-{te[-1]:.0f}): envelope {env_slope:.6f} per step "
              f"(|mu| = {rho:.6f}: {slope_pred:.6f}; averaged ODE {avg.real:.4f}), zero spacing {spacing:.4f} steps "
              f"(2 pi/arg mu = {half_period:.4f}; averaged ODE {np.pi / avg.imag:.4f}), overshoot ratio "
              f"{np.median(ue[1:] / ue[:-1]):.3f} (-|mu|^(pi/arg mu) = {-rho ** (np.pi / theta):.3f}); within "
              f"{SETTLE_RTOL:g} of the flow from t = {t_settle:.0f} (predicted); max |<y> - y_CF| there = {np.max(dev[seg]):.1e}")
    return Result(checks, detail=detail,
                  arrays={"t_gd": t, "y_gd": ex["y_gd"], "ts": ts, "y_cf": ex["y_cf"], "y_rod": ex["y_rod"],
                          "loss_gd": ex["loss_gd"], "predicted_loss_cf": pred_loss, "loss_cf": ex["loss_cf"],
                          "t_settle": np.array(t_settle), "y_star": np.array(ys), "overshoot_t": te, "overshoot_u": ue,
                          "rate": np.array([slope_pred, env_slope, half_period, spacing])})


@claim("cohen2025.network_time_averaged_loss", paper=PAPER, provenance="secondary", kind="statistical",
       source="central-flow prediction of the time-averaged loss; the authors' companion site states it as "
              "L(w(t)) + tr Sigma(t)/eta (rank one: L + sigma^2/eta), equal to L + sigma^2 S/2 where the flow holds "
              "S = 2/eta; the paper's own equation was not recovered",
       statement="On a tiny tanh MLP trained by full-batch GD at the edge of stability, GD's time-averaged loss equals "
                 "the central flow's prediction L(w_CF) + sigma^2 S/2 (= L + sigma^2/eta at S = 2/eta), started from "
                 "the same initialization -- not L + sigma^2 S/4, not L + sigma^2 S, not the loss at the central point.",
       latex=r"\overline{L(w_t)} = L(w_{\mathrm{CF}}) + \tfrac12\sigma^2S")
def network_time_averaged_loss(budget) -> Result:
    r"""GD's loss averaged over the second half of the run against the central flow's prediction, over seeds.

    Per seed (GD and the flow from the same initialization at :math:`\eta` = ``MLP_ETA``): the ratio of GD's
    time-averaged loss to the flow's :math:`L + \tfrac12\sigma^2S` (:func:`theory.eos.central_flow_mean_loss` of
    the window means of :math:`L` and :math:`\sigma^2S`) over the second half of the run. Estimate: the mean
    ratio over seeds, SE from their spread (the flow is a model of GD's average, not an identity: its error is a
    property of each trajectory, and seeds are the independent replicates). Rivals, evaluated as the ratio they
    would give: :math:`L + \tfrac14\sigma^2S`, :math:`L + \sigma^2S`, the central point's :math:`L`. A bound checks
    the flow holds the sharpness at :math:`2/\eta`, where the authors' form :math:`L + \sigma^2/\eta` coincides.
    """
    ex = E.mlp(budget)
    cf_rows = np.flatnonzero(ex["method"] == "central")
    eta = float(ex["eta"][cf_rows[0]])
    gd_rows = [int(np.flatnonzero((ex["method"] == "gd") & (ex["eta"] == eta) & (ex["seed"] == ex["seed"][c]))[0])
               for c in cf_rows]
    if np.any(ex["diverged"][gd_rows]) or np.any(ex["diverged"][cf_rows]):
        raise RuntimeError("a network run diverged")
    n_meas = ex["sharpness"].shape[1]
    half = slice(n_meas // 2, None)
    mean = lambda key, rows: ex[key][rows][:, half].mean(axis=1)  # noqa: E731  (window means, one per seed)
    gd_loss = mean("mean_loss", gd_rows)
    L, s2S, s2 = mean("mean_loss", cf_rows), mean("mean_sigma2_sharpness", cf_rows), mean("mean_sigma2", cf_rows)
    pred = th.central_flow_mean_loss(L, s2S)
    ratio = gd_loss / pred
    n = ratio.size
    est, se = float(ratio.mean()), float(ratio.std(ddof=1) / np.sqrt(n))
    as_ratio = lambda other: float(np.mean(other / pred))  # noqa: E731  (what GD's loss = `other` would give)
    authors = L + s2 / eta
    S_half = ex["sharpness"][cf_rows][:, half]
    checks = [
        Statistical("GD's time-averaged loss / the central flow's L + sigma^2 S/2 (second half, mean over seeds)",
                    estimate=est, se=se, predicted=1.0, z=4.0,
                    rivals={"GD's average loss is L + sigma^2 S/4": as_ratio(L + 0.25 * s2S),
                            "GD's average loss is L + sigma^2 S": as_ratio(L + s2S),
                            "GD's average loss is the loss at the central point, L(w_CF)": as_ratio(L)},
                    why=f"SE from the spread of the ratio over {n} seeds ({n - 1} degrees of freedom: 4 SE is Student's "
                        f"{100 * (2 * stats.t.cdf(4.0, n - 1) - 1):.1f} % two-sided band); the flow's own Euler and "
                        "Lanczos errors (a few 1e-3, see the bound) are inside it"),
        Bound("central flow's sharpness over the second half, relative to 2/eta", measured=np.abs(S_half * eta / 2 - 1),
              bound=1e-2, side="<=",
              why="the flow holds S at 2/eta up to the Euler step and Lanczos accuracy (a few 1e-3); there the authors' "
                  "L + sigma^2/eta and L + sigma^2 S/2 coincide"),
    ]
    gap, res = float(np.max(np.abs(authors / pred - 1))), checks[0].resolution()
    detail = (f"eta = {eta}, {n} seeds, steps {ex['t'][cf_rows[0]][half.start]}-{ex['n_steps'][cf_rows[0]]}: "
              f"GD / (L + sigma^2 S/2) = {np.round(ratio, 4).tolist()} (mean {est:.4f} +- {se:.4f}); the authors' form "
              f"L + sigma^2/eta differs from the prediction by at most {gap:.1e} (relative), against a resolution of "
              f"{res:.1%}: {'the measurement cannot tell the two forms apart' if gap < res else 'the forms differ measurably'}"
              f"; GD / L(w_CF) = "
              f"{np.round(gd_loss / L, 3).tolist()}; the flow's second Ritz value reaches "
              f"{np.nanmax(ex['second'][cf_rows][:, half]) * eta / 2:.3f} x 2/eta")
    return Result(checks, detail=detail,
                  arrays={"t": ex["t"][cf_rows[0]], "gd_mean_loss": ex["mean_loss"][gd_rows],
                          "cf_predicted": th.central_flow_mean_loss(ex["mean_loss"][cf_rows],
                                                                    ex["mean_sigma2_sharpness"][cf_rows]),
                          "cf_loss": ex["mean_loss"][cf_rows], "ratio": ratio,
                          "cf_sharpness": ex["sharpness"][cf_rows], "gd_sharpness": ex["sharpness"][gd_rows]},
                  seed=E.SEED)
