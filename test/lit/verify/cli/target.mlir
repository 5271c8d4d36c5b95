// --target accepts sm_<N>[a], cuda:<N> and <N> for a capability whose limits the proof knows; anything else
// is a usage error (exit 2) listing what is accepted. Before, `foo` was ignored and `-1` / `sm_0` were read
// as capability 1 / 0, which made this safe sm_100 kernel a P6 violation.

// RUN: %PYTHON %S/Inputs/expect_exit.py 2 -- tlx-verify %S/../tlx-fa-seed000.mlir --target sm_0 2>&1 \
// RUN:   | FileCheck %s --implicit-check-not=VIOLATION
// CHECK: usage: tlx-verify
// CHECK: tlx-verify: error: --target 'sm_0' is not a target tlx-verify knows: give sm_<N>, sm_<N>a, cuda:<N> or <N>, with N one of 80, 86, 87, 89, 90, 100, 103, 110, 120, 121 (e.g. --target sm_100a)

// RUN: %PYTHON %S/Inputs/expect_exit.py 2 -- tlx-verify %S/../tlx-fa-seed000.mlir --target=-1 2>&1 | FileCheck %s --check-prefix=NEG
// NEG: error: --target '-1' is not a target
// RUN: %PYTHON %S/Inputs/expect_exit.py 2 -- tlx-verify %S/../tlx-fa-seed000.mlir --target foo 2>&1 | FileCheck %s --check-prefix=FOO
// FOO: error: --target 'foo' is not a target
// RUN: %PYTHON %S/Inputs/expect_exit.py 2 -- tlx-verify %S/../tlx-fa-seed000.mlir --target "sm_90a sm_100a" 2>&1 | FileCheck %s --check-prefix=TWO
// TWO: error: --target 'sm_90a sm_100a' is not a target
// The other two of issue 12's list, ignored before: an empty target and cuda: without digits.
// RUN: %PYTHON %S/Inputs/expect_exit.py 2 -- tlx-verify %S/../tlx-fa-seed000.mlir --target= 2>&1 | FileCheck %s --check-prefix=EMPTY
// EMPTY: error: --target '' is not a target
// RUN: %PYTHON %S/Inputs/expect_exit.py 2 -- tlx-verify %S/../tlx-fa-seed000.mlir --target cuda:abc 2>&1 | FileCheck %s --check-prefix=ABC
// ABC: error: --target 'cuda:abc' is not a target

// RUN: %PYTHON %S/Inputs/expect_exit.py 0 -- tlx-verify %S/../tlx-fa-seed000.mlir --target sm_100a | FileCheck %s --check-prefix=OK
// RUN: %PYTHON %S/Inputs/expect_exit.py 0 -- tlx-verify %S/../tlx-fa-seed000.mlir --target cuda:103 | FileCheck %s --check-prefix=OK
// RUN: %PYTHON %S/Inputs/expect_exit.py 0 -- tlx-verify %S/../tlx-fa-seed000.mlir --target 100 | FileCheck %s --check-prefix=OK
// OK: -> exit 0
