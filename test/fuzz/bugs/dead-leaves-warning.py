# issue 12, item 2: a spec whose allocations Gluon all removed lost its warnings (nothing reached the plugin);
# now "storage_alias_spec has no allocation left" at the spec's line.
# target: 90
# expect: warning
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
import tlx_alias.language as tlx


@gluon.jit
def kernel(x_ptr):
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)  # @bad
    a = tlx.local_alloc((32, 32), gl.float16, 2, tlx.storage_kind.smem, reuse=spec)
    spec.set_buffer_overlap(tlx.reuse_group(a))
    gl.store(x_ptr, 1.0)
