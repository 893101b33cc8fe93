import json
import os
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from sims.sweep import cartesian, diverged, floats_as, grid_size, padded_length, run_grid


def _logistic_map_run(point):
    """A nontrivial per-run computation: 200 steps of a noisy logistic map under lax.scan (non-chaotic r, so round-off is not amplified)."""
    def step(x, k):
        return point["r"] * x * (1 - x) + 1e-3 * jax.random.normal(k), x

    keys = jax.random.split(point["key"], 200)
    x, xs = jax.lax.scan(step, point["x0"], keys)
    return {"final": x, "mean": xs.mean()}


def _grid(n=37):
    keys = jax.random.split(jax.random.key(0), n)
    return {"r": jnp.linspace(1.5, 2.9, n), "x0": jnp.linspace(0.1, 0.9, n), "key": keys}


def test_vmap_equals_loop_and_chunking_is_invisible():
    grid = _grid()
    out = run_grid(_logistic_map_run, grid, chunk_size=8)  # 5 chunks, last one padded
    one_run = jax.jit(_logistic_map_run)
    loop = [one_run(jax.tree_util.tree_map(lambda x: x[i], grid)) for i in range(37)]
    # Same float64 operations per run, so vmap and the per-run loop agree to round-off.
    np.testing.assert_allclose(out["final"], [o["final"] for o in loop], rtol=1e-12, atol=1e-14)
    whole = run_grid(_logistic_map_run, grid, chunk_size=10_000)
    # A different chunk length compiles to different vector code (the order of the mean's sum),
    # so agreement is to float64 round-off of a 200-term mean, not bitwise.
    np.testing.assert_allclose(out["mean"], whole["mean"], rtol=1e-13)


def test_chunks_are_as_equal_as_the_grid_allows():
    """Padding costs at most one point per chunk and device (the chunk count is the smallest that fits)."""
    from sims.sweep import _chunk_length

    assert _chunk_length(288, 256, 1, False) == 144 and _chunk_length(224, 256, 1, False) == 224
    assert _chunk_length(37, 8, 1, False) == 8 and _chunk_length(5, 16, 1, True) == 16
    for n in range(1, 300, 7):
        for c, d in ((1, 1), (8, 1), (64, 4), (256, 2)):
            k = _chunk_length(n, c, d, False)
            chunks = -(-n // k)
            assert k % d == 0 and chunks == -(-n // (d * -(-min(c, n) // d)))  # no more chunks than before
            assert chunks * k - n < chunks * d  # the padding


def test_pad_to_chunk_keeps_results_and_trims():
    grid = _grid(5)
    padded = run_grid(_logistic_map_run, grid, chunk_size=16, pad_to_chunk=True)
    plain = run_grid(_logistic_map_run, grid, chunk_size=16)
    assert padded["final"].shape == (5,)
    np.testing.assert_allclose(padded["final"], plain["final"], rtol=1e-13)  # other batch shape: round-off only


def _sharded_sweeps():
    """Two sweeps as float hex strings: a keyed scan (3 chunks of 16 runs, the last padded) and a sweep with a
    replicated argument and static configuration."""
    out = run_grid(_logistic_map_run, _grid(), chunk_size=16)
    scaled = run_grid(_scaled_run, _grid(12), jnp.float64(1.5), static={"power": 3}, chunk_size=8)
    return {"final": [float(x).hex() for x in out["final"]], "mean": [float(x).hex() for x in out["mean"]],
            "scaled": [float(x).hex() for x in scaled]}


def _sweeps_on(n_devices: int) -> dict:
    """``_sharded_sweeps()`` in a fresh process with ``n_devices`` virtual CPU devices and XLA's default
    compiler options (the user's build, not the fast tier's cheaper one from tests/conftest.py)."""
    script = textwrap.dedent(f"""
        import json, sys
        sys.path.insert(0, {os.getcwd()!r})
        import jax
        import sims
        from tests.test_sweep import _sharded_sweeps
        assert len(jax.devices()) == {n_devices}, jax.devices()
        print(json.dumps(_sharded_sweeps()))
    """)
    from tests.conftest import TEST_XLA_FLAGS

    flags = [f for f in os.environ.get("XLA_FLAGS", "").split() if f not in TEST_XLA_FLAGS]
    env = dict(os.environ, XLA_FLAGS=" ".join(flags + [f"--xla_force_host_platform_device_count={n_devices}"]),
               JAX_PLATFORMS="cpu")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_same_results_on_one_and_four_devices():
    """Sharding the grid axis over 4 (virtual CPU) devices gives bit-identical results to 1 device.

    Each device runs a quarter of every chunk; a per-run function's value cannot depend on which
    device or which batch it ran in, so the comparison is exact, not to round-off. Both sides run with
    XLA's default options: under the fast tier's cheaper ones (optimization level 1, older emitters)
    the last bit can depend on the batch size alone (chunks of 16 and of 4 on one device differ by one ulp,
    measured), which is round-off, not sharding.
    """
    assert _sweeps_on(4) == _sweeps_on(1)


def test_cartesian_order_and_shape():
    grid, shape = cartesian(a=np.arange(3), b=np.arange(4) * 10)
    assert shape == (3, 4)
    np.testing.assert_array_equal(grid["a"].reshape(shape)[:, 0], np.arange(3))
    np.testing.assert_array_equal(grid["b"].reshape(shape)[0], np.arange(4) * 10)
    keyed, _ = cartesian(key=jax.random.split(jax.random.key(1), 2), x=np.arange(3))
    assert jax.dtypes.issubdtype(keyed["key"].dtype, jax.dtypes.prng_key)


def test_diverged_classification():
    x = jnp.array([[1.0, 2.0], [jnp.inf, 0.0], [jnp.nan, 1.0], [1e200, 0.0]])
    np.testing.assert_array_equal(diverged(x), [False, True, True, True])


@pytest.mark.parametrize("bad, match", [
    ({}, "empty pytree"),
    ({"a": np.zeros(3), "b": np.zeros(4)}, "different leading lengths"),
    ({"a": np.zeros(0)}, "empty"),
])
def test_bad_grids(bad, match):
    with pytest.raises(ValueError, match=match):
        grid_size(bad)


def test_loop_fusions_change_the_compiled_program_not_the_results():
    """loop_fusions=True compiles another program (on a CPU: XLA's loop fusions instead of YNNPACK), with the same
    float64 operations per run: equal to round-off of a 200-term mean. Off a CPU the options are empty."""
    from sims.sweep import cpu_loop_fusions

    grid = _grid(9)
    a, b = run_grid(_logistic_map_run, grid), run_grid(_logistic_map_run, grid, loop_fusions=True)
    np.testing.assert_allclose(a["final"], b["final"], rtol=1e-13)
    np.testing.assert_allclose(a["mean"], b["mean"], rtol=1e-13)
    assert cpu_loop_fusions("gpu") == {}
    assert set(cpu_loop_fusions("cpu")) <= {"xla_cpu_experimental_ynn_fusion_type"}
    with pytest.raises(TypeError, match="loop_fusions"):
        run_grid(_logistic_map_run, grid, loop_fusions="yes")


def test_fast_compile_changes_the_compiled_program_not_the_results():
    """fast_compile=True compiles with cheaper code generation on a CPU (XLA's elemental emitters, one codegen
    partition), the same float64 operations per run: equal to round-off of a 200-term mean; combined with the loop
    fusions both option sets apply. Off a CPU the options are empty."""
    from sims.sweep import _batched, cpu_fast_compile

    grid = _grid(9)
    a = run_grid(_logistic_map_run, grid)
    for fusions in (False, True):
        b = run_grid(_logistic_map_run, grid, fast_compile=True, loop_fusions=fusions)
        np.testing.assert_allclose(a["final"], b["final"], rtol=1e-13)
        np.testing.assert_allclose(a["mean"], b["mean"], rtol=1e-13)
    assert cpu_fast_compile("gpu") == {}
    assert set(cpu_fast_compile("cpu")) <= {"xla_cpu_use_fusion_emitters", "xla_cpu_parallel_codegen_split_count"}
    devices = tuple(jax.devices())
    assert _batched(_logistic_map_run, (), devices, 0, False, True) is not _batched(_logistic_map_run, (), devices, 0)
    with pytest.raises(TypeError, match="fast_compile"):
        run_grid(_logistic_map_run, grid, fast_compile=1)


def test_bad_arguments():
    with pytest.raises(ValueError, match="chunk_size"):
        run_grid(_logistic_map_run, {"a": np.zeros(3)}, chunk_size=0)
    with pytest.raises(TypeError, match="fn"):
        run_grid(3, {"a": np.zeros(3)})


def test_repeating_a_sweep_with_new_data_compiles_nothing():
    import jax.monitoring as monitoring

    compiles = []

    def listener(event, duration, **kwargs):
        if event == "/jax/core/compile/backend_compile_duration":
            compiles.append(event)

    monitoring.register_event_duration_secs_listener(listener)
    try:
        run_grid(_scaled_run, _grid(12), jnp.float64(2.0), static={"power": 2}, chunk_size=16)
        first = len(compiles)
        out = run_grid(_scaled_run, _grid(12), jnp.float64(3.0), static={"power": 2}, chunk_size=16)
        assert first > 0 and len(compiles) == first, "a repeated sweep with new data of the same shapes recompiled"
        np.testing.assert_allclose(out, 3.0 * np.asarray(_grid(12)["x0"]) ** 2)
        run_grid(_scaled_run, _grid(12), jnp.float64(3.0), static={"power": 3}, chunk_size=16)
        assert len(compiles) > first  # a new static configuration is a new program
    finally:
        monitoring.unregister_event_duration_listener(listener)  # only ours: a profiler may be listening too


def _scaled_run(point, scale, *, power):
    return scale * point["x0"] ** power


def test_fresh_closures_and_unhashable_static_are_refused():
    y = 2.0
    with pytest.raises(TypeError, match="closure"):
        run_grid(lambda p: p["x0"] * y, _grid(3))
    import functools

    with pytest.raises(TypeError, match="partial"):
        run_grid(functools.partial(_scaled_run, power=2), _grid(3), 1.0)
    with pytest.raises(TypeError, match="static"):
        run_grid(_scaled_run, _grid(3), 1.0, static={"power": np.arange(2)})


def _huge_run(point):
    return jnp.zeros((200_000_000,)) + point["x0"]  # 1.6 GB per run


def test_a_chunk_too_big_for_memory_names_chunk_size():
    # 400 runs x 1.6 GB cannot be allocated anywhere; the error says which knob bounds the memory
    with pytest.raises(MemoryError, match="chunk_size"):
        run_grid(_huge_run, {"x0": np.ones(400)}, chunk_size=400)


def _one_huge_run(point):
    return jnp.zeros((2**46,)) + point["x0"]  # 512 TiB: no device holds one run


def test_a_single_run_too_big_for_memory_does_not_blame_chunk_size():
    """Issue 29: a run no chunk can hold (a width too large) was reported as a chunk_size problem."""
    with pytest.raises(MemoryError, match="one run of .* a smaller chunk_size cannot help") as exc:
        run_grid(_one_huge_run, {"x0": np.ones(2)}, chunk_size=1)
    assert not str(exc.value).startswith("chunk_size")


def test_floats_as_casts_floating_entries_only():
    """A float32 sweep's inputs: float arrays (NumPy or JAX) cast, integers, booleans and typed keys untouched."""
    keys = jax.random.split(jax.random.key(0), 2)
    out = floats_as({"a": np.ones(2), "b": jnp.zeros(2), "i": np.arange(2), "m": np.ones(2, bool), "k": keys},
                    np.float32)
    assert out["a"].dtype == out["b"].dtype == np.float32
    assert out["i"].dtype == np.arange(2).dtype and out["m"].dtype == bool and out["k"] is keys


def test_padded_length_is_the_smallest_power_of_two_within_its_bounds():
    for n in range(0, 300):
        for least, most in ((1, None), (8, None), (16, 128), (3, 5)):
            want = max(least, next(2**k for k in range(12) if 2**k >= n))  # by search, not by bit tricks
            assert padded_length(n, least=least, most=most) == (want if most is None else min(most, want))
