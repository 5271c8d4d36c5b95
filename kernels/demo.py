"""Main job of the README: compile a bundled Gluon kernel for sm_100a on the CPU and print its memory use.

(Skeleton: the storage_alias_spec version replaces this kernel once the frontend lands.)
"""
import triton
from triton.backends.compiler import GPUTarget
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon._runtime import GluonASTSource


@gluon.jit
def demo_kernel(x_ptr):
    layout: gl.constexpr = gl.NVMMASharedLayout.get_default_for([64, 64], gl.float32)
    smem = gl.allocate_shared_memory(gl.float32, [2, 64, 64], layout)
    blocked: gl.constexpr = gl.BlockedLayout([1, 1], [1, 32], [4, 1], [1, 0])
    v = smem.index(1).load(blocked)
    offs = gl.arange(0, 64, layout=gl.SliceLayout(1, blocked))
    gl.store(x_ptr + offs, gl.sum(v, axis=1))


def main():
    src = GluonASTSource(demo_kernel, {"x_ptr": "*fp32"}, {})
    k = triton.compile(src, target=GPUTarget("cuda", 100, 32))
    print(f"demo_kernel sm_100a: shared memory {k.metadata.shared} bytes")


if __name__ == "__main__":
    main()
