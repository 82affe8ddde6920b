# dpsynth — the two commands are `make run` and `make test`.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
PORT    ?= 8501

.PHONY: run test bench lint setup clean test-fast screenshots

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP)

run: $(STAMP)
	$(BIN)/streamlit run app.py --server.port $(PORT) --server.headless true

test: $(STAMP)
	$(BIN)/python -m pytest -q -p no:cacheprovider tests

test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -p no:cacheprovider -m "not e2e" tests

screenshots: $(STAMP)
	DPSYNTH_SCREENSHOTS=assets/screens $(BIN)/python -m pytest -q -p no:cacheprovider -m e2e tests/e2e

bench: $(STAMP)
	$(BIN)/python benchmarks/run_all.py

lint: $(STAMP)
	$(BIN)/ruff check dpsynth_core pages tests benchmarks app.py

clean:
	rm -rf $(VENV) build *.egg-info
