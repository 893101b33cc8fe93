"""Bad-input rows of the softmax-radius topic (see tests/_bad_input_table.py).

Models, parameters and data are built lazily (a tiny 8-unit MLP on 16 digits): the rows cost
nothing at import time.
"""
from __future__ import annotations

import functools

import jax
import numpy as np

from tests._bad_input_table import Row

Z = np.array([[0.5, -0.2, 0.1], [0.0, 0.3, -0.4]])
A = np.array([[1.0, -0.5, 0.2], [0.3, 0.1, -0.6]])
Y = np.array([0, 2])
P3 = np.array([0.5, 0.3, 0.2])
A3 = np.array([1.0, -0.5, 0.2])
COEF = 1.0 / 2.0 ** np.arange(12)  # radius 2


@functools.lru_cache(maxsize=None)
def _setup():
    from sims import softmax_radius as S

    d = S.digits()
    data = {"x_train": d["x_train"][:32], "y_train": d["y_train"][:32], "x_test": d["x_test"][:16],
            "y_test": d["y_test"][:16]}
    model = S.make_model("mlp", hidden=(8,))
    params = {k: np.asarray(v) + 0.05 for k, v in model.init(jax.random.key(0)).items()}
    v = {k: np.full(np.shape(w), 0.1) for k, w in params.items()}
    return S, model, params, v, data


@functools.lru_cache(maxsize=None)
def _attention():
    """A freshly initialized attention model's parameters and a constant direction (for the inner singularities)."""
    from sims import softmax_radius as S

    params = {k: np.asarray(v) for k, v in S.make_model("attention").init(jax.random.key(0)).items()}
    return {"params": params, "v": {k: np.full(np.shape(w), 0.1) for k, w in params.items()},
            "x": _setup()[4]["x_train"][:2]}


def _m(**kw):
    def build():
        S, model, params, v, data = _setup()
        base = {"model": model, "params": params, "apply": model.apply, "v": v, "data": data,
                "x": data["x_train"][:8], "y": data["y_train"][:8]}
        return {k: (base[k] if isinstance(val, str) and val == "@" else val) for k, val in kw.items()}
    return build


_T = "theory.softmax_radius."
_S = "sims.softmax_radius."
_R = "sims.reference.softmax_radius."
APPLY = {"apply": "fn", "params": "obj", "v": "obj", "model": "obj", "data": "dict"}

ROWS = [
    Row(_T + "kl_identities", {"n": 3}, kinds={"n": "posint"}),
    Row(_T + "binary_radius", {"delta": 0.5, "delta_a": 1.0}, kinds={"delta_a": "pos"},
        ok={("delta", "vector"): "vectorized", ("delta_a", "vector"): "vectorized",
            ("delta_a", "zero"): "equal slopes: F(t)=e^{z1}(1+e^{-delta}) never vanishes, so the radius is +inf (documented)",
            ("delta_a", "neg"): "rho* = sqrt(delta^2+pi^2)/|delta_a|: swapping the two classes flips the sign"}),
    Row(_T + "binary_ghost", {"delta": 0.5, "delta_a": 1.0}, kinds={"delta_a": "pos"},
        ok={("delta", "vector"): "vectorized", ("delta_a", "vector"): "vectorized",
            ("delta_a", "neg"): "t0 = -delta/delta_a + i pi/|delta_a| holds for either sign (classes swapped)"}),
    Row(_T + "lower_bound", {"a": A}),
    Row(_T + "radius_details", {"z": Z[0], "a": A[0]}),
    Row(_T + "radius", {"z": Z, "a": A}),
    Row(_T + "strip_margin", {"z": Z[0], "a": A[0], "t": np.array([0.5 + 0.2j])}, kinds={"t": "obj"}),
    Row(_T + "log_partition_taylor", {"z": Z[0], "a": A[0], "order": 6}, kinds={"order": "posint"}),
    Row(_T + "cauchy_hadamard_radius", {"coeffs": COEF, "n_min": 4}, kinds={"n_min": "posint"}),
    Row(_T + "prony_pair", {"coeffs": COEF, "n_min": 4}, kinds={"n_min": "posint"}),
    Row(_T + "prony_radius", {"coeffs": COEF, "n_min": 4}, kinds={"n_min": "posint"}),
    Row(_T + "domb_sykes_pair", {"coeffs": COEF, "n_min": 4}, kinds={"n_min": "posint"}),
    Row(_T + "prony_error_scale", {"delta": 0.5, "order": 8}, kinds={"order": "posint"}, ok={("delta", "vector"): "vectorized"}),
    Row(_T + "taylor_truncation_error", {"coeffs": COEF, "t": np.array([0.5, 1.0]), "values": np.array([1.3, 2.0])}),
    Row(_T + "logistic_radius", {"delta": 0.5}, ok={("delta", "vector"): "vectorized"}),
    Row(_T + "logistic_inverse_curvature", {"delta": 0.5}, ok={("delta", "vector"): "vectorized"}),
    Row(_T + "curvature_to_radius_ratio", {"delta": 0.5, "curvature_factor": 1.0}, kinds={"curvature_factor": "pos"}, ok={("delta", "vector"): "vectorized"}),
    Row(_T + "hessian_step_scale", {"delta": 0.5, "delta_a": 1.0},
        ok={("delta", "vector"): "vectorized", ("delta_a", "vector"): "vectorized",
            ("delta_a", "neg"): "tau_H = 2/(f'' delta_a^2): the sign of the gap does not matter"}),
    Row(_T + "hessian_ratio", {"delta": 0.5, "delta_a": 1.0, "against": "radius"}, kinds={"against": "choice"},
        ok={("delta", "vector"): "vectorized", ("delta_a", "vector"): "vectorized",
            ("delta_a", "neg"): "both radii depend on |delta_a| only"}),
    Row(_T + "hessian_crossover_margin", {"delta_a": 3.0},
        ok={("delta_a", "vector"): "vectorized", ("delta_a", "neg"): "the crossover depends on |delta_a| only"}),
    Row(_T + "crossover_margin_eq48", {"delta_a": 3.0},
        ok={("delta_a", "vector"): "vectorized", ("delta_a", "neg"): "eq. (48) takes |delta_a|"}),
    Row(_T + "linearized_curvature", {"z": Z, "a": A}),
    Row(_T + "top2_margin", {"z": Z, "y": Y}, kinds={"z": "arr+rows"}),
    Row(_T + "accuracy_floor", {"z": Z, "a": A, "y": Y, "t": np.array([0.0, 0.5])},
        ok={("t", "neg"): "a step backwards along v: the floor is defined for any real distance"}),
    Row(_T + "linearized_accuracy", {"z": Z, "a": A, "y": Y, "t": np.array([0.0, 0.5])},
        ok={("t", "neg"): "a step backwards along v: the linearized logits are defined for any real distance"}),
    Row(_T + "perturbation_epsilon", {"z": Z, "a": A, "c2": 0.1 * A}),
    Row(_T + "gelu_tanh_pole_distance", {"x0": 0.5}, ok={("x0", "vector"): "vectorized"}),
    Row(_T + "linearized_line_loss", {"z": Z, "a": A, "y": Y, "t": np.array([0.0, 0.5])}),
    Row(_T + "increment_bound", {"a": A, "y": Y}),
    Row(_T + "third_central_moment", {"p": P3, "x": A3}, kinds={"p": "nonnegarr"}),
    Row(_T + "third_moment_bound", {"width": 1.0}, kinds={"width": "nonneg"}, ok={("width", "vector"): "vectorized"}),
    Row(_T + "kl_forward", {"p": P3, "a": A3, "t": 0.5}),
    Row(_T + "kl_reverse", {"p": P3, "a": A3, "t": 0.5}),
    Row(_T + "kl_small_t_ratio", {"p": P3, "a": A3, "direction": "forward"}),
    Row(_T + "normalizer_branch_points", {"n": 2}, kinds={"n": "posint"}),
    Row(_T + "normalization_branch_points", {"h0": A, "hd": Z, "axis": -1, "eps": 1e-5}, kinds={"eps": "nonneg"},
        ok={("eps", "zero"): "eps = 0: the roots of Var(h(t)) itself (a real double root at worst), documented",
            ("axis", "neg"): "-1: the last axis, counted from the end (NumPy's convention)"}),
    # simulators
    Row(_S + "models.digits", {"seed": 0, "test_fraction": 0.25}, kinds={"seed": "nonnegint", "test_fraction": "unit"}),
    Row(_S + "models.make_model", {"name": "mlp", "hidden": (8,), "act": "relu"}, kinds={"hidden": "widths"},
        ok={("act", "None"): "None: the model's default activation (the exact GELU for attention, ReLU otherwise)"}),
    Row(_S + "directions.evaluate", _m(model="@", params="@", x="@", y="@", temperature=1.0),
        kinds={**APPLY, "x": "arr+rows", "temperature": "pos"}),
    Row(_S + "directions.normalize", lambda: {"tree": _setup()[3]}, kinds={"tree": "obj"}),
    Row(_S + "directions.random_directions", lambda: {"key": jax.random.key(0), "params": _setup()[2], "n": 2},
        kinds={**APPLY, "n": "posint"}),
    Row(_S + "directions.gradient_direction", _m(model="@", params="@", x="@", y="@", temperature=1.0),
        kinds={**APPLY, "temperature": "pos"}),
    Row(_S + "directions.directional_derivatives", _m(apply="@", params="@", v="@", x="@"), kinds=APPLY),
    Row(_S + "directions.loss_curvature", lambda: {**_m(model="@", params="@", x="@", y="@")(),
                                                   "directions": {k: np.stack([w, -w]) for k, w in _setup()[3].items()}},
        kinds={**APPLY, "directions": "obj"}),
    Row(_S + "directions.logit_curvature", _m(apply="@", params="@", v="@", x="@"), kinds=APPLY),
    Row(_S + "directions.rho_a", _m(apply="@", params="@", v="@", x="@", temperature=1.0), kinds={**APPLY, "temperature": "pos"}),
    Row(_S + "continuation.continued_logits", _m(apply="@", params="@", v="@", x="@", t=np.array([0.1 + 0.1j])),
        kinds={**APPLY, "t": "obj"}),
    Row(_S + "continuation.ghost_zeros", _m(apply="@", params="@", v="@", x="@", rows=np.array([0]), t0=np.array([1.0 + 1.0j]),
                                            iters=4),
        kinds={**APPLY, "t0": "obj", "iters": "posint"}, slow=True),
    Row(_S + "continuation.partition_margin", _m(apply="@", params="@", v="@", x="@", rows=np.array([0]), t=np.array([0.5 + 0.5j])),
        kinds={**APPLY, "t": "obj"}),
    Row(_S + "continuation.zeros_inside", _m(apply="@", params="@", v="@", x="@", rows=np.array([0]), radius=np.array([0.5]),
                                             points=16),
        kinds={**APPLY, "radius": "posarr", "points": "posint"}),
    Row(_S + "continuation.attention_singularities", lambda: {**_attention(), "rows": np.array([0]), "radius": np.array([0.5]),
                                                              "act": "gelu", "points": 16, "steps": 1},
        kinds={"params": "obj", "v": "obj", "radius": "posarr", "act": "choice", "points": "posint",
               "steps": "posint"}, slow=True),
    Row(_S + "continuation.normalization_branch_point", _m(apply="@", params="@", v="@", x="@", rows=np.array([0]),
                                                           start=1.0, iters=4),
        kinds={**APPLY, "start": "pos", "iters": "posint"}),
    Row(_S + "continuation.continued_line_loss", _m(apply="@", params="@", v="@", x="@", y="@", rows=np.array([0, 1]),
                                                    t=np.array([0.1, 0.2])), kinds=APPLY),
    Row(_S + "continuation.line_taylor", _m(apply="@", params="@", v="@", x="@", y="@", order=2),
        kinds={**APPLY, "x": "arr+rows", "order": "posint"}),
    Row(_S + "continuation.logit_line_taylor", {"z": Z, "a": A, "y": Y, "order": 2}, kinds={"z": "arr+rows", "order": "posint"}),
    Row(_S + "training.one_step_sweep", lambda: {"model": _setup()[1], "params": _setup()[2],
                                                 "directions": {k: w[None] for k, w in _setup()[3].items()},
                                                 "x": _setup()[4]["x_train"][:8], "y": _setup()[4]["y_train"][:8],
                                                 "r": np.array([0.0, 0.5]), "chunk_size": 2},
        kinds={**APPLY, "directions": "obj", "r": "nonnegarr", "chunk_size": "posint"}, slow=True),
    Row(_S + "training.onset", {"r": np.array([0.0, 0.5, 1.0]), "ratio": np.array([[1.0, 1.05, 1.3]]), "threshold": 1.1},
        kinds={"r": "nonnegarr", "threshold": "pos"},
        ok={("ratio", "nan"): "divergence is data: a non-finite loss ratio counts as reaching the threshold",
            ("ratio", "inf"): "divergence is data: a non-finite loss ratio counts as reaching the threshold"}),
    Row(_S + "training.mode_code", {"mode": "plain"}),
    Row(_S + "training.run_adam", lambda: {"model": _setup()[1], "params": _setup()[2], "data": _setup()[4],
                                           "batches": np.arange(8).reshape(2, 4), "eta": 0.01},
        kinds={**APPLY, "batches": "iarr", "eta": "pos"}, slow=True),
    Row(_S + "training.train", lambda: {"key": jax.random.key(0), "model": _setup()[1], "data": _setup()[4], "steps": 2,
                                        "batch": 4, "eta": 0.01},
        kinds={**APPLY, "steps": "posint", "batch": "posint", "eta": "pos"}, slow=True,
        # within each bound (1e6), 1e6 steps x 1e6 indices are 8 TB: the size guard's to refuse
        extra=[({"steps": 10**6, "batch": 10**6}, "steps", "oversize")]),
    Row(_S + "training.spike_runs", lambda: {"model": _setup()[1], "data": _setup()[4], "modes": ("plain",), "seeds": np.arange(1),
                                             "eta": 0.01, "factor": 10.0, "steps": 4, "batch": 4, "spike_step": 2,
                                    "eval_every": 2},
        kinds={**APPLY, "seeds": "iarr", "eta": "pos", "factor": "pos", "steps": "posint", "batch": "posint",
               "spike_step": "nonnegint", "eval_every": "posint"}, ok={("spike_step", "neg"): "-1: no spike (the default of run_adam)"}, slow=True,
        extra=[({"steps": 10**6, "batch": 10**6}, "batch", "oversize")]),
    Row(_S + "training.temperature_runs", lambda: {"data": _setup()[4], "temperatures": np.array([1.0]), "seeds": np.arange(1),
                                                   "r": np.array([0.0, 0.5]), "steps": 2, "batch": 4, "eta": 0.01,
                                                   "hidden": (8,)},
        kinds={**APPLY, "temperatures": "posarr", "seeds": "iarr", "r": "nonnegarr", "steps": "posint",
               "batch": "posint", "eta": "pos", "hidden": "widths"}, slow=True),
    Row(_S + "archgrid.archgrid_runs", {"name": "mlp_ln3", "seeds": np.arange(1), "modes": ("plain",), "steps": 2, "eta": 0.015,
                                        "factor": 10.0, "spike_step": 1},
        kinds={"name": "choice", "seeds": "iarr", "modes": "choices", "steps": "posint", "eta": "pos", "factor": "pos",
               "spike_step": "nonnegint"}, ok={("spike_step", "neg"): "-1: no spike (an unspiked run)"}, slow=True),
    Row(_S + "archgrid.finite_median", {"values": np.array([1.0, 2.0, 3.0]), "diverged": np.array([False, False, True])},
        kinds={"diverged": "obj"}),
    Row(_S + "directions.tilted_kl", {"p": P3, "a": A3, "t": np.array([0.5])}, kinds={"p": "nonnegarr"}),
    Row(_S + "directions.cgf_increment", {"p": P3, "a": A3, "t": np.array([0.5])}, kinds={"p": "nonnegarr"}),
    Row(_S + "directions.logistic_loss_taylor", {"delta": 0.5, "order": 6}, kinds={"order": "posint"}),
    Row(_S + "directions.logistic_inverse_curvature", {"delta": 0.5}),
    Row(_R + "mlp_logits", lambda: {"params": _setup()[2], "x": _setup()[4]["x_train"][:4]}, kinds={"params": "obj"}),
    Row(_R + "rho_a_numpy", lambda: {"params": _setup()[2], "v": _setup()[3], "x": _setup()[4]["x_train"][:4],
                                     "h": 1e-6}, kinds={"params": "obj", "v": "obj", "h": "pos"}),
    Row(_R + "one_step_loss_numpy", lambda: {"params": _setup()[2], "v": _setup()[3], "x": _setup()[4]["x_train"][:4],
                                             "y": _setup()[4]["y_train"][:4], "t": np.array([0.0, 0.5])},
        kinds={"params": "obj", "v": "obj"}),
    Row(_R + "bench_cases", {"scale": "small"}),
]
