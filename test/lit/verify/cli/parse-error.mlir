// Text that does not parse (a truncated file, a deleted line): exit 2 and one line naming the user's file
// and the parser's line:col — for .ttgir too, where Triton's parser reads a temporary copy.

// RUN: %PYTHON %S/Inputs/make_bad.py truncate 3000 %S/../tlx-fa-seed000.mlir %t.cut.mlir
// RUN: %PYTHON %S/Inputs/expect_exit.py 2 -- tlx-verify %t.cut.mlir 2>&1 \
// RUN:   | FileCheck %s --check-prefix=CUT --implicit-check-not=Traceback --implicit-check-not=tlx-alias-
// CUT: tlx-verify: error: {{.*}}.cut.mlir:21:74: expected '}' in attribute dictionary (reading it as generic MLIR)
// CUT-NEXT: tlx-verify: UNREADABLE

// RUN: %PYTHON %S/Inputs/make_bad.py truncate 3000 %S/../tlx-fa-seed000.mlir %t.cut.ttgir
// RUN: %PYTHON %S/Inputs/expect_exit.py 2 -- tlx-verify %t.cut.ttgir 2>&1 \
// RUN:   | FileCheck %s --check-prefix=CUTT --implicit-check-not=Traceback --implicit-check-not="lowered module"
// CUTT: tlx-verify: error: {{.*}}.cut.ttgir:21:74: expected '}' in attribute dictionary (reading it as Triton IR)
// CUTT-NEXT: tlx-verify: UNREADABLE

// RUN: %PYTHON %S/Inputs/make_bad.py delete-line 40 %S/../tlx-fa-seed000.mlir %t.del.ttgir
// RUN: %PYTHON %S/Inputs/expect_exit.py 2 -- tlx-verify %t.del.ttgir 2>&1 \
// RUN:   | FileCheck %s --check-prefix=DEL --implicit-check-not=Traceback
// DEL: tlx-verify: error: {{.*}}.del.ttgir:43:34: use of undeclared SSA value name (reading it as Triton IR)
