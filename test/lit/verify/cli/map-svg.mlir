// --map-svg into a directory that does not exist: the verdicts are printed, then a clear error and exit 2
// (not a FileNotFoundError traceback); nothing is created. A violation still wins (exit 1).

// RUN: rm -rf %t
// RUN: %PYTHON %S/Inputs/expect_exit.py 2 -- tlx-verify %S/../tlx-fa-seed000.mlir --map-svg %t/missing/map.svg 2>&1 \
// RUN:   | FileCheck %s --implicit-check-not=Traceback
// CHECK: P6 spec0: proven
// CHECK: -> SAFE
// CHECK: tlx-verify: error: --map-svg {{.*}}missing/map.svg: cannot write: No such file or directory (the directory must exist and be writable)
// CHECK: tlx-verify: SAFE       {{.*}}tlx-fa-seed000.mlir
// CHECK: tlx-verify: 1 input: 0 violation, 0 unreadable, 0 unproven, 1 safe -> exit 2 (--map-svg {{.*}}missing/map.svg not written)
// RUN: not ls %t

// RUN: %PYTHON %S/Inputs/expect_exit.py 1 -- tlx-verify %S/../bugs/tlx-cross-stage.mlir --map-svg %t/missing/map.svg 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BUG
// BUG: P3 spec0: VIOLATION
// BUG: -> exit 1 (--map-svg
