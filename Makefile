# activity-check: `make run` (the main job) and `make test` (the whole suite).
# Both bootstrap .venv from pyproject.toml on first use.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
SEED ?= 0
OUT ?= out
BUDGET ?= 60

.PHONY: run test venv clean bench peers peers-report

# The Node adapters (issues 6 and 23): @ag-ui/client 1.0.0 and 0.0.59, @assistant-ui/react-ag-ui,
# @tanstack/ai, @copilotkitnext/core, @copilotkit/react-core (issue 42), each folder pinning its packages in a committed package.json and
# package-lock.json, installed with `npm ci`. `make test` installs them only when npm is on the
# machine; without Node the peer tests skip with the reason.
PEER_DIR := peers/ag-ui-client
PEER_STAMP := $(PEER_DIR)/node_modules/.package-lock.json
PEER_DIRS := $(PEER_DIR) peers/ag-ui-client-0.0.59 peers/assistant-ui-react-ag-ui peers/tanstack-ai peers/copilotkitnext-core peers/copilotkit-react-core peers/producers
PEER_STAMPS := $(addsuffix /node_modules/.package-lock.json,$(PEER_DIRS))
NPM := $(shell command -v npm 2>/dev/null)
TEST_PEERS := $(if $(NPM),$(PEER_STAMPS))

venv: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	$(VENV)/bin/activity-check run --seed $(SEED) --out $(OUT) --budget $(BUDGET)

test: $(STAMP) $(TEST_PEERS)
	$(PY) -m pytest -n 2 --dist loadgroup tests

peers: $(PEER_STAMPS)

peers/%/node_modules/.package-lock.json: peers/%/package.json peers/%/package-lock.json
	cd peers/$* && npm ci --no-audit --no-fund
	touch $@

# The conformance matrix (issue 23): every peer against the corpus and a seeded search, written
# as matrix.json, matrix.md and matrix.html (with findings/) under $(OUT)/peers. Not part of
# `make run`: it needs Node.
peers-report: $(STAMP) $(PEER_STAMPS)
	$(VENV)/bin/activity-check peer matrix --seed $(SEED) --out $(OUT)/peers

bench: $(STAMP)
	$(PY) benchmarks/replay.py

clean:
	rm -rf $(VENV) out .pytest_cache .hypothesis
