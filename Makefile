# activity-check: `make run` (the main job) and `make test` (the whole suite).
# Both bootstrap .venv from pyproject.toml on first use.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
SEED ?= 0
OUT ?= out
BUDGET ?= 60

.PHONY: run test venv clean bench

venv: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	$(VENV)/bin/activity-check run --seed $(SEED) --out $(OUT) --budget $(BUDGET)

test: $(STAMP)
	$(PY) -m pytest -n 2 tests

bench: $(STAMP)
	$(PY) benchmarks/replay.py

clean:
	rm -rf $(VENV) out .pytest_cache .hypothesis
