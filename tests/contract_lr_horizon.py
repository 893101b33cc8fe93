"""Contract rows for the public simulator of :mod:`sims.lr_horizon` (run by tests/test_contract.py).

A few steps on a short spectrum (d = 100: 16 single modes and 19 binned ones); ``tests/test_lr_horizon.py`` calls the
same shapes, so the topic's worker compiles the kernel once.
"""
import jax
import numpy as np

import sims.lr_horizon as sim
from tests._contract_table import Sim

ETA = np.array([0.05, 0.2, 0.8])


def _runs(key=None, eta=ETA, n_steps=20, beta=2.0, s=0.5, sigma2=0.5, d=100):
    key = jax.random.key(0) if key is None else key
    return sim.constant_step_runs(key, eta, n_steps, beta, s, sigma2, d, n_chains=2)


SIMULATORS = [
    Sim("lr_horizon.constant_step_runs", _runs,
        outputs=lambda o: [o["loss"], o["diverged"], o["diverged_step"]],
        grid=("eta", ETA, 0),
        bad=[({"eta": [0.0]}, "eta"), ({"eta": [np.nan]}, "eta"), ({"beta": 1.0}, "beta"), ({"s": -1.0}, "s"),
             ({"sigma2": -0.1}, "sigma2"), ({"d": 3}, "d"), ({"n_steps": 0}, "n_steps"),
             ({"key": 3}, "key")],
        # eta lambda_1 = 1e3: mode 1 grows ~1e3x per step, past the bound 1e150 within 60 steps
        diverging=({"eta": np.array([1e3, 2e3, 3e3]), "n_steps": 60}, lambda o: o["diverged"]),
        vary={"key": jax.random.key(7), "eta": ETA * 0.5, "sigma2": 0.2, "beta": 2.5, "s": 1.0}),
]
