"""Contract rows for the public simulator of :mod:`sims.adaptive_eos` (run by tests/test_contract.py)."""
import numpy as np

import sims.adaptive_eos as sim
from tests._contract_table import Sim

_H = np.array([[2.0, 0.3], [0.3, 1.0]])
_X0 = np.array([0.1, -0.2])


def _adam(H=_H, x0=_X0, eta=(0.01, 0.02, 0.005), beta1=0.9, beta2=0.99, n_steps=12, precond=None):
    return sim.adam_quadratic(H, x0, np.asarray(eta), beta1, beta2, n_steps=n_steps, n_blocks=2, block=3,
                              precond=precond)


SIMULATORS = [
    Sim("adaptive_eos.adam_quadratic", _adam,
        outputs=lambda o: [o["x"], o["sharp_mean"], o["loss_mean"], o["log_growth"], o["diverged"], o["underflowed"]],
        grid=("eta", np.array([0.01, 0.02, 0.005]), 0),
        bad=[({"eta": [0.0, 0.1, 0.1]}, "eta"), ({"beta1": 1.0}, "beta1"), ({"beta2": 0.0}, "beta2"),
             ({"H": -_H}, "H"), ({"x0": np.zeros(2)}, "x0"), ({"n_steps": 3}, "n_blocks"),
             ({"precond": np.array([1.0, -1.0])}, "precond")],
        diverging=({"precond": np.array([1e-6, 1e-6]), "beta1": 0.0, "n_steps": 60, "eta": (1.0, 1.0, 1.0)},
                   lambda o: o["diverged"] & (o["diverged_step"] > 0)),
        vary={"eta": (0.02, 0.01, 0.03), "x0": _X0 * 1.5, "beta2": 0.95}),
]
