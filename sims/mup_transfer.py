r"""One GD step of the linear network :math:`f(x) = V^\top W_1 W_0 x` at random initialization, as exact polynomials in
the learning rate, over seeds, at one width and parametrization (:mod:`theory.mup_transfer` has the tables).

One run draws :math:`W_0, W_1, V` with the parametrization's variances, takes the three gradients of
:math:`\mathcal{L} = \frac1{2m}\sum_i (f(x_i) - y_i)^2` with :func:`jax.grad` (not from a hand formula), and expands the
one-step output :math:`f_1(x_i) = (V - \eta a_V g_V)^\top(W_1 - \eta a_1 G_1)(W_0 - \eta a_0 G_0)x_i` into its four
coefficients :math:`c_{i0}, \dots, c_{i3}` (ascending powers of :math:`\eta`): with :math:`P = W_0X`,
:math:`P_1 = a_0G_0X`, :math:`T_0 = W_1P`, :math:`T_1 = W_1P_1 + a_1G_1P`, :math:`T_2 = a_1G_1P_1` and
:math:`g = a_Vg_V`, the hidden features after the step are :math:`T_0 - \eta T_1 + \eta^2T_2` and
:math:`c_0 = V^\top T_0`, :math:`c_1 = -V^\top T_1 - g^\top T_0`, :math:`c_2 = V^\top T_2 + g^\top T_1`,
:math:`c_3 = -g^\top T_2`. The loss after the step at any :math:`\eta` is then a degree-6 polynomial, minimized exactly
by :func:`theory.mup_transfer.local_minimizers`: no learning-rate grid, no divergence (one step of a polynomial map is
finite at every finite rate, so there is no ``diverged`` flag).

**The reduced draw** (``method="reduced"``, the default) needs no :math:`n\times n` matrix. With :math:`W_1 = \sigma_1 Z`,
:math:`e = V/\|V\|` and :math:`z = Z^\top e`, write :math:`Z = e z^\top + Z_\perp`: :math:`Z_\perp = (I - ee^\top)Z` is
independent of :math:`z`. Every coefficient is a function of :math:`K = W_0^\top W_0`, :math:`W_0^\top z`,
:math:`\|z\|^2`, :math:`\|V\|^2` and :math:`H = (ZB)^\top(ZB)` with :math:`B = [W_0, z]`, and
:math:`H = B^\top z z^\top B + R^\top \Xi^\top(I - ee^\top)\Xi R` where :math:`B^\top B = R^\top R` and :math:`\Xi` is an
i.i.d. Gaussian :math:`n\times(d+1)` matrix (given :math:`B`, :math:`Z_\perp B` has the law of :math:`(I-ee^\top)\Xi R`).
So one draw takes a Wishart(:math:`n`, :math:`I_{d+1}`) matrix (for :math:`B^\top B`, rescaled), an independent
Wishart(:math:`n-1`, :math:`I_{d+1}`) matrix (for :math:`\Xi^\top(I - ee^\top)\Xi`) by Bartlett's decomposition, and
:math:`\|V\|^2 = \sigma_V^2\chi^2_n`: the same law as the dense draw at a cost independent of :math:`n`, with the
width a traced number (one compiled program for every width). The dense draw (``method="dense"``) is the
reference it is tested against (``tests/test_mup_transfer.py``).

Seeds go through :func:`sims.sweep.run_grid` (one typed key per seed, split from the caller's key); dense runs are
vmapped in chunks small enough that a chunk's :math:`n\times n` matrices fit the allocation limit. Float64 throughout.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

import sims  # noqa: F401  (float64)
from sims.sweep import run_grid
from theory import validate as V
from theory.mup_transfer import TABLES, table_expr, N, D

__all__ = ["one_step", "coefficients_from_statistics", "MAX_WIDTH", "MAX_REDUCED_WIDTH"]

#: the widest network :func:`one_step` accepts (a run holds a few n x n float64 matrices)
MAX_WIDTH = 16384
#: the widest network the reduced draw accepts (its cost does not grow with n; the bound keeps chi-square draws exact
#: in float64)
MAX_REDUCED_WIDTH = 2**36
_CHUNK_BYTES = 2**28  # a chunk of vmapped runs holds at most ~256 MiB of n x n matrices


def _scales(parametrization: str, n: int, d: int) -> np.ndarray:
    t = table_expr(parametrization)
    return np.array([float(t[k].subs({N: n, D: d})) for k in ("s0", "s1", "sV", "a0", "a1", "aV")])


def _loss(params, X, y):
    w0, w1, v = params
    return 0.5 * jnp.mean((v @ (w1 @ (w0 @ X)) - y) ** 2)


def _run(key, X, y, scales, *, n):
    """One seed: initialize, differentiate, expand the one-step output into powers of eta."""
    s0, s1, sv, a0, a1, av = (scales[i] for i in range(6))
    d = X.shape[0]
    k0, k1, k2 = jax.random.split(key, 3)
    w0 = jnp.sqrt(s0) * jax.random.normal(k0, (n, d))
    w1 = jnp.sqrt(s1) * jax.random.normal(k1, (n, n))
    v = jnp.sqrt(sv) * jax.random.normal(k2, (n,))
    g0, g1, gv = jax.grad(_loss)((w0, w1, v), X, y)
    p = w0 @ X
    p1 = a0 * (g0 @ X)
    t0 = w1 @ p
    t1 = w1 @ p1 + a1 * (g1 @ p)
    t2 = a1 * (g1 @ p1)
    g = av * gv
    coef = jnp.stack([v @ t0, -(v @ t1) - g @ t0, v @ t2 + g @ t1, -(g @ t2)], axis=-1)
    # the Gram statistics the reduced draw samples, read off this dense draw
    z = (w1.T @ v) / (jnp.sqrt(s1) * jnp.linalg.norm(v))
    zb = (w1 / jnp.sqrt(s1)) @ jnp.concatenate([w0, z[:, None]], axis=1)
    stats = {"vv": v @ v, "K": w0.T @ w0, "zeta": w0.T @ z, "zz": z @ z, "H": zb.T @ zb}
    return {"coef": coef, "f0": v @ t0, "stats": stats}


def _generator(key) -> np.random.Generator:
    """A NumPy generator seeded by the typed key's data (one stream per key; the caller splits keys, never reuses)."""
    return np.random.default_rng(np.asarray(jax.random.key_data(key), dtype=np.uint32).ravel())


def _bartlett(rng: np.random.Generator, s: int, p: int, dof: float) -> np.ndarray:
    """``s`` lower-triangular factors L with L L^T ~ Wishart(dof, I_p): chi(dof - i) diagonal, N(0, 1) below."""
    ell = np.tril(rng.standard_normal((s, p, p)), -1)
    idx = np.arange(p)
    ell[:, idx, idx] = np.sqrt(rng.chisquare(dof - idx, size=(s, p)))
    return ell


def coefficients_from_statistics(X, y, parametrization: str, n, stats, *, freeze_hidden: bool = False) -> np.ndarray:
    r"""The one-step output's coefficients (S, m, 4) from the Gram statistics of S initializations at width ``n``
    (the algebra of the reduced draw; :func:`one_step` with ``method="dense"`` returns the statistics of its draws).

    Args:
      X: the inputs, a (d, m) array.
      y: the targets, an (m,) array.
      parametrization: ``"mup"``, ``"sp"`` or ``"ntp"``.
      n: the width the statistics come from, at least 1.
      stats: a dict of ``vv`` (S,), ``K`` (S, d, d), ``zeta`` (S, d), ``zz`` (S,), ``H`` (S, d+1, d+1): the module
        docstring's :math:`\|V\|^2`, :math:`W_0^\top W_0`, :math:`W_0^\top z`, :math:`\|z\|^2`, :math:`(ZB)^\top(ZB)`.
      freeze_hidden: the hidden layer :math:`W_1` not updated (its rate :math:`a_1 = 0`); the other two layers as the
        table says.
    """
    if not isinstance(freeze_hidden, bool):
        raise TypeError(f"freeze_hidden: expected a bool, got {type(freeze_hidden).__name__} {freeze_hidden!r}")
    xs = V.array("X", X, ndim=2)
    d, m = xs.shape
    ys = V.array("y", y, shape=(m,))
    name = V.choice("parametrization", parametrization, TABLES)
    width = V.integer("n", n, low=1, high=MAX_REDUCED_WIDTH)
    if not isinstance(stats, dict):
        raise TypeError(f"stats: expected a dict of Gram statistics, got {type(stats).__name__}")
    missing = {"vv", "K", "zeta", "zz", "H"} - set(stats)
    if missing:
        raise ValueError(f"stats: missing {sorted(missing)}")
    vv = V.array("stats['vv']", stats["vv"], ndim=1, low=0.0, low_open=True)
    s = vv.size
    K = V.array("stats['K']", stats["K"], shape=(s, d, d))
    zeta = V.array("stats['zeta']", stats["zeta"], shape=(s, d))
    zz = V.array("stats['zz']", stats["zz"], shape=(s,), low=0.0)
    H = V.array("stats['H']", stats["H"], shape=(s, d + 1, d + 1))
    s0, s1, sv, a0, a1, av = _scales(name, width, d)
    return _coefficients(xs, ys, (a0, 0.0 if freeze_hidden else a1, av), s1, vv, K, zeta, zz, H)


def _coefficients(X, y, a, s1, vv, K, zeta, zz, H):
    r"""The four output coefficients (S, m, 4) from the width-n statistics of S initializations.

    ``K`` (S, d, d) = :math:`W_0^\top W_0`, ``zeta`` (S, d) = :math:`W_0^\top z`, ``zz`` (S,) = :math:`\|z\|^2`,
    ``vv`` (S,) = :math:`\|V\|^2` and ``H`` (S, d+1, d+1) = :math:`(ZB)^\top(ZB)` with :math:`W_1 = \sqrt{s_1}Z`,
    :math:`z = Z^\top V/\|V\|`, :math:`B = [W_0, z]`; ``a`` = :math:`(a_0, a_1, a_V)`.
    """
    a0, a1, av = a
    m, d = X.shape[1], X.shape[0]
    sig, vn = np.sqrt(s1), np.sqrt(vv)[:, None]
    f0 = sig * vn * (zeta @ X)                                    # u^T P with u = W1^T V = sig |V| z
    r = (f0 - y) / m                                              # dL/df
    xr = r @ X.T                                                  # (S, d): X r
    s = xr @ X                                                    # X^T X r
    ptp_r = np.einsum("sij,sj->si", K, xr) @ X                    # P^T P r
    t0t0_r = s1 * (np.einsum("sij,sj->si", H[:, :d, :d], xr) @ X)  # T0^T T0 r
    t0w_r = sig**3 * vn[:, 0] * np.einsum("sj,sj->s", xr, H[:, :d, d])  # r^T T0^T w with w = W1 u
    uu = (s1 * vv * zz)[:, None]                                  # |u|^2 = V^T W1 u
    rf = np.sum(r * f0, axis=1)[:, None]                          # (P r)^T u = r^T f0
    vv = vv[:, None]
    c1 = -(a0 * uu * s + a1 * vv * ptp_r) - av * t0t0_r
    c2 = a0 * a1 * vv * rf * s + av * (a0 * t0w_r[:, None] * s + a1 * rf * ptp_r)
    c3 = -a0 * a1 * av * rf**2 * s
    return np.stack([f0, c1, c2, c3], axis=-1)


def _reduced(key, X, y, scales, n: int, seeds: int) -> np.ndarray:
    """``seeds`` initializations drawn through their Gram statistics (module docstring)."""
    s0, s1, sv, a0, a1, av = scales
    d = X.shape[0]
    rng = _generator(key)
    ell = _bartlett(rng, seeds, d + 1, float(n))                 # [W0/sqrt(s0), z]: Gram = L L^T
    R = np.swapaxes(ell, 1, 2) * np.concatenate([np.full(d, np.sqrt(s0)), [1.0]])[None, None, :]
    btb = np.swapaxes(R, 1, 2) @ R                                # B^T B with B = [W0, z]
    lp = _bartlett(rng, seeds, d + 1, float(n - 1))               # Xi^T (I - e e^T) Xi = Lp Lp^T
    core = lp @ np.swapaxes(lp, 1, 2)
    bz = btb[:, :, d]                                             # B^T z
    H = bz[:, :, None] * bz[:, None, :] + np.swapaxes(R, 1, 2) @ core @ R
    vv = sv * rng.chisquare(float(n), size=seeds)                 # |V|^2 = sv chi2_n
    return _coefficients(X, y, (a0, a1, av), s1, vv, btb[:, :d, :d], btb[:, :d, d], btb[:, d, d], H)


def one_step(key, X, y, n, *, parametrization: str = "mup", n_seeds: int = 16, method: str = "reduced",
             max_bytes=None) -> dict[str, np.ndarray]:
    r"""The one-step output's coefficients in :math:`\eta` for ``n_seeds`` random initializations at width ``n``.

    Args:
      key: a typed PRNG key (``jax.random.key``); split into one key per seed.
      X: the inputs, a (d, m) array (one column per example).
      y: the targets, an (m,) array.
      n: the width (hidden size of both hidden layers): ``1..MAX_WIDTH`` for ``"dense"``, ``d + 2..MAX_REDUCED_WIDTH``
        for ``"reduced"`` (its Wishart(n - 1) draw of size d + 1 needs n - 1 >= d + 1 degrees of freedom).
      parametrization: ``"mup"``, ``"sp"`` or ``"ntp"`` (:data:`theory.mup_transfer.TABLES`).
      n_seeds: the number of initializations, at least 1.
      method: ``"dense"`` draws the n x n matrix and differentiates with :func:`jax.grad`; ``"reduced"`` draws the
        same law through Gram statistics of size d + 1 (module docstring), at a cost independent of ``n``.
      max_bytes: the allocation limit (:func:`theory.validate.byte_limit`) for one dense run's n x n matrices.

    Returns:
      ``coef`` (S, m, 4): :math:`c_{ik}` with :math:`f_1(x_i) = \sum_k c_{ik}\eta^k`; ``f0`` (S, m): the outputs at
      initialization (equal to ``coef[..., 0]``, kept for readability); dense only, ``stats``: the Gram statistics of
      each draw (:func:`coefficients_from_statistics`), from which the reduced algebra recomputes ``coef``.
    """
    key = V.key("key", key)
    xs = V.array("X", X, ndim=2)
    ys = V.array("y", y, shape=(xs.shape[1],))
    how = V.choice("method", method, ("reduced", "dense"))
    d = xs.shape[0]
    if how == "reduced":
        width = V.integer("n", n, low=d + 2, high=MAX_REDUCED_WIDTH)
    else:
        width = V.integer("n", n, low=1, high=MAX_WIDTH)
    name = V.choice("parametrization", parametrization, TABLES)
    seeds = V.integer("n_seeds", n_seeds, low=1)
    scales = _scales(name, width, d)
    if how == "reduced":
        V.check_bytes({"n_seeds": seeds}, 8 * seeds * (6 * (d + 1) ** 2 + 8 * xs.shape[1]),
                      what="the seeds' (d+1) x (d+1) Gram matrices and (m, 4) coefficients", max_bytes=max_bytes)
        coef = _reduced(key, xs, ys, scales, width, seeds)
        return {"coef": coef, "f0": coef[..., 0].copy()}
    keys = jax.random.split(key, seeds)
    scales = jnp.asarray(scales)
    per_run = 4 * 8 * width * width  # W1, its gradient and two products' worth of n x n float64
    V.check_bytes({"n": width}, per_run, what="one run's n x n float64 matrices", max_bytes=max_bytes)
    chunk = max(1, min(seeds, _CHUNK_BYTES // per_run))
    out = run_grid(_run, keys, jnp.asarray(xs), jnp.asarray(ys), scales, static={"n": width}, chunk_size=chunk,
                   desc=f"mup_transfer one_step n={width}", max_bytes=max_bytes)
    return {"coef": np.asarray(out["coef"]), "f0": np.asarray(out["f0"]),
            "stats": {k: np.asarray(v) for k, v in out["stats"].items()}}
