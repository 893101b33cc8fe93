r"""The guide to adding a topic (``docs/adding_a_topic.md``) lists every file a topic needs: a toy topic built from
the guide's code blocks alone passes the checks that every topic must pass.

The guide carries its templates in fenced code blocks whose first line is a marker (``# file: PATH``,
``# append: PATH``, ``# insert: PATH after: TEXT``; see :func:`guide_blocks`). The test copies the repository's
sources into a temporary folder (see below), applies the guide's blocks there -- never in the checkout -- and runs, in
subprocesses with this interpreter, the copy as working directory and first on ``sys.path``, and a results cache
of its own: the topic's unit tests, contract rows, bad-input rows and claims (both tiers), the cross-topic checks
(``tests/test_docs.py``, ``tests/test_registry.py``, the contract and bad-input coverage tests), the claims table
(``python -m paper_checks``) and the figures with the topic's report (``python -m figures``). A file or entry the
guide forgets shows up as the check that needs it failing, and that check's message is quoted.

The sources are the committed ones (``git archive HEAD``; the files on disk outside a git checkout), so another
change's work in progress in the working tree cannot fail this test; the guide is read from the working tree and
replaces ``docs/adding_a_topic.md`` in the copy. ``STEPLAB_GUIDE=PATH`` tests another copy of the guide (e.g. one
with a block deleted, to see the test go red); ``STEPLAB_GUIDE_REV=COMMIT`` adds the toy topic to another commit.
"""
from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GUIDE = Path(os.environ.get("STEPLAB_GUIDE") or ROOT / "docs" / "adding_a_topic.md")
REV = os.environ.get("STEPLAB_GUIDE_REV") or "HEAD"  # the commit whose sources the toy topic is added to
TOPIC = "toy"  # the guide's toy topic
# what a checkout's sources are: copied into the temporary tree (build outputs, caches and the venv are not)
SOURCES = ("theory", "sims", "paper_checks", "figures", "tests", "docs", "examples", "README.md", "pyproject.toml",
           "Makefile", "CITATION.cff", "LICENSE")
_SKIP = {"__pycache__", ".pytest_cache", "_build", "out"}
_FENCE = re.compile(r"^```[^\n]*\n(.*?)^```[ \t]*$", re.M | re.S)
_MARKER = re.compile(r"^# (file|append|insert): (\S+)(?: after: (.+))?$")
TIMEOUT_S = 600


@dataclass(frozen=True)
class Block:
    """One marked code block of the guide: ``action`` (file, append or insert) on ``path``, ``body`` its text."""

    action: str
    path: str
    body: str
    anchor: str | None = None


def guide_blocks(text: str) -> list[Block]:
    """The marked code blocks of the guide, in order (blocks without a marker are illustrations, left out)."""
    blocks = []
    for body in _FENCE.findall(text):
        first, _, rest = body.partition("\n")
        m = _MARKER.match(first.strip())
        if m is None:
            continue
        action, path, anchor = m.groups()
        assert (action == "insert") == (anchor is not None), f"guide: '{first}': only insert takes 'after: TEXT'"
        blocks.append(Block(action, path, rest, anchor))
    return blocks


def _committed(tree: Path) -> bool:
    """Extract :data:`SOURCES` as committed (:data:`REV`, ``HEAD``) into ``tree``; False outside a git checkout."""
    try:
        done = subprocess.run(["git", "archive", "--format=tar", REV, "--", *SOURCES], cwd=ROOT,
                              capture_output=True, timeout=120)
    except (OSError, subprocess.SubprocessError):
        return False
    if done.returncode != 0:
        assert REV == "HEAD", f"STEPLAB_GUIDE_REV={REV}: {done.stderr.decode()[-500:]}"
        return False
    with tarfile.open(fileobj=io.BytesIO(done.stdout)) as tar:
        tar.extractall(tree, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
    return True


def _copy_sources(tree: Path) -> None:
    """The repository's sources into ``tree``, and the guide under test as ``docs/adding_a_topic.md``.

    In a git checkout the sources are the committed ones (``HEAD``), so work in progress elsewhere in the working
    tree (another topic's half-written module) cannot fail the guide's test; outside one, the files on disk.
    """
    if not _committed(tree):
        for name in SOURCES:
            src = ROOT / name
            if src.is_dir():
                shutil.copytree(src, tree / name, ignore=lambda d, names: [n for n in names if n in _SKIP])
            elif src.exists():
                shutil.copy2(src, tree / name)
    (tree / "docs" / "adding_a_topic.md").write_text(GUIDE.read_text())


def apply_blocks(blocks: list[Block], tree: Path) -> list[str]:
    """Write the blocks into ``tree``; the paths of the files created."""
    created = []
    for b in blocks:
        target = tree / b.path
        if b.action == "file":
            assert not target.exists(), f"guide: '# file: {b.path}' would overwrite an existing file of the repository"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(b.body)
            created.append(b.path)
            continue
        assert target.is_file(), f"guide: '# {b.action}: {b.path}': no such file in the repository"
        text = target.read_text()
        if b.action == "append":
            target.write_text(text.rstrip("\n") + "\n\n" + b.body)
        else:
            lines = text.splitlines(keepends=True)
            at = next((i for i, line in enumerate(lines) if line.startswith(b.anchor)), None)
            assert at is not None, f"guide: '# insert: {b.path} after: {b.anchor}': no line of {b.path} starts so"
            target.write_text("".join(lines[:at + 1]) + b.body + "".join(lines[at + 1:]))
    return created


def _env(tmp_path: Path, tree: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "COV_"))}
    env.update(PYTHONPATH=str(tree), STEPLAB_RESULTS=str(tmp_path / "results"),
               JAX_COMPILATION_CACHE_DIR=str(tmp_path / "xla-cache"), PYTHONDONTWRITEBYTECODE="1")
    return env


def _run(argv: list[str], tree: Path, env: dict) -> subprocess.CompletedProcess:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, *argv], cwd=tree, env=env, capture_output=True, text=True,
                          timeout=TIMEOUT_S)
    print(f"{time.perf_counter() - start:5.1f} s  python {' '.join(argv[:5])} ...")  # shown when the test fails
    return done


def _failure(step: str, done: subprocess.CompletedProcess) -> str:
    """What went wrong, the failing tests' one-line summaries first."""
    out = done.stdout + done.stderr
    summary = [line for line in out.splitlines() if line.startswith(("FAILED", "ERROR", "E   "))]
    return (f"the toy topic built from {GUIDE.name} fails {step} (exit {done.returncode}); is a file or an entry "
            f"missing from the guide?\n" + "\n".join(summary[:40]) + "\n--- output (tail) ---\n" + out[-4000:])


def test_the_guide_creates_only_files_of_the_topic_and_its_paper():
    """The guide's blocks parse, and each file it creates is the toy topic's or its paper's (never a shared one)."""
    blocks = guide_blocks(GUIDE.read_text())
    assert blocks, f"{GUIDE}: no marked code blocks"
    for b in blocks:
        if b.action == "file":
            assert TOPIC in Path(b.path).stem or b.path.startswith("docs/papers/"), b.path


def test_the_guide_states_the_toy_topics_size_and_it_stays_small():
    """A newcomer's one-claim topic, every file and entry, in at most 250 non-blank lines, as the guide says."""
    text = GUIDE.read_text()
    blocks = guide_blocks(text)
    lines = sum(len([line for line in b.body.splitlines() if line.strip()]) for b in blocks)
    stated = re.search(r"\*\*(\d+) non-blank lines\*\* in (\d+) blocks", text)
    assert stated and (int(stated[1]), int(stated[2])) == (lines, len(blocks)), (lines, len(blocks))
    assert lines <= 250, lines


# the slow tier, beside the docs build: four subprocesses that each load all fourteen topics (~20 s of one worker)
@pytest.mark.slow
def test_a_toy_topic_built_from_the_guide_passes_every_topic_check(tmp_path):
    blocks = guide_blocks(GUIDE.read_text())
    tree = tmp_path / "repo"
    _copy_sources(tree)
    created = apply_blocks(blocks, tree)
    env = _env(tmp_path, tree)
    t = TOPIC
    try:
        # the topic's own tests (both tiers: its rows and claims are cheap) and the coverage tests every topic meets
        done = _run(["-m", "pytest", "-v", "-p", "no:xdist", "-p", "no:cacheprovider", f"tests/test_{t}.py",
                     "tests/test_contract.py", "tests/test_bad_input.py", "tests/test_power.py", "tests/test_examples.py",
                     "-k", f"test_{t}.py or [{t}: or [{t}. or covers_every_topic or every_public_function_has_a_row "
                     "or every_topic_imports or documented_example or build_no_checks"], tree, env)
        assert done.returncode == 0, _failure("its tests", done)
        ran = done.stdout
        for kind, pattern in (("unit test", rf"tests/test_{t}\.py::\S+ PASSED"),
                              ("contract row", rf"test_contract\.py::\S+\[{t}\.\S+\] PASSED"),
                              ("bad-input row", rf"test_bad_input\.py::\S+\[{t}:\S+\] PASSED"),
                              ("claim", rf"test_power\.py::\S+\[{t}:\S+\] PASSED")):
            assert re.search(pattern, ran), f"no {kind} of the toy topic ran:\n{ran[-3000:]}"

        done = _run(["-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:cacheprovider", "-m", "not slow",
                     "tests/test_docs.py", "tests/test_registry.py"], tree, env)
        assert done.returncode == 0, _failure("the documentation and registry checks", done)

        done = _run([f"examples/{t}.py"], tree, env)
        assert done.returncode == 0 and "status on your parameters: passed" in done.stdout, _failure("its example", done)

        done = _run(["-m", "paper_checks", "--topic", t, "--budget", "quick", "--json"], tree, env)
        assert done.returncode == 0, _failure("`python -m paper_checks --topic toy`", done)
        records = json.loads(done.stdout)
        ids = [r["id"] for r in records]
        assert ids and all(r["status"] == "passed" for r in records), records

        out = tmp_path / "figures"
        done = _run(["-m", "figures", "--topic", t, "--budget", "quick", "--out", str(out)], tree, env)
        assert done.returncode == 0, _failure("`python -m figures --topic toy`", done)
        assert "LayoutWarning" not in done.stderr, done.stderr[-3000:]
        drawn = sorted(p.stem for p in out.glob("*.png"))
        assert drawn, f"figures/{t}.py drew nothing:\n{done.stdout}{done.stderr[-3000:]}"
        report = (out / f"report_{t}.md").read_text()
        for name in (*ids, *drawn):
            assert name in report, f"report_{t}.md does not show {name}"
    finally:
        leaked = [p for p in created if (ROOT / p).exists()]
        assert not leaked, f"the toy topic's files exist in the checkout: {leaked}"
