# The common jobs. Every target sets up .venv itself, so a fresh machine needs only python3 and make.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 5000
STORE := sqlite:///$(abspath results/mlflow.db)
ARTIFACTS := $(abspath results/mlartifacts)

.PHONY: run test lint bench ui server setup clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

setup: $(STAMP)

## run: a small bound_verification study on 2 workers, logged to results/mlflow.db, then its report
run: $(STAMP)
	$(PY) -m experiments.run -m experiment=bound_verification hydra.launcher.n_jobs=2
	$(PY) -m experiments.report bound_verification
	@echo "Open the MLflow UI with: make ui   (then http://$(HOST):$(PORT))"

## test: lint, format check and the whole suite
test: $(STAMP) lint
	$(PY) -m pytest -q -n auto

lint: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

## bench: speed against the peer implementations, written to results/bench.md
bench: $(STAMP)
	OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 $(PY) -m experiments.bench

## ui: the MLflow UI over the local store, on http://$(HOST):$(PORT)
ui: $(STAMP)
	mkdir -p results
	$(VENV)/bin/mlflow ui --backend-store-uri $(STORE) --default-artifact-root $(ARTIFACTS) --host $(HOST) --port $(PORT) --workers 1

## server: an MLflow tracking server on $(HOST):$(PORT) with one worker, over the local SQLite
## store or DB=postgresql://user:pass@host/db; point runs at it with tracking.uri=http://$(HOST):$(PORT)
DB ?= $(STORE)
server: $(STAMP)
	mkdir -p results
	$(VENV)/bin/mlflow server --backend-store-uri $(DB) --default-artifact-root $(ARTIFACTS) --host $(HOST) --port $(PORT) --workers 1

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis outputs multirun
