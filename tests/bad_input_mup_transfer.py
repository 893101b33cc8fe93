"""Bad-input rows of the mup_transfer topic (see tests/_bad_input_table.py)."""
import jax
import numpy as np

from tests._bad_input_table import Row

_RNG = np.random.default_rng(0)
_X = _RNG.standard_normal((4, 6))
_Y = _X.T @ _RNG.standard_normal(4) / 2.0
_L = np.array([1.0, -2.0, 0.5, 0.3, -0.1, 0.02, 0.01])

ROWS = [
    Row("theory.mup_transfer.table_expr", {"parametrization": "mup"}, kinds={"parametrization": "choice"}),
    Row("theory.mup_transfer.kernel_factor_expr", {"parametrization": "sp"}, kinds={"parametrization": "choice"}),
    Row("theory.mup_transfer.output_variance_expr", {"parametrization": "ntp"}, kinds={"parametrization": "choice"}),
    Row("theory.mup_transfer.kernel_factor", {"parametrization": "mup", "n": 64, "d": 4},
        kinds={"parametrization": "choice", "n": "posint", "d": "posint"}),
    Row("theory.mup_transfer.limit_kernel_factor", {"parametrization": "mup", "d": 4},
        kinds={"parametrization": "choice", "d": "posint"}),
    Row("theory.mup_transfer.kernel_optimum", {"X": _X, "y": _Y, "kappa": 1.5, "f0": np.zeros(6)},
        kinds={"X": "arr", "y": "arr", "kappa": "pos", "f0": "arr"}),
    Row("theory.mup_transfer.eta_infinity", {"X": _X, "y": _Y}, kinds={"X": "arr", "y": "arr"}),
    Row("theory.mup_transfer.loss_polynomial", {"coef": np.ones((6, 4)), "y": _Y}, kinds={"coef": "arr", "y": "arr"}),
    Row("theory.mup_transfer.local_minimizers", {"loss_coef": _L, "eta_max": 10.0},
        kinds={"loss_coef": "arr", "eta_max": "pos"}),
    Row("theory.mup_transfer.first_minimizer", {"loss_coef": _L}, kinds={"loss_coef": "arr"}),
    Row("theory.mup_transfer.grid_minimizer", {"loss_coef": _L, "grid": np.array([0.1, 0.5, 1.0])},
        kinds={"loss_coef": "arr", "grid": "posarr"}),
    Row("sims.mup_transfer.one_step", {"key": jax.random.key(0), "X": _X, "y": _Y, "n": 8, "parametrization": "mup",
                                       "n_seeds": 2, "method": "reduced"},
        kinds={"key": "key", "X": "arr", "y": "arr", "n": "posint+oversize", "parametrization": "choice",
               "n_seeds": "posint", "method": "choice"}),
]
ROWS.append(Row("theory.mup_transfer.global_minimizer", {"loss_coef": _L}, kinds={"loss_coef": "arr"}))
# Gram statistics of one initialization (d = 4): identity Gram matrices, a zero cross term
_STATS = {"vv": np.array([1.0]), "K": np.eye(4)[None], "zeta": np.zeros((1, 4)), "zz": np.array([1.0]),
          "H": np.eye(5)[None]}
ROWS.append(Row("sims.mup_transfer.coefficients_from_statistics",
                {"X": _X, "y": _Y, "parametrization": "mup", "n": 8, "stats": _STATS, "freeze_hidden": False},
                kinds={"X": "arr", "y": "arr", "parametrization": "choice", "n": "posint", "stats": "dict",
                       "freeze_hidden": "bool"}))
