# RUN: %PYTHON %s 2>&1 | FileCheck %s
# The bindings provider runs a Python-defined pass over Triton IR parsed as unregistered ops.
from tlx_alias import _mlir

ctx = _mlir.new_context()
m = _mlir.ir.Module.parse(
    '"tt.func"() ({ "ttg.local_alloc"() : () -> !ttg.memdesc<2x64xf32> loc("k.py":7:3)\n'
    ' "tt.return"() : () -> () }) {sym_name = "k", function_type = () -> ()} : () -> ()', ctx)


def count_allocs(op, pass_):
    n = 0
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                for r in inner.regions:
                    for b in r.blocks:
                        n += sum(1 for o in b.operations if o.name == "ttg.local_alloc")
    print("allocs:", n)


pm = _mlir.passmanager.PassManager.parse("builtin.module()", ctx)
pm.add(count_allocs, name="count-allocs")
pm.run(m.operation)
# CHECK: allocs: 1
print(m.operation.get_asm(print_generic_op_form=True, enable_debug_info=True))
# CHECK: "ttg.local_alloc"() : () -> !ttg.memdesc<2x64xf32> loc([[L:#loc[0-9]*]])
# CHECK: [[L]] = loc("k.py":7:3)
