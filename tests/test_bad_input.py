r"""Every public function of theory/ and sims/ rejects bad input with an error naming the parameter.

The table lives in ``tests/bad_input_<topic>.py`` (rows) and ``tests/_bad_input_table.py`` (the row
type, the generated perturbations and the outcome classes). Test ids start with the topic
(``<topic>:<module>.<function>``) so ``-k <topic>`` selects a topic's rows.
"""
from __future__ import annotations

import pytest

import sims  # noqa: F401  (float64)
from tests._bad_input_table import EXEMPT, call, has_parameters, load_rows, public_functions, run_row

ROWS = load_rows()
_BY_FN = {r.fn: r for r in ROWS}


def _params(slow: bool = False):
    marks = [pytest.mark.slow] if slow else []
    return pytest.mark.parametrize("row", [pytest.param(r, id=f"{r.topic}:{r.fn}", marks=marks) for r in ROWS])


def test_every_public_function_has_a_row():
    """A public function with parameters needs a baseline row (or an exemption with a reason)."""
    missing = [name for name, fn in public_functions().items()
               if has_parameters(fn) and name not in _BY_FN and name not in EXEMPT]
    assert not missing, "public functions without a row in tests/bad_input_<topic>.py: " + ", ".join(sorted(missing))
    stale = sorted(set(_BY_FN) - set(public_functions()))
    assert not stale, f"rows for functions that are not public (renamed or removed?): {stale}"
    assert len(_BY_FN) == len(ROWS), "a function has two rows"


@_params(slow=True)
def test_baseline_is_valid(row):
    """The unperturbed call returns normally (otherwise every rejection below would be meaningless).

    Slow tier: the baselines run the simulators (JIT compilation dominates). In the fast tier a broken
    baseline still shows: its error names the broken parameter, not the perturbed one, so the
    perturbations of every other parameter come out "unnamed".
    """
    call(row, {})


@_params()
def test_bad_input_names_the_parameter(row):
    results = run_row(row)
    bad = [r for r in results if r["outcome"] != "named"]
    assert not bad, f"{row.fn}: {len(bad)}/{len(results)} bad calls not rejected with an error naming the parameter:\n" + \
        "\n".join(f"  {r['param']} = {r['value']} ({r['label']}): {r['outcome']} -- {r['detail']}" for r in bad)
