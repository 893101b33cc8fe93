"""Contract rows for the public simulators of :mod:`sims.sde` (run by tests/test_contract.py).

The building blocks ``sample_noise``, ``compress``, ``direction`` and ``mlp_init`` have no row of their own:
they run (jit and eager, batched and not) inside the ``sde.paths`` and ``sde.simulate`` rows, and their
bad inputs are in tests/test_sde.py.

Step counts are tiny: the jit-equals-eager test runs every ``lax.scan`` step in Python under
``jax.disable_jit()``.
"""

import jax
import numpy as np

import sims.sde as S

from tests._contract_table import Sim

KEYS = jax.random.split(jax.random.key(11), 3)
KEY = jax.random.key(3)
CFG = S.Config(problem="quartic", algo="dcsgd", n_agents=3, compressor="bernoulli", noise="gaussian", n_steps=4,
               n_record=2)
GD = S.Config(problem="quartic", algo="dsgd", noise="none", n_agents=1, n_steps=6, n_record=2)
RAW_KEY = np.zeros(2, np.uint32)


def _paths(keys=KEYS, x0=1.2, eta=0.1, omega=1.0, sigma1=0.5, cfg=CFG, extra=None):
    n = keys.shape[0]
    grid = {"key": keys, "x0": np.full((n, 1), x0), "eta": np.full(n, eta), "omega": np.full(n, omega),
            "sigma1": np.full(n, sigma1), **(extra or {})}
    return S.paths(cfg, grid)


def _simulate(key=KEY, x0=1.2, eta=0.1, cfg=CFG, **params):
    return S.simulate(key, np.array([x0]), eta, cfg, **{"omega": 1.0, "sigma1": 0.5, **params})


def _sde_path(key=KEY, x0=1.3, eta=0.1, dt=0.01, n_steps=3, kind="corrected", sigma0=0.2, sigma1=0.0, scheme="heun"):
    return S.sde_path(key, np.array([x0]), eta, problem="quartic", kind=kind, dt=dt, n_steps=n_steps, sigma0=sigma0,
                      sigma1=sigma1, scheme=scheme)


def _coupled(key=KEY, x0=1.0, eta=0.5, T=1.0, max_steps=3, substeps=1, sigma0=0.3):
    return S.coupled_weak_paths(key, np.array([x0]), eta, problem="quartic", T=T, max_steps=max_steps,
                                substeps=substeps, sigma0=sigma0)


def _escape(x0=1.0, eta=0.1, problem="quartic", gd_steps=2, ode_steps=2):
    return S.escape_paths(x0, eta, problem=problem, gd_steps=gd_steps, ode_steps=ode_steps)


X = np.array([-2.0, 0.3, 1.5])


def _descent(x=X, eta_unit=None, problem="cosh2", n_bisect=30):
    eta_unit = np.full(np.shape(x), 0.5) if eta_unit is None else eta_unit
    return S.descent_edge(x, eta_unit, problem=problem, n_bisect=n_bisect)


def _derivatives(x=X, problem="cosh2"):
    return S.derivatives(problem, x)


def _mean_sign(key=KEY, grad=np.array([0.0, 0.5]), scale=1.0, noise="cauchy", n=500):
    return S.mean_sign_mc(key, grad, scale, noise, n)


# The static configuration and shapes of the sde.mean_sign experiment at the quick budget: one compilation for both.
U17 = np.linspace(-4, 4, 17)


def _mean_sign_many(keys=KEYS, grad=U17, scale=1.0, noises=("gaussian", "student_t", "cauchy"), n=20_000):
    return S.mean_sign_mc_many(keys, grad, scale, noises, n, 3.0)


def _aggregate(key=KEY, cfg=CFG, grad=np.array([0.7]), n=50, omega=1.0, sigma1=0.5):
    return S.aggregate_samples(key, cfg, grad, n, omega=omega, sigma1=sigma1)


def _drift(x=X, eta=0.2, kind="corrected", problem="quartic"):
    return S.drift(problem, kind, x, eta)


def _dcsgd_sde(key=KEY, x0=np.array([1.2, -0.8]), eta=0.1, dt=0.01, n_steps=4, kind="corrected", omega=1.0,
               sigma0=0.2, sigma1=0.5, n_agents=3):
    return S.dcsgd_sde(key, x0, eta, problem="quartic", kind=kind, dt=dt, n_steps=n_steps, n_record=2, omega=omega,
                       sigma0=sigma0, sigma1=sigma1, n_agents=n_agents)


def _dsignsgd_sde(key=KEY, x0=np.array([1.2, -0.8]), eta=0.1, dt=0.01, n_steps=4, noise="student_t", nu=2.5,
                  sigma0=1.0, sigma1=0.0, n_agents=3):
    return S.dsignsgd_sde(key, x0, eta, problem="quartic", noise=noise, nu=nu, dt=dt, n_steps=n_steps, n_record=2,
                          sigma0=sigma0, sigma1=sigma1, n_agents=n_agents)


def _sde_sweep(keys=KEYS, x0=1.2, eta=0.1, dt=0.01, kind=np.array([2, 2, 2]), method="dcsgd", n_steps=4):
    n = keys.shape[0]
    grid = {"key": keys, "x0": np.full((n, 1), x0), "eta": np.full(n, eta), "dt": np.full(n, dt),
            "sigma1": np.full(n, 0.5), "n_agents": np.full(n, 3.0), "kind": kind[:n]}
    return S.sde_sweep(method, grid, problem="quartic", kind=None, n_steps=n_steps, n_record=2)


_NO_GRID = "one path (or one point) per call; the grid form is sde.paths"
# Eager runs compile every primitive separately (seconds each row): building blocks whose code already runs
# eagerly inside another row are compared there.
_EAGER_IN_PATHS = "runs eagerly inside the sde.paths row (the same code under jax.disable_jit)"
_SAMPLER = ("a random sampler without value-dependent control flow, jitted as a whole; the simulators that use it "
            "are compared eagerly (sde.paths)")
_BOUNDED = "returns bounded quantities (signs, masks, one step of a convex function): nothing can diverge"

SIMULATORS = [
    Sim("sde.paths", _paths, outputs=lambda o: [o["loss"], o["x"], o["diverged"], o["diverged_at"], o["loss0"]],
        grid=("keys", KEYS, 0),
        bad=[({"eta": 0.0}, "eta"), ({"eta": np.nan}, "eta"), ({"x0": np.nan}, "x0"), ({"omega": -1.0}, "omega"),
             ({"sigma1": np.inf}, "sigma1"), ({"extra": {"gamma": np.ones(3)}}, "gamma"),
             ({"cfg": "dcsgd"}, "cfg"), ({"keys": np.zeros((3, 2), np.uint32)}, "key")],
        diverging=({"x0": 30.0, "cfg": GD}, lambda o: o["diverged"] & (o["diverged_at"] >= 1)),
        vary={"keys": jax.random.split(jax.random.key(12), 3), "eta": 0.05, "x0": 0.9}),
    Sim("sde.simulate", _simulate, outputs=lambda o: [o["loss"], o["x"], o["diverged"], o["diverged_at"]],
        bad=[({"eta": -0.1}, "eta"), ({"eta": np.nan}, "eta"), ({"x0": np.inf}, "x0"), ({"key": RAW_KEY}, "key"),
             ({"lr": 0.1}, "params"), ({"omega": -2.0}, "omega"), ({"cfg": None}, "cfg")],
        diverging=({"x0": 30.0, "cfg": GD}, lambda o: o["diverged"] & (o["diverged_at"] >= 1)),
        vary={"key": jax.random.key(4), "x0": 0.8, "eta": 0.07},
        skip={"vmap": _NO_GRID, "jit": "the per-path kernel of sde.paths, compared eagerly in that row"}),
    Sim("sde.sde_path", _sde_path, outputs=lambda o: [o["x"], o["loss"], o["diverged"], o["diverged_at"]],
        bad=[({"dt": -0.01}, "dt"), ({"dt": np.nan}, "dt"), ({"dt": 0.0}, "dt"), ({"n_steps": 0}, "n_steps"),
             ({"kind": "third_order"}, "kind"), ({"sigma1": 0.5}, "sigma1"), ({"eta": np.nan}, "eta"),
             ({"x0": np.nan}, "x0"), ({"scheme": "rk4"}, "scheme"), ({"key": RAW_KEY}, "key")],
        # s = eta x0^2 = 0.9 > 2/3: the corrected drift blows up in finite time
        diverging=({"x0": 3.0, "sigma0": 0.0, "n_steps": 60}, lambda o: o["diverged"] & (o["diverged_at"] >= 1)),
        vary={"key": jax.random.key(5), "x0": 1.1, "eta": 0.05, "dt": 0.02},
        skip={"vmap": _NO_GRID}),
    Sim("sde.coupled_weak_paths", _coupled,
        outputs=lambda o: [o["x"], o["X_first_order"], o["X_second_order"], o["X_corrected"], o["diverged"]],
        bad=[({"eta": 0.0}, "eta"), ({"eta": 0.01}, "max_steps"), ({"T": -1.0}, "T"), ({"substeps": 0}, "substeps"),
             ({"sigma0": -0.1}, "sigma0"), ({"x0": np.nan}, "x0"), ({"key": RAW_KEY}, "key")],
        # eta x0^2 = 5 > 2: discrete GD escapes within the horizon
        diverging=({"x0": 5.0, "eta": 0.2, "T": 1.0, "max_steps": 5, "sigma0": 0.0},
                   lambda o: o["diverged"] & (o["diverged_at"] >= 1)),
        vary={"key": jax.random.key(6), "eta": 0.3, "x0": 0.8},
        skip={"vmap": _NO_GRID}),
    Sim("sde.escape_paths", _escape,
        bad=[({"eta": 0.0}, "eta"), ({"x0": np.nan}, "x0"), ({"x0": 0.0}, "x0"), ({"problem": "mlp"}, "problem"),
             ({"gd_steps": 0}, "gd_steps")],
        diverging=({"x0": 30.0, "gd_steps": 8}, lambda o: o["gd_diverged"] & o["gd_grew"] & np.isinf(o["gd_rate"])),
        vary={"x0": 1.5, "eta": 0.2},
        skip={"vmap": "x0 holds the coordinates of one start; the grid form is _escape_point under run_grid",
              "jit": "its ODE half is the sde_path kernel and its integrator step the one compared eagerly in the "
                     "sde.sde_path and sde.coupled_weak_paths rows; its GD half is a one-line scan"}),
    Sim("sde.descent_edge", _descent, grid=("x", X, 0),
        bad=[({"eta_unit": np.zeros(3)}, "eta_unit"), ({"eta_unit": np.ones(2)}, "eta_unit"),
             ({"x": np.array([np.nan, 1.0, 2.0])}, "x"), ({"problem": "mlp"}, "problem"), ({"n_bisect": 0}, "n_bisect")],
        vary={"x": X * 1.3},
        skip={"diverge": _BOUNDED}),
    Sim("sde.derivatives", _derivatives, grid=("x", X, 0),
        bad=[({"x": np.array([np.inf])}, "x"), ({"x": np.ones((2, 2))}, "x"), ({"problem": "sphere"}, "problem")],
        vary={"x": X + 0.2},
        skip={"diverge": "closed-form derivatives at given points: no dynamics"}),
    Sim("sde.mean_sign_mc", _mean_sign,
        bad=[({"n": 1}, "n"), ({"scale": 0.0}, "scale"), ({"noise": "none"}, "noise"), ({"key": RAW_KEY}, "key"),
             ({"grad": np.array([np.nan])}, "grad")],
        vary={"key": jax.random.key(7), "grad": np.array([0.1, -0.3])},
        skip={"vmap": "the draws for all entries of grad come from one key (common random numbers); entries are "
                      "not independent grid points", "diverge": _BOUNDED, "jit": _SAMPLER}),
    Sim("sde.mean_sign_mc_many", _mean_sign_many, outputs=lambda o: [o[k][m] for k in sorted(o) for m in ("mean", "var")],
        bad=[({"keys": KEYS[:2]}, "keys"), ({"noises": ["gaussian"]}, "noises"), ({"noises": ("gaussian", "laplace", "x")}, "noises"),
             ({"n": 0}, "n")],
        vary={"keys": jax.random.split(jax.random.key(8), 3)},
        skip={"vmap": "one key per law; the laws are not a grid axis", "diverge": _BOUNDED,
              "jit": _SAMPLER}),
    Sim("sde.aggregate_samples", _aggregate,
        bad=[({"n": 0}, "n"), ({"cfg": "x"}, "cfg"), ({"omega": -1.0}, "omega"), ({"sigma1": np.nan}, "sigma1"),
             ({"key": RAW_KEY}, "key")],
        vary={"key": jax.random.key(9), "grad": np.array([-0.4])},
        skip={"vmap": "n independent draws at one gradient; the draws are the batch", "diverge": _BOUNDED,
              "jit": "direction() " + _EAGER_IN_PATHS}),
    Sim("sde.dcsgd_sde", _dcsgd_sde, outputs=lambda o: [o["x"], o["loss"], o["diverged"], o["diverged_at"]],
        bad=[({"dt": 0.0}, "dt"), ({"dt": np.nan}, "dt"), ({"eta": -0.1}, "eta"), ({"x0": np.array([np.nan])}, "x0"),
             ({"kind": "third_order"}, "kind"), ({"omega": -1.0}, "omega"), ({"omega": np.ones(2)}, "omega"),
             ({"n_agents": 0}, "n_agents"), ({"sigma1": np.inf}, "sigma1"), ({"n_steps": 3}, "n_record"),
             ({"key": RAW_KEY}, "key")],
        # s = eta x0^2 = 0.9 > 2/3 in the first coordinate: the corrected drift blows up in finite time
        diverging=({"x0": np.array([3.0, 0.1]), "sigma0": 0.0, "sigma1": 0.0, "n_steps": 60},
                   lambda o: o["diverged"] & (o["diverged_at"] >= 1)),
        vary={"key": jax.random.key(13), "x0": np.array([0.7, 0.4]), "eta": 0.05, "dt": 0.02, "sigma1": 0.3},
        skip={"vmap": "one path per call; the grid form is sde.sde_sweep"}),
    Sim("sde.dsignsgd_sde", _dsignsgd_sde, outputs=lambda o: [o["x"], o["loss"], o["diverged"], o["diverged_at"]],
        bad=[({"noise": "laplace"}, "noise"), ({"nu": None}, "nu"), ({"nu": -1.0}, "nu"), ({"noise": "cauchy"}, "nu"),
             ({"dt": -1.0}, "dt"), ({"n_agents": 1.5}, "n_agents"), ({"sigma0": np.nan}, "sigma0"),
             ({"key": RAW_KEY}, "key")],
        vary={"key": jax.random.key(14), "x0": np.array([0.5, 2.0]), "eta": 0.2, "nu": 2.5, "sigma0": 0.7},
        skip={"vmap": "one path per call; the grid form is sde.sde_sweep",
              "diverge": "the sign SDE's drift and diffusion are bounded by 1 and sqrt(eta/N): a path moves at most "
                         "|dt| + sqrt(eta dt/N)|dW| per step and cannot blow up"}),
    Sim("sde.sde_sweep", _sde_sweep, outputs=lambda o: [o["x"], o["loss"], o["diverged"], o["diverged_at"]],
        grid=("keys", KEYS, 0),
        bad=[({"method": "adam"}, "method"), ({"dt": 0.0}, "dt"), ({"eta": np.nan}, "eta"), ({"x0": np.inf}, "x0"),
             ({"kind": np.array([0, 1, 5])}, "kind"), ({"keys": np.zeros((3, 2), np.uint32)}, "key")],
        diverging=({"x0": 3.0, "n_steps": 60, "kind": np.array([2, 2, 2])},
                   lambda o: o["diverged"] & (o["diverged_at"] >= 1)),
        vary={"keys": jax.random.split(jax.random.key(15), 3), "eta": 0.05, "x0": 0.9, "dt": 0.02}),
    Sim("sde.drift", _drift, bad=[({"kind": "fourth"}, "kind"), ({"eta": -1.0}, "eta"), ({"x": np.array([np.nan])}, "x"),
                                  ({"problem": "sphere"}, "problem")],
        vary={"x": X * 1.1, "eta": 0.3},
        skip={"vmap": "x holds the coordinates of one point", "diverge": "a drift evaluation has no dynamics"}),
]
