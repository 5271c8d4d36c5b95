# Two entry points for a fresh machine: `make demo` and `make test`.
# TRITON picks the Triton release the venv is built with (supported: 3.6.0 3.7.1 3.8.0 3.9.0).
PYTHON ?= python3
TRITON ?= 3.9.0
VENV   ?= .venv-triton$(TRITON)
BIN    := $(VENV)/bin
VERSIONS ?= 3.6.0 3.7.1 3.8.0 3.9.0

.PHONY: setup demo test lit pytest matrix clean gpu-wheels gpu-triton

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	# CPU build of torch from the local wheel; any other spec pulls CUDA packages.
	$(BIN)/pip install -q torch==2.13.0 triton==$(TRITON)

# Editable install: the tests run against the working tree, mapped as the installed package is.
$(VENV)/.installed: $(BIN)/python pyproject.toml setup.py plugin/tlx_alias.pth
	$(BIN)/pip install -q -e '.[test]' triton==$(TRITON)
	touch $@

setup: $(VENV)/.installed

demo: setup
	$(BIN)/python -m tlx_alias.kernels.demo

lit: setup
	PATH=$(abspath $(BIN)):$$PATH $(BIN)/lit -sv test/lit

pytest: setup
	$(BIN)/pytest -q

test: lit pytest

# The CPU suite against every supported Triton, one venv each; prints a table (README "Supported versions").
matrix:
	@for v in $(VERSIONS); do $(MAKE) --no-print-directory test TRITON=$$v > .matrix-$$v.log 2>&1; \
	  echo "triton $$v: exit $$? | lit: $$(grep -E '^ +(Passed|Unsupported|Failed)' .matrix-$$v.log | tr -s ' ' | tr '\n' ' ')| pytest: $$(grep -E '[0-9]+ (passed|failed)' .matrix-$$v.log | tail -n 1)"; done

# The project's wheel and the wheels the GPU machines lack (no package index there), for scripts/gpu_run.sh.
gpu-wheels: setup
	rm -rf .gpu-wheels && mkdir -p .gpu-wheels
	$(BIN)/python -m build -q --wheel --outdir .gpu-wheels .
	$(BIN)/pip download -q -d .gpu-wheels --only-binary=:all: --python-version 3.12 \
	  --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 z3-solver pytest hypothesis

# Triton 3.9.0 for the GPU machines (they have 3.6.0 and no package index): the cp312 wheel, 286 MB, in
# 55 MiB parts, one carry path each (a call carries 64 MiB with the checkout); scripts/gpu_run.sh joins them (GPU_TRITON=3.9.0).
gpu-triton: setup
	rm -rf .gpu-triton && mkdir -p .gpu-triton/whl
	$(BIN)/pip download -q -d .gpu-triton/whl --only-binary=:all: --no-deps --python-version 3.12 \
	  --platform manylinux_2_28_x86_64 triton==3.9.0
	cd .gpu-triton && for f in whl/*.whl; do split -b 55m -d "$$f" "part-"; basename "$$f" > name; done && rm -rf whl
	cd .gpu-triton && for p in part-*; do mkdir "$$p.d" && mv "$$p" "$$p.d/"; done && ls -R

clean:
	rm -rf .venv-triton* build dist *.egg-info
