r"""Distributed (compressed / sign) SGD and their modified equations, simulated over many paths.

Topic ``sde`` (Compagnoni et al., arXiv 2506.00181). Float64 (``import sims`` enables x64).

Discrete algorithms, N agents, agent i observing :math:`g_i = \nabla f(x) + Z_i`, base step :math:`\eta`,
schedule :math:`\eta_k`:

* ``dsgd``: :math:`x^+ = x - \eta\eta_k\frac1N\sum_i g_i`;
* ``dcsgd``: :math:`x^+ = x - \eta\eta_k\frac1N\sum_i C_i(g_i)`, unbiased compressors with variance
  :math:`\omega_i` (``bernoulli``: :math:`vB/q` per coordinate, :math:`\omega = 1/q - 1`; ``rand_k``:
  keep :math:`k = d/(1+\omega)` random coordinates scaled by :math:`d/k`); agent-specific :math:`\omega_i`;
* ``dcsgd_normalized``: the same with :math:`\eta` replaced by the normalization prescription
  :math:`\eta\,\eta_k / [(L_0 + L_1\|\nabla f(x)\|)(1 + (\bar\omega + d(\sigma_1^2\bar\omega+\sigma_1^2))/N)]`
  (uses the exact :math:`\|\nabla f\|`, the oracle the prescription is stated with; ``eta`` plays the
  role of the prescription's constant :math:`c`);
* ``dsignsgd``: :math:`x^+ = x - \eta\eta_k\frac1N\sum_i \mathrm{sign}(g_i)`, each sign drawn directly as
  :math:`+1` with probability :math:`F(\partial_j f/s)` (exact in law for every noise law and real :math:`\nu`).

Noise :math:`Z_i = s(\nabla f)\,\zeta_i` with per-coordinate scale
:math:`s = \sqrt{\sigma_0^2 + \sigma_1^2\|\nabla f\|^2}` (affine variance) and :math:`\zeta` standard
Gaussian, Student-t(ν) or Cauchy. Schedules :math:`\eta_k`: ``constant`` or ``inv_sqrt`` (:math:`1/\sqrt{k+1}`).

Random numbers (:func:`simulate`): drawn per block of steps in one call (time-major, one key split per block;
blocks divide the recording interval), noise values as float64 variates, sign steps and Bernoulli masks as one
32-bit word each (:func:`sims.rng.words`; :math:`P(b < t\,2^{32})` is within :math:`2^{-32}` of :math:`t`). Gaussian
and Cauchy noise are stable laws, so the agents' compressed noise is one draw per coordinate and step, scaled by
:math:`(\sum_i c_{ij}^2)^{1/2}` or :math:`\sum_i c_{ij}` (:func:`_direction`): the same law as N draws. On a CPU the
draws are still most of a step's cost: a float64 normal costs ~15 ns of a core through ``erf_inv`` against a few ns
for NumPy's ziggurat, so these paths run at about NumPy's speed with the same reduction (``make bench``); on a GPU
the same draws are cheap.

Modified equations (:func:`sde_path`): :math:`dX = b(X)dt + \sqrt{\eta}\,s(\nabla f(X))N^{-1/2}dW` with
:math:`b \in \{-\nabla f,\ -\nabla f - \tfrac\eta2\nabla^2f\nabla f,\ -\nabla f + \tfrac\eta2\nabla^2f\nabla f\}`;
the Hessian-vector product comes from ``jax.jvp`` (independent of the sympy drifts in
:mod:`theory.sde`). The diffusion reuses :func:`noise_scale`, the same noise model as the discrete
algorithms (Gaussian only: the SDE needs a covariance).

Why a hand-written integrator rather than diffrax: the weak-error measurement couples each SDE path
to a discrete path by summing the SDE's Brownian sub-increments into the discrete algorithm's noise
(:func:`coupled_weak_paths`); that needs the increments on a fixed grid that we own, it is a plain
``lax.scan`` that vmaps over thousands of paths with one compilation, and for additive noise the
stochastic Heun scheme used here is weak order 2 (:math:`E\,\Delta W\,dt/2` reproduces
:math:`E\,\Delta Z\,\Delta W = dt^2/2`, and :math:`\tfrac14 b''\sigma^2\Delta W^2dt` the
:math:`\tfrac14\sigma^2b''dt^2` term of the order-2 weak Taylor scheme), so the integrator error
stays below the :math:`O(\eta^2)` effects being measured. Multiplicative noise uses Euler-Maruyama
(Heun would converge to the Stratonovich SDE). The unit tests cross-check the deterministic Heun
path against ``diffrax.Heun``.

**Divergence is data.** Every simulator returns a boolean ``diverged`` (a state left
``|x| <= bound`` or turned non-finite) and, where steps are counted, ``diverged_at`` (the first step
index k >= 1 whose result diverged; -1 if none). A diverged path freezes at its last finite state,
so its other outputs stay finite; statistics are taken over the finite paths only, with the number
of diverged paths reported beside them.

**Validation.** Public functions check their concrete arguments with :mod:`theory.validate`
(``ValueError``/``TypeError`` naming the parameter); values that arrive traced (inside ``jit``/``vmap``)
were validated where the sweep was built.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

import sims  # noqa: F401  (float64)
from sims.sweep import diverged as _beyond, run_grid
from sims.rng import words
from theory.validate import array, check_bytes, choice, integer, key as _key, real, traceable as _traceable

__all__ = [
    "PROBLEMS", "TOY_PROBLEMS", "NOISES", "COMPRESSORS", "ALGORITHMS", "SCHEDULES", "DRIFT_KINDS", "MLP_DIM",
    "Config", "mlp_data", "mlp_init", "loss_fn", "derivatives", "noise_scale", "sample_noise", "compress",
    "direction", "schedule_factor", "simulate", "paths", "drift", "sde_path", "coupled_weak_paths",
    "escape_paths", "descent_edge", "mean_sign_mc", "mean_sign_mc_many",
    "aggregate_samples", "SDE_METHODS", "SIGN_NOISES", "mean_sign_law", "sde_coefficients", "dcsgd_sde",
    "dsignsgd_sde", "sde_sweep",
]

PROBLEMS = ("quadratic", "quartic", "cosh2", "logcosh", "mlp")
TOY_PROBLEMS = PROBLEMS[:4]
NOISES = ("none", "gaussian", "student_t", "cauchy")
COMPRESSORS = ("none", "bernoulli", "rand_k")
ALGORITHMS = ("dsgd", "dcsgd", "dcsgd_normalized", "dsignsgd")
SCHEDULES = ("constant", "inv_sqrt")
DRIFT_KINDS = ("first_order", "second_order", "corrected")
ESCAPE_PROBLEMS = ("quadratic", "quartic", "cosh2")
_BOUND = 1e100
_MAX_BLOCK = 256  # random draws per block of at most this many steps (one key split per block)
_MAX_DRAWS = 2048  # ... and at most this many values per path and kind (memory: chunk x 16 KiB per kind)

# ----------------------------------------------------------------------------- validation helpers


def _traced(x: Any) -> bool:
    return isinstance(x, jax.core.Tracer)


def _num(name: str, x: Any, **kw) -> Any:
    """Validate a concrete real scalar (``theory.validate.real``); traced values pass through."""
    if _traced(x):
        return x
    if isinstance(x, (np.ndarray, jax.Array)) and np.ndim(x) == 0:
        x = np.asarray(x).item() if np.asarray(x).dtype.kind in "iuf" else x
    return real(name, x, **kw)


def _arr(name: str, x: Any, **kw) -> Any:
    """Validate a concrete real array (``theory.validate.array``); traced values pass through."""
    if _traced(x):
        return x
    return array(name, x, **kw)


def _grad_arg(name: str, x: Any) -> Any:
    """A gradient vector (shape ``(d,)``, real, finite); a tracer has its type and shape checked only."""
    return _traceable(name, x, ndim=1)


def _omega_arg(x: Any, n: int) -> None:
    """``omega``: a scalar or one value per agent (``(n,)``), each >= 0."""
    if _traced(x):
        _traceable("omega", x, ndim=(0, 1))
        shape = x.shape
    else:
        shape = array("omega", x, ndim=(0, 1), low=0.0).shape
    if shape not in ((), (n,)):
        raise ValueError(f"omega: expected a scalar or one value per agent (shape ({n},)), got shape {shape}")


def _prng(name: str, x: Any) -> Any:
    if _traced(x):
        return x
    return _key(name, x)


# ----------------------------------------------------------------------------- problems

_MLP_IN, _MLP_HIDDEN, _MLP_POINTS = 4, 8, 64
MLP_DIM = _MLP_IN * _MLP_HIDDEN + _MLP_HIDDEN + _MLP_HIDDEN + 1


def mlp_data(seed: int) -> tuple[np.ndarray, np.ndarray]:
    r"""Regression data for the MLP test problem: inputs :math:`X \sim \mathcal N(0, I_4)`, 64 points, targets
    :math:`y = \sum_{j\le3}\tanh(Xw)_j + 0.1\,\varepsilon` (a random tanh teacher). ``seed`` (an integer
    >= 0) is required: the same seed always gives the same data."""
    seed = integer("seed", seed, low=0)
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((_MLP_POINTS, _MLP_IN))
    w = rng.standard_normal((_MLP_IN, 3))
    y = np.tanh(X @ w).sum(axis=1) + 0.1 * rng.standard_normal(_MLP_POINTS)
    return X, y


_MLP_X, _MLP_Y = (jnp.asarray(a) for a in mlp_data(0))


def _mlp_loss(theta: jax.Array) -> jax.Array:
    i, h = _MLP_IN, _MLP_HIDDEN
    W1 = theta[: i * h].reshape(i, h)
    b1 = theta[i * h: i * h + h]
    w2 = theta[i * h + h: i * h + 2 * h]
    b2 = theta[-1]
    pred = jnp.tanh(_MLP_X @ W1 + b1) @ w2 + b2
    return 0.5 * jnp.mean((pred - _MLP_Y) ** 2)


@jax.jit
def _mlp_init(key: jax.Array, scale) -> jax.Array:
    k1, k2 = jax.random.split(key)
    w1 = jax.random.normal(k1, (_MLP_IN * _MLP_HIDDEN,)) * scale / math.sqrt(_MLP_IN)
    w2 = jax.random.normal(k2, (_MLP_HIDDEN,)) * scale / math.sqrt(_MLP_HIDDEN)
    return jnp.concatenate([w1, jnp.zeros(_MLP_HIDDEN), w2, jnp.zeros(1)])


def mlp_init(key: jax.Array, scale: float = 1.0) -> jax.Array:
    r"""Initial MLP parameters (flat vector of length :data:`MLP_DIM`): weights
    :math:`\mathcal N(0, \mathrm{scale}^2/\mathrm{fan\_in})`, biases 0; ``key`` a typed PRNG key."""
    _prng("key", key)
    scale = _num("scale", scale, low=0.0, low_open=True)
    return _mlp_init(key, jnp.asarray(scale, jnp.float64))


def _quadratic(x, lam):
    return 0.5 * jnp.sum(lam * x**2)


def _quartic(x, lam):
    return jnp.sum(x**4) / 4


def _cosh2(x, lam):
    return 2 * jnp.sum(jnp.cosh(x))


def _logcosh(x, lam):
    # log cosh x = |x| + log1p(exp(-2|x|)) - log 2, stable for large |x|
    return jnp.sum(jnp.abs(x) + jnp.log1p(jnp.exp(-2 * jnp.abs(x))) - jnp.log(2.0))


def _mlp(x, lam):
    return _mlp_loss(x)


_LOSSES = {"quadratic": _quadratic, "quartic": _quartic, "cosh2": _cosh2, "logcosh": _logcosh, "mlp": _mlp}


def loss_fn(problem: str) -> Callable[[jax.Array, jax.Array], jax.Array]:
    r"""``f(x, lam)`` summed over coordinates: quadratic :math:`\lambda x^2/2`, quartic :math:`x^4/4`,
    cosh2 :math:`2\cosh x`, logcosh :math:`\log\cosh x` (``lam`` used by the quadratic only), or the MLP
    (``x`` its :data:`MLP_DIM` parameters). The same function object every call (stable for ``jit``)."""
    return _LOSSES[choice("problem", problem, PROBLEMS)]


@jax.jit
def _derivatives(x, lam):
    # All four toy functions in one kernel: one compilation per shape of x serves every problem.
    out = {}
    for problem in TOY_PROBLEMS:
        f1 = jax.grad(lambda y, _f=_LOSSES[problem]: _f(y[None], lam))
        out[problem] = jax.vmap(lambda y, _g=f1: (_g(y), jax.grad(_g)(y)))(x)
    return out


def derivatives(problem: str, x, lam=1.0) -> tuple[jax.Array, jax.Array]:
    r""":math:`(f'(x_j), f''(x_j))` of a 1-D toy function at each entry of ``x`` by autodiff (``jax.grad``
    twice; independent of the sympy derivatives of :mod:`theory.sde`)."""
    choice("problem", problem, TOY_PROBLEMS)
    x = _arr("x", x, ndim=1)
    lam = _num("lam", lam, low=0.0, low_open=True)
    return _derivatives(jnp.asarray(x), lam)[problem]


# ----------------------------------------------------------------------------- noise and compressors

def noise_scale(grad: jax.Array, sigma0, sigma1) -> jax.Array:
    r"""Per-coordinate noise scale :math:`\sqrt{\sigma_0^2 + \sigma_1^2\|\nabla f\|^2}` (affine variance)."""
    grad = _grad_arg("grad", grad)
    _num("sigma0", sigma0, low=0.0)
    _num("sigma1", sigma1, low=0.0)
    return jnp.sqrt(sigma0**2 + sigma1**2 * jnp.sum(grad**2))


def sample_noise(key: jax.Array, kind: str, grad: jax.Array, sigma0, sigma1, n_agents: int,
                 nu: float = 3.0, *, max_bytes=None) -> jax.Array:
    """Noise of each agent, shape ``(n_agents, d)``: scale times a standard Gaussian / Student-t / Cauchy draw.

    ``max_bytes``: the allocation limit (:func:`theory.validate.byte_limit`) for the draw (a Student-t draw with an
    integer ``nu <= 30`` holds ``nu`` more normal arrays of that shape).
    """
    choice("kind", kind, NOISES)
    n_agents = integer("n_agents", n_agents, low=1)
    nu = real("nu", nu, low=0.0, low_open=True)
    _prng("key", key)
    _num("sigma0", sigma0, low=0.0)
    _num("sigma1", sigma1, low=0.0)
    grad = _grad_arg("grad", grad)
    shape = (n_agents,) + jnp.shape(grad)
    arrays = int(nu) + 3 if kind == "student_t" and float(nu).is_integer() and nu <= 30 else 3
    check_bytes({"n_agents": n_agents, "grad": f"shape {jnp.shape(grad)}"}, 8 * arrays * math.prod(shape),
                what="the agents' draws", max_bytes=max_bytes)
    if kind == "none":
        return jnp.zeros(shape, jnp.result_type(grad, jnp.float64))
    return noise_scale(grad, sigma0, sigma1) * _standard(key, kind, shape, nu)


def _standard(key, kind: str, shape: tuple, nu: float) -> jax.Array:
    """Standard draws of the noise law ``kind`` (not ``none``) of the given shape."""
    if kind == "gaussian":
        return jax.random.normal(key, shape, jnp.float64)
    if kind == "student_t":
        if float(nu).is_integer() and nu <= 30:
            # t_nu = Z / sqrt(chi2_nu / nu) with chi2_nu a sum of nu squared normals: same law as
            # jax.random.t, without compiling the gamma rejection sampler (seconds on CPU).
            kz, kc = jax.random.split(key)
            chi2 = jnp.sum(jax.random.normal(kc, (int(nu),) + shape, jnp.float64) ** 2, axis=0)
            return jax.random.normal(kz, shape, jnp.float64) / jnp.sqrt(chi2 / nu)
        return jax.random.t(key, nu, shape, jnp.float64)
    return jax.random.cauchy(key, shape, jnp.float64)


def compress(key: jax.Array, kind: str, v: jax.Array, omega) -> jax.Array:
    r"""Unbiased compression of each agent's message ``v`` (``(N, d)``) with variances ``omega`` (``(N,)``).

    ``bernoulli``: keep each coordinate with probability :math:`q = 1/(1+\omega)`, scale by :math:`1/q`.
    ``rand_k``: keep :math:`k = \max(1, \mathrm{round}(d/(1+\omega)))` coordinates chosen uniformly
    without replacement (the k smallest of d uniform draws), scale by :math:`d/k` (exact variance
    :math:`d/k - 1`).
    """
    choice("kind", kind, COMPRESSORS)
    _prng("key", key)
    v = _traceable("v", v, ndim=2)
    n, d = v.shape
    _omega_arg(omega, n)
    omega = jnp.broadcast_to(jnp.asarray(omega, jnp.float64), (n,))
    if kind == "none":
        return v
    return _compress(_compression_draws(key, kind, v.shape), kind, v, omega)


def _bits(key: jax.Array, shape: tuple) -> jax.Array:
    r"""Uniform 32-bit integers (:func:`sims.rng.words`): :math:`P(b < t\,2^{32}) = \lceil t\,2^{32}\rceil/2^{32}`, a
    Bernoulli(t) to within :math:`2^{-32}` from one 32-bit word (a float64 uniform costs two)."""
    return words(key, shape)


def _below(bits: jax.Array, t) -> jax.Array:
    r"""``bits < t 2^32``, exactly: against the integer :math:`\lceil t\,2^{32}\rceil` in 64 bits (t = 1 keeps every
    draw). Zero-extending the words is one vector instruction; converting them to float64 is not, on CPUs without
    AVX-512, and was a third of a compressed step's cost."""
    return bits.astype(jnp.uint64) < jnp.ceil(t * 2.0**32).astype(jnp.uint64)


def _compression_draws(key: jax.Array, kind: str, shape: tuple) -> jax.Array:
    """32-bit words for ``bernoulli`` masks; float64 uniforms for ``rand_k`` (ranked, where ties must not occur)."""
    return _bits(key, shape) if kind == "bernoulli" else jax.random.uniform(key, shape, jnp.float64)


def _compress(u: jax.Array, kind: str, v: jax.Array, omega: jax.Array) -> jax.Array:
    """:func:`compress` from its draws ``u`` (:func:`_compression_draws`, the shape of ``v``), ``kind`` not ``none``."""
    d = v.shape[-1]
    if kind == "bernoulli":
        q = 1.0 / (1.0 + omega)
        return jnp.where(_below(u, q[:, None]), v / q[:, None], 0.0)
    k = jnp.clip(jnp.round(d / (1.0 + omega)), 1, d)
    kth = jnp.take_along_axis(jnp.sort(u, axis=1), (k.astype(int) - 1)[:, None], axis=1)
    return jnp.where(u <= kth, v * (d / k)[:, None], 0.0)


def schedule_factor(schedule: str, k) -> jax.Array:
    r""":math:`\eta_k`: 1 (``constant``) or :math:`1/\sqrt{k+1}` (``inv_sqrt``) at step index ``k`` (from 0)."""
    choice("schedule", schedule, SCHEDULES)
    _num("k", k, low=0.0, high=2.0**63, high_open=True)  # a step index is an int64 (JAX with x64)
    if not _traced(k) and not float(np.asarray(k)).is_integer():
        raise ValueError(f"k: expected a whole step index (0, 1, 2, ...), got {k!r}")
    if schedule == "constant":
        return jnp.ones((), jnp.float64)
    return 1.0 / jnp.sqrt(k + 1.0)


# ----------------------------------------------------------------------------- configuration

@dataclass(frozen=True)
class Config:
    """Static part of a run (one compilation per distinct Config); traced values go in the grid.

    ``bound``: a state with an entry beyond it in absolute value (or a non-finite loss) is diverged.
    """

    problem: str = "quartic"
    algo: str = "dcsgd"
    n_agents: int = 4
    compressor: str = "bernoulli"
    noise: str = "gaussian"
    nu: float = 3.0
    schedule: str = "constant"
    n_steps: int = 1000
    n_record: int = 10
    bound: float = _BOUND

    def __post_init__(self) -> None:
        choice("problem", self.problem, PROBLEMS)
        choice("algo", self.algo, ALGORITHMS)
        integer("n_agents", self.n_agents, low=1)
        choice("compressor", self.compressor, COMPRESSORS)
        choice("noise", self.noise, NOISES)
        real("nu", self.nu, low=0.0, low_open=True)
        choice("schedule", self.schedule, SCHEDULES)
        integer("n_steps", self.n_steps, low=1)
        integer("n_record", self.n_record, low=1)
        if self.n_steps % self.n_record:
            raise ValueError(f"n_record: must divide n_steps={self.n_steps}, got {self.n_record}")
        real("bound", self.bound, low=0.0, low_open=True)


_DEFAULTS = {"lam": 1.0, "omega": 0.0, "sigma0": 0.0, "sigma1": 0.0, "L0": 1.0, "L1": 1.0, "normalized": 0.0}
_LOW = {"lam": (0.0, True), "omega": (0.0, False), "sigma0": (0.0, False), "sigma1": (0.0, False),
        "L0": (0.0, False), "L1": (0.0, False), "normalized": (0.0, False)}


def direction(key: jax.Array, cfg: Config, grad: jax.Array, omega, sigma0, sigma1) -> jax.Array:
    """The agent-averaged update direction of ``cfg.algo`` at true gradient ``grad`` (one draw)."""
    if not isinstance(cfg, Config):
        raise TypeError(f"cfg: expected a sims.sde.Config, got {type(cfg).__name__}")
    key = _prng("key", key)
    grad = _grad_arg("grad", grad)
    _omega_arg(omega, cfg.n_agents)
    _num("sigma0", sigma0, low=0.0)
    _num("sigma1", sigma1, low=0.0)
    omega = jnp.broadcast_to(jnp.asarray(omega, jnp.float64), (cfg.n_agents,))
    return _direction(cfg, grad, omega, sigma0, sigma1, *_draws(key, cfg, (), jnp.shape(grad)[0]))


def _draws(key: jax.Array, cfg: Config, lead: tuple, d: int) -> tuple:
    r"""The random inputs of ``lead`` steps (time-major) of ``cfg.algo`` with :math:`N` agents in :math:`d` coordinates:
    standard noise values :math:`z` (the DCSGD family, unless ``noise="none"``) and the draws :math:`u` of a sign step's
    Bernoulli or of the compressor (:func:`_bits`, :func:`_compression_draws`), of shape ``lead + (N, d)``, or
    ``None`` where the algorithm needs none. Gaussian and Cauchy noise are stable laws, so :func:`_direction` needs
    one value per coordinate (shape ``lead + (1, d)``) instead of one per agent."""
    k_noise, k_comp = jax.random.split(key)
    shape = lead + (cfg.n_agents, d)
    if cfg.algo == "dsignsgd":
        return None, None if cfg.noise == "none" else _bits(k_noise, shape)
    agents = 1 if cfg.noise in _STABLE else cfg.n_agents
    z = None if cfg.noise == "none" else _standard(k_noise, cfg.noise, lead + (agents, d), cfg.nu)
    compresses = cfg.algo in ("dcsgd", "dcsgd_normalized") and cfg.compressor != "none"
    return z, _compression_draws(k_comp, cfg.compressor, shape) if compresses else None


# noise laws whose weighted sums of independent copies are one copy: sum_i c_i Z_i = (sum_i c_i^p)^(1/p) Z (p = 2
# Gaussian, p = 1 Cauchy, weights c_i >= 0)
_STABLE = {"gaussian": 2, "cauchy": 1}


def _direction(cfg: Config, grad, omega, sigma0, sigma1, z, u) -> jax.Array:
    r""":func:`direction` from the draws :func:`_draws` made for one step.

    Agent :math:`i` sends :math:`c_{ij}(g_j + s Z_{ij})` with compression weights :math:`c_{ij}` (:math:`1/q_i` or 0 for
    ``bernoulli``, :math:`d/k_i` or 0 for ``rand_k``, 1 for ``none``); the mean over agents is
    :math:`\bar c_j g_j + \frac sN \sum_i c_{ij} Z_{ij}`. For a stable noise law the sum is, exactly in law given the
    weights, :math:`(\sum_i c_{ij}^p)^{1/p} Z_j` with one draw :math:`Z_j` per coordinate (p = 2 Gaussian, 1 Cauchy):
    one noise value per coordinate and step instead of N."""
    if cfg.algo == "dsignsgd":
        return _sign_direction(u, cfg, grad, sigma0, sigma1)
    ones = jnp.ones((cfg.n_agents,) + jnp.shape(grad), jnp.result_type(grad, jnp.float64))
    c = ones if u is None else _compress(u, cfg.compressor, ones, omega)
    step = jnp.mean(c, axis=0) * grad
    if z is None:
        return step
    s = noise_scale(grad, sigma0, sigma1)
    if cfg.noise in _STABLE:
        p = _STABLE[cfg.noise]
        weight = jnp.sqrt(jnp.sum(c * c, axis=0)) if p == 2 else jnp.sum(c, axis=0)
        return step + s * weight * z[0] / cfg.n_agents
    return step + s * jnp.mean(c * z, axis=0)


def _sign_direction(u, cfg: Config, grad, sigma0, sigma1):
    r"""Mean of N agents' :math:`\mathrm{sign}(g_j + sZ_{ij})`, drawn as the sign it is: :math:`+1` with probability
    :math:`F(g_j/s)` (F the CDF of the standard noise law), from the 32-bit words ``u`` (:func:`_bits`), one per agent
    and coordinate.

    Exact in law for any symmetric law, any real :math:`\nu` (Student-t through the incomplete beta function),
    with no noise variate drawn at all; :math:`s = 0` (or ``noise="none"``) gives :math:`\mathrm{sign}(g_j)`."""
    if cfg.noise == "none":
        return jnp.sign(grad)
    s = noise_scale(grad, sigma0, sigma1)
    safe = jnp.where(s > 0, s, 1.0)
    p = 0.5 * (1.0 + _mean_sign(grad / safe, cfg.noise, cfg.nu))
    signs = jnp.where(_below(u, p[None, :]), 1.0, -1.0)
    return jnp.where(s > 0, jnp.mean(signs, axis=0), jnp.sign(grad))


def _simulate(key, x0, eta, cfg: Config, params: dict) -> dict[str, jax.Array]:
    p = {**_DEFAULTS, **params}
    f = loss_fn(cfg.problem)
    grad_f = jax.grad(f)
    x0 = jnp.atleast_1d(jnp.asarray(x0, jnp.float64))
    d = x0.shape[0]
    omega = jnp.broadcast_to(jnp.asarray(p["omega"], jnp.float64), (cfg.n_agents,))
    # The prescription's compression/noise factor 1 + (mean omega + d(sigma1^2 mean omega + sigma1^2))/N.
    factor = 1.0 + (jnp.mean(omega) + d * (p["sigma1"] ** 2 * jnp.mean(omega) + p["sigma1"] ** 2)) / cfg.n_agents

    # noise for a block of steps in one call (time-major), one key split per block; blocks divide the recording
    # interval and hold at most _MAX_DRAWS values per path and kind
    per_record = cfg.n_steps // cfg.n_record
    block = _block_size(per_record, max(1, _MAX_DRAWS // (cfg.n_agents * d)))
    n_blocks = per_record // block

    def step(carry, inputs):
        x, bad, at = carry
        k, z, u = inputs
        g = grad_f(x, p["lam"])
        eta_k = eta * schedule_factor(cfg.schedule, k)
        if cfg.algo in ("dcsgd", "dcsgd_normalized"):
            on = (p["normalized"] > 0) | (cfg.algo == "dcsgd_normalized")
            eta_k = jnp.where(on, eta_k / ((p["L0"] + p["L1"] * jnp.linalg.norm(g)) * factor), eta_k)
        x_new = x - eta_k * _direction(cfg, g, omega, p["sigma0"], p["sigma1"], z, u)
        now_bad = _beyond(x_new[None], cfg.bound)[0] | ~jnp.isfinite(f(x_new, p["lam"]))
        at = jnp.where(bad | ~now_bad, at, k + 1)
        bad = bad | now_bad
        x = jnp.where(bad, x, x_new)
        return (x, bad, at), None

    def run_block(carry, inputs):
        k_block, k0 = inputs
        z, u = _draws(k_block, cfg, (block,), d)
        carry, _ = lax.scan(step, carry, (k0 + jnp.arange(block), z, u))
        return carry, None

    def record(carry, inputs):
        k_rec, r = inputs
        starts = r * per_record + block * jnp.arange(n_blocks)
        carry, _ = lax.scan(run_block, carry, (jax.random.split(k_rec, n_blocks), starts))
        return carry, f(carry[0], p["lam"])

    init = (x0, jnp.zeros((), bool), jnp.asarray(-1))
    (x, bad, at), losses = lax.scan(record, init, (jax.random.split(key, cfg.n_record), jnp.arange(cfg.n_record)))
    return {"loss": losses, "x": x, "diverged": bad, "diverged_at": at, "loss0": f(x0, p["lam"])}


_simulate_jit = jax.jit(_simulate, static_argnames=("cfg",))


def _check_params(params: dict, where: str) -> None:
    unknown = set(params) - set(_DEFAULTS)
    if unknown:
        raise TypeError(f"{where}: unknown names {sorted(unknown)}; allowed {sorted(_DEFAULTS)}")


def simulate(key: jax.Array, x0, eta, cfg: Config, **params) -> dict[str, jax.Array]:
    r"""One path of ``cfg.algo`` from ``x0`` with base step ``eta`` (jit-compiled per ``cfg``).

    ``params``: ``lam`` (quadratic curvature), ``omega`` (scalar or per agent), ``sigma0``, ``sigma1``,
    ``L0``, ``L1`` (normalization) and ``normalized`` (> 0 turns ``dcsgd`` into ``dcsgd_normalized``
    inside one compilation, so constant and normalized runs can share a grid).

    Returns ``loss`` at ``cfg.n_record`` evenly spaced checkpoints (frozen at the last finite state once
    the path diverges), ``x`` (final state), ``loss0``, ``diverged`` and ``diverged_at`` (first diverged
    step, -1 if none).
    """
    if not isinstance(cfg, Config):
        raise TypeError(f"cfg: expected a sims.sde.Config, got {type(cfg).__name__}")
    _prng("key", key)
    _arr("x0", x0, ndim=(0, 1))
    _num("eta", eta, low=0.0, low_open=True)
    _check_params(params, "params")
    for name, value in params.items():
        low, open_ = _LOW[name]
        if name == "omega":
            _omega_arg(value, cfg.n_agents)
        else:
            _num(name, value, low=low, low_open=open_)
    # Every parameter is passed (defaults filled in) so that calls with different keyword sets share one compilation.
    typed = {k: jnp.asarray(params.get(k, v), jnp.float64) for k, v in _DEFAULTS.items()}
    return _simulate_jit(key, jnp.asarray(x0, jnp.float64), jnp.asarray(eta, jnp.float64), cfg, typed)


def _path_point(pt, cfg):
    return _simulate(pt["key"], pt["x0"], pt["eta"], cfg, {k: v for k, v in pt.items() if k not in ("key", "x0", "eta")})


def paths(cfg: Config, grid: dict[str, Any], *, chunk_size: int = 512, progress: bool | None = None,
          max_bytes=None) -> dict[str, np.ndarray]:
    """:func:`simulate` at every point of ``grid`` (``key``, ``x0``, ``eta`` and any ``params``, leading axis = runs),
    through :func:`sims.sweep.run_grid` (one compilation per ``cfg`` and grid shapes). ``max_bytes``: the allocation
    limit (:func:`theory.validate.byte_limit`) for every run's ``cfg.n_record`` records and a chunk's block draws.

    ``chunk_size`` (runs per compiled call) changes no path (each run draws from its own key): 512 keeps a chunk's
    block draws in the CPU's cache (DCSGD on 20,000 paths: 36 % less CPU time than chunks of 4,096, bit-identical)."""
    if not isinstance(cfg, Config):
        raise TypeError(f"cfg: expected a sims.sde.Config, got {type(cfg).__name__}")
    if not isinstance(grid, dict):
        raise TypeError(f"grid: expected a dict of arrays, got {type(grid).__name__}")
    for name in ("key", "x0", "eta"):
        if name not in grid:
            raise ValueError(f"grid: missing required entry {name!r}; has {sorted(grid)}")
    unknown = set(grid) - {"key", "x0", "eta"} - set(_DEFAULTS)
    if unknown:
        raise ValueError(f"grid: unknown entries {sorted(unknown)}; allowed key, x0, eta, {sorted(_DEFAULTS)}")
    _prng("grid['key']", grid["key"])
    _arr("grid['x0']", grid["x0"], ndim=(1, 2))
    _arr("grid['eta']", grid["eta"], ndim=1, low=0.0, low_open=True)
    for name in set(grid) & set(_DEFAULTS):
        low, open_ = _LOW[name]
        _arr(f"grid[{name!r}]", grid[name], ndim=(1, 2), low=low, low_open=open_)
    chunk_size = integer("chunk_size", chunk_size, low=1)
    runs = int(np.shape(grid["eta"])[0])
    d = int(np.shape(grid["x0"])[-1]) if np.ndim(grid["x0"]) == 2 else 1
    check_bytes({"cfg.n_record": cfg.n_record, "grid": f"{runs} runs", "chunk_size": chunk_size},
                2 * 3 * 8 * runs * cfg.n_record * (d + 1) + 3 * 8 * min(chunk_size, runs) * _MAX_DRAWS,
                what="every run's records and a chunk's block draws", max_bytes=max_bytes)
    typed = {k: (v if k == "key" else np.asarray(v, np.float64)) for k, v in grid.items()}
    # XLA's loop fusions: 54 against 75 CPU-ns per DCSGD path-step on a CPU (interleaved in one process)
    return run_grid(_path_point, typed, static={"cfg": cfg}, chunk_size=chunk_size, progress=progress,
                    desc=f"{cfg.algo}/{cfg.problem}", loop_fusions=True)


# ----------------------------------------------------------------------------- modified equations

_DRIFT_COEF = {"first_order": 0.0, "second_order": -1.0, "corrected": 1.0}


def _drift_coef(problem: str, coef, x: jax.Array, eta, lam) -> jax.Array:
    grad_f = jax.grad(loss_fn(problem))
    g, hg = jax.jvp(lambda y: grad_f(y, lam), (x,), (grad_f(x, lam),))
    return -g + coef * eta / 2 * hg


def drift(problem: str, kind: str, x: jax.Array, eta, lam=1.0) -> jax.Array:
    r"""Drift :math:`-\nabla f + \kappa\tfrac\eta2\nabla^2 f\nabla f`, :math:`\kappa = 0, -1, +1` for
    ``first_order``, ``second_order``, ``corrected``; ``jax.grad`` and a ``jax.jvp`` Hessian-vector product."""
    choice("problem", problem, PROBLEMS)
    choice("kind", kind, DRIFT_KINDS)
    _arr("x", x, ndim=1)
    _num("eta", eta, low=0.0, low_open=True)
    _num("lam", lam, low=0.0, low_open=True)
    x = jnp.asarray(x, jnp.float64)
    if problem == "mlp":
        return _drift_mlp(_DRIFT_COEF[kind], x, eta, lam)
    return _drift_toy(TOY_PROBLEMS.index(problem), _DRIFT_COEF[kind], x, eta, lam)


@jax.jit
def _drift_toy(index, coef, x, eta, lam):
    # the four toy problems behind one switch: one compilation per shape of x serves them all
    return lax.switch(index, [partial(_drift_coef, p) for p in TOY_PROBLEMS], coef, x, eta, lam)


_drift_mlp = jax.jit(partial(_drift_coef, "mlp"))


def _heun_or_em(problem, coef, x, eta, lam, dt, dw, sigma0, sigma1, n_agents, scheme):
    def diff(y):
        return jnp.sqrt(eta / n_agents) * jnp.sqrt(sigma0**2 + sigma1**2 * jnp.sum(jax.grad(loss_fn(problem))(y, lam) ** 2))

    b = _drift_coef(problem, coef, x, eta, lam)
    if scheme == "euler":
        return x + b * dt + diff(x) * dw
    pred = x + b * dt + diff(x) * dw
    return x + 0.5 * (b + _drift_coef(problem, coef, pred, eta, lam)) * dt + diff(x) * dw


def _sde_path(key, x0, eta, problem, coef, dt, n_steps, lam, sigma0, sigma1, n_agents, scheme):
    x0 = jnp.atleast_1d(jnp.asarray(x0, jnp.float64))
    dws = jax.random.normal(key, (n_steps,) + x0.shape) * jnp.sqrt(dt)

    def step(carry, inp):
        k, dw = inp
        x, bad, at = carry
        x_new = _heun_or_em(problem, coef, x, eta, lam, dt, dw, sigma0, sigma1, n_agents, scheme)
        now = _beyond(x_new[None], _BOUND)[0]
        at = jnp.where(bad | ~now, at, k + 1)
        bad = bad | now
        return (jnp.where(bad, x, x_new), bad, at), None

    init = (x0, jnp.zeros((), bool), jnp.asarray(-1))
    (x, bad, at), _ = lax.scan(step, init, (jnp.arange(n_steps), dws))
    return {"x": x, "diverged": bad, "diverged_at": at, "loss": loss_fn(problem)(x, lam)}


_sde_path_jit = jax.jit(_sde_path, static_argnames=("problem", "n_steps", "n_agents", "scheme"))


def sde_path(key: jax.Array, x0, eta, *, problem: str, kind: str, dt, n_steps: int, lam=1.0, sigma0=0.0,
             sigma1=0.0, n_agents: int = 1, scheme: str = "heun", max_bytes=None) -> dict[str, jax.Array]:
    r"""One path of :math:`dX = b(X)dt + \sqrt{\eta/N}\,s(\nabla f(X))\,dW` over ``n_steps`` steps of ``dt > 0``.

    ``scheme="heun"`` (weak order 2) needs additive noise (``sigma1 = 0``); ``"euler"`` is Euler-Maruyama.
    Returns the final state ``x``, its ``loss``, ``diverged`` and ``diverged_at`` (first step whose
    state left :math:`|x| \le 10^{100}`, -1 if none; the path freezes there). ``max_bytes``: the allocation limit
    (:func:`theory.validate.byte_limit`) for the Brownian increments, drawn for the whole path at once.
    """
    _prng("key", key)
    choice("problem", problem, PROBLEMS)
    choice("kind", kind, DRIFT_KINDS)
    choice("scheme", scheme, ("heun", "euler"))
    _arr("x0", x0, ndim=(0, 1))
    _num("eta", eta, low=0.0, low_open=True)
    _num("dt", dt, low=0.0, low_open=True)
    n_steps = integer("n_steps", n_steps, low=1)
    check_bytes({"n_steps": n_steps, "x0": f"size {np.size(x0)}"}, 2 * 8 * n_steps * max(np.size(x0), 1),
                what="the path's Brownian increments", max_bytes=max_bytes)
    _num("lam", lam, low=0.0, low_open=True)
    _num("sigma0", sigma0, low=0.0)
    _num("sigma1", sigma1, low=0.0)
    n_agents = integer("n_agents", n_agents, low=1)
    if scheme == "heun" and not _traced(sigma1) and float(sigma1) != 0:
        raise ValueError(f"sigma1: scheme='heun' needs additive noise (sigma1=0), got {sigma1}; use scheme='euler'")
    return _sde_path_jit(key, x0, eta, problem, _DRIFT_COEF[kind], dt, n_steps, lam, sigma0, sigma1, n_agents, scheme)


def _coupled(key, x0, eta, problem, T, max_steps, substeps, lam, sigma0, n_agents):
    x0 = jnp.atleast_1d(jnp.asarray(x0, jnp.float64))
    n_active = jnp.round(T / eta)
    dt = eta / substeps
    f = loss_fn(problem)
    grad_f = jax.grad(f)
    dws = jax.random.normal(key, (max_steps, substeps) + x0.shape) * jnp.sqrt(dt)
    coefs = jnp.asarray([_DRIFT_COEF[k] for k in DRIFT_KINDS])

    def step(carry, inp):
        k, dw_k = inp
        x, xs, bad, at = carry
        # Minus sign: the SDE adds +diffusion*dW while SGD subtracts eta*noise; the law is symmetric.
        noise = -sigma0 / jnp.sqrt(n_agents) * jnp.sum(dw_k, axis=0) / jnp.sqrt(eta)
        live = (k < n_active) & ~bad
        x_new = x - eta * (grad_f(x, lam) + noise)
        # The three drifts differ only in the coefficient of the HVP: one vmapped integrator, one trace.
        Y = jax.vmap(lambda c, X: lax.fori_loop(0, substeps, lambda j, X: _heun_or_em(
            problem, c, X, eta, lam, dt, dw_k[j], sigma0, 0.0, n_agents, "heun"), X))(coefs, xs)
        now = live & (_beyond(x_new[None], _BOUND)[0] | _beyond(Y.reshape(1, -1), _BOUND)[0])
        at = jnp.where(now, k + 1, at)
        bad = bad | now
        keep = live & ~now
        return (jnp.where(keep, x_new, x), jnp.where(keep, Y, xs), bad, at), None

    init = (x0, jnp.stack([x0] * 3), jnp.zeros((), bool), jnp.asarray(-1))
    (x, xs, bad, at), _ = lax.scan(step, init, (jnp.arange(max_steps), dws))
    out = {"x": x, "loss": f(x, lam), "n_steps": n_active, "diverged": bad, "diverged_at": at}
    for kind, X in zip(DRIFT_KINDS, xs):
        out[f"X_{kind}"] = X
        out[f"loss_{kind}"] = f(X, lam)
    return out


_coupled_jit = jax.jit(_coupled, static_argnames=("problem", "max_steps", "substeps", "n_agents"))


def coupled_weak_paths(key: jax.Array, x0, eta, *, problem: str, T: float, max_steps: int, substeps: int,
                       lam=1.0, sigma0=0.0, n_agents: int = 1, max_bytes=None) -> dict[str, jax.Array]:
    r"""DSGD and the three SDEs on one shared Brownian path (additive Gaussian noise), horizon ``T``.

    The discrete algorithm takes :math:`K = \mathrm{round}(T/\eta)` steps (the scan runs ``max_steps >= K``
    and freezes the state after step K, so one compilation serves every step size). Each SDE takes
    ``substeps`` Heun steps of :math:`dt = \eta/m` per discrete step; the discrete algorithm's
    agent-averaged noise at step k is :math:`-\sigma_0 N^{-1/2}\sum_j \Delta W_{kj}/\sqrt\eta`, exactly
    :math:`\mathcal N(0, \sigma_0^2/N)` as for N independent Gaussian agents. The coupling leaves every
    expectation unchanged and removes most Monte Carlo noise from the differences.

    Returns the final states ``x`` (discrete) and ``X_<kind>``, their losses, ``n_steps`` (K),
    ``diverged`` (any of the four left :math:`|x| \le 10^{100}`; all four freeze at that step) and
    ``diverged_at``. ``max_bytes``: the allocation limit (:func:`theory.validate.byte_limit`) for the shared
    Brownian path, ``(max_steps, substeps, d)`` increments drawn at once.
    """
    _prng("key", key)
    choice("problem", problem, PROBLEMS)
    _arr("x0", x0, ndim=(0, 1))
    T = real("T", T, low=0.0, low_open=True)
    max_steps = integer("max_steps", max_steps, low=1)
    substeps = integer("substeps", substeps, low=1)
    check_bytes({"max_steps": max_steps, "substeps": substeps, "x0": f"size {np.size(x0)}"},
                2 * 8 * max_steps * substeps * max(np.size(x0), 1), what="the shared Brownian increments",
                max_bytes=max_bytes)
    n_agents = integer("n_agents", n_agents, low=1)
    if not _traced(eta):
        e = real("eta", eta, low=0.0, low_open=True)
        if round(T / e) > max_steps:
            raise ValueError(f"max_steps: T/eta = {T / e:g} steps do not fit in max_steps={max_steps}")
    _num("lam", lam, low=0.0, low_open=True)
    _num("sigma0", sigma0, low=0.0)
    return _coupled_jit(key, x0, eta, problem, T, max_steps, substeps, lam, sigma0, n_agents)


def _escape(x0, eta, problem, lam, gd_steps, ode_steps, dt_scale):
    x0 = jnp.atleast_1d(jnp.asarray(x0, jnp.float64))
    f = loss_fn(problem)
    grad_f = jax.grad(f)
    # Separable toy problems: the Hessian diagonal is the HVP with the all-ones vector.
    kappa = jnp.max(jax.jvp(lambda y: grad_f(y, lam), (x0,), (jnp.ones_like(x0),))[1])
    dt = dt_scale / (kappa * (1 + eta * kappa))
    n0, f0 = jnp.linalg.norm(x0), f(x0, lam)

    def gd_step(carry, _):
        x, bad = carry
        x_new = x - eta * grad_f(x, lam)
        bad = bad | _beyond(x_new[None], _BOUND)[0]
        return (jnp.where(bad, x, x_new), bad), None

    out = {}
    (x, bad), _ = lax.scan(gd_step, (x0, jnp.zeros((), bool)), None, length=gd_steps)
    out["gd_diverged"] = bad
    out["gd_grew"] = bad | (jnp.linalg.norm(x) > n0)
    out["gd_rate"] = jnp.where(bad, jnp.inf, (jnp.log(f(x, lam)) - jnp.log(f0)) / (gd_steps * eta))
    coefs = jnp.asarray([_DRIFT_COEF[k] for k in DRIFT_KINDS])
    rs = jax.vmap(lambda c: _sde_path(jax.random.key(0), x0, eta, problem, c, dt, ode_steps, lam, 0.0, 0.0, 1,
                                      "heun"))(coefs)
    for i, kind in enumerate(DRIFT_KINDS):
        bad, x = rs["diverged"][i], rs["x"][i]
        out[f"{kind}_diverged"] = bad
        out[f"{kind}_grew"] = bad | (jnp.linalg.norm(x) > n0)
        out[f"{kind}_rate"] = jnp.where(bad, jnp.inf, (jnp.log(rs["loss"][i]) - jnp.log(f0)) / (ode_steps * dt))
    return out


_escape_jit = jax.jit(_escape, static_argnames=("problem", "gd_steps", "ode_steps"))


def escape_paths(x0, eta, *, problem: str, lam=1.0, gd_steps: int = 400, ode_steps: int = 400,
                 dt_scale: float = 0.01, max_bytes=None) -> dict[str, jax.Array]:
    r"""Deterministic GD and the three modified ODEs (Heun, no noise) from ``x0`` at step ``eta``.

    The ODE step is :math:`dt = \mathrm{dt\_scale}/(\kappa(1+\eta\kappa))` with :math:`\kappa` the largest
    diagonal Hessian entry at :math:`x_0` (the fastest time scale of every drift there). Returns per
    method (``gd`` and :data:`DRIFT_KINDS`) ``<m>_grew`` (:math:`\|x\|` ended above :math:`\|x_0\|`, or the
    path diverged), ``<m>_diverged`` and ``<m>_rate``, the per-unit-time log-rate of f over the run
    (time :math:`k\eta` for GD; ``inf`` for a diverged path). ``max_bytes``: the allocation limit
    (:func:`theory.validate.byte_limit`) for the three ODE paths' (zero-noise) increments, ``ode_steps`` each.
    """
    choice("problem", problem, TOY_PROBLEMS)
    _arr("x0", x0, ndim=(0, 1), low=None)
    _num("eta", eta, low=0.0, low_open=True)
    _num("lam", lam, low=0.0, low_open=True)
    gd_steps = integer("gd_steps", gd_steps, low=1)
    ode_steps = integer("ode_steps", ode_steps, low=1)
    check_bytes({"ode_steps": ode_steps, "x0": f"size {np.size(x0)}"}, 3 * 2 * 8 * ode_steps * max(np.size(x0), 1),
                what="the three ODE paths' increments", max_bytes=max_bytes)
    _num("dt_scale", dt_scale, low=0.0, low_open=True)
    if not _traced(x0) and not np.any(np.asarray(x0) != 0):
        raise ValueError(f"x0: expected a nonzero start (the minimizer cannot grow), got {x0!r}")
    return _escape_jit(x0, eta, problem, lam, gd_steps, ode_steps, dt_scale)


def _escape_point(pt: dict, *, gd_steps: int, ode_steps: int, dt_scale: float = 0.01) -> dict[str, jax.Array]:
    """Per-run function for ``run_grid``: :func:`escape_paths` with the problem chosen by the traced index
    ``pt['problem']`` into ``("quadratic", "quartic", "cosh2")`` (one compilation for the three problems);
    ``pt`` also holds scalars ``x0``, ``eta`` and ``lam``."""
    integer("gd_steps", gd_steps, low=1)
    integer("ode_steps", ode_steps, low=1)
    real("dt_scale", dt_scale, low=0.0, low_open=True)
    branches = [partial(_escape_branch, problem=p, gd_steps=gd_steps, ode_steps=ode_steps, dt_scale=dt_scale)
                for p in ESCAPE_PROBLEMS]
    return lax.switch(pt["problem"], branches, pt["x0"], pt["eta"], pt["lam"])


def _escape_branch(x0, eta, lam, *, problem, gd_steps, ode_steps, dt_scale):
    return _escape(jnp.reshape(x0, (1,)), eta, problem, lam, gd_steps, ode_steps, dt_scale)


def _weak_point(pt: dict, *, problem: str, x0: float, T: float, max_steps: int, substeps: int,
               sigma0: float, n_agents: int = 1) -> dict[str, jax.Array]:
    """Per-run function for ``run_grid``: :func:`coupled_weak_paths` at ``pt['key']``, ``pt['eta']``."""
    choice("problem", problem, PROBLEMS)
    real("x0", x0)
    real("T", T, low=0.0, low_open=True)
    integer("max_steps", max_steps, low=1)
    integer("substeps", substeps, low=1)
    real("sigma0", sigma0, low=0.0)
    integer("n_agents", n_agents, low=1)
    return _coupled(pt["key"], jnp.full((1,), x0), pt["eta"], problem, T, max_steps, substeps, 1.0, sigma0, n_agents)


# ----------------------------------------------------------------------------- descent factor

@partial(jax.jit, static_argnames=("problem", "n_bisect"))
def _descent_edge(x, eta_unit, problem, lam, c_max, n_bisect):
    f = _LOSSES[problem]

    def one(x, e):
        g = jax.grad(lambda y: f(y[None], lam))(x)
        fx = f(x[None], lam)

        def halve(_, lohi):
            lo, hi = lohi
            mid = 0.5 * (lo + hi)
            down = f((x - mid * e * g)[None], lam) < fx
            return jnp.where(down, mid, lo), jnp.where(down, hi, mid)

        lo, _ = lax.fori_loop(0, n_bisect, halve, (jnp.zeros(()), jnp.asarray(c_max, jnp.float64)))
        return lo

    return jax.vmap(one)(x, eta_unit)


def descent_edge(x, eta_unit, *, problem: str, lam=1.0, c_max: float = 100.0, n_bisect: int = 60) -> jax.Array:
    r"""Largest :math:`c \in [0, c_{\max}]` with :math:`f(x - c\,\eta_{\mathrm{unit}} f'(x)) < f(x)`, per entry of ``x``.

    Bisection on the actual loss (``n_bisect`` halvings, resolution :math:`c_{\max}2^{-n}`); assumes the
    one-step decrease holds on an interval :math:`[0, c^\ast)` (true for the even convex toy functions,
    where it means :math:`|x^+| < |x|`). Returns :math:`c_{\max}` where no increase was found below it.
    """
    choice("problem", problem, TOY_PROBLEMS)
    x = _arr("x", x, ndim=1)
    eta_unit = _arr("eta_unit", eta_unit, ndim=1, low=0.0, low_open=True)
    if not _traced(x) and not _traced(eta_unit) and np.shape(x) != np.shape(eta_unit):
        raise ValueError(f"eta_unit: expected the shape of x {np.shape(x)}, got {np.shape(eta_unit)}")
    _num("lam", lam, low=0.0, low_open=True)
    c_max = real("c_max", c_max, low=0.0, low_open=True)
    n_bisect = integer("n_bisect", n_bisect, low=1, high=200)
    return _descent_edge(jnp.asarray(x), jnp.asarray(eta_unit), problem, lam, c_max, n_bisect)


# ----------------------------------------------------------------------------- Monte Carlo helpers

def _mean_sign_mc(key, grad, scale, noise, n, nu):
    g = jnp.atleast_1d(jnp.asarray(grad, jnp.float64))
    # sample_noise with sigma1 = 0 gives scale * zeta; the n "agents" are the n draws.
    s = jnp.sign(g[None, :] + sample_noise(key, noise, g, scale, 0.0, n, nu))
    return {"mean": s.mean(axis=0), "var": s.var(axis=0, ddof=1)}


@partial(jax.jit, static_argnames=("noise", "n", "nu"))
def _mean_sign_mc_jit(key, grad, scale, noise, n, nu):
    return _mean_sign_mc(key, grad, scale, noise, n, nu)


@partial(jax.jit, static_argnames=("noises", "n", "nu"))
def _mean_sign_mc_many_jit(keys, grad, scale, noises, n, nu):
    return {law: _mean_sign_mc(keys[i], grad, scale, law, n, nu) for i, law in enumerate(noises)}


def _sign_args(grad, scale, n, nu, laws: int = 1, max_bytes=None):
    _arr("grad", grad, ndim=(0, 1))
    _num("scale", scale, low=0.0, low_open=True)
    n = integer("n", n, low=2)
    nu = real("nu", nu, low=0.0, low_open=True)
    # per law: the draws (Student-t: nu more normal arrays at integer nu <= 30) and their signs, (n, d) each
    arrays = (int(nu) + 4 if float(nu).is_integer() and nu <= 30 else 4)
    check_bytes({"n": n, "grad": f"size {np.size(grad)}"}, 8 * laws * arrays * n * max(np.size(grad), 1),
                what="the draws and their signs", max_bytes=max_bytes)


def mean_sign_mc(key: jax.Array, grad, scale, noise: str, n: int, nu: float = 3.0, *,
                 max_bytes=None) -> dict[str, jax.Array]:
    r"""Monte Carlo mean and (unbiased) variance of :math:`\mathrm{sign}(g + \sigma Z)` from ``n`` draws per
    entry of ``grad`` (through :func:`sample_noise`; ``nu`` is used by ``student_t`` only). ``max_bytes``: the
    allocation limit (:func:`theory.validate.byte_limit`) for the ``(n, d)`` draws."""
    _prng("key", key)
    choice("noise", noise, NOISES[1:])
    _sign_args(grad, scale, n, nu, max_bytes=max_bytes)
    return _mean_sign_mc_jit(key, grad, scale, noise, n, float(nu))


def mean_sign_mc_many(keys: jax.Array, grad, scale, noises: tuple[str, ...], n: int,
                      nu: float = 3.0, *, max_bytes=None) -> dict[str, dict]:
    """:func:`mean_sign_mc` for several noise laws in one compilation, with exactly one key per law (``max_bytes``
    for all of them at once)."""
    _prng("keys", keys)
    if not isinstance(noises, tuple) or not noises:
        raise TypeError(f"noises: expected a non-empty tuple of noise laws, got {noises!r}")
    for law in noises:
        choice("noises", law, NOISES[1:])
    if not _traced(keys) and (jnp.ndim(keys) != 1 or keys.shape[0] != len(noises)):
        raise ValueError(f"keys: expected one key per law ({len(noises)}), got shape {jnp.shape(keys)}")
    _sign_args(grad, scale, n, nu, laws=len(noises), max_bytes=max_bytes)
    return _mean_sign_mc_many_jit(keys, grad, scale, noises, n, float(nu))


@partial(jax.jit, static_argnames=("cfg", "n"))
def _aggregate(key, cfg, grad, n, omega, sigma0, sigma1):
    g = jnp.atleast_1d(jnp.asarray(grad, jnp.float64))
    om = jnp.broadcast_to(jnp.asarray(omega, jnp.float64), (cfg.n_agents,))
    return jax.vmap(lambda k: direction(k, cfg, g, om, sigma0, sigma1))(jax.random.split(key, n))


def aggregate_samples(key: jax.Array, cfg: Config, grad, n: int, *, omega=0.0, sigma0=0.0, sigma1=0.0,
                      max_bytes=None) -> jax.Array:
    """``n`` independent draws of :func:`direction` at gradient ``grad`` (shape ``(n, d)``).

    ``max_bytes``: the allocation limit (:func:`theory.validate.byte_limit`) for the vmapped draws, every agent's
    noise and message for every sample.
    """
    _prng("key", key)
    if not isinstance(cfg, Config):
        raise TypeError(f"cfg: expected a sims.sde.Config, got {type(cfg).__name__}")
    _arr("grad", grad, ndim=(0, 1))
    n = integer("n", n, low=1)
    check_bytes({"n": n, "cfg.n_agents": cfg.n_agents, "grad": f"size {np.size(grad)}"},
                4 * 8 * n * cfg.n_agents * max(np.size(grad), 1), what="every sample's agent draws and messages",
                max_bytes=max_bytes)
    _omega_arg(omega, cfg.n_agents)
    _num("sigma0", sigma0, low=0.0)
    _num("sigma1", sigma1, low=0.0)
    return _aggregate(key, cfg, grad, n, omega, sigma0, sigma1)



# ----------------------------------------------------------------------------- SDEs of DCSGD and DSignSGD (any d)

SDE_METHODS = ("dcsgd", "dsignsgd")
SIGN_NOISES = ("gaussian", "student_t", "cauchy")
_SDE_DEFAULTS = {"lam": 1.0, "omega": 0.0, "sigma0": 0.0, "sigma1": 0.0, "n_agents": 1.0}


def _mean_sign(u: jax.Array, noise: str, nu) -> jax.Array:
    """:math:`2F(u) - 1` for the standard law ``noise`` (Student-t through the regularized incomplete beta)."""
    if noise == "gaussian":
        return jax.scipy.special.erf(u / math.sqrt(2.0))
    if noise == "cauchy":
        return 2.0 / math.pi * jnp.arctan(u)
    # F_nu(u) = 1 - I_{nu/(nu+u^2)}(nu/2, 1/2)/2 for u >= 0 (and symmetric), any real nu > 0
    return jnp.sign(u) * (1.0 - jax.scipy.special.betainc(nu / 2.0, 0.5, nu / (nu + u**2)))


def mean_sign_law(u, noise: str = "gaussian", nu: float | None = None) -> jax.Array:
    r"""JAX mean sign :math:`E\,\mathrm{sign}(u + Z) = 2F(u) - 1` of a standard noise law at ``u``:
    ``gaussian`` :math:`\mathrm{erf}(u/\sqrt2)`, ``cauchy`` :math:`\tfrac2\pi\arctan u`, ``student_t``
    :math:`\mathrm{sign}(u)(1 - I_{\nu/(\nu+u^2)}(\nu/2, 1/2))` for any real :math:`\nu > 0`."""
    noise = choice("noise", noise, SIGN_NOISES)
    nu = _nu(noise, nu)
    _arr("u", u, ndim=(0, 1))
    return _mean_sign(jnp.asarray(u, jnp.float64), noise, nu)


def _nu(noise: str, nu) -> float | None:
    if noise == "student_t":
        if nu is None:
            raise ValueError("nu: noise='student_t' needs the degrees of freedom nu > 0, got None")
        return real("nu", nu, low=0.0, low_open=True)
    if nu is not None:
        raise ValueError(f"nu: only noise='student_t' takes nu; got nu={nu!r} with noise={noise!r}")
    return None


def _coefficients(x, p, method, problem, noise, nu):
    """Mean update direction h(x) and the per-coordinate variance of one step's direction (before eta)."""
    g = jax.grad(loss_fn(problem))(x, p["lam"])
    s2 = p["sigma0"] ** 2 + p["sigma1"] ** 2 * jnp.sum(g**2)
    if method == "dcsgd":
        # agent i: omega_i (g_j + Z_ij)^2 compression variance plus s^2 noise variance, averaged over N agents
        return g, (p["omega"] * g**2 + (1.0 + p["omega"]) * s2) / p["n_agents"]
    s = jnp.sqrt(s2)
    safe = jnp.where(s > 0, s, 1.0)
    m = jnp.where(s > 0, _mean_sign(g / safe, noise, nu), jnp.sign(g))
    return m, (1.0 - m**2) / p["n_agents"]


def sde_coefficients(x, eta, *, method: str, problem: str = "quadratic", kind: str = "first_order",
                     noise: str = "gaussian", nu: float | None = None, lam=1.0, omega=0.0, sigma0=0.0, sigma1=0.0,
                     n_agents: int = 1) -> dict[str, jax.Array]:
    r"""Drift and diffusion variance of the SDE of ``method`` at the point ``x`` (shape ``(d,)``).

    ``dcsgd``: mean direction :math:`h = \nabla f`, step variance
    :math:`\Sigma_{jj} = [\bar\omega g_j^2 + (1+\bar\omega)s^2]/N` (Bernoulli compressors, noise of
    per-coordinate scale :math:`s^2 = \sigma_0^2 + \sigma_1^2\|\nabla f\|^2`, independent coordinates).
    ``dsignsgd``: :math:`h_j = 2F(g_j/s) - 1` for the noise law (erf, Student-t, arctan), variance
    :math:`(1 - h_j^2)/N`. Drift :math:`b = -h + \kappa\tfrac\eta2 J_h h` with :math:`\kappa = 0, -1, +1` for
    ``first_order``, ``second_order``, ``corrected`` (:math:`J_h h` by ``jax.jvp``; for DCSGD it is
    :math:`\nabla^2 f\nabla f`). Returns ``drift`` and ``variance`` (the SDE's diffusion is
    :math:`\sqrt{\eta\Sigma}`).
    """
    method = choice("method", method, SDE_METHODS)
    p = _sde_params(method, problem, kind, noise, nu, lam, omega, sigma0, sigma1, n_agents)
    _arr("x", x, ndim=1)
    _num("eta", eta, low=0.0, low_open=True)
    nu = _nu(noise, nu) if method == "dsignsgd" else None
    return _coefficients_jit(jnp.asarray(x, jnp.float64), jnp.asarray(eta, jnp.float64), p, method, problem, noise, nu,
                             _DRIFT_COEF[kind])


def _drift_and_var(x, eta, p, coef, method, problem, noise, nu):
    h, var = _coefficients(x, p, method, problem, noise, nu)
    if isinstance(coef, float) and coef == 0.0:
        return -h, var  # static first-order drift: no Jacobian-vector product traced
    _, jh = jax.jvp(lambda y: _coefficients(y, p, method, problem, noise, nu)[0], (x,), (h,))
    return -h + coef * eta / 2 * jh, var


@partial(jax.jit, static_argnames=("method", "problem", "noise", "nu", "coef"))
def _coefficients_jit(x, eta, p, method, problem, noise, nu, coef):
    b, var = _drift_and_var(x, eta, p, coef, method, problem, noise, nu)
    return {"drift": b, "variance": var}


def _block_size(per_record: int, cap: int = _MAX_BLOCK) -> int:
    """The largest divisor of ``per_record`` that is at most ``min(cap, _MAX_BLOCK)`` (steps drawn per call)."""
    return max(b for b in range(1, min(per_record, cap, _MAX_BLOCK) + 1) if per_record % b == 0)


def _em(key, x0, eta, dt, p, coef, *, method, problem, noise, nu, n_steps, n_record):
    """Euler-Maruyama path; increments drawn per block of steps (time-major), the state checked every step."""
    x0 = jnp.atleast_1d(jnp.asarray(x0, jnp.float64))
    f = loss_fn(problem)
    per_record = n_steps // n_record
    block = _block_size(per_record)
    n_blocks = per_record // block
    sqdt = jnp.sqrt(dt)

    def step(carry, z):
        x, bad, at, k = carry
        b, var = _drift_and_var(x, eta, p, coef, method, problem, noise, nu)
        x_new = x + b * dt + jnp.sqrt(eta * var) * sqdt * z
        now = ~bad & (_beyond(x_new[None], _BOUND)[0] | ~jnp.isfinite(f(x_new, p["lam"])))
        at = jnp.where(now, k + 1, at)
        bad = bad | now
        return (jnp.where(bad, x, x_new), bad, at, k + 1), None

    def run_block(carry, k_block):
        z = jax.random.normal(k_block, (block,) + x0.shape, jnp.float64)
        carry, _ = lax.scan(step, carry, z)
        return carry, None

    def record(carry, k_rec):
        carry, _ = lax.scan(run_block, carry, jax.random.split(k_rec, n_blocks))
        return carry, f(carry[0], p["lam"])

    init = (x0, jnp.zeros((), bool), jnp.asarray(-1), jnp.asarray(0))
    (x, bad, at, _), losses = lax.scan(record, init, jax.random.split(key, n_record))
    return {"x": x, "loss": losses, "diverged": bad, "diverged_at": at}


_em_jit = jax.jit(_em, static_argnames=("coef", "method", "problem", "noise", "nu", "n_steps", "n_record"))


def _sde_params(method, problem, kind, noise, nu, lam, omega, sigma0, sigma1, n_agents) -> dict:
    choice("problem", problem, PROBLEMS)
    choice("kind", kind, DRIFT_KINDS)
    if method == "dsignsgd":
        choice("noise", noise, SIGN_NOISES)
        _nu(noise, nu)
    n_agents = integer("n_agents", n_agents, low=1)
    _num("lam", lam, low=0.0, low_open=True)
    _num("sigma0", sigma0, low=0.0)
    _num("sigma1", sigma1, low=0.0)
    om = _arr("omega", omega, ndim=(0, 1), low=0.0)
    if not _traced(om) and np.ndim(om) == 1 and np.shape(om)[0] != n_agents:
        raise ValueError(f"omega: expected a scalar or {n_agents} per-agent values, got shape {np.shape(om)}")
    # Only the agents' mean compression variance enters the SDE (the messages are averaged).
    return {"lam": jnp.asarray(lam, jnp.float64), "omega": jnp.mean(jnp.asarray(om, jnp.float64)),
            "sigma0": jnp.asarray(sigma0, jnp.float64), "sigma1": jnp.asarray(sigma1, jnp.float64),
            "n_agents": jnp.asarray(float(n_agents), jnp.float64)}


def _sde_common(key, x0, eta, dt, n_steps, n_record, max_bytes=None):
    _prng("key", key)
    _arr("x0", x0, ndim=(0, 1))
    _num("eta", eta, low=0.0, low_open=True)
    _num("dt", dt, low=0.0, low_open=True)
    n_steps = integer("n_steps", n_steps, low=1)
    n_record = integer("n_record", n_record, low=1)
    if n_steps % n_record:
        raise ValueError(f"n_record: must divide n_steps={n_steps}, got {n_record}")
    # per record: the loss and a split key (two words), and the increments of one block (at most _MAX_DRAWS)
    check_bytes({"n_record": n_record}, 3 * 8 * n_record + 2 * 8 * _MAX_DRAWS, what="the records and a block's draws",
                max_bytes=max_bytes)
    return n_steps, n_record


def dcsgd_sde(key: jax.Array, x0, eta, *, problem: str = "quadratic", kind: str = "corrected", dt, n_steps: int,
              n_record: int = 1, lam=1.0, omega=0.0, sigma0=0.0, sigma1=0.0, n_agents: int = 1,
              max_bytes=None) -> dict[str, jax.Array]:
    r"""One Euler-Maruyama path of the SDE of DCSGD (N agents, Bernoulli compressors, affine-variance noise):

    .. math:: dX = \Bigl(-\nabla f + \kappa\tfrac\eta2\nabla^2 f\nabla f\Bigr)dt
       + \sqrt{\eta/N}\,\mathrm{diag}\bigl(\bar\omega\,(\partial_j f)^2 + (1+\bar\omega)s^2\bigr)^{1/2} dW,

    :math:`s^2 = \sigma_0^2 + \sigma_1^2\|\nabla f\|^2`, :math:`\kappa` from ``kind`` (``corrected``: +1, the
    curvature-corrected drift; ``first_order``: 0; ``second_order``: -1). ``x0`` has shape ``(d,)`` (or is a
    scalar), ``omega`` is a scalar or one value per agent (their mean enters). ``n_steps`` steps of ``dt``;
    the loss is recorded every ``n_steps/n_record`` steps. Returns ``x`` (final state), ``loss``
    (``(n_record,)``), ``diverged`` and ``diverged_at`` (first step whose state left
    :math:`|x| \le 10^{100}` or whose loss overflowed; the path freezes there; -1 if none). ``max_bytes``: the
    allocation limit (:func:`theory.validate.byte_limit`) for the ``n_record`` records.
    """
    n_steps, n_record = _sde_common(key, x0, eta, dt, n_steps, n_record, max_bytes)
    p = _sde_params("dcsgd", problem, kind, "gaussian", None, lam, omega, sigma0, sigma1, n_agents)
    return _em_jit(key, x0, eta, dt, p, _DRIFT_COEF[kind], method="dcsgd", problem=problem, noise="gaussian", nu=None,
                   n_steps=n_steps, n_record=n_record)


def dsignsgd_sde(key: jax.Array, x0, eta, *, problem: str = "quadratic", noise: str = "gaussian",
                 nu: float | None = None, kind: str = "first_order", dt, n_steps: int, n_record: int = 1, lam=1.0,
                 sigma0=0.0, sigma1=0.0, n_agents: int = 1, max_bytes=None) -> dict[str, jax.Array]:
    r"""One Euler-Maruyama path of the SDE of DSignSGD under the noise law ``noise``:

    .. math:: dX = \Bigl(-m + \kappa\tfrac\eta2 J_m m\Bigr)dt + \sqrt{\eta/N}\,\mathrm{diag}(1 - m^2)^{1/2}dW,
       \qquad m_j = 2F\bigl(\partial_j f(X)/s\bigr) - 1,

    F the CDF of the standard ``gaussian`` (:math:`m = \mathrm{erf}(\cdot/\sqrt2)`), ``student_t`` with ``nu``
    degrees of freedom (any real :math:`\nu > 0`) or ``cauchy`` law, :math:`s^2 = \sigma_0^2 +
    \sigma_1^2\|\nabla f\|^2` (:math:`m = \mathrm{sign}\,\partial_j f` when :math:`s = 0`). ``kind="first_order"``
    (:math:`\kappa = 0`) is the first-order SignSGD SDE; the other kinds add the curvature term of the
    update map. Same shapes, recording, divergence rule and ``max_bytes`` as :func:`dcsgd_sde`.
    """
    n_steps, n_record = _sde_common(key, x0, eta, dt, n_steps, n_record, max_bytes)
    choice("noise", noise, SIGN_NOISES)
    nu = _nu(noise, nu)
    p = _sde_params("dsignsgd", problem, kind, noise, nu, lam, 0.0, sigma0, sigma1, n_agents)
    return _em_jit(key, x0, eta, dt, p, _DRIFT_COEF[kind], method="dsignsgd", problem=problem, noise=noise, nu=nu,
                   n_steps=n_steps, n_record=n_record)


_SWEEP_OPTIONAL = ("lam", "omega", "sigma0", "sigma1", "n_agents", "kind")


def _sde_point(pt, *, method, problem, noise, nu, coef, n_steps, n_record):
    p = {k: jnp.asarray(pt.get(k, v), jnp.float64) for k, v in _SDE_DEFAULTS.items()}
    if coef is None:  # the drift kind is data: an index into DRIFT_KINDS
        coef = jnp.asarray([_DRIFT_COEF[k] for k in DRIFT_KINDS])[pt["kind"]]
    return _em(pt["key"], pt["x0"], pt["eta"], pt["dt"], p, coef, method=method, problem=problem, noise=noise, nu=nu,
               n_steps=n_steps, n_record=n_record)


def sde_sweep(method: str, grid: dict[str, Any], *, problem: str = "quadratic", kind: str | None = "first_order",
              noise: str = "gaussian", nu: float | None = None, n_steps: int, n_record: int = 1,
              chunk_size: int = 4096, progress: bool | None = None, max_bytes=None) -> dict[str, np.ndarray]:
    r""":func:`dcsgd_sde` / :func:`dsignsgd_sde` (``method``) at every point of ``grid`` through
    :func:`sims.sweep.run_grid` (vmapped, one compilation per static configuration and grid shapes).

    ``grid`` needs ``key``, ``x0`` (``(n, d)``), ``eta`` and ``dt``; optional ``lam``, ``omega`` (the agents'
    mean compression variance, DCSGD only), ``sigma0``, ``sigma1``, ``n_agents`` (a number per run: in the
    SDE it only scales the diffusion) and ``kind`` (an integer index into :data:`DRIFT_KINDS`, with
    ``kind=None`` here, so that several drifts share one compilation). ``max_bytes``: the allocation limit
    (:func:`theory.validate.byte_limit`) for every run's records and a chunk's block draws.
    """
    method = choice("method", method, SDE_METHODS)
    choice("problem", problem, PROBLEMS)
    if method == "dsignsgd":
        choice("noise", noise, SIGN_NOISES)
        nu = _nu(noise, nu)
    else:
        noise, nu = "gaussian", None
    if not isinstance(grid, dict):
        raise TypeError(f"grid: expected a dict of arrays, got {type(grid).__name__}")
    for name in ("key", "x0", "eta", "dt"):
        if name not in grid:
            raise ValueError(f"grid: missing required entry {name!r}; has {sorted(grid)}")
    unknown = set(grid) - {"key", "x0", "eta", "dt"} - set(_SWEEP_OPTIONAL)
    if unknown:
        raise ValueError(f"grid: unknown entries {sorted(unknown)}; allowed key, x0, eta, dt, {list(_SWEEP_OPTIONAL)}")
    if method == "dsignsgd" and "omega" in grid:
        raise ValueError("grid: 'omega' (compression) is not an input of the DSignSGD SDE")
    if kind is None:
        if "kind" not in grid:
            raise ValueError("kind: kind=None reads the drift per run from grid['kind'], which is missing")
        ks = np.asarray(grid["kind"])
        if ks.dtype.kind not in "iu" or ks.ndim != 1 or np.any((ks < 0) | (ks >= len(DRIFT_KINDS))):
            raise ValueError(f"grid['kind']: expected integer indices into {DRIFT_KINDS}, got {ks!r}")
        coef = None
    else:
        choice("kind", kind, DRIFT_KINDS)
        if "kind" in grid:
            raise ValueError(f"kind: pass kind=None to read grid['kind'] (got kind={kind!r} as well)")
        coef = _DRIFT_COEF[kind]
    _prng("grid['key']", grid["key"])
    _arr("grid['x0']", grid["x0"], ndim=2)
    _arr("grid['eta']", grid["eta"], ndim=1, low=0.0)
    _arr("grid['dt']", grid["dt"], ndim=1, low=0.0, low_open=True)
    for name, low, open_ in (("lam", 0.0, True), ("omega", 0.0, False), ("sigma0", 0.0, False),
                             ("sigma1", 0.0, False), ("n_agents", 1.0, False)):
        if name in grid:
            _arr(f"grid[{name!r}]", grid[name], ndim=1, low=low, low_open=open_)
    n_steps = integer("n_steps", n_steps, low=1)
    n_record = integer("n_record", n_record, low=1)
    if n_steps % n_record:
        raise ValueError(f"n_record: must divide n_steps={n_steps}, got {n_record}")
    chunk_size = integer("chunk_size", chunk_size, low=1)
    runs, d = np.shape(grid["x0"])
    check_bytes({"n_record": n_record, "grid": f"{runs} runs", "chunk_size": chunk_size},
                2 * 3 * 8 * runs * n_record * (d + 1) + 2 * 8 * min(chunk_size, runs) * _MAX_DRAWS,
                what="every run's records and a chunk's block draws", max_bytes=max_bytes)
    typed = {k: (v if k in ("key", "kind") else np.asarray(v, np.float64)) for k, v in grid.items()}
    return run_grid(_sde_point, typed, static={"method": method, "problem": problem, "noise": noise, "nu": nu,
                                               "coef": coef, "n_steps": n_steps, "n_record": n_record},
                    chunk_size=chunk_size, progress=progress, desc=f"{method} SDE/{problem}")
