r"""NumPy references of :mod:`sims.batch_size` and their benchmark cases.

* :func:`one_step_numpy` -- the slope :math:`\ell'(0) = -\hat g_B^\top G` and curvature :math:`\ell''(0) = \hat g_B^\top
  H\hat g_B` of the loss along one minibatch step, :math:`\hat g_B = G + R\bar r` with :math:`\bar r` the mean of
  :math:`B` Rademacher sign vectors (:func:`sims.batch_size.one_step`): the :math:`B` signs of a coordinate are
  :math:`B` fair random bits, summed by a population count of the generator's raw 64-bit words (so the work per draw
  grows with :math:`B/64`, not :math:`B`), and the factor :math:`R` is applied once per draw to the mean sign vector
  (linearity), one matrix product for all draws; or with the per-draw sign sums given as an array (so the
  simulator's own draws can be replayed);
* :func:`second_moment_ema_numpy` -- Adam's second-moment EMA :math:`u \leftarrow \beta_2u + (1-\beta_2)z^2` from 0 on
  standard normals (:func:`sims.batch_size.second_moment_ema`, whose output :math:`v_t/(\sigma^2/B)` is this
  :math:`u_t`: the noise level cancels), a Python loop over steps, arrays over configurations and chains, the mean
  over chains and its standard error kept step by step;
* :func:`bench_cases` -- both simulators against these for ``make bench``.
"""
from __future__ import annotations

import math

import numpy as np

from sims.batch_size import _one_step_inputs
from sims.bench import BenchCase
from theory import validate as V

__all__ = ["one_step_numpy", "second_moment_ema_numpy", "bench_cases"]


def _rng(rng) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng: expected a numpy Generator (np.random.default_rng(seed)), got {type(rng).__name__}")
    return rng


def _sign_sums(rng: np.random.Generator, b: int, shape: tuple) -> np.ndarray:
    """Sums of ``b`` independent Rademacher signs, ``shape`` of them: ``2 * (ones among b fair bits) - b``."""
    count = np.zeros(shape, np.int64)
    for start in range(0, b, 64):
        word = rng.bit_generator.random_raw(shape)
        if b - start < 64:
            word &= np.uint64((1 << (b - start)) - 1)
        count += np.bitwise_count(word)
    return 2 * count - b


def one_step_numpy(theta, H, Sigma, batch_size, *, n_draws: int, rng: np.random.Generator | None = None,
                   sign_sums=None, max_bytes=None) -> dict:
    r"""Per-draw slope and curvature of the loss along one minibatch step, for each batch size.

    Args:
      theta: the point (d,).
      H: the Hessian (d, d), symmetric PSD.
      Sigma: the per-example gradient covariance (d, d), positive definite (its Cholesky factor :math:`R` scales the
        signs, as in the simulator).
      batch_size: integers in ``1..2**20``, a scalar or (k,).
      n_draws: minibatches per batch size, >= 2.
      rng: a NumPy ``Generator`` drawing the signs (exactly one of ``rng`` and ``sign_sums``).
      sign_sums: the per-draw sums of the :math:`B` example sign vectors, integers (k, n_draws, d), each of modulus at
        most its :math:`B` and of its parity.
      max_bytes: the allocation limit (:func:`theory.validate.byte_limit`) for one batch size's draws.

    Returns:
      ``d1`` and ``d2`` (k, n_draws): :math:`\ell'(0)` and :math:`\ell''(0)` per draw; ``batch_size`` (k,).
    """
    th, h, R, b, n = _one_step_inputs(theta, H, Sigma, batch_size, n_draws)
    d = th.size
    if (rng is None) == (sign_sums is None):
        raise ValueError("rng, sign_sums: give exactly one of rng (a NumPy Generator) or sign_sums (the signs' sums)")
    if rng is not None:
        _rng(rng)
    else:
        sign_sums = V.integers("sign_sums", sign_sums, ndim=3)
        if sign_sums.shape != (b.size, n, d):
            raise ValueError(f"sign_sums: expected shape ({b.size}, {n}, {d}) (batch sizes, draws, d), got "
                             f"{sign_sums.shape}")
        big = b[:, None, None]
        if np.any(np.abs(sign_sums) > big) or np.any((sign_sums + big) % 2):
            raise ValueError("sign_sums: each sum of B signs must lie in -B..B with the parity of B")
    V.check_bytes({"n_draws": n, "theta": f"d = {d}"}, 8 * 4 * n * d, what="one batch size's sign sums and gradients",
                  max_bytes=max_bytes)
    G = h @ th
    d1, d2 = np.empty((b.size, n)), np.empty((b.size, n))
    for i, bi in enumerate(b.tolist()):
        sums = _sign_sums(rng, bi, (n, d)) if rng is not None else sign_sums[i]
        g = G + (sums / bi) @ R.T
        d1[i] = -(g @ G)
        d2[i] = np.einsum("nd,nd->n", g @ h, g)
    return {"d1": d1, "d2": d2, "batch_size": b}


def second_moment_ema_numpy(beta2, *, n_steps: int, n_chains: int, rng: np.random.Generator | None = None,
                            noise=None, paired: bool = False, max_bytes=None) -> dict:
    r"""Adam's second-moment EMA from 0 on squared standard normals, mean over chains and its standard error.

    :math:`u_{t+1} = \beta_2u_t + (1-\beta_2)z_t^2`, :math:`u_0 = 0`: :func:`sims.batch_size.second_moment_ema`'s
    :math:`v_t/(\sigma^2/B)`, which depends on neither :math:`\sigma` nor :math:`B`.

    Args:
      beta2: decays in (0, 1), (G,).
      n_steps: steps per chain, >= 1.
      n_chains: chains per configuration, >= 2.
      rng: a NumPy ``Generator`` drawing the normals (exactly one of ``rng`` and ``noise``).
      noise: the standard normals themselves, (G, n_chains, n_steps), or (n_chains, n_steps) with ``paired``.
      paired: a bool: every configuration's chain :math:`j` sees the same normals (common random numbers).
      max_bytes: the allocation limit (:func:`theory.validate.byte_limit`) for the chains' states and the records.

    Returns:
      ``mean`` and ``se`` (G, n_steps): the mean over chains of :math:`u_t`, :math:`t = 1..T`, and its standard error.
    """
    b2 = np.atleast_1d(V.array("beta2", beta2, ndim=(0, 1), low=0.0, high=1.0, low_open=True, high_open=True))
    T = V.integer("n_steps", n_steps, low=1)
    n = V.integer("n_chains", n_chains, low=2)
    if not isinstance(paired, bool):
        raise TypeError(f"paired: expected a bool, got {type(paired).__name__}")
    if (rng is None) == (noise is None):
        raise ValueError("rng, noise: give exactly one of rng (a NumPy Generator) or noise (the standard normals)")
    if rng is not None:
        _rng(rng)
    else:
        noise = V.array("noise", noise, shape=(n, T) if paired else (b2.size, n, T))
    g = b2.size
    V.check_bytes({"beta2": f"{g} decays", "n_chains": n, "n_steps": T}, 8 * (3 * g * n + 2 * g * T),
                  what="the chains' states and the mean and error records", max_bytes=max_bytes)
    keep, new = b2[:, None], (1.0 - b2)[:, None]
    u = np.zeros((g, n))
    mean, sq = np.empty((g, T)), np.empty((g, T))
    for t in range(T):  # the reference steps in Python on purpose: it is the baseline
        if rng is not None:
            z = rng.standard_normal(n if paired else (g, n))
        else:
            z = noise[:, t] if paired else noise[:, :, t]
        z = z * z * new
        u *= keep
        u += z
        mean[:, t] = m = u.mean(axis=1)
        dev = u - m[:, None]
        sq[:, t] = np.einsum("gn,gn->g", dev, dev)
    return {"mean": mean, "se": np.sqrt(sq / ((n - 1) * n))}


def _problem(d: int) -> dict:
    """The one-step claims' quadratic (paper_checks.batch_size): H = Q diag(geomspace(1, 0.01, d)) Q^T, theta ~ N(0, I),
    Sigma = diag(U(0.5, 2)), one fixed draw."""
    rng = np.random.default_rng(20261202)
    q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    h = q @ np.diag(np.geomspace(1.0, 0.01, d)) @ q.T
    return {"H": 0.5 * (h + h.T), "theta": rng.standard_normal(d), "Sigma": np.diag(rng.uniform(0.5, 2.0, d))}


def _within(a: np.ndarray, b: np.ndarray, z: float = 5.0) -> None:
    """Means over the last axis of two independent samples within ``z`` standard errors of their difference."""
    se = np.hypot(a.std(axis=-1, ddof=1) / math.sqrt(a.shape[-1]), b.std(axis=-1, ddof=1) / math.sqrt(b.shape[-1]))
    gap = np.abs(a.mean(axis=-1) - b.mean(axis=-1))
    assert np.all(gap <= z * se), (a.mean(axis=-1), b.mean(axis=-1), se)


def bench_cases(scale: str = "small") -> list[BenchCase]:
    """One minibatch step on a rotated quadratic (units: example gradients) and Adam's second-moment EMA on pure noise
    (units: chain steps)."""
    V.choice("scale", scale, ("small", "large"))
    import jax

    import sims.batch_size as sb

    small = scale == "small"
    d = 20
    p = _problem(d)
    bs = np.array([1, 4, 16, 64]) if small else np.array([1, 4, 16, 64, 256, 1024])
    n = 4096 if small else 65536   # B x n draws: whole chunks of sims.batch_size.CHUNK (16384)

    def step_jax():
        out = sb.one_step(jax.random.key(0), p["theta"], p["H"], p["Sigma"], bs, n_draws=n)
        return out["d1"], out["d2"]

    def step_numpy():
        out = one_step_numpy(p["theta"], p["H"], p["Sigma"], bs, n_draws=n, rng=np.random.default_rng(0))
        return out["d1"], out["d2"]

    def step_check(jx, npy):
        # different generators: per batch size, the mean slope (-|G|^2, whatever the noise) and the mean curvature
        # (G^T H G + tr(H Sigma) / B: a wrong noise scale or batch size moves it) within 5 standard errors of the
        # difference; 2k comparisons at 5 SE leave a false alarm at ~1e-5
        for a, b in zip(jx, npy):
            _within(np.asarray(a), np.asarray(b))

    # the half-life experiment's kind of sweep (paper_checks.batch_size): decays 1 - 0.001 B on the first-order rule
    beta2 = 1.0 - 1e-3 * np.geomspace(1.0, 512.0, 16)
    chains, steps = (1024, 720) if small else (16384, 2000)

    def ema_jax():
        out = sb.second_moment_ema(jax.random.key(0), beta2, np.geomspace(1.0, 512.0, 16), n_steps=steps,
                                   n_chains=chains)
        return out["mean"], out["se"]

    def ema_numpy():
        out = second_moment_ema_numpy(beta2, n_steps=steps, n_chains=chains, rng=np.random.default_rng(0))
        return out["mean"], out["se"]

    def ema_check(jx, npy):
        # different generators: the mean of u_t over chains at the last step and at a tenth of the run (still rising
        # for the slow decays) within 5 standard errors of the difference (each side's own se); the errors themselves
        # within 50 % (a 2x wrong noise scale moves them 4x; an error estimated from 1024 chains of squared normals
        # varies by up to ~6 % per side at the fast decays, where u_t is a few chi^2_1 values of kurtosis 15)
        (ma, sa), (mb, sb_) = jx, npy
        for t in (steps // 10, steps - 1):
            assert np.all(np.abs(ma[:, t] - mb[:, t]) <= 5 * np.hypot(sa[:, t], sb_[:, t])), (ma[:, t], mb[:, t])
        np.testing.assert_allclose(sa[:, -1], sb_[:, -1], rtol=0.5)

    words = float(d * np.ceil(bs / 32).sum() / bs.sum())   # 32-bit words per example: d ceil(B/32) per draw
    per_draw = float(bs.size / bs.sum())                    # draws per example
    return [
        BenchCase(f"batch_size.one_step[B={','.join(map(str, bs))} x {n} draws, d={d}]", "example gradients",
                  float(n * bs.sum()), step_jax, step_numpy, step_check,
                  # per draw, amortized over its B examples: d ceil(B/32) random 32-bit words (counted as uniforms,
                  # popcounts free), R applied once to the mean sign vector and the Hessian to the step (two
                  # d x d products, 4 d^2 flops) and the slope, curvature and scaling (about 6 d)
                  cost={"uniform": words, "flop": (4 * d * d + 6 * d) * per_draw}),
        BenchCase(f"batch_size.second_moment_ema[{beta2.size}x{chains}x{steps}]", "chain steps",
                  float(beta2.size * chains * steps), ema_jax, ema_numpy, ema_check,
                  # per chain and step: one Gaussian draw, the EMA (scale, square, two products, add: 5 flops), the
                  # division by sigma^2 / B and the mean and squared deviation over chains (about 5 flops)
                  cost={"normal": 1, "flop": 10}),
    ]
