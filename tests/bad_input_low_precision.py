"""Bad-input rows of the low_precision topic (see tests/_bad_input_table.py)."""
import jax
import numpy as np

from tests._bad_input_table import Row

WS = np.array([1.1, 1.3, 1.45])

ROWS = [
    Row("theory.low_precision.ulp", {"w": np.array([1.0, 3.0]), "mantissa_bits": 8},
        kinds={"w": "arr", "mantissa_bits": "posint"}),
    Row("theory.low_precision.round_nearest", {"x": np.array([1.0, 3.3]), "mantissa_bits": 8},
        kinds={"mantissa_bits": "posint"}),
    Row("theory.low_precision.rn_band", {"eta_a": np.array([0.1, 0.3]), "ulp_value": 2.0**-7},
        kinds={"eta_a": "posarr", "ulp_value": "pos"}),
    Row("theory.low_precision.rn_frozen_error", {"w_star": WS, "eta_a": 0.1, "mantissa_bits": 8},
        kinds={"w_star": "arr", "eta_a": "pos", "mantissa_bits": "posint"}),
    Row("theory.low_precision.reference_freeze_step", {"e0": np.array([0.5, 0.7]), "eta_a": 0.1,
                                                        "ulp_value": 2.0**-7},
        kinds={"e0": "posarr", "eta_a": "pos", "ulp_value": "pos"}),
    Row("theory.low_precision.rn_lattice_run", {"w_star": WS, "w0": 255 / 128, "eta_a": 0.1, "n_steps": 50,
                                                 "mantissa_bits": 8},
        kinds={"w_star": "arr", "w0": "real", "eta_a": "pos", "n_steps": "posint", "mantissa_bits": "posint"}),
    Row("theory.low_precision.sr_second_moment", {"w_star": WS, "mantissa_bits": 8},
        kinds={"w_star": "arr", "mantissa_bits": "posint"}),
    Row("theory.low_precision.cosine_freeze_fraction", {"ratio": np.array([0.5, 1.5])}, kinds={"ratio": "posarr"}),
    Row("sims.low_precision.round_bf16", {"x": np.array([1.0, 2.5]), "mode": "stochastic",
                                          "key": jax.random.key(0)}),
    Row("sims.low_precision.gd", {"w_star": WS, "eta_a": np.array([0.1, 0.3]), "w0": 255 / 128, "n_steps": 20,
                                  "storage": "bf16_sr", "key": jax.random.key(0), "snapshots": (5,)},
        kinds={"eta_a": "posarr", "w0": "real", "n_steps": "posint", "snapshots": "obj"}),
]

ROWS += [
    Row("theory.low_precision.half_ulp_last_move", {"w_path": np.full((3, 2), 1.5), "updates": np.full((3, 2), 0.01)},
        kinds={"w_path": "arr", "updates": "arr"}),
    Row("sims.low_precision.adamw", {"grad": np.array([1e-3, -2.0, 5.0]), "eta_max": np.array([0.01, 0.02]), "w0": 1.5,
                                     "n_steps": 10, "storage": "float64", "beta1": 0.9, "beta2": 0.999, "eps": 1e-8,
                                     "weight_decay": 0.05, "record": True},
        kinds={"grad": "arr", "eta_max": "posarr", "w0": "real", "n_steps": "posint", "beta1": "unit",
               "beta2": "unit", "eps": "nonneg", "weight_decay": "nonneg"}),
]

ROWS += [
    Row("theory.low_precision.rn_chain", {"w_star": WS, "w0": 255 / 64, "eta_a": 0.1, "n_steps": 30,
                                           "mantissa_bits": 8},
        kinds={"w_star": "arr", "w0": "real", "eta_a": "pos", "n_steps": "posint", "mantissa_bits": "posint"}),
    Row("theory.low_precision.rn_frozen_error_across_binades", {"w_star": WS, "w0": 255 / 64, "eta_a": 0.1,
                                                                 "mantissa_bits": 8},
        kinds={"w_star": "posarr", "w0": "pos", "eta_a": "pos", "mantissa_bits": "posint"}),
]

ROWS += [
    Row("theory.low_precision.cast_chain", {"w_star": WS, "w0": 255 / 128, "eta_a": np.array([0.1, 0.3]), "n_steps": 5},
        kinds={"w_star": "arr", "w0": "real", "eta_a": "posarr", "n_steps": "posint"}),
]

ROWS += [
    Row("theory.low_precision.kahan_bias_bound", {"mantissa_bits": 8}, kinds={"mantissa_bits": "posint"}),
    Row("sims.low_precision.kahan_gd", {"w_star": WS, "eta_a": np.array([0.1, 0.3]), "w0": 255 / 128, "n_steps": 20,
                                        "average_from": 10},
        kinds={"eta_a": "posarr", "w0": "real", "n_steps": "posint", "average_from": "posint"}),
]

ROWS += [
    Row("theory.low_precision.rn_sgd_window_mean_sq", {"eta_a": 0.1, "sigma_ulps": 5.0, "frac": 0.3, "k0": 10,
                                                        "n_steps": 20, "window": 5},
        kinds={"eta_a": "pos", "sigma_ulps": "pos", "frac": "unit", "k0": "int", "n_steps": "posint",
               "window": "posint"}),
    Row("sims.low_precision.noisy_gd", {"w_star": WS, "eta_a": np.array([0.1, 0.3]), "sigma": 0.05,
                                        "w0": 255 / 128, "n_steps": 20, "window": 5, "key": jax.random.key(0)},
        kinds={"eta_a": "posarr", "sigma": "nonneg", "w0": "real", "n_steps": "posint", "window": "posint"}),
]

_R = "sims.reference.low_precision."
_SR_WORDS = np.zeros((21, 2, 3), np.uint32)  # the start and 20 steps of (2 step sizes, 3 coordinates)

ROWS += [
    # NumPy references
    Row(_R + "gd_numpy", lambda: {"w_star": WS, "eta_a": np.array([0.1, 0.3]), "w0": 255 / 128, "n_steps": 20,
                                  "storage": "bf16_sr", "rng": np.random.default_rng(0), "snapshots": (5,)},
        kinds={"eta_a": "posarr", "w0": "real", "n_steps": "posint", "rng": "obj", "snapshots": "obj"},
        extra=[({"offsets": _SR_WORDS}, "offsets", "both"),
               ({"rng": None, "offsets": _SR_WORDS[:3]}, "offsets", "shape"),
               ({"rng": None, "offsets": _SR_WORDS + 0.5}, "offsets", "frac"),
               ({"rng": None, "offsets": _SR_WORDS.astype(np.int64) - 1}, "offsets", "neg"),
               ({"rng": None, "offsets": "x"}, "offsets", "str"),
               ({"storage": "float32"}, "rng", "deterministic"),
               ({"storage": "bf16_rn", "rng": None, "offsets": _SR_WORDS}, "offsets", "deterministic")]),
    Row(_R + "bench_cases", {"scale": "small"}),
]
