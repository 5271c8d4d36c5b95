// Hand-aliased Gluon kernels (no TLX annotations; memory shared with `_reinterpret` / `slice` the way the
// upstream Gluon tutorials do it), compiled on the CPU for sm_90a / sm_100a with the installed Triton by
// Inputs/make_inputs.py into Triton's own custom-form dumps (`compiled.asm["ttgir"]`, what the cache and
// TRITON_KERNEL_DUMP hold). Every one must verify clean: exit 0, no "cannot prove".

// RUN: %PYTHON %S/Inputs/make_inputs.py --out %t fa_tutorial_borrow_ok ws_ring_ok last_slot_after_loop_ok last_slot_after_while_ok last_slot_after_inner_loop_ok

// The tutorial's helpers (_borrow_s_as_p / _borrow_s_as_alpha) inside a persistent loop nest whose ring
// counter (index, phase) is carried through both loops: P5 needs the inductive invariant of each loop.
// RUN: %PYTHON -m tlx_alias.verify.cli %t/fa_tutorial_borrow_ok.ttgir --map | FileCheck %s --check-prefix=TUT
// TUT:       P1 s_tmem: proven: 6 checks
// TUT:       P5 s_tmem: proven: s: index {{.*}} in [0, 2) at make_inputs.py:169
// TUT:       P8 s_tmem: proven: 3 checks
// TUT:       -> SAFE (
// TUT-LABEL: s_tmem: TMEM, 256 cols (make_inputs.py:160; kernel fa_tutorial_borrow)
// TUT:       s_tmem |[0=============================={{\[}}1==============================|
// TUT:       p: 128x128xbf16 at +0 in each s_tmem[i], make_inputs.py:146: [0]=0..64 [1]=128..192
// TUT:       alpha: 128x1xf32 at +64 in each s_tmem[i], make_inputs.py:154: [0]=64..65 [1]=192..193
// TUT:       m_i: 128x1xf32 at +65 in each s_tmem[i], make_inputs.py:154: [0]=65..66 [1]=193..194

// Warp-specialized: the ring is captured into the partitions; both partitions' indices are checked.
// RUN: %PYTHON -m tlx_alias.verify.cli %t/ws_ring_ok.ttgir | FileCheck %s --check-prefix=WS
// WS:        P5 ring: proven: 2 checks
// WS:        -> SAFE (

// The slot of the loop's last step, read after a loop that runs at least once (`n = max(n_iter, 1)`).
// RUN: %PYTHON -m tlx_alias.verify.cli %t/last_slot_after_loop_ok.ttgir | FileCheck %s --check-prefix=LAST
// LAST:      P5 a_ring: proven: 2 checks
// LAST:      -> SAFE (

// After a while loop: `max(k - 1, 0) % 3`.
// RUN: %PYTHON -m tlx_alias.verify.cli %t/last_slot_after_while_ok.ttgir | FileCheck %s --check-prefix=WHILE
// WHILE:     P5 a_ring: proven: 2 checks
// WHILE:     -> SAFE (

// After an inner loop of a persistent nest: `max(c - 1, 0) % 3`.
// RUN: %PYTHON -m tlx_alias.verify.cli %t/last_slot_after_inner_loop_ok.ttgir | FileCheck %s --check-prefix=NEST
// NEST:      P5 a_ring: proven: 2 checks
// NEST:      -> SAFE (

// One JSON document for several inputs.
// RUN: %PYTHON -m tlx_alias.verify.cli --json %t/ws_ring_ok.ttgir %t/fa_tutorial_borrow_ok.ttgir | FileCheck %s --check-prefix=JSON
// JSON:      "kernels": [
// JSON-NEXT:   "ws_ring_ok"
// JSON:      "ok": true,
// JSON:      "prop": "P5",
// JSON:      "kernels": [
// JSON-NEXT:   "fa_tutorial_borrow"
