r"""Results cache: ``<results>/<name>.npz`` (arrays) plus ``<results>/<name>.json`` (provenance).

An entry is valid only if its key matches :math:`\mathrm{sha256}(\text{config} \,\|\, \text{code version of its topic})`:

* the config is hashed by *content* (arrays by their bytes, dtype and shape, never by ``repr``);
* the code version of topic ``T`` hashes the sources of ``theory``, ``sims`` and ``paper_checks``
  that belong to ``T`` (a module, package or data file named ``T`` or ``T_*``, or under a folder
  of that name) together with every shared source (files that belong to no topic: the sweep
  engine, this cache, the claim layer, shared problems). Editing ``sims/sde.py`` therefore
  recomputes no logistic result, while editing the sweep engine recomputes everything.

The JSON holds the sha256 of the ``.npz`` it belongs to, so a truncated, corrupt or mismatched
pair is detected on read, discarded with a warning and recomputed. Both files are written to a
temporary name and renamed into place.

Where: ``$STEPLAB_RESULTS`` if set; else ``results/`` at the root of the steplab checkout when the
current directory is inside it; else the user cache directory (``$XDG_CACHE_HOME/steplab`` or
``~/.cache/steplab``). ``steplab clean`` style removal is just deleting that folder.
"""
from __future__ import annotations

import contextlib
import contextvars
import functools
import hashlib
import json
import os
import platform
import re
import subprocess
import time
import warnings
from importlib import metadata
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np

__all__ = ["cached", "code_version", "config_digest", "results_dir", "provenance", "recompute", "topic_names",
           "CacheWarning", "read_meta"]

_PACKAGES = ("theory", "sims", "paper_checks")
_NAME = re.compile(r"^[A-Za-z0-9_.\-]+$")
_ROOT = Path(__file__).resolve().parent.parent
# inside a recompute() block: the (name, key) pairs it has recomputed so far; None outside one
_FRESH: contextvars.ContextVar[set | None] = contextvars.ContextVar("steplab_fresh", default=None)


class CacheWarning(UserWarning):
    """A cached entry was unreadable or inconsistent and is being recomputed."""


def results_dir() -> Path:
    """Directory of cached results (see the module docstring for the rule)."""
    env = os.environ.get("STEPLAB_RESULTS")
    if env:
        return Path(env)
    cwd = Path.cwd().resolve()
    if (_ROOT / "pyproject.toml").exists() and (cwd == _ROOT or _ROOT in cwd.parents):
        return _ROOT / "results"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "steplab"


def recompute(enabled: bool = True) -> contextlib.AbstractContextManager[None]:
    """Within this block every :func:`cached` entry is recomputed and overwritten once (``--fresh``).

    Later calls for the same entry in the same block read what the first one wrote: an experiment that
    several claims share runs once per ``--fresh`` run, not once per claim. ``enabled=False`` inside a block
    restores plain caching for its own extent.
    """
    if not isinstance(enabled, bool):  # checked at the call, not when the block is entered
        raise TypeError(f"enabled: expected a bool, got {type(enabled).__name__} {enabled!r}")
    return _recompute(enabled)


@contextlib.contextmanager
def _recompute(enabled: bool) -> Iterator[None]:
    token = _FRESH.set(set() if enabled else None)
    try:
        yield
    finally:
        _FRESH.reset(token)


@functools.lru_cache(maxsize=1)
def topic_names() -> tuple[str, ...]:
    """Topics: the modules and packages of ``paper_checks`` whose names do not start with ``_``."""
    folder = _ROOT / "paper_checks"
    names = {p.stem for p in folder.glob("*.py")} | {p.name for p in folder.iterdir() if (p / "__init__.py").exists()}
    return tuple(sorted(n for n in names if not n.startswith("_")))


def _owner(rel: Path) -> str | None:
    """The topic a source file belongs to, or None for shared sources."""
    parts = [*rel.parts[1:-1], Path(rel.parts[-1]).stem]
    for topic in topic_names():
        if any(p == topic or p.startswith(topic + "_") for p in parts):
            return topic
    return None


def _scope(topic: "str | tuple[str, ...] | list[str] | None") -> tuple[str, ...] | None:
    """``topic`` as a sorted tuple of known topic names (None: every source)."""
    if topic is None:
        return None
    names = (topic,) if isinstance(topic, str) else topic
    if not isinstance(names, (tuple, list)) or not names or not all(isinstance(n, str) for n in names):
        raise TypeError(f"topic: expected a topic name or a non-empty tuple of names, got {topic!r:.60}")
    for n in names:
        if n not in topic_names():
            raise ValueError(f"topic: unknown topic {n!r}; valid: {', '.join(topic_names())}")
    return tuple(sorted(set(names)))


def code_version(topic: "str | tuple[str, ...] | None" = None) -> str:
    """sha256 over the sources of ``topic`` plus all shared sources (every source when ``topic`` is None).

    ``topic`` may be a tuple of topics: an experiment that reads another topic's theory or simulator
    (a cross-link) names both, so an edit to either recomputes it.
    """
    return _code_version(_scope(topic))


# Sources no result depends on: the benchmark runner and the NumPy references (only the bench imports them),
# so editing a bench case never recomputes a claim.
_NOT_RESULTS = (Path("sims", "bench.py"), Path("sims", "reference"))


@functools.lru_cache(maxsize=None)
def _code_version(scope: tuple[str, ...] | None) -> str:
    digest = hashlib.sha256()
    for package in _PACKAGES:
        for path in sorted((_ROOT / package).rglob("*")):
            if path.suffix not in {".py", ".json"} or "__pycache__" in path.parts:
                continue
            rel = path.relative_to(_ROOT)
            if any(rel == n or n in rel.parents for n in _NOT_RESULTS):
                continue
            owner = _owner(rel)
            if scope is None or owner is None or owner in scope:
                digest.update(str(rel).encode())
                digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


code_version.cache_clear = _code_version.cache_clear  # tests edit sources and re-read the version


def _canonical(x: Any) -> Any:
    """A JSON-serialisable stand-in for ``x`` that identifies it by content."""
    if isinstance(x, dict):
        return {str(k): _canonical(v) for k, v in sorted(x.items(), key=lambda kv: str(kv[0]))}
    if isinstance(x, (list, tuple)):
        return [_canonical(v) for v in x]
    if isinstance(x, (str, bool, int, type(None))):
        return x
    if isinstance(x, float):
        return repr(x)  # repr round-trips float64 exactly
    if isinstance(x, (np.generic, np.ndarray)) or hasattr(x, "__array__"):
        a = np.ascontiguousarray(np.asarray(x))
        if a.dtype == object:
            raise TypeError(f"config: object arrays cannot be hashed by content, got {a!r:.60}")
        return {"__array__": hashlib.sha256(a.tobytes()).hexdigest(), "dtype": a.dtype.str, "shape": list(a.shape)}
    raise TypeError(f"config: cannot hash a {type(x).__name__} by content; use numbers, strings, arrays, lists, dicts")


def _config(config: Any) -> dict:
    if not isinstance(config, dict):
        raise TypeError(f"config: expected a dict of named settings, got {type(config).__name__} {config!r:.60}")
    return config


def _name(name: Any) -> str:
    """An entry name: a plain file stem (letters, digits, ``_ . -``), never a path."""
    if not isinstance(name, str):
        raise TypeError(f"name: expected a string, got {type(name).__name__} {name!r:.60}")
    if not _NAME.match(name):
        raise ValueError(f"name: expected letters, digits, '_', '.', '-' (no path), got {name!r}")
    return name


def config_digest(config: dict, topic: "str | tuple[str, ...] | None" = None) -> str:
    """The cache key of ``config`` under the code version of ``topic``."""
    _config(config)
    blob = json.dumps(_canonical(config), sort_keys=True) + code_version(topic)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def _git_revision() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=5,
                             cwd=_ROOT)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True,
                               text=True, timeout=5, cwd=_ROOT)
        rev = out.stdout.strip() or "unknown"
        return rev + ("+dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def provenance(config: dict, wall_s: float, topic: "str | tuple[str, ...] | None" = None) -> dict:
    """Provenance record stored next to every cached result."""
    import jax

    from theory import _validate as V

    _config(config)
    wall_s = V.real("wall_s", wall_s, low=0.0)

    versions = {}
    for dist in ("jax", "jaxlib", "numpy", "scipy", "sympy", "optax", "diffrax", "steplab"):
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            pass
    devices = jax.devices()
    return {
        "config": _canonical(config),
        "seed": config.get("seed"),
        "topic": topic,
        "git_revision": _git_revision(),
        "code_version": code_version(topic),
        "versions": versions,
        "python": platform.python_version(),
        "device_kind": devices[0].device_kind,
        "device_count": len(devices),
        "wall_s": round(wall_s, 3),
        "written": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _read(npz_path: Path, json_path: Path, key: str) -> dict[str, Any] | None:
    """The cached values if the pair exists, matches ``key`` and is intact; None otherwise."""
    if not (npz_path.exists() and json_path.exists()):
        return None
    try:
        meta = json.loads(json_path.read_text())
        if meta.get("key") != key:
            return None  # another config or code version: an ordinary miss
        if meta.get("npz_sha256") != _sha256(npz_path):
            raise ValueError("the .npz does not match the checksum recorded in its .json")
        with np.load(npz_path, allow_pickle=False) as data:
            values = {k: data[k] for k in data.files}
        values.update(meta["scalars"])
        return values
    except Exception as exc:  # noqa: BLE001 - any unreadable entry is discarded, never trusted
        warnings.warn(f"cache entry {npz_path.stem!r} is corrupt ({exc}); recomputing", CacheWarning, stacklevel=3)
        return None


def cached(name: str, config: dict, compute: Callable[[], dict[str, Any]], *, topic: "str | tuple[str, ...] | None" = None,
           fresh: bool | None = None) -> dict[str, Any]:
    """Return ``compute()``, reusing ``<results>/<name>.*`` when its key matches and the pair is intact.

    ``compute`` returns a flat dict: NumPy-convertible array values go to the ``.npz``; JSON
    scalars (str, int, float, bool, None) go to the ``.json``. The returned dict has the same keys
    either way. ``topic`` scopes the code version in the key (None: all sources). ``fresh=True``
    recomputes and overwrites; an enclosing :func:`recompute` block does so once per entry.
    """
    _name(name)
    _config(config)
    if not callable(compute):
        raise TypeError(f"compute: expected a callable returning a dict, got {type(compute).__name__}")
    if fresh is not None and not isinstance(fresh, bool):
        raise TypeError(f"fresh: expected True, False or None, got {type(fresh).__name__} {fresh!r}")
    block = _FRESH.get()
    directory = results_dir()
    npz_path, json_path = directory / f"{name}.npz", directory / f"{name}.json"
    key = config_digest(config, topic)
    if fresh is None:
        fresh = block is not None and (name, key) not in block
    if not fresh:
        hit = _read(npz_path, json_path, key)
        if hit is not None:
            return hit

    start = time.perf_counter()
    values = compute()
    wall = time.perf_counter() - start
    if not isinstance(values, dict):
        raise TypeError(f"compute: expected it to return a dict, got {type(values).__name__}")
    scalars = {k: v for k, v in values.items() if v is None or isinstance(v, (str, bool, int, float))}
    arrays = {k: np.asarray(v) for k, v in values.items() if k not in scalars}
    for k, a in arrays.items():
        if a.dtype == object:
            raise TypeError(f"compute: value {k!r} is not a numeric array or a JSON scalar")
    directory.mkdir(parents=True, exist_ok=True)
    tmp = f".{os.getpid()}.tmp"
    npz_tmp, json_tmp = npz_path.with_name(npz_path.name + tmp), json_path.with_name(json_path.name + tmp)
    with open(npz_tmp, "wb") as fh:
        np.savez(fh, **arrays)
    meta = {"name": name, "key": key, "npz_sha256": _sha256(npz_tmp), "scalars": scalars,
            **provenance(config, wall, topic)}
    json_tmp.write_text(json.dumps(meta, indent=2, sort_keys=True, default=str) + "\n")
    # npz first, then json: a reader between the two renames sees a checksum mismatch and recomputes
    os.replace(npz_tmp, npz_path)
    os.replace(json_tmp, json_path)
    if block is not None:
        block.add((name, key))
    values = dict(values)
    values.update({k: arrays[k] for k in arrays})
    return values


def read_meta(name: str) -> dict | None:
    """The provenance JSON of a cached entry (None if absent or unreadable)."""
    _name(name)
    try:
        return json.loads((results_dir() / f"{name}.json").read_text())
    except (OSError, ValueError):
        return None
