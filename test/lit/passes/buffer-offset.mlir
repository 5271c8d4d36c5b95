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

// -----

// A leaf whose buffers all sit in index group 0 (num == group_size) never uses the stride between
// index groups, so that stride (48 KiB here) need not be a multiple of its 32 KiB buffer size:
// an operand ring of 3 stages whose epilogue tile shares the B ring's bytes.
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
#smem = #ttg.shared_memory
"builtin.module"() ({
  "tt.func"() <{function_type = () -> (), sym_name = "single_index_group"}> ({
    // CHECK-LABEL: sym_name = "single_index_group"
    // CHECK: "tlx.storage_alias_spec"() {buffer_groups = 1 : i64, buffer_size = 147456 : i64, buffer_stride = 147456 : i64
    %spec = "tlx.storage_alias_spec"() {storage = "smem"} : () -> !tlx.storage_alias_spec<smem>
    // CHECK: buffer_offset = 0 : i64, buffer_stride = 147456 : i64, group_sizes = array<i64>, group_strides = array<i64>, tlx.name = "c"
    %c = "tlx.storage_alias_local_alloc"(%spec) {tlx.name = "c"} : (!tlx.storage_alias_spec<smem>) -> !ttg.memdesc<1x128x256xbf16, #shared, #smem, mutable>
    // CHECK: buffer_offset = 0 : i64, buffer_stride = 147456 : i64, group_sizes = array<i64: 3>, group_strides = array<i64: 32768>, tlx.name = "b"
    %b = "tlx.storage_alias_local_alloc"(%spec) {tlx.name = "b"} : (!tlx.storage_alias_spec<smem>) -> !ttg.memdesc<3x64x256xbf16, #shared, #smem, mutable>
    // CHECK: buffer_offset = 98304 : i64, buffer_stride = 147456 : i64, group_sizes = array<i64: 3>, group_strides = array<i64: 16384>, tlx.name = "a"
    %a = "tlx.storage_alias_local_alloc"(%spec) {tlx.name = "a"} : (!tlx.storage_alias_spec<smem>) -> !ttg.memdesc<3x128x64xbf16, #shared, #smem, mutable>
    %rb = "tlx.reuse_group"(%b) {group_kind = "shared", group_size = 3 : i64} : (!ttg.memdesc<3x64x256xbf16, #shared, #smem, mutable>) -> !tlx.reuse_group<shared>
    %ra = "tlx.reuse_group"(%a) {group_kind = "shared", group_size = 3 : i64} : (!ttg.memdesc<3x128x64xbf16, #shared, #smem, mutable>) -> !tlx.reuse_group<shared>
    %ring = "tlx.reuse_group"(%rb, %ra) {group_kind = "distinct", group_size = 1 : i64} : (!tlx.reuse_group<shared>, !tlx.reuse_group<shared>) -> !tlx.reuse_group<distinct>
    %root = "tlx.reuse_group"(%c, %ring) {group_kind = "shared", group_size = 1 : i64} : (!ttg.memdesc<1x128x256xbf16, #shared, #smem, mutable>, !tlx.reuse_group<distinct>) -> !tlx.reuse_group<shared>
    "tlx.set_buffer_overlap"(%spec, %root) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<shared>) -> ()
    "tt.return"() : () -> ()
  }) : () -> ()
}) : () -> ()

// -----

// An explicit TMEM size is bytes of 128 lanes x 4 bytes, rounded up to whole columns: 40000 bytes are 78.1
// columns, so 79 (it was 78: fewer bytes than asked). The allocation needs 2 x 32 = 64.
#tmem = #ttng.tensor_memory_encoding<blockM = 128, blockN = 32, colStride = 1>
"builtin.module"() ({
  "tt.func"() <{function_type = () -> (), sym_name = "tmem_explicit_bytes_round_up"}> ({
    // CHECK-LABEL: sym_name = "tmem_explicit_bytes_round_up"
    // CHECK: "tlx.storage_alias_spec"() {buffer_groups = 1 : i64, buffer_size = 79 : i64, buffer_size_bytes = 40000 : i64
    %spec = "tlx.storage_alias_spec"() {storage = "tmem", buffer_size_bytes = 40000 : i64} : () -> !tlx.storage_alias_spec<tmem, 40000>
    %a = "tlx.storage_alias_local_alloc"(%spec) : (!tlx.storage_alias_spec<tmem, 40000>) -> !ttg.memdesc<2x128x32xf32, #tmem, #ttng.tensor_memory, mutable>
    "tt.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
