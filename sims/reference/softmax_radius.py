r"""NumPy references for :mod:`sims.softmax_radius` and its benchmark cases.

The references cover a one-hidden-layer ReLU MLP with parameters ``W0, b0, W1, b1`` (the layout
of ``make_model("mlp", hidden=(width,))``):

* :func:`mlp_logits` -- :math:`\max(xW_0+b_0,0)W_1+b_1`;
* :func:`rho_a_numpy` -- :math:`\rho_a(v)=\pi/\max_x\Delta a(x;v)` with the directional logit
  derivatives :math:`a` from central differences (exact for a piecewise-linear net up to
  round-off :math:`\sim\epsilon/h`, unless a ReLU switches inside :math:`[-h,h]`);
* :func:`one_step_loss_numpy` -- mean cross-entropy after a step of length :math:`t` along :math:`v`.

:func:`bench_cases` times :func:`sims.softmax_radius.rho_a` (one JVP per sample) against
:func:`rho_a_numpy` on the same data.
"""
from __future__ import annotations

import numpy as np

from theory import validate as V

__all__ = ["MLP_KEYS", "mlp_logits", "rho_a_numpy", "one_step_loss_numpy", "bench_cases"]

MLP_KEYS = ("W0", "b0", "W1", "b1")


def _mlp_params(name: str, params) -> list[np.ndarray]:
    if not isinstance(params, dict) or set(params) != set(MLP_KEYS):
        raise ValueError(f"{name}: expected a dict with keys {MLP_KEYS} (a one-hidden-layer MLP)")
    W0, b0, W1, b1 = (V.array(f"{name}['{k}']", params[k]) for k in MLP_KEYS)
    if W0.ndim != 2 or W1.ndim != 2 or b0.shape != (W0.shape[1],) or W1.shape[0] != W0.shape[1] or b1.shape != (W1.shape[1],):
        raise ValueError(f"{name}: inconsistent shapes {[np.shape(params[k]) for k in MLP_KEYS]}")
    return [W0, b0, W1, b1]


def mlp_logits(params, x) -> np.ndarray:
    r"""Logits :math:`\max(xW_0+b_0,0)W_1+b_1` of a one-hidden-layer ReLU MLP, shape ``(N, n_out)``."""
    W0, b0, W1, b1 = _mlp_params("params", params)
    xx = V.array("x", x, shape=(None, W0.shape[0]))
    return np.maximum(xx @ W0 + b0, 0.0) @ W1 + b1


def rho_a_numpy(params, v, x, h: float = 1e-6) -> float:
    r""":math:`\pi/\max_x(\max_ka_k-\min_ka_k)` with :math:`a=(f_{\theta+hv}(x)-f_{\theta-hv}(x))/(2h)`."""
    p = dict(zip(MLP_KEYS, _mlp_params("params", params)))
    d = dict(zip(MLP_KEYS, _mlp_params("v", v)))
    h = V.real("h", h, low=0.0, low_open=True)
    plus = mlp_logits({k: p[k] + h * d[k] for k in MLP_KEYS}, x)
    minus = mlp_logits({k: p[k] - h * d[k] for k in MLP_KEYS}, x)
    a = (plus - minus) / (2 * h)
    spread = np.max(a.max(axis=1) - a.min(axis=1))
    return float(np.pi / spread) if spread > 0 else float("inf")


def one_step_loss_numpy(params, v, x, y, t) -> np.ndarray:
    r"""Mean cross-entropy of :func:`mlp_logits` at :math:`\theta+tv` for every distance ``t`` (1-d)."""
    p = dict(zip(MLP_KEYS, _mlp_params("params", params)))
    d = dict(zip(MLP_KEYS, _mlp_params("v", v)))
    tt = V.array("t", t, ndim=1)
    yy = V.array("y", y, ndim=1, low=0, dtype=np.int64)
    if not np.array_equal(yy, V.array("y", y, ndim=1)):  # the int64 cast would truncate 3.5 to class 3
        raise ValueError(f"y: expected whole class labels, got {np.asarray(y)[:4]!r}")
    out = []
    for ti in tt:
        z = mlp_logits({k: p[k] + ti * d[k] for k in MLP_KEYS}, x)
        if ti == tt[0]:
            V.one_per_row("y", yy, "x", z.shape[0])
            if not np.all(yy < z.shape[1]):
                raise ValueError(f"y: every label must be < {z.shape[1]} (the number of classes), got max {yy.max()}")
        m = z.max(axis=1, keepdims=True)
        lse = (m + np.log(np.exp(z - m).sum(axis=1, keepdims=True)))[:, 0]
        out.append(np.mean(lse - z[np.arange(z.shape[0]), yy]))
    return np.asarray(out)


def bench_cases(scale: str) -> list:
    """rho_a over a data set (per-sample JVP, max spread) vs the NumPy finite-difference reference."""
    import jax
    import jax.numpy as jnp

    from sims import softmax_radius as S
    from sims.softmax_radius import directions as SD  # the jitted core, timed without the checks rho_a runs first
    from sims.bench import BenchCase

    V.choice("scale", scale, ("small", "large"))
    n, width = (1797, 128) if scale == "small" else (200_000, 512)
    rng = np.random.default_rng(0)
    x = rng.random((n, 64))
    model = S.make_model("mlp", hidden=(width,))
    params = model.init(jax.random.key(0))
    v = S.normalize(jax.tree_util.tree_map(lambda w: jnp.asarray(rng.normal(size=w.shape)), params))
    pn = {k: np.asarray(params[k]) for k in MLP_KEYS}
    vn = {k: np.asarray(v[k]) for k in MLP_KEYS}

    def check(a, b):
        # central differences are exact for a piecewise-linear net up to round-off ~eps/h ~ 1e-10,
        # except where a ReLU flips inside [-h, h] (measure zero for random data)
        np.testing.assert_allclose(float(a), float(b), rtol=1e-6)

    xj = jnp.asarray(x)
    # the compiled core, so the timing excludes the public function's input validation (a host copy of x)
    return [BenchCase(name=f"softmax_radius.rho_a_jvp[{n}x{width}]", unit="sample JVPs", work=float(n),
                      run_jax=lambda: SD._rho_jit(model.apply, params, v, xj, 1.0),
                      run_numpy=lambda: rho_a_numpy(pn, vn, x),
                      check=check,
                      # per sample, 2 flops per multiply-add: primal and tangent of the 64 -> width layer (2 products)
                      # and only the tangent of the width -> 10 layer (2 products; rho_a never needs the primal logits,
                      # and the compiled JVP drops them) -- the same products as the two forward passes of the NumPy
                      # side. Elementwise: 2 bias adds, the compare and 2 selects (ReLU and its tangent) per hidden
                      # unit; the output bias and the class max and min per class; the spread and the max over samples
                      cost={"matmul_flop": 2.0 * (2 * 64 * width + 2 * width * 10), "flop": 5.0 * width + 32})]
