// RUN: tlx-opt %s --split-input-file --pass tlx-size-definition --pass tlx-buffer-offset --pass tlx-storage-alias-allocation --pass tlx-export | FileCheck %s

// Seed 001 phase 5 lowered: one 32768-byte backing allocation; qk, p, alpha become views over it.
// alpha (256-byte buffers) sits at offset 8192 = slot 32 with 16384 bytes = 64 slots between buffers,
// so alpha[1] is slot 96 and alpha[i] in a loop is i * 64 + 32.
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 32}>
#shared1 = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
#smem = #ttg.shared_memory
"builtin.module"() ({
  "tt.func"() <{function_type = () -> (), sym_name = "seed001_phase5"}> ({
    // CHECK-LABEL: sym_name = "seed001_phase5"
    // CHECK: %[[B:.*]] = "ttg.local_alloc"() {alignment = 1024 : i32, tlx.backing = "spec"} : () -> !ttg.memdesc<1x32768xi8, #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>, #ttg.shared_memory, mutable>
    // CHECK: %[[QK:.*]] = "ttg.memdesc_reinterpret"(%[[B]]) {tlx.name = "qk", tlx.view = {base = 0 : i64, group = 1 : i64, num = 2 : i64, offset = 0 : i64, radices = array<i64>, slot = 16384 : i64, stride = 16384 : i64, strides = array<i64>}} : {{.*}} -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    // CHECK: %[[P:.*]] = "ttg.memdesc_reinterpret"(%[[B]]) {{.*}} -> !ttg.memdesc<4x64x64xf16, #shared, #smem, mutable>
    // CHECK: %[[AL:.*]] = "ttg.memdesc_reinterpret"(%[[B]]) {{.*}} -> !ttg.memdesc<128x64xf32, #shared1, #smem, mutable>
    %spec = "tlx.storage_alias_spec"() {storage = "smem", buffer_size_bytes = 32768 : i64} : () -> !tlx.storage_alias_spec<smem, 32768>
    %qk = "tlx.storage_alias_local_alloc"(%spec) {tlx.name = "qk"} : (!tlx.storage_alias_spec<smem, 32768>) -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    %p = "tlx.storage_alias_local_alloc"(%spec) {tlx.name = "p"} : (!tlx.storage_alias_spec<smem, 32768>) -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
    %alpha = "tlx.storage_alias_local_alloc"(%spec) {tlx.name = "alpha"} : (!tlx.storage_alias_spec<smem, 32768>) -> !ttg.memdesc<2x64xf32, #shared1, #smem, mutable>
    %inner = "tlx.reuse_group"(%p, %alpha) {group_kind = "distinct", group_size = 1 : i64} : (!ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>, !ttg.memdesc<2x64xf32, #shared1, #smem, mutable>) -> !tlx.reuse_group<distinct>
    %outer = "tlx.reuse_group"(%qk, %inner) {group_kind = "shared", group_size = 1 : i64} : (!ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>, !tlx.reuse_group<distinct>) -> !tlx.reuse_group<shared>
    "tlx.set_buffer_overlap"(%spec, %outer) : (!tlx.storage_alias_spec<smem, 32768>, !tlx.reuse_group<shared>) -> ()
    %c0 = "arith.constant"() <{value = 0 : i32}> : () -> i32
    %c1 = "arith.constant"() <{value = 1 : i32}> : () -> i32
    %c2 = "arith.constant"() <{value = 2 : i32}> : () -> i32
    // qk[1]: identity layout, the index is left alone.
    // CHECK: "ttg.memdesc_index"(%[[QK]], %{{[0-9]+}})
    %q1 = "ttg.memdesc_index"(%qk, %c1) : (!ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>, i32) -> !ttg.memdesc<64x64xf32, #shared, #smem, mutable>
    // p[1]: 8192-byte buffers, 2 slots between buffers: slot 2, folded.
    // CHECK: %[[C2:.*]] = "arith.constant"() {tlx.index_rewrite = "", tlx.logical_index = 1 : i64, value = 2 : i32}
    // CHECK: "ttg.memdesc_index"(%[[P]], %[[C2]])
    %p1 = "ttg.memdesc_index"(%p, %c1) : (!ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>, i32) -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
    // alpha[1]: slot 96.
    // CHECK: %[[C96:.*]] = "arith.constant"() {tlx.index_rewrite = "", tlx.logical_index = 1 : i64, value = 96 : i32}
    // CHECK: "ttg.memdesc_index"(%[[AL]], %[[C96]])
    %a1 = "ttg.memdesc_index"(%alpha, %c1) : (!ttg.memdesc<2x64xf32, #shared1, #smem, mutable>, i32) -> !ttg.memdesc<64xf32, #shared1, #smem, mutable>
    // alpha carried through a loop: the iter_arg, block argument and result take the view's type,
    // and the runtime index becomes i * 64 + 32.
    // CHECK: "scf.for"
    // CHECK-NEXT: ^bb0(%[[I:.*]]: i32, %[[ARG:.*]]: !ttg.memdesc<128x64xf32, #shared1, #smem, mutable>):
    // CHECK: %[[M:.*]] = "arith.muli"(%[[I]], %{{[0-9]+}}) {{.*}}{tlx.index_rewrite = ""}
    // CHECK: %[[A:.*]] = "arith.addi"(%[[M]], %{{[0-9]+}}) {{.*}}{tlx.index_rewrite = ""}
    // CHECK: "ttg.memdesc_index"(%[[ARG]], %[[A]])
    // CHECK: "scf.yield"(%[[ARG]]) : (!ttg.memdesc<128x64xf32, #shared1, #smem, mutable>) -> ()
    // CHECK: -> !ttg.memdesc<128x64xf32, #shared1, #smem, mutable>
    %r = "scf.for"(%c0, %c2, %c1, %alpha) ({
    ^bb0(%i: i32, %arg: !ttg.memdesc<2x64xf32, #shared1, #smem, mutable>):
      %ai = "ttg.memdesc_index"(%arg, %i) : (!ttg.memdesc<2x64xf32, #shared1, #smem, mutable>, i32) -> !ttg.memdesc<64xf32, #shared1, #smem, mutable>
      "scf.yield"(%arg) : (!ttg.memdesc<2x64xf32, #shared1, #smem, mutable>) -> ()
    }) : (i32, i32, i32, !ttg.memdesc<2x64xf32, #shared1, #smem, mutable>) -> !ttg.memdesc<2x64xf32, #shared1, #smem, mutable>
    // CHECK-NOT: tlx.storage_alias
    "tt.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
