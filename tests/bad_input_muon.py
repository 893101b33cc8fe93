"""Bad-input rows of the muon topic (see tests/_bad_input_table.py)."""
import jax
import numpy as np

from tests._bad_input_table import Row

_M = np.arange(1.0, 7.0).reshape(3, 2)
_Y = np.array([[2.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
_S = np.array([2.0, 1.0])

ROWS = [
    Row("theory.muon.ns_poly_expr", {"coeffs": (3.4445, -4.7750, 2.0315)}, kinds={"coeffs": "arr"}),
    Row("theory.muon.ns_map", {"x": np.array([0.1, 0.5]), "steps": 5}, kinds={"x": "nonnegarr", "steps": "nonnegint"},
        extra=[({"x": np.array([0.5, 1.5])}, "x", "above1")]),
    Row("theory.muon.ns_band", {"steps": 3, "low": 1e-3}, kinds={"steps": "posint", "low": "pos"},
        extra=[({"low": 2.0}, "low", "above1")]),
    Row("theory.muon.ball_radius", {"eta": 0.01, "lam": 2.0}, kinds={"eta": "pos", "lam": "pos"},
        extra=[({"eta": 1.0}, "eta", "eta_lam_above_1")]),
    Row("theory.muon.excess_factor", {"eta": np.array([0.01, 0.1]), "lam": 2.0}, kinds={"eta": "posarr", "lam": "pos"}),
    Row("theory.muon.aligned_norm", {"eta": np.array([0.01, 0.1]), "lam": 2.0, "t": 10},
        kinds={"eta": "posarr", "lam": "pos", "t": "nonnegint"}),
    Row("theory.muon.sup_from_zero", {"eta": np.array([0.01, 0.1]), "lam": 2.0, "n_steps": 10},
        kinds={"eta": "posarr", "lam": "pos", "n_steps": "posint"}),
    Row("theory.muon.aligned_recursion", {"s": _S, "eta": 0.01, "lam": 2.0, "momentum": 0.9, "steps": 5, "n_steps": 10},
        kinds={"s": "posarr", "eta": "pos", "lam": "nonneg", "momentum": "unit", "steps": "nonnegint",
               "n_steps": "posint"},
        ok={("momentum", "zero"): "momentum 0 is plain Muon"},
        extra=[({"momentum": 1.0}, "momentum", "one")]),
    Row("theory.muon.single_matrix_arrival", {"s": _S, "eta": 0.01}, kinds={"s": "posarr", "eta": "pos"}),
    Row("theory.muon.factorization_arrival", {"s": _S, "eta": 0.01, "frac": 0.9},
        kinds={"s": "posarr", "eta": "pos", "frac": "unit"}, extra=[({"frac": 1.0}, "frac", "one")]),
    Row("theory.muon.gd_factorization_arrival", {"s": _S, "eta": 0.01, "alpha": 0.01, "frac": 0.9},
        kinds={"s": "posarr", "eta": "pos", "alpha": "pos", "frac": "unit"},
        extra=[({"alpha": 2.0}, "alpha", "alpha_squared_above_s")]),
    Row("theory.muon.gd_threshold", {"s": _S}, kinds={"s": "posarr"}),
    Row("sims.muon.normal_draws", {"key": jax.random.key(0), "shape": (3, 2)}, kinds={"key": "key", "shape": "obj"},
        extra=[({"shape": (3, -1)}, "shape", "negative"), ({"shape": (10**7, 10**7)}, "shape", "oversize")]),
    # Muon's rules live in the shared optimizer module (rows report under engine)
    Row("sims.optimizers.polar", {"m": _M}, kinds={"m": "arr"}),
    Row("sims.optimizers.newton_schulz", {"m": _M, "steps": 5, "coeffs": (3.4445, -4.7750, 2.0315)},
        kinds={"m": "arr", "steps": "nonnegint", "coeffs": "arr"}),
    Row("sims.optimizers.orthogonalize", {"m": _M, "method": "ns", "ns_steps": 5},
        kinds={"m": "arr", "method": "choice", "ns_steps": "nonnegint"}),
    Row("sims.optimizers.adam_direction", {"m_hat": np.array([0.5, -1.0]), "v_hat": np.array([0.25, 0.0])},
        kinds={"m_hat": "arr", "v_hat": "nonnegarr"}, extra=[({"v_hat": np.ones(3)}, "v_hat", "shape")]),
    Row("sims.muon.train", {"eta": np.array([0.01, 0.02]), "lam": 0.5, "target": _Y, "w0": np.zeros((3, 2)),
                            "method": "ns", "ns_steps": 5, "momentum": 0.9, "noise": 0.1, "key": jax.random.key(0),
                            "n_steps": 5},
        kinds={"eta": "posarr", "lam": "nonneg", "target": "arr", "w0": "arr", "method": "choice",
               "ns_steps": "nonnegint", "momentum": "unit", "noise": "nonneg", "key": "key", "n_steps": "posint+oversize"},
        ok={("momentum", "zero"): "momentum 0 is plain Muon", ("noise", "zero"): "noise 0: exact gradients",
            ("lam", "zero"): "no decay", ("ns_steps", "zero"): "0 steps: the normalized momentum itself",
            ("lam", "vector"): "one decay per run, broadcast with eta",
            ("momentum", "vector"): "one momentum per run", ("noise", "vector"): "one noise level per run"}),
    Row("sims.muon.factorization", {"eta": np.array([0.01, 0.02]), "target_sv": _S, "w1": 0.01 * np.ones((2, 2)),
                                    "w2": 0.01 * np.ones((2, 2)), "method": "polar", "n_steps": 5},
        kinds={"eta": "posarr", "target_sv": "posarr", "w1": "arr", "w2": "arr", "method": "choice",
               "n_steps": "posint+oversize"}),
]

# the NumPy references of make bench (sims/reference/muon.py)
_XI = np.random.default_rng(1).standard_normal((5, 3, 2))
ROWS += [
    Row("sims.reference.muon.train_numpy",
        {"eta": np.array([0.01, 0.02]), "lam": 0.5, "target": _Y, "w0": np.zeros((3, 2)), "method": "ns", "ns_steps": 5,
         "momentum": 0.9, "noise": 0.1, "xi": _XI, "n_steps": 5},
        kinds={"eta": "posarr", "lam": "nonneg", "target": "arr", "w0": "arr", "method": "choice",
               "ns_steps": "nonnegint", "momentum": "unit", "noise": "nonneg", "xi": "arr", "n_steps": "posint+oversize"},
        ok={("momentum", "zero"): "momentum 0 is plain Muon", ("noise", "zero"): "noise 0: exact gradients",
            ("lam", "zero"): "no decay", ("ns_steps", "zero"): "0 steps: the normalized momentum itself",
            ("lam", "vector"): "one decay per run, broadcast with eta",
            ("momentum", "vector"): "one momentum per run", ("noise", "vector"): "one noise level per run"},
        extra=[({"xi": np.ones((4, 3, 2))}, "xi", "steps")]),
    Row("sims.reference.muon.factorization_numpy",
        {"eta": np.array([0.01, 0.02]), "target_sv": _S, "w1": 0.01 * np.ones((2, 2)), "w2": 0.01 * np.ones((2, 2)),
         "method": "polar", "n_steps": 5},
        kinds={"eta": "posarr", "target_sv": "posarr", "w1": "arr", "w2": "arr", "method": "choice",
               "n_steps": "posint+oversize"}),
    Row("sims.reference.muon.bench_cases", {"scale": "small"}),
]
