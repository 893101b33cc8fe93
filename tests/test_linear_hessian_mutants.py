"""Tests written to kill surviving mutants of linear_hessian's simulators (mutation tool, tests/mutation.py).

Each test compares the simulator with a number obtained independently of it (a hand-computed closed form on
a degenerate problem), so a deliberate change to the code that the topic's other tests let through is caught.
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from sims import linear_hessian as S
from sims.linear_hessian import frame as F

# one compilation serves both frame class-data tests (gaussian is traced; alpha is left at its default on purpose)
_class_data = jax.jit(F._frame_class_data, static_argnums=(3, 4))


def test_gd_sweep_scalar_chain_closed_form_and_exact_divergence_step():
    r"""Depth-1 scalar net, one sample :math:`x=1`, label :math:`y=0`: GD is :math:`w_t=(1-\eta)^tw_0`.

    Pins, against that hand computation: the iterate and loss of a convergent run (:math:`\eta=1/2`:
    :math:`w_{20}=2^{-20}`, loss :math:`\tfrac12w_{20}^2`, both exact in float64), ``diverged_step = -1`` for a
    run that never diverged (the documented sentinel), and the exact divergence step of a run with
    :math:`1-\eta=-10^7`: :math:`|w_{14}|\approx10^{98}` is still below the blow-up threshold :math:`10^{100}`,
    :math:`|w_{15}|\approx10^{105}` is beyond it, so ``diverged_step == 15`` (steps count from 1) and the iterate
    stays frozen at :math:`w_{14}=(-10^7)^{14}` (relative round-off of 14 multiplications, far below 1e-12).
    """
    etas = np.array([0.5, 1.0 + 1e7])
    out = S.gd_sweep(np.ones(1), np.ones((1, 1)), np.zeros((1, 1)), (1, 1), etas, steps=20)
    theta, loss = np.asarray(out["theta"])[:, 0], np.asarray(out["loss"])
    assert list(np.asarray(out["diverged"])) == [False, True]
    assert list(np.asarray(out["diverged_step"])) == [-1, 15]
    assert theta[0] == 0.5**20 and loss[0] == 0.5 * 0.25**20
    assert theta[1] == pytest.approx(1e98, rel=1e-12)                  # (-1e7)^14, the last finite iterate
    assert np.isnan(loss[1])


def test_frame_data_constructors_default_to_unit_input_scale():
    r"""The frame's data constructors default to :math:`\alpha=1`, like the plain ones (``class_data``,
    ``whitened_data``): :math:`XX^\top/n=I` on the :math:`d_0` live input rows and 0 on the padding rows.

    The expected matrix is written down by hand (whitened inputs by construction), not taken from the code.
    """
    d0, n, dmax = 4, 10, 5
    expected = np.diag([1.0] * d0 + [0.0] * (dmax - d0))
    # jitted: eager dispatch of the constructors' QR/search ops costs seconds; compiled they take milliseconds
    X, _ = _class_data(jax.random.key(0), jnp.array([5, 3, 2]), d0, n, dmax, gaussian=jnp.asarray(False))
    np.testing.assert_allclose(np.asarray(X @ X.T / n), expected, atol=1e-12)
    X, _ = jax.jit(F._frame_whitened_data, static_argnums=(4, 5))(jax.random.key(1), d0, 2, 2, n, dmax)
    np.testing.assert_allclose(np.asarray(X @ X.T / n), expected, atol=1e-12)


def test_case_grid_takes_the_number_of_cases_from_two_dimensional_counts():
    """One row of class sizes per case is enough to fix the number of cases (every other field shared).

    Pins the documented broadcasting rule of the constructed-minima grid on a hand-written input: two rows of
    ``counts`` and scalar fields give two cases, each with its own row; a third per-case length disagreeing
    with the rows is refused. Host-side NumPy only (nothing compiles).
    """
    from sims.linear_hessian.spectrum import case_grid
    counts = np.array([[50, 30, 20], [34, 33, 33]])
    grid = case_grid(jax.random.key(0), (6, 4, 3), counts=counts)
    np.testing.assert_array_equal(grid["counts"], counts)
    assert grid["key"].shape == (2,) and grid["widths"].shape[0] == 2 and grid["gauge"].shape == (2,)
    with pytest.raises(ValueError, match="different numbers of cases"):
        case_grid(jax.random.key(0), (6, 4, 3), counts=counts, gauge=np.array([0.0, 0.1, 0.2]))


def test_rescaled_factorization_breaks_exactly_the_identities_a_function_preserving_gauge_breaks():
    r"""Depth 3, gauge :math:`W_1\to cW_1`, :math:`W_2\to W_2/c` with :math:`c=2`: which residuals vanish, by hand.

    The product :math:`W=W_3W_2W_1` is unchanged, so the residuals list (balance :math:`l=1,2`, then
    :math:`A_lA_l^\top`, :math:`B_l^\top B_l` for :math:`l=1,2,3`) is non-zero exactly where a factor of
    :math:`c` survives: both balance conditions, :math:`A_1=W_3W_2/c` and :math:`B_2=cW_1`; zero for
    :math:`B_1=I`, :math:`A_2=W_3`, :math:`A_3=I` and :math:`B_3=W_2W_1` (the :math:`c` cancels). The
    :math:`B_2` residual is :math:`(c^2-1)(W^\top W)^{1/3}=3\,R_0\operatorname{diag}(t_1^2,t_2^2)R_0^\top` with
    :math:`R_0` the input rotation of the construction. (The existing test only asks that *some* residual
    is non-zero, which a gauge that is not function-preserving also satisfies.)
    """
    import sympy as sp
    from theory import linear_hessian as T
    res = T.balanced_identity_residuals(3, rescale=2)
    assert [r == sp.zeros(2, 2) for r in res] == [False, False, False, True, True, False, True, True]
    t1, t2 = sp.symbols("t1 t2", positive=True)
    R0 = T._rot(0)
    assert sp.simplify(res[5] - 3 * R0 * sp.diag(t1**2, t2**2) * R0.T) == sp.zeros(2, 2)


@pytest.mark.parametrize("scale", [1e-8, 1e8])
def test_balanced_gauss_newton_spectrum_is_scale_free_in_its_rank_cutoff(scale):
    r"""The non-zero spectrum at a balanced minimum for :math:`\Sigma_{yx}` of any overall size, against the
    whitened closed form :func:`spectrum` (an independent formula: :math:`\alpha\kappa_{ij}` and bulk terms).

    :math:`\Sigma_{xx}=1.5I` and :math:`\Sigma_{yx}=1.5\cdot\text{scale}\cdot U\operatorname{diag}(1,0.6,0.3)V^\top`
    with scale :math:`10^{\pm8}`: the numerical-rank cutoff must be relative to :math:`s_1`, so every true mode
    is kept (a cutoff that does not scale with :math:`s_1` drops all three modes at :math:`10^{-8}`).
    Tolerance: float64 round-off relative to the top eigenvalue.
    """
    from theory import linear_hessian as T
    rng = np.random.default_rng(4)
    U = np.linalg.qr(rng.normal(size=(3, 3)))[0]
    Vt = np.linalg.qr(rng.normal(size=(5, 5)))[0][:3]
    sv = np.array([1.0, 0.6, 0.3])
    Syx = 1.5 * scale * U @ np.diag(sv) @ Vt
    for depth in (2, 3):
        w = (5,) + (4,) * (depth - 1) + (3,)
        full = np.sort(T.spectrum(w, 1.5, 1.5 * scale * sv))
        gn = T.balanced_gauss_newton_spectrum(1.5 * np.eye(5), Syx, depth)
        np.testing.assert_allclose(gn, full[-gn.size:], rtol=0, atol=1e-12 * full[-1])


def test_mixed_class_inputs_keep_the_padding_rows_zero():
    r"""``gaussian=True`` mixes only the :math:`d_0` live input rows: :math:`X'=(I+N/(2\sqrt{d_0}))X` with
    :math:`N` confined to the live block, so the padding rows of :math:`X` (and of :math:`\Sigma_{xx}`) stay
    exactly zero, as the constructors promise (zero-padded frame data), while the live block is no longer
    whitened (:math:`\Sigma_{xx}\ne I`).
    """
    d0, n, dmax = 4, 10, 5
    X, _ = _class_data(jax.random.key(0), jnp.array([5, 3, 2]), d0, n, dmax, gaussian=jnp.asarray(True))
    X = np.asarray(X)
    assert np.all(X[d0:] == 0.0)
    assert np.linalg.norm(X[:d0] @ X[:d0].T / n - np.eye(d0)) > 0.05


def test_law_exponent_with_the_wrong_sign_fails_the_trend_claim(monkeypatch):
    """``steplab.class_law_trend_under_relaxations`` against the class law with its exponent's sign flipped,
    :math:`L\\pi_{\\max}^{1/L-1}` (falling in :math:`\\pi_{\\max}`): the measured slopes, all increasing, reject it. The
    claim runs unmutated first (it must pass; its experiments are then cached), so the mutant moves the prediction only."""
    from paper_checks import Budget, get_claim
    from theory import linear_hessian as T
    claim = get_claim("steplab.class_law_trend_under_relaxations")
    assert claim.status(claim.run(Budget("quick"))) == "passed"

    def flipped(proportions, depth, sigma_xx_scale=1.0):
        return depth * sigma_xx_scale ** (1 / depth) * float(np.max(proportions)) ** (1 / depth - 1)

    assert flipped(np.array([0.5, 0.5]), 2) == pytest.approx(2 * 0.5**-0.5)
    monkeypatch.setattr(T, "class_sharpness", flipped)
    assert claim.status(claim.run(Budget("quick"))) == "failed"


def test_plain_glorot_init_has_the_glorot_variance():
    r"""``xavier_init`` draws :math:`W_l\sim\mathcal N(0,2/(d_{l-1}+d_l))`, the variance written down from Glorot's
    definition, not read off the code. One draw of widths (80, 60, 40): the sample variance of a layer's
    :math:`m\ge2400` entries has relative standard error :math:`\sqrt{2/m}\le2.9\%`; 5 standard errors (<= 15 %)
    still reject a factor of 2 in the variance (no claim runs the plain initializer: the claims' Glorot runs start
    from the frame's own draw inside the GD sweep).
    """
    widths = (80, 60, 40)
    theta = np.asarray(S.xavier_init(jax.random.key(7), widths))
    start = 0
    for d_out, d_in in S.param_shapes(widths):
        block = theta[start:start + d_out * d_in]
        start += d_out * d_in
        expected = 2.0 / (d_in + d_out)
        assert abs(block.var() / expected - 1) < 5 * np.sqrt(2 / block.size), (d_out, d_in, block.var())


# ------------------------------------------------------------------------------------------- claim power
# Issue 27: survivors of the claims-only mutation run (tests/mutation.py --claims-only, seed 0, n 16) that
# hessian2026.exact_spectrum now sees. The mistake is the tool's own mutation, applied to a private copy of the
# module (the working module is untouched); the copy's function is monkeypatched in where the claim (or its
# experiment) calls it. Experiments are read first, so nothing patched reaches the cache; the claim runs uncached
# (``Claim.run``). Control: unpatched, every check passes.


from paper_checks import Budget, get_claim  # noqa: E402
from paper_checks.linear_hessian import experiments as E  # noqa: E402
from sims.linear_hessian import net as N  # noqa: E402
from tests import mutation as M  # noqa: E402
from theory import linear_hessian as T  # noqa: E402

QUICK = Budget("quick")
_CLAIM = "hessian2026.exact_spectrum"


def _failed_checks() -> list[str]:
    """The quantities of the claim's checks whose prediction is rejected now (empty: the claim passes)."""
    return [c.quantity for c in get_claim(_CLAIM).run(QUICK).checks if not c.prediction().accepted]


# (function of theory.linear_hessian the claim calls, the site, the start of the check that must fail)
_THEORY = {
    "balanced_factor_with_the_output_rotation_twice": (
        "balanced_identity_residuals", ("W = [_rot(th[l]) * root * _rot(th[l - 1]).T", "l - 1", "drop-term"),
        "non-zero residuals"),
    "kappa_closed_without_the_second_square": (
        "kappa_closed", ("return (si**2 - sj**2) / (si **", "si**2 - sj**2", "drop-term"),
        "every eigenvalue / lambda_max with kappa_ij (i != j) in closed form"),
    "geometric_identity_equal_case_linear_in_a": (
        "kappa_geometric_identity", ("equal_diff = sp.simplify(equal - L_SYM * a ** (L_SYM - 1))", "a ** (L_SYM - 1)",
                                     "operator"), "non-zero residuals"),
    "diagonal_term_exponent_divided": (
        "spectrum_terms", ("value = sp.sympify(depth) * s[i] ** (2 * (depth - 1)", "2 * (depth - 1)", "operator",
                           "Mult -> Div"),
        "every eigenvalue / lambda_max"),
    "diagonal_and_cross_terms_swapped": (
        "spectrum_terms", ("value = sp.sympify(depth) * s[i] ** (2 * (depth - 1)", "i == j", "comparison"),
        "every eigenvalue / lambda_max"),
}


@pytest.mark.parametrize("name", sorted(_THEORY))
def test_a_symbolic_survivor_now_fails_the_exact_spectrum_claim(monkeypatch, name):
    """Survivors in the sympy derivation, which no claim evaluated before: the balanced factorization built with
    :math:`R(\\theta_l)` on both sides (its identities no longer hold), the closed-form :math:`\\kappa_{ij}` without
    :math:`s_j^2`, the equal-case geometric sum compared with :math:`L\\,a(L-1)`, and the diagonal term
    :math:`L s_i^{2(L-1)/L}` with :math:`2/(L-1)` in the exponent or put on the cross terms instead. The claim now
    evaluates the derivation's own terms against autodiff and counts the lemmas' residuals."""
    function, site, check = _THEORY[name]
    E.minima(QUICK), E.plain_minima(QUICK)
    assert _failed_checks() == []
    monkeypatch.setattr(T, function, getattr(M.mutant_module(T, *site), function))
    failed = _failed_checks()
    assert failed and all(q.startswith(check) for q in failed), failed


# the plain simulator's constructors (the experiment plain_minima calls them through the package namespace)
_SIMS = {
    "whitened_inputs_divided_by_the_scale": (
        "_whitened_data", ("X = jnp.sqrt(n * alpha) * _orthonormal_columns(k_x, n, d0).T",
                                            "n * alpha", "operator")),
    "depth_two_taken_as_depth_one": (
        "_balanced_minimum", ("    if L == 1:", "1", "constant")),
    "factor_list_one_layer_too_long": (
        "_balanced_minimum",
        ("return flatten([frames[l] @ (root[:, None] * frames[l - 1].T) for l in range(1, L + 1)])", "1)])",
         "constant")),
}


@pytest.mark.parametrize("name", sorted(_SIMS))
def test_a_plain_constructor_survivor_now_fails_the_exact_spectrum_claim(monkeypatch, name):
    """Survivors in the plain (unframed) constructors, which no claim ran before: whitened inputs of scale
    :math:`1/\\alpha` instead of :math:`\\alpha`, the depth-one shortcut taken at depth two (the minimum is returned as
    the product matrix), and one factor too many in the balanced factorization. The claim now rebuilds two of its
    random nets with these constructors (experiment ``plain_minima``) and compares their Gauss-Newton spectra with
    the closed form. The experiment is recomputed with the mistake through its uncached function (a broken
    constructor may also refuse or crash: that is a kill too, as in the mutation tool) and handed to the claim."""
    import paper_checks.linear_hessian.spectrum as claims
    private, site = _SIMS[name]
    E.minima(QUICK), E.plain_minima(QUICK)
    assert _failed_checks() == []
    mutant = M.mutant_module(N, *site)
    monkeypatch.setattr(N, private, getattr(mutant, private))
    try:
        data = E.plain_minima.fn(QUICK)
    except (ValueError, IndexError, TypeError):
        return
    monkeypatch.setattr(claims.E, "plain_minima", lambda budget: data)
    try:
        failed = _failed_checks()
    except (ValueError, IndexError, TypeError):
        return
    assert failed and all(q.startswith("top min(d_L d_0, P) eigenvalues") for q in failed), failed
