"""Bad-input rows of the batch-size topic (theory.batch_size, theory.batch_size_fit, sims.batch_size,
sims.reference.batch_size; see tests/_bad_input_table.py)."""
from __future__ import annotations

import jax
import numpy as np

from tests._bad_input_table import Row

_T = "theory.batch_size."
_H = np.diag([1.0, 0.5, 0.1])
_S = np.diag([1.0, 2.0, 0.5])
_G = np.array([1.0, -0.5, 0.3])
_LAM = np.array([1.0, 0.5, 0.25])
_ONE = {"G": _G, "H": _H, "Sigma": _S}
_PSD = {"H": "arr+indefinite", "Sigma": "arr+indefinite", "G": "arr+zeros"}
_NQM = {"lam": _LAM, "sigma2": _LAM.copy(), "m0": 1.0 / _LAM, "target": 0.5}
_NQM_KINDS = {"lam": "posarr", "sigma2": "nonnegarr+zeros", "m0": "posarr", "target": "unit"}
_FIT_B = np.array([1.0, 2.0, 4.0, 8.0, 16.0, 32.0])
_FIT_S = 100.0 * (1 + 5.0 / _FIT_B)

ROWS = [
    Row(_T + "noise_scale", dict(_ONE), kinds=_PSD),
    Row(_T + "simple_noise_scale", {"G": _G, "Sigma": _S}, kinds={"G": "arr+zeros", "Sigma": "arr+indefinite"}),
    Row(_T + "max_step", {"G": _G, "H": _H}, kinds={"G": "arr+zeros", "H": "arr+indefinite"}),
    Row(_T + "optimal_step", _ONE | {"batch_size": np.array([1.0, 4.0])}, kinds=_PSD | {"batch_size": "posarr"}),
    Row(_T + "optimal_decrease", _ONE | {"batch_size": np.array([1.0, 4.0])}, kinds=_PSD | {"batch_size": "posarr"}),
    Row(_T + "expected_one_step_loss", _ONE | {"batch_size": 2.0, "eta": np.array([0.1, 0.5])},
        kinds=_PSD | {"batch_size": "pos", "eta": "nonnegarr"}),
    Row(_T + "greedy_steps", _NQM | {"batch_size": np.array([0.5, 2.0]), "max_steps": 10_000},
        kinds=_NQM_KINDS | {"batch_size": "posarr", "max_steps": "posint"}),
    Row(_T + "greedy_min_steps", _NQM | {"max_steps": 10_000}, kinds=_NQM_KINDS | {"max_steps": "posint"}),
    Row(_T + "greedy_min_examples", dict(_NQM), kinds=_NQM_KINDS),
    Row(_T + "hyperbola_product", {"steps": np.array([20.0, 30.0]), "examples": np.array([80.0, 30.0]),
                                   "s_min": 10.0, "e_min": 20.0},
        kinds={"steps": "posarr", "examples": "posarr", "s_min": "pos", "e_min": "pos"}),
    Row(_T + "hyperbola_steps", {"batch_size": np.array([1.0, 4.0]), "s_min": 10.0, "b_crit": 5.0},
        kinds={"batch_size": "posarr", "s_min": "pos", "b_crit": "nonneg"}),
    Row(_T + "linear_rule_ratio", {"lam": _LAM, "sigma_a": np.ones(3), "eta1": 0.05, "batch_size": np.array([1.0, 4.0])},
        kinds={"lam": "posarr", "sigma_a": "nonnegarr+zeros", "eta1": "pos", "batch_size": "posarr"},
        extra=[({"batch_size": np.array([1.0, 60.0])}, "batch_size", "beyond B_max")]),
    Row(_T + "linear_rule_limit", {"lam": _LAM, "eta1": 0.05}, kinds={"lam": "posarr", "eta1": "pos"}),
    Row(_T + "linear_rule_edge", {"lam": _LAM, "sigma_a": np.ones(3), "eta1": 0.05, "level": 1.1},
        kinds={"lam": "posarr", "sigma_a": "nonnegarr+zeros", "eta1": "pos", "level": "pos"},
        extra=[({"level": 1.0}, "level", "no growth")]),
    Row(_T + "sign_rule_floor", {"a": 1.0, "eta": 0.01, "sigma": 1.0, "batch_size": 4.0},
        kinds={"a": "pos", "eta": "pos", "sigma": "pos", "batch_size": "pos"}),
    Row(_T + "sqrt_rule_edge", {"a": 1.0, "eta1": 0.01, "sigma": 1.0, "level": 1.1, "b_max": 1e5},
        kinds={"a": "pos", "eta1": "pos", "sigma": "pos", "level": "pos", "b_max": "pos"},
        extra=[({"b_max": 2.0}, "b_max", "too small to reach the level")]),
    Row(_T + "half_life_beta2", {"beta2_ref": 0.99, "batch_ref": 1.0, "batch_size": np.array([1.0, 8.0])},
        kinds={"beta2_ref": "unit", "batch_ref": "pos", "batch_size": "posarr"}),
    Row(_T + "token_half_life", {"beta2": np.array([0.9, 0.99]), "batch_size": np.array([1.0, 8.0])},
        kinds={"beta2": "posarr", "batch_size": "posarr"}, extra=[({"beta2": np.array([0.9, 1.0])}, "beta2", "one")]),
    Row(_T + "ema_rise", {"beta2": np.array([0.9, 0.99]), "n_steps": 10},
        kinds={"beta2": "posarr", "n_steps": "posint+oversize"}, extra=[({"beta2": np.array([1.0])}, "beta2", "one")]),
    Row(_T + "linear_beta2_edge", {"beta2_ref": 0.999, "batch_ref": 1.0, "level": 0.9},
        kinds={"beta2_ref": "unit", "batch_ref": "pos", "level": "unit"}),
    Row("sims.batch_size.second_moment_ema", lambda: {"key": jax.random.key(0), "beta2": np.array([0.9, 0.5]),
                                                      "batch_size": np.array([1.0, 4.0]), "sigma": 1.0, "n_steps": 5,
                                                      "n_chains": 4, "paired": False},
        kinds={"key": "key", "beta2": "posarr", "batch_size": "posarr", "sigma": "pos", "n_steps": "posint+oversize",
               "n_chains": "posint", "paired": "bool"},
        extra=[({"beta2": np.array([0.9, 1.0])}, "beta2", "one"), ({"batch_size": np.array([1.0])}, "batch_size", "short")]),
    Row("theory.batch_size_fit.fit_hyperbola", {"batch_size": _FIT_B, "steps": _FIT_S},
        kinds={"batch_size": "posarr", "steps": "posarr"},
        extra=[({"steps": _FIT_S[:-1]}, "steps", "one value fewer than batch sizes"),
               ({"batch_size": np.full(6, 4.0)}, "batch_size", "a single batch size")]),
    Row("sims.batch_size.one_step", lambda: {"key": jax.random.key(0), "theta": np.array([1.0, -1.0, 0.5]), "H": _H,
                                             "Sigma": _S, "batch_size": np.array([1, 3]), "n_draws": 4},
        kinds={"key": "key", "theta": "arr", "H": "arr+indefinite", "Sigma": "arr+indefinite", "batch_size": "posiarr",
               "n_draws": "posint+oversize"}),
    # NumPy references
    Row("sims.reference.batch_size.one_step_numpy",
        lambda: {"theta": np.array([1.0, -1.0, 0.5]), "H": _H, "Sigma": _S, "batch_size": np.array([1, 3]), "n_draws": 4,
                 "rng": np.random.default_rng(0)},
        kinds={"theta": "arr", "H": "arr+indefinite", "Sigma": "arr+indefinite", "batch_size": "posiarr",
               "n_draws": "posint+oversize", "rng": "obj"},
        extra=[({"sign_sums": np.ones((2, 4, 3), np.int64)}, "sign_sums", "both rng and sign_sums"),
               ({"rng": None, "sign_sums": np.full((2, 4, 3), 2)}, "sign_sums", "the parity of B"),
               ({"rng": None, "sign_sums": np.full((2, 4, 3), 5)}, "sign_sums", "beyond B"),
               ({"rng": None, "sign_sums": np.ones((2, 3, 3), np.int64)}, "sign_sums", "shape"),
               ({"rng": None, "sign_sums": np.ones((2, 4, 3))}, "sign_sums", "floats")]),
    Row("sims.reference.batch_size.second_moment_ema_numpy",
        lambda: {"beta2": np.array([0.9, 0.5]), "n_steps": 5, "n_chains": 4, "rng": np.random.default_rng(0),
                 "paired": False},
        kinds={"beta2": "posarr", "n_steps": "posint+oversize", "n_chains": "posint+oversize", "rng": "obj",
               "paired": "bool"},
        extra=[({"beta2": np.array([0.9, 1.0])}, "beta2", "one"),
               ({"noise": np.zeros((2, 4, 5))}, "noise", "both rng and noise"),
               ({"rng": None, "noise": np.zeros((4, 5))}, "noise", "unpaired shape"),
               ({"rng": None, "noise": np.full((2, 4, 5), np.nan)}, "noise", "nan")]),
    Row("sims.reference.batch_size.bench_cases", {"scale": "small"}),
]
