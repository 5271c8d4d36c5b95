# issue 12, item 6: Triton 3.6-3.8 abort the whole process on .slice() along the buffer dimension of the
# [num, M, N] descriptor (3.9 compiles it, and the lowering then refused the whole-descriptor use).
# target: 90
# expect: error select one buffer first: a.index(i).slice(...)
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
import tlx_alias.language as tlx


@gluon.jit
def kernel(x_ptr):
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    a = tlx.local_alloc((64, 64), gl.float16, 2, tlx.storage_kind.smem, reuse=spec)
    BL: gl.constexpr = gl.BlockedLayout([1, 1], [1, 32], [4, 1], [1, 0])
    x = a.slice(1, 1, dim=0).index(0).load(BL)  # @bad
    gl.store(x_ptr + gl.arange(0, 64, layout=gl.SliceLayout(1, BL)), gl.sum(x.to(gl.float32), axis=1))
