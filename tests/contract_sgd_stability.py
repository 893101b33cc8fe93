"""Rows of the simulator contract (tests/test_contract.py) for :mod:`sims.sgd_stability`.

Baselines are tiny (a 5-sample, 2-dimensional least-squares problem, a few steps): under
``jax.disable_jit`` every step is dispatched op by op, so the eager run costs ~0.1 s of CPU per step.
They share shapes and step counts with tests/test_sgd_stability.py (one compilation for both).
``sims.sgd_stability.dln_hessians`` is an autodiff helper, not a simulator: it is tested in
tests/test_sgd_stability.py (against the closed form, and on bad input).
"""
from __future__ import annotations

import jax
import numpy as np

import sims.sgd_stability as sim
from tests._contract_table import Sim


def _ls(n: int, d: int, seed: int) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal((n, d))
    return np.einsum("ni,nj->nij", x, x)


H5, H5B = _ls(5, 2, 1), _ls(5, 2, 2)
ASYM = H5 + np.array([[0.0, 1.0], [0.0, 0.0]])
THETA0 = np.array([1.0, 0.0])


def _flag(out):
    return out["diverged"]


def _moment(**kw):
    args = {"hessians": H5, "batch_size": 2, "eta": np.array([0.1, 0.2, 0.3]), "n_steps": 4, **kw}
    return sim.moment_growth(**args)


def _kron(**kw):
    args = {"hessians": H5, "batch_size": np.array([1, 2]), **kw}
    return sim.kron_enumerated(**args)


def _paths(**kw):
    args = {"key": jax.random.key(0), "hessians": H5, "batch_size": 2, "eta": np.array([0.1, 0.2, 0.3]),
            "theta0": THETA0, "n_steps": 3, "n_paths": 4, **kw}
    return sim.sgd_paths(**args)


def _noise(**kw):
    args = {"key": jax.random.key(3), "hessians": H5, "batch_size": np.array([1, 2, 3]), "n_batches": 4, "n_groups": 2,
            **kw}
    return sim.sampled_batch_noise(**args)


def _lyapunov(**kw):
    args = {"key": jax.random.key(1), "hessians": H5, "batch_size": 2, "eta": np.array([0.1, 0.2, 0.3]),
            "n_steps": 4, "n_paths": 4, "burn": 1, **kw}
    return sim.lyapunov_paths(**args)


def _delay(**kw):
    args = {"a": np.array([0.1, 0.5, 1.0]), "delay": 2, "n_steps": 8, **kw}
    return sim.delayed_growth(**args)


def _delay_noisy(**kw):
    args = {"key": jax.random.key(2), "eta": np.array([0.1, 0.5, 0.9]), "delay": 1, "sigma": 0.1, "n_steps": 4,
            "n_paths": 3, **kw}
    return sim.delayed_noisy(**args)


def _momentum(**kw):
    args = {"eta": np.array([0.5, 1.0, 2.5]), "mu": 0.5, "method": "heavy_ball", "n_steps": 8, **kw}
    return sim.momentum_growth(**args)


def _momentum_noise(**kw):
    args = {"key": jax.random.key(3), "eta": np.array([0.5, 1.0]), "mu": 0.5, "sigma": 1.0, "n_steps": 4, "burn": 1,
            "n_paths": 3, **kw}
    return sim.momentum_noise(**args)


def _momentum_map(**kw):
    args = {"eta": np.array([0.5, 1.0, 2.5]), "mu": 0.5, "lams": np.array([0.1, 1.0]), "method": "heavy_ball", **kw}
    return sim.momentum_map(**args)


def _momentum_norms(**kw):
    args = {"eta": np.array([0.5, 1.0, 2.5]), "mu": 0.5, "lams": np.array([0.1, 0.7]), "method": "heavy_ball",
            "n_steps": 8, **kw}
    return sim.momentum_norms(**args)


SIMULATORS = [
    Sim("sgd_stability.moment_growth", _moment, grid=("eta", np.array([0.1, 0.2, 0.3]), 0),
        bad=[({"batch_size": 0}, "batch_size"), ({"batch_size": 6}, "batch_size"), ({"eta": [-0.1]}, "eta"),
             ({"eta": [float("nan")]}, "eta"), ({"hessians": ASYM}, "hessians"), ({"hessians": -H5}, "hessians"),
             ({"n_steps": 1}, "n_steps"), ({"sigma0": np.eye(3)}, "sigma0"), ({"eta": "fast"}, "eta")],
        diverging=({"eta": np.array([1e40])}, _flag), vary={"hessians": H5B, "eta": np.array([0.11, 0.21, 0.31])}),
    Sim("sgd_stability.kron_enumerated", _kron, grid=("batch_size", np.array([1, 2, 3]), 0),
        bad=[({"batch_size": 0}, "batch_size"), ({"batch_size": 2.5}, "batch_size"), ({"hessians": ASYM}, "hessians")],
        skip={"diverge": "an exact expectation over batches: there is nothing to diverge"}, vary={"hessians": H5B}),
    Sim("sgd_stability.sgd_paths", _paths, grid=("eta", np.array([0.1, 0.2, 0.3]), 0),
        bad=[({"key": 0}, "key"), ({"batch_size": 6}, "batch_size"), ({"theta0": np.ones(3)}, "theta0"),
             ({"n_paths": 0}, "n_paths"), ({"eta": [0.0]}, "eta"), ({"bound": -1.0}, "bound")],
        diverging=({"eta": np.array([1e60])}, _flag), vary={"key": jax.random.key(9), "hessians": H5B}),
    Sim("sgd_stability.sampled_batch_noise", _noise, outputs=lambda o: [o["noise"]],
        grid=("batch_size", np.array([1, 2, 3]), 0),
        bad=[({"key": 0}, "key"), ({"batch_size": 6}, "batch_size"), ({"batch_size": 1.5}, "batch_size"),
             ({"n_groups": 1}, "n_groups"), ({"hessians": ASYM}, "hessians")],
        skip={"diverge": "batch means of finite Hessians: there is nothing to diverge"},
        vary={"key": jax.random.key(4), "hessians": H5B}),
    Sim("sgd_stability.lyapunov_paths", _lyapunov, grid=("eta", np.array([0.1, 0.2, 0.3]), 0),
        bad=[({"key": jax.random.PRNGKey(0)}, "key"), ({"batch_size": 0}, "batch_size"), ({"burn": 4}, "burn"),
             ({"theta0": np.zeros(2)}, "theta0"), ({"n_steps": 1}, "n_steps")],
        diverging=({"eta": np.array([1e50])}, _flag), vary={"key": jax.random.key(8), "eta": np.array([0.15, 0.25, 0.35])}),
    Sim("sgd_stability.delayed_growth", _delay, grid=("a", np.array([0.1, 0.5, 1.0]), 0),
        bad=[({"delay": 9}, "delay"), ({"delay": -1}, "delay"), ({"a": [np.inf]}, "a"), ({"max_delay": 65}, "max_delay")],
        diverging=({"a": np.array([1e60])}, _flag), vary={"a": np.array([0.2, 0.4, 0.6])}),
    Sim("sgd_stability.delayed_noisy", _delay_noisy, grid=("eta", np.array([0.1, 0.5, 0.9]), 0),
        bad=[({"sigma": -0.1}, "sigma"), ({"sigma": [0.1, 0.2]}, "sigma"), ({"kappa": -1.0}, "kappa"),
             ({"key": "k"}, "key"), ({"delay": 9}, "delay")],
        diverging=({"eta": np.array([1e4])}, _flag), vary={"key": jax.random.key(7), "eta": np.array([0.2, 0.4, 0.8])}),
    Sim("sgd_stability.momentum_growth", _momentum, grid=("eta", np.array([0.5, 1.0, 2.5]), 0),
        bad=[({"mu": 1.0}, "mu"), ({"mu": -0.1}, "mu"), ({"method": "adam"}, "method"), ({"lam": 0.0}, "lam"),
             ({"mu": [0.1, 0.2]}, "mu")],
        diverging=({"eta": np.array([1e60])}, _flag), vary={"eta": np.array([0.4, 0.9, 2.0]), "mu": 0.3}),
    Sim("sgd_stability.momentum_noise", _momentum_noise, grid=("eta", np.array([0.5, 1.0]), 0),
        bad=[({"sigma": float("nan")}, "sigma"), ({"burn": 4}, "burn"), ({"method": "HB"}, "method"),
             ({"key": None}, "key")],
        diverging=({"eta": np.array([1e30])}, _flag), vary={"key": jax.random.key(6), "eta": np.array([0.6, 0.9])}),
    Sim("sgd_stability.momentum_map", _momentum_map, grid=("eta", np.array([0.5, 1.0, 2.5]), 0),
        bad=[({"mu": 1.0}, "mu"), ({"lams": np.array([0.0, 1.0])}, "lams"), ({"lams": np.ones((2, 2))}, "lams"),
             ({"method": "adam"}, "method"), ({"eta": [np.nan]}, "eta")],
        diverging=({"eta": np.array([1e200, 1e200, 1e200])}, _flag), vary={"eta": np.array([0.4, 0.9, 2.0]), "mu": 0.3}),
    Sim("sgd_stability.momentum_norms", _momentum_norms, grid=("eta", np.array([0.5, 1.0, 2.5]), 0),
        bad=[({"n_steps": 2}, "n_steps"), ({"lams": np.array([-1.0])}, "lams"), ({"mu": -0.1}, "mu"),
             ({"method": "HB"}, "method")],
        diverging=({"eta": np.array([1e60, 1e60, 1e60])}, _flag), vary={"eta": np.array([0.4, 0.9, 2.0]), "mu": 0.3}),
]
