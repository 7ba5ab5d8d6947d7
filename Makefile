# Both targets bootstrap a local virtual environment on first use.
PY      ?= python3
VENV    := .venv
STAMP   := $(VENV)/.installed
KISIM   := $(VENV)/bin/kisim

.PHONY: demo test bench clean

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(KISIM) demo

test: $(STAMP)
	$(VENV)/bin/pytest -q

bench: $(STAMP)
	$(VENV)/bin/python benchmarks/bench_accounting.py

clean:
	rm -rf $(VENV) .cache
