r"""Least squares with sampled rows: the exact mean-square rate of SGD, heavy ball, Nesterov and ASGD.

The problem of Kidambi et al. (2018, Section 3): :math:`w^* \in \mathbb R^2`, a row :math:`x = \sigma_1 z e_1` or
:math:`\sigma_2 z e_2` with probability 1/2 each, :math:`y = \langle w^*, x\rangle`, :math:`E z^2 = 2`,
:math:`E z^4 = 2c \ge 4`, so :math:`H = E[xx^\top] = \mathrm{diag}(\sigma_1^2, \sigma_2^2)`, the computational condition
number is :math:`\kappa = 2c\sigma_1^2/\sigma_2^2` and the statistical one :math:`\tilde\kappa = 2c`. A stochastic
gradient at :math:`w` is :math:`xx^\top(w - w^*)`: it touches the sampled coordinate only, so each coordinate (a
*mode*) of the error :math:`e = w - w^*` evolves on its own, with a random curvature :math:`h = x_i^2`:
:math:`h = \sigma_i^2z^2` with probability 1/2, else 0, whence :math:`E h = \sigma_i^2` and :math:`E h^2 = c\sigma_i^4`
(:func:`kidambi_modes`).

Every method keeps a two-number state :math:`s` per mode and updates it linearly, :math:`s' = (P - hQ)s`
(:func:`sampled_blocks`; the algorithms as the paper writes them, Algorithms 1--3):

* SGD: :math:`w' = w - \delta g`; heavy ball: :math:`w' = w - \delta g + \alpha(w - w_-)`; Nesterov:
  :math:`v' = w - \delta g`, :math:`w' = (1+\alpha)v' - \alpha v`;
* ASGD (short step :math:`\delta`, long step :math:`\kappa_p`, statistical advantage :math:`\xi`, :math:`\beta = \xi/\kappa_p`):
  :math:`\bar w' = (1-\beta)\bar w + \beta(w - \tfrac{\kappa_p\delta}{0.7}g)`,
  :math:`w' = \tfrac{0.7}{0.7+\beta}(w - \delta g) + \tfrac{\beta}{0.7+\beta}\bar w'`.

Samples are independent across steps, so the second moment :math:`S = E[ss^\top]` of a mode obeys
:math:`\mathrm{vec}\,S' = \mathcal M\,\mathrm{vec}\,S` with

.. math:: \mathcal M = P\otimes P - E h\,(P\otimes Q + Q\otimes P) + E h^2\, Q\otimes Q

(:func:`sampled_mode_operator`): exact, and it needs only :math:`E h` and :math:`E h^2`. The loss
:math:`E f(w_t) - f(w^*) = \sum_i \sigma_i^2 E e_{t,i}^2` decays like :math:`\rho^t`, :math:`\rho` the largest spectral
radius over the modes; the paper's rate (its eq. 1, :math:`(\log f(w_0) - \log f(w_t))/t`) tends to
:math:`-\log\rho` (:func:`sampled_ms_rate`). The best rate over a method's parameters is found numerically
(:func:`tuned_sampled_rate`); for SGD in closed form (:func:`sgd_tuned_rate_sympy`): per mode
:math:`E e'^2 = (1 - 2\delta\sigma_i^2 + c\delta^2\sigma_i^4)E e^2`, and the best step equalizes the two modes,

.. math:: \delta^* = \frac{2}{c(\sigma_1^2+\sigma_2^2)}, \qquad
          \rho^*_{\rm SGD} = 1 - \frac{4\sigma_1^2\sigma_2^2}{c(\sigma_1^2+\sigma_2^2)^2} \approx 1 - \frac{8}{\kappa} .

No JAX and no I/O here. Every public function validates its arguments (:mod:`theory.validate`).
"""
from __future__ import annotations

import functools
import math

import numpy as np
import sympy as sp

from theory import validate as V

__all__ = ["SAMPLED_METHODS", "ASGD_EPS", "SEARCH_BOX", "SEARCH_N", "SEARCH_ROUNDS", "sampled_blocks", "sampled_mode_operator", "sampled_ms_rate",
           "kidambi_modes", "search_params", "search_box", "grid_search", "tuned_sampled_rates", "tuned_sampled_rate", "sgd_tuned_rate_sympy",
           "sgd_tuned_rate"]

SAMPLED_METHODS = ("sgd", "heavy_ball", "nesterov", "asgd")
ASGD_EPS = 0.7  # the constant of the paper's Algorithm 3 ("has no special significance")
_N_PARAMS = {"sgd": 1, "heavy_ball": 2, "nesterov": 2, "asgd": 3}


def _method(method) -> str:
    return V.choice("method", method, SAMPLED_METHODS)


def _params(method: str, params) -> np.ndarray:
    """``(delta,)``, ``(delta, alpha)`` or ``(delta, long_step, xi)``: positive step, momentum in [0, 1), long step >= 1,
    0 < xi <= sqrt(long_step) (as the paper's Algorithm 3 requires)."""
    p = V.array("params", params, ndim=1)
    n = _N_PARAMS[method]
    if p.size != n:
        raise ValueError(f"params: {method} takes {n} parameter(s), got {p.size}")
    if not p[0] > 0:
        raise ValueError(f"params: the step delta must be > 0, got {p[0]}")
    if method in ("heavy_ball", "nesterov") and not 0 <= p[1] < 1:
        raise ValueError(f"params: the momentum alpha must be in [0, 1), got {p[1]}")
    if method == "asgd" and not (p[1] >= 1 and 0 < p[2] <= math.sqrt(p[1])):
        raise ValueError(f"params: ASGD needs long step >= 1 and 0 < xi <= sqrt(long step), got {p[1]}, {p[2]}")
    return p


def sampled_blocks(method, params) -> tuple[np.ndarray, np.ndarray]:
    r"""``(P, Q)``: one mode's state update :math:`s' = (P - hQ)s` at a sampled curvature :math:`h` (see the module text).

    The state is :math:`(w, w_{t-1})` for SGD and heavy ball, :math:`(w, v)` for Nesterov, :math:`(w, \bar w)` for ASGD
    (one coordinate of the error :math:`w - w^*` and of the method's second sequence).
    """
    method = _method(method)
    return _blocks(method, _params(method, params))


def _blocks(method: str, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    d = p[0]
    if method == "sgd":
        return np.array([[1.0, 0.0], [1.0, 0.0]]), np.array([[d, 0.0], [0.0, 0.0]])
    if method in ("heavy_ball", "nesterov"):
        a = p[1]
        P = np.array([[1.0 + a, -a], [1.0, 0.0]])
        Q = np.array([[d, 0.0], [0.0, 0.0]]) if method == "heavy_ball" else np.array([[(1.0 + a) * d, 0.0], [d, 0.0]])
        return P, Q
    long_step, xi = p[1], p[2]
    beta = xi / long_step
    jump = long_step * d / ASGD_EPS
    a, b = ASGD_EPS / (ASGD_EPS + beta), beta / (ASGD_EPS + beta)
    P = np.array([[a + b * beta, b * (1.0 - beta)], [beta, 1.0 - beta]])
    Q = np.array([[a * d + b * beta * jump, 0.0], [beta * jump, 0.0]])
    return P, Q


def sampled_mode_operator(method, params, h_mean, h_sq) -> np.ndarray:
    r""":math:`\mathcal M = P\otimes P - E h\,(P\otimes Q + Q\otimes P) + E h^2\,Q\otimes Q` (4 x 4): one mode's exact
    second-moment map, row-major :math:`\mathrm{vec}` (``S.ravel()``), from :math:`E h` and :math:`E h^2 \ge (E h)^2`."""
    P, Q = sampled_blocks(method, params)
    h_mean = V.real("h_mean", h_mean, low=0.0)
    h_sq = V.real("h_sq", h_sq, low=0.0)
    if not h_sq >= h_mean**2 * (1 - 1e-12):
        raise ValueError(f"h_sq: E h^2 must be >= (E h)^2 = {h_mean**2:.6g}, got {h_sq:.6g}")
    return np.kron(P, P) - h_mean * (np.kron(P, Q) + np.kron(Q, P)) + h_sq * np.kron(Q, Q)


def _modes(modes) -> np.ndarray:
    m = V.array("modes", modes, ndim=2, low=0.0)
    if m.shape[1] != 2:
        raise ValueError(f"modes: expected rows (E h, E h^2), got shape {m.shape}")
    if not np.all(m[:, 1] >= m[:, 0] ** 2 * (1 - 1e-12)):
        raise ValueError("modes: every row needs E h^2 >= (E h)^2")
    return m


def _radius(method: str, p: np.ndarray, modes: np.ndarray) -> float:
    P, Q = _blocks(method, p)
    pp, pq, qq = np.kron(P, P), np.kron(P, Q) + np.kron(Q, P), np.kron(Q, Q)
    return max(float(np.max(np.abs(np.linalg.eigvals(pp - h1 * pq + h2 * qq)))) for h1, h2 in modes)


def sampled_ms_rate(method, params, modes) -> float:
    r"""The mean-square rate :math:`-\log\rho` per step: :math:`\rho` the largest spectral radius of
    :func:`sampled_mode_operator` over ``modes`` (rows :math:`(E h, E h^2)`); :math:`\le 0` when the method diverges."""
    method = _method(method)
    return -math.log(_radius(method, _params(method, params), _modes(modes)))


def kidambi_modes(kappa, c=2.0, sigma1=1.0) -> np.ndarray:
    r"""The two modes of the paper's instance: rows :math:`(\sigma_i^2, c\sigma_i^4)` with :math:`\sigma_2^2 = 2c\sigma_1^2/\kappa`.

    ``kappa`` is the paper's computational condition number :math:`2c\sigma_1^2/\sigma_2^2` (above :math:`2c`, so that
    :math:`\sigma_1 > \sigma_2`); ``c`` is :math:`E z^4/2 \ge 2` (:math:`c = 2`: :math:`z = \pm\sqrt2`).
    """
    c = V.real("c", c, low=2.0)
    kappa = V.real("kappa", kappa, low=2 * c, low_open=True)
    sigma1 = V.real("sigma1", sigma1, low=0.0, low_open=True)
    s1, s2 = sigma1**2, 2 * c * sigma1**2 / kappa
    return np.array([[s1, c * s1**2], [s2, c * s2**2]])


# search coordinates: log delta, log(1 - alpha), log long step, log(xi / sqrt(long step)); the ranges of the first grid
SEARCH_BOX = {"sgd": ((-9.2, 1.1),), "heavy_ball": ((-9.2, 1.1), (-16.2, 0.0)), "nesterov": ((-9.2, 1.1), (-16.2, 0.0)),
              "asgd": ((-4.6, 1.1), (0.0, None), (-6.9, 0.0))}
# grid points per coordinate and zoom rounds of the searches (each round keeps +-n/3 cells: the window shrinks ~1.5x)
SEARCH_N = {"sgd": 41, "heavy_ball": 31, "nesterov": 31, "asgd": 9}
SEARCH_ROUNDS = 35


def search_params(method, u) -> np.ndarray:
    r"""Search coordinates -> parameters, row by row: :math:`u = (\log\delta, \log(1-\alpha))` for heavy ball and
    Nesterov, :math:`(\log\delta)` for SGD, :math:`(\log\delta, \log\kappa_p, \log(\xi/\sqrt{\kappa_p}))` for ASGD (so
    :math:`\xi \le \sqrt{\kappa_p}` holds wherever the last coordinate is :math:`\le 0`)."""
    method = _method(method)
    u = V.array("u", u, ndim=2, high=60.0)
    if u.shape[1] != _N_PARAMS[method]:
        raise ValueError(f"u: {method} has {_N_PARAMS[method]} search coordinate(s), got {u.shape[1]}")
    p = np.exp(u)
    if method in ("heavy_ball", "nesterov"):
        p[:, 1] = -np.expm1(u[:, 1])
    if method == "asgd":
        p[:, 2] = np.exp(u[:, 2]) * np.sqrt(p[:, 1])
    return p


def _batched_blocks(method: str, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`sampled_blocks` for rows of parameters: (N, 2, 2) each."""
    n = p.shape[0]
    P, Q = np.zeros((n, 2, 2)), np.zeros((n, 2, 2))
    d = p[:, 0]
    if method == "sgd":
        P[:, 0, 0] = P[:, 1, 0] = 1.0
        Q[:, 0, 0] = d
    elif method in ("heavy_ball", "nesterov"):
        a = p[:, 1]
        P[:, 0, 0], P[:, 0, 1], P[:, 1, 0] = 1.0 + a, -a, 1.0
        if method == "heavy_ball":
            Q[:, 0, 0] = d
        else:
            Q[:, 0, 0], Q[:, 1, 0] = (1.0 + a) * d, d
    else:
        beta = p[:, 2] / p[:, 1]
        jump = p[:, 1] * d / ASGD_EPS
        a, b = ASGD_EPS / (ASGD_EPS + beta), beta / (ASGD_EPS + beta)
        P[:, 0, 0], P[:, 0, 1], P[:, 1, 0], P[:, 1, 1] = a + b * beta, b * (1.0 - beta), beta, 1.0 - beta
        Q[:, 0, 0], Q[:, 1, 0] = a * d + b * beta * jump, beta * jump
    return P, Q


def _batched_rates(method: str, p: np.ndarray, modes: np.ndarray) -> np.ndarray:
    """:func:`sampled_ms_rate` for rows of parameters, ``modes`` shared (n_modes, 2) or one set per row (N, n_modes, 2);
    ``-inf`` where a row's map is not finite."""
    P, Q = _batched_blocks(method, p)
    kron = lambda A, B: np.einsum("nij,nkl->nikjl", A, B).reshape(-1, 4, 4)  # noqa: E731
    pp, pq, qq = kron(P, P), kron(P, Q) + kron(Q, P), kron(Q, Q)
    modes = np.broadcast_to(modes, (p.shape[0],) + modes.shape[-2:])
    radius = np.zeros(p.shape[0])
    for j in range(modes.shape[1]):
        M = pp - modes[:, j, 0, None, None] * pq + modes[:, j, 1, None, None] * qq
        ok = np.all(np.isfinite(M), axis=(1, 2))
        r = np.full(p.shape[0], np.inf)
        r[ok] = np.max(np.abs(np.linalg.eigvals(M[ok])), axis=-1)
        radius = np.maximum(radius, r)
    with np.errstate(divide="ignore"):
        return -np.log(radius)


def search_box(method, hint) -> np.ndarray:
    r"""The first grid's box in search coordinates (rows: low, high per coordinate); ASGD's long step spans
    :math:`[1, 10\,\mathrm{hint}]` (``hint``: the modes' curvature ratio)."""
    method = _method(method)
    hint = V.real("hint", hint, low=1.0)
    box = np.array([[lo, math.log(10 * hint) if hi is None else hi] for lo, hi in SEARCH_BOX[method]])
    return box.T


def grid_search(rates, box, *, n: int, rounds: int, keep: int) -> dict:
    r"""Maximize ``rates`` by a grid zoom, for one box (2, dim) or a batch of independent boxes (B, 2, dim).

    ``rates(u)`` maps points of shape (B, N, dim) (search coordinates, one row of points per box) to values (B, N). An
    ``n``-point grid per coordinate over each box, then ``rounds`` times a new grid over :math:`\pm` ``keep`` cells around
    that box's best point (clipped to the box). Returns ``{"rate", "u", "first_max", "spread"}`` per box (a leading
    batch axis when ``box`` has one): the best value and point, the first grid's maximum, and the range of values on the
    last grid within one cell of the best (how flat the optimum is at the final resolution).
    """
    if not callable(rates):
        raise TypeError(f"rates: expected a function of the search points, got {type(rates).__name__}")
    box = V.array("box", box, ndim=(2, 3))
    single = box.ndim == 2
    box = box[None] if single else box
    if box.shape[1] != 2 or not np.all(box[:, 1] > box[:, 0]):
        raise ValueError(f"box: expected rows (low, high) with high > low, got {box.tolist()}")
    n = V.integer("n", n, low=3, high=4096)
    rounds = V.integer("rounds", rounds, low=0, high=200)
    keep = V.integer("keep", keep, low=1, high=n)
    nb, dim = box.shape[0], box.shape[2]
    V.check_bytes({"n": n, "box": nb}, 8 * 64 * nb * n**dim, what="one search grid")
    lo, hi = box[:, 0].copy(), box[:, 1].copy()
    unit = np.stack(np.meshgrid(*[np.linspace(0.0, 1.0, n)] * dim, indexing="ij"), axis=-1).reshape(-1, dim)
    first = None
    for _ in range(rounds + 1):
        u = lo[:, None, :] + (hi - lo)[:, None, :] * unit[None]
        r = np.asarray(rates(u), dtype=float).reshape(nb, -1)
        r = np.where(np.isfinite(r), r, -np.inf)
        first = r.max(axis=1) if first is None else first
        i = np.argmax(r, axis=1)
        best, cell = u[np.arange(nb), i], (hi - lo) / (n - 1)
        lo, hi = np.maximum(best - keep * cell, box[:, 0]), np.minimum(best + keep * cell, box[:, 1])
    near = np.all(np.abs(u - best[:, None]) <= cell[:, None] * (1 + 1e-9), axis=2)
    top = r[np.arange(nb), i]
    spread = top - np.where(near, r, np.inf).min(axis=1)
    out = {"rate": top, "u": best, "first_max": first, "spread": spread}
    return {k: v[0] for k, v in out.items()} if single else out


def tuned_sampled_rates(method, modes, *, n: int | None = None, rounds: int = SEARCH_ROUNDS) -> dict:
    r"""The best mean-square rate of ``method`` over its parameters, for each set of modes in a batch (B, n_modes, 2):
    ``{"rate", "params", "spread"}`` with a leading batch axis.

    :func:`grid_search` of :func:`sampled_ms_rate` in the search coordinates (:func:`search_params`) over
    :func:`search_box` (``n`` points per coordinate, :data:`SEARCH_N` by default; each round keeps
    :math:`\pm n/3` cells, so the window shrinks by a third or so per round: the optimum of heavy ball lies on a long
    flat ridge, which a faster zoom can leave). ``spread``: how much the rate varies within one cell of the optimum on
    the last grid.
    """
    method = _method(method)
    modes = V.array("modes", modes, ndim=3, low=0.0)
    for m in modes:
        _modes(m)
    dim = _N_PARAMS[method]
    n = V.integer("n", n if n is not None else SEARCH_N[method], low=5, high=1024)
    rounds = V.integer("rounds", rounds, low=0, high=200)
    boxes = np.stack([search_box(method, max(float(m[:, 0].max() / max(m[:, 0].min(), 1e-300)), 1.0)) for m in modes])

    def rates(u):
        b, k, _ = u.shape
        flat = u.reshape(-1, dim)
        return _batched_rates(method, search_params(method, flat), np.repeat(modes, k, axis=0)).reshape(b, k)

    out = grid_search(rates, boxes, n=n, rounds=rounds, keep=max(2, n // 3))
    return {"rate": out["rate"], "params": search_params(method, out["u"]), "spread": out["spread"]}


def tuned_sampled_rate(method, modes, *, n: int | None = None, rounds: int = SEARCH_ROUNDS) -> dict:
    r"""The best mean-square rate of ``method`` over its parameters on one set of ``modes`` (n_modes, 2):
    ``{"rate", "params", "spread"}`` (:func:`tuned_sampled_rates` for a batch of one)."""
    out = tuned_sampled_rates(method, np.asarray(modes)[None] if np.ndim(modes) == 2 else modes, n=n, rounds=rounds)
    return {"rate": float(out["rate"][0]), "params": out["params"][0], "spread": float(out["spread"][0])}


@functools.lru_cache(maxsize=None)
def sgd_tuned_rate_sympy():
    r"""SGD's best step and per-step factor on the two modes (sympy): :math:`r_i(\delta) = 1 - 2\delta s_i + c\delta^2s_i^2`
    (:math:`s_i = \sigma_i^2`), equal at the best :math:`\delta` (the slow mode's factor falls, the fast one's rises there).

    Returns ``({"delta", "factor"}, (s1, s2, c))``.
    """
    s1, s2, c, d = sp.symbols("s1 s2 c delta", positive=True)
    r = lambda s: 1 - 2 * d * s + c * d**2 * s**2  # noqa: E731
    sols = [x for x in sp.solve(sp.Eq(r(s1), r(s2)), d) if x != 0]
    if len(sols) != 1:  # pragma: no cover - a quadratic in delta with the root 0 removed
        raise RuntimeError(f"expected one nonzero step, got {sols}")
    delta = sp.factor(sols[0])
    return {"delta": delta, "factor": sp.factor(sp.simplify(r(s2).subs(d, delta)))}, (s1, s2, c)


@functools.lru_cache(maxsize=None)
def _sgd_fns():
    exprs, syms = sgd_tuned_rate_sympy()
    return {k: sp.lambdify(syms, v, "math") for k, v in exprs.items()}


def sgd_tuned_rate(kappa, c=2.0) -> dict:
    r"""SGD's best rate on the instance (:func:`kidambi_modes`): ``{"delta", "rate"}``, rate :math:`-\log\rho^*_{\rm SGD}`
    (:func:`sgd_tuned_rate_sympy`; :math:`\approx 8/\kappa` for large :math:`\kappa`)."""
    modes = kidambi_modes(kappa, c)
    fns = _sgd_fns()
    s1, s2, c = modes[0, 0], modes[1, 0], float(c)
    return {"delta": float(fns["delta"](s1, s2, c)), "rate": -math.log(float(fns["factor"](s1, s2, c)))}
