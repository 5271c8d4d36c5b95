// RUN: tlx-opt %s --pass tlx-size-definition --pass tlx-buffer-offset | FileCheck %s --check-prefix=PLACE
// RUN: tlx-opt %s | FileCheck %s
// RUN: tlx-opt %s --row-windows | FileCheck %s --check-prefix=WINDOWS

// Seed 000's flash-attention TMEM tree (BLOCK_M_SPLIT=128, BLOCK_N=128, 2 MMA groups, 2 slices):
//   shared(qk, distinct(shared[group_size=2](p), alpha, l, m))
// qk 128x128 fp32 = 128 columns; p 128x64 bf16 packed = 32 columns; alpha/l/m 128x1 fp32 = 1 column.
// Hand calculation: distinct = 2*32 + 1 + 1 + 1 = 67 <= 128, so 128 columns per index group, 2 groups,
// 256 columns. p[j] at (j//2)*128 + (j%2)*32; alpha/l/m at 64/65/66 + 128*i.
#tmem = #ttng.tensor_memory_encoding<blockM = 128, blockN = 128, colStride = 1>
#tmem_p = #ttng.tensor_memory_encoding<blockM = 128, blockN = 64, colStride = 1>
#tmem_1 = #ttng.tensor_memory_encoding<blockM = 128, blockN = 1, colStride = 1>
"builtin.module"() ({
  "tt.func"() <{function_type = () -> (), sym_name = "fa_tmem"}> ({
    // PLACE: "tlx.storage_alias_spec"() {buffer_groups = 2 : i64, buffer_size = 256 : i64, buffer_stride = 128 : i64, storage = "tmem", unit = "columns"}
    %spec = "tlx.storage_alias_spec"() {storage = "tmem"} : () -> !tlx.storage_alias_spec<tmem>
    // PLACE: buffer_offset = 0 : i64, buffer_stride = 128 : i64, group_sizes = array<i64>, group_strides = array<i64>, tlx.name = "qk"
    %qk = "tlx.storage_alias_local_alloc"(%spec) {tlx.name = "qk"} : (!tlx.storage_alias_spec<tmem>) -> !ttg.memdesc<2x128x128xf32, #tmem, #ttng.tensor_memory, mutable>
    // PLACE: buffer_offset = 0 : i64, buffer_stride = 128 : i64, group_sizes = array<i64: 2>, group_strides = array<i64: 32>, tlx.name = "p"
    %p = "tlx.storage_alias_local_alloc"(%spec) {tlx.name = "p"} : (!tlx.storage_alias_spec<tmem>) -> !ttg.memdesc<4x128x64xbf16, #tmem_p, #ttng.tensor_memory, mutable>
    // PLACE: buffer_offset = 64 : i64, buffer_stride = 128 : i64, {{.*}}tlx.name = "alpha"
    %alpha = "tlx.storage_alias_local_alloc"(%spec) {tlx.name = "alpha"} : (!tlx.storage_alias_spec<tmem>) -> !ttg.memdesc<2x128x1xf32, #tmem_1, #ttng.tensor_memory, mutable>
    // PLACE: buffer_offset = 65 : i64, buffer_stride = 128 : i64, {{.*}}tlx.name = "l"
    %l = "tlx.storage_alias_local_alloc"(%spec) {tlx.name = "l"} : (!tlx.storage_alias_spec<tmem>) -> !ttg.memdesc<2x128x1xf32, #tmem_1, #ttng.tensor_memory, mutable>
    // PLACE: buffer_offset = 66 : i64, buffer_stride = 128 : i64, {{.*}}tlx.name = "m"
    %m = "tlx.storage_alias_local_alloc"(%spec) {tlx.name = "m"} : (!tlx.storage_alias_spec<tmem>) -> !ttg.memdesc<2x128x1xf32, #tmem_1, #ttng.tensor_memory, mutable>
    %gp = "tlx.reuse_group"(%p) {group_kind = "shared", group_size = 2 : i64} : (!ttg.memdesc<4x128x64xbf16, #tmem_p, #ttng.tensor_memory, mutable>) -> !tlx.reuse_group<shared>
    %gd = "tlx.reuse_group"(%gp, %alpha, %l, %m) {group_kind = "distinct", group_size = 1 : i64} : (!tlx.reuse_group<shared>, !ttg.memdesc<2x128x1xf32, #tmem_1, #ttng.tensor_memory, mutable>, !ttg.memdesc<2x128x1xf32, #tmem_1, #ttng.tensor_memory, mutable>, !ttg.memdesc<2x128x1xf32, #tmem_1, #ttng.tensor_memory, mutable>) -> !tlx.reuse_group<distinct>
    %root = "tlx.reuse_group"(%qk, %gd) {group_kind = "shared", group_size = 1 : i64} : (!ttg.memdesc<2x128x128xf32, #tmem, #ttng.tensor_memory, mutable>, !tlx.reuse_group<distinct>) -> !tlx.reuse_group<shared>
    "tlx.set_buffer_overlap"(%spec, %root) : (!tlx.storage_alias_spec<tmem>, !tlx.reuse_group<shared>) -> ()
    // CHECK: %[[B:.*]] = "ttng.tmem_alloc"() {tlx.backing = "spec"} : () -> !ttg.memdesc<1x128x256xi32, #ttng.tensor_memory_encoding<blockM = 128, blockN = 256, colStride = 1>, #ttng.tensor_memory, mutable>
    // CHECK: "ttg.memdesc_reinterpret"(%[[B]]) {{.*}} -> !ttg.memdesc<2x128x128xf32, #tmem, #ttng.tensor_memory, mutable>
    // CHECK: %[[P:.*]] = "ttg.memdesc_reinterpret"(%[[B]]) {{.*}} -> !ttg.memdesc<8x128x64xbf16, #tmem_p, #ttng.tensor_memory, mutable>
    // CHECK: %[[AL:.*]] = "ttg.memdesc_reinterpret"(%[[B]]) {{.*}} -> !ttg.memdesc<256x128x1xf32, #tmem_1, #ttng.tensor_memory, mutable>
    // Triton 3.9 (--row-windows): alpha, l, m are windows of one column in the spec's 2 slots of 128 columns,
    // not 256 slots of one column (Triton's TMEM passes compute a footprint per slot an index may select).
    // WINDOWS: %[[AL:.*]] = "ttg.memdesc_reinterpret"(%{{.*}}) {tlx.name = "alpha", tlx.view = {{{.*}}offset = 64 : i64{{.*}}slot = 128 : i64{{.*}}width = 1 : i64}} {{.*}} -> !ttg.memdesc<2x128x128xf32, #ttng.tensor_memory_encoding<blockM = 128, blockN = 128, colStride = 1>, #ttng.tensor_memory, mutable>
    // WINDOWS: "ttg.memdesc_reinterpret"(%{{.*}}) {tlx.name = "l", tlx.view = {{{.*}}offset = 65 : i64{{.*}}width = 1 : i64}} {{.*}} -> !ttg.memdesc<2x128x128xf32
    // WINDOWS: "ttg.memdesc_reinterpret"(%{{.*}}) {tlx.name = "m", tlx.view = {{{.*}}offset = 66 : i64{{.*}}width = 1 : i64}} {{.*}} -> !ttg.memdesc<2x128x128xf32
    %c0 = "arith.constant"() <{value = 0 : i32}> : () -> i32
    %c1 = "arith.constant"() <{value = 1 : i32}> : () -> i32
    %c3 = "arith.constant"() <{value = 3 : i32}> : () -> i32
    %c4 = "arith.constant"() <{value = 4 : i32}> : () -> i32
    // p[3] = group 1, sub-tile 1: column 128 + 32 = slot 5.
    // CHECK: %[[C5:.*]] = "arith.constant"() {tlx.index_rewrite = "", tlx.logical_index = 3 : i64, value = 5 : i32}
    // CHECK: "ttg.memdesc_index"(%[[P]], %[[C5]])
    %p3 = "ttg.memdesc_index"(%p, %c3) : (!ttg.memdesc<4x128x64xbf16, #tmem_p, #ttng.tensor_memory, mutable>, i32) -> !ttg.memdesc<128x64xbf16, #tmem_p, #ttng.tensor_memory, mutable>
    // alpha[1] = column 128 + 64 = slot 192.
    // CHECK: %[[C192:.*]] = "arith.constant"() {tlx.index_rewrite = "", tlx.logical_index = 1 : i64, value = 192 : i32}
    // CHECK: "ttg.memdesc_index"(%[[AL]], %[[C192]])
    // alpha[1] = slot 1, column 64 in it; the buffer back in its own type for its users.
    // WINDOWS: %[[S1:.*]] = "arith.constant"() {tlx.index_rewrite = "", tlx.logical_index = 1 : i64, value = 1 : i32}
    // WINDOWS: %[[SLOT:.*]] = "ttg.memdesc_index"(%[[AL]], %[[S1]]) {{.*}} -> !ttg.memdesc<128x128xf32,
    // WINDOWS: %[[COL:.*]] = "ttng.tmem_subslice"(%[[SLOT]]) {offset = 64 : i32} {{.*}} -> !ttg.memdesc<128x1xf32, {{.*}}, 128x128>
    // WINDOWS: "ttg.memdesc_reinterpret"(%[[COL]]) {tlx.name = "alpha"} {{.*}} -> !ttg.memdesc<128x1xf32, #tmem_1, #ttng.tensor_memory, mutable>
    %a1 = "ttg.memdesc_index"(%alpha, %c1) : (!ttg.memdesc<2x128x1xf32, #tmem_1, #ttng.tensor_memory, mutable>, i32) -> !ttg.memdesc<128x1xf32, #tmem_1, #ttng.tensor_memory, mutable>
    // A runtime p index j: (j // 2) * 4 + (j % 2).
    // CHECK: "scf.for"
    // CHECK-NEXT: ^bb0(%[[J:.*]]: i32):
    // CHECK: %[[G:.*]] = "arith.divsi"(%[[J]], %{{[0-9]+}})
    // CHECK: %[[GS:.*]] = "arith.muli"(%[[G]], %{{[0-9]+}})
    // CHECK: %[[D:.*]] = "arith.remsi"(%[[J]], %{{[0-9]+}})
    // CHECK: %[[S:.*]] = "arith.addi"(%[[GS]], %[[D]])
    // CHECK: "ttg.memdesc_index"(%[[P]], %[[S]])
    "scf.for"(%c0, %c4, %c1) ({
    ^bb0(%j: i32):
      %pj = "ttg.memdesc_index"(%p, %j) : (!ttg.memdesc<4x128x64xbf16, #tmem_p, #ttng.tensor_memory, mutable>, i32) -> !ttg.memdesc<128x64xbf16, #tmem_p, #ttng.tensor_memory, mutable>
      "scf.yield"() : () -> ()
    }) : (i32, i32, i32) -> ()
    "tt.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
