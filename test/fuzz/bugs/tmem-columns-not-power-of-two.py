# issue 12, item 1: a TMEM spec of 3 x 32 = 96 columns crashed the compile (Triton refused a backing tmem_alloc of
# blockN = 96, the user saw a BridgeError traceback and a temporary file was left behind).
# target: 100
# expect: ok
# views: {"acc": [0, 32, 64]}
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
import tlx_alias.language as tlx
from tlx_alias import _triton as compat


@gluon.jit
def kernel(x_ptr):
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.tmem)
    acc = tlx.local_alloc((128, 32), gl.float32, 3, tlx.storage_kind.tmem, reuse=spec)
    spec.set_buffer_overlap(tlx.reuse_group(acc))
    rl: gl.constexpr = compat.tmem_reg_layout(gl.float32, [128, 32], acc.type.layout, 4)
    for i in range(3):
        acc.index(i).store(gl.full([128, 32], 1.0, gl.float32, rl))
