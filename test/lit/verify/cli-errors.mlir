// tlx-verify on something it cannot read: a clear message and exit status 2 (checked exactly in
// test/pytest/test_verify.py); a missing file likewise.

// RUN: not %PYTHON -m tlx_alias.verify.cli %s 2>&1 | FileCheck %s
// CHECK: tlx-verify: error: {{.*}}cli-errors.mlir: not readable as generic MLIR nor as Triton IR:
// CHECK-NEXT: generic MLIR parse failed:

// RUN: not %PYTHON -m tlx_alias.verify.cli %S/does-not-exist.ttgir 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: tlx-verify: error: {{.*}}does-not-exist.ttgir: cannot read: No such file or directory

this is not MLIR
