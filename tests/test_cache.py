import json

import numpy as np
import pytest

from sims import cache


def test_hit_miss_and_invalidation(tmp_path, monkeypatch):
    monkeypatch.setenv("STEPLAB_RESULTS", str(tmp_path))
    calls = []

    def compute():
        calls.append(1)
        return {"x": np.arange(3.0), "label": "ok", "n": 3}

    a = cache.cached("demo", {"seed": 7, "n": 3}, compute)
    b = cache.cached("demo", {"seed": 7, "n": 3}, compute)
    assert len(calls) == 1 and b["label"] == "ok" and b["n"] == 3
    np.testing.assert_array_equal(a["x"], b["x"])
    meta = json.loads((tmp_path / "demo.json").read_text())
    assert meta["seed"] == 7 and meta["config"] == {"seed": 7, "n": 3}
    assert {"git_revision", "versions", "device_kind", "wall_s", "code_version"} <= set(meta)

    cache.cached("demo", {"seed": 8, "n": 3}, compute)  # config change invalidates
    assert len(calls) == 2
    monkeypatch.setattr(cache, "code_version", lambda: "another-version")  # code change invalidates
    cache.cached("demo", {"seed": 8, "n": 3}, compute)
    assert len(calls) == 3
    cache.cached("demo", {"seed": 8, "n": 3}, compute, fresh=True)
    assert len(calls) == 4


def test_bad_names(tmp_path, monkeypatch):
    monkeypatch.setenv("STEPLAB_RESULTS", str(tmp_path))
    with pytest.raises(ValueError, match="name"):
        cache.cached("../escape", {}, dict)
    with pytest.raises(TypeError, match="config"):
        cache.cached("ok", [1], dict)
