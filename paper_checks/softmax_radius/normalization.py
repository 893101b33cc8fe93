r"""steplab's own result on the normalized models of the topic (``mlp_ln``, ``cnn_bn``): the continued logits stop being
analytic at the branch points of the normalizer :math:`1/\sqrt{\mathrm{Var}(h(t))+\epsilon}`, the roots of
:math:`ct^2+2bt+a+\epsilon` (:func:`theory.softmax_radius.normalization_branch_points`), predicted from the first layer
written out in NumPy (:func:`paper_checks.softmax_radius.experiments.pre_normalization`) and measured on the models' own
continued evaluation (:func:`sims.softmax_radius.normalization_branch_point`). No experiment: initial parameters, one
random direction.
"""
from __future__ import annotations

import math

import jax
import numpy as np
import sympy as sp

from paper_checks import STEPLAB, Budget, Exact, Result, claim
from paper_checks.softmax_radius.experiments import pre_normalization
from sims import softmax_radius as S
from theory import softmax_radius as T

EPS = 1e-5  # the normalization layers' epsilon (models.py, PyTorch's default), part of the prediction
N_BATCH = 64  # digits: the batch-normalized CNN's batch, and the pool the layer-norm samples are picked from
K_LN, K_BN = 4, 2  # bottleneck samples measured: layer norm (one branch point each), batch norm (one shared)
# relative tolerance of the located branch points: both sides are float64 evaluations of the same quadratic
# (moments of <= 4096 O(1) terms, ~1e-14); the measured zero of 1/sum_k z_k^2 is a simple zero reached to
# |step| < 1e-15 |t|, with an error ~1e-16 times the condition |t|/Im t (reported); 1e-10 leaves four orders
ROOT_RTOL = 1e-10


def _setting(name: str, seed: int) -> tuple:
    """``name``'s initial parameters with gains near 1 and shifts near 0 drawn at random (so that neither is the
    trivial 1 or 0 a mistake could hide behind), and a random unit direction over every parameter."""
    model = S.make_model(name, hidden=(64,))
    rng = np.random.default_rng(seed)
    params = {k: np.asarray(w) for k, w in model.init(jax.random.key(seed)).items()}
    for k in ("g0", "c0", "g", "c"):
        if k in params:
            params[k] = params[k] + 0.2 * rng.normal(size=params[k].shape)
    v = {k: rng.normal(size=np.shape(w)) for k, w in params.items()}
    norm = math.sqrt(sum(float(np.sum(w**2)) for w in v.values()))
    return model, params, {k: w / norm for k, w in v.items()}


def _bottleneck(model, params, v, x: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` samples of ``x`` with the smallest :math:`\rho_{a,i}` and their linearized radius :math:`\rho^*_i`
    (the softmax's own ghost, the rival that the normalization adds nothing)."""
    z, a = (np.asarray(u) for u in S.directional_derivatives(model.apply, params, v, x))
    rows = np.sort(np.argsort(np.asarray(T.lower_bound(a)))[:k])
    return rows, np.asarray(T.radius(z[rows], a[rows]))


def _derivation_residuals(n: int = 4) -> tuple[np.ndarray, np.ndarray]:
    r"""Non-zero residual counts of the derivation in exact arithmetic
    (:func:`theory.softmax_radius.normalizer_branch_points`, ``n`` symbolic activations), and the counts it predicts.

    Row 0: the five residuals of the derivation (the variance as :math:`ct^2+2bt+a`, Lagrange's identity, :math:`q(t_\pm)`
    for both roots, :math:`t_+t_- - (a+\epsilon)/c`), 0 expected. Row 1: the negative control, :math:`q` at the roots
    with :math:`\epsilon` left out, :math:`(-b\pm i\sqrt{ca-b^2})/c`: both must miss (2 non-zero), or the check could
    not tell the two root formulas apart."""
    d = T.normalizer_branch_points(n)
    own = [d["variance_residual"], d["lagrange_residual"], *d["root_residual"], d["modulus_residual"]]
    t = sp.Symbol("t")
    a, b, c, eps = T.norm_a, T.norm_b, T.norm_c, T.norm_eps
    q = c * t**2 + 2 * b * t + a + eps
    no_eps = [(-b + sgn * sp.I * sp.sqrt(c * a - b**2)) / c for sgn in (1, -1)]
    control = [sp.simplify(sp.expand(q.subs(t, r))) for r in no_eps]
    return np.array([0.0, 2.0]), np.array([sum(sp.simplify(r) != 0 for r in own), sum(r != 0 for r in control)], float)


@claim("steplab.normalization_branch_points", paper=STEPLAB, provenance="derived", kind="exact",
       source="derived here (steplab's: the continuation of the MLP+LayerNorm and CNN+BatchNorm models of the topic; "
              "no paper states it)",
       statement="Along a step θ0 + tv the activations h(t) = h0 + t·ḣ before the first normalization layer are affine "
                 "in t, so its normalizer 1/sqrt(Var(h(t)) + ε) has square-root branch points at the roots of "
                 "c t² + 2b t + a + ε (a = Var h0, b = Cov(h0, ḣ), c = Var ḣ over the normalized axis, population "
                 "moments), t = (−b ± i sqrt(c(a+ε) − b²))/c, |t| = sqrt((a+ε)/c); everything else is polynomial in "
                 "t, so these are the nearest singularities of the continued logits: per sample for the layer norm "
                 "(over the 64 features of x W0 + b0), shared by the whole batch for the batch norm (the nearest "
                 "over the 8 channels of the bias-free 3x3 convolution, statistics over the batch and the pixels).",
       latex=r"t_\pm=\frac{-b\pm i\sqrt{c(a+\epsilon)-b^2}}{c},\quad |t_\pm|=\sqrt{\frac{a+\epsilon}{c}}")
def normalization_branch_points(budget: Budget) -> Result:
    r"""Predicted: the closed form of :func:`theory.softmax_radius.normalization_branch_points` with
    :math:`\epsilon=10^{-5}` on :math:`h_0,\dot h` computed here in NumPy from the parameters and the direction
    (``mlp_ln``: :math:`xW_0+b_0` and :math:`xV_{W_0}+V_{b_0}` per sample; ``cnn_bn``: the 'SAME' convolution with
    :math:`K` and :math:`V_K` over a batch of 64 digits, the nearest channel). Measured: the nearest singularity of
    the model's continued logits, :func:`sims.softmax_radius.normalization_branch_point` (zeros of the model's own
    square-root arguments refined by the secant method on :math:`1/\sum_kz_k^2`), for the bottleneck samples
    (smallest :math:`\rho_{a,i}`) at initial parameters (gains and shifts perturbed) along a random unit direction.
    Rivals: the normalization adds no singularity, so the nearest one is the softmax's linearized ghost
    :math:`\rho^*_i`; :math:`\epsilon` left out (:math:`\sqrt{a/c}`); the unbiased variance (:math:`n-1`); the branch
    point straight above :math:`t=0` (:math:`\mathrm{Re}\,t=0`). The closed form's derivation is checked too, in exact
    arithmetic (:func:`_derivation_residuals`: its identities hold, and the roots without :math:`\epsilon` miss)."""
    seed = 51
    x_all = S.digits()["x_train"][:N_BATCH]
    pred, meas, rivals = [], [], {"none": [], "no_eps": [], "unbiased": []}
    re_pred, re_meas, cond, parts = [], [], [], []
    for name in ("mlp_ln", "cnn_bn"):
        model, p, v = _setting(name, seed)
        rows, rho_star = _bottleneck(model, p, v, x_all, K_LN if name == "mlp_ln" else K_BN)
        # the layer norm maps one sample at a time: evaluate the chosen ones only; the batch statistics couple the
        # samples: the whole batch
        x, local = (x_all[rows], np.arange(rows.size)) if name == "mlp_ln" else (x_all, rows)
        h0, hd, axis = pre_normalization(name, p, v, x)
        n = int(np.prod([h0.shape[a] for a in np.atleast_1d(axis)]))

        def nearest(eps, name=name, h0=h0, hd=hd, axis=axis, local=local):
            t = T.normalization_branch_points(h0, hd, axis, eps)[..., 0]  # Im t >= 0: one per sample or channel
            return t[local] if name == "mlp_ln" else np.full(local.size, t[np.argmin(np.abs(t))])

        closed = nearest(EPS)
        found = S.normalization_branch_point(model.apply, p, v, x, local)
        # a row with no located singularity measures 0 (fails the check) instead of NaN (which no check takes)
        point = np.nan_to_num(found["point"], nan=0.0)
        pred.append(np.abs(closed))
        meas.append(np.abs(point))
        re_pred.append(closed.real)
        re_meas.append(point.real)
        cond.append(np.abs(closed) / closed.imag)
        rivals["none"].append(rho_star)
        rivals["no_eps"].append(np.abs(nearest(0.0)))
        # the unbiased variance n/(n-1) (c t^2 + 2 b t + a) + eps has the roots of the biased one with eps (n-1)/n
        rivals["unbiased"].append(np.abs(nearest(EPS * (n - 1) / n)))
        err = np.max(np.abs(np.abs(point) / np.abs(closed) - 1))
        parts.append(f"{name}: |t*| = {', '.join(f'{r:.4f}' for r in np.abs(closed))} on {rows.size} bottleneck "
                     f"samples (ρ*/|t*| ∈ [{np.min(rho_star / np.abs(closed)):.2f}, "
                     f"{np.max(rho_star / np.abs(closed)):.2f}]), located within {err:.1e}, "
                     f"{int(found['count'].min())} of the {found['candidates'].size} zeros of the model's square-root "
                     f"arguments are singularities of each sample's logits; ε moves |t*| by "
                     f"{np.max(np.abs(rivals['no_eps'][-1] / np.abs(closed) - 1)):.1e}, the unbiased variance by "
                     f"{np.max(np.abs(rivals['unbiased'][-1] / np.abs(closed) - 1)):.1e}")
    pred, meas, re_pred, re_meas, cond = (np.concatenate(u) for u in (pred, meas, re_pred, re_meas, cond))
    lemma_pred, lemma_meas = _derivation_residuals()
    rivals = {k: np.concatenate(u) for k, u in rivals.items()}
    return Result(
        checks=[
            Exact("|t*|, the nearest singularity of the continued logits (layer norm: 4 samples; batch norm: 2 samples "
                  "of one batch) vs sqrt((a+ε)/c)", predicted=pred, measured=meas, rtol=ROOT_RTOL,
                  rivals={"the normalization adds no singularity: the nearest is the softmax's ghost ρ* (linearized)":
                          rivals["none"],
                          "ε left out: |t*| = sqrt(a/c)": rivals["no_eps"],
                          "unbiased variance (n − 1 in the denominator)": rivals["unbiased"]},
                  why=f"float64 moments and a simple zero reached to |step| < 1e-15|t|: error ~1e-16·|t|/Im t "
                      f"(condition ≤ {cond.max():.2f}); 1e-10 leaves four orders for round-off"),
            Exact("Re t*, the nearest singularity's real part vs −b/c", predicted=re_pred, measured=re_meas,
                  atol=ROOT_RTOL * float(pred.max()),
                  rivals={"the branch point stands straight above t = 0 (Re t* = 0)": np.zeros_like(re_pred)},
                  why="as for |t*|, an absolute error relative to the largest |t*|"),
            Exact("non-zero residuals of the derivation in exact arithmetic (n = 4 symbolic activations: the variance "
                  "as c t² + 2b t + a, Lagrange's identity, q(t±), t+ t− − (a+ε)/c); then q at the roots with ε left "
                  "out (the negative control: both must miss)", predicted=lemma_pred, measured=lemma_meas, atol=0.5,
                  rivals={"ε does not move the branch points (the ε-free roots solve q too)": np.zeros(2)},
                  why="counts of symbolic residuals that do not cancel exactly: any difference is a miscount"),
        ],
        detail="; ".join(parts),
        arrays={"predicted": pred, "measured": meas, "re_predicted": re_pred, "re_measured": re_meas,
                "rho_star": rivals["none"], "no_eps": rivals["no_eps"], "unbiased": rivals["unbiased"],
                "derivation_residuals": lemma_meas},
        seed=seed,
    )
