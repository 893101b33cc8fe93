r"""Mulayoff & Michaeli (2024): the exact mean-square stability threshold of SGD and how it depends on the batch.

The paper text was not available; its abstract states that the threshold is non-decreasing in the
batch size and that SGD is as stable as a mixture process taking a full-batch step with probability
:math:`1 - p` and a single-sample step with probability :math:`p \approx 1/B`. Statements are therefore
SECONDARY; steplab re-derives the operator :math:`\mathcal M_B`, the exact :math:`p = (n-B)/(B(n-1))` and
the threshold as a generalized eigenvalue (:mod:`theory.sgd_stability`). The almost-sure threshold,
the naive Monte Carlo trap and the shrinking set of stable minima are DERIVED here.

Every measurement comes from :mod:`paper_checks.sgd_stability.experiments` (exact enumeration of
batches, or Monte Carlo paths), never from the closed forms it is compared with.
"""
from __future__ import annotations

import numpy as np

import theory.sgd_stability as th
from paper_checks import STEPLAB, Bound, Budget, Categorical, Count, Exact, Paper, Result, Statistical, claim
from paper_checks.sgd_stability import experiments as ex

PAPER = Paper(
    key="mulayoff2024", title="Exact Mean Square Linear Stability Analysis for SGD",
    authors="R. Mulayoff, T. Michaeli", year=2024, arxiv="2306.07850", venue="COLT 2024",
)


def _mixture(h: np.ndarray, sizes: np.ndarray, p: np.ndarray) -> np.ndarray:
    r""":math:`(1-p)H\otimes H + p\frac1n\sum_i H_i\otimes H_i` for arbitrary weights :math:`p` (to state rivals)."""
    n = h.shape[0]
    hh, s = th.kron_second_moment(h, n), th.kron_second_moment(h, 1)  # p = 0 and p = 1 of the identity
    return np.stack([(1 - q) * hh + q * s for q in p])


@claim("mulayoff2024.mixture_identity", paper=PAPER, provenance="secondary", kind="exact",
       source="abstract (mixture process with p ~ 1/B); exact p = (n - B)/(B(n - 1)) derived here by counting pairs",
       statement="For batches drawn uniformly without replacement, E[H_B (x) H_B] = (1 - p) H (x) H + p (1/n) sum_i H_i (x) H_i "
                 "with p = (n - B)/(B(n - 1)).",
       latex=r"E[H_{\mathcal B}\otimes H_{\mathcal B}] = (1-p)\,H\otimes H + \frac pn\sum_i H_i\otimes H_i,\quad p = \frac{n-B}{B(n-1)}")
def mixture_identity(budget: Budget) -> Result:
    """E[H_B (x) H_B] by enumerating all C(n, B) batches (B = 1..8, n = 8, d = 3) against the mixture formula; and the
    two mixture weights read off the enumeration against those sympy derives from the inclusion probabilities
    (:func:`theory.sgd_stability.mixture_identity_sympy`)."""
    h = ex.ls_problem()
    run = ex.mixture_identity(budget)
    sizes, enumerated = run["batch_sizes"], run["enumerated"]
    n = h.shape[0]
    predicted = np.stack([th.kron_second_moment(h, int(b)) for b in sizes])
    scale = float(np.abs(predicted).max())
    check = Exact(
        "E[H_B ⊗ H_B], all 81 entries for each B = 1..8", predicted=predicted, measured=enumerated,
        rtol=1e-12, atol=1e-12 * scale,
        rivals={"batches drawn with replacement: p = 1/B": np.stack([th.kron_second_moment(h, int(b), "with") for b in sizes]),
                "p = (n - B)/(B n)": _mixture(h, sizes, (n - sizes) / (sizes * n))},
        why="both sides are sums of at most 70 float64 products of entries of size ~10: round-off ~1e-15 of the largest "
            "entry; 1e-12 leaves three decades")
    err = float(np.abs(enumerated - predicted).max() / scale)
    # the two weights read off the enumeration (least squares on the basis H(x)H, (1/n) sum_i H_i(x)H_i) against the
    # weights sympy derives from the inclusion probabilities: the derivation itself, not only its closed form, is seen
    basis = np.stack([th.kron_second_moment(h, n).ravel(), th.kron_second_moment(h, 1).ravel()], axis=1)
    fitted = np.array([np.linalg.lstsq(basis, e.ravel(), rcond=None)[0] for e in enumerated])
    sym = th.mixture_identity_sympy()
    derived = np.array([[float(sym[k].subs({sym["n"]: n, sym["B"]: int(b)})) for k in ("w_hh", "w_s")] for b in sizes])
    weights = Exact(
        "weights of H⊗H and (1/n)Σ H_i⊗H_i in the enumerated E[H_B ⊗ H_B], B = 1..8", predicted=derived, measured=fitted,
        atol=1e-10,
        rivals={"batches drawn with replacement: weights (1 - 1/B, 1/B)": np.stack([1 - 1 / sizes, 1 / sizes], axis=1)},
        why="a two-column least-squares fit of entries known to ~1e-15 relative; the columns are far from collinear "
            "(condition number ~10), so the weights carry ~1e-14; 1e-10 leaves four decades")
    return Result([check, weights], detail=f"max |enumerated - mixture| / max entry = {err:.1e} over B = 1..{n}; "
                                           f"fitted weights (B = 1..{n}): {np.round(fitted[:, 1], 6).tolist()} (of the "
                                           f"per-sample part)",
                  arrays={"batch_sizes": sizes})


@claim("mulayoff2024.threshold_nondecreasing_in_batch", paper=PAPER, provenance="quoted", kind="exact",
       source="abstract (threshold non-decreasing in B); eta*(n) = 2/lambda_max is gradient descent's limit; "
              "eta*(B) = 1/lambda_max(Q_B, H(x)I + I(x)H) derived here",
       quote="In particular, we show that the stability threshold is monotonically non-decreasing in the batch size, "
             "which means that reducing the batch size can only decrease stability.",
       where="arXiv:2306.07850, abstract",
       statement="The mean-square threshold eta*(B) = sup{eta : rho(M_B) < 1} is non-decreasing in B, equals 2/lambda_max "
                 "at B = n, and the exact second moment grows like rho(M_B)^t.",
       latex=r"\eta^*(B) = \sup\{\eta: \rho(\mathcal M_B) < 1\}\ \uparrow\ \text{in } B,\quad \eta^*(n) = 2/\lambda_{\max},"
             r"\quad \mathrm{tr}\,\Sigma_t \asymp \rho(\mathcal M_B)^t")
def threshold_nondecreasing(budget: Budget) -> Result:
    """Thresholds located on the exactly enumerated second moment (B = 1..8) against ms_threshold; growth rates against log rho(M_B)."""
    h = ex.ls_problem()
    run = ex.ms_thresholds(budget)
    asr = ex.as_thresholds(budget)
    sizes, measured = run["batch_sizes"], run["crossing"]
    core = threshold_nondecreasing_checks(h, sizes, measured, run["lo"], run["hi"])
    thresholds, at_n, order = core.checks
    predicted, rtol = core.arrays["predicted"], core.arrays["rtol"]
    lam = float(np.linalg.eigvalsh(h.mean(axis=0))[-1])
    why = "the sign change of the simulated growth rate lies in the final refinement bracket (its relative width)"
    pick = np.searchsorted(sizes, asr["ls_sizes"])
    vs_as = Exact(f"η̂*(B) at B = {asr['ls_sizes'].tolist()}", predicted=predicted[pick], measured=measured[pick], rtol=rtol,
                  rivals={"the almost-sure (Lyapunov) threshold η̂_as(B)": asr["ls_crossing"]}, why=why)
    # growth of the exact second moment against log rho(M_B) on a fixed eta grid
    etas, rates = run["curve_eta"], run["curve_rate"]
    log_rho = np.array([[np.log(th.spectral_radius(h, int(b), e)) for e in etas] for b in sizes])
    log_rho_gd = np.array([[2 * np.log(np.max(np.abs(1 - e * np.linalg.eigvalsh(h.mean(axis=0))))) for e in etas]
                           for _ in sizes])
    growth = Exact(
        f"growth rate of tr Σ_t per step, {sizes.size} batch sizes x {etas.size} step sizes", predicted=log_rho,
        measured=rates, atol=1e-6,
        rivals={"gradient descent's rate 2 log max|1 - ηλ| for every B": log_rho_gd},
        why="least-squares slope of log tr Σ_t over T/2 < t <= T: subdominant modes decay like (ρ2/ρ1)^(T/2) and "
            "leave < 1e-7 at T = 200 on this problem")
    return Result([thresholds, at_n, vs_as, order, growth],
                  detail=f"η̂*(B) = {np.round(measured, 5).tolist()} (brackets ≤ {rtol:.1e} relative); 2/λ_max = {2 / lam:.5f}; "
                         f"exact enumeration over {run['n_steps']} steps",
                  arrays={"batch_sizes": sizes, "measured": measured, "predicted": predicted, "gd": np.array(2 / lam),
                          "curve_eta": etas, "curve_rate": rates, "curve_log_rho": log_rho})


def _span(sizes: np.ndarray) -> str:
    """``1..8`` for consecutive batch sizes, else their list."""
    return f"{sizes[0]}..{sizes[-1]}" if np.all(np.diff(sizes) == 1) else str(sizes.tolist())


def threshold_nondecreasing_checks(h: np.ndarray, sizes: np.ndarray, crossing: np.ndarray, lo: np.ndarray,
                                   hi: np.ndarray) -> Result:
    r"""Core of ``mulayoff2024.threshold_nondecreasing_in_batch``: the checks on measured mean-square thresholds.

    ``crossing``, ``lo``, ``hi``: per batch size in ``sizes`` (increasing), where the growth rate of the exactly
    enumerated second moment changes sign and the final bracket around it, on the per-sample Hessians ``h`` (n, d, d).
    Predicted: :math:`\eta^*(B) = 1/\lambda_{\max}(Q_B, H\otimes I + I\otimes H)` (:func:`theory.sgd_stability.ms_threshold`)
    within the largest relative bracket; :math:`\eta^*(n) = 2/\lambda_{\max}(H)` when ``sizes`` ends at :math:`B = n`;
    and the signs of consecutive differences, counted only where a difference exceeds both brackets. Rivals:
    :math:`2/\lambda_{\max}` for every :math:`B`, linear scaling :math:`B\eta^*(1)`, batches with replacement; a
    trace criterion at :math:`B = n`; a flat or decreasing threshold.
    """
    sizes = np.asarray(sizes)
    width = (hi - lo) / crossing
    predicted = np.array([th.ms_threshold(h, int(b)) for b in sizes])
    lam = float(np.linalg.eigvalsh(h.mean(axis=0))[-1])
    # the sign change is certain to lie in the final bracket; the finite-horizon bias of the fitted rate moves it by
    # far less (T = 200 and T = 2000 agree to 3e-8 relative on the claim's problem), so the bracket width is the tolerance
    rtol = float(width.max())
    why = "the sign change of the simulated growth rate lies in the final refinement bracket (its relative width)"
    checks = [Exact(
        f"η̂*(B), B = {_span(sizes)}", predicted=predicted, measured=crossing, rtol=rtol,
        rivals={"η*(B) = 2/λ_max for every B": np.full(sizes.size, 2 / lam),
                "linear scaling η*(B) = B η*(1)": sizes * th.ms_threshold(h, 1),
                "batches with replacement (p = 1/B)": np.array([th.ms_threshold(h, int(b), "with") for b in sizes])},
        why=why)]
    n = h.shape[0]
    if sizes[-1] == n:
        checks.append(Exact(f"η̂*(n) at B = n = {n}", predicted=2 / lam, measured=crossing[-1], rtol=rtol,
                            rivals={"η*(n) = 2/tr H (a trace criterion)": 2 / float(np.trace(h.mean(axis=0)))}, why=why))
    if sizes.size > 1:
        # an ordering is measured only where consecutive thresholds are farther apart than their brackets
        gaps = np.diff(crossing)
        resolved = np.abs(gaps) > (hi - lo)[1:] + (hi - lo)[:-1]
        checks.append(Categorical(f"sign of η̂*(B+1) - η̂*(B), B = {_span(sizes[:-1])}",
                                  measured=np.where(resolved, np.sign(gaps), 0).astype(int),
                                  predicted=np.sign(np.diff(predicted)).astype(int),
                                  rivals={"flat: the batch size does not matter": 0, "smaller batches are more stable": -1},
                                  why="a difference counts only when larger than both brackets"))
    return Result(checks, arrays={"batch_sizes": sizes, "measured": crossing, "predicted": predicted, "rtol": rtol})


@claim("mulayoff2024.second_moment_of_paths_large_n", paper=PAPER, provenance="secondary", kind="statistical",
       source="abstract (exact mean-square analysis); steplab's operator M_B, checked on n = 64 where batches cannot be enumerated",
       statement="Monte Carlo SGD paths with batches drawn without replacement have E||theta_t||^2 = tr(M_B^t Sigma_0), "
                 "and the noise each step's batch adds is the without-replacement share p = (n - B)/(B(n - 1)) of the "
                 "population's spread: E||(H_B - H) theta||^2 = p (1/n) sum_i ||(H_i - H) theta||^2.",
       latex=r"E\|\theta_t\|^2 = \mathrm{tr}\,\mathrm{mat}\big(\mathcal M_B^t\,\mathrm{vec}\,\Sigma_0\big),\quad "
             r"\frac{E\|(H_{\mathcal B}-H)\theta\|^2}{\frac1n\sum_i\|(H_i-H)\theta\|^2} = p = \frac{n-B}{B(n-1)}")
def second_moment_of_paths(budget: Budget) -> Result:
    """Mean ||theta_t||^2 over many short paths (n = 64, B = 16 and 32) against tr(M_B^t Sigma_0), with its standard
    error; and the batch-noise share of the population's spread, step by step on the same paths, against p.

    The second moment's batch-noise part is small next to gradient descent's at these step sizes, so its check alone
    resolves p only to tens of per cent; the per-step share resolves it to a fraction of a per cent (n - 1 against n
    in p is 1.6 % at n = 64). Rivals: batches with replacement (p = 1/B); the finite-population correction with n
    (p = (n - B)/(Bn)); gradient descent's second moment (no batch noise)."""
    h = ex.large_problem()
    run = ex.large_n_moments(budget)
    sizes, etas, theta0 = run["batch_sizes"], run["eta"], run["theta0"]
    n = h.shape[0]
    t_max = run["mean"].shape[1] - 1
    s0 = np.outer(theta0, theta0)

    def traces(sampling: str, gd: bool = False) -> np.ndarray:
        return np.stack([th.moment_trace(h, n if gd else int(b), float(e), s0, t_max, sampling)[1:]
                         for b, e in zip(sizes, etas)])

    moment = Statistical(
        f"mean ‖θ_t‖², t = 1..{t_max}, B = {sizes.tolist()}", estimate=run["mean"][:, 1:], se=run["se"][:, 1:],
        predicted=traces("without"), z=4.0,
        rivals={"batches drawn with replacement (p = 1/B)": traces("with"),
                "no batch noise: gradient descent's ‖(I - ηH)^t θ0‖²": traces("without", gd=True)},
        why="the standard error is the spread of ‖θ_t‖² over independent paths / sqrt(paths); the estimator is "
            "unbiased; z = 4 over the correlated entries")
    p = np.array([th.batch_weight(n, int(b)) for b in sizes])
    share = Statistical(
        f"batch noise / population spread per step, B = {sizes.tolist()}", estimate=run["noise_share"],
        se=run["noise_share_se"], predicted=p, z=4.0,
        rivals={"batches drawn with replacement (p = 1/B)": np.array([th.batch_weight(n, int(b), "with") for b in sizes]),
                "the correction with n, not n − 1: p = (n − B)/(Bn)": (n - sizes) / (sizes * n)},
        why="given θ_t the ratio's expectation is p whatever θ_t is, so the ratios of all steps and paths are "
            "uncorrelated around p: standard error = their sample standard deviation / sqrt(count); unbiased")
    return Result([moment, share],
                  detail=f"{run['n_paths']} paths per B, η = {etas[0]:.4f} = 1.9/λ_max, diverged paths: "
                         f"{run['n_diverged'].tolist()}; noise share "
                         + ", ".join(f"B={b}: {v:.5f} ± {e:.5f} (p {q:.5f}, with n {(n - b) / (b * n):.5f})"
                                     for b, v, e, q in zip(sizes, run["noise_share"], run["noise_share_se"], p)),
                  arrays={"mean": run["mean"], "se": run["se"], "predicted": traces("without"),
                          "noise_share": run["noise_share"], "noise_share_se": run["noise_share_se"], "p": p},
                  seed=ex.SEED + 4)


@claim("steplab.almost_sure_threshold_is_larger", paper=STEPLAB, provenance="derived", kind="statistical",
       source="found here beside mulayoff2024's mean-square threshold (the paper speaks of mean-square stability only): Jensen gives 2 gamma <= log rho(M_B); for commuting Hessians gamma = max_k E log|1 - eta h_Bk|",
       statement="The almost-sure threshold, where the top Lyapunov exponent of linearized SGD changes sign, is a separate "
                 "threshold at or above the mean-square one; for commuting Hessians it is the first root of "
                 "max_k E_B log|1 - eta (h_B)_k|.",
       latex=r"\eta_{as}(B) = \inf\{\eta: \gamma(\eta) \ge 0\} \ \ge\ \eta^*(B),\quad "
             r"\gamma = \max_k E_{\mathcal B}\log|1 - \eta\,(h_{\mathcal B})_k| \text{ (commuting)}")
def almost_sure_threshold(budget: Budget) -> Result:
    """Zero of the simulated top Lyapunov exponent: against the commuting closed form, and above eta*(B) on least squares;
    the exponent itself at a quarter of the crossing against the commuting closed form."""
    run = ex.as_thresholds(budget)
    hc = ex.commuting_problem()
    curv = np.array([np.diag(x) for x in hc])
    cs = run["commuting_sizes"]
    predicted = np.array([th.as_threshold_commuting(curv, int(b)) for b in cs])
    ms_c = np.array([th.ms_threshold(hc, int(b)) for b in cs])
    width = run["commuting_hi"] - run["commuting_lo"]
    commuting = Statistical(
        f"η̂_as(B), commuting Hessians, B = {cs.tolist()}", estimate=run["commuting_crossing"], se=run["commuting_se"],
        predicted=predicted, z=4.0, bias=float(width.max()),
        rivals={"the mean-square threshold η*(B)": ms_c},
        why="SE: spread over paths of the exponents interpolated at the crossing / sqrt(paths) / |slope| (delta "
            "method); bias: the final bracket width bounds the interpolation error; burn-in removes the start")
    probe = run["commuting_probe_eta"]
    exponent = Statistical(
        f"top Lyapunov exponent γ at a quarter of η̂_as(B), commuting Hessians, B = {cs.tolist()}",
        estimate=run["commuting_probe_gamma"], se=run["commuting_probe_se"], z=4.0,
        predicted=np.array([th.lyapunov_commuting(curv, int(b), float(e)) for b, e in zip(cs, probe)]),
        rivals={"the mean-square rate ½ log ρ(M_B)": np.array(
                    [0.5 * np.log(th.spectral_radius(hc, int(b), float(e))) for b, e in zip(cs, probe)]),
                "gradient descent's rate max_k log|1 - η h̄_k|": np.array(
                    [np.max(np.log(np.abs(1 - float(e) * curv.mean(axis=0)))) for e in probe])},
        why="SE: spread of the per-path exponents over independent paths / sqrt(paths); no start bias: there the top "
            "coordinate's rate leads the others' by >= 0.2 per step, so the burn-in (T/10) has forgotten the start "
            "(2000 paths agree with the closed form within 1.5 SE)")
    hl = ex.ls_problem()
    ls = run["ls_sizes"]
    ms_l = np.array([th.ms_threshold(hl, int(b)) for b in ls])
    ratio = run["ls_crossing"] / ms_l
    jensen = Bound("η̂_as(B)/η*(B), least squares (non-commuting), B = " + str(ls.tolist()), measured=ratio, bound=1.0,
                   side=">=", slack=float(np.max(4 * run["ls_se"] / ms_l)),
                   why="Jensen: 2γ <= log ρ(M_B), so the a.s. threshold cannot be below the mean-square one; slack 4 SE")
    return Result([commuting, exponent, jensen],
                  detail=f"commuting: η̂_as = {np.round(run['commuting_crossing'], 4).tolist()} vs closed form "
                         f"{np.round(predicted, 4).tolist()} (η* = {np.round(ms_c, 4).tolist()}); least squares: "
                         f"η̂_as/η* = {np.round(ratio, 3).tolist()}; {run['n_paths']} paths x {run['n_steps']} steps",
                  arrays={"commuting_sizes": cs, "commuting_as": run["commuting_crossing"], "commuting_as_pred": predicted,
                          "commuting_ms": ms_c, "ls_sizes": ls, "ls_as": run["ls_crossing"], "ls_as_se": run["ls_se"],
                          "ls_ms": ms_l}, seed=ex.SEED)


@claim("steplab.naive_monte_carlo_trap", paper=STEPLAB, provenance="derived", kind="qualitative",
       source="found here, simulating mulayoff2024's mean-square threshold (a finding about how to simulate it, not a "
              "statement of the paper)",
       statement="At eta = 1.1 eta*(1) the second moment diverges (rho(M_1) > 1), yet a naive Monte Carlo average of "
                 "||theta_T||^2 over long paths reports decay: rare paths carry the second moment; short horizons with "
                 "many paths recover rho(M_1)^t.",
       latex=r"\tfrac1T\log\tfrac1P\sum_p\|\theta^{(p)}_T\|^2 < 0 < \log\rho(\mathcal M_1)")
def naive_monte_carlo_trap(budget: Budget) -> Result:
    """Naive long-horizon MC growth (8 independent groups) against the exact enumerated growth and short-horizon MC;
    each group's naive rate between the mean and the largest of its paths' Lyapunov rates 2 gamma_p."""
    h = ex.ls_problem()
    run = ex.naive_trap(budget)
    eta, naive = float(run["eta"]), run["naive_rate"]
    log_rho = float(np.log(th.spectral_radius(h, 1, eta)))
    signs = Categorical(f"sign of the naive MC growth rate, {naive.size} groups of paths", measured=np.sign(naive).astype(int),
                        predicted=-1, rivals={"naive MC sees the mean-square growth (sign of log ρ(M_1) = +1)": 1},
                        why="each group's estimate is an independent replicate")
    exact = Exact("growth rate per step of the exactly enumerated second moment", predicted=log_rho,
                  measured=run["exact_rate"], atol=1e-6,
                  rivals={"the naive Monte Carlo rate (mean over groups)": float(naive.mean())},
                  why="least-squares slope of an exact recursion; subdominant modes leave < 1e-7 at T = 200")
    t = np.arange(1, run["short_mean"].size)
    s0 = np.outer(run["theta0"], run["theta0"])
    pred = th.moment_trace(h, 1, eta, s0, t[-1])[1:]
    gd = th.moment_trace(h, h.shape[0], eta, s0, t[-1])[1:]
    short = Statistical(f"mean ‖θ_t‖², t = 1..{t[-1]}, {run['n_short']} paths", estimate=run["short_mean"][1:],
                        se=run["short_se"][1:], predicted=pred, z=4.0,
                        rivals={"decay at the naive MC rate, e^(r_naive t)": np.exp(naive.mean() * t),
                                "no batch noise: ‖(I - ηH)^t θ0‖²": gd},
                        why="standard error from the spread over independent paths; unbiased at a fixed short horizon")
    # each group's naive rate is (1/T) log of the mean of e^{2 T gamma_p} over its paths (burn-in 0): a log-mean-exp,
    # so it lies between the group's mean and its largest 2 gamma_p, read off the same paths' exponents
    g2 = 2 * run["gamma"].reshape(naive.size, -1)
    margin = np.minimum(naive - g2.mean(axis=1), g2.max(axis=1) - naive)
    sandwich = Bound(f"naive rate between the mean and the largest 2γ_p of its group, {naive.size} groups",
                     measured=margin, bound=0.0, side=">=", slack=1e-12,
                     why="mean <= log-mean-exp <= max holds exactly; slack: round-off of logs of size ~|2γ|T ~ 1e2 "
                         "(~1e-14), over T")
    return Result([signs, exact, short, sandwich],
                  detail=f"η = {eta:.5f} = 1.1 η̂*(1): log ρ(M_1) = {log_rho:+.4f}/step; naive MC over {run['n_long']} steps: "
                         f"{np.round(naive, 3).tolist()} per step; mean path Lyapunov rate 2γ = {2 * run['gamma'].mean():+.4f}",
                  arrays={"naive_rate": naive, "log_rho": np.array(log_rho), "short_mean": run["short_mean"],
                          "short_se": run["short_se"], "short_pred": pred}, seed=ex.SEED + 3)


@claim("mulayoff2024.stable_minima_shrink_with_batch", paper=PAPER, provenance="derived", kind="qualitative",
       source="abstract ('reducing the batch size can only decrease stability'); the diagonal-net family derived here",
       statement="Along the balance curve of minima of a diagonal linear net, the minima that are mean-square stable at a "
                 "fixed eta are exactly those with eta < eta*(B), a set that shrinks as B falls.",
       latex=r"\{c: \eta < \eta^*_c(B)\} \subseteq \{c: \eta < \eta^*_c(B')\},\ B \le B'")
def stable_minima_shrink(budget: Budget) -> Result:
    """Sign of the exact second moment's growth at one eta over minima (u, v) = (c sqrt|b|, sqrt|b|/c), B = 1..4."""
    run = ex.dln_stable_set(budget)
    x, beta = ex.dln_data(0.8)
    eta, scales, sizes = float(run["eta"]), run["scales"], run["batch_sizes"]
    stable = run["rate"] < 0
    pred, gd, lin = [], [], []
    for c in scales:
        u, v = th.dln_minimum(beta, float(c))
        g = th.dln_gradients(u, v, x)
        hs = np.einsum("ni,nj->nij", g, g)  # closed-form per-sample Hessians g g^T at the minimum
        thr = np.array([th.ms_threshold(hs, int(b)) for b in sizes])
        pred.append(eta < thr)
        gd.append(np.full(sizes.size, eta * np.linalg.eigvalsh(hs.mean(axis=0))[-1] < 2))
        lin.append(eta < sizes * thr[0])
    pred, gd, lin = np.array(pred), np.array(gd), np.array(lin)
    count = Count(f"stable (growth rate < 0) for {scales.size} minima x B = {sizes.tolist()}", measured=stable.ravel(),
                  predicted=pred.ravel(),
                  rivals={"the batch size does not matter (gradient descent: ηλ_max < 2)": gd.ravel(),
                          "linear scaling η*(B) = B η*(1)": lin.ravel()},
                  why="every item must agree: the exact recursion's growth sign is not a noisy estimate")
    counts = stable.sum(axis=0)
    grows = Categorical("sign of (#stable minima at B+1) - (#stable at B)", measured=np.sign(np.diff(counts)).astype(int),
                        predicted=np.sign(np.diff(pred.sum(axis=0))).astype(int),
                        rivals={"flat: the stable set does not depend on B": 0},
                        why="counts of exact outcomes")
    return Result([count, grows], detail=f"η = {eta:.5f}; stable minima per B = {sizes.tolist()}: {counts.tolist()} of {scales.size}",
                  arrays={"scales": scales, "batch_sizes": sizes, "stable": stable, "predicted": pred, "eta": np.array(eta)})
