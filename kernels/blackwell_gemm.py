"""Persistent warp-specialized GEMM for Blackwell (sm_100a): tcgen05 + TMEM accumulators, with the epilogue's
output tile placed in the operand ring through a `storage_alias_spec`.

    C[M, N] = A[M, K] @ B[K, N]        (bf16 or fp16 in, fp32 accumulate, C in the input dtype or fp32)

The structure is the one of upstream Gluon's `python/tutorials/gluon/08-warp-specialization.py` (triton-lang/triton)
Blackwell matmul: a persistent grid of NUM_SMS programs walking output tiles in grouped order, and three partitions

    partition   warps  regs  does
    epilogue    4      rest  acc (TMEM) -> registers -> C sub-tiles (SMEM) -> TMA store               (default)
    load        1      24    TMA: A and B tiles into a STAGES-slot ring; hands one slot per tile over   (worker)
    mma         1      24    tcgen05_mma(A_s, B_s, acc[t % 2]), each MMA's commit frees its slot        (worker)

The accumulator is double-buffered in TMEM (2 x BLOCK_M x BLOCK_N fp32 = 2 * BLOCK_N columns): the MMAs of
tile t+1 run into the other buffer while the epilogue drains tile t's.

Memory map
----------
SMEM, one `storage_alias_spec`:

    ring.set_buffer_overlap(reuse_group(reuse_group(a_ring, b_ring, group_type=distinct),
                                        reuse_group(c_tiles, group_size=EPI_BUFS),
                                        group_type=shared))

    ring slot s (BLOCK_M = BLOCK_N = 128, BLOCK_K = 64, bf16 in and out: 32 KB per slot)
        | a_ring[s]   128 x 64 x 2 = 16 KB | b_ring[s]      64 x 128 x 2 = 16 KB |
        | c_tiles[2s] 128 x 64 x 2 = 16 KB | c_tiles[2s + 1] 128 x 64 x 2 = 16 KB |     <- the same bytes
    The C sub-tile width EPI_N (`epilogue_n()`) is the widest <= 64 whose EPI_BUFS = 2 buffers fit in a slot
    (BLOCK_K 128: 64; fp32 C with BLOCK_K 64: 32; BLOCK_K 32: 32, or 16 for fp32 C), so the tree adds nothing.
    The tree needs the slot to be a multiple of each buffer (a_ring at 0, b_ring at 16 KB), hence
    BLOCK_M = BLOCK_N; BLOCK_N = 256 with BLOCK_K = 64 (a 48 KB slot holding a 32 KB B) is rejected by the
    lowering with a layout error.

    measured (metadata.shared, bytes; + 8 per mbarrier and Triton scratch):
        stages  BK   with the tree      separate C (+ 2 x 128 x 64 x 2)
        4       64   131316             164084
        6       64   196884             229652
        7       64   229684             262452 > 232448: does not fit
        3       128  196852             229620
TMEM: acc_tmem, plain allocation, 2 x 128 x 128 fp32 = 256 columns.

Why the epilogue may write into ring memory -- its slot is owned, never in flight:
every output tile takes one extra step in the ring: a tile's steps are k_tiles operand loads, then one epilogue
step. At the epilogue step the load warp waits for the slot's `empty` barrier like for any load -- so every MMA
that read the slot's previous operands has completed (each MMA's tcgen05 commit arrives on `empty`) -- and,
instead of issuing a TMA load, arrives on the slot's `ready` barrier: the slot now belongs to the epilogue of
that tile, which waits on that `ready` phase, writes C sub-tiles into c_tiles[EPI_BUFS * s + i] (inside ring
slot s only: the tree places c_tiles' group s there), fences, TMA-stores them, drains its stores
(`tma.store_wait(0)`: the async proxy has finished reading) and arrives on the slot's `empty` barrier, which
hands it back to the load warp. The MMA warp skips the epilogue step. Nothing but the epilogue touches the slot
between those two barriers, while the other STAGES - 1 slots keep prefetching the next tile. (The same reasoning
as the Hopper GEMM: the epilogue overlaps only ring memory that no load or MMA can be using.)

Compile without a GPU: `cpu_report()` / `compile_matmul()`; `matmul()` runs only on a Blackwell GPU.
"""

from __future__ import annotations

import triton
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.blackwell import (TensorMemoryLayout, allocate_tensor_memory,
                                                                 fence_async_shared, mbarrier,
                                                                 tcgen05_commit, tcgen05_mma, tma)
from tlx_alias import _triton as compat

import tlx_alias.language as tlx
from tlx_alias.kernels._common import (BLACKWELL, HALF_DTYPES, SMEM_LIMIT, Compiled, blackwell_row, compile_for,
                                       dtype_name, gl_dtype, tensordesc, tile_offsets)

__all__ = ["matmul", "matmul_kernel", "compile_matmul", "cpu_report", "epilogue_n", "smem_plan"]


# ===-----------------------------------------------------------------------===#
# Partitions
# ===-----------------------------------------------------------------------===#


@gluon.jit
def _advance(idx, phase, n, NUM: gl.constexpr):
    """Ring position `n` (>= 0) steps after slot `idx` at barrier phase `phase` (a ring of NUM slots)."""
    nxt = idx + n
    return nxt % NUM, phase ^ ((nxt // NUM) & 1)


# Every partition walks the same tiles (pid, pid + nprog, ...) and the same ring steps: per tile, k_tiles operand
# steps, then (EPI_STEPS = 1, the epilogue in the ring) one epilogue step. Ring positions are carried counters
# (slot, phase), so the verifier can bound every slot index.


@gluon.jit
def _gemm_load(a_desc, b_desc, a_ring, b_ring, ready, empty, M, N, K, BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr,
               BLOCK_K: gl.constexpr, STAGES: gl.constexpr, GROUP_M: gl.constexpr, EPI_STEPS: gl.constexpr):
    k_tiles = gl.maximum(gl.cdiv(K, BLOCK_K), 1)
    num_tiles = gl.cdiv(M, BLOCK_M) * gl.cdiv(N, BLOCK_N)
    slot = 0
    phase = 0
    for tile_id in range(gl.program_id(0), num_tiles, gl.num_programs(0)):
        off_m, off_n = tile_offsets(tile_id, gl.cdiv(M, BLOCK_M), gl.cdiv(N, BLOCK_N), GROUP_M, BLOCK_M, BLOCK_N)
        for kk in range(k_tiles):
            mbarrier.wait(empty.index(slot), phase ^ 1)  # fresh barrier: parity 1 passes at once
            bar = ready.index(slot)
            mbarrier.expect(bar, a_desc.block_type.nbytes + b_desc.block_type.nbytes)
            compat.tma_load(a_desc, [off_m, kk * BLOCK_K], bar, a_ring.index(slot))
            compat.tma_load(b_desc, [kk * BLOCK_K, off_n], bar, b_ring.index(slot))
            slot, phase = _advance(slot, phase, 1, STAGES)
        if EPI_STEPS == 1:
            # The epilogue's step: once the MMAs that read this slot are done, hand it to the epilogue.
            mbarrier.wait(empty.index(slot), phase ^ 1)
            mbarrier.arrive(ready.index(slot), count=1)
        slot, phase = _advance(slot, phase, EPI_STEPS, STAGES)


@gluon.jit
def _gemm_mma(a_ring, b_ring, acc_tmem, ready, empty, acc_ready, acc_empty, M, N, K, BLOCK_M: gl.constexpr,
              BLOCK_N: gl.constexpr, BLOCK_K: gl.constexpr, STAGES: gl.constexpr, EPI_STEPS: gl.constexpr):
    k_tiles = gl.maximum(gl.cdiv(K, BLOCK_K), 1)
    num_tiles = gl.cdiv(M, BLOCK_M) * gl.cdiv(N, BLOCK_N)
    slot = 0
    phase = 0
    acc_idx = 0
    acc_phase = 0
    for tile_id in range(gl.program_id(0), num_tiles, gl.num_programs(0)):
        # acc[acc_idx] is free once the epilogue of two tiles ago has read it (fresh barrier: passes).
        mbarrier.wait(acc_empty.index(acc_idx), acc_phase ^ 1)
        acc = acc_tmem.index(acc_idx)
        for kk in range(k_tiles):
            mbarrier.wait(ready.index(slot), phase)
            tcgen05_mma(a_ring.index(slot), b_ring.index(slot), acc, use_acc=kk > 0, mbarriers=[empty.index(slot)])
            slot, phase = _advance(slot, phase, 1, STAGES)
        slot, phase = _advance(slot, phase, EPI_STEPS, STAGES)  # the epilogue's step is not ours: skip it
        tcgen05_commit(acc_ready.index(acc_idx))  # arrives when all of this tile's MMAs are done -> epilogue
        acc_idx, acc_phase = _advance(acc_idx, acc_phase, 1, 2)


@gluon.jit
def _gemm_epilogue(c_desc, c_tiles, acc_tmem, ready, empty, acc_ready, acc_empty, M, N, K, BLOCK_M: gl.constexpr,
                   BLOCK_N: gl.constexpr, BLOCK_K: gl.constexpr, STAGES: gl.constexpr, GROUP_M: gl.constexpr,
                   EPI_N: gl.constexpr, EPI_BUFS: gl.constexpr, EPI_STEPS: gl.constexpr):
    k_tiles = gl.maximum(gl.cdiv(K, BLOCK_K), 1)
    num_tiles = gl.cdiv(M, BLOCK_M) * gl.cdiv(N, BLOCK_N)
    sub_layout: gl.constexpr = TensorMemoryLayout((BLOCK_M, EPI_N), col_stride=1)
    reg_layout: gl.constexpr = compat.tmem_reg_layout(gl.float32, [BLOCK_M, EPI_N], sub_layout, gl.num_warps())
    NUM_SUB: gl.constexpr = BLOCK_N // EPI_N
    start = 0  # ring position where the current tile's steps begin
    start_phase = 0
    acc_idx = 0
    acc_phase = 0
    for tile_id in range(gl.program_id(0), num_tiles, gl.num_programs(0)):
        off_m, off_n = tile_offsets(tile_id, gl.cdiv(M, BLOCK_M), gl.cdiv(N, BLOCK_N), GROUP_M, BLOCK_M, BLOCK_N)
        mbarrier.wait(acc_ready.index(acc_idx), acc_phase)
        acc = acc_tmem.index(acc_idx)
        if EPI_STEPS == 1:
            # Our ring slot (the tile's last step): the load warp hands it over once its last MMAs have completed.
            slot, phase = _advance(start, start_phase, k_tiles, STAGES)
            mbarrier.wait(ready.index(slot), phase)
            first = slot * EPI_BUFS  # c_tiles group `slot` lies inside ring slot `slot`
        else:
            first = 0
        for e in gl.static_range(NUM_SUB):
            vals = acc.slice(e * EPI_N, EPI_N).load(reg_layout)
            if e == NUM_SUB - 1:
                mbarrier.arrive(acc_empty.index(acc_idx), count=1)  # TMEM read: acc free for two tiles later
            c_smem = c_tiles.index(first + e % EPI_BUFS)
            tma.store_wait(EPI_BUFS - 1)  # the store that last read this buffer has finished
            c_smem.store(vals.to(c_desc.dtype))
            fence_async_shared()  # generic-proxy writes before the TMA (async proxy) reads them
            compat.tma_store(c_desc, [off_m, off_n + e * EPI_N], c_smem)
        if EPI_STEPS == 1:
            tma.store_wait(0)  # every store out of the slot has read it ...
            mbarrier.arrive(empty.index(slot), count=1)  # ... so the load warp may refill it
        start, start_phase = _advance(start, start_phase, k_tiles + EPI_STEPS, STAGES)
        acc_idx, acc_phase = _advance(acc_idx, acc_phase, 1, 2)
    tma.store_wait(0)


# ===-----------------------------------------------------------------------===#
# Kernel
# ===-----------------------------------------------------------------------===#


@gluon.jit
def matmul_kernel(a_desc, b_desc, c_desc, M, N, K,  #
                  BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr, BLOCK_K: gl.constexpr, STAGES: gl.constexpr,
                  EPI_N: gl.constexpr, EPI_BUFS: gl.constexpr, GROUP_M: gl.constexpr,
                  ALIAS_EPILOGUE: gl.constexpr = True):
    dtype: gl.constexpr = a_desc.dtype
    gl.static_assert(BLOCK_N % EPI_N == 0, "the epilogue stores BLOCK_N in EPI_N-wide sub-tiles")

    # --- SMEM: operand ring; the epilogue's C sub-tiles live in ring slots (ALIAS_EPILOGUE) or beside them --
    if ALIAS_EPILOGUE:
        ring = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
        a_ring = tlx.local_alloc((BLOCK_M, BLOCK_K), dtype, STAGES, tlx.storage_kind.smem, reuse=ring,
                                 layout=a_desc.layout)
        b_ring = tlx.local_alloc((BLOCK_K, BLOCK_N), dtype, STAGES, tlx.storage_kind.smem, reuse=ring,
                                 layout=b_desc.layout)
        c_tiles = tlx.local_alloc((BLOCK_M, EPI_N), c_desc.dtype, STAGES * EPI_BUFS, tlx.storage_kind.smem,
                                  reuse=ring, layout=c_desc.layout)
        ring.set_buffer_overlap(
            tlx.reuse_group(
                tlx.reuse_group(a_ring, b_ring, group_type=tlx.reuse_group_type.distinct),
                tlx.reuse_group(c_tiles, group_size=EPI_BUFS),   # EPI_BUFS C sub-tiles side by side in a slot
                group_type=tlx.reuse_group_type.shared))
        EPI_STEPS: gl.constexpr = 1
    else:
        a_ring = gl.allocate_shared_memory(dtype, [STAGES, BLOCK_M, BLOCK_K], a_desc.layout)
        b_ring = gl.allocate_shared_memory(dtype, [STAGES, BLOCK_K, BLOCK_N], b_desc.layout)
        c_tiles = gl.allocate_shared_memory(c_desc.dtype, [EPI_BUFS, BLOCK_M, EPI_N], c_desc.layout)
        EPI_STEPS: gl.constexpr = 0

    # --- TMEM: double-buffered accumulator --------------------------------------------------------------------
    acc_tmem = allocate_tensor_memory(gl.float32, [2, BLOCK_M, BLOCK_N],
                                      TensorMemoryLayout((BLOCK_M, BLOCK_N), col_stride=1))

    ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())  # TMA / hand-off
    empty = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())  # MMA done / epilogue done
    acc_ready = gl.allocate_shared_memory(gl.int64, [2, 1], mbarrier.MBarrierLayout())  # MMA -> epilogue
    acc_empty = gl.allocate_shared_memory(gl.int64, [2, 1], mbarrier.MBarrierLayout())  # epilogue -> MMA
    for i in gl.static_range(STAGES):
        mbarrier.init(ready.index(i), count=1)
        mbarrier.init(empty.index(i), count=1)
    for i in gl.static_range(2):
        mbarrier.init(acc_ready.index(i), count=1)
        mbarrier.init(acc_empty.index(i), count=1)

    gl.warp_specialize([
        (_gemm_epilogue, (c_desc, c_tiles, acc_tmem, ready, empty, acc_ready, acc_empty, M, N, K, BLOCK_M, BLOCK_N,
                          BLOCK_K, STAGES, GROUP_M, EPI_N, EPI_BUFS, EPI_STEPS)),
        (_gemm_load, (a_desc, b_desc, a_ring, b_ring, ready, empty, M, N, K, BLOCK_M, BLOCK_N, BLOCK_K, STAGES,
                      GROUP_M, EPI_STEPS)),
        (_gemm_mma, (a_ring, b_ring, acc_tmem, ready, empty, acc_ready, acc_empty, M, N, K, BLOCK_M, BLOCK_N, BLOCK_K,
                     STAGES, EPI_STEPS)),
    ], [1, 1], [24, 24])


# ===-----------------------------------------------------------------------===#
# Host side
# ===-----------------------------------------------------------------------===#


def epilogue_n(block_m, block_n, block_k, in_bytes=2, out_bytes=2, epi_bufs=2):
    """Widest C sub-tile (<= 64 columns, dividing BLOCK_N) whose EPI_BUFS buffers fit in one ring slot."""
    slot = (block_m + block_n) * block_k * in_bytes
    n = min(64, block_n)
    while n > 8 and epi_bufs * block_m * n * out_bytes > slot:
        n //= 2
    return n


def smem_plan(block_m, block_n, block_k, stages, in_bytes=2, out_bytes=2, epi_bufs=2, alias=True):
    """Data SMEM bytes (without mbarriers) of the ring plus the epilogue tiles."""
    slot = (block_m + block_n) * block_k * in_bytes
    epi = epi_bufs * block_m * epilogue_n(block_m, block_n, block_k, in_bytes, out_bytes, epi_bufs) * out_bytes
    return stages * max(slot, epi) if alias else stages * slot + epi


def compile_matmul(block_m=128, block_n=128, block_k=64, stages=4, dtype=gl.bfloat16, c_dtype=None, epi_bufs=2,
                   group_m=8, alias_epilogue=True) -> Compiled:
    """Compile `matmul_kernel` for sm_100a on this machine (no GPU needed), through the plugin.

    Returns `_common.Compiled` (.kernel, .smem_bytes, .tmem_cols, .ttgir, .ptx, .compile_s).
    """
    c_dtype = c_dtype or dtype
    epi_n = epilogue_n(block_m, block_n, block_k, dtype.primitive_bitwidth // 8, c_dtype.primitive_bitwidth // 8,
                       epi_bufs)

    def desc(shape, dt):
        return tensordesc(dt, shape, gl.NVMMASharedLayout.get_default_for(shape, dt))

    signature = {"a_desc": desc([block_m, block_k], dtype), "b_desc": desc([block_k, block_n], dtype),
                 "c_desc": desc([block_m, epi_n], c_dtype), "M": "i32", "N": "i32", "K": "i32"}
    constexprs = {"BLOCK_M": block_m, "BLOCK_N": block_n, "BLOCK_K": block_k, "STAGES": stages, "EPI_N": epi_n,
                  "EPI_BUFS": epi_bufs, "GROUP_M": group_m, "ALIAS_EPILOGUE": alias_epilogue}
    return compile_for(matmul_kernel, signature, constexprs, target=BLACKWELL, num_warps=4)


REPORT_CONFIGS = [
    dict(block_m=128, block_n=128, block_k=64, stages=4, dtype=gl.bfloat16),
    dict(block_m=128, block_n=128, block_k=64, stages=6, dtype=gl.bfloat16),
    dict(block_m=128, block_n=128, block_k=64, stages=7, dtype=gl.bfloat16),
    dict(block_m=128, block_n=128, block_k=128, stages=3, dtype=gl.float16),
    dict(block_m=128, block_n=128, block_k=64, stages=6, dtype=gl.bfloat16, c_dtype=gl.float32),
]


def config_name(c):
    dtype = c.get("dtype", gl.bfloat16)
    c_dtype = c.get("c_dtype") or dtype
    epi = epilogue_n(c["block_m"], c["block_n"], c["block_k"], dtype.primitive_bitwidth // 8,
                     c_dtype.primitive_bitwidth // 8)
    return (f"{c['block_m']}x{c['block_n']}x{c['block_k']} stages={c['stages']} {dtype_name(dtype)}->"
            f"{dtype_name(c_dtype)} epi=2x{c['block_m']}x{epi}")


def cpu_report(quick=False, proof=True, configs=None):
    """Compile for sm_100a on the CPU with the epilogue in the ring (the tree) and beside it (separate
    allocations); one row per (config, variant). A variant that does not fit records the error text instead of
    numbers. `proof`: the Z3 verifier's verdict on the lowered ttgir (`_common.proof_of`)."""
    configs = configs or (REPORT_CONFIGS[2:3] if quick else REPORT_CONFIGS)
    rows = []
    for c in configs:
        for variant, alias in [("", True), (" (separate epilogue)", False)]:
            row = blackwell_row("blackwell_gemm" + variant, config_name(c),
                                lambda: compile_matmul(**c, alias_epilogue=alias), proof)
            rows.append(row)
    return rows


def matmul(a, b, c=None, block_m=128, block_n=128, block_k=64, stages=None, group_m=8, out_dtype=None,
           num_sms=None):
    """C = A @ B on a Blackwell GPU. a: [M, K], b: [K, N], both bf16 or both fp16, row-major (last stride 1,
    16-byte aligned rows). out_dtype: a's dtype (default) or torch.float32. Raises RuntimeError off Blackwell."""
    import torch
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

    if a.dim() != 2 or b.dim() != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"expected a [M, K] and b [K, N], got {tuple(a.shape)} and {tuple(b.shape)}")
    if a.dtype != b.dtype or str(a.dtype) not in HALF_DTYPES:
        raise ValueError(f"a and b must both be bfloat16 or both float16, got {a.dtype} and {b.dtype}")
    out_dtype = out_dtype or a.dtype
    if out_dtype not in (a.dtype, torch.float32):
        raise ValueError(f"out_dtype must be {a.dtype} or torch.float32, got {out_dtype}")
    if block_m != 128 or block_n != 128 or block_k not in (32, 64, 128):
        raise ValueError("supported tiles: BLOCK_M = BLOCK_N = 128, BLOCK_K in (32, 64, 128) (a ring slot must be a "
                         "multiple of each of its buffers for the tree's layout)")
    if not (a.is_cuda and b.is_cuda) or torch.cuda.get_device_capability(a.device)[0] != 10:
        where = f"cuda device with capability {torch.cuda.get_device_capability(a.device)}" if a.is_cuda else a.device
        raise RuntimeError(f"blackwell matmul needs a Blackwell GPU (sm_100, tcgen05 + TMEM); inputs are on {where}. "
                           "Use cpu_report() / compile_matmul() to compile it for sm_100a anywhere.")
    M, K = a.shape
    N = b.shape[1]
    a, b = a.contiguous(), b.contiguous()
    if c is None:
        c = torch.empty((M, N), device=a.device, dtype=out_dtype)
    dtype, c_dtype = gl_dtype(a.dtype), gl_dtype(c.dtype)
    in_bytes, out_bytes = a.element_size(), c.element_size()
    epi_n = epilogue_n(block_m, block_n, block_k, in_bytes, out_bytes)
    if stages is None:  # as many slots as fit beside the mbarriers
        stages = max(2, (SMEM_LIMIT - 1024) // smem_plan(block_m, block_n, block_k, 1, in_bytes, out_bytes))
    a_desc = TensorDescriptor.from_tensor(a, [block_m, block_k],
                                          gl.NVMMASharedLayout.get_default_for([block_m, block_k], dtype))
    b_desc = TensorDescriptor.from_tensor(b, [block_k, block_n],
                                          gl.NVMMASharedLayout.get_default_for([block_k, block_n], dtype))
    c_desc = TensorDescriptor.from_tensor(c, [block_m, epi_n],
                                          gl.NVMMASharedLayout.get_default_for([block_m, epi_n], c_dtype))
    num_sms = num_sms or torch.cuda.get_device_properties(a.device).multi_processor_count
    num_tiles = triton.cdiv(M, block_m) * triton.cdiv(N, block_n)
    grid = (min(num_sms, num_tiles), )
    matmul_kernel[grid](a_desc, b_desc, c_desc, M, N, K, block_m, block_n, block_k, stages, epi_n, 2, group_m,
                        num_warps=4)
    return c


if __name__ == "__main__":
    for r in cpu_report():
        print(r)
