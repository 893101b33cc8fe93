"""Bad-input rows of the sign-floor topic (see tests/_bad_input_table.py).

The counter-based RNG and step building blocks (``words``, ``uniform``, ``noise``, ``threshold``,
``flips``, ``gradient``, ``direction``, ``momentum_update``, ``schedule``) run inside the traced chain;
their rows call them on concrete arrays, where a public function can check values.
"""
from __future__ import annotations

import jax
import numpy as np

from tests._bad_input_table import Row

K = lambda: jax.random.key(0)  # noqa: E731
SEED = np.array([1, 2], np.uint32)
CNT = np.arange(4, dtype=np.uint32)
SIG = {"sigma": "nonneg"}  # sigma = 0 (no noise) is valid; huge sigma has a finite limit
P = {"p": "unit"}
LAW = {"law": "choice"}

_T = "theory.sign_floor."
_S = "sims.sign_floor."
_R = "sims.reference.sign_floor."
_DATA = lambda: np.asarray(jax.random.key_data(jax.random.key(0)))  # noqa: E731

_TRACED = "traced inside the Bernoulli kernel's scan (a tracer there); validated where it enters (simulate, ladder)"

# bad ``dtype`` values of the simulators that take one (theory.validate.float_dtype): another precision, an unknown
# name, a number
_BAD_DTYPE = [({"dtype": "float16"}, "dtype", "float16"), ({"dtype": "no-such-option"}, "dtype", "unknown"),
              ({"dtype": 3}, "dtype", "int")]

ROWS = [
    Row(_T + "multiplicative.ladder_law", {"p": 0.3}, kinds=P),
    # the overflow guard on a computed result (theory.sign_floor_regime uses it too): every value is a valid input, a
    # non-finite one is what it rejects, and the keywords only name the caller's inputs in that error
    Row(_T + "multiplicative.finite", {"value": 2.5, "radius": 1.0}, kinds={"value": "any", "radius": "any"},
        skip={"value": "any real is valid: a non-finite value is what it rejects (naming the caller's inputs)",
              "radius": "a caller's input, only shown in the error message"}),
    Row(_T + "multiplicative.second_moment_sym", {"p": 0.3, "eta": 0.1, "c": 0.05}, kinds={**P, "eta": "pos"}),
    Row(_T + "multiplicative.parity_second_moments_sym", {"p": 0.3, "eta": 0.1, "c": 0.05}, kinds={**P, "eta": "pos"}),
    Row(_T + "multiplicative.c_mid_sym", {"e": 0.5}),
    Row(_T + "multiplicative.c_unif_sym", {"e": 0.5}),
    Row(_T + "multiplicative.away_probability", {"sigma": 1.0, "law": "student", "df": 3.0}, kinds={**SIG, "df": "pos"}),
    Row(_T + "multiplicative.contraction", {"sigma": 1.0, "law": "gaussian"}, kinds=SIG),
    Row(_T + "multiplicative.c_mid", {"sigma": 1.0, "law": "gaussian"}, kinds=SIG),
    Row(_T + "multiplicative.c_unif", {"sigma": 1.0, "law": "gaussian"}, kinds=SIG),
    Row(_T + "multiplicative.c_sde", {"sigma": 1.0, "law": "gaussian"}, kinds=SIG),
    Row(_T + "multiplicative.second_moment", {"p": 0.3, "eta": 0.1, "c": 0.05}, kinds={**P, "eta": "pos"}),
    Row(_T + "multiplicative.parity_second_moments", {"p": 0.3, "eta": 0.1, "c": 0.05}, kinds={**P, "eta": "pos"}),
    Row(_T + "multiplicative.ladder_pmf", {"p": 0.3, "n": np.arange(5)}, kinds=P, ok={("n", "empty"): "no states asked: an empty pmf"}),
    Row(_T + "additive.additive_chain", {"a": 1.0, "eta": 0.1, "sigma": 1.0, "c": 0.05, "law": "gaussian", "width": 40.0},
        kinds={"a": "pos", "eta": "pos", **SIG, "width": "pos"}),
    Row(_T + "additive.additive_floor", {"a": 1.0, "eta": 0.1, "sigma": 1.0, "offset": "mid", "law": "gaussian"},
        kinds={"a": "pos", "eta": "pos", **SIG}),
    Row(_T + "additive.phi_add_series", {"kappa": 0.5}, kinds={"kappa": "nonneg"}),
    Row(_T + "additive.student_density_at_zero", {"df": 3.0}, kinds={"df": "pos"}),
    Row(_T + "sgd.sgd_contraction", {"a": 1.0, "eta": 0.1, "sigma": 1.0}, kinds={"a": "pos", "eta": "pos", **SIG}),
    Row(_T + "sgd.sgd_additive_floor", {"a": 1.0, "eta": 0.1, "sigma": 1.0}, kinds={"a": "pos", "eta": "pos", **SIG}),
    Row(_T + "schedule.sign_schedule_mean_f", {"a": 1.0, "eta": np.array([0.1, 0.05]), "sigma": 1.0, "noise": "multiplicative",
                                               "x0_low": 0.5, "x0_high": 1.0, "cells": 16, "law": "gaussian"},
        kinds={"a": "pos", "eta": "posarr", **SIG, "cells": "posint"}),
    Row(_T + "sgd.sgd_mult_log_step", {"c": 0.02, "sigma": 1.0}, kinds={"c": "nonneg", **SIG}),
    Row(_T + "sgd.sgd_mult_log_f", {"a": 2.0, "eta": np.array([0.01, 0.005]), "sigma": 1.0, "log_f0": 0.0},
        kinds={"a": "pos", "eta": "nonnegarr", **SIG, "log_f0": "real"}),
    Row(_T + "sgd.sgd_mult_log_mean_f", {"a": 2.0, "eta": np.array([0.01, 0.005]), "sigma": 1.0, "log_f0": 0.0},
        kinds={"a": "pos", "eta": "nonnegarr", **SIG, "log_f0": "real"}),
    Row(_T + "signum.signum_constant", {"beta": 0.5, "sigma": 1.0, "offset": 0.3, "law": "gaussian", "a": 1.0, "cells": 2},
        kinds={"beta": "unit", "sigma": "pos", "offset": "unit", "a": "pos", "cells": "posint"},
        extra=[({"beta": 1.0}, "beta", "no contraction of the buffer"), ({"offset": 0.0}, "offset", "0 on the lattice"),
               ({"offset": 1.0}, "offset", "a whole step"), ({"offset": "edge"}, "offset", "unknown offset"),
               ({"cells": 3}, "cells", "odd"), ({"law": "student", "df": -1.0}, "df", "negative df"),
               ({"law": "student"}, "df", "Student-t without df")]),
    Row(_T + "sgd.floor", {"a": 1.0, "eta": 0.1, "sigma": 1.0, "noise": "multiplicative", "method": "sign",
                           "offset": "mid", "law": "gaussian"},
        kinds={"a": "pos", "eta": "pos", **SIG}),
    Row(_T + "additive.mixed_chain", {"a": 1.0, "eta": 0.1, "sigma_m": 0.5, "sigma_a": 0.1, "c": 0.05},
        kinds={"a": "pos", "eta": "pos", "sigma_m": "pos", "sigma_a": "pos"}),
    Row(_T + "additive.mixed_floor", {"a": 1.0, "eta": 0.1, "sigma_m": 0.5, "sigma_a": 0.1, "offset": "mid"},
        kinds={"a": "pos", "eta": "pos", "sigma_m": "pos", "sigma_a": "pos"}),
    Row(_T + "additive.crossover_eta", {"a": 1.0, "sigma_m": 0.5, "sigma_a": 0.1},
        kinds={"a": "pos", "sigma_m": "pos", "sigma_a": "pos"}),
    Row(_T + "additive.uniform_additive_floor", {"a": 1.0, "eta": 0.1, "bound": 1.0, "offset": "mid"},
        kinds={"a": "pos", "eta": "pos", "bound": "pos"}),
    # simulators and their building blocks
    Row(_S + "away_probability_host", {"sigma": np.array([0.5, 1.0]), "law": "student", "df": 3.0},
        kinds={"sigma": "nonnegarr", "df": "pos"}),
    # the Bernoulli kernel's primitives run on traced values inside its scan (the typed key split per block, the
    # counters, p): values cannot be inspected there, so they are validated where they enter -- simulate / ladder
    # check sigma, eta, law and df, chain_run / ladder_run their static configuration and point
    Row(_S + "block_seed", lambda: {"key": K()}, skip={"key": _TRACED}),
    Row(_S + "words", {"seed": SEED, "counter": CNT}, skip={"seed": _TRACED, "counter": _TRACED}),
    Row(_S + "away_probability", {"sigma": 1.0, "law": "student", "df": 3.0}, kinds={"df": "pos"},
        skip={"sigma": _TRACED}),
    Row(_S + "threshold", {"p": 0.3}, skip={"p": _TRACED}),
    Row(_S + "flips", {"seed": SEED, "counter": CNT, "thresh": np.uint32(2**31)},
        skip={"seed": _TRACED, "counter": _TRACED, "thresh": _TRACED}, extra=_BAD_DTYPE),
    Row(_S + "schedule", {"k": np.arange(4), "T": 4, "eta": 0.1, "cooldown": 0.5},
        kinds={"k": "iarr", "T": "posint", "eta": "pos", "cooldown": "unit"}),
    Row(_S + "is_bernoulli", {"method": "sign", "additive": False, "momentum": False}),
    Row(_S + "schedules_host", {"T": 4, "eta": np.array([0.1, 0.2]), "cooldown": np.array([0.0, 0.5])},
        kinds={"T": "posint+oversize", "eta": "posarr", "cooldown": "nonnegarr"}),
    Row(_S + "chain_run", lambda: {"point": dict(key_data=_DATA(), key_index=np.int64(0), x0=np.array([0.3, -0.2]),
                                                 h=np.array([1.0, 3.0]), eta=0.05, cooldown=0.5, p_away=0.3),
                                   "burn": np.int64(2), "T": 6, "n_rec": 2, "law": "gaussian", "df": 0, "block": 4},
        kinds={"T": "posint", "n_rec": "posint", "block": "posint"}, slow=True),
    Row(_S + "simulate", lambda: dict(key=K(), eta=np.array([0.05, 0.1]), x0=np.array([0.3, -0.2]),
                                      h=np.array([1.0, 3.0]), method="sign", beta=0.5, sigma_m=0.5, sigma_a=0.2,
                                      cooldown=0.5, T=12, n_rec=3, burn=2, n_chains=2, paired=True, chunk_size=8),
        kinds={"eta": "posarr", "h": "posarr", "beta": "unit", "sigma_m": "nonneg", "sigma_a": "nonneg",
               "cooldown": "unit", "T": "posint", "n_rec": "posint", "burn": "nonnegint", "n_chains": "posint+oversize",
               "chunk_size": "posint"},
        ok={("sigma_m", "vector"): "one value per configuration (two step sizes)",
            ("sigma_a", "vector"): "one value per configuration (two step sizes)"},
        # a float32 sign chain must stay below float32's divergence bound (1e15): 12 steps of 1e14 do not
        extra=[({"eta": np.array([1e14, 0.1]), "dtype": "float32", "beta": 0.0, "sigma_a": 0.0}, "eta",
                "float32 reach")] + _BAD_DTYPE),
    Row(_S + "ladder_run", lambda: {"point": dict(key_data=_DATA(), key_index=np.int64(0), sigma=1.0, theta=0.3, n0=0),
                                    "burn": np.int64(2), "T": 6, "law": "gaussian", "df": 0, "block": 4},
        kinds={"T": "posint", "block": "posint"}, slow=True),
    Row(_S + "ladder", lambda: dict(key=K(), sigma=np.array([0.5, 1.0]), theta=0.3, T=12, burn=2, n_chains=2,
                                    paired=True, chunk_size=8),
        kinds={"sigma": "posarr", "T": "posint", "burn": "nonnegint", "n_chains": "posint+oversize", "chunk_size": "posint"},
        ok={("sigma", "zeros"): "sigma = 0 is noiseless signSGD: p = 0, a valid (deterministic) walk"}),
    Row(_R + "numpy_chains", {"seed": 0, "a": 1.0, "eta": 0.1, "x0": 0.3, "T": 8, "n_chains": 2, "method": "sign",
                              "beta": 0.5, "sigma_m": 0.5, "sigma_a": 0.2, "burn": 2, "block": 4},
        kinds={"seed": "nonnegint", "a": "pos", "eta": "pos", "T": "posint", "n_chains": "posint+oversize", "beta": "unit",
               "sigma_m": "nonneg", "sigma_a": "nonneg", "burn": "nonnegint", "block": "posint"}),
    Row(_R + "bench_cases", {"scale": "small"}),
]

# ----------------------------------------------------------------------------- theory/ and sims/sign_floor_regime.py
_TR = "theory.sign_floor_regime."
_SR = "sims.sign_floor_regime."
_FIT = {"sigma0_sq": 1.0, "sigma0_sq_se": 0.01, "sigma1_sq": 2.0}

ROWS += [
    Row(_TR + "well", {"name": "quartic", "x": np.array([0.1, -0.2])},
        ok={("x", "ndim"): "elementwise: an array of any shape is valid"}),
    Row(_TR + "curvature", {"name": "exp"}),
    Row(_TR + "smoothness", {"name": "exp", "radius": 1.0}, kinds={"radius": "nonneg+huge"}),
    Row(_TR + "local_floor", {"name": "logcosh", "eta": 0.1, "sigma": 1.0, "offset": "mid", "law": "gaussian"},
        kinds={"eta": "pos", **SIG}, extra=[({"offset": 0.2}, "offset", "beyond eta")]),
    Row(_TR + "local_form", {"name": "quartic", "eta": 0.1, "sigma": 1.0, "law": "gaussian"},
        kinds={"eta": "pos", **SIG}),
    Row(_TR + "affine_variance_fit", {"grad_sq": np.array([0.1, 0.5, 1.0]), "variance": np.array([1.0, 2.0, 3.0]),
                                      "variance_se": np.array([0.1, 0.1, 0.1])},
        kinds={"grad_sq": "nonnegarr", "variance": "nonnegarr", "variance_se": "posarr"},
        extra=[({"grad_sq": np.array([0.5, 0.5, 0.5])}, "grad_sq", "one gradient norm"),
               ({"variance": np.array([1.0, 2.0])}, "variance", "length mismatch")]),
    Row(_TR + "noise_ratio", {"sigma0_sq": 1.0, "sigma1_sq": 2.0, "grad_sq": 0.5},
        kinds={"sigma0_sq": "nonneg", "sigma1_sq": "nonneg", "grad_sq": "nonneg"}),
    Row(_TR + "regime", {"fit": _FIT, "grad_sq": 0.1, "z": 4.0}, kinds={"grad_sq": "nonneg", "z": "pos"},
        extra=[({"fit": {**_FIT, "sigma0_sq": float("nan")}}, "fit", "NaN intercept")]),
    Row(_TR + "floor_slope", {"regime_name": "additive", "method": "sign"}),
    Row(_TR + "sgd_local_floor", {"h": np.array([0.5, 1.0]), "s_diag": np.array([1.0, 2.0]), "eta": 0.1, "batch": 4},
        kinds={"h": "nonnegarr", "s_diag": "nonnegarr", "eta": "pos", "batch": "posint"},
        extra=[({"eta": 5.0}, "eta", "unstable step")]),
    Row(_SR + "digits_problem", {"lam": 0.1}, kinds={"lam": "pos"}, slow=True),
    Row(_SR + "gd_checkpoints", {"steps": np.array([0, 3]), "eta": 1.0, "lam": 0.1},
        kinds={"steps": "iarr", "eta": "pos", "lam": "pos"}, extra=[({"eta": 10.0}, "eta", "unstable GD")], slow=True),
    Row(_SR + "noise_variance", lambda: {"key": K(), "thetas": np.zeros((2, 170)), "oracle": "minibatch", "batch": 2,
                                         "sigma": 1.0, "n_draws": 4, "lam": 0.1},
        kinds={"batch": "posint", "sigma": "nonneg", "n_draws": "posint+oversize", "lam": "pos"}, slow=True),
    Row(_SR + "mean_sign", lambda: {"key": K(), "theta": np.zeros(170), "oracle": "gaussian", "batch": 2, "sigma": 1.0,
                                    "n_draws": 4, "lam": 0.1},
        kinds={"batch": "posint", "sigma": "nonneg", "n_draws": "posint+oversize", "lam": "pos"}, slow=True),
    Row(_SR + "digits_floors", lambda: {"key": K(), "eta": np.array([0.05, 0.01]), "method": "sgd",
                                        "oracle": "minibatch", "batch": 2, "sigma": 1.0, "T": 4, "n_rec": 2, "burn": 1,
                                        "n_chains": 1, "start": "minimizer", "lam": 0.1, "chunk_size": 8},
        kinds={"eta": "posarr", "batch": "posint", "sigma": "nonneg", "T": "posint", "n_rec": "posint",
               "burn": "nonnegint", "n_chains": "posint+oversize", "lam": "pos", "chunk_size": "posint"}, slow=True),
    Row(_SR + "well_chains", lambda: {"key": K(), "name": "quartic", "eta": np.array([0.1, 0.05]), "sigma": 1.0,
                                      "T": 6, "burn": 2, "n_chains": 1, "chunk_size": 8},
        kinds={"eta": "posarr", "sigma": "nonneg", "T": "posint", "burn": "nonnegint", "n_chains": "posint+oversize",
               "chunk_size": "posint"}, slow=True,
        ok={("sigma", "vector"): "one noise level per configuration (two step sizes)"}),
]
