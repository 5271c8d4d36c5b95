// tlx-verify on something it cannot read: the file and the parser's line:col, exit status 2; a missing file
// likewise.

// RUN: %PYTHON %S/Inputs/expect_exit.py 2 -- %PYTHON -m tlx_alias.verify.cli %s 2>&1 | FileCheck %s
// CHECK: tlx-verify: error: {{.*}}unreadable.mlir:10:1: custom op 'this' is unknown (tried 'builtin.this' as well) (reading it as generic MLIR)

// RUN: %PYTHON %S/Inputs/expect_exit.py 2 -- %PYTHON -m tlx_alias.verify.cli %S/does-not-exist.ttgir 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: tlx-verify: error: {{.*}}does-not-exist.ttgir: cannot read: No such file or directory

this is not MLIR
