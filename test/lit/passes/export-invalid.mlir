// RUN: tlx-opt %s --split-input-file --verify-diagnostics --pass tlx-export
// Every diagnostic of tlx-export: nothing of the tlx dialect may reach Triton.

// Pass order: tlx-export on a module still holding a tlx op (the lowering passes did not run); an error at
// the op, naming the passes to run first.
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 32}>
#smem = #ttg.shared_memory
"builtin.module"() ({
  "tt.func"() <{function_type = () -> (), sym_name = "tlx_op_left"}> ({
    // expected-error @+1 {{'tlx.storage_alias_spec' survived the lowering. Fix: run tlx-size-definition, tlx-buffer-offset and tlx-storage-alias-allocation first}}
    %spec = "tlx.storage_alias_spec"() {storage = "smem"} : () -> !tlx.storage_alias_spec<smem>
    %a = "tlx.storage_alias_local_alloc"(%spec) : (!tlx.storage_alias_spec<smem>) -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    "tt.return"() : () -> ()
  }) : () -> ()
}) : () -> ()

// -----

// A spec value yielded out of an scf.execute_region: the region op is not a tlx op, but its result still
// has a tlx type; the error is at that op (found before the tlx op nested in it).
"builtin.module"() ({
  "tt.func"() <{function_type = () -> (), sym_name = "tlx_type_left"}> ({
    // expected-error @+1 {{a value of type !tlx.storage_alias_spec<smem> survived the lowering}}
    %s = "scf.execute_region"() ({
      %spec = "tlx.storage_alias_spec"() {storage = "smem"} : () -> !tlx.storage_alias_spec<smem>
      "scf.yield"(%spec) : (!tlx.storage_alias_spec<smem>) -> ()
    }) : () -> !tlx.storage_alias_spec<smem>
    "tt.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
