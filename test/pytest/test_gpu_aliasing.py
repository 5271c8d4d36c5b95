"""On a GPU: buffers placed by the plugin really alias the bytes the reuse tree says (skipped without CUDA).

Each kernel writes fp32 tiles through one view and reads them back through another view of the same
spec; the host predicts every read by reinterpreting the written bytes with torch. Unswizzled layouts
make the byte order of a tile plain row-major, so the prediction is a reshape of a byte buffer.

Reading one view's bytes through another is how these kernels show the aliasing, and what P7 calls a read
of a buffer another one wrote over (a violation that stops a compile): the proof runs with
TLX_ALIAS_PROOF=warn here (test_tlx_layouts_gluon.py checks on the CPU that P7 warns exactly there).
"""
import pytest
import torch
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from tlx_alias import _triton as compat

import tlx_alias.language as tlx

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


@pytest.fixture(autouse=True)
def _proof_warns(monkeypatch):
    monkeypatch.setenv("TLX_ALIAS_PROOF", "warn")   # the cross-view reads are on purpose (module doc)

ROWS: gl.constexpr = gl.BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0])
PLAIN: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 1, [1, 0])


@gluon.jit
def write_f32_read_bf16_kernel(x_ptr, out_ptr, TREE: gl.constexpr):
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    f32 = tlx.local_alloc((64, 64), gl.float32, 2, tlx.storage_kind.smem, reuse=spec, layout=PLAIN)
    b16 = tlx.local_alloc((64, 64), gl.bfloat16, 4, tlx.storage_kind.smem, reuse=spec, layout=PLAIN)
    if TREE:
        spec.set_buffer_overlap(tlx.reuse_group(
            f32, tlx.reuse_group(b16, group_size=2)))
    r = gl.arange(0, 64, layout=gl.SliceLayout(1, ROWS))
    c = gl.arange(0, 64, layout=gl.SliceLayout(0, ROWS))
    tile = r[:, None] * 64 + c[None, :]
    for i in gl.static_range(2):
        f32.index(i).store(gl.load(x_ptr + i * 4096 + tile))
    compat.barrier()
    for j in range(4):
        gl.store(out_ptr + j * 4096 + tile, b16.index(j).load(ROWS))


@gluon.jit
def distinct_pair_kernel(x_ptr, out_ptr):
    # shared(qk, distinct(p, alpha)): p[i] at 16 KiB * i, alpha[i] right after p[i] (seed 001 phase 5).
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    qk = tlx.local_alloc((64, 64), gl.float32, 2, tlx.storage_kind.smem, reuse=spec, layout=PLAIN)
    p = tlx.local_alloc((64, 64), gl.bfloat16, 2, tlx.storage_kind.smem, reuse=spec, layout=PLAIN)
    alpha = tlx.local_alloc((64, 64), gl.bfloat16, 2, tlx.storage_kind.smem, reuse=spec, layout=PLAIN)
    spec.set_buffer_overlap(tlx.reuse_group(
        qk, tlx.reuse_group(p, alpha, group_type=tlx.reuse_group_type.distinct)))
    r = gl.arange(0, 64, layout=gl.SliceLayout(1, ROWS))
    c = gl.arange(0, 64, layout=gl.SliceLayout(0, ROWS))
    tile = r[:, None] * 64 + c[None, :]
    for i in range(2):
        qk.index(i).store(gl.load(x_ptr + i * 4096 + tile))
    compat.barrier()
    for i in range(2):
        gl.store(out_ptr + i * 8192 + tile, p.index(i).load(ROWS))
        gl.store(out_ptr + i * 8192 + 4096 + tile, alpha.index(i).load(ROWS))


def assert_same_bits(out, want):
    """Compare raw bits: fp32 mantissa halves read as bf16 are often NaN patterns, and NaN != NaN."""
    torch.testing.assert_close(out.view(torch.int16), want.view(torch.int16), rtol=0, atol=0)


def _bf16_tiles_of(x):
    """The bf16 64x64 tiles that cover x's bytes, in address order."""
    return x.contiguous().view(torch.bfloat16).reshape(-1, 64, 64)


@pytest.mark.parametrize("tree", [False, True])
def test_bf16_views_read_the_bytes_of_fp32_views(tree):
    x = torch.randn(2, 64, 64, device="cuda", dtype=torch.float32)
    out = torch.full((4, 64, 64), float("nan"), device="cuda", dtype=torch.bfloat16)
    write_f32_read_bf16_kernel[(1,)](x, out, TREE=tree)
    assert_same_bits(out, _bf16_tiles_of(x))


def test_distinct_children_sit_side_by_side_inside_each_buffer_index():
    x = torch.randn(2, 64, 64, device="cuda", dtype=torch.float32)
    out = torch.full((2, 2, 64, 64), float("nan"), device="cuda", dtype=torch.bfloat16)
    distinct_pair_kernel[(1,)](x, out)
    want = _bf16_tiles_of(x).reshape(2, 2, 64, 64)      # per index: p = first 8 KiB, alpha = next 8 KiB
    assert_same_bits(out, want)
