# found by test/fuzz/fuzz_misuse.py (non_power_of_two_smem_shape): an SMEM buffer of 96 x 64 ended in Gluon's
# own error from inside its layout code (not a TlxAliasError); with an explicit layout that reaches Triton's
# toLinearLayout, DESIGN §4 reports an abort. Now an error at the local_alloc line saying what to pad to.
# target: 90
# expect: error pad the tile to [128, 64]
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
import tlx_alias.language as tlx


@gluon.jit
def kernel(x_ptr):
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    a = tlx.local_alloc((96, 64), gl.float16, 3, tlx.storage_kind.smem, reuse=spec)  # @bad
    a.index(0).store(gl.full([96, 64], 0, gl.float16, gl.BlockedLayout([1, 1], [1, 32], [4, 1], [1, 0])))
