import json
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

from sims import cache

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def results(tmp_path, monkeypatch):
    monkeypatch.setenv("STEPLAB_RESULTS", str(tmp_path))
    return tmp_path


def _entry(folder: Path, name: str) -> tuple[Path, Path]:
    """The one entry named ``name`` in ``folder``: its ``.json`` and the ``.npz`` that ``.json`` names."""
    (js,) = [p for p in folder.glob(f"{name}.*.json")]
    return js, folder / json.loads(js.read_text())["npz"]


def _counter():
    calls = []

    def compute():
        calls.append(1)
        return {"x": np.arange(3.0), "label": "ok", "n": 3}

    return calls, compute


def test_hit_miss_and_invalidation(results, monkeypatch):
    calls, compute = _counter()
    a = cache.cached("demo", {"seed": 7, "n": 3}, compute)
    b = cache.cached("demo", {"seed": 7, "n": 3}, compute)
    assert len(calls) == 1 and b["label"] == "ok" and b["n"] == 3
    np.testing.assert_array_equal(a["x"], b["x"])
    js, npz = _entry(results, "demo")
    meta = json.loads(js.read_text())
    assert meta["seed"] == 7 and meta["config"] == {"seed": 7, "n": 3}
    assert {"git_revision", "versions", "device_kind", "wall_s", "code_version", "npz_sha256"} <= set(meta)
    assert js.name == f"demo.{cache.config_digest({'seed': 7, 'n': 3})}.json"  # the key is in the name
    assert npz.name.startswith(js.name[:-len("json")]) and npz.name.endswith(".npz")

    cache.cached("demo", {"seed": 8, "n": 3}, compute)  # config change invalidates
    assert len(calls) == 2
    monkeypatch.setattr(cache, "code_version", lambda topic=None: "another-version")  # code change invalidates
    cache.cached("demo", {"seed": 8, "n": 3}, compute)
    assert len(calls) == 3
    cache.cached("demo", {"seed": 8, "n": 3}, compute, fresh=True)
    assert len(calls) == 4
    with cache.recompute():
        cache.cached("demo", {"seed": 8, "n": 3}, compute)
    assert len(calls) == 5


def test_a_recompute_block_recomputes_each_entry_once(results):
    """``--fresh``: an experiment shared by several claims is recomputed by the first and read by the others."""
    calls, compute = _counter()
    cache.cached("shared", {"n": 1}, compute)
    with cache.recompute():
        first = cache.cached("shared", {"n": 1}, compute)
        again = cache.cached("shared", {"n": 1}, compute)
        cache.cached("shared", {"n": 2}, compute)  # another config is another entry
        cache.cached("shared", {"n": 1}, compute, fresh=True)  # an explicit fresh=True always recomputes
        with cache.recompute(False):
            cache.cached("other", {"n": 1}, compute)
            cache.cached("other", {"n": 1}, compute)  # plain caching inside recompute(False)
    assert len(calls) == 5
    np.testing.assert_array_equal(first["x"], again["x"])
    with cache.recompute():  # a new block recomputes again
        cache.cached("shared", {"n": 1}, compute)
    assert len(calls) == 6


def test_arrays_in_config_are_keyed_by_content(results):
    # two arrays whose repr is identical (numpy elides the middle) but whose contents differ
    a, b = np.zeros(5000), np.zeros(5000)
    b[2500] = 1.0
    assert repr(a) == repr(b)
    assert cache.config_digest({"x": a}) != cache.config_digest({"x": b})
    calls, compute = _counter()
    cache.cached("arr", {"x": a}, compute)
    cache.cached("arr", {"x": b}, compute)
    assert len(calls) == 2


@pytest.mark.parametrize("damage", ["truncate", "empty", "garbage_json", "swap_npz"])
def test_corrupt_entries_are_discarded_and_recomputed(results, damage):
    calls, compute = _counter()
    cache.cached("demo", {"n": 1}, compute)
    js, npz = _entry(results, "demo")
    if damage == "truncate":
        npz.write_bytes(npz.read_bytes()[:40])
    elif damage == "empty":
        npz.write_bytes(b"")
    elif damage == "garbage_json":
        js.write_text("{not json")
    else:  # a valid npz that is not the one the json describes (a half-completed pair)
        np.savez(npz, x=np.arange(4.0))
    with pytest.warns(cache.CacheWarning, match="corrupt"):
        again = cache.cached("demo", {"n": 1}, compute)
    assert len(calls) == 2
    np.testing.assert_array_equal(again["x"], np.arange(3.0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cache.cached("demo", {"n": 1}, compute)  # repaired: a clean hit
    assert len(calls) == 2


def test_topic_scoped_code_versions(tmp_path, monkeypatch):
    """Editing one topic's simulator changes its code version and no other topic's."""
    root = tmp_path / "repo"
    for pkg, files in {"theory": ["logistic.py", "sde.py", "__init__.py"],
                       "sims": ["logistic.py", "sde.py", "sweep.py", "__init__.py"],
                       "paper_checks": ["logistic.py", "sde.py", "_registry.py", "__init__.py"]}.items():
        (root / pkg).mkdir(parents=True)
        for f in files:
            (root / pkg / f).write_text(f"# {pkg}/{f}\n")
    monkeypatch.setattr(cache, "_ROOT", root)
    cache.topic_names.cache_clear()
    cache.code_version.cache_clear()
    try:
        assert cache.topic_names() == ("logistic", "sde")
        before = {t: cache.code_version(t) for t in ("logistic", "sde", ("logistic", "sde"))}
        (root / "sims" / "sde.py").write_text("# edited\n")
        cache.code_version.cache_clear()
        after = {t: cache.code_version(t) for t in ("logistic", "sde", ("logistic", "sde"))}
        assert after["logistic"] == before["logistic"] and after["sde"] != before["sde"]
        # a cross-link that uses both topics is recomputed when either changes
        assert after[("logistic", "sde")] != before[("logistic", "sde")]
        assert cache.code_version(("sde", "logistic")) == after[("logistic", "sde")]
        (root / "sims" / "sweep.py").write_text("# the shared engine, edited\n")
        cache.code_version.cache_clear()
        shared = {t: cache.code_version(t) for t in ("logistic", "sde")}
        assert shared["logistic"] != after["logistic"] and shared["sde"] != after["sde"]
        (root / "sims" / "reference").mkdir()
        (root / "sims" / "reference" / "logistic.py").write_text("# a bench case\n")
        (root / "sims" / "bench.py").write_text("# the bench runner\n")
        cache.code_version.cache_clear()
        assert cache.code_version("logistic") == shared["logistic"]  # benchmarks are never a result's input
        with pytest.raises(ValueError, match="topic"):
            cache.code_version("logistc")
        with pytest.raises(ValueError, match="topic"):
            cache.code_version(("logistic", "logistc"))
        with pytest.raises(TypeError, match="topic"):
            cache.code_version(())
    finally:
        cache.topic_names.cache_clear()
        cache.code_version.cache_clear()


def test_results_dir_rule(tmp_path, monkeypatch):
    monkeypatch.delenv("STEPLAB_RESULTS", raising=False)
    monkeypatch.chdir(cache._ROOT / "tests")
    assert cache.results_dir() == cache._ROOT / "results"  # anywhere inside the checkout: its results/
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache.results_dir() == tmp_path / "xdg" / "steplab"  # elsewhere: the user cache folder
    monkeypatch.setenv("STEPLAB_RESULTS", str(tmp_path / "mine"))
    assert cache.results_dir() == tmp_path / "mine"


def test_xla_cache_dir_rule(tmp_path, monkeypatch):
    monkeypatch.delenv("JAX_COMPILATION_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache.xla_cache_dir() == tmp_path / "xdg" / "steplab-xla"  # the user's, shared by every clone
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cache.xla_cache_dir() == Path.home() / ".cache" / "steplab-xla"
    monkeypatch.setenv("JAX_COMPILATION_CACHE_DIR", str(tmp_path / "mine"))
    assert cache.xla_cache_dir() == tmp_path / "mine"


def test_bad_names(results):
    with pytest.raises(ValueError, match="name"):
        cache.cached("../escape", {}, dict)
    with pytest.raises(TypeError, match="config"):
        cache.cached("ok", [1], dict)
    with pytest.raises(TypeError, match="config"):
        cache.config_digest({"f": object()})


def test_every_byte_of_both_halves_is_checked(results):
    """Any edited byte of the ``.json`` or the ``.npz`` makes the entry recompute with a CacheWarning, never serve."""
    calls = []

    def compute():
        calls.append(1)
        return {"x": np.linspace(0.0, 1.0, 5), "radius": 1.2345678, "label": "ok"}

    truth = cache.cached("exp.demo.quick", {"n": 1}, compute)
    js, npz = _entry(results, "exp.demo.quick")
    originals = {js: js.read_bytes(), npz: npz.read_bytes()}
    edits = 0
    for path, data in originals.items():
        for i in range(len(data)):
            for p, d in originals.items():
                p.write_bytes(d)
            path.write_bytes(data[:i] + bytes([data[i] ^ 0x01]) + data[i + 1:])
            with pytest.warns(cache.CacheWarning, match="corrupt"):
                got = cache.cached("exp.demo.quick", {"n": 1}, compute)
            assert got["radius"] == truth["radius"] and got["label"] == "ok"
            np.testing.assert_array_equal(got["x"], truth["x"])
            edits += 1
    assert len(calls) == 1 + edits  # every edit recomputed; none was served
    assert edits == sum(len(d) for d in originals.values()) > 1000


def test_a_changed_digit_of_a_measured_scalar_is_not_served(results):
    """The reported failure: one digit of "radius" edited in the .json gave a passing claim with a wrong value."""
    calls = []

    def compute():
        calls.append(1)
        return {"radius": 0.731, "x": np.zeros(2)}

    cache.cached("exp.logistic.sphere_cycle.quick", {}, compute)
    js, _ = _entry(results, "exp.logistic.sphere_cycle.quick")
    text = js.read_text()
    assert text.count('"radius": 0.731') == 1
    js.write_text(text.replace('"radius": 0.731', '"radius": 0.781'))
    with pytest.warns(cache.CacheWarning, match="checksum"):
        assert cache.cached("exp.logistic.sphere_cycle.quick", {}, compute)["radius"] == 0.731
    assert len(calls) == 2


def test_the_key_covers_code_config_libraries_and_jax_numerics(results, monkeypatch):
    env = cache._environment()
    assert {"jax", "jaxlib", "numpy", "scipy"} <= set(env["libraries"])
    assert env["x64"] is True and env["device_count"] >= 1 and env["backend"]
    assert env["xla_flags"] == sorted(os.environ.get("XLA_FLAGS", "").split())  # the tests' own compile options
    base = cache.config_digest({"n": 1}, "logistic")
    changed = {
        "numpy": {**env, "libraries": {**env["libraries"], "numpy": "0.0.1"}},
        "x64": {**env, "x64": False},
        "devices": {**env, "device_count": env["device_count"] + 1},
        "backend": {**env, "backend": "gpu"},
        "compiler flags": {**env, "xla_flags": sorted(env["xla_flags"] + ["--xla_backend_optimization_level=3"])},
    }
    for what, other in changed.items():
        monkeypatch.setattr(cache, "_environment", lambda other=other: other)
        assert cache.config_digest({"n": 1}, "logistic") != base, what
    monkeypatch.setattr(cache, "_environment", lambda: env)
    assert cache.config_digest({"n": 1}, "logistic") == base
    assert cache.config_digest({"n": 1}, "sde") != base  # another topic's code version
    assert cache.config_digest({"n": 2}, "logistic") != base


def test_each_key_has_its_own_files(results, monkeypatch):
    """Two configurations or two code versions never share a path, so neither can overwrite the other."""
    calls, compute = _counter()
    cache.cached("demo", {"n": 1}, compute)
    cache.cached("demo", {"n": 2}, compute)
    monkeypatch.setattr(cache, "code_version", lambda topic=None: "another-version")
    cache.cached("demo", {"n": 1}, compute)
    assert len(list(results.glob("demo.*.json"))) == 3 and len(list(results.glob("demo.*.npz"))) == 3
    monkeypatch.undo()
    monkeypatch.setenv("STEPLAB_RESULTS", str(results))
    cache.cached("demo", {"n": 1}, compute)  # the first code version's entry is still there
    assert len(calls) == 3


def test_a_replaced_entry_leaves_no_orphan_once_it_is_old(results):
    """``--fresh`` with a result whose bytes differ: the .npz the .json no longer names goes (after the grace)."""
    n = iter(range(10))

    def compute():
        return {"x": np.full(3, float(next(n)))}

    cache.cached("demo", {}, compute)
    _, first = _entry(results, "demo")
    cache.cached("demo", {}, compute, fresh=True)
    assert first.exists()  # young: a concurrent writer's .json may be about to name it
    old = time.time() - 2 * cache._ORPHAN_GRACE_S
    os.utime(first, (old, old))
    cache.cached("demo", {}, compute, fresh=True)
    assert not first.exists() and len(list(results.glob("demo.*.npz"))) == 2
    np.testing.assert_array_equal(cache.cached("demo", {}, compute)["x"], np.full(3, 2.0))


def test_seed_is_recorded_from_the_config_or_the_result(results):
    cache.cached("a", {"seed": 3}, lambda: {"x": np.zeros(1)})
    cache.cached("b", {"n": 1}, lambda: {"x": np.zeros(1), "seed": 11})
    cache.cached("c", {"n": 1}, lambda: {"x": np.zeros(1), "seed": np.array([4, 5])})
    cache.cached("d", {"seeds": [1, 2]}, lambda: {"x": np.zeros(1)})
    assert cache.read_meta("a")["seed"] == 3 and cache.read_meta("b")["seed"] == 11
    assert cache.read_meta("c")["seed"] == [4, 5] and cache.read_meta("d")["seed"] is None


def test_read_meta_by_key_or_latest(results, monkeypatch):
    cache.cached("demo", {"n": 1}, lambda: {"x": np.zeros(1)})
    cache.cached("demo", {"n": 2}, lambda: {"x": np.zeros(1)})
    assert cache.read_meta("demo", {"n": 1})["config"] == {"n": 1}
    assert cache.read_meta("demo", {"n": 3}) is None and cache.read_meta("nothing") is None
    assert cache.read_meta("demo")["name"] == "demo"
    js = results / f"demo.{cache.config_digest({'n': 1})}.json"
    js.write_text(js.read_text().replace('"n": 1', '"n": 5'))
    assert cache.read_meta("demo", {"n": 1}) is None  # a damaged .json is not provenance


def test_memory_only_writes_nothing_and_computes_each_entry_once(results):
    calls, compute = _counter()
    with cache.memory_only():
        first = cache.cached("demo", {"n": 1}, compute)
        first["x"][0] = 99.0  # a caller editing its copy does not edit the next caller's
        again = cache.cached("demo", {"n": 1}, compute)
        with cache.memory_only(False):
            cache.cached("kept", {"n": 1}, compute)
    assert len(calls) == 2 and again["x"][0] == 0.0
    assert sorted(p.name.split(".")[0] for p in results.iterdir()) == ["kept", "kept"]
    with pytest.raises(TypeError, match="enabled"):
        cache.memory_only("yes")


def test_an_unwritable_folder_is_a_clear_error_and_never_loses_a_result(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("STEPLAB_RESULTS", str(blocker / "results"))
    with pytest.raises(cache.ResultsFolderError, match=f"results folder {blocker / 'results'} is not writable"):
        cache.prepare_results_dir()
    with pytest.warns(cache.CacheWarning, match="could not be written"):
        got = cache.cached("demo", {"n": 1}, lambda: {"x": np.arange(2.0)})
    np.testing.assert_array_equal(got["x"], np.arange(2.0))


def test_only_stale_temporaries_are_removed(results):
    old = time.time() - 7200
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True).stdout.strip()
    files = {
        "exp.a.quick.npz.1-0a1b2c3d.tmp": old,  # older than an hour
        f"exp.b.quick.json.{dead}-0a1b2c3d.tmp": time.time() - 120,  # its writer is gone
        f"exp.c.quick.json.{dead}-0a1b2c3d.tmp": time.time(),  # gone, but too young to be sure (another host?)
        f"exp.d.quick.json.{os.getpid()}-0a1b2c3d.tmp": time.time() - 120,  # a live writer's
        "notes.tmp": old,  # not a cache temporary
        "exp.e.quick.json": old,
    }
    for name, mtime in files.items():
        (results / name).write_text("x")
        os.utime(results / name, (mtime, mtime))
    assert cache.prepare_results_dir() == results
    assert sorted(p.name for p in results.iterdir()) == sorted(list(files)[2:])
    with pytest.raises(ValueError, match="folder"):
        cache.remove_stale_temporaries(results / "missing")
    with pytest.raises(ValueError, match="max_age_s"):
        cache.remove_stale_temporaries(results, max_age_s=0)


def test_a_topic_never_owns_another_topic_it_is_a_prefix_of(tmp_path, monkeypatch):
    """Topics ``sign`` and ``sign_floor``: each file belongs to the longest topic name that matches it whole, and a
    module inside a topic's package folder (``theory/sign_floor/signum.py``) to that folder's topic, whatever the
    module's own name."""
    root = tmp_path / "repo"
    files = {"theory": ["sign.py", "sign_floor.py", "sign_floor_regime.py", "sign_utils.py", "__init__.py",
                        "sign_floor/__init__.py", "sign_floor/signum.py", "sign_floor/sign.py"],
             "sims": ["sign.py", "sign_floor.py", "signum.py", "sweep.py", "__init__.py", "sign_floor/sweep.py"],
             "paper_checks": ["sign.py", "sign_floor/__init__.py", "sign_floor/_experiments.py", "__init__.py"]}
    for pkg, names in files.items():
        for f in names:
            (root / pkg / f).parent.mkdir(parents=True, exist_ok=True)
            (root / pkg / f).write_text(f"# {pkg}/{f}\n")
    monkeypatch.setattr(cache, "_ROOT", root)
    cache.topic_names.cache_clear()
    cache.code_version.cache_clear()
    try:
        assert cache.topic_names() == ("sign", "sign_floor")
        owners = {f"{pkg}/{f}": cache._owner(Path(pkg, f)) for pkg, names in files.items() for f in names}
        assert owners == {
            "theory/sign.py": "sign", "theory/sign_floor.py": "sign_floor", "theory/sign_floor_regime.py": "sign_floor",
            "theory/sign_utils.py": "sign", "theory/__init__.py": None,
            "theory/sign_floor/__init__.py": "sign_floor", "theory/sign_floor/signum.py": "sign_floor",
            "theory/sign_floor/sign.py": "sign_floor",
            "sims/sign.py": "sign", "sims/sign_floor.py": "sign_floor", "sims/signum.py": None, "sims/sweep.py": None,
            "sims/__init__.py": None, "sims/sign_floor/sweep.py": "sign_floor",
            "paper_checks/sign.py": "sign", "paper_checks/sign_floor/__init__.py": "sign_floor",
            "paper_checks/sign_floor/_experiments.py": "sign_floor", "paper_checks/__init__.py": None}
        before = {t: cache.code_version(t) for t in ("sign", "sign_floor")}
        for edited, moves in (("theory/sign_floor_regime.py", "sign_floor"), ("sims/sign.py", "sign"),
                              ("theory/sign_floor/sign.py", "sign_floor"), ("sims/sign_floor/sweep.py", "sign_floor")):
            (root / edited).write_text("# edited\n")
            cache.code_version.cache_clear()
            after = {t: cache.code_version(t) for t in ("sign", "sign_floor")}
            assert [t for t in after if after[t] != before[t]] == [moves], edited
            before = after
    finally:
        cache.topic_names.cache_clear()
        cache.code_version.cache_clear()


_HAMMER = r'''
"""One of two processes hammering one results folder; prints what it saw as JSON."""
import json, os, random, sys, warnings

import numpy as np

from sims import cache

calls, seed = int(sys.argv[1]), int(sys.argv[2])
versions = ("code-A", "code-B")  # two code versions sharing the folder
current = {"version": versions[0]}
cache.code_version = lambda topic=None: current["version"]
rng, counter = random.Random(seed), [0]
seen = {"reads": 0, "wrong": 0, "computed": 0, "warnings": 0, "from_the_other": 0}


def compute(j, v):
    counter[0] += 1
    seen["computed"] += 1
    writer = [os.getpid(), counter[0]]
    return {"x": np.full(1024, 10.0 * j + versions.index(v)), "writer": np.array(writer),
            "tag": f"{j}|{v}|{writer[0]}|{writer[1]}"}


for _ in range(calls):
    j, v = rng.randrange(6), rng.choice(versions)
    current["version"] = v
    before = seen["computed"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = cache.cached("exp.hammer.quick", {"j": j}, lambda: compute(j, v), fresh=rng.random() < 0.1)
    seen["warnings"] += len(caught)
    if seen["computed"] > before:
        continue
    seen["reads"] += 1
    tag = got["tag"].split("|")
    ok = (tag[:2] == [str(j), v] and np.all(got["x"] == 10.0 * j + versions.index(v))
          and got["writer"].tolist() == [int(tag[2]), int(tag[3])])  # the .npz belongs to the .json's writer
    seen["wrong"] += not ok
    seen["from_the_other"] += int(tag[2]) != os.getpid()
print(json.dumps(seen))
'''


def test_two_processes_hammering_one_folder_never_serve_a_wrong_entry(tmp_path):
    """Two processes, six configurations, two code versions, one folder; a tenth of the calls rewrite their entry.

    Every value read is checked against what its configuration and code version compute, and the ``.npz``
    half against the writer named in the ``.json`` half: >= 10^4 reads, none wrong, no spurious warning.
    """
    script = tmp_path / "hammer.py"
    script.write_text(_HAMMER)
    env = {**os.environ, "STEPLAB_RESULTS": str(tmp_path / "results"), "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen([sys.executable, str(script), "6000", str(seed)], env=env, cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for seed in (1, 2)]
    seen = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        seen.append(json.loads(out))
    total = {k: sum(s[k] for s in seen) for k in seen[0]}
    assert total["reads"] >= 10_000, total
    assert all(s["computed"] > 100 and s["from_the_other"] > 100 for s in seen), seen  # they did share the folder
    assert total["wrong"] == 0 and total["warnings"] == 0, total


_COMPILE_ONCE = r"""
import json, sys
import jax
import sims  # noqa: F401  (turns the persistent compilation cache on)
events = []
jax.monitoring.register_event_listener(lambda name, **kw: events.append(name))
x = jax.numpy.arange(7.0)
jax.jit(lambda v: jax.numpy.cumsum(jax.numpy.sin(v) * v[::-1]))(x).block_until_ready()
print(json.dumps({"dir": jax.config.jax_compilation_cache_dir,
                  "hits": events.count("/jax/compilation_cache/cache_hits"),
                  "misses": events.count("/jax/compilation_cache/cache_misses")}))
"""


def test_a_second_process_reads_the_programs_the_first_compiled(tmp_path):
    # two fresh interpreters with only XDG_CACHE_HOME in common, as two clones of one user: the first compiles and
    # writes the program into the user's cache folder, the second reads it back and compiles nothing
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JAX_COMPILATION_CACHE", "JAX_PERSISTENT"))}
    env.update(XDG_CACHE_HOME=str(tmp_path), JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0")
    runs = [json.loads(subprocess.run([sys.executable, "-c", _COMPILE_ONCE], env=env, capture_output=True, text=True,
                                      check=True, cwd=tmp_path).stdout) for _ in range(2)]
    assert runs[0]["dir"] == runs[1]["dir"] == str(tmp_path / "steplab-xla")
    compiled = runs[0]["misses"]  # the jitted function and the programs jnp.arange needs
    assert compiled >= 1 and runs[0]["hits"] == 0 and (runs[1]["hits"], runs[1]["misses"]) == (compiled, 0)
    assert any((tmp_path / "steplab-xla").iterdir())
