# dpsynth: the two commands are `make run` and `make test`; both set up everything they need.
PY       ?= python3
VENV     := .venv
BIN      := $(VENV)/bin
STAMP    := $(VENV)/.installed
PORT     ?= 8501
CHROMIUM := /usr/bin/chromium
# root installs system packages directly; anyone else through sudo
SUDO     := $(shell [ "$$(id -u)" -eq 0 ] || echo sudo)
# pytest workers: one per core (the suite is CPU-bound). --dist worksteal: each worker starts on its half
# of the suite, long tests first (tests/conftest.py), and an idle worker takes tests queued on a busy one,
# so both finish together. No test is tied to a worker: a worker that gets browser tests starts its own server.
WORKERS  ?= $(shell nproc 2>/dev/null || echo 2)
PYTEST   := $(BIN)/python -m pytest -q -p no:cacheprovider -n $(WORKERS) --dist worksteal

.PHONY: run test test-fast bench lint setup clean screenshots

$(BIN)/python:
	$(PY) -m venv $(VENV)

# Bytecode: Python writes a module's .pyc the first time it imports it, unless PYTHONDONTWRITEBYTECODE is set
# (it is on some machines, CI's among them); then every process (each test worker, browser-test server, CLI
# test, `make run`) compiled the libraries again: importing the stack took 7.4 s instead of 2.8 s. The recipes
# here run without it, so each module is compiled once, by the first process that imports it, into .venv and
# the project's __pycache__ folders (git ignores them). (uv's --compile-bytecode compiled every installed file
# instead: 30-40 s of the set-up, 3.7 s without it, most of it for modules nothing here imports.)
unexport PYTHONDONTWRITEBYTECODE

# constraints.txt: the versions the suite was tested with, so a fresh machine installs the same ones.
# uv (from PyPI, its version pinned there too) installs them in parallel: a few seconds from its cache,
# where pip took over a minute. Where uv cannot run, pip installs the same pinned versions.
$(STAMP): pyproject.toml constraints.txt | $(BIN)/python
	( $(BIN)/python -m pip install --quiet -c constraints.txt uv && \
	  $(BIN)/uv pip install --quiet --python $(BIN)/python -c constraints.txt -e '.[dev]' ) || \
	  $(BIN)/python -m pip install --quiet -c constraints.txt -e '.[dev]'
	@# numba compiles the W1 solvers' kernels here, once, and caches them beside the code (about 10 s); otherwise
	@# every process that first needed them compiled them again (both test workers at once, the browser tests'
	@# server, the first visit after `make run`). A kernel edited later is compiled again on its first call.
	@# A second process meanwhile imports the test runner's and the tests' other libraries once (the first one
	@# imports the dashboard's), writing their bytecode before two test workers would both compile them.
	$(BIN)/python -c "import pytest, xdist, hypothesis, playwright.sync_api, streamlit.testing.v1, sklearn.datasets, \
	  sklearn.svm, dask.dataframe, distributed" & \
	  $(BIN)/python -c "import serve; serve.warm_solvers()" && wait $$!
	touch $(STAMP)
	@echo "the dpsynth command is installed in .venv: run 'source .venv/bin/activate' to put it on your PATH"

# Debian's Chromium for the browser tests (Playwright drives it; it cannot download its own browser here)
$(CHROMIUM):
	@echo "installing Debian's chromium for the browser tests"
	$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get update -qq
	$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null

setup: $(STAMP) $(CHROMIUM)

run: $(STAMP)
	@echo "the command line: 'source .venv/bin/activate', then 'dpsynth --help' (README, The command line)"
	$(BIN)/streamlit run serve.py --server.port $(PORT) --server.headless true

test: $(STAMP) $(CHROMIUM)
	$(PYTEST) tests

# everything but the browser tests and the tests marked slow (pyproject.toml's markers); `make test` runs all
test-fast: $(STAMP)
	$(PYTEST) -m "not e2e and not slow" tests

screenshots: $(STAMP) $(CHROMIUM)
	DPSYNTH_SCREENSHOTS=assets/screens $(PYTEST) -m e2e tests/e2e

bench: $(STAMP) $(CHROMIUM)
	$(BIN)/python benchmarks/run_all.py

lint: $(STAMP)
	$(BIN)/ruff check dpsynth_core dashboard app_pages tests benchmarks app.py serve.py

clean:
	rm -rf $(VENV) build *.egg-info
