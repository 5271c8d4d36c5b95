"""P7 on the asynchronous ops around a spec: what it orders, and where it gives up rather than say "proven".

Each kernel is a case a helper session found by writing small kernels op by op in upstream's Gluon idioms
(2026-11-27): before the fix beside it, P7 said "proven" on a race, or gave a false alarm.
"""
import pytest
import triton
from triton.backends.compiler import GPUTarget
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon._runtime import GluonASTSource
from triton.experimental.gluon.language.nvidia.ampere import async_copy
from triton.experimental.gluon.language.nvidia.blackwell import tcgen05_commit, tcgen05_mma
from triton.experimental.gluon.language.nvidia.hopper import fence_async_shared, mbarrier, tma

import tlx_alias.language as tlx
from tlx_alias import _triton as compat
from tlx_alias.errors import TlxAliasError
from tlx_alias.kernels._common import tensordesc

HOPPER = GPUTarget("cuda", 90, 32)
BLACKWELL = GPUTarget("cuda", 100, 32)
SMEM, TMEM = tlx.storage_kind.smem, tlx.storage_kind.tmem
SHARED = tlx.reuse_group_type.shared

pytestmark = pytest.mark.usefixtures("plugin")


def compile_kernel(fn, signature, constexprs, target):
    sig = dict(signature, **{k: "constexpr" for k in constexprs})
    return triton.compile(GluonASTSource(fn, sig, constexprs), target=target)


def _line_of(fn, marker):
    import inspect
    lines, start = inspect.getsourcelines(fn.fn)
    return f"{__file__}:{start + next(i for i, text in enumerate(lines) if marker in text)}"


def _nvmma(shape, dtype=gl.float16):
    return gl.NVMMASharedLayout.get_default_for(shape, dtype)


# --- tcgen05 pipelines: an MMA after an MMA is ordered only for the same accumulator address and shape ------

@gluon.jit
def mma_pipeline_kernel(out_ptr, SAME_ACC: gl.constexpr):
    BM: gl.constexpr = 128
    spec = tlx.storage_alias_spec(storage=TMEM)
    acc = tlx.local_alloc((BM, 64), gl.float32, 1, TMEM, reuse=spec)
    other = tlx.local_alloc((BM, 64), gl.float32, 1, TMEM, reuse=spec)      # acc's columns, another view
    spec.set_buffer_overlap(tlx.reuse_group(acc, other, group_type=SHARED))
    layout: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BM, 64], gl.float16)
    a_s = gl.allocate_shared_memory(gl.float16, [BM, 64], layout)
    b_s = gl.allocate_shared_memory(gl.float16, [64, 64], layout)
    bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(bar, count=1)
    tcgen05_mma(a_s, b_s, acc.index(0), use_acc=False)  # LINE-FIRST-MMA
    if SAME_ACC:   # the same columns and shape: PTX runs the two in issue order
        tcgen05_mma(a_s, b_s, other.index(0), use_acc=False)
    else:          # columns [32, 64) of acc with N = 32: another accumulator, not ordered after the first MMA
        tcgen05_mma(a_s, b_s.slice(0, 32, dim=1), other.index(0).slice(32, 32), use_acc=False)  # LINE-SECOND-MMA
    tcgen05_commit(bar)
    mbarrier.wait(bar, 0)
    reg: gl.constexpr = compat.tmem_reg_layout(gl.float32, [BM, 64], other.index(0).type.layout, 4)
    out = other.index(0).load(reg)
    gl.store(out_ptr + gl.arange(0, BM, layout=gl.SliceLayout(1, reg)), gl.sum(out, axis=1))


def test_mmas_into_overlapping_columns_of_two_accumulators_are_not_ordered():
    """P7 took every MMA of a thread as run in issue order and said "proven" on the second one writing columns
    the first may still write; PTX pipelines an MMA after an MMA only for the same accumulator and shape."""
    compile_kernel(mma_pipeline_kernel, {"out_ptr": "*fp32"}, {"SAME_ACC": True}, BLACKWELL)
    with pytest.raises(TlxAliasError) as info:
        compile_kernel(mma_pipeline_kernel, {"out_ptr": "*fp32"}, {"SAME_ACC": False}, BLACKWELL)
    text = str(info.value)
    assert "[tlx-verify P7] violation" in text and "share cols [32, 64)" in text, text
    assert f"write of acc by ttng.tc_gen5_mma at {_line_of(mma_pipeline_kernel, 'LINE-FIRST-MMA')}" in text, text
    assert f"by ttng.tc_gen5_mma at {_line_of(mma_pipeline_kernel, 'LINE-SECOND-MMA')}" in text, text


# --- an mbarrier that an op P7 does not time arrives on -----------------------------------------------------

@gluon.jit
def untimed_arrive_kernel(a_desc):
    BM: gl.constexpr = a_desc.block_type.shape[0]
    BK: gl.constexpr = a_desc.block_type.shape[1]
    spec = tlx.storage_alias_spec(storage=SMEM)
    a = tlx.local_alloc((BM, BK), gl.float16, 1, SMEM, reuse=spec, layout=a_desc.layout)
    c = tlx.local_alloc((BM, BK), gl.float16, 1, SMEM, reuse=spec, layout=a_desc.layout)
    spec.set_buffer_overlap(tlx.reuse_group(a, c, group_type=SHARED))
    bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    threads: gl.constexpr = 32 * gl.num_warps()
    mbarrier.init(bar, count=threads)
    async_copy.mbarrier_arrive(bar, increment_count=False)   # LINE-NOINC: every thread: phase 0 completes here
    mbarrier.expect(bar, a_desc.block_type.nbytes)
    mbarrier.arrive(bar, count=threads - 1)
    compat.tma_load(a_desc, [0, 0], bar, a.index(0))
    mbarrier.wait(bar, 0)                                     # LINE-WAIT: returns at once, the load still in flight
    blocked: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
    c.index(0).store(gl.full([BM, BK], 2.0, gl.float16, blocked))


def test_a_wait_on_a_barrier_an_untimed_op_arrives_on_is_cannot_prove(monkeypatch):
    """cp.async's `mbarrier_arrive` (not timed by P7) completes phase 0, so the wait does not wait for the TMA load
    and `c` overwrites bytes it may still write: P7, counting only the arrivals it models, said "proven"."""
    monkeypatch.setenv("TLX_ALIAS_PROOF", "strict")
    sig = {"a_desc": tensordesc("fp16", [64, 64], _nvmma([64, 64]))}
    with pytest.raises(TlxAliasError) as info:
        compile_kernel(untimed_arrive_kernel, sig, {}, HOPPER)
    text = str(info.value)
    assert "[tlx-verify P7] cannot prove" in text, text
    assert (f"the wait on the mbarrier bar+0 at {_line_of(untimed_arrive_kernel, 'LINE-WAIT')}: "
            f"ttng.async_copy_mbarrier_arrive at {_line_of(untimed_arrive_kernel, 'LINE-NOINC')} signals it too") \
        in text, text


# --- an mbarrier inside a spec ------------------------------------------------------------------------------

@gluon.jit
def barrier_in_spec_kernel(out_ptr):
    spec = tlx.storage_alias_spec(storage=SMEM)
    bars = tlx.local_alloc((1, ), gl.int64, 1, SMEM, reuse=spec, layout=mbarrier.MBarrierLayout())
    data = tlx.local_alloc((32, ), gl.int64, 1, SMEM, reuse=spec, layout=gl.SwizzledSharedLayout(1, 1, 1, [0]))
    spec.set_buffer_overlap(tlx.reuse_group(bars, data, group_type=SHARED))
    blocked: gl.constexpr = gl.BlockedLayout([1], [32], [4], [0])
    bars.index(0).store(gl.full([1], 0, gl.int64, blocked))
    mbarrier.init(bars.index(0), count=1)  # LINE-INIT
    data.index(0).store(gl.full([32], 7, gl.int64, blocked))      # over the live barrier
    mbarrier.arrive(bars.index(0))
    mbarrier.wait(bars.index(0), 0)
    gl.store(out_ptr + gl.arange(0, 32, blocked), data.index(0).load(blocked))


def test_an_mbarrier_in_shared_bytes_is_cannot_prove(monkeypatch):
    """mbarrier ops were not accesses: a data tile stored over a live barrier was "proven"."""
    monkeypatch.setenv("TLX_ALIAS_PROOF", "strict")
    with pytest.raises(TlxAliasError) as info:
        compile_kernel(barrier_in_spec_kernel, {"out_ptr": "*i64"}, {}, HOPPER)
    text = str(info.value)
    assert "[tlx-verify P7] cannot prove" in text, text
    assert (f"the mbarrier initialized at {_line_of(barrier_in_spec_kernel, 'LINE-INIT')} lies in spec0, whose "
            "bytes other buffers share") in text, text


# --- TMA reduces are bulk groups too; a TMA load of 64-bit data -----------------------------------------

@gluon.jit
def store_and_reduce_kernel(c_desc, STORE_FIRST: gl.constexpr):
    BM: gl.constexpr = c_desc.block_type.shape[0]
    BN: gl.constexpr = c_desc.block_type.shape[1]
    spec = tlx.storage_alias_spec(storage=SMEM)
    a = tlx.local_alloc((BM, BN), gl.float16, 1, SMEM, reuse=spec, layout=c_desc.layout)
    c = tlx.local_alloc((BM, BN), gl.float16, 1, SMEM, reuse=spec, layout=c_desc.layout)
    spec.set_buffer_overlap(tlx.reuse_group(a, c, group_type=SHARED))
    d = gl.allocate_shared_memory(gl.float16, [BM, BN], c_desc.layout)
    blocked: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
    x = gl.full([BM, BN], 1.0, gl.float16, blocked)
    c.index(0).store(x)
    d.store(x)
    fence_async_shared()
    if STORE_FIRST:   # two bulk groups, the store's first: store_wait(1) retires it
        tma.async_store(c_desc, [0, 0], c.index(0))
        tma.async_atomic_add(c_desc, [BM, 0], d)
    else:             # the store's group is the last: store_wait(1) leaves it reading c
        tma.async_atomic_add(c_desc, [BM, 0], d)
        tma.async_store(c_desc, [0, 0], c.index(0))
    tma.store_wait(1)
    a.index(0).store(x + 1)
    tma.store_wait(0)


@pytest.mark.skipif(not hasattr(tma, "async_atomic_add"), reason="this Triton's Gluon has no TMA reduce")
def test_a_tma_reduce_is_a_bulk_group_store_wait_counts():
    """`store_wait(n)` waits for all but the last n bulk groups, TMA reduces' included: P7 counted TMA stores only
    and stopped a correct kernel (store, reduce, store_wait(1)) with a violation."""
    sig = {"c_desc": tensordesc("fp16", [64, 64], _nvmma([64, 64]))}
    compile_kernel(store_and_reduce_kernel, sig, {"STORE_FIRST": True}, HOPPER)
    with pytest.raises(TlxAliasError, match=r"\[tlx-verify P7\] violation.*no `tma.store_wait` retired it"):
        compile_kernel(store_and_reduce_kernel, sig, {"STORE_FIRST": False}, HOPPER)


@gluon.jit
def load_64bit_kernel(desc):
    BM: gl.constexpr = desc.block_type.shape[0]
    BK: gl.constexpr = desc.block_type.shape[1]
    spec = tlx.storage_alias_spec(storage=SMEM)
    a = tlx.local_alloc((BM, BK), gl.int64, 1, SMEM, reuse=spec, layout=desc.layout)
    c = tlx.local_alloc((BM, BK), gl.int64, 1, SMEM, reuse=spec, layout=desc.layout)
    spec.set_buffer_overlap(tlx.reuse_group(a, c, group_type=SHARED))
    bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(bar, count=1)
    mbarrier.expect(bar, desc.block_type.nbytes)
    compat.tma_load(desc, [0, 0], bar, a.index(0))
    mbarrier.wait(bar, 0)
    blocked: gl.constexpr = gl.BlockedLayout([1, 2], [4, 8], [4, 1], [1, 0])
    c.index(0).store(gl.full([BM, BK], 2, gl.int64, blocked))


def test_a_tma_load_of_64_bit_data_is_told_from_its_barrier(monkeypatch):
    """P7 told a TMA load's barrier from its destination by the type (`xi64`): a 64-bit tile was "cannot prove"."""
    monkeypatch.setenv("TLX_ALIAS_PROOF", "strict")
    layout = gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=64, rank=2)
    compile_kernel(load_64bit_kernel, {"desc": f"tensordesc<i64[32,16],{layout!r}>"}, {}, HOPPER)


@gluon.jit
def reinterpreted_epilogue_kernel(a_desc, c_desc, EARLY: gl.constexpr):
    BM: gl.constexpr = a_desc.block_type.shape[0]
    BK: gl.constexpr = a_desc.block_type.shape[1]
    spec = tlx.storage_alias_spec(storage=SMEM)
    a_ring = tlx.local_alloc((BM, BK), gl.float16, 2, SMEM, reuse=spec, layout=a_desc.layout)
    c_tile = tlx.local_alloc((BM, BK), gl.float16, 1, SMEM, reuse=spec, layout=a_desc.layout)
    spec.set_buffer_overlap(tlx.reuse_group(c_tile, a_ring, group_type=SHARED))
    bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(bar, count=1)
    mbarrier.expect(bar, a_desc.block_type.nbytes)
    compat.tma_load(a_desc, [0, 0], bar, a_ring.index(0))
    c = compat.reinterpret(c_tile.index(0), gl.bfloat16, [BM, BK], c_desc.layout)   # c_tile's only accesses: through c
    blocked: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
    if EARLY:   # c lies on a_ring[0], which the TMA load may still be writing
        c.store(gl.zeros([BM, BK], gl.bfloat16, blocked))  # LINE-EARLY-STORE
    mbarrier.wait(bar, 0)
    a = a_ring.index(0).load(blocked)
    if not EARLY:
        c.store(a.to(gl.bfloat16))
    fence_async_shared()
    compat.tma_store(c_desc, [0, 0], c)
    tma.store_wait(0)


def test_a_buffer_reached_only_through_a_reinterpret_of_it_is_ordered(monkeypatch):
    """A run that accessed a spec buffer only through a reinterpret of one of its buffers did not count as
    reaching it: "cannot prove ... the sharing was never exercised" on a correct epilogue (a warning under
    `error`, a stop under `strict`). The same kernel with the store before the TMA load's wait is a violation."""
    monkeypatch.setenv("TLX_ALIAS_PROOF", "strict")
    sig = {"a_desc": tensordesc("fp16", [64, 64], _nvmma([64, 64])),
           "c_desc": tensordesc("bf16", [64, 64], _nvmma([64, 64], gl.bfloat16))}
    compile_kernel(reinterpreted_epilogue_kernel, sig, {"EARLY": False}, HOPPER)
    with pytest.raises(TlxAliasError) as info:
        compile_kernel(reinterpreted_epilogue_kernel, sig, {"EARLY": True}, HOPPER)
    text = str(info.value)
    assert "[tlx-verify P7] violation" in text, text
    assert f"by ttg.local_store at {_line_of(reinterpreted_epilogue_kernel, 'LINE-EARLY-STORE')}" in text, text
