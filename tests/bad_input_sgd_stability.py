"""Bad-input rows of the SGD-stability topic (see tests/_bad_input_table.py)."""
from __future__ import annotations

import jax
import numpy as np

from tests._bad_input_table import Row

_X = np.random.default_rng(1).standard_normal((5, 2))
H5 = np.einsum("ni,nj->nij", _X, _X)
DIAG = np.abs(np.random.default_rng(2).standard_normal((4, 2))) + 0.1
ETA3 = np.array([0.1, 0.2, 0.3])
U, V_ = np.array([1.0, 0.5]), np.array([0.5, 1.0])
HB = {"hessians": "posarr+indefinite"}  # a zero Hessian is PSD, so of these only "neg" and "indefinite" are bad
HB_BIG = {"hessians": HB["hessians"] + "+bigarr"}  # Kronecker squares of 1e200 entries overflow float64
HB_OK = {("hessians", "zeros"): "zero Hessians are symmetric PSD (SGD does not move: a valid, if dull, problem)"}
METH = "heavy_ball"
Y5 = np.array([1.0, -0.5, 2.0, 0.3, -1.2])  # targets no linear model of _X fits: a regular, non-interpolating minimum
G5 = _X * (_X @ np.linalg.lstsq(_X, Y5, rcond=None)[0] - Y5)[:, None]  # per-sample gradients there (mean zero)
# second moments that are not: asymmetric, symmetric but indefinite, zero (no trace to normalize)
X0 = np.array([0.3, -0.2])  # a start off the minimum
NOT_PSD = [({"sigma0": np.array([[1.0, 0.5], [0.0, 1.0]])}, "sigma0", "asymmetric"),
           ({"sigma0": np.array([[1.0, 2.0], [2.0, 1.0]])}, "sigma0", "indefinite")]

_T = "theory.sgd_stability."
_S = "sims.sgd_stability."
_R = "sims.reference.sgd_stability."


def _key(seed=0):
    return lambda: {"key": jax.random.key(seed)}


def _map5():
    """The moment map of the regular minimum (H5, G5) at B = 2, eta = 0.1: a valid (7, 7) map for d = 2."""
    import sims.sgd_stability as sim

    return sim.nonzero_gradient_moment_map(H5, G5, 2, 0.1)


def _rate(values):
    return values - 1.0


ROWS = [
    # theory
    Row(_T + "check_hessians", {"hessians": H5}, kinds=HB, ok=HB_OK),
    Row(_T + "least_squares_hessians", {"X": _X}),
    Row(_T + "batch_weight", {"n": 5, "batch_size": 2, "sampling": "without"},
        kinds={"n": "posint", "batch_size": "posint"}),
    Row(_T + "kron_second_moment", {"hessians": H5, "batch_size": 2, "sampling": "without"},
        kinds={**HB_BIG, "batch_size": "posint"}, ok=HB_OK),
    Row(_T + "second_moment_operator", {"hessians": H5, "batch_size": 2, "eta": 0.1, "sampling": "without"},
        kinds={**HB_BIG, "batch_size": "posint", "eta": "pos+big"}, ok=HB_OK),
    Row(_T + "spectral_radius", {"hessians": H5, "batch_size": 2, "eta": 0.1, "sampling": "with"},
        kinds={**HB_BIG, "batch_size": "posint", "eta": "pos+big"}, ok=HB_OK),
    Row(_T + "ms_threshold", {"hessians": H5, "batch_size": 2, "sampling": "without"},
        kinds={**HB_BIG, "batch_size": "posint"},
        ok={("hessians", "big"): "the threshold scales as 1/|H| and is solved at unit scale: 1e200 Hessians are valid"}),
    Row(_T + "moment_trace", {"hessians": H5, "batch_size": 2, "eta": 0.1, "sigma0": np.eye(2), "n_steps": 3,
                              "sampling": "without"},
        kinds={**HB_BIG, "batch_size": "posint", "eta": "pos+big", "sigma0": "nonnegarr", "n_steps": "nonnegint+oversize"},
        ok=HB_OK,
        extra=NOT_PSD),
    Row(_T + "batch_means", {"hessians": H5, "batch_size": 2}, kinds={**HB, "batch_size": "posint"}, ok=HB_OK,
        extra=[({"hessians": -DIAG}, "hessians", "negdiagonals"),
               ({"hessians": H5 + np.array([[0.0, 1.0], [0.0, 0.0]])}, "hessians", "asymmetric")]),
    Row(_T + "lyapunov_commuting", {"curvatures": DIAG, "batch_size": 2, "eta": 0.5},
        kinds={"curvatures": "nonnegarr", "batch_size": "posint", "eta": "pos"}),
    Row(_T + "as_threshold_commuting", {"curvatures": DIAG, "batch_size": 2, "eta_max": 20.0},
        kinds={"curvatures": "nonnegarr", "batch_size": "posint", "eta_max": "pos"},
        ok={("eta_max", "None"): "the default: 4 / (smallest positive mean curvature)"}),
    Row(_T + "trace_bound", {"hessians": H5}, kinds=HB),
    Row(_T + "dln_gradients", {"u": U, "v": V_, "X": _X}),
    Row(_T + "dln_minimum", {"beta": np.array([1.0, -0.5]), "scale": 1.0}, kinds={"scale": "pos"}),
    Row(_T + "dln_sharpness_norm", {"u": U, "v": V_, "X": _X}),
    Row(_T + "necessary_conditions", {"hessians": H5, "batch_size": 2, "sampling": "without"},
        kinds={**HB, "batch_size": "posint"}),
    Row(_T + "least_squares_minimum", {"X": _X, "y": Y5}, extra=[({"y": Y5[:4]}, "y", "a target fewer than rows")]),
    Row(_T + "stationary_covariance", {"hessians": H5, "gradients": G5, "batch_size": 2, "eta": 0.05,
                                       "sampling": "without"},
        kinds={**HB_BIG, "batch_size": "posint", "eta": "pos+big"},
        ok={("gradients", "zeros"): "zero gradients are an interpolating minimum: the limit is 0, a valid answer"},
        extra=[({"gradients": G5 + 1.0}, "gradients", "nonzero mean (not a minimum)"),
               ({"eta": 10.0}, "eta", "beyond the mean-square threshold (no limit)")]),
    Row(_T + "delay_threshold", {"delay": 2}, kinds={"delay": "nonnegint"}),
    Row(_T + "delay_char_poly_sympy", {"delay": 2}, kinds={"delay": "nonnegint"}),
    Row(_T + "delay_boundary_residual_sympy", {"delay": 1}, kinds={"delay": "nonnegint"}),
    Row(_T + "delay_spectral_radius", {"a": 0.3, "delay": 2}, kinds={"delay": "nonnegint"}),
    Row(_T + "momentum_char_poly_sympy", {"method": METH}),
    Row(_T + "momentum_flip_sympy", {"method": METH}),
    Row(_T + "momentum_threshold", {"mu": 0.5, "method": METH}, kinds={"mu": "unit"}),
    Row(_T + "momentum_spectral_radius", {"c": 1.0, "mu": 0.5, "method": METH}, kinds={"mu": "unit"}),
    Row(_T + "heavy_ball_optimal", {"lam_min": 0.01, "lam_max": 1.0}, kinds={"lam_min": "pos+big", "lam_max": "pos+big"},
        ok={("lam_max", "big"): "a curvature of 1e200 is a valid (badly scaled) quadratic: the formulas take its root"},
        extra=[({"lam_max": 0.001}, "lam_max", "below_lam_min")]),
    Row(_T + "momentum_stationary_variance", {"eta": 0.5, "lam": 1.0, "mu": 0.5, "sigma": 1.0},
        kinds={"eta": "pos", "lam": "pos", "mu": "unit", "sigma": "nonneg"}),
    # simulators
    Row(_S + "enumerate_batches", {"hessians": H5, "batch_sizes": np.array([1, 2])},
        kinds={**HB, "batch_sizes": "posiarr"}, ok=HB_OK),
    Row(_S + "kron_enumerated", {"hessians": H5, "batch_size": np.array([1, 2])},
        kinds={**HB, "batch_size": "posiarr"}, ok=HB_OK),
    Row(_S + "sampled_batch_noise", lambda: {"key": jax.random.key(0), "hessians": H5, "batch_size": np.array([1, 2]),
                                             "n_batches": 4, "n_groups": 2},
        kinds={**HB, "batch_size": "posiarr", "n_batches": "posint+oversize", "n_groups": "posint"}, ok=HB_OK),
    Row(_S + "nonzero_gradient_moment_map", {"hessians": H5, "gradients": G5, "batch_size": 2, "eta": 0.1},
        kinds={**HB_BIG, "batch_size": "posint", "eta": "pos+big"}, ok=HB_OK,
        extra=[({"gradients": G5[:4]}, "gradients", "a row fewer than hessians")]),
    Row(_S + "evolve_moments", lambda: {"moment_map": _map5(), "x0": X0, "squarings": 3},
        kinds={"x0": "arr+zeros", "squarings": "nonnegint"},
        extra=[({"moment_map": np.eye(12)}, "moment_map", "size not d^2 + d + 1"),
               ({"moment_map": 2 * np.eye(7)}, "moment_map", "last row not e'"), ({"x0": np.ones(3)}, "x0", "length")]),
    Row(_S + "second_moment_after", lambda: {"moment_map": _map5(), "x0": X0, "steps": 4},
        kinds={"x0": "arr+zeros", "steps": "nonnegint"}),
    Row(_S + "moment_log_growth", lambda: {"moment_map": _map5(), "x0": X0, "steps": 4},
        kinds={"x0": "arr+zeros", "steps": "posint"}),
    Row(_S + "sgd_paths_second_moment", lambda: {"key": jax.random.key(4), "hessians": H5, "gradients": G5,
                                                 "batch_size": 2, "eta": 0.1, "x0": X0, "n_steps": 3, "n_paths": 4,
                                                 "bound": 1e100},
        kinds={**HB, "batch_size": "posint", "eta": "pos", "n_steps": "posint+oversize", "n_paths": "posint+oversize",
               "bound": "pos"}, ok=HB_OK,
        extra=[({"n_paths": 1}, "n_paths", "one path (no standard error)")]),
    Row(_S + "moment_growth", {"hessians": H5, "batch_size": 2, "eta": ETA3, "n_steps": 4, "sigma0": np.eye(2)},
        kinds={**HB, "batch_size": "posint", "eta": "posarr", "n_steps": "posint", "sigma0": "nonnegarr"},
        ok={**HB_OK, ("sigma0", "None"): "the default: the identity"}),
    Row(_S + "sgd_paths", lambda: {"key": jax.random.key(0), "hessians": H5, "batch_size": 2, "eta": ETA3,
                                   "theta0": np.array([1.0, 0.0]), "n_steps": 3, "n_paths": 4, "bound": 1e100},
        kinds={**HB, "batch_size": "posint", "eta": "posarr", "n_steps": "posint", "n_paths": "posint+oversize",
               "bound": "pos"}, ok=HB_OK),
    Row(_S + "lyapunov_paths", lambda: {"key": jax.random.key(1), "hessians": H5, "batch_size": 2, "eta": ETA3,
                                        "n_steps": 4, "n_paths": 4, "burn": 1, "theta0": np.array([1.0, 0.0])},
        kinds={**HB, "batch_size": "posint", "eta": "posarr", "n_steps": "posint", "n_paths": "posint+oversize",
               "burn": "nonnegint"}, ok={**HB_OK, ("theta0", "None"): "the default: a unit vector"}),
    Row(_S + "delayed_growth", {"a": np.array([0.1, 0.5, 1.0]), "delay": 2, "n_steps": 8, "max_delay": 8},
        kinds={"delay": "nonnegint", "n_steps": "posint", "max_delay": "nonnegint"}),
    Row(_S + "delayed_noisy", lambda: {"key": jax.random.key(2), "eta": np.array([0.1, 0.5, 0.9]), "delay": 1,
                                       "sigma": 0.1, "lam": 1.0, "kappa": 1.0, "n_steps": 4, "n_paths": 3,
                                       "max_delay": 8, "bound": 1000.0},
        kinds={"eta": "posarr", "delay": "nonnegint", "sigma": "nonneg", "lam": "pos", "kappa": "nonneg",
               "n_steps": "posint", "n_paths": "posint+oversize", "max_delay": "nonnegint", "bound": "pos"}),
    Row(_S + "momentum_growth", {"eta": np.array([0.5, 1.0, 2.5]), "mu": 0.5, "method": METH, "lam": 1.0, "n_steps": 8},
        kinds={"eta": "posarr", "mu": "unit", "lam": "pos", "n_steps": "posint"}),
    Row(_S + "momentum_noise", lambda: {"key": jax.random.key(3), "eta": np.array([0.5, 1.0]), "mu": 0.5,
                                        "sigma": 1.0, "method": METH, "lam": 1.0, "n_steps": 4, "burn": 1,
                                        "n_paths": 3, "bound": 1e100},
        kinds={"eta": "posarr", "mu": "unit", "sigma": "nonneg", "lam": "pos", "n_steps": "posint",
               "burn": "nonnegint", "n_paths": "posint+oversize", "bound": "pos"}),
    Row(_S + "momentum_map", {"eta": np.array([0.5, 1.0, 2.5]), "mu": 0.5, "lams": np.array([0.1, 1.0]),
                              "method": METH},
        kinds={"eta": "posarr", "mu": "unit", "lams": "posarr"},
        extra=[({"lams": np.ones((2, 2))}, "lams", "rows_not_per_point")]),
    Row(_S + "momentum_norms", {"eta": np.array([0.5, 1.0]), "mu": 0.5, "lams": np.array([0.1, 1.0]), "method": METH,
                                "n_steps": 8},
        kinds={"eta": "posarr", "mu": "unit", "lams": "posarr", "n_steps": "posint+oversize"},
        ok={("lams", "ndim"): "a column (m, 1) is one curvature per grid point, a valid quadratic (here one run lands on "
                              "x_1 = 0 exactly: log-norm -inf, as for the scalar simulator)"}),
    Row(_S + "dln_hessians", {"u": U, "v": V_, "X": _X, "y": _X @ (U * V_)},
        ok={("y", "None"): "the default: the labels the net fits exactly"}),
    Row("sims.edges.refine_crossing", {"rate": _rate, "lo": np.array([0.5]), "hi": np.array([2.0]), "n_points": 5,
                                 "n_rounds": 2, "geometric": True},
        kinds={"lo": "posarr", "n_points": "posint", "n_rounds": "posint"}),
    # NumPy references
    Row(_R + "batch_means_numpy", {"hessians": H5, "batch_size": 2}, kinds={**HB, "batch_size": "posint"}, ok=HB_OK),
    Row(_R + "kron_enumerated_numpy", {"hessians": H5, "batch_size": 2}, kinds={**HB, "batch_size": "posint"},
        ok=HB_OK),
    Row(_R + "tail_slope_numpy", {"ells": np.arange(8.0)},
        extra=[({"ells": np.arange(2.0)}, "ells", "tooshort"), ({"ells": np.array([0.0, 1.0, np.inf])}, "ells", "posinf")]),
    Row(_R + "moment_growth_numpy", {"hessians": H5, "batch_size": 2, "eta": ETA3, "n_steps": 4, "sigma0": np.eye(2)},
        kinds={**HB, "batch_size": "posint", "eta": "posarr", "n_steps": "posint", "sigma0": "nonnegarr"}, ok=HB_OK,
        extra=NOT_PSD + [({"sigma0": np.zeros((2, 2))}, "sigma0", "zero"), ({"n_steps": 2}, "n_steps", "noslope")]),
    Row(_R + "delayed_growth_numpy", {"a": np.array([0.1, 0.5]), "delay": 2, "n_steps": 8, "max_delay": 8},
        kinds={"delay": "nonnegint", "n_steps": "posint", "max_delay": "nonnegint"},
        extra=[({"delay": 9}, "delay", "above_max_delay")]),
    Row(_R + "momentum_growth_numpy", {"eta": np.array([0.5, 1.0]), "mu": np.array([0.5, 0.5]), "nesterov": False,
                                       "n_steps": 8, "lam": 1.0},
        kinds={"eta": "posarr", "mu": "nonnegarr", "n_steps": "posint", "lam": "pos"},
        extra=[({"mu": np.array([0.5, 1.0])}, "mu", "one"), ({"mu": np.full(3, 0.5)}, "mu", "rows")]),
    Row(_R + "lyapunov_numpy", {"hessians": H5, "batch_size": 2, "eta": 0.3, "n_steps": 4, "n_paths": 3, "burn": 1,
                                "seed": 0},
        kinds={**HB, "batch_size": "posint", "eta": "pos", "n_steps": "posint", "n_paths": "posint+oversize",
               "burn": "nonnegint", "seed": "nonnegint"}, ok=HB_OK,
        extra=[({"burn": 4}, "burn", "whole_run")]),
    Row(_R + "bench_cases", {"scale": "small"}),
]
