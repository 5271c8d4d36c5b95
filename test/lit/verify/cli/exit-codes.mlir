// One meaning per exit status: 0 all proven, 1 a violation, 2 unreadable input or usage error, 3 "cannot
// prove" and nothing violated (0 with --allow-unproven; --strict is the default, kept as an alias). Several
// inputs: the first of 1, 2, 3 any input has, and one result line per input.

// RUN: %PYTHON %S/Inputs/expect_exit.py 3 -- tlx-verify %S/Inputs/unproven.mlir | FileCheck %s --check-prefix=UNPROVEN
// RUN: %PYTHON %S/Inputs/expect_exit.py 3 -- tlx-verify --strict %S/Inputs/unproven.mlir | FileCheck %s --check-prefix=UNPROVEN
// UNPROVEN: P5 ring: CANNOT PROVE
// UNPROVEN: tlx-verify: UNPROVEN   {{.*}}unproven.mlir
// UNPROVEN-NEXT: tlx-verify: 1 input: 0 violation, 0 unreadable, 1 unproven, 0 safe -> exit 3
// RUN: %PYTHON %S/Inputs/expect_exit.py 0 -- tlx-verify --allow-unproven %S/Inputs/unproven.mlir | FileCheck %s --check-prefix=ALLOW
// ALLOW: 1 unproven, 0 safe -> exit 0
// RUN: %PYTHON %S/Inputs/expect_exit.py 2 -- tlx-verify --allow-unproven --strict %S/Inputs/unproven.mlir 2>&1 | FileCheck %s --check-prefix=BOTH
// BOTH: error: argument --strict: not allowed with argument --allow-unproven

// A violation is never hidden by an unreadable file; an unreadable file never by "cannot prove".
// RUN: %PYTHON %S/Inputs/expect_exit.py 1 -- tlx-verify %S/no-kernel.mlir %S/../bugs/tlx-cross-stage.mlir %S/Inputs/unproven.mlir | FileCheck %s --check-prefix=WORST1
// WORST1: tlx-verify: UNREADABLE {{.*}}no-kernel.mlir
// WORST1-NEXT: tlx-verify: VIOLATION  {{.*}}tlx-cross-stage.mlir
// WORST1-NEXT: tlx-verify: UNPROVEN   {{.*}}unproven.mlir
// WORST1-NEXT: tlx-verify: 3 inputs: 1 violation, 1 unreadable, 1 unproven, 0 safe -> exit 1
// RUN: %PYTHON %S/Inputs/expect_exit.py 2 -- tlx-verify %S/Inputs/unproven.mlir %S/no-kernel.mlir %S/../tlx-fa-seed000.mlir | FileCheck %s --check-prefix=WORST2
// WORST2: 3 inputs: 0 violation, 1 unreadable, 1 unproven, 1 safe -> exit 2
// RUN: %PYTHON %S/Inputs/expect_exit.py 3 -- tlx-verify %S/../tlx-fa-seed000.mlir %S/Inputs/unproven.mlir | FileCheck %s --check-prefix=WORST3
// WORST3: 2 inputs: 0 violation, 0 unreadable, 1 unproven, 1 safe -> exit 3

// --json: one entry per input with its status, unreadable ones included.
// RUN: %PYTHON %S/Inputs/expect_exit.py 1 -- tlx-verify --json %S/no-kernel.mlir %S/../bugs/tlx-cross-stage.mlir | FileCheck %s --check-prefix=JSON
// JSON: "status": "unreadable"
// JSON: "error": "no kernel (tt.func) found in
// JSON: "status": "violation"
