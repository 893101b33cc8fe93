r"""Weight-decay equilibria of scale-invariant weights: angular update, equilibrium norm, transient, and where it breaks.

Scale invariance gives :math:`w\cdot g = 0`, hence without decay :math:`\|w^+\|^2 = \|w\|^2 + \eta^2\|g\|^2` exactly, and with
decay the norm settles where growth and shrinkage balance (:mod:`theory.noisy_quadratic`: :func:`wd_angular_update`,
:func:`wd_equilibrium_norm`, :func:`sign_wd_angular_update`, :func:`sign_wd_equilibrium_norm`, :func:`sgd_wd_exact`);
without it the norm grows for ever and the angle decays like :math:`1/\sqrt t` (:func:`no_decay_angular_update`).
The random-walk model (:func:`sims.noisy_quadratic.sphere_walk`) assumes uncorrelated gradient directions; a real
scale-invariant loss (:func:`sims.noisy_quadratic.logistic_sphere`) tests that assumption.
"""
from __future__ import annotations

import math

import numpy as np

import sims.nqm as sn
import theory.noisy_quadratic as th
from paper_checks import STEPLAB, Categorical, Exact, Paper, Rate, Result, Statistical, claim, standard_error
from paper_checks.noisy_quadratic import experiments as E

PAPER = Paper(key="kosson2023", title="Rotational Equilibrium: How Weight Decay Balances Learning Across Neural Networks",
              authors="A. Kosson, B. Messmer, M. Jaggi", year=2023, arxiv="2305.17212")

TAIL = 20  # recording blocks (of 60) averaged at equilibrium


@claim("kosson2023.equilibrium_angle_and_norm", paper=PAPER, provenance="secondary", kind="statistical",
       source="the paper's equilibrium formulas (its angle sqrt(2 eta lambda/(1+alpha)) for SGD with momentum is also "
              "what the authors' public code computes; the paper's text was not recovered here, so no quote); the sign-"
              "update form is the paper's AdamW angle at beta1 = 0; re-derived here to leading order",
       quote="Weight decay can cause the expected magnitude and angular updates of a neuron's weight vector to converge "
             "to a steady state we call rotational equilibrium.",
       where="arXiv:2305.17212, abstract",
       statement="In the random-walk model, SGD with momentum alpha and coupled decay lambda rotates the weights by "
                 "sqrt(2 eta lambda/(1+alpha)) per step at a norm |w|^4 = eta G^2/(2 lambda (1-alpha)); sign updates "
                 "with decoupled decay rotate by sqrt(2 eta lambda) at |w| = sqrt(eta d/(2 lambda)).",
       latex=r"\theta = \sqrt{\tfrac{2\eta\lambda}{1+\alpha}},\ \|w\|^4 = \tfrac{\eta\tilde G^2}{2\lambda(1-\alpha)};\quad "
             r"\theta_{\rm sign} = \sqrt{2\eta\lambda},\ \|w\| = \sqrt{\tfrac{\eta d}{2\lambda}}")
def equilibrium_angle_and_norm(budget) -> Result:
    r"""Mean angle per step and norm over the last third of each run, mean and standard error over runs.

    The formulas are leading order in :math:`\eta\lambda` (5e-4 and 1e-3 here) and :math:`1/d`: the bias allowance
    is :math:`\eta\lambda` relative (the exact plain-SGD map differs from the leading order by :math:`\eta\lambda/6`
    in the angle and :math:`\eta\lambda/8` in the norm) plus the Jensen gap of a norm fluctuating by ~1 %; the sign
    update's angle and norm are separate checks, each with its allowance relative to its own prediction.
    Rivals: :math:`\sqrt{\eta\lambda}` (the factor 2 lost), the momentum factor omitted; for the sign update, the
    authors' AdamW angle :math:`\sqrt{2\eta\lambda(1-\beta_1)/(1+\beta_1)}` at the default :math:`\beta_1 = 0.9`.
    """
    ex = E.sphere(budget)
    ang = sn.summarize(ex["hb_angle"][:, :, -TAIL:].mean(axis=2))
    nrm = sn.summarize(ex["hb_norm"][:, :, -TAIL:].mean(axis=2))
    eta, wd, mom = (np.array([p[i] for p in E.WD_POINTS]) for i in range(3))
    a_pred = np.array([th.wd_angular_update(e, w, m) for e, w, m in zip(eta, wd, mom)])
    n_pred = np.array([th.wd_equilibrium_norm(e, w, 1.0, m) for e, w, m in zip(eta, wd, mom)])
    s_ang = sn.summarize(ex["sign_angle"][:, -TAIL:].mean(axis=1)[None])
    s_nrm = sn.summarize(ex["sign_norm"][:, -TAIL:].mean(axis=1)[None])
    se_, ss_ = E.SIGN_POINT
    sa_pred = th.sign_wd_angular_update(se_, ss_)
    sn_pred = th.sign_wd_equilibrium_norm(se_, ss_, ex["d"])
    # the deterministic (momentum 0) run has zero spread: give it the round-off floor as its standard error
    floor = lambda se, x: np.maximum(np.nan_to_num(se, nan=0.0), 1e-12 * np.abs(x))  # noqa: E731
    # next-order terms of the leading-order formulas: eta*lambda/(1 - alpha) (the momentum-averaged step) and 1/d
    # (the update's component along w), relative
    rel = float(np.max(eta * wd / (1 - mom))) + se_ * ss_ + 1.0 / ex["d"]
    rel_sign = se_ * ss_ + 1.0 / ex["d"]
    checks = [
        Statistical("heavy ball + coupled decay: angle per step (alpha = 0, 0.9)", estimate=ang.mean,
                    se=floor(ang.se, ang.mean), predicted=a_pred, z=4.0, bias=rel * float(a_pred.max()),
                    rivals={"√(ηλ/(1+α)) (factor 2 lost)": a_pred / math.sqrt(2), "√(2ηλ) (momentum ignored)":
                            np.sqrt(2 * eta * wd)},
                    why="standard error over runs; bias: O(eta*lambda) and O(1/d) corrections"),
        Statistical("heavy ball + coupled decay: |w| (alpha = 0, 0.9)", estimate=nrm.mean, se=floor(nrm.se, nrm.mean),
                    predicted=n_pred, z=4.0, bias=rel * float(n_pred.max()),
                    rivals={"(ηG²/(2λ))^{1/4} (the 1 − α factor omitted)": np.array(
                        [th.wd_equilibrium_norm(e, w, 1.0, 0.0) for e, w in zip(eta, wd)])},
                    why="standard error over runs; bias: O(eta*lambda) and the norm's ~1 % fluctuations (Jensen)"),
        # each sign quantity gets its own allowance, relative to its own prediction (one shared allowance at the
        # norm's scale, ~1.8, once let the angle, ~0.045, be off by 90 %)
        Statistical("sign + decoupled decay: angle per step", estimate=s_ang.mean, se=s_ang.se, predicted=sa_pred,
                    z=4.0, bias=rel_sign * sa_pred,
                    rivals={"√(ηλ) (factor 2 lost)": math.sqrt(se_ * ss_),
                            "√(2ηλ(1−β₁)/(1+β₁)) at β₁ = 0.9 (the authors' AdamW angle, momentum assumed)":
                                th.sign_wd_angular_update(se_, ss_) * math.sqrt(0.1 / 1.9)},
                    why="standard error over runs; bias: O(eta*lambda) and the update's O(1/d) component along w, "
                        "relative to the angle"),
        Statistical("sign + decoupled decay: |w|", estimate=s_nrm.mean, se=s_nrm.se, predicted=sn_pred, z=4.0,
                    bias=rel_sign * sn_pred,
                    rivals={"√(ηd/λ) (factor 2 lost)": math.sqrt(se_ * ex["d"] / ss_)},
                    why="standard error over runs; bias: O(eta*lambda), O(1/d) and the norm's fluctuations, relative "
                        "to the norm"),
    ]
    detail = (", ".join(f"HB alpha={m:g}: angle {a:.5f} (pred {p:.5f}), |w| {n:.4f} (pred {q:.4f})"
                        for m, a, p, n, q in zip(mom, ang.mean, a_pred, nrm.mean, n_pred))
              + f"; sign: angle {s_ang.mean[0]:.5f} (pred {sa_pred:.5f}), |w| {s_nrm.mean[0]:.4f} (pred {sn_pred:.4f}), "
                f"d = {ex['d']}")
    return Result(checks, detail=detail, seed=E.SEED + 4,
                  arrays={"t": ex["t_rec"], "hb_angle": ex["hb_angle"].mean(axis=1), "hb_norm": ex["hb_norm"].mean(axis=1),
                          "sign_angle": ex["sign_angle"].mean(axis=0), "sign_norm": ex["sign_norm"].mean(axis=0),
                          "hb_angle_pred": a_pred, "hb_norm_pred": n_pred, "sign_pred": np.array([sa_pred, sn_pred])})


@claim("kosson2023.norm_transient", paper=PAPER, provenance="derived", kind="rate",
       source="derived here (the norm map of plain SGD with coupled decay)",
       statement="Plain SGD with coupled decay approaches the equilibrium norm geometrically: |w|^2 - v* shrinks by "
                 "2(1 - eta lambda)^2 - 1 ~ 1 - 4 eta lambda per step (a transient of about 1/(4 eta lambda) steps).",
       latex=r"\|w_{t+1}\|^2 - v^\star \approx \big(2(1-\eta\lambda)^2 - 1\big)(\|w_t\|^2 - v^\star)")
def norm_transient(budget) -> Result:
    r"""Slope of :math:`\log|\|w_t\|^2 - v^\star|` against :math:`t` for the momentum-0 random-walk runs (deterministic
    norm), over the recordings where the distance is between 1e-3 and 1e-10 relative (linear regime, above round-off).

    Rival: a transient of :math:`1/(2\eta\lambda)` steps (slope :math:`\log(1-2\eta\lambda)`).
    """
    ex = E.sphere(budget)
    eta, wd, _ = E.WD_POINTS[0]
    v_star = th.sgd_wd_exact(eta, wd, 1.0)[1] ** 2
    dist = np.abs(ex["hb_norm"][0, 0] ** 2 - v_star) / v_star
    t = ex["t_rec"]
    use = (dist < 1e-3) & (dist > 1e-10)
    pred = math.log(th.wd_norm_relaxation(eta, wd))
    checks = [Rate("d log|‖w‖² − v*| / dt", x=t[use], y=np.log(dist[use]), log=False, predicted=pred,
                   next_order=1e-3 * abs(pred), z=4.0, rivals={"a 1/(2ηλ)-step transient": math.log(1 - 2 * eta * wd)},
                   why="deterministic map: the SE is the residual of the remaining nonlinearity; next order: the "
                       "quadratic term at a distance below 1e-3 changes the multiplier by < 1e-3 relative")]
    return Result(checks, detail=f"slope {checks[0].slope:.6g} per step (pred {pred:.6g}; 1/(2 eta lambda) rival "
                                 f"{math.log(1 - 2 * eta * wd):.6g}), {int(use.sum())} points", seed=E.SEED + 4)


@claim("kosson2023.no_decay_angular_update", paper=PAPER, provenance="derived", kind="statistical",
       source="derived here: the consequence of the no-decay norm identity |w+|^2 = |w|^2 + eta^2 |g|^2 (w . g = 0) for the "
              "angular update, the motivation of rotational equilibrium (abstract: weight decay makes the angular "
              "updates converge to a steady state)",
       statement="Without weight decay, scale-invariant weights under SGD with momentum alpha (random-walk model) never "
                 "reach an equilibrium: |w_t|^4 = |w_0|^4 + 2 eta^2 G^2 t/(1 - alpha)^2 and the angle per step is "
                 "eta G/(sqrt(1 - alpha^2) |w_t|^2), tending to sqrt((1 - alpha)/(1 + alpha))/sqrt(2t) whatever eta.",
       latex=r"\theta_t = \frac{\eta\tilde G}{\sqrt{1-\alpha^2}\,\|w_t\|^2},\ \|w_t\|^4 = \|w_0\|^4 + "
             r"\frac{2\eta^2\tilde G^2t}{(1-\alpha)^2}\ \Rightarrow\ \theta_t \to \sqrt{\tfrac{1-\alpha}{1+\alpha}}\,\frac1{\sqrt{2t}}")
def no_decay_angular_update(budget) -> Result:
    r"""Mean angle per step of each recording block and the norm at its end, over the last three quarters of the
    random-walk runs without decay (heavy ball, :math:`\eta = 0.1`, momentum 0 and 0.9, :math:`\tilde G = 1`, from
    :math:`\|w_0\|^2 = 10\,\eta/(1-\alpha)`, where the effective step is already small), mean
    and standard error over runs, against :func:`theory.noisy_quadratic.no_decay_angular_update` (averaged over each
    block's steps) and :func:`theory.noisy_quadratic.no_decay_norm`.

    (The identity itself, :math:`\|w^+\|^2 = \|w\|^2 + \eta^2\|g\|^2` without decay and momentum, is a unit test of
    the simulators: ``tests/test_noisy_quadratic_mutants.py`` on a real scale-invariant loss,
    ``tests/test_noisy_quadratic.py`` on the random walk.) The formulas are leading order in
    :math:`\eta\tilde G/((1-\alpha)\|w\|^2)` and :math:`1/d` (the update's component along :math:`w`, the spread of
    :math:`\|m\|`): the allowance adds those terms, relative (see the code).
    Rivals: heavy ball as SGD at the effective step :math:`\eta/(1-\alpha)`; momentum ignored (the :math:`\alpha = 0`
    law); the norm conserved by small steps (a constant angle).
    """
    ex = E.sphere(budget)
    t_end = ex["free_t_rec"]
    block = int(t_end[0])
    keep = t_end > ex["free_T"] // 4
    mom = np.array(E.NO_DECAY_MOMENTA)
    eta = E.NO_DECAY_ETA
    steps = [np.arange(t - block, t) for t in t_end[keep]]
    w0 = np.array(E.NO_DECAY_W0)
    ang_pred = np.array([[th.no_decay_angular_update(eta, st, m, 1.0, w).mean() for st in steps] for m, w in zip(mom, w0)])
    nrm_pred = np.array([th.no_decay_norm(eta, t_end[keep], m, 1.0, w) for m, w in zip(mom, w0)])
    ang = ex["free_angle"][:, :, keep]
    nrm = ex["free_norm"][:, :, keep]
    n = ang.shape[1]
    a_mean, n_mean = ang.mean(axis=1), nrm.mean(axis=1)
    # the momentum-0 runs are deterministic (|g| = G/|w| exactly): their spread is round-off; floor the SE there
    floor = lambda sd, x: np.maximum(sd / math.sqrt(n), 1e-12 * np.abs(x))  # noqa: E731
    a_se, n_se = floor(ang.std(axis=1, ddof=1), a_mean), floor(nrm.std(axis=1, ddof=1), n_mean)
    t_mid = np.array([st.mean() for st in steps])
    eff_ang = np.array([[th.no_decay_angular_update(eta / (1 - m), st, 0.0, 1.0, w).mean() for st in steps]
                        for m, w in zip(mom, w0)])
    sgd_ang = np.array([[th.no_decay_angular_update(eta, st, 0.0, 1.0, w).mean() for st in steps] for w in w0])
    sgd_nrm = np.array([th.no_decay_norm(eta, t_end[keep], 0.0, 1.0, w) for w in w0])
    checks = []
    for k, m in enumerate(mom):
        # next-order terms, relative, with c = (eta G/(1 - alpha))^2 and u = |w|^4 at the window's start: the squared
        # effective step over |w|^2, c/u; the sum c^2 sum 1/u the leading order leaves out of u, at most
        # (c/2) log(1 + 2cT/u0)/u; and for momentum > 0 the O(1/d) terms (the step's part along w, the spread of |m|;
        # the momentum-0 walk has g exactly orthogonal to w with |g| = G/|w|: no 1/d term) and the buffer's start from
        # 0, which withholds at most the growth of its first 1/(1 - alpha) steps, 2c/(1 - alpha), from u
        c, u, u0 = (eta / (1 - m)) ** 2, float(nrm_pred[k, 0]) ** 4, float(w0[k]) ** 4
        rel = (c / u + 0.5 * c * math.log1p(2 * c * ex["free_T"] / u0) / u
               + ((1.0 / ex["free_d"] + 2 * c / ((1 - m) * u)) if m > 0 else 0.0))
        why = ("standard error over runs" + (" (floored at round-off: the momentum-0 walk is deterministic)" if m == 0
                                             else "") + f"; bias: the next-order terms, {rel:.1e} relative")
        checks.append(Statistical(
            f"angle per step without decay, per block, momentum {m:g}", estimate=a_mean[k], se=a_se[k],
            predicted=ang_pred[k], z=4.0, bias=rel * float(ang_pred[k].max()),
            rivals={"the norm is conserved: a constant angle ηG̃/(√(1 − α²)‖w₀‖²)":
                    np.full(ang_pred.shape[1], eta / (math.sqrt(1 - m**2) * w0[k] ** 2)),
                    **({"heavy ball as SGD at the effective step η/(1 − α)": eff_ang[k],
                        "momentum ignored: the α = 0 law": sgd_ang[k]} if m > 0 else
                       {"√2 lost: θ = 1/√t for large t (‖w‖⁴ grows by η²G̃² per step)":
                        eta / np.sqrt(w0[k] ** 4 + eta**2 * t_mid)})},
            why=why))
        checks.append(Statistical(
            f"‖w_t‖ without decay at each block's end, momentum {m:g}", estimate=n_mean[k], se=n_se[k],
            predicted=nrm_pred[k], z=4.0, bias=rel * float(nrm_pred[k].max()),
            rivals={"the norm is conserved": np.full(nrm_pred.shape[1], w0[k]),
                    **({"momentum ignored: ‖w‖⁴ = ‖w₀‖⁴ + 2η²G̃²t": sgd_nrm} if m > 0 else
                       {"‖w‖⁴ grows by η²G̃² per step (√2 lost)": (w0[k] ** 4 + eta**2 * t_end[keep]) ** 0.25})},
            why=why))
    detail = "; ".join(f"momentum {m:g}: angle x sqrt(2t) at the last block {a_mean[k, -1] * math.sqrt(2 * t_mid[-1]):.4f} "
                       f"(pred {ang_pred[k, -1] * math.sqrt(2 * t_mid[-1]):.4f}, limit {math.sqrt((1 - m) / (1 + m)):.4f}), "
                       f"|w_T| {n_mean[k, -1]:.3f} (pred {nrm_pred[k, -1]:.3f})" for k, m in enumerate(mom))
    return Result(checks, detail=detail, seed=E.SEED + 7,
                  arrays={"t": t_end, "angle": ex["free_angle"].mean(axis=1), "norm": ex["free_norm"].mean(axis=1),
                          "angle_pred": ang_pred, "norm_pred": nrm_pred})


@claim("steplab.rotational_equilibrium_breaks_on_correlated_gradients", paper=STEPLAB, provenance="derived",
       kind="qualitative",
       source="found here (kosson2023's random-walk assumption tested on a real scale-invariant loss)",
       statement="On a real scale-invariant loss (full-batch logistic regression on w/|w|) the angular update of plain "
                 "GD with coupled decay is exactly arccos(1 - eta lambda) ~ sqrt(2 eta lambda) once the norm settles, "
                 "but with momentum 0.9 the random-walk formula sqrt(2 eta lambda/(1+alpha)) fails: correlated "
                 "gradients keep the norm from settling and the measured angle departs by far more than 10 %.",
       latex=r"\theta_{\alpha=0} = \arccos(1-\eta\lambda),\quad \theta_{\alpha=0.9} \ne \sqrt{2\eta\lambda/1.9}")
def breaks_on_correlated_gradients(budget) -> Result:
    r"""Mean angle per step over the second half of the runs with decay (momentum 0 and 0.9), against the random-walk
    prediction; the momentum-0 angle also against the exact discrete value.

    Rival: the random-walk formula holds within 10 % in both runs.
    """
    ex = E.logistic(budget)
    half = ex["angle"].shape[1] // 2
    ang = ex["angle"][1:, half:].mean(axis=1)
    pred = np.array([th.wd_angular_update(E.LOGISTIC_ETA, E.LOGISTIC_WD, m) for m in (0.0, 0.9)])
    exact = th.sgd_wd_exact(E.LOGISTIC_ETA, E.LOGISTIC_WD, 1.0)[0]
    within = np.abs(ang / pred - 1) < 0.1
    checks = [
        Categorical("random-walk angle within 10 % (momentum 0, 0.9)", measured=within, predicted=np.array([True, False]),
                    rivals={"the random-walk formula holds in both runs": np.array([True, True])}),
        Exact("momentum 0: angle per step at equilibrium", predicted=exact, measured=ang[0], rtol=1e-4,
              rivals={"√(ηλ) (factor 2 lost)": math.sqrt(E.LOGISTIC_ETA * E.LOGISTIC_WD)},
              why="the norm has settled to round-off by the second half; the block averages carry the residual "
                  "transient (< 1e-4)"),
    ]
    return Result(checks, detail=f"measured/random-walk: momentum 0: {ang[0] / pred[0]:.4f}, momentum 0.9: "
                                 f"{ang[1] / pred[1]:.3f} (norm range {ex['norm'][2, half:].min():.3g}.."
                                 f"{ex['norm'][2, half:].max():.3g})",
                  seed=E.SEED, arrays={"t": ex["t_rec"], "angle": ex["angle"], "norm": ex["norm"], "predicted": pred})


WANG = Paper(key="wang2024", title="How to set AdamW's weight decay as you scale model and dataset size",
             authors="X. Wang, L. Aitchison", year=2024, arxiv="2405.13698")


def start_cosine(share: np.ndarray, norm: np.ndarray, w0_norm: float) -> tuple[float, float]:
    r"""The mean-square cosine :math:`\bar s/\sqrt{\bar r}` over runs (:math:`s = \langle w_T, w_0\rangle/\|w_0\|^2`,
    :math:`r = \|w_T\|^2/\|w_0\|^2`) and its delta-method standard error."""
    s, r = share, (norm / w0_norm) ** 2
    S, R = s.mean(), r.mean()
    g = s / math.sqrt(R) - S * r / (2 * R**1.5)
    return S / math.sqrt(R), float(standard_error(g))


@claim("wang2024.timescale_fraction_fixes_the_memory", paper=WANG, provenance="quoted", kind="statistical",
       source="abstract (the weights as an EMA of the updates, with timescale tau = 1/(eta lambda): the iterations it "
              "averages over); the start's exact mean-square share under sign updates with decoupled decay derived here",
       quote="In particular, the key hyperparameter for an exponential moving average is the EMA timescale. "
             "Intuitively, the EMA timescale can be understood as the number of recent iterations the EMA averages over.",
       where="arXiv:2405.13698, abstract",
       statement="Under AdamW-like sign updates with decoupled decay (a scale-invariant layer in the random-walk model, "
                 "d = 256, eta = 0.01, started at its equilibrium norm), the direction's memory of its start after T "
                 "steps, cos(w_T, w_0) in mean square, is (1 - eta lambda)^T ~ exp(-T/tau): with tau = 1/(eta lambda) "
                 "kept at the length of training (lambda = 1/(eta T)) it is 1/e at T = 200, 600 and 1800, while at the "
                 "fixed lambda of T = 600 it falls from 0.72 to 0.05.",
       latex=r"\frac{E\langle w_T,w_0\rangle}{\sqrt{E\|w_T\|^2}\,\|w_0\|} = (1-\eta\lambda)^T \approx e^{-T/\tau},"
             r"\quad \tau = \frac1{\eta\lambda}")
def timescale_fraction_fixes_the_memory(budget) -> Result:
    r"""The start's share :math:`\langle w_T, w_0\rangle/\|w_0\|^2` and :math:`\|w_T\|` recorded by the random walk
    (:func:`sims.noisy_quadratic.sphere_walk`, sign updates with decoupled decay, one run per decay read at every
    horizon: its first T steps do not depend on how long it goes on), combined into the mean-square cosine
    :math:`E\langle w_T, w_0\rangle/\sqrt{E\|w_T\|^2\|w_0\|^2}` over runs, against
    :func:`theory.noisy_quadratic.sign_wd_start_cosine`: at :math:`\tau = T` for each of T = 200, 600, 1800, and at
    the fixed :math:`\lambda` of :math:`\tau = 600` at the same three horizons.

    Rivals: at fixed :math:`\tau/T`, the memory set by :math:`\lambda` alone (the fixed-:math:`\lambda` values at each T)
    and the timescale read as :math:`1/\lambda` (the decay not multiplied by the step, share :math:`(1-\lambda)^T`); at
    fixed :math:`\lambda`, the memory the same at every T. Catches: :math:`\tau = 1/\lambda` in the prediction.
    """
    ex = E.wd_timescale(budget)
    hz, wd, w0 = ex["horizons"], ex["wd"], ex["w0_norm"]
    idx = [int(np.flatnonzero(ex["t_rec"] == T)[0]) for T in hz]
    ref = int(np.flatnonzero(hz == E.TAU_REF)[0])
    frac = [start_cosine(ex["share"][i, :, j], ex["norm"][i, :, j], w0[i]) for i, j in enumerate(idx)]
    fixed = [start_cosine(ex["share"][ref, :, j], ex["norm"][ref, :, j], w0[ref]) for j in idx]
    pred_frac = np.array([float(th.sign_wd_start_cosine(E.TAU_ETA, wd[i], T, E.TAU_D, w0[i])) for i, T in enumerate(hz)])
    pred_fixed = np.array([float(th.sign_wd_start_cosine(E.TAU_ETA, wd[ref], T, E.TAU_D, w0[ref])) for T in hz])
    why = ("delta-method standard error of a ratio of run means (share over root mean-square norm); both means are exact "
           "in expectation, so no bias beyond the ratio estimator's O(1/n)")
    checks = [
        Statistical("cos(w_T, w_0) in mean square at tau = T (T = 200, 600, 1800)", estimate=np.array([c for c, _ in frac]),
                    se=np.array([s for _, s in frac]), predicted=pred_frac, z=4.0,
                    rivals={"the memory is set by λ, not by τ/T: the fixed-λ values": pred_fixed,
                            "τ = 1/λ (the decay not multiplied by the step): share (1 − λ)^T":
                                (1 - wd) ** hz.astype(float)},
                    why=why),
        Statistical("cos(w_T, w_0) in mean square at the fixed λ of τ = 600", estimate=np.array([c for c, _ in fixed]),
                    se=np.array([s for _, s in fixed]), predicted=pred_fixed, z=4.0,
                    rivals={"a fixed λ keeps the memory across T: the T = 600 value at every T":
                                np.full(hz.size, pred_fixed[ref])},
                    why=why),
    ]
    detail = (", ".join(f"T = {T}: tau = T {c:.4f} ± {s:.4f} (pred {p:.4f}), fixed lambda {cf:.4f} ± {sf:.4f} "
                        f"(pred {pf:.4f})" for T, (c, s), p, (cf, sf), pf in zip(hz, frac, pred_frac, fixed, pred_fixed))
              + f"; d = {E.TAU_D}, eta = {E.TAU_ETA}, {ex['share'].shape[1]} runs")
    return Result(checks, detail=detail, seed=E.SEED + 12,
                  arrays={"t": ex["t_rec"], "horizons": hz, "share": ex["share"].mean(axis=1),
                          "pred_fraction": pred_frac, "pred_fixed": pred_fixed})
