"""Contract rows for the public simulators of :mod:`sims.low_precision` (run by tests/test_contract.py)."""
import jax
import numpy as np

import sims.low_precision as sim
from tests._contract_table import Sim

ETA = np.array([0.05, 0.2, 0.5])
WS = np.array([1.1, 1.3, 1.45, 1.2])


def _gd(w_star=WS, eta_a=ETA, w0=255 / 128, n_steps=10, storage="bf16_sr", key=None, snapshots=(5,)):
    return sim.gd(w_star, eta_a, w0=w0, n_steps=n_steps, storage=storage,
                  key=jax.random.key(0) if key is None else key, snapshots=snapshots)


SIMULATORS = [
    Sim("low_precision.gd", _gd,
        outputs=lambda o: [o["w"], o["last_move"], o["snapshots"], o["diverged"], o["diverged_step"]],
        grid=("eta_a", ETA, 0),
        bad=[({"eta_a": [0.0]}, "eta_a"), ({"eta_a": [np.nan]}, "eta_a"), ({"w_star": [[1.0]]}, "w_star"),
             ({"n_steps": 0}, "n_steps"), ({"storage": "fp8"}, "storage"), ({"snapshots": (11,)}, "snapshots"),
             ({"w0": np.ones(3)}, "w0")],
        diverging=({"eta_a": np.array([1e6, 2e6])},
                   lambda o: o["diverged"] & (o["diverged_step"] > 0)),
        vary={"w_star": WS * 1.01, "eta_a": ETA * 0.9, "w0": 1.9, "key": jax.random.key(1)},
        skip={}),
]
