# issue 12, item 6: Triton 3.6-3.9 abort the whole process (an assertion in combineCtaCgaWithShape) on .permute()
# of the [num, M, N] descriptor local_alloc(reuse=spec) returns; the frontend stops it at the call.
# target: 90
# expect: error select one buffer first: a.index(i).permute(...)
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
import tlx_alias.language as tlx


@gluon.jit
def kernel(x_ptr):
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    a = tlx.local_alloc((64, 64), gl.float16, 2, tlx.storage_kind.smem, reuse=spec)
    BL: gl.constexpr = gl.BlockedLayout([1, 1], [1, 32], [4, 1], [1, 0])
    x = a.permute((0, 2, 1)).index(0).load(BL)  # @bad
    gl.store(x_ptr + gl.arange(0, 64, layout=gl.SliceLayout(1, BL)), gl.sum(x.to(gl.float32), axis=1))
