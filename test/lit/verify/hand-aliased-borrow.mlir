// A hand-aliased Blackwell kernel in the upstream tutorial's style: P (bf16, half of S's columns) and alpha
// (S's last column) borrowed from each S buffer with `reinterpret`, compiled with the installed Triton by
// Inputs/make_inputs.py. Triton 3.8 refuses a reinterpret that changes the logical size (S 128x128xf32 ->
// P 128x64xbf16); 3.6, 3.7 and 3.9 compile it. It must verify clean: exit 0, no "cannot prove".
// UNSUPPORTED: triton-3.8

// RUN: %PYTHON %S/Inputs/make_inputs.py --out %t fa_borrow_ok

// RUN: %PYTHON -m tlx_alias.verify.cli %t/fa_borrow_ok.ttgir | FileCheck %s --check-prefix=BORROW
// BORROW-LABEL: fa_borrow_ok.ttgir: fa_borrow_ok (sm_100)
// BORROW-NEXT:    P1 s_tmem: proven: 4 checks
// BORROW-NEXT:    P2 s_tmem: proven: s_tmem[i] / s_tmem[j] disjoint for i != j (2 buffers)
// BORROW-NEXT:    P3 s_tmem: n/a: one view of this allocation
// BORROW-NEXT:    P4 s_tmem: n/a: no `distinct` reuse group declared
// BORROW-NEXT:    P5 s_tmem: proven: s: index iv@{{[0-9]+}} % 2 in [0, 2) at make_inputs.py:39
// BORROW-NEXT:    P6 s_tmem: proven: s_tmem: 256 of 512 cols
// BORROW-NEXT:    P7 s_tmem: proven: {{[0-9]+}} overlapping accesses of alpha, p, s_tmem ordered, and {{[0-9]+}} of one view to its own bytes, on {{[0-9]+}} bounded runs (integer arguments = 256, 384{{.*}})
// BORROW-NEXT:    P8 s_tmem: proven: p / alpha: borrows of one s_tmem buffer disjoint or nested
// BORROW-NEXT:  summary: 1 allocation, 8 verdicts: 6 proven, 0 violated, 0 cannot prove, 2 n/a -> SAFE (

