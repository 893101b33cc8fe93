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
from theory import _validate as V

__all__ = ["gd_numpy", "bench_cases"]


def gd_numpy(z, weights, eta, inits, n_steps: int, *, keep_last: int = 1) -> dict[str, np.ndarray]:
    """Vectorized NumPy reference of :func:`sims.logistic.gd`: same arguments, same outputs.

    ``keep_last`` must lie in ``1..n_steps`` (``ValueError`` otherwise: the tail holds exactly the
    last ``keep_last`` iterates, never uninitialised memory).
    """
    z2, a, steps, w0, n_steps, _ = _validate_grid(z, weights, eta, inits, n_steps, 1)
    keep = V.integer("keep_last", keep_last, low=1, high=n_steps)
    m, k, d = steps.size, w0.shape[0], w0.shape[1]
    W = np.broadcast_to(w0[None], (m, k, d)).reshape(m * k, d).copy()
    S = np.repeat(steps, k)[:, None]
    active = a > 0
    never = np.full(m * k, -1)

    def separates(W):
        return np.all((W @ z2.T > 0) | ~active, axis=1)

    bad, esc = never.copy(), np.where(separates(W), 0, never)
    tail = np.empty((keep, m * k, d))
    with np.errstate(over="ignore", invalid="ignore"):
        for t in range(1, n_steps + 1):
            W += S * ((a * special.expit(-(W @ z2.T))) @ z2)
            bad = np.where((bad < 0) & ~np.all(np.isfinite(W), axis=1), t, bad)
            esc = np.where((esc < 0) & separates(W), t, esc)
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


def bench_cases(scale: str = "small") -> list[BenchCase]:
    """Bifurcation sweep: step sizes x inits on a 64-point 1-D dataset; unit = GD updates x data points.

    ``scale``: "small" (seconds on a laptop) or "large" (GPU-sized).
    """
    V.choice("scale", scale, ("small", "large"))
    z, weights, curvature = _bench_data()
    m, k, n_steps = (512, 4, 1000) if scale == "small" else (16384, 16, 2000)
    eta = np.linspace(0.5, 3.0, m) / curvature
    inits = np.linspace(-2, 2, k)
    work = float(m * k * n_steps * z.size)
    return [BenchCase(
        name=f"logistic.bifurcation_sweep[{m}x{k}x{n_steps}]", unit="GD updates x data points", work=work,
        run_jax=lambda: _run_jax(z, weights, eta, inits, n_steps),
        run_numpy=lambda: gd_numpy(z, weights, eta, inits, n_steps, keep_last=1), check=_check)]
