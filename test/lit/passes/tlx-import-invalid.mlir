// RUN: tlx-opt %s --split-input-file --verify-diagnostics --pass tlx-import
// Every diagnostic of tlx-import. Its input is what the frontend records: the module attribute `tlx.specs`
// (JSON) and the allocations tagged `tlx.spec` / `tlx.alloc`. A record's `src` is a kernel line
// ("k.py:N"); --verify-diagnostics compares line numbers only, so each `src` a diagnostic is reported at
// names a line of this file: the tagged op it stands for, or (for something Gluon removed, which has no op)
// the line of the expected-* comment itself.

// local_alloc(reuse=<descriptor>) where the descriptor is one buffer of another allocation (a
// ttg.memdesc_index result): the frontend tagged the op behind the descriptor, and tlx-import rejects it at
// the line of the reuse.
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 32}>
#smem = #ttg.shared_memory
"builtin.module"() ({
  "tt.func"() <{function_type = () -> (), sym_name = "reuse_of_an_index"}> ({
    %c0 = "arith.constant"() <{value = 0 : i32}> : () -> i32
    %x = "ttg.local_alloc"() : () -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    // expected-error @+1 {{the buffer reused at k.py:18 is the result of 'ttg.memdesc_index', not an allocation}}
    %y = "ttg.memdesc_index"(%x, %c0) {tlx.spec = "spec0", tlx.alloc = "a0"} : (!ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>, i32) -> !ttg.memdesc<64x64xf32, #shared, #smem, mutable>
    "tt.return"() : () -> ()
  }) : () -> ()
}) {tlx.specs = "{\"spec0\": {\"storage\": \"smem\", \"size\": null, \"src\": \"k.py:1\", \"tree\": null, \"tree_src\": null, \"implicit\": {}, \"members\": {\"a0\": {\"name\": \"y\", \"src\": \"k.py:18\", \"type\": \"!ttg.memdesc<64x64xf32, #shared, #smem, mutable>\"}}}}"} : () -> ()

// -----

// An allocation tagged for a spec the module's record does not hold (here the record is empty): tlx-import
// stops at the allocation.
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 32}>
#smem = #ttg.shared_memory
"builtin.module"() ({
  "tt.func"() <{function_type = () -> (), sym_name = "unrecorded_spec"}> ({
    // expected-error @+1 {{allocation a0 is tagged for spec7 but the module has no record of that spec (attribute tlx.specs)}}
    %a = "ttg.local_alloc"() {tlx.spec = "spec7", tlx.alloc = "a0"} : () -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    "tt.return"() : () -> ()
  }) : () -> ()
}) {tlx.specs = "{}"} : () -> ()

// -----

// A @gluon.jit helper that allocates from a spec, traced once and called twice: two allocations carry the
// same id, so tlx-import cannot tell which one the record describes; the error is at the second.
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 32}>
#smem = #ttg.shared_memory
"builtin.module"() ({
  "tt.func"() <{function_type = () -> (), sym_name = "helper_called_twice"}> ({
    %a = "ttg.local_alloc"() {tlx.spec = "spec0", tlx.alloc = "a0"} : () -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    // expected-error @+1 {{allocation a0 was traced once and instantiated twice}}
    %b = "ttg.local_alloc"() {tlx.spec = "spec0", tlx.alloc = "a0"} : () -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    "tt.return"() : () -> ()
  }) : () -> ()
}) {tlx.specs = "{\"spec0\": {\"storage\": \"smem\", \"size\": null, \"src\": \"k.py:1\", \"tree\": null, \"tree_src\": null, \"implicit\": {}, \"members\": {\"a0\": {\"name\": \"a\", \"src\": \"k.py:2\", \"type\": \"!ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>\"}}}}"} : () -> ()

// -----

// Allocations of one spec at two nesting levels (the second inside an scf.if): an error at the op holding the
// nested one (the kernel's `if`: where a helper that allocates was called), naming the allocation's line too.
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 32}>
#smem = #ttg.shared_memory
"builtin.module"() ({
  "tt.func"() <{function_type = (i1) -> (), sym_name = "members_in_two_regions"}> ({
  ^bb0(%cond: i1):
    %a = "ttg.local_alloc"() {tlx.spec = "spec0", tlx.alloc = "a0"} : () -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    // expected-error @+1 {{allocations of one storage_alias_spec are in different regions: the one at -:64 is inside the 'scf.if' at -:63}}
    "scf.if"(%cond) ({
      %b = "ttg.local_alloc"() {tlx.spec = "spec0", tlx.alloc = "a1"} : () -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
      "scf.yield"() : () -> ()
    }, {
      "scf.yield"() : () -> ()
    }) : (i1) -> ()
    "tt.return"() : () -> ()
  }) : () -> ()
}) {tlx.specs = "{\"spec0\": {\"storage\": \"smem\", \"size\": null, \"src\": \"k.py:1\", \"tree\": null, \"tree_src\": null, \"implicit\": {}, \"members\": {\"a0\": {\"name\": \"a\", \"src\": \"k.py:2\", \"type\": \"!ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>\"}, \"a1\": {\"name\": \"b\", \"src\": \"k.py:3\", \"type\": \"!ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>\"}}}}"} : () -> ()

// -----

// A spec with two reuse_group trees (built at k.py:20 and k.py:21) and no set_buffer_overlap saying which
// one is the layout: an error at the spec's line (its record's src is this case's first allocation).
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 32}>
#smem = #ttg.shared_memory
"builtin.module"() ({
  "tt.func"() <{function_type = () -> (), sym_name = "two_implicit_trees"}> ({
    // expected-error @+1 {{storage_alias_spec has 2 separate reuse_group trees (built at k.py:20, k.py:21) and no set_buffer_overlap}}
    %a = "ttg.local_alloc"() {tlx.spec = "spec0", tlx.alloc = "a0"} : () -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    %b = "ttg.local_alloc"() {tlx.spec = "spec0", tlx.alloc = "a1"} : () -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    "tt.return"() : () -> ()
  }) : () -> ()
}) {tlx.specs = "{\"spec0\": {\"storage\": \"smem\", \"size\": null, \"src\": \"k.py:82\", \"tree\": null, \"tree_src\": null, \"implicit\": {\"t0\": {\"kind\": \"shared\", \"group_size\": 1, \"src\": \"k.py:20\", \"children\": [\"a0\"]}, \"t1\": {\"kind\": \"shared\", \"group_size\": 1, \"src\": \"k.py:21\", \"children\": [\"a1\"]}}, \"members\": {\"a0\": {\"name\": \"a\", \"src\": \"k.py:82\", \"type\": \"!ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>\"}, \"a1\": {\"name\": \"b\", \"src\": \"k.py:83\", \"type\": \"!ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>\"}}}}"} : () -> ()

// -----

// A spec whose only buffer is never used: Gluon removed the allocation, so the body holds no tagged op. The
// spec is recreated (reserving nothing) with a warning at the spec's line, its record's src: this line.
// expected-warning {{storage_alias_spec has no allocation left: every buffer allocated from it is unused and Gluon removed it; it reserves nothing}}
"builtin.module"() ({
  "tt.func"() <{function_type = () -> (), sym_name = "every_member_dead"}> ({
    "tt.return"() : () -> ()
  }) : () -> ()
}) {tlx.specs = "{\"spec0\": {\"storage\": \"smem\", \"size\": null, \"src\": \"k.py:92\", \"tree\": null, \"tree_src\": null, \"implicit\": {}, \"members\": {\"a0\": {\"name\": \"a\", \"src\": \"k.py:92\", \"type\": \"!ttg.memdesc<2x64x64xf32, #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>, #ttg.shared_memory, mutable>\"}}}}"} : () -> ()

// -----

// One of two buffers is never used (b: in the record, not in the body): Gluon removed it, tlx-import
// recreates it so the layout keeps its place, and warns at b's line, its record's src: this line.
// expected-warning {{buffer 'b' is never used, so Gluon removed it before lowering; the layout keeps its place}}
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 32}>
#smem = #ttg.shared_memory
"builtin.module"() ({
  "tt.func"() <{function_type = () -> (), sym_name = "one_member_dead"}> ({
    %a = "ttg.local_alloc"() {tlx.spec = "spec0", tlx.alloc = "a0"} : () -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    "tt.return"() : () -> ()
  }) : () -> ()
}) {tlx.specs = "{\"spec0\": {\"storage\": \"smem\", \"size\": null, \"src\": \"k.py:1\", \"tree\": {\"kind\": \"distinct\", \"group_size\": 1, \"src\": \"k.py:3\", \"children\": [\"a0\", \"a1\"]}, \"tree_src\": \"k.py:3\", \"implicit\": {}, \"members\": {\"a0\": {\"name\": \"a\", \"src\": \"k.py:2\", \"type\": \"!ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>\"}, \"a1\": {\"name\": \"b\", \"src\": \"k.py:103\", \"type\": \"!ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>\"}}}}"} : () -> ()

// -----

// A spec nothing allocates from: no tlx-import warning (tlx-size-definition says it reserves nothing; "no
// allocation left ... Gluon removed it" would be false: there never was one).
"builtin.module"() ({
  "tt.func"() <{function_type = () -> (), sym_name = "no_member_at_all"}> ({
    "tt.return"() : () -> ()
  }) : () -> ()
}) {tlx.specs = "{\"spec0\": {\"storage\": \"smem\", \"size\": null, \"src\": \"k.py:1\", \"tree\": null, \"tree_src\": null, \"implicit\": {}, \"members\": {}}}"} : () -> ()
