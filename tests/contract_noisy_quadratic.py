"""Contract rows of the noisy-quadratic simulators (see tests/test_contract.py): the shared NQM simulator
(:func:`sims.nqm.simulate`) and the topic's own (:mod:`sims.noisy_quadratic`).

Every row uses a few steps on a few coordinates: the eager (jit-equals-eager) runs go primitive by primitive.
"""
from __future__ import annotations

import jax
import numpy as np

import sims.noisy_quadratic as sq
import sims.noisy_quadratic_sampled as ss
import sims.nqm as sn
from tests._contract_table import Sim

_LAM = np.array([0.5, 1.0, 2.0])


def _nqm(key=None, eta=0.3, x0=(1.0, -1.0, 0.5), lam=_LAM, method="heavy_ball", momentum=(0.3, 0.6), sigma_a=0.5,
         sigma_m=0.2, T=2, n_rec=1, ema=0.1, wd=0.0, center=None):
    key = jax.random.key(0) if key is None else key
    return sn.simulate(key, T=T, eta=eta, x0=np.asarray(x0), lam=lam, method=method, momentum=momentum,
                       sigma_a=sigma_a, sigma_m=sigma_m, n_chains=2, n_rec=n_rec, ema=ema, wd=wd, center=center,
                       paired=True)  # paired: a configuration's runs do not depend on the others (vmap = loop)


def _abs(key=None, eta=None, sigma=1.0, x0=1.0):
    key = jax.random.key(1) if key is None else key
    # three schedules, like the vmap row's grid: grid, baseline and new data share one compiled shape
    eta = np.stack([np.full(4, 0.2), np.linspace(0.2, 0.05, 4), np.full(4, 0.05)]) if eta is None else eta
    return sq.abs_sgd(key, eta, x0=x0, sigma=sigma, n_chains=2)


def _sphere(key=None, eta=(0.1, 0.05, 0.02), wd=0.01, momentum=0.5, method="heavy_ball", T=4, n_rec=2, w0_norm=1.0):
    key = jax.random.key(2) if key is None else key
    return sq.sphere_walk(key, eta=eta, wd=wd, momentum=momentum, method=method, d=4, T=T, n_rec=n_rec, n_chains=2,
                          w0_norm=w0_norm)


_RNG = np.random.default_rng(0)
_X, _Y, _W0 = _RNG.normal(size=(10, 3)), np.sign(_RNG.normal(size=10)), _RNG.normal(size=3)


def _logistic(X=_X, y=_Y, w0=_W0, eta=(0.3, 0.2, 0.1), wd=0.01, momentum=0.5, T=4, n_rec=2):
    return sq.logistic_sphere(X, y, w0, eta=eta, wd=wd, momentum=momentum, T=T, n_rec=n_rec)


def _lion(X=_X, y=_Y, x0=(0.1, -0.2, 0.3), eta=None, wd=(0.5, 1.0, 2.0), b1=0.9, b2=0.99, n_rec=2):
    eta = np.full(4, 0.1) if eta is None else eta
    return sq.lion_logistic(X, y, np.asarray(x0), eta=eta, wd=wd, b1=b1, b2=b2, n_rec=n_rec)


_DW_A, _DW_C = np.array([1.0, 0.5, 2.0]), 0.1 * np.eye(3)
_DW_X0 = np.array([[0.1, -0.2, 0.3], [0.2, 0.1, -0.3], [-0.1, 0.2, 0.2]])


def _lion_dw(a=_DW_A, C=_DW_C, x0=_DW_X0, eta=None, wd=1.0, b1=0.9, b2=0.99, n_rec=2):
    eta = np.full(4, 0.1) if eta is None else eta
    return sq.lion_double_well(a, C, x0, eta=eta, wd=wd, b1=b1, b2=b2, n_rec=n_rec)


_NQM_OUT = lambda o: [o["curve"], o["path"], o["mode_m2"], o["mode_m2_ema"], o["final_x"], o["diverged"]]  # noqa: E731

_ATOMS, _PROBS = np.array([[2.0, 0.0], [0.08, 0.0]]), np.array([0.5, 0.5])  # Kidambi's instance at kappa = 100


def _sampled(**kw):
    args = {"method": "heavy_ball", "delta": np.array([0.1, 0.2, 0.3]), "alpha": 0.5, "h_atoms": _ATOMS,
            "h_probs": _PROBS, **kw}
    return ss.sampled_moment_map(**args)


SIMULATORS = [
    Sim("noisy_quadratic.nqm_simulate", _nqm, outputs=_NQM_OUT, grid=("momentum", np.array([0.3, 0.6, 0.9]), 0),
        bad=[({"eta": -0.1}, "eta"), ({"eta": np.nan}, "eta"), ({"method": "adam"}, "method"), ({"momentum": 1.0}, "momentum"),
             ({"x0": (1.0, 2.0)}, "x0"), ({"lam": np.array([1.0, -1.0, 2.0])}, "lam"), ({"n_rec": 3}, "n_rec"),
             ({"key": np.zeros(2, np.uint32)}, "key"), ({"ema": 1.5}, "ema"), ({"center": (1.0,)}, "center"),
             ({"eta": np.full(5, 0.1)}, "eta")],
        # eta * lambda = 200: |x| grows ~200x per step, past the bound within 70 steps
        diverging=({"eta": 100.0, "T": 80, "n_rec": 1, "momentum": 0.0}, lambda o: o["diverged"]),
        vary={"x0": (0.3, 0.2, -0.4), "key": jax.random.key(5), "momentum": (0.1, 0.2)}),
    Sim("noisy_quadratic.abs_sgd", _abs, outputs=lambda o: [o["final"], o["diverged"]],
        grid=("eta", np.stack([np.full(4, 0.2), np.linspace(0.2, 0.05, 4), np.full(4, 0.05)]), 0),
        bad=[({"eta": -np.ones((2, 4))}, "eta"), ({"sigma": -1.0}, "sigma"), ({"x0": np.nan}, "x0"),
             ({"eta": np.ones((2, 1))}, "eta"), ({"key": 3}, "key")],
        # one step of size 1e149 with noise 20 carries |x| past the divergence bound 1e150
        diverging=({"eta": np.full((1, 4), 1e149), "sigma": 20.0}, lambda o: o["diverged"]),
        vary={"key": jax.random.key(9), "x0": 2.0}),
    Sim("noisy_quadratic.sphere_walk", _sphere, outputs=lambda o: [o["angle"], o["norm"], o["diverged"]],
        grid=("eta", np.array([0.1, 0.05, 0.02]), 0),
        bad=[({"method": "adam"}, "method"), ({"eta": 0.0}, "eta"), ({"momentum": 1.0}, "momentum"),
             ({"n_rec": 3}, "n_rec"), ({"wd": (0.1, 0.2, 0.3, 0.4)}, "wd")],
        # coupled decay with eta * wd = 1000: the norm is multiplied by ~999 per step and overflows
        diverging=({"eta": (1.0, 1.0), "wd": 1000.0, "T": 120, "n_rec": 2, "momentum": 0.0}, lambda o: o["diverged"]),
        vary={"key": jax.random.key(4), "w0_norm": 2.0}),
    Sim("noisy_quadratic.logistic_sphere", _logistic, outputs=lambda o: [o["angle"], o["norm"], o["grad_scale"]],
        grid=("eta", np.array([0.3, 0.2, 0.1]), 0),
        bad=[({"y": np.full(10, 0.5)}, "y"), ({"w0": np.ones(2)}, "w0"), ({"eta": -1.0}, "eta"), ({"n_rec": 3}, "n_rec")],
        diverging=({"eta": (1.0, 1.0), "wd": 1000.0, "T": 120, "n_rec": 2, "momentum": 0.0}, lambda o: o["diverged"]),
        vary={"w0": _RNG.normal(size=3), "momentum": 0.3}),
    Sim("noisy_quadratic.lion_logistic", _lion, outputs=lambda o: [o["path"], o["diverged"]],
        grid=("wd", np.array([0.5, 1.0, 2.0]), 0),
        bad=[({"y": np.full(10, 0.5)}, "y"), ({"x0": (1.0, 2.0)}, "x0"), ({"eta": -np.ones(4)}, "eta"),
             ({"n_rec": 3}, "n_rec"), ({"wd": (0.1, 0.2), "b1": (0.9, 0.8, 0.7)}, "wd"), ({"b1": 1.5}, "b1")],
        # decoupled decay with eta * wd = 1e3: |x| is multiplied by ~1e3 per step, past the bound 1e150 in 50 steps
        diverging=({"eta": np.full(60, 1.0), "wd": 1000.0, "n_rec": 2}, lambda o: o["diverged"]),
        vary={"x0": (0.2, 0.1, -0.1), "b1": 0.5}),
    Sim("noisy_quadratic.lion_double_well", _lion_dw, outputs=lambda o: [o["path"], o["diverged"]],
        grid=("x0", _DW_X0, 0),
        bad=[({"x0": np.ones(2)}, "x0"), ({"C": -np.eye(3)}, "C"), ({"eta": -np.ones(4)}, "eta"), ({"n_rec": 3}, "n_rec"),
             ({"b1": 1.5}, "b1"), ({"wd": -1.0}, "wd")],
        # decoupled decay with eta * wd = 1e3: |x| is multiplied by ~1e3 per step, past the bound 1e150 in 50 steps
        diverging=({"eta": np.full(60, 1.0), "wd": 1000.0, "n_rec": 2}, lambda o: o["diverged"]),
        vary={"x0": -_DW_X0, "b1": 0.5, "a": np.array([2.0, 1.0, 0.5])}),
    Sim("noisy_quadratic.sampled_moment_map", _sampled, grid=("delta", np.array([0.1, 0.2, 0.3]), 0),
        bad=[({"method": "adam"}, "method"), ({"delta": [0.0]}, "delta"), ({"alpha": 1.0}, "alpha"),
             ({"h_probs": np.array([0.5, 0.6])}, "h_probs"), ({"h_atoms": -_ATOMS}, "h_atoms")],
        # a step of 3 on the stiff mode (h = 2): its mean-square radius exceeds 1 (the second moment grows)
        diverging=({"delta": np.array([3.0, 3.0, 3.0])}, lambda o: o["diverged"]),
        vary={"h_atoms": _ATOMS * 0.5, "alpha": 0.3}),
]
