r"""NumPy references of :mod:`sims.sde` and its benchmark case.

* :func:`dcsgd_quartic` -- DCSGD on :math:`x^4/4` (Bernoulli compressors, multiplicative Gaussian noise,
  N agents), many paths at once, with the same divergence rule as the JAX simulator;
* :func:`heun_ode` -- the deterministic Heun path of a scalar ODE (cross-checks :func:`sims.sde.sde_path`);
* :func:`bench_cases` -- the JAX simulator against :func:`dcsgd_quartic` for ``make bench``.
"""
from __future__ import annotations

import math
from typing import Callable

import jax
import numpy as np

from sims.bench import BenchCase
from theory.validate import array, check_bytes, choice, integer, real

__all__ = ["dcsgd_quartic", "heun_ode", "bench_cases"]


def dcsgd_quartic(x0, eta, q, sigma1, n_agents, n_steps, rng: np.random.Generator, bound: float = 1e100, *,
                  max_bytes=None) -> dict:
    r"""DCSGD on :math:`f = x^4/4`: :math:`x^+ = x - \eta\frac1N\sum_i B_i(g + |g|\sigma_1\xi_i)/q`, :math:`g = x^3`,
    drawn as :math:`x^+ = x - \frac{\eta}{Nq}(Kg + |g|\sigma_1\sqrt K Z)` with :math:`K = \sum_i B_i`, one normal
    :math:`Z` (the same law).

    Vectorized over the paths in ``x0`` (1-D); a path whose state leaves :math:`|x| \le` ``bound`` or whose loss
    turns non-finite is frozen and flagged. Returns ``x`` (final states), ``diverged`` and ``diverged_at``
    (first diverged step, -1 if none). ``bound``: a finite positive divergence threshold. ``max_bytes``: the
    allocation limit (:func:`theory.validate.byte_limit`) for a step's ``(n_agents, paths)`` compressor draws.
    """
    x = array("x0", x0, ndim=1).copy()
    eta = real("eta", eta, low=0.0, low_open=True)
    q = real("q", q, low=0.0, high=1.0, low_open=True)
    sigma1 = real("sigma1", sigma1, low=0.0)
    n_agents = integer("n_agents", n_agents, low=1)
    n_steps = integer("n_steps", n_steps, low=1)
    bound = real("bound", bound, low=0.0, low_open=True)
    check_bytes({"n_agents": n_agents, "x0": f"{x.size} paths"}, 2 * 8 * n_agents * x.size,
                what="a step's compressor draws and their comparison", max_bytes=max_bytes)
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng: expected a numpy Generator (np.random.default_rng(seed)), got {type(rng).__name__}")
    bad = np.zeros(x.shape, bool)
    at = np.full(x.shape, -1)
    for k in range(n_steps):  # the reference steps in Python on purpose: it is the slow baseline
        g = x**3
        # sum_i B_i |g| sigma1 xi_i / q over the kept agents is |g| sigma1 sqrt(K) Z / q in law (K kept, Z one normal),
        # the same reduction as the JAX simulator's
        kept = (rng.random((n_agents,) + x.shape) < q).sum(axis=0)
        z = rng.standard_normal(x.shape)
        msg_mean = (kept * g + np.abs(g) * sigma1 * np.sqrt(kept) * z) / (q * n_agents)
        with np.errstate(all="ignore"):
            x_new = x - eta * msg_mean
            # same rule as the simulator: the state leaves the bound, or the loss x^4/4 overflows
            now = (~np.isfinite(x_new) | (np.abs(x_new) > bound) | ~np.isfinite(x_new**4 / 4)) & ~bad
        at = np.where(now, k + 1, at)
        bad |= now
        x = np.where(bad, x, x_new)
    return {"x": x, "diverged": bad, "diverged_at": at}


def heun_ode(b: Callable[[float], float], x0: float, dt: float, n_steps: int) -> float:
    r"""Heun's method for :math:`\dot x = b(x)`: :math:`x^+ = x + \tfrac{dt}{2}[b(x) + b(x + dt\,b(x))]`.

    A path that blows up is returned as it is (inf: divergence is data); a drift that is NaN at a finite
    point is a ``ValueError`` naming ``b``.
    """
    if not callable(b):
        raise TypeError(f"b: expected a callable drift, got {type(b).__name__}")
    x = real("x0", x0)
    dt = real("dt", dt, low=0.0, low_open=True)
    for _ in range(integer("n_steps", n_steps, low=1)):
        bx = b(x)
        b2 = b(x + dt * bx)
        if math.isfinite(x) and (math.isnan(bx) or math.isnan(b2)):
            raise ValueError(f"b: the drift returned NaN near the finite point x = {x!r}")
        x = x + 0.5 * (bx + b2) * dt
    return x


def bench_cases(scale: str) -> list[BenchCase]:
    """DCSGD on x^4/4: paths x steps per second, JAX (``sims.sde.paths``: run_grid + lax.scan) vs NumPy."""
    from sims import sde as S

    choice("scale", scale, ("small", "large"))
    n_paths, n_steps = (2000, 500) if scale == "small" else (200_000, 3000)
    cfg = S.Config(problem="quartic", algo="dcsgd", n_agents=4, compressor="bernoulli", noise="gaussian",
                   n_steps=n_steps, n_record=1)
    grid = {"key": jax.random.split(jax.random.key(0), n_paths), "x0": np.full((n_paths, 1), 1.5),
            "eta": np.full(n_paths, 0.1), "omega": np.full(n_paths, 1.0), "sigma1": np.full(n_paths, 1.0)}

    def run_jax():
        out = S.paths(cfg, grid, chunk_size=n_paths)
        return out["diverged"], out["x"][:, 0]

    def run_numpy():
        out = dcsgd_quartic(np.full(n_paths, 1.5), 0.1, 0.5, 1.0, 4, n_steps, np.random.default_rng(0))
        return out["diverged"], out["x"]

    def check(a, b):
        # Different random streams, so the two sides agree in law: the final second moment E x_T^2 (which a wrong
        # keep probability, noise scale or step moves by many standard errors; at this step no path diverges, so the
        # divergence fractions alone would compare 0 with 0) within 5 standard errors of the difference, and the
        # divergence fractions within 5 binomial standard errors.
        (da, xa), (db, xb) = a, b
        ma, mb = float(np.mean(xa**2)), float(np.mean(xb**2))
        se = math.hypot(np.std(xa**2, ddof=1), np.std(xb**2, ddof=1)) / math.sqrt(n_paths)
        assert abs(ma - mb) < 5 * se, (ma, mb, se)
        fa, fb = float(np.mean(da)), float(np.mean(db))
        se_f = math.sqrt(max(fa * (1 - fa), 1e-4) / n_paths) * math.sqrt(2)
        assert abs(fa - fb) < 5 * se_f + 1e-9, (fa, fb)

    # per path-step (N = 4 agents, d = 1): 4 Bernoulli masks (one 32-bit word each: half a float64 uniform) and one
    # Gaussian draw (the agents' noise reduced to one value); gradient, noise scale, mask weights and their sums, step
    # and the divergence test ~30 flops; two square roots and a division
    return [BenchCase("sde: DCSGD x^4/4 paths x steps", "path-steps", n_paths * n_steps, run_jax, run_numpy, check,
                      cost={"flop": 30, "exp": 3, "normal": 1, "uniform": 2})]
