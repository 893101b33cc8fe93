"""Bad-input rows of the noisy-quadratic topic and its shared NQM / optimizer modules (see tests/_bad_input_table.py).

``theory.nqm``, ``sims.nqm`` and ``sims.optimizers`` are shared by several topics (the results cache
counts them as shared sources), so their rows report under ``engine``.
"""
from __future__ import annotations

import jax
import numpy as np

from sims import optimizers as _opt
from tests._bad_input_table import Row

K = lambda: jax.random.key(0)  # noqa: E731
LAM = np.array([1.0, 0.5])
ETA = np.full(4, 0.1)
MTH = "heavy_ball"
_H = _opt.Hyper(momentum=0.5)

_N = "theory.nqm."
_T = "theory.noisy_quadratic."
_S = "sims.noisy_quadratic."
_M = "sims.nqm."
_O = "sims.optimizers."

ROWS = [
    Row(_N + "stationary_second_moment", {"lam": LAM, "eta": 0.1, "sigma_a": 1.0, "sigma_m": 0.0, "batch_size": 1},
        kinds={"lam": "posarr", "eta": "pos", "sigma_a": "nonneg", "sigma_m": "nonneg", "batch_size": "posint"}, ok={("sigma_a", "vector"): "one additive noise level per curvature"}),
    Row(_N + "stationary_excess", {"lam": LAM, "eta": 0.1, "sigma_a": 1.0, "sigma_m": 0.0, "batch_size": 1},
        kinds={"lam": "posarr", "eta": "pos", "sigma_a": "nonneg", "sigma_m": "nonneg", "batch_size": "posint"}, ok={("sigma_a", "vector"): "one additive noise level per curvature"}),
    Row(_N + "moment_recursion", {"lam": LAM, "eta": ETA, "m0": np.ones(2), "sigma_a": 1.0, "sigma_m": 0.0,
                                  "batch_size": 1},
        kinds={"lam": "nonnegarr", "eta": "nonnegarr", "m0": "nonnegarr", "sigma_a": "nonneg", "sigma_m": "nonneg",
               "batch_size": "posint"}, ok={("sigma_a", "vector"): "one additive noise level per curvature",
                                           ("eta", "ndim"): "an (S, T) array is S schedules at once"}),
    Row(_N + "final_second_moment", {"lam": LAM, "eta": ETA, "m0": np.ones(2), "sigma_a": 1.0, "sigma_m": 0.0,
                                     "batch_size": 1},
        kinds={"lam": "nonnegarr", "eta": "nonnegarr", "m0": "nonnegarr", "sigma_a": "nonneg", "sigma_m": "nonneg",
               "batch_size": "posint"}, ok={("sigma_a", "vector"): "one additive noise level per curvature"}),
    Row(_N + "expected_loss", {"lam": LAM, "m": np.ones((3, 2))}, kinds={"lam": "nonnegarr", "m": "nonnegarr"},
        ok={("m", "inf"): "an unstable schedule's second moment overflows to inf (moment_recursion); its loss is inf"}),
    Row(_N + "full_moment_recursion", {"H": np.diag(LAM), "eta": ETA, "S0": np.eye(2), "sigma_a": 1.0, "sigma_m": 0.0,
                                       "batch_size": 1},
        kinds={"eta": "nonnegarr", "sigma_a": "nonneg", "sigma_m": "nonneg", "batch_size": "posint"}, ok={("sigma_a", "vector"): "one additive noise level per curvature"}),
    Row(_N + "momentum_characteristic_polynomial", {"method": MTH}),
    Row(_N + "momentum_threshold", {"mu": 0.5, "method": MTH}, kinds={"mu": "unit"}),
    Row(_N + "critical_curvature", {"eta": 0.1, "mu": 0.5, "method": MTH}, kinds={"eta": "pos", "mu": "unit"}),
    Row(_N + "momentum_variance_sympy", {"method": MTH}),
    Row(_N + "momentum_stationary_variance", {"eta": 0.5, "lam": 1.0, "mu": 0.5, "sigma": 1.0, "method": MTH},
        kinds={"eta": "pos", "lam": "pos", "mu": "unit", "sigma": "nonneg"}),
    Row(_T + "schedule", {"kind": "wsd", "T": 10, "peak": 0.1, "cooldown": 0.2, "floor": 0.1},
        kinds={"T": "posint", "peak": "pos", "cooldown": "unit", "floor": "unit"}),
    Row(_T + "tuned_final_loss", {"lam": LAM, "sigma_a": 1.0, "kind": "wsd", "T": 10},
        kinds={"lam": "posarr", "sigma_a": "nonneg", "T": "posint"}, ok={("sigma_a", "vector"): "one additive noise level per curvature"}),
    Row(_T + "d2z_cosine_ratio", {"lam": LAM, "sigma_a": 1.0, "T": 10}, kinds={"lam": "posarr", "sigma_a": "nonneg",
                                                                              "T": "posint"}, slow=True, ok={("sigma_a", "vector"): "one additive noise level per curvature"}),
    Row(_T + "wsd_plateau_excess", {"lam": LAM, "eta": 0.1, "sigma_a": 1.0},
        kinds={"lam": "posarr", "eta": "pos", "sigma_a": "nonneg"}, ok={("sigma_a", "vector"): "one additive noise level per curvature"}),
    Row(_T + "last_iterate_bound", {"eta": ETA, "D": 1.0, "G": 1.0}, kinds={"eta": "posarr", "D": "nonneg", "G": "nonneg"},
        ok={("G", "vector"): "one gradient bound per step (length T checked)"}),
    Row(_T + "merge_effective_schedule", {"eta": 0.1, "checkpoints": np.array([2, 4]), "weights": np.array([0.5, 0.5]),
                                          "T": 4},
        kinds={"eta": "pos", "checkpoints": "posiarr", "weights": "nonnegarr", "T": "posint"}),
    Row(_T + "merge_error_variance", {"lam": LAM, "eta": 0.1, "checkpoints": np.array([2, 4]),
                                      "weights": np.array([0.5, 0.5]), "T": 4, "sigma": 1.0},
        kinds={"lam": "nonnegarr", "eta": "pos", "checkpoints": "posiarr", "weights": "nonnegarr", "T": "posint",
               "sigma": "nonneg"}),
    Row(_T + "merge_weights_for_schedule", {"eta_eff": np.array([0.1, 0.1, 0.05, 0.0]), "eta": 0.1},
        kinds={"eta_eff": "nonnegarr", "eta": "pos"}),
    Row(_T + "adamw_ema_weights", {"eta": ETA, "wd": 0.1}, kinds={"eta": "nonnegarr", "wd": "pos"}),
    Row(_T + "ema_variance_ratio", {"alpha": 0.1, "eta": 0.1, "lam": 1.0}, kinds={"alpha": "unit", "eta": "pos",
                                                                                 "lam": "pos"}),
    Row(_T + "ema_bias", {"alpha": 0.1, "eta": 0.1, "lam": 1.0, "t": np.arange(4), "x0": 1.0},
        kinds={"alpha": "unit", "eta": "pos", "lam": "pos", "t": "iarr"}),
    Row(_T + "ema_bias_rate", {"alpha": 0.1, "eta": 0.1, "lam": 1.0}, kinds={"alpha": "unit", "eta": "pos",
                                                                            "lam": "pos"}),
    Row(_T + "uniform_average_bias", {"eta": 0.1, "lam": 1.0, "t": np.arange(1, 5), "x0": 1.0},
        kinds={"eta": "pos", "lam": "pos", "t": "posiarr"}),
    Row(_T + "wd_angular_update", {"eta": 0.1, "wd": 0.1, "momentum": 0.5}, kinds={"eta": "pos", "wd": "pos",
                                                                                  "momentum": "unit"}),
    Row(_T + "wd_equilibrium_norm", {"eta": 0.1, "wd": 0.1, "grad_scale": 1.0, "momentum": 0.5},
        kinds={"eta": "pos", "wd": "pos", "grad_scale": "pos", "momentum": "unit"}),
    Row(_T + "sign_wd_angular_update", {"eta": 0.1, "wd": 0.1}, kinds={"eta": "pos", "wd": "pos"}),
    Row(_T + "sign_wd_equilibrium_norm", {"eta": 0.1, "wd": 0.1, "d": 4}, kinds={"eta": "pos", "wd": "pos",
                                                                               "d": "posint"}),
    Row(_T + "sgd_wd_exact", {"eta": 0.1, "wd": 0.1, "grad_scale": 1.0}, kinds={"eta": "pos", "wd": "pos",
                                                                              "grad_scale": "pos"}),
    Row(_T + "wd_norm_relaxation", {"eta": 0.1, "wd": 0.1}, kinds={"eta": "pos", "wd": "pos"}),
    Row(_T + "lion_box_radius", {"eta": 0.1, "wd": 0.1}, kinds={"eta": "pos", "wd": "pos"}),
    Row(_T + "box_minimizer", {"H": np.diag(LAM), "center": np.array([2.0, -0.5]), "radius": 1.0},
        kinds={"radius": "pos"}),
    Row(_T + "l2_minimizer", {"H": np.diag(LAM), "center": np.array([2.0, -0.5]), "wd": 0.1}, kinds={"wd": "nonneg"}),
    Row(_T + "logistic_minimizer", {"X": np.random.default_rng(0).standard_normal((8, 2)),
                                    "y": np.array([-1, 1] * 4, dtype=float), "radius": 1.0, "wd": 0.1},
        kinds={"radius": "pos", "wd": "nonneg"}, ok={("radius", "None"): "no box (the default)"}),
    Row(_T + "schedule_from_log", {"step": np.arange(5), "lr": np.full(5, 0.1)}, kinds={"step": "iarr",
                                                                                       "lr": "nonnegarr"}),
    Row(_T + "fit_nqm_to_log", {"step": np.arange(20), "lr": np.full(20, 0.1),
                                "loss": 1.0 / (1.0 + np.arange(20.0)), "n_modes": 4},
        kinds={"step": "iarr", "lr": "nonnegarr", "loss": "nonnegarr", "n_modes": "posint"}, slow=True),
    # simulators
    Row(_M + "noise", lambda: {"key": K(), "shape": (3,), "law": "gaussian", "df": 0}, kinds={"shape": "widths"},
        extra=[({"law": "student", "df": 0}, "df", "student df 0"), ({"law": "student", "df": 65}, "df", "student df 65")]),
    Row(_M + "simulate", lambda: {"key": K(), "T": 8, "eta": 0.1, "x0": np.ones(2), "lam": LAM, "sigma_a": 0.5,
                                  "n_chains": 2, "n_rec": 2},
        kinds={"T": "posint", "eta": "pos", "lam": "posarr", "sigma_a": "nonneg", "n_chains": "posint",
               "n_rec": "posint"}, ok={("sigma_a", "vector"): "one additive noise level per coordinate",
                                       ("lam", "zeros"): "a flat direction (zero curvature) is a valid problem: "
                                                         "the iterate random-walks under additive noise"}),
    Row(_M + "summarize", {"samples": np.array([1.0, 2.0, 3.0]), "diverged": np.array([False, False, True])},
        kinds={"diverged": "obj"}, ok={("samples", "nan"): "a non-finite sample counts as a diverged run",
                                       ("samples", "inf"): "a non-finite sample counts as a diverged run"}),
    Row(_O + "transform", {"method": MTH}),
    Row(_O + "init", {"method": MTH, "params": np.ones(2), "hyper": _H}, kinds={"hyper": "obj"}),
    Row(_O + "step", lambda: {"method": MTH, "grad": np.ones(2), "params": np.ones(2), "eta": 0.1, "hyper": _H,
                              "state": _opt.init(MTH, np.ones(2), _H)},
        kinds={"eta": "nonneg", "state": "obj", "hyper": "obj"}),
    Row(_S + "abs_sgd", lambda: {"key": K(), "eta": np.array([0.1, 0.2]), "x0": 1.0, "sigma": 0.5, "n_chains": 4},
        kinds={"eta": "posarr", "sigma": "nonneg", "n_chains": "posint"}),
    Row(_S + "sphere_walk", lambda: {"key": K(), "eta": 0.1, "wd": 0.1, "momentum": 0.5, "method": MTH, "d": 4,
                                     "T": 8, "n_rec": 2, "n_chains": 2},
        kinds={"eta": "pos", "wd": "nonneg", "momentum": "unit", "d": "posint", "T": "posint", "n_rec": "posint",
               "n_chains": "posint"},
        ok={("eta", "vector"): "one run per step size", ("wd", "vector"): "one run per decay"}),
    Row(_S + "logistic_sphere", {"X": np.random.default_rng(0).standard_normal((8, 3)),
                                 "y": np.array([-1, 1] * 4, dtype=float), "w0": np.ones(3), "eta": 0.1, "wd": 0.1,
                                 "T": 8, "n_rec": 2},
        kinds={"eta": "pos", "wd": "nonneg", "T": "posint", "n_rec": "posint"},
        ok={("eta", "vector"): "one configuration per step size", ("wd", "vector"): "one configuration per decay"}),
    Row(_S + "lion_logistic", {"X": np.random.default_rng(0).standard_normal((8, 3)),
                               "y": np.array([-1, 1] * 4, dtype=float), "x0": np.zeros(3), "eta": np.full(4, 0.1),
                               "wd": 0.5, "b1": 0.9, "b2": 0.99, "n_rec": 2},
        kinds={"eta": "nonnegarr", "wd": "nonneg", "b1": "unit", "b2": "unit", "n_rec": "posint"},
        ok={("wd", "vector"): "one configuration per decay", ("b1", "vector"): "one configuration per beta1",
            ("b2", "vector"): "one configuration per beta2", ("eta", "ndim"): "a (G, T) array is G schedules"}),
    Row("sims.reference.noisy_quadratic.nqm_numpy",
        {"lam": LAM, "eta": np.full((2, 4), 0.1), "x0": np.ones((2, 2)), "method": MTH, "momentum": 0.5,
         "noise": np.zeros((2, 4, 2)), "center": np.zeros(2), "n_rec": 2},
        kinds={"lam": "nonnegarr", "eta": "nonnegarr", "momentum": "unit", "n_rec": "posint"},
        ok={("momentum", "vector"): "one momentum per run (length R checked)",
            ("noise", "None"): "no gradient noise (the default)", ("center", "None"): "the origin (the default)"}),
    Row("sims.reference.noisy_quadratic.abs_numpy",
        {"eta": np.full((2, 4), 0.1), "x0": 1.0, "xi": np.ones((2, 3))}, kinds={"eta": "nonnegarr"}),
    Row("sims.reference.noisy_quadratic.bench_cases", {"scale": "small"}),
]
