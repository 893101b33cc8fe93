r"""Claims of Sao (2026), "Ghosts of Softmax: complex singularities that limit safe step sizes in
cross-entropy" (arXiv 2603.13552).

Each check compares a closed form of :mod:`theory.softmax_radius` (sympy, or NumPy root finding
certified by the argument principle) with an independent measurement: Taylor coefficients of the
line loss from ``jax.experimental.jet``, JVPs through trained models on the 8x8 digits, or a
simulation. Every check names the most plausible wrong statement (a rival) and evaluates it on the
same measurement. The simulations are the cached experiments below (``softmax_radius.*``); the
figures read them too.

Vocabulary: ``t`` is a distance along a unit direction, ``eta`` a learning rate, and ``r`` the
paper's normalized step :math:`r=t/\rho_a`.
"""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import sympy as sp

import sims  # noqa: F401  (float64)
from paper_checks import (Bound, Budget, Categorical, Count, Exact, Paper, Rate, Result, Statistical, claim, experiment,
                          fit_slope)
from sims import softmax_radius as S
from theory import softmax_radius as T

PAPER = Paper(
    key="sao2026",
    title="Ghosts of Softmax: complex singularities that limit safe step sizes in cross-entropy",
    authors="Piyush Sao",
    year=2026,
    arxiv="2603.13552",
)

ARXIV = "arXiv:2603.13552"
# the paper's text: the author's repository github.com/piyush314/ghosts-of-softmax, assets/paper.pdf (builds of
# 2026-03-13, = arXiv v1, and 2026-03-26); a locator names the later build where a quote is in it only
ARCHS = S.MODEL_NAMES  # linear, mlp, mlp_ln, cnn, cnn_bn, attention: the paper's six (Linear, MLP, MLP+LayerNorm, CNN,
# CNN+BatchNorm, TinyTransformer)
JET_ORDER = 16  # jet's tracing cost grows like the order squared; 16 keeps the Prony error scale below 4e-3 for |δ| ≤ 4
N_BINARY = {"quick": 16, "full": 64}  # one row count for every binary jet call: they share one compiled program
ROOT_RTOL = 1e-8  # certified Newton zeros: |F|/sum|terms| < 1e-10 at a simple zero
CH_RTOL = 0.02  # root test at orders N/2..N = 80..160: bias O(log(1/max|cos n theta|)/N) <~ 2 %


def _binary_instances(rng: np.random.Generator, n: int, delta_range: tuple[float, float]) -> dict:
    """Random binary instances: logit gap delta with |delta| in ``delta_range`` (random sign) and slope
    difference delta_a with |delta_a| in [0.3, 3] (random sign), on random base logits and slopes."""
    lo, hi = delta_range
    delta = rng.uniform(lo, hi, n) * rng.choice([-1.0, 1.0], n)
    delta_a = rng.uniform(0.3, 3.0, n) * rng.choice([-1.0, 1.0], n)
    z0, a0 = rng.normal(size=n), rng.normal(size=n)
    return {"delta": delta, "delta_a": delta_a, "z": np.stack([z0 + delta, z0], axis=1),
            "a": np.stack([a0 + delta_a, a0], axis=1)}


def _jet_prony(z: np.ndarray, a: np.ndarray, order: int) -> np.ndarray:
    """Nearest ghost t0 (Im > 0) of every row's line loss from a Prony fit of its JAX jet series."""
    coeffs = np.asarray(S.logit_line_taylor(z, a, np.zeros(z.shape[0], dtype=np.int32), order))
    return np.array([T.prony_pair(c) for c in coeffs])


# ============================================================================= exact theory
@claim(
    "sao2026.binary_radius_exact", paper=PAPER, provenance="quoted", kind="exact", source="§4.2, Theorem 4.3, eq. (10)",
    statement="Binary case: F(t) has its zeros at distance sqrt(δ² + π²)/|Δa| from 0, so the exact Taylor radius of "
              "the line loss is ρ* = sqrt(δ² + π²)/|Δa|. (steplab writes the zeros t_k = (−δ + iπ(2k+1))/Δa with "
              "δ = z1 − z2, Δa = a1 − a2; the paper's F = w1 + w2 e^{Δa t}, δ = log(w1/w2) puts them at "
              "Δa t = δ + iπ(2k+1): the same points, the same modulus.)",
    quote="Theorem 4.3 (Binary Convergence Radius). For F ( t) = w1 + w2 eΔa t with w1 , w2 > 0, spread "
          "Δa = | a1 − a2 | , and logit gap δ = log ( w1 /w2 ) : ρ∗ = √(δ2 + π2) / Δa (10) The minimum ρ∗ = π/Δa occurs "
          "when δ = 0 (balanced).",
    where=f"{ARXIV}, §4.2, Theorem 4.3, eq. (10)",
    latex=r"\rho^*=\sqrt{\delta^2+\pi^2}/|\Delta a|",
)
def binary_radius_exact(budget: Budget) -> Result:
    r"""Closed form :math:`\sqrt{\delta^2+\pi^2}/|\Delta a|` (the sympy expression evaluated) against
    (1) the radius of the line loss's Taylor series, from ``jet`` coefficients (order 24) through a
    Prony fit of the nearest conjugate pair, and (2) the certified nearest zero of :math:`F`
    (Newton plus argument principle). Rivals: the margin-free bound :math:`\pi/|\Delta a|`, the
    formula without its square root, and :math:`(|\delta|+\pi)/|\Delta a|`."""
    seed = 11
    inst = _binary_instances(np.random.default_rng(seed), budget.pick(**N_BINARY), (0.0, 4.0))
    d, da = inst["delta"], inst["delta_a"]
    expr = T.binary_radius_expr()
    closed = np.array([float(expr.subs({T.delta: di, T.Dpos: abs(dai)})) for di, dai in zip(d, da)])
    taylor = np.abs(_jet_prony(inst["z"], inst["a"], JET_ORDER))
    roots = np.asarray(T.radius(inst["z"], inst["a"]))
    # Prony's error is of order (rho_1/rho_2)^(N/2) (the next ghost pair); allow 4x that asymptotic scale
    rtol = 4.0 * float(np.max(T.prony_error_scale(d, JET_ORDER)))
    rivals = {"ρ* = π/|Δa| (the margin-free lower bound)": np.pi / np.abs(da),
              "ρ* = (δ² + π²)/|Δa| (no square root)": (d**2 + np.pi**2) / np.abs(da),
              "ρ* = (|δ| + π)/|Δa|": (np.abs(d) + np.pi) / np.abs(da)}
    return Result(
        checks=[
            Exact("ρ* from the jet Taylor series (Prony fit), per instance", predicted=closed, measured=taylor,
                  rtol=rtol, rivals=rivals,
                  why=f"Prony error scale (ρ1/ρ2)^(N/2) at N = {JET_ORDER}, worst instance, times 4"),
            Exact("ρ* = |nearest zero of F| (certified root finding), per instance", predicted=closed,
                  measured=roots, rtol=ROOT_RTOL, rivals=rivals,
                  why="Newton to |F|/Σ|terms| < 1e-10 at a simple zero: relative error ~1e-10"),
        ],
        detail=(f"{d.size} random (δ, Δa) with |δ| ≤ 4: jet series radius within "
                f"{np.max(np.abs(taylor / closed - 1)):.1e}, certified zeros within {np.max(np.abs(roots / closed - 1)):.1e} "
                "of sqrt(δ²+π²)/|Δa|"),
        arrays={"delta": d, "delta_a": da, "rho_closed": closed, "rho_roots": roots, "rho_taylor": taylor},
        seed=seed,
    )


@claim(
    "sao2026.ghost_above_flip_point", paper=PAPER, provenance="quoted", kind="exact",
    source="§4.2 (after Theorem 4.3) and §4.3.2, eq. (13)",
    statement="The nearest binary ghost has imaginary part π/|Δa| (the paper's confidence-independent part) and "
              "real part δ/Δa in Theorem 4.3's convention; steplab's reading (not the paper's words): that real "
              "part is the point where the two linear logits cross, so the ghost sits directly above the decision "
              "flip. (Eq. (13) written with δ = z_y − z_c and Δ = a_y − a_c has the opposite sign of the real part, "
              "the 'mirrored point' rival below: a sign convention that leaves the radius unchanged.)",
    quote="The formula reveals two contributions to the radius: • The imaginary part π/Δa is confidence-independent: "
          "it is set by eiπ = −1, the condition for exponential sums to cancel. Even a balanced prediction (δ = 0) has "
          "finite radius. • The real part δ/Δa grows with confidence: large margins shift the zero away from the "
          "imaginary axis, making confident predictions more robust to large steps.",
    where=f"{ARXIV}, §4.2, after Theorem 4.3",
    latex=r"t_0=t_{\rm flip}+i\pi/|\Delta a|",
)
def ghost_above_flip_point(budget: Budget) -> Result:
    r"""The nearest ghost located *without* the closed form: a Prony fit of the ``jet`` Taylor series
    of the binary line loss gives the nearest conjugate pair :math:`t_0,\bar t_0` (real part and
    height). Predictions: the flip point where the two linear logits cross (solved by sympy,
    evaluated per instance) and the height :math:`\pi/|\Delta a|`. Rivals: the ghost stands above
    the current point (:math:`\mathrm{Re}\,t_0=0`) or above the mirrored flip point; its height is
    the radius :math:`\sqrt{\delta^2+\pi^2}/|\Delta a|`, half or twice :math:`\pi/|\Delta a|`."""
    seed = 12
    inst = _binary_instances(np.random.default_rng(seed), budget.pick(**N_BINARY), (1.0, 4.0))
    d, da = inst["delta"], inst["delta_a"]
    flip_expr = T.binary_flip_point()["flip"]
    z, a = inst["z"], inst["a"]
    flip = np.array([float(flip_expr.subs({T.z1: zi[0], T.z2: zi[1], T.a1: ai[0], T.a2: ai[1]})) for zi, ai in zip(z, a)])
    t0 = _jet_prony(z, a, JET_ORDER)
    scale = T.prony_error_scale(d, JET_ORDER)
    # absolute error of the located zero ~ (Prony error scale) x |t0|; allow 4x the worst instance
    atol_re = 4.0 * float(np.max(scale * np.abs(t0)))
    height = np.pi / np.abs(da)
    return Result(
        checks=[
            Exact("Re t0 of the ghost located from the Taylor series", predicted=flip, measured=t0.real, atol=atol_re,
                  rivals={"the ghost sits above the current point (Re t0 = 0)": np.zeros_like(flip),
                          "it sits above the mirrored point (Re t0 = −t_flip)": -flip},
                  why=f"Prony error scale (ρ1/ρ2)^(N/2)·|t0| at N = {JET_ORDER}, worst instance, times 4"),
            Exact("Im t0 of the ghost located from the Taylor series", predicted=height, measured=t0.imag,
                  rtol=4.0 * float(np.max(scale * np.abs(t0) / height)),
                  rivals={"height = ρ* = sqrt(δ²+π²)/|Δa| (the ghost straight above t = 0)": np.hypot(d, np.pi) / np.abs(da),
                          "height π/(2|Δa|)": height / 2, "height 2π/|Δa|": 2 * height},
                  why="as for Re t0, relative to the height"),
        ],
        detail=(f"{d.size} random binary instances with 1 ≤ |δ| ≤ 4: the Prony-located ghost is at the flip point to "
                f"{np.max(np.abs(t0.real - flip)):.1e} and at height π/|Δa| to {np.max(np.abs(t0.imag / height - 1)):.1e} (relative)"),
        arrays={"flip": flip, "re_t0": t0.real, "im_t0": t0.imag, "height": height},
        seed=seed,
    )


def _random_multiclass(rng: np.random.Generator, n_inst: int) -> list[tuple[np.ndarray, np.ndarray]]:
    out = []
    for _ in range(n_inst):
        n = int(rng.integers(3, 11))
        out.append((rng.normal(size=n) * rng.uniform(0.2, 4.0), rng.normal(size=n) * rng.uniform(0.2, 3.0)))
    return out


@claim(
    "sao2026.multiclass_lower_bound", paper=PAPER, provenance="quoted", kind="bound", source="§4.3.1, Theorem 4.6, eq. (12)",
    quote="Theorem 4.6 (General Lower Bound). For F ( t) = Σ wk eak t with wk > 0: ρ∗ ≥ π/Δa (12) where "
          "Δa = maxk ak − mink ak .",
    where=f"{ARXIV}, §4.3.1, Theorem 4.6, eq. (12)",
    statement="Multiclass: the exact linearized radius is at least ρ_a = π/Δa with Δa = max_k a_k − min_k a_k.",
    latex=r"\rho^*\ge\rho_a=\pi/(\max_k a_k-\min_k a_k)",
)
def multiclass_lower_bound(budget: Budget) -> Result:
    r"""Random instances with 3-10 classes: the certified nearest zero :math:`\rho^*` over the closed-form
    :math:`\rho_a` must be >= 1. Rivals (tighter bounds a reader might hold): :math:`2\rho_a` (a strip
    of half-width :math:`2\pi/\Delta a`) and :math:`1.1\rho_a` (some margin always left). A second, independent measurement of :math:`\rho^*`: the root test on 160 Taylor
    coefficients of :math:`\log F` must match the certified zero; rival: :math:`\rho^*=\rho_a`."""
    seed = 13
    inst = _random_multiclass(np.random.default_rng(seed), budget.pick(quick=40, full=300))
    rho = np.array([T.radius(z, a) for z, a in inst])
    rho_a = np.array([T.lower_bound(a) for _, a in inst])
    ratio = rho / rho_a
    ch = np.array([T.cauchy_hadamard_radius(T.log_partition_taylor(z, a, 160)) for z, a in inst])
    return Result(
        checks=[
            Bound("min over instances of ρ*/ρ_a", measured=ratio, bound=1.0, side=">=", slack=1e-10,
                  rivals={"ρ* ≥ 2ρ_a (strip half-width 2π/Δa)": 2.0,
                          "ρ* ≥ 1.1ρ_a (the bound always leaves 10 % of margin)": 1.1},
                  why="the bound is exact; slack = relative accuracy of the certified zeros"),
            Exact("ρ* from the root test on 160 Taylor coefficients of log F", predicted=rho, measured=ch, rtol=CH_RTOL,
                  rivals={"ρ* = ρ_a (the bound is the radius)": rho_a},
                  why="root test at orders 80..160: bias O(log(1/max|cos nθ|)/N), about 1-2 %"),
        ],
        detail=(f"{len(inst)} random instances with 3–10 classes: ρ*/ρ_a ∈ [{ratio.min():.4f}, {ratio.max():.3f}]; "
                f"root test within {np.max(np.abs(ch / rho - 1)):.1e} of the zeros"),
        arrays={"ratio": ratio, "rho": rho, "rho_a": rho_a, "rho_taylor": ch}, seed=seed,
    )


@claim(
    "sao2026.lower_bound_infimum_attained", paper=PAPER, provenance="derived", kind="existence",
    source="derived here (the paper states tightness for binary δ = 0 only, §4.3.1)",
    quote="How tight is this bound? For confident predictions ( |δ| large) or multi-class problems, the bound is "
          "conservative, but for binary classification at δ = 0 it is tight: ρ∗ = π/Δa .",
    where=f"{ARXIV}, §4.3.1",
    statement="π/Δa is the infimum of ρ* over the logits: equal weight on the arg-max and arg-min classes "
              "and weight ε → 0 elsewhere gives ρ* → π/Δa, so the weight-free bound is sharp.",
    latex=r"\inf_z\rho^*(z,a)=\pi/\Delta a",
)
def lower_bound_infimum_attained(budget: Budget) -> Result:
    r"""A witness family: six classes, weights 1 on the arg-max and arg-min slope classes and ε on the
    others. :math:`\rho^*/\rho_a` (certified zeros) must reach 1 at the smallest ε, and approach it
    linearly (a simple zero moves by :math:`O(\epsilon)` under an :math:`O(\epsilon)` perturbation).
    Rivals: the infimum is 1.1 (a margin always left); the approach is
    :math:`\sqrt\epsilon` (as for a double zero)."""
    seed = 14
    rng = np.random.default_rng(seed)
    n = 6
    a = rng.normal(size=n)
    kmax, kmin = int(np.argmax(a)), int(np.argmin(a))
    eps = np.logspace(-1, -8, budget.pick(quick=8, full=15))
    ratios = []
    for e in eps:
        z = np.full(n, math.log(e))
        z[kmax] = z[kmin] = 0.0
        ratios.append(T.radius(z, a) / T.lower_bound(a))
    ratios = np.array(ratios)
    tail = eps < 1e-4
    slope, se = fit_slope(eps[tail], ratios[tail] - 1)
    return Result(
        checks=[
            Exact("ρ*/ρ_a at the smallest ε", predicted=1.0, measured=float(ratios[-1]), atol=100 * float(eps[-1]),
                  rivals={"inf ρ*/ρ_a = 1.1 (multiclass weights always leave a margin)": 1.1},
                  why="ratio − 1 = O(nε) with n = 6 classes; 100ε covers the constant (measured slope)"),
            Exact("log-log slope of ρ*/ρ_a − 1 in ε (ε < 1e-4)", predicted=1.0, measured=slope, atol=0.05,
                  rivals={"ρ*/ρ_a − 1 ∝ sqrt(ε) (a double zero splitting)": 0.5},
                  why=f"next-order term O(ε) ≤ 1e-4 relative; root accuracy 1e-10 vs ratio − 1 ≥ 1e-8 (fit SE {se:.1e})"),
        ],
        detail=(f"witness with weight ε on the {n - 2} middle classes: ρ*/ρ_a − 1 = {ratios[-1] - 1:.1e} at ε = "
                f"{eps[-1]:.0e}, decaying like ε^{slope:.3f}"),
        arrays={"eps": eps, "ratio": ratios}, seed=seed,
    )


@claim(
    "sao2026.zero_free_strip", paper=PAPER, provenance="quoted", kind="bound",
    source="§4.3.1, Lemma 4.5 and the proof of Theorem 4.6; Figure 5",
    statement="Half-plane lemma: for |Im t| < π/Δa all terms of F have phases in an open half-plane, so F has no "
              "zero in the strip |Im t| < π/Δa (the paper's). Quantitatively |F| ≥ cos(Δa|Im t|/2) Σ_k |e^{z_k + a_k t}| "
              "(steplab's strengthening of the lemma, not in the paper; the second check).",
    quote="Let t = u + iy, where u = Re ( t) and y = Im ( t) . Each term wk eak t has phase ak y, because wk eak u > 0 "
          "contributes only magnitude. If Δa | y | < π, all phases lie in an arc of length < π. By Lemma 4.5, "
          "F ( t) ≠ 0. Therefore any zero satisfies | Im ( t)| ≥ π/Δa , giving | t | ≥ π/Δa .",
    where=f"{ARXIV}, §4.3.1, proof of Theorem 4.6 (Lemma 4.5)",
    latex=r"|F(u+iy)|\ge\cos(\Delta a|y|/2)\sum_k|e^{z_k+a_k(u+iy)}|>0\quad(|y|<\pi/\Delta a)",
)
def zero_free_strip(budget: Budget) -> Result:
    r"""(1) The height :math:`|\mathrm{Im}\,t_0|\Delta a/\pi` of the located nearest zero of every random
    instance must be >= 1; rival: the zero-free strip is twice as wide (:math:`|\mathrm{Im}\,t|<2\pi/\Delta a`,
    reading the phase condition as :math:`|a_k-\bar a||y|<\pi`). (2) On a grid inside the strip
    :math:`|F|/\sum|\text{terms}|-\cos(\Delta a|y|/2)\ge0` (the lemma's inequality)."""
    seed = 15
    inst = _random_multiclass(np.random.default_rng(seed), budget.pick(quick=12, full=60))
    worst, heights = np.inf, []
    for z, a in inst:
        da = a.max() - a.min()
        u = np.linspace(-30, 30, 201) / da
        yy = np.linspace(-0.999, 0.999, 41) * math.pi / da
        margin = T.strip_margin(z, a, u[None, :] + 1j * yy[:, None])
        worst = min(worst, float((margin - np.cos(da * np.abs(yy) / 2)[:, None]).min()))
        heights.append(abs(T.radius_details(z, a)["zero"].imag) * da / math.pi)
    heights = np.array(heights)
    return Result(
        checks=[
            Bound("|Im t0|·Δa/π of the nearest zero, min over instances", measured=heights, bound=1.0, side=">=",
                  slack=1e-10, rivals={"the zero-free strip is |Im t| < 2π/Δa": 2.0},
                  why="exact lemma; slack = relative accuracy of the certified zeros"),
            Bound("min over a 41×201 grid in the strip of |F|/Σ|terms| − cos(Δa|y|/2) (steplab's strengthening)",
                  measured=worst, bound=0.0,
                  side=">=", slack=1e-12, why="exact inequality; float64 evaluation of |F|/Σ|terms| to ~1e-15"),
        ],
        detail=(f"{len(inst)} instances: nearest-zero heights |Im t0|Δa/π ∈ [{heights.min():.4f}, {heights.max():.3f}]; "
                f"min(|F|/Σ|terms| − cos) on the strip grid = {worst:.2e}"),
        arrays={"im_over_halfwidth": heights}, seed=seed,
    )


@claim(
    "sao2026.logistic_regression_exact_radius", paper=PAPER, provenance="quoted", kind="exact",
    source="Appendix 1.1.1 (linearization exact when only the output layer moves); §4.3.2 eq. (13); §4.4 eq. (14)",
    quote="Appendix 1.1.1 When linearization is exact — If the output layer is linear (z = Wh + b) and only "
          "outputlayer parameters move, then zi (τ) is exactly linear in τ. In this case, ρ∗ is the true radius.",
    where=f"{ARXIV}, Appendix 1.1.1",
    statement="When only the output layer moves (logistic / softmax regression) the linearization is exact: the "
              "per-sample Taylor radius of the line loss is sqrt(m_i² + π²)/|x_i·v| (binary) and the nearest "
              "zero of F (multiclass), and the data-set bound is ρ_a = π/max_i Δa_i.",
    latex=r"\rho_i=\sqrt{m_i^2+\pi^2}/|x_i\cdot v|",
)
def logistic_regression_exact_radius(budget: Budget) -> Result:
    r"""Binary logistic regression on digits 3 vs 8 along a random unit direction: the radius of every
    sample's line-loss Taylor series (``jet`` through the model, Prony fit) against
    :math:`\sqrt{m_i^2+\pi^2}/|x_i\cdot v|` (rivals: :math:`\pi/|x_i\cdot v|` and the flip distance
    :math:`|m_i|/|x_i\cdot v|`). Softmax regression (10 classes): the ``jet`` series of every sample
    equals the :math:`\log F` series built from the slopes (exact linearization), the certified zero
    matches the root test on that series (rival :math:`\rho_a`), and the data-set :math:`\rho_a` from
    the JAX JVP equals :math:`\pi/\max_i\Delta a_i` with the slopes computed by hand
    (:math:`a_{ik}=x_i\cdot v_{W,k}+v_{b,k}`)."""
    seed = 16
    rng = np.random.default_rng(seed)  # instances only; the measurements are deterministic
    data = S.digits()
    n = budget.pick(**N_BINARY)
    mask = np.isin(data["y_train"], (3, 8))
    x = data["x_train"][mask][:n]
    y = (data["y_train"][mask][:n] == 8).astype(np.int32)
    w, b = 0.5 * rng.normal(size=64), 0.0
    vraw = rng.normal(size=65)
    vw, vb = vraw[:64] / np.linalg.norm(vraw), vraw[64] / np.linalg.norm(vraw)
    margin, slope = x @ w + b, x @ vw + vb
    # the binary model as two logits (0, x·w + b): its line loss has logits (0, m + t x·v)
    t0 = _jet_prony(np.stack([np.zeros(n), margin], 1), np.stack([np.zeros(n), slope], 1), JET_ORDER)
    taylor = np.abs(t0)
    closed = np.asarray(T.binary_radius(margin, slope))
    rtol_bin = 4.0 * float(np.max(T.prony_error_scale(margin, JET_ORDER)))
    # softmax regression along a random unit direction
    lin = S.make_model("linear")
    p = {"W": 0.5 * rng.normal(size=(64, 10)), "b": rng.normal(size=10)}
    vd = {"W": rng.normal(size=(64, 10)), "b": rng.normal(size=10)}
    norm = math.sqrt(sum(float(np.sum(v**2)) for v in vd.values()))
    vd = {k: v / norm for k, v in vd.items()}
    xm, ym = data["x_train"][:n], data["y_train"][:n]
    z, a = (np.asarray(t) for t in S.directional_derivatives(lin.apply, p, vd, xm))
    order_m = 8  # an identity check: any order works, and jet's cost grows like the order squared
    jet_c = np.asarray(S.line_taylor(lin.apply, p, vd, xm, ym, order_m))
    th_c = np.array([T.log_partition_taylor(zi, ai, order_m) for zi, ai in zip(z, a)])
    th_c[:, 0] -= z[np.arange(n), ym]
    th_c[:, 1] -= a[np.arange(n), ym]
    exact = np.asarray(T.radius(z, a))
    ch = np.array([T.cauchy_hadamard_radius(T.log_partition_taylor(zi, ai, 160)) for zi, ai in zip(z, a)])
    a_hand = xm @ vd["W"] + vd["b"]
    rho_set = float(S.rho_a(lin.apply, p, vd, xm))
    return Result(
        checks=[
            Exact("binary: per-sample radius of the jet series (Prony)", predicted=closed, measured=taylor, rtol=rtol_bin,
                  rivals={"π/|x_i·v| (the margin-free bound)": np.pi / np.abs(slope),
                          "|m_i|/|x_i·v| (the distance to the decision flip)": np.abs(margin / slope)},
                  why=f"Prony error scale (ρ1/ρ2)^(N/2) at N = {JET_ORDER}, worst sample, times 4"),
            Exact("softmax regression: jet series of the line loss vs the log-F series (orders 0-8)",
                  predicted=th_c, measured=jet_c, rtol=1e-9, atol=1e-12,
                  why="two float64 recursions to order 8 on O(1) numbers: agreement ~1e-12"),
            Exact("softmax regression: ρ* from the root test on 160 coefficients", predicted=exact, measured=ch,
                  rtol=CH_RTOL, rivals={"ρ* = ρ_a,i (the bound is the radius)": np.asarray(T.lower_bound(a))},
                  why="root test at orders 80..160: bias about 1-2 %"),
            Exact("softmax regression: data-set ρ_a (JAX JVP) vs π/max Δa from hand-computed slopes",
                  predicted=float(np.min(T.lower_bound(a_hand))), measured=rho_set, rtol=1e-12,
                  why="float64 round-off of a matrix product"),
        ],
        detail=(f"binary logistic (digits 3 vs 8, {n} samples): jet radius within {np.max(np.abs(taylor / closed - 1)):.1e} "
                f"of sqrt(m²+π²)/|x·v|; softmax regression: jet = log-F series to {np.max(np.abs(jet_c - th_c)):.0e}, "
                f"root test within {np.max(np.abs(ch / exact - 1)):.1e} of the certified zeros"),
        arrays={"margin": margin, "closed": closed, "taylor": taylor, "multi_exact": exact, "multi_taylor": ch},
        seed=seed,
    )


# ============================================================================= scalar logistic
LOGISTIC_JET_ORDER = 12  # jet checks the series recursion; tracing jet's exp rule costs ~order² ops
LOGISTIC_ORDER = 120  # Prony on the recursion's series: at δ = 10, (ρ1/ρ2)^(N/2) = 0.76^60 ≈ 1e-7


def _logistic_series(d0: float) -> tuple[np.ndarray, np.ndarray]:
    """Taylor coefficients of f(d0 + t) = log(1 + e^{-d0-t}): (jet, order 12) and (NumPy log-F recursion, order 120).

    f(d0 + t) = log F(t) with F = e^0 + e^{-d0-t}: logits (0, -d0), slopes (0, -1)."""
    return (S.logistic_loss_taylor(d0, LOGISTIC_JET_ORDER),
            T.log_partition_taylor([0.0, -d0], [0.0, -1.0], LOGISTIC_ORDER))


APP5_QUOTE = ("Consider the scalar logistic loss: f ( x) = log ( 1 + e −x ) , (31) ... f has complex singularities where "
              "1 + e −x = 0, located at x = ( 2k + 1) iπ. (34) These are logarithmic branch points. The Taylor series of "
              "f about a real point δ has a finite radius of convergence: Rx (δ) = √(δ2 + π2) . (35) Although f ′′ (δ) "
              "vanishes exponentially, Rx (δ) grows only linearly with δ. Consequently, 1/f ′′ (δ) / Rx (δ) ∼ eδ/δ "
              "(δ → ∞) . (36)")


@claim(
    "sao2026.scalar_logistic_vs_curvature", paper=PAPER, provenance="quoted", kind="exact",
    source="Appendix 5.1, eqs. (31)-(36)",
    statement="log(1+e^{−x}) has singularities at x = iπ(2k+1); about a margin δ its Taylor radius is sqrt(δ²+π²), "
              "while 1/f''(δ) = e^δ + 2 + e^{−δ} grows like e^δ. Checked at δ = 10, where steplab evaluates "
              "1/f'' = 22,028.5 and the radius sqrt(100 + π²) = 10.48 (steplab's numbers: the paper's text states "
              "none at δ = 10; only Fig. 13's annotation, 'Hessian suggests 22,000; true limit is 10', rounds them).",
    latex=r"\rho(\delta)=\sqrt{\delta^2+\pi^2},\ 1/f''(\delta)=e^\delta+2+e^{-\delta}",
    quote=APP5_QUOTE, where=f"{ARXIV}, Appendix 5.1, eqs. (31)-(36)",
)
def scalar_logistic_vs_curvature(budget: Budget) -> Result:
    r"""At δ = 10: :math:`1/f''` by ``jax.grad`` twice against the sympy closed form
    :math:`e^\delta+2+e^{-\delta}` (rival: the stability edge :math:`2/f''`); the radius of the Taylor
    series of :math:`f(\delta+t)` (Prony fit of 120 coefficients from the :math:`\log F` recursion,
    whose first 12 are checked against ``jet``) against :math:`\sqrt{\delta^2+\pi^2}` (rivals: π, the
    radius at the decision boundary; :math:`|\delta|`; the curvature scale :math:`1/f''`)."""
    del budget  # one point; nothing to scale
    d0 = 10.0
    sc = T.logistic_scales()
    inv_sym = float(sc["inv_curvature"].subs(T.delta, d0))
    rad_sym = float(sc["radius"].subs(T.delta, d0))
    inv_jax = S.logistic_inverse_curvature(d0)
    jet_c, rec_c = _logistic_series(d0)
    ghost = T.prony_pair(rec_c)
    rtol = 4.0 * float(T.prony_error_scale(d0, LOGISTIC_ORDER)) + 1e-9
    return Result(
        checks=[
            Exact("1/f''(10) by jax.grad twice", predicted=inv_sym, measured=inv_jax, rtol=1e-10,
                  rivals={"2/f''(10) (the GD stability edge)": 2 * inv_sym},
                  why="float64 autodiff of a smooth function: ~1e-14 relative"),
            Exact("Taylor radius of f(10 + t) from its series (Prony, 120 coefficients)", predicted=rad_sym,
                  measured=abs(ghost), rtol=rtol,
                  rivals={"π (the radius at the decision boundary)": math.pi, "|δ| = 10": d0,
                          "1/f''(10) (the curvature scale)": inv_sym},
                  why=f"Prony error scale (ρ1/ρ2)^(N/2) at N = {LOGISTIC_ORDER}, times 4, plus round-off"),
            Exact("series of f(10 + t): jet (JAX) vs the log-F recursion, orders 0-12", predicted=rec_c[:13],
                  measured=jet_c, rtol=1e-9, atol=1e-20, why="two float64 recursions on numbers ~e^-10: ~1e-13 relative"),
        ],
        detail=(f"δ = 10: 1/f'' = {inv_jax:.2f} (jax) vs {inv_sym:.2f} (sympy); series radius {abs(ghost):.6f} vs "
                f"sqrt(δ²+π²) = {rad_sym:.6f}; located singularity {ghost:.6f} (theory: −10 + πi)"),
        arrays={"delta0": np.array([d0]), "inv_curvature_jax": np.array([inv_jax]),
                "radius_series": np.array([abs(ghost)])},
    )


FIG13_QUOTE = ("Figure 13. Hessian curvature σ( 1 − σ) ∼ e−δ vanishes exponentially while the radius bound "
               "π/√(δ2 + π2) decays only algebraically. At δ = 10, the mismatch exceeds 4000×.")
SEC85_QUOTE = ("The Hessian comparison (section Appendix 5) quantifies the mismatch directly: at logit margin δ = 10, "
               "Hessian-implied step scales exceed ρa by over 4000×.")
EQ43_QUOTE = ("For a direction v, a quadratic model predicts a characteristic step size τH ( v) = 2/κ( v) , "
              "κ( v) = v⊤ Hv. (43)")


@claim(
    "sao2026.hessian_ratio_4000x", paper=PAPER, provenance="quoted", kind="bound",
    source="Figure 13 caption; §8.5 (build of 2026-03-26); Appendix 5 eqs. (30), (43), (47)",
    statement="At logit margin δ = 10 the paper's Hessian step scale τ_H = 2/κ (eq. 43; κ = f''(δ)Δ², eq. 46) exceeds "
              "the Taylor radius sqrt(δ²+π²)/|Δ| by more than 4000× (Fig. 13: ≈ 4203×) and ρ_a = π/|Δ| by more "
              "than 4000× (§8.5: ≈ 14,024×, eq. (47)'s 2e^δ/(π|Δ|)). Both are lower bounds, and both hold. "
              "(Fig. 13's annotation 'Hessian suggests 22,000' and its legend 'τH ∼ 1/σ(1−σ)' use 1/f'' instead: "
              "a labelling inconsistency of the figure, a factor 2 against its own eq. (43), not a false "
              "statement.)",
    latex=r"\frac{2/f''(10)}{\sqrt{100+\pi^2}}\approx4203>4000,\quad\frac{2/f''(10)}{\pi}\approx14024>4000",
    quote=FIG13_QUOTE, where=f"{ARXIV}, Figure 13 caption",
)
def hessian_ratio_4000x(budget: Budget) -> Result:
    r"""Both sides measured, then compared with the paper's words. :math:`\tau_H=2/\kappa` from the curvature
    :math:`f''(10)` by ``jax.grad`` twice (:math:`\Delta=1`, the scalar logistic loss); the radius of the
    Taylor series of :math:`f(10+t)` by a Prony fit of 120 coefficients (:math:`\rho_a=\pi/|\Delta|=\pi`).
    (1) Exact: measured :math:`\tau_H/\rho` against the closed form :math:`2(e^{10}+2+e^{-10})/\sqrt{100+\pi^2}`
    (:func:`theory.softmax_radius.hessian_ratio`); rival: the ratio with Fig. 13's annotated scale
    :math:`1/f''` (≈ 2101). (2) Exact: measured :math:`\tau_H/\rho_a` against eq. (47)'s
    :math:`2e^\delta/(\pi|\Delta|)` (an approximation, relative error :math:`(2+e^{-\delta})e^{-\delta}`);
    rival: :math:`e^\delta/\pi`, eq. (47) on the 1/f'' scale. (3) Bound: both measured ratios exceed
    4000 (the caption's and §8.5's "4000×"); rival: they exceed 4000 on Fig. 13's 1/f'' scale too, i.e. the
    2/κ ratios exceed 8000 (false for the caption's ratio, 4203)."""
    del budget
    d0 = 10.0
    tau_h = 2.0 * S.logistic_inverse_curvature(d0)  # eq. (43): tau_H = 2/kappa, kappa = f''(delta)·Delta², Delta = 1
    radius = abs(T.prony_pair(_logistic_series(d0)[1]))
    ratio_radius, ratio_rho_a = tau_h / radius, tau_h / math.pi
    rtol = 4.0 * float(T.prony_error_scale(d0, LOGISTIC_ORDER)) + 1e-9
    eq47 = 2.0 * math.exp(d0) / math.pi
    eq47_err = (2.0 + math.exp(-d0)) * math.exp(-d0)  # eq. (47) drops 2 + e^-δ from 1/f'' = e^δ + 2 + e^-δ
    one_over = float(T.hessian_ratio(d0, 1.0, "radius")) / 2  # the ratio with Fig. 13's annotated 1/f''
    return Result(
        checks=[
            Exact("τ_H/ρ at δ = 10: (2/f'' by jax) / (radius of the Taylor series, Prony)",
                  predicted=float(T.hessian_ratio(d0, 1.0, "radius")), measured=ratio_radius, rtol=rtol,
                  rivals={"(1/f'')/ρ ≈ 2101 (Fig. 13's annotated scale '22,000' = 1/f'')": one_over},
                  why=f"the radius's Prony error scale at N = {LOGISTIC_ORDER}, times 4 (the curvature is exact to 1e-14)"),
            Exact("τ_H/ρ_a at δ = 10: (2/f'' by jax) / π, against eq. (47)'s 2e^δ/(π|Δ|)", predicted=eq47,
                  measured=ratio_rho_a, rtol=1.5 * eq47_err,
                  rivals={"e^δ/π (eq. 47 on the 1/f'' scale)": eq47 / 2},
                  why=f"eq. (47) approximates 1/f'' = e^δ + 2 + e^-δ by e^δ: relative error {eq47_err:.1e}, times 1.5"),
            Bound("τ_H/ρ at δ = 10 (Fig. 13 caption: 'the mismatch exceeds 4000×')", measured=ratio_radius,
                  bound=4000.0, side=">=",
                  rivals={"it exceeds 4000× on Fig. 13's annotated 1/f'' scale too (2/κ ratio ≥ 8000)": 8000.0},
                  why="the paper states a lower bound; the measured ratio is accurate to 1e-6"),
            Bound("τ_H/ρ_a at δ = 10 (§8.5: 'exceed ρa by over 4000×')", measured=ratio_rho_a, bound=4000.0, side=">=",
                  paper=4000.0, quote=SEC85_QUOTE, where=f"{ARXIV}, §8.5 (build of 2026-03-26)",
                  why="the paper states a lower bound; the measured ratio is accurate to 1e-6"),
        ],
        detail=(f"τ_H = 2/κ = {tau_h:.1f} (eq. 43); τ_H/ρ = {ratio_radius:.1f} (closed form "
                f"{float(T.hessian_ratio(d0, 1.0, 'radius')):.1f}) > 4000 as Fig. 13's caption says; τ_H/ρ_a = "
                f"{ratio_rho_a:.0f} > 4000 as §8.5 says. Fig. 13's annotation 'Hessian suggests 22,000' is 1/f'' = "
                f"{tau_h / 2:.0f} (legend 'τH ∼ 1/σ(1−σ)'), half of eq. (43)'s τ_H: with that scale the caption's "
                f"ratio would be {ratio_radius / 2:.0f}, below 4000 -- a labelling inconsistency inside the figure "
                "(a factor 2), not a false statement"),
        arrays={"tau_h": np.array([tau_h]), "radius": np.array([radius]), "ratio_radius": np.array([ratio_radius]),
                "ratio_rho_a": np.array([ratio_rho_a])},
    )


# ============================================================================= KL remainder
def _kl_instances(rng: np.random.Generator, n_inst: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Every third instance is the extremal two-point law (plus a zero-probability class); the rest random."""
    out = []
    for i in range(n_inst):
        if i % 3 == 0:
            p = np.array([(3 + math.sqrt(3)) / 6, (3 - math.sqrt(3)) / 6, 0.0])
            a = np.array([0.0, 1.0, 0.5]) * rng.uniform(0.5, 3)
        else:
            n = int(rng.integers(2, 8))
            p = rng.dirichlet(np.ones(n))
            a = rng.normal(size=n) * rng.uniform(0.3, 3)
        out.append((p, a))
    return out


KL_THEOREM_QUOTE = ("Theorem Appendix 4.2 (Sharp KL remainder). For softmax distributions p (τ) with logits z + τa, "
                    "step size τ, and logit-derivative spread Δa = maxi ai − mini ai : | KL ( p (τ) ∥ p ( 0)) − τ2/2 "
                    "Varp ( 0 ) ( a) | ≤ |τ| 3 Δ3a / (18 √3) (29) The constant 1/( 18 √3) ≈ 0.032 is sharp.")


@claim(
    "sao2026.kl_remainder_bound", paper=PAPER, provenance="quoted", kind="bound",
    source="Appendix 4.4, Theorem Appendix 4.2, eq. (29)", quote=KL_THEOREM_QUOTE,
    where=f"{ARXIV}, Appendix 4.4, Theorem Appendix 4.2, eq. (29)",
    statement="|KL − (t²/2)Var_p(a)| ≤ |t|³Δa³/(18√3) for the tilted family p(t) ∝ p e^{at}; steplab checks both KL "
              "directions: the constant is sharp for KL(p(t)‖p(0)), while KL(p(0)‖p(t)) obeys the sharp 1/(36√3).",
    latex=r"\big|\mathrm{KL}-\tfrac{t^2}{2}\mathrm{Var}_p(a)\big|\le\frac{|t|^3\Delta a^3}{18\sqrt3}",
)
def kl_remainder_bound(budget: Budget) -> Result:
    r"""Both KL directions evaluated in JAX (``log_softmax``) on random laws and the extremal two-point law.
    (1) The normalized remainder :math:`|\mathrm{KL}-t^2\mathrm{Var}/2|/(|t|^3\Delta a^3)` over
    :math:`|t|\Delta a\in[10^{-2},10]` stays below the sympy constants :math:`1/(18\sqrt3)` (reverse;
    rival: the forward constant :math:`1/(36\sqrt3)`) and :math:`1/(36\sqrt3)` (forward). (2) At
    :math:`t\Delta a=10^{-3}` it equals the per-law limit :math:`|\kappa_3|/(3\Delta a^3)` (reverse) or
    :math:`|\kappa_3|/(6\Delta a^3)` (forward), and its largest value (the extremal law) equals the sympy
    constant of that direction, which is therefore sharp; each rival is the other direction's value."""
    seed = 17
    inst = _kl_instances(np.random.default_rng(seed), budget.pick(quick=24, full=150))
    consts = T.kl_remainder_constants()
    c_fwd, c_rev = float(consts["forward"]), float(consts["reverse"])
    unit = np.concatenate([-np.logspace(-2, 1, 13), np.logspace(-2, 1, 13)])  # t·Δa
    small = 1e-3
    sup = {"forward": 0.0, "reverse": 0.0}
    lim_meas = {"forward": [], "reverse": []}
    lim_pred = {"forward": [], "reverse": []}
    for p, a in inst:
        da = a.max() - a.min()
        t = np.append(unit, small) / da
        kl = S.tilted_kl(p, a, t)
        var = float(np.sum(p * a**2) - np.sum(p * a) ** 2)
        for name in ("forward", "reverse"):
            ratio = np.abs(kl[name] - t**2 / 2 * var) / (np.abs(t) ** 3 * da**3)
            sup[name] = max(sup[name], float(ratio[:-1].max()))
            lim_meas[name].append(float(ratio[-1]))
            lim_pred[name].append(T.kl_small_t_ratio(p, a, name))
    lm = {k: np.array(v) for k, v in lim_meas.items()}
    lp = {k: np.array(v) for k, v in lim_pred.items()}
    # next term kappa_4 t/8 (reverse) or /24 (forward) over Δa^3 with |kappa_4| <= Δa^4/8: at tΔa = 1e-3 at most
    # 1.6e-5; float64 cancellation in KL − t²Var/2 (a remainder ~3e-4 of KL ~ 1e-7) adds ~1e-7
    atol = small / 64 + 1e-6
    return Result(
        checks=[
            Bound("sup |KL(p(t)‖p(0)) − t²Var/2| / (|t|³Δa³)", measured=sup["reverse"], bound=c_rev, side="<=",
                  slack=1e-9, rivals={"the forward constant 1/(36√3) bounds this direction too": c_fwd},
                  why="rigorous bound; slack covers float64 cancellation"),
            Bound("sup |KL(p(0)‖p(t)) − t²Var/2| / (|t|³Δa³)", measured=sup["forward"], bound=c_fwd, side="<=",
                  slack=1e-9, why="rigorous bound; slack covers float64 cancellation"),
            Exact("largest reverse remainder ratio at tΔa = 1e-3 (the extremal two-point law)", predicted=c_rev,
                  measured=float(lm["reverse"].max()), atol=atol, rivals={"the forward constant 1/(36√3)": c_fwd},
                  why="the sympy constant is sharp: the extremal law attains it as t → 0 (next-order term as below)"),
            Exact("largest forward remainder ratio at tΔa = 1e-3 (the extremal two-point law)", predicted=c_fwd,
                  measured=float(lm["forward"].max()), atol=atol,
                  rivals={"1/(18√3) is the sharp constant of this direction too": c_rev},
                  why="the sympy constant is sharp: the extremal law attains it as t → 0 (next-order term as below)"),
            Exact("reverse remainder ratio at tΔa = 1e-3, per law", predicted=lp["reverse"], measured=lm["reverse"],
                  atol=atol, rivals={"the forward limit |κ3|/(6Δa³)": lp["forward"]},
                  why="next-order term κ4 t/8 with |κ4| ≤ Δa⁴/8, plus float64 cancellation"),
            Exact("forward remainder ratio at tΔa = 1e-3, per law", predicted=lp["forward"], measured=lm["forward"],
                  atol=atol, rivals={"the reverse limit |κ3|/(3Δa³) (one constant for both directions)": lp["reverse"]},
                  why="next-order term κ4 t/24 with |κ4| ≤ Δa⁴/8, plus float64 cancellation"),
        ],
        detail=(f"{len(inst)} laws × {unit.size} t: sup remainder ratio {sup['reverse']:.5f} (reverse; 1/(18√3) = "
                f"{c_rev:.5f}) and {sup['forward']:.5f} (forward; 1/(36√3) = {c_fwd:.5f}); small-t limits match "
                f"|κ3|/(3Δa³) and |κ3|/(6Δa³) to {max(np.max(np.abs(lm[k] - lp[k])) for k in lm):.1e}"),
        seed=seed,
    )


@claim(
    "sao2026.kl_direction_label", paper=PAPER, provenance="derived", kind="exact", refutes_paper=True,
    source="Appendix 4.2, eq. (26) (and eq. (28), which inherits its label)",
    statement="The paper's eq. (26) labels K(t) − K(0) − tK'(0) as KL(p(t)‖p(0)); that expression is "
              "KL(p(0)‖p(t)) (the other direction is tK'(t) − K(t) + K(0)). The label is wrong, the theorem is not: "
              "Theorem App. 4.2's constant 1/(18√3) for KL(p(t)‖p(0)) holds and is sharp "
              "(sao2026.kl_remainder_bound); the derivation through eq. (26) gives the other direction's 1/(36√3).",
    quote="Appendix 4.2 KL as a Bregman Divergence For exponential families, KL has an elegant form. Along the path "
          "τ ↦ p (τ) , it equals the Bregman divergence of the log-partition: KL ( p (τ) ∥ p ( 0)) = "
          "K (τ) − K ( 0) − τK ′ ( 0) (26)",
    where=f"{ARXIV}, Appendix 4.2, eq. (26)",
    latex=r"K(t)-K(0)-tK'(0)=\mathrm{KL}(p(0)\|p(t))\ne\mathrm{KL}(p(t)\|p(0))",
)
def kl_direction_label(budget: Budget) -> Result:
    r"""The expression :math:`K(t)-K(0)-tK'(0)` evaluated in JAX (:math:`K'` by ``jax.grad``) on random
    laws (some with a zero-probability class) against :math:`\mathrm{KL}(p(0)\|p(t))` from
    :mod:`theory` (NumPy); the paper's label :math:`\mathrm{KL}(p(t)\|p(0))` is rejected; rival: the
    quadratic approximation :math:`t^2\mathrm{Var}_p(a)/2`."""
    seed = 18
    rng = np.random.default_rng(seed)
    expr, fwd, rev, quad = [], [], [], []
    for i in range(budget.pick(quick=10, full=50)):
        p = rng.dirichlet(np.ones(5))
        if i % 2:
            p = np.append(p, 0.0)  # a class with zero probability: its terms take their limit 0
        a = rng.normal(size=p.size)
        t = rng.uniform(0.5, 2.0)
        expr.append(float(S.cgf_increment(p, a, [t])[0]))
        fwd.append(T.kl_forward(p, a, t))
        rev.append(T.kl_reverse(p, a, t))
        quad.append(t**2 / 2 * float(np.sum(p * a**2) - np.sum(p * a) ** 2))
    expr, fwd, rev = np.array(expr), np.array(fwd), np.array(rev)
    return Result(
        checks=[Exact("K(t) − K(0) − tK'(0) (JAX), per instance", predicted=fwd, measured=expr, rtol=1e-10, atol=1e-14,
                      paper=rev, rivals={"t²Var_p(a)/2 (the quadratic approximation)": np.array(quad)},
                      why="float64 evaluation of O(1) logarithms: ~1e-15 relative",
                      quote="KL ( p (τ) ∥ p ( 0)) = K (τ) − K ( 0) − τK ′ ( 0) (26)",
                      where=f"{ARXIV}, Appendix 4.2, eq. (26)")],
        detail=(f"JAX K(t)−K(0)−tK'(0) equals KL(p(0)‖p(t)) to {np.max(np.abs(expr - fwd)):.0e}; it differs from the "
                f"paper's label KL(p(t)‖p(0)) by {np.min(np.abs(expr - rev)):.2e} to {np.max(np.abs(expr - rev)):.2e}. "
                "Only the label of eq. (26) (and eq. (28), which inherits it) is wrong: Theorem App. 4.2 itself, "
                "1/(18√3) for KL(p(t)‖p(0)), holds and is sharp (sao2026.kl_remainder_bound: the extremal two-point "
                "law attains it as t → 0), while eq. (26)'s right side obeys the sharp 1/(36√3)"),
        seed=seed,
    )


@claim(
    "sao2026.third_moment_sharp", paper=PAPER, provenance="quoted", kind="exact",
    source="Appendix 4.4, Lemma Appendix 4.1",
    quote="Lemma Appendix 4.1 (Sharp third moment). For any distribution on an interval of width Δ, "
          "| E [( X − EX ) 3 ]| ≤ Δ3 /( 6 √3) . Proof. The extremum is a two-point distribution at endpoints. Setting "
          "X ∈ {0, Δ} with P ( X =Δ) = p, we get E [( X −EX ) 3 ] = Δ3 p ( 1−p)( 1−2p) . Maximizing over p gives "
          "p∗ = ( 3 ± √3)/6, yielding 1/( 6 √3) .",
    where=f"{ARXIV}, Appendix 4.4, Lemma Appendix 4.1",
    statement="Sharp third-moment lemma: a variable supported on an interval of length Δ has "
              "|E(X−EX)³| ≤ Δ³/(6√3), attained by a two-point law with p = (3 ± √3)/6.",
    latex=r"|E(X-EX)^3|\le\Delta^3/(6\sqrt3)",
)
def third_moment_sharp(budget: Budget) -> Result:
    r"""BFGS over all laws on 21 points of [0, 1] (softmax-parametrized weights) maximizes the third
    central moment; the maximum must equal sympy's :math:`1/(6\sqrt3)` (rivals: twice that; the
    naive :math:`\Delta\cdot\Delta^2/4`) and the maximizer must put mass :math:`(3-\sqrt3)/6` on the
    right end (rivals: 1/2, 1/3). 20,000 random laws never exceed the bound."""
    from scipy.optimize import minimize

    seed = 19
    rng = np.random.default_rng(seed)
    ext = T.third_moment_extremum()
    Dsym = sp.Symbol("Delta", positive=True)
    value = float(ext["max"].subs(Dsym, 1))
    p_star = float(min(ext["argmax"], key=lambda e: float(e)))  # positive skew: small mass on the right end
    x = np.linspace(0, 1, 21)

    def negk3(th):
        w = np.exp(th - th.max())
        return -float(T.third_central_moment(w, x))

    best, argp = -np.inf, math.nan
    for _ in range(budget.pick(quick=6, full=30)):
        res = minimize(negk3, rng.normal(size=x.size) * 2, method="BFGS", options={"gtol": 1e-12, "maxiter": 2000})
        if -res.fun > best:
            w = np.exp(res.x - res.x.max())
            best, argp = -res.fun, float((w / w.sum())[-1])
    sample = rng.dirichlet(np.ones(x.size) * 0.3, size=20000)
    emp = float(np.abs(T.third_central_moment(sample, x)).max())
    return Result(
        checks=[
            Exact("max third central moment over laws on [0, 1] (BFGS)", predicted=value, measured=best, rtol=1e-7,
                  rivals={"1/(3√3) (twice the bound)": 2 * value, "1/4 (range × maximal variance)": 0.25},
                  why="BFGS to gtol 1e-12 on a smooth objective whose optimum is a two-point law"),
            Exact("mass on the right end at the maximizer", predicted=p_star, measured=argp, atol=1e-3,
                  rivals={"1/2 (the symmetric law)": 0.5, "1/3": 1 / 3},
                  why="the objective is flat to second order at the optimum: sqrt(1e-12) ~ 1e-6, ample room"),
            Bound("max |third central moment| over 20,000 random laws", measured=emp, bound=value, side="<=",
                  slack=1e-12, why="rigorous bound; float64 round-off"),
        ],
        detail=(f"sympy max 1/(6√3) = {value:.10f}; BFGS finds {best:.10f} with mass {argp:.4f} at the right end "
                f"(theory {p_star:.4f}); random laws reach at most {emp:.4f}"),
        seed=seed,
    )


# ============================================================================= experiments
def _params_of(values: dict) -> dict:
    return {k[len("param."):]: jnp.asarray(v) for k, v in values.items() if k.startswith("param.")}


@experiment("softmax_radius.trained")
def trained(budget: Budget, *, arch: str, seed: int = 0) -> dict:
    """A model trained by plain Adam on the digits (the starting point of the r-sweeps).

    Returns ``param.<name>`` arrays, ``train_loss``, ``train_acc``, ``test_acc``, ``diverged``.
    """
    steps = budget.pick(quick=200, full=400)
    model = S.make_model(arch, hidden=(64,))
    data = S.digits()
    out = S.train(jax.random.key(seed), model, data, steps=steps, batch=128, eta=3e-3, track_radius=False)
    params = out["params"]
    train_loss, train_acc = S.evaluate(model, params, data["x_train"], data["y_train"])
    _, test_acc = S.evaluate(model, params, data["x_test"], data["y_test"])
    return {**{f"param.{k}": np.asarray(v) for k, v in params.items()}, "train_loss": train_loss,
            "train_acc": train_acc, "test_acc": test_acc, "diverged": bool(out["diverged"])}


@experiment("softmax_radius.rsweeps")
def rsweeps(budget: Budget, *, seed: int = 21) -> dict:
    """One step from each trained model along the descent direction and random unit directions, at every
    normalized step r (the paper's r = t/ρ_a).

    Per architecture ``<arch>.``: ``loss``, ``ratio``, ``acc`` (training accuracy), ``test_acc`` (accuracy on the
    held-out split, the paper's criterion) (D, R), ``rho_a`` (D,), ``loss0``, ``acc0``, ``test_acc0``, the logits
    ``z`` (N, 10) and slopes ``a`` (D, N, 10) at the start on the training split, the same on the test split
    (``z_test``, ``a_test``); and ``r``, ``y``, ``y_test``. Direction 0 is the descent direction.
    """
    archs = budget.pick(quick=("mlp",), full=ARCHS)
    n_random = budget.pick(quick=2, full=4)
    r = np.geomspace(*budget.pick(quick=(0.05, 50.0), full=(0.01, 100.0)), budget.pick(quick=25, full=41))
    data = S.digits()
    x, y = data["x_train"], data["y_train"]
    xt, yt = data["x_test"], data["y_test"]
    out = {"r": r, "y": y, "y_test": yt}
    for i, arch in enumerate(archs):
        model = S.make_model(arch, hidden=(64,))
        params = _params_of(trained(budget, arch=arch))
        vg = S.gradient_direction(model, params, x, y)
        dirs = S.random_directions(jax.random.fold_in(jax.random.key(seed), i), params, n_random)
        allv = jax.tree_util.tree_map(lambda g, d: jnp.concatenate([g[None], d]), vg, dirs)
        sw = S.one_step_sweep(model, params, allv, x, y, r, test=(xt, yt))
        for k in ("loss", "ratio", "acc", "test_acc", "rho_a", "loss0", "acc0", "test_acc0", "z", "a", "diverged"):
            out[f"{arch}.{k}"] = sw[k]
        # the test split's logits and slopes along each direction (the accuracy floor of the linearized logits)
        za = [S.directional_derivatives(model.apply, params, {k: w[j] for k, w in allv.items()}, xt)
              for j in range(n_random + 1)]
        out[f"{arch}.z_test"] = np.asarray(za[0][0])
        out[f"{arch}.a_test"] = np.stack([np.asarray(u[1]) for u in za])
    out["archs"] = np.array(archs)
    return out


def _arch_list(sw: dict) -> list[str]:
    return [str(a) for a in np.asarray(sw["archs"])]


FIG1_QUOTE = ("Every network keeps its accuracy for r < 1; once r crosses 1, collapse appears across all six "
              "architectures.")
SEC62_QUOTE = ("Figure 7 sweeps r from 0.01 to 100 on six architectures via single gradient steps on converged models. "
               "The key result is that no tested architecture fails for r < 1.")


def _floor(sw: dict, arch: str) -> np.ndarray:
    """steplab's linearized accuracy floor on the test split at t = r·ρ_a, per direction (D, R)."""
    t = sw["r"][None, :] * sw[f"{arch}.rho_a"][:, None]
    return T.accuracy_floor(sw[f"{arch}.z_test"], sw[f"{arch}.a_test"], sw["y_test"], t)


@claim(
    "sao2026.no_blowup_below_r1", paper=PAPER, provenance="quoted", kind="bound",
    source="Figure 1 caption; §6.2 and Figure 7 (A: test accuracy retained)", quote=FIG1_QUOTE,
    where=f"{ARXIV}, Figure 1 caption",
    statement="One gradient step of normalized length r = t/ρ_a < 1 from a converged model keeps its test accuracy, "
              "in every architecture (the paper's criterion: Fig. 1, §6.2, Fig. 7A 'Test accuracy retained'). "
              "steplab's prediction for 'keeps': under logit linearization a sample classified correctly with top-2 "
              "margin m_i > Δa_i·t cannot flip, so the test accuracy stays above that floor; for the samples that set "
              "ρ_a, Δa_i·t ≤ π r. steplab's own guarantee on the loss: the mean loss rises by at most B t ≤ π r nats. "
              "The loss-ratio rule 1.1 of the authors' code (their Fig. 8 onset of the median random curve) is not "
              "the paper's criterion and is evaluated as a rival.",
    latex=r"\mathrm{acc}(r)\ge\tfrac1N\#\{i:m_i>\Delta a_i\,r\rho_a\},\quad"
          r"\ell(\theta+tv)-\ell(\theta)\le Bt\le\pi r\quad(r<1)",
)
def no_blowup_below_r1(budget: Budget) -> Result:
    r"""From the r-sweeps of trained models (:func:`rsweeps`; the test split's accuracy after the step is the
    paper's criterion), every grid ``r`` < 1:
    (1) the measured test accuracy minus steplab's linearized floor
    :func:`theory.softmax_radius.accuracy_floor` (from the logits and JVP slopes of the test images at the start;
    no step taken) is >= 0, every direction (gradient and random) and architecture. (2) Along the gradient (the
    paper's setting), the test accuracy retained :math:`\mathrm{acc}(r)/\mathrm{acc}(0)` is at least the floor's
    smallest value below r = 1 over :math:`\mathrm{acc}(0)`; rival: a step with r < 1 costs no accuracy at all.
    (3) The loss increment over steplab's linearized guarantee :math:`Bt`
    (:func:`theory.softmax_radius.increment_bound`) is at most 1; rival: a step with r < 1 never raises the loss.
    (4) The largest loss ratio below r = 1 against the same guarantee as a ratio, :math:`1+\max_jB_jt_j/\ell(0)`;
    rival: the 1.1 onset rule of the authors' code (their Fig. 8), the loss never reaching 1.1× below r = 1."""
    sw = rsweeps(budget)
    r, y = sw["r"], sw["y"]
    below = r < 1
    archs = _arch_list(sw)
    above_floor, retained, floor_min, inc_ratio, ratios, guarantee, rows = [], [], [], [], [], [], []
    for arch in archs:
        acc, acc0, fl = sw[f"{arch}.test_acc"][:, below], sw[f"{arch}.test_acc0"], _floor(sw, arch)[:, below]
        above_floor.append((acc - fl).ravel())
        retained.append(acc[0] / acc0)
        floor_min.append(fl[0].min() / acc0)
        B = np.atleast_1d(T.increment_bound(sw[f"{arch}.a"], y))
        t = r[below][None, :] * sw[f"{arch}.rho_a"][:, None]
        inc = sw[f"{arch}.loss"][:, below] - sw[f"{arch}.loss0"]
        inc_ratio.append((inc / (B[:, None] * t)).ravel())
        ratio = sw[f"{arch}.ratio"][:, below]
        ratios.append(ratio.ravel())
        guarantee.append(float(np.max(1 + B * t.max(axis=1) / sw[f"{arch}.loss0"])))
        rows.append(f"{arch}: test accuracy {100 * acc0:.1f}% at r = 0, along the gradient ≥ {100 * acc[0].min():.1f}% for "
                    f"r < 1 (floor ≥ {100 * fl[0].min():.1f}%), over {acc.shape[0] - 1} random directions ≥ "
                    f"{100 * acc[1:].min():.1f}%; training accuracy ≥ {100 * sw[f'{arch}.acc'][:, below].min():.1f}% "
                    f"(from {100 * sw[f'{arch}.acc0']:.1f}%); max loss ratio {ratio.max():.3f} "
                    f"({int(np.sum(np.any(ratio >= 1.1, axis=1)))}/{ratio.shape[0]} directions reach 1.1)")
    above_floor, inc_ratio, ratios = (np.concatenate(u) for u in (above_floor, inc_ratio, ratios))
    retained = np.concatenate(retained)
    n_test = int(np.size(sw["y_test"]))
    return Result(
        checks=[
            Bound("test accuracy after one step minus the linearized floor, every r < 1, direction and architecture",
                  measured=above_floor, bound=0.0, side=">=", slack=0.5 / n_test,
                  why="the floor is exact under logit linearization (a sample with m_i > Δa_i t keeps its arg-max); the "
                      "trained nonlinear models test it; accuracies are multiples of 1/N_test (stored in float32): "
                      "slack half an image"),
            Bound("test accuracy retained acc(r)/acc(0) after one gradient step, min over r < 1 and architectures",
                  measured=retained, bound=float(min(floor_min)), side=">=",
                  rivals={"a step with r < 1 costs no test accuracy at all (retained ≥ 1)": 1.0},
                  why=f"the bound is the smallest linearized floor below r = 1 over acc(0); one test image is "
                      f"1/{n_test} of the accuracy, so the rival is rejected by a single flipped image"),
            Bound("max over directions and r < 1 of the loss increment / (B t)", measured=inc_ratio, bound=1.0,
                  side="<=", rivals={"a step with r < 1 never raises the loss (increment ≤ 0)": 0.0},
                  why="exact under logit linearization (ℓ_i' ≤ max_k a_ik − a_iy); the nonlinear models test it"),
            Bound("max loss ratio ℓ(θ + tv)/ℓ(θ) over directions and r < 1", measured=ratios, bound=max(guarantee),
                  side="<=",
                  rivals={"the loss never reaches 1.1× below r = 1 (the authors' code's onset rule for Fig. 8)": 1.1},
                  why="the same linearized guarantee as a ratio, 1 + max_j B_j t_j/ℓ(0)"),
        ],
        detail="; ".join(rows) + (". The paper's own Fig. 8 shows gradient loss ratios 1.50/1.48/1.59 at r = 1, so the "
                                  "1.1 rule of its code is crossed below r = 1 there too"),
        arrays={"r": r, **{f"{a}_ratio": sw[f"{a}.ratio"] for a in archs},
                **{f"{a}_acc": sw[f"{a}.acc"] for a in archs}, **{f"{a}_test_acc": sw[f"{a}.test_acc"] for a in archs},
                **{f"{a}_floor": _floor(sw, a) for a in archs}},
        seed=21,
    )


NORMALIZED = ("mlp_ln", "cnn_bn")  # models with LayerNorm / BatchNorm


def _decade(onsets: np.ndarray) -> np.ndarray:
    return np.where(onsets < 1, "r < 1", np.where(onsets <= 10, "1 ≤ r ≤ 10", "r > 10"))


def _linearized_ratio(sw: dict, arch: str) -> np.ndarray:
    """Loss ratio after one step predicted by the logit linearization (closed form from the JVP slopes), (D, R)."""
    a, rho, r = sw[f"{arch}.a"], sw[f"{arch}.rho_a"], sw["r"]
    lin = np.stack([T.linearized_line_loss(sw[f"{arch}.z"], a[j], sw["y"], r * rho[j]) for j in range(a.shape[0])])
    return lin / sw[f"{arch}.loss0"]


def _acc_onset(sw: dict, arch: str, level: float = 0.9) -> np.ndarray:
    """First r where the test accuracy retained falls below ``level`` of its start, per direction (inf if never)."""
    ret = sw[f"{arch}.test_acc"] / sw[f"{arch}.test_acc0"]
    hit = ret < level
    return np.where(hit.any(axis=1), sw["r"][np.argmax(hit, axis=1)], np.inf)


CLUSTER_QUOTE = "Phase transitions cluster between r = 1 and r = 10."


@claim(
    "sao2026.onsets_between_1_and_10", paper=PAPER, provenance="quoted", kind="qualitative",
    source="§6.2 (Figure 7)", quote=CLUSTER_QUOTE, where=f"{ARXIV}, §6.2 (Figure 7)",
    statement="In Fig. 7's setting -- one gradient step from each converged architecture -- the phase transitions "
              "cluster between r = 1 and r = 10. The paper defines no onset rule; steplab's is the first r where the "
              "loss doubles (Fig. 7B's loss inflation), and 'cluster' is read as most architectures. steplab predicts "
              "each onset's decade from the logit-linearized loss (asserted on models without normalization layers; "
              "on LayerNorm/BatchNorm models it is reported). The first r where the test accuracy retained "
              "(Fig. 7A) falls below 90 % and the onsets along random directions (Fig. 8's setting, where the "
              "paper says 'near r ≈ 1') are reported in the detail.",
    latex=r"r_{\rm onset}\in[1,10]",
)
def onsets_between_1_and_10(budget: Budget) -> Result:
    r"""Along the gradient of every trained model (the r-sweeps' direction 0): the onset, the first grid r where
    the loss ratio reaches 2. (1) Count: the onset lies in [1, 10] for most architectures (at least half, and all
    but one when there are three or more); rival: the transitions cluster below r = 1. (2) Exact, on models without
    normalization layers: the onset equals the linearized loss's to one grid step in log10; rival: the
    transition sits at r = 1. (3) Categorical: the onset's decade (r < 1, 1 ≤ r ≤ 10, r > 10) there equals the
    decade of the linearized loss :math:`\ell(t)=\frac1N\sum_i(\log\sum_ke^{z_{ik}+a_{ik}t}-z_{iy_i}-a_{iy_i}t)` on the same grid
    (closed form from the JVP slopes; no step is taken); rivals: the loss doubles inside the disk (r < 1); only
    beyond r = 10."""
    sw = rsweeps(budget)
    r = sw["r"]
    archs = _arch_list(sw)
    grad = {a: S.onset(r, sw[f"{a}.ratio"][:1], 2.0)[0] for a in archs}
    lin = {a: S.onset(r, _linearized_ratio(sw, a)[:1], 2.0)[0] for a in archs}
    acc = {a: _acc_onset(sw, a)[0] for a in archs}
    on = np.array([grad[a] for a in archs])
    inside = (on >= 1) & (on <= 10)
    n = len(archs)
    required = n - 1 if n >= 3 else max(1, (n + 1) // 2)
    plain = [a for a in archs if a not in NORMALIZED]
    rand = {a: S.onset(r, sw[f"{a}.ratio"][1:], 2.0) for a in archs}
    rand11 = {a: S.onset(r, np.median(sw[f"{a}.ratio"][1:], axis=0, keepdims=True), 1.1)[0] for a in archs}
    rows = [f"{a}: loss 2× at r = {grad[a]:.2f} (linearized {lin[a]:.2f}), test accuracy below 90 % of its start at "
            f"r = {acc[a]:.2f}; random directions: 2× at r = {np.array2string(rand[a], precision=2)}, the median "
            f"random curve reaches 1.1 at r = {rand11[a]:.2f}" for a in archs]
    why = "onsets located on the sweep's geometric r grid; the linearized loss is evaluated on the same grid"
    step = float(np.log10(r[1] / r[0]))  # the grid's ratio in log10: 0.125 at the quick budget, 0.1 at the full
    return Result(
        checks=[
            Count("gradient-step onset (loss ratio 2) in [1, 10], per architecture", measured=inside,
                  predicted=np.ones(n, dtype=bool), required=required,
                  rivals={"the transitions cluster below r = 1": np.zeros(n, dtype=bool)},
                  why=f"'cluster' read as most: {required} of {n} architectures"),
            Exact("log10 of the gradient-step onset (loss ratio 2), architectures without normalization layers",
                  predicted=np.log10([lin[a] for a in plain]), measured=np.log10([grad[a] for a in plain]), atol=step,
                  rivals={"the transition sits at r = 1 (ρ_a is the onset)": np.zeros(len(plain))},
                  why="onsets are grid points of the sweep's geometric r grid: one grid step in log10 is its resolution"),
            Categorical("decade of the gradient-step onset, architectures without normalization layers",
                        measured=_decade(np.array([grad[a] for a in plain])),
                        predicted=_decade(np.array([lin[a] for a in plain])),
                        rivals={"the loss doubles inside the disk": "r < 1", "transitions only beyond r = 10": "r > 10"},
                        why=why),
        ],
        detail=("; ".join(rows) + "; " + ", ".join(
            f"{a} linearized decade {'matches' if _decade(np.array([lin[a]]))[0] == _decade(np.array([grad[a]]))[0] else 'misses'}"
            " (normalization layer, not asserted)" for a in archs if a in NORMALIZED)).rstrip("; "),
        arrays={"archs": np.array(archs), "onset_grad": on, "onset_lin": np.array([lin[a] for a in archs]),
                "onset_acc": np.array([acc[a] for a in archs])},
        seed=21,
    )


# ============================================================================= radius on trained models
# jet order on the trained models (one compiled series program per architecture; jet's cost grows like the order
# squared): 12 at the quick budget, 16 at the full one
SERIES_ORDER = {"quick": 12, "full": 16}
TRUNC_R = (0.5, 0.7, 1.6, 2.0)  # distances t = r·R (R the located singularity) for the truncation-error study
# the last layer of every model (hidden=(64,)): a direction there leaves the logits exactly linear in t
LAST_LAYER = {"mlp": ("W1", "b1"), "mlp_ln": ("W1", "b1"), "cnn_bn": ("W", "b"), "attention": ("W", "b"),
              "cnn": ("W", "b"), "linear": ("W", "b")}
# models whose continued partition function is entire in t (ReLU and linear maps only: polynomial logits), so
# the argument principle counts its zeros; normalization layers (square roots) and attention (a softmax inside)
# add branch points or poles
ENTIRE = ("linear", "mlp", "cnn")
DIR_KINDS = ("gradient", "random", "last layer")
ATTENTION_ACT = "gelu"  # the attention model's activation: the exact GELU of the paper's PyTorch models (entire)


def _last_layer_direction(raw: dict, arch: str) -> dict:
    """The unit direction of ``raw`` restricted to the last layer (zero on every other parameter)."""
    keep = {k: (np.asarray(v) if k in LAST_LAYER[arch] else np.zeros(np.shape(v))) for k, v in raw.items()}
    norm = math.sqrt(sum(float(np.sum(v**2)) for v in keep.values()))
    return {k: jnp.asarray(v / norm) for k, v in keep.items()}


def _nearest_zero_entire(model, params, v, x, rows, found: dict, steps: int = 16) -> dict:
    """For an entire F_i: the radius of its nearest zero by bisection on the argument principle's count (zeros
    inside |t| = s), between 0 and the modulus of a zero already found; then the secant method from the point of
    that circle where |F_i| is smallest (the nearest zero sits next to it)."""
    lo, hi = np.zeros(rows.size), np.abs(found["zero"]) * 1.001
    for _ in range(steps):
        mid = 0.5 * (lo + hi)
        inside = S.zeros_inside(model.apply, params, v, x, rows, mid)["count"] > 0
        lo, hi = np.where(inside, lo, mid), np.where(inside, mid, hi)
    phi = np.linspace(0, np.pi, 129)  # F is real on the real axis: zeros come in conjugate pairs, Im t >= 0 suffices
    t = hi[:, None] * np.exp(1j * phi)[None, :]
    margin = S.partition_margin(model.apply, params, v, x, np.repeat(rows, phi.size), t.ravel()).reshape(t.shape)
    start = t[np.arange(rows.size), np.argmin(margin, axis=1)]
    return S.ghost_zeros(model.apply, params, v, x, rows, start)


@experiment("softmax_radius.series_radius")
def series_radius(budget: Budget, *, seed: int = 41, archs: tuple | None = None) -> dict:
    """Taylor radius of the line loss of trained models along sampled directions, measured three ways.

    Per architecture and direction (the descent direction, random unit directions, and a random
    direction in the last layer only), the ``K`` bottleneck samples (smallest per-sample
    :math:`\\rho_{a,i}=\\pi/\\Delta a_i`): the ``jet`` Taylor coefficients of each sample's line loss
    (order :data:`SERIES_ORDER`), the radius from the Domb–Sykes pair extrapolation and the nearest
    conjugate pair from a Prony fit, the zero of :math:`F_i` located by Newton's method on the
    complex-continued model from the Prony start, the winding number of :math:`F_i` on circles just
    inside and outside it (entire :math:`F_i` only), the linearized radius :math:`\\rho^*_i` (certified
    zero of :math:`\\sum_ke^{z_k+a_kt}`), and the truncation error of the order-n Taylor polynomial at
    :math:`t=rR_i` against the continued loss; ``inner``: the distance of the nearest singularity of the
    continued logits themselves (inf for entire logits; for attention (exact GELU, entire) the nearest zero of an
    attention denominator, :func:`sims.softmax_radius.attention_singularities`, inf if none within 1.5 R, negative
    when it is a zero of an attention denominator; NaN for normalization layers, whose square-root branch points
    are not located); ``eps``: the paper's perturbation parameter :math:`\\varepsilon_i` (Prop. App. 1.1,
    :func:`theory.softmax_radius.perturbation_epsilon`) from the logit curvature
    :func:`sims.softmax_radius.logit_curvature`; ``kink``: for the ReLU MLP the distance along the step to the
    sample's first ReLU switch, :math:`\\min_j|h_j/\\dot h_j|` (inf elsewhere); ``inner_tanh``: for attention, as
    ``inner`` for the same weights with the tanh-approximate GELU.
    Keys ``<arch>.<field>``, arrays of shape (D, K[, ...]). ``archs`` overrides the budget's architectures.
    """
    archs = budget.pick(quick=("mlp",), full=("mlp", "mlp_ln", "cnn_bn", "attention")) if archs is None else tuple(archs)
    n_random = budget.pick(quick=1, full=3)
    K = budget.pick(quick=4, full=6)
    order = budget.pick(**SERIES_ORDER)
    data = S.digits()
    x, y = data["x_train"], data["y_train"]
    out = {"archs": np.array(archs), "trunc_r": np.array(TRUNC_R), "dir_kinds": np.array(DIR_KINDS)}
    for i, arch in enumerate(archs):
        model = S.make_model(arch, hidden=(64,))
        params = _params_of(trained(budget, arch=arch))
        # one draw of n_random + 1 directions (the last one restricted to the last layer); at the quick budget
        # this is the draw size of the r-sweeps, whose compiled program it reuses
        rand = S.random_directions(jax.random.fold_in(jax.random.key(seed), i), params, n_random + 1)
        rand = [{k: v[j] for k, v in rand.items()} for j in range(n_random + 1)]
        dirs = [S.gradient_direction(model, params, x, y)] + rand[:-1] + [_last_layer_direction(rand[-1], arch)]
        kinds = np.array([0] + [1] * n_random + [2])
        coupled = arch == "cnn_bn"  # batch statistics: every sample's logits depend on the whole batch
        fields = {f: [] for f in ("rho_a_set", "rows", "rho_a", "rho_star", "coeffs", "prony_re", "prony_im",
                                  "domb_sykes", "zero_re", "zero_im", "residual", "wind_in", "wind_out", "trunc_err",
                                  "inner", "inner_tanh", "eps", "kink")}
        for d, v in enumerate(dirs):
            z, a = (np.asarray(u) for u in S.directional_derivatives(model.apply, params, v, x))
            rho_i = np.asarray(T.lower_bound(a))
            rows = np.argsort(rho_i)[:K]
            xs, ys = (x, y) if coupled else (x[rows], y[rows])
            local = rows if coupled else np.arange(K)
            coeffs = np.asarray(S.line_taylor(model.apply, params, v, xs, ys, order))[local]
            c2 = np.asarray(S.logit_curvature(model.apply, params, v, xs))[local]
            eps = np.asarray(T.perturbation_epsilon(z[rows], a[rows], c2))
            if arch == "mlp":  # the first ReLU switch along the step: h + t·ḣ = 0 for some hidden unit
                h = x[rows] @ np.asarray(params["W0"]) + np.asarray(params["b0"])
                hd = x[rows] @ np.asarray(v["W0"]) + np.asarray(v["b0"])
                with np.errstate(divide="ignore", invalid="ignore"):
                    kink = np.nan_to_num(np.min(np.abs(h) / np.abs(hd), axis=1), nan=np.inf)
            else:
                kink = np.full(K, np.inf)
            pr = np.array([T.prony_pair(c) for c in coeffs])
            ds = np.array([T.domb_sykes_pair(c) for c in coeffs])
            # three starts per sample: the linearized loss's nearest zero, the series' Prony pair and i·ρ_a; the
            # located zero is the nearest converged one (the argument principle then checks that it is the nearest)
            lin = np.array([T.radius_details(z[r_], a[r_])["zero"] for r_ in rows])
            starts = [lin, np.where(np.isfinite(pr), pr, lin), 1j * rho_i[rows]]
            found = [S.ghost_zeros(model.apply, params, v, xs, local, st) for st in starts]
            zs = np.stack([f["zero"] for f in found])
            res = np.stack([f["residual"] for f in found])
            best = np.argmin(np.where(res < 1e-10, np.abs(zs), np.inf), axis=0)
            g = {"zero": zs[best, np.arange(K)], "residual": res[best, np.arange(K)]}
            if arch in ENTIRE or kinds[d] == 2:
                g = _nearest_zero_entire(model, params, v, xs, local, g)
            R = np.abs(g["zero"])
            if arch in ENTIRE or kinds[d] == 2:
                w_in = S.zeros_inside(model.apply, params, v, xs, local, 0.97 * R)["count"]
                w_out = S.zeros_inside(model.apply, params, v, xs, local, 1.03 * R)["count"]
            else:
                w_in = w_out = np.full(K, -1)
            # singularities of the continued logits themselves (the loss's radius is at most their distance): none
            # for entire logits; for attention the nearest zero of an attention denominator (the exact GELU is
            # entire), searched out to 1.5 R; not located for normalization layers (NaN)
            inner_tanh = np.full(K, np.nan)
            if arch in ENTIRE or kinds[d] == 2:
                inner = np.full(K, np.inf)
            elif arch == "attention":
                sing = S.attention_singularities(params, v, xs, local, 1.5 * R, act=ATTENTION_ACT)
                inner = np.where(sing["denominator"], -sing["radius"], sing["radius"])  # < 0: a denominator zero
                # the same weights with the tanh-approximate GELU: its poles (App. 2.4: it "reintroduces tanh poles")
                tanh = S.attention_singularities(params, v, xs, local, 1.5 * R, act="gelu_tanh")
                inner_tanh = np.where(tanh["denominator"], -tanh["radius"], tanh["radius"])
            else:
                inner = np.full(K, np.nan)
            t = np.array(TRUNC_R)[None, :] * R[:, None]
            loss_t = S.continued_line_loss(model.apply, params, v, xs, ys, np.repeat(local, len(TRUNC_R)), t.ravel())
            err = np.stack([T.taylor_truncation_error(coeffs[j], t[j], loss_t.reshape(K, -1)[j]) for j in range(K)])
            for f, val in (("rho_a_set", rho_i.min()), ("rows", rows), ("rho_a", rho_i[rows]),
                           ("rho_star", np.asarray(T.radius(z[rows], a[rows]))), ("coeffs", coeffs),
                           ("prony_re", pr.real), ("prony_im", pr.imag), ("domb_sykes", ds),
                           ("zero_re", g["zero"].real), ("zero_im", g["zero"].imag), ("residual", g["residual"]),
                           ("wind_in", w_in), ("wind_out", w_out), ("trunc_err", err), ("inner", inner), ("eps", eps),
                           ("kink", kink), ("inner_tanh", inner_tanh)):
                fields[f].append(val)
        for f, vals in fields.items():
            out[f"{arch}.{f}"] = np.stack([np.asarray(u) for u in vals])
        out[f"{arch}.kind"] = kinds
    return out


def _series_view(sr: dict) -> dict:
    """Flattened per-sample arrays of the series-radius experiment over architectures and directions."""
    keys = ("rho_a", "rho_star", "domb_sykes", "residual", "wind_in", "wind_out", "inner", "inner_tanh", "eps", "kink")
    out = {k: [] for k in keys + ("arch", "kind", "R", "R_loss", "prony", "trunc_err", "zero")}
    for arch in [str(a) for a in np.asarray(sr["archs"])]:
        D, K = sr[f"{arch}.rho_a"].shape
        for k in keys:
            out[k].append(sr[f"{arch}.{k}"].ravel())
        zero = sr[f"{arch}.zero_re"] + 1j * sr[f"{arch}.zero_im"]
        out["zero"].append(zero.ravel())
        out["R"].append(np.abs(zero).ravel())
        out["R_loss"].append(np.fmin(np.abs(zero), np.abs(sr[f"{arch}.inner"])).ravel())
        out["prony"].append(np.abs(sr[f"{arch}.prony_re"] + 1j * sr[f"{arch}.prony_im"]).ravel())
        out["arch"].append(np.full(D * K, arch))
        out["kind"].append(np.repeat(sr[f"{arch}.kind"], K))
        out["trunc_err"].append(sr[f"{arch}.trunc_err"].reshape(D * K, *sr[f"{arch}.trunc_err"].shape[2:]))
    out = {k: np.concatenate(v) for k, v in out.items()}
    # series whose located zero is certified to be the nearest singularity: the continued logits are entire (ReLU
    # networks without normalization, every last-layer direction), so the argument principle counts the zeros of F_i
    out["entire"] = np.isin(out["arch"], ENTIRE) | (out["kind"] == 2)
    return out


RESOLVED = 0.02  # a series counts as resolved when its Prony radius moves less than this between fit windows


def _prony_windows(coeffs: np.ndarray) -> np.ndarray:
    """Relative change of the Prony radius between the fit windows n >= N/2 and n >= N/2 - 2 per series (inf when a
    window finds no conjugate pair): the extrapolation's own error estimate, computed from the series alone."""
    out = []
    N = coeffs.shape[-1] - 1
    for c in coeffs.reshape(-1, N + 1):
        a, b = T.prony_radius(c), T.prony_radius(c, N // 2 - 2)
        out.append(abs(a / b - 1) if math.isfinite(a) and math.isfinite(b) else math.inf)
    return np.array(out)


PROP_A11_QUOTE = ("Proposition Appendix 1.1 (Linearization quality). Let v be the unit step direction, Δa = maxi ai − "
                  "mini ai the logitderivative spread, ρa = π/Δa the conservative linearized bound, and ρtrue the true "
                  "convergence radius. If the logit curvature C = maxi ∥ d 2 zi /d θ2 ∥ along v satisfies "
                  "ε = Cπ2 /( 2Δ2a · mini wi ) ≪ 1, then ρtrue ≥ ρa ( 1 − ε) .")


@claim(
    "sao2026.trained_radius_at_least_rho_a", paper=PAPER, provenance="quoted", kind="bound",
    source="Appendix 1.1.2, Proposition Appendix 1.1; §4 introduction (build of 2026-03-26)", quote=PROP_A11_QUOTE,
    where=f"{ARXIV}, Appendix 1.1.2, Proposition Appendix 1.1",
    statement="Prop. App. 1.1: if the perturbation parameter ε = Cπ²/(2Δa²·min_i w_i) (C the logit curvature along "
              "v) is small, the true radius is at least ρ_a(1 − ε). steplab computes ε per bottleneck sample of the "
              "trained models (C = max_k |z_k''|, exact for the one-hidden-layer ReLU MLP, whose continued logits are "
              "quadratic in t; w the softmax weights) and tests the bound on every sample with entire continued "
              "logits and ε < 1. Along descent and random directions ε ≫ 1 on every sample, where the proposition "
              "says nothing; there steplab reports its own finding: the located radius R is still ≥ ρ_a on every "
              "sample with entire logits, and lies between ρ_a and the linearized ρ* or somewhat below ρ* (for a ReLU "
              "net R is the radius of the continued active piece, which the paper's App. 1.3.1 does not treat). Not "
              "bounded: the attention model, whose attention denominators can vanish at complex steps, and "
              "normalization layers' square-root branch points (reported).",
    latex=r"R_i\ge\rho_{a,i}(1-\varepsilon_i)\ (\varepsilon_i<1),\quad"
          r"\varepsilon_i=\frac{C_i\pi^2}{2\Delta a_i^2\min_kw_{ik}}",
)
def trained_radius_at_least_rho_a(budget: Budget) -> Result:
    r"""For every bottleneck sample (smallest :math:`\rho_{a,i}`) of every direction along which the continued
    logits are entire (ReLU MLP; last-layer directions of every model): :math:`R_i` = the modulus of the zero of
    :math:`F_i` located by the secant method on the complex-continued model and certified nearest by the argument
    principle (the next claim), which is then the radius of the line loss; :math:`\varepsilon_i` from
    :func:`theory.softmax_radius.perturbation_epsilon` with the logit curvature by nested JVPs.
    (1) Bound, the proposition where it applies: :math:`R_i/\rho_{a,i}-(1-\varepsilon_i)\ge0` over the samples with
    :math:`\varepsilon_i<1`. (2) Count, steplab's finding beyond it: :math:`R_i\ge\rho_{a,i}` on every sample with
    entire logits, :math:`\varepsilon_i` whatever it is; rival: the series' radius cannot exceed the first ReLU
    switch along the step (the paper's per-neuron ReLU radius :math:`|h_j|/|\dot h_j|`, App. 2), which predicts
    :math:`R_i\ge\rho_{a,i}` only where that switch lies beyond :math:`\rho_{a,i}`. (3) Bound: the data-set radius
    over the data-set :math:`\rho_a`, per direction with entire logits, >= 1. Models with other singularities are
    reported in the detail, not bounded: for attention the loss's radius is at most
    :math:`\min(R_i,\rho_{\rm inner})` with :math:`\rho_{\rm inner}` the nearest zero of an attention denominator;
    for normalization layers :math:`R_i` is only an upper bound on it (square-root branch points)."""
    sr = series_radius(budget)
    v = _series_view(sr)
    ent = v["entire"]
    eps = v["eps"]
    small = ent & (eps < 1)
    q = (v["R"] - v["rho_a"]) / (v["rho_star"] - v["rho_a"])
    ratio = v["R_loss"] / v["rho_a"]
    rows = []
    archs = [str(a) for a in np.asarray(sr["archs"])]
    for arch in archs:
        sel = (v["arch"] == arch) & (v["kind"] < 2)
        row = (f"{arch}{'' if arch in ENTIRE else ' (not bounded)'}: ε ∈ [{eps[sel].min():.3g}, {eps[sel].max():.3g}], "
               f"R/ρ_a ∈ [{ratio[sel].min():.3f}, {ratio[sel].max():.2f}], R/ρ* ∈ "
               f"[{(v['R_loss'] / v['rho_star'])[sel].min():.3f}, {(v['R_loss'] / v['rho_star'])[sel].max():.3f}]")
        if arch == "attention":
            inner = v["inner"][sel]
            near = np.abs(inner) < v["R"][sel]
            row += (f" with R = min(|zero of F_i|, ρ_inner): an attention denominator vanishes nearer than the zero of "
                    f"F_i in {int(near.sum())}/{near.size} samples (ρ_inner/R down to "
                    f"{np.min(np.abs(inner) / v['R'][sel]):.2f}); R < ρ_a in {int(np.sum(ratio[sel] < 1))}")
            tanh = v["inner_tanh"][sel]
            poles = np.isfinite(tanh) & (tanh > 0)
            row += (f". The same weights with the tanh-approximate GELU (not the paper's models; App. 2.4 predicts it "
                    f"'reintroduces tanh poles'): a GELU pole is the nearest inner singularity within 1.5 R in "
                    f"{int(poles.sum())}/{tanh.size} samples, nearer than R in {int(np.sum(poles & (tanh < v['R'][sel])))} "
                    f"and nearer than ρ_a in {int(np.sum(poles & (tanh < v['rho_a'][sel])))}")
        rows.append(row)
    ent_dir = np.concatenate([np.isin(a, ENTIRE) | (sr[f"{a}.kind"] == 2) for a in archs])
    set_ratio = np.concatenate([np.min(np.abs(sr[f"{a}.zero_re"] + 1j * sr[f"{a}.zero_im"]), axis=1) / sr[f"{a}.rho_a_set"]
                                for a in archs])
    kink_beyond = v["kink"][ent] >= v["rho_a"][ent]
    # the located zeros are accurate to the secant's convergence (|F|/Σ|terms| ~ 1e-16): relative error ~1e-12
    return Result(
        checks=[
            Bound("R/ρ_a − (1 − ε) over samples with entire logits and ε < 1 (Prop. App. 1.1)",
                  measured=(v["R"] / v["rho_a"] - (1 - eps))[small], bound=0.0, side=">=", slack=1e-9,
                  why="located zeros converge to |F|/Σ|terms| ~ 1e-16, a relative error ~1e-12 in R"),
            Count("R_i ≥ ρ_a,i, every sample with entire logits (ε whatever it is: steplab's finding)",
                  measured=v["R"][ent] >= v["rho_a"][ent] * (1 - 1e-9), predicted=np.ones(int(ent.sum()), dtype=bool),
                  rivals={"the series' radius cannot exceed the first ReLU switch along the step (|h_j|/|ḣ_j|)":
                          kink_beyond},
                  why="R to ~1e-12 relative; the comparison allows 1e-9"),
            Bound("data-set radius / data-set ρ_a = min_i R_i / min_i ρ_a,i, per direction with entire logits",
                  measured=set_ratio[ent_dir], bound=1.0, side=">=", slack=1e-9, why="as above"),
        ],
        detail=(f"ε < 1 on {int(small.sum())}/{int(ent.sum())} samples with entire logits (the last-layer directions, "
                f"ε = 0; along descent and random directions ε ≥ {eps[ent & (v['kind'] < 2)].min():.3g}); "
                f"q = (R − ρ_a)/(ρ* − ρ_a) ∈ [{q[ent].min():.3f}, {q[ent].max():.3f}] (0: R at ρ_a, 1: at ρ*); the first "
                f"ReLU switch lies inside ρ_a on {int(np.sum(~kink_beyond))}/{kink_beyond.size} of those samples; "
                + "; ".join(rows) + f"; data-set R/ρ_a per direction with entire logits ∈ [{set_ratio[ent_dir].min():.3f}, "
                f"{set_ratio[ent_dir].max():.2f}]"),
        arrays={"q": q, "ratio_a": ratio, "ratio_star": v["R_loss"] / v["rho_star"], "kind": v["kind"], "arch": v["arch"],
                "entire": ent, "inner": v["inner"], "inner_tanh": v["inner_tanh"], "eps": eps},
        seed=41,
    )


@claim(
    "sao2026.series_radius_is_located_ghost", paper=PAPER, provenance="quoted", kind="rate",
    source="§4.1, Definition 4.1 and Proposition 4.2, eq. (9)",
    quote="Definition 4.1 (Exact Convergence Radius). For a loss function f at parameters θ with unit update direction "
          "v, the exact convergence radius is the convergence radius of ℓ( t) = f (θ + tv) at t = 0. By the "
          "Cauchy–Hadamard theorem, this equals the distance from the origin to the nearest singularity of ℓ’s "
          "analytic continuation to C.",
    where=f"{ARXIV}, §4.1, Definition 4.1",
    statement="Along a step direction of a trained model whose continued logits are entire (ReLU MLP; any model "
              "stepped in its last layer), the radius of convergence of the line loss's Taylor series is the "
              "distance to the nearest complex zero of the sample's partition function F(t) = Σ_k exp z_k(t): "
              "extrapolated from the Taylor coefficients it equals the zero located in the complex step plane; for "
              "a step in the last layer only it equals the linearized ρ*. (The paper states the partition-zero radius "
              "for the linearized logits, Prop. 4.2, and in general the nearest singularity of the continuation, "
              "Def. 4.1; that the nonlinear loss's radius is a zero of Σ_k exp z_k(t) needs entire logits, steplab's "
              "added condition. Where the logits have singularities of their own -- zeros of the attention "
              "denominators, square roots in normalization layers -- a nearer one can set the radius instead.)",
    latex=r"\limsup_n|c_n|^{-1/n}=\min\{|t|:F_i(t)=0\}",
    coarse_reason="the root test's predicted slope is the -1/n of a logarithmic branch point, about -0.1: a relative "
                  "change of a near-zero slope measures nothing; the check's power is the rival's distance in SE "
                  "(tens of SE), and the band is set by the Taylor order jet can trace through a trained model (12-16)",
)
def series_radius_is_located_ghost(budget: Budget) -> Result:
    r"""The singularity is located in the complex step plane: the zero of :math:`F_i` nearest to 0, found
    by the secant method on the complex-continued forward pass from three starts (the linearized zero,
    the series' Prony pair, :math:`i\rho_{a,i}`); for an entire :math:`F_i` (ReLU networks without
    normalization, and every last-layer direction) its modulus is refined by bisection on the argument
    principle's zero count, and the count is checked: none inside :math:`0.97R_i`, one or more inside
    :math:`1.03R_i`. The series (entire logits only, where :math:`R_i` is certified to be the nearest
    singularity): the root test on the ``jet`` coefficients normalized by the located radius,
    :math:`\log|c_nR_i^n|`, must have the slope of :math:`-\log n` in n (rival: the series converges only out
    to :math:`\rho_{a,i}`, slope :math:`\log(R_i/\rho_{a,i})` more). Why :math:`-\log n`: the line loss of one
    sample is :math:`-z_y(t)+\log F_i(t)`; with simple zeros at :math:`t_0=Re^{i\theta}` and :math:`\bar t_0`
    (F is real on the real axis) and every other singularity farther,
    :math:`\log F_i=\log(1-t/t_0)+\log(1-t/\bar t_0)+` (analytic in a larger disc), so
    :math:`c_n=-2R^{-n}\cos(n\theta)/n+O(R_2^{-n})`: the factor :math:`1/n` is exact and the cosine
    oscillates without a trend (each sample's series is tested on its own; the batch mean plays no part). For last-layer directions the located
    radius equals the certified :math:`\rho^*_i` of the linearized loss (rival: :math:`\rho_{a,i}`).
    Prony and Domb–Sykes pair extrapolations at that order are reported beside (they resolve only an
    isolated nearest pair)."""
    sr = series_radius(budget)
    v = _series_view(sr)
    spread = np.concatenate([_prony_windows(sr[f"{a}.coeffs"]) for a in [str(a) for a in np.asarray(sr["archs"])]])
    ok = spread < RESOLVED
    entire = v["entire"]
    certified = (v["wind_in"] == 0) & (v["wind_out"] >= 1)
    last = v["kind"] == 2
    ds_err = np.abs(v["domb_sykes"] / v["R"] - 1)
    N = budget.pick(**SERIES_ORDER)
    n = np.arange(N // 2, N + 1)
    coeffs = np.concatenate([sr[f"{a}.coeffs"].reshape(-1, N + 1) for a in [str(a) for a in np.asarray(sr["archs"])]])
    lc = np.log(np.abs(coeffs[:, n])) + n[None, :] * np.log(v["R"])[:, None]
    yy = lc - lc.mean(axis=1, keepdims=True)
    # the root test only where the located zero is certified to be the nearest singularity (entire logits): elsewhere
    # a nearer singularity of the logits (a GELU pole, a square-root branch point) sets the radius, and the series
    # grows faster than R^-n (reported in the detail, not tested)
    y = yy[entire].ravel()
    x = np.tile(n - n.mean(), int(entire.sum())).astype(float)
    slope, se = fit_slope(x, y, log=False)
    other = ""
    if (~entire).any():
        s_o, se_o = fit_slope(np.tile(n - n.mean(), int((~entire).sum())).astype(float), yy[~entire].ravel(), log=False)
        other = (f"; not certified (normalization layers, attention; {int((~entire).sum())} series): slope "
                 f"{s_o:.3f} ± {se_o:.3f}, the series diverge faster than the located zero allows")
    shift = float(np.mean(np.log(v["R"] / v["rho_a"])[entire]))
    # a logarithmic branch point gives |c_n| ∝ R^-n/n: over the window the 1/n factor contributes the least-squares
    # slope of -log n (about -1/n), part of the prediction rather than of the tolerance
    lead = fit_slope(n.astype(float), -np.log(n), log=False)[0]
    return Result(
        checks=[
            Rate(f"root test: slope in n of log|c_n R_i^n| (jet coefficients, n = {N // 2}..{N}, series with entire "
                 "logits pooled)", x=x, y=y,
                 log=False, predicted=lead,
                 rivals={"the series' radius is ρ_a,i (slope log(R/ρ_a), averaged)": shift + lead},
                 why="z·SE of the pooled fit; |c_n| ∝ R^-n cos(nθ+φ)/n: the 1/n factor is in the prediction (slope of "
                     "-log n over the window), the cosine is noise"),
            Bound("argument principle: zeros of F_i inside |t| = 0.97 R_i (entire F_i), max over samples",
                  measured=v["wind_in"][entire], bound=0.0, side="<=",
                  why="winding numbers on 256 points; an integer count, exact while the phase steps stay below π"),
            Bound("argument principle: zeros of F_i inside |t| = 1.03 R_i (entire F_i), min over samples",
                  measured=v["wind_out"][entire], bound=1.0, side=">=", why="as above"),
            Exact("last-layer directions: located radius vs the certified ρ* of the linearized loss",
                  predicted=v["rho_star"][last], measured=v["R"][last], rtol=1e-8,
                  rivals={"the radius is ρ_a,i": v["rho_a"][last]},
                  why="logits exactly linear in t: both are the same zero, each converged to ~1e-12"),
        ],
        detail=(f"root-test slope {slope:.3f} ± {se:.3f} over {int(entire.sum())} series with entire logits (predicted "
                f"{lead:.3f}, rival {shift + lead:.2f}){other}; {int(ok.sum())}/{ok.size} series resolved at order {N} by a Prony fit (stable to {RESOLVED:.0%} between fit "
                f"windows; unresolved: {', '.join(sorted(set(f'{a}/{DIR_KINDS[k]}' for a, k in zip(v['arch'][~ok], v['kind'][~ok])))) or 'none'}"
                f" -- several ghost pairs at similar distances); resolved Prony radii within "
                f"{np.max(np.abs(v['prony'][ok] / v['R'][ok] - 1), initial=0.0):.1e} of the located zero; Domb–Sykes pair extrapolation at "
                f"order {N} within median {np.nanmedian(ds_err):.1e}; residual |F|/Σ|terms| ≤ {v['residual'].max():.0e}; "
                f"{int(certified[entire].sum())}/{int(entire.sum())} located zeros certified nearest by winding numbers"),
        arrays={"R": v["R"], "prony": v["prony"], "domb_sykes": v["domb_sykes"], "rho_a": v["rho_a"], "resolved": ok,
                "rho_star": v["rho_star"], "zero_re": v["zero"].real, "zero_im": v["zero"].imag, "kind": v["kind"]},
        seed=41,
    )


@claim(
    "sao2026.truncation_error_rate", paper=PAPER, provenance="quoted", kind="rate",
    source="§5.1 (build of 2026-03-26) and §2.3.3",
    statement="The error of the order-n Taylor polynomial of the line loss at distance t scales like (t/ρ)^n: it "
              "shrinks with n inside the radius (the paper's O(r^n)) and grows with n past it, on trained nonlinear "
              "models. (The paper says only that past the radius adding terms 'need not improve the approximation "
              "and can make it worse'; the growth rate (t/ρ)^n there is steplab's two-sided strengthening.)",
    quote="Inside the disk (r < 1), the Cauchy integral formula bounds every Taylor coefficient: | cn | ≤ M /ρna where "
          "M = sup | t |=ρa |ℓ( t)| , so the n-th order truncation error decays as O ( r n ) .",
    where=f"{ARXIV}, §5.1 (build of 2026-03-26)",
    latex=r"|\ell(t)-P_n(t)|\propto(t/\rho)^n",
)
def truncation_error_rate(budget: Budget) -> Result:
    r"""For every bottleneck sample whose located zero is certified nearest (entire logits: ReLU MLP, last-layer
    directions), at :math:`t=rR_i` (:math:`R_i` the located radius) for r in
    0.5, 0.7, 1.6, 2: the error of the order-n Taylor polynomial (``jet`` coefficients) against the
    continued loss evaluated directly, for n = N/2..N (N the series order). The slope of :math:`\log e_n` in n (each
    sample's curve centred, all samples pooled) must be :math:`\log r` plus the slope of :math:`-\log n` over
    the window (the remainder of a logarithmic branch point is :math:`\propto r^n/n`). Rivals: the radius is
    :math:`\rho_{a,i}` (slope :math:`\log(rR_i/\rho_{a,i})`, averaged); the error does not depend on the
    order (slope 0)."""
    sr = series_radius(budget)
    v = _series_view(sr)
    # only series whose located zero is certified to be the nearest singularity (entire logits); see the root test
    ent = v["entire"]
    err = v["trunc_err"][ent]  # (S, len(TRUNC_R), N + 1)
    N = budget.pick(**SERIES_ORDER)
    n = np.arange(N // 2, N + 1)
    shift = float(np.mean(np.log(v["R"] / v["rho_a"])[ent]))
    # the remainder of a series with a logarithmic branch point at R behaves like (t/R)^n/n on both sides of the
    # radius: over the window the 1/n factor adds the least-squares slope of -log n (about -1/n) to log r
    lead = fit_slope(n.astype(float), -np.log(n), log=False)[0]
    checks, rows = [], []
    for j, r in enumerate(TRUNC_R):
        le = np.log(err[:, j, n])
        y = (le - le.mean(axis=1, keepdims=True)).ravel()
        x = np.tile(n - n.mean(), err.shape[0]).astype(float)
        slope, se = fit_slope(x, y, log=False)
        rows.append(f"r = {r:g}: slope {slope:.3f} ± {se:.3f} (log r − 1/n: {math.log(r) + lead:.3f})")
        checks.append(Rate(f"slope of log|ℓ(t) − P_n(t)| in n at t = {r:g}·R", x=x, y=y, log=False,
                           predicted=math.log(r) + lead,
                           rivals={"the radius is ρ_a (slope log(r R/ρ_a))": math.log(r) + shift + lead,
                                   "the error does not depend on the order (slope 0)": 0.0},
                           why="z·SE of the pooled fit; the prediction includes the 1/n factor of a logarithmic branch "
                               "point (slope of -log n over the window); the oscillation of a conjugate pair (cos nθ) is "
                               "noise about the trend, and the next singularity's share decays like (R/R_2)^n"))
    if (~ent).any():
        other = []
        for j in range(len(TRUNC_R)):
            le = np.log(v["trunc_err"][~ent][:, j, n])
            other.append(fit_slope(np.tile(n - n.mean(), int((~ent).sum())).astype(float),
                                   (le - le.mean(axis=1, keepdims=True)).ravel(), log=False)[0])
        rows.append(f"{int((~ent).sum())} series not certified (normalization layers, attention): slopes "
                    + ", ".join(f"{u:.3f}" for u in other) + " at the same r")
    return Result(checks=checks, detail=f"{int(ent.sum())} series with entire logits: " + "; ".join(rows)
                  + f"; mean log(R/ρ_a) = {shift:.2f}",
                  arrays={"trunc_r": np.array(TRUNC_R), "orders": np.arange(N + 1), "trunc_err": v["trunc_err"],
                          "entire": ent},
                  seed=41)


# ============================================================================= temperature
TEMP_QUOTE = ("Temperature rescales logits as z/T , so the predicted radius rescales as ρa ( T ) = πT /Δa . Figure 9 tests "
              "this prediction directly. In raw τ coordinates (panel A), collapse onsets vary widely across temperatures "
              "(collapse std = 0.992). After theory normalization by T (panel B), those onsets collapse to a common "
              "transition (std = 0.164, a 6× reduction).")
TEMPS = {"quick": [0.125, 0.5, 2.0, 8.0], "full": [0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0]}


@experiment("softmax_radius.temperature")
def temperature(budget: Budget, *, seed: int = 31) -> dict:
    """The temperature study: an MLP 64-128-128-10 with the exact GELU (the authors' ``F.gelu``) trained by Adam on
    logits z/T per (T, seed) (lr 0.01, 120 steps, batch 256 at the full budget: the authors' code), then one step
    along the descent direction at t = r ρ_a(T); the collapse onset is where the loss first doubles (the 2× rule of
    the authors' code; the paper's text names none)."""
    temps = budget.pick(**TEMPS)
    seeds = [seed + i for i in range(budget.pick(quick=3, full=5))]
    out = S.temperature_runs(S.digits(), temperatures=temps, seeds=seeds, r=np.geomspace(0.05, 50, budget.pick(quick=31, full=61)),
                             steps=budget.pick(quick=60, full=120), batch=256, threshold=2.0)  # the paper's batch
    return {k: out[k] for k in ("temperature", "seed", "rho_a", "onset_r", "onset_distance", "diverged",
                                "diverged_step", "ratio")}


def _spreads(temp: np.ndarray, od: np.ndarray, orr: np.ndarray) -> dict:
    """The spread of the onsets in raw distance and in r under four readings of the paper's undefined 'collapse
    std': the standard deviation of the raw values or of their log10, over all (T, seed) runs or over the
    per-temperature medians. Returns {reading: (sd raw distance, sd r)}."""
    meds = [(np.median(od[temp == t]), np.median(orr[temp == t])) for t in np.unique(temp)]
    md, mr = np.array(meds).T
    return {"sd of values, runs": (np.std(od), np.std(orr)), "sd of log10, runs": (np.std(np.log10(od)), np.std(np.log10(orr))),
            "sd of values, T medians": (np.std(md), np.std(mr)),
            "sd of log10, T medians": (np.std(np.log10(md)), np.std(np.log10(mr)))}


@claim(
    "sao2026.temperature_onset_spread", paper=PAPER, provenance="quoted", kind="rate",
    source="§6.4, Figure 9; abstract", quote=TEMP_QUOTE, where=f"{ARXIV}, §6.4",
    statement="Temperature scaling z/T moves ρ_a(T) = πT/Δa and the collapse onset moves with it: the spread of "
              "onsets across T is much smaller in r = t/ρ_a than in the raw distance t (the paper: 'collapse std' "
              "0.992 → 0.164, 'a 6× reduction'). The onset is the first r where the loss doubles (the 2× rule of the "
              "authors' code, experiments/tempfingerprint/run.py; the paper's text defines none).",
    latex=r"t_{\rm onset}\propto\rho_a(T)",
    coarse_reason="the slope's band is set by the number of (T, seed) runs, whose trained ρ_a(T) span less than a "
                  "decade (training compensates most of the 1/T); a sharper slope needs more runs, not a finer rule",
)
def temperature_onset_spread(budget: Budget) -> Result:
    r"""Over (T, seed) runs that did not diverge: the log-log slope of the onset distance against
    :math:`\rho_a(T)` is 1 (the onset follows the radius; rival: 0, the raw distance is the scale); the spread of
    :math:`\log_{10}` onsets shrinks from raw distance to r (factor >= 1; the paper's '6× reduction', 0.992/0.164,
    is its value for that factor); the raw spread equals :math:`\sqrt{\mathrm{sd}^2\log\rho_a+\mathrm{sd}^2\log r_{\rm
    onset}}` (onset r independent of the radius; rival: 0, the distance does not move with T). The paper's 0.992 and
    0.164 themselves are not compared: it does not say whether its std is of raw or log values, nor over what; the
    detail gives the spreads under four readings."""
    out = temperature(budget)
    ok = ~out["diverged"] & np.isfinite(out["onset_r"])
    od, orr, rho = out["onset_distance"][ok], out["onset_r"][ok], out["rho_a"][ok]
    sd_d, sd_r, sd_rho = (float(np.std(np.log10(u))) for u in (od, orr, rho))
    # if the onset follows the radius (t = r·ρ_a with r independent of ρ_a) the raw spread is sqrt(sd_ρ² + sd_r²);
    # its standard error from a bootstrap over runs (the comparison's, both sides resampled together)
    rng = np.random.default_rng(31)
    boot = []
    for _ in range(400):
        k = rng.integers(0, od.size, od.size)
        boot.append(np.std(np.log10(od[k])) - math.hypot(np.std(np.log10(rho[k])), np.std(np.log10(orr[k]))))
    se = max(float(np.std(boot)), 1e-6)
    indep = math.hypot(sd_rho, sd_r)
    readings = _spreads(out["temperature"][ok], od, orr)
    temps = sorted(set(out["temperature"].tolist()))
    # the onset is located on a geometric grid of ratio g = 10^(3/30) or 10^(3/60): a quantization of ±(log g)/2 in each
    # log onset, noise rather than bias, so the slope band is z·SE alone
    return Result(
        checks=[
            Rate("slope of log onset distance vs log ρ_a(T)", x=rho, y=od, predicted=1.0,
                 rivals={"0: the onset distance does not follow ρ_a (raw distance is the scale)": 0.0},
                 why="z·SE over finite runs; grid quantization is noise, not bias"),
            Bound("spread reduction sd log10 t_onset / sd log10 r_onset", measured=sd_d / sd_r, bound=1.0, side=">=",
                  paper=0.992 / 0.164, quote=TEMP_QUOTE, where=f"{ARXIV}, §6.4",
                  why="onset distance = r_onset·ρ_a: a spread in ρ_a adds to the raw spread; the paper's '6× "
                      "reduction' (0.992/0.164) is a ratio of spreads, the one number whose meaning does not hang on "
                      "the std's undefined unit"),
            Exact("sd log10 of the raw onset distance over (T, seed)", predicted=indep, measured=sd_d, atol=4 * se,
                  rivals={"the onset distance does not move with T (raw spread 0)": 0.0},
                  why=f"4 SE; prediction sqrt(sd²log10 ρ_a + sd²log10 r_onset) (onset r independent of ρ_a); SE {se:.3f} "
                      "by a 400-fold bootstrap over runs of the difference"),
        ],
        detail=(f"{int(ok.sum())} finite runs ({int(out['diverged'].sum())} diverged); sd log10 ρ_a {sd_rho:.3f}; sd log10 onset: "
                f"distance {sd_d:.3f} → r {sd_r:.3f} (×{sd_d / sd_r:.2f}; paper 0.992 → 0.164, ×6.0); ρ_a spans "
                f"{rho.min():.3f}–{rho.max():.3f} over T ∈ {temps}: training compensates most of the 1/T. The paper's std "
                "unit is undefined (raw or log values; over temperatures or temperatures × seeds); spread distance → r "
                "under each reading: " + "; ".join(f"{k}: {a:.3g} → {b:.3g} (×{a / b:.2f})" for k, (a, b) in readings.items())
                + ". The grids differ: the authors' code steps a raw-τ grid geomspace(1e-4, max(4ρ_a(T), 2), 80) per "
                "run, at T ∈ {0.25, 0.5, 1, 2, 4, 8} (Fig. 9's caption lists {0.25, …, 64}), 5 seeds, and takes the "
                f"first loss-ratio crossing of 2 (first_crossing(..., 2.0)); steplab steps an r grid geomspace(0.05, 50) at "
                f"T ∈ {temps}, the same 2× rule"),
        arrays={"temperature": out["temperature"][ok], "onset_distance": od, "onset_r": orr, "rho_a": rho},
        seed=31,
    )


# ============================================================================= LR spike
@experiment("softmax_radius.lr_spike")
def lr_spike(budget: Budget) -> dict:
    """Adam with a one-step learning-rate spike (×10,000) for plain Adam, clipping and the controller,
    per (model, base eta) and seed. Keys ``<model>_<eta>.<field>``; ``runs`` lists the tags."""
    runs = budget.pick(quick=[("mlp", 1e-3)],
                       # Table 1's three architectures, plus the plain MLP of the paper's spike study. The attention
                       # model needs eta = 1e-2 to have learned anything by the spike (at 3e-3 it sits near 30 % test
                       # accuracy at step 50, so "keeping" accuracy would test nothing)
                       full=[("mlp", 1e-3), ("attention", 1e-2), ("mlp_ln", 3e-3), ("cnn_bn", 1e-2)])
    seeds = list(range(budget.pick(quick=2, full=3)))
    steps, spike_step = budget.pick(quick=(60, 20), full=(200, 50))
    data = S.digits()
    out = {"spike_step": spike_step, "factor": 1e4}
    tags = []
    for name, eta in runs:
        res = S.spike_runs(S.make_model(name, hidden=(128,)), data, seeds=seeds, eta=eta, factor=1e4, steps=steps,
                           spike_step=spike_step)
        tag = f"{name}_{eta:g}"
        tags.append(tag)
        for k in ("test_acc", "final_acc", "mode", "seed", "r", "diverged", "diverged_step"):
            out[f"{tag}.{k}"] = res[k]
    out["runs"] = np.array(tags)
    return out


TABLE1_QUOTE = ("Table 1. Median final test accuracy at 10 000× spike. A seed is divergent if final loss exceeds 10. "
                "Arch Plain Clip ρa -ctrl Transformer 31.8% 38.7% 95.3% MLP+LN 44.6% 51.5% 93.9% CNN+BN 13.4% 10.3% "
                "71.6%")
# Table 1 of the paper: median final test accuracy (%) after a 10,000x spike, plain Adam / clipping / controller
TABLE1 = {"transformer": (31.8, 38.7, 95.3), "mlp_ln3": (44.6, 51.5, 93.9), "cnn1d_bn": (13.4, 10.3, 71.6)}
TABLE1_NAMES = {"transformer": "Transformer", "mlp_ln3": "MLP+LN", "cnn1d_bn": "CNN+BN", "attention": "attention",
                "mlp_ln": "MLP+LN (steplab's)", "cnn_bn": "CNN+BN (steplab's)", "mlp": "MLP"}
# seeds of the authors' setting at the full budget: the authors' five (0-4), three for the CNN+BN, whose 1-d convolution
# over 1438 images costs ~0.3-0.7 s per full-batch step on two CPU cores (four runs of 200 steps per seed)
ARCHGRID_SEEDS = {"transformer": 5, "mlp_ln3": 5, "cnn1d_bn": 3}


@experiment("softmax_radius.archgrid")
def archgrid(budget: Budget, *, arch: str) -> dict:
    """Table 1 in the authors' setting (:func:`sims.softmax_radius.archgrid_runs`: their three architectures,
    full-batch Adam at lr 0.015, 200 steps, a 10,000× spike at step 50, float32, their controller and clipping):
    ``spiked.<field>`` for plain / clip / controller and ``calm.<field>`` for the controller without a spike (the
    run the controller's spiked run is predicted to match), seeds 0.. (2 at the quick budget)."""
    seeds = list(range(budget.pick(quick=2, full=ARCHGRID_SEEDS[arch])))
    spiked = S.archgrid_runs(arch, seeds=seeds, modes=S.MODES, factor=1e4, spike_step=50)
    calm = S.archgrid_runs(arch, seeds=seeds, modes=("controller",), factor=1.0, spike_step=-1)
    keys = ("mode", "seed", "test_acc", "loss", "scale", "final_acc", "final_loss", "diverged")
    return {**{f"spiked.{k}": spiked[k] for k in keys}, **{f"calm.{k}": calm[k] for k in keys}}


def _ordering(med: np.ndarray) -> str:
    """The modes ordered by median final accuracy, lowest first (``plain < clip < controller``)."""
    return " < ".join(S.MODES[k] for k in np.argsort(med, kind="stable"))


def _median_se(values: np.ndarray, rng: np.random.Generator, floor: float) -> tuple[float, float]:
    """Median over seeds and its bootstrap standard error (1000 resamples of the seeds), at least ``floor``."""
    boot = np.median(values[rng.integers(0, values.size, (1000, values.size))], axis=1)
    return float(np.median(values)), max(float(np.std(boot)), floor)


def _authors_checks(budget: Budget) -> tuple[list, list]:
    """Table 1 against the authors' setting, per architecture: the controller's median against the unspiked
    controller's (steplab's prediction: the capped spike step changes nothing) and plain Adam's against clipping's
    (Adam normalizes the gradient, so clipping ||g|| ≤ 1 does not shorten the spike step), each cell with Table 1's
    number as the paper's value."""
    checks, rows = [], []
    rng = np.random.default_rng(0)
    n_test = S.archgrid_digits()["y_test"].size
    for arch in budget.pick(quick=(), full=S.ARCHGRID_NAMES):
        out = archgrid(budget, arch=arch)
        acc = 100 * out["spiked.final_acc"]
        mode = out["spiked.mode"]
        calm = 100 * out["calm.final_acc"]
        floor = 100 / n_test  # one test image: the accuracy's resolution, the smallest standard error it can have
        (m_plain, s_plain), (m_clip, s_clip), (m_ctrl, s_ctrl) = (_median_se(acc[mode == c], rng, floor) for c in range(3))
        m_calm, _ = _median_se(calm, rng, floor)
        paper = TABLE1[arch]
        name = TABLE1_NAMES[arch]
        # two medians over the same number of seeds, each with our spread: the SE of their difference is sqrt(2) x ours
        # (the paper's 5-seed median is taken to scatter as ours does)
        checks.append(Statistical(
            f"{name} (authors' setting): median final test accuracy % with the controller", estimate=m_ctrl,
            se=math.sqrt(2) * s_ctrl, predicted=m_calm, paper=paper[2], quote=TABLE1_QUOTE, where=f"{ARXIV}, Table 1",
            rivals={"the spike costs the controller as much as plain Adam": m_plain},
            why="4 SE of a difference of two medians over seeds (bootstrap SE of ours, times sqrt 2)"))
        checks.append(Statistical(
            f"{name} (authors' setting): median final test accuracy % of plain Adam and with clipping",
            estimate=np.array([m_plain, m_clip]), se=math.sqrt(2) * np.array([s_plain, s_clip]),
            predicted=np.array([m_clip, m_plain]), paper=np.array(paper[:2]), quote=TABLE1_QUOTE,
            where=f"{ARXIV}, Table 1",
            why="Adam's step is scale-free in the gradient, so clipping leaves the spike step's length: plain and clip "
                "predict each other; 4 SE of a difference of two medians (bootstrap SE of ours, times sqrt 2). No "
                "rival: a wrecked run recovers more or less, so 5-seed medians scatter by tens of points and cannot "
                "tell clipping from no spike here (the per-seed comparison is in the detail; steplab's setting's "
                "count rejects 'clipping protects')"))
        pre = 100 * np.median(out["spiked.test_acc"][:, 49])
        ctrl = mode == 2
        binds = float(np.mean(out["spiked.scale"][ctrl][:, np.arange(200) != 50] < 1))
        cells = []
        for c, v in zip(range(3), (m_plain, m_clip, m_ctrl)):
            sel = acc[mode == c]
            n_div = int(out["spiked.diverged"][mode == c].sum())
            cells.append(f"{v:.1f} [{sel.min():.0f}–{sel.max():.0f}]" + (f" ({n_div} div.)" if n_div else ""))
        below = int(np.sum(acc[mode == 1] < calm - 5))  # seeds are paired: the same init and full batch
        rows.append(f"{name}, {int(ctrl.sum())} seeds (pre-spike {pre:.1f}%, unspiked controller {m_calm:.1f}%): "
                    + " / ".join(cells) + f"; Table 1 {' / '.join(f'{v:.1f}' for v in paper)}; clipping ends more than 5 "
                    f"points below the same seed's unspiked run in {below}/{int(ctrl.sum())} seeds; the controller also "
                    f"cut {100 * binds:.0f}% of the ordinary steps")
    return checks, rows


@claim(
    "sao2026.lr_spike_controller", paper=PAPER, provenance="quoted", kind="qualitative",
    source="Table 1; §6.5, Figure 10; §5.3 eq. (19)", quote=TABLE1_QUOTE, where=f"{ARXIV}, Table 1",
    statement="Under a 10,000× one-step learning-rate spike, Adam with the controller keeps its accuracy while plain "
              "Adam and Adam with gradient clipping (‖g‖ ≤ 1) collapse. Table 1's numbers (median final test "
              "accuracy: Transformer 31.8/38.7/95.3 %, MLP+LN 44.6/51.5/93.9 %, CNN+BN 13.4/10.3/71.6 %, "
              "plain/clip/controller) are compared, at the full budget only, in the setting of the authors' script "
              "for Table 1 (experiments/archgrid/run.py, which differs from the text: full-batch Adam at lr 0.015 "
              "for every architecture, a one-step spike at step 50, the controller capping lr·‖g‖ at ρ_a along the "
              "gradient rather than eq. (19)'s Adam step, a 'Transformer' that embeds each image as one token so its "
              "softmax runs over one key, a 3-layer GELU MLP+LN and a 1-d CNN+BN); steplab's own setting (its "
              "models, minibatch Adam, per-model learning rates) is a second row, at both budgets. Table 3 "
              "(ResNet-18 on CIFAR-10) is not reproduced on CPU.",
    latex=r"\mathrm{acc}_{\rm ctrl}\approx\mathrm{acc}_{\rm no\,spike}\gg\mathrm{acc}_{\rm plain}\approx\mathrm{acc}_{\rm clip}",
)
def lr_spike_controller(budget: Budget) -> Result:
    r"""steplab's own setting (:func:`lr_spike`), per run: survived = not diverged and final test accuracy within
    5 points of the accuracy just before the spike. Prediction: exactly the controller runs survive. Rivals:
    clipping protects as well; nothing survives the spike; plain Adam recovers by itself. Per model, the mode with
    the best median final accuracy is the controller (rival: clipping). At the full budget, the authors' setting
    (:func:`archgrid`), per architecture: the controller's median final test accuracy equals the unspiked
    controller's (rival: plain Adam's), plain Adam's and clipping's predict each other, and Table 1's numbers are the
    paper's values of those medians (a miss is 'differs from paper')."""
    out = lr_spike(budget)
    s = int(out["spike_step"])
    survived, mode, rows, best = [], [], [], []
    for tag in [str(t) for t in np.asarray(out["runs"])]:
        acc, m, div = out[f"{tag}.test_acc"], out[f"{tag}.mode"], out[f"{tag}.diverged"]
        pre = acc[:, s - 1]
        ok = ~div & (acc[:, -1] >= pre - 0.05)
        survived.append(ok)
        mode.append(m)
        meds, cells = [], []
        for code, name in enumerate(S.MODES):
            sel = m == code
            med, n_div = S.finite_median(acc[sel, -1], div[sel])
            fin = acc[sel, -1][~div[sel]]
            meds.append(med if n_div < sel.sum() else -np.inf)
            cells.append(f"{100 * med:.1f}" + (f" [{100 * fin.min():.0f}–{100 * fin.max():.0f}]" if fin.size else "")
                         + (f" ({n_div} div.)" if n_div else ""))
        best.append(S.MODES[int(np.argmax(meds))])
        arch = tag.rsplit("_", 1)[0]
        rows.append(f"{TABLE1_NAMES.get(arch, arch)} (η {tag.rsplit('_', 1)[1]}, pre-spike {100 * np.median(pre):.1f}%): "
                    + " / ".join(cells) + f"; ordering {_ordering(np.array(meds))}")
    survived, mode = np.concatenate(survived), np.concatenate(mode)
    ctrl, clip = S.mode_code("controller"), S.mode_code("clip")
    authors, authors_rows = _authors_checks(budget)
    return Result(
        checks=[Count("steplab's setting: run keeps its pre-spike accuracy (within 5 points, not diverged)",
                      measured=survived, predicted=mode == ctrl,
                      rivals={"clipping ‖g‖ ≤ 1 protects as well": (mode == ctrl) | (mode == clip),
                              "no method survives a 10,000× spike": np.zeros_like(survived),
                              "plain Adam recovers by itself": np.ones_like(survived)},
                      why="5 points ≈ the seed-to-seed spread of test accuracy on 450 test images"),
                Categorical("steplab's setting: mode with the best median final accuracy, per model",
                            measured=np.array(best), predicted="controller", rivals={"clipping ‖g‖ ≤ 1 is best": "clip"},
                            why="medians over seeds of the final test accuracy (450 test images)"),
                *authors],
        detail=("steplab's setting, median final test accuracy % plain / clip / controller [min–max over seeds]: "
                + "; ".join(rows) + (". The authors' setting (Table 1's script), plain / clip / controller: "
                                     + "; ".join(authors_rows) if authors_rows else
                                     ". Table 1 is compared at the full budget only (the authors' setting)")
                + ". Table 3 (ResNet-18 on CIFAR-10) is not reproduced on CPU"),
        arrays={k.replace(".", "_"): np.asarray(v) for k, v in out.items() if isinstance(v, np.ndarray) and v.dtype != object},
        seed=0,
    )
