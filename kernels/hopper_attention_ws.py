"""
Warp-specialized flash-attention forward on Hopper: a TMA producer, two consumer warpgroups (ping-pong optional),
and O staged in Q's bytes
=============================================================================================================

O = softmax(Q K^T * sm_scale [+ causal mask]) V and LSE = logsumexp of the scaled scores per query row, for Q, K,
V of shape (B, H, S, D), fp16 or bf16, D in {64, 128, 256}, any S, on sm_90a. One program computes 128 query
rows of one (batch, head) with three partitions (`gl.warp_specialize`), the arrangement of FA3 and cuDNN:

    partition        warps  registers  does
    consumer 0       4      240 (*)    rows [0, 64): S = Q0 K^T, online softmax, O0 += P V, epilogue   (default)
    consumer 1       4      240        rows [64, 128): the same for Q1                                  (worker)
    producer         1      24         TMA: Q0, Q1 once, then K and V blocks through a STAGES-deep ring (worker)

(*) Triton pads the producer to a warpgroup (12 warps, .maxnreg 168 = 65536 / 384) and gives the default
partition what the workers leave: 3 x 168 - CONSUMER_REGS - PRODUCER_REGS = 240 (`setmaxnreg` in the PTX).

Per consumer and K/V block j >= 1 (block 0 issues S(0) only; after the loop the last P V):

    take turn j | S(j) = Q K(j)^T | O *= alpha(j-1), P(j-1) -> 16 bit | O += P(j-1) V(j-1) | pass turn
    wait(1): S(j) retired | softmax(j) while P(j-1) V(j-1) runs | release K(j) | wait(0) | release V(j-1)

("take turn" and "pass turn" only with PINGPONG=True, see below.)

The turn is a pair of mbarriers (Gluon has no named barriers): consumer g waits on turn[g] and arrives on
turn[1-g] once its two wgmmas are issued, so the tensor cores see S0(j) PV0(j-1) | S1(j) PV1(j-1) | S0(j+1) ...
and each consumer's softmax runs while the other's wgmmas do. Turn k of consumer g waits for phase k of turn[g]
(parity k & 1); consumer 0's turn 0 is pre-paid by one arrival at init. The turns only order wgmma issue; no
memory safety depends on them. They are off by default (PINGPONG=False: the consumers issue their wgmmas
whenever they are ready): in Gluon 3.6 the hand-off through mbarriers costs more than the overlap it buys
(1-5% slower in every case measured on the H100 and H200, README); PINGPONG=True builds them.

ptxas: the wait that retires P(j-1) V(j-1) is hoisted by ptxas above straight-line code before it (to just
after the first row max: no overlap of the softmax with P V). The release of K(j) sits behind a branch that is
always taken, which ends the basic block; the SASS then has all of block j's exp2s between the two waits
(checked by the tests on the CPU with nvdisasm).

Masks: the first n_full blocks need none; block 0 and the blocks from n_full on (the causal diagonal, the block
past S) are masked. Causal programs run longest rows first (program 0 takes the last row block). Rows past S
compute garbage that the TMA store clips and the LSE store masks; K/V rows past S are zero-filled by TMA and
masked to -inf.

Memory plan (BLOCK_M = 2 x 64, 16-bit data; bytes)
--------------------------------------------------

One `tlx.storage_alias_spec` holds Q, the O staging tiles and the K and V rings (EPILOGUE "shared"):

    distinct( shared[group_size=2](q_tiles, o_tiles),     # O_g staged in Q_g's bytes, g = consumer
              shared[group_size=STAGES](k_ring),
              shared[group_size=STAGES](v_ring))

    D = 128, BLOCK_N = 128, STAGES = 3 (the default):
        byte 0      16K     32K        64K        96K       128K       160K       192K      224K
             | Q0 | Q1 | K[0]     | K[1]     | K[2]     | V[0]     | V[1]     | V[2]     |
             | O0 | O1 |
        Q 2 x 64 x 128 x 2 = 32768, ring 3 x (128 x 128 x 2) x 2 = 196608:  229376 with O on Q;
        a separate O (2 x 16384) makes it 262144 > 232448 (the sm_90 limit): the third stage needs the sharing.
    D = 256, BLOCK_N = 64, STAGES = 2:  Q 65536 + ring 2 x 2 x 32768 = 196608 with O on Q;
        262144 without (1 stage: 196608).
    D = 64, BLOCK_N = 128, STAGES = 6:  Q 16384 + ring 6 x 2 x 16384 = 212992 with O on Q; 229376 without:
        at D = 64 sharing buys no stage (both fit 6, neither 7).
    Outside the spec: 4 + 4 x STAGES mbarriers (8 bytes each) and Triton's warp_specialize capture area;
    `metadata.shared` = spec + 408 bytes at 3 stages.

Why the spec, not Triton: every buffer a partition uses is allocated before `gl.warp_specialize` and captured by
it, so Triton's allocator sees all of them live through the whole region and gives O bytes of its own even
though O is written only after Q's last read (EPILOGUE "plain", the same buffers as plain allocations, measures
this: q + o + ring). In the non-specialized `hopper_attention` liveness puts O on Q by itself.

Why O_g may overwrite Q_g, barrier by barrier (consumer g's rows only: O_g and Q_g are index g of the shared
group, the other consumer's tiles are other bytes):
1. Writers of Q_g: the producer's TMA load, once, completing phase 0 of q_full[g]; consumer g waits on it before
   its first wgmma. One tile per program: the producer issues no later load into Q, and nothing else writes it.
2. Readers of Q_g: the S = Q_g K^T wgmmas of consumer g, nothing else. Each S(j) is retired by the
   `warpgroup_mma_wait(1)` of its own block (wgmma groups retire in order), and after the last P V the
   `warpgroup_mma_wait(0)` retires every group the warpgroup issued.
3. O_g's writes (`o_tile.store`, all 4 warps of consumer g) come after that wait in every warp's program order,
   behind a `fence_async_shared` (async-proxy reads, then generic writes).
4. O_g is read by the TMA store after a second `fence_async_shared` and the warpgroup barrier Triton puts between
   the stores and the TMA issue (`bar.sync <id>, 128` in the PTX); the consumer waits for the store
   (`tma.store_wait(0)`) before it exits. No barrier between partitions is involved.

The K/V ring shares nothing across buffers; its stages are reused under the usual full/empty protocol: the
producer waits on k_empty[s] / v_empty[s] (count 2: one arrival per consumer) before loading block j into stage
s = j % STAGES, parity ((j // STAGES) & 1) ^ 1 so that a fresh barrier passes the first lap; a consumer arrives
on k_empty after the wait(1) that retired S(j) (and after the softmax: the branch above), on v_empty after the
wait(0) that retired P(j-1) V(j-1); every arrival is made by one thread after a barrier of the warpgroup.
The producer loads K(j), V(j) in block order; with any STAGES >= 1 every load it waits for is released by a
block the consumers can finish without it, so the ring cannot deadlock.

Variants (EPILOGUE), all the same kernel, for the benchmark: "shared" (O on Q), "separate" (O in its own tile,
declared distinct in the spec: the compile stops with "shared memory over capacity" where it does not fit),
"plain" (every buffer a plain allocation, no spec) and "registers" (O stored straight from the wgmma registers,
no staging tile at all: at D = 128 it also fits 3 stages).

The softmax takes the row max of the raw scores and scales it once per row; each exp2's argument is one FFMA
(qk * qk_scale - m), as in FA3 (a product per score before the max cost 62 more instructions per block and
thread, 1-10% of the kernel's speed at D=128 on the H100). max(x) * c = max(x * c) needs c > 0: the host wrapper
refuses an sm_scale that is not positive.

Measured (README "Performance"; H100, B4 S8192, two interleaved runs of `bash scripts/gpu_run.sh ws-ab`): 1.01-1.06x
cuDNN at D=128 and D=256, both masks, on Triton 3.6.0; 0.99-1.01x on 3.9.0.
"""

from __future__ import annotations


import torch
import triton
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (fence_async_shared, mbarrier, tma, warpgroup_mma,
                                                              warpgroup_mma_wait)
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor
from tlx_alias import _triton as compat

import tlx_alias.language as tlx
from tlx_alias.kernels._common import (HOPPER, SMEM_LIMIT, check_attention, compile_for, dtype_name, gl_dtype,
                                       online_softmax, report_row, softmax_scale, tensordesc)

__all__ = ["attention_ws_kernel", "attention", "make_launch", "compile_attention", "smem_plan", "most_stages",
           "default_config", "cpu_report", "EPILOGUES"]

ROWS = gl.constexpr(64)               # query rows per consumer warpgroup (one wgmma M)
BLOCK_M = gl.constexpr(2 * 64)        # query rows per program: two consumer warpgroups
# How O leaves the kernel (see the docstring): staged in Q's bytes, staged in a tile of its own (declared in the
# spec, or every buffer a plain allocation), or stored from registers.
O_ON_Q, O_SEPARATE, O_PLAIN, O_FROM_REGISTERS = gl.constexpr(0), gl.constexpr(1), gl.constexpr(2), gl.constexpr(3)
EPILOGUES = {"shared": 0, "separate": 1, "plain": 2, "registers": 3}


# ----------------------------------------------------------------------------------------------- producer

@gluon.jit
def _producer(q_desc, k_desc, v_desc, q_tiles, k_ring, v_ring, q_full, k_full, v_full, k_empty, v_empty, bh, q_row,
              n_blocks, BLOCK_N: gl.constexpr, STAGES: gl.constexpr):
    """One warp: Q of both consumers once, then K(j) and V(j) into stage j % STAGES once both consumers have
    released what that stage held STAGES blocks earlier (a fresh barrier passes the first lap: parity 1)."""
    for g in gl.static_range(2):
        mbarrier.expect(q_full.index(g), q_desc.block_type.nbytes)
        compat.tma_load(q_desc, [bh, q_row + g * ROWS, 0], q_full.index(g),
                        q_tiles.index(g).reshape(q_desc.block_type.shape))
    for j in range(n_blocks):
        stage = j % STAGES
        free = ((j // STAGES) & 1) ^ 1
        mbarrier.wait(k_empty.index(stage), free)
        mbarrier.expect(k_full.index(stage), k_desc.block_type.nbytes)
        compat.tma_load(k_desc, [bh, j * BLOCK_N, 0], k_full.index(stage),
                        k_ring.index(stage).reshape(k_desc.block_type.shape))
        mbarrier.wait(v_empty.index(stage), free)
        mbarrier.expect(v_full.index(stage), v_desc.block_type.nbytes)
        compat.tma_load(v_desc, [bh, j * BLOCK_N, 0], v_full.index(stage),
                        v_ring.index(stage).reshape(v_desc.block_type.shape))


# ----------------------------------------------------------------------------------------------- consumers

@gluon.jit
def _take_turn(turn, g: gl.constexpr, k, PINGPONG: gl.constexpr):
    """Wait until the other consumer has issued its wgmmas of turn k - 1 (consumer 0's turn 0 is pre-paid)."""
    if PINGPONG:
        mbarrier.wait(turn.index(g), k & 1)


@gluon.jit
def _pass_turn(turn, g: gl.constexpr, PINGPONG: gl.constexpr):
    """This consumer's wgmmas of the turn are issued: the other consumer may issue its own."""
    if PINGPONG:
        mbarrier.arrive(turn.index(1 - g), count=1)


@gluon.jit
def _consumer_block(j, g: gl.constexpr, acc, p, alpha, m_i, l_i, q, k_ring, v_ring, k_full, v_full, k_empty, v_empty,
                    turn, rows, seq_len, qk_scale, MASKED: gl.constexpr, CAUSAL: gl.constexpr,
                    BLOCK_N: gl.constexpr, STAGES: gl.constexpr, PINGPONG: gl.constexpr):
    """Block j >= 1 of consumer g. On entry acc holds the blocks < j - 1 scaled to the row max m(j - 2), and
    p = P(j - 1) (fp32, from m(j - 1)), alpha = alpha(j - 1) = exp2(m(j - 2) - m(j - 1)) come from block j - 1's
    softmax; on return acc holds the blocks < j scaled to m(j - 1), p = P(j), alpha = alpha(j)."""
    s_layout: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1],
                                                       instr_shape=[16, BLOCK_N, 16])
    stage = j % STAGES
    prev = (j - 1) % STAGES

    _take_turn(turn, g, j, PINGPONG)
    mbarrier.wait(k_full.index(stage), (j // STAGES) & 1)
    qk = warpgroup_mma(q, k_ring.index(stage).permute((1, 0)), gl.zeros([ROWS, BLOCK_N], gl.float32, s_layout),
                       use_acc=False, is_async=True)
    acc, p_op = _rescale_and_pack(acc, p, alpha, q.dtype)
    mbarrier.wait(v_full.index(prev), ((j - 1) // STAGES) & 1)
    acc = warpgroup_mma(p_op, v_ring.index(prev), acc, is_async=True)
    _pass_turn(turn, g, PINGPONG)

    # wgmma groups retire in order: this retires S(j) = Q K(j)^T and leaves P(j-1) V(j-1) on the tensor cores.
    qk = warpgroup_mma_wait(num_outstanding=1, deps=(qk, ))
    p, alpha, m_i, l_i = online_softmax(j, qk, m_i, l_i, rows, seq_len, qk_scale, MASKED, CAUSAL, BLOCK_N)
    # K(j) has no reader left in this warpgroup. The release sits behind a branch that is always taken (block j
    # holds keys): it ends the basic block, and ptxas does not hoist the wait below above it (in straight-line
    # code it does, above the exp2s: P(j-1) V(j-1) would retire before the softmax; see the docstring).
    if j * BLOCK_N < seq_len:
        mbarrier.arrive(k_empty.index(stage), count=1)
    acc = warpgroup_mma_wait(num_outstanding=0, deps=(acc, ))
    mbarrier.arrive(v_empty.index(prev), count=1)            # V(j-1) likewise
    return acc, p, alpha, m_i, l_i


@gluon.jit
def _rescale_and_pack(acc, p, alpha, dtype: gl.constexpr):
    """O *= alpha (O now scaled like P) and P as the register A operand of the P V wgmma."""
    acc = acc * gl.convert_layout(alpha, gl.SliceLayout(1, acc.type.layout))[:, None]
    p_op = gl.convert_layout(p.to(dtype), gl.DotOperandLayout(operand_index=0, parent=acc.type.layout, k_width=2))
    return acc, p_op


@gluon.jit
def _consumer(g: gl.constexpr, q_tiles, o_tiles, k_ring, v_ring, q_full, k_full, v_full, k_empty, v_empty, turn,
              o_desc, o_ptr, lse_ptr, bh, q_row, seq_len, qk_scale, n_full, n_blocks,  #
              HEAD_DIM: gl.constexpr, BLOCK_N: gl.constexpr, STAGES: gl.constexpr, CAUSAL: gl.constexpr,
              EPILOGUE: gl.constexpr, PINGPONG: gl.constexpr):
    """Consumer warpgroup g: query rows q_row + [64 g, 64 g + 64) against every K/V block, then O and LSE."""
    dtype: gl.constexpr = q_tiles.dtype
    s_layout: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1],
                                                       instr_shape=[16, BLOCK_N, 16])
    o_layout: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1],
                                                       instr_shape=[16, HEAD_DIM, 16])
    q = q_tiles.index(g)
    rows = q_row + g * ROWS + gl.arange(0, ROWS, layout=gl.SliceLayout(1, s_layout))
    m_i = gl.full([ROWS], -float("inf"), gl.float32, gl.SliceLayout(1, s_layout))
    l_i = gl.full([ROWS], 0.0, gl.float32, gl.SliceLayout(1, s_layout))
    mbarrier.wait(q_full.index(g), 0)

    # Block 0: S(0) and its softmax (masked: exact for a full block too); its P V is issued in block 1.
    _take_turn(turn, g, 0, PINGPONG)
    mbarrier.wait(k_full.index(0), 0)
    qk = warpgroup_mma(q, k_ring.index(0).permute((1, 0)), gl.zeros([ROWS, BLOCK_N], gl.float32, s_layout),
                       use_acc=False, is_async=True)
    _pass_turn(turn, g, PINGPONG)
    qk = warpgroup_mma_wait(num_outstanding=0, deps=(qk, ))
    mbarrier.arrive(k_empty.index(0), count=1)
    p, alpha, m_i, l_i = online_softmax(0, qk, m_i, l_i, rows, seq_len, qk_scale, True, CAUSAL, BLOCK_N)
    acc = gl.zeros([ROWS, HEAD_DIM], gl.float32, o_layout)

    for j in range(1, n_full):
        acc, p, alpha, m_i, l_i = _consumer_block(j, g, acc, p, alpha, m_i, l_i, q, k_ring, v_ring, k_full, v_full,
                                                  k_empty, v_empty, turn, rows, seq_len, qk_scale, False, CAUSAL,
                                                  BLOCK_N, STAGES, PINGPONG)
    for j in range(gl.maximum(n_full, 1), n_blocks):   # the causal diagonal and the block past S, if any
        acc, p, alpha, m_i, l_i = _consumer_block(j, g, acc, p, alpha, m_i, l_i, q, k_ring, v_ring, k_full, v_full,
                                                  k_empty, v_empty, turn, rows, seq_len, qk_scale, True, CAUSAL,
                                                  BLOCK_N, STAGES, PINGPONG)

    # The last P V (turn n_blocks).
    last = (n_blocks - 1) % STAGES
    _take_turn(turn, g, n_blocks, PINGPONG)
    acc, p_op = _rescale_and_pack(acc, p, alpha, dtype)
    mbarrier.wait(v_full.index(last), ((n_blocks - 1) // STAGES) & 1)
    acc = warpgroup_mma(p_op, v_ring.index(last), acc, is_async=True)
    _pass_turn(turn, g, PINGPONG)
    # Retires every wgmma of this warpgroup: Q_g has no reader left (the sharing argument, step 2).
    acc = warpgroup_mma_wait(num_outstanding=0, deps=(acc, ))
    mbarrier.arrive(v_empty.index(last), count=1)

    # ---- epilogue: O = acc / l; LSE = (m + log2 l) ln 2 ----
    l_o = gl.convert_layout(l_i, gl.SliceLayout(1, o_layout))
    o = (acc / l_o[:, None]).to(dtype)
    if EPILOGUE == O_FROM_REGISTERS:
        o_rows = q_row + g * ROWS + gl.arange(0, ROWS, layout=gl.SliceLayout(1, o_layout))
        o_cols = gl.arange(0, HEAD_DIM, layout=gl.SliceLayout(0, o_layout))
        offs = (bh * seq_len + o_rows)[:, None].to(gl.int64) * HEAD_DIM + o_cols[None, :]
        gl.store(o_ptr + offs, o, mask=(o_rows < seq_len)[:, None])
    else:
        o_tile = o_tiles.index(g)          # EPILOGUE == O_ON_Q: Q_g's bytes (steps 3 and 4 of the docstring)
        fence_async_shared()
        o_tile.store(o)
        fence_async_shared()
        compat.tma_store(o_desc, [bh, q_row + g * ROWS, 0], o_tile.reshape(o_desc.block_type.shape))
    lse = (m_i + gl.log2(l_i)) * 0.6931471805599453
    gl.store(lse_ptr + bh * seq_len + rows, lse, mask=rows < seq_len)
    if EPILOGUE != O_FROM_REGISTERS:
        tma.store_wait(pendings=0)


# ----------------------------------------------------------------------------------------------- kernel

@gluon.jit(do_not_specialize=["seq_len"])   # one binary for every S (the tests and the benchmark share it)
def attention_ws_kernel(q_desc, k_desc, v_desc, o_desc, o_ptr, lse_ptr, seq_len, sm_scale,  #
                        HEAD_DIM: gl.constexpr, BLOCK_N: gl.constexpr, STAGES: gl.constexpr, CAUSAL: gl.constexpr,
                        EPILOGUE: gl.constexpr, PINGPONG: gl.constexpr, CONSUMER_REGS: gl.constexpr,
                        PRODUCER_REGS: gl.constexpr):
    dtype: gl.constexpr = q_desc.dtype
    gl.static_assert(gl.num_warps() == 4, "the default partition is consumer warpgroup 0 (num_warps=4)")
    gl.static_assert(STAGES >= 1, "the K/V ring needs a stage")
    tile_layout: gl.constexpr = gl.NVMMASharedLayout.get_default_for([ROWS, HEAD_DIM], dtype)
    kv_layout: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BLOCK_N, HEAD_DIM], dtype)

    n_m = gl.cdiv(seq_len, BLOCK_M)
    if CAUSAL:
        start_m = n_m - 1 - gl.program_id(0)   # longest rows first: the last wave is made of short programs
    else:
        start_m = gl.program_id(0)
    bh = gl.program_id(1)
    q_row = start_m * BLOCK_M

    # ---- SMEM: one spec; O staged in Q's bytes (EPILOGUE == O_ON_Q); see the module docstring ----
    if EPILOGUE == O_PLAIN:    # no spec: Triton's allocator places every buffer
        q_tiles = gl.allocate_shared_memory(dtype, [2, ROWS, HEAD_DIM], tile_layout)
        o_tiles = gl.allocate_shared_memory(dtype, [2, ROWS, HEAD_DIM], tile_layout)
        k_ring = gl.allocate_shared_memory(dtype, [STAGES, BLOCK_N, HEAD_DIM], kv_layout)
        v_ring = gl.allocate_shared_memory(dtype, [STAGES, BLOCK_N, HEAD_DIM], kv_layout)
    else:
        spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
        q_tiles = tlx.local_alloc((ROWS, HEAD_DIM), dtype, 2, tlx.storage_kind.smem, reuse=spec, layout=tile_layout)
        k_ring = tlx.local_alloc((BLOCK_N, HEAD_DIM), dtype, STAGES, tlx.storage_kind.smem, reuse=spec,
                                 layout=kv_layout)
        v_ring = tlx.local_alloc((BLOCK_N, HEAD_DIM), dtype, STAGES, tlx.storage_kind.smem, reuse=spec,
                                 layout=kv_layout)
        k_group = tlx.reuse_group(k_ring, group_size=STAGES)
        v_group = tlx.reuse_group(v_ring, group_size=STAGES)
        if EPILOGUE == O_FROM_REGISTERS:
            o_tiles = q_tiles       # not used: O goes from registers to global memory
            spec.set_buffer_overlap(tlx.reuse_group(tlx.reuse_group(q_tiles, group_size=2), k_group, v_group,
                                                    group_type=tlx.reuse_group_type.distinct))
        else:
            o_tiles = tlx.local_alloc((ROWS, HEAD_DIM), dtype, 2, tlx.storage_kind.smem, reuse=spec,
                                      layout=tile_layout)
            if EPILOGUE == O_ON_Q:
                q_and_o = tlx.reuse_group(q_tiles, o_tiles, group_type=tlx.reuse_group_type.shared, group_size=2)
                spec.set_buffer_overlap(tlx.reuse_group(q_and_o, k_group, v_group,
                                                        group_type=tlx.reuse_group_type.distinct))
            else:
                spec.set_buffer_overlap(tlx.reuse_group(tlx.reuse_group(q_tiles, group_size=2),
                                                        tlx.reuse_group(o_tiles, group_size=2), k_group, v_group,
                                                        group_type=tlx.reuse_group_type.distinct))

    # ---- mbarriers (outside the spec) ----
    q_full = gl.allocate_shared_memory(gl.int64, [2, 1], mbarrier.MBarrierLayout())        # producer -> consumer g
    k_full = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())   # TMA -> consumers
    v_full = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    k_empty = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())  # consumers -> producer
    v_empty = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    turn = gl.allocate_shared_memory(gl.int64, [2, 1], mbarrier.MBarrierLayout())          # consumer <-> consumer
    for g in gl.static_range(2):
        mbarrier.init(q_full.index(g), count=1)
        mbarrier.init(turn.index(g), count=1)
    for s in gl.static_range(STAGES):
        mbarrier.init(k_full.index(s), count=1)
        mbarrier.init(v_full.index(s), count=1)
        mbarrier.init(k_empty.index(s), count=2)   # one arrival per consumer warpgroup
        mbarrier.init(v_empty.index(s), count=2)
    if PINGPONG:
        mbarrier.arrive(turn.index(0), count=1)    # consumer 0 issues first

    if CAUSAL:
        n_full = gl.minimum(q_row // BLOCK_N, seq_len // BLOCK_N)
        n_blocks = gl.cdiv(gl.minimum(q_row + BLOCK_M, seq_len), BLOCK_N)
    else:
        n_full = seq_len // BLOCK_N
        n_blocks = gl.cdiv(seq_len, BLOCK_N)
    # A launch has seq_len >= 1 (its grid has cdiv(seq_len, BLOCK_M) programs), so n_blocks >= 1 already (block 0
    # runs unconditionally): said here, the last P V's ring slot, (n_blocks - 1) % STAGES, is in range for any
    # seq_len (P5)
    n_blocks = gl.maximum(n_blocks, 1)
    qk_scale = sm_scale * 1.4426950408889634  # exp(x * sm_scale) == exp2(x * qk_scale)

    gl.warp_specialize([
        (_consumer, (0, q_tiles, o_tiles, k_ring, v_ring, q_full, k_full, v_full, k_empty, v_empty, turn, o_desc,
                     o_ptr, lse_ptr, bh, q_row, seq_len, qk_scale, n_full, n_blocks, HEAD_DIM, BLOCK_N, STAGES, CAUSAL,
                     EPILOGUE, PINGPONG)),
        (_consumer, (1, q_tiles, o_tiles, k_ring, v_ring, q_full, k_full, v_full, k_empty, v_empty, turn, o_desc,
                     o_ptr, lse_ptr, bh, q_row, seq_len, qk_scale, n_full, n_blocks, HEAD_DIM, BLOCK_N, STAGES, CAUSAL,
                     EPILOGUE, PINGPONG)),
        (_producer, (q_desc, k_desc, v_desc, q_tiles, k_ring, v_ring, q_full, k_full, v_full, k_empty, v_empty, bh,
                     q_row, n_blocks, BLOCK_N, STAGES)),
    ], [4, 1], [CONSUMER_REGS, PRODUCER_REGS])


# ----------------------------------------------------------------------------------------------- host

HEAD_DIMS = (64, 128, 256)


def default_config(head_dim: int) -> dict:
    """What `attention` runs per head dim (the most stages that fit with O on Q); every key can be overridden
    through `make_launch` / `attention`: BLOCK_N (keys per block), STAGES (K/V ring depth), epilogue (a key of
    EPILOGUES), PINGPONG (the turn barriers), CONSUMER_REGS (consumer 1; consumer 0 gets 504 - CONSUMER_REGS -
    PRODUCER_REGS), PRODUCER_REGS."""
    return {"BLOCK_N": 64 if head_dim == 256 else 128, "STAGES": {64: 6, 128: 3, 256: 2}.get(head_dim, 2),
            "epilogue": "shared", "PINGPONG": False, "CONSUMER_REGS": 240, "PRODUCER_REGS": 24}


def smem_plan(head_dim=128, stages=None, epilogue="shared", BLOCK_N=None, elem_bytes=2) -> dict:
    """Bytes of the buffers as the lowering lays them out (the spec; for "plain" what Triton allocates for them),
    mbarriers and Triton's capture area not included; `fits` compares with the sm_90 limit."""
    cfg = default_config(head_dim)
    stages, BLOCK_N = stages or cfg["STAGES"], BLOCK_N or cfg["BLOCK_N"]
    q = 2 * ROWS.value * head_dim * elem_bytes            # both consumers' Q tiles
    kv_stage = BLOCK_N * head_dim * elem_bytes             # one K (or V) tile
    o = {"shared": 0, "separate": q, "plain": q, "registers": 0}[epilogue]
    spec = q + o + 2 * stages * kv_stage
    return {"q_tiles": q, "o_tiles": q if epilogue != "registers" else 0, "o_extra": o, "kv_stage": kv_stage,
            "ring": 2 * stages * kv_stage, "spec": spec, "limit": SMEM_LIMIT, "fits": spec <= SMEM_LIMIT}


def most_stages(head_dim, epilogue, BLOCK_N=None, at_most=8) -> int:
    """The deepest K/V ring whose buffers fit (0 if none does)."""
    return max((s for s in range(1, at_most + 1) if smem_plan(head_dim, s, epilogue, BLOCK_N)["fits"]), default=0)


def make_launch(q, k, v, o, lse, causal: bool = False, sm_scale: float | None = None, **config):
    """Check the operands, build the TMA descriptors and the grid once; return a zero-argument callable that
    launches the kernel writing O into o and the LSE into lse (what `attention` and the benchmark call).
    `config` overrides `default_config(D)`."""
    check_attention(q, k, v, o, lse, "attention_ws", HEAD_DIMS)
    B, H, S, D = q.shape
    cfg = dict(default_config(D), **config)
    unknown = set(cfg) - set(default_config(D))
    if unknown or cfg["epilogue"] not in EPILOGUES:
        raise ValueError(f"attention_ws: unknown option(s) {sorted(unknown)} or epilogue {cfg['epilogue']!r}; "
                         f"options: {sorted(default_config(D))}, epilogues: {list(EPILOGUES)}")
    BLOCK_N = cfg["BLOCK_N"]
    sm_scale = softmax_scale(sm_scale, D, "attention_ws")
    tile_layout, kv_layout = _layouts(gl_dtype(q.dtype), D, BLOCK_N)
    rows = lambda t: t.view(B * H, S, D)  # noqa: E731  rank 3: TMA bounds-checks S per head
    q_desc = TensorDescriptor.from_tensor(rows(q), [1, ROWS.value, D], tile_layout)
    k_desc = TensorDescriptor.from_tensor(rows(k), [1, BLOCK_N, D], kv_layout)
    v_desc = TensorDescriptor.from_tensor(rows(v), [1, BLOCK_N, D], kv_layout)
    o_desc = TensorDescriptor.from_tensor(rows(o), [1, ROWS.value, D], tile_layout)
    grid = (triton.cdiv(S, BLOCK_M.value), B * H)
    args = (q_desc, k_desc, v_desc, o_desc, o, lse, S, sm_scale, D, BLOCK_N, cfg["STAGES"], bool(causal),
            EPILOGUES[cfg["epilogue"]], bool(cfg["PINGPONG"]), cfg["CONSUMER_REGS"], cfg["PRODUCER_REGS"])

    def launch():
        attention_ws_kernel[grid](*args, num_warps=4)

    return launch


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False, sm_scale: float | None = None,
              **config):
    """Flash-attention forward, warp-specialized. q, k, v: (B, H, S, D) contiguous CUDA tensors on an sm_90 GPU,
    fp16 or bf16, D in {64, 128, 256}, any S.

    Returns (o, lse): o like q, lse (B, H, S) fp32 = logsumexp over keys of q.k * sm_scale (natural log).
    `config` overrides `default_config(D)` (BLOCK_N, STAGES, epilogue, PINGPONG, CONSUMER_REGS, PRODUCER_REGS).
    """
    check_attention(q, k, v, None, None, "attention_ws", HEAD_DIMS)
    B, H, S, D = q.shape
    o = torch.empty_like(q)
    lse = torch.empty((B, H, S), dtype=torch.float32, device=q.device)
    make_launch(q, k, v, o, lse, causal, sm_scale, **config)()
    return o, lse


def _layouts(dtype, head_dim, BLOCK_N):
    return (gl.NVMMASharedLayout.get_default_for([1, ROWS.value, head_dim], dtype),
            gl.NVMMASharedLayout.get_default_for([1, BLOCK_N, head_dim], dtype))


def compile_attention(dtype=gl.bfloat16, head_dim=128, causal=False, epilogue="shared", stages=None, BLOCK_N=None,
                      pingpong=False, consumer_regs=240, producer_regs=24, target=HOPPER):
    """Compile attention_ws_kernel for `target` on this machine (no GPU). Returns `_common.Compiled`; raises
    TlxAliasError ("shared memory over capacity") for a spec that does not fit."""
    cfg = default_config(head_dim)
    BLOCK_N, stages = BLOCK_N or cfg["BLOCK_N"], stages or cfg["STAGES"]
    constexprs = {"HEAD_DIM": head_dim, "BLOCK_N": BLOCK_N, "STAGES": stages, "CAUSAL": causal,
                  "EPILOGUE": EPILOGUES[epilogue], "PINGPONG": pingpong, "CONSUMER_REGS": consumer_regs,
                  "PRODUCER_REGS": producer_regs}
    return compile_for(attention_ws_kernel, _signature(dtype, head_dim, BLOCK_N), constexprs, target=target,
                       num_warps=4)


def _signature(dtype, head_dim, BLOCK_N):
    """Triton's signature of the runtime arguments (what the JIT derives from make_launch's host objects)."""
    tile_layout, kv_layout = _layouts(dtype, head_dim, BLOCK_N)
    return {"q_desc": tensordesc(dtype, [1, ROWS.value, head_dim], tile_layout),
            "k_desc": tensordesc(dtype, [1, BLOCK_N, head_dim], kv_layout),
            "v_desc": tensordesc(dtype, [1, BLOCK_N, head_dim], kv_layout),
            "o_desc": tensordesc(dtype, [1, ROWS.value, head_dim], tile_layout),
            "o_ptr": "*" + dtype_name(dtype), "lse_ptr": "*fp32", "seq_len": "i32", "sm_scale": "fp32"}


# (dtype, head_dim, causal, epilogue, stages, BLOCK_N): the default of each head dim, and the variants the
# benchmark compares it with (at D = 128 and 256 a separate O tile fits one stage fewer).
CPU_CONFIGS = [
    (gl.bfloat16, 128, False, "shared", 3, 128),
    (gl.bfloat16, 128, False, "separate", 3, 128),   # over capacity
    (gl.bfloat16, 128, False, "separate", 2, 128),
    (gl.bfloat16, 128, True, "registers", 3, 128),
    (gl.float16, 256, True, "shared", 2, 64),
    (gl.float16, 256, False, "separate", 2, 64),     # over capacity
    (gl.bfloat16, 64, True, "shared", 6, 128),
    (gl.float16, 64, False, "separate", 6, 128),     # fits too: at D = 64 sharing buys no stage
]


def cpu_report(quick: bool = False, proof: bool = True) -> list:
    """Compile the main configurations for sm_90a; one row each (see _common.report_row)."""
    from tlx_alias.errors import TlxAliasError
    rows = []
    for dtype, d, causal, epilogue, stages, bn in CPU_CONFIGS[:3] if quick else CPU_CONFIGS:
        config = f"{dtype_name(dtype)} D={d} causal={causal} BN={bn} stages={stages} O={epilogue}"
        try:
            compiled = compile_attention(dtype, d, causal, epilogue, stages, bn)
            rows.append(report_row("hopper_attention_ws", config, compiled, proof=proof))
        except TlxAliasError as err:
            rows.append(report_row("hopper_attention_ws", config, None, err))
    return rows
