"""Contract rows of the edge-of-stability simulators (see tests/test_contract.py).

Compilation dominates the topic's test time, so the rows reuse the programs the quick claims compile
where the eager (jit-equals-eager) run stays cheap: the flows use ``N_SAVE`` save times and the network
its 80 measurements (data-dependent spacing). GD on the polynomials and the catapult get small
configurations of their own (20 and 40 steps): their eager runs over the claims' 800 / 400 steps would
cost more than the extra compilation.
"""
from __future__ import annotations

import sys

import jax
import numpy as np

import sims.eos as sim
import sims.eos_relu as relu_sim
import theory.eos as th
from paper_checks import Budget
from paper_checks.eos.experiments import mlp_setup

try:  # the row type in a module of its own (no import cycle with the test module that loads this table)
    from tests._contract_table import Sim
except ImportError:  # older layout: the row type lives in the test module itself
    _contract = sys.modules.get("test_contract") or sys.modules.get("tests.test_contract")
    if _contract is None:
        from tests.test_contract import Sim
    else:  # imported by tests/test_contract.py while it builds its table
        Sim = _contract.Sim

QUICK = Budget("quick")
TOY = th.selfstab_coefficients(3.8, 0.1)  # eta*a = 1.9 at eta = 0.5: inside the window


def _poly_gd(coef=TOY, eta=(0.5, 0.48), w0=(0.1, 0.0), n_steps=20, n_blocks=10, momentum=0.0, nesterov=False):
    return sim.poly_gd(coef, eta, w0, n_steps=n_steps, n_blocks=n_blocks, momentum=momentum, nesterov=nesterov)


def _poly_flow(coef=TOY, eta=(0.5, 0.48), w0=(0.1, 0.0), t1=4.0, flow="central", relax=1.0):
    return sim.poly_flow(coef, eta, w0, np.linspace(0.0, t1, sim.N_SAVE), flow=flow, relax=relax)


def _catapult(keys=None, eta_lambda0=(1.5, 3.0, 4.5), width=64):
    keys = jax.random.split(jax.random.key(0), 2) if keys is None else keys
    return sim.catapult_gd(keys, eta_lambda0, width=width, n_steps=40, n_blocks=4)


_MLP = mlp_setup(QUICK)


def _mlp(keys=None, eta=0.5, methods=("gd", "central"), every=1, X=None, Y=None, momentum=0.0):
    keys = jax.random.split(jax.random.key(3), 1) if keys is None else keys
    return sim.mlp_run(keys, eta, _MLP["X"] if X is None else X, _MLP["Y"] if Y is None else Y, widths=_MLP["widths"],
                       methods=methods, momentum=momentum, n_steps=(_MLP["n_steps"] // _MLP["every"]) * every,
                       every=every, substeps=_MLP["substeps"], lanczos_iter=_MLP["lanczos_iter"])


_TRACK = {"X": sim.mlp_data(jax.random.key(20250413), 32, 4)[0], "Y": sim.mlp_data(jax.random.key(20250413), 32, 4)[1]}


def _track(keys=None, eta=1.0, n_steps=40, window=20, X=None, Y=None, substeps=4):
    keys = jax.random.split(jax.random.key(5), 2) if keys is None else keys
    return sim.mlp_track(keys, eta, _TRACK["X"] if X is None else X, _TRACK["Y"] if Y is None else Y, widths=(4, 8, 1),
                         n_steps=n_steps, window=window, substeps=substeps)


RELU_WIDTHS = (64, 8, 8, 10)  # two hidden layers of 8: 656 parameters, small enough for a dense Gauss-Newton matrix
RELU_DATA = relu_sim.digits_data(16)


def _relu(keys=None, eta_lambda0=(1.5, 3.0, 60.0), X=None, Y=None, n_steps=20, lanczos_iter=12):
    keys = jax.random.split(jax.random.key(4), 1) if keys is None else keys
    return relu_sim.relu_gd(keys, eta_lambda0, RELU_DATA[0] if X is None else X, RELU_DATA[1] if Y is None else Y,
                       widths=RELU_WIDTHS, n_steps=n_steps, lanczos_iter=lanczos_iter)


_GD_OUT = lambda o: [o["block_mean"], o["final"], o["gap2"], o["diverged"], o["diverged_step"]]  # noqa: E731
_FLOW_OUT = lambda o: [o["center"], o["r"], o["sharpness"], o["sigma2"], o["diverged"]]  # noqa: E731

SIMULATORS = [
    Sim("eos.poly_gd", _poly_gd, outputs=_GD_OUT, grid=("eta", np.array([0.5, 0.49, 0.47]), 0),
        bad=[({"eta": -0.1}, "eta"), ({"eta": np.nan}, "eta"), ({"w0": (1.0,)}, "w0"), ({"n_blocks": 7}, "n_blocks"),
             ({"momentum": 1.0}, "momentum"), ({"coef": np.zeros((2, 2))}, "coef"), ({"nesterov": "yes"}, "nesterov"),
             ({"n_steps": 0}, "n_steps")],
        # eta*a = 2.5 > 2: every point is unstable along x
        diverging=({"eta": (0.5, 0.6), "coef": th.selfstab_coefficients(5.0, 0.1)}, lambda o: o["diverged"]),
        vary={"w0": (0.2, 0.05), "eta": (0.45, 0.44)}),
    Sim("eos.poly_flow", _poly_flow, outputs=_FLOW_OUT, grid=("eta", np.array([0.5, 0.45]), 0),
        bad=[({"flow": "curl"}, "flow"), ({"relax": 0.0}, "relax"), ({"eta": 0.0}, "eta"), ({"t1": -1.0}, "ts"),
             ({"coef": np.ones((3, 3, 3, 3))}, "coef")],
        # gradient flow of -x^2/2 grows like exp(eta t): past 1e50 (the divergence bound) by t = 300
        diverging=({"coef": np.array([[0, 0, 0], [0, 0, 0], [-0.5, 0, 0]]), "w0": (1.0, 0.0), "t1": 300.0,
                    "flow": "gradient"}, lambda o: o["diverged"]),
        vary={"w0": (0.12, 0.01)}, rtol=1e-9, atol=1e-11,  # adaptive steps: round-off in the error norm
        skip={"jit": "eager diffrax runs its adaptive-step loop primitive by primitive (minutes for one short solve); "
                     "the vector field's explicit derivatives are the ones poly_gd evaluates (eager-tested), and "
                     "tests/test_eos.py checks every flow against SciPy's LSODA"}),
    Sim("eos.catapult_gd", _catapult, outputs=lambda o: [o["final_eta_lambda"], o["max_loss_ratio"], o["diverged"]],
        grid=("eta_lambda0", np.array([1.5, 3.0, 4.5]), 0),
        bad=[({"keys": np.zeros(2, np.uint32)}, "keys"), ({"eta_lambda0": (-1.0,)}, "eta_lambda0"), ({"width": 0}, "width")],
        diverging=({"eta_lambda0": (4.2, 5.0)}, lambda o: o["diverged"]),
        vary={"keys": jax.random.split(jax.random.key(7), 2)}),
    Sim("eos.mlp_run", _mlp, outputs=lambda o: [o["sharpness"], o["loss"], o["mean_loss"], o["diverged"]],
        grid=("methods", np.array(["gd", "central"]), 0),
        bad=[({"methods": ("gd", "adam")}, "methods"), ({"eta": (0.5, -1.0)}, "eta"), ({"every": 0}, "every"),
             ({"methods": 3}, "methods"),
             ({"keys": np.zeros(2, np.uint32)}, "keys"), ({"momentum": 1.5}, "momentum"),
             ({"X": np.ones((128, 3))}, "widths")],
        diverging=({"eta": (5.0, 8.0), "methods": ("gd", "heavy_ball"), "momentum": 0.5}, lambda o: o["diverged"]),
        vary={"keys": jax.random.split(jax.random.key(11), 1)},
        skip={"jit": "eager Lanczos refreshes at every substep take minutes; the per-substep rules are shared with "
                     "poly_gd/poly_flow (eager-tested) and GD = Euler gradient flow is tested in tests/test_eos.py"}),
    Sim("eos.mlp_track", _track, outputs=lambda o: [o["mean_theta"], o["sharpness"], o["mean_loss"], o["diverged"]],
        grid=("keys", jax.random.split(jax.random.key(5), 2), 0),
        bad=[({"eta": -1.0}, "eta"), ({"window": 7}, "window"), ({"substeps": 3}, "substeps"),
             ({"keys": np.zeros(2, np.uint32)}, "keys"), ({"X": np.ones((32, 3))}, "widths")],
        # GD at eta = 50 on a loss of sharpness ~1.3 at the start: |1 - 50 S| > 1 blows up within a few steps
        diverging=({"eta": 50.0}, lambda o: o["diverged"][:, 0]),
        vary={"keys": jax.random.split(jax.random.key(9), 2)},
        skip={"jit": "eager exact Hessians and eigendecompositions at every substep take minutes; the per-substep "
                     "rules (GD, Euler with the projection) are unit-tested in tests/test_eos.py"}),
    Sim("eos.relu_gd", _relu, outputs=lambda o: [o["lambda0"], o["final_loss"], o["max_loss_ratio"], o["diverged"]],
        grid=("eta_lambda0", np.array([1.5, 3.0, 8.0]), 0),
        bad=[({"keys": np.zeros(2, np.uint32)}, "keys"), ({"eta_lambda0": (-1.0,)}, "eta_lambda0"),
             ({"n_steps": 0}, "n_steps"), ({"X": np.ones((16, 3))}, "widths"), ({"lanczos_iter": 0}, "lanczos_iter")],
        # 1e4 times the linearized edge's step: the first step takes the loss past 1e8 times its start (this narrow net
        # survives c = 60 by dying, its ReLUs all off, at the loss of f = 0)
        diverging=({"eta_lambda0": (1e4, 1e6)}, lambda o: o["diverged"]),
        vary={"keys": jax.random.split(jax.random.key(8), 1)}),
]
