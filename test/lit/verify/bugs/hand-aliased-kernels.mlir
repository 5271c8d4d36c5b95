// Known-bad hand-aliased Gluon kernels (bugs/Inputs/*.ttgir, Triton's custom-form dumps made by
// ../Inputs/make_inputs.py). Each must stay flagged, with the counterexample in the kernel's own names
// and lines.

// P and S of different widths selected with the same index: P[1] lands in S[0] (P3).
// RUN: not %PYTHON -m tlx_alias.verify.cli %S/Inputs/fa_packed_p_bad.ttgir | FileCheck %s --check-prefix=PACKED
// PACKED: P3 s_tmem: VIOLATION: s_tmem[0] cols [0, 128) (make_inputs.py:53) overlaps p_tmem[1] cols [64, 128) (make_inputs.py:54) although they are different stages; s indexed at make_inputs.py:60; p indexed at make_inputs.py:62
// PACKED: -> VIOLATION

// m_i borrowed one column past S's buffer (P1, derived descriptor outside its buffer).
// RUN: not %PYTHON -m tlx_alias.verify.cli %S/Inputs/fa_alpha_past_end_bad.ttgir | FileCheck %s --check-prefix=PAST
// PAST: P1 s_tmem: VIOLATION: m_i spans cols [128, 129) of its buffer, but a buffer of s_tmem has 128 cols: it reaches into the next buffer (m_i at make_inputs.py:147, s_tmem at make_inputs.py:153)

// The epilogue tile in fp32 no longer fits the ring it borrows (P1).
// RUN: not %PYTHON -m tlx_alias.verify.cli %S/Inputs/gemm_epilogue_overflow_bad.ttgir | FileCheck %s --check-prefix=EPI
// EPI: P1 a_ring: VIOLATION: c_smem spans bytes [0, 65536) but a_ring has 49152 bytes (view at make_inputs.py:86, allocation at make_inputs.py:76)

// Ring index wraps at STAGES + 1 (P5), counterexample with the loop variable.
// RUN: not %PYTHON -m tlx_alias.verify.cli %S/Inputs/ring_wrap_bad.ttgir | FileCheck %s --check-prefix=WRAP
// WRAP: P5 a_ring: VIOLATION: index a = iv@[[L:[0-9]+]] % 4 = 3 at make_inputs.py:101 (must be in [0, 3)) with iv@[[L]] = 3 (induction variable of the loop at make_inputs.py:100)
