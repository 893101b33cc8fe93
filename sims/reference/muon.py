r"""NumPy references of :mod:`sims.muon` and its benchmark cases.

* :func:`train_numpy` -- Muon with decoupled weight decay and heavy-ball momentum on :math:`\tfrac12\|W - Y\|_F^2`
  (:func:`sims.muon.train`), every run at once: stacked ``(R, p, q)`` matrices, one batched ``np.linalg.svd`` (LAPACK
  ``gesdd``, the routine ``jnp.linalg.svd`` calls on a CPU) for the exact polar factor and one for the recorded
  singular values, batched ``@`` for the quintic Newton--Schulz steps, a Python loop over steps only. The gradient
  noise is an argument (the standard normal draws ``(n_steps, p, q)`` every run shares, times its own
  :math:`\sigma`), so the JAX simulator's draws (:func:`sims.muon.normal_draws`) replay here and the two agree to
  round-off;
* :func:`factorization_numpy` -- Muon without momentum or decay (or gradient descent) on both factors of
  :math:`\tfrac12\|W_2W_1 - \mathrm{diag}(s)\|_F^2` (:func:`sims.muon.factorization`), every start at once, with
  the gradients by hand (:math:`W_2^\top R`, :math:`RW_1^\top`) and the product :math:`W_2W_1` formed once per
  step: its diagonal is the recorded mode and its residual the next step's gradient;
* :func:`bench_cases` -- both against the JAX simulators for ``make bench``.

Divergence follows the simulators: a run whose iterate leaves :math:`|w| \le 10^{150}` or turns non-finite is
flagged at that step and frozen at :math:`W = 0` (with zero momentum) from then on.
"""
from __future__ import annotations

import numpy as np

import sims  # noqa: F401  (float64)
from sims.bench import BenchCase
from theory import validate as V
from theory.muon import NS5

__all__ = ["train_numpy", "factorization_numpy", "bench_cases"]

_BOUND = 1e150  # sims.sweep.diverged's default bound


def _per_run(name: str, x, m: int) -> np.ndarray:
    """A scalar or an (m,) array as an (m,) array (the runs are the longest per-run argument)."""
    a = np.atleast_1d(x)
    if a.size not in (1, m):
        raise ValueError(f"{name}: expected a scalar or one entry per run ({m} runs), got shape {a.shape}")
    return np.broadcast_to(a, (m,))


def _stack(name: str, x: np.ndarray, m: int, tail: tuple) -> np.ndarray:
    """A ``tail`` matrix (shared) or ``(m,) + tail`` stack (one per run) as an ``(m,) + tail`` array."""
    if x.shape == tail:
        return np.broadcast_to(x, (m,) + tail)
    if x.shape == (m,) + tail:
        return x
    raise ValueError(f"{name}: expected shape {tail} (shared) or {(m,) + tail} (one per run), got {x.shape}")


def _bad(w: np.ndarray) -> np.ndarray:
    """(R,) True where a stacked iterate is non-finite or beyond the bound (a NaN max fails the comparison too)."""
    return ~(np.abs(w).max(axis=(1, 2)) <= _BOUND)


def _polar(m: np.ndarray) -> np.ndarray:
    """The polar factors :math:`UV^\top` of a stack of matrices (thin SVD); 0 for a zero matrix."""
    u, _, vt = np.linalg.svd(m, full_matrices=False)
    o = u @ vt
    zero = ~m.any(axis=(1, 2))
    if zero.any():
        o[zero] = 0.0
    return o


def _newton_schulz(m: np.ndarray, ks: np.ndarray) -> np.ndarray:
    r"""Quintic Newton--Schulz on a stack, run ``ks[r]`` steps for run r: :math:`X \leftarrow aX + (bA + cA^2)X`,
    :math:`A = XX^\top` on the wide orientation (the smaller Gram matrix), from :math:`X_0 = M/\|M\|_F`."""
    a, b, c = NS5
    tall = m.shape[1] > m.shape[2]
    x = np.swapaxes(m, 1, 2) if tall else m
    norm = np.sqrt(np.sum(x * x, axis=(1, 2)))
    x = x / np.where(norm > 0, norm, 1.0)[:, None, None]
    uniform = bool(np.all(ks == ks[0]))
    for j in range(int(ks.max())):
        g = x @ np.swapaxes(x, 1, 2)
        new = a * x + (b * g + c * g @ g) @ x
        x = new if uniform else np.where((j < ks)[:, None, None], new, x)
    return np.swapaxes(x, 1, 2) if tall else x


def train_numpy(eta, lam, target, w0, *, method: str = "polar", ns_steps=5, momentum=0.0, noise=0.0, xi=None,
                n_steps: int = 1000) -> dict[str, np.ndarray]:
    r"""Muon with decoupled decay on :math:`\tfrac12\|W - Y\|_F^2`, every run at once (:func:`sims.muon.train`).

    Args:
      eta: step sizes, a positive number or an (m,) array.
      lam: decoupled decays :math:`\lambda \ge 0`, a number or an (m,) array.
      target: :math:`Y`, a real matrix ``(p, q)`` or ``(m, p, q)``.
      w0: the start :math:`W_0`, ``(p, q)`` or ``(m, p, q)``.
      method: ``"polar"`` (exact :math:`UV^\top`) or ``"ns"`` (quintic Newton--Schulz, :data:`theory.muon.NS5`).
      ns_steps: Newton--Schulz steps, an integer >= 0 or an (m,) array (read only by ``"ns"``).
      momentum: :math:`\beta \in [0, 1)`, a number or an (m,) array.
      noise: :math:`\sigma \ge 0`, a number or an (m,) array.
      xi: the standard normal draws ``(n_steps, p, q)`` every run shares (times its own :math:`\sigma`); required
        when any ``noise > 0`` (:func:`sims.muon.normal_draws` gives the JAX simulator's).
      n_steps: steps per run, at least 1.

    Returns:
      ``sv`` (m, n_steps, min(p, q)), ``w`` (m, p, q), ``diverged`` (m,), ``diverged_step`` (m,), as the simulator.
    """
    V.choice("method", method, ("polar", "ns"))
    y = V.array("target", target, ndim=(2, 3))
    start = V.array("w0", w0, ndim=(2, 3))
    shape = y.shape[-2:]
    if start.shape[-2:] != shape:
        raise ValueError(f"w0: expected matrices of the target's shape {shape}, got {start.shape}")
    n_steps = V.integer("n_steps", n_steps, low=1)
    scalars = {"eta": V.array("eta", eta, ndim=(0, 1), low=0.0, low_open=True),
               "lam": V.array("lam", lam, ndim=(0, 1), low=0.0),
               "ns_steps": V.integers("ns_steps", ns_steps, ndim=(0, 1), low=0, high=10_000),
               "momentum": V.array("momentum", momentum, ndim=(0, 1), low=0.0, high=1.0, high_open=True),
               "noise": V.array("noise", noise, ndim=(0, 1), low=0.0)}
    m = max([np.size(v) for v in scalars.values()] + [x.shape[0] for x in (y, start) if x.ndim == 3])
    etas, lams, ks, betas, sigmas = (_per_run(k, v, m) for k, v in scalars.items())
    V.check_bytes({"n_steps": n_steps, "eta": m}, 8.0 * m * (n_steps * min(shape) + 4 * shape[0] * shape[1]),
                  what="the recorded singular values and the runs' iterates")
    noisy = bool(np.any(sigmas > 0))
    if noisy:
        if xi is None:
            raise ValueError("xi: expected the (n_steps, p, q) standard normal draws, since some noise > 0, got None")
        xi = V.array("xi", xi, shape=(n_steps,) + shape)
    y = _stack("target", y, m, shape)
    w = _stack("w0", start, m, shape).copy()
    mom = np.zeros_like(w)
    decay = (1.0 - etas * lams)[:, None, None]
    e3, b3, s3 = etas[:, None, None], betas[:, None, None], sigmas[:, None, None]
    first = np.full(m, -1, dtype=np.int64)
    sv = np.empty((m, n_steps, min(shape)))
    for t in range(n_steps):  # the reference steps in Python; every array op runs over all runs at once
        g = w - y
        if noisy:
            g = g + s3 * xi[t]
        mom = b3 * mom + g
        o = _polar(mom) if method == "polar" else _newton_schulz(mom, ks)
        w = decay * w - e3 * o
        now = (first < 0) & _bad(w)
        if now.any():
            first[now] = t + 1
        dead = first >= 0
        if dead.any():  # frozen at 0, as the simulator (an SVD of overflowing entries fails)
            w[dead] = 0.0
            mom[dead] = 0.0
        sv[:, t] = np.linalg.svd(w, compute_uv=False)
    return {"sv": sv, "w": w, "diverged": first >= 0, "diverged_step": first}


def factorization_numpy(eta, target_sv, w1, w2, *, method: str = "polar", n_steps: int = 1000
                        ) -> dict[str, np.ndarray]:
    r"""Muon (``"polar"``) or gradient descent (``"gd"``) on :math:`\tfrac12\|W_2W_1 - \mathrm{diag}(s)\|_F^2`, every
    start at once (:func:`sims.muon.factorization`).

    Args:
      eta: step sizes, a positive number or an (m,) array.
      target_sv: :math:`s` (n,), positive.
      w1: :math:`W_1` at the start, ``(h, n)`` or ``(m, h, n)``.
      w2: :math:`W_2` at the start, ``(n, h)`` or ``(m, n, h)``.
      method: ``"polar"`` or ``"gd"``.
      n_steps: steps per run, at least 1.

    Returns:
      ``modes`` (m, n_steps, n): :math:`(W_2W_1)_{ii}` after each step; ``w1``, ``w2``; ``diverged`` and
      ``diverged_step`` (m,), as the simulator.
    """
    V.choice("method", method, ("polar", "gd"))
    etas = V.array("eta", eta, ndim=(0, 1), low=0.0, low_open=True)
    s = V.array("target_sv", target_sv, ndim=1, low=0.0, low_open=True)
    a = V.array("w1", w1, ndim=(2, 3))
    if a.shape[-1] != s.size:
        raise ValueError(f"w1: expected shape (h, {s.size}) or (m, h, {s.size}), got {a.shape}")
    b = V.array("w2", w2, ndim=(2, 3))
    if b.shape[-2:] != (s.size, a.shape[-2]):
        raise ValueError(f"w2: expected trailing shape ({s.size}, {a.shape[-2]}) to match w1, got {b.shape}")
    n_steps = V.integer("n_steps", n_steps, low=1)
    m = max([np.size(etas)] + [x.shape[0] for x in (a, b) if x.ndim == 3])
    etas = _per_run("eta", etas, m)[:, None, None]
    a = _stack("w1", a, m, a.shape[-2:]).copy()
    b = _stack("w2", b, m, b.shape[-2:]).copy()
    n, h = s.size, a.shape[1]
    V.check_bytes({"n_steps": n_steps, "eta": m}, 8.0 * m * (n_steps * n + 6 * n * h), what="the recorded modes")
    target = np.diag(s)
    diag = np.arange(n)
    first = np.full(m, -1, dtype=np.int64)
    modes = np.empty((m, n_steps, n))
    prod = b @ a
    for t in range(n_steps):
        r = prod - target
        g1, g2 = np.swapaxes(b, 1, 2) @ r, r @ np.swapaxes(a, 1, 2)  # the gradients of 1/2 |W2 W1 - M|^2
        if method == "polar":
            g1, g2 = _polar(g1), _polar(g2)
        a, b = a - etas * g1, b - etas * g2
        now = (first < 0) & (_bad(a) | _bad(b))
        if now.any():
            first[now] = t + 1
        dead = first >= 0
        if dead.any():
            a[dead] = 0.0
            b[dead] = 0.0
        prod = b @ a
        modes[:, t] = prod[:, diag, diag]
    return {"modes": modes, "w1": a, "w2": b, "diverged": first >= 0, "diverged_step": first}


def _svd_flops(p: int, q: int, vectors: bool) -> float:
    r"""Golub & Van Loan's count (Matrix Computations, Table 5.4.1, R-SVD) for a :math:`p \times q` matrix, p >= q:
    :math:`4pq^2 - 4q^3/3` for the singular values alone, :math:`14pq^2 + 8q^3` with the thin :math:`U` and
    :math:`V` (an estimate of the arithmetic: LAPACK's divide and conquer does about as much)."""
    p, q = max(p, q), min(p, q)
    return 14 * p * q * q + 8 * q**3 if vectors else 4 * p * q * q - 4 * q**3 / 3


def bench_cases(scale: str) -> list[BenchCase]:
    """Muon's sweeps, JAX (``run_grid`` + ``lax.scan``, one LAPACK SVD call per batch) against the NumPy loops."""
    import jax

    from sims import muon as sm

    V.choice("scale", scale, ("small", "large"))
    small = scale == "small"
    p, q = 16, 8  # the topic's single-matrix shape (paper_checks/muon/experiments.py)
    # sims.muon.train vmaps chunks of 16 runs (its fixed chunk_size), so a larger grid only adds sequential chunks
    runs, steps = (64, 300) if small else (1024, 2000)
    rng = np.random.default_rng(0)
    y = 2.0 * rng.standard_normal((runs, p, q))
    w0 = 3.0 * rng.standard_normal((runs, p, q)) / np.sqrt(p)
    etas = np.geomspace(0.005, 0.05, runs)
    key = jax.random.key(0)
    xi = sm.normal_draws(key, (steps, p, q))  # the JAX side draws them in every call; NumPy replays them

    def train_case(method: str) -> BenchCase:
        kw = {"method": method, "ns_steps": 5, "momentum": 0.9, "noise": 0.5, "n_steps": steps}

        def run_jax():
            out = sm.train(etas, 2.0, y, w0, key=key, **kw)
            return out["sv"], out["w"], out["diverged_step"]

        def run_numpy():
            out = train_numpy(etas, 2.0, y, w0, xi=xi, **kw)
            return out["sv"], out["w"], out["diverged_step"]

        if method == "polar":  # the SVD with vectors, then U V^T
            flop, mm = _svd_flops(p, q, vectors=True), 2 * p * q * q
        else:  # 5 NS5 steps on the wide 8 x 16 orientation: A = X X^T, A^2, (bA + cA^2) X; their ~5 ops per entry
            flop, mm = 5 * (3 * q * q + 2 * p * q) + 3 * p * q, 5 * (4 * p * q * q + 2 * q**3)
        return BenchCase(f"muon.train ({method}, {p}x{q}, momentum, noise)", "run-steps", runs * steps,
                         run_jax, run_numpy, _close(1e-9),
                         # per run-step: the orthogonalization above, the recorded singular values (Golub-Van Loan
                         # counts for the SVDs) and ~8 ops per entry (gradient, noise, momentum, decay, step, bound)
                         cost={"flop": flop + _svd_flops(p, q, vectors=False) + 8 * p * q, "matmul_flop": mm})

    n = 32  # the topic's factorization (paper_checks/muon/experiments.py: modes): diag(10/k), k = 1..32
    f_runs, f_steps = (16, 200) if small else (512, 1000)  # one XLA call for every run (run_grid's default chunk)
    s = 10.0 / np.arange(1, n + 1)
    f1, f2 = 5e-3 * rng.standard_normal((2, f_runs, n, n))
    f_eta = np.geomspace(2e-3, 2e-2, f_runs)

    def fac_jax():
        out = sm.factorization(f_eta, s, f1, f2, n_steps=f_steps)
        return out["modes"], out["w1"], out["w2"], out["diverged_step"]

    def fac_numpy():
        out = factorization_numpy(f_eta, s, f1, f2, n_steps=f_steps)
        return out["modes"], out["w1"], out["w2"], out["diverged_step"]

    return [
        train_case("polar"),
        train_case("ns"),
        BenchCase(f"muon.factorization (polar, {n}x{n} factors)", "run-steps", f_runs * f_steps, fac_jax, fac_numpy,
                  _close(1e-8),
                  # per run-step: two thin SVDs with vectors (Golub-Van Loan counts), the product W2 W1, two
                  # gradient products and two U V^T (10 n^3; the JAX side forms the product twice, 12 n^3), ~12 ops
                  # per entry of the two factors (residual, steps, bound tests)
                  cost={"flop": 2 * _svd_flops(n, n, vectors=True) + 12 * n * n, "matmul_flop": 10 * n**3}),
    ]


def _close(rtol: float):
    """Both sides run the same steps on the same draws: equal to round-off, step counts exactly."""
    def check(a, b):
        *fa, da = a
        *fb, db = b
        np.testing.assert_array_equal(np.asarray(da), np.asarray(db))
        for x, z in zip(fa, fb):
            x, z = np.asarray(x), np.asarray(z)
            np.testing.assert_allclose(x, z, rtol=rtol, atol=rtol * np.abs(z).max())
    return check
