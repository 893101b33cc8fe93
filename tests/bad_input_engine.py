"""Bad-input rows of the shared engine: Hessian-vector products, the sweep engine, the results cache, the bench.

``sims.bench.run_cases``/``discover`` run benchmarks; their baselines use an empty case list / the
small scale's discovery only (cheap), and ``sims.cache`` rows write under the test's own results folder.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from tests._bad_input_table import Row

_H = np.diag([3.0, 2.0, 1.0])
_P = np.array([1.0, -0.5, 0.25])


def quadratic(p):
    """0.5 p^T H p (a module-level loss: no closures in the table)."""
    return 0.5 * jnp.dot(p, jnp.asarray(_H) @ p)


def matvec(v):
    return jnp.asarray(_H) @ v


def _compute():
    return {"x": np.arange(3.0)}


def _point(point):
    return point["a"] * 2.0


def _noop():
    return 1.0


_E = "sims.hvp."
ROWS = [
    Row(_E + "hvp", {"loss_fn": quadratic, "params": _P, "v": np.ones(3)}),
    Row(_E + "dense_hessian", {"loss_fn": quadratic, "params": _P}),
    Row(_E + "largest_eigenvalue", {"matrix": _H}, extra=[({"matrix": np.ones((3, 4))}, "matrix", "not square"),
                                                          ({"matrix": np.ones(3)}, "matrix", "1-D")]),
    Row(_E + "lanczos", lambda: {"key": jax.random.key(0), "matvec": matvec, "dim": 3, "num_iter": 3},
        kinds={"dim": "posint+oversize", "num_iter": "posint"}),
    Row(_E + "top_eigenvalues", lambda: {"loss_fn": quadratic, "params": _P, "key": jax.random.key(0), "k": 1,
                                         "num_iter": 3},
        kinds={"k": "posint", "num_iter": "posint"}),
    Row(_E + "hutchinson_trace", lambda: {"loss_fn": quadratic, "params": _P, "key": jax.random.key(0),
                                          "num_samples": 4},
        kinds={"num_samples": "posint+oversize"}),
    Row("sims.sweep.grid_size", {"grid": {"a": np.arange(3.0)}}),
    Row("sims.sweep.cartesian", {"a": np.arange(2.0), "b": np.arange(3.0)},
        ok={("a", "boolarr"): "an axis of flags is a valid axis", ("b", "boolarr"): "an axis of flags is a valid axis",
            ("a", "ndim"): "the leading dimension indexes the values; each value may be an array",
            ("b", "ndim"): "the leading dimension indexes the values; each value may be an array"}),
    Row("sims.edges.first_crossing", {"values": np.array([0.5, 1.5, np.nan]), "level": 1.0},
        kinds={"values": "any", "level": "real"},
        skip={"values": "any real sequence is valid: NaN and infinite entries are records that do not (or do) reach"}),
    Row("sims.edges.switch_bracket", {"grid": np.array([0.1, 0.2, 0.3]), "on": np.array([False, True, True]),
                                      "monotone": True},
        kinds={"grid": "arr", "on": "obj", "monotone": "bool"},
        extra=[({"on": np.array([0, 1, 1])}, "on", "ints"), ({"on": np.array([False, True])}, "on", "length"),
               ({"grid": np.array([0.3, 0.2, 0.1])}, "grid", "decreasing")]),
    Row("sims.edges.interpolated_crossing", {"x": np.array([1.0, 2.0, 4.0]), "y": np.array([0.0, 0.5, 2.0]),
                                             "level": 1.0, "se": np.array([0.1, 0.1, 0.1]), "log_x": True},
        kinds={"x": "posarr", "y": "arr", "level": "real", "se": "nonnegarr", "log_x": "bool"},
        extra=[({"y": np.array([0.0, 0.1, 0.2])}, "y", "no_crossing")]),
    Row("sims.sweep.floats_as", {"grid": {"a": np.arange(3.0), "i": np.arange(3)}, "dtype": "float32"},
        ok={("grid", "emptydict"): "nothing to cast", ("dtype", "None"): "the default precision: float64"}),
    Row("sims.sweep.padded_length", {"n": 5, "least": 8, "most": 64}, kinds={"n": "nonnegint", "least": "posint",
        "most": "posint"}, ok={("most", "None"): "no cap"}),
    Row("sims.sweep.diverged", {"x": np.array([1.0, np.inf]), "bound": 1e150},
        kinds={"x": "any", "bound": "pos"}, skip={"x": "any real array is valid: non-finite entries are what it flags"}),
    Row("sims.sweep.cpu_loop_fusions", {"platform": "cpu"}, kinds={"platform": "text"},
        ok={("platform", "empty"): "any other platform name: no options"}),
    Row("sims.sweep.cpu_fast_compile", {"platform": "cpu"}, kinds={"platform": "text"},
        ok={("platform", "empty"): "any other platform name: no options"}),
    Row("sims.sweep.run_grid", {"fn": _point, "grid": {"a": np.arange(3.0)}, "chunk_size": 8, "pad_to_chunk": False,
                                "devices": None, "progress": False, "desc": "sweep"},
        kinds={"chunk_size": "posint", "desc": "text"}, ok={("devices", "None"): "the default: every device"}),
    Row("sims.cache.recompute", {"enabled": True}),
    Row("sims.cache.code_version", {"topic": "eos"}, ok={("topic", "None"): "the default: every source"}),
    Row("sims.cache.config_digest", {"config": {"a": 1}, "topic": "eos"},
        ok={("topic", "None"): "shared sources only", ("config", "emptydict"): "an empty configuration is valid"}),
    Row("sims.cache.provenance", {"config": {"a": 1}, "wall_s": 0.5, "topic": "eos"},
        kinds={"wall_s": "nonneg"},
        ok={("topic", "None"): "shared sources only", ("config", "emptydict"): "an empty configuration is valid"}),
    Row("sims.cache.cached", {"name": "bad_input.probe", "config": {"a": 1}, "compute": _compute, "topic": "eos",
                              "fresh": False},
        kinds={"name": "text"}, ok={("topic", "None"): "shared sources only", ("config", "emptydict"): "an empty configuration is valid",
            ("fresh", "None"): "the default: follow recompute()",
            ("compute", "nanfn"): "compute's result is data: stored and returned as computed, NaN included"}),
    Row("sims.cache.read_meta", {"name": "bad_input.probe"}, kinds={"name": "text"}),
    Row("sims.cache.memory_only", {"enabled": True}),
    Row("sims.cache.unwritable", lambda: {"folder": tempfile.gettempdir()}, kinds={"folder": "text"}),
    Row("sims.cache.write_atomic", lambda: {"path": str(Path(tempfile.gettempdir()) / "steplab-bad-input-probe.bin"),
                                            "data": b"probe"},
        kinds={"path": "text", "data": "obj"}),
    # a folder that holds no cache temporaries: the baseline removes nothing
    Row("sims.cache.remove_stale_temporaries", {"folder": str(Path(__file__).parent), "max_age_s": 3600.0},
        kinds={"max_age_s": "pos"}),
    Row("sims.bench.time_best", {"fn": _noop, "repeats": 2, "max_seconds": 1.0},
        kinds={"repeats": "posint", "max_seconds": "pos"}, ok={("max_seconds", "None"): "the default: no limit",
                                                               ("fn", "nanfn"): "only fn's time is measured, not its output"}),
    Row("sims.bench.discover", {"scale": "small"}, slow=True),
    Row("sims.bench.short_path", {"filename": "/anywhere/site-packages/jax/_src/compiler.py"}, kinds={"filename": "text"}),
    Row("sims.cache.part_owner", {"part": "sign_floor_regime", "topics": ("sign", "sign_floor")},
        kinds={"part": "text", "topics": "obj"}),
    Row("sims.bench.run_cases", {"cases": [], "repeats": 1}, kinds={"cases": "obj", "repeats": "posint"}),
    Row("sims.bench.format_rows", {"rows": []}, kinds={"rows": "obj"}),
    Row("sims.rng.words", lambda: {"key": jax.random.key(0), "shape": (2, 3)},
        extra=[({"shape": (2, -1)}, "shape", "negative"), ({"shape": (2, 1.5)}, "shape", "fraction"),
               ({"shape": (2**16, 2**16)}, "shape", "2**32 words")]),
]
