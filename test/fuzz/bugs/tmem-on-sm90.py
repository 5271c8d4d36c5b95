# found by test/fuzz/fuzz_misuse.py (tmem_on_hopper): a TMEM allocation in a kernel compiled for sm_90a ended,
# on Triton 3.9, in "RuntimeError: error encountered during parsing" (Triton's verifier: "'ttng.tmem_alloc' op
# requires tcgen05 support", printed to stderr); on 3.6 in a P6 violation at the spec. Now an error at the
# local_alloc line.
# target: 90
# expect: error tensor memory does not exist on sm_90
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
import tlx_alias.language as tlx
from tlx_alias import _triton as compat


@gluon.jit
def kernel(x_ptr):
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.tmem)
    a = tlx.local_alloc((128, 32), gl.float32, 2, tlx.storage_kind.tmem, reuse=spec)  # @bad
    a.index(0).store(gl.full([128, 32], 0, gl.float32, compat.tmem_reg_layout(gl.float32, [128, 32], a.type.layout, 4)))
