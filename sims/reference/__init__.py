"""NumPy references of the JAX simulators, one module per topic, and the benchmark cases built on them.

Each ``sims/reference/<topic>.py`` holds vectorized NumPy versions of its topic's simulators (tests
compare the two) and ``bench_cases(scale) -> list[sims.bench.BenchCase]`` for ``make bench``.
"""
