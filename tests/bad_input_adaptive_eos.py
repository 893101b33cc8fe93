"""Bad-input rows of the adaptive-EoS topic (see tests/_bad_input_table.py)."""
import numpy as np

import jax

from tests._bad_input_table import Row

_T = "theory.adaptive_eos."
_H = np.array([[2.0, 0.3], [0.3, 1.0]])
_S = np.array([1.0, 1.0])

ROWS = [
    Row(_T + "frozen_threshold", {"beta1": 0.9}, kinds={"beta1": "unit"}),
    Row(_T + "frozen_spectral_radius", {"eta_q": np.array([1.0, 40.0]), "beta1": 0.9},
        kinds={"eta_q": "posarr", "beta1": "unit"}),
    Row(_T + "preconditioned_sharpness", {"H": _H, "p": np.array([1.0, 2.0])},
        kinds={"H": "arr+indefinite", "p": "posarr"}),
    Row(_T + "rmsprop_cycle_amplitude", {"eta": 0.01}, kinds={"eta": "pos"}),
    Row(_T + "rmsprop_cycle_signs", {"H": _H}, kinds={"H": "arr+indefinite"}),
    Row(_T + "rmsprop_cycle_loss", {"H": _H, "s": _S, "eta": 0.01}, kinds={"H": "arr+indefinite", "s": "arr", "eta": "pos"}),
    Row(_T + "rmsprop_cycle_sharpness", {"H": _H, "s": _S, "eta": 0.01},
        kinds={"H": "arr+indefinite", "s": "arr", "eta": "pos"}),
    Row(_T + "ema_cycle_amplitude", {"eta": 0.01, "beta1": 0.9}, kinds={"eta": "pos", "beta1": "unit"}),
    Row("sims.adaptive_eos.adam_quadratic",
        {"H": _H, "x0": np.array([[0.1, -0.2]]), "eta": 0.01, "beta1": 0.9, "beta2": 0.99, "n_steps": 10,
         "n_blocks": 2, "block": 3},
        kinds={"H": "arr+indefinite", "x0": "arr+zeros", "eta": "posarr", "beta1": "unit", "beta2": "unit",
               "n_steps": "posint", "n_blocks": "posint", "block": "posint"},
        ok={("eta", "ndim"): "a vector of step sizes is one run per entry, sharing the single start"}),
    Row("sims.adaptive_eos.adam_mlp",
        lambda: {"keys": jax.random.split(jax.random.key(0), 2), "eta": 0.01, "beta1": 0.9, "beta2": 0.99,
                 "X": np.ones((4, 2)), "Y": np.zeros(4), "hidden": 3, "n_burn": 1, "n_meas": 1, "every": 1,
                 "lanczos_iter": 3},
        kinds={"keys": "key", "eta": "posarr", "beta1": "unit", "beta2": "unit", "X": "arr", "Y": "arr",
               "hidden": "posint", "n_burn": "nonnegint", "n_meas": "posint", "every": "posint",
               "lanczos_iter": "posint"},
        ok={("eta", "ndim"): "a vector of step sizes is one step size per run (keys)"}),
]

_R = "sims.reference.adaptive_eos."

ROWS += [
    # NumPy references
    Row(_R + "adam_quadratic_numpy",
        {"H": _H, "x0": np.array([[0.1, -0.2]]), "eta": 0.01, "beta1": 0.9, "beta2": 0.99, "n_steps": 10,
         "n_blocks": 2, "block": 3, "precond": np.array([1.0, 2.0])},
        kinds={"H": "arr+indefinite", "x0": "arr+zeros", "eta": "posarr", "beta1": "unit", "beta2": "unit",
               "n_steps": "posint", "n_blocks": "posint", "block": "posint", "precond": "posarr"},
        ok={("eta", "ndim"): "a vector of step sizes is one run per entry, sharing the single start"},
        extra=[({"n_blocks": 5}, "n_blocks", "tail>n_steps"), ({"H": np.eye(3)}, "H", "dim")]),
    Row(_R + "bench_cases", {"scale": "small"}),
]
