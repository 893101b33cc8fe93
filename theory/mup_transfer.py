r"""One gradient step of a three-layer linear network: the optimal learning rate across width, per parametrization.

The network is :math:`f(x) = V^\top W_1 W_0 x` with :math:`W_0 \in \mathbb{R}^{n\times d}`,
:math:`W_1 \in \mathbb{R}^{n\times n}`, :math:`V \in \mathbb{R}^n`, trained on the squared loss
:math:`\mathcal{L} = \frac{1}{2m}\sum_{i=1}^m (f(x_i) - y_i)^2` of a fixed data set :math:`X \in \mathbb{R}^{d\times m}`,
:math:`y \in \mathbb{R}^m`. A parametrization fixes, per layer :math:`\ell \in \{0, 1, V\}`, the initial variance
:math:`\sigma_\ell^2` of the i.i.d. Gaussian entries and a learning-rate multiplier :math:`a_\ell`: one GD step is
:math:`W_\ell \leftarrow W_\ell - \eta\,a_\ell\,\nabla_{W_\ell}\mathcal{L}`. Three tables (:data:`TABLES`):

* ``mup`` (maximal update, SGD form): variances :math:`(1/d, 1/n, 1/n^2)`, multipliers :math:`(n, 1, 1/n)`;
* ``sp`` (standard: fan-in initialization, one global rate): variances :math:`(1/d, 1/n, 1/n)`, multipliers
  :math:`(1, 1, 1)`;
* ``ntp`` (neural tangent: unit weights behind :math:`1/\sqrt{\text{fan-in}}` multipliers, rate :math:`\eta`):
  variances :math:`(1/d, 1/n, 1/n)`, multipliers :math:`(1/d, 1/n, 1/n)`;

each listed as :math:`(W_0, W_1, V)`.

**The one-step output is a cubic in** :math:`\eta`. Expanding :math:`(V - \eta a_V g_V)^\top(W_1 - \eta a_1 G_1)
(W_0 - \eta a_0 G_0)x` gives :math:`f_1(x) = c_0 + c_1\eta + c_2\eta^2 + c_3\eta^3`, so the one-step loss is a
polynomial of degree 6 in :math:`\eta` and its minimizers are real roots of a quintic (:func:`loss_polynomial`,
:func:`local_minimizers`): no learning-rate grid.

**The width limit of the linear term.** Replacing each inner product of width :math:`n` by its expectation
(:math:`h_0^\top h_0' \to n\sigma_0^2\,x^\top x'`, :math:`h_1^\top h_1' \to n^2\sigma_1^2\sigma_0^2\,x^\top x'`,
:math:`\|V\|^2 \to n\sigma_V^2`, :math:`\|W_1^\top V\|^2 \to n^2\sigma_1^2\sigma_V^2`) gives

.. math:: c_1(x) \to -\kappa_n\,\frac1m\sum_i r_i\,x_i^\top x, \qquad
   \kappa_n = n^2\left(a_V\sigma_1^2\sigma_0^2 + a_1\sigma_V^2\sigma_0^2 + a_0\sigma_1^2\sigma_V^2\right)

(:func:`kernel_factor_expr`), with :math:`r_i = f_0(x_i) - y_i`; the output at initialization has variance
:math:`n^2\sigma_V^2\sigma_1^2\sigma_0^2\,\|x\|^2` (:func:`output_variance_expr`). Under μP :math:`\kappa_n = 1 + 2/d`
(the input layer contributes 1, the hidden and output layers :math:`1/d` each), :math:`f_0 \to 0` and the
higher-order terms vanish like :math:`n^{-1/2}`, so the loss tends to :math:`\frac1{2m}\|\eta\kappa X^\top c - y\|^2`,
:math:`c = Xy/m`, minimized at

.. math:: \eta_\infty = \frac{c^\top X y}{\kappa\,\|X^\top c\|^2}, \qquad \kappa = 1 + \frac2d

(:func:`eta_infinity`, a non-zero constant). Under NTP :math:`\kappa = 3/d` but :math:`f_0` stays a random
:math:`O(1)` output, so the optimum tends to the random :math:`\eta(f_0)` of :func:`kernel_optimum`; under SP
:math:`\kappa_n = 1 + 2n/d` grows with width and the optimum shrinks like :math:`1/\kappa_n \sim d/(2n)`.
Derived here (the expectations are the law of large numbers at fixed :math:`d, m`); pure maths, no JAX, no I/O.
"""
from __future__ import annotations

import functools

import numpy as np
import sympy as sp

from theory import validate as V

__all__ = ["N", "D", "ETA", "KAPPA", "TABLES", "table_expr", "kernel_factor_expr", "output_variance_expr",
           "kernel_factor", "limit_kernel_factor", "kernel_optimum", "eta_infinity", "loss_polynomial",
           "local_minimizers", "first_minimizer", "global_minimizer", "grid_minimizer"]

N, D = sp.symbols("n d", positive=True)
ETA, KAPPA = sp.symbols("eta kappa", positive=True)

#: the parametrizations, by name
TABLES = ("mup", "sp", "ntp")


def table_expr(parametrization: str) -> dict[str, sp.Expr]:
    r"""The table of ``parametrization``: init variances ``s0, s1, sV`` and rate multipliers ``a0, a1, aV`` in
    :math:`n, d` (see the module docstring)."""
    name = V.choice("parametrization", parametrization, TABLES)
    one = sp.Integer(1)
    if name == "mup":
        return {"s0": 1 / D, "s1": 1 / N, "sV": 1 / N**2, "a0": N, "a1": one, "aV": 1 / N}
    if name == "sp":
        return {"s0": 1 / D, "s1": 1 / N, "sV": 1 / N, "a0": one, "a1": one, "aV": one}
    return {"s0": 1 / D, "s1": 1 / N, "sV": 1 / N, "a0": 1 / D, "a1": 1 / N, "aV": 1 / N}


def kernel_factor_expr(parametrization: str) -> sp.Expr:
    r""":math:`\kappa_n = n^2(a_V\sigma_1^2\sigma_0^2 + a_1\sigma_V^2\sigma_0^2 + a_0\sigma_1^2\sigma_V^2)`: the
    shares of the output, hidden and input layers' updates in the linear term of the one-step output."""
    t = table_expr(parametrization)
    return sp.simplify(N**2 * (t["aV"] * t["s1"] * t["s0"] + t["a1"] * t["sV"] * t["s0"] + t["a0"] * t["s1"] * t["sV"]))


def output_variance_expr(parametrization: str) -> sp.Expr:
    r"""The variance of :math:`f_0(x)` per unit :math:`\|x\|^2`: :math:`n^2\sigma_V^2\sigma_1^2\sigma_0^2`."""
    t = table_expr(parametrization)
    return sp.simplify(N**2 * t["sV"] * t["s1"] * t["s0"])


@functools.cache
def _kappa_fn(parametrization: str):
    return sp.lambdify((N, D), kernel_factor_expr(parametrization), "numpy")


def kernel_factor(parametrization: str, n, d) -> float:
    r""":math:`\kappa_n` of :func:`kernel_factor_expr` at width ``n`` and input dimension ``d``."""
    name = V.choice("parametrization", parametrization, TABLES)
    width = V.integer("n", n, low=1)
    dim = V.integer("d", d, low=1)
    return float(_kappa_fn(name)(width, dim))


def limit_kernel_factor(parametrization: str, d) -> float:
    r""":math:`\lim_{n\to\infty}\kappa_n`: :math:`1 + 2/d` (μP), :math:`3/d` (NTP), :math:`\infty` (SP)."""
    name = V.choice("parametrization", parametrization, TABLES)
    dim = V.integer("d", d, low=1)
    return float(sp.limit(kernel_factor_expr(name), N, sp.oo).subs(D, dim))


P_SYM, Q_SYM = sp.symbols("p q", positive=True)


@functools.cache
def _optimum_expr() -> sp.Expr:
    # the kernel-limit loss (1/2m)|r - eta kappa a|^2 up to its eta-free part, with p = <r, a>, q = |a|^2
    loss = (KAPPA**2 * ETA**2 * Q_SYM - 2 * KAPPA * ETA * P_SYM) / 2
    (root,) = sp.solve(sp.diff(loss, ETA), ETA)
    return root


@functools.cache
def _optimum_fn():
    return sp.lambdify((P_SYM, Q_SYM, KAPPA), _optimum_expr(), "numpy")


def kernel_optimum(X, y, kappa, f0=None):
    r"""The minimizer of the kernel-limit one-step loss :math:`\frac1{2m}\|r - \eta\kappa\,a\|^2`, :math:`a = Gr/m`,
    :math:`r = f_0 - y`, :math:`G = X^\top X`: :math:`\eta = \langle r, a\rangle/(\kappa\|a\|^2)` (solved by sympy).

    Args:
      X: the inputs, a (d, m) array (one column per example).
      y: the targets, an (m,) array.
      kappa: the kernel factor :math:`\kappa > 0` (:func:`limit_kernel_factor`).
      f0: the outputs at initialization, an (m,) array or (S, m) for S initializations (default zeros: the μP
        limit).

    Returns:
      a float, or an (S,) array for an (S, m) ``f0``.
    """
    xs = V.array("X", X, ndim=2)
    m = xs.shape[1]
    ys = V.array("y", y, shape=(m,))
    k = V.real("kappa", kappa, low=0.0, low_open=True)
    outs = np.zeros_like(ys) if f0 is None else V.array("f0", f0, ndim=(1, 2))
    if outs.shape[-1] != m:
        raise ValueError(f"f0: expected shape (m,) or (S, m) with m = {m}, got {outs.shape}")
    r = np.atleast_2d(outs - ys)
    a = (r @ xs.T) @ xs / m
    q = np.sum(a * a, axis=1)
    if not np.all(q > 0):
        raise ValueError("y: the residual f0 - y lies in the null space of X, so no step moves the output")
    eta = np.asarray(_optimum_fn()(np.sum(r * a, axis=1), q, k), dtype=float)
    return float(eta[0]) if outs.ndim == 1 else eta


def eta_infinity(X, y) -> float:
    r"""The μP limit of the optimal one-step rate, :math:`\eta_\infty = c^\top X y/(\kappa\|X^\top c\|^2)`,
    :math:`c = Xy/m`, :math:`\kappa = 1 + 2/d` (``X``: (d, m) inputs, ``y``: (m,) targets)."""
    xs = V.array("X", X, ndim=2)
    return kernel_optimum(xs, y, limit_kernel_factor("mup", xs.shape[0]))


def loss_polynomial(coef, y) -> np.ndarray:
    r"""The one-step loss :math:`\frac1{2m}\sum_i(\sum_k c_{ik}\eta^k - y_i)^2` as polynomial coefficients.

    Args:
      coef: the output's coefficients, an (m, K) array (:math:`c_{ik}`, ascending powers) or (S, m, K) for S runs.
      y: the targets, an (m,) array.

    Returns:
      the loss coefficients in ascending powers, (2K - 1,) or (S, 2K - 1).
    """
    c = V.array("coef", coef, ndim=(2, 3))
    ys = V.array("y", y, ndim=1)
    if c.shape[-2] != ys.size or c.shape[-1] < 2:
        raise ValueError(f"coef: expected shape (m, K) or (S, m, K) with m = {ys.size} (the length of y) and K >= 2, "
                         f"got {c.shape}")
    b = np.array(c, copy=True)
    b[..., 0] -= ys
    k = b.shape[-1]
    out = np.zeros(b.shape[:-2] + (2 * k - 1,))
    for i in range(k):
        for j in range(k):
            out[..., i + j] += np.sum(b[..., i] * b[..., j], axis=-1)
    return out / (2 * ys.size)


def _derivative_roots(c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Roots of L' for each row of ascending loss coefficients ``c`` (S, K): batched companion-matrix eigenvalues."""
    d1 = c[:, 1:] * np.arange(1, c.shape[1])          # L' coefficients, ascending, degree K - 2
    lead = d1[:, -1]
    if np.any(lead == 0):
        raise ValueError("loss_coef: the leading coefficient of the loss is zero (the output's eta^3 term vanishes)")
    deg = d1.shape[1] - 1
    comp = np.zeros((c.shape[0], deg, deg))
    comp[:, 1:, :-1] = np.eye(deg - 1)
    comp[:, :, -1] = -d1[:, :-1] / lead[:, None]
    return np.linalg.eigvals(comp), d1


def _polish(x: np.ndarray, d1: np.ndarray) -> np.ndarray:
    """Two Newton steps on L' (rows of ``x`` are candidate roots of the rows of ``d1``)."""
    d2 = d1[:, 1:] * np.arange(1, d1.shape[1])
    for _ in range(2):
        pv = sum(d1[:, [k]] * x**k for k in range(d1.shape[1]))
        dv = sum(d2[:, [k]] * x**k for k in range(d2.shape[1]))
        x = np.where(dv != 0, x - pv / np.where(dv != 0, dv, 1.0), x)
    return x


def _minimizer_table(rows: np.ndarray) -> np.ndarray:
    """Per row of ascending loss coefficients (S, K): the real roots of L' with L'' > 0 on eta > 0, NaN elsewhere."""
    roots, d1 = _derivative_roots(rows)
    scale = np.maximum(1.0, np.max(np.abs(roots), axis=1, keepdims=True))
    is_real = np.abs(roots.imag) <= 1e-7 * scale
    x = _polish(np.where(is_real, roots.real, 0.0), d1)
    d2 = d1[:, 1:] * np.arange(1, d1.shape[1])
    curv = sum(d2[:, [k]] * x**k for k in range(d2.shape[1]))
    return np.where(is_real & (x > 0) & (curv > 0), x, np.nan)


def _rows(loss_coef) -> tuple[np.ndarray, np.ndarray]:
    c = V.array("loss_coef", loss_coef, ndim=(1, 2))
    if c.shape[-1] < 3:
        raise ValueError(f"loss_coef: expected at least 3 coefficients (a loss of degree >= 2), got {c.shape[-1]}")
    return c, c.reshape(-1, c.shape[-1])


def local_minimizers(loss_coef, *, eta_max=None) -> np.ndarray:
    r"""The local minimizers of one loss polynomial on :math:`0 < \eta < \eta_{\max}` (no upper end for ``None``),
    ascending: the real roots of :math:`L'` where :math:`L'' > 0` (companion-matrix eigenvalues, each polished by two
    Newton steps on :math:`L'`)."""
    c = V.array("loss_coef", loss_coef, ndim=1)
    hi = np.inf if eta_max is None else V.real("eta_max", eta_max, low=0.0, low_open=True)
    _, rows = _rows(c)
    mins = _minimizer_table(rows)[0]
    return np.sort(mins[np.isfinite(mins) & (mins < hi)])


def first_minimizer(loss_coef):
    r"""The first local minimizer of each one-step loss on :math:`\eta > 0` (the basin a rate swept up from 0 meets
    first).

    Args:
      loss_coef: ascending loss coefficients, (K,) for one loss or (S, K) for S of them (:func:`loss_polynomial`).

    Returns:
      a float, or an (S,) array; NaN where a loss has no local minimizer on :math:`\eta > 0`.
    """
    c, rows = _rows(loss_coef)
    table = _minimizer_table(rows)
    first = np.where(np.isfinite(table), table, np.inf).min(axis=1)
    first = np.where(np.isfinite(first), first, np.nan)
    return float(first[0]) if c.ndim == 1 else first


def global_minimizer(loss_coef):
    r"""The global minimizer of each one-step loss on :math:`\eta > 0` (the local minimizer of least loss), a float or
    an (S,) array as :func:`first_minimizer`; NaN where a loss has no local minimizer on :math:`\eta > 0`."""
    c, rows = _rows(loss_coef)
    table = _minimizer_table(rows)
    ok = np.isfinite(table)
    vals = sum(rows[:, [k]] * np.where(ok, table, 0.0) ** k for k in range(rows.shape[1]))
    pick = np.argmin(np.where(ok, vals, np.inf), axis=1)
    best = np.take_along_axis(table, pick[:, None], axis=1)[:, 0]
    best = np.where(ok.any(axis=1), best, np.nan)
    return float(best[0]) if c.ndim == 1 else best


def grid_minimizer(loss_coef, grid) -> float:
    r"""The grid point of ``grid`` (an increasing positive array) where the loss polynomial is smallest: what a
    learning-rate sweep on that grid reports."""
    c = V.array("loss_coef", loss_coef, ndim=1)
    g = V.array("grid", grid, ndim=1, low=0.0, low_open=True)
    if g.size > 1 and not np.all(np.diff(g) > 0):
        raise ValueError("grid: expected strictly increasing learning rates")
    return float(g[int(np.argmin(np.polynomial.polynomial.polyval(g, c)))])
