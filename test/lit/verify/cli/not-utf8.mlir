// Bytes that are not UTF-8 (a binary file; one Latin-1 byte in a comment of a valid file): exit 2 with the
// file, line:col and byte offset named, never a UnicodeDecodeError traceback; the other inputs are still
// checked. tlx-opt reads its input the same way.

// RUN: %PYTHON %S/Inputs/make_bad.py binary %t.bin.mlir
// RUN: %PYTHON %S/Inputs/expect_exit.py 2 -- tlx-verify %t.bin.mlir 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BIN --implicit-check-not=Traceback
// BIN: tlx-verify: error: {{.*}}.bin.mlir:1:1: not UTF-8 text: byte 0xff at offset 0; MLIR input must be UTF-8 (remove or re-encode that byte; a binary file cannot be read)
// BIN: tlx-verify: UNREADABLE {{.*}}.bin.mlir
// BIN: tlx-verify: 1 input: 0 violation, 1 unreadable, 0 unproven, 0 safe -> exit 2

// RUN: %PYTHON %S/Inputs/make_bad.py comment-byte %S/../tlx-fa-seed000.mlir %t.comment.mlir
// RUN: %PYTHON %S/Inputs/expect_exit.py 2 -- tlx-verify %t.comment.mlir %S/../tlx-fa-seed000.mlir 2>&1 \
// RUN:   | FileCheck %s --check-prefix=COMMENT --implicit-check-not=Traceback
// COMMENT: tlx-verify: error: {{.*}}.comment.mlir:2:7: not UTF-8 text: byte 0xe9 at offset 99; MLIR input must be UTF-8
// COMMENT: tlx-fa-seed000.mlir: kernel (sm_100)
// COMMENT: -> SAFE
// COMMENT: tlx-verify: UNREADABLE {{.*}}.comment.mlir
// COMMENT-NEXT: tlx-verify: SAFE       {{.*}}tlx-fa-seed000.mlir
// COMMENT-NEXT: tlx-verify: 2 inputs: 0 violation, 1 unreadable, 0 unproven, 1 safe -> exit 2

// RUN: %PYTHON %S/Inputs/expect_exit.py 2 -- tlx-opt %t.comment.mlir 2>&1 \
// RUN:   | FileCheck %s --check-prefix=OPT --implicit-check-not=Traceback
// OPT: tlx-opt: error: {{.*}}.comment.mlir:2:7: not UTF-8 text: byte 0xe9 at offset 99
