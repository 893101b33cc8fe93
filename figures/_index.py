"""The claim index: the registry's metadata on disk, so that ``steplab list`` needs no JAX.

Claims register themselves when their topic modules are imported, and those import JAX, sympy and
every simulator (about 2 s). Listing needs only the claims' metadata, so the first listing after an
edit writes that metadata to ``claim-index.json`` and later listings read it back (about 0.1 s).
The registry stays the single source of truth: the file is keyed by a hash of every source the
registrations can depend on (``theory/``, ``sims/``, ``paper_checks/`` and this module), read only
when the key matches, and rebuilt from the live registry otherwise. It is never written while a
topic fails to import, so that failure is reported again on the next listing.

Where: ``build/claim-index.json`` in a steplab checkout (``make clean`` removes it), else
``$XDG_CACHE_HOME/steplab/claim-index.json`` (default ``~/.cache/steplab``). A folder that cannot be
written only costs the speed: the registry is then read live every time.
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

__all__ = ["FIELDS", "claim_records", "live_records", "index_path", "sources_key"]

ROOT = Path(__file__).resolve().parent.parent
_PACKAGES = ("theory", "sims", "paper_checks")
#: what the index keeps of each claim (``cite`` is the paper's citation, for ``steplab list papers``)
FIELDS = ("id", "paper", "topic", "kind", "provenance", "source", "statement", "cite")


def index_path() -> Path:
    """Where the index lives (see the module docstring)."""
    if (ROOT / "pyproject.toml").is_file():
        return ROOT / "build" / "claim-index.json"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "steplab" / "claim-index.json"


def sources_key() -> str:
    """sha256 over the paths and bytes of every source a claim's registration can read (a few ms)."""
    digest = hashlib.sha256()
    files = [p for package in _PACKAGES for p in sorted((ROOT / package).rglob("*"))
             if p.suffix in {".py", ".json"} and "__pycache__" not in p.parts]
    for path in [*files, Path(__file__).resolve()]:
        digest.update(str(path.relative_to(ROOT)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def live_records() -> tuple[list[dict], dict[str, str]]:
    """Every registered claim's metadata (imports every topic), and the topics that failed to import."""
    from paper_checks import claims, import_errors

    records = [{"id": c.id, "paper": c.paper.key, "topic": c.topic, "kind": c.kind, "provenance": c.provenance,
                "source": c.source, "statement": c.statement, "cite": c.paper.cite()} for c in claims()]
    return records, import_errors()


def _read(path: Path, key: str) -> list[dict] | None:
    """The index's records if ``path`` holds an index for ``key``; None if it is missing, stale or unreadable."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("key") != key or not isinstance(data.get("claims"), list):
        return None
    records = data["claims"]
    if not all(isinstance(r, dict) and set(r) == set(FIELDS) for r in records):
        return None
    return records


def _write(path: Path, key: str, records: list[dict]) -> None:
    """Write the index atomically (a concurrent reader sees the old file or the new one, never half)."""
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps({"key": key, "claims": records}, indent=0))
        os.replace(tmp, path)
    except OSError:
        tmp.unlink(missing_ok=True)  # a read-only install: list from the live registry every time


def claim_records(report: bool = True) -> list[dict]:
    """The metadata of every registered claim, in registration order: from the index when it is
    current, else from the live registry (which then rewrites the index).

    With ``report``, topics that fail to import are reported on stderr, as ``steplab check`` does
    (which passes ``report=False``: it reports them itself).
    """
    key, path = sources_key(), index_path()
    records = _read(path, key)
    if records is not None:
        return records
    records, errors = live_records()
    for topic, trace in errors.items() if report else ():
        print(f"topic {topic!r} failed to import; its claims are missing:\n{trace}", file=sys.stderr)
    if not errors:
        _write(path, key, records)
    return records
