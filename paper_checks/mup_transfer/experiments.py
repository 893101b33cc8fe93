r"""The simulations of the μP-transfer topic: per-seed exact one-step optima across widths, per parametrization.

Every run is one initialization of :math:`f(x) = V^\top W_1 W_0 x` on a fixed data set (:func:`dataset`), one GD step
expanded exactly in :math:`\eta` (:func:`sims.mup_transfer.one_step`, the reduced draw, whose cost does not grow with
the width) and the first local minimizer of the degree-6 one-step loss (:func:`theory.mup_transfer.first_minimizer`).
Claims and ``figures/mup_transfer.py`` read these; figures never simulate.
"""
from __future__ import annotations

import jax
import numpy as np

import sims.mup_transfer as sm
import theory.mup_transfer as th
from paper_checks import Budget, experiment

SEED = 20251103
D, M = 16, 64  # input dimension and number of examples
#: the widths of the sweeps: 32 .. 2^22 by factors of 2
WIDTHS = 2 ** np.arange(5, 23)
#: the small widths where the seed-mean's 1/n bias is resolved
BIAS_WIDTHS = 2 ** np.arange(6, 11)
#: the width of the kernel-limit check under SP and NTP
LIMIT_WIDTH = 2**20


def dataset() -> tuple[np.ndarray, np.ndarray]:
    r"""The fixed data set: :math:`X` with i.i.d. N(0, 1) entries (d = 16, m = 64), :math:`y = X^\top\beta`,
    :math:`\beta \sim N(0, I/d)`."""
    rng = np.random.default_rng(SEED)
    X = rng.standard_normal((D, M))
    beta = rng.standard_normal(D) / np.sqrt(D)
    return X, X.T @ beta


def optima(key, n: int, parametrization: str, n_seeds: int, data: tuple[np.ndarray, np.ndarray] | None = None
           ) -> np.ndarray:
    """Per-seed first minimizers of the exact one-step loss at width ``n`` on ``data`` = (X, y) (default :func:`dataset`)."""
    X, y = dataset() if data is None else data
    out = sm.one_step(key, X, y, int(n), parametrization=parametrization, n_seeds=n_seeds)
    return th.first_minimizer(th.loss_polynomial(out["coef"], y))


@experiment("mup_transfer.widths")
def widths(budget: Budget) -> dict:
    """Per-seed optima (first basin) at widths 32 .. 2^22 under μP, SP and NTP."""
    s = budget.pick(quick=256, full=1024)
    root = jax.random.key(SEED)
    eta = {}
    for j, name in enumerate(th.TABLES):
        eta[name] = np.stack([optima(jax.random.fold_in(jax.random.fold_in(root, j), int(n)), n, name, s)
                              for n in WIDTHS])
    return {"widths": WIDTHS, "n_seeds": s, **{f"eta_{k}": v for k, v in eta.items()}}


@experiment("mup_transfer.bias")
def bias(budget: Budget) -> dict:
    """Many μP seeds at widths 64 .. 1024, where the seed-mean optimum's 1/n bias stands out of its standard error."""
    s = budget.pick(quick=2048, full=8192)
    root = jax.random.fold_in(jax.random.key(SEED), 100)
    eta = np.stack([optima(jax.random.fold_in(root, int(n)), n, "mup", s) for n in BIAS_WIDTHS])
    return {"widths": BIAS_WIDTHS, "n_seeds": s, "eta": eta}


@experiment("mup_transfer.kernel_limit")
def kernel_limit(budget: Budget) -> dict:
    """Many SP and NTP seeds at width 2^20, for the law of the optimum in the kernel regime."""
    s = budget.pick(quick=1024, full=8192)
    root = jax.random.fold_in(jax.random.key(SEED), 200)
    return {"n": LIMIT_WIDTH, "n_seeds": s,
            **{f"eta_{name}": optima(jax.random.fold_in(root, j), LIMIT_WIDTH, name, s)
               for j, name in enumerate(("sp", "ntp"))}}


#: the width of the dense draws that check the reduced algebra (small: the dense draw holds n x n matrices)
DENSE_WIDTH = 24


@experiment("mup_transfer.dense")
def dense(budget: Budget) -> dict:
    """Dense draws (the n x n matrix, gradients by jax.grad) at width 24 under each parametrization, with the Gram
    statistics of each draw."""
    s = budget.pick(quick=4, full=16)
    X, y = dataset()
    root = jax.random.fold_in(jax.random.key(SEED), 300)
    out = {}
    for j, name in enumerate(th.TABLES):
        run = sm.one_step(jax.random.fold_in(root, j), X, y, DENSE_WIDTH, parametrization=name, n_seeds=s,
                          method="dense")
        out[f"coef_{name}"] = run["coef"]
        out.update({f"{k}_{name}": v for k, v in run["stats"].items()})
    return {"n": DENSE_WIDTH, "n_seeds": s, **out}


#: the narrow widths where some seeds' one-step loss has its global minimum beyond the first basin
BASIN_WIDTHS = np.array([32, 64, 128])


@experiment("mup_transfer.basins")
def basins(budget: Budget) -> dict:
    """The exact one-step loss polynomials of many μP seeds at widths 32, 64, 128."""
    s = budget.pick(quick=2048, full=8192)
    X, y = dataset()
    root = jax.random.fold_in(jax.random.key(SEED), 400)
    loss = np.stack([th.loss_polynomial(sm.one_step(jax.random.fold_in(root, int(n)), X, y, int(n), n_seeds=s)["coef"],
                                        y) for n in BASIN_WIDTHS])
    return {"widths": BASIN_WIDTHS, "n_seeds": s, "loss": loss}


#: the width of the law check (the reduced draw needs n >= d + 2)
LAW_WIDTH = 24


def dense_statistics(rng: np.random.Generator, n: int, parametrization: str, seeds: int) -> dict:
    r"""The Gram statistics of ``seeds`` dense NumPy initializations (the n x n matrix drawn entry by entry):
    :math:`\|V\|^2`, :math:`W_0^\top W_0`, :math:`W_0^\top z`, :math:`\|z\|^2`, :math:`(ZB)^\top(ZB)` with
    :math:`z = Z^\top V/\|V\|`, :math:`B = [W_0, z]` (see :mod:`sims.mup_transfer`)."""
    t = th.table_expr(parametrization)
    s0, sv = (float(t[k].subs({th.N: n, th.D: D})) for k in ("s0", "sV"))
    W0 = np.sqrt(s0) * rng.standard_normal((seeds, n, D))
    Z = rng.standard_normal((seeds, n, n))
    V = np.sqrt(sv) * rng.standard_normal((seeds, n))
    z = np.einsum("sji,sj->si", Z, V) / np.linalg.norm(V, axis=1, keepdims=True)
    ZB = Z @ np.concatenate([W0, z[:, :, None]], axis=2)
    return {"vv": np.sum(V * V, axis=1), "K": np.swapaxes(W0, 1, 2) @ W0, "zeta": np.einsum("sji,sj->si", W0, z),
            "zz": np.sum(z * z, axis=1), "H": np.swapaxes(ZB, 1, 2) @ ZB}


@experiment("mup_transfer.law")
def law(budget: Budget) -> dict:
    """μP at width 24: reduced draws, and dense NumPy draws turned into coefficients by the same algebra."""
    s = budget.pick(quick=4000, full=16000)
    X, y = dataset()
    dense = sm.coefficients_from_statistics(X, y, "mup", LAW_WIDTH,
                                            dense_statistics(np.random.default_rng(SEED + 500), LAW_WIDTH, "mup", s))
    reduced = sm.one_step(jax.random.fold_in(jax.random.key(SEED), 500), X, y, LAW_WIDTH, n_seeds=s)["coef"]
    return {"n": LAW_WIDTH, "n_seeds": s, "dense": dense, "reduced": reduced}
