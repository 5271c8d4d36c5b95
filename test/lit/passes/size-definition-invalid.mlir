// RUN: tlx-opt %s --split-input-file --verify-diagnostics --exact-views --pass tlx-size-definition
// Every diagnostic of tlx-size-definition, and the reuse-tree checks of analysis.py, which run in the first
// pass that reads the specs (this one). --exact-views (Triton 3.8) matters only for the last case: every
// error here is found before the spec is padded.

// A spec over a storage kind that cannot be aliased (smemCluster): an error at the spec.
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 32}>
#smem = #ttg.shared_memory
"builtin.module"() ({
  "tt.func"() <{function_type = () -> (), sym_name = "cluster_storage"}> ({
    // expected-error @+1 {{storage kind 'smemCluster' cannot be aliased}}
    %spec = "tlx.storage_alias_spec"() {storage = "smemCluster"} : () -> !tlx.storage_alias_spec<smemCluster>
    %a = "tlx.storage_alias_local_alloc"(%spec) : (!tlx.storage_alias_spec<smemCluster>) -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    "tt.return"() : () -> ()
  }) : () -> ()
}) : () -> ()

// -----

// A TMEM allocation whose buffers are 1-D (2 buffers of 128 columns): TMEM is allocated as rows x columns,
// so the allocation is rejected with the shape it has.
#tmem = #ttng.tensor_memory_encoding<blockM = 128, blockN = 128, colStride = 1>
"builtin.module"() ({
  "tt.func"() <{function_type = () -> (), sym_name = "tmem_one_dimensional"}> ({
    %spec = "tlx.storage_alias_spec"() {storage = "tmem"} : () -> !tlx.storage_alias_spec<tmem>
    // expected-error @+1 {{TMEM buffers must be 2-D (got shape [128])}}
    %a = "tlx.storage_alias_local_alloc"(%spec) : (!tlx.storage_alias_spec<tmem>) -> !ttg.memdesc<2x128xf32, #tmem, #ttng.tensor_memory, mutable>
    "tt.return"() : () -> ()
  }) : () -> ()
}) : () -> ()

// -----

// One allocation listed twice in the reuse tree: an error at that allocation.
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 32}>
#smem = #ttg.shared_memory
"builtin.module"() ({
  "tt.func"() <{function_type = () -> (), sym_name = "leaf_twice"}> ({
    %spec = "tlx.storage_alias_spec"() {storage = "smem"} : () -> !tlx.storage_alias_spec<smem>
    // expected-error @+1 {{buffer 'a' appears twice in the reuse tree}}
    %a = "tlx.storage_alias_local_alloc"(%spec) {tlx.name = "a"} : (!tlx.storage_alias_spec<smem>) -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    %g = "tlx.reuse_group"(%a, %a) {group_kind = "distinct", group_size = 1 : i64} : (!ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>, !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>) -> !tlx.reuse_group<distinct>
    "tlx.set_buffer_overlap"(%spec, %g) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<distinct>) -> ()
    "tt.return"() : () -> ()
  }) : () -> ()
}) : () -> ()

// -----

// A plain allocation (not made from the spec) put in a reuse group: an error at that allocation.
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 32}>
#smem = #ttg.shared_memory
"builtin.module"() ({
  "tt.func"() <{function_type = () -> (), sym_name = "plain_alloc_in_group"}> ({
    %spec = "tlx.storage_alias_spec"() {storage = "smem"} : () -> !tlx.storage_alias_spec<smem>
    %a = "tlx.storage_alias_local_alloc"(%spec) : (!tlx.storage_alias_spec<smem>) -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    // expected-error @+1 {{'ttg.local_alloc' cannot be an element of a reuse group}}
    %p = "ttg.local_alloc"() : () -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    %g = "tlx.reuse_group"(%a, %p) {group_kind = "shared", group_size = 1 : i64} : (!ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>, !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>) -> !tlx.reuse_group<shared>
    "tlx.set_buffer_overlap"(%spec, %g) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<shared>) -> ()
    "tt.return"() : () -> ()
  }) : () -> ()
}) : () -> ()

// -----

// A reuse group of a kind that is neither shared nor distinct: an error at the group.
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 32}>
#smem = #ttg.shared_memory
"builtin.module"() ({
  "tt.func"() <{function_type = () -> (), sym_name = "unknown_group_kind"}> ({
    %spec = "tlx.storage_alias_spec"() {storage = "smem"} : () -> !tlx.storage_alias_spec<smem>
    %a = "tlx.storage_alias_local_alloc"(%spec) : (!tlx.storage_alias_spec<smem>) -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    // expected-error @+1 {{unknown group kind 'overlapped'}}
    %g = "tlx.reuse_group"(%a) {group_kind = "overlapped", group_size = 1 : i64} : (!ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>) -> !tlx.reuse_group<overlapped>
    "tlx.set_buffer_overlap"(%spec, %g) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<overlapped>) -> ()
    "tt.return"() : () -> ()
  }) : () -> ()
}) : () -> ()

// -----

// A reuse group with group_size 0: an error at the group.
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 32}>
#smem = #ttg.shared_memory
"builtin.module"() ({
  "tt.func"() <{function_type = () -> (), sym_name = "group_size_zero"}> ({
    %spec = "tlx.storage_alias_spec"() {storage = "smem"} : () -> !tlx.storage_alias_spec<smem>
    %a = "tlx.storage_alias_local_alloc"(%spec) : (!tlx.storage_alias_spec<smem>) -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    // expected-error @+1 {{group_size must be >= 1, got 0}}
    %g = "tlx.reuse_group"(%a) {group_kind = "shared", group_size = 0 : i64} : (!ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>) -> !tlx.reuse_group<shared>
    "tlx.set_buffer_overlap"(%spec, %g) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<shared>) -> ()
    "tt.return"() : () -> ()
  }) : () -> ()
}) : () -> ()

// -----

// A reuse group with no element (nested in the root): an error at the empty group.
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 32}>
#smem = #ttg.shared_memory
"builtin.module"() ({
  "tt.func"() <{function_type = () -> (), sym_name = "empty_group"}> ({
    %spec = "tlx.storage_alias_spec"() {storage = "smem"} : () -> !tlx.storage_alias_spec<smem>
    %a = "tlx.storage_alias_local_alloc"(%spec) : (!tlx.storage_alias_spec<smem>) -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    // expected-error @+1 {{empty reuse group}}
    %e = "tlx.reuse_group"() {group_kind = "distinct", group_size = 1 : i64} : () -> !tlx.reuse_group<distinct>
    %g = "tlx.reuse_group"(%a, %e) {group_kind = "shared", group_size = 1 : i64} : (!ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>, !tlx.reuse_group<distinct>) -> !tlx.reuse_group<shared>
    "tlx.set_buffer_overlap"(%spec, %g) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<shared>) -> ()
    "tt.return"() : () -> ()
  }) : () -> ()
}) : () -> ()

// -----

// 3 buffers under a shared group of group_size 2: the count does not split into whole groups, so the
// error is at the allocation and names the group size.
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 32}>
#smem = #ttg.shared_memory
"builtin.module"() ({
  "tt.func"() <{function_type = () -> (), sym_name = "count_not_split"}> ({
    %spec = "tlx.storage_alias_spec"() {storage = "smem"} : () -> !tlx.storage_alias_spec<smem>
    // expected-error @+1 {{buffer 'a' has 3 buffers, which cannot be split into groups of 2}}
    %a = "tlx.storage_alias_local_alloc"(%spec) {tlx.name = "a"} : (!tlx.storage_alias_spec<smem>) -> !ttg.memdesc<3x64x64xf32, #shared, #smem, mutable>
    %b = "tlx.storage_alias_local_alloc"(%spec) {tlx.name = "b"} : (!tlx.storage_alias_spec<smem>) -> !ttg.memdesc<4x64x64xf32, #shared, #smem, mutable>
    %g = "tlx.reuse_group"(%a, %b) {group_kind = "shared", group_size = 2 : i64} : (!ttg.memdesc<3x64x64xf32, #shared, #smem, mutable>, !ttg.memdesc<4x64x64xf32, #shared, #smem, mutable>) -> !tlx.reuse_group<shared>
    "tlx.set_buffer_overlap"(%spec, %g) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<shared>) -> ()
    "tt.return"() : () -> ()
  }) : () -> ()
}) : () -> ()

// -----

// An explicit size of 0 bytes: an error at the spec.
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 32}>
#smem = #ttg.shared_memory
"builtin.module"() ({
  "tt.func"() <{function_type = () -> (), sym_name = "size_zero"}> ({
    // expected-error @+1 {{buffer_size_bytes must be positive, got 0}}
    %spec = "tlx.storage_alias_spec"() {storage = "smem", buffer_size_bytes = 0 : i64} : () -> !tlx.storage_alias_spec<smem, 0>
    %a = "tlx.storage_alias_local_alloc"(%spec) : (!tlx.storage_alias_spec<smem, 0>) -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    "tt.return"() : () -> ()
  }) : () -> ()
}) : () -> ()

// -----

// An explicit size too small for a shared tree (2 x 16 KiB buffers need 32768 bytes, 1024 given): no
// distinct group overflows, so the error is at the spec and gives the size the tree needs.
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 32}>
#smem = #ttg.shared_memory
"builtin.module"() ({
  "tt.func"() <{function_type = () -> (), sym_name = "shared_tree_too_small"}> ({
    // expected-error @+1 {{buffer_size_bytes 1024 is too small for the reuse tree, requires at least 32768 bytes}}
    %spec = "tlx.storage_alias_spec"() {storage = "smem", buffer_size_bytes = 1024 : i64} : () -> !tlx.storage_alias_spec<smem, 1024>
    %a = "tlx.storage_alias_local_alloc"(%spec) : (!tlx.storage_alias_spec<smem, 1024>) -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    %b = "tlx.storage_alias_local_alloc"(%spec) : (!tlx.storage_alias_spec<smem, 1024>) -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
    %g = "tlx.reuse_group"(%a, %b) {group_kind = "shared", group_size = 1 : i64} : (!ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>, !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>) -> !tlx.reuse_group<shared>
    "tlx.set_buffer_overlap"(%spec, %g) : (!tlx.storage_alias_spec<smem, 1024>, !tlx.reuse_group<shared>) -> ()
    "tt.return"() : () -> ()
  }) : () -> ()
}) : () -> ()

// -----

// --exact-views (Triton 3.8 reinterprets only a whole allocation): buffers of 6144 and 8192 bytes, no tree,
// need 8192 bytes; the spec is padded to 24576 (their lcm) with a warning at the spec.
#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
"builtin.module"() ({
  "tt.func"() <{function_type = () -> (), sym_name = "padded_for_exact_views"}> ({
    // expected-warning @+1 {{padded from 8192 to 24576 bytes so that every buffer size divides it}}
    %spec = "tlx.storage_alias_spec"() {storage = "smem"} : () -> !tlx.storage_alias_spec<smem>
    %a = "tlx.storage_alias_local_alloc"(%spec) : (!tlx.storage_alias_spec<smem>) -> !ttg.memdesc<1x48x64xf16, #shared, #smem, mutable>
    %b = "tlx.storage_alias_local_alloc"(%spec) : (!tlx.storage_alias_spec<smem>) -> !ttg.memdesc<1x64x64xf16, #shared, #smem, mutable>
    "tt.return"() : () -> ()
  }) : () -> ()
}) : () -> ()

// -----

// A layout whose bytes tlx-alias does not size, refused at the allocation: a linear shared layout with a zero
// (broadcast) offset basis (Triton allocates its whole offset range; sized as its elements, it was half of that).
#lin = #ttg.shared_linear<{offset = [[0, 1], [0, 2], [0, 4], [0, 8], [1, 0], [2, 0], [4, 0], [0, 0]]}, alignment = 16>
#smem = #ttg.shared_memory
"builtin.module"() ({
  "tt.func"() <{function_type = () -> (), sym_name = "linear_broadcast"}> ({
    %spec = "tlx.storage_alias_spec"() {storage = "smem"} : () -> !tlx.storage_alias_spec<smem>
    // expected-error @+1 {{has a linear shared layout with a zero (broadcast) offset basis}}
    %a = "tlx.storage_alias_local_alloc"(%spec) : (!tlx.storage_alias_spec<smem>) -> !ttg.memdesc<2x8x16xf16, #lin, #smem, mutable>
    "tt.return"() : () -> ()
  }) : () -> ()
}) : () -> ()

// -----

// An explicit TMEM size below what the allocations need, though it rounds up to enough whole columns (32700
// bytes: 63.9 columns, 64 rounded up; the allocation needs 64 columns, 32768 bytes): too small, in bytes.
#tmem = #ttng.tensor_memory_encoding<blockM = 128, blockN = 32, colStride = 1>
"builtin.module"() ({
  "tt.func"() <{function_type = () -> (), sym_name = "tmem_explicit_bytes_too_small"}> ({
    // expected-error @+1 {{buffer_size_bytes=32700 is too small: the allocations need 64 columns (32768 bytes)}}
    %spec = "tlx.storage_alias_spec"() {storage = "tmem", buffer_size_bytes = 32700 : i64} : () -> !tlx.storage_alias_spec<tmem, 32700>
    %a = "tlx.storage_alias_local_alloc"(%spec) : (!tlx.storage_alias_spec<tmem, 32700>) -> !ttg.memdesc<2x128x32xf32, #tmem, #ttng.tensor_memory, mutable>
    "tt.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
