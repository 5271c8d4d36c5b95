// RUN: tlx-opt %s --split-input-file --pass tlx-size-definition --pass tlx-buffer-offset | FileCheck %s

// Seed 001, phase 5: an explicit 32768-byte SMEM spec; qk shares each buffer index with the distinct
// pair (p, alpha). 16384 bytes between buffers; p at 0, alpha right after p at 8192.
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 32}>
#shared1 = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
#smem = #ttg.shared_memory
"builtin.module"() ({
  "tt.func"() <{function_type = () -> (), sym_name = "seed001_phase5"}> ({
    // CHECK-LABEL: sym_name = "seed001_phase5"
    // CHECK: "tlx.storage_alias_spec"() {buffer_groups = 2 : i64, buffer_size = 32768 : i64, buffer_size_bytes = 32768 : i64, buffer_stride = 16384 : i64, storage = "smem", unit = "bytes"}
    %spec = "tlx.storage_alias_spec"() {storage = "smem", buffer_size_bytes = 32768 : i64} : () -> !tlx.storage_alias_spec<smem, 32768>
    // CHECK: "tlx.storage_alias_local_alloc"(%{{.*}}) {buffer_offset = 0 : i64, buffer_stride = 16384 : i64, group_sizes = array<i64>, group_strides = array<i64>, tlx.name = "qk"}
    %qk = "tlx.storage_alias_local_alloc"(%spec) {tlx.name = "qk"} : (!tlx.storage_alias_spec<smem, 32768>) -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    // CHECK: "tlx.storage_alias_local_alloc"(%{{.*}}) {buffer_offset = 0 : i64, buffer_stride = 16384 : i64, {{.*}}tlx.name = "p"}
    %p = "tlx.storage_alias_local_alloc"(%spec) {tlx.name = "p"} : (!tlx.storage_alias_spec<smem, 32768>) -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
    // CHECK: "tlx.storage_alias_local_alloc"(%{{.*}}) {buffer_offset = 8192 : i64, buffer_stride = 16384 : i64, {{.*}}tlx.name = "alpha"}
    %alpha = "tlx.storage_alias_local_alloc"(%spec) {tlx.name = "alpha"} : (!tlx.storage_alias_spec<smem, 32768>) -> !ttg.memdesc<2x64xf32, #shared1, #smem, mutable>
    %inner = "tlx.reuse_group"(%p, %alpha) {group_kind = "distinct", group_size = 1 : i64} : (!ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>, !ttg.memdesc<2x64xf32, #shared1, #smem, mutable>) -> !tlx.reuse_group<distinct>
    %outer = "tlx.reuse_group"(%qk, %inner) {group_kind = "shared", group_size = 1 : i64} : (!ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>, !tlx.reuse_group<distinct>) -> !tlx.reuse_group<shared>
    "tlx.set_buffer_overlap"(%spec, %outer) : (!tlx.storage_alias_spec<smem, 32768>, !tlx.reuse_group<shared>) -> ()
    // CHECK-NOT: tlx.set_buffer_overlap
    // CHECK-NOT: tlx.reuse_group
    "tt.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
