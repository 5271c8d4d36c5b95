// RUN: tlx-opt %s --split-input-file --verify-diagnostics

// Generic text keeps `!ttg.memdesc<...>` opaque to the parser, so a type Triton's own parser would reject
// reaches the passes: an error at the op whose result has it, not a traceback.
#tmem = #ttng.tensor_memory_encoding<blockM = 128, blockN = 64, colStride = 1x>
#tmem_space = #ttng.tensor_memory
"builtin.module"() ({
  "tt.func"() <{function_type = () -> (), sym_name = "bad_col_stride"}> ({
    %spec = "tlx.storage_alias_spec"() {storage = "tmem"} : () -> !tlx.storage_alias_spec<tmem>
    // expected-error @+1 {{malformed type: colStride = 1x is not a positive integer}}
    %a = "tlx.storage_alias_local_alloc"(%spec) {tlx.name = "a"} : (!tlx.storage_alias_spec<tmem>) -> !ttg.memdesc<2x128x64xf32, #tmem, #tmem_space, mutable>
    "tt.return"() : () -> ()
  }) : () -> ()
}) {ttg.target = "cuda:100"} : () -> ()

// -----

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
#smem = #ttg.shared_memory
"builtin.module"() ({
  "tt.func"() <{function_type = () -> (), sym_name = "unknown_element"}> ({
    %spec = "tlx.storage_alias_spec"() {storage = "smem"} : () -> !tlx.storage_alias_spec<smem>
    // expected-error @+1 {{malformed type: the element type 'foo' of the type}}
    %a = "tlx.storage_alias_local_alloc"(%spec) {tlx.name = "a"} : (!tlx.storage_alias_spec<smem>) -> !ttg.memdesc<2x64xfoo, #shared, #smem, mutable>
    "tt.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
