# Both targets bootstrap a local virtual environment on first use.
PY      ?= python3
VENV    := .venv
STAMP   := $(VENV)/.installed
KISIM   := $(VENV)/bin/kisim

.PHONY: demo test check bench clean babeltrace2 llvm-mca

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(KISIM) demo

test: $(STAMP) babeltrace2 llvm-mca
	$(VENV)/bin/pytest -q

# The fast subset (at most 90 s on a 2-core machine under load): every test not
# marked slow or transparency. `make test` runs them all.
check: $(STAMP) babeltrace2 llvm-mca
	$(VENV)/bin/pytest -q -m "not slow and not transparency"

# The trace tests read kisim's CTF with the real babeltrace2 (Debian package
# babeltrace2). Install it where it is missing and apt is available, as root
# or through passwordless sudo; never fail here: without it those tests skip.
APT_BT2 := apt-get install -y -qq babeltrace2 >/dev/null 2>&1
babeltrace2:
	@command -v babeltrace2 >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1 || \
	  { echo "installing babeltrace2 for the trace tests"; \
	    $(APT_BT2) || { apt-get update -qq >/dev/null 2>&1 && $(APT_BT2); } || \
	    sudo -n $(APT_BT2) || { sudo -n apt-get update -qq >/dev/null 2>&1 && sudo -n $(APT_BT2); } || \
	    echo "could not install babeltrace2: its tests will skip"; } || true

# The timing model's Cortex-A9 oracle runs llvm-mca-19 (Debian llvm-19), installed
# the same way; without it tests/test_mca.py skips.
APT_MCA := apt-get install -y -qq llvm-19 >/dev/null 2>&1
llvm-mca:
	@command -v llvm-mca-19 >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1 || \
	  { echo "installing llvm-19 for the llvm-mca oracle"; \
	    $(APT_MCA) || { apt-get update -qq >/dev/null 2>&1 && $(APT_MCA); } || \
	    sudo -n $(APT_MCA) || { sudo -n apt-get update -qq >/dev/null 2>&1 && sudo -n $(APT_MCA); } || \
	    echo "could not install llvm-19: the llvm-mca oracle tests will skip"; } || true

bench: $(STAMP)
	$(VENV)/bin/python benchmarks/bench_accounting.py

clean:
	rm -rf $(VENV) .cache
