# Two entry points for a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: setup demo test lit pytest clean gpu-wheels

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

# Wheels the GPU machines lack (no package index there), carried by scripts/gpu_run.sh.
gpu-wheels: $(BIN)/python
	$(BIN)/pip download -q -d .gpu-wheels --only-binary=:all: --python-version 3.12 \
	  --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 z3-solver pytest hypothesis

clean:
	rm -rf $(VENV) build dist
