r"""NumPy reference of :mod:`sims.mup_transfer` and its benchmark case.

* :func:`one_step_numpy` -- the one-step output's coefficients in :math:`\eta` for many random initializations of
  :math:`f(x) = V^\top W_1W_0x` at width :math:`n` (:func:`sims.mup_transfer.one_step`, default ``method="reduced"``),
  through the same *reduced draw*: the module docstring of :mod:`sims.mup_transfer` shows that every coefficient is a
  function of two independent Wishart matrices of size :math:`d+1` (:math:`n` and :math:`n-1` degrees of freedom)
  and :math:`\|V\|^2 = \sigma_V^2\chi^2_n`, the law of the dense draw at a cost independent of :math:`n`.
  The dense draw (an :math:`n\times n` matrix per seed) computes the same law, but at :math:`O(n^2)` per seed it is
  no competitor at the topic's widths (up to :math:`2^{22}`), so the reference draws the reduced statistics too;
* :func:`bench_cases` -- the simulator against :func:`one_step_numpy` for ``make bench``.

Written as a NumPy user who has the derivation would write it, every seed at once: each Wishart matrix is drawn by
Bartlett's decomposition :math:`LL^\top` (:math:`\chi_{k-i}` on the diagonal, only the
:math:`(d+1)d/2` normals of the strict lower triangle drawn), and the statistics are never formed as matrices: with
:math:`L_1` the first factor, :math:`A` its leading :math:`d\times d` block, :math:`\ell` its last row and
:math:`C = L_2L_2^\top` the second Wishart matrix,

.. math:: \|z\|^2 = \|\ell\|^2,\quad W_0^\top z = \sqrt{s_0}A\ell_{:d},\quad W_0^\top W_0 v = s_0 A A^\top v,\quad
   H_{dd}v = \zeta(\zeta^\top v) + s_0 A\,(C[A^\top v; 0])_{:d},\quad H_{:d,d} = \zeta\|z\|^2 + \sqrt{s_0}A(C\ell)_{:d},

so a seed costs a few batched matrix-vector products of size :math:`d+1` (``@`` on stacks) and the products with
:math:`X` (one ``@`` for three vectors at once), not the :math:`(d+1)^3` products of the Gram matrices. The
coefficients then follow from the one-step expansion (the simulator's docstring): with :math:`r = (f_0 - y)/m`,

.. math:: c_1 = -a_0\|u\|^2X^\top Xr - a_1\|V\|^2P^\top Pr - a_VT_0^\top T_0r,\quad
   c_2 = a_0a_1\|V\|^2(r^\top f_0)X^\top Xr + a_V\big(a_0(r^\top T_0^\top w)X^\top Xr + a_1(r^\top f_0)P^\top Pr\big),
   \quad c_3 = -a_0a_1a_V(r^\top f_0)^2X^\top Xr.

Its generator is NumPy's own (``np.random.Generator``), so the two sides agree in law, not draw by draw.
"""
from __future__ import annotations

import math

import numpy as np

from sims.bench import BenchCase
from theory import validate as V
from theory.mup_transfer import D, N, TABLES, table_expr

__all__ = ["one_step_numpy", "bench_cases"]

#: the widest network accepted (as the simulator's reduced draw: chi-square draws stay exact in float64)
MAX_WIDTH = 2**36


def _bartlett(rng: np.random.Generator, s: int, p: int, dof: int) -> np.ndarray:
    """``s`` lower-triangular (p, p) factors L with L L^T ~ Wishart(dof, I_p): chi(dof - i) on the diagonal, N(0, 1)
    below it (only those normals are drawn), 0 above."""
    rows, cols = np.tril_indices(p, -1)
    ell = np.zeros((s, p, p))
    ell[:, rows, cols] = rng.standard_normal((s, rows.size))
    idx = np.arange(p)
    ell[:, idx, idx] = np.sqrt(rng.chisquare(dof - idx, size=(s, p)))
    return ell


def _mv(a: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Batched matrix-vector products (S, p, q) x (S, q) -> (S, p)."""
    return (a @ v[:, :, None])[:, :, 0]


def _coefficients(X: np.ndarray, y: np.ndarray, scales: dict[str, float], L1: np.ndarray, L2: np.ndarray,
                  vv: np.ndarray) -> np.ndarray:
    """The coefficients (S, m, 4) from the two Bartlett factors (S, d+1, d+1) and |V|^2 (S,) (module docstring)."""
    s0, s1 = scales["s0"], scales["s1"]
    a0, a1, av = scales["a0"], scales["a1"], scales["aV"]
    d, m = X.shape
    A, ell = L1[:, :d, :d], L1[:, d, :]
    zz = np.sum(ell * ell, axis=1)                                   # |z|^2
    zeta = math.sqrt(s0) * _mv(A, ell[:, :d])                        # W0^T z
    sig, vn = math.sqrt(s1), np.sqrt(vv)
    f0 = (sig * vn)[:, None] * (zeta @ X)                            # V^T W1 W0 X = sig |V| z^T W0 X
    r = (f0 - y) / m
    xr = r @ X.T                                                     # X r
    q = _mv(np.swapaxes(A, 1, 2), xr)                                # A^T X r
    pair = np.zeros((q.shape[0], d + 1, 2))                          # [A^T X r; 0] and ell
    pair[:, :d, 0] = q
    pair[:, :, 1] = ell
    cpair = L2 @ (np.swapaxes(L2, 1, 2) @ pair)                      # C [A^T X r; 0], C ell
    zx = np.sum(zeta * xr, axis=1)
    hxr = zeta * zx[:, None] + s0 * _mv(A, cpair[:, :d, 0])          # H_dd X r
    rows = np.stack([xr, s0 * _mv(A, q), hxr], axis=1) @ X           # (S, 3, m): one product for three rows
    s_, ptp_r, t0t0_r = rows[:, 0], rows[:, 1], s1 * rows[:, 2]      # X^T X r, P^T P r, T0^T T0 r
    t0w = sig**3 * vn * (zx * zz + math.sqrt(s0) * np.sum(q * cpair[:, :d, 1], axis=1))  # r^T T0^T W1 u
    uu = (s1 * vv * zz)[:, None]                                     # |u|^2, u = W1^T V
    rf = np.sum(r * f0, axis=1)[:, None]                             # r^T f0
    vv = vv[:, None]
    c1 = -(a0 * uu * s_ + a1 * vv * ptp_r) - av * t0t0_r
    c2 = a0 * a1 * vv * rf * s_ + av * (a0 * t0w[:, None] * s_ + a1 * rf * ptp_r)
    c3 = -a0 * a1 * av * rf**2 * s_
    return np.stack([f0, c1, c2, c3], axis=-1)


def one_step_numpy(rng, X, y, n, *, parametrization: str = "mup", n_seeds: int = 16, max_bytes=None
                   ) -> dict[str, np.ndarray]:
    r"""The one-step output's coefficients for ``n_seeds`` initializations at width ``n``, by the reduced draw.

    Args:
      rng: a NumPy generator (``np.random.default_rng(seed)``).
      X: the inputs, a (d, m) array (one column per example).
      y: the targets, an (m,) array.
      n: the width, ``d + 2 .. 2**36`` (the second Wishart draw needs n - 1 >= d + 1 degrees of freedom).
      parametrization: ``"mup"``, ``"sp"`` or ``"ntp"`` (:data:`theory.mup_transfer.TABLES`).
      n_seeds: the number of initializations, at least 1.
      max_bytes: the allocation limit (:func:`theory.validate.byte_limit`) for the seeds' factors and coefficients.

    Returns:
      ``coef`` (S, m, 4): :math:`c_{ik}` with :math:`f_1(x_i) = \sum_k c_{ik}\eta^k`, as the simulator's.
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng: expected a numpy Generator (np.random.default_rng(seed)), got {type(rng).__name__}")
    xs = V.array("X", X, ndim=2)
    d, m = xs.shape
    ys = V.array("y", y, shape=(m,))
    width = V.integer("n", n, low=d + 2, high=MAX_WIDTH)
    name = V.choice("parametrization", parametrization, TABLES)
    seeds = V.integer("n_seeds", n_seeds, low=1)
    V.check_bytes({"n_seeds": seeds}, 8 * seeds * (2 * (d + 1) ** 2 + 12 * m + 10 * (d + 1)),
                  what="the seeds' Bartlett factors and (m, 4) coefficients", max_bytes=max_bytes)
    scales = {k: float(e.subs({N: width, D: d})) for k, e in table_expr(name).items()}
    L1 = _bartlett(rng, seeds, d + 1, width)          # [W0/sqrt(s0), z]: Gram = L1 L1^T ~ Wishart(n)
    L2 = _bartlett(rng, seeds, d + 1, width - 1)      # Xi^T (I - e e^T) Xi ~ Wishart(n - 1)
    vv = scales["sV"] * rng.chisquare(float(width), size=seeds)
    return {"coef": _coefficients(xs, ys, scales, L1, L2, vv)}


def bench_cases(scale: str) -> list[BenchCase]:
    """Seeds of the reduced draw at the topic's data shape (d = 16, m = 64), the simulator against the reference."""
    import jax

    from sims import mup_transfer as sm

    V.choice("scale", scale, ("small", "large"))
    seeds = 16384 if scale == "small" else 1 << 18  # host NumPy on both sides: "large" only means more seeds
    width, d, m = 1024, 16, 64  # the cost does not depend on the width
    data = np.random.default_rng(20251103)
    X = data.standard_normal((d, m))
    y = X.T @ data.standard_normal(d) / np.sqrt(d)

    def run_jax():
        return sm.one_step(jax.random.key(0), X, y, width, parametrization="mup", n_seeds=seeds)["coef"]

    def run_numpy():
        return one_step_numpy(np.random.default_rng(0), X, y, width, parametrization="mup", n_seeds=seeds)["coef"]

    def check(a, b):
        # Different generators, so the coefficients agree in law: the mean of each c_ik (64 examples x 4 powers) over
        # the seeds within 5 standard errors of the difference (256 correlated z-scores: a false alarm below 1e-4 if
        # they were independent normals). A wrong factor in any term of c_1..c_3, or a wrong degree of freedom or
        # variance, moves the means by many SE at these seed counts (tests/test_mup_transfer.py checks one such).
        a, b = np.asarray(a), np.asarray(b)
        se = np.sqrt(a.var(axis=0, ddof=1) / a.shape[0] + b.var(axis=0, ddof=1) / b.shape[0])
        z = (a.mean(axis=0) - b.mean(axis=0)) / se
        assert np.abs(z).max() < 5.0, (np.abs(z).max(), np.unravel_index(np.abs(z).argmax(), z.shape))

    p = d + 1
    return [BenchCase(f"mup_transfer.one_step (reduced, d={d}, m={m})", "seeds", seeds, run_jax, run_numpy, check,
                      # per seed, as the reference counts it: two Bartlett factors ((d+1)d/2 normals and d+1
                      # chi-square draws each, plus |V|^2; a chi-square draw is about a normal, a uniform and a log),
                      # four d x d and two (d+1) x (d+1) two-column matrix-vector products (16 p^2), four rows times
                      # X or X^T (10 d m: f0, X r, and X^T X r, P^T P r, H r in one product), ~30 ops per example
                      cost={"normal": p * d + 2 * p + 1, "uniform": 2 * p + 1, "exp": 4 * p + 1,
                            "flop": 16 * p * p + 10 * d * m + 30 * m})]
