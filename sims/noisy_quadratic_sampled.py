r"""Least squares with sampled rows (Kidambi et al. 2018): the exact second-moment map of SGD, heavy ball, Nesterov and
ASGD, read off their update rules.

On the paper's instance a sampled row :math:`x = \sigma_i z e_i` touches one coordinate, so each coordinate (mode) of
the error evolves alone under a random curvature :math:`h = x_i^2` (:mod:`theory.noisy_quadratic_sampled`). Here a
mode's law is given by its atoms :math:`h_a` and their probabilities :math:`p_a`, and
:func:`sampled_moment_map` builds the expected map of the mode's state second moment,
:math:`S \mapsto \sum_a p_a B_a S B_a^\top`, where :math:`B_a` is the one-step map of the method's update rule at
curvature :math:`h_a`, read off by stepping the two basis states (the rules are written out below as the paper's
Algorithms 1--3 state them; no operator formula is assumed). Its spectral radius, largest over the modes, is the
exact mean-square contraction per step; the rate :math:`-\log\rho` is the paper's eq. (1) in the limit.

Sweeps go through :func:`sims.sweep.run_grid` (the method is static configuration; the parameters are grid data).
"""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np

import sims  # noqa: F401  (float64)
from sims.sweep import padded_length, run_grid
from theory import validate as V

__all__ = ["SAMPLED_METHODS", "sampled_moment_map"]

SAMPLED_METHODS = ("sgd", "heavy_ball", "nesterov", "asgd")
_EPS = 0.7  # Algorithm 3's constant
_CHUNK = 4096  # sweeps pad to the next power of two (at least 16, at most this): few shapes, little padding


def _step(method: str, point, w, aux, h):
    r"""One update of ``method`` on a mode with sampled curvature ``h`` (gradient :math:`g = h\,w`), state ``(w, aux)``."""
    g = h * w
    d = point["delta"]
    if method == "sgd":
        return w - d * g, w
    if method == "heavy_ball":  # Algorithm 1: w+ = w - delta g + alpha (w - w_prev)
        return w - d * g + point["alpha"] * (w - aux), w
    if method == "nesterov":  # Algorithm 2: v+ = w - delta g; w+ = (1 + alpha) v+ - alpha v
        v_new = w - d * g
        return (1 + point["alpha"]) * v_new - point["alpha"] * aux, v_new
    # Algorithm 3 (ASGD): alpha = 1 - xi/kappa; running average and iterate
    beta = point["xi"] / point["long_step"]
    avg = (1 - beta) * aux + beta * (w - point["long_step"] * d / _EPS * g)
    w_new = _EPS / (_EPS + beta) * (w - d * g) + beta / (_EPS + beta) * avg
    return w_new, avg


def _map_run(point, h_probs, *, method: str):
    """Per mode: the expected map of the state's second moment, its spectral radius; the largest over the modes."""
    h_atoms = point["h_atoms"]
    ones, zeros = jnp.ones_like(h_atoms), jnp.zeros_like(h_atoms)
    w1, a1 = _step(method, point, ones, zeros, h_atoms)  # image of the basis state (1, 0), per mode and atom
    w2, a2 = _step(method, point, zeros, ones, h_atoms)  # image of (0, 1)
    B = jnp.stack([jnp.stack([w1, w2], axis=-1), jnp.stack([a1, a2], axis=-1)], axis=-2)  # (modes, atoms, 2, 2)
    kron = jnp.einsum("maij,makl->maikjl", B, B).reshape(B.shape[0], B.shape[1], 4, 4)
    M = jnp.einsum("a,maij->mij", h_probs, kron)  # vec(S') = M vec(S), row-major vec
    radius = jnp.max(jnp.abs(jnp.linalg.eigvals(M)), axis=-1)
    top = jnp.max(radius)
    return {"radius": top, "mode_radius": radius, "rate": -jnp.log(top), "diverged": ~(top < 1.0),
            "diverged_step": jnp.where(top < 1.0, -1, 1)}


def sampled_moment_map(method, delta, *, alpha=0.0, long_step=1.0, xi=1.0, h_atoms, h_probs) -> dict:
    r"""The exact mean-square contraction of ``method`` on modes with sampled curvatures, per grid point.

    ``delta`` (the step, :math:`> 0`) and the method's other parameters are aligned arrays (one value each, or one per
    point): ``alpha`` (momentum in :math:`[0, 1)`, heavy ball and Nesterov), ``long_step`` (:math:`\kappa \ge 1`) and
    ``xi`` (:math:`0 < \xi \le \sqrt\kappa`) for ASGD (ignored by the others). ``h_atoms``: the curvature atoms of each
    mode, shape (modes, atoms) shared by every point or (m, modes, atoms) one law per point, non-negative; ``h_probs``: their probabilities (atoms,), summing to 1. Returns ``radius``
    (largest over the modes), ``mode_radius`` (m, modes), ``rate`` :math:`= -\log` radius (the mean-square rate per
    step), ``diverged`` (radius :math:`\ge 1`: the second moment does not decay) and ``diverged_step`` (1 when
    diverged, else :math:`-1`: an exact map has no step of its own).
    """
    method = V.choice("method", method, SAMPLED_METHODS)
    d = V.array("delta", np.atleast_1d(delta) if np.isscalar(delta) else delta, ndim=1, low=0.0, low_open=True)
    m = d.size

    def aligned(name, x, **kw):
        a = V.array(name, np.atleast_1d(x) if np.isscalar(x) else x, ndim=1, **kw)
        if a.size not in (1, m):
            raise ValueError(f"{name}: expected one value or {m} (one per grid point), got {a.size}")
        return np.broadcast_to(a, (m,)).copy()

    al = aligned("alpha", alpha, low=0.0, high=1.0, high_open=True)
    ls = aligned("long_step", long_step, low=1.0)
    xs = aligned("xi", xi, low=0.0, low_open=True)
    if np.any(xs > np.sqrt(ls) * (1 + 1e-12)):
        raise ValueError("xi: ASGD needs xi <= sqrt(long_step) (the paper's Algorithm 3)")
    atoms = V.array("h_atoms", h_atoms, ndim=(2, 3), low=0.0)
    if atoms.ndim == 3 and atoms.shape[0] != m:
        raise ValueError(f"h_atoms: expected one law (modes, atoms) or {m} (one per grid point), got shape {atoms.shape}")
    probs = V.array("h_probs", h_probs, ndim=1, low=0.0)
    if probs.size != atoms.shape[-1]:
        raise ValueError(f"h_probs: expected one probability per atom of h_atoms (shape {atoms.shape}: "
                         f"{atoms.shape[-1]} atoms), got {probs.size}")
    if not abs(probs.sum() - 1.0) <= 1e-12:
        raise ValueError(f"h_probs: probabilities must sum to 1, got {probs.sum()!r}")
    if atoms.shape[-2] > 64 or atoms.shape[-1] > 64:
        raise ValueError(f"h_atoms: at most 64 modes x 64 atoms, got shape {atoms.shape}")
    V.check_bytes({"delta": m}, 8 * 40 * max(m, _CHUNK) * atoms.shape[-1] * atoms.shape[-2], what="the per-point maps")
    grid = {"delta": d, "alpha": al, "long_step": ls, "xi": xs,
            "h_atoms": np.broadcast_to(atoms, (m,) + atoms.shape[-2:]).copy()}
    return run_grid(_map_run, grid, jnp.asarray(probs), static={"method": method},
                    chunk_size=padded_length(m, least=16, most=_CHUNK), pad_to_chunk=True, progress=False)
