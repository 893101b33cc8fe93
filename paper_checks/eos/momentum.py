r"""Cohen et al. (2022): with momentum the edge of stability moves to the momentum's critical sharpness.

Heavy ball :math:`w^+ = w + \mu(w - w^-) - \eta\nabla L(w)` is stable on a quadratic of curvature
:math:`\lambda` iff :math:`\eta\lambda < 2 + 2\mu`; Nesterov (gradient at the look-ahead) iff
:math:`\eta\lambda < (2+2\mu)/(1+2\mu)` (:func:`theory.eos.critical_sharpness`, derived by sympy). The
toy admits an exact 2-cycle at these thresholds (derived here); the network's sharpness settles there
(fitted per method as in :mod:`paper_checks.eos.edge_of_stability`).
"""
from __future__ import annotations

import numpy as np

import theory.eos as th
from paper_checks import Count, Exact, Paper, Result, claim
from paper_checks.eos import experiments as E
from paper_checks.eos import edge_of_stability as EOS

PAPER = Paper(key="cohen2022", title="Adaptive Gradient Methods at the Edge of Stability",
              authors="J. M. Cohen, B. Ghorbani, S. Krishnan, N. Agarwal, S. Medapati, M. Badura, D. Suo, D. Cardoze, "
                      "Z. Nado, G. E. Dahl, J. Gilmer", year=2022, arxiv="2207.14484")


@claim("cohen2022.momentum_thresholds_toy", paper=PAPER, provenance="derived", kind="exact",
       source="derived here (the toy's heavy-ball and Nesterov 2-cycles); thresholds as relayed by secondary notes",
       statement="On the self-stabilization toy, heavy ball and Nesterov settle on exact 2-cycles whose sharpness along x "
                 "is the method's critical sharpness: y* = sqrt(2(1+mu)/eta - a) (heavy ball), "
                 "y* = sqrt(2(1+mu)/((1+2mu) eta) - a) (Nesterov), with <x^2> = beta/y* and beta/((1+2mu)^2 y*).",
       latex=r"a + \langle y\rangle^2 = \frac{2(1+\mu)}{\eta}\ \text{(HB)},\ \frac{2(1+\mu)}{(1+2\mu)\eta}\ \text{(NAG)}")
def momentum_thresholds_toy(budget) -> Result:
    r"""Tail averages of heavy ball and Nesterov on the toy (two momenta each) against the sympy cycle.

    Measured: :math:`a + \langle y\rangle^2` (the curvature along the oscillation at the average point) and
    :math:`\langle x^2\rangle`. Rivals: momentum leaves the threshold at :math:`2/\eta`; Nesterov's iterates
    oscillate like heavy ball's (:math:`\beta/y^\star`, without the look-ahead factor).
    """
    ex = E.selfstab_momentum(budget)
    ok = (~ex["diverged"]) & (ex["gap2"] < 1e-9)
    pred_S, pred_x2, hb_x2 = [], [], []
    for mom, nest, a in zip(ex["momentum"], ex["nesterov"], ex["a"]):
        ys, s2 = th.selfstab_equilibrium(a, E.TOY_BETA, E.TOY_ETA, mom, nesterov=bool(nest))
        pred_S.append(th.critical_sharpness(E.TOY_ETA, mom, nesterov=bool(nest)))
        pred_x2.append(s2)
        hb_x2.append(E.TOY_BETA / ys)
    pred_S, pred_x2 = np.array(pred_S)[ok], np.array(pred_x2)[ok]
    nest = ex["nesterov"][ok]
    why = ("tail averages of a converged period-2 orbit (gap < 1e-9 after 30000+ steps): round-off and the remaining "
           "distance to the cycle, far below 1e-6")
    checks = [
        Count("runs ending on a 2-cycle (finite, |w_T - w_{T-2}| < 1e-9)", measured=ok, predicted=True,
              why="each (momentum, a) was chosen inside its cycle's basin and stability window"),
        Exact("a + <y>^2: the curvature along x at the average point", predicted=pred_S,
              measured=ex["a"][ok] + ex["mean_y"][ok] ** 2, rtol=1e-6,
              rivals={"momentum leaves the edge at 2/eta": np.full(pred_S.size, 2.0 / E.TOY_ETA)}, why=why),
        Exact("<x^2> over the last block", predicted=pred_x2, measured=ex["mean_x2"][ok], rtol=1e-6,
              rivals={"Nesterov's iterates oscillate like heavy ball's, <x^2> = beta/y*": np.array(hb_x2)[ok]}
              if nest.any() else None, why=why),
    ]
    detail = "; ".join(f"{'NAG' if n else 'HB'} mu={m}: a + <y>^2 = {a + y * y:.6f} (critical {c:.6f}, 2/eta = {2 / E.TOY_ETA:g})"
                       for m, n, a, y, c in zip(ex["momentum"][ok], nest, ex["a"][ok], ex["mean_y"][ok], pred_S))
    return Result(checks, detail=detail, arrays={"momentum": ex["momentum"], "nesterov": ex["nesterov"], "a": ex["a"],
                                                 "mean_y": ex["mean_y"], "mean_x2": ex["mean_x2"]})


@claim("cohen2022.momentum_thresholds_network", paper=PAPER, provenance="secondary", kind="statistical",
       source="momentum thresholds of the edge of stability (secondary notes of the paper; the thresholds themselves are "
              "derived here from the characteristic polynomials, theory.eos.critical_sharpness)",
       statement="Trained with heavy ball or Nesterov momentum, a small network's sharpness settles right at, or just "
                 "above (within 5 %), the method's critical sharpness 2(1+mu)/eta or 2(1+mu)/((1+2mu) eta) -- not at "
                 "2/eta, not at the other method's threshold, and not at the threshold 2(1-mu)/eta of GD at the "
                 "'effective step' eta/(1-mu).",
       latex=r"\overline{\lambda_{\max}}\big|_{\text{settled}} = c\,T,\ 1 \le c \le 1.05,\ "
             r"T = \frac{2+2\mu}{\eta}\ \text{(HB)},\ \frac{2+2\mu}{(1+2\mu)\eta}\ \text{(NAG)}")
def momentum_thresholds_network(budget) -> Result:
    r"""Settled sharpness of heavy ball and Nesterov (three momenta each), fitted against each method's threshold.

    Measured per run: the Lanczos sharpness averaged over the last quarter of the run (fixed in advance). Fitted
    per method: :math:`\bar S = c\,T` through the origin (:func:`~paper_checks.eos.edge_of_stability.proportional_fit`,
    SE from the scatter of the method's runs). Predicted: :math:`c \in [1, 1.05]` for both methods, :math:`T` from
    :func:`theory.eos.critical_sharpness`. The runs' step sizes and momenta give thresholds from 3.4 to 4.4 where
    each rival formula, evaluated on the same runs, sits 9-100 % away: momentum leaves the edge at :math:`2/\eta`;
    the methods share one threshold (Nesterov's is heavy ball's, or the reverse); momentum acts as GD at the
    effective step :math:`\eta/(1-\mu)`, threshold :math:`2(1-\mu)/\eta`.
    """
    ex = E.mlp(budget)
    methods = ("heavy_ball", "nesterov")
    fitted, ses, rival_vals, reached_all, lines, dofs = [], [], {}, [], [], []
    rival_names = {"gd": "the edge of stability stays at 2/eta with momentum",
                   "other": "the two methods share one threshold (Nesterov's is heavy ball's, and the reverse)",
                   "effective": "momentum acts as GD at the effective step eta/(1-mu): threshold 2(1-mu)/eta"}
    for m in methods:
        rows = np.flatnonzero(ex["method"] == m)
        nest = m == "nesterov"
        eta, mu = ex["eta"][rows], ex["momentum"][rows]
        T = np.array([th.critical_sharpness(e, u, nesterov=nest) for e, u in zip(eta, mu)])
        S = ex["sharpness"][rows]
        reached = np.array([EOS.reaches(s, thr, d) for s, thr, d in zip(S, T, ex["diverged"][rows])])
        reached_all.append(reached)
        settled = EOS.settled_sharpness(S)
        ok = reached & np.isfinite(settled)  # a run that did not reach its threshold fails the count, never dropped
        c, se = EOS.proportional_fit(T[ok], settled[ok])
        fitted.append(c)
        ses.append(se)
        dofs.append(int(ok.sum()) - 1)
        others = {"gd": [th.critical_sharpness(e) for e in eta],
                  "other": [th.critical_sharpness(e, u, nesterov=not nest) for e, u in zip(eta, mu)],
                  "effective": [th.critical_sharpness(e / (1.0 - u)) for e, u in zip(eta, mu)]}
        for key, Tr in others.items():
            k = EOS.as_fitted_ratio(T[ok], np.asarray(Tr)[ok])
            rival_vals.setdefault(rival_names[key], []).append(k * (1.0 + EOS.JUST_ABOVE / 2))
        lines.append(f"{'NAG' if nest else 'HB'}: " + ", ".join(
            f"mu={u:g} eta={e:g} T={thr:.3f}: {sv / thr:.3f}" for u, e, thr, sv in zip(mu, eta, T, settled))
            + f" -> c = {c:.4f} +- {se:.4f}")
    checks = [
        EOS.at_or_just_above(
            "fitted c per method (heavy ball, Nesterov) in settled sharpness = c * T (prediction: c in [1, 1.05], shown "
            "as midpoint 1.025 with half-width 0.025 as bias)", np.array(fitted), np.array(ses),
            rivals={k: np.array(v) for k, v in rival_vals.items()},
            why=f"SE per method from the scatter of its three runs (different momenta and step sizes) about the fit "
                f"({min(dofs)} degrees of freedom: the band's coverage is Student's, in the tolerance); {EOS.Z:g} SE, plus the "
                f"'just above' interval [1, {1 + EOS.JUST_ABOVE:g}] (see the GD claim)", dof=min(dofs)),
        Count("runs that start below their threshold and reach it", measured=np.concatenate(reached_all), predicted=True,
              why="the momentum edge of stability needs progressive sharpening up to the threshold first"),
    ]
    detail = "settled sharpness / threshold (last quarter of each run): " + "; ".join(lines)
    rows = np.flatnonzero(np.isin(ex["method"], methods))
    return Result(checks, detail=detail, arrays={"t": ex["t"][rows], "sharpness": ex["sharpness"][rows],
                                                 "eta": ex["eta"][rows], "momentum": ex["momentum"][rows],
                                                 "method": ex["method"][rows], "fit": np.array([fitted, ses])},
                  seed=E.SEED)
