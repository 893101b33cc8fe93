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
Wishart(:math:`n-1`, :math:`I_{d+1}`) matrix (for :math:`\Xi^\top(I - ee^\top)\Xi`) and
:math:`\|V\|^2 = \sigma_V^2\chi^2_n`: the same law as the dense draw at a cost independent of :math:`n`.

Each Wishart matrix is drawn by Bartlett's decomposition :math:`LL^\top` (:math:`L` lower triangular,
:math:`\chi_{k-i}` on the diagonal, only the :math:`(d+1)d/2` normals of the strict lower triangle drawn), and the
statistics are never formed as matrices. With :math:`L_1` the first factor (:math:`[W_0/\sqrt{s_0}, z]` has the Gram
matrix :math:`L_1L_1^\top`), :math:`A` its leading :math:`d\times d` block, :math:`\ell` its last row,
:math:`\zeta = W_0^\top z` and :math:`C = L_2L_2^\top` the second Wishart matrix,

.. math:: \|z\|^2 = \|\ell\|^2,\quad \zeta = \sqrt{s_0}A\ell_{:d},\quad Kv = s_0AA^\top v,\quad
   H_{:d,:d}v = \zeta(\zeta^\top v) + s_0A\,(C[A^\top v; 0])_{:d},\quad
   H_{:d,d} = \zeta\|z\|^2 + \sqrt{s_0}A(C\ell)_{:d},

so a seed costs a few batched matrix-vector products of size :math:`d+1`, not the :math:`(d+1)^3` products of the
Gram matrices. With :math:`r = (f_0 - y)/m`, :math:`u = W_1^\top V` and :math:`w = W_1u`, the expansion above reads

.. math:: c_1 = -X^\top\big(a_0\|u\|^2Xr + a_1\|V\|^2KXr + a_Vs_1H_{:d,:d}Xr\big),\quad
   c_3 = -a_0a_1a_V(r^\top f_0)^2X^\top Xr,

.. math:: c_2 = X^\top\big((a_0a_1\|V\|^2r^\top f_0 + a_Va_0r^\top T_0^\top w)Xr + a_Va_1(r^\top f_0)KXr\big),

each power a per-seed combination of three :math:`d`-vectors, multiplied by :math:`X^\top` once.
:func:`coefficients_from_statistics` computes the same coefficients from the five statistics themselves (the route the
dense draw's statistics take); the two routes agree to round-off on the same factors (``tests/test_mup_transfer.py``).

The reduced draw runs on the host in NumPy, every seed at once, from one ``np.random.Generator`` seeded by the
caller's key: nothing is compiled, and the width enters only as the chi-square draws' degrees of freedom, so every
width takes the same time. The dense draw (``method="dense"``) is the reference it is tested against
(``tests/test_mup_transfer.py``): its seeds go through :func:`sims.sweep.run_grid` (one typed key per seed, split from
the caller's key) with the width static (one compiled program per width), vmapped in chunks small enough that a
chunk's :math:`n\times n` matrices fit the allocation limit. Float64 throughout.
"""
from __future__ import annotations

import functools

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


@functools.cache
def _packed_positions(p: int) -> np.ndarray:
    """Where each entry of a row-major (p, p) lower-triangular factor sits in its packed row: the (p-1)p/2 normals of
    the strict lower triangle (row by row), then the p diagonal entries, then one 0 (every entry above the diagonal)."""
    q = p * (p - 1) // 2
    where = np.full((p, p), q + p)
    where[np.tril_indices(p, -1)] = np.arange(q)
    where[np.arange(p), np.arange(p)] = q + np.arange(p)
    return where.ravel()


def _bartlett(rng: np.random.Generator, s: int, p: int, dof: float) -> np.ndarray:
    """``s`` lower-triangular (p, p) factors L with L L^T ~ Wishart(dof, I_p): chi(dof - i) on the diagonal, N(0, 1)
    below it (only those (p-1)p/2 normals are drawn), 0 above; packed rows spread out by one gather."""
    q = p * (p - 1) // 2
    packed = np.empty((s, q + p + 1))
    packed[:, :q] = rng.standard_normal((s, q))
    packed[:, q:q + p] = np.sqrt(rng.chisquare(dof - np.arange(p), size=(s, p)))
    packed[:, q + p] = 0.0
    return np.take(packed, _packed_positions(p), axis=1).reshape(s, p, p)


def _mv(a: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Batched matrix-vector products (S, p, q) x (S, q) -> (S, p)."""
    return (a @ v[:, :, None])[:, :, 0]


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


def _factor_coefficients(X, y, a, s0, s1, L1, L2, vv):
    r"""The four output coefficients (S, m, 4) from the reduced draw's two Bartlett factors (S, d+1, d+1) and
    :math:`\|V\|^2` (S,), by matrix-vector products on the factors (module docstring); the same numbers as
    :func:`_coefficients` on the Gram statistics those factors make, to round-off."""
    a0, a1, av = a
    d, m = X.shape
    A, ell = L1[:, :d, :d], L1[:, d, :]
    zz = np.einsum("si,si->s", ell, ell)                          # |z|^2
    zeta = np.sqrt(s0) * _mv(A, ell[:, :d])                       # W0^T z
    sig, vn = np.sqrt(s1), np.sqrt(vv)
    w0u = (sig * vn)[:, None] * zeta                              # W0^T u with u = W1^T V = sig |V| z
    f0 = w0u @ X                                                  # V^T W1 W0 X
    r = (f0 - y) / m                                              # dL/df
    xr = r @ X.T                                                  # X r
    q = _mv(np.swapaxes(A, 1, 2), xr)                             # A^T X r
    s = q.shape[0]
    pair = np.zeros((s, d + 1, 2))                                # [A^T X r; 0] and ell
    pair[:, :d, 0] = q
    pair[:, :, 1] = ell
    cpair = L2 @ (np.swapaxes(L2, 1, 2) @ pair)                   # C [A^T X r; 0], C ell with C = L2 L2^T
    zx = np.einsum("si,si->s", zeta, xr)
    kxr = s0 * _mv(A, q)                                          # W0^T W0 X r
    hxr = zeta * zx[:, None] + s0 * _mv(A, cpair[:, :d, 0])       # H_dd X r
    t0w = sig**3 * vn * (zx * zz + np.sqrt(s0) * np.einsum("si,si->s", q, cpair[:, :d, 1]))  # r^T T0^T W1 u
    uu = s1 * vv * zz                                             # |u|^2, u = W1^T V
    rf = np.einsum("si,si->s", r, f0)                             # r^T f0
    # c_k = X^T (alpha_k X r + beta_k W0^T W0 X r + gamma_k s1 H_dd X r): the per-seed factors applied in d
    # dimensions, then one product with X for the four powers (c_0 = f0 = X^T W0^T u)
    g = np.empty((s, d, 4))
    g[:, :, 0] = w0u
    g[:, :, 1] = -(a0 * uu)[:, None] * xr - (a1 * vv)[:, None] * kxr - (av * s1) * hxr
    g[:, :, 2] = (a0 * a1 * vv * rf + av * a0 * t0w)[:, None] * xr + (av * a1 * rf)[:, None] * kxr
    g[:, :, 3] = -(a0 * a1 * av * rf**2)[:, None] * xr
    return np.matmul(X.T, g)


def _reduced(key, X, y, scales, n: int, seeds: int) -> np.ndarray:
    """``seeds`` initializations drawn through two Bartlett factors (module docstring)."""
    s0, s1, sv, a0, a1, av = scales
    d = X.shape[0]
    rng = _generator(key)
    L1 = _bartlett(rng, seeds, d + 1, float(n))                   # [W0/sqrt(s0), z]: Gram = L1 L1^T ~ Wishart(n)
    L2 = _bartlett(rng, seeds, d + 1, float(n - 1))               # Xi^T (I - e e^T) Xi = L2 L2^T ~ Wishart(n - 1)
    vv = sv * rng.chisquare(float(n), size=seeds)                 # |V|^2 = sv chi2_n
    return _factor_coefficients(X, y, (a0, a1, av), s0, s1, L1, L2, vv)


def one_step(key, X, y, n, *, parametrization: str = "mup", n_seeds: int = 16, method: str = "reduced",
             max_bytes=None) -> dict[str, np.ndarray]:
    r"""The one-step output's coefficients in :math:`\eta` for ``n_seeds`` random initializations at width ``n``.

    Args:
      key: a typed PRNG key (``jax.random.key``); ``"dense"`` splits it into one key per seed, ``"reduced"`` seeds one
        NumPy generator with its data.
      X: the inputs, a (d, m) array (one column per example).
      y: the targets, an (m,) array.
      n: the width (hidden size of both hidden layers): ``1..MAX_WIDTH`` for ``"dense"``, ``d + 2..MAX_REDUCED_WIDTH``
        for ``"reduced"`` (its Wishart(n - 1) draw of size d + 1 needs n - 1 >= d + 1 degrees of freedom).
      parametrization: ``"mup"``, ``"sp"`` or ``"ntp"`` (:data:`theory.mup_transfer.TABLES`).
      n_seeds: the number of initializations, at least 1.
      method: ``"dense"`` draws the n x n matrix and differentiates with :func:`jax.grad`; ``"reduced"`` draws the
        same law through two Bartlett factors of size d + 1 (module docstring), at a cost independent of ``n``.
      max_bytes: the allocation limit (:func:`theory.validate.byte_limit`) for one dense run's n x n matrices, or for
        the reduced draw's per-seed factors and coefficients.

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
        # two (d+1) x (d+1) factors and a packed one being spread, the (m, 4) coefficients and two (m,) rows
        V.check_bytes({"n_seeds": seeds}, 8 * seeds * (3 * (d + 1) ** 2 + 8 * xs.shape[1]),
                      what="the seeds' Bartlett factors and (m, 4) coefficients", max_bytes=max_bytes)
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
