"""Bad-input rows of the edge-of-stability topic (see tests/_bad_input_table.py)."""
from __future__ import annotations

import jax
import numpy as np

from tests._bad_input_table import Row

TOY = np.array([[0.0, 0.0, 0.05], [0.0, 0.0, 0.0], [1.9, 0.0, 0.0]])  # selfstab_coefficients(3.8, 0.1)
W = np.array([0.1, 0.02])
K2 = lambda: jax.random.split(jax.random.key(0), 2)  # noqa: E731
X8 = np.random.default_rng(0).standard_normal((8, 3))
Y8 = np.sin(X8[:, 0])
WID = (3, 4, 1)
THETA = np.random.default_rng(1).standard_normal(3 * 4 + 4) / 2
WIDR = (3, 4, 2)  # a ReLU network of one hidden layer of 4 and two outputs
THETAR = np.random.default_rng(2).standard_normal(3 * 4 + 4 * 2)
Y8R = np.stack([Y8, -Y8], axis=1)
POS = {"a": "pos", "beta": "pos", "eta": "pos"}
POS_BIG = {k: v + "+big" for k, v in POS.items()}  # the toy's closed forms square beta*eta: 1e200 overflows inside
BETA_LINEAR = {("beta", "big"): "beta enters linearly here (sigma^2 = beta/y*): 1e200 gives a finite, valid value"}
MOM = {"momentum": "unit"}
# bad ``dtype`` values of the simulators that take one (theory.validate.float_dtype): another precision, an unknown
# name, a number
_BAD_DTYPE = [({"dtype": "float16"}, "dtype", "float16"), ({"dtype": "no-such-option"}, "dtype", "unknown"),
              ({"dtype": 3}, "dtype", "int")]

_S = "sims.eos."
_R = "sims.reference.eos."
_T = "theory.eos."

ROWS = [
    # theory
    Row(_T + "poly_expr", {"coef": TOY}),
    Row(_T + "selfstab_coefficients", {"a": 3.8, "beta": 0.1}, kinds=POS),
    Row(_T + "uv_coefficients", {"target": 1.0}),
    Row(_T + "selfstab_cycle_equations", {"method": "gd"}),
    Row(_T + "selfstab_equilibrium", {"a": 3.8, "beta": 0.1, "eta": 0.5, "momentum": 0.0, "nesterov": False},
        kinds={**POS_BIG, **MOM}, ok=BETA_LINEAR),
    Row(_T + "selfstab_cycle_loss", {"a": 3.8, "beta": 0.1, "eta": 0.5, "momentum": 0.0, "nesterov": False},
        kinds={**POS_BIG, **MOM}, ok=BETA_LINEAR),
    Row(_T + "selfstab_central_flow_loss", {"a": 3.8, "beta": 0.1, "eta": 0.5}, kinds=POS_BIG, ok=BETA_LINEAR),
    Row(_T + "selfstab_cycle_jacobian", {"a": 3.8, "beta": 0.1, "eta": 0.5}, kinds=POS_BIG),
    Row(_T + "selfstab_cycle_multipliers", {"a": 3.8, "beta": 0.1, "eta": 0.5}, kinds=POS_BIG),
    Row(_T + "selfstab_window", {"beta": 0.1, "eta": 0.5}, kinds=POS_BIG),
    Row(_T + "selfstab_averaged_eigenvalues", {"a": 3.8, "beta": 0.1, "eta": 0.5}, kinds=POS_BIG, ok=BETA_LINEAR),
    Row(_T + "central_flow_mean_loss", {"loss": np.array([0.02, 0.01]), "sigma2_sharpness": np.array([0.01, 0.004])},
        kinds={"sigma2_sharpness": "nonnegarr"}),
    Row(_T + "momentum_characteristic_polynomial", {"method": "heavy_ball"}),
    Row(_T + "critical_sharpness", {"eta": 0.5, "momentum": 0.5, "nesterov": True}, kinds={"eta": "pos", **MOM},
        ),
    Row(_T + "catapult_phase", {"eta_lambda0": 3.0}, kinds={"eta_lambda0": "pos+huge"},
        ok={("eta_lambda0", "huge"): "a huge step is a valid input: its phase is divergence"}),
    Row(_T + "catapult_trajectory", {"eta_lambda0": np.array([2.5, 3.0]), "z0": np.array([0.01, 0.02]), "n_steps": 5},
        kinds={"eta_lambda0": "posarr", "z0": "posarr", "n_steps": "posint"}),
    Row(_T + "catapult_growth_factor", {"eta_lambda0": 2.2}, kinds={"eta_lambda0": "pos+huge"},
        ok={("eta_lambda0", "huge"): "a huge step is a valid input: its growth factor is (1 - c)^2, finite"}),
    Row(_T + "uv_sharpness", {"u": 1.0, "v": 0.5}),
    Row(_T + "uv_gradient_flow_limit_sharpness", {"u0": 1.0, "v0": 0.5}),
    # simulators
    Row(_S + "poly_loss", {"w": W, "coef": TOY}),
    Row(_S + "poly_grad", {"w": W, "coef": TOY}),
    Row(_S + "poly_sharpness", {"w": W, "coef": TOY}),
    Row(_S + "poly_gd", {"coef": TOY, "eta": np.array([0.5, 0.48]), "w0": W, "n_steps": 20, "n_blocks": 10,
                         "momentum": 0.0, "nesterov": False},
        kinds={"eta": "posarr", "n_steps": "posint", "n_blocks": "posint", **MOM}, extra=_BAD_DTYPE),
    Row(_S + "central_flow_sigma2", {"grad_L": np.array([0.1, 0.2]), "grad_S": np.array([1.0, 0.5]), "S": 3.0,
                                     "eta": 0.5, "relax": 1.0},
        kinds={"eta": "pos", "relax": "pos"}),
    Row(_S + "central_flow_sigma_matrix", {"Q": np.eye(4).reshape(2, 2, 2, 2), "B": np.diag([1.0, -0.5]),
                                           "start": np.zeros((2, 2)), "n_iter": 5},
        kinds={"n_iter": "posint"}),
    Row(_S + "poly_flow", {"coef": TOY, "eta": np.array([0.5]), "w0": W, "ts": np.linspace(0.0, 4.0, 401),
                           "flow": "central", "relax": 1.0, "rtol": 1e-10, "atol": 1e-12, "max_steps": 200_000},
        kinds={"eta": "posarr", "relax": "pos", "rtol": "pos", "atol": "pos", "max_steps": "posint"}, slow=True),
    Row(_S + "catapult_gd", lambda: {"keys": K2(), "eta_lambda0": np.array([1.5, 4.5]), "width": 16, "n_steps": 8,
                                     "n_blocks": 2},
        kinds={"eta_lambda0": "posarr", "width": "posint+oversize", "n_steps": "posint", "n_blocks": "posint"},
        extra=[({"dtype": "float32", "keys": jax.random.key(0, impl="rbg")[None]}, "dtype",
                "float32 with rbg keys")] + _BAD_DTYPE),
    Row(_S + "mlp_data", lambda: {"key": jax.random.key(0), "n": 8, "d": 3},
        kinds={"n": "posint+oversize", "d": "posint+oversize"}),
    Row(_S + "mlp_init", lambda: {"key": jax.random.key(0), "widths": WID}),
    Row(_S + "mlp_loss", {"theta": THETA, "X": X8, "Y": Y8, "widths": WID}, kinds={"X": "arr+rows"}),
    Row("sims.hvp.top_eigenpair", {"matvec": lambda v: np.diag([3.0, 2.0, 1.0]) @ v, "v0": np.ones(3), "num_iter": 2},
        kinds={"v0": "arr+zeros", "num_iter": "posint"}),
    Row(_S + "mlp_run", lambda: {"keys": jax.random.split(jax.random.key(3), 1), "eta": 0.5, "X": X8, "Y": Y8,
                                 "widths": WID, "methods": ("gd", "central"), "momentum": 0.0, "n_steps": 4,
                                 "every": 2, "substeps": 2, "lanczos_iter": 4, "relax": 1.0},
        kinds={"X": "arr+rows", "eta": "pos", "n_steps": "posint", "every": "posint", "substeps": "posint",
               "lanczos_iter": "posint", "relax": "pos", **MOM}, ok={("eta", "vector"): "one step size per run (two methods: two runs)"},
        extra=[({"dtype": "float32", "keys": jax.random.key(0, impl="rbg")[None]}, "dtype",
                "float32 with rbg keys")] + _BAD_DTYPE, slow=True),
    Row(_S + "mlp_track", lambda: {"keys": jax.random.split(jax.random.key(3), 1), "eta": 0.5, "X": X8, "Y": Y8,
                                   "widths": WID, "threshold": 4.0, "n_steps": 4, "window": 2, "substeps": 2,
                                   "relax": 1.0},
        kinds={"X": "arr+rows", "eta": "pos", "threshold": "pos", "n_steps": "posint", "window": "posint",
               "substeps": "posint", "relax": "pos"},
        extra=[({"dtype": "float32"}, "dtype", "float32: the held sharpness needs float64")] + _BAD_DTYPE, slow=True),
    Row("sims.eos_relu.digits_data", {"n": 16}, kinds={"n": "posint"}),
    Row("sims.eos_relu.relu_init", lambda: {"key": jax.random.key(0), "widths": WIDR}),
    Row("sims.eos_relu.relu_net", {"theta": THETAR, "X": X8, "widths": WIDR}),
    Row("sims.eos_relu.relu_loss", {"theta": THETAR, "X": X8, "Y": Y8R, "widths": WIDR}, kinds={"X": "arr+rows"}),
    Row("sims.eos_relu.relu_gauss_newton_top", lambda: {"theta": THETAR, "X": X8, "widths": WIDR, "key": jax.random.key(0),
                                               "num_iter": 5},
        kinds={"num_iter": "posint"}),
    Row("sims.eos_relu.relu_gd", lambda: {"keys": K2(), "eta_lambda0": np.array([1.5, 4.0]), "X": X8, "Y": Y8R, "widths": WIDR,
                                 "n_steps": 4, "lanczos_iter": 4},
        kinds={"eta_lambda0": "posarr", "n_steps": "posint", "lanczos_iter": "posint", "X": "arr+rows"}),
    # NumPy references
    *[Row(_R + name, {"W": W[None], "C": TOY},
          extra=[({"C": np.stack([TOY] * 3), "W": np.stack([W] * 2)}, "C", "unbroadcastable"),
                 ({"W": np.stack([W] * 2), "C": np.stack([TOY] * 3)}, "W", "unbroadcastable"),
                 ({"C": np.zeros((3, 4))}, "C", "not3x3")])
      for name in ("poly_loss_numpy", "poly_grad_numpy", "poly_sharpness_numpy")],
    Row(_R + "poly_gd_numpy", {"coef": TOY, "eta": np.array([0.5, 0.48]), "w0": W, "n_steps": 20, "n_blocks": 10,
                               "momentum": 0.0, "nesterov": False},
        kinds={"eta": "posarr", "n_steps": "posint", "n_blocks": "posint", **MOM},
        extra=[({"momentum": np.array([0.1, 0.2, 0.3])}, "momentum", "rows"),
               ({"nesterov": np.array([True, False, True])}, "nesterov", "rows"),
               ({"w0": np.zeros((2, 3))}, "w0", "notpoints"), ({"n_blocks": 3}, "n_blocks", "nondivisor")]),
    Row(_R + "poly_flow_scipy", {"coef": TOY, "eta": 0.5, "w0": W, "t1": 4.0, "flow": "central", "relax": 1.0,
                                 "rtol": 1e-8, "atol": 1e-10},
        kinds={"eta": "pos", "t1": "pos", "relax": "pos", "rtol": "pos", "atol": "pos"}),
    Row(_R + "catapult_numpy", {"u0": np.ones((2, 4)), "v0": np.full((2, 4), 0.5), "eta": np.array([0.3, 0.6]),
                                "n_steps": 5},
        kinds={"eta": "posarr", "n_steps": "posint"},
        extra=[({"v0": np.ones((2, 3))}, "v0", "othershape"), ({"eta": np.array([0.3])}, "eta", "onerun")]),
    Row(_R + "bench_cases", {"scale": "small"}),
]
