# Two entry points for a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: setup demo test lit pytest clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	# CPU build of torch from the local wheel; any other spec pulls CUDA packages.
	$(BIN)/pip install -q torch==2.13.0

$(VENV)/.installed: $(BIN)/python pyproject.toml
	$(BIN)/pip install -q '.[test]'
	touch $@

setup: $(VENV)/.installed

# Re-install the package on every run so the tests see the working tree.
reinstall: setup
	$(BIN)/pip install -q --no-deps --force-reinstall .

demo: reinstall
	$(BIN)/python -m tlx_alias.kernels.demo

lit: reinstall
	PATH=$(abspath $(BIN)):$$PATH $(BIN)/lit -sv test/lit

test: reinstall
	PATH=$(abspath $(BIN)):$$PATH $(BIN)/lit -sv test/lit
	$(BIN)/python -m pytest -q

clean:
	rm -rf $(VENV) build dist
