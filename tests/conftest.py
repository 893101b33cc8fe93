import os

# Tests never read or write the user's results/ cache.
os.environ.setdefault("STEPLAB_RESULTS", os.path.join(os.path.dirname(__file__), "..", ".pytest_cache", "results"))

import sims  # noqa: E402,F401  (enables float64 before any test touches JAX)
