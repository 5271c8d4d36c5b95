"""Flash-attention forward for Blackwell (sm_100a): seed 000's TMEM tree, written with `storage_alias_spec`.

The kernel follows the warp-specialized design of upstream Gluon's `python/examples/gluon/01-attention-forward.py`
(triton-lang/triton), simplified to one tile per program: a Q tile of BLOCK_M = 256 rows is split into two row
groups of 128 (`g = 0, 1`, seed 000's NUM_MMA_GROUPS), each with its own softmax partition, so that tcgen05
computes the scores of one group while the other group's softmax runs.

    partition     warps  regs  does
    correction    4      rest  O_g *= alpha_g; at the end O_g / l_g -> SMEM -> TMA store, and lse      (default)
    softmax g=0   4      192   S_0 -> alpha_0, P_0 (S sub-tiles), finally l_0, m_0                    (worker)
    softmax g=1   4      192   same for group 1                                                       (worker)
    mma           1      24    S_g = Q_g K_j^T;  O_g += P_g V_j (P read from TMEM, one MMA per sub-tile) (worker)
    load          1      24    TMA: Q_0, Q_1 once, then K_j, V_j through a NUM_KV_BUFFERS-slot ring     (worker)

Memory map
----------
TMEM (128 lanes x 512 columns of 32 bits). One `storage_alias_spec` holds the softmax state, seed 000's tree:

    tmem.set_buffer_overlap(reuse_group(qk_tiles,
                                        reuse_group(reuse_group(p_tiles, group_size=S), alpha_tiles, l_tiles, m_tiles,
                                                    group_type=distinct),
                                        group_type=shared))

    columns of row group g (BLOCK_N = 128, S = NUM_MMA_SLICES = 2; 16-bit P packed two per column):
        [128 g, 128 g + 128)
        qk_tiles[g]     |<------------------ S_g  128 x 128 fp32 = 128 cols ------------------>|
        p_tiles[2g+s]   |P_g,0 32|P_g,1 32|                                        P_g = 64 cols
        alpha_tiles[g]                    |a|                                      col 128 g + 64
        l_tiles[g]                          |l|                                    col 128 g + 65
        m_tiles[g]                            |m|                                  col 128 g + 66
    o_tmem (plain allocation): 2 x 128 x HEAD_DIM fp32 = 2 * HEAD_DIM cols.

    per group: shared(qk 128, distinct(P S x (BLOCK_N / S) / 2 = 64, alpha 1, l 1, m 1) = 67) = 128 cols
    total = 2 x 128 + 2 x HEAD_DIM = 384 (HEAD_DIM 64; allocated as 512) or 512 (HEAD_DIM 128)   [tmem_size 512]
    as separate allocations: 2 x 128 + 2 x 64 + 3 x 2 + 2 x HEAD_DIM = 518 / 646 > 512 (tmem_size 524 / 652):
    does not fit. (triton 3.6 compiles that plan without a tcgen05.alloc instead of rejecting it.)

    Why S can share its columns with P, alpha, l and m (the synchronisation the tree relies on):
    * P_g overwrites S_g's first 64 columns only after the softmax has loaded every sub-tile of S_g into
      registers; the next QK MMA into S_g is issued by the MMA warp after the PV MMAs that read P_g, in the same
      in-order tcgen05 stream (upstream relies on the same ordering in `_borrow_s_as_p`).
    * alpha_g(j) (column 64) is read by the correction before S_g(j+1) lands: PV_g(j) waits for `o_empty[g]`,
      which the correction arrives only after it has loaded alpha_g(j) and rescaled O_g, and QK_g(j+1) is
      issued after PV_g(j). (At j = 0, O_g is empty and alpha_g(0) is not read.)
    * l_g and m_g are written once, after the MMA warp's final `tcgen05_commit(s_ready[g])`: no MMA is left.

SMEM (227 KB per block). One `storage_alias_spec` holds the Q tiles and the output staging tiles:

    smem.set_buffer_overlap(reuse_group(q_tiles, o_tiles, group_type=shared))
        q_tiles[g], o_tiles[g]   128 x HEAD_DIM x 2 bytes each, the same bytes      2 x 32 KB (HEAD_DIM 128)
    kv_smem   plain ring, K_j and V_j alternate: NUM_KV_BUFFERS x 128 x HEAD_DIM x 2      3 x 32 KB (HEAD_DIM 128)
    mbarriers (2 + 2 NUM_KV_BUFFERS + 12) x 8 bytes; the rest of `metadata.shared` is Triton's layout scratch.

    HEAD_DIM 128, 3 KV slots: 65536 + 98304 = 163840 data bytes (metadata.shared 164300); with separate Q and
    output tiles 229376 (229836). With the tree 5 KV slots fit (229376 data bytes); separately they do not.
    HEAD_DIM 64, 6 KV slots: 32768 + 98304 = 131072 (131564); separate 163840 (164332).

    Why Q and the output tile can share: O_g is staged in SMEM only after `o_ready[g]` of the last PV_g, a
    tcgen05 commit that also covers every earlier QK MMA reading Q_g; Q is loaded once per program.

Upstream's hand-aliased kernel for the same tile (see `upstream_design()` for the arithmetic read from its
allocation code): TMEM 2 x 128 (S0, S1) + 2 x HEAD_DIM (O0, O1), P/alpha/m/l borrowed from S at the same columns
as this tree: equal. SMEM: 2 Q + NUM_KV_BUFFERS K/V + 2 separate output staging tiles: this kernel is smaller by
the two staging tiles, 2 x 128 x HEAD_DIM x 2 bytes (65536 for HEAD_DIM 128, 32768 for HEAD_DIM 64).

Simplifications against upstream: one tile per program (no persistent scheduler), N_CTX a multiple of 256, the
causal mask applied on every KV block (no loop split at the diagonal), no exp2 turnstile / FMA2 / split QK loads,
and the correction partition issues the TMA stores itself (no epilogue warp). `attention()` runs only on a
Blackwell GPU; `compile_attention()` and `cpu_report()` compile it for sm_100a on any machine.
"""

from __future__ import annotations

import math

from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.blackwell import (TensorMemoryLayout, allocate_tensor_memory,
                                                                 fence_async_shared, mbarrier,
                                                                 tcgen05_commit, tcgen05_mma, tma)
from tlx_alias import _triton as compat

import tlx_alias.language as tlx
from tlx_alias.kernels._common import (BLACKWELL, HALF_DTYPES, Compiled, blackwell_row, compile_for, dtype_name,
                                       gl_dtype, tensordesc)

__all__ = ["attention", "attention_fwd_kernel", "cpu_report", "compile_attention", "upstream_design",
           "tmem_columns", "smem_bytes"]

BLOCK_M = 256  # two row groups of 128 (seed 000's NUM_MMA_GROUPS = 2)
BLOCK_N = 128
SPLIT_M = BLOCK_M // 2

# ===-----------------------------------------------------------------------===#
# Partitions
# ===-----------------------------------------------------------------------===#


@gluon.jit
def _kv_slot(step, NUM_KV_BUFFERS: gl.constexpr):
    """Ring position of the `step`-th K/V load (K_j is step 2j, V_j is step 2j + 1): slot and barrier phase."""
    return step % NUM_KV_BUFFERS, (step // NUM_KV_BUFFERS) & 1


@gluon.jit
def _attn_load(desc_q, desc_k, desc_v, q_tiles, kv_smem, q_ready, kv_ready, kv_empty, q_row, kv_row, n_kv,
               BLOCK_N: gl.constexpr, NUM_KV_BUFFERS: gl.constexpr):
    # Q for both row groups, once. q_tiles[g] later holds the output tile (o_tiles[g], same bytes).
    for g in gl.static_range(2):
        mbarrier.expect(q_ready.index(g), desc_q.block_type.nbytes)
        compat.tma_load(desc_q, [q_row + g * desc_q.block_type.shape[0], 0], q_ready.index(g),
                                        q_tiles.index(g))
    for j in range(n_kv):
        for which in gl.static_range(2):  # 0: K_j, 1: V_j
            slot, phase = _kv_slot(2 * j + which, NUM_KV_BUFFERS)
            # Wait until the MMAs that read this slot's previous tile have completed (fresh barrier: parity 1
            # passes at once).
            mbarrier.wait(kv_empty.index(slot), phase ^ 1)
            bar = kv_ready.index(slot)
            mbarrier.expect(bar, desc_k.block_type.nbytes)
            if which == 0:
                compat.tma_load(desc_k, [kv_row + j * BLOCK_N, 0], bar, kv_smem.index(slot))
            else:
                compat.tma_load(desc_v, [kv_row + j * BLOCK_N, 0], bar, kv_smem.index(slot))


@gluon.jit
def _attn_pv(g: gl.constexpr, j, v_slot, kv_smem, p_tiles, o_tmem, p_ready, o_ready, o_empty, kv_empty,
             BLOCK_N: gl.constexpr, S: gl.constexpr, RELEASE_V: gl.constexpr):
    """O_g (+)= P_g V_j as S MMAs over P's sub-tiles (P read from TMEM, V's rows sliced to match).

    `o_ready[g]` completes when all S MMAs have; the second group's last MMA also frees V's ring slot.
    """
    mbarrier.wait(p_ready.index(g), j & 1)  # softmax g has read S_g and written P_g, alpha_g
    # From step 1 on, the correction must have rescaled O_g by alpha_g(j) (and read alpha_g) first.
    mbarrier.wait(o_empty.index(g), (j - 1) & 1, pred=j > 0)
    BN_S: gl.constexpr = BLOCK_N // S
    v = kv_smem.index(v_slot)
    o = o_tmem.index(g)
    for s in gl.static_range(S):
        p_sub = p_tiles.index(g * S + s)        # sub-tile s of P_g: K columns [s*BN_S, (s+1)*BN_S)
        v_sub = v.slice(s * BN_S, BN_S, dim=0)  # the matching rows of V
        if s == 0:
            use_acc = j > 0
        else:
            use_acc = True
        # Every sub-tile MMA arrives on o_ready[g] (initialised with count S): an MMA without barriers would be
        # synchronous in triton 3.6 (the MMA warp would wait for it).
        if RELEASE_V and s == S - 1:
            tcgen05_mma(p_sub, v_sub, o, use_acc=use_acc, mbarriers=[o_ready.index(g), kv_empty.index(v_slot)])
        else:
            tcgen05_mma(p_sub, v_sub, o, use_acc=use_acc, mbarriers=[o_ready.index(g)])


@gluon.jit
def _attn_mma(q_tiles, kv_smem, qk_tiles, p_tiles, o_tmem, q_ready, kv_ready, kv_empty, s_ready, p_ready, o_ready,
              o_empty, n_kv, BLOCK_N: gl.constexpr, S: gl.constexpr, NUM_KV_BUFFERS: gl.constexpr):
    # Upstream's schedule: S_0(j+1) and S_1(j+1) are computed while the softmax partitions work on step j.
    #   prologue: S_0(0), S_1(0), O_0 = P_0(0) V_0
    #   step j:   S_0(j), O_1 += P_1(j-1) V_{j-1}, S_1(j), O_0 += P_0(j) V_j
    #   epilogue: O_1 += P_1(n-1) V_{n-1}; its commit also signals s_ready[0], s_ready[1] one last time
    #             (all MMAs done: the softmax may now write l, m into S's columns).
    mbarrier.wait(q_ready.index(0), 0)
    mbarrier.wait(q_ready.index(1), 0)
    q0 = q_tiles.index(0)
    q1 = q_tiles.index(1)

    k_slot, k_phase = _kv_slot(0, NUM_KV_BUFFERS)
    mbarrier.wait(kv_ready.index(k_slot), k_phase)
    k = kv_smem.index(k_slot).permute((1, 0))
    tcgen05_mma(q0, k, qk_tiles.index(0), use_acc=False, mbarriers=[s_ready.index(0)])
    tcgen05_mma(q1, k, qk_tiles.index(1), use_acc=False, mbarriers=[s_ready.index(1), kv_empty.index(k_slot)])
    v_slot, v_phase = _kv_slot(1, NUM_KV_BUFFERS)
    mbarrier.wait(kv_ready.index(v_slot), v_phase)
    _attn_pv(0, 0, v_slot, kv_smem, p_tiles, o_tmem, p_ready, o_ready, o_empty, kv_empty, BLOCK_N, S, False)

    for j in range(1, n_kv):
        k_slot, k_phase = _kv_slot(2 * j, NUM_KV_BUFFERS)
        mbarrier.wait(kv_ready.index(k_slot), k_phase)
        k = kv_smem.index(k_slot).permute((1, 0))
        # S_0 overwrites P_0(j-1): issued after the PV MMA that reads it (in-order tcgen05 stream).
        tcgen05_mma(q0, k, qk_tiles.index(0), use_acc=False, mbarriers=[s_ready.index(0)])
        _attn_pv(1, j - 1, v_slot, kv_smem, p_tiles, o_tmem, p_ready, o_ready, o_empty, kv_empty, BLOCK_N, S,
                 True)  # V_{j-1} is free once both groups' PV MMAs complete
        tcgen05_mma(q1, k, qk_tiles.index(1), use_acc=False, mbarriers=[s_ready.index(1), kv_empty.index(k_slot)])
        v_slot, v_phase = _kv_slot(2 * j + 1, NUM_KV_BUFFERS)
        mbarrier.wait(kv_ready.index(v_slot), v_phase)
        _attn_pv(0, j, v_slot, kv_smem, p_tiles, o_tmem, p_ready, o_ready, o_empty, kv_empty, BLOCK_N, S, False)

    _attn_pv(1, n_kv - 1, v_slot, kv_smem, p_tiles, o_tmem, p_ready, o_ready, o_empty, kv_empty, BLOCK_N, S, True)
    # tcgen05_commit tracks every MMA issued before it: all of this tile's MMAs are done -> the final
    # s_ready phase of both groups (S_g's columns may now hold l and m).
    tcgen05_commit(s_ready.index(0))
    tcgen05_commit(s_ready.index(1))


@gluon.jit
def _attn_softmax(g: gl.constexpr, qk_tiles, p_tiles, alpha_tiles, l_tiles, m_tiles, s_ready, p_ready, alpha_ready,
                  alpha_empty, qk_scale, q_pos, n_kv, BLOCK_N: gl.constexpr, S: gl.constexpr, CAUSAL: gl.constexpr,
                  DTYPE: gl.constexpr):
    SPLIT_M: gl.constexpr = qk_tiles.type.shape[1]
    BN_S: gl.constexpr = BLOCK_N // S
    s_sub_layout: gl.constexpr = TensorMemoryLayout((SPLIT_M, BN_S), col_stride=1)
    s_reg: gl.constexpr = compat.tmem_reg_layout(gl.float32, [SPLIT_M, BN_S], s_sub_layout, gl.num_warps())
    p_reg: gl.constexpr = compat.tmem_reg_layout(DTYPE, [SPLIT_M, BN_S], p_tiles.type.layout, gl.num_warps())
    col_reg: gl.constexpr = compat.tmem_reg_layout(gl.float32, [SPLIT_M, 1], alpha_tiles.type.layout, gl.num_warps())
    row_l: gl.constexpr = gl.SliceLayout(1, s_reg)

    s_tmem = qk_tiles.index(g)
    rows = q_pos + g * SPLIT_M + gl.arange(0, SPLIT_M, layout=row_l)
    m_i = gl.full([SPLIT_M], -float("inf"), gl.float32, row_l)
    l_i = gl.full([SPLIT_M], 0.0, gl.float32, row_l)
    for j in range(n_kv):
        mbarrier.wait(s_ready.index(g), j & 1)
        # All of S_g into registers before anything is written into its columns (P, alpha live there).
        qks = ()
        m_new = m_i
        for s in gl.static_range(S):
            qk = s_tmem.slice(s * BN_S, BN_S).load(s_reg)
            if CAUSAL:
                cols = j * BLOCK_N + s * BN_S + gl.arange(0, BN_S, layout=gl.SliceLayout(0, s_reg))
                qk = gl.where(cols[None, :] <= rows[:, None], qk, -float("inf"))
            m_new = gl.maximum(m_new, gl.max(qk, axis=1) * qk_scale)
            qks = qks + (qk, )
        alpha = gl.exp2(m_i - m_new)

        # alpha_g -> correction. Wait until the correction has taken alpha(j-1) (phase handshake).
        mbarrier.wait(alpha_empty.index(g), (j & 1) ^ 1)
        alpha_tiles.index(g).store(gl.convert_layout(gl.expand_dims(alpha, 1), col_reg))
        mbarrier.arrive(alpha_ready.index(g), count=1)

        l_ij = gl.full([SPLIT_M], 0.0, gl.float32, row_l)
        for s in gl.static_range(S):
            p = gl.exp2(qks[s] * qk_scale - gl.expand_dims(m_new, 1))
            l_ij += gl.sum(p, axis=1)
            p_tiles.index(g * S + s).store(gl.convert_layout(p.to(DTYPE), p_reg))
        mbarrier.arrive(p_ready.index(g), count=1)  # -> MMA: P_g ready, S_g consumed
        l_i = l_i * alpha + l_ij
        m_i = m_new

    # Every MMA of this tile has completed: S_g's columns are free for l and m.
    mbarrier.wait(s_ready.index(g), n_kv & 1)
    mbarrier.wait(alpha_empty.index(g), (n_kv & 1) ^ 1)
    l_tiles.index(g).store(gl.convert_layout(gl.expand_dims(l_i, 1), col_reg))
    m_tiles.index(g).store(gl.convert_layout(gl.expand_dims(m_i, 1), col_reg))
    mbarrier.arrive(alpha_ready.index(g), count=1)


@gluon.jit
def _attn_column(tiles, g: gl.constexpr, layout: gl.constexpr, col_reg: gl.constexpr):
    """A [128, 1] TMEM column (alpha, l or m of group g) as a [128] vector in `layout`'s row slice."""
    return gl.convert_layout(gl.max(tiles.index(g).load(col_reg), axis=1), gl.SliceLayout(1, layout))


@gluon.jit
def _attn_correction(desc_o, o_tiles, o_tmem, alpha_tiles, l_tiles, m_tiles, alpha_ready, alpha_empty, o_ready,
                     o_empty, lse_ptr, q_row, lse_row, n_kv, HEAD_DIM: gl.constexpr):
    SPLIT_M: gl.constexpr = o_tmem.type.shape[1]
    # Rescale / normalise O in column halves to bound register use (upstream's SPLIT_D_FACTOR = 2).
    D_SPLIT: gl.constexpr = 2 if HEAD_DIM * o_tiles.dtype.primitive_bitwidth // 8 >= 256 else 1
    D_SUB: gl.constexpr = HEAD_DIM // D_SPLIT
    o_sub_layout: gl.constexpr = TensorMemoryLayout((SPLIT_M, D_SUB), col_stride=1)
    o_reg: gl.constexpr = compat.tmem_reg_layout(gl.float32, [SPLIT_M, D_SUB], o_sub_layout, gl.num_warps())
    col_reg: gl.constexpr = compat.tmem_reg_layout(gl.float32, [SPLIT_M, 1], alpha_tiles.type.layout, gl.num_warps())

    for j in range(n_kv):
        for g in gl.static_range(2):
            mbarrier.wait(alpha_ready.index(g), j & 1)
            if j > 0:
                alpha = _attn_column(alpha_tiles, g, o_reg, col_reg)
                mbarrier.arrive(alpha_empty.index(g), count=1)
                mbarrier.wait(o_ready.index(g), (j - 1) & 1)  # PV_g(j-1) has landed in O_g
                for d in gl.static_range(D_SPLIT):
                    o_ref = o_tmem.index(g).slice(d * D_SUB, D_SUB)
                    o_ref.store(o_ref.load(o_reg) * gl.expand_dims(alpha, 1))
                mbarrier.arrive(o_empty.index(g), count=1)  # -> MMA: PV_g(j) may accumulate
            else:
                mbarrier.arrive(alpha_empty.index(g), count=1)  # step 0: O_g is empty, alpha unused

    lse_layout: gl.constexpr = gl.BlockedLayout([1], [32], [gl.num_warps()], [0])
    for g in gl.static_range(2):
        mbarrier.wait(alpha_ready.index(g), n_kv & 1)  # l_g, m_g published
        l_i = _attn_column(l_tiles, g, o_reg, col_reg)
        m_i = _attn_column(m_tiles, g, o_reg, col_reg)
        mbarrier.wait(o_ready.index(g), (n_kv - 1) & 1)  # last PV_g done (so are all QK MMAs reading Q_g)
        o_smem = o_tiles.index(g)  # Q_g's bytes
        for d in gl.static_range(D_SPLIT):
            o = o_tmem.index(g).slice(d * D_SUB, D_SUB).load(o_reg) / gl.expand_dims(l_i, 1)
            o_smem.slice(d * D_SUB, D_SUB, dim=1).store(o.to(o_smem.dtype))
        fence_async_shared()
        compat.tma_store(desc_o, [q_row + g * SPLIT_M, 0], o_smem)
        # log-sum-exp of the scaled scores, natural log: (m + log2 l) * ln 2
        lse = gl.convert_layout((m_i + gl.log2(l_i)) * 0.6931471805599453, lse_layout)
        offs = lse_row + g * SPLIT_M + gl.arange(0, SPLIT_M, layout=lse_layout)
        gl.store(lse_ptr + offs, lse)
    tma.store_wait(0)


# ===-----------------------------------------------------------------------===#
# Kernel
# ===-----------------------------------------------------------------------===#


@gluon.jit
def attention_fwd_kernel(sm_scale, lse_ptr, N_CTX, desc_q, desc_k, desc_v, desc_o,  #
                         BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr, HEAD_DIM: gl.constexpr,  #
                         NUM_MMA_SLICES: gl.constexpr, NUM_KV_BUFFERS: gl.constexpr, CAUSAL: gl.constexpr,  #
                         ALIAS_TMEM: gl.constexpr = True, ALIAS_SMEM: gl.constexpr = True):
    SPLIT_M: gl.constexpr = BLOCK_M // 2
    NUM_GROUPS: gl.constexpr = 2
    S: gl.constexpr = NUM_MMA_SLICES
    DTYPE: gl.constexpr = desc_q.dtype
    gl.static_assert(SPLIT_M == 128, "two row groups of 128 (tcgen05 M = 128)")
    gl.static_assert(BLOCK_N % S == 0, "BLOCK_N must split into NUM_MMA_SLICES P sub-tiles")

    start_m = gl.program_id(0)
    bh = gl.program_id(1)
    q_pos = start_m * BLOCK_M          # first query position of this tile
    kv_row = bh * N_CTX                # K/V rows of this (batch, head) in the 2-D [Z*H*N_CTX, D] views
    q_row = kv_row + q_pos
    if CAUSAL:
        n_kv = (q_pos + BLOCK_M) // BLOCK_N
    else:
        n_kv = N_CTX // BLOCK_N
    qk_scale = sm_scale * 1.4426950408889634  # softmax in base 2

    # --- SMEM: Q and the output staging tile share bytes; K/V ring --------------------------------------------
    # ALIAS_SMEM / ALIAS_TMEM = False build the same buffers as separate allocations (the "no sharing" baseline).
    if ALIAS_SMEM:
        smem = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    else:
        smem = None
    q_tiles = tlx.local_alloc((SPLIT_M, HEAD_DIM), DTYPE, NUM_GROUPS, tlx.storage_kind.smem, reuse=smem,
                              layout=desc_q.layout)
    o_tiles = tlx.local_alloc((SPLIT_M, HEAD_DIM), DTYPE, NUM_GROUPS, tlx.storage_kind.smem, reuse=smem,
                              layout=desc_o.layout)
    if ALIAS_SMEM:
        smem.set_buffer_overlap(tlx.reuse_group(q_tiles, o_tiles, group_type=tlx.reuse_group_type.shared))
    kv_smem = gl.allocate_shared_memory(DTYPE, [NUM_KV_BUFFERS, BLOCK_N, HEAD_DIM], desc_k.layout)

    # --- TMEM: seed 000's tree (S shared with P sub-tiles, alpha, l, m); O separate ---------------------------
    if ALIAS_TMEM:
        tmem = tlx.storage_alias_spec(storage=tlx.storage_kind.tmem)
    else:
        tmem = None
    qk_tiles = tlx.local_alloc((SPLIT_M, BLOCK_N), gl.float32, NUM_GROUPS, tlx.storage_kind.tmem, reuse=tmem)
    p_tiles = tlx.local_alloc((SPLIT_M, BLOCK_N // S), DTYPE, NUM_GROUPS * S, tlx.storage_kind.tmem, reuse=tmem)
    alpha_tiles = tlx.local_alloc((SPLIT_M, 1), gl.float32, NUM_GROUPS, tlx.storage_kind.tmem, reuse=tmem)
    l_tiles = tlx.local_alloc((SPLIT_M, 1), gl.float32, NUM_GROUPS, tlx.storage_kind.tmem, reuse=tmem)
    m_tiles = tlx.local_alloc((SPLIT_M, 1), gl.float32, NUM_GROUPS, tlx.storage_kind.tmem, reuse=tmem)
    if ALIAS_TMEM:
        tmem.set_buffer_overlap(
            tlx.reuse_group(
                qk_tiles,
                tlx.reuse_group(tlx.reuse_group(p_tiles, group_size=S), alpha_tiles, l_tiles, m_tiles,
                                group_type=tlx.reuse_group_type.distinct),
                group_type=tlx.reuse_group_type.shared))
    o_tmem = allocate_tensor_memory(gl.float32, [NUM_GROUPS, SPLIT_M, HEAD_DIM],
                                    TensorMemoryLayout((SPLIT_M, HEAD_DIM), col_stride=1))

    # --- barriers (count 1 unless noted) ------------------------------------------------------------------------------
    q_ready = gl.allocate_shared_memory(gl.int64, [NUM_GROUPS, 1], mbarrier.MBarrierLayout())
    kv_ready = gl.allocate_shared_memory(gl.int64, [NUM_KV_BUFFERS, 1], mbarrier.MBarrierLayout())
    kv_empty = gl.allocate_shared_memory(gl.int64, [NUM_KV_BUFFERS, 1], mbarrier.MBarrierLayout())
    s_ready = gl.allocate_shared_memory(gl.int64, [NUM_GROUPS, 1], mbarrier.MBarrierLayout())  # MMA -> softmax
    p_ready = gl.allocate_shared_memory(gl.int64, [NUM_GROUPS, 1], mbarrier.MBarrierLayout())  # softmax -> MMA
    alpha_ready = gl.allocate_shared_memory(gl.int64, [NUM_GROUPS, 1], mbarrier.MBarrierLayout())  # sm -> corr
    alpha_empty = gl.allocate_shared_memory(gl.int64, [NUM_GROUPS, 1], mbarrier.MBarrierLayout())  # corr -> sm
    o_ready = gl.allocate_shared_memory(gl.int64, [NUM_GROUPS, 1], mbarrier.MBarrierLayout())  # MMA -> corr
    o_empty = gl.allocate_shared_memory(gl.int64, [NUM_GROUPS, 1], mbarrier.MBarrierLayout())  # corr -> MMA
    for i in gl.static_range(NUM_KV_BUFFERS):
        mbarrier.init(kv_ready.index(i), count=1)
        mbarrier.init(kv_empty.index(i), count=1)
    for g in gl.static_range(NUM_GROUPS):
        mbarrier.init(q_ready.index(g), count=1)
        mbarrier.init(s_ready.index(g), count=1)
        mbarrier.init(p_ready.index(g), count=1)
        mbarrier.init(alpha_ready.index(g), count=1)
        mbarrier.init(alpha_empty.index(g), count=1)
        mbarrier.init(o_ready.index(g), count=S)  # one arrival per P sub-tile MMA
        mbarrier.init(o_empty.index(g), count=1)

    gl.warp_specialize([
        (_attn_correction, (desc_o, o_tiles, o_tmem, alpha_tiles, l_tiles, m_tiles, alpha_ready, alpha_empty, o_ready,
                            o_empty, lse_ptr, q_row, bh * N_CTX + q_pos, n_kv, HEAD_DIM)),
        (_attn_softmax, (0, qk_tiles, p_tiles, alpha_tiles, l_tiles, m_tiles, s_ready, p_ready, alpha_ready,
                         alpha_empty, qk_scale, q_pos, n_kv, BLOCK_N, S, CAUSAL, DTYPE)),
        (_attn_softmax, (1, qk_tiles, p_tiles, alpha_tiles, l_tiles, m_tiles, s_ready, p_ready, alpha_ready,
                         alpha_empty, qk_scale, q_pos, n_kv, BLOCK_N, S, CAUSAL, DTYPE)),
        (_attn_mma, (q_tiles, kv_smem, qk_tiles, p_tiles, o_tmem, q_ready, kv_ready, kv_empty, s_ready, p_ready,
                     o_ready, o_empty, n_kv, BLOCK_N, S, NUM_KV_BUFFERS)),
        (_attn_load, (desc_q, desc_k, desc_v, q_tiles, kv_smem, q_ready, kv_ready, kv_empty, q_row, kv_row, n_kv,
                      BLOCK_N, NUM_KV_BUFFERS)),
    ], [4, 4, 1, 1], [192, 192, 24, 24])


# ===-----------------------------------------------------------------------===#
# Host side
# ===-----------------------------------------------------------------------===#


def _default_kv_buffers(head_dim):
    return 3 if head_dim == 128 else 6  # upstream's choice for 16-bit inputs


def compile_attention(head_dim=128, causal=False, num_mma_slices=2, dtype=gl.bfloat16, num_kv_buffers=None,
                      alias_tmem=True, alias_smem=True) -> Compiled:
    """Compile `attention_fwd_kernel` for sm_100a on this machine (no GPU needed), through the plugin.

    Returns `_common.Compiled` (.kernel, .smem_bytes, .tmem_cols, .ttgir, .ptx, .compile_s).
    """
    def desc(rows):
        return tensordesc(dtype, [rows, head_dim], gl.NVMMASharedLayout.get_default_for([rows, head_dim], dtype))

    signature = {"sm_scale": "fp32", "lse_ptr": "*fp32", "N_CTX": "i32", "desc_q": desc(SPLIT_M),
                 "desc_k": desc(BLOCK_N), "desc_v": desc(BLOCK_N), "desc_o": desc(SPLIT_M)}
    constexprs = {"BLOCK_M": BLOCK_M, "BLOCK_N": BLOCK_N, "HEAD_DIM": head_dim, "NUM_MMA_SLICES": num_mma_slices,
                  "NUM_KV_BUFFERS": num_kv_buffers or _default_kv_buffers(head_dim), "CAUSAL": causal,
                  "ALIAS_TMEM": alias_tmem, "ALIAS_SMEM": alias_smem}
    return compile_for(attention_fwd_kernel, signature, constexprs, target=BLACKWELL, num_warps=4, maxnreg=128)


# --- the numbers -------------------------------------------------------------------------------------------

def tmem_columns(head_dim, num_mma_slices=2, alias=True):
    """32-bit TMEM columns this kernel's allocations need (before the allocator's power-of-two rounding)."""
    qk = BLOCK_N                                    # 128 x BLOCK_N fp32
    p = num_mma_slices * (BLOCK_N // num_mma_slices) // 2  # S sub-tiles of 16-bit data packed two per column
    per_group = max(qk, p + 3) if alias else qk + p + 3
    return 2 * per_group + 2 * head_dim


def smem_bytes(head_dim, num_kv_buffers=None, alias=True, elem_bytes=2):
    """Data SMEM of this kernel (without mbarriers): Q (+ separate output tiles unless aliased) + K/V ring."""
    num_kv_buffers = num_kv_buffers or _default_kv_buffers(head_dim)
    tile = SPLIT_M * head_dim * elem_bytes
    return 2 * tile * (1 if alias else 2) + num_kv_buffers * BLOCK_N * head_dim * elem_bytes


def upstream_design(head_dim, elem_bytes=2):
    """TMEM columns and SMEM bytes of upstream's hand-aliased Gluon attention for the same tile.

    Read from the allocation code of triton-lang/triton `python/examples/gluon/01-attention-forward.py`
    (`attention_kernel`, commit 011dee30e1bed8fc71ef3f582cdb2896ea03a3c1; the allocations are the same in the
    col_stride-era version that matches triton 3.6's Gluon API), config BLOCK_M = 256 (SPLIT_M = 128),
    BLOCK_N = 128, 16-bit inputs:

      TMEM  s0_chnl, s1_chnl: TensorMemoryChannel.alloc(qk_shape = [128, 128], fp32, num_buffers=1) x 2
                                                                         = 2 x 128 cols = 256
            o_chnl:  TensorMemoryChannel.alloc(o_shape = [128, D], fp32, num_buffers=2)   = 2 x D cols
            P:      `_borrow_s_as_p`: 16-bit P packed two per column in S's columns [0, 64) (3.6 era:
                     `s.slice(0, BLOCK_N // 2)._reinterpret(dtype, [128, 128], col_stride=1)`; newer:
                     `s._reinterpret(dtype, [128, 256], ...).slice(0, 128)`)       = 0 extra
            alpha:  `_borrow_s_as_alpha`: S column BLOCK_N // 2 = 64;  m, l: `_borrow_s_for_epilogue`:
                     columns 65 and 66                                   = 0 extra
            total = 256 + 2 D  (D = 64: 384 -> allocated 512; D = 128: 512)
      SMEM  q_chnl:   2 x [128, D]                           = 2 x 128 D x 2 bytes
            kv_chnl:  NUM_KV_BUFFERS x [128, D] (K and V alternate; 3 for D = 128, 6 for D = 64)
            epi_chnl: 2 x [128, D] (output staging)          = 2 x 128 D x 2 bytes
            + mbarriers (9 channels, one ready + one empty barrier per buffer)
    """
    tile = SPLIT_M * head_dim * elem_bytes
    kv = _default_kv_buffers(head_dim)
    tmem = 2 * BLOCK_N + 2 * head_dim
    smem = 2 * tile + kv * BLOCK_N * head_dim * elem_bytes + 2 * tile
    barriers = 8 * 2 * (2 + kv + 2 + 2 + 1 + 1 + 1 + 1 + 1)
    return {"tmem_cols": tmem, "tmem_alloc": 1 << (tmem - 1).bit_length(), "smem_bytes": smem,
            "smem_with_barriers": smem + barriers,
            "arithmetic": f"TMEM 2 x {BLOCK_N} (S0, S1) + 2 x {head_dim} (O0, O1) = {tmem}; "
                          f"SMEM Q 2 x {tile} + KV {kv} x {BLOCK_N * head_dim * elem_bytes} + epi 2 x {tile} "
                          f"= {smem} (+ {barriers} B of mbarriers)"}


# --- cpu report --------------------------------------------------------------------------------------------

REPORT_CONFIGS = [
    dict(head_dim=64, causal=False, num_mma_slices=2, dtype=gl.bfloat16),
    dict(head_dim=128, causal=False, num_mma_slices=2, dtype=gl.bfloat16),
    dict(head_dim=128, causal=True, num_mma_slices=4, dtype=gl.float16),
    dict(head_dim=128, causal=False, num_mma_slices=2, dtype=gl.bfloat16, num_kv_buffers=5),
]


def config_name(c):
    kv = c.get("num_kv_buffers") or _default_kv_buffers(c["head_dim"])
    return (f"D={c['head_dim']} {'causal' if c.get('causal') else 'full'} S={c.get('num_mma_slices', 2)} "
            f"{dtype_name(c.get('dtype', gl.bfloat16))} BM={BLOCK_M} BN={BLOCK_N} kv={kv}")


def cpu_report(quick=False, proof=True, configs=None):
    """Compile for sm_100a on the CPU, with and without sharing; one row per (config, variant).

    Variants: the kernel (both trees), `separate TMEM` (qk, p, alpha, l, m as five plain allocations),
    `separate SMEM` (Q and the output tiles as plain allocations). A variant that does not fit records the
    error text instead of numbers. `proof`: the Z3 verifier's verdict on the lowered ttgir (`_common.proof_of`).
    """
    configs = configs or (REPORT_CONFIGS[1:2] if quick else REPORT_CONFIGS)
    rows = []
    for c in configs:
        for variant, kw in [("", {}), (" (separate TMEM)", {"alias_tmem": False}),
                            (" (separate SMEM)", {"alias_smem": False})]:
            row = blackwell_row("blackwell_attention" + variant, config_name(c),
                                lambda: compile_attention(**c, **kw), proof)
            rows.append(row)
    return rows


# --- the wrapper -------------------------------------------------------------------------------------------

def attention(q, k, v, causal=False, sm_scale=None, num_mma_slices=2, num_kv_buffers=None):
    """Attention forward: softmax(q k^T * sm_scale [causal]) v and the log-sum-exp of each row.

    q, k, v: [Z, H, N_CTX, HEAD_DIM] bf16 or fp16 CUDA tensors of one shape, HEAD_DIM in {64, 128},
    N_CTX a multiple of 256. Returns (o [Z, H, N_CTX, HEAD_DIM] of q's dtype, lse [Z, H, N_CTX] fp32,
    natural log). Runs only on a Blackwell GPU (sm_100); raises RuntimeError elsewhere.
    """
    import torch
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

    if not (q.shape == k.shape == v.shape) or q.dim() != 4:
        raise ValueError(f"q, k, v must be [Z, H, N_CTX, HEAD_DIM] of one shape, got {tuple(q.shape)}, "
                         f"{tuple(k.shape)}, {tuple(v.shape)}")
    if not (q.dtype == k.dtype == v.dtype) or str(q.dtype) not in HALF_DTYPES:
        raise ValueError(f"q, k, v must all be bfloat16 or float16, got {q.dtype}, {k.dtype}, {v.dtype}")
    Z, H, N_CTX, HEAD_DIM = q.shape
    if HEAD_DIM not in (64, 128):
        raise ValueError(f"HEAD_DIM must be 64 or 128, got {HEAD_DIM}")
    if N_CTX % BLOCK_M:
        raise ValueError(f"N_CTX must be a multiple of {BLOCK_M} (no ragged tiles), got {N_CTX}")
    if BLOCK_N % num_mma_slices or num_mma_slices not in (1, 2, 4):
        raise ValueError(f"num_mma_slices must be 1, 2 or 4, got {num_mma_slices}")
    if not (q.is_cuda and k.is_cuda and v.is_cuda) or torch.cuda.get_device_capability(q.device)[0] != 10:
        where = f"cuda device with capability {torch.cuda.get_device_capability(q.device)}" if q.is_cuda else q.device
        raise RuntimeError(f"blackwell attention needs a Blackwell GPU (sm_100, tcgen05 + TMEM); inputs are on "
                           f"{where}. Use cpu_report() / compile_attention() to compile it for sm_100a anywhere.")
    sm_scale = 1.0 / math.sqrt(HEAD_DIM) if sm_scale is None else float(sm_scale)
    dtype = gl_dtype(q.dtype)
    q, k, v = (t.contiguous() for t in (q, k, v))
    o = torch.empty_like(q)
    lse = torch.empty((Z, H, N_CTX), device=q.device, dtype=torch.float32)

    def desc(t, rows):
        layout = gl.NVMMASharedLayout.get_default_for([rows, HEAD_DIM], dtype)
        return TensorDescriptor.from_tensor(t.view(Z * H * N_CTX, HEAD_DIM), [rows, HEAD_DIM], layout)

    grid = (N_CTX // BLOCK_M, Z * H)
    attention_fwd_kernel[grid](sm_scale, lse, N_CTX, desc(q, SPLIT_M), desc(k, BLOCK_N), desc(v, BLOCK_N),
                               desc(o, SPLIT_M), BLOCK_M, BLOCK_N, HEAD_DIM, num_mma_slices,
                               num_kv_buffers or _default_kv_buffers(HEAD_DIM), causal, num_warps=4, maxnreg=128)
    return o, lse


if __name__ == "__main__":
    for r in cpu_report():
        print(r)
