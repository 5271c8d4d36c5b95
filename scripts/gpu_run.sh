#!/usr/bin/env bash
# The whole GPU run in one go, on a lent H100/H200 machine (Python 3.12, triton 3.6.0, torch 2.11,
# jaxlib.mlir for the MLIR bindings, no package index). Logs go to $OUT (or ./gpu-logs).
#
#   bash scripts/gpu_run.sh [env] [tests] [sanitize] [bench]      (default: all four)
#   bash scripts/gpu_run.sh ws        the warp-specialized attention alone (< 9 min on an H100): small launches
#                                     and the SASS per partition, its GPU tests, memcheck + racecheck on small
#                                     launches, the A/B table (= ws-smoke ws-tests ws-sanitize ws-bench, each
#                                     also a stage of its own; each under a time limit, the rest skipped after
#                                     one times out)
#   bash scripts/gpu_run.sh ws-ab     ws shared vs cuDNN (and O from registers) alone, D=128/256, two runs
#   bash scripts/gpu_run.sh ws-seq    ws shared vs cuDNN at the same work with S = 16384 and 32768
#   bash scripts/gpu_run.sh ws-ncu    Nsight Compute reports of the ws attention and cuDNN (D=128/256, both masks)
#   bash scripts/gpu_run.sh gemm-ws   the warp-specialized GEMM alone (< 6 min on an H100): small launches under a
#                                     time limit (a hang stops here), its GPU tests, the interleaved A/B table
#                                     against torch.matmul, its unshared variant and hopper_gemm (= gemm-ws-smoke
#                                     gemm-ws-tests gemm-ws-bench, each also a stage of its own)
#
# The project goes there as its own wheel, with the wheels the machine lacks (z3-solver, pytest,
# hypothesis), all in .gpu-wheels/ (`make gpu-wheels` fills it), installed into a venv that sees the
# machine's torch, triton and jaxlib: the same install a user makes (the .pth start-up file included).
# `python -P` keeps the checkout's tlx_alias/ folder from shadowing the installed package.
set -u
cd "$(dirname "$0")/.."
LOG=${OUT:-gpu-logs}
mkdir -p "$LOG"
STAGES=${*:-env tests sanitize bench}
# GPU_TRITON=3.9.0: the venv gets that Triton (before the machine's 3.6.0 on the path) from the wheel parts
# `make gpu-triton` splits into .gpu-triton/ (carried over several calls: a warm machine keeps them)
GPU_TRITON=${GPU_TRITON:-}
VENV=/tmp/tlx-gpu-venv${GPU_TRITON:+-$GPU_TRITON}
if [ ! -x "$VENV/bin/python" ]; then
  # python3 there is itself a venv (/opt/torch/.venv): its site-packages joins ours as a plain path entry
  { python3 -m venv "$VENV" &&
    python3 -c 'import site; print("\n".join(site.getsitepackages()))' \
      > "$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/machine.pth" &&
    if [ -n "$GPU_TRITON" ]; then
      WHL=/tmp/$(cat .gpu-triton/name) && cat .gpu-triton/part-*.d/part-* > "$WHL" &&
      "$VENV/bin/python" -m pip install -q --no-index --no-deps "$WHL" && rm -f "$WHL"
    fi &&
    "$VENV/bin/python" -m pip install -q --no-index --no-deps .gpu-wheels/*.whl; } > "$LOG/deps.txt" 2>&1 \
    || echo "venv / wheel install failed (see deps.txt)"
fi
# a venv left by an earlier run on a still-warm machine gets this checkout's wheel if it changed
WHEEL_SUM=$(cat .gpu-wheels/tlx_alias-*.whl 2>/dev/null | sha256sum | cut -c1-16)
if [ "$(cat "$VENV/.tlx-wheel" 2>/dev/null)" != "$WHEEL_SUM" ]; then
  "$VENV/bin/python" -m pip install -q --no-index --no-deps --force-reinstall .gpu-wheels/tlx_alias-*.whl \
    >> "$LOG/deps.txt" 2>&1 && echo "$WHEEL_SUM" > "$VENV/.tlx-wheel"
fi
export PY="$VENV/bin/python -P"
export TRITON_CACHE_DIR=/tmp/tlx-gpu-cache${GPU_TRITON:+-$GPU_TRITON}
run() {  # run NAME CMD...: log to $LOG/NAME.txt, print its tail
  local name=$1; shift
  echo "=== $name: $*"
  local t0=$(date +%s)
  "$@" > "$LOG/$name.txt" 2>&1
  local rc=$?
  echo "--- $name rc=$rc in $(( $(date +%s) - t0 ))s"
  tail -n 25 "$LOG/$name.txt"
  return $rc
}
WS_HUNG=""   # set when a ws stage times out: the later ws stages are skipped (a hung kernel would hang them too)
ws_run() {  # ws_run NAME SECONDS CMD...: run under a time limit unless an earlier ws stage hung
  local name=$1 limit=$2; shift 2
  if [ -n "$WS_HUNG" ]; then echo "=== $name: skipped ($WS_HUNG timed out)"; return; fi
  run "$name" timeout -k 10 "$limit" "$@"
  [ $? -eq 124 ] && WS_HUNG=$name
  return 0
}
EXPANDED=""
for stage in $STAGES; do
  case $stage in
    ws) EXPANDED="$EXPANDED ws-smoke ws-tests ws-sanitize ws-bench" ;;
    gemm-ws) EXPANDED="$EXPANDED gemm-ws-smoke gemm-ws-tests gemm-ws-bench" ;;
    *) EXPANDED="$EXPANDED $stage" ;;
  esac
done
for stage in $EXPANDED; do
  case $stage in
    env)
      run env bash -c 'date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv;
        $PY -c "import sys, triton, torch; print(sys.version); print(\"triton\", triton.__version__, \"torch\", torch.__version__)";
        $PY -c "import tlx_alias, tlx_alias._mlir as m; print(\"tlx_alias\", tlx_alias.__file__, \"mlir bindings:\", m.PROVIDER)";
        which compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer' ;;
    tests)
      # (no package index there: the sdist -> wheel packaging test runs in CI instead)
      run tests $PY -m pytest -q -p no:cacheprovider test/pytest --ignore=test/pytest/test_packaging.py ;;
    sanitize)
      SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
      run smoke $PY test/tools/gpu_smoke.py      # compile outside the sanitizer first (cache)
      for tool in memcheck racecheck; do
        run "sanitize-$tool-aliasing" "$SAN" --tool "$tool" \
          $PY -m pytest -q -p no:cacheprovider test/pytest/test_gpu_aliasing.py
        run "sanitize-$tool-kernels" "$SAN" --tool "$tool" $PY test/tools/gpu_smoke.py
      done ;;
    ws-smoke)
      # every configuration the ws stages launch compiled first, 16 processes at a time (--warm); then small
      # launches of every head dim and mask: a wrong result or a hang shows here; the SASS per partition
      ws_run ws-smoke 240 $PY test/tools/gpu_smoke_ws.py --warm --sass ;;
    ws-tests)
      # the tests and the benchmark share one Triton cache: the kernels compiled here are not compiled again
      export WS_TEST_SHARED_CACHE=1
      ws_run ws-tests 300 $PY -m pytest -q -p no:cacheprovider test/pytest/test_kernels_hopper_ws.py \
        -k "reference or repeatable" ;;
    ws-sanitize)
      SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
      for tool in memcheck racecheck; do
        ws_run "ws-$tool" 180 "$SAN" --tool "$tool" $PY test/tools/gpu_smoke_ws.py --small
      done ;;
    ws-bench)
      ws_run ws-bench 330 $PY benchmarks/attention_ws_bench.py ;;
    ws-ab)
      # ws shared against cuDNN (and O from registers, the best unshared variant) alone at D=128 and D=256, twice
      for n in 1 2; do
        ws_run "ws-ab-$n" 200 $PY benchmarks/attention_ws_bench.py --dims 128,256 --rounds 8 \
          --only "ws shared,ws registers,sdpa cudnn"
      done ;;
    ws-seq)
      # the same work as B4 S8192 at longer sequences (fewer, longer tiles): ws shared vs cuDNN
      ws_run ws-seq-16k 200 $PY benchmarks/attention_ws_bench.py --dims 128,256 --rounds 6 --batch 1 --seq 16384 \
        --only "ws shared,sdpa cudnn"
      ws_run ws-seq-32k 200 $PY benchmarks/attention_ws_bench.py --dims 128,256 --rounds 6 --batch 1 --seq 32768 \
        --heads 128:8,256:4 --only "ws shared,sdpa cudnn" ;;
    ws-ncu)
      # Nsight Compute on one launch each of the ws attention and cuDNN at D=128 and D=256, both masks
      # (kernel_profile.py WS_PROFILES): SpeedOfLight, warp states, stalls per issued instruction
      ws_run ws-ncu 420 $PY benchmarks/kernel_profile.py --ncu-all "$LOG/ncu-ws" --profiles ws ;;
    gemm-ws-smoke)
      # both dtypes and variants, a few small shapes: a wrong result or a hang (the ring hand-off) shows here
      ws_run gemm-ws-smoke 90 $PY test/tools/gpu_smoke_gemm_ws.py ;;
    gemm-ws-tests)
      export WS_TEST_SHARED_CACHE=1   # the benchmark below finds the kernels these tests compiled
      ws_run gemm-ws-tests 120 $PY -m pytest -q -p no:cacheprovider test/pytest/test_hopper_gemm_ws.py ;;
    gemm-ws-bench)
      ws_run gemm-ws-bench 150 $PY benchmarks/kernel_bench.py --kernel hopper_gemm_ws --no-proof --rounds 4 --sweep ;;
    bench)
      # two full repeats, to report the spread between them
      run bench-1 $PY benchmarks/kernel_bench.py --no-proof
      run bench-2 $PY benchmarks/kernel_bench.py --no-proof ;;
  esac
done
