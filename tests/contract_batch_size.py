"""Contract rows for the public simulator of :mod:`sims.batch_size` (run by tests/test_contract.py)."""
import jax
import numpy as np

import sims.batch_size as sim
from tests._contract_table import Sim

_H = np.array([[1.0, 0.2, 0.0], [0.2, 0.5, 0.1], [0.0, 0.1, 0.2]])
_S = np.diag([1.0, 2.0, 0.5])
_B = np.array([1, 3, 5])
_THETA = np.array([1.0, -1.0, 0.5])


def _one_step(key=None, theta=_THETA, H=_H, Sigma=_S, batch_size=_B, n_draws=8):
    return sim.one_step(jax.random.key(0) if key is None else key, theta, H, Sigma, batch_size, n_draws=n_draws)


_B2 = np.array([0.9, 0.5, 0.99])
_BE = np.array([1.0, 4.0, 16.0])


def _ema(key=None, beta2=_B2, batch_size=_BE, sigma=1.0, n_steps=6, n_chains=4, paired=True):
    return sim.second_moment_ema(jax.random.key(0) if key is None else key, beta2, batch_size, sigma=sigma,
                                 n_steps=n_steps, n_chains=n_chains, paired=paired)


SIMULATORS = [
    Sim("batch_size.one_step", _one_step, outputs=lambda o: [o["d1"], o["d2"], o["batch_size"]],
        grid=("batch_size", _B, 0),
        bad=[({"batch_size": np.array([0, 1])}, "batch_size"), ({"batch_size": np.array([1.5, 2.0])}, "batch_size"),
             ({"n_draws": 1}, "n_draws"), ({"H": -_H}, "H"), ({"Sigma": np.zeros((3, 3))}, "Sigma"),
             ({"theta": np.array([np.nan, 0.0, 0.0])}, "theta")],
        skip={"diverge": "one step from a given point: nothing is iterated, so nothing can diverge"},
        vary={"theta": np.array([0.3, 0.2, -1.0]), "H": 2 * _H, "Sigma": 0.5 * _S, "key": jax.random.key(7)}),
    Sim("batch_size.second_moment_ema", _ema, outputs=lambda o: [o["mean"], o["se"]],
        bad=[({"beta2": np.array([0.9, 1.0, 0.5])}, "beta2"), ({"batch_size": np.array([1.0, 0.0, 2.0])}, "batch_size"),
             ({"sigma": 0.0}, "sigma"), ({"n_chains": 1}, "n_chains"), ({"n_steps": 0}, "n_steps"), ({"paired": "yes"}, "paired")],
        grid=("beta2", _B2, 0), skip={"diverge": "an EMA with 0 < beta2 < 1 of finite squares cannot diverge"},
        vary={"beta2": 0.8 * _B2, "batch_size": 2 * _BE, "sigma": 2.0, "key": jax.random.key(5)}),
]
