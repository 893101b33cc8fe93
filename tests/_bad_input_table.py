r"""The bad-input battery: a valid baseline call per public function, perturbed one parameter at a time.

Every public function of :mod:`theory` and :mod:`sims` (a name without a leading underscore, defined in
that module, in a module whose own name has no leading underscore; :mod:`sims.reference` included, since
its modules are importable API with the simulators' argument conventions) needs a :class:`Row` in one of
the ``tests/bad_input_<topic>.py`` tables (``ROWS = [...]``) or an entry in :data:`EXEMPT` with a
reason. A function without parameters needs nothing. The test (``tests/test_bad_input.py``) fails for a
public function that has neither, so a new function is covered from the day it is added.

For each parameter of the baseline call, :func:`perturbations` generates bad values from the
parameter's *kind* (inferred from the baseline value, refined by ``Row.kinds``): NaN, infinities,
zero and negative values where positivity is required, wrong shapes, empty arrays, strings, ``None``,
booleans, fractional integers, integers beyond int64, raw PRNG keys, unknown options, callbacks that
return NaN, and on request huge values, indefinite matrices and zero start vectors. Each call
is classified (:func:`classify`):

``named``      ``ValueError``/``TypeError`` (builtin or the project's) whose message names the parameter;
``unnamed``    ``ValueError``/``TypeError`` that does not name it;
``obscure``    any other exception (ZeroDivisionError, KeyError, IndexError, tracer and library errors);
``silent``     the call returned (finite garbage or NaN).

Run ``python -m tests._bad_input_table [--topic T] [--md FILE]`` for the per-topic statistics and the
list of every non-``named`` outcome.
"""
from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import sys
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

OUTCOMES = ("named", "unnamed", "obscure", "silent")

# Public functions deliberately outside the battery, with the reason (keep this short).
EXEMPT: dict[str, str] = {
    "sims.bench.main": "command-line entry point: argparse validates argv (exits with a usage message)",
}


@dataclass
class Row:
    """One public function of the battery.

    ``fn``: dotted path (``"theory.eos.critical_sharpness"``). ``call``: the baseline keyword arguments
    (a valid call; positional-only or ``*args`` parameters go in ``args``). ``kinds``: parameter ->
    kind (see :data:`KINDS`), overriding the kind inferred from the baseline value; a kind may be
    combined with an extra of :data:`EXTRAS` (``"+huge"`` adds 1e300, ``"+big"`` 1e200 and ``"+bigarr"`` the
    baseline array times 1e200, whose squares overflow, ``"+indefinite"`` a matrix with a
    negative eigenvalue, for a parameter that must be PSD; ``"+zeros"`` an all-zero array, for a start
    vector that must be nonzero; ``"+rows"`` a data matrix with a row fewer, for one whose rows are paired with
    another argument's entries (labels): the error must name the data matrix, not only the labels; ``"+oversize"``
    10**12, for a size argument whose allocation the size guard (``theory.validate.check_bytes``) must refuse;
    ``"+wide"`` layer widths whose hidden layers are 10**12 wide, for the same guard on parameter counts). ``ok``: ``{(parameter, label): reason}``
    for generated values that are valid for this function (left out, with the reason on record).
    ``extra``: hand-written ``(overrides, parameter, label)`` bad calls. ``skip``: parameters left
    unperturbed, with the reason. ``slow``: the baseline call is costly (the report skips it; every
    baseline runs in the slow tier only, see tests/test_bad_input.py).
    """

    fn: str
    call: dict[str, Any] | Callable[[], dict[str, Any]] = field(default_factory=dict)
    args: tuple = ()
    kinds: dict[str, str] = field(default_factory=dict)
    ok: dict[tuple[str, str], str] = field(default_factory=dict)
    extra: list[tuple[dict, str, str]] = field(default_factory=list)
    skip: dict[str, str] = field(default_factory=dict)
    slow: bool = False

    @property
    def topic(self) -> str:
        return topic_of(self.fn.rsplit(".", 1)[0])

    def baseline(self) -> dict[str, Any]:
        return dict(self.call() if callable(self.call) else self.call)

    def function(self) -> Callable:
        mod, name = self.fn.rsplit(".", 1)
        return getattr(importlib.import_module(mod), name)


# ---------------------------------------------------------------------------------------------
# discovery

#: the validators themselves: refusing bad input is what they do, and tests/test_validate.py tests each refusal
VALIDATORS = "theory.validate"


def public_modules() -> list[str]:
    """Every module under theory/ and sims/ whose dotted name has no part starting with ``_`` (the validators of
    :data:`VALIDATORS` aside)."""
    import sims
    import theory

    names = []
    for pkg in (theory, sims):
        for info in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
            if info.name != VALIDATORS and not any(part.startswith("_") for part in info.name.split(".")):
                names.append(info.name)
    return sorted(names)


def public_functions() -> dict[str, Callable]:
    """``{"module.function": function}`` for every public function (defined in its public module)."""
    out = {}
    for name in public_modules():
        mod = importlib.import_module(name)
        for attr, obj in vars(mod).items():
            if attr.startswith("_") or inspect.isclass(obj) or not callable(obj):
                continue
            # functools wrappers (lru_cache, contextmanager) count: unwrap to the defining function
            if not inspect.isfunction(inspect.unwrap(obj)) or getattr(obj, "__module__", None) != name:
                continue
            out[f"{name}.{attr}"] = obj
    return out


def has_parameters(fn: Callable) -> bool:
    return bool(inspect.signature(inspect.unwrap(fn)).parameters)


def topic_of(module: str) -> str:
    """The topic a module belongs to (as the results cache assigns files), else ``"engine"``."""
    from sims.cache import part_owner, topic_names

    topics = topic_names()
    for part in module.split(".")[1:]:  # the cache's rule: a topic never owns another it is a prefix of
        owner = part_owner(part, topics)
        if owner is not None:
            return owner
    return "engine"


def load_rows() -> list[Row]:
    """Rows of every ``tests/bad_input_<topic>.py``."""
    from pathlib import Path

    rows = []
    here = Path(__file__).parent
    for info in pkgutil.iter_modules([str(here)]):
        if info.name.startswith("bad_input_"):
            rows += importlib.import_module(f"tests.{info.name}").ROWS
    return rows


# ---------------------------------------------------------------------------------------------
# perturbations

def _is_key(x: Any) -> bool:
    import jax

    return hasattr(x, "dtype") and jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key)


def infer_kind(value: Any) -> str:
    """The kind of a baseline value (see :data:`KINDS`)."""
    import sympy as sp

    if isinstance(value, (bool, np.bool_)):
        return "bool"
    if _is_key(value):
        return "key"
    if isinstance(value, sp.Basic):
        return "expr"
    if isinstance(value, (int, np.integer)):
        return "int"
    if isinstance(value, (float, np.floating)):
        return "real"
    if isinstance(value, str):
        return "choice"
    if isinstance(value, dict):
        return "dict"
    if callable(value):
        return "fn"
    if isinstance(value, (tuple, list)) and value and all(isinstance(v, str) for v in value):
        return "choices"
    try:
        a = np.asarray(value)
    except Exception:  # noqa: BLE001  (an object without an array form)
        return "obj"
    if a.dtype.kind in "iu":
        return "iarr"
    if a.dtype.kind == "f":
        return "arr"
    return "obj"


def _wrong_shape(value: Any) -> Any:
    a = np.asarray(value, dtype=float)
    return a[..., None] if a.ndim else np.array([float(a), float(a)])


def _arr_like(value: Any, fill: float) -> np.ndarray:
    a = np.array(value, dtype=float)
    if a.size:
        a.flat[0] = fill
    return a


def _empty(value: Any) -> np.ndarray:
    a = np.asarray(value)
    return np.zeros((0,) + a.shape[1:], dtype=a.dtype) if a.ndim else np.zeros(0)


def _real(v):
    return [("nan", float("nan")), ("inf", float("inf")), ("-inf", -float("inf")), ("str", "1.0"), ("None", None),
            ("bool", True), ("vector", np.array([1.0, 2.0]))]


_INT64_OVERFLOW = 2**63  # one past int64: NumPy and XLA fail on it naming no parameter (XLA may abort the process)


def _int(v):
    return [("frac", 1.5), ("str", "3"), ("None", None), ("bool", True), ("nan", float("nan")),
            ("int64", _INT64_OVERFLOW)]


def _arr(v):
    return [("nan", _arr_like(v, np.nan)), ("inf", _arr_like(v, np.inf)), ("empty", _empty(v)),
            ("ndim", _wrong_shape(v)), ("str", "x"), ("None", None), ("boolarr", np.ones(np.shape(v), bool))]


def _iarr(v):
    a = np.asarray(v)
    return [("frac", a + 0.5), ("empty", _empty(v)), ("str", "x"), ("None", None), ("boolarr", np.ones(a.shape, bool)),
            ("int64", np.full(a.shape or (1,), _INT64_OVERFLOW, dtype=np.uint64))]


def _indefinite(v: Any) -> np.ndarray:
    """``v`` (a square matrix or a stack of them) with a negative eigenvalue: the last diagonal entry lowered by
    the trace + 1 (so e_d^T A e_d < 0), symmetry kept. For a parameter that must be PSD (a curvature whose
    minimizer is asked for, a second moment): an indefinite one has a saddle, not a minimizer."""
    a = np.array(v, dtype=float)
    a[..., -1, -1] -= np.trace(a, axis1=-2, axis2=-1) + 1.0
    return a


def _nan_fn(fn: Callable) -> Callable:
    """``fn`` with every output replaced by NaN (same structure and shapes): a user callback gone bad."""
    def nan_out(*args, **kwargs):
        import jax

        return jax.tree_util.tree_map(lambda x: x * float("nan"), fn(*args, **kwargs))
    return nan_out


def _raw_key(v):
    shape = np.shape(v)
    return np.zeros(shape + (2,), np.uint32)


KINDS: dict[str, Callable[[Any], list[tuple[str, Any]]]] = {
    "real": _real,
    "pos": lambda v: _real(v) + [("zero", 0.0), ("neg", -1.0)],
    "nonneg": lambda v: _real(v) + [("neg", -1.0)],
    "unit": lambda v: _real(v) + [("neg", -0.5), ("above1", 1.5)],
    "int": _int,
    "posint": lambda v: _int(v) + [("zero", 0), ("neg", -1)],
    "nonnegint": lambda v: _int(v) + [("neg", -1)],
    "arr": _arr,
    "posarr": lambda v: _arr(v) + [("zeros", np.zeros(np.shape(v))), ("neg", -np.abs(np.asarray(v, float)) - 1.0)],
    "nonnegarr": lambda v: _arr(v) + [("neg", -np.abs(np.asarray(v, float)) - 1.0)],
    "iarr": _iarr,
    "posiarr": lambda v: _iarr(v) + [("zeros", np.zeros(np.shape(v), int)), ("neg", -np.abs(np.asarray(v)) - 1)],
    "choice": lambda v: [("unknown", "no-such-option"), ("None", None), ("int", 3)],
    "text": lambda v: [("None", None), ("int", 3)],
    "choices": lambda v: [("unknown", ("no-such-option",)), ("None", None), ("int", 3), ("empty", ())],
    "key": lambda v: [("int", 0), ("None", None), ("rawkey", _raw_key(v))],
    "fn": lambda v: [("None", None), ("int", 3), ("nanfn", _nan_fn(v))],
    "bool": lambda v: [("str", "yes"), ("None", None)],
    "expr": lambda v: [("None", None), ("list", [1, 2])],
    "dict": lambda v: [("None", None), ("str", "x"), ("emptydict", {})],
    "widths": lambda v: [("None", None), ("str", "x"), ("empty", ()), ("zero", (2, 0, 2)), ("neg", (2, -1, 2)),
                         ("frac", (2, 1.5, 2)), ("int64", (2, _INT64_OVERFLOW, 2))],
    "obj": lambda v: [("None", None), ("str", "x")],
    "any": lambda v: [],
}
EXTRAS: dict[str, Callable[[Any], list[tuple[str, Any]]]] = {
    "huge": lambda v: [("huge", 1e300)],
    # 1e200: finite, but its square is not; a closed form or a matrix built from it overflows float64 inside
    "big": lambda v: [("big", 1e200)],
    "bigarr": lambda v: [("big", np.asarray(v, dtype=float) * 1e200)],
    "empty": lambda v: [("empty", np.zeros(0))],
    "zero": lambda v: [("zero", 0.0)],
    "neg": lambda v: [("neg", -1.0)],
    "indefinite": lambda v: [("indefinite", _indefinite(v))],
    "zeros": lambda v: [("zeros", np.zeros(np.shape(v)))],
    "rows": lambda v: [("rows", np.asarray(v)[:-1])],
    # a size whose allocation no machine holds (8 TB per float64 per unit): the size guard must name it
    "oversize": lambda v: [("oversize", 10**12)],
    # layer widths (d_0, ..., d_L) with every hidden width 10**12: P and every (d, d) rotation are then oversize
    "wide": lambda v: [("wide", (int(v[0]),) + (10**12,) * (len(v) - 2) + (int(v[-1]),))],
}


def perturbations(row: Row) -> list[tuple[str, str, Any, dict]]:
    """``(parameter, label, bad value, overrides)`` for every generated and hand-written bad call.

    ``None`` is not generated for a parameter whose default is ``None`` (it is the documented default).
    """
    base = row.baseline()
    params = inspect.signature(inspect.unwrap(row.function())).parameters
    none_ok = {n for n, p in params.items() if p.default is None}
    out = []
    for name, value in base.items():
        if name in row.skip:
            continue
        spec = row.kinds.get(name) or infer_kind(value)
        kind, *extras = spec.split("+")
        gen = list(KINDS[kind](value))
        for e in extras:
            gen += EXTRAS[e](value)
        for label, bad in gen:
            if (name, label) in row.ok or (label == "None" and name in none_ok):
                continue
            out.append((name, label, bad, {name: bad}))
    for overrides, name, label in row.extra:
        out.append((name, label, next(iter(overrides.values())), overrides))
    return out


# ---------------------------------------------------------------------------------------------
# classification

_OBSCURE_MODULES = ("jax", "jaxlib", "sympy", "numpy", "scipy", "diffrax", "equinox", "optax", "mpmath")
_SHORT_NAMES_NEED_MARKERS = 3


def names_parameter(message: str, name: str) -> bool:
    """Whether ``message`` names ``name``: ``name:`` / ``name=`` / quoted, or as a word when it is long."""
    n = re.escape(name)
    marked = rf"(^|[\s(\[,'\"`]){n}\s*[:=]|['\"`]{n}['\"`]|^{n}\b"
    if re.search(marked, message):
        return True
    return len(name) >= _SHORT_NAMES_NEED_MARKERS and re.search(rf"(?<![A-Za-z0-9_]){n}(?![A-Za-z0-9_])", message) is not None


def _is_builtin_error(exc: BaseException) -> bool:
    if not isinstance(exc, (ValueError, TypeError)):
        return False
    for cls in type(exc).__mro__:
        if cls in (ValueError, TypeError):
            return True
        if cls.__module__.split(".")[0] in _OBSCURE_MODULES:
            return False
    return True


def _finite(out: Any) -> bool:
    import jax

    try:
        leaves = jax.tree_util.tree_leaves(out)
    except Exception:  # noqa: BLE001
        return True
    for leaf in leaves:
        try:
            a = np.asarray(leaf)
        except Exception:  # noqa: BLE001
            continue
        if a.dtype.kind in "fc" and not np.all(np.isfinite(a)):
            return False
    return True


def call(row: Row, overrides: dict) -> Any:
    fn = row.function()
    kwargs = {**row.baseline(), **overrides}
    return fn(*row.args, **kwargs)


class _StillRunning(Exception):
    pass


def _alarm(signum, frame):
    raise _StillRunning


CALL_LIMIT_S = 5  # a bad call still running after this long accepted its input (e.g. an infinite horizon)


def classify(row: Row, param: str, overrides: dict) -> tuple[str, str]:
    """``(outcome, detail)`` of one bad call (see the module docstring)."""
    import signal
    import threading

    use_alarm = threading.current_thread() is threading.main_thread() and hasattr(signal, "SIGALRM")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if use_alarm:
            previous = signal.signal(signal.SIGALRM, _alarm)
            # re-armed every second: a library that swallows the first interrupt (a Fortran callback) gets another
            signal.setitimer(signal.ITIMER_REAL, CALL_LIMIT_S, 1.0)
        try:
            out = call(row, overrides)
        except _StillRunning:
            return "silent", f"still running after {CALL_LIMIT_S} s (interrupted)"
        except Exception as exc:  # noqa: BLE001  (classifying every exception is the point)
            msg = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            detail = f"{type(exc).__name__}: {msg[:160]}"
            if not _is_builtin_error(exc):
                return "obscure", detail
            return ("named" if names_parameter(str(exc), param) else "unnamed"), detail
        finally:
            if use_alarm:
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, previous)
    return "silent", "returned " + ("finite values" if _finite(out) else "non-finite values")


def _show(x: Any) -> str:
    if isinstance(x, np.ndarray):
        return f"array(shape={x.shape}, dtype={x.dtype}{', ' + str(x.ravel()[:2]) if x.size else ''})"
    r = repr(x)
    return r if len(r) <= 50 else r[:47] + "..."


def run_row(row: Row, verbose: bool = False) -> list[dict]:
    """Every bad call of ``row`` with its outcome."""
    import time

    out = []
    for p, lab, v, ov in perturbations(row):
        t0 = time.perf_counter()
        outcome, detail = classify(row, p, ov)
        if verbose:
            print(f"    {p}={lab}: {outcome} ({time.perf_counter() - t0:.2f} s)", file=sys.stderr, flush=True)
        out.append({"fn": row.fn, "topic": row.topic, "param": p, "label": lab, "value": _show(v),
                    "outcome": outcome, "detail": detail})
    return out


# ---------------------------------------------------------------------------------------------
# report

def main(argv: list[str] | None = None) -> int:
    import argparse
    import collections

    import sims  # noqa: F401  (float64)

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--topic", action="append", help="only these topics (repeatable)")
    ap.add_argument("--fn", action="append", help="only functions whose path contains this (repeatable)")
    ap.add_argument("--md", help="write the non-named outcomes as a Markdown list to this file")
    ap.add_argument("--verbose", action="store_true", help="print every call with its time")
    args = ap.parse_args(argv)
    rows = [r for r in load_rows() if (not args.topic or r.topic in args.topic)
            and (not args.fn or any(f in r.fn for f in args.fn))]
    results, stale = [], []
    for r in rows:
        print(f"  {r.fn} ...", file=sys.stderr, flush=True)
        try:
            r.function()
        except (ImportError, AttributeError) as exc:
            print(f"  STALE ROW {r.fn}: {exc}", file=sys.stderr)
            stale.append(f"- `{r.fn}`: stale row ({exc})")
            continue
        if not r.slow:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    call(r, {})
            except Exception as exc:  # noqa: BLE001
                print(f"  BASELINE FAILS {r.fn}: {type(exc).__name__}: {exc}", file=sys.stderr)
                stale.append(f"- `{r.fn}`: the baseline call fails ({type(exc).__name__}: {str(exc)[:160]})")
                continue
        results += run_row(r, verbose=args.verbose)
    counts = collections.defaultdict(collections.Counter)
    for res in results:
        counts[res["topic"]][res["outcome"]] += 1
    lines = ["| topic | functions | calls | " + " | ".join(OUTCOMES) + " | named % |", "|---" * (4 + len(OUTCOMES)) + "|"]
    total = collections.Counter()
    for topic in sorted(counts):
        c = counts[topic]
        total.update(c)
        n = sum(c.values())
        nf = len({r.fn for r in rows if r.topic == topic})
        lines.append(f"| {topic} | {nf} | {n} | " + " | ".join(str(c[o]) for o in OUTCOMES) + f" | {100 * c['named'] / n:.1f} |")
    n = sum(total.values())
    if n:
        lines.append(f"| all | {len(rows)} | {n} | " + " | ".join(str(total[o]) for o in OUTCOMES)
                     + f" | {100 * total['named'] / n:.1f} |")
    print("\n".join(lines))
    bad = [r for r in results if r["outcome"] != "named"]
    listing = stale + [f"- `{r['fn']}` `{r['param']}` = {r['value']} ({r['label']}): **{r['outcome']}** -- {r['detail']}" for r in bad]
    if args.md:
        with open(args.md, "w") as fh:
            fh.write("\n".join(lines) + "\n\n" + "\n".join(listing) + "\n")
    else:
        print("\n".join(listing))
    return 0


if __name__ == "__main__":
    sys.exit(main())
