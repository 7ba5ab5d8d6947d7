# Both targets bootstrap a local virtual environment on first use.
PY      ?= python3
VENV    := .venv
STAMP   := $(VENV)/.installed
KISIM   := $(VENV)/bin/kisim

.PHONY: demo test check bench clean babeltrace2 trace-cmd llvm-mca

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(KISIM) demo

# The tests run on one pytest-xdist worker per core, at most PYTEST_WORKERS
# (each worker holds a guest machine or two: about 1.6 GB at the most).
PYTEST_WORKERS ?= 4
PYTEST := $(VENV)/bin/pytest -q -n auto --maxprocesses $(PYTEST_WORKERS)

test: $(STAMP) babeltrace2 trace-cmd llvm-mca
	$(PYTEST)

# The fast subset (about a minute on a 2-core machine): every test not marked
# slow or transparency. `make test` runs them all.
check: $(STAMP) babeltrace2 trace-cmd llvm-mca
	$(PYTEST) -m "not slow and not transparency"

# The trace tests read kisim's CTF with the real babeltrace2 and its trace.dat
# with the real trace-cmd (Debian packages babeltrace2, and trace-cmd, which
# brings libtraceevent1). Install each where it is missing and apt is available,
# as root or through passwordless sudo; never fail here: without it those tests skip.
# $(call apt_tool,COMMAND[,PACKAGE]): install PACKAGE (default: COMMAND's name)
# where COMMAND is missing.
apt_tool = command -v $(1) >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1 || \
	  { echo "installing $(or $(2),$(1)) for the tests that run $(1)"; \
	    $(call apt_get,$(or $(2),$(1))) || \
	    { apt-get update -qq >/dev/null 2>&1 && $(call apt_get,$(or $(2),$(1))); } || \
	    sudo -n $(call apt_get,$(or $(2),$(1))) || \
	    { sudo -n apt-get update -qq >/dev/null 2>&1 && sudo -n $(call apt_get,$(or $(2),$(1))); } || \
	    echo "could not install $(or $(2),$(1)): the tests that run $(1) will skip"; } || true
apt_get = apt-get install -y -qq $(1) >/dev/null 2>&1

babeltrace2:
	@$(call apt_tool,babeltrace2)

trace-cmd:
	@$(call apt_tool,trace-cmd)

# The timing model's Cortex-A9 oracle runs llvm-mca-19 (Debian llvm-19), installed
# the same way; without it tests/test_mca.py skips.
llvm-mca:
	@$(call apt_tool,llvm-mca-19,llvm-19)

bench: $(STAMP)
	$(VENV)/bin/python benchmarks/bench_accounting.py

clean:
	rm -rf $(VENV) .cache
