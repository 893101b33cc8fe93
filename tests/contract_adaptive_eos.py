"""Contract rows for the public simulator of :mod:`sims.adaptive_eos` (run by tests/test_contract.py)."""
import jax
import numpy as np

import sims.adaptive_eos as sim
from tests._contract_table import Sim

_H = np.array([[2.0, 0.3], [0.3, 1.0]])
_X0 = np.array([0.1, -0.2])


def _adam(H=_H, x0=_X0, eta=(0.01, 0.02, 0.005), beta1=0.9, beta2=0.99, n_steps=12, precond=None):
    return sim.adam_quadratic(H, x0, np.asarray(eta), beta1, beta2, n_steps=n_steps, n_blocks=2, block=3,
                              precond=precond)


_XM = np.random.default_rng(0).normal(size=(6, 2))
_YM = np.sin(_XM[:, 0])


_KEYS = jax.random.split(jax.random.key(0), 3)


def _mlp(keys=_KEYS, eta=0.01, X=_XM, Y=_YM):
    # the shapes and static settings of tests/test_adaptive_eos.py's network test (one compiled program)
    return sim.adam_mlp(keys, eta, 0.9, 0.99, X, Y, hidden=3, n_burn=2, n_meas=2, every=2, lanczos_iter=9)


SIMULATORS = [
    Sim("adaptive_eos.adam_mlp", _mlp, outputs=lambda o: [o["sharp"], o["loss"], o["theta"]],
        grid=("keys", _KEYS, 0),
        bad=[({"eta": 0.0}, "eta"), ({"Y": _YM[:-1]}, "Y"), ({"keys": np.zeros((3, 2), np.uint32)}, "keys")],
        skip={"diverge": "Adam's step is bounded by a multiple of eta per coordinate (eps = 0 normalizes the "
                         "gradient): a run cannot blow up within the steps a row takes"},
        vary={"eta": 0.02, "keys": jax.random.split(jax.random.key(1), 3), "Y": _YM * 0.5}),
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
