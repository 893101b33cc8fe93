"""Bad-input rows of the deep-linear-network Hessian topic (see tests/_bad_input_table.py).

Data are built lazily: widths (3, 2, 2), whitened inputs ``X`` of shape (d0, n) = (3, 6).
"""
from __future__ import annotations

import functools

import jax
import numpy as np
import sympy as sp

from tests._bad_input_table import Row

W = (3, 2, 2)
PROP = np.array([0.5, 0.3, 0.2])
SV = np.array([1.0, 0.5])
K = lambda: jax.random.key(0)  # noqa: E731
_s = sp.Symbol("s")


@functools.lru_cache(maxsize=None)
def _data():
    from sims import linear_hessian as S

    X, Y = S.whitened_data(jax.random.key(1), 3, 2, 6)
    theta = np.asarray(S.balanced_minimum(jax.random.key(2), X, Y, W))
    return np.asarray(X), np.asarray(Y), theta


def _fw():
    from sims.linear_hessian import frame as F

    return F.frame_widths(W)


def _padded():
    """A two-case padded result (frame widths of W and of a depth-1 net), nothing else per case."""
    from sims.linear_hessian import frame as F

    return {"widths": np.stack([F.frame_widths(W), F.frame_widths((2, 2))]), "depth": np.array([2, 1]), "seed": 0}


def _d(**kw):
    def build():
        X, Y, theta = _data()
        base = {"X": X, "Y": Y, "theta": theta}
        return {k: (base[k] if isinstance(v, str) and v == "@" else v) for k, v in kw.items()}
    return build


_T = "theory.linear_hessian."
_S = "sims.linear_hessian.net."
_F = "sims.linear_hessian.frame."
_L = "sims.linear_hessian.laws."
_P = "sims.linear_hessian.spectrum."
_N = "sims.linear_hessian.train."
_R = "sims.reference.linear_hessian."
WK = {"widths": "widths"}
# bad ``dtype`` values of the simulators that take one (theory.validate.float_dtype): another precision, an unknown
# name, a number
_BAD_DTYPE = [({"dtype": "float16"}, "dtype", "float16"), ({"dtype": "no-such-option"}, "dtype", "unknown"),
              ({"dtype": 3}, "dtype", "int")]

ROWS = [
    Row(_T + "gauss_newton_gap", {"depth": 2}, kinds={"depth": "posint"}),
    Row(_T + "balanced_identity_residuals", {"depth": 2, "rescale": 1}, kinds={"depth": "posint"},
        ok={("rescale", "frac"): "any positive rescale is a valid gauge (residuals non-zero for c != 1)",
            ("rescale", "int64"): "a real gauge factor (exact in SymPy), not an integer size: 2**63 is valid"}),
    Row(_T + "kappa_sum", {"si": sp.Integer(2), "sj": sp.Integer(1), "depth": sp.Integer(3)}),
    Row(_T + "kappa_closed", {"si": sp.Integer(2), "sj": sp.Integer(1), "depth": sp.Integer(3)}),
    Row(_T + "spectrum_terms", {"s": (sp.Integer(1), sp.Rational(1, 2)), "d0": sp.Integer(3), "dL": sp.Integer(2),
                                "depth": sp.Integer(2)}, kinds={"s": "obj"}),
    Row(_T + "rank_formula", {"r": sp.Integer(1), "d0": sp.Integer(3), "dL": sp.Integer(2)}),
    Row(_T + "parameter_count", {"widths": W}),
    Row(_T + "trace_formula", {"s": (sp.Integer(1),), "d0": sp.Integer(3), "dL": sp.Integer(2), "depth": 2},
        kinds={"s": "obj", "depth": "posint"}),
    Row(_T + "depth_one_terms", {"d0": sp.Integer(3), "dL": sp.Integer(2)}),
    Row(_T + "class_spectrum_terms", {"K": 3, "d0": sp.Integer(4), "depth": sp.Integer(2)}, kinds={"K": "posint"}),
    Row(_T + "class_sharpness_symbolic", {"depth": sp.Integer(2), "alpha": 1}, kinds={"alpha": "pos"}),
    Row(_T + "critical_step_symbolic", {"depth": sp.Integer(2), "alpha": 1}, kinds={"alpha": "pos"}),
    Row(_T + "validate_depth", {"depth": 2}, kinds={"depth": "posint"}),
    Row(_T + "validate_widths", {"widths": W}),
    Row(_T + "validate_proportions", {"proportions": PROP, "atol": 1e-9}, kinds={"proportions": "posarr", "atol": "nonneg"}),
    Row(_T + "spectrum", {"widths": W, "sigma_xx_scale": 1.0, "singular_values": SV},
        kinds={"widths": "iarr+wide", "sigma_xx_scale": "pos", "singular_values": "nonnegarr"},
        ok={("singular_values", "empty"): "no non-zero singular value: Sigma_yx = 0 is a valid (rank-0) target"}),
    Row(_T + "numeric_rank", {"eigenvalues": np.array([2.0, 1.0, 1e-20]), "rtol": 1e-8}, kinds={"rtol": "pos"},
        ok={("eigenvalues", "empty"): "an empty spectrum has rank 0"}),
    Row(_T + "origin_spectrum", {"widths": W, "singular_values": SV},
        kinds={"widths": "iarr+wide", "singular_values": "nonnegarr"},
        ok={("singular_values", "empty"): "no non-zero singular value: Sigma_yx = 0 is a valid (rank-0) target"}),
    Row(_T + "class_singular_values", {"proportions": PROP}, kinds={"proportions": "posarr"}),
    Row(_T + "class_sharpness", {"proportions": PROP, "depth": 2, "sigma_xx_scale": 1.0},
        kinds={"proportions": "posarr", "depth": "posint", "sigma_xx_scale": "pos"}),
    Row(_T + "critical_step", {"proportions": PROP, "depth": 2, "sigma_xx_scale": 1.0},
        kinds={"proportions": "posarr", "depth": "posint", "sigma_xx_scale": "pos"}),
    Row(_T + "class_means_sharpness", {"proportions": PROP, "depth": 2, "radius": 1.0},
        kinds={"proportions": "posarr", "depth": "posint", "radius": "pos"}),
    Row(_T + "class_means_spectrum", {"proportions": PROP, "widths": (4, 3, 3), "radius": 1.0},
        kinds={"widths": "iarr+wide", "proportions": "posarr", "radius": "pos"}),
    Row(_T + "projected_spectrum", {"widths": W, "sigma_xx_scale": 1.0, "singular_values": SV, "input_rank": 2},
        kinds={"widths": "iarr+wide", "sigma_xx_scale": "pos", "singular_values": "nonnegarr", "input_rank": "posint"},
        ok={("singular_values", "empty"): "no non-zero singular value: Sigma_yx = 0 is a valid (rank-0) target"}),
    Row(_T + "class_spectrum", {"proportions": PROP, "widths": (4, 3, 3)},
        kinds={"widths": "iarr+wide", "proportions": "posarr"}),
    Row(_T + "gauss_newton_operator", {"mats": [np.eye(2, 3), np.eye(2)], "sigma_xx": np.eye(3)},
        kinds={"mats": "obj", "sigma_xx": "arr"}),
    Row(_T + "gauss_newton_spectrum", {"mats": [np.eye(2, 3), np.eye(2)], "sigma_xx": np.eye(3)},
        kinds={"mats": "obj", "sigma_xx": "arr"}),
    Row(_T + "balanced_gauss_newton_spectrum", {"sigma_xx": np.eye(3), "sigma_yx": np.eye(2, 3), "depth": 2},
        kinds={"depth": "posint"}),
    Row(_T + "two_layer_aligned_spectrum", {"widths": W, "singular_values": SV, "strengths": np.array([0.5, 0.2])},
        kinds={"widths": "iarr+wide", "singular_values": "nonnegarr"}),
    Row(_T + "aligned_mode_step", {"singular_values": SV, "roots": np.array([0.5, 0.3]), "eta": 0.1},
        kinds={"singular_values": "nonnegarr", "eta": "pos"}),
    # sims.linear_hessian
    Row(_S + "param_shapes", {"widths": W}),
    Row(_S + "n_params", {"widths": W}),
    Row(_S + "unflatten", {"theta": np.arange(10.0), "widths": W}),
    Row(_S + "flatten", {"mats": [np.ones((2, 3)), np.ones((2, 2))]}, kinds={"mats": "obj"}),
    Row(_S + "covariance_loss", lambda: {"theta": _data()[2], "sigma_xx": np.eye(3), "sigma_yx": np.eye(2, 3),
                                         "widths": W}),
    Row(_S + "forward", _d(theta="@", X="@", widths=W, activation="linear")),
    Row(_S + "loss", _d(theta="@", X="@", Y="@", widths=W, activation="linear")),
    Row(_S + "class_losses", _d(theta="@", X="@", Y="@", widths=W, activation="linear")),
    Row(_S + "dense_hessian", _d(theta="@", X="@", Y="@", widths=W, activation="linear"),
        kinds={"widths": "iarr+wide"}),
    Row(_S + "hessian_eigvalsh", _d(theta="@", X="@", Y="@", widths=W, activation="linear"),
        kinds={"widths": "iarr+wide"}),
    Row(_S + "top_eigenvalues", lambda: {**_d(theta="@", X="@", Y="@")(), "key": K(), "widths": W, "k": 1,
                                         "num_iter": 5, "activation": "linear"},
        kinds={"k": "posint", "num_iter": "posint"}),
    Row(_S + "class_data", lambda: {"key": K(), "counts": np.array([2, 2, 2]), "d0": 4, "alpha": 1.0},
        kinds={"counts": "posiarr", "d0": "posint", "alpha": "pos"}),
    Row(_S + "whitened_data", lambda: {"key": K(), "d0": 3, "dL": 2, "n": 6, "alpha": 1.0, "rank": 1},
        kinds={"d0": "posint", "dL": "posint", "n": "posint", "alpha": "pos", "rank": "posint"}),
    Row(_S + "balanced_minimum", lambda: {**_d(X="@", Y="@")(), "key": K(), "widths": W},
        ok={("key", "None"): "no key: the minimum without a random gauge"}, kinds={"widths": "iarr+wide"}),
    Row(_S + "random_gauge", lambda: {**_d(theta="@")(), "key": K(), "widths": W, "scale": 0.1},
        kinds={"scale": "nonneg"}),
    Row(_S + "balancedness_error", _d(theta="@", widths=W)),
    Row(_S + "init_params", lambda: {"key": K(), "widths": W, "scale": 0.1},
        kinds={"widths": "iarr+wide", "scale": "nonneg"}),
    Row(_S + "xavier_init", lambda: {"key": K(), "widths": W}, kinds={"widths": "iarr+wide"}),
    Row(_S + "aligned_init", _d(X="@", Y="@", widths=W, scale=0.1), kinds={"scale": "pos"}),
    Row(_S + "mode_strengths", lambda: {**_d(X="@", Y="@")(), "thetas": _data()[2], "widths": W}),
    Row(_S + "train_gd", lambda: {**_d(X="@", Y="@")(), "key": K(), "theta0": _data()[2], "widths": W,
                                  "eta": np.array([0.1]), "steps": 4, "record_every": 2, "lanczos_iter": 5},
        kinds={"eta": "posarr", "steps": "posint", "record_every": "posint", "lanczos_iter": "nonnegint"},
        ok={("lanczos_iter", "zero"): "lanczos_iter = 0 documents 'no sharpness tracking' (NaN records)"}, slow=True),
    Row(_S + "gd_sweep", lambda: {**_d(X="@", Y="@")(), "theta0": _data()[2], "widths": W,
                                  "etas": np.array([0.1, 0.2]), "steps": 3},
        kinds={"widths": "iarr+wide", "etas": "posarr", "steps": "posint"}, extra=_BAD_DTYPE),
    # the padded frame
    Row(_F + "frame_widths", {"widths": W, "lmax": 5}, kinds={"lmax": "posint+oversize"}),
    Row(_F + "active_indices", {"widths": W, "dmax": 6, "lmax": 5}, kinds={"dmax": "posint", "lmax": "posint"}),
    Row(_F + "embed", {"theta": np.arange(10.0), "widths": W}),
    Row(_F + "strip", {"matrix": np.eye(180), "widths": W}),
    Row(_F + "cases", lambda: {"result": _padded(), "select": np.array([1, 0])},
        ok={("select", "None"): "None selects every case",
            ("select", "empty"): "an empty selection is valid: no records",
            ("select", "boolarr"): "a boolean mask with one entry per case (here 2) is a documented form"}),
    # laws
    Row(_L + "class_means_data", lambda: {"key": K(), "counts": np.array([2, 2, 2]), "d0": 4, "radius": 1.0},
        kinds={"counts": "posiarr", "d0": "posint", "radius": "pos"}),
    Row(_L + "projected_data", lambda: {"key": K(), "d0": 3, "n": 6, "input_rank": 2, "alpha": 1.0, "dL": 2, "rank": 1},
        kinds={"d0": "posint", "n": "posint", "input_rank": "posint", "alpha": "pos", "dL": "posint",
               "rank": "posint"}),
    Row(_L + "min_norm_balanced_minimum", lambda: {**_d(X="@", Y="@")(), "key": K(), "widths": W},
        kinds={"widths": "iarr+wide"}),
    # spectrum / training sweeps
    Row(_P + "case_grid", lambda: {"key": K(), "widths": [(3, 3, 3)], "counts": (34, 33, 33), "rank": 1},
        kinds={"widths": "obj", "counts": "posiarr", "rank": "posint"}, slow=True),
    Row(_P + "constructed_minima", lambda: {"key": K(), "widths": [(3, 3, 3)], "counts": (34, 33, 33)},
        kinds={"widths": "obj"}, slow=True),
    Row(_P + "hessian_spectra", lambda: {"theta": np.zeros((1, 180)), "widths": _fw()[None], "depth": np.array([2]),
                                         "X": np.ones((1, 6, 100)), "Y": np.zeros((1, 6, 100)), "act": 0},
        kinds={"depth": "posiarr"}, slow=True),
    Row(_N + "aligned_path", {"singular_values": SV, "scale": 0.1, "eta": 0.1, "steps": 4},
        kinds={"singular_values": "nonnegarr", "scale": "pos", "eta": "pos", "steps": "posint"}),
    Row(_N + "train_sweep", lambda: {"key": K(), "counts": (34, 33, 33), "widths": [(3, 3, 3)], "eta": np.array([0.1]),
                                     "steps": 4, "record_every": 2},
        kinds={"counts": "posiarr", "widths": "obj", "eta": "posarr", "steps": "posint", "record_every": "posint"},
        slow=True),
    # NumPy references
    Row(_R + "numpy_dense_hessian", lambda: {"theta": _data()[2], "Sxx": np.eye(3), "Syx": np.eye(2, 3), "widths": W}),
    Row(_R + "numpy_hvp", lambda: {"theta": _data()[2], "V_": np.ones(10), "Sxx": np.eye(3), "Syx": np.eye(2, 3),
                                   "widths": W}),
    Row(_R + "numpy_lanczos", {"v0": np.ones(3), "matvec": np.negative, "num_iter": 2}, kinds={"num_iter": "posint"}),
    Row(_R + "numpy_balanced_minimum", lambda: {**_d(X="@", Y="@")(), "rng": np.random.default_rng(0), "widths": W,
                                                "gauge": 0.0},
        kinds={"widths": "iarr+wide", "rng": "obj", "gauge": "nonneg"}),
    Row(_R + "numpy_train_gd", lambda: {**_d(X="@", Y="@")(), "theta0": _data()[2], "widths": W,
                                        "etas": np.array([0.1]), "steps": 2},
        kinds={"etas": "posarr", "steps": "posint"}),
    Row(_R + "bench_cases", {"scale": "small"}),
]
