// RUN: tlx-opt %s --pass tlx-import | FileCheck %s --check-prefix=IMPORT
// RUN: tlx-opt %s | FileCheck %s

// What the frontend records (contract 1: the module's `tlx.specs`, the ids on the allocations) becomes
// tlx ops; the lowered views flow into a warp_specialize partition, whose block argument takes the view's
// type and whose index is rewritten. Tree: distinct(a, b), both 2 x 16 KiB: a at 0, b at 16384, 32768
// bytes between index groups.
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 32}>
#smem = #ttg.shared_memory
"builtin.module"() ({
  "tt.func"() <{function_type = (!tt.ptr<f32>) -> (), sym_name = "ws"}> ({
  ^bb0(%arg0: !tt.ptr<f32>):
    // IMPORT: %[[SPEC:.*]] = "tlx.storage_alias_spec"() {storage = "smem", tlx.overlap = {{.*}}, tlx.overlap_src = "k.py:13", tlx.spec = "spec0", tlx.src = "k.py:10"} : () -> !tlx.storage_alias_spec<smem>
    // IMPORT: %[[A:.*]] = "tlx.storage_alias_local_alloc"(%[[SPEC]]) {tlx.alloc = "a0", tlx.name = "a", tlx.spec = "spec0", tlx.src = "k.py:11"}
    // IMPORT: %[[B:.*]] = "tlx.storage_alias_local_alloc"(%[[SPEC]]) {tlx.alloc = "a1", tlx.spec = "spec0", tlx.src = "k.py:12"}
    // IMPORT: %[[G:.*]] = "tlx.reuse_group"(%[[A]], %[[B]]) {group_kind = "distinct", group_size = 1 : i64, tlx.src = "k.py:13"}
    // IMPORT: "tlx.set_buffer_overlap"(%[[SPEC]], %[[G]]) {tlx.src = "k.py:13"}
    %a = "ttg.local_alloc"() {tlx.spec = "spec0", tlx.alloc = "a0"} : () -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    %b = "ttg.local_alloc"() {tlx.spec = "spec0", tlx.alloc = "a1"} : () -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    %c0 = "arith.constant"() <{value = 0 : i32}> : () -> i32
    // CHECK: %[[BK:.*]] = "ttg.local_alloc"() {alignment = 1024 : i32, tlx.backing = "spec0", tlx.src = "k.py:10"} : () -> !ttg.memdesc<1x65536xi8
    // CHECK: "ttg.memdesc_reinterpret"(%[[BK]]) {tlx.alloc = "a0", tlx.name = "a", tlx.overlap = {{.*}}, tlx.spec = "spec0", tlx.src = "k.py:11", tlx.view = {base = 0 : i64, {{.*}}, offset = 0 : i64, {{.*}}, stride = 32768 : i64, {{.*}}}} : {{.*}} -> !ttg.memdesc<4x64x64xf32, #shared, #smem, mutable>
    // CHECK: %[[VB:.*]] = "ttg.memdesc_reinterpret"(%[[BK]]) {tlx.alloc = "a1", tlx.overlap = {{.*}}, tlx.spec = "spec0", tlx.src = "k.py:12", tlx.view = {base = 0 : i64, {{.*}}, offset = 16384 : i64, {{.*}}, stride = 32768 : i64, {{.*}}}} : {{.*}} -> !ttg.memdesc<4x64x64xf32, #shared, #smem, mutable>
    // CHECK: "ttg.warp_specialize"(%[[VB]], %arg0)
    "ttg.warp_specialize"(%b, %arg0) <{partitionNumWarps = array<i32: 1>, requestedRegisters = array<i32: 24>}> ({
      // Default partition: captures %b from above. b[0] = slot 1.
      // CHECK: %[[C1:.*]] = "arith.constant"() {tlx.index_rewrite = "", tlx.logical_index = 0 : i64, value = 1 : i32}
      // CHECK: "ttg.memdesc_index"(%[[VB]], %[[C1]])
      %x = "ttg.memdesc_index"(%b, %c0) : (!ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>, i32) -> !ttg.memdesc<64x64xf32, #shared, #smem, mutable>
      "ttg.warp_yield"() : () -> ()
    }, {
      "ttg.warp_specialize.partitions"() ({
      // Worker partition: block argument retyped; b[1] = slot 3.
      // CHECK: ^bb0(%[[WB:.*]]: !ttg.memdesc<4x64x64xf32, #shared, #smem, mutable>, %{{.*}}: !tt.ptr<f32>):
      ^bb0(%arg1: !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>, %arg2: !tt.ptr<f32>):
        %c1 = "arith.constant"() <{value = 1 : i32}> : () -> i32
        // CHECK: %[[C3:.*]] = "arith.constant"() {tlx.index_rewrite = "", tlx.logical_index = 1 : i64, value = 3 : i32}
        // CHECK: "ttg.memdesc_index"(%[[WB]], %[[C3]])
        %y = "ttg.memdesc_index"(%arg1, %c1) : (!ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>, i32) -> !ttg.memdesc<64x64xf32, #shared, #smem, mutable>
        "ttg.warp_return"() : () -> ()
      }) : () -> ()
    }) : (!ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>, !tt.ptr<f32>) -> ()
    // CHECK: (!ttg.memdesc<4x64x64xf32, #shared, #smem, mutable>, !tt.ptr<f32>) -> ()
    "tt.return"() : () -> ()
  }) : () -> ()
}) {tlx.specs = "{\"spec0\": {\"storage\": \"smem\", \"size\": null, \"src\": \"k.py:10\", \"tree\": {\"kind\": \"distinct\", \"group_size\": 1, \"src\": \"k.py:13\", \"children\": [\"a0\", \"a1\"]}, \"tree_src\": \"k.py:13\", \"implicit\": {}, \"members\": {\"a0\": {\"name\": \"a\", \"src\": \"k.py:11\", \"type\": \"!ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>\"}, \"a1\": {\"name\": null, \"src\": \"k.py:12\", \"type\": \"!ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>\"}}}}"} : () -> ()
