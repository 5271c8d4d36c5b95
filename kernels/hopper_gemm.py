"""
Persistent Hopper GEMM whose epilogue tile borrows the operand ring
===================================================================

C = A @ B for row-major A [M, K] and B [K, N] (fp16 or bf16, fp32 accumulation), on sm_90a:

* persistent: `min(#SMs, #tiles)` programs walk the output tiles (grouped along M for L2 reuse);
* TMA loads A [BLOCK_M, BLOCK_K] and B [BLOCK_K, BLOCK_N] tiles into a STAGES-deep ring, one mbarrier
  per stage ("ready": the stage's bytes have landed);
* async `warpgroup_mma` (wgmma) with `warpgroup_mma_wait(1)`: one MMA in flight while the next stage's
  load is issued into the stage the previous MMA has just released;
* epilogue: accumulator -> SMEM tile -> TMA store (the TMA unit clips rows/columns past M and N, and
  zero-fills loads past M, N and K, so no shape needs to be a multiple of the tile).

Memory plan (BLOCK_M x BLOCK_N x BLOCK_K = 128 x 256 x 64, 16-bit data, STAGES = 4)
-----------------------------------------------------------------------------------

    A stage  128 x  64 x 2 B = 16 KiB        B stage  64 x 256 x 2 B = 32 KiB
    ring     4 x (16 + 32)   = 192 KiB       C tile  128 x 256 x 2 B = 64 KiB
    separate: 192 + 64 = 256 KiB  >  227 KiB (232448 B, the most one sm_90 block may use)

The C tile is only written after the tile's last wgmma has finished, when every ring stage has been
consumed; so it can live *on top of* the ring. One `tlx.storage_alias_spec` holds all three
allocations, and the reuse tree says how (SHARE_EPILOGUE=True):

    shared( c_smem,                                   # the epilogue tile starts at byte 0 ...
            distinct( shared(b_ring, group_size=4),   # ... on top of B[0] and B[1]: 4 x 32 KiB = 128 KiB
                      shared(a_ring, group_size=4) )) # the A ring follows: 4 x 16 KiB = 64 KiB

    byte  0          32K        64K        96K        128K   144K   160K   176K   192K
          | B[0]     | B[1]     | B[2]     | B[3]     | A[0] | A[1] | A[2] | A[3] |
          |<------ c_smem ----->|
    spec total = max(64 KiB, 192 KiB) = 192 KiB = 196608 B (+ STAGES x 8 B of mbarriers outside the spec)

`group_size=STAGES` makes the STAGES buffers of one ring one contiguous group (buffer i at byte
i x buffer size); `distinct` puts the A ring after the B ring; `shared` starts c_smem where the rings
start. The lowering addresses whole buffers, so every offset must be a multiple of the buffer placed
there: the larger B tiles go first (with the A ring first, B[0] would start at STAGES x 16 KiB, which
for 3 stages is 48 KiB, not a multiple of 32 KiB). The synchronization below does not depend on *which*
stages C covers, only on C overlapping the ring at all.

SHARE_EPILOGUE=False builds the same kernel with the tree  distinct(c_smem, shared(b_ring), shared(a_ring))
(nothing overlaps). At 4 stages that needs 256 KiB and the lowering stops the compile with
`TlxAliasError: ... shared memory over capacity: this spec needs 262144 bytes, the target allows 232448`;
3 stages need 64 + 3 x 48 = 208 KiB, which fits.

Why sharing is safe (the barriers that make it so)
--------------------------------------------------
Per output tile, the ring is filled and drained completely: the tile's first STAGES-1 k-steps are loaded
by a prologue, and the main loop issues k-step ki+STAGES-1 while consuming k-step ki, only for k-steps <
k_tiles. Inside the k-loop, the slot of k-step ki-1 is reloaded right after this warpgroup's
`warpgroup_mma_wait(1)`, while the other warpgroup of an 8-warp CTA may still be reading it: Triton's
membar analysis puts a CTA barrier (`bar.sync`) before every TMA load that overwrites memory a wgmma read
(the same hazard and remedy as without aliasing; the tests check the PTX). When the epilogue runs:

1. every TMA load of this tile has completed: each was waited on (`mbarrier.wait(ready[s])`) before its
   wgmma was issued, and there are no other loads of this tile;
2. no wgmma reads the ring: `warpgroup_mma_wait(0)` retires them (per warpgroup; the `thread_barrier`
   after it makes both warpgroups of an 8-warp CTA done before either writes the ring or c_smem);
3. so c_smem may be written (`c_smem.store`), fenced for the async proxy (`fence_async_shared`) and stored
   with TMA;
4. no TMA load writes the bytes under c_smem until `tma.store_wait(0)` says the TMA store has finished
   *reading* them (and the kernel ends with a store_wait).

Prefetching across the epilogue (PREFETCH=True, the default)
------------------------------------------------------------
The next tile's prologue is issued right after (2), before this tile's C is written, so its loads overlap
the epilogue -- except the B tiles that land under c_smem: those wait for (4) and are issued right after
the store_wait. A slot's barrier expects the A and B bytes together, so a deferred B load simply completes
the phase later. c_smem covers the low C_SLOTS = ceil(C bytes / B-slot bytes) slots of the B ring (2 of 4
at 128x256x64); the A ring never lies under it. The ring is used in reverse slot order (k-step `it` uses
slot STAGES-1 - it % STAGES) so that a tile starting on a full ring round (k_tiles a multiple of STAGES,
as for K = 2048/4096/8192) loads its first k-steps into the slots c_smem does not cover, and only its
last prologue step waits for the store. Which slots are deferred is decided at run time from `it`, so
the kernel stays correct for any k_tiles. PREFETCH=False builds the simpler schedule: store_wait(0) at
the top of every tile, then the whole prologue.

The slot and phase of a k-step come from the running count `it = t * k_tiles + ki` of the program's
t-th tile (slot STAGES-1 - it % STAGES, phase (it // STAGES) & 1), so each slot's barrier completes exactly
once per use and the loads and waits can never drift apart, whatever k_tiles is.

Cost of sharing: with a private C tile (SHARE_EPILOGUE=False) the TMA store of tile t may still be in
flight while tile t+1's loads and MMAs run (its `store_wait` sits just before the next `c_smem.store`).
Sharing makes the B tiles under c_smem wait for the store. Measured on an H100 (bf16 TFLOP/s, median of
6 interleaved rounds, `python benchmarks/kernel_profile.py --ab`): 8192x8192x2048 shared 643.5 with the
prefetch vs 633.2 without, no sharing (3 stages) 657.1 vs 636.7; at 4096^3, 8192^3 and 512x8192x8192 the
prefetch changes nothing measurable (within 1%). The fourth stage that sharing buys pays for itself at
large K, not at small K.

Main takeaways: the reuse tree documents the overlap in one place, the lowering computes the offsets and
the single 192 KiB allocation, and the SMEM budget is checked at compile time for both variants.
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
from tlx_alias.kernels._common import (HOPPER, SMEM_LIMIT, check_matmul, compile_for, gl_dtype, report_row, tensordesc,
                                      tile_offsets)

__all__ = ["hopper_gemm_kernel", "matmul", "make_launch", "compile_gemm", "smem_plan", "cpu_report"]


# ----------------------------------------------------------------------------------------------- layouts

@gluon.constexpr_function
def wgmma_layout(BLOCK_M, BLOCK_N, num_warps):
    """Accumulator layout of wgmma: warps stacked along M (16 rows each), the widest N instruction."""
    warps = [4, 1]
    while warps[0] * warps[1] != num_warps:
        if BLOCK_M > 16 * warps[0]:
            warps[0] *= 2
        else:
            warps[1] *= 2
    n = 256
    while n > max(BLOCK_N // warps[1], 8) or BLOCK_N % n:
        n -= 8
    return gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=warps, instr_shape=[16, n, 16])


# ----------------------------------------------------------------------------------------------- kernel

@gluon.jit
def _stage(it, STAGES: gl.constexpr):
    """Ring slot of the it-th k-step. Slots are used in reverse (STAGES-1, ..., 1, 0, STAGES-1, ...) so that a
    tile whose first k-step lands in slot STAGES-1 fills the slots c_smem does *not* cover first (c_smem
    lies on the low slots of the B ring); see "Prefetching across the epilogue" in the module docstring."""
    return STAGES - 1 - it % STAGES


@gluon.jit
def _issue_load(a_desc, b_desc, a_ring, b_ring, ready, it, off_m, off_n, k, STAGES: gl.constexpr, pred_a, pred_b):
    """Start the TMA loads of k-offset `k` into slot _stage(it): A if pred_a, B if pred_b. The barrier always
    expects both tiles' bytes (when pred_a), so a B load issued later (deferred) completes the same phase."""
    s = _stage(it, STAGES)
    mbarrier.expect(ready.index(s), a_desc.block_type.nbytes + b_desc.block_type.nbytes, pred=pred_a)
    compat.tma_load(a_desc, [off_m, k], ready.index(s), a_ring.index(s), pred_a)
    compat.tma_load(b_desc, [k, off_n], ready.index(s), b_ring.index(s), pred_b)


@gluon.jit
def hopper_gemm_kernel(a_desc, b_desc, c_desc,  #
                       STAGES: gl.constexpr, GROUP_M: gl.constexpr, SHARE_EPILOGUE: gl.constexpr,
                       PREFETCH: gl.constexpr, num_warps: gl.constexpr):
    BLOCK_M: gl.constexpr = c_desc.block_type.shape[0]
    BLOCK_N: gl.constexpr = c_desc.block_type.shape[1]
    BLOCK_K: gl.constexpr = a_desc.block_type.shape[1]
    dtype: gl.constexpr = a_desc.dtype
    gl.static_assert(STAGES >= 2, "the ring needs at least 2 stages (one loading while one is consumed)")
    gl.static_assert(b_desc.block_type.shape[0] == BLOCK_K, "B tiles are [BLOCK_K, BLOCK_N]")
    # c_smem starts where the B ring starts; C_SLOTS = how many B slots it covers (0 without sharing).
    C_BYTES: gl.constexpr = c_desc.block_type.nbytes
    B_BYTES: gl.constexpr = b_desc.block_type.nbytes
    gl.static_assert(not SHARE_EPILOGUE or C_BYTES <= STAGES * B_BYTES,
                     "with SHARE_EPILOGUE the C tile must fit on the B ring (use more stages or a larger BLOCK_K)")
    C_SLOTS: gl.constexpr = (C_BYTES + B_BYTES - 1) // B_BYTES if SHARE_EPILOGUE else 0
    M = c_desc.shape[0]
    N = c_desc.shape[1]
    K = a_desc.shape[1]

    # ---- memory: one spec for the operand ring and the epilogue tile (see the module docstring) ----
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    a_ring = tlx.local_alloc((BLOCK_M, BLOCK_K), dtype, STAGES, tlx.storage_kind.smem, reuse=spec,
                             layout=a_desc.layout)
    b_ring = tlx.local_alloc((BLOCK_K, BLOCK_N), dtype, STAGES, tlx.storage_kind.smem, reuse=spec,
                             layout=b_desc.layout)
    c_smem = tlx.local_alloc((BLOCK_M, BLOCK_N), dtype, 1, tlx.storage_kind.smem, reuse=spec,
                             layout=c_desc.layout)
    if SHARE_EPILOGUE:
        # c_smem borrows the first BLOCK_M x BLOCK_N x 2 bytes of the ring (B[0] and B[1] at 128x256x64).
        spec.set_buffer_overlap(
            tlx.reuse_group(
                c_smem,
                tlx.reuse_group(tlx.reuse_group(b_ring, group_size=STAGES),
                                tlx.reuse_group(a_ring, group_size=STAGES),
                                group_type=tlx.reuse_group_type.distinct),
                group_type=tlx.reuse_group_type.shared))
    else:
        # Same buffers, nothing overlaps: c_smem, then the B ring, then the A ring.
        spec.set_buffer_overlap(
            tlx.reuse_group(c_smem, tlx.reuse_group(b_ring, group_size=STAGES),
                            tlx.reuse_group(a_ring, group_size=STAGES), group_type=tlx.reuse_group_type.distinct))

    ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    for i in gl.static_range(STAGES):
        mbarrier.init(ready.index(i), count=1)

    acc_layout: gl.constexpr = wgmma_layout(BLOCK_M, BLOCK_N, num_warps)
    acc = gl.zeros((BLOCK_M, BLOCK_N), gl.float32, acc_layout)

    # ---- persistent tile loop, grouped along M ----
    num_pid_m = gl.cdiv(M, BLOCK_M)
    num_pid_n = gl.cdiv(N, BLOCK_N)
    num_tiles = num_pid_m * num_pid_n
    k_tiles = gl.cdiv(K, BLOCK_K)
    it = 0  # k-steps consumed so far by this program: slot _stage(it), phase (it // STAGES) & 1
    if PREFETCH:
        # Prologue of this program's first tile; later tiles' prologues are issued by the previous epilogue.
        off_m, off_n = tile_offsets(gl.program_id(0), num_pid_m, num_pid_n, GROUP_M, BLOCK_M, BLOCK_N)
        for i in gl.static_range(STAGES - 1):
            _issue_load(a_desc, b_desc, a_ring, b_ring, ready, i, off_m, off_n, i * BLOCK_K, STAGES, i < k_tiles,
                        i < k_tiles)
    for tile_id in range(gl.program_id(0), num_tiles, gl.num_programs(0)):
        off_m, off_n = tile_offsets(tile_id, num_pid_m, num_pid_n, GROUP_M, BLOCK_M, BLOCK_N)
        if not PREFETCH:
            if SHARE_EPILOGUE:
                # (4) The previous tile's TMA store reads c_smem, which lies on the ring: it must have
                # finished reading before the first load below overwrites those bytes.
                tma.store_wait(pendings=0)
            # Prologue: k-steps 0..STAGES-2 of this tile (only those that exist).
            for i in gl.static_range(STAGES - 1):
                _issue_load(a_desc, b_desc, a_ring, b_ring, ready, it + i, off_m, off_n, i * BLOCK_K, STAGES,
                            i < k_tiles, i < k_tiles)

        for ki in range(k_tiles):
            stage = _stage(it, STAGES)
            mbarrier.wait(ready.index(stage), (it // STAGES) & 1)
            acc = warpgroup_mma(a_ring.index(stage), b_ring.index(stage), acc, use_acc=ki > 0, is_async=True)
            # Keep one wgmma in flight: the one of k-step ki-1 is done, so its stage may be reloaded.
            acc = warpgroup_mma_wait(num_outstanding=1, deps=(acc, ))
            nk = ki + STAGES - 1
            _issue_load(a_desc, b_desc, a_ring, b_ring, ready, it + STAGES - 1, off_m, off_n, nk * BLOCK_K, STAGES,
                        nk < k_tiles, nk < k_tiles)
            it += 1

        # ---- epilogue: (1) all loads of this tile were waited on; (2) retire the last wgmma ----
        acc = warpgroup_mma_wait(num_outstanding=0, deps=(acc, ))
        compat.barrier()  # (2) every warpgroup's wgmma is done before anyone overwrites the ring
        next_tile = tile_id + gl.num_programs(0)
        if PREFETCH:
            # (5) The next tile's prologue, started now so that its loads overlap this epilogue: every A
            # tile and the B tiles outside c_smem; a B tile under c_smem waits until the store has read it.
            noff_m, noff_n = tile_offsets(next_tile, num_pid_m, num_pid_n, GROUP_M, BLOCK_M, BLOCK_N)
            for i in gl.static_range(STAGES - 1):
                pred = (next_tile < num_tiles) & (i < k_tiles)
                _issue_load(a_desc, b_desc, a_ring, b_ring, ready, it + i, noff_m, noff_n, i * BLOCK_K, STAGES,
                            pred, pred & (_stage(it + i, STAGES) >= C_SLOTS))
        if not SHARE_EPILOGUE:
            tma.store_wait(pendings=0)  # the private c_smem is free once the previous store has read it
        c_smem.index(0).store(acc.to(dtype))  # (3)
        fence_async_shared()
        compat.tma_store(c_desc, [off_m, off_n], c_smem.index(0))
        if PREFETCH and SHARE_EPILOGUE:
            # (4) The B tiles under c_smem: only once the TMA store has finished reading c_smem.
            tma.store_wait(pendings=0)
            for i in gl.static_range(STAGES - 1):
                s = _stage(it + i, STAGES)
                compat.tma_load(b_desc, [i * BLOCK_K, noff_n], ready.index(s), b_ring.index(s),
                                                (next_tile < num_tiles) & (i < k_tiles) & (s < C_SLOTS))

    tma.store_wait(pendings=0)
    for i in gl.static_range(STAGES):
        mbarrier.invalidate(ready.index(i))


# ----------------------------------------------------------------------------------------------- host


def _layouts(dtype, BM, BN, BK):
    return (gl.NVMMASharedLayout.get_default_for([BM, BK], dtype),
            gl.NVMMASharedLayout.get_default_for([BK, BN], dtype),
            gl.NVMMASharedLayout.get_default_for([BM, BN], dtype))


def smem_plan(stages=4, share=True, BM=128, BN=256, BK=64, elem_bytes=2) -> dict:
    """The spec's size in bytes as the lowering computes it (without the STAGES x 8 B of mbarriers)."""
    a, b, c = BM * BK * elem_bytes, BK * BN * elem_bytes, BM * BN * elem_bytes
    ring = stages * (a + b)
    return {"a_stage": a, "b_stage": b, "c_tile": c, "ring": ring,
            "spec": max(c, ring) if share else c + ring, "limit": SMEM_LIMIT}


def make_launch(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, *, stages: int = 4, share: bool = True,
                BM: int = 128, BN: int = 256, BK: int = 64, num_warps: int = 8, group_m: int = 8,
                prefetch: bool = True, direct: bool = True):
    """Check the operands, build the TMA descriptors and the persistent grid once; return a zero-argument
    callable that launches the kernel writing A @ B into c (what `matmul` and the benchmark call).

    `direct`: the first call goes through the JIT (compile or cache lookup); later calls launch that
    compiled kernel directly, skipping the JIT's per-call argument binding and cache-key computation
    (the arguments never change). Measured on an H100: 21-24 us of host time per call instead of 39-49 us
    (torch.matmul: 20-27 us); the kernel's GPU time is the same."""
    check_matmul(a, b, c, "matmul")
    M, N = c.shape
    a_layout, b_layout, c_layout = _layouts(gl_dtype(a.dtype), BM, BN, BK)
    a_desc = TensorDescriptor.from_tensor(a, [BM, BK], a_layout)
    b_desc = TensorDescriptor.from_tensor(b, [BK, BN], b_layout)
    c_desc = TensorDescriptor.from_tensor(c, [BM, BN], c_layout)
    num_tiles = triton.cdiv(M, BM) * triton.cdiv(N, BN)
    num_sms = torch.cuda.get_device_properties(a.device).multi_processor_count
    grid = (min(num_sms, num_tiles), )

    args = (a_desc, b_desc, c_desc, stages, group_m, share, prefetch, num_warps)  # every kernel parameter, in order
    runner = None

    def launch():
        nonlocal runner
        if runner is not None:
            runner(*args)
            return
        compiled = hopper_gemm_kernel[grid](a_desc, b_desc, c_desc, stages, group_m, share, prefetch,
                                                 num_warps=num_warps)
        if direct:
            runner = compiled[(grid[0], 1, 1)]

    return launch


def matmul(a: torch.Tensor, b: torch.Tensor, *, stages: int = 4, share: bool = True, BM: int = 128,
           BN: int = 256, BK: int = 64, out: torch.Tensor | None = None, **config) -> torch.Tensor:
    """C = A @ B with the persistent TMA + wgmma kernel. A [M, K], B [K, N]: fp16 or bf16, row-major, CUDA.

    M, N, K need not be multiples of the tile; K and N must be multiples of 8 (16-byte TMA rows).
    `share=False` builds the variant whose epilogue tile does not alias the ring (fewer stages fit).
    `config`: num_warps (8), group_m (8), prefetch (True: start the next tile's loads during the epilogue).
    """
    check_matmul(a, b, out, "matmul")
    c = out if out is not None else torch.empty((a.shape[0], b.shape[1]), dtype=a.dtype, device=a.device)
    make_launch(a, b, c, stages=stages, share=share, BM=BM, BN=BN, BK=BK, **config)()
    return c


def compile_gemm(dtype=gl.bfloat16, stages=4, share=True, BM=128, BN=256, BK=64, num_warps=8, group_m=8,
                 prefetch=True, target=HOPPER):
    """Compile hopper_gemm_kernel for `target` on this machine (no GPU). Returns `_common.Compiled`."""
    a_layout, b_layout, c_layout = _layouts(dtype, BM, BN, BK)
    signature = {"a_desc": tensordesc(dtype, [BM, BK], a_layout), "b_desc": tensordesc(dtype, [BK, BN], b_layout),
                 "c_desc": tensordesc(dtype, [BM, BN], c_layout)}
    constexprs = {"STAGES": stages, "GROUP_M": group_m, "SHARE_EPILOGUE": share, "PREFETCH": prefetch,
                  "num_warps": num_warps}
    return compile_for(hopper_gemm_kernel, signature, constexprs, target=target, num_warps=num_warps)


CPU_CONFIGS = [  # (dtype, stages, share, BM, BN, BK)
    (gl.bfloat16, 4, True, 128, 256, 64),
    (gl.bfloat16, 4, False, 128, 256, 64),   # over capacity: the point of sharing
    (gl.bfloat16, 3, False, 128, 256, 64),   # the best non-shared config at this tile
    (gl.bfloat16, 3, True, 128, 256, 64),
    (gl.float16, 4, True, 128, 256, 64),
]


def cpu_report(quick: bool = False, proof: bool = True) -> list:
    """Compile the main configurations for sm_90a; one row each (see _common.report_row)."""
    from tlx_alias.errors import TlxAliasError
    rows = []
    for dtype, stages, share, BM, BN, BK in CPU_CONFIGS[:3] if quick else CPU_CONFIGS:
        config = f"{dtype} {BM}x{BN}x{BK} stages={stages} share={share}"
        try:
            rows.append(report_row("hopper_gemm", config, compile_gemm(dtype, stages, share, BM, BN, BK),
                                   proof=proof))
        except TlxAliasError as err:
            rows.append(report_row("hopper_gemm", config, None, err))
    return rows
