#!/usr/bin/env bash
# The whole GPU run in one go, on a lent H100/H200 machine (Python 3.12, triton 3.6.0, torch 2.11,
# jaxlib.mlir for the MLIR bindings, no package index). Logs go to $OUT (or ./gpu-logs).
#
#   bash scripts/gpu_run.sh [env] [tests] [sanitize] [bench]      (default: all four)
#
# Wheels that the machine lacks (z3-solver, pytest, hypothesis) are carried in .gpu-wheels/
# (`make gpu-wheels` fills it) and installed into a private folder; the project itself runs from the
# working tree through PYTHONPATH (tlx_alias/ links plugin/, python_passes/, verify/, kernels/).
set -u
cd "$(dirname "$0")/.."
LOG=${OUT:-gpu-logs}
mkdir -p "$LOG"
STAGES=${*:-env tests sanitize bench}
DEPS=/tmp/tlx-gpu-deps
if [ -d .gpu-wheels ] && [ ! -d "$DEPS" ]; then
  python3 -m pip install -q --no-index --find-links .gpu-wheels --target "$DEPS" z3-solver pytest hypothesis \
    > "$LOG/deps.txt" 2>&1 || echo "wheel install failed (see deps.txt)"
fi
export PYTHONPATH="$PWD:$DEPS"
export TRITON_CACHE_DIR=/tmp/tlx-gpu-cache
run() {  # run NAME CMD...: log to $LOG/NAME.txt, print its tail
  local name=$1; shift
  echo "=== $name: $*"
  local t0=$(date +%s)
  "$@" > "$LOG/$name.txt" 2>&1
  local rc=$?
  echo "--- $name rc=$rc in $(( $(date +%s) - t0 ))s"
  tail -n 25 "$LOG/$name.txt"
}
for stage in $STAGES; do
  case $stage in
    env)
      run env bash -c 'date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv;
        python3 -c "import sys, triton, torch; print(sys.version); print(\"triton\", triton.__version__, \"torch\", torch.__version__)";
        python3 -c "import tlx_alias._mlir as m; print(\"mlir bindings:\", m.PROVIDER)";
        which compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer' ;;
    tests)
      run tests python3 -m pytest -q -p no:cacheprovider test/pytest ;;
    sanitize)
      SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
      run smoke python3 test/tools/gpu_smoke.py      # compile outside the sanitizer first (cache)
      for tool in memcheck racecheck; do
        run "sanitize-$tool-aliasing" "$SAN" --tool "$tool" \
          python3 -m pytest -q -p no:cacheprovider test/pytest/test_gpu_aliasing.py
        run "sanitize-$tool-kernels" "$SAN" --tool "$tool" python3 test/tools/gpu_smoke.py
      done ;;
    bench)
      # two full repeats, to report the spread between them
      run bench-1 python3 benchmarks/kernel_bench.py --no-proof
      run bench-2 python3 benchmarks/kernel_bench.py --no-proof ;;
  esac
done
