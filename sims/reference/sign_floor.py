r"""NumPy references of :mod:`sims.sign_floor` and its benchmark cases.

:func:`numpy_chains` runs the same 1-d chains as :func:`sims.sign_floor.simulate` (SGD, signSGD
or Signum, normalized SGD; multiplicative and additive Gaussian noise; constant step), vectorized
over chains with a Python loop over steps, drawing the noise of ``block`` steps at once. Like the
simulator, signSGD under purely multiplicative noise without momentum draws its sign steps as
Bernoulli variables (uniforms compared with :math:`p = \Phi(-1/\sigma)`), the cheapest exact sampler
in NumPy too, so the benchmark compares like with like. It uses its own random numbers, so the
two agree in distribution, not path by path: tests compare means in units of their standard errors.
"""
from __future__ import annotations

import jax
import numpy as np
from scipy import special

from sims import sign_floor as S
from sims import sign_floor_regime as SR
from sims.bench import SCALES, BenchCase
from theory import validate as V

__all__ = ["numpy_chains", "bench_cases"]


def numpy_chains(seed: int, *, a: float, eta: float, x0: float, T: int, n_chains: int, method: str = "sign",
                 beta: float = 0.0, sigma_m: float = 0.0, sigma_a: float = 0.0, burn: int = 0,
                 block: int = 100, max_bytes=None) -> np.ndarray:
    r"""Per-chain Cesàro mean of :math:`f = a x^2/2` over :math:`b < k \le T` (1-d, Gaussian mixed noise).

    :math:`g = a x(1 + \sigma_m\xi_1) + \sigma_a\xi_2`, :math:`m \leftarrow \beta m + (1-\beta)g`,
    :math:`x \leftarrow x - \eta D(m)` with :math:`D(m) = m`, :math:`\mathrm{sign}(m)` or :math:`m/|m|`
    (``method`` ``"sgd"``, ``"sign"``, ``"normalized"``; in 1-d the last two agree except at
    :math:`m = 0`). Noise for ``block`` steps is drawn at once (memory: ``2 block n_chains`` floats; ``max_bytes``
    is the allocation limit for it, :func:`theory.validate.byte_limit`).
    """
    seed = V.integer("seed", seed, low=0)
    a = V.real("a", a, low=0.0, low_open=True)
    eta = V.real("eta", eta, low=0.0, low_open=True)
    x0 = V.real("x0", x0)
    T = V.integer("T", T, low=1)
    n_chains = V.integer("n_chains", n_chains, low=1)
    V.choice("method", method, S.METHODS)
    beta = V.real("beta", beta, low=0.0, high=1.0, high_open=True)
    sigma_m = V.real("sigma_m", sigma_m, low=0.0)
    sigma_a = V.real("sigma_a", sigma_a, low=0.0)
    burn = V.integer("burn", burn, low=0, high=T - 1)
    block = V.integer("block", block, low=1)
    V.check_bytes({"n_chains": n_chains, "block": block}, 8 * n_chains * (2 * block + 6),
                  what="a block's noise and the chains' states", max_bytes=max_bytes)
    rng = np.random.default_rng(seed)
    x = np.full(n_chains, x0)
    m = np.zeros(n_chains)
    acc = np.zeros(n_chains)
    if method == "sign" and beta == 0 and sigma_a == 0:
        p = special.ndtr(-1.0 / sigma_m) if sigma_m > 0 else 0.0
        for start in range(0, T, block):
            steps = min(block, T - start)
            step = np.where(rng.random((steps, n_chains)) < p, -eta, eta)  # sign(g) = sign(x) s, s = -1 w.p. p
            for j in range(steps):
                x = x - np.sign(x) * step[j]
                if start + j + 1 > burn:
                    acc += 0.5 * a * x * x
        return acc / (T - burn)
    for start in range(0, T, block):
        steps = min(block, T - start)
        xi = rng.standard_normal((steps, 2, n_chains))
        for j in range(steps):
            g = a * x * (1 + sigma_m * xi[j, 0]) + sigma_a * xi[j, 1]
            m = beta * m + (1 - beta) * g
            direction = m if method == "sgd" else np.sign(m)
            x = x - eta * direction
            if start + j + 1 > burn:
                acc += 0.5 * a * x * x
    return acc / (T - burn)


def _digits_floors_numpy(seed: int, *, eta: float, sigma: float, T: int, n_rec: int, burn: int, n_chains: int,
                         max_bytes=None) -> np.ndarray:
    r"""signSGD from :math:`\Theta^*` on the digits loss of :func:`sims.sign_floor_regime.digits_problem` with the
    multiplicative oracle :math:`\nabla f \odot (1 + \sigma\xi)`: per chain, the mean of :math:`f - f^*` over the
    ``n_rec`` records (every ``T // n_rec`` steps) after step ``burn``.

    All chains at once, as a NumPy user writes it: the chains' parameters live side by side in one
    :math:`17 \times 10R` matrix (class-major columns), so each step is two matrix products with :math:`X` (BLAS, one
    thread), a softmax over the class axis and one normal draw per coordinate; no transposes. ``max_bytes``: the allocation limit
    (:func:`theory.validate.byte_limit`) for the :math:`450 \times 10R` logits and their temporaries.
    """
    seed = V.integer("seed", seed, low=0)
    eta = V.real("eta", eta, low=0.0, low_open=True)
    sigma = V.real("sigma", sigma, low=0.0)
    T = V.integer("T", T, low=1)
    n_rec = V.integer("n_rec", n_rec, low=1, high=T)
    if T % n_rec:
        raise ValueError(f"n_rec: expected a divisor of T = {T}, got {n_rec}")
    burn = V.integer("burn", burn, low=0, high=T - T // n_rec)
    n_chains = V.integer("n_chains", n_chains, low=1)
    P = SR.digits_problem()
    X, Y, lam, f_star = P["X"], P["Y"], P["lam"], P["f_star"]
    (n, d), C, R = X.shape, SR.CLASSES, n_chains
    V.check_bytes({"n_chains": n_chains}, 8 * 4 * n * C * R, what="the logits and their temporaries",
                  max_bytes=max_bytes)
    rng = np.random.default_rng(seed)
    # class-major columns (c R + r): the softmax reduces over 10 contiguous rows of R chains, not over 10-wide rows
    W = np.repeat(P["theta_star"].reshape(d, C, 1), R, axis=2).reshape(d, C * R)
    XT = np.ascontiguousarray(X.T)
    every = T // n_rec
    acc, count = np.zeros(R), 0
    with _one_blas_thread():  # hundreds of small products: a second BLAS thread only spins on a busy machine
        for k in range(1, T + 1):
            Z = (X @ W).reshape(n, C, R)
            Z -= Z.max(axis=1, keepdims=True)
            E = np.exp(Z)
            E /= E.sum(axis=1, keepdims=True)
            E -= Y[:, :, None]
            G = XT @ E.reshape(n, C * R) / n + lam * W
            W -= eta * np.sign(G * (1.0 + sigma * rng.standard_normal(G.shape)))
            if k % every == 0 and k > burn:
                Z = (X @ W).reshape(n, C, R)
                top = Z.max(axis=1)
                lse = top + np.log(np.exp(Z - top[:, None, :]).sum(axis=1))
                data = (lse - np.einsum("nk,nkr->nr", Y, Z)).mean(axis=0)
                acc += data + lam / 2 * (W * W).sum(axis=0).reshape(C, R).sum(axis=0) - f_star
                count += 1
    return acc / count


def _one_blas_thread():
    """A context that keeps BLAS on one thread (threadpoolctl, where installed; otherwise nothing changes)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl comes with scikit-learn
        import contextlib

        return contextlib.nullcontext()
    return threadpool_limits(1, user_api="blas")


def bench_cases(scale: str) -> list[BenchCase]:
    """signSGD chains x steps per second, JAX (run_grid + scan) against vectorized NumPy, same chains.

    ``small``: 2048 chains x 2000 steps; ``large``: 262144 chains x 4000 steps. Both sides draw
    Bernoulli sign steps (the simulator in blocks of :data:`sims.sign_floor.BLOCK` steps, NumPy in
    blocks of 100) and the JAX side runs chunks of 65536 chains, so neither allocates more than a
    few hundred MB.
    """
    V.choice("scale", scale, SCALES)
    n_chains, T, chunk = (2048, 2000, 2048) if scale == "small" else (262144, 4000, 65536)
    burn, block = T // 2, 100
    cfg = dict(a=1.0, eta=0.05, sigma_m=1.0, sigma_a=0.0, x0=1.0 + 0.025)

    def run_jax():
        out = S.simulate(jax.random.key(0), eta=cfg["eta"], x0=np.array([cfg["x0"]]), h=cfg["a"], method="sign",
                         sigma_m=cfg["sigma_m"], T=T, burn=burn, n_rec=20, n_chains=n_chains, chunk_size=chunk)
        return out["mean_f"][0]

    def run_numpy():
        return numpy_chains(0, T=T, n_chains=n_chains, burn=burn, block=block, **cfg)

    def check(x, y):
        (mx, sx), (my, sy) = S.summarize(x)[:2], S.summarize(y)[:2]
        z = abs(mx - my) / np.hypot(sx, sy)
        assert z < 5, f"JAX and NumPy Cesàro means differ by {z:.1f} standard errors ({mx:.4g} vs {my:.4g})"

    # per chain-step: a counter word (8 integer operations), its compare and the step (3), f and its Cesaro sum (3),
    # the schedule (2)
    chains = [BenchCase("sign_floor: signSGD chains (mult. noise)", "chain-steps", float(n_chains * T),
                        run_jax, run_numpy, check, cost={"flop": 16})]
    return chains + [_digits_case(scale)]


def _digits_case(scale: str) -> BenchCase:
    """signSGD on digits (multiplicative oracle): :func:`sims.sign_floor_regime.digits_floors` against
    :func:`_digits_floors_numpy`, both folding every chain into one matrix product per step."""
    n_chains, T = (144, 100) if scale == "small" else (4096, 2000)
    cfg = dict(eta=0.005, sigma=1.0, T=T, n_rec=10, burn=T // 4)

    def run_jax():
        return SR.digits_floors(jax.random.key(0), np.array([cfg["eta"]]), "sign", oracle="multiplicative",
                                sigma=cfg["sigma"], T=T, n_rec=cfg["n_rec"], burn=cfg["burn"], n_chains=n_chains,
                                chunk_size=256 if scale == "small" else 1024)["mean_excess"][0]

    def check(x, y):
        x, y = np.asarray(x), np.asarray(y)
        z = abs(x.mean() - y.mean()) / np.hypot(x.std(ddof=1) / np.sqrt(x.size), y.std(ddof=1) / np.sqrt(y.size))
        assert z < 5, f"JAX and NumPy mean excess losses differ by {z:.1f} standard errors ({x.mean():.4g} vs {y.mean():.4g})"

    # per chain-step: two 450 x 17 x 10 products (153,000 FMA), 4,500 exps of the softmax, 170 normal draws
    return BenchCase("sign_floor: signSGD on digits (mult. noise, d = 170)", "chain-steps", float(n_chains * T),
                     run_jax, lambda: _digits_floors_numpy(0, n_chains=n_chains, **cfg), check,
                     cost={"matmul_flop": 306_000, "exp": 4_500, "normal": 170, "flop": 2_000})
