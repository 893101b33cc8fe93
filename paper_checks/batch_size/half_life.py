r"""Marek, Lotfi, Somasundaram, Wilson, Goldblum (2025): hold the second moment's half-life fixed in tokens.

Adam's :math:`v` is an EMA with weights :math:`\beta_2^t`; with :math:`B` examples (tokens) per step it forgets half after
:math:`B\ln\tfrac12/\ln\beta_2` examples (:func:`theory.batch_size.token_half_life`), so a fixed half-life in tokens is
:math:`\beta_2(B) = \beta_2(B_0)^{B/B_0}` (:func:`theory.batch_size.half_life_beta2`; the paper's own formula was not
recovered as text). Measured on Adam's EMA itself (:func:`sims.batch_size.second_moment_ema`): the examples until the
mean of :math:`v_t` started at 0 reaches half its stationary value, read off the simulated rise by linear interpolation
between steps, against the same interpolation of the exact rise :math:`1 - \beta_2^t`.
"""
from __future__ import annotations

import math

import numpy as np

import theory.batch_size as th
from paper_checks import STEPLAB, Exact, Paper, Result, Statistical, claim
from paper_checks.batch_size import experiments as E

PAPER = Paper(key="marek2025", title="Small Batch Size Training for Language Models: When Vanilla SGD Works, and Why "
                                     "Gradient Accumulation Is Wasteful",
              authors="M. Marek, S. Lotfi, A. Somasundaram, A. G. Wilson, M. Goldblum", year=2025, arxiv="2507.07101")

QUOTE = ("rather than holding the decay rate of the second moment fixed across batch sizes, we propose to hold its "
         "half-life fixed in terms of tokens.")
WHERE = "arXiv:2507.07101 (v3), abstract"
Z = 4.0


def half_time(mean, se, level: float = 0.5) -> tuple[np.ndarray, np.ndarray]:
    r"""Per row, the step :math:`t^\ast` where the rise first reaches ``level`` (the curve starts at 0 at :math:`t = 0`),
    linearly interpolated between steps, and its delta-method standard error from the two points around it."""
    mean = np.atleast_2d(mean)
    se = np.atleast_2d(se)
    full = np.concatenate([np.zeros((mean.shape[0], 1)), mean], axis=1)
    err = np.concatenate([np.zeros((se.shape[0], 1)), se], axis=1)
    t, s = np.empty(mean.shape[0]), np.empty(mean.shape[0])
    for i, (row, e) in enumerate(zip(full, err)):
        k = int(np.argmax(row >= level))
        if row[k] < level:
            raise ValueError(f"mean: row {i} never reaches {level} within {mean.shape[1]} steps")
        r0, r1 = row[k - 1], row[k]
        t[i] = k - 1 + (level - r0) / (r1 - r0)
        s[i] = math.hypot(e[k - 1] * (r1 - level), e[k] * (level - r0)) / (r1 - r0) ** 2
    return t, s


def _parts(budget):
    ex = E.half_life(budget)
    t, se = half_time(ex["mean"], ex["se"])
    b = ex["batch_size"]
    return ex, b * t, b * se


def exact_half_life(beta2, b) -> np.ndarray:
    """The token half-life read off the exact rise 1 - beta2^t by the same interpolation as the simulation's."""
    rise = th.ema_rise(beta2, E.HL_STEPS)
    return np.asarray(b) * half_time(rise, np.ones_like(rise))[0]


@claim("marek2025.beta2_half_life_in_tokens", paper=PAPER, provenance="quoted", kind="statistical", source="abstract "
       "(v3; the formula beta2(B) = beta2(B0)^(B/B0) and its measurement on Adam's EMA are steplab's)",
       quote=QUOTE, where=WHERE,
       statement="Holding the half-life of Adam's second moment fixed in tokens means beta2(B) = beta2(B0)^(B/B0): the EMA "
                 "then forgets half of its start after the same number of examples (692.8 at beta2(1) = 0.999) at "
                 "B = 1..512, while a fixed beta2 forgets after B times as many, and the first-order rule "
                 "1 - beta2 proportional to B forgets too early at large B.",
       latex=r"\beta_2(B) = \beta_2(B_0)^{B/B_0} \iff \frac{B\ln\frac12}{\ln\beta_2(B)} = \mathrm{const}")
def beta2_half_life_in_tokens(budget) -> Result:
    r"""Examples until the mean of Adam's :math:`v_t` (from 0, pure-noise gradients) reaches half its stationary value,
    under :math:`\beta_2 = 0.999^B` (:math:`B = 1..512`) and under a fixed :math:`\beta_2 = 0.999` (:math:`B = 4, 16, 64`),
    against the exact rise. Rivals on the half-life runs: a fixed :math:`\beta_2` (:math:`B` times the examples), the
    first-order :math:`1 - \beta_2 = 0.001B`; on the fixed runs: the half-life kept in tokens."""
    ex, tok, tok_se = _parts(budget)
    b = ex["batch_size"]
    hl, fx = ex["rule"] == "half_life", ex["rule"] == "fixed"
    why = "4 SE (delta method through the interpolation) over independent chains; the same interpolation on both sides"
    checks = [
        Statistical("examples to half the stationary v, beta2 = 0.999^B", estimate=tok[hl], se=tok_se[hl],
                    predicted=exact_half_life(ex["beta2"][hl], b[hl]), z=Z, why=why,
                    rivals={"beta2 fixed at 0.999 (half-life B times longer)": exact_half_life(np.full(hl.sum(), E.HL_BETA2), b[hl]),
                            "1 - beta2 = 0.001 B (first order)": exact_half_life(1 - (1 - E.HL_BETA2) * b[hl], b[hl])}),
        Statistical("examples to half the stationary v, beta2 fixed at 0.999", estimate=tok[fx], se=tok_se[fx],
                    predicted=exact_half_life(ex["beta2"][fx], b[fx]), z=Z, why=why,
                    rivals={"the half-life kept in tokens": np.full(fx.sum(), float(exact_half_life(E.HL_BETA2, 1.0)[0]))}),
    ]
    return Result(checks, detail="token half-lives, beta2 = 0.999^B at B = " + ", ".join(
                      f"{int(x)}: {v:.1f}" for x, v in zip(b[hl], tok[hl]))
                  + f" (closed form {float(th.token_half_life(E.HL_BETA2, 1.0)):.1f}); beta2 fixed: "
                  + ", ".join(f"{int(x)}: {v:.0f}" for x, v in zip(b[fx], tok[fx])),
                  seed=E.SEED + 4, arrays={"batch_size": b, "tokens": tok, "tokens_se": tok_se, "rule": ex["rule"]})


@claim("steplab.beta2_linear_rule_window", paper=STEPLAB, provenance="derived", kind="statistical",
       source="found here on marek2025's half-life rule (its first-order form, theory.batch_size.linear_beta2_edge)",
       statement="The first-order rule 1 - beta2 = (1 - beta2(B0)) B/B0 keeps the second moment's half-life in tokens "
                 "within 10 % only up to B = 194 B0 at beta2(B0) = 0.999 (where B ln beta2(B0) / (B0 ln(1 - (1 - "
                 "beta2(B0)) B/B0)) = 0.9), located in simulation; beyond it the half-life shrinks (0.71x at 512).",
       latex=r"\frac{B\ln\beta_2(B_0)}{B_0\ln(1 - (1-\beta_2(B_0))B/B_0)} = 0.9 \text{ at } B_{\rm edge}")
def beta2_linear_rule_window(budget) -> Result:
    r"""Token half-lives of the first-order rule's runs at :math:`B = 4..512` against the exact rise (rival: the half-life
    kept, as by the exact rule); on the short runs at :math:`B = 96..320` (many chains), the batch size where the
    half-life falls to 0.9 of the reference, interpolated in :math:`\log B`, against
    :func:`theory.batch_size.linear_beta2_edge` (rivals: the edge at :math:`(1-\beta_2)B = 0.5`, and at the rule's own
    end :math:`(1-\beta_2)B = 1`, where :math:`\beta_2 = 0`)."""
    from sims.edges import interpolated_crossing

    ex, tok, tok_se = _parts(budget)
    b = ex["batch_size"]
    lin = ex["rule"] == "linear"
    ref = float(th.token_half_life(E.HL_BETA2, 1.0))
    pred = exact_half_life(ex["beta2"][lin], b[lin])
    edge = th.linear_beta2_edge(E.HL_BETA2, 1.0, 0.9)
    be = ex["edge_batch_size"]
    t_e, s_e = half_time(ex["edge_mean"], ex["edge_se"])
    ratio, ratio_se = be * t_e / ref, be * s_e / ref
    exact_ratio = exact_half_life(1 - (1 - E.HL_BETA2) * be, be) / ref
    # the ratio falls with B: cross 0.9 from above, i.e. 2 - ratio rises through 1.1
    sim_edge, sim_se = interpolated_crossing(be, 2 - ratio, 1.1, ratio_se, log_x=True)
    ex_edge, _ = interpolated_crossing(be, 2 - exact_ratio, 1.1, np.ones(be.size), log_x=True)
    interp = abs(math.log(ex_edge / edge))
    checks = [
        Statistical("examples to half the stationary v, 1 - beta2 = 0.001 B", estimate=tok[lin], se=tok_se[lin],
                    predicted=pred, z=Z, rivals={"the half-life kept in tokens (as by beta2 = 0.999^B)": np.full(lin.sum(), ref)},
                    why="4 SE (delta method through the interpolation) over independent chains"),
        Exact("batch size where the half-life falls to 0.9 of the reference", predicted=edge, measured=sim_edge,
              rtol=math.expm1(Z * sim_se + interp),
              rivals={"(1 - beta2(B0)) B/B0 = 0.5": 0.5 / (1 - E.HL_BETA2),
                      "the rule's own end, beta2 = 0": 1.0 / (1 - E.HL_BETA2)},
              why=f"4 SE of the interpolated log B ({sim_se:.3f}) plus the log-B interpolation's own bias on the exact "
                  f"half-lives ({interp:.3f}); the step interpolation is the same on both sides"),
    ]
    return Result(checks, detail=f"edge: simulated B = {sim_edge:.1f}, closed form {edge:.1f}; half-life / reference at "
                                 f"B = {be.astype(int).tolist()}: {np.round(ratio, 4).tolist()} (exact "
                                 f"{np.round(exact_ratio, 4).tolist()})",
                  seed=E.SEED + 5, arrays={"batch_size": b[lin], "tokens": tok[lin], "tokens_se": tok_se[lin],
                                           "predicted": pred, "edge": edge, "sim_edge": sim_edge})
