r"""NumPy references of the noisy-quadratic simulators and their benchmark cases.

* :func:`nqm_numpy` -- SGD, heavy ball or Nesterov (optax's look-ahead form) on the diagonal NQM
  :math:`\tfrac12\sum_i\lambda_i(x_i - c_i)^2` along one schedule per run, with the gradient noise given as an
  array (so the same draws can be replayed), a Python loop over steps and arrays over runs; it returns the
  final iterate and the loss at the end of each recording block, as :func:`sims.nqm.simulate` does;
* :func:`abs_numpy` -- SGD on :math:`|x|` with given :math:`\pm1` noise (:func:`sims.noisy_quadratic.abs_sgd`).

``bench_cases(scale)`` times a noise-free heavy-ball sweep over step sizes on the NQM (``make bench``).
"""
from __future__ import annotations

import numpy as np

from sims.bench import BenchCase
from theory import validate as V

__all__ = ["nqm_numpy", "abs_numpy", "bench_cases"]


def nqm_numpy(lam, eta, x0, *, method: str = "sgd", momentum=0.0, noise=None, center=None, n_rec: int = 1) -> dict:
    r"""Runs of the NQM with a Python loop over steps.

    ``lam`` (d,); ``eta`` (R, T) one schedule per run; ``x0`` (R, d); ``momentum`` a scalar or (R,);
    ``noise`` (R, T, d) additive gradient noise already scaled (default none). Heavy ball:
    :math:`m \leftarrow \mu m + g`, :math:`x \leftarrow x - \eta m`; Nesterov: :math:`x \leftarrow x - \eta(g + \mu m)` with the
    new :math:`m`. Returns ``final_x`` (R, d) and ``curve`` (R, n_rec).
    """
    lam = V.array("lam", lam, ndim=1, low=0.0)
    e = V.array("eta", eta, ndim=2, low=0.0)
    R, T = e.shape
    x = V.array("x0", x0, shape=(R, lam.size)).copy()
    V.choice("method", method, ("sgd", "heavy_ball", "nesterov"))
    mu = V.array("momentum", momentum, ndim=(0, 1), low=0.0, high=1.0, high_open=True)
    if mu.shape not in ((), (R,)):
        raise ValueError(f"momentum: expected a scalar or one value per run (shape ({R},)), got shape {mu.shape}")
    mu = np.broadcast_to(mu, (R,))[:, None]
    c = np.zeros(lam.size) if center is None else V.array("center", center, shape=(lam.size,))
    if noise is not None:
        noise = V.array("noise", noise, shape=(R, T, lam.size))
    n_rec = V.integer("n_rec", n_rec, low=1)
    if T % n_rec:
        raise ValueError(f"n_rec: expected a divisor of the number of steps T = {T}, got {n_rec}")
    block = T // n_rec
    m = np.zeros_like(x)
    curve = np.empty((R, n_rec))
    for t in range(T):
        g = lam * (x - c) + (0.0 if noise is None else noise[:, t])
        et = e[:, t:t + 1]
        if method == "sgd":
            x = x - et * g
        else:
            m = mu * m + g
            x = x - et * (m if method == "heavy_ball" else g + mu * m)
        if (t + 1) % block == 0:
            curve[:, (t + 1) // block - 1] = 0.5 * np.sum(lam * (x - c) ** 2, axis=1)
    return {"final_x": x, "curve": curve}


def abs_numpy(eta, x0: float, xi) -> np.ndarray:
    r""":math:`|x_T|` of :math:`x^+ = x - \eta_t(\mathrm{sign}(x) + \xi_t)` for noise ``xi`` (R, T-1), schedules ``eta`` (R, T)."""
    e = V.array("eta", eta, ndim=2, low=0.0)
    if e.shape[1] < 2:
        raise ValueError(f"eta: expected at least 2 step sizes per schedule, got shape {e.shape}")
    z = V.array("xi", xi, shape=(e.shape[0], e.shape[1] - 1))
    x = np.full(e.shape[0], V.real("x0", x0))
    for t in range(e.shape[1] - 1):
        x = x - e[:, t] * (np.sign(x) + z[:, t])
    return np.abs(x)


def bench_cases(scale: str = "small") -> list[BenchCase]:
    """A noise-free heavy-ball sweep over step sizes on a 64-mode NQM (units: mode updates)."""
    V.choice("scale", scale, ("small", "large"))
    import jax

    from sims.nqm import simulate

    n, T, d = (256, 2000, 64) if scale == "small" else (16384, 10000, 64)
    lam = np.logspace(0, -3, d)
    etas = np.linspace(0.05, 1.5, n)
    sched = np.repeat(etas[:, None], T, axis=1)

    def run_jax():
        out = simulate(jax.random.key(0), T=T, eta=sched, x0=np.ones(d), lam=lam, method="heavy_ball", momentum=0.5,
                       n_rec=4)
        return out["final_x"][:, 0], out["curve"][:, 0]

    def run_numpy():
        out = nqm_numpy(lam, sched, np.ones((n, d)), method="heavy_ball", momentum=0.5, n_rec=4)
        return out["final_x"], out["curve"]

    def check(jx, npy):
        np.testing.assert_allclose(jx[0], npy[0], rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(jx[1], npy[1], rtol=1e-9, atol=1e-12)

    return [BenchCase(name=f"noisy_quadratic.heavy_ball_sweep[{n}x{T}x{d}]", unit="mode updates", work=float(n * T * d),
                      run_jax=run_jax, run_numpy=run_numpy, check=check,
                      # per mode and step: gradient 1, buffer and step 4 (with the zero decay terms 4 more), the
                      # running second moment 3, the max-norm and divergence test 4 (abs, compare, select, max)
                      cost={"flop": 16})]
