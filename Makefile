# The common jobs. Every target sets up .venv itself, so a fresh machine needs only python3 and make.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# dev: tests and lint; postgres: the driver of `make server DB=postgresql://…`; ray: Hydra's Ray
# launcher. The cluster tests use all three.
EXTRAS ?= dev,postgres,ray
# Debian packages the tests use: PostgreSQL, a one-node Slurm with munge, a headless browser.
APT_PACKAGES ?= postgresql slurm-wlm munge chromium chromium-driver
HOST ?= 127.0.0.1
PORT ?= 5000
STORE := sqlite:///$(abspath results/mlflow.db)
ARTIFACTS := $(abspath results/mlartifacts)

.PHONY: run test lint bench ui server setup system clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[$(EXTRAS)]"
	touch $(STAMP)

setup: $(STAMP)

## system: install the missing APT_PACKAGES (as root, with apt-get); anyone else is told what is
## missing, and the tests that need it skip
system:
	@missing=""; \
	for p in $(APT_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then \
	  echo "system: not installed:$$missing (needs root and apt-get; the tests that use them skip)"; \
	  exit 0; \
	fi; \
	echo "system: installing$$missing"; \
	export DEBIAN_FRONTEND=noninteractive; \
	apt-get update -qq && apt-get install -y -qq --no-install-recommends $$missing >/dev/null

## run: a small bound_verification study on 2 workers, logged to results/mlflow.db, then its report
run: $(STAMP)
	$(PY) -m experiments.run -m experiment=bound_verification hydra.launcher.n_jobs=2
	$(PY) -m experiments.report bound_verification
	@echo "Open the MLflow UI with: make ui   (then http://$(HOST):$(PORT))"

## test: lint, format check and the whole suite on every core (the cluster tests one at a time)
test: $(STAMP) system lint
	$(PY) -m pytest -q -n auto --dist loadgroup

lint: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

## bench: speed against the peer implementations, written to results/bench.md
bench: $(STAMP)
	OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 $(PY) -m experiments.bench

## ui: the MLflow UI over the local store, on http://$(HOST):$(PORT)
ui: $(STAMP)
	mkdir -p results
	$(VENV)/bin/lincls ui --store $(STORE) --host $(HOST) --port $(PORT)

## server: an MLflow tracking server on $(HOST):$(PORT) with one worker, over the local SQLite
## store or DB=postgresql://user:pass@host/db; point runs at it with tracking.uri=http://$(HOST):$(PORT)
DB ?= $(STORE)
server: $(STAMP)
	mkdir -p results
	$(VENV)/bin/mlflow server --app-name lincls --backend-store-uri $(DB) --default-artifact-root $(ARTIFACTS) --host $(HOST) --port $(PORT) --workers 1

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis outputs multirun
