"""Contract rows for the public simulators of :mod:`sims.muon` (run by tests/test_contract.py)."""
import jax
import numpy as np

import sims.muon as sim
from tests._contract_table import Sim

ETA = np.array([0.02, 0.05, 0.1])
_RNG = np.random.default_rng(7)
Y = _RNG.normal(size=(5, 3))
W0 = 0.3 * _RNG.normal(size=(5, 3))
S = np.array([2.0, 1.0, 0.5])
A1 = 0.01 * _RNG.normal(size=(3, 3))
A2 = 0.01 * _RNG.normal(size=(3, 3))


def _train(eta=ETA, lam=0.5, target=Y, w0=W0, method="polar", ns_steps=5, momentum=0.9, noise=0.3,
           key=jax.random.key(3), n_steps=20):
    return sim.train(eta, lam, target, w0, method=method, ns_steps=ns_steps, momentum=momentum, noise=noise, key=key,
                     n_steps=n_steps)


def _factorization(eta=ETA, target_sv=S, w1=A1, w2=A2, method="polar", n_steps=20):
    return sim.factorization(eta, target_sv, w1, w2, method=method, n_steps=n_steps)


SIMULATORS = [
    Sim("muon.train", _train, outputs=lambda o: [o["sv"], o["w"], o["diverged"], o["diverged_step"]],
        grid=("eta", ETA, 0),
        bad=[({"eta": [0.0]}, "eta"), ({"eta": [np.nan]}, "eta"), ({"lam": -1.0}, "lam"), ({"target": np.ones(3)}, "target"),
             ({"w0": np.ones((3, 5))}, "w0"), ({"method": "adam"}, "method"), ({"momentum": 1.0}, "momentum"),
             ({"noise": -0.1}, "noise"), ({"key": 0}, "key"), ({"n_steps": 0}, "n_steps"), ({"ns_steps": -1}, "ns_steps")],
        diverging=({"eta": np.array([4.0, 5.0]), "lam": 1.0, "noise": 0.0, "momentum": 0.0, "n_steps": 400},
                   lambda o: o["diverged"] & (o["diverged_step"] > 0)),
        vary={"eta": ETA * 0.9, "lam": 0.7, "target": Y + 0.1, "w0": W0 * 0.5, "key": jax.random.key(4)}),
    Sim("muon.factorization", _factorization, outputs=lambda o: [o["modes"], o["w1"], o["w2"], o["diverged"]],
        grid=("eta", ETA, 0),
        bad=[({"eta": [0.0]}, "eta"), ({"target_sv": np.array([1.0, -1.0, 0.5])}, "target_sv"),
             ({"w1": np.ones((3, 2))}, "w1"), ({"w2": np.ones((2, 3))}, "w2"), ({"method": "adam"}, "method"),
             ({"n_steps": 0}, "n_steps")],
        diverging=({"eta": np.array([5.0, 10.0]), "method": "gd", "n_steps": 60},
                   lambda o: o["diverged"] & (o["diverged_step"] > 0)),
        vary={"eta": ETA * 0.9, "target_sv": S * 1.1, "w1": A1 * 2, "w2": A2 * 2}),
]
