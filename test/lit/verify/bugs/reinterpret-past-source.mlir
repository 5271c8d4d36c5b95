// Hand-made views that claim more memory than their source (P1). Triton 3.8 and later reject such a
// reinterpret themselves ("same logical storage size" / "footprint exceeds the source view"); 3.6 and
// 3.7 compile them, and only the proof stops them.
// REQUIRES: triton-3.6 || triton-3.7

// RUN: %PYTHON %S/../Inputs/make_inputs.py --out %t fa_alpha_past_end_bad gemm_epilogue_overflow_bad

// m_i borrowed past S's buffer through a reinterpret wider than the buffer: at S[1], past the allocation's
// end (the counterexample prefers an index at which the view leaves the allocation).
// RUN: not %PYTHON -m tlx_alias.verify.cli %t/fa_alpha_past_end_bad.ttgir | FileCheck %s
// CHECK: P1 s_tmem: VIOLATION: m_i spans cols [0, 256) of s_tmem[1], but a buffer of s_tmem has 128 cols: it reaches cols [128, 384) of s_tmem, past its end (256 cols) (m_i at make_inputs.py:154, s_tmem at make_inputs.py:160)

// The epilogue tile in fp32 no longer fits the ring it borrows (P1).
// RUN: not %PYTHON -m tlx_alias.verify.cli %t/gemm_epilogue_overflow_bad.ttgir | FileCheck %s --check-prefix=EPI
// EPI: P1 a_ring: VIOLATION: c_smem spans bytes [0, 65536) but a_ring has 49152 bytes (view at make_inputs.py:91, allocation at make_inputs.py:81)

