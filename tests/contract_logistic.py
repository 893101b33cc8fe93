"""Contract rows for the public simulators of :mod:`sims.logistic` (run by tests/test_contract.py)."""
import numpy as np

import sims.logistic as sim
from tests._contract_table import Sim

Z2 = np.array([[1.0, 0.3], [-0.5, 1.2], [0.7, -1.1], [-1.3, -0.2], [2.0, 0.5]])
A2 = np.array([0.1, 0.3, 0.2, 0.25, 0.15])
SEPARABLE = np.array([[1.0, 0.2], [2.0, -0.1], [0.5, 0.4], [1.5, 0.0], [0.8, -0.3]])  # every z_i.(1, 0) > 0
ETA = np.array([1.0, 5.0, 9.0])
INITS = np.array([[0.5, -0.5], [2.0, 1.0]])
W = np.array([0.4, -0.9])


def _gd(z=Z2, weights=A2, eta=ETA, inits=INITS, n_steps=8, keep_last=3):
    return sim.gd(z, weights, eta, inits, n_steps, keep_last=keep_last)


def _attractors(z=Z2, weights=A2, eta=ETA, inits=INITS, n_steps=12, max_period=2, tol=1e-9):
    return sim.attractors(z, weights, eta, inits, n_steps=n_steps, max_period=max_period, tol=tol)


def _jacobian(z=Z2, weights=A2, eta=5.0, point=W, period=2):
    return sim.cycle_jacobian(z, weights, eta, point, period)


Z6 = np.array([1.0, -1.0, 2.0, -0.5, 1.5, -2.0])   # 1-D, 6 points, 41 saves: the rod-flow program the claims compile
A6 = np.array([0.3, 0.2, 0.1, 0.15, 0.1, 0.15])


def _rod(z=Z6, weights=A6, eta=ETA, inits=np.array([0.5, 2.0]), t1=3.0):
    return sim.rod_flow(z, weights, eta, inits, np.linspace(0.0, t1, 41))


def _flagged(out):
    return out["diverged"] & out["escaped"] & (out["diverged_step"] >= 0)


_GRID_BAD = [
    ({"eta": [0.0]}, "eta"), ({"eta": [np.nan]}, "eta"), ({"eta": "fast"}, "eta"), ({"eta": [-1.0]}, "eta"),
    ({"inits": np.zeros((2, 3))}, "inits"), ({"inits": [[np.nan, 0.0]]}, "inits"),
    ({"n_steps": 0}, "n_steps"), ({"n_steps": 2.5}, "n_steps"), ({"n_steps": True}, "n_steps"),
    ({"z": [[1.0, np.inf]] * 5}, "z"), ({"weights": -A2}, "weights"), ({"weights": A2[:3]}, "weights"),
    ({"weights": np.zeros(5)}, "weights"), ({"z": "data"}, "z"),
]

_POINT_BAD = [({"w": [1.0, 2.0, 3.0]}, "w"), ({"w": [np.nan, 0.0]}, "w"), ({"z": [[1.0, np.nan]] * 5}, "z"),
              ({"weights": [0.5] * 4}, "weights")]


def _point_row(name, fn, vary_w):
    def call(w=W, z=Z2, weights=A2):
        return fn(w, z, weights)
    return Sim(f"logistic.{name}", call, bad=_POINT_BAD, vary={"w": vary_w},
               skip={"vmap": "evaluates one point; no grid axis",
                     "diverge": "a closed-form evaluation has no dynamics that could diverge"})


SIMULATORS = [
    Sim("logistic.gd", _gd, outputs=lambda o: [o["w"], o["diverged"], o["diverged_step"], o["escaped"]],
        grid=("eta", ETA, 0),
        bad=_GRID_BAD + [({"keep_last": 9}, "keep_last"), ({"keep_last": 0}, "keep_last")],
        diverging=({"z": SEPARABLE, "weights": None}, _flagged),
        vary={"z": Z2 * 1.1, "eta": ETA * 0.9, "inits": INITS + 0.1}),
    Sim("logistic.attractors", _attractors,
        outputs=lambda o: [o["period"], o["points"], o["last"], o["diverged"], o["diverged_step"], o["escaped"]],
        nan_padding={"points": "a cycle's points, NaN-padded to max_period (and NaN for no cycle; documented)"},
        grid=("eta", ETA, 0),
        bad=_GRID_BAD + [({"max_period": 0}, "max_period"), ({"tol": -1.0}, "tol"), ({"tol": np.nan}, "tol"),
                         ({"tol": 2.0}, "tol"), ({"n_steps": 3}, "n_steps")],
        diverging=({"z": SEPARABLE, "weights": None},
                   lambda o: _flagged(o) & (o["period"] == sim.PERIOD_ESCAPED)),
        vary={"z": Z2 * 1.1, "eta": ETA * 0.9, "inits": INITS + 0.1}),
    Sim("logistic.cycle_jacobian", _jacobian,
        bad=[({"period": 0}, "period"), ({"period": 1.5}, "period"), ({"eta": 0.0}, "eta"),
             ({"point": [1.0, 2.0, 3.0]}, "point"), ({"point": [np.inf, 0.0]}, "point")],
        vary={"point": W + 0.3, "eta": 4.0, "z": Z2 * 0.9},
        skip={"vmap": "one point per call; the grid axis lives in gd/attractors",
              "diverge": "a Jacobian of finitely many steps of a bounded-gradient map is finite"}),
    Sim("logistic.rod_flow", _rod, outputs=lambda o: [o["center"], o["r"], o["diverged"], o["diverged_step"]],
        grid=("eta", ETA, 0),
        bad=[({"eta": [0.0]}, "eta"), ({"inits": np.zeros((2, 3))}, "inits"), ({"t1": -1.0}, "ts"),
             ({"weights": -A6}, "weights")],
        # the flow is bounded (bounded gradient); a solver that runs out of its 1e5 steps before t1 = 1e8 is the
        # failure reported as data
        diverging=({"t1": 1e8}, lambda o: o["diverged"]),
        vary={"eta": ETA * 0.9, "inits": np.array([0.6, 1.9])}, rtol=1e-9, atol=1e-11,  # adaptive steps: round-off in the error norm
        skip={"jit": "eager diffrax runs its adaptive-step loop primitive by primitive (minutes for one short solve); "
                     "tests/test_logistic.py checks the rod flow against SciPy's solve_ivp"}),
    _point_row("loss", sim.loss, W + 0.2),
    _point_row("grad", sim.grad, W + 0.2),
    _point_row("hessian", sim.hessian, W + 0.2),
]
