"""The shared argument checks of theory.validate: ranges that NumPy or XLA would otherwise break on silently."""
from __future__ import annotations

import numpy as np
import pytest

from theory import validate as V


def test_integer_refuses_values_beyond_int64():
    assert V.integer("n", 2**63 - 1) == 2**63 - 1
    with pytest.raises(ValueError, match=r"n: .*int64.*9223372036854775808"):
        V.integer("n", 2**63)
    with pytest.raises(ValueError, match=r"seed: .*int64"):
        V.integer("seed", -(2**63) - 1)
    # a caller's own bound cannot widen the int64 range
    with pytest.raises(ValueError, match=r"T: .*int64"):
        V.integer("T", 2**64, high=2**70)


@pytest.mark.parametrize("bad, match", [
    (np.array([2**63], dtype=np.uint64), "fit int32"),   # astype would wrap it to a valid-looking index
    (np.array([1.5, 2.0]), "whole number"),              # astype would truncate it to 1
    (np.array([np.nan]), "finite integer"),
    (np.array([2.0**31]), "fit int32"),
])
def test_array_with_an_integer_dtype_refuses_what_the_cast_would_change(bad, match):
    with pytest.raises(ValueError, match=rf"rows: .*{match}"):
        V.array("rows", bad, dtype=np.int32)
    np.testing.assert_array_equal(V.array("rows", np.array([0.0, 3.0]), dtype=np.int32), [0, 3])


def test_integers_wants_an_integer_dtype_in_the_int64_range():
    np.testing.assert_array_equal(V.integers("counts", [3, 4], low=1), [3, 4])
    with pytest.raises(TypeError, match="counts: expected an array of integers"):
        V.integers("counts", [3.0, 4.0])
    with pytest.raises(ValueError, match="counts: .*int64"):
        V.integers("counts", np.array([2**63], dtype=np.uint64))
    with pytest.raises(ValueError, match="counts: every value must be >= 1"):
        V.integers("counts", [3, 0], low=1)


def test_one_per_row_names_both_arrays():
    """Issue 29: a label vector checked against X blamed y alone when X had lost a row."""
    with pytest.raises(ValueError, match=r"^X, y: expected one entry of y per row of X; X has 7 rows"):
        V.one_per_row("y", np.ones(8), "X", 7)
    assert V.one_per_row("y", np.ones(7), "X", 7).shape == (7,)


# ----------------------------------------------------------------------------- the size guard
def test_the_default_limit_is_8_gib_or_a_quarter_of_memory(monkeypatch):
    monkeypatch.delenv(V.MAX_BYTES_ENV, raising=False)
    assert V.byte_limit() == V.default_max_bytes() <= 8 * 2**30
    monkeypatch.setattr(V, "_physical_memory", lambda: 8 * 2**30)
    assert V.default_max_bytes() == 2 * 2**30
    monkeypatch.setattr(V, "_physical_memory", lambda: None)
    assert V.default_max_bytes() == 8 * 2**30


def test_check_bytes_names_the_sizes_the_estimate_and_the_limit(monkeypatch):
    monkeypatch.delenv(V.MAX_BYTES_ENV, raising=False)
    with pytest.raises(ValueError, match=r"^n=1000, d=4: X would take about 31.2 KiB, above the limit of 1000 B; "
                                         r"pass max_bytes=.*STEPLAB_MAX_BYTES"):
        V.check_bytes({"n": 1000, "d": 4}, 8 * 1000 * 4, what="X", max_bytes=1000)
    V.check_bytes({"n": 1000}, 8000, what="X", max_bytes=8000)          # at the limit: allowed
    V.check_bytes({"n": 10**15}, 8 * 10**15, what="X", max_bytes=float("inf"))
    # a caller without a max_bytes parameter offers only the environment variable
    with pytest.raises(ValueError, match=r"above the limit of 1000 B; set STEPLAB_MAX_BYTES to allow it$"):
        V.check_bytes({"n_agents": 10**6}, 8 * 10**6, what="X", max_bytes=1000, per_call=False)


@pytest.mark.parametrize("text, limit", [("1000", 1000), ("16GiB", 16 * 2**30), ("2 G", 2 * 2**30), ("1e6", 1e6),
                                         ("3k", 3 * 2**10)])
def test_the_environment_sets_the_limit(monkeypatch, text, limit):
    monkeypatch.setenv(V.MAX_BYTES_ENV, text)
    assert V.byte_limit() == limit
    assert V.byte_limit(max_bytes=5) == 5                               # a call's own max_bytes wins


@pytest.mark.parametrize("text", ["lots", "-5", "0", "16 GB extra"])
def test_a_bad_environment_value_is_named(monkeypatch, text):
    monkeypatch.setenv(V.MAX_BYTES_ENV, text)
    with pytest.raises(ValueError, match=r"STEPLAB_MAX_BYTES: expected a positive number of bytes"):
        V.byte_limit()


def test_the_issue_offenders_are_refused_naming_their_sizes(monkeypatch):
    """Issue 29: mlp_data(n=1e11) returned and the process aborted later; sgd_paths at 1e7 paths x 1e4 steps and
    ms_threshold at d = 200 grew past 5 GiB; schedule(T=2**63) returned an empty array."""
    import jax

    import sims.eos as eos
    import sims.sgd_stability as sgd
    from theory import noisy_quadratic as nq
    from theory import sgd_stability as tsgd

    monkeypatch.delenv(V.MAX_BYTES_ENV, raising=False)
    with pytest.raises(ValueError, match=r"^n=100000000000, d=3: .*above the limit"):
        eos.mlp_data(jax.random.key(0), 10**11, 3)
    h = np.stack([np.eye(2), 2 * np.eye(2)])
    with pytest.raises(ValueError, match=r"^n_paths=10000000, n_steps=10000, .*above the limit"):
        sgd.sgd_paths(jax.random.key(0), h, 1, [0.1], np.ones(2), n_steps=10_000, n_paths=10_000_000)
    x = np.random.default_rng(0).standard_normal((3, 200))
    with pytest.raises(ValueError, match=r"^hessians \(d = 200\): .*above the limit"):
        tsgd.ms_threshold(np.einsum("ni,nj->nij", x, x), 2)
    with pytest.raises(ValueError, match=r"^T: expected an integer in the int64 range"):
        nq.schedule("wsd", 2**63, 0.1)
    with pytest.raises(ValueError, match=r"^T=1000000000000: .*above the limit"):
        nq.schedule("wsd", 10**12, 0.1)


def test_max_bytes_and_the_environment_let_a_call_through(monkeypatch):
    from theory import noisy_quadratic as nq

    monkeypatch.setenv(V.MAX_BYTES_ENV, "1000")
    with pytest.raises(ValueError, match=r"^T=1000: .*above the limit of 1000 B"):
        nq.schedule("wsd", 1000, 0.1)
    assert nq.schedule("wsd", 1000, 0.1, max_bytes=10**6).shape == (1000,)
    monkeypatch.setenv(V.MAX_BYTES_ENV, "1MiB")
    assert nq.schedule("wsd", 1000, 0.1).shape == (1000,)


def test_renamed_keyword_passes_the_old_name_on_with_a_warning_naming_both():
    import inspect
    import warnings

    @V.renamed_keyword("h", "eta")
    def step(x, eta=1.0):
        return x - eta

    assert list(inspect.signature(step).parameters) == ["x", "eta"]  # the new name is the one shown
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the new keyword and positional calls warn about nothing
        new, positional = step(3.0, eta=0.5), step(3.0, 0.5)
    with pytest.warns(DeprecationWarning, match=r"step\(\): the keyword 'h' is deprecated.*use 'eta'"):
        old = step(3.0, h=0.5)
    assert old == new == positional == 2.5
    with pytest.raises(TypeError, match="h, eta"):
        step(3.0, h=0.5, eta=0.5)
    with pytest.raises(TypeError, match="new"):
        V.renamed_keyword("h", "not a name")


def test_layer_widths_takes_a_sequence_of_positive_integers_and_names_the_layout():
    assert V.layer_widths("widths", [64, np.int64(8), 1], at_least=2, form="(d, h, ..., 1)") == (64, 8, 1)
    with pytest.raises(TypeError, match=r"widths: expected a sequence of layer widths \(d, h, \.\.\., 1\), got '64'"):
        V.layer_widths("widths", "64", at_least=2, form="(d, h, ..., 1)")
    with pytest.raises(TypeError, match="widths: expected a sequence"):
        V.layer_widths("widths", 64, at_least=2, form="(d, h, ..., 1)")
    with pytest.raises(ValueError, match=r"widths\[1\]"):
        V.layer_widths("widths", (64, 0, 1), at_least=2, form="(d, h, ..., 1)")
    with pytest.raises(ValueError, match=r"widths: expected \(d, n_1, k\), at least 3 widths, got \(64, 10\)"):
        V.layer_widths("widths", (64, 10), at_least=3, form="(d, n_1, k)")
