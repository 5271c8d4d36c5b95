// IR that parses but that its dialects' verifiers reject (generic text parses with every dialect unregistered,
// so only the proof meets the damage): exit 2, "malformed IR" at the op's line:col in the user's file, never a
// crash report ("the proof failed ... a tlx-verify bug") nor a verdict. Found by test/fuzz/fuzz_cli.py.

// A TMEM encoding whose colStride is not a number (was: ValueError from int(), reported as a tlx-verify bug).
// RUN: %PYTHON %S/Inputs/expect_exit.py 2 -- tlx-verify %S/Inputs/bad-colstride.mlir 2>&1 \
// RUN:   | FileCheck %s --check-prefix=STRIDE --implicit-check-not="tlx-verify bug" --implicit-check-not=Traceback
// STRIDE: tlx-verify: error: {{.*}}bad-colstride.mlir:9:10: malformed IR: ttng.tmem_alloc: colStride = 1x is not a positive integer in the type !ttg.memdesc<2x128x64xf32, #tmem, #tmem_space, mutable> (Triton's parser would reject it; nothing in this file was checked)
// STRIDE-NEXT: tlx-verify: UNREADABLE {{.*}}bad-colstride.mlir
// STRIDE-NEXT: 1 input: 0 violation, 1 unreadable, 0 unproven, 0 safe -> exit 2

// The same file named .ttgir: Triton's parser refuses it first, the generic reading gets further, and the
// error is still the op's line:col.
// RUN: cp %S/Inputs/bad-colstride.mlir %t.ttgir
// RUN: %PYTHON %S/Inputs/expect_exit.py 2 -- tlx-verify %t.ttgir 2>&1 \
// RUN:   | FileCheck %s --check-prefix=TTGIR --implicit-check-not="tlx-verify bug" --implicit-check-not=Traceback
// TTGIR: tlx-verify: error: {{.*}}.ttgir:9:10: malformed IR: ttng.tmem_alloc: colStride = 1x

// An scf.for whose body lost its induction variable (was: a P5 "violation" that read the carried ring
// index as the induction variable).
// RUN: %PYTHON %S/Inputs/expect_exit.py 2 -- tlx-verify %S/Inputs/for-without-iv.mlir 2>&1 \
// RUN:   | FileCheck %s --check-prefix=FOR --implicit-check-not="tlx-verify bug" --implicit-check-not=VIOLATION
// FOR: tlx-verify: error: {{.*}}for-without-iv.mlir:12:10: malformed IR: scf.for: its body (the induction variable, then one per iter_arg) has 1 block argument, 2 expected (Triton's parser would reject it; nothing in this file was checked)
// FOR-NEXT: tlx-verify: UNREADABLE {{.*}}for-without-iv.mlir

// An scf.for whose entry block has no induction variable, a second block has it (was: IndexError, reported as
// a tlx-verify bug, the class test/fuzz/fuzz_cli.py --ttgir had found).
// RUN: %PYTHON %S/Inputs/expect_exit.py 2 -- tlx-verify %S/Inputs/for-iv-in-second-block.mlir 2>&1 \
// RUN:   | FileCheck %s --check-prefix=FOR2 --implicit-check-not="tlx-verify bug"
// FOR2: tlx-verify: error: {{.*}}for-iv-in-second-block.mlir:12:10: malformed IR: scf.for: its body has 2 blocks (one expected)

// A function declaration (valid IR, an empty region) beside a kernel: the kernel is proven, the declaration
// skipped (was: IndexError, reported as a tlx-verify bug). Declarations alone: no kernel, exit 2.
// RUN: %PYTHON %S/Inputs/expect_exit.py 0 -- tlx-verify %S/Inputs/with-declaration.mlir 2>&1 \
// RUN:   | FileCheck %s --check-prefix=DECL --implicit-check-not="tlx-verify bug"
// DECL: with-declaration.mlir: k (sm_100)
// DECL: P1 acc: proven
// DECL: tlx-verify: SAFE {{.*}}with-declaration.mlir
// RUN: %PYTHON %S/Inputs/expect_exit.py 2 -- tlx-verify %S/Inputs/declaration-only.mlir 2>&1 \
// RUN:   | FileCheck %s --check-prefix=ONLY --implicit-check-not=SAFE
// ONLY: tlx-verify: error: no kernel (tt.func) found in {{.*}}declaration-only.mlir

// A memdesc whose element type is not a type (was: not read as a descriptor at all, so the allocation was
// left out and the kernel "SAFE" with 0 allocations; where only a view's type was damaged, an AttributeError).
// An element type MLIR reads but whose width is unknown is unsupported input, also exit 2, never a verdict.
// RUN: sed -e 's/colStride = 1x/colStride = 1/' -e 's/xf32/xf3Z/g' %S/Inputs/bad-colstride.mlir > %t.elem.mlir
// RUN: %PYTHON %S/Inputs/expect_exit.py 2 -- tlx-verify %t.elem.mlir 2>&1 \
// RUN:   | FileCheck %s --check-prefix=ELEM --implicit-check-not=SAFE --implicit-check-not="tlx-verify bug"
// ELEM: tlx-verify: error: {{.*}}.elem.mlir:9:10: malformed IR: ttng.tmem_alloc: the element type 'f3Z' of the type !ttg.memdesc<2x128x64xf3Z, #tmem, #tmem_space, mutable> is not a type
// RUN: sed -e 's/colStride = 1x/colStride = 1/' -e 's/-> !ttg.memdesc<128x64xf32/-> !ttg.memdesc<128x64xf3Z/' %S/Inputs/bad-colstride.mlir > %t.view.mlir
// RUN: %PYTHON %S/Inputs/expect_exit.py 2 -- tlx-verify %t.view.mlir 2>&1 \
// RUN:   | FileCheck %s --check-prefix=VIEW --implicit-check-not="tlx-verify bug"
// VIEW: tlx-verify: error: {{.*}}.view.mlir:10:10: malformed IR: ttg.memdesc_index: the element type 'f3Z'
// RUN: sed -e 's/colStride = 1x/colStride = 1/' -e 's/xf32/xcomplex<f32>/g' %S/Inputs/bad-colstride.mlir > %t.cplx.mlir
// RUN: %PYTHON %S/Inputs/expect_exit.py 2 -- tlx-verify %t.cplx.mlir 2>&1 \
// RUN:   | FileCheck %s --check-prefix=CPLX --implicit-check-not=SAFE
// CPLX: tlx-verify: error: {{.*}}.cplx.mlir:9:10: unsupported IR: ttng.tmem_alloc: the element type 'complex<f32>' of the type {{.*}} has no width tlx-alias knows (tlx-verify cannot size this memory; nothing in this file was checked)

// A TMEM encoding alias used but never defined: its columns are unknown (was: SAFE, with a note that column
// counts assumed colStride 1 — "proven" under an assumption).
// RUN: grep -v '^#tmem = ' %S/Inputs/with-declaration.mlir > %t.undef.mlir
// RUN: %PYTHON %S/Inputs/expect_exit.py 2 -- tlx-verify %t.undef.mlir 2>&1 \
// RUN:   | FileCheck %s --check-prefix=UNDEF --implicit-check-not=SAFE
// UNDEF: tlx-verify: error: {{.*}}.undef.mlir:11:10: malformed IR: ttng.tmem_alloc: the TMEM encoding #tmem of the type !ttg.memdesc<2x128x64xf32, #tmem, #tmem_space, mutable> is not defined in this module (no `#tmem = ...` line): its columns are unknown
