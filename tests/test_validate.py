"""The shared argument checks of theory._validate: ranges that NumPy or XLA would otherwise break on silently."""
from __future__ import annotations

import numpy as np
import pytest

from theory import _validate as V


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
