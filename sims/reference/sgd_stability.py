r"""NumPy references of :mod:`sims.sgd_stability` and its benchmark cases.

Vectorized NumPy versions of the deterministic simulators (the exactly enumerated second moment,
:math:`E[H_{\mathcal B}\otimes H_{\mathcal B}]` by enumeration, the delayed and the momentum growth rates),
written independently of the JAX code: tests compare the two to round-off. The Lyapunov reference
draws its own batches (NumPy generator), so it is compared statistically.
"""
from __future__ import annotations

import itertools
import math

import numpy as np

import sims  # noqa: F401  (float64)
from sims.bench import BenchCase
from theory import validate as val
from theory.sgd_stability import check_hessians

__all__ = ["batch_means_numpy", "kron_enumerated_numpy", "moment_growth_numpy", "delayed_growth_numpy",
           "momentum_growth_numpy", "lyapunov_numpy", "tail_slope_numpy", "bench_cases"]


# Enumerating more batches than this is refused (the theory module's limit): memory and time grow with C(n, B).
MAX_BATCHES = 200_000


def _problem(hessians, batch_size) -> tuple[np.ndarray, int]:
    """Per-sample Hessians (n, d, d), symmetric PSD, and a batch size in 1..n with an enumerable C(n, B)."""
    h = check_hessians(hessians)
    b = val.integer("batch_size", batch_size, low=1, high=h.shape[0])
    if math.comb(h.shape[0], b) > MAX_BATCHES:
        raise ValueError(f"batch_size: C({h.shape[0]}, {b}) batches are too many to enumerate (limit {MAX_BATCHES})")
    return h, b


def _steps(n_steps) -> int:
    """A step count >= 3: rates are slopes over the second half of the run, which needs two points."""
    return val.integer("n_steps", n_steps, low=3)


def _row(name: str, x, **kw) -> np.ndarray:
    """A 1-D float64 array from a scalar or a sequence."""
    return val.array(name, x if x is None or isinstance(x, (str, bytes)) else np.atleast_1d(x), ndim=1, **kw)


def _second_moment(sigma0, d: int) -> np.ndarray:
    """A (d, d) symmetric PSD matrix with positive trace (to round-off: 1e-10 of its largest entry)."""
    s0 = val.array("sigma0", sigma0, shape=(d, d))
    tol = 1e-10 * max(float(np.abs(s0).max()), 1e-300)
    if not np.abs(s0 - s0.T).max() <= tol:
        raise ValueError(f"sigma0: expected a symmetric matrix, got max |S - S^T| = {np.abs(s0 - s0.T).max():.3g}")
    low = float(np.linalg.eigvalsh(s0).min())
    if not (low >= -tol * d and np.trace(s0) > 0):
        raise ValueError(f"sigma0: expected a nonzero PSD matrix, got smallest eigenvalue {low:.3g}, "
                         f"trace {np.trace(s0):.3g}")
    return s0


def _batch_means(h: np.ndarray, b: int) -> np.ndarray:
    idx = np.array(list(itertools.combinations(range(h.shape[0]), b)))
    return h[idx].mean(axis=1)


def batch_means_numpy(hessians: np.ndarray, batch_size: int) -> np.ndarray:
    """The C(n, B) batch means of the per-sample Hessians ((n, d, d) symmetric PSD; ``batch_size`` in 1..n)."""
    return _batch_means(*_problem(hessians, batch_size))


def kron_enumerated_numpy(hessians: np.ndarray, batch_size: int) -> np.ndarray:
    r""":math:`\binom nB^{-1}\sum H_{\mathcal B}\otimes H_{\mathcal B}` (``np.kron``, row-major ``vec``)."""
    hb = _batch_means(*_problem(hessians, batch_size))
    return np.mean([np.kron(m, m) for m in hb], axis=0)


def tail_slope_numpy(ells: np.ndarray) -> np.ndarray:
    r"""Least-squares slope of the last axis over its second half (at least 3 values along it).

    ``ells`` are log norms: :math:`-\infty` (a state that collapsed to exactly zero; the slope is then
    :math:`-\infty`) is allowed, NaN and :math:`+\infty` are not.
    """
    e = val.array("ells", ells, finite=False)
    if e.ndim == 0 or e.shape[-1] < 3:
        raise ValueError(f"ells: expected at least 3 values along the last axis, got shape {e.shape}")
    if not np.all(np.isfinite(e) | np.isneginf(e)):
        raise ValueError("ells: every value must be finite or -inf (a collapsed state), got NaN or +inf")
    return _tail_slope(e)


def _tail_slope(ells: np.ndarray) -> np.ndarray:
    """:func:`tail_slope_numpy` without the argument checks (internal log norms)."""
    y = ells[..., ells.shape[-1] // 2:]
    t = np.arange(y.shape[-1]) - (y.shape[-1] - 1) / 2
    with np.errstate(invalid="ignore"):
        slope = np.sum(t * (y - y.mean(axis=-1, keepdims=True)), axis=-1) / np.sum(t * t)
    return np.where(np.isneginf(y[..., -1]), -np.inf, slope)


def moment_growth_numpy(hessians: np.ndarray, batch_size: int, eta: np.ndarray, n_steps: int,
                        sigma0: np.ndarray | None = None, *, max_bytes=None) -> dict:
    r"""Exact second moment :math:`\Sigma \leftarrow E_{\mathcal B}[A\Sigma A]` for every step in ``eta`` at once, renormalized.

    ``max_bytes``: the allocation limit (:func:`theory.validate.byte_limit`) for the ``(m, K, d, d)`` step matrices
    and the log-trace records.
    """
    h, b = _problem(hessians, batch_size)
    eta = _row("eta", eta, low=0.0, low_open=True)
    n_steps = _steps(n_steps)
    d = h.shape[1]
    val.check_bytes({"n_steps": n_steps, "eta": f"{eta.size} points", "batch_size": b},
                    8 * eta.size * (2 * math.comb(h.shape[0], b) * d * d + n_steps + 1),
                    what="the step matrices per point and batch, and the log-trace records", max_bytes=max_bytes)
    if sigma0 is not None:
        s0 = _second_moment(sigma0, d)
    hb = _batch_means(h, b)
    a = np.eye(d)[None, None] - eta[:, None, None, None] * hb[None]  # (m, K, d, d)
    s = np.broadcast_to(np.eye(d) if sigma0 is None else s0, (eta.size, d, d)).copy()
    logs = np.empty((eta.size, n_steps + 1))
    logs[:, 0] = np.log(np.trace(s, axis1=1, axis2=2))
    s /= np.trace(s, axis1=1, axis2=2)[:, None, None]
    for t in range(1, n_steps + 1):  # the reference runs the recursion step by step
        # batched matrix products: an unoptimised three-operand einsum here is ~7x slower for the same sums
        s = (a @ s[:, None] @ a).sum(axis=1) / hb.shape[0]
        tr = np.trace(s, axis1=1, axis2=2)
        logs[:, t] = logs[:, t - 1] + np.log(tr)
        s /= tr[:, None, None]
    return {"log_trace": logs, "rate": _tail_slope(logs[:, 1:])}


def _moment_growth_operator(hessians: np.ndarray, batch_size: int, eta: np.ndarray, n_steps: int, *,
                            max_bytes=None) -> dict:
    r""":func:`moment_growth_numpy` from :math:`\Sigma_0 = I` as a NumPy user with the operator in mind writes it: the
    :math:`d^2 \times d^2` operator :math:`\mathcal M = \binom nB^{-1}\sum_{\mathcal B}A_{\mathcal B}\otimes A_{\mathcal B}^\top`
    (row-major ``vec``), expanded in :math:`\eta` so that the batches are summed once, not once per step size
    (:math:`I\otimes I - \eta(\bar H\otimes I + I\otimes\bar H) + \eta^2\binom nB^{-1}\sum H_{\mathcal B}\otimes H_{\mathcal B}`),
    then one batched matrix-vector product per step for every step size at once.

    ``max_bytes``: the allocation limit (:func:`theory.validate.byte_limit`) for the ``(m, d^2, d^2)`` operators, the
    batch means that form them and the log-trace records.
    """
    h, b = _problem(hessians, batch_size)
    eta = _row("eta", eta, low=0.0, low_open=True)
    n_steps = _steps(n_steps)
    d = h.shape[1]
    val.check_bytes({"n_steps": n_steps, "eta": f"{eta.size} points", "batch_size": b},
                    8 * (eta.size * (d**4 + n_steps + 1) + math.comb(h.shape[0], b) * d * d),
                    what="the operators, the batch means that form them and the log-trace records", max_bytes=max_bytes)
    hb = _batch_means(h, b)
    eye = np.eye(d)
    second = np.einsum("kia,kbj->ijab", hb, hb, optimize=True).reshape(d * d, d * d) / hb.shape[0]
    hbar = h.mean(axis=0)
    first = (np.einsum("ia,bj->ijab", hbar, eye) + np.einsum("ia,bj->ijab", eye, hbar)).reshape(d * d, d * d)
    op = np.eye(d * d)[None] - eta[:, None, None] * first + (eta**2)[:, None, None] * second
    s = np.broadcast_to(np.eye(d).reshape(-1) / d, (eta.size, d * d)).copy()
    diag = np.arange(d) * (d + 1)
    logs = np.empty((eta.size, n_steps + 1))
    logs[:, 0] = np.log(d)
    for t in range(1, n_steps + 1):
        s = (op @ s[:, :, None])[:, :, 0]
        tr = s[:, diag].sum(axis=1)
        logs[:, t] = logs[:, t - 1] + np.log(tr)
        s /= tr[:, None]
    return {"log_trace": logs, "rate": _tail_slope(logs[:, 1:])}


def delayed_growth_numpy(a: np.ndarray, delay: int, n_steps: int, max_delay: int = 8, *, max_bytes=None) -> dict:
    r""":math:`x_{t+1} = x_t - a\,x_{t-S}` from ones, renormalized by the window's max-norm; every ``a`` at once.

    ``max_bytes``: the allocation limit (:func:`theory.validate.byte_limit`) for the ``(m, n_steps)`` log-norms.
    """
    a = _row("a", a)
    n_steps = _steps(n_steps)
    val.check_bytes({"n_steps": n_steps, "a": f"{a.size} points"}, 2 * 8 * a.size * n_steps,
                    what="the per-step log-norms", max_bytes=max_bytes)
    max_delay = val.integer("max_delay", max_delay, low=0, high=64)
    delay = val.integer("delay", delay, low=0, high=max_delay)
    buf = np.ones((a.size, max_delay + 1))
    ell, ells = np.zeros(a.size), np.empty((a.size, n_steps))
    for t in range(n_steps):
        new = buf[:, 0] - a * buf[:, delay]
        buf = np.concatenate([new[:, None], buf[:, :-1]], axis=1)
        nrm = np.abs(buf).max(axis=1)
        with np.errstate(divide="ignore"):
            ell += np.log(nrm)
        ells[:, t] = ell
        buf /= np.where(nrm > 0, nrm, 1.0)[:, None]
    return {"rate": _tail_slope(ells)}


def momentum_growth_numpy(eta: np.ndarray, mu: np.ndarray, nesterov: bool, n_steps: int, lam: float = 1.0, *,
                          max_bytes=None) -> dict:
    r"""Heavy ball or Nesterov on :math:`\lambda x^2/2` from :math:`x_0 = x_{-1} = 1`, renormalized; every point at once.

    ``max_bytes``: the allocation limit (:func:`theory.validate.byte_limit`) for the ``(m, n_steps)`` log-norms.
    """
    eta = _row("eta", eta, low=0.0, low_open=True)
    mu = _row("mu", mu, low=0.0, high=1.0, high_open=True)
    if mu.size not in (1, eta.size) and eta.size != 1:
        raise ValueError(f"mu: expected one value or {eta.size} (one per eta), got {mu.size}")
    if not isinstance(nesterov, (bool, np.bool_)):
        raise TypeError(f"nesterov: expected a bool, got {type(nesterov).__name__} {nesterov!r}")
    n_steps = _steps(n_steps)
    lam = val.real("lam", lam, low=0.0, low_open=True)
    val.check_bytes({"n_steps": n_steps, "eta": f"{max(eta.size, mu.size)} points"},
                    2 * 8 * max(eta.size, mu.size) * n_steps, what="the per-step log-norms", max_bytes=max_bytes)
    eta, mu = np.broadcast_arrays(eta, mu)
    x, xp, ell = np.ones(eta.size), np.ones(eta.size), np.zeros(eta.size)
    ells = np.empty((eta.size, n_steps))
    for t in range(n_steps):
        y = x + (mu * (x - xp) if nesterov else 0.0)
        new = x + mu * (x - xp) - eta * lam * y
        nrm = np.maximum(np.abs(new), np.abs(x))
        with np.errstate(divide="ignore"):
            ell += np.log(nrm)
        ells[:, t] = ell
        safe = np.where(nrm > 0, nrm, 1.0)
        x, xp = new / safe, x / safe
    return {"rate": _tail_slope(ells)}


def lyapunov_numpy(hessians: np.ndarray, batch_size: int, eta: float, n_steps: int, n_paths: int, burn: int,
                   seed: int, *, max_bytes=None) -> np.ndarray:
    r"""Per-path Lyapunov estimates :math:`(\ell_T - \ell_b)/(T - b)` with batches drawn by a NumPy generator.

    ``max_bytes``: the allocation limit (:func:`theory.validate.byte_limit`) for a step's gathered ``(n_paths, d, d)``
    matrices.
    """
    hessians, b = _problem(hessians, batch_size)
    eta = val.real("eta", eta, low=0.0, low_open=True)
    n_steps = val.integer("n_steps", n_steps, low=1)
    n_paths = val.integer("n_paths", n_paths, low=1)
    burn = val.integer("burn", burn, low=0, high=n_steps - 1)
    d = hessians.shape[1]
    val.check_bytes({"n_paths": n_paths, "hessians": f"d = {d}"}, 8 * n_paths * (d * d + 4 * d + 4),
                    what="a step's gathered (n_paths, d, d) matrices and the paths' states", max_bytes=max_bytes)
    rng = np.random.default_rng(val.integer("seed", seed, low=0))
    hb = _batch_means(hessians, b)
    a = np.eye(hessians.shape[1])[None] - eta * hb
    theta = np.ones((n_paths, hessians.shape[1])) / np.sqrt(hessians.shape[1])
    ell, ell_burn = np.zeros(n_paths), np.zeros(n_paths)
    for t in range(n_steps):
        j = rng.integers(0, hb.shape[0], n_paths)
        theta = np.einsum("pij,pj->pi", a[j], theta)
        nrm = np.linalg.norm(theta, axis=1)
        ell += np.log(nrm)
        theta /= nrm[:, None]
        if t == burn - 1:
            ell_burn = ell.copy()
    return (ell - ell_burn) / (n_steps - burn)


def _ls_hessians(n: int, d: int, seed: int) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal((n, d))
    return np.einsum("ni,nj->nij", x, x)


def _close(rtol: float):
    def check(a, b):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=1e-9)
    return check


def bench_cases(scale: str) -> list[BenchCase]:
    """Benchmarks at ``scale`` ("small": seconds on a laptop CPU; "large": GPU-sized)."""
    from sims import sgd_stability as sim

    if scale not in ("small", "large"):
        raise ValueError(f"scale: expected 'small' or 'large', got {scale!r}")
    small = scale == "small"
    h = _ls_hessians(8, 3, 0)
    etas = np.linspace(0.05, 0.5, 64 if small else 4096)
    t_moment = 200 if small else 1000
    a = np.linspace(0.01, 1.0, 128 if small else 16384)
    t_delay = 2000 if small else 8000
    eta_m = np.linspace(0.1, 3.0, 128 if small else 16384)
    n_paths, t_lyap = (1024, 600) if small else (65536, 3000)

    def lyap_check(jax_out, np_out):
        # different generators: the path means must agree within their standard errors (5 SE)
        g1, g2 = np.asarray(jax_out).ravel(), np.asarray(np_out).ravel()
        se = np.hypot(g1.std() / np.sqrt(g1.size), g2.std() / np.sqrt(g2.size))
        assert abs(g1.mean() - g2.mean()) < 5 * se, (g1.mean(), g2.mean(), se)

    return [
        # both sides sum the 70 batches into the 9 x 9 operator once per step size, then step it
        BenchCase("sgd_stability.moment_growth (exact, n=8, d=3, B=4)", "second-moment steps",
                  etas.size * t_moment,
                  lambda: sim.moment_growth(h, 4, etas, n_steps=t_moment)["rate"],
                  lambda: _moment_growth_operator(h, 4, etas, t_moment)["rate"], _close(1e-9),
                  cost={"flop": 174, "exp": 2}),  # 81 FMA, the trace, 9 scalings; a log and a reciprocal
        BenchCase("sgd_stability.delayed_growth (S=4)", "delayed steps", a.size * t_delay,
                  lambda: sim.delayed_growth(a, 4, n_steps=t_delay)["rate"],
                  lambda: delayed_growth_numpy(a, 4, t_delay)["rate"], _close(1e-8),
                  cost={"flop": 30, "exp": 2}),  # shift of 9, one FMA, max-norm of 9, a log, a division
        BenchCase("sgd_stability.momentum_growth (heavy ball, mu=0.5)", "momentum steps", eta_m.size * 2000,
                  lambda: sim.momentum_growth(eta_m, 0.5, n_steps=2000)["rate"],
                  lambda: momentum_growth_numpy(eta_m, 0.5, False, 2000)["rate"], _close(1e-8),
                  cost={"flop": 12, "exp": 3}),  # the update, a max-norm, a log, two divisions
        BenchCase("sgd_stability.lyapunov_paths (n=8, d=3, B=1)", "path steps", n_paths * t_lyap,
                  lambda: sim.lyapunov_paths(jax_key(), h, 1, [0.3], n_steps=t_lyap, n_paths=n_paths, burn=60)["gamma"],
                  lambda: lyapunov_numpy(h, 1, 0.3, t_lyap, n_paths, 60, 0), lyap_check,
                  cost={"flop": 28, "exp": 3, "uniform": 1}),  # a batch draw, 3x3 mat-vec, norm, log, division
    ]


def jax_key():
    """A fresh typed key for the benchmark's JAX paths (seed 0)."""
    import jax

    return jax.random.key(0)
