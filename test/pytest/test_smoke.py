"""The ground the project stands on: bindings provider, Python passes, CPU compile of Gluon."""
import pytest

from tlx_alias import _mlir


def test_bindings_run_a_python_pass():
    ctx = _mlir.new_context()
    m = _mlir.ir.Module.parse('"tt.func"() ({ "tt.return"() : () -> () }) '
                              '{sym_name = "f", function_type = () -> ()} : () -> ()', ctx)
    seen = []
    pm = _mlir.passmanager.PassManager.parse("builtin.module()", ctx)
    pm.add(lambda op, p: seen.append(op.name), name="tlx-probe")
    pm.run(m.operation)
    assert seen == ["builtin.module"]


def test_gluon_compiles_for_hopper_on_cpu():
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.experimental import gluon
    from triton.experimental.gluon import language as gl
    from triton.experimental.gluon._runtime import GluonASTSource

    @gluon.jit
    def kernel(x_ptr):
        layout: gl.constexpr = gl.NVMMASharedLayout.get_default_for([64, 64], gl.float32)
        smem = gl.allocate_shared_memory(gl.float32, [2, 64, 64], layout)
        blocked: gl.constexpr = gl.BlockedLayout([1, 1], [1, 32], [4, 1], [1, 0])
        v = smem.index(1).load(blocked)
        offs = gl.arange(0, 64, layout=gl.SliceLayout(1, blocked))
        gl.store(x_ptr + offs, gl.sum(v, axis=1))

    src = GluonASTSource(kernel, {"x_ptr": "*fp32"}, {})
    compiled = triton.compile(src, target=GPUTarget("cuda", 90, 32))
    assert compiled.metadata.shared == 2 * 64 * 64 * 4


def test_bindings_context_keeps_triton_ops_verbatim():
    """Upstream's own (newer) gpu dialect would print `gpu.barrier` with a `scope` Triton cannot parse."""
    ctx = _mlir.new_context()
    text = '"builtin.module"() ({\n  "gpu.barrier"() : () -> ()\n}) : () -> ()'
    m = _mlir.ir.Module.parse(text, ctx)
    assert m.operation.get_asm(print_generic_op_form=True).strip() == text
