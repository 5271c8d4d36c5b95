# issue 12, item 4: a generous buffer_size_bytes was split evenly between the index groups and turned this valid
# tree into an alignment error. An explicit size only enlarges the backing: the offsets are the tree's.
# target: 90
# expect: ok
# views: {"a": [0, 4096], "b": [2048, 6144]}
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
import tlx_alias.language as tlx


@gluon.jit
def kernel(x_ptr):
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem, buffer_size_bytes=12288)
    a = tlx.local_alloc((32, 32), gl.float16, 2, tlx.storage_kind.smem, reuse=spec)
    b = tlx.local_alloc((32, 32), gl.float16, 2, tlx.storage_kind.smem, reuse=spec)
    spec.set_buffer_overlap(tlx.reuse_group(a, b, group_type=tlx.reuse_group_type.distinct))
    BL: gl.constexpr = gl.BlockedLayout([1, 1], [1, 32], [4, 1], [1, 0])
    for i in gl.static_range(2):
        a.index(i).store(gl.full([32, 32], 0, gl.float16, BL))
        b.index(i).store(gl.full([32, 32], 0, gl.float16, BL))
