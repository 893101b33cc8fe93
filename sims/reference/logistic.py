r"""NumPy reference of :func:`sims.logistic.gd` and the logistic benchmark cases.

:func:`gd_numpy` runs the same float64 recursion :math:`w_{t+1} = w_t + \eta \sum_i a_i
\sigma(-z_i^\top w_t) z_i` with a Python loop over steps and arrays over the grid, and computes the
same divergence flags (first non-finite iterate, first iterate that strictly separates the data).
"""
from __future__ import annotations

import numpy as np
from scipy import special

from sims.bench import BenchCase
from sims.logistic import _validate_grid, gd
from theory import validate as V

__all__ = ["gd_numpy", "bench_cases"]


def gd_numpy(z, weights, eta, inits, n_steps: int, *, keep_last: int = 1, max_bytes=None) -> dict[str, np.ndarray]:
    """Vectorized NumPy reference of :func:`sims.logistic.gd`: same arguments, same outputs (``max_bytes`` too).

    ``keep_last`` must lie in ``1..n_steps`` (``ValueError`` otherwise: the tail holds exactly the
    last ``keep_last`` iterates, never uninitialised memory).
    """
    z2, a, steps, w0, n_steps, _ = _validate_grid(z, weights, eta, inits, n_steps, 1)
    keep = V.integer("keep_last", keep_last, low=1, high=n_steps)
    m, k, d = steps.size, w0.shape[0], w0.shape[1]
    V.check_bytes({"keep_last": keep, "runs": m * k, "d": d}, 2 * 8 * keep * m * k * d,
                  what="the kept iterates of every run", max_bytes=max_bytes)
    W = np.broadcast_to(w0[None], (m, k, d)).reshape(m * k, d).copy()
    S = np.repeat(steps, k)[:, None]
    active = a > 0
    never = np.full(m * k, -1)

    def separates(margins):
        return np.all((margins > 0) | ~active, axis=1)

    # the margins z_i^T w are computed once per step and serve both the separation test and the next gradient
    margins = W @ z2.T
    bad, esc = never.copy(), np.where(separates(margins), 0, never)
    tail = np.empty((keep, m * k, d))
    with np.errstate(over="ignore", invalid="ignore"):
        for t in range(1, n_steps + 1):
            W += S * ((a * special.expit(-margins)) @ z2)
            margins = W @ z2.T
            bad = np.where((bad < 0) & ~np.all(np.isfinite(W), axis=1), t, bad)
            esc = np.where((esc < 0) & separates(margins), t, esc)
            if t > n_steps - keep:
                tail[t - 1 - (n_steps - keep)] = W
    first = np.where(bad < 0, esc, np.where(esc < 0, bad, np.minimum(bad, esc)))
    return {"w": tail.transpose(1, 0, 2).reshape(m, k, keep, d), "diverged": (first >= 0).reshape(m, k),
            "diverged_step": first.reshape(m, k), "escaped": (esc >= 0).reshape(m, k)}


def _bench_data() -> tuple[np.ndarray, np.ndarray, float]:
    rng = np.random.default_rng(0)
    n = 64
    z = np.concatenate([rng.uniform(0.2, 3.0, n // 2), -rng.uniform(0.2, 3.0, n // 2)])
    weights = rng.dirichlet(np.ones(n))
    scale = 0.25 * float(np.sum(weights * z * z))  # a curvature scale; the exact lambda is not needed to time a sweep
    return z, weights, scale


def _check(jx: dict, npy: dict) -> None:
    np.testing.assert_allclose(jx["w"], npy["w"], rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(jx["diverged_step"], npy["diverged_step"])


def _run_jax(z, weights, eta, inits, n_steps):
    return gd(z, weights, eta, inits, n_steps, keep_last=1)


# Arithmetic per GD update x data point (d = 1): the margin z*w, the sigmoid (one exp and a division),
# the weighted gradient term and its sum, the separation and finiteness tests.
_COST = {"flop": 9, "exp": 1}
_INITS = 4  # inits per step size in every case: the grid is (step sizes) x 4


def _case(m: int, n_steps: int, scaling_steps: int) -> BenchCase:
    """The bifurcation sweep with ``m`` step sizes x 4 inits and ``n_steps`` GD steps per run."""
    z, weights, curvature = _bench_data()
    eta = np.linspace(0.5, 3.0, m) / curvature
    inits = np.linspace(-2, 2, _INITS)
    return BenchCase(
        name=f"logistic.bifurcation_sweep[{m}x{_INITS}x{n_steps}]", unit="GD updates x data points",
        work=float(m * _INITS * n_steps * z.size),
        run_jax=lambda: _run_jax(z, weights, eta, inits, n_steps),
        run_numpy=lambda: gd_numpy(z, weights, eta, inits, n_steps, keep_last=1), check=_check, cost=_COST,
        at_size=lambda n: _case(max(1, n // _INITS), scaling_steps, scaling_steps), runs=m * _INITS)


def bench_cases(scale: str = "small") -> list[BenchCase]:
    """Bifurcation sweep: step sizes x inits on a 64-point 1-D dataset; unit = GD updates x data points.

    ``scale``: "small" (seconds on a laptop) or "large" (GPU-sized). The case also feeds the
    scaling table (runs from 1e2 to 1e6, with 20 steps per run at small scale and 200 at large).
    """
    V.choice("scale", scale, ("small", "large"))
    m, n_steps, scaling_steps = (512, 1000, 20) if scale == "small" else (16384, 2000, 200)
    return [_case(m, n_steps, scaling_steps)]
