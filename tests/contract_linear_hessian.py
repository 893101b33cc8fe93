"""Contract rows for the public simulators of topic linear_hessian and of the shared :mod:`sims.hvp` (run by
tests/test_contract.py).

Problems are tiny (a (3, 2, 2) net, a handful of GD steps): the jit-equals-eager test runs every
``lax`` loop iteration in Python under ``jax.disable_jit()``. The three frame sweeps skip that one
test (reason in ``FRAME_EAGER``): under ``disable_jit`` their padded 16-point chunk of the frame
graph runs primitive by primitive, ~10 s of CPU per row, a quarter of the topic's test budget.
Their per-run functions branch only through ``jnp.where``/``lax`` (no Python control flow on
values), the vmap-equals-loop test runs the same compiled code per point and in a batch, and the
plain-net row (``train_gd``, the same GD loop ``_gd_steps``) does run jit against eager.
"""

import jax
import jax.numpy as jnp
import numpy as np

from sims import hvp as H
from sims import linear_hessian as S
from sims.linear_hessian.spectrum import constructed_minima, hessian_spectra
from sims.linear_hessian.train import aligned_path, train_sweep

from tests._contract_table import Sim

WIDTHS = (3, 2, 2)
_rng = np.random.default_rng(0)
X = _rng.normal(size=(3, 6))
Y = _rng.normal(size=(2, 6))
THETA0 = 0.3 * _rng.normal(size=S.n_params(WIDTHS))
KEY = jax.random.key(5)
FRAME_EAGER = ("eager evaluation of the padded frame chunk costs ~10 s CPU (see the module docstring); the code "
               "has no value-dependent Python branches and train_gd runs the same GD loop jit-vs-eager")


# ----------------------------------------------------------------------------------------------
# plain GD with the sharpness tracked
# ----------------------------------------------------------------------------------------------

def _train_gd(key=KEY, theta0=THETA0, X=X, Y=Y, eta=0.2, steps=2, record_every=1):
    # no sharpness tracking here (lanczos_iter=0): the Lanczos code has its own rows below (sims.hvp), and
    # without it this row's compiled and eager programs are several times smaller
    return S.train_gd(key, theta0, X, Y, WIDTHS, eta, steps=steps, record_every=record_every, lanczos_iter=0)


def _train_outputs(out):
    return [out[k] for k in ("loss", "sharpness", "class_loss", "thetas", "theta", "diverged", "diverged_step")]


TRAIN_GD = Sim(
    "linear_hessian.train_gd", _train_gd, outputs=_train_outputs,
    grid=("eta", np.array([0.1, 0.2, 0.3]), 0),
    bad=[({"eta": -0.1}, "eta"), ({"eta": 0.0}, "eta"), ({"eta": "fast"}, "eta"), ({"eta": np.nan}, "eta"),
         ({"steps": 3, "record_every": 2}, "steps"), ({"theta0": np.zeros(5)}, "theta0"), ({"X": np.ones((4, 6))}, "X"),
         ({"key": np.zeros(2, np.uint32)}, "key")],
    # a huge (valid) step blows up within the baseline's two steps: same static config, no extra compile
    diverging=({"eta": 1e30, "theta0": 3.0 * np.ones(S.n_params(WIDTHS))},
               lambda out: np.asarray(out["diverged"]) & (np.asarray(out["diverged_step"]) >= 1)),
    nan_padding={"sharpness": "lanczos_iter=0 asks for no sharpness record (documented: NaN records)"},
    vary={"theta0": 0.2 * _rng.normal(size=S.n_params(WIDTHS)), "key": jax.random.key(9)},
    rtol=1e-10, atol=1e-12,
)


# ----------------------------------------------------------------------------------------------
# frame sweeps: GD, constructed minima, spectra
# ----------------------------------------------------------------------------------------------

def _train_sweep(key=KEY, counts=(50, 30, 20), eta=0.5, act=0, steps=800, record_every=20):
    # the quick GD experiment's static configuration: the compiled sweep is shared with it
    return train_sweep(key, counts, (6, 4, 3), eta, act=act, steps=steps, record_every=record_every)


def _sweep_outputs(out):
    return [out[k] for k in ("loss", "class_loss", "theta", "diverged", "diverged_step", "balance")]


TRAIN_SWEEP = Sim(
    "linear_hessian.train_sweep", _train_sweep, outputs=_sweep_outputs,
    grid=("eta", np.array([0.2, 0.5, 0.8]), 0),
    bad=[({"eta": np.array([0.1, -0.1])}, "eta"), ({"eta": "fast"}, "eta"), ({"eta": np.inf}, "eta"),
         ({"counts": (50, 30, 21)}, "counts"), ({"act": 3}, "act"), ({"steps": 810, "record_every": 100}, "steps"),
         ({"key": np.zeros(2, np.uint32)}, "key")],
    diverging=({"eta": np.array([60.0, 80.0])},
               lambda out: out["diverged"] & (out["diverged_step"] >= 1) & np.isnan(out["loss"][:, -1])),
    vary={"key": jax.random.key(6), "eta": 0.4},
    skip={"jit": FRAME_EAGER},
    rtol=1e-9, atol=1e-12,
)


def _minima(key=KEY, gauge=0.3, alpha=1.0):
    return constructed_minima(key, (6, 4, 3), gauge=gauge, alpha=alpha)


def _minima_outputs(out):
    return [out[k] for k in ("theta", "X", "Y", "sv", "balance")]


MINIMA = Sim(
    "linear_hessian.constructed_minima", _minima, outputs=_minima_outputs,
    grid=("gauge", np.array([0.0, 0.3, -0.2]), 0),
    bad=[({"gauge": np.inf}, "gauge"), ({"gauge": "big"}, "gauge"), ({"alpha": -1.0}, "alpha"),
         ({"key": np.zeros(2, np.uint32)}, "key")],
    vary={"key": jax.random.key(7), "gauge": 0.2},
    skip={"diverge": "builds points in closed form; nothing iterates, so nothing can diverge", "jit": FRAME_EAGER},
    # QR/SVD/solve in compiled and eager code differ in the last bits (gauge solves amplify them)
    rtol=1e-9, atol=1e-12,
)

_BUILT = {}


def _built():
    if not _BUILT:
        _BUILT.update(constructed_minima(jax.random.key(1), (6, 4, 3), gauge=np.array([0.0, 0.4])))
    return _BUILT


def _spectra(scale=None, act=0):
    b = _built()
    scale = np.ones(1) if scale is None else np.asarray(scale)
    n = scale.size
    return hessian_spectra(b["theta"][:1] * scale[:, None], np.repeat(b["widths"][:1], n, 0), np.repeat(b["depth"][:1], n),
                           np.repeat(b["X"][:1], n, 0), np.repeat(b["Y"][:1], n, 0), act=act)


SPECTRA = Sim(
    "linear_hessian.hessian_spectra", _spectra, outputs=lambda out: [out["eigenvalues"], out["n_params"]],
    grid=("scale", np.array([1.0, 0.5, 0.0]), 0),
    bad=[({"scale": np.array([np.nan])}, "theta"), ({"act": 7}, "act")],
    vary={"scale": np.array([0.7])},
    nan_padding={"eigenvalues": "one row per case, NaN-padded beyond that case's P eigenvalues (documented)"},
    skip={"diverge": "evaluates Hessians at given points; no dynamics that could diverge", "jit": FRAME_EAGER},
    rtol=1e-10, atol=1e-12,
)


# ----------------------------------------------------------------------------------------------
# the reduced aligned path
# ----------------------------------------------------------------------------------------------

def _aligned(singular_values=np.array([0.7, 0.5, 0.3]), scale=0.1, eta=0.4, steps=5):
    return aligned_path(singular_values, scale, eta, steps=steps)


ALIGNED = Sim(
    "linear_hessian.aligned_path", _aligned,
    grid=("singular_values", np.array([0.7, 0.5, 0.3]), 1),     # modes evolve independently: one column each
    bad=[({"eta": -0.4}, "eta"), ({"scale": 0.0}, "scale"), ({"steps": 0}, "steps"),
         ({"singular_values": [[0.5]]}, "singular_values")],
    # the reduced map has no state besides the mode strengths; escape shows as non-finite strengths
    diverging=({"eta": 50.0, "scale": 2.0}, lambda out: ~np.isfinite(out[-1])),
    vary={"eta": 0.3, "singular_values": np.array([0.6, 0.4, 0.2])},
)


# ----------------------------------------------------------------------------------------------
# the shared curvature module, on a small tanh model
# ----------------------------------------------------------------------------------------------

def _mlp_loss(p):
    r = jnp.tanh(jnp.asarray(X.T) @ p["W1"]) @ p["W2"] - jnp.asarray(Y.T)
    return 0.5 * jnp.mean(jnp.sum(r * r, axis=1))


PARAMS = {"W1": 0.8 * _rng.normal(size=(3, 4)), "W2": 0.8 * _rng.normal(size=(4, 2))}


@jax.jit
def _top_jit(params, key):
    return H.top_eigenvalues(_mlp_loss, params, key, k=2, num_iter=5)


@jax.jit
def _trace_jit(params, key):
    return H.hutchinson_trace(_mlp_loss, params, key, num_samples=4)


def _top(params=PARAMS, key=KEY, k=2):
    if k != 2:   # validation happens when the call is traced: route other k through a fresh trace
        return H.top_eigenvalues(_mlp_loss, params, key, k=k, num_iter=5)
    return _top_jit(params, key)


def _trace(params=PARAMS, key=KEY, num_samples=4):
    if num_samples != 4:
        return H.hutchinson_trace(_mlp_loss, params, key, num_samples=num_samples)
    return _trace_jit(params, key)


TOP = Sim(
    "hvp.top_eigenvalues", _top,
    bad=[({"k": 0}, "k"), ({"k": 6}, "k"), ({"key": np.zeros(2, np.uint32)}, "key")],
    vary={"params": {"W1": 0.5 * _rng.normal(size=(3, 4)), "W2": 0.5 * _rng.normal(size=(4, 2))}},
    skip={"vmap": "one operator per call; batch by vmapping the caller's own function",
          "diverge": "a spectral computation at a given point has no dynamics"},
    rtol=1e-9, atol=1e-12,
)

TRACE = Sim(
    "hvp.hutchinson_trace", _trace, outputs=lambda out: [out.estimate, out.se, out.samples],
    bad=[({"num_samples": 1}, "num_samples"), ({"key": np.zeros(2, np.uint32)}, "key")],
    vary={"key": jax.random.key(8)},
    skip={"vmap": "the probes are the batch axis (vmapped inside)",
          "diverge": "an estimator at a given point has no dynamics"},
    rtol=1e-10, atol=1e-12,
)

def _gd_sweep(theta0=THETA0, X=X, Y=Y, etas=np.array([0.1, 0.2, 0.3]), steps=3):
    return S.gd_sweep(theta0, X, Y, WIDTHS, etas, steps=steps)


GD_SWEEP = Sim(
    "linear_hessian.gd_sweep", _gd_sweep, outputs=lambda out: [out[k] for k in ("theta", "loss", "diverged",
                                                                                  "diverged_step")],
    grid=("etas", np.array([0.1, 0.2, 0.3]), 0),
    bad=[({"etas": np.array([0.1, -0.1])}, "etas"), ({"etas": 0.1}, "etas"), ({"etas": np.array([np.nan])}, "etas"),
         ({"theta0": np.zeros(5)}, "theta0"), ({"X": np.ones((4, 6))}, "X"), ({"steps": 0}, "steps")],
    diverging=({"etas": np.array([0.1, 1e30]), "theta0": 3.0 * np.ones(S.n_params(WIDTHS))},
               lambda out: np.asarray(out["diverged"]) == np.array([False, True])),
    vary={"theta0": 0.2 * _rng.normal(size=S.n_params(WIDTHS)), "etas": np.array([0.15, 0.25, 0.05])},
    rtol=1e-10, atol=1e-12,
)

SIMULATORS = [TRAIN_GD, TRAIN_SWEEP, MINIMA, SPECTRA, ALIGNED, TOP, TRACE, GD_SWEEP]
