# issue 12, item 2: when Gluon removed every leaf of a tree (nothing uses them), a too-small buffer_size_bytes
# compiled silently: the tree and the spec's facts were only on the (dead) allocations.
# target: 90
# expect: error too small
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
import tlx_alias.language as tlx


@gluon.jit
def kernel(x_ptr):
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem, buffer_size_bytes=1024)
    a = tlx.local_alloc((32, 32), gl.float16, 2, tlx.storage_kind.smem, reuse=spec)
    b = tlx.local_alloc((32, 32), gl.float16, 2, tlx.storage_kind.smem, reuse=spec)
    spec.set_buffer_overlap(tlx.reuse_group(a, b, group_type=tlx.reuse_group_type.distinct))  # @bad
    gl.store(x_ptr, 1.0)
