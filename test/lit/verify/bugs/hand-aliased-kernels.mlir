// Known-bad hand-aliased Gluon kernels (Triton's custom-form dumps, made with the installed Triton by
// ../Inputs/make_inputs.py). Each must stay flagged, with the counterexample in the kernel's own names
// and lines.

// RUN: %PYTHON %S/../Inputs/make_inputs.py --out %t ring_wrap_bad

// Ring index wraps at STAGES + 1 (P5), counterexample with the loop variable.
// RUN: not %PYTHON -m tlx_alias.verify.cli %t/ring_wrap_bad.ttgir | FileCheck %s --check-prefix=WRAP
// WRAP: P5 a_ring: VIOLATION: index a = iv@[[L:[0-9]+]] % 4 = 3 at make_inputs.py:104 (must be in [0, 3)) with iv@[[L]] = 3 (induction variable of the loop at make_inputs.py:103)
