import json
import warnings

import numpy as np
import pytest

from sims import cache


@pytest.fixture
def results(tmp_path, monkeypatch):
    monkeypatch.setenv("STEPLAB_RESULTS", str(tmp_path))
    return tmp_path


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
    meta = json.loads((results / "demo.json").read_text())
    assert meta["seed"] == 7 and meta["config"] == {"seed": 7, "n": 3}
    assert {"git_revision", "versions", "device_kind", "wall_s", "code_version", "npz_sha256"} <= set(meta)

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
    npz, js = results / "demo.npz", results / "demo.json"
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


def test_bad_names(results):
    with pytest.raises(ValueError, match="name"):
        cache.cached("../escape", {}, dict)
    with pytest.raises(TypeError, match="config"):
        cache.cached("ok", [1], dict)
    with pytest.raises(TypeError, match="config"):
        cache.config_digest({"f": object()})
