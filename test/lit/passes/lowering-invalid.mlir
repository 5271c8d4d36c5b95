// RUN: tlx-opt %s --split-input-file --verify-diagnostics
// Every user mistake the lowering can meet is a compile error at the offending call's line.

// Seed 001: distinct children need 32768 bytes per buffer but the explicit size leaves 512.
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 32}>
#smem = #ttg.shared_memory
"builtin.module"() ({
  "tt.func"() <{function_type = () -> (), sym_name = "distinct_overflow"}> ({
    %spec = "tlx.storage_alias_spec"() {storage = "smem", buffer_size_bytes = 1024 : i64} : () -> !tlx.storage_alias_spec<smem, 1024>
    %a = "tlx.storage_alias_local_alloc"(%spec) : (!tlx.storage_alias_spec<smem, 1024>) -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    %b = "tlx.storage_alias_local_alloc"(%spec) : (!tlx.storage_alias_spec<smem, 1024>) -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    // expected-error @+1 {{not enough space for distinct allocations: need 32768 bytes, have 512 bytes per buffer: buffer_size_bytes 1024 is too small, requires at least 65536 bytes}}
    %g = "tlx.reuse_group"(%a, %b) {group_kind = "distinct", group_size = 1 : i64} : (!ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>, !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>) -> !tlx.reuse_group<distinct>
    "tlx.set_buffer_overlap"(%spec, %g) : (!tlx.storage_alias_spec<smem, 1024>, !tlx.reuse_group<distinct>) -> ()
    "tt.return"() : () -> ()
  }) : () -> ()
}) : () -> ()

// -----

// Seed 001: a second set_buffer_overlap on the same spec.
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 32}>
#smem = #ttg.shared_memory
"builtin.module"() ({
  "tt.func"() <{function_type = () -> (), sym_name = "duplicate_overlap"}> ({
    %spec = "tlx.storage_alias_spec"() {storage = "smem"} : () -> !tlx.storage_alias_spec<smem>
    %a = "tlx.storage_alias_local_alloc"(%spec) : (!tlx.storage_alias_spec<smem>) -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    %b = "tlx.storage_alias_local_alloc"(%spec) : (!tlx.storage_alias_spec<smem>) -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
    %g1 = "tlx.reuse_group"(%a, %b) {group_kind = "shared", group_size = 1 : i64} : (!ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>, !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>) -> !tlx.reuse_group<shared>
    "tlx.set_buffer_overlap"(%spec, %g1) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<shared>) -> ()
    %g2 = "tlx.reuse_group"(%a, %b) {group_kind = "distinct", group_size = 1 : i64} : (!ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>, !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>) -> !tlx.reuse_group<distinct>
    // expected-error @+1 {{storage_alias_spec already has a set_buffer_overlap defined}}
    "tlx.set_buffer_overlap"(%spec, %g2) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<distinct>) -> ()
    "tt.return"() : () -> ()
  }) : () -> ()
}) : () -> ()

// -----

// An explicit size smaller than the allocations need (no tree: the largest allocation decides).
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 32}>
#smem = #ttg.shared_memory
"builtin.module"() ({
  "tt.func"() <{function_type = () -> (), sym_name = "size_too_small"}> ({
    // expected-error @+1 {{buffer_size_bytes=16384 is too small: the allocations need 32768 bytes}}
    %spec = "tlx.storage_alias_spec"() {storage = "smem", buffer_size_bytes = 16384 : i64} : () -> !tlx.storage_alias_spec<smem, 16384>
    %a = "tlx.storage_alias_local_alloc"(%spec) : (!tlx.storage_alias_spec<smem, 16384>) -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    "tt.return"() : () -> ()
  }) : () -> ()
}) : () -> ()

// -----

// A TMEM allocation on an SMEM spec.
#tmem = #ttng.tensor_memory_encoding<blockM = 128, blockN = 128, colStride = 1>
"builtin.module"() ({
  "tt.func"() <{function_type = () -> (), sym_name = "storage_mismatch"}> ({
    %spec = "tlx.storage_alias_spec"() {storage = "smem"} : () -> !tlx.storage_alias_spec<smem>
    // expected-error @+1 {{tmem allocation uses a smem storage_alias_spec}}
    %a = "tlx.storage_alias_local_alloc"(%spec) : (!tlx.storage_alias_spec<smem>) -> !ttg.memdesc<2x128x128xf32, #tmem, #ttng.tensor_memory, mutable>
    "tt.return"() : () -> ()
  }) : () -> ()
}) : () -> ()

// -----

// A leaf allocated from another spec.
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 32}>
#smem = #ttg.shared_memory
"builtin.module"() ({
  "tt.func"() <{function_type = () -> (), sym_name = "foreign_leaf"}> ({
    %s1 = "tlx.storage_alias_spec"() {storage = "smem"} : () -> !tlx.storage_alias_spec<smem>
    %s2 = "tlx.storage_alias_spec"() {storage = "smem"} : () -> !tlx.storage_alias_spec<smem>
    %a = "tlx.storage_alias_local_alloc"(%s1) : (!tlx.storage_alias_spec<smem>) -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    // expected-error @+1 {{belongs to another storage_alias_spec}}
    %b = "tlx.storage_alias_local_alloc"(%s2) : (!tlx.storage_alias_spec<smem>) -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    %g = "tlx.reuse_group"(%a, %b) {group_kind = "shared", group_size = 1 : i64} : (!ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>, !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>) -> !tlx.reuse_group<shared>
    "tlx.set_buffer_overlap"(%s1, %g) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<shared>) -> ()
    "tt.return"() : () -> ()
  }) : () -> ()
}) : () -> ()

// -----

// A group_size on a distinct group has no effect (TLX ignores it too): a warning at the group's line.
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 32}>
#smem = #ttg.shared_memory
"builtin.module"() ({
  "tt.func"() <{function_type = () -> (), sym_name = "distinct_group_size"}> ({
    %spec = "tlx.storage_alias_spec"() {storage = "smem"} : () -> !tlx.storage_alias_spec<smem>
    %a = "tlx.storage_alias_local_alloc"(%spec) : (!tlx.storage_alias_spec<smem>) -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    %b = "tlx.storage_alias_local_alloc"(%spec) : (!tlx.storage_alias_spec<smem>) -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    // expected-warning @+1 {{group_size=2 on a distinct group has no effect (as in TLX)}}
    %g = "tlx.reuse_group"(%a, %b) {group_kind = "distinct", group_size = 2 : i64} : (!ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>, !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>) -> !tlx.reuse_group<distinct>
    "tlx.set_buffer_overlap"(%spec, %g) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<distinct>) -> ()
    "tt.return"() : () -> ()
  }) : () -> ()
}) : () -> ()

// -----

// A distinct child whose offset is not a multiple of its own buffer size (small buffer first): a view
// addresses whole buffers. TLX rejects it with the same words.
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 32}>
#shared1 = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
#smem = #ttg.shared_memory
"builtin.module"() ({
  "tt.func"() <{function_type = () -> (), sym_name = "misaligned_offset"}> ({
    %spec = "tlx.storage_alias_spec"() {storage = "smem"} : () -> !tlx.storage_alias_spec<smem>
    %alpha = "tlx.storage_alias_local_alloc"(%spec) : (!tlx.storage_alias_spec<smem>) -> !ttg.memdesc<2x64xf32, #shared1, #smem, mutable>
    // expected-error @+1 {{buffer_offset (256) must be a multiple of the original buffer size (8192) (bytes}}
    %p = "tlx.storage_alias_local_alloc"(%spec) : (!tlx.storage_alias_spec<smem>) -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
    %g = "tlx.reuse_group"(%alpha, %p) {group_kind = "distinct", group_size = 1 : i64} : (!ttg.memdesc<2x64xf32, #shared1, #smem, mutable>, !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>) -> !tlx.reuse_group<distinct>
    "tlx.set_buffer_overlap"(%spec, %g) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<distinct>) -> ()
    "tt.return"() : () -> ()
  }) : () -> ()
}) : () -> ()

// -----

// Tensor memory over 512 columns: 5 x 128 fp32 columns.
#tmem = #ttng.tensor_memory_encoding<blockM = 128, blockN = 128, colStride = 1>
"builtin.module"() ({
  "tt.func"() <{function_type = () -> (), sym_name = "tmem_over_capacity"}> ({
    // expected-error @+1 {{tensor memory over capacity: this spec needs 640 columns, the SM has 512}}
    %spec = "tlx.storage_alias_spec"() {storage = "tmem"} : () -> !tlx.storage_alias_spec<tmem>
    %a = "tlx.storage_alias_local_alloc"(%spec) : (!tlx.storage_alias_spec<tmem>) -> !ttg.memdesc<5x128x128xf32, #tmem, #ttng.tensor_memory, mutable>
    "tt.return"() : () -> ()
  }) : () -> ()
}) : () -> ()

// -----

// Shared memory over the sm_90 limit: 4 x 64 KiB.
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
#smem = #ttg.shared_memory
"builtin.module"() ({
  "tt.func"() <{function_type = () -> (), sym_name = "smem_over_capacity"}> ({
    // expected-error @+1 {{shared memory over capacity: this spec needs 262144 bytes, the target allows 232448}}
    %spec = "tlx.storage_alias_spec"() {storage = "smem"} : () -> !tlx.storage_alias_spec<smem>
    %a = "tlx.storage_alias_local_alloc"(%spec) : (!tlx.storage_alias_spec<smem>) -> !ttg.memdesc<4x128x256xf16, #shared, #smem, mutable>
    "tt.return"() : () -> ()
  }) : () -> ()
}) : () -> ()

// -----

// A spec nobody allocates from: a warning, and nothing is reserved.
"builtin.module"() ({
  "tt.func"() <{function_type = () -> (), sym_name = "unused_spec"}> ({
    // expected-warning @+1 {{storage_alias_spec has no allocations}}
    %spec = "tlx.storage_alias_spec"() {storage = "smem"} : () -> !tlx.storage_alias_spec<smem>
    "tt.return"() : () -> ()
  }) : () -> ()
}) : () -> ()

// -----

// Using a whole multi-buffer view (not one buffer) is rejected: aliased buffers are addressed per index.
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 32}>
#smem = #ttg.shared_memory
"builtin.module"() ({
  "tt.func"() <{function_type = () -> (), sym_name = "whole_view_use"}> ({
    %spec = "tlx.storage_alias_spec"() {storage = "smem"} : () -> !tlx.storage_alias_spec<smem>
    %a = "tlx.storage_alias_local_alloc"(%spec) : (!tlx.storage_alias_spec<smem>) -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    %b = "tlx.storage_alias_local_alloc"(%spec) : (!tlx.storage_alias_spec<smem>) -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
    %g = "tlx.reuse_group"(%a, %b) {group_kind = "shared", group_size = 1 : i64} : (!ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>, !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>) -> !tlx.reuse_group<shared>
    "tlx.set_buffer_overlap"(%spec, %g) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<shared>) -> ()
    // expected-error @+1 {{'ttg.local_load' uses a whole multi-buffer allocation}}
    "ttg.local_load"(%b) : (!ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>) -> tensor<2x64x64xf16>
    "tt.return"() : () -> ()
  }) : () -> ()
}) : () -> ()

// -----

// A call Triton did not inline (a noinline helper, or a helper with a runtime `return` called in a loop) that
// takes the whole multi-buffer view: the error says which calls stay calls and how to pass one buffer.
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 32}>
#smem = #ttg.shared_memory
"builtin.module"() ({
  "tt.func"() <{function_type = () -> (), sym_name = "whole_view_call"}> ({
    %spec = "tlx.storage_alias_spec"() {storage = "smem"} : () -> !tlx.storage_alias_spec<smem>
    %a = "tlx.storage_alias_local_alloc"(%spec) : (!tlx.storage_alias_spec<smem>) -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    %b = "tlx.storage_alias_local_alloc"(%spec) : (!tlx.storage_alias_spec<smem>) -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
    %g = "tlx.reuse_group"(%a, %b) {group_kind = "shared", group_size = 1 : i64} : (!ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>, !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>) -> !tlx.reuse_group<shared>
    "tlx.set_buffer_overlap"(%spec, %g) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<shared>) -> ()
    // expected-error @+1 {{a call Triton did not inline takes a whole multi-buffer allocation}}
    "tt.call"(%b) <{callee = @helper}> : (!ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>) -> ()
    "tt.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
