# activity-check: `make run` (the main job) and `make test` (the whole suite).
# Both bootstrap .venv from pyproject.toml on first use.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
SEED ?= 0
OUT ?= out
BUDGET ?= 60

.PHONY: run test venv clean bench peers peers-report producers-venv

# The Node adapters (issues 6 and 23): @ag-ui/client 1.0.0 and 0.0.59, @assistant-ui/react-ag-ui,
# @tanstack/ai, @copilotkitnext/core, @copilotkit/react-core, and the Node producers of the
# producer matrix (issue 42), each folder pinning its packages in a committed package.json and
# package-lock.json, installed with `npm ci`. `make test` installs them only when npm is on the
# machine; without Node the peer tests skip with the reason.
PEER_DIR := peers/ag-ui-client
PEER_STAMP := $(PEER_DIR)/node_modules/.package-lock.json
PEER_DIRS := $(PEER_DIR) peers/ag-ui-client-0.0.59 peers/assistant-ui-react-ag-ui peers/tanstack-ai peers/copilotkitnext-core peers/copilotkit-react-core peers/producers peers/producers/mastra
PEER_STAMPS := $(addsuffix /node_modules/.package-lock.json,$(PEER_DIRS))
# The Python producers that cannot share .venv (agent-framework-ag-ui 1.7.0 asks for
# ag-ui-protocol < 0.2; the dev extra pins 1.0.0): the `producers` extra in a venv of its own.
PRODUCERS_VENV := .venv-producers
PRODUCERS_STAMP := $(PRODUCERS_VENV)/.installed

NPM := $(shell command -v npm 2>/dev/null)
TEST_PEERS := $(if $(NPM),$(PEER_STAMPS))

venv: $(STAMP)

$(STAMP): pyproject.toml setup.py
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
# as matrix.json, matrix.md and matrix.html (with findings/) under $(OUT)/peers; and the
# producer matrix (issue 42): real producers driven offline, every stream linted, under
# $(OUT)/producers. Not part of `make run`: it needs Node.
peers-report: $(STAMP) $(PEER_STAMPS) $(PRODUCERS_STAMP)
	$(VENV)/bin/activity-check peer matrix --seed $(SEED) --out $(OUT)/peers
	$(VENV)/bin/activity-check producers --out $(OUT)/producers

producers-venv: $(PRODUCERS_STAMP)

$(PRODUCERS_STAMP): pyproject.toml
	$(PYTHON) -m venv $(PRODUCERS_VENV)
	$(PRODUCERS_VENV)/bin/python -m pip install --quiet -e '.[producers]'
	touch $(PRODUCERS_STAMP)

bench: $(STAMP)
	$(PY) benchmarks/replay.py

clean:
	rm -rf $(VENV) $(PRODUCERS_VENV) out .pytest_cache .hypothesis
