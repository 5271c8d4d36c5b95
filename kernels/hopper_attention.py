"""
Flash-attention forward on Hopper, with the output tile on top of Q
===================================================================

O = softmax(Q K^T * sm_scale [+ causal mask]) V and LSE = logsumexp of the scaled scores per query row, for
Q, K, V of shape (B, H, S, D), fp16 or bf16, D in {64, 128}, on sm_90a. One program computes BLOCK_M
query rows of one (batch, head):

* Q [BLOCK_M, D] is loaded once with TMA;
* K and V tiles [BLOCK_N, D] stream through a KV_STAGES-deep ring (TMA + one mbarrier per tile and stage);
* S = Q K^T and O += P V are async `warpgroup_mma`s; P goes from registers straight into the second wgmma
  as its A operand (no SMEM round trip);
* online softmax in base 2 (`exp2`, the scale folded into log2(e) * sm_scale; the row max of the raw scores
  scaled once per row, each exp2's argument one FFMA, so sm_scale must be positive);
* epilogue: O / l -> SMEM tile -> TMA store; LSE = (m + log2 l) * ln 2 with a masked store;
* with 3+ K/V stages the loop is software-pipelined (PIPELINE, `pipeline_default`): block j issues
  S(j) = Q K(j)^T and then P(j-1) V(j-1), waits for S(j) only (`warpgroup_mma_wait(1)`), and runs its
  softmax while P(j-1) V(j-1) is still on the tensor cores; the last P V is issued after the loop.

The descriptors see Q, K, V, O as rank-3 tensors (B*H, S, D) with [1, rows, D] boxes, so the TMA unit
bounds-checks S per head: any S works (rows past S are zero-filled on load and clipped on store; key
columns past S are masked to -inf).

Memory plan (BLOCK_M = BLOCK_N = 128, 16-bit data)
--------------------------------------------------

    D = 128:  Q 128x128x2 = 32 KiB, O staging 32 KiB, one K (or V) tile 32 KiB
              KV_STAGES=2: separate 32 + 32 + 2 x 64 = 192 KiB, with O on Q: 160 KiB
              KV_STAGES=3: separate 32 + 32 + 3 x 64 = 256 KiB  > 227 KiB (232448 B),
                           with O on Q: 224 KiB = 229376 B  -> fits: sharing buys the third K/V stage
    D = 64:   every tile 16 KiB; 3 stages: 128 KiB separate, 112 KiB shared

One `tlx.storage_alias_spec` holds all four allocations (SHARE_Q_O=True):

    distinct( shared(q_smem, o_smem),               # O is staged in Q's bytes
              shared(k_ring, group_size=KV_STAGES), # then the K ring
              shared(v_ring, group_size=KV_STAGES)) # then the V ring

    byte 0        32K        64K        96K       128K       160K       192K       224K   (D=128, 3 stages)
         | q_smem   | K[0]     | K[1]     | K[2]     | V[0]     | V[1]     | V[2]     |
         | o_smem   |

SHARE_Q_O=False builds the same kernel with distinct(q_smem, o_smem, k ring, v ring); at D=128 and 3
stages the lowering stops it with `TlxAliasError: ... shared memory over capacity`.

Why O may overwrite Q
---------------------
Q is read only by the S = Q K^T wgmmas. The epilogue runs after the loop, where
1. the Q load has completed (waited on before the first QK^T);
2. every wgmma has retired: each iteration waits for its QK^T with `warpgroup_mma_wait(0)` (which, wgmma
   groups retiring in order, also retires the previous P V; the pipelined loop ends every block with a
   `warpgroup_mma_wait(0)` too), and the final `warpgroup_mma_wait(0)` retires the last P V. A `thread_barrier` then makes both warpgroups of the CTA (8 warps) done before either writes;
3. `o_smem.store` is fenced for the async proxy (`fence_async_shared`) before the TMA store, and the
   program waits for the store (`tma.store_wait(0)`) before it exits. Nothing loads into Q afterwards.
The K/V ring is not involved in sharing: stage (j-1) % KV_STAGES is reloaded with block j+KV_STAGES-1 only
after the wait in iteration j has retired both QK^T(j-1) and PV(j-1), the last readers of that stage (the
pipelined loop: after its `warpgroup_mma_wait(0)`, which retires P(j-1) V(j-1); in this warpgroup; Triton's membar analysis puts a CTA barrier before the TMA load for the other one, which
the tests check in the PTX).

Measured on an H200 (bf16, B=4 H=32 S=8192, median TFLOP/s, causal counting half the flops): D=128
508 (O on Q, 3 stages) vs 502 (no sharing, 2 stages), causal 475 vs 471; D=64 370 vs 373; SDPA cuDNN 606
(causal 559), flash 342 (321). A third K/V stage buys ~1% for this non-warp-specialized kernel.

Main takeaways: sharing the dead Q tile with the output staging tile is free (no extra synchronization
beyond what the epilogue needs anyway) and at D=128 it is what makes a 3-stage K/V ring fit.
"""

from __future__ import annotations


import torch
import triton
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (fence_async_shared, mbarrier, tma, warpgroup_mma,
                                                              warpgroup_mma_wait)
from triton.experimental.gluon.language.nvidia.hopper import warpgroup_mma_init
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor
from tlx_alias import _triton as compat

import tlx_alias.language as tlx
from tlx_alias.kernels._common import (HOPPER, SMEM_LIMIT, check_attention, compile_for, gl_dtype, online_softmax,
                                       report_row, softmax_scale, tensordesc)

__all__ = ["hopper_attention_kernel", "attention", "make_launch", "compile_attention", "smem_plan", "cpu_report"]


def pipeline_default(kv_stages: int) -> bool:
    """Whether the K/V loop is software-pipelined (PIPELINE=True: the softmax of block j overlaps P V of
    block j-1) by default: only with 3 or more K/V stages. The pipelined loop reloads a stage one softmax
    later than the plain one, so with 2 stages the next K tile's load latency is exposed (measured on an
    H100, bf16 B=4 H=32 S=8192, causal: D=128 477 -> 461 TFLOP/s, D=64 349 -> 319); with 3 it gains
    0.7-3% (D=128 524 -> 528, D=64 376 -> 388)."""
    return kv_stages >= 3



# ----------------------------------------------------------------------------------------------- kernel

@gluon.jit
def _load_kv(k_desc, v_desc, k_ring, v_ring, k_ready, v_ready, bh, j, BLOCK_N: gl.constexpr,
             KV_STAGES: gl.constexpr, pred):
    """TMA-load K and V block j of head bh into stage j % KV_STAGES (each on its own barrier)."""
    s = j % KV_STAGES
    mbarrier.expect(k_ready.index(s), k_desc.block_type.nbytes, pred=pred)
    compat.tma_load(k_desc, [bh, j * BLOCK_N, 0], k_ready.index(s),
                                    k_ring.index(s).reshape(k_desc.block_type.shape), pred)
    mbarrier.expect(v_ready.index(s), v_desc.block_type.nbytes, pred=pred)
    compat.tma_load(v_desc, [bh, j * BLOCK_N, 0], v_ready.index(s),
                                    v_ring.index(s).reshape(v_desc.block_type.shape), pred)


@gluon.jit
def _softmax_block(j, qk, m_i, l_i, offs_m, seq_len, qk_scale,  #
                   MASKED: gl.constexpr, CAUSAL: gl.constexpr, BLOCK_N: gl.constexpr, p_layout: gl.constexpr,
                   dtype: gl.constexpr):
    """Online softmax of block j's scores (`_common.online_softmax`), P as the A operand of P V."""
    p, alpha, m_new, l_i = online_softmax(j, qk, m_i, l_i, offs_m, seq_len, qk_scale, MASKED, CAUSAL, BLOCK_N)
    return gl.convert_layout(p.to(dtype), p_layout), alpha, m_new, l_i


@gluon.jit
def _attn_block(j, acc, m_i, l_i, q_smem, k_ring, v_ring, k_ready, v_ready, k_desc, v_desc, bh, n_blocks,
                offs_m, seq_len, qk_scale,  #
                MASKED: gl.constexpr, CAUSAL: gl.constexpr, BLOCK_N: gl.constexpr, KV_STAGES: gl.constexpr,
                s_layout: gl.constexpr, p_layout: gl.constexpr):
    """One K/V block: S = Q K^T, online softmax, O = O * alpha + P V (left in flight)."""
    dtype: gl.constexpr = q_smem.dtype
    BLOCK_M: gl.constexpr = q_smem.shape[0]
    stage = j % KV_STAGES
    phase = (j // KV_STAGES) & 1

    mbarrier.wait(k_ready.index(stage), phase)
    qk = warpgroup_mma(q_smem, k_ring.index(stage).permute((1, 0)), gl.zeros((BLOCK_M, BLOCK_N), gl.float32,
                                                                            s_layout),
                       use_acc=False, is_async=True)
    # Retires QK^T(j) and, groups retiring in order, PV(j-1): O is readable, K/V[stage j-1] are free.
    qk, acc = warpgroup_mma_wait(num_outstanding=0, deps=(qk, acc))
    _load_kv(k_desc, v_desc, k_ring, v_ring, k_ready, v_ready, bh, j + KV_STAGES - 1, BLOCK_N, KV_STAGES,
             j + KV_STAGES - 1 < n_blocks)

    p_op, alpha, m_new, l_i = _softmax_block(j, qk, m_i, l_i, offs_m, seq_len, qk_scale, MASKED, CAUSAL, BLOCK_N,
                                             p_layout, dtype)
    acc = acc * gl.convert_layout(alpha, gl.SliceLayout(1, acc.type.layout))[:, None]

    mbarrier.wait(v_ready.index(stage), phase)
    acc = warpgroup_mma(p_op, v_ring.index(stage), acc, is_async=True)
    return acc, m_new, l_i


@gluon.jit
def _attn_block_pipelined(j, acc, p_prev, m_i, l_i, q_smem, k_ring, v_ring, k_ready, v_ready, k_desc, v_desc, bh,
                          n_blocks, offs_m, seq_len, qk_scale,  #
                          MASKED: gl.constexpr, CAUSAL: gl.constexpr, BLOCK_N: gl.constexpr,
                          KV_STAGES: gl.constexpr, s_layout: gl.constexpr, p_layout: gl.constexpr):
    """Block j >= 1, software-pipelined (PIPELINE=True): issue S(j) = Q K(j)^T, then O += P(j-1) V(j-1);
    the softmax of block j runs while P V is still on the tensor cores. On entry acc holds the blocks
    < j-1 scaled to m(j-1), p_prev = P(j-1); on return acc holds the blocks < j scaled to m(j)."""
    dtype: gl.constexpr = q_smem.dtype
    BLOCK_M: gl.constexpr = q_smem.shape[0]
    stage = j % KV_STAGES
    prev = (j - 1) % KV_STAGES

    mbarrier.wait(k_ready.index(stage), (j // KV_STAGES) & 1)
    qk = warpgroup_mma(q_smem, k_ring.index(stage).permute((1, 0)), gl.zeros((BLOCK_M, BLOCK_N), gl.float32,
                                                                            s_layout),
                       use_acc=False, is_async=True)
    mbarrier.wait(v_ready.index(prev), ((j - 1) // KV_STAGES) & 1)
    acc = warpgroup_mma(p_prev, v_ring.index(prev), acc, is_async=True)
    # Groups retire in order: this retires S(j) and leaves P(j-1) V(j-1) in flight during the softmax.
    qk = warpgroup_mma_wait(num_outstanding=1, deps=(qk, ))
    p, alpha, m_new, l_i = _softmax_block(j, qk, m_i, l_i, offs_m, seq_len, qk_scale, MASKED, CAUSAL, BLOCK_N,
                                          p_layout, dtype)
    # Retires P(j-1) V(j-1): O is readable and K/V[stage j-1] (read by S(j-1) and P(j-1) V(j-1)) are free.
    acc = warpgroup_mma_wait(num_outstanding=0, deps=(acc, ))
    _load_kv(k_desc, v_desc, k_ring, v_ring, k_ready, v_ready, bh, j + KV_STAGES - 1, BLOCK_N, KV_STAGES,
             j + KV_STAGES - 1 < n_blocks)
    acc = acc * gl.convert_layout(alpha, gl.SliceLayout(1, acc.type.layout))[:, None]
    return acc, p, m_new, l_i


@gluon.jit
def hopper_attention_kernel(q_desc, k_desc, v_desc, o_desc, lse_ptr, seq_len, sm_scale,  #
                            HEAD_DIM: gl.constexpr, BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr,
                            KV_STAGES: gl.constexpr, CAUSAL: gl.constexpr, SHARE_Q_O: gl.constexpr,
                            PIPELINE: gl.constexpr, num_warps: gl.constexpr):
    dtype: gl.constexpr = q_desc.dtype
    gl.static_assert(KV_STAGES >= 2, "the K/V ring needs at least 2 stages")
    gl.static_assert(BLOCK_M % BLOCK_N == 0, "the causal diagonal is walked in whole K/V blocks")
    gl.static_assert(BLOCK_M == 16 * num_warps, "each warp owns 16 query rows (warps stacked along M)")
    start_m = gl.program_id(0)
    bh = gl.program_id(1)

    # ---- layouts: wgmma accumulators with warps along M; P feeds the second wgmma from registers ----
    s_layout: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[num_warps, 1],
                                                       instr_shape=[16, BLOCK_N, 16])
    o_layout: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[num_warps, 1],
                                                       instr_shape=[16, HEAD_DIM, 16])
    p_layout: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=o_layout, k_width=2)
    tile_layout: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BLOCK_M, HEAD_DIM], dtype)
    kv_layout: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BLOCK_N, HEAD_DIM], dtype)

    # ---- memory: O staging on top of Q, then the K and V rings (see the module docstring) ----
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    q_smem = tlx.local_alloc((BLOCK_M, HEAD_DIM), dtype, 1, tlx.storage_kind.smem, reuse=spec, layout=tile_layout)
    o_smem = tlx.local_alloc((BLOCK_M, HEAD_DIM), dtype, 1, tlx.storage_kind.smem, reuse=spec, layout=tile_layout)
    k_ring = tlx.local_alloc((BLOCK_N, HEAD_DIM), dtype, KV_STAGES, tlx.storage_kind.smem, reuse=spec,
                             layout=kv_layout)
    v_ring = tlx.local_alloc((BLOCK_N, HEAD_DIM), dtype, KV_STAGES, tlx.storage_kind.smem, reuse=spec,
                             layout=kv_layout)
    if SHARE_Q_O:
        spec.set_buffer_overlap(
            tlx.reuse_group(tlx.reuse_group(q_smem, o_smem, group_type=tlx.reuse_group_type.shared),
                            tlx.reuse_group(k_ring, group_size=KV_STAGES),
                            tlx.reuse_group(v_ring, group_size=KV_STAGES), group_type=tlx.reuse_group_type.distinct))
    else:
        spec.set_buffer_overlap(
            tlx.reuse_group(q_smem, o_smem, tlx.reuse_group(k_ring, group_size=KV_STAGES),
                            tlx.reuse_group(v_ring, group_size=KV_STAGES), group_type=tlx.reuse_group_type.distinct))

    q_bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    k_ready = gl.allocate_shared_memory(gl.int64, [KV_STAGES, 1], mbarrier.MBarrierLayout())
    v_ready = gl.allocate_shared_memory(gl.int64, [KV_STAGES, 1], mbarrier.MBarrierLayout())
    mbarrier.init(q_bar, count=1)
    for i in gl.static_range(KV_STAGES):
        mbarrier.init(k_ready.index(i), count=1)
        mbarrier.init(v_ready.index(i), count=1)

    # ---- which K/V blocks this program visits: the first n_full need no mask ----
    if CAUSAL:
        hi = gl.minimum((start_m + 1) * BLOCK_M, seq_len)
        n_full = gl.minimum((start_m * BLOCK_M) // BLOCK_N, seq_len // BLOCK_N)
    else:
        hi = seq_len
        n_full = seq_len // BLOCK_N
    # A launch has seq_len >= 1 (its grid has cdiv(seq_len, BLOCK_M) programs), so n_full >= 0 and n_blocks >= 1
    # already: said here, every ring slot (j % KV_STAGES, the last P V's) is in range for any seq_len (P5)
    n_full = gl.maximum(n_full, 0)
    n_blocks = gl.maximum(gl.cdiv(hi, BLOCK_N), 1)

    # ---- Q once, and the first KV_STAGES-1 K/V blocks ----
    q = q_smem.index(0)
    mbarrier.expect(q_bar, q_desc.block_type.nbytes)
    compat.tma_load(q_desc, [bh, start_m * BLOCK_M, 0], q_bar, q.reshape(q_desc.block_type.shape))
    for i in gl.static_range(KV_STAGES - 1):
        _load_kv(k_desc, v_desc, k_ring, v_ring, k_ready, v_ready, bh, i, BLOCK_N, KV_STAGES, i < n_blocks)

    offs_m = start_m * BLOCK_M + gl.arange(0, BLOCK_M, layout=gl.SliceLayout(1, s_layout))
    m_i = gl.full([BLOCK_M], -float("inf"), gl.float32, gl.SliceLayout(1, s_layout))
    l_i = gl.full([BLOCK_M], 0.0, gl.float32, gl.SliceLayout(1, s_layout))
    acc = warpgroup_mma_init(gl.zeros((BLOCK_M, HEAD_DIM), gl.float32, o_layout))
    qk_scale = sm_scale * 1.4426950408889634  # exp(x * sm_scale) == exp2(x * qk_scale)
    mbarrier.wait(q_bar, 0)

    if PIPELINE:
        acc = gl.zeros((BLOCK_M, HEAD_DIM), gl.float32, o_layout)  # carried as a plain tensor (retired each block)
        # Block 0: S(0) and its softmax (masked: exact for a full block too); its P V is issued in block 1.
        mbarrier.wait(k_ready.index(0), 0)
        qk = warpgroup_mma(q, k_ring.index(0).permute((1, 0)), gl.zeros((BLOCK_M, BLOCK_N), gl.float32, s_layout),
                           use_acc=False, is_async=True)
        qk = warpgroup_mma_wait(num_outstanding=0, deps=(qk, ))
        _load_kv(k_desc, v_desc, k_ring, v_ring, k_ready, v_ready, bh, KV_STAGES - 1, BLOCK_N, KV_STAGES,
                 KV_STAGES - 1 < n_blocks)
        p, alpha, m_i, l_i = _softmax_block(0, qk, m_i, l_i, offs_m, seq_len, qk_scale, True, CAUSAL, BLOCK_N,
                                            p_layout, dtype)
        for j in range(1, n_full):
            acc, p, m_i, l_i = _attn_block_pipelined(j, acc, p, m_i, l_i, q, k_ring, v_ring, k_ready, v_ready,
                                                     k_desc, v_desc, bh, n_blocks, offs_m, seq_len, qk_scale,
                                                     False, CAUSAL, BLOCK_N, KV_STAGES, s_layout, p_layout)
        for j in range(gl.maximum(n_full, 1), n_blocks):  # the causal diagonal and the block past S, if any
            acc, p, m_i, l_i = _attn_block_pipelined(j, acc, p, m_i, l_i, q, k_ring, v_ring, k_ready, v_ready,
                                                     k_desc, v_desc, bh, n_blocks, offs_m, seq_len, qk_scale,
                                                     True, CAUSAL, BLOCK_N, KV_STAGES, s_layout, p_layout)
        last = (n_blocks - 1) % KV_STAGES
        mbarrier.wait(v_ready.index(last), ((n_blocks - 1) // KV_STAGES) & 1)
        acc = warpgroup_mma(p, v_ring.index(last), acc, is_async=True)
    else:
        for j in range(0, n_full):
            acc, m_i, l_i = _attn_block(j, acc, m_i, l_i, q, k_ring, v_ring, k_ready, v_ready, k_desc, v_desc, bh,
                                        n_blocks, offs_m, seq_len, qk_scale, False, CAUSAL, BLOCK_N, KV_STAGES,
                                        s_layout, p_layout)
        for j in range(n_full, n_blocks):  # the causal diagonal and the block past S, if any
            acc, m_i, l_i = _attn_block(j, acc, m_i, l_i, q, k_ring, v_ring, k_ready, v_ready, k_desc, v_desc, bh,
                                        n_blocks, offs_m, seq_len, qk_scale, True, CAUSAL, BLOCK_N, KV_STAGES,
                                        s_layout, p_layout)

    # ---- epilogue: (2) retire the last P V; every warpgroup is done with Q before O overwrites it ----
    acc = warpgroup_mma_wait(num_outstanding=0, deps=(acc, ))
    compat.barrier()
    l_o = gl.convert_layout(l_i, gl.SliceLayout(1, o_layout))
    o = o_smem.index(0)
    o.store((acc / l_o[:, None]).to(dtype))  # (3)
    fence_async_shared()
    compat.tma_store(o_desc, [bh, start_m * BLOCK_M, 0], o.reshape(o_desc.block_type.shape))

    lse = (m_i + gl.log2(l_i)) * 0.6931471805599453
    gl.store(lse_ptr + bh * seq_len + offs_m, lse, mask=offs_m < seq_len)
    tma.store_wait(pendings=0)
    mbarrier.invalidate(q_bar)
    for i in gl.static_range(KV_STAGES):
        mbarrier.invalidate(k_ready.index(i))
        mbarrier.invalidate(v_ready.index(i))


# ----------------------------------------------------------------------------------------------- host


def default_config(head_dim: int) -> dict:
    """Tile sizes used by `attention` (8 warps: two warpgroups, 64 query rows each); PIPELINE None means
    `pipeline_default(KV_STAGES)`."""
    return {"BLOCK_M": 128, "BLOCK_N": 128, "KV_STAGES": 2, "num_warps": 8, "PIPELINE": None}


def _layouts(dtype, head_dim, BLOCK_M, BLOCK_N):
    return (gl.NVMMASharedLayout.get_default_for([1, BLOCK_M, head_dim], dtype),
            gl.NVMMASharedLayout.get_default_for([1, BLOCK_N, head_dim], dtype))


def smem_plan(head_dim=128, kv_stages=2, share=True, BLOCK_M=128, BLOCK_N=128, elem_bytes=2) -> dict:
    """The spec's size in bytes as the lowering computes it (mbarriers not included)."""
    tile, kv = BLOCK_M * head_dim * elem_bytes, BLOCK_N * head_dim * elem_bytes
    ring = 2 * kv_stages * kv
    return {"q_tile": tile, "o_tile": tile, "kv_tile": kv, "ring": ring,
            "spec": (tile if share else 2 * tile) + ring, "limit": SMEM_LIMIT}


def make_launch(q, k, v, o, lse, causal: bool = False, sm_scale: float | None = None, *, share: bool = True,
                **config):
    """Check the operands, build the TMA descriptors and the grid once; return a zero-argument callable
    that launches the kernel writing O into o and the LSE into lse (what `attention` and the benchmark call)."""
    check_attention(q, k, v, o, lse, "attention", (64, 128))
    B, H, S, D = q.shape
    cfg = dict(default_config(D), **config)
    BLOCK_M, BLOCK_N = cfg["BLOCK_M"], cfg["BLOCK_N"]
    sm_scale = softmax_scale(sm_scale, D, "attention")
    tile_layout, kv_layout = _layouts(gl_dtype(q.dtype), D, BLOCK_M, BLOCK_N)
    rows = lambda t: t.view(B * H, S, D)  # noqa: E731  rank 3: TMA bounds-checks S per head
    q_desc = TensorDescriptor.from_tensor(rows(q), [1, BLOCK_M, D], tile_layout)
    k_desc = TensorDescriptor.from_tensor(rows(k), [1, BLOCK_N, D], kv_layout)
    v_desc = TensorDescriptor.from_tensor(rows(v), [1, BLOCK_N, D], kv_layout)
    o_desc = TensorDescriptor.from_tensor(rows(o), [1, BLOCK_M, D], tile_layout)
    grid = (triton.cdiv(S, BLOCK_M), B * H)
    pipeline = pipeline_default(cfg["KV_STAGES"]) if cfg["PIPELINE"] is None else bool(cfg["PIPELINE"])

    def launch():
        hopper_attention_kernel[grid](q_desc, k_desc, v_desc, o_desc, lse, S, sm_scale, D, BLOCK_M, BLOCK_N,
                                      cfg["KV_STAGES"], bool(causal), share, pipeline,
                                      num_warps=cfg["num_warps"])

    return launch


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False, sm_scale: float | None = None,
              *, share: bool = True, **config):
    """Flash-attention forward. q, k, v: (B, H, S, D) contiguous CUDA tensors, fp16 or bf16, D in {64, 128};
    any S (TMA bounds-checks each head's rows).

    Returns (o, lse): o like q, lse (B, H, S) fp32 = logsumexp over keys of q.k * sm_scale (natural log).
    `share=False` builds the variant whose O staging tile does not alias Q. `config` overrides BLOCK_M,
    BLOCK_N, KV_STAGES, num_warps, PIPELINE (see default_config).
    """
    check_attention(q, k, v, None, None, "attention", (64, 128))
    B, H, S, D = q.shape
    o = torch.empty_like(q)
    lse = torch.empty((B, H, S), dtype=torch.float32, device=q.device)
    make_launch(q, k, v, o, lse, causal, sm_scale, share=share, **config)()
    return o, lse


def compile_attention(dtype=gl.bfloat16, head_dim=128, causal=False, share=True, kv_stages=2, BLOCK_M=128,
                      BLOCK_N=128, num_warps=8, target=HOPPER, pipeline=None):
    """Compile hopper_attention_kernel for `target` on this machine (no GPU). Returns `_common.Compiled`."""
    tile_layout, kv_layout = _layouts(dtype, head_dim, BLOCK_M, BLOCK_N)
    signature = {"q_desc": tensordesc(dtype, [1, BLOCK_M, head_dim], tile_layout),
                 "k_desc": tensordesc(dtype, [1, BLOCK_N, head_dim], kv_layout),
                 "v_desc": tensordesc(dtype, [1, BLOCK_N, head_dim], kv_layout),
                 "o_desc": tensordesc(dtype, [1, BLOCK_M, head_dim], tile_layout),
                 "lse_ptr": "*fp32", "seq_len": "i32", "sm_scale": "fp32"}
    constexprs = {"HEAD_DIM": head_dim, "BLOCK_M": BLOCK_M, "BLOCK_N": BLOCK_N, "KV_STAGES": kv_stages,
                  "CAUSAL": causal, "SHARE_Q_O": share,
                  "PIPELINE": pipeline_default(kv_stages) if pipeline is None else bool(pipeline),
                  "num_warps": num_warps}
    return compile_for(hopper_attention_kernel, signature, constexprs, target=target, num_warps=num_warps)


CPU_CONFIGS = [  # (dtype, head_dim, causal, kv_stages, share)
    (gl.bfloat16, 128, False, 2, True),
    (gl.bfloat16, 128, False, 2, False),
    (gl.bfloat16, 128, True, 3, True),    # the third K/V stage only fits with O on Q
    (gl.bfloat16, 128, True, 3, False),   # over capacity
    (gl.float16, 64, True, 2, True),
    (gl.float16, 64, False, 3, False),
]


def cpu_report(quick: bool = False, proof: bool = True) -> list:
    """Compile the main configurations for sm_90a; one row each (see _common.report_row)."""
    from tlx_alias.errors import TlxAliasError
    rows = []
    for dtype, d, causal, stages, share in CPU_CONFIGS[:4] if quick else CPU_CONFIGS:
        config = f"{dtype} D={d} causal={causal} kv_stages={stages} share={share}"
        try:
            rows.append(report_row("hopper_attention", config,
                                   compile_attention(dtype, d, causal, share, stages), proof=proof))
        except TlxAliasError as err:
            rows.append(report_row("hopper_attention", config, None, err))
    return rows
