// RUN: not tlx-opt %s --split-input-file --pass tlx-size-definition --pass tlx-buffer-offset --pass tlx-storage-alias-allocation --pass tlx-export | FileCheck %s
// RUN: tlx-opt %s --split-input-file --verify-diagnostics --pass tlx-size-definition --pass tlx-buffer-offset --pass tlx-storage-alias-allocation

// A view carried through scf.while: the `before` region's argument, the value scf.condition passes to the
// `after` region (here in another position than it came in), and the `after` region's yield, which feeds
// the next iteration's `before` region and not the loop's results, all take the view's type; the i32
// result in the yield's position stays i32; both indices are rewritten (b: 4 KiB buffers at offset 4 KiB,
// 8 KiB apart).
#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
"builtin.module"() ({
  "tt.func"() <{function_type = (i32) -> (), sym_name = "carried_through_while"}> ({
  ^bb0(%n: i32):
    // CHECK-LABEL: sym_name = "carried_through_while"
    // CHECK: %[[B:.*]] = "ttg.memdesc_reinterpret"({{.*}}) {tlx.name = "b"
    // CHECK: "scf.while"(%[[B]], %{{.*}}) ({
    // CHECK-NEXT: ^bb0(%[[X:.*]]: !ttg.memdesc<4x32x32xf32, #shared, #smem, mutable>, %[[I:.*]]: i32):
    // CHECK: %[[S1:.*]] = "arith.addi"({{.*}}) {{.*}}{tlx.index_rewrite = ""}
    // CHECK: "ttg.memdesc_index"(%[[X]], %[[S1]])
    // CHECK: "scf.condition"({{.*}}, %[[I]], %[[X]])
    // CHECK: ^bb0(%[[J:.*]]: i32, %[[Y:.*]]: !ttg.memdesc<4x32x32xf32, #shared, #smem, mutable>):
    // CHECK: %[[S2:.*]] = "arith.addi"({{.*}}) {{.*}}{tlx.index_rewrite = ""}
    // CHECK: "ttg.memdesc_index"(%[[Y]], %[[S2]])
    // CHECK: "scf.yield"(%[[Y]], %{{.*}}) : (!ttg.memdesc<4x32x32xf32, #shared, #smem, mutable>, i32) -> ()
    // CHECK: (!ttg.memdesc<4x32x32xf32, #shared, #smem, mutable>, i32) -> (i32, !ttg.memdesc<4x32x32xf32, #shared, #smem, mutable>)
    %spec = "tlx.storage_alias_spec"() {storage = "smem"} : () -> !tlx.storage_alias_spec<smem>
    %a = "tlx.storage_alias_local_alloc"(%spec) {tlx.name = "a"} : (!tlx.storage_alias_spec<smem>) -> !ttg.memdesc<2x32x32xf32, #shared, #smem, mutable>
    %b = "tlx.storage_alias_local_alloc"(%spec) {tlx.name = "b"} : (!tlx.storage_alias_spec<smem>) -> !ttg.memdesc<2x32x32xf32, #shared, #smem, mutable>
    %g = "tlx.reuse_group"(%a, %b) {group_kind = "distinct", group_size = 1 : i64} : (!ttg.memdesc<2x32x32xf32, #shared, #smem, mutable>, !ttg.memdesc<2x32x32xf32, #shared, #smem, mutable>) -> !tlx.reuse_group<distinct>
    "tlx.set_buffer_overlap"(%spec, %g) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<distinct>) -> ()
    %c0 = "arith.constant"() <{value = 0 : i32}> : () -> i32
    %c1 = "arith.constant"() <{value = 1 : i32}> : () -> i32
    %c2 = "arith.constant"() <{value = 2 : i32}> : () -> i32
    %r:2 = "scf.while"(%b, %c0) ({
    ^bb0(%x: !ttg.memdesc<2x32x32xf32, #shared, #smem, mutable>, %i: i32):
      %im = "arith.remsi"(%i, %c2) : (i32, i32) -> i32
      %xi = "ttg.memdesc_index"(%x, %im) : (!ttg.memdesc<2x32x32xf32, #shared, #smem, mutable>, i32) -> !ttg.memdesc<32x32xf32, #shared, #smem, mutable>
      %more = "arith.cmpi"(%i, %n) <{predicate = 2 : i64}> : (i32, i32) -> i1
      "scf.condition"(%more, %i, %x) : (i1, i32, !ttg.memdesc<2x32x32xf32, #shared, #smem, mutable>) -> ()
    }, {
    ^bb0(%j: i32, %y: !ttg.memdesc<2x32x32xf32, #shared, #smem, mutable>):
      %jm = "arith.remsi"(%j, %c2) : (i32, i32) -> i32
      %yj = "ttg.memdesc_index"(%y, %jm) : (!ttg.memdesc<2x32x32xf32, #shared, #smem, mutable>, i32) -> !ttg.memdesc<32x32xf32, #shared, #smem, mutable>
      %next = "arith.addi"(%j, %c1) : (i32, i32) -> i32
      "scf.yield"(%y, %next) : (!ttg.memdesc<2x32x32xf32, #shared, #smem, mutable>, i32) -> ()
    }) : (!ttg.memdesc<2x32x32xf32, #shared, #smem, mutable>, i32) -> (i32, !ttg.memdesc<2x32x32xf32, #shared, #smem, mutable>)
    "tt.return"() : () -> ()
  }) : () -> ()
}) : () -> ()

// -----

// The aliased buffer and a plain allocation of the same type meet in one loop-carried value: one index
// rewrite cannot serve both, so the lowering stops with the loop's line.
#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
"builtin.module"() ({
  "tt.func"() <{function_type = () -> (), sym_name = "meets_another_descriptor"}> ({
    %spec = "tlx.storage_alias_spec"() {storage = "smem"} : () -> !tlx.storage_alias_spec<smem>
    %a = "tlx.storage_alias_local_alloc"(%spec) {tlx.name = "a"} : (!tlx.storage_alias_spec<smem>) -> !ttg.memdesc<2x32x32xf32, #shared, #smem, mutable>
    %b = "tlx.storage_alias_local_alloc"(%spec) {tlx.name = "b"} : (!tlx.storage_alias_spec<smem>) -> !ttg.memdesc<2x32x32xf32, #shared, #smem, mutable>
    %g = "tlx.reuse_group"(%a, %b) {group_kind = "distinct", group_size = 1 : i64} : (!ttg.memdesc<2x32x32xf32, #shared, #smem, mutable>, !ttg.memdesc<2x32x32xf32, #shared, #smem, mutable>) -> !tlx.reuse_group<distinct>
    "tlx.set_buffer_overlap"(%spec, %g) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<distinct>) -> ()
    %plain = "ttg.local_alloc"() : () -> !ttg.memdesc<2x32x32xf32, #shared, #smem, mutable>
    %c0 = "arith.constant"() <{value = 0 : i32}> : () -> i32
    %c1 = "arith.constant"() <{value = 1 : i32}> : () -> i32
    %c4 = "arith.constant"() <{value = 4 : i32}> : () -> i32
    // expected-error @+1 {{a buffer of a storage_alias_spec (allocated at}}
    %r = "scf.for"(%c0, %c4, %c1, %b) ({
    ^bb0(%i: i32, %x: !ttg.memdesc<2x32x32xf32, #shared, #smem, mutable>):
      %xi = "ttg.memdesc_index"(%x, %c1) : (!ttg.memdesc<2x32x32xf32, #shared, #smem, mutable>, i32) -> !ttg.memdesc<32x32xf32, #shared, #smem, mutable>
      "scf.yield"(%plain) : (!ttg.memdesc<2x32x32xf32, #shared, #smem, mutable>) -> ()
    }) : (i32, i32, i32, !ttg.memdesc<2x32x32xf32, #shared, #smem, mutable>) -> !ttg.memdesc<2x32x32xf32, #shared, #smem, mutable>
    "tt.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
