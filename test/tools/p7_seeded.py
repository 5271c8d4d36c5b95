"""Small Gluon kernels with aliased SMEM/TMEM and one seeded synchronization bug each (P7's test inputs).

Written in upstream's idioms (a TMA-load / wgmma ring whose epilogue tile borrows the ring through
`_reinterpret`; Blackwell S and P sharing TMEM columns, P a `_reinterpret` of S), compiled on the CPU for
sm_90a / sm_100a. `BUG` (a constexpr string) selects the slip; "none" is the correct kernel:

    ring_epilogue  (Hopper)      drop_wgmma_wait, load_before_store_wait, read_before_wait, wrong_parity,
                                 expect_a_only (the expect counts the A tile only, B's load issued first: a load
                                 outlives the wait), store_wait_by_slot (the C store retired only before a load into
                                 slot 0: a race with one K block a tile and two tiles or more, which no run of one
                                 value for both arguments shows; TLX_ALIAS_P7_MIXED=1's runs do)
    ring_last_slot (Hopper)      drop_wgmma_wait (a race only when the loop's trip count is 2 modulo 4)
    ring_block_slot (Hopper)     drop_wgmma_wait (the loop runs cdiv(K, 64) times: a race only for 3 modulo 4),
                                 wait_slot_0 (every block waits on slot 0's barrier: one block runs, two hang;
                                 the epilogue on slot 0), epilogue_unreached (the epilogue only past 1000
                                 blocks: no run reaches the shared bytes), second_tile_unreached (the
                                 epilogue on every run, a second tile on the next slot only past 1000 blocks)
    ring_halves    (Hopper)      drop_wgmma_wait (the A ring is two `.slice` halves of one allocation: a hazard
                                 within one view)
    s_p_alias      (Blackwell)   p_before_s_wait, wrong_parity, no_barrier (the S-MMA without mbarriers= and no
                                 wait: asynchronous all the same), commit_idiom (correct: tcgen05_commit and wait)
    s_p_ws         (Blackwell, warp-specialized)  arrive_early

    python test/tools/p7_seeded.py [--out DIR]      # writes DIR/<kernel>-<bug>.ttgir
"""
import os
import sys

import triton
from triton.backends.compiler import GPUTarget
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon._runtime import GluonASTSource
from triton.experimental.gluon.language.nvidia.blackwell import (TensorMemoryLayout, allocate_tensor_memory,
                                                                 tcgen05_commit, tcgen05_mma)
from triton.experimental.gluon.language.nvidia.hopper import (fence_async_shared, mbarrier, tma, warpgroup_mma,
                                                              warpgroup_mma_wait)
from tlx_alias import _triton as compat


# --- Hopper: persistent tiles; A/B ring of 2 stages filled by TMA, read by async wgmma; the epilogue tile
# c_smem is the A ring's bytes reinterpreted (hand-aliased): written after the tile's last wgmma, stored by TMA.
@gluon.jit
def ring_epilogue(a_desc, b_desc, c_desc, x_ptr, n_tiles, k_tiles, BUG: gl.constexpr):
    BM: gl.constexpr = a_desc.block_type.shape[0]
    BK: gl.constexpr = a_desc.block_type.shape[1]
    BN: gl.constexpr = b_desc.block_type.shape[1]
    blocked: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
    a_ring = gl.allocate_shared_memory(gl.bfloat16, [2, BM, BK], a_desc.layout)
    b_ring = gl.allocate_shared_memory(gl.bfloat16, [2, BK, BN], b_desc.layout)
    ready = gl.allocate_shared_memory(gl.int64, [2, 1], mbarrier.MBarrierLayout())
    for i in gl.static_range(2):
        mbarrier.init(ready.index(i), count=1)
    c_smem = compat.reinterpret(a_ring, gl.bfloat16, [BM, BN], c_desc.layout)   # on top of A[0]
    mma_layout: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1],
                                                         instr_shape=[16, BN, 16])
    peeked = gl.zeros([BM], gl.float32, gl.SliceLayout(1, blocked))
    it = 0
    for t in range(n_tiles):
        if BUG != "load_before_store_wait" and BUG != "store_wait_by_slot":
            tma.store_wait(pendings=0)     # the previous tile's C store has read c_smem (A[0])
        acc = gl.zeros([BM, BN], gl.float32, mma_layout)
        for k in range(k_tiles):
            s = it % 2
            phase = (it // 2) & 1
            if BUG == "store_wait_by_slot":
                if s == 0:                 # retires the C store before a load into A[0] only: a tile of one K
                    tma.store_wait(pendings=0)   # block on slot 1 writes c_smem while the last store reads it
            if BUG == "expect_a_only":     # B's 8 KiB uncounted: the phase ends once any 16 KiB of 24 land
                mbarrier.expect(ready.index(s), a_desc.block_type.nbytes)
                compat.tma_load(b_desc, [k * BK, 0], ready.index(s), b_ring.index(s))
                compat.tma_load(a_desc, [t * BM, k * BK], ready.index(s), a_ring.index(s))
            else:
                mbarrier.expect(ready.index(s), a_desc.block_type.nbytes + b_desc.block_type.nbytes)
                compat.tma_load(a_desc, [t * BM, k * BK], ready.index(s), a_ring.index(s))
                compat.tma_load(b_desc, [k * BK, 0], ready.index(s), b_ring.index(s))
            if BUG == "load_before_store_wait":
                if k == 0:
                    tma.store_wait(pendings=0)     # too late: the loads above may overwrite c_smem already
            if BUG == "read_before_wait":          # a peek through a reinterpreted view before the wait
                peek = compat.reinterpret(a_ring.index(s), gl.float16, [BM, BK], a_desc.layout)
                peeked += gl.sum(peek.load(blocked).to(gl.float32), 1)
            if BUG == "wrong_parity":
                mbarrier.wait(ready.index(s), phase ^ 1)
            else:
                mbarrier.wait(ready.index(s), phase)
            acc = warpgroup_mma(a_ring.index(s), b_ring.index(s), acc, is_async=True)
            acc = warpgroup_mma_wait(num_outstanding=1, deps=(acc, ))
            it += 1
        if BUG == "drop_wgmma_wait":
            acc = warpgroup_mma_wait(num_outstanding=1, deps=(acc, ))   # the last wgmma still reads the ring
        else:
            acc = warpgroup_mma_wait(num_outstanding=0, deps=(acc, ))
        c_smem.store(acc.to(gl.bfloat16))
        fence_async_shared()
        compat.tma_store(c_desc, [t * BM, 0], c_smem)
    tma.store_wait(pendings=0)
    for i in gl.static_range(2):
        mbarrier.invalidate(ready.index(i))
    gl.store(x_ptr + gl.arange(0, BM, layout=gl.SliceLayout(1, blocked)), peeked)


# --- Hopper, one tile: a 4-stage A/B ring filled by TMA and read by async wgmma, one wgmma kept in flight; the
# epilogue tile c_smem is ring slot C_SLOT reinterpreted. drop_wgmma_wait leaves the last wgmma reading slot
# (n_steps - 1) % 4 while c_smem is written: a race only when that slot is C_SLOT.
@gluon.jit
def _ring_then_epilogue(a_desc, b_desc, x_ptr, n_steps, C_SLOT: gl.constexpr, BUG: gl.constexpr):
    BM: gl.constexpr = a_desc.block_type.shape[0]
    BK: gl.constexpr = a_desc.block_type.shape[1]
    BN: gl.constexpr = b_desc.block_type.shape[1]
    STAGES: gl.constexpr = 4
    a_ring = gl.allocate_shared_memory(gl.bfloat16, [STAGES, BM, BK], a_desc.layout)
    b_ring = gl.allocate_shared_memory(gl.bfloat16, [STAGES, BK, BN], b_desc.layout)
    ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    for i in gl.static_range(STAGES):
        mbarrier.init(ready.index(i), count=1)
    if BUG == "wait_slot_0":   # the epilogue on slot 0, which one block uses: a run of one block checks the pair
        c_smem = compat.reinterpret(a_ring.index(0), gl.float16, [BM, BK], a_desc.layout)
    else:
        c_smem = compat.reinterpret(a_ring.index(C_SLOT), gl.float16, [BM, BK], a_desc.layout)   # fp16 on one slot
    mma_layout: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1],
                                                         instr_shape=[16, BN, 16])
    acc = gl.zeros([BM, BN], gl.float32, mma_layout)
    for k in range(n_steps):
        s = k % STAGES
        mbarrier.expect(ready.index(s), a_desc.block_type.nbytes + b_desc.block_type.nbytes)
        compat.tma_load(a_desc, [0, k * BK], ready.index(s), a_ring.index(s))
        compat.tma_load(b_desc, [k * BK, 0], ready.index(s), b_ring.index(s))
        if BUG == "wait_slot_0":
            mbarrier.wait(ready.index(0), k & 1)   # right for one block; hangs on the second (slot 0's phase 1)
        else:
            mbarrier.wait(ready.index(s), (k // STAGES) & 1)
        acc = warpgroup_mma(a_ring.index(s), b_ring.index(s), acc, is_async=True)
        acc = warpgroup_mma_wait(num_outstanding=1, deps=(acc, ))
    if BUG == "drop_wgmma_wait":
        acc = warpgroup_mma_wait(num_outstanding=1, deps=(acc, ))   # the last wgmma still reads its slot
    else:
        acc = warpgroup_mma_wait(num_outstanding=0, deps=(acc, ))
    if BUG == "epilogue_unreached":
        if n_steps > 1000:   # the epilogue tile only past 1000 steps: no run of P7 gets there
            _epilogue(c_smem, acc, x_ptr, BM)
    else:
        _epilogue(c_smem, acc, x_ptr, BM)
    if BUG == "second_tile_unreached":
        if n_steps > 1000:   # a second tile on the next slot only past 1000 steps, the first one on every run
            d_smem = compat.reinterpret(a_ring.index((C_SLOT + 1) % STAGES), gl.float16, [BM, BK], a_desc.layout)
            _epilogue(d_smem, acc, x_ptr, BM)
    for i in gl.static_range(STAGES):
        mbarrier.invalidate(ready.index(i))


@gluon.jit
def _epilogue(c_smem, acc, x_ptr, BM: gl.constexpr):
    c_smem.store(acc.to(gl.float16))
    blocked: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
    out = c_smem.load(blocked).to(gl.float32)
    gl.store(x_ptr + gl.arange(0, BM, layout=gl.SliceLayout(1, blocked)), gl.sum(out, 1))


# The loop runs k_tiles times, an argument: the race needs k_tiles % 4 == 2.
@gluon.jit
def ring_last_slot(a_desc, b_desc, x_ptr, k_tiles, BUG: gl.constexpr):
    _ring_then_epilogue(a_desc, b_desc, x_ptr, k_tiles, 1, BUG)


# The loop runs over the blocks of K, as upstream's GEMMs do: the race needs cdiv(K, 64) % 4 == 3.
@gluon.jit
def ring_block_slot(a_desc, b_desc, x_ptr, K, BUG: gl.constexpr):
    _ring_then_epilogue(a_desc, b_desc, x_ptr, gl.cdiv(K, a_desc.block_type.shape[1]), 2, BUG)


# --- Hopper, one tile: the A tiles of a 2-deep ring are the two halves of one [2 BM, BK] allocation cut with
# `.slice` (aliased by slices alone, no reinterpret), B a ring of its own; one wgmma kept in flight.
# drop_wgmma_wait: `warpgroup_mma_wait(2)` leaves the wgmma of step k - 1 reading the half that step k + 1
# loads into: a hazard between two accesses of one view (P7 said "proven" while it compared only two views).
@gluon.jit
def ring_halves(a_desc, b_desc, x_ptr, k_pairs, BUG: gl.constexpr):
    BM: gl.constexpr = a_desc.block_type.shape[0]
    BK: gl.constexpr = a_desc.block_type.shape[1]
    BN: gl.constexpr = b_desc.block_type.shape[1]
    a_both = gl.allocate_shared_memory(gl.bfloat16, [2 * BM, BK], a_desc.layout)
    b_ring = gl.allocate_shared_memory(gl.bfloat16, [2, BK, BN], b_desc.layout)
    ready = gl.allocate_shared_memory(gl.int64, [2, 1], mbarrier.MBarrierLayout())
    for i in gl.static_range(2):
        mbarrier.init(ready.index(i), count=1)
    mma_layout: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1],
                                                         instr_shape=[16, BN, 16])
    acc = gl.zeros([BM, BN], gl.float32, mma_layout)
    for k in range(k_pairs):
        for s in gl.static_range(2):
            half = a_both.slice(s * BM, BM)
            mbarrier.expect(ready.index(s), a_desc.block_type.nbytes + b_desc.block_type.nbytes)
            compat.tma_load(a_desc, [0, (2 * k + s) * BK], ready.index(s), half)
            compat.tma_load(b_desc, [(2 * k + s) * BK, 0], ready.index(s), b_ring.index(s))
            mbarrier.wait(ready.index(s), k & 1)
            acc = warpgroup_mma(half, b_ring.index(s), acc, is_async=True)
            if BUG == "drop_wgmma_wait":
                acc = warpgroup_mma_wait(num_outstanding=2, deps=(acc, ))
            else:
                acc = warpgroup_mma_wait(num_outstanding=1, deps=(acc, ))
    acc = warpgroup_mma_wait(num_outstanding=0, deps=(acc, ))
    for i in gl.static_range(2):
        mbarrier.invalidate(ready.index(i))
    gl.store(x_ptr + gl.arange(0, BM, layout=gl.SliceLayout(1, mma_layout)), gl.sum(acc, 1))


@gluon.jit
def _borrow_s_as_p(s_tmem, BM: gl.constexpr, BN: gl.constexpr):
    # the upstream tutorial's helper: fp32 S reinterpreted as bf16 packed two per column, first BN elements
    layout: gl.constexpr = TensorMemoryLayout((BM, 2 * BN), col_stride=1)
    return compat.reinterpret(s_tmem, gl.bfloat16, [BM, 2 * BN], layout).slice(0, BN)


# --- Blackwell: S = Q K^T by tcgen05 into TMEM; P (bf16, packed) is S's first columns reinterpreted;
# O += P V reads P from TMEM. One partition; each MMA signals its own mbarrier.
@gluon.jit
def s_p_alias(x_ptr, n_iter, BUG: gl.constexpr):
    BM: gl.constexpr = 128
    BN: gl.constexpr = 64
    D: gl.constexpr = 64
    smem_layout: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BM, D], gl.bfloat16)
    blocked: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
    q_smem = gl.allocate_shared_memory(gl.bfloat16, [BM, D], smem_layout)
    k_smem = gl.allocate_shared_memory(gl.bfloat16, [BN, D], smem_layout)
    v_smem = gl.allocate_shared_memory(gl.bfloat16, [BN, D], smem_layout)
    q_smem.store(gl.zeros([BM, D], gl.bfloat16, blocked))
    k_smem.store(gl.zeros([BN, D], gl.bfloat16, blocked))
    v_smem.store(gl.zeros([BN, D], gl.bfloat16, blocked))
    s_layout: gl.constexpr = TensorMemoryLayout((BM, BN), col_stride=1)
    p_layout: gl.constexpr = TensorMemoryLayout((BM, BN), col_stride=1)
    o_layout: gl.constexpr = TensorMemoryLayout((BM, D), col_stride=1)
    s_tmem = allocate_tensor_memory(gl.float32, [BM, BN], s_layout)
    o_tmem = allocate_tensor_memory(gl.float32, [BM, D], o_layout)
    p_tmem = _borrow_s_as_p(s_tmem, BM, BN)
    s_reg: gl.constexpr = compat.tmem_reg_layout(gl.float32, [BM, BN], s_layout, 4)
    p_reg: gl.constexpr = compat.tmem_reg_layout(gl.bfloat16, [BM, BN], p_layout, 4)
    s_bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    o_bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(s_bar, count=1)
    mbarrier.init(o_bar, count=1)
    fence_async_shared()
    for j in range(n_iter):
        phase = j & 1
        if BUG == "commit_idiom" or BUG == "no_barrier":   # no mbarriers=: the MMA is still asynchronous
            tcgen05_mma(q_smem, k_smem.permute((1, 0)), s_tmem, use_acc=False)
            if BUG == "commit_idiom":
                tcgen05_commit(s_bar)                        # completes it (upstream's idiom)
        else:
            tcgen05_mma(q_smem, k_smem.permute((1, 0)), s_tmem, use_acc=False, mbarriers=[s_bar])
        if BUG == "no_barrier":
            pass                                             # S read while the MMA may still write it
        elif BUG == "p_before_s_wait":
            p_tmem.store(gl.zeros([BM, BN], gl.bfloat16, p_reg))     # P over S while the S-MMA still writes
            mbarrier.wait(s_bar, phase)
        elif BUG == "wrong_parity":
            mbarrier.wait(s_bar, phase ^ 1)
        else:
            mbarrier.wait(s_bar, phase)
        s = s_tmem.load(s_reg)
        p_tmem.store(gl.convert_layout(s.to(gl.bfloat16), p_reg))
        tcgen05_mma(p_tmem, v_smem, o_tmem, use_acc=j > 0, mbarriers=[o_bar])
        mbarrier.wait(o_bar, phase)
    mbarrier.invalidate(s_bar)
    mbarrier.invalidate(o_bar)
    o = o_tmem.load(compat.tmem_reg_layout(gl.float32, [BM, D], o_layout, 4))
    gl.store(x_ptr + gl.arange(0, D, layout=gl.SliceLayout(0, o.type.layout)), gl.sum(o, 0))


# --- Blackwell, warp-specialized: the MMA partition computes S(j) and O += P(j) V; the softmax (default)
# partition reads S(j) and writes P(j) over it, then arrives on p_ready. S(j+1) overwrites P(j) only after
# p_ready: arrive_early releases P before writing it.
@gluon.jit
def _sp_mma(q_smem, k_smem, v_smem, s_tmem, p_tmem, o_tmem, s_ready, p_ready, o_bar, n_iter):
    for j in range(n_iter):
        mbarrier.wait(p_ready, (j & 1) ^ 1)          # P(j-1) written and read: S may be overwritten
        tcgen05_mma(q_smem, k_smem.permute((1, 0)), s_tmem, use_acc=False, mbarriers=[s_ready])
        mbarrier.wait(p_ready, j & 1)                 # softmax has written P(j)
        tcgen05_mma(p_tmem, v_smem, o_tmem, use_acc=j > 0, mbarriers=[o_bar])
        mbarrier.wait(o_bar, j & 1)


@gluon.jit
def _sp_softmax(s_tmem, p_tmem, s_ready, p_ready, n_iter, BUG: gl.constexpr):
    BM: gl.constexpr = 128
    BN: gl.constexpr = 64
    s_reg: gl.constexpr = compat.tmem_reg_layout(gl.float32, [BM, BN], TensorMemoryLayout((BM, BN), col_stride=1), 4)
    p_reg: gl.constexpr = compat.tmem_reg_layout(gl.bfloat16, [BM, BN], TensorMemoryLayout((BM, BN), col_stride=1), 4)
    for j in range(n_iter):
        mbarrier.wait(s_ready, j & 1)
        s = s_tmem.load(s_reg)
        if BUG == "arrive_early":
            mbarrier.arrive(p_ready, count=2)         # releases S/P before P is written
            p_tmem.store(gl.convert_layout(s.to(gl.bfloat16), p_reg))
        else:
            p_tmem.store(gl.convert_layout(s.to(gl.bfloat16), p_reg))
            mbarrier.arrive(p_ready, count=2)


@gluon.jit
def s_p_ws(x_ptr, n_iter, BUG: gl.constexpr):
    BM: gl.constexpr = 128
    BN: gl.constexpr = 64
    D: gl.constexpr = 64
    smem_layout: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BM, D], gl.bfloat16)
    blocked: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
    q_smem = gl.allocate_shared_memory(gl.bfloat16, [BM, D], smem_layout)
    k_smem = gl.allocate_shared_memory(gl.bfloat16, [BN, D], smem_layout)
    v_smem = gl.allocate_shared_memory(gl.bfloat16, [BN, D], smem_layout)
    q_smem.store(gl.zeros([BM, D], gl.bfloat16, blocked))
    k_smem.store(gl.zeros([BN, D], gl.bfloat16, blocked))
    v_smem.store(gl.zeros([BN, D], gl.bfloat16, blocked))
    s_tmem = allocate_tensor_memory(gl.float32, [BM, BN], TensorMemoryLayout((BM, BN), col_stride=1))
    o_tmem = allocate_tensor_memory(gl.float32, [BM, D], TensorMemoryLayout((BM, D), col_stride=1))
    p_tmem = _borrow_s_as_p(s_tmem, BM, BN)
    s_ready = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    p_ready = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    o_bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(s_ready, count=1)
    mbarrier.init(p_ready, count=2)
    mbarrier.init(o_bar, count=1)
    fence_async_shared()
    gl.warp_specialize([(_sp_softmax, (s_tmem, p_tmem, s_ready, p_ready, n_iter, BUG)),
                        (_sp_mma, (q_smem, k_smem, v_smem, s_tmem, p_tmem, o_tmem, s_ready, p_ready, o_bar, n_iter))],
                       [1], [24])
    o = o_tmem.load(compat.tmem_reg_layout(gl.float32, [BM, 64], TensorMemoryLayout((BM, 64), col_stride=1), 4))
    gl.store(x_ptr + gl.arange(0, 64, layout=gl.SliceLayout(0, o.type.layout)), gl.sum(o, 0))


def _desc(block, dtype="bf16"):
    layout = gl.NVMMASharedLayout.get_default_for(block, gl.bfloat16)
    return f"tensordesc<{dtype}[{block[0]},{block[1]}],{layout!r}>"


_RING_SIG = {"a_desc": _desc([128, 64]), "b_desc": _desc([64, 64]), "c_desc": _desc([128, 64]), "x_ptr": "*fp32",
             "n_tiles": "i32", "k_tiles": "i32"}
KERNELS = {  # name: (fn, signature, capability, bug classes)
    "ring_epilogue": (ring_epilogue, _RING_SIG, 90,
                      ("none", "drop_wgmma_wait", "load_before_store_wait", "read_before_wait", "wrong_parity",
                       "expect_a_only", "store_wait_by_slot")),
    "ring_last_slot": (ring_last_slot, {k: v for k, v in _RING_SIG.items() if k not in ("c_desc", "n_tiles")}, 90,
                       ("none", "drop_wgmma_wait")),
    "ring_block_slot": (ring_block_slot, {"a_desc": _RING_SIG["a_desc"], "b_desc": _RING_SIG["b_desc"],
                                          "x_ptr": "*fp32", "K": "i32"}, 90,
                        ("none", "drop_wgmma_wait", "wait_slot_0", "epilogue_unreached", "second_tile_unreached")),
    "ring_halves": (ring_halves, {"a_desc": _RING_SIG["a_desc"], "b_desc": _RING_SIG["b_desc"], "x_ptr": "*fp32",
                                  "k_pairs": "i32"}, 90, ("none", "drop_wgmma_wait")),
    "s_p_alias": (s_p_alias, {"x_ptr": "*fp32", "n_iter": "i32"}, 100,
                  ("none", "p_before_s_wait", "wrong_parity", "commit_idiom", "no_barrier")),
    "s_p_ws": (s_p_ws, {"x_ptr": "*fp32", "n_iter": "i32"}, 100, ("none", "arrive_early")),
}
CASES = [(k, bug) for k, (_, _, _, bugs) in KERNELS.items() for bug in bugs]


# Triton releases that refuse a kernel themselves: {kernel: {(major, minor): their diagnostic}}. ring_epilogue's
# c_smem reinterprets the A ring at another size, which 3.8 does not allow.
REFUSED = {"ring_epilogue": {(3, 8): "source and result must have the same logical storage size"}}


def refused_by_this_triton(kernel: str):
    """The diagnostic the installed Triton gives for `kernel`, or None if it compiles it."""
    return REFUSED.get(kernel, {}).get(compat.VERSION[:2])


def compile_ttgir(kernel: str, bug: str) -> str:
    fn, sig, cap, bugs = KERNELS[kernel]
    assert bug in bugs, (kernel, bug)
    src = GluonASTSource(fn, dict(sig, BUG="constexpr"), {"BUG": bug})
    return triton.compile(src, target=GPUTarget("cuda", cap, 32)).asm["ttgir"]


def main(argv):
    out = argv[argv.index("--out") + 1] if "--out" in argv else "."
    os.makedirs(out, exist_ok=True)
    for kernel, bug in CASES:
        with open(os.path.join(out, f"{kernel}-{bug}.ttgir"), "w") as f:
            f.write(compile_ttgir(kernel, bug))


if __name__ == "__main__":
    main(sys.argv[1:])
