r"""Simulators for the linear stability of SGD: minibatches, delayed gradients, momentum.

* :func:`kron_enumerated` -- :math:`E[H_{\mathcal B}\otimes H_{\mathcal B}]` by enumerating every batch.
* :func:`moment_growth` -- the *exact* second moment :math:`\Sigma_{t+1} = E_{\mathcal B}[(I - \eta H_{\mathcal B})\Sigma_t(I - \eta H_{\mathcal B})]`,
  the expectation taken by enumerating all :math:`\binom nB` batches (batches are independent across steps, so
  this is the exact enumeration of batch sequences), summed once into the :math:`d^2\times d^2` operator that
  every step applies. Its growth rate per step
  tends to :math:`\log\rho(\mathcal M_B)`.
* :func:`sgd_paths` -- Monte Carlo paths :math:`\theta_{t+1} = (I - \eta H_{\mathcal B_t})\theta_t` with batches drawn
  uniformly without replacement at every step (any :math:`n`); for short horizons and many paths.
* :func:`lyapunov_paths` -- long renormalized paths: the top Lyapunov exponent and :math:`\log\|\theta_T\|^2`.
* :func:`delayed_growth`, :func:`delayed_noisy` -- :math:`x_{t+1} = x_t - \eta\,g(x_{t-S})`, linear and noisy nonlinear.
* :func:`momentum_growth`, :func:`momentum_noise` -- heavy ball and Nesterov on :math:`\lambda x^2/2`.
* :func:`momentum_map`, :func:`momentum_norms` -- heavy ball and Nesterov on a quadratic with several curvatures:
  the one-step map of the state :math:`(x_t, x_{t-1})` read off the update rule, and :math:`\log\|x_t\|` along a run.
* :func:`nonzero_gradient_moment_map` -- where the per-sample gradients do not vanish (a regular minimum), the exact
  one-step map of :math:`(\mathrm{vec}\,E[xx^\top], E[x], 1)` over every batch; :func:`evolve_moments` (its powers
  :math:`2^k` by repeated squaring), :func:`second_moment_after`, :func:`moment_log_growth`, and the Monte Carlo
  :func:`sgd_paths_second_moment`.
* :func:`refine_crossing` -- locate where a measured rate changes sign, by rounds of grid refinement (from
  :mod:`sims.edges`, re-exported here);

**Divergence is data.** Every simulator returns ``diverged`` (bool) and ``diverged_step`` (the first
step at which it happened, :math:`-1` if never). For the renormalized simulators (exact second
moment, Lyapunov paths, linear growth rates) "diverged" means the tracked quantity exceeded
:math:`10^{150}` times its initial value (the growth rate stays finite and exact thanks to the
renormalization); for the path simulators the state left :math:`|x| \le` ``bound`` or became
non-finite, after which it is frozen. Statistics are taken over finite runs only, with the count
of diverged runs beside them.

Sweeps go through :func:`sims.sweep.run_grid` with module-level per-run functions and their
configuration in ``static``; everything that varies (step, batch-size table index, delay, momentum,
noise, PRNG key) is grid data, so one compilation serves a sweep. Typed PRNG keys; importing
:mod:`sims` enables float64.
"""
from __future__ import annotations

import itertools
import math

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

import sims  # noqa: F401  (float64)
from sims.edges import refine_crossing  # noqa: F401  (re-exported: the edge locators live in sims.edges)
from sims.sweep import padded_length, run_grid
from theory import validate as val
from theory.sgd_stability import check_hessians

__all__ = [
    "LOG_BOUND", "METHOD_IDS", "enumerate_batches", "kron_enumerated", "moment_growth", "sgd_paths",
    "lyapunov_paths", "delayed_growth", "delayed_noisy", "momentum_growth", "momentum_noise", "momentum_map",
    "momentum_norms", "refine_crossing", "dln_hessians", "sampled_batch_noise", "nonzero_gradient_moment_map",
    "evolve_moments", "second_moment_after", "moment_log_growth", "sgd_paths_second_moment",
]

LOG_BOUND = math.log(1e150)  # growth beyond 1e150 x the start is flagged as divergence
METHOD_IDS = {"heavy_ball": 0.0, "nesterov": 1.0}
MAX_BATCHES = 5000  # enumeration limit per batch size (C(n, B) subsets)
# Every sweep is padded to a power of two from SMALL_CHUNK up to the simulator's chunk (then to whole chunks), so
# each (problem shape, static configuration) compiles a handful of shapes however many points a call has
# (compilation dominates these small runs), and a grid never runs more than twice its points.
SMALL_CHUNK = 16
CHUNK = {"moment": 128, "paths": 4096, "lyapunov": 1024, "delay": 128, "delay_noisy": 2048, "momentum": 256,
         "momentum_noise": 1024, "momentum_map": 16384, "momentum_norms": 64}


# ----------------------------------------------------------------------------- argument helpers
def _chunk_of(m: int, name: str) -> int:
    """The padded chunk :func:`_sweep` runs ``m`` points in (its per-chunk buffers scale with it)."""
    return padded_length(m, least=SMALL_CHUNK, most=CHUNK[name])


def _guard(sizes: dict, nbytes: int, what: str, max_bytes) -> None:
    """:func:`theory.validate.check_bytes` (the simulators' size guard; ``max_bytes`` overrides the limit)."""
    val.check_bytes(sizes, nbytes, what=what, max_bytes=max_bytes)


def _vec(name: str, x, **kw) -> np.ndarray:
    """A 1-D float64 array from a scalar or a sequence (validated by :func:`theory.validate.array`)."""
    return val.array(name, x if x is None or isinstance(x, (str, bytes)) else np.atleast_1d(x), ndim=1, **kw)


def _etas(eta, name: str = "eta") -> np.ndarray:
    return _vec(name, eta, low=0.0, low_open=True)


def _broadcast(name: str, x, m: int, **kw) -> np.ndarray:
    """One value or ``m`` values (one per grid point), as an array of length ``m``."""
    a = _vec(name, x, **kw)
    if a.size not in (1, m):
        raise ValueError(f"{name}: expected one value or {m} (one per grid point), got {a.size}")
    return np.broadcast_to(a, (m,)).copy()


def _aligned_ints(name: str, x, m: int, low: int, high: int) -> np.ndarray:
    """An int or an int array of length ``m`` (aligned with the grid), every entry in [low, high]."""
    if isinstance(x, (bool, np.bool_)) or isinstance(x, (str, bytes)) or x is None:
        raise TypeError(f"{name}: expected an integer or an array of integers, got {x!r}")
    a = np.asarray(x)
    if a.dtype.kind not in "iu":
        raise TypeError(f"{name}: expected integers, got dtype {a.dtype} ({x!r})")
    if a.ndim == 0:
        a = np.full(m, int(a))
    if a.shape != (m,):
        raise ValueError(f"{name}: expected one integer or {m} of them (one per grid point), got shape {a.shape}")
    if a.size and (a.min() < low or a.max() > high):
        raise ValueError(f"{name}: every value must be in {low}..{high}, got {a.tolist()}")
    return a.astype(np.int64)


def _steps(n_steps, low: int = 3) -> int:
    """A step count. Rates are slopes over the second half of the run, which needs two points: ``n_steps >= 3``
    (with 2, the slope of one point is 0/0)."""
    return val.integer("n_steps", n_steps, low=low, high=10_000_000)


def _safe(nrm):
    """The norm to divide by: 1 where the state collapsed to exactly 0 (so it stays 0 instead of NaN)."""
    return jnp.where(nrm > 0, nrm, 1.0)


def _tail_slope(ells):
    r"""Least-squares slope of :math:`\ell_t` over the second half of the run: the log growth rate per step.

    A regression (rather than the end-point difference) averages out the bounded oscillation of
    :math:`\ell_t` that complex dominant roots cause: its error falls like (period/T)^2, not period/T.
    """
    n = ells.shape[0]
    half = n // 2
    y = ells[half:]
    t = jnp.arange(y.shape[0], dtype=y.dtype)
    tc = t - t.mean()
    slope = jnp.sum(tc * (y - y.mean())) / jnp.sum(tc * tc)
    return jnp.where(jnp.isneginf(y[-1]), -jnp.inf, slope)  # a collapsed state decays infinitely fast


def _sweep(fn, grid: dict, *args, static: dict, chunk: int) -> dict:
    """:func:`sims.sweep.run_grid` with every chunk padded to full size (``pad_to_chunk``): a power of two from
    ``SMALL_CHUNK`` to ``chunk`` points (:func:`sims.sweep.padded_length`).

    A few device-side shapes (powers of two up to ``chunk``) mean a simulator compiles a handful of programs per
    problem shape, not one per grid size; a 64-point grid runs as 64, not padded to a 128-point chunk (measured:
    ``moment_growth`` at 64 step sizes and 200 steps, 1.34 -> 1.10 ms a call).
    """
    n = len(next(iter(grid.values())))
    return run_grid(fn, grid, *args, static=static, chunk_size=padded_length(n, least=SMALL_CHUNK, most=chunk),
                    pad_to_chunk=True)


def _paths_grid(m: int, n_paths: int) -> tuple[np.ndarray, tuple[int, int], dict]:
    """(point index per run, output shape (m, P), grid with the path index) for m grid points x P paths.

    Runs carry an integer path index, not a key: the per-run function derives its key with
    ``fold_in(key, path)``, so path p has the same randomness at every grid point (common random
    numbers) and the grid stays plain NumPy (no device ops, nothing to compile per grid size).
    """
    point, path = np.divmod(np.arange(m * n_paths), n_paths)
    return point, (m, n_paths), {"path": path.astype(np.int32)}


def _path_key(key, point):
    """The key of one path: ``fold_in`` of the caller's typed key with the path index."""
    return jax.random.fold_in(key, point["path"])


# ----------------------------------------------------------------------------- batch enumeration
def enumerate_batches(hessians, batch_sizes, *, max_bytes=None) -> tuple[np.ndarray, np.ndarray]:
    r"""Batch means :math:`H_{\mathcal B}` of every subset, one padded table per batch size.

    Returns ``mats`` of shape :math:`(m, K, d, d)` (:math:`K = \max_B \binom nB`; table :math:`j` holds
    the :math:`\binom n{B_j}` means of batch size :math:`B_j`, zero-padded) and ``counts`` :math:`(m,)`.
    ``max_bytes``: the allocation limit (:func:`theory.validate.byte_limit`) for the tables.
    """
    return _enumerate(hessians, batch_sizes, "batch_sizes", max_bytes)


def _enumerate(hessians, batch_sizes, name: str, max_bytes=None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`enumerate_batches`, with errors naming the caller's parameter ``name``."""
    h = check_hessians(hessians)
    n = h.shape[0]
    if isinstance(batch_sizes, (bool, np.bool_, str, bytes)) or batch_sizes is None:
        raise TypeError(f"{name}: expected an integer or an array of integers, got {batch_sizes!r}")
    sizes = np.atleast_1d(np.asarray(batch_sizes))
    if sizes.ndim != 1 or sizes.size == 0:
        raise ValueError(f"{name}: expected one batch size or a non-empty 1-D array of them, got shape {sizes.shape}")
    sizes = _aligned_ints(name, sizes, sizes.size, 1, n)
    counts = np.array([math.comb(n, int(b)) for b in sizes])
    if counts.max() > MAX_BATCHES:
        raise ValueError(f"{name}: C({n}, B) = {int(counts.max())} batches exceed the enumeration limit {MAX_BATCHES}")
    d = h.shape[1]
    # the tables, and the largest batch's gathered members (C x B x d x d) while its means are taken
    _guard({name: sizes.tolist(), "hessians": f"shape {h.shape}"},
           8 * d * d * (sizes.size * int(counts.max()) + int(max(c * b for c, b in zip(counts, sizes)))),
           "the batch-mean tables", max_bytes)
    mats = np.zeros((sizes.size, int(counts.max())) + h.shape[1:])
    for j, b in enumerate(sizes):
        idx = np.array(list(itertools.combinations(range(n), int(b))))
        mats[j, : len(idx)] = h[idx].mean(axis=1)
    return mats, counts


@jax.jit
def _kron_sum(mats, weights):
    d = mats.shape[-1]
    return jnp.einsum("mk,mkij,mkab->miajb", weights, mats, mats).reshape(mats.shape[0], d * d, d * d)


def kron_enumerated(hessians, batch_size, *, max_bytes=None) -> np.ndarray:
    r""":math:`E[H_{\mathcal B}\otimes H_{\mathcal B}] = \binom nB^{-1}\sum_{|\mathcal B| = B} H_{\mathcal B}\otimes H_{\mathcal B}` by enumeration.

    ``batch_size``: an int or an array of ints; returns shape :math:`(m, d^2, d^2)` (row-major ``vec``).
    ``max_bytes``: the allocation limit (:func:`theory.validate.byte_limit`) for the tables and the results.
    """
    mats, counts = _enumerate(hessians, batch_size, "batch_size", max_bytes)
    m, d = mats.shape[0], mats.shape[-1]
    _guard({"batch_size": np.atleast_1d(batch_size).tolist(), "hessians": f"d = {d}"}, 3 * 8 * m * d**4,
           "the (m, d^2, d^2) results (device, host and a contraction temporary)", max_bytes)
    weights = (np.arange(mats.shape[1])[None, :] < counts[:, None]) / counts[:, None]
    return np.asarray(_kron_sum(jnp.asarray(mats), jnp.asarray(weights)))


# ----------------------------------------------------------------------------- exact second moment
def _moment_tables(h: np.ndarray, sizes, max_bytes=None) -> dict:
    r"""Per batch size :math:`B` in ``sizes``: the second-order term of the moment operator, :math:`(d^2, d^2)`.

    :math:`\mathcal K_B[(i,j),(a,b)] = \binom nB^{-1}\sum_{\mathcal B} H_{\mathcal B}[i,a]\,H_{\mathcal B}[b,j]`
    (row-major ``vec``), by enumerating the batches once per size.
    """
    out = {}
    for b in sorted({int(x) for x in sizes}):
        mats, counts = _enumerate(h, b, "batch_size", max_bytes)
        out[b] = np.einsum("kia,kbj->ijab", mats[0], mats[0]).reshape(h.shape[1] ** 2, -1) / counts[0]
    return out


def _moment_run(point, *, n_steps):
    r"""One exact second-moment trajectory: :math:`\Sigma \leftarrow E_{\mathcal B}[A_{\mathcal B}\Sigma A_{\mathcal B}]`, renormalized by its trace.

    ``point`` holds the step ``eta``, the mean Hessian ``hbar`` :math:`\bar H` (the mean of every batch mean, whatever
    :math:`B`), the second-order term ``kron`` :math:`\mathcal K_B` (:func:`_moment_tables`) and the start ``sigma0``.
    With :math:`A_{\mathcal B} = I - \eta H_{\mathcal B}` the mixture is the :math:`d^2 \times d^2` operator (row-major
    ``vec``, :math:`\mathrm{vec}(A\Sigma A) = (A\otimes A^\top)\,\mathrm{vec}\,\Sigma`, :math:`H` symmetric)

    .. math:: \mathcal M_B = I\otimes I - \eta\,(\bar H\otimes I + I\otimes\bar H) + \eta^2\,\mathcal K_B,

    formed in :math:`O(d^4)` per point (the batches are summed once per batch size, not once per step size), and a
    step is one :math:`d^2`-vector product: :math:`d^4` multiply-adds instead of :math:`2\binom nB d^3`.
    """
    hbar = point["hbar"]
    d = hbar.shape[-1]
    eye = jnp.eye(d)

    def outer(x, y):  # [(i, j), (a, b)] -> x[i, a] y[b, j]
        return jnp.einsum("ia,bj->ijab", x, y).reshape(d * d, d * d)

    op = outer(eye, eye) - point["eta"] * (outer(hbar, eye) + outer(eye, hbar)) + point["eta"] ** 2 * point["kron"]
    sigma0 = point["sigma0"].reshape(d * d)
    diag = jnp.arange(d) * (d + 1)  # positions of the diagonal in the row-major vec
    tr0 = jnp.sum(sigma0[diag])

    def step(carry, _):
        s, logtr = carry
        s = op @ s
        tr = jnp.sum(s[diag])
        logtr = logtr + jnp.log(tr)
        return (s / tr, logtr), logtr

    _, logs = lax.scan(step, (sigma0 / tr0, jnp.log(tr0)), None, length=n_steps)
    logs = jnp.concatenate([jnp.log(tr0)[None], logs])
    rel = logs - logs[0]
    bad = jnp.isnan(rel) | (rel > LOG_BOUND)  # -inf (collapse to 0) is not divergence
    return {"log_trace": logs, "rate": _tail_slope(logs[1:]), "diverged": bad.any(),
            "diverged_step": jnp.where(bad.any(), jnp.argmax(bad), -1)}


def moment_growth(hessians, batch_size, eta, *, n_steps: int, sigma0=None, max_bytes=None) -> dict:
    r"""Exact :math:`E[\theta_t\theta_t^\top]` of linearized SGD by batch enumeration, for every step size in ``eta``.

    ``hessians``: per-sample Hessians :math:`(n, d, d)`, or one problem per grid point :math:`(m, n, d, d)`;
    ``batch_size``: an int, or one int per entry of ``eta`` (then the pairs :math:`(\eta_i, B_i)` are the
    grid); ``sigma0``: :math:`\Sigma_0` (default :math:`I`), :math:`(d, d)` or one per point :math:`(m, d, d)`.
    Returns ``log_trace`` :math:`\log\mathrm{tr}\,\Sigma_t`, :math:`t = 0..T`, shape :math:`(m, T+1)`; ``rate``,
    the least-squares slope of :math:`\log\mathrm{tr}\,\Sigma_t` over :math:`T/2 < t \le T`, which tends to
    :math:`\log\rho(\mathcal M_B)`; ``diverged``/``diverged_step`` (growth beyond :math:`10^{150}`). ``max_bytes``:
    the allocation limit (:func:`theory.validate.byte_limit`) for the per-point operators and ``log_trace``.
    """
    etas = _etas(eta)
    raw = val.array("hessians", hessians, ndim=(3, 4))
    per_point = raw.ndim == 4
    if per_point and raw.shape[0] != etas.size:
        raise ValueError(f"hessians: expected one problem per grid point ({etas.size}), got {raw.shape[0]}")
    problems = [check_hessians(x) for x in raw] if per_point else [check_hessians(raw)]
    n, d = problems[0].shape[0], problems[0].shape[1]
    sizes = _aligned_ints("batch_size", batch_size, etas.size, 1, n)
    n_steps = _steps(n_steps)
    m = etas.size
    # per point the operator's terms and the start (host and device), a chunk's operators and records; the batch
    # enumeration guards its own tables (one size at a time)
    _guard({"n_steps": n_steps, "eta": f"{m} points", "hessians": f"n = {n}, d = {d}"},
           8 * (2 * m * (d**4 + 2 * d * d) + 2 * m * (n_steps + 1) + _chunk_of(m, "moment") * (d**4 + 2 * (n_steps + 1))),
           "the per-point moment operators and the log-trace records", max_bytes)
    if sigma0 is None:
        s0 = np.broadcast_to(np.eye(d), (etas.size, d, d))
    else:
        s0 = val.array("sigma0", sigma0, ndim=(2, 3))
        s0 = np.broadcast_to(s0, (etas.size, d, d)) if s0.shape in ((d, d), (etas.size, d, d)) else None
        if s0 is None:
            raise ValueError(f"sigma0: expected shape ({d}, {d}) or ({etas.size}, {d}, {d}), got {np.shape(sigma0)}")
    traces = np.trace(s0, axis1=1, axis2=2)
    if not np.all(traces > 0):
        raise ValueError(f"sigma0: expected PSD matrices with positive trace, got min trace {traces.min():.3g}")
    pick = np.arange(etas.size) if per_point else np.zeros(etas.size, dtype=int)
    tables = [_moment_tables(h, sizes[pick == i], max_bytes) for i, h in enumerate(problems)]
    grid = {"eta": etas, "hbar": np.stack([h.mean(axis=0) for h in problems])[pick],
            "kron": np.stack([tables[i][b] for i, b in zip(pick, sizes)]), "sigma0": np.ascontiguousarray(s0)}
    return _sweep(_moment_run, grid, static={"n_steps": n_steps}, chunk=CHUNK["moment"])


# ----------------------------------------------------------------------------- Monte Carlo paths
def _subset_masks(key, n: int, batch_size, n_steps: int):
    r"""0/1 masks of uniformly random ``batch_size``-subsets of :math:`\{0..n-1\}`, one per step, shape :math:`(T, n)`.

    Selection sampling: item :math:`i` is taken with probability :math:`(B - k)/(n - i)`, :math:`k` the
    number taken so far, which makes every :math:`B`-subset equally likely and takes exactly :math:`B`.
    A scan over the :math:`n` items, vectorized over steps (no sort; :math:`B` may be traced data).
    """
    u = jax.random.uniform(key, (n, n_steps))

    def visit(k, item):
        ui, i = item
        take = ui * (n - i) < (batch_size - k)
        return k + take, take

    _, m = lax.scan(visit, jnp.zeros(n_steps), (u, jnp.arange(n)))
    return m.T


def _path_run(point, key, hessians, theta0, *, n_steps, bound):
    r"""One SGD path with batches drawn without replacement (a uniformly random :math:`B`-subset per step).

    :math:`H_{\mathcal B}\theta = \frac1B\sum_i m_i H_i\theta` with the subset's 0/1 mask :math:`m`
    (``_subset_masks``), so :math:`B` is grid data.
    """
    n = hessians.shape[0]
    masks = _subset_masks(_path_key(key, point), n, point["batch_size"], n_steps) / point["batch_size"]

    def step(carry, mask):
        theta, dead = carry
        per_sample = hessians @ theta                       # H_i theta, (n, d)
        batch = jnp.tensordot(mask, per_sample, axes=1)     # H_B theta
        new = theta - point["eta"] * batch
        # the step's batch noise (H_B - H) theta and the population's spread (1/n) sum_i |(H_i - H) theta|^2
        mean = per_sample.mean(axis=0)
        noise = jnp.sum((batch - mean) ** 2)
        spread = jnp.mean(jnp.sum((per_sample - mean) ** 2, axis=1))
        sq = jnp.sum(new * new)
        dead_now = dead | ~(sq <= bound**2)
        theta = jnp.where(dead, theta, new)  # frozen after divergence
        gone = dead | dead_now
        return (theta, dead_now), (jnp.where(dead, jnp.inf, sq), jnp.where(gone, 0.0, noise), jnp.where(gone, 0.0, spread))

    (_, dead), (sq, noise, spread) = lax.scan(step, (theta0, jnp.array(False)), masks)
    sq = jnp.concatenate([jnp.sum(theta0 * theta0)[None], sq])
    bad = ~(sq <= bound**2)
    return {"sq_norm": sq, "batch_noise": noise, "spread": spread, "diverged": dead,
            "diverged_step": jnp.where(dead, jnp.argmax(bad), -1)}


def sgd_paths(key, hessians, batch_size, eta, theta0, *, n_steps: int, n_paths: int, bound: float = 1e100,
              max_bytes=None) -> dict:
    r"""Monte Carlo paths of :math:`\theta_{t+1} = (I - \eta H_{\mathcal B_t})\theta_t`, batches uniform without replacement.

    ``key``: typed PRNG key (path :math:`p` uses ``fold_in(key, p)`` at every grid point: common random
    numbers); ``eta``: step sizes :math:`(m,)`; ``batch_size``: an int or one per entry of ``eta``;
    ``theta0``: :math:`(d,)`. Returns ``sq_norm`` :math:`\|\theta_t\|^2`, shape :math:`(m, P, T+1)`
    (``inf`` after divergence), ``diverged`` :math:`(m, P)` (:math:`\|\theta\| >` ``bound`` or
    non-finite) and ``diverged_step``; and per step :math:`t = 0..T-1`, shape :math:`(m, P, T)`: ``batch_noise``
    :math:`\|(H_{\mathcal B_t} - H)\theta_t\|^2` (the noise the step's batch adds to the full-batch step, over
    :math:`\eta`) and ``spread`` :math:`\frac1n\sum_i\|(H_i - H)\theta_t\|^2` (the population's spread at the same
    state; both 0 from the step that diverges). Given :math:`\theta_t`, a uniform :math:`B`-subset has
    :math:`E\|(H_{\mathcal B} - H)\theta\|^2 = p\,\frac1n\sum_i\|(H_i - H)\theta\|^2` with :math:`p` the mixture weight,
    so their ratio measures :math:`p` on the paths. ``max_bytes``: the allocation limit
    (:func:`theory.validate.byte_limit`) for the three per-step records of every path and a chunk's batch masks.
    """
    val.key("key", key)
    h = check_hessians(hessians)
    etas = _etas(eta)
    sizes = _aligned_ints("batch_size", batch_size, etas.size, 1, h.shape[0])
    th0 = val.array("theta0", theta0, shape=(h.shape[1],))
    n_steps = _steps(n_steps, low=1)
    n_paths = val.integer("n_paths", n_paths, low=1)
    bound = val.real("bound", bound, low=0.0, low_open=True)
    runs = etas.size * n_paths
    # issue 29: 1e7 paths x 1e4 steps grew past 5 GiB before failing; the records are 3 (T+1)-rows per path, held
    # on the device and again on the host, and a chunk draws its (n, T) uniforms and masks at once
    _guard({"n_paths": n_paths, "n_steps": n_steps, "eta": f"{etas.size} points"},
           2 * 3 * 8 * runs * (n_steps + 1) + 3 * 8 * _chunk_of(runs, "paths") * h.shape[0] * n_steps,
           "the per-step records of every path and a chunk's batch masks", max_bytes)
    p, shape, grid = _paths_grid(etas.size, n_paths)
    grid.update(eta=etas[p], batch_size=sizes[p].astype(np.float64))
    out = _sweep(_path_run, grid, key, jnp.asarray(h), jnp.asarray(th0), static={"n_steps": n_steps, "bound": bound},
                   chunk=CHUNK["paths"])
    return {k: x.reshape(shape + x.shape[1:]) for k, x in out.items()}


def _lyapunov_run(point, key, mats, counts, theta0, *, n_steps):
    r"""One renormalized path from ``theta0``: :math:`\ell_t = \log\|\theta_t\|`, batches drawn uniformly from the enumerated table."""
    # every batch index of the path in one vectorized draw: floor(u * count) is uniform on 0..count-1
    u = jax.random.uniform(_path_key(key, point), (n_steps,))
    js = jnp.minimum(jnp.floor(u * counts[point["table"]]).astype(jnp.int32), counts[point["table"]] - 1)
    theta = theta0 / jnp.linalg.norm(theta0)
    burn = point["burn"]  # data, not static: one compilation serves every burn-in

    def step(carry, xs):
        # the running log-norm, its value at the burn-in and the first bad step are carried, not recorded per step
        theta, ell, ell_burn, first_bad = carry
        t, j = xs
        # indexed in the shared table, not in a per-path copy of it: under vmap the copy is (paths, K, d, d), far
        # larger than the cache, and each step's gather read from it
        theta = theta - point["eta"] * (mats[point["table"], j] @ theta)
        nrm = jnp.linalg.norm(theta)
        ell = ell + jnp.log(nrm)  # -inf once the state is exactly 0 (a superstable step): it stays -inf
        bad = jnp.isnan(ell) | (ell > LOG_BOUND / 2)  # -inf (collapse to 0) is not divergence
        return (theta / _safe(nrm), ell, jnp.where(t == burn - 1, ell, ell_burn),
                jnp.where((first_bad < 0) & bad, t + 1, first_bad)), None

    zero = jnp.array(0.0)
    (_, ell, ell_burn, first_bad), _ = lax.scan(step, (theta, zero, zero, jnp.array(-1)),
                                                (jnp.arange(n_steps), js))
    return {"gamma": (ell - ell_burn) / (n_steps - burn), "log_sq_norm": 2 * ell,
            "diverged": first_bad >= 0, "diverged_step": first_bad}


def lyapunov_paths(key, hessians, batch_size, eta, *, n_steps: int, n_paths: int, burn: int = 0, theta0=None,
                   max_bytes=None) -> dict:
    r"""Top Lyapunov exponent and final :math:`\log\|\theta_T\|^2` of linearized SGD paths, renormalized at every step.

    Each path starts from the unit vector along ``theta0`` (default :math:`(1, \dots, 1)/\sqrt d`; the exponent
    does not depend on it) and multiplies by :math:`I - \eta H_{\mathcal B_t}`,
    the batch drawn uniformly from all :math:`\binom nB` subsets (sampling without replacement).
    ``batch_size``: an int or one per entry of ``eta``; path :math:`p` uses ``fold_in(key, p)`` at every grid point.
    Returns, shape :math:`(m, P)`: ``gamma`` :math:`= (\ell_T - \ell_b)/(T - b)` with
    :math:`\ell_t = \log\|\theta_t\|` and :math:`b` = ``burn``; ``log_sq_norm`` :math:`= 2\ell_T`
    (exact even where :math:`\|\theta_T\|^2` would overflow); ``diverged`` (:math:`\|\theta_t\| > 10^{75}`) and
    ``diverged_step``. ``max_bytes``: the allocation limit (:func:`theory.validate.byte_limit`) for a chunk's
    per-step draws and the per-path results.
    """
    val.key("key", key)
    h = check_hessians(hessians)
    etas = _etas(eta)
    sizes = _aligned_ints("batch_size", batch_size, etas.size, 1, h.shape[0])
    n_steps = _steps(n_steps)
    n_paths = val.integer("n_paths", n_paths, low=1)
    burn = val.integer("burn", burn, low=0, high=n_steps - 1)
    d = h.shape[1]
    runs = etas.size * n_paths
    _guard({"n_paths": n_paths, "n_steps": n_steps, "eta": f"{etas.size} points"},
           2 * 4 * 8 * runs + 3 * 8 * _chunk_of(runs, "lyapunov") * n_steps,
           "a chunk's per-step draws (uniforms, batch indices and the step counter), and the per-path results", max_bytes)
    th0 = np.ones(d) if theta0 is None else val.array("theta0", theta0, shape=(d,))
    if not np.linalg.norm(th0) > 0:
        raise ValueError("theta0: expected a nonzero start vector")
    mats, counts = enumerate_batches(h, np.arange(1, h.shape[0] + 1))
    p, shape, grid = _paths_grid(etas.size, n_paths)
    grid.update(eta=etas[p], table=(sizes - 1).astype(np.int32)[p], burn=np.full(p.size, burn, dtype=np.int32))
    out = _sweep(_lyapunov_run, grid, key, jnp.asarray(mats), jnp.asarray(counts, dtype=jnp.int32), jnp.asarray(th0),
                   static={"n_steps": n_steps}, chunk=CHUNK["lyapunov"])
    return {k: x.reshape(shape) for k, x in out.items()}


# ----------------------------------------------------------------------------- delayed gradients
def _delay_run(point, *, n_steps, max_delay):
    r""":math:`x_{t+1} = x_t - a\,x_{t-S}` from a constant history :math:`x_{-k} = 1`, renormalized by :math:`\max|x|` over the window."""
    buf = jnp.ones(max_delay + 1)

    def step(carry, _):
        buf, ell = carry
        new = buf[0] - point["a"] * buf[point["delay"]]
        buf = jnp.concatenate([new[None], buf[:-1]])
        nrm = jnp.max(jnp.abs(buf))
        ell = ell + jnp.log(nrm)  # -inf once the state is exactly 0: it stays -inf
        return (buf / _safe(nrm), ell), ell

    _, ells = lax.scan(step, (buf, jnp.array(0.0)), None, length=n_steps)
    bad = jnp.isnan(ells) | (ells > LOG_BOUND)  # -inf (collapse to 0) is not divergence
    return {"rate": _tail_slope(ells), "diverged": bad.any(),
            "diverged_step": jnp.where(bad.any(), jnp.argmax(bad) + 1, -1)}


def delayed_growth(a, delay, *, n_steps: int, max_delay: int = 8, max_bytes=None) -> dict:
    r"""Asymptotic growth rate of :math:`x_{t+1} = x_t - a\,x_{t-S}` (:math:`a = \eta\lambda`) for each ``a``.

    ``delay``: an int :math:`S` or one per entry of ``a``, in :math:`0..` ``max_delay`` (the history
    window is ``max_delay + 1`` long whatever :math:`S`, so every delay shares one compilation).
    Returns ``rate`` (least-squares slope of the log max-norm of the state over the second half, tends to
    :math:`\log` of the largest root modulus of :math:`z^{S+1} - z^S + a`), ``diverged`` (growth beyond
    :math:`10^{150}`) and ``diverged_step``. ``max_bytes``: the allocation limit (:func:`theory.validate.byte_limit`)
    for a chunk's per-step log-norms.
    """
    aa = _vec("a", a)
    max_delay = val.integer("max_delay", max_delay, low=0, high=64)
    delays = _aligned_ints("delay", delay, aa.size, 0, max_delay)
    n_steps = _steps(n_steps)
    _guard({"n_steps": n_steps}, 3 * 8 * _chunk_of(aa.size, "delay") * n_steps, "a chunk's per-step log-norms",
           max_bytes)
    return _sweep(_delay_run, {"a": aa, "delay": delays.astype(np.int32)},
                    static={"n_steps": n_steps, "max_delay": max_delay}, chunk=CHUNK["delay"])


def _delay_noisy_run(point, key, lam, kappa, *, n_steps, max_delay, bound):
    r"""One path of :math:`x_{t+1} = x_t - \eta(\lambda x_{t-S} + \kappa x_{t-S}^3 + \sigma\xi_t)` from :math:`x \equiv 0`; frozen once :math:`|x| >` bound."""
    noise = jax.random.normal(_path_key(key, point), (n_steps,))

    def step(carry, xi):
        buf, dead = carry
        y = buf[point["delay"]]
        new = buf[0] - point["eta"] * (lam * y + kappa * y**3 + point["sigma"] * xi)
        dead_now = dead | ~(jnp.abs(new) <= bound)
        buf = jnp.where(dead_now, buf, jnp.concatenate([new[None], buf[:-1]]))
        return (buf, dead_now), dead_now

    (_, dead), deads = lax.scan(step, (jnp.zeros(max_delay + 1), jnp.array(False)), noise)
    return {"diverged": dead, "diverged_step": jnp.where(dead, jnp.argmax(deads) + 1, -1)}


def delayed_noisy(key, eta, delay, sigma, *, lam: float = 1.0, kappa: float = 1.0, n_steps: int, n_paths: int,
                  max_delay: int = 8, bound: float = 1e3, max_bytes=None) -> dict:
    r"""Escape of delayed noisy SGD on the hardening toy :math:`f(x) = \lambda x^2/2 + \kappa x^4/4`.

    :math:`x_{t+1} = x_t - \eta\,(f'(x_{t-S}) + \sigma\xi_t)`, :math:`\xi_t` standard Gaussian, started at
    the minimum. ``eta``, ``delay`` and ``sigma`` are aligned arrays (or scalars broadcast to ``eta``);
    each grid point runs ``n_paths`` paths; path :math:`p` uses ``fold_in(key, p)`` at every grid point. Returns
    ``diverged`` (:math:`|x|` left ``bound`` within ``n_steps``; the path is then frozen) and
    ``diverged_step``, shape :math:`(m, P)`.
    ``max_bytes``: the allocation limit (:func:`theory.validate.byte_limit`) for a chunk's per-step noise.
    """
    val.key("key", key)
    etas = _etas(eta)
    max_delay = val.integer("max_delay", max_delay, low=0, high=64)
    delays = _aligned_ints("delay", delay, etas.size, 0, max_delay)
    sig = _broadcast("sigma", sigma, etas.size, low=0.0)
    lam = val.real("lam", lam, low=0.0, low_open=True)
    kappa = val.real("kappa", kappa, low=0.0)
    n_steps = _steps(n_steps)
    n_paths = val.integer("n_paths", n_paths, low=1)
    runs = np.size(eta) * n_paths if not isinstance(eta, (str, bytes)) else n_paths
    _guard({"n_paths": n_paths, "n_steps": n_steps}, 2 * 3 * 8 * runs + 3 * 8 * _chunk_of(runs, "delay_noisy") * n_steps,
           "a chunk's per-step noise and flags, and the per-path results", max_bytes)
    bound = val.real("bound", bound, low=0.0, low_open=True)
    p, shape, grid = _paths_grid(etas.size, n_paths)
    grid.update(eta=etas[p], delay=delays.astype(np.int32)[p], sigma=sig[p])
    out = _sweep(_delay_noisy_run, grid, key, jnp.float64(lam), jnp.float64(kappa),
                   static={"n_steps": n_steps, "max_delay": max_delay, "bound": bound}, chunk=CHUNK["delay_noisy"])
    return {k: x.reshape(shape) for k, x in out.items()}


# ----------------------------------------------------------------------------- momentum
def _momentum_step(x, x_prev, eta, mu, nesterov, lam, noise):
    r"""Heavy ball (``nesterov = 0``) or Nesterov (``1``): :math:`y = x + \nu\mu(x - x')`, :math:`x^+ = x + \mu(x - x') - \eta(\lambda y + \text{noise})`."""
    y = x + nesterov * mu * (x - x_prev)
    return x + mu * (x - x_prev) - eta * (lam * y + noise)


def _momentum_run(point, *, n_steps):
    """Deterministic momentum from x_0 = x_{-1} = 1, renormalized by the state's max-norm; the log growth rate."""

    def step(carry, _):
        x, xp, ell = carry
        new = _momentum_step(x, xp, point["eta"], point["mu"], point["nesterov"], point["lam"], 0.0)
        nrm = jnp.maximum(jnp.abs(new), jnp.abs(x))
        ell = ell + jnp.log(nrm)  # -inf once the state is exactly 0 (e.g. Nesterov at h = 1): it stays -inf
        return (new / _safe(nrm), x / _safe(nrm), ell), ell

    _, ells = lax.scan(step, (jnp.array(1.0), jnp.array(1.0), jnp.array(0.0)), None, length=n_steps)
    bad = jnp.isnan(ells) | (ells > LOG_BOUND)  # -inf (collapse to 0) is not divergence
    return {"rate": _tail_slope(ells), "diverged": bad.any(),
            "diverged_step": jnp.where(bad.any(), jnp.argmax(bad) + 1, -1)}


def _method_flags(method, m: int) -> np.ndarray:
    if not isinstance(method, (str, list, tuple, np.ndarray)):
        raise TypeError(f"method: expected a method name or a sequence of them, got {type(method).__name__} {method!r}")
    names = [method] * m if isinstance(method, str) else list(method)
    if len(names) != m:
        raise ValueError(f"method: expected one name or {m} (one per grid point), got {len(names)}")
    for name in names:
        if name not in METHOD_IDS:
            raise ValueError(f"method: expected one of {tuple(METHOD_IDS)}, got {name!r}")
    return np.array([METHOD_IDS[name] for name in names])


def _mus(mu, m: int) -> np.ndarray:
    a = _broadcast("mu", mu, m, low=0.0, high=1.0)
    if np.any(a >= 1.0):
        raise ValueError(f"mu: every value must be < 1, got max {a.max()}")
    return a


def momentum_growth(eta, mu, *, method="heavy_ball", lam: float = 1.0, n_steps: int, max_bytes=None) -> dict:
    r"""Log growth rate per step of heavy ball / Nesterov on :math:`\lambda x^2/2` (no noise), per grid point.

    ``eta``, ``mu`` (:math:`0 \le \mu < 1`) and ``method`` (a name or one per point) are aligned; the
    method is grid data, so both share one compilation. ``rate`` tends to the log of the largest
    root modulus of the characteristic polynomial; ``diverged`` flags growth beyond :math:`10^{150}`. ``max_bytes``:
    the allocation limit (:func:`theory.validate.byte_limit`) for a chunk's per-step log-norms.
    """
    etas = _etas(eta)
    mus = _mus(mu, etas.size)
    flags = _method_flags(method, etas.size)
    lam = val.real("lam", lam, low=0.0, low_open=True)
    n_steps = _steps(n_steps)
    _guard({"n_steps": n_steps}, 3 * 8 * _chunk_of(etas.size, "momentum") * n_steps, "a chunk's per-step log-norms",
           max_bytes)
    grid = {"eta": etas, "mu": mus, "nesterov": flags, "lam": np.full(etas.size, lam)}
    return _sweep(_momentum_run, grid, static={"n_steps": n_steps}, chunk=CHUNK["momentum"])


def _momentum_noise_run(point, key, *, n_steps, burn, bound):
    r"""Noisy heavy ball / Nesterov from :math:`x = 0`: the time average of :math:`x_t^2` over :math:`t > b`."""
    noise = point["sigma"] * jax.random.normal(_path_key(key, point), (n_steps,))

    def step(carry, xi):
        x, xp, acc, k, dead = carry
        new = _momentum_step(x, xp, point["eta"], point["mu"], point["nesterov"], point["lam"], xi)
        dead_now = dead | ~(jnp.abs(new) <= bound)
        x, xp = jnp.where(dead_now, x, new), jnp.where(dead_now, xp, x)
        acc = acc + jnp.where(k >= burn, x * x, 0.0)
        return (x, xp, acc, k + 1, dead_now), dead_now

    zero = jnp.array(0.0)
    (_, _, acc, _, dead), deads = lax.scan(step, (zero, zero, zero, jnp.array(0), jnp.array(False)), noise)
    return {"mean_sq": jnp.where(dead, jnp.nan, acc / (n_steps - burn)), "diverged": dead,
            "diverged_step": jnp.where(dead, jnp.argmax(deads) + 1, -1)}


def momentum_noise(key, eta, mu, *, sigma: float, method="heavy_ball", lam: float = 1.0, n_steps: int, burn: int,
                   n_paths: int, bound: float = 1e100, max_bytes=None) -> dict:
    r"""Stationary :math:`E[x^2]` of momentum SGD with additive gradient noise :math:`\sigma\xi_t` on :math:`\lambda x^2/2`.

    Each path starts at 0 and returns ``mean_sq`` :math:`= \frac1{T-b}\sum_{t=b+1}^{T} x_t^2` (NaN for a
    diverged path), ``diverged`` (:math:`|x| >` ``bound``) and ``diverged_step``; shape :math:`(m, P)`.
    Path :math:`p` uses ``fold_in(key, p)`` at every grid point.
    ``max_bytes``: the allocation limit (:func:`theory.validate.byte_limit`) for a chunk's per-step noise.
    """
    val.key("key", key)
    etas = _etas(eta)
    mus = _mus(mu, etas.size)
    flags = _method_flags(method, etas.size)
    sigma = val.real("sigma", sigma, low=0.0)
    lam = val.real("lam", lam, low=0.0, low_open=True)
    n_steps = _steps(n_steps)
    burn = val.integer("burn", burn, low=0, high=n_steps - 1)
    n_paths = val.integer("n_paths", n_paths, low=1)
    runs = np.size(eta) * n_paths if not isinstance(eta, (str, bytes)) else n_paths
    _guard({"n_paths": n_paths, "n_steps": n_steps},
           2 * 3 * 8 * runs + 3 * 8 * _chunk_of(runs, "momentum_noise") * n_steps,
           "a chunk's per-step noise and flags, and the per-path results", max_bytes)
    bound = val.real("bound", bound, low=0.0, low_open=True)
    p, shape, grid = _paths_grid(etas.size, n_paths)
    grid.update(eta=etas[p], mu=mus[p], nesterov=flags[p], lam=np.full(p.size, lam), sigma=np.full(p.size, sigma))
    out = _sweep(_momentum_noise_run, grid, key, static={"n_steps": n_steps, "burn": burn, "bound": bound},
                   chunk=CHUNK["momentum_noise"])
    return {k: x.reshape(shape) for k, x in out.items()}


def _curvatures(lams, m: int) -> np.ndarray:
    """The curvatures of a diagonal quadratic, one row per grid point: ``(k,)`` (shared) or ``(m, k)``, positive, k <= 4096."""
    a = val.array("lams", np.atleast_1d(lams) if isinstance(lams, (int, float, np.number)) else lams, ndim=(1, 2),
                  low=0.0, low_open=True)
    if a.ndim == 2 and a.shape[0] != m:
        raise ValueError(f"lams: expected one row of curvatures or {m} (one per grid point), got shape {a.shape}")
    if a.shape[-1] > 4096 or a.shape[-1] == 0:
        raise ValueError(f"lams: expected 1 to 4096 curvatures per point, got {a.shape[-1]}")
    return np.broadcast_to(a, (m, a.shape[-1])).copy()


def _momentum_map_run(point):
    r"""The state map :math:`(x_t, x_{t-1}) \mapsto (x_{t+1}, x_t)` on each curvature, read off :func:`_momentum_step`
    by stepping the two basis states, and its spectral radius (largest eigenvalue modulus over the curvatures)."""
    def column(x, xp):
        new = _momentum_step(x, xp, point["eta"], point["mu"], point["nesterov"], point["lams"], 0.0)
        return jnp.stack([new, x], axis=-1)  # (k, 2): the image of the basis state, per curvature

    one, zero = jnp.ones_like(point["lams"]), jnp.zeros_like(point["lams"])
    mats = jnp.stack([column(one, zero), column(zero, one)], axis=-1)  # (k, 2, 2): columns are the images
    # eigenvalues of each 2 x 2 block from its trace and determinant (the complex square root keeps a double
    # eigenvalue to round-off: a Jordan block's pair is not split beyond sqrt(eps) as a general eigensolver may)
    tr = mats[:, 0, 0] + mats[:, 1, 1]
    det = mats[:, 0, 0] * mats[:, 1, 1] - mats[:, 0, 1] * mats[:, 1, 0]
    root = jnp.sqrt((tr * tr / 4 - det).astype(jnp.complex128))
    radius = jnp.max(jnp.maximum(jnp.abs(tr / 2 + root), jnp.abs(tr / 2 - root)))
    return {"map": mats, "radius": radius, "diverged": ~jnp.isfinite(radius),
            "diverged_step": jnp.where(jnp.isfinite(radius), -1, 1)}


def momentum_map(eta, mu, *, lams, method="heavy_ball", max_bytes=None) -> dict:
    r"""The one-step map of heavy ball / Nesterov on the quadratic :math:`\frac12\sum_i\lambda_i x_i^2`, per grid point.

    ``eta``, ``mu`` (:math:`0 \le \mu < 1`) and ``method`` are aligned grid data; ``lams`` the curvatures, one row
    :math:`(k,)` shared by every point or one row per point :math:`(m, k)`.
    The map of the state :math:`(x_t, x_{t-1})` is block diagonal, one :math:`2\times2` block per curvature, read off
    the update rule by stepping the two basis states (nothing is assumed of its form). Returns ``map``
    :math:`(m, k, 2, 2)`, ``radius`` (the largest eigenvalue modulus over the blocks, by a numerical eigensolver: the
    asymptotic contraction factor per step), ``diverged`` (a non-finite map, e.g. an overflowing step) and
    ``diverged_step`` (1 when diverged, else :math:`-1`). ``max_bytes``: the allocation limit for the maps.
    """
    etas = _etas(eta)
    mus = _mus(mu, etas.size)
    flags = _method_flags(method, etas.size)
    k = np.shape(lams)[-1] if np.ndim(lams) else 1
    _guard({"eta": etas.size, "lams": k}, 8 * 6 * k * max(etas.size, _chunk_of(etas.size, "momentum_map")),
           "the per-point curvatures and maps", max_bytes)
    grid = {"eta": etas, "mu": mus, "nesterov": flags, "lams": _curvatures(lams, etas.size)}
    return _sweep(_momentum_map_run, grid, static={}, chunk=CHUNK["momentum_map"])


def _momentum_norms_run(point, *, n_steps):
    r"""Heavy ball / Nesterov on :math:`\frac12\sum_i\lambda_ix_i^2` from :math:`x_0 = x_{-1} = (1, \dots, 1)`:
    :math:`\log\|x_t\|_2`, :math:`t = 1..T`, the state renormalized by its max-norm at every step."""

    def step(carry, _):
        x, xp, ell = carry
        new = _momentum_step(x, xp, point["eta"], point["mu"], point["nesterov"], point["lams"], 0.0)
        nrm = jnp.maximum(jnp.max(jnp.abs(new)), jnp.max(jnp.abs(x)))
        ell = ell + jnp.log(nrm)
        new, x = new / _safe(nrm), x / _safe(nrm)
        return (new, x, ell), ell + jnp.log(jnp.linalg.norm(new))

    one = jnp.ones_like(point["lams"])
    _, out = lax.scan(step, (one, one, jnp.array(0.0)), None, length=n_steps)
    bad = jnp.isnan(out) | (out > LOG_BOUND)
    return {"log_norm": out, "diverged": bad.any(), "diverged_step": jnp.where(bad.any(), jnp.argmax(bad) + 1, -1)}


def momentum_norms(eta, mu, *, lams, method="heavy_ball", n_steps: int, max_bytes=None) -> dict:
    r""":math:`\log\|x_t\|_2` of heavy ball / Nesterov (no noise) on :math:`\frac12\sum_i\lambda_ix_i^2`, per grid point.

    ``lams``: the curvatures, :math:`(k,)` or one row per point :math:`(m, k)`. From
    :math:`x_0 = x_{-1} = (1, \dots, 1)`; ``log_norm`` has shape :math:`(m, T)` (step :math:`t = 1..T`, exact
    through the per-step renormalization, so a contraction by :math:`10^{-300}` stays measurable); ``diverged`` flags
    growth beyond :math:`10^{150}` (or NaN) and ``diverged_step`` the first such step. ``max_bytes``: the allocation
    limit for a chunk's log-norms.
    """
    etas = _etas(eta)
    mus = _mus(mu, etas.size)
    flags = _method_flags(method, etas.size)
    n_steps = _steps(n_steps)
    k = np.shape(lams)[-1] if np.ndim(lams) else 1
    _guard({"n_steps": n_steps, "eta": etas.size, "lams": k},
           8 * (n_steps + k) * max(etas.size, _chunk_of(etas.size, "momentum_norms")),
           "the per-step log-norms and the curvatures", max_bytes)
    grid = {"eta": etas, "mu": mus, "nesterov": flags, "lams": _curvatures(lams, etas.size)}
    return _sweep(_momentum_norms_run, grid, static={"n_steps": n_steps}, chunk=CHUNK["momentum_norms"])


# ----------------------------------------------------------------------------- a diagonal linear net
def _dln_loss(params, x, y):
    d = x.shape[0]
    return 0.5 * (jnp.sum(params[:d] * params[d:] * x) - y) ** 2


_dln_hessian = jax.jit(jax.vmap(jax.hessian(_dln_loss), in_axes=(None, 0, 0)))


def dln_hessians(u, v, X, y=None) -> np.ndarray:
    r"""Per-sample Hessians of :math:`\ell_i = \frac12(\sum_k u_kv_kx_{ik} - y_i)^2` w.r.t. :math:`(u, v)` by autodiff, :math:`(n, 2d, 2d)`.

    ``y`` defaults to the net's own outputs, so :math:`(u, v)` is an interpolating minimum.
    """
    x = val.array("X", X, ndim=2)
    uu = val.array("u", u, shape=(x.shape[1],))
    vv = val.array("v", v, shape=(x.shape[1],))
    yy = x @ (uu * vv) if y is None else val.array("y", y, shape=(x.shape[0],))
    return np.asarray(_dln_hessian(jnp.concatenate([uu, vv]), jnp.asarray(x), jnp.asarray(yy)))


# ----------------------------------------------------------------------------- locating a sign change
# ----------------------------------------------------------------------------- batch noise by sampling batches
@jax.jit
def _noise_groups(u, flat, hbar, sizes):
    """Group means of delta (x) delta, delta = H_B - H, for each batch size (batches: the B smallest u's)."""
    ordered = jnp.sort(u, axis=-1)

    def one(b):
        cut = jax.lax.dynamic_index_in_dim(ordered, b - 1, axis=-1, keepdims=False)
        mask = (u <= cut[..., None]).astype(flat.dtype)
        d = hbar.shape[0]
        delta = (mask @ flat / b).reshape(mask.shape[:2] + (d, d)) - hbar
        return jnp.einsum("gkij,gkab->giajb", delta, delta).reshape(u.shape[0], d * d, d * d) / u.shape[1]

    return jax.lax.map(one, sizes)


def sampled_batch_noise(key, hessians, batch_size, *, n_batches: int, n_groups: int = 16, max_bytes=None) -> dict:
    r"""The batch noise :math:`N_B = E[\delta\otimes\delta]`, :math:`\delta = H_{\mathcal B} - H`, by sampling batches.

    Each batch is drawn uniformly without replacement (the :math:`B` smallest of :math:`n` uniform numbers), so
    :math:`E\delta = 0` and :math:`E[H_{\mathcal B}\otimes H_{\mathcal B}] = H\otimes H + N_B` whatever the inclusion
    probabilities are; nothing here uses the closed form of :math:`N_B`. ``n_groups`` groups of ``n_batches`` batches
    each give independent group means (their spread is the estimate's standard error). The same uniform numbers serve
    every batch size (common random numbers: the batches of different sizes are nested).

    Args:
      key: a typed PRNG key.
      hessians: per-sample Hessians :math:`(n, d, d)`, symmetric PSD.
      batch_size: an integer in ``1..n`` or an (m,) array of them.
      n_batches, n_groups: batches per group, groups (at least 2).

    Returns:
      ``noise`` :math:`(m, G, d^2, d^2)` group means of :math:`\delta\otimes\delta` and ``hbar`` :math:`(d, d)`. Batch means of
      finite Hessians are finite: there is nothing to diverge.
    """
    val.key("key", key)
    h = check_hessians(hessians)
    n, d = h.shape[0], h.shape[1]
    m = int(np.size(batch_size)) if isinstance(batch_size, (list, tuple, np.ndarray)) else 1
    if m == 0:
        raise ValueError("batch_size: expected an integer or a non-empty array of integers in 1..n, got an empty array")
    sizes = _aligned_ints("batch_size", batch_size, m, 1, n)
    k = val.integer("n_batches", n_batches, low=1, high=10_000_000)
    g = val.integer("n_groups", n_groups, low=2, high=4096)
    _guard({"n_batches": k, "n_groups": g, "hessians": f"n = {n}, d = {d}"}, 8 * g * k * (3 * n + 2 * d * d),
           "the (groups, batches, n) uniforms, their sort and a batch mask", max_bytes)
    u = jax.random.uniform(key, (g, k, n), dtype=jnp.float64)
    hbar = h.mean(axis=0)
    out = _noise_groups(u, jnp.asarray(h.reshape(n, d * d)), jnp.asarray(hbar), jnp.asarray(sizes))
    return {"noise": np.asarray(out), "hbar": hbar}


# ----------------------------------------------------------------------------- a regular minimum: exact moments, paths
def _batch_pairs(hessians, gradients, batch_size, max_bytes=None) -> tuple[np.ndarray, np.ndarray]:
    """Every batch's mean Hessian (:func:`enumerate_batches`) and mean gradient, over the C(n, B) subsets in the
    order of ``itertools.combinations``."""
    h = check_hessians(hessians)
    n, d = h.shape[0], h.shape[1]
    g = val.array("gradients", gradients, shape=(n, d))
    b = val.integer("batch_size", batch_size, low=1, high=n)
    mats, counts = _enumerate(h, b, "batch_size", max_bytes)
    idx = np.array(list(itertools.combinations(range(n), b)))
    return mats[0, : counts[0]], g[idx].mean(axis=1)


def nonzero_gradient_moment_map(hessians, gradients, batch_size, eta, *, max_bytes=None) -> np.ndarray:
    r"""The exact one-step map of the first two moments of linearized SGD where the per-sample gradients do not vanish.

    With :math:`x = \theta - \theta^*`, per-sample Hessians :math:`H_i` and gradients :math:`g_i` at :math:`\theta^*`, a
    step is :math:`x^+ = A_{\mathcal B}x - \eta g_{\mathcal B}`, :math:`A_{\mathcal B} = I - \eta H_{\mathcal B}`, the batch
    uniform over all :math:`\binom nB` subsets (every one enumerated) and independent of :math:`x`. On
    :math:`z = (\mathrm{vec}\,S, m, 1)`, :math:`S = E[xx^\top]`, :math:`m = E[x]` (row-major ``vec``) it is linear:

    .. math:: S^+ = E_{\mathcal B}[A S A^\top - \eta(A m g^\top + g m^\top A^\top) + \eta^2 g g^\top],\qquad
              m^+ = E_{\mathcal B}[A]\,m - \eta E_{\mathcal B}[g].

    Returns the :math:`(d^2 + d + 1)\times(d^2 + d + 1)` matrix :math:`W` with :math:`z^+ = Wz` (last row :math:`e^\top`).
    ``gradients``: :math:`(n, d)` (at a minimum their mean vanishes; the recursion holds about any point).
    ``max_bytes``: the allocation limit (:func:`theory.validate.byte_limit`) for the batch tables and the map.
    """
    hb, gb = _batch_pairs(hessians, gradients, batch_size, max_bytes)
    eta = val.real("eta", eta, low=0.0, low_open=True)
    if not eta * eta < math.inf:  # the map holds eta^2 (a float's ** raises OverflowError instead of giving inf)
        raise ValueError(f"eta: expected a step whose square is finite in float64, got {eta:.6g}")
    d = hb.shape[1]
    k, d2 = len(hb), d * d
    _guard({"hessians": f"d = {d}"}, 2 * 8 * (d2 + d + 1) ** 2, "the (d^2 + d + 1)^2 map and its Kronecker block",
           max_bytes)
    a = np.eye(d) - eta * hb
    w = np.zeros((d2 + d + 1, d2 + d + 1))
    with np.errstate(over="ignore", invalid="ignore"):
        w[:d2, :d2] = np.einsum("kij,kab->iajb", a, a).reshape(d2, d2) / k
        am = np.einsum("kij,ka->iaj", a, gb) / k  # (A m g^T)_{ia} = sum_j A_ij m_j g_a
        w[:d2, d2:d2 + d] = -eta * (am + am.transpose(1, 0, 2)).reshape(d2, d)
        w[:d2, -1] = eta**2 * np.einsum("ki,ka->ia", gb, gb).reshape(d2) / k
    w[d2:d2 + d, d2:d2 + d] = a.mean(axis=0)
    w[d2:d2 + d, -1] = -eta * gb.mean(axis=0)
    w[-1, -1] = 1.0
    if not np.all(np.isfinite(w)):
        raise ValueError(f"eta, hessians, gradients: the one-step moment map overflows float64 (eta = {eta:.6g}, "
                         f"max |H_i| = {float(np.abs(hb).max()):.3g}); expected a step and data whose squares are finite")
    return w


def _moment_start(moment_map, x0) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """(the map, x0, the start z_0 = (vec x0 x0', x0, 1), d), validated: a square map of size d^2 + d + 1 with last row
    e', and a nonzero finite x0 of length d (the divergence test is relative to |x0|^2)."""
    w = val.array("moment_map", moment_map, ndim=2)
    d = (math.isqrt(4 * w.shape[0] - 3) - 1) // 2
    if w.shape[0] != w.shape[1] or d < 1 or d * d + d + 1 != w.shape[0]:
        raise ValueError(f"moment_map: expected a square map of size d^2 + d + 1 (on (vec S, m, 1)), got shape {w.shape}")
    if not (np.all(w[-1, :-1] == 0) and w[-1, -1] == 1):
        raise ValueError("moment_map: expected last row (0, ..., 0, 1) (the constant coordinate of (vec S, m, 1))")
    x = val.array("x0", x0, shape=(d,))
    if not float(x @ x) > 0:
        raise ValueError("x0: expected a nonzero start (traces are measured relative to |x0|^2)")
    return w, x, np.concatenate([np.outer(x, x).reshape(-1), x, [1.0]]), d


def evolve_moments(moment_map, x0, squarings: int) -> dict:
    r"""The second moment :math:`E[xx^\top]` after :math:`T = 2^k` steps of ``moment_map`` (:math:`W`, see
    :func:`nonzero_gradient_moment_map`) from the deterministic start ``x0``, for :math:`k = 0..` ``squarings``.

    :math:`W^{2^k}` by repeated squaring of :math:`W`, applied to :math:`z_0 = (\mathrm{vec}\,x_0x_0^\top, x_0, 1)`.
    Returns ``sigma`` (the symmetrized :math:`E[x_Tx_T^\top]` at :math:`T = 2^{\text{squarings}}`), ``diverged`` (when
    :math:`\mathrm{tr}\,E[xx^\top]` left :math:`10^{150}\|x_0\|^2` or turned non-finite at some :math:`k`) and
    ``diverged_step`` (the first such :math:`2^k`, :math:`-1` if never).
    """
    w, x, z0, d = _moment_start(moment_map, x0)
    squarings = val.integer("squarings", squarings, low=0, high=62)
    power = w.copy()
    tr0, first, sigma = float(x @ x), -1, None
    with np.errstate(over="ignore", invalid="ignore"):
        for k in range(squarings + 1):
            sigma = (power @ z0)[: d * d].reshape(d, d)
            tr = float(np.trace(sigma))
            if first < 0 and not (np.isfinite(tr) and math.log(max(tr / tr0, 1e-300)) < LOG_BOUND):
                first = 2**k
            power = power @ power
    return {"sigma": 0.5 * (sigma + sigma.T), "diverged": first >= 0, "diverged_step": first}


def second_moment_after(moment_map, x0, steps: int) -> np.ndarray:
    r""":math:`E[x_Tx_T^\top]` after :math:`T` = ``steps`` steps of ``moment_map`` from ``x0``: the first :math:`d^2` rows of
    :math:`W^T` (``numpy.linalg.matrix_power``) times :math:`z_0 = (\mathrm{vec}\,x_0x_0^\top, x_0, 1)`, shape :math:`(d, d)`
    (non-finite once the moments overflow float64)."""
    w, _, z0, d = _moment_start(moment_map, x0)
    steps = val.integer("steps", steps, low=0, high=val.INT64_MAX)
    return _second_moment(w, z0, d, steps)


def _second_moment(w, z0, d: int, steps: int) -> np.ndarray:
    """:math:`E[x_Tx_T^\top]` from the first :math:`d^2` rows of :math:`W^T z_0` (validated arguments)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return (np.linalg.matrix_power(w, steps)[: d * d, :] @ z0).reshape(d, d)


def moment_log_growth(moment_map, x0, steps: int) -> float:
    r"""The growth of :math:`\log\mathrm{tr}\,E[xx^\top]` per step over ``steps`` steps of ``moment_map`` from ``x0``:
    :math:`\log(\mathrm{tr}\,S_T/\|x_0\|^2)/T`, :math:`S_T` from :math:`W^Tz_0`; ``inf`` once the trace overflows float64,
    ``-inf`` once it underflows to 0."""
    w, x, z0, d = _moment_start(moment_map, x0)
    steps = val.integer("steps", steps, low=1, high=val.INT64_MAX)
    with np.errstate(over="ignore", invalid="ignore"):
        ratio = float(np.trace(_second_moment(w, z0, d, steps))) / float(x @ x)
    return math.log(ratio) / steps if ratio > 0 else (-math.inf if ratio == 0 else math.nan)


def sgd_paths_second_moment(key, hessians, gradients, batch_size, eta, x0, *, n_steps: int, n_paths: int,
                            bound: float = 1e100, max_bytes=None) -> dict:
    r"""Monte Carlo :math:`E[x_Tx_T^\top]` of linearized SGD where the per-sample gradients do not vanish.

    Paths :math:`x_{t+1} = x_t - \eta(H_{\mathcal B_t}x_t + g_{\mathcal B_t})` from ``x0``, the batch of each step and path
    a uniform index into the :math:`\binom nB` enumerated subsets (``jax.random.randint(key, (T, P), 0, C(n, B))``:
    uniform without replacement). Returns ``mean`` :math:`\frac1P\sum_p x_Tx_T^\top` and ``se`` (its standard error,
    :math:`\mathrm{sd}/\sqrt P`), :math:`(d, d)`, over the paths that stayed within ``bound`` (a path is frozen at its
    last state once a coordinate leaves it or turns non-finite); ``diverged`` :math:`(P,)` and ``diverged_step`` (the
    first step out of bound, :math:`-1` if never). ``key``: a typed PRNG key. ``max_bytes``: the allocation limit
    (:func:`theory.validate.byte_limit`) for the batch indices and the per-path states.
    """
    val.key("key", key)
    hb, gb = _batch_pairs(hessians, gradients, batch_size, max_bytes)
    eta = val.real("eta", eta, low=0.0, low_open=True)
    d = hb.shape[1]
    start = val.array("x0", x0, shape=(d,))
    n_steps = val.integer("n_steps", n_steps, low=1, high=10_000_000)
    n_paths = val.integer("n_paths", n_paths, low=2)
    bound = val.real("bound", bound, low=0.0, low_open=True)
    _guard({"n_paths": n_paths, "n_steps": n_steps}, 8 * n_paths * (n_steps + 4 * d * d + 4 * d),
           "the (n_steps, n_paths) batch indices and the per-path states", max_bytes)
    picks = np.asarray(jax.random.randint(key, (n_steps, n_paths), 0, len(hb)))
    x = np.broadcast_to(start, (n_paths, d)).copy()
    first = np.full(n_paths, -1)
    with np.errstate(over="ignore", invalid="ignore"):
        for t in range(n_steps):
            j = picks[t]
            new = x - eta * (np.einsum("pij,pj->pi", hb[j], x) + gb[j])
            first[(first < 0) & ~np.all(np.abs(new) <= bound, axis=1)] = t + 1
            x = np.where((first >= 0)[:, None], x, new)
    dead = first >= 0
    outer = np.einsum("pi,pj->pij", x, x)
    kept = outer[~dead] if dead.any() else outer
    if len(kept) < 2:  # no spread to take: every path (or all but one) diverged
        return {"mean": np.full((d, d), np.nan), "se": np.full((d, d), np.nan), "diverged": dead, "diverged_step": first}
    return {"mean": kept.mean(axis=0), "se": kept.std(axis=0, ddof=1) / math.sqrt(len(kept)), "diverged": dead,
            "diverged_step": first}
