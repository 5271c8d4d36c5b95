"""Layouts whose bytes are not their elements' (a helper's sweep of every layout and dtype of Gluon 3.9, sizes
compared with what Triton allocates for the same buffers without the plugin, 2026-11-27): the lowering either
sizes a buffer as Triton does or refuses it at its line. Both cases were half of Triton's size before; Triton's
own footprint check then refused the lowered module (an unexplained BridgeError), so no overlap was compiled."""
import re

import pytest
import triton
from triton.backends.compiler import GPUTarget
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon._runtime import GluonASTSource

import tlx_alias.language as tlx
from tlx_alias.errors import TlxAliasError

HOPPER = GPUTarget("cuda", 90, 32)

pytestmark = pytest.mark.usefixtures("plugin")


@gluon.jit
def two_buffers_kernel(out, LAYOUT: gl.constexpr, DTYPE: gl.constexpr, ROWS: gl.constexpr, COLS: gl.constexpr):
    """A buffer of LAYOUT, then a 64x64 fp16 tile after it in a distinct group: both written and read back."""
    blocked: gl.constexpr = gl.BlockedLayout([1, 1], [1, 32], [4, 1], [1, 0])
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    a = tlx.local_alloc((ROWS, COLS), DTYPE, 1, tlx.storage_kind.smem, reuse=spec, layout=LAYOUT)  # LINE-A
    b = tlx.local_alloc((64, 64), gl.float16, 1, tlx.storage_kind.smem, reuse=spec,
                        layout=gl.NVMMASharedLayout(128, 16))
    spec.set_buffer_overlap(tlx.reuse_group(a, b, group_type=tlx.reuse_group_type.distinct))
    ra = gl.arange(0, ROWS, gl.SliceLayout(1, blocked))[:, None] * COLS + gl.arange(0, COLS, gl.SliceLayout(0, blocked))[None, :]
    rb = gl.arange(0, 64, gl.SliceLayout(1, blocked))[:, None] * 64 + gl.arange(0, 64, gl.SliceLayout(0, blocked))[None, :]
    a.index(0).store(gl.load(out + ra).to(DTYPE))
    b.index(0).store(gl.load(out + rb).to(gl.float16))
    gl.store(out + ra, a.index(0).load(blocked).to(gl.float32) + b.index(0).load(blocked).to(gl.float32).sum())


def _compile(layout, dtype, rows, cols):
    src = GluonASTSource(two_buffers_kernel, {"out": "*fp32", "LAYOUT": "constexpr", "DTYPE": "constexpr",
                                              "ROWS": "constexpr", "COLS": "constexpr"},
                         {"LAYOUT": layout, "DTYPE": dtype, "ROWS": rows, "COLS": cols})
    return triton.compile(src, target=HOPPER)


def _offsets(kernel) -> dict:
    return {m.group(1): int(m.group(2)) for m in re.finditer(
        r'tlx.alloc = "(a\d)".*?tlx.view = \{[^}]*offset = (\d+)', kernel.asm["ttgir"])}


def test_an_fp4_padded_buffer_takes_a_byte_per_element():
    """64x128 packed bytes of 4-bit pairs with `fp4_padded`: Triton allocates 16384 bytes, not 8192, so the tile
    after it starts at 16384 (it started at 8192, inside the padded buffer)."""
    kernel = _compile(gl.NVMMASharedLayout(128, 8, fp4_padded=True), gl.uint8, 64, 128)
    assert _offsets(kernel) == {"a0": 0, "a1": 16384}
    plain = _compile(gl.NVMMASharedLayout(128, 8), gl.uint8, 64, 128)
    assert _offsets(plain) == {"a0": 0, "a1": 8192}


def test_a_linear_layout_with_a_broadcast_basis_is_refused_at_its_line():
    from triton.experimental.gluon.language._layouts import SharedLinearLayout
    layout = SharedLinearLayout([[0, 1], [0, 2], [0, 4], [0, 8], [1, 0], [2, 0], [4, 0], [0, 0]])
    with pytest.raises(TlxAliasError, match="linear shared layout with a zero \\(broadcast\\) offset basis") as info:
        _compile(layout, gl.float16, 8, 16)
    assert re.search(r"test_unusual_layouts.py:\d+", str(info.value))
