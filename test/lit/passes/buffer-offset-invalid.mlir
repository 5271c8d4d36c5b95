// RUN: tlx-opt %s --split-input-file --verify-diagnostics --pass tlx-buffer-offset
// Every diagnostic of tlx-buffer-offset, run alone: the sizes tlx-size-definition would set
// (buffer_size, buffer_stride) are written on the specs by hand.

// Pass order: tlx-buffer-offset on a spec that tlx-size-definition has not sized; an error at the spec
// that names the pass to run first.
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 32}>
#smem = #ttg.shared_memory
"builtin.module"() ({
  "tt.func"() <{function_type = () -> (), sym_name = "not_sized"}> ({
    // expected-error @+1 {{spec has no computed size. Fix: run tlx-size-definition first}}
    %spec = "tlx.storage_alias_spec"() {storage = "smem"} : () -> !tlx.storage_alias_spec<smem>
    %a = "tlx.storage_alias_local_alloc"(%spec) : (!tlx.storage_alias_spec<smem>) -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    "tt.return"() : () -> ()
  }) : () -> ()
}) : () -> ()

// -----

// A spec with a reuse tree that leaves out one of its allocations (b): b has no place in the layout, so
// the error is at b.
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 32}>
#smem = #ttg.shared_memory
"builtin.module"() ({
  "tt.func"() <{function_type = () -> (), sym_name = "missing_from_tree"}> ({
    %spec = "tlx.storage_alias_spec"() {storage = "smem", buffer_size = 32768 : i64, buffer_stride = 16384 : i64, buffer_groups = 2 : i64, unit = "bytes"} : () -> !tlx.storage_alias_spec<smem>
    %a = "tlx.storage_alias_local_alloc"(%spec) {tlx.name = "a"} : (!tlx.storage_alias_spec<smem>) -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    // expected-error @+1 {{buffer 'b' uses this spec but is missing from its reuse tree}}
    %b = "tlx.storage_alias_local_alloc"(%spec) {tlx.name = "b"} : (!tlx.storage_alias_spec<smem>) -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
    %g = "tlx.reuse_group"(%a) {group_kind = "shared", group_size = 1 : i64} : (!ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>) -> !tlx.reuse_group<shared>
    "tlx.set_buffer_overlap"(%spec, %g) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<shared>) -> ()
    "tt.return"() : () -> ()
  }) : () -> ()
}) : () -> ()

// -----

// A reuse group that is also used outside the reuse tree (by an unregistered op): the pass cannot erase
// it, so the error is at the group.
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 32}>
#smem = #ttg.shared_memory
"builtin.module"() ({
  "tt.func"() <{function_type = () -> (), sym_name = "group_used_elsewhere"}> ({
    %spec = "tlx.storage_alias_spec"() {storage = "smem", buffer_size = 32768 : i64, buffer_stride = 16384 : i64, buffer_groups = 2 : i64, unit = "bytes"} : () -> !tlx.storage_alias_spec<smem>
    %a = "tlx.storage_alias_local_alloc"(%spec) : (!tlx.storage_alias_spec<smem>) -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    // expected-error @+1 {{reuse_group used by something other than a reuse tree}}
    %g = "tlx.reuse_group"(%a) {group_kind = "shared", group_size = 1 : i64} : (!ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>) -> !tlx.reuse_group<shared>
    "tlx.set_buffer_overlap"(%spec, %g) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<shared>) -> ()
    "test.keep"(%g) : (!tlx.reuse_group<shared>) -> ()
    "tt.return"() : () -> ()
  }) : () -> ()
}) : () -> ()

// -----

// A linear shared layout asking for 1024-byte alignment, placed at byte 256 by its distinct group (its buffers
// are 256 bytes): Triton would align such an allocation's start, a view starts where the tree places it.
#lin = #ttg.shared_linear<{offset = [[0, 1], [0, 2], [0, 4], [0, 8], [1, 0], [2, 0], [4, 0]]}, alignment = 1024>
#smem = #ttg.shared_memory
"builtin.module"() ({
  "tt.func"() <{function_type = () -> (), sym_name = "linear_alignment"}> ({
    %spec = "tlx.storage_alias_spec"() {storage = "smem", buffer_size = 512 : i64, buffer_stride = 512 : i64, buffer_groups = 1 : i64, unit = "bytes"} : () -> !tlx.storage_alias_spec<smem>
    %a = "tlx.storage_alias_local_alloc"(%spec) : (!tlx.storage_alias_spec<smem>) -> !ttg.memdesc<1x8x16xf16, #lin, #smem, mutable>
    // expected-error @+1 {{its layout asks for alignment to 1024 bytes, and the tree places it at 256 bytes}}
    %b = "tlx.storage_alias_local_alloc"(%spec) : (!tlx.storage_alias_spec<smem>) -> !ttg.memdesc<1x8x16xf16, #lin, #smem, mutable>
    %g = "tlx.reuse_group"(%a, %b) {group_kind = "distinct", group_size = 1 : i64} : (!ttg.memdesc<1x8x16xf16, #lin, #smem, mutable>, !ttg.memdesc<1x8x16xf16, #lin, #smem, mutable>) -> !tlx.reuse_group<distinct>
    "tlx.set_buffer_overlap"(%spec, %g) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<distinct>) -> ()
    "tt.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
