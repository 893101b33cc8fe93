# Every target bootstraps .venv on first use, so each is one command on a fresh machine.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
FRESH_FLAG := $(if $(FRESH),--fresh,)
# Worker processes of `make test` (pytest-xdist) and `make figures` (`--jobs`): most of the work is
# single-threaded XLA compilation and small kernels, so two processes use both cores of the CI machine.
# --dist loadgroup keeps each topic on one test worker, where its unit tests, contract rows and claims
# share compiled programs (tests/conftest.py); `figures --jobs` likewise gives each worker whole topics.
WORKERS ?= 2
# One on-disk XLA compilation cache for every target (tests, figures, check, bench) and every clone: a
# program compiled once is read back by later runs, the other test worker and a second clone instead of
# being compiled again. The same rule as sims.cache.xla_cache_dir (which a bare `pytest` or an import
# of sims uses); `steplab cache --clear` removes it, `make clean` leaves it.
export JAX_COMPILATION_CACHE_DIR ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/steplab-xla
export JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS ?= 0

.PHONY: figures test test-all check bench bench-gpu docs clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

figures: $(STAMP)   ## regenerate every figure and figures/out/report.{md,html}
	$(PY) -m figures $(FRESH_FLAG) --jobs $(WORKERS)

# --durations: the tier's time budget is watched in every run's log (CI's included), not guessed
test: $(STAMP)      ## fast tier: the linter, unit tests and every claim at the quick budget (not the mutant reruns)
	$(PY) -m ruff check --quiet .
	$(PY) -m pytest -m "not slow and not power" -q -n $(WORKERS) --dist loadgroup --durations=20

test-all: $(STAMP)  ## adds the slow tier (every claim at the full budget) and the mutant reruns
	$(PY) -m pytest -q -n $(WORKERS) --dist loadgroup

check: $(STAMP)     ## claims table at the full budget; non-zero exit if any claim fails
	$(PY) -m paper_checks --budget full $(FRESH_FLAG)

bench: $(STAMP)     ## throughput of the JAX simulators against NumPy references, same process
	$(PY) -m sims.bench

GPU_STAMP := $(VENV)/.gpu-stamp
$(GPU_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e '.[dev,gpu]'
	touch $(GPU_STAMP)

# JAX_PLATFORMS=cuda: fail loudly on a machine without a usable GPU instead of timing the CPU.
bench-gpu: $(GPU_STAMP) ## on a CUDA 12 GPU: GPU-sized cases, device kind and absolute throughput in results/bench.json
	JAX_PLATFORMS=cuda $(PY) -m sims.bench --scale large --json results/bench.json

DOCS_STAMP := $(VENV)/.docs-stamp
$(DOCS_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e '.[dev,docs]'
	touch $(DOCS_STAMP)

docs: $(DOCS_STAMP) ## the documentation site (docstrings + docs/) into docs/_build/html; warnings are errors
	$(PY) -m sphinx -W --keep-going -q -b html docs docs/_build/html
	@echo "open docs/_build/html/index.html"

clean:              ## remove the results cache, figures/out, docs/_build and build outputs (not the XLA cache)
	-@if [ -x $(PY) ]; then $(PY) -m figures._cli cache --clear --keep-xla; fi
	rm -rf results figures/out docs/_build .pytest_cache build *.egg-info
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
