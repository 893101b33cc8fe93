"""Bad-input rows of the lr_horizon topic (see tests/_bad_input_table.py)."""
import jax
import numpy as np

from tests._bad_input_table import Row

_T = "theory.lr_horizon."
_M = {"beta": 2.0, "s": 0.5, "d": 100}
_MK = {"beta": "pos", "s": "pos", "d": "posint"}

ROWS = [
    Row(_T + "spectrum", dict(_M), kinds=dict(_MK)),
    Row(_T + "constant_step_loss", {"eta": np.array([0.1, 0.5]), "n_steps": 50, **_M, "sigma2": 0.5},
        kinds={"eta": "posarr", "n_steps": "posint", **_MK, "sigma2": "nonneg"}),
    Row(_T + "optimal_constant_step", {"n_steps": 50, **_M, "sigma2": 0.5, "xatol": 1e-6},
        kinds={"n_steps": "posint", **_MK, "sigma2": "pos", "xatol": "pos"}),
    Row(_T + "power_schedule", {"peak": 0.5, "n_steps": 10, "gamma": 3.0},
        kinds={"peak": "pos", "n_steps": "posint", "gamma": "nonneg"}),
    Row(_T + "schedule_loss", {"peak": 0.5, "n_steps": 10, "gamma": 3.0, **_M, "sigma2": 0.5},
        kinds={"peak": "pos", "n_steps": "posint", "gamma": "nonneg", **_MK, "sigma2": "nonneg"}),
    Row(_T + "optimal_peak", {"n_steps": 10, "gamma": 3.0, **_M, "sigma2": 0.5, "xatol": 1e-4},
        kinds={"n_steps": "posint", "gamma": "nonneg", **_MK, "sigma2": "pos", "xatol": "pos"}),
    Row(_T + "constant_exponent", {"s": 0.5}, kinds={"s": "pos"}),
    Row(_T + "loss_constants", {**_M, "sigma2": 0.5}, kinds={**_MK, "sigma2": "pos"}),
    Row(_T + "asymptotic_step", {"n_steps": np.array([10.0, 100.0]), **_M, "sigma2": 0.5},
        kinds={"n_steps": "posarr", **_MK, "sigma2": "pos"}),
    Row(_T + "slope_correction", {"n_steps": np.array([10.0, 100.0]), **_M, "sigma2": 0.5},
        kinds={"n_steps": "posarr", **_MK, "sigma2": "pos"}),
    Row(_T + "corrected_step", {"n_steps": np.array([10.0, 100.0]), **_M, "sigma2": 0.5},
        kinds={"n_steps": "posarr", **_MK, "sigma2": "pos"}),
    Row(_T + "bend_horizon", {"gap": 0.1, **_M, "sigma2": 0.02}, kinds={"gap": "pos", **_MK, "sigma2": "pos"}),
    Row(_T + "cutoff_step", {"n_steps": np.array([10.0, 100.0]), **_M, "sigma2": 0.5},
        kinds={"n_steps": "posarr", **_MK, "sigma2": "pos"}),
    Row(_T + "cutoff_horizon", {"gap": 0.1, **_M, "sigma2": 0.5}, kinds={"gap": "pos", **_MK, "sigma2": "pos"}),
    Row(_T + "cap_horizon", {**_M, "sigma2": 0.5}, kinds={**_MK, "sigma2": "pos"}),
    Row(_T + "peak_exponent", {"s": 1.0, "beta": 2.0}, kinds={"s": "pos", "beta": "pos"}),
    Row(_T + "hard_regime", {"s": 0.25, "beta": 2.0}, kinds={"s": "pos", "beta": "pos"}),
    Row(_T + "wsd_schedule", {"peak": 0.5, "n_steps": 10, "fraction": 0.3},
        kinds={"peak": "pos", "n_steps": "posint", "fraction": "pos"}),
    Row(_T + "optimal_wsd", {"n_steps": 20, **_M, "sigma2": 0.5}, kinds={"n_steps": "posint", **_MK, "sigma2": "pos"}),
    Row("sims.lr_horizon.constant_step_runs",
        {"key": jax.random.key(0), "eta": np.array([0.1, 0.5]), "n_steps": 4, **_M, "sigma2": 0.5, "n_chains": 2},
        kinds={"eta": "posarr", "n_steps": "posint", **_MK, "sigma2": "nonneg", "n_chains": "posint"}),
    Row("sims.reference.lr_horizon.constant_step_numpy",
        lambda: {"eta": np.array([0.1, 0.5]), "n_steps": 4, **_M, "sigma2": 0.5, "n_chains": 2,
                 "rng": np.random.default_rng(0)},
        kinds={"eta": "posarr", "n_steps": "posint", **_MK, "sigma2": "nonneg", "n_chains": "posint+oversize",
               "rng": "obj"},
        extra=[({"noise": np.zeros((2, 4, 35))}, "noise", "both rng and noise"),
               ({"rng": None, "noise": np.zeros((2, 4, 3))}, "noise", "shape"),
               ({"rng": None, "noise": np.full((2, 4, 35), np.inf)}, "noise", "inf")]),
    Row("sims.reference.lr_horizon.bench_cases", {"scale": "small"}),
]
