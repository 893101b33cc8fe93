r"""NumPy / SciPy references of the edge-of-stability simulators and their benchmark cases.

* :func:`poly_gd_numpy` -- the recursion of :func:`sims.eos.poly_gd` (GD, heavy ball, Nesterov on a 2-D
  polynomial loss) with a Python loop over steps and arrays over runs, same outputs;
* :func:`poly_flow_scipy` -- gradient, central and rod flow by ``scipy.integrate.solve_ivp`` (LSODA),
  an independent integrator for :func:`sims.eos.poly_flow`;
* :func:`catapult_numpy` -- GD on the uv model from given :math:`(u_0, v_0)`, arrays over runs.

``bench_cases(scale)`` times the two sweeps against their references (``make bench``).
"""
from __future__ import annotations

import numpy as np
from scipy.integrate import solve_ivp

from sims.bench import BenchCase
from sims.eos import DIVERGENCE_BOUND, FLOWS, catapult_gd, poly_gd
from theory import validate as V

__all__ = ["poly_loss_numpy", "poly_grad_numpy", "poly_sharpness_numpy", "poly_gd_numpy", "poly_flow_scipy",
           "catapult_numpy", "bench_cases"]


def _powers(t):
    t = np.asarray(t, dtype=float)
    one, zero = np.ones_like(t), np.zeros_like(t)
    return np.stack([one, t, t * t], -1), np.stack([zero, one, 2 * t], -1), np.stack([zero, zero, 2 * one], -1)


def _points(W, C) -> tuple[np.ndarray, np.ndarray]:
    """Points ``W`` (..., 2) and coefficients ``C`` (..., 3, 3), finite, with broadcastable leading axes."""
    W = V.array("W", W)
    if W.ndim < 1 or W.shape[-1] != 2:
        raise ValueError(f"W: expected points (..., 2), got shape {W.shape}")
    C = V.array("C", C)
    if C.ndim < 2 or C.shape[-2:] != (3, 3):
        raise ValueError(f"C: expected coefficient matrices (..., 3, 3), got shape {C.shape}")
    try:
        np.broadcast_shapes(W.shape[:-1], C.shape[:-2])
    except ValueError:
        raise ValueError(f"W, C: leading axes do not broadcast: W has shape {W.shape}, C has shape {C.shape}") from None
    return W, C


def _bilinear(u, C, v):
    # u^T C v for stacks of 3-vectors: two batched products (an unoptimised three-operand einsum is ~7x slower)
    return (u[..., None, :] @ C @ v[..., :, None])[..., 0, 0]


def _loss(W, C):
    px, _, _ = _powers(W[..., 0])
    py, _, _ = _powers(W[..., 1])
    return _bilinear(px, C, py)


def _grad(W, C):
    px, dpx, _ = _powers(W[..., 0])
    py, dpy, _ = _powers(W[..., 1])
    return np.stack([_bilinear(dpx, C, py), _bilinear(px, C, dpy)], -1)


def _hessian(W, C):
    px, dpx, ddpx = _powers(W[..., 0])
    py, dpy, ddpy = _powers(W[..., 1])
    return _bilinear(ddpx, C, py), _bilinear(dpx, C, dpy), _bilinear(px, C, ddpy)


def _sharpness(W, C):
    # the top eigenvalue of a symmetric 2x2 in closed form, (a + c)/2 + sqrt(((a - c)/2)^2 + b^2), as the simulator
    # computes it: LAPACK on a stack of 2x2 matrices is ~8x slower and would flatter the JAX side
    hxx, hxy, hyy = _hessian(W, C)
    return 0.5 * (hxx + hyy) + np.hypot(0.5 * (hxx - hyy), hxy)


def poly_loss_numpy(W: np.ndarray, C: np.ndarray) -> np.ndarray:
    r""":math:`p(x)^\top C p(y)` for points ``W`` (..., 2) and coefficients ``C`` (..., 3, 3)."""
    return _loss(*_points(W, C))


def poly_grad_numpy(W: np.ndarray, C: np.ndarray) -> np.ndarray:
    r""":math:`\nabla L` of :func:`poly_loss_numpy`, shape (..., 2)."""
    return _grad(*_points(W, C))


def poly_sharpness_numpy(W: np.ndarray, C: np.ndarray) -> np.ndarray:
    r"""Largest Hessian eigenvalue, :math:`(h_{xx}+h_{yy})/2 + \sqrt{((h_{xx}-h_{yy})/2)^2 + h_{xy}^2}`; ``W`` (..., 2),
    ``C`` (..., 3, 3)."""
    return _sharpness(*_points(W, C))


def _per_run(name: str, a: np.ndarray, n: int, sizes: str) -> np.ndarray:
    """``a`` with one leading entry or ``n`` (one per run); ``sizes`` lists every argument's count for the message."""
    if a.shape[0] not in (1, n):
        raise ValueError(f"{name}: expected 1 or {n} rows (one per run), got {a.shape[0]} ({sizes})")
    return a


def _runs(coef, eta, w0, momentum, nesterov):
    """(coef, eta, w0, momentum, nesterov) of :func:`poly_gd_numpy`, validated, each with 1 or n leading rows."""
    C = V.array("coef", coef, ndim=(2, 3))
    if C.shape[-2:] != (3, 3):
        raise ValueError(f"coef: expected (3, 3) or (n, 3, 3), got shape {C.shape}")
    W = V.array("w0", w0, ndim=(1, 2))
    if W.shape[-1] != 2:
        raise ValueError(f"w0: expected (2,) or (n, 2), got shape {W.shape}")
    vec = lambda x: x if x is None or isinstance(x, (str, bytes)) else np.atleast_1d(x)  # noqa: E731
    etas = V.array("eta", vec(eta), ndim=1, low=0.0, low_open=True)
    mom = V.array("momentum", vec(momentum), ndim=1, low=0.0, high=1.0, high_open=True)
    nest = np.atleast_1d(np.asarray(nesterov))
    if nest.dtype != bool or nest.ndim != 1:
        raise TypeError(f"nesterov: expected a bool or a 1-D array of bools, got {nesterov!r}")
    names = ("coef", "w0", "eta", "momentum", "nesterov")
    rows = (C[None] if C.ndim == 2 else C, W[None] if W.ndim == 1 else W, etas, mom, nest)
    n = max(r.shape[0] for r in rows)
    sizes = ", ".join(f"{name} {r.shape[0]}" for name, r in zip(names, rows))
    return [_per_run(name, r, n, sizes) for name, r in zip(names, rows)] + [n]


def poly_gd_numpy(coef, eta, w0, *, n_steps: int, n_blocks: int, momentum=0.0, nesterov=False,
                  max_bytes=None) -> dict[str, np.ndarray]:
    """Vectorized NumPy reference of :func:`sims.eos.poly_gd`: same arguments and outputs (``max_bytes`` too)."""
    n_steps = V.integer("n_steps", n_steps, low=1)
    n_blocks = V.integer("n_blocks", n_blocks, low=1, high=n_steps)
    if n_steps % n_blocks:
        raise ValueError(f"n_blocks: must divide n_steps = {n_steps}, got {n_blocks}")
    C, W, etas, mom, nest, n = _runs(coef, eta, w0, momentum, nesterov)
    V.check_bytes({"n_blocks": n_blocks, "runs": n}, 7 * 8 * n_blocks * n, what="the per-block records",
                  max_bytes=max_bytes)
    C = np.broadcast_to(C, (n, 3, 3))
    W = np.broadcast_to(W, (n, 2)).copy()
    S = np.broadcast_to(etas, (n,))[:, None]
    mom = np.broadcast_to(mom, (n,))[:, None]
    nu = np.broadcast_to(nest, (n,)).astype(float)[:, None]
    W_prev, W_prev2 = W.copy(), W.copy()
    block = n_steps // n_blocks
    sums = np.zeros((n, 5))
    means = np.full((n, n_blocks, 5), np.nan)
    ends = np.full((n, n_blocks, 2), np.nan)
    div = np.zeros(n, bool)
    div_step = np.full(n, -1)
    with np.errstate(over="ignore", invalid="ignore"):
        for t in range(n_steps):
            sums += np.column_stack([W[:, 0], W[:, 1], W[:, 0] ** 2, _loss(W, C), _sharpness(W, C)])
            Z = W + nu * mom * (W - W_prev)
            new = W + mom * (W - W_prev) - S * _grad(Z, C)
            bad = ~div & (~np.all(np.isfinite(new), 1) | (np.max(np.abs(np.nan_to_num(new, nan=np.inf)), 1) > DIVERGENCE_BOUND))
            div_step = np.where(bad, t + 1, div_step)
            div |= bad
            keep = div[:, None]
            W, W_prev, W_prev2 = np.where(keep, W, new), np.where(keep, W_prev, W), np.where(keep, W_prev2, W_prev)
            if (t + 1) % block == 0:
                b = (t + 1) // block - 1
                means[:, b], ends[:, b] = sums / block, W
                sums[:] = 0.0
    dead = div[:, None] & (np.arange(n_blocks)[None] >= (div_step // block)[:, None])
    means[dead] = np.nan
    ends[dead] = np.nan
    gap = np.where(div, np.nan, np.linalg.norm(W - W_prev2, axis=1))
    return {"block_mean": means, "block_end": ends, "final": W, "gap2": gap, "diverged": div, "diverged_step": div_step}


def poly_flow_scipy(coef, eta: float, w0, t1: float, *, flow: str = "central", relax: float = 1.0,
                    rtol: float = 1e-10, atol: float = 1e-12) -> np.ndarray:
    """State (c, r) at ``t1`` of the flow of :func:`sims.eos.poly_flow` (one run), by SciPy's LSODA.

    The central flow's :math:`\\nabla S` is computed here by central finite differences of
    :func:`poly_sharpness_numpy` (step 1e-6), independent of the closed-form gradient the simulator uses.
    """
    V.choice("flow", flow, FLOWS)
    C = V.array("coef", coef, shape=(3, 3))
    w = V.array("w0", w0, shape=(2,))
    eta = V.real("eta", eta, low=0.0, low_open=True)
    t1 = V.real("t1", t1, low=0.0, low_open=True)
    relax = V.real("relax", relax, low=0.0, low_open=True)
    rtol = V.real("rtol", rtol, low=0.0, low_open=True)
    atol = V.real("atol", atol, low=0.0, low_open=True)

    def grad_S(c, h=1e-6):
        return np.array([(_sharpness(c + h * e, C) - _sharpness(c - h * e, C)) / (2 * h) for e in np.eye(2)])

    def field(t, z):
        c, r = z[:2], z[2:]
        g = _grad(c, C)
        if flow == "gradient":
            return np.concatenate([-eta * g, 0 * r])
        if flow == "central":
            S, gS = _sharpness(c, C), grad_S(c)
            s2 = max(0.0, (2 * np.dot(-g, gS) + 2 * relax / eta * (S - 2 / eta)) / max(np.dot(gS, gS), 1e-300))
            return np.concatenate([-eta * (g + 0.5 * s2 * gS), 0 * r])
        gp, gm = _grad(c + r, C), _grad(c - r, C)
        return np.concatenate([-0.5 * eta * (gp + gm), 0.5 * eta * (gp - gm) - 2 * r])

    if flow == "rod":
        w1 = w - eta * _grad(w, C)
        z0 = np.concatenate([0.5 * (w + w1), 0.5 * (w - w1)])
    else:
        z0 = np.concatenate([w, np.zeros(2)])
    sol = solve_ivp(field, (0.0, t1), z0, method="LSODA", rtol=rtol, atol=atol)
    return sol.y[:, -1]


def catapult_numpy(u0: np.ndarray, v0: np.ndarray, eta: np.ndarray, n_steps: int) -> dict[str, np.ndarray]:
    r"""GD on :math:`\tfrac12 (u^\top v/\sqrt m)^2` from rows of ``u0``, ``v0`` (n, m) with steps ``eta`` (n,).

    Returns the final :math:`\eta\lambda`, the largest loss over the start, ``diverged`` and ``diverged_step``.
    """
    U = V.array("u0", u0, ndim=2)
    Vv = V.array("v0", v0, shape=U.shape)
    e = V.array("eta", eta, shape=(U.shape[0],), low=0.0, low_open=True)[:, None]
    n_steps = V.integer("n_steps", n_steps, low=1)
    m = U.shape[1]
    scale = np.sqrt(m)
    loss0 = 0.5 * (np.sum(U * Vv, 1) / scale) ** 2
    worst = loss0.copy()
    div = np.zeros(U.shape[0], bool)
    div_step = np.full(U.shape[0], -1)
    with np.errstate(over="ignore", invalid="ignore"):
        for t in range(n_steps):
            f = (np.sum(U * Vv, 1) / scale)[:, None]
            worst = np.where(div, worst, np.maximum(worst, 0.5 * f[:, 0] ** 2))
            nU, nV = U - e * f * Vv / scale, Vv - e * f * U / scale
            big = lambda A: ~np.all(np.isfinite(A), 1) | (np.max(np.abs(np.nan_to_num(A, nan=np.inf)), 1) > DIVERGENCE_BOUND)  # noqa: E731
            bad = ~div & (big(nU) | big(nV))
            div_step = np.where(bad, t + 1, div_step)
            div |= bad
            U, Vv = np.where(div[:, None], U, nU), np.where(div[:, None], Vv, nV)
    final = np.where(div, np.nan, e[:, 0] * (np.sum(U * U, 1) + np.sum(Vv * Vv, 1)) / m)
    return {"final_eta_lambda": final, "max_loss_ratio": np.where(div, np.inf, worst / loss0), "diverged": div,
            "diverged_step": div_step}


def bench_cases(scale: str = "small") -> list[BenchCase]:
    """Two sweeps: GD on the self-stabilization toy over eta*a, and the catapult over eta*lambda0 x seeds.

    ``scale``: "small" (seconds on a laptop) or "large" (GPU-sized). Units: GD updates (toy), GD updates x
    width (catapult).
    """
    V.choice("scale", scale, ("small", "large"))
    from theory.eos import selfstab_coefficients

    n, steps = (256, 4000) if scale == "small" else (16384, 20000)
    # inside the 2-cycle's window the dynamics contract, so round-off differences between the two codes stay at
    # round-off (outside it, chaotic runs amplify them and only divergence flags could be compared)
    eta_a = np.linspace(1.76, 1.99, n)
    coef = np.stack([selfstab_coefficients(e / 0.5, 0.1) for e in eta_a])

    # the bench harness compares tuples of arrays: (block means, divergence steps)
    def toy(fn):
        out = fn(coef, 0.5, (0.1, 0.0), n_steps=steps, n_blocks=4)
        return out["block_mean"], out["diverged_step"]

    def check_toy(jx, npy):
        np.testing.assert_allclose(jx[0], npy[0], rtol=1e-8, atol=1e-10)
        np.testing.assert_array_equal(jx[1], npy[1])

    cases = [BenchCase(
        name=f"eos.selfstab_sweep[{n}x{steps}]", unit="GD updates", work=float(n * steps),
        run_jax=lambda: toy(poly_gd), run_numpy=lambda: toy(poly_gd_numpy), check=check_toy,
        # per update, counted from the step: six 3x3 bilinear forms (loss, gradient, Hessian), the 2x2
        # eigenvalue (one square root), momentum terms, divergence tests and selects
        cost={"flop": 150, "exp": 1})]

    import jax

    width, n_c, n_seeds, c_steps = (256, 16, 4, 200) if scale == "small" else (4096, 64, 64, 400)
    keys = jax.random.split(jax.random.key(0), n_seeds)
    cs = np.linspace(0.5, 4.5, n_c)

    def numpy_catapult():
        u, v = [], []
        for k in keys:  # the same draws as the simulator: split each run key, then two normals
            ku, kv = jax.random.split(k)
            u.append(np.asarray(jax.random.normal(ku, (width,))))
            v.append(np.asarray(jax.random.normal(kv, (width,))))
        U, Vv = np.tile(np.array(u), (n_c, 1)), np.tile(np.array(v), (n_c, 1))
        lam0 = (np.sum(U * U, 1) + np.sum(Vv * Vv, 1)) / width
        out = catapult_numpy(U, Vv, np.repeat(cs, n_seeds) / lam0, c_steps)
        return out["diverged"], out["final_eta_lambda"]

    def jax_catapult():
        out = catapult_gd(keys, cs, width=width, n_steps=c_steps, n_blocks=c_steps // 10)
        return out["diverged"].ravel(), out["final_eta_lambda"].ravel()

    def check_catapult(jx, npy):
        np.testing.assert_array_equal(jx[0], npy[0])
        np.testing.assert_allclose(jx[1], npy[1], rtol=1e-8)

    cases.append(BenchCase(
        name=f"eos.catapult_sweep[{n_c}x{n_seeds}, m={width}]", unit="GD updates x width",
        work=float(n_c * n_seeds * c_steps * width),
        run_jax=jax_catapult, run_numpy=numpy_catapult, check=check_catapult,
        # per update x width: u.v, two axpy updates, two divergence tests, two selects
        cost={"flop": 14}))
    return cases
