// Known-bad hand-aliased Gluon kernels (Triton's custom-form dumps, made with the installed Triton by
// ../Inputs/make_inputs.py). Each must stay flagged, with the counterexample in the kernel's own names
// and lines.

// RUN: %PYTHON %S/../Inputs/make_inputs.py --out %t ring_wrap_bad last_slot_after_loop_bad last_slot_after_while_bad last_slot_after_inner_loop_bad

// Ring index wraps at STAGES + 1 (P5), counterexample with the loop variable.
// RUN: not %PYTHON -m tlx_alias.verify.cli %t/ring_wrap_bad.ttgir | FileCheck %s --check-prefix=WRAP
// WRAP: P5 a_ring: VIOLATION: index iv@[[L:[0-9]+]] % 4 = 3 at make_inputs.py:106 (must be in [0, 3)) with iv@[[L]] = 3 (induction variable of the loop at make_inputs.py:105)

// The slot of the loop's last step, read after the loop: `(n_iter - 1) % 3` is negative when the loop runs zero
// times (P5). An induction variable's range holds only inside its loop; as a fact of the whole kernel it said
// that every loop runs at least once, and this kernel was "proven".
// RUN: not %PYTHON -m tlx_alias.verify.cli %t/last_slot_after_loop_bad.ttgir | FileCheck %s --check-prefix=LAST
// LAST: P5 a_ring: VIOLATION: index last = (n_iter - 1) % 3 = -{{[12]}} at make_inputs.py:202 (must be in [0, 3)) with n_iter = {{-?[0-9]+}} (kernel argument)

// The same after a while loop, whose result the model only approximates: the proof alone would end in "cannot
// prove"; the concrete run at n_iter = 0 (the loop takes no step) shows the index, so it is a violation.
// RUN: not %PYTHON -m tlx_alias.verify.cli %t/last_slot_after_while_bad.ttgir | FileCheck %s --check-prefix=WHILE
// WHILE: P5 a_ring: VIOLATION: index last = (k - 1) % 3 = -1 at make_inputs.py:221 (must be in [0, 3)) on a run with n_iter = 0, program 0 of 1

// A persistent nest whose ring counter runs on across tiles: each tile's epilogue reads `(c - 1) % 3`; when the
// inner loop takes no step (k_steps <= 0) the first tile reads slot -1. The run that shows it needs the two
// arguments apart (n_tiles = 1, k_steps = 0), from Z3's counterexample.
// RUN: not %PYTHON -m tlx_alias.verify.cli %t/last_slot_after_inner_loop_bad.ttgir | FileCheck %s --check-prefix=NEST
// NEST: P5 a_ring: VIOLATION: index last = (c - 1) % 3 = -1 at make_inputs.py:240 (must be in [0, 3)) on a run with n_tiles = {{[1-9][0-9]*}}, k_steps = {{-?[0-9]+}}, program 0 of 1
