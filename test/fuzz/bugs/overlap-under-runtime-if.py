# issue 12, item 3: set_buffer_overlap inside a runtime `if` was applied unconditionally, silently.
# target: 90
# expect: error runtime control flow
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
import tlx_alias.language as tlx


@gluon.jit
def kernel(x_ptr):
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    a = tlx.local_alloc((32, 32), gl.float16, 2, tlx.storage_kind.smem, reuse=spec)
    if gl.program_id(0) == 0:
        spec.set_buffer_overlap(tlx.reuse_group(a))  # @bad
    a.index(0).store(gl.full([32, 32], 0, gl.float16, gl.BlockedLayout([1, 1], [1, 32], [4, 1], [1, 0])))
