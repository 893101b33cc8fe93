r"""Argument validation shared by every public function of :mod:`theory` and :mod:`sims`.

Each helper raises ``TypeError`` (wrong type) or ``ValueError`` (wrong value) with a message that
names the parameter, shows the value and says what is allowed. Comparisons are NaN-proof: a
check is written so that NaN fails it (``not (x > 0)``), never so that NaN slips through
(``x <= 0`` is False for NaN). Booleans are not numbers here.
"""
from __future__ import annotations

import functools
import math
import operator
import os
import re
import warnings
from typing import Any, Callable, Iterable, Mapping

import numpy as np

__all__ = ["INT64_MAX", "INT64_MIN", "real", "integer", "integers", "array", "choice", "probability", "key", "traceable",
           "traceable_real", "is_tracer", "PSD_RTOL", "symmetric_psd", "finite_output", "one_per_row", "MAX_BYTES_ENV", "default_max_bytes", "byte_limit", "check_bytes",
           "renamed_keyword", "FLOAT_DTYPES", "float_dtype", "layer_widths"]


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


INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
"""The range of every integer argument: sizes, step counts and seeds become int64 (NumPy, JAX with x64)."""


def integer(name: str, x: Any, *, low: int | None = None, high: int | None = None) -> int:
    """An integer (Python or NumPy, not bool) in ``[low, high]`` and in the int64 range; returns an int.

    The int64 bound holds whatever ``high`` says: a larger Python int would otherwise reach NumPy or
    XLA, which fail with an overflow naming no parameter (or abort the process).
    """
    if isinstance(x, (bool, np.bool_)):
        raise TypeError(f"{name}: expected an integer, got bool {x!r}")
    try:
        v = operator.index(x)
    except TypeError:
        raise TypeError(f"{name}: expected an integer, got {type(x).__name__} {_show(x)}") from None
    if not INT64_MIN <= v <= INT64_MAX:
        raise ValueError(f"{name}: expected an integer in the int64 range [{INT64_MIN}, {INT64_MAX}], got {v}")
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
    if np.dtype(dtype).kind in "iu":
        _castable(name, raw, np.dtype(dtype), x)
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


def _castable(name: str, raw: np.ndarray, target: np.dtype, x: Any) -> None:
    """Refuse values an integer cast would change: NaN/inf, fractions, and values outside ``target``'s range.

    ``astype`` would truncate 1.5 to 1 and wrap 2**63 to a small (valid-looking) index without a word.
    """
    if raw.size == 0:
        return
    f = raw.astype(np.float64)
    if not np.all(np.isfinite(f)):
        raise ValueError(f"{name}: every value must be a finite integer, got {_show(x)}")
    if not np.all(f == np.round(f)):
        raise ValueError(f"{name}: every value must be a whole number, got {_show(x)}")
    info = np.iinfo(target)
    # float(info.max) + 1 is a power of two, exact in float64 (float(info.max) itself rounds up for int64)
    if not (np.all(f >= info.min) and np.all(f < float(info.max) + 1)):
        raise ValueError(f"{name}: every value must fit {target.name} [{info.min}, {info.max}], got {_show(x)}")


def layer_widths(name: str, x: Any, *, at_least: int, form: str) -> tuple[int, ...]:
    """A network's layer widths: a sequence (not a string) of at least ``at_least`` integers >= 1, returned as a tuple
    of ints. ``form`` spells the expected layout in the messages (e.g. ``"(d_0, ..., d_L)"``); a caller adds its own
    rules on top (an output width of 1, say)."""
    if isinstance(x, (str, bytes)) or not hasattr(x, "__len__"):
        raise TypeError(f"{name}: expected a sequence of layer widths {form}, got {_show(x)}")
    ws = tuple(integer(f"{name}[{i}]", w, low=1) for i, w in enumerate(x))
    if len(ws) < at_least:
        raise ValueError(f"{name}: expected {form}, at least {at_least} widths, got {ws}")
    return ws


def integers(name: str, x: Any, *, ndim: int | Iterable[int] | None = None, low: int | None = None,
             high: int | None = None, nonempty: bool = True) -> np.ndarray:
    """An array of integers (integer dtype, not bool or float) in ``[low, high]`` and the int64 range; returns int64."""
    raw = None if isinstance(x, (str, bytes)) or x is None else np.asarray(x)
    if raw is None or raw.dtype == bool or raw.dtype.kind not in "iu":
        raise TypeError(f"{name}: expected an array of integers, got {type(x).__name__} {_show(x)}")
    return array(name, raw, ndim=ndim, low=low, high=high, nonempty=nonempty, dtype=np.int64)


PSD_RTOL = 1e-10
"""Relative round-off allowed in :func:`symmetric_psd` (float64 round-off of a product :math:`xx^\top`, with room)."""


def symmetric_psd(name: str, m: np.ndarray, what: str = "the matrix") -> np.ndarray:
    r"""``m`` (a stack :math:`(\dots, d, d)` of finite square matrices), checked symmetric and PSD to round-off.

    Asymmetry beyond :data:`PSD_RTOL` of the largest entry, or an eigenvalue below :math:`-`:data:`PSD_RTOL`
    :math:`\cdot d` times it, is a ``ValueError`` naming ``name`` (``what`` says which matrices, for the message).
    Where a caller asks for a minimizer or a second moment, an indefinite matrix has none: refused here
    rather than answered with a saddle.
    """
    if m.ndim < 2 or m.shape[-1] != m.shape[-2]:
        raise ValueError(f"{name}: expected square matrices, got shape {m.shape}")
    d = m.shape[-1]
    scale = max(float(np.abs(m).max()), 1e-300) if m.size else 1e-300
    asym = float(np.abs(m - np.swapaxes(m, -1, -2)).max()) if m.size else 0.0
    if not asym <= PSD_RTOL * scale:
        raise ValueError(f"{name}: {what} must be symmetric; max |A - A^T| = {asym:.3g} (scale {scale:.3g})")
    low = float(np.linalg.eigvalsh(m).min()) if m.size else 0.0
    if not low >= -PSD_RTOL * scale * d:
        raise ValueError(f"{name}: {what} must be positive semidefinite; smallest eigenvalue {low:.3g}")
    return m


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


def one_per_row(name: str, a: Any, data: str, rows: int) -> Any:
    """``a`` unchanged if it holds one entry per row of the array ``data`` (``rows`` rows), else a ``ValueError``.

    The message names both: which of the two is wrong is the caller's to say (a label vector checked
    against ``X`` would otherwise be blamed for a row missing from ``X``).
    """
    if a.ndim < 1 or a.shape[0] != rows:
        raise ValueError(f"{data}, {name}: expected one entry of {name} per row of {data}; {data} has {rows} rows, "
                         f"{name} has shape {tuple(a.shape)}")
    return a


def finite_output(name: str, out: Any, what: str) -> Any:
    """``out`` (a pytree) from the user callback ``name``, unchanged unless a concrete leaf is NaN or infinite.

    Then a ``ValueError`` naming the callback: a NaN eigenpair, trace or crossing computed from it would
    look like a result. ``what`` says what the output was for (for the message). Traced leaves pass:
    inside ``jit`` a non-finite value comes back for the caller's own divergence flag.
    """
    import jax

    for leaf in jax.tree_util.tree_leaves(out):
        if is_tracer(leaf):
            continue
        a = np.asarray(leaf)
        if a.dtype.kind in "fc" and not np.all(np.isfinite(a)):
            raise ValueError(f"{name}: returned non-finite values (NaN or inf) {what}")
    return out


def traceable_real(name: str, x: Any, *, low: float | None = None, low_open: bool = False) -> Any:
    """A real scalar that may be a tracer (see :func:`traceable`); returned as given when traced."""
    if is_tracer(x):
        traceable(name, x, ndim=0)
        return x
    if hasattr(x, "dtype") and not isinstance(x, (np.ndarray, np.generic)):  # a concrete jax.Array
        x = np.asarray(x)
    return real(name, x, low=low, low_open=low_open)


FLOAT_DTYPES = ("float32", "float64")
"""The arithmetic a simulator's ``dtype`` may select: float64 (the default everywhere) or float32."""


def float_dtype(name: str, x: Any, *, allowed: Iterable[str] = FLOAT_DTYPES, why: str = "") -> np.dtype:
    r"""The floating dtype a simulator computes in: ``None`` (float64, the default), ``"float32"``/``"float64"``,
    or the NumPy (or JAX) types and dtypes of those two (``np.float32``, ``np.dtype("float64")``, ``jnp.float32``).

    Returns a NumPy dtype. Anything else -- another string or precision (``"f4"``, float16, bfloat16, complex),
    a bool, a number -- is a ``ValueError`` naming ``name``, the value and the allowed values; ``allowed`` narrows
    them for a simulator whose maths needs float64, and ``why`` (one clause) then says why in the message.
    """
    opts = tuple(allowed)
    if x is None:
        got = np.dtype(np.float64)
    elif isinstance(x, str):
        got = np.dtype(x) if x in FLOAT_DTYPES else None
    elif isinstance(x, (bool, np.bool_, int, float, complex, np.generic)) or not (
            isinstance(x, (type, np.dtype)) or hasattr(x, "dtype")):
        got = None  # a number (np.dtype(1.0) would fail obscurely, np.dtype(True) differently)
    else:
        try:
            got = np.dtype(x)
        except TypeError:
            got = None
    if got is None or got.name not in opts:
        because = f"; {got.name} is refused here: {why}" if why and got is not None and got.name in FLOAT_DTYPES else ""
        raise ValueError(f"{name}: expected None (float64) or {' or '.join(map(repr, opts))} (a name, or its NumPy or "
                         f"JAX type), got {_show(x)}{because}")
    return got


# ---------------------------------------------------------------------------------------------
# size guard: estimate the bytes a call allocates from its size arguments, refuse above a limit

MAX_BYTES_ENV = "STEPLAB_MAX_BYTES"
"""Environment variable that overrides the default allocation limit (bytes, or with a K/M/G/T suffix)."""

_GIB = 2**30
_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def _physical_memory() -> int | None:
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, OSError, ValueError):  # not a POSIX system: no figure to take a quarter of
        return None


def default_max_bytes() -> int:
    """The default allocation limit: 8 GiB or a quarter of physical memory, whichever is smaller.

    A quarter leaves room for the interpreter, JAX's buffers and the copies a result goes through
    (device to host, NumPy concatenation); 8 GiB keeps a large machine from starting a call that
    would run for hours. Raise it per call with ``max_bytes=`` or for a process with
    ``STEPLAB_MAX_BYTES``.
    """
    phys = _physical_memory()
    return 8 * _GIB if phys is None else min(8 * _GIB, phys // 4)


def _parse_bytes(text: str) -> float:
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([KMGT]?)(?:i?B)?\s*", text, flags=re.IGNORECASE)
    v = float(m.group(1)) * _UNITS[m.group(2).upper()] if m else math.nan
    if not v > 0:
        raise ValueError(f"{MAX_BYTES_ENV}: expected a positive number of bytes (e.g. 17179869184 or 16GiB), "
                         f"got {text!r}")
    return v


def byte_limit(max_bytes: Any = None) -> float:
    """The allocation limit in force: ``max_bytes`` if given, else ``$STEPLAB_MAX_BYTES``, else :func:`default_max_bytes`.

    ``max_bytes`` is a positive number of bytes; ``math.inf`` switches the guard off for the call.
    """
    if max_bytes is not None:
        return real("max_bytes", max_bytes, low=0.0, low_open=True, finite=False)
    env = os.environ.get(MAX_BYTES_ENV)
    return _parse_bytes(env) if env is not None and env.strip() else float(default_max_bytes())


def _fmt_bytes(n: float) -> str:
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n:.0f} B"


def check_bytes(sizes: Mapping[str, Any], nbytes: float, *, what: str, max_bytes: Any = None,
                per_call: bool = True) -> None:
    """Refuse a call whose estimated allocation ``nbytes`` exceeds :func:`byte_limit` (``ValueError``).

    ``sizes``: the size arguments the estimate grows with (``{"n": n, "d": d}``), named in the message
    with their values (a string value describes an array argument: ``{"eta": "shape (3, 10)"}`` reads
    ``eta (shape (3, 10))``); ``what``: the dominant array(s), e.g. ``"X, an (n, d) float64 array"``. Estimates
    count the largest arrays a call holds at once (outputs and working buffers), to within a small
    factor: the guard is there to refuse a call that cannot fit, not to budget one that can. Compute
    ``nbytes`` with Python ints (exact, no overflow). ``per_call=False`` for a caller without a ``max_bytes``
    parameter (a small closed form): the message then offers only the environment variable.
    """
    limit = byte_limit(max_bytes)
    if not nbytes <= limit:
        names = ", ".join(f"{k} ({v})" if isinstance(v, str) else f"{k}={_show(v)}" for k, v in sizes.items())
        how = f"pass max_bytes= (bytes) or set {MAX_BYTES_ENV}" if per_call else f"set {MAX_BYTES_ENV}"
        raise ValueError(f"{names}: {what} would take about {_fmt_bytes(nbytes)}, above the limit of "
                         f"{_fmt_bytes(limit)}; {how} to allow it")


def renamed_keyword(old: str, new: str) -> Callable[[Callable], Callable]:
    """Decorator: a function whose keyword ``old`` is now ``new`` still takes ``old=`` for one release.

    The old keyword is passed on as the new one with a ``DeprecationWarning`` naming both; both at once is a
    ``TypeError`` naming both. Positional calls are untouched, and the signature shown (``inspect.signature``
    follows ``__wrapped__``) is the new one.
    """
    for name, value in (("old", old), ("new", new)):
        if not isinstance(value, str) or not value.isidentifier():
            raise TypeError(f"{name}: expected a keyword name (an identifier), got {value!r}")

    def decorate(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def accepting_old(*args, **kwargs):
            if old in kwargs:
                if new in kwargs:
                    raise TypeError(f"{old}, {new}: {fn.__name__}() got both; {old!r} is the old name of {new!r}, "
                                    f"pass {new}= only")
                warnings.warn(f"{fn.__name__}(): the keyword {old!r} is deprecated and will be removed in the next "
                              f"release; use {new!r}", DeprecationWarning, stacklevel=2)
                kwargs[new] = kwargs.pop(old)
            return fn(*args, **kwargs)

        return accepting_old

    return decorate
