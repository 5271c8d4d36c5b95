"""Gluon kernels written with the TLX API, compiled for sm_90a / sm_100a on the CPU through the plugin."""
import os
import re

import pytest
from ir_text import smem_backing
import triton
from triton.backends.compiler import GPUTarget
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon._runtime import GluonASTSource
from triton.experimental.gluon.language.nvidia.blackwell import tcgen05_mma
from triton.experimental.gluon.language.nvidia.hopper import fence_async_shared, mbarrier
from tlx_alias import _triton as compat
import tlx_alias.language as tlx
from tlx_alias.kernels.demo import fa_tmem_demo_kernel, lowered_views
from tlx_alias.errors import TlxAliasError, TlxAliasWarning

HOPPER = GPUTarget("cuda", 90, 32)
BLACKWELL = GPUTarget("cuda", 100, 32)


pytestmark = pytest.mark.usefixtures("plugin")


def compile_kernel(fn, signature, constexprs=None, target=HOPPER):
    constexprs = constexprs or {}
    sig = dict(signature, **{k: "constexpr" for k in constexprs})
    return triton.compile(GluonASTSource(fn, sig, constexprs), target=target)


BLOCKED: gl.constexpr = gl.BlockedLayout([1, 1], [1, 32], [4, 1], [1, 0])


@gluon.jit
def two_views_kernel(out_ptr, TREE: gl.constexpr):
    # A 2-buffer fp32 view and a 4-buffer bf16 view of the same 32 KiB.
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    f32 = tlx.local_alloc((64, 64), gl.float32, 2, tlx.storage_kind.smem, reuse=spec)
    b16 = tlx.local_alloc((64, 64), gl.bfloat16, 4, tlx.storage_kind.smem, reuse=spec)
    if TREE:
        spec.set_buffer_overlap(tlx.reuse_group(f32, tlx.reuse_group(b16, group_size=2)))
    offs = gl.arange(0, 64, layout=gl.SliceLayout(1, BLOCKED))
    for i in range(4):
        x = b16.index(i).load(BLOCKED).to(gl.float32)
        y = f32.index(i % 2).load(BLOCKED)
        gl.store(out_ptr + i * 64 + offs, gl.sum(x + y, axis=1))


@pytest.mark.parametrize("tree", [False, True])
def test_two_views_share_one_allocation_on_hopper(tree):
    k = compile_kernel(two_views_kernel, {"out_ptr": "*fp32"}, {"TREE": tree})
    ttgir = k.asm["ttgir"]
    assert len(re.findall(r"ttg\.local_alloc", ttgir)) == 1
    assert smem_backing(ttgir) == [32768]
    assert k.metadata.shared == 32768          # the larger view's bytes, not 32768 + 32768
    types = {name: ty for name, _, ty in lowered_views(ttgir)}
    assert types["f32"].startswith("!ttg.memdesc<2x64x64xf32")
    assert types["b16"].startswith("!ttg.memdesc<4x64x64xbf16")
    assert "tlx." not in re.sub(r'tlx\.(\w+) = ("[^"]*"|\{[^{}]*\})', "", ttgir).replace("tlx.index_rewrite", "")


def test_views_that_only_read_shared_bytes_prove_p7(recwarn):
    """two_views_kernel only reads: its views meet on the shared bytes, no pair needs ordering, and P7 proves it
    (views that met only to read are not "the sharing was never exercised", which is "cannot prove")."""
    compile_kernel(two_views_kernel, {"out_ptr": "*fp32"}, {"TREE": True})
    p7 = [str(w.message) for w in recwarn if issubclass(w.category, TlxAliasWarning) and "P7" in str(w.message)]
    assert not p7, p7


def test_seed000_fa_tree_on_blackwell():
    """Hand calculation (BM=BN=128, S=2, NUM=2): qk 128 cols, p 128x64 bf16 packed = 32 cols,
    alpha/l/m 1 col. distinct = 2*32 + 3 = 67 <= 128 -> 128 cols per buffer index, 2 indices = 256."""
    k = compile_kernel(fa_tmem_demo_kernel, {"out_ptr": "*fp32"}, {"BM": 128, "BN": 128, "S": 2, "NUM": 2},
                       target=BLACKWELL)
    assert k.metadata.tmem_size == 256
    views = {name: (place, ty) for name, place, ty in lowered_views(k.asm["ttgir"])}
    assert {n: (p.offset, p.stride) for n, (p, _) in views.items()} == {
        "qk": (0, 128), "p": (0, 128), "alpha": (64, 128), "l_i": (65, 128), "m_i": (66, 128)}
    p_place, p_type = views["p"]
    assert p_place.radices == (2,) and p_place.strides == (32,)
    assert p_type.startswith("!ttg.memdesc<8x128x64xbf16")
    # P's sub-tiles of one group are contiguous: [0] 0-31, [1] 32-63, [2] 128-159, [3] 160-191.
    assert [p_place.address(j) for j in range(4)] == [0, 32, 128, 160]


@gluon.jit
def distinct_overflow_kernel(out_ptr):
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem, buffer_size_bytes=1024)
    a = tlx.local_alloc((64, 64), gl.float32, 2, tlx.storage_kind.smem, reuse=spec)
    b = tlx.local_alloc((64, 64), gl.float32, 2, tlx.storage_kind.smem, reuse=spec)
    spec.set_buffer_overlap(tlx.reuse_group(a, b, group_type=tlx.reuse_group_type.distinct))  # LINE-OVERFLOW
    offs = gl.arange(0, 64, layout=gl.SliceLayout(1, BLOCKED))
    gl.store(out_ptr + offs, gl.sum(a.index(1).load(BLOCKED) + b.index(0).load(BLOCKED), axis=1))


def _line_of(marker):
    with open(__file__) as f:
        return next(n for n, line in enumerate(f, 1) if marker in line and "_line_of" not in line)


def test_layout_error_names_the_kernel_line():
    with pytest.raises(TlxAliasError) as info:
        compile_kernel(distinct_overflow_kernel, {"out_ptr": "*fp32"})
    err = info.value
    assert "not enough space for distinct allocations: need 32768 bytes, have 512 bytes" in str(err)
    assert err.src == f"{__file__}:{_line_of('LINE-OVERFLOW')}"


@gluon.jit
def live_siblings_kernel(out_ptr, CLOBBER: gl.constexpr):
    # x and y share their bytes (a `shared` group): x's tile must be dead before y is written
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    x = tlx.local_alloc((64, 64), gl.float32, 1, tlx.storage_kind.smem, reuse=spec)
    y = tlx.local_alloc((64, 64), gl.float32, 1, tlx.storage_kind.smem, reuse=spec)
    spec.set_buffer_overlap(tlx.reuse_group(x, y, group_type=tlx.reuse_group_type.shared))
    offs = gl.arange(0, 64, layout=gl.SliceLayout(1, BLOCKED))
    tile = gl.full((64, 64), 1.0, gl.float32, BLOCKED)
    x.index(0).store(tile)
    if CLOBBER:
        y.index(0).store(tile * 2.0)  # LINE-Y-OVER-X
        got = x.index(0).load(BLOCKED)  # LINE-X-READ
    else:
        got = x.index(0).load(BLOCKED)
        y.index(0).store(got * 2.0)
    gl.store(out_ptr + offs, gl.sum(got + y.index(0).load(BLOCKED), axis=1))


def test_a_buffer_read_after_its_shared_sibling_wrote_over_it_stops_the_compile():
    """x written, y written over x's bytes, x read: every access in program order, so no two race, and yet x
    returns y's data. P7 names the write and the read (it said "proven" before it followed what a read returns);
    reading x before y is written compiles."""
    compile_kernel(live_siblings_kernel, {"out_ptr": "*fp32"}, {"CLOBBER": False})
    with pytest.raises(TlxAliasError) as info:
        compile_kernel(live_siblings_kernel, {"out_ptr": "*fp32"}, {"CLOBBER": True})
    text = str(info.value)
    assert "[tlx-verify P7] violation" in text and "the two buffers were live at the same time" in text, text
    assert f"write of y by ttg.local_store at {__file__}:{_line_of('LINE-Y-OVER-X')}" in text, text
    assert f"read of x by ttg.local_load at {__file__}:{_line_of('LINE-X-READ')}" in text, text
    assert info.value.src == f"{__file__}:{_line_of('LINE-X-READ')}"


@gluon.jit
def restored_under_a_predicate_kernel(out_ptr, n, RESTORE_WHEN_NEGATIVE: gl.constexpr):
    # x and y share TMEM columns: x written and kept in registers, y written over it and read, then x's data
    # stored back under a predicate and read through x
    BM: gl.constexpr = 128
    BN: gl.constexpr = 64
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.tmem)
    x = tlx.local_alloc((BM, BN), gl.float32, 1, tlx.storage_kind.tmem, reuse=spec)
    y = tlx.local_alloc((BM, BN), gl.float32, 1, tlx.storage_kind.tmem, reuse=spec)
    spec.set_buffer_overlap(tlx.reuse_group(x, y, group_type=tlx.reuse_group_type.shared))
    reg: gl.constexpr = compat.tmem_reg_layout(gl.float32, [BM, BN], x.index(0).type.layout, 4)
    x.index(0).store(gl.full([BM, BN], 1.0, gl.float32, reg))
    keep = x.index(0).load(reg)
    y.index(0).store(keep * 2.0)
    total = gl.sum(y.index(0).load(reg), axis=1)
    if RESTORE_WHEN_NEGATIVE:
        x.index(0).store(keep, pred=n < 0)   # LINE-RESTORE-SKIPPED
    else:
        x.index(0).store(keep, pred=n > 0)
    got = x.index(0).load(reg)  # LINE-RESTORED-READ
    gl.store(out_ptr + gl.arange(0, BM, layout=gl.SliceLayout(1, reg)), gl.sum(got, axis=1) + total)


def test_a_store_its_predicate_skips_rewrites_nothing():
    """A `tmem_store` whose `pred` is false writes nothing: x's restore under `n < 0` leaves y's data in x's
    columns for every n P7 runs, and x then reads it (P7 took the skipped store as a rewrite: "proven"). Under
    `n > 0` the restore runs and the kernel compiles."""
    sig = {"out_ptr": "*fp32", "n": "i32"}
    compile_kernel(restored_under_a_predicate_kernel, sig, {"RESTORE_WHEN_NEGATIVE": False}, target=BLACKWELL)
    with pytest.raises(TlxAliasError) as info:
        compile_kernel(restored_under_a_predicate_kernel, sig, {"RESTORE_WHEN_NEGATIVE": True}, target=BLACKWELL)
    text = str(info.value)
    assert "x reads bytes that y wrote over" in text and "the two buffers were live at the same time" in text, text
    assert f"read of x by ttng.tmem_load at {__file__}:{_line_of('LINE-RESTORED-READ')}" in text, text


@gluon.jit
def rewritten_through_a_pun_kernel(out_ptr):
    # x and y share bytes; y is used and done, then x is written whole through an int16 view of its buffer
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    x = tlx.local_alloc((64, 64), gl.float16, 1, tlx.storage_kind.smem, reuse=spec)
    y = tlx.local_alloc((64, 64), gl.float16, 1, tlx.storage_kind.smem, reuse=spec)
    spec.set_buffer_overlap(tlx.reuse_group(x, y, group_type=tlx.reuse_group_type.shared))
    offs = gl.arange(0, 64, layout=gl.SliceLayout(1, BLOCKED))
    y.index(0).store(gl.full((64, 64), 2.0, gl.float16, BLOCKED))
    done = gl.sum(y.index(0).load(BLOCKED).to(gl.float32), axis=1)
    bits = compat.reinterpret(x.index(0), gl.int16, [64, 64], x.index(0).type.layout)
    bits.store(gl.full((64, 64), 15360, gl.int16, BLOCKED))          # 1.0 in fp16, as bits
    gl.store(out_ptr + offs, done + gl.sum(x.index(0).load(BLOCKED).to(gl.float32), axis=1))


def test_a_buffer_rewritten_through_a_reinterpret_of_itself_reads_its_own_data():
    """After y is done, x's bytes are written whole through an int16 `_reinterpret` of x's buffer, then read
    through x: x reads what it wrote (a pun), not y's data. No violation (P7 called it one before a write through
    a reinterpret counted as rewriting)."""
    compile_kernel(rewritten_through_a_pun_kernel, {"out_ptr": "*fp32"})


@gluon.jit
def rewritten_by_halves_kernel(out_ptr, HALVES: gl.constexpr, PERMUTED: gl.constexpr, THEN_PERMUTED: gl.constexpr):
    # x and y share bytes; y is used and done, then x is written again column half by column half (an epilogue
    # tile stored in sub-tiles) and read whole: x reads its own data only if the halves rewrote all of it
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    x = tlx.local_alloc((64, 64), gl.float32, 2, tlx.storage_kind.smem, reuse=spec)
    y = tlx.local_alloc((64, 64), gl.float32, 2, tlx.storage_kind.smem, reuse=spec)
    spec.set_buffer_overlap(tlx.reuse_group(x, y, group_type=tlx.reuse_group_type.shared))
    offs = gl.arange(0, 64, layout=gl.SliceLayout(1, BLOCKED))
    y.index(0).store(gl.full((64, 64), 2.0, gl.float32, BLOCKED))
    done = gl.sum(y.index(0).load(BLOCKED), axis=1)
    cols = gl.full((64, 32), 1.0, gl.float32, BLOCKED)
    rows = gl.full((32, 64), 1.0, gl.float32, BLOCKED)
    for h in gl.static_range(HALVES):
        if THEN_PERMUTED:      # a half, permuted: its elements are not followed through the permute
            x.index(0).slice(h * 32, 32, dim=1).permute((1, 0)).store(rows)  # LINE-HALF-THEN-PERMUTED
        elif PERMUTED:
            x.index(0).permute((1, 0)).slice(h * 32, 32, dim=1).store(cols)  # LINE-HALF-PERMUTED
        else:
            x.index(0).slice(h * 32, 32, dim=1).store(cols)  # LINE-HALF 
    got = x.index(0).load(BLOCKED)  # LINE-WHOLE-READ
    gl.store(out_ptr + offs, done + gl.sum(got, axis=1))


@pytest.mark.parametrize("permuted", [False, True])
def test_a_buffer_rewritten_by_slices_after_its_sibling_reads_its_own_data_only_if_they_cover_it(permuted):
    """Slices along an inner dim scatter their bytes over the tile (P7 does not place them), but their elements
    are known: two column halves rewrite every element, so x reads its own data (proven); one half leaves the
    other holding y's data, a violation (P7 took any slice as rewriting the whole tile: "proven" before).
    Halves of a permuted view rewrite it too; they are not mixed with halves of the unpermuted one."""
    sig = {"out_ptr": "*fp32"}
    compile_kernel(rewritten_by_halves_kernel, sig, {"HALVES": 2, "PERMUTED": permuted, "THEN_PERMUTED": False})
    with pytest.raises(TlxAliasError) as info:
        compile_kernel(rewritten_by_halves_kernel, sig, {"HALVES": 1, "PERMUTED": permuted, "THEN_PERMUTED": False})
    text = str(info.value)
    assert "the two buffers were live at the same time" in text, text
    line = _line_of('LINE-HALF-PERMUTED' if permuted else 'LINE-HALF ')
    assert f"the slices written again at {__file__}:{line} leave part of them" in text, text
    assert f"read of x by ttg.local_load at {__file__}:{_line_of('LINE-WHOLE-READ')}" in text, text


def test_a_rewrite_through_a_slice_p7_cannot_place_is_cannot_prove(monkeypatch):
    """Column halves, each permuted before the store: which elements of the tile they write is not followed, so
    whether x then reads y's data is not known: "cannot prove" with the reason (it was "proven")."""
    monkeypatch.setenv("TLX_ALIAS_PROOF", "strict")
    with pytest.raises(TlxAliasError) as info:
        compile_kernel(rewritten_by_halves_kernel, {"out_ptr": "*fp32"},
                       {"HALVES": 2, "PERMUTED": False, "THEN_PERMUTED": True})
    text = str(info.value)
    assert "[tlx-verify P7] cannot prove" in text, text
    assert f"wrote part of them again through a slice at {__file__}:{_line_of('LINE-HALF-THEN-PERMUTED')}" in text, text


@gluon.jit
def accumulate_over_scratch_kernel(out_ptr, n, SCRATCH_SHARES: gl.constexpr, ACC_FROM_MEMORY: gl.constexpr):
    # a TMEM accumulator and a scratch tile in one spec: shared, the scratch overwrites what the MMA adds to
    BM: gl.constexpr = 128
    BN: gl.constexpr = 64
    smem_layout: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BM, BN], gl.bfloat16)
    blocked: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
    a_s = gl.allocate_shared_memory(gl.bfloat16, [BM, BN], smem_layout)
    b_s = gl.allocate_shared_memory(gl.bfloat16, [BN, BN], smem_layout)
    a_s.store(gl.zeros([BM, BN], gl.bfloat16, blocked))
    b_s.store(gl.zeros([BN, BN], gl.bfloat16, blocked))
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.tmem)
    acc = tlx.local_alloc((BM, BN), gl.float32, 1, tlx.storage_kind.tmem, reuse=spec)
    scratch = tlx.local_alloc((BM, BN), gl.float32, 1, tlx.storage_kind.tmem, reuse=spec)
    if SCRATCH_SHARES:
        spec.set_buffer_overlap(tlx.reuse_group(acc, scratch, group_type=tlx.reuse_group_type.shared))
    else:
        spec.set_buffer_overlap(tlx.reuse_group(acc, scratch, group_type=tlx.reuse_group_type.distinct))
    reg: gl.constexpr = compat.tmem_reg_layout(gl.float32, [BM, BN], acc.index(0).type.layout, 4)
    bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(bar, count=1)
    fence_async_shared()
    total = gl.zeros([BM], gl.float32, gl.SliceLayout(1, reg))
    for j in range(n):
        scratch.index(0).store(gl.full([BM, BN], 1.0, gl.float32, reg))
        total += gl.sum(scratch.index(0).load(reg), axis=1)
        if ACC_FROM_MEMORY:   # a flag no run of P7 computes (it comes from global memory)
            tcgen05_mma(a_s, b_s, acc.index(0), use_acc=gl.load(out_ptr + j) > 0.0, mbarriers=[bar])  # LINE-ACC-LOADED
        else:
            tcgen05_mma(a_s, b_s, acc.index(0), use_acc=j > 0, mbarriers=[bar])  # LINE-ACCUMULATE
        mbarrier.wait(bar, j & 1)
    mbarrier.invalidate(bar)
    out = acc.index(0).load(reg)
    gl.store(out_ptr + gl.arange(0, BM, layout=gl.SliceLayout(1, reg)), gl.sum(out, axis=1) + total)


def test_an_accumulating_mma_over_a_sibling_that_wrote_its_columns_is_a_violation():
    """`use_acc=True` reads D: with the scratch tile sharing D's columns, each step from the second on adds to
    what the scratch wrote there. P7 names that read (it said "proven": D was a write only); distinct columns
    compile."""
    compile_kernel(accumulate_over_scratch_kernel, {"out_ptr": "*fp32", "n": "i32"},
                   {"SCRATCH_SHARES": False, "ACC_FROM_MEMORY": False},
                   target=BLACKWELL)
    with pytest.raises(TlxAliasError) as info:
        compile_kernel(accumulate_over_scratch_kernel, {"out_ptr": "*fp32", "n": "i32"},
                       {"SCRATCH_SHARES": True, "ACC_FROM_MEMORY": False},
                       target=BLACKWELL)
    text = str(info.value)
    assert "the two buffers were live at the same time" in text, text
    assert f"read of acc by ttng.tc_gen5_mma at {__file__}:{_line_of('LINE-ACCUMULATE')}" in text, text


def test_an_mma_whose_use_acc_no_run_computes_is_cannot_prove(monkeypatch):
    """Whether the MMA reads D decides whether D must still hold its own data; with `use_acc` loaded from global
    memory P7 cannot tell: "cannot prove" naming the MMA (it took such an MMA as writing D only: "proven")."""
    monkeypatch.setenv("TLX_ALIAS_PROOF", "strict")
    with pytest.raises(TlxAliasError) as info:
        compile_kernel(accumulate_over_scratch_kernel, {"out_ptr": "*fp32", "n": "i32"},
                       {"SCRATCH_SHARES": True, "ACC_FROM_MEMORY": True}, target=BLACKWELL)
    text = str(info.value)
    assert "[tlx-verify P7] cannot prove" in text, text
    assert (f"whether ttng.tc_gen5_mma at {__file__}:{_line_of('LINE-ACC-LOADED')} accumulates (its use_acc) cannot "
            "be computed by this run") in text, text


@gluon.jit
def padded_beside_spec_kernel(out_ptr):
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    a = tlx.local_alloc((64, 64), gl.float32, 2, tlx.storage_kind.smem, reuse=spec)
    padded: gl.constexpr = gl.PaddedSharedLayout.with_identity_for([[64, 64]], [64, 64], [1, 0])
    staging = gl.allocate_shared_memory(gl.float32, [64, 64], padded)  # LINE-PADDED
    offs = gl.arange(0, 64, layout=gl.SliceLayout(1, BLOCKED))
    staging.store(a.index(1).load(BLOCKED))
    gl.store(out_ptr + offs, gl.sum(staging.load(BLOCKED), axis=1))


def test_memory_the_proof_cannot_size_stops_the_compile_at_its_line():
    """A padded shared layout beside a spec: the proof cannot size its bytes (Triton pads inside and between
    buffers), so it proves nothing of the kernel and says so at that allocation, with the way out; it is not
    sized as unpadded and called proven (P6 did, on a kernel over the SM's limit)."""
    with pytest.raises(TlxAliasError) as info:
        compile_kernel(padded_beside_spec_kernel, {"out_ptr": "*fp32"})
    text = str(info.value)
    assert "cannot prove anything of this kernel" in text and "padded shared layout" in text, text
    assert "TLX_ALIAS_PROOF=off" in text, text
    assert info.value.src == f"{__file__}:{_line_of('LINE-PADDED')}"


@gluon.jit
def unused_leaf_kernel(out_ptr):
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    used = tlx.local_alloc((64, 64), gl.float32, 2, tlx.storage_kind.smem, reuse=spec)
    unused = tlx.local_alloc((64, 64), gl.float32, 2, tlx.storage_kind.smem, reuse=spec)  # LINE-UNUSED
    spec.set_buffer_overlap(tlx.reuse_group(used, unused, group_type=tlx.reuse_group_type.distinct))
    offs = gl.arange(0, 64, layout=gl.SliceLayout(1, BLOCKED))
    gl.store(out_ptr + offs, gl.sum(used.index(1).load(BLOCKED), axis=1))


def test_lowering_warning_points_at_the_kernel_line():
    """A leaf Gluon removed (nothing reads it) is a warning, shown at the line of its local_alloc."""
    with pytest.warns(TlxAliasWarning) as caught:
        k = compile_kernel(unused_leaf_kernel, {"out_ptr": "*fp32"})
    ours = [w for w in caught if issubclass(w.category, TlxAliasWarning)]
    assert ours and (ours[0].filename, ours[0].lineno) == (__file__, _line_of("LINE-UNUSED")), \
        [(w.filename, w.lineno, str(w.message)) for w in ours]
    assert "buffer 'unused' is never used, so Gluon removed it before lowering; the layout keeps its place" \
        in str(ours[0].message)
    # distinct(used, unused): the removed leaf keeps its 32 KiB, so `used` is where the tree says
    assert smem_backing(k.asm["ttgir"]) == [2 * 2 * 64 * 64 * 4] == [k.metadata.shared]


@gluon.jit
def legacy_reuse_kernel(out_ptr, NUM: gl.constexpr):
    base = gl.allocate_shared_memory(gl.float16, [2, 64, 64], gl.NVMMASharedLayout.get_default_for([64, 64],
                                                                                                  gl.float16))
    alias = tlx.local_alloc((64, 32), gl.float32, NUM, tlx.storage_kind.smem, reuse=base)
    offs = gl.arange(0, 64, layout=gl.SliceLayout(1, BLOCKED))
    x = base.index(1).load(BLOCKED).to(gl.float32)
    gl.store(out_ptr + offs, gl.sum(x, axis=1) + gl.sum(alias.index(NUM - 1).load(BLOCKED), axis=1))


def test_legacy_reuse_lowers_to_one_allocation_at_offset_0():
    """reuse=<descriptor> (deprecated) is a spec without a tree: one backing of the larger size, both at 0."""
    with pytest.warns(TlxAliasWarning, match="legacy alias"):
        k = compile_kernel(legacy_reuse_kernel, {"out_ptr": "*fp32"}, {"NUM": 2})
    assert smem_backing(k.asm["ttgir"]) == [2 * 64 * 64 * 2]          # 16 KiB, not 16 + 16
    views = {name: place for name, place, _ in lowered_views(k.asm["ttgir"])}
    assert {p.offset for p in views.values()} == {0} and len(views) == 2


def test_legacy_reuse_larger_than_the_buffer_is_an_error():
    with pytest.raises(Exception, match="needs 24576 bytes but the reused buffer"):
        compile_kernel(legacy_reuse_kernel, {"out_ptr": "*fp32"}, {"NUM": 3})


def test_a_compile_leaves_no_file_behind(tmp_path, monkeypatch):
    """Success, a layout error, and a lowering that Triton cannot parse back: nothing left in the temp dir."""
    import tempfile
    from tlx_alias import bridge
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    monkeypatch.setattr(tempfile, "tempdir", None)
    compile_kernel(fa_tmem_demo_kernel, {"out_ptr": "*fp32"}, {"BM": 128, "BN": 128, "S": 2, "NUM": 2},
                   target=BLACKWELL)
    with pytest.raises(TlxAliasError):
        compile_kernel(distinct_overflow_kernel, {"out_ptr": "*fp32"})
    real = bridge.to_triton
    monkeypatch.setattr(bridge, "to_triton", lambda m, aliases, ctx: real(m, {}, ctx))  # drop alias defs
    with pytest.raises(bridge.BridgeError, match="TLX_ALIAS_KEEP_IR"):
        compile_kernel(two_views_kernel, {"out_ptr": "*fp32"}, {"TREE": True})
    assert os.listdir(tmp) == []


@gluon.jit
def implicit_tree_kernel(out_ptr, TWO_TREES: gl.constexpr):
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    a = tlx.local_alloc((64, 64), gl.float32, 2, tlx.storage_kind.smem, reuse=spec)
    b = tlx.local_alloc((64, 64), gl.float32, 2, tlx.storage_kind.smem, reuse=spec)
    if TWO_TREES:
        tlx.reuse_group(a)
        tlx.reuse_group(b)
    else:
        tlx.reuse_group(a, b, group_type=tlx.reuse_group_type.distinct)  # LINE-IMPLICIT
    offs = gl.arange(0, 64, layout=gl.SliceLayout(1, BLOCKED))
    gl.store(out_ptr + offs, gl.sum(a.index(1).load(BLOCKED) + b.index(0).load(BLOCKED), axis=1))


def test_the_only_reuse_group_tree_is_the_layout():
    """No set_buffer_overlap: the one tree built over the spec's allocations lays them out (distinct)."""
    k = compile_kernel(implicit_tree_kernel, {"out_ptr": "*fp32"}, {"TWO_TREES": False})
    views = {name: place for name, place, _ in lowered_views(k.asm["ttgir"])}
    assert {n: p.offset for n, p in views.items()} == {"a": 0, "b": 16384}
    assert smem_backing(k.asm["ttgir"]) == [65536]


def test_two_separate_trees_need_set_buffer_overlap():
    with pytest.raises(TlxAliasError, match="2 separate reuse_group trees .* and no set_buffer_overlap"):
        compile_kernel(implicit_tree_kernel, {"out_ptr": "*fp32"}, {"TWO_TREES": True})


@gluon.jit
def all_dead_kernel(out_ptr, SIZE: gl.constexpr):
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem, buffer_size_bytes=SIZE)  # LINE-DEAD-SPEC
    a = tlx.local_alloc((64, 64), gl.float32, 2, tlx.storage_kind.smem, reuse=spec)
    b = tlx.local_alloc((64, 64), gl.float32, 2, tlx.storage_kind.smem, reuse=spec)
    spec.set_buffer_overlap(tlx.reuse_group(a, b, group_type=tlx.reuse_group_type.distinct))
    offs = gl.arange(0, 64, layout=gl.SliceLayout(1, BLOCKED))
    gl.store(out_ptr + offs, offs.to(gl.float32))


def test_a_spec_whose_allocations_are_all_unused_keeps_its_diagnostics():
    """Gluon removes every allocation (nothing reads them): the record on the module still reaches the
    lowering, so a too-small explicit size is an error and a fitting one a warning; nothing is reserved."""
    with pytest.raises(TlxAliasError, match="need 32768 bytes, have 4096 bytes per buffer"):
        compile_kernel(all_dead_kernel, {"out_ptr": "*fp32"}, {"SIZE": 8192})
    with pytest.warns(TlxAliasWarning, match="has no allocation left") as caught:
        k = compile_kernel(all_dead_kernel, {"out_ptr": "*fp32"}, {"SIZE": 65536})
    assert smem_backing(k.asm["ttgir"]) == [] and k.metadata.shared == 0
    ours = [w for w in caught if "no allocation left" in str(w.message)]
    assert (ours[0].filename, ours[0].lineno) == (__file__, _line_of("LINE-DEAD-SPEC"))


@gluon.jit
def _pick_buffer(a, b, c):
    if c:
        return a.index(1)
    else:
        return b.index(0)


@gluon.jit
def picked_buffer_kernel(out_ptr, n, SHARED: gl.constexpr):
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    a = tlx.local_alloc((64, 64), gl.float16, 2, tlx.storage_kind.smem, reuse=spec)
    b = tlx.local_alloc((64, 64), gl.float16, 2, tlx.storage_kind.smem, reuse=spec)
    if SHARED:   # b[0] is a[0]'s bytes
        spec.set_buffer_overlap(tlx.reuse_group(a, b, group_type=tlx.reuse_group_type.shared))
    else:
        spec.set_buffer_overlap(tlx.reuse_group(a, b, group_type=tlx.reuse_group_type.distinct))
    blocked: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
    x = gl.full([64, 64], 1.0, gl.float16, blocked)
    a.index(0).store(x)
    d = _pick_buffer(a, b, n > 200)   # LINE-PICK
    d.store(x + 1.0)
    y = a.index(0).load(blocked) + d.load(blocked)
    gl.store(out_ptr + gl.arange(0, 64, gl.SliceLayout(0, blocked)), gl.sum(y, axis=0).to(gl.float32))


def test_a_buffer_picked_in_a_helper_is_indexed_in_each_allocation():
    """Triton folds a helper returning `a.index(1)` or `b.index(0)` into `select(c, a, b).index(select(c, 1, 0))`:
    a select of whole allocations, which the lowering refused ("select one buffer with .index(i)", at the helper's
    `def`). Each allocation is now indexed first (`select(c, a[k], b[k])`, each index rewritten to its view's slot),
    and P7 follows the pick: with `b[0]` on `a[0]`'s bytes, the runs that take the second branch see it overwrite
    `a[0]` while it is live."""
    if compat.VERSION < (3, 8, 0):   # the helper's branches reach the lowering as cf.cond_br: refused, saying so
        with pytest.raises(TlxAliasError, match="unstructured control flow on this Triton.*pick the buffer in the "
                                                "kernel itself"):
            compile_kernel(picked_buffer_kernel, {"out_ptr": "*fp32", "n": "i32"}, {"SHARED": False})
        return
    compiled = compile_kernel(picked_buffer_kernel, {"out_ptr": "*fp32", "n": "i32"}, {"SHARED": False})
    ttgir = compiled.asm["ttgir"]
    assert re.search(r"= arith\.select %\S+, %\S+, %\S+ : !ttg\.memdesc<64x64xf16", ttgir), ttgir
    with pytest.raises(TlxAliasError) as info:
        compile_kernel(picked_buffer_kernel, {"out_ptr": "*fp32", "n": "i32"}, {"SHARED": True})
    text = str(info.value)
    assert "[tlx-verify P7] violation" in text and "the two buffers were live at the same time" in text, text


@gluon.jit
def _alloc_from(spec):
    return tlx.local_alloc((64, 64), gl.float16, 2, tlx.storage_kind.smem, reuse=spec)


@gluon.jit
def allocated_under_an_if_kernel(out_ptr, n):
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    a = _alloc_from(spec)
    blocked: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
    a.index(0).store(gl.full([64, 64], 1.0, gl.float16, blocked))
    if n > 0:  # LINE-IF
        b = _alloc_from(spec)
        b.index(0).store(a.index(0).load(blocked))
        gl.store(out_ptr + gl.arange(0, 64, gl.SliceLayout(0, blocked)), gl.sum(b.index(0).load(blocked), axis=0))


def test_an_allocation_under_an_if_names_the_if():
    """A helper that allocates from a spec, called at the top and under an `if`: the error named the helper's
    `local_alloc` line, the same for both calls; it names the `if` now, and the allocation's line."""
    with pytest.raises(TlxAliasError, match="allocations of one storage_alias_spec are in different regions") as info:
        compile_kernel(allocated_under_an_if_kernel, {"out_ptr": "*fp16", "n": "i32"})
    assert info.value.src == f"{__file__}:{_line_of('LINE-IF')}", str(info.value)
    assert f"inside the 'scf.if' at {__file__}:{_line_of('LINE-IF')}" in str(info.value)
