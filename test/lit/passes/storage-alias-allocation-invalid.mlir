// RUN: tlx-opt %s --split-input-file --verify-diagnostics --exact-views --pass tlx-storage-alias-allocation
// Every diagnostic of tlx-storage-alias-allocation that lowering-invalid.mlir and
// storage-alias-allocation-control-flow.mlir do not check, run alone: the sizes and placements the earlier
// passes would set are written by hand. --exact-views (Triton 3.8) matters only for the last case.

// Pass order: the reuse tree is still there (tlx-buffer-offset erases it); an error at the op that still
// uses the spec, naming the pass to run first.
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 32}>
#smem = #ttg.shared_memory
"builtin.module"() ({
  "tt.func"() <{function_type = () -> (), sym_name = "tree_not_placed"}> ({
    %spec = "tlx.storage_alias_spec"() {storage = "smem", buffer_size = 32768 : i64, buffer_stride = 16384 : i64, buffer_groups = 2 : i64, unit = "bytes"} : () -> !tlx.storage_alias_spec<smem>
    %a = "tlx.storage_alias_local_alloc"(%spec) : (!tlx.storage_alias_spec<smem>) -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    %g = "tlx.reuse_group"(%a) {group_kind = "shared", group_size = 1 : i64} : (!ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>) -> !tlx.reuse_group<shared>
    // expected-error @+1 {{'tlx.set_buffer_overlap' still uses the spec. Fix: run tlx-buffer-offset first}}
    "tlx.set_buffer_overlap"(%spec, %g) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<shared>) -> ()
    "tt.return"() : () -> ()
  }) : () -> ()
}) : () -> ()

// -----

// Pass order: a spec (no reuse tree) that tlx-size-definition has not sized; an error at the spec.
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 32}>
#smem = #ttg.shared_memory
"builtin.module"() ({
  "tt.func"() <{function_type = () -> (), sym_name = "not_sized"}> ({
    // expected-error @+1 {{[tlx-storage-alias-allocation] spec has no computed size. Fix: run tlx-size-definition first}}
    %spec = "tlx.storage_alias_spec"() {storage = "smem"} : () -> !tlx.storage_alias_spec<smem>
    %a = "tlx.storage_alias_local_alloc"(%spec) : (!tlx.storage_alias_spec<smem>) -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    "tt.return"() : () -> ()
  }) : () -> ()
}) : () -> ()

// -----

// Pass order: a sized spec whose allocation tlx-buffer-offset has not placed (no buffer_offset ...); an
// error at the allocation.
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 32}>
#smem = #ttg.shared_memory
"builtin.module"() ({
  "tt.func"() <{function_type = () -> (), sym_name = "not_placed"}> ({
    %spec = "tlx.storage_alias_spec"() {storage = "smem", buffer_size = 32768 : i64, buffer_stride = 0 : i64, buffer_groups = 1 : i64, unit = "bytes"} : () -> !tlx.storage_alias_spec<smem>
    // expected-error @+1 {{allocation has no placement. Fix: run tlx-buffer-offset first}}
    %a = "tlx.storage_alias_local_alloc"(%spec) : (!tlx.storage_alias_spec<smem>) -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    "tt.return"() : () -> ()
  }) : () -> ()
}) : () -> ()

// -----

// Pass order with --exact-views: a spec sized without it (20480 bytes) holds 8 KiB buffers, which do not
// tile it; Triton 3.8 cannot reinterpret part of an allocation, so the error is at the allocation.
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
#smem = #ttg.shared_memory
"builtin.module"() ({
  "tt.func"() <{function_type = () -> (), sym_name = "view_does_not_tile"}> ({
    %spec = "tlx.storage_alias_spec"() {storage = "smem", buffer_size = 20480 : i64, buffer_stride = 0 : i64, buffer_groups = 1 : i64, unit = "bytes"} : () -> !tlx.storage_alias_spec<smem>
    // expected-error @+1 {{buffer 'a' (8192 bytes) does not tile its spec's 20480. Fix: run tlx-size-definition with the same exact_views option first}}
    %a = "tlx.storage_alias_local_alloc"(%spec) {tlx.name = "a", buffer_offset = 0 : i64, buffer_stride = 8192 : i64, group_sizes = array<i64>, group_strides = array<i64>} : (!tlx.storage_alias_spec<smem>) -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
    "tt.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
