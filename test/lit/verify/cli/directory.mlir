// tlx-verify DIR checks every .ttgir below DIR (a Triton cache or TRITON_KERNEL_DUMP layout), in sorted order;
// other files are skipped; a directory with none is exit 2.

// RUN: rm -rf %t && mkdir -p %t/cache/b2 %t/cache/a1/x %t/empty/sub
// RUN: cp %S/../tlx-fa-seed000.mlir %t/cache/b2/seed.ttgir
// RUN: cp %S/../bugs/tlx-cross-stage.mlir %t/cache/a1/x/cross.ttgir
// RUN: cp %S/../tlx-fa-seed000.mlir %t/cache/a1/seed.mlir
// RUN: cp %S/../tlx-fa-seed000.mlir %t/cache/a1/seed.json
// RUN: %PYTHON %S/Inputs/expect_exit.py 1 -- tlx-verify %t/cache | FileCheck %s
// CHECK: tlx-verify: VIOLATION  {{.*}}cache/a1/x/cross.ttgir
// CHECK-NEXT: tlx-verify: SAFE       {{.*}}cache/b2/seed.ttgir
// CHECK-NEXT: tlx-verify: 2 inputs: 1 violation, 0 unreadable, 0 unproven, 1 safe -> exit 1

// RUN: %PYTHON %S/Inputs/expect_exit.py 2 -- tlx-verify %t/empty 2>&1 | FileCheck %s --check-prefix=EMPTY
// EMPTY: tlx-verify: error: {{.*}}empty: no .ttgir file in this directory or below it: give a Triton cache or TRITON_KERNEL_DUMP directory, or the files themselves
// EMPTY: tlx-verify: 1 input: 0 violation, 1 unreadable, 0 unproven, 0 safe -> exit 2
