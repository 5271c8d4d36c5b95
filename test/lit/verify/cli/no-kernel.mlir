// A file with no kernel — empty, comment-only (this file), /dev/null — is an unreadable input (exit 2), not
// "SAFE with 0 allocations".

// RUN: %PYTHON %S/Inputs/expect_exit.py 2 -- tlx-verify %s 2>&1 | FileCheck %s --implicit-check-not=SAFE
// CHECK: tlx-verify: error: no kernel (tt.func) found in {{.*}}no-kernel.mlir: tlx-verify checks the kernels of a Triton .ttgir dump (cache or TRITON_KERNEL_DUMP) or of generic-form .mlir
// CHECK: tlx-verify: UNREADABLE {{.*}}no-kernel.mlir

// RUN: %PYTHON %S/Inputs/make_bad.py truncate 0 %s %t.empty.ttgir
// RUN: %PYTHON %S/Inputs/expect_exit.py 2 -- tlx-verify %t.empty.ttgir /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=EMPTY --implicit-check-not=SAFE
// EMPTY: tlx-verify: error: no kernel (tt.func) found in {{.*}}.empty.ttgir:
// EMPTY: tlx-verify: error: no kernel (tt.func) found in /dev/null:
// EMPTY: tlx-verify: 2 inputs: 0 violation, 2 unreadable, 0 unproven, 0 safe -> exit 2
