r"""Momentum with sampled gradients on least squares: Kidambi et al. 2018.

On the paper's Section 3 instance (two coordinates, a row :math:`x = \sigma_iz e_i` with probability 1/2 each,
:math:`y = \langle w^*, x\rangle`) the mean-square dynamics of every method is exactly linear
(:mod:`theory.noisy_quadratic_sampled`); its spectral radius gives the rate the paper's eq. (1) measures. The claim
measures, from the second-moment map read off each method's update rule (:mod:`sims.noisy_quadratic_sampled`), the
best rate of heavy ball over all step sizes and momenta against SGD's best, and the rate ASGD reaches, as the
condition number grows; and, as steplab's own finding, Nesterov's best rate, which on this instance (with
:math:`z = \pm\sqrt2`) does accelerate, unlike the paper's empirical remark.
"""
from __future__ import annotations

import numpy as np

import theory.noisy_quadratic_sampled as ts
from paper_checks import STEPLAB, Exact, Paper, Rate, Result, claim, fit_slope
from paper_checks.noisy_quadratic import experiments as E

PAPER = Paper(key="kidambi2018", title="On the insufficiency of existing momentum schemes for Stochastic Optimization",
              authors="R. Kidambi, P. Netrapalli, P. Jain, S. M. Kakade", year=2018, arxiv="1803.05591")

WHERE = "arXiv:1803.05591 (ICLR 2018 text), Section 3, before Proposition 3"


def _mode_radii(method: str, params: np.ndarray, modes: np.ndarray) -> np.ndarray:
    """Each mode's spectral radius of the theory's operator, per kappa: (kappas, modes)."""
    return np.array([[np.max(np.abs(np.linalg.eigvals(ts.sampled_mode_operator(method, p, h1, h2)))) for h1, h2 in m]
                     for p, m in zip(params, modes)])


@claim("kidambi2018.heavy_ball_no_faster_than_sgd", paper=PAPER, provenance="quoted", kind="rate",
       source="Section 3 (Corollaries 1 and 2, Proposition 3); the exact mean-square rates derived here",
       quote="Hence, ASGD improves upon rate of SGD by a factor of $\\sqrt{\\kappa}$. The following proposition, which is "
             "the main result of this section, establishes that HB (Algorithm 1) cannot provide a similar improvement.",
       where=WHERE,
       statement="On the paper's instance (sigma_1 = 1, z = +-sqrt 2, so c = 2 and kappa = 2c/sigma_2^2), the best "
                 "mean-square rate of heavy ball over every step and momentum falls like 1/kappa, as SGD's best does "
                 "(heavy ball gains a constant factor, about 2), while ASGD's rate falls like 1/sqrt(kappa).",
       latex=r"\max_{\delta,\alpha} r_{\rm HB}(\kappa) \propto \kappa^{-1},\quad \max_\delta r_{\rm SGD} \propto \kappa^{-1},"
             r"\quad r_{\rm ASGD}(\kappa) \propto \kappa^{-1/2}")
def heavy_ball_no_faster_than_sgd(budget) -> Result:
    r"""Best mean-square rates :math:`-\log\rho` on the instance at :math:`\kappa` = 1e3, 1e4, 1e5 (and 1e6 at the full
    budget), each from the exact second-moment map read off the method's update rule: heavy ball's and SGD's maximized
    over a grid zoom of their parameters (steps :math:`10^{-4}..3`, :math:`1-\alpha` down to :math:`10^{-7}`), ASGD's
    at the parameters the theory's search names.

    Rates: the log-log slopes in :math:`\kappa` of heavy ball's best (predicted :math:`-1`: no acceleration), SGD's best
    (:math:`-1`) and ASGD's (:math:`-1/2`), each with the deviation of the theory's own curve from its limit over the same
    :math:`\kappa` as the next-order term. Exact: SGD's best against the closed form
    (:func:`theory.noisy_quadratic_sampled.sgd_tuned_rate`), heavy ball's best against the theory's search on the
    operator :math:`P\otimes P - Eh(P\otimes Q + Q\otimes P) + Eh^2Q\otimes Q`, and both methods' rates at the theory's
    parameters, and each mode's radius at half the theory's step. Catches: the sampled gradient's noise dropped from the operator (:math:`Eh^2 = (Eh)^2`: the
    deterministic heavy ball, which accelerates). Rivals: heavy ball accelerates as on the exact quadratic (slope
    :math:`-1/2`, or its tuned deterministic rate); momentum gives nothing (SGD's best); ASGD does not accelerate
    (slope :math:`-1`); Corollary 1's exponent :math:`1/\kappa` for SGD's best.
    """
    ex = E.sampled_rates(budget)
    kappa, c = ex["kappa"], float(ex["c"])
    modes = np.stack([ts.kidambi_modes(k, c) for k in kappa])
    sgd = np.array([ts.sgd_tuned_rate(k, c)["rate"] for k in kappa])
    hb = ts.tuned_sampled_rates("heavy_ball", modes)["rate"]
    asgd_theory = ts.tuned_sampled_rates("asgd", modes)["rate"]
    hb_at = np.array([ts.sampled_ms_rate("heavy_ball", p, m) for p, m in zip(ex["heavy_ball_params"], modes)])
    asgd_at = np.array([ts.sampled_ms_rate("asgd", p, m) for p, m in zip(ex["asgd_params"], modes)])
    half_radii = np.stack([_mode_radii(m_, ex[f"{m_}_params"] * np.r_[0.5, np.ones(ex[f"{m_}_params"].shape[1] - 1)],
                                       modes) for m_ in ("heavy_ball", "asgd")])
    kappa_h = kappa / (2 * c)  # the condition number of H = diag(sigma_1^2, sigma_2^2)
    det_hb = -np.log((np.sqrt(kappa_h) - 1) / (np.sqrt(kappa_h) + 1))  # the tuned deterministic heavy ball on H

    def rate_check(name, measured, theory, predicted, rival, rival_text):
        own = fit_slope(kappa, theory)[0]
        return Rate(f"log-log slope in κ of {name}", x=kappa, y=measured, predicted=predicted,
                    next_order=abs(own - predicted), z=4.0, rivals={rival_text: rival},
                    why=f"fit over κ = {kappa.tolist()}; next order: the theory's own curve has slope {own:.4f} over "
                        f"this range (its limit {predicted:g} is reached only as κ → ∞)")

    search = ("the same grid zoom on the simulated map and on the theory's operator; they part only where round-off "
              "breaks a near-tie of grid values (atol 1e-8 on a rate, the eigenvalue round-off of a nearly defective "
              "4 x 4 map, ~sqrt(eps)·|M|/1e2; rtol 1e-6 for the search paths)")
    checks = [
        rate_check("heavy ball's best rate", ex["heavy_ball_best"], hb, -1.0, -0.5,
                   "heavy ball accelerates as with exact gradients: κ^(−1/2)"),
        rate_check("SGD's best rate", ex["sgd_best"], sgd, -1.0, -0.5, "κ^(−1/2)"),
        rate_check("ASGD's rate", ex["asgd_at_params"], asgd_theory, -0.5, -1.0, "ASGD does not accelerate: κ^(−1)"),
        Exact("heavy ball's best rate (grid zoom over δ, α)", predicted=hb, measured=ex["heavy_ball_best"], rtol=1e-6,
              atol=1e-8, rivals={"momentum gives nothing: SGD's best rate": sgd,
                                 "the tuned heavy ball with exact gradients on H: −log((√κ_H−1)/(√κ_H+1))": det_hb},
              why=search),
        Exact("SGD's best rate (grid zoom over δ)", predicted=sgd, measured=ex["sgd_best"], rtol=1e-6,
              rivals={"Corollary 1's exponent 1/κ": 1.0 / kappa,
                      "the rate at Corollary 1's step 1/(cσ₁²)": [ts.sampled_ms_rate("sgd", [1.0 / c], m) for m in modes]},
              why="the zoom's last cell (~1e-7 in log δ) times the rate's slope at the kink where the two modes' rates "
                  "cross: below 1e-7 relative; 1e-6"),
        Exact("heavy ball's and ASGD's rates at the theory's parameters", predicted=np.r_[hb_at, asgd_at],
              measured=np.r_[ex["heavy_ball_at_params"], ex["asgd_at_params"]], rtol=1e-9, atol=1e-8,
              rivals={"half: the rate of √(E f), a norm's rate, not the loss's": np.r_[hb_at, asgd_at] / 2},
              why="one parameter point, two constructions of one map: eigenvalue round-off (atol 1e-8)"),
        Exact("each mode's spectral radius at half the theory's step, heavy ball and ASGD", predicted=half_radii,
              measured=np.stack([ex[f"{m_}_mode_radius_half_step"] for m_ in ("heavy_ball", "asgd")]), rtol=1e-9,
              atol=1e-8, rivals={"every mode at the slowest mode's radius": np.repeat(
                  half_radii.max(axis=-1, keepdims=True), 2, axis=-1)},
              why="one parameter point, two constructions of each mode's 4 x 4 map: eigenvalue round-off (atol 1e-8)"),
    ]
    detail = (f"c = {c:g}; best rates × κ: SGD " + ", ".join(f"{r * k:.3f}" for r, k in zip(ex["sgd_best"], kappa))
              + "; heavy ball " + ", ".join(f"{r * k:.3f}" for r, k in zip(ex["heavy_ball_best"], kappa))
              + f" (HB/SGD {', '.join(f'{a / b:.3f}' for a, b in zip(ex['heavy_ball_best'], ex['sgd_best']))}); ASGD × √κ "
              + ", ".join(f"{r * np.sqrt(k):.3f}" for r, k in zip(ex["asgd_at_params"], kappa)))
    return Result(checks, detail=detail,
                  arrays={"kappa": kappa, "sgd": ex["sgd_best"], "heavy_ball": ex["heavy_ball_best"],
                          "asgd": ex["asgd_at_params"], "sgd_theory": sgd, "heavy_ball_theory": hb,
                          "asgd_theory": asgd_theory})


@claim("steplab.nesterov_accelerates_with_sampled_rows", paper=STEPLAB, provenance="derived", kind="rate",
       source="found here (exact mean-square rates on kidambi2018's Section 3 instance, where the paper observes "
              "empirically, without a proof, that NAG gains nothing over SGD)",
       statement="On Kidambi et al.'s instance with z = +-sqrt 2 (c = 2), Nesterov's method (their Algorithm 2), tuned over "
                 "step and momentum, does accelerate: its best mean-square rate falls like 1/sqrt(kappa) (about "
                 "2.2/sqrt(kappa), as fast as ASGD), with momenta 0.93 to 0.998; heavy ball's falls like 1/kappa.",
       latex=r"\max_{\delta,\alpha} r_{\rm NAG}(\kappa) \propto \kappa^{-1/2}\quad(c = 2)")
def nesterov_accelerates(budget) -> Result:
    r"""Nesterov's best mean-square rate over step and momentum (grid zoom over the simulated second-moment map, the same
    search as heavy ball's in ``kidambi2018.heavy_ball_no_faster_than_sgd``) at :math:`\kappa` = 1e3 .. 1e5 (1e6 full):
    its log-log slope in :math:`\kappa` (predicted :math:`-1/2`, next order: the theory's own curve over the range) and
    the best rates against the theory's search on the operator.

    Catches: the sampled gradient's noise dropped from the operator is *not* what this claim guards (Nesterov
    accelerates either way); it guards a Nesterov operator with heavy ball's gradient placement (the gradient taken at
    :math:`w` and added once, i.e. heavy ball), which does not accelerate. Rivals: the paper's empirical reading, no
    gain over SGD (slope :math:`-1`); heavy ball's best rates.
    """
    ex = E.sampled_rates(budget)
    kappa, c = ex["kappa"], float(ex["c"])
    modes = np.stack([ts.kidambi_modes(k, c) for k in kappa])
    nag = ts.tuned_sampled_rates("nesterov", modes)["rate"]
    own = fit_slope(kappa, nag)[0]
    checks = [
        Rate("log-log slope in κ of Nesterov's best rate", x=kappa, y=ex["nesterov_best"], predicted=-0.5,
             next_order=abs(own + 0.5), z=4.0,
             rivals={"no gain over SGD ('nearly same rate as HB and SGD', read as a slope): κ^(−1)": -1.0},
             why=f"fit over κ = {kappa.tolist()}; next order: the theory's own curve has slope {own:.4f} over this range"),
        Exact("Nesterov's best rate (grid zoom over δ, α)", predicted=nag, measured=ex["nesterov_best"], rtol=1e-6,
              atol=1e-8, rivals={"heavy ball's best rate": ex["heavy_ball_best"], "SGD's best rate": ex["sgd_best"]},
              why="the same grid zoom on the simulated map and on the theory's operator (atol 1e-8: eigenvalue "
                  "round-off; rtol 1e-6: search paths parted by near-ties)"),
    ]
    alpha = ex["nesterov_best_params"][:, 1]
    detail = ("√κ × Nesterov's best rate " + ", ".join(f"{r * np.sqrt(k):.3f}" for r, k in zip(ex["nesterov_best"], kappa))
              + f" (momentum {', '.join(f'{a:.4f}' for a in alpha)}); Nesterov/heavy ball "
              + ", ".join(f"{a / b:.1f}" for a, b in zip(ex["nesterov_best"], ex["heavy_ball_best"])))
    return Result(checks, detail=detail, arrays={"kappa": kappa, "nesterov": ex["nesterov_best"], "theory": nag})
