r"""Batch size: the gradient noise scale, the steps--examples trade-off and the learning-rate scaling rules.

**One step on a quadratic.** Take :math:`L(\theta) = \tfrac12\theta^\top H\theta` (plus a constant), gradient
:math:`G = H\theta`, per-example gradients with mean :math:`G` and covariance :math:`\Sigma`, and their mean
:math:`\hat g_B` over :math:`B` i.i.d. examples (:math:`E\hat g_B = G`, :math:`\mathrm{Cov}\,\hat g_B = \Sigma/B`).
Expanding the quadratic exactly,

.. math:: E\,L(\theta - \eta\hat g_B) = L(\theta) - \eta\|G\|^2 + \tfrac12\eta^2\Big(G^\top HG + \frac{\mathrm{tr}(H\Sigma)}{B}\Big),

so the best step and the best decrease are (:func:`one_step_sym` derives them)

.. math:: \eta_{\rm opt}(B) = \frac{\eta_{\max}}{1 + B_{\rm noise}/B},\qquad
          \Delta L_{\rm opt}(B) = \frac{\Delta L_{\max}}{1 + B_{\rm noise}/B},\qquad
          \eta_{\max} = \frac{\|G\|^2}{G^\top HG},\quad \Delta L_{\max} = \frac{\|G\|^4}{2G^\top HG},\quad
          B_{\rm noise} = \frac{\mathrm{tr}(H\Sigma)}{G^\top HG}

(:func:`noise_scale`, :func:`optimal_step`, :func:`optimal_decrease`). The Hessian-free proxy
:math:`B_{\rm simple} = \mathrm{tr}\,\Sigma/\|G\|^2` (:func:`simple_noise_scale`) equals :math:`B_{\rm noise}` only when
:math:`H` is a multiple of the identity.

**Steps against examples.** If every step made the best decrease with a fixed :math:`B_{\rm noise}`, reaching a target
would take :math:`S = S_{\min}(1 + B_{\rm noise}/B)` steps and :math:`E = BS = E_{\min}(1 + B/B_{\rm noise})` examples,
i.e. the hyperbola :math:`(S/S_{\min} - 1)(E/E_{\min} - 1) = 1` with :math:`B_{\rm crit} = E_{\min}/S_{\min}`
(:func:`hyperbola_product`, :func:`hyperbola_steps`). On a noisy quadratic the noise scale grows as the loss falls,
so the hyperbola is only approximate; :func:`greedy_steps` measures the exact steps to a target: the diagonal NQM's
second moments :math:`m_i = E x_i^2` under the greedy step computed from them,

.. math:: \eta_t = \frac{\sum_i\lambda_i^2 m_i}{\sum_i\lambda_i^3 m_i + \sum_i\lambda_i\sigma_i^2/B},\qquad
          m_i \leftarrow (1-\eta_t\lambda_i)^2 m_i + \eta_t^2\sigma_i^2/B

(the recursion of :func:`theory.nqm.moment_recursion`, here for a real :math:`B > 0`, so that both limits
:math:`B \to 0` and :math:`B \to \infty` can be approached).

**The linear rule for SGD** (:func:`linear_rule_ratio`, :func:`linear_rule_edge`, :func:`linear_rule_limit`). SGD's
stationary excess on mode :math:`i` is :math:`\eta\sigma_i^2/(2B(2 - \eta\lambda_i))`
(:func:`theory.nqm.stationary_excess`): with :math:`\eta = \eta_1 B` it is :math:`\eta_1\sigma_i^2/(2(2-\eta_1B\lambda_i))`,
invariant in :math:`B` up to the factor :math:`2/(2 - \eta_1B\lambda_i)`, which grows without bound as
:math:`B \to 2/(\eta_1\lambda_{\max})`, where SGD diverges.

**The second moment's half-life** (:func:`half_life_beta2`, :func:`token_half_life`, :func:`ema_rise`,
:func:`linear_beta2_edge`). Adam's :math:`v_{t+1} = \beta_2v_t + (1-\beta_2)g_t^2` weighs a step :math:`t` steps back by
:math:`\beta_2^t`; with :math:`B` examples per step it forgets half after :math:`B\ln\tfrac12/\ln\beta_2` examples.
Holding that fixed gives :math:`\beta_2(B) = \beta_2(B_0)^{B/B_0}`, whose first-order form is
:math:`1 - \beta_2 \propto B`; the two part once :math:`(1 - \beta_2(B_0))B/B_0` is no longer small.

**The square-root rule for sign updates** (:func:`sign_rule_floor`, :func:`sqrt_rule_edge`). signSGD on
:math:`a x^2/2` with additive noise :math:`\sigma/\sqrt B` has a stationary floor that, for
:math:`\kappa = a\eta\sqrt B/\sigma \to 0`, is :math:`\propto \eta\sigma/\sqrt B` (the exact chain of
:func:`theory.sign_floor.additive_floor`): invariant under :math:`\eta \propto \sqrt B`, growing like
:math:`\sqrt B` under :math:`\eta \propto B`. Under the square-root rule :math:`\kappa = a\eta_1 B/\sigma` grows with
:math:`B`, and the floor's :math:`O(\kappa)` correction ends the rule's range.

No JAX and no I/O here: sympy for the algebra, NumPy/SciPy for the recursions and the roots. Every public function
validates its arguments (:mod:`theory.validate`).
"""
from __future__ import annotations

import functools
import math

import numpy as np
import sympy as sp
from scipy import optimize

from theory import validate as V
from theory import nqm

__all__ = [
    "MAX_GREEDY_STEPS",
    "ema_rise",
    "expected_one_step_loss",
    "greedy_min_examples",
    "greedy_min_steps",
    "greedy_steps",
    "half_life_beta2",
    "hyperbola_product",
    "hyperbola_steps",
    "linear_beta2_edge",
    "linear_rule_edge",
    "linear_rule_limit",
    "linear_rule_ratio",
    "max_step",
    "noise_scale",
    "one_step_sym",
    "optimal_decrease",
    "optimal_step",
    "sign_rule_floor",
    "simple_noise_scale",
    "sqrt_rule_edge",
    "token_half_life",
]

#: the longest greedy run :func:`greedy_steps` accepts
MAX_GREEDY_STEPS = 2_000_000


# ----------------------------------------------------------------------------- one step
@functools.cache
def one_step_sym():
    r"""Derive the one-step law with sympy from the scalars :math:`g_2 = \|G\|^2`, :math:`c = G^\top HG`,
    :math:`t = \mathrm{tr}(H\Sigma)` and :math:`B`.

    Returns ``(change, eta_opt, decrease, (eta, g2, c, t, B))``: the expected change of the loss after one step
    :math:`-\eta g_2 + \tfrac12\eta^2(c + t/B)`, its minimizer in :math:`\eta`, and the decrease at the minimizer.
    """
    eta, g2, c, t, B = sp.symbols("eta g2 c t B", positive=True)
    change = -eta * g2 + sp.Rational(1, 2) * eta**2 * (c + t / B)
    (root,) = sp.solve(sp.diff(change, eta), eta)
    decrease = sp.simplify(-change.subs(eta, root))
    return change, sp.simplify(root), decrease, (eta, g2, c, t, B)


@functools.cache
def _one_step_fns():
    _, root, decrease, (_, g2, c, t, B) = one_step_sym()
    return sp.lambdify((g2, c, t, B), root, "numpy"), sp.lambdify((g2, c, t, B), decrease, "numpy")


def _problem(G, H, Sigma) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validated gradient (d,), Hessian (d, d) and per-example covariance (d, d)."""
    g = V.array("G", G, ndim=1)
    d = g.size
    h = V.symmetric_psd("H", V.array("H", H, shape=(d, d)), "the Hessian H")
    s = V.symmetric_psd("Sigma", V.array("Sigma", Sigma, shape=(d, d)), "the per-example covariance Sigma")
    if not float(g @ h @ g) > 0:
        raise ValueError("G: expected a gradient with G^T H G > 0 (a direction of positive curvature), got "
                         f"G^T H G = {float(g @ h @ g):.3g}")
    return g, h, s


def _batches(batch_size) -> np.ndarray:
    return V.array("batch_size", batch_size, ndim=(0, 1), low=0.0, low_open=True)


def noise_scale(G, H, Sigma) -> float:
    r""":math:`B_{\rm noise} = \mathrm{tr}(H\Sigma)/G^\top HG`."""
    g, h, s = _problem(G, H, Sigma)
    return float(np.trace(h @ s) / (g @ h @ g))


def simple_noise_scale(G, Sigma) -> float:
    r""":math:`B_{\rm simple} = \mathrm{tr}\,\Sigma/\|G\|^2` (no Hessian)."""
    g = V.array("G", G, ndim=1)
    s = V.symmetric_psd("Sigma", V.array("Sigma", Sigma, shape=(g.size, g.size)), "the per-example covariance Sigma")
    if not float(g @ g) > 0:
        raise ValueError("G: expected a nonzero gradient, got |G| = 0")
    return float(np.trace(s) / (g @ g))


def max_step(G, H) -> float:
    r""":math:`\eta_{\max} = \|G\|^2/G^\top HG`: the best step of a noiseless gradient (:math:`B \to \infty`)."""
    g = V.array("G", G, ndim=1)
    h = V.symmetric_psd("H", V.array("H", H, shape=(g.size, g.size)), "the Hessian H")
    c = float(g @ h @ g)
    if not c > 0:
        raise ValueError(f"G: expected G^T H G > 0, got {c:.3g}")
    return float(g @ g) / c


def optimal_step(G, H, Sigma, batch_size) -> np.ndarray:
    r""":math:`\eta_{\rm opt}(B) = \eta_{\max}/(1 + B_{\rm noise}/B)` at each batch size (real, > 0)."""
    g, h, s = _problem(G, H, Sigma)
    b = _batches(batch_size)
    return np.asarray(_one_step_fns()[0](float(g @ g), float(g @ h @ g), float(np.trace(h @ s)), b), dtype=float)


def optimal_decrease(G, H, Sigma, batch_size) -> np.ndarray:
    r""":math:`\Delta L_{\rm opt}(B) = \Delta L_{\max}/(1 + B_{\rm noise}/B)`, the expected decrease at the best step."""
    g, h, s = _problem(G, H, Sigma)
    b = _batches(batch_size)
    return np.asarray(_one_step_fns()[1](float(g @ g), float(g @ h @ g), float(np.trace(h @ s)), b), dtype=float)


def expected_one_step_loss(G, H, Sigma, batch_size, eta) -> np.ndarray:
    r""":math:`E L(\theta - \eta\hat g_B) - L(\theta) = -\eta\|G\|^2 + \tfrac12\eta^2(G^\top HG + \mathrm{tr}(H\Sigma)/B)`
    at one batch size and each step in ``eta`` (>= 0)."""
    g, h, s = _problem(G, H, Sigma)
    b = V.real("batch_size", batch_size, low=0.0, low_open=True)
    e = V.array("eta", eta, ndim=(0, 1), low=0.0)
    return -e * float(g @ g) + 0.5 * e**2 * (float(g @ h @ g) + float(np.trace(h @ s)) / b)


# ----------------------------------------------------------------------------- steps against examples
def _greedy(lam, s2, m, b, frac, max_steps) -> dict[str, np.ndarray]:
    """The greedy moment recursion for each batch size in ``b`` (np.inf allowed: no noise), validated inputs."""
    d = lam.size
    noise = float(lam @ s2)
    M = np.broadcast_to(m, (b.size, d)).copy()
    loss0 = 0.5 * float(lam @ m)
    goal = frac * loss0
    steps = np.full(b.size, np.nan)
    b_end = np.full(b.size, np.nan)
    live = np.ones(b.size, bool)
    prev = np.full(b.size, loss0)
    lam2, lam3 = lam**2, lam**3
    inv_b = 1.0 / b
    for t in range(1, max_steps + 1):
        idx = np.flatnonzero(live)
        Ml = M[idx]
        ib = inv_b[idx][:, None]
        eta = (Ml @ lam2) / (Ml @ lam3 + noise * ib[:, 0])
        Ml = (1 - eta[:, None] * lam) ** 2 * Ml + eta[:, None] ** 2 * s2 * ib
        loss = 0.5 * Ml @ lam
        done = loss <= goal
        if done.any():
            k = idx[done]
            lo, hi = np.log(prev[k]), np.log(loss[done])
            steps[k] = t - 1 + (lo - math.log(goal)) / (lo - hi)
            b_end[k] = noise / (M[k] @ lam3)
            live[k] = False
        M[idx] = Ml
        prev[idx] = loss
        if not live.any():
            break
    else:
        raise ValueError(f"max_steps: {int(live.sum())} of {b.size} runs (batch sizes {b[live][:3].tolist()}...) did "
                         f"not reach {frac} L0 within {max_steps} steps; expected a larger max_steps or target")
    return {"steps": steps, "examples": b * steps, "noise_start": np.full(b.size, noise / float(m @ lam3)),
            "noise_end": b_end}


def _nqm_problem(lam, sigma2, m0, target) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    lam_a = V.array("lam", lam, ndim=1, low=0.0, low_open=True)
    d = lam_a.size
    s2 = V.array("sigma2", sigma2, shape=(d,), low=0.0)
    m = V.array("m0", m0, shape=(d,), low=0.0, low_open=True)
    frac = V.real("target", target, low=0.0, high=1.0, low_open=True, high_open=True)
    if not np.any(s2 > 0):
        raise ValueError("sigma2: expected some noise (a noiseless model has no batch-size trade-off), got all zeros")
    return lam_a, s2, m, frac


def greedy_steps(lam, sigma2, m0, batch_size, target, *, max_steps: int = 200_000) -> dict[str, np.ndarray]:
    r"""Steps to reach ``target`` :math:`\times L_0` on a diagonal NQM with the greedy step, one run per batch size.

    ``lam`` (d,) curvatures > 0, ``sigma2`` (d,) per-example noise variances >= 0 (not all 0), ``m0`` (d,) initial
    second moments > 0, ``batch_size`` real > 0 (scalar or (n,)), ``target`` in (0, 1). The expected loss
    :math:`E L_t = \tfrac12\sum_i\lambda_i m_{i,t}` falls monotonically under the greedy step; the crossing is
    located between two steps by interpolating :math:`\log E L` linearly, so the step count is real.

    Returns ``steps`` (n,), ``examples`` (= batch size x steps), ``noise_start`` and ``noise_end``: the noise scale
    :math:`\sum_i\lambda_i\sigma_i^2/\sum_i\lambda_i^3m_i` of the moments at the start and at the crossing (the
    last step before it). A run that has not crossed after ``max_steps`` (``1..MAX_GREEDY_STEPS``) raises
    ``ValueError`` naming ``max_steps``.
    """
    lam_a, s2, m, frac = _nqm_problem(lam, sigma2, m0, target)
    b = np.atleast_1d(_batches(batch_size))
    max_steps = V.integer("max_steps", max_steps, low=1, high=MAX_GREEDY_STEPS)
    V.check_bytes({"batch_size": f"{b.size} sizes", "lam": f"{lam_a.size} modes"}, 8 * 4 * b.size * lam_a.size,
                  what="the (n, d) moment tables")
    return _greedy(lam_a, s2, m, b, frac, max_steps)


def greedy_min_steps(lam, sigma2, m0, target, *, max_steps: int = 200_000) -> float:
    r""":math:`S_{\min}`: the greedy steps to the target as :math:`B \to \infty` (noiseless greedy gradient descent)."""
    lam_a, s2, m, frac = _nqm_problem(lam, sigma2, m0, target)
    max_steps = V.integer("max_steps", max_steps, low=1, high=MAX_GREEDY_STEPS)
    return float(_greedy(lam_a, s2, m, np.array([np.inf]), frac, max_steps)["steps"][0])


def greedy_min_examples(lam, sigma2, m0, target) -> float:
    r""":math:`E_{\min}`: the examples to the target as :math:`B \to 0`.

    With :math:`\eta_t = B\kappa + O(B^2)`, :math:`\kappa = \sum_i\lambda_i^2m_i/\sum_i\lambda_i\sigma_i^2`, one step
    changes :math:`m_i` by :math:`B(\kappa^2\sigma_i^2 - 2\kappa\lambda_i m_i) + O(B^2)`, so in examples
    :math:`E = Bt` the moments follow the ODE :math:`dm_i/dE = \kappa^2\sigma_i^2 - 2\kappa\lambda_i m_i`, integrated
    (SciPy's DOP853, relative tolerance 1e-11) to the event :math:`E L = ` ``target`` :math:`\times L_0`.
    """
    from scipy import integrate

    lam_a, s2, m, frac = _nqm_problem(lam, sigma2, m0, target)
    noise = float(lam_a @ s2)
    goal = frac * 0.5 * float(lam_a @ m)

    def rhs(_, y):
        kappa = (y @ lam_a**2) / noise
        return kappa**2 * s2 - 2 * kappa * lam_a * y

    def hit(_, y):
        return 0.5 * float(lam_a @ y) - goal
    hit.terminal, hit.direction = True, -1
    horizon = 1e3 * float(noise) * float(np.max(m)) / max(float(np.min(lam_a)) ** 2 * float(np.min(m)), 1e-300)
    sol = integrate.solve_ivp(rhs, (0.0, horizon), m, method="DOP853", rtol=1e-11, atol=1e-14 * float(np.max(m)),
                              events=hit)
    if not sol.t_events[0].size:
        raise ValueError(f"target: the B -> 0 limit does not reach {frac} L0 (its stationary loss lies above it)")
    return float(sol.t_events[0][0])


def hyperbola_product(steps, examples, s_min, e_min) -> np.ndarray:
    r""":math:`(S/S_{\min} - 1)(E/E_{\min} - 1)`, which the steps--examples hyperbola sets to 1."""
    s = V.array("steps", steps, ndim=(0, 1), low=0.0, low_open=True)
    e = V.array("examples", examples, ndim=(0, 1), low=0.0, low_open=True)
    s_min = V.real("s_min", s_min, low=0.0, low_open=True)
    e_min = V.real("e_min", e_min, low=0.0, low_open=True)
    if s.shape != e.shape:
        raise ValueError(f"examples: expected the shape of steps {s.shape}, got {e.shape}")
    return (s / s_min - 1) * (e / e_min - 1)


def hyperbola_steps(batch_size, s_min, b_crit) -> np.ndarray:
    r""":math:`S(B) = S_{\min}(1 + B_{\rm crit}/B)`: the hyperbola's steps at each batch size."""
    b = _batches(batch_size)
    s_min = V.real("s_min", s_min, low=0.0, low_open=True)
    b_crit = V.real("b_crit", b_crit, low=0.0)
    return s_min * (1 + b_crit / b)


# ----------------------------------------------------------------------------- the linear rule (SGD)
def linear_rule_ratio(lam, sigma_a, eta1, batch_size) -> np.ndarray:
    r"""SGD's stationary loss at :math:`\eta = \eta_1 B` over its :math:`B \to 0` limit (the linear rule's invariant).

    :math:`\sum_i \sigma_i^2/(2 - \eta_1B\lambda_i)\,\big/\,\sum_i\sigma_i^2/2`, from
    :func:`theory.nqm.stationary_excess` per mode; ``batch_size`` real, below :func:`linear_rule_limit`.
    """
    lam_a = V.array("lam", lam, ndim=1, low=0.0, low_open=True)
    sa = V.array("sigma_a", sigma_a, shape=(lam_a.size,), low=0.0)
    if not np.any(sa > 0):
        raise ValueError("sigma_a: expected some additive noise (the stationary loss is 0 without it), got all zeros")
    e1 = V.real("eta1", eta1, low=0.0, low_open=True)
    b = _batches(batch_size)
    edge = 2.0 / (e1 * float(lam_a.max()))
    if not np.all(b < edge):
        raise ValueError(f"batch_size: SGD at eta = eta1 B is stationary only for B < 2/(eta1 lam_max) = {edge:.6g}, "
                         f"got {float(np.max(b)):.6g}")
    small = float(np.sum(sa**2)) / 4   # the eta -> 0 limit of eta sigma^2/(2(2 - eta lam)) / eta
    per_b = [float(np.sum(nqm.stationary_excess(lam_a, e1 * bb, sa) / bb)) / e1 for bb in np.atleast_1d(b)]
    out = np.asarray(per_b) / small
    return out.reshape(b.shape)


def linear_rule_limit(lam, eta1) -> float:
    r""":math:`B_{\max} = 2/(\eta_1\lambda_{\max})`: beyond it SGD at :math:`\eta = \eta_1B` diverges."""
    lam_a = V.array("lam", lam, ndim=1, low=0.0, low_open=True)
    e1 = V.real("eta1", eta1, low=0.0, low_open=True)
    return 2.0 / (e1 * float(lam_a.max()))


def linear_rule_edge(lam, sigma_a, eta1, level) -> float:
    r"""The batch size at which :func:`linear_rule_ratio` reaches ``level`` (> 1): the linear rule's range ends there."""
    lam_a = V.array("lam", lam, ndim=1, low=0.0, low_open=True)
    level = V.real("level", level, low=1.0, low_open=True)
    top = linear_rule_limit(lam_a, eta1)
    def f(b):
        return float(linear_rule_ratio(lam_a, sigma_a, eta1, b)) - level
    return float(optimize.brentq(f, top * 1e-12, top * (1 - 1e-12), xtol=1e-14 * top, rtol=1e-14))


# ----------------------------------------------------------------------------- the square-root rule (sign)
def sign_rule_floor(a, eta, sigma, batch_size) -> float:
    r"""Stationary :math:`E f` of signSGD on :math:`a x^2/2` with additive noise :math:`\sigma/\sqrt B`, lattice offset
    :math:`\eta/2` (:func:`theory.sign_floor.additive_floor`, exact chain)."""
    from theory import (
        sign_floor as sf,  # the sign_floor topic's chain (claims that call this declare uses=)
    )

    b = V.real("batch_size", batch_size, low=0.0, low_open=True)
    sigma = V.real("sigma", sigma, low=0.0, low_open=True)
    return sf.additive_floor(a, eta, sigma / math.sqrt(b))


def sqrt_rule_edge(a, eta1, sigma, level, *, b_max: float = 1e6) -> float:
    r"""The batch size at which the floor under :math:`\eta = \eta_1\sqrt B` reaches ``level`` times its
    :math:`B \to 0` value :math:`\eta_1\sigma\sqrt{2\pi}/8` (the exact chain against the small-:math:`\kappa` constant
    :math:`\sqrt{2\pi}/8` of :mod:`theory.sign_floor`); searched on :math:`(0, b_{\max}]` by Brent's method in
    :math:`\log B`."""
    a = V.real("a", a, low=0.0, low_open=True)
    eta1 = V.real("eta1", eta1, low=0.0, low_open=True)
    sigma = V.real("sigma", sigma, low=0.0, low_open=True)
    level = V.real("level", level, low=1.0, low_open=True)
    b_max = V.real("b_max", b_max, low=1.0)
    base = eta1 * sigma * math.sqrt(2 * math.pi) / 8

    def f(logb):
        b = math.exp(logb)
        return sign_rule_floor(a, eta1 * math.sqrt(b), sigma, b) / base - level

    lo = math.log(1e-4 * sigma / (a * eta1))  # kappa = 1e-4: the floor is at its small-kappa constant there
    hi = math.log(b_max)
    if not f(hi) > 0:
        raise ValueError(f"b_max: the floor ratio stays below level = {level} up to B = {b_max}; expected a larger b_max")
    return float(math.exp(optimize.brentq(f, lo, hi, xtol=1e-10)))


# ----------------------------------------------------------------------------- the second moment's half-life (Adam)
def half_life_beta2(beta2_ref, batch_ref, batch_size) -> np.ndarray:
    r""":math:`\beta_2(B) = \beta_2(B_0)^{B/B_0}`: the decay whose half-life in examples (tokens) is that of
    :math:`\beta_2(B_0)` at :math:`B_0` (:func:`token_half_life` is then the same at every :math:`B`)."""
    b2 = V.real("beta2_ref", beta2_ref, low=0.0, high=1.0, low_open=True, high_open=True)
    b0 = V.real("batch_ref", batch_ref, low=0.0, low_open=True)
    return b2 ** (_batches(batch_size) / b0)


def token_half_life(beta2, batch_size) -> np.ndarray:
    r"""Examples until an EMA of per-step statistics at decay :math:`\beta_2` forgets half: :math:`B\ln\tfrac12/\ln\beta_2`
    (its weights :math:`\beta_2^t` halve after :math:`\ln\tfrac12/\ln\beta_2` steps of :math:`B` examples each)."""
    b2 = V.array("beta2", beta2, ndim=(0, 1), low=0.0, high=1.0, low_open=True, high_open=True)
    b = _batches(batch_size)
    return b * math.log(0.5) / np.log(b2)


def ema_rise(beta2, n_steps: int) -> np.ndarray:
    r""":math:`E v_t / v_\infty = 1 - \beta_2^t`, :math:`t = 1..T`: an EMA started at 0 (Adam's :math:`v_0 = 0`, no bias
    correction) of i.i.d. statistics with mean :math:`v_\infty`; shape ``(len(beta2), T)``."""
    b2 = np.atleast_1d(V.array("beta2", beta2, ndim=(0, 1), low=0.0, high=1.0, low_open=True, high_open=True))
    n_steps = V.integer("n_steps", n_steps, low=1, high=10_000_000)
    V.check_bytes({"beta2": f"{b2.size} decays", "n_steps": n_steps}, 8 * b2.size * n_steps, what="the rise curves")
    return 1.0 - b2[:, None] ** np.arange(1, n_steps + 1)


def linear_beta2_edge(beta2_ref, batch_ref, level) -> float:
    r"""The batch size where the first-order rule :math:`1 - \beta_2 = (1 - \beta_2(B_0))B/B_0` has a token half-life of
    ``level`` (in (0, 1)) times the reference one: :math:`B\ln\beta_2(B_0)/\big(B_0\ln(1 - (1-\beta_2(B_0))B/B_0)\big)`
    falls from 1 as :math:`B` grows (Brent's method on :math:`(B_0, B_0/(1-\beta_2(B_0)))`)."""
    b2 = V.real("beta2_ref", beta2_ref, low=0.0, high=1.0, low_open=True, high_open=True)
    b0 = V.real("batch_ref", batch_ref, low=0.0, low_open=True)
    level = V.real("level", level, low=0.0, high=1.0, low_open=True, high_open=True)
    top = b0 / (1 - b2)

    def f(b):
        return float(b * math.log(b2) / (b0 * math.log(1 - (1 - b2) * b / b0))) - level

    if not f(b0 * (1 + 1e-12)) > 0:
        raise ValueError(f"level: expected a level below the ratio at B = batch_ref, got {level}")
    return float(optimize.brentq(f, b0 * (1 + 1e-12), top * (1 - 1e-12), xtol=1e-12 * top, rtol=1e-14))
