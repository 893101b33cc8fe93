r"""NumPy reference of :func:`sims.adaptive_eos.adam_quadratic` and its benchmark cases.

* :func:`adam_quadratic_numpy` -- Adam (:math:`\epsilon = 0`, bias-corrected; RMSProp at :math:`\beta_1 = 0`) on
  :math:`\tfrac12 x^\top Hx`, every run at once as (m, d) arrays with a Python loop over steps: the gradient by one
  matrix product (``x @ H`` for a shared H, a stacked ``@`` for one H per run), the same underflow and divergence
  flags, and over the tail the preconditioned sharpness :math:`\eta\lambda_{\max}(P^{-1/2}HP^{-1/2})` of every run
  per step by one stacked ``np.linalg.eigvalsh`` (LAPACK's values-only solver); in one and two dimensions by the
  closed form of the top eigenvalue instead. Same arguments and outputs as the simulator;
* :func:`bench_cases` -- the simulator against :func:`adam_quadratic_numpy` for ``make bench``: the topic's 6-D
  runs (a dense eigenvalue problem per tail step) and its 1-D runs.

:func:`sims.adaptive_eos.adam_mlp` has no reference here: its gradients, Hessian-vector products and Lanczos starts
come from JAX (``jax.grad``, forward-over-reverse, ``jax.random``), which a NumPy version would have to rebuild by
hand for no new check (``tests/test_adaptive_eos.py`` already checks it against a dense Hessian).
"""
from __future__ import annotations

import numpy as np

from sims.adaptive_eos import _quadratic_inputs
from sims.bench import SCALES, BenchCase
from theory import validate as V

__all__ = ["adam_quadratic_numpy", "bench_cases"]

#: the smallest normal float64 (:data:`sims.adaptive_eos.TINY`)
TINY = float(np.finfo(np.float64).tiny)
#: a run whose iterate leaves this bound (or turns non-finite) has diverged (:func:`sims.sweep.diverged`)
BOUND = 1e150


def _top_eigenvalue(A: np.ndarray) -> np.ndarray:
    r""":math:`\lambda_{\max}` of a stack (m, d, d) of symmetric matrices: closed forms for d <= 2, else LAPACK's
    values-only symmetric solver (``eigvalsh``, ascending) on the whole stack at once."""
    d = A.shape[-1]
    if d == 1:
        return A[:, 0, 0].copy()
    if d == 2:
        a, b, c = A[:, 0, 0], A[:, 1, 0], A[:, 1, 1]
        return 0.5 * (a + c) + np.hypot(0.5 * (a - c), b)
    return np.linalg.eigvalsh(A)[:, -1]


def _sharpness(H: np.ndarray, p: np.ndarray, eta: np.ndarray) -> np.ndarray:
    r""":math:`\eta\lambda_{\max}(P^{-1/2}HP^{-1/2})` per run; ``H`` (d, d) or (m, d, d), ``p`` (m, d) positive."""
    r = 1.0 / np.sqrt(p)
    return eta * _top_eigenvalue(r[:, :, None] * H * r[:, None, :])


def adam_quadratic_numpy(H, x0, eta, beta1, beta2, *, n_steps: int, n_blocks: int = 10, block: int = 100,
                         precond=None, max_bytes=None) -> dict[str, np.ndarray]:
    r"""Adam (:math:`\epsilon = 0`, bias-corrected) on :math:`\tfrac12 x^\top Hx`, one run per row of ``x0``, in NumPy.

    Arguments and outputs are those of :func:`sims.adaptive_eos.adam_quadratic` (``H`` (d, d) shared or (m, d, d);
    ``x0`` (m, d) or one start for every run of the per-run ``eta``, ``beta1``, ``beta2``; a tail of ``n_blocks``
    blocks of ``block`` steps with per-block statistics; ``precond`` a frozen diagonal or None). ``max_bytes``: the
    allocation limit (:func:`theory.validate.byte_limit`) for a tail step's (m, d, d) matrices.
    """
    H, x0, eta, b1, b2, n_steps, n_blocks, block, p = _quadratic_inputs(H, x0, eta, beta1, beta2, n_steps, n_blocks,
                                                                         block, precond)
    m, d = x0.shape
    V.check_bytes({"x0": f"{m} runs", "d": d}, 8 * m * (3 * d * d + 16 * d + 8 * n_blocks),
                  what="a tail step's (m, d, d) matrices, the runs' states and block statistics", max_bytes=max_bytes)

    # the gradient of x^T H x / 2 is (H + H^T) x / 2: H itself for the (round-off) symmetric H accepted here
    Hs = 0.5 * (H + np.swapaxes(H, -1, -2))
    shared = H.ndim == 2

    def grad(x):
        return x @ Hs if shared else (Hs @ x[:, :, None])[:, :, 0]

    x = x0.astype(float).copy()
    mom, v = np.zeros((m, d)), np.zeros((m, d))
    e, c1, c2 = eta[:, None], b1[:, None], b2[:, None]
    d1, d2 = 1.0 - c1, 1.0 - c2
    pow1, pow2 = np.ones((m, 1)), np.ones((m, 1))
    bad_u, bad_d = np.full(m, -1), np.full(m, -1)
    n_burn = n_steps - n_blocks * block
    stats = {k: np.empty((m, n_blocks)) for k in ("sharp_mean", "sharp_max", "loss_mean", "period2", "sharp_sq")}
    sharp_acc = np.empty((block, m))
    loss_acc, per_acc = np.empty((block, m)), np.empty((block, m))
    frozen_sharp = _sharpness(H, p, eta) if precond is not None else None
    x_prev2 = x_prev = x_tail = stuck = None
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        for t in range(1, n_steps + 1):
            tail = t > n_burn
            g = grad(x)
            mom *= c1
            mom += d1 * g
            v *= c2
            v += d2 * g * g
            pow1 *= c1
            pow2 *= c2
            m_hat, v_hat = mom / (1.0 - pow1), v / (1.0 - pow2)
            if precond is None:
                pos = v_hat > 0
                all_ok = pos.all()
                # a zero v_hat entry (a gradient exactly 0 so far, or squares below float64's range) steps by 0
                direction = m_hat / np.sqrt(v_hat) if all_ok else \
                    np.where(pos, m_hat / np.sqrt(np.where(pos, v_hat, 1.0)), 0.0)
            else:
                direction = m_hat / p
            x_new = x - e * direction
            under = np.any(np.abs(g) < TINY, axis=1)
            if under.any():
                bad_u = np.where((bad_u < 0) & under, t, bad_u)
            out = ~np.all(np.abs(x_new) <= BOUND, axis=1)  # non-finite or beyond the bound
            if out.any():
                bad_d = np.where((bad_d < 0) & out, t, bad_d)
                stuck = (bad_d >= 0)[:, None]
            if stuck is not None:
                x_new = np.where(stuck, x, x_new)  # a diverged run is frozen at its last finite iterate
            if tail:
                k = (t - n_burn - 1) % block
                if t == n_burn + 1:
                    x_tail = x_prev2 = x_prev = x
                if precond is None and all_ok:
                    sharp_acc[k] = _sharpness(H, np.sqrt(v_hat), eta)  # P = sqrt(v_hat) of this step
                elif precond is None:
                    # a zero entry of P (a gradient exactly 0 so far: an underflow-flagged run, whose statistics are
                    # NaN) gets an infinite sharpness without a 0/0 in the solver
                    ok = np.all(pos, axis=1)
                    sharp_acc[k] = np.where(ok, _sharpness(H, np.sqrt(np.where(ok[:, None], v_hat, 1.0)), eta), np.inf)
                else:
                    sharp_acc[k] = frozen_sharp
                loss_acc[k] = 0.5 * np.sum(x * g, axis=1)  # at the point where this step took its gradient
                per_acc[k] = np.max(np.abs(x - x_prev2), axis=1) / np.maximum(np.max(np.abs(x), axis=1), TINY)
                x_prev2, x_prev = x_prev, x
                if k == block - 1:
                    j = (t - n_burn - 1) // block
                    flagged = (bad_u >= 0) | (bad_d >= 0)
                    for key, val in (("sharp_mean", sharp_acc.mean(axis=0)), ("sharp_max", sharp_acc.max(axis=0)),
                                     ("loss_mean", loss_acc.mean(axis=0)), ("period2", per_acc.max(axis=0)),
                                     ("sharp_sq", (sharp_acc * sharp_acc).mean(axis=0))):
                        stats[key][:, j] = np.where(flagged, np.nan, val)
            x = x_new
        log_norm = np.log(np.linalg.norm(x, axis=1))
        out = {"x": x, **stats, "log_growth": log_norm - np.log(np.linalg.norm(x0, axis=1)),
               "log_growth_tail": log_norm - np.log(np.linalg.norm(x_tail, axis=1)),
               "underflow_step": bad_u, "diverged_step": bad_d}
    out["underflowed"] = bad_u >= 0
    out["diverged"] = bad_d >= 0
    return out


_STATS = ("sharp_mean", "sharp_max", "sharp_sq", "loss_mean", "period2")


def _check(jx: dict, npy: dict) -> None:
    r"""Adam with :math:`\epsilon = 0` at the edge of stability is chaotic: the two sides' float64 round-off (a
    different gradient summation order, LAPACK's eigensolver with and without eigenvectors) separates some runs'
    trajectories after a few hundred steps, so only the start can be compared number for number.

    * The first tail block (the bench runs have no burn-in: it is steps 1..block) of every run, all five statistics,
      to a relative 1e-9: the two sides agree there to 1e-12 (measured, 6-D and 1-D, block = 20), so 1e-9 is
      round-off with room, while an error in the step, the moments, the preconditioner or the sharpness moves them
      by far more. The underflow and divergence steps must be equal.
    * The last block: the two sides' sharpness means, paired by run, must differ by less than 5 standard errors of
      the mean paired difference (runs still together contribute 0; separated runs are two samples of the same
      attractor's block mean).
    """
    for k in ("underflow_step", "diverged_step"):
        np.testing.assert_array_equal(jx[k], npy[k], err_msg=k)
    for k in _STATS:
        np.testing.assert_allclose(jx[k][:, 0], npy[k][:, 0], rtol=1e-9, atol=0, err_msg=f"{k}, first block")
    diff = jx["sharp_mean"][:, -1] - npy["sharp_mean"][:, -1]
    se = diff.std(ddof=1) / np.sqrt(diff.size)
    assert abs(diff.mean()) <= 5 * se, f"last-block sharpness: paired mean difference {diff.mean():.3g}, SE {se:.3g}"


def _problem(d: int, m: int, seed: int = 0) -> tuple[np.ndarray, ...]:
    r"""The topic's runs (:mod:`paper_checks.adaptive_eos.experiments`): :math:`\eta = 0.01`, :math:`\beta_1` in
    {0 (RMSProp), 0.5, 0.9, 0.95} x :math:`\beta_2` in {0.9, 0.99, 0.999}; in 6-D one rotated quadratic per run
    (eigenvalues geomspace(10, 0.1), a seeded rotation), in 1-D :math:`a = 1`; starts 2..10 times Adam's EMA-cycle
    amplitude :math:`A^*` with random signs (and, in 6-D, magnitudes x 0.5..1.5)."""
    rng = np.random.default_rng(seed)
    b1 = np.resize(np.repeat([0.0, 0.5, 0.9, 0.95], 3), m)
    b2 = np.resize([0.9, 0.99, 0.999], m)
    if d == 1:
        H = np.ones((1, 1))
    else:
        H = np.empty((m, d, d))
        for i in range(m):
            q, r = np.linalg.qr(rng.normal(size=(d, d)))
            q = q * np.sign(np.diag(r))
            H[i] = q @ np.diag(np.geomspace(10.0, 0.1, d)) @ q.T
            H[i] = 0.5 * (H[i] + H[i].T)
    amp = 0.01 * (1 - b1) / (2 * (1 + b1))  # A* = eta (1 - beta_1) / (2 (1 + beta_1))
    x0 = rng.uniform(2, 10, size=(m, 1)) * amp[:, None] * rng.choice([-1.0, 1.0], size=(m, d))
    if d > 1:
        x0 = x0 * rng.uniform(0.5, 1.5, size=(m, d))
    return H, x0, np.full(m, 0.01), b1, b2


# Arithmetic per run-step (float64). Every step, per coordinate: the Adam update (moments 7, bias corrections 2
# divisions, the eps = 0 direction: compare, 2 selects, a square root and a division, the step 2, the underflow and
# divergence tests 6), 18 flops and 4 "exp"; the gradient 2 d^2. Every tail step: the preconditioner (a square root,
# a square root and a reciprocal per coordinate, 3 "exp"), the scaled matrix 2 d^2, the loss 2 d, period2 4 d and a
# division; the top eigenvalue (d > 2): a values-only symmetric solver, textbook 4 d^3 / 3 for the tridiagonal
# reduction and ~14 d^2 for the root-free QL sweeps (about d^2 divisions) -- JAX's solver also forms the
# eigenvectors, which is not counted.
def _cost(d: int) -> dict[str, float]:
    eig = (4 * d**3 / 3 + 14 * d * d, d * d) if d > 2 else ((0, 0) if d == 1 else (8, 2))
    return {"flop": 18 * d + 2 * d * d + 2 * d * d + 6 * d + 4 + eig[0], "exp": 7 * d + 1 + eig[1]}


def _case(d: int, m: int, n_steps: int, block: int) -> BenchCase:
    H, x0, eta, b1, b2 = _problem(d, m)
    kw = {"n_steps": n_steps, "n_blocks": n_steps // block, "block": block}

    def run_jax():
        from sims.adaptive_eos import adam_quadratic

        return adam_quadratic(H, x0, eta, b1, b2, **kw)

    return BenchCase(f"adaptive_eos.adam_quadratic[{d}-D, {m}x{n_steps}]",
                     "run-steps" + (f" (a {d}x{d} eigensolve each)" if d > 2 else ""), float(m * n_steps),
                     run_jax, lambda: adam_quadratic_numpy(H, x0, eta, b1, b2, **kw), _check, cost=_cost(d),
                     runs=m)


def bench_cases(scale: str = "small") -> list[BenchCase]:
    r"""Adam (:math:`\epsilon = 0`) on the topic's quadratics, every step in the tail (the preconditioned sharpness
    measured at each): 6-D (a dense 6 x 6 eigenvalue problem per run-step) and 1-D (a closed form in NumPy). Units:
    run-steps. ``small``: 64 runs x 1000 steps (6-D) and 128 x 4000 (1-D); ``large``: 4096 x 2000 and 65536 x 5000."""
    V.choice("scale", scale, SCALES)
    small = scale == "small"
    return [_case(6, 64 if small else 4096, 1000 if small else 2000, 20),
            _case(1, 128 if small else 65536, 4000 if small else 5000, 20)]
