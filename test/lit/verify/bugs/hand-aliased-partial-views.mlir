// Known-bad hand-aliased Gluon kernels (Triton's custom-form dumps, made with the installed Triton by
// ../Inputs/make_inputs.py). Each must stay flagged, with the counterexample in the kernel's own names
// and lines.
// It borrows only part of an allocation through `reinterpret`, which Triton 3.8 refuses (its
// memdesc_reinterpret keeps the exact size); 3.6, 3.7 and 3.9 compile it.
// UNSUPPORTED: triton-3.8

// RUN: %PYTHON %S/../Inputs/make_inputs.py --out %t fa_packed_p_bad

// P and S of different widths selected with the same index: P[1] lands in S[0] (P3).
// RUN: not %PYTHON -m tlx_alias.verify.cli %t/fa_packed_p_bad.ttgir | FileCheck %s --check-prefix=PACKED
// PACKED: P3 s_tmem: VIOLATION: s_tmem[0] cols [0, 128) (make_inputs.py:58) overlaps p_tmem[1] cols [64, 128) (make_inputs.py:59) although they are different stages; s indexed at make_inputs.py:65; p indexed at make_inputs.py:67
// PACKED: -> VIOLATION
