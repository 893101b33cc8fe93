r"""Argument validation shared by every public function of :mod:`theory` and :mod:`sims`.

Each helper raises ``TypeError`` (wrong type) or ``ValueError`` (wrong value) with a message that
names the parameter, shows the value and says what is allowed. Comparisons are NaN-proof: a
check is written so that NaN fails it (``not (x > 0)``), never so that NaN slips through
(``x <= 0`` is False for NaN). Booleans are not numbers here.
"""
from __future__ import annotations

import math
import operator
from typing import Any, Iterable

import numpy as np

__all__ = ["real", "integer", "array", "choice", "probability", "key", "traceable", "traceable_real", "is_tracer"]


def _show(x: Any) -> str:
    r = repr(x)
    return r if len(r) <= 60 else r[:57] + "..."


def real(name: str, x: Any, *, low: float | None = None, high: float | None = None, low_open: bool = False,
         high_open: bool = False, finite: bool = True) -> float:
    """A real scalar in ``[low, high]`` (``low_open``/``high_open`` exclude the ends); returns a float."""
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, float, np.integer, np.floating)):
        if isinstance(x, np.ndarray) and x.ndim == 0 and x.dtype.kind in "iuf":
            x = x.item()
        else:
            raise TypeError(f"{name}: expected a real number, got {type(x).__name__} {_show(x)}")
    v = float(x)
    if math.isnan(v) or (finite and math.isinf(v)):
        raise ValueError(f"{name}: expected a finite number, got {v}")
    if low is not None and not (v > low if low_open else v >= low):
        raise ValueError(f"{name}: expected a number {'>' if low_open else '>='} {low}, got {v}")
    if high is not None and not (v < high if high_open else v <= high):
        raise ValueError(f"{name}: expected a number {'<' if high_open else '<='} {high}, got {v}")
    return v


def integer(name: str, x: Any, *, low: int | None = None, high: int | None = None) -> int:
    """An integer (Python or NumPy, not bool) in ``[low, high]``; returns an int."""
    if isinstance(x, (bool, np.bool_)):
        raise TypeError(f"{name}: expected an integer, got bool {x!r}")
    try:
        v = operator.index(x)
    except TypeError:
        raise TypeError(f"{name}: expected an integer, got {type(x).__name__} {_show(x)}") from None
    if low is not None and v < low:
        raise ValueError(f"{name}: expected an integer >= {low}, got {v}")
    if high is not None and v > high:
        raise ValueError(f"{name}: expected an integer <= {high}, got {v}")
    return int(v)


def probability(name: str, x: Any, *, open_low: bool = False, open_high: bool = False) -> float:
    """A probability in [0, 1] (ends excluded on request)."""
    return real(name, x, low=0.0, high=1.0, low_open=open_low, high_open=open_high)


def array(name: str, x: Any, *, ndim: int | Iterable[int] | None = None, shape: tuple | None = None,
          low: float | None = None, high: float | None = None, low_open: bool = False, high_open: bool = False,
          finite: bool = True,
          nonempty: bool = True, dtype: Any = np.float64) -> np.ndarray:
    """A real array (copied to ``dtype``); ``shape`` entries that are None match any length."""
    if isinstance(x, (str, bytes)) or x is None:
        raise TypeError(f"{name}: expected an array of numbers, got {type(x).__name__} {_show(x)}")
    raw = np.asarray(x)
    if raw.dtype == bool or raw.dtype.kind not in "iuf":
        raise TypeError(f"{name}: expected an array of real numbers, got dtype {raw.dtype} ({_show(x)})")
    a = raw.astype(dtype)
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
        if a.ndim not in allowed:
            raise ValueError(f"{name}: expected {' or '.join(map(str, allowed))} dimension(s), got shape {a.shape}")
    if shape is not None:
        if a.ndim != len(shape) or any(s is not None and s != t for s, t in zip(shape, a.shape)):
            want = "(" + ", ".join("any" if s is None else str(s) for s in shape) + ")"
            raise ValueError(f"{name}: expected shape {want}, got {a.shape}")
    if nonempty and a.size == 0:
        raise ValueError(f"{name}: expected at least one value, got an empty array of shape {a.shape}")
    if finite and not np.all(np.isfinite(a)):
        raise ValueError(f"{name}: every value must be finite, got {_show(x)}")
    if low is not None and a.size and not np.all(a > low if low_open else a >= low):
        raise ValueError(f"{name}: every value must be {'>' if low_open else '>='} {low}, got min {np.nanmin(a):.6g}")
    if high is not None and a.size and not np.all(a < high if high_open else a <= high):
        raise ValueError(f"{name}: every value must be {'<' if high_open else '<='} {high}, got max {np.nanmax(a):.6g}")
    return a


def choice(name: str, x: Any, options: Iterable[Any]) -> Any:
    """One of ``options`` (compared with ``==``; strings are not silently lower-cased)."""
    opts = tuple(options)
    if not any(type(x) is type(o) and x == o for o in opts):
        raise ValueError(f"{name}: expected one of {opts}, got {_show(x)}")
    return x


def key(name: str, x: Any) -> Any:
    """A typed JAX PRNG key (``jax.random.key``), scalar or batched; raw uint32 keys are refused."""
    import jax

    if not (hasattr(x, "dtype") and jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key)):
        raise TypeError(f"{name}: expected a typed PRNG key from jax.random.key(seed), got {_show(x)}")
    return x


def is_tracer(x: Any) -> bool:
    """Whether ``x`` is a JAX tracer (an abstract value inside ``jit``/``vmap``/``grad``)."""
    import jax

    return isinstance(x, jax.core.Tracer)


def traceable(name: str, x: Any, *, ndim: int | Iterable[int] | None = None, shape: tuple | None = None,
              low: float | None = None, low_open: bool = False, finite: bool = True, nonempty: bool = True) -> Any:
    """An array argument of a function that is also called inside ``jit``/``vmap``/``grad``.

    Type and shape are checked in every case (they are static under tracing); values (finiteness,
    ``low``) only when ``x`` is concrete, since a tracer has none. A concrete value is returned as a
    float64 ``jax.Array`` (so the function computes in JAX), a tracer unchanged.
    """
    import jax.numpy as jnp

    if is_tracer(x):
        if x.dtype == bool or jnp.dtype(x.dtype).kind not in "iuf":
            raise TypeError(f"{name}: expected an array of real numbers, got dtype {x.dtype}")
        array(name, np.zeros(x.shape), ndim=ndim, shape=shape, nonempty=nonempty)  # shape checks on a stand-in
        return x
    if hasattr(x, "dtype") and hasattr(x, "shape") and not isinstance(x, np.ndarray):  # a concrete jax.Array
        x = np.asarray(x)
    return jnp.asarray(array(name, x, ndim=ndim, shape=shape, low=low, low_open=low_open, finite=finite,
                             nonempty=nonempty))


def traceable_real(name: str, x: Any, *, low: float | None = None, low_open: bool = False) -> Any:
    """A real scalar that may be a tracer (see :func:`traceable`); returned as given when traced."""
    if is_tracer(x):
        traceable(name, x, ndim=0)
        return x
    if hasattr(x, "dtype") and not isinstance(x, (np.ndarray, np.generic)):  # a concrete jax.Array
        x = np.asarray(x)
    return real(name, x, low=low, low_open=low_open)
