// A hand-aliased Hopper GEMM whose epilogue tile borrows part of the dead operand ring through
// `reinterpret`, compiled with the installed Triton by Inputs/make_inputs.py. Triton 3.8 refuses a
// reinterpret that changes the size; 3.6, 3.7 and 3.9 compile it. It must verify clean.
// UNSUPPORTED: triton-3.8

// RUN: %PYTHON %S/Inputs/make_inputs.py --out %t gemm_epilogue_ok

// The epilogue tile borrows the dead operand ring (used whole: no stage correspondence, P3 n/a);
// the ring counter `idx = where(idx + 1 == STAGES, 0, idx + 1)` is proven in [0, 3).
// RUN: %PYTHON -m tlx_alias.verify.cli %t/gemm_epilogue_ok.ttgir --map | FileCheck %s --check-prefix=EPI
// EPI:       P3 a_ring: n/a: c_smem is used whole (never indexed)
// EPI:       P5 a_ring: proven: a: index {{.*}} in [0, 3) at make_inputs.py:85
// EPI:       P6 a_ring: proven: a_ring: 49152 of 232448 bytes
// EPI:       -> SAFE (
// EPI:       c_smem: 128x128xbf16 at +0, 1 x 32768 bytes, used whole, make_inputs.py:91: [0]=0..32768

// SVG memory map.
// RUN: %PYTHON -m tlx_alias.verify.cli %t/gemm_epilogue_ok.ttgir --map-svg %t/map.svg > /dev/null
// RUN: FileCheck %s --check-prefix=SVG < %t/map.svg
// SVG:       <svg xmlns="http://www.w3.org/2000/svg"
// SVG:       a_ring: SMEM 49152 bytes
// SVG:       <title>a_ring[2] 32768..49152 bytes</title>
// SVG:       <title>c_smem[0] 0..32768 bytes</title>
