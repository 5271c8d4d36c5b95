// RUN: tlx-opt %s --row-windows | FileCheck %s
// RUN: tlx-opt %s | FileCheck %s --check-prefix=WHOLE
// RUN: tlx-opt %s --row-windows > %t.mlir
// RUN: %PYTHON -m tlx_alias.verify.cli %t.mlir | FileCheck %s --check-prefix=PROOF
// RUN: sed -e 's/base = 65536 : i64/base = 32768 : i64/' %t.mlir > %t.bad.mlir
// RUN: not %PYTHON -m tlx_alias.verify.cli %t.bad.mlir | FileCheck %s --check-prefix=BAD

// distinct(c, shared[3](b_ring)): one 64 KiB c tile, then three 32 KiB b buffers, 163840 bytes: a [5, 32768]
// backing. With --row-windows (Triton 3.9) each view starts at the backing row of its first buffer and ends
// after its last, so Triton's exact per-slot footprints see c's one slot and b_ring's three, not the five
// slots of a whole-spec view; tlx.view says where the view starts (base) and the index counts from there. A
// view that starts at row 0 (c) reinterprets the backing itself: a subslice there would add a footprint of
// its own to Triton's analyses and address nothing new.
// The proof reads a window as bytes of the backing (P1-P3 on the views, not on the window):
// PROOF: P1 spec: proven
// PROOF: P2 spec: proven
// PROOF: P3 spec: proven: c[i] / b_ring[j] disjoint across stages
// PROOF: -> SAFE
// A tlx.view whose base is not where its window starts is refused:
// BAD: P1 spec: VIOLATION: tlx.view base=32768 but the view starts 65536 bytes into spec (the base must be where it starts, a multiple of slot 32768)
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
#smem = #ttg.shared_memory
"builtin.module"() ({
  "tt.func"() <{function_type = (i32) -> (), sym_name = "windows"}> ({
  ^bb0(%i: i32):
    // CHECK: %[[B:.*]] = "ttg.local_alloc"() {{.*}} -> !ttg.memdesc<5x32768xi8
    // CHECK-NOT: "ttg.memdesc_subslice"(%[[B]]) {offsets = array<i32: 0, 0>}
    // CHECK: "ttg.memdesc_reinterpret"(%[[B]]) {{.*}}tlx.view = {base = 0 : i64, group = 1 : i64, num = 1 : i64, offset = 0 : i64, radices = array<i64>, slot = 65536 : i64, stride = 163840 : i64, strides = array<i64>}{{.*}} -> !ttg.memdesc<1x256x128xf16
    // CHECK: %[[W1:.*]] = "ttg.memdesc_subslice"(%[[B]]) {offsets = array<i32: 2, 0>} : {{.*}} -> !ttg.memdesc<3x32768xi8, {{.*}}, 5x32768>
    // CHECK: %[[V:.*]] = "ttg.memdesc_reinterpret"(%[[W1]]) {{.*}}tlx.view = {base = 65536 : i64, group = 3 : i64, num = 3 : i64, offset = 65536 : i64, radices = array<i64: 3>, slot = 32768 : i64, stride = 163840 : i64, strides = array<i64: 32768>}{{.*}} -> !ttg.memdesc<3x128x128xf16
    // CHECK: "ttg.memdesc_index"(%[[V]], %{{.*}})
    // WHOLE-NOT: memdesc_subslice
    // WHOLE: -> !ttg.memdesc<2x256x128xf16
    // WHOLE: -> !ttg.memdesc<5x128x128xf16
    %spec = "tlx.storage_alias_spec"() {storage = "smem", tlx.src = "g.py:3"} : () -> !tlx.storage_alias_spec<smem>
    %c = "tlx.storage_alias_local_alloc"(%spec) {tlx.name = "c"} : (!tlx.storage_alias_spec<smem>) -> !ttg.memdesc<1x256x128xf16, #shared, #smem, mutable>
    %b = "tlx.storage_alias_local_alloc"(%spec) {tlx.name = "b_ring"} : (!tlx.storage_alias_spec<smem>) -> !ttg.memdesc<3x128x128xf16, #shared, #smem, mutable>
    %bg = "tlx.reuse_group"(%b) {group_kind = "shared", group_size = 3 : i64} : (!ttg.memdesc<3x128x128xf16, #shared, #smem, mutable>) -> !tlx.reuse_group<shared>
    %g = "tlx.reuse_group"(%c, %bg) {group_kind = "distinct", group_size = 1 : i64} : (!ttg.memdesc<1x256x128xf16, #shared, #smem, mutable>, !tlx.reuse_group<shared>) -> !tlx.reuse_group<distinct>
    "tlx.set_buffer_overlap"(%spec, %g) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<distinct>) -> ()
    %c3 = "arith.constant"() {value = 3 : i32} : () -> i32
    %k = "arith.remui"(%i, %c3) : (i32, i32) -> i32
    %bi = "ttg.memdesc_index"(%b, %k) : (!ttg.memdesc<3x128x128xf16, #shared, #smem, mutable>, i32) -> !ttg.memdesc<128x128xf16, #shared, #smem, mutable>
    "tt.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
