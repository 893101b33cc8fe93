"""Contract rows for the public simulator of :mod:`sims.mup_transfer` (run by tests/test_contract.py)."""
import jax
import numpy as np

import sims.mup_transfer as sm
from tests._contract_table import Sim

_RNG = np.random.default_rng(0)
_X = _RNG.standard_normal((4, 6))
_Y = _X.T @ _RNG.standard_normal(4) / 2.0


def _one_step(key=None, X=_X, y=_Y, n=8, parametrization="mup", n_seeds=3, method="reduced"):
    key = jax.random.key(0) if key is None else key
    return sm.one_step(key, X, y, n, parametrization=parametrization, n_seeds=n_seeds, method=method)


SIMULATORS = [
    Sim("mup_transfer.one_step", _one_step, outputs=lambda o: [o["coef"], o["f0"]],
        bad=[({"n": 0}, "n"), ({"X": np.full((4, 6), np.nan)}, "X"), ({"y": np.zeros(5)}, "y"),
             ({"parametrization": "xp"}, "parametrization"), ({"n_seeds": 0}, "n_seeds"), ({"method": "x"}, "method"),
             ({"n": 5}, "n"), ({"key": 3}, "key")],
        skip={"vmap": "the seeds are the only batch axis and each is drawn from its own split key inside the call",
              "diverge": "one GD step of a polynomial map: the coefficients are finite at every width, nothing "
                           "can diverge (the loss at a rate is evaluated by the caller)"},
        vary={"X": _X * 0.5, "y": _Y + 1.0}),
]
