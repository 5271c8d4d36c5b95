// RUN: tlx-opt %s --pass tlx-size-definition --pass tlx-buffer-offset --pass tlx-storage-alias-allocation --pass tlx-export | FileCheck %s --check-prefix=FREE
// RUN: tlx-opt %s --exact-views --pass tlx-size-definition --pass tlx-buffer-offset --pass tlx-storage-alias-allocation --pass tlx-export 2>&1 | FileCheck %s --check-prefix=EXACT

// distinct(c, shared[3](b_ring)): one 64 KiB c tile, then three 32 KiB b buffers: 163840 bytes, which a 64 KiB
// view cannot tile. Triton 3.9 reinterprets part of an allocation: no padding. Triton 3.8 (--exact-views)
// only reinterprets a whole allocation: the spec is padded to 196608 (a multiple of every buffer size)
// with a warning at the spec's line, and every view covers the whole backing.
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
#smem = #ttg.shared_memory
"builtin.module"() ({
  "tt.func"() <{function_type = () -> (), sym_name = "gemm_no_share"}> ({
    // FREE: () -> !ttg.memdesc<5x32768xi8
    // FREE: -> !ttg.memdesc<2x256x128xf16
    // FREE: -> !ttg.memdesc<5x128x128xf16
    // EXACT: g.py:3: warning: [tlx-size-definition] padded from 163840 to 196608 bytes so that every buffer size divides it: Triton 3.8 can only reinterpret a whole allocation
    // EXACT: () -> !ttg.memdesc<3x65536xi8
    // EXACT: -> !ttg.memdesc<3x256x128xf16
    // EXACT: -> !ttg.memdesc<6x128x128xf16
    %spec = "tlx.storage_alias_spec"() {storage = "smem", tlx.src = "g.py:3"} : () -> !tlx.storage_alias_spec<smem>
    %c = "tlx.storage_alias_local_alloc"(%spec) {tlx.name = "c"} : (!tlx.storage_alias_spec<smem>) -> !ttg.memdesc<1x256x128xf16, #shared, #smem, mutable>
    %b = "tlx.storage_alias_local_alloc"(%spec) {tlx.name = "b_ring"} : (!tlx.storage_alias_spec<smem>) -> !ttg.memdesc<3x128x128xf16, #shared, #smem, mutable>
    %bg = "tlx.reuse_group"(%b) {group_kind = "shared", group_size = 3 : i64} : (!ttg.memdesc<3x128x128xf16, #shared, #smem, mutable>) -> !tlx.reuse_group<shared>
    %g = "tlx.reuse_group"(%c, %bg) {group_kind = "distinct", group_size = 1 : i64} : (!ttg.memdesc<1x256x128xf16, #shared, #smem, mutable>, !tlx.reuse_group<shared>) -> !tlx.reuse_group<distinct>
    "tlx.set_buffer_overlap"(%spec, %g) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<distinct>) -> ()
    "tt.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
