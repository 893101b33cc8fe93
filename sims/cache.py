r"""Results cache: ``results/<name>.npz`` (arrays) plus ``results/<name>.json`` (provenance).

A cached entry is valid only if its key matches
:math:`\mathrm{sha256}(\text{config} \,\|\, \text{code version})`, where the code version hashes
every source file of the ``theory``, ``sims`` and ``paper_checks`` packages. Changing either the
configuration or any line of the code therefore recomputes, so a stale result is never plotted.

The JSON records the config, the seed (``config["seed"]`` when present), the git revision, the
package versions, the device kind and the wall time of the computation.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import re
import subprocess
import time
from importlib import metadata
from pathlib import Path
from typing import Any, Callable

import numpy as np

__all__ = ["cached", "code_version", "results_dir", "provenance"]

_PACKAGES = ("theory", "sims", "paper_checks")
_NAME = re.compile(r"^[A-Za-z0-9_.\-]+$")


def results_dir() -> Path:
    """Directory of cached results: ``$STEPLAB_RESULTS`` or ``./results``."""
    return Path(os.environ.get("STEPLAB_RESULTS", "results"))


@functools.lru_cache(maxsize=1)
def code_version() -> str:
    """sha256 over the sources of the ``theory``, ``sims`` and ``paper_checks`` packages."""
    digest = hashlib.sha256()
    root = Path(__file__).resolve().parent.parent
    for package in _PACKAGES:
        for path in sorted((root / package).rglob("*")):
            if path.suffix in {".py", ".json"} and "__pycache__" not in path.parts:
                digest.update(str(path.relative_to(root)).encode())
                digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _git_revision() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=5,
            cwd=Path(__file__).resolve().parent,
        )
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True,
            timeout=5, cwd=Path(__file__).resolve().parent,
        )
        rev = out.stdout.strip() or "unknown"
        return rev + ("+dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def provenance(config: dict, wall_s: float) -> dict:
    """Provenance record stored next to every cached result."""
    import jax

    versions = {}
    for dist in ("jax", "jaxlib", "numpy", "scipy", "sympy", "optax", "diffrax", "steplab"):
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            pass
    devices = jax.devices()
    return {
        "config": config,
        "seed": config.get("seed"),
        "git_revision": _git_revision(),
        "code_version": code_version(),
        "versions": versions,
        "python": platform.python_version(),
        "device_kind": devices[0].device_kind,
        "device_count": len(devices),
        "wall_s": round(wall_s, 3),
    }


def _key(config: dict) -> str:
    blob = json.dumps(config, sort_keys=True, default=str) + code_version()
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def cached(name: str, config: dict, compute: Callable[[], dict[str, Any]], *, fresh: bool = False) -> dict[str, Any]:
    """Return ``compute()``, reusing ``results/<name>.*`` when its key matches.

    ``compute`` returns a flat dict: NumPy-convertible array values go to the ``.npz``; JSON
    scalars (str, int, float, bool, None) go to the ``.json``. The returned dict has the same
    keys either way. ``fresh=True`` recomputes and overwrites.
    """
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(f"name: expected letters, digits, '.', '_' or '-', got {name!r}")
    if not isinstance(config, dict):
        raise TypeError(f"config: expected a dict, got {type(config).__name__}")
    directory = results_dir()
    npz_path, json_path = directory / f"{name}.npz", directory / f"{name}.json"
    key = _key(config)
    if not fresh and npz_path.exists() and json_path.exists():
        meta = json.loads(json_path.read_text())
        if meta.get("key") == key:
            with np.load(npz_path, allow_pickle=False) as data:
                values = {k: data[k] for k in data.files}
            values.update(meta["scalars"])
            return values

    start = time.perf_counter()
    values = compute()
    wall = time.perf_counter() - start
    if not isinstance(values, dict):
        raise TypeError(f"compute: expected it to return a dict, got {type(values).__name__}")
    scalars = {k: v for k, v in values.items() if v is None or isinstance(v, (str, bool, int, float))}
    arrays = {k: np.asarray(v) for k, v in values.items() if k not in scalars}
    directory.mkdir(parents=True, exist_ok=True)
    meta = {"name": name, "key": key, "scalars": scalars, **provenance(config, wall)}
    # write-then-rename: a concurrent reader (parallel runs sharing results/) never sees a half-written file
    tmp = f".{os.getpid()}.tmp"
    with open(npz_path.with_name(npz_path.name + tmp), "wb") as fh:
        np.savez(fh, **arrays)
    json_path.with_name(json_path.name + tmp).write_text(json.dumps(meta, indent=2, sort_keys=True, default=str) + "\n")
    os.replace(npz_path.with_name(npz_path.name + tmp), npz_path)
    os.replace(json_path.with_name(json_path.name + tmp), json_path)
    return values
