"""Rows of the simulator contract (tests/test_contract.py) for sims/softmax_radius/.

One row per public simulator, on small setups (32 training images, an 8-unit MLP, 3 Adam steps,
chunks of 4 runs so that every grid size shares one compiled sweep) so compilation stays short;
tests/test_softmax_radius.py uses the same setups, so a process compiles each program once. Eager execution compiles every primitive on its own, so jit-equals-eager
runs on the single-run functions; the ``run_grid`` sweeps (``one_step_sweep``, ``spike_runs``,
``temperature_runs``) are compared with loops of single runs instead.
"""
import sys

import jax
import numpy as np

from sims import softmax_radius as S

# Sim comes from the contract module importing this file (see tests/contract_sign_floor.py for why)
_contract = sys.modules.get("test_contract") or sys.modules.get("tests.test_contract")
if _contract is None:  # imported on its own
    from tests.test_contract import Sim
else:
    Sim = _contract.Sim

NAN = float("nan")
_D = S.digits()
_DATA = {"x_train": _D["x_train"][:32], "y_train": _D["y_train"][:32], "x_test": _D["x_test"][:16],
         "y_test": _D["y_test"][:16]}
_DATA2 = {"x_train": _D["x_train"][32:64], "y_train": _D["y_train"][32:64], "x_test": _D["x_test"][16:32],
          "y_test": _D["y_test"][16:32]}
_X, _Y = _DATA["x_train"], _DATA["y_train"]
_MLP = S.make_model("mlp", hidden=(8,))
# non-zero biases keep every ReLU input away from 0 (a kink would make the line loss non-analytic)
_P = {k: np.asarray(v) + 0.05 * np.cos(np.arange(np.size(v)).reshape(np.shape(v)) * 0.37)
      for k, v in _MLP.init(jax.random.key(0)).items()}
_V = {k: np.sin(np.arange(np.size(v)).reshape(np.shape(v)) * 1.3 + 0.2) for k, v in _P.items()}
_V = {k: v / np.sqrt(sum(np.sum(w**2) for w in _V.values())) for k, v in _V.items()}
_DIRS = {k: np.stack([np.roll(v, i) for i in range(3)]) for k, v in _V.items()}


def _rho_a(**over):
    args = dict(apply=_MLP.apply, params=_P, v=_V, x=_X, temperature=1.0) | over
    return S.rho_a(**args)


def _jvp(**over):
    args = dict(apply=_MLP.apply, params=_P, v=_V, x=_X) | over
    return S.directional_derivatives(**args)


def _line_taylor(**over):
    args = dict(apply=_MLP.apply, params=_P, v=_V, x=_X[:8], y=_Y[:8], order=2) | over
    return S.line_taylor(**args)


_ZA = np.random.default_rng(0).normal(size=(4, 6))


def _logit_line_taylor(rows=np.arange(4), **over):
    args = dict(z=_ZA[rows, :3], a=_ZA[rows, 3:], y=np.zeros(len(rows), dtype=np.int32), order=2) | over
    return S.logit_line_taylor(**args)


def _sweep(idx=np.arange(3), **over):
    dirs = {k: v[idx] for k, v in _DIRS.items()}
    args = dict(model=_MLP, params=_P, directions=dirs, x=_X, y=_Y, r=np.array([0.0, 0.5, 2.0]), chunk_size=4) | over
    return S.one_step_sweep(**args)


_SWEEP_OUT = ("loss", "ratio", "acc", "rho_a", "a", "diverged")


def _train(**over):
    args = dict(key=jax.random.key(0), model=_MLP, data=_DATA, steps=3, batch=8, eta=0.05, mode="controller",
                spike_step=1, spike_factor=100.0, eval_every_step=True) | over
    return S.train(**args)


_BATCHES = np.arange(24).reshape(3, 8) * 3 % 32


def _run_adam(**over):
    args = dict(model=_MLP, params=_P, data=_DATA, batches=_BATCHES, eta=0.05, mode="controller", spike_step=1,
                spike_factor=100.0, eval_every_step=True) | over
    return S.run_adam(**args)


_TRAIN_OUT = ("loss", "r", "scale", "test_acc", "diverged", "diverged_step")


def _spike(**over):
    args = dict(model=_MLP, data=_DATA, modes=("controller",), seeds=[0, 1], eta=0.05, factor=100.0, steps=3,
                batch=8, spike_step=1, chunk_size=4) | over
    return S.spike_runs(**args)


_SPIKE_OUT = ("test_acc", "final_acc", "r", "scale", "loss", "diverged", "diverged_step")


def _temperature(**over):
    args = dict(data=_DATA, temperatures=[0.5], seeds=[0, 1], r=np.array([0.0, 1.0, 4.0, 16.0]), steps=3, batch=8,
                eta=0.05, hidden=(8,), chunk_size=4) | over
    return S.temperature_runs(**args)


_TEMP_OUT = ("rho_a", "ratio", "loss0", "onset_r", "diverged", "diverged_step")


def _continued(**over):
    # the unit test's setup (x[:8], three distances): one compiled continuation program per process
    args = dict(apply=_MLP.apply, params=_P, v=_V, x=_X[:8], t=np.array([0.0, 1e-3, -2e-3])) | over
    return S.continued_logits(**args)
_LN = S.make_model("mlp_ln", hidden=(8,))
# gains and shifts away from 1 and 0, every parameter away from a ReLU kink
_PLN = {k: np.asarray(v) + 0.2 * np.cos(np.arange(np.size(v)).reshape(np.shape(v)) * 0.71 + 0.3)
        for k, v in _LN.init(jax.random.key(0)).items()}
_VLN = {k: np.sin(np.arange(np.size(v)).reshape(np.shape(v)) * 1.3 + 0.5) for k, v in _PLN.items()}
_VLN = {k: v / np.sqrt(sum(np.sum(w**2) for w in _VLN.values())) for k, v in _VLN.items()}


def _branch(rows=np.arange(3), **over):
    args = dict(apply=_LN.apply, params=_PLN, v=_VLN, x=_X[:3], rows=rows) | over
    return S.normalization_branch_point(**args)


_T = np.array([-0.5, 0.01, 0.3, 2.0])
_PROB = np.array([0.5, 0.3, 0.2, 0.0])
_SLOPES = np.array([1.0, -0.5, 0.3, 2.0])


def _tilted_kl(**over):
    return S.tilted_kl(**(dict(p=_PROB, a=_SLOPES, t=_T) | over))


def _cgf(**over):
    return S.cgf_increment(**(dict(p=_PROB, a=_SLOPES, t=_T) | over))


_PURE = "one evaluation of a closed-form expression: nothing iterates, so nothing can diverge"
_SWEEP_JIT = ("a run_grid sweep (jit + vmap over directions) of the same JVP and forward passes as rows rho_a and "
              "directional_derivatives; the sweep equals a loop of single-direction calls (vmap row)")
_GRID_JIT = ("a run_grid sweep of the per-run training core, whose jit-equals-eager is row softmax_radius.train; "
             "the sweep equals a loop of single-seed calls (vmap row)")
_BAD_MODEL = [({"x": np.full((4, 64), NAN)}, "x"), ({"params": {"W0": np.zeros(3)}}, "v"),
              ({"apply": "mlp"}, "apply"), ({"x": np.zeros((4, 5))}, "x")]

SIMULATORS = [
    Sim("softmax_radius.continued_logits", _continued,
        bad=[({"t": "x"}, "t"), ({"t": np.array([NAN])}, "t"), ({"x": np.zeros((4, 5))}, "x")],
        skip={"jit": "an interpreter over the model's jaxpr: eager evaluation compiles each of its primitives on its "
                     "own; the unit test compares it with the real forward pass and with jet",
              "vmap": "the distances are vmapped inside one program; a loop of single distances would compile a "
                      "second program for nothing new",
              "diverge": _PURE},
        vary={"t": np.array([0.5j, 1e-3 + 1j, 2.0]), "x": _DATA2["x_train"][:8]}),
    Sim("softmax_radius.normalization_branch_point", _branch,
        outputs=lambda o: [o["point"], o["residual"], o["count"]], grid=("rows", np.arange(3), 0),
        bad=[({"rows": np.array([3])}, "rows"), ({"start": 0.0}, "start"), ({"iters": 0}, "iters"),
             ({"x": np.zeros((3, 5))}, "x")],
        # the residual is round-off at the located zero (~1e-17): compared absolutely
        atol=1e-12,
        skip={"jit": "NumPy secant iterations around one compiled continuation (the interpreter of continued_logits, "
                     "whose own row says why it is not run eagerly); the unit test compares it with the closed form",
              "diverge": "a root search on a fixed model and direction: nothing is trained, nothing can diverge"},
        vary={"x": _DATA2["x_train"][:3]}),
    Sim("softmax_radius.rho_a", _rho_a, grid=None, bad=_BAD_MODEL + [({"temperature": 0.0}, "temperature"),
                                                                     ({"temperature": NAN}, "temperature")],
        skip={"vmap": "a reduction over the whole data set; one_step_sweep is its sweep over directions",
              "diverge": _PURE}, vary={"x": _DATA2["x_train"]}),
    Sim("softmax_radius.directional_derivatives", _jvp, bad=_BAD_MODEL,
        skip={"vmap": "per-sample outputs for one direction; one_step_sweep sweeps directions", "diverge": _PURE},
        vary={"x": _DATA2["x_train"]}),
    Sim("softmax_radius.line_taylor", _line_taylor, rtol=1e-9,
        bad=[({"order": 0}, "order"), ({"order": 65}, "order"), ({"y": _Y[:8].astype(float)}, "y"),
             ({"y": _Y[:7]}, "y"), ({"v": {"W0": np.zeros(3)}}, "v")],
        skip={"vmap": "per-sample coefficients come out of one jet pass; logit_line_taylor has the row grid",
              "diverge": _PURE}, vary={"x": _DATA2["x_train"][:8], "y": _DATA2["y_train"][:8]}),
    Sim("softmax_radius.logit_line_taylor", _logit_line_taylor, grid=("rows", np.arange(4), 0),
        bad=[({"order": 0}, "order"), ({"a": np.zeros((4, 2))}, "a"), ({"z": np.full((4, 3), NAN)}, "z"),
             ({"y": np.array([0, 1, 2, 3])}, "y")],
        skip={"diverge": _PURE, "jit": "the compiled program of row line_taylor (jet through a model whose logits are "
                                       "z + t a), whose row checks jit equals eager"},
        vary={"z": _ZA[:, 3:], "a": _ZA[:, :3]}),
    Sim("softmax_radius.one_step_sweep", _sweep, outputs=lambda o: [o[k] for k in _SWEEP_OUT],
        grid=("idx", np.arange(3), 0),
        bad=[({"r": np.array([-1.0])}, "r"), ({"r": np.array([NAN])}, "r"), ({"model": "mlp"}, "model"),
             ({"temperature": -1.0}, "temperature"), ({"directions": _V}, "directions"),
             ({"y": _Y[:5]}, "y")],
        skip={"jit": _SWEEP_JIT},
        # a step of 1e200 rho_a sends the logits, hence the loss, beyond the 1e150 divergence bound
        diverging=({"r": np.array([1e200])}, lambda o: o["diverged"]),
        vary={"x": _DATA2["x_train"], "y": _DATA2["y_train"]}),
    Sim("softmax_radius.run_adam", _run_adam,
        outputs=lambda o: [o[k] for k in _TRAIN_OUT] + list(o["params"].values()),
        bad=[({"eta": -1.0}, "eta"), ({"batches": _BATCHES + 32}, "batches"), ({"batches": _BATCHES * 0.5}, "batches"),
             ({"params": {"W0": np.zeros((64, 8))}}, "params"), ({"mode": "sgd"}, "mode"),
             ({"clip_norm": 0.0}, "clip_norm"), ({"temperature": NAN}, "temperature")],
        skip={"vmap": "a single run; spike_runs and temperature_runs are its sweeps over seeds"},
        diverging=({"eta": 1e200, "mode": "plain"}, lambda o: [o["diverged"], o["diverged_step"] == 0]),
        vary={"params": {k: v + 0.01 for k, v in _P.items()}, "data": _DATA2}),
    Sim("softmax_radius.train", _train, outputs=lambda o: [o[k] for k in _TRAIN_OUT] + list(o["params"].values()),
        bad=[({"eta": -1.0}, "eta"), ({"eta": NAN}, "eta"), ({"steps": 0}, "steps"), ({"mode": "sgd"}, "mode"),
             ({"key": 0}, "key"), ({"data": {"x_train": _X}}, "data"), ({"spike_step": 3}, "spike_step"),
             ({"mode": "controller", "track_radius": False}, "track_radius"), ({"model": None}, "model"),
             ({"data": {**_DATA, "x_train": _X[:, :10]}}, "data")],
        skip={"vmap": "a single run; spike_runs and temperature_runs are its sweeps over seeds",
              "jit": "model.init and the minibatch draws (threefry) run op by op when eager (~6 s of compiles); the "
                     "training itself is run_adam, whose row checks jit equals eager"},
        # Adam moves every parameter by about eta per step: 1e200 passes the 1e150 bound at the first step
        diverging=({"eta": 1e200, "mode": "plain"}, lambda o: [o["diverged"], o["diverged_step"] == 0]),
        vary={"key": jax.random.key(1), "data": _DATA2}),
    Sim("softmax_radius.spike_runs", _spike, outputs=lambda o: [o[k] for k in _SPIKE_OUT],
        grid=("seeds", np.array([0, 1, 2]), 0),
        bad=[({"modes": ("adam",)}, "mode"), ({"seeds": [-1]}, "seeds"), ({"factor": 0.0}, "factor"),
             ({"eta": NAN}, "eta"), ({"modes": "plain"}, "modes")],
        skip={"jit": _GRID_JIT},
        diverging=({"eta": 1e200, "modes": ("plain",)}, lambda o: o["diverged"]),
        vary={"seeds": [5, 6], "data": _DATA2}),
    Sim("softmax_radius.temperature_runs", _temperature, outputs=lambda o: [o[k] for k in _TEMP_OUT],
        grid=("seeds", np.array([0, 1, 2]), 0),
        bad=[({"temperatures": [0.0]}, "temperatures"), ({"r": np.array([NAN])}, "r"), ({"eta": 0.0}, "eta"),
             ({"seeds": [0.5]}, "seeds")],
        skip={"jit": _GRID_JIT},
        diverging=({"eta": 1e200}, lambda o: o["diverged"]),
        vary={"seeds": [5, 6], "data": _DATA2}),
    Sim("softmax_radius.tilted_kl", _tilted_kl, outputs=lambda o: [o["forward"], o["reverse"]], grid=("t", _T, 0),
        bad=[({"p": np.array([0.5, 0.6, -0.1, 0.0])}, "p"), ({"p": np.array([0.5, 0.3, 0.1, 0.0])}, "p"),
             ({"a": np.ones(3)}, "a"), ({"t": np.array([NAN])}, "t")],
        skip={"diverge": _PURE}, vary={"t": _T[::-1].copy(), "a": _SLOPES[::-1].copy()}),
    Sim("softmax_radius.cgf_increment", _cgf, grid=("t", _T, 0),
        bad=[({"p": np.array([0.5, 0.6, -0.1, 0.0])}, "p"), ({"t": "x"}, "t")],
        skip={"diverge": _PURE}, vary={"t": _T[::-1].copy()}),
]
