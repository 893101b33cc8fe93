import os
import re

import pytest

_ROOT = os.path.join(os.path.dirname(__file__), "..")
# Tests never read or write the user's results/ cache.
os.environ.setdefault("STEPLAB_RESULTS", os.path.join(_ROOT, ".pytest_cache", "results"))

import jax  # noqa: E402

import sims  # noqa: E402,F401  (enables float64 before any test touches JAX)

# The fast tier is dominated by XLA compilation. A compilation cache on disk lets the two xdist
# workers (and every later run) reuse each other's programs instead of compiling them again. The
# Makefile points JAX_COMPILATION_CACHE_DIR at one folder for tests, figures, check and bench
# (`make clean` removes it); a bare `pytest` uses the same default. Programs that compile in under
# 0.1 s are not worth a file read and a cache entry each.
jax.config.update("jax_compilation_cache_dir",
                  os.environ.get("JAX_COMPILATION_CACHE_DIR") or os.path.join(_ROOT, "build", "xla-cache"))
jax.config.update("jax_persistent_cache_min_compile_time_secs",
                  float(os.environ.get("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0.1")))

_TOPIC_FILE = re.compile(r"test_([a-z_]+)\.py$")


def _topic(item: pytest.Item, topics: set[str]) -> str | None:
    """The topic a test exercises: from its file (test_<topic>.py) or its parameter id (<topic>:..., <topic>....)."""
    m = _TOPIC_FILE.search(item.fspath.basename)
    if m and m.group(1) in topics:
        return m.group(1)
    callspec = getattr(item, "callspec", None)
    if callspec is not None:
        head = re.split(r"[:.\[]", callspec.id, maxsplit=1)[0]
        if head in topics:
            return head
    return None


def pytest_configure(config):
    # registered here too, so `-p no:xdist` (one process) runs under --strict-markers
    config.addinivalue_line("markers", "xdist_group(name): tests that share one xdist worker (--dist loadgroup)")


def pytest_collection_modifyitems(config, items):
    """Group each topic's unit tests, contract rows and claims onto one xdist worker (``--dist loadgroup``).

    They share compiled programs (same simulators, same shapes), which in-process caches then reuse.
    """
    from sims.cache import topic_names

    topics = set(topic_names())
    for item in items:
        topic = _topic(item, topics)
        if topic is not None:
            item.add_marker(pytest.mark.xdist_group(topic))
