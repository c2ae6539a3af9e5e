# activity-check: `make run` (the main job) and `make test` (the whole suite).
# Both bootstrap .venv from pyproject.toml on first use.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
SEED ?= 0
OUT ?= out
BUDGET ?= 60

.PHONY: run test venv clean bench peers

# The Node adapter for @ag-ui/client (issue 6): installed from its committed lock file with
# `npm ci`. `make test` installs it only when npm is on the machine; without Node the peer tests
# skip with the reason.
PEER_DIR := peers/ag-ui-client
PEER_STAMP := $(PEER_DIR)/node_modules/.package-lock.json
NPM := $(shell command -v npm 2>/dev/null)
TEST_PEERS := $(if $(NPM),$(PEER_STAMP))

venv: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	$(VENV)/bin/activity-check run --seed $(SEED) --out $(OUT) --budget $(BUDGET)

test: $(STAMP) $(TEST_PEERS)
	$(PY) -m pytest -n 2 tests

peers: $(PEER_STAMP)

$(PEER_STAMP): $(PEER_DIR)/package.json $(PEER_DIR)/package-lock.json
	cd $(PEER_DIR) && npm ci --no-audit --no-fund
	touch $(PEER_STAMP)

bench: $(STAMP)
	$(PY) benchmarks/replay.py

clean:
	rm -rf $(VENV) out .pytest_cache .hypothesis
