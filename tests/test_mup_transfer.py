"""Unit tests of the mup_transfer topic: the sympy kernel factors, the reduced draw's algebra against a real GD step
(the Gram route) and against itself (the factor route on the same Bartlett factors), its law against a dense NumPy draw,
the exact minimizers against brute force, the kernel optimum."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import sympy as sp

import sims.mup_transfer as sm
import theory.mup_transfer as th

RNG = np.random.default_rng(7)
D, M = 5, 12
X = RNG.standard_normal((D, M))
Y = X.T @ RNG.standard_normal(D) / np.sqrt(D)


def test_kernel_factors_have_the_derived_limits():
    assert sp.simplify(th.kernel_factor_expr("mup") - (1 + 2 / th.D)) == 0
    assert sp.simplify(th.kernel_factor_expr("ntp") - 3 / th.D) == 0
    assert sp.simplify(th.kernel_factor_expr("sp") - (1 + 2 * th.N / th.D)) == 0
    assert th.limit_kernel_factor("sp", 16) == np.inf
    # the initial output vanishes only under muP
    assert sp.limit(th.output_variance_expr("mup"), th.N, sp.oo) == 0
    assert sp.simplify(th.output_variance_expr("ntp") - 1 / th.D) == 0


def _dense_stats(param, n, rng, s=1):
    """``s`` dense draws (NumPy, the n x n matrix materialized) and their Gram statistics."""
    s0, s1, sv, a0, a1, av = sm._scales(param, n, D)
    W0 = np.sqrt(s0) * rng.standard_normal((s, n, D))
    Z = rng.standard_normal((s, n, n))
    V = np.sqrt(sv) * rng.standard_normal((s, n))
    z = np.einsum("sji,sj->si", Z, V) / np.linalg.norm(V, axis=1, keepdims=True)
    ZB = Z @ np.concatenate([W0, z[:, :, None]], axis=2)
    stats = ((a0, a1, av), s1, np.sum(V * V, axis=1), np.swapaxes(W0, 1, 2) @ W0, np.einsum("sji,sj->si", W0, z),
             np.sum(z * z, axis=1), np.swapaxes(ZB, 1, 2) @ ZB)
    return (W0[0], np.sqrt(s1) * Z[0], V[0]), stats


@pytest.mark.parametrize("param", th.TABLES)
def test_coefficients_equal_a_real_gd_step(param):
    # the reduced algebra fed with a dense draw's statistics against the output after an actual step, whose
    # gradients come from jax.grad, interpolated at 4 rates (a cubic is fixed by 4 points)
    (W0, W1, V), stats = _dense_stats(param, 9, np.random.default_rng(1))
    coef = sm._coefficients(X, Y, *stats)[0]
    a0, a1, av = stats[0]
    g0, g1, gv = (np.asarray(g) for g in jax.grad(sm._loss)((jnp.asarray(W0), jnp.asarray(W1), jnp.asarray(V)),
                                                              jnp.asarray(X), jnp.asarray(Y)))
    etas = np.array([0.0, 0.5, 1.0, 1.5]) / max(a0, a1, av)
    outs = np.stack([(V - e * av * gv) @ (W1 - e * a1 * g1) @ (W0 - e * a0 * g0) @ X for e in etas])
    fit = np.linalg.solve(np.vander(etas, 4, increasing=True), outs).T
    # round-off of a 4-point Vandermonde solve with nodes ~1/a: ~1e-10 relative to the largest coefficient
    np.testing.assert_allclose(fit, coef, atol=1e-9 * np.abs(coef).max())


def test_reduced_draw_has_the_dense_law():
    # first two moments of c1 and of the optimum, reduced draw vs dense NumPy draws (independent seeds)
    n, s = 12, 3000
    rng = np.random.default_rng(2)
    dense = sm._coefficients(X, Y, *_dense_stats("mup", n, rng, s)[1])
    red = sm.one_step(jax.random.key(3), X, Y, n, parametrization="mup", n_seeds=s)["coef"]
    for k in (0, 1):
        a, b = dense[:, :, k], red[:, :, k]
        z = (a.mean(0) - b.mean(0)) / np.sqrt(a.var(0) / s + b.var(0) / s)
        # 12 correlated two-sample z-scores: all within 4.5 SE (a false alarm below 1e-4)
        assert np.abs(z).max() < 4.5, (k, z)
        # the spread: ratio within 20 % (the SE of a ratio of sds at 3000 draws is ~3 %, more for heavy tails)
        assert np.all(np.abs(a.std(0) / b.std(0) - 1) < 0.2), (k, a.std(0) / b.std(0))


def test_first_minimizer_against_brute_force():
    coef = sm.one_step(jax.random.key(5), X, Y, 40, n_seeds=6)["coef"]
    L = th.loss_polynomial(coef, Y)
    eta = th.first_minimizer(L)
    grid = np.linspace(1e-4, 3.0, 300001)
    for row, e in zip(L, eta):
        vals = np.polynomial.polynomial.polyval(grid, row)
        # the first interior local minimum of the fine grid, to the grid spacing 1e-5
        interior = np.flatnonzero((vals[1:-1] < vals[:-2]) & (vals[1:-1] <= vals[2:]))
        assert abs(grid[interior[0] + 1] - e) < 2e-5
    # the loss polynomial equals the loss at a rate, by direct evaluation
    f = np.polynomial.polynomial.polyval(0.3, coef[0].T)
    assert np.isclose(np.polynomial.polynomial.polyval(0.3, L[0]), np.mean((f - Y) ** 2) / 2, rtol=1e-12)
    assert th.grid_minimizer(L[0], np.array([eta[0] * 0.5, eta[0], eta[0] * 1.5])) == eta[0]


def test_global_minimizer_against_brute_force():
    # narrow widths, where some seeds' deepest basin is not the first: the grid's global argmin on (0, 60]. About 2.7
    # such seeds per 64 (measured over 40 keys), so 256 seeds make none at all a ~e^-10 event (64 had ~7 %)
    coef = sm.one_step(jax.random.key(8), X, Y, 8, n_seeds=256)["coef"]
    L = th.loss_polynomial(coef, Y)
    glob, first = th.global_minimizer(L), th.first_minimizer(L)
    grid = np.linspace(1e-4, 60.0, 120001)
    far = 0
    for row, g, f in zip(L, glob, first):
        if g > 59.0:
            continue
        # to two grid spacings of 5e-4 (the two basins' depths differ by more than the grid's resolution in L)
        assert abs(grid[np.argmin(np.polynomial.polynomial.polyval(grid, row))] - g) < 1e-3
        far += g > f * (1 + 1e-9)
        mins = th.local_minimizers(row)
        assert mins[0] == pytest.approx(f, rel=1e-12) and np.any(np.isclose(mins, g, rtol=1e-12))
    assert far > 0  # the case the global minimizer exists for


def test_kernel_optimum_minimizes_its_quadratic():
    f0 = RNG.standard_normal(M)
    eta = th.kernel_optimum(X, Y, 0.7, f0)
    r = f0 - Y
    loss = lambda e: np.sum((r - e * 0.7 * X.T @ X @ r / M) ** 2)  # noqa: E731
    assert loss(eta) < min(loss(eta * (1 - 1e-4)), loss(eta * (1 + 1e-4)))
    assert th.eta_infinity(X, Y) == pytest.approx(th.kernel_optimum(X, Y, 1 + 2 / D), rel=1e-15)
    batch = th.kernel_optimum(X, Y, 0.7, np.stack([f0, f0]))
    assert batch.shape == (2,) and np.allclose(batch, eta, rtol=1e-14)


# --- the reduced draw's two routes: Bartlett factors through matrix-vector products, Gram statistics through products
def _gram_statistics(L1, L2, s0):
    """The Gram statistics two Bartlett factors stand for (module docstring): B^T B = R^T R with R = L1^T diag(sqrt(s0),
    .., 1), and H = B^T z z^T B + R^T (L2 L2^T) R, formed as matrices with their (d+1)^3 products."""
    d = L1.shape[1] - 1
    R = np.swapaxes(L1, 1, 2) * np.r_[np.full(d, np.sqrt(s0)), 1.0]
    btb = np.swapaxes(R, 1, 2) @ R
    bz = btb[:, :, d]
    H = bz[:, :, None] * bz[:, None, :] + np.swapaxes(R, 1, 2) @ (L2 @ np.swapaxes(L2, 1, 2)) @ R
    return {"K": btb[:, :d, :d], "zeta": btb[:, :d, d], "zz": btb[:, d, d], "H": H}


@pytest.mark.parametrize("param", th.TABLES)
def test_factor_route_equals_the_gram_route(param):
    # the same Bartlett factors through both algebras: coefficients_from_statistics on the Gram matrices they make
    # (the route checked against jax.grad above) against the reduced draw's matrix-vector products on the factors
    n, s = 40, 64
    rng = np.random.default_rng(11)
    L1, L2 = sm._bartlett(rng, s, D + 1, n), sm._bartlett(rng, s, D + 1, n - 1)
    s0, s1, sv, a0, a1, av = sm._scales(param, n, D)
    vv = sv * rng.chisquare(n, size=s)
    want = sm.coefficients_from_statistics(X, Y, param, n, {"vv": vv, **_gram_statistics(L1, L2, s0)})
    got = sm._factor_coefficients(X, Y, (a0, a1, av), s0, s1, L1, L2, vv)
    # sums of a few hundred products in another order: <= 7e-16 of each power's largest coefficient (measured on these
    # draws); a dropped or doubled term, or a wrong scale, is O(1) of it
    err = np.abs(got - want).max(axis=(0, 1)) / np.abs(want).max(axis=(0, 1))
    assert np.all(err < 1e-12), err


def test_bartlett_factors_have_the_wishart_law():
    # lower triangular with a positive diagonal, and L L^T with the Wishart(9, I_4) mean 9 I: entries have variance 9
    # (diagonal 18), so the mean of 4000 within 5 SE (<= 0.34) of 9 I; the diagonal's own mean E chi^2_{9-i} = 9 - i
    L = sm._bartlett(np.random.default_rng(13), 4000, 4, 9.0)
    assert np.all(np.triu(L, 1) == 0) and np.all(np.diagonal(L, axis1=1, axis2=2) > 0)
    gram = L @ np.swapaxes(L, 1, 2)
    assert np.abs(gram.mean(0) - 9 * np.eye(4)).max() < 5 * np.sqrt(18 / 4000)
    diag2 = np.diagonal(L, axis1=1, axis2=2) ** 2
    assert np.all(np.abs(diag2.mean(0) - (9 - np.arange(4))) < 5 * np.sqrt(2 * (9 - np.arange(4)) / 4000))
