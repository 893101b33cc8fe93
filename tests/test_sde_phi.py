"""Unit tests of the extremal (L0, L1) ridge and DSignSGD's exact one-step change on it (theory/sde/extremal.py, topic ``sde``).

Every check compares two independent computations: sympy against finite differences and JAX autodiff, the binomial
sum against a NumPy Monte Carlo of the signs (its own noise draws, its own evaluation of f), the critical step against
the noise-free mirror point and against other (L0, L1)-smooth functions of one variable.
"""
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import sympy as sp

import sims  # noqa: F401  (float64)
from theory import sde as T


def test_extremal_function_saturates_the_l0l1_bound_symbolically_and_numerically():
    F, (y, L0, L1) = T.l0l1_extremal_symbolic()
    F1, F2 = sp.diff(F, y), sp.diff(F, y, 2)
    assert sp.simplify(F2 - (L0 + L1 * F1)) == 0            # F'' = L0 + L1 |F'| on y > 0 (F' > 0 there)
    assert F.subs(y, 0) == 0 and F1.subs(y, 0) == 0 and sp.simplify(F2.subs(y, 0) - L0) == 0   # C^2 at 0 (F even)
    L0v, L1v = 0.7, 2.3
    ys = np.array([-1.9, -0.3, -1e-4, 2e-3, 0.05, 0.8, 2.5])
    v, v1, v2 = T.l0l1_extremal(ys, L0v, L1v)
    Fv = F.subs({L0: sp.Rational(7, 10), L1: sp.Rational(23, 10)})
    exact = [float(sp.N(Fv.subs(y, sp.Float(abs(t), 40)), 30)) for t in ys]   # 30 digits: no cancellation
    np.testing.assert_allclose(v, exact, rtol=1e-13)
    # central differences of the returned F and F' (step ~ eps^(1/3))
    e = 1e-5
    fd1 = (T.l0l1_extremal(ys + e, L0v, L1v)[0] - T.l0l1_extremal(ys - e, L0v, L1v)[0]) / (2 * e)
    fd2 = (T.l0l1_extremal(ys + e, L0v, L1v)[1] - T.l0l1_extremal(ys - e, L0v, L1v)[1]) / (2 * e)
    np.testing.assert_allclose(v1, fd1, rtol=1e-8, atol=1e-9)
    np.testing.assert_allclose(v2, fd2, rtol=1e-8, atol=1e-9)
    np.testing.assert_allclose(v2, L0v + L1v * np.abs(v1), rtol=1e-13)
    assert T.l0l1_extremal(1e-9, L0v, L1v)[0] == pytest.approx(L0v * 1e-18 / 2, rel=1e-8)   # no cancellation


def _ridge_jax(x, L0, L1):
    y = jnp.sum(x) / jnp.sqrt(x.size)
    a = L1 * jnp.abs(y)
    return L0 / L1**2 * (jnp.expm1(a) - a)


def test_ridge_is_l0l1_smooth_with_equality_by_autodiff():
    """||Hess f(x)||_2 = L0 + L1 ||grad f(x)|| at random points (JAX autodiff, eigenvalues): the same constants, attained."""
    L0, L1, d = 1.3, 0.6, 8
    rng = np.random.default_rng(d)
    grad, hess = jax.jit(jax.grad(_ridge_jax)), jax.jit(jax.hessian(_ridge_jax))
    for _ in range(4):
        x = jnp.asarray(rng.normal(0, 1.5, d))
        g, H = np.asarray(grad(x, L0, L1)), np.asarray(hess(x, L0, L1))
        top = float(np.max(np.abs(np.linalg.eigvalsh(H))))
        assert top == pytest.approx(L0 + L1 * float(np.linalg.norm(g)), rel=1e-12)
        y = float(np.sum(x)) / math.sqrt(d)
        _, F1, _ = T.l0l1_extremal(y, L0, L1)
        np.testing.assert_allclose(g, F1 / math.sqrt(d), rtol=1e-12)


def _mc_change(y, h, d, scale, n, noise, nu, n_draws, seed):
    """NumPy Monte Carlo of f(x - hD) - f(x) at x = y u: its own noise draws and signs, f evaluated in d dimensions."""
    rng = np.random.default_rng(seed)
    x = np.full(d, y / math.sqrt(d))
    g = math.expm1(abs(y)) / math.sqrt(d) * math.copysign(1.0, y) * np.ones(d)   # L0 = L1 = 1
    draw = {"gaussian": lambda s: rng.standard_normal(s), "cauchy": lambda s: rng.standard_cauchy(s),
            "student_t": lambda s: rng.standard_t(nu, s)}[noise]
    D = np.sign(g + scale * draw((n_draws, n, d))).mean(axis=1)
    f = lambda v: np.expm1(np.abs(v.sum(axis=-1) / math.sqrt(d))) - np.abs(v.sum(axis=-1) / math.sqrt(d))  # noqa: E731
    delta = f(x - h * D) - f(x)
    return delta.mean(), delta.std(ddof=1) / math.sqrt(n_draws)


@pytest.mark.parametrize("y, d, scale, n, noise, nu", [
    (0.8, 2, 0.7, 3, "gaussian", None), (1.5, 8, 2.0, 1, "student_t", 2.5), (-0.4, 1, 0.3, 2, "cauchy", None)])
def test_binomial_change_matches_a_monte_carlo_of_the_step(y, d, scale, n, noise, nu):
    hstar = T.ridge_critical_step(y, d, scale, n, noise, nu)
    for k, h in enumerate((0.5 * hstar, 1.6 * hstar)):
        exact = T.ridge_one_step_change(y, h, d, scale, n, noise, nu)
        mu, se = _mc_change(y, h, d, scale, n, noise, nu, 40_000, seed=k + 7 * d)
        assert abs(mu - exact) < 4.5 * se, (h, mu, exact, se)     # 4.5 SE: 6 comparisons, two-sided
        assert (exact < 0) == (k == 0)


def test_critical_step_is_the_sign_change_and_the_noise_free_mirror_point():
    args = (8, 1.0, 2, "student_t", 1.5)
    for y in (0.05, 0.7, 3.0):
        hs = T.ridge_critical_step(y, *args)
        assert T.ridge_one_step_change(y, hs * (1 - 1e-6), *args) < 0 < T.ridge_one_step_change(y, hs * (1 + 1e-6), *args)
    # negligible noise: every sign agrees, <u,x> moves by h sqrt(d): descent until the mirror point 2y
    for d in (1, 4):
        assert T.ridge_critical_step(0.9, d, 1e-9, 3, "gaussian") == pytest.approx(2 * 0.9 / math.sqrt(d), rel=1e-10)
    assert T.ridge_critical_step(0.0, 4, 1.0, 2, "gaussian") == 0.0
    # symmetric in y
    assert T.ridge_critical_step(-0.7, *args) == pytest.approx(T.ridge_critical_step(0.7, *args), rel=1e-13)


def test_condition_steps_order_and_the_quadratic_limit():
    """h_phi <= h_1/2 <= h* (phi >= 1/2), and h*/h_1/2 -> 1 as L1 y -> 0 in d = 1 (the isotropic quadratic, where the
    condition is exact)."""
    for d, n, u, a in ((1, 1, 0.5, 2.0), (8, 2, 0.1, 0.5), (32, 8, 2.0, 4.0)):
        scale = math.expm1(a) / math.sqrt(d) / u
        st = T.ridge_condition_steps(a, d, scale, n, "gaussian")
        hs = T.ridge_critical_step(a, d, scale, n, "gaussian")
        assert st["steplab"] <= st["half_phi"] <= hs
        assert st["phi_at_half"] == pytest.approx(T.sign_remainder_factor(st["half_phi"] * math.sqrt(d)), rel=1e-14)
    ratios = []
    for a in (0.1, 0.01, 0.001):
        scale = math.expm1(a) / 0.1
        ratios.append(T.ridge_critical_step(a, 1, scale, 1, "gaussian")
                      / T.ridge_condition_steps(a, 1, scale, 1, "gaussian")["half_phi"])
    assert all(r >= 1 for r in ratios) and ratios[-1] - 1 < 2e-4 and np.all(np.diff(ratios) < 0)


@pytest.mark.parametrize("name, x", [("cosh2", 0.4), ("cosh2", 1.7), ("quartic", 0.6), ("quartic", 1.3)])
def test_in_one_dimension_the_ridge_has_the_smallest_critical_step(name, x):
    """F is the pointwise largest (L0, L1)-smooth function with a given value and slope, so at the same gradient and
    noise no other such function (2cosh: (2, 1); x^4/4: (1, 2)) has a smaller critical step."""
    L0, L1 = T.sign_l0l1(name)
    grad = {"cosh2": 2 * math.sinh(x), "quartic": x**3}[name]
    y = math.log1p(L1 * grad / L0) / L1                        # F'(y) = grad
    args = (1.0, 4, "student_t", 1.5)
    h_ridge = T.ridge_critical_step(y, 1, *args, L0=L0, L1=L1)
    assert T.sign_critical_step(np.array([x]), name, *args) >= h_ridge * (1 - 1e-9)


def _radial_jax(x, L0, L1):
    a = L1 * jnp.sqrt(jnp.sum(x**2))
    return L0 / L1**2 * (jnp.expm1(a) - a)


def test_radial_function_is_l0l1_smooth_by_autodiff():
    """||Hess F(|x|)||_2 = L0 + L1 ||grad|| (radial eigenvalue F''), the tangential ones F'/r below it."""
    L0, L1 = 0.9, 1.7
    rng = np.random.default_rng(5)
    grad, hess = jax.jit(jax.grad(_radial_jax)), jax.jit(jax.hessian(_radial_jax))
    for _ in range(3):
        x = jnp.asarray(rng.normal(0, 1.0, 4))
        g, H = np.asarray(grad(x, L0, L1)), np.asarray(hess(x, L0, L1))
        ev = np.linalg.eigvalsh(H)
        assert np.max(np.abs(ev)) == pytest.approx(L0 + L1 * float(np.linalg.norm(g)), rel=1e-12)
        assert np.sort(ev)[0] > 0 and np.sort(ev)[-2] < np.max(ev)


def _mc_radial(y, h, d, scale, n, noise, n_draws, seed):
    rng = np.random.default_rng(seed)
    x = np.full(d, y / math.sqrt(d))
    g = math.expm1(y) / math.sqrt(d) * np.ones(d)
    draw = {"gaussian": rng.standard_normal, "cauchy": rng.standard_cauchy}[noise]
    D = np.sign(g + scale * draw((n_draws, n, d))).mean(axis=1)
    r = np.linalg.norm(x - h * D, axis=-1)
    delta = np.expm1(r) - r - (math.expm1(y) - y)
    return delta.mean(), delta.std(ddof=1) / math.sqrt(n_draws)


@pytest.mark.parametrize("y, d, scale, n, noise", [(0.6, 3, 0.8, 2, "gaussian"), (1.2, 8, 3.0, 1, "cauchy")])
def test_radial_change_matches_a_monte_carlo_and_equals_the_ridge_in_one_dimension(y, d, scale, n, noise):
    hstar = T.radial_critical_step(y, d, scale, n, noise)
    for k, h in enumerate((0.5 * hstar, 1.6 * hstar)):
        exact = T.radial_one_step_change(y, h, d, scale, n, noise)
        mu, se = _mc_radial(y, h, d, scale, n, noise, 40_000, seed=k + 11 * d)
        assert abs(mu - exact) < 4.5 * se, (h, mu, exact, se)
        assert (exact < 0) == (k == 0)
    # d = 1: |x| = |<u, x>|, the two functions coincide
    hs = np.array([0.1, 0.7, 2.0])
    np.testing.assert_allclose(T.radial_one_step_change(0.9, hs, 1, 0.5, 3, "gaussian"),
                               T.ridge_one_step_change(0.9, hs, 1, 0.5, 3, "gaussian"), rtol=1e-12)


def test_radial_quadratic_limit_is_tight_in_every_dimension():
    """Near the minimizer F(|x|) is the isotropic quadratic L0|x|^2/2, on which the condition is exact: h*/h_1/2 -> 1
    for d = 8 as well (the ridge keeps a factor of up to d there)."""
    for d, n in ((8, 1), (8, 2)):
        a = 1e-3
        scale = math.expm1(a) / math.sqrt(d) / 0.1
        ratio = T.radial_critical_step(a, d, scale, n, "gaussian") / \
            T.ridge_condition_steps(a, d, scale, n, "gaussian")["half_phi"]
        assert 1 <= ratio < 1 + 5e-3
    with pytest.raises(ValueError, match="d, n_agents"):
        T.radial_critical_step(0.5, 32, 1.0, 8, "gaussian")
