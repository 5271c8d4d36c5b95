// `tlx-verify ... | head`: once the reader is gone, output stops quietly (no BrokenPipeError traceback, no
// "Exception ignored" at exit), the remaining inputs are still checked and the status is that of all of
// them (before: a traceback and exit 1 at the first write). Errors still reach stderr.

// RUN: %PYTHON %S/Inputs/expect_exit.py 3 --closed-stdout -- tlx-verify %S/../tlx-fa-seed000.mlir \
// RUN:   %S/Inputs/unproven.mlir 2>&1 | FileCheck %s --allow-empty --implicit-check-not={{.}}

// RUN: %PYTHON %S/Inputs/expect_exit.py 1 --closed-stdout -- tlx-verify %S/../tlx-fa-seed000.mlir \
// RUN:   %S/../bugs/tlx-cross-stage.mlir %S/no-kernel.mlir 2>&1 \
// RUN:   | FileCheck %s --check-prefix=ERR --implicit-check-not=Traceback --implicit-check-not=Exception
// ERR: tlx-verify: error: no kernel (tt.func) found in {{.*}}no-kernel.mlir
