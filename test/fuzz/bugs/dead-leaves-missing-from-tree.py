# issue 12, item 2: when Gluon removed every leaf of a tree (nothing uses them), an allocation of the spec that
# is missing from the tree compiled silently: the tree was only on the (dead) leaves.
# target: 90
# expect: error is missing from its reuse tree
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
import tlx_alias.language as tlx


@gluon.jit
def kernel(x_ptr):
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    a = tlx.local_alloc((32, 32), gl.float16, 2, tlx.storage_kind.smem, reuse=spec)
    b = tlx.local_alloc((32, 32), gl.float16, 2, tlx.storage_kind.smem, reuse=spec)  # @bad
    spec.set_buffer_overlap(tlx.reuse_group(a))
    BL: gl.constexpr = gl.BlockedLayout([1, 1], [1, 32], [4, 1], [1, 0])
    b.index(1).store(gl.full([32, 32], 0, gl.float16, BL))
