r"""Results cache: one entry per (name, key) -- ``<name>.<key>.json`` plus the ``.npz`` it names.

An entry is valid only if its key matches :math:`\mathrm{sha256}(\text{config} \,\|\, \text{code version of its topic}
\,\|\, \text{environment})`:

* the config is hashed by *content* (arrays by their bytes, dtype and shape, never by ``repr``);
* the code version of topic ``T`` hashes the sources of ``theory``, ``sims`` and ``paper_checks``
  that belong to ``T`` (a module, package or data file named ``T`` or ``T_*``, or under a folder
  of that name; when one topic's name is a prefix of another's, ``sign`` and ``sign_floor``, a file
  belongs to the longest name that matches, so ``sign`` never owns ``sign_floor*``) together with every
  shared source (files that belong to no topic: the sweep engine, this cache, the claim layer, shared
  problems). Editing ``sims/sde/`` therefore recomputes no logistic result, while editing the sweep
  engine recomputes everything;
* the environment: the versions of the numerical libraries (jax, jaxlib, numpy, scipy, sympy, optax,
  diffrax), JAX's x64 mode, its backend, its device count and the options of ``$XLA_FLAGS`` (results are not
  proven invariant under any of them).

The key is part of both file names, so two configurations, code versions or environments never share a
path. The ``.npz`` name also carries the sha256 of its own bytes: once written it never changes (a rewrite
of identical bytes is harmless), and the ``.json`` -- replaced atomically -- always names an ``.npz`` that
matches it. Concurrent writers of one key are therefore harmless: a reader sees one writer's complete pair
or the other's. The ``.json`` holds the JSON scalars, the sha256 of the ``.npz`` and the provenance, and is
sealed by the sha256 of its own content (``json_sha256``; the file must be exactly the canonical
serialisation of that content). A reader reads each file's bytes once, verifies them and parses those
bytes; any edited, truncated or mismatched byte in either file is discarded with a :class:`CacheWarning`
and recomputed.

Where: ``$STEPLAB_RESULTS`` if set; else ``results/`` at the root of the steplab checkout when the
current directory is inside it; else the user cache directory (``$XDG_CACHE_HOME/steplab`` or
``~/.cache/steplab``). ``steplab cache --clear`` deletes the entries.
"""
from __future__ import annotations

import contextlib
import contextvars
import functools
import hashlib
import io
import json
import math
import os
import platform
import re
import secrets
import subprocess
import tempfile
import time
import warnings
import zipfile
from importlib import metadata
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np

__all__ = ["write_atomic", "unwritable", "cached", "code_version", "config_digest", "results_dir", "xla_cache_dir", "provenance", "recompute", "memory_only",
           "topic_names", "part_owner", "CacheWarning", "ResultsFolderError", "read_meta", "prepare_results_dir",
           "remove_stale_temporaries"]

_PACKAGES = ("theory", "sims", "paper_checks")
_NAME = re.compile(r"^[A-Za-z0-9_.\-]+$")
_ROOT = Path(__file__).resolve().parent.parent
# libraries whose version can change a number a simulator or a derivation produces
_KEY_LIBRARIES = ("jax", "jaxlib", "numpy", "scipy", "sympy", "optax", "diffrax")
_FORMAT = 2  # entry layout; 1 was <name>.npz + <name>.json (such files are ignored, `steplab cache --clear` removes them)
# an .npz no .json names any more is removed once it is older than this: a writer publishes its .json right
# after its .npz, so a younger one may belong to a concurrent writer whose .json is about to name it
_ORPHAN_GRACE_S = 60.0
# a temporary file of a dead writer is removed only after this long: "dead" is judged by process id on this
# host, and a folder shared by several hosts may hold a live writer from another one
_DEAD_WRITER_GRACE_S = 60.0
# what a steplab writer names its temporary files (the random part keeps a user's "notes.2024.tmp" out of it)
_TMP = re.compile(r"^(?P<final>.+)\.(?P<pid>\d+)-[0-9a-f]{8}\.tmp$")
# inside a recompute() block: the (name, key) pairs it has recomputed so far; None outside one
_FRESH: contextvars.ContextVar[set | None] = contextvars.ContextVar("steplab_fresh", default=None)
# inside a memory_only() block: the entries computed in it, by (name, key); None outside one
_MEMORY: contextvars.ContextVar[dict | None] = contextvars.ContextVar("steplab_memory", default=None)


class CacheWarning(UserWarning):
    """A cached entry was unreadable or inconsistent and is being recomputed, or could not be written."""


class ResultsFolderError(OSError):
    """The results folder cannot be created or written (raised by :func:`prepare_results_dir`)."""


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


def xla_cache_dir() -> Path:
    """Folder of JAX's persistent compilation cache: ``$JAX_COMPILATION_CACHE_DIR`` if set, else
    ``$XDG_CACHE_HOME/steplab-xla`` (default ``~/.cache/steplab-xla``).

    Outside the checkout on purpose: a fresh clone then reads the programs an earlier clone compiled
    (JAX keys each entry on the program, the compiler options, the device and the JAX version, so a
    stale entry is never read). The Makefile states the same rule for its targets.
    """
    env = os.environ.get("JAX_COMPILATION_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "steplab-xla"


def unwritable(folder: "Path | str") -> str | None:
    """Why ``folder`` cannot take files (None when it can): created if missing, then proven writable with a probe
    file (permissions alone do not tell: a read-only mount, a full disk, a file in the way)."""
    if not isinstance(folder, (str, os.PathLike)) or not str(folder):
        raise TypeError(f"folder: expected a folder path (str or Path), got {type(folder).__name__} {folder!r:.60}")
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        return "it exists and is not a folder"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".steplab-write-probe-", dir=folder)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


def prepare_results_dir() -> Path:
    """Create the results folder if needed, prove it writable, remove stale temporary files; return it.

    Commands call this before any work, so an unwritable folder is a usage error at the start instead of
    an error after every result has been computed. Raises :class:`ResultsFolderError` naming the folder.
    """
    folder = results_dir()
    why = unwritable(folder)
    if why is not None:
        raise ResultsFolderError(f"results folder {folder} is not writable ({why}); set STEPLAB_RESULTS to a "
                                 f"writable folder")
    remove_stale_temporaries(folder)
    return folder


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True  # another user's process (or a number no process can have: kept, to be safe)
    return True


def remove_stale_temporaries(folder: "Path | str", max_age_s: float = 3600.0) -> list[Path]:
    """Delete the temporary files of interrupted writes in ``folder``; return what was deleted.

    A temporary file is ``<final name>.<writer pid>-<8 hex digits>.tmp``. It is stale when it is older than
    ``max_age_s`` or when its writer is no longer running on this host (and it is over a minute old). Live
    writers' files and every other file are left alone.
    """
    if not isinstance(folder, (str, os.PathLike)) or isinstance(folder, bool):
        raise TypeError(f"folder: expected a path, got {type(folder).__name__} {folder!r:.60}")
    folder = Path(folder)
    if not folder.is_dir():
        raise ValueError(f"folder: expected an existing directory, got {str(folder)!r}")
    if isinstance(max_age_s, bool) or not isinstance(max_age_s, (int, float)) or not max_age_s > 0 \
            or not math.isfinite(max_age_s):
        raise ValueError(f"max_age_s: expected a positive number of seconds, got {max_age_s!r}")
    now, removed = time.time(), []
    for path in folder.iterdir():
        m = _TMP.match(path.name)
        if m is None or not path.is_file():
            continue
        try:
            age = now - path.stat().st_mtime
        except OSError:
            continue  # renamed into place or removed meanwhile
        pid = int(m["pid"])
        if age > max_age_s or (age > _DEAD_WRITER_GRACE_S and pid != os.getpid() and not _pid_alive(pid)):
            with contextlib.suppress(OSError):
                path.unlink()
                removed.append(path)
    return removed


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


def memory_only(enabled: bool = True) -> contextlib.AbstractContextManager[None]:
    """Within this block :func:`cached` neither reads nor writes the results folder (``--no-cache``).

    Each entry is computed once per block and kept in memory for the block's extent, so an experiment that
    several claims share still runs once. ``enabled=False`` inside a block restores the results folder.
    """
    if not isinstance(enabled, bool):
        raise TypeError(f"enabled: expected a bool, got {type(enabled).__name__} {enabled!r}")
    return _memory_only(enabled)


@contextlib.contextmanager
def _memory_only(enabled: bool) -> Iterator[None]:
    token = _MEMORY.set({} if enabled else None)
    try:
        yield
    finally:
        _MEMORY.reset(token)


@functools.lru_cache(maxsize=1)
def topic_names() -> tuple[str, ...]:
    """Topics: the modules and packages of ``paper_checks`` whose names do not start with ``_``."""
    folder = _ROOT / "paper_checks"
    names = {p.stem for p in folder.glob("*.py")} | {p.name for p in folder.iterdir() if (p / "__init__.py").exists()}
    return tuple(sorted(n for n in names if not n.startswith("_")))


def part_owner(part: str, topics: tuple[str, ...]) -> str | None:
    """The topic one path component belongs to: ``T`` itself or ``T_*``, the longest such ``T`` winning.

    Longest first, because one topic's name may be a prefix of another's (``sign``, ``sign_floor``): the
    component ``sign_floor_regime`` belongs to ``sign_floor``, never to ``sign``.
    """
    if not isinstance(part, str):
        raise TypeError(f"part: expected a path component (str), got {type(part).__name__} {part!r}")
    if not isinstance(topics, (tuple, list)) or not all(isinstance(t, str) for t in topics):
        raise TypeError(f"topics: expected a tuple of topic names (str), got {topics!r}")
    if part in topics:
        return part
    matches = [t for t in topics if part.startswith(t + "_")]
    return max(matches, key=len) if matches else None


def _owner(rel: Path) -> str | None:
    """The topic a source file (a path relative to the checkout) belongs to, or None for shared sources.

    The outermost path component below the package that belongs to a topic decides:
    ``paper_checks/sign_floor/_helpers.py`` belongs to ``sign_floor``.
    """
    topics = topic_names()
    for part in [*rel.parts[1:-1], Path(rel.parts[-1]).stem]:
        owner = part_owner(part, topics)
        if owner is not None:
            return owner
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


@functools.lru_cache(maxsize=1)
def _library_versions() -> tuple[tuple[str, str], ...]:
    found = []
    for dist in _KEY_LIBRARIES:
        try:
            found.append((dist, metadata.version(dist)))
        except metadata.PackageNotFoundError:
            pass
    return tuple(found)


@functools.lru_cache(maxsize=1)
def _steplab_version() -> str:
    return metadata.version("steplab")


def _environment() -> dict:
    """What besides the configuration and the code changes a result: library versions and JAX's numerics.

    x64 mode is read on every call (a program may switch it); the rest is fixed once JAX has started, the compiler
    flags included (:func:`_xla_flags`).
    """
    import jax

    return {"libraries": dict(_library_versions()), "x64": bool(jax.config.read("jax_enable_x64")),
            "backend": jax.default_backend(), "device_count": jax.device_count(), "xla_flags": list(_xla_flags())}


@functools.lru_cache(maxsize=1)
def _xla_flags() -> tuple[str, ...]:
    """The options of ``$XLA_FLAGS`` (sorted), read once: XLA reads them when JAX starts its backend. Compiler options
    move results by round-off (the tests compile with cheaper code generation), so an entry computed under other
    flags is never served under these; options that change no number only cost a recomputation."""
    return tuple(sorted(os.environ.get("XLA_FLAGS", "").split()))


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
    """The cache key of ``config`` under the code version of ``topic`` and this process's environment."""
    _config(config)
    blob = json.dumps({"config": _canonical(config), "code": code_version(topic), "environment": _environment()},
                      sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


@functools.lru_cache(maxsize=1)
def _git_revision() -> str:
    """The checkout's revision, read once per process like the code version the keys use."""
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=5,
                             cwd=_ROOT)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True,
                               text=True, timeout=5, cwd=_ROOT)
        rev = out.stdout.strip() or "unknown"
        return rev + ("+dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _seed(config: dict, values: dict | None = None) -> Any:
    """The seed behind a result: the configuration's ``seed``, else a ``seed`` the computation returned.

    An integer, or a list of them (a seed per run); anything else is recorded by content.
    """
    for source in (config, values or {}):
        seed = source.get("seed")
        if seed is None or isinstance(seed, bool):
            continue
        if isinstance(seed, (int, np.integer)):
            return int(seed)
        a = np.asarray(seed) if isinstance(seed, (list, tuple, np.ndarray)) else None
        if a is not None and a.dtype.kind in "iu" and a.ndim == 1 and a.size <= 1000:
            return [int(v) for v in a]
        return _canonical(seed)
    return None


def provenance(config: dict, wall_s: float, topic: "str | tuple[str, ...] | None" = None) -> dict:
    """Provenance record stored next to every cached result."""
    import jax

    from theory import validate as V

    _config(config)
    wall_s = V.real("wall_s", wall_s, low=0.0)

    versions = dict(_library_versions())
    with contextlib.suppress(metadata.PackageNotFoundError):
        versions["steplab"] = _steplab_version()
    devices = jax.devices()
    env = _environment()
    return {
        "config": _canonical(config),
        "seed": _seed(config),
        "topic": topic,
        "git_revision": _git_revision(),
        "code_version": code_version(topic),
        "versions": versions,
        "python": platform.python_version(),
        "device_kind": devices[0].device_kind,
        "device_count": len(devices),
        "backend": env["backend"],
        "x64": env["x64"],
        "wall_s": round(wall_s, 3),
        "written": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


_ENCODE = json.JSONEncoder(sort_keys=True, ensure_ascii=True).encode  # one encoder, not one per value


def _dumps(body: dict) -> bytes:
    """The one serialisation of an entry's ``.json``: one sorted top-level key per line, ASCII.

    Each value is written by the C encoder on its line (``indent`` would select the pure-Python encoder,
    several times slower on every read, which re-serialises the file to verify it).
    """
    lines = [f" {_ENCODE(k)}: {_ENCODE(v)}" for k, v in sorted(body.items())]
    return ("{\n" + ",\n".join(lines) + "\n}\n").encode()


def _seal(body: dict) -> bytes:
    """``body`` serialised with ``json_sha256``: the sha256 of the serialisation of everything else."""
    payload = {k: v for k, v in body.items() if k != "json_sha256"}
    return _dumps({**payload, "json_sha256": _sha256(_dumps(payload))})


def _unseal(raw: bytes) -> dict:
    """The content of a sealed ``.json``; ValueError unless ``raw`` is exactly what :func:`_seal` writes.

    Comparing whole bytes (not only the checksum) also rejects edits that parse to the same content, such
    as changed whitespace: every byte of the file is covered.
    """
    meta = json.loads(raw)
    if not isinstance(meta, dict) or _seal(meta) != raw:
        raise ValueError("the .json does not match its own checksum (edited or damaged)")
    return meta


def _npz_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    """An ``.npz`` of ``arrays`` whose bytes depend only on the arrays (fixed member dates, sorted names)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED) as archive:
        for key in sorted(arrays):
            member = zipfile.ZipInfo(f"{key}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            with archive.open(member, "w", force_zip64=True) as fh:
                np.lib.format.write_array(fh, np.asanyarray(arrays[key]), allow_pickle=False)
    return buffer.getvalue()


def _json_path(directory: Path, name: str, key: str) -> Path:
    return directory / f"{name}.{key}.json"


def _read_once(directory: Path, name: str, key: str) -> dict[str, Any] | None:
    """One attempt at reading entry (name, key): its values, None for a miss; FileNotFoundError when the
    ``.npz`` its ``.json`` names is gone (replaced meanwhile); ValueError or OSError when damaged."""
    try:
        raw = _json_path(directory, name, key).read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        return None  # never computed under this key (or no results folder yet): an ordinary miss
    meta = _unseal(raw)
    if meta.get("name") != name or meta.get("key") != key or meta.get("format") != _FORMAT:
        raise ValueError(f"the .json describes entry {meta.get('name')!r} under key {meta.get('key')!r}")
    npz = meta["npz"]
    if not isinstance(npz, str) or not npz.startswith(f"{name}.{key}.") or Path(npz).name != npz:
        raise ValueError(f"the .json names an unexpected .npz {npz!r}")
    blob = (directory / npz).read_bytes()
    if len(blob) != meta["npz_bytes"] or _sha256(blob) != meta["npz_sha256"]:
        raise ValueError("the .npz does not match the checksum recorded in its .json")
    with np.load(io.BytesIO(blob), allow_pickle=False) as data:  # the bytes just verified, not the file again
        values = {k: data[k] for k in data.files}
    if sorted(values) != meta["arrays"]:
        raise ValueError("the .npz holds other arrays than its .json lists")
    values.update(meta["scalars"])
    return values


def _read(directory: Path, name: str, key: str) -> dict[str, Any] | None:
    """The cached values of (name, key) if the entry exists and is intact; None otherwise (with a warning
    when it exists but is damaged)."""
    try:
        for _ in range(3):
            try:
                return _read_once(directory, name, key)
            except FileNotFoundError:
                continue  # a concurrent writer replaced the entry between our two reads: read its new .json
        raise ValueError("the .npz its .json names is missing")
    except Exception as exc:  # noqa: BLE001 - any unreadable entry is discarded, never trusted
        warnings.warn(f"cache entry {name!r} ({key}) is corrupt ({exc}); recomputing", CacheWarning, stacklevel=3)
        return None


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically: a temporary file in the same folder, then a rename.

    The temporary name carries the writer's process id, so :func:`remove_stale_temporaries` can tell a dead
    writer's leftovers from a live one's; an interrupted write removes its own.
    """
    if isinstance(path, str):
        path = Path(path)
    if not isinstance(path, Path) or not path.name:
        raise TypeError(f"path: expected a file path (str or Path), got {type(path).__name__} {path!r:.60}")
    if not isinstance(data, (bytes, bytearray)):
        raise TypeError(f"data: expected bytes, got {type(data).__name__}")
    tmp = path.with_name(f"{path.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def _prune(directory: Path, name: str, key: str, keep: str) -> None:
    """Remove the ``.npz`` files of (name, key) that its ``.json`` no longer names (after the grace period)."""
    cutoff = time.time() - _ORPHAN_GRACE_S
    for path in directory.glob(f"{name}.{key}.*.npz"):
        with contextlib.suppress(OSError):
            if path.name != keep and path.stat().st_mtime < cutoff:
                path.unlink()


def _write(directory: Path, name: str, key: str, arrays: dict, scalars: dict, meta: dict) -> None:
    """Publish entry (name, key): the ``.npz`` under a name carrying its checksum, then the sealed ``.json``."""
    blob = _npz_bytes(arrays)
    digest = _sha256(blob)
    npz = f"{name}.{key}.{digest[:16]}.npz"
    directory.mkdir(parents=True, exist_ok=True)
    write_atomic(directory / npz, blob)
    body = {**meta, "format": _FORMAT, "name": name, "key": key, "npz": npz, "npz_sha256": digest,
            "npz_bytes": len(blob), "arrays": sorted(arrays), "scalars": scalars}
    write_atomic(_json_path(directory, name, key), _seal(body))
    _prune(directory, name, key, keep=npz)


def _split(values: Any) -> tuple[dict, dict]:
    """``compute()``'s dict split into JSON scalars and NumPy arrays."""
    if not isinstance(values, dict):
        raise TypeError(f"compute: expected it to return a dict, got {type(values).__name__}")
    scalars = {k: v for k, v in values.items() if v is None or isinstance(v, (str, bool, int, float))}
    arrays = {k: np.asarray(v) for k, v in values.items() if k not in scalars}
    for k, a in arrays.items():
        if a.dtype == object:
            raise TypeError(f"compute: value {k!r} is not a numeric array or a JSON scalar")
    for k in values:
        if not isinstance(k, str) or not k or "/" in k:
            raise TypeError(f"compute: value names must be non-empty strings without '/', got {k!r}")
    return scalars, arrays


def _copy(values: dict) -> dict:
    return {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in values.items()}


def cached(name: str, config: dict, compute: Callable[[], dict[str, Any]], *, topic: "str | tuple[str, ...] | None" = None,
           fresh: bool | None = None) -> dict[str, Any]:
    """Return ``compute()``, reusing entry ``name`` under the key of ``config`` when it exists and is intact.

    ``compute`` returns a flat dict: NumPy-convertible array values go to the ``.npz``; JSON
    scalars (str, int, float, bool, None) go to the ``.json``. The returned dict has the same keys
    either way. ``topic`` scopes the code version in the key (None: all sources). ``fresh=True``
    recomputes and overwrites; an enclosing :func:`recompute` block does so once per entry, and an enclosing
    :func:`memory_only` block keeps the entry in memory instead of the results folder. A result that cannot
    be written (a full disk) is returned with a :class:`CacheWarning`, not lost.
    """
    _name(name)
    _config(config)
    if not callable(compute):
        raise TypeError(f"compute: expected a callable returning a dict, got {type(compute).__name__}")
    if fresh is not None and not isinstance(fresh, bool):
        raise TypeError(f"fresh: expected True, False or None, got {type(fresh).__name__} {fresh!r}")
    key = config_digest(config, topic)
    memory = _MEMORY.get()
    if memory is not None:
        if not fresh and (name, key) in memory:
            return _copy(memory[(name, key)])
        scalars, arrays = _split(compute())
        memory[(name, key)] = {**scalars, **arrays}
        return _copy(memory[(name, key)])

    block = _FRESH.get()
    directory = results_dir()
    if fresh is None:
        fresh = block is not None and (name, key) not in block
    if not fresh:
        hit = _read(directory, name, key)
        if hit is not None:
            return hit

    start = time.perf_counter()
    values = compute()
    wall = time.perf_counter() - start
    scalars, arrays = _split(values)
    meta = provenance(config, wall, topic)
    meta["seed"] = _seed(config, values)
    try:
        _write(directory, name, key, arrays, scalars, meta)
    except OSError as exc:
        warnings.warn(f"cache entry {name!r} could not be written to {directory} ({exc}); the result is used but "
                      "not kept", CacheWarning, stacklevel=2)
    if block is not None:
        block.add((name, key))
    return {**scalars, **arrays}


def read_meta(name: str, config: dict | None = None, topic: "str | tuple[str, ...] | None" = None) -> dict | None:
    """The provenance JSON of a cached entry (None if absent or damaged).

    With ``config`` (and ``topic``, as given to :func:`cached`), the entry under exactly that key; without,
    the most recently written intact entry named ``name`` under any key (any code version).
    """
    _name(name)
    directory = results_dir()
    if config is not None:
        paths = [_json_path(directory, name, config_digest(config, topic))]
    else:
        pattern = re.compile(rf"^{re.escape(name)}\.[0-9a-f]{{16}}\.json$")
        paths = [p for p in directory.glob(f"{name}.*.json") if pattern.match(p.name)]
    found = []
    for path in paths:
        try:
            meta = _unseal(path.read_bytes())
        except (OSError, ValueError):
            continue
        if meta.get("name") == name:
            found.append(meta)
    return max(found, key=lambda m: str(m.get("written", ""))) if found else None
