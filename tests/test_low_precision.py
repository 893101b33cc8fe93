r"""Unit tests of the low_precision topic, each against an independent computation: the bit-level bf16 rounding
against ``ml_dtypes`` and the integer-significand reference, stochastic rounding's up-probability against a
binomial count, the sympy forms against direct evaluation, the JAX runs against the NumPy lattice chain and a
float32 loop, divergence as data."""
import jax
import ml_dtypes
import numpy as np
import pytest
import sympy as sp

import sims.low_precision as sim
import theory.low_precision as th

pytestmark = pytest.mark.xdist_group("low_precision")


def _values(n, seed):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(n) * 10.0 ** rng.integers(-30, 30, n)).astype(np.float32)
    bits = x.view(np.uint32)
    ties = (bits[: n // 4] & np.uint32(0xFFFF0000)) | np.uint32(0x8000)  # exact bf16 midpoints: ties to even
    near = (bits[n // 4: n // 2] & np.uint32(0xFFFF0000)) | np.uint32(0x7FFF)  # one float32 ulp below a midpoint
    return np.concatenate([ties.view(np.float32), near.view(np.float32), x[n // 2:],
                           np.float32([1.0, -1.0, 255 / 128, 3.3895314e38])])


def test_round_to_nearest_equals_ml_dtypes_and_the_integer_reference():
    x = _values(40_000, 0)
    got = np.asarray(sim.round_bf16(x))
    np.testing.assert_array_equal(got, x.astype(ml_dtypes.bfloat16).astype(np.float32))
    finite = np.isfinite(got)  # the largest float32 rounds to inf in bf16; the reference has no overflow
    np.testing.assert_array_equal(got[finite], th.round_nearest(x[finite].astype(np.float64)).astype(np.float32))


def test_stochastic_rounding_lands_on_a_neighbour_with_the_fractional_probability():
    lo = np.float32(1.0) + np.float32(2.0**-7) * 5  # a bf16 value; fractions k / 2^16 above it
    frac = np.array([1, 0x4000, 0x8000, 0xC000, 0xFFFF]) / 2.0**16
    x = (lo + frac * 2.0**-7).astype(np.float32)
    reps = 20_000
    out = np.asarray(sim.round_bf16(np.repeat(x, reps), mode="stochastic", key=jax.random.key(5))).reshape(5, reps)
    assert np.all((out == lo) | (out == lo + np.float32(2.0**-7)))
    up = (out > lo).mean(axis=1)
    # binomial: 5 standard errors (plus 1/reps for the smallest fraction, whose count is 0 or 1)
    np.testing.assert_array_less(np.abs(up - frac), 5 * np.sqrt(frac * (1 - frac) / reps) + 1.0 / reps)


def test_the_two_offsets_of_one_word_are_independent():
    """Stochastic rounding takes two 16-bit offsets from each 32-bit word (entry i and entry i + n/2 share one):
    at fraction 1/2 each rounds up with probability 1/2, and the pairs sharing a word must be independent: the
    four joint frequencies 1/4 each (multinomial, 5 standard errors). A mistake that reused one half for both
    offsets makes the pairs equal (frequencies 1/2, 0, 0, 1/2)."""
    lo = np.float32(1.0) + np.float32(2.0**-7) * 5
    n = 40_000
    x = np.full(n, lo + np.float32(2.0**-8), np.float32)  # exactly half a bf16 cell above lo
    up = np.asarray(sim.round_bf16(x, mode="stochastic", key=jax.random.key(8))) > lo
    a, b = up[: n // 2], up[n // 2:]
    joint = np.array([np.mean(a & b), np.mean(a & ~b), np.mean(~a & b), np.mean(~a & ~b)])
    np.testing.assert_array_less(np.abs(joint - 0.25), 5 * np.sqrt(0.25 * 0.75 / (n // 2)))


def test_sympy_forms_against_direct_evaluation():
    assert sp.simplify(th.freeze_error_sym() - th.ULP / (2 * th.ETA_A)) == 0
    law = th.sr_stationary_sym()
    assert law["mean"] == 0 and law["mean_sq_uniform"] == sp.Rational(1, 6)
    # the two-state chain's stationary vector by linear algebra at a few (eta a, f)
    for eta_a, f in [(0.1, 0.3), (0.7, 0.9), (0.02, 0.5)]:
        p = np.array([[1 - eta_a * f, eta_a * f], [eta_a * (1 - f), 1 - eta_a * (1 - f)]])
        vals, vecs = np.linalg.eig(p.T)
        pi = np.real(vecs[:, np.argmin(np.abs(vals - 1))])
        pi = pi / pi.sum()
        assert pi[1] == pytest.approx(float(law["p_upper"].subs(th.F, f)), rel=1e-12)
        assert pi[0] * f**2 + pi[1] * (1 - f) ** 2 == pytest.approx(th.sr_second_moment(1.0 + f * 2**-7), rel=1e-9)
    # the reference freeze step: the first t of the exact path with eta a e_t < ulp / 2, by a loop
    for e0, eta_a in [(0.7, 0.01), (0.9, 0.3), (0.5, 0.1)]:
        t, e = 0, e0
        while eta_a * e >= 2**-8:
            e, t = e * (1 - eta_a), t + 1
        assert th.reference_freeze_step(e0, eta_a, 2**-7) == t
    r = np.array([0.2, 1.0, 1.7])
    s = np.linspace(0, 1, 200_001)
    for ri, si in zip(r, th.cosine_freeze_fraction(r)):
        below = (1 + np.cos(np.pi * s)) / 2 < ri / 2
        assert si == pytest.approx(s[np.argmax(below)], abs=1e-5)


def test_ulp_and_band_by_hand():
    np.testing.assert_array_equal(th.ulp(np.array([1.0, 1.99, 2.0, 0.75, -3.0])),
                                  [2.0**-7, 2.0**-7, 2.0**-6, 2.0**-8, 2.0**-6])
    lower, upper = th.rn_band(0.1, 2.0**-7)
    assert upper == pytest.approx(5 * 2.0**-7, rel=1e-15) and upper - lower == pytest.approx(2.0**-7, rel=1e-15)


def test_rn_runs_equal_the_lattice_chain_and_float32_runs_a_numpy_loop():
    ws = np.random.default_rng(1).uniform(1.0, 1.5, 300)
    etas = np.array([0.013, 0.2, 0.8])
    out = sim.gd(ws, etas, w0=255 / 128, n_steps=200)
    for k, eta in enumerate(out["eta_a"]):
        ref = th.rn_lattice_run(out["w_star"], 255 / 128, eta, 200)
        np.testing.assert_array_equal(out["w"][k] - out["w_star"], ref["error"])
        np.testing.assert_array_equal(out["last_move"][k], ref["freeze_step"])
    f32 = sim.gd(ws[:20], 0.3, w0=255 / 128, n_steps=50, storage="float32")
    w, w_star, eta = np.full(20, 255 / 128, np.float32), ws[:20].astype(np.float32), np.float32(0.3)
    for _ in range(50):
        w = w - eta * (w - w_star)
    np.testing.assert_array_equal(f32["w"][0], w.astype(np.float64))


def test_divergence_is_flagged_at_its_step():
    out = sim.gd(np.array([1.25, 1.5]), np.array([0.5, 3.0]), w0=255 / 128, n_steps=200, storage="float32")
    assert not out["diverged"][0].any() and out["diverged"][1].all()
    # eta a = 3: e_{t+1} = -2 e_t in float32 (exact: powers of two times e_0), so |w_t| first exceeds 1e30 at the t
    # with |e_0| 2^t > 1e30 + ...; found by the same float32 loop
    w, w_star = np.float32(255 / 128) * np.ones(2, np.float32), np.float32([1.25, 1.5])
    first = np.full(2, -1)
    with np.errstate(over="ignore", invalid="ignore"):  # the diverging run reaches inf, then inf - inf
        for t in range(1, 201):
            w = w - np.float32(3.0) * (w - w_star)
            first = np.where((first < 0) & ~(np.abs(w) <= 1e30), t, first)
    np.testing.assert_array_equal(out["diverged_step"][1], first)


def _adamw_numpy(g, peak, w0, T, lam, dt, eps=1e-8, b1=0.9, b2=0.999):
    """AdamW with cosine decay on a linear loss in NumPy at dtype ``dt``; bf16 storage by the exact-difference RN."""
    g = g.astype(dt)
    b1, b2, eps, lam, peak = (dt(v) for v in (b1, b2, eps, lam, peak))
    w = np.full(g.shape, w0, dt)
    m, v = np.zeros_like(g), np.zeros_like(g)
    last = np.zeros(g.shape, int)
    for t in range(1, T + 1):
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        u = (m / (1 - b1 ** dt(t))) / (np.sqrt(v / (1 - b2 ** dt(t))) + eps)
        delta = (peak * (1 + np.cos(dt(np.pi) * (dt(t) - 1) / dt(T))) / 2) * (u + lam * w)
        new = w - delta if dt is np.float64 else th.round_nearest(w.astype(float) - delta.astype(float)).astype(dt)
        last = np.where(new != w, t, last)
        w = new
    return w.astype(float), last


def test_adamw_against_a_numpy_loop():
    g = np.array([1e-7, -0.3, 2e3])
    ref = sim.adamw(g, 2.0**-7 / 0.8, w0=1.9921875, n_steps=60, storage="float64", weight_decay=0.05, record=True)
    w, _ = _adamw_numpy(g, 2.0**-7 / 0.8, 1.9921875, 60, 0.05, np.float64)
    np.testing.assert_allclose(ref["w"][0], w, rtol=1e-14)
    assert ref["w_before"].shape == (1, 60, 3) and ref["w_before"][0, 0, 0] == 1.9921875
    # the recorded path: each point is the previous point minus its update
    np.testing.assert_array_equal(ref["w_before"][0, 1:], ref["w_before"][0, :-1] - ref["delta"][0, :-1])
    bf = sim.adamw(g, 2.0**-7 / 0.8, w0=1.9921875, n_steps=60, weight_decay=0.05)
    w32, last32 = _adamw_numpy(g, 2.0**-7 / 0.8, 1.9921875, 60, 0.05, np.float32)
    np.testing.assert_array_equal(bf["w"][0], w32)
    np.testing.assert_array_equal(bf["last_move"][0], last32)


def test_half_ulp_last_move_by_hand():
    w = np.array([[1.5], [1.5], [1.5], [1.5]])
    d = np.array([[2.0**-8], [2.0**-9], [2.0**-8], [2.0**-10]])  # half an ulp of 1.5 is 2^-8: moves at t = 1, 3
    assert th.half_ulp_last_move(w, d).tolist() == [3]


def test_frozen_error_across_binades_equals_the_float64_chain():
    """The closed form against :func:`theory.low_precision.rn_chain` (round_nearest on the whole grid), from starts
    one and two binades above w*'s, at eta a up to 0.7."""
    ws = np.random.default_rng(3).uniform(1.0, 2.0, 1500).astype(np.float32).astype(np.float64)
    for w0 in (255 / 64, 255 / 32):
        for eta_a in (0.01, 0.1, 0.7):
            chain = th.rn_chain(ws, w0, eta_a, 1200)
            np.testing.assert_array_equal(th.rn_frozen_error_across_binades(ws, w0, eta_a), chain["error"])
    # from inside w*'s binade, above the band, the one-binade form
    inside = ws < 255 / 128 - 2.0**-7 / 0.2
    np.testing.assert_array_equal(th.rn_frozen_error_across_binades(ws[inside], 255 / 128, 0.1),
                                  th.rn_frozen_error(ws[inside], 0.1))


def test_double_rounding_by_hand():
    r"""One step from :math:`w = 1 + 2^{-7}` with :math:`\eta a = 1/4` and :math:`w^* = 1 - 2^{-7} + 2^{-23}`: the exact
    target is :math:`1 + 2^{-8} + 2^{-25}`, a quarter float32 ulp above the bf16 midpoint :math:`1 + 2^{-8}`. Rounded
    once it stays at :math:`1 + 2^{-7}`; through float32 it lands on the midpoint and ties to even, 1."""
    w_star, w0 = np.array([1 - 2.0**-7 + 2.0**-23]), 1 + 2.0**-7
    once = sim.gd(w_star, 0.25, w0=w0, n_steps=1)["w"][0, 0]
    twice = sim.gd(w_star, 0.25, w0=w0, n_steps=1, storage="bf16_rn_f32")["w"][0, 0]
    assert once == th.round_nearest(w0 - 0.25 * (w0 - w_star[0])) == 1 + 2.0**-7
    assert twice == th.cast_chain(w_star, w0, 0.25, 1)["w"][0, 0] == 1.0


def test_kahan_runs_against_a_numpy_loop():
    """Kahan-compensated bf16 steps in NumPy (float32 arithmetic, ml_dtypes' cast after every operation)."""
    def rn(x):
        return np.asarray(x, np.float32).astype(ml_dtypes.bfloat16).astype(np.float32)

    ws = np.random.default_rng(4).uniform(1.0, 1.5, 50).astype(np.float32)
    out = sim.kahan_gd(ws, 0.2, w0=255 / 128, n_steps=300, average_from=100)
    k = np.float32(0.2)
    w, c, acc = np.full(50, np.float32(255 / 128)), np.zeros(50, np.float32), np.zeros(50)
    for t in range(1, 301):
        y = rn(-(k * (w - ws)) - c)
        new = rn(w + y)
        c = rn(rn(new - w) - y)
        w = new
        if t == 100:
            z_mid = w.astype(float) - c
        if t > 100:
            acc += w.astype(float) - ws
    np.testing.assert_array_equal(out["w"][0], w.astype(float))
    np.testing.assert_array_equal(out["c"][0], c.astype(float))
    np.testing.assert_array_equal(out["z_mid"][0], z_mid)
    np.testing.assert_allclose(out["mean_error"][0], acc / 200, rtol=1e-12, atol=1e-15)


def test_noisy_lattice_law_limits():
    r"""The lattice law against two independent limits: with almost no noise (s = 1e-4 ulp) the chain is the
    deterministic RN chain, frozen at the band point; with noise of many ulps per step the rounding is a small
    perturbation and the window mean approaches exact SGD's stationary eta a c^2/(2 - eta a) (relative gap below 1 %
    at s = 8 ulps: RN adds a variance of about 1/12 ulp^2 per step, ~0.13 ulp^2 in all, to a stationary 100 ulp^2)."""
    q, w_star = 2.0**-7, float(np.float32(1.25 + 0.3 * 2.0**-7))
    frac = w_star / q - np.floor(w_star / q)
    quiet = th.rn_sgd_window_mean_sq(0.1, 1e-3, frac, 40, 300, 10)["mean_sq"]
    assert quiet == pytest.approx((th.rn_frozen_error(np.array([w_star]), 0.1)[0] / q) ** 2, rel=1e-9)
    eta_a, c = 0.4, 20.0
    loud = th.rn_sgd_window_mean_sq(eta_a, c, frac, 0, 200, 100)["mean_sq"]
    assert loud == pytest.approx(eta_a * c**2 / (2 - eta_a), rel=1e-2)


def test_noisy_gd_without_noise_is_the_rn_chain():
    ws = np.random.default_rng(5).uniform(1.0, 1.5, 40)
    out = sim.noisy_gd(ws, 0.1, 0.0, w0=255 / 128, n_steps=120, window=1, key=jax.random.key(0))
    np.testing.assert_array_equal(out["w"][0], sim.gd(ws, 0.1, w0=255 / 128, n_steps=120)["w"][0])
    np.testing.assert_allclose(out["mean_sq"][0], (out["w"][0] - ws.astype(np.float32)) ** 2, rtol=1e-12)


def _replayed_words(key, etas32, n, n_steps):
    """The simulator's stochastic-rounding offsets as its module docstring states them: the start's (one key, shared
    by every step size), then per step size (the key folded with its float32 bits) one fresh key per step by
    fold_in; each key's ceil(n/2) words of sims.rng.words split into their low halves, then their high halves."""
    import jax.numpy as jnp

    from sims.rng import words

    def halves(k):
        w = np.asarray(words(k, ((n + 1) // 2,)))
        return np.concatenate([w & 0xFFFF, w >> 16])[:n]

    out = np.empty((n_steps + 1, etas32.size, n), np.uint32)
    out[0] = halves(jax.random.fold_in(key, 0))
    for i, e in enumerate(etas32):
        k = jax.random.fold_in(key, np.uint32(e.view(np.uint32)))
        out[1:, i] = [halves(jax.random.fold_in(k, t)) for t in jnp.arange(1, n_steps + 1, dtype=jnp.int64)]
    return out


def test_numpy_reference_is_bit_identical_to_the_simulator():
    """sims.reference.low_precision.gd_numpy against sims.low_precision.gd, bit for bit (assert_array_equal, no
    tolerance: both sides do the same float32 and uint32 arithmetic, products formed exactly in float64): RN and
    float32 storage as they are, stochastic rounding with the simulator's own words replayed. The grid holds a
    diverging step size (5: the NaN/inf path and the divergence step) and the double-rounding coordinate of
    test_double_rounding_by_hand (a float32 difference on a bf16 midpoint with a nonzero remainder)."""
    from sims.reference.low_precision import gd_numpy

    ws = np.r_[np.random.default_rng(6).uniform(1.0, 1.5, 60), 1 - 2.0**-7 + 2.0**-23]
    w0 = np.r_[np.full(60, 255 / 128), 1 + 2.0**-7]
    etas = np.array([0.013, 0.25, 0.8, 5.0])
    kw = {"w0": w0, "n_steps": 80, "snapshots": (1, 7)}
    for storage in ("bf16_rn", "float32"):
        out, ref = sim.gd(ws, etas, storage=storage, **kw), gd_numpy(ws, etas, storage=storage, **kw)
        for k in out:
            np.testing.assert_array_equal(ref[k], out[k], err_msg=f"{storage}: {k}")
    assert out["diverged"][3].all() and not out["diverged"][:3].any()
    key = jax.random.key(11)
    out = sim.gd(ws, etas, storage="bf16_sr", key=key, **kw)
    ref = gd_numpy(ws, etas, storage="bf16_sr", offsets=_replayed_words(key, out["eta_a"].astype(np.float32),
                                                                         ws.size, 80), **kw)
    for k in out:
        np.testing.assert_array_equal(ref[k], out[k], err_msg=f"bf16_sr: {k}")
