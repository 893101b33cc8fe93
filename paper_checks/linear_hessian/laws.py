r"""Claims beyond the whitened full-rank setting, at scale, on the gauge orbit, and on the abstract's robustness.

* the class law for inputs at orthogonal class means (:math:`\lambda_{\max}=Lr^{2/L}\max_cp_c`, not
  whitened), for whitened inputs of any scale (:math:`L\alpha^{1/L}\pi_{\max}^{1-1/L}`) and for inputs
  whitened on a subspace only (:math:`\Sigma_{xx}=\alpha P`): closed forms of :mod:`theory.linear_hessian`
  against autodiff Hessians of constructed minima (:func:`~paper_checks.linear_hessian.experiments.laws`);
* the top of the spectrum of a :math:`P=10^5` net by matrix-free Lanczos
  (:func:`~paper_checks.linear_hessian.experiments.lanczos_scale`);
* the balanced point as a local minimum of :math:`\lambda_{\max}` on its gauge orbit, by a
  finite-difference gradient and Hessian in the gauge algebra
  (:func:`~paper_checks.linear_hessian.experiments.gauge_local`);
* the abstract's "considerably robust in most cases", counted over the relaxations measured by
  ``hessian2026.shed_assumptions``.
"""
from __future__ import annotations

import numpy as np

from paper_checks._checks import Bound, Count, Exact
from paper_checks._registry import STEPLAB, Budget, Result, claim
from paper_checks.linear_hessian import PAPER
from paper_checks.linear_hessian import experiments as E
from sims.linear_hessian import cases
from theory import linear_hessian as T

# eigvalsh backward error ~ P eps ||H|| <= 4e-14 relative for P <= 180 and the constructed minima are
# exact to round-off (see spectrum.ROUNDOFF); 1e-9 of lambda_max keeps four orders of headroom
ROUNDOFF = 1e-9


def _cases(d: dict, group: str) -> np.ndarray:
    return np.flatnonzero(d["group"] == E.LAW_GROUPS.index(group))


def _eigs(c: dict) -> np.ndarray:
    return np.sort(c["eigenvalues"])


@claim("hessian2026.class_means_law", paper=PAPER, source="derived here (a non-whitened special case of the class law)",
       statement="For inputs at orthogonal class means of norm r (one-hot-like, not whitened) and one-hot labels, "
                 "the balanced minimum-norm global minimum has sharpness L r^(2/L) max_c p_c -- linear in the "
                 "largest proportion -- and non-zero eigenvalues L r^(2/L) p_c, K times each.",
       latex=r"\lambda_{\max}=L\,r^{2/L}\max_cp_c",
       provenance="derived", kind="exact")
def check_class_means_law(budget: Budget) -> Result:
    """Autodiff Hessians at balanced minima of orthogonal-class-mean data (L = 1..4, r in {0.5, 3} (full: also 2),
    d0 = K and d0 > K, three class splits): lambda_max against L r^(2/L) p_max, and the whole spectrum against
    {L r^(2/L) p_c (K each), zeros}. Rivals on the same lambda_max: the whitened law at the input scale alpha = r^2
    (L r^(2/L) pi_max^(1-1/L)), and the radius entering as r^2 at every depth (L r^2 p_max)."""
    d = E.laws(budget)
    idx = _cases(d, "means")
    p = E.proportions(d["counts"][idx])
    depth, r = d["depth"][idx], d["radius"][idx]
    pred = np.array([T.class_means_sharpness(pi, L, rad) for pi, L, rad in zip(p, depth, r)])
    meas = np.array([_eigs(c)[-1] for c in cases(d, idx)])
    full_pred = np.concatenate([T.class_means_spectrum(pi, c["widths"], rad) / lam
                                for pi, c, rad, lam in zip(p, cases(d, idx), r, pred)])
    full_meas = np.concatenate([_eigs(c) / lam for c, lam in zip(cases(d, idx), pred)])
    pm = p.max(axis=1)
    checks = [
        Exact("lambda_max at the balanced minimum (orthogonal class means)", predicted=pred, measured=meas,
              rtol=ROUNDOFF,
              rivals={"whitened law at alpha = r^2: L r^(2/L) pi_max^(1-1/L)": depth * r ** (2 / depth) * pm ** (1 - 1 / depth),
                      "radius squared at every depth: L r^2 p_max": depth * r ** 2 * pm},
              why="exact minima; float64 eigvalsh round-off ~ P eps ||H|| <= 4e-14 relative"),
        Exact("whole spectrum / lambda_max", predicted=full_pred, measured=full_meas, atol=ROUNDOFF,
              why="float64 eigvalsh round-off"),
    ]
    return Result(checks, detail=f"{len(idx)} nets (L = {depth.min()}..{depth.max()}, r in {sorted(set(r.tolist()))}, "
                                 f"p_max in {sorted(set(np.round(pm, 2).tolist()))}): max relative error of lambda_max "
                                 f"{np.max(np.abs(meas - pred) / pred):.1e}",
                  arrays={"pi_max": pm, "depth": depth, "radius": r, "predicted": pred, "measured": meas},
                  seed=int(d["seed"]))


@claim("hessian2026.alpha_law", paper=PAPER, source="derived here",
       statement="With whitened inputs of any scale (Sigma_xx = alpha I) and one-hot labels the sharpness at a "
                 "balanced global minimum is L alpha^(1/L) pi_max^(1-1/L): the input scale enters with the power "
                 "1/L, not linearly.",
       latex=r"\lambda_{\max}=L\,\alpha^{1/L}\pi_{\max}^{1-1/L}",
       provenance="derived", kind="exact")
def check_alpha_law(budget: Budget) -> Result:
    """Autodiff lambda_max at balanced minima of whitened one-hot data with alpha in {0.25, 4} (full: 0.25 .. 9),
    L = 1..4, against L alpha^(1/L) pi_max^(1-1/L). Rivals on the same numbers: every eigenvalue scales with alpha
    (alpha L pi_max^(1-1/L)), and the sharpness does not depend on the input scale (L pi_max^(1-1/L))."""
    d = E.laws(budget)
    idx = _cases(d, "alpha")
    p = E.proportions(d["counts"][idx])
    depth, alpha = d["depth"][idx], d["alpha"][idx]
    pred = np.array([T.class_sharpness(pi, L, a) for pi, L, a in zip(p, depth, alpha)])
    meas = np.array([_eigs(c)[-1] for c in cases(d, idx)])
    base = np.array([T.class_sharpness(pi, L) for pi, L in zip(p, depth)])
    check = Exact("lambda_max at the balanced minimum (Sigma_xx = alpha I)", predicted=pred, measured=meas,
                  rtol=ROUNDOFF,
                  rivals={"linear in alpha: alpha L pi_max^(1-1/L)": alpha * base,
                          "independent of alpha: L pi_max^(1-1/L)": base},
                  why="exact minima; float64 eigvalsh round-off")
    return Result([check], detail=f"{len(idx)} nets (L = {depth.min()}..{depth.max()}, alpha in "
                                  f"{sorted(set(alpha.tolist()))}): max relative error {np.max(np.abs(meas - pred) / pred):.1e}",
                  arrays={"alpha": alpha, "depth": depth, "pi_max": p.max(axis=1), "predicted": pred, "measured": meas},
                  seed=int(d["seed"]))


@claim("hessian2026.projected_inputs", paper=PAPER, source="derived here (assumption A1 with a projection)",
       statement="If the inputs are whitened on a subspace only (Sigma_xx = alpha P, P an orthogonal projection of "
                 "rank m < d0), the balanced minimum-norm global minimum has the whitened spectrum with d0 replaced "
                 "by m: input-side bulk m - r, rank r(m + dL - r), the other eigenvalues zero.",
       latex=r"\Sigma_{xx}=\alpha P:\ \operatorname{spec}H=\operatorname{spec}H\big|_{d_0\to m},\ "
             r"\operatorname{rank}H=r(m+d_L-r)",
       provenance="derived", kind="exact")
def check_projected_inputs(budget: Budget) -> Result:
    """Every autodiff eigenvalue of nets on rank-deficient whitened inputs (d0 = 6, m = 2..5, L = 1..4, generic
    labels with a non-zero residual, and one-hot labels) against the spectrum with d0 -> m; the numerical rank
    against r(m + dL - r) (L >= 2; m dL for L = 1). Rivals: the full-rank formula (bulk d0 - r, as if X had full
    rank), and full-rank inputs of the same total variance (alpha m / d0 on every direction)."""
    d = E.laws(budget)
    idx = np.concatenate([_cases(d, "projected"), _cases(d, "projected_class")])
    pred, meas, full, spread, prank, mrank = [], [], [], [], [], []
    for c in cases(d, idx):
        w, m = c["widths"], int(c["input_rank"])
        alpha = float(c["alpha"]) if np.isfinite(c["alpha"]) else 1.0
        sv = np.linalg.svd(c["sigma_yx"], compute_uv=False)
        sv[sv < 1e-10 * sv[0]] = 0.0
        p = T.projected_spectrum(w, alpha, sv, m)
        scale = p[-1]
        ev = _eigs(c)
        pred.append(p / scale), meas.append(ev / scale)
        full.append(T.spectrum(w, alpha, sv) / scale)
        # same trace of Sigma_xx spread over all d0 directions: alpha' = alpha m / d0, W* = Syx / alpha'
        a2 = alpha * m / w[0]
        full_sv = sv[sv > 0]
        spread.append(T.spectrum(w, a2, full_sv) / scale)
        r = int(np.sum(sv > 0))
        prank.append(m * w[-1] if len(w) == 2 else r * (m + w[-1] - r))
        mrank.append(T.numeric_rank(ev, rtol=1e-8))
    checks = [
        Exact("every eigenvalue / predicted lambda_max", predicted=np.concatenate(pred), measured=np.concatenate(meas),
              atol=ROUNDOFF,
              rivals={"full-rank formula (bulk d0 - r)": np.concatenate(full),
                      "full-rank inputs of the same variance (alpha m / d0)": np.concatenate(spread)},
              why="exact minima; float64 eigvalsh round-off"),
        Exact("numerical rank of H", predicted=np.array(prank, float), measured=np.array(mrank, float), atol=0.5,
              why="integers: any difference is a miscount (rank threshold 1e-8 of lambda_max)"),
    ]
    return Result(checks, detail=f"{len(idx)} nets, input rank m in {sorted(set(d['input_rank'][idx].tolist()))} < d0 = "
                                 f"6: ranks {mrank}; max |error| / lambda_max "
                                 f"{np.max(np.abs(np.concatenate(pred) - np.concatenate(meas))):.1e}",
                  arrays={"predicted_rank": np.array(prank), "measured_rank": np.array(mrank)}, seed=int(d["seed"]))


def distinct_top(values, k: int, rel: float = 1e-2) -> np.ndarray:
    """The ``k`` largest values after merging any value within ``rel`` (relative) of a larger kept one."""
    out: list[float] = []
    for v in np.sort(np.asarray(values, float))[::-1]:
        if not out or v < out[-1] * (1 - rel):
            out.append(float(v))
        if len(out) == k:
            break
    return np.array(out + [np.nan] * (k - len(out)))


@claim("hessian2026.lanczos_at_scale", paper=PAPER, source="abstract ('arbitrary widths'); closed form derived here",
       statement="The closed-form spectrum holds for wide nets: the top Hessian eigenvalues of a deep linear net with "
                 "P = 1e5 parameters at a balanced global minimum, found matrix-free by HVP-Lanczos, are the closed "
                 "form's kappa_11 > kappa_12 > kappa_13.",
       latex=r"\operatorname{top}_3\operatorname{spec}H=\{\kappa_{11},\kappa_{12},\kappa_{13}\},\ P=10^5",
       provenance="derived", kind="exact")
def check_lanczos_at_scale(budget: Budget) -> Result:
    """A three-layer linear net of widths (200, 200, 200, 100) (P = 1e5; quick: (40, 40, 40, 20), P = 4e3) at a
    balanced minimum of whitened data with chosen singular values: the three largest distinct Ritz values after 60
    (quick 40) Lanczos steps on the autodiff HVP against the three largest distinct closed-form eigenvalues.
    Rivals: exponent 1 (L s^2 in place of L s^(2(L-1)/L)), and the class outliers L s_i^(2(L-1)/L) alone (no
    cross terms kappa_ij, i != j). The wall time per eigenvalue is in the detail."""
    d = E.lanczos_scale(budget)
    w = tuple(int(x) for x in d["widths"])
    L = len(w) - 1
    s = d["singular_values"]
    spec = T.spectrum(w, 1.0, s)
    pred = distinct_top(spec, E.SCALE_K)
    meas = distinct_top(d["ritz"], E.SCALE_K)
    exp1 = distinct_top(T.spectrum(w, 1.0, s ** (L / (L - 1))), E.SCALE_K)
    diag = distinct_top(L * s ** (2 * (L - 1) / L), E.SCALE_K)
    per_eig = float(d["run_s"]) / E.SCALE_K
    check = Exact(f"top {E.SCALE_K} distinct eigenvalues, P = {int(d['n_params'])}", predicted=pred, measured=meas,
                  rtol=1e-6,
                  rivals={"exponent 1: L s^2": exp1, "class outliers only (no kappa_ij, i != j)": diag},
                  why="the closed form's top distinct values are >= 13 % apart, so Lanczos converges geometrically "
                      "(error < 1e-9 after 40 steps here); 1e-6 covers that and HVP round-off; values within 1 % of a "
                      "larger Ritz value are copies of the doubly degenerate kappa_ij = kappa_ji, merged")
    return Result([check],
                  detail=f"widths {w}, P = {int(d['n_params'])}, {int(d['num_iter'])} Lanczos steps: {d['run_s']:.2f} s "
                         f"after a {d['compile_s']:.1f} s compile, i.e. {per_eig:.2f} s per eigenvalue "
                         f"({1e3 * d['run_s'] / d['num_iter']:.1f} ms per HVP step); max relative error "
                         f"{np.max(np.abs(meas - pred) / pred):.1e}",
                  arrays={"predicted": pred, "measured": meas, "ritz": d["ritz"], "n_params": np.array(d["n_params"]),
                          "run_s": np.array(d["run_s"])},
                  seed=int(d["seed"]))


def gauge_derivatives(lam: np.ndarray, dim: int, h: float) -> tuple[float, np.ndarray, np.ndarray]:
    r"""Central differences on :func:`~paper_checks.linear_hessian.experiments.gauge_stencil`: value, gradient, Hessian.

    :math:`g_i=(f(he_i)-f(-he_i))/2h`, :math:`M_{ii}=(f(he_i)-2f(0)+f(-he_i))/h^2`,
    :math:`M_{ij}=(f(h(e_i+e_j))-f(h(e_i-e_j))-f(-h(e_i-e_j))+f(-h(e_i+e_j)))/4h^2`; errors
    :math:`O(h^2)` from the third and fourth derivatives.
    """
    f0 = lam[0]
    pm = lam[1:1 + 2 * dim].reshape(dim, 2)
    g = (pm[:, 0] - pm[:, 1]) / (2 * h)
    M = np.diag((pm[:, 0] - 2 * f0 + pm[:, 1]) / h ** 2)
    k = 1 + 2 * dim
    for i in range(dim):
        for j in range(i + 1, dim):
            a, b, c, e = lam[k:k + 4]
            M[i, j] = M[j, i] = (a - b - c + e) / (4 * h * h)
            k += 4
    return float(f0), g, M


def _skew_basis(hidden: tuple[int, ...]) -> np.ndarray:
    """Orthonormal basis (columns) of the skew-symmetric directions of the gauge algebra (orthogonal gauges)."""
    dim = sum(d * d for d in hidden)
    cols, o = [], 0
    for d in hidden:
        for i in range(d):
            for j in range(i + 1, d):
                v = np.zeros(dim)
                v[o + i * d + j], v[o + j * d + i] = 1 / np.sqrt(2), -1 / np.sqrt(2)
                cols.append(v)
        o += d * d
    return np.array(cols).T


@claim("hessian2026.balanced_flattest_local", paper=PAPER, source="derived here",
       statement="A balanced global minimum is a local minimum of lambda_max on its gauge orbit: the gradient along "
                 "every gauge direction vanishes, the second-order form in the gauge algebra is positive "
                 "semi-definite, and it is flat exactly along the orthogonal gauges (which keep balance).",
       latex=r"\nabla_E\lambda_{\max}\big|_{E=0}=0,\quad \nabla_E^2\lambda_{\max}\big|_{E=0}\succeq0,\ "
             r"\ker\supseteq\mathfrak{so}",
       provenance="derived", kind="exact")
def check_balanced_flattest_local(budget: Budget) -> Result:
    """lambda_max (autodiff Hessians) on a central-difference stencil (h = 1e-3) in the gauge algebra
    (+)_l gl(d_l) around balanced minima of one-hot data ((6, 4, 3); full: also (6, 3, 3), (4, 3, 3, 3)): the gradient
    is zero, the smallest eigenvalue of the second-order form is >= 0, and the form vanishes on the skew-symmetric
    (orthogonal-gauge) directions. Rivals: the balanced point an ordinary point of its orbit (gradient as large as
    the curvature makes it at gauge distance 0.05); strict convexity along every gauge direction (smallest
    curvature >= 1 % of the largest) -- the orthogonal gauges are flat."""
    d = E.gauge_local(budget)
    h = float(d["h"])
    grads, mins, skews, tops, rival_g, parts = [], [], [], [], [], []
    for c in range(int(d["n_cases"])):
        w = tuple(int(x) for x in d[f"widths_{c}"])
        f0, g, M = gauge_derivatives(d[f"lam_{c}"], int(d[f"dim_{c}"]), h)
        ev = np.linalg.eigvalsh(M)
        Q = _skew_basis(w[1:-1])
        skew = np.linalg.eigvalsh(Q.T @ M @ Q)
        grads.append(g / f0), mins.append(ev[0] / ev[-1]), skews.append(skew / ev[-1]), tops.append(ev[-1])
        # at gauge distance 0.05 along the stiffest direction the gradient is ~ 0.05 * (largest curvature)
        rival_g.append(np.full(g.size, 0.05 * ev[-1] / f0))
        parts.append(f"{w}: |grad| {np.abs(g).max():.1e}, curvatures {ev[0]:.1e} .. {ev[-1]:.2f} "
                     f"({int(np.sum(ev > 1e-3 * ev[-1]))} of {ev.size} positive)")
    # FD errors: h^2 |f'''| / 6 for the gradient and h^2 |f''''| / 12 for M, with derivatives of the size of the
    # largest curvature (~20 lambda_max); round-off eps f / h^2 ~ 2e-10. 1e-4 relative bounds both.
    fd = 1e-4
    checks = [
        Exact("gradient of lambda_max in the gauge algebra / lambda_max", predicted=0.0, measured=np.concatenate(grads),
              atol=fd, rivals={"an ordinary point of the orbit (gradient at gauge distance 0.05)": np.concatenate(rival_g)},
              why="central differences, error h^2 f'''/6 with h = 1e-3: < 1e-4 relative"),
        Bound("smallest eigenvalue / largest of the second-order form", measured=np.array(mins), bound=0.0, side=">=",
              slack=fd, rivals={"strictly convex along every gauge direction (>= 1 % of the largest)": 0.01},
              why="finite-difference error of the second-order form, < 1e-4 of its largest eigenvalue"),
        Exact("second-order form on the orthogonal (skew) gauge directions / largest", predicted=0.0,
              measured=np.concatenate(skews), atol=fd,
              why="orthogonal gauges map balanced minima to balanced minima with the same spectrum; FD error < 1e-4"),
    ]
    return Result(checks, detail="; ".join(parts), arrays={"min_ratio": np.array(mins), "top": np.array(tops)},
                  seed=int(d["seed"]))


# steplab's own reading of the abstract's "considerably robust in most cases" (which predictions and cases the paper
# means is not recoverable from the abstract): a relaxation counts as "robust" if its lambda_max lies within 25 % of
# the law (a factor 1.25 either way). The law's use is the step-size limit eta_c = 2 / lambda_max, which GD resolves
# to a few per cent (hessian2026.max_lr_law), so 25 % is a generous reading. The count is sensitive to this choice
# (the measured departures spread over 1.1x .. 4x), so the detail also reports it at factors 1.5 and 2.
ROBUST_FACTOR = 1.25


@claim("steplab.class_law_relaxation_count", paper=STEPLAB,
       source="found here, shedding hessian2026's assumptions one at a time (the count, its 25 % rule and the two "
              "gauge cases are steplab's; the abstract says only 'considerably robust in most cases')",
       statement="Shedding the class law's assumptions one at a time, unbalanced minima (gauge 0.3 and 1), Glorot "
                 "initialization and non-whitened inputs move lambda_max by 1.3x to several-fold away from "
                 "L pi_max^(1-1/L) -- by the amount the Gauss-Newton operator predicts -- and only the two nonlinear "
                 "relaxations (tanh, ReLU) stay within 25 %: 2 of steplab's 6. Reading the abstract's 'most' as at "
                 "least 4 of these 6 is steplab's reading, tested as a rival, not the paper's statement.",
       latex=r"\#\{\text{relaxations with }|\log(\lambda_{\max}/\lambda_{\text{law}})|\le\log1.25\}=2\ \text{of}\ 6",
       provenance="derived", kind="exact",
       coarse_reason="a count of six relaxations: the smallest change it can resolve is one relaxation, 50 % of 2")
def check_robustness_count(budget: Budget) -> Result:
    """The six relaxations of hessian2026.shed_assumptions (gauge 0.3, gauge 1, Glorot init, mixed inputs after GD,
    tanh, ReLU; medians / means over their runs), each lambda_max (autodiff) over the law. Per linear relaxation,
    steplab predicts from the Gauss-Newton operator of the same weights (not from the autodiff Hessian) whether it
    stays within 25 %; the count of robust relaxations of six is compared with steplab's (the linear ones predicted,
    the two nonlinear ones taken as measured: steplab has no closed form for them). Rivals: every relaxation robust
    (6 of 6); steplab's reading of the abstract's 'most' as at least 4 of 6."""
    from paper_checks.linear_hessian import shed

    rows = shed.relaxation_table(budget)
    labels = [r[0] for r in rows]
    measured = np.array([r[1] for r in rows])
    predicted_gn = np.array([r[2] for r in rows])
    dev = np.abs(np.log(measured))
    within = dev <= np.log(ROBUST_FACTOR)
    linear = np.isfinite(predicted_gn)
    pred_within = np.where(linear, np.abs(np.log(np.where(linear, predicted_gn, 1.0))) <= np.log(ROBUST_FACTOR),
                           within)
    checks = [
        Exact(f"relaxations with lambda_max within {ROBUST_FACTOR}x of the law (of 6)", predicted=float(pred_within.sum()),
              measured=float(within.sum()), atol=0.5,
              rivals={"robust in every relaxation (6 of 6)": 6.0,
                      "'most' read as 4 of 6 (steplab's reading of the abstract, not the paper's number)": 4.0},
              why="a count: any difference is a miscount"),
        Count("linear relaxations robust, autodiff vs Gauss-Newton prediction", measured=within[linear],
              predicted=pred_within[linear],
              rivals={"the law survives every linear relaxation": np.ones(int(linear.sum()), bool)},
              why="per relaxation, the same 25 % rule on the prediction and on the measurement"),
    ]
    other = ", ".join(f"{int(np.sum(dev <= np.log(f)))} of 6 within {f:g}x" for f in (1.5, 2.0))
    return Result(checks, detail="lambda_max / law: " + ", ".join(f"{a} {m:.2f}" for a, m in zip(labels, measured))
                                 + f"; robust (within {ROBUST_FACTOR}x) in {int(within.sum())} of {len(rows)} "
                                   f"({other})",
                  arrays={"labels": np.array(labels), "ratio": measured, "predicted_ratio": predicted_gn},
                  seed=E.SEED)
