"""Bad-input rows of the logistic-regression topic (see tests/_bad_input_table.py)."""
from __future__ import annotations

import numpy as np
import sympy as sp

from tests._bad_input_table import Row

Z1 = np.array([[1.0], [-1.0], [2.0]])          # 1-D, non-separable
A1 = np.array([0.5, 0.3, 0.2])
Z2 = np.array([[1.0, 0.2], [-1.0, 0.1], [0.3, -1.0], [-0.2, 1.0]])  # 2-D, non-separable
A2 = np.full(4, 0.25)
W1 = np.array([0.3])
W2 = np.array([0.3, -0.1])
_w = sp.Symbol("w")
G = sp.Rational(1, 2) * sp.log(1 + sp.exp(-_w)) + sp.Rational(1, 2) * sp.log(1 + sp.exp(_w))  # a 1-D loss
DATA = {"z": "arr", "weights": "nonnegarr"}
UNIFORM = {("weights", "None"): "None: uniform weights (the documented convention of every dataset argument)"}

_T = "theory.logistic."
_S = "sims.logistic."
_R = "sims.reference.logistic."

# bad ``dtype`` values of the simulators that take one (theory.validate.float_dtype): another precision, an unknown
# name, a number
_BAD_DTYPE = [({"dtype": "float16"}, "dtype", "float16"), ({"dtype": "no-such-option"}, "dtype", "unknown"),
              ({"dtype": 3}, "dtype", "int")]

ROWS = [
    Row(_T + "per_point_derivatives", {"order": 3}, kinds={"order": "nonnegint"}),  # order 0: the loss itself
    Row(_T + "loss_expr", {"z": Z1, "weights": A1}, kinds=DATA),
    Row(_T + "gd_map_expr", lambda: {"loss": G, "ws": (_w,), "eta": sp.Rational(1, 2)},
        ok={("eta", "None"): "the default: the symbol eta"}),
    Row(_T + "two_cycle_equations", {"g": G, "var": _w}),
    Row(_T + "two_cycle_multiplier", {"g": G, "var": _w}),
    Row(_T + "normal_form_coefficients", {"z": Z1, "weights": A1, "eta": 2.0}, kinds={**DATA, "eta": "pos"},
        ok={("eta", "None"): "the default: 2 / lambda"}),
    Row(_T + "validate_dataset", {"z": Z2, "weights": A2}, kinds=DATA),
    Row(_T + "loss", {"w": W2, "z": Z2, "weights": A2}, kinds=DATA),
    Row(_T + "grad", {"w": W2, "z": Z2, "weights": A2}, kinds=DATA),
    Row(_T + "hessian", {"w": W2, "z": Z2, "weights": A2}, kinds=DATA),
    Row(_T + "gd_step", {"w": W2, "eta": 0.5, "z": Z2, "weights": A2}, kinds={**DATA, "eta": "pos"},
        ok={("weights", "None"): "the default: uniform"}),
    Row(_T + "smoothness", {"z": Z2, "weights": A2}, kinds=DATA),
    Row(_T + "orbit_bound_1d", {"z": Z1, "weights": A1, "eta": 2.0, "w0": 0.3}, kinds={**DATA, "eta": "pos"}, ok=UNIFORM),
    Row(_T + "minimizer", {"z": Z2, "weights": A2, "tol": 1e-12, "max_iter": 50},
        kinds={**DATA, "tol": "pos", "max_iter": "posint"}),
    Row(_T + "cycle_dataset", {"c": 1.5, "K": 1e5, "J": 0.01}, kinds={"c": "pos", "K": "pos", "J": "pos"}),
    Row(_T + "solve_two_cycle", {"z": Z1, "weights": A1, "eta": 12.0, "guess": np.array([-1.0, 1.5])},
        kinds={**DATA, "eta": "pos"}, ok=UNIFORM),
    Row(_T + "two_cycle_1d", {"z": Z1, "weights": A1, "eta": 12.0}, kinds={**DATA, "eta": "pos"}, ok=UNIFORM),
    Row(_T + "period_doubling_step", {"z": Z1, "weights": A1, "c_range": (2.0001, 3.5), "n_scan": 30},
        kinds={**DATA, "c_range": "arr", "n_scan": "posint+oversize"}, slow=True),
    Row(_T + "construct_witness_2d", {"c": 0.75, "theta_deg": 70.0, "J": 0.02, "K": 2000.0, "offset": 0.05},
        kinds={"c": "pos", "J": "pos", "K": "pos"}, slow=True),
    Row(_T + "balanced_cycle_amplitude", {"c": 2.5}, kinds={"c": "pos"}),
    Row(_T + "balanced_cycle_multiplier", {"c": 2.5}, kinds={"c": "pos"}),
    Row(_T + "doubling_points", {"z": Z1, "weights": A1, "count": 2}, kinds={**DATA, "count": "posint"}, slow=True),
    Row(_T + "feigenbaum_ratios", {"points": np.array([2.0, 3.0, 3.2, 3.24])}),
    Row(_S + "gd", {"z": Z2, "weights": A2, "eta": np.array([0.5, 1.0]), "inits": np.zeros((1, 2)), "n_steps": 5,
                    "keep_last": 2, "chunk_size": 16},
        kinds={**DATA, "eta": "posarr", "n_steps": "posint", "keep_last": "posint", "chunk_size": "posint"},
        ok={**UNIFORM, ("keep_last", "None"): "the default: the last iterate only"}, extra=_BAD_DTYPE),
    Row(_S + "attractors", {"z": Z1, "weights": A1, "eta": np.array([1.0, 12.0]), "inits": np.zeros((1, 1)),
                            "n_steps": 200, "max_period": 4, "tol": 1e-9, "chunk_size": 16},
        kinds={**DATA, "eta": "posarr", "n_steps": "posint", "max_period": "posint", "tol": "pos",
               "chunk_size": "posint"}, ok=UNIFORM,
        extra=[({"dtype": "float32"}, "dtype", "float32: the period test needs float64")] + _BAD_DTYPE),
    Row(_S + "cycle_jacobian", {"z": Z1, "weights": A1, "eta": 1.0, "point": np.array([0.3]), "period": 2},
        kinds={**DATA, "eta": "pos", "period": "posint"}, ok=UNIFORM),
    Row(_S + "loss", {"w": W2, "z": Z2, "weights": A2}, kinds=DATA),
    Row(_S + "grad", {"w": W2, "z": Z2, "weights": A2}, kinds=DATA),
    Row(_S + "hessian", {"w": W2, "z": Z2, "weights": A2}, kinds=DATA),
    Row(_R + "gd_numpy", {"z": Z2, "weights": A2, "eta": np.array([0.5, 1.0]), "inits": np.zeros((1, 2)), "n_steps": 5,
                          "keep_last": 2},
        kinds={**DATA, "eta": "posarr", "n_steps": "posint", "keep_last": "posint"}, ok=UNIFORM),
    Row(_R + "bench_cases", {"scale": "small"}),
    Row(_T + "cycles_1d", {"z": Z1, "weights": A1, "eta": 12.0, "period": 2, "n_grid": 200},
        kinds={**DATA, "eta": "pos", "period": "posint", "n_grid": "posint+oversize"},
        ok={("weights", "None"): "the default: uniform"}),
    Row(_T + "certify_no_two_cycle_1d", {"z": Z1, "weights": A1, "eta": 2.0, "n_init": 64, "max_depth": 20,
                                          "max_cells": 100_000},
        kinds={**DATA, "eta": "pos", "n_init": "posint", "max_depth": "nonnegint", "max_cells": "posint"},
        ok={("weights", "None"): "the default: uniform"}),
    Row(_T + "two_point_dataset", {"s": 250.0, "margin": -9.0}, kinds={"s": "pos"}),
    Row(_S + "rod_flow", {"z": Z1, "weights": A1, "eta": np.array([1.0, 2.0]), "inits": np.array([0.3]),
                          "ts": np.array([0.0, 1.0, 2.0]), "rtol": 1e-8, "atol": 1e-10, "max_steps": 1000},
        kinds={**DATA, "eta": "posarr", "ts": "arr", "rtol": "pos", "atol": "pos", "max_steps": "posint"},
        ok={("weights", "None"): "the default: uniform", ("inits", "ndim"): "(k, 1) starts are the same for 1-D data"}),
    Row(_T + "sphere_lift", {"z": np.array([[1.0], [0.5], [-0.5]]), "weights": A1, "d": 3},
        kinds={**DATA, "d": "posint"}, ok=UNIFORM),
    Row(_T + "periodic_orbit", {"z": Z1, "weights": A1, "eta": 12.0, "guess": np.array([-1.0]), "period": 2},
        kinds={**DATA, "eta": "pos", "period": "posint"}, ok=UNIFORM, slow=True),
]
