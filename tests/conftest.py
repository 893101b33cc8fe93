import gc
import os
import re

import pytest

_ROOT = os.path.join(os.path.dirname(__file__), "..")
# Tests never read or write the user's results/ cache.
os.environ.setdefault("STEPLAB_RESULTS", os.path.join(_ROOT, ".pytest_cache", "results"))

# Most of the fast tier's CPU time is XLA's CPU compiler, not the runs: a quick-budget claim runs its
# programs once, for a second or less. Two compiler options halve that time: XLA's older
# elemental emitters instead of its fusion emitters, and LLVM optimization level 1 instead of 3.
# Measured on 79 of the suite's programs: 99 s of compilation -> 38 s; the runs take ~10 % longer;
# the whole fast tier: 805 -> 480-530 CPU-s on two cores (two runs). The programs compute the same
# operations, in IEEE double, to round-off (every comparison in the suite allows round-off or is
# statistical); the figures and `make check` keep XLA's defaults, where long runs, not compilation,
# dominate. A third option keeps each program's LLVM module in one piece: XLA splits it for parallel
# code generation, which on two cores shared by two test workers costs more than it saves (79 programs:
# 34-40 s -> 30-34 s of compilation in replays on a busy machine; the code is the same). Set in the
# environment before JAX creates its CPU client, and only where the user's XLA_FLAGS do not choose these
# options themselves.
TEST_XLA_FLAGS = ("--xla_cpu_use_fusion_emitters=false", "--xla_backend_optimization_level=1",
                  "--xla_cpu_parallel_codegen_split_count=1")
_flags = os.environ.get("XLA_FLAGS", "")
os.environ["XLA_FLAGS"] = " ".join([_flags, *(f for f in TEST_XLA_FLAGS if f.split("=")[0] not in _flags)]).strip()

import jax  # noqa: E402

import sims  # noqa: E402,F401  (enables float64 before any test touches JAX)

# The fast tier is dominated by XLA compilation. Importing sims turns on JAX's persistent compilation
# cache in the user's cache folder (sims.cache.xla_cache_dir; the Makefile exports the same folder), so
# the two xdist workers, every later run and a second clone reuse each other's programs instead of
# compiling them again.

_TOPIC_FILE = re.compile(r"test_([a-z_]+)\.py$")


def _topic(item: pytest.Item, topics: set[str]) -> str | None:
    """The topic a test exercises: from its file (test_<topic>.py) or its parameter id (<topic>:..., <topic>....)."""
    m = _TOPIC_FILE.search(item.fspath.basename)
    if m:
        # test_<topic>.py and test_<topic>_<part>.py (mutants, paper tables, ...): the longest topic name wins, as
        # in the cache's ownership rule, so a topic's extra test files share its worker and its computed experiments
        owners = [t for t in topics if m.group(1) == t or m.group(1).startswith(t + "_")]
        if owners:
            return max(owners, key=len)
    callspec = getattr(item, "callspec", None)
    if callspec is not None:
        head = re.split(r"[:.\[]", callspec.id, maxsplit=1)[0]
        if head in topics:
            return head
    return None


def pytest_configure(config):
    # registered here too, so `-p no:xdist` (one process) runs under --strict-markers
    config.addinivalue_line("markers", "xdist_group(name): tests that share one xdist worker (--dist loadgroup)")
    config.addinivalue_line("markers", "power: a claim rerun with a deliberate mistake in its theory "
                                       "(tests/test_*_mutants.py); excluded from `make test`")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Group each topic's unit tests, contract rows and claims onto one xdist worker (``--dist loadgroup``).

    They share compiled programs (same simulators, same shapes) and computed experiments, which in-process
    caches then reuse. First among the hooks, so the markers are there when xdist reads them.
    """
    from sims.cache import topic_names

    topics = set(topic_names())
    grouped = bool(getattr(config.option, "loadgroup", False))  # set by xdist in its workers
    weight: dict[str, float] = {}
    owner: dict[int, str | None] = {}
    for item in items:
        if item.fspath.basename.endswith("_mutants.py"):
            # a claim rerun under a deliberately broken theory: a power audit, run by `make test-all` and the
            # mutation tool, not by `make test` (they are a third of the cold fast tier's growth per topic)
            item.add_marker(pytest.mark.power)
        topic = _topic(item, topics)
        owner[id(item)] = topic
        if topic is not None:
            item.add_marker(pytest.mark.xdist_group(topic))
            weight[topic] = weight.get(topic, 0.0) + _cost(item)
            if grouped and hasattr(item, "_id"):
                _suffix_group(item, topic)
    if grouped:
        # xdist hands out groups in order of first appearance: the heaviest topics first and the single shared tests
        # last, so the two workers finish together instead of one starting a heavy topic while the other idles
        # (the stable sort keeps each group's own order)
        items.sort(key=lambda it: -weight.get(owner[id(it)], 0.0) if owner[id(it)] is not None else 0.0)


def _cost(item: pytest.Item) -> float:
    """A rough relative cost of a test, to order the topic groups: a claim at the quick budget compiles and runs its
    experiments; a contract row two small programs; a bad-input row raises before any compilation."""
    name = item.fspath.basename
    return 3.0 if name == "test_power.py" else 0.01 if name == "test_bad_input.py" else (
        0.5 if name == "test_contract.py" else 0.3)


def _suffix_group(item: pytest.Item, group: str) -> None:
    """Append ``@group`` to the node id, which xdist's scheduler reads to keep a group on one worker.

    pytest-xdist 3.8 appends it to ``item._nodeid``, which pytest 9 no longer reads (its node ids live in
    ``item._id``): without this, ``--dist loadgroup`` spread every group over both workers.
    """
    from _pytest.nodeid import coerce_node_id

    if not item.nodeid.endswith("@" + group):
        item._id = coerce_node_id(f"{item.nodeid}@{group}")


def pytest_sessionfinish(session):
    """In a test worker, free JAX's compiled programs and collect garbage before the worker reports back.

    pytest-xdist's controller ends a worker 5 s after the worker reports its session finished (execnet
    then sends it SIGINT). pytest's own cleanup after that report runs a full garbage collection, in
    which JAX's gc callback releases the thousands of programs a worker compiled; on two busy cores it
    outlasted the 5 s and was interrupted: a passing ``make test`` printed a ``KeyboardInterrupt``
    traceback from ``_xla_gc_callback``. Here, before the report (xdist sends it after every
    sessionfinish hook), the same work has no deadline, and ``gc.freeze()`` leaves the later
    collection nothing to scan.
    """
    if not hasattr(session.config, "workerinput"):  # one process: nothing waits on its cleanup
        return
    jax.clear_caches()
    gc.collect()
    gc.freeze()
