"""Rows of the simulator contract (tests/test_contract.py) for sims/sign_floor.py.

One row per public simulator: ``simulate`` (four rows: signSGD/Signum with both noises, normalized SGD
with Student-t noise and Lion, which run on the shared ``sims.nqm`` kernel, and the Bernoulli sign
chains), ``ladder`` and the per-run kernels ``chain_run`` (the Bernoulli sign chain) and
``ladder_run`` (called through one module-level ``jax.jit`` with static arguments, as a user would).
Small static setups (T = 12, 3 records, chunks of 8; T = 6 for the eagerly run kernels) keep it short. Eager execution
compiles every primitive on its own (seconds per row), so jit-equals-eager runs on the kernels,
where the maths lives; the sweep wrappers around them are compared with a loop of single runs.
"""

import jax
import numpy as np

from sims import sign_floor as S

from tests._contract_table import Sim

NAN = float("nan")
_OUT = ("mean_f", "final_f", "curve", "diverged", "diverged_step")


def _simulate(**over):
    # three steps, like the vmap row's grid: every call of a row then runs one compiled shape
    args = dict(key=jax.random.key(0), eta=np.array([0.05, 0.1, 0.02]), x0=np.array([0.3, -0.2]), h=np.array([1.0, 3.0]),
                method="sign", beta=0.5, sigma_m=0.5, sigma_a=0.2, cooldown=0.5, T=12, n_rec=3, burn=2, n_chains=2,
                paired=True, chunk_size=8)
    return S.simulate(**(args | over))


def _simulate_normalized(**over):
    return _simulate(**({"method": "normalized", "law": "student", "df": 3, "sigma_a": 0.0} | over))


def _simulate_bernoulli(**over):
    """signSGD without momentum or additive noise: Bernoulli sign steps, a non-integer Student-t df."""
    return _simulate(**({"beta": 0.0, "sigma_a": 0.0, "law": "student", "df": 1.5, "T": 300, "n_rec": 3} | over))


def _simulate_lion(**over):
    return _simulate(**({"method": "lion", "beta": 0.9, "beta2": 0.99, "sigma_a": 0.0} | over))


def _ladder(**over):
    args = dict(key=jax.random.key(0), sigma=np.array([0.5, 1.0]), theta=0.3, T=12, burn=2, n_chains=2, paired=True,
                chunk_size=8)
    return S.ladder(**(args | over))


_chain_jit = jax.jit(S.chain_run, static_argnames=("T", "n_rec", "law", "df", "impl", "block"))
_ladder_jit = jax.jit(S.ladder_run, static_argnames=("T", "law", "df", "impl", "block"))
_DATA = np.asarray(jax.random.key_data(jax.random.key(0)))


def _chain(T=6, n_rec=2, law="gaussian", df=0, block=4, burn=2, **over):
    # p_away given (as simulate passes it): the eager run then has no incomplete-beta primitives to compile
    point = dict(key_data=_DATA, key_index=np.int64(0), x0=np.array([0.3, -0.2]), h=np.array([1.0, 3.0]), eta=0.05,
                 cooldown=0.5, p_away=0.3) | over
    return _chain_jit(point, np.int64(burn), T=T, n_rec=n_rec, law=law, df=df, block=block)


def _ladder_run(T=6, law="gaussian", df=0, block=4, burn=2, **over):
    point = dict(key_data=_DATA, key_index=np.int64(0), sigma=1.0, theta=0.3, n0=0) | over
    return _ladder_jit(point, np.int64(burn), T=T, law=law, df=df, block=block)


_WRAPPER = ("a sweep of chain_run (Bernoulli sign chains) and of sims.nqm._nqm_run (every other chain), whose "
            "jit-equals-eager are rows sign_floor.chain_run and the shared NQM's; the sweep itself equals a loop of "
            "single runs (vmap row)")
_SIM_BAD = [
    ({"eta": np.array([NAN, 0.1])}, "eta"), ({"eta": np.array([0.0, 0.1])}, "eta"), ({"sigma_m": NAN}, "sigma_m"),
    ({"sigma_a": -1.0}, "sigma_a"), ({"beta": NAN}, "beta"), ({"beta": 1.0}, "beta"), ({"cooldown": NAN}, "cooldown"),
    ({"method": "adam"}, "method"), ({"T": 0}, "T"), ({"n_rec": 5}, "n_rec"), ({"burn": 12}, "burn"),
    ({"key": 0}, "key"), ({"x0": np.array([NAN, 0.0])}, "x0"), ({"h": np.array([1.0, -3.0])}, "h"),
    ({"law": "cauchy"}, "law"), ({"law": "student", "df": 2.5}, "df"), ({"n_chains": 0}, "n_chains"),
]

SIMULATORS = [
    Sim("sign_floor.simulate", _simulate, outputs=lambda o: [o[k] for k in _OUT],
        grid=("eta", np.array([0.05, 0.1, 0.02]), 0), bad=_SIM_BAD, skip={"jit": _WRAPPER},
        # |1 - eta h| ~ 1e30 per SGD step: |x| passes the 1e150 bound within T = 12 steps
        diverging=({"method": "sgd", "eta": np.array([1e30, 1e40, 1e35])}, lambda o: o["diverged"]),
        vary={"key": jax.random.key(1), "eta": np.array([0.07, 0.03, 0.04]), "x0": np.array([0.1, 0.5])}),
    Sim("sign_floor.simulate_normalized_student", _simulate_normalized, outputs=lambda o: [o[k] for k in _OUT],
        grid=("eta", np.array([0.05, 0.1, 0.02]), 0), bad=[({"df": 0}, "df"), ({"df": 65}, "df")],
        skip={"diverge": "a normalized step has length eta: the state cannot leave a bounded set in T steps",
              "jit": _WRAPPER},
        vary={"key": jax.random.key(1), "sigma_m": 0.8}),
    Sim("sign_floor.simulate_bernoulli", _simulate_bernoulli, outputs=lambda o: [o[k] for k in _OUT],
        grid=("eta", np.array([0.05, 0.1, 0.02]), 0),
        bad=[({"eta": np.array([1e149, 0.1])}, "eta"), ({"df": 0.0}, "df"), ({"law": "laplace"}, "law")],
        skip={"diverge": "a sign step has length eta and simulate refuses |x0| + T eta beyond the bound", "jit": _WRAPPER},
        vary={"key": jax.random.key(1), "sigma_m": 0.8}),
    Sim("sign_floor.simulate_lion", _simulate_lion, outputs=lambda o: [o[k] for k in _OUT],
        grid=("eta", np.array([0.05, 0.1, 0.02]), 0), bad=[({"beta2": NAN}, "beta2"), ({"beta2": -0.1}, "beta2")],
        skip={"diverge": "a Lion step has length eta per coordinate: bounded in T steps", "jit": _WRAPPER},
        vary={"key": jax.random.key(1), "sigma_m": 0.8}),
    Sim("sign_floor.ladder", _ladder, outputs=lambda o: [o[k] for k in ("m2", "m2_even", "m2_odd", "n", "n_prev")],
        grid=("sigma", np.array([0.5, 1.0, 2.0]), 0),
        bad=[({"sigma": np.array([NAN, 1.0])}, "sigma"), ({"theta": 0.0}, "theta"), ({"theta": NAN}, "theta"),
             ({"T": 13}, "T"), ({"burn": 3}, "burn"), ({"n0": 0.5}, "n0"), ({"law": "x"}, "law"), ({"key": None}, "key")],
        skip={"diverge": "integer walks cannot diverge: |n_k| <= |n_0| + k (documented in ladder)",
              "jit": "a sweep of ladder_run, whose jit-equals-eager is row sign_floor.ladder_run"},
        vary={"key": jax.random.key(1), "sigma": np.array([0.7, 1.3])}),
    Sim("sign_floor.chain_run", _chain, outputs=lambda o: [o[k] for k in _OUT],
        skip={"vmap": "a per-run kernel; its vmapped form is simulate (row sign_floor.simulate_bernoulli)",
              "diverge": ("a sign step has length eta (a huge eta sends x to the lattice through 0, where sign(0) = 0 "
                          "stops it) and simulate refuses |x0| + T eta beyond the bound; the state is checked per "
                          "block (unit test of the flag in tests/test_sign_floor.py)")},
        bad=[({"T": 0}, "T"), ({"n_rec": 4}, "n_rec"), ({"block": 0}, "block"), ({"law": "x"}, "law"),
             ({"law": "student", "df": -1.0}, "df")],
        vary={"eta": 0.07, "key_index": np.int64(3), "x0": np.array([0.1, 0.5]), "p_away": 0.1}),
    Sim("sign_floor.ladder_run", _ladder_run, outputs=lambda o: [o[k] for k in ("acc", "acc_even", "n", "n_prev")],
        skip={"vmap": "a per-run kernel; its vmapped form is ladder (row sign_floor.ladder)",
              "diverge": "integer walks cannot diverge: |n_k| <= |n_0| + k"},
        bad=[({"T": 0}, "T"), ({"law": "x"}, "law"), ({"law": "student", "df": 0}, "df")],
        vary={"sigma": 0.7, "key_index": np.int64(5), "n0": 4}),
]


# ----------------------------------------------------------------------------- sims/sign_floor_regime.py
from sims import sign_floor_regime as SR  # noqa: E402

_FLOOR_OUT = ("mean_excess", "mean_grad_sq", "final_excess", "curve", "diverged", "diverged_step")


def _digits_floors(**over):
    args = dict(key=jax.random.key(0), eta=np.array([0.05, 0.01]), method="sign", oracle="minibatch", T=2, n_rec=2,
                burn=1, n_chains=2, chunk_size=8)
    return SR.digits_floors(**(args | over))


def _noise_variance(**over):
    args = dict(key=jax.random.key(0), thetas=np.zeros((2, 170)), oracle="minibatch", n_draws=4)
    return SR.noise_variance(**(args | over))


def _mean_sign(**over):
    args = dict(key=jax.random.key(0), theta=np.zeros(170), oracle="minibatch", batch=2, n_draws=4)
    return SR.mean_sign(**(args | over))


def _well_chains(**over):
    args = dict(key=jax.random.key(0), name="exp", eta=np.array([0.1, 0.05]), sigma=1.0, T=6, burn=2,
                n_chains=2, chunk_size=8)
    return SR.well_chains(**(args | over))


SIMULATORS += [
    Sim("sign_floor.digits_floors", _digits_floors, outputs=lambda o: [o[k] for k in _FLOOR_OUT],
        grid=("eta", np.array([0.05, 0.01]), 0),
        bad=[({"eta": np.array([NAN, 0.1])}, "eta"), ({"method": "adam"}, "method"), ({"oracle": ["x", "x"]}, "oracle"),
             ({"start": "far"}, "start"), ({"n_rec": 3}, "n_rec"), ({"burn": 2}, "burn"), ({"key": 0}, "key"),
             ({"batch": 0}, "batch"), ({"lam": 0.0}, "lam"), ({"sigma": -1.0}, "sigma")],
        # |Θ| grows by ~eta*lam per SGD step: 1e60 passes the 1e150 bound within the two steps
        diverging=({"method": "sgd", "eta": np.array([1e100, 1e110])}, lambda o: o["diverged"]),
        vary={"key": jax.random.key(1), "eta": np.array([0.02, 0.03])}),
    Sim("sign_floor.noise_variance", _noise_variance,
        outputs=lambda o: [o[k] for k in ("grad_sq", "variance", "variance_se")],
        bad=[({"thetas": np.zeros((2, 3))}, "thetas"), ({"oracle": "x"}, "oracle"), ({"n_draws": 1}, "n_draws"),
             ({"key": None}, "key")],
        skip={"vmap": ("the points are one trajectory, not independent configurations: each draws from its own key "
                       "split from key by position, so splitting the points changes the draws"),
              "diverge": "a variance estimate at given points has no dynamics to diverge"},
        vary={"key": jax.random.key(1), "thetas": np.ones((2, 170)) * 0.01}),
    Sim("sign_floor.mean_sign", _mean_sign, outputs=lambda o: [o["mean"], o["se"]],
        bad=[({"theta": np.zeros(3)}, "theta"), ({"oracle": "x"}, "oracle"), ({"n_draws": 1}, "n_draws"),
             ({"batch": 0}, "batch"), ({"key": 3}, "key")],
        skip={"vmap": "one point, per-coordinate output: no configuration axis to map",
              "diverge": "a mean sign at a given point has no dynamics to diverge"},
        vary={"key": jax.random.key(1), "theta": np.full(170, 0.01)}),
    Sim("sign_floor.well_chains", _well_chains, outputs=lambda o: [o[k] for k in ("mean_f", "x", "diverged",
                                                                                    "diverged_step")],
        grid=("eta", np.array([0.1, 0.05]), 0),
        bad=[({"eta": np.array([0.0, 0.1])}, "eta"), ({"sigma": NAN}, "sigma"), ({"name": "cosh"}, "name"),
             ({"burn": 6}, "burn"), ({"T": 0}, "T"), ({"key": 1}, "key")],
        diverging=({"eta": np.array([1e200, 1e201])}, lambda o: o["diverged"]),
        vary={"key": jax.random.key(1), "eta": np.array([0.07, 0.03]), "sigma": 0.5}),
]
