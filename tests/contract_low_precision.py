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

PEAKS = np.array([2.0**-7 / 0.6, 2.0**-7 / 1.2])
GRADS = np.array([1e-3, -2.0, 50.0])


def _adamw(grad=GRADS, eta_max=PEAKS, w0=1.9921875, n_steps=12, storage="bf16_rn", weight_decay=0.05):
    return sim.adamw(grad, eta_max, w0=w0, n_steps=n_steps, storage=storage, weight_decay=weight_decay)


SIMULATORS.append(
    Sim("low_precision.adamw", _adamw, outputs=lambda o: [o["w"], o["last_move"], o["diverged"], o["diverged_step"]],
        grid=("eta_max", PEAKS, 0),
        bad=[({"eta_max": [0.0]}, "eta_max"), ({"grad": [0.0, 1.0, 2.0]}, "grad"), ({"n_steps": 0}, "n_steps"),
             ({"storage": "bf16_sr"}, "storage"), ({"weight_decay": -1.0}, "weight_decay"), ({"w0": [1.0]}, "w0")],
        vary={"grad": GRADS * 1.5, "eta_max": PEAKS * 0.9, "w0": 1.5, "weight_decay": 0.1},
        skip={"diverge": "a cosine-decayed, normalized update is bounded by eta_max (1 + lambda |w|): it cannot "
                         "diverge"}))


def _kahan(w_star=WS, eta_a=ETA, w0=255 / 128, n_steps=12, average_from=6):
    return sim.kahan_gd(w_star, eta_a, w0=w0, n_steps=n_steps, average_from=average_from)


SIMULATORS.append(
    Sim("low_precision.kahan_gd", _kahan,
        outputs=lambda o: [o["w"], o["c"], o["mean_error"], o["z_mid"], o["diverged"], o["diverged_step"]],
        grid=("eta_a", ETA, 0),
        bad=[({"eta_a": [0.0]}, "eta_a"), ({"n_steps": 1}, "n_steps"), ({"average_from": 12}, "average_from"),
             ({"w_star": [[1.0]]}, "w_star")],
        diverging=({"eta_a": np.array([1e6, 2e6])}, lambda o: o["diverged"] & (o["diverged_step"] > 0)),
        vary={"w_star": WS * 1.01, "eta_a": ETA * 0.9, "w0": 1.9}))


def _noisy(w_star=WS, eta_a=ETA, sigma=10 * 2.0**-7, w0=255 / 128, n_steps=12, window=4, key=None):
    return sim.noisy_gd(w_star, eta_a, sigma, w0=w0, n_steps=n_steps, window=window,
                        key=jax.random.key(0) if key is None else key)


SIMULATORS.append(
    Sim("low_precision.noisy_gd", _noisy, outputs=lambda o: [o["w"], o["mean_sq"], o["diverged"], o["diverged_step"]],
        grid=("eta_a", ETA, 0),
        bad=[({"eta_a": [0.0]}, "eta_a"), ({"sigma": -1.0}, "sigma"), ({"window": 13}, "window"),
             ({"key": 0}, "key")],
        diverging=({"eta_a": np.array([1e6, 2e6])}, lambda o: o["diverged"] & (o["diverged_step"] > 0)),
        vary={"w_star": WS * 1.01, "eta_a": ETA * 0.9, "sigma": 0.05, "w0": 1.9, "key": jax.random.key(1)}))
